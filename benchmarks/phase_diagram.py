"""Benchmark: the [GLPR] Fig 3 phase diagram for d = 128 at full resolution.

Full run: n = 32 tokens, 1024 samples for each of 90 values of beta in [0.1, 9],
explicit Euler steps of 0.1 with retraction, t in [0, 30]; that is 92 160 systems
and 300 steps (27.6 million system-steps). Prints, from one run: the per-core floor
of the workload, the wall time and the time per system-step of the fast method, the
time per system-step of the textbook loop (:func:`textbook_steps`: one system at a
time, the attention matrix formed with ``numpy.exp``, Euler step and retraction, as
the reference code of [GLPR] does) on a few systems, and the ratios of the three,
and the 50% level at t = 30 against the curve Gamma. Saves the figure and the arrays
to benchmarks/out/.

    python benchmarks/phase_diagram.py                        # full run, 2 processes
    python benchmarks/phase_diagram.py --samples 128          # scaled run
    python benchmarks/phase_diagram.py --dask-workers 2       # on a Dask LocalCluster
    python benchmarks/phase_diagram.py --scheduler tcp://host:8786   # existing cluster
    python benchmarks/phase_diagram.py --samples 128 --before /tmp/before --workers 1

With ``--before PATH`` the fast method of the ``attnlib`` of another checkout (e.g.
``git worktree add /tmp/before main``) and of this one are also run alternately in
this process, ``--rounds`` times on one core, and the best time per system-step of
each and their ratio are printed: a comparison measured in one run.

What a system-step costs: for d > n the systems are integrated in the n-dimensional
span of their tokens (``attnlib.clustering``), so a step is two batched 32 x 33 x 32
matrix products (the Gram matrix, and the weights times the tokens with a column of
ones that gives the row sums), n^2 = 1024 exponentials, a transposed copy and a few
passes over the 1056 numbers of the state (``attnlib._kernel.euler_identity_steps``):
1024 exponentials and 2 x 2 x 32 x 33 x 32 = 135 168 flops. The floor printed is
those exponentials and flops at the rates of ``numpy.exp`` and of the batched
products measured in the same run, on one core. What brings the run below the floor
is doing fewer system-steps: a system whose pairs are all within delta is retired
(exact, by the lemma in ``attnlib.clustering``); the output gives how many of the
system-steps were integrated. The measured times are the output of a run, on the
machine it runs on (with the load average before and after, since the machine may be
shared); they are not copied here.
"""

from __future__ import annotations

import argparse
import os
import time
from concurrent.futures import Executor, ProcessPoolExecutor
from contextlib import ExitStack
from pathlib import Path

# one BLAS thread per worker process: the matrices are 32 x 33, parallelism comes
# from the processes
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from scipy.optimize import brentq  # noqa: E402

from timing import best_time, load_checkout  # noqa: E402

FULL_SAMPLES, FULL_BETAS = 1024, 90


def floor(n: int) -> dict:
    """Per-core floor of one system-step: exps and products, measured here."""
    rng = np.random.default_rng(0)
    b = 64
    W = rng.uniform(-2.0, 0.0, (b, n, n))
    E = np.empty_like(W)
    t_exp = best_time(lambda: np.exp(W, out=E), 50) / W.size
    Y = rng.standard_normal((b, n, n + 1))
    YT = np.ascontiguousarray(np.swapaxes(Y, 1, 2))
    G = np.empty((b, n, n))
    F = np.empty((b, n, n + 1))
    t_gram = best_time(lambda: np.matmul(Y, YT, out=G), 50) / b
    t_wy = best_time(lambda: np.matmul(G, Y, out=F), 50) / b
    flops = 2 * 2 * n * n * (n + 1)
    return {
        "exp_ns": t_exp * 1e9,
        "gflops": flops / (t_gram + t_wy) / 1e9,
        "flops": flops,
        "exps": n * n,
        "us": (n * n * t_exp + t_gram + t_wy) * 1e6,
    }


