"""What a page loads and what its footer links, in a small site built with the
book's theme (sphinx-book-theme) and bookext's handlers (:mod:`bookext.assets`,
:mod:`bookext.sitelinks`):

* no page loads Font Awesome's JavaScript, and its icons are drawn by the theme's
  webfont (every icon class of a page has a style; in Chromium each shown icon has
  a glyph of the loaded font);
* axe-core (the page check's) and KaTeX for Node.js (the build's), vendored beside
  KaTeX's stylesheet, are not copied into the site, which ships that stylesheet;
* the footer cites the book (``CITATION.cff``, copied into the site), links the PDF
  only when a PDF of this version is beside the HTML folder, and links the
  repository only when ``repository_url`` is set;
* the desktop shows one search control (the table of contents has no second one).
"""

from __future__ import annotations

import os
import time

import pytest
import yaml

from attnlib._version import __version__
from bookext import sitelinks
from tools.check_html import (
    footer_failures,
    icon_failures,
    script_failures,
    shipped_failures,
    site_stylesheets,
)

from .helpers import CHROMIUM

ROOT = sitelinks.ROOT
URL = "https://github.com/owner/book"


def _build(tmp_path, repository: str = "", pdf_version: str | None = None):
    """The small site in ``tmp_path/_build/html``; with ``pdf_version``, a PDF of
    that version is first written where make pdf writes it (``_build/latex``)."""
    from sphinx.cmd.build import build_main

    src, build = tmp_path / "src", tmp_path / "_build"
    (src / "_vendor" / "axe").mkdir(parents=True)
    (src / "_vendor" / "katex").mkdir()
    (src / "_vendor" / "katex-node").mkdir()
    (src / "_vendor" / "axe" / "axe.min.js").write_text("window.axe = {};")
    (src / "_vendor" / "katex" / "katex.min.css").write_text(".katex{}")
    (src / "_vendor" / "katex-node" / "katex.js").write_text("// KaTeX")
    if pdf_version is not None:
        latex = build / "latex"
        latex.mkdir(parents=True)
        (latex / "book.tex").write_text(f"\\release{{{pdf_version}}}\n")
        time.sleep(0.01)
        (latex / "book.pdf").write_bytes(b"%PDF-1.5\n")
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    sidebars = config["sphinx"]["config"]["html_sidebars"]
    (src / "conf.py").write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "extensions = []\n"
        "html_theme = 'sphinx_book_theme'\n"
        f"html_theme_options = {{'repository_url': {repository!r}}}\n"
        f"html_sidebars = {sidebars!r}\n"
        "html_static_path = ['_vendor']\n"
        "exclude_patterns = ['_vendor']\n"
        "project = 't'\nlanguage = 'en'\n"
        "def setup(app):\n"
        "    from bookext import assets, sitelinks\n"
        "    assets.setup(app)\n"
        "    sitelinks.setup(app)\n"
    )
    (src / "index.rst").write_text("Clouds\n======\n\nThe covariance grows.\n")
    html = build / "html"
    assert build_main(["-q", "-b", "html", str(src), str(html)]) == 0
    return html


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    return _build(tmp_path_factory.mktemp("site"))


def test_citation_from_citation_cff():
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    line = sitelinks.citation(cff)
    assert line.startswith("The attnlib authors (20")
    assert cff["title"] in line and f"version {cff['version']}" in line
    two = {"authors": [{"given-names": "A", "family-names": "B"}, {"name": "C"}]}
    assert sitelinks.citation({**two, "title": "T"}) == "A B and C. T."
    with pytest.raises(ValueError, match="authors and a title"):
        sitelinks.citation({"title": "T"})


