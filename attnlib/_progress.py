"""One progress bar for every loop of the library.

``tqdm.auto`` is imported only when a bar is asked for, so the library imports and
runs without it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ._lazy import tqdm_auto

__all__ = ["progress_bar"]


class _Silent:
    """The bar of a run without progress: updates are ignored."""

    def update(self, n: int = 1) -> None:
        pass


@contextmanager
def progress_bar(enabled: bool, total: int, desc: str) -> Iterator[Any]:
    """A ``tqdm.auto`` bar of ``total`` units if ``enabled``, closed on exit.

    Parameters
    ----------
    enabled : bool
        Show the bar (otherwise a silent stand-in with the same ``update``).
    total : int
        Number of units (output times, tasks, steps).
    desc : str
        Label of the bar.

    Yields
    ------
    object with an ``update(n=1)`` method

    Examples
    --------
    >>> with progress_bar(False, 3, "demo") as bar:
    ...     for _ in range(3):
    ...         bar.update()
    """
    if not enabled:
        yield _Silent()
        return
    bar = tqdm_auto.tqdm(total=total, desc=desc, leave=False)
    try:
        yield bar
    finally:
        bar.close()
