"""Figures legible on a phone: no figure's text shows smaller than 9 px.

A figure's image shrinks to the width of the column, and its text with it: the
figure of the attention variants, 1164 px wide, drawn in a 390 px phone's column
of 342 px, showed its tick labels 2.9 px high. The book's kernels record in each
figure's PNG the height, in that PNG's pixels, of the smallest text drawn
(:func:`attnlib.viz.mark_text_size`). :func:`legible_figures`
(``html-page-context``) gives every such image its :func:`legible_width`: the
width at which its smallest text is :data:`MIN_TEXT_PX` CSS pixels high, never more
than the image's own width (a figure is not enlarged: one whose text is smaller
than that at its own size must be drawn with larger text). On a narrow screen
(``attnlib-book.css``, up to 720 px) the image is not shown narrower than that;
one that is then wider than a phone's column (:data:`PHONE_COLUMN`) sits in a box
that scrolls sideways, as the page's wide equations do, and that takes the
keyboard's focus, so that it scrolls without a pointer too. A wide figure keeps
its panels side by side, where the text refers to them by place ("the left
panel", "the third row"), and reads at its own size by scrolling, instead of
showing every panel too small to read. On a wider screen nothing changes.

The page check measures the result in Chromium at 390 px (:mod:`tools.check_html`).
"""

from __future__ import annotations

import math
import re
import struct
from pathlib import Path
from typing import Any

from attnlib.viz import MIN_TEXT_PX  # CSS pixels on the page

# the width of a figure's box in the book's column on the narrowest phone screen
# (320 px; 342 px on a 390 px screen): a figure that must be wider than this to
# read may scroll in its own box
PHONE_COLUMN = 272
# the custom property of an image's style that holds its legible width
VAR = "--attnlib-legible-width"
IMG = re.compile(r'<img\b[^>]*\bsrc="([^"]*?_images/([^"/]+\.png))"[^>]*>')


def png_size(png: bytes) -> tuple[int, int]:
    """Width and height in pixels of a PNG, from its header."""
    if png[:8] != b"\x89PNG\r\n\x1a\n" or png[12:16] != b"IHDR":
        raise ValueError("not a PNG image (no PNG signature and IHDR header)")
    return struct.unpack(">II", png[16:24])


def legible_width(width: int, text_px: float | None) -> int | None:
    """The width in CSS pixels at which a figure ``width`` pixels wide whose
    smallest text is ``text_px`` of its pixels shows that text :data:`MIN_TEXT_PX`
    high, at most ``width``; None for a figure with no text or not measured."""
    if text_px is None or math.isinf(text_px):
        return None
    if not (text_px > 0 and width > 0):
        raise ValueError(f"text_px and width must be positive: {text_px}, {width}")
    return min(width, math.ceil(width * MIN_TEXT_PX / text_px))


def hold(tag: str, png: bytes) -> str:
    """The ``<img>`` tag of the image ``png`` held at its :func:`legible_width` (in
    its style), in a box that scrolls sideways when that is wider than a phone's
    column; unchanged when the image records no text size or is held already."""
    from attnlib.viz import smallest_text

    text = None if VAR in tag else smallest_text(png)
    if text is None:  # held already, or not measured
        return tag
    width = legible_width(png_size(png)[0], text)
    if width is None:
        return tag
    if ' style="' in tag:
        tag = tag.replace(' style="', f' style="{VAR}: {width}px; ', 1)
    else:
        tag = tag.replace("<img ", f'<img style="{VAR}: {width}px" ', 1)
    if width <= PHONE_COLUMN:
        return tag
    return (
        '<div class="attnlib-legible" tabindex="0" role="group" '
        'aria-label="Wide figure: scroll sideways to see all of it">'
        f"{tag}</div>"
    )


def legible_html(body: str, read: Any) -> str:
    """The HTML of a page with each measured figure's image held at its
    :func:`legible_width`; ``read(name)`` gives the bytes of the image named
    ``name`` in ``_images/`` (None if it is not known)."""

    def held(match: re.Match) -> str:
        png = read(match.group(2))
        return match.group(0) if png is None else hold(match.group(0), png)

    return IMG.sub(held, body)


def legible_figures(
    app: Any, pagename: str, templatename: str, context: dict, doctree: Any
) -> None:
    """``html-page-context``: the figures of the page keep their text legible on a
    phone (:func:`legible_html`)."""
    if app.builder.format != "html" or "body" not in context:
        return
    images = getattr(app.builder, "images", {})
    sources = {name: Path(app.srcdir) / src for src, name in images.items()}

    def read(name: str) -> bytes | None:
        for path in (sources.get(name), Path(app.outdir) / "_images" / name):
            if path is not None and path.is_file():
                return path.read_bytes()
        return None

    context["body"] = legible_html(context["body"], read)
