"""SA velocity field: the textbook evaluation, pykeops, attnlib's numpy tiles and its
compiled tiles (numba; JAX's jit on the same blocks), in one run.

The textbook evaluation forms the n x n attention matrix with
``scipy.special.softmax(beta * X @ X.T, axis=1) @ X`` and projects on the tangent
space (skipped where that matrix would not fit in ``--textbook-max``). attnlib
(``attnlib._kernel.symmetric_field``) exponentiates each symmetric tile once (half
the exponentials) and never holds more than ``block x block`` kernel entries; its
compiled form (``attnlib._compiled``) fuses logits, exponential and weighted sums.

The floors. The exponential floor is n^2 / 2 exponentials (one per unordered pair)
at the throughput of ``numpy.exp`` on one thread: the best of bursts of calls taken
before and after every timed evaluation of the run (:class:`ExpFloor`). The
matrix-product floor (printed for d = 64) is the time of the products a symmetric
tile needs (one with d + 2 columns, two weighted sums with d + 1 columns) on blocks
of the tile's size, by numpy's BLAS on one thread, for the n^2 / 2 pairs. Every
ratio is measured in this run, best of ``--repeat``; ``cat /proc/loadavg`` is
printed beside the figures (the machine may be shared).

Threads: ``--threads`` (default 1) for the tables; one section compares 1 and 2
threads of the compiled kernel at n = 4096. BLAS keeps one thread throughout.

Run: ``python benchmarks/velocity.py`` (about 5 minutes on a quiet 2-core
machine; ``--quick`` stops at n = 16384 and skips the simulation). With
``--before PATH`` the velocity of the ``attnlib`` of another checkout is timed in
the same run, alternately with this one, one core.
"""

from __future__ import annotations

import argparse
import os

# one BLAS thread: the comparison is per core, and the compiled kernels' threads
# never share the CPUs with BLAS's
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import time  # noqa: E402

import numpy as np  # noqa: E402
from scipy.special import softmax  # noqa: E402

from attnlib import Model, sample_sphere  # noqa: E402
from attnlib import _compiled  # noqa: E402
from timing import best_time, load_checkout, peak_bytes  # noqa: E402

SIZES = [256, 1024, 4096, 16384, 100_000]


def textbook(X: np.ndarray, beta: float) -> np.ndarray:
    V = softmax(beta * X @ X.T, axis=1) @ X
    return V - np.sum(V * X, axis=1, keepdims=True) * X


class ExpFloor:
    """Time of one float64 exponential, in ns, on arrays of the tile's size: the best
    of bursts of calls taken all through the run (:meth:`sample` before every timed
    evaluation). The machine's speed drifts by 10-20% over minutes (a shared
    host): a floor measured once, at the start, put the same kernel anywhere
    between 1.1 and 1.5 times it; sampled beside every measurement, the best of
    the exponential and the best of the kernel come from the same conditions."""

    def __init__(self) -> None:
        self.W = np.random.default_rng(0).uniform(-2.0, 0.0, (256, 256))
        self.E = np.empty_like(self.W)
        self.best = np.inf
        self.sample(200)

    def sample(self, calls: int = 50) -> None:
        t = best_time(lambda: np.exp(self.W, out=self.E), calls) / self.W.size * 1e9
        self.best = min(self.best, t)

    def timed(self, fn, repeat: int) -> float:
        """Best wall time of ``fn`` over ``repeat`` calls, each after a sample."""
        best = np.inf
        for _ in range(repeat):
            self.sample()
            best = min(best, best_time(fn, 1))
        self.sample()
        return best


def matmul_pair_ns(d: int, block: int, repeat: int) -> float:
    """BLAS time of the products of one symmetric tile, per unordered pair, in ns."""
    rng = np.random.default_rng(1)
    L = rng.standard_normal((block, d + 2))
    R = rng.standard_normal((d + 2, block))
    Z = rng.standard_normal((block, d + 1))
    T = np.empty((block, block))
    P = np.empty((block, d + 1))

    def tile():
        np.matmul(L, R, out=T)
        np.matmul(T, Z, out=P)
        np.matmul(T.T, Z, out=P)

    return best_time(tile, 10 * repeat) / (block * block) * 1e9


