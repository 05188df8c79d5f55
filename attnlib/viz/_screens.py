"""Figures drawn for two screens, with a caption and an alternative text.

A chapter's figure is drawn once for a desktop column and, when its panels sit in
a row or its text would read too small in a phone's column, once more for the
phone: its panels stacked in one column (:func:`one_column`) and its width chosen
so that its smallest text shows at least :data:`TARGET_PX` CSS pixels high there
(:func:`screen_pngs`). The phone's image travels inside the desktop's PNG, in a
private ancillary chunk (:func:`attach_phone`; image viewers and LaTeX skip it),
from the kernel that executes the chapter to the page, where ``bookext`` takes it
out into a file of its own and shows it through ``<picture>`` on narrow screens.

A figure's caption and alternative text are written by the chapter, beside the
code that makes the figure (:func:`caption`), and travel in the figure's text form
(:func:`figure_text`), which ``bookext`` reads.
"""

from __future__ import annotations

import math
import struct
import warnings
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = [
    "DESKTOP_COLUMN_PX",
    "PHONE_COLUMN_PX",
    "TARGET_PX",
    "attach_phone",
    "caption",
    "figure_text",
    "one_column",
    "phone_image",
    "screen_pngs",
    "without_phone",
]

#: Width in CSS pixels that a figure is drawn for on a 1366 px screen: the book's
#: column there is about 650 px, a little less inside a solution or an admonition.
DESKTOP_COLUMN_PX = 600
#: Width in CSS pixels that a figure is drawn for on a 390 px phone: the column is
#: 342 px there, a little less inside a solution or an admonition.
PHONE_COLUMN_PX = 320
#: Height in CSS pixels that the smallest text of a figure is drawn to show at
#: (the pages require 8; the half pixel absorbs rounding of sizes and widths).
TARGET_PX = 8.5

# a private, ancillary, safe-to-copy PNG chunk: the PNG of the phone's layout
PHONE_CHUNK = b"atPh"
_PNG = b"\x89PNG\r\n\x1a\n"
# the attribute of a Figure that holds its authored caption and alternative text
_TEXTS = "_attnlib_caption"
FIGURE_TEXT = "Figure: "
ALT_TEXT = "Alt: "


def caption(fig: Any, text: str, *, alt: str) -> None:
    """Give ``fig`` the caption and the alternative text the book shows with it.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    text : str
        The caption: what the figure shows, in a sentence.
    alt : str
        The alternative text, for a reader who cannot see the image: what the
        figure shows and the point it makes (not its caption again).

    It returns nothing: a cell that ends with it does not show the figure a
    second time (pyplot's inline backend shows the open figure anyway).

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> fig = plt.figure()
    >>> caption(fig, "Two curves.", alt="The red curve stays above the blue.")
    >>> print(figure_text(fig))
    Figure: Two curves.
    Alt: The red curve stays above the blue.
    >>> plt.close(fig)
    """
    from matplotlib.figure import Figure

    if not isinstance(fig, Figure):
        raise TypeError(f"fig must be a matplotlib Figure, got {type(fig).__name__}")
    texts = {}
    for name, value in (("text", text), ("alt", alt)):
        if not isinstance(value, str):
            raise TypeError(f"{name} must be a str, got {type(value).__name__}")
        value = " ".join(value.split())
        if not value:
            raise ValueError(f"{name} must not be empty")
        texts[name] = value
    if texts["text"].casefold() == texts["alt"].casefold():
        raise ValueError("alt must say more than the caption, got the caption again")
    setattr(fig, _TEXTS, (texts["text"], texts["alt"]))


def figure_text(fig: Any) -> str:
    """The text form of a figure while the book is built: ``Figure: <caption>``
    and ``Alt: <alternative text>`` on the next line when :func:`caption` gave
    them, else ``Figure: <description>`` (:func:`attnlib.viz._describe.describe`)."""
    texts = getattr(fig, _TEXTS, None)
    if texts is not None:
        return f"{FIGURE_TEXT}{texts[0]}\n{ALT_TEXT}{texts[1]}"
    from ._describe import describe

    return FIGURE_TEXT + describe(fig)


