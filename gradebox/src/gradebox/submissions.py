"""The submissions of a class: every file of the folder a lecturer gives, read safely.

:func:`collect` gives one entry per file (``<student>.ipynb`` files in any case of the
extension, or one folder per student), refusing links, pipes and devices (unless
asked to follow links) and anything that is not a regular file, with the reason;
:func:`read_limited` reads at most :data:`MAX_NOTEBOOK` bytes without following a
link; :func:`parse_notebook` reads a notebook as leniently as Jupyter does.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import unicodedata
from dataclasses import dataclass
from pathlib import Path


MAX_NOTEBOOK = 50 * 2**20  # bytes


@dataclass
class Entry:
    """A file of the submissions folder: a notebook to grade, or why not."""

    student: str
    path: Path
    rel: str
    problem: str = ""  # status and reason when the file cannot be graded
    reason: str = ""


def _is_notebook_name(name: str) -> bool:
    return name.lower().endswith(".ipynb")


def _hidden(name: str) -> bool:
    return name.startswith(".") or name == "__pycache__"


LINK_REFUSED = (
    "a symbolic link: links are not graded (they may point to a classmate's "
    "notebook or outside the folder); copy the file in, or pass --follow-links "
    "(the book's make grade: FOLLOW_LINKS=1)"
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
