"""The trusted side of grading: the tests, run outside the student's process.

For one submission the tester

1. scans the code (:mod:`.scan`) for what a human should look at;
2. starts the notebook in its sandbox (:mod:`.sandbox`, :mod:`.harness`) and sends
   it the code cells and the names the tests use (never a test);
3. runs every test case of the master here, in a namespace made of the master's
   own setup cells (imports, constants: never the student's versions) and of the
   student's answers: values as plain data (:mod:`.wire`), functions as stand-ins
   that call the student's function in the sandbox with plain-data arguments.

So nothing the notebook does to otter, ``doctest``, numpy or the builtins can
change a comparison: the comparisons run in this process, which never executes the
student's code and never unpickles anything. The functions of an "implement"
question (``implement:`` in the question's configuration) and the values of a
"derive" question (``derive:``) come from a second sandbox, where the notebook runs
again without the library under test (:attr:`.common.Settings.library`): there is
no code of the library there to call.

It runs as a long-lived worker, one per notebook graded at a time, so that its
imports and the master's setup are paid once: ``python -m gradebox.tester
MASTER PARENT_PID SETTINGS`` (the settings as JSON) reads tasks from its
standard input and writes results to its standard output (:mod:`.wire` frames).
"""

from __future__ import annotations

import builtins
import contextlib
import copy
import io
import os
import select
import signal
import subprocess
import sys
import threading
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

from . import sandbox, scan, wire
from .common import Settings, configure, current
from .masters import (
    _no_display,
    expected_values,
    parse_cell,
    parse_master,
    setup_plan,
    used_names,
)

# exceptions of the student's functions that tests may catch by their type
BUILTIN_ERRORS = {
    name: getattr(builtins, name)
    for name in (
        "ValueError",
        "TypeError",
        "IndexError",
        "KeyError",
        "ZeroDivisionError",
        "ArithmeticError",
        "OverflowError",
        "FloatingPointError",
        "NotImplementedError",
        "RuntimeError",
        "AttributeError",
        "NameError",
        "AssertionError",
        "RecursionError",
        "MemoryError",
        "LookupError",
        "Exception",
    )
}


class Stopped(BaseException):
    """The submission's process is gone: ``kind`` is ``timeout`` (CPU or wall
    time) or ``failed`` (a crash, ``os._exit``, an unreadable message)."""

    def __init__(self, why: str, kind: str = "failed"):
        super().__init__(why)
        self.kind = kind


class LibraryUse(BaseException):
    """A function of an "implement" question needs the library under test.

    Not an ``Exception``: a test's ``except Exception`` must not count it as the
    error it expects."""

    def __init__(self, name: str, where: str):
        super().__init__(name, where)
        self.name, self.where = name, where


class CaseTimeout(BaseException):
    """A test case used up its CPU time in the tester (an answer too costly to
    compare): not an ``Exception``, so that a test's ``except`` does not catch it.
    """


@contextlib.contextmanager
def case_clock(seconds: float):
    """At most ``seconds`` of this process's CPU time (the tester's own work: the
    time the student's process spends on a call is not counted here).

    Python drops an exception raised by a signal handler that runs inside a
    finaliser (a ``__del__`` or a weak-reference callback, which the garbage
    collector runs at any moment of a large computation). So the timer fires again
    every 0.25 s of CPU after the limit, and a case that outlived its limit raises
    :class:`CaseTimeout` when it ends, even if every raise from the handler was
    dropped: it never counts as passed."""
    expired: list[bool] = []

    def on_timeout(signum, frame):
        expired.append(True)
        raise CaseTimeout()

    previous = signal.signal(signal.SIGPROF, on_timeout)
    signal.setitimer(signal.ITIMER_PROF, seconds, 0.25)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)
    if expired:
        raise CaseTimeout()


def limit_memory(megabytes: int) -> None:
    """Bound the address space of this process (its soft limit: the sandboxes it
    starts get the original back, see :func:`_start`)."""
    import resource

    if not _ORIGINAL_AS:
        _ORIGINAL_AS[:] = resource.getrlimit(resource.RLIMIT_AS)
    hard = _ORIGINAL_AS[1]
    want = megabytes * 2**20
    if hard != resource.RLIM_INFINITY:
        want = min(want, hard)
    resource.setrlimit(resource.RLIMIT_AS, (want, hard))


_ORIGINAL_AS: list = []


