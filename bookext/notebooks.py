"""Runnable notebooks of the chapters: a reader's, with outputs, and a student's,
without the solutions of the exercises.

``make book`` writes them at the end of the build (``build-finished``) into
``<html>/notebooks/`` and every chapter page links both (:func:`add_links`);
``python -m bookext.notebooks [BUILD]`` writes them again from a built book.

* ``<chapter>.ipynb`` (reader): every cell, with the outputs of the build (from the
  execution cache, as the page shows them). Widgets are saved as the figure of their
  default values (their static explorer and snapshot are dropped: a notebook viewer
  cannot run them and Jupyter redraws them live when the cell runs), progress bars
  not at all (they redraw when the cell runs).
* ``<chapter>-student.ipynb``: the chapter without the ``{solution-start}`` ...
  ``{solution-end}`` blocks and without outputs.

Their first markdown cell carries the book's TeX macros (``\\R``, ``\\S``) as MyST
front matter, which jupyterlab-myst reads. Both start with a cell that installs
``attnlib`` (with the plotting extras, at the version of the book) when it cannot be
imported, so that a notebook runs on a hub, on Binder or on Colab on its own.
"""

from __future__ import annotations

import copy
import json
import re
import sys
from pathlib import Path
from typing import Any

import nbformat
import yaml

from attnlib._version import __version__

ROOT = Path(__file__).resolve().parents[1]
OUT = "notebooks"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
FENCE = re.compile(r"^(`{3,}|:{3,})\{(solution-start|solution-end|solution)\}")
END = re.compile(r"^(`{3,}|:{3,})\{solution-end\}")


def install_source(repository: str | None = None) -> str:
    """The first cell: install attnlib (``[all]``, this version) if it is missing."""
    spec = f"attnlib[all]=={__version__}"
    if repository:
        spec = f"attnlib[all] @ git+{repository.rstrip('/')}@v{__version__}"
    return (
        "# Run this cell first: it installs attnlib, the library of the book, when it\n"
        "# is missing (on Colab, Binder or a hub), and does nothing otherwise.\n"
        "import importlib.util\n"
        "import subprocess\n"
        "import sys\n"
        "\n"
        'if importlib.util.find_spec("attnlib") is None:\n'
        f'    subprocess.check_call([sys.executable, "-m", "pip", "install", '
        f"{spec!r}])"
    )


def strip_solutions(text: str) -> str:
    """A MyST chapter without its ``{solution-start}`` ... ``{solution-end}`` blocks
    and ``{solution}`` directives (sphinx-exercise), everything between included."""
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m is None:
            out.append(lines[i])
            i += 1
            continue
        marker, kind = m.group(1), m.group(2)
        if kind == "solution-end":
            raise ValueError(f"a {{solution-end}} without its start, line {i + 1}")
        j = i + 1
        if kind == "solution-start":
            while j < len(lines) and not END.match(lines[j]):
                j += 1
            if j == len(lines):
                raise ValueError(f"a {{solution-start}} without its end, line {i + 1}")
            marker = END.match(lines[j]).group(1)
            j += 1
        while j < len(lines) and lines[j].rstrip() != marker:
            j += 1
        i = j + 1
        # the blank lines around a dropped block collapse into one
        while i < len(lines) and not lines[i].strip() and out and not out[-1].strip():
            i += 1
    return "".join(out)


def _keep_output(output: dict) -> dict | None:
    """An output as the reader notebook keeps it (None: dropped)."""
    data = output.get("data")
    if data is None:
        return output
    if WIDGET_VIEW in data:
        if "image/png" not in data:  # a progress bar or a bare widget: redrawn live
            return None
        data = {k: v for k, v in data.items() if k != WIDGET_VIEW}
    if "attnlib-explorer" in "".join(data.get("text/html", "")):
        data = {k: v for k, v in data.items() if k != "text/html"}
    out = copy.deepcopy(output)
    out["data"] = data
    return out


def _first_cell(repository: str | None) -> Any:
    cell = nbformat.v4.new_code_cell(install_source(repository))
    cell.metadata["tags"] = ["install-attnlib"]
    return cell


def macros(root: Path = ROOT) -> dict[str, str]:
    """The TeX macros of the book (``_config.yml``'s MathJax ``tex.macros``)."""
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    tex = config["sphinx"]["config"].get("mathjax3_config", {}).get("tex", {})
    return {f"\\{k}": v for k, v in (tex.get("macros") or {}).items()}


def _frontmatter(nb: Any) -> None:
    """The first markdown cell starts with the page's front matter, where
    jupyterlab-myst reads the macros (``math:``) that the HTML book's MathJax has."""
    defined = macros()
    if not defined:
        return
    head = yaml.safe_dump({"math": defined}, allow_unicode=True, sort_keys=True)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = f"---\n{head}---\n{cell.source}"
            return


def _finish(nb: Any, repository: str | None) -> Any:
    nb.metadata.pop("widgets", None)
    nb.metadata.pop("source_map", None)
    nb.metadata.pop("jupytext", None)
    nb.metadata["kernelspec"] = {
        "display_name": "Python 3",
        "language": "python",
        "name": "python3",
    }
    _frontmatter(nb)
    nb.cells.insert(0, _first_cell(repository))
    nb.nbformat, nb.nbformat_minor = 4, 5
    for k, cell in enumerate(nb.cells):
        cell.setdefault("id", f"cell-{k}")
    nbformat.validate(nb)
    return nb


