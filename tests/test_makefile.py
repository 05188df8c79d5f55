"""The Makefile's rules that the pages and the cache depend on.

A text check of the recipes whose regressions no other test would notice: the book's
kernels must not inherit ``MPLBACKEND=Agg`` (figures would become ``<Figure ...>``
text), and the execution cache must be dropped when the environment changes, by one
rule (:mod:`tools.execution`) shared with the student edition.
"""

import re
from pathlib import Path

from tools import execution
from tools.coursework import student

ROOT = Path(__file__).resolve().parents[1]
MAKEFILE = (ROOT / "Makefile").read_text()


def _recipe(target: str) -> tuple[str, str]:
    """Prerequisites and recipe of the first rule of ``target``."""
    m = re.search(rf"^{re.escape(target)}:([^\n]*)\n((?:\t[^\n]*\n)*)", MAKEFILE, re.M)
    assert m, f"no rule for {target}"
    return m.group(1), m.group(2)


def test_the_book_is_built_without_mplbackend_and_tests_run_with_agg():
    _, book = _recipe("book")
    assert "jupyter-book build" in book and "env -u MPLBACKEND" in book
    assert "MPLBACKEND=Agg" not in book
    for target in ("test", "test-fast"):
        _, recipe = _recipe(target)
        assert "MPLBACKEND=Agg" in recipe, target


def test_test_fast_leaves_out_the_slow_lanes():
    _, recipe = _recipe("test-fast")
    assert '-m "not slow"' in recipe
    _, full = _recipe("test")
    assert "not slow" not in full  # make test runs everything CI needs


def test_the_book_and_the_student_edition_share_one_execution_rule():
    prereqs, _ = _recipe("book")
    assert "execution-cache" in prereqs
    _, recipe = _recipe("execution-cache")
    assert "-m tools.execution _build" in recipe
    assert "execution.refresh(" in Path(student.__file__).read_text()
    names = {p.relative_to(ROOT).as_posix() for p in execution.inputs()}
    for name in ("requirements.txt", "pyproject.toml", "Makefile"):
        assert name in names
    assert any(n.startswith("attnlib/") for n in names)
    # bookext sets the kernels' environment (IPYTHONDIR, ATTNLIB_STATIC) and their
    # start-up file, which changes how every figure is displayed
    assert "bookext/static.py" in names
    assert "bookext/ipython/profile_default/startup/00-describe-figures.py" in names


def test_the_execution_cache_is_dropped_when_the_environment_changes(tmp_path):
    root, build = tmp_path / "repo", tmp_path / "repo" / "_build"
    (root / "attnlib").mkdir(parents=True)
    (root / "attnlib" / "core.py").write_text("X = 1\n")
    (root / "requirements.txt").write_text("numpy==2.4.6\n")
    startup = root / "bookext" / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True)
    (root / "bookext" / "static.py").write_text("STATIC = '1'\n")
    (startup / "00-describe-figures.py").write_text("A = 1\n")

    def fill():
        for sub in execution.CACHE_DIRS:
            (build / sub).mkdir(parents=True, exist_ok=True)
            (build / sub / "entry").write_text("cached")

    fill()
    assert execution.refresh(build, root)  # no digest stored yet: dropped
    assert not any((build / sub).exists() for sub in execution.CACHE_DIRS)
    fill()
    assert not execution.refresh(build, root)  # nothing changed: kept
    assert all((build / sub / "entry").exists() for sub in execution.CACHE_DIRS)
    for path, text in [
        (root / "attnlib" / "core.py", "X = 2\n"),
        (root / "requirements.txt", "numpy==2.4.7\n"),
        (root / "attnlib" / "new.py", ""),
        (root / "bookext" / "static.py", "STATIC = '0'\n"),
        (startup / "00-describe-figures.py", "A = 2\n"),
    ]:
        path.write_text(text)
        assert execution.refresh(build, root), path.name
        assert not (build / ".jupyter_cache").exists()
        fill()
        assert not execution.refresh(build, root)
