"""Benchmark of the circle model: Jacobi–Anger (Fourier) against direct evaluation.

Run with ``python benchmarks/circle.py``. Prints, in one run,

* the time of one USA velocity evaluation by the O(n^2) double sum (row blocks of at
  most 512 rows and 2^21 entries, never an n x n array) and by the O(nK) Fourier
  method at n = 1e4 and 1e5,
  their ratio and their largest difference relative to the field's scale;
* the time of one explicit Euler step and of one RK4 step of USA at n = 2e5
  (target: one step in at most 0.5 s).
"""

from __future__ import annotations

import numpy as np

from attnlib.circle import CircleModel, angle_velocity, bessel_modes
from timing import best_time


def main(beta: float = 4.0) -> None:
    rng = np.random.default_rng(0)
    K = bessel_modes(beta=beta)
    print(f"beta = {beta}, K = {K} Fourier modes (tol 1e-16)")
    head = ("n", "direct [s]", "fourier [s]", "ratio", "rel. diff")
    print("{:>8} {:>11} {:>12} {:>8} {:>10}".format(*head))
    for n in (10_000, 100_000):
        th = rng.uniform(0, 2 * np.pi, n)
        out = {}
        t_dir = best_time(
            lambda th=th: out.__setitem__(
                "d", angle_velocity(th, beta=beta, method="direct", block=512)
            ),
            repeat=2 if n <= 10_000 else 1,
        )
        t_fou = best_time(
            lambda th=th: out.__setitem__(
                "f", angle_velocity(th, beta=beta, method="fourier")
            ),
            repeat=5,
        )
        err = np.max(np.abs(out["f"] - out["d"])) / np.max(np.abs(out["d"]))
        ratio = t_dir / t_fou
        print(f"{n:>8} {t_dir:>11.3f} {t_fou:>12.4f} {ratio:>8.0f} {err:>10.1e}")
    n = 200_000
    th = rng.uniform(0, 2 * np.pi, n)
    for b in (1.0, 4.0, 16.0):
        model = CircleModel(beta=b, normalization="usa", method="fourier")
        h = 0.1 * np.exp(-b)

        def euler(model=model, h=h):
            return th + h * model(th)

        def rk4(model=model, h=h):
            k1 = model(th)
            k2 = model(th + 0.5 * h * k1)
            k3 = model(th + 0.5 * h * k2)
            k4 = model(th + h * k3)
            return th + (h / 6) * (k1 + 2 * k2 + 2 * k3 + k4)

        te, tr = best_time(euler, 5), best_time(rk4, 3)
        print(
            f"n = {n}, beta = {b:>4}: K = {model.modes:>2}, Euler step {te:.3f} s, "
            f"RK4 step {tr:.3f} s (target <= 0.5 s per step)"
        )


if __name__ == "__main__":
    main()
