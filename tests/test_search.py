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
    # the formulas typeset by KaTeX as the book's are (bookext.katex)
    (src / "conf.py").write_text(
        "extensions = ['bookext.search', 'bookext.katex']\n"
        "project = 't'\nlanguage = 'en'\n"
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


def _tex_text(tex: list[str]) -> list[str]:
    """:func:`attnlibTexText` of the search's script (``language_data.js``)."""
    from bookext.search import _JS_TEX

    script = (
        "const vm = require('vm'); const ctx = {}; vm.createContext(ctx);"
        f"vm.runInContext({json.dumps(_JS_TEX)}, ctx);"
        f"console.log(JSON.stringify({json.dumps(tex)}.map(ctx.attnlibTexText)));"
    )
    done = subprocess.run(
        [NODE, "-e", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_a_formula_reads_as_text_in_a_summary():
    got = _tex_text(
        [
            r"\(y = \alpha + Lz\)",
            r"\(z \sim \mathcal N(0, I_d)\)",
            r"\[\frac{\int e^{\beta\langle Qx, Ky\rangle} d\mu(y)}{Z}\]",
            r"\(x \in \R^d,\ \Sigma_0 \succ 0\)",
            r"\(\begin{pmatrix}1 & 0.3\\ 0.3 & 0.6\end{pmatrix}\)",
            r"$\mathbb{E}\,|u|^2 \le \operatorname{tr} A$",
        ]
    )
    assert got == [
        "y = α + Lz",
        "z ∼ N(0, I_d)",
        "(∫ e^(β⟨Qx, Ky⟩) dμ(y))/(Z)",
        "x ∈ ℝ^d, Σ_0 ≻ 0",
        "1 0.3 0.3 0.6",
        "E |u|^2 ≤ tr A",
    ]
    assert not any("\\" in g or "{" in g or "$" in g for g in got)


def _math_site(out):
    from sphinx.cmd.build import build_main

    src = out.parent / (out.name + "-src")
    src.mkdir()
    # the formulas typeset by KaTeX as the book's are (bookext.katex)
    (src / "conf.py").write_text(
        "extensions = ['bookext.search', 'bookext.katex']\n"
        "project = 't'\nlanguage = 'en'\n"
    )
    (src / "index.rst").write_text(
        "Gaussian clouds\n===============\n\n"
        "The covariance :math:`\\Sigma(t) = (\\Sigma_0^{-1} - tS)^{-1}` of the cloud "
        "grows, and the covariance blows up at :math:`t^* = \\frac{1}{2\\lambda}`.\n",
        encoding="utf-8",
    )
    assert build_main(["-q", "-b", "html", str(src), str(out)]) == 0
    return out


@pytest.mark.slow  # Sphinx builds and Chromium
def test_search_summaries_print_no_raw_tex(tmp_path, monkeypatch):
    from .helpers import CHROMIUM

    if CHROMIUM is None:
        pytest.skip("the Debian package chromium is not installed")
    from bookext.katex import KATEX_JS

    if NODE is None or not KATEX_JS.exists():
        pytest.skip("node or the vendored KaTeX is missing (tools.vendor_assets)")
    from bookext.search import _JS_FOLD, SearchEnglish, SearchEnglishFolded
    from tools.browser_check import search_failures

    site = _math_site(tmp_path / "html")
    assert 'class="katex"' in (site / "index.html").read_text(encoding="utf-8")
    failures, read = search_failures(site, CHROMIUM, ("covariance",))
    assert read == 1 and failures == []
    # the search of Sphinx alone prints the TeX of the formulas (the annotations of
    # their MathML): the check fails
    plain = SearchEnglish.js_stemmer_code + _JS_FOLD
    monkeypatch.setattr(SearchEnglishFolded, "js_stemmer_code", plain)
    site = _math_site(tmp_path / "plain")
    failures, read = search_failures(site, CHROMIUM, ("covariance",))
    assert read == 1 and failures and "raw TeX" in failures[0], failures
