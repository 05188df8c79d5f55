"""The gradebook (``gradebook.csv``): merged, never overwritten, safe in a spreadsheet.

Autograded columns are updated and every other column (a hand-graded question, a
comment) is kept, as are the rows of students not in this run; a merge that would
lose a row or a hand-filled cell is refused. A gradebook saved again by a
spreadsheet (byte-order mark, ``;`` separator, cp1252) is read as it was meant.

A spreadsheet also changes the ids it saves back: ``0042`` becomes ``42``, ``1-2``
a date (``02-Jan``), a name in a script the file's encoding lacks ``??``, an
accented name its decomposed form (NFD). So a row is found again by its ``file``
(the submission's name, which a spreadsheet keeps as text) and its ``digest``
(``sha256:`` and the start of the submission's content hash) as well as by its
student id, compared in Unicode's composed form (NFC); a row found so gets the
student's id back. Two rows that claim one submission are refused (nothing is
written); a row with hand marks that matches no submission of a run that makes
new rows is kept as it was and named (:class:`Unattached`): the command then ends
with an error, so that the lecturer moves the mark.
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
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from .common import GradingError, fmt
from .feedback import file_names
from .submissions import printable
from .grades import Grade


DANGEROUS = ("=", "+", "-", "@", "\t", "\r")
# the separators a spreadsheet saves a CSV with
SEPARATORS = (",", ";", "\t", "|")


class Unattached(GradingError):
    """Rows with hand marks that match no submission of a run that made new rows
    (a spreadsheet may have changed their ids): they are kept as they were, and
    the gradebook is written; the run ends with this error, which names them."""

    def __init__(self, message: str, grades: list | None = None):
        super().__init__(message)
        self.grades = grades or []


def nfc(text: str) -> str:
    """``text`` in Unicode's composed form, as ids are compared."""
    return unicodedata.normalize("NFC", text)


def digest_cell(sha256: str) -> str:
    """The ``digest`` cell of a submission whose content hash is ``sha256``: text
    that no spreadsheet reads as a number."""
    return f"sha256:{sha256[:16]}" if sha256 else ""


def _identity(row: dict) -> tuple[str, str, str]:
    """A row's student id, file and digest, as compared (restored, NFC)."""
    return tuple(  # type: ignore[return-value]
        nfc(restore(row.get(c) or "").strip()) for c in ("student", "file", "digest")
    )


def atomic_write(path: Path, data: str | bytes) -> None:
    """Write a file so that it is either the old or the new content, never a mix.

    A full disk (or any error) leaves the old file and no temporary file, and
    raises a :class:`GradingError` that says so."""
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
            raise GradingError(
                f"the disk is full: cannot write {path} ({exc.strerror}). Nothing "
                "half-written was left; free some space and run the same command "
                "again (what was graded before is kept)"
            ) from None
        raise GradingError(f"cannot write {path}: {exc.strerror or exc}") from None


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
    lines: list[int] = field(default_factory=list)  # each row's line in the file


