"""The Makefile's rules that the pages and the cache depend on.

A text check of the recipes whose regressions no other test would notice: the book's
kernels must not inherit ``MPLBACKEND=Agg`` (figures would become ``<Figure ...>``
text), and the execution cache must be dropped when the environment changes, by one
rule (:mod:`tools.execution`) shared with the student edition.
"""

import re
from pathlib import Path

from tools import execution
from tools.coursework import student

from .helpers import MYST_HEADER

ROOT = Path(__file__).resolve().parents[1]
MAKEFILE = (ROOT / "Makefile").read_text()


def _recipe(target: str) -> tuple[str, str]:
    """Prerequisites and recipe of the first rule of ``target``."""
    m = re.search(rf"^{re.escape(target)}:([^\n]*)\n((?:\t[^\n]*\n)*)", MAKEFILE, re.M)
    assert m, f"no rule for {target}"
    return m.group(1), m.group(2)


def test_the_book_is_built_without_mplbackend_and_tests_run_with_agg():
    _, book = _recipe("book")
    assert "jupyter-book build" in book and "env -u MPLBACKEND" in book
    assert "MPLBACKEND=Agg" not in book
    for target in ("test", "test-fast"):
        _, recipe = _recipe(target)
        assert "MPLBACKEND=Agg" in recipe, target


def test_test_fast_leaves_out_the_slow_lanes():
    _, recipe = _recipe("test-fast")
    assert '-m "not slow"' in recipe
    _, full = _recipe("test")
    assert "not slow" not in full  # make test runs everything CI needs


def test_the_book_and_the_student_edition_share_one_execution_rule():
    prereqs, _ = _recipe("book")
    assert "execution-cache" in prereqs
    _, recipe = _recipe("execution-cache")
    assert "-m tools.execution _build" in recipe
    assert "execution.refresh(" in Path(student.__file__).read_text()
    names = {p.relative_to(ROOT).as_posix() for p in execution.inputs()}
    for name in ("requirements.txt", "pyproject.toml", "Makefile"):
        assert name in names
    assert any(n.startswith("attnlib/") for n in names)
    # the weights a chapter loads: new weights must execute the chapter again
    assert any(n.startswith("book/models/") and n.endswith(".npz") for n in names)
    # bookext sets the kernels' environment (IPYTHONDIR, ATTNLIB_STATIC) and their
    # start-up file, which changes how every figure is displayed
    assert "bookext/static.py" in names
    assert "bookext/ipython/profile_default/startup/00-describe-figures.py" in names


def test_the_execution_cache_is_dropped_when_the_environment_changes(tmp_path):
    root, build = tmp_path / "repo", tmp_path / "repo" / "_build"
    (root / "attnlib").mkdir(parents=True)
    (root / "attnlib" / "core.py").write_text("X = 1\n")
    (root / "requirements.txt").write_text("numpy==2.4.6\n")
    startup = root / "bookext" / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True)
    (root / "bookext" / "static.py").write_text("STATIC = '1'\n")
    (startup / "00-describe-figures.py").write_text("A = 1\n")

    def fill():
        for sub in execution.CACHE_DIRS:
            (build / sub).mkdir(parents=True, exist_ok=True)
            (build / sub / "entry").write_text("cached")

    fill()
    assert execution.refresh(build, root)  # no digest stored yet: dropped
    assert not any((build / sub).exists() for sub in execution.CACHE_DIRS)
    fill()
    assert not execution.refresh(build, root)  # nothing changed: kept
    assert all((build / sub / "entry").exists() for sub in execution.CACHE_DIRS)
    for path, text in [
        (root / "attnlib" / "core.py", "X = 2\n"),
        (root / "requirements.txt", "numpy==2.4.7\n"),
        (root / "attnlib" / "new.py", ""),
        (root / "bookext" / "static.py", "STATIC = '0'\n"),
        (startup / "00-describe-figures.py", "A = 2\n"),
    ]:
        path.write_text(text)
        assert execution.refresh(build, root), path.name
        assert not (build / ".jupyter_cache").exists()
        fill()
        assert not execution.refresh(build, root)


# ------------------------------------------------------- every chapter executed once
def test_ci_executes_the_chapters_once_in_the_book_build():
    steps = []
    for line in (ROOT / ".ci" / "run").read_text().splitlines():
        words = line.split()
        if words[:1] == ["make"]:  # make [-jN --output-sync=...] target... [> log &]
            end = next((i for i, w in enumerate(words) if w[0] in "<>&|;"), None)
            steps.append([w for w in words[1:end] if not w.startswith("-")])
    # the environment (it executes nothing), then the book (it executes), then
    # what reads its execution cache: the student edition, the PDF and the tests;
    # a target built beside the book (make -jN) waits for the cache the book fills
    assert steps[0] == ["env"], steps
    assert steps[1][0] == "book", steps
    makefile = (ROOT / "Makefile").read_text()
    for beside in steps[1][1:]:
        rule = re.search(rf"^{beside}:([^\n]*)", makefile, re.M)
        assert rule and "execution-cache" in rule.group(1).split(), beside
    later = {t for targets in [steps[1][1:], *steps[2:]] for t in targets}
    # test-cpus runs the numerical lane under other CPUs' kernels: no chapter
    assert later == {"student", "pdf", "test", "test-cpus"}, steps
    # the PDF is built before the tests (the test of LaTeX's log reads it)
    assert steps.index(["test"]) > next(i for i, s in enumerate(steps) if "pdf" in s)
    assert "reuse_book_outputs(" in Path(student.__file__).read_text()


