"""Figures of the clustering chapter: phase diagrams, histograms, metastability."""

from __future__ import annotations

from .._moved import retired

from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.animation import FuncAnimation

from ..clustering import PhaseDiagram, phase_transition_curve, wendel_probability

__all__ = [
    "plot_phase_diagram",
    "plot_phase_diagrams",
    "plot_inner_product_histograms",
    "plot_metastability",
    "plot_equiangular_check",
    "plot_wendel",
    "plot_decay",
]


def _gamma_curve(pd: PhaseDiagram, normalization: str = "sa"):
    bs = np.linspace(max(pd.betas.min(), 0.0), pd.betas.max(), 80)
    ts = phase_transition_curve(bs, n=pd.n, delta=pd.delta, normalization=normalization)
    keep = ts <= pd.times.max()
    return ts[keep], bs[keep]


def plot_phase_diagram(
    pd: PhaseDiagram,
    *,
    ax: Any = None,
    gamma: bool = True,
    title: str | None = None,
    colorbar: bool = True,
    marker: tuple[float, float] | None = None,
):
    r"""Heat map of :math:`P(\langle x_i(t),x_j(t)\rangle\ge 1-\delta)` over (t, beta).

    The layout of [GLPR] Fig 3: time on the horizontal axis, ``beta`` on the vertical
    axis; the curve :math:`\Gamma` of the equiangular ODE is drawn in red.

    Returns
    -------
    matplotlib.axes.Axes
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(5, 4))
    tb = pd.times
    bb = pd.betas
    im = ax.pcolormesh(
        tb, bb, pd.probability, shading="nearest", cmap="viridis", vmin=0, vmax=1
    )
    if gamma:
        ts, bs = _gamma_curve(pd)
        ax.plot(ts, bs, color="red", lw=1.8, label=r"$\Gamma$")
    if marker is not None:
        ax.plot(*marker, "w+", ms=14, mew=2)
    ax.set_xlabel("$t$")
    ax.set_ylabel(r"$\beta$")
    ax.set_xlim(tb.min(), tb.max())
    ax.set_ylim(bb.min(), bb.max())
    if title is None:
        title = f"d = {pd.d}" if pd.qkv is None else f"d = {pd.d}, {pd.qkv}"
    ax.set_title(title)
    if colorbar:
        ax.figure.colorbar(im, ax=ax, label="fraction of pairs within $\\delta$")
    return ax


def plot_phase_diagrams(pds: Sequence[PhaseDiagram], *, gamma: bool = True):
    """A row of phase diagrams sharing the colour scale (one per dimension)."""
    fig, axes = plt.subplots(
        1, len(pds), figsize=(3.6 * len(pds) + 0.8, 3.4), sharey=True, squeeze=False
    )
    for k, (ax, pd) in enumerate(zip(axes[0], pds)):
        plot_phase_diagram(pd, ax=ax, gamma=gamma, colorbar=k == len(pds) - 1)
        if k:
            ax.set_ylabel("")
    fig.tight_layout()
    return fig


def _animate_phase_diagrams(pds: Sequence[PhaseDiagram], *, interval: int = 900):
    """Animation over a list of phase diagrams (for example over ``d``)."""
    fig, ax = plt.subplots(figsize=(5, 4), dpi=72)

    def draw(k):
        ax.clear()
        plot_phase_diagram(pds[k], ax=ax, colorbar=False)
        return ()

    anim = FuncAnimation(fig, draw, frames=len(pds), interval=interval, blit=False)
    plt.close(fig)
    return anim


def plot_inner_product_histograms(
    edges: np.ndarray,
    counts: np.ndarray,
    times: np.ndarray,
    *,
    which: Sequence[int] | None = None,
    ax: Any = None,
    title: str | None = None,
):
    r"""Histograms of all pairwise inner products at several times ([GLPR] Fig 1).

    Parameters
    ----------
    edges : ndarray, shape (bins + 1,)
    counts : ndarray, shape (T, bins)
        Pooled counts at each output time.
    times : ndarray, shape (T,)
    which : sequence of int, optional
        Indices of the times to draw (default: five spread over the run).
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.6))
    T = len(times)
    if which is None:
        which = np.unique(np.linspace(0, T - 1, 5).round().astype(int))
    centers = 0.5 * (edges[1:] + edges[:-1])
    width = edges[1] - edges[0]
    colors = plt.cm.plasma(np.linspace(0, 0.85, len(which)))
    for c, k in zip(colors, which):
        dens = counts[k] / (counts[k].sum() * width)
        ax.step(centers, dens, where="mid", color=c, label=f"t = {times[k]:g}")
    ax.set_xlabel(r"$\langle x_i(t), x_j(t)\rangle$")
    ax.set_ylabel("density")
    ax.set_yscale("log")
    ax.set_xlim(-1, 1)
    ax.legend(fontsize=8)
    if title:
        ax.set_title(title)
    return ax


def _animate_inner_product_histograms(
    edges: np.ndarray, counts: np.ndarray, times: np.ndarray, *, title: str = ""
):
    """Animation of the pooled inner-product histogram over time (bars)."""
    fig, ax = plt.subplots(figsize=(5, 4), dpi=72)
    centers = 0.5 * (edges[1:] + edges[:-1])
    width = edges[1] - edges[0]
    dens = counts / (counts.sum(axis=1, keepdims=True) * width)
    bars = ax.bar(centers, dens[0], width=width, color="C0")
    ax.set_xlim(-1, 1)
    ax.set_ylim(1e-3, dens.max() * 1.5)
    ax.set_yscale("log")
    ax.set_xlabel(r"$\langle x_i, x_j\rangle$")
    ax.set_ylabel("density")

    def draw(k):
        for b, h in zip(bars, dens[k]):
            b.set_height(max(h, 1e-9))
        ax.set_title(f"{title} t = {times[k]:.1f}".strip())
        return tuple(bars)

    anim = FuncAnimation(fig, draw, frames=len(times), interval=250, blit=False)
    plt.close(fig)
    return anim


