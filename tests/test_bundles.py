"""A chapter's zip runs where it is unzipped (:func:`bookext.notebooks.write_bundles`).

* Fast, on a small book made here (two chapters, one reads a folder of data, one
  assignment that imports otter): the zips hold the notebooks, attnlib's wheel, the
  data and a README; the install cell names the zip and its page; the assignment's
  notebook starts with the install cell (otter-grader at requirements.txt's pin);
  links to another page are plain text; a missing wheel or data file stops the build;
  a chapter page and an assignment page link their zip.
* Slow (``-m slow``), on a built book (``ATTNLIB_BOOK_HTML``, default
  ``_build/html``): the site is served over HTTP on 127.0.0.1; the zips of the
  chapters on clustering and on trained Transformers and of one assignment are
  downloaded into empty folders, each gets a fresh virtual environment (pip installs
  nbclient and ipykernel, and what the first cell asks for, from the package index;
  attnlib only from the wheel in the zip), and the notebook runs to its end with
  nbclient.
"""

from __future__ import annotations

import http.server
import io
import json
import os
import re
import subprocess
import threading
import venv
import zipfile
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest

from attnlib._version import __version__
from bookext.notebooks import (
    OUT,
    add_links,
    pinned,
    settings,
    write_bundles,
    write_notebooks,
)

from .helpers import MYST_HEADER, WHERE, LoggedSite, pip_install
from .notebook_links import install_namespace as _functions
from .notebook_links import link_problems

ROOT = Path(__file__).resolve().parents[1]
WHEEL = f"attnlib-{__version__}-py3-none-any.whl"

CONFIG = r"""title: A small book
html:
  baseurl: "{baseurl}"
repository:
  url: ""
sphinx:
  config:
    mathjax3_config:
      tex:
        macros:
          R: "\\mathbb{{R}}"
"""
TOC = """format: jb-book
root: book/intro
chapters:
  - file: book/first
  - file: book/second
"""
FRONT = MYST_HEADER + "\n"
FIRST = (
    FRONT
    + """# The first chapter

(fir-sec)=
## A section

By {prf:ref}`sec-thm` and {cite}`Key2020`, and {ref}`fir-sec` here; on $\\R$.

```{code-cell} ipython3
from pathlib import Path
weights = sorted(Path("models").glob("*.json"))
```
"""
)
SECOND = (
    FRONT
    + """# The second chapter

```{prf:theorem} Bounded
:label: sec-thm
A statement.
```

```{code-cell} ipython3
x = 1
```
"""
)
BIB = """@article{Key2020,
  author = {Ada Lovelace and Alan Turing},
  title = {A title},
  journal = {A journal},
  year = {2020},
}
"""


def _assignment() -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            'import otter\ngrader = otter.Notebook("a1_x.ipynb")'
        ),
        nbformat.v4.new_markdown_cell(
            "# Assignment one\n\nWith [the second chapter](../second.md#sec-thm)."
        ),
        nbformat.v4.new_code_cell('grader.check("q1")'),
    ]
    return nb


def small_book(root: Path, baseurl: str = "") -> Path:
    """A book of two chapters and an assignment in ``root``; its site in
    ``root/_build/html`` holds attnlib's wheel (a stand-in) and the notebooks."""
    (root / "book" / "models").mkdir(parents=True)
    (root / "_config.yml").write_text(CONFIG.format(baseurl=baseurl))
    (root / "_toc.yml").write_text(TOC)
    (root / "book" / "intro.md").write_text("# Introduction\n")
    (root / "book" / "first.md").write_text(FIRST)
    (root / "book" / "second.md").write_text(SECOND)
    (root / "book" / "references.bib").write_text(BIB)
    (root / "book" / "models" / "w.json").write_text('{"w": 1}\n')
    generated = root / "book" / "coursework" / "generated"
    (generated / "notebooks").mkdir(parents=True)
    (generated / "assignments").mkdir()
    nbformat.write(_assignment(), generated / "notebooks" / "a1_x.ipynb")
    (generated / "assignments" / "a1_x.md").write_text("# Assignment one\n\nText.\n")
    html = root / "_build" / "html"
    (html / "_downloads").mkdir(parents=True)
    (html / "_downloads" / WHEEL).write_bytes(b"the wheel")
    write_notebooks(root, None, html, settings(root, html))
    return html


