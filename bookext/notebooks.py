"""Runnable notebooks of the chapters: a reader's, with outputs, and a student's,
without the solutions of the exercises.

``make book`` writes them at the end of the build (``build-finished``) into
``<html>/notebooks/``, with a zip per chapter and per assignment beside them
(:func:`write_bundles`: the notebooks, attnlib's wheel and the files the chapter
reads, a folder that runs as it is once unzipped), and every chapter page links
the zip and both notebooks (:func:`add_links`); ``python -m bookext.notebooks
[BUILD]`` writes them again from a built book.

* ``<chapter>.ipynb`` (reader): every cell, with the outputs of the build (from the
  execution cache, as the page shows them). Widgets are saved as the figure of their
  default values (their static explorer and snapshot are dropped: a notebook viewer
  cannot run them and Jupyter redraws them live when the cell runs), progress bars
  not at all (they redraw when the cell runs).
* ``<chapter>-student.ipynb``: the chapter without the ``{solution-start}`` ...
  ``{solution-end}`` blocks and without outputs.

Their markdown is plain CommonMark (:mod:`bookext.plainmd`): roles, directives and
the book's TeX macros become links to the book's pages, bold theorem headings and
expanded TeX, so that they read well in JupyterLab, Jupyter, Colab or a notebook
viewer; in the reader's notebook the solutions fold (``<details>``, hidden code);
in both, proofs fold (open at first), and the cells the book's pages fold are
folded (:func:`fold_cells`): the checks, and the cells tagged ``hide-input``.
Both start with a cell that makes attnlib importable (:func:`install_source`): from
the wheel beside the notebook (the zip) or that the book's site ships
(:mod:`bookext.downloads`, at the address ``html.baseurl`` of ``_config.yml``),
never by name from a package index; when it cannot, its error names the zip to
download and the page that links it.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import sys
import zipfile
from pathlib import Path
from typing import Any

import nbformat
import yaml
from dataclasses import dataclass

from attnlib._version import __version__

from .downloads import DATA_DIRS, DOWNLOADS, SDIST, WHEEL, sha256, write_downloads  # noqa: F401
from .plainmd import Index, book_index, convert, macros, page_title  # noqa: F401
from .plainmd import references_markdown, relink

try:  # inside Sphinx: its logger (a warning would fail the -W build)
    from sphinx.util import logging as _sphinx_logging

    logger = _sphinx_logging.getLogger(__name__)
except ImportError:  # pragma: no cover
    import logging

    logger = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parents[1]
OUT = "notebooks"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
FENCE = re.compile(r"^(`{3,}|:{3,})\{(solution-start|solution-end|solution)\}")
END = re.compile(r"^(`{3,}|:{3,})\{solution-end\}")


INSTALL = """\
# Run this cell first. It makes attnlib {version}, the library of the book, importable:
# nothing happens where a compatible attnlib is installed; otherwise it installs the
# wheel that the book's site ships (or a copy of it beside this notebook){repo_note}.
# It never installs "attnlib" by name from a package index.
BOOK_URL = {book_url!r}
REPOSITORY = {repository!r}
ATTNLIB = "{version}"
WHEEL = "{wheel}"
EXTRAS = "{extras}"  # the optional parts of attnlib this chapter uses
NEEDS = {needs!r}  # the modules those parts need
# other packages the notebook imports (module: the pinned requirement pip installs)
ALSO = {also!r}
# the files the chapter reads (path beside this notebook, SHA-256), fetched if missing
DATA = {data}
# everything above in one download: this zip of the book's page
BUNDLE = {bundle!r}
PAGE = {page!r}

import hashlib, importlib, importlib.util, re, shutil, subprocess, sys, urllib.request
from pathlib import Path


def _release(version):
    m = re.match(r"(\\d+)\\.(\\d+)\\.(\\d+)(.*)", version)
    if m is None:
        return None
    return tuple(int(x) for x in m.groups()[:3]), m.group(4)


def _compatible(version):
    # the same major.minor, not older than the book's (0.2.0: 0.2.x; not 0.3)
    have, want = _release(version), _release(ATTNLIB)
    if have is None or have[0][:2] != want[0][:2] or have[0] < want[0]:
        return False
    return have[0] > want[0] or not have[1] or have[1] == want[1]


def _installed():
    try:
        import attnlib
    except ImportError:
        return None
    return attnlib.__version__


def _missing(modules=NEEDS):
    def found(module):
        if module in sys.modules:  # imported already (or a stand-in of a grader)
            return True
        try:
            return importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            return False

    return [m for m in modules if not found(m)]


def _download_hint():
    return (
        f"Download {{BUNDLE}} from {{PAGE}} (the link at the top of the page), unzip"
        " it and open this notebook from its folder: it holds the notebook, the"
        f" wheel {{WHEEL}}" + (" and the files the chapter reads" if DATA else "")
        + "."
    )


