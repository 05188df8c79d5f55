"""``python -m tools.coursework grade``: grade a folder of submissions (``make grade``).

Each notebook runs in its own sandbox and is tested from outside it (:mod:`.tester`);
this module finds the submissions, runs several testers at once and keeps the
results safe:

- **one row per file given**: ``<student>.ipynb`` files (any case of the
  extension) and one folder per student (``alice/<anything>.ipynb``, as hubs
  collect them); a file that cannot be graded (not a notebook, a broken link, a
  folder named like a notebook, an empty notebook) gets a row with the reason;
- **nothing lost**: the gradebook is merged, not overwritten (autograded columns
  are updated, every other column, such as the written question's, is kept, and so
  are the rows of students not in this run); every write is atomic; earlier
  gradebooks and feedback are kept, timestamped, in ``history/``;
- **one run at a time**: a lock makes a second run of the same assignment refuse
  (or wait, with ``--wait``);
- **resumable**: each result is saved as soon as it is known, keyed by the
  notebook's content hash and the grader's; a run that was interrupted (Ctrl-C,
  or killed) continues where it stopped, and unchanged notebooks are not regraded;
- **Ctrl-C** stops within seconds, kills every sandbox and writes what is done;
- a progress line with an estimate of the time left.

Spreadsheet formulas are neutralised: a cell that begins with ``=``, ``+``, ``-``,
``@``, a tab or a carriage return gets a leading ``'``.
"""

from __future__ import annotations

import atexit
import csv
import datetime
import fcntl
import hashlib
import io
import json
import os
import queue
import re
import select
import signal
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from . import sandbox, wire
from .common import BUILD, GRADES, ROOT, CourseworkError, fmt
from .masters import master_paths

STATUS_HELP = {
    "graded": "graded",
    "flagged": "graded, but the code does something a human should look at",
    "timeout": "ran out of its CPU time (or never finished); tests after that failed",
    "failed": "the notebook's process ended early, or the grader failed",
    "invalid": "not a notebook that can be graded (the reason says why)",
    "empty": "a notebook without code",
}
DANGEROUS = ("=", "+", "-", "@", "\t", "\r")
MAX_NOTEBOOK = 50 * 2**20  # bytes
# what a regrade must notice: the tests, the grader and the library they call
GRADER_FILES = ("tester.py", "harness.py", "wire.py", "scan.py", "sandbox.py")


@dataclass
class Grade:
    """The grade of one file of the folder."""

    student: str
    status: str
    reason: str = ""
    scores: dict[str, float] = field(default_factory=dict)
    cases: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    flags: list[str] = field(default_factory=list)
    library: dict[str, str] = field(default_factory=dict)
    file: str = ""
    seconds: float = 0.0

    @property
    def total(self) -> float:
        return float(sum(self.scores.values()))


@dataclass
class Entry:
    """A file of the submissions folder: a notebook to grade, or why not."""

    student: str
    path: Path
    rel: str
    problem: str = ""  # status and reason when the file cannot be graded
    reason: str = ""


# ------------------------------------------------------------------ submissions


def _is_notebook_name(name: str) -> bool:
    return name.lower().endswith(".ipynb")


def _hidden(name: str) -> bool:
    return name.startswith(".") or name == "__pycache__"


