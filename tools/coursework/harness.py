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

A call marked ``guard`` runs with a profiler that records any code of ``attnlib``
executed during the call: an "implement" question must not call the library
function it replaces. Everything here runs in the student's process, so the student
can change it; nothing here decides a score (the tester compares the answers), and
the sandbox bounds what a changed harness could do.
"""

import json
import os
import resource
import signal
import sys
import threading
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))


class GradingTimeout(BaseException):
    """The CPU budget of a cell or a call is spent (not an ``Exception``, so that
    ``except Exception`` in the student's code does not swallow it)."""


class LibraryCall(BaseException):
    """An "implement" function ran code of ``attnlib``."""


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


def _run_cells(shell, cells: list, budget: float) -> tuple[list, bool]:
    """Run the cells; errors (cell index, type, message) and whether the budget
    ran out."""
    errors = []
    start = _cpu()
    for i, source in enumerate(cells):
        left = budget - (_cpu() - start)
        if left <= 0:
            return errors, True
        signal.setitimer(signal.ITIMER_PROF, left)
        try:
            result = shell.run_cell(source, store_history=False, silent=False)
        except GradingTimeout:
            return errors + [{"cell": i, "type": "GradingTimeout", "message": ""}], True
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
        exc = result.error_before_exec or result.error_in_exec
        if isinstance(exc, GradingTimeout):
            return errors + [{"cell": i, "type": "GradingTimeout", "message": ""}], True
        if exc is not None:
            errors.append({"cell": i, **_error(exc)})
    return errors, False


def _answer(ns: dict, name: str):
    import wire

    if name not in ns:
        return {"__t": "missing"}
    value = ns[name]
    data = wire.encode(value)
    if isinstance(data, dict) and data.get("__t") == "opaque" and callable(value):
        return {"__t": "callable"}
    return data


def _guarded_call(func, args, kwargs, library: str, cpu: float):
    """Call ``func`` with a CPU budget; with ``library``, record (and stop at) the
    first code of that folder that runs during the call."""
    seen = []

    def hook(frame, event, arg):
        if event == "call" and frame.f_code.co_filename.startswith(library):
            if not seen:
                path = frame.f_code.co_filename[len(library) :].lstrip("/")
                module = "attnlib." + path.removesuffix(".py").replace("/", ".")
                seen.append(
                    f"{module.removesuffix('.__init__')}:{frame.f_code.co_qualname}"
                )
            raise LibraryCall()

    signal.setitimer(signal.ITIMER_PROF, cpu)
    try:
        if library:
            threading.setprofile(hook)
            sys.setprofile(hook)
        try:
            result = func(*args, **kwargs)
        finally:
            tampered = bool(library) and sys.getprofile() is not hook
            sys.setprofile(None)
            threading.setprofile(None)
    except LibraryCall:
        return None, None, seen, False
    except GradingTimeout:
        return None, {"type": "GradingTimeout", "message": ""}, seen, False
    except BaseException as exc:  # the student's function raised
        return None, _error(exc), seen, tampered if library else False
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
    return result, None, seen, tampered


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
    _stand_in_otter()
    shell = _shell()
    task = wire.read_frame(chan_in)
    started = time.perf_counter()
    errors, ran_out = _run_cells(shell, list(task["cells"]), float(task["cpu_cells"]))
    ns = shell.user_ns
    answers = {name: _answer(ns, name) for name in task["names"]}
    wire.write_frame(
        chan_out,
        {
            "op": "executed",
            "errors": errors,
            "ran_out": ran_out,
            "answers": answers,
            "seconds": time.perf_counter() - started,
        },
    )
    library = limits.get("library", "")
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
                guard = library if msg.get("guard") else ""
                result, err, seen, tampered = _guarded_call(
                    func, args, kwargs, guard, float(msg["cpu"])
                )
                if seen or tampered:
                    reply = {"library": seen, "tampered": tampered}
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
