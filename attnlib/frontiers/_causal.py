r"""Causal self-attention with a positional bias, and what the last token retains.

A decoder Transformer masks attention causally: token ``i`` (in the order of the
sequence, ``i = 0, ..., n-1``) attends to ``j <= i`` only. An ALiBi bias
([Press, Smith, Lewis]) subtracts :math:`\lambda(i - j)` from the logits. On the
sphere, with :math:`L_{ij} = \beta\langle Qx_i, Kx_j\rangle - \lambda(i - j)`
(``j <= i``), :func:`CausalModel` (the model ``Model(mask="causal", slope=...)``)
integrates

* ``normalization="sa"``: :math:`\dot x_i = P_{x_i}\sum_{j\le i}
  \frac{e^{L_{ij}}}{\sum_{k\le i} e^{L_{ik}}} V x_j`;
* ``"usa"``: :math:`\dot x_i = P_{x_i}\frac1n\sum_{j\le i} e^{L_{ij}} V x_j`;
* ``"positional"``: the positional weights are normalised on their own and the
  content weights are not,

  .. math::

      \dot x_i = P_{x_i}\sum_{j<i} w_{ij}\, e^{\beta\langle Qx_i, Kx_j\rangle}
      V x_j,\qquad w_{ij} = \frac{e^{-\lambda(i-j)}}{\sum_{k<i} e^{-\lambda(i-k)}},

  the model of [DGR] (their code takes the slope :math:`\lambda/n` and multiplies
  the field by :math:`\beta`, a change of time scale). It is USA with the logit
  bias :math:`\log(n\,w_{ij})`.

Every token sees only the tokens before it, so the first ``k`` tokens form a closed
system for every ``k``: the first token never moves (with ``V = I``), the second
follows it, and so on. [KPR] prove that with ``V = I`` and any ``Q``, ``K``, causal
attention drives all tokens to one cluster (almost surely), and relate its
metastable states to Rényi's parking problem (:func:`renyi_centres`).

The lost-in-the-middle profile. For the ``"positional"`` model on the circle with
i.i.d. uniform initial angles, linearising the mean-field (Vlasov) equation at the
uniform state gives, for the Fourier mode ``m`` of the density at position
:math:`s \in [0, 1]`, the Volterra equation
:math:`\partial_t\hat\rho_m(s) = a_m\int_0^s w(s, s')\hat\rho_m(s')\,ds'` with
:math:`a_m = m^2 I_m(\beta)/\beta` and
:math:`w(s, s') = \lambda e^{\lambda s'}/(e^{\lambda s} - 1)` (slope :math:`\lambda/n`
per position). Its resolvent from position :math:`s` to the last one is

.. math::

    g_m(t; s) = \frac{\lambda e^{\lambda s}}{e^\lambda - 1}\,
    \psi_{a_m t}\Big(\log\frac{e^\lambda - 1}{e^{\lambda s} - 1}\Big),\qquad
    \psi_c(y) = \sum_{k\ge0}\frac{c^{k+1}y^k}{k!(k+1)!}
    = \sqrt{c/y}\, I_1(2\sqrt{cy}),

and :func:`retention_profile` weighs the modes by
:math:`\omega_m = e^{-\pi^2 m^2/(2M^2)}` (the Fourier coefficients of a wrapped
Gaussian of width :math:`\pi/M`): a U-shaped curve in :math:`s` (primacy as
:math:`s \to 0`, recency as :math:`s \to 1`) [DGR]. We read it as
:math:`n\,\mathbb E[\tfrac12(K_M(\theta_{n}(t) - \theta_k(0)) - 1)]` for the last
token and the token at :math:`s = k/n`, with :math:`K_M = 1 + 2\sum_m \omega_m\cos
m\varphi`: how much closer than chance the last token ends to where token ``k``
started; :func:`retention_estimate` computes it from particles.

References
----------
[KPR] Karagodin, Polyanskiy, Rigollet, *Clustering in causal attention masking*,
arXiv:2411.04990. [DGR] Duerinckx, Geshkovski, Rossi, *Kinetic theory for
Transformers and the lost-in-the-middle phenomenon*, arXiv:2605.09213.
Press, Smith, Lewis, *Train short, test long: attention with linear biases*
(ALiBi), arXiv:2108.12409.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from .._lazy import special

from .. import _kernel
from ..attention import Model
from .._validation import (
    as_finite,
    check_bool,
    check_finite_result,
    as_states,
    check_choice,
    check_int,
    check_real,
    check_unit_norm,
)

__all__ = [
    "CAUSAL_NORMALIZATIONS",
    "CausalModel",
    "alibi_bias",
    "positional_weights",
    "renyi_centres",
    "retention_profile",
    "retention_linear",
    "retention_estimate",
]

#: The normalisations of :func:`CausalModel`: the causal softmax (SA), the
#: unnormalised one (USA) and the positional normalisation of [DGR].
CAUSAL_NORMALIZATIONS = ("sa", "usa", "positional")


def positional_weights(n: int, slope: float) -> np.ndarray:
    r"""The matrix :math:`w_{ij} = e^{-\lambda(i-j)}/\sum_{k<i}e^{-\lambda(i-k)}`.

    Strictly lower triangular, rows ``1..n-1`` sum to one, row 0 is zero.

    Examples
    --------
    >>> positional_weights(3, 0.0)
    array([[0. , 0. , 0. ],
           [1. , 0. , 0. ],
           [0.5, 0.5, 0. ]])
    """
    n = check_int(n, "n", low=1)
    slope = check_real(slope, "slope", low=0.0)
    return _kernel.positional_weights(n, slope)


def alibi_bias(n: int, slope: float, *, positional: bool = False) -> np.ndarray:
    r"""Causal ALiBi logit bias :math:`-\lambda(i - j)` for ``j <= i`` (``-inf`` above).

    With ``positional=True``, the bias :math:`\log(n\,w_{ij})` of the
    ``"positional"`` normalisation (see :func:`positional_weights`): finite strictly
    below the diagonal only, except the entry ``(0, 0)``, set to ``0`` so that the
    first row is not empty (the model sets that row's field to zero: the first token
    has no past). :meth:`attnlib.Model.logit_bias` is this bias for a model.

    Returns
    -------
    ndarray, shape (n, n)
    """
    n = check_int(n, "n", low=1)
    slope = check_real(slope, "slope", low=0.0)
    return _kernel.alibi_bias(n, slope, positional=check_bool(positional, "positional"))


def CausalModel(
    beta: Any = 1.0,
    *,
    slope: float = 0.0,
    Q: Any = None,
    K: Any = None,
    V: Any = None,
    normalization: str = "sa",
) -> Model:
    r"""Causal self-attention on the sphere with an ALiBi bias (see the module doc):
    :class:`attnlib.Model` with ``mask="causal"``.

    Parameters
    ----------
    beta : float or ndarray of shape (B,)
        Inverse temperature ``>= 0`` (one per ensemble member if an array).
    slope : float
        ALiBi slope :math:`\lambda \ge 0` per position.
    Q : ndarray of shape (p, d), optional
        Query matrix (identity if omitted).
    K : ndarray of shape (p, d), optional
        Key matrix (identity if omitted), of the same shape as ``Q``.
    V : ndarray of shape (d, d), optional
        Value matrix (identity if omitted).
    normalization : {"sa", "usa", "positional"}

    Returns
    -------
    Model
        ``Model(beta, Q=Q, K=K, V=V, normalization=normalization, mask="causal",
        slope=slope)``, usable with :func:`attnlib.simulate`.

    Examples
    --------
    >>> import numpy as np
    >>> from attnlib import sample_sphere
    >>> X = sample_sphere(5, 3, rng=0)
    >>> v = CausalModel(beta=1.0, slope=0.5).velocity(X)
    >>> bool(np.allclose(v[0], 0.0))  # the first token only sees itself
    True
    """
    check_choice(normalization, "normalization", CAUSAL_NORMALIZATIONS)
    return Model(
        beta, Q=Q, K=K, V=V, normalization=normalization, mask="causal", slope=slope
    )


def renyi_centres(X: Any, delta: float) -> np.ndarray:
    r"""Indices of the Rényi centres of a sequence of tokens.

    Scanning the tokens in order, a token is a centre when it is farther than
    ``delta`` (geodesic distance on the sphere) from every earlier centre: Rényi's
    random sequential parking. [KPR] use the centres with
    :math:`\delta = 4\beta^{-1/2}` to predict the clusters of causal attention.

    Parameters
    ----------
    X : ndarray, shape (n, d)
        Unit tokens in sequence order.
    delta : float
        Exclusion distance in ``(0, pi]``.

    Returns
    -------
    ndarray of int

    Examples
    --------
    >>> import numpy as np
    >>> th = np.array([0.0, 0.1, 1.0, 0.95, 3.0])
    >>> renyi_centres(np.c_[np.cos(th), np.sin(th)], 0.5).tolist()
    [0, 2, 4]
    """
    X = as_states(X, "X", ndims=(2,))
    check_unit_norm(X, "X")
    delta = check_real(delta, "delta", low=0.0, strict_low=True, high=np.pi)
    c = np.cos(delta)
    centres: list[int] = []
    for i in range(X.shape[0]):
        if not centres or np.max(X[centres] @ X[i]) < c:
            centres.append(i)
    return np.asarray(centres, dtype=int)


def _psi(c: np.ndarray, y: np.ndarray) -> np.ndarray:
    """psi_c(y) = sqrt(c/y) I_1(2 sqrt(cy)), with its limit c at y = 0."""
    y = np.maximum(y, 0.0)
    z = 2.0 * np.sqrt(c * y)
    with np.errstate(invalid="ignore", divide="ignore"):
        val = np.sqrt(c / np.where(y > 0, y, 1.0)) * special.i1e(z) * np.exp(z)
    return np.where(y > 0, val, c)


def _mode_rates(beta, modes):
    m = np.arange(1, modes + 1, dtype=np.float64)
    return m, m * m * special.iv(m, beta) / beta


def _mode_weights(modes, width):
    r""":math:`\omega_m = e^{-\pi^2m^2/(2M^2)}`, ``m = 1..modes``, ``M = width``."""
    m = np.arange(1, modes + 1, dtype=np.float64)
    return np.exp(-0.5 * (np.pi * m / width) ** 2)


# above this slope e^slope is computed with e^-slope factored out
_STEEP = 50.0
_PROFILE_HINT = (
    "the mode rates m^2 I_m(beta) / beta times t (beta={beta:g}, t={t:g}) are too "
    "large; use a smaller beta or t"
)


def _check_profile(beta, t, slope, modes, width):
    beta = check_real(beta, "beta", low=0.0, strict_low=True)
    t = check_real(t, "t", low=0.0)
    slope = check_real(slope, "slope", low=0.0, strict_low=True)
    modes = check_int(modes, "modes", low=1)
    width = check_real(width, "width", low=0.0, strict_low=True)
    return beta, t, slope, modes, width


def retention_profile(
    s: Any,
    *,
    beta: float,
    t: float,
    slope: float = 1.0,
    modes: int = 20,
    width: float = 8.0,
    per_mode: bool = False,
) -> np.ndarray:
    r"""Mean-field retention profile :math:`\sum_m \omega_m g_m(t; s)` ([DGR]).

    Parameters
    ----------
    s : array_like
        Source positions in ``(0, 1)`` (the last token is at ``s = 1``).
    beta : float
        Inverse temperature ``> 0``.
    t : float
        Time (of :func:`CausalModel`; [DGR]'s code runs :math:`\beta` times faster).
    slope : float
        :math:`\lambda > 0`: the ALiBi slope times the number of tokens.
    modes : int
        Number of Fourier modes ``m = 1..modes``.
    width : float
        :math:`M` in :math:`\omega_m = e^{-\pi^2m^2/(2M^2)}`.
    per_mode : bool
        Return :math:`g_m(t; s)` of each mode, shape ``(modes, *s.shape)``.

    Returns
    -------
    ndarray, shape of ``s`` (or ``(modes, *s.shape)``)

    Examples
    --------
    >>> import numpy as np
    >>> R = retention_profile(np.array([0.05, 0.5, 0.95]), beta=1.0, t=2.0)
    >>> bool(R[1] < R[0] and R[1] < R[2])  # U-shaped
    True
    """
    beta, t, slope, modes, width = _check_profile(beta, t, slope, modes, width)
    s = as_finite(s, "s")
    if np.any((s <= 0) | (s >= 1)):
        raise ValueError("s must lie in (0, 1)")
    _, a = _mode_rates(beta, modes)
    c = a.reshape((-1,) + (1,) * s.ndim) * t
    if slope <= _STEEP:
        Y = np.log(np.expm1(slope) / np.expm1(slope * s))
        coeff = slope * np.exp(slope * s) / np.expm1(slope)
        g = coeff * _psi(c, Y)
    else:  # e^slope overflows: factor e^-slope out and multiply in the log domain
        Y = slope * (1.0 - s) + np.log(-np.expm1(-slope) / -np.expm1(-slope * s))
        log_coeff = np.log(slope) + slope * (s - 1.0) - np.log(-np.expm1(-slope))
        z = 2.0 * np.sqrt(c * Y)
        with np.errstate(divide="ignore"):
            log_psi = 0.5 * np.log(c / Y) + np.log(special.i1e(z)) + z
        g = np.exp(log_coeff + log_psi)
    if not per_mode:
        w = _mode_weights(modes, width).reshape((-1,) + (1,) * s.ndim)
        g = np.sum(w * g, axis=0)
    return check_finite_result(
        g, "the retention profile", _PROFILE_HINT.format(beta=beta, t=t)
    )


def retention_linear(
    n: int,
    *,
    beta: float,
    t: float,
    slope: float = 1.0,
    modes: int = 20,
    width: float = 8.0,
) -> np.ndarray:
    r"""The same profile for ``n`` tokens, :math:`n\sum_m\omega_m[e^{a_mtW}]_{n-1,k}`.

    ``W`` is :func:`positional_weights` with slope :math:`\lambda/n`; the linear
    response of the last token to token ``k`` (``k < n - 1``) in the discrete
    positional model. Tends to :func:`retention_profile` at :math:`s = k/n` as ``n``
    grows.

    Returns
    -------
    ndarray, shape (n - 1,)
        One value per source token ``k = 0..n-2``.
    """
    n = check_int(n, "n", low=2)
    beta, t, slope, modes, width = _check_profile(beta, t, slope, modes, width)
    W = positional_weights(n, slope / n)
    _, a = _mode_rates(beta, modes)
    w = _mode_weights(modes, width)
    # last row of e^{cW} = sum_k c^k/k! e_last W^k; W is stochastic below its first
    # row, so the terms decay like c^k/k!: sum until they are below rounding
    c = a * t
    row = np.zeros(n)
    row[-1] = 1.0
    out = np.zeros(n)
    coef = np.ones_like(c)
    k = 0
    while k < n and np.max(coef) > 1e-17 * max(1.0, float(np.max(c))):
        row = row @ W
        k += 1
        coef = coef * c / k
        out += np.sum(w * coef) * row
    return check_finite_result(
        n * out[: n - 1], "the retention profile", _PROFILE_HINT.format(beta=beta, t=t)
    )


def retention_estimate(
    theta0: Any,
    theta_t: Any,
    *,
    modes: int = 20,
    width: float = 8.0,
    control: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    r"""Monte Carlo retention profile from particles on the circle.

    :math:`n\,\mathbb E\big[\sum_m \omega_m \cos m(\theta_{n-1}(t) -
    \theta_k(0))\big]` over an ensemble of independent runs, with the control
    variate :math:`\cos m(\theta_{n-1}(0) - \theta_k(0))` (mean zero for
    independent uniform angles) subtracted when ``control`` is true.

    Parameters
    ----------
    theta0, theta_t : array_like, shape (B, n)
        Initial and final angles of ``B`` runs.

    Returns
    -------
    mean, stderr : ndarrays, shape (n - 1,)
        The estimate for each source ``k = 0..n-2`` and its standard error.
    """
    a0 = as_finite(theta0, "theta0")
    at = as_finite(theta_t, "theta_t")
    if a0.ndim != 2 or a0.shape != at.shape or a0.shape[0] < 2:
        raise ValueError(
            "theta0 and theta_t must have the same shape (B, n) with B >= 2, got "
            f"{a0.shape} and {at.shape}"
        )
    modes = check_int(modes, "modes", low=1)
    width = check_real(width, "width", low=0.0, strict_low=True)
    B, n = a0.shape
    m = np.arange(1, modes + 1)
    w = _mode_weights(modes, width)
    diff_t = at[:, -1:] - a0[:, :-1]  # (B, n-1)
    samples = np.tensordot(np.cos(diff_t[..., None] * m), w, axes=1)
    if control:
        diff_0 = a0[:, -1:] - a0[:, :-1]
        samples -= np.tensordot(np.cos(diff_0[..., None] * m), w, axes=1)
    samples *= n
    return samples.mean(axis=0), samples.std(axis=0, ddof=1) / np.sqrt(B)
