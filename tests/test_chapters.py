"""Every chapter of the book executes top to bottom from a clean kernel and shows
its figures."""

import os
from pathlib import Path

import jupytext
import nbclient
import pytest
import yaml

from tools.check_html import notebook_failures

ROOT = Path(__file__).resolve().parents[1]


def _toc_files():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]
    for part in toc.get("parts", []):
        for ch in part.get("chapters", []):
            # glob entries (the generated coursework pages) name no single file
            files.extend([ch["file"]] if "file" in ch else [])
            files.extend(s["file"] for s in ch.get("sections", []) if "file" in s)
    return files


def _chapter_paths():
    out = []
    for f in _toc_files():
        path = ROOT / f"{f}.md"
        if not path.exists():
            path = ROOT / f"{f}.ipynb"
        out.append(path)
    return out


def test_every_toc_entry_exists():
    for path in _chapter_paths():
        assert path.exists(), f"{path} is listed in _toc.yml but missing"


NOTEBOOKS = [
    p for p in _chapter_paths() if p.exists() and "kernelspec" in p.read_text()[:600]
]


def test_chapters_are_notebooks():
    names = {p.stem for p in NOTEBOOKS}
    assert {"modelling", "clustering", "gaussian", "circle", "extremisers"} <= names


@pytest.mark.slow  # executes the book: make test-fast skips it
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_chapter_executes_from_clean_kernel(path):
    nb = jupytext.read(path)
    client = nbclient.NotebookClient(
        nb,
        timeout=900,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    )
    # The kernel runs as in the book build: the test process sets MPLBACKEND=Agg,
    # which a kernel would inherit and keep, showing figures as "<Figure ...>" text.
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    client.execute(env=env)  # raises CellExecutionError on the first failing cell
    failures, n_images = notebook_failures(nb, path.name)
    assert not failures, "\n".join(failures)
    assert n_images > 0
