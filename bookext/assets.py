"""What a page loads: icons from the theme's stylesheet, no check-only or build-only
scripts.

* The theme (pydata-sphinx-theme, under sphinx-book-theme) puts Font Awesome's
  JavaScript on every page (``_static/scripts/fontawesome.js``, 1.49 MB, half of the
  scripts of a chapter page) to turn a dozen ``<i class="fa-...">`` icons into SVG.
  The theme's stylesheet already holds Font Awesome's CSS and its webfonts, which draw
  the same icons from those ``<i>`` elements. :data:`TEMPLATES` holds a ``layout.html``
  that takes the theme's ``<head>`` assets as they are but for that one script
  (:func:`without_icon_script`, a filter of the templates): the icons are drawn by the
  webfont.
* ``book/_vendor`` (``html_static_path``) also holds axe-core, which only the page
  check loads (``tools/browser_check.py`` reads it from ``book/_vendor``), and KaTeX
  for Node.js, which only the build runs (:mod:`bookext.katex`): they are left out
  of the site's ``_static`` (:data:`CHECK_ONLY`, :data:`NOT_SERVED`).
* The theme's files that no page loads are removed from the site once it is built
  (:func:`build_finished`): Font Awesome's JavaScript and its licence,
  sphinx-copybutton's ``copybutton_funcs.js`` (a module of the functions that
  ``copybutton.js`` holds already) and every source map (``*.map``, which only a
  browser's developer tools fetch): 4.9 MB that no reader downloads.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

TEMPLATES = Path(__file__).resolve().parent / "_templates"
#: folders of ``book/_vendor`` that only the page check uses: not copied into the site
CHECK_ONLY = ("axe",)
#: folders of ``book/_vendor`` that no page loads: the page check's, the build's
NOT_SERVED = (*CHECK_ONLY, "katex-node")
ICON_SCRIPT = re.compile(
    r'\s*<script\b[^>]*\ssrc="[^"]*/fontawesome\.js(?:\?[^"]*)?"[^>]*>\s*</script>'
)


def without_icon_script(html: str) -> str:
    """``html`` without the ``<script>`` that loads Font Awesome's JavaScript."""
    from markupsafe import Markup

    return Markup(ICON_SCRIPT.sub("", str(html)))


def config_inited(app: Any, config: Any) -> None:
    """``config-inited``: the layout without the icon script, and ``book/_vendor``
    served without what only the page check loads."""
    if str(TEMPLATES) not in config.templates_path:
        config.templates_path = [str(TEMPLATES), *config.templates_path]
    # Sphinx copies html_static_path without the paths that exclude_patterns
    # match (relative to each static folder); these name no page of the book
    patterns = list(config.exclude_patterns)
    for folder in NOT_SERVED:
        if folder not in patterns:
            patterns.append(folder)
    config.exclude_patterns = patterns


#: files of the built site's ``_static`` that no page loads (glob patterns)
UNLOADED = (
    "scripts/fontawesome.js",
    "scripts/fontawesome.js.*",
    "copybutton_funcs.js",
    "**/*.map",
)


def build_finished(app: Any, exception: Exception | None) -> None:
    """``build-finished``: the site ships no file of :data:`UNLOADED`."""
    if exception is not None or app.builder.format != "html":
        return
    static = Path(app.outdir) / "_static"
    for pattern in UNLOADED:
        for path in static.glob(pattern):
            if path.is_file():
                path.unlink()


def builder_inited(app: Any) -> None:
    """``builder-inited``: the filter that ``_templates/layout.html`` uses."""
    env = getattr(getattr(app.builder, "templates", None), "environment", None)
    if env is not None:
        env.filters["attnlib_without_icon_script"] = without_icon_script


def setup(app: Any) -> dict:
    app.connect("config-inited", config_inited)
    app.connect("builder-inited", builder_inited)
    app.connect("build-finished", build_finished)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