def reader_notebook(source: Path, build: Path, repository: str | None = None) -> Any:
    """The executed chapter (outputs of the build's execution cache)."""
    from jupyter_cache import get_cache
    from myst_nb.core.read import read_myst_markdown_notebook

    nb = read_myst_markdown_notebook(source.read_text(encoding="utf-8"), path=source)
    _, merged = get_cache(str(build / ".jupyter_cache")).merge_match_into_notebook(nb)
    for cell in merged.cells:
        if cell.cell_type == "code":
            kept = [_keep_output(o) for o in cell.get("outputs", [])]
            cell.outputs = [o for o in kept if o is not None]
    return _finish(merged, repository)


def student_notebook(source: Path, repository: str | None = None) -> Any:
    """The chapter without the solutions of its exercises, without outputs."""
    import jupytext

    nb = jupytext.reads(strip_solutions(source.read_text(encoding="utf-8")), "md")
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return _finish(nb, repository)


def chapters(root: Path = ROOT) -> list[Path]:
    """The chapters (MyST notebooks) listed in ``_toc.yml``."""
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"]] + [
        c["file"]
        for part in toc.get("parts", [])
        for c in part.get("chapters", [])
        if "file" in c
    ]
    paths = [root / f"{f}.md" for f in files]
    return [p for p in paths if p.exists() and "kernelspec" in p.read_text()[:600]]


def repository_url(root: Path = ROOT) -> str | None:
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    return (config.get("repository") or {}).get("url") or None


def write_notebooks(root: Path, build: Path, html: Path) -> list[Path]:
    """Write the reader and student notebooks of every chapter into ``html/OUT``."""
    out = html / OUT
    out.mkdir(parents=True, exist_ok=True)
    url = repository_url(root)
    written = []
    for source in chapters(root):
        for path, nb in (
            (out / f"{source.stem}.ipynb", reader_notebook(source, build, url)),
            (out / f"{source.stem}-student.ipynb", student_notebook(source, url)),
        ):
            nbformat.write(nb, path)
            written.append(path)
    return written


def build_finished(app: Any, exception: Exception | None) -> None:
    """``build-finished`` (HTML): the notebooks beside the pages."""
    if exception is not None or app.builder.format != "html":
        return
    root = Path(app.srcdir)
    html = Path(app.builder.outdir)
    for path in write_notebooks(root, root / "_build", html):
        # with launch buttons the theme offers _sources/<page>.ipynb for download,
        # a copy without the outputs of a cached build: offer the reader's instead
        theirs = html / "_sources" / "book" / path.name
        if theirs.exists():
            theirs.write_bytes(path.read_bytes())


def add_links(
    app: Any, pagename: str, templatename: str, context: dict, doctree: Any
) -> None:
    """``html-page-context``: a chapter page links its two notebooks at the top."""
    if app.builder.format != "html" or not pagename.startswith("book/"):
        return
    source = Path(app.srcdir) / f"{pagename}.md"
    if source not in chapters(Path(app.srcdir)) or "body" not in context:
        return
    name = source.stem
    reader = context["pathto"](f"{OUT}/{name}.ipynb", 1)
    student = context["pathto"](f"{OUT}/{name}-student.ipynb", 1)
    links = (
        '<p class="attnlib-notebooks">Run this chapter: '
        f'<a href="{reader}" download>notebook with outputs</a> · '
        f'<a href="{student}" download>student notebook (no solutions)</a> '
        "(each installs attnlib when it runs where it is missing).</p>"
    )
    body = context["body"]
    at = body.find("</h1>")
    at = at + len("</h1>") if at >= 0 else 0
    context["body"] = body[:at] + links + body[at:]


def main(argv: list[str]) -> int:
    build = Path(argv[0]) if argv else ROOT / "_build"
    written = write_notebooks(ROOT, build, build / "html")
    print(json.dumps([str(p) for p in written], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))


def notebook_failures(html: Path, sources: Path) -> list[str]:
    """What is wrong with the notebooks of a built book (the page check calls it):
    each chapter page links its two notebooks, the reader's shows an image for every
    cell that makes a figure, the student's has no solution and no output."""
    from tools.check_html import MAKES_FIGURE, _code

    failures = []
    for page in sorted((html / "book").glob("*.html")):
        source = sources / f"{page.stem}.md"
        if not source.exists() or "kernelspec" not in source.read_text()[:600]:
            continue
        text = page.read_text(encoding="utf-8")
        for name in (f"{page.stem}.ipynb", f"{page.stem}-student.ipynb"):
            if f"{OUT}/{name}" not in text:
                failures.append(f"{page.name}: no link to {name}")
            if not (html / OUT / name).exists():
                failures.append(f"{page.name}: {OUT}/{name} is missing")
        if failures:
            continue
        reader = nbformat.read(html / OUT / f"{page.stem}.ipynb", as_version=4)
        for cell in reader.cells:
            tags = set(cell.metadata.get("tags", []))
            if cell.cell_type != "code" or tags & {"remove-output", "remove-cell"}:
                continue
            if MAKES_FIGURE.search(_code(cell.source)) and not any(
                "image/png" in o.get("data", {}) for o in cell.get("outputs", [])
            ):
                first = cell.source.splitlines()[0][:40]
                failures.append(
                    f"{page.name}: the notebook has no figure for {first!r}"
                )
        student = nbformat.read(html / OUT / f"{page.stem}-student.ipynb", as_version=4)
        text = "\n".join(c.source for c in student.cells)
        if re.search(r"\{solution(-start|-end)?\}", text):
            failures.append(f"{page.name}: the student notebook has a solution")
        if any(c.get("outputs") for c in student.cells if c.cell_type == "code"):
            failures.append(f"{page.name}: the student notebook has outputs")
    return failures
