"""Figures of the chapter on the Gaussian case (mean and covariance dynamics)."""

from __future__ import annotations

from .._moved import retired

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.animation import FuncAnimation

from ..gaussian import effective_rank
from ..gaussian._dynamics import condition_number, disc_coordinates
from ..gaussian._presets import (
    CloudScenario as _CloudScenario,
    ellipse_points as _ellipse_points,
)

__all__ = [
    "draw_cloud",
    "plot_moment_tracking",
    "plot_convergence",
    "plot_disc",
    "plot_anisotropy",
    "plot_rank_histograms",
    "plot_kurtosis",
]


def draw_cloud(ax, X, alpha, Sigma, *, title: str = "", lim=None):
    """Scatter of the particles with the predicted 1- and 2-sigma ellipses."""
    ax.scatter(X[:, 0], X[:, 1], s=4, alpha=0.5, color="C0", label="particles")
    for k, ls in ((1.0, "--"), (2.0, "-")):
        E = _ellipse_points(alpha, Sigma, nsig=k)
        ax.plot(E[:, 0], E[:, 1], color="C3", ls=ls, lw=1.5)
    ax.plot(*alpha, "x", color="C3", ms=8)
    if lim is not None:
        ax.set_xlim(lim[0]), ax.set_ylim(lim[1])
    ax.set_aspect("equal", adjustable="box")
    ax.set_title(title)
    return ax


def _limits(sc: _CloudScenario):
    P = sc.states.reshape(-1, 2)
    lo, hi = np.percentile(P, [0.5, 99.5], axis=0)
    pad = 0.1 * (hi - lo)
    return (lo[0] - pad[0], hi[0] + pad[0]), (lo[1] - pad[1], hi[1] + pad[1])


def _cloud_animation(
    sc: _CloudScenario, *, figsize=(5, 4), dpi: int = 80, title: str = ""
) -> FuncAnimation:
    """Animation of the particle cloud and the predicted ellipse over time."""
    fig, ax = plt.subplots(figsize=figsize, dpi=dpi)
    lim = _limits(sc)

    def frame(k):
        ax.clear()
        draw_cloud(
            ax,
            sc.states[k],
            sc.info["means"][k],
            sc.info["covariances"][k],
            lim=lim,
            title=f"{title} t = {sc.times[k]:.2f}",
        )

    frame(0)
    anim = FuncAnimation(fig, frame, frames=len(sc.times), interval=150)
    plt.close(fig)
    return anim


def plot_moment_tracking(times, particle_covs, ode_covs, *, ax=None):
    """Entries of the empirical covariance (markers) against the ODE (lines)."""
    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 3.5))
    for (i, j), c in zip(((0, 0), (0, 1), (1, 1)), ("C0", "C1", "C2")):
        lab = rf"$\Sigma_{{{i + 1}{j + 1}}}$ ODE"
        ax.plot(times, ode_covs[:, i, j], color=c, label=lab)
        ax.plot(times, particle_covs[:, i, j], "o", color=c, ms=5, mfc="none")
    ax.set_xlabel("t")
    ax.set_title("covariance: particles (circles) vs ODE (lines)")
    ax.legend(fontsize=8)
    return ax


def plot_convergence(
    ns: Sequence[int],
    errors: Sequence[float],
    *,
    ax=None,
    label: str = "particles vs ODE",
):
    """Log-log plot of the particle/ODE discrepancy with an ``n^{-1/2}`` guide."""
    if ax is None:
        _, ax = plt.subplots(figsize=(5, 3.5))
    ns = np.asarray(ns, float)
    errors = np.asarray(errors, float)
    ax.loglog(ns, errors, "o-", label=label)
    ax.loglog(ns, errors[0] * np.sqrt(ns[0] / ns), "k--", label=r"$\propto n^{-1/2}$")
    ax.set_xlabel("number of particles n")
    ax.set_ylabel("error at final time")
    ax.legend()
    return ax


