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
    log_max,
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
    gamma, _, _ = solve_equiangular(
        t,
        beta=beta,
        n=n,
        normalization=normalization,
        gamma0=gamma0,
        max_steps=max_steps,
        name="equiangular_gamma",
    )
    return gamma


def equiangular_weights(gamma, beta: float, n: int, normalization: str):
    r"""The attention weights ``(a, b)`` of a token on itself and on each other token
    in the equiangular configuration (checked arguments): SA :math:`a = 1/(1 +
    (n-1)w)`, :math:`b = w a`, :math:`w = e^{-\beta(1-\gamma)}`; USA :math:`a =
    e^\beta/n`, :math:`b = e^{\beta\gamma}/n`."""
    if normalization == "sa":
        w = np.exp(-beta * (1.0 - gamma))
        a = 1.0 / (1.0 + (n - 1) * w)
        return a, w * a
    top = beta * max(1.0, float(np.max(gamma)))
    if top > log_max(np.float64):
        raise ValueError(
            f"the USA weights carry e^beta = e^{beta:g}, beyond float64; use "
            "normalization='sa' or a smaller beta"
        )
    return np.exp(beta) / n, np.exp(beta * gamma) / n


def equiangular_field(g, r, beta: float, n: int, scheme: str, normalization: str):
    r"""The field :math:`(\dot\gamma, \dot r, \dot s)` of the equiangular ODE of a
    normalisation scheme (checked arguments; see :mod:`attnlib.frontiers`):
    :math:`\dot\gamma = ` :func:`equiangular_rhs` :math:`/(r m)`, :math:`\dot r =
    (a + (n-1) b \gamma)/m`, :math:`\dot s = 1/(r m)`, with :math:`r \equiv m
    \equiv 1` for post-LN."""
    a, b = equiangular_weights(g, beta, n, normalization)
    # the equiangular rate: 2 b (1-g)(1+(n-1)g)
    flow = equiangular_rate(g, beta, n, normalization)
    if scheme == "post":
        return flow, np.zeros_like(flow), np.ones_like(flow)
    if scheme == "pre":
        m = np.ones_like(flow)
    else:
        m2 = a * a + 2 * (n - 1) * a * b * g + (n - 1) * b * b * (1 + (n - 2) * g)
        m = np.sqrt(m2)
    return flow / (r * m), (a + (n - 1) * b * g) / m, 1.0 / (r * m)


def solve_equiangular(
    t: np.ndarray,
    *,
    beta: float,
    n: int,
    normalization: str = "sa",
    scheme: str = "post",
    gamma0: float = 0.0,
    radius0: float = 1.0,
    max_steps: int = 100_000,
    name: str = "equiangular_gamma",
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""The one solver of the equiangular ODE: :math:`\gamma`, the radius :math:`r`
    and the post-LN clock :math:`s` at the validated output times ``t``.

    DOP853 at ``rtol=1e-12``, ``atol=1e-14``, its steps capped by ``max_steps``
    (right-hand-side evaluations divided by 12). Post-LN integrates
    :math:`\gamma` alone (its radius is constant and its clock is the time); pre-
    and peri-LN integrate :math:`(\gamma, r, s)` with :func:`equiangular_field`.
    :func:`equiangular_gamma` and :func:`attnlib.frontiers.equiangular_scheme`
    are this function on checked arguments; ``name`` is the caller, for the
    messages.
    """
    one = np.ones(t.shape)
    if t[-1] == 0.0:  # every output time is the initial one
        return gamma0 * one, radius0 * one, 0.0 * one
    n_eval = 0

    def counted():
        nonlocal n_eval
        n_eval += 1
        check_steps(
            n_eval // 12,
            max_steps,
            what=f"{name} ({normalization.upper()}, beta={beta:g}, up to the last "
            f"of times, {t[-1]:g})",
            hint="increase max_steps, or use "
            + ("normalization='sa' or " if normalization == "usa" else "")
            + "a smaller beta",
        )

    if scheme == "post":

        def rhs(_t, y):
            counted()
            return equiangular_rate(y, beta, n, normalization)

        y0 = [gamma0]
    else:

        def rhs(_t, y):
            counted()
            return np.array(
                equiangular_field(y[0], y[1], beta, n, scheme, normalization)
            )

        y0 = [gamma0, radius0, 0.0]
    sol = integrate.solve_ivp(
        rhs,
        (0.0, float(t[-1])),
        y0,
        method="DOP853",
        t_eval=t,
        rtol=1e-12,
        atol=1e-14,
    )
    if not sol.success:
        start = f"gamma0={gamma0:g}" + (
            "" if scheme == "post" else f", radius0={radius0:g}"
        )
        raise ValueError(
            f"the equiangular ODE could not be solved for beta={beta:g}, n={n}, "
            f"{start}: {sol.message}"
        )
    if scheme == "post":
        return sol.y[0], radius0 * one, t.astype(np.float64, copy=True)
    return sol.y[0], sol.y[1], sol.y[2]


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
