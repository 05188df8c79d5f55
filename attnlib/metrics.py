r"""Clustering metrics of particle configurations, and the same on Gram matrices.

Cluster rule (documented once, used everywhere): two particles are *linked* when
:math:`\langle x_i, x_j\rangle > 1 - \delta`; clusters are the connected components of
this graph. A configuration with all pairs within :math:`\delta` is one cluster; the
converse fails (a chain of close neighbours can span a wide arc). On the circle,
:func:`angle_clusters` counts maximal arcs without a gap wider than ``gap``.

The observables :class:`PairFraction`, :class:`ClusterCount`,
:class:`InnerProductHistogram` and :class:`Energy` compute the same quantities from
Gram matrices ``(B, n, n)``, vectorised over an ensemble: the form in which
:func:`attnlib.clustering.simulate_ensemble` records them without storing states.
"""

from __future__ import annotations

from ._moved import retired

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from ._lazy import csgraph
from ._validation import (
    as_angles,
    as_states,
    as_numeric,
    check_bool,
    check_finite_result,
    check_int,
    check_real,
    exp_of_log,
)

__all__ = [
    "gram",
    "pair_fraction",
    "all_within",
    "cluster_labels",
    "cluster_count",
    "PairFraction",
    "ClusterCount",
    "InnerProductHistogram",
    "Energy",
    "Clusters",
    "angle_clusters",
]

TWO_PI = 2.0 * np.pi


def gram(X: np.ndarray) -> np.ndarray:
    r"""Pairwise inner products :math:`G_{ij} = \langle x_i, x_j\rangle`.

    Parameters
    ----------
    X : ndarray, shape (n, d) or (B, n, d)

    Returns
    -------
    ndarray, shape (n, n) or (B, n, n)
    """
    X = as_states(X, "X")
    return check_finite_result(
        X @ np.swapaxes(X, -1, -2).copy(),
        "the Gram matrix",
        "the rows of X are too long (scale X down)",
    )


def _delta(delta):
    return check_real(delta, "delta", low=0.0, high=2.0)


def pair_fraction(X: np.ndarray, delta: float = 1e-3) -> np.ndarray | float:
    r"""Fraction of pairs :math:`i<j` with :math:`\langle x_i,x_j\rangle \ge 1-\delta`.

    Returns a float for ``(n, d)`` input and an array ``(B,)`` for an ensemble. With
    ``n = 1`` there are no pairs and the fraction is 1 by convention.
    """
    X = as_states(X, "X")
    delta = _delta(delta)
    n = X.shape[-2]
    if n == 1:
        return 1.0 if X.ndim == 2 else np.ones(X.shape[0])
    G = X @ np.swapaxes(X, -1, -2)
    iu = np.triu_indices(n, 1)
    frac = np.mean(G[..., iu[0], iu[1]] >= 1.0 - delta, axis=-1)
    return float(frac) if X.ndim == 2 else frac


def all_within(X: np.ndarray, delta: float = 1e-3) -> bool | np.ndarray:
    r"""Whether every pair satisfies :math:`\langle x_i,x_j\rangle \ge 1-\delta`."""
    X = as_states(X, "X")
    delta = _delta(delta)
    G = X @ np.swapaxes(X, -1, -2)
    ok = np.all(G >= 1.0 - delta, axis=(-1, -2))
    return bool(ok) if X.ndim == 2 else ok


def cluster_labels(X: np.ndarray, delta: float = 1e-3) -> np.ndarray:
    r"""Cluster label of each particle.

    Clusters are the components of :math:`\langle x_i,x_j\rangle > 1-\delta`.

    Returns
    -------
    ndarray of int, shape (n,) or (B, n); labels are ``0..k-1`` in order of first
    appearance.
    """
    X = as_states(X, "X")
    delta = _delta(delta)
    if X.ndim == 3:
        return np.stack([cluster_labels(x, delta) for x in X])
    G = X @ X.T.copy()
    _, lab = csgraph.connected_components(G > 1.0 - delta, directed=False)
    _, first = np.unique(lab, return_index=True)
    order = np.argsort(np.argsort(first))
    return order[lab]


def cluster_count(X: np.ndarray, delta: float = 1e-3) -> int | np.ndarray:
    r"""Number of clusters.

    Clusters are the connected components of :math:`\langle x_i,x_j\rangle > 1-\delta`.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0.0], [1.0, 0.0], [-1.0, 0.0]])
    >>> cluster_count(X)
    2
    """
    lab = cluster_labels(X, delta)
    if lab.ndim == 1:
        return int(lab.max()) + 1
    return lab.max(axis=1) + 1


# ------------------------------------------------------- observables on Gram matrices
def _check_gram(G: Any) -> np.ndarray:
    G = as_numeric(G, "G")
    if G.ndim not in (2, 3) or G.shape[-1] != G.shape[-2] or G.size == 0:
        raise ValueError(f"G must have shape (n, n) or (B, n, n), got {G.shape}")
    if not np.all(np.isfinite(G)):
        raise ValueError("G must contain only finite values (found NaN or inf)")
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


