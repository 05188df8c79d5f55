r"""Doubly stochastic attention: log-domain Sinkhorn iterations with Newton steps.

The Sinkhorn kernel of :class:`attnlib.Model` (``kernel="sinkhorn"``) replaces the
row normalisation of softmax attention by the entropic optimal-transport plan between
the tokens and themselves ([CACP] §2; Sander, Ablin, Blondel, Peyré, *Sinkformers*,
AISTATS 2022): :func:`sinkhorn` computes it from the logits in the log domain, where
plain iterations cannot overflow.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from ._lazy import special
from ._validation import check_int, check_real

__all__ = ["SinkhornResult", "SinkhornConvergenceWarning", "sinkhorn"]


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
    at ``max_iter`` with ``converged=False``. Logits spanning more than 50 (a plan
    close to a permutation, where the iterations crawl) that do not converge within
    100 iterations are solved by :math:`\varepsilon`-scaling instead (a sequence of
    easier plans, each starting from the previous one), which converges within a
    hundred iterations even at logits of size :math:`10^5`.

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
    if L0.shape[-1] == 0 or L0.size == 0:
        raise ValueError(f"logits must be non-empty, got shape {L0.shape}")
    if not np.issubdtype(L0.dtype, np.floating):
        L0 = L0.astype(np.float64)
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
    span = float(np.max(L0.max(axis=(-1, -2)) - L0.min(axis=(-1, -2))))
    # large logits: a short direct attempt (enough from a warm start), then
    # epsilon scaling
    budget = max_iter if span <= _SCALING_SPAN else min(max_iter, _DIRECT_BUDGET)
    L, col, err, g, n_iter = _solve(L0, g, tol, budget)
    if err > tol and span > _SCALING_SPAN and n_iter < max_iter:
        L, col, err, g, n_iter = _epsilon_scaling(L0, span, tol, max_iter - n_iter)
        n_iter += budget
    g = g - g.max(axis=-1, keepdims=True)
    return SinkhornResult(np.exp(L), n_iter, err <= tol, err, g)


def _solve(L0, g, tol, max_iter):
    """Row/column normalisations (then Newton steps) from the column potential g.

    Returns ``(log P, log column sums, error, g, iterations)``.
    """
    n = L0.shape[-1]

    def rows(g):
        M = L0 + g[..., None, :]
        M = M - special.logsumexp(M, axis=-1, keepdims=True)
        col = special.logsumexp(M, axis=-2)
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
    return L, col, err, g, n_iter


def _epsilon_scaling(L0, span, tol, budget):
    r"""The plan of ``L0`` from those of :math:`L_0/\lambda`, :math:`\lambda \to 1`.

    Large logits make the plan nearly a permutation, where Sinkhorn's iterations
    crawl (their number grows with the range of the logits). The plan of
    :math:`L_0/\lambda` is easy for :math:`\lambda` = range / 20, and its column
    potential times :math:`\lambda/\lambda'` is a close start for
    :math:`L_0/\lambda'`; :math:`\lambda` is divided by 4 per stage down to 1 (the
    :math:`arepsilon`-scaling of entropic transport solvers). Intermediate stages
    are solved to ``max(tol, 1e-6)``; the last to ``tol``; one iteration of the
    budget is kept for the last.
    """
    lam = span / 20.0
    g = np.zeros(L0.shape[:-1], dtype=L0.dtype)
    used = 0
    while True:
        last = lam == 1.0
        left = budget - used
        L, col, err, g, it = _solve(
            L0 / lam if not last else L0,
            g,
            tol if last else max(tol, 1e-6),
            left if last else max(1, left - 1),
        )
        used += it
        if last:
            return L, col, err, g, used
        nxt = 1.0 if used >= budget - 1 else max(1.0, lam / 4.0)
        g = g * (lam / nxt)
        lam = nxt


# Logits spanning more than this use epsilon scaling after _DIRECT_BUDGET direct
# iterations that did not converge.
_SCALING_SPAN = 50.0
_DIRECT_BUDGET = 100
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
