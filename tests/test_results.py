"""The chapters' results, their proofs and their checks, against the list of results.

Static and fast: the chapters (the numbered part of ``_toc.yml``) are parsed, nothing
is executed. A *result* is a ``prf:theorem``, ``prf:lemma``, ``prf:proposition`` or
``prf:corollary`` directive, or a labelled heuristic (``prf:conjecture`` with
"heuristic" in its title). The tests check that

(a) every result is followed, before the next result, by a ``prf:proof`` block, by
    a *citation paragraph* or by a *cross-reference* (a heuristic by a check, see
    (b)). A citation paragraph holds a ``{cite}`` role, a sentence saying where the
    result is proved ("Proved in", "Proved by", "is proved in", "This is
    {cite}`...`") and one saying what the book does about it ("we omit", "we
    prove"): ``CITED_IN`` and ``OMITTED`` below. A cross-reference is a paragraph
    "Proved in {prf:ref}`label`" (``PROVED_IN``) for a result that is a special case
    of another one of the book: that result has its own proof block, the
    cross-referenced result has none, and an asserting cell follows it as in (b);
(b) every proof block is followed, before the next result or the next heading of the
    same or a higher level, by a code cell that asserts (an ``assert`` statement or an
    ``assert_*`` call). The proofs checked by a cell elsewhere are listed in
    ``CHECKED_ELSEWHERE`` with the place; that list must stay exact, and the list of
    results must link those cells;
(c) every result is listed in ``book/results.md`` under its chapter, in the order of
    the chapter, with its title, and every row there is a result; every status
    agrees with the chapter (``proved`` and ``proved in part`` need a proof block,
    ``sketched`` too, ``cited`` a citation paragraph and no proof, ``heuristic`` a
    heuristic; a cross-referenced result has the status of the result it names, and
    its row names it too), a ``proved`` result's proof contains no sketch, and the
    table of counts agrees with the rows; every "Checked by" link goes to a target
    placed directly before a code cell that asserts, and every such target is
    linked;
(d) at least 20 results are proved in full, each counted once (a cross-referenced
    result does not count again).

The parser reads MyST fences of backticks or colons of any length (a fence closes on
a line of at least as many of the same character and nothing else), enters directive
bodies (a result nested in an admonition still counts) but not code, reads options
written as ``:key: value`` lines or as a ``---`` YAML block, and skips the front
matter.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
RESULTS_PAGE = BOOK / "results.md"

RESULT_KINDS = ("theorem", "lemma", "proposition", "corollary", "conjecture")
STATUSES = ("proved in part", "proved", "sketched", "cited", "heuristic")
NOT_ENTERED = {"code-cell", "code", "code-block", "math", "raw", "literalinclude"}

FENCE_OPEN = re.compile(
    r"^(?P<indent> {0,3})(?P<fence>`{3,}|:{3,})\s*(?P<info>.*?)\s*$"
)
DIRECTIVE = re.compile(r"^\{(?P<name>[^}\s]+)\}\s*(?P<arg>.*)$")
HEADING = re.compile(r"^ {0,3}(?P<hashes>#{1,6})\s+(?P<text>\S.*?)\s*#*\s*$")
TARGET = re.compile(r"^ {0,3}\((?P<name>[A-Za-z0-9_.:-]+)\)=\s*$")
OPTION = re.compile(r"^\s*:(?P<key>[\w-]+):\s*(?P<val>.*?)\s*$")
# The citation paragraph: where the result is proved, and what the book does.
CITED_IN = re.compile(r"\b(proved (in|by)|this is \{cite\})", re.IGNORECASE)
OMITTED = re.compile(r"\bwe (omit|prove)\b", re.IGNORECASE)
# The cross-reference: the result is a special case of another result of the book.
PROVED_IN = re.compile(r"\bproved in \{prf:ref\}`(?P<label>[^`]+)`", re.IGNORECASE)
CITE_ROLE = re.compile(r"\{cite(:\w+)?\}`[^`]+`")
ASSERTION = re.compile(r"^\s*assert\b|\bassert_\w+\(", re.MULTILINE)
SKETCH = re.compile(r"\bsketch", re.IGNORECASE)

# Proofs whose asserting cell is not between the proof and the next result or
# heading; the value names the target of the cell that checks them.
CHECKED_ELSEWHERE = {
    # the sympy cell before the statement, and the energy cell after mod-thm-sa
    "mod-thm-usa": "mod-check-usa",
    # the simulations after mod-thm-leaders check parts 1 to 3
    "mod-lem-rescale": "mod-check-leaders",
    # the linearisation at a strict saddle, after clu-cor-escape
    "clu-thm-saddles": "clu-check-saddles",
    # the Monte Carlo check after the proof of clu-thm-d3
    "clu-lem-hessian": "clu-check-d3",
    # particles from an orthonormal frame, at the start of the chapter
    "clu-thm-equi": "clu-check-equi",
    # the antipodal run after ext-prop-hessian, and the bound after ext-thm-max
    "ext-thm-antipodal": "ext-check-antipodal",
}


@dataclass
class Block:
    """A piece of a chapter: a fenced block, a heading, a target or a paragraph."""

    kind: str  # "fence", "heading", "target", "text"
    start: int  # first line (1-based)
    lines: list[str]
    name: str = ""  # directive name of a fence ("" for plain code), target name
    arg: str = ""  # directive argument (title), heading text
    level: int = 0  # heading level
    options: dict[str, str] = field(default_factory=dict)
    depth: int = 0  # nesting depth inside directives

    @property
    def body(self) -> str:
        return "\n".join(self.lines)


def _options(content: list[str]) -> tuple[dict[str, str], int]:
    """Directive options at the top of a body, and the number of lines they use."""
    if content and content[0].strip() == "---":
        end = next(
            (k for k in range(1, len(content)) if content[k].strip() == "---"), None
        )
        if end is not None:
            data = yaml.safe_load("\n".join(content[1:end])) or {}
            return {str(k): str(v) for k, v in data.items()}, end + 1
    options, used = {}, 0
    for line in content:
        m = OPTION.match(line)
        if not m:
            break
        options[m["key"]] = m["val"]
        used += 1
    return options, used


def parse_blocks(text: str, offset: int = 0, depth: int = 0) -> list[Block]:
    """The blocks of a MyST text, in order, with directive bodies flattened in."""
    lines = text.splitlines()
    i, n = 0, len(lines)
    if depth == 0 and lines and lines[0].strip() == "---":  # front matter
        i = 1
        while i < n and lines[i].strip() != "---":
            i += 1
        i += 1
    blocks: list[Block] = []
    para: list[str] = []
    para_start = i

    def flush() -> None:
        nonlocal para
        if any(s.strip() for s in para):
            blocks.append(Block("text", offset + para_start + 1, para, depth=depth))
        para = []

    while i < n:
        line = lines[i]
        fence = FENCE_OPEN.match(line)
        heading = HEADING.match(line)
        target = TARGET.match(line)
        if fence:
            flush()
            char, width = fence["fence"][0], len(fence["fence"])
            close = re.compile(rf"^\s*{re.escape(char)}{{{width},}}\s*$")
            j = next((k for k in range(i + 1, n) if close.match(lines[k])), None)
            if j is None:
                raise ValueError(
                    f"line {offset + i + 1}: {fence['fence']} never closed"
                )
            d = DIRECTIVE.match(fence["info"])
            content = lines[i + 1 : j]
            block = Block("fence", offset + i + 1, content, depth=depth)
            if d:
                block.name, block.arg = d["name"], d["arg"]
                block.options, used = _options(content)
            blocks.append(block)
            if d and block.name not in NOT_ENTERED:
                inner = "\n".join(content[used:])
                blocks += parse_blocks(inner, offset + i + 1 + used, depth + 1)
            i = j + 1
            para_start = i
        elif heading or target:
            flush()
            if heading:
                blocks.append(
                    Block(
                        "heading",
                        offset + i + 1,
                        [line],
                        arg=heading["text"],
                        level=len(heading["hashes"]),
                        depth=depth,
                    )
                )
            else:
                blocks.append(
                    Block(
                        "target",
                        offset + i + 1,
                        [line],
                        name=target["name"],
                        depth=depth,
                    )
                )
            i += 1
            para_start = i
        elif not line.strip():
            flush()
            i += 1
            para_start = i
        else:
            para.append(line)
            i += 1
    flush()
    return blocks


def short_title(title: str) -> str:
    """A result's title without a trailing parenthesis that cites its source."""
    return re.sub(r"\s*\([^()]*\{cite\}[^()]*\)\s*$", "", title)