def collect(folder: Path, slug: str) -> tuple[list[Entry], int]:
    """Every file of ``folder`` as an :class:`Entry`, and the number of hidden
    files and folders (``.ipynb_checkpoints``, ``.DS_Store``) passed over."""
    entries, hidden = [], 0
    for path in sorted(folder.iterdir(), key=lambda p: p.name):
        name = path.name
        if _hidden(name):
            hidden += 1
            continue
        if path.is_symlink() and not path.exists():
            entries.append(
                Entry(Path(name).stem, path, name, "invalid", "a broken link")
            )
        elif path.is_dir():
            if _is_notebook_name(name):
                entries.append(
                    Entry(
                        name[: -len(".ipynb")],
                        path,
                        name,
                        "invalid",
                        "a folder named like a notebook, not a notebook",
                    )
                )
                continue
            notebooks = sorted(
                p
                for p in path.rglob("*")
                if _is_notebook_name(p.name)
                and not any(_hidden(part) for part in p.relative_to(path).parts)
            )
            if not notebooks:
                entries.append(
                    Entry(name, path, name, "invalid", "no notebook in the folder")
                )
                continue
            chosen = notebooks[0]
            if len(notebooks) > 1:
                named = [p for p in notebooks if p.name.lower() == f"{slug}.ipynb"]
                chosen = named[0] if named else notebooks[0]
            for nb in notebooks:
                rel = nb.relative_to(folder).as_posix()
                if nb == chosen:
                    entries.append(Entry(name, nb, rel))
                else:
                    entries.append(
                        Entry(
                            f"{name}/{nb.relative_to(path).as_posix()}",
                            nb,
                            rel,
                            "invalid",
                            f"another notebook in {name}/; graded: {chosen.name}",
                        )
                    )
        elif _is_notebook_name(name):
            entries.append(Entry(name[: -len(".ipynb")], path, name))
        else:
            entries.append(
                Entry(
                    path.stem or name,
                    path,
                    name,
                    "invalid",
                    f"not a notebook ({name})",
                )
            )
    # two files of one student name (alice.ipynb and alice/): tell them apart
    seen: dict[str, int] = {}
    for e in entries:
        seen[e.student] = seen.get(e.student, 0) + 1
    for e in entries:
        if seen[e.student] > 1:
            e.student = f"{e.student} ({e.rel})"
    return entries, hidden


def read_notebook(path: Path) -> tuple[list[str] | None, str, str]:
    """The code cells of a notebook as Jupyter reads it, or None, a status and a
    reason. Accepts a byte-order mark, fields it does not know, any kernel of the
    Python language, nbformat 3 and 4."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return None, "invalid", f"cannot read the file: {exc.strerror or exc}"
    if len(raw) > MAX_NOTEBOOK:
        return None, "invalid", f"the file is larger than {MAX_NOTEBOOK >> 20} MB"
    if not raw.strip():
        return None, "invalid", "the file is empty (0 bytes of notebook JSON)"
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None, "invalid", "not a notebook: the file is not UTF-8 text"
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        return None, "invalid", f"not a notebook: broken JSON ({str(exc)[:60]})"
    if not isinstance(data, dict):
        return None, "invalid", "not a notebook: the JSON is not an object"
    if "worksheets" in data and "cells" not in data:  # nbformat 3
        cells = []
        for ws in data.get("worksheets") or []:
            for c in (ws or {}).get("cells") or []:
                if isinstance(c, dict) and c.get("cell_type") == "code":
                    cells.append({"cell_type": "code", "source": c.get("input", "")})
    elif isinstance(data.get("cells"), list):
        cells = data["cells"]
    else:
        return None, "invalid", "not a notebook: no list of cells"
    meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    kernel = meta.get("kernelspec") if isinstance(meta.get("kernelspec"), dict) else {}
    info = meta.get("language_info")
    info = info if isinstance(info, dict) else {}
    lang = str(kernel.get("language") or info.get("name") or "python")
    if "python" not in lang.lower():
        return None, "invalid", f"a notebook in {lang[:30]}, not in Python"
    code = []
    for cell in cells:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list):
            source = "".join(s for s in source if isinstance(s, str))
        if not isinstance(source, str):
            continue
        code.append(source)
    if not any(s.strip() for s in code):
        return None, "empty", "the notebook has no code"
    return code, "", ""


# ------------------------------------------------------------------ the testers


class Worker:
    """A tester process (:mod:`.tester`) that grades one notebook at a time."""

    def __init__(self, master: Path, unsafe: bool):
        self.master, self.unsafe = master, unsafe
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        self.spawn()
        self.wait_ready()

    def spawn(self) -> None:
        """Start the tester process (call from a thread that outlives it: the
        kernel kills the tester when the thread that started it ends)."""
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [str(ROOT), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
        )
        env.setdefault("MPLBACKEND", "Agg")
        env["OPENBLAS_NUM_THREADS"] = env["OMP_NUM_THREADS"] = "1"
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tools.coursework.tester",
                str(self.master),
                str(os.getpid()),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=ROOT,
            env=env,
            start_new_session=True,  # Ctrl-C reaches the grading process only
        )

    def wait_ready(self) -> None:
        ready = self._recv(600)
        if not isinstance(ready, dict) or ready.get("op") != "ready":
            message = ready.get("message", "") if isinstance(ready, dict) else ready
            self.stop()
            raise CourseworkError(f"the tester did not start:\n{message}")

    def _recv(self, timeout: float):
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], min(left, 1.0))
            if ready:
                try:
                    return wire.read_frame(fd)
                except (EOFError, OSError, wire.WireError) as exc:
                    return f"the tester stopped: {exc}"

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def grade(self, task: dict, timeout: float) -> dict:
        if not self.alive:
            self.start()
        try:
            wire.write_frame(self.proc.stdin.fileno(), task)
        except OSError as exc:
            self.stop()
            return {"status": "failed", "reason": f"the tester stopped: {exc}"}
        reply = self._recv(timeout)
        if not isinstance(reply, dict):
            self.stop()  # hung or crashed: the next task starts a fresh one
            why = reply or f"no result after {timeout:g} s"
            kind = "timeout" if reply is None else "failed"
            return {"status": kind, "reason": str(why)}
        return reply

    def stop(self) -> None:
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        self.proc = None


# ------------------------------------------------------------------ files


def atomic_write(path: Path, data: str | bytes) -> None:
    """Write a file so that it is either the old or the new content, never a mix."""
    raw = data.encode() if isinstance(data, str) else data
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as fh:
        fh.write(raw)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def neutralise(value: str) -> str:
    """A CSV cell that a spreadsheet shows as text, never runs as a formula."""
    return "'" + value if value.startswith(DANGEROUS) else value


def restore(value: str) -> str:
    """The text of a cell written by :func:`neutralise`."""
    if value.startswith("'") and value[1:].startswith(DANGEROUS):
        return value[1:]
    return value


def safe_name(student: str) -> str:
    """A file name for a student's feedback."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", student).strip("_") or "student"
    return "_" + name if name.startswith(".") else name


