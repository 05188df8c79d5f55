"""``python -m tools.coursework student``: the student edition (``make student``).

The book without the exercises' solutions and without the instructor's material
(masters, rubrics, guide), built from a mirror of its sources in
``_build/student/src`` into ``_build/student/html``. The mirror holds the book's
pages, bibliography, figures and served scripts only: no tooling.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from bookext.notebooks import strip_solutions as _strip_solutions

from .. import execution
from .common import GUIDE, ROOT, STUDENT, CourseworkError, write_if_changed
from .common import env as kernel_env

# files of book/ that are tools, not pages: left out of the mirror
TOOLING = {".py", ".pyc", ".sh"}


def strip_solutions(text: str) -> str:
    """A MyST chapter without its exercises' solutions: the book's own
    :func:`bookext.notebooks.strip_solutions` (the student notebooks drop the same
    blocks), with a :class:`CourseworkError` for an unclosed block."""
    try:
        return _strip_solutions(text)
    except ValueError as exc:
        raise CourseworkError(str(exc)) from None


def _student_toc(toc: dict[str, Any]) -> dict[str, Any]:
    def keep(entry):
        return entry.get("file") != GUIDE

    for part in toc.get("parts", []):
        part["chapters"] = [c for c in part.get("chapters", []) if keep(c)]
        for c in part["chapters"]:
            if "sections" in c:
                c["sections"] = [s for s in c["sections"] if keep(s)]
    toc["parts"] = [p for p in toc.get("parts", []) if p["chapters"]]
    return toc


def student_sources(dest: Path) -> None:
    """Mirror the book's sources into ``dest`` without solutions and without the
    instructor's material (masters, rubrics, guide)."""
    import yaml

    files: dict[Path, bytes] = {}
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    config["title"] = f"{config.get('title', '')} (student edition)".strip()
    files[Path("_config.yml")] = yaml.safe_dump(config, sort_keys=False).encode()
    toc = _student_toc(yaml.safe_load((ROOT / "_toc.yml").read_text()))
    files[Path("_toc.yml")] = yaml.safe_dump(toc, sort_keys=False).encode()
    skip_dirs = {"__pycache__", ".ipynb_checkpoints", "_build"}
    for path in sorted((ROOT / "book").rglob("*")):
        rel = path.relative_to(ROOT)
        parts = rel.parts
        if path.is_dir() or skip_dirs & set(parts):
            continue
        if path.suffix in TOOLING:
            continue  # scripts (a figure's drawing script): not part of the book
        if parts[:2] == ("book", "assignments"):
            continue  # masters (solutions, hidden tests) and rubrics
        if parts[:2] == ("book", "coursework") and parts[2:3] != ("generated",):
            continue  # the instructor's guide
        data = path.read_bytes()
        if path.suffix == ".md" and parts[1] != "_vendor":
            data = strip_solutions(data.decode()).encode()
        files[rel] = data
    for rel, data in files.items():
        write_if_changed(dest / rel, data)
    wanted = {dest / rel for rel in files}
    for path in sorted(dest.rglob("*"), reverse=True):
        rel = path.relative_to(dest)
        if rel.parts[0] == "_build":
            continue
        if path.is_file() and path not in wanted:
            path.unlink()
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()


def student(out: Path = STUDENT) -> Path:
    """Build the student edition into ``out/html`` (``-W -n``, offline)."""
    src = out / "src"
    src.mkdir(parents=True, exist_ok=True)
    student_sources(src)
    execution.refresh(src / "_build")
    # the outputs of the book's execution of this checkout, cell for cell: a page
    # runs again only if the book has not executed it (see tools/execution.py)
    reused = execution.reuse_book_outputs(src, src / "_build")
    print(f"the student edition reuses the book's outputs of {len(reused)} pages")
    jb = Path(sys.executable).parent / "jupyter-book"
    # the chapters' kernels must use the inline backend to show their figures, as
    # in `make book` (with Agg a figure is only "<Figure ...>" text)
    env = kernel_env()
    env.pop("MPLBACKEND")
    r = subprocess.run(
        [str(jb), "build", str(src), "-W", "-n", "--keep-going"],
        env=env,
        check=False,
    )
    if r.returncode != 0:
        raise CourseworkError("the student edition did not build (see above)")
    html = out / "html"
    shutil.rmtree(html, ignore_errors=True)
    shutil.copytree(src / "_build" / "html", html)
    print(f"\nThe student edition is built. Open file://{html}/index.html")
    return html
