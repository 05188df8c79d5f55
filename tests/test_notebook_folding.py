"""In the chapters' notebooks, as on the book's pages, proofs fold (open at first) and
the cells that assert a result are folded: code and outputs hidden, tag ``check``,
with the check's label (its anchor) open just above it, where a link lands; a cell
tagged ``hide-input`` has its code folded. A built notebook folds exactly the cells
its page folds, cell by cell: the reader's all of them, the student's all but the
solutions."""

from __future__ import annotations

import re

import nbformat
import pytest

from bookext.folding import asserts
from bookext.notebooks import (
    CHECK_TAG,
    ROOT,
    chapters,
    fold_cells,
    reader_notebook,
    settings,
    student_notebook,
)

CHAPTERS = chapters(ROOT)
CONFIG = settings(ROOT)
BUILT = ROOT / "_build" / "html"
LABEL = re.compile(r"^\(([\w:.-]+)\)=\s*\n```\{code-cell\}", re.M)
ANCHOR = re.compile(r'<a id="([\w:.-]+)"></a>\s*$')


def _hidden(cell) -> set[str]:
    """The parts of a notebook's code cell that are folded."""
    hidden = cell.metadata.get("jupyter", {})
    return {
        part
        for part, key in (("input", "source_hidden"), ("output", "outputs_hidden"))
        if hidden.get(key) is True
    }


def folding_failures(nb, labels: set[str]) -> list[str]:
    """What is wrong with the folding of a notebook without outputs of its own
    checks: an asserting cell that is open (or, when it shows a picture, folds more
    than its code), a folded cell that is not a check (nor tagged ``hide-input``:
    its code only), a check whose label is not the end of an open markdown cell just
    above it."""
    failures = []
    for k, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        tags = cell.metadata.get("tags", [])
        parts = _hidden(cell)
        folded = parts and CHECK_TAG in tags
        rich = any(set(o.get("data", {})) - {"text/plain"} for o in cell.outputs)
        is_check = asserts(cell.source) and not {"solution", "hide-input"} & set(tags)
        expected = {"input"} if rich else {"input", "output"}
        if is_check and not (folded and parts == expected):
            failures.append(f"cell {k}: a check that is not folded")
        if folded and not is_check:
            failures.append(f"cell {k}: folded but not a check")
        if "hide-input" in tags and parts != {"input"}:
            failures.append(f"cell {k}: tagged hide-input, folds {sorted(parts)}")
        if parts and not (is_check or {"solution", "hide-input"} & set(tags)):
            failures.append(f"cell {k}: folded but neither a check nor tagged")
    return list(dict.fromkeys(failures + label_failures(nb, labels)))


def label_failures(nb, labels: set[str]) -> list[str]:
    """A check whose label is not the end of an open markdown cell just above it."""
    failures = []
    for k, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        folded = _hidden(cell) and CHECK_TAG in cell.metadata.get("tags", [])
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
    assert folding_failures(nb, {"chk-one"}) == [
        "cell 1: a check that is not folded",
        "cell 2: a check that is not folded",
    ]
    assert fold_cells(nb) == 2
    assert folding_failures(nb, {"chk-one"}) == []
    # the check that draws folds its code only: its figure stays in view
    assert figure.metadata["jupyter"] == {"source_hidden": True}
    # the label folded away with the cell above it
    md.metadata["jupyter"] = {"source_hidden": True}
    assert folding_failures(nb, {"chk-one"}) == ["cell 1: the label chk-one is hidden"]
    # the label two cells above its check: a link lands on the wrong cell
    md.metadata["jupyter"] = {}
    nb.cells.insert(1, nbformat.v4.new_markdown_cell("More text."))
    assert folding_failures(nb, {"chk-one"}) == [
        "the label chk-one is not above its check"
    ]


def page_folds(html: str) -> list[tuple[str, bool]]:
    """What the page folds of each of its code cells, in order: ``"all"``,
    ``"input"``, ``"output"`` or ``""``, and whether the cell is in a solution
    (a solution's dropdown folds it whole)."""
    from html.parser import HTMLParser

    cells: list[dict] = []
    stack: list[tuple[str, set[str], dict | None]] = []

    class Parser(HTMLParser):
        def handle_starttag(self, tag, attrs):
            if tag in ("br", "hr", "img", "input", "meta", "link", "wbr", "source"):
                return
            classes = set((dict(attrs).get("class") or "").split())
            cell = None
            if tag == "div" and {"cell", "docutils", "container"} <= classes:
                cell = {"classes": classes, "parts": set(), "solution": False}
                cell["solution"] = any("solution" in c for _, c, _ in stack)
                cells.append(cell)
            stack.append((tag, classes, cell))
            part = {"cell_input": "input", "cell_output": "output"}
            for name, what in part.items():
                if name in classes and any(
                    t == "details" and "hide" in c for t, c, _ in stack
                ):
                    owner = next(x for _, _, x in reversed(stack) if x is not None)
                    owner["parts"].add(what)

        def handle_endtag(self, tag):
            for k in range(len(stack) - 1, -1, -1):
                if stack[k][0] == tag:
                    del stack[k:]
                    break

    Parser().feed(html)
    out = []
    for cell in cells:
        parts = cell["parts"]
        if cell["solution"] or "attnlib-check" in cell["classes"]:
            mode = "all"
        else:
            mode = {2: "all", 1: next(iter(parts), "")}.get(len(parts), "")
        out.append((mode, cell["solution"]))
    return out