class Lock:
    """An exclusive lock of an assignment's grading folder (released by the
    kernel if the process dies)."""

    def __init__(self, path: Path, wait: bool):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.fh = open(path, "a+")
        flags = fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB)
        try:
            fcntl.flock(self.fh, flags)
        except BlockingIOError:
            self.fh.seek(0)
            holder = self.fh.read().strip() or "another process"
            self.fh.close()
            raise CourseworkError(
                f"another grading of this assignment is running ({holder}): wait "
                "for it to finish, or pass --wait to queue behind it"
            ) from None
        self.fh.seek(0)
        self.fh.truncate()
        self.fh.write(f"pid {os.getpid()}\n")
        self.fh.flush()

    def release(self) -> None:
        fcntl.flock(self.fh, fcntl.LOCK_UN)
        self.fh.close()


def grader_digest(master: Path, limits: sandbox.Limits) -> str:
    """What a grade depends on besides the notebook: the master, the grader's
    code, attnlib and the limits."""
    h = hashlib.sha256()
    here = Path(__file__).resolve().parent
    files = [master] + [here / f for f in GRADER_FILES]
    files += sorted((ROOT / "attnlib").rglob("*.py"))
    for p in files:
        h.update(p.name.encode() + b"\0" + p.read_bytes())
    h.update(json.dumps(asdict(limits), sort_keys=True).encode())
    return h.hexdigest()


# ------------------------------------------------------------------ gradebook


