"""In Chromium, axe-core's critical and serious violations fail a page, in the light
and in the dark mode of the theme: low contrast (in either mode), a control whose
accessible name does not contain its visible text, a ``<summary>`` with no name."""

import pytest

from tools.browser_check import AXE, accessibility

from .helpers import CHROMIUM

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        CHROMIUM is None, reason="the Debian package chromium is not installed"
    ),
    pytest.mark.skipif(
        not AXE.exists(),
        reason="axe-core is not vendored: python -m tools.vendor_assets",
    ),
]

# the two modes as pydata-sphinx-theme switches them: html[data-theme], with a slow
# transition between them (axe must read the final colours, not those on the way)
STYLE = """
html[data-theme="light"] body { background: #ffffff; color: #222222; }
html[data-theme="dark"] body { background: #121212; color: #ced6dd; }
html[data-theme="light"] a { color: #0a58ca; }
html[data-theme="dark"] a { color: #79b8ff; }
html[data-theme="light"] .note { color: #555555; }
html[data-theme="dark"] .note { color: #9ca4af; }
body, a, .note { transition: color 3s, background-color 3s; }
"""
GOOD = """
<p>As shown by <a href="#ref">Geshkovski et al. (2023)</a>, the particles cluster.</p>
<p class="note">Frames are computed in advance.</p>
<details><summary>Show the proof</summary><p>By induction.</p></details>
<button type="button" aria-label="Show the proof of Theorem 1">Show the proof</button>
<p id="ref">Reference.</p>
"""


def _page(tmp_path, body, style=STYLE, name="page.html"):
    path = tmp_path / name
    path.write_text(
        "<!doctype html><html lang='en' data-theme='light'><head><meta charset='utf-8'>"
        f"<title>t</title><style>{style}</style></head>"
        f"<body><main><h1>Page</h1>{body}</main></body></html>",
        encoding="utf-8",
    )
    return path


def _violations(browser, path, colours=True):
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    try:
        page.goto(path.as_uri(), wait_until="load")
        return accessibility(page, AXE.read_text(encoding="utf-8"), colours)
    finally:
        page.close()


def test_a_page_that_reads_in_both_modes_passes(browser, tmp_path):
    assert _violations(browser, _page(tmp_path, GOOD)) == []


def test_a_link_of_low_contrast_fails(browser, tmp_path):
    # 3.9:1 on white, under the 4.5:1 that normal text needs
    style = STYLE.replace(
        '[data-theme="light"] a { color: #0a58ca; }',
        '[data-theme="light"] a { color: #808080; }',
    )
    found = _violations(browser, _page(tmp_path, GOOD, style))
    assert len(found) == 1, found
    assert found[0].startswith("axe color-contrast (serious, light mode) on 1 element")


def test_a_note_faint_in_the_dark_mode_only_fails(browser, tmp_path):
    style = STYLE.replace(
        '[data-theme="dark"] .note { color: #9ca4af; }',
        '[data-theme="dark"] .note { color: #4a4f55; }',
    )
    found = _violations(browser, _page(tmp_path, GOOD, style))
    assert len(found) == 1, found
    assert "color-contrast (serious, dark mode)" in found[0] and ".note" in found[0]


def test_a_name_that_does_not_hold_the_visible_label_fails(browser, tmp_path):
    body = GOOD.replace(
        'aria-label="Show the proof of Theorem 1"', 'aria-label="Toggle"'
    )
    found = _violations(browser, _page(tmp_path, body))
    assert {f.split(" ")[1] for f in found} == {"label-content-name-mismatch"}, found
    # found once: a name does not change with the colours (only the colour rules
    # run again in the dark mode)
    assert len(found) == 1 and "light mode" in found[0], found


def test_a_summary_without_a_name_fails(browser, tmp_path):
    body = GOOD.replace("<summary>Show the proof</summary>", "<summary></summary>")
    found = _violations(browser, _page(tmp_path, body))
    assert {f.split(" ")[1] for f in found} == {"summary-name"}, found


def test_without_the_colour_rules_only_the_colours_go_unread(browser, tmp_path):
    """colours=False (a page whose every element is styled as on a page checked with
    them) leaves out the colour rules in both modes, and nothing else."""
    style = STYLE.replace(
        '[data-theme="light"] a { color: #0a58ca; }',
        '[data-theme="light"] a { color: #808080; }',
    ).replace(
        '[data-theme="dark"] .note { color: #9ca4af; }',
        '[data-theme="dark"] .note { color: #4a4f55; }',
    )
    body = GOOD.replace("<summary>Show the proof</summary>", "<summary></summary>")
    path = _page(tmp_path, body, style)
    rules = {f.split(" ")[1] for f in _violations(browser, path)}
    assert rules == {"color-contrast", "summary-name"}, rules
    found = _violations(browser, path, colours=False)
    assert {f.split(" ")[1] for f in found} == {"summary-name"}, found
