"""How the book renders figures and animations (not public: the book's machinery).

:func:`player_html` turns an animation into the self-contained player that the static
HTML pages show; :func:`record_text_sizes`, :func:`mark_text_size` and
:func:`smallest_text` measure and carry the size of a figure's smallest text, which
the book's build checks; :func:`frame_png` and :func:`drawn_at` draw the frames of
the static explorers.
"""

from __future__ import annotations

import base64
import functools
import html
import io
import re
import struct
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ._describe import describe

__all__ = [
    "describe",
    "frame_dpi",
    "player_html",
    "record_text_sizes",
    "mark_text_size",
    "smallest_text",
]

_EXTERNAL_LINK = re.compile(r"<link\b[^>]*href=\"(?:https?:)?//[^\"]*\"[^>]*>", re.S)
_PLAYER_IMG = re.compile(r'<img id="(_anim_img\w+)">')
_PLAYER_SLIDER = re.compile(r'(<input id="_anim_slider\w+" type="range")')


# the key of the PNG text chunk that holds the height in pixels of a figure's smallest
# text, as drawn in that PNG (empty: the figure draws no text)
TEXT_KEY = "attnlib:smallest-text-px"
#: The height in pixels under which a figure's text does not read on a screen: the
#: explorers' frames are drawn so that theirs is at least this, and the pages hold
#: every measured figure at the width where theirs shows at least this high.
MIN_TEXT_PX = 9.0
_PNG = b"\x89PNG\r\n\x1a\n"


@contextmanager
def record_text_sizes() -> Iterator[list[float]]:
    """Record the size in pixels of every text matplotlib draws inside the block.

    While the block runs, each visible, non-empty text drawn (titles, labels, tick
    labels, legends, annotations) appends its font size converted to the pixels of
    the image being drawn (``renderer.points_to_pixels``: the size in points times
    the dpi over 72), so a figure saved as PNG gives the heights of its texts in
    that PNG's pixels, whatever its dpi. Sub- and superscripts of mathtext, drawn
    smaller, count at their text's size.

    Yields
    ------
    list of float
        The sizes, in the order drawn (filled while the block runs).

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots(dpi=72)
    >>> _ = ax.set_title("a title", fontsize=14)
    >>> _ = ax.set_xticks([]); _ = ax.set_yticks([])
    >>> with record_text_sizes() as sizes:
    ...     fig.savefig(io.BytesIO(), format="png", dpi=144)
    >>> sizes
    [28.0]
    >>> plt.close(fig)
    """
    from matplotlib.text import Text

    sizes: list[float] = []
    original = Text.draw

    def draw(self: Any, renderer: Any, *args: Any, **kwargs: Any) -> Any:
        if renderer is not None and self.get_visible() and self.get_text().strip():
            sizes.append(float(renderer.points_to_pixels(self.get_fontsize())))
        return original(self, renderer, *args, **kwargs)

    Text.draw = draw
    try:
        yield sizes
    finally:
        Text.draw = original


def frame_dpi(fig: Any, dpi: float) -> float:
    """The dpi at which every text of ``fig`` is at least :data:`MIN_TEXT_PX` high,
    and at least ``dpi`` (a text of 8 points is 8 pixels at 72 dpi): what the
    frames of an explorer or a player are drawn at.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots(dpi=72)
    >>> _ = ax.legend(handles=ax.plot([0, 1], label="line"), fontsize=6)
    >>> frame_dpi(fig, 72)  # the legend's 6 points drawn 9 px high
    108.0
    >>> frame_dpi(fig, 200)  # never lowered
    200
    >>> plt.close(fig)
    """
    with record_text_sizes() as sizes:
        fig.savefig(io.BytesIO(), format="png", dpi=dpi)
    if not sizes:
        return dpi
    return max(dpi, dpi * MIN_TEXT_PX / min(sizes))


def _chunks(png: bytes) -> Iterator[tuple[int, bytes, bytes]]:
    """(offset, type, data) of the chunks of a PNG, up to its first ``IDAT``."""
    if not isinstance(png, bytes | bytearray) or not png.startswith(_PNG):
        raise ValueError("png must be the bytes of a PNG image")
    at = len(_PNG)
    while at + 8 <= len(png):
        length, kind = struct.unpack(">I4s", png[at : at + 8])
        if kind == b"IDAT" or at + 12 + length > len(png):
            return
        yield at, kind, png[at + 8 : at + 8 + length]
        at += 12 + length


