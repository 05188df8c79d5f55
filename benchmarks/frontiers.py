"""Benchmark of the frontiers chapter's largest runs.

Run with ``python benchmarks/frontiers.py``. Prints, in one run,

* the Monte Carlo run of the lost-in-the-middle section (the chapter's largest
  ensemble: 4096 systems of 32 causal tokens on the circle, Heun with dt = 0.1 up to
  t = 1, 20 field evaluations): its time, the time per system-step, and the same
  ensemble evaluated with a plain numpy broadcast of the angle form (the textbook
  code), their ratio and their largest difference;
* the run of [DGR]'s script (64 tokens, RK4 with dt = 0.0025 up to t = 10, 4000
  steps) with ``attnlib`` against a transliteration of the script's loop over the
  tokens, their ratio and the largest difference of the final angles;
* the attention rows of the long-context section at n = 1e4, d = 64 (256 rows
  against every key, four values of beta).
"""

from __future__ import annotations

import numpy as np

from attnlib import _kernel, simulate
from attnlib.frontiers import CausalModel, positional_weights
from attnlib.frontiers import causal_run, four_clusters
from timing import best_time


def textbook_field(theta: np.ndarray, W: np.ndarray, beta: float) -> np.ndarray:
    """Angle form of the positional causal field by one (B, n, n) broadcast."""
    D = theta[..., :, None] - theta[..., None, :]
    return -np.sum(W * np.sin(D) * np.exp(beta * np.cos(D)), axis=-1)


def script_force(theta: np.ndarray, beta: float, W: np.ndarray) -> np.ndarray:
    """The force of [DGR]'s script: a Python loop over the tokens."""
    out = np.zeros_like(theta)
    for j in range(1, theta.size):
        diff = theta[j] - theta[:j]
        out[j] = np.dot(W[j, :j], -beta * np.sin(diff) * np.exp(beta * np.cos(diff)))
    return out


def script_run(theta: np.ndarray, beta: float, lam: float, t_max: float, dt: float):
    n = theta.size
    W = positional_weights(n, lam / n)
    for _ in range(int(round(t_max / dt))):
        k1 = script_force(theta, beta, W)
        k2 = script_force(theta + 0.5 * dt * k1, beta, W)
        k3 = script_force(theta + 0.5 * dt * k2, beta, W)
        k4 = script_force(theta + dt * k3, beta, W)
        theta = theta + (dt / 6.0) * (k1 + 2 * k2 + 2 * k3 + k4)
    return theta


def main() -> None:
    # 1. the Monte Carlo ensemble
    n, B = 32, 4096
    th0 = np.random.default_rng(5).uniform(0, 2 * np.pi, (B, n))
    X0 = np.stack([np.cos(th0), np.sin(th0)], axis=-1)
    model = CausalModel(1.0, slope=1 / n, normalization="positional")
    out = {}
    t_run = best_time(
        lambda: out.__setitem__(
            "run",
            simulate(model, X0, times=[0.0, 1.0], dt=0.1, method="heun"),
        ),
        repeat=1,
    )
    W = positional_weights(n, 1 / n)
    t_lib = best_time(lambda: out.__setitem__("lib", model.rhs(X0)), repeat=3)
    t_txt = best_time(
        lambda: out.__setitem__("txt", textbook_field(th0, W, 1.0)), repeat=3
    )
    tangent = np.stack([-np.sin(th0), np.cos(th0)], axis=-1)
    diff = np.max(np.abs(np.sum(out["lib"] * tangent, axis=-1) - out["txt"]))
    steps = out["run"].n_steps
    print(
        f"Monte Carlo ensemble ({B} x {n} tokens, {steps} Heun steps): {t_run:.2f} s, "
        f"{1e6 * t_run / (B * steps):.1f} us per system-step"
    )
    print(
        f"  one field evaluation: attnlib {1e3 * t_lib:.1f} ms, textbook broadcast "
        f"{1e3 * t_txt:.1f} ms, ratio {t_txt / t_lib:.2f}, max difference {diff:.1e}"
    )
    # 2. the authors' run
    theta, _ = four_clusters(64, rng=17)
    t_lib_run = best_time(
        lambda: out.__setitem__(
            "a", causal_run(theta, beta=1.0, lam=1.0, t_final=10.0, dt=0.0025)
        ),
        repeat=1,
    )
    t_script = best_time(
        lambda: out.__setitem__("s", script_run(theta, 1.0, 1.0, 10.0, 0.0025)),
        repeat=1,
    )
    final = out["a"][1][-1]
    gap = np.max(np.abs(np.angle(np.exp(1j * (final - out["s"])))))
    print(
        f"[DGR] run (64 tokens, 4000 RK4 steps): attnlib {t_lib_run:.2f} s, the "
        f"script's loop {t_script:.2f} s, ratio {t_script / t_lib_run:.1f}, "
        f"final angles differ by {gap:.1e}"
    )
    # 3. long-context attention rows
    n_l, d_l, rho = 10_000, 64, 0.5
    G = np.random.default_rng(0).standard_normal((n_l, d_l - 1))
    G /= np.linalg.norm(G, axis=1, keepdims=True)
    X = np.c_[np.full(n_l, np.sqrt(rho)), np.sqrt(1 - rho) * G]
    rows = np.arange(256)

    def rows_weights():
        for g in (0.5, 0.9, 1.1, 1.5):
            beta = g / (1 - rho) * np.log(n_l)
            _kernel.attention_weights(_kernel.logits(X[rows], beta, Y=X))

    t_rows = best_time(rows_weights, repeat=3)
    print(f"long-context rows (256 x {n_l}, d = {d_l}, four betas): {t_rows:.2f} s")


if __name__ == "__main__":
    main()
