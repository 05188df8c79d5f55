"""Inline maths that Markdown would split: the chapters' sources, as MyST parses them.

``python -m tools.maths_lint [FILE ...]`` (by default the chapters and pages under
``book/``) parses each file with the Markdown parser of the book (myst-parser, with
the extensions of ``_config.yml``) and reports every piece of text that the parser
left outside a formula but that still holds a ``$`` or a TeX command (``\\frac``,
``\\langle``, ...): the sign of an inline formula ``$...$`` that Markdown cut in two.
Three causes are common:

* a formula that continues on a line beginning with ``+ ``, ``- `` or ``* ``
  (or ``1. ``): the line starts a list item in the middle of the formula;
* a ``*`` inside the formula (``t^*``) that pairs with another one and opens
  emphasis when the formula itself was not recognised;
* display maths ``$$`` that follows a line of text with no blank line between
  them: it cannot interrupt a paragraph, and its dollars pair with their neighbours.

Either prints raw TeX on the page, in the reader's notebook and in the PDF. The fix
is to reflow the lines so that no line of a formula starts with such a marker (or to
write the formula as ``{math}`` role or display maths). The contents of directives
(``{prf:proof}``, ``{admonition}``, ...) are parsed as MyST parses them; code cells,
code blocks and display maths are skipped. An escaped dollar (``\\$``) is text.

Each finding names the file and the line: ``book/x.md:324: ...``.
"""

from __future__ import annotations

import re
import sys
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEX_COMMAND = re.compile(r"\\[A-Za-z]+")
# directives whose body is not Markdown
VERBATIM = {
    "code-cell",
    "code-block",
    "code",
    "sourcecode",
    "math",
    "raw",
    "eval-rst",
    "csv-table",
    "list-table",
    "mermaid",
    "bibliography",
    "literalinclude",
    "toctree",
    "tableofcontents",
}
DIRECTIVE = re.compile(r"^\{([\w:-]+)\}\s*(.*)$")
CAUSES = (
    "a formula is cut (a line inside it that starts with '+ ', '- ', '* ' or '1. ',"
    " a '*' read as emphasis, or '$$' not preceded by a blank line)"
)
SKIP_INLINE = {"math_inline", "math_inline_double", "code_inline", "myst_role"}


def _extensions() -> list[str]:
    import yaml

    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    return list(config.get("parse", {}).get("myst_enable_extensions", []))


@lru_cache(maxsize=1)
def parser():
    """The MyST Markdown parser with the book's extensions (escapes kept apart)."""
    from markdown_it.renderer import RendererHTML
    from myst_parser.config.main import MdParserConfig
    from myst_parser.parsers.mdit import create_md_parser

    md = create_md_parser(MdParserConfig(enable_extensions=_extensions()), RendererHTML)
    # keep an escaped character (\$) apart from the text around it
    md.disable("text_join", ignoreInvalid=True)
    return md


def _body(content: str) -> tuple[str, int]:
    """A directive's body without its options; the number of lines dropped."""
    lines = content.split("\n")
    skip = 0
    if lines and lines[0].strip() == "---":
        end = next((k for k in range(1, len(lines)) if lines[k].strip() == "---"), None)
        if end is not None:
            skip = end + 1
    else:
        while skip < len(lines) and re.match(r"^\s*:[\w-]+:", lines[skip]):
            skip += 1
    return "\n".join(lines[skip:]), skip


def _inline(token, name: str, first_line: int) -> list[str]:
    """Findings in the children of an inline token whose source starts at
    ``first_line`` (1-based)."""
    lines: dict[int, str] = {}  # line -> the text of that line outside formulas
    line = first_line
    for child in token.children or []:
        if child.type in ("softbreak", "hardbreak"):
            line += 1
            continue
        if child.type in SKIP_INLINE:
            lines[line] = lines.get(line, "") + " "
            line += child.content.count("\n")
            continue
        if child.type == "text_special" and child.content != child.markup:
            # an escaped character (\$) is meant as text: not a sign of a cut
            lines[line] = lines.get(line, "") + " "
            continue
        if child.type not in ("text", "text_special"):
            continue
        for k, part in enumerate(child.content.split("\n")):
            lines[line + k] = lines.get(line + k, "") + part
        line += child.content.count("\n")
    found = []
    for where, part in lines.items():
        if "$" in part:
            found.append(
                f"{name}:{where}: a '$' outside any formula ({part.strip()[:60]!r})"
                f": {CAUSES}"
            )
        elif TEX_COMMAND.search(part):
            cmd = TEX_COMMAND.search(part).group(0)
            found.append(
                f"{name}:{where}: the TeX command {cmd} outside any formula "
                f"({part.strip()[:60]!r}): {CAUSES}"
            )
    return found


def lint_text(text: str, name: str, line_offset: int = 0) -> list[str]:
    """Findings of one Markdown text; line numbers start at ``line_offset + 1``."""
    found = []
    for token in parser().parse(text):
        start = token.map[0] + line_offset + 1 if token.map else line_offset + 1
        if token.type == "inline":
            found += _inline(token, name, start)
        elif token.type in ("fence", "colon_fence"):
            m = DIRECTIVE.match(token.info.strip())
            if m is None or m.group(1) in VERBATIM:
                continue
            # the directive's argument (a title) and its body are Markdown
            if m.group(2):
                found += lint_text(m.group(2), name, start - 1)
            body, skip = _body(token.content)
            found += lint_text(body, name, start + skip)
    return found


def lint_file(path: Path) -> list[str]:
    """Findings of one file, named relative to the repository when inside it."""
    path = Path(path)
    try:
        name = path.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        name = str(path)
    return lint_text(path.read_text(encoding="utf-8"), name)


def book_sources(root: Path = ROOT) -> list[Path]:
    """The Markdown sources of the book (chapters, pages, assignment masters)."""
    return sorted(
        p
        for p in (root / "book").rglob("*.md")
        if "_vendor" not in p.parts and not any(s.startswith(".") for s in p.parts)
    )


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    paths = [Path(a) for a in args] or book_sources()
    found = [f for p in paths for f in lint_file(p)]
    for f in found:
        print(f)
    print(f"{len(paths)} files, {len(found)} cut formulas")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
