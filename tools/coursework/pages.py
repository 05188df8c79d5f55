"""``python -m tools.coursework pages``: the book's assignment pages.

For each built assignment: a page with its questions and stubs and a download link
to the student notebook, generated into the git-ignored
``book/coursework/generated/``. The page opens with the assignment's text: the
notebook's grader set-up (otter's cell that makes ``grader`` and the cell that
shortens its messages, :data:`~gradebox.common.CHECK_CELL`) stays in the
notebook and is not shown (:func:`grader_setup`). Rubrics and model answers never
reach a page: they are in the instructor's folder of each build
(``_build/assignments/<slug>/``).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from .common import (
    BUILD,
    CHECK_CELL,
    GENERATED,
    MASTERS,
    CourseworkError,
    fmt,
    write_if_changed,
)
from .masters import EXPECTED_MARK, master_paths


# a Markdown link to a file (not [a, b](x) in a formula)
LINK = re.compile(r"(\[[^\]]*\])\(([^)\s]+\.(?:md|ipynb|png|svg|pdf)(?:#[^)\s]*)?)\)")
# a link target that is not relative to the master: a URL, an anchor, a root path
NOT_RELATIVE = re.compile(r"^([a-z][a-z0-9+.-]*:|#|/)", re.I)


def _relink(markdown: str, page_dir: Path) -> str:
    """Relative links of a master (to ``../circle.md``, say) as seen from the page."""

    def fix(m: re.Match) -> str:
        target = m.group(2)
        if NOT_RELATIVE.match(target):
            return m.group(0)
        path, sep, anchor = target.partition("#")
        new = os.path.relpath((MASTERS / path).resolve(), page_dir.resolve())
        return f"{m.group(1)}({Path(new).as_posix()}{sep}{anchor})"

    return LINK.sub(fix, markdown)


# the id build.py gives the cell of CHECK_CELL in the student notebook
CHECK_CELL_ID = "short-check-feedback"


def grader_setup(cell: dict) -> bool:
    """Whether a code cell of the student notebook sets up the grader (otter's
    ``grader = otter.Notebook(...)``, or :data:`CHECK_CELL`): kept in the notebook,
    not shown on the page."""
    src = "".join(cell.get("source", "")).strip()
    return (
        "otter.Notebook(" in src
        or src == CHECK_CELL.strip()
        or cell.get("id") == CHECK_CELL_ID
    )


def _page(slug: str, built: Path, page_dir: Path = GENERATED / "assignments") -> str:
    """MyST page of one assignment: its questions, stubs and a download link.

    ``page_dir`` is where the page is written: relative links of the master are
    rewritten to point from there to the same files.
    """
    info = json.loads((built / "questions.json").read_text())
    nb = json.loads((built / "student" / f"{slug}.ipynb").read_text())
    lines: list[str] = []
    title_done = False
    body: list[str] = []
    for cell in nb["cells"]:
        src = "".join(cell["source"]).strip()
        if cell["cell_type"] == "code":
            if not src or grader_setup(cell) or src.startswith("grader.check"):
                continue
            if src.startswith(EXPECTED_MARK):
                continue  # the values of the public tests: numbers, not for a page
            body += ["```python", src, "```", ""]
            continue
        if cell["cell_type"] != "markdown" or not src:
            continue
        src = re.sub(r"<!--\s*(BEGIN|END) QUESTION\s*-->", "", src).strip()
        if not src:
            continue
        if not title_done:
            m = re.match(r"^#\s+(.+?)\s*$", src, re.M)
            if m and src.startswith("#"):
                lines += [f"# {m.group(1)}", ""]
                src = src[m.end() :].strip()
                title_done = True
        if src:
            body += [_relink(src, page_dir), ""]
    if not title_done:
        lines += [f"# {info['title']}", ""]
    total = fmt(info["points"])
    lines += [
        f"Download the notebook: {{download}}`{slug}.ipynb <../notebooks/{slug}.ipynb>`"
        " (its first cell installs `attnlib` and the grader's checks where they are "
        "missing, from the wheel in the assignment's zip above; or open it with "
        "`make lab` in a clone of the book). Each question ends with a "
        "`grader.check` cell that runs its public tests.",
        "",
        "| question | points | graded |",
        "| --- | --- | --- |",
    ]
    for q in info["questions"]:
        how = "by hand (written answer)" if q["manual"] else "automatically"
        lines.append(f"| `{q['name']}` | {fmt(q['points'])} | {how} |")
    lines += [f"| total | {total} | |", ""]
    return "\n".join(lines + body).rstrip() + "\n"


def pages(build_root: Path = BUILD, dest: Path = GENERATED) -> list[Path]:
    """Write the assignment pages and their notebooks.

    Files are rewritten only when their content changes (so Sphinx re-reads only
    what changed); pages of assignments that no longer exist are removed.
    """
    masters = master_paths()
    written = []
    keep = set()
    for slug in masters:
        built = build_root / slug
        if not (built / "questions.json").exists():
            raise CourseworkError(
                f"{slug} is not built: run `make assignments` (or "
                f"`python -m tools.coursework build {slug}`) first"
            )
        page = dest / "assignments" / f"{slug}.md"
        nb = dest / "notebooks" / f"{slug}.ipynb"
        keep.update({page, nb})
        if write_if_changed(page, _page(slug, built, page.parent)):
            written.append(page)
        write_if_changed(nb, (built / "student" / f"{slug}.ipynb").read_bytes())
    # the rubrics and model answers are for instructors only: never in a page
    # (an include left from an earlier version of this tool goes)
    stale = dest / "rubrics.md"
    if stale.exists():
        stale.unlink()
    for sub in ("assignments", "notebooks"):
        for f in (dest / sub).glob("*"):
            if f not in keep:
                f.unlink()
    return written