def is_result(b: Block) -> bool:
    if b.kind != "fence" or not b.name.startswith("prf:"):
        return False
    kind = b.name[4:]
    if kind == "conjecture":
        return "heuristic" in b.arg.lower()
    return kind in RESULT_KINDS


def is_proof(b: Block) -> bool:
    return b.kind == "fence" and b.name == "prf:proof"


def asserts(b: Block) -> bool:
    return (
        b.kind == "fence" and b.name == "code-cell" and bool(ASSERTION.search(b.body))
    )


def proved_in(paragraph: str) -> list[str]:
    """The results named by ``Proved in {prf:ref}`...``` in a paragraph."""
    return [m["label"] for m in PROVED_IN.finditer(" ".join(paragraph.split()))]


def is_citation(paragraph: str) -> bool:
    flat = " ".join(paragraph.split())
    return bool(
        CITE_ROLE.search(flat) and CITED_IN.search(flat) and OMITTED.search(flat)
    )


@dataclass
class Result:
    chapter: str
    kind: str
    label: str
    title: str
    line: int
    proofs: list[Block]
    citations: list[str]
    proved_in: list[str]  # labels of the results a cross-reference names
    unchecked_proofs: list[int]  # lines of proofs with no asserting cell after them
    checked_after: bool  # an asserting cell follows before the next result/heading


