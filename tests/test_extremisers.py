"""Energy extremisers: the E_D identities of [BKKRW] and the [BKKRW] experiments."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.optimize import brentq

from attnlib import Model, energy, retract, sample_sphere
from attnlib.energy import energy_D, energy_D_field, energy_D_gradient
from attnlib.extremisers import (
    circle_grid,
    density_mirror_descent,
    energy_flow,
    four_particle_ratio,
    gegenbauer_coefficients,
    minimise_configuration,
    platonic_energy,
    platonic_points,
    uniform_energy,
)
from attnlib.metrics import cluster_count

SQUARE = np.stack(
    [
        np.cos(np.pi / 4 * np.array([-3, -1, 1, 3])),
        np.sin(np.pi / 4 * np.array([-3, -1, 1, 3])),
    ],
    axis=1,
)


def fibonacci_sphere(m: int) -> np.ndarray:
    k = np.arange(m) + 0.5
    z = 1 - 2 * k / m
    phi = np.pi * (1 + 5**0.5) * k
    r = np.sqrt(1 - z**2)
    return np.stack([r * np.cos(phi), r * np.sin(phi), z], axis=1)


# ----------------------------------------------------------------- energies


def test_energy_D_matches_glpr_energy_for_beta_identity():
    X = sample_sphere(9, 4, rng=1)
    for beta in (0.5, 2.0, 7.0):
        want = 2 * beta * energy(X, beta=beta)
        assert energy_D(X, beta * np.eye(4)) == pytest.approx(want)


def test_single_dirac_energy_and_top_eigenvector():
    D = np.diag([1.0, 3.0, 4.0])
    x = retract(np.array([[0.3, -0.5, 0.8]]))
    assert energy_D(x, D) == pytest.approx(np.exp(x[0] @ D @ x[0]))
    # the maximum over a fine grid of Diracs is at the top eigenvector
    P = fibonacci_sphere(4000)
    e = np.exp(np.einsum("ij,jk,ik->i", P, D, P))
    top = P[np.argmax(e)]
    assert abs(top[2]) > 0.999
    assert energy_D(np.array([[0.0, 0.0, 1.0]]), D) == pytest.approx(np.exp(4.0))
    assert np.exp(4.0) >= e.max()


@pytest.mark.parametrize("p", [0.5, 0.2, 0.9])
def test_antipodal_pair_with_masses(p):
    lam = 1.7
    D = np.diag([lam, 0.3, -0.4])
    v = np.array([[1.0, 0.0, 0.0], [-1.0, 0.0, 0.0]])
    want = (p**2 + (1 - p) ** 2) * np.exp(lam) + 2 * p * (1 - p) * np.exp(-lam)
    assert energy_D(v, D, weights=[p, 1 - p]) == pytest.approx(want)
    if p == 0.5:
        assert energy_D(v, D) == pytest.approx(np.cosh(lam))


def test_uniform_measure_energy_sinh1():
    assert uniform_energy(beta=1.0, d=3) == pytest.approx(np.sinh(1.0), rel=1e-14)
    # quadrature on a quasi-uniform point set of S^2 agrees
    e = energy_D(fibonacci_sphere(3000), np.eye(3))
    assert e == pytest.approx(np.sinh(1), rel=1e-4)
    # and on the circle E = I_0(beta)
    _, Y = circle_grid(400)
    e = energy_D(Y, 2.0 * np.eye(2))
    assert e == pytest.approx(uniform_energy(beta=2.0, d=2), rel=1e-12)


def test_psd_energy_at_least_one_and_equal_on_kernel():
    D = np.diag([1.0, 0.0, 2.0])
    Xb = sample_sphere(30, 3, rng=3, batch=20)
    assert np.all(energy_D(Xb, D) >= 1.0)
    ker = np.array([[0, 1.0, 0], [0, -1.0, 0], [0, 1.0, 0]])
    assert energy_D(ker, D) == pytest.approx(1.0)


def test_energy_bounds_of_the_two_theorems():
    rng = np.random.default_rng(14)
    Xb = sample_sphere(25, 3, rng=rng, batch=40)
    A = np.diag([0.5, 1.2, 2.0])
    # negative definite: E <= cosh(alpha), equality for the balanced antipodal pair
    assert np.all(energy_D(Xb, -A) <= np.cosh(2.0))
    pair = np.array([[0.0, 0.0, 1.0], [0.0, 0.0, -1.0]])
    assert energy_D(pair, -A) == pytest.approx(np.cosh(2.0))
    # lambda_max >= |lambda_min|: E <= e^{lambda_max}, equality for the Dirac
    D = np.diag([-1.5, 0.3, 2.0])
    assert np.all(energy_D(Xb, D) <= np.exp(2.0))
    assert energy_D(pair[:1], D) == pytest.approx(np.exp(2.0))


def test_two_particle_energies_and_crossing():
    def energies(lam):
        D = np.diag([-1.0, lam])
        e2 = np.array([[0.0, 1.0], [0.0, 1.0]])
        pm1 = np.array([[1.0, 0.0], [-1.0, 0.0]])
        pm2 = np.array([[0.0, 1.0], [0.0, -1.0]])
        return energy_D(e2, D), energy_D(pm1, D), energy_D(pm2, D)

    for lam in (0.1, 0.7, 2.0):
        a, b, c = energies(lam)
        assert (a, b, c) == pytest.approx((np.exp(lam), np.cosh(1), np.cosh(lam)))
    root = brentq(lambda lam: energies(lam)[0] - energies(lam)[1], 0.01, 2.0)
    assert root == pytest.approx(np.log(np.cosh(1.0)), abs=1e-12)
    assert root == pytest.approx(0.4338, abs=1e-4)


def test_four_particle_energy_closed_form():
    a2 = 0.3
    lam = 2.5
    a, b = np.sqrt(a2), np.sqrt(1 - a2)
    X = np.array([[s * a, t * b] for s in (1, -1) for t in (1, -1)])
    assert energy_D(X, np.diag([1.0, lam])) == pytest.approx(
        np.cosh(a2) * np.cosh(lam * (1 - a2))
    )


def test_gradient_is_the_derivative_of_the_energy():
    rng = np.random.default_rng(4)
    X = sample_sphere(6, 3, rng=rng)
    A = rng.standard_normal((3, 3))
    D = A + A.T
    w = rng.random(6)
    w /= w.sum()
    G = energy_D_gradient(X, D, weights=w)
    assert np.allclose(np.sum(G * X, axis=1), 0.0, atol=1e-14)  # tangent
    H = rng.standard_normal(X.shape)
    h = 1e-6
    num = (
        energy_D(retract(X + h * H), D, weights=w)
        - energy_D(retract(X - h * H), D, weights=w)
    ) / (2 * h)
    assert num == pytest.approx(np.sum(G * H), rel=1e-6)


def test_field_is_beta_times_usa_and_sa_velocity():
    X = sample_sphere(12, 3, rng=5)
    beta = 1.7
    usa = Model(beta=beta, normalization="usa").velocity(X)
    assert np.allclose(energy_D_field(X, beta * np.eye(3)), beta * usa)
    # one fixed Euler step of the SA-metric flow is the SA Euler step (times beta)
    sa = Model(beta=beta, normalization="sa").velocity(X)
    res = energy_flow(
        X, beta * np.eye(3), metric="sa", tau=0.01, steps=1, step_control="fixed"
    )
    assert np.allclose(res.final, retract(X + 0.01 * beta * sa))


def test_ensemble_equals_single_runs():
    Xb = sample_sphere(10, 2, rng=6, batch=3)
    Ds = np.stack([np.diag([1.0, lam]) for lam in (0.5, 1.0, 2.0)])
    res = energy_flow(Xb, Ds, steps=30)
    for b in range(3):
        one = energy_flow(Xb[b], Ds[b], steps=30)
        assert np.allclose(res.final[b], one.final)
        assert np.allclose(res.info["energies"][:, b], one.info["energies"])


# -------------------------------------------------------------------- flows


@pytest.mark.parametrize("step_control", ["stable", "fixed"])
@pytest.mark.parametrize("direction", ["ascent", "descent"])
@pytest.mark.parametrize("metric", ["wasserstein", "sa"])
def test_zero_interaction_is_a_clean_fixed_point(metric, direction, step_control):
    # D = 0: every weight is e^0 = 1, so E_D = 1 exactly and the field D x_j vanishes;
    # the particles stay where they are, with no warning (log of a zero bound) on the
    # way. An ensemble member with D = 0 does not disturb the others.
    X = sample_sphere(12, 3, rng=21)
    Xb = sample_sphere(12, 3, rng=22, batch=2)
    Db = np.stack([np.zeros((3, 3)), np.diag([1.0, 0.5, 2.0])])
    kw = dict(direction=direction, metric=metric, step_control=step_control, steps=25)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = energy_flow(X, np.zeros((3, 3)), **kw)
        ens = energy_flow(Xb, Db, **kw)
        other = energy_flow(Xb[1], Db[1], **kw)
    assert np.array_equal(res.info["energies"], np.ones(len(res.info["step_indices"])))
    # the retraction y/|y| may move a unit vector by a rounding error per step
    assert np.allclose(res.final, X, rtol=0, atol=1e-13)
    assert res.info["n_rejected"] == 0
    assert np.allclose(ens.final[0], Xb[0], rtol=0, atol=1e-13)
    assert np.array_equal(
        ens.info["energies"][:, 0], np.ones(len(ens.info["step_indices"]))
    )
    assert np.allclose(ens.final[1], other.final)
    assert np.allclose(ens.info["energies"][:, 1], other.info["energies"])


@pytest.mark.parametrize("metric", ["wasserstein", "sa"])
def test_flow_preserves_float32(metric):
    X = sample_sphere(10, 3, rng=13).astype(np.float32)
    res = energy_flow(X, np.diag([1.0, 2.0, 3.0]), metric=metric, steps=20)
    assert res.final.dtype == np.float32
    ref = energy_flow(
        retract(X.astype(np.float64)), np.diag([1.0, 2.0, 3.0]), metric=metric, steps=20
    )
    assert np.allclose(res.final, ref.final, atol=1e-4)


@pytest.mark.parametrize("direction", ["ascent", "descent"])
@pytest.mark.parametrize("metric", ["wasserstein", "sa"])
def test_stable_flow_is_monotone_even_with_a_huge_step(direction, metric):
    X = sample_sphere(40, 3, rng=7)
    D = np.diag([3.0, -2.0, 4.0])
    res = energy_flow(X, D, direction=direction, metric=metric, tau=50.0, steps=150)
    dE = np.diff(res.info["energies"])
    sgn = 1 if direction == "ascent" else -1
    assert np.all(sgn * dE >= -1e-12 * res.info["energies"][:-1])
    assert sgn * (res.info["energies"][-1] - res.info["energies"][0]) > 0
    assert np.allclose(np.linalg.norm(res.final, axis=1), 1.0)


def test_ascent_reaches_a_dirac_at_the_top_eigenvector():
    # [BKKRW] Fig 1: n = 1, D = diag(1, 3, 4)
    D = np.diag([1.0, 3.0, 4.0])
    res = energy_flow(sample_sphere(1, 3, rng=8), D, steps=400)
    assert abs(res.final[0, 2]) == pytest.approx(1.0, abs=1e-9)
    assert res.info["energies"][-1] == pytest.approx(np.exp(4.0), rel=1e-9)


@pytest.mark.parametrize("lam", [0.25, 0.5, 1.0, 2.0, 3.0, 5.0])
def test_four_particle_law_with_the_stable_step(lam):
    res = energy_flow(
        SQUARE,
        np.diag([1.0, lam]),
        direction="descent",
        tau=1.0,
        steps=3000,
        record_every=3000,
    )
    assert np.allclose(four_particle_ratio(res.final, lam), lam, rtol=1e-4)
    c = brentq(lambda c: np.tanh(c) - lam * np.tanh(lam * (1 - c)), 1e-12, 1 - 1e-12)
    assert res.info["energies"][-1] == pytest.approx(
        np.cosh(c) * np.cosh(lam * (1 - c))
    )


def test_four_particle_law_fails_with_too_large_plain_euler_step():
    # the lesson of [BKKRW] Fig 4: lam * tau too big -> a wrong stationary point
    lam = 5.0
    bad = energy_flow(
        SQUARE,
        np.diag([1.0, lam]),
        direction="descent",
        tau=0.2,
        steps=2000,
        step_control="fixed",
        projected=False,
    )
    ratio = four_particle_ratio(bad.final, lam)
    assert np.all(np.abs(ratio - lam) > 1.0)
    assert bad.info["energies"][-1] > 10.0  # far above the minimum 1.5255...
    good = energy_flow(
        SQUARE,
        np.diag([1.0, lam]),
        direction="descent",
        tau=0.02,
        steps=4000,
        step_control="fixed",
        projected=False,
    )
    assert np.allclose(four_particle_ratio(good.final, lam), lam, rtol=1e-4)


def test_fig2_single_cluster_window():
    # [BKKRW] Fig 2: single cluster for lam in [0.79, 1.18], two antipodal clusters
    # for lam <= 0.4 or >= 1.4 (n = 100, ascent, tau = 0.1, 1500 steps)
    lams = np.array([0.3, 0.9, 1.0, 1.1, 1.5])
    runs = 5
    L = np.repeat(lams, runs)
    D = np.zeros((L.size, 2, 2))
    D[:, 0, 0] = 1.0
    D[:, 1, 1] = L
    X0 = sample_sphere(100, 2, rng=2024, batch=L.size)
    res = energy_flow(
        X0, D, tau=0.1, steps=1500, step_control="fixed", record_every=1500
    )
    counts = cluster_count(res.final, delta=1e-2).reshape(lams.size, runs)
    assert np.all(counts[[1, 2, 3]] == 1)
    assert np.all(counts[[0, 4]] == 2)
    # the two clusters are antipodal, at the top eigenvector
    two = res.final[np.repeat(lams, runs) == 1.5]
    assert np.allclose(np.abs(two[..., 1]), 1.0, atol=1e-3)
    two = res.final[np.repeat(lams, runs) == 0.3]
    assert np.allclose(np.abs(two[..., 0]), 1.0, atol=1e-3)


def test_negative_definite_ascent_gives_antipodal_pairs():
    D = -np.diag([1.0, 2.0, 3.0])
    res = energy_flow(
        sample_sphere(60, 3, rng=4, batch=3), D, tau=1.0, steps=600, record_every=600
    )
    assert np.all(cluster_count(res.final, delta=1e-2) == 2)
    assert np.allclose(np.abs(res.final[..., 2]), 1.0, atol=1e-6)
    p = (res.final[..., 2] > 0).mean(axis=1)
    want = (p**2 + (1 - p) ** 2) * np.exp(-3.0) + 2 * p * (1 - p) * np.exp(3.0)
    assert np.allclose(res.info["energies"][-1], want)
    assert np.all(res.info["energies"][-1] <= np.cosh(3.0) + 1e-12)


def test_psd_descent_minimisers_live_in_the_kernel():
    D = np.diag([1.0, 0.0, 1.0])  # ker D = span(e2)
    res = energy_flow(
        sample_sphere(30, 3, rng=9),
        D,
        direction="descent",
        tau=1.0,
        steps=3000,
        record_every=3000,
    )
    # E - 1 >= (1/2) (second moment of D^{1/2} x)^2: the approach is algebraic
    assert res.info["energies"][-1] == pytest.approx(1.0, abs=1e-6)
    assert np.mean(np.sum(res.final[:, [0, 2]] ** 2, axis=1)) < 2e-3
    assert np.max(np.abs(res.final[:, [0, 2]])) < 0.15
    D = np.diag([0.0, 0.0, 2.0])  # ker D = the equator
    res = energy_flow(
        sample_sphere(30, 3, rng=10),
        D,
        direction="descent",
        tau=1.0,
        steps=3000,
        record_every=3000,
    )
    assert res.info["energies"][-1] == pytest.approx(1.0, abs=1e-6)
    assert np.mean(res.final[:, 2] ** 2) < 2e-3
    assert np.max(np.abs(res.final[:, 2])) < 0.15


def test_descent_for_identity_spreads_towards_sinh1():
    # [BKKRW] Fig 3(a) at reduced size: D = I on S^2, the energy approaches sinh 1
    res = energy_flow(
        sample_sphere(200, 3, rng=11),
        np.eye(3),
        direction="descent",
        tau=1.0,
        steps=300,
        record_every=300,
    )
    assert np.sinh(1.0) < res.info["energies"][-1] < np.sinh(1.0) * 1.01
    assert res.info["energies"][-1] < res.info["energies"][0]


# ------------------------------------------------------- measures on a grid


def test_mirror_descent_identity_gives_uniform():
    theta, _ = circle_grid(128)
    w0 = 1 + 0.5 * np.cos(theta) + 0.3 * np.sin(2 * theta)
    w0 /= w0.sum()
    res = density_mirror_descent(np.eye(2), m=128, steps=300, w0=w0)
    assert np.all(np.diff(res.energies) <= 1e-14)
    assert res.energies[0] > uniform_energy(beta=1.0, d=2) + 0.05
    assert res.energies[-1] == pytest.approx(uniform_energy(beta=1.0, d=2), rel=2e-7)
    assert np.allclose(res.weights, 1 / 128, rtol=0.1)
    # the uniform measure is stationary
    still = density_mirror_descent(np.eye(2), m=128, steps=20)
    assert np.allclose(still.weights, 1 / 128, rtol=1e-12)


def test_mirror_descent_backtracks_a_too_large_step():
    # eta = 10 overshoots the first Fourier mode for D = I; backtracking keeps the
    # energy monotone and still converges to the uniform measure
    theta, _ = circle_grid(128)
    w0 = 1 + 0.4 * np.cos(theta)
    w0 /= w0.sum()
    res = density_mirror_descent(np.eye(2), m=128, steps=400, eta=10.0, w0=w0)
    assert np.all(np.diff(res.energies) <= 1e-13)
    assert res.energies[-1] == pytest.approx(uniform_energy(beta=1.0, d=2), rel=1e-8)


def test_four_particle_ratio_per_member():
    X = np.broadcast_to(SQUARE, (3, 4, 2))
    lam = np.array([0.5, 1.0, 2.0])
    r = four_particle_ratio(X, lam)
    assert r.shape == (3, 4)
    assert np.allclose(r, np.tanh(0.5) / np.tanh(lam[:, None] * 0.5))
    with pytest.raises(ValueError, match="lam must be a scalar or of shape"):
        four_particle_ratio(X, np.ones(2))


def test_mirror_descent_psd_concentrates_on_the_kernel():
    res = density_mirror_descent(np.diag([1.0, 0.0]), m=128, steps=2000, eta=10.0)
    assert np.all(np.diff(res.energies) <= 1e-14)
    assert res.energies[-1] == pytest.approx(1.0, abs=2e-5)
    theta = np.arctan2(res.points[:, 1], res.points[:, 0])
    near = np.abs(np.cos(theta)) < 0.2
    assert res.weights[near].sum() > 0.99
    assert res.weights.sum() == pytest.approx(1.0)


def test_mirror_ascent_goes_to_a_dirac():
    res = density_mirror_descent(
        np.diag([1.0, 2.0]), m=64, steps=400, eta=0.5, direction="ascent"
    )
    assert res.energies[-1] == pytest.approx(np.exp(2.0), rel=1e-6)


# --------------------------------------------------------------- repulsion


@pytest.mark.parametrize("name", ["tetrahedron", "octahedron", "icosahedron"])
def test_platonic_closed_forms(name):
    P = platonic_points(name)
    assert np.allclose(np.linalg.norm(P, axis=1), 1.0)
    for beta in (0.5, 1.0, 4.0):
        assert platonic_energy(name, beta=beta) == pytest.approx(
            energy(P, beta=beta), rel=1e-13
        )


@pytest.mark.parametrize(
    "name,n", [("tetrahedron", 4), ("octahedron", 6), ("icosahedron", 12)]
)
@pytest.mark.parametrize("beta", [1.0, 3.0])
def test_optimiser_reaches_the_optimal_configurations(name, n, beta):
    res = minimise_configuration(n, 3, beta=beta, rng=n, restarts=3)
    assert np.allclose(res.energies, platonic_energy(name, beta=beta), rtol=1e-9)
    # and the inner-product distribution is the solid's
    G = np.sort((res.points @ res.points.T).ravel())
    P = platonic_points(name)
    assert np.allclose(G, np.sort((P @ P.T).ravel()), atol=1e-4)


def test_uniform_beats_random_configurations_in_mean():
    # [GLPR] Prop 3.4: the uniform measure minimises; n points can only approach it
    assert (
        platonic_energy("icosahedron", beta=1.0) > uniform_energy(beta=1.0, d=3) / 2.0
    )


# ---------------------------------------------------------------- Gegenbauer


@pytest.mark.parametrize("d", [2, 3, 4, 7])
@pytest.mark.parametrize("beta", [0.3, 1.0, 6.0])
def test_gegenbauer_coefficients_positive_and_consistent(d, beta):
    a = gegenbauer_coefficients(beta=beta, d=d, kmax=25)
    q = gegenbauer_coefficients(beta=beta, d=d, kmax=25, method="quadrature")
    assert np.all(a > 0)
    # quadrature is accurate to ~1e-12 * max(a) in absolute terms only
    assert np.allclose(a, q, rtol=1e-9, atol=1e-10 * a.max())
    big = a > 1e-8 * a.max()
    assert np.all(q[big] > 0) and np.allclose(a[big], q[big], rtol=1e-6)
    t = np.linspace(-1, 1, 7)
    from scipy.special import eval_chebyt, eval_gegenbauer

    k = np.arange(26)[:, None]
    C = eval_chebyt(k, t) if d == 2 else eval_gegenbauer(k, (d - 2) / 2, t)
    assert np.allclose(a @ C, np.exp(beta * t), rtol=1e-10)
    assert a[0] == pytest.approx(uniform_energy(beta=beta, d=d))


# ---------------------------------------------------------------- bad input


def test_bad_inputs_raise():
    X = sample_sphere(5, 2, rng=0)
    with pytest.raises(ValueError, match="D must be symmetric"):
        energy_D(X, np.array([[1.0, 2.0], [0.0, 1.0]]))
    with pytest.raises(ValueError, match=r"D must have shape \(2, 2\)"):
        energy_D(X, np.eye(3))
    with pytest.raises(ValueError, match="D must contain only finite"):
        energy_D(X, np.array([[np.nan, 0], [0, 1.0]]))
    with pytest.raises(TypeError, match="D must be"):
        energy_D(X, "identity")
    with pytest.raises(ValueError, match="weights must have shape"):
        energy_D(X, np.eye(2), weights=np.ones(4) / 4)
    with pytest.raises(ValueError, match="weights must sum to 1"):
        energy_D(X, np.eye(2), weights=np.ones(5))
    with pytest.raises(ValueError, match="X must have rows of unit norm"):
        energy_D(2 * X, np.eye(2))
    with pytest.raises(ValueError, match="X0 must have shape"):
        energy_flow(np.ones(3), np.eye(3))
    with pytest.raises(ValueError, match="direction must be one of"):
        energy_flow(X, np.eye(2), direction="up")
    with pytest.raises(ValueError, match="metric must be one of"):
        energy_flow(X, np.eye(2), metric="l2")
    with pytest.raises(ValueError, match="step_control must be one of"):
        energy_flow(X, np.eye(2), step_control="adaptive")
    with pytest.raises(ValueError, match="tau must be >"):
        energy_flow(X, np.eye(2), tau=0.0)
    with pytest.raises(ValueError, match=r"D must have shape"):
        energy_flow(sample_sphere(5, 2, rng=0, batch=3), np.stack([np.eye(2)] * 2))
    with pytest.raises(ValueError, match="D must be symmetric"):
        density_mirror_descent(np.array([[1.0, 1.0], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="name must be one of"):
        platonic_points("cube")
    with pytest.raises(ValueError, match="beta must be >"):
        gegenbauer_coefficients(beta=0.0, d=3, kmax=4)
    with pytest.raises(ValueError, match="d must be an integer >= 2"):
        uniform_energy(beta=1.0, d=1)
    with pytest.raises(TypeError, match="rng must be"):
        minimise_configuration(4, 3, rng=None)
    with pytest.raises(ValueError, match="X must have shape"):
        four_particle_ratio(sample_sphere(4, 3, rng=0), 1.0)
