r"""Clustering of self-attention dynamics: ensembles, phase diagrams, Wendel, sweeps.

The tools behind [GLPR] §4–6 and Figs 3–5:

* :func:`simulate_ensemble` integrates ``B`` independent systems at once with explicit
  Euler steps followed by the retraction :math:`x \mapsto x/|x|` (the scheme of the
  reference code), records Gram-matrix observables on the fly
  (:class:`PairFraction`, :class:`ClusterCount`, :class:`InnerProductHistogram`,
  :class:`Energy`) and never stores the trajectory.
* :func:`phase_diagram` estimates
  :math:`P(\langle x_i(t), x_j(t)\rangle \ge 1-\delta)` over a grid
  of :math:`(t, \beta)`; :func:`phase_transition_curve` is the curve
  :math:`\Gamma = \{(t,\beta) : \gamma_\beta(t) = 1-\delta\}` of the equiangular ODE.
* :func:`random_qkv` draws the random query, key and value matrices of [GLPR] Fig 5.
* :func:`wendel_probability` and :func:`hemisphere_probability_mc`: [GLPR] Thm 6.7.
* :func:`sweep` maps a function over parameters, serially or on any
  :class:`concurrent.futures.Executor`, with per-task seeds from
  :class:`numpy.random.SeedSequence` so that every executor gives the same arrays.

The span trick. With :math:`Q=K=V=I` every velocity :math:`\dot x_i` is a combination
of :math:`x_1,\dots,x_n`, and so is every Euler step and its retraction: the
configuration stays in the span of the initial tokens. For :math:`d > n`,
:func:`simulate_ensemble` therefore integrates the coordinates :math:`Y = X_0 U` of the
tokens in an orthonormal basis :math:`U` of that span (dimension ``n`` instead of
``d``) and maps back with :math:`X = Y U^\top`; in exact arithmetic the result is the
same, and the cost no longer depends on ``d``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field
from fractions import Fraction
from types import MappingProxyType
from typing import Any

import numpy as np

from ._validation import (
    as_beta,
    as_matrix,
    as_states,
    check_choice,
    check_int,
    check_real,
    check_rng,
    check_steps,
    check_unit_norm,
    exp_scale,
    log_max,
)
from .equiangular import equiangular_time_to
from .integrate import MAX_STEPS, check_observables, output_times, planned_steps
from .sphere import retract, sample_sphere

__all__ = [
    "EnsembleResult",
    "simulate_ensemble",
    "PairFraction",
    "ClusterCount",
    "InnerProductHistogram",
    "Energy",
    "cluster_count_from_gram",
    "QKV_KINDS",
    "VALUE_KINDS",
    "random_qkv",
    "phase_transition_curve",
    "PhaseDiagram",
    "phase_diagram",
    "wendel_probability",
    "HemisphereEstimate",
    "hemisphere_probability_mc",
    "in_hemisphere",
    "sweep",
]


# --------------------------------------------------------------------- observables
def _check_gram(G: Any) -> np.ndarray:
    G = np.asarray(G)
    if G.ndim not in (2, 3) or G.shape[-1] != G.shape[-2]:
        raise ValueError(f"G must have shape (n, n) or (B, n, n), got {G.shape}")
    return G


@dataclass(frozen=True)
class PairFraction:
    r"""Fraction of pairs :math:`i<j` with :math:`\langle x_i, x_j\rangle \ge 1-\delta`.

    By exchangeability of i.i.d. initial tokens, its ensemble mean estimates the
    probability :math:`P(\langle x_1(t), x_2(t)\rangle \ge 1-\delta)` of [GLPR] Fig 3
    (with less variance than the first pair alone).

    Called on a Gram matrix ``G`` of shape ``(B, n, n)``, returns shape ``(B,)``.
    """

    delta: float = 1e-3

    def __post_init__(self) -> None:
        check_real(self.delta, "delta", low=0.0, high=2.0)

    def __call__(self, G: np.ndarray, beta: Any = None) -> np.ndarray:
        G = _check_gram(G)
        n = G.shape[-1]
        if n == 1:
            return np.ones(G.shape[:-2])
        close = (G >= 1.0 - self.delta).sum(axis=(-1, -2)) - n  # off-diagonal pairs x 2
        return close / (n * (n - 1))


def cluster_count_from_gram(G: np.ndarray, delta: float = 1e-3) -> np.ndarray:
    r"""Number of clusters from Gram matrices, vectorised over the ensemble.

    Same rule as :func:`attnlib.cluster_count`: clusters are the connected components
    of the graph :math:`\{\langle x_i,x_j\rangle > 1-\delta\}`. The reachability matrix
    :math:`R` is obtained by :math:`\lceil\log_2 n\rceil` Boolean squarings of the
    adjacency matrix, and the count is :math:`\sum_i 1/|C(i)|` where
    :math:`|C(i)| = \sum_j R_{ij}` is the size of the component of ``i``.

    Parameters
    ----------
    G : ndarray, shape (n, n) or (B, n, n)
    delta : float

    Returns
    -------
    int or ndarray of int, shape (B,)

    Examples
    --------
    >>> import numpy as np
    >>> cluster_count_from_gram(np.array([[1.0, 1.0, -1.0], [1.0, 1.0, -1.0],
    ...                                   [-1.0, -1.0, 1.0]]))
    2
    """
    G = _check_gram(G)
    delta = check_real(delta, "delta", low=0.0, high=2.0)
    n = G.shape[-1]
    R = (G > 1.0 - delta).astype(np.float32)
    idx = np.arange(n)
    R[..., idx, idx] = 1.0
    for _ in range(max(1, math.ceil(math.log2(max(n, 2))))):
        R = ((R @ R) > 0).astype(np.float32)
    count = np.rint(np.sum(1.0 / R.sum(axis=-1), axis=-1)).astype(np.int64)
    return int(count) if G.ndim == 2 else count


@dataclass(frozen=True)
class ClusterCount:
    r"""Number of clusters: components of :math:`\langle x_i,x_j\rangle > 1-\delta`."""

    delta: float = 1e-3

    def __post_init__(self) -> None:
        check_real(self.delta, "delta", low=0.0, high=2.0)

    def __call__(self, G: np.ndarray, beta: Any = None) -> np.ndarray:
        return cluster_count_from_gram(G, self.delta)


@dataclass(frozen=True)
class InnerProductHistogram:
    r"""Histogram of the inner products :math:`\langle x_i,x_j\rangle`, :math:`i<j`.

    Parameters
    ----------
    bins : int
        Number of equal bins on ``[-1, 1]``; called on ``(B, n, n)`` Gram matrices,
        returns the counts of each member, shape ``(B, bins)`` (sum over the first
        axis for the pooled histogram of the ensemble).
    """

    bins: int = 40

    def __post_init__(self) -> None:
        check_int(self.bins, "bins", low=1)

    @property
    def edges(self) -> np.ndarray:
        return np.linspace(-1.0, 1.0, self.bins + 1)

    def __call__(self, G: np.ndarray, beta: Any = None) -> np.ndarray:
        G = _check_gram(G)
        n = G.shape[-1]
        iu = np.triu_indices(n, 1)
        vals = G[..., iu[0], iu[1]]  # (B, P) or (P,)
        k = np.clip(
            ((vals + 1.0) * (self.bins / 2.0)).astype(np.int64), 0, self.bins - 1
        )
        flat = k.reshape(-1, k.shape[-1])
        off = np.arange(flat.shape[0])[:, None] * self.bins
        counts = np.bincount((flat + off).ravel(), minlength=flat.shape[0] * self.bins)
        counts = counts.reshape(flat.shape[0], self.bins)
        return counts[0] if G.ndim == 2 else counts


@dataclass(frozen=True)
class Energy:
    r"""Energy :math:`E_\beta = \frac{1}{2\beta n^2}\sum_{ij} e^{\beta G_{ij}}`.

    The normalisation of :func:`attnlib.energy`. Called as ``Energy()(G, beta)``
    with ``beta > 0`` a float or an array ``(B,)`` matching ``G`` of shape
    ``(B, n, n)``; returns shape ``(B,)``.

    Parameters
    ----------
    log : bool
        Record :math:`\log E_\beta` instead, finite for every ``beta``: it is
        evaluated as a log-sum-exp shifted by the largest entry of ``G``. The energy
        itself raises ``ValueError`` where it overflows float64 (``beta`` above
        about 717).

    Examples
    --------
    >>> import numpy as np
    >>> G = np.ones((1, 2, 2))                 # two tokens at the same point
    >>> bool(np.isclose(Energy()(G, 1.0)[0], np.e / 2))
    True
    >>> round(float(Energy(log=True)(G, 1000.0)[0]), 6)   # log(e^1000 / 2000)
    992.399098
    """

    log: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.log, (bool, np.bool_)):
            raise TypeError(f"log must be a bool, got {self.log!r}")

    def __call__(self, G: np.ndarray, beta: Any = None) -> np.ndarray:
        G = _check_gram(G)
        if beta is None:
            raise TypeError("beta must be given to evaluate the energy")
        b = np.asarray(beta, dtype=np.float64)
        if np.any(b <= 0) or not np.all(np.isfinite(b)):
            raise ValueError("beta must be finite and > 0 for the energy")
        n = G.shape[-1]
        bb = b.reshape(-1, 1, 1) if (b.ndim == 1 and G.ndim == 3) else b
        m = G.max(axis=(-1, -2), keepdims=True)  # 1 for unit vectors
        s = np.exp(bb * (G - m)).sum(axis=(-1, -2))
        log_e = b * m[..., 0, 0] + np.log(s) - np.log(2.0 * b * n * n)
        if self.log:
            return log_e
        top = float(np.max(log_e))
        if top > log_max(np.float64):
            raise ValueError(
                f"the energy E_beta overflows float64 (log E = {top:.1f} > "
                f"{log_max(np.float64):.1f}); record Energy(log=True), its logarithm"
            )
        return np.exp(log_e)


# ------------------------------------------------------------ ensemble integrator
@dataclass(frozen=True)
class EnsembleResult:
    """Result of :func:`simulate_ensemble`.

    Attributes
    ----------
    times : ndarray, shape (T,)
        Output times.
    observables : mapping str -> ndarray of shape (T, ...)
        Each observable evaluated on the Gram matrices ``(B, n, n)`` at ``times``.
    final : ndarray, shape (B, n, d)
        State at the last time.
    n_steps : int
        Number of Euler steps.
    dt : float
        Largest step.
    reduced : bool
        Whether the span reduction (see the module docstring) was used.
    """

    times: np.ndarray
    observables: Mapping[str, np.ndarray] = field(repr=False)
    final: np.ndarray = field(repr=False)
    n_steps: int = 0
    dt: float = 0.0
    reduced: bool = False


def _batched_matrix(M, name, B, d):
    if M is None:
        return None
    arr = np.asarray(M)
    if arr.ndim == 2:
        arr = as_matrix(arr, name, shape=(d, d))
        return arr
    if arr.ndim == 3:
        if arr.shape != (B, d, d):
            raise ValueError(
                f"{name} must have shape ({d}, {d}) or ({B}, {d}, {d}), got {arr.shape}"
            )
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} must contain only finite values")
        return arr.astype(np.float64, copy=False)
    raise ValueError(
        f"{name} must have shape ({d}, {d}) or ({B}, {d}, {d}), got {arr.shape}"
    )


def _tr(M):
    return np.swapaxes(M, -1, -2)


def _span_coordinates(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Coordinates ``Y`` (B, n, n) of tokens ``X`` (B, n, d), d > n, in an
    orthonormal basis ``U`` (B, d, n) of their span: ``X = Y U^T``."""
    U, _ = np.linalg.qr(_tr(X))
    return X @ U, U


