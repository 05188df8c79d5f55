"""How a chapter reads in JupyterLab: the book's macros and folded solutions.

A chapter (``book/*.md``, a MyST text notebook) opens in JupyterLab as a notebook
(jupytext), and jupyterlab-myst renders its markdown cells. It knows nothing of
``_config.yml``: it takes TeX macros only from the page's MyST frontmatter, a YAML
block at the top of the notebook's first markdown cell (``math:``), and it folds
nothing by itself. ``python -m tools.lab_view`` writes both into the chapters:

* a first markdown cell holding that frontmatter, with the macros of
  ``_config.yml`` (MathJax's ``tex.macros``, which the HTML and the PDF use), as
  a fenced YAML block (jupyterlab-myst takes a first ``yaml`` code block for the
  frontmatter as it takes ``---`` lines; a fence keeps the chapter's source valid
  Markdown for the book's maths lint, which reads it as text). It is
  tagged ``remove-cell``, so the book's pages and notebooks leave it out; in
  JupyterLab it renders as nothing, and ``\\S`` is the sphere there too (KaTeX's own
  ``\\S`` is the section sign);
* in every exercise's solution, the cells from ``{solution-start}`` to
  ``{solution-end}`` hidden (``jupyter.source_hidden``, and ``outputs_hidden`` for
  the code): JupyterLab shows each as a bar with its first line that opens on a
  click. Each markdown cell of a solution begins with a MyST comment, ``% Solution
  to <label>`` (``, continued`` after the code), which the bar shows instead of
  the solution's first line; the pages and notebooks leave comments out.

Cell breaks and metadata are written as jupytext writes them (``+++ {...}``, a YAML
block at the top of a ``code-cell``), so saving a chapter from JupyterLab keeps
them; Jupyter Book reads the same metadata and ignores it, apart from the
``remove-cell`` tag.

``python -m tools.lab_view --check`` fails when a chapter is not as this module
writes it (a test runs it); run it without ``--check`` after changing the macros in
``_config.yml`` or adding an exercise.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

FRONTMATTER_MARK = '+++ {"tags": ["remove-cell"]}'
HIDDEN_MARK = "+++ " + json.dumps({"jupyter": {"source_hidden": True}})
CODE_HIDDEN = [
    "---",
    "jupyter:",
    "  source_hidden: true",
    "  outputs_hidden: true",
    "---",
]
NOTE_LINE = re.compile(r"^% Solution to \S+(, continued)?$")
START = re.compile(r"^(`{3,}|:{3,})\{solution-start\}\s*(\S*)")
END = re.compile(r"^(`{3,}|:{3,})\{solution-end\}")
CODE = re.compile(r"^`{3,}\{code-cell\}")
NOTE = [
    "# The book's TeX macros for JupyterLab (jupyterlab-myst reads them here;",
    "# the pages take them from _config.yml). Written by python -m tools.lab_view.",
]


def chapters(root: Path = ROOT) -> list[Path]:
    """The MyST notebooks of ``book/`` (a jupytext header, ``format_name: myst``)."""
    return [
        p
        for p in sorted((root / "book").glob("*.md"))
        if re.match(r"---\n.*?format_name: myst\n.*?---\n", p.read_text("utf-8"), re.S)
    ]


def book_macros(root: Path = ROOT) -> dict[str, str]:
    """``{"\\\\R": "\\\\mathbb{R}", ...}``: ``_config.yml``'s MathJax macros."""
    from bookext.plainmd import macros

    return macros(root)


def frontmatter(macros: dict[str, str]) -> list[str]:
    """The lines of the first cell: the page's MyST frontmatter with the macros."""

    def quoted(s: str) -> str:
        return "'" + s.replace("'", "''") + "'"

    body = [f"  {quoted(k)}: {quoted(v)}" for k, v in macros.items()]
    return ["```yaml", *NOTE, "math:", *body, "```"]


def _header_end(lines: list[str]) -> int:
    if not lines or lines[0] != "---":
        raise ValueError("no jupytext header")
    return lines.index("---", 1)


