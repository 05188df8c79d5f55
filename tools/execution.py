"""How the chapters are executed, and when an execution can be reused.

Every chapter runs once per commit: ``make book`` executes it (Jupyter Book's
execution cache, ``_build/.jupyter_cache``); the student edition, which differs from
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

``python -m tools.execution BUILD_DIR``
    Drop ``BUILD_DIR``'s execution cache if the digest differs from the one stored
    in ``BUILD_DIR/.execution-digest`` (or none is stored), then store it.
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
    **kwargs: Any,
):
    """Execute ``nb`` in place from a clean kernel, in ``cwd``.

    Each cell may run ``timeout`` seconds: one that runs longer stops the execution
    with :class:`CellTimeout`, naming ``label``, the cell and its whole source.
    ``CellExecutionError`` (a failing cell) passes through. The kernel inherits
    ``env`` (default: this process's environment without ``MPLBACKEND``, so that
    it draws with the inline backend as in the book build).
    """
    from nbclient.exceptions import CellTimeoutError

    if env is None:
        env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    running = {}

    def started(cell, cell_index, **_):
        running["index"], running["cell"] = cell_index, cell

    # after a cell's reply, its last outputs may take a while on a loaded machine:
    # nbclient's 4 s would drop them with a warning (a figure missing)
    kwargs.setdefault("iopub_timeout", 60)
    client = _client_class()(
        nb,
        timeout=timeout,
        kernel_name=kwargs.pop("kernel_name", "python3"),
        resources={"metadata": {"path": str(cwd)}},
        on_cell_execute=started,
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


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m tools.execution BUILD_DIR", file=sys.stderr)
        return 2
    if refresh(Path(args[0])):
        print(f"{args[0]}: the environment changed, every chapter runs again")
    return 0


if __name__ == "__main__":
    sys.exit(main())
