"""Static explorers: the widgets of the book as they appear in a page with no kernel.

A widget of :mod:`attnlib.widgets` needs a running kernel: in a static HTML page its
sliders would move while the figure stayed put. So every factory returns an
:class:`Explorer`, an ``ipywidgets.VBox`` that knows a grid of values for some of
its controls (:class:`Axis`). Displayed in a live kernel it is the ordinary widget.
Displayed while the book is built (the environment variable ``ATTNLIB_STATIC=1``,
set by ``make book``) it renders the figure once per point of the grid and displays,
instead of the widget, a self-contained explorer:

* ``text/html``: an image, the controls of the grid (a range input per numeric axis,
  a ``<select>`` per named one, each with a visible label) and a small script that
  shows the frame of the chosen values; the frames are PNG ``data:`` URIs, which the
  book's build moves into image files fetched only when a reader asks for them. The
  controls are hidden until the script runs, so a reader never sees a control that
  does not act; the note under the image says which controls need a live kernel.
* ``image/png``: the figure for the default values (what the PDF prints and what a
  notebook viewer without scripts shows).
* ``text/plain``: a one-line description.

Frames are drawn with the widget's own redraw (setting each control's ``value``), so
the static explorer shows exactly what the live widget shows for the same values.
"""

from __future__ import annotations

import base64
import hashlib
import html
import itertools
import json
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import ipywidgets as widgets
from IPython.display import clear_output, display

__all__ = [
    "STATIC_ENV",
    "Axis",
    "Explorer",
    "ExplorerBox",
    "StaticSpec",
    "detached_figure",
    "every",
    "slider",
    "static_enabled",
    "show",
]

#: Environment variable that makes displayed widgets static explorers ("1").
STATIC_ENV = "ATTNLIB_STATIC"

_QUIET = [False]


def static_enabled() -> bool:
    """Whether widgets display as static explorers (``ATTNLIB_STATIC=1``)."""
    return os.environ.get(STATIC_ENV, "") not in ("", "0")


@contextmanager
def _quiet() -> Iterator[None]:
    """Redraws update the figure but show nothing (frames of a static explorer)."""
    old, _QUIET[0] = _QUIET[0], True
    try:
        yield
    finally:
        _QUIET[0] = old


def show(out: widgets.Output, fig: Any) -> None:
    """Show ``fig`` in the output area ``out`` (nothing while frames are drawn)."""
    if _QUIET[0]:
        return
    with out:
        clear_output(wait=True)
        display(fig)


@dataclass
class Axis:
    """One control of a static explorer and the values it offers.

    Attributes
    ----------
    label : str
        Name shown next to the control (also its accessible name).
    control : ipywidgets widget
        The live control; setting its ``value`` redraws the figure.
    values : sequence
        The values of the grid, in the order of the control.
    fmt : callable
        Text of a value (default ``str``, ``"{:g}"`` for floats).
    """

    label: str
    control: Any
    values: Sequence[Any]
    fmt: Callable[[Any], str] | None = None

    def text(self, value: Any) -> str:
        if self.fmt is not None:
            return self.fmt(value)
        if isinstance(value, float):
            return f"{value:g}"
        return str(value)

    @property
    def numeric(self) -> bool:
        return all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in self.values
        )


@dataclass
class StaticSpec:
    """What the static explorer of a widget needs (set by each factory)."""

    fig: Any
    axes: list[Axis]
    alt: str
    live_only: list[str] = field(default_factory=list)
    dpi: float = 72.0
    #: the widget's redraw, observing the axes' controls: given, a frame for which
    #: several controls change is drawn once instead of once per control
    redraw: Callable[..., Any] | None = None


def every(values: Sequence[Any], step: int) -> list[Any]:
    """Every ``step``-th of ``values`` and the last one, as Python scalars."""
    picked = list(values[::step])
    if len(values) and (len(values) - 1) % step:
        picked.append(values[-1])
    return [v.item() if hasattr(v, "item") else v for v in picked]


def detached_figure(*args: Any, **kwargs: Any) -> Any:
    """A figure of :func:`matplotlib.pyplot.subplots` (its arguments) that is shown
    through an explorer's Output widget only, never by a later ``plt.show()`` nor by
    the inline backend at the end of the cell."""
    import matplotlib.pyplot as plt

    with plt.ioff():
        fig, _ = plt.subplots(*args, **kwargs)
    plt.close(fig)
    return fig


