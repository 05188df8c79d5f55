"""The helpers that several integrators and explorers share: what a run records at
its output times, and how an explorer makes its sliders and its figure."""

import matplotlib

matplotlib.use("Agg")

import ipywidgets as widgets  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


# each test imports its helper, so that the tests of one stand without the others


def test_the_recorder_keeps_states_in_their_dtype_and_stacks_the_observables():
    from attnlib._stepping import Recorder

    X = np.arange(6, dtype=np.float32).reshape(3, 2)
    record = Recorder(
        4, X, {"sum": np.sum, "first": lambda Y: Y[0]}, True, dtype=X.dtype
    )
    assert record.states.shape == (4, 3, 2) and record.states.dtype == np.float32
    for k in range(3):  # the run stopped before the last output time
        assert record(k, X + k) is None  # never asks the driver to stop
    np.testing.assert_array_equal(record.states[:3], [X, X + 1, X + 2])
    obs = record.observables()
    np.testing.assert_array_equal(obs["sum"], [15.0, 21.0, 27.0])
    np.testing.assert_array_equal(obs["first"], [[0, 1], [1, 2], [2, 3]])
    assert obs["first"].dtype == np.float32


def test_the_recorder_without_states_keeps_only_the_observables():
    from attnlib._stepping import Recorder

    X = np.ones((2, 3))
    record = Recorder(5, X, {}, False)
    record(0, X)
    assert record.states is None and dict(record.observables()) == {}
    assert Recorder(5, X, {}, True).states.dtype == np.float64  # the default dtype


def test_a_slider_redraws_when_released_unless_told_otherwise():
    from attnlib.widgets._static import slider

    s = slider(2.0, 0.0, 16.0, 0.5, "beta")
    assert isinstance(s, widgets.FloatSlider)
    assert (s.value, s.min, s.max, s.step, s.description) == (
        2.0,
        0.0,
        16.0,
        0.5,
        "beta",
    )
    assert s.continuous_update is False
    n = slider(8, 2, 64, 1, "n", integer=True, style={"description_width": "60px"})
    assert isinstance(n, widgets.IntSlider) and (n.value, n.min, n.max) == (8, 2, 64)
    assert n.style.description_width == "60px"
    assert slider(1.0, 0.0, 2.0, 0.1, "t", continuous_update=True).continuous_update


def test_a_detached_figure_is_not_left_to_pyplot():
    from attnlib.widgets._static import detached_figure

    before = plt.get_fignums()
    fig = detached_figure(1, 3, figsize=(6, 2), gridspec_kw={"width_ratios": [1, 2, 1]})
    try:
        assert plt.get_fignums() == before  # never shown again by plt.show()
        assert len(fig.axes) == 3
        assert tuple(fig.get_size_inches()) == (6.0, 2.0)
    finally:
        plt.close(fig)
