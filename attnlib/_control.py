"""Step-size rules of the explicit schemes, below the models and the driver.

:func:`glpr_usa_step` is the stable step of the [GLPR] code for USA; the models
return it from their ``stable_step`` (:class:`attnlib.integrate.Dynamics`), and
``simulate(..., step_rule="glpr")`` caps its step with it.

:class:`Adaptive` is the step rule of the adaptive solvers (a relative growth bound
for the Gaussian moments, a CFL condition for the mean-field density): the largest
step that the cap, the next output time and the solver's own bound allow.
:class:`Backtracking` is the step control of the descent methods (the mirror descent
of a density, the energy flows of particles): a trial step that fails its test is
retried with a shorter step, and the step grows back afterwards. :class:`Fixed`
cuts each span between output times into equal steps of at most ``dt``.

They are the controllers of diffrax in miniature: a controller is given to the
driver (:func:`attnlib._stepping.drive`), which owns the loop over time and is the
only caller of the controller's methods; a solver's hooks take the step they are
handed and never consult a controller themselves.
"""

from __future__ import annotations

import numpy as np

from collections.abc import Callable
from typing import Any

from ._deprecation import moved_arguments
from ._validation import check_int, check_real

__all__ = ["glpr_usa_step", "Fixed", "Backtracking", "Adaptive", "CONTROLLERS"]


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


class Fixed:
    """Fixed steps: each span between output times is cut into the fewest equal
    steps of at most ``dt`` (:meth:`substeps`), known before the first step.

    Parameters
    ----------
    dt : float
        Largest step (``> 0``; ``inf`` only for a count of steps that is not capped).

    Examples
    --------
    >>> Fixed(0.3).substeps(1.0)
    (4, 0.25)
    >>> Fixed(0.3).planned(np.array([0.0, 1.0, 1.5]))
    6.0
    """

    def __init__(self, dt: float) -> None:
        self.dt = check_real(dt, "dt", low=0.0, strict_low=True)

    def substeps(self, span: float) -> tuple[int, float]:
        """The ``m`` equal steps ``h <= dt`` (up to rounding) covering ``span > 0``."""
        # at least one step: a span far below dt (t_final = 1e-300) is one short step,
        # not zero steps and a division by zero
        m = max(1, int(np.ceil(span / self.dt - 1e-9)))
        return m, float(span / m)

    def planned(self, times: np.ndarray) -> float:
        """Steps from time 0 through ``times``, as a float (it may be astronomically
        large, e.g. ``1e23``), so that the driver compares it with its cap before the
        first step."""
        spans = np.diff(np.concatenate([[0.0], times]))
        spans = spans[spans > 0]
        return float(np.sum(np.maximum(1.0, np.ceil(spans / self.dt - 1e-9))))


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
        Largest step (``> 0``, or ``inf``: no cap).
    snap : float
        Relative gap (to ``max(1, t_next)``) below which the step lands on the
        output time instead of leaving a sliver before it (``0``: never).
    reach : float
        Relative gap (to ``max(1, t_next)``) within which a time counts as the
        output time (:meth:`reached`; ``0``: only at or past it), absorbing the
        rounding of accumulated steps.

    Examples
    --------
    >>> Adaptive(0.1).step(0.0, 1.0, 0.05), Adaptive(0.1).step(0.95, 1.0, 1.0)
    (0.05, 0.050000000000000044)
    >>> Adaptive(0.1, snap=1e-12).step(0.0, 0.1 + 1e-14, 1.0) == 0.1 + 1e-14  # lands
    True
    """

    def __init__(self, dt_max: float, *, snap: float = 0.0, reach: float = 0.0) -> None:
        # inf: steps that only the solver's bound and the output times limit (the
        # segments between the events of an event-driven solver)
        self.dt_max = (
            np.inf
            if isinstance(dt_max, (float, int)) and dt_max == np.inf
            else check_real(dt_max, "dt_max", low=0.0, strict_low=True)
        )
        self.snap = check_real(snap, "snap", low=0.0)
        self.reach = check_real(reach, "reach", low=0.0)

    def reached(self, t: float, t_next: float) -> bool:
        """Whether the time ``t`` counts as the output time ``t_next``."""
        if self.reach:
            return t_next - t <= self.reach * max(1.0, t_next)
        return t >= t_next

    def step(self, t: float, t_next: float, bound: float) -> float:
        """The step from ``t`` towards ``t_next`` under the solver's ``bound``."""
        h = min(self.dt_max, t_next - t, bound)
        if self.snap and t_next - t - h < self.snap * max(1.0, t_next):
            h = t_next - t
        return h

    def end(self, t: float, h: float, t_next: float) -> float:
        """The time after a step ``h`` from ``t``: exactly ``t_next`` for the step
        that lands on it (``t + (t_next - t)`` may round past it), else ``t + h``."""
        return t_next if h == t_next - t else t + h


#: The step-size controllers that the driver takes.
CONTROLLERS = (Fixed, Adaptive, Backtracking)
