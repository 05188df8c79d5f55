"""Stationary states of the noisy USA mean field beyond the linear threshold.

What is checked against what: the bifurcation point against the linear threshold
``noise_threshold(..., normalization="usa")``; the kind of transition against
Mun and Rosenzweig's beta*(d) and against the Landau coefficient derived in the
module docstring; the stationary density against two time-dependent solvers (it must
stay put, and a density at another sigma must move); the order parameter against
long noisy particle runs.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import gamma, iv

from attnlib import Model, sample_sphere
from attnlib._sphere_meanfield import sphere_mean_field
from attnlib.frontiers import noise_threshold, simulate_noisy
from attnlib.frontiers._stationary import (
    circle_noisy_mean_field,
    landau_coefficient,
    linear_coupling,
    stationary_branches,
    stationary_state,
    transition_beta,
)


def sigma_c(beta, d):
    return noise_threshold(beta=beta, d=d, normalization="usa")


# ------------------------------------------------------------ beta*(d), K_#
@pytest.mark.parametrize(
    "d, expected",
    [(2, 2.446918), (3, 1.816155), (4, 1.575257), (5, 1.445485), (8, 1.266553)],
)
def test_transition_beta_solves_the_bessel_equation(d, expected):
    b = transition_beta(d)
    assert iv(d / 2 + 1, b) / iv(d / 2, b) == pytest.approx(1 / d, abs=1e-12)
    assert b == pytest.approx(expected, abs=5e-7)


@pytest.mark.parametrize("d", [2, 3, 5])
@pytest.mark.parametrize("beta", [0.5, 2.0, 7.0])
def test_linear_coupling_is_half_the_inverse_threshold(d, beta):
    # K_# sigma_c^USA = 1/2: Mun-Rosenzweig's coupling K is 1/(2 sigma) in the
    # library's convention; K_# also from its closed form with scipy's iv
    k = linear_coupling(beta=beta, d=d)
    assert k == pytest.approx(
        beta ** (d / 2) / (2 ** (d / 2) * gamma(d / 2) * iv(d / 2, beta))
    )
    assert k * sigma_c(beta, d) == pytest.approx(0.5, rel=1e-12)


@pytest.mark.parametrize("d", [2, 3, 4])
def test_landau_coefficient_changes_sign_at_beta_star(d):
    b = transition_beta(d)
    assert landau_coefficient(beta=b, d=d) == pytest.approx(0.0, abs=1e-12)
    assert (
        landau_coefficient(beta=0.9 * b, d=d)
        < 0
        < landau_coefficient(beta=1.1 * b, d=d)
    )


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="d"):
        transition_beta(1)
    with pytest.raises(ValueError, match="sigma"):
        stationary_state(beta=1.0, d=2, sigma=-1.0)
    with pytest.raises(ValueError, match="sigmas"):
        stationary_branches([0.5, 0.4], beta=1.0, d=2)
    with pytest.raises(TypeError, match="beta"):
        stationary_state(beta="one", d=2, sigma=0.3)


# ------------------------------------------------------- the stationary states
@pytest.mark.parametrize("d", [2, 3])
def test_stationary_state_solves_the_self_consistency_equation(d):
    # rho = exp(K*rho / (beta sigma)) / Z, with K*rho computed by direct quadrature
    # of e^(beta <x, y>) over the sphere (not through the Funk-Hecke coefficients)
    beta, sig = 2.0, 0.7 * sigma_c(2.0, d)
    s = stationary_state(beta=beta, d=d, sigma=sig)
    assert s.order > 0.3 and s.stability < 1
    rng = np.random.default_rng(0)
    Y = sample_sphere(200_000, d, rng=rng)
    w = s(Y[:, 0])
    w = w / w.mean()
    x = np.eye(d)[:3] if d == 3 else np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    conv = np.array([np.mean(np.exp(beta * Y @ xi) * w) for xi in x])
    ratio = s(x[:, 0]) / np.exp(conv / (beta * sig))
    assert np.ptp(ratio) / ratio.mean() < 2e-2  # Monte Carlo error ~ 5e-3
    # order parameter = |first moment|
    assert np.mean(Y[:, 0] * w) == pytest.approx(s.order, abs=1e-2)


@pytest.mark.parametrize("d", [2, 3])
def test_bifurcation_is_at_the_linear_threshold(d):
    beta = 1.0
    sc = sigma_c(beta, d)
    assert stationary_state(beta=beta, d=d, sigma=0.999 * sc).order > 1e-3
    assert stationary_state(beta=beta, d=d, sigma=1.001 * sc).order < 1e-8


@pytest.mark.parametrize("d", [2, 3])
def test_below_beta_star_the_branch_is_continuous(d):
    beta = 0.6 * transition_beta(d)
    sc = sigma_c(beta, d)
    f = np.array([0.5, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995, 1.005, 1.05, 1.2])
    br = stationary_branches(f * sc, beta=beta, d=d)
    assert br.hysteresis().size == 0 and br.crossing() is None
    m = br.order_up
    assert np.all(np.diff(m[:7]) < 0) and np.all(m[7:] < 1e-10)
    # square-root law with the Landau amplitude: m^2 ~ (1 - sigma/sigma_c)/(d |A|)
    A = landau_coefficient(beta=beta, d=d)
    predicted = np.sqrt((1 - f[6]) / (d * -A))
    assert m[6] == pytest.approx(predicted, rel=2e-2)


@pytest.mark.parametrize("d", [2, 3])
def test_above_beta_star_hysteresis_and_a_free_energy_crossing(d):
    beta = 4.0
    assert beta > transition_beta(d)
    sc = sigma_c(beta, d)
    f = np.linspace(0.9, 1.4, 51)[:-1] + 0.005  # no grid point on sigma_c itself
    br = stationary_branches(f * sc, beta=beta, d=d)
    band = br.hysteresis()
    assert band.size >= 3
    # the loop: uniform stable on the down sweep above sigma_c, the ordered
    # state kept on the up sweep up to the fold
    assert band.min() > sc and band.min() < 1.02 * sc
    assert np.all(br.order_down[br.sigma > sc] < 1e-10)
    assert np.all(br.order_up[np.isin(br.sigma, band)] > 0.5)
    sk = br.crossing()
    assert sk is not None and band.min() < sk < band.max()
    assert sk > 1.01 * sc  # discontinuous: sigma_K != sigma_c
    # below sigma_K the ordered state is the global minimiser, above it uniform
    inside = np.isin(br.sigma, band)
    F = br.free_up[inside]
    s = br.sigma[inside]
    assert np.all(F[s < sk] < 0) and np.all(F[s > sk] > 0)
    # the jump of the order parameter at sigma_K is of order one
    assert br.order_up[inside][0] > 0.5


# ------------------------------------------ fixed points of the mean-field PDEs
def test_stationary_density_stays_put_under_the_circle_mean_field():
    beta = 4.0
    sc = sigma_c(beta, 2)
    th = 2 * np.pi * np.arange(128) / 128
    s = stationary_state(beta=beta, d=2, sigma=1.03 * sc, order=0.9)  # in the loop
    assert s.order > 0.5
    r0 = s(np.cos(th))
    r1 = circle_noisy_mean_field(r0, beta=beta, sigma=1.03 * sc, t_final=5.0, dt=0.005)
    assert np.max(np.abs(r1 - r0)) / r0.max() < 1e-3
    # a stationary density at another sigma moves by far more
    other = stationary_state(beta=beta, d=2, sigma=0.9 * sc)(np.cos(th))
    r2 = circle_noisy_mean_field(
        other, beta=beta, sigma=1.03 * sc, t_final=5.0, dt=0.005
    )
    assert np.max(np.abs(r2 - other)) / other.max() > 3e-2


@pytest.mark.parametrize("beta, f, lmax", [(1.0, 0.8, 16), (4.0, 1.1, 24)])
def test_stationary_density_stays_put_under_sphere_mean_field(beta, f, lmax):
    sc = sigma_c(beta, 3)
    s = stationary_state(beta=beta, d=3, sigma=f * sc, order=0.9)
    assert s.order > 0.5

    def run(state):
        sol = sphere_mean_field(
            lambda x: state(x[:, 2]) / (4 * np.pi),
            beta=beta,
            lmax=lmax,
            sigma=f * sc,
            t_final=3.0,
        )
        return np.max(np.abs(sol.final - sol.states[0])) / sol.states[0].max()

    assert run(s) < 1e-4
    assert run(stationary_state(beta=beta, d=3, sigma=1.05 * f * sc, order=0.9)) > 3e-2


# ---------------------------------------------------------------- particles
def sample_stationary(state, n, rng):
    """n tokens from the zonal density (about e_1), by rejection from uniform
    (the density increases in t = x_1, so its maximum is at t = 1)."""
    rng = np.random.default_rng(rng)
    Y = sample_sphere(40 * n, state.d, rng=rng)
    keep = rng.random(Y.shape[0]) * state(np.array([1.0]))[0] < state(Y[:, 0])
    assert keep.sum() >= n
    return Y[keep][:n]


@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("f", [0.7, 1.5])
def test_noisy_particles_agree_with_the_branch(d, f):
    n, beta, burn = 600, 1.0, 5.0
    sc = sigma_c(beta, d)
    sig = f * sc
    times = np.arange(0.0, 65.0001, 0.5)
    branch_state = stationary_state(beta=beta, d=d, sigma=sig)
    X0 = sample_stationary(branch_state, n, rng=10 + d)  # start in equilibrium
    tr = simulate_noisy(
        Model(beta=beta, normalization="usa"),
        X0,
        sigma=sig,
        rng=20 + d,
        times=times,
        dt=0.02,
        save_states=False,
        observables={"m": lambda X: np.linalg.norm(X.mean(axis=0))},
    )
    m = np.asarray(tr.observables["m"])[times >= burn]
    batches = m[: m.size // 10 * 10].reshape(10, -1).mean(axis=1)
    err = batches.std(ddof=1) / np.sqrt(10)
    branch = branch_state.order
    if f < 1:
        expected = branch
    else:
        # the branch is uniform (order 0); n particles fluctuate around it with the
        # Gaussian law of their first moment under the Gibbs measure exp(E/sigma),
        # variance 1/(d n (1 - sigma_c/sigma)) per component
        assert branch < 1e-10
        sd = np.sqrt(1 / (d * n * (1 - sc / sig)))
        expected = sd * (np.sqrt(np.pi / 2) if d == 2 else 2 * np.sqrt(2 / np.pi))
    assert abs(m.mean() - expected) < 3 * err + 5e-3


@pytest.mark.parametrize("d", [2, 3])
def test_the_kind_of_transition_switches_at_beta_star(d):
    # 10% below beta*(d) no loop; 20% above a loop of about 1% of sigma_c, with
    # sigma_K strictly between sigma_c and the fold
    f = np.linspace(0.95, 1.05, 401) + 0.000125
    for factor, loop in ((0.9, False), (1.2, True)):
        beta = factor * transition_beta(d)
        sc = sigma_c(beta, d)
        br = stationary_branches(f * sc, beta=beta, d=d)
        band = br.hysteresis()
        sk = br.crossing()
        if loop:
            assert band.size >= 10 and sc < band.min() < sk < band.max()
        else:
            assert band.size == 0 and sk is None


def test_the_limits_of_beta_sigma_and_lmax_are_clear_errors():
    # the Bessel ratios' leading terms below beta = 1e-6, and the documented range
    assert linear_coupling(beta=1e-300, d=3) == 1.5
    assert landau_coefficient(beta=1e-300, d=2) == pytest.approx(-0.25)
    assert linear_coupling(beta=2e-6, d=3) == pytest.approx(1.5, rel=1e-11)
    for fn in (linear_coupling, landau_coefficient):
        with pytest.raises(ValueError, match="beta"):
            fn(beta=501.0, d=3)
    sc = sigma_c(1.0, 2)
    with pytest.raises(ValueError, match="sigma must be at least"):
        stationary_state(beta=1.0, d=2, sigma=0.04 * sc)
    assert stationary_state(beta=1.0, d=2, sigma=0.06 * sc).order > 0.9
    with pytest.raises(ValueError, match="sigmas must be at least"):
        stationary_branches([0.01 * sc, sc], beta=1.0, d=2)
    for bad in (0, 1, 2.5, 401):
        with pytest.raises((ValueError, TypeError), match="lmax"):
            stationary_state(beta=1.0, d=2, sigma=0.5 * sc, lmax=bad)
    th = 2 * np.pi * np.arange(32) / 32
    with pytest.raises(ValueError, match="rho0 must be a density"):
        circle_noisy_mean_field(2 + np.cos(th), beta=1.0, sigma=0.2, t_final=0.1)
    with pytest.raises(ValueError, match="beta"):
        circle_noisy_mean_field(1 + 0 * th, beta=60.0, sigma=0.2, t_final=0.1)
