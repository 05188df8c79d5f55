"""The chapters' notebooks read well in any Jupyter front end, and their first cell
installs attnlib only from what the book publishes itself.

* Every reader and student notebook (made from the sources here; after ``make book``
  also the built ones) is rendered with a plain CommonMark renderer (markdown-it-py,
  no MyST plugin): no role, no directive fence, no raw front matter and no macro of
  the book (``\\R``, ``\\S``) is left; references are links to the book's pages.
* The reader's solutions fold (``<details>``, hidden code, tag ``solution``); the
  student notebook has none.
* The install cell: its version rule, its order of sources, and that it never
  installs the name ``attnlib`` from a package index.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from markdown_it import MarkdownIt

from bookext import plainmd
from bookext.notebooks import (
    ROOT,
    chapter_needs,
    chapters,
    install_source,
    reader_notebook,
    settings,
    student_notebook,
)

from .notebook_links import link_problems

CHAPTERS = chapters(ROOT)
BUILT = ROOT / "_build" / "html" / "notebooks"
CONFIG = settings(ROOT)
RENDER = MarkdownIt("commonmark")
ROLE_LEFT = re.compile(r"\{[\w:-]+\}(`|<code>)")
FENCE_LEFT = re.compile(r"language-\{|^\s*(`{3,}|:{3,})\{", re.M)
MATH = re.compile(r"\$\$(.+?)\$\$|\$([^$\n]+?)\$", re.S)
assert CONFIG.index.macros, "the book's TeX macros (_config.yml)"
MACRO_LEFT = re.compile(
    r"(?<!\\)(" + "|".join(map(re.escape, CONFIG.index.macros)) + r")(?![A-Za-z])"
)


def problems(nb) -> list[str]:
    """What a plain CommonMark renderer shows raw in a notebook's markdown."""
    found = []
    for k, cell in enumerate(nb.cells):
        if cell.cell_type != "markdown":
            continue
        rendered = RENDER.render(cell.source)
        where = f"cell {k}: {cell.source[:60]!r}"
        if ROLE_LEFT.search(rendered):
            found.append(f"role left in {where}")
        if FENCE_LEFT.search(rendered) or FENCE_LEFT.search(cell.source):
            found.append(f"directive left in {where}")
        if cell.source.lstrip().startswith("---") or rendered.startswith("<hr />"):
            found.append(f"front matter left in {where}")
        if re.search(r"^\([\w:.-]+\)=\s*$", cell.source, re.M):
            found.append(f"target left in {where}")
        for m in MATH.finditer(cell.source):
            if MACRO_LEFT.search(m.group(0)):
                found.append(f"undefined macro in {where}: {m.group(0)[:60]!r}")
    return found


def notebooks():
    for source in CHAPTERS:
        yield f"{source.stem}-reader", reader_notebook(source, None, CONFIG)
        yield f"{source.stem}-student", student_notebook(source, CONFIG)


NOTEBOOKS = dict(notebooks())


def test_the_checker_sees_myst():
    """The check itself: raw MyST is found (else every notebook would pass)."""
    nb = nbformat.v4.new_notebook()
    for bad in (
        "See {cite}`GLPR2023`.",
        "```{prf:theorem} T\n:label: x\nbody\n```",
        ":::{prf:proof}\nbody\n:::",
        "---\nmath:\n  \\R: x\n---\n# Title",
        "(some-label)=\n# Title",
        "A point of $\\S^{d-1}$.",
    ):
        nb.cells = [nbformat.v4.new_markdown_cell(bad)]
        assert problems(nb), bad
    nb.cells = [nbformat.v4.new_markdown_cell("$\\Rightarrow \\mathbb{S}^2$ `{x}`")]
    assert problems(nb) == []


@pytest.mark.parametrize("name", sorted(NOTEBOOKS))
def test_notebook_markdown_is_plain_commonmark(name):
    nb = NOTEBOOKS[name]
    assert problems(nb) == []
    assert CONFIG.index.unresolved == [], CONFIG.index.unresolved