def _pip(requirements):
    r = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet"] + requirements,
        capture_output=True,
        text=True,
    )
    return None if r.returncode == 0 else (r.stderr or r.stdout)[-800:]


def _sources():
    for folder in (Path.cwd(), Path.cwd().parent / "{downloads}"):
        if (folder / WHEEL).is_file():
            yield f"the copy beside this notebook ({{folder / WHEEL}})", folder / WHEEL
    if BOOK_URL:
        yield "the book's site", BOOK_URL.rstrip("/") + "/{downloads}/" + WHEEL
    if REPOSITORY and sys.platform != "emscripten":
        yield "the repository", "git+" + REPOSITORY.rstrip("/") + "@v" + ATTNLIB


async def _install(where):
    if sys.platform == "emscripten":  # JupyterLite (Pyodide): piplite, not pip
        import piplite

        local = isinstance(where, Path)
        if NEEDS:
            return f"{{', '.join(NEEDS)}} cannot run in the browser (Pyodide)"
        await piplite.install("emfs:" + str(where.resolve()) if local else where)
        await piplite.install(["numpy", "scipy", "tqdm", "sympy", "matplotlib"])
        return None
    url = where.resolve().as_uri() if isinstance(where, Path) else where
    return _pip([f"attnlib[{{EXTRAS}}] @ {{url}}"])


def _fetch(rel, digest):
    # a file the chapter reads (e.g. trained weights): beside the notebook, else a
    # copy in the site's folder of downloads beside it, else from the book's site
    target = Path.cwd() / rel
    if target.is_file() and hashlib.sha256(target.read_bytes()).hexdigest() == digest:
        return None
    target.parent.mkdir(parents=True, exist_ok=True)
    local = Path.cwd().parent / "{downloads}" / rel
    if local.is_file():
        shutil.copyfile(local, target)
    elif BOOK_URL:
        url = BOOK_URL.rstrip("/") + "/{downloads}/" + rel
        with urllib.request.urlopen(url, timeout=120) as response:
            target.write_bytes(response.read())
    else:
        raise RuntimeError(f"{{rel}} is missing here. " + _download_hint())
    if hashlib.sha256(target.read_bytes()).hexdigest() != digest:
        target.unlink()
        raise RuntimeError(f"{{rel}}: the downloaded file is not the book's")
    return rel


before = _installed()
if before is not None and _compatible(before) and not _missing():
    print(f"attnlib {{before}} is installed: nothing to install.")
else:
    tried = []
    for what, where in _sources():
        error = await _install(where)
        if error is None:
            importlib.invalidate_caches()
            print(f"attnlib {{ATTNLIB}} installed from {{what}}: {{where}}")
            break
        tried.append(f"{{what}} ({{where}}): {{error.strip()}}")
    else:
        raise RuntimeError(
            f"attnlib {{ATTNLIB}} is not installed here"
            + (f" (this environment has {{before}})" if before else "")
            + " and could not be installed"
            + (":\\n" + "\\n".join(tried) if tried else ".")
            + "\\n" + _download_hint() + " Then run this cell again, or install"
            + f" the wheel yourself: pip install '{{WHEEL}}[{{EXTRAS}}]'"
        )
    if before is not None and not _compatible(before):
        print("Restart the kernel (an older attnlib is loaded), run this cell again.")
lacking = _missing(list(ALSO))
if lacking:
    if sys.platform == "emscripten":
        raise RuntimeError(f"{{', '.join(lacking)}}: not in the browser (Pyodide)")
    wanted = [ALSO[m] for m in lacking]
    error = _pip(wanted)
    if error is not None:
        raise RuntimeError(f"pip could not install {{' '.join(wanted)}}: {{error}}")
    importlib.invalidate_caches()
    print(f"installed {{', '.join(wanted)}}")
fetched = [f for f in (_fetch(rel, digest) for rel, digest in DATA) if f]
if fetched:
    print(f"fetched {{len(fetched)}} file(s) the chapter reads: {{', '.join(fetched)}}")