def keops_field():
    """The SA velocity through pykeops on the CPU, or the reason it is not here."""
    try:
        from pykeops.numpy import LazyTensor

        def field(X, beta):
            xi, xj = LazyTensor(X[:, None, :]), LazyTensor(X[None, :, :])
            K = (beta * (xi | xj)).exp()
            V = (K * xj).sum(axis=1) / K.sum(axis=1)
            return V - np.sum(V * X, axis=1, keepdims=True) * X

        field(sample_sphere(64, 3, rng=0), 1.0)  # compiles its formula once
        return field, "pykeops"
    except Exception as e:  # noqa: BLE001 - any failure to build is reported
        msg = str(e).strip().splitlines()
        return None, f"pykeops unavailable: {type(e).__name__}: {msg[0] if msg else ''}"


def with_backend(name: str, fn, threads: int | None = None):
    def run():
        _compiled.use(name, threads=threads)
        return fn()

    return run


def loadavg() -> str:
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "n/a"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=int, nargs="+", default=SIZES)
    p.add_argument("--beta", type=float, default=1.0)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--textbook-max", type=int, default=8192)
    p.add_argument("--numpy-max", type=int, default=16384)
    p.add_argument("--jax-max", type=int, default=16384)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--before", help="another checkout to compare with (one core)")
    args = p.parse_args()
    if args.quick:
        args.sizes = [n for n in args.sizes if n <= 16384]
    have_jax = _compiled._available("jax")
    compiled = "numba" if _compiled._available("numba") else "numpy"
    model = Model(beta=args.beta)
    floor_ns = ExpFloor()
    keops, keops_note = keops_field()
    load0 = loadavg()
    cols = ["textbook", "keops", "numpy tiles", compiled] + (
        ["jax"] if have_jax else []
    )
    times: list[tuple[int, float]] = []
    lines = []  # printed once the floor is known: the best exponential of the run
    for n in args.sizes:
        X = sample_sphere(n, 3, rng=0)
        rep = args.repeat if n <= 16384 else 1
        best = floor_ns.timed

        def velocity():
            return model.velocity(X)

        fast = with_backend(compiled, velocity, args.threads)
        ref = fast()
        row = {}
        if n <= args.textbook_max:
            tb = textbook(X, args.beta)
            err = np.max(np.abs(tb - ref)) / np.max(np.abs(tb))
            assert err < 1e-12, f"the evaluations disagree by {err:.2e}"
            row["textbook"] = best(lambda: textbook(X, args.beta), rep)
        else:
            err = float("nan")
        if keops is not None and n <= args.numpy_max:
            row["keops"] = best(lambda: keops(X, args.beta), rep)
        if n <= args.numpy_max:
            row["numpy tiles"] = best(with_backend("numpy", velocity), rep)
        # the compiled kernel at least three times as often: it is the one measured
        t_fast = best(fast, 3 * rep)
        row[compiled] = t_fast
        times.append((n, t_fast))
        if have_jax and n <= args.jax_max:
            jx = with_backend("jax", lambda: model.velocity(X))
            jx()  # compiles
            row["jax"] = best(jx, rep)
        lines.append((n, row, t_fast, peak_bytes(fast) / 2**20, err))
    e_ns = floor_ns.best
    print(
        f"SA velocity, d = 3, float64, beta = {args.beta}, block = {model.block}, "
        f"BLAS threads = {os.environ.get('OPENBLAS_NUM_THREADS')}, compiled threads = "
        f"{args.threads}; exp: {e_ns:.3f} ns (the best of the run); load average "
        f"{load0} at the start"
    )
    print(keops_note)
    print(
        f"{'n':>7} {'floor [ms]':>11} "
        + " ".join(f"{c + ' [x]':>14}" for c in cols)
        + f" {compiled + ' [ms]':>12} {'peak MB':>8} {'max diff':>9}"
    )
    for n, row, t_fast, peak, err in lines:
        floor = e_ns * 1e-9 * n * n / 2
        cells = " ".join(
            f"{row[c] / floor:>13.2f}x" if c in row else f"{'-':>14}" for c in cols
        )
        print(
            f"{n:>7} {1e3 * floor:>11.2f} {cells} {1e3 * t_fast:>12.1f} "
            f"{peak:>8.2f} {err:>9.1e}"
        )
    big = [(n, t) for n, t in times if n >= 1024]
    if len(big) >= 2:
        slope = np.polyfit(np.log([n for n, _ in big]), np.log([t for _, t in big]), 1)[
            0
        ]
        print(
            f"log-log slope of the {compiled} time against n (n >= 1024): {slope:.2f}"
        )
    threads_section(model, args, compiled)
    d64_section(args, compiled, floor_ns)
    if not args.quick and 100_000 in args.sizes:
        simulation_section(args, compiled)
    print(f"load average at the end: {loadavg()}")
    if args.before:
        compare(args)


