"""A chapter that says its numbers are asserted asserts each of them.

A chapter may open with the sentence "Every quantitative sentence below is printed by
a cell that asserts it". Static and fast: the chapter is parsed, nothing is executed.
The test reads every number of its running text (paragraphs and list items outside
directives, inline math included; not display math, theorems, proofs, exercises'
statements, headings, code spans or the labels of roles) and looks for it among the
numeric literals of the code cells:

* a number is *covered* if the same value is a literal of an ``assert`` statement
  anywhere in the chapter, or a literal of any code cell of the same section
  (between two headings of level 1 or 2: the parameters of a run are literals of
  the cell that runs it); the section "Summary" repeats the chapter's numbers, and a
  literal of any cell of the chapter covers them there;
* references are not numbers of the text: "Fig 5", "Thm 6.8", "Theorem 4.1",
  "Lemma 8.1.2", "§10.37", "arXiv:2412.09080", "v4", "d = 2" style parameters are
  read like any other number;
* ``10^{31}``, ``10^{-8}``, ``2\\cdot10^{3}`` are read as the values they write (a
  bare power of ten, "about 10^{31}", is also covered by its exponent in an assert:
  ``round(np.log10(t)) == 31``),
  ``25%`` as 25 or 0.25, ``47-fold`` as 47; a literal ``10 ** 31`` or ``1e31`` in a
  cell is the value ``1e31``.

So a number that a cell prints but does not assert (say "by t ≈ 3.1" from a printed
array) is reported unless 3.1 is written in an assert of the chapter or in the code
of its section. Literals of the same value that guard something else cover it too:
the check catches the numbers nobody wrote into code, not a coincidence.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

from tests.test_results import OPTION, parse_blocks

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"

CLAIM = re.compile(
    r"every quantitative sentence\b[^.]*\bprinted by a cell that asserts it",
    re.IGNORECASE,
)
ROLE = re.compile(r"\{[\w:-]+\}`[^`]*`")
CODE_SPAN = re.compile(r"`[^`]*`")
LINK = re.compile(r"\]\([^)]*\)")
REFERENCE = re.compile(
    r"(?:\bFigs?\.?|\bFigures?|\bThms?\.?|\bTheorems?|\bLemmas?|\bProps?\.?|"
    r"\bPropositions?|\bCor(?:ollary)?\.?|\bSections?|§|\bEqs?\.?|\bTables?|"
    r"\bChapters?|\bApp\.?|\bAppendix)\s*~?[A-Z]?\d+(?:\.\d+)*(?:\s*[–-]\s*\d+)?"
    r"|arXiv:\s*\d+\.\d+(?:v\d+)?|\bv\d+\b|\[[A-Z]+\]"
)
POWER = re.compile(
    r"(?:(?P<mant>\d+(?:\.\d+)?)\s*\\cdot\s*)?10\^\{?(?P<exp>[-−]?\d+)\}?"
)
NUMBER = re.compile(r"(?<![\w.])(?P<num>\d+(?:\.\d+)?)(?P<pct>\s*\\?%)?")


def prose_numbers(text: str) -> list[tuple[str, set[float]]]:
    """The numbers of a paragraph: (as written, the values it may stand for).

    For a bare power of ten the exponent is among the values, marked by a negative
    zero imaginary part (a complex number): it counts only against asserted literals.
    """
    flat = " ".join(text.split())
    flat = ROLE.sub(" ", flat)
    flat = CODE_SPAN.sub(" ", flat)
    flat = LINK.sub("]", flat)
    flat = REFERENCE.sub(" ", flat)
    out = []

    def power(m):
        mant = float(m["mant"]) if m["mant"] else 1.0
        exp = int(m["exp"].replace("−", "-"))
        values = {mant * 10.0**exp}
        if not m["mant"]:
            values.add(complex(exp, -0.0))
        out.append((m.group(0), values))
        return " "

    flat = POWER.sub(power, flat)
    # subscripts, superscripts and indices of symbols are not quantities
    flat = re.sub(r"[_^]\{[^}]*\}|[_^]-?\w", " ", flat)
    for m in NUMBER.finditer(flat):
        v = float(m["num"])
        values = {v, v / 100} if m["pct"] else {v}
        out.append((m.group(0).strip(), values))
    return out


def code_literals(source: str) -> tuple[set[float], set[float]]:
    """Numeric literals of a cell: (all of them, those inside assert statements)."""
    lines = source.splitlines()
    if lines and lines[0].strip() == "---":  # the options as a YAML block
        lines = lines[lines.index("---", 1) + 1 :]
    lines = [ln for ln in lines if not OPTION.match(ln)]
    code = "\n".join(ln for ln in lines if not ln.lstrip().startswith(("%", "!")))
    toks = [
        t
        for t in tokenize.generate_tokens(io.StringIO(code).readline)
        if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT)
    ]
    asserted_lines = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Assert):
            asserted_lines.update(range(node.lineno, node.end_lineno + 1))
    everything, asserted = set(), set()
    for k, t in enumerate(toks):
        if t.type != tokenize.NUMBER:
            continue
        try:
            v = float(t.string.replace("_", "").rstrip("jJ"))
        except ValueError:
            continue
        vals = {v}
        # 10 ** k and 10 ** -k
        if v == 10 and k + 2 < len(toks) and toks[k + 1].string == "**":
            j, sign = k + 2, 1
            if toks[j].string == "-":
                j, sign = j + 1, -1
            if j < len(toks) and toks[j].type == tokenize.NUMBER:
                vals.add(10.0 ** (sign * float(toks[j].string)))
        everything |= vals
        if t.start[0] in asserted_lines:
            asserted |= vals
    return everything, asserted


def _match(values: set, pool: set[float], asserted: bool = False) -> bool:
    """Whether a value is in the pool; exponents (complex) only if ``asserted``."""
    plain = {v for v in values if not isinstance(v, complex)}
    plain |= {v.real for v in values if isinstance(v, complex) and asserted}
    return any(abs(v - p) <= 1e-9 * max(1.0, abs(v)) for v in plain for p in pool)


def uncovered_numbers(text: str) -> list[tuple[int, str]]:
    """(line, number) of every number of the running text that no code covers."""
    blocks = parse_blocks(text)
    sections: list[list] = [[]]
    for b in blocks:
        if b.kind == "heading" and b.level <= 2 and b.depth == 0:
            sections.append([])
        sections[-1].append(b)
    asserted_anywhere: set[float] = set()
    section_code: list[set[float]] = []
    for sec in sections:
        pool: set[float] = set()
        for b in sec:
            if b.kind == "fence" and b.name == "code-cell":
                everything, asserted = code_literals(b.body)
                pool |= everything
                asserted_anywhere |= asserted
        section_code.append(pool)
    chapter_code = set().union(*section_code)
    for k, sec in enumerate(sections):
        if sec and sec[0].kind == "heading" and sec[0].arg.strip() == "Summary":
            section_code[k] = chapter_code
    missing = []
    for sec, pool in zip(sections, section_code):
        for b in sec:
            if b.kind != "text" or b.depth != 0:
                continue
            for written, values in prose_numbers(b.body):
                if not (
                    _match(values, asserted_anywhere, True) or _match(values, pool)
                ):
                    missing.append((b.start, written))
    return missing


def claiming_chapters() -> list[Path]:
    return sorted(p for p in BOOK.glob("*.md") if CLAIM.search(p.read_text()))


# --------------------------------------------------------------- the checker
CHAPTER = """---
kernelspec:
  name: python3
