r"""The configuration of a small Transformer, :class:`NetConfig` (numpy only).

The conventions are the book's (Chapter 1, the discrete layer map, and Chapter 6,
where layer normalisation sits). Layer normalisation (LN) is the division by the
norm, :math:`\mathrm{LN}(y) = y/|y|` (no centring, as in [GLPR]); with
``learned_norm`` it is followed by a learned gain and bias,
:math:`g\odot y/|y| + b`. With :math:`u(X)` the attention update (the sum over the
heads of :math:`\sum_j A^h_{ij}V_hx_j`, :math:`A^h` the softmax (SA) or unnormalised
(USA) weights of :math:`\beta\langle Q_hx_i, K_hx_j\rangle`) and ``h`` the residual
step, one layer is

* ``"post"``: :math:`X \mapsto \mathrm{LN}(X + h\,u(X))`, the book's layer map
  (``mod-prop-layers``): tokens on the sphere;
* ``"pre"``: :math:`Y \mapsto Y + h\,u(\mathrm{LN}(Y))`, the residual stream is not
  normalised;
* ``"peri"``: :math:`Y \mapsto Y + h\,\mathrm{LN}(u(\mathrm{LN}(Y)))`;
* ``"none"``: :math:`Y \mapsto Y + h\,u(Y)` (tokens in :math:`\mathbb R^d`).

With ``ffn`` the feed-forward block :math:`f(x) = W_2\,\mathrm{relu}(W_1x + b_1) + b_2`
follows as a second residual sub-layer with the same placement of LN (post-LN:
:math:`X \mapsto \mathrm{LN}(X + h f(X))`): attention then feed-forward, a
Lie–Trotter splitting of the field :math:`u + f`.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from typing import Any

from attnlib._validation import check_bool, check_choice, check_int, check_real

__all__ = ["NORMS", "ATTENTIONS", "NetConfig"]

#: Where layer normalisation sits (see the module docstring).
NORMS = ("post", "pre", "peri", "none")
#: The attention weights: softmax-normalised (SA) or divided by ``n`` (USA).
ATTENTIONS = ("sa", "usa")


@dataclass(frozen=True)
class NetConfig:
    r"""Architecture of a Transformer of :mod:`attnlib.nets`.

    Parameters
    ----------
    vocab_size : int
        Number of token ids (``>= 2``).
    d_model : int
        Token dimension ``d``.
    n_heads : int
        Number of heads; ``d_model`` must be a multiple of it. Each head has
        ``Q_h, K_h`` of shape ``(d_head, d)``, ``d_head = d_model // n_heads``, and
        a full ``V_h`` of shape ``(d, d)`` (no output projection: the update is the
        sum of the heads' outputs, the book's multi-head model).
    n_layers : int
        Trained depth.
    shared : bool
        One set of layer weights for every layer (ALBERT; "layers as time").
    beta : float or None
        Inverse temperature multiplying :math:`\langle Q_hx_i, K_hx_j\rangle`;
        ``None`` is :math:`1/\sqrt{d_{head}}`.
    attention : {"sa", "usa"}
        Softmax-normalised or unnormalised (divided by ``n``) weights.
    norm : {"post", "pre", "peri", "none"}
        Where LN sits.
    causal : bool
        Token ``i`` attends to ``j <= i`` only.
    step : float
        Residual step ``h > 0`` multiplying each update.
    ffn : bool
        Add the feed-forward sub-layer.
    d_ff : int
        Hidden width of the feed-forward block.
    max_len : int
        Longest sequence (rows of the positional embedding).
    learned_norm : bool
        LN followed by a learned gain and bias.
    """

    vocab_size: int
    d_model: int = 32
    n_heads: int = 2
    n_layers: int = 12
    shared: bool = True
    beta: float | None = None
    attention: str = "sa"
    norm: str = "post"
    causal: bool = False
    step: float = 1.0
    ffn: bool = True
    d_ff: int = 64
    max_len: int = 64
    learned_norm: bool = False

    def __post_init__(self) -> None:
        check_int(self.vocab_size, "vocab_size", low=2)
        check_int(self.d_model, "d_model", low=1)
        check_int(self.n_heads, "n_heads", low=1)
        check_int(self.n_layers, "n_layers", low=1)
        check_bool(self.shared, "shared")
        if self.beta is not None:
            check_real(self.beta, "beta", low=0.0)
        check_choice(self.attention, "attention", ATTENTIONS)
        check_choice(self.norm, "norm", NORMS)
        check_bool(self.causal, "causal")
        check_real(self.step, "step", low=0.0, strict_low=True)
        check_bool(self.ffn, "ffn")
        check_int(self.d_ff, "d_ff", low=1)
        check_int(self.max_len, "max_len", low=1)
        check_bool(self.learned_norm, "learned_norm")
        if self.d_model % self.n_heads:
            raise ValueError(
                f"d_model must be a multiple of n_heads, got d_model={self.d_model} "
                f"and n_heads={self.n_heads}"
            )

    @property
    def d_head(self) -> int:
        """Rows of each ``Q_h`` and ``K_h``."""
        return self.d_model // self.n_heads

    @property
    def inverse_temperature(self) -> float:
        r"""``beta``, or :math:`1/\sqrt{d_{head}}` when it is ``None``."""
        return 1.0 / math.sqrt(self.d_head) if self.beta is None else float(self.beta)

    def to_json(self) -> str:
        """The configuration as a JSON object (keys sorted)."""
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_dict(cls, data: Any) -> "NetConfig":
        """The configuration from a mapping of its fields (unknown keys refused)."""
        if not isinstance(data, dict):
            raise TypeError(f"data must be a dict of NetConfig fields, got {data!r}")
        known = set(cls.__dataclass_fields__)
        extra = set(data) - known
        if extra:
            raise ValueError(f"unknown NetConfig fields: {sorted(extra)}")
        return cls(**data)

    @classmethod
    def from_json(cls, text: str) -> "NetConfig":
        """The configuration from :meth:`to_json`'s text."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a JSON string, got {type(text).__name__}")
        return cls.from_dict(json.loads(text))
