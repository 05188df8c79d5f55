r"""The forward pass of :mod:`attnlib.nets` in JAX: parameters, layers, loss.

Parameters are a flat ``dict[str, ndarray]`` (the names below; per-layer weights are
stacked on a first axis of length ``n_layers``, or ``1`` when ``shared``):

* ``embed`` ``(vocab, d)``: token embedding; ``pos`` ``(max_len, d)``: learned
  positional embedding;
* ``Q``, ``K`` ``(Lw, H, d_head, d)`` and ``V`` ``(Lw, H, d, d)``: the per-head
  query, key and value matrices;
* ``W1`` ``(Lw, d_ff, d)``, ``b1`` ``(Lw, d_ff)``, ``W2`` ``(Lw, d, d_ff)``, ``b2``
  ``(Lw, d)``: the feed-forward block (when ``ffn``);
* ``ln_<site>_g``, ``ln_<site>_b`` ``(Lw, d)`` (``ln_final_*``: ``(d,)``): LN gains
  and biases (when ``learned_norm``);
* ``W_out`` ``(d, vocab)``, ``b_out`` ``(vocab,)``: the readout.

The attention update of token ``i`` is
:math:`u_i = \sum_h \sum_j A^h_{ij} V_h x_j` with
:math:`A^h_{ij} = e^{\beta\langle Q_hx_i, K_hx_j\rangle}/Z^h_i`, :math:`Z^h_i` the row
sum (``"sa"``) or ``n`` (``"usa"``), over ``j <= i`` when ``causal``. The layers are
those of :mod:`attnlib.nets.config`. The initial state is
:math:`\mathrm{LN}(E_{t_i} + P_i)` for post-LN and :math:`E_{t_i} + P_i` otherwise; the
logits read :math:`\mathrm{LN}` of the last state (the state itself for post-LN and
``"none"``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

import jax
import jax.numpy as jnp

from attnlib._validation import as_finite, as_numeric, check_int
from attnlib.nets._budget import check_bytes
from attnlib.nets.config import NetConfig

__all__ = [
    "NetRun",
    "init_params",
    "param_shapes",
    "forward",
    "layer_map",
    "loss",
    "normalise",
]

_TINY = 1e-30


def _layer_names(config: NetConfig) -> list[str]:
    names = ["Q", "K", "V"]
    if config.ffn:
        names += ["W1", "b1", "W2", "b2"]
    if config.learned_norm:
        for sub in _norm_sites(config):
            names += [f"ln_{sub}_g", f"ln_{sub}_b"]
    return names


def _norm_sites(config: NetConfig) -> list[str]:
    """The layer norms of one layer with learned parameters."""
    if config.norm == "none":
        return []
    subs = ["attn"] + (["ffn"] if config.ffn else [])
    if config.norm == "peri":
        subs += [f"{s}_out" for s in subs]
    return subs


def param_shapes(config: NetConfig) -> dict[str, tuple[int, ...]]:
    """The name and shape of every parameter of ``config``."""
    if not isinstance(config, NetConfig):
        raise TypeError(f"config must be a NetConfig, got {type(config).__name__}")
    d, H, dh, V = config.d_model, config.n_heads, config.d_head, config.vocab_size
    Lw = 1 if config.shared else config.n_layers
    shapes = {
        "embed": (V, d),
        "pos": (config.max_len, d),
        "Q": (Lw, H, dh, d),
        "K": (Lw, H, dh, d),
        "V": (Lw, H, d, d),
    }
    if config.ffn:
        f = config.d_ff
        shapes.update(W1=(Lw, f, d), b1=(Lw, f), W2=(Lw, d, f), b2=(Lw, d))
    if config.learned_norm:
        for sub in _norm_sites(config):
            shapes[f"ln_{sub}_g"] = (Lw, d)
            shapes[f"ln_{sub}_b"] = (Lw, d)
        if config.norm != "none":
            shapes["ln_final_g"] = (d,)
            shapes["ln_final_b"] = (d,)
    shapes.update(W_out=(d, V), b_out=(V,))
    return shapes


def init_params(config: NetConfig, seed: int) -> dict[str, np.ndarray]:
    r"""Random parameters (float32) for ``config``, reproducible from ``seed``.

    Scales for unit-norm tokens: entries of ``Q``, ``K`` are :math:`N(0, 1)` (so
    that :math:`\beta\langle Q_hx, K_hy\rangle` is of order one with
    :math:`\beta = 1/\sqrt{d_{head}}`), those of ``V`` :math:`N(0, 1/(dH))` (an
    update of norm about one), embeddings :math:`N(0, 1/d)` (rows of norm about
    one), ``W1`` :math:`N(0, 1)`, ``W2`` :math:`N(0, 2/(d\,d_{ff}))`, ``W_out``
    :math:`N(0, 0.01)` (a small readout: early training does not gain by making
    the output independent of the input); biases zero, LN gains one.

    Parameters
    ----------
    config : NetConfig
    seed : int
        Seed of a ``numpy.random.Generator``.

    Returns
    -------
    dict of str to ndarray (float32)

    Examples
    --------
    >>> from attnlib.nets import NetConfig
    >>> p = init_params(NetConfig(vocab_size=10, d_model=8, n_heads=2), seed=0)
    >>> p["Q"].shape, p["V"].shape
    ((1, 2, 4, 8), (1, 2, 8, 8))
    """
    shapes = param_shapes(config)
    seed = check_int(seed, "seed")
    # float32 results drawn in float64: 12 bytes per entry at the peak
    check_bytes(
        12 * sum(math.prod(shape) for shape in shapes.values()),
        f"init_params for a config with vocab_size={config.vocab_size}, "
        f"d_model={config.d_model}, n_layers={config.n_layers} "
        f"(shared={config.shared}), d_ff={config.d_ff}, max_len={config.max_len}",
        "choose a smaller config",
    )
    rng = np.random.default_rng(seed)
    d, H, f = config.d_model, config.n_heads, config.d_ff
    scale = {
        "embed": 1 / np.sqrt(d),
        "pos": 1 / np.sqrt(d),
        "Q": 1.0,
        "K": 1.0,
        "V": 1 / np.sqrt(d * H),
        "W1": 1.0,
        "W2": np.sqrt(2.0 / (d * f)),
        "W_out": 0.1,
    }
    out = {}
    for name, shape in shapes.items():
        if name in scale:
            out[name] = (scale[name] * rng.standard_normal(shape)).astype(np.float32)
        elif name.endswith("_g"):
            out[name] = np.ones(shape, np.float32)
        else:
            out[name] = np.zeros(shape, np.float32)
    return out


# ------------------------------------------------------------------ the layers


def normalise(y):
    """Rows divided by their norm (LN without its learned part)."""
    return y * jax.lax.rsqrt(jnp.maximum(jnp.sum(y * y, axis=-1, keepdims=True), _TINY))


def _ln(y, p, site, config):
    x = normalise(y)
    if config.learned_norm:
        x = x * p[f"ln_{site}_g"] + p[f"ln_{site}_b"]
    return x


def _attention(x, p, config):
    """Update ``u`` (B, n, d) and weights ``A`` (B, H, n, n) of normalised ``x``."""
    n = x.shape[-2]
    q = jnp.einsum("bnd,hkd->bhnk", x, p["Q"])
    k = jnp.einsum("bnd,hkd->bhnk", x, p["K"])
    s = config.inverse_temperature * jnp.einsum("bhik,bhjk->bhij", q, k)
    mask = jnp.tril(jnp.ones((n, n), bool)) if config.causal else None
    if config.attention == "sa":
        if mask is not None:
            s = jnp.where(mask, s, -jnp.inf)
        A = jax.nn.softmax(s, axis=-1)
    else:
        A = jnp.exp(s) / n
        if mask is not None:
            A = jnp.where(mask, A, 0.0)
    v = jnp.einsum("bnd,hed->bhne", x, p["V"])
    return jnp.einsum("bhij,bhje->bie", A, v), A


def _ffn(x, p):
    z = jax.nn.relu(jnp.einsum("bnd,fd->bnf", x, p["W1"]) + p["b1"])
    return jnp.einsum("bnf,df->bnd", z, p["W2"]) + p["b2"]


def _layer(p, Y, config):
    """One layer on the state ``Y`` (B, n, d); returns the new state and ``A``."""
    h = config.step
    norm = config.norm
    if norm == "post":
        u, A = _attention(Y, p, config)
        Y = _ln(Y + h * u, p, "attn", config)
        if config.ffn:
            Y = _ln(Y + h * _ffn(Y, p), p, "ffn", config)
    elif norm == "none":
        u, A = _attention(Y, p, config)
        Y = Y + h * u
        if config.ffn:
            Y = Y + h * _ffn(Y, p)
    else:
        u, A = _attention(_ln(Y, p, "attn", config), p, config)
        if norm == "peri":
            u = _ln(u, p, "attn_out", config)
        Y = Y + h * u
        if config.ffn:
            f = _ffn(_ln(Y, p, "ffn", config), p)
            if norm == "peri":
                f = _ln(f, p, "ffn_out", config)
            Y = Y + h * f
    return Y, A


def _embed(params, tokens, config):
    n = tokens.shape[-1]
    Y = params["embed"][tokens] + params["pos"][:n]
    if config.norm == "post":
        Y = _ln(Y, params, "final", config)
    return Y


def _readout(params, Y, config):
    if config.norm in ("pre", "peri"):
        Y = _ln(Y, params, "final", config)
    return Y @ params["W_out"] + params["b_out"]


def _layer_params(params, config, layer):
    return {name: params[name][layer] for name in _layer_names(config)}


@partial(jax.jit, static_argnames=("config", "n_layers"))
def _run(params, tokens, config, n_layers):
    """Logits after ``n_layers`` layers, one compiled loop (``lax.scan``): the path
    of training, which keeps no intermediate state."""
    Y0 = _embed(params, tokens, config)
    if config.shared:
        p = _layer_params(params, config, 0)
        Y, _ = jax.lax.scan(
            lambda Y, _: (_layer(p, Y, config)[0], None), Y0, None, length=n_layers
        )
    else:
        stacked = {name: params[name][:n_layers] for name in _layer_names(config)}
        Y, _ = jax.lax.scan(lambda Y, p: (_layer(p, Y, config)[0], None), Y0, stacked)
    return _readout(params, Y, config)


_embed_jit = jax.jit(_embed, static_argnames=("config",))
_layer_jit = jax.jit(_layer, static_argnames=("config",))
_readout_jit = jax.jit(_readout, static_argnames=("config",))


# ------------------------------------------------------------------ public API


@dataclass(frozen=True)
class NetRun:
    """The record of :func:`forward`.

    Attributes
    ----------
    states : ndarray, shape (L + 1, B, n, d)
        The state before the first layer and after each layer.
    normed : ndarray, shape (L + 1, B, n, d)
        The states divided by their norm (LN without its learned part): the tokens
        on the sphere that the book's model moves (equal to ``states`` for post-LN
        without ``learned_norm``).
    attention : ndarray, shape (L, B, H, n, n)
        The attention weights of each layer and head.
    logits : ndarray, shape (B, n, vocab)
    """

    states: np.ndarray
    normed: np.ndarray
    attention: np.ndarray
    logits: np.ndarray


def _check_params(params: Any, config: NetConfig) -> dict:
    if not isinstance(config, NetConfig):
        raise TypeError(f"config must be a NetConfig, got {type(config).__name__}")
    if not isinstance(params, dict):
        raise TypeError(f"params must be a dict of arrays, got {type(params).__name__}")
    shapes = param_shapes(config)
    missing = sorted(set(shapes) - set(params))
    extra = sorted(set(params) - set(shapes))
    if missing or extra:
        raise ValueError(
            f"params do not match the config: missing {missing}, unexpected {extra}"
        )
    for name, shape in shapes.items():
        got = tuple(np.shape(params[name]))
        if got != shape:
            raise ValueError(
                f"params[{name!r}] must have shape {shape} for this config, got {got}"
            )
        value = params[name]
        if isinstance(value, jax.core.Tracer):  # inside jax.grad or jit: no values
            continue
        arr = as_numeric(value, f"params[{name!r}]")
        if not np.all(np.isfinite(arr)):
            raise ValueError(
                f"params[{name!r}] must contain only finite values (found NaN or inf)"
            )
    return {k: jnp.asarray(params[k]) for k in shapes}


def _layer_bytes(config: NetConfig, batch: int, n: int) -> int:
    """Bytes (float64, to be safe) of the temporaries of one layer on ``batch``
    sequences of ``n`` tokens: queries, keys, values, logits, weights, feed-forward."""
    d, H = config.d_model, config.n_heads
    return 8 * batch * n * (4 * d + 2 * H * d + 2 * H * n + config.d_ff)


def _check_tokens(tokens: Any, config: NetConfig, name: str = "tokens") -> np.ndarray:
    arr = as_numeric(tokens, name, "array of token ids")
    if not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"{name} must be an integer array, got dtype {arr.dtype}")
    if arr.ndim == 1:
        arr = arr[None]
    if arr.ndim != 2 or arr.size == 0:
        raise ValueError(
            f"{name} must have shape (n,) or (B, n), got {np.shape(tokens)}"
        )
    if arr.shape[1] > config.max_len:
        raise ValueError(
            f"{name} has sequences of length {arr.shape[1]}, longer than the "
            f"config's max_len={config.max_len}"
        )
    if arr.min() < 0 or arr.max() >= config.vocab_size:
        raise ValueError(
            f"{name} must be ids in [0, {config.vocab_size}), got values in "
            f"[{arr.min()}, {arr.max()}]"
        )
    return arr.astype(np.int32)


def _check_depth(n_layers: Any, config: NetConfig) -> int:
    if n_layers is None:
        return config.n_layers
    n_layers = check_int(n_layers, "n_layers", low=1)
    if n_layers > config.n_layers and not config.shared:
        raise ValueError(
            f"n_layers={n_layers} exceeds the trained depth {config.n_layers}: only "
            "a weight-shared network (shared=True) can iterate its layer further"
        )
    return n_layers


def forward(
    params: dict, tokens: Any, config: NetConfig, *, n_layers: int | None = None
) -> NetRun:
    """Run the network on ``tokens`` and record every layer.

    Parameters
    ----------
    params : dict of str to array
        As made by :func:`init_params` (float32, or float64 with JAX's x64 mode).
    tokens : array_like of int, shape (n,) or (B, n)
    config : NetConfig
    n_layers : int, optional
        Depth to run (default: the trained depth). A shared network may run deeper
        than it was trained, iterating its one layer ("layers as time").

    Returns
    -------
    NetRun

    Examples
    --------
    >>> import numpy as np
    >>> from attnlib.nets import NetConfig, init_params
    >>> cfg = NetConfig(vocab_size=5, d_model=4, n_heads=1, n_layers=2, ffn=False)
    >>> run = forward(init_params(cfg, 0), np.array([0, 1, 2]), cfg, n_layers=6)
    >>> run.states.shape, run.attention.shape
    ((7, 1, 3, 4), (6, 1, 1, 3, 3))
    >>> bool(np.allclose(np.linalg.norm(run.states, axis=-1), 1, atol=1e-5))
    True
    """
    p = _check_params(params, config)
    tok = _check_tokens(tokens, config)
    L = _check_depth(n_layers, config)
    B, n = tok.shape
    d, H = config.d_model, config.n_heads
    # what the record keeps (states, normed, attention), 8 bytes an entry, and one
    # layer's temporaries: checked before anything is allocated
    check_bytes(
        8 * (2 * (L + 1) * B * n * d + L * B * H * n * n + B * n * config.vocab_size)
        + _layer_bytes(config, B, n),
        f"forward with n_layers={L} on tokens of shape {tok.shape} (d_model={d}, "
        f"n_heads={H})",
        "lower n_layers or the number of sequences in tokens",
    )
    # one compiled layer called L times: any depth runs without a new compilation
    layers = [_layer_params(p, config, k) for k in range(1 if config.shared else L)]
    Y = _embed_jit(p, jnp.asarray(tok), config)
    first = np.asarray(Y)
    states = np.empty((L + 1,) + first.shape, first.dtype)
    attention = np.empty((L, B, H, n, n), first.dtype)
    states[0] = first
    for k in range(L):
        Y, A = _layer_jit(layers[0 if config.shared else k], Y, config)
        states[k + 1] = np.asarray(Y)
        attention[k] = np.asarray(A)
    logits = _readout_jit(p, Y, config)
    norms = np.linalg.norm(states, axis=-1, keepdims=True)
    normed = states / np.maximum(norms, np.finfo(states.dtype).tiny)
    return NetRun(states, normed, attention, np.asarray(logits))


def layer_map(params: dict, X: Any, config: NetConfig, *, layer: int = 0) -> np.ndarray:
    r"""One layer of the network applied to states ``X``.

    With ``ffn=False``, post-LN, SA and no learned LN, this is the book's discrete
    layer map :math:`x_i \mapsto (x_i + hy_i)/|x_i + hy_i|`, :math:`y_i` the
    multi-head attention output (``mod-prop-layers``).

    Parameters
    ----------
    params : dict
    X : array_like, shape (n, d) or (B, n, d)
    config : NetConfig
    layer : int
        Which layer's weights (``0`` for a shared network).

    Returns
    -------
    ndarray, the shape of ``X``
    """
    p = _check_params(params, config)
    arr = as_numeric(X, "X").astype(p["Q"].dtype, copy=False)
    if arr.ndim not in (2, 3) or arr.shape[-1] != config.d_model or arr.size == 0:
        raise ValueError(
            f"X must have a non-empty shape (n, d) or (B, n, d) with d = "
            f"{config.d_model}, got {arr.shape}"
        )
    if not np.all(np.isfinite(arr)):
        raise ValueError("X must contain only finite values (found NaN or inf)")
    check_bytes(
        _layer_bytes(config, math.prod(arr.shape[:-2]), arr.shape[-2]),
        f"layer_map on X of shape {arr.shape} (n_heads={config.n_heads})",
        "pass fewer or shorter sequences in X",
    )
    Lw = 1 if config.shared else config.n_layers
    layer = check_int(layer, "layer")
    if layer >= Lw:
        raise ValueError(f"layer must be < {Lw} for this config, got {layer}")
    Y, _ = _layer_jit(
        _layer_params(p, config, layer),
        jnp.asarray(arr.reshape((-1,) + arr.shape[-2:])),
        config,
    )
    return np.asarray(Y).reshape(arr.shape)


@partial(jax.jit, static_argnames=("config",))
def _loss(params, inputs, targets, weights, config):
    logits = _run(params, inputs, config, config.n_layers)
    logp = jax.nn.log_softmax(logits, axis=-1)
    nll = -jnp.take_along_axis(logp, targets[..., None], axis=-1)[..., 0]
    return jnp.sum(nll * weights) / jnp.maximum(jnp.sum(weights), 1.0)


def loss(params: dict, inputs: Any, targets: Any, weights: Any, config: NetConfig):
    """Mean cross-entropy (nats per predicted token) of ``targets`` given ``inputs``.

    ``weights`` (the shape of ``targets``, ``(B, n)``, values in ``[0, 1]``) selects
    the predicted positions (1) and the ignored ones (0).
    Differentiable in ``params`` with ``jax.grad`` (pass JAX arrays); returns a JAX
    scalar.
    """
    p = _check_params(params, config)
    inp = _check_tokens(inputs, config, "inputs")
    tgt = _check_tokens(targets, config, "targets")
    w = as_finite(weights, "weights")
    if np.any((w < 0) | (w > 1)):
        raise ValueError(
            "weights must lie in [0, 1] (1 for a predicted position, 0 for an ignored "
            f"one), got values in [{w.min():g}, {w.max():g}]"
        )
    w = w.astype(p["Q"].dtype)
    if tgt.shape != inp.shape or w.shape != inp.shape:
        raise ValueError(
            "inputs, targets and weights must have the same shape (B, n), got "
            f"{inp.shape}, {tgt.shape} and {w.shape}"
        )
    check_bytes(
        _layer_bytes(config, *inp.shape) + 8 * inp.size * config.vocab_size,
        f"loss on inputs of shape {inp.shape} (n_heads={config.n_heads}, "
        f"vocab_size={config.vocab_size})",
        "pass fewer sequences in inputs",
    )
    return _loss(p, jnp.asarray(inp), jnp.asarray(tgt), jnp.asarray(w), config)
