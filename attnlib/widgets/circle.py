r"""Widgets of the circle chapter.

* :func:`circle_particles`: SA particles on :math:`S^1` with sliders ``beta`` and
  ``n``; panels: final positions, the space-time diagram :math:`\theta_i(t)` and the
  order parameters :math:`r_k(t)` over time.
* :func:`circle_density`: the mean-field density with sliders ``beta`` and ``time``,
  over a histogram of ``n`` particles started from the same density.

Setting any slider's ``.value`` recomputes (cached per parameter) and redraws, so
both can be driven headless.
"""

from __future__ import annotations

from .._moved import retired

from typing import Any

import numpy as np

from .._deprecation import moved_arguments
from .._validation import check_int, check_real, fixed_seed
from ..circle._scenarios import density_run, particle_run
from ..viz.circle import draw_density, draw_particles
from ._static import Axis, Explorer, StaticSpec, detached_figure, every, show, slider

__all__ = ["circle_particles", "circle_density"]


class _CircleParticles(Explorer):
    """Live SA particles on the circle (an :class:`~attnlib.widgets.Explorer`).

    Attributes
    ----------
    beta, n : ipywidgets sliders (setting ``.value`` redraws)
    fig : matplotlib.figure.Figure
    """

    def __init__(self, controls, fig, *, t_final: float, rng: Any, n_max: int):
        super().__init__(controls, fig)
        self.t_final, self.n_max = t_final, n_max
        self.seed = fixed_seed(rng)  # the same initial angles for every key
        self._cache: dict = {}

    def run(self) -> tuple[np.ndarray, np.ndarray]:
        key = (float(self.beta.value), int(self.n.value))
        if key not in self._cache:
            self._cache[key] = particle_run(
                beta=key[0],
                n=key[1],
                t_final=self.t_final,
                rng=self.seed,
                n_max=self.n_max,
            )
        return self._cache[key]

    def redraw(self, *_: Any) -> None:
        times, states = self.run()
        draw_particles(
            self.fig.axes,
            times,
            states,
            title=f"SA, beta = {self.beta.value:g}, n = {self.n.value}",
        )
        self.fig.tight_layout()
        show(self.output, self.fig)


@moved_arguments((), renamed={"seed": "rng"})
def circle_particles(
    *,
    beta: float = 4.0,
    n: int = 64,
    t_final: float = 20.0,
    n_max: int = 256,
    rng: Any = 0,
) -> Explorer:
    r"""Sliders ``beta`` in [0, 16] and ``n`` in [2, ``n_max``] for SA on the circle.

    Initial angles are the first ``n`` of ``n_max`` uniform draws from ``rng`` (a seed
    or a Generator).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> w = circle_particles(n=16, t_final=2.0)  # doctest: +SKIP
    >>> w.beta.value = 2.0  # doctest: +SKIP
    >>> w.fig.axes[1].get_title()  # doctest: +SKIP
    'SA, beta = 2, n = 16'
    """
    beta = check_real(beta, "beta", low=0.0, high=16.0)
    n_max = check_int(n_max, "n_max", low=2)
    n = check_int(n, "n", low=2)
    if n > n_max:
        raise ValueError(f"n must be <= n_max = {n_max}, got {n}")
    t_final = check_real(t_final, "t_final", low=0.0, strict_low=True)
    sl_beta = slider(beta, 0.0, 16.0, 0.5, "beta")
    sl_n = slider(n, 2, n_max, 1, "n", integer=True)
    fig = detached_figure(
        1, 3, figsize=(11, 3.4), gridspec_kw={"width_ratios": [1, 1.6, 1.4]}
    )
    w = _CircleParticles(
        {"beta": sl_beta, "n": sl_n}, fig, t_final=t_final, rng=rng, n_max=n_max
    )
    # without a kernel: beta from 0 to 16 in steps of 1 (n as given)
    return w.start(
        StaticSpec(
            fig,
            [Axis("β", sl_beta, sorted({float(b) for b in range(17)} | {beta}))],
            alt=(
                f"SA on the circle with n = {n} particles: left, their final "
                "positions on the circle; middle, the space-time diagram of the "
                "angles; right, the order parameters r_1 to r_4 against time."
            ),
            live_only=["n"],
        )
    )