@pytest.mark.slow  # a Sphinx build
def test_pages_load_no_icon_script_and_the_site_ships_no_axe(site):
    page = site / "index.html"
    text = page.read_text(encoding="utf-8")
    failures, weight = script_failures(page, site)
    assert failures == [] and weight > 0
    assert "fontawesome.js" not in text
    assert 'class="fa-solid fa-magnifying-glass' in text  # the icons are still there
    assert icon_failures(text, "index.html", site_stylesheets(site)) == []
    assert (site / "_static" / "katex" / "katex.min.css").exists()
    assert not (site / "_static" / "katex-node").exists()
    # nor the theme's files that no page loads
    assert not (site / "_static" / "scripts" / "fontawesome.js").exists()
    assert not list((site / "_static").rglob("*.map"))
    assert (site / "_static" / "scripts" / "bootstrap.js").exists()
    assert shipped_failures(site) == []


@pytest.mark.slow  # a Sphinx build
def test_the_footer_cites_the_book_and_links_no_pdf_or_repository(site):
    text = (site / "index.html").read_text(encoding="utf-8")
    assert (site / "CITATION.cff").read_bytes() == (ROOT / "CITATION.cff").read_bytes()
    assert "Cite: The attnlib authors" in text
    assert "attnlib-pdf" not in text and "attnlib-repository" not in text
    assert footer_failures(site / "index.html", site, "") == []


@pytest.mark.slow  # Sphinx builds
def test_the_pdf_of_this_version_and_the_repository_are_linked(tmp_path):
    html = _build(tmp_path / "a", repository=URL, pdf_version=__version__)
    page = html / "index.html"
    text = page.read_text(encoding="utf-8")
    assert (html / sitelinks.PDF_NAME).read_bytes().startswith(b"%PDF")
    assert f'href="{sitelinks.PDF_NAME}"' in text and f'href="{URL}"' in text
    assert footer_failures(page, html, URL) == []
    # a PDF of another version is neither copied nor linked
    html = _build(tmp_path / "b", pdf_version="0.0.1")
    assert not list(html.glob("*.pdf"))
    assert "attnlib-pdf" not in (html / "index.html").read_text(encoding="utf-8")


def test_a_pdf_older_than_its_source_or_of_another_version_is_not_fresh(tmp_path):
    (tmp_path / "book.tex").write_text(f"\\release{{{__version__}}}")
    assert sitelinks.fresh_pdf(tmp_path) is None  # no PDF
    (tmp_path / "book.pdf").write_bytes(b"%PDF")
    assert sitelinks.fresh_pdf(tmp_path) == tmp_path / "book.pdf"
    old = time.time() - 60
    os.utime(tmp_path / "book.pdf", (old, old))
    assert sitelinks.fresh_pdf(tmp_path) is None
    os.utime(tmp_path / "book.pdf")
    assert sitelinks.fresh_pdf(tmp_path, version="9.9.9") is None


@pytest.mark.slow  # a Sphinx build and Chromium
def test_icons_show_and_one_search_control_at_both_widths(site, browser):
    if CHROMIUM is None:
        pytest.skip("the Debian package chromium is not installed")
    from tools import browser_check

    for width in browser_check.WIDTHS:
        page = browser.new_page(viewport={"width": width, "height": 900})
        page.goto((site / "index.html").as_uri(), wait_until="load")
        assert browser_check.search_control_failures(page) == []
        if width == browser_check.WIDTHS[0]:
            assert browser_check.icon_failures(page) == []
            # an icon without its glyph (the webfont's CSS missing) fails
            page.add_style_tag(
                content=".fa-magnifying-glass::before{content:none!important}"
            )
            assert any(
                "fa-magnifying-glass has no glyph" in f
                for f in browser_check.icon_failures(page)
            )
            # the theme's two search controls: the check fails
            page.evaluate(
                "() => document.querySelector('.article-header-buttons')"
                ".insertAdjacentHTML('afterbegin', '<button class="
                '"search-button-field" style="width:50px;height:20px">'
                "Search</button>')"
            )
            assert browser_check.search_control_failures(page)
        page.close()
