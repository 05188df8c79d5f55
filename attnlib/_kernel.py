r"""The attention field: pure array functions under every particle model of the library.

Every model of ``attnlib`` that moves tokens by attention evaluates

.. math::

    F_i = \frac{1}{N_i}\sum_{j} w_j\, e^{L_{ij}}\, V y_j,
    \qquad L_{ij} = \beta\,\langle x_i, A\, y_j\rangle,

with queries :math:`x_i`, keys :math:`y_j` (the tokens themselves unless said
otherwise), :math:`A = Q^\top K`, atom weights :math:`w_j` (``1`` for tokens),
:math:`N_i = \sum_j w_j e^{L_{ij}}` (SA) or :math:`n` (USA), and on the sphere the
tangent projection :math:`P_{x_i} F_i` ([GLPR] (2.3); [BKKRW] §3 with
:math:`A = V = D`, :math:`\beta = 1`). This module computes it, and nothing else:

* :func:`logits`, :func:`attention_weights`, :func:`aggregate`: the three steps of
  the field, for any leading batch shape;
* :func:`softmax_field`: the field of ``(n, k)`` or ``(B, n, k)`` tokens with one
  ``beta``, ``A`` and ``V`` per ensemble member or shared, SA or USA, softmax or
  sigmoid weights, causal mask, additive logit bias, in row blocks (memory
  ``O(n * block)``) and member chunks;
* :func:`measure_field`: the same at arbitrary points for a measure of weighted atoms;
* :func:`symmetric_field`: the tiled evaluation for a symmetric positive
  semi-definite ``A`` (each exponential computed once for two entries);
* :func:`gram_field`: the same field seen on the Gram matrix of the tokens
  (:math:`Q = K = V = I` on the sphere), where it closes;
* :func:`scaled_state`, :func:`euler_identity_steps`, :func:`scaled_gram`,
  :func:`unscaled`: the fused explicit Euler step with retraction of
  :math:`Q = K = V = I`, the hot loop of ensembles and phase diagrams;
* :func:`project`, :func:`retract`: the geometry of the sphere, in place.

Conventions. Functions here validate nothing: arrays are finite, floating, of
consistent shapes, and ``beta >= 0``; callers (the public functions) check their
input once. Shapes: ``X`` is ``(..., n, k)`` (``k`` the token dimension, or the
dimension of the span of the tokens), ``beta`` a float or an array ``(B,)`` for
``X`` of shape ``(B, n, k)``, ``A`` and ``V`` ``None`` (identity), ``(k, k)`` or
``(B, k, k)``. The result keeps the dtype of ``X``. Exponents are shifted so that
nothing overflows before the last scaling: by the row maximum (general case), by
:math:`c_i + c_j` with :math:`c_i = \tfrac\beta2 x_i^\top A x_i` (symmetric
positive semi-definite ``A``, Cauchy–Schwarz), or by ``1 + beta`` (identity on the
sphere, fused step); a USA result that does not fit the dtype raises
``ValueError`` (:func:`attnlib._validation.exp_scale`).

References: [GLPR] Geshkovski, Letrouit, Polyanskiy, Rigollet, arXiv:2312.10794,
(2.3) and (2.7); [BKKRW] Burger, Kabri, Korolev, Roith, Weigand, arXiv:2501.03096, §3.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
from . import _compiled
from ._lazy import special
from ._validation import exp_scale, log_max

__all__ = [
    "CHUNK_ENTRIES",
    "project",
    "retract",
    "logits",
    "attention_weights",
    "hardmax_weights",
    "aggregate",
    "causal_mask",
    "alibi_bias",
    "positional_weights",
    "softmax_field",
    "measure_field",
    "symmetric_field",
    "gram_field",
    "scaled_state",
    "euler_identity_steps",
    "scaled_gram",
    "unscaled",
]

# Ensemble members are evaluated in chunks holding at most this many kernel entries.
CHUNK_ENTRIES = 1 << 21
_USA_HINT = (
    "use normalization='sa', a smaller beta, smaller Q and K (the logits are "
    "beta <Q x_i, K x_j>) or float64"
)

Bias = float | Callable[[slice, int], np.ndarray] | None


def _tr(M: np.ndarray) -> np.ndarray:
    return np.swapaxes(M, -1, -2)


def _col(beta: Any, ndim: int) -> Any:
    """``beta`` broadcastable against ``(B, r, m)`` arrays: a float or ``(B, 1, 1)``."""
    if np.ndim(beta) == 0:
        return beta
    return np.asarray(beta).reshape((-1,) + (1,) * (ndim - 1))


def _member(M: Any, sl: Any) -> Any:
    """The members ``sl`` of a per-member array ``(B, ...)``; shared arrays as is."""
    return M if M is None or np.ndim(M) <= 2 else M[sl]


def _beta_member(beta: Any, sl: Any) -> Any:
    if np.ndim(beta) == 0:
        return beta
    b = np.asarray(beta)[sl]
    return float(b) if np.ndim(b) == 0 else b


# ------------------------------------------------------------------------ geometry
def project(X: np.ndarray, F: np.ndarray) -> np.ndarray:
    r"""Tangent projection :math:`F_i \leftarrow F_i - \langle F_i, x_i\rangle x_i`.

    In place on ``F``; ``X`` need not have unit rows (the natural extension of
    :math:`P_x` off the sphere, used by Runge–Kutta stages).

    Parameters
    ----------
    X, F : ndarray, shape (..., n, k)

    Returns
    -------
    ndarray
        ``F``, projected.
    """
    F -= np.sum(F * X, axis=-1, keepdims=True) * X
    return F


def retract(Y: np.ndarray) -> np.ndarray:
    r"""Retraction :math:`y_i \leftarrow y_i / |y_i|` onto the sphere, in place.

    Parameters
    ----------
    Y : ndarray, shape (..., n, k)
        Rows with non-zero norm.

    Returns
    -------
    ndarray
        ``Y``, normalised.
    """
    Y /= np.linalg.norm(Y, axis=-1, keepdims=True)
    return Y


# ---------------------------------------------------------------- three steps
def logits(
    X: np.ndarray,
    beta: Any,
    A: np.ndarray | None = None,
    *,
    Y: np.ndarray | None = None,
) -> np.ndarray:
    r"""Attention logits :math:`L_{ij} = \beta\langle x_i, A y_j\rangle`.

    Evaluated as ``beta * ((X @ A) @ Y^T)`` (``X @ Y^T`` for ``A = None``).

    Parameters
    ----------
    X : ndarray, shape (..., r, k)
        Queries.
    beta : float or ndarray of shape (B,)
        One value per member of a leading ensemble axis ``B``.
    A : ndarray of shape (k, k) or (B, k, k), optional
        :math:`Q^\top K`; ``None`` is the identity.
    Y : ndarray, shape (..., m, k), optional
        Keys (default ``X``).

    Returns
    -------
    ndarray, shape (..., r, m)
    """
    Y = X if Y is None else Y
    XA = X if A is None else X @ A
    return _col(beta, XA.ndim) * (XA @ _tr(Y))


def attention_weights(
    L: np.ndarray,
    normalization: str = "sa",
    *,
    kind: str = "softmax",
    keep: np.ndarray | None = None,
    n: int | None = None,
    shift: Any = None,
    tol: float = 1e-12,
) -> tuple[np.ndarray, np.ndarray | None]:
    r"""Attention weights of logits, as ``W * exp(log_scale)``.

    * ``kind="softmax"``: :math:`e^{L_{ij}}`, divided by the row sum (SA) or by
      ``n`` (USA). Formed with a shift :math:`m_i` subtracted (the row maximum, or
      ``shift``): SA returns the normalised rows and ``log_scale = None``; USA
      returns :math:`W_{ij} = e^{L_{ij} - m_i}` and ``log_scale``
      :math:`= m_i - \log n` (apply it with :func:`aggregate`, which checks the
      range).
    * ``kind="sigmoid"``: :math:`\sigma(L_{ij})`, divided by ``n`` (USA) or by the
      row sum (SA), the latter from :math:`\log\sigma` so that rows whose every
      :math:`\sigma` underflows stay exact; ``log_scale = None``.
    * ``kind="hardmax"``: the :math:`\beta \to \infty` limit of the SA softmax of
      the scores ``L``, uniform over the maximisers of each row,
      :math:`H_{ij} = \mathbf 1[j \in J_i]/|J_i|` with
      :math:`J_i = \{j : L_{ij} \ge \max_k L_{ik} - \mathrm{tol}\cdot
      \max(1, \max_k |L_{ik}|)\}` (maxima over the kept entries); rows sum to one
      whatever the normalisation, ``log_scale = None``.

    Parameters
    ----------
    L : ndarray, shape (..., r, m)
        Logits (for the sigmoid, pre-activations including any bias).
    normalization : {"sa", "usa"}
    kind : {"softmax", "sigmoid"}
    keep : ndarray of bool, broadcastable to ``L``, optional
        Entries that take part (a mask); the others get weight zero. Every row must
        keep at least one entry.
    n : int, optional
        USA denominator (default ``m``, the number of keys).
    shift : float or ndarray of shape (B,), optional
        Softmax only: a bound of the logits of each member (of a leading ensemble
        axis) subtracted instead of the row maximum, which saves a pass; it must
        keep every exponential finite and the SA row sums from underflowing (e.g.
        :math:`\beta\|A\|_2` for unit vectors with the diagonal in the sum).
    tol : float
        Hardmax only: the relative tolerance of a tie (``>= 0``).

    Returns
    -------
    W : ndarray, shape (..., r, m)
    log_scale : ndarray of shape (..., r, 1), or None
    """
    n = L.shape[-1] if n is None else n
    if kind == "hardmax":
        return hardmax_weights(L, tol, keep=keep), None
    if kind == "sigmoid":
        if normalization == "sa":
            W = special.log_expit(L)
            if keep is not None:
                W = np.where(keep, W, -np.inf)
            W -= W.max(axis=-1, keepdims=True)
            np.exp(W, out=W)
            return W / W.sum(axis=-1, keepdims=True), None
        W = special.expit(L)
        if keep is not None:
            W = np.where(keep, W, 0.0)
        return W / n, None
    if keep is not None:
        L = np.where(keep, L, -np.inf)
    if shift is None:
        m = L.max(axis=-1, keepdims=True)
    else:
        m = np.broadcast_to(_col(shift, L.ndim), L.shape[:-1] + (1,))
    W = np.exp(L - m)
    if normalization == "sa":
        return W / W.sum(axis=-1, keepdims=True), None
    return W, m - np.log(n)


def hardmax_weights(
    S: np.ndarray, tol: float = 1e-12, *, keep: np.ndarray | None = None
) -> np.ndarray:
    r"""Row-stochastic hardmax weights of scores: the even split over each row's
    maximisers, ties within ``tol * max(1, max_k |S_ik|)`` (see
    :func:`attention_weights`, ``kind="hardmax"``).

    Parameters
    ----------
    S : ndarray, shape (..., r, m)
        Scores :math:`\langle Qx_i, Ky_j\rangle`.
    tol : float
        Relative tolerance of a tie.
    keep : ndarray of bool, broadcastable to ``S``, optional
        Entries that take part (a mask); every row keeps at least one.

    Returns
    -------
    ndarray, shape (..., r, m)
    """
    if keep is None:
        top = S.max(axis=-1, keepdims=True)
        scale = np.maximum(np.abs(S).max(axis=-1, keepdims=True), 1.0)
        W = (S >= top - tol * scale).astype(S.dtype)
    else:
        top = np.where(keep, S, -np.inf).max(axis=-1, keepdims=True)
        size = np.where(keep, np.abs(S), 0.0).max(axis=-1, keepdims=True)
        scale = np.maximum(size, 1.0)
        W = (keep & (S >= top - tol * scale)).astype(S.dtype)
    return W / W.sum(axis=-1, keepdims=True)


def aggregate(
    W: np.ndarray,
    VY: np.ndarray,
    log_scale: np.ndarray | None = None,
    *,
    dtype: Any = None,
    what: str = "the USA velocity",
    hint: str = _USA_HINT,
    tangent: np.ndarray | None = None,
) -> np.ndarray:
    r"""The weighted sum :math:`\sum_j W_{ij} (Vy)_j`, times ``exp(log_scale)``.

    Parameters
    ----------
    W : ndarray, shape (..., r, m)
        Weights (from :func:`attention_weights`).
    VY : ndarray, shape (..., m, k)
        Values :math:`V y_j`.
    log_scale : ndarray of shape (..., r, 1), optional
        Logarithm of a row factor; the product must be finite in ``dtype``
        (``ValueError`` otherwise, naming ``what``).
    dtype : numpy dtype, optional
        Dtype of the result (default that of ``W @ VY``).
    what, hint : str
        The quantity and the advice, for the overflow message.
    tangent : ndarray of shape (..., r, k), optional
        Points at which to project the sum (:func:`project`) *before* the scaling,
        so that a tangent field that fits the dtype never fails on the size of its
        normal component.

    Returns
    -------
    ndarray, shape (..., r, k)
    """
    F = W @ VY
    if tangent is not None:
        project(tangent, F)
    if log_scale is None:
        return F
    return exp_scale(F, log_scale, what=what, hint=hint, dtype=dtype)


# ---------------------------------------------------------------- the field
def _values(X: np.ndarray, V: np.ndarray | None) -> np.ndarray:
    """Rows :math:`V x_j`: ``X @ V^T`` (``V`` shared or per member)."""
    return X if V is None else X @ _tr(V)


def causal_mask(rows: slice, n: int) -> np.ndarray:
    """Causal mask of the query rows ``rows``: key ``j`` is kept when ``j <= i``.

    Parameters
    ----------
    rows : slice
        Query rows, within ``range(n)``.
    n : int
        Number of tokens.

    Returns
    -------
    ndarray of bool, shape (r, n)
    """
    r = np.arange(n)[rows]
    return np.arange(n)[None, :] <= r[:, None]


def positional_weights(n: int, slope: float) -> np.ndarray:
    r"""The matrix :math:`w_{ij} = e^{-\lambda(i-j)}/\sum_{k<i}e^{-\lambda(i-k)}`
    of the positional normalisation (strictly lower triangular, row 0 zero;
    :func:`attnlib.frontiers.positional_weights`)."""
    i = np.arange(n)
    lag = i[:, None] - i[None, :]
    # e^{-slope (lag - 1)}: the common factor e^{-slope} cancels in the ratio, and
    # the nearest past token keeps weight one however steep the slope
    W = np.where(lag > 0, np.exp(-slope * np.maximum(lag - 1, 0)), 0.0)
    sums = W.sum(axis=1, keepdims=True)
    return np.divide(W, sums, out=np.zeros_like(W), where=sums > 0)


def alibi_bias(n: int, slope: float, positional: bool = False) -> np.ndarray:
    r"""Causal ALiBi logit bias :math:`-\lambda(i - j)` for ``j <= i`` (``-inf``
    above), or with ``positional`` the bias :math:`\log(n\,w_{ij})` of the
    positional normalisation with the entry ``(0, 0)`` set to zero
    (:func:`attnlib.frontiers.alibi_bias`).

    Returns
    -------
    ndarray, shape (n, n)
    """
    i = np.arange(n)
    lag = i[:, None] - i[None, :]
    if not positional:
        return np.where(lag >= 0, -slope * lag, -np.inf)
    with np.errstate(divide="ignore"):
        B = np.log(n * positional_weights(n, slope))
    B[0, 0] = 0.0
    return B


@functools.lru_cache(maxsize=8)
def _strict_upper(r: int) -> np.ndarray:
    """The boolean ``(r, r)`` mask of the entries above the diagonal (read only)."""
    U = np.triu(np.ones((r, r), dtype=bool), 1)
    U.flags.writeable = False
    return U


def _mask_future(L: np.ndarray, rows: slice, n: int) -> None:
    """Set the logits of the keys ``j > i`` of the query rows ``rows`` to ``-inf``,
    in place (``L`` of shape ``(..., r, n)``): the causal mask, without the
    ``(r, n)`` boolean array and the copy of :func:`causal_mask` and ``np.where``."""
    s, e, _ = rows.indices(n)
    L[..., :, e:] = -np.inf
    np.copyto(L[..., :, s:e], -np.inf, where=_strict_upper(e - s))


def _rows(
    X, XV, beta, A, rows, normalization, kind, mask, bias, logits_fn, dtype, what, tol
):
    """The field at the query rows ``rows`` (all keys): shape (..., r, k)."""
    n = X.shape[-2]
    if logits_fn is not None:
        L = logits_fn(X, beta, rows)
    else:
        L = logits(X[..., rows, :], beta, A, Y=X)
    if bias is not None:
        L = L + (bias(rows, n) if callable(bias) else bias)
    keep = None
    if mask == "causal":
        if kind == "hardmax":  # its tie scale is over the kept scores only
            keep = causal_mask(rows, n)
        else:  # a logit of -inf is a weight of zero: the same weights, cheaper
            _mask_future(L, rows, n)
    W, log_scale = attention_weights(
        L, normalization, kind=kind, keep=keep, n=n, tol=tol
    )
    return aggregate(W, XV, log_scale, dtype=dtype, what=what)


def softmax_field(
    X: np.ndarray,
    beta: Any,
    A: np.ndarray | None = None,
    V: np.ndarray | None = None,
    *,
    normalization: str = "sa",
    kind: str = "softmax",
    mask: str | None = None,
    bias: Bias = None,
    logits_fn: Callable[[np.ndarray, Any, slice], np.ndarray] | None = None,
    symmetric: bool = False,
    block: int = 256,
    what: str = "the USA velocity",
    tol: float = 1e-12,
) -> np.ndarray:
    r"""The attention field :math:`\sum_j W_{ij} V x_j` of tokens (not projected).

    .. math::

        F_i = \frac{1}{N_i}\sum_{j=1}^n e^{\beta\langle x_i, A x_j\rangle} V x_j,
        \qquad N_i = \sum_j e^{\beta\langle x_i, A x_j\rangle}\ (\text{SA})
        \ \text{or}\ n\ (\text{USA}),

    ([GLPR] (2.3) before the projection; sum it over heads for (2.7), then
    :func:`project` on the sphere). Evaluated in row blocks of ``block`` queries
    (memory ``O(n * block)``), ensemble members in chunks of at most
    :data:`CHUNK_ENTRIES` kernel entries. With ``symmetric=True`` (``A`` symmetric
    positive semi-definite, or ``None``) and the plain softmax, the tiled
    :func:`symmetric_field` is used when the dtype allows it.

    Parameters
    ----------
    X : ndarray, shape (n, k) or (B, n, k)
    beta : float or ndarray of shape (B,)
    A : ndarray of shape (k, k) or (B, k, k), optional
        :math:`Q^\top K` (identity if ``None``).
    V : ndarray of shape (k, k) or (B, k, k), optional
        Value matrix (identity if ``None``).
    normalization : {"sa", "usa"}
    kind : {"softmax", "sigmoid", "hardmax"}
        Weights :math:`e^{L}`, :math:`\sigma(L)` or the hardmax of the logits
        ``L`` (see :func:`attention_weights`).
    mask : {None, "causal"}
        ``"causal"``: query ``i`` sees keys ``j <= i``.
    bias : float or callable(rows, n) -> ndarray of shape (r, n), optional
        Added to the logits (the sigmoid's offset, a positional bias).
    logits_fn : callable(X, beta, rows) -> ndarray of shape (..., r, n), optional
        Replaces :func:`logits` (e.g. the L2 logits
        :math:`-\tfrac\beta2|Qx_i - Kx_j|^2`).
    symmetric : bool
        ``A`` is known to be symmetric positive semi-definite (or the identity).
    block : int
        Queries per row block, and tile size of the symmetric evaluation.
    what : str
        Name of the result in overflow messages.
    tol : float
        Relative tolerance of a tie of the hardmax.

    Returns
    -------
    ndarray, same shape and dtype as ``X``

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> F = softmax_field(X, np.log(3.0))      # weights 3:1 on the own token
    >>> F.tolist()
    [[0.75, 0.25], [0.25, 0.75]]
    """
    if _compiled.backend() != "numpy":  # the compiled field, where it applies
        F = _compiled.softmax_field(
            X,
            beta,
            A,
            V,
            normalization=normalization,
            kind=kind,
            mask=mask,
            bias=bias,
            logits_fn=logits_fn,
            symmetric=symmetric,
            block=block,
            what=what,
            hint=_USA_HINT,
        )
        if F is not NotImplemented:
            return F
    XV = _values(X, V)
    plain = kind == "softmax" and mask is None and bias is None and logits_fn is None
    if symmetric and plain and (A is None or np.ndim(A) == 2):
        F = symmetric_field(X, XV, beta, A, normalization, block, what=what)
        if F is not None:
            return F
    args = (normalization, kind, mask, bias, logits_fn, X.dtype, what, tol)
    n = X.shape[-2]
    if X.ndim == 3:
        out = np.empty_like(XV)
        if n <= block:
            step = max(1, CHUNK_ENTRIES // (n * n))
            for s in range(0, X.shape[0], step):
                sl = slice(s, s + step)
                out[sl] = _rows(
                    X[sl],
                    XV[sl],
                    _beta_member(beta, sl),
                    _member(A, sl),
                    slice(None),
                    *args,
                )
            return out
        for b in range(X.shape[0]):
            out[b] = softmax_field(
                X[b],
                _beta_member(beta, b),
                _member(A, b),
                _member(V, b),
                normalization=normalization,
                kind=kind,
                mask=mask,
                bias=bias,
                logits_fn=logits_fn,
                block=block,
                what=what,
                tol=tol,
            )
        return out
    out = np.empty_like(XV)
    for s in range(0, n, block):
        rows = slice(s, min(n, s + block))
        out[rows] = _rows(X, XV, beta, A, rows, *args)
    return out


def measure_field(
    points: np.ndarray,
    atoms: np.ndarray,
    weights: np.ndarray,
    beta: Any,
    A: np.ndarray | None = None,
    V: np.ndarray | None = None,
    *,
    normalization: str = "sa",
    shift: Any = None,
    block: int = 256,
    what: str = "the field",
    hint: str = _USA_HINT,
    sphere: bool = False,
) -> np.ndarray:
    r"""Field of a measure :math:`\mu = \sum_j w_j\delta_{y_j}` at points (unprojected).

    .. math::

        F(x) = \frac{1}{N(x)}\sum_j w_j\, e^{\beta\langle x, A y_j\rangle} V y_j,
        \qquad N(x) = \sum_j w_j e^{\beta\langle x, A y_j\rangle}\ (\text{SA})
        \ \text{or}\ 1\ (\text{USA}),

    so that USA with the weights :math:`1/n` of an empirical measure is the USA
    field of the particles.

    For ``points = atoms`` and ``weights = 1/n`` this is :func:`softmax_field`
    (the particle system is the mean-field equation of its empirical measure).

    Parameters
    ----------
    points : ndarray, shape (..., p, k)
    atoms : ndarray, shape (..., m, k)
    weights : ndarray, shape (m,) or (..., m)
        Non-negative masses (a probability measure for the mean field).
    beta : float or ndarray of shape (B,)
    A, V : ndarray of shape (k, k) or (B, k, k), optional
    normalization : {"sa", "usa"}
    shift : float or ndarray of shape (B,), optional
        A bound of the logits subtracted before the exponential instead of the row
        maximum (e.g. :math:`\|D\|_2` for unit vectors), to save a pass.
    block : int
        Points per block.
    what, hint : str
        Name of the result and advice, in overflow messages (USA).
    sphere : bool
        Project at the points (before any scaling) and return the tangent field.

    Returns
    -------
    ndarray, shape (..., p, k)
    """
    VY = _values(atoms, V)
    p = points.shape[-2]
    out = np.empty(points.shape[:-1] + (VY.shape[-1],), dtype=points.dtype)
    w = weights[..., None, :]
    for s in range(0, p, block):
        rows = slice(s, min(p, s + block))
        L = logits(points[..., rows, :], beta, A, Y=atoms)
        if shift is None:
            m = L.max(axis=-1, keepdims=True)
        else:
            m = _col(shift, L.ndim)
        W = np.exp(L - m)
        W *= w
        F = W @ VY
        if sphere:
            project(points[..., rows, :], F)
        if normalization == "sa":
            F /= W.sum(axis=-1, keepdims=True)
        else:
            F = exp_scale(
                F,
                np.broadcast_to(m, F.shape[:-1] + (1,)),
                what=what,
                hint=hint,
                dtype=points.dtype,
            )
        out[..., rows, :] = F
    return out


# ------------------------------------------------------- symmetric tiled field
def symmetric_field(
    X: np.ndarray,
    XV: np.ndarray,
    beta: Any,
    A: np.ndarray | None,
    normalization: str = "sa",
    block: int = 256,
    *,
    what: str = "the USA velocity",
) -> np.ndarray | None:
    r"""Tiled softmax field for a symmetric positive semi-definite ``A = Q^T K``.

    With :math:`c_i = \tfrac{\beta}{2} x_i^\top A x_i`, Cauchy–Schwarz gives
    :math:`\beta x_i^\top A x_j - c_i - c_j \le 0` with equality on the diagonal, so
    the shifted kernel :math:`W_{ij} = e^{\beta x_i^\top A x_j - c_i - c_j}` is
    symmetric, bounded by one and has unit diagonal. Each tile ``(I, J)`` with
    ``I <= J`` is exponentiated once and used for the rows of ``I`` and of ``J``:
    half the exponentials of a row-wise evaluation, and memory ``O(n * block)``.
    The shifts are two more columns of the product that forms a tile
    (:math:`[\beta y_i, -c_i, 1]\cdot[x_j, 1, -c_j]`), so that a tile costs one
    product with ``k + 2`` columns, one exponential and two weighted sums, and
    nothing else: the exponential is most of the time (``benchmarks/velocity.py``
    prints the floor it sets and the time taken, from one run).

    Parameters
    ----------
    X : ndarray, shape (n, k) or (B, n, k)
    XV : ndarray, shape of ``X``
        Values :math:`V x_j`.
    beta : float or ndarray of shape (B,)
    A : ndarray of shape (k, k), or None
        Symmetric positive semi-definite (``None``: the identity).
    normalization : {"sa", "usa"}
    block : int
        Tile size; ``n <= block`` is evaluated densely.
    what : str
        Name of the result in overflow messages (USA).

    Returns
    -------
    ndarray of the shape of ``XV``, or None
        ``None`` when the factors :math:`e^{c_j}` span more than the range of the
        dtype (:func:`attnlib._validation.log_max`): use :func:`softmax_field`
        without ``symmetric`` then.
    """
    if _compiled.backend() != "numpy":  # the compiled tiles
        F = _compiled.symmetric_field(
            X, XV, beta, A, normalization, block, what=what, hint=_USA_HINT
        )
        if F is not NotImplemented:
            return F
    if X.ndim == 3:
        B, n, _ = X.shape
        out = np.empty_like(XV)
        if n <= block:
            step = max(1, CHUNK_ENTRIES // (n * n))
            for s in range(0, B, step):
                sl = slice(s, s + step)
                r = _dense_symmetric(
                    X[sl], XV[sl], _beta_member(beta, sl), A, normalization, what
                )
                if r is None:
                    return None
                out[sl] = r
            return out
        for b in range(B):
            r = symmetric_field(
                X[b], XV[b], _beta_member(beta, b), A, normalization, block, what=what
            )
            if r is None:
                return None
            out[b] = r
        return out
    n = X.shape[0]
    if n <= block:
        return _dense_symmetric(X, XV, beta, A, normalization, what)
    beta = float(beta)
    Y = X if A is None else X @ A
    c = 0.5 * beta * np.sum(Y * X, axis=1)
    spread = float(c.max() - c.min())
    if spread > log_max(X.dtype):
        return None
    g = np.exp(c - c.max())
    dt = X.dtype
    k = X.shape[1]
    Z = np.empty((n, XV.shape[1] + 1), dtype=dt)
    Z[:, :-1] = XV * g[:, None]
    Z[:, -1] = g
    acc = np.zeros_like(Z)
    # the shifts ride in the product: [beta y_i, -c_i, 1] . [x_j, 1, -c_j] is the
    # shifted exponent, so a tile is one product, one exp and two weighted sums
    left = np.empty((n, k + 2), dtype=dt)
    left[:, :k] = beta * Y
    left[:, k] = -c
    left[:, k + 1] = 1.0
    right = np.empty((k + 2, n), dtype=dt)
    right[:k] = X.T
    right[k] = 1.0
    right[k + 1] = -c
    starts = list(range(0, n, block))
    tile = np.empty((block, block), dtype=dt)
    part = np.empty((block, Z.shape[1]), dtype=dt)
    for a, s in enumerate(starts):
        rows = slice(s, min(n, s + block))
        r = rows.stop - rows.start
        for t in starts[a:]:
            cols = slice(t, min(n, t + block))
            m = cols.stop - cols.start
            T = tile[:r, :m]
            np.matmul(left[rows], right[:, cols], out=T)
            np.exp(T, out=T)
            np.matmul(T, Z[cols], out=part[:r])
            acc[rows] += part[:r]
            if t != s:
                np.matmul(T.T, Z[rows], out=part[:m])
                acc[cols] += part[:m]
    num, den = acc[:, :-1], acc[:, -1:]
    if normalization == "sa":
        return num / den
    return _usa(num, c + c.max() - np.log(n), X.dtype, what)


def gram_field(G: np.ndarray, beta: Any, normalization: str = "sa") -> np.ndarray:
    r"""The field seen on the Gram matrix :math:`G_{ij} = \langle x_i, x_j\rangle`.

    For :math:`Q = K = V = I` on the sphere, write the velocity as
    :math:`\dot x_i = \sum_k A_{ik} x_k - c_i x_i` with :math:`A` the attention
    weights of the logits :math:`\beta G` and :math:`c_i = (AG)_{ii}`. Then

    .. math::

        \dot G = AG + (AG)^\top - CG - GC, \qquad C = \operatorname{diag}(c),

    a closed equation in :math:`G` ([GLPR] §6.2). Any symmetric ``(..., n, n)``
    matrices are accepted, not only Gram matrices (whose entries lie in [-1, 1]),
    with ``beta`` as in :func:`logits`.
    """
    W, log_scale = attention_weights(_col(beta, G.ndim) * G, normalization)
    AG = aggregate(
        W,
        G,
        log_scale,
        dtype=G.dtype,
        what="the USA Gram field",
        hint="use normalization='sa', a smaller beta, or G with smaller entries (a "
        "Gram matrix of unit tokens has them in [-1, 1])",
    )
    c = np.einsum("...ii->...i", AG)
    return AG + _tr(AG) - c[..., :, None] * G - G * c[..., None, :]


def _dense_symmetric(X, XV, beta, A, normalization, what):
    """Dense :func:`symmetric_field` for small ``n`` (or a chunk of an ensemble)."""
    n = X.shape[-2]
    Y = X if A is None else X @ A
    b = beta if np.ndim(beta) == 0 else np.asarray(beta, dtype=X.dtype).reshape(-1, 1)
    c = 0.5 * b * np.sum(Y * X, axis=-1)
    cmax = c.max(axis=-1, keepdims=True)
    if float(np.max(cmax - c.min(axis=-1, keepdims=True))) > log_max(X.dtype):
        return None
    bb = b if np.ndim(beta) == 0 else b[..., None]
    T = bb * (Y @ _tr(X))
    T -= c[..., :, None]
    T -= c[..., None, :]
    np.exp(T, out=T)
    g = np.exp(c - cmax)
    num = T @ (XV * g[..., None])
    den = T @ g[..., None]
    if normalization == "sa":
        return num / den
    return _usa(num, c + cmax - np.log(n), X.dtype, what)


def _usa(num, log_scale, dtype, what):
    """USA field ``num_i * exp(log_scale_i)`` in ``dtype`` (overflow checked)."""
    return exp_scale(
        num,
        np.asarray(log_scale, dtype=np.float64)[..., None],
        what=what,
        hint=_USA_HINT,
        dtype=dtype,
    )


# ----------------------------------------------- fused identity Euler step
def scaled_state(
    Y: np.ndarray, beta: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""The state of :func:`euler_identity_steps`: rows :math:`[s\,y_i, 1]`.

    Parameters
    ----------
    Y : ndarray, shape (B, n, k)
        Unit rows (tokens, or their coordinates in an orthonormal basis of their
        span); float32 or float64.
    beta : ndarray, shape (B,)
        Inverse temperatures ``>= 0``.

    Returns
    -------
    Yx : ndarray, shape (B, n, k + 1)
        :math:`[s\,y_i, 1]`, dtype of ``Y``.
    s : ndarray, shape (B,)
        :math:`s = \sqrt{b}`.
    b : ndarray, shape (B,)
        :math:`b = \max(\beta, \varepsilon^2)` in the dtype of ``Y``: ``beta = 0``
        is integrated as :math:`\varepsilon^2`, whose weights
        :math:`e^{1 + \varepsilon^2 G}` round to ``e``, those of ``beta = 0``.
    """
    B, n, k = Y.shape
    dtype = Y.dtype
    eps = np.finfo(dtype).eps
    b = np.maximum(beta.astype(dtype), eps * eps)
    s = np.sqrt(b)
    Yx = np.empty((B, n, k + 1), dtype=dtype)
    np.multiply(Y, s[:, None, None], out=Yx[..., :k])
    Yx[..., k] = 1.0
    return Yx, s, b


def euler_identity_steps(
    Yx: np.ndarray,
    s: np.ndarray,
    b: np.ndarray,
    h: Any,
    steps: int,
    *,
    normalization: str = "sa",
    work: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    r"""``steps`` Euler steps with retraction for :math:`Q = K = V = I`, in place.

    The step of [GLPR]'s code, :math:`y_i \leftarrow R(y_i + h P_{y_i} v_i)` with
    :math:`v_i = \sum_j W_{ij} y_j` (SA weights :math:`e^{\beta\langle y_i, y_j
    \rangle} / Z_i`; USA :math:`/n`), on the scaled state of :func:`scaled_state`:

    * one product ``Yx Yx^T`` is :math:`\beta G + 1`; its exponential
      :math:`e^{1+\beta G}` differs from the weights by the factor ``e``, which SA's
      normalisation cancels (USA divides by ``e n``); it never overflows for
      :math:`1 + \beta + \log n` below :func:`attnlib._validation.log_max`;
    * one product ``W Yx`` gives both :math:`\sum_j W_{ij} s y_j` and the row sums
      :math:`Z_i` (the column of ones);
    * with :math:`c_i = \langle v_i, y_i\rangle`, the projected step followed by the
      retraction is :math:`y_i \leftarrow \pm(y_i + h v_i / (1 - h c_i))`
      normalised, with the sign of :math:`1 - h c_i` (always ``+`` for SA, where
      :math:`c_i \le 1`);
    * both products take contiguous operands (a transposed copy of ``Yx`` is made
      once per step: a transposed view halves the speed of batched ``matmul``).

    Parameters
    ----------
    Yx : ndarray, shape (B, n, k + 1)
        Scaled state (:func:`scaled_state`), advanced in place.
    s, b : ndarray, shape (B,)
        The scale :math:`s` and the effective :math:`\beta = s^2` of each member.
    h : float
        Step, a scalar of the dtype of ``Yx``.
    steps : int
    normalization : {"sa", "usa"}
    work : tuple of three ndarrays, optional
        Buffers of shapes ``(>= B, n, n)``, ``(>= B, n, k + 1)``,
        ``(>= B, k + 1, n)`` to reuse across calls.

    Returns
    -------
    ndarray, shape (B, n)
        :math:`Z_i(1 - h c_i)` of the last step (its sign tells a USA step that
        pointed backwards), or an empty array when ``steps == 0``.
    """
    B, n, k1 = Yx.shape
    k = k1 - 1
    dtype = Yx.dtype
    if work is None:
        work = (
            np.empty((B, n, n), dtype=dtype),
            np.empty((B, n, k1), dtype=dtype),
            np.empty((B, k1, n), dtype=dtype),
        )
    W, F, YT = work[0][:B], work[1][:B], work[2][:B]
    usa = normalization == "usa"
    if usa:
        usa_sum = dtype.type(np.e * n)
    hb = h / b
    den = np.empty((B, 0), dtype=dtype)
    for _ in range(steps):
        np.copyto(YT, _tr(Yx))
        np.matmul(Yx, YT, out=W)  # beta G + 1
        np.exp(W, out=W)
        np.matmul(W, Yx, out=F)  # [sum_j W_ij s y_j, Z_i]
        Zs = usa_sum if usa else F[..., k]
        # <sum_j W_ij s y_j, s y_i> = beta Zs c_i
        cs = np.einsum("bij,bij->bi", F[..., :k], Yx[..., :k])
        cs *= hb[:, None]
        # y + h v / (1 - h c), with v = F' / (s Zs)
        den = Zs - cs  # Zs (1 - h c)
        fac = h / den
        F *= fac[..., None]
        Yx += F
        nrm = np.einsum("bij,bij->bi", Yx[..., :k], Yx[..., :k])
        np.sqrt(nrm, out=nrm)
        np.divide(s[:, None], nrm, out=nrm)
        if usa:  # 1 - h c < 0 is possible: the step points the other way
            nrm *= np.sign(den)
        Yx *= nrm[..., None]
        Yx[..., k] = 1.0
    return den


def scaled_gram(Yx: np.ndarray, b: np.ndarray) -> np.ndarray:
    r"""Gram matrices :math:`G_{ij} = \langle y_i, y_j\rangle` of a scaled state.

    Parameters
    ----------
    Yx : ndarray, shape (B, n, k + 1)
    b : ndarray, shape (B,)
        Effective inverse temperatures (:func:`scaled_state`).

    Returns
    -------
    ndarray, shape (B, n, n)
    """
    Ys = Yx[..., :-1]
    G = Ys @ _tr(Ys)
    G /= b[:, None, None]
    return G


def unscaled(Yx: np.ndarray, s: np.ndarray) -> np.ndarray:
    """The unit rows :math:`y_i` of a scaled state, shape (B, n, k)."""
    return Yx[..., :-1] / s[:, None, None]
