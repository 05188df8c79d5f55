r"""Figures of the frontiers chapter: normalisation schemes, causal masks, long
contexts, low temperature, modes, noise.

Every function draws only what it is given (the numbers come from the library) and
returns a :class:`matplotlib.figure.Figure` or an animation.
"""

from __future__ import annotations

from .._moved import retired

from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.animation import FuncAnimation

from ..frontiers import hardmax_weights

# Not public: draw_schemes, draw_causal and draw_hardmax, which draw on given axes
# for the figures below and for the live explorers of attnlib.widgets.
__all__ = [
    "schemes_figure",
    "phase_curves_figure",
    "causal_figure",
    "retention_figure",
    "renyi_figure",
    "long_context_figure",
    "hardmax_figure",
    "staircase_figure",
    "modes_figure",
    "noise_figure",
]

#: The matplotlib colour of each normalisation scheme in the chapter's figures.
_SCHEME_COLORS = {"post": "C0", "pre": "C1", "peri": "C2"}


def draw_schemes(
    axes: Sequence[Any], sols: Mapping[str, Any], *, title: str = ""
) -> None:
    """``1 - gamma`` (log-log) and the radius of equiangular solutions per scheme."""
    ax0, ax1 = axes
    for ax in axes:
        ax.clear()
    for name, sol in sols.items():
        t = sol.times[1:]
        c = _SCHEME_COLORS.get(name, None)
        gap = 1 - sol.info["gamma"][1:]
        gap = np.where(gap > 1e-11, gap, np.nan)  # below: the solver's tolerance
        ax0.loglog(t, gap, color=c, label=f"{name}-LN")
        ax1.plot(sol.times, sol.info["radius"], color=c, label=f"{name}-LN")
    t = next(iter(sols.values())).times[1:]
    ax0.loglog(t, 1 / t**2, "k:", lw=1, label=r"$t^{-2}$")
    ax0.set_ylim(1e-12, 2)
    ax0.set_xlabel("t")
    ax0.set_ylabel(r"$1 - \gamma(t)$")
    ax0.legend(fontsize=8)
    ax0.set_title(title, fontsize=10)
    ax1.set_xlabel("t")
    ax1.set_ylabel("radius r(t)")
    ax1.legend(fontsize=8)


