"""How the chapters are executed, and when an execution can be reused.

Every chapter runs once per commit: ``make book`` executes it into Jupyter Book's
execution cache, ``_build/.jupyter_cache`` (:func:`execute_book`: the chapters the
cache lacks, one per CPU at a time, each cell within the book's ``execute.timeout``
and failing with the chapter, the cell and its source; the book build then finds
every chapter in the cache and executes none); the student edition, which differs from
the book by the solutions it leaves out, takes the outputs of the cells it keeps
from that cache (:func:`reuse_book_outputs`) instead of running them again; and the
chapter tests read the executed notebooks from it (:func:`cached_notebook`), or
execute the chapter themselves (:func:`execute_notebook`) when no build of this
checkout is there (a clean clone).

The execution cache of Jupyter Book keys on a chapter's code only. The outputs also
depend on :mod:`attnlib`, the pinned environment (``requirements.txt``,
``pyproject.toml``) and the environment the kernels are started with (the
``Makefile``, the student edition's build and the book's Sphinx extension
``bookext``, which sets ``IPYTHONDIR`` and ``ATTNLIB_STATIC`` for the kernels and
holds their start-up file) and the trained weights in ``book/models``. When any of
them changes, the cache of a build folder is dropped so that every chapter runs again
against this checkout.
``make book`` and ``make student`` use this one rule:

``python -m tools.execution BUILD_DIR [--execute] [--jobs N]``
    Drop ``BUILD_DIR``'s execution cache if the digest differs from the one stored
    in ``BUILD_DIR/.execution-digest`` (or none is stored), then store it; with
    ``--execute``, execute the chapters the cache lacks (:func:`execute_book`).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# what a build keeps from one execution to the next
CACHE_DIRS = (".jupyter_cache", ".doctrees", "jupyter_execute")
STAMP = ".execution-digest"
# the book's build folder and its execution cache (Jupyter Book's default place)
BUILD = ROOT / "_build"
JUPYTER_CACHE = ".jupyter_cache"
# seconds one cell may run under execute_notebook: more than the longest chapter
# takes whole on a loaded two-core machine (clustering, 751 s measured), so that
# only a cell that never ends reaches it
CELL_TIMEOUT = 1200
# a wait for a kernel message looks at its socket at least this often (seconds)
POLL_SLICE = 2.0


def inputs(root: Path = ROOT) -> list[Path]:
    """The files whose content the digest covers, sorted."""
    files = sorted((root / "attnlib").rglob("*.py"))
    # the kernels' environment and start-up file of the book (bookext/static.py,
    # bookext/ipython/...): all of the extension's code, like attnlib's
    files += sorted((root / "bookext").rglob("*.py"))
    # the trained weights that the chapter on trained Transformers loads
    files += sorted((root / "book" / "models").glob("*.npz"))
    files += [
        root / name
        for name in ("requirements.txt", "pyproject.toml", "Makefile")
        if (root / name).exists()
    ]
    # the kernels' environment of the student edition, and this rule itself
    files += [
        root / "tools" / "coursework" / "student.py",
        root / "tools" / "execution.py",
    ]
    return [p for p in files if p.exists()]


def digest(root: Path = ROOT) -> str:
    """SHA-256 over the names and contents of :func:`inputs`."""
    h = hashlib.sha256()
    for p in inputs(root):
        h.update(p.relative_to(root).as_posix().encode() + b"\0")
        h.update(p.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def refresh(build: Path, root: Path = ROOT) -> bool:
    """Drop the execution cache of ``build`` when the digest changed.

    Returns
    -------
    bool
        True if the cache was dropped (or there was no digest stored yet).
    """
    build = Path(build)
    stamp = build / STAMP
    new = digest(root)
    if stamp.exists() and stamp.read_text().strip() == new:
        return False
    for sub in CACHE_DIRS:
        shutil.rmtree(build / sub, ignore_errors=True)
    build.mkdir(parents=True, exist_ok=True)
    stamp.write_text(new + "\n")
    return True


def is_fresh(build: Path = BUILD, root: Path = ROOT) -> bool:
    """Whether ``build``'s execution cache was made for this checkout's library and
    environment (its stored digest is :func:`digest`)."""
    stamp = Path(build) / STAMP
    return stamp.exists() and stamp.read_text().strip() == digest(root)


# ------------------------------------------------------------ the assignments
#: the stamp that ``make book`` (``make assignments``) writes into its build of the
#: assignments, ``_build/assignments``, once every assignment is built
ASSIGNMENTS_STAMP = ".assignments-digest"


def assignments_digest(root: Path = ROOT) -> str:
    """SHA-256 over what a build of the assignments depends on: the masters and
    rubrics (``book/assignments``), the coursework tools and the grader
    (``gradebox/``), :mod:`attnlib` (the wheel
    the autograders install), the pinned environment and the Python version."""
    files = [
        p for p in sorted((root / "book" / "assignments").rglob("*")) if p.is_file()
    ]
    files += sorted((root / "tools" / "coursework").rglob("*.py"))
    # the grader, which parses the masters and writes their check cell
    files += sorted((root / "gradebox" / "src" / "gradebox").rglob("*.py"))
    files += sorted((root / "attnlib").rglob("*.py"))
    files += [root / n for n in ("requirements.txt", "pyproject.toml")]
    h = hashlib.sha256(sys.version.encode() + b"\0")
    for p in files:
        if p.exists():
            h.update(p.relative_to(root).as_posix().encode() + b"\0")
            h.update(p.read_bytes())
            h.update(b"\0")
    return h.hexdigest()


def stamp_assignments(built: Path, root: Path = ROOT) -> None:
    """Record that ``built`` holds the assignments of this checkout."""
    (Path(built) / ASSIGNMENTS_STAMP).write_text(assignments_digest(root) + "\n")


def built_assignments(built: Path | None = None, root: Path = ROOT) -> Path | None:
    """``built`` (default ``_build/assignments``) if ``make book`` built the
    assignments of this checkout there (:func:`stamp_assignments`), else ``None``."""
    built = Path(built) if built is not None else root / "_build" / "assignments"
    stamp = built / ASSIGNMENTS_STAMP
    if stamp.exists() and stamp.read_text().strip() == assignments_digest(root):
        return built
    return None


# ------------------------------------------------------------------ reuse
def _code(nb) -> list[str]:
    return [c.source for c in nb.cells if c.cell_type == "code"]


def cached_notebook(source: Path, build: Path = BUILD, root: Path = ROOT):
    """The executed notebook of the chapter ``source`` from the execution cache of
    ``build``, or ``None``.

    Only an execution of this checkout counts: the cache must be fresh
    (:func:`is_fresh`) and hold a notebook whose code cells are those of
    ``source`` now (a failed execution is never cached). Its cells are those of the
    cache (code cells with their outputs, in the book's reading of the chapter).
    """
    import jupytext
    from jupyter_cache import get_cache

    build = Path(build)
    if not (build / JUPYTER_CACHE).is_dir() or not is_fresh(build, root):
        return None
    code = _code(jupytext.read(source))
    cache = get_cache(build / JUPYTER_CACHE)
    uri = str(Path(source).resolve())
    records = sorted(cache.list_cache_records(), key=lambda r: r.created, reverse=True)
    # the record of this file first; any record with the same code serves as well
    for record in sorted(records, key=lambda r: r.uri != uri):
        nb = cache.get_cache_bundle(record.pk).nb
        if _code(nb) == code:
            return nb
    return None


def _kept(full: list[str], kept: list[str]) -> list[int] | None:
    """Indices of ``kept`` in ``full`` (a subsequence, in order), or ``None``."""
    out, i = [], 0
    for src in kept:
        while i < len(full) and full[i] != src:
            i += 1
        if i == len(full):
            return None
        out.append(i)
        i += 1
    return out


def reuse_book_outputs(
    src: Path, build: Path, book_root: Path = ROOT, book_build: Path = BUILD
) -> list[str]:
    """Fill the execution cache of the build ``build`` of the book mirror ``src``
    (the student edition) with the outputs of the book's own execution.

    A page of the mirror whose code cells are a subsequence of its page in the book
    (solutions left out) gets, for each cell it keeps, the outputs that cell has in
    the book's fresh cache (:func:`cached_notebook`); its build then finds it in its
    cache and runs nothing. A page without such a match is left to the build, which
    executes it. Returns the pages filled, as paths relative to ``src``.
    """
    import jupytext
    import nbformat
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    src, build = Path(src), Path(build)
    if not is_fresh(book_build, book_root):
        return []
    cache = None
    filled = []
    for page in sorted(src.rglob("*.md")) + sorted(src.rglob("*.ipynb")):
        rel = page.relative_to(src)
        if rel.parts[0] in ("_build", "_vendor") or "_build" in rel.parts:
            continue
        if page.suffix == ".md" and "kernelspec" not in page.read_text()[:600]:
            continue
        original = book_root / rel
        if not original.exists():
            continue
        executed = cached_notebook(original, book_build, book_root)
        if executed is None:
            continue
        keep = _kept(_code(executed), _code(jupytext.read(page)))
        if keep is None:
            continue
        cells = [c for c in executed.cells if c.cell_type == "code"]
        nb = nbformat.v4.new_notebook(metadata=executed.metadata)
        nb.cells = [cells[i] for i in keep]
        if cache is None:
            cache = get_cache(build / JUPYTER_CACHE)
        cache.cache_notebook_bundle(
            CacheBundleIn(nb, str(page.resolve()), data={"reused_from": str(rel)}),
            check_validity=False,
            overwrite=True,
        )
        filled.append(rel.as_posix())
    return filled


# -------------------------------------------------------------------- execution
class CellTimeout(AssertionError):
    """A cell ran longer than its timeout (the message holds its source)."""


def _sliced(get_msg):
    """``get_msg`` that looks at its socket at least every :data:`POLL_SLICE` s.

    pyzmq's asyncio poll wakes on the edge of the socket's file descriptor; when
    that wake-up is lost, a message that has arrived is found only when the poll
    times out, and a wait of ``timeout=900`` sat 900 s on a reply that was there.
    Short polls bound that loss to one slice, with the same timeout overall.

    Upstream, no issue describes this case exactly (nbclient's ``get_msg`` on the
    client's shell or iopub channel, in a clean CI run, with no reproducer yet);
    the nearest, to check before dropping this workaround:

    * zeromq/pyzmq#2173, "getsockopt(zmq.EVENTS) drains signaler, can cause
      zmq.asyncio recv to miss wakeups": the same lost wake-up of a
      ``zmq.asyncio`` receive on the edge-triggered ``ZMQ_FD``, blamed there on a
      read of ``ZMQ_EVENTS`` elsewhere draining the signal; closed without a fix
      (the maintainer did not dispute a bug but asked for a reproducer), so a
      fixed pyzmq release cannot be assumed from it.
    * zeromq/pyzmq#1558, "Starting zmq.asyncio.Poller with socket initialized
      outside of running loop hangs": the same symptom (the event is returned
      only when the poll times out), for sockets made before the loop ran; here
      jupyter_client makes its sockets inside nbclient's loop.
    * ipython/ipykernel#1554 (open): the same kind of lost wake-up on the
      kernel's side (a request left unread on the shell ROUTER since ipykernel
      7); here the client waits on a message that has arrived.
    """
    from queue import Empty

    async def get(timeout=None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = POLL_SLICE if deadline is None else deadline - time.monotonic()
            try:
                return await get_msg(timeout=max(0.0, min(POLL_SLICE, left)))
            except Empty:
                if deadline is not None and time.monotonic() >= deadline:
                    raise

    return get


def _client_class():
    import nbclient

    class Client(nbclient.NotebookClient):
        """nbclient's client, with sliced waits (:func:`_sliced`)."""

        async def async_start_new_kernel_client(self):
            kc = await super().async_start_new_kernel_client()
            for channel in (kc.shell_channel, kc.iopub_channel):
                channel.get_msg = _sliced(channel.get_msg)
            return kc

    return Client


