r"""Self-attention with value matrices resampled at every layer, and its limit.

**The chain.** ``n`` tokens on :math:`S^{d-1}`, ``L`` layers, time step
:math:`h = T/L` (``T = t_final``). At layer :math:`\ell`, every head
:math:`k = 1..H` draws a fresh value matrix

.. math::

    V_k^\ell = \bar v\,I_d + \frac{s}{\sqrt h}\,G_k^\ell,
    \qquad (G_k^\ell)_{ab} \sim N(0, 1/d)\ \text{i.i.d.},

(and, with ``random_qk``, fresh :math:`Q_k^\ell, K_k^\ell` with i.i.d.
:math:`N(0, 1/d)` entries; otherwise :math:`Q = K = I`), independently across
layers, heads and ensemble members, and every token takes the retracted step

.. math::

    x_i \leftarrow \frac{y_i}{|y_i|},\qquad
    y_i = x_i + \frac hH\sum_{k=1}^H P_{x_i}\big(V_k^\ell m_i^{(k)}\big),
    \qquad m_i^{(k)} = \frac{\sum_j e^{\beta\langle Q_k x_i, K_k x_j\rangle}x_j}
    {\sum_j e^{\beta\langle Q_k x_i, K_k x_j\rangle}}

(SA, the library's softmax kernel). So the deterministic part of the residual is
of size :math:`h = T/L` and the random part of size :math:`s\sqrt h =
s\sqrt{T/L}`: the *diffusive scaling* :math:`L^{-1/2}`. With ``project=False``
the residual is not projected (:math:`y_i = x_i + \tfrac hH\sum_k V_k m_i^{(k)}`,
the form of a residual block followed by a token-wise normalisation); for
Gaussian :math:`G` the two differ per step by a term of mean zero and size
:math:`O(h)`, and have the same limit. With ``noise = 0``, ``value_mean = 1`` and
``project=True`` the chain is exactly the explicit Euler scheme of SA with
retraction, :func:`attnlib.simulate` with ``method="euler"``.

**Two tokens.** For ``Q = K = I`` the overlap :math:`u = \langle x_1, x_2\rangle`
of two tokens has, per step, (with :math:`e = e^{-\beta(1-u)}`,
:math:`p = 1/(1+e)`, :math:`q = e/(1+e)` the attention weights,
:math:`c = s^2/(Hd)`)

.. math::

    E[\Delta u] = h\,b(u) + o(h),\qquad E[(\Delta u)^2] = h\,a(u) + o(h),

    b(u) = (1-u^2)\Big(2\bar v q + c\big(2pq(d-2) - (p^2+q^2)u\big)\Big),\qquad
    a(u) = 2c\,(p^2+q^2)(1-u^2)^2,

so the limit :math:`L \to \infty` of the overlap is the diffusion
:math:`du = b(u)\,dt + \sqrt{a(u)}\,dB` (:func:`overlap_coefficients`,
:func:`overlap_sde`). Its scale function decides where :math:`u` goes
(:func:`antipodal_probability`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _kernel as kern
from .._control import Fixed
from .._lazy import integrate as _quad_module
from .._results import Trajectory
from .._stepping import MAX_STEPS, Outcome, drive, output_times
from .._validation import (
    as_finite,
    as_member_param,
    check_bool,
    check_int,
    check_real,
    check_rng,
    check_steps,
    check_unit_norm,
)

__all__ = [
    "resampled_run",
    "overlap_coefficients",
    "overlap_sde",
    "antipodal_probability",
    "count_clusters",
]


def _check_states(X0: Any) -> np.ndarray:
    X = as_finite(X0, "X0", what="array of tokens", ndims=(2, 3))
    if X.shape[-1] < 2:
        raise ValueError(
            f"X0 must have tokens of dimension d >= 2, got d={X.shape[-1]}"
        )
    if X.shape[-2] < 1:
        raise ValueError("X0 must hold at least one token, got an empty array")
    check_unit_norm(X, "X0")
    return X


def resampled_run(
    X0: Any,
    *,
    beta: Any,
    layers: int,
    t_final: float = 1.0,
    noise: float = 1.0,
    value_mean: float = 0.0,
    heads: int = 1,
    random_qk: bool = False,
    project: bool = True,
    rng: np.random.Generator | int,
    n_saves: int = 1,
) -> Trajectory:
    r"""Run the layer-resampled self-attention chain (module docstring).

    Parameters
    ----------
    X0 : ndarray, shape (n, d) or (B, n, d)
        Unit initial tokens; ``B`` independent runs share nothing but ``X0``.
    beta : float or ndarray of shape (B,)
        Inverse temperature ``>= 0`` (one per run if an array).
    layers : int
        Number of layers ``L >= 1``.
    t_final : float
        Depth as time, ``T > 0``; the step is ``h = T / L``.
    noise : float
        The amplitude ``s >= 0`` of the random part of the value matrices.
    value_mean : float
        The mean ``v̄`` of the value matrices, ``v̄ I`` (``1``: SA's ``V = I``;
        ``0``: centred values).
    heads : int
        Number of heads ``H >= 1``, averaged.
    random_qk : bool
        Resample ``Q`` and ``K`` too (entries ``N(0, 1/d)``); otherwise ``Q = K = I``.
    project : bool
        Project the residual on the tangent space before the retraction.
    rng : Generator or int
        The only source of randomness.
    n_saves : int
        Number of equally spaced output times after time 0 (``>= 1``, at most
        ``layers``; must divide ``layers``).

    Returns
    -------
    Trajectory
        ``times`` (layer ``k`` is time ``k * h``), ``states`` of shape (T, B, n, d) or
        (T, n, d) (the leading ensemble axis as in ``X0``), ``final`` (the tokens after
        the last layer), ``dt`` the step ``h = t_final / layers``, ``n_steps`` the
        number of layers, and ``info["layers"]``, the layer reached at each output
        time.

    Examples
    --------
    >>> import numpy as np
    >>> X0 = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    >>> run = resampled_run(X0, beta=1.0, layers=50, rng=0)
    >>> run.final.shape, bool(np.allclose(np.linalg.norm(run.final, axis=-1), 1))
    ((2, 3), True)
    """
    X = _check_states(X0)
    batch = X.shape[0] if X.ndim == 3 else None
    beta = as_member_param(beta, "beta", batch, states="X0")
    layers = check_int(layers, "layers", low=1)
    t_final = check_real(t_final, "t_final", low=0.0, strict_low=True)
    noise = check_real(noise, "noise", low=0.0)
    value_mean = check_real(value_mean, "value_mean")
    heads = check_int(heads, "heads", low=1)
    random_qk = check_bool(random_qk, "random_qk")
    project = check_bool(project, "project")
    gen = check_rng(rng)
    n_saves = check_int(n_saves, "n_saves", low=1)
    if layers % n_saves:
        raise ValueError(
            f"n_saves must divide layers (equally spaced outputs on layers), got "
            f"n_saves={n_saves}, layers={layers}"
        )
    d = X.shape[-1]
    lead = X.shape[:-2]  # () or (B,)
    h = t_final / layers
    scale = 1.0 / np.sqrt(d)
    times = output_times(t_final * np.arange(n_saves + 1) / n_saves)
    saved = [X.copy()]

    def layer(X: np.ndarray, h: float) -> np.ndarray:
        mean = np.zeros_like(X)
        rand = np.zeros_like(X) if noise > 0 else None
        for _ in range(heads):
            A = None
            if random_qk:
                Q = scale * gen.standard_normal(lead + (d, d))
                K = scale * gen.standard_normal(lead + (d, d))
                A = np.swapaxes(Q, -1, -2) @ K
            # the softmax barycentre m_i of the head (values V = I), then V applied
            F = kern.softmax_field(X, beta, A, None, symmetric=A is None)
            if value_mean != 0.0:
                mean += value_mean * F
            if rand is not None:
                G = scale * gen.standard_normal(lead + (d, d))
                rand += F @ np.swapaxes(G, -1, -2)
        if heads > 1:
            mean /= heads
            if rand is not None:
                rand /= heads
        if project:
            kern.project(X, mean)
        Y = X + h * mean
        if rand is not None:
            if project:
                kern.project(X, rand)
            Y += (noise * np.sqrt(h)) * rand
        return kern.retract(Y)

    def advance(X: np.ndarray, step: float, m: int) -> np.ndarray:
        for _ in range(m):
            X = layer(X, step)
        return X

    def observe(k: int, X: np.ndarray) -> None:
        if k > 0:
            saved.append(X.copy())

    # the driver cuts each span of layers // n_saves layers into steps of h
    run = drive(
        advance,
        X,
        times,
        control=Fixed(h * (1 + 1e-12)),
        observe=observe,
        finite=lambda X: bool(np.all(np.isfinite(X))),
        max_steps=None,
        name="resampled_run",
    )
    if run.outcome is not Outcome.COMPLETED or run.n_steps != layers:
        raise RuntimeError(
            f"resampled_run took {run.n_steps} of {layers} layers ({run.outcome.name})"
        )
    states = np.stack(saved)
    return Trajectory(
        times=times,
        states=states,
        final=states[-1],
        method="resampled",
        n_steps=layers,
        dt=h,
        info={"layers": np.arange(n_saves + 1) * (layers // n_saves)},
    )


def _weights(u: np.ndarray, beta: float) -> tuple[np.ndarray, np.ndarray]:
    e = np.exp(-beta * (1.0 - u))
    return 1.0 / (1.0 + e), e / (1.0 + e)


def _check_sde_params(beta, d, noise, value_mean, heads):
    beta = check_real(beta, "beta", low=0.0)
    d = check_int(d, "d", low=2)
    noise = check_real(noise, "noise", low=0.0)
    value_mean = check_real(value_mean, "value_mean")
    heads = check_int(heads, "heads", low=1)
    return beta, d, noise, value_mean, heads


def overlap_coefficients(
    u: Any,
    *,
    beta: float,
    d: int,
    noise: float = 1.0,
    value_mean: float = 0.0,
    heads: int = 1,
) -> tuple[np.ndarray, np.ndarray]:
    r"""Drift :math:`b(u)` and diffusion :math:`a(u) = \sigma(u)^2` of the limit
    overlap of two tokens (module docstring), for ``Q = K = I``.

    Examples
    --------
    >>> b, a = overlap_coefficients(0.0, beta=0.0, d=2)   # c = 1/2, p = q = 1/2
    >>> float(b), float(a)
    (0.0, 0.5)
    """
    beta, d, noise, value_mean, heads = _check_sde_params(
        beta, d, noise, value_mean, heads
    )
    u = as_finite(u, "u")
    if np.any(np.abs(u) > 1):
        raise ValueError("u must be overlaps in [-1, 1]")
    c = noise**2 / (heads * d)
    p, q = _weights(u, beta)
    w = 1.0 - u * u
    drift = w * (
        2.0 * value_mean * q + c * (2.0 * p * q * (d - 2) - (p * p + q * q) * u)
    )
    diff = 2.0 * c * (p * p + q * q) * w * w
    return drift, diff


def overlap_sde(
    u0: Any,
    *,
    beta: float,
    d: int,
    t_final: float,
    dt: float,
    rng: np.random.Generator | int,
    noise: float = 1.0,
    value_mean: float = 0.0,
    heads: int = 1,
    max_steps: int = MAX_STEPS,
) -> np.ndarray:
    r"""Euler–Maruyama for the limit overlap :math:`du = b\,dt + \sqrt a\,dB`,
    clipped to :math:`[-1, 1]` (where :math:`a` and :math:`b` vanish).

    ``u0`` (array of any shape: independent paths) gives the starting overlaps;
    returns the overlaps at ``t_final``. At most ``max_steps`` steps of size ``dt``
    are taken (a ``TooManyStepsError`` before the first one otherwise).
    """
    beta, d, noise, value_mean, heads = _check_sde_params(
        beta, d, noise, value_mean, heads
    )
    u = as_finite(u0, "u0").copy()
    if np.any(np.abs(u) > 1):
        raise ValueError("u0 must be overlaps in [-1, 1]")
    t_final = check_real(t_final, "t_final", low=0.0, strict_low=True)
    dt = check_real(dt, "dt", low=0.0, strict_low=True)
    max_steps = check_int(max_steps, "max_steps", low=1)
    check_steps(
        np.ceil(t_final / dt),
        max_steps,
        what="overlap_sde",
        hint="shorten t_final, increase dt or max_steps",
    )
    gen = check_rng(rng)

    def advance(u: np.ndarray, h: float, k: int) -> np.ndarray:
        for _ in range(k):
            b, a = overlap_coefficients(
                u, beta=beta, d=d, noise=noise, value_mean=value_mean, heads=heads
            )
            u = u + h * b + np.sqrt(h * a) * gen.standard_normal(u.shape)
            np.clip(u, -1.0, 1.0, out=u)
        return u

    run = drive(
        advance,
        u,
        output_times(t_final=t_final),
        control=Fixed(dt),
        max_steps=max_steps,
        name="overlap_sde",
        advice={Outcome.BUDGET_EXHAUSTED: "shorten t_final, increase dt or max_steps"},
    )
    return run.state


def antipodal_probability(
    u0: Any,
    *,
    beta: float,
    d: int,
    noise: float = 1.0,
    value_mean: float = 0.0,
    heads: int = 1,
) -> np.ndarray:
    r"""The probability that the limit overlap tends to :math:`-1` (antipodal
    tokens) rather than :math:`+1` (merged), from :math:`u(0) = u_0`.

    With :math:`g = 2b/a = N(u)/(1-u^2)`, the scale density is
    :math:`S'(u) = \exp(-\int_0^u g) = (1-u)^{N(1)/2}(1+u)^{-N(-1)/2}e^{-R(u)}`
    with :math:`R` smooth. If :math:`N(-1) < 2` both ends have finite scale and
    :math:`P(u \to -1) = \int_{u_0}^1 S' / \int_{-1}^1 S'`; otherwise
    (:math:`S(-1^+) = -\infty`) the overlap tends to :math:`+1` almost surely and
    the probability is 0. ``noise`` must be positive.

    Examples
    --------
    >>> import numpy as np   # on the circle the angle is a martingale: arccos(u0)/pi
    >>> p = antipodal_probability([0.0, 0.5], beta=2.0, d=2)
    >>> bool(np.allclose(p, np.arccos([0.0, 0.5]) / np.pi, atol=1e-7))
    True
    """
    beta, d, noise, value_mean, heads = _check_sde_params(
        beta, d, noise, value_mean, heads
    )
    if noise == 0:
        raise ValueError(
            "noise must be > 0 (without noise the overlap is deterministic)"
        )
    u0 = as_finite(u0, "u0")
    if np.any(np.abs(u0) > 1):
        raise ValueError("u0 must be overlaps in [-1, 1]")
    c = noise**2 / (heads * d)

    def N(u):
        p, q = _weights(u, beta)
        return (
            (d - 2) / np.cosh(beta * (1.0 - u))
            - u
            + 2.0 * value_mean * q / (c * (p * p + q * q))
        )

    n_plus, n_minus = float(N(1.0)), float(N(-1.0))
    if n_minus >= 2.0:
        return np.zeros_like(u0)
    quad = _quad_module.quad

    def smooth(v):
        # (N(v) - N(1)) / (2(1 - v)) + (N(v) - N(-1)) / (2(1 + v)), finite at +-1
        nv = N(v)
        left = 0.0 if v == 1.0 else (nv - n_plus) / (2.0 * (1.0 - v))
        right = 0.0 if v == -1.0 else (nv - n_minus) / (2.0 * (1.0 + v))
        return left + right

    def R(u):
        return quad(smooth, 0.0, u, epsabs=1e-12, epsrel=1e-10, limit=200)[0]

    def part(lo):
        return quad(
            lambda v: np.exp(-R(v)),
            lo,
            1.0,
            weight="alg",
            wvar=(-n_minus / 2.0, n_plus / 2.0),
            epsabs=1e-12,
            epsrel=1e-9,
        )[0]

    # the weight is (v - lo)^alpha (1 - v)^beta: for lo > -1 write (1+v)^-N(-1)/2
    # into the integrand instead
    total = part(-1.0)

    def upper(lo):
        if lo <= -1.0:
            return total
        if lo >= 1.0:
            return 0.0
        return quad(
            lambda v: np.exp(-R(v)) * (1.0 + v) ** (-n_minus / 2.0),
            lo,
            1.0,
            weight="alg",
            wvar=(0.0, n_plus / 2.0),
            epsabs=1e-12,
            epsrel=1e-9,
        )[0]

    out = np.array([upper(float(x)) / total for x in u0.ravel()])
    return out.reshape(u0.shape)


def count_clusters(X: Any, *, tol: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    r"""Clusters and antipodal pairs of clusters of tokens.

    Tokens closer than ``tol`` (Euclidean) are joined (single linkage); two
    clusters are an antipodal pair when their first tokens satisfy
    :math:`\langle x, y\rangle < -1 + \mathrm{tol}^2/2`.

    Parameters
    ----------
    X : ndarray, shape (n, d) or (B, n, d)

    Returns
    -------
    (clusters, antipodal_pairs) : ndarrays of int, shape () or (B,)
    """
    X = as_finite(X, "X", what="array of tokens", ndims=(2, 3))
    if X.shape[-2] < 1:
        raise ValueError("X must hold at least one token, got an empty array")
    tol = check_real(tol, "tol", low=0.0, strict_low=True)
    single = X.ndim == 2
    Xb = X[None] if single else X
    counts, pairs = [], []
    for Y in Xb:
        n = Y.shape[0]
        label = -np.ones(n, dtype=int)
        k = 0
        for i in range(n):
            if label[i] >= 0:
                continue
            stack, label[i] = [i], k
            while stack:
                j = stack.pop()
                near = np.flatnonzero(
                    (np.linalg.norm(Y - Y[j], axis=-1) < tol) & (label < 0)
                )
                label[near] = k
                stack.extend(near.tolist())
            k += 1
        reps = np.array([Y[np.flatnonzero(label == c)[0]] for c in range(k)])
        G = reps @ reps.T
        counts.append(k)
        pairs.append(int(np.sum(np.triu(G < -1.0 + tol * tol / 2.0, 1))))
    counts, pairs = np.array(counts), np.array(pairs)
    return (counts[0], pairs[0]) if single else (counts, pairs)