def test_references_without_the_books_address_stay_inside_the_notebook():
    """With html.baseurl unset (this _config.yml) a notebook may be read anywhere:
    a target of its own page is an anchor link in it, one of another page is named
    in plain text with that page's title, a citation links to the notebook's own
    list of references; no link leads to a path of the site (../book/...)."""
    assert not CONFIG.book_url, "the test of the rule without an address"
    nb = NOTEBOOKS["modelling-reader"]
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert "](#equation-mod-sa)" in text  # {eq} of the same page
    assert "](#mod-thm-exist)" in text  # {prf:ref} of the same page
    assert '<a id="mod-thm-exist"></a>**Theorem' in text
    assert "../book/" not in text and ".html" not in text
    assert re.search(r"\[[A-Z][^\]]+, \d{4}\]\(#ref-[\w-]+\)", text)
    assert nb.cells[-1].source.startswith("## References")
    assert nb.cells[-1].metadata["tags"] == ["references"]
    assert "{\\mathbb{R}}" in text and "\\R" not in text.replace("\\Rightarrow", "")
    # another page: its title, in plain text
    index = plainmd.book_index(ROOT, ["book/modelling", "book/clustering"])
    out = plainmd.convert("see {eq}`mod-sa`", index, "book/clustering")
    title = index.titles["book/modelling"]
    assert out == f"see the equation (in “{title}”)", out
    out = plainmd.convert("{doc}`modelling`", index, "book/clustering")
    assert out == f"“{title}”"
    # with the book's address, links are absolute, citations to its references
    index = plainmd.book_index(ROOT, ["book/modelling"], "https://example.org/b/")
    out = plainmd.convert("see {eq}`mod-sa`", index, "book/modelling")
    assert "(https://example.org/b/book/modelling.html#equation-mod-sa)" in out
    out = plainmd.convert("{cite}`GLPR2023`", index, "book/modelling")
    assert out.endswith("](https://example.org/b/book/references.html))"), out
    assert plainmd.references_markdown(index) is None


def test_the_notebooks_list_the_works_they_cite():
    index = plainmd.book_index(ROOT, ["book/modelling"])
    index.start()
    out = plainmd.convert(
        "{cite}`GLPR2023` and {cite:t}`GLPR2023`; {cite}`nobody`", index, "book/x"
    )
    assert index.cited == ["GLPR2023"]  # once, and an unknown key is not listed
    assert out.count("](#ref-GLPR2023)") == 2 and "nobody" in out
    refs = plainmd.references_markdown(index)
    assert refs.startswith("## References\n\n")
    assert '<a id="ref-GLPR2023"></a>**Geshkovski et al., ' in refs
    assert "A mathematical perspective on Transformers" in refs
    index.start()
    assert plainmd.references_markdown(index) is None


def test_the_link_checker_sees_links_that_lead_nowhere():
    nb = nbformat.v4.new_notebook()
    for bad in (
        "[x](../book/a.html#b)",
        "[x](#missing)",
        "[x](figures/a.png)",
        '<img src="../_images/a.png">',
    ):
        nb.cells = [nbformat.v4.new_markdown_cell(bad)]
        assert link_problems(nb), bad
    nb.cells = [
        nbformat.v4.new_markdown_cell('<a id="a"></a>[x](#a) [y](https://e.org/z)')
    ]
    assert link_problems(nb) == []


@pytest.mark.parametrize("name", sorted(NOTEBOOKS))
def test_notebook_links_lead_somewhere_from_a_downloaded_copy(name):
    assert link_problems(NOTEBOOKS[name]) == []


@pytest.mark.parametrize("source", CHAPTERS, ids=lambda p: p.stem)
def test_solutions_fold_in_the_reader_and_are_absent_for_students(source):
    text = source.read_text(encoding="utf-8")
    n = text.count("{solution-start}")
    reader = NOTEBOOKS[f"{source.stem}-reader"]
    student = NOTEBOOKS[f"{source.stem}-student"]
    folded = [c for c in reader.cells if "solution" in c.metadata.get("tags", [])]
    if n == 0:
        assert not folded
        return
    md = [c for c in folded if c.cell_type == "markdown"]
    code = [c for c in folded if c.cell_type == "code"]
    assert len(md) >= n and code, (len(md), len(code))
    for cell in md:
        assert cell.source.startswith("<details><summary>Solution to Exercise")
        assert cell.source.endswith("</details>")
    for cell in code:
        assert cell.metadata["jupyter"]["source_hidden"] is True
    assert not any("solution" in c.metadata.get("tags", []) for c in student.cells)
    assert "<details>" not in "\n".join(c.source for c in student.cells)
    # every code cell of a solution is in the reader's, none in the student's
    solution_code = {c.source for c in code}
    assert not solution_code & {c.source for c in student.cells}


