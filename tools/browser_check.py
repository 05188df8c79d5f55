"""The pages as a reader's browser shows them: Chromium at 1366 px and at 390 px.

Called by :mod:`tools.check_html` (point 5) with the pages to check; it drives the
Debian ``chromium`` through playwright (started in one place, :func:`chromium`, which
the tests' ``browser`` fixture uses too), offline (any request to another host is
aborted). It reads every page once with JavaScript disabled
(:func:`read_without_scripts`: the document whose text the page check searches for
TeX, since the formulas are typeset in the HTML), and for every page reports

* its weight: the bytes of the page and of every file it loads before a reader does
  anything (a static explorer's other frames come later, on demand), against the
  aim of :data:`WEIGHT_AIM`;
* failures: a JavaScript error; a request that fails (a missing file); a critical
  or serious violation found by axe-core (``book/_vendor/axe/axe.min.js``, fetched
  from npm by :mod:`tools.vendor_assets`) in the theme's light or dark mode (also
  for every other page of the edition: :func:`accessibility_pages`); a control of
  a static explorer that does not change the figure; text outside code and
  scripts that holds a TeX command (``\\frac``, ``\\langle``, ...) or a pair of
  dollars once the scripts ran; a wide displayed equation that does not open at its
  start; the right-hand contents marking another section than the one at the top
  of the screen (:func:`toc_failures`); and at 390 px: a page wider than the
  screen, a sidebar toggle that does not open the table of contents, a displayed
  equation wider than its box that does not scroll, an equation number drawn
  over its formula; and at both widths, the failures of its figures
  (:mod:`tools.figure_check`: one to scroll sideways on the phone, text under 8
  px, an alternative text or a caption that says nothing).
"""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path
from typing import Any, Iterator

from . import figure_check

WIDTHS = (1366, 390)
WEIGHT_AIM = 6 * 1024 * 1024
# milliseconds a page may take to load or a step to act: a chapter page of 0.7 MB
# took more than playwright's 30 s on a busy two-core machine
LOAD_TIMEOUT = 300_000
AXE = Path(__file__).resolve().parents[1] / "book" / "_vendor" / "axe" / "axe.min.js"

#: the options of every Chromium the checks and the tests start (:func:`chromium`)
CHROMIUM_ARGS = ("--no-sandbox", "--disable-gpu")