"""


def install_source(
    book_url: str | None = None,
    repository: str | None = None,
    needs: ChapterNeeds | None = None,
    bundle: str = "",
    page: str = "",
) -> str:
    """The first cell of every notebook: make attnlib (this version) importable.

    In order: nothing if a compatible attnlib (same major.minor, not older) imports;
    else the wheel the book's site ships (:func:`write_downloads`), first a copy of
    it beside the notebook (the chapter's zip, :func:`write_bundles`, or a
    downloaded release), then ``book_url``'s ``_downloads/``; else the repository
    at the tag ``v<version>`` when ``repository`` is set. In JupyterLite (Pyodide)
    it installs with piplite. It never installs the name ``attnlib`` from a
    package index (anyone could publish that name there). The other packages the
    notebook imports (``needs.also``, e.g. otter-grader for an assignment) are
    installed at their pinned version when missing, and the files it reads are
    fetched when they are not beside it. When nothing works its error names the zip
    to download (``bundle``) and the page that links it (``page``: its address, or
    its title when the book has none).
    """
    repo_note = ", or the repository at the release tag" if repository else ""
    needs = needs or ChapterNeeds()
    return INSTALL.format(
        version=__version__,
        wheel=WHEEL.format(version=__version__),
        extras=",".join(("all", *needs.extras)),
        needs=list(needs.modules),
        also=dict(needs.also),
        data="[" + "".join(f"\n    {d!r}," for d in needs.data) + "\n]"
        if needs.data
        else "[]",
        book_url=book_url or "",
        repository=repository or "",
        downloads=DOWNLOADS,
        repo_note=repo_note,
        bundle=bundle or "the zip of this notebook",
        page=page or "the book's page of this notebook",
    )


def is_install_cell(source: str) -> bool:
    """Whether ``source`` is, character for character, an install cell that
    :func:`install_source` writes for this version, with settings the book gives
    it (its extras, the pins of :data:`OTHERS`, files in :data:`DATA_DIRS`, http(s)
    addresses), e.g. for a grader that reads a submitted notebook and should not
    report the book's own cell."""
    import ast

    values = {}
    for name in ("BOOK_URL", "REPOSITORY", "EXTRAS", "NEEDS", "ALSO", "DATA"):
        m = re.search(rf"^{name} = (.+?)(?:  #.*)?$", source, re.M)
        if name == "DATA":
            m = re.search(r"^DATA = (\[.*?\])$", source, re.M | re.S)
        if m is None:
            return False
        values[name] = m.group(1)
    for name in ("BUNDLE", "PAGE"):
        m = re.search(rf"^{name} = (.+)$", source, re.M)
        if m is None:
            return False
        values[name] = m.group(1)
    try:
        v = {k: ast.literal_eval(x) for k, x in values.items()}
        extras = v["EXTRAS"].split(",")
        needs = ChapterNeeds(
            tuple(extras[1:]),
            tuple(v["NEEDS"]),
            tuple(tuple(d) for d in v["DATA"]),
            tuple(v["ALSO"].items()),
        )
        made = install_source(
            v["BOOK_URL"], v["REPOSITORY"], needs, v["BUNDLE"], v["PAGE"]
        )
    except (ValueError, TypeError, SyntaxError, AttributeError):
        return False
    # only what the book writes: its extras, its pins, its folders of data
    modules = [m for e in needs.extras if e in EXTRAS for m in EXTRAS[e][0]]
    return (
        made == source
        and extras[0] == "all"
        and all(e in EXTRAS for e in needs.extras)
        and list(needs.modules) == modules
        and all(m in OTHERS and r == pinned(OTHERS[m]) for m, r in needs.also)
        and all(
            rel.split("/")[0] in DATA_DIRS and ".." not in rel.split("/")
            for rel, _ in needs.data
        )
        and all(re.match(r"(https?://|$)", u) for u in (v["BOOK_URL"], v["REPOSITORY"]))
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
            # the cell break that hides the solution in JupyterLab (tools.lab_view)
            k = len(out)
            while k and (not out[k - 1].strip() or out[k - 1].startswith("% ")):
                k -= 1
            if k and out[k - 1].startswith("+++ "):
                del out[k - 1 :]
            while j < len(lines) and not END.match(lines[j]):
                j += 1
            if j == len(lines):
                raise ValueError(f"a {{solution-start}} without its end, line {i + 1}")
            marker = END.match(lines[j]).group(1)
            j += 1
        while j < len(lines) and lines[j].rstrip() != marker:
            j += 1
        i = j + 1
        # the blank lines around a dropped block collapse into one, and the cell
        # break after a solution goes with it
        while i < len(lines) and not lines[i].strip() and out and not out[-1].strip():
            i += 1
        if kind == "solution-start" and i < len(lines) and lines[i].rstrip() == "+++":
            i += 1
            while i < len(lines) and not lines[i].strip():
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


@dataclass(frozen=True)
class ChapterNeeds:
    """What a chapter needs besides ``attnlib[all]``: extras of attnlib, the modules
    they bring (checked before anything is installed), the files it reads, as
    (path relative to the chapter, SHA-256) pairs, and other packages it imports,
    as (module, pinned requirement) pairs."""

    extras: tuple[str, ...] = ()
    modules: tuple[str, ...] = ()
    data: tuple[tuple[str, str], ...] = ()
    also: tuple[tuple[str, str], ...] = ()


# attnlib's extras that "all" leaves out (heavy, absent from Pyodide), the modules
# they bring, and what a chapter's code shows of their use
EXTRAS = {"nets": (("jax", "optax"), re.compile(r"\battnlib\.nets\b|\bimport jax\b"))}


# packages that notebooks import besides attnlib: module -> the name pip installs
# (at the version requirements.txt pins)
OTHERS = {"otter": "otter-grader"}


def pinned(name: str, root: Path = ROOT) -> str:
    """``name==version`` as ``requirements.txt`` pins it (ValueError if it does not)."""
    for line in (root / "requirements.txt").read_text(encoding="utf-8").splitlines():
        req = line.split("#")[0].strip()
        if req.lower().startswith(name.lower() + "=="):
            return req
    raise ValueError(f"name: requirements.txt pins no {name!r}")


def chapter_needs(source: Path, text: str | None = None) -> ChapterNeeds:
    """The extras and the data files of a chapter, read from its code (``text``, by
    default the file ``source``): a chapter that imports ``attnlib.nets`` needs the
    ``nets`` extra; one whose code names the folder ``"models"`` reads every file of
    ``book/models``; one that imports otter (an assignment) needs otter-grader at
    the version of ``requirements.txt``."""
    if text is None:
        text = source.read_text(encoding="utf-8")
    also = tuple(
        (module, pinned(name))
        for module, name in OTHERS.items()
        if re.search(rf"^\s*(import|from) {module}\b", text, re.M)
    )
    extras, modules = [], []
    for name, (mods, pattern) in EXTRAS.items():
        if pattern.search(text):
            extras.append(name)
            modules += mods
    data = []
    for folder in DATA_DIRS:
        if re.search(rf"""Path\(["']{folder}["']\)""", text):
            for f in sorted((source.parent / folder).glob("*")):
                if f.is_file():
                    data.append((f"{folder}/{f.name}", sha256(f)))
    return ChapterNeeds(tuple(extras), tuple(modules), tuple(data), also)


def page_reference(settings: Settings, page: str, title: str = "") -> str:
    """How an install cell names the page that links a notebook's zip: its address
    with ``html.baseurl``, else its title and its path in the book's site."""
    if settings.book_url:
        return f"{settings.book_url.rstrip('/')}/{page}.html"
    title = title or (settings.index.titles.get(page, "") if settings.index else "")
    named = f"“{title}” " if title else ""
    return f"the book's page {named}({page}.html in the book's site)"


def _first_cell(
    settings: Settings,
    needs: ChapterNeeds | None = None,
    page: str = "",
    title: str = "",
) -> Any:
    """The install cell of the notebook of ``page`` (a docname: its zip is
    ``<stem>.zip``)."""
    bundle = f"{page.rsplit('/', 1)[-1]}.zip" if page else ""
    where = page_reference(settings, page, title) if page else ""
    cell = nbformat.v4.new_code_cell(
        install_source(settings.book_url, settings.repository, needs, bundle, where)
    )
    cell.metadata["tags"] = ["install-attnlib"]
    return cell


def _config(root: Path) -> dict:
    return yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))


