"""Small helpers shared by the tests."""

from __future__ import annotations

import re

_FRAME = re.compile(r'frames\[\d+\] = "data:image/')


def jshtml_frames(html: str) -> int:
    """Number of frames embedded in the output of ``FuncAnimation.to_jshtml()``."""
    return len(_FRAME.findall(html))
