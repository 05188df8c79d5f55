"""Small helpers shared by the tests."""

from __future__ import annotations

import re
import shutil

#: The jupytext front matter of a MyST text notebook run by the python3 kernel, as
#: every chapter of the book starts (for the tests that build small books).
MYST_HEADER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---
"""

_FRAME = re.compile(r'frames\[\d+\] = "data:image/')


def jshtml_frames(html: str) -> int:
    """Number of frames embedded in the output of ``FuncAnimation.to_jshtml()``."""
    return len(_FRAME.findall(html))


#: Debian's Chromium, which the browser tests drive through playwright (None: absent)
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