@dataclass
class Settings:
    """Where the notebooks find the book and the library (``_config.yml``)."""

    book_url: str | None = None  # html.baseurl: the published book's address
    repository: str | None = None  # repository.url
    index: Index | None = None  # the book's labels (None: only the page's own)


def settings(root: Path = ROOT, html: Path | None = None) -> Settings:
    """The book's address and repository from ``_config.yml``, and the index of its
    labels (numbered from the built pages in ``html`` when given)."""
    config = _config(root)
    book_url = (config.get("html") or {}).get("baseurl") or None
    repository = (config.get("repository") or {}).get("url") or None
    index = book_index(root, toc_pages(root), book_url or "", html)
    return Settings(book_url, repository, index)


def toc_pages(root: Path = ROOT) -> list[str]:
    """The pages (docnames) that ``_toc.yml`` names one by one."""
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    pages = [toc["root"]]

    def walk(entries: list) -> None:
        for entry in entries or []:
            if "file" in entry:
                pages.append(entry["file"])
            walk(entry.get("sections", []))

    walk(toc.get("chapters", []))  # a book without parts
    for part in toc.get("parts", []):
        walk(part.get("chapters", []))
    return pages


def _solution_segments(text: str) -> list[tuple[str, str | None]]:
    """A markdown cell cut at its ``{solution-start}``/``{solution-end}`` fences:
    ``(text, label)`` pieces, ``label`` the exercise of the solution the piece is in
    ("" when it is in one with no label, None outside). The state carries over from
    the cell before through :data:`_STATE`."""
    lines = text.splitlines()
    pieces: list[tuple[str, str | None]] = []
    current: list[str] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m is None or m.group(2) == "solution":
            current.append(lines[i])
            i += 1
            continue
        pieces.append(("\n".join(current), _STATE["label"]))
        current = []
        if m.group(2) == "solution-start":
            _STATE["label"] = lines[i][m.end() :].strip()
        else:
            _STATE["label"] = None
        marker = m.group(1)
        i += 1
        while i < len(lines) and lines[i].strip() != marker:
            i += 1
        i += 1
    pieces.append(("\n".join(current), _STATE["label"]))
    return [(t, label) for t, label in pieces if t.strip()]


_STATE: dict[str, str | None] = {"label": None}


