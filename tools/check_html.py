"""Check the built HTML book: self-contained pages that show their formulas and figures.

Run after ``make book``: ``python -m tools.check_html [_build/html] [--screenshots
DIR] [--same-as OTHER]`` (``make check-pages``: both editions, screenshots of every
chapter at both widths in ``_build/screenshots``). The outputs
of the chapters are read from the execution cache next to the HTML directory
(``_build/.jupyter_cache``), as the build rendered them.

1. No page loads a script or stylesheet from another host (the book works offline).
2. Every chapter shows its figures. A matplotlib figure displayed by a kernel that
   has no image formatter (the ``Agg`` backend inherited through ``MPLBACKEND``)
   degrades to the text ``<Figure size 640x480 with 1 Axes>`` and a figure made with
   ``pyplot`` is then not shown at all, so three counts are compared per chapter:

   * every code cell whose source makes or shows a figure (``plt.subplots``,
     ``plt.figure``, ``plt.show()``, a ``plot_*`` or ``*_figure`` helper of
     :mod:`attnlib.viz`, ``display(fig)`` or a bare ``fig`` as the cell's value) has
     at least one ``image/png`` output in the executed notebook, so the chapter has
     at least as many images as figure cells (cells tagged ``remove-output`` or
     ``remove-cell`` are exempt);
   * no output is a figure's text form without its image;
   * the page has an ``<img>`` of ``_images/`` for every image output of a shown cell,
     and no image is shown twice (a figure left open in ``pyplot`` by a widget is
     shown again by the next ``plt.show()``).
   A book built with ``MPLBACKEND=Agg`` fails every figure cell (no image at all);
   a correct build has exactly one image per figure cell in these chapters.
3. Every saved widget view whose snapshot contains an output area holds an image
   there (the figure for the default values), and no output, in a cell or in a
   snapshot, writes to stderr or holds an error (the build's ``stderr_output``
   setting sees the cells only, not the output areas of widgets).
4. Every chapter page and every page of the Coursework part, opened in headless
   Chromium with no network with its scripts DISABLED, holds its mathematics
   typeset (KaTeX's output in every ``math`` element, typeset when the book was
   built by :mod:`bookext.katex`; no KaTeX error) and no raw TeX in its text
   (:func:`prose_failures`); opened with its scripts (the desktop view of item 7),
   it renders the snapshots of its saved widgets with their images (at least as
   many ``<img>`` in the rendered page as in its HTML plus its snapshots), and
   shows no traceback.
5. No page of the edition, whatever its part, shows a rubric of the assignments or a
   model answer of their written questions (:func:`leak_failures`): those are for
   instructors only (``_build/assignments/<slug>/rubric.md``).
6. Every chapter page links its notebooks (``bookext.notebooks``): the reader's
   shows an image for every figure cell, the student's holds no solution.
7. In Chromium through playwright at 1366 px and 390 px (:mod:`tools.browser_check`):
   no JavaScript error or missing file, no critical or serious axe-core violation in
   the light or the dark mode of the theme (on every page of the edition), every control
   of every static explorer changes its figure; at 390 px the sidebar toggle opens the
   table of contents, wide equations scroll in their box with the number clear of the
   formula, nothing is wider than the screen; the figures drawn by a chapter's code,
   players' frames included (:func:`figure_images`), pass :mod:`tools.figure_check`
   at both widths (none scrolls sideways at 390 px, text of 8 px at least, captions
   and alternative texts written for a reader). The weight of each page is printed,
   and the script weight of each chapter page (its ``<script src>`` files and inline
   scripts, :func:`script_failures`) must stay within :data:`SCRIPT_BUDGET` (1.55 MB).
   No text of a page outside code and scripts holds a TeX command, ``\\(``,
   ``\\[`` or a pair of dollars (maths that Markdown cut, or that was not typeset),
   neither with scripts disabled (item 4; the other pages are read the same way,
   parsed without a browser) nor once they have run (:func:`prose_failures`).
8. Every page of the edition: every image has an alternative text that describes
   it, not a path, a hash or nothing (:func:`image_alt_failures`); no sentence says
   that widgets are static or show only their initial state, and no sentence sends
   the reader to solutions in an edition that has none (:func:`stale_failures`).

With ``--same-as OTHER`` (the student edition, ``OTHER`` the reader's, whose check
must pass too), a page whose article is that of the same page of ``OTHER`` (the
introduction, the references, the assignment pages, the Library reference...) is
not opened in the browser again: its text was read there, and this edition's
template is read on its chapters (:func:`same_article`). On a chapter, whose
solutions are taken out, axe-core leaves out its colour rules when every element of
the article is of a kind (tag, classes, inline style) that the reader page holds,
with the same stylesheets: their colours were measured there
(:func:`colours_checked_there`); any other element runs them here. Its static
explorers are not driven again when each is one of the reader page's byte for byte,
with the same frames and scripts as files (:func:`explorers_checked_there`): the
reader check moved those controls over those frames; a missing or different frame
drives them here.

Points 2 and 3 on a notebook are :func:`notebook_failures`, also used by the test
that executes the chapters.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import re
import sys
import tokenize
from pathlib import Path
from typing import Any

EXTERNAL = re.compile(
    r'<(?:script|link)\b[^>]*(?:src|href)="(?:https?:)?//[^"]+"[^>]*>'
)
# a figure's text form: matplotlib's, or the description the book's kernels give
# (bookext/ipython): either without the image means the figure was not drawn
FIGURE_TEXT = re.compile(r"<Figure size [\d.]+x[\d.]+ with \d+ Axes>|^Figure: ")
MAKES_FIGURE = re.compile(
    r"\bplt\.(?:show|subplots|figure|subplot_mosaic)\("
    r"|\b(?:plot_\w+|\w+_figure)\("
    r"|\bdisplay\([\w.]*\bfig\)"
    r"|^[\w.]*\bfig\s*$",
    re.MULTILINE,
)
HIDDEN = {"remove-output", "remove-cell"}
VIEW_MIME = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = re.compile(
    r'<script type="application/vnd\.jupyter\.widget-state\+json">(.*?)</script>', re.S
)
WIDGET_VIEW = re.compile(
    r'<script type="application/vnd\.jupyter\.widget-view\+json">(.*?)</script>', re.S
)
PAGE_IMAGE = re.compile(r'<img\b[^>]*\bsrc="[^"]*_images/[^"]+"')


def _text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _code(source: str) -> str:
    """The source without its comments (unchanged if it does not tokenize)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return source
    lines = source.splitlines(keepends=True)
    for tok in reversed(tokens):
        if tok.type == tokenize.COMMENT:
            (row, start), (_, end) = tok.start, tok.end
            lines[row - 1] = lines[row - 1][:start] + lines[row - 1][end:]
    return "".join(lines)


