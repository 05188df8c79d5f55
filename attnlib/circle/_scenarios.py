r"""The runs of the circle chapter that its figures and widgets show.

:func:`particle_run` integrates tokens on the circle for several ``beta``;
:func:`density_run` the mean-field density. :mod:`attnlib.viz.circle` and
:mod:`attnlib.widgets.circle` draw them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._deprecation import moved_arguments
from .._results import Trajectory
from .._validation import (
    NORMALIZATIONS,
    check_choice,
    check_int,
    check_real,
    check_rng,
)
from ._angles import CircleModel, simulate_angles
from ._meanfield import mean_field, sample_density

TWO_PI = 2 * np.pi

__all__ = [
    "particle_run",
    "density_run",
]


@moved_arguments("beta n", renamed={"seed": "rng"})
def particle_run(
    *,
    beta: float,
    n: int,
    t_final: float = 20.0,
    n_frames: int = 81,
    rng: Any = 0,
    normalization: str = "sa",
    n_max: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Angles ``(T, n)`` at ``T = n_frames`` times from uniform random initial data.

    The first ``n`` of ``n_max`` uniform angles drawn from ``rng`` (a seed or a
    :class:`numpy.random.Generator`) are used, so the initial data of different ``n``
    drawn with one seed are nested.
    """
    beta = check_real(beta, "beta", low=0.0)
    n = check_int(n, "n", low=1)
    t_final = check_real(t_final, "t_final", low=0.0)
    n_frames = check_int(n_frames, "n_frames", low=1)
    rng = check_rng(rng)
    normalization = check_choice(normalization, "normalization", NORMALIZATIONS)
    if n_max is not None:
        n_max = check_int(n_max, "n_max", low=1)
    th0 = rng.uniform(0, TWO_PI, max(n, n_max or n))[:n]
    times = np.linspace(0, t_final, n_frames)
    model = CircleModel(beta=beta, normalization=normalization)
    dt = 0.1 if normalization == "sa" else 0.2 * np.exp(-beta)
    tr = simulate_angles(model, th0, times=times, dt=dt)
    return times, tr.states


@moved_arguments("rho0 beta times", renamed={"seed": "rng"})
def density_run(
    rho0: Any,
    *,
    beta: float,
    times: np.ndarray,
    n_particles: int,
    grid_size: int,
    rng: Any,
) -> tuple[Trajectory, np.ndarray]:
    """The SA mean-field density from ``rho0`` and ``n_particles`` particles sampled
    from it (with ``rng``, a seed or a Generator), at ``times``: ``(density
    trajectory, angles (T, n))``."""
    n_particles = check_int(n_particles, "n_particles", low=1)
    rng = check_rng(rng)
    sol = mean_field(
        rho0, beta=beta, times=times, normalization="sa", grid_size=grid_size
    )
    th0 = sample_density(sol.states[0], n_particles, rng=rng)
    model = CircleModel(beta=beta, normalization="sa")
    tr = simulate_angles(model, th0, times=times, dt=0.05)
    return sol, tr.states