# --- the phone's image inside the desktop's PNG --------------------------------


def _chunk(kind: bytes, data: bytes) -> bytes:
    head = struct.pack(">I4s", len(data), kind) + data
    return head + struct.pack(">I", zlib.crc32(head[4:]) & 0xFFFFFFFF)


def _split(png: bytes) -> list[tuple[bytes, bytes]]:
    """(type, data) of every chunk of a PNG."""
    if not isinstance(png, bytes | bytearray) or not png.startswith(_PNG):
        raise ValueError("png must be the bytes of a PNG image")
    out, at = [], len(_PNG)
    while at + 12 <= len(png):
        length, kind = struct.unpack(">I4s", png[at : at + 8])
        if at + 12 + length > len(png):
            raise ValueError("png is truncated (a chunk runs past its end)")
        out.append((kind, bytes(png[at + 8 : at + 8 + length])))
        at += 12 + length
    if not out or out[0][0] != b"IHDR":
        raise ValueError("png must be the bytes of a PNG image (no IHDR chunk)")
    return out


def _join(chunks: list[tuple[bytes, bytes]]) -> bytes:
    return _PNG + b"".join(_chunk(kind, data) for kind, data in chunks)


def attach_phone(png: bytes, phone: bytes) -> bytes:
    """The PNG ``png`` carrying the PNG ``phone`` (the phone's layout of the same
    figure) in a chunk after its header; its pixels are unchanged.

    Examples
    --------
    >>> from attnlib.viz._render import _IHDR
    >>> one = _PNG + _IHDR
    >>> phone_image(attach_phone(one, one)) == one
    True
    >>> without_phone(attach_phone(one, one)) == one
    True
    """
    _split(phone)
    chunks = [c for c in _split(png) if c[0] != PHONE_CHUNK]
    return _join([chunks[0], (PHONE_CHUNK, bytes(phone)), *chunks[1:]])


def phone_image(png: bytes) -> bytes | None:
    """The phone's PNG that :func:`attach_phone` put into ``png``, or None."""
    for kind, data in _split(png):
        if kind == PHONE_CHUNK:
            return data
        if kind == b"IDAT":
            return None
    return None


def without_phone(png: bytes) -> bytes:
    """``png`` without the phone's PNG (unchanged, byte for byte, if it has none)."""
    chunks = _split(png)
    if all(kind != PHONE_CHUNK for kind, _ in chunks):
        return png
    return _join([c for c in chunks if c[0] != PHONE_CHUNK])


# --- layouts -----------------------------------------------------------------


def _top_cell(spec: Any) -> tuple[Any, Any | None]:
    """The cell of the figure's top grid that holds ``spec`` and, when ``spec`` is
    in a grid nested in that cell (a colorbar's), the nested grid."""
    from matplotlib.gridspec import GridSpecFromSubplotSpec

    nested = None
    while isinstance(spec.get_gridspec(), GridSpecFromSubplotSpec):
        nested = spec.get_gridspec()
        spec = nested._subplot_spec
    return spec, nested


def _panels(fig: Any) -> list[tuple[Any, list[Any], list[Any]]] | None:
    """The panels of a figure laid out on one grid: (top cell, axes directly in
    it, grids nested in it), in reading order; None when an axes is not on that
    grid (placed by hand, or a colorbar placed beside a group of axes)."""
    cells: dict[tuple, tuple[Any, list, list]] = {}
    grid = None
    for ax in fig.get_axes():
        if not ax.get_visible():
            continue
        spec = ax.get_subplotspec()
        if spec is None:
            return None
        top, nested = _top_cell(spec)
        if grid is None:
            grid = top.get_gridspec()
        elif top.get_gridspec() is not grid:
            return None
        key = (top.rowspan.start, top.colspan.start, top.rowspan.stop, top.colspan.stop)
        cell = cells.setdefault(key, (top, [], []))
        if nested is None:
            cell[1].append(ax)
        elif nested not in cell[2]:
            cell[2].append(nested)
    return [cells[k] for k in sorted(cells)] or None