def _cluster_count_from_gram(G: np.ndarray, delta: float = 1e-3) -> np.ndarray:
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
    >>> _cluster_count_from_gram(np.array([[1.0, 1.0, -1.0], [1.0, 1.0, -1.0],
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
        return _cluster_count_from_gram(G, self.delta)


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
        check_bool(self.log, "log")

    def __call__(self, G: np.ndarray, beta: Any = None) -> np.ndarray:
        G = _check_gram(G)
        if beta is None:
            raise TypeError("beta must be given to evaluate the energy")
        b = as_numeric(beta, "beta").astype(np.float64)
        if np.any(b <= 0) or not np.all(np.isfinite(b)):
            raise ValueError("beta must be finite and > 0 for the energy")
        if b.ndim > 1 or (b.ndim == 1 and (G.ndim != 3 or b.size != G.shape[0])):
            raise ValueError(
                f"beta must be a number or have shape (B,) for G of shape (B, n, n), "
                f"got beta of shape {b.shape} and G of shape {G.shape}"
            )
        n = G.shape[-1]
        bb = b.reshape(-1, 1, 1) if (b.ndim == 1 and G.ndim == 3) else b
        m = G.max(axis=(-1, -2), keepdims=True)  # 1 for unit vectors
        s = np.exp(bb * (G - m)).sum(axis=(-1, -2))
        log_e = b * m[..., 0, 0] + np.log(s) - np.log(2.0 * b * n * n)
        if self.log:
            return log_e
        return exp_of_log(
            log_e, what="the energy E_beta at this beta and G", use="Energy(log=True)"
        )


# ------------------------------------------------------------ clusters on the circle
@dataclass(frozen=True)
class Clusters:
    """Clusters of angles found by :func:`angle_clusters`.

    Attributes
    ----------
    centers : ndarray, shape (k,)
        Circular mean of each cluster, in :math:`[0, 2\\pi)`, sorted.
    masses : ndarray of int, shape (k,)
        Number of particles in each cluster.
    labels : ndarray of int, shape (n,)
        Cluster index of each particle (``-1`` for particles in groups below
        ``min_fraction``).
    """

    centers: np.ndarray
    masses: np.ndarray
    labels: np.ndarray = field(repr=False)

    @property
    def count(self) -> int:
        return int(self.centers.size)


def angle_clusters(
    theta: Any, *, gap: float = 0.1, min_fraction: float = 0.0
) -> Clusters:
    r"""Clusters of points on the circle: maximal arcs without a gap wider than ``gap``.

    Sorting the angles, consecutive particles (cyclically) closer than ``gap``
    radians are in the same cluster; groups holding fewer than
    ``min_fraction * n`` particles (stragglers between clusters) are not counted.

    Parameters
    ----------
    theta : ndarray, shape (n,)
    gap : float
        Gap in radians, in ``(0, pi]``.
    min_fraction : float
        Minimal mass fraction of a counted cluster, in ``[0, 1)``.

    Returns
    -------
    Clusters

    Examples
    --------
    >>> angle_clusters([0.0, 0.01, 3.0, 3.02, 3.01]).masses.tolist()
    [2, 3]
    """
    theta = as_angles(theta, ndims=(1,))
    gap = check_real(gap, "gap", low=0.0, high=np.pi, strict_low=True)
    min_fraction = check_real(min_fraction, "min_fraction", low=0.0, high=1.0)
    n = theta.size
    th = np.mod(theta, TWO_PI)
    order = np.argsort(th)
    s = th[order]
    gaps = np.diff(np.concatenate([s, [s[0] + TWO_PI]]))  # gap after s[i]
    cuts = np.nonzero(gaps > gap)[0]
    lab_sorted = np.empty(n, dtype=int)
    if cuts.size == 0:
        lab_sorted[:] = 0
    else:
        # start a new group after each cut; the group crossing 2 pi wraps around
        start = (cuts[-1] + 1) % n
        idx = (np.arange(n) - start) % n  # position in the rotated order
        rolled_cuts = np.zeros(n, dtype=int)
        rolled_cuts[(cuts - start + 1) % n] = 1
        rolled_cuts[0] = 0
        group = np.cumsum(rolled_cuts)
        lab_sorted = group[idx]
    labels = np.empty(n, dtype=int)
    labels[order] = lab_sorted
    k = int(labels.max()) + 1
    masses = np.bincount(labels, minlength=k)
    z = np.bincount(labels, weights=np.cos(th), minlength=k) + 1j * np.bincount(
        labels, weights=np.sin(th), minlength=k
    )
    centers = np.mod(np.angle(z), TWO_PI)
    keep = masses >= max(1, min_fraction * n)
    remap = -np.ones(k, dtype=int)
    kept = np.nonzero(keep)[0]
    kept = kept[np.argsort(centers[kept])]
    remap[kept] = np.arange(kept.size)
    return Clusters(centers[kept], masses[kept], remap[labels])


#: Names no longer public, served for one release with a warning.
__getattr__ = retired(
    __name__,
    {
        "cluster_count_from_gram": "attnlib.metrics._cluster_count_from_gram"
        " (not public; from the states: attnlib.cluster_count)",
    },
)
