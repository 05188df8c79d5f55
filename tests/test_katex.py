"""The book's formulas are typeset by KaTeX when the book is built (bookext.katex):
each page holds its formulas typeset, with the elements, equation numbers and links
that Sphinx's MathJax renderer writes, the book's macros, and no script to typeset
them; a formula KaTeX cannot typeset is a warning of the build at its place."""

from __future__ import annotations

import re
import shutil

import pytest

from bookext.katex import KATEX_JS, display_tex, macros_of

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or not KATEX_JS.exists(),
    reason="node or the vendored KaTeX is missing: python -m tools.vendor_assets",
)

PAGE = r"""Clouds
======

A token :math:`x_i \in \S^{d-1}` moves by

.. math::
   :label: flow

   \dot x_i = P_{x_i}\Big(\frac1n\sum_j e^{\beta\langle x_i, x_j\rangle} x_j\Big)

and :eq:`flow` keeps it on the sphere of :math:`\R^d`.

.. math::

   a = b

   c = d \\ e = f
"""


def _build(tmp_path, page: str = PAGE, warnings: list | None = None):
    import io

    from sphinx.application import Sphinx
    from sphinx.util.docutils import docutils_namespace

    src, out = tmp_path / "src", tmp_path / "html"
    src.mkdir()
    (src / "conf.py").write_text(
        "extensions = ['bookext.katex']\nproject = 't'\nlanguage = 'en'\n"
        "mathjax3_config = {'tex': {'macros': "
        "{'R': '\\\\mathbb{R}', 'S': '\\\\mathbb{S}'}}}\n"
    )
    (src / "index.rst").write_text(page, encoding="utf-8")
    log = io.StringIO()
    # docutils keeps its directives and roles in module globals: without the
    # namespace a later Sphinx build in this process (-W) is told that
    # 'deprecated' "is already registered" and fails
    with docutils_namespace():
        app = Sphinx(
            str(src),
            str(src),
            str(out),
            str(tmp_path / "doctrees"),
            "html",
            status=None,
            warning=log,
            freshenv=True,
        )
        app.build()
    if warnings is not None:
        warnings.append(log.getvalue())
    return (out / "index.html").read_text(encoding="utf-8")


def test_a_page_holds_its_formulas_typeset_with_their_numbers_and_links(tmp_path):
    from bs4 import BeautifulSoup

    warnings: list[str] = []
    html = _build(tmp_path, warnings=warnings)
    assert warnings == [""]
    soup = BeautifulSoup(html, "html.parser")
    inline = soup.select("span.math.notranslate.nohighlight")
    blocks = soup.select("div.math.notranslate.nohighlight")
    assert len(inline) == 2 and len(blocks) == 2
    assert all(f.select_one(".katex .katex-html") for f in inline + blocks)
    assert all(f.select_one(".katex-display") for f in blocks)
    # a wide formula scrolls in its box: a keyboard reaches it (axe-core's
    # scrollable-region-focusable)
    assert all(f.get("tabindex") == "0" for f in blocks)
    # the numbered equation: its id, number and link, as Sphinx's MathJax writes them
    numbered = soup.select_one("div.math#equation-flow")
    eqno = numbered.select_one("span.eqno")
    assert eqno.get_text(strip=True).startswith("(1)")
    assert eqno.select_one("a.headerlink")["href"] == "#equation-flow"
    ref = soup.select_one('a[href="#equation-flow"]:not(.headerlink)')
    assert ref is not None and ref.get_text(strip=True) == "(1)"
    # the book's macros: a double-struck S and R, in the MathML for screen readers
    assert len(soup.select('mi[mathvariant="double-struck"]')) == 2
    # no TeX in the text of the page outside the annotations, and no script
    for note in soup.select("annotation"):
        note.decompose()
    assert not re.search(r"\\[A-Za-z(\[]", soup.get_text())
    assert "MathJax" not in html and "mathjax" not in html.lower()
    # paragraphs of a block are aligned equations, a line break makes a split
    assert soup.select("div.math")[-1].select_one(".katex-display")


def test_a_block_reads_as_sphinx_reads_it():
    class Node(dict):
        def __init__(self, text, nowrap=False):
            super().__init__(nowrap=nowrap)
            self.text = text

        def astext(self):
            return self.text

    assert display_tex(Node("a = b")) == "a = b"
    assert display_tex(Node("a = b\n\nc = d \\\\ e")) == (
        r"\begin{align}\begin{aligned}a = b\\\begin{split}c = d \\ e\end{split}"
        r"\end{aligned}\end{align}"
    )
    assert display_tex(Node("\\begin{align}x\\end{align}", nowrap=True)) == (
        "\\begin{align}x\\end{align}"
    )


def test_the_macros_are_read_from_the_mathjax_configuration():
    class Config:
        mathjax3_config = {"tex": {"macros": {"R": "\\mathbb{R}", "f": ["#1^2", 1]}}}

    assert macros_of(Config) == {"\\R": "{\\mathbb{R}}", "\\f": "{#1^2}"}
    Config.mathjax3_config = {"tex": {"macros": ["R"]}}
    with pytest.raises(TypeError, match="must map macro names to TeX"):
        macros_of(Config)
    Config.mathjax3_config = {"tex": {"macros": {"R": 1}}}
    with pytest.raises(TypeError, match=r"macros\['R'\] must be TeX"):
        macros_of(Config)


def test_a_formula_katex_cannot_typeset_is_a_warning_at_its_place(tmp_path):
    warnings: list[str] = []
    html = _build(
        tmp_path, "Bad\n===\n\nA :math:`\\frac{1}{` here.\n", warnings=warnings
    )
    (log,) = warnings
    assert "index.rst:4" in log and "KaTeX cannot typeset" in log, log
    assert "attnlib-tex-error" in html
