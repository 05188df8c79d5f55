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

The hardmax is a kernel of the one model, :class:`attnlib.Model` with
``kernel="hardmax"``, evaluated by the same field as the softmax (masks apply);
:func:`Hardmax` builds that model from the arguments of this module.

References
----------
[AGRB] Alcalde, Geshkovski, Ruiz-Balet, *Attention's forward pass and Frank–Wolfe*,
arXiv:2508.09628.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _kernel as kern
from .._deprecation import geometry_of_flag, moved_arguments
from ..attention import Model
from .._validation import as_heads, as_states, check_bool, check_real

__all__ = ["hardmax_weights", "Hardmax"]


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
    tol = check_real(tol, "tol", low=0.0)
    return kern.hardmax_weights(kern.logits(Y, 1.0, head.A, Y=X), tol)


@moved_arguments(
    "Q K V geometry consensus tol", renamed={"sphere": ("geometry", geometry_of_flag)}
)
def Hardmax(
    Q: Any = None,
    K: Any = None,
    V: Any = None,
    geometry: Any = "sphere",
    consensus: bool = False,
    tol: float = 1e-12,
) -> Model:
    r"""The hardmax dynamics: :class:`attnlib.Model` with ``kernel="hardmax"``.

    Parameters
    ----------
    Q, K, V : ndarray, optional
        Query and key matrices of shape (p, d) and value matrix of shape (d, d),
        each the identity if omitted, as in :class:`attnlib.Model`.
    geometry : Sphere, Euclidean, "sphere" or "euclidean"
        Tokens on the unit sphere (velocity projected; the default) or in
        :math:`\mathbb R^d`. ``sphere=True``/``False`` is its old spelling.
    consensus : bool
        In :math:`\mathbb R^d` with ``V = I``: subtract the token itself,
        :math:`\dot z_i = \sum_j H_{ij}z_j - z_i` (the dynamics of
        :math:`e^{-t}x`).
    tol : float
        Relative tolerance of a tie (see :func:`hardmax_weights`); the model's
        ``hardmax_tol``.

    Returns
    -------
    Model
        ``Model(Q=Q, K=K, V=V, geometry=geometry, kernel="hardmax",
        consensus=consensus, hardmax_tol=tol)``, usable with
        :func:`attnlib.simulate`; its ``attention(X)`` is the matrix :math:`H`.

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
    return Model(
        Q=Q,
        K=K,
        V=V,
        geometry=geometry,
        kernel="hardmax",
        consensus=check_bool(consensus, "consensus"),
        hardmax_tol=check_real(tol, "tol", low=0.0),
    )
