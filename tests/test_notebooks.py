"""The chapters' notebooks: a reader's with outputs, a student's without solutions,
each starting with a cell that installs attnlib; and the Binder environment.

* Always: the student notebook of every chapter holds no solution and every code
  cell of the chapter that is not part of a solution; both notebooks start with the
  install cell; Binder's pins are the book's.
* After ``make book`` (the notebooks are in ``_build/html/notebooks``): the reader
  notebook has an image output for every figure cell, the student one no output,
  and each chapter page links both and the chapter's zip, which holds them.
* ``make test-binder`` (``ATTNLIB_TEST_BINDER=1``; about ten minutes, not part of
  CI): a fresh virtual environment gets only what ``binder/requirements.txt``
  installs (with nbclient to run the notebooks, as Binder's image has), and both
  notebooks of every chapter execute there from a clean kernel.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import venv
import zipfile
from pathlib import Path

import nbformat
import pytest

from attnlib._version import __version__
from bookext.notebooks import chapters, strip_solutions, student_notebook

from tools.check_html import MAKES_FIGURE, _code
from tools.lab_view import strip as without_lab_cells

from .helpers import pip_install

ROOT = Path(__file__).resolve().parents[1]
BUILT = ROOT / "_build" / "html" / "notebooks"
CHAPTERS = chapters(ROOT)
SOLUTION = re.compile(r"\{solution(-start|-end)?\}")


def _pins(path: Path) -> dict[str, str]:
    pins = {}
    for line in path.read_text().splitlines():
        if "==" in line and not line.startswith("#"):
            name, version = line.split("==")
            pins[name.strip().lower().replace("_", "-")] = version.strip()
    return pins


def test_chapters_found():
    assert {p.stem for p in CHAPTERS} >= {
        "modelling",
        "clustering",
        "gaussian",
        "circle",
        "extremisers",
    }


def test_binder_installs_the_books_versions_and_attnlib():
    binder = _pins(ROOT / "binder" / "requirements.txt")
    book = _pins(ROOT / "requirements.txt")
    assert binder and all(book.get(k) == v for k, v in binder.items()), binder
    for needed in ("numpy", "scipy", "matplotlib", "ipywidgets", "jupytext"):
        assert needed in binder
    lines = (ROOT / "binder" / "requirements.txt").read_text().splitlines()
    assert "." in [line.strip() for line in lines], "attnlib from the repository"
    assert (ROOT / "binder" / "runtime.txt").read_text().strip() == "python-3.11"


@pytest.mark.parametrize("source", CHAPTERS, ids=lambda p: p.stem)
def test_student_notebook_has_no_solution_and_every_other_cell(source):
    nb = student_notebook(source)
    full = source.read_text(encoding="utf-8")
    text = "\n".join(c.source for c in nb.cells)
    assert not SOLUTION.search(text)
    assert "install" in nb.cells[0].source and "attnlib" in nb.cells[0].source
    # plain Markdown: no front matter, the macros of the HTML book expanded
    first_md = next(c for c in nb.cells if c.cell_type == "markdown")
    assert not first_md.source.startswith("---")
    if "\\R" in without_lab_cells(full):  # not the macros' definition for JupyterLab
        assert "\\mathbb{R}" in text
    if "{solution-start}" in full:
        assert len(strip_solutions(full)) < len(full)
    kept = strip_solutions(full)
    n_code = kept.count("```{code-cell}")
    assert sum(c.cell_type == "code" for c in nb.cells) == n_code + 1
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")


def test_strip_solutions_removes_the_blocks_and_keeps_the_rest():
    text = (
        "before\n```{exercise}\n:label: e\nQ\n```\n"
        "```{solution-start} e\n:class: dropdown\n```\nanswer\n"
        "```{code-cell} ipython3\nsecret = 1\n```\n"
        "```{solution-end}\n```\nafter\n"
        ":::{solution} e\nshort\n:::\nend\n"
    )
    out = strip_solutions(text)
    assert "answer" not in out and "secret" not in out and "short" not in out
    assert out.startswith("before\n```{exercise}") and "after\n" in out
    assert out.endswith("end\n")
    with pytest.raises(ValueError, match="without its end"):
        strip_solutions("```{solution-start} e\n```\nnever closed\n")


def _built(name: str) -> Path:
    path = BUILT / name
    if not path.exists():
        pytest.skip(f"{path} is written by make book")
    return path


@pytest.mark.parametrize("source", CHAPTERS, ids=lambda p: p.stem)
def test_built_reader_notebook_has_the_figures(source):
    nb = nbformat.read(_built(f"{source.stem}.ipynb"), as_version=4)
    nbformat.validate(nb)
    assert "attnlib" in nb.cells[0].source
    missing = []
    for cell in nb.cells:
        if cell.cell_type != "code" or not MAKES_FIGURE.search(_code(cell.source)):
            continue
        tags = set(cell.metadata.get("tags", []))
        if tags & {"remove-output", "remove-cell"}:
            continue
        if not any("image/png" in o.get("data", {}) for o in cell.outputs):
            missing.append(cell.source.splitlines()[0])
    assert not missing, missing
    text = json.dumps(nb)
    assert "application/vnd.jupyter.widget-view+json" not in text
    assert "attnlib-explorer" not in text  # frames stay in the HTML book


@pytest.mark.parametrize("source", CHAPTERS, ids=lambda p: p.stem)
def test_built_student_notebook_and_page_links(source):
    nb = nbformat.read(_built(f"{source.stem}-student.ipynb"), as_version=4)
    assert not SOLUTION.search("\n".join(c.source for c in nb.cells))
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")
    page = (ROOT / "_build" / "html" / "book" / f"{source.stem}.html").read_text()
    assert f"notebooks/{source.stem}.ipynb" in page
    assert f"notebooks/{source.stem}-student.ipynb" in page
    # the zip that runs where it is unzipped: both notebooks as built, the wheel
    assert f'notebooks/{source.stem}.zip" download>' in page
    with zipfile.ZipFile(BUILT / f"{source.stem}.zip") as z:
        names = set(z.namelist())
        for name in (f"{source.stem}.ipynb", f"{source.stem}-student.ipynb"):
            assert z.read(f"{source.stem}/{name}") == (BUILT / name).read_bytes()
    assert f"{source.stem}/attnlib-{__version__}-py3-none-any.whl" in names


# each cell may run 1200 s (tools.execution.CELL_TIMEOUT); one that runs
# longer fails with the notebook's name, the cell's number and its whole source
RUNNER = """
import sys, nbformat, nbclient
from nbclient.exceptions import CellTimeoutError
nb = nbformat.read(sys.argv[1], as_version=4)
running = {}
def started(cell, cell_index, **_):
    running.update(cell=cell, index=cell_index)
