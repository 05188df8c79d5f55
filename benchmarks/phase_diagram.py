"""Benchmark: the [GLPR] Fig 3 phase diagram for d = 128 at full resolution.

Full run: n = 32 tokens, 1024 samples for each of 90 values of beta in [0.1, 9],
explicit Euler steps of 0.1 with retraction, t in [0, 30]; that is 92 160 systems
and 300 steps. Prints the wall time, the 50% crossing at t = 30 against the curve
Gamma, and saves the figure to benchmarks/out/.

    python benchmarks/phase_diagram.py                       # full run
    python benchmarks/phase_diagram.py --samples 128 --betas 30   # scaled run

The wall time of a scaled run is extrapolated to the full size (the cost is linear
in samples x betas).
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

# one BLAS thread per worker process: the matrices are 32 x 32, parallelism comes
# from the process pool
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from scipy.optimize import brentq  # noqa: E402

FULL_SAMPLES, FULL_BETAS = 1024, 90


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--d", type=int, default=128)
    ap.add_argument("--n", type=int, default=32)
    ap.add_argument("--samples", type=int, default=FULL_SAMPLES)
    ap.add_argument("--betas", type=int, default=FULL_BETAS)
    ap.add_argument("--t-final", type=float, default=30.0)
    ap.add_argument("--dt", type=float, default=0.1)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "out")
    args = ap.parse_args(argv)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from attnlib.clustering import phase_diagram, phase_transition_curve
    from attnlib.viz.clustering import plot_phase_diagram

    betas = np.linspace(0.1, 9.0, args.betas)
    times = np.linspace(0.0, args.t_final, int(round(args.t_final)) + 1)
    kw = dict(
        betas=betas,
        samples=args.samples,
        n=args.n,
        times=times,
        dt=args.dt,
        seed=args.seed,
        progress=True,
    )

    def cpu():
        ru = [
            resource.getrusage(w)
            for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
        ]
        return sum(r.ru_utime + r.ru_stime for r in ru)

    c0 = cpu()
    t0 = time.perf_counter()
    if args.workers > 1:
        with ProcessPoolExecutor(max_workers=args.workers) as ex:
            pd = phase_diagram(args.d, executor=ex, **kw)
    else:
        pd = phase_diagram(args.d, **kw)
    wall = time.perf_counter() - t0
    cpu_s = cpu() - c0

    scale = (FULL_SAMPLES * FULL_BETAS) / (args.samples * args.betas)
    beta_star = brentq(
        lambda b: phase_transition_curve([b], n=args.n)[0] - args.t_final, 0.1, 12.0
    )
    level = pd.level_beta(args.t_final, 0.5)
    systems = args.samples * args.betas
    steps = int(round(args.t_final / args.dt))
    print(
        f"d={args.d} n={args.n} samples={args.samples} betas={args.betas} "
        f"steps={steps} workers={args.workers}"
    )
    print(
        f"wall time: {wall:.1f} s  ({wall / (systems * steps) * 1e6:.2f} us per "
        "system-step)"
    )
    print(
        f"CPU time (all processes): {cpu_s:.1f} s; load average "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    print(
        f"CPU time / {args.workers} workers (wall time on an idle machine): "
        f"{cpu_s / args.workers:.1f} s"
    )
    if scale != 1:
        print(
            f"extrapolated full run (1024 x 90): wall {wall * scale:.0f} s here, "
            f"{cpu_s * scale / args.workers:.0f} s on an idle machine"
        )
    print(
        f"50% level at t={args.t_final:g}: beta = {level:.3f}; "
        f"Gamma crosses t={args.t_final:g} at beta = {beta_star:.3f}"
    )

    args.out.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(6, 4.5), dpi=110)
    plot_phase_diagram(
        pd,
        ax=ax,
        title=(
            f"d = {args.d}, n = {args.n}, {args.samples} samples x {args.betas} betas"
        ),
    )
    fig.tight_layout()
    path = args.out / f"phase_diagram_d{args.d}_s{args.samples}_b{args.betas}.png"
    fig.savefig(path)
    np.savez(
        path.with_suffix(".npz"),
        betas=pd.betas,
        times=pd.times,
        probability=pd.probability,
        stderr=pd.stderr,
    )
    print(f"figure: {path}")
    return {"wall": wall, "cpu": cpu_s, "level": level, "beta_star": beta_star}


if __name__ == "__main__":
    main()
