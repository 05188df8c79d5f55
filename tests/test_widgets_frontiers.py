"""The frontiers widgets redraw when each slider moves (driven headless, Agg)."""

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

from attnlib.widgets.frontiers import (
    antipodal_explorer,
    causal_explorer,
    noise_explorer,
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


# ------------------------------------------------ noise beyond the threshold


def _png(fig) -> bytes:
    import io

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=40)
    return buffer.getvalue()


@pytest.fixture(scope="module")
def noisy():
    return noise_explorer(beta=4.0, sigma_ratio=1.03)


def test_noise_explorer_offers_beta_on_both_sides_of_the_transition(noisy):
    from attnlib.frontiers._stationary import transition_beta

    star = transition_beta(2)
    spec = noisy.static
    assert [a.label for a in spec.axes] == ["β", "σ/σ_c"]
    assert [a.control for a in spec.axes] == [noisy.beta, noisy.sigma_ratio]
    betas, ratios = spec.axes[0].values, spec.axes[1].values
    assert sum(b < star for b in betas) >= 2 and sum(b > star for b in betas) >= 2
    assert min(ratios) < 1 < max(ratios) and 1.0 not in ratios
    # the default frame is on the grid: 5 x 11 frames
    assert (4.0, 1.03) == (noisy.beta.value, noisy.sigma_ratio.value)
    assert len(betas) * len(ratios) == 55
    # a static grid of ratios the slider can hold (its steps of 0.01)
    assert all(abs(100 * r - round(100 * r)) < 1e-9 for r in ratios)


def _drawn_density(w, k):
    """The k-th density curve of the right panel: angles and values."""
    line = w.fig.axes[1].lines[1 + k]  # lines[0] is the uniform density
    return line.get_xdata(), line.get_ydata()


def test_noise_explorer_draws_the_loop_and_both_densities_inside_it(noisy):
    noisy.beta.value, noisy.sigma_ratio.value = 4.0, 1.03
    ax0, ax1 = noisy.fig.axes
    assert ax0.get_title().startswith(r"$\beta = 4$, discontinuous")
    assert ax1.get_title() == r"$\sigma = 1.03\,\sigma_c$: bistable"
    up, down = ax0.lines[0].get_ydata(), ax0.lines[1].get_ydata()
    x = ax0.lines[0].get_xdata()
    # hysteresis: the sweeps differ just above sigma_c only, the up sweep ordered
    differ = np.abs(up - down) > 1e-4
    assert differ.any() and np.all(x[differ] >= 1.0) and np.all(x[differ] < 1.1)
    assert np.all(up[differ] > 0.5) and np.all(down[differ] < 1e-4)
    # each density is a probability density (mean 1 over the angle) whose first
    # moment is the order parameter marked at the chosen sigma on the left
    # (lines: the two sweeps, sigma_c, the chosen sigma, then the two markers)
    assert ax0.lines[3].get_xdata()[0] == 1.03
    marks = [ax0.lines[k].get_ydata()[0] for k in (4, 5)]
    for k in range(2):
        theta, rho = _drawn_density(noisy, k)
        mean = np.trapezoid(rho, theta) / (2 * np.pi)
        first = np.trapezoid(np.cos(theta) * rho, theta) / (2 * np.pi)
        assert mean == pytest.approx(1.0, abs=1e-6)
        assert first == pytest.approx(marks[k], abs=1e-6)
    assert marks[0] > 0.5 and marks[1] < 1e-8
    assert ax1.lines[2].get_visible()
    assert len(ax1.get_legend().get_texts()) == 2


def test_noise_explorer_redraws_when_each_slider_moves(noisy):
    noisy.beta.value, noisy.sigma_ratio.value = 4.0, 1.03
    before = _png(noisy.fig)
    rho = _drawn_density(noisy, 0)[1].copy()
    noisy.sigma_ratio.value = 0.8  # one ordered state, more concentrated
    title = noisy.fig.axes[1].get_title()
    assert title == r"$\sigma = 0.8\,\sigma_c$: one stable state"
    assert not noisy.fig.axes[1].lines[2].get_visible()
    assert _drawn_density(noisy, 0)[1].max() > rho.max()
    assert _png(noisy.fig) != before
    up = noisy.fig.axes[0].lines[0].get_ydata().copy()
    noisy.beta.value = 1.0  # below beta*: continuous, no loop anywhere
    ax0 = noisy.fig.axes[0]
    assert ax0.get_title().startswith(r"$\beta = 1$, continuous")
    assert not np.allclose(ax0.lines[0].get_ydata(), up)
    assert np.allclose(ax0.lines[0].get_ydata(), ax0.lines[1].get_ydata(), atol=1e-4)
    noisy.sigma_ratio.value = 1.2  # above sigma_c: the uniform density only
    assert np.allclose(_drawn_density(noisy, 0)[1], 1.0, atol=1e-8)


def test_noise_explorer_off_the_grid_follows_the_same_sweeps():
    w = noise_explorer(beta=6.0, sigma_ratio=1.055)
    up, down = w.states()
    assert up.sigma == pytest.approx(1.055 * w.branches().sigma_c)
    # inside the loop of beta = 6 (it reaches about 1.16 sigma_c): both states
    assert up.order > 0.5 and down.order < 1e-8
    assert w.fig.axes[1].get_title() == r"$\sigma = 1.055\,\sigma_c$: bistable"


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"beta": 0.1}, ValueError, "beta"),
        ({"beta": 9.0}, ValueError, "beta"),
        ({"beta": "four"}, TypeError, "beta"),
        ({"sigma_ratio": 2.0}, ValueError, "sigma_ratio"),
        ({"sigma_ratio": float("nan")}, ValueError, "sigma_ratio"),
    ],
)
def test_noise_explorer_rejects_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        noise_explorer(**kwargs)
    with pytest.raises(TypeError):
        noise_explorer(4.0)  # beta is keyword-only


