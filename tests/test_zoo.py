"""Mix-LN and nGPT as clocks of the post-LN field; several heads in the equiangular
reduction (rates, super-additivity, the two-head threshold)."""

import numpy as np
import pytest

from attnlib import Model, equiangular_gamma, equiangular_time_to, orthonormal_frame
from attnlib import sample_sphere, simulate
from attnlib.frontiers._zoo import (
    multihead_gamma,
    multihead_rate,
    multihead_time_to,
    ngpt_velocity,
    two_head_threshold,
    zoo_equiangular,
    zoo_run,
    zoo_time_to,
)

LEVEL = 1 - 1e-3


def _gram(X):
    X = X / np.linalg.norm(X, axis=-1, keepdims=True)
    return np.einsum("...id,...jd->...ij", X, X)


def test_ngpt_velocity_is_tangent_and_has_speed_alpha_over_update_norm():
    X = sample_sphere(7, 4, rng=1)
    v = ngpt_velocity(X, beta=2.0, alpha=0.3)
    u = Model(beta=2.0, geometry="euclidean").velocity(X)
    post = Model(beta=2.0).velocity(X)
    assert np.allclose(np.sum(v * X, axis=1), 0, atol=1e-14)
    expected = 0.3 * post / np.linalg.norm(u, axis=1, keepdims=True)
    assert np.allclose(v, expected, atol=1e-14)


def test_ngpt_layer_tends_to_the_field():
    # one layer x <- N(x + alpha eta (N(u) - x)) is x + eta v + O(eta^2)
    X = sample_sphere(6, 3, rng=2)
    alpha = 0.7
    u = Model(beta=1.0, geometry="euclidean").velocity(X)
    h = u / np.linalg.norm(u, axis=1, keepdims=True)
    v = ngpt_velocity(X, beta=1.0, alpha=alpha)
    errs = []
    for eta in (1e-2, 1e-3):
        Y = X + alpha * eta * (h - X)
        Y /= np.linalg.norm(Y, axis=1, keepdims=True)
        errs.append(np.max(np.abs(Y - X - eta * v)))
    assert errs[1] < 1.2e-2 * errs[0]  # second order: ratio 1e-2


@pytest.mark.parametrize("scheme", ["mix", "ngpt"])
def test_equiangular_solution_is_post_ln_on_its_clock(scheme):
    t = np.linspace(0, 12, 25)
    sol = zoo_equiangular(t, beta=1.5, n=8, scheme=scheme, switch=1.5, alpha=0.8)
    g_post = equiangular_gamma(sol.info["clock"], beta=1.5, n=8)
    assert np.max(np.abs(g_post - sol.info["gamma"])) < 1e-9
    if scheme == "mix":
        early = t <= 1.5
        assert np.allclose(
            sol.info["gamma"][early], equiangular_gamma(t[early], beta=1.5, n=8)
        )
        assert np.all(sol.info["radius"][early] == 1) and sol.info["radius"][-1] > 5


@pytest.mark.parametrize("scheme", ["mix", "ngpt"])
def test_particles_follow_the_equiangular_ode(scheme):
    n = 6
    t = np.linspace(0, 6, 13)
    states = zoo_run(
        orthonormal_frame(n, n),
        beta=1.0,
        scheme=scheme,
        times=t,
        switch=2.0,
        alpha=0.5,
        dt=0.01,
    )
    g = _gram(states)[:, 0, 1]
    r = np.linalg.norm(states[:, 0], axis=-1)
    sol = zoo_equiangular(t, beta=1.0, n=n, scheme=scheme, switch=2.0, alpha=0.5)
    assert np.max(np.abs(g - sol.info["gamma"])) < 1e-8
    assert np.max(np.abs(r - sol.info["radius"])) < 1e-8


@pytest.mark.parametrize("scheme,switch", [("ngpt", 1.0), ("mix", 1.0), ("mix", 20.0)])
def test_time_to_hits_the_level(scheme, switch):
    tt = zoo_time_to(LEVEL, beta=2.0, n=16, scheme=scheme, switch=switch, alpha=1.3)
    sol = zoo_equiangular(
        [0.0, tt], beta=2.0, n=16, scheme=scheme, switch=switch, alpha=1.3
    )
    assert abs(sol.info["gamma"][-1] - LEVEL) < 1e-8
    if scheme == "ngpt":  # faster than post-LN at alpha = 1.3 (and |u| < 1)
        assert tt < equiangular_time_to(LEVEL, beta=2.0, n=16) / 1.3


def test_multihead_rate_adds_the_heads_and_matches_particles():
    n = 8
    eye = np.eye(n)
    t = np.linspace(0, 5, 11)
    tr = simulate(
        Model(beta=1.0, heads=[(0.5 * eye, eye, 2 * eye), (4 * eye, eye, eye)]),
        orthonormal_frame(n, n),
        times=t,
        dt=0.01,
    )
    g = _gram(tr.states)[:, 0, 1]
    ode = multihead_gamma(t, beta=[0.5, 4.0], weights=[2.0, 1.0], n=n)
    assert np.max(np.abs(g - ode)) < 1e-8


