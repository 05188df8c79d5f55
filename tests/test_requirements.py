"""The pinned environment installs on every Python the project accepts.

``requirements.txt`` pins every package of the environment, and ``pyproject.toml``
says which Pythons the project accepts (``requires-python``). Debian 12's Python is
3.11.2: a pin whose release asks for 3.11.5 (soupsieve 3.0.2 and later) made
``make book`` fail there with "No matching distribution found", though it passed
wherever Python was newer.
"""

from __future__ import annotations

import importlib.metadata as md
import re
import tomllib
from pathlib import Path

from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]


def _pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        m = re.match(r"^([A-Za-z0-9_.\-]+)(\[[^\]]*\])?==([^\s;#]+)", line.strip())
        if m:
            pins[canonicalize_name(m.group(1))] = m.group(3)
    return pins


def _oldest_python() -> Version:
    """The oldest Python that ``requires-python`` admits (``>=3.11``: 3.11.0)."""
    spec = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "requires-python"
    ]
    floors = [s.version for s in SpecifierSet(spec) if s.operator in (">=", "~=")]
    assert floors, f"requires-python names no lower bound: {spec}"
    return Version(max(floors, key=Version))


def _refused(pins: dict[str, str], oldest: Version) -> list[str]:
    out = []
    for name, version in pins.items():
        dist = md.distribution(name)
        assert dist.version == version, (
            f"{name}: {dist.version} installed, {version} pinned"
        )
        needs = dist.metadata.get("Requires-Python")
        if needs and not SpecifierSet(needs).contains(oldest, prereleases=True):
            out.append(f"{name}=={version} needs Python {needs}")
    return out


def test_every_pin_installs_on_the_oldest_python_the_project_accepts():
    pins = _pins()
    assert len(pins) > 100 and "numpy" in pins
    oldest = _oldest_python()
    assert oldest == Version("3.11"), oldest
    assert _refused(pins, oldest) == []


def test_the_check_sees_a_pin_that_needs_a_newer_python():
    """packaging asks for a Python newer than 3.7: on 3.7 the check refuses it."""
    pins = {"packaging": md.version("packaging")}
    assert _refused(pins, Version("3.11")) == []
    refused = _refused(pins, Version("3.7"))
    assert refused and refused[0].startswith("packaging=="), refused
