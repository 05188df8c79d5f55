r"""Figures of the circle chapter: particles on :math:`S^1`, densities, Kuramoto.

Every function returns a :class:`matplotlib.figure.Figure` (or an animation) and
draws only what it is given; the numbers come from :mod:`attnlib.circle`.
"""

from __future__ import annotations

from .._moved import retired

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.animation import FuncAnimation

from ..circle import (
    DensityTrajectory,
    growth_rates,
    kuramoto_r,
    order_parameter,
)
from .._deprecation import moved_arguments
from .._validation import fixed_seed
from ..circle._scenarios import particle_run as _particle_run

# Not public: draw_particles and draw_density, which draw on given axes
# for the figures below and for the live explorers of attnlib.widgets.
__all__ = [
    "particles_figure",
    "density_figure",
    "growth_rates_figure",
    "kuramoto_figure",
    "energy_figure",
]

TWO_PI = 2 * np.pi


def _draw_circle(
    ax: Any, theta: np.ndarray, *, color: Any = "C0", s: float = 18
) -> Any:
    """Unit circle and the points :math:`(\\cos\\theta_i, \\sin\\theta_i)` on ``ax``."""
    t = np.linspace(0, TWO_PI, 200)
    ax.plot(np.cos(t), np.sin(t), color="0.8", lw=1)
    sc = ax.scatter(np.cos(theta), np.sin(theta), s=s, color=color, alpha=0.6, zorder=3)
    ax.set_aspect("equal")
    ax.set_xlim(-1.25, 1.25)
    ax.set_ylim(-1.25, 1.25)
    ax.set_xticks([])
    ax.set_yticks([])
    return sc


def draw_particles(
    axes: Sequence[Any], times: np.ndarray, states: np.ndarray, title: str = ""
) -> None:
    """Fill three axes: final positions, space-time diagram, order parameter."""
    ax_c, ax_s, ax_r = axes
    for ax in axes:
        ax.clear()
    _draw_circle(ax_c, states[-1])
    ax_c.set_title(f"t = {times[-1]:g}", fontsize=10)
    n = states.shape[1]
    ax_s.plot(
        np.repeat(times, n),
        states.ravel(),
        ".",
        ms=1.0,
        color="C0",
        alpha=0.8 if n < 200 else 0.4,
    )
    ax_s.set_xlabel("t")
    ax_s.set_ylabel(r"$\theta_i(t)$")
    ax_s.set_ylim(0, TWO_PI)
    ax_s.set_title(title, fontsize=10)
    r1 = order_parameter(states)[0]
    ax_r.plot(times, r1, label="$r_1$ (one cluster)")
    for k in (2, 3, 4):
        ax_r.plot(times, order_parameter(states, k=k)[0], lw=0.8, label=f"$r_{k}$")
    ax_r.set_ylim(0, 1.05)
    ax_r.set_xlabel("t")
    ax_r.set_title(r"$|\frac{1}{n}\sum_j e^{ik\theta_j}|$", fontsize=10)
    ax_r.legend(fontsize=9, loc="lower right")


def particles_figure(times: np.ndarray, states: np.ndarray, title: str = "") -> Any:
    """Final positions, space-time diagram :math:`\\theta_i(t)` and order parameters."""
    fig, axes = plt.subplots(
        1, 3, figsize=(11, 3.4), gridspec_kw={"width_ratios": [1, 1.6, 1.4]}
    )
    draw_particles(axes, times, states, title)
    fig.tight_layout()
    return fig


@moved_arguments("betas n", renamed={"seed": "rng"})
def _particles_beta_animation(
    betas: Sequence[float], n: int = 64, *, t_final: float = 20.0, rng: Any = 0
) -> FuncAnimation:
    """Space-time diagrams of SA particles, one frame per ``beta`` (the same initial
    angles, drawn from ``rng``: a seed or a Generator)."""
    seed = fixed_seed(rng)
    runs = [
        _particle_run(beta=b, n=n, t_final=t_final, n_frames=61, rng=seed)
        for b in betas
    ]
    fig, axes = plt.subplots(
        1, 3, figsize=(9, 3), dpi=72, gridspec_kw={"width_ratios": [1, 1.6, 1.4]}
    )

    def frame(i):
        draw_particles(axes, *runs[i], title=f"SA, beta = {betas[i]:g}, n = {n}")
        return []

    frame(0)
    fig.tight_layout()
    anim = FuncAnimation(fig, frame, frames=len(betas), interval=600)
    plt.close(fig)
    return anim