def output_failures(output: dict, where: str) -> list[str]:
    """Failures of one output: stderr, an error, a figure's text without its image."""
    kind = output.get("output_type")
    if kind == "stream" and output.get("name") == "stderr":
        return [f"{where} writes to stderr: {_text(output.get('text'))[:100]!r}"]
    if kind == "error":
        return [f"{where} holds an error: {output.get('ename')}"]
    data = output.get("data", {})
    text = _text(data.get("text/plain", ""))
    if FIGURE_TEXT.search(text) and "image/png" not in data:
        return [f"{where} shows a figure as text only: {text!r}"]
    return []


def widget_failures(state: dict, view_ids: list[str], name: str) -> list[str]:
    """Failures of the saved widget snapshots of one page.

    Parameters
    ----------
    state : dict
        Model id to saved model (``{"model_name": ..., "state": ...}``).
    view_ids : list of str
        Model ids of the views shown on the page.
    name : str
        Page name for the messages.
    """
    failures = []
    for mid, model in state.items():
        if model.get("model_name") == "OutputModel":
            for out in model.get("state", {}).get("outputs", []):
                failures += output_failures(out, f"{name}: widget output {mid[:8]}")
    for vid in view_ids:
        seen, todo, areas = set(), [vid], []
        while todo:
            mid = todo.pop()
            if mid in seen or mid not in state:
                continue
            seen.add(mid)
            model = state[mid]
            if model.get("model_name") == "OutputModel":
                areas.append(model["state"].get("outputs", []))
            for child in model.get("state", {}).get("children", []):
                todo.append(str(child).removeprefix("IPY_MODEL_"))
        if areas and not any(
            "image/png" in out.get("data", {}) for outs in areas for out in outs
        ):
            failures.append(f"{name}: the snapshot of widget {vid[:8]} has no image")
    return failures


def widget_images(state: dict) -> int:
    """Number of images in the output areas of a saved widget state."""
    return sum(
        "image/png" in out.get("data", {})
        for model in state.values()
        if model.get("model_name") == "OutputModel"
        for out in model.get("state", {}).get("outputs", [])
    )


def notebook_failures(nb: dict, name: str) -> tuple[list[str], int]:
    """Figure and stderr failures of an executed notebook.

    Parameters
    ----------
    nb : dict
        The executed notebook (nbformat 4, as JSON).
    name : str
        Chapter name for the messages.

    Returns
    -------
    failures : list of str
    n_images : int
        Number of ``image/png`` outputs of the cells that the page shows.
    """
    failures, n_images, digests = [], 0, {}
    lines = nb.get("metadata", {}).get("source_map", [])
    for i, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") != "code":
            continue
        first = _text(cell.get("source", "")).strip().split("\n")[0][:40]
        where = f"{name}: cell {i + 1}"
        if i < len(lines):
            where += f" (line {lines[i]})"
        where += f" {first!r}"
        outputs = cell.get("outputs", [])
        for out in outputs:
            failures += output_failures(out, where)
        if HIDDEN & set(cell.get("metadata", {}).get("tags", [])):
            continue
        images = [
            _text(o["data"]["image/png"])
            for o in outputs
            if "image/png" in o.get("data", {})
        ]
        n_images += len(images)
        if MAKES_FIGURE.search(_code(_text(cell.get("source", "")))) and not images:
            failures.append(f"{where} makes a figure but shows no image")
        for png in images:
            digest = hashlib.sha256(png.encode()).hexdigest()
            if digest in digests:
                failures.append(
                    f"{where} shows again an image of cell {digests[digest]}"
                )
            digests.setdefault(digest, i + 1)
    state = (
        nb.get("metadata", {})
        .get("widgets", {})
        .get("application/vnd.jupyter.widget-state+json", {})
        .get("state", {})
    )
    views = [
        o["data"][VIEW_MIME]["model_id"]
        for c in nb.get("cells", [])
        for o in c.get("outputs", [])
        if VIEW_MIME in o.get("data", {})
    ]
    failures += widget_failures(state, views, name)
    return failures, n_images


def figure_images(nb: dict) -> set[str]:
    """File names of the images (``_images/<sha256>.png``, as myst-nb names them) of
    the figures an executed notebook draws: its ``image/png`` outputs whose text
    is a figure's (``Figure: ...``), and the frames of its players
    (:func:`attnlib.viz._render.player_html`, ``_images/player/<name>`` in the page,
    :func:`bookext.static.frame_name`), each of which records the size of its
    smallest text."""
    import base64

    from bookext.latex import FRAME, frame_png
    from bookext.static import frame_name

    names = set()
    for cell in nb.get("cells", []):
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            for _, b64 in FRAME.findall(_text(data.get("text/html", ""))):
                names.add(frame_name(frame_png(b64)))
            if "image/png" in data and FIGURE_TEXT.search(
                _text(data.get("text/plain", ""))
            ):
                png = base64.b64decode(_text(data["image/png"]))
                names.add(hashlib.sha256(png).hexdigest() + ".png")
    return names


