"""The PDF (``make pdf``): what a page shows with scripts, printed as pictures.

* :class:`PlayerFrames`: a ``to_jshtml`` player (an HTML output, whose text form is
  ``<IPython.core.display.HTML object>``) also gets an ``image/png`` output, its last
  frame, which the LaTeX builder prefers to the text; the HTML builder still picks
  the player. The static explorers of the widgets carry their PNG already, and
  progress bars print as one line (:mod:`bookext.static`).
* :func:`latex_macros`: the macros of the HTML book's MathJax (``\\R``, ``\\S``)
  defined in the LaTeX preamble, fonts with every glyph the book prints
  (:data:`FONTS`), and no Python module index (its entries would point into the
  library reference, which the PDF leaves out).
* :class:`Appendices`: the parts after the chapters are appendices, so that the
  chapters are numbered 1 to 7; the introduction is unnumbered front matter; the
  library reference is left out (it is a web reference).
* :class:`DropSolutions`: for a LaTeX build, the exercises' solutions are left out:
  a reader of the PDF finds them in the HTML book and the notebooks.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.transforms import SphinxTransform
from sphinx.transforms.post_transforms import SphinxPostTransform

# matplotlib breaks a frame's base64 into lines ending with a backslash
FRAME = re.compile(r'frames\[(\d+)\] = "data:image/png;base64,([A-Za-z0-9+/=\\\s]+)"')


def frame_png(b64: str) -> bytes:
    """The PNG of a player's frame from its base64 text (group 2 of ``FRAME``)."""
    return base64.b64decode(re.sub(r"[\\\s]", "", b64))


def last_frame(player: str) -> bytes | None:
    """The PNG of the last frame of a matplotlib ``to_jshtml`` player."""
    if 'class="animation"' not in player:
        return None
    frames = {int(i): b64 for i, b64 in FRAME.findall(player)}
    if not frames:
        return None
    return frame_png(frames[max(frames)])


class PlayerFrames(SphinxTransform):
    """An ``image/png`` beside every player's HTML in the notebook outputs."""

    default_priority = 500

    def apply(self, **kwargs: Any) -> None:
        folder = Path(self.app.outdir).parent / "jupyter_execute" / "players"
        for bundle in list(self.document.findall(nodes.container)):
            if bundle.get("nb_element") != "mime_bundle":
                continue
            kinds = [c.get("mime_type") for c in bundle.children]
            if "text/html" not in kinds or "image/png" in kinds:
                continue
            png = last_frame(bundle.children[kinds.index("text/html")].astext())
            if png is None:
                continue
            path = folder / (hashlib.sha256(png).hexdigest()[:20] + ".png")
            if not path.exists():
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(png)
            uri = "/" + os.path.relpath(path.resolve(), self.app.srcdir)
            image = nodes.image(
                uri=uri, alt="The last frame of the animation shown in the HTML book."
            )
            holder = nodes.container(mime_type="image/png")
            holder += image
            bundle += holder


def macro_preamble(macros: dict) -> str:
    """LaTeX definitions of MathJax's ``tex.macros`` (``{"R": "\\mathbb{R}"}``).

    ``\\providecommand`` then ``\\renewcommand``, since LaTeX already defines some
    of the names (``\\S`` is the section sign).
    """
    lines = []
    for name, body in macros.items():
        if isinstance(body, list):  # [body, number of arguments]
            body, nargs = body[0], int(body[1])
            args = f"[{nargs}]"
        else:
            args = ""
        lines.append(f"\\providecommand{{\\{name}}}{{}}")
        # one more group, as MathJax reads a macro: x_\S is x_{\mathbb{S}}
        lines.append(f"\\renewcommand{{\\{name}}}{args}{{{{{body}}}}}")
    return "\n".join(lines)


#: The frames of code cells and outputs that sphinx-jupyterbook-latex writes, as its
#: own class defines them (the book uses Sphinx's ``manual`` class, see _config.yml).
CELL_FRAMES = r"""
\usepackage[strict]{changepage}
\definecolor{CodeBlockInputBorderColor}{RGB}{200,200,200}
\definecolor{CodeBlockInputColor}{RGB}{247,247,247}
\definecolor{CodeBlockOutputBorderColor}{RGB}{247,247,247}
\definecolor{CodeBlockOutputColor}{RGB}{252,252,252}
\newenvironment{sphinxVerbatimInput}
  {\colorlet{VerbatimBorderColor}{CodeBlockInputBorderColor}%
   \colorlet{VerbatimColor}{CodeBlockInputColor}%
   \begin{adjustwidth}{5pt}{}}
  {\end{adjustwidth}}
\newenvironment{sphinxVerbatimOutput}
  {\colorlet{VerbatimBorderColor}{CodeBlockOutputBorderColor}%
   \colorlet{VerbatimColor}{CodeBlockOutputColor}%
   \begin{adjustwidth}{20pt}{}}
  {\end{adjustwidth}}
"""


