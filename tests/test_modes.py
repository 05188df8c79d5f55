"""The mode counter against dense evaluation, closed forms and edge cases."""

import numpy as np
import pytest
from scipy.special import ive

from attnlib.frontiers import circle_modes, count_modes, line_modes


def _dense_circle(theta, beta, m=100_000):
    g = np.arange(m) * (2 * np.pi / m)
    f = np.exp(beta * (np.cos(g[:, None] - theta[None, :]) - 1.0)).sum(axis=1)
    peak = (f > np.roll(f, 1)) & (f > np.roll(f, -1))
    return g[peak]


def _dense_line(x, beta, m=200_000):
    pad = 3.0 / np.sqrt(beta)  # an isolated extreme point peaks just inside it
    g = np.linspace(x.min() - pad, x.max() + pad, m)
    f = np.exp(-0.5 * beta * (g[:, None] - x[None, :]) ** 2).sum(axis=1)
    inner = (f[1:-1] > f[:-2]) & (f[1:-1] > f[2:])
    return g[1:-1][inner]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("n,beta", [(40, 8.0), (150, 60.0), (300, 400.0)])
def test_circle_count_and_locations_match_dense_grid(seed, n, beta):
    theta = np.random.default_rng(seed).uniform(0, 2 * np.pi, n)
    res = circle_modes(theta, beta=beta)
    peaks = _dense_circle(theta, beta)
    assert res.converged
    assert res.count == peaks.size == res.locations.size
    # each located maximum is within a dense grid cell of a dense-grid peak
    d = np.abs(np.angle(np.exp(1j * (res.locations[:, None] - peaks[None, :]))))
    assert np.all(d.min(axis=1) < 2 * np.pi / 100_000)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("n,beta", [(60, 10.0), (200, 300.0)])
def test_line_count_matches_dense_grid(seed, n, beta):
    x = np.random.default_rng(10 + seed).standard_normal(n)
    res = line_modes(x, beta=beta)
    peaks = _dense_line(x, beta)
    assert res.count == peaks.size
    assert np.max(np.abs(res.locations - peaks)) < 1e-4


def test_two_gaussians_split_at_bandwidth_one():
    # sum of two unit-bandwidth bumps at +-a is bimodal iff a > 1/sqrt(beta)
    x = np.array([-1.0, 1.0])
    assert line_modes(x, beta=0.9).count == 1
    assert line_modes(x, beta=1.1).count == 2
    assert np.allclose(line_modes(x, beta=0.9).locations, [0.0], atol=1e-10)


def test_two_points_on_circle_threshold():
    # f = e^{b cos(t - p)} + e^{b cos(t + p)}: f''(0) = 0 exactly when
    # b sin^2 p = cos p, i.e. bimodal iff b > cos p / sin^2 p
    p = 0.3
    b_c = np.cos(p) / np.sin(p) ** 2
    pts = np.array([-p, p])
    assert circle_modes(pts, beta=0.95 * b_c).count == 1
    assert circle_modes(pts, beta=1.05 * b_c).count == 2


def test_no_underflow_between_far_points():
    # e^{-beta/2} underflows float64, yet every isolated point is its own mode
    x = np.array([0.0, 1.0, 2.0, 5.0])
    assert line_modes(x, beta=1e4).count == 4
    assert np.allclose(line_modes(x, beta=1e4).locations, x, atol=1e-8)
    th = np.array([0.0, 1.0, 2.0, 4.0])
    assert circle_modes(th, beta=1e4).count == 4


@pytest.mark.parametrize("k", [3, 7, 12])
def test_equally_spaced_points_give_k_modes(k):
    th = 2 * np.pi * np.arange(k) / k
    assert circle_modes(th, beta=40.0 * k).count == k


def test_rotation_invariance():
    th = np.random.default_rng(5).uniform(0, 2 * np.pi, 80)
    a = circle_modes(th, beta=30.0)
    b = circle_modes(th + 1.234, beta=30.0)
    assert a.count == b.count
    shifted = np.sort(np.mod(a.locations + 1.234, 2 * np.pi))
    assert np.allclose(shifted, b.locations, atol=1e-8)


def test_mean_count_near_rice_formula():
    # many uniform points: the density fluctuates like a stationary Gaussian process
    # whose spectrum is I_m(beta)^2; Rice: E[count] = sqrt(sum m^4 I^2 / sum m^2 I^2)
    beta = 100.0
    m = np.arange(1, 400)
    w = ive(m, beta) ** 2
    rice = np.sqrt(np.sum(m**4 * w) / np.sum(m**2 * w))
    rng = np.random.default_rng(7)
    counts = [
        circle_modes(rng.uniform(0, 2 * np.pi, 1500), beta=beta).count
        for _ in range(12)
    ]
    assert abs(np.mean(counts) - rice) < 1.5


