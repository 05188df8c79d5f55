"""The book's search folds diacritics: "Lojasiewicz" finds "Łojasiewicz".

Sphinx's search stems each word of the pages when it writes the index (Python) and
each word of a query in the reader's browser (JavaScript, ``language_data.js``); a
query matches the words whose stems are equal. :class:`SearchEnglishFolded` is the
English search with both stemmers preceded by the same folding (:func:`fold`):
accents and other marks are removed after Unicode decomposition, and the letters
without a decomposition are replaced (``ł`` -> ``l``, ``ø`` -> ``o``, ``ß`` ->
``ss``, ...). Whether a reader types the accent or not, the query's stem is the
stem of the folded word in the index.
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


class SearchEnglishFolded(SearchEnglish):
    """English search (Porter stemmer) over words without diacritics."""

    js_stemmer_code = SearchEnglish.js_stemmer_code + _JS_FOLD

    def stem(self, word: str) -> str:
        return super().stem(fold(word))


def setup(app: Any) -> None:
    """Use the folded English search (the book's language)."""
    app.add_search_language(SearchEnglishFolded)
