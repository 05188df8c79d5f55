"""Time per system-step of ``simulate_ensemble`` with Q = K = V = I, against a checkout.

The workload is the reference method of the phase diagrams: ``B`` systems of ``n``
tokens with one beta each in [0.5, 8], explicit Euler steps of 0.1 with the
retraction up to t = 30, the fraction of close pairs recorded at every unit of time,
in dimension ``d`` (the span reduction applies for ``d > n``) and in ``d = 3``, on
one BLAS thread. With ``--before PATH`` the ``attnlib`` of another checkout (e.g.
``git worktree add /tmp/before main``) is imported in this process too and both are
timed alternately, ``--rounds`` times, best time of each: the speed-up printed is
measured in this one run, on the same machine at the same moments.

    python benchmarks/ensemble.py
    python benchmarks/ensemble.py --before /tmp/before --rounds 3
    python benchmarks/ensemble.py --kernels numpy numba   # the field's backends
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import attnlib  # noqa: E402
from attnlib import _compiled  # noqa: E402
from timing import load_checkout  # noqa: E402


def run(lib, X0: np.ndarray, beta: np.ndarray, times: np.ndarray) -> tuple[float, int]:
    """Wall time of one simulate_ensemble of ``lib`` and its number of steps."""
    t0 = time.perf_counter()
    r = lib.clustering.simulate_ensemble(
        X0,
        beta=beta,
        times=times,
        dt=0.1,
        observables={"p": lib.clustering.PairFraction(1e-3)},
    )
    return time.perf_counter() - t0, r.n_steps


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--B", type=int, default=256)
    p.add_argument("--n", type=int, default=32)
    p.add_argument("--dims", type=int, nargs="+", default=[128, 3])
    p.add_argument("--t-final", type=float, default=30.0)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--before", type=str, default=None)
    p.add_argument(
        "--kernels",
        nargs="+",
        default=None,
        help="attention-field backends of this checkout to alternate (numpy numba)",
    )
    args = p.parse_args()
    libs = {"this checkout": attnlib}
    if args.before:
        libs["before"] = load_checkout(args.before)
    if args.kernels:  # one entry per backend, the same library
        libs = {f"kernel {k}": (attnlib, k) for k in args.kernels}
    times = np.linspace(0.0, args.t_final, int(round(args.t_final)) + 1)
    beta = np.linspace(0.5, 8.0, args.B)
    print(
        f"simulate_ensemble, Q = K = V = I, B = {args.B}, n = {args.n}, dt = 0.1, "
        f"t <= {args.t_final:g}, OPENBLAS_NUM_THREADS = "
        f"{os.environ.get('OPENBLAS_NUM_THREADS')}; best of {args.rounds}, "
        f"load average {os.getloadavg()[0]:.2f} at the start"
    )
    for d in args.dims:
        X0 = attnlib.sample_sphere(args.n, d, rng=0, batch=args.B)
        best = {name: np.inf for name in libs}
        for _ in range(args.rounds):  # alternate: both see the same machine
            for name, lib in libs.items():
                if isinstance(lib, tuple):
                    lib, kernel = lib
                    _compiled.use(kernel)
                wall, steps = run(lib, X0, beta, times)
                best[name] = min(best[name], wall / (args.B * steps))
        line = f"d = {d:>4}: " + ", ".join(
            f"{name} {1e6 * t:.2f} us per system-step" for name, t in best.items()
        )
        if args.before:
            line += f"; speed-up {best['before'] / best['this checkout']:.2f}x"
        if args.kernels and len(args.kernels) == 2:
            a, b = (f"kernel {k}" for k in args.kernels)
            line += f"; {args.kernels[1]} / {args.kernels[0]}: {best[b] / best[a]:.2f}"
        print(line)
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