def chapters() -> list[str]:
    """The numbered chapters of the table of contents, e.g. ``modelling``."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    names = []
    for part in toc["parts"]:
        if part.get("numbered"):
            names += [Path(c["file"]).name for c in part["chapters"] if "file" in c]
    return names


def check_window(blocks: list[Block], start: int, level: int) -> bool:
    """An asserting cell after blocks[start], before a result or a heading <= level."""
    for b in blocks[start + 1 :]:
        if is_result(b) or (b.kind == "heading" and b.level <= level):
            return False
        if asserts(b):
            return True
    return False


def chapter_results(chapter: str) -> list[Result]:
    blocks = parse_blocks((BOOK / f"{chapter}.md").read_text())
    results = []
    level = 1
    for k, b in enumerate(blocks):
        if b.kind == "heading":
            level = b.level
        if not is_result(b):
            continue
        end = next(
            (m for m in range(k + 1, len(blocks)) if is_result(blocks[m])), len(blocks)
        )
        window = blocks[k + 1 : end]
        proofs = [c for c in window if is_proof(c)]
        unchecked, section = [], level
        for m in range(k + 1, end):
            c = blocks[m]
            if c.kind == "heading":
                section = c.level
            if is_proof(c) and not check_window(blocks, m, section):
                unchecked.append(c.start)
        results.append(
            Result(
                chapter=chapter,
                kind=b.name[4:],
                label=b.options.get("label", ""),
                title=b.arg,
                line=b.start,
                proofs=proofs,
                citations=[
                    c.body for c in window if c.kind == "text" and is_citation(c.body)
                ],
                proved_in=[
                    label
                    for c in window
                    if c.kind == "text"
                    for label in proved_in(c.body)
                ],
                unchecked_proofs=unchecked,
                checked_after=check_window(blocks, k, level),
            )
        )
    return results


def check_targets(chapter: str) -> dict[str, bool]:
    """Every ``*-check-*`` target of a chapter: is the next block an asserting cell?"""
    blocks = parse_blocks((BOOK / f"{chapter}.md").read_text())
    return {
        b.name: k + 1 < len(blocks) and asserts(blocks[k + 1])
        for k, b in enumerate(blocks)
        if b.kind == "target" and "-check-" in b.name
    }


@dataclass
class Row:
    section: int  # chapter number of the section the row is in
    label: str
    statement: str
    status: str
    status_cell: str
    checks: list[str]
    line: int


def _cells(line: str) -> list[str]:
    """The cells of a Markdown table row (an escaped ``\\|`` does not split)."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def results_page() -> tuple[list[Row], dict[str, list[int]]]:
    """The rows of the chapter tables and the table of counts of the list."""
    rows, counts, section = [], {}, 0
    for number, line in enumerate(RESULTS_PAGE.read_text().splitlines(), 1):
        m = re.match(r"^## Chapter (\d+):", line)
        if m:
            section = int(m[1])
            continue
        if not line.startswith("|"):
            continue
        cells = _cells(line)
        ref = re.fullmatch(r"\{prf:ref\}`([^`]+)`", cells[0])
        doc = re.fullmatch(r"\{doc\}`([^`]+)`", cells[0])
        if ref:
            status = next((s for s in STATUSES if cells[2].startswith(s)), "")
            checks = re.findall(r"\{ref\}`[^`<]*<([^>`]+)>`", cells[3])
            rows.append(
                Row(section, ref[1], cells[1], status, cells[2], checks, number)
            )
        elif doc and section == 0:
            counts[doc[1]] = [int(c) for c in cells[1:]]
        elif cells[0] == "Total" and section == 0:
            counts["Total"] = [int(c) for c in cells[1:]]
    return rows, counts