def execute_notebook(
    nb,
    cwd: Path,
    *,
    label: str,
    timeout: float = CELL_TIMEOUT,
    env: dict[str, str] | None = None,
    seconds: dict[int, float] | None = None,
    **kwargs: Any,
):
    """Execute ``nb`` in place from a clean kernel, in ``cwd``.

    Each cell may run ``timeout`` seconds: one that runs longer stops the execution
    with :class:`CellTimeout`, naming ``label``, the cell and its whole source.
    ``CellExecutionError`` (a failing cell) passes through. The kernel inherits
    ``env`` (default: this process's environment without ``MPLBACKEND``, so that
    it draws with the inline backend as in the book build). ``seconds``, if given,
    receives the wall time of each executed cell by its index.
    """
    from nbclient.exceptions import CellTimeoutError

    if env is None:
        env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    running = {}

    def started(cell, cell_index, **_):
        running["index"], running["cell"] = cell_index, cell
        running["start"] = time.monotonic()

    def finished(cell_index, **_):
        if seconds is not None:
            seconds[cell_index] = time.monotonic() - running["start"]

    # after a cell's reply, its last outputs may take a while on a loaded machine:
    # nbclient's 4 s would drop them with a warning (a figure missing)
    kwargs.setdefault("iopub_timeout", 60)
    client = _client_class()(
        nb,
        timeout=timeout,
        kernel_name=kwargs.pop("kernel_name", "python3"),
        resources={"metadata": {"path": str(cwd)}},
        on_cell_execute=started,
        on_cell_executed=finished,
        **kwargs,
    )
    try:
        client.execute(env=env)
    except CellTimeoutError:
        cell = running.get("cell")
        source = cell.source if cell is not None else "(no cell had started)"
        raise CellTimeout(
            f"{label}: cell {running.get('index')} ran longer than {timeout:g} s "
            f"(the timeout of one cell); its source:\n{source}"
        ) from None
    return nb


