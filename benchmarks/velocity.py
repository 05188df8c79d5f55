"""SA velocity field: attnlib's block-tiled evaluation against the textbook one.

The textbook evaluation forms the n x n attention matrix with
``scipy.special.softmax(beta * X @ X.T, axis=1) @ X`` and projects on the tangent
space. attnlib exponentiates each symmetric tile once (half the exponentials) and
never holds more than ``block x block`` kernel entries.

Run: ``python benchmarks/velocity.py`` (prints a table of time ratios and peak memory,
all measured in this one run).
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy.special import softmax

from attnlib import Model, sample_sphere
from timing import best_time, peak_bytes


def textbook(X: np.ndarray, beta: float) -> np.ndarray:
    V = softmax(beta * X @ X.T, axis=1) @ X
    return V - np.sum(V * X, axis=1, keepdims=True) * X


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[256, 1024, 4096])
    p.add_argument("--beta", type=float, default=1.0)
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args()
    model = Model(beta=args.beta)
    print(f"SA velocity, d = 3, float64, beta = {args.beta}, block = {model.block}")
    print(
        f"{'n':>6} {'textbook [ms]':>14} {'attnlib [ms]':>13} {'speed-up':>9} "
        f"{'textbook peak':>14} {'attnlib peak':>13}"
    )
    for n in args.sizes:
        X = sample_sphere(n, 3, rng=0)
        err = np.max(np.abs(textbook(X, args.beta) - model.velocity(X)))
        assert err < 1e-12, f"the two evaluations disagree by {err:.2e}"
        t_ref = best_time(lambda: textbook(X, args.beta), args.repeat)
        t_lib = best_time(lambda: model.velocity(X), args.repeat)
        m_ref = peak_bytes(lambda: textbook(X, args.beta))
        m_lib = peak_bytes(lambda: model.velocity(X))
        print(
            f"{n:>6} {1e3 * t_ref:>14.2f} {1e3 * t_lib:>13.2f} {t_ref / t_lib:>8.1f}x "
            f"{m_ref / 2**20:>11.1f} MB {m_lib / 2**20:>10.2f} MB"
        )


if __name__ == "__main__":
    main()
