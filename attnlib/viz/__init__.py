"""Plotting (matplotlib), one submodule per chapter topic.

Each submodule draws what its topic package computes: :mod:`attnlib.viz.modelling`,
:mod:`attnlib.viz.clustering`, :mod:`attnlib.viz.gaussian`, :mod:`attnlib.viz.circle`,
:mod:`attnlib.viz.extremisers` and :mod:`attnlib.viz.frontiers`; a panel is drawn on
given axes (``draw_x(ax, ...)``), a figure is returned by ``x_figure(...)`` or
``plot_x(...)``. :func:`caption` gives a figure the caption and alternative text
that the book shows under it. How the book renders and measures figures is not
public (``attnlib.viz._render``, ``attnlib.viz._screens``).
"""

from __future__ import annotations

import sys

from .._moved import retired, shim
from ._screens import caption

__all__ = ["caption"]

#: The book's machinery, no longer public: served for one release with a warning.
__getattr__ = retired(
    __name__,
    {
        "describe": "attnlib.viz._describe.describe (not public: the book's captions)",
        **{
            n: f"attnlib.viz._render.{n} (not public: how the book renders figures)"
            for n in (
                "frame_dpi",
                "player_html",
                "record_text_sizes",
                "mark_text_size",
                "smallest_text",
            )
        },
    },
    code="attnlib.viz._render",
)

# the module of earlier releases whose phone-image helpers the book's build uses
screens = sys.modules.setdefault(
    f"{__name__}.screens",
    shim(
        f"{__name__}.screens",
        {
            "caption": "attnlib.viz.caption",
            **{
                n: f"attnlib.viz._screens.{n} (not public: how the book lays out "
                "figures)"
                for n in (
                    "DESKTOP_COLUMN_PX",
                    "PHONE_COLUMN_PX",
                    "TARGET_PX",
                    "attach_phone",
                    "figure_text",
                    "one_column",
                    "phone_image",
                    "screen_pngs",
                    "without_phone",
                )
            },
        },
        "attnlib.viz._screens",
    ),
)
