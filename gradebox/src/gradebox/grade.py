"""``gradebox grade``: grade a folder of submissions against an assignment's master.

Each notebook runs in its own sandbox and is tested from outside it (:mod:`.tester`);
this module runs several testers at once (:mod:`.workers`) over the submissions
(:mod:`.submissions`) with the settings of a :class:`GradingRun`, and keeps the
results safe, in the gradebook (:mod:`.gradebook`), the students' feedback
(:mod:`.feedback`) and the terminal (:mod:`.console`):

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

import fcntl
import hashlib
import json
import os
import queue
import signal
import sys
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import sandbox
from .common import GradingError, Settings, configure, current
from .masters import parse_master


from .console import Progress, _summary  # noqa: F401
from .grades import Grade  # noqa: F401
from .feedback import (  # noqa: F401
    STATUS_HELP,
    _points,
    feedback,
    file_names,
    md_code,
    md_text,
    safe_name,
)
from .gradebook import (  # noqa: F401
    DANGEROUS,
    Gradebook,
    Unattached,
    _check_merge,
    _timestamp,
    atomic_write,
    neutralise,
    read_gradebook,
    restore,
    write_gradebook,
)
from .submissions import (  # noqa: F401
    LINK_REFUSED,
    MAX_NOTEBOOK,
    Entry,
    _file_kind,
    _hidden,
    _is_notebook_name,
    collect,
    parse_notebook,
    printable,
    read_limited,
    read_notebook,
)
from .workers import Worker, _stop_workers, _workers  # noqa: F401

# results that are never reused: the next run grades the notebook again. A
# timeout is reused like a score (a notebook that sleeps would otherwise hold a
# worker for its whole time limit at every run): --force or --regrade <student>
# grades it again
UNCACHED = ("failed",)


# what a regrade must notice: the tests, the grader, the settings and the library
# they call
GRADER_FILES = ("tester.py", "harness.py", "wire.py", "scan.py", "sandbox.py")


class Incomplete(GradingError):
    """A run that left notebooks without a result (``grades`` has them as failed)."""

    def __init__(self, message: str, grades: list):
        super().__init__(message)
        self.grades = grades


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
            raise GradingError(
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
    code, the settings, the library under test and the limits."""
    h = hashlib.sha256()
    here = Path(__file__).resolve().parent
    files = [master] + [here / f for f in GRADER_FILES]
    package = current().package()
    if package is not None:
        files += sorted(package.rglob("*.py"))
    for p in files:
        h.update(p.name.encode() + b"\0" + p.read_bytes())
    h.update(json.dumps(asdict(limits), sort_keys=True).encode())
    h.update(current().to_json().encode())
    return h.hexdigest()


def _grade_from(
    entry: Entry, result: dict, questions: list[dict], sha: str = ""
) -> Grade:
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
    flags = [printable(f)[:200] for f in result.get("flags") or []][:20]
    reason = printable(result.get("reason") or "")[:500]
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
        sha,
    )


def assignment_info(master: Path) -> dict:
    """What the gradebook and the feedback need of an assignment (its title and
    its questions' names, points and manual flags), read from its master: the
    ``questions.json`` a build writes beside otter's output holds the same."""
    m = parse_master(Path(master))
    return {
        "slug": m.slug,
        "title": m.title,
        "points": m.points,
        "questions": [
            {"name": q.name, "points": q.points, "manual": q.manual}
            for q in m.questions
        ],
    }


