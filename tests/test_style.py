"""The library, tests and benchmarks are ruff clean, and the core imports headless."""

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PATHS = ["attnlib", "tests", "benchmarks", "book/figures", "tools", "bookext"]


def _ruff(*args):
    exe = shutil.which("ruff", path=str(Path(sys.executable).parent)) or "ruff"
    return subprocess.run(
        [exe, *args, *PATHS], cwd=ROOT, capture_output=True, text=True
    )


def test_ruff_check():
    r = _ruff("check")
    assert r.returncode == 0, r.stdout + r.stderr


def test_ruff_format():
    r = _ruff("format", "--check")
    assert r.returncode == 0, r.stdout + r.stderr


def test_core_does_not_import_plotting_or_sympy():
    code = (
        "import sys, attnlib; "
        "bad = [m for m in ('matplotlib', 'ipywidgets', 'sympy') if m in sys.modules]; "
        "print(','.join(bad))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "", f"attnlib imports {r.stdout.strip()}"
