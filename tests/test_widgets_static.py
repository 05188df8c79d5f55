"""Every widget of the book, displayed while the book is built, is a static explorer
whose controls act without a kernel: each control of the grid changes the picture.

With ``ATTNLIB_STATIC=1`` a widget's display bundle is the explorer (``text/html``
with its frames), the figure for the default values (``image/png``) and a line of
text, and no widget view; without it, the ordinary widget. The browser half (moving
the controls in Chromium) is ``tests/test_widgets_static_browser.py``.
"""

import base64
import json
import math
import re
from html.parser import HTMLParser

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from attnlib.clustering import InnerProductHistogram, phase_diagram  # noqa: E402
from attnlib.clustering import simulate_ensemble  # noqa: E402
from attnlib import sample_sphere  # noqa: E402
from attnlib.widgets import Explorer  # noqa: E402
from attnlib.widgets._static import STATIC_ENV  # noqa: E402
from attnlib.widgets.circle import circle_density, circle_particles  # noqa: E402
from attnlib.widgets.clustering import (  # noqa: E402
    histogram_explorer,
    phase_diagram_explorer,
)
from attnlib.widgets.extremisers import extremiser_widget  # noqa: E402
from attnlib.widgets.frontiers import (  # noqa: E402
    antipodal_explorer,
    causal_explorer,
    noise_explorer,
    scheme_explorer,
    temperature_explorer,
)
from attnlib.widgets.gaussian import gaussian_widget  # noqa: E402
from attnlib.widgets.modelling import sphere_explorer  # noqa: E402

from .helpers import NOT_WRITTEN, label_failures, recording_labels  # noqa: E402

VIEW = "application/vnd.jupyter.widget-view+json"
DATA = re.compile(r'class="attnlib-explorer-data">(.*?)</script>', re.S)


def _diagrams():
    kw = dict(betas=np.linspace(0.5, 6.0, 5), samples=4, t_final=8.0, progress=False)
    return {d: phase_diagram(d, **kw) for d in (2, 16)}


def _hist_runs():
    h = InnerProductHistogram(bins=20)
    times = np.linspace(0.0, 4.0, 5)
    runs = {}
    for beta in (1.0, 4.0):
        X0 = sample_sphere(8, 8, rng=1, batch=2)
        res = simulate_ensemble(X0, beta=beta, times=times, observables={"h": h})
        runs[beta] = (times, res.observables["h"].sum(axis=1))
    return h.edges, runs


# name -> (function building the widget, its box)
FACTORIES = {
    "sphere_explorer": lambda: sphere_explorer(n=8, t_final=2.0, n_frames=5).widget,
    "phase_diagram_explorer": lambda: phase_diagram_explorer(_diagrams(), t=4.0),
    "histogram_explorer": lambda: histogram_explorer(*_hist_runs(), t_index=2),
    "gaussian_widget": lambda: gaussian_widget(n=30, frames=4),
    "circle_particles": lambda: circle_particles(n=8, t_final=1.0, n_max=16).widget,
    "circle_density": lambda: (
        circle_density(n_particles=50, t_final=0.4, n_frames=5, grid_size=64).widget
    ),
    "extremiser_widget": lambda: extremiser_widget(n=10, steps=20),
    "scheme_explorer": lambda: scheme_explorer(beta=1.0, n=8).widget,
    "causal_explorer": lambda: causal_explorer(n=8, t_final=1.0, dt=0.05).widget,
    "temperature_explorer": lambda: temperature_explorer(log2beta=2.0).widget,
    "noise_explorer": lambda: noise_explorer(beta=4.0).widget,
    "antipodal_explorer": lambda: (
        antipodal_explorer(d=5, paths=4, layers=60, t_final=6.0).widget
    ),
}


class _Controls(HTMLParser):
    """Labels, inputs and selects of the explorer's HTML."""

    def __init__(self):
        super().__init__()
        self.labels, self.inputs, self.hidden, self.img_alt = set(), [], None, None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "label":
            self.labels.add(a.get("for"))
        elif tag in ("input", "select"):
            self.inputs.append(a)
        elif tag == "div" and a.get("class") == "attnlib-explorer-controls":
            self.hidden = "hidden" in a
        elif tag == "img" and self.img_alt is None:
            self.img_alt = a.get("alt")


@pytest.fixture(scope="module", params=sorted(FACTORIES))
def case(request):
    return request.param, FACTORIES[request.param]()


def test_live_display_is_the_widget(case, monkeypatch):
    monkeypatch.delenv(STATIC_ENV, raising=False)
    name, box = case
    assert isinstance(box, Explorer), name
    bundle = box._repr_mimebundle_()
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    assert VIEW in data and "text/html" not in data


@pytest.fixture(scope="module")
def static(case):
    """The explorer's static display, drawn once for the two tests that read it:
    the values of its controls before and after, the bundle, and for each frame
    the values its controls held and the numbers its figure wrote."""
    name, box = case
    spec = box.static
    before = [a.control.value for a in spec.axes]
    with pytest.MonkeyPatch.context() as mp, recording_labels(spec) as frames:
        mp.setenv(STATIC_ENV, "1")
        bundle = box._repr_mimebundle_()
    after = [a.control.value for a in spec.axes]
    return spec, before, after, bundle, frames


