"""In Chromium, a page whose formulas were typeset when the book was built shows no
TeX, with its scripts disabled as with them; text that still holds TeX is found: a
formula that Markdown cut in two, or a formula left for a script to typeset."""

from pathlib import Path

import pytest

from bookext.katex import KATEX_JS, KaTeXProcess
from tools.browser_check import AXE, chromium_path, raw_tex, read_without_scripts
from tools.check_html import formula_counts, prose_failures

KATEX_CSS = AXE.parents[1] / "katex" / "katex.min.css"
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        chromium_path() is None, reason="the Debian package chromium is not installed"
    ),
    pytest.mark.skipif(
        not KATEX_JS.exists() or not KATEX_CSS.exists(),
        reason="KaTeX is not vendored: python -m tools.vendor_assets",
    ),
]

FORMULAS = [
    ("x, x'", False),
    ("|y'| \\le M", False),
    (
        "P_xy - P_{x'}y' = P_x(y - y') + \\langle x' - x, y'\\rangle x' "
        "+ \\langle x, y'\\rangle(x' - x)",
        False,
    ),
    ("\\frac{d}{dt}E = \\int|\\mathcal X|^2\\,d\\mu", True),
]
TEMPLATE = (
    "<p>For unit <span class='math notranslate nohighlight'>{0}</span> and "
    "<span class='math notranslate nohighlight'>{1}</span>, so "
    "<span class='math notranslate nohighlight'>{2}</span>.</p>"
    "<div class='math notranslate nohighlight'>{3}</div>"
    "<pre><code>print('$x$ \\\\frac')</code></pre>"
)


@pytest.fixture(scope="module")
def katex():
    process = KaTeXProcess({"\\R": "{\\mathbb{R}}"})
    yield process
    process.close()


@pytest.fixture(scope="module")
def proof(katex):
    """The proof with its formulas typeset as the book's build typesets them."""
    return TEMPLATE.format(*(katex.render(tex, display) for tex, display in FORMULAS))


# the proof with its third formula left as TeX for MathJax to typeset in the browser
def _mathjax_left(katex):
    cells = [katex.render(tex, display) for tex, display in FORMULAS]
    cells[2] = "\\(" + FORMULAS[2][0] + "\\)"
    return TEMPLATE.format(*cells)


# the same proof as MyST printed it when the formula was cut by a line that began
# with '+ ': the text before the list and the list item hold the TeX
def _garbled(proof, katex):
    return proof.replace(
        katex.render(FORMULAS[2][0], False) + "</span>.</p>",
        "</span>$P_xy - P_{x'}y' = P_x(y - y') + \\langle x' - x, y'\\rangle x'</p>"
        "<ul><li><p>\\langle x, y'\\rangle(x' - x)$.</p></li></ul>",
    )


def _page(tmp_path, body, name, head=""):
    path = tmp_path / name
    path.write_text(
        "<!doctype html><html lang='en'><head><meta charset='utf-8'><title>t</title>"
        f"<link rel='stylesheet' href='{KATEX_CSS.as_uri()}'>{head}</head>"
        f"<body><main><section id='proof'>{body}</section></main></body></html>",
        encoding="utf-8",
    )
    return path


def _found(browser, path):
    """What the page check finds with scripts disabled, and with them."""
    (dom,) = read_without_scripts(browser, [path]).values()
    page = browser.new_page()
    try:
        page.goto(path.as_uri(), wait_until="load")
        return prose_failures(dom, path.name), raw_tex(page), formula_counts(dom)
    finally:
        page.close()


def test_a_page_typeset_when_built_passes_without_scripts(browser, tmp_path, proof):
    without, with_scripts, (n, typeset, errors) = _found(
        browser, _page(tmp_path, proof, "good.html")
    )
    assert (n, typeset, errors) == (4, 4, 0)
    assert without == [] and with_scripts == []


def test_a_page_with_one_cut_formula_fails(browser, tmp_path, proof, katex):
    without, with_scripts, _ = _found(
        browser, _page(tmp_path, _garbled(proof, katex), "bad.html")
    )
    for found in (without, with_scripts):
        assert len(found) == 2, found
        assert all("near #proof" in f for f in found)
        assert any("\\langle" in f for f in found)


def test_a_formula_left_to_a_script_fails_without_scripts(browser, tmp_path, katex):
    # client-side MathJax for one formula: the first paint shows its TeX
    path = _page(
        tmp_path,
        _mathjax_left(katex),
        "mathjax.html",
        "<script>window.MathJax = {};</script>",
    )
    without, _, (n, typeset, _) = _found(browser, path)
    assert (n, typeset) == (4, 3)
    assert len(without) == 1 and "raw TeX" in without[0], without
    assert "\\(P_xy" in without[0]


def test_a_formula_katex_cannot_typeset_fails_the_build(katex):
    from bookext.katex import KaTeXError

    with pytest.raises(KaTeXError, match="Undefined control sequence"):
        katex.render("\\nosuchmacro x", False)
    # and what LaTeX would not typeset either (KaTeX's strict mode)
    with pytest.raises(KaTeXError, match="strict"):
        katex.render("é", False)
    # the book's macro, expanded: a double-struck R
    assert '<mi mathvariant="double-struck">R</mi>' in katex.render("\\R", False)


CSS = AXE.parents[3] / "bookext" / "_static" / "attnlib-book.css"


def _theme_css():
    """The stylesheet of the book's theme (pydata-sphinx-theme), which lays out
    ``div.math`` as a reversed row."""
    import pydata_sphinx_theme

    root = Path(pydata_sphinx_theme.__file__).parent
    return next(root.rglob("styles/pydata-sphinx-theme.css"))


def _wide(katex):
    wide = " + ".join(
        f"\\frac{{a_{{{k}}}}}{{b_{{{k}}} + c_{{{k}}}}}" for k in range(24)
    )
    return (
        "<div class='math notranslate nohighlight' id='equation-wide'>"
        "<span class='eqno'>(1.1)</span>" + katex.render(wide, True) + "</div>"
        "<div class='math notranslate nohighlight' id='equation-short'>"
        + katex.render("x = 1", True)
        + "</div>"
    )


@pytest.mark.parametrize("width", [1366, 390])
def test_a_wide_equation_opens_at_its_start(browser, tmp_path, width, katex):
    from tools.browser_check import _EQUATION_START, _EQUATIONS

    path = _page(
        tmp_path,
        _wide(katex),
        "wide.html",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<link rel='stylesheet' href='{_theme_css().as_uri()}'>"
        f"<link rel='stylesheet' href='{CSS.as_uri()}'>",
    )
    page = browser.new_page(viewport={"width": width, "height": 900})
    try:
        page.goto(path.as_uri(), wait_until="load")
        page.evaluate("async () => { await document.fonts.ready; }")
        box = page.locator("#equation-wide")
        assert box.evaluate("b => b.scrollWidth > b.clientWidth + 2")  # it is wide
        assert page.evaluate(_EQUATION_START) == []
        assert page.evaluate(_EQUATIONS) == []  # it scrolls, its number is clear
        # the short one is still centred
        short = page.locator("#equation-short").bounding_box()
        formula = page.locator("#equation-short .katex-html").bounding_box()
        left = formula["x"] - short["x"]
        right = short["x"] + short["width"] - formula["x"] - formula["width"]
        assert abs(left - right) < 4, (left, right)
    finally:
        page.close()
