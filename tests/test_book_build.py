"""A chapter cell that writes to stderr (a RuntimeWarning, a text progress bar) fails
the book build, as a failing cell does.

A one-page book with the execution settings of ``_config.yml`` is built with the
command of the Makefile's ``book`` target: it builds while its cell is quiet, and
fails once the cell warns.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from .helpers import MYST_HEADER

# builds a small book twice: a slow lane (make test-fast skips it)
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
JUPYTER_BOOK = Path(sys.executable).parent / "jupyter-book"
HEADER = (
    MYST_HEADER
    + """# Page

```{code-cell} ipython3
import numpy as np

np.log(np.array([%s, 1.0]))
```
"""
)


def _book_flags() -> list[str]:
    recipe = re.search(r"jupyter-book build \. (.*)", (ROOT / "Makefile").read_text())
    assert recipe, "the Makefile's book target runs no 'jupyter-book build .'"
    return recipe.group(1).split()


def _build(book: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    return subprocess.run(
        [str(JUPYTER_BOOK), "build", str(book), *_book_flags()],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_book_builds_with_warnings_as_errors_from_a_fresh_environment():
    flags = _book_flags()
    assert "-W" in flags  # warnings (stderr output among them) are errors
    assert "--all" in flags  # every page is read again, so none is passed over


def test_a_cell_writing_to_stderr_fails_the_build(tmp_path):
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert config["execute"]["stderr_output"] in {"warn", "error", "severe"}
    sphinx = config["sphinx"]["config"]
    tiny = {
        "title": "t",
        "only_build_toc_files": True,
        "execute": config["execute"],
        "sphinx": {
            "config": {
                k: v
                for k, v in sphinx.items()
                if k.startswith("nb_execution") or k == "suppress_warnings"
            }
        },
    }
    (tmp_path / "_config.yml").write_text(yaml.safe_dump(tiny))
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: page\n")
    page = tmp_path / "page.md"
    page.write_text(HEADER % "2.0")
    quiet = _build(tmp_path)
    assert quiet.returncode == 0, quiet.stdout + quiet.stderr
    page.write_text(HEADER % "0.0")  # log(0): RuntimeWarning on stderr
    loud = _build(tmp_path)
    assert loud.returncode != 0
    assert "stderr was found in the cell outputs" in loud.stdout + loud.stderr
