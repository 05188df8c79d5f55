"""A static scan of a submission for code that a human should look at.

The sandbox and the tests outside it already stop what such code tries; the scan
makes the attempt visible: a submission with a finding gets the status ``flagged``
and the reason in the gradebook, with the scores it earned, for a lecturer to read
the notebook. It looks for what an assignment on the book's mathematics never
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
  directory).

Cells that do not parse as Python (after IPython's magics are set aside) are not a
finding: they fail when they run.
"""

from __future__ import annotations

import ast
import hashlib
import re
from functools import lru_cache

from .common import CHECK_CELL, ROOT

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
        "meta_path": "the interpreter's internals",
        "path_hooks": "the interpreter's internals",
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


# a function of attnlib this long (statements, nested ones counted) copied into a
# notebook is a copy of the library, not a coincidence
COPY_MIN_STATEMENTS = 4
LIBRARY_COPY = "a copy of attnlib's code"


def _fingerprint(node: ast.AST) -> tuple[str, int]:
    """A hash of a function's code that ignores its name, its docstring, comments
    and layout; and its number of statements."""
    body = list(node.body)
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
    ):
        body = body[1:]  # the docstring
    size = sum(isinstance(n, ast.stmt) for b in body for n in ast.walk(b))
    text = ast.dump(node.args) + "".join(ast.dump(b) for b in body)
    return hashlib.sha256(text.encode()).hexdigest(), size


def _functions(tree: ast.AST):
    return (
        n
        for n in ast.walk(tree)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
    )


@lru_cache(maxsize=1)
def library_fingerprints() -> dict[str, str]:
    """The fingerprint of every function of attnlib of at least
    :data:`COPY_MIN_STATEMENTS` statements, and its name."""
    out = {}
    for path in sorted((ROOT / "attnlib").rglob("*.py")):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (OSError, SyntaxError, ValueError):
            continue
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for node in _functions(tree):
            digest, size = _fingerprint(node)
            if size >= COPY_MIN_STATEMENTS:
                out.setdefault(
                    digest, f"{module.removesuffix('.__init__')}.{node.name}"
                )
    return out


def library_copies(cells: list[str]) -> list[str]:
    """The functions of attnlib whose code a notebook holds, under any name: in a
    code cell, in a cell that writes a file (``%%writefile``, ``%%bash``), or in a
    string of Python code."""
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


def scan_cells(cells: list[str]) -> list[str]:
    """Findings (short sentences, at most one per kind and name) of the cells."""
    findings: dict[str, None] = {}
    modules: dict[str, str] = {}
    trees = []
    for source in cells:
        if source.strip() == CHECK_CELL.strip():
            continue  # the student notebook's own cell, as built
        try:
            tree = ast.parse(_python(source))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        trees.append(tree)
        modules.update(_imported_modules(tree))

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
        add(f"{LIBRARY_COPY} ({name})")
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


def _path_literal(arg: ast.AST, add) -> None:
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        if OUTSIDE.search(arg.value.strip()):
            add(f"a path outside the notebook's folder: {arg.value[:60]!r}")