def slider(
    value: float,
    lo: float,
    hi: float,
    step: float,
    name: str,
    *,
    integer: bool = False,
    continuous_update: bool = False,
    **options: Any,
) -> widgets.FloatSlider | widgets.IntSlider:
    """A slider of an explorer: ``name`` from ``lo`` to ``hi`` in steps of ``step``,
    set at ``value``, of integers if ``integer``; it redraws when released unless
    ``continuous_update``. ``options`` (such as ``style``) go to the widget."""
    cls = widgets.IntSlider if integer else widgets.FloatSlider
    return cls(
        value=value,
        min=lo,
        max=hi,
        step=step,
        description=name,
        continuous_update=continuous_update,
        **options,
    )


def _png(fig: Any, dpi: float) -> bytes:
    """The figure as a PNG of 256 colours, as the players' frames are stored (a
    third of the size, the same look for line art), that records the height of its
    smallest text (:func:`attnlib.viz._render.mark_text_size`), so that the page can
    keep it legible (``attnlib.viz._render.frame_png``)."""
    from attnlib.viz._render import frame_png

    return frame_png(fig, dpi, 256)


def _uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode()


@contextmanager
def _drawn_once(spec: StaticSpec) -> Iterator[Callable[[list[Any]], None]]:
    """A function that sets the axes' controls to given values and has the figure
    drawn once for them: with :attr:`StaticSpec.redraw`, the redraw stops observing
    the axes' controls meanwhile and is called once if any value changed (other
    observers, e.g. one that updates a slider's range, still act); without it,
    each control that changes redraws."""
    redraw = spec.redraw
    controls = [a.control for a in spec.axes]

    def set_values(values: list[Any]) -> None:
        changed = False
        for control, value in zip(controls, values):
            before = control.value
            control.value = value
            changed = changed or control.value != before
        if changed and redraw is not None:
            redraw()

    if redraw is None:
        yield set_values
        return
    for control in controls:
        control.unobserve(redraw, names="value")
    try:
        yield set_values
    finally:
        for control in controls:
            control.observe(redraw, names="value")


def _restore_layout(fig: Any) -> Callable[[], None]:
    """A function that puts the subplots of ``fig`` back where they are now.

    ``tight_layout`` starts from the figure's current layout and does not reach its
    own fixed point in one call: frames laid out one after another drifted (the
    temperature explorer's axes moved by up to 3.5% of the figure over its first
    frames, as a reader moves a slider), and a second display drew other frames.
    Each frame starts from the layout the figure was displayed with. A layout
    engine that takes no adjustment (constrained layout) is left alone.
    """
    pars = fig.subplotpars
    layout = {
        k: getattr(pars, k)
        for k in ("left", "right", "bottom", "top", "wspace", "hspace")
    }

    def restore() -> None:
        engine = fig.get_layout_engine()
        if engine is None or engine.adjust_compatible:
            fig.subplots_adjust(**layout)

    return restore


#: The widest frame in pixels: its smallest text, drawn MIN_TEXT_PX (9 px) high,
#: still shows 8.5 px high in a desktop column of 680 px.
FRAME_WIDTH_PX = 720


def render_frames(spec: StaticSpec) -> tuple[list[bytes], dict[str, int], int]:
    """The frames of the grid (identical ones stored once).

    Returns
    -------
    frames : list of bytes
        Distinct PNG images.
    index : dict
        ``"i,j,..."`` (indices into the axes' values) -> position in ``frames``.
    default : int
        Position of the frame of the values the controls had.
    """
    from attnlib.viz._render import drawn_at, frame_dpi

    start = [a.control.value for a in spec.axes]
    frames: list[bytes] = []
    seen: dict[str, int] = {}
    index: dict[str, int] = {}
    dpi = frame_dpi(spec.fig, spec.dpi)
    # frames no wider than a desktop's column holds with their text still legible
    # (they shrink to the column): a wider figure is drawn narrower, as laid out
    size = spec.fig.get_size_inches().copy()
    widest = FRAME_WIDTH_PX / dpi
    if size[0] > widest:
        spec.fig.set_size_inches(widest, size[1], forward=False)
    key = ",".join(
        str(list(a.values).index(v)) if v in a.values else ""
        for a, v in zip(spec.axes, start)
    )
    default = None
    # every frame laid out from the layout the figure had when it was displayed
    # (_restore_layout), and drawn at the frames' dpi with one renderer (drawn_at)
    restore = _restore_layout(spec.fig)
    with _quiet(), _drawn_once(spec) as set_values:
        try:
            with drawn_at(spec.fig, dpi):
                for combo in itertools.product(
                    *(range(len(a.values)) for a in spec.axes)
                ):
                    restore()
                    set_values([a.values[i] for a, i in zip(spec.axes, combo)])
                    png = _png(spec.fig, dpi)
                    digest = hashlib.sha256(png).hexdigest()
                    if digest not in seen:
                        seen[digest] = len(frames)
                        frames.append(png)
                    index[",".join(map(str, combo))] = seen[digest]
                if key not in index:  # the default values are off the grid
                    restore()
                    set_values(start)
                    default = _png(spec.fig, dpi)
        finally:  # back to the values the widget was displayed with, as laid out
            set_values(start)
            restore()
            spec.fig.set_size_inches(size, forward=False)
    if default is None:
        return frames, index, index[key]
    frames.append(default)
    return frames, index, len(frames) - 1


