"""The chapters' figures as a reader sees them, on a desktop and on a phone.

Called by :mod:`tools.browser_check` for every page at each of its widths, with the
measures that :data:`FIGURES` takes in Chromium (every folded part of the page
opened first). A figure is an image of the article drawn by a chapter's code (a
file under ``_images/``: a figure, the frame of an explorer or of a player). It
fails the page when

* at a phone's width (under 500 px), the reader must scroll sideways to see it: the
  image reaches past the screen, or a box around it scrolls sideways;
* its smallest text shows under :data:`MIN_PX` CSS px: at a desktop's width for
  every figure, at a phone's width for the figures shown in their phone layout
  (a ``<picture>`` whose source for the phone's screen the browser chose,
  :mod:`bookext.legible`). The height is the one its PNG records
  (:func:`attnlib.viz._render.mark_text_size`) times the width the image has on screen
  over its width in pixels; a figure of the chapter that records none fails;
* at a desktop's width, its alternative text is empty, is its caption again, or
  is a machine dump (:func:`machine_dump`); a numbered figure's caption is empty
  or says only "Figure".
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

#: The smallest height in CSS px at which a figure's text reads.
MIN_PX = 8.0
#: Screens narrower than this are phones.
PHONE_WIDTH = 500

# every image of the article drawn by the chapter's code, folded content opened
# first: the file the browser chose (a <picture> picks one of its sources), its
# width on screen and in pixels, its alternative text, the caption of its figure,
# and whether the reader must scroll sideways to see all of it
FIGURES = """async () => {
  document.querySelectorAll("main details").forEach(d => { d.open = true; });
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  const main = document.querySelector("main") || document.body;
  return Array.from(document.querySelectorAll("main img")).filter(
    img => (img.currentSrc || img.src).includes("/_images/")
  ).map(img => {
    const near = img.closest("figure[id], [id]");
    const fig = img.closest("figure");
    const cap = fig ? fig.querySelector("figcaption") : null;
    const r = img.getBoundingClientRect();
    let sideways = r.right > window.innerWidth + 1 || r.left < -1;
    for (let e = img.parentElement; e && e !== main.parentElement;
         e = e.parentElement) {
      const o = getComputedStyle(e).overflowX;
      if ((o === "auto" || o === "scroll") && e.scrollWidth > e.clientWidth + 1) {
        sideways = true;
      }
    }
    return {url: img.currentSrc || img.src, shown: r.width,
            natural: img.naturalWidth, near: near ? near.id : "top",
            alt: img.getAttribute("alt"), figure: !!fig,
            caption: cap ? cap.innerText : null, sideways: sideways,
            phone: !!img.closest("picture.attnlib-screens")
                   && (img.currentSrc || "").includes("/_images/phone/")};
  });
}"""

# what a description generated from a figure's objects says, and a reader's
# alternative text does not: counts of drawn objects, panels without a title,
# lists of axis labels and of legend entries, the player's generated text
_DUMP = [
    (re.compile(r"\buntitled panel\b", re.I), '"untitled panel"'),
    (
        re.compile(r"^\d+ panels\b|\b\d+ panels\.", re.I),
        'a count of panels ("N panels")',
    ),
    (
        re.compile(r"\b\d+ (?:curves?|points?|images?|lines?|frames?)\b[;,)]", re.I),
        'a count of drawn objects ("N curves")',
    ),
    (
        re.compile(r"\(x: [^;()]*; y: ", re.I),
        'a list of axis labels ("(x: ...; y: ...")',
    ),
    (re.compile(r"\blegend: ", re.I), 'a list of legend entries ("legend: ...")'),
    (re.compile(r"\bits figure: ", re.I), "the player's generated description"),
    (re.compile(r"^An empty figure\.?$", re.I), '"An empty figure"'),
]
# a caption that names nothing: "Figure", or the figure's number alone
_EMPTY_CAPTION = re.compile(
    r"^\s*(?:fig(?:ure|\.)?\s*[\d.]*\s*:?\s*)?(?:figure)?\s*$", re.I
)
_NUMBER = re.compile(r"^\s*fig(?:ure|\.)\s*[\d.]+\s*:?\s*", re.I)


def machine_dump(alt: str) -> str | None:
    """What makes ``alt`` a description generated from a figure's objects rather
    than a text written for a reader (None: nothing).

    Examples
    --------
    >>> machine_dump("2 panels. 1: untitled panel (x: t; y: r; 47 curves).")
    '"untitled panel"'
    >>> machine_dump("Energy against time, 3 curves; one per beta.")
    'a count of drawn objects ("N curves")'
    >>> machine_dump("The energy rises and stays at its maximum.")
    """
    if not isinstance(alt, str):
        raise TypeError(f"alt must be a str, got {type(alt).__name__}")
    for rule, what in _DUMP:
        if rule.search(alt.strip()):
            return what
    return None


def _plain(text: str | None) -> str:
    return " ".join((text or "").split()).strip().rstrip(".").casefold()


def caption_failures(alt: str | None, caption: str | None, figure: bool) -> list[str]:
    """The failures of a figure's alternative text and caption (``caption`` None:
    not in a numbered figure; ``figure``: inside a ``<figure>``)."""
    out = []
    if not (alt or "").strip():
        out.append("has no alternative text")
    else:
        dump = machine_dump(alt)
        if dump:
            out.append(
                f"has an alternative text that is a machine dump ({dump}): {alt[:90]!r}"
            )
    if figure:
        words = _NUMBER.sub("", caption or "")
        if _EMPTY_CAPTION.match(caption or "") or not words.strip():
            out.append(f"has a caption that says nothing: {(caption or '').strip()!r}")
        elif (alt or "").strip() and _plain(words) == _plain(alt):
            out.append("has an alternative text that is its caption again")
    return out


def figure_failures(
    measures: list[dict], width: int, figures: set[str] = frozenset(), read: Any = None
) -> tuple[list[str], dict[str, Any]]:
    """Failures of the figures of a page measured at ``width`` px (:data:`FIGURES`)
    and a summary: ``count``, ``sideways`` (figures to scroll), ``smallest`` (the
    smallest text measured, CSS px; ``inf`` if none), ``phone`` (figures in their
    phone layout).

    Parameters
    ----------
    measures : list of dict
        One per image, as :data:`FIGURES` returns them.
    width : int
        Width of the screen in CSS px.
    figures : set of str
        File names of the images drawn by the chapter's code: each must record the
        size of its smallest text.
    read : callable, optional
        ``read(path) -> bytes`` (default: the file's bytes).
    """
    from attnlib.viz._render import smallest_text

    if not isinstance(width, int) or width <= 0:
        raise ValueError(f"width must be a positive int, got {width!r}")
    read = read or (lambda path: path.read_bytes())
    phone = width < PHONE_WIDTH
    failures: list[str] = []
    summary: dict[str, Any] = {
        "count": 0,
        "sideways": 0,
        "smallest": math.inf,
        "phone": 0,
    }
    for m in measures:
        url = urlparse(m["url"])
        path = Path(unquote(url.path))
        if url.scheme != "file" or path.suffix != ".png" or "_images" not in path.parts:
            continue
        summary["count"] += 1
        where = f"the figure near #{m['near']} ({path.name[:12]}...)"
        if phone and m.get("sideways"):
            summary["sideways"] += 1
            failures.append(f"{where} must be scrolled sideways")
        if m.get("phone"):
            summary["phone"] += 1
        if not phone and m.get("figure"):
            failures += [
                f"{where} {f}"
                for f in caption_failures(m.get("alt"), m.get("caption"), True)
            ]
        elif not phone:  # an explorer's or a player's frame: no caption of its own
            failures += [
                f"{where} {f}" for f in caption_failures(m.get("alt"), None, False)
            ]
        if phone and not m.get("phone"):
            continue  # shown shrunk: its text is held to its phone layout only
        try:
            text = smallest_text(read(path))
        except (OSError, ValueError) as exc:
            failures.append(f"{where}: {exc}")
            continue
        if text is None:
            if path.name in figures:
                failures.append(f"{where} does not record the size of its text")
            continue
        if math.isinf(text):
            continue
        if not m["natural"] or not m["shown"]:
            failures.append(f"{where} is not shown: its text is not measured")
            continue
        px = text * m["shown"] / m["natural"]
        summary["smallest"] = min(summary["smallest"], px)
        if px < MIN_PX - 0.05:
            failures.append(
                f"{where}: its smallest text is {px:.1f} px high on screen (at least "
                f"{MIN_PX:g} px to read; {text:.1f} px in its {m['natural']} px "
                f"image, shown {m['shown']:.0f} px wide)"
            )
    return failures, summary


def check_page(
    page: Any, name: str, width: int, figures: set[str] = frozenset()
) -> list[str]:
    """Measure the figures of the open page ``name`` (:data:`FIGURES`) and give
    their failures (:func:`figure_failures`); prints the page's summary."""
    failures, s = figure_failures(page.evaluate(FIGURES), width, set(figures))
    if s["count"]:
        small = s["smallest"]
        smallest = "" if math.isinf(small) else f", smallest text {small:.1f} px"
        print(
            f"{name}: {s['count']} figures, {s['phone']} in their phone layout, "
            f"{s['sideways']} scrolled sideways{smallest}"
        )
    return failures
