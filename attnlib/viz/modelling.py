r"""Figures of the modelling chapter: tokens on :math:`S^2`, variants, players.

The attention variants of [CACP] compared in the chapter and in
:func:`attnlib.widgets.modelling.sphere_explorer` are listed in :data:`VARIANTS`.
USA is displayed on the clock :math:`s = e^{\beta} t`: its weights
:math:`e^{\beta\langle x_i, x_j\rangle}` reach :math:`e^{\beta}`, so in the original
time a stable explicit step shrinks like :math:`e^{-\beta}`. The time change keeps
the paths and only relabels the time axis (:func:`variant_field`).
"""

from __future__ import annotations

from .._moved import retired

from collections.abc import Callable, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.animation import FuncAnimation

from .._deprecation import moved_arguments
from .._validation import as_states
from ..integrate import Trajectory
from .._variants import (
    VARIANTS as _VARIANTS,
    usa_clock as _usa_clock,
    variant_model as _variant_model,
    variant_trajectory as _variant_trajectory,
)

# Not public: draw_sphere and token_colors, which draw on given axes
# for the figures below and for the live explorers of attnlib.widgets.
__all__ = [
    "plot_snapshots",
    "plot_variants",
    "plot_circle_field",
]


def token_colors(n: int, cmap: str = "viridis") -> np.ndarray:
    """One colour per token, ``(n, 4)`` RGBA, so that tokens can be followed."""
    return plt.get_cmap(cmap)(np.linspace(0.0, 1.0, max(n, 1)))[:n]


def draw_sphere(ax: Any, *, alpha: float = 0.08) -> None:
    """Draw a light wireframe unit sphere on a 3-D axis and hide the box."""
    u, v = np.mgrid[0 : 2 * np.pi : 25j, 0 : np.pi : 13j]
    ax.plot_wireframe(
        np.cos(u) * np.sin(v),
        np.sin(u) * np.sin(v),
        np.cos(v),
        color="0.5",
        alpha=alpha,
        linewidth=0.5,
    )
    ax.set_xlim(-1, 1)
    ax.set_ylim(-1, 1)
    ax.set_zlim(-1, 1)
    ax.set_box_aspect((1, 1, 1))
    ax.set_axis_off()


def _tokens(ax, X, colors, size=18):
    return ax.scatter(X[:, 0], X[:, 1], X[:, 2], c=colors, s=size, depthshade=False)


def plot_snapshots(
    traj: Trajectory, indices: Sequence[int], *, title: str = "", size: float = 2.6
) -> plt.Figure:
    """Tokens on :math:`S^2` at a few output times of a trajectory, with their paths.

    Parameters
    ----------
    traj : Trajectory
        With ``states`` of shape ``(T, n, 3)``.
    indices : sequence of int
        Output-time indices to show, one panel each.
    """
    S = np.asarray(traj.states)
    if S.ndim != 3 or S.shape[-1] != 3:
        raise ValueError(f"traj.states must have shape (T, n, 3), got {S.shape}")
    colors = token_colors(S.shape[1])
    fig = plt.figure(figsize=(size * len(indices), size + 0.3))
    for k, idx in enumerate(indices):
        ax = fig.add_subplot(1, len(indices), k + 1, projection="3d")
        draw_sphere(ax)
        for i in range(S.shape[1]):
            path = S[: idx + 1, i]
            ax.plot(path[:, 0], path[:, 1], path[:, 2], color=colors[i], lw=0.6)
        _tokens(ax, S[idx], colors)
        ax.set_title(f"t = {traj.times[idx]:.3g}", fontsize=10)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


@moved_arguments("X0 beta times")
def plot_variants(
    X0: np.ndarray,
    *,
    beta: float,
    times: np.ndarray,
    Q: np.ndarray | None = None,
    K: np.ndarray | None = None,
    variants: Sequence[str] = tuple(_VARIANTS),
    dt: float = 0.1,
) -> tuple[plt.Figure, dict[str, np.ndarray], dict[str, Trajectory]]:
    """The [CACP] variants side by side for one configuration on :math:`S^2`.

    Top row: the attention matrix of ``X0`` under each variant (same colour scale).
    Bottom row: the trajectory of ``X0`` under each variant up to ``times[-1]``
    (every variant in its own time, USA included).

    Returns
    -------
    fig, matrices, trajectories
        The figure, the attention matrices ``{name: (n, n)}`` (sigmoid scaled by
        ``n``, USA by ``n`` on its display clock, see :func:`usa_clock`, so that
        all entries lie in ``[0, 1]``) and the trajectories ``{name: Trajectory}``.
    """
    X0 = as_states(X0, "X0", ndims=(2,))
    n = X0.shape[0]
    mats, trajs = {}, {}
    for name in variants:
        A = _variant_model(name, beta=beta, Q=Q, K=K).attention(X0)
        if name == "USA":
            A = A * n * np.exp(-_usa_clock(beta=beta, Q=Q, K=K))
        elif _VARIANTS[name]["normalization"] == "usa":
            A = A * n
        mats[name] = A
        trajs[name] = _variant_trajectory(
            name, X0, beta=beta, times=times, Q=Q, K=K, dt=dt, usa_clock_rescaled=False
        )
    m = len(variants)
    fig = plt.figure(figsize=(2.3 * m, 5.4))
    # one grid (matrices above, spheres below), which a phone's layout regroups
    grid = fig.add_gridspec(
        2,
        m,
        height_ratios=[0.36, 0.64],
        left=0.01,
        right=0.95,
        bottom=-0.06,
        top=0.92,
        wspace=0.05,
        hspace=0.0,
    )
    vmax = max(float(np.max(A)) for A in mats.values())
    colors = token_colors(n)
    for k, name in enumerate(variants):
        ax = fig.add_subplot(grid[0, k])
        im = ax.imshow(mats[name], cmap="magma", vmin=0.0, vmax=vmax)
        ax.set_title(name, fontsize=10)
        ax.set_xticks([])
        ax.set_yticks([])
        ax3 = fig.add_subplot(grid[1, k], projection="3d")
        draw_sphere(ax3)
        S = trajs[name].states
        for i in range(n):
            ax3.plot(S[:, i, 0], S[:, i, 1], S[:, i, 2], color=colors[i], lw=0.7)
        _tokens(ax3, S[-1], colors, size=14)
        ax3.set_title(f"{name}, t = {times[-1]:.3g}", fontsize=9, y=0.88)
    # beside the last matrix (all share its scale), in that matrix's cell
    fig.colorbar(im, ax=ax, shrink=0.9, location="right", pad=0.03)
    return fig, mats, trajs