def grade(
    master: Path,
    folder: Path,
    *,
    out: Path,
    built: Path | None = None,
    timeout: float = 120.0,
    jobs: int | None = None,
    unsafe: bool = False,
    wait: bool = False,
    limits: sandbox.Limits | None = None,
    force: bool = False,
    regrade: list[str] | tuple[str, ...] = (),
    follow_links: bool = False,
    settings: Settings | None = None,
) -> list[Grade]:
    """Grade every file of ``folder``; merge the gradebook and write feedback.

    Parameters
    ----------
    master : Path
        The assignment's master: a notebook in otter-grader's format (``.ipynb``
        or a text notebook jupytext reads); its tests are run outside the
        student's process.
    folder : Path
        Submissions: ``<student>.ipynb`` files, or one folder per student.
    out : Path
        Output folder: ``gradebook.csv``, ``feedback/<student>.md`` (for the
        students), ``details/<student>.json`` (every test's message, hidden ones
        included: for instructors), ``history/`` and the saved state that lets a
        run resume.
    built : Path, optional
        The assignment as built (``questions.json``, ``student/<slug>.ipynb``
        and ``solution/<slug>.ipynb``): a notebook whose code is the solution's
        is flagged. Without it, the questions are read from the master.
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
    force : bool
        Regrade every notebook, changed or not.
    regrade : list of str
        Students (or files) to regrade even if unchanged.
    follow_links : bool
        Grade what a symbolic link points to, instead of refusing links.
    settings : Settings, optional
        The course's settings (the library under test, its own cells); default
        those of this process (:func:`gradebox.configure`).

    Returns
    -------
    list of Grade
        One per file of the folder graded or reused in this run, sorted by student.

    Raises
    ------
    Incomplete
        Some notebooks have no result (every tester stopped): the gradebook is
        written with them as ``failed`` and the error names them.
    Unattached
        Rows of the gradebook with hand marks match no submission while this run
        made new rows (a spreadsheet may have changed their ids): the gradebook
        is written, those rows kept as they were, and the error names them.
    """
    if settings is not None and not isinstance(settings, Settings):
        raise TypeError(
            f"settings must be a gradebox.Settings, got {type(settings).__name__}"
        )
    previous = configure(settings) if settings is not None else None
    try:
        return _grade(
            Path(master),
            Path(folder),
            out=Path(out),
            built=None if built is None else Path(built),
            timeout=timeout,
            jobs=jobs,
            unsafe=unsafe,
            wait=wait,
            limits=limits,
            force=force,
            regrade=regrade,
            follow_links=follow_links,
        )
    finally:
        if previous is not None:
            configure(previous)


def _grade(
    master,
    folder,
    *,
    out,
    built,
    timeout,
    jobs,
    unsafe,
    wait,
    limits,
    force,
    regrade,
    follow_links,
) -> list[Grade]:
    if not master.is_file():
        raise GradingError(f"no master notebook at {master}")
    slug = master.stem
    if built is not None and not (built / "questions.json").exists():
        raise GradingError(f"no build of {slug!r} at {built} (no questions.json)")
    if not folder.is_dir():
        raise GradingError(f"SUBMISSIONS must be a folder of notebooks: {folder}")
    if not timeout > 0:
        raise GradingError(f"timeout must be > 0 seconds, got {timeout}")
    current().package()  # the library under test is where the settings say
    limits = limits or sandbox.Limits(cpu=float(timeout))
    sandbox.require(unsafe)
    # the memory limits of the notebooks graded at once fit in the machine's
    asked = jobs or os.cpu_count() or 1
    jobs, limits, note = sandbox.fit_memory(asked, limits, sandbox.machine_memory_mb())
    if note:
        print(note, file=sys.stderr)
    if os.geteuid() != 0 and sandbox.bwrap() is not None and sandbox.own_tmpfs():
        print(
            "note: the sandboxes' /tmp is bounded in size but not in files (a user "
            "without root needs unprivileged user namespaces and `unshare` for "
            f"that): {sandbox.own_tmpfs()}",
            file=sys.stderr,
        )
    entries, hidden = collect(folder, slug, follow_links)
    if not entries:
        raise GradingError(f"no file to grade in {folder}")
    unknown = [n for n in regrade if not any(_named(e, [n]) for e in entries)]
    if unknown:
        raise GradingError(
            f"no submission of {', '.join(map(repr, unknown))} to regrade in {folder}"
        )
    if built is not None:
        info = json.loads((built / "questions.json").read_text())
    else:
        info = assignment_info(master)
    # a gradebook that cannot be merged is refused before an hour of grading
    read_gradebook(out / "gradebook.csv", check_writable=True)
    run = GradingRun(
        slug=slug,
        master=master,
        info=info,
        out=out,
        limits=limits,
        jobs=jobs,
        unsafe=unsafe,
        force=force,
        regrade=tuple(regrade),
        follow_links=follow_links,
        references=_references(built, slug) if built is not None else {},
    )
    lock = Lock(out / ".lock", wait)
    try:
        return _grade_locked(run, entries, hidden)
    finally:
        lock.release()


def _without_comments(source: str) -> str:
    """A cell without its comments (Python's, found by its tokenizer; a cell that
    does not tokenize loses its lines that start with ``#``)."""
    import io
    import tokenize

    lines = source.splitlines()
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError, ValueError):
        return "\n".join(x for x in lines if not x.lstrip().startswith("#"))
    for tok in reversed(tokens):  # from the end: columns stay right
        if tok.type == tokenize.COMMENT:
            row, col = tok.start
            lines[row - 1] = lines[row - 1][:col]
    return "\n".join(lines)


