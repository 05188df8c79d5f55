"""The book's assignment masters: one MyST text notebook per assignment in
``book/assignments/`` (the instructor's guide, ``book/coursework/guide.md``,
describes the format). Parsing a master is the grader's (:mod:`gradebox.masters`,
otter-grader's format); the book adds where its masters are."""

from __future__ import annotations

from pathlib import Path

from gradebox.masters import (  # noqa: F401
    EXPECTED_MARK,
    Master,
    Question,
    expected_cell,
    expected_values,
    parse_master,
    secrets,
    setup_plan,
)

from .common import MASTERS


def master_paths() -> dict[str, Path]:
    """The masters in ``book/assignments/``, by slug (the file stem), sorted."""
    return {p.stem: p for p in sorted(MASTERS.glob("*.md"))}
