"""The formulas of the HTML book are typeset when the book is built, with KaTeX.

A page arrives with its mathematics already typeset: no script typesets it in the
reader's browser, and the first paint shows formulas, not their TeX source. Sphinx's
HTML writer asks the book's math renderer (``html_math_renderer = "attnlib_katex"``,
set here) for every formula; :func:`visit_math` and :func:`visit_displaymath` write
what Sphinx's MathJax renderer writes (the same elements, classes, ids, equation
numbers and their links, so ``{eq}`` references are unchanged), with KaTeX's HTML
and MathML in place of the TeX.

KaTeX runs in Node.js: one ``node`` process per Sphinx process
(:class:`KaTeXProcess`, ``bookext/katex_render.js``), which answers one formula a
line; a formula met again is taken from a cache. KaTeX is the npm package that
``python -m tools.vendor_assets`` puts in ``book/_vendor`` at a pinned version:
``katex-node/katex.js`` for the build (not copied into the site,
:data:`bookext.assets.NOT_SERVED`) and ``katex/`` (its stylesheet and WOFF2 fonts)
for the pages. The macros are ``_config.yml``'s ``mathjax3_config.tex.macros``, the
one list that the PDF's preamble (:mod:`bookext.latex`), the plain notebooks and
JupyterLab read too; each is one group, as MathJax and the PDF read it (``x_\\S`` is
``x_{\\mathbb{S}}``).

A formula KaTeX cannot typeset, or that LaTeX would refuse (KaTeX's ``strict``
mode), is a warning of the build at the formula's place (``make book`` builds with
``-W``: the build fails) and is shown as its TeX source in the page.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.locale import _
from sphinx.util import logging
from sphinx.util.math import get_node_equation_number

logger = logging.getLogger(__name__)

RENDERER = "attnlib_katex"
SCRIPT = Path(__file__).resolve().parent / "katex_render.js"
VENDOR = Path(__file__).resolve().parents[1] / "book" / "_vendor"
#: KaTeX's library for Node.js (the build only) and its stylesheet (the pages)
KATEX_JS = VENDOR / "katex-node" / "katex.js"
STYLESHEET = "katex/katex.min.css"


class KaTeXError(ValueError):
    """KaTeX could not typeset a formula (its message says why)."""


def macros_of(config: Any) -> dict[str, str]:
    """KaTeX's macros from ``mathjax3_config.tex.macros``: ``{"\\\\R":
    "{\\\\mathbb{R}}"}`` for ``{"R": "\\\\mathbb{R}"}``; a macro with arguments
    (``[body, n]``) keeps its ``#1``... ."""
    tex = (getattr(config, "mathjax3_config", None) or {}).get("tex") or {}
    macros = tex.get("macros") or {}
    if not isinstance(macros, dict):
        raise TypeError(
            "mathjax3_config.tex.macros must map macro names to TeX, got "
            f"{type(macros).__name__}"
        )
    out = {}
    for name, body in macros.items():
        if isinstance(body, (list, tuple)):
            body = body[0]
        if not isinstance(body, str):
            raise TypeError(
                f"mathjax3_config.tex.macros[{name!r}] must be TeX (a string), got "
                f"{type(body).__name__}"
            )
        out["\\" + name] = "{" + body + "}"
    return out


class KaTeXProcess:
    """One ``node`` process running ``katex_render.js``: :meth:`render` sends it a
    formula and reads the HTML back. Each formula is typeset once per process."""

    def __init__(
        self, macros: dict[str, str], katex_js: Path = KATEX_JS, node: str | None = None
    ):
        node = node or shutil.which("node") or shutil.which("nodejs")
        if node is None:
            raise RuntimeError(
                "node (Node.js) is needed to typeset the book's formulas when it is "
                "built: install Debian's nodejs package (apt-get install nodejs npm)"
            )
        if not Path(katex_js).is_file():
            raise RuntimeError(
                f"KaTeX is not vendored ({katex_js} is missing): run "
                "python -m tools.vendor_assets (make book does)"
            )
        self.pid = os.getpid()
        self._lock = threading.Lock()
        self._cache: dict[tuple[str, bool], str] = {}
        self._proc = subprocess.Popen(
            [node, str(SCRIPT), str(katex_js), json.dumps(macros)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )

    def render(self, tex: str, display: bool) -> str:
        """KaTeX's HTML (and MathML) for ``tex``; :class:`KaTeXError` if it fails."""
        if not isinstance(tex, str):
            raise TypeError(f"tex must be a string, got {type(tex).__name__}")
        key = (tex, bool(display))
        with self._lock:
            if key not in self._cache:
                self._cache[key] = self._ask(tex, bool(display))
            html = self._cache[key]
        if html.startswith("\0"):
            raise KaTeXError(html[1:])
        return html

    def _ask(self, tex: str, display: bool) -> str:
        proc = self._proc
        if proc.poll() is not None:
            raise RuntimeError(
                f"the KaTeX process ended (exit status {proc.returncode})"
            )
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps({"tex": tex, "display": display}) + "\n")
        proc.stdin.flush()
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(
                f"the KaTeX process ended (exit status {proc.wait()}) on {tex!r}"
            )
        reply = json.loads(line)
        # an error is cached too, marked by a leading NUL (never in KaTeX's HTML)
        return reply["html"] if "html" in reply else "\0" + reply["error"]

    def close(self) -> None:
        if self._proc.poll() is None:
            self._proc.stdin.close()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()


