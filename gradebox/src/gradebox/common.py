"""Errors, settings and small helpers shared by the grader's modules.

:class:`Settings` says what a course adds to the grader: the library under test
(its name and folder: the notebooks run once with it and, for questions that ask
for code written without it, once without it), the cells of the course's own that
the scan passes over, and where the grader keeps its caches. A run sets them with
:func:`configure`; the tester, a process of its own, gets them on its command line.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path


class GradingError(RuntimeError):
    """An assignment, a setting or a command-line argument is not usable."""


def fmt(x: float | None) -> str:
    """A number of points as written in the gradebook (``2``, ``0.5``, empty)."""
    return "" if x is None else f"{x:g}"


_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Settings:
    """What a course adds to the grader.

    Parameters
    ----------
    library : str, optional
        The top-level module name of the library under test (``"attnlib"``), or
        None for assignments that use no library of the course's own. Its
        functions are fingerprinted (a copy of one in a notebook is flagged), and
        questions marked ``implement:`` or ``derive:`` are tested in a second
        sandbox where the library is absent.
    library_path : str, optional
        The library's package folder (default: where Python finds ``library``,
        found without importing it).
    exempt_patterns : tuple of str
        Regular expressions: a code cell that matches one in full (after
        stripping) is a cell of the course's own, which the scan passes over.
    exempt_hooks : tuple of str
        ``"module:function"`` predicates ``function(source) -> bool`` with the
        same meaning, imported by the tester (e.g. the book's rule for its install
        cell).
    cache : str, optional
        Folder of the grader's caches (matplotlib's font list, the seccomp
        program); default ``$XDG_CACHE_HOME/gradebox`` or ``~/.cache/gradebox``.
    pythonpath : tuple of str
        Folders put first on the tester's ``PYTHONPATH`` (where ``exempt_hooks``
        and the master's own imports are found).
    """

    library: str | None = None
    library_path: str | None = None
    exempt_patterns: tuple[str, ...] = ()
    exempt_hooks: tuple[str, ...] = ()
    cache: str | None = None
    pythonpath: tuple[str, ...] = field(default_factory=tuple)

    def __post_init__(self):
        if self.library is not None and (
            not isinstance(self.library, str) or not _NAME.match(self.library)
        ):
            raise ValueError(
                f"library must be a top-level module name such as 'attnlib', got "
                f"{self.library!r}"
            )
        for name in ("exempt_patterns", "exempt_hooks", "pythonpath"):
            value = getattr(self, name)
            if isinstance(value, str) or not all(isinstance(v, str) for v in value):
                raise TypeError(f"{name} must be a tuple of strings, got {value!r}")
            object.__setattr__(self, name, tuple(value))
        for pattern in self.exempt_patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(
                    f"exempt_patterns: {pattern!r} is not a regular expression: {exc}"
                ) from None
        for hook in self.exempt_hooks:
            module, _, func = hook.partition(":")
            if not module or not func:
                raise ValueError(
                    f"exempt_hooks: expected 'module:function', got {hook!r}"
                )

    def to_json(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> "Settings":
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError(f"settings must be a JSON object, got {text[:80]!r}")
        for key in ("exempt_patterns", "exempt_hooks", "pythonpath"):
            data[key] = tuple(data.get(key) or ())
        return cls(**data)

    def package(self) -> Path | None:
        """The library's package folder, or None (no library, or not found)."""
        if self.library is None:
            return None
        if self.library_path:
            path = Path(self.library_path)
            if not path.is_dir():
                raise GradingError(
                    f"library_path {self.library_path!r} of {self.library!r} is "
                    "not a folder"
                )
            return path.resolve()
        import importlib.util

        try:
            spec = importlib.util.find_spec(self.library)
        except (ImportError, ValueError):
            spec = None
        if spec is None or not spec.submodule_search_locations:
            raise GradingError(
                f"the library under test {self.library!r} is not installed as a "
                "package here: install it, or give library_path"
            )
        return Path(list(spec.submodule_search_locations)[0]).resolve()

    def cache_dir(self) -> Path:
        if self.cache:
            return Path(self.cache)
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        return Path(base) / "gradebox"

    def exempt_rules(self) -> list:
        """The predicates of :attr:`exempt_patterns` and :attr:`exempt_hooks`."""
        import importlib

        rules = []
        for pattern in self.exempt_patterns:
            rx = re.compile(pattern)
            rules.append(lambda source, rx=rx: rx.fullmatch(source.strip()) is not None)
        for hook in self.exempt_hooks:
            module, _, name = hook.partition(":")
            try:
                func = getattr(importlib.import_module(module), name)
            except (ImportError, AttributeError) as exc:
                raise GradingError(
                    f"exempt_hooks: cannot use {hook!r}: {exc}"
                ) from None
            if not callable(func):
                raise GradingError(f"exempt_hooks: {hook!r} is not callable")
            rules.append(func)
        return rules


_CURRENT = [Settings()]


def configure(settings: Settings) -> Settings:
    """Make ``settings`` those of this process; the previous ones."""
    if not isinstance(settings, Settings):
        raise TypeError(
            f"settings must be a gradebox.Settings, got {type(settings).__name__}"
        )
    previous = _CURRENT[0]
    _CURRENT[0] = settings
    return previous


def current() -> Settings:
    """The settings of this process (:func:`configure`)."""
    return _CURRENT[0]


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