def _plain_cells(nb: Any, page: str, index: Index, reader: bool) -> None:
    """Markdown cells in plain Markdown (:mod:`bookext.plainmd`); in the reader's
    notebook the solutions fold: their text in ``<details>``, their code hidden
    (``jupyter.source_hidden``), both tagged ``solution``."""
    _STATE["label"] = None
    index.start()
    cells = []
    for cell in nb.cells:
        if cell.cell_type == "markdown" and "remove-cell" in cell.metadata.get(
            "tags", []
        ):  # as on the book's pages (the frontmatter for JupyterLab: tools.lab_view)
            continue
        if cell.cell_type != "markdown":
            if _STATE["label"] is not None and cell.cell_type == "code":
                fold(cell, {"input", "output"}, SOLUTION_TAG)
            cells.append(cell)
            continue
        for text, label in _solution_segments(cell.source):
            plain = convert(text, index, page)
            if not plain.strip():  # e.g. a MyST comment and a solution's end
                continue
            new = nbformat.v4.new_markdown_cell(plain)
            if label is not None:
                target = index.targets.get(label)
                of = f" to {target.text}" if target and target.text else ""
                new.source = (
                    f"<details><summary>Solution{of}</summary>\n\n{plain}\n\n</details>"
                )
                new.metadata["tags"] = ["solution"]
            cells.append(new)
    if _STATE["label"] is not None:
        raise ValueError(f"{page}: a {{solution-start}} without its end")
    if not reader:
        assert all(SOLUTION_TAG not in c.metadata.get("tags", []) for c in cells)
    references = references_markdown(index)
    if references:  # the works cited, for a notebook read away from the book's site
        cells.append(nbformat.v4.new_markdown_cell(references))
        cells[-1].metadata["tags"] = ["references"]
    nb.cells = cells


CHECK_TAG = "check"
SOLUTION_TAG = "solution"


def fold(cell: Any, parts: set[str], tag: str | None = None) -> None:
    """Fold parts of a code cell (``"input"``, ``"output"``) as JupyterLab and
    Notebook 7 do (``jupyter.source_hidden``, ``jupyter.outputs_hidden``: a bar
    opens them), and tag it ``tag``: the solutions, the checks and the cells tagged
    ``hide-input``, ``hide-output`` or ``hide-cell`` fold with it."""
    hidden = cell.metadata.setdefault("jupyter", {})
    if "input" in parts:
        hidden["source_hidden"] = True
    if "output" in parts:
        hidden["outputs_hidden"] = True
    tags = cell.metadata.get("tags", [])
    if tag is not None and tag not in tags:
        cell.metadata["tags"] = [*tags, tag]


def shown_mime_types(cell: Any) -> set[str]:
    """The mime types of a code cell's outputs as the page shows them (none for a
    cell tagged ``remove-output``); a stream is text."""
    tags = cell.metadata.get("tags", [])
    if "remove-output" in tags or "remove-cell" in tags:
        return set()
    return {m for out in cell.get("outputs", []) for m in out.get("data", {})}


def fold_cells(nb: Any) -> int:
    """Fold the code cells that the book's pages fold (:mod:`bookext.folding`),
    from the outputs of the build (before the notebook drops any): a cell tagged
    ``hide-input``, ``hide-output`` or ``hide-cell`` folds those parts; a cell that
    asserts a result folds with the tag ``check``: whole when it shows text only,
    its code only when it shows a figure, an explorer, a player or a progress bar,
    as on the page. A solution's code is folded already (:func:`_plain_cells`). The
    label of a check is the anchor at the end of the markdown cell above it, which
    stays open, so a link to the check lands just above it. Returns the number of
    folded checks."""
    from .folding import asserts, tag_folds, text_only

    n = 0
    for cell in nb.cells:
        tags = cell.metadata.get("tags", [])
        if cell.cell_type != "code" or SOLUTION_TAG in tags:
            continue
        parts = tag_folds(tags)
        if parts:
            fold(cell, parts)
        elif "remove-input" not in tags and asserts(cell.source):
            whole = text_only(shown_mime_types(cell))
            fold(cell, {"input", "output"} if whole else {"input"}, CHECK_TAG)
            n += 1
    return n


def _finish(nb: Any, source: Path, config: Settings, reader: bool) -> Any:
    nb.metadata.pop("widgets", None)
    nb.metadata.pop("source_map", None)
    nb.metadata.pop("jupytext", None)
    nb.metadata["kernelspec"] = {
        "display_name": "Python 3",
        "language": "python",
        "name": "python3",
    }
    index = config.index or book_index(ROOT, toc_pages(ROOT), config.book_url or "")
    page = f"{source.parent.name}/{source.stem}"
    _plain_cells(nb, page, index, reader)
    fold_cells(nb)
    for cell in nb.cells:
        if cell.cell_type == "code" and reader:
            kept = [_keep_output(o) for o in cell.get("outputs", [])]
            cell.outputs = [o for o in kept if o is not None]
        elif cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    nb.cells.insert(0, _first_cell(config, chapter_needs(source), page))
    nb.nbformat, nb.nbformat_minor = 4, 5
    for k, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{k}"
    nbformat.validate(nb)
    return nb


