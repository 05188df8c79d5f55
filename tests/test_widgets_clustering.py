"""The clustering widgets redraw headless when a slider moves; the figures build."""

import itertools

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from attnlib import sample_sphere  # noqa: E402

from .helpers import jshtml_frames  # noqa: E402
from attnlib.clustering import (  # noqa: E402
    InnerProductHistogram,
    phase_diagram,
    simulate_ensemble,
)
from attnlib.viz.clustering import plot_metastability, plot_phase_diagrams, plot_wendel
from attnlib.viz.clustering import (
    _animate_inner_product_histograms as animate_inner_product_histograms,
    _animate_phase_diagrams as animate_phase_diagrams,
)
from attnlib.widgets.clustering import (  # noqa: E402
    histogram_explorer,
    phase_diagram_explorer,
)


@pytest.fixture(scope="module")
def diagrams():
    kw = dict(betas=np.linspace(0.5, 6.0, 5), samples=4, t_final=8.0, progress=False)
    return {d: phase_diagram(d, **kw) for d in (2, 16)}


@pytest.fixture(scope="module")
def hist_runs():
    h = InnerProductHistogram(bins=20)
    runs = {}
    for beta in (1.0, 4.0):
        X0 = sample_sphere(10, 3, rng=0, batch=3)
        times = np.linspace(0, 6, 7)
        r = simulate_ensemble(X0, beta=beta, times=times, observables={"h": h})
        runs[beta] = (times, r.observables["h"].sum(axis=1))
    return h.edges, runs


def _title(fig, k=-1):
    return fig.axes[k].get_title()


def test_phase_diagram_explorer_redraws(diagrams):
    w = phase_diagram_explorer(diagrams, d=16, beta=2.0, t=4.0)
    fig = w.fig
    before = _title(fig)
    line0 = fig.axes[1].lines[0].get_ydata().copy()
    w.sliders["t"].value = 8.0
    assert _title(fig) != before and "t = 8.0" in _title(fig)
    w.sliders["beta"].value = 6.0
    assert not np.array_equal(fig.axes[1].lines[0].get_ydata(), line0)
    w.sliders["d"].value = 2
    assert "d = 2" in _title(fig) and fig.axes[0].get_title() == "d = 2"
    # the cross on the phase diagram follows the sliders
    cross = [ln for ln in fig.axes[0].lines if ln.get_marker() == "+"][0]
    assert tuple(cross.get_xdata()) == (8.0,) and tuple(cross.get_ydata()) == (6.0,)


def test_histogram_explorer_redraws(hist_runs):
    edges, runs = hist_runs
    w = histogram_explorer(edges, runs)
    fig = w.fig
    heights0 = [p.get_height() for p in fig.axes[0].patches]
    w.sliders["t"].value = 6
    heights1 = [p.get_height() for p in fig.axes[0].patches]
    assert "t = 6.0" in _title(fig)
    assert heights0 != heights1
    w.sliders["beta"].value = 4.0
    assert "beta = 4" in _title(fig)


def test_widget_bad_input(diagrams, hist_runs):
    with pytest.raises(ValueError, match="d must be"):
        phase_diagram_explorer(diagrams, d=5)
    with pytest.raises(ValueError, match="beta must be"):
        histogram_explorer(hist_runs[0], hist_runs[1], beta=2.5)


def test_static_figures_and_animations(diagrams, hist_runs):
    fig = plot_phase_diagrams(list(diagrams.values()))
    assert len(fig.axes) == 3  # two panels and a colour bar
    plt.close(fig)
    anim = animate_phase_diagrams(list(diagrams.values()))
    assert jshtml_frames(anim.to_jshtml()) == len(diagrams)  # one per diagram
    edges, runs = hist_runs
    anim = animate_inner_product_histograms(edges, runs[1.0][1], runs[1.0][0])
    assert jshtml_frames(anim.to_jshtml()) == len(runs[1.0][0])  # one per time
    t = np.array([1.0, 10.0, 100.0])
    fig = plot_metastability(
        {
            4.0: {
                "times": t,
                "clusters": np.array([[5], [2], [1]]),
                "energy": np.ones((3, 1)),
            }
        },
        n=32,
    )
    assert fig.axes[1].get_xscale() == "log"
    plt.close(fig)
    fig = plot_wendel(np.arange(2, 12), [2, 3], mc={2: ([4], [0.5], [0.01])})
    assert len(fig.axes[0].lines) >= 2
    plt.close(fig)


def test_phase_diagram_explorer_controls_show_the_values_of_the_frame(diagrams):
    # beta = 4 and t = 3 fall between rows of the diagrams: the figure is drawn for
    # the nearest rows, and the controls of the static explorer say so
    w = phase_diagram_explorer(diagrams, d=16, beta=4.0, t=3.0)
    ref = diagrams[16]
    assert w.sliders["beta"].value in ref.betas.tolist()
    assert w.sliders["t"].value in ref.times.tolist()
    axes = w.static.axes
    for combo in itertools.product(*(a.values for a in axes)):
        for axis, value in zip(axes, combo):
            axis.control.value = value
        title = _title(w.fig)
        for label, axis, value in zip(("d", "beta", "t"), axes, combo):
            assert f"{label} = {axis.text(value)}" in title, (title, combo)
        cross = [ln for ln in w.fig.axes[0].lines if ln.get_marker() == "+"][0]
        assert (cross.get_xdata()[0], cross.get_ydata()[0]) == (combo[2], combo[1])
