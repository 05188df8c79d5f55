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
* ``kernel="hardmax"``: the :math:`\beta \to \infty` limit of the SA softmax,
  uniform weights over the maximisers of the scores :math:`\langle Qx_i,
  Kx_j\rangle` of each row (scores within ``hardmax_tol`` times
  :math:`\max(1, \max_k|s_{ik}|)` of the maximum tie; :mod:`attnlib.frontiers`).
  ``beta`` has no role in it and stays at its default.
* ``mask="causal"``: token ``i`` attends to ``j <= i`` only (lower-triangular
  attention); with ``"usa"`` the masked sum is still divided by :math:`n`.
* ``slope`` (with the causal mask): the ALiBi bias ([Press, Smith, Lewis]),
  :math:`-\lambda(i - j)` added to the logits.
* ``normalization="positional"`` (with the causal mask; [DGR]): the positional
  weights :math:`w_{ij} = e^{-\lambda(i-j)}/\sum_{k<i}e^{-\lambda(i-k)}` are
  normalised on their own and the content weights are not,
  :math:`\sum_{j<i} w_{ij} e^{\beta\langle Qx_i, Kx_j\rangle} V x_j`: USA with the
  logit bias :math:`\log(n\,w_{ij})`, and no field at the first token, which has
  no past (:mod:`attnlib.frontiers`).
* ``weights`` (the atoms of a measure :math:`\mu = \sum_j w_j\delta_{x_j}`):
  token ``j`` carries the mass :math:`w_j`, SA weights
  :math:`w_j e^{L_{ij}}/\sum_k w_k e^{L_{ik}}`, USA :math:`w_j e^{L_{ij}}`
  (the masses carry the :math:`1/n`): the logit bias :math:`\log w_j` (SA) or
  :math:`\log(n w_j)` (USA); with :math:`w_j = 1/n` it is the model without
  weights (:func:`measure_field`, :func:`MeasureModel`).
* ``layer_norm`` (where layer normalisation sits; :mod:`attnlib.frontiers`):
  ``"post"`` is the model on the sphere; with ``"pre"`` the states
  :math:`y_i \in \mathbb R^d` are not normalised and the attention update
  :math:`u_i` of the normalised tokens :math:`x_i = y_i/|y_i|` is their velocity,
  :math:`\dot y_i = u_i(X)`; ``"peri"`` normalises the update too,
  :math:`\dot y_i = u_i(X)/|u_i(X)|` (zero where :math:`u_i = 0`).
* Multi-head ([GLPR] (2.7)): the velocity is the sum over heads of the single-head
  terms, each head normalised on its own.