def reader_notebook(
    source: Path, build: Path | None, config: Settings | None = None
) -> Any:
    """The executed chapter (outputs of the build's execution cache; without
    ``build``, the chapter with no outputs)."""
    return _finish(executed(source, build), source, config or settings(), reader=True)


def executed(source: Path, build: Path | None, source_map: bool = False) -> Any:
    """The chapter with the outputs of the build's execution cache, as the page
    shows them (without ``build``, with no outputs; with ``source_map``, the line
    of each cell in ``metadata.source_map``). A ``KeyError`` says that the cache
    holds no execution of the chapter's current code."""
    from jupyter_cache import get_cache
    from myst_nb.core.read import read_myst_markdown_notebook

    text = source.read_text(encoding="utf-8")
    nb = read_myst_markdown_notebook(text, add_source_map=source_map, path=source)
    if build is None:
        return nb
    _, merged = get_cache(str(build / ".jupyter_cache")).merge_match_into_notebook(nb)
    return merged


def student_notebook(
    source: Path, config: Settings | None = None, build: Path | None = None
) -> Any:
    """The chapter without the solutions of its exercises, without outputs. Its
    cells fold as on the page (:func:`fold_cells`), decided on the outputs of the
    build's execution cache in ``build``; without it, every cell that asserts is a
    folded check."""
    import jupytext

    nb = jupytext.reads(strip_solutions(source.read_text(encoding="utf-8")), "md")
    if build is not None:
        # the student's code cells are the reader's, but the solutions, in order
        run = executed(source, build)
        done = iter(c for c in run.cells if c.cell_type == "code")
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            for other in done:
                if other.source == cell.source:
                    cell.outputs = other.get("outputs", [])
                    break
    return _finish(nb, source, config or settings(), reader=False)


def chapters(root: Path = ROOT) -> list[Path]:
    """The chapters (MyST notebooks) listed in ``_toc.yml``."""
    paths = [root / f"{f}.md" for f in toc_pages(root)]
    return [p for p in paths if p.exists() and "kernelspec" in p.read_text()[:600]]


def repository_url(root: Path = ROOT) -> str | None:
    return settings(root).repository


def write_notebooks(
    root: Path,
    build: Path,
    html: Path,
    config: Settings | None = None,
    only: list[str] | None = None,
) -> list[Path]:
    """Write the reader and student notebooks of every chapter (or of the chapters
    named in ``only``) into ``html/OUT``."""
    out = html / OUT
    out.mkdir(parents=True, exist_ok=True)
    config = config or settings(root, html)
    written = []
    for source in chapters(root):
        if only is not None and source.stem not in only:
            continue
        reader = reader_notebook(source, build, config)
        student = student_notebook(source, config, build)
        for path, nb in (
            (out / f"{source.stem}.ipynb", reader),
            (out / f"{source.stem}-student.ipynb", student),
        ):
            nbformat.write(nb, path)
            written.append(path)
        for problem in config.index.unresolved if config.index else []:
            print(f"{source.name}: unresolved reference in the notebook: {problem}")
        if config.index:
            config.index.unresolved.clear()
    return written


# ---------------------------------------------------------------------- the zips
# the assignments' student notebooks that the coursework pages link (tools.coursework)
ASSIGNMENTS = Path("book") / "coursework" / "generated" / "notebooks"
ASSIGNMENT_PAGES = "book/coursework/generated/assignments"
ZIP_TIME = (2000, 1, 1, 0, 0, 0)  # the same zip from the same files, build after build

README = """\
# {title}

This folder runs as it is, in Jupyter (JupyterLab, Notebook 7, VS Code, Colab: upload
the whole folder) with Python 3.11 or newer:

{notebooks}

Open a notebook from this folder and run its first cell: it installs attnlib
{version}, the library of the book, from the wheel beside it ({wheel}){also},
unless a compatible attnlib is installed already. Its other dependencies (numpy,
scipy, matplotlib, ...) come from the package index pip uses.{data}

From {page}.
"""


