"""Widget: a Gaussian cloud of tokens under attention, with the predicted ellipse."""

from __future__ import annotations

import ipywidgets as W
import matplotlib.pyplot as plt
import numpy as np

from ..scenarios import (
    ALPHA0,
    GAUSSIAN_PRESETS,
    KERNEL_CHOICES,
    SIGMA0,
    cloud_scenario,
    preset_model,
)
from ..viz.gaussian import draw_cloud
from ._static import Axis, Explorer, StaticSpec, every, show

__all__ = ["PRESETS", "preset_model", "gaussian_widget"]

#: name -> (Q, K, V) of the widget's presets:
#: :data:`attnlib.scenarios.GAUSSIAN_PRESETS`.
PRESETS = GAUSSIAN_PRESETS


def gaussian_widget(
    *,
    preset: str = "blow-up (Q, K of the reference)",
    seed: int = 0,
    kernel: str = "softmax",
    n: int = 300,
    t_max: float = 2.0,
    frames: int = 25,
) -> Explorer:
    """Choose (Q, K, V), the attention kernel and a seed; move through time.

    The particles are ``n`` samples of N(alpha0, Sigma0) moved by softmax attention;
    the red ellipses are the 1- and 2-sigma ellipses of the Gaussian predicted by the
    (alpha, Sigma) equations of the chosen kernel (softmax or L2). Setting
    any control's ``value`` redraws the figure.

    Returns
    -------
    Explorer
        With the controls ``"preset"``, ``"kernel"``, ``"seed"`` and ``"frame"``,
        and the attributes ``ax`` and ``scenario()`` (the current run, an
        :class:`attnlib.Trajectory`; see :func:`attnlib.scenarios.cloud_scenario`).
    """
    w_preset = W.Dropdown(options=list(PRESETS), value=preset, description="Q, K, V")
    w_kernel = W.Dropdown(
        options=list(KERNEL_CHOICES), value=kernel, description="kernel"
    )
    w_seed = W.IntSlider(value=seed, min=0, max=20, description="seed")
    w_frame = W.IntSlider(value=frames - 1, min=0, max=frames - 1, description="frame")
    fig, ax = plt.subplots(figsize=(5, 4), dpi=80)
    plt.close(fig)
    state: dict = {}

    def scenario():
        """The run of the current preset, seed and kernel (computed once)."""
        key = (w_preset.value, w_seed.value, w_kernel.value)
        if state.get("key") != key:
            model = preset_model(key[0], key[1], kernel=key[2])
            sc = cloud_scenario(
                model, ALPHA0, SIGMA0, n=n, seed=key[1], t_max=t_max, frames=frames
            )
            P = sc.states.reshape(-1, 2)
            lo, hi = np.percentile(P, [0.5, 99.5], axis=0)
            pad = 0.1 * (hi - lo) + 1e-9
            state.update(
                key=key,
                sc=sc,
                lim=(
                    (lo[0] - pad[0], hi[0] + pad[0]),
                    (lo[1] - pad[1], hi[1] + pad[1]),
                ),
            )
        return state["sc"]

    def redraw():
        sc = scenario()
        k = min(w_frame.value, len(sc.times) - 1)
        ax.clear()
        t_star = "" if not np.isfinite(sc.t_star) else f", stop {sc.t_star:.3f}"
        draw_cloud(
            ax,
            sc.states[k],
            sc.means[k],
            sc.covariances[k],
            lim=state["lim"],
            title=f"{w_kernel.value}: t = {sc.times[k]:.3f}{t_star}",
        )
        show(box.output, fig)

    box = Explorer(
        {"preset": w_preset, "kernel": w_kernel, "seed": w_seed, "frame": w_frame},
        fig,
        rows=[["preset", "kernel"], ["seed", "frame"]],
        redraw=redraw,
    )
    box.scenario = scenario
    box.ax = ax
    # without a kernel: every preset and kernel, every third frame (the seed as given)
    return box.start(
        StaticSpec(
            fig,
            [
                Axis("Q, K, V", w_preset, list(PRESETS)),
                Axis("kernel", w_kernel, list(KERNEL_CHOICES)),
                Axis("frame", w_frame, every(list(range(frames)), 3), fmt=str),
            ],
            alt=(
                f"{n} tokens drawn from a Gaussian and moved by attention (dots), "
                "with the 1σ and 2σ ellipses of the Gaussian that the moment "
                "equations predict (red), at the chosen frame of the run."
            ),
            live_only=["seed"],
        )
    )
