"""Figures of the chapter on energy extremisers (matplotlib only)."""

from __future__ import annotations

from .._moved import retired

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.animation import FuncAnimation
from matplotlib.collections import LineCollection

__all__ = [
    "plot_circle_configuration",
    "plot_sphere_configuration",
    "plot_cluster_fractions",
    "plot_four_particle_law",
    "plot_two_particle_energies",
    "plot_circle_density",
    "plot_gegenbauer",
]

CMAP = "viridis"


def _quad(P: np.ndarray, D: np.ndarray) -> np.ndarray:
    return np.einsum("...i,ij,...j->...", P, np.asarray(D, float), P)


def plot_circle_configuration(ax, X, D, *, title=None, vmin=None, vmax=None, size=40):
    """Particles on S^1 over the circle coloured by the quadratic form x . D x."""
    t = np.linspace(0, 2 * np.pi, 361)
    P = np.stack([np.cos(t), np.sin(t)], axis=1)
    q = _quad(P, D)
    seg = np.stack([P[:-1], P[1:]], axis=1)
    lc = LineCollection(seg, cmap=CMAP, linewidths=6, zorder=1)
    lc.set_array(0.5 * (q[:-1] + q[1:]))
    lc.set_clim(q.min() if vmin is None else vmin, q.max() if vmax is None else vmax)
    ax.add_collection(lc)
    X = np.asarray(X)
    ax.scatter(
        X[:, 0],
        X[:, 1],
        s=size,
        color="crimson",
        zorder=3,
        alpha=0.6,
        edgecolors="k",
        linewidths=0.5,
    )
    ax.set_xlim(-1.25, 1.25)
    ax.set_ylim(-1.25, 1.25)
    ax.set_aspect("equal")
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=10)
    return lc


