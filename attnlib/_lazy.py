"""Heavy dependencies, imported on first use so that ``import attnlib`` stays fast.

``scipy.special`` alone takes longer to import than numpy; the library needs it (and
``scipy.optimize``, ``scipy.integrate``, ``scipy.sparse.csgraph``, ``tqdm``,
``concurrent.futures``) only in some functions. The modules of the library import the
stand-ins below at the top, as if they were the modules, and the real module is
imported at the first attribute access (``special.ive(...)``), then served from
``sys.modules``.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "LazyModule",
    "special",
    "optimize",
    "integrate",
    "csgraph",
    "tqdm_auto",
    "futures",
]


class LazyModule:
    """A module imported at the first access to one of its attributes.

    Examples
    --------
    >>> math = LazyModule("math")
    >>> math.sqrt(4.0)
    2.0
    """

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        object.__setattr__(self, "_name", name)

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self._name), attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}>"


special = LazyModule("scipy.special")
optimize = LazyModule("scipy.optimize")
integrate = LazyModule("scipy.integrate")
csgraph = LazyModule("scipy.sparse.csgraph")
tqdm_auto = LazyModule("tqdm.auto")
futures = LazyModule("concurrent.futures")  # it imports logging
