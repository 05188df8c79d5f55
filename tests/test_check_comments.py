"""Every checking cell of the chapters says in its first line what would make it fail.

A code cell with an ``assert`` statement opens with one comment line
``# Fails if ...`` naming, for that cell, the wrong constant, formula or code its
assertions would catch. Static and fast: the chapters are read with jupytext, nothing
is executed.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = [
    "modelling",
    "clustering",
    "gaussian",
    "circle",
    "extremisers",
    "frontiers",
    "trained",
    "frontiers2",
]
ASSERT = re.compile(r"^\s*assert\b", re.M)
FIRST = re.compile(r"# Fails if \S.{24,}")


def has_assert(source: str) -> bool:
    """True if the cell has an ``assert`` statement (magics and display calls parse)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return bool(ASSERT.search(source))
    return any(isinstance(node, ast.Assert) for node in ast.walk(tree))


def checking_cells(chapter: str) -> list[tuple[int, str]]:
    """(index, source) of the code cells of a chapter that assert something."""
    nb = jupytext.read(ROOT / "book" / f"{chapter}.md")
    return [
        (i, cell.source)
        for i, cell in enumerate(nb.cells)
        if cell.cell_type == "code" and has_assert(cell.source)
    ]


def test_the_detector_sees_asserts_and_only_statements():
    assert has_assert("x = 1\nassert x == 1")
    assert has_assert("for i in range(2):\n    assert i < 2")
    assert not has_assert("np.testing.assert_allclose(a, b)")
    assert not has_assert('print("assert")')


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_checking_cell_opens_with_what_makes_it_fail(chapter):
    cells = checking_cells(chapter)
    assert cells, f"{chapter}: no checking cell found"
    missing = [
        f"cell {i}: {src.splitlines()[0][:70]!r}"
        for i, src in cells
        if not FIRST.fullmatch(src.splitlines()[0].rstrip())
    ]
    assert not missing, (
        f"{chapter}: checking cells without a first line '# Fails if ...': "
        + "; ".join(missing)
    )
    # one statement per cell, not a formula copied across cells
    firsts = [src.splitlines()[0].strip() for _, src in cells]
    repeated = sorted({f for f in firsts if firsts.count(f) > 1})
    assert not repeated, f"{chapter}: the same first line on several cells: {repeated}"