def mark_text_size(png: bytes, sizes: list[float]) -> bytes:
    """The PNG with the size of its smallest text recorded in a text chunk.

    The chunk (key :data:`TEXT_KEY`) goes just after the image header, where
    :func:`smallest_text` reads it without decoding the image; the pixels are
    unchanged.

    Parameters
    ----------
    png : bytes
        A PNG image, e.g. a figure saved inside :func:`record_text_sizes`.
    sizes : list of float
        The sizes of its texts in its pixels (empty: it draws no text).

    Returns
    -------
    bytes
        The PNG with the chunk (a chunk already there is replaced).

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots(dpi=100)
    >>> with record_text_sizes() as sizes:
    ...     buffer = io.BytesIO()
    ...     fig.savefig(buffer, format="png")
    >>> plt.close(fig)
    >>> smallest_text(mark_text_size(buffer.getvalue(), sizes))  # 10 pt at 100 dpi
    13.89
    """
    if any(not 0 < s < float("inf") for s in sizes):
        raise ValueError(f"sizes must be positive and finite, got {sizes!r}")
    chunks = list(_chunks(png))
    if not chunks or chunks[0][1] != b"IHDR":
        raise ValueError("png must be the bytes of a PNG image (no IHDR chunk)")
    value = f"{min(sizes):.2f}" if sizes else ""
    data = TEXT_KEY.encode("latin-1") + b"\0" + value.encode("latin-1")
    chunk = struct.pack(">I4s", len(data), b"tEXt") + data
    chunk += struct.pack(">I", zlib.crc32(chunk[4:]) & 0xFFFFFFFF)
    old = [
        (at, d)
        for at, kind, d in chunks
        if kind == b"tEXt" and d.startswith(data[: len(TEXT_KEY) + 1])
    ]
    for at, d in reversed(old):
        png = png[:at] + png[at + 12 + len(d) :]
    end = chunks[0][0] + 12 + len(chunks[0][2])
    return png[:end] + chunk + png[end:]


def smallest_text(png: bytes) -> float | None:
    """The height in pixels of the smallest text of a PNG marked by
    :func:`mark_text_size`: ``inf`` if it draws no text, None if it is not marked.

    Examples
    --------
    >>> smallest_text(mark_text_size(_PNG + _IHDR, [12.5, 9.25]))
    9.25
    >>> smallest_text(_PNG + _IHDR) is None
    True
    """
    prefix = TEXT_KEY.encode("latin-1") + b"\0"
    for _, kind, data in _chunks(png):
        if kind == b"tEXt" and data.startswith(prefix):
            value = data[len(prefix) :].decode("latin-1")
            return float(value) if value else float("inf")
    return None


# the header of a 1 x 1 PNG (for the examples)
_IHDR = struct.pack(">I4sIIBBBBB", 13, b"IHDR", 1, 1, 8, 6, 0, 0, 0)
_IHDR += struct.pack(">I", zlib.crc32(_IHDR[4:]) & 0xFFFFFFFF)


def player_html(anim: Any, alt: str | None = None, colors: int | None = 256) -> str:
    """The ``to_jshtml`` player of a matplotlib animation, legible on a phone and
    without links to a CDN.

    Its frames are drawn at the dpi that makes their smallest text
    :data:`MIN_TEXT_PX` high (:func:`frame_dpi` of the figure as it shows the first
    frame, or more where a later frame's text is smaller; the figure's own dpi when
    its text is that large already), and each frame's PNG records the height of its
    smallest text (:func:`mark_text_size`), so that the page can hold the player
    at the width where that text reads (``bookext``) and the page check can
    measure it.

    matplotlib's player links Font Awesome 4 from ``maxcdn.bootstrapcdn.com``; the
    book's theme already ships Font Awesome (whose ``fa`` classes draw the buttons),
    and the pages load nothing from another host, so the link is dropped. Its image
    gets an alternative text (``alt``, by default "Animation of N frames" and the
    :func:`describe` of its figure) and its frame slider an accessible name. Show
    the result with ``IPython.display.HTML``.

    The frames are embedded in the page, so they are what it weighs: each opaque
    frame is stored as a PNG with a palette of at most ``colors`` colours (median
    cut, no dithering) when that is smaller. A figure of a few coloured tokens and
    lines has a few hundred to a few thousand colours, most of them anti-aliasing
    shades, and the palette about halves its size while changing a pixel by less
    than one level of 255 on average.

    Parameters
    ----------
    anim : matplotlib.animation.Animation
    alt : str, optional
        Alternative text of the player's image.
    colors : int in [2, 256] or None
        Size of the frames' palette; ``None`` keeps matplotlib's pixels as they are.

    Returns
    -------
    str
        HTML of a player whose frames are embedded as PNG images.
    """
    if colors is not None:
        if isinstance(colors, bool) or not isinstance(colors, int):
            raise TypeError(
                f"colors must be an integer in [2, 256] or None, got {colors!r}"
            )
        if not 2 <= colors <= 256:
            raise ValueError(f"colors must be in [2, 256] or None, got {colors}")
    page = _EXTERNAL_LINK.sub("", _jshtml(anim, colors))
    if alt is None:
        frames = getattr(anim, "_save_count", None) or len(
            list(getattr(anim, "_framedata", []) or [])
        )
        count = f" of {frames} frames" if frames else ""
        alt = f"Animation{count}; its figure: {describe(anim._fig)}"
    text = html.escape(alt, quote=True)
    page = _PLAYER_IMG.sub(rf'<img id="\1" alt="{text}">', page, count=1)
    return _PLAYER_SLIDER.sub(r'\1 aria-label="Frame of the animation"', page, count=1)


