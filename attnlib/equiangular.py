r"""The equiangular reduction of [GLPR] Thm 6.8.

From orthonormal initial data (``d >= n``) every pairwise inner product stays equal to
:math:`\gamma(t)`, :math:`\gamma(0) = 0`, with

.. math::

    \text{SA:}\quad \dot\gamma = \frac{2 e^{\beta\gamma}(1-\gamma)((n-1)\gamma+1)}
        {e^\beta + (n-1)e^{\beta\gamma}}, \qquad
    \text{USA:}\quad \dot\gamma = \tfrac{2}{n} e^{\beta\gamma}(1-\gamma)((n-1)\gamma+1).
"""

from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp

from ._validation import check_choice, check_int, check_real

__all__ = ["equiangular_rhs", "equiangular_gamma", "equiangular_time_to"]


def equiangular_rhs(gamma, *, beta: float, n: int, normalization: str = "sa"):
    r"""Right-hand side :math:`\dot\gamma` of the equiangular ODE (vectorised in gamma).

    The SA form is evaluated as
    :math:`2(1-\gamma)((n-1)\gamma+1)/(e^{\beta(1-\gamma)} + n-1)`, which never
    overflows.
    """
    beta = check_real(beta, "beta", low=0.0)
    n = check_int(n, "n", low=1)
    check_choice(normalization, "normalization", ("sa", "usa"))
    g = np.asarray(gamma, dtype=np.float64)
    core = 2.0 * (1.0 - g) * ((n - 1) * g + 1.0)
    if normalization == "sa":
        return core / (np.exp(beta * (1.0 - g)) + (n - 1))
    return core * np.exp(beta * g) / n


def equiangular_gamma(
    times, *, beta: float, n: int, normalization: str = "sa", gamma0: float = 0.0
) -> np.ndarray:
    r"""Solve the equiangular ODE and return :math:`\gamma` at ``times`` (shape (T,)).

    Integrated with DOP853 at ``rtol=1e-12``. Reference values (MATH.md §7): SA,
    ``n=32``, ``beta=1``: 0.151849, 0.589773, 0.914207 at t = 1, 2, 3.
    """
    t = np.asarray(times, dtype=np.float64)
    if t.ndim != 1 or t.size == 0 or np.any(np.diff(t) < 0) or t[0] < 0:
        raise ValueError(
            "times must be a non-empty, non-decreasing 1-D array of t >= 0"
        )
    gamma0 = check_real(gamma0, "gamma0", low=-1.0, high=1.0)
    equiangular_rhs(gamma0, beta=beta, n=n, normalization=normalization)  # validation
    sol = solve_ivp(
        lambda _t, g: equiangular_rhs(g, beta=beta, n=n, normalization=normalization),
        (0.0, float(t[-1])),
        [gamma0],
        method="DOP853",
        t_eval=t,
        rtol=1e-12,
        atol=1e-14,
    )
    return sol.y[0]


def equiangular_time_to(
    level: float, *, beta: float, n: int, normalization: str = "sa"
) -> float:
    r"""First time at which :math:`\gamma(t) = ` ``level`` (``0 <= level < 1``).

    Computed as :math:`\int_0^{\text{level}} d\gamma / \dot\gamma`. Reference values
    (SA, ``n=32``, ``level=1-1e-3``): 5.186 (beta=0), 5.458 (2), 6.954 (4), 9.544 (5).
    """
    from scipy.integrate import quad

    level = check_real(level, "level", low=0.0)
    if level >= 1.0:
        raise ValueError(
            f"level must be < 1 (gamma tends to 1 only as t -> inf), got {level}"
        )
    val, _ = quad(
        lambda g: 1.0 / equiangular_rhs(g, beta=beta, n=n, normalization=normalization),
        0.0,
        level,
        epsabs=1e-13,
        epsrel=1e-12,
        limit=200,
    )
    return float(val)
