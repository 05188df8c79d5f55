"""Benchmark of attnlib.nets: training, iterating a trained layer, the chapter's path.

Run with ``python benchmarks/training.py`` (after ``make models``). Prints, in one
run,

* training throughput: input tokens per second of the AdamW step of the chapter's
  12-layer shared post-LN encoder (``encoder_post`` of
  :data:`attnlib.nets.make_models.MODELS`), 60 steps after the compilation, and the
  compilation time;
* iterating the trained shared layer ("layers as time"): layers per second of
  :func:`attnlib.nets.forward` on 16 sequences of 32 tokens at depth 12 and 96 (both
  compiled first), and the same per layer through :func:`attnlib.nets.layer_map`;
* the chapter's path: load every model of ``book/models``, run a batch through it at
  its trained depth and at four times that depth, and compute the analysis
  (histograms, effective rank, clusters, spectra), from a fresh process: the wall
  time includes JAX's import and every compilation.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path


from attnlib.nets import forward, layer_map, load, train
from attnlib.nets.make_models import MODELS, corpus_tokens, evaluation_batch
from timing import best_time

ROOT = Path(__file__).resolve().parents[1]

CHAPTER_PATH = """
import time
t0 = time.perf_counter()
from pathlib import Path
import numpy as np
from attnlib.nets import analysis, forward, load
from attnlib.nets.make_models import corpus_tokens, evaluation_batch
_, _, ids = corpus_tokens("book/models")
for path in sorted(Path("book/models").glob("*.npz")):
    params, cfg, meta = load(path)
    b = evaluation_batch(ids, cfg.causal)
    for depth in (cfg.n_layers, 4 * cfg.n_layers if cfg.shared else cfg.n_layers):
        run = forward(params, b.inputs, cfg, n_layers=depth)
        analysis.inner_product_histograms(run.normed, bins=40)
        analysis.effective_rank(run.normed)
        analysis.cluster_count(run.normed[-1], 1e-2)
    analysis.qk_spectrum(params["Q"], params["K"])
    analysis.value_spectrum(params["V"])
    analysis.attention_sink(run.attention)
print(f"{time.perf_counter() - t0:.2f}")
"""


def main() -> None:
    _, _, ids = corpus_tokens(str(ROOT / "book" / "models"))
    spec = MODELS["encoder_post"]
    cfg = spec["config"]
    res = train(
        cfg,
        ids,
        steps=61,
        batch_size=spec["batch_size"],
        length=spec["length"],
        lr=spec["lr"],
        seed=0,
        progress=False,
    )
    print(
        f"training ({cfg.n_layers} shared layers, d = {cfg.d_model}, "
        f"{spec['batch_size']} x {spec['length']} tokens per step): "
        f"{res.tokens_per_s:.0f} tokens/s, compilation {res.compile_s:.1f} s"
    )
    path = ROOT / "book" / "models" / "encoder_post.npz"
    params, cfg, _ = load(path) if path.exists() else (res.params, cfg, None)
    tokens = evaluation_batch(ids, cfg.causal).inputs
    for depth in (cfg.n_layers, 8 * cfg.n_layers):
        forward(params, tokens, cfg, n_layers=depth)  # compile
        t = best_time(lambda: forward(params, tokens, cfg, n_layers=depth), repeat=3)
        print(
            f"forward, depth {depth} ({tokens.shape[0]} x {tokens.shape[1]} tokens): "
            f"{t * 1e3:.0f} ms, {depth / t:.0f} layers/s"
        )
    X = forward(params, tokens, cfg).states[0]
    layer_map(params, X, cfg)  # compile
    t = best_time(lambda: layer_map(params, X, cfg), repeat=5)
    print(f"layer_map, one layer: {t * 1e3:.1f} ms, {1 / t:.0f} layers/s")
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", CHAPTER_PATH],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    print(
        f"chapter path (fresh process: import, load, forward, analysis of "
        f"{len(list((ROOT / 'book' / 'models').glob('*.npz')))} models): "
        f"{out.stdout.strip()} s inside, {time.perf_counter() - t0:.1f} s in all"
    )


if __name__ == "__main__":
    main()
