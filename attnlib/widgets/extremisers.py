"""Widget of the chapter on energy extremisers: choose D, ascent or descent, and see
the final configuration and the energy along the flow."""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets
import matplotlib.pyplot as plt

from .._deprecation import moved_arguments
from .._validation import fixed_seed
from ..metrics import cluster_count
from ..sphere import sample_sphere
from ..viz.extremisers import plot_circle_configuration, plot_sphere_configuration
from ._static import Axis, Explorer, StaticSpec, show, slider
from .._moved import retired
from ..extremisers._presets import PRESETS as _PRESETS
from ..extremisers._presets import extremiser_run

__all__ = ["extremiser_widget"]

__getattr__ = retired(
    __name__,
    {n: f"attnlib.extremisers.{n}" for n in ("PRESETS", "interaction_matrix")},
)


@moved_arguments((), renamed={"seed": "rng"})
def extremiser_widget(
    *,
    n: int = 60,
    steps: int = 400,
    rng: Any = 0,
    lam: float = 0.5,
    preset: str = "diag(1, λ) on S¹",
    direction: str = "ascent",
    figsize: tuple[float, float] = (8, 3.6),
) -> Explorer:
    """Sliders for ``D`` (preset and ``lambda``), ascent/descent and metric.

    Each change reruns :func:`attnlib.extremisers.energy_flow` (stable step, ``n``
    particles from the same uniform start) and redraws the final configuration on the
    sphere coloured by :math:`x\\cdot Dx` and the energy along the flow. The returned
    :class:`~attnlib.widgets.Explorer` has the controls ``preset``, ``lam``,
    ``direction`` and ``metric``, and the attribute ``result`` (the last
    :class:`~attnlib.Trajectory` of the flow). Setting any control's ``value``
    redraws synchronously (headless tests work).
    """
    controls = {
        "preset": widgets.Dropdown(
            options=list(_PRESETS), value=preset, description="D"
        ),
        "lam": slider(lam, -2.0, 3.0, 0.05, "λ"),
        "direction": widgets.ToggleButtons(
            options=["ascent", "descent"], value=direction, description="flow"
        ),
        "metric": widgets.ToggleButtons(
            options=["wasserstein", "sa"], value="wasserstein", description="metric"
        ),
    }
    fig = plt.figure(figsize=figsize, dpi=80)
    plt.close(fig)  # shown through the Output widget only, never as a stray figure
    seed = fixed_seed(rng)  # the same start in both dimensions, for every preset
    starts = {d: sample_sphere(n, d, rng=seed) for d in (2, 3)}

    def redraw(*_):
        name = controls["preset"].value
        lam_v = controls["lam"].value
        d = _PRESETS[name][0]
        D, res = extremiser_run(
            name,
            lam_v,
            starts[d],
            direction=controls["direction"].value,
            metric=controls["metric"].value,
            steps=steps,
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
        ax2.plot(res.times, res.info["energies"])
        ax2.set_xlabel("time")
        ax2.set_ylabel("$E_D$")
        ax2.set_title(f"final $E_D$ = {res.info['energies'][-1]:.5f}", fontsize=9)
        fig.suptitle(name, fontsize=10)
        fig.tight_layout()
        box.result = res
        show(box.output, fig)

    box = Explorer(
        controls,
        fig,
        rows=[["preset", "lam"], ["direction", "metric"]],
        redraw=redraw,
    )
    # without a kernel: every preset, five values of lambda, ascent and descent (the
    # Wasserstein metric; the other changes the path, not the extremiser). lambda = 0
    # is live only: for the preset lambda * I it makes D = 0, where E_D = 1 is
    # constant and the particles do not move.
    return box.start(
        StaticSpec(
            fig,
            [
                Axis("D", controls["preset"], list(_PRESETS)),
                Axis(
                    "λ",
                    controls["lam"],
                    sorted({-1.0, 0.25, 0.5, 1.0, 2.0, float(lam)}),
                ),
                Axis("flow", controls["direction"], ["ascent", "descent"]),
            ],
            alt=(
                f"Left: the final configuration of {n} particles after the energy flow "
                "for the chosen interaction matrix D, coloured by x·Dx; right: the "
                "energy E_D along the flow."
            ),
            live_only=["metric"],
        )
    )
