r"""Self-attention: attention matrices and velocity fields of the particle model.

The general model of [GLPR] (2.3) with query, key and value matrices and an
inverse temperature :math:`\beta \ge 0`:

.. math::

    \dot x_i = P_{x_i}\Big(\frac{1}{Z_i}\sum_{j=1}^n
        e^{\beta\langle Q x_i, K x_j\rangle} V x_j\Big),
    \qquad Z_i = \sum_{k=1}^n e^{\beta\langle Q x_i, K x_k\rangle},

with :math:`P_x y = y - \langle x, y\rangle x` when tokens live on the sphere
(layer normalisation) and no projection in :math:`\mathbb R^d`. USA replaces
:math:`Z_i` by :math:`n`. The [CACP] variants change the weight (L2, sigmoid), the
normalisation (Sinkhorn: doubly stochastic) or the support (causal mask).

Conventions (tested in ``tests/test_attention.py``):

* ``kernel="softmax"``: weight :math:`e^{\beta\langle Qx_i, Kx_j\rangle}` (no
  :math:`1/\sqrt{d_k}`; put it in ``beta``).
* ``kernel="l2"``: weight :math:`e^{-\beta|Qx_i - Kx_j|^2/2}` ([Kim et al.] up to the
  scaling, which is ``beta``).
* ``kernel="sigmoid"``: weight :math:`\sigma(\beta\langle Qx_i,Kx_j\rangle + b)`;
  with ``normalization="usa"`` divided by :math:`n`, with ``"sa"`` by the row sum.
  The SA weights are ratios :math:`\sigma(s_{ij}) / \sum_k \sigma(s_{ik})` of
  positive numbers, computed from :math:`\log\sigma` (log-sum-exp), so they stay
  exact when every :math:`\sigma` of a row underflows (a large negative bias):
  since :math:`\sigma(s) \sim e^{s}` as :math:`s \to -\infty`, they then tend
  to the softmax of the pre-activations.
* USA weights are formed with the row maximum subtracted and scaled back at the
  end; the result is returned if it is finite in the dtype of ``X`` and a
  ``ValueError`` is raised otherwise (float32 holds :math:`e^{x}` up to
  :math:`x \approx 88.7`, float64 up to :math:`709.8`).
* ``kernel="sinkhorn"``: the entropic optimal-transport plan (:math:`\varepsilon=1`)
  for the cost :math:`-\beta\langle Qx_i, Kx_j\rangle` with uniform marginals,
  scaled by :math:`n` so that rows and columns sum to one; computed by log-domain
  Sinkhorn iterations starting with a row normalisation, so that one iteration is
  the softmax.
* ``mask="causal"``: token ``i`` attends to ``j <= i`` only (lower-triangular
  attention); with ``"usa"`` the masked sum is still divided by :math:`n`.
* Multi-head ([GLPR] (2.7)): the velocity is the sum over heads of the single-head
  terms, each head normalised on its own.

Shapes: ``X`` is ``(n, d)`` for one configuration or ``(B, n, d)`` for an ensemble
of ``B`` independent systems; ``beta`` may be an array ``(B,)`` for an ensemble.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.special import expit, log_expit, logsumexp

from ._validation import (
    as_beta,
    as_matrix,
    as_states,
    check_choice,
    check_int,
    check_real,
    check_unit_norm,
    exp_scale,
    log_max,
)

__all__ = [
    "Model",
    "SinkhornResult",
    "attention_matrix",
    "velocity",
    "sinkhorn",
    "KERNELS",
    "NORMALIZATIONS",
]

KERNELS = ("softmax", "l2", "sigmoid", "sinkhorn")
NORMALIZATIONS = ("sa", "usa")
MASKS = (None, "causal")
# Ensemble members are processed in chunks holding at most this many kernel entries.
_CHUNK_ENTRIES = 1 << 21


class SinkhornConvergenceWarning(RuntimeWarning):
    """Sinkhorn iterations stopped at the cap before reaching the tolerance."""


@dataclass(frozen=True)
class SinkhornResult:
    r"""Result of :func:`sinkhorn`.

    Attributes
    ----------
    matrix : ndarray, shape (n, n) or (B, n, n)
        Row-stochastic matrix whose columns sum to one within ``error``.
    n_iter : int
        Number of row normalisations performed (1 = softmax).
    converged : bool
        Whether the largest column-sum error fell below the tolerance.
    error : float
        Largest ``|column sum - 1|`` at exit.
    log_scaling : ndarray, shape (n,) or (B, n)
        Column log-scaling :math:`g` (defined up to a constant): the plan is
        :math:`P_{ij} \propto e^{L_{ij} + f_i + g_j}`. Passing it back as ``init``
        warm-starts the next solve.
    """

    matrix: np.ndarray = field(repr=False)
    n_iter: int
    converged: bool
    error: float
    log_scaling: np.ndarray = field(repr=False, default=None)


def sinkhorn(
    logits: np.ndarray,
    *,
    tol: float = 1e-12,
    max_iter: int = 1000,
    init: np.ndarray | None = None,
) -> SinkhornResult:
    r"""Doubly stochastic normalisation of ``exp(logits)`` in the log domain.

    Alternates row and column normalisations of :math:`\log P`, starting and ending
    with a row normalisation, until every column sum is within ``tol`` of one. For
    ``n <= 1024``, after 20 plain iterations the column potential is updated by damped
    Newton steps instead (each counted as one iteration), which converge
    quadratically where plain iterations crawl (clustered tokens, large ``beta``).
    The Newton system is regularised (its matrix is positive semi-definite and
    nearly singular when the plan is close to a permutation, e.g. isolated tokens at
    large ``beta``); a step that cannot be computed or does not reduce the error
    hands over to plain iterations, so the solve never fails: it ends converged or
    at ``max_iter`` with ``converged=False``.

    Parameters
    ----------
    logits : ndarray, shape (n, n) or (B, n, n)
        Finite log-weights (for attention, :math:`\beta\langle Qx_i, Kx_j\rangle`).
    tol : float
        Tolerance on ``max |column sum - 1|``.
    max_iter : int
        Cap on the number of row normalisations; ``max_iter=1`` gives the softmax
        (without ``init``).
    init : ndarray of shape (n,) or (B, n), optional
        Initial column log-scaling, e.g. ``log_scaling`` of a previous solve for a
        nearby configuration (warm start along a trajectory). The fixed point does not
        depend on it; the number of iterations does.

    Returns
    -------
    SinkhornResult

    References
    ----------
    Sander, Ablin, Blondel, Peyré, *Sinkformers* (AISTATS 2022).

    Examples
    --------
    >>> import numpy as np
    >>> r = sinkhorn(np.array([[0.0, 1.0], [2.0, 0.5]]))
    >>> r.converged, np.allclose(r.matrix.sum(0), 1.0)
    (True, True)
    """
    L0 = np.asarray(logits)
    if L0.ndim not in (2, 3) or L0.shape[-1] != L0.shape[-2]:
        raise ValueError(f"logits must have shape (n, n) or (B, n, n), got {L0.shape}")
    if not np.all(np.isfinite(L0)):
        raise ValueError("logits must be finite")
    tol = check_real(tol, "tol", low=0.0, strict_low=True)
    max_iter = check_int(max_iter, "max_iter", low=1)
    n = L0.shape[-1]
    g = np.zeros(L0.shape[:-2] + (n,), dtype=L0.dtype)
    if init is not None:
        init = np.asarray(init, dtype=L0.dtype)
        if init.shape != g.shape or not np.all(np.isfinite(init)):
            raise ValueError(
                f"init must be a finite array of shape {g.shape}, got {init.shape}"
            )
        g = init - init.max(axis=-1, keepdims=True)

    def rows(g):
        M = L0 + g[..., None, :]
        M = M - logsumexp(M, axis=-1, keepdims=True)
        col = logsumexp(M, axis=-2)
        return M, col, float(np.max(np.abs(np.expm1(col))))

    L, col, err = rows(g)
    n_iter = 1
    newton = n <= _NEWTON_MAX_N
    while err > tol and n_iter < max_iter:
        n_iter += 1
        if newton and n_iter > _NEWTON_AFTER:
            step = _newton_step(L, col)
            if step is None:  # the linear system could not be solved
                newton = False
                continue
            for _ in range(6):  # damped: halve until the column error decreases
                trial = rows(g + step)
                if trial[2] < err:
                    g = g + step
                    L, col, err = trial
                    break
                step = 0.5 * step
            else:
                newton = False  # no progress: continue with plain iterations
            continue
        g = g - col
        L, col, err = rows(g)
    g = g - g.max(axis=-1, keepdims=True)
    return SinkhornResult(np.exp(L), n_iter, err <= tol, err, g)


# Sinkhorn switches to Newton steps on the column potential after this many plain
# iterations, for n up to _NEWTON_MAX_N (each step solves an n x n linear system).
_NEWTON_AFTER = 20
_NEWTON_MAX_N = 1024


def _newton_step(L, col):
    r"""Newton step for the column potential :math:`g` of a row-normalised plan.

    With rows normalised, the column sums :math:`c_j(g) = \sum_i P_{ij}` have Jacobian
    :math:`\partial c / \partial g = \mathrm{diag}(c) - P^\top P`, singular along the
    constants (the gauge :math:`g + t`); adding :math:`\mathbf 1\mathbf 1^\top / n`
    fixes the gauge. The Jacobian is positive semi-definite (Jensen's inequality on
    each row) and nearly singular when the plan splits into almost independent
    blocks (a near-permutation at large ``beta``): one gauge per block. The step
    solves :math:`(J + \delta I)\,\delta g = 1 - c` with
    :math:`\delta = \max(10^{-12}, n\,\varepsilon)`, which leaves the well-conditioned
    directions unchanged and damps the near-gauges, whose residuals are as small as
    the couplings. Returns ``None`` if the system cannot be solved or the step is not
    finite (the caller then continues with plain iterations).
    """
    P = np.exp(L)
    c = np.exp(col)
    n = P.shape[-1]
    J = -np.swapaxes(P, -1, -2) @ P + 1.0 / n
    idx = np.arange(n)
    J[..., idx, idx] += c + max(1e-12, n * float(np.finfo(P.dtype).eps))
    try:
        step = np.linalg.solve(J, (1.0 - c)[..., None])[..., 0]
    except np.linalg.LinAlgError:
        return None
    return step if np.all(np.isfinite(step)) else None


def _identity_or(m, name, shape):
    return None if m is None else as_matrix(m, name, shape=shape)


@dataclass(frozen=True, eq=False)
class Model:
    r"""A self-attention dynamics: the right-hand side of the particle system.

    Parameters
    ----------
    beta : float or ndarray of shape (B,)
        Inverse temperature ``>= 0``. An array gives one value per ensemble member.
    Q, K : ndarray of shape (m, d), optional
        Query and key matrices (identity if omitted).
    V : ndarray of shape (d, d), optional
        Value matrix (identity if omitted).
    heads : sequence of (Q_h, K_h, V_h), optional
        Multi-head attention; each entry may use ``None`` for an identity. Exclusive
        with ``Q``, ``K``, ``V``.
    normalization : {"sa", "usa"}
        Divide by :math:`Z_i` (SA) or by :math:`n` (USA).
    kernel : {"softmax", "l2", "sigmoid", "sinkhorn"}
        Attention variant (see the module docstring for each convention).
    mask : {None, "causal"}
        Causal (lower-triangular) masking.
    sphere : bool
        Tokens on the unit sphere (layer normalisation, velocity projected on the
        tangent space) or in :math:`\mathbb R^d`.
    bias : float
        Bias ``b`` of the sigmoid kernel.
    sinkhorn_tol, sinkhorn_max_iter
        Tolerance and iteration cap of the Sinkhorn kernel.
    sinkhorn_warm_start : bool
        Start each Sinkhorn solve from the column scaling of the previous solve of the
        same shape (when ``sinkhorn_max_iter > 1``). Along a trajectory consecutive
        plans are close, so this cuts the iterations by orders of magnitude; the
        result agrees with a cold start within ``sinkhorn_tol``.
    block : int
        Tile size of the block-tiled evaluation: memory is ``O(n * block)``.

    Examples
    --------
    >>> import numpy as np
    >>> from attnlib import Model, sample_sphere
    >>> X = sample_sphere(8, 3, rng=0)
    >>> v = Model(beta=1.0).velocity(X)
    >>> v.shape, bool(np.allclose(np.sum(v * X, axis=1), 0))
    ((8, 3), True)
    """

    beta: Any = 1.0
    Q: Any = field(default=None, repr=False)
    K: Any = field(default=None, repr=False)
    V: Any = field(default=None, repr=False)
    heads: Any = field(default=None, repr=False)
    normalization: str = "sa"
    kernel: str = "softmax"
    mask: str | None = None
    sphere: bool = True
    bias: float = 0.0
    sinkhorn_tol: float = 1e-12
    sinkhorn_max_iter: int = 1000
    sinkhorn_warm_start: bool = True
    block: int = 256

    def __post_init__(self) -> None:
        check_choice(self.normalization, "normalization", NORMALIZATIONS)
        check_choice(self.kernel, "kernel", KERNELS)
        check_choice(self.mask, "mask", MASKS)
        for flag in ("sphere", "sinkhorn_warm_start"):
            if not isinstance(getattr(self, flag), (bool, np.bool_)):
                raise TypeError(f"{flag} must be a bool, got {getattr(self, flag)!r}")
        check_real(self.bias, "bias")
        check_real(self.sinkhorn_tol, "sinkhorn_tol", low=0.0, strict_low=True)
        check_int(self.sinkhorn_max_iter, "sinkhorn_max_iter", low=1)
        check_int(self.block, "block", low=1)
        if np.ndim(self.beta) == 0:
            object.__setattr__(self, "beta", check_real(self.beta, "beta", low=0.0))
        else:
            object.__setattr__(
                self, "beta", as_beta(self.beta, len(np.ravel(self.beta)))
            )
        if self.kernel == "sinkhorn":
            if self.normalization != "sa":
                raise ValueError(
                    "normalization must be 'sa' for kernel='sinkhorn' (the plan is "
                    "doubly "
                    f"stochastic), got {self.normalization!r}"
                )
            if self.mask is not None:
                raise ValueError("mask='causal' is not defined for kernel='sinkhorn'")
        if self.heads is not None:
            if any(m is not None for m in (self.Q, self.K, self.V)):
                raise ValueError("give either heads or Q, K, V, not both")
            try:
                raw = [tuple(h) for h in self.heads]
            except TypeError as exc:
                raise TypeError(
                    "heads must be a sequence of (Q, K, V) triples"
                ) from exc
            if len(raw) == 0 or any(len(h) != 3 for h in raw):
                raise ValueError(
                    "heads must be a non-empty sequence of (Q, K, V) triples"
                )
        else:
            raw = [(self.Q, self.K, self.V)]
        heads = []
        d_seen: set[int] = set()
        for h, (q, k, v) in enumerate(raw):
            sfx = "" if self.heads is None else f" of head {h}"
            q = _identity_or(q, "Q" + sfx, None)
            k = _identity_or(k, "K" + sfx, None)
            v = _identity_or(v, "V" + sfx, None)
            if q is not None and k is not None and q.shape != k.shape:
                raise ValueError(
                    f"Q{sfx} and K{sfx} must have the same shape (m, d), got {q.shape} "
                    f"and {k.shape}"
                )
            if (q is None) != (k is None) and (q if q is not None else k).shape[0] != (
                q if q is not None else k
            ).shape[1]:
                raise ValueError(
                    f"Q{sfx} and K{sfx}: a rectangular (m, d) matrix needs a partner "
                    "of "
                    "the same shape (the identity is d x d)"
                )
            if v is not None and v.shape[0] != v.shape[1]:
                raise ValueError(f"V{sfx} must be square (d, d), got shape {v.shape}")
            for m in (q, k):
                if m is not None:
                    d_seen.add(m.shape[1])
            if v is not None:
                d_seen.add(v.shape[0])
            heads.append((q, k, v))
        if len(d_seen) > 1:
            raise ValueError(
                f"Q, K, V have inconsistent token dimensions d: {sorted(d_seen)}"
            )
        object.__setattr__(self, "_heads", tuple(heads))
        object.__setattr__(self, "_sinkhorn_init", {})
        object.__setattr__(self, "_d", d_seen.pop() if d_seen else None)

    # ------------------------------------------------------------------ checks
    def _check(self, X: Any) -> tuple[np.ndarray, Any]:
        X = as_states(X, "X")
        if self._d is not None and X.shape[-1] != self._d:
            raise ValueError(
                f"X has token dimension d={X.shape[-1]} but Q, K, V are for d={self._d}"
            )
        if self.sphere:
            check_unit_norm(X, "X")
        batch = X.shape[0] if X.ndim == 3 else None
        if np.ndim(self.beta) > 0 and batch is None:
            raise ValueError(
                f"beta has shape {np.shape(self.beta)}: X must be an ensemble (B, n, d)"
            )
        beta = as_beta(self.beta, batch)
        return X, beta

    @property
    def n_heads(self) -> int:
        return len(self._heads)

    # ---------------------------------------------------------------- matrices
    def attention(self, X: np.ndarray) -> np.ndarray:
        """Attention matrix of the configuration ``X``.

        Returns
        -------
        ndarray, shape (n, n) or (B, n, n); with several heads, a leading head axis
        ``(H, n, n)`` or ``(H, B, n, n)``. Rows sum to one for SA (and for every
        Sinkhorn row and column); for USA the entries are the weights divided by n.
        """
        X, beta = self._check(X)
        mats = [self._head_matrix(X, beta, h) for h in self._heads]
        return mats[0] if len(mats) == 1 else np.stack(mats)

    def _logits(self, X, beta, head, rows=slice(None)):
        """Log-weights (or sigmoid pre-activations) of the given rows: (..., r, n)."""
        q, k, _ = head
        Xr = X[..., rows, :]
        b = beta if np.ndim(beta) == 0 else np.asarray(beta).reshape(-1, 1, 1)
        QX = Xr if q is None else Xr @ q.T
        KX = X if k is None else X @ k.T
        if self.kernel == "l2":
            sq = (
                np.sum(QX * QX, axis=-1)[..., :, None]
                + np.sum(KX * KX, axis=-1)[..., None, :]
                - 2.0 * (QX @ np.swapaxes(KX, -1, -2))
            )
            return -0.5 * b * np.maximum(sq, 0.0)
        S = b * (QX @ np.swapaxes(KX, -1, -2))
        if self.kernel == "sigmoid":
            S = S + self.bias
        return S

    def _causal(self, rows, n):
        r = np.arange(n)[rows]
        keep = np.arange(n)[None, :] <= r[:, None]
        return keep

    def _weights(self, L, keep, n):
        """Turn logits of some rows into attention weights ``W * exp(log_scale)``.

        Returns ``(W, log_scale)``: ``log_scale`` is ``None`` when ``W`` holds the
        weights themselves, and a column ``(..., r, 1)`` for USA softmax-type weights,
        which are formed with the row maximum subtracted so that nothing overflows
        before the (checked) final scaling.
        """
        if self.kernel == "sigmoid":
            if self.normalization == "sa":
                # sigma(L_ij) / sum_k sigma(L_ik) in the log domain: finite and exact
                # even when every sigma of a row underflows (softmax of L in the limit)
                W = log_expit(L)
                if keep is not None:
                    W = np.where(keep, W, -np.inf)
                W -= W.max(axis=-1, keepdims=True)
                np.exp(W, out=W)
                return W / W.sum(axis=-1, keepdims=True), None
            W = expit(L)
            if keep is not None:
                W = np.where(keep, W, 0.0)
            return W / n, None
        if keep is not None:
            L = np.where(keep, L, -np.inf)
        m = L.max(axis=-1, keepdims=True)
        W = np.exp(L - m)
        if self.normalization == "sa":
            return W / W.sum(axis=-1, keepdims=True), None
        return W, m - np.log(n)

    def _usa_scale(self, values, log_scale, what, dtype):
        """``values * exp(log_scale)`` in ``dtype``, with the overflow check."""
        return exp_scale(
            values,
            log_scale,
            what=what,
            hint="use normalization='sa', a smaller beta or float64",
            dtype=dtype,
        )

    def _head_matrix(self, X, beta, head):
        n = X.shape[-2]
        L = self._logits(X, beta, head)
        if self.kernel == "sinkhorn":
            warm = self.sinkhorn_warm_start and self.sinkhorn_max_iter > 1
            key = (id(head), L.shape)
            res = sinkhorn(
                L,
                tol=self.sinkhorn_tol,
                max_iter=self.sinkhorn_max_iter,
                init=self._sinkhorn_init.get(key) if warm else None,
            )
            if warm:
                self._sinkhorn_init[key] = res.log_scaling
            if not res.converged:
                warnings.warn(
                    f"Sinkhorn stopped after {res.n_iter} iterations with column error "
                    f"{res.error:.2e} > sinkhorn_tol={self.sinkhorn_tol:g}",
                    SinkhornConvergenceWarning,
                    stacklevel=3,
                )
            return res.matrix
        keep = self._causal(slice(None), n) if self.mask == "causal" else None
        W, log_scale = self._weights(L, keep, n)
        if log_scale is None:
            return W
        return self._usa_scale(W, log_scale, "the USA attention matrix", X.dtype)

    # ---------------------------------------------------------------- velocity
    def velocity(self, X: np.ndarray) -> np.ndarray:
        """Velocity field of the dynamics at ``X`` (same shape as ``X``).

        Evaluated without an ``n x n`` temporary: row blocks of size ``block`` (and
        symmetric tiles, each used for its rows and its columns, for the softmax
        kernel with a symmetric positive semi-definite ``Q^T K``), except for the
        Sinkhorn kernel, whose plan needs the whole matrix.
        """
        X, beta = self._check(X)
        return self._field(X, beta)

    def rhs(self, X: np.ndarray) -> np.ndarray:
        r"""The velocity field without input validation, for integrators.

        ``X`` may lie slightly off the sphere (Runge–Kutta stages): the field is then
        the natural extension :math:`P_x y = y - \langle x, y\rangle x` of the
        formula. Use :meth:`velocity` for user input.
        """
        batch = X.shape[0] if X.ndim == 3 else None
        return self._field(X, as_beta(self.beta, batch))

    def _field(self, X, beta):
        out = np.zeros_like(X)
        for head in self._heads:
            out += self._head_velocity(X, beta, head)
        if self.sphere:
            out -= np.sum(out * X, axis=-1, keepdims=True) * X
        if not np.all(np.isfinite(out)):
            raise ValueError(
                f"the velocity field overflows {out.dtype} for these states (the sum "
                "over heads or the projection is not finite); use float64, a smaller "
                "beta or normalization='sa'"
            )
        return out

    def _head_velocity(self, X, beta, head):
        q, k, v = head
        XV = X if v is None else X @ v.T
        if self.kernel == "sinkhorn":
            return self._head_matrix(X, beta, head) @ XV
        if self.kernel == "softmax" and self.mask is None:
            A = _symmetric_psd_product(q, k)
            if A is not None:
                fast = _symmetric_velocity(
                    X, XV, beta, A, self.normalization, self.block
                )
                if fast is not None:
                    return fast
        return self._blocked_velocity(X, XV, beta, head)

    def _blocked_velocity(self, X, XV, beta, head):
        n = X.shape[-2]
        out = np.empty_like(XV)
        if X.ndim == 3:
            step = max(1, _CHUNK_ENTRIES // (n * n))
            if n <= self.block:
                for s in range(0, X.shape[0], step):
                    sl = slice(s, s + step)
                    bs = beta if np.ndim(beta) == 0 else beta[sl]
                    out[sl] = self._rows_velocity(X[sl], XV[sl], bs, head, slice(None))
                return out
            for b in range(X.shape[0]):
                bs = beta if np.ndim(beta) == 0 else float(beta[b])
                out[b] = self._blocked_velocity(X[b], XV[b], bs, head)
            return out
        for s in range(0, n, self.block):
            rows = slice(s, min(n, s + self.block))
            out[rows] = self._rows_velocity(X, XV, beta, head, rows)
        return out

    def _rows_velocity(self, X, XV, beta, head, rows):
        n = X.shape[-2]
        L = self._logits(X, beta, head, rows)
        keep = self._causal(rows, n) if self.mask == "causal" else None
        W, log_scale = self._weights(L, keep, n)
        if log_scale is None:
            return W @ XV
        return self._usa_scale(W @ XV, log_scale, "the USA velocity", X.dtype)


def _symmetric_psd_product(q, k):
    """``Q^T K`` if it is symmetric positive semi-definite (identity: None->eye)."""
    if q is None and k is None:
        return "identity"
    qm = q if q is not None else np.eye(k.shape[1])
    km = k if k is not None else np.eye(q.shape[1])
    A = qm.T @ km
    scale = max(1.0, float(np.max(np.abs(A))))
    if np.max(np.abs(A - A.T)) > 1e-13 * scale:
        return None
    A = 0.5 * (A + A.T)
    if np.min(np.linalg.eigvalsh(A)) < -1e-12 * scale:
        return None
    return A


def _symmetric_velocity(X, XV, beta, A, normalization, block):
    r"""Block-tiled evaluation of the softmax field for a symmetric PSD ``A = Q^T K``.

    With :math:`c_i = \tfrac{\beta}{2} x_i^\top A x_i`, Cauchy–Schwarz gives
    :math:`\beta x_i^\top A x_j - c_i - c_j \le 0` with equality on the diagonal, so
    the shifted kernel :math:`W_{ij} = e^{\beta x_i^\top A x_j - c_i - c_j}` is
    symmetric, bounded by one and has unit diagonal. Each tile ``(I, J)`` with
    ``I <= J`` is exponentiated once and used for the rows of ``I`` and of ``J``.
    Returns ``None`` when the factors :math:`e^{c_j}` span more than the range of the
    dtype (:func:`attnlib._validation.log_max`; the caller then uses the row-max
    evaluation).
    """
    if X.ndim == 3:
        B, n, d = X.shape
        out = np.empty_like(XV)
        if n <= block:
            step = max(1, _CHUNK_ENTRIES // (n * n))
            for s in range(0, B, step):
                sl = slice(s, s + step)
                bs = beta if np.ndim(beta) == 0 else np.asarray(beta)[sl]
                r = _dense_symmetric(X[sl], XV[sl], bs, A, normalization)
                if r is None:
                    return None
                out[sl] = r
            return out
        for b in range(B):
            bs = beta if np.ndim(beta) == 0 else float(beta[b])
            r = _symmetric_velocity(X[b], XV[b], bs, A, normalization, block)
            if r is None:
                return None
            out[b] = r
        return out
    n, d = X.shape
    if n <= block:
        return _dense_symmetric(X, XV, beta, A, normalization)
    beta = float(beta)
    Y = X if isinstance(A, str) else X @ A
    c = 0.5 * beta * np.sum(Y * X, axis=1)
    spread = float(c.max() - c.min())
    if spread > log_max(X.dtype):
        return None
    g = np.exp(c - c.max())
    dt = X.dtype
    Z = np.empty((n, XV.shape[1] + 1), dtype=dt)
    Z[:, :-1] = XV * g[:, None]
    Z[:, -1] = g
    acc = np.zeros_like(Z)
    bY = beta * Y
    XT = np.ascontiguousarray(X.T)
    starts = list(range(0, n, block))
    tile = np.empty((block, block), dtype=dt)
    for a, s in enumerate(starts):
        rows = slice(s, min(n, s + block))
        for t in starts[a:]:
            cols = slice(t, min(n, t + block))
            T = tile[: rows.stop - rows.start, : cols.stop - cols.start]
            np.matmul(bY[rows], XT[:, cols], out=T)
            T -= c[rows, None]
            T -= c[None, cols]
            np.exp(T, out=T)
            acc[rows] += T @ Z[cols]
            if t != s:
                acc[cols] += T.T @ Z[rows]
    num, den = acc[:, :-1], acc[:, -1:]
    if normalization == "sa":
        return num / den
    return _usa_velocity(num, c + c.max() - np.log(n), X.dtype)


def _dense_symmetric(X, XV, beta, A, normalization):
    """Dense version of :func:`_symmetric_velocity` for small ``n`` (or an ensemble)."""
    n = X.shape[-2]
    Y = X if isinstance(A, str) else X @ A
    b = beta if np.ndim(beta) == 0 else np.asarray(beta, dtype=X.dtype).reshape(-1, 1)
    c = 0.5 * b * np.sum(Y * X, axis=-1)
    cmax = c.max(axis=-1, keepdims=True)
    if float(np.max(cmax - c.min(axis=-1, keepdims=True))) > log_max(X.dtype):
        return None
    bb = b if np.ndim(beta) == 0 else b[..., None]
    T = bb * (Y @ np.swapaxes(X, -1, -2))
    T -= c[..., :, None]
    T -= c[..., None, :]
    np.exp(T, out=T)
    g = np.exp(c - cmax)
    num = T @ (XV * g[..., None])
    den = T @ g[..., None]
    if normalization == "sa":
        return num / den
    return _usa_velocity(num, c + cmax - np.log(n), X.dtype)


def _usa_velocity(num, log_scale, dtype):
    """USA velocity ``num_i * exp(log_scale_i)`` in ``dtype`` (overflow checked)."""
    return exp_scale(
        num,
        np.asarray(log_scale, dtype=np.float64)[..., None],
        what="the USA velocity",
        hint="use normalization='sa', a smaller beta or float64",
        dtype=dtype,
    )


def attention_matrix(X: np.ndarray, **model: Any) -> np.ndarray:
    """Attention matrix of ``X`` for ``Model(**model)``; see :meth:`Model.attention`.

    Examples
    --------
    >>> import numpy as np
    >>> from attnlib import sample_sphere
    >>> A = attention_matrix(sample_sphere(4, 3, rng=1), beta=2.0)
    >>> bool(np.allclose(A.sum(axis=1), 1.0))
    True
    """
    return Model(**model).attention(X)


def velocity(X: np.ndarray, **model: Any) -> np.ndarray:
    """Velocity field at ``X`` for ``Model(**model)``; see :meth:`Model.velocity`."""
    return Model(**model).velocity(X)
