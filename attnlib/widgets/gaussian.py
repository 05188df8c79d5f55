"""Widget: a Gaussian cloud of tokens under attention, with the predicted ellipse."""

from __future__ import annotations

import html
import json
import re

import ipywidgets as W
import matplotlib.pyplot as plt
import numpy as np

from .._deprecation import moved_arguments
from .._validation import check_int
from .._moved import retired
from ..gaussian import ALPHA0, SIGMA0
from ..gaussian import PRESETS as _PRESETS
from ..gaussian import preset_model as _preset_model
from ..gaussian._presets import KERNEL_CHOICES, cloud_scenario
from ..viz.gaussian import draw_cloud
from ._static import Axis, Explorer, StaticSpec, every, show

__all__ = ["gaussian_widget"]

__getattr__ = retired(
    __name__, {n: f"attnlib.gaussian.{n}" for n in ("PRESETS", "preset_model")}
)


@moved_arguments((), renamed={"seed": "rng"})
def gaussian_widget(
    *,
    preset: str = "blow-up (Q, K of the reference)",
    rng: int = 0,
    kernel: str = "softmax",
    n: int = 300,
    t_max: float = 2.0,
    frames: int = 25,
) -> Explorer:
    """Choose (Q, K, V), the attention kernel and a seed; move through time.

    ``rng`` is the initial value of the ``seed`` control (an integer from 0 to 20).

    The ``frame`` control moves through the run's frames; beside it a readout gives
    the time of the frame shown (``t = 0.193``), the time of the figure's title (the
    frames of a run are equally spaced up to ``t_max``, or up to 0.9 of the blow-up
    time, so the time of a frame depends on the preset and the kernel). The
    particles are ``n`` samples of N(alpha0, Sigma0) moved by softmax attention;
    the red ellipses are the 1- and 2-sigma ellipses of the Gaussian predicted by the
    (alpha, Sigma) equations of the chosen kernel (softmax or L2). Setting
    any control's ``value`` redraws the figure.

    Returns
    -------
    Explorer
        With the controls ``"preset"``, ``"kernel"``,
        ``"seed"`` and ``"frame"``, and the attributes ``ax``, ``scenario()`` (the
        current run, an :class:`attnlib.Trajectory`; see
        :func:`attnlib.gaussian._presets.cloud_scenario`), ``time_readout`` (the live
        readout "t = ...") and ``frame_times()`` (the times of the runs drawn, by
        preset, seed and kernel).
    """
    w_preset = W.Dropdown(options=list(_PRESETS), value=preset, description="Q, K, V")
    w_kernel = W.Dropdown(
        options=list(KERNEL_CHOICES), value=kernel, description="kernel"
    )
    seed = check_int(rng, "rng", low=0)
    if seed > 20:
        raise ValueError(f"rng must be a seed from 0 to 20 (its control), got {seed}")
    w_seed = W.IntSlider(value=seed, min=0, max=20, description="seed")
    w_frame = W.IntSlider(value=frames - 1, min=0, max=frames - 1, description="frame")
    w_time = W.HTML(value="")  # "t = ...": the time of the frame shown
    fig, ax = plt.subplots(figsize=(5, 4), dpi=80)
    plt.close(fig)
    state: dict = {}

    def scenario():
        """The run of the current preset, seed and kernel (computed once)."""
        key = (w_preset.value, w_seed.value, w_kernel.value)
        if state.get("key") != key:
            model = _preset_model(key[0], rng=key[1], kernel=key[2])
            sc = cloud_scenario(
                model, ALPHA0, SIGMA0, n=n, rng=key[1], t_max=t_max, frames=frames
            )
            P = sc.states.reshape(-1, 2)
            lo, hi = np.percentile(P, [0.5, 99.5], axis=0)
            pad = 0.1 * (hi - lo) + 1e-9
            state.setdefault("times", {})[key] = [float(t) for t in sc.times]
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
        w_time.value = time_text(sc.times[k])
        ax.clear()
        stop = sc.info["t_star"]
        t_star = f", stop {stop:.3f}" if np.isfinite(stop) else ""
        draw_cloud(
            ax,
            sc.states[k],
            sc.info["means"][k],
            sc.info["covariances"][k],
            lim=state["lim"],
            title=f"{w_kernel.value}: t = {sc.times[k]:.3f}{t_star}",
        )
        show(box.output, fig)

    box = GaussianExplorer(
        {"preset": w_preset, "kernel": w_kernel, "seed": w_seed, "frame": w_frame},
        fig,
        rows=[["preset", "kernel"], ["seed", "frame"]],
        redraw=redraw,
    )
    # the readout beside the frame slider
    row = box.children[1]
    row.children = (*row.children, w_time)
    box.time_readout = w_time
    box.frame_times = lambda: state.get("times", {})
    box.scenario = scenario
    box.ax = ax
    # without a kernel: every preset and kernel, every third frame (the seed as given)
    return box.start(
        StaticSpec(
            fig,
            [
                Axis("Q, K, V", w_preset, list(_PRESETS)),
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


def time_text(t: float) -> str:
    """The readout of a frame's time, as the figure's title writes it."""
    return f"t = {float(t):.3f}"


_FRAME_OUTPUT = '<output for="{cid}" data-axis="{k}">'
_TIME_SCRIPT = """<script>(function () {
  var root = document.getElementById("%(id)s");
  if (!root || root.dataset.timeReady) { return; }
  root.dataset.timeReady = "1";
  var times = %(times)s, frames = %(frames)s;
  var preset = root.querySelector("[data-axis='0']");
  var kernel = root.querySelector("[data-axis='1']");
  var frame = root.querySelector("[data-axis='2']");
  var out = root.querySelector("output.attnlib-explorer-time");
  var img = root.querySelector("img.attnlib-explorer-frame");
  function update() {
    var run = times[preset.value + "," + kernel.value];
    var k = Math.min(frames[+frame.value], run.length - 1);
    var text = "t = " + run[k].toFixed(3);
    out.textContent = text;
    var shown = root.querySelector("output[data-axis='2']");
    var value = (shown ? shown.textContent + ", " : "") + text;
    frame.setAttribute("aria-valuetext", value);
    img.alt = img.alt.replace(/(, t = [0-9.]+)?\\.$/, ", " + text + ".");
  }
  [preset, kernel, frame].forEach(function (el) {
    el.addEventListener("input", update);
    el.addEventListener("change", update);
  });
})();</script>"""


class GaussianExplorer(Explorer):
    """The Gaussian widget's :class:`Explorer`: its static display shows, beside the
    ``frame`` control, the time of the frame shown (``t = ...``), from the times of
    the run of each preset and kernel of its grid."""

    def _repr_mimebundle_(self, **kwargs):
        bundle = super()._repr_mimebundle_(**kwargs)
        if isinstance(bundle, dict) and "text/html" in bundle:
            bundle["text/html"] = self._with_times(bundle["text/html"])
        return bundle

    def _with_times(self, page: str) -> str:
        """The explorer's HTML with the readout of the time of the frame shown."""
        axes = self.static.axes
        labels = [a.label for a in axes]
        if labels != ["Q, K, V", "kernel", "frame"]:
            raise ValueError(
                f"the explorer's axes are {labels}, not preset, kernel, frame"
            )
        seed = self.controls["seed"].value
        runs = self.frame_times()
        table = {}
        for i, preset in enumerate(axes[0].values):
            for j, kernel in enumerate(axes[1].values):
                if (preset, seed, kernel) not in runs:
                    raise ValueError(f"no run of {preset!r}, {kernel!r} was drawn")
                table[f"{i},{j}"] = runs[(preset, seed, kernel)]
        uid = re.search(r'<div class="attnlib-explorer" id="([^"]+)">', page).group(1)
        start = [
            list(a.values).index(a.control.value) if a.control.value in a.values else 0
            for a in axes
        ]
        run = table[f"{start[0]},{start[1]}"]
        frame = min(axes[2].values[start[2]], len(run) - 1)
        text = time_text(run[frame])
        anchor = _FRAME_OUTPUT.format(cid=f"{uid}-2", k=2)
        at = page.index(anchor)
        end = page.index("</output>", at) + len("</output>")
        readout = (
            f'<output class="attnlib-explorer-time" for="{uid}-2" '
            f'aria-live="polite">{html.escape(text)}</output>'
        )
        page = page[:end] + readout + page[end:]
        # the alternative text of the first frame names its time
        shown = f"frame = {axes[2].text(axes[2].values[start[2]])}."
        page = page.replace(shown, shown[:-1] + f", {text}.", 1)
        script = _TIME_SCRIPT % {
            "id": uid,
            "times": json.dumps(table),
            "frames": json.dumps(list(axes[2].values)),
        }
        closing = page.rindex("</div>")
        return page[:closing] + script + page[closing:]