_SCRIPT = """(function () {
  var root = document.getElementById("%(id)s");
  if (!root || root.dataset.ready) { return; }
  root.dataset.ready = "1";
  var data = JSON.parse(root.querySelector("script.attnlib-explorer-data").textContent);
  var img = root.querySelector("img.attnlib-explorer-frame");
  var inputs = root.querySelectorAll("input[data-axis], select[data-axis]");
  function update() {
    var idx = [], shown = [];
    inputs.forEach(function (el) {
      var k = +el.dataset.axis, i = +el.value, axis = data.axes[k];
      idx.push(i);
      shown.push(axis.label + " = " + axis.labels[i]);
      el.setAttribute("aria-valuetext", axis.labels[i]);
      var out = root.querySelector("output[data-axis='" + k + "']");
      if (out) { out.textContent = axis.labels[i]; }
    });
    img.src = data.frames[data.index[idx.join(",")]];
    img.alt = data.alt + " Shown: " + shown.join(", ") + ".";
  }
  inputs.forEach(function (el) {
    el.addEventListener("input", update);
    el.addEventListener("change", update);
  });
  root.querySelector(".attnlib-explorer-controls").hidden = false;
})();"""


def _position(values: Sequence[Any], value: Any) -> int:
    """Index of ``value`` in ``values`` (the nearest one for numbers)."""
    if value in values:
        return list(values).index(value)
    return min(range(len(values)), key=lambda i: abs(values[i] - value))


def explorer_html(spec: StaticSpec) -> tuple[str, bytes]:
    """HTML of the static explorer and the PNG of its default frame."""
    frames, index, default = render_frames(spec)
    uid = (
        "attnlib-explorer-"
        + hashlib.sha256(json.dumps(index).encode() + b"".join(frames[:2])).hexdigest()[
            :12
        ]
    )
    start = [_position(a.values, a.control.value) for a in spec.axes]
    shown = ", ".join(
        f"{a.label} = {a.text(a.values[i])}" for a, i in zip(spec.axes, start)
    )
    parts = [f'<div class="attnlib-explorer" id="{uid}">']
    alt = html.escape(f"{spec.alt} Shown: {shown}.", quote=True)
    parts.append(
        f'<img class="attnlib-explorer-frame" src="{_uri(frames[default])}" '
        f'alt="{alt}" style="max-width:100%;height:auto">'
    )
    # hidden until the script runs (the flex layout is on an inner box: a display
    # style on the hidden box itself would override the hidden attribute)
    parts.append(
        '<div class="attnlib-explorer-controls" hidden><div style="display:flex;'
        'flex-wrap:wrap;gap:0.3em 1.2em;align-items:center;margin:0.4em 0">'
    )
    for k, (axis, i) in enumerate(zip(spec.axes, start)):
        cid = f"{uid}-{k}"
        label = html.escape(axis.label)
        labels = [axis.text(v) for v in axis.values]
        parts.append(
            '<span class="attnlib-explorer-control" style="display:inline-flex;'
            'gap:0.4em;align-items:center;max-width:100%">'
        )
        parts.append(f'<label for="{cid}">{label}</label>')
        if axis.numeric and len(axis.values) > 1:
            parts.append(
                f'<input type="range" id="{cid}" data-axis="{k}" min="0" '
                f'max="{len(axis.values) - 1}" step="1" value="{i}" '
                f'aria-valuetext="{html.escape(labels[i], quote=True)}" '
                'style="width:12em;max-width:60vw">'
                f'<output for="{cid}" data-axis="{k}">{html.escape(labels[i])}</output>'
            )
        else:
            options = "".join(
                f'<option value="{j}"{" selected" if j == i else ""}>'
                f"{html.escape(t)}</option>"
                for j, t in enumerate(labels)
            )
            parts.append(f'<select id="{cid}" data-axis="{k}">{options}</select>')
        parts.append("</span>")
    parts.append("</div></div>")
    grid = " × ".join(f"{len(a.values)} {a.label}" for a in spec.axes)
    note = (
        f"Precomputed explorer: {len(index)} states ({grid}) drawn when the book was "
        "built, shown without a kernel."
    )
    if spec.live_only:
        note += (
            " The other controls of the widget ("
            + ", ".join(spec.live_only)
            + ") act only when the chapter runs as a notebook (launch it, or"
            " download the notebook of this page)."
        )
    parts.append(f'<p class="attnlib-explorer-note">{html.escape(note)}</p>')
    data = {
        "alt": spec.alt,
        "axes": [
            {"label": a.label, "labels": [a.text(v) for v in a.values]}
            for a in spec.axes
        ],
        "index": index,
        "frames": [_uri(f) for f in frames],
    }
    blob = json.dumps(data, ensure_ascii=False).replace("</", "<\\/")
    parts.append(
        f'<script type="application/json" class="attnlib-explorer-data">{blob}</script>'
    )
    parts.append(f"<script>{_SCRIPT % {'id': uid}}</script>")
    parts.append("</div>")
    return "".join(parts), frames[default]


