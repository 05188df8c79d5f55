"""Headless tests of the Gaussian-case widget and figures."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from attnlib.gaussian import blowup_time  # noqa: E402
from attnlib.viz.gaussian import plot_disc
from attnlib.viz.gaussian import _cloud_animation as cloud_animation
from attnlib.gaussian._presets import cloud_scenario, ellipse_points
from attnlib.widgets.gaussian import ALPHA0, SIGMA0, gaussian_widget
from attnlib.gaussian import PRESETS, preset_model

from .helpers import jshtml_frames  # noqa: E402


def _points(ax):
    return np.vstack([c.get_offsets() for c in ax.collections])


def test_widget_redraws_on_every_control():
    w = gaussian_widget(n=60, frames=6)
    ax = w.ax
    title0 = ax.get_title()
    pts0 = _points(ax).copy()
    w.sliders["frame"].value = 0
    assert ax.get_title() != title0
    assert ax.get_title().startswith("softmax: t = 0.000")
    pts1 = _points(ax).copy()
    assert not np.allclose(pts0, pts1)
    w.sliders["seed"].value = 3
    assert not np.allclose(_points(ax), pts1)
    w.sliders["preset"].value = "decay to a point (Q = -I)"
    w.sliders["frame"].value = 5
    assert "stop" not in ax.get_title()  # no blow-up for Q = -I
    pts2 = _points(ax).copy()
    w.sliders["kernel"].value = "l2"
    assert ax.get_title().startswith("l2:")
    assert not np.allclose(_points(ax), pts2)
    assert w.scenario().states.shape[1:] == (60, 2)


def test_widget_ellipse_is_the_ode_prediction():
    w = gaussian_widget(n=40, frames=4)
    w.sliders["frame"].value = 3
    sc = cloud_scenario(
        preset_model(w.sliders["preset"].value, rng=0),
        ALPHA0,
        SIGMA0,
        n=40,
        rng=0,
        frames=4,
    )
    line = w.ax.get_lines()[1].get_xydata()  # the 2-sigma ellipse
    np.testing.assert_allclose(
        line, ellipse_points(sc.info["means"][3], sc.info["covariances"][3])
    )


def test_scenario_stops_before_blowup():
    m = preset_model("blow-up (Q, K of the reference)")
    sc = cloud_scenario(m, ALPHA0, SIGMA0, n=30, frames=5)
    assert abs(sc.times[-1] - 0.9 * blowup_time(m, SIGMA0)) < 1e-3
    assert np.isfinite(sc.states).all()


def test_presets_and_bad_name():
    for name in PRESETS:
        assert preset_model(name, rng=1).sphere is False
    with pytest.raises(ValueError, match="name must be one of"):
        preset_model("nope")
    with pytest.raises(ValueError, match="kernel must be one of"):
        preset_model("decay to a point (Q = -I)", kernel="sigmoid")
    assert preset_model("decay to a point (Q = -I)", kernel="l2").kernel == "l2"


def test_animation_and_disc():
    sc = cloud_scenario(
        preset_model("decay to a point (Q = -I)"), ALPHA0, SIGMA0, n=30, frames=4
    )
    anim = cloud_animation(sc)
    assert jshtml_frames(anim.to_jshtml()) == len(sc.times) == 4
    ax = plot_disc({"x": [sc.info["covariances"]]})
    xy = ax.get_lines()[2].get_xydata()
    assert np.all(np.hypot(xy[:, 0], xy[:, 1]) <= 1.0 + 1e-12)