def _executed_chapter(root: Path) -> tuple[Path, str]:
    """A book with one chapter (a solution holds one of its three code cells), the
    chapter's text and, in the book's execution cache, its executed notebook."""
    import jupytext
    import nbformat
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    (root / "attnlib").mkdir(parents=True)
    (root / "attnlib" / "core.py").write_text("X = 1\n")
    text = (
        MYST_HEADER + "# Chapter\n\n"
        "```{code-cell} ipython3\nx = 1\n```\n\n"
        "```{solution-start} e\n```\n\n```{code-cell} ipython3\nsecret = 2\n```\n\n"
        "```{solution-end}\n```\n\n```{code-cell} ipython3\nprint(x)\n```\n"
    )
    page = root / "book" / "chapter.md"
    page.parent.mkdir()
    page.write_text(text)
    nb = jupytext.read(page)
    for k, cell in enumerate(c for c in nb.cells if c.cell_type == "code"):
        cell.outputs = [nbformat.v4.new_output("stream", text=f"output {k}\n")]
    build = root / "_build"
    execution.refresh(build, root)  # stores this checkout's digest
    get_cache(build / execution.JUPYTER_CACHE).cache_notebook_bundle(
        CacheBundleIn(nb, str(page.resolve())), check_validity=False
    )
    return page, text


def test_the_chapter_tests_read_a_fresh_execution_only(tmp_path):
    root = tmp_path / "repo"
    page, text = _executed_chapter(root)
    build = root / "_build"
    nb = execution.cached_notebook(page, build, root)
    assert nb is not None
    outputs = [c.outputs[0].text for c in nb.cells if c.cell_type == "code"]
    assert outputs == ["output 0\n", "output 1\n", "output 2\n"]
    page.write_text(text.replace("print(x)", "print(x + 1)"))  # the code changed
    assert execution.cached_notebook(page, build, root) is None
    page.write_text(text)
    assert execution.cached_notebook(page, build, root) is not None
    (root / "attnlib" / "core.py").write_text("X = 2\n")  # the library changed
    assert execution.cached_notebook(page, build, root) is None


def test_the_student_edition_takes_the_books_outputs_of_the_cells_it_keeps(tmp_path):
    import jupytext
    from jupyter_cache import get_cache

    from bookext.notebooks import strip_solutions

    root = tmp_path / "repo"
    page, text = _executed_chapter(root)
    src = tmp_path / "student" / "src"
    (src / "book").mkdir(parents=True)
    mirror = src / "book" / "chapter.md"
    mirror.write_text(strip_solutions(text))
    filled = execution.reuse_book_outputs(src, src / "_build", root, root / "_build")
    assert filled == ["book/chapter.md"]
    # what the student build reads from its cache: the kept cells' book outputs
    cache = get_cache(src / "_build" / execution.JUPYTER_CACHE)
    _, merged = cache.merge_match_into_notebook(jupytext.read(mirror))
    code = [c for c in merged.cells if c.cell_type == "code"]
    assert [c.source for c in code] == ["x = 1", "print(x)"]
    assert [c.outputs[0].text for c in code] == ["output 0\n", "output 2\n"]
    # a stale book cache lends nothing: the student build executes
    (root / "attnlib" / "core.py").write_text("X = 2\n")
    again = execution.reuse_book_outputs(src, src / "_b2", root, root / "_build")
    assert again == []


def test_the_coursework_tests_reuse_only_a_build_of_the_assignments_of_this_checkout(
    tmp_path,
):
    _, recipe = _recipe("$(CW_STAMP)")
    assert "-m tools.execution --assignments-built _build/assignments" in recipe
    root, built = tmp_path / "repo", tmp_path / "built"
    (root / "book" / "assignments" / "rubrics").mkdir(parents=True)
    (root / "tools" / "coursework").mkdir(parents=True)
    (root / "attnlib").mkdir()
    built.mkdir()
    files = {
        root / "book" / "assignments" / "a1.md": "# master\n",
        root / "book" / "assignments" / "rubrics" / "a1.md": "# rubric\n",
        root / "tools" / "coursework" / "build.py": "BUILD = 1\n",
        root / "attnlib" / "core.py": "X = 1\n",
        root / "requirements.txt": "numpy==2.4.6\n",
    }
    for path, text in files.items():
        path.write_text(text)
    assert execution.built_assignments(built, root) is None  # never stamped
    execution.stamp_assignments(built, root)
    assert execution.built_assignments(built, root) == built
    for path, text in files.items():
        path.write_text(text + "# changed\n")
        assert execution.built_assignments(built, root) is None, path.name
        execution.stamp_assignments(built, root)
        assert execution.built_assignments(built, root) == built
    (root / "book" / "assignments" / "a2.md").write_text("# a new master\n")
    assert execution.built_assignments(built, root) is None