CHAPTERS = chapters()
RESULTS = {ch: chapter_results(ch) for ch in CHAPTERS}
ALL_RESULTS = [r for ch in CHAPTERS for r in RESULTS[ch]]
ROWS, COUNTS = results_page()


# ------------------------------------------------------------------------ parser
SAMPLE = """---
kernelspec: {}
---
# Title

````{admonition} Note
```{prf:lemma} Inner
:label: x-lem

Body with ``` inside a line.
```
````

::::{prf:proof}
:::{note}
Inside.
:::
::::

(x-check)=
```{code-cell} ipython3
# not a heading
assert 1
```

```python
```{prf:theorem} inside plain code
```

:::::{prf:theorem} Colons
---
label: x-thm
---
Text.
:::::

## Next
"""


def test_parser_reads_fences_of_any_length_and_kind():
    blocks = parse_blocks(SAMPLE)
    results = [b for b in blocks if is_result(b)]
    assert [(b.arg, b.options.get("label"), b.depth) for b in results] == [
        ("Inner", "x-lem", 1),
        ("Colons", "x-thm", 0),
    ]
    assert [b.arg for b in blocks if b.kind == "heading"] == ["Title", "Next"]
    proofs = [b for b in blocks if is_proof(b)]
    assert len(proofs) == 1 and proofs[0].lines == [":::{note}", "Inside.", ":::"]
    assert [b.name for b in blocks if b.kind == "fence" and b.depth == 1] == [
        "prf:lemma",
        "note",
    ]
    k = next(k for k, b in enumerate(blocks) if b.kind == "target")
    assert blocks[k].name == "x-check" and asserts(blocks[k + 1])
    assert blocks[k + 1].start == SAMPLE.splitlines().index("(x-check)=") + 2
    with pytest.raises(ValueError, match="never closed"):
        parse_blocks("````{prf:lemma}\n```\n")


def test_citation_pattern():
    assert is_citation("Proved in {cite}`GLPR2023`, App. C; we omit the proof.")
    assert is_citation("This is {cite}`Shub1987`, Thm III.7; we omit its proof.")
    assert not is_citation("Proved in {cite}`GLPR2023`.")  # says nothing of the book
    assert not is_citation("Proved in the paper; we omit the proof.")  # no reference
    assert not is_citation("We omit the proof of {cite}`X`.")  # not where it is proved
    assert proved_in(
        "The case d = 2. Proved in\n{prf:ref}`x-thm`, on every sphere."
    ) == ["x-thm"]
    assert not proved_in("Proved in {cite}`X`; we omit the proof.")
    assert not proved_in("As in {prf:ref}`x-thm`.")


def test_the_book_has_results_in_every_chapter():
    assert CHAPTERS[:5] == [
        "modelling",
        "clustering",
        "gaussian",
        "circle",
        "extremisers",
    ]
    for ch in CHAPTERS:
        assert RESULTS[ch], ch
        for r in RESULTS[ch]:
            assert r.label.startswith(r.label.split("-")[0] + "-"), r
    labels = [r.label for r in ALL_RESULTS]
    assert all(labels) and len(set(labels)) == len(labels)


# ---------------------------------------------------------------------- (a), (b)
@pytest.mark.parametrize("result", ALL_RESULTS, ids=lambda r: r.label)
def test_every_result_is_proved_or_cited(result):
    if result.kind == "conjecture":  # a labelled heuristic: checked, see (b)
        assert result.checked_after, f"{result.label}: a heuristic needs a check"
        return
    assert result.proofs or result.citations or result.proved_in, (
        f"{result.chapter}.md:{result.line} {result.label} has neither a proof block "
        "nor a citation paragraph nor a cross-reference before the next result"
    )


CROSS_REFERENCED = [r for r in ALL_RESULTS if r.proved_in and not r.proofs]


