"""Figures legible on both screens, and none that a phone must scroll sideways.

A figure's image shrinks to the width of the column, and its text with it: the
figure of the attention variants, 1164 px wide, drawn in a 390 px phone's column
of 342 px, showed its tick labels 2.9 px high. The book's kernels draw each
figure for a desktop's column, where its smallest text shows at least 8 px high,
and, when its panels sit in a row or its text would be smaller than that on a
phone, once more for a phone's column: its panels stacked in one column, at the
width where its text reads there (:func:`attnlib.viz._screens.screen_pngs`). The
phone's PNG travels inside the desktop's (:func:`attnlib.viz._screens.attach_phone`);
:func:`legible_figures` (``html-page-context``) writes it to a file of its own
under ``_images/phone/`` and shows the figure as a ``<picture>`` whose source for
screens up to :data:`PHONE_MEDIA` is the phone's image: the browser picks one,
with no script, and fetches only that one. :func:`strip_phone_images`
(``build-finished``) takes the phone's PNG out of the desktop's files, so that a
desktop page does not download it. The PDF takes the desktop's image.

Each PNG records the height, in its pixels, of its smallest text
(:func:`attnlib.viz._render.mark_text_size`); the images of explorers and players
get, in their style, the width at which that text is :data:`MIN_TEXT_PX` CSS px high
(:func:`hold`), which they keep on a wide screen; on a phone they shrink to the
column like any image (no image scrolls sideways). The page check measures the
result in Chromium at 390 and 1366 px (:mod:`tools.figure_check`).
"""

from __future__ import annotations

import hashlib
import html
import math
import re
import struct
from pathlib import Path
from typing import Any

from attnlib.viz._render import MIN_TEXT_PX  # CSS pixels on the page

# the width of a figure's box in the book's column on the narrowest phone screen
# (320 px; 342 px on a 390 px screen)
PHONE_COLUMN = 272
# the screens that show a figure's phone layout (bookext/_static/attnlib-book.css
# switches to its narrow layout at the same width)
PHONE_MEDIA = "(max-width: 720px)"
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
    """The ``<img>`` tag of the image ``png`` with its :func:`legible_width` in its
    style; unchanged when the image records no text size or has it already."""
    from attnlib.viz._render import smallest_text

    text = None if VAR in tag else smallest_text(png)
    if text is None:  # held already, or not measured
        return tag
    width = legible_width(png_size(png)[0], text)
    if width is None:
        return tag
    if ' style="' in tag:
        return tag.replace(' style="', f' style="{VAR}: {width}px; ', 1)
    return tag.replace("<img ", f'<img style="{VAR}: {width}px" ', 1)


def picture(tag: str, phone_uri: str) -> str:
    """The ``<img>`` tag in a ``<picture>`` whose source on a phone's screen
    (:data:`PHONE_MEDIA`) is the image at ``phone_uri``."""
    return (
        f'<picture class="attnlib-screens"><source media="{PHONE_MEDIA}" '
        f'srcset="{html.escape(phone_uri, quote=True)}">{tag}</picture>'
    )


def legible_html(body: str, read: Any, phone: Any = None) -> str:
    """The HTML of a page with each figure that carries a phone's layout shown
    through :func:`picture` and every other measured image :func:`hold`;
    ``read(name)`` gives the bytes of the image named ``name`` in ``_images/``
    (None if it is not known), ``phone(name, png)`` writes the phone's PNG
    ``png`` of that image and gives its address relative to the page (without
    it, figures keep their one image)."""
    from attnlib.viz._screens import phone_image

    def held(match: re.Match) -> str:
        if body.startswith("<source ", body.rfind("<", 0, match.start())):
            return match.group(0)  # in a picture already
        png = read(match.group(2))
        if png is None:
            return match.group(0)
        small = phone_image(png) if phone is not None else None
        if small is not None:
            return picture(match.group(0), phone(match.group(2), small))
        return hold(match.group(0), png)

    return IMG.sub(held, body)


def phone_name(name: str, png: bytes) -> str:
    """The file name of the phone's image of the figure ``name``."""
    return hashlib.sha256(png).hexdigest()[:20] + "-" + name


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

    def phone(name: str, png: bytes) -> str:
        path = Path(app.outdir) / "_images" / "phone" / phone_name(name, png)
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(png)
        return context["pathto"](f"_images/phone/{path.name}", 1)

    context["body"] = legible_html(context["body"], read, phone)


def strip_phone_images(app: Any, exception: Exception | None) -> None:
    """``build-finished``: the figures' files in ``_images/`` without the phone's
    PNG they carried (written beside them by :func:`legible_figures`)."""
    from attnlib.viz._screens import without_phone

    if exception is not None or app.builder.format != "html":
        return
    for path in sorted((Path(app.outdir) / "_images").glob("*.png")):
        png = path.read_bytes()
        bare = without_phone(png)
        if bare is not png:
            path.write_bytes(bare)