def _zip(target: Path, folder: str, files: dict[str, bytes]) -> Path:
    """``files`` (name in the folder -> content) in ``target`` under ``folder/``."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as z:
        for name in sorted(files):
            info = zipfile.ZipInfo(f"{folder}/{name}", ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            z.writestr(info, files[name])
    return target


def install_data(install: str) -> list[tuple[str, str]]:
    """The files an install cell fetches when they are not beside its notebook:
    its ``DATA``, (path, SHA-256) pairs."""
    import ast

    m = re.search(r"^DATA = (\[.*?\])$", install, re.M | re.S)
    if m is None:
        raise ValueError("install: not an install cell (no DATA)")
    return [tuple(d) for d in ast.literal_eval(m.group(1))]


def _data_files(source: Path, install: str) -> dict[str, bytes]:
    """The files a notebook reads, as its install cell (``install``) names them
    (path beside the notebook, SHA-256), from the chapter's folder."""
    out = {}
    for rel, digest in install_data(install):
        path = source.parent / rel
        if not path.is_file():
            raise FileNotFoundError(f"{path}: {source.name} reads it")
        content = path.read_bytes()
        if hashlib.sha256(content).hexdigest() != digest:
            raise ValueError(f"{path} changed since the notebooks were written")
        out[rel] = content
    return out


def _readme(
    title: str, notebooks: dict[str, str], needs: ChapterNeeds, page: str
) -> bytes:
    also = "".join(f" and {req}" for _, req in needs.also)
    data = ""
    if needs.data:
        folders = sorted({rel.split("/")[0] + "/" for rel, _ in needs.data})
        data = (
            f"\nThe files the chapter reads are in {', '.join(folders)} beside the"
            " notebooks; keep them there."
        )
    return README.format(
        title=title,
        notebooks="\n".join(f"- `{n}`: {what}" for n, what in notebooks.items()),
        version=__version__,
        wheel=WHEEL.format(version=__version__),
        also=also,
        data=data,
        page=page,
    ).encode()


def assignment_notebook(path: Path, config: Settings) -> tuple[Any, ChapterNeeds]:
    """An assignment's student notebook (``tools.coursework pages``) with the
    install cell first: attnlib from the wheel beside it, and otter-grader, which
    its ``grader.check`` cells run, at the version ``requirements.txt`` pins. Its
    links to the chapters (written from ``book/assignments/``) follow
    :meth:`~bookext.plainmd.Index.link`."""
    nb = nbformat.read(path, as_version=4)
    index = config.index or book_index(ROOT, toc_pages(ROOT), config.book_url or "")
    for cell in nb.cells:
        if cell.cell_type == "markdown":  # its links to the chapters (../circle.md)
            cell.source = relink(cell.source, index, "book/assignments")
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    needs = chapter_needs(path, code)
    page = f"{ASSIGNMENT_PAGES}/{path.stem}"
    title = page_title(path.parents[1] / "assignments" / f"{path.stem}.md")
    nb.cells.insert(0, _first_cell(config, needs, page, title))
    nb.nbformat, nb.nbformat_minor = 4, 5
    for k, cell in enumerate(nb.cells):
        cell.setdefault("id", f"cell-{k}")
    nb.cells[0]["id"] = "install-attnlib"
    nbformat.validate(nb)
    return nb, needs


def write_bundles(
    root: Path,
    html: Path,
    config: Settings | None = None,
    assignments: Path | None = None,
) -> list[Path]:
    """One zip per chapter and per assignment, ``html/OUT/<name>.zip``, that runs
    where it is unzipped: in a folder ``<name>/``, the chapter's reader and student
    notebooks (written before into ``html/OUT``; an assignment's student notebook
    with the install cell first, :func:`assignment_notebook`), attnlib's wheel of
    ``html/_downloads`` (their first cell installs it), the files the chapter reads
    (``models/...``: its code opens them relative to the notebook's folder) and a
    README. ``assignments`` is the folder of the assignments' notebooks (default
    ``root/book/coursework/generated/notebooks``; absent: none)."""
    config = config or settings(root, html)
    wheel_name = WHEEL.format(version=__version__)
    wheel = html / DOWNLOADS / wheel_name
    if not wheel.is_file():
        raise FileNotFoundError(f"{wheel} is missing: write_downloads writes it first")
    shipped = {wheel_name: wheel.read_bytes()}
    out = html / OUT
    written = []
    for source in chapters(root):
        page = f"{source.parent.name}/{source.stem}"
        names = {
            f"{source.stem}.ipynb": "the chapter with the outputs of the book's build",
            f"{source.stem}-student.ipynb": "the chapter without the solutions",
        }
        files = dict(shipped)
        for name in names:
            if not (out / name).is_file():
                raise FileNotFoundError(f"{out / name} is missing: write_notebooks")
            files[name] = (out / name).read_bytes()
        needs = chapter_needs(source)
        install = nbformat.reads(files[f"{source.stem}.ipynb"].decode(), 4).cells[0]
        files.update(_data_files(source, install.source))
        title = page_title(source)
        files["README.md"] = _readme(
            title, names, needs, page_reference(config, page, title)
        )
        written.append(_zip(out / f"{source.stem}.zip", source.stem, files))
    folder = assignments if assignments is not None else root / ASSIGNMENTS
    for path in sorted(folder.glob("*.ipynb")) if folder.is_dir() else []:
        nb, needs = assignment_notebook(path, config)
        page = f"{ASSIGNMENT_PAGES}/{path.stem}"
        files = {**shipped, path.name: nbformat.writes(nb).encode()}
        files.update(_data_files(path, nb.cells[0].source))
        title = page_title(path.parents[1] / "assignments" / f"{path.stem}.md")
        names = {path.name: "the assignment, with a grader.check cell per question"}
        files["README.md"] = _readme(
            title, names, needs, page_reference(config, page, title)
        )
        written.append(_zip(out / f"{path.stem}.zip", path.stem, files))
    return written


