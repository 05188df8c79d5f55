"""gradebox stands alone: every module it imports is Python's own, one of its
declared dependencies, an optional package it uses when installed, or its own."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
SOURCE = HERE / "src" / "gradebox"
# used when installed (values of that kind, figures), or stood in for (otter)
OPTIONAL = {"pandas", "matplotlib", "otter"}
# the module the harness imports beside itself inside the sandbox
SANDBOX_SIBLINGS = {"wire"}
# distribution names whose import name differs
IMPORT_NAMES = {"pyyaml": "yaml", "ipython": "IPython"}


def imported_modules(root: Path = SOURCE) -> dict[str, set[str]]:
    """Top-level modules imported by each file of ``root`` (absolute imports,
    also those inside functions)."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
        out[path.name] = found
    return out


def declared() -> set[str]:
    meta = tomllib.loads((HERE / "pyproject.toml").read_text())["project"]
    names = set()
    for req in meta["dependencies"]:
        name = re.match(r"[A-Za-z0-9_.\-]+", req).group(0).lower()
        names.add(IMPORT_NAMES.get(name, name))
    return names


def strangers(modules: dict[str, set[str]]) -> dict[str, set[str]]:
    allowed = set(sys.stdlib_module_names) | declared() | OPTIONAL | SANDBOX_SIBLINGS
    allowed |= {"gradebox", "__future__"}
    out = {}
    for name, found in modules.items():
        bad = found - allowed
        if bad:
            out[name] = bad
    return out


def test_gradebox_imports_only_python_its_dependencies_and_itself():
    modules = imported_modules()
    assert {"grade.py", "tester.py", "sandbox.py", "harness.py"} <= set(modules)
    assert "IPython" in modules["harness.py"] and "yaml" in declared()
    assert strangers(modules) == {}


def test_an_import_of_the_book_would_be_found(tmp_path):
    for path in SOURCE.glob("*.py"):
        (tmp_path / path.name).write_text(path.read_text(encoding="utf-8"))
    assert strangers(imported_modules(tmp_path)) == {}
    (tmp_path / "scan.py").write_text(
        (tmp_path / "scan.py").read_text(encoding="utf-8")
        + "\n\ndef rule():\n    from bookext.notebooks import is_install_cell\n"
    )
    (tmp_path / "tester.py").write_text(
        (tmp_path / "tester.py").read_text(encoding="utf-8") + "\nimport attnlib\n"
    )
    assert strangers(imported_modules(tmp_path)) == {
        "scan.py": {"bookext"},
        "tester.py": {"attnlib"},
    }
