"""Every formula of a chapter reaches the book as a formula.

MyST reads a chapter's Markdown before any formula: a line of a paragraph that starts
with ``+ `` or ``- `` starts a list, even inside ``$...$``, and ``$$`` inside a
paragraph of a list item is not a display. The formula's LaTeX is then printed as
text in the HTML book and the PDF. This reads each chapter, and every other page
written by hand, with the book's own MyST parser (directive bodies too), and fails on
text that still holds a ``$`` or a LaTeX command.
"""

import re
from pathlib import Path

import pytest
import yaml
from myst_parser.config.main import MdParserConfig
from myst_parser.parsers.mdit import create_md_parser
from markdown_it.renderer import RendererHTML

ROOT = Path(__file__).resolve().parents[1]
# the chapters and the other pages written by hand (the coursework's masters too)
CHAPTERS = sorted(
    p
    for pattern in ("*.md", "assignments/*.md", "coursework/*.md")
    for p in (ROOT / "book").glob(pattern)
)
# the extensions the book enables
EXTENSIONS = set(
    yaml.safe_load((ROOT / "_config.yml").read_text())["parse"][
        "myst_enable_extensions"
    ]
)
LATEX = re.compile(r"\$|\\[A-Za-z]+")
OPTION = re.compile(r"^:\w[\w-]*:.*$")
# directives whose body is not Markdown
VERBATIM = {"math", "code-cell", "code", "code-block", "raw", "eval-rst", "toctree"}


def parser():
    config = MdParserConfig(enable_extensions=EXTENSIONS, heading_anchors=3)
    return create_md_parser(config, RendererHTML)


def stray_latex(text: str, md=None) -> list[str]:
    """Pieces of text (outside formulas and code) that hold LaTeX."""
    md = md or parser()
    out = []
    for token in md.parse(text):
        if token.type in ("fence", "colon_fence"):
            info = token.info.strip()
            name = info[1:].split("}")[0] if info.startswith("{") else None
            if name is not None and name not in VERBATIM:
                body = "\n".join(
                    line
                    for line in token.content.splitlines()
                    if not OPTION.match(line)
                )
                out += stray_latex(body, md)
            continue
        for child in token.children or []:
            if child.type == "text" and LATEX.search(child.content):
                out.append(child.content)
    return out


def test_the_check_finds_a_formula_broken_by_a_list():
    broken = "A sum $a = b\n+ c$ and more.\n"
    assert stray_latex(broken)
    assert stray_latex("```{prf:proof}\n:label: p\n" + broken + "```\n")
    assert stray_latex("1. So\n   $$x = \\frac12$$\n   follows.\n")
    assert stray_latex("A sum $a = b +\nc$ and more.\n") == []


@pytest.mark.parametrize(
    "chapter", CHAPTERS, ids=lambda p: p.relative_to(ROOT / "book").as_posix()
)
def test_no_latex_outside_formulas(chapter):
    assert stray_latex(chapter.read_text()) == []
