"""Check the text of the PDF book: no text stand-ins for pictures, chapters 1-8.

``python -m bookext.pdfcheck [_build/latex/book.pdf]`` (``make pdf`` runs it) reads
the PDF with ``pdftotext`` (Debian's poppler-utils) and fails when

* an output printed the text of an object instead of its picture: a player
  (``IPython.core.display``), a widget (``children=(``) or a progress bar (``0%|``);
* the chapters are not numbered 1 to 8 in order (Modelling, Clustering, the
  Gaussian case, the circle, energy extremisers, frontiers, trained Transformers,
  frontiers II), the introduction being front matter;
* the solutions of the exercises are printed;

and it reads the log of LaTeX's last run beside it (``book.log``), failing on

* an unresolved reference (``Reference `...' on page N undefined``, a hyper
  reference or citation likewise, or LaTeX's closing "There were undefined
  references");
* a missing glyph (``Missing character: There is no ... in font ...``: XeTeX
  prints nothing in its place).

It prints the number of pages, of unresolved references and of missing glyphs.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

FORBIDDEN = ("IPython.core.display", "children=(", "0%|")
#: the text of a widget box where its picture belongs ("HBox(...)", "VBox(children=");
#: code that builds one from a list, ``widgets.HBox([a, b])``, is source, not output
BOX_REPR = re.compile(r"\b[HV]Box\((?!\[)")
# a word of the title of each numbered chapter of _toc.yml, in order
CHAPTERS = (
    "Modelling",
    "Clustering",
    "Gaussian",
    "circle",
    "extremisers",
    "Frontiers",
    "Trained",
    "Frontiers II",
)


def pdf_text(pdf: Path) -> str:
    return subprocess.run(
        ["pdftotext", "-layout", str(pdf), "-"],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    ).stdout


def pages(pdf: Path) -> int:
    info = subprocess.run(
        ["pdfinfo", str(pdf)], capture_output=True, text=True, check=True
    ).stdout
    return int(re.search(r"^Pages:\s+(\d+)", info, re.M).group(1))


def failures(text: str) -> list[str]:
    """What is wrong with the text of the PDF."""
    out = [f"the PDF prints {bad!r}" for bad in FORBIDDEN if bad in text]
    out += [f"the PDF prints {m.group()!r}" for m in BOX_REPR.finditer(text)][:1]
    # the running heads of Sphinx's LaTeX style: "<page>   Chapter N. Title" on a
    # line of its own (a sentence that ends with "Chapter 6." is not a head)
    heads = re.findall(r"^\s*\d+\s+Chapter (\d+)\. (.+)$", text, re.M)
    numbered = {int(n): title.strip() for n, title in heads}
    for number, word in enumerate(CHAPTERS, start=1):
        title = numbered.get(number, "")
        if word.lower() not in title.lower():
            out.append(f"chapter {number} is {title!r}, expected the {word} chapter")
    if numbered and max(numbered) > len(CHAPTERS):
        out.append(f"chapters numbered up to {max(numbered)}, not 1 to {len(CHAPTERS)}")
    if re.search(r"^\s*Solution to Exercise", text, re.M):
        out.append("the PDF prints the solutions of the exercises")
    return out


#: TeX breaks the lines of its log after this many characters
LOG_WIDTH = 79
UNRESOLVED = re.compile(
    r"(?:LaTeX|Package natbib) Warning: (?:Hyper reference|Reference|Citation) "
    r"`(.*?)' on page \S+ undefined"
)
UNDEFINED = re.compile(r"Warning: There were undefined (?:references|citations)")
MISSING = re.compile(r"Missing character: There is no (.*?) in font (.*?)!")


def unwrap(log: str) -> str:
    """The log with TeX's broken lines joined again."""
    lines, held = [], ""
    for line in log.split("\n"):
        held += line
        if len(line) != LOG_WIDTH:
            lines.append(held)
            held = ""
    return "\n".join(lines + ([held] if held else []))


def log_problems(log: str) -> tuple[list[str], list[str]]:
    """The unresolved references and the missing glyphs of a LaTeX log."""
    text = unwrap(log)
    refs = UNRESOLVED.findall(text)
    if not refs and UNDEFINED.search(text):
        refs = ["(LaTeX: there were undefined references)"]
    glyphs = [f"{char} in {font}" for char, font in MISSING.findall(text)]
    return refs, glyphs


def log_failures(log: str) -> list[str]:
    """What is wrong according to the log of LaTeX's last run."""
    refs, glyphs = log_problems(log)
    return [f"unresolved reference {r}" for r in refs] + [
        f"missing glyph: {g}" for g in glyphs
    ]


def main(argv: list[str]) -> int:
    pdf = Path(argv[0] if argv else "_build/latex/book.pdf")
    text = pdf_text(pdf)
    bad = failures(text)
    log = pdf.with_suffix(".log")
    if log.exists():
        text = log.read_text(encoding="utf-8", errors="replace")
        refs, glyphs = log_problems(text)
        bad += log_failures(text)
    else:
        refs = glyphs = []
        bad.append(f"no LaTeX log {log} beside the PDF")
    for f in bad:
        print("FAIL", f)
    print(
        f"{pdf}: {pages(pdf)} pages, {len(refs)} unresolved references, "
        f"{len(glyphs)} missing glyphs, {'failed' if bad else 'passed'}"
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
