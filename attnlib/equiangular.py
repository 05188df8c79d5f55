r"""The equiangular reduction of [GLPR] Thm 6.8.

From orthonormal initial data (``d >= n``) every pairwise inner product stays equal to
:math:`\gamma(t)`, :math:`\gamma(0) = 0`, with

.. math::

    \text{SA:}\quad \dot\gamma = \frac{2 e^{\beta\gamma}(1-\gamma)((n-1)\gamma+1)}
        {e^\beta + (n-1)e^{\beta\gamma}}, \qquad
    \text{USA:}\quad \dot\gamma = \tfrac{2}{n} e^{\beta\gamma}(1-\gamma)((n-1)\gamma+1).
"""

from __future__ import annotations

import functools
import warnings
from typing import Any

import numpy as np
from ._validation import (
    NORMALIZATIONS,
    as_finite,
    as_numeric,
    check_choice,
    check_int,
    check_real,
    check_steps,
)
from . import _kernel
from ._special import equiangular_rate
from ._lazy import integrate
from ._stepping import output_times

__all__ = ["gram_field", "equiangular_rhs", "equiangular_gamma", "equiangular_time_to"]


def gram_field(G, *, beta: float, normalization: str = "sa") -> np.ndarray:
    r"""Right-hand side :math:`\mathcal F(G)` of the Gram equation.

    With :math:`Q = K = V = I` on the sphere, the Gram matrix
    :math:`G_{ij} = \langle x_i, x_j\rangle` of the tokens obeys
    :math:`\dot G = \mathcal F(G)`,

    .. math::

        \mathcal F(G) = AG + (AG)^\top - CG - GC, \qquad
        C = \operatorname{diag}\big((AG)_{11}, \dots, (AG)_{nn}\big),

    with :math:`A` the attention matrix of the logits :math:`\beta G` (rows
    normalised for SA, divided by ``n`` for USA). The equiangular matrices
    (1 on the diagonal, :math:`\gamma` elsewhere) are invariant, and on them the
    equation is :func:`equiangular_rhs`.

    Parameters
    ----------
    G : array_like, shape (n, n) or (B, n, n)
        Symmetric matrices: Gram matrices of unit tokens, whose entries lie in
        [-1, 1], or any symmetric matrix (the field is defined on all of them).
    beta : float
        Inverse temperature, ``>= 0``.
    normalization : {"sa", "usa"}

    Returns
    -------
    ndarray, the shape of ``G``
        Symmetric; it equals :math:`\dot X X^\top + X \dot X^\top` for tokens
        ``X`` with Gram matrix ``G`` moving by :class:`attnlib.Model`.

    Examples
    --------
    >>> import numpy as np
    >>> G = np.full((4, 4), 0.3) + 0.7 * np.eye(4)
    >>> F = gram_field(G, beta=1.0)
    >>> bool(np.allclose(F[0, 1], equiangular_rhs(0.3, beta=1.0, n=4)))
    True
    """
    check_choice(normalization, "normalization", NORMALIZATIONS)
    beta = check_real(beta, "beta", low=0.0)
    G = as_finite(G, "G", what="matrix", ndims=(2, 3))
    if G.shape[-1] != G.shape[-2] or G.shape[-1] == 0:
        raise ValueError(f"G must have shape (n, n) or (B, n, n), got {G.shape}")
    if np.abs(G - np.swapaxes(G, -1, -2)).max() > 1e-12:
        raise ValueError("G must be symmetric (a Gram matrix), got G != G^T")
    return _kernel.gram_field(G, beta, normalization)


def equiangular_rhs(gamma, *, beta: float, n: int, normalization: str = "sa"):
    r"""Right-hand side :math:`\dot\gamma` of the equiangular ODE (vectorised in gamma).

    The SA form is evaluated as
    :math:`2(1-\gamma)((n-1)\gamma+1)\,w/(1 + (n-1)w)` with
    :math:`w = e^{-\beta(1-\gamma)} \le 1`, which never overflows. The USA rate
    carries :math:`e^{\beta\gamma}` and raises a ``ValueError`` where it exceeds the
    float64 range.
    """
    beta, n = _checked(beta, n, normalization)
    g = as_numeric(gamma, "gamma").astype(np.float64)
    if not np.all(np.isfinite(g)):
        raise ValueError("gamma must be finite (found NaN or inf)")
    if np.any(np.abs(g) > 1.0):
        raise ValueError("gamma must lie in [-1, 1] (an inner product of unit tokens)")
    return equiangular_rate(g, beta, n, normalization)


