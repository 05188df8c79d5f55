r"""The runs of the frontiers chapter that its figures and widgets show.

The equiangular solutions of the three layer-norm schemes (:func:`scheme_solutions`),
the causal run from four clusters (:func:`four_clusters`, :func:`causal_run`), and
the hardmax at growing temperature (:func:`voronoi_tokens`, :func:`temperature_runs`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._deprecation import moved_arguments
from .._validation import (
    TooManyStepsError,
    as_angles,
    as_states,
    check_int,
    check_real,
    check_rng,
)
from ..attention import Model
from ..integrate import simulate
from ._causal import CausalModel
from ._hardmax import Hardmax
from ._layernorm import equiangular_scheme

__all__ = [
    "scheme_solutions",
    "four_clusters",
    "causal_run",
    "voronoi_tokens",
    "temperature_runs",
]


@moved_arguments("beta n t_final")
def scheme_solutions(*, beta: float, n: int, t_final: float = 200.0) -> dict:
    """Equiangular solutions of the three schemes on a log time grid.

    The grid is ``0`` followed by 120 points from ``0.01`` to ``t_final``, with
    ``0.01 <= t_final <= 1e4``: at the solver's tolerance (``rtol=1e-12``) a longer
    grid is slow (``t_final = 1e6`` takes about 40 s, ``1e4`` under a second).
    """
    t_final = check_real(t_final, "t_final", low=0.01, high=1e4)
    times = np.concatenate([[0.0], np.logspace(-2, np.log10(t_final), 120)])
    return {
        s: equiangular_scheme(times, beta=beta, n=n, scheme=s)
        for s in ("post", "pre", "peri")
    }


@moved_arguments("n rng", renamed={"seed": "rng"})
def four_clusters(n: int = 64, *, rng: Any = 17) -> tuple[np.ndarray, np.ndarray]:
    r"""Initial angles of [DGR]'s run: four clusters of :math:`n/4` consecutive
    tokens at :math:`(0.1, 0.7, 1.3, 1.9)\pi`, spread :math:`N(0, 0.075^2)` (drawn
    from ``rng``, a seed or a Generator; the default is [DGR]'s figure).

    Returns
    -------
    theta, labels : ndarrays, shape (n,)
    """
    n = check_int(n, "n", low=4)
    rng = check_rng(rng)
    labels = np.repeat(np.arange(4), int(np.ceil(n / 4)))[:n]
    centres = np.linspace(0.1, 1.9, 4) * np.pi
    theta = centres[labels] + rng.normal(0.0, 0.075, size=n)
    return np.mod(theta, 2 * np.pi), labels


def causal_run(
    theta0: np.ndarray,
    *,
    beta: float,
    lam: float,
    t_final: float = 10.0,
    dt: float = 0.0025,
    n_frames: int = 101,
) -> tuple[np.ndarray, np.ndarray]:
    """RK4 run of the positional causal model on the circle (slope ``lam / n``).

    Returns the output times and the angles, shape (T, n).
    """
    theta0 = as_angles(theta0, "theta0", ndims=(1,))
    lam = check_real(lam, "lam", low=0.0)
    t_final = check_real(t_final, "t_final", low=0.0)
    dt = check_real(dt, "dt", low=0.0, strict_low=True)
    n_frames = check_int(n_frames, "n_frames", low=1)
    n = theta0.size
    X0 = np.c_[np.cos(theta0), np.sin(theta0)]
    model = CausalModel(beta, slope=lam / n, normalization="positional")
    times = np.linspace(0.0, t_final, n_frames)
    tr = simulate(model, X0, times=times, dt=dt)
    return times, np.arctan2(tr.states[..., 1], tr.states[..., 0])


@moved_arguments("k m rng", renamed={"seed": "rng"})
def voronoi_tokens(k: int = 5, m: int = 30, *, rng: Any = 3) -> np.ndarray:
    """``k`` hull vertices on the unit circle followed by ``m`` tokens inside, drawn
    from ``rng`` (a seed or a Generator).

    ``k >= 1``, ``m >= 0``; returns an array of shape ``(k + m, 2)``.
    """
    k = check_int(k, "k", low=1)
    m = check_int(m, "m")
    rng = check_rng(rng)
    ang = np.sort(rng.uniform(0, 2 * np.pi, k))
    verts = np.c_[np.cos(ang), np.sin(ang)]
    inner = rng.dirichlet(np.full(k, 0.7), m) @ verts
    return np.vstack([verts, inner])


@moved_arguments("Z0 beta")
def temperature_runs(
    Z0: np.ndarray, *, beta: float | None, t_final: float = 3.0, n_frames: int = 31
) -> np.ndarray:
    """Consensus-form paths, shape (T, n, 2): hardmax if ``beta`` is None.

    ``Z0`` has shape ``(n, d)``: free tokens (not on the sphere).
    """
    Z0 = as_states(Z0, "Z0", ndims=(2,))
    if beta is not None:
        beta = check_real(beta, "beta", low=0.0)
    t_final = check_real(t_final, "t_final", low=0.0)
    n_frames = check_int(n_frames, "n_frames", low=1)
    times = np.linspace(0.0, t_final, n_frames)
    try:
        if beta is None:
            return simulate(
                Hardmax(geometry="euclidean", consensus=True), Z0, times=times, dt=0.01
            ).states
        soft = Model(beta=beta, geometry="euclidean")
        return simulate(
            lambda X: soft.rhs(X) - X, Z0, times=times, dt=0.01, geometry="euclidean"
        ).states
    except TooManyStepsError:
        raise
    except ValueError as exc:
        raise ValueError(
            "the paths from Z0 leave the float64 range: take Z0 (or beta) smaller "
            f"({exc})"
        ) from exc