# ------------------------------------------------------------------ the book
def book_pages(root: Path = ROOT) -> list[Path]:
    """The pages of ``root``'s ``_toc.yml`` (files and globs) that are notebooks:
    ``.ipynb`` files and MyST Markdown with a ``kernelspec``, in the toc's order."""
    import yaml

    toc = yaml.safe_load((root / "_toc.yml").read_text())
    entries = [{"file": toc["root"]}]

    def walk(items):
        for item in items or []:
            entries.append(item)
            walk(item.get("sections"))

    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    walk(toc.get("chapters"))
    pages: list[Path] = []
    for entry in entries:
        if "file" in entry:
            stem = root / entry["file"]
            found = [stem.with_name(stem.name + s) for s in (".md", ".ipynb")]
            found = [p for p in found if p.exists()][:1]
        elif "glob" in entry:
            found = sorted(
                p for p in root.glob(entry["glob"]) if p.suffix in (".md", ".ipynb")
            )
        else:
            continue
        for page in found:
            if page in pages:
                continue
            if page.suffix == ".ipynb" or "kernelspec" in page.read_text()[:600]:
                pages.append(page)
    return pages


def _book_config(root: Path) -> dict:
    import yaml

    return yaml.safe_load((root / "_config.yml").read_text()) or {}