def chapter_notebook_failures(html: Path, sources: Path) -> list[str]:
    """What is wrong with the notebooks of a built book (the page check calls it):
    each chapter page links its two notebooks, the reader's shows an image for every
    cell that makes a figure, the student's has no solution and no output."""
    import nbformat

    from bookext.notebooks import OUT

    failures = []
    for page in sorted((html / "book").glob("*.html")):
        source = sources / f"{page.stem}.md"
        if not source.exists() or "kernelspec" not in source.read_text()[:600]:
            continue
        text = page.read_text(encoding="utf-8")
        for name in (f"{page.stem}.ipynb", f"{page.stem}-student.ipynb"):
            if f"{OUT}/{name}" not in text:
                failures.append(f"{page.name}: no link to {name}")
            if not (html / OUT / name).exists():
                failures.append(f"{page.name}: {OUT}/{name} is missing")
        if failures:
            continue
        reader = nbformat.read(html / OUT / f"{page.stem}.ipynb", as_version=4)
        for cell in reader.cells:
            tags = set(cell.metadata.get("tags", []))
            if cell.cell_type != "code" or tags & {"remove-output", "remove-cell"}:
                continue
            if MAKES_FIGURE.search(_code(cell.source)) and not any(
                "image/png" in o.get("data", {}) for o in cell.get("outputs", [])
            ):
                first = cell.source.splitlines()[0][:40]
                failures.append(
                    f"{page.name}: the notebook has no figure for {first!r}"
                )
        student = nbformat.read(html / OUT / f"{page.stem}-student.ipynb", as_version=4)
        text = "\n".join(c.source for c in student.cells)
        if re.search(r"\{solution(-start|-end)?\}", text):
            failures.append(f"{page.name}: the student notebook has a solution")
        if any(c.get("outputs") for c in student.cells if c.cell_type == "code"):
            failures.append(f"{page.name}: the student notebook has outputs")
    return failures


def executed_notebook(source: Path, build: Path) -> dict | None:
    """The executed notebook of a chapter as the build rendered it, or None.

    The outputs come from the build's execution cache (``build/.jupyter_cache``),
    matched to the chapter's current source as myst-nb does; the copy in
    ``build/jupyter_execute`` is used only when there is no cache, since myst-nb
    writes it without outputs when it takes them from the cache.
    """
    import nbformat

    from bookext.notebooks import executed

    if (build / ".jupyter_cache").is_dir():
        try:
            return json.loads(nbformat.writes(executed(source, build, True)))
        except KeyError:
            return None
    copy = build / "jupyter_execute" / "book" / f"{source.stem}.ipynb"
    if not copy.exists():
        return None
    nb = json.loads(copy.read_text(encoding="utf-8"))
    lines = executed(source, None, True).metadata["source_map"]
    nb.setdefault("metadata", {})["source_map"] = lines
    return nb


def static_failures(
    page: Path, build: Path, sources: Path, figures: dict | None = None
) -> tuple[list[str], int]:
    """Checks of one page that need no browser; also the images its DOM must hold
    and, in ``figures[page]``, the file names of its figures
    (:func:`figure_images`)."""
    name, text = page.name, page.read_text(encoding="utf-8")
    failures = []
    for tag in EXTERNAL.findall(text):
        if 'rel="canonical"' not in tag:
            failures.append(f"{name}: loads from another host: {tag[:120]}")
    if "Traceback (most recent call last)" in text:
        failures.append(f"{name}: shows a traceback")
    source = sources / f"{page.stem}.md"
    if source.exists() and "kernelspec" in source.read_text(encoding="utf-8")[:600]:
        nb = executed_notebook(source, build)
        if nb is None:
            failures.append(f"{name}: no executed notebook of {source.name} in {build}")
        else:
            nb_fail, n_images = notebook_failures(nb, name)
            failures += nb_fail
            if figures is not None:
                figures[page] = figure_images(nb)
            n_page = len(PAGE_IMAGE.findall(text))
            if n_page < n_images:
                failures.append(
                    f"{name}: {n_page} images on the page for {n_images} image outputs"
                )
    state = {}
    for block in WIDGET_STATE.findall(text):
        state.update(json.loads(block).get("state", {}))
    views = [json.loads(v)["model_id"] for v in WIDGET_VIEW.findall(text)]
    failures += widget_failures(state, views, name)
    # the notebook's widget state is the page's: report each failure once
    return list(dict.fromkeys(failures)), text.count("<img") + widget_images(state)


