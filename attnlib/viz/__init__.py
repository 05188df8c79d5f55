"""Plotting helpers of the book (matplotlib), one submodule per chapter topic.

:func:`player_html` is shared by every chapter: it turns an animation into the
self-contained player that the static HTML pages show.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["player_html"]

_EXTERNAL_LINK = re.compile(r"<link\b[^>]*href=\"(?:https?:)?//[^\"]*\"[^>]*>", re.S)


def player_html(anim: Any) -> str:
    """The ``to_jshtml`` player of a matplotlib animation, without links to a CDN.

    matplotlib's player links Font Awesome 4 from ``maxcdn.bootstrapcdn.com``; the
    book's theme already ships Font Awesome (whose ``fa`` classes draw the buttons),
    and the pages load nothing from another host, so the link is dropped. Show the
    result with ``IPython.display.HTML``.

    Parameters
    ----------
    anim : matplotlib.animation.Animation

    Returns
    -------
    str
        HTML of a player whose frames are embedded as PNG images.
    """
    return _EXTERNAL_LINK.sub("", anim.to_jshtml())
