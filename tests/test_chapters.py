"""Every chapter of the book executes top to bottom from a clean kernel and shows
its figures.

A chapter runs once per commit: when ``make book`` has executed this checkout
(its execution cache is fresh, :func:`tools.execution.cached_notebook`), the test
checks the notebook that build executed, each in a clean kernel; otherwise (a clean
clone, a changed chapter or library) it executes the chapter itself, each cell
within :data:`tools.execution.CELL_TIMEOUT`. ``ATTNLIB_EXECUTE_CHAPTERS=1`` always
executes.
"""

import os
import time
from pathlib import Path

import jupytext
import pytest
import yaml

from tools import execution
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
    nb = None
    if os.environ.get("ATTNLIB_EXECUTE_CHAPTERS") != "1":
        nb = execution.cached_notebook(path)
    if nb is None:
        nb = jupytext.read(path)
        # the kernel draws as in the book build (no MPLBACKEND=Agg, which it would
        # inherit and keep, showing figures as "<Figure ...>" text); a failing cell
        # raises CellExecutionError, a cell past its timeout CellTimeout
        execution.execute_notebook(nb, path.parent, label=path.name)
    failures, n_images = notebook_failures(nb, path.name)
    assert not failures, "\n".join(failures)
    assert n_images > 0


def test_a_stuck_cell_fails_with_its_source(tmp_path):
    import nbformat

    nb = nbformat.v4.new_notebook()
    stuck = "import time\nwhile True:  # stuck\n    time.sleep(1)"
    nb.cells = [nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_code_cell(stuck)]
    with pytest.raises(execution.CellTimeout) as err:
        execution.execute_notebook(nb, tmp_path, label="stuck.md", timeout=5)
    message = str(err.value)
    assert "stuck.md: cell 1 ran longer than 5 s" in message
    assert stuck in message


def test_a_reply_whose_wake_up_was_lost_is_read_within_a_slice():
    """A message already there is found by the next short poll (the lost wake-up
    of a socket cost a whole cell timeout, 900 s, before)."""
    import asyncio
    from queue import Empty

    calls = []

    async def get_msg(timeout=None):  # the socket's poll: sees the reply at call 3
        calls.append(timeout)
        if len(calls) < 3:
            raise Empty
        return {"msg": "reply"}

    got = asyncio.run(execution._sliced(get_msg)(timeout=900))
    assert got == {"msg": "reply"}
    assert len(calls) == 3 and max(calls) <= execution.POLL_SLICE
    calls.clear()

    async def never(timeout=None):
        calls.append(timeout)
        raise Empty

    with pytest.raises(Empty):  # the overall timeout still holds
        asyncio.run(execution._sliced(never)(timeout=0.05))


def _small_book(root, pages: dict[str, str], timeout: int) -> None:
    """A book in ``root``: ``pages`` (name -> code of its one or more cells) listed
    in its toc, and the cell timeout ``timeout`` in its ``_config.yml``."""
    from .helpers import MYST_HEADER

    (root / "book").mkdir()
    (root / "_config.yml").write_text(
        f"title: t\nexecute:\n  execute_notebooks: cache\n  timeout: {timeout}\n"
    )
    names = list(pages)
    toc = f"format: jb-book\nroot: book/{names[0]}\nchapters:\n"
    toc += "".join(f"  - file: book/{n}\n" for n in names[1:])
    (root / "_toc.yml").write_text(toc)
    for name, cells in pages.items():
        body = "".join(f"```{{code-cell}} ipython3\n{c}\n```\n\n" for c in cells)
        (root / "book" / f"{name}.md").write_text(f"{MYST_HEADER}# {name}\n\n{body}")


@pytest.mark.slow  # starts kernels
def test_the_book_executor_stops_a_sleeping_cell_and_names_it(tmp_path):
    """make book's executor: a cell past the book's timeout fails the execution
    within that timeout (not after the sleep), naming the page, the cell and its
    source; the pages that executed are in the cache that the book build reads."""
    import subprocess
    import sys

    sleeping = "import time\ntime.sleep(900)  # never returns in time"
    threads = (
        "import numpy, threadpoolctl\n"
        "print(sorted({p['num_threads'] for p in threadpoolctl.threadpool_info()}))"
    )
    _small_book(
        tmp_path,
        {"quiet": [threads, "x = 1 + 1", "print(x)"], "slow": [sleeping]},
        5,
    )
    build = tmp_path / "_build"
    start = time.monotonic()
    # the executor sizes the kernels' BLAS threads itself when nothing else does
    env = {k: v for k, v in os.environ.items() if k not in execution.BLAS_THREADS}
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "tools.execution",
            "--execute",
            "--root",
            tmp_path,
            build,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    elapsed = time.monotonic() - start
    assert r.returncode == 1, r.stdout + r.stderr
    assert "book/slow.md: cell 1 ran longer than 5 s" in r.stderr, r.stderr
    assert sleeping in r.stderr
    assert "executed book/quiet.md" in r.stdout, r.stdout
    # bounded by the cell timeout, not by the 900 s the cell would sleep
    assert elapsed < 600
    from jupyter_cache import get_cache

    cache = get_cache(build / execution.JUPYTER_CACHE)
    quiet, _ = execution.read_as_book(tmp_path / "book" / "quiet.md", tmp_path)
    record = cache.match_cache_notebook(quiet)  # what the book build looks up
    cells = cache.get_cache_bundle(record.pk).nb.cells
    assert cells[-1].outputs[0]["text"] == "2\n"
    # two pages two at a time: each kernel's BLAS gets its share of the CPUs (one
    # thread each on two CPUs), not a thread per CPU that waits for the other's
    jobs = min(os.cpu_count() or 1, 2)
    share = max(1, (os.cpu_count() or 1) // jobs)
    assert f"{jobs} at a time" in r.stdout and f"{share} BLAS thread" in r.stdout
    assert cells[0].outputs[0]["text"] == f"[{share}]\n", cells[0].outputs
    slow, _ = execution.read_as_book(tmp_path / "book" / "slow.md", tmp_path)
    with pytest.raises(KeyError):
        cache.match_cache_notebook(slow)


@pytest.mark.slow  # starts a kernel
def test_a_failing_page_is_reported_when_the_pages_after_it_are_cancelled(tmp_path):
    """One page at a time: the first fails, so the pages after it never start; the
    error names the failing page and its cell's exception. Before, the loop took
    the result of a cancelled page and raised CancelledError, with no word of the
    page that had failed (a book build in CI reported only that)."""
    _small_book(
        tmp_path,
        # the pool holds two pages (one running, one queued): the rest wait in it,
        # and are cancelled
        {
            "broken": ["raise ValueError('the broken cell')"],
            **{f"later{k}": [f"x = {k}"] for k in range(4)},
        },
        600,
    )
    with pytest.raises(execution.BookExecutionError) as err:
        execution.execute_book(tmp_path / "_build", tmp_path, jobs=1)
    assert "book/broken.md" in str(err.value), err.value
    assert "the broken cell" in str(err.value), err.value


def test_the_book_pages_are_the_notebooks_of_the_toc():
    pages = execution.book_pages()
    assert pages == NOTEBOOKS
