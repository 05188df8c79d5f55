"""gradebox installs on its own: in an empty virtual environment, from this
folder, with no checkout on the path and the working folder elsewhere, the
``gradebox`` command grades the README's example."""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from gradebox import sandbox

PACKAGE = Path(__file__).resolve().parents[1]


def _install(python: Path, package: Path) -> None:
    """``pip install package`` into the environment of ``python`` (with uv where
    this environment has it: the same packages, from its cache)."""
    try:
        import uv  # noqa: F401

        cmd = [sys.executable, "-m", "uv", "pip", "install", "--quiet"]
        cmd += ["--native-tls", "--python", str(python), str(package)]
    except ImportError:
        cmd = [str(python), "-m", "pip", "install", "--quiet"]
        cmd += ["--disable-pip-version-check", str(package)]
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")
    }
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]


@pytest.mark.slow
@pytest.mark.skipif(sandbox.bwrap() is None, reason="bubblewrap is not installed")
def test_the_gradebox_command_grades_the_example_in_an_empty_venv(tmp_path):
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    # a copy of the working tree's package (building it writes build/ beside it)
    source = tmp_path / "gradebox"
    shutil.copytree(
        PACKAGE,
        source,
        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__", ".*"),
    )
    _install(python, source)
    work = tmp_path / "course"  # outside the repository: no checkout in sight
    shutil.copytree(PACKAGE / "examples" / "squares", work)
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")
    }
    env["PATH"] = f"{env_dir / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    # where the installed command takes gradebox from, and that the book is absent
    probe = subprocess.run(
        [
            str(python),
            "-c",
            "import importlib.util as u, gradebox; print(gradebox.__file__); "
            "print([m for m in ('attnlib', 'bookext', 'tools') if u.find_spec(m)])",
        ],
        capture_output=True,
        text=True,
        cwd=work,
        env=env,
        timeout=300,
    )
    where, absent = probe.stdout.split("\n")[:2]
    assert where.startswith(str(env_dir)), probe.stdout + probe.stderr
    assert absent == "[]", probe.stdout
    r = subprocess.run(
        [
            str(env_dir / "bin" / "gradebox"),
            "grade",
            "squares.ipynb",
            "submissions",
            "--jobs",
            "1",
        ],
        capture_output=True,
        text=True,
        cwd=work,
        env=env,
        timeout=1800,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    rows = {
        row["student"]: row
        for row in csv.DictReader(
            (work / "grades" / "squares" / "gradebook.csv").open()
        )
    }
    assert (rows["solution"]["total"], rows["solution"]["status"]) == ("2", "graded")
    assert (rows["blank"]["total"], rows["blank"]["status"]) == ("0", "graded")