def plot_sphere_configuration(ax, X, D, *, title=None, size=12, res=40):
    """Particles on S^2 (3-D axis) over the sphere coloured by x . D x."""
    u, v = np.meshgrid(np.linspace(0, 2 * np.pi, res), np.linspace(0, np.pi, res // 2))
    P = np.stack([np.cos(u) * np.sin(v), np.sin(u) * np.sin(v), np.cos(v)], axis=-1)
    q = _quad(P, D)
    span = q.max() - q.min()
    if span < 1e-9 * max(1.0, float(np.abs(q).max())):  # constant form, e.g. D = I
        col = plt.get_cmap(CMAP)(np.full(q.shape, 0.5))
    else:
        col = plt.get_cmap(CMAP)((q - q.min()) / span)
    ax.plot_surface(
        P[..., 0],
        P[..., 1],
        P[..., 2],
        facecolors=col,
        alpha=0.35,
        linewidth=0,
        shade=False,
        rstride=1,
        cstride=1,
    )
    X = np.asarray(X)
    ax.scatter(X[:, 0], X[:, 1], X[:, 2], s=size, color="crimson", depthshade=False)
    ax.set_box_aspect((1, 1, 1))
    ax.set_xlim(-1, 1)
    ax.set_ylim(-1, 1)
    ax.set_zlim(-1, 1)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_zticks([])
    if title:
        ax.set_title(title, fontsize=10)


def plot_cluster_fractions(ax, lams, counts, *, reference=None):
    """Stacked bars: fraction of runs ending in one, two, or more clusters per lambda.

    ``counts`` has shape (len(lams), runs). ``reference`` = (lo, hi) shades the
    single-cluster window reported by [BKKRW].
    """
    lams = np.asarray(lams)
    counts = np.asarray(counts)
    one = np.mean(counts == 1, axis=1)
    two = np.mean(counts == 2, axis=1)
    more = 1 - one - two
    w = 0.8 * np.min(np.diff(lams)) if lams.size > 1 else 0.1
    ax.bar(lams, one, width=w, color="tab:blue", label="one cluster")
    ax.bar(
        lams,
        two,
        width=w,
        bottom=one,
        color="tab:red",
        hatch="//",
        label="two antipodal clusters",
    )
    if np.any(more > 0):
        ax.bar(lams, more, width=w, bottom=one + two, color="0.6", label="more")
    if reference is not None:
        ax.axvspan(
            *reference,
            color="tab:blue",
            alpha=0.08,
            zorder=0,
            label="[BKKRW] single-cluster window",
        )
    ax.set_xlabel(r"$\lambda$ in $D = \mathrm{diag}(1, \lambda)$")
    ax.set_ylabel("fraction of runs")
    ax.set_ylim(0, 1.0)
    ax.legend(
        fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False
    )


def plot_four_particle_law(ax, lams, curves):
    """Ratio tanh(a^2)/tanh(lambda b^2) against lambda; ``curves``: label -> values."""
    lams = np.asarray(lams)
    ax.plot(lams, lams, "k--", lw=1, label=r"law: ratio $= \lambda$")
    for (label, vals), m in zip(curves.items(), ["o", "s", "^", "v"]):
        vals = np.asarray(vals, float)
        ax.plot(
            lams, np.where(np.isfinite(vals), vals, np.nan), m + "-", ms=4, label=label
        )
    ax.set_xlabel(r"$\lambda$")
    ax.set_ylabel(r"$\tanh(a^2)/\tanh(\lambda b^2)$")
    ax.set_ylim(-0.2, 1.4 * lams.max())
    ax.legend(fontsize=8)


def plot_two_particle_energies(ax, lams):
    """Two-particle energies for D = diag(-1, lam): e^lam, cosh 1 and cosh lam."""
    lams = np.asarray(lams)
    ax.plot(lams, np.exp(lams), label=r"both at $e_2$: $e^\lambda$")
    ax.plot(lams, np.full_like(lams, np.cosh(1.0)), label=r"$\pm e_1$: $\cosh 1$")
    ax.plot(lams, np.cosh(lams), label=r"$\pm e_2$: $\cosh\lambda$")
    x = np.log(np.cosh(1.0))
    ax.axvline(x, color="k", lw=0.8, ls=":")
    ax.annotate(
        rf"$\lambda = \ln\cosh 1 \approx {x:.4f}$",
        (x, np.cosh(1.0)),
        xytext=(x + 0.1, 1.0),
        fontsize=8,
        arrowprops={"arrowstyle": "->"},
    )
    ax.set_xlabel(r"$\lambda$ in $D = \mathrm{diag}(-1, \lambda)$")
    ax.set_ylabel(r"$E_D$")
    ax.legend(fontsize=8)


def plot_circle_density(ax, points, weights, *, label=None):
    """Density (w.r.t. arc length) of grid weights on S^1 against the angle."""
    theta = np.mod(np.arctan2(points[:, 1], points[:, 0]), 2 * np.pi)
    order = np.argsort(theta)
    m = len(weights)
    ax.plot(theta[order], np.asarray(weights)[order] * m / (2 * np.pi), label=label)
    ax.set_xlabel(r"angle $\theta$")
    ax.set_ylabel("density")
    ax.set_xticks(
        np.pi * np.array([0, 0.5, 1, 1.5, 2]),
        ["0", r"$\pi/2$", r"$\pi$", r"$3\pi/2$", r"$2\pi$"],
    )


def plot_gegenbauer(ax, coeffs):
    """Gegenbauer coefficients a_k > 0 on a log scale; ``coeffs``: label -> array."""
    for label, a in coeffs.items():
        a = np.asarray(a)
        ax.semilogy(np.arange(a.size), a, "o-", ms=3, label=label)
    ax.set_xlabel("degree $k$")
    ax.set_ylabel("$a_k$")
    ax.legend(fontsize=8)


def _animate_lambda_sweep(
    lams, finals, energies, *, d_of_lam=None, figsize=(5, 4), dpi=72
):
    """Player over lambda: final configuration on S^1 for D = diag(1, lambda).

    ``finals`` has shape (len(lams), n, 2), ``energies`` shape (len(lams),). The figure
    is closed so that only the animation is shown.
    """
    if d_of_lam is None:

        def d_of_lam(lam):
            return np.diag([1.0, lam])

    fig, ax = plt.subplots(figsize=figsize, dpi=dpi)

    def draw(k):
        ax.clear()
        lam = lams[k]
        plot_circle_configuration(
            ax,
            finals[k],
            d_of_lam(lam),
            vmin=0.0,
            vmax=float(np.max(lams)),
            title=rf"$\lambda = {lam:.2f}$,  $E_D = {energies[k]:.4f}$",
        )
        return ()

    anim = FuncAnimation(fig, draw, frames=len(lams), interval=400, blit=False)
    plt.close(fig)
    return anim


#: Names no longer public, served for one release with a warning.
__getattr__ = retired(
    __name__,
    {
        "animate_lambda_sweep": "attnlib.widgets.extremisers.extremiser_widget"
        " (the explorer of the same sweep)",
    },
)
