"""The Makefile's rules that the pages and the cache depend on.

A text check of two recipes whose regressions no other test would notice: the book's
kernels must not inherit ``MPLBACKEND=Agg`` (figures would become ``<Figure ...>``
text), and the execution cache must be dropped when the environment changes.
"""

import re
from pathlib import Path

MAKEFILE = (Path(__file__).resolve().parents[1] / "Makefile").read_text()


def _recipe(target: str) -> tuple[str, str]:
    """Prerequisites and recipe of the first rule of ``target``."""
    m = re.search(rf"^{re.escape(target)}:([^\n]*)\n((?:\t[^\n]*\n)*)", MAKEFILE, re.M)
    assert m, f"no rule for {target}"
    return m.group(1), m.group(2)


def test_the_book_is_built_without_mplbackend_and_tests_run_with_agg():
    _, book = _recipe("book")
    assert "jupyter-book build" in book and "env -u MPLBACKEND" in book
    assert "MPLBACKEND=Agg" not in book
    _, test = _recipe("test")
    assert "MPLBACKEND=Agg" in test


def test_the_execution_cache_is_dropped_when_the_environment_changes():
    prereqs, recipe = _recipe("$(LIBSTAMP)")
    for dep in ("attnlib", "requirements.txt", "pyproject.toml", "Makefile"):
        assert dep in prereqs, dep
    assert "_build/.jupyter_cache" in recipe
    book_prereqs, _ = _recipe("book")
    assert "$(LIBSTAMP)" in book_prereqs
