r"""What the book measures on trained networks (numpy only: no JAX at import).

Token states have shape ``(..., n, d)``; a record of :func:`attnlib.nets.forward` has
``states`` of shape ``(L + 1, B, n, d)`` and ``attention`` of shape
``(L, B, H, n, n)``. Inner products are those of the unit-normalised rows
:math:`\hat x_i = x_i/|x_i|` (the tokens on the sphere after the layer norm).
Cluster counting and the histograms reuse :mod:`attnlib.metrics`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from attnlib._validation import as_finite, check_int, check_real
from attnlib.metrics import InnerProductHistogram
from attnlib.metrics import cluster_count as _cluster_count
from attnlib.nets._budget import check_bytes

__all__ = [
    "unit_rows",
    "pair_inner_products",
    "LayerHistograms",
    "inner_product_histograms",
    "mean_inner_product",
    "effective_rank",
    "cluster_count",
    "Spectrum",
    "qk_spectrum",
    "value_spectrum",
    "frobenius_cosine",
    "distance_to_pm",
    "effective_beta",
    "attention_sink",
    "first_token_attraction",
    "retention_by_position",
    "DecayFits",
    "decay_fits",
]


def _states(X: Any, name: str = "X", min_ndim: int = 2) -> np.ndarray:
    arr = as_finite(X, name)
    if arr.ndim < min_ndim or arr.size == 0:
        raise ValueError(
            f"{name} must be a non-empty array of shape (..., n, d), got {arr.shape}"
        )
    return arr


def unit_rows(X: Any) -> np.ndarray:
    """The rows of ``X`` (shape ``(..., d)``) divided by their norm (zero rows stay)."""
    arr = _states(X, "X", 1)
    norms = np.linalg.norm(arr, axis=-1, keepdims=True)
    return arr / np.where(norms > 0, norms, 1.0)


def _gram(X):
    U = unit_rows(X)
    return np.clip(U @ np.swapaxes(U, -1, -2), -1.0, 1.0)


def pair_inner_products(X: Any) -> np.ndarray:
    r"""The inner products :math:`\langle\hat x_i, \hat x_j\rangle`, :math:`i < j`.

    Parameters
    ----------
    X : array_like, shape (..., n, d)

    Returns
    -------
    ndarray, shape (..., n (n - 1) / 2)
        In the order of ``numpy.triu_indices(n, 1)``.

    Examples
    --------
    >>> pair_inner_products([[2.0, 0.0], [0.0, 3.0], [1.0, 1.0]]).round(4)
    array([0.    , 0.7071, 0.7071])
    """
    X = _states(X)
    n = X.shape[-2]
    iu = np.triu_indices(n, 1)
    return _gram(X)[..., iu[0], iu[1]]


@dataclass(frozen=True)
class LayerHistograms:
    """Histograms of the pairwise inner products, one per layer.

    Attributes
    ----------
    edges : ndarray, shape (bins + 1,)
        Equal bins on ``[-1, 1]``.
    counts : ndarray of int, shape (L + 1, bins)
        Pairs ``i < j`` in each bin, pooled over the batch.
    density : ndarray, shape (L + 1, bins)
        ``counts`` normalised to integrate to one over ``[-1, 1]``.
    mean : ndarray, shape (L + 1,)
        The mean inner product at each layer.
    """

    edges: np.ndarray
    counts: np.ndarray
    density: np.ndarray
    mean: np.ndarray


def inner_product_histograms(states: Any, bins: int = 40) -> LayerHistograms:
    r"""Histograms of :math:`\langle\hat x_i, \hat x_j\rangle` (:math:`i<j`) by layer.

    The quantity of [GLPR] Fig. 1, computed with
    :class:`attnlib.metrics.InnerProductHistogram`.

    Parameters
    ----------
    states : array_like, shape (L + 1, n, d) or (L + 1, B, n, d)
    bins : int
        Number of equal bins on ``[-1, 1]``.

    Returns
    -------
    LayerHistograms
    """
    S = _states(states, "states", 3)
    if S.ndim == 3:
        S = S[:, None]
    if S.ndim != 4:
        raise ValueError(
            f"states must have shape (L + 1, n, d) or (L + 1, B, n, d), got {S.shape}"
        )
    if S.shape[-2] < 2:
        raise ValueError(f"states must hold n >= 2 tokens, got n = {S.shape[-2]}")
    bins = check_int(bins, "bins", low=1)
    check_bytes(
        8 * bins * (3 * S.shape[0] + S.shape[1] + 2),
        f"inner_product_histograms with bins={bins}",
        "lower bins",
    )
    hist = InnerProductHistogram(bins)
    G = _gram(S)
    counts = np.stack([hist(g).sum(axis=0) for g in G])
    width = 2.0 / hist.bins
    density = counts / (counts.sum(axis=1, keepdims=True) * width)
    return LayerHistograms(hist.edges, counts, density, mean_inner_product(S))


def mean_inner_product(states: Any) -> np.ndarray:
    r"""The mean of :math:`\langle\hat x_i, \hat x_j\rangle` over pairs ``i < j``.

    Parameters
    ----------
    states : array_like, shape (L + 1, n, d) or (L + 1, B, n, d)

    Returns
    -------
    ndarray, shape (L + 1,) (averaged over the batch)
    """
    S = _states(states, "states", 3)
    vals = pair_inner_products(S)
    return vals.reshape(S.shape[0], -1).mean(axis=1)


def effective_rank(X: Any) -> np.ndarray | float:
    r"""Effective rank of Roy and Vetterli, :math:`\exp H(p)`.

    With :math:`\sigma_k` the singular values of the ``(n, d)`` matrix ``X`` (as
    given: not centred, not normalised), :math:`p_k = \sigma_k/\sum_l\sigma_l` and
    :math:`H(p) = -\sum_k p_k\log p_k`. It lies between 1 (rank one: all tokens on
    one line) and :math:`\min(n, d)` (equal singular values). Singular values below
    numpy's rank tolerance (:math:`\sigma_1\max(n, d)\,\varepsilon`) count as zero.

    Parameters
    ----------
    X : array_like, shape (..., n, d)

    Returns
    -------
    float or ndarray of shape ``X.shape[:-2]``

    References
    ----------
    Roy, Vetterli, *The effective rank: a measure of effective dimensionality*,
    EUSIPCO 2007.

    Examples
    --------
    >>> float(effective_rank(np.eye(4)))
    4.0
    >>> float(effective_rank(np.outer([1.0, 2.0, 3.0], [1.0, -1.0])))
    1.0
    """
    X = _states(X)
    s = np.linalg.svd(X, compute_uv=False)
    # singular values below numpy's rank tolerance are rounding errors of zeros
    tol = s[..., :1] * max(X.shape[-2:]) * np.finfo(s.dtype).eps
    s = np.where(s > tol, s, 0.0)
    total = s.sum(axis=-1, keepdims=True)
    if np.any(total == 0):
        raise ValueError(
            "X must not be the zero matrix (its effective rank is undefined)"
        )
    p = s / total
    with np.errstate(divide="ignore", invalid="ignore"):
        H = -np.sum(np.where(p > 0, p * np.log(p), 0.0), axis=-1)
    r = np.exp(H)
    return float(r) if r.ndim == 0 else r


def cluster_count(X: Any, tol: float = 1e-2) -> np.ndarray | int:
    r"""Number of clusters of the unit-normalised tokens.

    The rule of :func:`attnlib.metrics.cluster_count`: connected components of
    :math:`\langle\hat x_i, \hat x_j\rangle > 1 - \mathrm{tol}`.

    Parameters
    ----------
    X : array_like, shape (..., n, d)
    tol : float in (0, 2]

    Returns
    -------
    int or ndarray of int of shape ``X.shape[:-2]``
    """
    X = _states(X)
    tol = check_real(tol, "tol", low=0.0, high=2.0, strict_low=True)
    U = unit_rows(X)
    lead = U.shape[:-2]
    counts = _cluster_count(U.reshape((-1,) + U.shape[-2:]), tol)
    counts = np.asarray(counts).reshape(lead)
    return int(counts) if counts.ndim == 0 else counts


@dataclass(frozen=True)
class Spectrum:
    """Eigenvalues of a matrix (per head) and what they say.

    Attributes
    ----------
    eigenvalues : ndarray, shape (..., d)
        Sorted by decreasing real part (real for a symmetric matrix).
    definiteness : str or ndarray of str
        ``"positive definite"``, ``"positive semidefinite"``, ``"negative
        definite"``, ``"negative semidefinite"`` or ``"indefinite"`` (of the
        symmetric part, with eigenvalues below ``1e-6`` times the largest modulus
        counted as zero).
    """

    eigenvalues: np.ndarray
    definiteness: Any


def _definiteness(ev: np.ndarray) -> np.ndarray:
    scale = np.max(np.abs(ev), axis=-1, keepdims=True)
    tol = 1e-6 * np.where(scale > 0, scale, 1.0)
    pos = np.all(ev > tol, axis=-1)
    nonneg = np.all(ev > -tol, axis=-1)
    neg = np.all(ev < -tol, axis=-1)
    nonpos = np.all(ev < tol, axis=-1)
    out = np.full(ev.shape[:-1], "indefinite", dtype=object)
    out[nonpos] = "negative semidefinite"
    out[neg] = "negative definite"
    out[nonneg] = "positive semidefinite"
    out[pos] = "positive definite"
    return out.astype(str)


def _square(M: Any, name: str) -> np.ndarray:
    arr = as_finite(M, name)
    if arr.ndim < 2 or arr.shape[-1] != arr.shape[-2]:
        raise ValueError(f"{name} must have shape (..., d, d), got {arr.shape}")
    return arr


def _qk(Q: Any, K: Any) -> np.ndarray:
    Q = as_finite(Q, "Q")
    K = as_finite(K, "K")
    if Q.ndim < 2 or Q.shape != K.shape:
        raise ValueError(
            f"Q and K must have the same shape (..., m, d), got {Q.shape} and {K.shape}"
        )
    return np.swapaxes(Q, -1, -2) @ K


def qk_spectrum(Q: Any, K: Any) -> Spectrum:
    r"""Eigenvalues of the symmetric part of :math:`Q^\top K` and its definiteness.

    The logit is :math:`\beta\langle Qx, Ky\rangle = \beta\,x^\top Q^\top K y`; on
    :math:`x = y` only the symmetric part :math:`S = (Q^\top K + K^\top Q)/2` acts.

    Parameters
    ----------
    Q, K : array_like, shape (..., m, d)
        One head, or heads (and layers) on leading axes.

    Returns
    -------
    Spectrum
        Eigenvalues of ``S`` in decreasing order, shape ``(..., d)``.

    Examples
    --------
    >>> s = qk_spectrum(np.eye(2), np.diag([2.0, -1.0]))
    >>> s.eigenvalues, str(s.definiteness)
    (array([ 2., -1.]), 'indefinite')
    """
    A = _qk(Q, K)
    S = 0.5 * (A + np.swapaxes(A, -1, -2))
    ev = np.linalg.eigvalsh(S)[..., ::-1]
    defin = _definiteness(ev)
    return Spectrum(ev, str(defin) if defin.ndim == 0 else defin)


def value_spectrum(V: Any) -> Spectrum:
    r"""Eigenvalues of ``V`` (complex in general), by decreasing real part.

    [GLPR] Section 2 relate the sign of the top eigenvalue of ``V`` to where tokens
    cluster in :math:`\mathbb R^d`; ``definiteness`` is that of the symmetric part
    :math:`(V + V^\top)/2`.

    Parameters
    ----------
    V : array_like, shape (..., d, d)

    Returns
    -------
    Spectrum
    """
    V = _square(V, "V")
    ev = np.linalg.eigvals(V)
    order = np.argsort(-ev.real, axis=-1, kind="stable")
    ev = np.take_along_axis(ev, order, axis=-1)
    if np.all(np.abs(ev.imag) <= 1e-12 * np.maximum(np.abs(ev).max(), 1.0)):
        ev = ev.real
    sym = np.linalg.eigvalsh(0.5 * (V + np.swapaxes(V, -1, -2)))[..., ::-1]
    defin = _definiteness(sym)
    return Spectrum(ev, str(defin) if defin.ndim == 0 else defin)


def frobenius_cosine(V: Any, A: Any) -> np.ndarray | float:
    r""":math:`\langle V, A\rangle_F/(|V|_F|A|_F)` over the last two axes."""
    V = _square(V, "V")
    A = _square(A, "A")
    if V.shape[-2:] != A.shape[-2:]:
        raise ValueError(
            f"V and A must be matrices of the same size, got {V.shape} and {A.shape}"
        )
    nv = np.linalg.norm(V, axis=(-2, -1))
    na = np.linalg.norm(A, axis=(-2, -1))
    if np.any(nv == 0) or np.any(na == 0):
        raise ValueError("V and A must be non-zero matrices")
    c = np.sum(V * A, axis=(-2, -1)) / (nv * na)
    return float(c) if np.ndim(c) == 0 else c


def distance_to_pm(V: Any, A: Any) -> np.ndarray | float:
    r"""Relative distance of ``V`` to the line through :math:`\pm A`.

    .. math::

        \min_{c\in\mathbb R}\frac{|V - cA|_F}{|V|_F} = \sqrt{1 - \rho^2},\qquad
        \rho = \frac{\langle V, A\rangle_F}{|V|_F|A|_F}:

    0 when ``V`` is a positive or negative multiple of ``A`` (the sign is that of
    :func:`frobenius_cosine`), 1 when they are orthogonal; about
    :math:`\sqrt{1 - 1/d^2}` for independent random ``d x d`` matrices. With
    ``A`` :math:`= Q^\top K` it measures how far a head is from the
    :math:`V = \pm Q^\top K` of the gradient-flow models ([BKKRW]).

    Examples
    --------
    >>> A = np.arange(4.0).reshape(2, 2)
    >>> distance_to_pm(-3 * A, A)
    0.0
    >>> round(distance_to_pm(np.eye(2), [[0, 1], [-1, 0]]), 6)
    1.0
    """
    rho = np.asarray(frobenius_cosine(V, A))
    out = np.sqrt(np.clip(1.0 - rho**2, 0.0, None))
    return float(out) if out.ndim == 0 else out


def effective_beta(Q: Any, K: Any, beta: float) -> np.ndarray | float:
    r"""The inverse temperature seen by unit tokens: :math:`\beta\,\|Q^\top K\|_2`.

    After the layer norm the logits are :math:`x^\top(\beta Q^\top K)y` with unit
    :math:`x, y`; writing :math:`\beta Q^\top K = \beta_{\rm eff} M` with
    :math:`\|M\|_2 = 1` (operator norm) gives the temperature of the book's model
    with interaction matrix ``M``: logits range in
    :math:`[-\beta_{\rm eff}, \beta_{\rm eff}]`.

    Parameters
    ----------
    Q, K : array_like, shape (..., m, d)
    beta : float
        The network's ``beta`` (``NetConfig.inverse_temperature``).

    Returns
    -------
    float or ndarray of shape ``Q.shape[:-2]``
    """
    beta = check_real(beta, "beta", low=0.0)
    A = _qk(Q, K)
    out = beta * np.linalg.norm(A, ord=2, axis=(-2, -1))
    return float(out) if np.ndim(out) == 0 else out


def _attention(attn: Any) -> np.ndarray:
    A = as_finite(attn, "attn")
    if A.ndim < 2 or A.shape[-1] != A.shape[-2] or A.shape[-1] < 2 or A.size == 0:
        raise ValueError(
            f"attn must have a non-empty shape (..., n, n) with n >= 2, got {A.shape}"
        )
    return A


def attention_sink(attn: Any) -> np.ndarray | float:
    r"""Mean weight on the first token, :math:`\frac1{n-1}\sum_{i\ge1}A_{i0}`.

    The first row is left out (under a causal mask it is 1). Uniform causal
    attention gives :math:`\frac1{n-1}\sum_{i=1}^{n-1}\frac1{i+1}`, uniform full
    attention :math:`1/n`: compare with these.

    Parameters
    ----------
    attn : array_like, shape (..., n, n)
        Rows are queries; e.g. the ``attention`` of
        :class:`attnlib.nets.model.NetRun`, ``(L, B, H, n, n)``.

    Returns
    -------
    float or ndarray of shape ``attn.shape[:-2]``
    """
    A = _attention(attn)
    out = A[..., 1:, 0].mean(axis=-1)
    return float(out) if out.ndim == 0 else out


def first_token_attraction(states: Any) -> np.ndarray:
    r"""Mean :math:`\langle\hat x_i, \hat x_0\rangle` over tokens :math:`i \ge 1`.

    By layer and averaged over the batch: how close the tokens are to the first one
    (to which causal attention draws them, [KPR] Thm 4.1). Compare with
    :func:`mean_inner_product`, the mean over all pairs.

    Parameters
    ----------
    states : array_like, shape (L + 1, n, d) or (L + 1, B, n, d)

    Returns
    -------
    ndarray, shape (L + 1,)
    """
    S = _states(states, "states", 3)
    U = unit_rows(S)
    if U.shape[-2] < 2:
        raise ValueError("states must hold n >= 2 tokens")
    dots = np.einsum("...id,...d->...i", U[..., 1:, :], U[..., 0, :])
    return dots.reshape(S.shape[0], -1).mean(axis=1)


def retention_by_position(states: Any) -> np.ndarray:
    r"""How much of token ``k``'s input the last token keeps at the last layer.

    :math:`R_k = \mathbb E\,\langle\hat x_{n-1}(L), \hat x_k(0)\rangle` for
    :math:`k = 0, \dots, n-2`, averaged over the batch: the measured counterpart of
    :func:`attnlib.frontiers.retention_profile` (a U shape is "lost in the middle").

    Parameters
    ----------
    states : array_like, shape (L + 1, B, n, d) or (L + 1, n, d)

    Returns
    -------
    ndarray, shape (n - 1,)
    """
    S = _states(states, "states", 3)
    if S.ndim == 3:
        S = S[:, None]
    U = unit_rows(S)
    last, first = U[-1][:, -1, :], U[0][:, :-1, :]
    return np.einsum("bd,bkd->bk", last, first).mean(axis=0)


@dataclass(frozen=True)
class DecayFits:
    r"""Least-squares fits of a decay :math:`\delta(t)` in two forms.

    Attributes
    ----------
    rate : float
        :math:`a` of :math:`\log\delta \approx c - a t` (exponential decay).
    exponent : float
        :math:`p` of :math:`\log\delta \approx c - p\log t` (power law).
    residual_exp, residual_pow : float
        Root-mean-square residuals of the two fits in :math:`\log\delta`.
    """

    rate: float
    exponent: float
    residual_exp: float
    residual_pow: float


def decay_fits(t: Any, delta: Any) -> DecayFits:
    r"""Fit :math:`\delta(t) > 0` by :math:`Ce^{-at}` and by :math:`Ct^{-p}`.

    For the rate at which :math:`1 - \gamma` (one minus the mean inner product)
    falls with depth: exponential for post-LN, :math:`t^{-2}` for pre-LN in the
    book's model (Chapter 6). The smaller residual says which form fits better.

    Parameters
    ----------
    t : array_like, shape (m,)
        Positive times (``layer * step``), ``m >= 3``.
    delta : array_like, shape (m,)
        Positive values.

    Examples
    --------
    >>> t = np.arange(1.0, 20.0)
    >>> f = decay_fits(t, 3 * t**-2.0)
    >>> round(f.exponent, 6), f.residual_pow < f.residual_exp
    (2.0, True)
    """
    t = as_finite(t, "t", ndims=(1,))
    delta = as_finite(delta, "delta", ndims=(1,))
    if t.shape != delta.shape or t.size < 3:
        raise ValueError(
            f"t and delta must have the same shape (m,) with m >= 3, got {t.shape} "
            f"and {delta.shape}"
        )
    if np.any(t <= 0) or np.any(delta <= 0):
        raise ValueError("t and delta must be positive (their logarithms are fitted)")
    y = np.log(delta)
    out = []
    for x in (t, np.log(t)):
        coef, *_ = np.linalg.lstsq(np.stack([np.ones_like(x), x], 1), y, rcond=None)
        res = y - (coef[0] + coef[1] * x)
        out.append((-coef[1], float(np.sqrt(np.mean(res**2)))))
    return DecayFits(float(out[0][0]), float(out[1][0]), out[0][1], out[1][1])