@contextmanager
def _kept(fig: Any) -> Iterator[None]:
    """Whatever the block does to the figure's size, dpi, layout and axes'
    places is undone after it."""
    size, dpi = fig.get_size_inches().copy(), fig.dpi
    engine = fig.get_layout_engine()
    pars = {k: getattr(fig.subplotpars, k) for k in fig.subplotpars.__dict__}
    places = [
        (ax, ax.get_subplotspec(), ax.get_position(original=True), ax.get_position())
        for ax in fig.get_axes()
    ]
    nested = {}
    for ax in fig.get_axes():
        spec = ax.get_subplotspec()
        while spec is not None and hasattr(spec.get_gridspec(), "_subplot_spec"):
            grid = spec.get_gridspec()
            nested[id(grid)] = (grid, grid._subplot_spec)
            spec = grid._subplot_spec
    try:
        yield
    finally:
        for grid, spec in nested.values():
            grid._subplot_spec = spec
        fig.set_size_inches(size, forward=False)
        fig.set_dpi(dpi)
        fig.subplotpars.update(**pars)
        for ax, spec, original, active in places:
            if spec is not None and ax.get_subplotspec() is not spec:
                ax.set_subplotspec(spec)
            ax._set_position(original, which="original")
            ax._set_position(active, which="active")
        try:
            fig.set_layout_engine(engine)
        except RuntimeError:  # an engine the figure's colorbars do not allow back
            pass


def _relayout(fig: Any, regridded: bool = False) -> None:
    """Lay the figure out again after its size or grid changed: a layout engine
    that runs at every draw does it itself; a figure laid out by
    ``tight_layout`` gets it again, quietly (a warning would fail the book's
    build); one laid out by hand keeps its fractions, unless its panels were
    moved to a new grid (``regridded``), which its fractions were not made for."""
    from matplotlib.layout_engine import PlaceHolderLayoutEngine, TightLayoutEngine

    engine = fig.get_layout_engine()
    if engine is None and not regridded:
        return  # laid out by hand, in fractions of the figure
    if engine is not None and not isinstance(
        engine, PlaceHolderLayoutEngine | TightLayoutEngine
    ):
        return  # laid out at every draw
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fig.tight_layout()
        _below_title(fig)


def _below_title(fig: Any) -> None:
    """Lower the top of the figure's grid until no panel reaches its title
    (``tight_layout`` leaves room for a title of one line only)."""
    title = getattr(fig, "_suptitle", None)
    if title is None or not title.get_text():
        return
    # a figure made without pyplot has a bare canvas, without a renderer of its own
    renderer = fig._get_renderer()
    bottom = title.get_window_extent(renderer).y0
    reach = max(
        (ax.get_tightbbox(renderer).y1 for ax in fig.get_axes() if ax.get_visible()),
        default=bottom,
    )
    excess = (reach - bottom) / fig.bbox.height + 0.01
    if excess > 0.01 and fig.subplotpars.top - excess > fig.subplotpars.bottom:
        fig.subplots_adjust(top=fig.subplotpars.top - excess)


