"""The footer of every page links how to cite the book, its PDF and its repository.

* **Cite**: the citation of ``CITATION.cff`` (authors, year, title, version) in a
  line, and the file itself, copied into the site (``CITATION.cff`` at its root).
* **PDF**: ``make pdf`` writes ``_build/latex/book.pdf`` (beside the HTML folder,
  in its own build). When that PDF is there and is of this version (the LaTeX
  source beside it says ``\\release{<version>}`` and the PDF is not older than it),
  the build copies it into the site as :data:`PDF_NAME` and the footer links it;
  otherwise there is no link (a PDF of another version is never linked), and the
  build says so.
* **Repository**: ``repository.url`` of ``_config.yml`` (the theme's
  ``repository_url``, as :mod:`bookext.launch` reads it), when it is set.
"""

from __future__ import annotations

import html
import re
import shutil
from pathlib import Path
from typing import Any

from sphinx.util import logging

from attnlib._version import __version__

logger = logging.getLogger(__name__)
ROOT = Path(__file__).resolve().parents[1]
CFF = "CITATION.cff"
PDF_NAME = f"mathematics-of-transformers-{__version__}.pdf"
_RELEASE = re.compile(r"\\release\{([^}]*)\}")


def citation(cff: dict) -> str:
    """One line that cites the book from the fields of ``CITATION.cff``."""
    names = []
    for author in cff.get("authors") or []:
        name = author.get("name") or " ".join(
            p for p in (author.get("given-names"), author.get("family-names")) if p
        )
        if name:
            names.append(name)
    if not names or not cff.get("title"):
        raise ValueError("CITATION.cff needs authors and a title")
    year = str(cff.get("date-released", ""))[:4]
    who = ", ".join(names[:-1]) + (" and " if len(names) > 1 else "") + names[-1]
    when = f" ({year})" if year else ""
    version = f", version {cff['version']}" if cff.get("version") else ""
    return f"{who}{when}. {cff['title']}{version}."


def fresh_pdf(latex: Path, version: str = __version__) -> Path | None:
    """``latex/book.pdf`` when it is the PDF of ``version``, else None."""
    pdf, tex = latex / "book.pdf", latex / "book.tex"
    if not (pdf.is_file() and tex.is_file()):
        return None
    m = _RELEASE.search(tex.read_text(encoding="utf-8", errors="replace"))
    if m is None or m.group(1).strip() != version:
        return None
    if pdf.stat().st_mtime < tex.stat().st_mtime:
        return None
    return pdf


def builder_inited(app: Any) -> None:
    """``builder-inited``: copy ``CITATION.cff`` and a PDF of this version into the
    site; the footer links what is there."""
    app.attnlib_links = {}
    if app.builder.format != "html":
        return
    out = Path(app.builder.outdir)
    out.mkdir(parents=True, exist_ok=True)
    if (ROOT / CFF).is_file():
        import yaml

        cff = yaml.safe_load((ROOT / CFF).read_text(encoding="utf-8"))
        shutil.copy2(ROOT / CFF, out / CFF)
        app.attnlib_links["cite"] = citation(cff)
    pdf = fresh_pdf(out.parent / "latex")
    stale = out / PDF_NAME
    if pdf is not None:
        shutil.copy2(pdf, out / PDF_NAME)
        app.attnlib_links["pdf"] = PDF_NAME
    else:
        if stale.exists():
            stale.unlink()
        logger.info(
            "bookext: no PDF of version %s in %s (make pdf): the pages link none",
            __version__,
            out.parent / "latex",
        )
    url = (app.config.html_theme_options or {}).get("repository_url") or ""
    if url:
        app.attnlib_links["repository"] = url


def footer_links(links: dict, pathto: Any) -> str:
    """The footer's paragraph of links (``pathto`` as in a page's context)."""
    parts = []
    if "cite" in links:
        parts.append(
            f"Cite: {html.escape(links['cite'])} "
            f'(<a class="attnlib-cite" href="{pathto(CFF, 1)}">{CFF}</a>)'
        )
    if "pdf" in links:
        parts.append(
            f'<a class="attnlib-pdf" href="{pathto(links["pdf"], 1)}">'
            "The book as a PDF</a>"
        )
    if "repository" in links:
        url = html.escape(links["repository"], quote=True)
        parts.append(
            f'<a class="attnlib-repository" href="{url}">The source repository</a>'
        )
    if not parts:
        return ""
    return '<p class="attnlib-links">' + " · ".join(parts) + "</p>"


def add_footer_links(
    app: Any, pagename: str, templatename: str, context: dict, doctree: Any
) -> None:
    """``html-page-context``: the links after the theme's extra footer."""
    links = getattr(app, "attnlib_links", {})
    extra = footer_links(links, context["pathto"])
    if extra:
        context["theme_extra_footer"] = (
            context.get("theme_extra_footer") or ""
        ) + extra


def setup(app: Any) -> dict:
    app.connect("builder-inited", builder_inited)
    app.connect("html-page-context", add_footer_links)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
