"""Checks folded by default: a code cell that asserts a result opens on demand.

About a third of a chapter's height is code cells that ``assert`` what the text
proves or states. A reader who follows the argument can skip them; one who wants
the evidence opens them. :class:`FoldChecks` folds, in the HTML, every code cell
whose source has an ``assert`` statement and whose outputs hold no image (a cell
that draws a figure stays open), behind a "Show the check" control (myst-nb's
folding of a ``hide-cell`` cell, with the book's own words). A cell that already has
a folding tag (``hide-input``, ``hide-output``, ``hide-cell``) keeps it, and the
label of a check (``(mod-check-exist)=``) stays above the control, so the links of
the list of results land on it. The PDF prints every cell.
"""

from __future__ import annotations

import ast
from typing import Any

from docutils import nodes
from sphinx.transforms import SphinxTransform

SHOW = "Show the check"
HIDE = "Hide the check"


def asserts(source: str) -> bool:
    """Whether the code has an ``assert`` statement (at any depth)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:  # IPython magics: look at the lines
        return any(line.lstrip().startswith("assert ") for line in source.splitlines())
    return any(isinstance(n, ast.Assert) for n in ast.walk(tree))


class FoldChecks(SphinxTransform):
    """Fold the asserting cells of a notebook page (see the module docstring)."""

    default_priority = 410  # after myst-nb has rendered the cells

    def apply(self, **kwargs: Any) -> None:
        for cell in list(self.document.findall(nodes.container)):
            if cell.get("nb_element") != "cell_code" or cell.get("hide_mode"):
                continue
            kids = [c for c in cell.children if isinstance(c, nodes.Element)]
            source = [c for c in kids if c.get("nb_element") == "cell_code_source"]
            if not source or not asserts(source[0].astext()):
                continue
            outputs = [c for c in kids if c.get("nb_element") == "cell_code_output"]
            if any(True for o in outputs for _ in o.findall(nodes.image)):
                continue
            cell["hide_mode"] = "all"
            cell["prompt_show"] = SHOW
            cell["prompt_hide"] = HIDE
            cell["classes"].append("attnlib-check")


def setup(app: Any) -> None:
    app.add_transform(FoldChecks)
