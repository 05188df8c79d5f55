"""The README is the front door: short, the two commands first, one estimate each.

A newcomer reads it in two minutes: at most :data:`MAX_LINES` lines, ``make book``
and ``make test`` in a code block that ends within its first :data:`COMMANDS_BY`
lines, and no measured time besides one estimate on each of those two lines
(measurements, CI's steps and their history belong in CONTRIBUTING.md, where the
people who work on the project look). What counts as a duration is
:data:`DURATION`: a number, in digits or (before a long unit) in words, followed by a
unit of time.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from .test_release import README_EXAMPLE

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
GUIDES = ("CONTRIBUTING.md", "RELEASING.md")
MAX_LINES = 120
COMMANDS_BY = 40
COMMANDS = ("make book", "make test")

_DIGITS = r"\d+(?:[.,]\d+)?"
_WORDS = (
    r"an?|half an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
    r"|fifteen|twenty|thirty|forty|fifty|sixty|ninety|a hundred"
)
_RANGE = r"(?:\s*(?:-|–|to)\s*" + _DIGITS + r")?"
#: A duration: "39 s", "1.5 ms", "12 min 16 s" (twice), "30–130 ms", "15 to 35 s",
#: "2 hours", "3075 CPU-seconds", "about ten minutes", "a minute". Digits take any
#: unit (ms, s, sec, min, h, hr and their long forms); words take only the long ones
#: (second, minute, hour), so that "a s" or "an h" in prose is not read as a time.
DURATION = re.compile(
    rf"(?<![\w.]){_DIGITS}{_RANGE}\s*(?:CPU-)?"
    r"(?:ms|s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?)(?![\w²])"
    rf"|\b(?:{_WORDS})\s+(?:seconds?|minutes?|hours?)\b",
    re.IGNORECASE,
)


def durations(text: str) -> list[str]:
    return [m.group(0) for m in DURATION.finditer(text)]


def _readme() -> str:
    return README.read_text(encoding="utf-8")


def _command_block(text: str) -> tuple[int, list[str]]:
    """The first fenced block whose lines include both commands: the number of
    its closing line (1-based) and its lines."""
    lines = text.splitlines()
    start = None
    for i, line in enumerate(lines):
        if line.startswith("```"):
            if start is None:
                start = i
                continue
            body = lines[start + 1 : i]
            if all(any(b.split("#")[0].strip() == c for b in body) for c in COMMANDS):
                return i + 1, body
            start = None
    raise AssertionError(f"no code block of the README holds {COMMANDS}")


def test_the_duration_pattern_sees_measurements_and_nothing_else():
    measured = [
        "took 12 min 16 s on two cores",
        "39 s on two cores, against about 100 s",
        "30–130 ms instead of 1.5 ms",
        "15 to 35 s measured here",
        "in 2 hours",
        "about ten minutes",
        "in a minute",
        "1138s",
        "3075 CPU-seconds",
    ]
    for text in measured:
        assert durations(text), text
    assert len(durations("12 min 16 s")) == 2
    clean = [
        "Python 3.11, make, Node.js",
        "32 tokens on S^2, the sphere S² (β = 2)",
        "arrays of shape (n, d) and (B, n, d); Chapters 1 and 2; 7 chapters",
        "two cores; the version v0.2.0; a sandbox; 110 notebooks; 3 sandboxes",
        "the seconds hand, as in 'minutes of a meeting'",
    ]
    for text in clean:
        assert durations(text) == [], text


def test_readme_is_short_and_puts_the_two_commands_first():
    text = _readme()
    assert len(text.splitlines()) <= MAX_LINES
    end, _ = _command_block(text)
    assert end <= COMMANDS_BY, f"the commands' block ends on line {end}"


def test_readme_quotes_one_estimate_per_command_and_no_other_duration():
    text = _readme()
    _, block = _command_block(text)
    estimates = []
    for command in COMMANDS:
        (line,) = [b for b in block if b.startswith(command + " ")]
        found = durations(line)
        assert len(found) == 1, f"{command}: one estimate, not {found}"
        estimates.append(line)
    rest = text
    for line in estimates:
        rest = rest.replace(line, "")
    assert durations(rest) == [], "measured times go to CONTRIBUTING.md"


def test_readme_links_the_guides_for_contributors_and_releases():
    text = _readme()
    for name in GUIDES:
        assert (ROOT / name).is_file(), name
        assert f"]({name}" in text, f"the README links {name}"


def _slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    heading = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return heading.replace(" ", "-")


def test_the_relative_links_of_the_front_door_and_the_guides_resolve():
    for doc in ("README.md", *GUIDES):
        text = (ROOT / doc).read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            file = ROOT / path if path else ROOT / doc
            assert file.exists(), f"{doc} links {target}"
            if anchor:
                linked = file.read_text(encoding="utf-8")
                headings = re.findall(r"^#+ (.+)$", linked, re.M)
                assert anchor in {_slug(h) for h in headings}, f"{doc} links {target}"


def test_the_make_targets_the_readme_and_releasing_name_exist():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([a-z][\w-]*)\s*:(?!=)", makefile, re.M))
    for doc in ("README.md", "RELEASING.md"):
        named = set(re.findall(r"\bmake ([a-z][\w-]*)", (ROOT / doc).read_text()))
        assert named and named <= targets, (doc, named - targets)


def test_the_readme_example_runs_in_this_environment(tmp_path):
    """The fresh-venv run is slow (tests/test_release.py); this one is not."""
    example = README_EXAMPLE.search(_readme())
    assert example, "## The library, then a python block"
    script = tmp_path / "example.py"
    script.write_text(example.group(1))
    out = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout
    first, last = (int(v) for v in re.findall(r"\d+", out)[:2])
    assert first > last >= 1, out  # many clusters, then few