def chromium_path() -> str | None:
    """Debian's Chromium (``.ci/run`` installs it), or None when it is absent."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


@contextlib.contextmanager
def chromium(executable: str | None = None) -> Iterator[Any]:
    """A headless Chromium through playwright, closed on exit: the one place where
    the page checks and the tests start a browser (``with chromium() as browser``).
    ``executable`` defaults to :func:`chromium_path`; playwright's own browsers are
    never used (they are downloaded, which this machine cannot do)."""
    from playwright.sync_api import sync_playwright

    path = executable or chromium_path()
    if path is None:
        raise RuntimeError(
            "chromium is not installed (Debian: apt-get install chromium): "
            "the browser checks cannot run"
        )
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=path, args=list(CHROMIUM_ARGS))
        try:
            yield browser
        finally:
            browser.close()


# the formulas are typeset in the HTML (bookext/katex.py): a page's layout is final
# once its fonts, KaTeX's among them, have loaded
_FONTS_READY = """async () => { await document.fonts.ready; return true; }"""

# displayed equations that overflow without a scroll, and numbers over formulas
_EQUATIONS = """() => {
  const bad = [];
  document.querySelectorAll("div.math").forEach(el => {
    const box = el.getBoundingClientRect();
    if (box.width === 0) { return; }
    let scrolls = false;
    for (let e = el, k = 0; e && k < 4; e = e.parentElement, k++) {
      const o = getComputedStyle(e).overflowX;
      if ((o === "auto" || o === "scroll") && e.scrollWidth >= el.scrollWidth - 1) {
        scrolls = true; break;
      }
    }
    const id = el.id || (el.closest("[id]") || {}).id || "?";
    if (el.scrollWidth > el.clientWidth + 2 && !scrolls) {
      bad.push("equation " + id + " is cut without a scroll");
    }
    const number = el.querySelector(".eqno");
    const formula = el.querySelector(".katex-html");
    if (number && formula) {
      const a = number.getBoundingClientRect();
      const clip = el.getBoundingClientRect();
      const f = formula.getBoundingClientRect();
      const right = Math.min(f.right, clip.right), left = Math.max(f.left, clip.left);
      const overlap = Math.min(a.right, right) - Math.max(a.left, left);
      const vertical = Math.min(a.bottom, f.bottom) - Math.max(a.top, f.top);
      if (overlap > 2 && vertical > 2) {
        bad.push("the number of equation " + id + " is drawn over the formula");
      }
    }
  });
  return bad;
}"""

# displayed equations wider than their box must open at their start: the formula's
# left edge is in view before the reader scrolls (a centred formula that overflows
# would show its middle or its end, and hide its start to the left)
_EQUATION_START = """() => {
  const bad = [];
  document.querySelectorAll("div.math").forEach(box => {
    const formula = box.querySelector(".katex-display .katex-html");
    if (!formula || box.scrollWidth <= box.clientWidth + 2) { return; }
    const b = box.getBoundingClientRect(), f = formula.getBoundingClientRect();
    if (b.width === 0) { return; }
    if (box.scrollLeft > 1 || f.left < b.left - 2) {
      const id = box.id || (box.closest("[id]") || {}).id || "?";
      const hidden = Math.round(b.left - f.left);
      bad.push("equation " + id + " opens past its start (" + hidden + " px hidden)");
    }
  });
  return bad;
}"""


# elements of the article that stick out of the screen without a scrolling parent
_OVERFLOW = """() => {
  const w = window.innerWidth, bad = [];
  document.querySelectorAll("main *").forEach(el => {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.right <= w + 1) { return; }
    if (el.checkVisibility && !el.checkVisibility({visibilityProperty: true})) {
      return;  // a drawer off the screen (the page's contents), hidden until opened
    }
    for (let e = el.parentElement; e; e = e.parentElement) {
      const o = getComputedStyle(e).overflowX;
      if (o !== "visible") { return; }
    }
    bad.push(el.tagName.toLowerCase() + "." + (el.className || "").toString()
             .split(" ")[0] + " reaches " + Math.round(r.right) + " px");
  });
  return bad.slice(0, 5);
}"""


# text a reader sees outside code and scripts that still holds a TeX command or a
# pair of dollars: maths that Markdown cut, or that was not typeset (its element
# then shows the TeX source); the MathML of a typeset formula (for screen readers,
# with its TeX source in an annotation that no browser shows) is not read
_RAW_TEX = r"""() => {
  const skip = "script, style, pre, code, kbd, samp, textarea, svg, "
             + "math, noscript, template, span.pre";
  const rules = [[/\\[A-Za-z]+/, "raw TeX"], [/\$[^$\n]+\$/, "a literal $...$"]];
  const bad = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement, t = n.textContent;
    if (!el || !t.trim() || el.closest(skip)) { continue; }
    for (const [rule, what] of rules) {
      const m = t.match(rule);
      if (m) {
        const id = (el.closest("[id]") || {}).id || "top";
        const near = t.slice(Math.max(0, m.index - 30), m.index + m[0].length + 30);
        bad.push(what + " in the text near #" + id + ": "
                 + JSON.stringify(near.replace(/\s+/g, " ").trim()));
        break;
      }
    }
  }
  return bad;
}"""


# the impacts of axe-core's violations that fail a page, and the theme's two modes
# (pydata-sphinx-theme: ``<html data-theme="light|dark">``), each checked
AXE_IMPACTS = ("critical", "serious")
THEMES = ("light", "dark")

# label-content-name-mismatch (a control whose accessible name does not contain its
# visible text, which voice control users speak) is experimental in axe-core and off
# unless asked for
_AXE_RUN = """async ([impacts, only, skip]) => {
  const options = {
    resultTypes: ["violations"],
    rules: {"label-content-name-mismatch": {enabled: true}},
  };
  if (only.length) { options.runOnly = {type: "rule", values: only}; }
  for (const rule of skip) { options.rules[rule] = {enabled: false}; }
  const result = await axe.run(document, options);
  return result.violations.filter(v => impacts.includes(v.impact)).map(v => [
    v.id, v.impact, v.nodes.length,
    v.nodes.slice(0, 3).map(n => String(n.target) + ((n.any[0] || {}).message
      ? " (" + n.any[0].message.split(". ")[0].slice(0, 140) + ")" : ""))]);
}"""

# the theme's colours change with a short CSS transition: with transitions off the
# page has its final colours once the style is recomputed (two frames later), instead
# of after a wait long enough for any transition
_SET_THEME = """async (theme) => {
  if (!document.getElementById("check-no-transitions")) {
    const style = document.createElement("style");
    style.id = "check-no-transitions";
    style.textContent = "*, *::before, *::after { transition: none !important; }";
    document.head.appendChild(style);
  }
  document.documentElement.dataset.theme = theme;
  document.documentElement.dataset.mode = theme;
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  return getComputedStyle(document.body).backgroundColor;
}"""


def set_theme(page: Any, theme: str) -> None:
    """Show an open page in the theme's light or dark mode, as its switch does."""
    page.evaluate(_SET_THEME, theme)


