"""A reader who downloads a notebook from the published book and runs it elsewhere.

A fresh virtual environment in an empty temporary folder (no path to this checkout,
its own HOME) gets Binder's requirement set without attnlib and the front end
(``binder/requirements.txt`` minus its last line ``.``, jupytext and jupyterlab_myst)
and nbclient; pip's cache serves repeated runs. A site
folder holds what ``make book`` ships (attnlib's wheel and sdist in ``_downloads``,
written by :func:`bookext.downloads.write_downloads`) and the notebooks of the short
"Open problems" chapter (install cell, one cell that imports attnlib and draws a
figure), written by :func:`bookext.notebooks.write_notebooks` with the book's address
set to the server: the same code as the build, another ``baseurl``. The folder is
served with ``http.server`` on 127.0.0.1 (an ephemeral port).

From the empty folder the environment downloads the student notebook and the reader
notebook over HTTP and executes each from a clean kernel with nbclient: the first
installs attnlib from the site's wheel (the server saw the wheel requested, the
installed copy records that URL), the second, with attnlib now installed, installs
nothing (no second request, the cell says so).
"""

from __future__ import annotations

import http.server
import json
import os
import shutil
import subprocess
import threading
import venv
from pathlib import Path

import nbclient
import nbformat
import pytest

from attnlib._version import __version__
from bookext.downloads import write_downloads
from bookext.notebooks import ROOT, Settings, settings, write_notebooks

from .helpers import WHERE, LoggedSite, pip_install

CHAPTER = "open_problems"
WHEEL = f"attnlib-{__version__}-py3-none-any.whl"
PIP_TIMEOUT = 1800  # a fresh environment on a slow, shared machine

RUNNER = """
import json, sys, urllib.request
import nbclient, nbformat

url, name = sys.argv[1], sys.argv[2]
with urllib.request.urlopen(url, timeout=60) as response:
    nb = nbformat.reads(response.read().decode(), as_version=4)
nbclient.NotebookClient(nb, timeout=1800, kernel_name="python3").execute()
first = "".join(o.get("text", "") for o in nb.cells[0].outputs)
images = sum("image/png" in o.get("data", {}) for c in nb.cells
             if c.cell_type == "code" for o in c.outputs)
json.dump({"install": first, "cells": len(nb.cells), "images": images},
          open(name, "w"))
"""


def _binder_requirements() -> list[str]:
    lines = (ROOT / "binder" / "requirements.txt").read_text().splitlines()
    reqs = [x.strip() for x in lines if x.strip() and not x.startswith("#")]
    assert reqs[-1] == ".", "attnlib is Binder's last line"
    pins = {
        line.split("==")[0].lower(): line
        for line in (ROOT / "requirements.txt").read_text().splitlines()
        if "==" in line and not line.startswith("#")
    }
    # the front end (JupyterLab's MyST renderer, jupytext) runs no notebook: left out
    front_end = ("jupytext", "jupyterlab_myst")
    kernel = [r for r in reqs[:-1] if not r.lower().startswith(front_end)]
    return kernel + [pins["nbclient"]]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    folder = tmp_path_factory.mktemp("site")
    handler = lambda *a, **kw: LoggedSite(*a, directory=str(folder), **kw)  # noqa: E731
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    write_downloads(ROOT, folder)
    book = settings(ROOT)
    config = Settings(book_url=url, repository=None, index=book.index)
    write_notebooks(ROOT, None, folder, config, only=[CHAPTER])
    yield url, folder
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    """A virtual environment without attnlib, in a folder outside the checkout."""
    home = tmp_path_factory.mktemp("reader")
    env_dir = home / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    env = {
        "PATH": f"{env_dir / 'bin'}:/usr/bin:/bin",
        "HOME": str(home),
        # pip's cache and settings of this machine; no path to the checkout
        "PIP_CACHE_DIR": os.environ.get("PIP_CACHE_DIR")
        or str(Path.home() / ".cache" / "pip"),
    }
    env.update({k: v for k, v in os.environ.items() if k.startswith("PIP_")})
    env.update({k: v for k, v in os.environ.items() if k.lower().endswith("_proxy")})
    py = env_dir / "bin" / "python"

    def run(*args, timeout=PIP_TIMEOUT):
        r = subprocess.run(
            [str(a) for a in args],
            cwd=home,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
        )
        assert r.returncode == 0, f"{args}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
        return r.stdout

    run(*pip_install(py), *_binder_requirements())
    run(py, "-m", "ipykernel", "install", "--sys-prefix", "--name", "python3")
    absent = run(py, "-c", "import importlib.util as u; print(u.find_spec('attnlib'))")
    assert absent.strip() == "None"
    (home / "run.py").write_text(RUNNER)
    (home / "where.py").write_text(WHERE)
    return home, run, py