def plot_metastability(runs: Mapping[float, Mapping[str, np.ndarray]], *, n: int):
    r"""Cluster count and normalised energy against time (log scale), several ``beta``.

    ``runs[beta]`` holds ``"times"`` (T,), ``"clusters"`` (T, B) and ``"energy"``
    (T, B). The energy is shown as :math:`2\beta e^{-\beta} E_\beta`, which tends to
    :math:`\sum_k m_k^2/n^2` when the clusters (masses :math:`m_k`) are points: the
    plateaus of the staircase.
    """
    fig, axes = plt.subplots(2, 1, figsize=(7, 5.2), sharex=True)
    for c, (beta, r) in enumerate(runs.items()):
        t = r["times"]
        cl = np.atleast_2d(r["clusters"].T).T
        en = np.atleast_2d(r["energy"].T).T * 2 * beta * np.exp(-beta)
        for j in range(cl.shape[1]):
            lab = rf"$\beta = {beta:g}$" if j == 0 else None
            axes[0].step(t, cl[:, j], where="post", color=f"C{c}", alpha=0.8, label=lab)
            axes[1].plot(t, en[:, j], color=f"C{c}", alpha=0.8, label=lab)
    axes[0].set_ylabel("number of clusters")
    axes[0].set_yscale("log")
    axes[0].set_yticks([1, 2, 3, 5, 10, 20, n])
    axes[0].set_yticklabels(["1", "2", "3", "5", "10", "20", str(n)])
    axes[0].legend()
    axes[1].set_ylabel(r"$2\beta e^{-\beta} E_\beta$")
    for k in (1, 2, 3, 4):
        axes[1].axhline(1 / k, color="grey", lw=0.6, ls=":")
    axes[1].set_xscale("log")
    axes[1].set_xlabel("$t$")
    fig.tight_layout()
    return fig


def plot_equiangular_check(
    times: np.ndarray,
    curves: Mapping[str, np.ndarray],
    particles: Mapping[str, np.ndarray],
):
    """Equiangular ODE (lines) against the simulated mean inner product (markers)."""
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for c, (lab, g) in enumerate(curves.items()):
        ax.plot(times, g, color=f"C{c}", label=f"ODE, {lab}")
        ax.plot(times, particles[lab], "o", color=f"C{c}", ms=4, mfc="none")
    ax.set_xlabel("$t$")
    ax.set_ylabel(r"$\gamma(t)$")
    ax.legend(fontsize=8)
    ax.set_title("lines: equiangular ODE; circles: particles")
    fig.tight_layout()
    return fig


def plot_wendel(
    ns: np.ndarray,
    ds: Sequence[int],
    mc: Mapping[int, tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None,
):
    """Wendel's probability against ``n`` for several ``d``, with Monte Carlo bars.

    ``mc[d] = (ns, estimates, stderrs)``.
    """
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for c, d in enumerate(ds):
        p = [wendel_probability(int(k), d) for k in ns]
        ax.plot(ns, p, color=f"C{c}", label=f"d = {d}")
        if mc is not None and d in mc:
            m_n, m_p, m_se = mc[d]
            ax.errorbar(
                m_n,
                m_p,
                yerr=3 * np.asarray(m_se),
                fmt="o",
                color=f"C{c}",
                ms=4,
                capsize=2,
            )
    ax.set_xlabel("$n$")
    ax.set_ylabel("P(all points in a hemisphere)")
    ax.legend()
    ax.set_title("Wendel's formula (lines) and Monte Carlo (3 s.e. bars)")
    fig.tight_layout()
    return fig


# the y-label of plot_decay: the cone's diameter (a constant, not the default in the
# signature, which the library reference would print as raw TeX)
DIAMETER_LABEL = r"$1 - \min_{i,j}\langle x_i, x_j\rangle$"


def plot_decay(
    times: np.ndarray,
    curves: Mapping[str, np.ndarray],
    *,
    rate: float | None = 2.0,
    ylabel: str | None = None,
    title: str = "",
):
    r"""Decaying quantities on a log scale with a reference slope ``e^{-rate t}``.

    ``ylabel`` defaults to the cone's diameter :math:`1 - \min_{i,j}\langle x_i,
    x_j\rangle`."""
    if ylabel is None:
        ylabel = DIAMETER_LABEL
    fig, ax = plt.subplots(figsize=(6, 3.4))
    for c, (lab, y) in enumerate(curves.items()):
        ax.semilogy(times, np.maximum(y, 1e-300), color=f"C{c}", label=lab)
    if rate is not None:
        y0 = max(float(np.max(v[len(v) // 3])) for v in curves.values())
        t0 = times[len(times) // 3]
        ax.semilogy(
            times,
            y0 * np.exp(-rate * (times - t0)),
            "k--",
            lw=0.8,
            label=f"slope $e^{{-{rate:g}t}}$",
        )
    ax.set_ylim(1e-14, 3)
    ax.set_xlabel("$t$")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)
    if title:
        ax.set_title(title)
    fig.tight_layout()
    return fig


#: Names no longer public, served for one release with a warning.
__getattr__ = retired(
    __name__,
    {
        "animate_phase_diagrams": "attnlib.widgets.clustering.phase_diagram_explorer"
        " (the explorer of the same sweep)",
        "animate_inner_product_histograms": (
            "attnlib.widgets.clustering.histogram_explorer"
            " (the explorer of the same sweep)"
        ),
    },
)