def _checked(beta: Any, n: Any, normalization: Any) -> tuple[float, int]:
    check_choice(normalization, "normalization", NORMALIZATIONS)
    return check_real(beta, "beta", low=0.0), check_int(n, "n", low=1)


def equiangular_gamma(
    times,
    *,
    beta: float,
    n: int,
    normalization: str = "sa",
    gamma0: float = 0.0,
    max_steps: int = 100_000,
) -> np.ndarray:
    r"""Solve the equiangular ODE and return :math:`\gamma` at ``times`` (shape (T,)).

    Integrated with DOP853 at ``rtol=1e-12``. Reference values: SA,
    ``n=32``, ``beta=1``: 0.151849, 0.589773, 0.914207 at t = 1, 2, 3.

    Parameters
    ----------
    times : array_like, shape (T,)
        Finite, non-decreasing output times ``>= 0``.
    beta : float
        Inverse temperature ``>= 0``.
    n : int
        Number of tokens.
    normalization : {"sa", "usa"}
    gamma0 : float
        Initial inner product in ``[-1, 1]``.
    max_steps : int
        Cap on the number of DOP853 steps (counted as right-hand-side evaluations
        divided by 12); USA at large ``beta`` is stiff near
        :math:`\gamma = 1` (rate :math:`2e^\beta`: about a million steps up to
        ``t = 30`` at ``beta = 10``) and raises a ``ValueError`` instead of running
        for hours.

    Returns
    -------
    ndarray, shape (T,)

    Examples
    --------
    >>> equiangular_gamma([1.0, 2.0, 3.0], beta=1.0, n=32).round(6).tolist()
    [0.151849, 0.589773, 0.914207]
    """
    t = output_times(times)
    gamma0 = check_real(gamma0, "gamma0", low=-1.0, high=1.0)
    max_steps = check_int(max_steps, "max_steps", low=1)
    beta, n = _checked(beta, n, normalization)
    equiangular_rate(gamma0, beta, n, normalization)  # the USA rate's range at gamma0
    n_eval = 0

    def rhs(_t, g):
        nonlocal n_eval
        n_eval += 1
        check_steps(
            n_eval // 12,
            max_steps,
            what=f"equiangular_gamma ({normalization.upper()}, beta={beta:g}, up to "
            f"the last of times, {t[-1]:g})",
            hint="increase max_steps, or use "
            + ("normalization='sa' or " if normalization == "usa" else "")
            + "a smaller beta",
        )
        return equiangular_rate(g, beta, n, normalization)

    if t[-1] == 0.0:  # every output time is the initial one
        return np.full(t.shape, gamma0)
    sol = integrate.solve_ivp(
        rhs,
        (0.0, float(t[-1])),
        [gamma0],
        method="DOP853",
        t_eval=t,
        rtol=1e-12,
        atol=1e-14,
    )
    if not sol.success:
        raise ValueError(
            f"the equiangular ODE could not be solved for beta={beta:g}, n={n}, "
            f"gamma0={gamma0:g}: {sol.message}"
        )
    return sol.y[0]


def equiangular_time_to(
    level: float, *, beta: float, n: int, normalization: str = "sa"
) -> float:
    r"""First time at which :math:`\gamma(t)` reaches ``level`` (``0 <= level < 1``).

    Computed as :math:`\int_0^{\text{level}} d\gamma / \dot\gamma`. Reference values
    (SA, ``n=32``, ``level=1-1e-3``): 5.186 (beta=0), 5.458 (2), 6.954 (4), 9.544 (5).
    """
    level = check_real(level, "level", low=0.0)
    if level >= 1.0:
        raise ValueError(
            f"level must be < 1 (gamma tends to 1 only as t -> inf), got {level}"
        )
    beta, n = _checked(beta, n, normalization)
    return _time_to(level, beta, n, normalization)


@functools.lru_cache(maxsize=4096)
def _time_to(level: float, beta: float, n: int, normalization: str) -> float:
    # a quadrature of ~10 ms that figures and the phase-diagram explorer ask for
    # again at every redraw (Gamma over 80 values of beta): computed once
    with np.errstate(divide="ignore", over="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        val, _ = integrate.quad(
            lambda g: 1.0 / equiangular_rate(g, beta, n, normalization),
            0.0,
            level,
            epsabs=1e-13,
            epsrel=1e-12,
            limit=200,
        )
    if not np.isfinite(val):
        # SA starts at the rate 2 / (e^beta + n - 1): the time grows like e^beta
        raise ValueError(
            f"the time to reach gamma = {level:g} exceeds the float64 range at "
            f"beta = {beta:g} (the SA rate at gamma = 0 is 2 / (e^beta + n - 1)); "
            "use a smaller beta"
        )
    return float(val)
