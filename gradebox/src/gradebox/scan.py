"""A static scan of a submission for code that a human should look at.

The sandbox and the tests outside it already stop what such code tries; the scan
makes the attempt visible: a submission with a finding gets the status ``flagged``
and the reason in the gradebook, with the scores it earned, for a lecturer to read
the notebook. It looks for what a mathematical or numerical assignment never
needs:

- the test machinery (``otter`` beyond ``grader.check``, ``doctest``, ``unittest``);
- the interpreter's internals (``sys.modules``, profilers and tracers, frames,
  ``gc``, ``ctypes``, ``builtins``, dunder attributes such as ``__code__``,
  ``exec``/``eval``/``compile``/``__import__``, ``setattr`` on anything);
- replacing an attribute of an imported module (``np.allclose = ...``);
- leaving or signalling the process (``os._exit``, ``os.kill``, ``signal``,
  ``atexit``, ``sys.exit``);
- serialisation that runs code (``pickle``, ``dill``, ``marshal``, ``shelve``);
- other processes and the network (``subprocess``, ``os.system``, ``os.fork``,
  ``socket``, ``multiprocessing.Process``, ...), but not the pools of workers the
  chapters use (``concurrent.futures``' executors, ``multiprocessing.Pool``), with
  which a correct notebook may compute: the sandbox bounds their processes and CPU;
- files outside the notebook's folder (absolute paths, ``..``, ``~``, the home
  directory);
- code brought in at run time: packed or encoded data (``zlib``, ``base64``, ...,
  and any long literal of the base64 or hexadecimal alphabet, or of bytes), the
  name of a Python file (a ``.py`` written to be imported), the import system
  (``sys.path``, ``sys.meta_path``, ``sys.path_hooks``, ``importlib``), and the
  import of a module that is not installed (one written by the notebook);
- a copy of one of the functions of the library under test
  (:attr:`.common.Settings.library`), under any name and however disguised:
  the copy's fingerprint (:func:`_fingerprint`) is taken after dropping
  docstrings, comments and statements that do nothing (``pass``, a bare
  constant or name, ``x = x``) and renaming the arguments and local variables in
  the order they appear.

The grader's own cells (:data:`EXEMPT_CELLS`: the check cell, the expected
values) and the course's own (:attr:`.common.Settings.exempt_patterns` and
``exempt_hooks``, such as the install cell at the top of a book's notebooks) are
not scanned.

Cells that do not parse as Python (after IPython's magics are set aside) are not a
finding: they fail when they run.
"""

from __future__ import annotations

import ast
import hashlib
import re
from functools import lru_cache

from .common import CHECK_CELL, current
from .masters import EXPECTED_MARK