def textbook_steps(X: np.ndarray, beta: float, dt: float, steps: int) -> np.ndarray:
    """The textbook loop: ``steps`` explicit Euler steps of SA on the sphere for one
    system ``X`` (n, d), each followed by the retraction."""
    for _ in range(steps):
        W = np.exp(beta * (X @ X.T))
        W /= W.sum(axis=1, keepdims=True)
        F = W @ X
        F -= np.sum(F * X, axis=1, keepdims=True) * X
        X = X + dt * F
        X /= np.linalg.norm(X, axis=1, keepdims=True)
    return X


def textbook_time(d: int, n: int, betas: np.ndarray, dt: float, steps: int, k: int):
    """Seconds per system-step of :func:`textbook_steps`, on ``k`` systems spread over
    ``betas`` (one core), and the largest distance to the fast method's integrator
    (``simulate_ensemble``) on the first of them."""
    from attnlib import sample_sphere
    from attnlib.clustering import simulate_ensemble

    X0 = sample_sphere(n, d, rng=0, batch=k)
    bs = betas[np.linspace(0, betas.size - 1, k).round().astype(int)]
    t0 = time.perf_counter()
    finals = [textbook_steps(X0[i], float(bs[i]), dt, steps) for i in range(k)]
    seconds = (time.perf_counter() - t0) / (k * steps)
    ens = simulate_ensemble(
        X0[:1], beta=bs[:1], times=[0.0, steps * dt], dt=dt, progress=False
    )
    err = float(np.max(np.abs(ens.final[0] - finals[0])))
    return seconds, err


def run(executor: Executor | None, d: int, **kw):
    from attnlib.clustering import phase_diagram

    t0 = time.perf_counter()
    pd = phase_diagram(d, executor=executor, **kw)
    return pd, time.perf_counter() - t0


