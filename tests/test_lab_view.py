"""The chapters carry what JupyterLab needs to show them as the book does
(:mod:`tools.lab_view`): the book's macros in a frontmatter cell, the solutions
hidden. The browser checks the result in ``test_lab_browser.py``."""

from __future__ import annotations

import json
import re

import jupytext
import pytest
import yaml

from bookext.notebooks import reader_notebook, strip_solutions, student_notebook
from tools import lab_view

CHAPTERS = lab_view.chapters()
MACROS = lab_view.book_macros()


def test_every_chapter_is_as_lab_view_writes_it():
    assert len(CHAPTERS) >= 8
    assert lab_view.main(["--check"]) == 0, "run python -m tools.lab_view"


def test_the_macros_are_those_of_the_config():
    assert {"\\R", "\\S"} <= set(MACROS)


@pytest.mark.parametrize("source", CHAPTERS, ids=lambda p: p.stem)
def test_frontmatter_cell_and_hidden_solutions(source):
    text = source.read_text(encoding="utf-8")
    nb = jupytext.reads(text, "md:myst")
    first = nb.cells[0]
    assert first.cell_type == "markdown" and first.metadata["tags"] == ["remove-cell"]
    fence = first.source.splitlines()
    assert fence[0] == "```yaml" and fence[-1] == "```"
    assert yaml.safe_load("\n".join(fence[1:-1]))["math"] == MACROS
    # from a solution's start to its end every cell is hidden, and nothing else
    inside, hidden = False, 0
    for cell in nb.cells[1:]:
        starts = "{solution-start}" in cell.source
        inside = inside or starts
        folded = cell.metadata.get("jupyter", {})
        if inside and (starts or cell.source.strip() != "```{solution-end}\n```"):
            assert folded.get("source_hidden") is True, cell.source[:80]
            if cell.cell_type == "code":
                assert folded.get("outputs_hidden") is True
            else:
                assert cell.source.startswith("% Solution to ")
            hidden += 1
        else:
            assert not folded, cell.source[:80]
        if "{solution-end}" in cell.source:
            inside = False
    assert hidden >= 2 * text.count("{solution-start}")


def test_write_and_strip_are_inverse_and_idempotent():
    text = (CHAPTERS[0]).read_text(encoding="utf-8")
    bare = lab_view.strip(text)
    assert "remove-cell" not in bare and "source_hidden" not in bare
    assert "% Solution" not in bare and "\n+++" not in bare
    assert lab_view.write(bare, MACROS) == text
    assert lab_view.write(text, MACROS) == text


@pytest.mark.parametrize("source", CHAPTERS[:1], ids=lambda p: p.stem)
def test_notebooks_and_student_text_leave_the_lab_cells_out(source):
    text = source.read_text(encoding="utf-8")
    assert strip_solutions(text) == strip_solutions(lab_view.strip(text)).replace(
        "\n---\n\n", "\n---\n\n" + "\n".join(_frontmatter_cell()) + "\n\n", 1
    )
    for nb in (student_notebook(source), reader_notebook(source, None)):
        every = "\n".join(c.source for c in nb.cells)
        assert "math:" not in every and "% Solution" not in every
        assert "<details><summary>Solution to Exercise</summary>\n\n\n" not in every


def _frontmatter_cell() -> list[str]:
    return [lab_view.FRONTMATTER_MARK, "", *lab_view.frontmatter(MACROS), "", "+++"]


def test_the_citations_extension_is_current():
    from tools import lab_citations

    assert lab_citations.main(["--check"]) == 0, "run python -m tools.lab_citations"
    package = json.loads((lab_citations.FOLDER / "package.json").read_text())
    assert package["name"] == lab_citations.NAME
    script = lab_citations.FOLDER / package["jupyterlab"]["_build"]["load"]
    text = script.read_text()
    assert f'"{lab_citations.NAME}"' in text and "Citation Not Found" in text
    assert (script.parent / "citations.json").exists() and "citations.json" in text
    labels = json.loads((script.parent / "citations.json").read_text())
    assert labels["GLPR2023"]["names"] == "Geshkovski et al."
    assert labels["GLPR2023"]["year"] == "2025"


def test_cite_t_has_one_key_at_a_time():
    # the extension tells {cite:t}`a` from {cite}`a,b` by the number of keys
    for source in CHAPTERS:
        for keys in re.findall(r"\{cite:t\}`([^`]*)`", source.read_text("utf-8")):
            assert "," not in keys and ";" not in keys, (source.name, keys)


def test_make_lab_serves_the_extension():
    makefile = (lab_view.ROOT / "Makefile").read_text()
    assert (
        "--LabApp.extra_labextensions_path=$(CURDIR)/binder/labextensions" in makefile
    )
    assert (
        "binder/labextensions" in (lab_view.ROOT / "binder" / "postBuild").read_text()
    )


# TeX commands of KaTeX (JupyterLab's renderer) that the book's macros would shadow
# with another meaning: \S is KaTeX's section sign, the book's sphere
KATEX_OWN = {"\\S"}


def test_pages_without_a_macro_cell_use_no_macro_that_katex_reads_otherwise():
    """The introduction and the list of results open in JupyterLab as Markdown with no
    frontmatter cell: they write the sphere out (\\mathbb{S}), or it would show as §."""
    pages = sorted(set((lab_view.ROOT / "book").glob("*.md")) - set(CHAPTERS))
    assert {p.stem for p in pages} >= {"intro", "results"}
    used = {
        (p.stem, m)
        for p in pages
        for m in re.findall(r"\\[A-Za-z]+", p.read_text("utf-8"))
        if m in set(MACROS) & KATEX_OWN
    }
    assert not used, f"write these out in full: {sorted(used)}"
