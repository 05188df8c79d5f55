"""The book's search folds diacritics: "Lojasiewicz" finds "Łojasiewicz".

Sphinx's search stems each word of the pages when it writes the index (Python) and
each word of a query in the reader's browser (JavaScript, ``language_data.js``); a
query matches the words whose stems are equal. :class:`SearchEnglishFolded` is the
English search with both stemmers preceded by the same folding (:func:`fold`):
accents and other marks are removed after Unicode decomposition, and the letters
without a decomposition are replaced (``ł`` -> ``l``, ``ø`` -> ``o``, ``ß`` ->
``ss``, ...). Whether a reader types the accent or not, the query's stem is the
stem of the folded word in the index.

The summary under each result is the text of the page around the query's words,
which the browser reads from the page's HTML (``searchtools.js``); there a formula
typeset by KaTeX (:mod:`bookext.katex`) is its glyphs twice, once in HTML and once in
MathML, with its TeX source in the MathML's ``<annotation>``
(``\\langle x, y\\rangle``). The same script (``language_data.js``, loaded
with the search on every page) reads each formula of a summary from that TeX as plain
text instead
(:data:`TEX_SYMBOLS`: ``\\langle x, y\\rangle`` reads ``⟨x, y⟩``, ``\\frac{a}{b}``
reads ``a/b``; any other command is dropped), so that no summary prints raw TeX.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

from sphinx.search.en import SearchEnglish

# letters that Unicode does not decompose into a base letter and a mark
LETTERS = {
    "ł": "l",
    "Ł": "L",
    "ø": "o",
    "Ø": "O",
    "đ": "d",
    "Đ": "D",
    "ð": "d",
    "Ð": "D",
    "þ": "th",
    "Þ": "Th",
    "ß": "ss",
    "æ": "ae",
    "Æ": "Ae",
    "œ": "oe",
    "Œ": "Oe",
    "ı": "i",
}


# the combining marks removed after decomposition (the same ranges in the browser)
MARKS = "\\u0300-\\u036f\\u1ab0-\\u1aff\\u1dc0-\\u1dff\\u20d0-\\u20ff"
_MARKS = re.compile(f"[{MARKS}]")


def fold(word: str) -> str:
    """``word`` without diacritics: ``fold("Łojasiewicz") == "Lojasiewicz"``."""
    bare = _MARKS.sub("", unicodedata.normalize("NFKD", word))
    return "".join(LETTERS.get(c, c) for c in bare)


# TeX commands of the book's formulas and the text a search summary shows for them
TEX_SYMBOLS = {
    **dict(
        zip(
            "alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota "
            "kappa lambda mu nu xi pi rho sigma tau upsilon phi varphi chi psi omega "
            "Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi Omega".split(),
            "αβγδεεζηθϑικλμνξπρστυφφχψωΓΔΘΛΞΠΣΥΦΨΩ",
        )
    ),
    "R": "ℝ",
    "S": "𝕊",
    "ell": "ℓ",
    "top": "ᵀ",
    "le": "≤",
    "leq": "≤",
    "ge": "≥",
    "geq": "≥",
    "ne": "≠",
    "neq": "≠",
    "lesssim": "≲",
    "gtrsim": "≳",
    "ll": "≪",
    "gg": "≫",
    "approx": "≈",
    "sim": "∼",
    "equiv": "≡",
    "cong": "≅",
    "propto": "∝",
    "pm": "±",
    "mp": "∓",
    "times": "×",
    "cdot": "·",
    "ast": "*",
    "star": "⋆",
    "circ": "∘",
    "otimes": "⊗",
    "oplus": "⊕",
    "odot": "⊙",
    "to": "→",
    "mapsto": "↦",
    "leftarrow": "←",
    "uparrow": "↑",
    "iff": "⇔",
    "infty": "∞",
    "partial": "∂",
    "nabla": "∇",
    "sum": "Σ",
    "int": "∫",
    "iint": "∬",
    "in": "∈",
    "notin": "∉",
    "ni": "∋",
    "subset": "⊂",
    "subseteq": "⊆",
    "cap": "∩",
    "cup": "∪",
    "bigcap": "∩",
    "bigcup": "∪",
    "setminus": "∖",
    "forall": "∀",
    "perp": "⊥",
    "succ": "≻",
    "succeq": "⪰",
    "prec": "≺",
    "preceq": "⪯",
    "langle": "⟨",
    "rangle": "⟩",
    "lvert": "|",
    "rvert": "|",
    "lVert": "‖",
    "rVert": "‖",
    "mid": "|",
    "lceil": "⌈",
    "rceil": "⌉",
    "lfloor": "⌊",
    "rfloor": "⌋",
    "dots": "…",
    "ldots": "…",
    "cdots": "⋯",
    "sqrt": "√",
    "quad": " ",
    "qquad": " ",
    # functions read as their names
    **{
        f: f
        for f in (
            "sin cos tan sinh cosh tanh log ln exp max min sup inf det dim ker arg"
        ).split()
    },
}

# the same folding in the browser, around the stemmer of the English search
_JS_FOLD = """
var FoldedStemmer = Stemmer;
var attnlibLetters = %s;
var attnlibMarks = /[%s]/g;
function attnlibFold(word) {
  return word.normalize("NFKD").replace(attnlibMarks, "")
    .replace(/[^\\u0000-\\u007f]/g, function (c) { return attnlibLetters[c] || c; });
}
Stemmer = function () {
  var inner = new FoldedStemmer();
  this.stemWord = function (word) { return inner.stemWord(attnlibFold(word)); };
};
""" % (json.dumps(LETTERS, ensure_ascii=False), MARKS)

# the formulas of a search summary as plain text (see the module docstring)
_JS_TEX = """
var attnlibTex = %s;
function attnlibTexText(tex) {
  var t = String(tex).trim()
    .replace(/^(\\\\\\(|\\\\\\[|\\$\\$?)/, "")
    .replace(/(\\\\\\)|\\\\\\]|\\$\\$?)$/, "");
  t = t.replace(/\\\\(?:begin|end)\\{[^{}]*\\}/g, " ")
    .replace(/\\\\(?:left|right|[bB]igg?[lr]?)\\b\\s*/g, "")
    .replace(/\\\\(?:label|tag)\\{[^{}]*\\}/g, "");
  for (var k = 0; k < 5; k++) {
    t = t.replace(/\\\\[dt]?frac\\s*\\{([^{}]*)\\}\\s*\\{([^{}]*)\\}/g, "($1)/($2)")
      .replace(/\\\\binom\\s*\\{([^{}]*)\\}\\s*\\{([^{}]*)\\}/g, "C($1, $2)")
      .replace(/\\\\mathbb\\s*\\{?([A-Za-z])\\}?/g, function (m, c) {
        return attnlibTex[c] || c; })
      .replace(/([\\^_])\\{([^{}]*)\\}/g, function (m, op, x) {
        return x.length > 1 ? op + "(" + x + ")" : op + x; });
  }
  t = t.replace(/\\\\([A-Za-z]+)/g, function (m, name) {
      return Object.prototype.hasOwnProperty.call(attnlibTex, name)
        ? attnlibTex[name] : ""; })
    .replace(/\\\\\\\\/g, " ")
    .replace(/\\\\./g, " ")
    .replace(/[{}&~\\\\$]/g, " ");
  return t.replace(/\\s+/g, " ").replace(/([⟨(\\[]) /g, "$1")
    .replace(/ ([⟩)\\]])/g, "$1").trim();
}
if (typeof document !== "undefined") {
  var attnlibPlainSummaries = function () {
    if (typeof Search === "undefined" || Search.attnlibPlain) { return; }
    var htmlToText = Search.htmlToText;
    Search.htmlToText = function (htmlString, anchor) {
      var doc = new DOMParser().parseFromString(htmlString, "text/html");
      doc.querySelectorAll(".math, .eqno").forEach(function (el) {
        var tex = el.querySelector('annotation[encoding="application/x-tex"]');
        var text = el.classList.contains("eqno") ? ""
          : attnlibTexText((tex || el).textContent);
        el.replaceWith(doc.createTextNode(" " + text + " "));
      });
      return htmlToText(doc.documentElement.outerHTML, anchor);
    };
    Search.attnlibPlain = true;
  };
  attnlibPlainSummaries();
  document.addEventListener("DOMContentLoaded", attnlibPlainSummaries);
}
""" % json.dumps(TEX_SYMBOLS, ensure_ascii=False)


class SearchEnglishFolded(SearchEnglish):
    """English search (Porter stemmer) over words without diacritics."""

    js_stemmer_code = SearchEnglish.js_stemmer_code + _JS_FOLD + _JS_TEX

    def stem(self, word: str) -> str:
        return super().stem(fold(word))


def setup(app: Any) -> None:
    """Use the folded English search (the book's language)."""
    app.add_search_language(SearchEnglishFolded)
