r"""Clustering metrics of particle configurations.

Cluster rule (documented once, used everywhere): two particles are *linked* when
:math:`\langle x_i, x_j\rangle > 1 - \delta`; clusters are the connected components of
this graph. A configuration with all pairs within :math:`\delta` is one cluster; the
converse fails (a chain of close neighbours can span a wide arc).
"""

from __future__ import annotations

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from ._validation import as_states, check_real

__all__ = ["gram", "pair_fraction", "all_within", "cluster_labels", "cluster_count"]


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
    return X @ np.swapaxes(X, -1, -2).copy()


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
    _, lab = connected_components(csr_matrix(G > 1.0 - delta), directed=False)
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