def _restore_memory() -> None:
    if _ORIGINAL_AS:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, tuple(_ORIGINAL_AS))


class StudentValueError(TypeError):
    """A value of the submission that is not plain data."""


# ----------------------------------------------------------------- the assignment


@dataclass
class Case:
    question: str
    number: int  # 1-based among the question's public or hidden cases
    hidden: bool
    points: float
    source: str
    code: object  # compiled
    names: frozenset = frozenset()  # the names it reads


class Assignment:
    """What the tester needs of one master: its test cases, setup code, the names
    the tests take from the student, and the "implement" functions."""

    def __init__(self, master: Path):
        install_safe_parser()
        m = self._master = parse_master(Path(master))
        self.slug = m.slug
        self.questions = [(q.name, q.points) for q in m.autograded]
        self.implement = {q.name: set(q.implement) for q in m.autograded}
        self.derive = {q.name: set(q.derive) for q in m.autograded}
        self.cases: list[Case] = []
        for q in m.autograded:
            count = {False: 0, True: 0}
            for hidden, points, body in q.cases():
                count[hidden] += 1
                kind = "hidden" if hidden else "public"
                name = f"<{q.name} {kind} test {count[hidden]}>"
                tree = parse_cell(body, name)
                code = compile(tree, name, "exec")
                self.cases.append(
                    Case(
                        q.name,
                        count[hidden],
                        hidden,
                        points,
                        body,
                        code,
                        frozenset(used_names(tree)),
                    )
                )
        self.setup, answers = setup_plan(m)
        used = set()
        for case in self.cases:
            used |= used_names(parse_cell(case.source, case.question))
        for q in m.autograded:
            unknown = (set(q.implement) | set(q.derive)) - answers
            if unknown:
                raise ValueError(
                    f"{m.path.name}: {q.name} implements or derives "
                    f"{sorted(unknown)}, which no solution cell defines"
                )
        # taken from the sandbox without the library only
        self.absent = set().union(*self.implement.values(), *self.derive.values())
        self.names = sorted((used | self.absent) & answers)
        self._base: dict | None = None

    def namespace(self) -> dict:
        """A fresh copy of the namespace of the master's setup cells, with the
        ``expected`` values of its public tests."""
        if self._base is None:
            ns: dict = {"__name__": "__main__", "display": _no_display}
            with _quiet():
                for src in self.setup:
                    exec(compile(parse_cell(src, "setup"), "<setup>", "exec"), ns)
                if self._master.expected_cells:
                    ns["expected"] = expected_values(self._master)
            self._base = ns
        return {
            k: (copy.copy(v) if type(v).__module__ == "numpy" else v)
            for k, v in self._base.items()
        }


@contextlib.contextmanager
def _quiet():
    """Setup and tests print nothing, and warn nothing."""
    import warnings

    with contextlib.redirect_stdout(io.StringIO()):
        with contextlib.redirect_stderr(io.StringIO()):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                yield


# the builtins that may appear in a formula given as text
_FORMULA_BUILTINS = {"abs", "min", "max", "pow", "round", "int", "float", "complex"}
# sympy functions that are not classes but only build expressions
_FORMULA_SYMPY = {"sqrt", "root", "cbrt", "real_root", "N", "Rational"}
_FORMULA_KEYWORDS = {"True", "False", "None", "and", "or", "not"}
_FORMULA_OPS = set("+ - * / ** ^ ( ) , < > <= >= == != % // & | ~".split())


