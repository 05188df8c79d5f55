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
import errno
import fcntl
import hashlib
import io
import json
import os
import queue
import re
import select
import signal
import stat
import subprocess
import sys
import threading
import time
import unicodedata
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from . import sandbox, wire
from .common import BUILD, GRADES, ROOT, CourseworkError, fmt
from .masters import master_paths

# results that are never reused: the next run grades the notebook again
UNCACHED = ("timeout", "failed")
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


LINK_REFUSED = (
    "a symbolic link: links are not graded (they may point to a classmate's "
    "notebook or outside the folder); copy the file in, or pass --follow-links "
    "(make grade ... FOLLOW_LINKS=1)"
)


def printable(text: str) -> str:
    """``text`` on one line with nothing a terminal, a spreadsheet or a viewer
    would interpret: control and format characters (ANSI escapes, line breaks,
    bidirectional overrides) and bytes of a file name that is not UTF-8 become
    backslash escapes."""
    text = str(text)
    try:
        text = text.encode("utf-8", "surrogateescape").decode(
            "utf-8", "backslashreplace"
        )
    except UnicodeEncodeError:
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    out = []
    for ch in text:
        if unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp"):
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


def cell(text: str, width: int) -> str:
    """``text`` cut and padded to ``width`` columns of a terminal: a CJK character
    takes two (wcwidth), so that names such as 李雷 keep the columns aligned."""
    from wcwidth import wcwidth

    out, used = [], 0
    for ch in text:
        w = max(wcwidth(ch), 0)
        if used + w > width:
            break
        out.append(ch)
        used += w
    return "".join(out) + " " * (width - used)


def _file_kind(path: Path, follow: bool) -> str:
    """``""`` for a regular file or folder that may be read, else why not."""
    try:
        st = path.lstat()
    except OSError as exc:
        return f"cannot read it: {exc.strerror or exc}"
    if stat.S_ISLNK(st.st_mode):
        if not follow:
            return LINK_REFUSED
        try:
            st = path.stat()
        except OSError:
            return "a broken link"
    if stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode):
        return ""
    return "not a regular file (a pipe, a socket or a device): not graded"


def collect(
    folder: Path, slug: str, follow_links: bool = False
) -> tuple[list[Entry], int]:
    """Every file of ``folder`` as an :class:`Entry`, and the number of hidden
    files and folders (``.ipynb_checkpoints``, ``.DS_Store``) passed over.

    Entries are looked at without following links (``lstat``): a link, a pipe or
    a device gets a row with the reason instead of being read, unless
    ``follow_links`` (then what a link points to must be a file or a folder)."""
    entries, hidden = [], 0
    for path in sorted(folder.iterdir(), key=lambda p: p.name):
        name = path.name
        shown = printable(name)
        if _hidden(name):
            hidden += 1
            continue
        stem = shown[: -len(".ipynb")] if _is_notebook_name(shown) else shown
        problem = _file_kind(path, follow_links)
        if problem:
            stem = printable(Path(name).stem) if _is_notebook_name(name) else stem
            entries.append(Entry(stem, path, name, "invalid", problem))
        elif path.is_dir():
            if _is_notebook_name(name):
                entries.append(
                    Entry(
                        stem,
                        path,
                        name,
                        "invalid",
                        "a folder named like a notebook, not a notebook",
                    )
                )
                continue
            try:
                notebooks = sorted(
                    p
                    for p in path.rglob("*")
                    if _is_notebook_name(p.name)
                    and not any(_hidden(part) for part in p.relative_to(path).parts)
                )
            except OSError as exc:
                entries.append(
                    Entry(
                        shown,
                        path,
                        name,
                        "invalid",
                        f"cannot read the folder: {exc.strerror or exc}",
                    )
                )
                continue
            if not notebooks:
                entries.append(
                    Entry(shown, path, name, "invalid", "no notebook in the folder")
                )
                continue
            usable = [p for p in notebooks if not _file_kind(p, follow_links)]
            chosen = usable[0] if usable else notebooks[0]
            named = [p for p in usable if p.name.lower() == f"{slug}.ipynb"]
            chosen = named[0] if named else chosen
            for nb in notebooks:
                rel = nb.relative_to(folder).as_posix()
                why = _file_kind(nb, follow_links)
                if nb == chosen and not why:
                    entries.append(Entry(shown, nb, rel))
                else:
                    inner = printable(nb.relative_to(path).as_posix())
                    entries.append(
                        Entry(
                            shown if nb == chosen else f"{shown}/{inner}",
                            nb,
                            rel,
                            "invalid",
                            why
                            or f"another notebook in {shown}/; graded: "
                            f"{printable(chosen.name)}",
                        )
                    )
        elif _is_notebook_name(name):
            entries.append(Entry(stem, path, name))
        else:
            entries.append(
                Entry(
                    printable(path.stem) or shown,
                    path,
                    name,
                    "invalid",
                    f"not a notebook ({shown})",
                )
            )
    # two files of one student name (alice.ipynb and alice/): tell them apart
    seen: dict[str, int] = {}
    for e in entries:
        seen[e.student] = seen.get(e.student, 0) + 1
    for e in entries:
        if seen[e.student] > 1:
            e.student = f"{e.student} ({printable(e.rel)})"
    return entries, hidden