def code_digest(cells: list[str]) -> str:
    """A hash of a notebook's code, blind to comments, blank lines, trailing
    spaces and cells that hold nothing else: the solution with a comment or an
    empty cell added is still the solution."""
    lines = [
        line.rstrip()
        for cell in cells
        for line in _without_comments(cell).splitlines()
        if line.strip()
    ]
    return hashlib.sha256("\n".join(lines).encode("utf-8", "surrogatepass")).hexdigest()


def _references(built: Path, slug: str) -> dict[str, str]:
    """The code hashes of the built solution and student notebooks."""
    out = {}
    for kind in ("solution", "student"):
        cells, _, _ = read_notebook(built / kind / f"{slug}.ipynb")
        if cells is not None:
            out[kind] = code_digest(cells)
    return out


def _flag_copies(grades: dict, digests: dict, references: dict) -> None:
    """Flag graded notebooks whose code is the solution's, or another student's
    (the unchanged student notebook is not a copy)."""
    groups: dict[str, list[str]] = {}
    for rel, digest in digests.items():
        if digest != references.get("student") and rel in grades:
            groups.setdefault(digest, []).append(rel)
    for digest, rels in groups.items():
        for rel in rels:
            g = grades[rel]
            if g.status not in ("graded", "flagged"):
                continue
            notes = []
            if digest == references.get("solution"):
                notes.append("the same code as the solution notebook")
            others = [grades[r].student for r in rels if r != rel]
            if others:
                names = ", ".join(others[:3]) + (", ..." if len(others) > 3 else "")
                notes.append(f"the same code as {names}")
            notes = [n for n in notes if n not in g.flags]
            if notes:
                g.flags.extend(notes)
                rest = g.reason.removeprefix("flagged: ")
                g.reason = "flagged: " + "; ".join(notes + ([rest] if rest else []))
                g.status = "flagged"


def _named(entry: Entry, names) -> bool:
    """Whether ``entry`` is one of the students (or files) ``names``."""
    return any(n in (entry.student, entry.rel, printable(entry.rel)) for n in names)


@dataclass(frozen=True)
class GradingRun:
    """The settings of one run of :func:`grade`."""

    slug: str
    master: Path
    info: dict  # the build's questions.json
    out: Path
    limits: sandbox.Limits
    jobs: int | None = None
    unsafe: bool = False
    force: bool = False
    regrade: tuple[str, ...] = ()
    follow_links: bool = False
    # code hashes of the built solution and student notebooks
    references: dict = field(default_factory=dict)

    @property
    def questions(self) -> list[dict]:
        return self.info["questions"]


@dataclass
class _Saved:
    """The results of a run as they come in: each is saved at once (a run that
    stops resumes from there), except a failure (graded again)."""

    path: Path
    state: dict
    grades: dict
    progress: Progress
    questions: list
    # files whose code cells are those of a file that is run: its result is theirs
    twins: dict = field(default_factory=dict)

    def add(self, entry: Entry, sha: str, result: dict) -> None:
        for e, h in [(entry, sha), *self.twins.get(entry.rel, [])]:
            g = _grade_from(e, result, self.questions, h)
            self.grades[e.rel] = g
            if g.status in UNCACHED:  # graded again at the next run
                self.state["results"].pop(e.rel, None)
            else:
                self.state["results"][e.rel] = {"sha256": h, "result": result}
            atomic_write(self.path, json.dumps(self.state))
            self.progress.update(g)


def _run_once(todo: list) -> tuple[list, dict]:
    """The files to run, one per distinct list of code cells (a notebook is graded
    from its code cells alone: the same cells get the same result), and for each
    the other files with the same cells."""
    first: dict[str, tuple] = {}
    twins: dict[str, list] = {}
    for entry, cells, sha in todo:
        key = hashlib.sha256(
            json.dumps(cells, ensure_ascii=False).encode("utf-8", "surrogatepass")
        ).hexdigest()
        if key in first:
            twins.setdefault(first[key][0].rel, []).append((entry, sha))
        else:
            first[key] = (entry, cells, sha)
    return list(first.values()), twins


