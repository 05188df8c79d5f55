"""In Chromium, the right-hand contents of a page mark the section the reader is in:
the first at the top of the page (the theme marked a later one when the first
sections are short: "Chapter 6" on the list of results), the one whose heading is at
the top of the screen after a scroll. The book's script (bookext/_static) is loaded
into a page with the theme's markup; a page whose script marks the last entry fails.
"""

from pathlib import Path

import pytest

from tools.browser_check import toc_failures

from .helpers import CHROMIUM

SCRIPT = Path(__file__).resolve().parents[1] / "bookext" / "_static" / "attnlib-book.js"
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        CHROMIUM is None, reason="the Debian package chromium is not installed"
    ),
]

# the theme's marker at its worst: the last entry, on load and on every scroll
THEME_BUG = """
function themeMark() {
  const links = document.querySelectorAll("#pst-page-toc-nav a");
  links.forEach(a => a.classList.remove("active"));
  links[links.length - 1].classList.add("active");
}
document.addEventListener("DOMContentLoaded", themeMark);
window.addEventListener("scroll", () => setTimeout(themeMark, 0));
"""


def _page(tmp_path, ours: bool):
    short = "".join(
        f"<section id='chapter-{k}'><h2>Chapter {k}</h2><p>Results.</p></section>"
        for k in range(1, 7)
    )
    long = "".join(
        f"<section id='part-{k}'><h2>Part {k}</h2>" + "<p>Text.</p>" * 40 + "</section>"
        for k in range(1, 5)
    )
    toc = "".join(
        f"<li class='toc-entry'><a class='nav-link' href='#{i}'>{i}</a></li>"
        for i in [f"chapter-{k}" for k in range(1, 7)]
        + [f"part-{k}" for k in range(1, 5)]
    )
    scripts = f"<script>{THEME_BUG}</script>"
    if ours:
        scripts += f"<script src='{SCRIPT.as_uri()}'></script>"
    path = tmp_path / ("ours.html" if ours else "theme.html")
    path.write_text(
        "<!doctype html><html lang='en'><head><meta charset='utf-8'><title>t</title>"
        "<style>#pst-header{position:fixed;top:0;height:60px;width:100%;"
        "background:#fff} main{margin-top:60px;margin-right:300px}"
        "#pst-page-toc-nav{position:fixed;right:0;top:80px;width:280px}"
        f"</style>{scripts}</head><body><header id='pst-header'>Book</header>"
        f"<nav id='pst-page-toc-nav'><ul>{toc}</ul></nav>"
        f"<main><h1>Results</h1>{short}{long}</main></body></html>",
        encoding="utf-8",
    )
    return path


def _failures(browser, path):
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    try:
        page.goto(path.as_uri(), wait_until="load")
        return toc_failures(page)
    finally:
        page.close()


def test_the_books_script_marks_the_section_at_the_top(browser, tmp_path):
    assert _failures(browser, _page(tmp_path, ours=True)) == []


def test_a_marker_of_the_last_entry_fails(browser, tmp_path):
    found = _failures(browser, _page(tmp_path, ours=False))
    assert found == [
        "at the top of the page the contents mark ['#part-4'], not #chapter-1",
        "at the section #chapter-6 the contents mark ['#part-4']",
    ], found
