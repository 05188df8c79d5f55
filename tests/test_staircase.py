"""The merging cluster flow against the full particle system, and its staircase."""

import warnings

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from attnlib.circle import angle_velocity
from attnlib.frontiers import merge_flow
from attnlib.frontiers._metastability import cluster_energy, weighted_angle_velocity


def test_velocity_is_usa_on_the_circle_shifted_by_e_beta():
    th = np.random.default_rng(0).uniform(0, 2 * np.pi, 30)
    v = weighted_angle_velocity(th, np.ones(30), beta=3.0, n=30.0)
    assert np.allclose(
        v * np.exp(3.0), angle_velocity(th, beta=3.0, method="direct"), rtol=1e-12
    )
    # a cluster of mass 2 acts like two tokens at the same place
    th2 = np.array([0.1, 0.1, 1.0, 2.5])
    v2 = weighted_angle_velocity(th2, np.ones(4), beta=3.0, n=4.0)
    v1 = weighted_angle_velocity(th2[1:], np.array([2.0, 1.0, 1.0]), beta=3.0, n=4.0)
    assert np.allclose(v2[1:], v1)


def test_tiny_forces_keep_their_relative_accuracy():
    # two single tokens at distance 2: the force e^{beta (cos 2 - 1)} sin 2 / n
    beta = 200.0
    v = weighted_angle_velocity(np.array([0.0, 2.0]), np.ones(2), beta=beta, n=2.0)
    exact = np.sin(2.0) * np.exp(beta * (np.cos(2.0) - 1)) / 2
    assert np.isclose(v[0], exact, rtol=1e-12) and exact < 1e-120


def test_merges_match_the_full_particle_system():
    beta = 60.0
    u = np.log(beta) / np.sqrt(beta)
    th0 = 0.5 * np.array([0, 0.5, 2, 4, 7]) * u
    flow = merge_flow(th0, beta=beta, merge_tol=1e-3)

    def rhs(uu, y):  # all five tokens, in log time u = log(1 + t)
        return np.exp(uu) * weighted_angle_velocity(y, np.ones(5), beta=beta, n=5.0)

    U = np.linspace(0, 16.0, 6001)
    sol = solve_ivp(rhs, (0, U[-1]), th0, method="Radau", t_eval=U, rtol=1e-10)
    Y = sol.y

    def met(i, j):
        return U[np.argmax(np.abs(Y[i] - Y[j]) < 1e-3)]

    full = [met(0, 1), max(met(1, 2), met(0, 2)), met(3, 4)]
    assert np.allclose(np.log1p(flow.info["merge_times"][:3]), full, atol=0.02)
    assert [tuple(p) for p in flow.info["merged_masses"]] == [
        (1, 1),
        (1, 2),
        (1, 1),
        (3, 2),
    ]


@pytest.mark.parametrize("beta", [500.0, 4000.0])
def test_staircase_plateaus(beta):
    u = np.log(beta) / np.sqrt(beta)
    res = merge_flow(0.5 * np.array([0, 0.5, 2, 4, 7]) * u, beta=beta)
    assert res.info["clusters"][-1] == 1 and res.info["merge_times"].size == 4
    # just after each merge the energy is the sum of squared masses over n^2
    for c, level in ((4, 0.28), (3, 0.44), (2, 0.52)):
        e = res.info["energy"][res.info["clusters"] == c]
        assert abs(e[0] - level) < 0.01
    assert np.all(np.diff(res.times) >= 0)
    assert np.all(np.diff(res.info["energy"]) > -1e-12)  # USA climbs its energy
    assert res.info["energy"][-1] == pytest.approx(1.0)


def test_cluster_energy_and_validation():
    assert cluster_energy([0.0, 3.0], [3, 2], beta=500.0) == pytest.approx(0.52)
    with pytest.raises(ValueError, match="masses"):
        merge_flow([0.0, 1.0], beta=10.0, masses=[1.0, -1.0])
    with pytest.raises(ValueError, match="beta"):
        merge_flow([0.0, 1.0], beta=0.0)
    with pytest.raises(ValueError, match="same length"):
        cluster_energy([0.0, 1.0], [1.0], beta=1.0)


