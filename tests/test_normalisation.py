"""Post-, pre- and peri-LN: particles against the equiangular ODE, clocks, rates."""

import numpy as np
import pytest

from attnlib import Model, equiangular_gamma, orthonormal_frame, sample_sphere, simulate
from attnlib.frontiers import NormalisedModel, equiangular_scheme, sphere_clock
from attnlib.frontiers._layernorm import equiangular_scheme_rhs


@pytest.mark.parametrize("normalization", ["sa", "usa"])
@pytest.mark.parametrize("scheme", ["post", "pre", "peri"])
def test_particles_follow_the_equiangular_ode(scheme, normalization):
    n, beta = 5, 1.5
    T = np.linspace(0, 6, 13)
    tr = simulate(
        NormalisedModel(scheme, beta=beta, normalization=normalization),
        orthonormal_frame(n, n),
        times=T,
        dt=0.01,
    )
    r = np.linalg.norm(tr.states, axis=-1)
    X = tr.states / r[..., None]
    G = np.einsum("tid,tjd->tij", X, X)
    off = G[:, ~np.eye(n, dtype=bool)]
    sol = equiangular_scheme(
        T, beta=beta, n=n, scheme=scheme, normalization=normalization
    )
    assert np.max(np.abs(off - sol.info["gamma"][:, None])) < 1e-8
    assert np.max(np.abs(r - sol.info["radius"][:, None])) < 1e-8


def test_post_scheme_is_the_equiangular_ode_of_the_book():
    T = np.array([0.0, 1.0, 2.0, 3.0])
    sol = equiangular_scheme(T, beta=1.0, n=32, scheme="post")
    assert np.allclose(
        sol.info["gamma"], equiangular_gamma(T, beta=1.0, n=32), atol=1e-11
    )
    assert np.allclose(sol.info["radius"], 1.0) and np.allclose(sol.info["clock"], T)


@pytest.mark.parametrize("scheme", ["pre", "peri"])
def test_clock_maps_onto_post_ln(scheme):
    # gamma_scheme(t) = gamma_post(s(t)) with s the clock
    T = np.linspace(0, 30, 31)
    sol = equiangular_scheme(T, beta=2.0, n=6, scheme=scheme)
    post = equiangular_gamma(sol.info["clock"], beta=2.0, n=6)
    assert np.max(np.abs(post - sol.info["gamma"])) < 1e-9


def test_rates_exponential_for_post_power_law_for_pre_and_peri():
    T = np.array([10.0, 20.0, 40.0, 80.0])
    post = (
        1 - equiangular_scheme([5.0, 10.0], beta=1.0, n=8, scheme="post").info["gamma"]
    )
    # post-LN SA: 1 - gamma ~ C e^{-2t}
    assert abs(post[1] * np.exp(20.0) / (post[0] * np.exp(10.0)) - 1) < 1e-3
    for scheme in ("pre", "peri"):
        sol = equiangular_scheme(T, beta=1.0, n=8, scheme=scheme)
        # log-log slopes of 1 - gamma between doublings of t tend to -2
        slopes = np.diff(np.log(1 - sol.info["gamma"])) / np.diff(np.log(T))
        assert np.all(np.abs(np.diff(np.abs(slopes + 2))) > 0)
        assert np.all(np.diff(np.abs(slopes + 2)) < 0) and abs(slopes[-1] + 2) < 0.05
        # the radius grows linearly with slope one (the SA rows sum to one)
        slope = np.diff(sol.info["radius"]) / np.diff(T)
        assert abs(slope[-1] - 1) < 1e-3


def test_pre_ln_directions_are_post_ln_on_the_clock_for_equal_radii():
    # an orthonormal frame scaled by 2 keeps equal radii by symmetry, so the clock
    # is global: pre-LN directions at t are post-LN directions at s(t)
    n, beta = 4, 3.0
    Y0 = 2.0 * orthonormal_frame(n, n)
    T = np.linspace(0, 5, 1001)  # fine samples: the clock is a trapezoidal sum
    tr = simulate(NormalisedModel("pre", beta=beta), Y0, times=T, dt=0.005)
    r = np.linalg.norm(tr.states, axis=-1)
    assert np.allclose(r, r[:, :1])
    s = sphere_clock(T, r[:, 0])
    X = tr.states / r[..., None]
    post = simulate(Model(beta=beta), Y0 / 2.0, times=s, dt=0.005)
    assert np.max(np.abs(post.states - X)) < 1e-5


def test_peri_ln_update_has_unit_speed():
    Y = 3.0 * sample_sphere(7, 3, rng=1)
    v = NormalisedModel("peri", beta=2.0).velocity(Y)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0)
    u = Model(beta=2.0, geometry="euclidean").velocity(Y / 3.0)
    assert np.allclose(NormalisedModel("pre", beta=2.0).velocity(Y), u)


def test_sphere_clock_closed_forms():
    t = np.linspace(0, 2, 2001)
    s = sphere_clock(t, np.exp(t))
    assert abs(s[-1] - (1 - np.exp(-2.0))) < 1e-6
    s2 = sphere_clock(t, np.ones((t.size, 3)), speed=0.5 * np.ones((t.size, 3)))
    assert np.allclose(s2[-1], 4.0)


def test_equiangular_rhs_asymptotics():
    # near gamma = 1 (SA): post rate 2 (1 - gamma), pre rate 2 (1 - gamma) / r
    d = 1e-6
    for scheme, r in (("post", 1.0), ("pre", 5.0), ("peri", 5.0)):
        g, rr, s = equiangular_scheme_rhs(1 - d, r, beta=2.0, n=10, scheme=scheme)
        assert abs(g / (2 * d / r) - 1) < 1e-4
        if scheme != "post":
            assert abs(rr - 1) < 1e-4


def test_validation():
    with pytest.raises(ValueError, match="scheme"):
        NormalisedModel("mid")
    with pytest.raises(ValueError, match="sphere"):
        NormalisedModel("pre", geometry="sphere")
    with pytest.raises(ValueError, match="zero row"):
        NormalisedModel("pre").velocity(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="unit norm"):
        NormalisedModel("post").velocity(2 * np.eye(3))
    with pytest.raises(ValueError, match="radii"):
        sphere_clock([0.0, 1.0], [1.0, -1.0])
    with pytest.raises(ValueError, match="radius0"):
        equiangular_scheme([0, 1], beta=1.0, n=3, radius0=0.0)
    with pytest.raises(ValueError, match="USA"):
        equiangular_scheme_rhs(0.5, 1.0, beta=800.0, n=3, normalization="usa")


@pytest.mark.parametrize("scheme", ["pre", "peri"])
def test_time_to_level_in_the_post_ln_clock(scheme):
    from attnlib.frontiers import scheme_time_to

    for beta in (0.0, 3.0):
        T = scheme_time_to(1 - 1e-3, beta=beta, n=16, scheme=scheme)
        grid = np.concatenate([[0.0], np.linspace(0.5 * T, 1.5 * T, 4001)])
        g = equiangular_scheme(grid, beta=beta, n=16, scheme=scheme).info["gamma"]
        assert abs(np.interp(1 - 1e-3, g, grid) / T - 1) < 1e-5
    # exponential in the post-LN time: beta = 8 takes about e^70
    big = scheme_time_to(1 - 1e-3, beta=8.0, n=32, scheme=scheme)
    assert 1e29 < big < 1e33