MODULES = {
    "atexit": "exits and signals",
    "builtins": "the interpreter's internals",
    "code": "the interpreter's internals",
    "ctypes": "the interpreter's internals",
    "dill": "serialisation that runs code",
    "doctest": "the test machinery",
    "gc": "the interpreter's internals",
    "importlib": "the interpreter's internals",
    "inspect": "the interpreter's internals",
    "marshal": "serialisation that runs code",
    "cloudpickle": "serialisation that runs code",
    "pickle": "serialisation that runs code",
    "pty": "other processes",
    "resource": "the interpreter's internals",
    "shelve": "serialisation that runs code",
    "signal": "exits and signals",
    "socket": "the network",
    "subprocess": "other processes",
    "sysconfig": "the interpreter's internals",
    "unittest": "the test machinery",
    "urllib": "the network",
    "http": "the network",
    "requests": "the network",
    "_thread": "the interpreter's internals",
    "pytest": "the test machinery",
    "base64": "packed or encoded data",
    "binascii": "packed or encoded data",
    "bz2": "packed or encoded data",
    "codecs": "packed or encoded data",
    "gzip": "packed or encoded data",
    "lzma": "packed or encoded data",
    "tarfile": "packed or encoded data",
    "zipfile": "packed or encoded data",
    "zipimport": "the import system",
    "zlib": "packed or encoded data",
    "pkgutil": "the import system",
    "runpy": "the import system",
}
CALLS = {
    "exec": "the interpreter's internals",
    "eval": "the interpreter's internals",
    "compile": "the interpreter's internals",
    "__import__": "the interpreter's internals",
    "globals": "the interpreter's internals",
    "vars": "the interpreter's internals",
    "setattr": "the interpreter's internals",
    "delattr": "the interpreter's internals",
    "breakpoint": "the interpreter's internals",
}
ATTRIBUTES = {
    "os": {
        "_exit": "exits and signals",
        "kill": "exits and signals",
        "killpg": "exits and signals",
        "abort": "exits and signals",
        "system": "other processes",
        "popen": "other processes",
        "fork": "other processes",
        "forkpty": "other processes",
        "setsid": "other processes",
        "execv": "other processes",
        "execve": "other processes",
        "execvp": "other processes",
        "execl": "other processes",
        "execlp": "other processes",
        "spawnv": "other processes",
        "spawnl": "other processes",
        "posix_spawn": "other processes",
        "environ": "the interpreter's internals",
        "remove": "files",
        "unlink": "files",
        "rmdir": "files",
        "chdir": "files",
        "chmod": "files",
        "symlink": "files",
        "dup2": "the interpreter's internals",
        "write": "the interpreter's internals",
    },
    "sys": {
        "modules": "the interpreter's internals",
        "setprofile": "the interpreter's internals",
        "settrace": "the interpreter's internals",
        "getprofile": "the interpreter's internals",
        "gettrace": "the interpreter's internals",
        "_getframe": "the interpreter's internals",
        "exit": "exits and signals",
        "meta_path": "the import system",
        "path_hooks": "the import system",
        "path": "the import system",
        "path_importer_cache": "the import system",
        "stdout": "the interpreter's internals",
        "stderr": "the interpreter's internals",
        "excepthook": "the interpreter's internals",
        "addaudithook": "the interpreter's internals",
    },
    "threading": {
        "setprofile": "the interpreter's internals",
        "settrace": "the interpreter's internals",
    },
    "shutil": {
        "rmtree": "files",
        "move": "files",
        "copytree": "files",
    },
}
# dotted names, with the module of the first name resolved through the imports
DOTTED = {
    "os.path.expanduser": "files outside the folder",
    "pathlib.Path.home": "files outside the folder",
    "pathlib.Path.expanduser": "files outside the folder",
    "os.getenv": "the interpreter's internals",
}
OTTER_ALLOWED = {"Notebook", "check", "check_all", "export", "to_pdf"}
# the pools of workers that the chapters use (concurrent.futures' executors, all
# of it, and multiprocessing's Pool): what else of multiprocessing a notebook
# uses (Process, connection, shared_memory, managers, ...) is "other processes"
POOL_NAMES = {
    "Pool",
    "cpu_count",
    "get_context",
    "get_start_method",
    "set_start_method",
    "freeze_support",
    "TimeoutError",
    "pool",
    "dummy",
}
POOL_MODULES = {"multiprocessing", "multiprocessing.pool", "multiprocessing.dummy"}
DUNDER = re.compile(r"^__\w+__$")
HARMLESS_DUNDERS = {"__name__", "__doc__", "__init__", "__version__", "__file__"}
# a path outside the notebook's folder: /two/levels, ~/..., or a .. step
OUTSIDE = re.compile(r"^(/[\w.-]+){2,}|^~|(^|/)\.\.(/|$)")
MAGIC = re.compile(r"^\s*(%|!|\?)")


def _python(source: str) -> str:
    """The cell without IPython's magics and shell escapes (blanked, so that line
    numbers stay)."""
    return "\n".join("" if MAGIC.match(line) else line for line in source.splitlines())