def _members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as z:
        return {name: z.read(name) for name in z.namelist()}


def test_a_chapters_zip_holds_its_notebooks_the_wheel_and_its_data(tmp_path):
    html = small_book(tmp_path)
    written = write_bundles(tmp_path, html)
    assert sorted(p.name for p in written) == ["a1_x.zip", "first.zip", "second.zip"]
    assert all(p.parent == html / OUT for p in written)
    first = _members(html / OUT / "first.zip")
    assert sorted(first) == [
        "first/README.md",
        f"first/{WHEEL}",
        "first/first-student.ipynb",
        "first/first.ipynb",
        "first/models/w.json",
    ]
    assert first[f"first/{WHEEL}"] == b"the wheel"
    assert first["first/models/w.json"] == b'{"w": 1}\n'
    assert first["first/first.ipynb"] == (html / OUT / "first.ipynb").read_bytes()
    readme = first["first/README.md"].decode()
    assert WHEEL in readme and "models/" in readme and "“The first chapter”" in readme
    second = _members(html / OUT / "second.zip")
    assert not any("models" in name for name in second)  # it reads no data
    # the install cell: the zip, its page, the data it reads beside the notebook
    nb = nbformat.reads(first["first/first-student.ipynb"].decode(), as_version=4)
    ns = _functions(nb.cells[0].source)
    assert ns["BUNDLE"] == "first.zip"
    assert ns["PAGE"] == (
        "the book's page “The first chapter” (book/first.html in the book's site)"
    )
    assert [rel for rel, _ in ns["DATA"]] == ["models/w.json"]
    assert ns["ALSO"] == {}
    # the same files make the same zip (a rebuild changes no checksum)
    before = (html / OUT / "first.zip").read_bytes()
    write_bundles(tmp_path, html)
    assert (html / OUT / "first.zip").read_bytes() == before


def test_links_to_another_page_are_plain_text_without_the_books_address(tmp_path):
    html = small_book(tmp_path)
    nb = nbformat.read(html / OUT / "first.ipynb", as_version=4)
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert "Bounded (in “The second chapter”)" in text
    assert "[A section](#fir-sec)" in text and '<a id="fir-sec"></a>' in text
    assert "[Lovelace and Turing, 2020](#ref-Key2020)" in text
    assert nb.cells[-1].source.startswith("## References")
    assert "A title" in nb.cells[-1].source
    assert link_problems(nb) == []


def test_with_the_books_address_links_and_the_page_are_absolute(tmp_path):
    html = small_book(tmp_path, baseurl="https://example.org/book/")
    write_bundles(tmp_path, html)
    nb = nbformat.read(html / OUT / "first.ipynb", as_version=4)
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert "](https://example.org/book/book/second.html#sec-thm)" in text
    assert "](https://example.org/book/book/references.html)" in text
    assert not any(c.source.startswith("## References") for c in nb.cells)
    ns = _functions(nb.cells[0].source)
    assert ns["PAGE"] == "https://example.org/book/book/first.html"
    assert ns["BOOK_URL"] == "https://example.org/book/"


def test_an_assignments_zip_installs_attnlib_and_otter_first(tmp_path):
    html = small_book(tmp_path)
    write_bundles(tmp_path, html)
    members = _members(html / OUT / "a1_x.zip")
    assert sorted(members) == ["a1_x/README.md", "a1_x/a1_x.ipynb", f"a1_x/{WHEEL}"]
    nb = nbformat.reads(members["a1_x/a1_x.ipynb"].decode(), as_version=4)
    nbformat.validate(nb)
    first = nb.cells[0]
    assert first.metadata["tags"] == ["install-attnlib"]
    ns = _functions(first.source)
    otter = pinned("otter-grader")
    assert otter == "otter-grader==7.0.0" or otter.startswith("otter-grader==")
    assert ns["ALSO"] == {"otter": otter}
    assert ns["BUNDLE"] == "a1_x.zip" and "“Assignment one”" in ns["PAGE"]
    assert "book/coursework/generated/assignments/a1_x.html" in ns["PAGE"]
    # the assignment's own cells follow, unchanged but for the links to chapters
    assert [c.source for c in nb.cells[1:]] == [
        c.source.replace(
            "[the second chapter](../second.md#sec-thm)",
            "the second chapter (in “The second chapter”)",
        )
        for c in _assignment().cells
    ]
    assert link_problems(nb) == []
    assert otter in members["a1_x/README.md"].decode()