# what a reader must never see in the text of a page (outside code and scripts): a
# TeX command or TeX's maths delimiters, or a pair of dollars around what should be
# a formula; the book's formulas are typeset when it is built (bookext/katex.py), so
# a page shows none of these even before (or without) any script
RAW_TEX = re.compile(r"\\[A-Za-z]+|\\[(\[]")
DOLLARS = re.compile(r"\$[^$\n]+\$")
# elements whose text is not prose: code (also the "pre" spans of signatures) and
# scripts; and the TeX source that KaTeX keeps in a typeset formula's MathML, an
# annotation that no browser shows (the rest of the formula is read: a formula left
# as TeX shows its source there)
NOT_PROSE = {
    "script",
    "style",
    "pre",
    "code",
    "kbd",
    "samp",
    "textarea",
    "svg",
    "template",
}
NOT_PROSE_CLASS = "pre"
# alternative texts that name a file instead of describing the image
ALT_PATH = re.compile(
    r"(?:^|/)[\w.-]+\.(?:png|jpe?g|gif|svg|webp)$|^[0-9a-f]{16,}$|^\.\.?/|_images/",
    re.I,
)
# sentences that describe the pages as they no longer are
STALE = [
    re.compile(p, re.I)
    for p in (
        r"\b(?:shows?|displays?)\s+(?:only\s+)?(?:its|their)\s+initial\s+state",
        r"\bonly\s+(?:its|their)\s+initial\s+state",
        r"\bfor\s+(?:the\s+)?readers\s+of\s+the\s+static\s+page",
        r"\bfor\s+the\s+static\s+page\b",
        r"\bwidgets?\s+(?:is|are)\s+(?:only\s+)?static\b",
        r"\bstatic\s+counterparts?\b",
    )
]
# a sentence that sends the reader to solutions (in an edition that has none)
SOLUTION_PROMISE = re.compile(
    r"\bsolutions?\b[^.]*\b(?:click to open|are folded|is folded|see the solution)"
    r"|\b(?:click to open|see the solution)\b[^.]*\bsolutions?\b",
    re.I,
)


@functools.lru_cache(maxsize=4)
def soup_of(text: str) -> Any:
    """``text`` parsed by Beautiful Soup (Python's HTML parser), for reading only:
    the last few pages parsed are kept, since each page is read by several checks
    (a chapter with its typeset formulas takes seconds to parse)."""
    from bs4 import BeautifulSoup

    return BeautifulSoup(text, "html.parser")


def _not_prose(el: Any) -> bool:
    if el.name in NOT_PROSE or NOT_PROSE_CLASS in (el.get("class") or ()):
        return True
    return el.name == "annotation" and el.get("encoding") == "application/x-tex"


class _Prose:
    """The text of a page outside code and scripts, with the nearest id, and its
    images; the page is parsed by Beautiful Soup (Python's HTML parser)."""

    def __init__(self, text: str):
        from bs4 import Comment, NavigableString

        self.chunks: list[tuple[str, str]] = []  # (nearest id, text)
        self.images: list[tuple[str, dict]] = []  # (nearest id, attributes)
        soup = soup_of(text)
        where = "top"
        # the document's elements and strings in order: the nearest id is the last
        # one opened before the text (as a reader scrolls to it)
        for node in soup.descendants:
            if isinstance(node, NavigableString):
                if isinstance(node, Comment) or type(node) is not NavigableString:
                    continue  # comments, CDATA, the doctype
                if node.strip() and not any(_not_prose(p) for p in node.parents):
                    self.chunks.append((where, str(node)))
                continue
            if node.get("id"):
                where = node["id"]
            if node.name == "img":
                attrs = {
                    k: " ".join(v) if isinstance(v, list) else v
                    for k, v in node.attrs.items()
                }
                self.images.append((where, attrs))


def prose_failures(text: str, name: str) -> list[str]:
    """Raw TeX (a command, ``\\(`` or ``\\[``) and literal ``$...$`` in the text of
    a page outside code and scripts: formulas typeset in the HTML show none."""
    failures = []
    for where, data in _Prose(text).chunks:
        for rule, what in ((RAW_TEX, "raw TeX"), (DOLLARS, "a literal $...$")):
            m = rule.search(data)
            if m:
                snippet = " ".join(data[max(0, m.start() - 30) : m.end() + 30].split())
                failures.append(
                    f"{name}: {what} in the text near #{where}: {snippet!r}"
                )
    return failures


def formula_counts(text: str) -> tuple[int, int, int]:
    """The formulas of a page (Sphinx's ``math`` elements), how many of them hold
    KaTeX's typeset output, and how many KaTeX marked as errors."""
    soup = soup_of(text)
    formulas = soup.select("span.math, div.math")
    typeset = [f for f in formulas if f.select_one(".katex")]
    errors = soup.select(".katex-error, .attnlib-tex-error")
    return len(formulas), len(typeset), len(errors)


def image_alt_failures(text: str, name: str) -> list[str]:
    """Images whose alternative text is missing, empty, a path or a hash."""
    failures = []
    for where, attrs in _Prose(text).images:
        if attrs.get("role") == "presentation" or attrs.get("aria-hidden") == "true":
            continue
        alt = (attrs.get("alt") or "").strip()
        if not alt or ALT_PATH.search(alt) or alt == (attrs.get("src") or "").strip():
            src = (attrs.get("src") or "")[:60]
            failures.append(
                f"{name}: an image near #{where} has no description as its "
                f"alternative text (alt={alt[:60]!r}, src={src!r})"
            )
    return failures


# ------------------------------------------------ what a page loads and links

#: the most bytes of script a chapter page loads (the files of its ``<script src>``
#: and its inline JavaScript): half of the 3.1 MB a chapter page loaded with Font
#: Awesome's JavaScript (1.49 MB) and MathJax (1.17 MB), neither of which a page
#: loads now (the formulas are typeset when the book is built)
SCRIPT_BUDGET = 1_550_000
# the types of <script> that a browser runs (not JSON data, e.g. a widget's state)
_JS_TYPES = {"", "text/javascript", "application/javascript", "module"}
ICON_SCRIPT = "fontawesome.js"
# a Font Awesome class (fa-solid, fa-lg, fa-magnifying-glass...)
_FA_CLASS = re.compile(r"\bfa-[a-z0-9-]+")


