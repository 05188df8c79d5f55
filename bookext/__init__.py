"""Sphinx extension of the book: its version, licence footer and reference pages.

Loaded by ``_config.yml`` (``sphinx.local_extensions``). It sets Sphinx's ``version``
and ``release`` from :mod:`attnlib._version` (the one version string of the project)
and fills ``{release}`` in the theme's footer, so that every page names the version
and the licences of what it shows; it writes the pages of the "Library reference"
part (:mod:`bookext.apiref`) before the sources are read; and it makes pages that
need no kernel (:mod:`bookext.static`): widgets as precomputed explorers, progress
bars from their final state, no widget scripts; and it writes the notebooks of the
chapters beside the pages and links them (:mod:`bookext.notebooks`); for the PDF,
players print their last frame and solutions are left out (:mod:`bookext.latex`);
its search finds words with or without their diacritics (:mod:`bookext.search`),
the cells that assert a result are folded behind "Show the check" and proofs can
be folded (:mod:`bookext.folding`), pages load no Font Awesome script
(:mod:`bookext.assets`), the footer links how to cite the book, its PDF and its
repository (:mod:`bookext.sitelinks`), figures keep their text legible on a phone
(:mod:`bookext.legible`), the formulas are typeset while the book is built, so
that no page needs a script to show them (:mod:`bookext.katex`), and the
bibliography is labelled by author and year, as the text cites it
(:mod:`bookext.bibstyle`).
"""

from __future__ import annotations

from typing import Any

from pathlib import Path

from attnlib._version import __version__

from . import assets, bibstyle, katex, sitelinks
from .apiref import escape_type_stars, link_citations, resolve_reexport, write_pages
from .folding import FoldChecks, register_proof_folds
from .launch import colab_link, launch_config
from .legible import legible_figures, strip_phone_images
from .latex import Appendices, DropSolutions, PlayerFrames, latex_macros
from .notebooks import add_links, build_finished
from .search import SearchEnglishFolded
from .static import (
    FigureCaptions,
    StaticProgressBars,
    externalise_frames,
    setup_environment,
)


def _config_inited(app: Any, config: Any) -> None:
    config.version = config.release = __version__
    options = dict(config.html_theme_options or {})
    # the theme's mode: with none set, pydata-sphinx-theme logs an error on every page
    context = dict(config.html_context or {})
    context.setdefault("default_mode", "light")
    config.html_context = context
    footer = options.get("extra_footer")
    if footer:
        options["extra_footer"] = footer.replace("{release}", __version__)
    config.html_theme_options = options
    # launch buttons need the repository's address (the theme fails without it)
    launch_config(app, config)


def _api_pages(app: Any, config: Any) -> None:
    write_pages(Path(app.srcdir))


def _static_files(app: Any) -> None:
    """``builder-inited``: the book's stylesheet and script (``bookext/_static``)."""
    if app.builder.format == "html":
        app.config.html_static_path.append(str(Path(__file__).parent / "_static"))
        app.add_css_file("attnlib-book.css")
        app.add_js_file("attnlib-book.js")


def setup(app: Any) -> dict:
    # the bibliography's author-year labels (bibtex_default_style in _config.yml)
    bibstyle.register()
    app.connect("config-inited", _config_inited)
    # before sphinx-external-toc (priority 900) reads the toc and its globs
    app.connect("config-inited", _api_pages, priority=100)
    app.connect("missing-reference", resolve_reexport)
    app.connect("autodoc-process-docstring", escape_type_stars, priority=600)
    app.connect("autodoc-process-docstring", link_citations, priority=600)
    setup_environment()
    app.add_post_transform(StaticProgressBars)
    # after myst-nb (500) has added the page's scripts
    app.connect("html-page-context", externalise_frames, priority=900)
    app.connect("html-page-context", add_links)
    app.connect("html-page-context", legible_figures)
    app.connect("html-page-context", colab_link, priority=900)
    app.connect("build-finished", build_finished)
    app.connect("build-finished", strip_phone_images)
    app.add_transform(PlayerFrames)
    app.add_transform(FigureCaptions)
    app.add_transform(FoldChecks)
    register_proof_folds(app)
    app.add_post_transform(DropSolutions)
    app.add_post_transform(Appendices)
    app.connect("config-inited", latex_macros)
    app.connect("builder-inited", _static_files)
    app.add_search_language(SearchEnglishFolded)
    # no Font Awesome script (the theme's webfont draws the icons), no check-only
    # vendored scripts in the site, and the footer's links (cite, PDF, repository)
    app.connect("config-inited", assets.config_inited)
    app.connect("builder-inited", assets.builder_inited)
    app.connect("build-finished", assets.build_finished)
    app.connect("builder-inited", sitelinks.builder_inited)
    app.connect("html-page-context", sitelinks.add_footer_links)
    # the formulas typeset while the book is built (KaTeX in Node.js): no page
    # typesets maths in the reader's browser
    katex.setup(app)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