def test_a_zip_without_the_wheel_or_a_data_file_is_not_written(tmp_path):
    html = small_book(tmp_path)
    (html / "_downloads" / WHEEL).unlink()
    with pytest.raises(FileNotFoundError, match=re.escape(WHEEL)):
        write_bundles(tmp_path, html)
    (html / "_downloads" / WHEEL).write_bytes(b"the wheel")
    # the data changed after the notebooks were written: their digests are stale
    (tmp_path / "book" / "models" / "w.json").write_text("other\n")
    with pytest.raises(ValueError, match="w.json changed"):
        write_bundles(tmp_path, html)
    (tmp_path / "book" / "models" / "w.json").unlink()
    with pytest.raises(FileNotFoundError, match="w.json"):
        write_bundles(tmp_path, html)


def test_pinned_requires_a_pin():
    assert pinned("nbclient") == "nbclient==" + pinned("nbclient").split("==")[1]
    with pytest.raises(ValueError, match="name: requirements.txt pins no"):
        pinned("a-package-that-is-not-pinned")


def _page(app, pagename: str) -> str:
    context = {
        "body": "<h1>Title</h1><p>text</p>",
        "pathto": lambda name, resource: "../../" + name,
    }
    add_links(app, pagename, "page.html", context, None)
    return context["body"]


def test_chapter_and_assignment_pages_link_their_zip(tmp_path):
    small_book(tmp_path)
    app = SimpleNamespace(builder=SimpleNamespace(format="html"), srcdir=str(tmp_path))
    body = _page(app, "book/first")
    assert '<h1>Title</h1><p class="attnlib-notebooks">Run this chapter: ' in body
    assert '<a href="../../notebooks/first.zip" download>first.zip</a>' in body
    assert "the files it reads" in body  # first.md reads models/
    assert "the files it reads" not in _page(app, "book/second")
    body = _page(app, "book/coursework/generated/assignments/a1_x")
    assert '<a href="../../notebooks/a1_x.zip" download>a1_x.zip</a>' in body
    assert "Run this assignment" in body and "otter-grader 7" in body
    assert _page(app, "book/intro") == "<h1>Title</h1><p>text</p>"


def test_install_data_reads_an_install_cells_files():
    from bookext.notebooks import ChapterNeeds, install_data, install_source

    needs = ChapterNeeds(data=(("models/a.npz", "0" * 64), ("models/b", "1" * 64)))
    assert install_data(install_source(None, None, needs)) == list(needs.data)
    assert install_data(install_source()) == []
    with pytest.raises(ValueError, match="install: not an install cell"):
        install_data("print(1)")


def test_an_install_cell_is_recognised_only_as_written(tmp_path):
    """A grader may leave the book's install cell of a submission alone: it is
    recognised exactly, and not once changed."""
    from bookext.notebooks import is_install_cell

    html = small_book(tmp_path)
    write_bundles(tmp_path, html)
    members = _members(html / OUT / "a1_x.zip")
    assignment = nbformat.reads(members["a1_x/a1_x.ipynb"].decode(), as_version=4)
    chapter = nbformat.read(html / OUT / "first.ipynb", as_version=4)
    for nb in (assignment, chapter):
        cell = nb.cells[0].source
        assert is_install_cell(cell)
        for old, new in (
            ("\nif fetched:", "\nimport socket\nif fetched:"),
            ('"--quiet"]', '"--quiet", "--user"]'),
            ("ALSO = {", "ALSO = {'x': 'x==1', "),
            ("# Run this cell first.", "# Run this cell first!"),
            ("DATA = [", "DATA = [('../x', '00'),"),
            ("REPOSITORY = ''", "REPOSITORY = 'file:///x'"),
        ):
            changed = cell.replace(old, new)
            assert changed != cell and not is_install_cell(changed), new
    assert not is_install_cell(assignment.cells[1].source)
    assert not is_install_cell("")