def _two_cluster_log_time(d0, beta, masses, tol=1e-7):
    """log of the time two clusters at distance d0 take to close to tol: the gap
    obeys d' = -(m_1 + m_2)/n sin(d) e^{beta (cos d - 1)} (n = m_1 + m_2), so
    t = int_tol^d0 e^{beta (1 - cos s)} / sin(s) ds, written as
    e^{beta (1 - cos d0)} times an integral of order 1/beta (quadrature)."""
    from scipy.integrate import quad

    def f(s):
        return np.exp(beta * (np.cos(d0) - np.cos(s))) / np.sin(s)

    # the integrand is concentrated within a few 1/(beta sin d0) of d0
    edge = d0 - 60.0 / (beta * np.sin(d0))
    near, _ = quad(f, edge, d0, epsabs=0, epsrel=1e-12, limit=200)
    far, _ = quad(f, tol, edge, epsabs=0, epsrel=1e-12, limit=200, points=[1e-3])
    return beta * (1 - np.cos(d0)) + np.log(near + far)


@pytest.mark.parametrize("d0", [0.8, 0.87])
def test_merge_times_beyond_the_smallest_force_match_the_two_cluster_integral(d0):
    """At beta = 2000 with clusters 0.8 and 0.87 apart the forces are e^-606 and
    e^-710 (at the bottom of the float range, and below it for beta = 2000, 0.9):
    the merge time (e^600 and e^703) equals the closed form of the two-cluster
    flow, and before it the flow stops at t_max with nothing merged. Earlier the
    forces themselves were integrated, and whether the solver could start depended
    on the last bits of a matrix product, i.e. on the CPU's BLAS kernels."""
    th0 = np.array([0.0, 0.0, 0.0, d0, d0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        far = merge_flow(th0, beta=2000, t_max=1e80)
        res = merge_flow(th0, beta=2000)
    assert far.info["merge_times"].tolist() == [0.0, 0.0, 0.0]  # coincident tokens only
    assert far.times[-1] == 1e80 and far.info["clusters"][-1] == 2
    assert np.all(np.isfinite(far.times)) and np.all(np.diff(far.times) >= 0)
    assert res.info["clusters"][-1] == 1 and res.info["merged_masses"][-1] == (3.0, 2.0)
    want = _two_cluster_log_time(d0, 2000.0, (3, 2))
    assert np.log(res.info["merge_times"][-1]) == pytest.approx(want, rel=1e-9, abs=0)
    assert want > 590  # the forces are far below 1e-250: the case is the point


def test_forces_below_the_smallest_float_and_times_beyond_the_largest():
    """beta = 4000, 0.9 apart: every force is e^-1510 (zero as a float). The flow
    still moves the clusters and stops at t_max; with no t_max the merge time,
    e^1500, is not a float, and the error gives its logarithm."""
    th0 = np.array([0.0, 0.9])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = merge_flow(th0, beta=4000.0, t_max=1e300)
    assert res.times[-1] == 1e300 and res.info["merge_times"].size == 0
    want = _two_cluster_log_time(0.9, 4000.0, (1, 1))
    with pytest.raises(ValueError, match=rf"e\^{want:.1f}, after the largest float"):
        merge_flow(th0, beta=4000.0)
    # clusters in between bring every merge back into range (gaps of 0.225 and,
    # after the first merges, about 0.45: times near e^100 and e^400)
    res = merge_flow(np.linspace(0.0, 0.9, 5), beta=4000.0)
    assert res.info["clusters"][-1] == 1 and np.all(
        np.isfinite(res.info["merge_times"])
    )


def test_the_staircase_runs_without_warnings():
    """The chapter's staircase prints nothing (the book fails on a warning)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for beta in (500, 2000, 4000):
            unit = np.log(beta) / np.sqrt(beta)
            res = merge_flow(0.5 * np.array([0, 0.5, 2, 4, 7]) * unit, beta=beta)
            assert res.info["merge_times"].size == 4 and np.all(
                np.isfinite(res.info["energy"])
            )
