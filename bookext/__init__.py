"""Sphinx extension of the book: its version, licence footer and static pages.

Loaded by ``_config.yml`` (``sphinx.local_extensions``). It sets Sphinx's ``version``
and ``release`` from :mod:`attnlib._version` (the one version string of the project)
and fills ``{release}`` in the theme's footer, so that every page names the version
and the licences of what it shows.
"""

from __future__ import annotations

from typing import Any

from attnlib._version import __version__


def _config_inited(app: Any, config: Any) -> None:
    config.version = config.release = __version__
    options = dict(config.html_theme_options or {})
    footer = options.get("extra_footer")
    if footer:
        options["extra_footer"] = footer.replace("{release}", __version__)
        config.html_theme_options = options


def setup(app: Any) -> dict:
    app.connect("config-inited", _config_inited)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