def _imported_modules(tree: ast.AST) -> dict[str, str]:
    """Local names bound to modules by the imports of a cell."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                out[(a.asname or a.name).split(".")[0]] = a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                out[a.asname or a.name] = f"{node.module}.{a.name}"
    return out


# a function of the library this long (statements, nested ones counted) copied into
# a notebook is a copy of the library, not a coincidence
COPY_MIN_STATEMENTS = 4


def library_copy(library: str | None = None) -> str:
    """The start of the finding of a copy of the library's code:
    ``"a copy of attnlib's code"``."""
    return f"a copy of {library or current().library}'s code"


def _no_op(stmt: ast.stmt) -> bool:
    """Whether a statement does nothing: ``pass``, a bare constant (a docstring,
    ``...``) or name, ``x = x``."""
    if isinstance(stmt, ast.Pass):
        return True
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, (ast.Constant, ast.Name)):
        return True
    return (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
        and isinstance(stmt.value, ast.Name)
        and stmt.targets[0].id == stmt.value.id
    )


class _Canonical(ast.NodeTransformer):
    """A function's code without its name, its no-op statements (:func:`_no_op`),
    and with its arguments and local variables (those of the functions and
    lambdas inside it too) named ``_0``, ``_1``, ... in the order they appear."""

    def __init__(self, local: set[str]):
        self.local = local
        self.names: dict[str, str] = {}

    def _name(self, name: str) -> str:
        if name not in self.local:
            return name
        return self.names.setdefault(name, f"_{len(self.names)}")

    def generic_visit(self, node):
        for field, value in ast.iter_fields(node):
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                kept = [s for s in value if not _no_op(s)]
                setattr(node, field, kept)
        return super().generic_visit(node)

    def visit_Name(self, node):
        node.id = self._name(node.id)
        return node

    def visit_arg(self, node):
        node.arg = self._name(node.arg)
        node.annotation = None
        return node

    def _function(self, node):
        node.name = self._name(node.name) if node.name in self.local else ""
        node.returns = None
        return self.generic_visit(node)

    visit_FunctionDef = visit_AsyncFunctionDef = _function


def _local_names(node: ast.AST) -> set[str]:
    """The arguments and the names a function (with what it holds) binds."""
    out: set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.arg):
            out.add(n.arg)
        elif isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            out.add(n.id)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            out.add(n.name)
        elif n is not node and isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.add(n.name)
    for n in ast.walk(node):  # global x: not local
        if isinstance(n, (ast.Global, ast.Nonlocal)):
            out -= set(n.names)
    return out


def _fingerprint(node: ast.AST) -> tuple[str, int]:
    """A hash of a function's code that ignores its name, docstrings, comments,
    layout, statements that do nothing and the names of its arguments and local
    variables (:class:`_Canonical`); and its number of statements (no-ops not
    counted)."""
    import copy

    try:
        canonical = _Canonical(_local_names(node)).visit(copy.deepcopy(node))
        size = sum(isinstance(n, ast.stmt) for b in canonical.body for n in ast.walk(b))
        text = ast.dump(canonical.args) + "".join(ast.dump(b) for b in canonical.body)
    except RecursionError:
        return "", 0
    return hashlib.sha256(text.encode()).hexdigest(), size


def _functions(tree: ast.AST):
    return (
        n
        for n in ast.walk(tree)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
    )


def library_fingerprints() -> dict[str, str]:
    """The fingerprint of every function of the library under test of at least
    :data:`COPY_MIN_STATEMENTS` statements, and its name (none without a
    library)."""
    settings = current()
    if settings.library is None:
        return {}
    return _fingerprints(settings.library, settings.package())


@lru_cache(maxsize=4)
def _fingerprints(library: str, package) -> dict[str, str]:
    out = {}
    for path in sorted(package.rglob("*.py")):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (OSError, SyntaxError, ValueError):
            continue
        module = ".".join((library, *path.relative_to(package).with_suffix("").parts))
        for node in _functions(tree):
            digest, size = _fingerprint(node)
            if digest and size >= COPY_MIN_STATEMENTS:
                out.setdefault(
                    digest, f"{module.removesuffix('.__init__')}.{node.name}"
                )
    return out


def library_copies(cells: list[str]) -> list[str]:
    """The functions of the library under test whose code a notebook holds,
    under any name: in a code cell, in a cell that writes a file (``%%writefile``,
    ``%%bash``), or in a string of Python code."""
    known = library_fingerprints()
    found: dict[str, None] = {}
    texts = []
    for source in cells:
        texts.append(source)
        texts.append(_python(source))
        lines = source.splitlines()
        if lines and lines[0].lstrip().startswith("%%"):
            texts.append("\n".join(lines[1:]))
    seen = 0
    while texts and seen < 10_000:
        text = texts.pop()
        seen += 1
        try:
            tree = ast.parse(text)
            nodes = list(ast.walk(tree))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            # a heredoc of a shell cell: try the lines between its markers
            if "<<" in text and "\n" in text:
                texts.append(text.split("\n", 1)[1])
            continue
        for node in nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = known.get(_fingerprint(node)[0])
                if name:
                    found.setdefault(name, None)
            elif (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and "def " in node.value
            ):
                texts.append(node.value)
    return list(found)


# the cell that defines ``expected`` in the student notebook, as
# :func:`gradebox.masters.expected_cell` writes it (any values: a blob
# of base64 that numpy loads without pickle, into numeric arrays only)
EXPECTED_CELL = re.compile(
    re.escape(EXPECTED_MARK)
    + r" \(computed when the assignment was built\)\n"
    + re.escape("import base64 as _base64, io as _io, numpy as _np\n\n")
    + re.escape('expected = dict(_np.load(_io.BytesIO(_base64.b64decode("')
    + r"[A-Za-z0-9+/=]*"
    + re.escape('"))))')
    + r"\n?"
)
#: cells the scan passes over: the grader's own cells as built (the check cell,
#: the expected values); more come from the course's settings
#: (:meth:`.common.Settings.exempt_rules`)
EXEMPT_CELLS = [
    lambda source: source.strip() == CHECK_CELL.strip(),
    lambda source: EXPECTED_CELL.fullmatch(source) is not None,
]
# a long literal of the base64 (or hexadecimal) alphabet: packed data
ENCODED = re.compile(r"^[A-Za-z0-9+/=_\-\s]+$")
ENCODED_MIN = 2048
BYTES_MIN = 1024
# the name of a file of Python code or an import path entry
PYTHON_FILE = re.compile(r"\.(py|pyc|pyw|pth|so)\s*$", re.I)


def _magics(source: str, add) -> None:
    """Cell magics that write or run a Python file."""
    first = source.lstrip().split("\n", 1)[0].split()
    if first and first[0] in ("%%writefile", "%%file") and len(first) > 1:
        if PYTHON_FILE.search(first[-1]):
            add(
                f"writes a Python file {first[-1][:60]!r} (code brought in at run time)"
            )
    for line in source.splitlines():
        words = line.strip().split()
        if words and words[0] in ("%run", "%load") and len(words) > 1:
            add(f"{words[0]} {words[-1][:60]} (code brought in at run time)")


@lru_cache(maxsize=512)
def _installed(name: str) -> bool:
    """Whether the top-level module ``name`` is part of Python or installed in
    this environment (the one the sandbox sees)."""
    import importlib.util
    import sys

    if name in sys.stdlib_module_names or name in sys.builtin_module_names:
        return True
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError, AttributeError):
        return False


def scan_cells(cells: list[str]) -> list[str]:
    """Findings (short sentences, at most one per kind and name) of the cells."""
    findings: dict[str, None] = {}
    modules: dict[str, str] = {}
    exempt_rules = EXEMPT_CELLS + current().exempt_rules()
    trees = []
    kept = []
    for source in cells:
        if any(exempt(source) for exempt in exempt_rules):
            continue  # the grader's or the course's own cell, as built
        kept.append(source)
        _magics(source, lambda text: findings.setdefault(text, None))
        try:
            tree = ast.parse(_python(source))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        trees.append(tree)
        modules.update(_imported_modules(tree))
    cells = kept

    def add(text: str) -> None:
        findings.setdefault(text, None)

    for tree in trees:
        try:
            nodes = list(ast.walk(tree))
        except RecursionError:
            add("code nested too deeply to read")
            continue
        for node in nodes:
            _check(node, modules, add)
    for name in library_copies(cells):
        add(f"{library_copy()} ({name})")
    return list(findings)


def _check(node: ast.AST, modules: dict[str, str], add) -> None:
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        names = (
            [a.name for a in node.names]
            if isinstance(node, ast.Import)
            else [node.module or ""]
        )
        for name in names:
            top = name.split(".")[0]
            if top in MODULES:
                add(f"imports {name} ({MODULES[top]})")
            elif (
                top
                and getattr(node, "level", 0) == 0
                and top not in ("otter", current().library)
                and not _installed(top)
            ):
                add(
                    f"imports {top}, which is not installed (a module written "
                    "at run time?)"
                )
            if top == "multiprocessing" and name not in POOL_MODULES:
                add(f"imports {name} (other processes)")
            if top == "concurrent" and not name.startswith("concurrent.futures"):
                add(f"imports {name} (other processes)")
        if isinstance(node, ast.ImportFrom) and (node.module or "") in POOL_MODULES:
            for a in node.names:
                if a.name not in POOL_NAMES and node.module == "multiprocessing":
                    add(f"imports multiprocessing.{a.name} (other processes)")
            if top == "otter" and name != "otter":
                add(f"imports {name} (the test machinery)")
        if isinstance(node, ast.ImportFrom) and (node.module or "") in ("os", "sys"):
            for a in node.names:
                kind = ATTRIBUTES[node.module].get(a.name)
                if kind or a.name == "*":
                    add(f"imports {node.module}.{a.name} ({kind or 'everything'})")
        if isinstance(node, ast.ImportFrom) and (node.module or "") == "otter":
            for a in node.names:
                if a.name not in OTTER_ALLOWED:
                    add(f"imports otter.{a.name} (the test machinery)")
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        kind = CALLS.get(node.func.id)
        if kind:
            add(f"calls {node.func.id}() ({kind})")
        if node.func.id == "getattr" and len(node.args) >= 2:
            attr = node.args[1]
            if not (isinstance(attr, ast.Constant) and isinstance(attr.value, str)):
                add("getattr with a computed name (the interpreter's internals)")
            elif DUNDER.match(attr.value):
                add(f"getattr(..., {attr.value!r}) (the interpreter's internals)")
    elif isinstance(node, ast.Attribute):
        attr = node.attr
        if DUNDER.match(attr) and attr not in HARMLESS_DUNDERS:
            add(f"uses .{attr} (the interpreter's internals)")
        base = node.value
        if isinstance(base, ast.Name):
            real = modules.get(base.id, base.id)
            kind = ATTRIBUTES.get(real.split(".")[-1], {}).get(attr)
            if real.split(".")[0] in ("os", "sys", "threading", "shutil", "pathlib"):
                kind = kind or ATTRIBUTES.get(real.split(".")[0], {}).get(attr)
            if kind:
                add(f"uses {base.id}.{attr} ({kind})")
            if real == "multiprocessing" and attr not in POOL_NAMES:
                add(f"uses {base.id}.{attr} (other processes)")
            if real == "otter" and attr not in OTTER_ALLOWED:
                add(f"uses otter.{attr} (the test machinery)")
        try:
            dotted = ast.unparse(node)
        except (ValueError, RecursionError):
            dotted = ""
        head, _, rest = dotted.partition(".")
        full = f"{modules.get(head, head)}.{rest}"
        if full in DOTTED:
            add(f"uses {dotted} ({DOTTED[full]})")
    elif isinstance(node, ast.Name) and node.id in ("__builtins__", "__loader__"):
        add(f"uses {node.id} (the interpreter's internals)")
    elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
        targets = (
            node.targets
            if isinstance(node, (ast.Assign, ast.Delete))
            else [node.target]
        )
        todo = list(targets)
        while todo:
            t = todo.pop()
            if isinstance(t, (ast.Tuple, ast.List)):
                todo.extend(t.elts)
            elif isinstance(t, ast.Starred):
                todo.append(t.value)
            elif isinstance(t, ast.Attribute):
                root = t.value
                while isinstance(root, (ast.Attribute, ast.Subscript)):
                    root = root.value
                if isinstance(root, ast.Name) and root.id in modules:
                    add(
                        f"replaces {ast.unparse(t)} of the imported module "
                        f"{modules[root.id]}"
                    )
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        _path_literal(node, add)
        text = node.value
        if len(text) >= ENCODED_MIN and ENCODED.match(text):
            add(f"a literal of {len(text)} characters of encoded data")
        if PYTHON_FILE.search(text):
            add(f"names a Python file {text[:60]!r} (code brought in at run time)")
    if isinstance(node, ast.Constant) and isinstance(node.value, bytes):
        if len(node.value) >= BYTES_MIN:
            add(f"a bytes literal of {len(node.value)} bytes (packed data)")


def _path_literal(arg: ast.AST, add) -> None:
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        if OUTSIDE.search(arg.value.strip()):
            add(f"a path outside the notebook's folder: {arg.value[:60]!r}")
