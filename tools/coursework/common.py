"""Paths, errors, the grader's settings and small helpers shared by the coursework
commands. The grader is the package ``gradebox`` (``gradebox/`` at the top of the
repository); its errors (``CourseworkError`` here), its check cell and its number
format are the book's too."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from gradebox.common import CHECK_CELL, Settings, fmt  # noqa: F401
from gradebox.common import GradingError as CourseworkError  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]
MASTERS = ROOT / "book" / "assignments"
RUBRICS = MASTERS / "rubrics"
BUILD = ROOT / "_build" / "assignments"
GRADES = ROOT / "_build" / "grades"
GENERATED = ROOT / "book" / "coursework" / "generated"
STUDENT = ROOT / "_build" / "student"
GUIDE = "book/coursework/guide"

# Packages the autograder needs besides otter, at the versions pinned for the book.
RUNTIME = ("numpy", "scipy", "sympy", "matplotlib")
PYTHON_VERSION = "3.11"
# Where Gradescope unpacks the autograder zip (otter puts autograder_files in files/).
GRADESCOPE_FILES = "/autograder/source/files"


def grading_settings():
    """The book's settings of the grader (:class:`gradebox.Settings`): attnlib of
    this checkout is the library under test, and the install cell the book writes
    at the top of its notebooks (which uses importlib, subprocess and urllib to
    install attnlib's wheel) is a cell of the book's own that the scan passes
    over (:func:`bookext.notebooks.is_install_cell`: that exact cell only, with
    the book's settings), imported by the tester from this checkout. The
    grader's caches go in ``_build``."""
    return Settings(
        library="attnlib",
        library_path=str(ROOT / "attnlib"),
        exempt_hooks=("bookext.notebooks:is_install_cell",),
        cache=str(ROOT / "_build"),
        pythonpath=(str(ROOT),),
    )


def env() -> dict[str, str]:
    """Environment of the subprocesses: this checkout's attnlib, headless plots."""
    out = dict(os.environ)
    paths = [str(ROOT)] + [p for p in out.get("PYTHONPATH", "").split(os.pathsep) if p]
    out["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    out["MPLBACKEND"] = "Agg"
    out.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    return out


def run(cmd: list[str], cwd: Path | None = None, what: str = "") -> str:
    """Run a command; its standard output, or a :class:`CourseworkError` with the
    last lines of what it printed."""
    r = subprocess.run(
        cmd, cwd=cwd, env=env(), capture_output=True, text=True, check=False
    )
    if r.returncode != 0:
        tail = "\n".join((r.stdout + r.stderr).strip().splitlines()[-40:])
        raise CourseworkError(f"{what or cmd[0]} failed (exit {r.returncode}):\n{tail}")
    return r.stdout


def write_if_changed(path: Path, data: bytes | str) -> bool:
    """Write ``data`` unless the file already holds it; True if written."""
    raw = data.encode() if isinstance(data, str) else data
    if path.exists() and path.read_bytes() == raw:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(raw)
    return True


def pins() -> dict[str, str]:
    """The exact versions of ``requirements.txt``, by lower-case package name."""
    out = {}
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        m = re.match(r"^([A-Za-z0-9_.\-]+)==(\S+)", line.strip())
        if m:
            out[m.group(1).lower()] = m.group(2)
    return out