def draw_density(
    ax: Any,
    sol: DensityTrajectory,
    k: int,
    particles: np.ndarray | None = None,
    bins: int = 64,
) -> None:
    """Density at output ``k`` and, optionally, a particle histogram at that time."""
    ax.clear()
    if particles is not None:
        ax.hist(
            particles,
            bins=bins,
            range=(0, TWO_PI),
            density=True,
            color="C1",
            alpha=0.45,
            label=f"{particles.size} particles",
        )
    g = np.append(sol.info["grid"], TWO_PI)
    ax.plot(
        g,
        np.append(sol.states[k], sol.states[k][0]),
        color="C0",
        lw=2,
        label="mean field",
    )
    ax.set_xlim(0, TWO_PI)
    ax.set_xlabel(r"$\theta$")
    ax.set_ylabel(r"$\rho(t, \theta)$")
    ax.legend(fontsize=9, loc="upper right")


def density_figure(
    sol: DensityTrajectory,
    ks: Sequence[int],
    particles: np.ndarray | None = None,
    title: str = "",
) -> Any:
    """Mean-field density at several outputs ``ks`` (particles: array ``(T, n)``)."""
    fig, axes = plt.subplots(1, len(ks), figsize=(3.3 * len(ks), 3), sharey=True)
    axes = np.atleast_1d(axes)
    for ax, k in zip(axes, ks, strict=True):
        draw_density(ax, sol, k, None if particles is None else particles[k])
        ax.set_title(f"t = {sol.times[k]:g}", fontsize=10)
        if ax is not axes[0]:
            ax.set_ylabel("")
    if title:
        fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return fig


def _density_animation(
    sol: DensityTrajectory, particles: np.ndarray | None = None, title: str = ""
) -> FuncAnimation:
    """One frame per output time of the mean-field density (and particle histograms)."""
    fig, ax = plt.subplots(figsize=(5, 3.6), dpi=72)
    top = 1.1 * float(np.max(sol.states))

    def frame(k):
        draw_density(ax, sol, k, None if particles is None else particles[k])
        ax.set_ylim(0, top)
        ax.set_title(f"{title}t = {sol.times[k]:.2f}", fontsize=10)
        return []

    frame(0)
    fig.tight_layout()
    anim = FuncAnimation(fig, frame, frames=sol.times.size, interval=250)
    plt.close(fig)
    return anim


def growth_rates_figure(
    betas: Sequence[float], kmax: int = 12, counts: dict | None = None
) -> Any:
    r"""Normalised rates :math:`\lambda_k/\max_j\lambda_j` against ``k`` for each beta.

    ``counts`` maps beta to the cluster counts observed in simulations (shown as a
    histogram in the right panel).
    """
    fig, axes = plt.subplots(1, 2 if counts else 1, figsize=(10 if counts else 5, 3.4))
    axes = np.atleast_1d(axes)
    k = np.arange(1, kmax + 1)
    for i, b in enumerate(betas):
        lam = growth_rates(k, beta=b)
        axes[0].plot(k, lam / lam.max(), "o-", color=f"C{i}", label=f"beta = {b:g}")
        axes[0].axvline(k[np.argmax(lam)], color=f"C{i}", ls=":", lw=1)
    axes[0].set_xlabel("mode k")
    axes[0].set_ylabel(r"$k^2 I_k(\beta) / \max_j j^2 I_j(\beta)$")
    axes[0].legend(fontsize=8)
    axes[0].set_title("linear growth rates at the uniform density", fontsize=10)
    if counts:
        width = 0.8 / len(betas)
        for i, b in enumerate(betas):
            c = np.bincount(np.asarray(counts[b]), minlength=kmax + 1)[1 : kmax + 1]
            axes[1].bar(
                k + (i - (len(betas) - 1) / 2) * width,
                c,
                width=width,
                color=f"C{i}",
                label=f"beta = {b:g}",
            )
        axes[1].set_xlabel("number of clusters formed")
        axes[1].set_ylabel("runs")
        axes[1].set_xticks(k)
        axes[1].legend(fontsize=8)
        axes[1].set_title("simulations from near-uniform data", fontsize=10)
    fig.tight_layout()
    return fig


