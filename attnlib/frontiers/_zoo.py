r"""More placements of layer normalisation (Mix-LN, nGPT), and several heads.

**Mix-LN and nGPT as clocks.** With :math:`u_i(X) = \sum_j A_{ij}(X)\,x_j` the SA
(or USA) update of the normalised tokens (``Q = K = V = I``), the book's
continuous-time models are

* **Mix-LN** with switch time :math:`\tau \ge 0`: post-LN on :math:`[0, \tau]`
  (tokens on the sphere, :math:`\dot x_i = P_{x_i}u_i`), then pre-LN from the
  normalised state (:math:`y_i(\tau) = x_i(\tau)`, :math:`\dot y_i = u_i(X)`,
  :math:`x_i = y_i/|y_i|`);
* **nGPT** with step :math:`\alpha > 0`: the layer
  :math:`x \leftarrow N\big(x + \alpha\eta\,(N(u) - x)\big)`, :math:`N(z) = z/|z|`,
  whose limit :math:`\eta \to 0` is :math:`\dot x_i = \alpha P_{x_i}u_i/|u_i|`.

On the sphere both are the post-LN field times a speed factor :math:`c_i(t)`:
:math:`1` then :math:`1/r_i` (Mix-LN), :math:`\alpha/|u_i|` (nGPT). In the
equiangular reduction (orthonormal tokens, ``d >= n``) the factor is common,
:math:`\dot\gamma = c\,F(\gamma)` with :math:`F(\gamma) = 2b(1-\gamma)(1 +
(n-1)\gamma)` and :math:`|u|^2 = a^2 + 2(n-1)ab\gamma + (n-1)b^2(1 + (n-2)\gamma)`.

**Several heads.** :math:`H` heads with inverse temperatures :math:`\beta_h` and
value weights :math:`\lambda_h` (``V_h = lambda_h I``, scores
:math:`\beta_h\langle x_i, x_j\rangle`), each head normalised on its own (as
:class:`attnlib.Model` with ``heads``): in the equiangular reduction

.. math::

    \dot\gamma = 2(1-\gamma)(1+(n-1)\gamma)\sum_h \lambda_h b_h(\gamma),

with :math:`b_h` the one-head weight of a token on another one at
:math:`\beta_h` (SA :math:`b_h = 1/(e^{\beta_h(1-\gamma)} + n - 1)`, USA
:math:`b_h = e^{\beta_h\gamma}/n`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._lazy import integrate
from .._results import trajectory
from .._special import equiangular_rate
from .._stepping import output_times
from .._validation import (
    NORMALIZATIONS,
    as_finite,
    as_states,
    check_choice,
    check_int,
    check_real,
    check_steps,
)
from ..attention import Model
from ..equiangular import equiangular_time_to, equiangular_weights
from ..integrate import Trajectory, simulate

__all__ = [
    "ZOO_SCHEMES",
    "ngpt_velocity",
    "zoo_run",
    "zoo_equiangular",
    "zoo_time_to",
    "multihead_rate",
    "multihead_gamma",
    "multihead_time_to",
    "two_head_threshold",
]

#: The schemes of this module: Mix-LN and nGPT.
ZOO_SCHEMES = ("mix", "ngpt")


def _update_norm(g, a, b, n):
    return np.sqrt(
        a * a + 2 * (n - 1) * a * b * g + (n - 1) * b * b * (1 + (n - 2) * g)
    )


def _solve(rhs, span, y0, t_eval, *, max_steps, what, hint):
    """DOP853 at ``rtol=1e-12``, ``atol=1e-14``, its steps capped by ``max_steps``
    (right-hand-side evaluations divided by 12, as in
    :func:`attnlib.equiangular_gamma`); ``what`` and ``hint`` are for the messages."""
    n_eval = 0

    def counted(t, y):
        nonlocal n_eval
        n_eval += 1
        check_steps(n_eval // 12, max_steps, what=what, hint=hint)
        return rhs(t, y)

    sol = integrate.solve_ivp(
        counted, span, y0, t_eval=t_eval, method="DOP853", rtol=1e-12, atol=1e-14
    )
    if not sol.success:
        raise ValueError(f"{what} could not be solved: {sol.message}; {hint}")
    return sol


def _check_scheme(scheme, switch, alpha):
    check_choice(scheme, "scheme", ZOO_SCHEMES)
    switch = check_real(switch, "switch", low=0.0)
    alpha = check_real(alpha, "alpha", low=0.0, strict_low=True)
    return switch, alpha


def ngpt_velocity(X: Any, *, beta: float, alpha: float = 1.0) -> np.ndarray:
    r"""The nGPT field :math:`\alpha P_{x_i} u_i/|u_i|` on the sphere (SA).

    Parameters
    ----------
    X : ndarray, shape (n, d) or (B, n, d)
        Unit tokens.
    beta : float
        Inverse temperature ``>= 0``.
    alpha : float
        The step of the nGPT layer (``> 0``).

    Examples
    --------
    >>> from attnlib import sample_sphere
    >>> X = sample_sphere(5, 3, rng=0)
    >>> v = ngpt_velocity(X, beta=1.0, alpha=0.5)
    >>> bool(np.allclose(np.sum(v * X, axis=1), 0))
    True
    """
    X = as_states(X, "X")
    beta = check_real(beta, "beta", low=0.0)
    alpha = check_real(alpha, "alpha", low=0.0, strict_low=True)
    if not np.allclose(np.linalg.norm(X, axis=-1), 1.0, atol=1e-8):
        raise ValueError("X must have unit rows (tokens on the sphere)")
    return _ngpt_field(Model(beta=beta, geometry="euclidean"), alpha)(X)


def _ngpt_field(soft, alpha):
    def field(X):
        u = soft.rhs(X)
        m = np.linalg.norm(u, axis=-1, keepdims=True)
        v = np.divide(u, m, out=np.zeros_like(u), where=m > 0)
        return alpha * (v - np.sum(v * X, axis=-1, keepdims=True) * X)

    return field


def zoo_run(
    X0: Any,
    *,
    beta: float,
    scheme: str,
    times: Any,
    switch: float = 1.0,
    alpha: float = 1.0,
    dt: float = 0.05,
    method: str = "rk4",
) -> np.ndarray:
    r"""Particles under Mix-LN or nGPT (module docstring), SA with ``Q = K = V = I``.

    Parameters
    ----------
    X0 : ndarray, shape (n, d) or (B, n, d)
        Unit tokens at time 0.
    beta : float
        Inverse temperature ``>= 0``.
    scheme : {"mix", "ngpt"}
    times : array_like, shape (T,)
        Non-decreasing output times ``>= 0``.
    switch : float
        Mix-LN: the time :math:`\tau` at which post-LN hands over to pre-LN.
    alpha : float
        nGPT: the step :math:`\alpha > 0`.
    dt, method
        As in :func:`attnlib.simulate`.

    Returns
    -------
    ndarray, shape (T, n, d) or (T, B, n, d)
        The states: unit tokens for nGPT, the residual stream :math:`y_i` for
        Mix-LN (unit up to ``switch``).
    """
    X0 = as_states(X0, "X0")
    beta = check_real(beta, "beta", low=0.0)
    switch, alpha = _check_scheme(scheme, switch, alpha)
    t = output_times(times)
    if scheme == "ngpt":
        ngpt = _ngpt_field(Model(beta=beta, geometry="euclidean"), alpha)

        def field(X):
            try:
                return ngpt(X)
            except ValueError as exc:  # the states were driven off the sphere
                raise ValueError(
                    f"the nGPT field overflows float64 at alpha={alpha:g}, dt={dt:g}: "
                    "a step moves a token by up to alpha * dt; take alpha * dt smaller"
                ) from exc

        return simulate(
            field, X0, times=t, dt=dt, method=method, geometry="sphere"
        ).states
    first = t[t <= switch]
    later = t[t > switch]
    out = np.empty((t.size,) + X0.shape)
    X = X0
    if first.size:
        # post-LN up to the switch only if pre-LN takes over before the last time
        post = simulate(
            Model(beta=beta),
            X0,
            times=np.append(first, switch) if later.size else first,
            dt=dt,
            method=method,
        )
        out[: first.size] = post.states[: first.size]
        X = post.final
    if later.size:
        pre = simulate(
            Model(beta=beta, layer_norm="pre"),
            X,
            times=np.concatenate([[0.0], later - switch]),
            dt=dt,
            method=method,
        )
        out[first.size :] = pre.states[1:]
    return out


def _zoo_field(scheme, beta, n, normalization, alpha):
    """(gamma', r', s') of the equiangular ODE of nGPT or of Mix-LN's pre-LN phase."""

    def rhs(_t, y):
        g, r = y[0], y[1]
        a, b = equiangular_weights(g, beta, n, normalization)
        flow = equiangular_rate(g, beta, n, normalization)
        if scheme == "ngpt":
            c = alpha / _update_norm(g, a, b, n)
            return [c * flow, 0.0, c]
        return [flow / r, a + (n - 1) * b * g, 1.0 / r]

    return rhs


def zoo_equiangular(
    times: Any,
    *,
    beta: float,
    n: int,
    scheme: str,
    switch: float = 1.0,
    alpha: float = 1.0,
    normalization: str = "sa",
    gamma0: float = 0.0,
    max_steps: int = 100_000,
) -> Trajectory:
    r"""The equiangular ODE of Mix-LN or nGPT (DOP853, ``rtol=1e-12``).

    Parameters
    ----------
    times : array_like, shape (T,)
        Non-decreasing output times ``>= 0``.
    beta, n, normalization
        As in :func:`attnlib.equiangular_gamma`.
    scheme : {"mix", "ngpt"}
    switch, alpha
        As in :func:`zoo_run`.
    gamma0 : float
        Initial inner product in ``[0, 1)``.
    max_steps : int
        Cap on the number of DOP853 steps, as in :func:`attnlib.equiangular_gamma`
        (a ``ValueError`` instead of a run of hours: a huge last time, or a huge
        ``alpha`` or ``beta``).

    Returns
    -------
    Trajectory
        ``info`` holds ``gamma``, ``radius`` (one for nGPT and for Mix-LN up to
        ``switch``) and ``clock``: the post-LN time :math:`s(t)` with
        :math:`\gamma(t) = \gamma_{\rm post}(s(t))`.

    Examples
    --------
    >>> sol = zoo_equiangular([0.0, 3.0], beta=1.0, n=32, scheme="mix", switch=5.0)
    >>> round(float(sol.info["gamma"][-1]), 6)  # post-LN before the switch
    0.914207
    """
    t = output_times(times)
    beta = check_real(beta, "beta", low=0.0)
    n = check_int(n, "n", low=2)
    switch, alpha = _check_scheme(scheme, switch, alpha)
    check_choice(normalization, "normalization", NORMALIZATIONS[:2])
    gamma0 = check_real(gamma0, "gamma0", low=0.0, high=1.0)
    if gamma0 >= 1.0:
        raise ValueError("gamma0 must be < 1 (gamma = 1 is the cluster)")
    max_steps = check_int(max_steps, "max_steps", low=1)
    setting = f"alpha={alpha:g}" if scheme == "ngpt" else f"switch={switch:g}"
    opts = dict(
        max_steps=max_steps,
        what=f"zoo_equiangular ({scheme}, {normalization.upper()}, beta={beta:g}, "
        f"{setting}, up to the last of times, {t[-1]:g})",
        hint="increase max_steps, or use earlier times or a smaller beta"
        + (" or alpha" if scheme == "ngpt" else ""),
    )
    if scheme == "ngpt":
        sol = _solve(
            _zoo_field("ngpt", beta, n, normalization, alpha),
            (0.0, max(float(t[-1]), 1e-300)),
            [gamma0, 1.0, 0.0],
            t,
            **opts,
        )
        g, r, s = sol.y
    else:
        post = lambda _t, y: equiangular_rate(y, beta, n, normalization)  # noqa: E731
        first = t[t <= switch]
        later = t[t > switch]
        g, r, s = (np.empty(t.size) for _ in range(3))
        y_tau = gamma0
        # post-LN up to the switch only if pre-LN takes over before the last time
        end = switch if later.size else float(first[-1])
        if end > 0:
            ends = first.size and first[-1] == end
            sol = _solve(
                post,
                (0.0, end),
                [gamma0],
                first if ends else np.append(first, end),
                **opts,
            )
            g[: first.size] = sol.y[0][: first.size]
            y_tau = sol.y[0][-1]
        else:
            g[: first.size] = gamma0
        r[: first.size], s[: first.size] = 1.0, first
        if later.size:
            sol = _solve(
                _zoo_field("mix", beta, n, normalization, alpha),
                (switch, float(later[-1])),
                [y_tau, 1.0, switch],
                later,
                **opts,
            )
            g[first.size :], r[first.size :], s[first.size :] = sol.y
    return trajectory(
        series=("gamma", "radius", "clock"),
        times=t,
        final=np.array([g[-1], r[-1], s[-1]]),
        method="DOP853",
        gamma=np.asarray(g),
        radius=np.asarray(r),
        clock=np.asarray(s),
        scheme=scheme,
    )


def zoo_time_to(
    level: float,
    *,
    beta: float,
    n: int,
    scheme: str,
    switch: float = 1.0,
    alpha: float = 1.0,
    normalization: str = "sa",
) -> float:
    r"""First time at which the equiangular :math:`\gamma` of Mix-LN or nGPT reaches
    ``level``, from :math:`\gamma(0) = 0`.

    Computed in the variable :math:`\gamma`: nGPT takes
    :math:`\alpha^{-1}\int_0^{\rm level} |u|\,d\gamma/F`; Mix-LN is post-LN if that
    reaches ``level`` by ``switch``, else ``switch`` plus
    :math:`\int r\,d\gamma/F` with :math:`d\log r/d\gamma = (a + (n-1)b\gamma)/F`
    from :math:`\gamma(\tau)`, :math:`r = 1` (times exponential in the post-LN
    ones, which no integration in :math:`t` reaches).

    Examples
    --------
    >>> t_post = zoo_time_to(1 - 1e-3, beta=1.0, n=32, scheme="mix", switch=10.0)
    >>> round(t_post, 3)  # post-LN reaches the level before the switch
    5.27
    """
    level = check_real(level, "level", low=0.0)
    if level >= 1.0:
        raise ValueError(f"level must be < 1 (reached only as t -> inf), got {level}")
    beta = check_real(beta, "beta", low=0.0)
    n = check_int(n, "n", low=2)
    switch, alpha = _check_scheme(scheme, switch, alpha)
    check_choice(normalization, "normalization", NORMALIZATIONS[:2])
    quad = dict(epsabs=1e-13, epsrel=1e-11, limit=200)

    def speed(g):
        a, b = equiangular_weights(g, beta, n, normalization)
        return _update_norm(g, a, b, n)

    if scheme == "ngpt":
        with np.errstate(divide="ignore", over="ignore"):  # checked below
            val, _ = integrate.quad(
                lambda g: speed(g) / equiangular_rate(g, beta, n, normalization),
                0.0,
                level,
                **quad,
            )
        if not np.isfinite(val / alpha):
            # SA starts at the rate 2 / (e^beta + n - 1): the time grows like e^beta
            raise ValueError(
                f"the nGPT time to level={level:g} is beyond float64 at beta={beta:g}, "
                f"alpha={alpha:g}: use a smaller beta or a larger alpha"
            )
        return float(val / alpha)
    t_post = equiangular_time_to(level, beta=beta, n=n, normalization=normalization)
    if t_post <= switch:
        return t_post
    g_tau = integrate.solve_ivp(
        lambda _t, y: equiangular_rate(y, beta, n, normalization),
        (0.0, switch),
        [0.0],
        method="DOP853",
        rtol=1e-12,
        atol=1e-14,
    ).y[0][-1]

    def rhs(g, y):  # y = (log r, t) as functions of gamma
        a, b = equiangular_weights(g, beta, n, normalization)
        flow = equiangular_rate(g, beta, n, normalization)
        return [(a + (n - 1) * b * g) / flow, np.exp(y[0]) / flow]

    sol = integrate.solve_ivp(
        rhs, (g_tau, level), [0.0, switch], method="DOP853", rtol=1e-11, atol=1e-12
    )
    if not sol.success or not np.isfinite(sol.y[1][-1]):
        raise ValueError(
            f"the Mix-LN time to level={level:g} is beyond float64 at beta={beta:g}: "
            "use a smaller beta or a later switch"
        )
    return float(sol.y[1][-1])


def _heads(beta, weights):
    b = as_finite(beta, "beta", ndims=(1,))
    w = as_finite(weights, "weights", ndims=(1,))
    if b.size == 0 or b.shape != w.shape:
        raise ValueError(
            f"beta and weights must be non-empty with one entry per head, got shapes "
            f"{b.shape} and {w.shape}"
        )
    if np.any(b < 0):
        raise ValueError("beta must be >= 0 for every head")
    return b, w


def multihead_rate(
    gamma: Any, *, beta: Any, weights: Any, n: int, normalization: str = "sa"
) -> np.ndarray:
    r""":math:`\dot\gamma` of the equiangular reduction with several heads.

    Parameters
    ----------
    gamma : array_like
        Inner products in ``[-1/(n-1), 1]``.
    beta : array_like, shape (H,)
        The inverse temperature of each head (``>= 0``).
    weights : array_like, shape (H,)
        The value weight :math:`\lambda_h` of each head (``V_h = lambda_h I``;
        negative for a repelling head).
    n : int
        Number of tokens (``>= 2``).
    normalization : {"sa", "usa"}

    Returns
    -------
    ndarray
        :math:`\sum_h \lambda_h F_h(\gamma)`, with :math:`F_h` the one-head rate
        of :func:`attnlib.equiangular_rhs` at :math:`\beta_h`.

    Examples
    --------
    >>> from attnlib import equiangular_rhs
    >>> two = multihead_rate(0.3, beta=[1.0, 4.0], weights=[1.0, 1.0], n=8)
    >>> one = sum(equiangular_rhs(0.3, beta=bh, n=8) for bh in (1.0, 4.0))
    >>> bool(np.isclose(two, one))
    True
    """
    b, w = _heads(beta, weights)
    n = check_int(n, "n", low=2)
    check_choice(normalization, "normalization", NORMALIZATIONS[:2])
    g = as_finite(gamma, "gamma")
    if np.any(g > 1.0) or np.any(g < -1.0 / (n - 1) - 1e-12):
        raise ValueError("gamma must lie in [-1/(n-1), 1]")
    return sum(wh * equiangular_rate(g, bh, n, normalization) for bh, wh in zip(b, w))


def multihead_gamma(
    times: Any,
    *,
    beta: Any,
    weights: Any,
    n: int,
    normalization: str = "sa",
    gamma0: float = 0.0,
    max_steps: int = 100_000,
) -> np.ndarray:
    r"""The equiangular :math:`\gamma(t)` with several heads (DOP853,
    ``rtol=1e-12``, at most ``max_steps`` steps as in
    :func:`attnlib.equiangular_gamma`); arguments as in :func:`multihead_rate`.

    Examples
    --------
    >>> from attnlib import equiangular_gamma
    >>> g2 = multihead_gamma([0.0, 1.0], beta=[1.0, 1.0], weights=[0.5, 0.5], n=8)
    >>> bool(np.isclose(g2[-1], equiangular_gamma([0.0, 1.0], beta=1.0, n=8)[-1]))
    True
    """
    t = output_times(times)
    b, w = _heads(beta, weights)
    n = check_int(n, "n", low=2)
    gamma0 = check_real(gamma0, "gamma0", low=-1.0 / (n - 1), high=1.0)
    multihead_rate(gamma0, beta=b, weights=w, n=n, normalization=normalization)
    max_steps = check_int(max_steps, "max_steps", low=1)
    if t[-1] == 0.0:
        return np.full(t.shape, gamma0)
    low = -1.0 / (n - 1)

    def rhs(_t, y):
        # gamma never leaves [-1/(n-1), 1] (the rate vanishes at both ends); a trial
        # stage of a stiff start (huge weights) may land astronomically far from it,
        # where the rate overflows: it sees the rate one unit beyond the ends instead
        y = np.clip(y, low - 1.0, 2.0)
        return sum(
            wh * equiangular_rate(y, bh, n, normalization) for bh, wh in zip(b, w)
        )

    sol = _solve(
        rhs,
        (0.0, float(t[-1])),
        [gamma0],
        t,
        max_steps=max_steps,
        what=f"multihead_gamma ({normalization.upper()}, beta={b.tolist()}, "
        f"weights={w.tolist()}, up to the last of times, {t[-1]:g})",
        hint="increase max_steps, or use earlier times or smaller beta or weights",
    )
    return sol.y[0]


def multihead_time_to(
    level: float,
    *,
    beta: Any,
    weights: Any,
    n: int,
    normalization: str = "sa",
    gamma0: float = 0.0,
) -> float:
    r"""Time for the equiangular :math:`\gamma` to go from ``gamma0`` to ``level``
    with several heads: :math:`\int d\gamma/\dot\gamma` (``inf`` if the rate
    vanishes or changes sign on the way). Arguments as in :func:`multihead_rate`.

    Examples
    --------
    >>> from attnlib import equiangular_time_to
    >>> t1 = multihead_time_to(0.999, beta=[2.0], weights=[1.0], n=32)
    >>> bool(np.isclose(t1, equiangular_time_to(0.999, beta=2.0, n=32)))
    True
    """
    b, w = _heads(beta, weights)
    n = check_int(n, "n", low=2)
    level = check_real(level, "level", low=-1.0 / (n - 1))
    gamma0 = check_real(gamma0, "gamma0", low=-1.0 / (n - 1))
    if level >= 1.0 or gamma0 > level:
        raise ValueError(f"need gamma0 <= level < 1, got {gamma0} and {level}")
    grid = np.linspace(gamma0, level, 201)
    if np.any(
        multihead_rate(grid, beta=b, weights=w, n=n, normalization=normalization) <= 0
    ):
        return float("inf")
    val, _ = integrate.quad(
        lambda g: (
            1.0
            / sum(
                wh * equiangular_rate(g, bh, n, normalization) for bh, wh in zip(b, w)
            )
        ),
        gamma0,
        level,
        epsabs=1e-13,
        epsrel=1e-11,
        limit=200,
    )
    return float(val)


def two_head_threshold(scores: Any, weights: Any) -> float:
    r"""The critical :math:`\beta_c` of two USA heads with scores :math:`a_1 > a_2`
    (inverse temperatures :math:`\beta a_h`) and weights
    :math:`\lambda_1 > 0 > \lambda_2`.

    In the equiangular reduction :math:`\dot\gamma = \tfrac2n(1-\gamma)(1 +
    (n-1)\gamma)\,(\lambda_1 e^{\beta a_1\gamma} + \lambda_2 e^{\beta a_2\gamma})`
    changes sign at :math:`\gamma^* = \beta_c/\beta` with

    .. math::  \beta_c = \frac{\log(-\lambda_2/\lambda_1)}{a_1 - a_2}:

    the cluster :math:`\gamma = 1` attracts iff :math:`\beta > \beta_c`, and
    :math:`\gamma(0) = \gamma_0 > 0` clusters iff :math:`\beta\gamma_0 > \beta_c`.
    A negative value (the repelling head the weaker) means every
    :math:`\gamma_0 \ge 0` clusters at every :math:`\beta \ge 0`.

    Examples
    --------
    >>> round(two_head_threshold([1.0, 0.0], [1.0, -2.0]), 6)  # log 2
    0.693147
    """
    a = as_finite(scores, "scores", ndims=(1,))
    w = as_finite(weights, "weights", ndims=(1,))
    if a.shape != (2,) or w.shape != (2,):
        raise ValueError(
            f"scores and weights must have two entries, got shapes {a.shape} and "
            f"{w.shape}"
        )
    if not a[0] > a[1]:
        raise ValueError(f"scores must be decreasing (a_1 > a_2), got {a.tolist()}")
    if not (w[0] > 0 > w[1]):
        raise ValueError(
            f"weights must be (attracting > 0, repelling < 0), got {w.tolist()}"
        )
    return float(np.log(-w[1] / w[0]) / (a[0] - a[1]))
