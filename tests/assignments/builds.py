"""The assignments built once per test process, shared by the coursework tests.

``COURSEWORK_ONLY=a1_modelling,a3_gaussian`` limits a run to some assignments (while
writing one); CI builds them all.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

from tools import execution
from tools.coursework import build, masters

ONLY = {s for s in os.environ.get("COURSEWORK_ONLY", "").split(",") if s}
SLUGS = sorted(s for s in masters.master_paths() if not ONLY or s in ONLY)
_BUILT: list[Path] = []


def built() -> Path:
    """Folder of every assignment of :data:`SLUGS`, built (the first call builds).

    When ``make book`` has built the assignments of this checkout
    (:func:`tools.execution.built_assignments`), a copy of its build serves instead
    (a copy: no test can change the book's build)."""
    if not _BUILT:
        out = Path(tempfile.mkdtemp(prefix="assignments-"))
        atexit.register(shutil.rmtree, out, True)
        book = execution.built_assignments()
        if book is not None and all(
            (book / s / "questions.json").exists() for s in SLUGS
        ):
            for slug in SLUGS:
                shutil.copytree(book / slug, out / slug, symlinks=True)
        elif SLUGS:
            build.build(SLUGS, out=out, jobs=2)
        _BUILT.append(out)
    return _BUILT[0]