class _CircleDensity(Explorer):
    """Live mean-field density on the circle with a particle histogram (an
    :class:`~attnlib.widgets.Explorer`).

    Attributes
    ----------
    beta, time : ipywidgets sliders (setting ``.value`` redraws)
    fig : matplotlib.figure.Figure
    times : ndarray, shape (T,)
        Output times; the time slider picks the nearest.
    """

    def __init__(
        self,
        controls,
        fig,
        *,
        times: np.ndarray,
        rho0: Any,
        n_particles: int,
        grid_size: int,
        rng: Any,
    ):
        super().__init__(controls, fig)
        self.times, self.rho0, self.n_particles = times, rho0, n_particles
        self.grid_size = grid_size
        self.seed = fixed_seed(rng)  # the same particles for every beta
        self._cache: dict = {}

    def solution(self) -> tuple[Any, np.ndarray]:
        b = float(self.beta.value)
        if b not in self._cache:
            self._cache[b] = density_run(
                self.rho0,
                beta=b,
                times=self.times,
                n_particles=self.n_particles,
                grid_size=self.grid_size,
                rng=self.seed,
            )
        return self._cache[b]

    def redraw(self, *_: Any) -> None:
        sol, parts = self.solution()
        k = int(np.argmin(np.abs(self.times - float(self.time.value))))
        ax = self.fig.axes[0]
        draw_density(ax, sol, k, parts[k])
        ax.set_ylim(0, 1.1 * float(np.max(sol.states)))
        ax.set_title(
            f"SA mean field, beta = {self.beta.value:g}, t = {self.times[k]:.3g}",
            fontsize=10,
        )
        show(self.output, self.fig)


@moved_arguments((), renamed={"seed": "rng"})
def circle_density(
    *,
    beta: float = 6.0,
    t_final: float = 4.0,
    n_frames: int = 41,
    n_particles: int = 4000,
    grid_size: int = 512,
    rng: Any = 0,
    rho0: Any = None,
) -> Explorer:
    r"""Sliders ``beta`` in [0.5, 12] and ``time`` in [0, ``t_final``].

    The default initial density is
    :math:`(1 + 0.3\cos 2\theta + 0.2\sin 3\theta)/(2\pi)`.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> w = circle_density(n_particles=200, t_final=1.0)  # doctest: +SKIP
    >>> w.time.value = 0.5  # doctest: +SKIP
    >>> w.fig.axes[0].get_title()  # doctest: +SKIP
    'SA mean field, beta = 6, t = 0.5'
    """
    beta = check_real(beta, "beta", low=0.5, high=12.0)
    t_final = check_real(t_final, "t_final", low=0.0, strict_low=True)
    n_frames = check_int(n_frames, "n_frames", low=2)
    n_particles = check_int(n_particles, "n_particles", low=1)
    if rho0 is None:

        def rho0(t):
            return (1 + 0.3 * np.cos(2 * t) + 0.2 * np.sin(3 * t)) / (2 * np.pi)

    times = np.linspace(0, t_final, n_frames)
    sl_beta = slider(beta, 0.5, 12.0, 0.5, "beta")
    sl_t = slider(t_final, 0.0, t_final, times[1] - times[0], "time")
    fig = detached_figure(figsize=(6, 3.6))
    w = _CircleDensity(
        {"beta": sl_beta, "time": sl_t},
        fig,
        times=times,
        rho0=rho0,
        n_particles=n_particles,
        grid_size=check_int(grid_size, "grid_size", low=16),
        rng=rng,
    )
    # without a kernel: six betas, every fourth output time
    return w.start(
        StaticSpec(
            fig,
            [
                Axis("β", sl_beta, sorted({1.0, 2.0, 4.0, 6.0, 8.0, 12.0} | {beta})),
                Axis("time", sl_t, every(times, 4), fmt=lambda v: f"{v:.3g}"),
            ],
            alt=(
                "Mean-field density of SA on the circle (line) over the histogram of "
                f"{n_particles} particles drawn from the same initial density, at the "
                "chosen time: its bumps sharpen into clusters."
            ),
        )
    )


#: Names no longer public, served for one release with a warning.
__getattr__ = retired(
    __name__,
    {
        "CircleParticles": "attnlib.widgets.Explorer (what circle_particles returns)",
        "CircleDensity": "attnlib.widgets.Explorer (what circle_density returns)",
    },
)