@pytest.mark.slow
def test_static_display_is_an_explorer_whose_controls_all_act(case, static):
    name, _ = case
    spec, before, after, bundle, _ = static
    assert VIEW not in bundle, "no widget view: it would be a dead control"
    assert set(bundle) == {"text/html", "image/png", "text/plain"}
    # the live controls are left as they were
    assert after == before
    page = bundle["text/html"]
    data = json.loads(DATA.search(page).group(1))
    sizes = [len(a["labels"]) for a in data["axes"]]
    assert len(sizes) == len(spec.axes) >= 1
    assert len(data["index"]) == math.prod(sizes), "one frame per point of the grid"
    assert all(0 <= f < len(data["frames"]) for f in data["index"].values())
    # every control changes the picture somewhere on the grid
    for k, size in enumerate(sizes):
        assert size >= 2, f"{name}: control {data['axes'][k]['label']} has one value"
        changed = False
        for key, frame in data["index"].items():
            idx = [int(i) for i in key.split(",")]
            for j in range(size):
                other = idx[:k] + [j] + idx[k + 1 :]
                if (
                    data["frames"][data["index"][",".join(map(str, other))]]
                    != (data["frames"][frame])
                ):
                    changed = True
                    break
            if changed:
                break
        assert changed, f"{name}: moving {data['axes'][k]['label']} changes nothing"
    # the default frame is the figure of the widget as displayed (and the PNG)
    start = [
        a.values.index(v) if v in a.values else None for a, v in zip(spec.axes, before)
    ]
    assert None not in start, f"{name}: the default values are not on the grid"
    key = ",".join(map(str, start))
    default_uri = data["frames"][data["index"][key]]
    assert default_uri.split(",", 1)[1] == bundle["image/png"]
    assert base64.b64decode(bundle["image/png"])[:8] == b"\x89PNG\r\n\x1a\n"
    # accessible: every control has a label, the image a descriptive alt text,
    # and the controls are hidden until the script runs
    parser = _Controls()
    parser.feed(page)
    assert parser.hidden is True
    assert len(parser.inputs) == len(sizes)
    assert all(c.get("id") in parser.labels for c in parser.inputs)
    assert parser.img_alt and len(parser.img_alt) > 60
    assert f'src="{default_uri}"' in page


@pytest.mark.slow  # every frame of twelve explorers: minutes on a busy machine
def test_every_control_shows_the_value_its_frame_used(case, static):
    """While the frames were drawn, each numeric control showed the number its
    figure writes (``beta = 3.85``, ``t = 2.0``), and held the grid value exactly
    (``tests/test_explorer_labels.py`` has the rule and a failing example)."""
    name, _ = case
    spec, _, _, _, frames = static
    failures, compared = label_failures(spec, name, frames)
    assert failures == [], "\n".join(failures[:10])
    numeric = [
        a
        for a in spec.axes
        if a.numeric and (name, a.label) not in NOT_WRITTEN and len(a.values) > 1
    ]
    if numeric:
        assert compared >= len(numeric), (name, compared)


def test_explorer_note_names_the_controls_that_need_a_kernel(monkeypatch):
    monkeypatch.setenv(STATIC_ENV, "1")
    box = sphere_explorer(n=6, t_final=1.0, n_frames=3).widget
    page = box._repr_mimebundle_()["text/html"]
    assert "(n, variant) act only when the chapter runs as a notebook" in page


def test_a_frame_whose_controls_all_change_is_drawn_once():
    """With the widget's redraw given, the frame where several controls change
    (the grid's fastest axis wraps) is drawn once, not once per control, and
    still with every new value: before, the extremiser's 60 frames cost 97
    redraws."""
    import ipywidgets as W
    from matplotlib.figure import Figure

    from attnlib.widgets._static import Axis, StaticSpec, render_frames

    a, b = W.IntSlider(value=0, max=9), W.IntSlider(value=0, max=9)
    fig = Figure(figsize=(2, 1))
    drawn = []

    def redraw(*_):
        drawn.append((a.value, b.value))
        fig.clear()
        fig.text(0.1, 0.5, f"a = {a.value}, b = {b.value}")

    for control in (a, b):
        control.observe(redraw, names="value")
    redraw()
    drawn.clear()
    spec = StaticSpec(fig, [Axis("a", a, [0, 1, 2]), Axis("b", b, [0, 1, 2])], "x")
    spec.redraw = redraw
    frames, index, default = render_frames(spec)
    # 9 states: the first is the figure as it is, then 8 draws, and one to go back
    assert drawn == [(0, 1), (0, 2), (1, 0), (1, 1), (1, 2), (2, 0), (2, 1), (2, 2)] + [
        (0, 0)
    ], drawn
    assert len(frames) == len(set(index.values())) == 9 and default == index["0,0"]
    a.value = 5  # the widget is live again
    assert drawn[-1] == (5, 0)
    # without it, each control that changes redraws (a wrap costs two)
    drawn.clear()
    spec.redraw = None
    a.value = 0
    drawn.clear()
    render_frames(spec)
    assert len(drawn) == 12, drawn


