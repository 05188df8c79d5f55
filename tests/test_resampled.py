"""Value matrices resampled at every layer: the chain, its two-token limit diffusion."""

import numpy as np
import pytest

from attnlib import Model, sample_sphere, simulate
from attnlib.frontiers._resampled import (
    antipodal_probability,
    count_clusters,
    overlap_coefficients,
    overlap_sde,
    resampled_run,
)


def _pair(B, d, u):
    """B copies of two unit tokens with overlap u."""
    X = np.zeros((B, 2, d))
    X[:, 0, 0] = 1.0
    X[:, 1, 0] = u
    X[:, 1, 1] = np.sqrt(1 - u * u)
    return X


def _wilson(k, n, z=1.96):
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"random_qk": True, "heads": 3},
        {"project": False, "value_mean": 1.0, "noise": 2.0},
    ],
)
def test_unit_norm_kept(options):
    X0 = sample_sphere(7, 5, rng=3)
    run = resampled_run(
        np.stack([X0] * 4),
        beta=2.0,
        layers=60,
        t_final=3.0,
        rng=1,
        n_saves=3,
        **options,
    )
    assert run.states.shape == (4, 4, 7, 5)
    assert np.allclose(np.linalg.norm(run.states, axis=-1), 1.0, atol=1e-12)
    assert np.array_equal(run.info["layers"], [0, 20, 40, 60])
    assert np.allclose(run.times, [0, 1, 2, 3])
    # the runs moved, and the four members (same X0) moved differently
    assert np.max(np.abs(run.final - X0)) > 1e-2
    assert np.max(np.abs(run.final[0] - run.final[1])) > 1e-3


def test_fixed_identity_values_are_the_euler_scheme_of_sa():
    X0 = sample_sphere(6, 3, rng=(np.random.default_rng(5)))
    X0 = np.stack([X0, sample_sphere(6, 3, rng=6)])
    beta = np.array([0.5, 3.0])
    run = resampled_run(
        X0, beta=beta, layers=40, t_final=2.0, noise=0.0, value_mean=1.0, rng=0
    )
    ref = simulate(Model(beta=beta), X0, t_final=2.0, dt=0.05, method="euler")
    assert np.array_equal(run.final, ref.states[-1])
    assert run.dt == 0.05


def test_one_step_moments_of_the_overlap_match_the_limit_diffusion():
    """E[du] = b h and E[du^2] = a h + O(h^2), Monte Carlo over 4e5 runs of one layer.

    The tolerance is 4 standard errors of the mean plus an O(h) allowance (h = 0.004,
    the next terms of the expansion are below 2 h in relative size here)."""
    d, beta, u, h = 4, 1.0, 0.3, 0.004
    opts = dict(noise=1.5, value_mean=0.5)
    B = 400_000
    run = resampled_run(_pair(B, d, u), beta=beta, layers=1, t_final=h, rng=11, **opts)
    du = np.sum(run.final[:, 0] * run.final[:, 1], axis=-1) - u
    b, a = overlap_coefficients(u, beta=beta, d=d, **opts)
    m1, se1 = du.mean() / h, du.std() / np.sqrt(B) / h
    m2, se2 = np.mean(du * du) / h, np.std(du * du) / np.sqrt(B) / h
    assert abs(m1 - b) < 4 * se1 + 2 * h * abs(b) + 0.02, (m1, b, se1)
    assert abs(m2 - a) < 4 * se2 + 0.05 * a, (m2, a, se2)
    # the drift is not only the deterministic SA part: the noise adds to it
    b_det, _ = overlap_coefficients(u, beta=beta, d=d, noise=0.0, value_mean=0.5)
    assert abs(m1 - b_det) > 4 * se1 + 0.02


