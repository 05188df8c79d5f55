"""The settings a course gives the grader: checked when made, carried to the
tester as JSON, and obeyed by the scan (the course's own cells, the library under
test and copies of its code)."""

from __future__ import annotations

import textwrap

import pytest

from gradebox import GradingError, Settings, configure, current
from gradebox import scan


@pytest.fixture
def settings():
    """Restores this process's settings after a test that changes them."""
    previous = current()
    yield
    configure(previous)


def test_bad_settings_are_refused_with_the_argument_named():
    with pytest.raises(ValueError, match="library must be a top-level module name"):
        Settings(library="my lib")
    with pytest.raises(ValueError, match="library must be a top-level module name"):
        Settings(library="pkg.sub")
    with pytest.raises(TypeError, match="exempt_patterns must be a tuple of strings"):
        Settings(exempt_patterns="^import os$")
    with pytest.raises(ValueError, match="exempt_patterns: '\\(' is not a regular"):
        Settings(exempt_patterns=("(",))
    with pytest.raises(ValueError, match="exempt_hooks: expected 'module:function'"):
        Settings(exempt_hooks=("module.function",))
    with pytest.raises(TypeError, match="settings must be a gradebox.Settings"):
        configure({"library": "x"})


def test_settings_travel_as_json():
    s = Settings(
        library="mylib",
        library_path="/somewhere/mylib",
        exempt_patterns=("^%pip install mylib$",),
        exempt_hooks=("course.cells:is_install_cell",),
        cache="/tmp/cache",
        pythonpath=("/course",),
    )
    assert Settings.from_json(s.to_json()) == s
    assert Settings.from_json(Settings().to_json()) == Settings()
    with pytest.raises(ValueError, match="JSON object"):
        Settings.from_json("[1, 2]")


def test_the_library_is_found_without_importing_it(tmp_path, monkeypatch):
    (tmp_path / "mylib").mkdir()
    (tmp_path / "mylib" / "__init__.py").write_text("raise RuntimeError('imported')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert Settings(library="mylib").package() == (tmp_path / "mylib").resolve()
    assert Settings().package() is None
    with pytest.raises(GradingError, match="'no_such_library' is not installed"):
        Settings(library="no_such_library").package()
    with pytest.raises(GradingError, match="is not a folder"):
        Settings(library="mylib", library_path=str(tmp_path / "nowhere")).package()


def test_the_course_cells_are_passed_over_and_nothing_else(
    tmp_path, monkeypatch, settings
):
    install = "%pip install --quiet mylib==1.0\nimport subprocess"
    (tmp_path / "course_rules.py").write_text(
        "def is_setup(source):\n    return source.startswith('# course setup')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    setup = "# course setup\nimport importlib"
    configure(Settings())
    assert any("subprocess" in f for f in scan.scan_cells([install]))
    assert any("importlib" in f for f in scan.scan_cells([setup]))
    configure(
        Settings(
            exempt_patterns=(
                r"%pip install --quiet mylib==[0-9.]+\nimport subprocess",
            ),
            exempt_hooks=("course_rules:is_setup",),
        )
    )
    assert scan.scan_cells([install]) == []
    assert scan.scan_cells([setup]) == []
    # the same cell with a line more is the student's, and scanned
    assert any("os._exit" in f for f in scan.scan_cells([install + "\nos._exit(0)"]))
    configure(Settings(exempt_hooks=("course_rules:no_such_rule",)))
    with pytest.raises(GradingError, match="cannot use 'course_rules:no_such_rule'"):
        scan.scan_cells([setup])


def test_a_copy_of_the_library_under_test_is_flagged(tmp_path, settings):
    lib = tmp_path / "mylib"
    lib.mkdir()
    (lib / "__init__.py").write_text(
        textwrap.dedent(
            '''
            def normalise(v):
                """v divided by its length."""
                total = 0.0
                for x in v:
                    total += x * x
                length = total ** 0.5
                return [x / length for x in v]
            '''
        )
    )
    copy = textwrap.dedent(
        '''
        def unit(w):
            """My own."""
            s = 0.0
            for y in w:
                s += y * y
            n = s ** 0.5
            return [y / n for y in w]
        '''
    )
    configure(Settings())
    assert scan.scan_cells([copy]) == []
    configure(Settings(library="mylib", library_path=str(lib)))
    assert scan.scan_cells([copy]) == ["a copy of mylib's code (mylib.normalise)"]
    # importing the library under test is no finding, an unknown module is
    assert scan.scan_cells(["import mylib"]) == []
    configure(Settings())
    assert any("not installed" in f for f in scan.scan_cells(["import mylib"]))