def _grade_locked(run: GradingRun, entries: list[Entry], hidden: int) -> list[Grade]:
    """Grade ``entries`` (the lock held): reuse what is saved, grade the rest, write
    the gradebook and the feedback."""
    questions = run.questions
    digests: dict[str, str] = {}
    reused = 0
    timeouts = []  # reused timeouts: named, with how to grade them again
    auto = [q for q in questions if not q["manual"]]
    possible = sum(q["points"] for q in auto)
    state_path = run.out / ".state.json"
    digest = grader_digest(run.master, run.limits)
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
            grades[e.rel] = Grade(e.student, e.problem, e.reason, file=printable(e.rel))
            continue
        raw, reason = read_limited(e.path, run.follow_links)
        cells, status = None, "invalid"
        if raw is not None:
            cells, status, reason = parse_notebook(raw)
        if cells is None:
            grades[e.rel] = Grade(e.student, status, reason, file=printable(e.rel))
            continue
        sha = hashlib.sha256(raw).hexdigest()
        digests[e.rel] = code_digest(cells)
        saved = results.get(e.rel)
        if (
            saved
            and saved.get("sha256") == sha
            and not run.force
            and not _named(e, run.regrade)
            and saved["result"].get("status") not in UNCACHED
        ):
            grades[e.rel] = _grade_from(e, saved["result"], questions, sha)
            reused += 1
            if grades[e.rel].status == "timeout":
                timeouts.append(e.student)
        else:
            todo.append((e, cells, sha))
    once, twins = _run_once(todo)
    workers = max(1, min(run.jobs or os.cpu_count() or 1, len(once) or 1))
    same = len(todo) - len(once)
    print(
        f"grading {len(todo)} of {len(entries)} file(s) of {run.slug} with "
        f"{workers} worker(s), at most {run.limits.cpu:g} s of CPU each"
        + (
            f"; {same} with the same code cells as another, run once"
            if same > 0
            else ""
        )
        + (f"; {reused} unchanged since the last run" if reused > 0 else "")
        + (
            f" ({len(timeouts)} of them timed out then and still count as timed "
            f"out: {', '.join(timeouts[:5])}{', ...' if len(timeouts) > 5 else ''}; "
            "--force or --regrade <student> grades them again; the book's make "
            "grade: FORCE=1 or REGRADE=<student>)"
            if timeouts
            else ""
        )
        + (f"; {hidden} hidden file(s) passed over" if hidden else ""),
        file=sys.stderr,
    )
    if run.unsafe and sandbox.bwrap() is None:
        print("WARNING: no sandbox (--unsafe-no-sandbox)", file=sys.stderr)
    saved = _Saved(
        state_path, state, grades, Progress(len(todo), possible), questions, twins
    )
    interrupted = _run(run, once, workers, saved) if once else False
    missing = [] if interrupted else [(e, h) for e, _, h in todo if e.rel not in grades]
    for e, sha in missing:
        grades[e.rel] = Grade(
            e.student,
            "failed",
            "not graded: the testers stopped before reaching it; run the same "
            "command again",
            file=printable(e.rel),
            digest=sha,
        )
    _flag_copies(grades, digests, run.references)
    ordered = sorted(grades.values(), key=lambda g: (g.student, g.file))
    detached = _write_outputs(run.out, run.info, ordered)
    _summary(ordered, possible, run.out, questions, interrupted)
    if interrupted:
        raise KeyboardInterrupt
    if missing:
        names = ", ".join(e.student for e, _ in missing[:10])
        more = f" and {len(missing) - 10} more" if len(missing) > 10 else ""
        raise Incomplete(
            f"{len(missing)} notebook(s) have no result (every tester stopped): "
            f"{names}{more}; they are in the gradebook as failed",
            ordered,
        )
    if detached:
        raise Unattached(
            f"{len(detached)} row(s) of {run.out / 'gradebook.csv'} with hand marks "
            "match no submission of this run while new rows were made (a "
            "spreadsheet may have changed their ids): "
            + "; ".join(detached[:10])
            + ". They are kept as they were (the earlier gradebook is in history/): "
            "move each mark to its student's row, delete the old row, and run the "
            "same command again",
            ordered,
        )
    return ordered


def _run(run: GradingRun, todo: list, workers: int, saved: _Saved) -> bool:
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
                    "limits": asdict(run.limits),
                    "uid": sandbox.slot_uid(os.getpid(), slot),
                    "unsafe": run.unsafe,
                }
                try:
                    result = worker.grade(task, run.limits.wall + 120)
                except Exception as exc:  # one notebook must not stop the class
                    worker.stop()
                    result = {
                        "status": "failed",
                        "reason": f"the grader failed on this notebook: "
                        f"{type(exc).__name__}: {str(exc)[-300:]}",
                    }
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
        pool.extend(_workers(run.master, run.unsafe, workers))
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
            saved.add(entry, sha, result)
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


def _write_outputs(out: Path, info: dict, grades: list[Grade]) -> list[str]:
    """Write the gradebook and the feedback; the rows with hand marks the
    gradebook could not attach (see :func:`write_gradebook`)."""
    history = out / "history"
    detached = write_gradebook(
        out / "gradebook.csv", grades, info["questions"], history
    )
    stamp = _timestamp()
    names = file_names([g.student for g in grades])
    for g in grades:
        name = names[g.student]
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
    return detached
