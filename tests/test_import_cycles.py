"""No import cycle among the modules of attnlib/, bookext/, tools/ and the grader
(gradebox/src/gradebox/), and the grader imports nothing of the others.

Every ``import`` statement is read from the sources (also those inside functions,
which a cycle hides from a plain ``import``: they only fail when the function runs)
and each module points to the modules it imports; a cycle is a strongly connected
component of more than one module (Tarjan's algorithm). Importing ``a.b.c`` points
to ``a.b.c`` only (Python runs the parents' ``__init__`` first, but a package that
imports its own submodules is not a cycle). Imports under ``if TYPE_CHECKING:`` are
left out: they never run (annotations only), so they close no cycle at run time.
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# package folders, relative to the root; a module is named from the folder above
# its package's (gradebox/src for the grader)
PACKAGES = ("attnlib", "bookext", "tools", "gradebox/src/gradebox")
BOOK = ("attnlib", "bookext", "tools")


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _type_checking_only(node: ast.AST) -> bool:
    if not isinstance(node, ast.If):
        return False
    test = node.test
    name = test.attr if isinstance(test, ast.Attribute) else getattr(test, "id", None)
    return name == "TYPE_CHECKING"


def imports_of(path: Path, name: str, known: set[str]) -> set[str]:
    """The modules of ``known`` that the module ``name`` (file ``path``) imports."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def add(target: str) -> None:
        # the longest known prefix: "attnlib.viz.describe" (a function) -> attnlib.viz
        while target and target not in known:
            target = target.rpartition(".")[0]
        if target:
            found.add(target)

    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in [n for n in ast.walk(tree) if _type_checking_only(n)]:
        node.body = []  # what runs only for a type checker
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            for alias in node.names:
                add(f"{origin}.{alias.name}" if origin else alias.name)
    found.discard(name)  # "from . import x" of a name defined in the package
    return found


def import_graph(root: Path = ROOT, packages=PACKAGES) -> dict[str, set[str]]:
    files = {
        module_name(p, (root / pkg).parent): p
        for pkg in packages
        for p in sorted((root / pkg).rglob("*.py"))
        if ".ipynb_checkpoints" not in p.parts
    }
    known = set(files)
    return {name: imports_of(path, name, known) for name, path in files.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles: strongly connected components of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle():
    graph = import_graph()
    assert "bookext.notebooks" in graph and "tools.check_html" in graph
    assert "bookext.plainmd" in graph["bookext.notebooks"]
    assert "gradebox.grade" in graph and "gradebox.grades" in graph["gradebox.grade"]
    assert "gradebox.grade" in graph["tools.coursework.grade"]
    found = cycles(graph)
    assert found == [], "import cycles: " + "; ".join(" <-> ".join(c) for c in found)


def test_a_cycle_through_an_import_inside_a_function_is_found(tmp_path):
    for pkg, other in (("one", "two"), ("two", "one")):
        (tmp_path / pkg).mkdir()
        (tmp_path / pkg / "__init__.py").write_text("")
        (tmp_path / pkg / "mod.py").write_text(
            f"def f():\n    from {other}.mod import g\n    return g\n\n\ndef g():\n"
            "    return 1\n"
        )
    (tmp_path / "one" / "sub.py").write_text("from . import mod\nfrom .mod import f\n")
    graph = import_graph(tmp_path, ("one", "two"))
    assert graph["one.sub"] == {"one.mod"}
    assert cycles(graph) == [["one.mod", "two.mod"]]
    # an import for a type checker only runs no code: no cycle
    (tmp_path / "two" / "mod.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from one.mod import f\n"
    )
    assert cycles(import_graph(tmp_path, ("one", "two"))) == []
    # a package importing its own submodules is not a cycle
    assert cycles({"p": {"p.a"}, "p.a": set()}) == []


def book_imports_of_the_grader(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The modules of the book (attnlib, bookext, tools) each grader module imports."""
    book = tuple(f"{p}." for p in BOOK)
    out = {}
    for name, targets in graph.items():
        if name == "gradebox" or name.startswith("gradebox."):
            found = {t for t in targets if t in BOOK or t.startswith(book)}
            if found:
                out[name] = found
    return out


def test_the_grader_imports_nothing_of_the_book():
    """gradebox is a package of its own (pip install ./gradebox, with no book): the
    book passes what the grader needs of it as settings (the library under test,
    the rule for its install cell), and the grader imports none of its modules."""
    graph = import_graph()
    assert len([n for n in graph if n.startswith("gradebox.")]) >= 15
    assert book_imports_of_the_grader(graph) == {}


def test_an_import_of_the_book_in_the_grader_is_found(tmp_path):
    """The check above sees an import of the book in the grader, also one inside
    a function (as the grader's scan once imported the book's install-cell rule)."""
    src = ROOT / "gradebox" / "src" / "gradebox"
    pkg = tmp_path / "gradebox" / "src" / "gradebox"
    pkg.mkdir(parents=True)
    for path in src.glob("*.py"):
        (pkg / path.name).write_text(path.read_text(encoding="utf-8"))
    for name in BOOK:
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text("")
    (tmp_path / "bookext" / "notebooks.py").write_text(
        "def is_install_cell(s):\n    return False\n"
    )
    graph = import_graph(tmp_path)
    assert book_imports_of_the_grader(graph) == {}
    scan = pkg / "scan.py"
    scan.write_text(
        scan.read_text(encoding="utf-8") + "\n\ndef _book_rule():\n"
        "    from bookext.notebooks import is_install_cell\n"
        "    return is_install_cell\n"
    )
    assert book_imports_of_the_grader(import_graph(tmp_path)) == {
        "gradebox.scan": {"bookext.notebooks"}
    }
