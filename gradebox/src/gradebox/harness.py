"""The side of grading that runs a student's notebook, inside its sandbox.

Started by :mod:`.tester` as ``python -I harness.py LIMITS`` in a bubblewrap sandbox
(:mod:`.sandbox`), with :mod:`.wire` beside it. It never sees a test, a solution or
another submission. It

1. applies the limits it is given (CPU time, memory, file size, processes);
2. reads the notebook's code cells and the names the tests will ask for;
3. runs the cells in order in an IPython shell (magics and ``display`` work as in
   Jupyter, ``%matplotlib inline`` or ``widget`` keep the Agg backend; ``otter``
   is a stand-in whose ``grader.check`` does nothing), within a
   budget of CPU seconds, going on after a cell that raises as Jupyter does;
4. answers the tester: the values of the requested names as plain data, and calls
   of the student's functions with plain-data arguments.

The grader starts it twice per submission when the assignment asks for code or
values computed without the library under test (the course's setting, e.g.
``attnlib``). The first sandbox has the library; the second has none of it (its
files are not in the sandbox): there ``import <library>`` gives a stand-in whose every
name raises :class:`LibraryAbsent` when used, so that a notebook's imports run as
written, and an "implement" function or a "derive" value that needs the library cannot
be computed, whatever the notebook does to the interpreter, to threads or to this
harness. The tester takes the "implement" functions and "derive" values from the second
sandbox only. Everything here runs in the student's process, so the student can change
it; nothing here decides a score (the tester compares the answers), and the sandbox
bounds what a changed harness could do.
"""

import json
import os
import resource
import signal
import sys
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))


class GradingTimeout(BaseException):
    """The CPU budget of a cell or a call is spent (not an ``Exception``, so that
    ``except Exception`` in the student's code does not swallow it)."""


class LibraryAbsent(BaseException):
    """A name of the library under test was used where the library is absent (not an
    ``Exception``, so that ``except Exception`` does not hide it)."""


# names of the library that the notebook used where the library is absent
_ABSENT_USED: list[str] = []
# the library under test, by its top-level name (the sandbox's settings)
_LIBRARY: list[str] = []
# the library's constants where it is absent (data, no code: the tester sends
# them): module -> name -> value
_CONSTANTS: dict = {}


class _Absent:
    """What a name of the library under test is where the library is absent:
    using it in any way raises :class:`LibraryAbsent`."""

    def __init__(self, name: str):
        object.__setattr__(self, "_name", name)

    def _fail(self, *args, **kwargs):
        name = object.__getattribute__(self, "_name")
        if name not in _ABSENT_USED:
            _ABSENT_USED.append(name)
        raise LibraryAbsent(name)

    __call__ = __getattr__ = __getitem__ = __iter__ = __fspath__ = _fail
    __add__ = __radd__ = __mul__ = __rmul__ = __matmul__ = __rmatmul__ = _fail
    __sub__ = __rsub__ = __truediv__ = __rtruediv__ = __pow__ = __rpow__ = _fail
    __float__ = __int__ = __index__ = __array__ = __len__ = __bool__ = _fail
    __mro_entries__ = __instancecheck__ = __subclasscheck__ = _fail

    def __repr__(self):
        return f"<{object.__getattribute__(self, '_name')}: its library is absent here>"


def _absent_library(library: str) -> None:
    """``import <library>`` (and any ``<library>.x``) gives modules of :class:`_Absent`
    names: the library's code is not in this sandbox."""
    import importlib.abc
    import importlib.machinery

    class AbsentModule(types.ModuleType):
        def __getattr__(self, name):
            dunder = name.startswith("__") and name.endswith("__")
            if dunder and name != "__version__":
                raise AttributeError(name)
            constants = _CONSTANTS.get(self.__name__, {})
            if name in constants:
                return constants[name]
            return _Absent(f"{self.__name__}.{name}")

    class Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        def find_spec(self, fullname, path=None, target=None):
            if fullname == library or fullname.startswith(library + "."):
                return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
            return None

        def create_module(self, spec):
            module = AbsentModule(spec.name)
            module.__path__ = []
            # no file, as a built-in module: what walks sys.modules (autoreload's
            # hook after every cell, inspect, pytest's collection) passes it by
            module.__file__ = None
            return module

        def exec_module(self, module):
            return None

    sys.meta_path.insert(0, Finder())