def plot_circle_field(
    atoms: np.ndarray,
    weights: np.ndarray,
    field: Callable[[np.ndarray], np.ndarray],
    particle_velocity: np.ndarray,
    *,
    n_grid: int = 400,
) -> plt.Figure:
    r"""Mean-field velocity on the circle against the velocities of the particles.

    Plots the tangential component :math:`\langle X[\mu](x), x^\perp\rangle` of the
    field of a measure on :math:`S^1` at every angle, and marks the particles with
    their own velocities: for the empirical measure they lie on the curve.

    Parameters
    ----------
    atoms : ndarray, shape (n, 2)
        Unit vectors, the atoms of :math:`\mu`.
    weights : ndarray, shape (n,)
        Masses of the atoms (drawn as marker sizes).
    field : callable
        ``field(points) -> (m, 2)``: the velocity field of the measure at points.
    particle_velocity : ndarray, shape (n, 2)
        Velocities of the particles computed by the particle model.
    """
    atoms = as_states(atoms, "atoms", ndims=(2,))
    th = np.linspace(-np.pi, np.pi, n_grid)
    pts = np.stack([np.cos(th), np.sin(th)], axis=1)
    perp = np.stack([-pts[:, 1], pts[:, 0]], axis=1)
    tang = np.sum(field(pts) * perp, axis=1)
    ang = np.arctan2(atoms[:, 1], atoms[:, 0])
    aperp = np.stack([-atoms[:, 1], atoms[:, 0]], axis=1)
    vt = np.sum(np.asarray(particle_velocity) * aperp, axis=1)
    fig, ax = plt.subplots(figsize=(6.5, 3.2))
    ax.axhline(0, color="0.7", lw=0.8)
    ax.plot(th, tang, color="C0", label=r"field $X[\mu](x)$ of the measure")
    w = np.asarray(weights, dtype=float)
    ax.scatter(
        ang,
        vt,
        s=20 + 120 * w / w.max(),
        color="C3",
        zorder=3,
        label="particle velocities",
    )
    ax.set_xlabel(r"angle of $x$ on $S^1$")
    ax.set_ylabel("tangential velocity")
    ax.set_xlim(-np.pi, np.pi)
    ax.legend(loc="upper right", fontsize=9)
    fig.tight_layout()
    return fig


def _animate_states(
    states: np.ndarray,
    labels: Sequence[str],
    *,
    trails: bool = True,
    figsize: tuple[float, float] = (5.0, 4.0),
    dpi: int = 80,
) -> FuncAnimation:
    """A small player over frames of tokens on :math:`S^2` (for ``to_jshtml``).

    Parameters
    ----------
    states : ndarray, shape (F, n, 3)
        One configuration per frame (frames over time, or over a parameter).
    labels : sequence of str, length F
        Title of each frame.
    trails : bool
        Draw the path of each token up to the current frame (frames over time).

    Returns
    -------
    matplotlib.animation.FuncAnimation
        The figure is closed, so that only the player is shown.
    """
    S = np.asarray(states)
    if S.ndim != 3 or S.shape[-1] != 3:
        raise ValueError(f"states must have shape (F, n, 3), got {S.shape}")
    if len(labels) != S.shape[0]:
        raise ValueError(
            f"labels must have one entry per frame ({S.shape[0]}), got {len(labels)}"
        )
    colors = token_colors(S.shape[1])
    fig = plt.figure(figsize=figsize, dpi=dpi)
    ax = fig.add_subplot(projection="3d")
    draw_sphere(ax)
    sc = _tokens(ax, S[0], colors, size=22)
    lines = [ax.plot([], [], [], color=c, lw=0.6)[0] for c in colors] if trails else []
    title = ax.set_title(labels[0])

    def update(f):
        sc._offsets3d = (S[f, :, 0], S[f, :, 1], S[f, :, 2])
        for i, ln in enumerate(lines):
            ln.set_data_3d(S[: f + 1, i, 0], S[: f + 1, i, 1], S[: f + 1, i, 2])
        title.set_text(labels[f])
        return [sc, title, *lines]

    anim = FuncAnimation(fig, update, frames=S.shape[0], interval=150, blit=False)
    plt.close(fig)
    return anim


#: Names no longer public, served for one release with a warning.
__getattr__ = retired(
    __name__,
    {
        "VARIANTS": "attnlib._variants.VARIANTS"
        " (not public: what the modelling figures draw)",
        "variant_model": "attnlib.variant_model",
        "variant_field": "attnlib._variants.variant_field"
        " (not public: what the modelling figures draw)",
        "usa_clock": "attnlib._variants.usa_clock"
        " (not public: what the modelling figures draw)",
        "variant_trajectory": "attnlib._variants.variant_trajectory"
        " (not public: what the modelling figures draw)",
        "animate_states": "attnlib.widgets.modelling.sphere_explorer"
        " (the explorer of the same run)",
    },
)