def build_finished(app: Any, exception: Exception | None) -> None:
    """``build-finished`` (HTML): attnlib's wheel and sdist in ``_downloads`` and
    the notebooks beside the pages."""
    if exception is not None or app.builder.format != "html":
        return
    root = Path(app.srcdir)
    html = Path(app.builder.outdir)
    # attnlib of this checkout: the student edition builds from a mirror of the
    # book's pages that holds no library
    write_downloads(ROOT, html)
    config = settings(root, html)
    if not config.book_url:
        logger.info(
            "bookext: html.baseurl is not set in _config.yml: the notebooks install "
            "attnlib only from a wheel beside them%s",
            " or from the repository" if config.repository else "",
        )
    for path in write_notebooks(root, root / "_build", html, config):
        # with launch buttons the theme offers _sources/<page>.ipynb for download,
        # a copy without the outputs of a cached build: offer the reader's instead
        theirs = html / "_sources" / "book" / path.name
        if theirs.exists():
            theirs.write_bytes(path.read_bytes())
    write_bundles(root, html, config)


def lite_address(root: Path = ROOT) -> str:
    """``launch_buttons.jupyterlite_url``: the JupyterLite site of ``make lite``
    (``lite/lab/index.html`` in the built book), "" when it is not published."""
    return ((_config(root).get("launch_buttons") or {}).get("jupyterlite_url")) or ""


def add_links(
    app: Any, pagename: str, templatename: str, context: dict, doctree: Any
) -> None:
    """``html-page-context``: a chapter page links at the top its zip
    (:func:`write_bundles`), which runs where it is unzipped, and its two notebooks;
    an assignment's page links its zip."""
    if app.builder.format != "html" or not pagename.startswith("book/"):
        return
    if pagename.startswith(ASSIGNMENT_PAGES + "/") and "body" in context:
        _assignment_link(app, pagename, context)
        return
    source = Path(app.srcdir) / f"{pagename}.md"
    if source not in chapters(Path(app.srcdir)) or "body" not in context:
        return
    name = source.stem
    bundle = context["pathto"](f"{OUT}/{name}.zip", 1)
    reader = context["pathto"](f"{OUT}/{name}.ipynb", 1)
    student = context["pathto"](f"{OUT}/{name}-student.ipynb", 1)
    lite = ""
    lite_url = lite_address(Path(app.srcdir))
    if lite_url:
        if "://" not in lite_url:
            lite_url = context["pathto"](lite_url, 1)
        lite = f' · <a href="{lite_url}?path={name}.ipynb">run it in your browser</a>'
    data = " and the files it reads" if chapter_needs(source).data else ""
    links = (
        '<p class="attnlib-notebooks">Run this chapter: '
        f'<a href="{bundle}" download>{name}.zip</a> (its two notebooks'
        f"{', ' if data else ' and '}attnlib's wheel{data}: unzip it, open a "
        "notebook from that folder and run "
        "its first cell, which installs attnlib) · "
        f'<a href="{reader}" download>notebook with outputs</a> · '
        f'<a href="{student}" download>student notebook (no solutions)</a>{lite}.</p>'
    )
    _insert_after_title(context, links)


def _insert_after_title(context: dict, html_text: str) -> None:
    body = context["body"]
    at = body.find("</h1>")
    at = at + len("</h1>") if at >= 0 else 0
    context["body"] = body[:at] + html_text + body[at:]


def _assignment_link(app: Any, pagename: str, context: dict) -> None:
    """An assignment's page links its zip (:func:`write_bundles`)."""
    slug = pagename.rsplit("/", 1)[-1]
    if not (Path(app.srcdir) / ASSIGNMENTS / f"{slug}.ipynb").is_file():
        return
    bundle = context["pathto"](f"{OUT}/{slug}.zip", 1)
    otter = pinned(OTHERS["otter"]).replace("==", " ")
    _insert_after_title(
        context,
        '<p class="attnlib-notebooks">Run this assignment: '
        f'<a href="{bundle}" download>{slug}.zip</a> (the notebook and attnlib\'s '
        "wheel: unzip it, open the notebook from that folder and run its first cell, "
        f"which installs attnlib and {otter}).</p>",
    )


def main(argv: list[str]) -> int:
    build = Path(argv[0]) if argv else ROOT / "_build"
    written = write_downloads(ROOT, build / "html")
    written += write_notebooks(ROOT, build, build / "html")
    written += write_bundles(ROOT, build / "html")
    print(json.dumps([str(p) for p in written], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