def _apply_limits(limits: dict) -> None:
    for name, key in [
        ("RLIMIT_AS", "memory"),
        ("RLIMIT_FSIZE", "file_size"),
        ("RLIMIT_NPROC", "processes"),
        ("RLIMIT_NOFILE", "open_files"),
        ("RLIMIT_CORE", "core"),
    ]:
        value = limits.get(key)
        if value is not None:
            resource.setrlimit(getattr(resource, name), (int(value), int(value)))
    cpu = limits.get("cpu_total")
    if cpu is not None:
        resource.setrlimit(resource.RLIMIT_CPU, (int(cpu), int(cpu) + 5))


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _on_sigprof(signum, frame):
    raise GradingTimeout()


def _stand_in_otter() -> None:
    """``import otter`` gives this: ``grader.check(...)`` and friends do nothing
    (the tests run elsewhere; otter itself is slow to import)."""

    class Notebook:
        def __init__(self, *args, **kwargs):
            pass

        def __getattr__(self, name):
            return lambda *args, **kwargs: None

    otter = types.ModuleType("otter")
    otter.Notebook = Notebook
    sys.modules["otter"] = otter


def _shell():
    """An IPython shell that accepts what a Jupyter kernel accepts: ``%matplotlib``
    with any backend (``inline``, ``widget``, ``notebook``, ``qt``), ``%pylab`` and
    ``%gui`` keep matplotlib's non-interactive Agg backend (figures are not graded)
    instead of failing as a terminal shell does."""
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    class Shell(InteractiveShell):
        def enable_gui(self, gui=None):
            return None

        def enable_matplotlib(self, gui=None):
            import matplotlib

            matplotlib.use("Agg", force=True)
            return gui, "agg"

    config = Config()
    config.HistoryManager.enabled = False
    config.InteractiveShell.colors = "NoColor"
    config.InteractiveShell.xmode = "Plain"
    return Shell.instance(config=config)


def _error(exc: BaseException) -> dict:
    kind = type(exc)
    name = kind.__name__
    if kind.__module__ != "builtins" and name != "LinAlgError":
        text = f"{kind.__module__}.{name}: {exc}"
        name = "Exception"
    else:
        text = str(exc)
    return {"type": name, "message": text[:500]}


def _statements(shell, source: str) -> list[str]:
    """The top-level statements of a cell, magics turned into Python (the cell as
    one piece if it does not parse)."""
    import ast

    try:
        tree = ast.parse(shell.transform_cell(source))
    except Exception:
        return [source]
    return [ast.unparse(node) for node in tree.body] or [source]


def _stored(source: str) -> set:
    """The names a statement binds."""
    import ast

    try:
        tree = ast.parse(source)
    except Exception:
        return set()
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.alias):
            out.add((node.asname or node.name).split(".")[0])
    return out


def _run_cells(
    shell, cells: list, budget: float, absent: bool = False, names=()
) -> tuple[list, bool, dict]:
    """Run the cells; errors (cell index, type, message), whether the budget ran
    out, and (where the library is absent) the names among ``names`` whose last
    binding failed because it needed the library, with what it used.

    Where the library is absent, a cell runs one top-level statement at a time and
    goes on after a statement that fails: a function defined after a statement
    that needs the library is still defined."""
    errors: list = []
    needs: dict = {}
    start = _cpu()
    ns = shell.user_ns
    for i, source in enumerate(cells):
        pieces = _statements(shell, source) if absent else [source]
        for piece in pieces:
            left = budget - (_cpu() - start)
            if left <= 0:
                return errors, True, needs
            before = {n: id(ns.get(n)) for n in names}
            del _ABSENT_USED[:]
            signal.setitimer(signal.ITIMER_PROF, left)
            escaped = None
            try:
                result = shell.run_cell(piece, store_history=False, silent=False)
            except GradingTimeout:
                timeout = {"cell": i, "type": "GradingTimeout", "message": ""}
                return errors + [timeout], True, needs
            except LibraryAbsent as raised:  # in a hook of IPython's, after the cell
                escaped = raised
            finally:
                signal.setitimer(signal.ITIMER_PROF, 0)
            if escaped is not None:
                exc = escaped
            else:
                exc = result.error_before_exec or result.error_in_exec
            if isinstance(exc, GradingTimeout):
                timeout = {"cell": i, "type": "GradingTimeout", "message": ""}
                return errors + [timeout], True, needs
            if isinstance(exc, LibraryAbsent) or (exc is not None and _ABSENT_USED):
                for name in _stored(piece) & set(names):
                    needs[name] = str(_ABSENT_USED[0] if _ABSENT_USED else exc)
            else:
                for name in names:
                    if id(ns.get(name)) != before[name]:
                        needs.pop(name, None)
            if exc is not None:
                errors.append({"cell": i, **_error(exc)})
                if not absent:
                    break
    return errors, False, needs