def _integrate(X, b, t_arr, dt, normalization, mats, obs, reduced, bar):
    """Euler + retraction of one chunk ``(b, n, d)``: (observables, final, steps)."""
    B, n, d = X.shape
    dtype = X.dtype
    Qm, Km, Vm = mats
    identity = Qm is None and Km is None and Vm is None
    if reduced:
        Y, U = _span_coordinates(X)
    else:
        U = None
        Y = X.copy()
    bcol = b.astype(dtype).reshape(B, 1, 1)
    if identity:
        usa_scale = None
        if normalization == "usa":
            usa_scale = (np.exp(b) / n).astype(dtype).reshape(B, 1, 1)
    else:
        # <Q x, K y> = x^T (Q^T K) y
        Qt = np.eye(d, dtype=dtype) if Qm is None else Qm
        Kt = np.eye(d, dtype=dtype) if Km is None else Km
        A = (_tr(Qt) @ Kt).astype(dtype)
        Vt = None if Vm is None else _tr(Vm).astype(dtype)

    def field_(Y):
        if identity:
            W = Y @ _tr(Y)
            W -= 1.0
            W *= bcol
            np.exp(W, out=W)
            F = W @ Y
            if normalization == "sa":
                F /= W.sum(axis=-1)[..., None]
            else:
                F *= usa_scale
        else:
            L = (Y @ A) @ _tr(Y)
            L *= bcol
            m = L.max(axis=-1, keepdims=True)
            L -= m
            np.exp(L, out=L)
            YV = Y if Vt is None else Y @ Vt
            F = L @ YV
            if normalization == "sa":
                F /= L.sum(axis=-1)[..., None]
            else:
                F = exp_scale(
                    F,
                    m - math.log(n),
                    what="the USA velocity",
                    hint="use normalization='sa', a smaller beta or float64",
                )
        F -= np.einsum("bij,bij->bi", F, Y)[..., None] * Y
        return F

    recorded: dict[str, list] = {k: [] for k in obs}
    t = 0.0
    n_steps = 0
    for tk in t_arr:
        span = tk - t
        if span > 0:
            m_steps = int(np.ceil(span / dt - 1e-9))
            h = span / m_steps
            for _ in range(m_steps):
                F = field_(Y)
                F *= h
                Y += F
                Y /= np.sqrt(np.einsum("bij,bij->bi", Y, Y))[..., None]
            n_steps += m_steps
            if not np.all(np.isfinite(Y)):
                raise FloatingPointError(
                    f"the ensemble became non-finite before t={tk:g}; reduce dt"
                )
            t = tk
        if obs:
            G = Y @ _tr(Y)
            for name, fn in obs.items():
                recorded[name].append(np.asarray(fn(G, b)))
        if bar is not None:
            bar.update(1)
    final = Y @ _tr(U) if reduced else Y
    out = {k: np.stack(v) for k, v in recorded.items()}
    return out, final, n_steps


