r"""Hardmax self-attention: the :math:`\beta \to \infty` limit of the softmax field.

As :math:`\beta \to \infty` the softmax weights
:math:`e^{\beta\langle Qx_i, Kx_j\rangle}/\sum_k e^{\beta\langle Qx_i, Kx_k\rangle}`
concentrate on the maximisers of the score :math:`s_{ij} = \langle Qx_i, Kx_j\rangle`
of row ``i``; when several tokens tie, the weight is split evenly between them (this
is the limit of the softmax weights of a row whose maximal scores are exactly equal).
The hardmax weight matrix is therefore

.. math::

    H_{ij} = \frac{\mathbf 1[j \in J_i]}{|J_i|},\qquad
    J_i = \{j : s_{ij} = \max_k s_{ik}\},

and the three dynamics of this module are

* on the sphere: :math:`\dot x_i = P_{x_i}\big(\sum_j H_{ij} V x_j\big)`;
* in :math:`\mathbb R^d`: :math:`\dot x_i = \sum_j H_{ij} V x_j`;
* the consensus form in :math:`\mathbb R^d` (``consensus=True``, ``V = I``):
  :math:`\dot z_i = \sum_j H_{ij} z_j - z_i`.

Because :math:`J_i` does not change when every token is multiplied by the same
positive number, :math:`z = e^{-t}x` turns the :math:`\mathbb R^d` dynamics with
``V = I`` into the consensus form *exactly* (for the softmax field the same change
of variables multiplies :math:`\beta` by :math:`e^{2t}`). The consensus step
:math:`z_i \leftarrow z_i + \eta(z_{j^\star} - z_i)` is a Frank–Wolfe step on the
convex hull of the tokens [AGRB]: the convex hull never grows; for
:math:`Q^\top K = I` and tokens whose hull vertices all have the same norm, the
vertices do not move and every other token runs along a straight line to the vertex
of its Voronoi cell, :math:`z_i(t) = v + e^{-t}(z_i(0) - v)`.

The right-hand side is discontinuous where a maximiser changes; ties are decided
with a relative tolerance ``tol`` on the scores, so that a configuration built to be
symmetric (e.g. a token on the bisector of two others) is treated as a tie.

References
----------
[AGRB] Alcalde, Geshkovski, Ruiz-Balet, *Attention's forward pass and Frank–Wolfe*,
arXiv:2508.09628.
"""

from __future__ import annotations

import inspect

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import _kernel as kern
from ._deprecation import geometry_of_flag, moved_arguments
from .geometry import as_geometry
from ._validation import as_heads, as_states, check_real, check_unit_norm

__all__ = ["hardmax_weights", "Hardmax"]


def _scores(Y, X, q, k):
    QY = Y if q is None else Y @ q.T
    KX = X if k is None else X @ k.T
    return QY @ np.swapaxes(KX, -1, -2)


def _weights_from_scores(S, tol):
    top = S.max(axis=-1, keepdims=True)
    scale = np.maximum(np.abs(S).max(axis=-1, keepdims=True), 1.0)
    W = (S >= top - tol * scale).astype(S.dtype)
    return W / W.sum(axis=-1, keepdims=True)


def hardmax_weights(
    X: Any,
    *,
    queries: Any = None,
    Q: Any = None,
    K: Any = None,
    tol: float = 1e-12,
) -> np.ndarray:
    r"""The hardmax attention matrix :math:`H` (row-stochastic, even split of ties).

    Parameters
    ----------
    X : ndarray, shape (n, d) or (B, n, d)
        The tokens (keys).
    queries : ndarray, shape (m, d) or (B, m, d), optional
        Points whose rows of :math:`H` are wanted (default: the tokens themselves).
        Evaluating on a grid of queries draws the cells
        :math:`\{y : j \in J(y)\}` of the tokens.
    Q : ndarray of shape (p, d), optional
        Query matrix (identity if omitted).
    K : ndarray of shape (p, d), optional
        Key matrix (identity if omitted), of the same shape as ``Q``.
    tol : float
        Scores within ``tol * max(1, max_j |s_ij|)`` of the row maximum tie.

    Returns
    -------
    ndarray, shape (m, n) or (B, m, n)

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 0.0]])
    >>> hardmax_weights(X, queries=np.array([[0.0, 1.0], [0.5, 0.0]]))
    array([[0.33333333, 0.33333333, 0.33333333],
           [1.        , 0.        , 0.        ]])
    """
    X = as_states(X, "X")
    Y = X if queries is None else as_states(queries, "queries")
    if Y.ndim != X.ndim or Y.shape[-1] != X.shape[-1] or Y.shape[:-2] != X.shape[:-2]:
        raise ValueError(
            f"queries must have shape (m, d) matching X {X.shape}, got {Y.shape}"
        )
    (head,), _ = as_heads(Q, K, d=X.shape[-1], psd=False)
    q, k = head.q, head.k
    tol = check_real(tol, "tol", low=0.0)
    return _weights_from_scores(_scores(Y, X, q, k), tol)


