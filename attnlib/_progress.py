"""One progress bar for every loop of the library.

``tqdm.auto`` is imported only when a bar is asked for, so the library imports and
runs without it. A bar ends showing the count it reached (``n/n`` for a complete
run) in the widget state and in the text form a notebook saves.
"""

from __future__ import annotations

import sys
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
    cls = tqdm_auto.tqdm
    notebook = sys.modules.get("tqdm.notebook")
    handle = None
    if notebook is not None and issubclass(cls, notebook.tqdm_notebook):
        # a widget: shown here with a display id, so that its text form (what a
        # viewer without widgets shows of a saved notebook) can be updated at the end
        bar = cls(total=total, desc=desc, leave=False, display=False)
        handle = _display(bar.container)
    else:
        bar = cls(total=total, desc=desc, leave=False)
    try:
        yield bar
    finally:
        # tqdm redraws at most every mininterval: without this last refresh the
        # labels saved with a notebook keep an earlier count (0/7, 54/55)
        bar.refresh()
        if handle is not None:
            handle.update(bar.container)
        bar.close()


def _display(obj: Any) -> Any:
    """``IPython.display.display(obj, display_id=True)``: its display handle."""
    from IPython.display import display

    return display(obj, display_id=True)