def install_safe_parser() -> None:
    """Make sympy parse text as a formula only, never as code.

    ``sympify``, ``simplify``, ``lambdify`` and others parse a string with
    ``parse_expr``, which evaluates it as Python: a student's string (a value the
    tests receive) could run code here. The replacement accepts only names that are
    sympy's expression classes, a few functions that build expressions, or new
    symbols; numbers; and arithmetic and comparison operators. No attribute, no
    subscript, no string, no name starting with an underscore, no builtin other
    than a few numeric ones. sympy's own strings (unit names at import) pass.
    """
    import keyword
    import tokenize

    import sympy.parsing.sympy_parser as parser

    if getattr(parser.parse_expr, "safe", False):
        return
    original = parser.parse_expr
    names = wire._sympy_names()

    def safe_parse_expr(s, *args, **kwargs):
        if not isinstance(s, str) or len(s) > wire.MAX_SREPR:
            raise ValueError("not a formula")
        try:
            tokens = list(tokenize.generate_tokens(io.StringIO(s).readline))
        except (tokenize.TokenError, SyntaxError, IndentationError):
            raise ValueError(f"not a formula: {s[:60]!r}") from None
        for tok in tokens:
            if tok.type in (
                tokenize.NUMBER,
                tokenize.NEWLINE,
                tokenize.NL,
                tokenize.ENDMARKER,
                tokenize.INDENT,
                tokenize.DEDENT,
            ):
                continue
            text = tok.string
            if tok.type == tokenize.NAME:
                if keyword.iskeyword(text) and text not in _FORMULA_KEYWORDS:
                    raise ValueError(f"not a formula: keyword {text!r}")
                if text.startswith("_"):
                    raise ValueError(f"not a formula: name {text!r}")
                if hasattr(builtins, text) and text not in _FORMULA_BUILTINS:
                    raise ValueError(f"not a formula: name {text!r}")
                import sympy

                if (
                    hasattr(sympy, text)
                    and text not in names
                    and text not in _FORMULA_SYMPY
                ):
                    raise ValueError(f"not a formula: name {text!r}")
                continue
            if tok.type == tokenize.OP and text in _FORMULA_OPS:
                continue
            raise ValueError(f"not a formula: {text!r}")
        return original(s, *args, **kwargs)

    safe_parse_expr.safe = True
    parser.parse_expr = safe_parse_expr


# ------------------------------------------------------- the library's constants


_PLAIN = (bool, int, float, complex, str, bytes, type(None))


