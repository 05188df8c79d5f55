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

The extension is plain JavaScript with no dependency: a module-federation
container (what ``jupyter labextension build`` produces, written by hand) whose
plugin watches the page and rewrites the text of those citations. It lives in
``binder/labextensions/`` (committed, so that Binder needs no bibliography tools):
``make lab`` points JupyterLab at that folder and Binder's ``postBuild`` copies it
into the environment. ``python -m tools.lab_citations`` writes it again (after a
change to ``references.bib``); ``--check`` fails when it is out of date.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NAME = "attnlib-book-citations"
VERSION = "1.0.0"
FOLDER = ROOT / "binder" / "labextensions" / NAME
BIB = ROOT / "book" / "references.bib"

SCRIPT = """\
// Written by python -m tools.lab_citations from book/references.bib: do not edit.
// jupyterlab-myst prints a citation it cannot resolve as its key; this plugin shows
// the label of the book's bibliography instead (see tools/lab_citations.py).
var _JUPYTERLAB;
(function () {
  "use strict";
  var CITATIONS = __CITATIONS__;
  var STYLE = [
    ".attnlib-cite { color: inherit !important; }",
    ".attnlib-cite > svg { display: none; }",
    ".cite-group.attnlib-parenthetical::before { content: '['; }",
    ".cite-group.attnlib-parenthetical::after { content: ']'; }"
  ].join("\\n");

  function show(span) {
    var last = span.lastChild;
    var key = span.getAttribute("data-cite-key") ||
      (last && last.nodeType === 3 ? last.nodeValue : span.textContent).trim();
    var entry = CITATIONS[key];
    if (!entry) { return; }
    // jupyterlab-myst draws {cite}`a` as a lone citation, and {cite}`a,b` and
    // {cite:t}`a` alike as a group; the book writes {cite:t} with one key only
    var group = span.parentElement && span.parentElement.closest(".cite-group");
    var narrative = group !== null && group.children.length === 1;
    var text = narrative ? entry.names + " [" + entry.year + "]"
                         : entry.names + ", " + entry.year;
    if (!group) { text = "[" + text + "]"; }
    if (group && !narrative && !group.classList.contains("attnlib-parenthetical")) {
      group.classList.add("attnlib-parenthetical");
    }
    var node = span.lastChild;
    if (!node || node.nodeType !== 3) {
      node = document.createTextNode("");
      span.appendChild(node);
    }
    if (node.nodeValue !== text) { node.nodeValue = text; }
    if (span.getAttribute("data-cite-key") !== key) {
      span.setAttribute("data-cite-key", key);
    }
    if (span.title !== entry.reference) { span.title = entry.reference; }
    if (!span.classList.contains("attnlib-cite")) {
      span.classList.add("attnlib-cite");
    }
  }

  function showAll() {
    var found = document.querySelectorAll(
      '.jp-Notebook span[title="Citation Not Found"], .jp-Notebook span.attnlib-cite'
    );
    for (var i = 0; i < found.length; i++) { show(found[i]); }
  }

  var plugin = {
    id: "__NAME__:plugin",
    description: "Citations shown with the labels of the book's bibliography.",
    autoStart: true,
    activate: function () {
      var style = document.createElement("style");
      style.textContent = STYLE;
      document.head.appendChild(style);
      var pending = false;
      new MutationObserver(function () {
        if (pending) { return; }
        pending = true;
        window.requestAnimationFrame(function () { pending = false; showAll(); });
      }).observe(document.body, {childList: true, subtree: true, characterData: true});
      showAll();
    }
  };

  (_JUPYTERLAB = typeof _JUPYTERLAB === "undefined" ? {} : _JUPYTERLAB)["__NAME__"] = {
    init: function () {},
    get: function (module) {
      if (module !== "./extension") {
        return Promise.reject(new Error("no module " + module + " in __NAME__"));
      }
      return Promise.resolve(function () {
        return {__esModule: true, default: plugin};
      });
    }
  };
})();
"""


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


def files(bib: Path = BIB) -> dict[str, str]:
    """The extension's files, by path under its folder."""
    data = json.dumps(citations(bib), indent=2, ensure_ascii=False)
    script = SCRIPT.replace("__CITATIONS__", data.replace("\n", "\n  ")).replace(
        "__NAME__", NAME
    )
    package = {
        "name": NAME,
        "version": VERSION,
        "description": "The Mathematics of Transformers: citations in JupyterLab",
        "license": "MIT",
        "jupyterlab": {
            "extension": True,
            "_build": {"load": "static/remoteEntry.js", "extension": "./extension"},
        },
    }
    return {
        "package.json": json.dumps(package, indent=2) + "\n",
        "static/remoteEntry.js": script,
    }


def main(argv: list[str]) -> int:
    stale = []
    for rel, text in files().items():
        path = FOLDER / rel
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            stale.append(rel)
            if "--check" not in argv:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
    if "--check" in argv and stale:
        print(
            f"{FOLDER.relative_to(ROOT)} is out of date: python -m tools.lab_citations"
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