def page_scripts(page: Path, root: Path) -> dict[str, int]:
    """The JavaScript a page loads, with sizes in bytes: its local script files
    (``<script src>``; -1: missing) and, as ``"<inline>"``, the text of its inline
    scripts; scripts of another host are counted by :func:`static_failures`."""
    soup = soup_of(page.read_text(encoding="utf-8", errors="replace"))
    sizes: dict[str, int] = {}
    inline = 0
    for script in soup.find_all("script"):
        if (script.get("type") or "").strip().lower() not in _JS_TYPES:
            continue
        src = script.get("src")
        if src is None:
            inline += len(script.get_text().encode("utf-8"))
            continue
        if "//" in src:
            continue
        path = (page.parent / src.split("?")[0].split("#")[0]).resolve()
        sizes[path.relative_to(root.resolve()).as_posix()] = (
            path.stat().st_size if path.is_file() else -1
        )
    if inline:
        sizes["<inline>"] = inline
    return sizes


def script_failures(
    page: Path, root: Path, budget: int = SCRIPT_BUDGET
) -> tuple[list[str], int]:
    """A chapter page that loads Font Awesome's JavaScript, a script that is
    missing, or more than ``budget`` bytes of script; and its script weight."""
    sizes = page_scripts(page, root)
    failures = [
        f"{page.name}: loads {name}, which is missing"
        for name, size in sizes.items()
        if size < 0
    ]
    if any(name.endswith(ICON_SCRIPT) for name in sizes):
        failures.append(
            f"{page.name}: loads Font Awesome's JavaScript ({ICON_SCRIPT}): the "
            "theme's webfont draws the icons"
        )
    total = sum(size for size in sizes.values() if size > 0)
    if total > budget:
        top = sorted(sizes.items(), key=lambda kv: -kv[1])[:3]
        failures.append(
            f"{page.name}: loads {total / 1e6:.2f} MB of script, over the budget of "
            f"{budget / 1e6:.2f} MB (the largest: "
            + ", ".join(f"{n} {b / 1e6:.2f} MB" for n, b in top)
            + ")"
        )
    return failures, total


def icon_failures(text: str, name: str, stylesheets: str) -> list[str]:
    """Font Awesome classes of a page that no stylesheet the site ships defines:
    without Font Awesome's JavaScript, an icon is drawn by the webfont's CSS only."""
    used = {
        c
        for el in soup_of(text).find_all(class_=True)
        for c in el["class"]
        if _FA_CLASS.fullmatch(c)
    }
    missing = sorted(
        c
        for c in used
        if not re.search(r"\." + re.escape(c) + r"(?![\w-])", stylesheets)
    )
    return [
        f"{name}: the icon class {c} has no style (it shows nothing)" for c in missing
    ]


def site_stylesheets(root: Path) -> str:
    """The text of every stylesheet of the site's ``_static``."""
    return "\n".join(
        p.read_text(encoding="utf-8", errors="replace")
        for p in sorted((root / "_static").rglob("*.css"))
    )


#: folders of ``book/_vendor`` that no page loads (the page check's axe-core, the
#: build's KaTeX for Node.js): never in the site
CHECK_ONLY = ("axe", "katex-node")


def shipped_failures(root: Path) -> list[str]:
    """What the site ships that no page loads: the page check's axe-core, the
    build's KaTeX, a script of ``_static`` that no page names in a ``<script src>``
    (MathJax, Font Awesome's JavaScript), a source map."""
    failures = [
        f"the site ships {folder}/ in _static (only the page check loads it)"
        for folder in CHECK_ONLY
        if (root / "_static" / folder).exists()
    ]
    static = root / "_static"
    if not static.is_dir():
        return failures
    loaded: set[Path] = set()
    for page in root.rglob("*.html"):
        if static in page.parents:
            continue
        loaded.update(p for p in page_scripts(page, root) if p != "<inline>")
    loaded_paths = {(root / p).resolve() for p in loaded}
    unloaded = sorted(
        p.relative_to(root).as_posix()
        for p in static.rglob("*")
        if p.is_file()
        and (
            p.suffix == ".map"
            or (p.suffix == ".js" and p.resolve() not in loaded_paths)
        )
        and not any(folder in p.relative_to(static).parts[:1] for folder in CHECK_ONLY)
    )
    if unloaded:
        failures.append(
            f"the site ships {len(unloaded)} scripts or source maps that no page "
            f"loads: {', '.join(unloaded[:5])}" + (" ..." if len(unloaded) > 5 else "")
        )
    return failures


# a proof (sphinx-proof's prf:proof: the classes "proof admonition" and the id
# "proof"; a theorem's box is "proof theorem admonition" with its label as id)
_PROOF = 'div.proof.admonition[id^="proof"]'


def _first_element(el: Any) -> Any:
    return next(iter(el.find_all(True, recursive=False)), None)


def proof_fold_failures(text: str, name: str) -> list[str]:
    """Proofs that cannot be folded: each proof's box opens with its fold control."""
    failures = []
    for box in soup_of(text).select(_PROOF):
        if box["class"][0] != "proof":
            continue
        fold = _first_element(box)
        summary = _first_element(fold) if fold is not None else None
        if not (
            fold is not None
            and fold.name == "details"
            and "attnlib-proof-fold" in fold.get("class", ())
            and summary is not None
            and summary.name == "summary"
            and "attnlib-fold" in summary.get("class", ())
        ):
            failures.append(
                f"{name}: the proof #{box['id']} at line {box.sourceline} "
                "cannot be folded"
            )
    return failures


def book_repository_url() -> str:
    """``repository.url`` of ``_config.yml`` (empty when unset)."""
    import yaml

    config = Path(__file__).resolve().parents[1] / "_config.yml"
    data = yaml.safe_load(config.read_text(encoding="utf-8")) or {}
    return str((data.get("repository") or {}).get("url") or "")