def _timestamp() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def write_gradebook(
    path: Path, grades: list[Grade], questions: list[dict], history: Path
) -> None:
    """Merge ``grades`` into the gradebook at ``path``.

    The autograded columns (questions, total, status, reason, file) of the students
    graded are replaced; every other column (the written question's, a column a
    teaching assistant added) and every other row are kept. The previous file is
    kept in ``history`` when it changes.
    """
    auto = [q["name"] for q in questions if not q["manual"]]
    ours = [q["name"] for q in questions] + ["total", "status", "reason", "file"]
    header, rows = ["student", *ours], {}
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    if old:
        reader = csv.DictReader(io.StringIO(old))
        for name in reader.fieldnames or []:
            if name and name not in header:
                header.append(name)
        for row in reader:
            key = restore(row.get("student") or "")
            if key:
                rows[key] = {k: v for k, v in row.items() if k is not None}
    for g in grades:
        row = rows.setdefault(g.student, {})
        row["student"] = g.student
        for q in auto:
            row[q] = fmt(g.scores.get(q, 0.0))
        row.update(total=fmt(g.total), status=g.status, reason=g.reason, file=g.file)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    for key in sorted(rows):
        row = rows[key]
        writer.writerow([neutralise(restore(str(row.get(c) or ""))) for c in header])
    new = out.getvalue()
    if new != old:
        if old:
            atomic_write(history / f"gradebook-{_timestamp()}.csv", old)
        atomic_write(path, new)


def _points(x: float) -> str:
    return f"{fmt(x)} point" + ("" if x == 1 else "s")


def feedback(info: dict, g: Grade) -> str:
    """The student's feedback (Markdown): scores, the public tests' messages,
    hidden tests by points only."""
    auto = [q for q in info["questions"] if not q["manual"]]
    manual = [q for q in info["questions"] if q["manual"]]
    possible = sum(q["points"] for q in auto)
    lines = [f"# {info['title']}, feedback for {g.student}", ""]
    if g.status in ("invalid", "empty"):
        return "\n".join(
            lines
            + [
                f"**Not graded ({g.status})**: {g.reason}.",
                "",
                f"Autograded score: 0 / {fmt(possible)}.",
                "",
            ]
        )
    lines.append(f"Autograded score: **{fmt(g.total)} / {fmt(possible)}**.")
    if manual:
        names = ", ".join(f"`{q['name']}` ({_points(q['points'])})" for q in manual)
        lines.append(f"Graded by hand, separately: {names}.")
    if g.status in ("timeout", "failed"):
        lines += ["", f"**{g.status}**: {g.reason}."]
    elif g.reason:
        lines += ["", f"Note: {g.reason}."]
    if g.status == "flagged":
        lines += [
            "",
            "Your notebook will be looked at by a person before the score is final.",
        ]
    lines += ["", "| question | score | points |", "| --- | --- | --- |"]
    for q in auto:
        score = g.scores.get(q["name"], 0.0)
        lines.append(f"| `{q['name']}` | {fmt(score)} | {fmt(q['points'])} |")
    for q in auto:
        name = q["name"]
        cases = g.cases.get(name, [])
        lines += ["", f"## {name}: {fmt(g.scores.get(name, 0.0))} / {fmt(q['points'])}"]
        if name in g.library:
            lines += ["", f"**{g.library[name]}.**"]
        public = [c for c in cases if not c["hidden"]]
        hidden = [c for c in cases if c["hidden"]]
        for c in public:
            verdict = "passed" if c["passed"] else "failed"
            lines += [
                "",
                f"Public test {c['number']} ({_points(c['points'])}): {verdict}.",
            ]
            if not c["passed"] and c.get("message"):
                lines += ["", "```text", c["message"], "```"]
        if hidden:
            got = sum(c["points"] for c in hidden if c["passed"])
            tot = sum(c["points"] for c in hidden)
            npass = sum(c["passed"] for c in hidden)
            lines += [
                "",
                f"Hidden tests: {fmt(got)} / {_points(tot)} "
                f"({npass} of {len(hidden)} passed).",
            ]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ grading


