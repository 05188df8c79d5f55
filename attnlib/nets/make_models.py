"""Train the networks of the chapter on trained Transformers and write their weights.

``python -m attnlib.nets.make_models [NAME ...] [--out book/models]`` (``make
models``) trains each model of :data:`MODELS` from its recorded seed and writes
``<out>/<name>.npz`` (:func:`attnlib.nets.save`: parameters, config, metadata) and
``<out>/<name>.json`` (the same metadata, readable without numpy). The metadata hold
the configuration, seed, training settings, the loss curve, the SHA-256 of the
corpus, the tokenizer, the versions of Python, numpy, JAX and optax, the wall time,
and :func:`evaluate`'s numbers on a fixed batch (what a retraining must reproduce).

The encoders are trained by masked-token prediction on the standard-library
docstrings (:func:`attnlib.nets.data.stdlib_corpus`), the causal model by next-token
prediction on the same text. Random baselines need no file:
``init_params(config, seed)``.
"""

from __future__ import annotations

import argparse
import functools
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from attnlib.nets import analysis
from attnlib.nets.config import NetConfig
from attnlib.nets.data import (
    CharTokenizer,
    CorpusTask,
    read_corpus,
    stdlib_corpus,
    write_corpus,
)

__all__ = [
    "MODELS",
    "VOCAB",
    "MASK_RATE",
    "corpus_tokens",
    "evaluation_batch",
    "evaluate",
    "build",
]

#: Size of the character vocabulary (the most frequent characters of the corpus,
#: plus the mask and unknown ids).
VOCAB = 80
#: Share of the positions masked in the encoders' training and evaluation batches.
MASK_RATE = 0.3
_LEN = 32


def _config(**kw: Any) -> NetConfig:
    base = dict(
        vocab_size=VOCAB,
        d_model=32,
        n_heads=2,
        n_layers=12,
        shared=True,
        attention="sa",
        norm="post",
        causal=False,
        step=0.25,
        ffn=True,
        d_ff=64,
        max_len=_LEN,
    )
    return NetConfig(**{**base, **kw})


_TRAIN = dict(batch_size=32, length=_LEN, lr=1e-2, steps=600)
# Masked-character prediction has a long plateau at the character frequencies: in
# 600 steps of 32 windows no encoder left it (loss within 0.04 nats of the character
# entropy, attention spread evenly over the window); with 4000 steps of 64 windows the
# pre- and peri-LN encoders learn to read their neighbours. The three encoders share
# this recipe, so that what differs between them is where the layer norm sits.
_ENCODER_TRAIN = dict(batch_size=64, length=_LEN, lr=1e-2, steps=4000)

#: Name -> configuration and training settings of every model of the chapter.
MODELS: dict[str, dict[str, Any]] = {
    "encoder_post": dict(config=_config(norm="post"), seed=0, **_ENCODER_TRAIN),
    "encoder_pre": dict(config=_config(norm="pre"), seed=0, **_ENCODER_TRAIN),
    "encoder_peri": dict(config=_config(norm="peri"), seed=0, **_ENCODER_TRAIN),
    # The post-LN encoder of this recipe stays on the plateau, its tokens collapsed
    # to one point. With a step of 0.1 instead of 0.25 and the learning rate warmed
    # up over 500 steps instead of 50, the same architecture leaves it at about step
    # 1600 of 4000 and learns (evaluation loss 2.59 nats; 2.84 with lr 3e-3).
    # Runs of 1500 steps left the plateau in none of these variants: lr 1e-3 or
    # 3e-3, six layers, a 1000-step warm-up, h = 0.1 (with a 50- or 500-step
    # warm-up), a learned gain, beta = 1, no feed-forward block. With h = 0.1 and
    # a 50-step warm-up, a learned gain, beta = 1 or no feed-forward block the
    # tokens collapsed to one point.
    "encoder_post_warm": dict(
        config=_config(norm="post", step=0.1), seed=0, warmup=500, **_ENCODER_TRAIN
    ),
    "causal_pre": dict(
        config=_config(norm="pre", causal=True, n_layers=6), seed=0, **_TRAIN
    ),
}


#: the training text, beside the weights (``make models`` writes it from this
#: Python's standard library when it is missing)
CORPUS_FILE = "corpus.txt"


@functools.lru_cache(maxsize=2)
def corpus_tokens(folder: str = "book/models"):
    """The corpus, its tokenizer (:data:`VOCAB` ids) and the token stream (read once
    per process; the stream is read-only). The corpus is the models' own
    (``folder/corpus.txt``), so that they train and evaluate the same on every
    Python; without that file, this Python's standard-library docstrings."""
    path = Path(folder) / CORPUS_FILE
    corpus = read_corpus(path) if path.is_file() else stdlib_corpus()
    tok = CharTokenizer.fit(corpus.text, max_vocab=VOCAB)
    ids = tok.encode(corpus.text)
    ids.flags.writeable = False
    return corpus, tok, ids


