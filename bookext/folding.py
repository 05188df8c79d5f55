"""Checks folded by default: a code cell that asserts a result opens on demand.

About a third of a chapter's height is code cells that ``assert`` what the text
proves or states. A reader who follows the argument can skip them; one who wants
the evidence opens them. :class:`FoldChecks` folds, in the HTML, every code cell
whose source has an ``assert`` statement and whose outputs are text only behind a
"Show the check" control (myst-nb's folding of a ``hide-cell`` cell, in the book's
words); a check that draws a figure or shows an explorer or a player folds its code
only, behind "Show the code of the check", and its picture stays in view. A cell
that already has a folding tag (``hide-input``, ``hide-output``, ``hide-cell``)
keeps it, and the label of a check (``(mod-check-exist)=``) stays
above the control, so the links of the list of results land on it. The PDF prints
every cell.

Proofs fold as well (:class:`FoldProofs`): the text of every proof (sphinx-proof's
``prf:proof``) is in a ``<details>`` that is open when the page loads, under a
"Hide the proof" / "Show the proof" control, so a reader who takes the result on trust
folds it; a link to a place inside a folded proof opens it (the browser opens a
``<details>`` that holds the target of a link). The PDF prints every proof.

The chapters' notebooks fold the same cells (:func:`bookext.notebooks.fold_cells`)
with the rules written here once: :func:`asserts`, :func:`text_only` on the mime
types of the outputs the page shows, and :func:`tag_folds` for the tags.
"""

from __future__ import annotations

import ast
from typing import Any

from docutils import nodes
from sphinx.transforms import SphinxTransform
from sphinx.transforms.post_transforms import SphinxPostTransform

SHOW = "Show the check"
HIDE = "Hide the check"
# a check that shows a picture: its code folds, the picture stays
SHOW_CODE = "Show the code of the check"
HIDE_CODE = "Hide the code of the check"
# myst-nb's folding tags and the parts of a cell each folds on the pages
HIDE_TAGS = {
    "hide-input": {"input"},
    "hide-output": {"output"},
    "hide-cell": {"input", "output"},
}
TEXT = "text/plain"


def tag_folds(tags: list[str] | set[str]) -> set[str]:
    """The parts of a code cell (``"input"``, ``"output"``) its tags fold."""
    return set().union(*(HIDE_TAGS.get(t, set()) for t in tags))


def text_only(mime_types: list[str] | set[str]) -> bool:
    """Whether outputs of these mime types are text only (a check folds): no
    image, no HTML (an explorer, a player, a progress bar), no rich output."""
    return all(m == TEXT for m in mime_types)


def asserts(source: str) -> bool:
    """Whether the code has an ``assert`` statement (at any depth)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:  # IPython magics: look at the lines
        return any(line.lstrip().startswith("assert ") for line in source.splitlines())
    return any(isinstance(n, ast.Assert) for n in ast.walk(tree))


def _text_only(output: nodes.Element) -> bool:
    """Whether a cell's outputs are text only: no image, no HTML (an explorer, a
    player), no other rich output."""
    for node in output.findall(nodes.Element):
        if isinstance(node, (nodes.image, nodes.raw, nodes.figure)):
            return False
        mime = node.get("mime_type")
        if mime is not None and not text_only([mime]):
            return False
    return True


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
            if all(_text_only(o) for o in outputs):
                cell["hide_mode"] = "all"
                cell["prompt_show"], cell["prompt_hide"] = SHOW, HIDE
                cell["classes"].append("attnlib-check")
            else:
                cell["hide_mode"] = "input"
                cell["prompt_show"], cell["prompt_hide"] = SHOW_CODE, HIDE_CODE
                cell["classes"].append("attnlib-check-code")


PROOF_SHOW = "Show the proof"
PROOF_HIDE = "Hide the proof"


class proof_fold(nodes.General, nodes.Element):
    """The folding box of a proof's text (HTML only)."""


def visit_proof_fold(self: Any, node: proof_fold) -> None:
    self.body.append(
        '<details class="attnlib-proof-fold" open><summary class="attnlib-fold">'
        f'<span class="attnlib-fold-show">{PROOF_SHOW}</span>'
        f'<span class="attnlib-fold-hide">{PROOF_HIDE}</span></summary>'
    )


def depart_proof_fold(self: Any, node: proof_fold) -> None:
    self.body.append("</details>")


def _pass(self: Any, node: nodes.Node) -> None:
    pass


def is_proof(node: nodes.Node) -> bool:
    """Whether ``node`` is the box of a ``prf:proof`` (its classes: proof, proof)."""
    return isinstance(node, nodes.admonition) and node.get("classes", [])[:2] == [
        "proof",
        "proof",
    ]


class FoldProofs(SphinxPostTransform):
    """Put the text of every proof of an HTML page in an open ``<details>``."""

    default_priority = 500
    formats = ("html",)

    def run(self, **kwargs: Any) -> None:
        for box in list(self.document.findall(is_proof)):
            if any(isinstance(c, proof_fold) for c in box.children):
                continue
            fold = proof_fold()
            fold.extend(box.children)
            box.children = []
            box += fold


def register_proof_folds(app: Any) -> None:
    """The node and the post-transform of folded proofs."""
    app.add_node(
        proof_fold,
        html=(visit_proof_fold, depart_proof_fold),
        latex=(_pass, _pass),
        text=(_pass, _pass),
        man=(_pass, _pass),
        texinfo=(_pass, _pass),
    )
    app.add_post_transform(FoldProofs)


def setup(app: Any) -> None:
    app.add_transform(FoldChecks)
    register_proof_folds(app)
