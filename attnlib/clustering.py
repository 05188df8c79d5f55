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
    check_unit_norm,
    log_max,
)
from .equiangular import equiangular_time_to
from .integrate import check_observables, output_times
from .sphere import sample_sphere

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

_MAX_EXP = 700.0


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


def _integrate(X, b, t_arr, dt, normalization, mats, obs, reduced, bar):
    """Euler + retraction of one chunk ``(b, n, d)``: (observables, final, steps)."""
    B, n, d = X.shape
    dtype = X.dtype
    Qm, Km, Vm = mats
    identity = Qm is None and Km is None and Vm is None
    if reduced:
        U, _ = np.linalg.qr(_tr(X))  # (B, d, n): orthonormal basis of the span
        Y = X @ U  # (B, n, n)
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
                if float(m.max()) > _MAX_EXP:
                    raise ValueError(
                        "USA weights exceed the float64 range for this beta; use SA"
                    )
                F *= np.exp(m) / n
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
    Qm = _batched_matrix(Q, "Q", B, d)
    Km = _batched_matrix(K, "K", B, d)
    Vm = _batched_matrix(V, "V", B, d)
    identity = Qm is None and Km is None and Vm is None
    obs = check_observables(observables)
    if identity and normalization == "usa" and b.max() > _MAX_EXP:
        raise ValueError(f"beta must be <= {_MAX_EXP:g} for USA (e^beta overflows)")

    dtype = X.dtype
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


def _phase_task(
    params: tuple, seed: np.random.SeedSequence
) -> tuple[np.ndarray, np.ndarray]:
    """One beta, ``samples`` systems: mean and standard error of the pair fraction."""
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
    p = r.observables["p"]  # (T, samples)
    se = (
        p.std(axis=1, ddof=1) / np.sqrt(samples)
        if samples > 1
        else np.zeros(p.shape[0])
    )
    return p.mean(axis=1), se


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
) -> PhaseDiagram:
    r"""Estimate :math:`P(\langle x_i(t),x_j(t)\rangle \ge 1-\delta)` over (beta, t).

    [GLPR] Fig 3 (and Fig 5 with ``qkv``): for each ``beta``, ``samples`` systems of
    ``n`` i.i.d. uniform tokens on :math:`S^{d-1}` are integrated by
    :func:`simulate_ensemble` (Euler step ``dt`` + retraction) and the fraction of
    close pairs is averaged. One task per ``beta``, run by :func:`sweep` (serially,
    or on ``executor``); results do not depend on the executor.

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
        e.g. ``"ginibre/identity"``.
    normalization : {"sa", "usa"}
    seed : int
        Root seed; task ``k`` uses ``SeedSequence(seed).spawn(m)[k]``.
    executor : concurrent.futures.Executor, optional
    progress : bool

    Returns
    -------
    PhaseDiagram

    Examples
    --------
    >>> pd = phase_diagram(8, betas=[1.0, 4.0], samples=4, t_final=2.0, progress=False)
    >>> pd.probability.shape
    (2, 21)
    """
    d = check_int(d, "d", low=2)
    n = check_int(n, "n", low=2)
    samples = check_int(samples, "samples", low=1)
    bs = np.atleast_1d(np.asarray(betas, dtype=np.float64))
    if bs.ndim != 1 or not np.all(np.isfinite(bs)) or np.any(bs < 0):
        raise ValueError("betas must be a 1-D array of finite values >= 0")
    dt = check_real(dt, "dt", low=0.0, strict_low=True)
    delta = check_real(delta, "delta", low=0.0, high=2.0)
    check_choice(normalization, "normalization", ("sa", "usa"))
    if qkv is not None:
        if not isinstance(qkv, str) or qkv.count("/") != 1:
            raise ValueError(
                f"qkv must be 'kind/value' (e.g. 'ginibre/identity'), got {qkv!r}"
            )
        kind, value = qkv.split("/")
        check_choice(kind, "qkv kind", QKV_KINDS)
        check_choice(value, "qkv value", VALUE_KINDS)
    if times is None:
        t_final = check_real(t_final, "t_final", low=0.0, strict_low=True)
        step = max(dt, t_final / 60.0)
        times = np.linspace(0.0, t_final, int(round(t_final / step)) + 1)
    times = np.asarray(times, dtype=np.float64)
    params = [
        (float(b), d, n, samples, times, dt, delta, qkv, normalization) for b in bs
    ]
    res = sweep(
        _phase_task,
        params,
        seed=seed,
        executor=executor,
        progress=progress,
        desc=f"phase diagram d={d}",
    )
    prob = np.stack([r[0] for r in res])
    se = np.stack([r[1] for r in res])
    return PhaseDiagram(bs, times, prob, se, d, n, samples, delta, qkv)


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