def footer_failures(page: Path, root: Path, repository: str) -> list[str]:
    """The footer of a page links how to cite the book (``CITATION.cff``, in the
    site), the PDF when the site holds one (and only then) and the repository when
    ``repository`` is set."""
    text = page.read_text(encoding="utf-8", errors="replace")
    name = page.relative_to(root).as_posix()
    links = {
        a["class"][0]: a.get("href", "")
        for a in soup_of(text).select("p.attnlib-links a[class]")
        if a["class"][0].startswith("attnlib-")
    }
    failures = []
    pdfs = sorted(p.name for p in root.glob("*.pdf"))
    for kind, what in (("attnlib-cite", "CITATION.cff"), ("attnlib-pdf", "the PDF")):
        href = links.get(kind)
        if href is None:
            if kind == "attnlib-cite" or pdfs:
                failures.append(f"{name}: the footer does not link {what}")
            continue
        if not (page.parent / href).resolve().is_file():
            failures.append(
                f"{name}: the footer links {what} at {href}, not in the site"
            )
    if repository and links.get("attnlib-repository") != repository:
        failures.append(f"{name}: the footer does not link the repository {repository}")
    if not repository and "attnlib-repository" in links:
        failures.append(f"{name}: the footer links a repository that is not configured")
    return failures


# where the assignment pages are (tools/coursework/pages.py)
ASSIGNMENT_PAGES = ("book", "coursework", "generated", "assignments")
# the grader's set-up: otter's cell and the one that shortens its messages
GRADER_SETUP = ("otter.Notebook(", "def _short_check(", "run_doctest = _short_check")


def grader_setup_failures(text: str, name: str) -> list[str]:
    """An assignment page that shows the grader's set-up code (it stays in the
    notebook; the page opens with the assignment's text)."""
    import html

    plain = html.unescape(re.sub(r"<[^>]+>", "", text))
    return [
        f"{name}: shows the grader's set-up code ({mark!r})"
        for mark in GRADER_SETUP
        if mark in plain
    ]


def stale_failures(text: str, name: str, has_solutions: bool) -> list[str]:
    """Sentences that describe widgets as static, or that promise solutions the
    edition does not have."""
    plain = " ".join(data for _, data in _Prose(text).chunks)
    plain = " ".join(plain.split())
    failures = []
    for sentence in re.split(r"(?<=[.!?])\s+", plain):
        if any(rule.search(sentence) for rule in STALE):
            failures.append(f"{name}: a stale sentence: {sentence[:120]!r}")
        elif (
            not has_solutions
            and SOLUTION_PROMISE.search(sentence)
            and "edition" not in sentence.lower()
        ):
            failures.append(
                f"{name}: promises solutions the edition leaves out: {sentence[:99]!r}"
            )
    return failures


def edition_has_solutions(pages: list[Path]) -> bool:
    """Whether any page of the edition shows an exercise's solution."""
    mark = re.compile(r'class="[^"]*\bsolution\b[^"]*"')
    return any(
        mark.search(p.read_text(encoding="utf-8", errors="replace")) for p in pages
    )


def _plain(text: str) -> str:
    """Text with its tags removed, entities decoded and spaces collapsed."""
    import html

    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", text)).split())


def instructor_lines() -> list[str]:
    """Distinctive lines of the rubrics and of the written questions' model answers
    (plain prose, at least 40 characters, no formula or markup to render)."""
    root = Path(__file__).resolve().parents[1]
    from tools.coursework import masters

    lines = []
    for rubric in sorted((root / "book" / "assignments" / "rubrics").glob("*.md")):
        lines += rubric.read_text(encoding="utf-8").splitlines()
    for path in masters.master_paths().values():
        for q in masters.parse_master(path).manual:
            lines += q.solution
    out = []
    for line in lines:
        line = " ".join(line.split())
        if len(line) >= 40 and not re.search(r"[$*`|\\_#\[\]<>]", line):
            out.append(line)
    return sorted(set(out))


def leak_failures(text: str, name: str, lines: list[str]) -> list[str]:
    """A page that shows a line of a rubric or of a model answer."""
    plain = _plain(text)
    return [
        f"{name}: shows instructors' material: {line[:60]!r}"
        for line in lines
        if line in plain
    ][:3]


def sources_and_build(root: Path) -> tuple[Path, Path]:
    """The chapters' sources and the build folder (with the execution cache) of the
    HTML tree ``root``: ``book/`` and ``_build/`` for ``_build/html``, and the
    mirrored sources of the student edition for ``_build/student/html``."""
    src = root.parent / "src"
    if (src / "book").is_dir() and (src / "_build").is_dir():
        return src / "book", src / "_build"
    return Path(__file__).resolve().parents[1] / "book", root.parent


_REFRESH = re.compile(r"\s*\d+\s*;\s*url=(.+)", re.I)


def redirect_target(page: Path) -> Path | None:
    """The page a redirect page (an HTML refresh, as Jupyter Book writes the site's
    index) sends the reader to, or None for a page with content of its own."""
    text = page.read_text(encoding="utf-8", errors="replace")
    if len(text) > 2000:
        return None
    for meta in soup_of(text).find_all("meta", attrs={"http-equiv": True}):
        m = _REFRESH.match(meta.get("content", ""))
        if meta["http-equiv"].lower() == "refresh" and m:
            return (page.parent / m.group(1).strip().split("#")[0]).resolve()
    return None


ARTICLE = re.compile(r'<article class="bd-article"[^>]*>.*?</article>', re.S)


def same_article(page: Path, other: Path) -> bool:
    """Whether ``page`` and ``other`` hold the same article (the text of the page,
    without the edition's title, navigation and script versions)."""
    if not other.is_file():
        return False
    mine = ARTICLE.search(page.read_text(encoding="utf-8", errors="replace"))
    theirs = ARTICLE.search(other.read_text(encoding="utf-8", errors="replace"))
    return bool(mine and theirs and mine.group(0) == theirs.group(0))