def schemes_figure(sols: Mapping[str, Any], *, title: str = "") -> Any:
    """The schemes' equiangular solutions (``1 - gamma`` and the radius), on a new
    figure."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    draw_schemes(axes, sols, title=title)
    fig.tight_layout()
    return fig


def phase_curves_figure(
    betas: np.ndarray,
    curves: Mapping[str, np.ndarray],
    diagrams: Mapping[str, np.ndarray] | None = None,
    times: np.ndarray | None = None,
) -> Any:
    r"""Times :math:`t_\beta` of the curves :math:`\gamma(t) = 1 - \delta` per scheme;
    optionally particle pair fractions ``diagrams[scheme]`` of shape (T, len(betas))
    on ``times``, drawn as a colour map per scheme."""
    k = 1 + (0 if diagrams is None else len(diagrams))
    fig, axes = plt.subplots(1, k, figsize=(4.2 * k, 3.6), squeeze=False)
    ax = axes[0, 0]
    for name, tb in curves.items():
        ax.semilogx(tb, betas, color=_SCHEME_COLORS.get(name), label=f"{name}-LN")
    ax.set_xlabel(r"time $t_\beta$ with $\gamma(t_\beta) = 1 - \delta$")
    ax.set_ylabel(r"$\beta$")
    ax.legend(fontsize=8)
    ax.set_title("equiangular transition curves", fontsize=10)
    for a, (name, P) in zip(axes[0, 1:], (diagrams or {}).items()):
        a.pcolormesh(times, betas, P.T, vmin=0, vmax=1, cmap="RdBu_r", shading="auto")
        tb = curves[name]
        ok = tb <= times[-1]
        a.plot(tb[ok], betas[ok], "k--", lw=1)
        a.set_xlabel("t")
        a.set_ylabel(r"$\beta$")
        a.set_title(f"{name}-LN: P(<x1, x2> >= 1 - delta)", fontsize=10)
    fig.tight_layout()
    return fig


def draw_causal(
    axes: Sequence[Any],
    times: np.ndarray,
    theta: np.ndarray,
    *,
    labels: np.ndarray | None = None,
    title: str = "",
) -> None:
    """Final positions on the circle and the space-time diagram of the angles.

    ``theta`` has shape (T, n); colours follow ``labels`` (or the token order).
    """
    ax0, ax1 = axes
    ax0.clear()
    ax1.clear()
    n = theta.shape[1]
    cmap = plt.get_cmap("tab10" if labels is not None else "viridis")
    col = cmap(labels % 10) if labels is not None else cmap(np.linspace(0, 1, n))
    t = np.linspace(0, 2 * np.pi, 200)
    ax0.plot(np.cos(t), np.sin(t), color="0.85", lw=1)
    ax0.scatter(np.cos(theta[0]), np.sin(theta[0]), s=12, c=col, marker="x", alpha=0.4)
    ax0.scatter(np.cos(theta[-1]), np.sin(theta[-1]), s=22, c=col, zorder=3)
    ax0.set_aspect("equal")
    ax0.set_xticks([])
    ax0.set_yticks([])
    ax0.set_title(f"t = 0 (x) and t = {times[-1]:g} (o)", fontsize=10)
    unwrapped = np.unwrap(theta, axis=0)
    for i in range(n):
        ax1.plot(times, unwrapped[:, i], color=col[i], lw=0.8)
    ax1.plot(times, unwrapped[:, 0], "k", lw=2, label="token 1")
    ax1.set_xlabel("t")
    ax1.set_ylabel("angle")
    ax1.legend(fontsize=8, loc="upper right")
    ax1.set_title(title, fontsize=10)


def causal_figure(times: np.ndarray, theta: np.ndarray, **kw: Any) -> Any:
    """The causal run's angles against time, on a new figure."""
    fig, axes = plt.subplots(
        1, 2, figsize=(10, 3.8), gridspec_kw={"width_ratios": [1, 2]}
    )
    draw_causal(axes, times, theta, **kw)
    fig.tight_layout()
    return fig