def _jshtml(anim: Any, colors: int | None) -> str:
    """``anim.to_jshtml()`` with legible frames that record their text size.

    ``to_jshtml`` draws the frames at the figure's dpi and takes no other; it saves
    the animation with matplotlib's ``HTMLWriter``, as this does with
    :func:`_writer`, whose frames are drawn at :func:`frame_dpi` of the first (the
    fps and the mode at the end are ``to_jshtml``'s defaults). Where a later frame
    draws a smaller text than the first, the animation is drawn again at the dpi
    that makes that text :data:`MIN_TEXT_PX` high.
    """
    import tempfile
    from pathlib import Path

    options: dict[str, Any] = {
        "default_mode": "loop" if getattr(anim, "_repeat", False) else "once"
    }
    if getattr(anim, "_interval", None):
        options["fps"] = 1000 / anim._interval

    def save(dpi: float | None) -> tuple[str, Any]:
        writer = _writer()(colors, **options)
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder, "player.html")
            anim.save(str(path), writer=writer, dpi=dpi)
            return path.read_text(encoding="utf-8"), writer

    page, writer = save(None)
    if writer.smallest < MIN_TEXT_PX - 0.01:
        page, _ = save(writer.dpi * MIN_TEXT_PX / writer.smallest)
    return page


@functools.cache
def _writer() -> type:
    """matplotlib's ``HTMLWriter`` (frames embedded) whose frames are legible: the
    first frame sets the dpi of all (:func:`frame_dpi`), each records the size of
    its smallest text (the smallest of all frames is its ``smallest``), and each
    is stored with a palette (:func:`_palette_png`)."""
    from matplotlib.animation import HTMLWriter

    class LegibleFrames(HTMLWriter):
        def __init__(self, colors: int | None, **options: Any) -> None:
            super().__init__(embed_frames=True, **options)
            self.colors = colors

        def setup(self, *args: Any, **kwargs: Any) -> None:
            super().setup(*args, **kwargs)
            self.dpi_chosen = False
            self.smallest = float("inf")

        def grab_frame(self, **savefig_kwargs: Any) -> None:
            if not self.dpi_chosen:  # the figure shows the first frame now
                self.dpi = frame_dpi(self.fig, self.dpi)
                self.dpi_chosen = True
            count = len(self._saved_frames)
            with record_text_sizes() as sizes:
                super().grab_frame(**savefig_kwargs)
            if len(self._saved_frames) == count:  # over matplotlib's embed limit
                return
            png = base64.b64decode(self._saved_frames[-1])
            if self.colors is not None:
                png = _palette_png(png, self.colors)
            png = mark_text_size(png, sizes)
            self.smallest = min([self.smallest, *sizes])
            self._saved_frames[-1] = base64.encodebytes(png).decode("ascii")

    return LegibleFrames


def _palette_png(data: bytes, colors: int) -> bytes:
    """A PNG as a palette PNG of ``colors`` colours if it is opaque and that is
    smaller (else unchanged)."""
    from PIL import Image  # a dependency of matplotlib

    image = Image.open(io.BytesIO(data))
    if image.mode not in ("RGB", "RGBA"):
        return data
    if image.mode == "RGBA":
        if image.getchannel("A").getextrema() != (255, 255):
            return data  # transparency: a palette would lose it
        image = image.convert("RGB")
    palette = _quantized(image, colors)
    if len(palette) >= len(data):
        return data
    return palette