# --------------------------------------------------- resampled value matrices


@pytest.fixture(scope="module")
def antipodal():
    return antipodal_explorer(beta=2.0, d=5, paths=6, layers=120, t_final=6.0)


def test_antipodal_explorer_static_grid(antipodal):
    spec = antipodal.static
    assert [a.label for a in spec.axes] == ["β", "d", "noise"]
    assert [a.control for a in spec.axes] == [
        antipodal.beta,
        antipodal.d,
        antipodal.noise,
    ]
    assert spec.axes[1].values == [3, 4, 5, 6, 7, 8]
    betas = spec.axes[0].values
    # for every d on the grid, a beta on each side of the threshold (d = 3: 0)
    for d in range(4, 9):
        bc = np.arccosh(d - 2) / 2
        assert min(betas) < bc < max(betas), d
    assert len(spec.axes[2].values) >= 2


def test_antipodal_explorer_curve_vanishes_up_to_the_threshold(antipodal):
    from attnlib.frontiers._resampled import antipodal_probability

    for d in (4, 6, 8):
        antipodal.d.value = d
        ax0 = antipodal.fig.axes[0]
        assert ax0.get_title() == rf"$d = {d}$: limit, from $u(0) = 0$"
        beta, p = ax0.lines[0].get_xdata(), ax0.lines[0].get_ydata()
        bc = np.arccosh(d - 2) / 2  # cosh 2 beta = d - 2
        assert ax0.lines[1].get_xdata()[0] == pytest.approx(bc)
        assert np.all(p[beta < bc] == 0) and np.all(p[beta > bc + 0.05] > 1e-4)
        # the noise only sets the clock: the curve is the same at another noise
        k = int(np.argmin(np.abs(beta - 3.0)))
        assert p[k] == pytest.approx(
            float(antipodal_probability(0.0, beta=beta[k], d=d, noise=2.0)),
            abs=1e-9,
        )
        # the marker sits on the curve at the chosen beta
        x, y = ax0.lines[2].get_xdata()[0], ax0.lines[2].get_ydata()[0]
        assert x == antipodal.beta.value and y == pytest.approx(
            np.interp(x, beta, p), abs=1e-3
        )
    antipodal.d.value = 5


def test_antipodal_explorer_paths_are_the_layered_overlaps(antipodal):
    from attnlib.frontiers._resampled import resampled_run

    antipodal.beta.value, antipodal.d.value, antipodal.noise.value = 2.0, 5, 1.0
    ax1 = antipodal.fig.axes[1]
    assert ax1.get_title().startswith("β = 2, noise = 1: ")
    paths = [line.get_ydata().copy() for line in ax1.lines]
    assert len(paths) == 6 and all(u[0] == pytest.approx(0.0) for u in paths)
    X0 = np.zeros((6, 2, 5))
    X0[:, 0, 0] = X0[:, 1, 1] = 1.0
    run = resampled_run(X0, beta=2.0, layers=120, t_final=6.0, noise=1.0, rng=0)
    final = np.sum(run.final[:, 0] * run.final[:, 1], axis=-1)
    assert np.allclose([u[-1] for u in paths], final, atol=1e-12)
    red = sum(line.get_color() == "C3" for line in ax1.lines)
    assert f"{red} of 6 end near −1" in ax1.get_title()
    assert red == int(np.sum(final < -0.9))


def test_antipodal_explorer_redraws_when_each_slider_moves(antipodal):
    antipodal.beta.value, antipodal.d.value, antipodal.noise.value = 2.0, 5, 1.0
    ax0, ax1 = antipodal.fig.axes
    frame = _png(antipodal.fig)
    for name, value in (("beta", 0.5), ("d", 8), ("noise", 2.0)):
        curve = ax0.lines[0].get_ydata().copy()
        marker = ax0.lines[2].get_xydata().copy()
        paths = np.array([line.get_ydata() for line in ax1.lines])
        getattr(antipodal, name).value = value
        now = _png(antipodal.fig)
        assert now != frame, name
        frame = now
        moved = not np.allclose(
            np.array([line.get_ydata() for line in ax1.lines]), paths
        )
        assert moved, name  # every slider changes the paths
        if name == "d":
            assert not np.allclose(ax0.lines[0].get_ydata(), curve)
        else:  # beta and noise leave the curve of this d alone
            assert np.array_equal(ax0.lines[0].get_ydata(), curve)
        if name == "beta":
            assert not np.allclose(ax0.lines[2].get_xydata(), marker)
    antipodal.beta.value, antipodal.d.value, antipodal.noise.value = 2.0, 5, 1.0


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"beta": -0.5}, ValueError, "beta"),
        ({"beta": 5.0}, ValueError, "beta"),
        ({"d": 2}, ValueError, "d"),
        ({"d": 9}, ValueError, "d"),
        ({"d": 4.5}, TypeError, "d"),
        ({"noise": 0.0}, ValueError, "noise"),
        ({"noise": 3.0}, ValueError, "noise"),
        ({"paths": 0}, ValueError, "paths"),
        ({"layers": 0}, ValueError, "layers"),
        ({"t_final": 0.0}, ValueError, "t_final"),
    ],
)
def test_antipodal_explorer_rejects_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        antipodal_explorer(**kwargs)
    with pytest.raises(TypeError):
        antipodal_explorer(2.0)  # beta is keyword-only