@pytest.mark.skipif(not BUILT.exists(), reason="make book writes the notebooks")
@pytest.mark.parametrize("source", CHAPTERS, ids=lambda p: p.stem)
def test_built_notebooks_are_plain_and_numbered(source):
    for name in (f"{source.stem}.ipynb", f"{source.stem}-student.ipynb"):
        nb = nbformat.read(BUILT / name, as_version=4)
        assert problems(nb) == [], name
        assert link_problems(nb) == [], name
        # the wheel the first cell names is the one the site ships
        wheel = re.search(r'^WHEEL = "(.+)"$', nb.cells[0].source, re.M).group(1)
        assert (BUILT.parent / "_downloads" / wheel).is_file(), wheel
        text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
        if "{eq}" in source.read_text(encoding="utf-8"):
            # a reference to an equation of this page is a link to its anchor; one to
            # another page's equation, without html.baseurl, is its number and the
            # page's title in plain text (a link would lead nowhere from a download)
            numbered = r"\[\(\d+\.\d+\)\]\(|\(\d+\.\d+\) \(in “"
            assert re.search(numbered, text), f"{name}: no numbered eq"
            assert "[the equation](" not in text, name


# ---------------------------------------------------------------------- install cell
def _functions(src: str) -> dict:
    """The install cell's helpers, without running its last part."""
    namespace: dict = {}
    exec(src.split("\nbefore = _installed()")[0], namespace)
    return namespace


def test_install_cell_accepts_compatible_versions_only():
    ns = _functions(install_source("https://example.org/book/"))
    ns["ATTNLIB"] = "0.2.0"
    ok = ns["_compatible"]
    assert ok("0.2.0") and ok("0.2.7")
    assert not ok("0.1.9") and not ok("0.3.0") and not ok("1.2.0")
    assert not ok("0.2.0rc1") and not ok("0.2.0.dev3") and not ok("unknown")


def test_install_cell_sources_in_order(tmp_path, monkeypatch):
    from attnlib._version import __version__

    wheel = f"attnlib-{__version__}-py3-none-any.whl"
    src = install_source("https://example.org/book", "https://example.org/repo.git")
    ns = _functions(src)
    monkeypatch.chdir(tmp_path)
    found = [where for _, where in ns["_sources"]()]
    assert found == [
        f"https://example.org/book/_downloads/{wheel}",
        f"git+https://example.org/repo.git@v{__version__}",
    ]
    (tmp_path / wheel).write_bytes(b"")  # a copy beside the notebook comes first
    assert [w for _, w in ns["_sources"]()][0] == tmp_path / wheel
    none = _functions(install_source(None, None))
    (tmp_path / wheel).unlink()
    assert list(none["_sources"]()) == []


def test_install_cell_never_installs_the_name_from_an_index():
    from bookext.notebooks import ChapterNeeds

    otter = ChapterNeeds(also=(("otter", "otter-grader==7.0.0"),))
    for src in (
        install_source("https://e.org/b", "https://e.org/r"),
        install_source(),
        install_source(None, None, otter, "a1.zip", "the page"),
    ):
        assert src.count('"pip", "install"') == 1  # in _pip, called twice:
        calls = re.findall(r"_pip\((.+)\)\n", src)
        # attnlib by a direct reference to a wheel, the others by ALSO's pins
        assert calls == ['[f"attnlib[{EXTRAS}] @ {url}"]', "wanted"], calls
        also = _functions(src)["ALSO"]
        assert all(re.fullmatch(r"[\w-]+==[\w.]+", r) for r in also.values())
        assert not any(r.lower().startswith("attnlib") for r in also.values())
        assert 'EXTRAS = "all"' in src
        assert 'piplite.install("attnlib' not in src
        assert "attnlib==" not in src
        assert "pip install '{WHEEL}[{EXTRAS}]'" in src  # the error says what to do
    assert 'sys.platform == "emscripten"' in src and "piplite" in src
    assert _functions(src)["ALSO"] == {"otter": "otter-grader==7.0.0"}


