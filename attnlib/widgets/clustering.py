"""Widgets of the clustering chapter: phase-diagram explorer, inner-product histograms.

Both factories work on precomputed data (a phase diagram of 1e4 systems takes far
longer than a slider move) and redraw when any slider's ``value`` changes.
"""

from __future__ import annotations

from collections.abc import Mapping

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
from ..clustering import PhaseDiagram, phase_transition_curve
from ..viz.clustering import plot_phase_diagram
from ._static import Axis, Explorer, StaticSpec, every, show, slider

__all__ = ["phase_diagram_explorer", "histogram_explorer"]


def phase_diagram_explorer(
    diagrams: Mapping[int, PhaseDiagram],
    *,
    d: int | None = None,
    beta: float = 4.0,
    t: float = 10.0,
) -> Explorer:
    r"""Explore precomputed phase diagrams: choose ``d``, ``beta`` and ``t``.

    Left: the phase diagram of the chosen ``d`` with :math:`\Gamma` and a cross at
    ``(t, beta)``. Right: the probability against time at the chosen ``beta``
    (nearest grid row), with the time :math:`t_\beta` of :math:`\Gamma`.

    Returns
    -------
    Explorer
        With the controls ``"d"``, ``"beta"`` and ``"t"``.
    """
    if not diagrams:
        raise ValueError("diagrams must be a non-empty mapping d -> PhaseDiagram")
    ds = sorted(diagrams)
    d = ds[-1] if d is None else d
    if d not in diagrams:
        raise ValueError(f"d must be one of {ds}, got {d!r}")
    ref = diagrams[d]
    # the figure is drawn for the rows of the diagram nearest to beta and t: the
    # controls start on those rows, so that they show the values of the figure
    beta = float(ref.betas[np.argmin(np.abs(ref.betas - beta))])
    t = float(ref.times[np.argmin(np.abs(ref.times - t))])
    s_d = widgets.SelectionSlider(options=ds, value=d, description="d")
    s_beta = slider(
        beta,
        float(ref.betas.min()),
        float(ref.betas.max()),
        0.1,
        "beta",
        continuous_update=True,
    )
    s_t = slider(
        t,
        float(ref.times.min()),
        float(ref.times.max()),
        0.5,
        "t",
        continuous_update=True,
    )
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(9, 3.6))
    plt.close(fig)

    def redraw(_=None):
        pd = diagrams[s_d.value]
        b, tt = s_beta.value, s_t.value
        ax0.clear()
        ax1.clear()
        plot_phase_diagram(pd, ax=ax0, colorbar=False, marker=(tt, b))
        i = int(np.argmin(np.abs(pd.betas - b)))
        k = int(np.argmin(np.abs(pd.times - tt)))
        ax1.plot(pd.times, pd.probability[i], color="C0")
        ax1.axvline(tt, color="grey", lw=0.8)
        tg = phase_transition_curve([pd.betas[i]], n=pd.n, delta=pd.delta)[0]
        if tg <= pd.times.max():
            ax1.axvline(tg, color="red", ls="--", lw=1, label=r"$\Gamma$")
            ax1.legend(loc="lower right")
        ax1.set_ylim(-0.02, 1.02)
        ax1.set_xlabel("$t$")
        ax1.set_ylabel("fraction of close pairs")
        ax1.set_title(
            f"d = {pd.d}, beta = {pd.betas[i]:.2f}, t = {pd.times[k]:.1f}: "
            f"P = {pd.probability[i, k]:.2f}"
        )
        fig.tight_layout()
        show(box.output, fig)

    box = Explorer({"d": s_d, "beta": s_beta, "t": s_t}, fig, redraw=redraw)
    # without a kernel: every d, every third row of beta, t in quarters of its
    # range, all of them rows of the diagram (the values the figure is drawn for),
    # labelled as the figure's title writes them
    betas = set(every(ref.betas, 3)) | {beta}
    quarters = np.linspace(0, len(ref.times) - 1, 5).round().astype(int)
    ts = {float(ref.times[k]) for k in quarters} | {t}
    return box.start(
        StaticSpec(
            fig,
            [
                Axis("d", s_d, ds),
                Axis("β", s_beta, sorted(betas), fmt=lambda v: f"{v:.2f}"),
                Axis("t", s_t, sorted(ts), fmt=lambda v: f"{v:.1f}"),
            ],
            alt=(
                "Left: phase diagram over time t and inverse temperature β, the "
                "fraction of close pairs of tokens from 0 (dark) to 1 (bright), "
                "with the curve Γ and a cross at the chosen (t, β); right: that "
                "fraction against time at the chosen β, with the time of Γ as a "
                "dashed line."
            ),
        )
    )


def histogram_explorer(
    edges: np.ndarray,
    runs: Mapping[float, tuple[np.ndarray, np.ndarray]],
    *,
    beta: float | None = None,
    t_index: int = 0,
) -> Explorer:
    r"""Histogram of the pairwise inner products over time, for several ``beta``.

    Parameters
    ----------
    edges : ndarray, shape (bins + 1,)
    runs : mapping beta -> (times (T,), counts (T, bins))
        Pooled counts of :class:`attnlib.clustering.InnerProductHistogram`.

    Returns
    -------
    Explorer
        With the controls ``"beta"`` and ``"t"`` (the index of the output time).
    """
    if not runs:
        raise ValueError("runs must be a non-empty mapping beta -> (times, counts)")
    betas = sorted(runs)
    beta = betas[0] if beta is None else beta
    if beta not in runs:
        raise ValueError(f"beta must be one of {betas}, got {beta!r}")
    T = len(runs[beta][0])
    s_beta = widgets.SelectionSlider(options=betas, value=beta, description="beta")
    s_t = widgets.IntSlider(value=t_index, min=0, max=T - 1, description="time index")
    centers = 0.5 * (edges[1:] + edges[:-1])
    width = edges[1] - edges[0]
    fig, ax = plt.subplots(figsize=(6, 3.6))
    plt.close(fig)

    def redraw(_=None):
        times, counts = runs[s_beta.value]
        k = min(s_t.value, len(times) - 1)
        dens = counts[k] / (counts[k].sum() * width)
        ax.clear()
        ax.bar(centers, np.maximum(dens, 1e-9), width=width, color="C0")
        ax.set_yscale("log")
        ax.set_xlim(-1, 1)
        ax.set_ylim(1e-3, max(1.0, dens.max() * 1.5))
        ax.set_xlabel(r"$\langle x_i(t), x_j(t)\rangle$")
        ax.set_ylabel("density")
        ax.set_title(f"beta = {s_beta.value:g}, t = {times[k]:.1f}")
        fig.tight_layout()
        show(box.output, fig)

    box = Explorer({"beta": s_beta, "t": s_t}, fig, redraw=redraw)
    return box.start(
        StaticSpec(
            fig,
            [
                Axis("β", s_beta, betas),
                Axis(
                    "t",
                    s_t,
                    sorted(set(every(list(range(T)), 2)) | {s_t.value}),
                    fmt=lambda i: f"{runs[beta][0][i]:.3g}",
                ),
            ],
            alt=(
                "Histogram (log scale) of the pairwise inner products of the tokens at "
                "the chosen time: a peak near 0 at the start that moves to 1 as the "
                "tokens cluster."
            ),
        )
    )
