"""One digest of what the chapters' outputs depend on besides their code.

The execution cache of Jupyter Book keys on a chapter's code only. The outputs also
depend on :mod:`attnlib`, the pinned environment (``requirements.txt``,
``pyproject.toml``) and the environment the kernels are started with (the
``Makefile``, the student edition's build and the book's Sphinx extension
``bookext``, which sets ``IPYTHONDIR`` and ``ATTNLIB_STATIC`` for the kernels and
holds their start-up file). When any of them changes, the cache
of a build folder is dropped so that every chapter runs again against this checkout.
``make book`` and ``make student`` use this one rule:

``python -m tools.execution BUILD_DIR``
    Drop ``BUILD_DIR``'s execution cache if the digest differs from the one stored
    in ``BUILD_DIR/.execution-digest`` (or none is stored), then store it.
"""

from __future__ import annotations

import hashlib
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# what a build keeps from one execution to the next
CACHE_DIRS = (".jupyter_cache", ".doctrees", "jupyter_execute")
STAMP = ".execution-digest"


def inputs(root: Path = ROOT) -> list[Path]:
    """The files whose content the digest covers, sorted."""
    files = sorted((root / "attnlib").rglob("*.py"))
    # the kernels' environment and start-up file of the book (bookext/static.py,
    # bookext/ipython/...): all of the extension's code, like attnlib's
    files += sorted((root / "bookext").rglob("*.py"))
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