GRADER = """
import sys, types, subprocess
sys.modules["otter"] = types.ModuleType("otter")  # a grader's stand-in: no __spec__
def no_pip(*a, **k):
    raise AssertionError("pip ran")
subprocess.run = no_pip
from IPython.core.interactiveshell import InteractiveShell
result = InteractiveShell.instance().run_cell(open(sys.argv[1]).read())
print("ERROR", repr(result.error_in_exec))
"""


def test_an_installed_attnlib_and_a_graders_otter_install_nothing(tmp_path):
    """Where attnlib (this checkout's) imports and otter is a module already
    imported (a grader's stand-in, which importlib cannot find a spec of), the
    assignment's install cell runs no pip and raises nothing."""
    import sys

    from bookext.notebooks import ChapterNeeds, install_source

    needs = ChapterNeeds(also=(("otter", pinned("otter-grader")),))
    (tmp_path / "cell.py").write_text(install_source(None, None, needs, "a.zip", "p"))
    (tmp_path / "run.py").write_text(GRADER)
    r = subprocess.run(
        [sys.executable, "run.py", "cell.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert "ERROR None" in r.stdout, r.stdout[-2000:] + r.stderr[-2000:]
    assert f"attnlib {__version__} is installed: nothing to install" in r.stdout


# a sentence that tells a reader to install the name attnlib from a package index,
# where it is not (the book ships a wheel); the wheel's file name is fine
INDEX_INSTALL = re.compile(
    r"(?:pip|pip3|uv pip|conda|mamba) install\s+(?:-\S+\s+)*[\"']?attnlib"
    r"(?:\[[^\]]*\])?(?=[\"'`)\s.,;]|$)"
)
# sentences that others are rewriting: strict, so that the list shrinks when they do
STILL_TO_FIX: dict[str, str] = {}


def _reader_facing_files() -> list[str]:
    files = ["README.md", "CONTRIBUTING.md", "RELEASING.md"]
    for folder, pattern in (("book", "*.md"), ("bookext", "*.py"), ("attnlib", "*.py")):
        for path in sorted((ROOT / folder).rglob(pattern)):
            rel = path.relative_to(ROOT).as_posix()
            if not rel.startswith(("book/_vendor/", "book/coursework/generated/")):
                files.append(rel)
    return [f for f in files if (ROOT / f).is_file()]


def test_the_checker_sees_an_install_from_an_index():
    for bad in (
        "pip install attnlib[all]",
        "(`pip install attnlib`)",
        "pip install --upgrade 'attnlib[symbolic]' (or sympy)",
        'uv pip install "attnlib[nets]"',
    ):
        assert INDEX_INSTALL.search(bad), bad
    for good in (
        'pip install "attnlib-0.2.0-py3-none-any.whl[all]"',
        "pip install _build/html/_downloads/attnlib-*-py3-none-any.whl",
        "pip install --no-deps -e .",
        "pip install attnlibrary",
    ):
        assert not INDEX_INSTALL.search(good), good


@pytest.mark.parametrize(
    "rel",
    [
        pytest.param(
            f,
            marks=pytest.mark.xfail(strict=True, reason=f"still: {STILL_TO_FIX[f]}"),
        )
        if f in STILL_TO_FIX
        else f
        for f in _reader_facing_files()
    ],
)
def test_nothing_tells_a_reader_to_install_attnlib_from_an_index(rel):
    text = (ROOT / rel).read_text(encoding="utf-8")
    found = [m.group(0) for m in INDEX_INSTALL.finditer(text)]
    assert found == [], f"{rel}: {found} (attnlib is on no package index)"


# ---------------------------------------------------------------------- slow lane
HTML = Path(os.environ.get("ATTNLIB_BOOK_HTML") or ROOT / "_build" / "html")
PIP_TIMEOUT = 3600  # a fresh environment (JAX for chapter 7) on a slow, shared machine
RUN_TIMEOUT = 5400

RUNNER = """
import json, sys, time, nbclient, nbformat
from pathlib import Path
from queue import Empty
name, allow_errors = sys.argv[1], sys.argv[2] == "1"
nb = nbformat.read(name, as_version=4)


def sliced(get_msg, step=2.0):
    # the wait for a kernel message looks at its socket every step seconds: pyzmq's
    # asyncio poll can lose the wake-up of a message that has arrived (the book's
    # executor does the same, tools/execution.py), and the notebook then sat idle
    async def get(timeout=None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = step if deadline is None else deadline - time.monotonic()
            try:
                return await get_msg(timeout=max(0.0, min(step, left)))
            except Empty:
                if deadline is not None and time.monotonic() >= deadline:
                    raise
    return get


class Client(nbclient.NotebookClient):
    async def async_start_new_kernel_client(self):
        kc = await super().async_start_new_kernel_client()
        for channel in (kc.shell_channel, kc.iopub_channel):
            channel.get_msg = sliced(channel.get_msg)
        return kc


client = Client(
    nb, timeout=2400, kernel_name="python3", allow_errors=allow_errors,
    resources={"metadata": {"path": str(Path.cwd())}},
)
try:
    client.execute()
    failed = None
except nbclient.exceptions.CellExecutionError as e:
    failed = str(e)[-3000:]
cells = []
for c in nb.cells:
    if c.cell_type != "code":
        continue
    text = "".join(o.get("text", "") for o in c.outputs)
    errors = [o["ename"] for o in c.outputs if o.get("output_type") == "error"]
    cells.append({"ran": c.execution_count is not None, "text": text[-2000:],
                  "errors": errors, "source": c.source[:80]})
json.dump({"failed": failed, "cells": cells}, open("result.json", "w"))
"""


@pytest.fixture(scope="module")
def served():
    """The built book served over HTTP on 127.0.0.1 (an ephemeral port)."""
    if not (HTML / OUT / "clustering.zip").is_file():
        pytest.skip(f"{HTML}: no built book with its zips (make book)")
    handler = lambda *a, **kw: LoggedSite(*a, directory=str(HTML), **kw)  # noqa: E731
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def _link_of(url: str, page: str, name: str) -> str:
    """The address of the zip that the built page links (as a reader clicks it)."""
    import urllib.parse
    import urllib.request

    with urllib.request.urlopen(f"{url}{page}.html", timeout=60) as response:
        body = response.read().decode()
    m = re.search(rf'<a href="([^"]*{re.escape(name)})" download>', body)
    assert m, f"{page}.html links no {name}"
    return urllib.parse.urljoin(f"{url}{page}.html", m.group(1))


def _unzipped(url: str, page: str, name: str, folder: Path) -> Path:
    import urllib.request

    folder.mkdir()
    assert not any(folder.iterdir())
    with urllib.request.urlopen(_link_of(url, page, name), timeout=120) as response:
        zipfile.ZipFile(io.BytesIO(response.read())).extractall(folder)
    (inside,) = folder.iterdir()
    return inside


def _fresh_env(folder: Path):
    """A virtual environment in ``folder``: nbclient and ipykernel at the book's
    pins, nothing of this checkout (attnlib is absent)."""
    env_dir = folder / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    env = {
        "PATH": f"{env_dir / 'bin'}:/usr/bin:/bin",
        "HOME": str(folder),
        "PIP_CACHE_DIR": os.environ.get("PIP_CACHE_DIR")
        or str(Path.home() / ".cache" / "pip"),
        "OPENBLAS_NUM_THREADS": "1",
    }
    env.update({k: v for k, v in os.environ.items() if k.startswith("PIP_")})
    env.update({k: v for k, v in os.environ.items() if k.lower().endswith("_proxy")})
    py = env_dir / "bin" / "python"

    def run(*args, cwd=folder, timeout=PIP_TIMEOUT):
        r = subprocess.run(
            [str(a) for a in args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
        )
        assert r.returncode == 0, f"{args}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
        return r.stdout

    run(*pip_install(py), pinned("nbclient"), pinned("ipykernel"))
    run(py, "-m", "ipykernel", "install", "--sys-prefix", "--name", "python3")
    absent = run(py, "-c", "import importlib.util as u; print(u.find_spec('attnlib'))")
    assert absent.strip() == "None"
    return py, run


def _run_bundle(url, page, name, notebook, tmp_path, allow_errors=False):
    """Download ``name`` from ``page``, unzip it into an empty folder, run
    ``notebook`` there in a fresh environment; the result and where attnlib is."""
    folder = _unzipped(url, page, name, tmp_path / "download")
    py, run = _fresh_env(tmp_path)
    (folder / "run.py").write_text(RUNNER)
    run(
        py,
        "run.py",
        notebook,
        "1" if allow_errors else "0",
        cwd=folder,
        timeout=RUN_TIMEOUT,
    )
    result = json.loads((folder / "result.json").read_text())
    where = (
        json.loads(run(py, "-c", WHERE)) if not result["cells"][0]["errors"] else None
    )
    return folder, result, where


def _installed_from_the_zip(folder: Path, result: dict, where: dict | None) -> None:
    first = result["cells"][0]
    assert first["ran"] and not first["errors"], first
    assert (
        f"installed from the copy beside this notebook ({folder / WHEEL})"
        in (first["text"])
    ), first["text"]
    assert where["version"] == __version__
    assert str(ROOT) not in where["file"]
    assert where["direct_url"]["url"] == (folder / WHEEL).resolve().as_uri()


@pytest.mark.slow
def test_the_clustering_chapters_zip_runs_where_it_is_unzipped(served, tmp_path):
    LoggedSite.requests.clear()
    folder, result, where = _run_bundle(
        served, "book/clustering", "clustering.zip", "clustering.ipynb", tmp_path
    )
    assert result["failed"] is None, result["failed"]
    _installed_from_the_zip(folder, result, where)
    assert all(c["ran"] for c in result["cells"])
    # the reader's page and the zip: nothing else from the site
    assert [r for r in LoggedSite.requests if "_downloads" in r] == [], (
        LoggedSite.requests
    )


@pytest.mark.slow
def test_the_trained_chapters_zip_runs_with_its_models(served, tmp_path):
    folder, result, where = _run_bundle(
        served, "book/trained", "trained.zip", "trained.ipynb", tmp_path
    )
    # the notebook reads every file of models/ from the folder (a missing one fails
    # its first cell: this site has no address to fetch it from)
    assert result["failed"] is None, result["failed"]
    models = sorted(p.name for p in (ROOT / "book" / "models").iterdir() if p.is_file())
    assert sorted(p.name for p in (folder / "models").iterdir()) == models
    _installed_from_the_zip(folder, result, where)
    assert "fetched" not in result["cells"][0]["text"]  # the models were there
    assert all(c["ran"] for c in result["cells"])


@pytest.mark.slow
def test_an_assignments_zip_runs_with_otter(served, tmp_path):
    """The student's notebook, stubs unanswered: every cell runs; the only errors
    are the stubs' (NotImplementedError and what follows from an unanswered
    question), none an import; grader.check runs its tests."""
    zips = sorted((HTML / OUT).glob("a*_*.zip"))
    assert zips, f"{HTML / OUT}: no assignment's zip"
    slug = zips[0].stem
    folder, result, where = _run_bundle(
        served,
        f"book/coursework/generated/assignments/{slug}",
        f"{slug}.zip",
        f"{slug}.ipynb",
        tmp_path,
        allow_errors=True,
    )
    _installed_from_the_zip(folder, result, where)
    assert pinned("otter-grader") in result["cells"][0]["text"]
    cells = result["cells"]
    assert all(c["ran"] for c in cells), [c["source"] for c in cells if not c["ran"]]
    grader = next(c for c in cells if "otter.Notebook(" in c["source"])
    assert not grader["errors"], grader
    errors = {e for c in cells for e in c["errors"]}
    assert not errors & {"ModuleNotFoundError", "ImportError"}, errors
    checks = [c for c in cells if c["source"].startswith("grader.check")]
    assert checks and all(not c["errors"] for c in checks), checks