def evaluation_batch(tokens: np.ndarray, causal: bool, *, batch_size: int = 16):
    """A fixed batch of the stream (seed 2024): the model's objective on it."""
    task = CorpusTask(tokens, "next" if causal else "masked", mask_rate=MASK_RATE)
    return task.sample(np.random.default_rng(2024), batch_size, _LEN)


def evaluate(params: dict, config: NetConfig, tokens: np.ndarray) -> dict[str, float]:
    """Loss and analysis numbers of a model on :func:`evaluation_batch`.

    ``loss``: mean cross-entropy (nats); ``mean_inner_product_last``: the mean
    :math:`\\langle\\hat x_i, \\hat x_j\\rangle` at the last layer;
    ``effective_rank_last``: the mean effective rank of the token matrices at the
    last layer.
    """
    from attnlib.nets.model import forward, loss

    b = evaluation_batch(tokens, config.causal)
    run = forward(params, b.inputs, config)
    return {
        "loss": float(loss(params, b.inputs, b.targets, b.weights, config)),
        "mean_inner_product_last": float(analysis.mean_inner_product(run.normed)[-1]),
        "effective_rank_last": float(np.mean(analysis.effective_rank(run.normed[-1]))),
    }


def _versions() -> dict[str, str]:
    import jax
    import jaxlib
    import optax

    from attnlib._version import __version__

    return {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "jax": jax.__version__,
        "jaxlib": jaxlib.__version__,
        "optax": optax.__version__,
        "attnlib": __version__,
    }


def build(name: str, out: Path, *, progress: bool = True, data=None) -> dict:
    """Train the model ``name`` of :data:`MODELS` and write its two files."""
    from attnlib.nets.io import save
    from attnlib.nets.train import train

    if name not in MODELS:
        raise ValueError(f"name must be one of {sorted(MODELS)}, got {name!r}")
    spec = MODELS[name]
    corpus, tok, ids = corpus_tokens(str(out)) if data is None else data
    cfg = spec["config"]
    kw = {k: spec[k] for k in ("steps", "batch_size", "length", "lr", "seed")}
    if "warmup" in spec:  # the others keep train's default (50 steps)
        kw["warmup"] = spec["warmup"]
    t0 = time.perf_counter()
    task = CorpusTask(ids, "next" if cfg.causal else "masked", mask_rate=MASK_RATE)
    res = train(cfg, task, progress=progress, **kw)
    meta = {
        "name": name,
        "objective": "next" if cfg.causal else "masked",
        "mask_rate": MASK_RATE,
        **kw,
        "final_loss": float(np.mean(res.losses[-20:])),
        "losses_every_10": [round(float(x), 5) for x in res.losses[::10]],
        "tokens_per_s": round(res.tokens_per_s, 1),
        "compile_s": round(res.compile_s, 2),
        "wall_s": round(time.perf_counter() - t0, 2),
        "corpus_sha256": corpus.sha256,
        "corpus_chars": len(corpus.text),
        "corpus_sources": list(corpus.sources),
        "tokenizer": tok.to_dict(),
        "versions": _versions(),
        "evaluation": evaluate(res.params, cfg, ids),
    }
    out.mkdir(parents=True, exist_ok=True)
    save(out / f"{name}.npz", res.params, cfg, meta)
    record = {"config": json.loads(cfg.to_json()), **meta}
    (out / f"{name}.json").write_text(
        json.dumps(record, indent=1, sort_keys=True) + "\n"
    )
    return meta


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="models to train (default: all)")
    parser.add_argument("--out", default="book/models", help="output folder")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    names = args.names or list(MODELS)
    unknown = sorted(set(names) - set(MODELS))
    if unknown:
        parser.error(f"unknown models {unknown}; known: {sorted(MODELS)}")
    data = corpus_tokens(args.out)
    corpus_file = Path(args.out) / CORPUS_FILE
    if not corpus_file.is_file():
        Path(args.out).mkdir(parents=True, exist_ok=True)
        write_corpus(data[0], corpus_file)
    t0 = time.perf_counter()
    for name in names:
        meta = build(name, Path(args.out), progress=not args.no_progress, data=data)
        print(
            f"{name}: final loss {meta['final_loss']:.3f} nats, "
            f"{meta['tokens_per_s']:.0f} tokens/s, {meta['wall_s']:.0f} s",
            flush=True,
        )
    print(f"all: {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
