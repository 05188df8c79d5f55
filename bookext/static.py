"""Pages that need no kernel: explorers, progress bars and no widget scripts.

The chapters' widgets display, while the book is built, as static explorers
(:mod:`attnlib.widgets._static`, switched on by ``ATTNLIB_STATIC=1``, which
:func:`setup_environment` sets for the kernels that execute the chapters). What is
left of ipywidgets in the executed notebooks is the progress bars of ``tqdm.auto``;
this module renders them from their saved final state, so the pages need neither
the widget manager nor require.js (several MB of scripts that also asked for fonts
that do not exist offline).

* :class:`StaticProgressBars` (a post-transform that runs before myst-nb picks a
  mime type): a widget view whose model is a tqdm bar becomes an HTML ``<progress>``
  with its description and count (HTML) or one line of text (LaTeX), from the final
  value of the bar, never the ``0%`` text of its first display.
* :func:`externalise_frames` (``html-page-context``): the frames of a static
  explorer, inline ``data:`` URIs in the notebook's output, become image files under
  ``_images/explorer/`` that a reader's browser fetches only when a control asks for
  them, and the saved widget state (read above) is not embedded in the page. The
  frames of a player (:func:`attnlib.viz._render.player_html`) become files under
  ``_images/player/`` too (its script loads them all at once, as it did from its
  ``data:`` URIs, which weighed a third more). The image of either is held at its
  legible width (:func:`bookext.legible.hold`), as the page check measures it.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import os
import re
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.transforms import SphinxTransform
from sphinx.transforms.post_transforms import SphinxPostTransform

from .latex import FRAME, frame_png
from .legible import hold

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
MODEL_ID = re.compile(r'model_id\\?"\s*:\s*\\?"([0-9a-f]{16,})')
EXPLORER = re.compile(
    r'(<div class="attnlib-explorer" id="[^"]+">)(.*?)(<script>\(function)', re.S
)
DATA_URI = re.compile(r"data:image/png;base64,([A-Za-z0-9+/=]+)")
# the image of an explorer, with the frame of the controls' first values
FRAME_IMG = re.compile(r'<img class="attnlib-explorer-frame" src="data:[^"]*"[^>]*>')
# a to_jshtml player: its image (no src: its script sets it), then up to the
# script's call that gives it its frames (``FRAME``, one by one before the call)
PLAYER = re.compile(r'(<img id="_anim_img\w+"[^>]*>)(.*?)(new Animation\(frames)', re.S)


IPYTHONDIR = Path(__file__).resolve().parent / "ipython"


def setup_environment() -> None:
    """Kernels started by this build display widgets as static explorers and
    describe their figures in text (the start-up file under ``bookext/ipython``)."""
    os.environ["ATTNLIB_STATIC"] = "1"
    os.environ["IPYTHONDIR"] = str(IPYTHONDIR)


def widget_state(env: Any, docname: str) -> dict:
    """The saved ipywidgets state of a notebook page (model id -> model)."""
    js = getattr(env, "nb_metadata", {}).get(docname, {}).get("js_files", {})
    entry = js.get("ipywidgets_state")
    if not entry:
        return {}
    body = entry[1].get("body", "{}")
    return json.loads(body).get("state", {})


def progress_bar(state: dict, model_id: str) -> dict | None:
    """Description, count and total of a tqdm bar, or None for another widget.

    ``tqdm.notebook`` draws a bar as an ``HBox`` of an ``HTML`` (description and
    percentage), a ``FloatProgress`` (value and max) and an ``HTML`` (count, rate).
    The labels are refreshed at most every ``mininterval``, the value at every
    refresh and when the bar closes: the count is taken from the value.
    """
    box = state.get(model_id)
    if not box or box.get("model_name") != "HBoxModel":
        return None
    kids = [
        state.get(str(c).removeprefix("IPY_MODEL_"), {})
        for c in box["state"].get("children", [])
    ]
    names = [k.get("model_name") for k in kids]
    if names != ["HTMLModel", "FloatProgressModel", "HTMLModel"]:
        return None
    left = html.unescape(kids[0]["state"].get("value", ""))
    desc = re.sub(r"\s*\d+%\s*$", "", left.replace("\u2007", " ")).rstrip(": ")
    bar = kids[1]["state"]
    value, total = float(bar.get("value", 0)), float(bar.get("max", 0))
    style = bar.get("bar_style", "")
    return {"desc": desc, "n": value, "total": total, "failed": style == "danger"}


def _count(x: float) -> str:
    return f"{x:.0f}" if float(x).is_integer() else f"{x:g}"


def progress_html(bar: dict) -> str:
    n, total = _count(bar["n"]), _count(bar["total"])
    label = html.escape(bar["desc"] or "progress")
    state = "stopped" if bar["failed"] else "done"
    return (
        '<div class="attnlib-progress output">'
        f'<span class="attnlib-progress-label">{label}</span> '
        f'<progress value="{bar["n"]:g}" max="{bar["total"]:g}" '
        f'aria-label="{label}">{n}/{total}</progress> '
        f"<span>{n}/{total} ({state})</span></div>"
    )


def progress_text(bar: dict) -> str:
    state = "stopped" if bar["failed"] else "done"
    count = f"{_count(bar['n'])}/{_count(bar['total'])}"
    return f"{bar['desc'] or 'progress'}: {count} ({state})"


class StaticProgressBars(SphinxPostTransform):
    """Progress bars from their final state, before a mime type is chosen."""

    default_priority = 3  # myst-nb's SelectMimeType runs at 4

    def run(self, **kwargs: Any) -> None:
        # the LaTeX builder runs this on one document assembled from every page:
        # the saved states of all pages (model ids are unique)
        state: dict = {}
        for docname in getattr(self.env, "nb_metadata", {}):
            state.update(widget_state(self.env, docname))
        if not state:
            return
        html_out = self.app.builder.format == "html"
        for bundle in list(self.document.findall(nodes.container)):
            if bundle.get("nb_element") != "mime_bundle":
                continue
            kinds = [c.get("mime_type") for c in bundle.children]
            if WIDGET_VIEW not in kinds:
                continue
            m = MODEL_ID.search(bundle.children[kinds.index(WIDGET_VIEW)].astext())
            bar = progress_bar(state, m.group(1)) if m else None
            if bar is None:
                continue
            if html_out:
                new: nodes.Node = nodes.raw("", progress_html(bar), format="html")
            else:
                new = nodes.literal_block(progress_text(bar), progress_text(bar))
                new["classes"] += ["output", "text_plain"]
            bundle.replace_self(new)


def frame_name(png: bytes) -> str:
    """The file name of a frame of an explorer or a player, from its bytes."""
    return hashlib.sha256(png).hexdigest()[:20] + ".png"


def _frame_file(outdir: Path, png: bytes, folder: str) -> str:
    name = frame_name(png)
    path = outdir / "_images" / folder / name
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(png)
    return f"_images/{folder}/{name}"


def externalise_frames(
    app: Any, pagename: str, templatename: str, context: dict, doctree: Any
) -> None:
    """``html-page-context``: the frames of explorers and players become files, and
    their images are held at their legible width; no widget state script, and no
    script twice (sphinx-thebe's settings are added twice by Jupyter Book,
    which is a JavaScript error: a ``const`` declared again)."""
    scripts = context.get("script_files")
    if isinstance(scripts, list):
        seen, kept = set(), []
        for s in scripts:
            attrs = getattr(s, "attributes", {})
            key = (getattr(s, "filename", None) or "", attrs.get("body"))
            if attrs.get("type") == WIDGET_STATE or key in seen:
                continue
            seen.add(key)
            kept.append(s)
        scripts[:] = kept
    body = context.get("body")
    if body and 'role="list" class="citation-list"' in body:
        # the bibliography's entries are not list items (role doc-biblioentry): the
        # list role makes it an invalid list for assistive technology
        body = context["body"] = body.replace(
            'role="list" class="citation-list"', 'class="citation-list"'
        )
    if not body or ("attnlib-explorer" not in body and "_anim_img" not in body):
        return
    outdir = Path(app.builder.outdir)
    pathto = context["pathto"]

    def move(match: re.Match) -> str:
        inner = match.group(2)
        frame = FRAME_IMG.search(inner)
        if frame is not None:  # the frame shown first, kept legible on a phone
            png = base64.b64decode(DATA_URI.search(frame.group(0)).group(1))
            inner = inner.replace(frame.group(0), hold(frame.group(0), png), 1)
        inner = DATA_URI.sub(
            lambda d: pathto(
                _frame_file(outdir, base64.b64decode(d.group(1)), "explorer"), 1
            ),
            inner,
        )
        return match.group(1) + inner + match.group(3)

    def move_player(match: re.Match) -> str:
        frames: list[bytes] = []

        def file(frame: re.Match) -> str:
            png = frame_png(frame.group(2))
            frames.append(png)
            uri = pathto(_frame_file(outdir, png, "player"), 1)
            return f'frames[{frame.group(1)}] = "{uri}"'

        inner = FRAME.sub(file, match.group(2))
        return _hold_player(match.group(1), frames) + inner + match.group(3)

    context["body"] = PLAYER.sub(move_player, EXPLORER.sub(move, body))


def _hold_player(tag: str, frames: list[bytes]) -> str:
    """The image of a player held at the legible width of the frame whose text is
    the smallest (all its frames have one size, so that every one reads)."""
    from attnlib.viz._render import smallest_text

    sizes = [(smallest_text(png), png) for png in frames]
    marked = [(text, png) for text, png in sizes if text is not None]
    if not marked:  # not drawn by attnlib.viz._render.player_html: not measured
        return tag
    return hold(tag, min(marked, key=lambda m: m[0])[1])


FIGURE_TEXT = "Figure: "


def caption_of(alt: str) -> str:
    """The caption of a figure from its description
    (:func:`attnlib.viz._describe.describe`): the figure's title, else its panels'
    titles, without what the axes show."""
    text, before = alt, None
    while text != before:  # innermost parentheses first: "(y: I_k(β); ...)"
        before, text = text, re.sub(r"\s*\([^()]*\)", "", text)
    text = text.strip().rstrip(".")
    parts = [p.strip() for p in text.split(". ") if p.strip()]
    untitled = re.compile(r"^(?:\d+: )?untitled panel$|^\d+ panels$|^An empty figure$")
    if parts and not untitled.match(parts[0]):
        return parts[0]
    titles = [re.sub(r"^\d+: ", "", p) for p in parts[1:] if not untitled.match(p)]
    return "; ".join(titles) or "Figure"


def figure_texts(text: str) -> tuple[str, str]:
    """Caption and alternative text of a figure from its text form
    (:func:`attnlib.viz._screens.figure_text`): those the chapter wrote
    (``Figure: <caption>`` then ``Alt: <alternative text>``), else the caption
    taken from the description (:func:`caption_of`) and the description."""
    from attnlib.viz._screens import ALT_TEXT

    body = text.strip().removeprefix(FIGURE_TEXT)
    first, _, rest = body.partition("\n")
    if rest.startswith(ALT_TEXT):
        return first.strip(), rest[len(ALT_TEXT) :].strip()
    return caption_of(body), body


class FigureCaptions(SphinxTransform):
    """Every figure of a chapter gets an alternative text, a caption and a number.

    The kernels that execute the chapters give a matplotlib figure's caption and
    alternative text in its text form (:func:`figure_texts`, from the IPython
    start-up file that :func:`setup_environment` points to): those the chapter
    wrote with :func:`attnlib.viz.caption`, else a description of its panels. An
    image output with such a text becomes a numbered figure with that caption and
    alternative text; an output that a cell already puts in a figure (``mystnb:
    figure:`` metadata) keeps its caption and gets the alternative text. Outputs
    that the HTML shows as something else (a static explorer, a player) are left
    alone, so that the numbers of the HTML and of the PDF agree.
    """

    default_priority = 400

    def apply(self, **kwargs: Any) -> None:
        count = 0
        for bundle in list(self.document.findall(nodes.container)):
            if bundle.get("nb_element") != "mime_bundle":
                continue
            kinds = [c.get("mime_type") for c in bundle.children]
            if "image/png" not in kinds or "text/plain" not in kinds:
                continue
            text = bundle.children[kinds.index("text/plain")].astext().strip()
            if not text.startswith(FIGURE_TEXT):
                continue
            title, alt = figure_texts(text)
            holder = bundle.children[kinds.index("image/png")]
            images = list(holder.findall(nodes.image))
            if not images:
                continue
            for image in images:
                image["alt"] = alt
            if "text/html" in kinds or any(
                isinstance(p, nodes.figure) for p in _parents(bundle)
            ):
                continue
            count += 1
            docname = self.env.docname.replace("/", "-")
            figure = nodes.figure(ids=[f"{docname}-figure-{count}"])
            figure += images[0].deepcopy()
            figure += nodes.caption(title, title)
            holder.children = [figure]


def _parents(node: nodes.Node):
    while node.parent is not None:
        node = node.parent
        yield node