def threads_section(model, args, compiled) -> None:
    """One thread against two at n = 4096, alternated round by round (the best of
    each), so that both see the same moments of a shared machine."""
    n = 4096
    X = sample_sphere(n, 3, rng=0)
    fns = {k: with_backend(compiled, lambda: model.velocity(X), k) for k in (1, 2)}
    t = {1: np.inf, 2: np.inf}
    for k in (1, 2):
        fns[k]()
    for _ in range(10 * args.repeat):
        for k in (1, 2):
            t[k] = min(t[k], best_time(fns[k], 1))
    print(
        f"threads, n = {n}: 1 thread {1e3 * t[1]:.2f} ms, "
        f"2 threads {1e3 * t[2]:.2f} ms: "
        f"{t[1] / t[2]:.2f}x faster (load average {loadavg()})"
    )


def d64_section(args, compiled, floor_ns) -> None:
    d, n = 64, 20_000
    X = sample_sphere(n, d, rng=0)
    model = Model(beta=args.beta)
    block = model.block
    floor_ns.sample(200)
    exp_floor = floor_ns.best * 1e-9 * n * n / 2
    mm_floor = matmul_pair_ns(d, block, args.repeat) * 1e-9 * n * n / 2
    fn = with_backend(compiled, lambda: model.velocity(X), args.threads)
    fn()
    t = best_time(fn, 2)
    t_np = best_time(with_backend("numpy", lambda: model.velocity(X)), 1)
    top = max(exp_floor, mm_floor)
    print(
        f"d = {d}, n = {n}: exp floor {1e3 * exp_floor:.0f} ms, matrix-product floor "
        f"{1e3 * mm_floor:.0f} ms; {compiled} {1e3 * t:.0f} ms = {t / top:.2f}x the "
        f"larger floor, numpy tiles {t_np / top:.2f}x (threads {args.threads}; load "
        f"average {loadavg()})"
    )


def simulation_section(args, compiled) -> None:
    from attnlib import simulate

    n = 100_000
    X0 = sample_sphere(n, 3, rng=1)
    model = Model(beta=args.beta)
    _compiled.use(compiled, threads=os.cpu_count())
    t0 = time.perf_counter()
    tr = simulate(model, X0, t_final=5.0, dt=0.5, method="euler", save_states=False)
    dt = time.perf_counter() - t0
    _compiled.use(threads=args.threads)
    r = float(np.linalg.norm(tr.final.mean(axis=0)))
    print(
        f"simulation: n = {n}, d = 3, t in [0, 5], Euler, dt = 0.5 "
        f"({tr.n_steps} steps) "
        f"on {os.cpu_count()} threads: {dt:.0f} s; |mean of the tokens| "
        f"{float(np.linalg.norm(X0.mean(axis=0))):.3f} -> {r:.3f}"
    )


def compare(args: argparse.Namespace) -> None:
    """Best time of this checkout's velocity and of ``args.before``'s, alternated."""
    before = load_checkout(args.before).Model(beta=args.beta)
    this = Model(beta=args.beta)
    print(f"this checkout / before ({args.before}), best of {args.repeat} x 3:")
    for n in [s for s in args.sizes if s <= 16384]:
        X = sample_sphere(n, 3, rng=0)
        a, b = this.velocity(X), before.velocity(X)
        assert np.max(np.abs(a - b)) <= 1e-12 * np.max(np.abs(b))
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