#: Sphinx's XeLaTeX fonts (FreeFont) but for the code: FreeMono's oblique and bold
#: have no ``⟨⟩`` (a docstring's inner product, printed in a code cell's italic
#: comment font); DejaVu Sans Mono (Debian's fonts-dejavu-core and
#: fonts-dejavu-extra) has every character the book prints in all four styles.
#: unicode-math makes ``\setminus`` U+29F5, which Latin Modern Math lacks: it is
#: LaTeX's binary backslash again, once unicode-math has set its symbols.
FONTS = r"""
\setmainfont{FreeSerif}[
  Extension      = .otf,
  UprightFont    = *,
  ItalicFont     = *Italic,
  BoldFont       = *Bold,
  BoldItalicFont = *BoldItalic
]
\setsansfont{FreeSans}[
  Extension      = .otf,
  UprightFont    = *,
  ItalicFont     = *Oblique,
  BoldFont       = *Bold,
  BoldItalicFont = *BoldOblique,
]
\setmonofont{DejaVu Sans Mono}[Scale = MatchLowercase]
\AddToHook{begindocument/end}{\renewcommand{\setminus}{\mathbin{\backslash}}}
"""


def latex_macros(app: Any, config: Any) -> None:
    """``config-inited``: the PDF defines the macros the HTML book's MathJax has
    (``_config.yml``, ``mathjax3_config.tex.macros``), one list for both; it sets
    its fonts (:data:`FONTS`, unless ``latex_elements`` names some) and has no
    module index (the library reference, where its entries point, is left out:
    :class:`Appendices`)."""
    macros = ((config.mathjax3_config or {}).get("tex") or {}).get("macros") or {}
    elements = dict(config.latex_elements or {})
    preamble = elements.get("preamble", "") + CELL_FRAMES
    elements["preamble"] = preamble + "\n" + macro_preamble(macros)
    elements.setdefault("fontpkg", FONTS)
    config.latex_elements = elements
    config.latex_domain_indices = False


class Appendices(SphinxPostTransform):
    """In the PDF the parts after the chapters (coursework, library reference, back
    matter) are appendices, lettered A, B, ..., so that the chapters are numbered 1
    to 6 and nothing else is. The introduction (the root page) comes before the
    first part, unnumbered, as front matter.

    Runs after sphinx-jupyterbook-latex has turned the captions of ``_toc.yml`` into
    parts (priority 700), on the assembled document of the book.
    """

    default_priority = 750
    formats = ("latex",)
    #: parts of the HTML book left out of the PDF: the library reference is a web
    #: reference (and its docstrings' inline markup is not all valid LaTeX)
    OMIT = ("Library reference",)

    def run(self, **kwargs: Any) -> None:
        parts = []
        for node in list(self.document.children):
            if not isinstance(
                node, nodes.compound
            ) or "toctree-wrapper" not in node.get("classes", []):
                continue
            title = next(iter(node.findall(nodes.title)), None)
            if title is not None and title.astext() in self.OMIT:
                self.document.remove(node)
                continue
            parts.append(node)
        if len(parts) > 1:
            index = self.document.index(parts[1])
            self.document.insert(index, nodes.raw("", "\\appendix\n", format="latex"))


class DropSolutions(SphinxPostTransform):
    """The LaTeX build leaves out the exercises' solutions (sphinx-exercise's
    ``hide_solutions`` drops the plain ``{solution}`` directive only, not the gated
    ``{solution-start}``/``{solution-end}`` pairs the chapters use)."""

    default_priority = 30  # after sphinx-exercise's own post-transforms
    formats = ("latex",)

    def run(self, **kwargs: Any) -> None:
        from sphinx_exercise.nodes import (
            solution_end_node,
            solution_node,
            solution_start_node,
        )

        kinds = (solution_node, solution_start_node, solution_end_node)
        for node in list(self.document.findall(lambda n: isinstance(n, kinds))):
            node.parent.remove(node)