def test_the_frames_are_laid_out_and_drawn_with_one_renderer(monkeypatch):
    """A closed figure's bare canvas made a new renderer for every layout and every
    save, and a frame laid out at the figure's dpi and drawn at the frames' made
    two per frame: each frame measured all its texts and parsed its mathtext again
    (two renderers per frame, a third of the frames' time). The frames are now laid
    out and drawn at their dpi on one Agg canvas, each drawn once, and the figure
    keeps its own dpi and canvas after."""
    from matplotlib.backends import backend_agg
    from matplotlib.figure import Figure

    from attnlib.widgets._static import render_frames

    made, drawn = [], []
    init, draw = backend_agg.RendererAgg.__init__, Figure.draw

    def counted(self, width, height, dpi):
        made.append(dpi)
        init(self, width, height, dpi)

    def counted_draw(self, renderer):
        drawn.append(renderer)
        return draw(self, renderer)

    box = temperature_explorer(log2beta=2.0).widget  # mathtext on log axes
    spec = box.static
    canvas, dpi = spec.fig.canvas, spec.fig.dpi
    monkeypatch.setattr(backend_agg.RendererAgg, "__init__", counted)
    monkeypatch.setattr(Figure, "draw", counted_draw)
    frames, index, default = render_frames(spec)
    count = len(index)
    assert count >= 8, count
    # frame_dpi's measuring save, the frames', and the redraw back to the
    # displayed values at the figure's dpi: not one or two per frame
    assert len(made) <= 4, (len(made), count, made)
    # each frame drawn once: tight_layout leaves a layout engine that only holds
    # its place, and with it every save drew the figure twice
    assert len(drawn) <= count + 3, (len(drawn), count)
    assert spec.fig.canvas is canvas and spec.fig.dpi == dpi
    assert all(png[:8] == b"\x89PNG\r\n\x1a\n" for png in frames)
    assert len(set(index.values())) == len(frames) >= 2


def test_a_frame_does_not_depend_on_the_frames_drawn_before_it(monkeypatch):
    """``tight_layout`` starts from the figure's current layout and does not reach
    its own fixed point in one call: the temperature explorer's axes moved by up to
    3.5% of the figure over its first frames (10 layouts in 10 frames, as a reader
    moves the slider), and displaying it again drew other frames. Each frame starts
    from the layout the figure was displayed with."""
    from attnlib.widgets import _static

    box = temperature_explorer(log2beta=2.0).widget
    layouts = []
    png = _static._png

    def recorded(fig, dpi):
        layouts.append(
            tuple(round(v, 6) for a in fig.axes for v in a.get_position().bounds)
        )
        return png(fig, dpi)

    monkeypatch.setattr(_static, "_png", recorded)
    first = _static.render_frames(box.static)
    assert len(layouts) >= 8 and len(set(layouts)) == 1, sorted(set(layouts))
    assert _static.render_frames(box.static) == first


def test_every_widget_is_an_explorer_of_named_controls_and_one_redraw():
    """One shape for the book's widgets: each factory returns an Explorer whose
    controls are those of its static grid and those it names as live only, each
    also an attribute, observed by the one redraw its static explorer uses."""
    for name, make in FACTORIES.items():
        e = make()
        assert isinstance(e, Explorer) and e.widget is e and e.sliders is e.controls
        spec = e.static
        on_grid = {id(a.control) for a in spec.axes}
        named = {k for k, c in e.controls.items() if id(c) in on_grid}
        assert len(named) == len(spec.axes), name
        assert set(e.controls) == named | set(spec.live_only), (name, e.controls)
        assert spec.redraw == e.redraw, name
        assert e.fig is spec.fig and e.output in e.children, name
        for key, control in e.controls.items():
            assert getattr(e, key) is control, (name, key)
            assert e.redraw in control._trait_notifiers["value"]["change"], key
        with pytest.raises(AttributeError, match="no attribute 'nothing'"):
            _ = e.nothing


def test_an_explorer_names_every_control_in_its_rows():
    import ipywidgets as W
    from matplotlib.figure import Figure

    a, b = W.IntSlider(), W.IntSlider()
    with pytest.raises(ValueError, match="rows must name every control once"):
        Explorer({"a": a, "b": b}, Figure(), rows=[["a"]], redraw=lambda: None)
    # a mistake shows when the explorer is made, not at the first slider move
    with pytest.raises(TypeError, match="Explorer needs redraw="):
        Explorer({"a": a}, Figure())
    with pytest.raises(TypeError, match="redraw must be callable, got int"):
        Explorer({"a": a}, Figure(), redraw=3)
    e = Explorer({"a": a, "b": b}, Figure(), rows=[["b"], ["a"]], redraw=lambda: None)
    assert [row.children for row in e.children[:2]] == [(b,), (a,)]
