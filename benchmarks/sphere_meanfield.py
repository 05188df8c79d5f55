"""Benchmark of the spectral mean-field solver on the sphere S^2.

Run with ``python benchmarks/sphere_meanfield.py`` (one process). Prints

* for a few ``lmax``: the grid, the steps and the wall time per unit of simulated
  time of a USA run (beta = 1, a smooth density with no symmetry, adaptive steps,
  t in [0, 0.5]), the cost of one right-hand side, and the resolution reached;
* the error of ``N`` USA particles sampled from the initial density and run by
  ``attnlib.simulate`` (RK4) against the solver: the root mean square over the
  harmonic moments of degree <= 3 and the times 0.4, 0.8 of
  ``|mean_i conj(Y_lm(x_i)) - a_lm(t)|``, averaged over seeds, for a few ``N``,
  and the slope of its log against log N (Monte Carlo: -1/2).
"""

from __future__ import annotations

import time

import numpy as np

from attnlib import Model, sample_sphere, simulate
from attnlib._sphere_meanfield import _grid, _harmonics, _transport, sphere_mean_field
from timing import best_time

FOUR_PI = 4 * np.pi
E = np.array([0.3, 0.2, 0.93]) / np.linalg.norm([0.3, 0.2, 0.93])


def _density():
    g = _grid(48)

    def f(x):
        return np.exp(x @ E) * (1 + 0.5 * x[:, 0] * x[:, 1])

    Z = np.sum(g.weights() * f(g.points().reshape(-1, 3)).reshape(g.shape))
    return lambda x: f(x) / Z


def _sample(rho, N, rng, top):
    out, have = [], 0
    while have < N:
        X = sample_sphere(4 * N, 3, rng=rng)
        X = X[rng.uniform(size=4 * N) * top < rho(X)]
        out.append(X)
        have += len(X)
    return np.concatenate(out)[:N]


def timings(rho) -> None:
    beta, T = 1.0, 0.5
    head = ("lmax", "grid", "steps", "s / unit t", "rhs [ms]", "resolution")
    print("{:>5} {:>10} {:>6} {:>11} {:>9} {:>11}".format(*head))
    for L in (16, 32, 64, 128):
        sol = None

        def run(L=L):
            nonlocal sol
            sol = sphere_mean_field(rho, beta=beta, lmax=L, times=[0.0, T])

        t_run = best_time(run, repeat=2 if L <= 64 else 1)
        g = _grid(L)
        ell = np.arange(L + 1)
        gker = FOUR_PI * np.where(ell > 0, 1.0, 0.0)[:, None]
        rhs = _transport(g, gker)
        a = sol.info["coefficients"][-1]
        t_rhs = best_time(lambda rhs=rhs, a=a: rhs(a), repeat=5)
        grid = f"{g.nlat}x{g.nlon}"
        res = sol.info["resolution"][-1]
        print(
            f"{L:>5} {grid:>10} {sol.n_steps:>6} {t_run / T:>11.3f} "
            f"{1e3 * t_rhs:>9.2f} {res:>11.1e}"
        )


def particles(rho) -> None:
    beta, L = 1.0, 3
    times = [0.0, 0.4, 0.8]
    sol = sphere_mean_field(rho, beta=beta, lmax=32, times=times)
    ref = sol.info["coefficients"][1:, : L + 1, : L + 1]
    mask = np.tril(np.ones((L + 1, L + 1), bool))
    top = 1.6 * float(rho(E[None])[0])
    model = Model(beta=beta, normalization="usa")
    Ns = (1000, 2000, 5000, 10000, 20000)
    seeds = (16, 12, 6, 3, 2)
    rms = []
    print(f"{'N':>6} {'seeds':>6} {'rms error':>10} {'x sqrt(N)':>10} {'time [s]':>9}")
    for N, S in zip(Ns, seeds):
        errs = []
        t0 = time.perf_counter()
        for s in range(S):
            rng = np.random.default_rng(1000 * N + s)
            X0 = _sample(rho, N, rng, top)
            tr = simulate(model, X0, times=times, dt=0.2)
            mom = np.array([_harmonics(L, X).conj().mean(-1) for X in tr.states[1:]])
            errs.append(np.mean(np.abs(mom - ref)[:, mask] ** 2))
        e = float(np.sqrt(np.mean(errs)))
        rms.append(e)
        dt = (time.perf_counter() - t0) / S
        print(f"{N:>6} {S:>6} {e:>10.2e} {e * np.sqrt(N):>10.3f} {dt:>9.2f}")
    slope = np.polyfit(np.log(Ns), np.log(rms), 1)[0]
    print(f"fitted slope of log(error) vs log(N): {slope:.3f} (Monte Carlo: -0.5)")


def main() -> None:
    rho = _density()
    print("sphere_mean_field, USA, beta = 1, adaptive steps")
    timings(rho)
    print()
    print("particles (simulate, RK4, dt = 0.2) vs the solver (lmax = 32)")
    particles(rho)


if __name__ == "__main__":
    main()