class Progress:
    """One line per graded notebook with the time left, estimated from the pace
    so far (on standard error)."""

    def __init__(self, total: int, possible: float):
        self.total, self.done, self.possible = total, 0, possible
        self.start = time.monotonic()

    def update(self, g: Grade) -> None:
        self.done += 1
        elapsed = time.monotonic() - self.start
        left = elapsed / self.done * (self.total - self.done)
        score = f"{fmt(g.total)}/{fmt(self.possible)}"
        print(
            f"[{self.done:>{len(str(self.total))}}/{self.total}] "
            f"{g.student[:28]:28s} {score:>9s}  {g.status:8s} "
            f"{_clock(elapsed)} elapsed, about {_clock(left)} left",
            file=sys.stderr,
            flush=True,
        )


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 60}:{seconds % 60:02d}"


def _grade_from(entry: Entry, result: dict, questions: list[dict]) -> Grade:
    """A :class:`Grade` from a tester's plain-data result (validated)."""
    auto = {q["name"]: float(q["points"]) for q in questions if not q["manual"]}
    status = str(result.get("status", "failed"))
    if status not in STATUS_HELP:
        status = "failed"
    scores = {}
    raw_scores = result.get("scores") if isinstance(result.get("scores"), dict) else {}
    for q, pts in auto.items():
        try:
            v = float(raw_scores.get(q, 0.0))
        except (TypeError, ValueError):
            v = 0.0
        scores[q] = min(max(v, 0.0), pts)
    flags = [str(f)[:200] for f in result.get("flags") or []][:20]
    reason = str(result.get("reason") or "")[:500]
    if flags:
        what = "; ".join(flags[:5]) + ("; ..." if len(flags) > 5 else "")
        reason = f"flagged: {what}" + (f"; {reason}" if reason else "")
        if status == "graded":
            status = "flagged"
    cases = result.get("cases") if isinstance(result.get("cases"), dict) else {}
    library = result.get("library") if isinstance(result.get("library"), dict) else {}
    return Grade(
        entry.student,
        status,
        reason,
        scores,
        {q: list(cases.get(q) or []) for q in auto},
        flags,
        {str(k): str(v) for k, v in library.items()},
        entry.rel,
        float(result.get("seconds") or 0.0),
    )


def grade(
    slug: str,
    folder: Path,
    *,
    build_root: Path = BUILD,
    out: Path | None = None,
    timeout: float = 120.0,
    jobs: int | None = None,
    unsafe: bool = False,
    wait: bool = False,
    limits: sandbox.Limits | None = None,
    master: Path | None = None,
) -> list[Grade]:
    """Grade every file of ``folder``; merge the gradebook and write feedback.

    Parameters
    ----------
    slug : str
        The assignment (a master's file stem), already built.
    folder : Path
        Submissions: ``<student>.ipynb`` files, or one folder per student.
    build_root : Path
        Where the assignment was built (``_build/assignments``).
    out : Path, optional
        Output folder (default ``_build/grades/<slug>``): ``gradebook.csv``,
        ``feedback/<student>.md`` (for the students), ``details/<student>.json``
        (every test's message, hidden ones included: for instructors),
        ``history/`` and the saved state that lets a run resume.
    timeout : float
        CPU seconds for running one notebook (and as many for its tests' calls).
    jobs : int, optional
        Notebooks graded at once (default: the number of CPUs).
    unsafe : bool
        Grade without a sandbox when bubblewrap is missing (trusted notebooks only).
    wait : bool
        Wait for another run of the same assignment instead of refusing.
    limits : sandbox.Limits, optional
        All limits (``timeout`` sets their ``cpu``).
    master : Path, optional
        The assignment's master (default ``book/assignments/<slug>.md``).

    Returns
    -------
    list of Grade
        One per file of the folder graded or reused in this run, sorted by student.
    """
    built = build_root / slug
    if not (built / "questions.json").exists():
        raise CourseworkError(
            f"no build of {slug!r} at {built}: run `make assignments` "
            f"(masters: {sorted(master_paths())})"
        )
    masters = master_paths()
    if master is None and slug not in masters:
        raise CourseworkError(f"no master for {slug!r} (have: {sorted(masters)})")
    master = Path(master) if master is not None else masters[slug]
    folder = Path(folder)
    if not folder.is_dir():
        raise CourseworkError(f"SUBMISSIONS must be a folder of notebooks: {folder}")
    if not timeout > 0:
        raise CourseworkError(f"timeout must be > 0 seconds, got {timeout}")
    limits = limits or sandbox.Limits(cpu=float(timeout))
    sandbox.require(unsafe)
    entries, hidden = collect(folder, slug)
    if not entries:
        raise CourseworkError(f"no file to grade in {folder}")
    info = json.loads((built / "questions.json").read_text())
    out = Path(out) if out is not None else GRADES / slug
    lock = Lock(out / ".lock", wait)
    try:
        return _grade_locked(
            slug, master, entries, hidden, info, out, limits, jobs, unsafe
        )
    finally:
        lock.release()