def strip(text: str) -> str:
    """The chapter without what :func:`write` adds (the inverse of :func:`write`)."""
    lines = text.split("\n")
    h = _header_end(lines)
    rest = lines[h + 1 :]
    # the frontmatter cell: blank, mark, blank, ```yaml ... ```, blank, +++
    if len(rest) > 3 and rest[1] == FRONTMATTER_MARK:
        close = rest.index("```", 4)
        if rest[close + 1 : close + 3] == ["", "+++"]:
            rest = rest[close + 3 :]
    out: list[str] = []
    i = 0
    after_end = False
    while i < len(rest):
        line = rest[i]
        if line == HIDDEN_MARK and i + 1 < len(rest) and rest[i + 1] == "":
            i += 2
            continue
        if NOTE_LINE.match(line):
            i += 1
            continue
        if CODE.match(line) and rest[i + 1 : i + 1 + len(CODE_HIDDEN)] == CODE_HIDDEN:
            out.append(line)
            i += 1 + len(CODE_HIDDEN)
            continue
        if after_end and line == "+++" and out and out[-1] == "":
            after_end = False
            i += 2 if i + 1 < len(rest) and rest[i + 1] == "" else 1
            continue
        if line.strip():
            after_end = False
        out.append(line)
        if END.match(line):
            # the directive's closing fence, then the +++ that ends the hidden cell
            i += 1
            while i < len(rest) and rest[i].strip() != END.match(line).group(1):
                out.append(rest[i])
                i += 1
            if i < len(rest):
                out.append(rest[i])
            after_end = True
        i += 1
    return "\n".join(lines[: h + 1] + out)


def write(text: str, macros: dict[str, str]) -> str:
    """The chapter with the frontmatter cell and its solutions' cells hidden."""
    text = strip(text)
    lines = text.split("\n")
    h = _header_end(lines)
    head, rest = lines[: h + 1], lines[h + 1 :]
    out = ["", FRONTMATTER_MARK, "", *frontmatter(macros), "", "+++"]
    label: str | None = None
    i = 0
    while i < len(rest):
        line = rest[i]
        start, end = START.match(line), END.match(line)
        if start and label is None:
            label = start.group(2) or "the exercise"
            out += [HIDDEN_MARK, "", f"% Solution to {label}", line]
        elif label is not None and CODE.match(line):
            out.append(line)
            out += CODE_HIDDEN
            # to the end of the code cell, then the next markdown cell is hidden too
            i += 1
            while i < len(rest) and not rest[i].startswith("```"):
                out.append(rest[i])
                i += 1
            out.append(rest[i])
            j = i + 1
            while j < len(rest) and not rest[j].strip():
                j += 1
            if j < len(rest) and not (CODE.match(rest[j]) or END.match(rest[j])):
                out += ["", HIDDEN_MARK, "", f"% Solution to {label}, continued"]
                i = j - 1
        elif end and label is not None:
            marker = end.group(1)
            out.append(line)
            i += 1
            while i < len(rest) and rest[i].strip() != marker:
                out.append(rest[i])
                i += 1
            out.append(rest[i])
            label = None
            j = i + 1
            while j < len(rest) and not rest[j].strip():
                j += 1
            if j < len(rest) and not CODE.match(rest[j]):
                out += ["", "+++"]
        else:
            out.append(line)
        i += 1
    if label is not None:
        raise ValueError(f"a {{solution-start}} of {label} without its end")
    return "\n".join(head + out)


def main(argv: list[str]) -> int:
    check = "--check" in argv
    macros = book_macros()
    stale = []
    for path in chapters():
        text = path.read_text(encoding="utf-8")
        new = write(text, macros)
        if new != text:
            stale.append(path.relative_to(ROOT))
            if not check:
                path.write_text(new, encoding="utf-8")
    if check and stale:
        names = ", ".join(map(str, stale))
        print(
            f"not as JupyterLab should show them: {names}; run python -m tools.lab_view"
        )
        return 1
    for name in stale:
        print(f"wrote {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
