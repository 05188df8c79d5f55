"""``python -m tools.coursework grade`` (``make grade``): the grader
(:mod:`gradebox`) with the book's settings, its masters and its build."""

from __future__ import annotations

from pathlib import Path

from gradebox import sandbox
from gradebox.grade import grade as grade_with
from gradebox.grades import Grade

from .common import BUILD, GRADES, CourseworkError, grading_settings
from .masters import master_paths


def grade(
    slug: str,
    folder: Path,
    *,
    build_root: Path = BUILD,
    out: Path | None = None,
    master: Path | None = None,
    limits: sandbox.Limits | None = None,
    **options,
) -> list[Grade]:
    """Grade every file of ``folder`` against the book's assignment ``slug``
    (:func:`gradebox.grade.grade`, whose ``options`` these are: ``timeout``,
    ``jobs``, ``unsafe``, ``wait``, ``force``, ``regrade``, ``follow_links``).

    Parameters
    ----------
    slug : str
        The assignment (a master's file stem), already built (``make assignments``).
    folder : Path
        Submissions: ``<student>.ipynb`` files, or one folder per student.
    build_root : Path
        Where the assignment was built (``_build/assignments``).
    out : Path, optional
        Output folder (default ``_build/grades/<slug>``).
    master : Path, optional
        The assignment's master (default ``book/assignments/<slug>.md``).
    limits : gradebox.sandbox.Limits, optional
        All limits (``timeout`` sets their ``cpu``).
    """
    built = Path(build_root) / slug
    masters = master_paths()
    if not (built / "questions.json").exists():
        raise CourseworkError(
            f"no build of {slug!r} at {built}: run `make assignments` "
            f"(masters: {sorted(masters)})"
        )
    if master is None and slug not in masters:
        raise CourseworkError(f"no master for {slug!r} (have: {sorted(masters)})")
    return grade_with(
        Path(master) if master is not None else masters[slug],
        folder,
        out=Path(out) if out is not None else GRADES / slug,
        built=built,
        limits=limits,
        settings=grading_settings(),
        **options,
    )