def _grade_locked(slug, master, entries, hidden, info, out, limits, jobs, unsafe):
    questions = info["questions"]
    auto = [q for q in questions if not q["manual"]]
    possible = sum(q["points"] for q in auto)
    state_path = out / ".state.json"
    digest = grader_digest(master, limits)
    try:
        state = json.loads(state_path.read_text())
        if state.get("grader") != digest:
            state = {"grader": digest, "results": {}}
    except (OSError, ValueError):
        state = {"grader": digest, "results": {}}
    results: dict[str, dict] = state["results"]
    grades: dict[str, Grade] = {}
    todo: list[tuple[Entry, list[str], str]] = []
    for e in entries:
        if e.problem:
            grades[e.rel] = Grade(e.student, e.problem, e.reason, file=e.rel)
            continue
        cells, status, reason = read_notebook(e.path)
        if cells is None:
            grades[e.rel] = Grade(e.student, status, reason, file=e.rel)
            continue
        sha = hashlib.sha256(e.path.read_bytes()).hexdigest()
        saved = results.get(e.rel)
        if saved and saved.get("sha256") == sha:
            grades[e.rel] = _grade_from(e, saved["result"], questions)
        else:
            todo.append((e, cells, sha))
    reused = len(grades) - sum(bool(e.problem) for e in entries)
    workers = max(1, min(jobs or os.cpu_count() or 1, len(todo) or 1))
    print(
        f"grading {len(todo)} of {len(entries)} file(s) of {slug} with {workers} "
        f"worker(s), at most {limits.cpu:g} s of CPU each"
        + (f"; {reused} unchanged since the last run" if reused > 0 else "")
        + (f"; {hidden} hidden file(s) passed over" if hidden else ""),
        file=sys.stderr,
    )
    if unsafe and sandbox.bwrap() is None:
        print("WARNING: no sandbox (--unsafe-no-sandbox)", file=sys.stderr)
    progress = Progress(len(todo), possible)
    interrupted = False
    if todo:
        interrupted = _run(
            master,
            todo,
            limits,
            workers,
            unsafe,
            progress,
            grades,
            results,
            state,
            state_path,
            questions,
        )
    ordered = sorted(grades.values(), key=lambda g: (g.student, g.file))
    _write_outputs(out, info, ordered)
    _summary(ordered, possible, out, questions, interrupted)
    if interrupted:
        raise KeyboardInterrupt
    return ordered


