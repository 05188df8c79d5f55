"""Citations in JupyterLab as the book prints them: ``[Geshkovski et al., 2025]``.

jupyterlab-myst (2.7) parses ``{cite}`` but resolves no citation: it has no
bibliography (nothing reads ``references.bib`` or a ``myst.yml``), and it prints
every citation as its raw key with a warning sign ("Citation Not Found"). Nothing
in a chapter's frontmatter or in JupyterLab's settings changes that, and jupytext
opens the chapter's text as it is. So the book ships a small JupyterLab extension,
written here from ``book/references.bib``: it finds the citations that
jupyterlab-myst could not resolve and shows each with the label of the book's
bibliography (:mod:`bookext.bibstyle`): ``[Geshkovski et al., 2025]`` for
``{cite}``, ``Geshkovski et al. [2025]`` for ``{cite:t}``, the full reference on
hovering. The chapter's text is not touched; a key missing from the bibliography
keeps jupyterlab-myst's warning. jupyterlab-myst draws ``{cite}`a,b``` and
``{cite:t}`a``` alike (a group of citations, both "narrative"): a group of one is
taken for ``{cite:t}``, a group of several for ``{cite}``, which holds as long as
the chapters give ``{cite:t}`` one key at a time (a test checks that they do).

The extension is plain JavaScript with no dependency, written once
(``binder/labextensions/attnlib-book-citations/static/remoteEntry.js``: a
module-federation container as ``jupyter labextension build`` would produce, by
hand); its plugin watches the page and rewrites the text of those citations from
``citations.json`` beside it, which this module writes. It is committed, so that
Binder needs no bibliography tools: ``make lab`` points JupyterLab at
``binder/labextensions`` and Binder's ``postBuild`` copies it into the environment.
``python -m tools.lab_citations`` writes ``citations.json`` again (after a change to
``references.bib``); ``--check`` fails when it is out of date.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NAME = "attnlib-book-citations"
FOLDER = ROOT / "binder" / "labextensions" / NAME
BIB = ROOT / "book" / "references.bib"


def citations(bib: Path = BIB) -> dict[str, dict[str, str]]:
    """``key -> {"names", "year", "reference"}``: the label of the book's
    bibliography (``Geshkovski et al., 2025``, split at its last comma) and the
    reference as the bibliography prints it."""
    from pybtex.database import parse_file

    from bookext.bibstyle import AuthorYearStyle, register

    register()
    entries = parse_file(str(bib)).entries
    out = {}
    for entry in AuthorYearStyle().format_entries(entries.values()):
        names, _, year = entry.label.rpartition(", ")
        text = entry.text.render_as("text")
        out[entry.key] = {"names": names, "year": year, "reference": text}
    return dict(sorted(out.items()))


def data(bib: Path = BIB) -> str:
    """``static/citations.json``: what the extension shows for each key."""
    return json.dumps(citations(bib), indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    path = FOLDER / "static" / "citations.json"
    text = data()
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return 0
    if "--check" in argv:
        print(f"{path.relative_to(ROOT)} is out of date: python -m tools.lab_citations")
        return 1
    path.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