def read_gradebook(path: Path, check_writable: bool = False) -> Gradebook:
    """Read a gradebook as this module writes it or as a spreadsheet saves it
    back: UTF-8 with or without a byte-order mark, or Windows-1252; ``,``, ``;``
    or tab between cells; any line endings. Every column is kept: one without a
    name is named ``column N``, a repeated name gets `` (N)``.

    Raises :class:`GradingError` (so that nothing is lost) when the file has no
    ``student`` column, holds two rows of one student, cannot be decoded, or
    (``check_writable``) is read-only.
    """
    try:
        st = path.stat()
    except FileNotFoundError:
        return Gradebook()
    if check_writable and not st.st_mode & 0o222:
        raise GradingError(
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
            raise GradingError(
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
        delimiter = _separator(first)
    table = list(csv.reader(io.StringIO(body, newline=""), delimiter=delimiter))
    if not table or "student" not in [nfc(c.strip()) for c in table[0]]:
        raise GradingError(
            f"{path} has no 'student' column in its first line ({first[:80]!r}): "
            "it is not merged, and not replaced. Put the column back (or move the "
            "file away) and run the same command again"
        )
    width = max(len(r) for r in table)
    header: list[str] = []
    for i in range(width):
        name = nfc(table[0][i].strip()) if i < len(table[0]) else ""
        name = name or f"column {i + 1}"
        if name in header:
            name = f"{name} ({i + 1})"
        header.append(name)
    rows, lines, seen = [], [], {}
    for number, cells in enumerate(table[1:], start=2):
        row = {header[i]: cells[i] if i < len(cells) else "" for i in range(width)}
        ident = _identity(row)
        key = ident[0]
        # one id twice is two students only if their files tell them apart (two
        # names a spreadsheet saved as "??")
        if key and ident in seen:
            raise GradingError(
                f"{path} has two rows for {printable(key)!r} (lines {seen[ident]} "
                f"and {number}): merge them into one and run the same command again"
            )
        if key:
            seen[ident] = number
        if key or any(v.strip() for v in row.values()):
            rows.append(row)
            lines.append(number)
    return Gradebook(header, rows, delimiter, bom, text, lines)


def _separator(first: str) -> str:
    """The separator of a CSV whose first line is ``first``: the one that makes a
    cell ``student`` (wherever the column is), else the most frequent."""
    for sep in SEPARATORS:
        cells = next(csv.reader([first], delimiter=sep), [])
        if "student" in [nfc(c.strip()) for c in cells]:
            return sep
    counts = {sep: first.count(sep) for sep in SEPARATORS}
    best = max(counts, key=counts.get)  # type: ignore[arg-type]
    return best if counts[best] else ","


def write_gradebook(
    path: Path, grades: list[Grade], questions: list[dict], history: Path
) -> list[str]:
    """Merge ``grades`` into the gradebook at ``path``.

    The autograded columns (questions, total, status, reason, file, digest,
    feedback) of the students graded are replaced; every other column (the
    written question's, a column a teaching assistant added) and every other row
    are kept, in the separator the file had (a spreadsheet's ``;`` stays). An
    earlier row belongs to the student whose submission its ``file`` cell names,
    else whose submission its ``digest`` cell names, else whose id it has (NFC):
    a spreadsheet that changed the id does not detach it (see the module).
    Before writing, the merge is checked: if two earlier rows claim one
    submission, or any earlier row or any non-empty cell that is not autograded
    would change, nothing is written and a :class:`GradingError` says which.
    The previous file is kept in ``history`` when it changes.

    Returns
    -------
    list of str
        The rows with hand marks that match no submission while new rows were
        made (kept as they were): the caller ends with an error naming them.
    """
    auto = [q["name"] for q in questions if not q["manual"]]
    graded = set(auto) | {"total", "status", "reason", "file", "digest", "feedback"}
    ours = [q["name"] for q in questions] + [
        "total",
        "status",
        "reason",
        "file",
        "digest",
        "feedback",
    ]
    book = read_gradebook(path, check_writable=True)
    header = ["student", *ours]
    header += [c for c in book.header if c not in header]
    # the students of this run (a student's last file, as rows are per student)
    mine: dict[str, Grade] = {}
    for g in grades:
        mine[nfc(printable(g.student))] = g
    by_file = {nfc(printable(g.file)): k for k, g in mine.items() if g.file}
    digests: dict[str, list[str]] = {}
    for k, g in mine.items():
        cell = digest_cell(getattr(g, "digest", ""))
        if cell:
            digests.setdefault(cell, []).append(k)
    # each earlier row's owner: by its file, its digest (if one submission has
    # it), its id
    owner: dict[int, str] = {}
    how: dict[int, str] = {}  # found by its "file", "digest" or "id"
    claims: dict[str, list[int]] = {}
    loose = []  # rows without a student (a note, a class average): kept as they are
    for i, row in enumerate(book.rows):
        key, file, digest = _identity(row)
        if not key:
            loose.append(row)
            continue
        if file in by_file:
            owner[i], how[i] = by_file[file], "file"
        elif len(digests.get(digest, ())) == 1:
            owner[i], how[i] = digests[digest][0], "digest"
        elif key in mine:
            owner[i], how[i] = key, "id"
        else:
            continue  # a student not in this run
        claims.setdefault(owner[i], []).append(i)
    twice = {k: v for k, v in claims.items() if len(v) > 1}
    if twice:
        what = "; ".join(
            " and ".join(
                f"{printable(restore(book.rows[i]['student']))!r} (line "
                f"{book.lines[i]})"
                for i in rows
            )
            + f" both belong to {printable(mine[k].file)!r} of {printable(k)!r}"
            for k, rows in list(twice.items())[:5]
        )
        raise GradingError(
            f"{path} is not replaced: rows {what} (a spreadsheet may have changed "
            "an id). Keep one row per student, with the hand marks, and run the "
            "same command again (the results are saved)"
        )
    hand = [c for c in book.header if c not in graded and c != "student"]
    out_rows: list[tuple[str, dict]] = []
    moved: dict[int, str] = {}
    for i, row in enumerate(book.rows):
        key = _identity(row)[0]
        if not key:
            continue
        if i in owner:
            moved[i] = owner[i]
            if owner[i] != key or restore(row["student"]) != printable(
                mine[owner[i]].student
            ):
                whose = printable(mine[owner[i]].student)
                print(
                    f"gradebook: the row {printable(restore(row['student']))!r} "
                    f"(line {book.lines[i]}) is {whose!r}'s (found by its {how[i]}): "
                    f"its id is written back as {whose!r}",
                    file=sys.stderr,
                )
        else:
            out_rows.append((key, dict(row)))
    rows_of = {owner[i]: dict(book.rows[i]) for i in owner}
    new = []
    names = file_names([g.student for g in grades])
    for k, g in mine.items():
        row = rows_of.get(k)
        if row is None:
            row = {}
            new.append(k)
        row["student"] = printable(g.student)
        for q in auto:
            row[q] = fmt(g.scores.get(q, 0.0))
        row.update(
            total=fmt(g.total),
            status=g.status,
            reason=printable(g.reason),
            file=printable(g.file),
            digest=digest_cell(getattr(g, "digest", "")),
            feedback=f"{names[g.student]}.md",
        )
        out_rows.append((k, row))
    detached = []
    if new:
        for i, row in enumerate(book.rows):
            if i in owner or not _identity(row)[0]:
                continue
            marks = [c for c in hand if (row.get(c) or "").strip()]
            if marks:
                detached.append(
                    f"{printable(restore(row['student']))!r} (line {book.lines[i]}, "
                    f"file {printable(restore(row.get('file') or ''))!r}: "
                    + ", ".join(f"{c}={printable(row[c])!r}" for c in marks[:3])
                    + ")"
                )
    out = io.StringIO()
    writer = csv.writer(out, delimiter=book.delimiter, lineterminator="\n")
    writer.writerow(header)
    written = []
    for _key, row in sorted(out_rows, key=lambda kr: kr[0]):
        written.append([neutralise(restore(str(row.get(c) or ""))) for c in header])
    written += [[str(r.get(c) or "") for c in header] for r in loose]
    writer.writerows(written)
    text = out.getvalue()
    _check_merge(path, book, text, graded, moved)
    if text != book.text:
        if book.text:
            atomic_write(history / f"gradebook-{_timestamp()}.csv", book.text)
        atomic_write(path, ("\ufeff" if book.bom else "") + text)
    if detached:
        news = ", ".join(repr(printable(mine[k].student)) for k in new[:5])
        print(
            f"WARNING: {path}: {len(detached)} row(s) with hand marks match no "
            f"submission of this run, which made new rows for {news}"
            + (f" and {len(new) - 5} more" if len(new) > 5 else "")
            + ": "
            + "; ".join(detached[:10]),
            file=sys.stderr,
        )
    return detached


def _check_merge(
    path: Path, old: Gradebook, new: str, graded: set, moved: dict | None = None
) -> None:
    """Refuse a merge that would lose an earlier row or a cell kept by hand.

    ``moved`` maps an earlier row (its index) to the id it is written under (a
    row found again by its file); every other row keeps its own id."""
    moved = moved or {}
    table = list(csv.reader(io.StringIO(new, newline=""), delimiter=old.delimiter))
    header = table[0]
    after: dict[str, list[dict]] = {}
    loose = []
    for cells in table[1:]:
        row = dict(zip(header, cells))
        key = nfc(restore(row.get("student") or ""))
        if key:
            after.setdefault(key, []).append(row)
        else:
            loose.append(row)
    lost = []
    for i, row in enumerate(old.rows):
        key = nfc(restore(row.get("student") or ""))
        if not key:
            if not any(all(r.get(c, "") == v for c, v in row.items()) for r in loose):
                lost.append("a row without a student")
            continue
        target = moved.get(i, key)
        if target not in after:
            lost.append(f"the row of {printable(key)!r}")
            continue
        kept = [
            (column, value)
            for column, value in row.items()
            if column not in graded and column != "student" and value.strip()
        ]
        candidates = after[target]
        missing = []
        for column, value in kept:
            if not any(
                restore(r.get(column, "")) == restore(value) for r in candidates
            ):
                missing.append(column)
        if len(candidates) > 1 and not missing and kept:
            # two rows of one id (names a spreadsheet saved as "??"): one of them
            # holds every kept cell of this row
            if not any(
                all(restore(r.get(c, "")) == restore(v) for c, v in kept)
                for r in candidates
            ):
                missing = [c for c, _ in kept]
        for column in missing:
            lost.append(f"{printable(key)!r}'s {column!r} ({printable(row[column])!r})")
    if lost:
        more = f" and {len(lost) - 5} more" if len(lost) > 5 else ""
        raise GradingError(
            f"{path} is not replaced: the merge would lose {'; '.join(lost[:5])}"
            f"{more}. The results are saved; fix the file and run the same command "
            "again"
        )