_process: KaTeXProcess | None = None


def _katex(config: Any) -> KaTeXProcess:
    """This process's KaTeX (a process forked by a parallel build starts its own:
    the parent's pipes are not its own)."""
    global _process
    if _process is None or _process.pid != os.getpid():
        _process = KaTeXProcess(macros_of(config))
        atexit.register(_process.close)
    return _process


def _typeset(self: Any, node: nodes.Element, tex: str, display: bool) -> str:
    try:
        return _katex(self.builder.config).render(tex, display)
    except KaTeXError as err:
        logger.warning(
            "KaTeX cannot typeset %r: %s", tex, err, location=node, type="katex"
        )
        return '<span class="attnlib-tex-error">' + self.encode(tex) + "</span>"


def visit_math(self: Any, node: nodes.math) -> None:
    """An inline formula: ``<span class="math ...">`` holding KaTeX's output."""
    self.body.append(
        self.starttag(node, "span", "", CLASS="math notranslate nohighlight")
    )
    self.body.append(_typeset(self, node, node.astext(), display=False) + "</span>")
    raise nodes.SkipNode


def display_tex(node: nodes.math_block) -> str:
    """The TeX of a displayed formula as Sphinx's MathJax renderer gives it:
    paragraphs are aligned equations, a paragraph with ``\\\\`` is a ``split``."""
    if node["nowrap"]:
        return node.astext()
    parts = [part for part in node.astext().split("\n\n") if part.strip()]
    tex = [r"\begin{split}" + p + r"\end{split}" if r"\\" in p else p for p in parts]
    if len(tex) > 1:
        return (
            r"\begin{align}\begin{aligned}"
            + r"\\".join(tex)
            + r"\end{aligned}\end{align}"
        )
    return "".join(tex)


def visit_displaymath(self: Any, node: nodes.math_block) -> None:
    """A displayed formula: ``<div class="math ...">``, its number and the number's
    link (as Sphinx's MathJax renderer writes them), then KaTeX's output. The box
    is focusable (``tabindex="0"``): a formula wider than the screen scrolls in it
    (``attnlib-book.css``), and a reader without a mouse scrolls it with the arrow
    keys once it has the focus (MathJax made every formula focusable)."""
    self.body.append(
        self.starttag(node, "div", CLASS="math notranslate nohighlight", tabindex="0")
    )
    if node["number"] and not node["nowrap"]:
        number = get_node_equation_number(self, node)
        self.body.append('<span class="eqno">(%s)' % number)
        self.add_permalink_ref(node, _("Link to this equation"))
        self.body.append("</span>")
    self.body.append(_typeset(self, node, display_tex(node), display=True))
    self.body.append("</div>\n")
    raise nodes.SkipNode


def config_inited(app: Any, config: Any) -> None:
    """``config-inited``: the book's formulas are typeset by this renderer."""
    config.html_math_renderer = RENDERER


def builder_inited(app: Any) -> None:
    """``builder-inited``: every HTML page links KaTeX's stylesheet (its fonts are
    loaded by the browser only for the glyphs a page shows)."""
    if app.builder.format == "html":
        app.add_css_file(STYLESHEET)


def build_finished(app: Any, exception: Exception | None) -> None:
    global _process
    if _process is not None and _process.pid == os.getpid():
        _process.close()
        _process = None


def setup(app: Any) -> dict:
    app.add_html_math_renderer(RENDERER, (visit_math, None), (visit_displaymath, None))
    app.connect("config-inited", config_inited)
    app.connect("builder-inited", builder_inited)
    app.connect("build-finished", build_finished)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
