"""What a figure draws, in words: the fallback description of a figure that has no
caption of its own (:func:`describe`), and the plain text of its labels."""

from __future__ import annotations

import re
from typing import Any

__all__ = ["describe", "plain_text"]

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


def plain_text(text: str) -> str:
    """Mathtext of a matplotlib label as readable text (``$\\beta$`` -> ``β``)."""
    text = re.sub(
        r"\\(mathrm|mathbf|mathcal|operatorname|text)\{([^}]*)\}", r"\2", text
    )
    text = re.sub(r"\\([A-Za-z]+)", lambda m: _TEX.get(m.group(1), m.group(1)), text)
    text = text.replace("$", "").replace("{", "").replace("}", "").replace("\\", "")
    text = re.sub(r"\s+", " ", text).replace("⟨ ", "⟨").replace(" ⟩", "⟩")
    return text.strip()


def _what(ax: Any) -> str:
    """What a panel draws: its curves, points and images, with their legend labels."""
    from matplotlib.collections import PathCollection

    kinds = []
    lines = [ln for ln in ax.get_lines() if ln.get_visible()]
    if lines:
        kinds.append(f"{len(lines)} curve{'s' * (len(lines) > 1)}")
    points = sum(
        len(c.get_offsets())
        for c in ax.collections
        if isinstance(c, PathCollection) and c.get_visible()
    )
    if points:
        kinds.append(f"{points} point{'s' * (points > 1)}")
    images = len(ax.get_images())
    if images:
        kinds.append("an image" if images == 1 else f"{images} images")
    _, labels = ax.get_legend_handles_labels()
    labels = list(dict.fromkeys(plain_text(label) for label in labels if label.strip()))
    text = ", ".join(kinds)
    if labels:
        shown = ", ".join(labels[:6])
        more = f" and {len(labels) - 6} more" if len(labels) > 6 else ""
        text += f"{'; ' if text else ''}legend: {shown}{more}"
    return text


def describe(fig: Any) -> str:
    """A text description of a matplotlib figure, for its alternative text.

    The figure's title and, for every panel, its title, the quantities on its axes
    and what it draws (curves, points, images, and the labels of its legend), e.g.
    ``"2 panels. 1: SA, beta = 4 (x: t; y: r_k; 3 curves; legend: n = 8, ...)."``.
    """
    parts = []
    suptitle = getattr(fig, "_suptitle", None)
    if suptitle is not None and suptitle.get_text():
        parts.append(plain_text(suptitle.get_text()) + ".")
    axes = [
        ax
        for ax in fig.get_axes()
        if ax.get_visible() and ax.get_label() != "<colorbar>"
    ]
    if len(axes) > 1:
        parts.append(f"{len(axes)} panels.")
    for k, ax in enumerate(axes, start=1):
        title = plain_text(ax.get_title())
        labels = [
            f"{name}: {plain_text(get())}"
            for name, get in (("x", ax.get_xlabel), ("y", ax.get_ylabel))
            if get()
        ]
        zlabel = getattr(ax, "get_zlabel", None)
        if zlabel is not None and zlabel():
            labels.append(f"z: {plain_text(zlabel())}")
        what = _what(ax)
        if what:
            labels.append(what)
        text = title or "untitled panel"
        if labels:
            text += " (" + "; ".join(labels) + ")"
        parts.append((f"{k}: " if len(axes) > 1 else "") + text + ".")
    return " ".join(parts) or "An empty figure."