def plot_disc(
    trajectories: Mapping[str, Sequence[np.ndarray]], *, ax=None, title: str = ""
):
    r"""Trajectories of :math:`\Sigma/\operatorname{tr}\Sigma` in the unit disc.

    ``trajectories`` maps a label to a list of covariance paths ``(T, 2, 2)``; each
    label gets one colour; circles mark starts, crosses the last point.
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(4, 4))
    th = np.linspace(0, 2 * np.pi, 200)
    ax.plot(np.cos(th), np.sin(th), "k", lw=0.8)
    ax.plot(0, 0, "k+", ms=6)
    for c, (label, paths) in enumerate(trajectories.items()):
        for k, S in enumerate(paths):
            xy = disc_coordinates(np.asarray(S))
            ax.plot(
                xy[:, 0],
                xy[:, 1],
                color=f"C{c}",
                lw=1.2,
                label=label if k == 0 else None,
            )
            ax.plot(*xy[0], "o", color=f"C{c}", ms=3)
            ax.plot(*xy[-1], "x", color=f"C{c}", ms=6)
    ax.set_aspect("equal")
    ax.set_xlim(-1.1, 1.1), ax.set_ylim(-1.1, 1.1)
    ax.set_xticks([]), ax.set_yticks([])
    ax.set_title(title)
    return ax


def plot_anisotropy(results: Mapping[str, tuple[np.ndarray, np.ndarray]]):
    """Trace, condition number and effective rank against time, one line per label.

    ``results`` maps a label to ``(times, covariances)``.
    """
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.2))
    for label, (t, S) in results.items():
        axes[0].semilogy(t, np.trace(S, axis1=-2, axis2=-1), label=label)
        axes[1].semilogy(t, condition_number(S), label=label)
        axes[2].plot(t, effective_rank(S), label=label)
    for ax, name in zip(axes, (r"tr $\Sigma$", r"cond $\Sigma$", "effective rank")):
        ax.set_xlabel("t")
        ax.set_title(name)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_rank_histograms(ranks: Mapping[int, Mapping[str, np.ndarray]]):
    """Histograms of limit ranks; ``ranks[d][label]`` is an integer array."""
    ds = sorted(ranks)
    fig, axes = plt.subplots(1, len(ds), figsize=(3.6 * len(ds), 3.0), sharey=True)
    axes = np.atleast_1d(axes)
    for ax, d in zip(axes, ds):
        labels = list(ranks[d])
        width = 0.8 / len(labels)
        for k, lab in enumerate(labels):
            r = np.asarray(ranks[d][lab])
            counts = np.array([np.sum(r == j) for j in range(d + 1)]) / r.size
            ax.bar(
                np.arange(d + 1) + (k - (len(labels) - 1) / 2) * width,
                counts,
                width=width,
                label=lab,
            )
        ax.axvline((d + 1) // 2 + 0.5, color="k", ls=":", lw=1)
        ax.set_xticks(range(d + 1))
        ax.set_xlabel("numerical rank of the limit")
        ax.set_title(f"d = {d}, bound ⌈d/2⌉ = {(d + 1) // 2}")
    axes[0].set_ylabel("fraction of draws")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_kurtosis(times, kurtoses: Mapping[str, np.ndarray], *, d: int, ax=None):
    """Mardia kurtosis over time with the Gaussian value ``d(d+2)``."""
    if ax is None:
        _, ax = plt.subplots(figsize=(5, 3.5))
    for label, k in kurtoses.items():
        ax.plot(times, k, "o-", ms=3, label=label)
    ax.axhline(d * (d + 2), color="k", ls="--", lw=1, label=f"Gaussian: {d * (d + 2)}")
    ax.set_xlabel("t")
    ax.set_ylabel("Mardia kurtosis")
    ax.legend(fontsize=8)
    return ax


#: Names no longer public, served for one release with a warning.
__getattr__ = retired(
    __name__,
    {
        "ellipse_points": "attnlib.gaussian._presets.ellipse_points"
        " (not public: what the figures draw)",
        "CloudScenario": "attnlib.gaussian._presets.CloudScenario"
        " (not public: what the widget runs)",
        "cloud_scenario": "attnlib.gaussian._presets.cloud_scenario"
        " (not public: what the widget runs)",
        "cloud_animation": "attnlib.widgets.gaussian.gaussian_widget"
        " (the explorer of the same run)",
    },
)