def test_heterogeneous_heads_are_super_additive_and_equal_heads_additive():
    def inv(bs):
        return 1 / multihead_time_to(LEVEL, beta=bs, weights=[1.0] * len(bs), n=32)

    mixed = inv([0.5, 6.0])
    assert mixed > 1.1 * (inv([0.5]) + inv([6.0]))
    assert abs(inv([2.0, 2.0]) - 2 * inv([2.0])) < 1e-9


def test_two_head_threshold_separates_clustering_from_dispersion():
    bc = two_head_threshold([1.0, 0.0], [1.0, -2.0])
    assert abs(bc - np.log(2)) < 1e-15
    for beta, end in ((0.9 * bc / 0.5, -1 / 7), (1.1 * bc / 0.5, 1.0)):
        g = multihead_gamma(
            [0.0, 40.0],
            beta=[beta, 0.0],
            weights=[1.0, -2.0],
            n=8,
            normalization="usa",
            gamma0=0.5,
        )
        assert abs(g[-1] - end) < 1e-6
    # the rate vanishes at gamma* = beta_c / beta
    r = multihead_rate(
        bc / 3.0, beta=[3.0, 0.0], weights=[1.0, -2.0], n=8, normalization="usa"
    )
    assert abs(r) < 1e-12
    assert (
        multihead_time_to(
            0.9,
            beta=[1.0, 0.0],
            weights=[1.0, -2.0],
            n=8,
            normalization="usa",
            gamma0=0.5,
        )
        == np.inf
    )


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="scheme"):
        zoo_time_to(0.9, beta=1.0, n=8, scheme="post")
    with pytest.raises(ValueError, match="alpha"):
        zoo_equiangular([0, 1], beta=1.0, n=8, scheme="ngpt", alpha=0.0)
    with pytest.raises(ValueError, match="switch"):
        zoo_run(
            sample_sphere(4, 3, rng=0),
            beta=1.0,
            scheme="mix",
            times=[0, 1],
            switch=-1.0,
        )
    with pytest.raises(ValueError, match="weights"):
        multihead_rate(0.1, beta=[1.0, 2.0], weights=[1.0], n=8)
    with pytest.raises(ValueError, match="beta"):
        multihead_gamma([0, 1], beta=[-1.0], weights=[1.0], n=8)
    with pytest.raises(ValueError, match="scores"):
        two_head_threshold([0.0, 1.0], [1.0, -2.0])
    with pytest.raises(ValueError, match="weights"):
        two_head_threshold([1.0, 0.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="unit rows"):
        ngpt_velocity(2 * sample_sphere(4, 3, rng=0), beta=1.0)
    with pytest.raises(TypeError, match="beta"):
        ngpt_velocity(sample_sphere(4, 3, rng=0), beta="1")


def test_mix_ln_runs_post_ln_only_up_to_the_last_time():
    # every output time before a far switch: post-LN up to the last one, not up to
    # the switch (which would take 10^8 steps of dt, or 10^3 DOP853 steps and more)
    t = np.array([0.0, 1.0, 2.0])
    sol = zoo_equiangular(t, beta=1.0, n=8, scheme="mix", switch=1e7, max_steps=1000)
    assert np.allclose(sol.info["gamma"], equiangular_gamma(t, beta=1.0, n=8))
    assert np.all(sol.info["radius"] == 1) and np.all(sol.info["clock"] == t)
    X0 = sample_sphere(5, 3, rng=0)
    states = zoo_run(X0, beta=1.0, scheme="mix", times=t, switch=1e7, dt=0.1)
    post = simulate(Model(beta=1.0), X0, times=t, dt=0.1).states
    assert np.array_equal(states, post)


def test_equiangular_solves_are_capped_by_max_steps():
    # a last time of 1e300 would take as many DOP853 steps (a hang)
    with pytest.raises(ValueError, match="max_steps=1000"):
        zoo_equiangular([0, 1e300], beta=1.0, n=8, scheme="ngpt", max_steps=1000)
    with pytest.raises(ValueError, match="max_steps=1000"):
        multihead_gamma([0, 1e300], beta=[1.0], weights=[1.0], n=8, max_steps=1000)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the overflows provoked
def test_numbers_beyond_float64_raise_naming_the_argument():
    # the nGPT clock at alpha = 1e300 is too stiff for any step
    with pytest.raises(ValueError, match="alpha=1e\\+300"):
        zoo_equiangular([0, 1], beta=1.0, n=8, scheme="ngpt", alpha=1e300)
    # the SA rate at gamma = 0 is 2 / (e^beta + n - 1): the time is beyond float64
    with pytest.raises(ValueError, match="beta=1000"):
        zoo_time_to(0.5, beta=1000.0, n=8, scheme="ngpt")
    # a step of alpha * dt = 1e299 drives the tokens off the sphere to overflow
    with pytest.raises(ValueError, match="alpha=1e\\+300"):
        zoo_run(
            sample_sphere(4, 3, rng=0),
            beta=1.0,
            scheme="ngpt",
            times=[0, 0.2],
            alpha=1e300,
            dt=0.1,
        )
    # a head of weight 1e300 makes the ODE too stiff (its first trial step used to
    # land at gamma ~ 1e299, where the USA rate overflows)
    with pytest.raises(ValueError, match="weights=\\[1e\\+300"):
        multihead_gamma(
            [0, 1], beta=[1.0, 2.0], weights=[1e300, 0.5], n=4, normalization="usa"
        )