@pytest.mark.slow
def test_downloaded_notebooks_install_attnlib_from_the_site_then_nothing(site, fresh):
    url, folder = site
    home, run, py = fresh
    assert (folder / "_downloads" / WHEEL).exists()
    assert sorted(p.name for p in (folder / "notebooks").iterdir()) == [
        f"{CHAPTER}-student.ipynb",
        f"{CHAPTER}.ipynb",
    ]
    LoggedSite.requests.clear()

    # the student notebook, top to bottom: attnlib comes from the site's wheel
    run(py, "run.py", f"{url}notebooks/{CHAPTER}-student.ipynb", "student.json")
    student = json.loads((home / "student.json").read_text())
    wheel_url = f"{url}_downloads/{WHEEL}"
    assert f"installed from the book's site: {wheel_url}" in student["install"]
    assert LoggedSite.requests.count(f"/_downloads/{WHEEL}") == 1, LoggedSite.requests
    assert student["images"] >= 1  # the chapter's figure
    where = json.loads(run(py, "where.py"))
    assert where["version"] == __version__
    assert where["file"].startswith(str(home / "venv"))
    assert str(ROOT) not in where["file"]
    assert where["direct_url"]["url"] == wheel_url

    # the reader notebook, with attnlib installed: nothing is installed
    LoggedSite.requests.clear()
    run(py, "run.py", f"{url}notebooks/{CHAPTER}.ipynb", "reader.json")
    reader = json.loads((home / "reader.json").read_text())
    assert (
        f"attnlib {__version__} is installed: nothing to install" in reader["install"]
    )
    assert LoggedSite.requests == [f"/notebooks/{CHAPTER}.ipynb"], LoggedSite.requests
    assert reader["images"] >= 1 and reader["cells"] >= 3


LOAD = """
from pathlib import Path
from attnlib.nets import load
for f in sorted(Path("models").glob("*.npz")):
    params, config, meta = load(f)
    print(f.stem, config.n_layers, meta["steps"])
"""


@pytest.fixture(scope="module")
def trained_site(site, tmp_path_factory):
    """A second site: the downloads of the first (wheel, sdist, models) and the
    notebooks of the chapter on trained Transformers."""
    _, first = site
    folder = tmp_path_factory.mktemp("site-trained")
    shutil.copytree(first / "_downloads", folder / "_downloads")
    handler = lambda *a, **kw: LoggedSite(*a, directory=str(folder), **kw)  # noqa: E731
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    config = Settings(book_url=url, repository=None, index=settings(ROOT).index)
    write_notebooks(ROOT, None, folder, config, only=["trained"])
    yield url, folder
    server.shutdown()
    server.server_close()


@pytest.mark.slow
def test_the_trained_chapter_fetches_its_weights_beside_the_notebook(
    trained_site, tmp_path
):
    """The chapter reads models/<name>.npz beside it: its notebook, run in an empty
    folder, fetches them from the site (checked against their SHA-256), once; a
    damaged file is fetched again; and it asks for attnlib's nets extra (JAX)."""
    url, folder = trained_site
    models = sorted(p for p in (ROOT / "book" / "models").iterdir() if p.is_file())
    assert sorted(p.name for p in (folder / "_downloads" / "models").iterdir()) == [
        p.name for p in models
    ]
    nb = nbformat.read(folder / "notebooks" / "trained-student.ipynb", as_version=4)
    first = nb.cells[0]
    assert first.metadata["tags"] == ["install-attnlib"]
    assert 'EXTRAS = "all,nets"' in first.source
    assert "NEEDS = ['jax', 'optax']" in first.source
    nb.cells = [first, nbformat.v4.new_code_cell(LOAD)]
    work = tmp_path / "empty"
    work.mkdir()

    def run() -> tuple[str, str]:
        client = nbclient.NotebookClient(
            nb,
            timeout=600,
            kernel_name="python3",
            resources={"metadata": {"path": str(work)}},
        )
        client.execute()
        return tuple(
            "".join(o.get("text", "") for o in c.outputs) for c in nb.cells[:2]
        )

    LoggedSite.requests.clear()
    install, loaded = run()
    # this environment has attnlib and JAX: nothing installed, the weights fetched
    assert "nothing to install" in install, install
    assert f"fetched {len(models)} file(s)" in install, install
    assert sorted(LoggedSite.requests) == [
        f"/_downloads/models/{p.name}" for p in models
    ]
    for p in models:
        assert (work / "models" / p.name).read_bytes() == p.read_bytes()
    assert len(loaded.splitlines()) == sum(p.suffix == ".npz" for p in models)

    # run again: nothing fetched; a damaged file is fetched again
    LoggedSite.requests.clear()
    install, _ = run()
    assert "fetched" not in install and LoggedSite.requests == [], (
        install,
        LoggedSite.requests,
    )
    (work / "models" / models[0].name).write_bytes(b"damaged")
    install, _ = run()
    assert f"fetched 1 file(s) the chapter reads: models/{models[0].name}" in install
    assert (work / "models" / models[0].name).read_bytes() == models[0].read_bytes()

    # a site that serves another file: refused, and nothing is left in its place
    (folder / "_downloads" / "models" / models[0].name).write_bytes(b"other")
    (work / "models" / models[0].name).unlink()
    with pytest.raises(nbclient.exceptions.CellExecutionError, match="not the book's"):
        run()
    assert not (work / "models" / models[0].name).exists()