def read_as_book(page: Path, root: Path = ROOT):
    """``page`` read as Jupyter Book reads it (myst-nb's reader, with the book's
    MyST extensions): the notebook whose hash the execution cache matches.

    Returns ``(notebook, read_data)``, ``read_data`` as myst-nb records it."""
    import nbformat
    from myst_nb.core.read import read_myst_markdown_notebook
    from myst_parser.config.main import MdParserConfig

    text = page.read_text(encoding="utf-8")
    if page.suffix == ".ipynb":
        return nbformat.reads(text, as_version=4), None
    extensions = _book_config(root).get("parse", {}).get("myst_enable_extensions", [])
    config = MdParserConfig(enable_extensions=set(extensions))
    nb = read_myst_markdown_notebook(
        text, config=config, add_source_map=True, path=str(page)
    )
    return nb, {"type": "plugin", "name": "myst_nb_md"}


# the variables that size the thread pools of OpenBLAS, OpenMP and MKL
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def share_cpus(jobs: int) -> int:
    """Give each of ``jobs`` processes run side by side its share of the CPUs for its
    BLAS threads (in this process's environment, which they inherit), unless the
    environment sizes them already; returns the share.

    OpenBLAS starts one thread per CPU in every process. Two kernels on two CPUs then
    run four threads that wait for each other: a product of a 32 x 32 and a
    32 x 2048 matrix took 30-130 ms instead of 1.5 ms with one thread, and the
    clustering chapter's check of the equiangular curve in high dimension 130 s
    instead of 35 s.
    """
    share = max(1, (os.cpu_count() or 1) // max(1, jobs))
    for name in BLAS_THREADS:
        os.environ.setdefault(name, str(share))
    return int(os.environ[BLAS_THREADS[0]])


class BookExecutionError(RuntimeError):
    """A page of the book failed to execute (a failing cell or a cell timeout)."""


def _execute_page(page: str, root: str, timeout: float) -> dict:
    """Run in a worker process: execute one page as the book build would."""
    import traceback

    from nbclient.exceptions import CellExecutionError

    from bookext.static import setup_environment

    page_path, root_path = Path(page), Path(root)
    # the kernels' environment of the book build (bookext), without MPLBACKEND (the
    # Makefile's env -u MPLBACKEND): the inline backend draws the figures
    setup_environment()
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    nb, _ = read_as_book(page_path, root_path)
    meta = nb.metadata.get("execution", {})
    timeout = float(meta.get("timeout", timeout))
    seconds: dict[int, float] = {}
    label = page_path.relative_to(root_path).as_posix()
    start = time.monotonic()
    try:
        execute_notebook(
            nb,
            page_path.parent,
            label=label,
            timeout=timeout,
            env=env,
            seconds=seconds,
            kernel_name=nb.metadata.get("kernelspec", {}).get("name", "python3"),
            # as Jupyter Book's executor (jupyter-cache): no timing metadata in the
            # cells, whose metadata the cache's hash covers
            record_timing=False,
        )
    except CellTimeout as err:
        return {"page": page, "error": str(err)}
    except CellExecutionError as err:
        return {"page": page, "error": f"{label}: a cell failed:\n{err}"}
    except Exception:  # the kernel died, could not start, ...
        return {"page": page, "error": f"{label}:\n{traceback.format_exc()}"}
    return {
        "page": page,
        "nb": nb,
        "seconds": time.monotonic() - start,
        "cells": seconds,
    }


def execute_book(
    build: Path = BUILD,
    root: Path = ROOT,
    *,
    jobs: int | None = None,
    timeout: float | None = None,
    log=print,
) -> dict[str, float]:
    """Execute every page of the book that ``build``'s execution cache lacks,
    ``jobs`` pages at a time, and store them in the cache as Jupyter Book does; its
    build then takes every page from the cache and executes nothing.

    Each cell may run ``timeout`` seconds (default: ``execute.timeout`` of
    ``_config.yml``, or a page's own ``execution.timeout``), with the sliced waits
    of :func:`execute_notebook`. A failing page raises :class:`BookExecutionError`
    naming it, and for a timeout the cell and its source; the pages that had not
    started are not run. Returns the execution time of each executed page.
    """
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from multiprocessing import get_context

    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    build, root = Path(build), Path(root)
    config = _book_config(root).get("execute", {})
    if timeout is None:
        timeout = float(config.get("timeout", CELL_TIMEOUT))
    cache = get_cache(build / JUPYTER_CACHE)
    todo = []
    for page in book_pages(root):
        nb, _ = read_as_book(page, root)
        try:
            cache.match_cache_notebook(nb)
        except KeyError:
            todo.append(page)
    if not todo:
        log("every page of the book is in the execution cache")
        return {}
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(todo)))
    threads = share_cpus(jobs)
    log(
        f"executing {len(todo)} pages, {jobs} at a time "
        f"(each cell within {timeout:g} s, {threads} BLAS thread(s) per kernel)"
    )
    done: dict[str, float] = {}
    errors: list[str] = []
    # spawned workers: no kernel client or socket of this process is inherited
    with ProcessPoolExecutor(jobs, mp_context=get_context("spawn")) as pool:
        pending = {pool.submit(_execute_page, str(p), str(root), timeout) for p in todo}
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                if future.cancelled():  # not started after another page failed
                    continue
                result = future.result()
                page = Path(result["page"])
                rel = page.relative_to(root).as_posix()
                if "error" in result:
                    errors.append(result["error"])
                    for other in pending:
                        other.cancel()  # stop what has not started
                    continue
                nb, read_data = read_as_book(page, root)
                # as myst-nb records a page: its reader for text notebooks
                extra = {} if read_data is None else {"read_data": read_data}
                record = cache.add_nb_to_project(str(page), **extra)
                cache.cache_notebook_bundle(
                    CacheBundleIn(
                        result["nb"],
                        record.uri,
                        data={"execution_seconds": result["seconds"]},
                    ),
                    check_validity=False,
                    overwrite=True,
                )
                try:  # the match the book build makes
                    cache.match_cache_notebook(nb)
                except KeyError:
                    errors.append(
                        f"{rel}: executed, but the book build would not find it in "
                        "the execution cache (the notebook read differs)"
                    )
                    continue
                cells = result["cells"]
                slowest = max(cells, key=cells.get) if cells else None
                done[rel] = result["seconds"]
                log(
                    f"executed {rel} in {result['seconds']:.1f} s"
                    + (
                        f" (slowest cell {slowest}: {cells[slowest]:.1f} s)"
                        if slowest is not None
                        else ""
                    )
                )
    if errors:
        raise BookExecutionError("\n\n".join(errors))
    return done


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m tools.execution",
        description="Drop BUILD_DIR's execution cache when the environment changed; "
        "with --execute, then execute the book's pages that the cache lacks.",
    )
    parser.add_argument("build", metavar="BUILD_DIR", type=Path, nargs="?")
    parser.add_argument(
        "--execute", action="store_true", help="execute the pages the cache lacks"
    )
    parser.add_argument(
        "--jobs", type=int, default=None, help="pages at a time (default: one per CPU)"
    )
    parser.add_argument(
        "--root", type=Path, default=ROOT, help="the book's folder (_toc.yml)"
    )
    parser.add_argument(
        "--assignments-built",
        type=Path,
        metavar="DIR",
        help="record that DIR holds the assignments of this checkout",
    )
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.jobs is not None and args.jobs < 1:
        parser.error(f"--jobs must be a positive integer, got {args.jobs}")
    if args.build is None and args.assignments_built is None:
        parser.error("name a BUILD_DIR or --assignments-built DIR")
    if args.assignments_built is not None:
        stamp_assignments(args.assignments_built, args.root)
    if args.build is None:
        return 0
    if refresh(args.build, args.root):
        print(f"{args.build}: the environment changed, every chapter runs again")
    if args.execute:
        try:
            execute_book(args.build, args.root.resolve(), jobs=args.jobs)
        except BookExecutionError as err:
            print(f"the book did not execute:\n{err}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