def _run(
    master,
    todo,
    limits,
    workers,
    unsafe,
    progress,
    grades,
    results,
    state,
    state_path,
    questions,
) -> bool:
    """Grade ``todo`` with ``workers`` testers; True if interrupted."""
    tasks: queue.Queue = queue.Queue()
    for item in todo:
        tasks.put(item)
    done: queue.Queue = queue.Queue()
    stop = threading.Event()
    pool: list[Worker] = []

    def work(worker: Worker, slot: int):
        try:
            while not stop.is_set():
                try:
                    entry, cells, sha = tasks.get_nowait()
                except queue.Empty:
                    return
                task = {
                    "id": entry.rel,
                    "cells": cells,
                    "limits": asdict(limits),
                    "uid": sandbox.UID_BASE + (os.getpid() * 8 + slot) % 10**8,
                    "unsafe": unsafe,
                }
                try:
                    result = worker.grade(task, limits.wall + 120)
                except CourseworkError as exc:
                    result = {"status": "failed", "reason": str(exc)[-300:]}
                if stop.is_set():
                    return
                done.put((entry, sha, result))
        except BaseException:
            worker.stop()
            raise

    previous = signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    interrupted = False
    threads: list[threading.Thread] = []
    try:
        pool.extend(_workers(master, unsafe, workers))
        threads = [
            threading.Thread(target=work, args=(w, i), daemon=True)
            for i, w in enumerate(pool)
        ]
        for t in threads:
            t.start()
        remaining = len(todo)
        while remaining:
            try:
                entry, sha, result = done.get(timeout=0.5)
            except queue.Empty:
                if not any(t.is_alive() for t in threads) and done.empty():
                    break
                continue
            remaining -= 1
            g = _grade_from(entry, result, questions)
            grades[entry.rel] = g
            results[entry.rel] = {"sha256": sha, "result": result}
            atomic_write(state_path, json.dumps(state))
            progress.update(g)
    except KeyboardInterrupt:
        interrupted = True
        stop.set()
        for w in pool:
            w.stop()
        print(
            "\ninterrupted: writing what is graded; run the same command again "
            "to grade the rest",
            file=sys.stderr,
        )
    finally:
        signal.signal(signal.SIGTERM, previous)
        stop.set()
        if interrupted:
            _stop_workers()
    return interrupted


# Testers stay up between runs of one process (their imports and the master's setup
# are paid once); each dies with this process at the latest.
_POOL: dict[tuple[str, bool], list[Worker]] = {}


def _workers(master: Path, unsafe: bool, count: int) -> list[Worker]:
    """``count`` ready testers of ``master``, started from this thread."""
    pool = _POOL.setdefault((str(Path(master).resolve()), unsafe), [])
    pool[:] = [w for w in pool if w.alive]
    new = [Worker(master, unsafe) for _ in range(count - len(pool))]
    for w in new:
        w.spawn()
    try:
        for w in new:
            w.wait_ready()
    except BaseException:
        for w in new:
            w.stop()
        raise
    pool.extend(new)
    return pool[:count]


def _stop_workers() -> None:
    for pool in _POOL.values():
        for w in pool:
            w.stop()
        pool.clear()


atexit.register(_stop_workers)


def _write_outputs(out: Path, info: dict, grades: list[Grade]) -> None:
    history = out / "history"
    write_gradebook(out / "gradebook.csv", grades, info["questions"], history)
    stamp = _timestamp()
    for g in grades:
        name = safe_name(g.student)
        path = out / "feedback" / f"{name}.md"
        text = feedback(info, g)
        if path.exists():
            old = path.read_text(encoding="utf-8")
            if old == text:
                continue
            atomic_write(history / "feedback" / f"{name}-{stamp}.md", old)
        atomic_write(path, text)
        details = {
            "student": g.student,
            "file": g.file,
            "status": g.status,
            "reason": g.reason,
            "flags": g.flags,
            "scores": g.scores,
            "cases": g.cases,
        }
        atomic_write(out / "details" / f"{name}.json", json.dumps(details, indent=1))


def _summary(grades, possible, out, questions, interrupted) -> None:
    print(f"{'student':28s} {'total':>9s}  status")
    for g in grades:
        score = f"{fmt(g.total)}/{fmt(possible)}"
        print(f"{g.student[:28]:28s} {score:>9s}  {g.status}", end="")
        print(f"  ({g.reason[:100]})" if g.reason else "")
    counts = {s: sum(g.status == s for g in grades) for s in STATUS_HELP}
    print(", ".join(f"{n} {s}" for s, n in counts.items() if n))
    print(f"gradebook: {out / 'gradebook.csv'}")
    print(f"feedback:  {out / 'feedback'}/<student>.md")
    manual = [q["name"] for q in questions if q["manual"]]
    if manual:
        print(f"graded by hand (kept as you fill them in): {', '.join(manual)}")
    if interrupted:
        print("interrupted: run the same command again to grade the rest")