def retention_figure(
    s: np.ndarray,
    profiles: Mapping[float, np.ndarray],
    *,
    particles: Mapping[float, tuple] | None = None,
) -> Any:
    """Mean-field retention profiles (one per time) with particle estimates.

    ``particles[t] = (s_k, mean, stderr)``.
    """
    fig, ax = plt.subplots(figsize=(6, 3.8))
    for k, (t, R) in enumerate(profiles.items()):
        ax.plot(s, R, color=f"C{k}", label=f"mean field, t = {t:g}")
        if particles and t in particles:
            sk, m, e = particles[t]
            ax.errorbar(sk, m, yerr=2 * e, fmt="o", color=f"C{k}", ms=3, capsize=2)
    ax.set_yscale("log")
    ax.set_xlabel("position s of the source token (last token at s = 1)")
    ax.set_ylabel("retention by the last token")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def renyi_figure(
    ns: np.ndarray,
    renyi: np.ndarray,
    jam: float,
    clusters: Mapping[int, Sequence[int]] | None = None,
) -> Any:
    """Rényi centres against n, the jamming limit, and clusters of the dynamics."""
    fig, ax = plt.subplots(figsize=(6, 3.6))
    ax.semilogx(ns, renyi, "o-", label="Rényi centres (mean over draws)")
    ax.axhline(jam, color="k", ls=":", label="jamming limit 0.7476 * 2 pi / delta")
    if clusters:
        for n, c in clusters.items():
            ax.plot([n] * len(c), c, "s", color="C3", alpha=0.6)
        ax.plot([], [], "s", color="C3", label="clusters of the dynamics")
    ax.set_xlabel("n")
    ax.set_ylabel("count")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def long_context_figure(
    ns: np.ndarray,
    gammas: np.ndarray,
    diag: np.ndarray,
    off: np.ndarray,
    gamma_c: float,
) -> Any:
    """Self weight and mean off-diagonal weight against n, one curve per gamma."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for k, g in enumerate(gammas):
        lab = rf"$\gamma = {g / gamma_c:.2g}\,\gamma_c$"
        axes[0].semilogx(ns, diag[k], "o-", color=f"C{k}", label=lab)
        axes[1].loglog(ns, off[k], "o-", color=f"C{k}", label=lab)
    axes[1].loglog(ns, 1.0 / ns, "k:", label=r"$n^{-1}$")
    axes[0].set_xlabel("n")
    axes[0].set_ylabel(r"self weight $A_{ii}$")
    axes[1].set_xlabel("n")
    axes[1].set_ylabel(r"weight $A_{ij}$, $j \neq i$")
    for ax in axes:
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def _draw_cells(ax: Any, vertices: np.ndarray, *, res: int = 300) -> None:
    """Colour the hull of ``vertices`` (in R^2) by the hardmax cell of each point."""
    lo, hi = vertices.min(axis=0) - 0.05, vertices.max(axis=0) + 0.05
    xs, ys = np.meshgrid(np.linspace(lo[0], hi[0], res), np.linspace(lo[1], hi[1], res))
    grid = np.c_[xs.ravel(), ys.ravel()]
    H = hardmax_weights(vertices, queries=grid)
    cell = np.argmax(H, axis=1).astype(float)
    # outside the hull: the maximum over the hull exceeds <z, z>; mask those points
    inside = np.max(grid @ vertices.T, axis=1) >= np.sum(grid * grid, axis=1)
    cell[~inside] = np.nan
    ax.imshow(
        cell.reshape(res, res),
        origin="lower",
        extent=(lo[0], hi[0], lo[1], hi[1]),
        cmap="tab10",
        vmin=0,
        vmax=10,
        alpha=0.25,
        interpolation="nearest",
    )


def draw_hardmax(
    ax: Any,
    vertices: np.ndarray,
    states: np.ndarray,
    *,
    title: str = "",
    cells: bool = True,
) -> None:
    """Cells, the hull vertices and the token paths ``states`` (T, n, 2)."""
    ax.clear()
    if cells:
        _draw_cells(ax, vertices)
    hull = np.vstack([vertices, vertices[:1]])
    ax.plot(hull[:, 0], hull[:, 1], "k-", lw=0.8)
    for i in range(states.shape[1]):
        ax.plot(states[:, i, 0], states[:, i, 1], color="0.3", lw=0.7)
    ax.scatter(states[0, :, 0], states[0, :, 1], s=10, color="C0", zorder=3)
    ax.scatter(states[-1, :, 0], states[-1, :, 1], s=14, color="C3", zorder=4)
    ax.scatter(vertices[:, 0], vertices[:, 1], s=50, facecolor="none", edgecolor="k")
    ax.set_aspect("equal")
    ax.set_title(title, fontsize=10)


def hardmax_figure(
    vertices: np.ndarray, runs: Mapping[str, np.ndarray], *, cells: bool = True
) -> Any:
    """One panel per run (title -> states)."""
    k = len(runs)
    fig, axes = plt.subplots(1, k, figsize=(3.8 * k, 3.8), squeeze=False)
    for ax, (title, states) in zip(axes[0], runs.items()):
        draw_hardmax(ax, vertices, states, title=title, cells=cells)
    fig.tight_layout()
    return fig


def staircase_figure(results: Mapping[float, Any], levels: Sequence[float]) -> Any:
    r"""Energy against the normalised time :math:`\sqrt{2\log(1+t)}/\log\beta`."""
    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    for k, (beta, res) in enumerate(results.items()):
        tau = np.sqrt(2 * np.log1p(res.times)) / np.log(beta)
        ax.plot(
            tau,
            res.info["energy"],
            color=plt.get_cmap("viridis")(k / max(1, len(results) - 1)),
            label=rf"$\beta = {beta:g}$",
        )
    for lv in levels:
        ax.axhline(lv, color="0.7", ls=":", lw=0.8)
    ax.set_xlabel(r"normalised time $\sqrt{2\log(1+t)}\,/\log\beta$")
    ax.set_ylabel("energy")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def modes_figure(
    betas: np.ndarray,
    counts: Mapping[str, np.ndarray],
    curves: Mapping[str, np.ndarray],
    *,
    line: tuple | None = None,
) -> Any:
    """Mode counts (markers) and predictions (lines) against beta; optionally a
    second panel ``line = (betas, ratios)`` for the Gaussian density on the line."""
    k = 1 if line is None else 2
    fig, axes = plt.subplots(1, k, figsize=(5.2 * k, 3.8), squeeze=False)
    ax = axes[0, 0]
    for j, (name, c) in enumerate(counts.items()):
        ax.loglog(betas, c, "o", color=f"C{j}", label=name)
    for j, (name, c) in enumerate(curves.items()):
        ax.loglog(betas, c, "-", color=f"C{j + len(counts)}", label=name)
    ax.set_xlabel(r"$\beta$")
    ax.set_ylabel("count")
    ax.legend(fontsize=8)
    ax.set_title("uniform points on the circle", fontsize=10)
    if line is not None:
        b, r = line
        axes[0, 1].semilogx(b, r, "o-")
        axes[0, 1].set_xlabel(r"$\beta$")
        axes[0, 1].set_ylabel(r"modes / $\sqrt{\beta\log\beta}$")
        axes[0, 1].set_title("Gaussian points on the line", fontsize=10)
    fig.tight_layout()
    return fig


def noise_figure(
    betas: np.ndarray,
    thresholds: Mapping[int, np.ndarray],
    sims: tuple | None = None,
) -> Any:
    r""":math:`\sigma_c(\beta, d)` per dimension; optionally
    ``sims = (times, series, labels)`` of :math:`|\bar x|(t)`."""
    k = 1 if sims is None else 2
    fig, axes = plt.subplots(1, k, figsize=(5.2 * k, 3.6), squeeze=False)
    for d, sc in thresholds.items():
        axes[0, 0].loglog(betas, sc, label=f"d = {d}")
    axes[0, 0].set_xlabel(r"$\beta$")
    axes[0, 0].set_ylabel(r"$\sigma_c(\beta, d)$ (SA)")
    axes[0, 0].legend(fontsize=8)
    if sims is not None:
        times, series, labels = sims
        for j, (y, lab) in enumerate(zip(series, labels)):
            axes[0, 1].plot(times, y, color=f"C{j}", label=lab)
        axes[0, 1].set_xlabel("t")
        axes[0, 1].set_ylabel(r"$|\bar x(t)|$")
        axes[0, 1].legend(fontsize=8)
    fig.tight_layout()
    return fig


def _frames_animation(
    draw: Any, frames: Sequence[Any], *, figsize: tuple = (10, 3.8), ncols: int = 2
) -> Any:
    """An animation calling ``draw(axes, frame)`` for each frame (static players)."""
    fig, axes = plt.subplots(1, ncols, figsize=figsize, squeeze=False)
    axes = list(axes[0])

    def update(k):
        draw(axes, frames[k])
        fig.tight_layout()
        return []

    anim = FuncAnimation(fig, update, frames=len(frames), blit=False)
    plt.close(fig)
    return anim


#: Names no longer public, served for one release with a warning.
__getattr__ = retired(
    __name__,
    {
        "SCHEME_COLORS": "attnlib.viz.frontiers.draw_schemes"
        " (which colours the schemes)",
        "draw_cells": "attnlib.viz.frontiers.draw_hardmax (which draws the cells)",
        "frames_animation": "matplotlib.animation.FuncAnimation (a player of frames)",
    },
)