def test_overlap_coefficients_known_values():
    # no noise: SA's two-token law du/dt = 2 (1-u^2) e^{bu}/(e^b + e^{bu})
    u, beta = np.linspace(-0.9, 0.9, 7), 2.0
    b, a = overlap_coefficients(u, beta=beta, d=3, noise=0.0, value_mean=1.0)
    sa = 2 * (1 - u * u) * np.exp(beta * u) / (np.exp(beta) + np.exp(beta * u))
    assert np.allclose(b, sa) and np.all(a == 0)
    # large beta, no mean: the logistic law -u(1-u^2), 2(1-u^2)^2 on the clock c t
    d = 5
    b, a = overlap_coefficients(u, beta=400.0, d=d, noise=np.sqrt(d))
    assert np.allclose(b, -u * (1 - u * u), atol=1e-12)
    assert np.allclose(a, 2 * (1 - u * u) ** 2, atol=1e-12)


def test_antipodal_probability_on_the_circle_is_the_angle():
    u0 = np.array([-0.8, 0.0, 0.3, 0.95])
    for beta in (0.0, 1.0, 4.0):
        p = antipodal_probability(u0, beta=beta, d=2)
        assert np.allclose(p, np.arccos(u0) / np.pi, atol=1e-8)


def test_antipodal_threshold_cosh_2beta_against_d_minus_2():
    # d = 8: antipodal states attract iff cosh(2 beta) > 6
    bc = np.arccosh(6.0) / 2
    assert antipodal_probability(0.0, beta=bc - 0.01, d=8) == 0.0
    assert antipodal_probability(0.0, beta=bc + 0.05, d=8) > 0.0
    assert antipodal_probability(0.0, beta=0.0, d=3) == 0.0
    p = antipodal_probability(np.linspace(-0.99, 0.99, 9), beta=2.0, d=3)
    assert np.all(np.diff(p) < 0) and 0 < p[-1] < p[0] < 1


def test_antipodal_probability_against_the_limit_sde():
    """Euler-Maruyama on u (4000 paths) inside the 95% Wilson interval widened by
    0.02 for the time step and the paths not yet decided at t = 40."""
    d, beta = 3, 1.0
    u = overlap_sde(
        np.zeros(4000), beta=beta, d=d, t_final=40.0, dt=0.01, rng=2, noise=np.sqrt(d)
    )
    k, n = int(np.sum(u < -0.9)), u.size
    lo, hi = _wilson(k, n)
    p = float(antipodal_probability(0.0, beta=beta, d=d))
    assert lo - 0.02 < p < hi + 0.02, (lo, p, hi)
    assert np.mean(np.abs(u) > 0.9) > 0.97


def test_chain_antipodal_frequency_matches_the_scale_function():
    d, beta, B = 3, 1.0, 1500
    run = resampled_run(
        _pair(B, d, 0.0), beta=beta, layers=600, t_final=30.0, noise=np.sqrt(d), rng=4
    )
    u = np.sum(run.final[:, 0] * run.final[:, 1], axis=-1)
    lo, hi = _wilson(int(np.sum(u < -0.9)), B)
    p = float(antipodal_probability(0.0, beta=beta, d=d))
    assert lo - 0.03 < p < hi + 0.03, (lo, p, hi)
    # without noise the same chain merges every pair (SA, V = I)
    run = resampled_run(
        _pair(50, d, 0.0),
        beta=beta,
        layers=600,
        t_final=30.0,
        noise=0.0,
        value_mean=1.0,
        rng=4,
    )
    assert np.all(np.sum(run.final[:, 0] * run.final[:, 1], axis=-1) > 0.999)


def test_reproducible_from_rng():
    X0 = sample_sphere(5, 3, rng=0)
    kw = dict(beta=1.0, layers=20, random_qk=True, heads=2)
    a = resampled_run(X0, rng=7, **kw).final
    b = resampled_run(X0, rng=np.random.default_rng(7), **kw).final
    c = resampled_run(X0, rng=8, **kw).final
    assert np.array_equal(a, b)
    assert not np.allclose(a, c)
    u1 = overlap_sde(np.zeros(10), beta=1.0, d=3, t_final=1.0, dt=0.1, rng=3)
    u2 = overlap_sde(np.zeros(10), beta=1.0, d=3, t_final=1.0, dt=0.1, rng=3)
    assert np.array_equal(u1, u2)


