"""The README's one-question example, graded in sandboxes: the solution gets full
marks, the unchanged student notebook zero, and the feedback says why."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from gradebox import GradingError, Settings, sandbox
from gradebox.grade import grade

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "squares"
LIMITS = sandbox.Limits(cpu=60, wall_s=600, sandbox_memory_mb=2048)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sandbox.bwrap() is None, reason="bubblewrap is not installed"),
]


def test_the_example_grades_solution_full_and_blank_zero(tmp_path):
    out = tmp_path / "grades"
    grades = grade(
        EXAMPLE / "squares.ipynb",
        EXAMPLE / "submissions",
        out=out,
        jobs=1,
        limits=LIMITS,
        settings=Settings(cache=str(tmp_path / "cache")),
    )
    by = {g.student: g for g in grades}
    assert sorted(by) == ["blank", "solution"]
    assert (by["solution"].status, by["solution"].total) == ("graded", 2.0)
    assert (by["blank"].status, by["blank"].total) == ("graded", 0.0)
    rows = {r["student"]: r for r in csv.DictReader((out / "gradebook.csv").open())}
    assert rows["solution"]["q1"] == "2" and rows["blank"]["total"] == "0"
    feedback = (out / "feedback" / rows["blank"]["feedback"]).read_text()
    assert "1 + 4 + 9 = 14" in feedback  # the public test's message
    assert "sum_of_squares(10)" not in feedback  # never a hidden test


def test_a_wrong_answer_loses_the_points_of_the_tests_it_fails(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    nb = (EXAMPLE / "submissions" / "solution.ipynb").read_text()
    # right for n = 3 (the public test), wrong for n = 10 (a hidden test)
    wrong = nb.replace("range(1, n + 1))", "range(1, n + 1)) if n < 5 else 0")
    assert wrong != nb
    (folder / "off_by_some.ipynb").write_text(wrong)
    shutil.copy(EXAMPLE / "submissions" / "solution.ipynb", folder / "right.ipynb")
    grades = grade(
        EXAMPLE / "squares.ipynb",
        folder,
        out=tmp_path / "grades",
        jobs=1,
        limits=LIMITS,
        settings=Settings(cache=str(tmp_path / "cache")),
    )
    by = {g.student: g.total for g in grades}
    assert by == {"off_by_some": 1.0, "right": 2.0}


def test_bad_arguments_are_refused(tmp_path):
    with pytest.raises(GradingError, match="no master notebook"):
        grade(tmp_path / "none.ipynb", tmp_path, out=tmp_path / "o")
    with pytest.raises(GradingError, match="must be a folder"):
        grade(EXAMPLE / "squares.ipynb", tmp_path / "none", out=tmp_path / "o")
    with pytest.raises(TypeError, match="settings must be a gradebox.Settings"):
        grade(EXAMPLE / "squares.ipynb", tmp_path, out=tmp_path / "o", settings={})
    with pytest.raises(GradingError, match="'no_such_lib' is not installed"):
        grade(
            EXAMPLE / "squares.ipynb",
            EXAMPLE / "submissions",
            out=tmp_path / "o",
            settings=Settings(library="no_such_lib"),
        )
