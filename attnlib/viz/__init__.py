"""Plotting helpers of the book (matplotlib), one submodule per chapter topic.

:func:`player_html` is shared by every chapter: it turns an animation into the
self-contained player that the static HTML pages show.
"""

from __future__ import annotations

import html
import re
from typing import Any

__all__ = ["describe", "player_html"]

_EXTERNAL_LINK = re.compile(r"<link\b[^>]*href=\"(?:https?:)?//[^\"]*\"[^>]*>", re.S)
_PLAYER_IMG = re.compile(r'<img id="(_anim_img\w+)">')
_PLAYER_SLIDER = re.compile(r'(<input id="_anim_slider\w+" type="range")')


_TEX = {
    **{
        name: chr(code)
        for name, code in zip(
            "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi "
            "omicron pi rho sigma tau upsilon phi chi psi omega".split(),
            [*range(0x3B1, 0x3C2), *range(0x3C3, 0x3CA)],
        )
    },
    "Gamma": "Γ",
    "Delta": "Δ",
    "Theta": "Θ",
    "Lambda": "Λ",
    "Sigma": "Σ",
    "Phi": "Φ",
    "Omega": "Ω",
    "langle": "⟨",
    "rangle": "⟩",
    "cdot": "·",
    "le": "≤",
    "ge": "≥",
    "leq": "≤",
    "geq": "≥",
    "infty": "∞",
    "to": "→",
    "times": "×",
    "ast": "*",
    "star": "*",
    "quad": " ",
    "qquad": " ",
}


def _plain(text: str) -> str:
    """Mathtext of a matplotlib label as readable text (``$\\beta$`` -> ``β``)."""
    text = re.sub(
        r"\\(mathrm|mathbf|mathcal|operatorname|text)\{([^}]*)\}", r"\2", text
    )
    text = re.sub(r"\\([A-Za-z]+)", lambda m: _TEX.get(m.group(1), m.group(1)), text)
    text = text.replace("$", "").replace("{", "").replace("}", "").replace("\\", "")
    return re.sub(r"\s+", " ", text).strip()


def describe(fig: Any) -> str:
    """A text description of a matplotlib figure, for its alternative text.

    The figure's title and, for every panel, its title and the quantities on its
    axes, e.g. ``"2 panels. 1: SA, beta = 4 (x: t; y: r_k). 2: ..."``.
    """
    parts = []
    suptitle = getattr(fig, "_suptitle", None)
    if suptitle is not None and suptitle.get_text():
        parts.append(_plain(suptitle.get_text()) + ".")
    axes = [
        ax
        for ax in fig.get_axes()
        if ax.get_visible() and ax.get_label() != "<colorbar>"
    ]
    if len(axes) > 1:
        parts.append(f"{len(axes)} panels.")
    for k, ax in enumerate(axes, start=1):
        title = _plain(ax.get_title())
        labels = [
            f"{name}: {_plain(get())}"
            for name, get in (("x", ax.get_xlabel), ("y", ax.get_ylabel))
            if get()
        ]
        zlabel = getattr(ax, "get_zlabel", None)
        if zlabel is not None and zlabel():
            labels.append(f"z: {_plain(zlabel())}")
        text = title or "untitled panel"
        if labels:
            text += " (" + "; ".join(labels) + ")"
        parts.append((f"{k}: " if len(axes) > 1 else "") + text + ".")
    return " ".join(parts) or "A figure."


def player_html(anim: Any, alt: str | None = None) -> str:
    """The ``to_jshtml`` player of a matplotlib animation, without links to a CDN.

    matplotlib's player links Font Awesome 4 from ``maxcdn.bootstrapcdn.com``; the
    book's theme already ships Font Awesome (whose ``fa`` classes draw the buttons),
    and the pages load nothing from another host, so the link is dropped. Its image
    gets an alternative text (``alt``, by default "Animation of N frames" and the
    :func:`describe` of its figure) and its frame slider an accessible name. Show
    the result with ``IPython.display.HTML``.

    Parameters
    ----------
    anim : matplotlib.animation.Animation

    Returns
    -------
    str
        HTML of a player whose frames are embedded as PNG images.
    """
    page = _EXTERNAL_LINK.sub("", anim.to_jshtml())
    if alt is None:
        frames = getattr(anim, "_save_count", None) or len(
            list(getattr(anim, "_framedata", []) or [])
        )
        count = f" of {frames} frames" if frames else ""
        alt = f"Animation{count}; its figure: {describe(anim._fig)}"
    text = html.escape(alt, quote=True)
    page = _PLAYER_IMG.sub(rf'<img id="\1" alt="{text}">', page, count=1)
    return _PLAYER_SLIDER.sub(r'\1 aria-label="Frame of the animation"', page, count=1)
