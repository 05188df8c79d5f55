"""Training with optax: AdamW, jit-compiled steps, seeded and reproducible.

Everything random comes from ``seed``: the initial parameters
(:func:`attnlib.nets.init_params` with ``seed``) and the batches (a
``numpy.random.Generator`` seeded with ``[seed, 1]``). The same seed on the same
machine and versions gives the same weights, bit for bit.
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

import jax
import jax.numpy as jnp
import optax

from attnlib._progress import progress_bar
from attnlib._validation import check_bool, check_int, check_real
from attnlib.nets.config import NetConfig
from attnlib.nets.data import CorpusTask, _check_stream
from attnlib.nets._budget import check_bytes
from attnlib.nets.model import (
    _check_params,
    _layer_bytes,
    _loss,
    init_params,
    param_shapes,
)

__all__ = ["TrainResult", "train"]


@dataclass(frozen=True)
class TrainResult:
    """The outcome of :func:`train`.

    Attributes
    ----------
    params : dict of str to ndarray (float32)
    losses : ndarray, shape (steps,)
        The training loss (nats per predicted token) of each step's batch, before
        that step's update.
    tokens_per_s : float
        Input tokens processed per second, compilation excluded.
    compile_s : float
        Seconds to compile the step (and run it once).
    wall_s : float
        Seconds of the whole run.
    config : NetConfig
    seed : int
    """

    params: dict
    losses: np.ndarray
    tokens_per_s: float
    compile_s: float
    wall_s: float
    config: NetConfig
    seed: int


def _task(config: NetConfig, task_or_tokens: Any):
    if hasattr(task_or_tokens, "sample"):
        task = task_or_tokens
    else:
        tokens = _check_stream(task_or_tokens, "task_or_tokens")
        task = CorpusTask(tokens, "next" if config.causal else "masked")
        if task.objective == "next" and not config.causal:
            raise ValueError("next-token prediction needs a causal config")
    vocab = getattr(task, "vocab_size", None)
    if vocab is not None and vocab > config.vocab_size:
        raise ValueError(
            f"the task uses {vocab} token ids, more than config.vocab_size="
            f"{config.vocab_size}"
        )
    return task


@functools.lru_cache(maxsize=16)
def _optimiser(config, lr, steps, warmup, weight_decay, clip):
    """The optimiser and the jit-compiled step, cached: runs that differ only in
    their seed or data compile once."""
    schedule = optax.warmup_cosine_decay_schedule(
        0.0, lr, min(warmup, steps), max(steps, warmup + 1), end_value=0.1 * lr
    )
    opt = optax.chain(
        optax.clip_by_global_norm(clip),
        optax.adamw(schedule, weight_decay=weight_decay),
    )

    @jax.jit
    def step(params, state, inputs, targets, weights):
        value, grads = jax.value_and_grad(_loss)(
            params, inputs, targets, weights, config
        )
        updates, state = opt.update(grads, state, params)
        return optax.apply_updates(params, updates), state, value

    return opt, step


def train(
    config: NetConfig,
    task_or_tokens: Any,
    *,
    steps: int,
    batch_size: int,
    length: int,
    lr: float,
    seed: int,
    weight_decay: float = 0.0,
    warmup: int = 50,
    clip: float = 1.0,
    progress: bool = True,
) -> TrainResult:
    """Train a network of ``config`` with AdamW.

    Parameters
    ----------
    config : NetConfig
    task_or_tokens : task or array_like of int
        A task with a ``sample(rng, batch_size, length) -> Batch`` method
        (:class:`~attnlib.nets.data.CopyTask`, :class:`~attnlib.nets.data.CorpusTask`)
        or a 1-D token stream: next-token prediction for a causal config,
        masked-token prediction (15 %) otherwise.
    steps, batch_size, length : int
        Optimiser steps, sequences per batch, tokens per sequence.
    lr : float
        Peak learning rate (linear warm-up over ``warmup`` steps, then cosine decay
        to 10 %).
    seed : int
    weight_decay : float
        AdamW's decoupled weight decay.
    clip : float
        Gradients are clipped to this global norm.
    progress : bool
        Show a progress bar.

    Returns
    -------
    TrainResult
    """
    if not isinstance(config, NetConfig):
        raise TypeError(f"config must be a NetConfig, got {type(config).__name__}")
    steps = check_int(steps, "steps", low=1)
    batch_size = check_int(batch_size, "batch_size", low=1)
    length = check_int(length, "length", low=1)
    if length > config.max_len:
        raise ValueError(
            f"length must be <= config.max_len={config.max_len}, got {length}"
        )
    lr = check_real(lr, "lr", low=0.0, strict_low=True)
    seed = check_int(seed, "seed")
    weight_decay = check_real(weight_decay, "weight_decay", low=0.0)
    warmup = check_int(warmup, "warmup")
    clip = check_real(clip, "clip", low=0.0, strict_low=True)
    progress = check_bool(progress, "progress")
    # kept until the end: every layer's activations (for the gradient), four copies
    # of the weights (parameters, gradients, AdamW's two moments) and one loss per
    # step (a JAX scalar, about 64 bytes)
    n_params = sum(math.prod(shape) for shape in param_shapes(config).values())
    check_bytes(
        config.n_layers * _layer_bytes(config, batch_size, length)
        + 16 * n_params
        + 64 * steps,
        f"train with steps={steps}, batch_size={batch_size}, length={length} and "
        f"config.n_layers={config.n_layers}",
        "lower steps, batch_size, length or the config's size",
    )
    task = _task(config, task_or_tokens)

    t_start = time.perf_counter()
    params = _check_params(init_params(config, seed), config)
    rng = np.random.default_rng([seed, 1])
    opt, step = _optimiser(config, lr, steps, warmup, weight_decay, clip)
    state = opt.init(params)

    def batch():
        b = task.sample(rng, batch_size, length)
        return jnp.asarray(b.inputs), jnp.asarray(b.targets), jnp.asarray(b.weights)

    losses = []
    with progress_bar(progress, steps, "training") as bar:
        t0 = time.perf_counter()
        params, state, value = step(params, state, *batch())
        losses.append(value)
        jax.block_until_ready(params)
        compile_s = time.perf_counter() - t0
        bar.update()
        t1 = time.perf_counter()
        for _ in range(steps - 1):
            params, state, value = step(params, state, *batch())
            losses.append(value)
            bar.update()
        jax.block_until_ready(params)
        run_s = time.perf_counter() - t1
    losses = np.asarray(jax.device_get(jnp.stack(losses)), dtype=np.float64)
    if not np.all(np.isfinite(losses)):
        first = int(np.argmin(np.isfinite(losses)))
        raise ValueError(
            f"training diverged: the loss is not finite from step {first} on; lower "
            f"lr (here {lr:g}) or weight_decay (here {weight_decay:g})"
        )
    tokens_per_s = (steps - 1) * batch_size * length / run_s if steps > 1 else 0.0
    out = {k: np.asarray(v) for k, v in params.items()}
    return TrainResult(
        out,
        losses,
        float(tokens_per_s),
        compile_s,
        time.perf_counter() - t_start,
        config,
        seed,
    )