# the rules whose outcome depends on the colours: the only ones run again in the
# other modes of the theme (the rest, names, roles, labels and structure, are the
# same in every mode)
COLOUR_RULES = ("color-contrast", "link-in-text-block")


def accessibility(page: Any, axe: str, colours: bool = True) -> list[str]:
    """axe-core's critical and serious violations of an open page: every rule in the
    light mode of the theme, and the colour rules again in its dark mode. With
    ``colours=False``, every rule but the colour rules, in the light mode only: for a
    page whose every element is styled as an element of a page whose colours were
    checked (:func:`tools.check_html.colours_checked_there`); the colour rules are
    most of axe-core's time on a chapter (about 20 of 24 s)."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.add_script_tag(content=axe)
    failures = []
    skip = [] if colours else list(COLOUR_RULES)
    try:
        for theme in THEMES if colours else THEMES[:1]:
            set_theme(page, theme)
            only = [] if theme == THEMES[0] else list(COLOUR_RULES)
            found = page.evaluate(_AXE_RUN, [list(AXE_IMPACTS), only, skip])
            for rule, impact, n, where in found:
                failures.append(
                    f"axe {rule} ({impact}, {theme} mode) on {n} element(s): "
                    + "; ".join(where)
                )
    finally:
        set_theme(page, THEMES[0])
    return failures


def accessibility_pages(pages: list[Path], executable: str | None = None) -> list[str]:
    """:func:`accessibility` of pages that the full check does not open (the index,
    the references, the Library reference...), at the desktop width."""
    if not AXE.exists():
        return [f"axe-core is missing ({AXE}): run python -m tools.vendor_assets"]
    axe = AXE.read_text(encoding="utf-8")
    failures: list[str] = []
    with chromium(executable) as browser:
        # one tab, which opens each page in turn (each load is a new document)
        page = browser.new_page(viewport={"width": WIDTHS[0], "height": 900})
        page.set_default_timeout(LOAD_TIMEOUT)
        page.route("http*://**", lambda route: route.abort())
        for path in pages:
            page.goto(path.as_uri(), wait_until="load")
            page.evaluate(_FONTS_READY)
            failures += [f"{path.name}: {f}" for f in accessibility(page, axe)]
    return failures


# the right-hand contents of the page: which entries are marked as the reader's place
_TOC_ACTIVE = """() => Array.from(document.querySelectorAll(
  "#pst-page-toc-nav a.active")).map(a => a.getAttribute("href"))"""
_TOC_LINKS = """() => Array.from(document.querySelectorAll(
  "#pst-page-toc-nav a[href^='#']")).map(a => a.getAttribute("href"))"""
# bring the heading of a section just under the header (as a click on its entry does)
_TOC_GO = """(href) => {
  const el = document.getElementById(decodeURIComponent(href.slice(1)));
  const h = el.querySelector("h1, h2, h3, h4, h5, h6") || el;
  const header = document.querySelector("#pst-header");
  const top = header ? header.getBoundingClientRect().height : 0;
  window.scrollTo(0, window.scrollY + h.getBoundingClientRect().top - top - 2);
  return document.documentElement.scrollHeight - window.innerHeight - window.scrollY;
}"""


def toc_failures(page: Any) -> list[str]:
    """The right-hand contents mark the first section at the top of the page, and the
    section whose heading is at the top of the screen after a scroll to it."""
    links = page.evaluate(_TOC_LINKS)
    if len(links) < 2 or not page.locator("#pst-page-toc-nav").is_visible():
        return []
    failures = []
    page.evaluate("() => window.scrollTo(0, 0)")
    page.wait_for_timeout(600)
    active = page.evaluate(_TOC_ACTIVE)
    if active != [links[0]]:
        failures.append(
            f"at the top of the page the contents mark {active}, not {links[0]}"
        )
    middle = links[len(links) // 2]
    left_below = page.evaluate(_TOC_GO, middle)
    page.wait_for_timeout(600)
    active = page.evaluate(_TOC_ACTIVE)
    if left_below > 2 and active != [middle]:
        failures.append(f"at the section {middle} the contents mark {active}")
    page.evaluate("() => window.scrollTo(0, 0)")
    return failures


def raw_tex(page: Any) -> list[str]:
    """Raw TeX and literal ``$...$`` in the text of an open page (scripts run)."""
    page.evaluate(_FONTS_READY)
    return page.evaluate(_RAW_TEX)


def drive_explorers(page: Any) -> list[str]:
    """Move every control of every static explorer of an open page; the failures."""
    failures = []
    explorers = page.locator(".attnlib-explorer")
    for e in range(explorers.count()):
        ex = explorers.nth(e)
        name = ex.get_attribute("id")
        if not ex.locator(".attnlib-explorer-controls").is_visible():
            failures.append(f"{name}: the controls are not shown")
            continue
        img = ex.locator("img.attnlib-explorer-frame")
        inputs = ex.locator("input, select")
        for k in range(inputs.count()):
            control = inputs.nth(k)
            cid = control.get_attribute("id")
            label = ex.locator(f"label[for='{cid}']")
            what = f"{name}: {label.inner_text() if label.count() else cid}"
            control.scroll_into_view_if_needed()
            box = control.bounding_box()
            if box is None or box["width"] < 40:
                failures.append(f"{what}: the control is too small to use ({box})")
            changed = False
            for _ in range(3):  # a move may land on a frame equal to the last one
                before = img.get_attribute("src")
                if control.evaluate("el => el.tagName") == "SELECT":
                    n = control.locator("option").count()
                    current = int(control.input_value())
                    control.select_option(str((current + 1) % n))
                else:
                    control.focus()
                    at_end = control.input_value() == control.get_attribute("max")
                    control.press("ArrowLeft" if at_end else "ArrowRight")
                page.wait_for_timeout(100)
                if img.get_attribute("src") != before:
                    changed = True
                    break
            if not changed:
                failures.append(f"{what}: moving it does not change the figure")
                continue
            try:
                page.wait_for_function(
                    "el => el.complete && el.naturalWidth > 0",
                    arg=img.element_handle(),
                    timeout=15000,
                )
            except Exception:  # playwright's TimeoutError
                failures.append(f"{what}: the frame it asks for does not load")
    return failures


def _weight(root: Path, urls: set[str], page_path: Path) -> int:
    total = page_path.stat().st_size
    for url in urls:
        if not url.startswith("file://"):
            continue
        path = Path(url.removeprefix("file://").split("?")[0].split("#")[0])
        if path.is_file() and path != page_path:
            total += path.stat().st_size
    return total


def check_pages(
    pages: list[Path],
    root: Path,
    executable: str | None = None,
    shots: Path | None = None,
    figures: dict[Path, set[str]] | None = None,
    doms: dict[Path, str] | None = None,
    colours_there: frozenset[Path] | set[Path] = frozenset(),
    driven_there: frozenset[Path] | set[Path] = frozenset(),
    noscript: dict[Path, str] | None = None,
) -> tuple[list, dict]:
    """Failures (``"<page>: <what>"``) and the weight in bytes of each page; with
    ``shots``, a screenshot of each whole page at each width is written there
    (``<page>-1366.png``, ``<page>-390.png``) for a reader to review. ``figures``
    names, for each page, the images of its figures (:mod:`tools.figure_check`); a
    summary of each page's figures at each width is printed. ``doms`` receives
    each page's document at the desktop width as its scripts left it, and
    ``noscript`` its document as Chromium reads it with scripts disabled. On the
    pages of ``colours_there`` axe-core leaves out its colour rules
    (:func:`accessibility`); on those of ``driven_there`` the static explorers are
    not driven (:func:`tools.check_html.explorers_checked_there`)."""
    failures: list[str] = []
    weights: dict[str, int] = {}
    axe = AXE.read_text(encoding="utf-8") if AXE.exists() else None
    if axe is None:
        failures.append(
            f"axe-core is missing ({AXE}): run python -m tools.vendor_assets"
        )
    with chromium(executable) as browser:
        if noscript is not None:
            noscript.update(read_without_scripts(browser, pages))
        for path in pages:
            names = (figures or {}).get(path, set())
            for width in WIDTHS:
                failures += _check(
                    browser,
                    path,
                    root,
                    width,
                    axe,
                    weights,
                    shots,
                    names,
                    doms,
                    colours=path not in colours_there,
                    drive=path not in driven_there,
                )
    return failures, weights


def read_without_scripts(browser: Any, pages: list[Path]) -> dict[Path, str]:
    """Each page's document as Chromium builds it with JavaScript disabled (what a
    reader sees before any script has run, or with none): the page check reads its
    text for raw TeX (:func:`tools.check_html.prose_failures`)."""
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.set_default_timeout(LOAD_TIMEOUT)
        page.route("http*://**", lambda route: route.abort())
        out = {}
        for path in pages:
            page.goto(path.as_uri(), wait_until="load")
            out[path] = page.content()
        return out
    finally:
        context.close()


def _check(
    browser,
    path,
    root,
    width,
    axe,
    weights,
    shots=None,
    figures=frozenset(),
    doms=None,
    colours=True,
    drive=True,
) -> list[str]:
    name = f"{path.name} at {width} px"
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.set_default_timeout(LOAD_TIMEOUT)
    errors: list[str] = []
    urls: set[str] = set()
    page.on("pageerror", lambda exc: errors.append(f"JavaScript error: {exc}"))
    page.on(
        "console",
        lambda m: errors.append(f"console error: {m.text}") if m.type == "error" else 0,
    )
    page.on("request", lambda r: urls.add(r.url))
    page.on(
        "requestfailed",
        lambda r: (
            errors.append(f"cannot load {r.url.rsplit('/', 1)[-1]}")
            if r.url.startswith("file://")
            else None
        ),
    )
    page.route("http*://**", lambda route: route.abort())
    try:
        page.goto(path.as_uri(), wait_until="load")
        page.evaluate(_FONTS_READY)
        page.wait_for_timeout(300)
        out = [f"{name}: {e}" for e in dict.fromkeys(errors)]
        if width == WIDTHS[0]:
            weights[path.name] = _weight(root, set(urls), path)
            if doms is not None:  # as loaded, before anything is opened or scrolled
                doms[path] = page.content()
        if axe is not None and width == WIDTHS[0]:
            out += [f"{name}: {f}" for f in accessibility(page, axe, colours)]
        if width == WIDTHS[0]:
            out += [f"{name}: {f}" for f in raw_tex(page)]
            out += [f"{name}: {f}" for f in toc_failures(page)]
            out += [f"{name}: {f}" for f in icon_failures(page)]
        out += [f"{name}: {f}" for f in search_control_failures(page)]
        out += [f"{name}: {f}" for f in page.evaluate(_EQUATION_START)]
        if drive:
            out += [f"{name}: {f}" for f in drive_explorers(page)]
        if shots is not None:  # before the sidebar is opened, at the top
            shots.mkdir(parents=True, exist_ok=True)
            page.evaluate("() => window.scrollTo(0, 0)")
            page.screenshot(
                path=str(shots / f"{path.stem}-{width}.png"), full_page=True
            )
        if width < 500:
            out += [f"{name}: {f}" for f in page.evaluate(_EQUATIONS)]
            out += [
                f"{name}: {f} (wider than the screen)" for f in page.evaluate(_OVERFLOW)
            ]
            out += [f"{name}: {f}" for f in _sidebar(page)]
        # last: it opens every folded part of the page
        figs = figure_check.check_page(page, name, width, set(figures))
        out += [f"{name}: {f}" for f in figs]
        return out
    finally:
        page.close()


# the visible search controls of a page (the theme's header button, its sidebar
# field, a search form): a reader sees one
_SEARCH_CONTROLS = """() => Array.from(document.querySelectorAll(
  "button.search-button__button, .search-button-field, form.bd-search, "
  + "input[type='search']")).filter(el => {
    if (el.closest(".bd-search-container, .search-button__wrapper")) { return false; }
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && getComputedStyle(el).visibility !== "hidden";
  }).map(el => el.tagName.toLowerCase() + "." + String(el.className).split(" ")[0])"""


def search_control_failures(page: Any) -> list[str]:
    """A page shows exactly one search control (two on the desktop confused)."""
    shown = page.evaluate(_SEARCH_CONTROLS)
    if len(shown) == 1:
        return []
    return [f"{len(shown)} search controls are shown ({', '.join(shown)}), not one"]


# the icons of the page (Font Awesome's <i class="fa-...">), drawn by the theme's
# webfont: each shown icon has a glyph in that font, and the font loads
_ICONS = """async () => {
  await document.fonts.ready;
  const bad = [];
  const icons = Array.from(document.querySelectorAll(
    "i[class*='fa-'], span[class*='fa-'], i.fa, i.fas, i.fab, i.far"))
    .filter(el => el.getClientRects().length > 0
            && getComputedStyle(el).visibility !== "hidden");
  for (const el of icons) {
    const before = getComputedStyle(el, "::before");
    const name = String(el.className).split(" ").filter(c => c.startsWith("fa-")
      && !/^fa-(solid|regular|brands|lg|sm|xs|fw|[0-9]+x)$/.test(c)).join(" ");
    if (!before.content || ["none", "normal", '""'].includes(before.content)) {
      bad.push("the icon " + name + " has no glyph");
    } else if (!/Font Awesome/.test(before.fontFamily)) {
      bad.push("the icon " + name + " is not drawn in the Font Awesome font");
    } else if (el.getBoundingClientRect().width < 4) {
      bad.push("the icon " + name + " is drawn " + el.getBoundingClientRect().width
               + " px wide");
    }
  }
  const faces = Array.from(document.fonts).filter(f => /Font Awesome/.test(f.family));
  if (icons.length && !faces.some(f => f.status === "loaded")) {
    bad.push("the Font Awesome webfont did not load");
  }
  if (document.querySelector("script[src*='fontawesome.js']")) {
    bad.push("the page loads Font Awesome's JavaScript");
  }
  return [icons.length, bad];
}"""


def icon_failures(page: Any) -> list[str]:
    """Icons that do not show (:data:`_ICONS`); a page with no icon fails too."""
    n, bad = page.evaluate(_ICONS)
    return list(bad) if n else ["no icon is shown (the header's buttons have icons)"]


#: queries of the search check: words of the chapters' text near their formulas
SEARCH_QUERIES = ("attention", "covariance", "temperature")
_SUMMARIES = """() => Array.from(document.querySelectorAll(
  "#search-results ul.search li")).map(li => {
    const p = li.querySelector("p.context");
    return p ? p.textContent : null;
  })"""


def search_failures(
    root: Path,
    executable: str | None = None,
    queries: tuple[str, ...] = SEARCH_QUERIES,
) -> tuple[list[str], int]:
    """The summaries of the search's results print no raw TeX: the site is served
    on this machine (the results' summaries are read from the pages, which a
    browser does not fetch from ``file://``) and ``search.html`` asked each query.
    Returns the failures and the number of summaries read (a check that reads none
    fails)."""
    import functools
    import http.server
    import re
    import threading

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    rules = [
        (re.compile(r"\\[A-Za-z]+"), "raw TeX"),
        (re.compile(r"\$[^$\n]+\$"), "$...$"),
    ]
    failures: list[str] = []
    read = 0
    try:
        with chromium(executable) as browser:
            page = browser.new_page(viewport={"width": WIDTHS[0], "height": 900})
            page.set_default_timeout(LOAD_TIMEOUT)
            page.route(
                "**/*",
                lambda route: (
                    route.continue_()
                    if route.request.url.startswith(base)
                    else route.abort()
                ),
            )
            for query in queries:
                page.goto(f"{base}/search.html?q={query}", wait_until="load")
                page.wait_for_function(
                    "() => /found/i.test((document.querySelector("
                    "'#search-results .search-summary') || {}).textContent || '')"
                )
                try:  # each summary is fetched from its page after the list
                    page.wait_for_function(
                        f"() => ({_SUMMARIES})().every(t => t !== null)",
                        timeout=60_000,
                    )
                except Exception:  # playwright's TimeoutError: read what came
                    pass
                texts = [t for t in page.evaluate(_SUMMARIES) if t is not None]
                read += len(texts)
                for text in texts:
                    for rule, what in rules:
                        m = rule.search(text)
                        if m:
                            near = " ".join(
                                text[max(0, m.start() - 40) : m.end() + 40].split()
                            )
                            failures.append(
                                f"search.html?q={query}: a summary prints {what}: "
                                f"{near!r}"
                            )
                            break
    finally:
        server.shutdown()
        server.server_close()
    if not read:
        failures.append(f"search.html: no summary of a result for {list(queries)}")
    return failures[:10], read


def _sidebar(page: Any) -> list[str]:
    toggle = page.locator("button.primary-toggle:visible").first
    if toggle.count() == 0:
        return ["no visible sidebar toggle"]
    toggle.click()
    page.wait_for_timeout(500)
    nav = page.locator("#pst-primary-sidebar, .bd-sidebar-primary").first
    box = nav.bounding_box() if nav.count() else None
    if not box or box["width"] < 150 or box["x"] + box["width"] <= 0:
        return ["the sidebar toggle does not show the table of contents"]
    links = nav.locator("a.reference.internal")
    if links.count() == 0 or not links.first.is_visible():
        return ["the table of contents opened by the toggle has no visible link"]
    return []