def read_limited(path: Path, follow: bool = False) -> tuple[bytes | None, str]:
    """The bytes of a regular file, read without blocking and without following a
    link (unless ``follow``), at most :data:`MAX_NOTEBOOK` of them; or None and
    why not."""
    flags = os.O_RDONLY | os.O_NONBLOCK | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return None, LINK_REFUSED
        return None, f"cannot read the file: {exc.strerror or exc}"
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None, "not a regular file (a pipe, a socket or a device)"
        chunks, size = [], 0
        while size <= MAX_NOTEBOOK:
            chunk = os.read(fd, min(2**20, MAX_NOTEBOOK + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        return None, f"cannot read the file: {exc.strerror or exc}"
    finally:
        os.close(fd)
    if size > MAX_NOTEBOOK:
        return None, f"the file is larger than {MAX_NOTEBOOK >> 20} MB"
    return b"".join(chunks), ""


def read_notebook(
    path: Path, follow: bool = False
) -> tuple[list[str] | None, str, str]:
    """The code cells of a notebook as Jupyter reads it, or None, a status and a
    reason. Accepts a byte-order mark, fields it does not know, any kernel of the
    Python language, nbformat 3 and 4."""
    raw, why = read_limited(path, follow)
    if raw is None:
        return None, "invalid", why
    return parse_notebook(raw)


def parse_notebook(raw: bytes) -> tuple[list[str] | None, str, str]:
    """:func:`read_notebook` of the bytes of a file."""
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
        except wire.WireError as exc:  # checked before anything is written
            return {
                "status": "failed",
                "reason": f"the notebook's code is too large to send to its "
                f"sandbox ({exc})",
            }
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
    """Write a file so that it is either the old or the new content, never a mix.

    A full disk (or any error) leaves the old file and no temporary file, and
    raises a :class:`CourseworkError` that says so."""
    raw = data.encode() if isinstance(data, str) else data
    tmp = path.with_name(f".{path.name[:180]}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        try:
            tmp.unlink()
        except OSError:
            pass
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise CourseworkError(
                f"the disk is full: cannot write {path} ({exc.strerror}). Nothing "
                "half-written was left; free some space and run the same command "
                "again (what was graded before is kept)"
            ) from None
        raise CourseworkError(f"cannot write {path}: {exc.strerror or exc}") from None


def neutralise(value: str) -> str:
    """A CSV cell that a spreadsheet shows as text, never runs as a formula."""
    return "'" + value if value.startswith(DANGEROUS) else value


def restore(value: str) -> str:
    """The text of a cell written by :func:`neutralise`."""
    if value.startswith("'") and value[1:].startswith(DANGEROUS):
        return value[1:]
    return value


def safe_name(student: str) -> str:
    """A file name for a student's feedback and details: a readable part (ASCII,
    at most 60 characters) and a short hash of the whole name, so that names that
    read alike (``a b``, ``a_b``, ``a;b``, ``Alice`` and ``alice``) or have no
    Latin letters (``李雷``) each get their own file."""
    ascii_name = unicodedata.normalize("NFKD", student)
    ascii_name = ascii_name.encode("ascii", "ignore").decode()
    slug = re.sub(r"[^A-Za-z0-9_-]+", "_", ascii_name).strip("_-")[:60] or "student"
    key = student.encode("utf-8", "surrogatepass")
    return f"{slug}-{hashlib.sha256(key).hexdigest()[:8]}"


def file_names(students: list[str]) -> dict[str, str]:
    """:func:`safe_name` of every student, checked to be distinct even on a file
    system that ignores case (a longer hash for any that would clash)."""
    names, taken = {}, {}
    for student in sorted(set(students)):
        name = safe_name(student)
        size = 8
        while name.lower() in taken and size < 64:
            size *= 2
            key = student.encode("utf-8", "surrogatepass")
            name = f"{name.rsplit('-', 1)[0]}-{hashlib.sha256(key).hexdigest()[:size]}"
        if name.lower() in taken:
            raise CourseworkError(
                f"{student!r} and {taken[name.lower()]!r} get the same file name"
            )
        taken[name.lower()] = student
        names[student] = name
    return names


class Incomplete(CourseworkError):
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


@dataclass
class Gradebook:
    """A gradebook as read: its columns, rows and how to write it back."""

    header: list[str] = field(default_factory=list)
    rows: list[dict[str, str]] = field(default_factory=list)
    delimiter: str = ","
    bom: bool = False
    text: str = ""  # the file's text, "" if it does not exist


def read_gradebook(path: Path, check_writable: bool = False) -> Gradebook:
    """Read a gradebook as this module writes it or as a spreadsheet saves it
    back: UTF-8 with or without a byte-order mark, or Windows-1252; ``,``, ``;``
    or tab between cells; any line endings. Every column is kept: one without a
    name is named ``column N``, a repeated name gets `` (N)``.

    Raises :class:`CourseworkError` (so that nothing is lost) when the file has no
    ``student`` column, holds two rows of one student, cannot be decoded, or
    (``check_writable``) is read-only.
    """
    try:
        st = path.stat()
    except FileNotFoundError:
        return Gradebook()
    if check_writable and not st.st_mode & 0o222:
        raise CourseworkError(
            f"{path} is read-only: it is not replaced. Make it writable "
            f"(chmod u+w {path}) to merge the new grades into it, or move it away "
            "to start a new gradebook"
        )
    raw = path.read_bytes()
    bom = raw.startswith(b"\xef\xbb\xbf")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        try:
            text = raw.decode("cp1252")
        except UnicodeDecodeError:
            raise CourseworkError(
                f"{path} is neither UTF-8 nor Windows-1252 text: save it from the "
                "spreadsheet as 'CSV UTF-8' and run the same command again"
            ) from None
        print(
            f"note: {path.name} is not UTF-8: read as Windows-1252 (a spreadsheet's "
            "'CSV' save); it is written back as UTF-8",
            file=sys.stderr,
        )
        bom = True  # so that the spreadsheet reads the UTF-8 it gets back
    if not text.strip():
        return Gradebook(text=text)
    lines = text.splitlines()
    body = text
    first = lines[0]
    match = re.fullmatch(r"sep=(.)", first.strip())
    if match:  # Excel's "sep=;" line
        delimiter = match.group(1)
        body = text.split("\n", 1)[1] if "\n" in text else ""
    else:
        match = re.match(r'"?student"?([,;\t|])', first)
        delimiter = match.group(1) if match else ","
    table = list(csv.reader(io.StringIO(body, newline=""), delimiter=delimiter))
    if not table or "student" not in [c.strip() for c in table[0]]:
        raise CourseworkError(
            f"{path} has no 'student' column in its first line ({first[:80]!r}): "
            "it is not merged, and not replaced. Put the column back (or move the "
            "file away) and run the same command again"
        )
    width = max(len(r) for r in table)
    header: list[str] = []
    for i in range(width):
        name = table[0][i].strip() if i < len(table[0]) else ""
        name = name or f"column {i + 1}"
        if name in header:
            name = f"{name} ({i + 1})"
        header.append(name)
    rows, seen = [], {}
    for number, cells in enumerate(table[1:], start=2):
        row = {header[i]: cells[i] if i < len(cells) else "" for i in range(width)}
        key = restore(row.get("student") or "")
        if key and key in seen:
            raise CourseworkError(
                f"{path} has two rows for {printable(key)!r} (lines {seen[key]} and "
                f"{number}): merge them into one and run the same command again"
            )
        if key:
            seen[key] = number
        if key or any(v.strip() for v in row.values()):
            rows.append(row)
    return Gradebook(header, rows, delimiter, bom, text)


def write_gradebook(
    path: Path, grades: list[Grade], questions: list[dict], history: Path
) -> None:
    """Merge ``grades`` into the gradebook at ``path``.

    The autograded columns (questions, total, status, reason, file, feedback) of
    the students graded are replaced; every other column (the written question's,
    a column a teaching assistant added) and every other row are kept, in the
    separator the file had (a spreadsheet's ``;`` stays). Before writing, the
    merge is checked: if any earlier row or any non-empty cell that is not
    autograded would change, nothing is written and a :class:`CourseworkError`
    says which. The previous file is kept in ``history`` when it changes.
    """
    auto = [q["name"] for q in questions if not q["manual"]]
    graded = set(auto) | {"total", "status", "reason", "file", "feedback"}
    ours = [q["name"] for q in questions] + [
        "total",
        "status",
        "reason",
        "file",
        "feedback",
    ]
    book = read_gradebook(path, check_writable=True)
    header = ["student", *ours]
    header += [c for c in book.header if c not in header]
    rows: dict[str, dict] = {}
    loose = []  # rows without a student (a note, a class average): kept as they are
    for row in book.rows:
        key = restore(row.get("student") or "")
        if key:
            rows[key] = dict(row)
        else:
            loose.append(row)
    names = file_names([g.student for g in grades])
    for g in grades:
        student = printable(g.student)
        row = rows.setdefault(student, {})
        row["student"] = student
        for q in auto:
            row[q] = fmt(g.scores.get(q, 0.0))
        row.update(
            total=fmt(g.total),
            status=g.status,
            reason=printable(g.reason),
            file=printable(g.file),
            feedback=f"{names[g.student]}.md",
        )
    out = io.StringIO()
    writer = csv.writer(out, delimiter=book.delimiter, lineterminator="\n")
    writer.writerow(header)
    written = []
    for key in sorted(rows):
        written.append(
            [neutralise(restore(str(rows[key].get(c) or ""))) for c in header]
        )
    written += [[str(r.get(c) or "") for c in header] for r in loose]
    writer.writerows(written)
    new = out.getvalue()
    _check_merge(path, book, new, graded)
    if new != book.text:
        if book.text:
            atomic_write(history / f"gradebook-{_timestamp()}.csv", book.text)
        atomic_write(path, ("\ufeff" if book.bom else "") + new)


def _check_merge(path: Path, old: Gradebook, new: str, graded: set) -> None:
    """Refuse a merge that would lose an earlier row or a cell kept by hand."""
    table = list(csv.reader(io.StringIO(new, newline=""), delimiter=old.delimiter))
    header = table[0]
    after = {}
    loose = []
    for cells in table[1:]:
        row = dict(zip(header, cells))
        key = restore(row.get("student") or "")
        if key:
            after[key] = row
        else:
            loose.append(row)
    lost = []
    for row in old.rows:
        key = restore(row.get("student") or "")
        if not key:
            if not any(all(r.get(c, "") == v for c, v in row.items()) for r in loose):
                lost.append("a row without a student")
            continue
        if key not in after:
            lost.append(f"the row of {printable(key)!r}")
            continue
        for column, value in row.items():
            if column in graded or not value.strip():
                continue
            if restore(after[key].get(column, "")) != restore(value):
                lost.append(f"{printable(key)!r}'s {column!r} ({printable(value)!r})")
    if lost:
        more = f" and {len(lost) - 5} more" if len(lost) > 5 else ""
        raise CourseworkError(
            f"{path} is not replaced: the merge would lose {'; '.join(lost[:5])}"
            f"{more}. The results are saved; fix the file and run the same command "
            "again"
        )


def _points(x: float) -> str:
    return f"{fmt(x)} point" + ("" if x == 1 else "s")


def md_text(text: str) -> str:
    """Text a student controls, shown as itself in Markdown: one line, no
    control characters, every character Markdown or HTML would interpret
    backslash-escaped (no heading, link, image, emphasis, table cell or tag)."""
    return re.sub(r"([\\`*_{}\[\]()#+!|<>&~$])", r"\\\1", printable(text))


def md_code(text: str) -> str:
    """A fenced block showing ``text`` verbatim: the fence is longer than any run
    of backticks or tildes in it, and control characters are escaped."""
    text = "\n".join(printable(line) for line in str(text).splitlines())
    runs = [len(m) for m in re.findall(r"`+|~+", text)] + [2]
    fence = "`" * (max(runs) + 1)
    return f"{fence}text\n{text}\n{fence}"


def feedback(info: dict, g: Grade) -> str:
    """The student's feedback (Markdown): scores, the public tests' messages,
    hidden tests by points only."""
    auto = [q for q in info["questions"] if not q["manual"]]
    manual = [q for q in info["questions"] if q["manual"]]
    possible = sum(q["points"] for q in auto)
    lines = [f"# {info['title']}, feedback for {md_text(g.student)}", ""]
    if g.status in ("invalid", "empty"):
        return "\n".join(
            lines
            + [
                f"**Not graded ({g.status})**: {md_text(g.reason)}.",
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
        lines += ["", f"**{g.status}**: {md_text(g.reason)}."]
    elif g.reason:
        lines += ["", f"Note: {md_text(g.reason)}."]
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
            lines += ["", f"**{md_text(g.library[name])}.**"]
        public = [c for c in cases if not c["hidden"]]
        hidden = [c for c in cases if c["hidden"]]
        for c in public:
            verdict = "passed" if c["passed"] else "failed"
            lines += [
                "",
                f"Public test {c['number']} ({_points(c['points'])}): {verdict}.",
            ]
            if not c["passed"] and c.get("message"):
                lines += ["", md_code(c["message"])]
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
            f"{cell(printable(g.student), 28)} {score:>9s}  {g.status:8s} "
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
    force: bool = False,
    regrade: list[str] | tuple[str, ...] = (),
    follow_links: bool = False,
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
    force : bool
        Regrade every notebook, changed or not (``make grade ... FORCE=1``).
    regrade : list of str
        Students (or files) to regrade even if unchanged (``REGRADE=<name>``).
    follow_links : bool
        Grade what a symbolic link points to, instead of refusing links.

    Returns
    -------
    list of Grade
        One per file of the folder graded or reused in this run, sorted by student.

    Raises
    ------
    Incomplete
        Some notebooks have no result (every tester stopped): the gradebook is
        written with them as ``failed`` and the error names them.
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
    entries, hidden = collect(folder, slug, follow_links)
    if not entries:
        raise CourseworkError(f"no file to grade in {folder}")
    unknown = [n for n in regrade if not any(_named(e, [n]) for e in entries)]
    if unknown:
        raise CourseworkError(
            f"no submission of {', '.join(map(repr, unknown))} to regrade in {folder}"
        )
    info = json.loads((built / "questions.json").read_text())
    out = Path(out) if out is not None else GRADES / slug
    # a gradebook that cannot be merged is refused before an hour of grading
    read_gradebook(out / "gradebook.csv", check_writable=True)
    lock = Lock(out / ".lock", wait)
    try:
        return _grade_locked(
            slug,
            master,
            entries,
            hidden,
            info,
            out,
            limits,
            jobs,
            unsafe,
            force=force,
            regrade=list(regrade),
            follow_links=follow_links,
            references=_references(built, slug),
        )
    finally:
        lock.release()


def code_digest(cells: list[str]) -> str:
    """A hash of a notebook's code, blind to blank lines and trailing spaces."""
    lines = [
        line.rstrip() for cell in cells for line in cell.splitlines() if line.strip()
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


def _grade_locked(
    slug,
    master,
    entries,
    hidden,
    info,
    out,
    limits,
    jobs,
    unsafe,
    *,
    force=False,
    regrade=(),
    follow_links=False,
    references=None,
):
    questions = info["questions"]
    digests: dict[str, str] = {}
    reused = 0
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
            grades[e.rel] = Grade(e.student, e.problem, e.reason, file=printable(e.rel))
            continue
        raw, reason = read_limited(e.path, follow_links)
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
            and not force
            and not _named(e, regrade)
            and saved["result"].get("status") not in UNCACHED
        ):
            grades[e.rel] = _grade_from(e, saved["result"], questions)
            reused += 1
        else:
            todo.append((e, cells, sha))
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
    missing = [] if interrupted else [e for e, _, _ in todo if e.rel not in grades]
    for e in missing:
        grades[e.rel] = Grade(
            e.student,
            "failed",
            "not graded: the testers stopped before reaching it; run the same "
            "command again",
            file=printable(e.rel),
        )
    _flag_copies(grades, digests, references or {})
    ordered = sorted(grades.values(), key=lambda g: (g.student, g.file))
    _write_outputs(out, info, ordered)
    _summary(ordered, possible, out, questions, interrupted)
    if interrupted:
        raise KeyboardInterrupt
    if missing:
        names = ", ".join(e.student for e in missing[:10])
        more = f" and {len(missing) - 10} more" if len(missing) > 10 else ""
        raise Incomplete(
            f"{len(missing)} notebook(s) have no result (every tester stopped): "
            f"{names}{more}; they are in the gradebook as failed",
            ordered,
        )
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
                    "uid": sandbox.slot_uid(os.getpid(), slot),
                    "unsafe": unsafe,
                }
                try:
                    result = worker.grade(task, limits.wall + 120)
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
            if g.status in UNCACHED:  # graded again at the next run
                results.pop(entry.rel, None)
            else:
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


def _summary(grades, possible, out, questions, interrupted) -> None:
    print(f"{'student':28s} {'total':>9s}  status")
    for g in grades:
        score = f"{fmt(g.total)}/{fmt(possible)}"
        print(f"{cell(printable(g.student), 28)} {score:>9s}  {g.status}", end="")
        print(f"  ({printable(g.reason)[:100]})" if g.reason else "")
    counts = {s: sum(g.status == s for g in grades) for s in STATUS_HELP}
    print(", ".join(f"{n} {s}" for s, n in counts.items() if n))
    print(f"gradebook: {out / 'gradebook.csv'}")
    print(f"feedback:  {out / 'feedback'}/ (file names in the gradebook's column)")
    manual = [q["name"] for q in questions if q["manual"]]
    if manual:
        print(f"graded by hand (kept as you fill them in): {', '.join(manual)}")
    if interrupted:
        print("interrupted: run the same command again to grade the rest")
