"""Time per system-step of ``simulate_ensemble`` with Q = K = V = I, against a checkout.

The workload is the reference method of the phase diagrams: ``B`` systems of ``n``
tokens, explicit Euler steps of 0.1 with the retraction, the fraction of close pairs
recorded at every output time, in dimension ``d`` (the span reduction applies for
``d > n``) and in ``d = 3``. With ``--before PATH`` the same measurement runs on the
``attnlib`` of another checkout (e.g. ``git worktree add /tmp/before main``) in
alternating subprocesses, one BLAS thread each, and the ratio of the best times of
the two is printed: both sides are measured in this one run.

    python benchmarks/ensemble.py
    python benchmarks/ensemble.py --before /tmp/before --rounds 5
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

HERE = Path(__file__).resolve().parent


def measure(B: int, n: int, ds: list[int], t_final: float, repeat: int) -> dict:
    """Best seconds per system-step of simulate_ensemble for each dimension."""
    import numpy as np

    import attnlib
    from attnlib import sample_sphere
    from attnlib.clustering import PairFraction, simulate_ensemble

    out = {"attnlib": str(Path(attnlib.__file__).parent)}
    times = np.linspace(0.0, t_final, 11)
    for d in ds:
        X0 = sample_sphere(n, d, rng=0, batch=B)
        beta = np.linspace(0.5, 8.0, B)
        best = np.inf
        for _ in range(repeat):
            t0 = time.perf_counter()
            r = simulate_ensemble(
                X0,
                beta=beta,
                times=times,
                dt=0.1,
                observables={"p": PairFraction(1e-3)},
            )
            best = min(best, time.perf_counter() - t0)
        out[str(d)] = best / (B * r.n_steps)
    return out


def worker(path: str | None, args: argparse.Namespace) -> dict:
    env = dict(os.environ)
    if path is not None:
        env["PYTHONPATH"] = path
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--worker",
        "--B",
        str(args.B),
        "--n",
        str(args.n),
        "--t-final",
        str(args.t_final),
        "--repeat",
        str(args.repeat),
        "--dims",
        *map(str, args.dims),
    ]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--B", type=int, default=256)
    p.add_argument("--n", type=int, default=32)
    p.add_argument("--dims", type=int, nargs="+", default=[128, 3])
    p.add_argument("--t-final", type=float, default=30.0)
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--before", type=str, default=None)
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        print(json.dumps(measure(args.B, args.n, args.dims, args.t_final, args.repeat)))
        return
    here = str(HERE.parent)
    sides = {"this checkout": here}
    if args.before:
        sides["before"] = str(Path(args.before).resolve())
    best: dict[str, dict[str, float]] = {k: {} for k in sides}
    for _ in range(args.rounds):  # alternate, so that both see the same machine
        for name, path in sides.items():
            res = worker(path, args)
            for d in map(str, args.dims):
                best[name][d] = min(best[name].get(d, float("inf")), res[d])
    print(
        f"simulate_ensemble, Q = K = V = I, B = {args.B}, n = {args.n}, dt = 0.1, "
        f"t <= {args.t_final}, one BLAS thread; best of {args.rounds} x {args.repeat}"
    )
    for d in map(str, args.dims):
        line = f"d = {d:>4}: " + ", ".join(
            f"{name} {1e6 * best[name][d]:.2f} us per system-step" for name in sides
        )
        if args.before:
            line += f"; speed-up {best['before'][d] / best['this checkout'][d]:.2f}x"
        print(line)


if __name__ == "__main__":
    main()
