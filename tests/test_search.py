"""The book's search folds diacritics: a query with or without the accents finds the
word, in a small site built with the book's search and queried as the browser does."""

import json
import shutil
import subprocess

import pytest

from bookext.search import fold

NODE = shutil.which("node")


def test_fold():
    assert fold("Łojasiewicz") == "Lojasiewicz"
    assert fold("Grönwall–Picard–Lindelöf, Poincaré, Øksendal, Straße") == (
        "Gronwall–Picard–Lindelof, Poincare, Oksendal, Strasse"
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    from sphinx.cmd.build import build_main

    src = tmp_path_factory.mktemp("src")
    out = tmp_path_factory.mktemp("html")
    (src / "conf.py").write_text(
        "extensions = ['bookext.search']\nproject = 't'\nlanguage = 'en'\n"
    )
    (src / "index.rst").write_text(
        "Gradient flows\n==============\n\n"
        "The Łojasiewicz inequality and Grönwall's lemma.\n",
        encoding="utf-8",
    )
    assert build_main(["-q", "-b", "html", str(src), str(out)]) == 0
    return out


def _index(site) -> dict:
    text = (site / "searchindex.js").read_text(encoding="utf-8")
    return json.loads(text[text.index("(") + 1 : text.rindex(")")])


def _browser_stems(site, words):
    """The stems the browser's search computes for ``words`` (language_data.js)."""
    data = json.dumps(str(site / "_static" / "language_data.js"))
    script = (
        "const fs = require('fs'); const vm = require('vm');"
        f"const code = fs.readFileSync({data}, 'utf8');"
        "const ctx = {}; vm.createContext(ctx); vm.runInContext(code, ctx);"
        "const s = vm.runInContext('new Stemmer()', ctx);"
        f"const words = {json.dumps(words)};"
        "console.log(JSON.stringify(words.map(w => s.stemWord(w.toLowerCase()))));"
    )
    done = subprocess.run(
        [NODE, "-e", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_index_holds_the_folded_words(site):
    terms = _index(site)["terms"]
    assert "lojasiewicz" in terms and "gronwal" in terms
    assert not any("ł" in t or "ö" in t for t in terms)


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_a_query_with_or_without_accents_finds_the_page(site):
    terms = _index(site)["terms"]
    queries = ["Lojasiewicz", "Łojasiewicz", "łojasiewicz", "Gronwall", "Grönwall"]
    stems = _browser_stems(site, queries)
    for query, stem in zip(queries, stems):
        assert stem in terms, (query, stem)
    # "Lojasiewicz inequality": every word of the query is in the index
    assert all(s in terms for s in _browser_stems(site, ["Lojasiewicz", "inequality"]))
