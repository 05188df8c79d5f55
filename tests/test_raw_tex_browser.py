"""In Chromium, after MathJax has typeset a page, text that still holds TeX is found:
a formula that Markdown cut in two, or maths that MathJax did not typeset."""

from pathlib import Path

import pytest

from tools.browser_check import AXE, raw_tex

from .helpers import CHROMIUM

MATHJAX = AXE.parents[1] / "mathjax" / "tex-mml-chtml.js"
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        CHROMIUM is None, reason="the Debian package chromium is not installed"
    ),
    pytest.mark.skipif(
        not MATHJAX.exists(),
        reason="MathJax is not vendored: python -m tools.vendor_assets",
    ),
]

PROOF = (
    "<p>For unit <span class='math notranslate nohighlight'>\\(x, x'\\)</span> and "
    "<span class='math notranslate nohighlight'>\\(|y'| \\le M\\)</span>, so "
    "<span class='math notranslate nohighlight'>\\(P_xy - P_{x'}y' = P_x(y - y') + "
    "\\langle x' - x, y'\\rangle x' + \\langle x, y'\\rangle(x' - x)\\)</span>.</p>"
    "<div class='math notranslate nohighlight'>\\[\\frac{d}{dt}E = "
    "\\int|\\mathcal X|^2\\,d\\mu\\]</div>"
    "<pre><code>print('$x$ \\\\frac')</code></pre>"
)
# the same proof as MyST printed it when the formula was cut by a line that began
# with '+ ': the text before the list and the list item hold the TeX
GARBLED = PROOF.replace(
    "<span class='math notranslate nohighlight'>\\(P_xy - P_{x'}y' = P_x(y - y') + "
    "\\langle x' - x, y'\\rangle x' + \\langle x, y'\\rangle(x' - x)\\)</span>.</p>",
    "$P_xy - P_{x'}y' = P_x(y - y') + \\langle x' - x, y'\\rangle x'</p>"
    "<ul><li><p>\\langle x, y'\\rangle(x' - x)$.</p></li></ul>",
)


def _page(tmp_path, body, name):
    path = tmp_path / name
    path.write_text(
        "<!doctype html><html lang='en'><head><meta charset='utf-8'><title>t</title>"
        f"<script defer src='{MATHJAX.as_uri()}'></script></head>"
        f"<body><main><section id='proof'>{body}</section></main></body></html>",
        encoding="utf-8",
    )
    return path


def _found(browser, path):
    page = browser.new_page()
    try:
        page.goto(path.as_uri(), wait_until="load")
        page.wait_for_function(
            "() => window.MathJax && MathJax.startup && MathJax.startup.promise",
            timeout=60000,
        )
        found = raw_tex(page)
        typeset = page.locator("mjx-container").count()
        return found, typeset
    finally:
        page.close()


def test_a_typeset_page_passes(browser, tmp_path):
    found, typeset = _found(browser, _page(tmp_path, PROOF, "good.html"))
    assert typeset == 4
    assert found == []


def test_a_page_with_one_cut_formula_fails(browser, tmp_path):
    found, _ = _found(browser, _page(tmp_path, GARBLED, "bad.html"))
    assert len(found) == 2, found
    assert all("near #proof" in f for f in found)
    assert any("\\langle" in f for f in found)


def test_maths_that_mathjax_did_not_typeset_fails(browser, tmp_path):
    # a formula in an element that MathJax leaves alone shows its TeX source
    body = PROOF.replace("<p>", "<p class='mathjax_ignore'>", 1)
    found, _ = _found(browser, _page(tmp_path, body, "ignored.html"))
    assert found and all("raw TeX" in f for f in found)


CSS = AXE.parents[3] / "bookext" / "_static" / "attnlib-book.css"


def _theme_css():
    """The stylesheet of the book's theme (pydata-sphinx-theme), which lays out
    ``div.math`` as a reversed row."""
    import pydata_sphinx_theme

    root = Path(pydata_sphinx_theme.__file__).parent
    return next(root.rglob("styles/pydata-sphinx-theme.css"))


WIDE = (
    "<div class='math notranslate nohighlight' id='equation-wide'>"
    "<span class='eqno'>(1.1)</span>\\[ "
    + " + ".join(f"\\frac{{a_{{{k}}}}}{{b_{{{k}}} + c_{{{k}}}}}" for k in range(24))
    + " \\]</div>"
    "<div class='math notranslate nohighlight' id='equation-short'>\\[x = 1\\]</div>"
)


@pytest.mark.parametrize("width", [1366, 390])
def test_a_wide_equation_opens_at_its_start(browser, tmp_path, width):
    from tools.browser_check import _EQUATION_START

    path = tmp_path / "wide.html"
    path.write_text(
        "<!doctype html><html lang='en'><head><meta charset='utf-8'><title>t</title>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<link rel='stylesheet' href='{_theme_css().as_uri()}'>"
        f"<link rel='stylesheet' href='{CSS.as_uri()}'>"
        f"<script defer src='{MATHJAX.as_uri()}'></script></head>"
        f"<body><main><section id='s'>{WIDE}</section></main></body></html>",
        encoding="utf-8",
    )
    page = browser.new_page(viewport={"width": width, "height": 900})
    try:
        page.goto(path.as_uri(), wait_until="load")
        page.wait_for_function(
            "() => window.MathJax && MathJax.startup && MathJax.startup.promise",
            timeout=60000,
        )
        raw_tex(page)  # waits for the typesetting
        box = page.locator("#equation-wide")
        assert box.evaluate("b => b.scrollWidth > b.clientWidth + 2")  # it is wide
        assert page.evaluate(_EQUATION_START) == []
        # the short one is still centred
        short = page.locator("#equation-short").bounding_box()
        formula = page.locator("#equation-short mjx-math").bounding_box()
        left = formula["x"] - short["x"]
        right = short["x"] + short["width"] - formula["x"] - formula["width"]
        assert abs(left - right) < 4, (left, right)
    finally:
        page.close()