def styled_elements(text: str) -> set[tuple[str, str, str]]:
    """The kinds of element of a page's article: tag, classes and inline style."""
    article = soup_of(text).select_one("article.bd-article")
    if article is None:
        return set()
    return {
        (
            el.name,
            " ".join(sorted(el.get("class", ()))),
            " ".join(sorted(el.get("style", "").split())),
        )
        for el in [article, *article.find_all(True)]
    }


def colours_checked_there(page: Path, other: Path) -> bool:
    """Whether every element of ``page``'s article is of a kind (tag, classes, inline
    style) that ``other``'s article holds too, with the same stylesheets: a chapter
    of the student edition is its reader page with solutions taken out, so the
    colours axe-core's colour rules measured there are the colours here."""
    if not other.is_file():
        return False
    mine, theirs = (
        p.read_text(encoding="utf-8", errors="replace") for p in (page, other)
    )
    kinds = styled_elements(mine)  # empty only without an article
    return (
        bool(kinds)
        and kinds <= styled_elements(theirs)
        and _stylesheets(mine) == _stylesheets(theirs)
    )


_DIV = re.compile(r"<(/?)div\b", re.I)
_EXPLORER = re.compile(r'<div class="attnlib-explorer" ')
_EXPLORER_DATA = re.compile(
    r'<script[^>]*class="attnlib-explorer-data"[^>]*>(.*?)</script>', re.S
)
_IMG_SRC = re.compile(r'<img[^>]*\ssrc="([^"?#]+)', re.I)


def explorers(text: str) -> list[str]:
    """The static explorers of a page, each its whole ``<div>``: image, controls,
    data (the addresses of its frames) and script."""
    found = []
    for m in _EXPLORER.finditer(text):
        depth = 0
        for d in _DIV.finditer(text, m.start()):
            depth += -1 if d.group(1) else 1
            if depth == 0:
                found.append(text[m.start() : text.index(">", d.end()) + 1])
                break
    return found


def _same_files(page: Path, other: Path, addresses: list[str]) -> bool:
    """Whether each relative address names a file beside ``page`` that is the file
    at the same address beside ``other``, byte for byte."""
    for address in addresses:
        if "://" in address or address.startswith(("data:", "/")):
            return False
        mine, theirs = page.parent / address, other.parent / address
        if not (mine.is_file() and theirs.is_file()):
            return False
        if mine.read_bytes() != theirs.read_bytes():
            return False
    return True


def explorers_checked_there(page: Path, other: Path) -> bool:
    """Whether the check driving ``other``'s static explorers drove ``page``'s: each
    explorer of ``page`` is one of ``other``'s byte for byte (its controls, its
    script, the addresses of its frames), every frame and every script of
    ``_static/`` the page loads is the same file in both editions, and the page
    loads the same scripts and stylesheets by name (the explorers' controls are
    measured against those). A page without explorers, or a
    frame missing from its build, is not covered: its own check drives it."""
    if not other.is_file():
        return False
    mine, theirs = (
        p.read_text(encoding="utf-8", errors="replace") for p in (page, other)
    )
    boxes = explorers(mine)
    if not boxes or not set(boxes) <= set(explorers(theirs)):
        return False
    frames = []
    for box in boxes:
        data = _EXPLORER_DATA.search(box)
        try:
            frames += json.loads(data.group(1))["frames"] if data else []
        except (ValueError, KeyError, TypeError):
            return False
        frames += _IMG_SRC.findall(box)
    scripts = _script_sources(mine)
    # the code (the theme's, the book's, MathJax): the same files; the search
    # index, which each edition builds from its own text, by name only
    code = [s for s in scripts if "_static/" in s]
    return (
        bool(frames)
        and scripts == _script_sources(theirs)
        and _stylesheets(mine) == _stylesheets(theirs)
        and _same_files(page, other, frames + code)
    )


def _stylesheets(text: str) -> list[str]:
    """The stylesheets a page loads (their names, without the edition's version)."""
    return [
        link["href"].split("?")[0].rsplit("/", 1)[-1]
        for link in soup_of(text).find_all("link", href=True)
        if "stylesheet" in link.get("rel", ())
    ]


def _script_sources(text: str) -> list[str]:
    """The addresses of a page's script files, without their queries."""
    return [
        s["src"].split("?")[0].split("#")[0]
        for s in soup_of(text).find_all("script", src=True)
    ]


