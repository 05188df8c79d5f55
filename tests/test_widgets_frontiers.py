"""The frontiers widgets redraw when each slider moves (driven headless, Agg)."""

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

from attnlib.widgets.frontiers import (
    causal_explorer,
    scheme_explorer,
    temperature_explorer,
)


@pytest.fixture(scope="module")
def schemes():
    return scheme_explorer(beta=1.0, n=16)


@pytest.fixture(scope="module")
def causal():
    return causal_explorer(n=16, t_final=2.0, dt=0.02)


@pytest.fixture(scope="module")
def temperature():
    return temperature_explorer(log2beta=3.0)


def test_scheme_explorer(schemes):
    ax = schemes.fig.axes[0]
    assert ax.get_title() == "beta = 1, n = 16"
    post = ax.lines[0].get_ydata().copy()
    schemes.beta.value = 4.0
    assert schemes.fig.axes[0].get_title() == "beta = 4, n = 16"
    assert not np.allclose(schemes.fig.axes[0].lines[0].get_ydata(), post)
    schemes.n.value = 40
    assert schemes.fig.axes[0].get_title() == "beta = 4, n = 40"
    # pre-LN (second line) lags behind post-LN: post-LN's gap falls below the
    # solver's tolerance (drawn as a gap in the curve), pre-LN's is still visible
    lines = schemes.fig.axes[0].lines
    post, pre = lines[0].get_ydata(), lines[1].get_ydata()
    shown = np.flatnonzero(np.isfinite(post))
    assert shown.size > 10 and np.isnan(post[-1]) and pre[-1] > 1e-4
    assert np.all(pre[shown[-5:]] > 10 * post[shown[-5:]])


def test_causal_explorer(causal):
    assert causal.fig.axes[1].get_title() == "causal, lam = 1, beta = 1"
    prof = causal.fig.axes[2].lines[0].get_ydata().copy()
    causal.lam.value = 4.0
    assert causal.fig.axes[1].get_title() == "causal, lam = 4, beta = 1"
    assert not np.allclose(causal.fig.axes[2].lines[0].get_ydata(), prof)
    causal.beta.value = 2.0
    assert causal.fig.axes[1].get_title() == "causal, lam = 4, beta = 2"
    # the first token never moves: its path is flat
    y = causal.fig.axes[1].lines[-1].get_ydata()
    assert np.allclose(y, y[0])


def test_temperature_explorer(temperature):
    assert temperature.fig.axes[0].get_title() == "softmax, beta = 8"
    assert temperature.fig.axes[1].get_title() == "hardmax"
    soft, hard = temperature.runs()
    err8 = np.median(np.abs(soft[-1] - hard[-1]))
    temperature.log2beta.value = 8.0
    assert temperature.fig.axes[0].get_title() == "softmax, beta = 256"
    soft, hard = temperature.runs()
    assert np.median(np.abs(soft[-1] - hard[-1])) < err8
