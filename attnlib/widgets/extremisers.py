"""Widget of the chapter on energy extremisers: choose D, ascent or descent, and see
the final configuration and the energy along the flow."""

from __future__ import annotations

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
from IPython.display import display

from ..extremisers import energy_flow
from ..metrics import cluster_count
from ..sphere import sample_sphere
from ..viz.extremisers import plot_circle_configuration, plot_sphere_configuration

__all__ = ["PRESETS", "interaction_matrix", "extremiser_widget"]

#: name -> (dimension, function of lambda giving D)
PRESETS = {
    "diag(1, λ) on S¹": (2, lambda lam: np.diag([1.0, lam])),
    "diag(-1, λ) on S¹": (2, lambda lam: np.diag([-1.0, lam])),
    "diag(1, λ, 4) on S²": (3, lambda lam: np.diag([1.0, lam, 4.0])),
    "λ·I on S²": (3, lambda lam: lam * np.eye(3)),
    "diag(1, 0, λ) on S² (PSD, kernel e₂)": (3, lambda lam: np.diag([1.0, 0.0, lam])),
    "-diag(1, λ, 2) on S² (negative definite)": (
        3,
        lambda lam: -np.diag([1.0, lam, 2.0]),
    ),
}


def interaction_matrix(preset: str, lam: float) -> np.ndarray:
    """The matrix ``D`` of a preset of :data:`PRESETS` at parameter ``lam``."""
    if preset not in PRESETS:
        raise ValueError(f"preset must be one of {tuple(PRESETS)}, got {preset!r}")
    return PRESETS[preset][1](float(lam))


def extremiser_widget(
    *,
    n: int = 60,
    steps: int = 400,
    seed: int = 0,
    lam: float = 0.5,
    preset: str = "diag(1, λ) on S¹",
    direction: str = "ascent",
    figsize: tuple[float, float] = (8, 3.6),
) -> widgets.VBox:
    """Sliders for ``D`` (preset and ``lambda``), ascent/descent and metric.

    Each change reruns :func:`attnlib.extremisers.energy_flow` (stable step, ``n``
    particles from the same uniform start) and redraws the final configuration on the
    sphere coloured by :math:`x\\cdot Dx` and the energy along the flow. The returned
    box has the attributes ``fig`` (the matplotlib figure), ``controls`` (dict of the
    control widgets) and ``result`` (the last :class:`~attnlib.extremisers.EnergyFlow`).
    Setting any control's ``value`` redraws synchronously (headless tests work).
    """
    controls = {
        "preset": widgets.Dropdown(
            options=list(PRESETS), value=preset, description="D"
        ),
        "lam": widgets.FloatSlider(
            value=lam,
            min=-2.0,
            max=3.0,
            step=0.05,
            description="λ",
            continuous_update=False,
        ),
        "direction": widgets.ToggleButtons(
            options=["ascent", "descent"], value=direction, description="flow"
        ),
        "metric": widgets.ToggleButtons(
            options=["wasserstein", "sa"], value="wasserstein", description="metric"
        ),
    }
    fig = plt.figure(figsize=figsize, dpi=80)
    plt.close(fig)  # shown through the Output widget only, never as a stray figure
    out = widgets.Output()
    box = widgets.VBox(
        [
            widgets.HBox([controls["preset"], controls["lam"]]),
            widgets.HBox([controls["direction"], controls["metric"]]),
            out,
        ]
    )
    starts = {d: sample_sphere(n, d, rng=seed) for d in (2, 3)}

    def redraw(*_):
        name = controls["preset"].value
        lam_v = controls["lam"].value
        d, make = PRESETS[name]
        D = make(lam_v)
        res = energy_flow(
            starts[d],
            D,
            direction=controls["direction"].value,
            metric=controls["metric"].value,
            tau=0.5,
            steps=steps,
            record_every=5,
        )
        fig.clear()
        if d == 2:
            ax = fig.add_subplot(1, 2, 1)
            plot_circle_configuration(ax, res.final, D)
        else:
            ax = fig.add_subplot(1, 2, 1, projection="3d")
            plot_sphere_configuration(ax, res.final, D)
        k = cluster_count(res.final, delta=1e-2)
        ax.set_title(
            f"{controls['direction'].value}, λ = {lam_v:.2f}: {k} cluster(s)",
            fontsize=9,
        )
        ax2 = fig.add_subplot(1, 2, 2)
        ax2.plot(res.times, res.energies)
        ax2.set_xlabel("time")
        ax2.set_ylabel("$E_D$")
        ax2.set_title(f"final $E_D$ = {res.energies[-1]:.5f}", fontsize=9)
        fig.suptitle(name, fontsize=10)
        fig.tight_layout()
        box.result = res
        out.clear_output(wait=True)
        with out:
            display(fig)

    for w in controls.values():
        w.observe(redraw, names="value")
    box.fig = fig
    box.controls = controls
    redraw()
    return box