RUN_CELL = """
import sys
sys.modules["attnlib"] = None  # attnlib cannot be imported here
from IPython.core.interactiveshell import InteractiveShell
result = InteractiveShell.instance().run_cell(open(sys.argv[1]).read())
error = result.error_in_exec
print("ERROR", type(error).__name__, error)
"""


def _run_cell(folder: Path, cell: str, runner: str):
    """Run the install cell ``cell`` with the script ``runner`` (which runs it in
    IPython, as a kernel does) in a fresh Python process in ``folder``."""
    import subprocess
    import sys

    (folder / "cell.py").write_text(cell)
    (folder / "run.py").write_text(runner)
    return subprocess.run(
        [sys.executable, "run.py", "cell.py"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_install_cell_error_says_what_to_do(tmp_path):
    """With nowhere to install from, the cell (run by IPython, as a kernel runs it)
    fails with instructions."""
    page = "the book's page “Clustering” (book/clustering.html in the book's site)"
    cell = install_source(None, None, None, "clustering.zip", page)
    r = _run_cell(tmp_path, cell, RUN_CELL)
    out = r.stdout.split("ERROR", 1)[-1]
    assert out.startswith(" RuntimeError attnlib"), r.stdout[-2000:] + r.stderr
    assert "could not be installed" in out
    # the file to download, and from which page
    assert f"Download clustering.zip from {page}" in out, out
    assert "pip install 'attnlib-" in out


def test_notebooks_carry_the_books_address_from_the_config(tmp_path):
    from bookext.notebooks import page_reference

    page = page_reference(CONFIG, "book/modelling")
    src = install_source(
        CONFIG.book_url, CONFIG.repository, None, "modelling.zip", page
    )
    assert f"BOOK_URL = {CONFIG.book_url or ''!r}" in src
    assert "BUNDLE = 'modelling.zip'" in src
    if not CONFIG.book_url:
        assert (
            page.startswith("the book's page “Modelling")
            and "book/modelling.html" in page
        )
    nb = NOTEBOOKS["modelling-student"]
    assert nb.cells[0].source == src
    assert nb.cells[0].metadata["tags"] == ["install-attnlib"]
    assert Path(ROOT / "_config.yml").read_text().count("baseurl:") == 1


PYODIDE = """
import sys, types
sys.modules["attnlib"] = None  # not installed in the browser yet
calls = []
async def install(what):
    calls.append(what)
sys.modules["piplite"] = types.SimpleNamespace(install=install)
import subprocess
def no_pip(*a, **k):
    raise AssertionError("pip in Pyodide")
subprocess.run = no_pip
sys.platform = "emscripten"
from IPython.core.interactiveshell import InteractiveShell
result = InteractiveShell.instance().run_cell(open(sys.argv[1]).read())
print("CALLS", calls, "ERROR", repr(result.error_in_exec))
"""


def test_install_cell_uses_piplite_in_jupyterlite(tmp_path):
    """In Pyodide (``sys.platform == "emscripten"``) the cell installs the wheel
    beside the notebook with piplite, then the dependencies; it never runs pip."""
    from attnlib._version import __version__

    wheel = f"attnlib-{__version__}-py3-none-any.whl"
    (tmp_path / wheel).write_bytes(b"")
    r = _run_cell(tmp_path, install_source("https://example.org/b", None), PYODIDE)
    out = r.stdout.split("CALLS", 1)[-1]
    assert f"'emfs:{tmp_path / wheel}'" in out, r.stdout[-2000:] + r.stderr
    assert "'numpy', 'scipy'" in out and "ERROR None" in out, out
    assert "example.org" not in out  # the copy beside the notebook comes first


def test_lite_contents_are_the_notebooks_and_the_pure_python_wheel(tmp_path):
    from attnlib._version import __version__
    from bookext.lite import contents

    html = tmp_path / "html"
    (html / "notebooks").mkdir(parents=True)
    (html / "_downloads").mkdir()
    wheel = f"attnlib-{__version__}-py3-none-any.whl"
    (html / "_downloads" / wheel).write_bytes(b"wheel")
    for name in ("a.ipynb", "a-student.ipynb"):
        (html / "notebooks" / name).write_text("{}")
    files = contents(html, tmp_path / "lite")
    names = sorted(p.name for p in files)
    assert names == sorted(["a.ipynb", "a-student.ipynb", wheel])
    (html / "_downloads" / wheel).unlink()
    with pytest.raises(FileNotFoundError, match="make book"):
        contents(html, tmp_path / "lite")


def test_a_chapter_on_trained_models_asks_for_jax_and_its_weights():
    """Chapter 7 imports attnlib.nets and reads models/*.npz: its install cell asks
    for the nets extra (JAX, optax) and lists every file of book/models with its
    SHA-256; the other chapters need attnlib[all] and no file."""
    import hashlib

    for source in CHAPTERS:
        needs = chapter_needs(source)
        if source.stem != "trained":
            assert needs.extras == () and needs.data == (), source.name
            continue
        assert needs.extras == ("nets",) and needs.modules == ("jax", "optax")
        files = sorted(p for p in (ROOT / "book" / "models").iterdir() if p.is_file())
        assert [rel for rel, _ in needs.data] == [f"models/{p.name}" for p in files]
        for (_, digest), p in zip(needs.data, files):
            assert digest == hashlib.sha256(p.read_bytes()).hexdigest()
        src = install_source("https://example.org/b", None, needs)
        assert 'EXTRAS = "all,nets"' in src and "NEEDS = ['jax', 'optax']" in src
        ns = _functions(src)
        assert ns["DATA"] == [tuple(d) for d in needs.data]
    assert any(source.stem == "trained" for source in CHAPTERS)


def test_install_cell_says_jax_cannot_run_in_jupyterlite(tmp_path):
    """In Pyodide a chapter that needs JAX fails at once, saying why."""
    from attnlib._version import __version__

    from bookext.notebooks import ChapterNeeds

    (tmp_path / f"attnlib-{__version__}-py3-none-any.whl").write_bytes(b"")
    needs = ChapterNeeds(("nets",), ("a_module_that_is_not_there",), ())
    r = _run_cell(tmp_path, install_source(None, None, needs), PYODIDE)
    out = r.stdout.split("CALLS", 1)[-1]
    assert out.startswith(" [] ERROR RuntimeError"), r.stdout[-2000:] + r.stderr
    assert "cannot run in the browser (Pyodide)" in out, out


def test_a_page_title_is_its_first_heading_outside_code_fences(tmp_path):
    """Each chapter opens with a fenced YAML cell of macros (for JupyterLab) whose
    comments start with "# ": they are not the page's title."""
    from bookext.plainmd import page_title

    page = tmp_path / "page.md"
    page.write_text(
        "---\nkernelspec: {}\n---\n\n```yaml\n# a comment\nmath: {}\n```\n\n"
        "````md\n```\n# inside a longer fence\n```\n````\n\n# The title\n\n# Later\n"
    )
    assert page_title(page) == "The title"
    page.write_text("no heading\n```\n# in code\n```\n")
    assert page_title(page) == "page"
    for chapter in ("modelling", "trained"):
        assert "macros" not in page_title(ROOT / "book" / f"{chapter}.md")


def test_aligned_math_keeps_its_alignment():
    """A {math} body with & or \\\\ and no environment is set by Sphinx in a split
    environment; in a notebook it is wrapped in aligned (bare, MathJax and KaTeX stop
    at the first &), and its number stays outside."""
    index = plainmd.Index()
    out = plainmd.convert(
        "```{math}\n:label: two\na &= b \\\\\nc &= d\n```", index, "book/modelling"
    )
    assert "\\begin{aligned}\na &= b \\\\\nc &= d\n\\end{aligned}" in out
    one = plainmd.convert("```{math}\nx = y\n```", index, "book/modelling")
    assert "aligned" not in one
    env = plainmd.convert(
        "```{math}\n\\begin{cases} a & b \\end{cases}\n```", index, "book/modelling"
    )
    assert "aligned" not in env