def test_count_clusters():
    e = np.eye(3)
    X = np.array([e[0], e[0], -e[0], e[1], e[1] + 1e-4 * e[2]])
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    k, pairs = count_clusters(X)
    assert (k, pairs) == (3, 1)
    k, pairs = count_clusters(np.stack([X, np.array([e[0]] * 5)]))
    assert list(k) == [3, 1] and list(pairs) == [1, 0]


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(beta=-1.0), ValueError, "beta"),
        (dict(layers=0), ValueError, "layers"),
        (dict(layers=2.5), TypeError, "layers"),
        (dict(t_final=0.0), ValueError, "t_final"),
        (dict(noise=-1.0), ValueError, "noise"),
        (dict(heads=0), ValueError, "heads"),
        (dict(random_qk=1), TypeError, "random_qk"),
        (dict(rng=None), TypeError, "rng"),
        (dict(n_saves=3), ValueError, "n_saves"),
        (dict(beta=np.ones(3)), ValueError, "beta"),
    ],
)
def test_resampled_run_validation(kwargs, error, match):
    base = dict(beta=1.0, layers=4, rng=0)
    base.update(kwargs)
    with pytest.raises(error, match=match):
        resampled_run(sample_sphere(3, 3, rng=0), **base)


def test_validation_of_states_and_overlaps():
    with pytest.raises(ValueError, match="X0"):
        resampled_run(2 * sample_sphere(3, 3, rng=0), beta=1.0, layers=2, rng=0)
    with pytest.raises(ValueError, match="u0"):
        antipodal_probability(1.5, beta=1.0, d=3)
    with pytest.raises(ValueError, match="noise"):
        antipodal_probability(0.0, beta=1.0, d=3, noise=0.0)
    with pytest.raises(ValueError, match="d"):
        overlap_coefficients(0.0, beta=1.0, d=1)


def test_antipodal_probability_with_the_sa_drift_against_the_limit_sde():
    """With V = I + noise (value_mean = 1) the SA drift pulls towards merging: the
    scale function of b and a must still give the Euler-Maruyama frequency."""
    d, beta, opts = 3, 2.0, dict(noise=np.sqrt(3), value_mean=1.0)
    u = overlap_sde(
        np.zeros(4000), beta=beta, d=d, t_final=30.0, dt=0.01, rng=6, **opts
    )
    lo, hi = _wilson(int(np.sum(u < -0.9)), u.size)
    p = float(antipodal_probability(0.0, beta=beta, d=d, **opts))
    p0 = float(antipodal_probability(0.0, beta=beta, d=d, noise=np.sqrt(3)))
    assert lo - 0.02 < p < hi + 0.02, (lo, p, hi)
    assert p < p0 - 0.03


def test_empty_inputs_and_endless_paths_are_clear_errors():
    with pytest.raises(ValueError, match="X0 must hold at least one token"):
        resampled_run(np.empty((0, 3)), beta=1.0, layers=2, rng=0)
    with pytest.raises(ValueError, match="X must hold at least one token"):
        count_clusters(np.empty((0, 3)))
    with pytest.raises(ValueError, match="t_final"):
        overlap_sde([0.0], beta=1.0, d=3, t_final=1e300, dt=0.01, rng=0)
    with pytest.raises(ValueError, match="max_steps=10"):
        overlap_sde([0.0], beta=1.0, d=3, t_final=1.0, dt=0.01, rng=0, max_steps=10)
    assert overlap_sde([0.0], beta=1.0, d=3, t_final=0.1, dt=0.01, rng=0).shape == (1,)
