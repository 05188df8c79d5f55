"""The gradebook (``gradebook.csv``): merged, never overwritten, safe in a spreadsheet.

Autograded columns are updated and every other column (a hand-graded question, a
comment) is kept, as are the rows of students not in this run; a merge that would
lose a row or a hand-filled cell is refused. A gradebook saved again by a
spreadsheet (byte-order mark, ``;`` separator, cp1252) is read as it was meant.
Every write is atomic, and the earlier gradebook is kept in ``history/``.
Spreadsheet formulas are neutralised: a cell that begins with ``=``, ``+``, ``-``,
``@``, a tab or a carriage return gets a leading ``'``.
"""

from __future__ import annotations

import csv
import datetime
import errno
import io
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .common import CourseworkError, fmt
from .feedback import file_names
from .submissions import printable

if TYPE_CHECKING:
    from .grade import Grade


DANGEROUS = ("=", "+", "-", "@", "\t", "\r")


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