@pytest.mark.parametrize("result", CROSS_REFERENCED, ids=lambda r: r.label)
def test_cross_references_name_a_proof_and_are_checked(result):
    by_label = {r.label: r for r in ALL_RESULTS}
    for label in result.proved_in:
        assert label in by_label, f"{result.label}: no result {label} in the book"
        assert by_label[label].proofs, (
            f"{result.label} is proved in {label}, which has no proof block"
        )
    assert result.checked_after, (
        f"{result.chapter}.md:{result.line} {result.label}: a cross-referenced result "
        "needs an asserting cell after it, before the next result or heading"
    )


@pytest.mark.parametrize("result", ALL_RESULTS, ids=lambda r: r.label)
def test_every_proof_has_an_asserting_cell(result):
    if result.label in CHECKED_ELSEWHERE:
        assert result.unchecked_proofs, (
            f"{result.label} is now checked next to its proof: remove it from "
            "CHECKED_ELSEWHERE"
        )
        target = CHECKED_ELSEWHERE[result.label]
        row = next(r for r in ROWS if r.label == result.label)
        assert target in row.checks, f"the list of results must link {target}"
        return
    assert not result.unchecked_proofs, (
        f"{result.chapter}.md: the proof of {result.label} at line(s) "
        f"{result.unchecked_proofs} has no asserting code cell after it"
    )


# -------------------------------------------------------------------------- (c)
def test_every_result_is_listed_in_order_and_nothing_else():
    listed = [(row.section, row.label) for row in ROWS]
    in_book = [(CHAPTERS.index(r.chapter) + 1, r.label) for r in ALL_RESULTS]
    assert listed == in_book


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.label)
def test_status_agrees_with_the_chapter(row):
    result = next(r for r in ALL_RESULTS if r.label == row.label)
    assert row.statement == short_title(result.title), row
    assert row.status, f"results.md:{row.line}: unknown status {row.status_cell!r}"
    if row.status == "heuristic":
        assert result.kind == "conjecture"
        return
    assert result.kind != "conjecture", f"{row.label} is a heuristic"
    notes = _cells(RESULTS_PAGE.read_text().splitlines()[row.line - 1])[4]
    if result.proved_in and not result.proofs:  # a cross-reference
        assert proved_in(notes) == result.proved_in, (
            f"results.md:{row.line}: the notes start with 'proved in' and name "
            f"{result.proved_in}"
        )
        for label in result.proved_in:
            target = next(r for r in ROWS if r.label == label)
            assert row.status == target.status, (
                f"{row.label} is proved in {label}: its status is {target.status!r}"
            )
        return
    assert not PROVED_IN.match(notes), f"{row.label} has a proof of its own"
    if row.status == "cited":
        assert result.citations and not result.proofs, row.label
        assert CITE_ROLE.search(row.status_cell), "name the reference"
    else:
        assert result.proofs, f"{row.label} is '{row.status}' but has no proof block"
    if row.status == "proved":
        sketched = [p.start for p in result.proofs if SKETCH.search(p.body)]
        assert not sketched, f"{row.label}: the proof at {sketched} is partly a sketch"
    if row.status == "proved in part":
        line = RESULTS_PAGE.read_text().splitlines()[row.line - 1]
        assert CITE_ROLE.search(line) or "sketch" in line, (
            f"{row.label}: say which part is cited or sketched"
        )


def test_checks_link_targets_before_asserting_cells():
    targets = {}
    for ch in CHAPTERS:
        targets.update(check_targets(ch))
    assert all(targets.values()), [t for t, ok in targets.items() if not ok]
    linked = {t for row in ROWS for t in row.checks}
    assert linked <= targets.keys(), linked - targets.keys()
    assert targets.keys() <= linked, targets.keys() - linked
    no_check = [row.label for row in ROWS if not row.checks]
    assert all(
        next(r for r in ALL_RESULTS if r.label == lab).citations for lab in no_check
    ), "only cited results may go without a check"


def test_the_table_of_counts_agrees_with_the_rows():
    expected = {}
    for number, ch in enumerate(CHAPTERS, 1):
        statuses = [row.status for row in ROWS if row.section == number]
        expected[ch] = [len(statuses)] + [
            statuses.count(s)
            for s in ("proved", "proved in part", "sketched", "cited", "heuristic")
        ]
    expected["Total"] = [sum(col) for col in zip(*expected.values())]
    assert COUNTS == expected


# -------------------------------------------------------------------------- (d)
def test_at_least_twenty_full_proofs():
    again = {r.label for r in CROSS_REFERENCED}
    proved = [
        row.label for row in ROWS if row.status == "proved" and row.label not in again
    ]
    assert len(proved) >= 20, proved