class Explorer(widgets.VBox):
    """The one shape of the book's widgets: named controls that redraw one figure.

    An ``ipywidgets.VBox`` of the controls (in rows) and the output area that shows
    the figure. Setting any control's ``value`` redraws, so an explorer can be
    driven headless. In a live kernel it displays as the widget; while the book is
    built (``ATTNLIB_STATIC=1``) as the static explorer described by
    :attr:`static` (a :class:`StaticSpec`, set by the factory).

    Parameters
    ----------
    controls : mapping str -> ipywidgets widget
        The controls, by name; each is also an attribute (``e.beta`` is
        ``e.controls["beta"]``).
    fig : matplotlib.figure.Figure
    rows : sequence of sequences of str, optional
        The names of the controls in each row (default: one row of all).
    redraw : callable, optional
        What redraws the figure from the controls' values (a subclass defines
        :meth:`redraw` instead).

    Attributes
    ----------
    controls : dict
    fig : matplotlib.figure.Figure
    output : ipywidgets.Output
        Where the figure is shown.
    static : StaticSpec or None
    """

    static: StaticSpec | None = None

    def __init__(
        self,
        controls: Any,
        fig: Any,
        *,
        rows: Sequence[Sequence[str]] | None = None,
        redraw: Callable[[], Any] | None = None,
    ):
        if redraw is None and type(self).redraw is Explorer.redraw:
            raise TypeError(
                "Explorer needs redraw= (what redraws the figure) or a subclass "
                "that defines redraw"
            )
        if redraw is not None and not callable(redraw):
            raise TypeError(f"redraw must be callable, got {type(redraw).__name__}")
        controls = dict(controls)
        rows = [list(controls)] if rows is None else [list(r) for r in rows]
        if sorted(n for r in rows for n in r) != sorted(controls):
            raise ValueError(
                f"rows must name every control once ({sorted(controls)}), got {rows}"
            )
        output = widgets.Output()
        super().__init__(
            [widgets.HBox([controls[n] for n in r]) for r in rows] + [output]
        )
        self.controls, self.fig, self.output = controls, fig, output
        self._draw = redraw

    def __getattr__(self, name: str) -> Any:
        controls = self.__dict__.get("controls")
        if controls is not None and name in controls:
            return controls[name]
        raise AttributeError(
            f"{type(self).__name__!r} object has no attribute {name!r}"
        )

    @property
    def widget(self) -> "Explorer":
        """The explorer itself (what to ``display``)."""
        return self

    @property
    def sliders(self) -> dict:
        """The same as :attr:`controls`."""
        return self.controls

    def redraw(self, *_: Any) -> None:
        """Redraw the figure for the controls' current values (``redraw=`` of the
        constructor; a subclass without it defines this method)."""
        self._draw()

    def start(self, static: StaticSpec | None = None) -> "Explorer":
        """Observe every control, set :attr:`static` and draw once; returns ``self``.

        The static spec's ``redraw`` defaults to :meth:`redraw`, the one callback of
        the controls, so a frame that changes several controls is drawn once.
        """
        for control in self.controls.values():
            control.observe(self.redraw, names="value")
        if static is not None:
            if static.redraw is None:
                static.redraw = self.redraw
            self.static = static
        self.redraw()
        return self

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        if not static_enabled() or self.static is None:
            return super()._repr_mimebundle_(**kwargs)
        page, png = explorer_html(self.static)
        return {
            "text/html": page,
            "image/png": base64.b64encode(png).decode(),
            "text/plain": f"<static explorer: {self.static.alt}>",
        }


#: The former name of :class:`Explorer`.
ExplorerBox = Explorer