def simulate_ensemble(
    X0: np.ndarray,
    *,
    beta: float | np.ndarray,
    times: Any,
    dt: float = 0.1,
    normalization: str = "sa",
    Q: np.ndarray | None = None,
    K: np.ndarray | None = None,
    V: np.ndarray | None = None,
    observables: Mapping[str, Callable[[np.ndarray], Any]] | None = None,
    reduce: bool = True,
    chunk: int = 128,
    progress: bool = False,
    max_steps: int = MAX_STEPS,
) -> EnsembleResult:
    r"""Euler + retraction for an ensemble of ``B`` independent systems on the sphere.

    Each step is

    .. math::

        x_i \leftarrow \frac{x_i + h\,P_{x_i} v_i}{|x_i + h\,P_{x_i} v_i|},\qquad
        v_i = \frac{1}{Z_i}\sum_j e^{\beta\langle Q x_i, K x_j\rangle} V x_j

    (SA; USA divides by :math:`n`), the scheme of [GLPR]'s code, vectorised over the
    ensemble with batched matrix products. With ``Q = K = V = None`` (identity) the
    exponent is shifted, :math:`e^{\beta(\langle x_i,x_j\rangle - 1)} \le 1`, so no
    overflow occurs for any ``beta``; for ``d > n`` and ``reduce=True`` the system is
    integrated in the span of its initial tokens (module docstring). The step rule
    is that of :func:`attnlib.simulate` with ``method="euler"`` (the same states).

    Parameters
    ----------
    X0 : ndarray, shape (B, n, d)
        Unit vectors (an ``(n, d)`` array is treated as ``B = 1``).
    beta : float or ndarray of shape (B,)
        Inverse temperature(s), one per member if an array.
    times : array_like, shape (T,)
        Non-decreasing output times ``>= 0``.
    dt : float
        Largest Euler step (steps are shortened to hit every output time).
    normalization : {"sa", "usa"}
    Q, K, V : ndarray, shape (d, d) or (B, d, d), optional
        Query, key and value matrices (identity if omitted), shared or one per member.
    observables : mapping name -> callable(G, beta), optional
        Functions of the Gram matrices ``G`` of shape ``(b, n, n)`` and of the
        inverse temperatures ``beta`` of shape ``(b,)`` of a chunk of ``b`` members
        (for example :class:`PairFraction`, :class:`Energy`), returning arrays whose
        first axis is the member; evaluated at every output time.
    reduce : bool
        Use the span reduction when it applies (``Q = K = V = None`` and ``d > n``).
    chunk : int
        Members integrated together (small chunks stay in cache; the results do not
        depend on it).
    progress : bool
        ``tqdm.auto`` bar over the output times.
    max_steps : int
        Cap on the number of Euler steps; a ``TooManyStepsError`` (a ``ValueError``)
        is raised before the first step if ``times`` and ``dt`` need more.

    Returns
    -------
    EnsembleResult

    References
    ----------
    [GLPR] §6 and Fig 3; the Euler + normalisation scheme of their public code.

    Examples
    --------
    >>> import numpy as np
    >>> from attnlib import sample_sphere
    >>> X0 = sample_sphere(8, 16, rng=0, batch=4)
    >>> r = simulate_ensemble(X0, beta=1.0, times=[0, 5, 10],
    ...                       observables={"p": PairFraction(1e-3)})
    >>> r.observables["p"].shape, r.final.shape
    ((3, 4), (4, 8, 16))
    """
    X = as_states(X0, "X0")
    single = X.ndim == 2
    if single:
        X = X[None]
    check_unit_norm(X, "X0")
    B, n, d = X.shape
    b = as_beta(beta, B)
    b = np.full(B, b) if np.ndim(b) == 0 else b
    check_choice(normalization, "normalization", ("sa", "usa"))
    t_arr = output_times(times)
    dt = check_real(dt, "dt", low=0.0, strict_low=True)
    check_steps(
        planned_steps(t_arr, dt),
        check_int(max_steps, "max_steps", low=1),
        what="simulate_ensemble",
        hint="increase dt or max_steps",
    )
    Qm = _batched_matrix(Q, "Q", B, d)
    Km = _batched_matrix(K, "K", B, d)
    Vm = _batched_matrix(V, "V", B, d)
    identity = Qm is None and Km is None and Vm is None
    obs = check_observables(observables)
    dtype = X.dtype
    if identity and normalization == "usa" and b.max() > log_max(dtype):
        # the velocity is e^beta / n times a sum of n weights <= 1
        raise ValueError(
            f"beta must be <= {log_max(dtype):.1f} for USA in {dtype.name} "
            f"(e^beta overflows), got {b.max():g}; use normalization='sa'"
            + (" or float64" if dtype != np.float64 else "")
        )
    chunk = check_int(chunk, "chunk", low=1)
    reduced = bool(reduce and identity and d > n)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(
            total=t_arr.size * math.ceil(B / chunk), desc="ensemble", leave=False
        )
    parts: list[tuple[dict, np.ndarray, int]] = []
    for lo in range(0, B, chunk):
        sl = slice(lo, min(lo + chunk, B))
        mats = [
            None if M is None else (M if M.ndim == 2 else M[sl]) for M in (Qm, Km, Vm)
        ]
        parts.append(
            _integrate(X[sl], b[sl], t_arr, dt, normalization, mats, obs, reduced, bar)
        )
    if bar is not None:
        bar.close()
    n_steps = parts[0][2]
    final = np.concatenate([p[1] for p in parts]).astype(dtype, copy=False)
    out = {
        k: np.concatenate([p[0][k] for p in parts], axis=1)
        if B > chunk
        else parts[0][0][k]
        for k in obs
    }
    if single:
        out = {
            k: v[:, 0] if v.ndim >= 2 and v.shape[1] == 1 else v for k, v in out.items()
        }
        final = final[0]
    return EnsembleResult(t_arr, MappingProxyType(out), final, n_steps, dt, reduced)


