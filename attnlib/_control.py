"""Step-size rules of the explicit schemes, below the models and the driver.

:func:`glpr_usa_step` is the stable step of the [GLPR] code for USA; the models
return it from their ``stable_step`` (:class:`attnlib.integrate.Dynamics`), and
``simulate(..., step_rule="glpr")`` caps its step with it.

:class:`Adaptive` is the step rule of the adaptive solvers (a relative growth bound
for the Gaussian moments, a CFL condition for the mean-field density): the largest
step that the cap, the next output time and the solver's own bound allow.
:class:`Backtracking` is the step control of the descent methods (the mirror descent
of a density, the energy flows of particles): a trial step that fails its test is
retried with a shorter step, and the step grows back afterwards. It is the
controller of diffrax in miniature: the driver (:func:`attnlib._stepping.drive`)
owns the loop over time, the controller only decides the step.
"""

from __future__ import annotations

import numpy as np

from collections.abc import Callable
from typing import Any

from ._deprecation import moved_arguments
from ._validation import check_int, check_real

__all__ = ["glpr_usa_step", "Backtracking", "Adaptive"]


@moved_arguments("beta")
def glpr_usa_step(*, beta: float) -> float:
    r"""Stable USA step of the [GLPR] code.

    .. math:: \eta = 0.1 / \max(\sqrt\beta\, e^{\beta-1/2}, 1)

    Evaluated in the log domain. It is the step of USA (whose speed grows like
    :math:`e^\beta`); SA does not need it.

    Raises
    ------
    ValueError
        If :math:`\eta` underflows to zero in float64 (``beta`` above about 740).

    Examples
    --------
    >>> glpr_usa_step(beta=0.5), f"{glpr_usa_step(beta=50.0):.3e}"
    (0.1, '4.497e-24')
    """
    beta = check_real(beta, "beta", low=0.0)
    log_rate = 0.5 * np.log(beta) + beta - 0.5 if beta > 0 else -np.inf
    eta = float(0.1 * np.exp(-max(log_rate, 0.0)))
    if eta == 0.0:
        raise ValueError(
            f"beta={beta:g} is too large for the GLPR USA step: 0.1 e^(-beta) / "
            "sqrt(beta) underflows float64 (beta must be below about 740)"
        )
    return eta


class Backtracking:
    """Backtracking step control: shrink a rejected step, grow an accepted one.

    Parameters
    ----------
    h_max : float
        Largest step (``> 0``); :meth:`grow` never exceeds it.
    shrink : float
        Factor of the step after a rejected trial (in ``(0, 1)``).
    growth : float
        Factor of the step after a step (``>= 1``).
    max_tries : int
        Trials of one step before :meth:`attempt` gives up.

    Examples
    --------
    >>> ctl = Backtracking(1.0)
    >>> ctl.attempt(lambda h: h if h < 0.3 else None, 1.0)   # 1, 0.5, 0.25
    (0.25, 0.25)
    >>> ctl.grow(0.25), ctl.grow(0.75)
    (0.5, 1.0)
    """

    def __init__(
        self,
        h_max: float,
        *,
        shrink: float = 0.5,
        growth: float = 2.0,
        max_tries: int = 60,
    ) -> None:
        self.h_max = check_real(h_max, "h_max", low=0.0, strict_low=True)
        self.shrink = check_real(shrink, "shrink", low=0.0, high=1.0, strict_low=True)
        if self.shrink == 1.0:
            raise ValueError("shrink must be < 1, got 1.0")
        self.growth = check_real(growth, "growth", low=1.0)
        self.max_tries = check_int(max_tries, "max_tries", low=0)

    def attempt(self, trial: Callable[[float], Any], h: float) -> tuple[Any, float]:
        """``(trial(h), h)`` for the first step ``h, h * shrink, ...`` whose trial is
        accepted (not ``None``), or ``(None, h * shrink**max_tries)`` when
        ``max_tries`` trials are all rejected."""
        for _ in range(self.max_tries):
            out = trial(h)
            if out is not None:
                return out, h
            h *= self.shrink
        return None, h

    def retry_members(
        self,
        retry: Callable[[np.ndarray, np.ndarray], np.ndarray],
        h: np.ndarray,
        rejected: np.ndarray,
    ) -> np.ndarray:
        """The same control for members stepped together: the steps ``h`` (B,) of
        the ``rejected`` members (indices) are shrunk and ``retry(rejected, h)``
        returns the indices still rejected, up to ``max_tries`` times; returns the
        members rejected at the end (``h`` is updated in place)."""
        for _ in range(self.max_tries):
            if rejected.size == 0:
                break
            h[rejected] *= self.shrink
            rejected = retry(rejected, h)
        return rejected

    def grow(self, h: float) -> float:
        """The next step after a step of size ``h``."""
        return min(self.h_max, self.growth * h)


class Adaptive:
    """Adaptive step rule: the largest step allowed by a cap, the next output time
    and a bound that the solver computes from its state.

    Parameters
    ----------
    dt_max : float
        Largest step (``> 0``).
    snap : float
        Relative gap (to ``max(1, t_next)``) below which the step lands on the
        output time instead of leaving a sliver before it (``0``: never).

    Examples
    --------
    >>> Adaptive(0.1).step(0.0, 1.0, 0.05), Adaptive(0.1).step(0.95, 1.0, 1.0)
    (0.05, 0.050000000000000044)
    >>> Adaptive(0.1, snap=1e-12).step(0.0, 0.1 + 1e-14, 1.0) == 0.1 + 1e-14  # lands
    True
    """

    def __init__(self, dt_max: float, *, snap: float = 0.0) -> None:
        self.dt_max = check_real(dt_max, "dt_max", low=0.0, strict_low=True)
        self.snap = check_real(snap, "snap", low=0.0)

    def step(self, t: float, t_next: float, bound: float) -> float:
        """The step from ``t`` towards ``t_next`` under the solver's ``bound``."""
        h = min(self.dt_max, t_next - t, bound)
        if self.snap and t_next - t - h < self.snap * max(1.0, t_next):
            h = t_next - t
        return h