def _is_constant(value, depth: int = 0) -> bool:
    """Whether ``value`` is data (no code): a number, a string, a numeric array,
    or a tuple, list, set or dict of those."""
    import numpy as np

    if depth > 8:
        return False
    if isinstance(value, _PLAIN):
        return True
    if isinstance(value, np.generic):
        return value.dtype.kind in wire.DTYPE_KINDS
    if isinstance(value, np.ndarray):
        return value.dtype.kind in wire.DTYPE_KINDS and value.size <= 10**5
    if isinstance(value, (tuple, list, frozenset, set)):
        return len(value) <= 1000 and all(_is_constant(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return len(value) <= 1000 and all(
            isinstance(k, _PLAIN) and _is_constant(v, depth + 1)
            for k, v in value.items()
        )
    return False


_CONSTANTS: dict = {}


def library_constants() -> dict:
    """The public constants of the modules of the library under test (for the
    book's ``attnlib``: ``attnlib.NORMALIZATIONS``, ``attnlib.gaussian.ALPHA0``), as
    plain data: module -> name -> value.

    The sandbox without the library gets them, so that an "implement" function
    that uses a constant of the library (not its code) works there as it does in
    the student's ``grader.check``, whose rule is the same: code of the library
    may not run, its data may be read."""
    if _CONSTANTS:
        return _CONSTANTS
    import importlib
    import pkgutil

    library = current().library
    if library is None:
        return _CONSTANTS
    try:
        package = importlib.import_module(library)
    except Exception:  # no library: nothing to give
        return _CONSTANTS
    for info in pkgutil.iter_modules(getattr(package, "__path__", [])):
        if not info.ispkg:
            try:
                importlib.import_module(f"{library}.{info.name}")
            except Exception:  # a module that does not import here is not used
                pass
    for name, module in sorted(sys.modules.items()):
        if module is None or not (name == library or name.startswith(library + ".")):
            continue
        values = {}
        for key, value in sorted(vars(module).items()):
            if not key.startswith("_") and _is_constant(value):
                try:
                    values[key] = wire.encode(value)
                except Exception:
                    continue
        if values:
            _CONSTANTS[name] = values
    return _CONSTANTS


# ----------------------------------------------------------------- the submission


class Channel:
    """The tester's end of the pipe to one sandboxed notebook."""

    def __init__(self, proc: subprocess.Popen, deadline: float, limits, group=None):
        self.proc, self.deadline, self.limits = proc, deadline, limits
        self.group = group  # the sandbox's control group, if it has one
        self.stopped: str | None = None
        self.stopped_kind = "failed"
        self.next_id = 0
        self.executed = False  # the notebook has run: the tests' calls follow
        self.over_cpu: tuple[float, float] | None = None  # set by CpuWatch

    def cpu_budget(self) -> float:
        """CPU seconds all the sandbox's processes may use together by now: the
        cells' time until the notebook has run, then as much again for the calls
        (:class:`sandbox.Limits`), and 10 s of margin for the harness."""
        return (2 if self.executed else 1) * self.limits.cpu + 10

    def _wait_readable(self) -> None:
        fd = self.proc.stdout.fileno()
        while True:
            left = self.deadline - time.monotonic()
            if left <= 0:
                self.stop(
                    f"not finished after {self.limits.wall:g} s of wall time",
                    "timeout",
                )
            ready, _, _ = select.select([fd], [], [], min(left, 5.0))
            if ready:
                return

    def recv(self):
        if self.stopped:
            raise Stopped(self.stopped, self.stopped_kind)
        self._wait_readable()
        try:
            return wire.read_frame(
                self.proc.stdout.fileno(), wire.MAX_RECEIVED, wire.MAX_VALUES
            )
        except (EOFError, OSError):
            self.stop(*self._why_gone())
        except wire.FrameTooLarge as exc:
            self.stop(
                f"the notebook's answers are too large to test: {exc} (the "
                "answers to these questions take kilobytes)"
            )
        except wire.WireError as exc:
            self.stop(f"the notebook's process sent something unreadable ({exc})")

    def send(self, obj) -> None:
        if self.stopped:
            raise Stopped(self.stopped, self.stopped_kind)
        try:
            wire.write_frame(self.proc.stdin.fileno(), obj)
        except (BrokenPipeError, OSError):
            self.stop(*self._why_gone())

    def _why_gone(self) -> tuple[str, str]:
        code, cpu, peak = wait_usage(self.proc, 10)
        if code is None:
            return "the notebook's process stopped answering", "failed"
        limit = 2 * self.limits.cpu + 10
        signum = -code if code < 0 else code - 128 if code > 128 else 0
        if self.group is not None and self.group.out_of_memory():
            return (
                "the notebook's processes together used more than the sandbox's "
                f"memory ({self.limits.sandbox_memory_mb} MB, its files in /tmp "
                "and /dev/shm included): the kernel stopped them"
            ), "failed"
        if signum == signal.SIGXCPU or (
            signum == signal.SIGKILL and cpu is not None and cpu >= limit - 1
        ):
            return f"the notebook used up its CPU time ({limit:g} s)", "timeout"
        if self.over_cpu is not None:
            used, budget = self.over_cpu
            what = "" if self.executed else " for running its cells"
            return (
                f"the notebook's processes together used up its CPU time{what} "
                f"({budget:g} s; they used {used:.0f} s)"
            ), "timeout"
        if signum == signal.SIGKILL and cpu is None:
            return (
                "the notebook's process was killed (SIGKILL): it used up its CPU "
                "time or the machine ran out of memory"
            ), "failed"
        if signum == signal.SIGKILL:
            return (
                f"the notebook's process was killed (SIGKILL) after {cpu:.1f} s of "
                f"CPU, far from its CPU limit ({limit:g} s): most likely the machine "
                f"ran out of memory (its largest process held {peak:g} MB; the limit "
                f"is {self.limits.memory_mb} MB per process)"
            ), "failed"
        return f"the notebook's process ended early (exit status {code})", "failed"

    def stop(self, why: str, kind: str = "failed"):
        self.stopped, self.stopped_kind = why, kind
        kill(self.proc)
        raise Stopped(why, kind)

    def call(self, name: str, args, kwargs):
        try:
            payload = {
                "op": "call",
                "id": self.next_id,
                "name": name,
                "args": wire.encode(list(args)),
                "kwargs": wire.encode(dict(kwargs)),
                "cpu": self.limits.call_cpu,
            }
        except Exception as exc:  # an argument the test gives is not plain data
            raise TypeError(f"cannot pass this argument to {name}: {exc}") from None
        self.next_id += 1
        self.send(payload)
        reply = self.recv()
        if not isinstance(reply, dict):
            self.stop("the notebook's process sent something unreadable")
        if "library" in reply:
            where = ", ".join(map(str, reply.get("library") or []))[:200]
            raise LibraryUse(name, where)
        if "error" in reply:
            err = reply["error"] if isinstance(reply["error"], dict) else {}
            kind = str(err.get("type", "Exception"))
            message = str(err.get("message", ""))[:300]
            if kind == "GradingTimeout":
                raise TimeoutError(
                    f"{name} did not return within {self.limits.call_cpu:g} s of CPU"
                )
            if kind == "LinAlgError":
                import numpy as np

                raise np.linalg.LinAlgError(message)
            cls = BUILTIN_ERRORS.get(kind) or RuntimeError
            exc = cls(message)
            exc.from_student = f"{name} raised {kind}: {message}"
            raise exc
        try:
            return wire.decode(reply.get("value"))
        except wire.WireError as exc:
            raise StudentValueError(f"{name} returned {exc}") from None


class StudentFunction:
    """Stands for a function of the notebook: calls it in the sandbox."""

    def __init__(self, channel: Channel, name: str):
        self._channel, self._name = channel, name
        self.__name__ = name

    def __call__(self, *args, **kwargs):
        return self._channel.call(self._name, args, kwargs)

    def __repr__(self):
        return f"<function {self._name} of the submission>"


class CpuWatch:
    """Stops a sandbox whose processes together used up the notebook's CPU time,
    read from its control group twice a second: ``cpu + 10`` s until the notebook
    has run (its cells' time, :class:`sandbox.Limits`), ``2 cpu + 10`` s in all.
    The limits per process do not see forty processes that each stay under them;
    a notebook of one process meets its cells' limit in the harness first, and
    keeps the answers of the cells that ran. The channel then finds its process
    gone and says why (:meth:`Channel._why_gone`)."""

    PERIOD = 0.5

    def __init__(self, channels: list[Channel]):
        self.channels = [c for c in channels if c.group is not None]
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        watched = list(self.channels)
        while watched and not self.done.wait(self.PERIOD):
            for channel in list(watched):
                used = channel.group.cpu_seconds()
                budget = channel.cpu_budget()
                if used is None:
                    watched.remove(channel)
                elif used >= budget:
                    channel.over_cpu = (used, budget)
                    channel.group.kill()
                    watched.remove(channel)

    def __enter__(self) -> "CpuWatch":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.done.set()
        self.thread.join(timeout=10)


def wait_usage(proc: subprocess.Popen, timeout: float):
    """Wait for ``proc``: its exit status (None if it does not end within
    ``timeout`` s), the CPU seconds it and every process it waited for used, and
    the peak memory in MB of the largest of them."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        except ChildProcessError:  # reaped already: no usage to tell
            return proc.poll(), None, None
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            cpu = usage.ru_utime + usage.ru_stime
            return proc.returncode, cpu, round(usage.ru_maxrss / 1024)
        if time.monotonic() > deadline:
            return None, 0.0, 0.0
        time.sleep(0.05)


def kill(proc: subprocess.Popen) -> None:
    """Kill a sandbox (its process group; everything inside dies with bwrap)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        import psutil

        for child in psutil.Process(proc.pid).children(recursive=True):
            child.kill()
    except Exception:
        pass
    try:
        proc.kill()
        proc.wait(timeout=10)
    except Exception:
        pass


def _line_of(exc: BaseException, case: Case) -> str:
    """The line of the test case where ``exc`` was raised."""
    tb = exc.__traceback__
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == case.code.co_filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    lines = case.source.splitlines()
    if line is not None and 1 <= line <= len(lines):
        return lines[line - 1].strip()
    return ""


def _show(value) -> str:
    """A value in a line or two."""
    import numpy as np

    if isinstance(value, np.ndarray):
        text = np.array2string(value, precision=4, threshold=12, edgeitems=2)
        text = f"array of shape {value.shape}: {text}"
    else:
        text = repr(value)
    text = " ".join(text.split())
    return text if len(text) <= 160 else text[:157] + "..."


def _compared(line: str, ns: dict) -> list[str]:
    """``name = value`` for the operands of the failing assertion ``line`` that are
    plain references (a name, an attribute, an item: nothing is called again)."""
    import ast

    try:
        node = ast.parse(line.strip())
    except SyntaxError:
        return []
    if not node.body or not isinstance(node.body[0], ast.Assert):
        return []
    test = node.body[0].test
    if isinstance(test, ast.UnaryOp):
        test = test.operand
    if isinstance(test, ast.Compare):
        operands = [test.left, *test.comparators]
    elif isinstance(test, ast.Call):
        operands = list(test.args[:2])
    else:
        return []
    simple = (ast.Name, ast.Attribute, ast.Subscript, ast.Constant, ast.Load)
    out = []
    for operand in operands:
        if isinstance(operand, ast.Constant) or not all(
            isinstance(n, (*simple, ast.expr_context)) for n in ast.walk(operand)
        ):
            continue
        try:
            value = eval(compile(ast.Expression(operand), "<operand>", "eval"), ns)
        except Exception:
            continue
        out.append(f"{ast.unparse(operand)} = {_show(value)}")
    return out


def _message(exc: BaseException, case: Case, ns: dict | None = None) -> str:
    if isinstance(exc, AssertionError) and not getattr(exc, "from_student", None):
        text = str(exc).strip()
        line = _line_of(exc, case)
        if not text:
            text = f"this check failed: {line}"
        elif line:
            text = f"{text}\nfailed: {line}"
        values = _compared(line, ns) if ns is not None and line else []
        return "\n".join([text, *values])
    if getattr(exc, "from_student", None):
        return exc.from_student
    if isinstance(exc, TimeoutError):
        return str(exc)
    line = _line_of(exc, case)
    text = f"{type(exc).__name__}: {exc}".strip()
    return f"{text} (in: {line})" if line else text


def run_cases(assignment: Assignment, channels: dict, answers: dict) -> dict:
    """Run every test case; the per-question results. ``channels[True]`` is the
    sandbox without the library, ``answers[True]`` its answers, which stand for the
    names of :attr:`Assignment.absent` (``channels[False]`` and ``answers[False]``
    for the other names)."""
    cases: dict[str, list[dict]] = {q: [] for q, _ in assignment.questions}
    library: dict[str, str] = {}
    # names that the notebook defines with the library and not without it, or whose
    # last definition needed the library (what it used)
    needs = {
        name: ""
        for name in assignment.absent
        if answers[True].get(name, "missing") == "missing"
        and answers[False].get(name, "missing") != "missing"
    }
    for name, used in (answers.get("needs") or {}).items():
        if name in assignment.absent:
            needs[name] = str(used)[:100]
    limits = channels[False].limits
    for case in assignment.cases:
        passed, message = False, ""
        try:
            with case_clock(limits.case_cpu):
                passed = _run_case(assignment, case, channels, answers, needs)
        except CaseTimeout:
            message = (
                f"this test did not finish within {limits.case_cpu:g} s of CPU in "
                "the grader: an answer too costly to compare"
            )
        except LibraryUse as exc:
            where = f" ({exc.where})" if exc.where else ""
            message = (
                f"{exc.name} needs {current().library}{where}: this question asks "
                "you to write it yourself, without the library"
            )
            library.setdefault(case.question, message)
        except Stopped as exc:
            message = f"not tested: {exc}"
        except MemoryError:
            message = (
                "this test ran out of the grader's memory "
                f"({limits.tester_memory_mb} MB): an answer too large to compare"
            )
        except _Failed as exc:
            message = _message(exc.error, case, exc.ns)
        cases[case.question].append(
            {
                "hidden": case.hidden,
                "number": case.number,
                "points": case.points,
                "passed": passed,
                "message": message[:600],
            }
        )
    scores = {
        q: float(sum(c["points"] for c in cases[q] if c["passed"]))
        for q, _ in assignment.questions
    }
    return {"scores": scores, "cases": cases, "library": library}


class _Failed(Exception):
    """A test case failed with ``error`` (in namespace ``ns``)."""

    def __init__(self, error: BaseException, ns: dict):
        super().__init__(str(error))
        self.error, self.ns = error, ns


def _run_case(assignment, case, channels, answers, needs) -> bool:
    """Run one test case: True if it passed; raises what makes it fail."""
    ns = assignment.namespace()
    for name in assignment.names:
        absent = name in assignment.absent
        kind = answers[absent].get(name, "missing")
        if kind == "missing":
            ns.pop(name, None)
        elif kind == "callable":
            ns[name] = StudentFunction(channels[absent], name)
        else:
            try:
                ns[name] = wire.decode(kind)
            except wire.WireError as exc:
                ns[name] = wire.Opaque(f"unreadable value ({exc})")
    for name in sorted(set(needs) & case.names):
        raise LibraryUse(name, needs[name])
    try:
        with _quiet():
            exec(case.code, ns)
    except (LibraryUse, Stopped, CaseTimeout):
        raise
    except MemoryError as exc:
        if not getattr(exc, "from_student", None):
            raise  # the grader's own memory
        raise _Failed(exc, ns) from None
    except (Exception, SystemExit, KeyboardInterrupt) as exc:
        raise _Failed(exc, ns) from None
    return True


def _start(
    limits: sandbox.Limits, uid: int, unsafe: bool, absent: bool, group_name: str = ""
):
    """Start the harness in a sandbox (without the library if ``absent``) in a control
    group of its own where the system allows one: the process, its scratch folder
    (without a sandbox only) and its control group (or None). The group is named
    ``<tester pid>-<uid>`` (what :func:`sandbox.remove_stale_groups` reads) unless
    ``group_name`` is given."""
    cmd, env = sandbox.command(uid, limits, unsafe=unsafe, absent=absent)
    scratch = env.pop("GRADER_SCRATCH", None)
    group = sandbox.Cgroup.create(group_name or f"{os.getpid()}-{uid}", limits)
    tester = os.getpid()

    def prepare():
        # The sandbox's first process dies with this tester from before its first
        # instruction: bubblewrap's own --die-with-parent asks only once it runs,
        # and a tester killed before that (a Ctrl-C just after the start) left its
        # sandbox running (bubblewrap's issue 633). The request survives the exec
        # of bubblewrap, which is not set-user-ID.
        _die_with_parent(tester)
        _restore_memory()
        if group is not None:
            group.enter()

    proc = subprocess.Popen(
        cmd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=scratch,
        start_new_session=True,
        preexec_fn=prepare,
    )
    return proc, scratch, group


def _end(proc: subprocess.Popen, scratch: str | None, group) -> None:
    try:
        proc.stdin.close()
    except OSError:
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
    kill(proc)
    if group is not None:
        group.remove()
    if scratch:
        import shutil

        shutil.rmtree(scratch, ignore_errors=True)


def _executed(channel: Channel) -> dict:
    """The harness's report of the notebook's run."""
    first = channel.recv()
    if not isinstance(first, dict) or first.get("op") != "executed":
        message = first.get("message", "") if isinstance(first, dict) else ""
        channel.stop(f"the notebook could not be run: {str(message)[-300:]}")
    channel.executed = True
    return first


def _answers(first: dict, names: list[str]) -> dict:
    answers = {}
    raw = first.get("answers") if isinstance(first.get("answers"), dict) else {}
    for name in names:
        value = raw.get(name, {"__t": "missing"})
        tag = value.get("__t") if isinstance(value, dict) else None
        answers[name] = tag if tag in ("missing", "callable") else value
    return answers


def _refuse_copies(assignment: Assignment, tested: dict, flags: list[str]) -> None:
    """No points for the implement and derive questions of a notebook that holds a
    copy of the library's code under another name (the scan's finding)."""
    copies = [
        f for f in flags if current().library and f.startswith(scan.library_copy())
    ]
    if not copies:
        return
    message = (
        f"the notebook holds {copies[0]}: this question asks you to write it "
        "yourself, without the library"
    )
    for q, _ in assignment.questions:
        if assignment.implement.get(q) or assignment.derive.get(q):
            tested["scores"][q] = 0.0
            tested["library"][q] = message
            for case in tested["cases"][q]:
                case.update(passed=False, message=message)


def grade(
    assignment: Assignment,
    cells: list[str],
    limits: sandbox.Limits,
    *,
    uid: int,
    unsafe: bool = False,
) -> dict:
    """Grade the code cells of one notebook; a plain-data result.

    The notebook runs in a sandbox with the library under test and, when the assignment
    has "implement" or "derive" questions, at the same time in a second one without it
    (:func:`sandbox.command`), whose answers stand for those questions' names.

    Keys: ``status`` (graded, timeout or failed; the caller adds flagged),
    ``reason``, ``flags`` (findings of the scan), ``scores``, ``cases``,
    ``library`` (questions whose answers needed the library), ``cell_errors`` and
    ``seconds``.
    """
    start = time.monotonic()
    result = {
        "status": "graded",
        "reason": "",
        "flags": scan.scan_cells(cells),
        "scores": {q: 0.0 for q, _ in assignment.questions},
        "cases": {q: [] for q, _ in assignment.questions},
        "library": {},
        "cell_errors": [],
    }
    started = {False: _start(limits, uid, unsafe, absent=False)}
    if assignment.absent:
        started[True] = _start(limits, sandbox.absent_uid(uid), unsafe, absent=True)
    channels = {
        k: Channel(proc, start + limits.wall, limits, group)
        for k, (proc, _, group) in started.items()
    }
    task = {"cells": cells, "names": assignment.names, "cpu_cells": limits.cpu}
    watch = CpuWatch(list(channels.values())).__enter__()
    try:
        for absent, channel in channels.items():
            # without the library, its constants (data, no code) are still there
            channel.send({**task, "constants": library_constants()} if absent else task)
        first = _executed(channels[False])
        errors = first.get("errors") or []
        result["cell_errors"] = [
            f"cell {int(e.get('cell', 0)) + 1}: {e.get('type')}: "
            f"{str(e.get('message', ''))[:150]}"
            for e in errors[:20]
            if isinstance(e, dict) and e.get("type") != "GradingTimeout"
        ]
        if first.get("ran_out"):
            result["status"] = "timeout"
            result["reason"] = (
                f"the notebook did not finish within {limits.cpu:g} s of CPU; "
                "the cells after that point did not run"
            )
        answers = {False: _answers(first, assignment.names), True: {}}
        if True in channels:
            try:
                executed = _executed(channels[True])
                answers[True] = _answers(executed, assignment.names)
                if isinstance(executed.get("needs"), dict):
                    answers["needs"] = executed["needs"]
            except Stopped:
                pass  # its questions are "not tested", with the reason
        tested = run_cases(assignment, channels, answers)
        _refuse_copies(assignment, tested, result["flags"])
        result.update(
            scores=tested["scores"], cases=tested["cases"], library=tested["library"]
        )
        for absent, channel in channels.items():
            if channel.stopped and result["status"] == "graded":
                where = f" (its run without {current().library})" if absent else ""
                result["status"] = channel.stopped_kind
                result["reason"] = (
                    f"{channel.stopped}{where}; the tests after that failed"
                )
    except Stopped as exc:
        result["status"] = exc.kind
        result["reason"] = f"{exc}; scored 0"
        result["scores"] = {q: 0.0 for q, _ in assignment.questions}
    finally:
        watch.__exit__()
        for proc, scratch, group in started.values():
            _end(proc, scratch, group)
    if result["cell_errors"] and result["status"] == "graded":
        first_error = result["cell_errors"][0]
        result["reason"] = (
            f"{len(result['cell_errors'])} cell(s) raised an error, first: "
            f"{first_error}"
        )
    result["seconds"] = time.monotonic() - start
    return result


# ----------------------------------------------------------------- worker process


def _prctl():
    """The C library's ``prctl``, or None where there is none; looked up before a
    fork, so that the child only calls it."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except Exception:
        return None


_PRCTL = _prctl()


def _die_with_parent(parent: int) -> None:
    """Ask the kernel to kill this process when its parent dies, and exit now if
    the parent (pid ``parent``) is already gone: the request concerns the parent
    of the moment it is made, so the check after it leaves no gap."""
    if _PRCTL is not None:
        _PRCTL(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:
        os._exit(1)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    master, parent = Path(args[0]), int(args[1])
    configure(Settings.from_json(args[2]) if len(args) > 2 else Settings())
    _die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the grading process decides
    sandbox.remove_stale_groups()  # of testers killed before they could
    chan_in, chan_out = os.dup(0), os.dup(1)
    os.dup2(os.open(os.devnull, os.O_RDWR), 0)
    os.dup2(2, 1)  # a stray print must not corrupt the channel
    try:
        assignment = Assignment(master)
        assignment.namespace()
        wire.write_frame(chan_out, {"op": "ready", "names": assignment.names})
    except Exception:
        wire.write_frame(
            chan_out, {"op": "error", "message": traceback.format_exc()[-3000:]}
        )
        return 1
    while True:
        try:
            task = wire.read_frame(chan_in)
        except EOFError:
            return 0
        try:
            limits = sandbox.Limits(**task["limits"])
            limit_memory(limits.tester_memory_mb)
            result = grade(
                assignment,
                list(task["cells"]),
                limits,
                uid=int(task["uid"]),
                unsafe=bool(task.get("unsafe")),
            )
        except Exception:
            result = {
                "status": "failed",
                "reason": "the grader itself failed: "
                + traceback.format_exc().strip().splitlines()[-1][:300],
                "trace": traceback.format_exc()[-3000:],
            }
        result["id"] = task.get("id")
        wire.write_frame(chan_out, result)


if __name__ == "__main__":
    sys.exit(main())