@contextmanager
def one_column(fig: Any, width: float | None = None) -> Iterator[bool]:
    """While the block runs, the panels of ``fig`` that sit side by side are
    stacked in one column, in reading order (row by row), each keeping its
    height over its width; panels at most half as wide as ``width`` go two by two
    instead, when the grid had three columns or more. Yields False (and changes
    nothing) when the figure has a single column already or is not laid out on
    one grid.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    width : float, optional
        Width in inches of the stacked figure (default: that of the widest
        panel).

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> fig, axes = plt.subplots(1, 3, figsize=(9, 2.5))
    >>> with one_column(fig) as stacked:
    ...     rows = [ax.get_subplotspec().rowspan.start for ax in axes]
    ...     size = fig.get_size_inches().round(2).tolist()
    >>> stacked, rows, size
    (True, [0, 1, 2], [3.0, 7.5])
    >>> [ax.get_subplotspec().colspan.start for ax in axes]  # restored
    [0, 1, 2]
    >>> plt.close(fig)
    """
    from matplotlib.gridspec import GridSpec

    panels = _panels(fig)
    grid = panels[0][0].get_gridspec() if panels else None
    if grid is None or grid.ncols < 2 or len(panels) < 2:
        yield False
        return
    w, h = fig.get_size_inches()
    nrows, ncols = grid.get_geometry()
    widths = grid.get_width_ratios() or [1] * ncols
    heights = grid.get_height_ratios() or [1] * nrows
    cell_w = [w * r / sum(widths) for r in widths]
    cell_h = [h * r / sum(heights) for r in heights]
    widest = max(sum(cell_w[c.colspan.start : c.colspan.stop]) for c, _, _ in panels)
    if width is None:
        width = widest
    # small panels go two by two (as wide as they were), others one by one
    single = all(c.colspan.stop - c.colspan.start == 1 for c, _, _ in panels)
    cols = 2 if single and ncols > 2 and width >= 1.9 * widest else 1
    panel_w = width / cols
    rows = []
    for k, (top, _, _) in enumerate(panels):
        pw = sum(cell_w[top.colspan.start : top.colspan.stop])
        ph = sum(cell_h[top.rowspan.start : top.rowspan.stop])
        h_k = min(max(ph * panel_w / pw, 0.45 * panel_w), 1.2 * panel_w)
        if k % cols:
            rows[-1] = max(rows[-1], h_k)
        else:
            rows.append(h_k)
    with _kept(fig):
        stack = GridSpec(len(rows), cols, figure=fig, height_ratios=rows)
        for k, (_, axes, nested) in enumerate(panels):
            cell = stack[k // cols, k % cols]
            for ax in axes:
                ax.set_subplotspec(cell)
            for sub in nested:
                sub._subplot_spec = cell
        # a panel that shared its row's y axis hid its tick labels beside the
        # first; stacked, each shows them
        shared = [
            (ax, ax.yaxis.get_tick_params().get("labelleft", True))
            for ax in fig.get_axes()
            if len(ax.get_shared_y_axes().get_siblings(ax)) > 1
        ]
        for ax, _ in shared:
            ax.tick_params(axis="y", labelleft=True)
        fig.set_size_inches(width, sum(rows) + 0.25 * (fig._suptitle is not None))
        for ax in fig.get_axes():
            spec = ax.get_subplotspec()
            if spec is not None:
                ax._set_position(spec.get_position(fig))
        _relayout(fig, regridded=True)
        try:
            yield True
        finally:
            for ax, label in shared:
                ax.tick_params(axis="y", labelleft=label)


def _fill(line: str, chars: int) -> str:
    """``line`` broken at its spaces into lines of at most ``chars`` visible
    characters, never inside a ``$...$`` formula (whose visible length is that
    of its plain text, :func:`attnlib.viz._describe.plain_text`).

    Examples
    --------
    >>> print(_fill(r"Minimisers of $E_D$ on the circle (mirror descent)", 20))
    Minimisers of $E_D$ on
    the circle (mirror
    descent)
    """
    import re

    from ._describe import plain_text

    words = re.findall(r"(?:\$[^$]*\$|\S)+", line)
    out: list[str] = []
    for word in words:
        if out and len(plain_text(out[-1] + " " + word)) <= chars:
            out[-1] += " " + word
        else:
            out.append(word)
    return "\n".join(out) if len(plain_text(line)) > chars else line


@contextmanager
def _wrapped_titles(fig: Any, width: float) -> Iterator[None]:
    """While the block runs, the figure's title and its panels' titles that are
    longer than ``width`` inches are broken into lines that fit it (a title wider
    than the figure widens its cropped image, and shrinks everything else)."""
    texts = [getattr(fig, "_suptitle", None)]
    for ax in fig.get_axes():
        texts += [ax.title, ax._left_title, ax._right_title]
    kept = []
    for text in texts:
        if text is None or not text.get_text():
            continue
        chars = int(width * 72 / (0.55 * text.get_fontsize()))
        value = text.get_text()
        lines = [_fill(line, chars) for line in value.split("\n")]
        if "\n".join(lines) != value:
            kept.append((text, value))
            text.set_text("\n".join(lines))
    try:
        yield
    finally:
        for text, value in kept:
            text.set_text(value)


# --- drawing for both screens -----------------------------------------------


def _png_width(png: bytes) -> int:
    return struct.unpack(">I", png[16:20])[0]


def _shown_text(png: bytes, sizes: list[float], column: float) -> float:
    """Height in CSS px of the smallest text of ``png`` shown in ``column`` px
    (the image shrinks to the column, never grows); ``inf`` with no text."""
    if not sizes:
        return math.inf
    return min(sizes) * min(1.0, column / _png_width(png))


def _fit(
    fig: Any,
    draw: Callable[[], tuple[bytes, list[float]]],
    column: float,
    keep_height: bool,
) -> tuple[bytes, list[float]]:
    """The figure drawn so that its smallest text shows :data:`TARGET_PX` high in
    ``column`` px: narrower when its image is wider than the column (its height
    kept, or scaled with it), at a higher dpi when it is narrower and its text
    small; at most five drawings, the last kept."""
    png, sizes = draw()
    for _ in range(4):
        shown = _shown_text(png, sizes, column)
        if shown >= TARGET_PX:
            break
        if _png_width(png) > column:
            w, h = fig.get_size_inches()
            k = 0.98 * shown / TARGET_PX
            fig.set_size_inches(w * k, h if keep_height else h * k, forward=False)
            _relayout(fig)
        else:
            fig.set_dpi(fig.dpi * 1.02 * TARGET_PX / shown)
        png, sizes = draw()
    return png, sizes


def screen_pngs(
    fig: Any, draw: Callable[[], tuple[bytes, list[float]]]
) -> tuple[tuple[bytes, list[float]], tuple[bytes, list[float]] | None]:
    """The figure drawn for a desktop column and, when it needs another layout
    there, for a phone's column: ``((png, text sizes), phone or None)``.

    ``draw()`` draws the figure as it is now and returns its PNG and the sizes in
    that PNG's pixels of the texts drawn (:func:`attnlib.viz.record_text_sizes`).
    The desktop's image keeps the figure's layout; it is drawn narrower (or at a
    higher dpi) when its smallest text would show under :data:`TARGET_PX` CSS px
    in :data:`DESKTOP_COLUMN_PX`. The phone's image is drawn when that text would
    show under :data:`TARGET_PX` in :data:`PHONE_COLUMN_PX`: its panels stacked
    in one column (:func:`one_column`), at the width where its text reads there.
    The figure is as it was after.
    """
    with _kept(fig):
        desktop = _fit(fig, draw, DESKTOP_COLUMN_PX, keep_height=True)
        dpi = fig.dpi  # the dpi the desktop's image was drawn at
    if _shown_text(*desktop, PHONE_COLUMN_PX) >= TARGET_PX:
        return desktop, None
    png, sizes = desktop
    # the width in inches at which the smallest text fills the phone's column at
    # the target height (the text's size in points is the same in both layouts)
    points = min(sizes) * 72 / dpi if sizes else 10.0
    width = points * PHONE_COLUMN_PX / (72 * TARGET_PX)
    with _kept(fig), _wrapped_titles(fig, width), one_column(fig, width) as stacked:
        if not stacked:
            w, h = fig.get_size_inches()
            if width < w:
                fig.set_size_inches(width, max(h * width / w, 0.6 * width))
                _relayout(fig)
        phone = _fit(fig, draw, PHONE_COLUMN_PX, keep_height=False)
    return desktop, phone
