"""Launch buttons (Binder, Colab, JupyterHub) from one setting: ``repository.url``.

``_config.yml`` names the services (``launch_buttons``) and the repository; the
theme (sphinx-book-theme) draws a button per service on every chapter page. With
``repository.url`` empty the theme cannot build the links: :func:`launch_config`
then removes the buttons and says so in the build's log. JupyterHub needs a hub's
address as well (``launch_buttons.jupyterhub_url``, a course's own hub with
nbgitpuller).

Binder and JupyterHub open the chapter's ``.md`` from the repository (jupytext
opens it as a notebook there). Colab opens only ``.ipynb`` files on GitHub: its
button (:func:`colab_link`) opens the chapter's reader notebook in the published
site's branch (``PAGES_BRANCH``, where the Pages workflow pushes the built book).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlparse

from sphinx.util import logging

logger = logging.getLogger(__name__)
PAGES_BRANCH = "gh-pages"
SERVICES = ("binderhub_url", "colab_url", "jupyterhub_url")


def launch_config(app: Any, config: Any) -> None:
    """``config-inited``: keep the launch buttons only with a repository address."""
    options = dict(config.html_theme_options or {})
    buttons = dict(options.get("launch_buttons") or {})
    # the JupyterLite link is bookext's (its site holds notebooks, not the .md)
    buttons.pop("jupyterlite_url", None)
    if "launch_buttons" in options:
        options["launch_buttons"] = buttons
    if not options.get("repository_url"):
        if any(buttons.get(k) for k in SERVICES):
            logger.info(
                "bookext: repository.url is empty in _config.yml: the chapters get "
                "no Binder, Colab or JupyterHub buttons"
            )
        options.pop("launch_buttons", None)
    elif buttons.get("colab_url") and not colab_url(
        options["repository_url"], "x.ipynb", buttons["colab_url"]
    ):
        logger.info("bookext: Colab opens notebooks from GitHub only: no Colab button")
        options["launch_buttons"] = {
            k: v for k, v in buttons.items() if k != "colab_url"
        }
    config.html_theme_options = options


def colab_url(repository: str, notebook: str, colab: str) -> str | None:
    """Colab's address of a reader notebook of the site published on GitHub."""
    parts = urlparse(repository)
    path = parts.path.strip("/").removesuffix(".git").split("/")
    if parts.netloc != "github.com" or len(path) != 2:
        return None
    owner, repo = path
    return f"{colab.rstrip('/')}/github/{owner}/{repo}/blob/{PAGES_BRANCH}/{notebook}"


def colab_link(
    app: Any, pagename: str, templatename: str, context: dict, doctree: Any
) -> None:
    """``html-page-context`` (after the theme's): the Colab button opens the reader
    notebook (``notebooks/<chapter>.ipynb``), not the chapter's ``.md``."""
    options = app.config.html_theme_options or {}
    colab = (options.get("launch_buttons") or {}).get("colab_url")
    if not colab:
        return
    name = pagename.rsplit("/", 1)[-1]
    for group in context.get("header_buttons", []):
        for button in group.get("buttons", []) if isinstance(group, dict) else []:
            if button.get("text") == "Colab":
                url = colab_url(
                    options.get("repository_url", ""), f"notebooks/{name}.ipynb", colab
                )
                if url:
                    button["url"] = url


def setup(app: Any) -> dict:
    """For a book that wants only the launch buttons (the tests' small books)."""
    app.connect("config-inited", launch_config)
    app.connect("html-page-context", colab_link, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