def compare(args: argparse.Namespace, common: dict) -> dict:
    """Fast method of this checkout and of ``args.before``, alternately, one core."""
    import attnlib

    libs = {"this checkout": attnlib, "before": load_checkout(args.before)}
    kw = dict(
        samples=args.samples,
        dtype=np.float32 if args.float32 else np.float64,
        progress=False,
        **common,
    )
    best = {name: np.inf for name in libs}
    steps = {}
    for _ in range(args.rounds):
        for name, lib in libs.items():
            t0 = time.perf_counter()
            pd = lib.clustering.phase_diagram(args.d, **kw)
            best[name] = min(best[name], time.perf_counter() - t0)
            steps[name] = pd.system_steps
    print(
        f"one core, best of {args.rounds} alternated runs of the fast method "
        f"(load average {os.getloadavg()[0]:.2f} now):"
    )
    for name in libs:
        print(
            f"  {name}: {best[name]:.1f} s, {1e6 * best[name] / steps[name]:.2f} us "
            f"per integrated system-step ({steps[name]:,})"
        )
    ratio = (best["this checkout"] / steps["this checkout"]) / (
        best["before"] / steps["before"]
    )
    print(f"  time per system-step, this checkout / before: {ratio:.3f}")
    return {"ratio": ratio, **best}


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
    ap.add_argument("--float32", action="store_true", help="the optional float32 mode")
    ap.add_argument("--no-retire", action="store_true", help="run every system to t")
    ap.add_argument("--betas-per-task", type=int, default=None)
    ap.add_argument(
        "--textbook-systems",
        type=int,
        default=16,
        help="systems run by the textbook loop (0: skip it)",
    )
    dask = ap.add_mutually_exclusive_group()
    dask.add_argument("--scheduler", help="address of a running Dask scheduler")
    dask.add_argument(
        "--dask-workers", type=int, help="start a Dask LocalCluster of N processes"
    )
    ap.add_argument("--before", help="another checkout to compare with (one core)")
    ap.add_argument("--rounds", type=int, default=2, help="alternations with --before")
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "out")
    args = ap.parse_args(argv)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from attnlib.clustering import phase_transition_curve
    from attnlib.viz.clustering import plot_phase_diagram

    fl = floor(args.n)
    betas = np.linspace(0.1, 9.0, args.betas)
    times = np.linspace(0.0, args.t_final, int(round(args.t_final)) + 1)
    steps = int(round(args.t_final / args.dt))
    systems = args.samples * args.betas
    common = dict(betas=betas, n=args.n, times=times, dt=args.dt, rng=args.seed)
    with ExitStack() as stack:
        if args.scheduler or args.dask_workers:
            from distributed import Client, LocalCluster

            if args.scheduler:
                client = stack.enter_context(Client(args.scheduler))
            else:
                cluster = stack.enter_context(
                    LocalCluster(
                        n_workers=args.dask_workers,
                        threads_per_worker=1,
                        processes=True,
                    )
                )
                client = stack.enter_context(Client(cluster))
            workers = sum(client.nthreads().values())
            print(f"Dask: {client.scheduler.address}, {workers} worker threads")
            print(f"Dask dashboard (task stream, progress): {client.dashboard_link}")
            executor = client.get_executor()
        elif args.workers > 1:
            workers = args.workers
            executor = stack.enter_context(ProcessPoolExecutor(max_workers=workers))
        else:
            workers, executor = 1, None

        load0 = os.getloadavg()[0]
        pd, wall = run(
            executor,
            args.d,
            samples=args.samples,
            retire=not args.no_retire,
            dtype=np.float32 if args.float32 else np.float64,
            betas_per_task=args.betas_per_task,
            progress=True,
            **common,
        )
        load1 = os.getloadavg()[0]
    book = None
    if args.textbook_systems:
        book = textbook_time(
            args.d, args.n, betas, args.dt, steps, args.textbook_systems
        )

    beta_star = brentq(
        lambda b: phase_transition_curve([b], n=args.n)[0] - args.t_final, 0.1, 12.0
    )
    level = pd.level_beta(args.t_final, 0.5)
    print(
        f"d={args.d} n={args.n} samples={args.samples} betas={args.betas} "
        f"steps={steps} workers={workers} "
        f"dtype={'float32' if args.float32 else 'float64'} "
        f"retire={not args.no_retire}"
    )
    print(
        f"per-core floor: {fl['exps']} exp x {fl['exp_ns']:.2f} ns + "
        f"{fl['flops']} flops at {fl['gflops']:.0f} GFLOP/s = {fl['us']:.2f} us per "
        f"system-step; {systems * steps * fl['us'] * 1e-6 / workers:.0f} s for "
        f"{systems * steps:,} system-steps on {workers} cores, "
        f"{pd.system_steps * fl['us'] * 1e-6 / workers:.0f} s for the "
        f"{pd.system_steps:,} integrated"
    )
    per_step = wall * workers / (systems * steps) * 1e6
    print(
        f"fast method: wall time {wall:.1f} s, {per_step:.2f}"
        f" us per system-step and core ({pd.system_steps:,} of {systems * steps:,} "
        f"system-steps integrated: "
        f"{wall * workers / max(pd.system_steps, 1) * 1e6:.2f} us each)"
    )
    print(
        f"load average (1 min): {load0:.2f} before, {load1:.2f} after the fast run, "
        f"on {os.cpu_count()} cores (a quiet machine reads about 0 before)"
    )
    result = {"wall": wall, "level": level, "beta_star": beta_star}
    if book is not None:
        book_us, err = book[0] * 1e6, book[1]
        fast_us = wall * workers / max(pd.system_steps, 1) * 1e6
        result["textbook_us"] = book_us
        print(
            f"textbook loop (one system at a time, {args.textbook_systems} systems, "
            f"one core): {book_us:.2f} us per system-step, {book_us / fl['us']:.1f}x "
            f"the floor; the fast method is {book_us / fast_us:.1f}x faster per "
            f"integrated system-step ({fast_us / fl['us']:.1f}x the floor) and, with "
            f"the systems it retires, {book_us / per_step:.1f}x faster in total; "
            f"max |difference| of the final tokens {err:.1e}"
        )
    print(
        f"50% level at t={args.t_final:g}: beta = {level:.3f}; "
        f"Gamma crosses t={args.t_final:g} at beta = {beta_star:.3f}"
    )
    if args.before:
        result["before"] = compare(args, common)

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
    return result


if __name__ == "__main__":
    main()
