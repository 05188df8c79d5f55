"""An assignment page opens with the assignment's text: the grader's set-up (otter's
cell that makes ``grader`` and the cell that shortens its messages) stays in the
student notebook and is not shown on the page."""

import json

import nbformat

from tools.check_html import grader_setup_failures
from tools.coursework import pages
from tools.coursework.common import CHECK_CELL


def _built(tmp_path, slug="a9_demo"):
    """A built assignment as tools.coursework.build leaves it: otter's first cell,
    the CHECK_CELL after it, then the assignment's text and a question."""
    built = tmp_path / slug
    (built / "student").mkdir(parents=True)
    info = {
        "title": "Demo",
        "points": 2,
        "questions": [{"name": "q1", "points": 2, "manual": False}],
    }
    (built / "questions.json").write_text(json.dumps(info))
    check = nbformat.v4.new_code_cell(CHECK_CELL)
    check.id = "short-check-feedback"
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(
                'import otter\ngrader = otter.Notebook("a.ipynb")'
            ),
            check,
            nbformat.v4.new_markdown_cell(
                "# Demo assignment\n\nThe flow of two tokens."
            ),
            nbformat.v4.new_markdown_cell("**Question 1.** Compute the angle."),
            nbformat.v4.new_code_cell("angle = ...  # your answer"),
            nbformat.v4.new_code_cell('grader.check("q1")'),
        ]
    )
    nbformat.write(nb, built / "student" / f"{slug}.ipynb")
    return built, slug


def test_the_page_opens_with_the_assignments_text(tmp_path):
    built, slug = _built(tmp_path)
    page = pages._page(slug, built, tmp_path)
    assert page.startswith("# Demo assignment\n")
    # after the download line and the table of points: the assignment's text
    body = page.split("| total |", 1)[1].split("\n", 2)[2].lstrip()
    assert body.startswith("The flow of two tokens."), body[:80]
    assert "_short_check" not in page and "otter" not in page
    assert "```python\nangle = ..." in page  # the question's stub stays
    # the notebook a student downloads keeps the set-up
    nb = nbformat.read(built / "student" / f"{slug}.ipynb", as_version=4)
    assert any(c.source == CHECK_CELL for c in nb.cells)


def test_the_set_up_cell_is_recognised_by_its_text_or_its_id():
    assert pages.grader_setup({"source": CHECK_CELL, "id": "x"})
    assert pages.grader_setup({"source": "changed", "id": pages.CHECK_CELL_ID})
    assert pages.grader_setup({"source": ["grader = otter.Notebook()"]})
    assert not pages.grader_setup({"source": "x = 1", "id": "y"})


def test_the_page_check_fails_a_page_that_shows_the_set_up(tmp_path, monkeypatch):
    built, slug = _built(tmp_path)
    monkeypatch.setattr(pages, "grader_setup", lambda cell: False)  # the old page
    shown = pages._page(slug, built, tmp_path)
    assert "def _short_check(" in shown
    assert grader_setup_failures(shown, "a9.html")


def test_the_page_check_reads_the_folder_the_pages_are_written_to():
    from tools.check_html import ASSIGNMENT_PAGES
    from tools.coursework.common import GENERATED, ROOT

    assert (GENERATED / "assignments").relative_to(ROOT).parts == ASSIGNMENT_PAGES