---

# A chapter

Every quantitative sentence below is printed by a cell that asserts it.

## Runs

```{{code-cell}} ipython3
times = run(n=64, dt=0.0025)
print(times)
assert times[0] < 2
{extra}
```

The first cluster arrives by $t \\approx 1.3$ ({{cite}}`X`, Fig 5, Thm 6.8), with
$n = 64$ tokens and $dt = 0.0025$; the time grows to about $10^{{31}}$.
"""


def test_checker_reports_a_printed_number_that_is_not_asserted():
    assert [w for _, w in uncovered_numbers(CHAPTER.format(extra=""))] == [
        "10^{31}",
        "1.3",
    ]
    # asserting both numbers covers them; the references are not numbers
    fixed = CHAPTER.format(extra="assert round(times[0], 1) == 1.3 and t < 10**31")
    assert uncovered_numbers(fixed) == []
    # a literal of another section's code does not cover a number
    elsewhere = CHAPTER.format(extra="") + "\n## Else\n\n```{code-cell}\nx = 1.3\n```\n"
    assert "1.3" in [w for _, w in uncovered_numbers(elsewhere)]


def test_checker_reads_percentages_and_powers():
    nums = dict(prose_numbers(r"fall 5–25\% short, $2\cdot10^{3}$ tokens, 47-fold"))
    assert nums["25\\%"] == {25.0, 0.25}
    assert nums["2\\cdot10^{3}"] == {2000.0}
    assert 1e31 in dict(prose_numbers("about $10^{31}$"))["10^{31}"]
    assert nums["47"] == {47.0}


def test_frontiers_makes_the_claim():
    assert BOOK / "frontiers.md" in claiming_chapters()


@pytest.mark.parametrize("path", claiming_chapters(), ids=lambda p: p.stem)
def test_every_number_of_a_claiming_chapter_is_covered(path):
    missing = uncovered_numbers(path.read_text())
    assert not missing, f"{path.name}: numbers not asserted: " + ", ".join(
        f"line {ln}: {w}" for ln, w in missing
    )