def test_count_modes_wrapper_and_validation():
    assert count_modes(np.array([0.0, 3.0]), beta=10.0, domain="line") == 2
    assert count_modes(np.array([0.0, 3.0]), beta=10.0) == 2
    with pytest.raises(ValueError, match="domain"):
        count_modes(np.array([0.0]), beta=1.0, domain="plane")
    with pytest.raises(ValueError, match="beta"):
        circle_modes(np.array([0.0, 1.0]), beta=0.0)
    with pytest.raises(ValueError, match="theta"):
        circle_modes(np.zeros((2, 2)), beta=1.0)
    with pytest.raises(ValueError, match="finite"):
        line_modes(np.array([0.0, np.nan]), beta=1.0)
    with pytest.raises(TypeError, match="x"):
        line_modes("abc", beta=1.0)
    with pytest.raises(ValueError, match="non-empty"):
        line_modes(np.array([]), beta=1.0)
    assert line_modes(np.array([2.0, 2.0]), beta=5.0).count == 1


def _log_density(x, beta, g):
    """log f at the points g, every term kept (log-sum-exp, no window)."""
    E = -0.5 * beta * (np.asarray(g)[..., None] - x) ** 2
    m = E.max(axis=-1)
    return m + np.log(np.exp(E - m[..., None]).sum(axis=-1))


def _maxima_by_golden_section(x, beta, m=40_000):
    """Local maxima of log f: a dense padded grid, then golden section in each cell.

    Independent of the library: no derivative, no window, no bisection on f'.
    """
    from scipy.optimize import minimize_scalar

    pad = 4.0 / np.sqrt(beta)
    g = np.linspace(x.min() - pad, x.max() + pad, m)
    lf = _log_density(x, beta, g)
    peaks = np.flatnonzero((lf[1:-1] >= lf[:-2]) & (lf[1:-1] > lf[2:])) + 1
    out = []
    for k in peaks:
        res = minimize_scalar(
            lambda y: -_log_density(x, beta, y),
            bounds=(g[k - 1], g[k + 1]),
            method="bounded",
            options={"xatol": 1e-13},
        )
        out.append(res.x)
    return np.array(out)


def _full_derivative(x, beta, y):
    """f'(y) / (largest term), every term kept."""
    D = x - y
    E = -0.5 * beta * D * D
    return float(np.sum(D * np.exp(E - E.max())))


@pytest.mark.parametrize("beta", [1e2, 3e2, 1e3])
def test_two_isolated_points_are_their_own_maxima(beta):
    # the maximum of e^{-b(y+1)^2/2} + e^{-b(y-1)^2/2} near -1 is at
    # -1 + 2 e^{-2b} (1 + ...): -1 to rounding for every b here
    res = line_modes(np.array([-1.0, 1.0]), beta=beta)
    assert res.count == 2
    assert np.array_equal(res.locations, [-1.0, 1.0])


@pytest.mark.parametrize("seed", range(6))
def test_edge_modes_located_on_random_data(seed):
    """Every maximum, the extreme ones included, against golden-section search.

    Isolated extreme points at large beta carry a maximum within rounding of
    themselves; the far terms of f' are then below e^{-80} and the grid alone
    would place it a grid step inside.
    """
    rng = np.random.default_rng(100 + seed)
    x = rng.standard_normal(int(rng.integers(5, 40)))
    edge = 0
    for beta in (5.0, 30.0, 40.0, 45.0, 100.0, 300.0, 1e3, 3e3):
        res = line_modes(x, beta=beta)
        ref = _maxima_by_golden_section(x, beta)
        assert res.count == ref.size
        assert np.max(np.abs(res.locations - ref)) < 1e-7, (beta, res.locations, ref)
        edge += int(np.isclose(res.locations[0], x.min(), atol=1e-6))
        edge += int(np.isclose(res.locations[-1], x.max(), atol=1e-6))
        for y in res.locations:  # f' changes sign from + to - across y
            eps = 1e-9 * max(1.0, abs(y))
            assert (
                _full_derivative(x, beta, y - eps)
                >= 0
                >= _full_derivative(x, beta, y + eps)
            )
    assert edge >= 4  # the extreme points do carry maxima on this range of beta
