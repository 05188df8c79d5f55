"""The merging cluster flow against the full particle system, and its staircase."""

import warnings

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from attnlib.circle import angle_velocity
from attnlib.staircase import cluster_energy, merge_flow, weighted_angle_velocity


def test_velocity_is_usa_on_the_circle_shifted_by_e_beta():
    th = np.random.default_rng(0).uniform(0, 2 * np.pi, 30)
    v = weighted_angle_velocity(th, np.ones(30), 3.0, 30.0)
    assert np.allclose(
        v * np.exp(3.0), angle_velocity(th, 3.0, method="direct"), rtol=1e-12
    )
    # a cluster of mass 2 acts like two tokens at the same place
    th2 = np.array([0.1, 0.1, 1.0, 2.5])
    v2 = weighted_angle_velocity(th2, np.ones(4), 3.0, 4.0)
    v1 = weighted_angle_velocity(th2[1:], np.array([2.0, 1.0, 1.0]), 3.0, 4.0)
    assert np.allclose(v2[1:], v1)


def test_tiny_forces_keep_their_relative_accuracy():
    # two single tokens at distance 2: the force e^{beta (cos 2 - 1)} sin 2 / n
    beta = 200.0
    v = weighted_angle_velocity(np.array([0.0, 2.0]), np.ones(2), beta, 2.0)
    exact = np.sin(2.0) * np.exp(beta * (np.cos(2.0) - 1)) / 2
    assert np.isclose(v[0], exact, rtol=1e-12) and exact < 1e-120


def test_merges_match_the_full_particle_system():
    beta = 60.0
    u = np.log(beta) / np.sqrt(beta)
    th0 = 0.5 * np.array([0, 0.5, 2, 4, 7]) * u
    flow = merge_flow(th0, beta, merge_tol=1e-3)

    def rhs(uu, y):  # all five tokens, in log time u = log(1 + t)
        return np.exp(uu) * weighted_angle_velocity(y, np.ones(5), beta, 5.0)

    U = np.linspace(0, 16.0, 6001)
    sol = solve_ivp(rhs, (0, U[-1]), th0, method="Radau", t_eval=U, rtol=1e-10)
    Y = sol.y

    def met(i, j):
        return U[np.argmax(np.abs(Y[i] - Y[j]) < 1e-3)]

    full = [met(0, 1), max(met(1, 2), met(0, 2)), met(3, 4)]
    assert np.allclose(np.log1p(flow.merge_times[:3]), full, atol=0.02)
    assert [tuple(p) for p in flow.merged_masses] == [(1, 1), (1, 2), (1, 1), (3, 2)]


@pytest.mark.parametrize("beta", [500.0, 4000.0])
def test_staircase_plateaus(beta):
    u = np.log(beta) / np.sqrt(beta)
    res = merge_flow(0.5 * np.array([0, 0.5, 2, 4, 7]) * u, beta)
    assert res.clusters[-1] == 1 and res.merge_times.size == 4
    # just after each merge the energy is the sum of squared masses over n^2
    for c, level in ((4, 0.28), (3, 0.44), (2, 0.52)):
        e = res.energy[res.clusters == c]
        assert abs(e[0] - level) < 0.01
    assert np.all(np.diff(res.times) >= 0)
    assert np.all(np.diff(res.energy) > -1e-12)  # USA climbs its energy
    assert res.energy[-1] == pytest.approx(1.0)


def test_cluster_energy_and_validation():
    assert cluster_energy([0.0, 3.0], [3, 2], 500.0) == pytest.approx(0.52)
    with pytest.raises(ValueError, match="masses"):
        merge_flow([0.0, 1.0], 10.0, masses=[1.0, -1.0])
    with pytest.raises(ValueError, match="beta"):
        merge_flow([0.0, 1.0], 0.0)
    with pytest.raises(ValueError, match="same length"):
        cluster_energy([0.0, 1.0], [1.0], 1.0)


def test_forces_at_the_bottom_of_the_float_range_give_no_warning():
    """Two clusters 0.87 apart at beta = 2000 pull with forces near e^-710: the
    time per arc length 1/|v| overflowed at the solver's trial points and scipy
    printed RuntimeWarnings (in a chapter's cell, on one CPU, the book's build
    failed on them). Now the flow runs to t_max without a merge, the chapter's
    runs print nothing, and where the solver cannot start it is a clear error."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        far = merge_flow(np.array([0.0, 0.0, 0.0, 0.87, 0.87]), 2000, t_max=1e80)
        assert far.merge_times.tolist() == [0.0, 0.0, 0.0]  # coincident tokens only
        assert np.all(np.isfinite(far.times)) and far.times[-1] <= 1e80
        for beta in (500, 2000, 4000):  # the chapter's staircase
            unit = np.log(beta) / np.sqrt(beta)
            res = merge_flow(0.5 * np.array([0, 0.5, 2, 4, 7]) * unit, beta)
            assert res.merge_times.size == 4 and np.all(np.isfinite(res.energy))
        with pytest.raises(ValueError, match="smaller beta or clusters closer"):
            merge_flow(np.array([0.0, 0.0, 0.0, 0.8, 0.8]), 2000, t_max=1e80)
