"""Progress bars end at the count they reached, in a terminal and in a saved notebook.

``tqdm`` redraws a bar at most every ``mininterval`` (0.1 s), so a run that ends
between two redraws would leave its labels at an earlier count (``0/7``, ``54/55``)
in the notebook's saved widget state and text form; :func:`attnlib._progress.
progress_bar` draws the last count when the run ends.
"""

from __future__ import annotations

import re

import nbformat
import pytest

from attnlib._progress import progress_bar
from tools.execution import execute_notebook

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def test_a_terminal_bar_draws_its_last_count(capsys):
    with progress_bar(True, 7, "demo") as bar:
        for _ in range(7):
            bar.update()
    err = capsys.readouterr().err
    assert "7/7" in err  # drawn, then cleared (leave=False)


def test_an_interrupted_bar_shows_where_it_stopped(capsys):
    with pytest.raises(RuntimeError):
        with progress_bar(True, 7, "demo") as bar:
            for k in range(7):
                if k == 4:
                    raise RuntimeError("stop")
                bar.update()
    assert "4/7" in capsys.readouterr().err


SOURCE = """\
import numpy as np
import attnlib
from attnlib._progress import progress_bar

with progress_bar(True, 7, "demo") as bar:
    for _ in range(7):
        bar.update()
X0 = attnlib.sample_sphere(5, 3, rng=0)
traj = attnlib.simulate(attnlib.Model(beta=1.0), X0, times=np.linspace(0, 1, 12),
                        dt=0.05, progress=True)
"""


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A short notebook run headless, with its widget state saved (as the book)."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(SOURCE)]
    # each cell within a timeout that fails with its source; no MPLBACKEND=Agg
    return execute_notebook(
        nb,
        tmp_path_factory.mktemp("progress"),
        label="progress bars",
        store_widget_state=True,
    )


def _bars(nb):
    """(text form, left label, right label, value, max) of each saved bar."""
    state = nb.metadata["widgets"][WIDGET_STATE]["state"]
    out = []
    for output in nb.cells[0].outputs:
        data = output.get("data", {})
        if WIDGET_VIEW not in data:
            continue
        box = state[data[WIDGET_VIEW]["model_id"]]["state"]
        left, pbar, right = (
            state[c.removeprefix("IPY_MODEL_")]["state"] for c in box["children"]
        )
        out.append(
            (data["text/plain"], left["value"], right["value"], pbar["value"])
            + (pbar["max"],)
        )
    return out


def test_saved_bars_end_complete(saved):
    bars = _bars(saved)
    assert len(bars) == 2  # the loop's bar and simulate's
    for (text, left, right, value, total), n in zip(bars, (7, 12)):
        assert value == total == n
        # the labels and the text form show n/n, not the count of an earlier redraw
        assert re.search(rf"\b{n}/{n}\b", right.replace("\u2007", " ")), right
        assert "100%" in left.replace("\u2007", " "), left
        assert re.search(rf"\b{n}/{n}\b", text) and "100%" in text, text