def kuramoto_figure(
    K: np.ndarray,
    r: np.ndarray,
    gamma: float,
    times: np.ndarray | None = None,
    r_t: np.ndarray | None = None,
) -> Any:
    """Order parameter against coupling with the Lorentzian theory (and r(t) curves)."""
    fig, axes = plt.subplots(
        1, 2 if r_t is not None else 1, figsize=(10 if r_t is not None else 5, 3.4)
    )
    axes = np.atleast_1d(axes)
    KK = np.linspace(0, max(K) * 1.02, 400)
    axes[0].plot(
        KK, kuramoto_r(KK, gamma), color="k", lw=1.5, label=r"$\sqrt{1 - 2\gamma/K}$"
    )
    axes[0].plot(K, r, "o", color="C3", label="simulation")
    axes[0].axvline(2 * gamma, color="0.5", ls=":", lw=1)
    axes[0].set_xlabel("coupling K")
    axes[0].set_ylabel(r"$r_\infty$")
    axes[0].legend(fontsize=8)
    axes[0].set_title(f"Lorentzian frequencies, gamma = {gamma:g}", fontsize=10)
    if r_t is not None:
        if r_t.shape[1] != len(K):
            raise ValueError(
                f"r_t must have one column per coupling ({len(K)}), got {r_t.shape}"
            )
        for j in range(r_t.shape[1]):
            axes[1].plot(times, r_t[:, j], lw=0.9, label=f"K = {K[j]:g}")
        axes[1].set_xlabel("t")
        axes[1].set_ylabel("r(t)")
        axes[1].legend(fontsize=7, ncol=2)
    fig.tight_layout()
    return fig


def energy_figure(
    times: np.ndarray,
    E: np.ndarray,
    counts: np.ndarray,
    states: np.ndarray | None = None,
    title: str = "",
) -> Any:
    """Energy and cluster count against (log) time, with the space-time diagram."""
    fig, axes = plt.subplots(
        1,
        2 if states is not None else 1,
        figsize=(10 if states is not None else 5, 3.4),
    )
    axes = np.atleast_1d(axes)
    ax = axes[0]
    ax.semilogx(times[1:], E[1:], color="C0")
    ax.set_xlabel("t")
    ax.set_ylabel(r"$E_\beta(\theta(t))$", color="C0")
    ax2 = ax.twinx()
    ax2.semilogx(times[1:], counts[1:], color="C3", drawstyle="steps-post")
    ax2.set_ylabel("clusters", color="C3")
    ax.set_title(title, fontsize=10)
    if states is not None:
        n = states.shape[1]
        axes[1].semilogx(np.repeat(times[1:], n), states[1:].ravel(), ".", ms=0.8)
        axes[1].set_ylim(0, TWO_PI)
        axes[1].set_xlabel("t")
        axes[1].set_ylabel(r"$\theta_i(t)$")
    fig.tight_layout()
    return fig


#: Names no longer public, served for one release with a warning.
__getattr__ = retired(
    __name__,
    {
        "particle_run": "attnlib.circle._scenarios.particle_run"
        " (not public: the run the widgets draw)",
        "draw_circle": "attnlib.viz.circle.draw_particles (which draws the circle)",
        "particles_beta_animation": "attnlib.widgets.circle.circle_particles"
        " (the explorer of the same sweep)",
        "density_animation": "attnlib.widgets.circle.circle_density"
        " (the explorer of the same run)",
    },
)