client = nbclient.NotebookClient(
    nb, timeout=1200, kernel_name="python3", on_cell_execute=started
)
try:
    client.execute()
except CellTimeoutError:
    sys.exit(f"{sys.argv[1]}: cell {running.get('index')} ran longer than 1200 s; "
             f"its source:\\n{running['cell'].source if running else ''}")
print("executed", len(nb.cells))
"""


@pytest.mark.slow
@pytest.mark.skipif(
    os.environ.get("ATTNLIB_TEST_BINDER") != "1",
    reason="make test-binder runs the notebooks in Binder's environment",
)
def test_notebooks_run_in_the_binder_environment(tmp_path):
    """Every reader and student notebook, from a clean kernel, in a fresh venv."""
    env_dir = tmp_path / "binder-env"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"

    def run(*args, cwd=ROOT, timeout=3600):
        r = subprocess.run(
            [str(a) for a in args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=timeout,
            env={"PATH": f"{env_dir / 'bin'}:/usr/bin:/bin", "HOME": str(tmp_path)},
        )
        assert r.returncode == 0, f"{args}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
        return r.stdout

    run(*pip_install(py), "-r", "binder/requirements.txt")
    run(*pip_install(py), "nbclient")  # Binder's image has it
    run(py, "-m", "ipykernel", "install", "--sys-prefix", "--name", "python3")
    (tmp_path / "run.py").write_text(RUNNER)
    for source in CHAPTERS:
        for name in (f"{source.stem}.ipynb", f"{source.stem}-student.ipynb"):
            path = _built(name)
            work = tmp_path / source.stem
            work.mkdir(exist_ok=True)
            out = run(py, tmp_path / "run.py", path, cwd=work)
            assert out.startswith("executed"), (name, out)
