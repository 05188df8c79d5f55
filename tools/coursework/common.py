"""Paths, errors and small helpers shared by the coursework commands."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

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


# A cell of the student's notebook, after otter's: grader.check shows a failing test
# in a few lines (its hint, the line that failed, the values that line compared)
# instead of doctest's transcript of the whole test. The grader's scan passes over
# this exact text (any other use of otter's internals is flagged).
CHECK_CELL = """\
# grader.check shows a failing test in a few lines: its hint, the line that failed
# and the values that line compared
def _short_check(name, doctest_string, env):
    import ast, doctest
    for example in doctest.DocTestParser().get_examples(doctest_string, name):
        try:
            exec(compile(example.source, name, "exec"), env)
        except Exception as exc:
            hint = str(exc).strip() if isinstance(exc, AssertionError) else ""
            hint = hint or f"{type(exc).__name__}: {exc}".rstrip(": ")
            line = example.source.strip().splitlines()[0]
            text = hint.splitlines()[:3] + [f"failed: {line[:150]}"]
            try:
                test = ast.parse(example.source).body[0].test
                if isinstance(test, ast.Compare):
                    parts = [test.left, *test.comparators]
                else:
                    parts = test.args[:2]
                simple = (ast.Name, ast.Attribute, ast.Subscript, ast.Constant)
                for part in parts:
                    if isinstance(part, ast.Constant) or not all(
                        isinstance(n, (*simple, ast.expr_context))
                        for n in ast.walk(part)
                    ):
                        continue
                    value = " ".join(repr(eval(ast.unparse(part), env)).split())
                    text.append(f"{ast.unparse(part)} = {value[:150]}")
            except Exception:
                pass
            return False, "\\n".join(text[:6])
    return True, ""


try:
    import otter.test_files.ok_test as _ok_test

    _ok_test.run_doctest = _short_check
except ImportError:
    pass
"""


def exempt_cells() -> list:
    """Predicates of the book's own cells that the grader's scan passes over
    (:data:`tools.coursework.scan.EXEMPT_CELLS` holds the grader's own): the
    install cell the book writes at the top of its notebooks, which uses
    importlib, subprocess and urllib to install attnlib's wheel
    (:func:`bookext.notebooks.is_install_cell`: that exact cell only, with the
    book's settings). The book's rule is passed in here, so that the rest of the
    grader does not import the book's extension."""
    try:
        from bookext.notebooks import is_install_cell
    except ImportError:  # the grader without the book
        return []
    return [is_install_cell]


class CourseworkError(RuntimeError):
    """A master, a build or a command-line argument is not usable."""


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


def fmt(x: float | None) -> str:
    """A number of points as written in the gradebook (``2``, ``0.5``, empty)."""
    return "" if x is None else f"{x:g}"