def _quantized(image: Any, colors: int) -> bytes:
    """An RGB image of Pillow as a PNG with a palette of ``colors`` colours."""
    # method 0 is median cut, dither 0 none (the enums' values since Pillow 6)
    palette = image.quantize(colors=colors, method=0, dither=0)
    out = io.BytesIO()
    palette.save(out, format="PNG", optimize=True)
    return out.getvalue()


@contextmanager
def drawn_at(fig: Any, dpi: float) -> Iterator[None]:
    """While the block runs, ``fig`` is at ``dpi`` on an Agg canvas of its own, so
    that laying it out (``tight_layout``) and saving it at ``dpi`` (:func:`frame_png`)
    share one renderer, frame after frame; its dpi and canvas are restored after.

    matplotlib keeps a canvas's renderer, and with it the sizes of the texts it has
    measured and the mathtext it has parsed, only while the canvas's size and dpi
    stay the same. A figure closed by pyplot (as the explorers' figures are) has a
    bare canvas, which makes a new renderer for every layout and every save, and a
    frame laid out at the figure's dpi and drawn at another needs two anyway: every
    frame measured all its texts (tick labels, mathtext) again, twice. Here the
    layout is also made at the resolution the frame is drawn at.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots(dpi=100)
    >>> plt.close(fig)
    >>> with drawn_at(fig, 150):
    ...     fig.tight_layout()
    ...     png = frame_png(fig, 150)
    >>> fig.dpi, type(fig.canvas).__name__
    (100, 'FigureCanvasBase')
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas, own_dpi = fig.canvas, fig.dpi
    # a new canvas records the figure's dpi as its unscaled one (screens of a
    # higher pixel ratio scale from it): the figure's own record is put back
    original = fig.__dict__.get("_original_dpi", own_dpi)
    FigureCanvasAgg(fig)
    fig.set_dpi(dpi)
    try:
        yield
    finally:
        fig.set_dpi(own_dpi)
        fig.set_canvas(canvas)
        fig._original_dpi = original


@contextmanager
def _without_leftover_layout_engine(fig: Any) -> Iterator[None]:
    """Without the layout engine that only holds the place of the one a
    ``tight_layout`` used (matplotlib leaves it on the figure after each call)
    while the block runs: it lays nothing out, and makes every save draw the
    figure once more, without pixels, before drawing it."""
    import matplotlib as mpl
    from matplotlib.layout_engine import PlaceHolderLayoutEngine

    engine = fig.get_layout_engine()
    automatic = (
        mpl.rcParams["figure.autolayout"]
        or mpl.rcParams["figure.constrained_layout.use"]
    )
    if automatic or not isinstance(engine, PlaceHolderLayoutEngine):
        yield
        return
    fig.set_layout_engine(None)
    try:
        yield
    finally:
        fig.set_layout_engine(engine)


def frame_png(fig: Any, dpi: float, colors: int = 256) -> bytes:
    """The figure drawn at ``dpi`` as a PNG that records the height of its smallest
    text (:func:`mark_text_size`), with a palette of ``colors`` colours if it is
    opaque, else as matplotlib saves it.

    The figure is drawn once into RGBA pixels, which are quantised and encoded
    once: saving matplotlib's PNG and decoding it again for :func:`_palette_png`
    cost a fifth of each frame. A palette PNG of an opaque figure is what
    :func:`_palette_png` makes of it, byte for byte, wherever that is smaller than
    matplotlib's PNG (a third of its size for line art); here it is kept even when
    it is not.
    """
    from matplotlib.transforms import Affine2D, TransformedBbox
    from PIL import Image  # a dependency of matplotlib

    buf = io.BytesIO()
    with record_text_sizes() as sizes, _without_leftover_layout_engine(fig):
        fig.savefig(buf, format="rgba", dpi=dpi)
    # the canvas matplotlib's Agg draws on: the figure's box at that dpi, truncated
    box = TransformedBbox(fig.bbox_inches, Affine2D().scale(dpi))
    width, height = int(box.width), int(box.height)
    pixels = buf.getvalue()
    if width * height * 4 == len(pixels):
        image = Image.frombuffer("RGBA", (width, height), pixels, "raw", "RGBA", 0, 1)
        if image.getchannel("A").getextrema() == (255, 255):
            return mark_text_size(_quantized(image.convert("RGB"), colors), sizes)
    # transparency, which a palette would lose (or a canvas of another size)
    buf = io.BytesIO()
    with record_text_sizes() as sizes:
        fig.savefig(buf, format="png", dpi=dpi)
    return mark_text_size(_palette_png(buf.getvalue(), colors), sizes)