def main(root: Path, shots: Path | None = None, same_as: Path | None = None) -> int:
    # the chapters, then the assignment pages and the guide of the Coursework part
    pages = sorted(root.glob("book/*.html")) + sorted(
        root.glob("book/coursework/**/*.html")
    )
    if not pages:
        print(f"no chapter pages under {root}/book")
        return 1
    sources, build = sources_and_build(root)
    failures, expected_img = [], {}
    secrets = instructor_lines()
    every_page = sorted(root.rglob("*.html"))
    has_solutions = edition_has_solutions(every_page)
    stylesheets = site_stylesheets(root)
    repository = book_repository_url()
    for page in every_page:
        text = page.read_text(encoding="utf-8", errors="replace")
        rel = page.relative_to(root).as_posix()
        failures += leak_failures(text, rel, secrets)
        failures += image_alt_failures(text, rel)
        failures += stale_failures(text, rel, has_solutions)
        if page not in pages:  # the chapters are read as Chromium parses them
            failures += prose_failures(text, rel)
        failures += proof_fold_failures(text, rel)
        failures += icon_failures(text, rel, stylesheets)
        parts = page.relative_to(root).parts
        if not ({"_static", "lite"} & set(parts)) and redirect_target(page) is None:
            failures += footer_failures(page, root, repository)
        if parts[:4] == ASSIGNMENT_PAGES:  # not the guide, which explains otter
            failures += grader_setup_failures(text, rel)
    failures += shipped_failures(root)
    script_weights = {}
    for page in sorted(root.glob("book/*.html")):
        page_fail, script_weights[page.name] = script_failures(page, root)
        failures += page_fail
    figures: dict[Path, set[str]] = {}
    for page in pages:
        page_fail, expected_img[page] = static_failures(page, build, sources, figures)
        failures += page_fail
    from .browser_check import (
        WEIGHT_AIM,
        accessibility_pages,
        check_pages,
        chromium_path,
        search_failures,
    )

    if chromium_path() is None:
        print(
            "chromium is not installed: the rendering check cannot run", file=sys.stderr
        )
        return 1

    # the student edition: the pages whose article is the reader edition's were read
    # in the browser there; on the others, axe-core's colour rules were run there on
    # elements styled as these, when no element here is of a kind the reader page
    # lacks
    if same_as is None:
        browse, colours_there, driven_there = pages, set(), set()
    else:
        twins = {p: same_as / p.relative_to(root) for p in pages}
        browse = [p for p in pages if not same_article(p, twins[p])]
        colours_there = {p for p in browse if colours_checked_there(p, twins[p])}
        driven_there = {p for p in browse if explorers_checked_there(p, twins[p])}
        print(
            f"{len(pages) - len(browse)} pages hold the article of {same_as}: read in "
            f"the browser there; {len(browse)} read here, {len(colours_there)} of them "
            "with no element styled otherwise than there (axe-core's colour rules "
            f"were run there), {len(driven_there)} with the explorers and frames "
            "driven there"
        )
    doms: dict[Path, str] = {}
    noscript: dict[Path, str] = {}
    browser_fail, weights = check_pages(
        browse,
        root,
        None,
        shots,
        figures,
        doms,
        colours_there,
        driven_there,
        noscript=noscript,
    )
    failures += browser_fail
    for page in browse:
        dom = doms.get(page, "")
        text = page.read_text(encoding="utf-8")
        # the page as a reader sees it before any script has run (or with none): its
        # formulas are typeset and no text holds TeX
        failures += prose_failures(noscript.get(page, text), page.name)
        n_math, n_typeset, n_errors = formula_counts(noscript.get(page, text))
        if n_typeset < n_math:
            failures.append(
                f"{page.name}: {n_math - n_typeset} of {n_math} formulas are not "
                "typeset in the HTML"
            )
        if n_errors:
            failures.append(f"{page.name}: {n_errors} formulas KaTeX could not typeset")
        n_views = text.count('type="application/vnd.jupyter.widget-view+json"')
        n_rendered = dom.count("jupyter-widgets-disconnected")
        if n_views and n_rendered == 0:
            failures.append(f"{page.name}: the saved widget views did not render")
        n_img = dom.count("<img")
        if n_img < expected_img[page]:
            failures.append(
                f"{page.name}: {n_img} images rendered, {expected_img[page]} expected"
            )
        print(
            f"{page.name}: {n_typeset} of {n_math} formulas typeset in the HTML, "
            f"{n_views} widget views saved, {n_img} images rendered"
        )
    failures += chapter_notebook_failures(root, sources)
    # axe-core on every other page of the edition, in both modes of the theme
    # (not the theme's template fragments under _static/, which no reader opens)
    # (a redirect, like the index that sends a reader to the first chapter, has no
    # content: its target must be a page of the edition, which is checked itself)
    others, checked_there = [], 0
    for p in every_page:
        if p in pages or "_static" in p.relative_to(root).parts:
            continue
        target = redirect_target(p)
        if target is not None:
            if target not in every_page:
                failures.append(f"{p.relative_to(root)}: redirects to a missing page")
        elif same_as is not None and same_article(p, same_as / p.relative_to(root)):
            checked_there += 1
        else:
            others.append(p)
    if checked_there:
        print(
            f"{checked_there} other pages hold the article of {same_as}: "
            f"axe-core checked them there; {len(others)} checked here"
        )
    failures += accessibility_pages(others)
    # the summaries of the search's results, read from the pages as a reader's
    # browser reads them (the site served on this machine)
    search_fail, summaries = search_failures(root)
    failures += search_fail
    print(f"search: {summaries} summaries of results read, {len(search_fail)} failures")
    print(
        f"script weight of the chapter pages (script files and inline scripts; budget "
        f"{SCRIPT_BUDGET / 1e6:.2f} MB):"
    )
    for name, size in script_weights.items():
        print(f"  {name}: {size / 1e6:.2f} MB")
    print("page weight at first load (page and the files it loads):")
    for name, size in weights.items():
        mark = (
            "" if size <= WEIGHT_AIM else f"  (over the aim of {WEIGHT_AIM >> 20} MB)"
        )
        print(f"  {name}: {size / 2**20:.2f} MB{mark}")
    for f in failures:
        print("FAIL", f)
    failed = {re.split(r"[: ]", f, maxsplit=1)[0] for f in failures}
    print(f"{len(pages) - len(failed)} passed, {len(failed)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("html", nargs="?", default="_build/html", type=Path)
    parser.add_argument(
        "--screenshots",
        type=Path,
        default=None,
        help="write a screenshot of every chapter at 1366 px and 390 px there",
    )
    parser.add_argument(
        "--same-as",
        type=Path,
        default=None,
        help="another edition whose check passes: axe-core skips the other pages "
        "whose article is the same there",
    )
    args = parser.parse_args()
    shots = args.screenshots.resolve() if args.screenshots else None
    same_as = args.same_as.resolve() if args.same_as else None
    sys.exit(main(args.html.resolve(), shots, same_as))
