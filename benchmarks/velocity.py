"""SA velocity field: attnlib's block-tiled evaluation against the textbook one.

The textbook evaluation forms the n x n attention matrix with
``scipy.special.softmax(beta * X @ X.T, axis=1) @ X`` and projects on the tangent
space. attnlib (``attnlib._kernel.symmetric_field``) exponentiates each symmetric
tile once (half the exponentials), with the shifts of the exponent carried by the
product that forms the tile, and never holds more than ``block x block`` kernel
entries.

The floor printed is that of the exponentials alone: n^2 / 2 of them (one per
unordered pair) at the throughput of ``numpy.exp`` measured in the same run, on one
thread. Everything else a tile needs (one product with k + 2 = 5 columns, two
weighted sums with 4 columns) is memory traffic over the tile, of the order of the
exponential again. Every ratio is measured in this one run, best of ``--repeat``.

Run: ``python benchmarks/velocity.py`` (one BLAS thread unless
``OPENBLAS_NUM_THREADS`` says otherwise). With ``--before PATH`` the velocity of the
``attnlib`` of another checkout is timed in the same run, alternately with this one,
and the ratio of the best times is printed per size.
"""

from __future__ import annotations

import argparse
import os

# one thread: the comparison is per core
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from scipy.special import softmax  # noqa: E402

from attnlib import Model, sample_sphere  # noqa: E402
from timing import best_time, load_checkout, peak_bytes  # noqa: E402


def textbook(X: np.ndarray, beta: float) -> np.ndarray:
    V = softmax(beta * X @ X.T, axis=1) @ X
    return V - np.sum(V * X, axis=1, keepdims=True) * X


def exp_ns(repeat: int) -> float:
    """Time of one float64 exponential, in ns, on arrays of the tile's size."""
    W = np.random.default_rng(0).uniform(-2.0, 0.0, (256, 256))
    E = np.empty_like(W)
    return best_time(lambda: np.exp(W, out=E), 10 * repeat) / W.size * 1e9


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[256, 1024, 4096])
    p.add_argument("--beta", type=float, default=1.0)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--before", help="another checkout to compare with (one core)")
    args = p.parse_args()
    model = Model(beta=args.beta)
    threads = os.environ.get("OPENBLAS_NUM_THREADS")
    e_ns = exp_ns(args.repeat)
    print(
        f"SA velocity, d = 3, float64, beta = {args.beta}, block = {model.block}, "
        f"OPENBLAS_NUM_THREADS = {threads}; exp: {e_ns:.2f} ns"
    )
    print(
        f"{'n':>6} {'textbook [ms]':>14} {'attnlib [ms]':>13} {'floor [ms]':>11} "
        f"{'speed-up':>9} {'of floor':>9} {'textbook peak':>14} {'attnlib peak':>13} "
        f"{'max diff':>9}"
    )
    for n in args.sizes:
        X = sample_sphere(n, 3, rng=0)
        ref = textbook(X, args.beta)
        err = np.max(np.abs(ref - model.velocity(X))) / np.max(np.abs(ref))
        assert err < 1e-13, f"the two evaluations disagree by {err:.2e}"
        t_ref = best_time(lambda: textbook(X, args.beta), args.repeat)
        t_lib = best_time(lambda: model.velocity(X), args.repeat)
        floor = e_ns * 1e-9 * n * n / 2
        m_ref = peak_bytes(lambda: textbook(X, args.beta))
        m_lib = peak_bytes(lambda: model.velocity(X))
        print(
            f"{n:>6} {1e3 * t_ref:>14.2f} {1e3 * t_lib:>13.2f} {1e3 * floor:>11.2f} "
            f"{t_ref / t_lib:>8.1f}x {t_lib / floor:>8.1f}x "
            f"{m_ref / 2**20:>11.1f} MB {m_lib / 2**20:>10.2f} MB {err:>9.1e}"
        )
    if args.before:
        compare(args)


def compare(args: argparse.Namespace) -> None:
    """Best time of this checkout's velocity and of ``args.before``'s, alternated."""
    before = load_checkout(args.before).Model(beta=args.beta)
    this = Model(beta=args.beta)
    print(f"this checkout / before ({args.before}), best of {args.repeat} x 3:")
    for n in args.sizes:
        X = sample_sphere(n, 3, rng=0)
        assert np.array_equal(this.velocity(X), before.velocity(X))
        best = {"this": np.inf, "before": np.inf}
        for _ in range(3):
            best["this"] = min(
                best["this"], best_time(lambda: this.velocity(X), args.repeat)
            )
            best["before"] = min(
                best["before"], best_time(lambda: before.velocity(X), args.repeat)
            )
        print(
            f"{n:>6} this {1e3 * best['this']:.2f} ms, before "
            f"{1e3 * best['before']:.2f} ms: ratio {best['this'] / best['before']:.3f}"
        )


if __name__ == "__main__":
    main()