def _answer(ns: dict, name: str):
    import wire

    if name not in ns:
        return {"__t": "missing"}
    value = ns[name]
    data = wire.encode(value)
    if isinstance(data, dict) and data.get("__t") == "opaque" and callable(value):
        return {"__t": "callable"}
    return data


def _call(func, args, kwargs, cpu: float):
    """Call ``func`` with a CPU budget: (value, error, names of the absent library
    used during the call)."""
    del _ABSENT_USED[:]
    signal.setitimer(signal.ITIMER_PROF, cpu)
    try:
        result = func(*args, **kwargs)
    except LibraryAbsent:
        return None, None, list(_ABSENT_USED) or list(_LIBRARY)
    except GradingTimeout:
        return None, {"type": "GradingTimeout", "message": ""}, []
    except BaseException as exc:  # the student's function raised
        return None, _error(exc), list(_ABSENT_USED)
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
    return result, None, list(_ABSENT_USED)


def main() -> int:
    limits = json.loads(sys.argv[1])
    _apply_limits(limits)
    # the channel to the tester: private copies of stdin and stdout (not inherited
    # by any process the notebook starts); the notebook's own output goes to a file
    chan_in, chan_out = os.dup(0), os.dup(1)
    _CHANNEL[:] = [chan_in, chan_out]
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    out = os.open("output.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(out, 1)
    os.dup2(out, 2)
    sys.path.insert(0, HERE)
    import wire

    for entry in limits.get("paths", []):
        sys.path.insert(0, entry)
    mpl = limits.get("mpl_cache")
    if mpl and os.path.isdir(mpl):
        os.makedirs(os.environ.get("MPLCONFIGDIR", "/tmp/mpl"), exist_ok=True)
        for name in os.listdir(mpl):
            src = os.path.join(mpl, name)
            if os.path.isfile(src):
                with (
                    open(src, "rb") as fh,
                    open(
                        os.path.join(os.environ.get("MPLCONFIGDIR", "/tmp/mpl"), name),
                        "wb",
                    ) as dst,
                ):
                    dst.write(fh.read())
    signal.signal(signal.SIGPROF, _on_sigprof)
    _LIBRARY[:] = [str(limits.get("library") or "")]
    if limits.get("absent") and limits.get("library"):
        _absent_library(str(limits["library"]))
    _stand_in_otter()
    shell = _shell()
    task = wire.read_frame(chan_in)
    started = time.perf_counter()
    absent = bool(limits.get("absent"))
    if absent and isinstance(task.get("constants"), dict):
        for module, values in task["constants"].items():
            try:
                _CONSTANTS[str(module)] = {
                    str(k): wire.decode(v) for k, v in dict(values).items()
                }
            except (wire.WireError, TypeError, ValueError):
                continue
    names = [str(n) for n in task["names"]]
    errors, ran_out, needs = _run_cells(
        shell, list(task["cells"]), float(task["cpu_cells"]), absent, names
    )
    ns = shell.user_ns
    answers = {name: _answer(ns, name) for name in task["names"]}
    wire.write_frame(
        chan_out,
        {
            "op": "executed",
            "errors": errors,
            "ran_out": ran_out,
            "answers": answers,
            "needs": needs,
            "seconds": time.perf_counter() - started,
        },
    )
    while True:
        try:
            msg = wire.read_frame(chan_in)
        except EOFError:
            # no atexit handlers (multiprocessing would wait for the notebook's
            # children): the sandbox ends with this process
            os._exit(0)
        if msg.get("op") != "call":
            continue
        func = ns.get(msg["name"])
        if not callable(func):
            reply = {"error": {"type": "NameError", "message": f"{msg['name']}"}}
        else:
            try:
                args = wire.decode(msg["args"])
                kwargs = wire.decode(msg["kwargs"])
            except wire.WireError as exc:
                reply = {"error": {"type": "TypeError", "message": str(exc)}}
            else:
                result, err, used = _call(func, args, kwargs, float(msg["cpu"]))
                if used:
                    reply = {"library": used}
                elif err is not None:
                    reply = {"error": err}
                else:
                    reply = {"value": wire.encode(result)}
        reply["id"] = msg.get("id")
        wire.write_frame(chan_out, reply)


def _fatal(exc: BaseException) -> int:
    """Report an error of the harness itself on the channel (if it is open)."""
    import traceback

    text = "".join(traceback.format_exception(exc))[-2000:]
    try:
        import wire

        wire.write_frame(_CHANNEL[1], {"op": "fatal", "message": text})
    except Exception:
        os.write(_CHANNEL[1], text.encode())
    return 3


_CHANNEL = [0, 1]

if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as exc:
        sys.exit(_fatal(exc))
