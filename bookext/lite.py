"""The book's notebooks in the browser: ``make lite`` builds a JupyterLite site (the
Pyodide kernel) into ``<html>/lite`` from the built book.

:func:`contents` gathers what the site serves as files: every reader and student
notebook and, beside them, attnlib's pure-Python wheel from ``_downloads``. In the
browser the notebooks' first cell sees that it runs in Pyodide and installs the copy
beside it with piplite (``emfs:`` path), the dependencies from Pyodide's own
distribution. The build itself is offline (``jupyter lite build``, in its own
environment, see the Makefile); the page then loads Pyodide from its CDN, so running
the notebooks needs the network.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from attnlib._version import __version__

from .notebooks import DOWNLOADS, OUT, WHEEL


def contents(html: Path, out: Path) -> list[Path]:
    """The files of the JupyterLite site (``out`` is emptied first)."""
    wheel = html / DOWNLOADS / WHEEL.format(version=__version__)
    notebooks = sorted((html / OUT).glob("*.ipynb"))
    if not wheel.exists() or not notebooks:
        raise FileNotFoundError(f"{html}: no notebooks or no {wheel.name} (make book)")
    if not wheel.name.endswith("-py3-none-any.whl"):
        raise ValueError(f"{wheel.name}: Pyodide installs pure-Python wheels only")
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    return [Path(shutil.copy2(p, out)) for p in [*notebooks, wheel]]


if __name__ == "__main__":
    html, out = (Path(a) for a in sys.argv[1:3])
    print(len(contents(html, out)), "files in", out)