# ------------------------------------------------------------------- random Q,K,V
QKV_KINDS = ("ginibre", "goe", "wishart")
VALUE_KINDS = ("identity", "random", "plus", "minus")


def _random_matrix(kind, d, rng, batch):
    shape = (d, d) if batch is None else (batch, d, d)
    G = rng.standard_normal(shape) / np.sqrt(d)
    if kind == "ginibre":
        return G
    if kind == "goe":
        return (G + _tr(G)) / np.sqrt(2.0)
    return G @ _tr(G)  # wishart


def random_qkv(
    d: int,
    *,
    kind: str = "ginibre",
    value: str = "identity",
    rng: np.random.Generator | int,
    batch: int | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Random query, key and value matrices, as in [GLPR] Fig 5.

    Convention (scaled so that spectra stay of order one as ``d`` grows): with
    :math:`G` a ``d x d`` matrix of i.i.d. :math:`N(0, 1/d)` entries,

    * ``"ginibre"``: :math:`G` (circular law on the unit disc);
    * ``"goe"``: :math:`(G + G^\top)/\sqrt 2` (semicircle on :math:`[-2, 2]`);
    * ``"wishart"``: :math:`G G^\top` (Marchenko–Pastur on :math:`[0, 4]`).

    For unit ``x``, ``y`` and independent Ginibre ``Q``, ``K`` the score
    :math:`\langle Qx, Ky\rangle` has standard deviation :math:`1/\sqrt d`. The
    [GLPR] code uses the bilinear form :math:`G_1 G_2/\sqrt d` with :math:`N(0, 1)`
    entries, whose scores have standard deviation 1: ``beta`` here corresponds to
    ``beta / sqrt(d)`` there.

    ``Q`` and ``K`` are drawn independently from ``kind``; ``V`` is the identity
    (``"identity"``), an independent draw (``"random"``), or :math:`\pm Q^\top K`
    (``"plus"``/``"minus"``). Because ``Q`` and ``K`` are independent,
    :math:`Q^\top K` is not symmetric (almost surely, for every ``kind``), so the
    model with :math:`V = \pm Q^\top K` is *not* the gradient flow of the energy
    :math:`E_D` of [BKKRW] (that needs :math:`Q^\top K = V = D` symmetric). For
    ``"wishart"`` the eigenvalues of :math:`Q^\top K = QK` are real and non-negative
    (:math:`QK` is similar to :math:`Q^{1/2} K Q^{1/2}`), and with ``"plus"`` the
    tokens are observed to end in two antipodal clusters on the top eigenvector of
    ``V`` (Chapter 2, Exercise 3).

    Parameters
    ----------
    d : int
    kind : {"ginibre", "goe", "wishart"}
    value : {"identity", "random", "plus", "minus"}
    rng : Generator or int
    batch : int, optional
        Draw ``batch`` independent triples (arrays of shape ``(batch, d, d)``).

    Returns
    -------
    Q, K, V : ndarrays of shape (d, d) or (batch, d, d)

    Examples
    --------
    >>> Q, K, V = random_qkv(4, kind="goe", value="minus", rng=0)
    >>> bool(np.allclose(V, -(Q.T @ K)))
    True
    """
    d = check_int(d, "d", low=1)
    check_choice(kind, "kind", QKV_KINDS)
    check_choice(value, "value", VALUE_KINDS)
    rng = check_rng(rng)
    if batch is not None:
        batch = check_int(batch, "batch", low=1)
    Q = _random_matrix(kind, d, rng, batch)
    K = _random_matrix(kind, d, rng, batch)
    if value == "identity":
        V = np.broadcast_to(np.eye(d), Q.shape).copy()
    elif value == "random":
        V = _random_matrix(kind, d, rng, batch)
    else:
        V = (1.0 if value == "plus" else -1.0) * (_tr(Q) @ K)
    return Q, K, V


# ------------------------------------------------------ phase-diagram kernel
def _retire_margin(dtype: Any) -> float:
    """Slack above ``1 - delta`` before a system retires: far above rounding."""
    return float(np.sqrt(np.finfo(dtype).eps))


def _pair_fractions(
    Y0: np.ndarray,
    beta: np.ndarray,
    t_arr: np.ndarray,
    dt: float,
    delta: float,
    normalization: str,
    retire: bool,
    chunk: int = 128,
) -> tuple[np.ndarray, int]:
    r"""Fraction of close pairs of each member at each output time, shape (T, B).

    Returns the fractions and the number of member-steps taken (fewer than
    ``B`` times the number of steps when members retire).

    The Euler + retraction scheme of :func:`simulate_ensemble` for
    :math:`Q = K = V = I`, with the same steps and the same states up to rounding,
    arranged for speed (see ``benchmarks/phase_diagram.py``):

    * the tokens come in coordinates of their span when ``d > n`` (module
      docstring; :func:`_initial_tokens`): rows ``y_i`` of length ``k = min(n, d)``;
    * the rows are stored scaled, :math:`s\,y_i` with :math:`s = \sqrt\beta`, next to
      a column of ones: ``Yx = [s Y, 1]`` of shape ``(n, k + 1)``. One product
      ``Yx Yx^T`` is then :math:`\beta G + 1` (no pass to scale by ``beta``); its
      exponential :math:`e^{1+\beta G}` differs from the weights by the factor
      ``e``, which SA's normalisation cancels (USA divides by ``e n``); and one
      product ``W Yx`` gives both :math:`\sum_j W_{ij} s y_j` and the row sums
      :math:`Z_i` (no reduction pass). With :math:`c_i = \langle v_i, y_i\rangle`,
      the projected step followed by the retraction is
      :math:`y_i \leftarrow \pm(y_i + h v_i / (1 - h c_i))` normalised, with the
      sign of :math:`1 - h c_i` (always ``+`` for SA, where :math:`c_i \le 1`);
    * both products take contiguous operands (a transposed copy of ``Yx`` is made
      once per step: a transposed view halves the speed of batched ``matmul``);
    * members are integrated ``chunk`` at a time, so the arrays stay in cache.

    ``beta = 0`` is integrated as ``beta = eps**2``, whose weights
    :math:`e^{1 + \varepsilon^2 G}` round to ``e`` exactly, as those of ``beta = 0``.

    With ``retire``, a member leaves the computation at the first output time at
    which all its pairs satisfy :math:`\langle x_i, x_j\rangle \ge 1-\delta+\eta`
    (:math:`\eta = \sqrt{\varepsilon_{\rm mach}}`, far above the rounding of the
    remaining steps); its fraction is 1 at every later output time. This is exact,
    by the following lemma.

    *Lemma (the close cone is invariant).* Let :math:`m = \min_{i,j}\langle x_i,
    x_j\rangle \ge 0` and take one Euler step with retraction,
    :math:`x_i' \propto u_i = (1 - h c_i) x_i + h v_i`, where
    :math:`v_i = \sum_j A_{ij} x_j` with :math:`A_{ij} \ge 0` and
    :math:`c_i = \langle x_i, v_i\rangle`. If :math:`h c_i \le 1` for all ``i``, then
    :math:`\min_{i,j}\langle x_i', x_j'\rangle \ge m`. *Proof.* Each :math:`u_i =
    \sum_k a_{ik} x_k` with :math:`a_{ik} \ge 0`, so :math:`\langle u_i, u_j\rangle =
    \sum_{k,l} a_{ik} a_{jl} \langle x_k, x_l\rangle \ge m \sum_k a_{ik} \sum_l
    a_{jl} \ge m |u_i| |u_j|`. :math:`\square` For SA, :math:`c_i \le 1` and
    ``dt <= 1`` suffice; for USA, :math:`c_i \le e^\beta`, so ``dt * e**beta <= 1``.
    It is the discrete form of the cone collapse of Chapter 2 ([GLPR] Lemma 6.4):
    once every pair is within ``delta``, every pair stays so. A member for which the
    condition fails is never retired.

    Parameters
    ----------
    Y0 : ndarray, shape (B, n, k)
        Unit rows: the tokens, or their coordinates in a basis of their span;
        float32 or float64 (the computation keeps the dtype).
    beta : ndarray, shape (B,)
    t_arr : ndarray, shape (T,)
    dt, delta : float
    normalization : {"sa", "usa"}
    retire : bool
    chunk : int
        Members integrated together; the result does not depend on it.
    """
    B, n, k = Y0.shape
    dtype = Y0.dtype
    eps = np.finfo(dtype).eps
    b_eff = np.maximum(beta.astype(dtype), eps * eps)  # (B,)
    s = np.sqrt(b_eff)
    Yx = np.empty((B, n, k + 1), dtype=dtype)
    np.multiply(Y0, s[:, None, None], out=Yx[..., :k])
    Yx[..., k] = 1.0
    usa = normalization == "usa"
    if usa:
        usa_sum = dtype.type(np.e * n)
    fraction = PairFraction(delta)
    threshold = 1.0 - delta
    can_retire = np.zeros(B, dtype=bool)
    if retire and threshold >= 0:
        max_c = np.exp(beta) if usa else np.ones(B)
        can_retire = dt * max_c <= 1.0

    T = t_arr.size
    p = np.empty((T, B), dtype=np.float64)
    active = np.arange(B)
    # per-chunk buffers
    W = np.empty((chunk, n, n), dtype=dtype)
    F = np.empty((chunk, n, k + 1), dtype=dtype)
    YT = np.empty((chunk, k + 1, n), dtype=dtype)
    t = 0.0
    member_steps = 0
    for ti, tk in enumerate(t_arr):
        if not active.size:
            break  # every member retired: its later fractions are already 1
        span = tk - t
        if span > 0:
            m_steps = int(np.ceil(span / dt - 1e-9))
            h = dtype.type(span / m_steps)
            member_steps += m_steps * active.size
            for lo in range(0, active.size, chunk):
                Y = Yx[lo : lo + chunk]
                c = Y.shape[0]
                Wc, Fc, YTc = W[:c], F[:c], YT[:c]
                bc = b_eff[active[lo : lo + chunk]]
                sc = s[active[lo : lo + chunk]]
                hb = h / bc
                for _ in range(m_steps):
                    np.copyto(YTc, _tr(Y))
                    np.matmul(Y, YTc, out=Wc)  # beta G + 1
                    np.exp(Wc, out=Wc)
                    np.matmul(Wc, Y, out=Fc)  # [sum_j W_ij s y_j, Z_i]
                    Zs = usa_sum if usa else Fc[..., k]
                    # <sum_j W_ij s y_j, s y_i> = beta Zs c_i
                    cs = np.einsum("bij,bij->bi", Fc[..., :k], Y[..., :k])
                    cs *= hb[:, None]
                    # y + h v / (1 - h c), with v = F' / (s Zs)
                    den = Zs - cs  # Zs (1 - h c)
                    fac = h / den
                    Fc *= fac[..., None]
                    Y += Fc
                    nrm = np.einsum("bij,bij->bi", Y[..., :k], Y[..., :k])
                    np.sqrt(nrm, out=nrm)
                    np.divide(sc[:, None], nrm, out=nrm)
                    if usa:  # 1 - h c < 0 is possible: the step points the other way
                        nrm *= np.sign(den)
                    Y *= nrm[..., None]
                    Y[..., k] = 1.0
            t = tk
        Ys = Yx[..., :k]
        G = Ys @ _tr(Ys)
        G /= b_eff[active, None, None]
        if not np.all(np.isfinite(G)):
            raise FloatingPointError(
                f"the ensemble became non-finite before t={tk:g}; reduce dt"
            )
        p[ti, active] = fraction(G)
        if ti + 1 < T:
            done = can_retire[active] & (
                G.min(axis=(-1, -2)) >= threshold + _retire_margin(dtype)
            )
            if done.any():
                p[ti + 1 :, active[done]] = 1.0
                keep = ~done
                active = active[keep]
                Yx = Yx[keep]
    return p, member_steps


# ------------------------------------------------------------ phase diagrams
def phase_transition_curve(
    betas: Any, *, n: int, delta: float = 1e-3, normalization: str = "sa"
) -> np.ndarray:
    r"""Phase-transition curve: times with :math:`\gamma_\beta(t_\beta) = 1-\delta`.

    :math:`\gamma_\beta` solves the equiangular ODE of [GLPR] Thm 6.8 (see
    :mod:`attnlib.equiangular`); :math:`\Gamma = \{(t_\beta, \beta)\}`.

    Parameters
    ----------
    betas : array_like, shape (m,)
    n : int
    delta : float in (0, 1]
    normalization : {"sa", "usa"}

    Returns
    -------
    ndarray, shape (m,)

    Examples
    --------
    >>> round(float(phase_transition_curve([4.0], n=32)[0]), 3)
    6.954
    """
    bs = np.atleast_1d(np.asarray(betas, dtype=np.float64))
    if bs.ndim != 1 or not np.all(np.isfinite(bs)) or np.any(bs < 0):
        raise ValueError("betas must be a 1-D array of finite values >= 0")
    delta = check_real(delta, "delta", low=0.0, high=1.0, strict_low=True)
    return np.array(
        [
            equiangular_time_to(
                1.0 - delta, beta=float(bb), n=n, normalization=normalization
            )
            for bb in bs
        ]
    )


@dataclass(frozen=True)
class PhaseDiagram:
    r"""Result of :func:`phase_diagram`.

    Attributes
    ----------
    betas : ndarray, shape (m,)
    times : ndarray, shape (T,)
    probability : ndarray, shape (m, T)
        Ensemble mean of the fraction of pairs with
        :math:`\langle x_i,x_j\rangle\ge 1-\delta`.
    stderr : ndarray, shape (m, T)
        Standard error of that mean over the samples.
    d, n, samples : int
    delta : float
    qkv : str or None
        ``"kind/value"`` for random matrices (:func:`random_qkv`), else ``None``.
    system_steps : int
        Euler steps integrated, summed over the systems (with retirement, fewer than
        ``samples * len(betas)`` times the steps of one system).
    method : str
        ``"fast"`` or ``"reference"`` (see :func:`phase_diagram`).
    """

    betas: np.ndarray
    times: np.ndarray
    probability: np.ndarray = field(repr=False)
    stderr: np.ndarray = field(repr=False)
    d: int = 2
    n: int = 32
    samples: int = 0
    delta: float = 1e-3
    qkv: str | None = None
    system_steps: int = 0
    method: str = "fast"

    def level_beta(self, t: float, level: float = 0.5) -> float:
        """The ``beta`` at which the probability at time ``t`` crosses ``level``.

        Linear interpolation in ``beta`` at the output time closest to ``t``, for
        a probability decreasing in ``beta``; ``nan`` if it never crosses.
        """
        k = int(np.argmin(np.abs(self.times - t)))
        p = self.probability[:, k]
        below = np.nonzero(p < level)[0]
        if below.size == 0 or below[0] == 0:
            return float("nan")
        j = below[0]
        p0, p1 = p[j - 1], p[j]
        return float(
            self.betas[j - 1]
            + (p0 - level) / (p0 - p1) * (self.betas[j] - self.betas[j - 1])
        )


def _phase_stats(p: np.ndarray, samples: int) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard error over the members (axis 1) of fractions (T, samples)."""
    se = (
        p.std(axis=1, ddof=1) / np.sqrt(samples)
        if samples > 1
        else np.zeros(p.shape[0])
    )
    return p.mean(axis=1), se


def _phase_task(
    params: tuple, seed: np.random.SeedSequence
) -> tuple[np.ndarray, np.ndarray]:
    """Reference path: one beta, ``samples`` systems through simulate_ensemble."""
    beta, d, n, samples, times, dt, delta, qkv, normalization = params
    rng = np.random.default_rng(seed)
    X0 = sample_sphere(n, d, rng=rng, batch=samples)
    mats: dict[str, Any] = {}
    if qkv is not None:
        kind, value = qkv.split("/")
        mats = dict(
            zip("QKV", random_qkv(d, kind=kind, value=value, rng=rng, batch=samples))
        )
    r = simulate_ensemble(
        X0,
        beta=beta,
        times=times,
        dt=dt,
        normalization=normalization,
        observables={"p": PairFraction(delta)},
        **mats,
    )
    return _phase_stats(r.observables["p"], samples)


def _initial_tokens(seed: Any, n: int, d: int, samples: int) -> np.ndarray:
    """The tokens of one beta: the draw of :func:`sample_sphere`, in span coordinates.

    The Gaussian draw of ``sample_sphere(n, d, rng=default_rng(seed), batch=samples)``
    (the reference method's draw). For ``d > n`` the result is the Cholesky factor
    of the Gram matrix of the normalised rows: a lower-triangular ``(n, n)`` array
    with the same Gram matrix, i.e. the same tokens up to a rotation, which the
    dynamics commutes with. It is four times cheaper than normalising the
    ``(n, d)`` rows and taking a QR factorisation.
    """
    Z = np.random.default_rng(seed).standard_normal((samples, n, d))
    if d <= n:
        return retract(Z)
    G = Z @ _tr(Z)
    s = 1.0 / np.sqrt(np.einsum("bii->bi", G))
    G *= s[:, :, None]
    G *= s[:, None, :]
    try:
        return np.linalg.cholesky(G)
    except np.linalg.LinAlgError:  # numerically singular: factor the rows instead
        return _span_coordinates(retract(Z))[0]


def _phase_block(params: tuple, _seed: Any = None) -> list[tuple]:
    """Fast path: several betas in one ensemble, retiring clustered systems.

    ``params`` carries the child seed of each beta (the same draws as the reference
    path, whatever the grouping); the seed given by :func:`sweep` is not used.
    """
    betas, seeds, d, n, samples, times, dt, delta, normalization, retire, dtype = params
    parts = [
        _initial_tokens(seed, n, d, samples).astype(dtype, copy=False) for seed in seeds
    ]
    b = np.repeat(np.asarray(betas, dtype=np.float64), samples)
    p, steps = _pair_fractions(
        np.concatenate(parts), b, times, dt, delta, normalization, retire
    )
    stats = [
        _phase_stats(p[:, i * samples : (i + 1) * samples], samples)
        for i in range(len(betas))
    ]
    return stats, steps


PHASE_METHODS = ("fast", "reference")


def phase_diagram(
    d: int,
    *,
    betas: Any,
    samples: int,
    n: int = 32,
    times: Any = None,
    t_final: float = 30.0,
    dt: float = 0.1,
    delta: float = 1e-3,
    qkv: str | None = None,
    normalization: str = "sa",
    seed: int = 0,
    executor: Executor | None = None,
    progress: bool = True,
    method: str = "fast",
    retire: bool = True,
    dtype: Any = np.float64,
    betas_per_task: int | None = None,
    max_steps: int = MAX_STEPS,
) -> PhaseDiagram:
    r"""Estimate :math:`P(\langle x_i(t),x_j(t)\rangle \ge 1-\delta)` over (beta, t).

    [GLPR] Fig 3 (and Fig 5 with ``qkv``): for each ``beta``, ``samples`` systems of
    ``n`` i.i.d. uniform tokens on :math:`S^{d-1}` are integrated with explicit Euler
    steps ``dt`` and the retraction (the scheme of :func:`simulate_ensemble`), and the
    fraction of close pairs is averaged over the systems.

    Two methods give the same estimates, from the same initial tokens:

    * ``"fast"`` (``Q = K = V = I``): several values of ``beta`` form one ensemble
      (per-member ``beta``), integrated by a kernel arranged for speed, and, with
      ``retire``, a system leaves the computation once all its pairs are within
      ``delta``: by the invariance lemma of the kernel (the discrete cone collapse,
      stated in ``_pair_fractions``), its fraction is 1 at every later time, so the
      arrays are identical with and without retirement. ``dtype=np.float32`` halves
      the cost; its diagram agrees with float64 within the Monte Carlo error (the
      tests check it) but float64 is the default.
    * ``"reference"``: one :func:`simulate_ensemble` per ``beta``, every system to
      the end (the only method for random ``qkv``).

    The work is split into tasks run by :func:`sweep`, serially or on ``executor``
    (a process pool, or a Dask cluster through ``client.get_executor()``). A fast
    task holds ``betas_per_task`` values of ``beta`` (strided over the grid, so that
    tasks cost about the same); the values of ``beta`` draw their tokens from the
    children of ``numpy.random.SeedSequence(seed)``, so the result depends neither
    on the executor nor on the grouping.

    Parameters
    ----------
    d : int
        Dimension of the ambient space.
    betas : array_like, shape (m,)
    samples : int
        Systems per ``beta``.
    n : int
    times : array_like, optional
        Output times (default: equally spaced on ``[0, t_final]`` with spacing
        ``max(dt, t_final / 60)``).
    t_final, dt, delta : float
    qkv : str, optional
        ``"kind/value"`` for random matrices drawn per system by :func:`random_qkv`,
        e.g. ``"ginibre/identity"`` (reference method only).
    normalization : {"sa", "usa"}
    seed : int
        Root seed; ``beta`` number ``k`` uses ``SeedSequence(seed).spawn(m)[k]``.
    executor : concurrent.futures.Executor, optional
    progress : bool
        ``tqdm.auto`` bar over the tasks.
    method : {"fast", "reference"}
    retire : bool
        Retire fully clustered systems (fast method; SA with ``dt <= 1``, USA with
        ``dt * e**beta <= 1``, where the lemma applies).
    dtype : numpy.float64 or numpy.float32
        Floating type of the fast method.
    betas_per_task : int, optional
        Values of ``beta`` per fast task. The default gives tasks of about 1024
        systems (a second or two on one core) but at least 16 tasks where the grid
        allows, so that every worker of a pool gets some. Grouping sizes the tasks
        for a scheduler; it does not change the arithmetic (measured: the same
        time per system-step for 1, 2 or 4 values of ``beta`` per task).
    max_steps : int
        Cap on the Euler steps of one system.

    Returns
    -------
    PhaseDiagram

    Examples
    --------
    >>> pd = phase_diagram(8, betas=[1.0, 4.0], samples=4, t_final=2.0, progress=False)
    >>> pd.probability.shape
    (2, 21)
    >>> ref = phase_diagram(8, betas=[1.0, 4.0], samples=4, t_final=2.0,
    ...                     progress=False, method="reference")
    >>> bool(np.abs(pd.probability - ref.probability).max() < 1e-12)
    True
    """
    d = check_int(d, "d", low=2)
    n = check_int(n, "n", low=2)
    samples = check_int(samples, "samples", low=1)
    bs = np.atleast_1d(np.asarray(betas, dtype=np.float64))
    if bs.ndim != 1 or bs.size == 0 or not np.all(np.isfinite(bs)) or np.any(bs < 0):
        raise ValueError("betas must be a non-empty 1-D array of finite values >= 0")
    dt = check_real(dt, "dt", low=0.0, strict_low=True)
    delta = check_real(delta, "delta", low=0.0, high=2.0)
    check_choice(normalization, "normalization", ("sa", "usa"))
    check_choice(method, "method", PHASE_METHODS)
    if qkv is not None:
        if not isinstance(qkv, str) or qkv.count("/") != 1:
            raise ValueError(
                f"qkv must be 'kind/value' (e.g. 'ginibre/identity'), got {qkv!r}"
            )
        kind, value = qkv.split("/")
        check_choice(kind, "qkv kind", QKV_KINDS)
        check_choice(value, "qkv value", VALUE_KINDS)
        if method == "fast":
            method = "reference"  # random matrices: the fast kernel assumes Q=K=V=I
    try:
        dtype = np.dtype(dtype)
    except TypeError:
        raise TypeError(
            f"dtype must be numpy.float64 or numpy.float32, got {dtype!r}"
        ) from None
    if dtype not in (np.dtype(np.float64), np.dtype(np.float32)):
        raise ValueError(f"dtype must be numpy.float64 or numpy.float32, got {dtype}")
    if dtype != np.float64 and method != "fast":
        raise ValueError("dtype=float32 needs method='fast' (and qkv=None)")
    if times is None:
        t_final = check_real(t_final, "t_final", low=0.0, strict_low=True)
        step = max(dt, t_final / 60.0)
        times = np.linspace(0.0, t_final, int(round(t_final / step)) + 1)
    times = output_times(times)
    max_steps = check_int(max_steps, "max_steps", low=1)
    check_steps(
        planned_steps(times, dt),
        max_steps,
        what="phase_diagram",
        hint="increase dt or max_steps",
    )
    seeds = np.random.SeedSequence(check_int(seed, "seed", low=0)).spawn(bs.size)
    desc = f"phase diagram d={d}"
    if method == "reference":
        params = [
            (float(b), d, n, samples, times, dt, delta, qkv, normalization) for b in bs
        ]
        # sweep gives task k the child SeedSequence(seed).spawn(m)[k]: seeds[k]
        res = sweep(
            _phase_task,
            params,
            seed=seed,
            executor=executor,
            progress=progress,
            desc=desc,
        )
        system_steps = int(planned_steps(times, dt)) * samples * bs.size
    else:
        # weights up to e^(1 + beta) summed over n tokens must stay finite
        limit = log_max(dtype) - 1.0 - math.log(n)
        if bs.max() > limit:
            raise ValueError(
                f"beta must be <= {limit:.1f} for method='fast' in {dtype} "
                f"(got {bs.max():g}); use float64 or method='reference'"
            )
        if betas_per_task is None:
            # about 1024 systems a task, but at least 16 tasks where the grid allows
            betas_per_task = max(1, min(-(-1024 // samples), -(-bs.size // 16)))
        per = min(check_int(betas_per_task, "betas_per_task", low=1), bs.size)
        n_tasks = -(-bs.size // per)
        groups = [list(range(j, bs.size, n_tasks)) for j in range(n_tasks)]
        # largest beta first: its systems retire last, so its tasks take longest
        # and should not be the ones left running alone at the end
        groups.sort(key=lambda g: -bs[g].max())
        params = [
            (
                [float(bs[i]) for i in g],
                [seeds[i] for i in g],
                d,
                n,
                samples,
                times,
                dt,
                delta,
                normalization,
                retire,
                dtype,
            )
            for g in groups
        ]
        out = sweep(
            _phase_block,
            params,
            seed=0,
            executor=executor,
            progress=progress,
            desc=desc,
        )
        res = [None] * bs.size
        system_steps = 0
        for g, (stats, steps) in zip(groups, out):
            system_steps += steps
            for i, st in zip(g, stats):
                res[i] = st
    prob = np.stack([r[0] for r in res])
    se = np.stack([r[1] for r in res])
    return PhaseDiagram(
        bs, times, prob, se, d, n, samples, delta, qkv, system_steps, method
    )


# ------------------------------------------------------------------ Wendel
def wendel_probability(n: int, d: int) -> float:
    r"""Probability that ``n`` uniform points on :math:`S^{d-1}` lie in a hemisphere.

    Wendel's theorem ([GLPR] Thm 6.7, [Wendel 1962]):

    .. math::

        p_{n,d} = 2^{-(n-1)} \sum_{k=0}^{d-1} \binom{n-1}{k},

    equal to 1 for ``n <= d``. Computed exactly with rationals.

    Examples
    --------
    >>> wendel_probability(4, 2)
    0.5
    """
    n = check_int(n, "n", low=1)
    d = check_int(d, "d", low=1)
    s = sum(math.comb(n - 1, k) for k in range(0, min(d, n)))
    return float(Fraction(s, 2 ** (n - 1)))


def in_hemisphere(X: np.ndarray) -> bool | np.ndarray:
    r"""Whether the rows of ``X`` lie in an open hemisphere.

    That is, whether some :math:`w` has :math:`\langle w, x_i\rangle > 0` for all ``i``.

    For ``d = 2`` this is decided by the largest angular gap (``> pi``), vectorised;
    otherwise by the linear programme :math:`X w \ge 1` (HiGHS), one per member.

    Parameters
    ----------
    X : ndarray, shape (n, d) or (B, n, d)

    Returns
    -------
    bool or ndarray of bool, shape (B,)
    """
    X = as_states(X, "X")
    single = X.ndim == 2
    Xb = X[None] if single else X
    if Xb.shape[-1] == 2:
        ang = np.sort(np.arctan2(Xb[..., 1], Xb[..., 0]), axis=-1)
        gaps = np.diff(ang, axis=-1, append=ang[..., :1] + 2 * np.pi)
        out = gaps.max(axis=-1) > np.pi
    else:
        from scipy.optimize import linprog

        n, d = Xb.shape[-2:]
        out = np.empty(Xb.shape[0], dtype=bool)
        for k, x in enumerate(Xb):
            r = linprog(
                np.zeros(d),
                A_ub=-x,
                b_ub=-np.ones(n),
                bounds=[(None, None)] * d,
                method="highs",
            )
            out[k] = r.status == 0
    return bool(out[0]) if single else out


@dataclass(frozen=True)
class HemisphereEstimate:
    """Monte Carlo estimate of a probability with its standard error."""

    estimate: float
    stderr: float
    samples: int


def hemisphere_probability_mc(
    n: int, d: int, *, samples: int, rng: np.random.Generator | int
) -> HemisphereEstimate:
    r"""Monte Carlo estimate of Wendel's probability :math:`p_{n,d}`.

    Draws ``samples`` configurations of ``n`` uniform points on :math:`S^{d-1}` and
    tests each with :func:`in_hemisphere`.

    Examples
    --------
    >>> est = hemisphere_probability_mc(4, 2, samples=4000, rng=0)
    >>> abs(est.estimate - 0.5) < 4 * est.stderr
    True
    """
    n = check_int(n, "n", low=1)
    d = check_int(d, "d", low=1)
    samples = check_int(samples, "samples", low=2)
    X = sample_sphere(n, d, rng=rng, batch=samples)
    hits = in_hemisphere(X)
    p = float(np.mean(hits))
    return HemisphereEstimate(
        p, float(np.sqrt(max(p * (1 - p), 1e-300) / samples)), samples
    )


# ------------------------------------------------------------------ sweeps
def sweep(
    fn: Callable[[Any, np.random.SeedSequence], Any],
    params: Sequence[Any],
    *,
    seed: int | np.random.SeedSequence = 0,
    executor: Executor | None = None,
    progress: bool = True,
    desc: str = "sweep",
) -> list[Any]:
    r"""Evaluate ``fn(p, seed_k)`` for every parameter ``p``, serially or in a pool.

    Task ``k`` receives the child seed ``SeedSequence(seed).spawn(len(params))[k]``,
    so the results depend only on ``seed`` and ``params``, never on the executor or
    on the order of completion: a serial run, a ``ProcessPoolExecutor`` and a Dask
    client's ``get_executor()`` give identical arrays. With an executor, ``fn`` and
    the parameters must be picklable (a module-level function).

    Parameters
    ----------
    fn : callable(param, SeedSequence) -> result
        Build the random generator with ``numpy.random.default_rng(seed_k)``.
    params : sequence
    seed : int or SeedSequence
    executor : concurrent.futures.Executor, optional
        ``None`` runs serially in this process.
    progress : bool
        ``tqdm.auto`` progress bar over the tasks.
    desc : str
        Label of the progress bar.

    Returns
    -------
    list, in the order of ``params``

    Examples
    --------
    >>> import numpy as np
    >>> def draw(scale, s):
    ...     return scale * np.random.default_rng(s).random()
    >>> a = sweep(draw, [1.0, 2.0], seed=3, progress=False)
    >>> b = sweep(draw, [1.0, 2.0], seed=3, progress=False)
    >>> a == b
    True
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    params = list(params)
    if executor is not None and not isinstance(executor, Executor):
        raise TypeError(
            "executor must be a concurrent.futures.Executor, got "
            f"{type(executor).__name__}"
        )
    ss = (
        seed
        if isinstance(seed, np.random.SeedSequence)
        else np.random.SeedSequence(check_int(seed, "seed", low=0))
    )
    seeds = ss.spawn(len(params))
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(params), desc=desc, leave=False)
    results: list[Any] = [None] * len(params)
    if executor is None:
        for k, (p, s) in enumerate(zip(params, seeds)):
            results[k] = fn(p, s)
            if bar is not None:
                bar.update(1)
    else:
        from concurrent.futures import as_completed

        futures = {
            executor.submit(fn, p, s): k for k, (p, s) in enumerate(zip(params, seeds))
        }
        for fut in as_completed(futures):
            results[futures[fut]] = fut.result()
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()
    return results
