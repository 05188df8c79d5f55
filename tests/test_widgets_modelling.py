"""The modelling widget redraws when each control moves (driven headless, Agg)."""

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

from attnlib.widgets.modelling import sphere_explorer


@pytest.fixture(scope="module")
def explorer():
    return sphere_explorer(beta=2.0, n=10, t_final=4.0, n_frames=9, n_max=16)


def _title(e):
    return e.fig.axes[0].get_title()


def _points(e):
    return np.asarray(e._artists["dynamic"][-1]._offsets3d).T


def test_initial_figure(explorer):
    assert _title(explorer) == "SA, beta = 2, n = 10, t = 4"
    assert _points(explorer).shape == (10, 3)
    x, y = explorer._artists["curve"].get_data()
    assert len(x) == 9 and y[0] < y[-1]  # tokens gather: mean inner product grows


def test_time_slider_moves_marker_and_points(explorer):
    before = _points(explorer).copy()
    explorer.time.value = 1.0
    assert _title(explorer).endswith("t = 1")
    assert explorer._artists["marker"].get_data()[0][0] == pytest.approx(1.0)
    assert not np.allclose(_points(explorer), before)
    explorer.time.value = 4.0


def test_beta_slider_recomputes(explorer):
    curve = explorer._artists["curve"].get_data()[1].copy()
    explorer.beta.value = 6.0
    assert "beta = 6" in _title(explorer)
    assert not np.allclose(explorer._artists["curve"].get_data()[1], curve)
    explorer.beta.value = 2.0


def test_n_slider_changes_token_count(explorer):
    explorer.n.value = 5
    assert "n = 5" in _title(explorer)
    assert _points(explorer).shape == (5, 3)
    explorer.n.value = 10


@pytest.mark.parametrize("variant", ["USA", "L2", "sigmoid", "Sinkhorn", "causal"])
def test_variant_dropdown_recomputes(explorer, variant):
    sa = explorer._artists["curve"].get_data()[1].copy()
    explorer.variant.value = variant
    assert _title(explorer).startswith(variant + ",")
    pts = _points(explorer)
    np.testing.assert_allclose(np.linalg.norm(pts, axis=1), 1.0, atol=1e-12)
    if variant != "L2":  # L2 with Q = K = I is SA on the sphere
        assert not np.allclose(explorer._artists["curve"].get_data()[1], sa)
    explorer.variant.value = "SA"


def test_bad_arguments():
    with pytest.raises(ValueError, match="variant"):
        sphere_explorer(variant="relu")
    with pytest.raises(ValueError, match="n"):
        sphere_explorer(n=100, n_max=64)
    with pytest.raises(ValueError, match="beta"):
        sphere_explorer(beta=-1.0)
