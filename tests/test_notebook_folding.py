"""In the chapters' notebooks, as on the book's pages, proofs fold (open at first) and
the cells that assert a result are folded: code and outputs hidden, tag ``check``,
with the check's label (its anchor) open just above it, where a link lands."""

from __future__ import annotations

import re

import nbformat
import pytest

from bookext.folding import asserts
from bookext.notebooks import (
    CHECK_TAG,
    ROOT,
    chapters,
    fold_checks,
    reader_notebook,
    settings,
    student_notebook,
)

CHAPTERS = chapters(ROOT)
CONFIG = settings(ROOT)
BUILT = ROOT / "_build" / "html"
LABEL = re.compile(r"^\(([\w:.-]+)\)=\s*\n```\{code-cell\}", re.M)
ANCHOR = re.compile(r'<a id="([\w:.-]+)"></a>\s*$')


def folding_failures(nb, labels: set[str]) -> list[str]:
    """What is wrong with the folding of a notebook: an asserting cell with text
    outputs that is open, a folded cell that is not a check, a check whose label is
    not the end of an open markdown cell just above it."""
    failures = []
    for k, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        hidden = cell.metadata.get("jupyter", {})
        tags = cell.metadata.get("tags", [])
        folded = hidden.get("source_hidden") is True and CHECK_TAG in tags
        rich = any(set(o.get("data", {})) - {"text/plain"} for o in cell.outputs)
        is_check = asserts(cell.source) and not rich and "solution" not in tags
        if is_check and not (folded and hidden.get("outputs_hidden") is True):
            failures.append(f"cell {k}: a check that is not folded")
        if folded and not is_check:
            failures.append(f"cell {k}: folded but not a check")
        above = nb.cells[k - 1] if k else None
        m = (
            ANCHOR.search(above.source)
            if above and above.cell_type == "markdown"
            else None
        )
        if m is None:
            continue
        labels.discard(m.group(1))
        if folded and above.metadata.get("jupyter", {}).get("source_hidden"):
            failures.append(f"cell {k}: the label {m.group(1)} is hidden")
    failures += [f"the label {label} is not above its check" for label in labels]
    return failures


def _labelled_checks(source) -> set[str]:
    """Labels of the source placed just above a code cell that asserts."""
    text = source.read_text(encoding="utf-8")
    out = set()
    for m in LABEL.finditer(text):
        body = text[m.end() : text.index("\n```", m.end())]
        if asserts(body.split("\n", 1)[1]):
            out.add(m.group(1))
    return out


@pytest.mark.parametrize("source", CHAPTERS, ids=lambda p: p.stem)
def test_checks_and_proofs_fold_in_the_notebooks(source):
    text = source.read_text(encoding="utf-8")
    n_proofs = len(re.findall(r"^(`{3,}|:{3,})\{prf:proof\}", text, re.M))
    for nb in (reader_notebook(source, None, CONFIG), student_notebook(source, CONFIG)):
        # without outputs (no build): every asserting cell is a check
        labels = _labelled_checks(source)
        assert folding_failures(nb, set(labels)) == []
        folded = [c for c in nb.cells if CHECK_TAG in c.metadata.get("tags", [])]
        assert len(folded) >= len(labels)
        markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
        assert markdown.count("<details open><summary><em>Proof.</em>") == n_proofs


def test_the_rule_finds_an_open_check_and_a_lost_label():
    md = nbformat.v4.new_markdown_cell('Then.\n\n<a id="chk-one"></a>')
    check = nbformat.v4.new_code_cell("assert 1 + 1 == 2")
    figure = nbformat.v4.new_code_cell(
        "fig\nassert fig",
        outputs=[
            nbformat.v4.new_output(
                "display_data", data={"image/png": "iVBO", "text/plain": "Figure: x"}
            )
        ],
    )
    nb = nbformat.v4.new_notebook(cells=[md, check, figure])
    assert folding_failures(nb, {"chk-one"}) == ["cell 1: a check that is not folded"]
    assert fold_checks(nb) == 1  # the figure stays open
    assert folding_failures(nb, {"chk-one"}) == []
    # the label folded away with the cell above it
    md.metadata["jupyter"] = {"source_hidden": True}
    assert folding_failures(nb, {"chk-one"}) == ["cell 1: the label chk-one is hidden"]
    # the label two cells above its check: a link lands on the wrong cell
    md.metadata["jupyter"] = {}
    nb.cells.insert(1, nbformat.v4.new_markdown_cell("More text."))
    assert folding_failures(nb, {"chk-one"}) == [
        "the label chk-one is not above its check"
    ]


@pytest.mark.skipif(
    not (BUILT / "notebooks").exists(), reason="make book writes the notebooks"
)
@pytest.mark.parametrize("source", CHAPTERS, ids=lambda p: p.stem)
def test_the_built_notebook_folds_the_checks_the_page_folds(source):
    nb = nbformat.read(BUILT / "notebooks" / f"{source.stem}.ipynb", as_version=4)
    assert folding_failures(nb, _labelled_checks(source)) == []
    page = (BUILT / "book" / f"{source.stem}.html").read_text(encoding="utf-8")
    n_page = len(re.findall(r'class="[^"]*\battnlib-check\b', page))
    # a check that shows a progress bar stays open on the page (the bar is drawn
    # there) and folds in the notebook (which drops the bar: it redraws when run)
    from tools.check_html import executed_notebook

    executed = executed_notebook(source, ROOT / "_build")
    with_bar = sum(
        asserts("".join(c["source"]))
        and any(
            "application/vnd.jupyter.widget-view+json" in o.get("data", {})
            and "image/png" not in o.get("data", {})
            for o in c.get("outputs", [])
        )
        and not set(c["metadata"].get("tags", [])) & {"remove-output", "remove-cell"}
        for c in executed["cells"]
        if c["cell_type"] == "code"
    )
    # the page folds a solution's asserting code as a check; the notebook folds
    # it as a solution
    n_nb = sum(
        CHECK_TAG in c.metadata.get("tags", [])
        or (
            "solution" in c.metadata.get("tags", [])
            and c.cell_type == "code"
            and asserts(c.source)
            and not any(set(o.get("data", {})) - {"text/plain"} for o in c.outputs)
        )
        for c in nb.cells
    )
    assert n_nb == n_page + with_bar, (n_nb, n_page, with_bar)
