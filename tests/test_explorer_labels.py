"""Every control of every static explorer shows the value its frame was drawn for.

While the frames of an explorer are drawn (``attnlib.widgets._static.render_frames``)
the texts of each frame's figure are read at the moment it is saved: the figures
write their parameters as ``name = value`` (``beta = 3.85``, ``t = 2.0``, ``λ = 1``).
For every frame and every numeric control named in the figure, the number the
control's label shows must be the number the figure writes, and the control must
hold the grid value exactly (a slider that snapped or clamped it would draw another
frame). The widgets are those the chapters display (all of them, checked below), at
the small sizes of ``tests/test_widgets_static.py``.
"""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from attnlib.widgets import _static  # noqa: E402

from .test_widgets_static import FACTORIES  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
# the names a figure writes for a control's label
NAMES = {
    "β": ("beta", "β", r"\beta"),
    "λ": ("lam", "lambda", "λ", r"\lambda"),
    "t": ("t",),
    "time": ("t",),
    "d": ("d",),
    "n": ("n",),
    "log₂ β": ("beta",),  # the figure writes beta = 2 ** label
}
# controls whose figure writes another quantity: the gaussian widget's frame index
# (the figure writes the time of that frame)
NOT_WRITTEN = {("gaussian_widget", "frame")}
PAIR = re.compile(r"(\\?[A-Za-zλβ]+)\s*=\s*(-?\d+(?:\.\d+)?(?:e-?\d+)?)")


def _written(texts: list[str]) -> dict[str, set[float]]:
    found: dict[str, set[float]] = {}
    for text in texts:
        for name, value in PAIR.findall(text.replace("$", "")):
            found.setdefault(name, set()).add(float(value))
    return found


def label_failures(spec, name: str) -> tuple[list[str], int]:
    """Frames whose controls show another value than the figure was drawn for;
    and the number of (frame, control) pairs compared."""
    frames: list[tuple[list, dict[str, set[float]]]] = []
    real = _static._png

    def record(fig, dpi):
        texts = [t.get_text() for t in fig.findobj(Text) if t.get_text().strip()]
        frames.append(([a.control.value for a in spec.axes], _written(texts)))
        return real(fig, dpi)

    _static._png = record
    try:
        _static.render_frames(spec)
    finally:
        _static._png = real
    import itertools

    combos = list(itertools.product(*(range(len(a.values)) for a in spec.axes)))
    failures, compared = [], 0
    for combo, (held, written) in zip(combos, frames):
        for axis, i, value in zip(spec.axes, combo, held):
            label, want = axis.text(axis.values[i]), axis.values[i]
            where = f"{name}: {axis.label} = {label}"
            if value != want:
                failures.append(f"{where}: the control holds {value!r}, not {want!r}")
            if not axis.numeric or (name, axis.label) in NOT_WRITTEN:
                continue
            shown = float(label)
            if axis.label == "log₂ β":
                shown = 2.0**shown
            names = NAMES.get(axis.label, (axis.label,))
            drawn = set().union(*(written.get(n, set()) for n in names))
            if not drawn:
                failures.append(f"{where}: the figure does not write {axis.label}")
                continue
            compared += 1
            if shown not in drawn:
                failures.append(
                    f"{where}: the frame is drawn for {sorted(drawn)} (its figure)"
                )
    return failures, compared


@pytest.mark.slow  # every frame of eleven explorers: minutes on a busy machine
@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_every_control_shows_the_value_its_frame_used(name):
    spec = FACTORIES[name]().static
    failures, compared = label_failures(spec, name)
    assert failures == [], "\n".join(failures[:10])
    numeric = [
        a
        for a in spec.axes
        if a.numeric and (name, a.label) not in NOT_WRITTEN and len(a.values) > 1
    ]
    if numeric:
        assert compared >= len(numeric), (name, compared)


def test_every_explorer_of_the_chapters_is_checked():
    """The functions of attnlib.widgets that the chapters import and that make a
    static explorer (their code builds a StaticSpec) are all in FACTORIES."""
    import ast
    import importlib
    import inspect

    explorers = set()
    for path in sorted((ROOT / "book").glob("*.md")):
        text = path.read_text(encoding="utf-8")
        for m in re.finditer(
            r"^from attnlib\.widgets\.\w+ import (?:\([^)]*\)|[^\n]*)", text, re.M
        ):
            tree = ast.parse(m.group(0))
            for node in tree.body:
                if not isinstance(node, ast.ImportFrom):
                    continue
                module = importlib.import_module(node.module)
                for alias in node.names:
                    obj = getattr(module, alias.name)
                    if callable(obj) and "StaticSpec(" in inspect.getsource(obj):
                        explorers.add(alias.name)
    assert len(explorers) >= 9, explorers
    assert explorers <= set(FACTORIES), explorers - set(FACTORIES)


def test_a_label_rounded_off_the_drawn_row_fails():
    """The phase diagram's old defect: the control read β = 4 while the frame was
    drawn for the diagram's nearest row, β = 3.85."""
    import ipywidgets as widgets
    import matplotlib.pyplot as plt
    import numpy as np

    rows = np.array([1.0, 2.5, 3.85])
    slider = widgets.FloatSlider(value=1.0, min=0.0, max=5.0, step=0.05)
    fig, ax = plt.subplots()
    plt.close(fig)

    def redraw(_=None):
        b = rows[int(np.argmin(np.abs(rows - slider.value)))]
        ax.set_title(f"beta = {b:.2f}")

    slider.observe(redraw, names="value")
    redraw()
    bad = _static.StaticSpec(fig, [_static.Axis("β", slider, [1.0, 2.5, 4.0])], "x")
    failures, compared = label_failures(bad, "toy")
    assert compared == 3
    assert failures == ["toy: β = 4: the frame is drawn for [3.85] (its figure)"]
    good = _static.StaticSpec(
        fig, [_static.Axis("β", slider, [1.0, 2.5, 3.85], fmt="{:.2f}".format)], "x"
    )
    assert label_failures(good, "toy") == ([], 3)
