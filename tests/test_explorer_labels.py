"""Every control of every static explorer shows the value its frame was drawn for.

While the frames of an explorer are drawn (``attnlib.widgets._static.render_frames``)
the texts of each frame's figure are read at the moment it is saved: the figures
write their parameters as ``name = value`` (``beta = 3.85``, ``t = 2.0``, ``λ = 1``).
For every frame and every numeric control named in the figure, the number the
control's label shows must be the number the figure writes, and the control must
hold the grid value exactly (a slider that snapped or clamped it would draw another
frame). The rule is :func:`tests.helpers.label_failures`; it is applied to every
widget the chapters display in ``tests/test_widgets_static.py``, on the frames of
its static display (drawn once for both checks). Here: a defect it catches, and
that every explorer of the chapters is among those checked.
"""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")


from attnlib.widgets import _static  # noqa: E402

from .helpers import label_failures  # noqa: E402
from .test_widgets_static import FACTORIES  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


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
