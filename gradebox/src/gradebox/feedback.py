"""The feedback a student reads (``feedback/<name>.md``): scores, what failed and why.

Everything a student controls is shown as text; file names are unique per student
(a slug and a short hash), whatever the names.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

from .common import GradingError, fmt
from .submissions import printable
from .grades import Grade


STATUS_HELP = {
    "graded": "graded",
    "flagged": "graded, but the code does something a human should look at",
    "timeout": "ran out of its CPU time (or never finished); tests after that failed",
    "failed": "the notebook's process ended early, or the grader failed",
    "invalid": "not a notebook that can be graded (the reason says why)",
    "empty": "a notebook without code",
}


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
            raise GradingError(
                f"{student!r} and {taken[name.lower()]!r} get the same file name"
            )
        taken[name.lower()] = student
        names[student] = name
    return names


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