@dataclass(frozen=True, eq=False)
class Hardmax:
    r"""The hardmax dynamics, usable with :func:`attnlib.simulate`.

    Parameters
    ----------
    Q : ndarray of shape (p, d), optional
        Query matrix (identity if omitted): the scores are
        :math:`\langle Qx_i, Kx_j\rangle`.
    K : ndarray of shape (p, d), optional
        Key matrix (identity if omitted), of the same shape as ``Q``.
    V : ndarray of shape (d, d), optional
        Value matrix (identity if omitted).
    geometry : Sphere, Euclidean, "sphere" or "euclidean"
        Tokens on the unit sphere (velocity projected; the default) or in
        :math:`\mathbb R^d`. ``sphere=True``/``False`` is its old spelling.
    consensus : bool
        In :math:`\mathbb R^d` with ``V = I``: subtract the token itself,
        :math:`\dot z_i = \sum_j H_{ij}z_j - z_i` (the dynamics of
        :math:`e^{-t}x`).
    tol : float
        Relative tolerance of a tie (see :func:`hardmax_weights`).

    Examples
    --------
    >>> import numpy as np
    >>> from attnlib import simulate
    >>> X0 = np.array([[1.0, 0.0], [0.0, 1.0], [0.2, 0.1]])
    >>> hard = Hardmax(geometry="euclidean", consensus=True)
    >>> tr = simulate(hard, X0, t_final=1.0, dt=0.01)
    >>> bool(np.allclose(tr.final[2], [1, 0] + np.exp(-1.0) * (X0[2] - [1, 0])))
    True
    """

    Q: Any = field(default=None, repr=False)
    K: Any = field(default=None, repr=False)
    V: Any = field(default=None, repr=False)
    geometry: Any = "sphere"
    consensus: bool = False
    tol: float = 1e-12

    def __post_init__(self) -> None:
        object.__setattr__(self, "geometry", as_geometry(self.geometry))
        if not isinstance(self.consensus, (bool, np.bool_)):
            raise TypeError(f"consensus must be a bool, got {self.consensus!r}")
        check_real(self.tol, "tol", low=0.0)
        (head,), d = as_heads(self.Q, self.K, self.V, psd=False)
        if self.consensus and (self.sphere or head.v is not None):
            raise ValueError(
                "consensus=True is the R^d dynamics with V = I: use "
                "geometry='euclidean' and no V"
            )
        object.__setattr__(self, "_q", head.q)
        object.__setattr__(self, "_k", head.k)
        object.__setattr__(self, "_v", head.v)
        object.__setattr__(self, "_d", d)

    @property
    def sphere(self) -> bool:
        """Whether the tokens live on the unit sphere (the geometry's kind)."""
        return self.geometry.name == "sphere"

    def attention(self, X: Any) -> np.ndarray:
        """The hardmax matrix :math:`H` of ``X`` (shape (n, n) or (B, n, n))."""
        X = self._check(X)
        return _weights_from_scores(_scores(X, X, self._q, self._k), self.tol)

    def velocity(self, X: Any) -> np.ndarray:
        """The velocity field at ``X`` (validated input)."""
        return self.rhs(self.check_states(X))

    def stable_step(self) -> None:
        """No step-size limit of its own (see :class:`attnlib.integrate.Dynamics`)."""
        return None

    def rhs(self, X: np.ndarray) -> np.ndarray:
        """The velocity field without validation, for integrators."""
        H = _weights_from_scores(_scores(X, X, self._q, self._k), self.tol)
        XV = X if self._v is None else X @ self._v.T
        out = H @ XV
        if self.sphere:
            kern.project(X, out)
        elif self.consensus:
            out -= X
        return out

    def check_states(self, X: Any, name: str = "X") -> np.ndarray:
        """``X`` validated for this model, without evaluating the field."""
        X = as_states(X, name)
        if self._d is not None and X.shape[-1] != self._d:
            raise ValueError(
                f"{name} has token dimension d={X.shape[-1]} but Q, K, V are for "
                f"d={self._d}"
            )
        if self.sphere:
            check_unit_norm(X, name)
        return X

    _check = check_states


# the sphere= flag of earlier releases is the geometry's name
Hardmax.__init__ = moved_arguments(  # type: ignore[method-assign]
    list(inspect.signature(Hardmax.__init__).parameters),
    renamed={"sphere": ("geometry", geometry_of_flag)},
)(Hardmax.__init__)
