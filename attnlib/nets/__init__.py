"""Small trained Transformers with the book's conventions (JAX and optax).

A multi-head self-attention network with explicit per-head ``Q``, ``K``, ``V``, the
book's inverse temperature ``beta``, SA or USA weights, post-, pre- or peri-LN (or
none), an optional causal mask, ALBERT weight sharing across layers, a residual step
``h`` and a feed-forward block that can be switched off
(:class:`~attnlib.nets.config.NetConfig`). With the feed-forward block off, one
post-LN layer is the book's discrete layer map.

The modules :mod:`~attnlib.nets.config`, :mod:`~attnlib.nets.io`,
:mod:`~attnlib.nets.data` and :mod:`~attnlib.nets.analysis` need numpy only; JAX is
imported on first use of a name of :mod:`~attnlib.nets.model`
(:func:`~attnlib.nets.model.forward`, :func:`~attnlib.nets.model.init_params`, ...)
or :mod:`~attnlib.nets.train` (:func:`~attnlib.nets.train.train`). ``import
attnlib`` does not import this package.
"""

from __future__ import annotations

import importlib
from typing import Any

from attnlib.nets import analysis, data
from attnlib.nets.config import ATTENTIONS, NORMS, NetConfig
from attnlib.nets.data import (
    CharTokenizer,
    CopyTask,
    CorpusTask,
    batches,
    read_corpus,
    stdlib_corpus,
)
from attnlib.nets.io import load, save

__all__ = [
    "ATTENTIONS",
    "NORMS",
    "NetConfig",
    "NetRun",
    "TrainResult",
    "CharTokenizer",
    "CopyTask",
    "CorpusTask",
    "analysis",
    "batches",
    "data",
    "forward",
    "init_params",
    "layer_map",
    "load",
    "loss",
    "param_shapes",
    "save",
    "stdlib_corpus",
    "read_corpus",
    "train",
]

_LAZY = {
    "NetRun": "model",
    "forward": "model",
    "init_params": "model",
    "layer_map": "model",
    "loss": "model",
    "param_shapes": "model",
    "TrainResult": "train",
    "train": "train",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        module = importlib.import_module(f"attnlib.nets.{_LAZY[name]}")
        value = getattr(module, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'attnlib.nets' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