def notebook_folds(nb) -> list[str]:
    """What a notebook folds of each code cell the page shows, in order (as
    :func:`page_folds`; the first cell, which installs attnlib, is the notebook's
    own)."""
    out = []
    for cell in nb.cells:
        tags = set(cell.metadata.get("tags", []))
        if cell.cell_type != "code" or tags & {"install-attnlib", "remove-cell"}:
            continue
        parts = _hidden(cell)
        out.append("all" if len(parts) == 2 else next(iter(parts), ""))
    return out


@pytest.mark.skipif(
    not (BUILT / "notebooks").exists(), reason="make book writes the notebooks"
)
@pytest.mark.parametrize("source", CHAPTERS, ids=lambda p: p.stem)
def test_the_built_notebooks_fold_the_cells_the_page_folds(source):
    """Cell by cell: the reader's notebook folds what the page folds (the checks,
    the code of the cells tagged hide-input, the solutions), the student's the same
    but the solutions it does not have."""
    page = (BUILT / "book" / f"{source.stem}.html").read_text(encoding="utf-8")
    on_page = page_folds(page)
    assert on_page, "no code cell on the page"
    reader = nbformat.read(BUILT / "notebooks" / f"{source.stem}.ipynb", as_version=4)
    student = nbformat.read(
        BUILT / "notebooks" / f"{source.stem}-student.ipynb", as_version=4
    )
    assert label_failures(reader, _labelled_checks(source)) == []
    assert label_failures(student, _labelled_checks(source)) == []
    for nb, expected in (
        (reader, [mode for mode, _ in on_page]),
        (student, [mode for mode, in_solution in on_page if not in_solution]),
    ):
        found = notebook_folds(nb)
        assert len(found) == len(expected), (len(found), len(expected))
        differ = [
            (k, nb_mode, page_mode)
            for k, (nb_mode, page_mode) in enumerate(zip(found, expected))
            if nb_mode != page_mode
        ]
        assert differ == [], differ


def test_the_page_and_notebook_readers_tell_a_difference():
    """The comparison above fails when a notebook folds a cell the page leaves
    open, or the page folds the code of a cell the notebook leaves open."""
    html = (
        '<div class="cell attnlib-check docutils container"><details class="hide">'
        '<div class="cell_input docutils container">a</div></details></div>'
        '<div class="cell tag_hide-input docutils container"><details class="hide">'
        '<div class="cell_input docutils container">b</div></details>'
        '<div class="cell_output docutils container">o</div></div>'
        '<div class="cell docutils container">'
        '<div class="cell_input docutils container">c</div></div>'
        '<div class="solution dropdown"><div class="cell docutils container">'
        '<div class="cell_input docutils container">d</div></div></div>'
    )
    assert page_folds(html) == [
        ("all", False),
        ("input", False),
        ("", False),
        ("all", True),
    ]
    cells = [nbformat.v4.new_code_cell(x) for x in "abcd"]
    for cell, parts in zip(cells, ({"input", "output"}, {"input"}, set(), set())):
        if parts:
            from bookext.notebooks import fold

            fold(cell, parts)
    nb = nbformat.v4.new_notebook(cells=cells)
    assert notebook_folds(nb) == ["all", "input", "", ""]


def test_tags_and_shown_outputs_decide_as_on_the_page():
    """A cell tagged hide-input folds its code only (an assert in it changes
    nothing); a check that shows a progress bar folds its code only, as on the page
    (the reader's notebook drops the bar afterwards); a check whose outputs the page
    removes (remove-output) folds whole."""
    bar = nbformat.v4.new_output(
        "display_data",
        data={
            "application/vnd.jupyter.widget-view+json": {"model_id": "ab"},
            "text/plain": "HBox(children=(...))",
        },
    )
    plot = nbformat.v4.new_code_cell(
        "draw()\nassert ok", metadata={"tags": ["hide-input"]}
    )
    run = nbformat.v4.new_code_cell("run()\nassert done", outputs=[bar])
    quiet = nbformat.v4.new_code_cell(
        "run()\nassert done", outputs=[bar], metadata={"tags": ["remove-output"]}
    )
    nb = nbformat.v4.new_notebook(cells=[plot, run, quiet])
    assert fold_cells(nb) == 2
    assert plot.metadata["jupyter"] == {"source_hidden": True}
    assert CHECK_TAG not in plot.metadata["tags"]
    assert run.metadata["jupyter"] == {"source_hidden": True}
    assert CHECK_TAG in run.metadata["tags"]
    assert quiet.metadata["jupyter"] == {"source_hidden": True, "outputs_hidden": True}
    assert CHECK_TAG in quiet.metadata["tags"]