Shapes: ``X`` is ``(n, d)`` for one configuration or ``(B, n, d)`` for an ensemble
of ``B`` independent systems; ``beta`` may be an array ``(B,)`` for an ensemble.
"""

from __future__ import annotations

import inspect

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import _kernel as kern
from ._deprecation import geometry_of_flag, moved_arguments, warn_moved
from ._control import glpr_usa_step
from .geometry import as_geometry
from ._validation import (
    NORMALIZATIONS,
    Head,
    make_head as _make_head,
    as_beta,
    as_finite,
    as_heads,
    as_matrix,
    as_member_param,
    as_states,
    check_bool,
    check_choice,
    check_int,
    check_real,
    check_unit_norm,
    exp_scale,
)
from ._sinkhorn import SinkhornConvergenceWarning, SinkhornResult, sinkhorn

__all__ = [
    "Model",
    "MeasureModel",
    "SinkhornResult",
    "attention_matrix",
    "measure_field",
    "velocity",
    "sinkhorn",
    "KERNELS",
    "LAYER_NORMS",
    "NORMALIZATIONS",
]

#: The attention kernels of :class:`Model` (its ``kernel`` argument).
KERNELS = ("softmax", "l2", "sigmoid", "sinkhorn", "hardmax")
MASKS = (None, "causal")
#: The placements of layer normalisation of :class:`Model` (its ``layer_norm``
#: argument): none, after the update (on the sphere), before it, or around it.
LAYER_NORMS = (None, "post", "pre", "peri")
#: The normalisations of :class:`Model`: SA, USA, and the positional one of a causal
#: model.
MODEL_NORMALIZATIONS = (*NORMALIZATIONS, "positional")
# kept for code that imported it from here; the kernel owns the value
_CHUNK_ENTRIES = kern.CHUNK_ENTRIES


# kept for code that imported them from here; the validator owns them
_Head = Head


def _head(q, k, v) -> Head:
    return _make_head(q, k, v, True)


@dataclass(frozen=True, eq=False)
class Model:
    r"""A self-attention dynamics: the right-hand side of the particle system.

    Parameters
    ----------
    beta : float or ndarray of shape (B,)
        Inverse temperature ``>= 0``. An array gives one value per ensemble member.
    Q : ndarray of shape (m, d), optional
        Query matrix (identity if omitted): the scores are
        :math:`\langle Qx_i, Kx_j\rangle`.
    K : ndarray of shape (m, d), optional
        Key matrix (identity if omitted), of the same shape as ``Q``.
    V : ndarray of shape (d, d), optional
        Value matrix (identity if omitted).
    heads : sequence of (Q_h, K_h, V_h), optional
        Multi-head attention; each entry may use ``None`` for an identity. Exclusive
        with ``Q``, ``K``, ``V``.
    normalization : {"sa", "usa", "positional"}
        Divide by :math:`Z_i` (SA) or by :math:`n` (USA); ``"positional"``
        (softmax kernel and causal mask only) normalises the ALiBi weights alone.
    kernel : {"softmax", "l2", "sigmoid", "sinkhorn", "hardmax"}
        Attention variant (see the module docstring for each convention).
    mask : {None, "causal"}
        Causal (lower-triangular) masking.
    geometry : Sphere, Euclidean, "sphere" or "euclidean", optional
        Tokens on the unit sphere (layer normalisation, velocity projected on the
        tangent space; the default) or in :math:`\mathbb R^d`
        (:mod:`attnlib.geometry`). ``sphere=True``/``False`` is its old spelling.
        With ``layer_norm``, the scheme sets it (a geometry given must be that one).
    bias : float
        Bias ``b`` of the sigmoid kernel.
    sinkhorn_tol : float
        Tolerance of the Sinkhorn kernel: the iterations stop when every column sum
        of the plan is within ``sinkhorn_tol`` of one (``> 0``).
    sinkhorn_max_iter : int
        Largest number of row normalisations of one Sinkhorn solve (``>= 1``;
        ``1`` gives the softmax).
    sinkhorn_warm_start : bool
        Start each Sinkhorn solve from the column scaling of the previous solve of the
        same shape (when ``sinkhorn_max_iter > 1``). Along a trajectory consecutive
        plans are close, so this cuts the iterations by orders of magnitude; the
        result agrees with a cold start within ``sinkhorn_tol``.
    block : int
        Tile size of the block-tiled evaluation: memory is ``O(n * block)``.
    consensus : bool
        In :math:`\mathbb R^d` with ``V = I``: subtract the token itself,
        :math:`\dot z_i = \sum_j W_{ij} z_j - z_i` (for the hardmax, the dynamics
        of :math:`z = e^{-t}x`; :mod:`attnlib.frontiers`).
    hardmax_tol : float
        Relative tolerance of a tie of the hardmax kernel (``>= 0``).
    weights : ndarray of shape (n,), optional
        The masses of the tokens as atoms of a measure (non-negative, positive
        sum), for the softmax and L2 kernels without a mask; the states then have
        one token per weight.
    slope : float
        ALiBi slope :math:`\lambda \ge 0` per position: :math:`-\lambda(i - j)` is
        added to the logits (needs ``mask="causal"`` when positive; the
        positional normalisation's slope). ``CausalModel`` of
        :mod:`attnlib.frontiers` builds these causal models.
    layer_norm : {None, "post", "pre", "peri"}
        Where layer normalisation sits (module docstring;
        :mod:`attnlib.frontiers`): ``"post"`` on the sphere; ``"pre"`` and
        ``"peri"`` in :math:`\mathbb R^d`, the attention reading the normalised
        states (non-zero rows) and ``"peri"`` normalising its update too. ``None``
        (the default): no scheme, the ``geometry`` given. Not with ``weights`` or
        ``consensus``.

    Examples
    --------
    >>> import numpy as np
    >>> from attnlib import Model, sample_sphere
    >>> X = sample_sphere(8, 3, rng=0)
    >>> v = Model(beta=1.0).velocity(X)
    >>> v.shape, bool(np.allclose(np.sum(v * X, axis=1), 0))
    ((8, 3), True)
    >>> peri = Model(beta=1.0, layer_norm="peri")
    >>> bool(np.allclose(np.linalg.norm(peri.velocity(3 * X), axis=1), 1.0))
    True
    """

    beta: Any = 1.0
    Q: Any = field(default=None, repr=False)
    K: Any = field(default=None, repr=False)
    V: Any = field(default=None, repr=False)
    heads: Any = field(default=None, repr=False)
    normalization: str = "sa"
    kernel: str = "softmax"
    mask: str | None = None
    geometry: Any = None
    bias: float = 0.0
    sinkhorn_tol: float = 1e-12
    sinkhorn_max_iter: int = 1000
    sinkhorn_warm_start: bool = True
    block: int = 256
    consensus: bool = False
    hardmax_tol: float = 1e-12
    slope: float = 0.0
    weights: Any = field(default=None, repr=False)
    layer_norm: str | None = None

    def __post_init__(self) -> None:
        check_choice(self.normalization, "normalization", MODEL_NORMALIZATIONS)
        check_choice(self.kernel, "kernel", KERNELS)
        check_choice(self.mask, "mask", MASKS)
        check_choice(self.layer_norm, "layer_norm", LAYER_NORMS)
        object.__setattr__(self, "geometry", self._scheme_geometry())
        check_bool(self.sinkhorn_warm_start, "sinkhorn_warm_start")
        object.__setattr__(self, "bias", check_real(self.bias, "bias"))
        object.__setattr__(
            self,
            "sinkhorn_tol",
            check_real(self.sinkhorn_tol, "sinkhorn_tol", low=0.0, strict_low=True),
        )
        object.__setattr__(
            self,
            "sinkhorn_max_iter",
            check_int(self.sinkhorn_max_iter, "sinkhorn_max_iter", low=1),
        )
        object.__setattr__(self, "block", check_int(self.block, "block", low=1))
        object.__setattr__(self, "consensus", check_bool(self.consensus, "consensus"))
        object.__setattr__(
            self, "hardmax_tol", check_real(self.hardmax_tol, "hardmax_tol", low=0.0)
        )
        object.__setattr__(self, "beta", as_member_param(self.beta, "beta"))
        object.__setattr__(self, "slope", check_real(self.slope, "slope", low=0.0))
        if self.mask != "causal" and (
            self.slope > 0 or self.normalization == "positional"
        ):
            raise ValueError(
                "slope > 0 (the ALiBi bias) and normalization='positional' are "
                "positional biases of a causal model: use mask='causal'"
            )
        if self.normalization == "positional" and self.kernel != "softmax":
            raise ValueError(
                "normalization='positional' is defined for kernel='softmax', got "
                f"kernel={self.kernel!r}"
            )
        if self.layer_norm is not None and (self.weights is not None or self.consensus):
            raise ValueError(
                f"layer_norm={self.layer_norm!r} is not defined with "
                + ("weights" if self.weights is not None else "consensus=True")
                + ": the atoms of a measure and the consensus dynamics have no layer "
                "norm scheme (use layer_norm=None)"
            )
        if self.weights is not None:
            self._set_weights()
        if self.kernel == "hardmax" and self.slope > 0:
            raise ValueError(
                "slope must be 0 for kernel='hardmax': the bias is added to "
                "beta times the scores, whose limit beta -> infinity is the "
                "hardmax of the scores alone"
            )
        if self.kernel == "hardmax":
            if self.normalization != "sa":
                raise ValueError(
                    "normalization must be 'sa' for kernel='hardmax' (its rows are "
                    f"the limit of the softmax rows), got {self.normalization!r}"
                )
            if np.ndim(self.beta) > 0 or self.beta != 1.0:
                raise ValueError(
                    "beta has no role in kernel='hardmax' (the limit beta -> "
                    f"infinity): leave it at its default 1.0, got {self.beta!r}"
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
        heads, d = as_heads(self.Q, self.K, self.V, self.heads)
        if self.consensus and (self.sphere or any(h.v is not None for h in heads)):
            raise ValueError(
                "consensus=True is the R^d dynamics with V = I: use "
                "geometry='euclidean' and no V"
            )
        # validated once: rhs, used by the integrators, checks nothing
        object.__setattr__(self, "_heads", heads)
        object.__setattr__(self, "_sinkhorn_init", {})
        object.__setattr__(self, "_bias_cache", {})
        object.__setattr__(self, "_d", d)

    def _scheme_geometry(self):
        """The geometry: the one given, or the one ``layer_norm`` sets."""
        if self.layer_norm is None:
            return as_geometry("sphere" if self.geometry is None else self.geometry)
        scheme = as_geometry("sphere" if self.layer_norm == "post" else "euclidean")
        if self.geometry is None:
            return scheme
        given = as_geometry(self.geometry)
        if given.name != scheme.name:
            raise ValueError(
                f"geometry must be the one layer_norm={self.layer_norm!r} sets "
                "(post-LN on the sphere, pre- and peri-LN in R^d), got "
                f"geometry={self.geometry!r}"
            )
        return given  # the scheme's own (dataclasses.replace passes it on)

    @property
    def sphere(self) -> bool:
        """Whether the tokens live on the unit sphere (the geometry's kind)."""
        return self.geometry.name == "sphere"

    @property
    def _reads_normalised(self) -> bool:
        """Pre- and peri-LN: states in R^d whose directions the attention reads."""
        return self.layer_norm in ("pre", "peri")

    @property
    def scheme(self) -> str | None:
        """The ``scheme`` of the former ``NormalisedModel``: ``layer_norm``."""
        warn_moved("NormalisedModel(...).scheme", "Model.layer_norm")
        return self.layer_norm

    def _set_weights(self) -> None:
        """Validate ``weights`` and cache their logit bias."""
        w = as_finite(self.weights, "weights", ndims=(1,)).copy()
        if np.any(w < 0) or not w.sum() > 0:
            raise ValueError("weights must be >= 0 with a positive sum")
        if self.kernel not in ("softmax", "l2") or self.mask is not None:
            raise ValueError(
                "weights (the atoms of a measure) are defined for kernel='softmax' "
                f"or 'l2' without a mask, got kernel={self.kernel!r}, "
                f"mask={self.mask!r}"
            )
        object.__setattr__(self, "weights", w)
        scale = w.size if self.normalization == "usa" else 1.0
        with np.errstate(divide="ignore"):  # a zero mass is the bias -inf
            object.__setattr__(self, "_log_weights", np.log(scale * w)[None, :])

    # ------------------------------------------------------------------ checks
    def check_states(self, X: Any, name: str = "X") -> np.ndarray:
        """``X`` validated for this model, without evaluating the field.

        A finite floating array of shape ``(n, d)`` or ``(B, n, d)`` with the
        dimension of ``Q``, ``K``, ``V``, unit rows on the sphere, and ``B`` equal to
        the number of values of ``beta`` when it is an array.

        Returns
        -------
        ndarray
            ``X`` as a floating array.
        """
        X = as_states(X, name)
        if self._reads_normalised and np.any(
            np.linalg.norm(X, axis=-1, keepdims=True) == 0
        ):
            raise ValueError(f"{name} has a zero row, whose direction is not defined")
        if self._d is not None and X.shape[-1] != self._d:
            raise ValueError(
                f"{name} has token dimension d={X.shape[-1]} but Q, K, V are for "
                f"d={self._d}"
            )
        if self.weights is not None and X.shape[-2] != self.weights.size:
            raise ValueError(
                f"{name} must have one row per weight ({self.weights.size}), got "
                f"shape {X.shape}"
            )
        if self.sphere:
            check_unit_norm(X, name)
        batch = X.shape[0] if X.ndim == 3 else None
        if np.ndim(self.beta) > 0:
            if batch is None:
                raise ValueError(
                    f"beta has shape {np.shape(self.beta)}: {name} must be an "
                    "ensemble (B, n, d)"
                )
            as_beta(self.beta, batch, states=name)
        return X

    def stable_step(self) -> float | None:
        """The [GLPR] stable USA step of the largest ``beta``
        (:func:`attnlib.integrate.glpr_usa_step`; SA does not need it), for
        ``simulate(..., step_rule="glpr")``; ``None`` for the hardmax, which has no
        ``beta``."""
        if self.kernel == "hardmax":
            return None
        return glpr_usa_step(beta=float(np.max(self.beta)))

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
        For pre- and peri-LN, the matrix of the normalised states.
        """
        X = self.check_states(X)
        if self._reads_normalised:
            X = kern.retract(X.copy())
        mats = [self._head_matrix(X, self.beta, h) for h in self._heads]
        return mats[0] if len(mats) == 1 else np.stack(mats)

    def _logits_fn(self, head):
        """The L2 logits ``-beta |Q x_i - K x_j|^2 / 2`` of ``head`` (else None)."""
        if self.kernel != "l2":
            return None
        q, k = head.q, head.k

        def l2(X, beta, rows):
            Xr = X[..., rows, :]
            b = beta if np.ndim(beta) == 0 else np.asarray(beta).reshape(-1, 1, 1)
            QX = Xr if q is None else Xr @ q.T
            KX = X if k is None else X @ k.T
            sq = (
                np.sum(QX * QX, axis=-1)[..., :, None]
                + np.sum(KX * KX, axis=-1)[..., None, :]
                - 2.0 * (QX @ np.swapaxes(KX, -1, -2))
            )
            return -0.5 * b * np.maximum(sq, 0.0)

        return l2

    def logit_bias(self, n: int) -> np.ndarray | None:
        r"""The additive logit bias for ``n`` tokens, or ``None`` when there is none.

        With ``slope > 0`` the ALiBi bias :math:`-\lambda(i - j)` (``-inf`` above
        the diagonal), with ``normalization="positional"`` the bias
        :math:`\log(n\,w_{ij})` (:func:`attnlib.frontiers.alibi_bias`); cached for
        each ``n``.
        """
        n = check_int(n, "n", low=1)
        return self._bias_matrix(n)

    def _bias_matrix(self, n):
        positional = self.normalization == "positional"
        if not (positional or self.slope > 0):
            return None
        if n not in self._bias_cache:
            self._bias_cache[n] = kern.alibi_bias(n, self.slope, positional)
        return self._bias_cache[n]

    def _bias_fn(self, n):
        """The kernel's ``bias`` argument: the sigmoid's offset and the positional
        bias of ``n`` tokens (a function of the query rows), or None."""
        if self.weights is not None:  # no mask, no ALiBi, no sigmoid with them
            lw = self._log_weights
            return lambda rows, n: lw
        B = self._bias_matrix(n)
        offset = self.bias if self.kernel == "sigmoid" else None
        if B is None:
            return offset
        if offset is None:
            return lambda rows, n: B[rows]
        return lambda rows, n: B[rows] + offset

    @property
    def _weights_normalization(self):
        """The kernel's normalisation: the positional one is USA with its bias."""
        return "usa" if self.normalization == "positional" else self.normalization

    def _logits(self, X, beta, head):
        fn = self._logits_fn(head)
        L = fn(X, beta, slice(None)) if fn else kern.logits(X, beta, head.A)
        bias = self._bias_fn(X.shape[-2])
        if bias is not None:
            L = L + (bias(slice(None), X.shape[-2]) if callable(bias) else bias)
        return L

    def _head_matrix(self, X, beta, head):
        L = self._logits(X, beta, head)
        if self.kernel == "sinkhorn":
            return self._sinkhorn_plan(L, head)
        n = X.shape[-2]
        keep = kern.causal_mask(slice(None), n) if self.mask == "causal" else None
        W, log_scale = kern.attention_weights(
            L,
            self._weights_normalization,
            kind=self._kind,
            keep=keep,
            tol=self.hardmax_tol,
        )
        if log_scale is not None:
            W = exp_scale(
                W,
                log_scale,
                what="the USA attention matrix",
                hint="use normalization='sa', a smaller beta or float64",
                dtype=X.dtype,
            )
        if self.normalization == "positional":
            W[..., 0, :] = 0.0  # the first token has no past
        return W

    def _sinkhorn_plan(self, L, head):
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
                stacklevel=4,
            )
        return res.matrix

    # ---------------------------------------------------------------- velocity
    def velocity(self, X: np.ndarray) -> np.ndarray:
        """Velocity field of the dynamics at ``X`` (same shape as ``X``).

        Evaluated without an ``n x n`` temporary: row blocks of size ``block`` (and
        symmetric tiles, each used for its rows and its columns, for the softmax
        kernel with a symmetric positive semi-definite ``Q^T K``), except for the
        Sinkhorn kernel, whose plan needs the whole matrix.
        """
        return self._field(self.check_states(X), self.beta)

    def rhs(self, X: np.ndarray) -> np.ndarray:
        r"""The velocity field without input validation, for integrators.

        ``X`` may lie slightly off the sphere (Runge–Kutta stages): the field is then
        the natural extension :math:`P_x y = y - \langle x, y\rangle x` of the
        formula. Use :meth:`velocity` for user input; everything ``rhs`` needs was
        validated when the model was built.
        """
        return self._field(X, self.beta)

    def _field(self, X, beta):
        if self._reads_normalised:
            X = kern.retract(X.copy())
        out = np.zeros_like(X)
        for head in self._heads:
            out += self._head_velocity(X, beta, head)
        if self.sphere:
            kern.project(X, out)
        elif self.consensus:
            out -= X
        if not np.all(np.isfinite(out)):
            raise ValueError(
                f"the velocity field overflows {out.dtype} for these states (the sum "
                "over heads or the projection is not finite); use float64, a smaller "
                "beta or normalization='sa'"
            )
        if self.layer_norm == "peri":
            m = np.linalg.norm(out, axis=-1, keepdims=True)
            return np.divide(out, m, out=np.zeros_like(out), where=m > 0)
        return out

    def _head_velocity(self, X, beta, head):
        if self.kernel == "sinkhorn":
            XV = X if head.v is None else X @ head.v.T
            return kern.aggregate(self._head_matrix(X, beta, head), XV)
        symmetric = self.kernel == "softmax" and self.mask is None and head.psd
        F = kern.softmax_field(
            X,
            beta,
            head.A_sym if symmetric else head.A,
            head.v,
            normalization=self._weights_normalization,
            kind=self._kind,
            mask=self.mask,
            bias=self._bias_fn(X.shape[-2]),
            logits_fn=self._logits_fn(head),
            symmetric=symmetric,
            block=self.block,
            tol=self.hardmax_tol,
        )
        if self.normalization == "positional":
            F[..., 0, :] = 0.0  # the first token has no past
        return F

    @property
    def _kind(self) -> str:
        """The weights of the kernel's field: softmax (also of the L2 logits),
        sigmoid or hardmax."""
        return self.kernel if self.kernel in ("sigmoid", "hardmax") else "softmax"


# the sphere= flag of earlier releases is the geometry's name
Model.__init__ = moved_arguments(  # type: ignore[method-assign]
    list(inspect.signature(Model.__init__).parameters),
    renamed={"sphere": ("geometry", geometry_of_flag)},
)(Model.__init__)


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


@moved_arguments(
    "points atoms weights beta", renamed={"sphere": ("geometry", geometry_of_flag)}
)
def measure_field(
    points: np.ndarray,
    atoms: np.ndarray,
    weights: np.ndarray,
    *,
    beta: float = 1.0,
    Q: np.ndarray | None = None,
    K: np.ndarray | None = None,
    V: np.ndarray | None = None,
    normalization: str = "sa",
    geometry: Any = "sphere",
) -> np.ndarray:
    r"""Velocity field :math:`\mathcal X[\mu]` of a weighted measure, at any points.

    For :math:`\mu = \sum_j w_j\delta_{y_j}`,

    .. math::

        \mathcal X[\mu](x) = P_x\Big(\frac{\sum_j w_j
            e^{\beta\langle Qx, Ky_j\rangle} V y_j}
            {\sum_j w_j e^{\beta\langle Qx, Ky_j\rangle}}\Big)

    (SA; USA drops the denominator, the weights carrying the :math:`1/n` of an
    empirical measure), the velocity field of the mean-field (continuity) equation
    ([GLPR] §2; the "Transformer PDE" of [CACP]). At the atoms of the empirical
    measure of ``X`` it is the particle velocity of :class:`Model`: the particle
    system is an exact solution of the mean-field equation.

    Parameters
    ----------
    points : ndarray, shape (p, d)
        Where to evaluate (unit rows on the sphere).
    atoms : ndarray, shape (m, d)
        Support of the measure (unit rows on the sphere).
    weights : ndarray, shape (m,)
        Non-negative masses with a positive sum.
    beta : float
        Inverse temperature ``>= 0``.
    Q, K, V : ndarray of shape (d, d), optional
        Query, key and value matrices (identity if omitted).
    normalization : {"sa", "usa"}
    geometry : Sphere, Euclidean, "sphere" or "euclidean"
        On the sphere (the default) the field is projected on the tangent spaces.

    Returns
    -------
    ndarray, shape (p, d)

    Examples
    --------
    >>> import numpy as np
    >>> from attnlib import Model, sample_sphere
    >>> X = sample_sphere(10, 3, rng=0)
    >>> F = measure_field(X, X, np.full(10, 0.1), beta=2.0)
    >>> bool(np.allclose(F, Model(beta=2.0).velocity(X), atol=1e-14))
    True
    """
    points = as_states(points, "points", ndims=(2,))
    atoms = as_states(atoms, "atoms", ndims=(2,))
    d = points.shape[1]
    if atoms.shape[1] != d:
        raise ValueError(
            f"points and atoms must have the same dimension d, got {points.shape} "
            f"and {atoms.shape}"
        )
    w = as_states(weights, "weights", ndims=(1,)).astype(np.float64, copy=False)
    if w.shape[0] != atoms.shape[0]:
        raise ValueError(
            f"weights must have shape ({atoms.shape[0]},) (one per row of atoms), got "
            f"{w.shape}"
        )
    if np.any(w < 0) or not w.sum() > 0:
        raise ValueError("weights must be >= 0 with a positive sum")
    beta = check_real(beta, "beta", low=0.0)
    check_choice(normalization, "normalization", NORMALIZATIONS)
    sphere = as_geometry(geometry).name == "sphere"
    if sphere:
        check_unit_norm(points, "points")
        check_unit_norm(atoms, "atoms")
    for m, name in ((Q, "Q"), (K, "K"), (V, "V")):
        if m is not None:
            as_matrix(m, name, shape=(d, d))
    (head,), _ = as_heads(Q, K, V, d=d, psd=False)
    return kern.measure_field(
        points,
        atoms,
        w,
        beta,
        head.A,
        head.v,
        normalization=normalization,
        sphere=sphere,
    )


def MeasureModel(weights: Any, beta: Any = 1.0, *, normalization: str = "sa") -> Model:
    r"""The atoms of a weighted measure moving in their own field, on the sphere.

    For :math:`\mu = \sum_j w_j\delta_{x_j}` with fixed weights, the atoms follow
    :math:`\dot x_i = \mathcal X[\mu](x_i)` (:func:`measure_field`): the mean-field
    equation of a measure with weighted atoms (with ``weights = 1/n`` it is
    :class:`Model`).

    Parameters
    ----------
    weights : ndarray, shape (m,)
        Non-negative masses with a positive sum, one per atom.
    beta : float or ndarray of shape (B,)
        Inverse temperature ``>= 0``.
    normalization : {"sa", "usa"}

    Returns
    -------
    Model
        ``Model(beta, normalization=normalization, weights=weights)``, usable with
        :func:`attnlib.simulate`.

    Examples
    --------
    >>> import numpy as np
    >>> from attnlib import Model, sample_sphere, simulate
    >>> X = sample_sphere(6, 3, rng=0)
    >>> a = simulate(MeasureModel(np.full(6, 1 / 6), 2.0), X, t_final=1.0).final
    >>> b = simulate(Model(beta=2.0), X, t_final=1.0).final
    >>> bool(np.allclose(a, b, atol=1e-13))
    True
    """
    check_choice(normalization, "normalization", NORMALIZATIONS)
    return Model(beta, normalization=normalization, weights=weights)
