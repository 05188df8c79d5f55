"""Checks of the chapters' notebooks shared by their tests: where their links lead,
and the values that an install cell sets."""

from __future__ import annotations

import re

LINK = re.compile(r"\]\(([^)\s]+)\)|(?:href|src)=\"([^\"]+)\"")
ANCHOR = re.compile(r'id="([^"]+)"')


def link_problems(nb) -> list[str]:
    """Links of a notebook's markdown that lead nowhere: a relative path (it exists
    neither beside a downloaded notebook nor, with no address, on a site), an
    anchor with no ``id`` in the notebook."""
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    ids = set(ANCHOR.findall(text))
    found = []
    for m in LINK.finditer(text):
        target = m.group(1) or m.group(2)
        if target.startswith("#"):
            if target[1:] not in ids:
                found.append(f"no anchor {target}")
        elif not re.match(r"[a-z][a-z0-9+.-]*:", target):
            if not re.fullmatch(r"[\\\w'^{}(),.+-]*", target):  # not math: x_i](x)
                found.append(f"relative link {target}")
            elif "/" in target or target.endswith((".html", ".ipynb", ".png")):
                found.append(f"relative link {target}")
    return found


def install_namespace(src: str) -> dict:
    """The install cell's settings and helpers, without running its last part."""
    namespace: dict = {}
    exec(src.split("\nbefore = _installed()")[0], namespace)
    return namespace
