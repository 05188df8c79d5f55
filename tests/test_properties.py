"""Property-based checks of the core: symmetries that hold for every configuration."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import attnlib as al

configs = st.tuples(
    st.integers(1, 12),  # n
    st.integers(2, 5),  # d
    st.floats(0.0, 20.0),  # beta
    st.integers(0, 2**32 - 1),  # seed
    st.sampled_from(["sa", "usa"]),
)


@settings(max_examples=40, deadline=None)
@given(configs)
def test_rotation_equivariance_and_tangency(cfg):
    n, d, beta, seed, norm = cfg
    rng = np.random.default_rng(seed)
    X = al.sample_sphere(n, d, rng=rng)
    R, _ = np.linalg.qr(rng.standard_normal((d, d)))
    m = al.Model(beta=beta, normalization=norm, block=5)
    v = m.velocity(X)
    assert np.all(np.isfinite(v))
    # round-off scales with the size of the unprojected field (e^beta for USA)
    w = al.Model(beta=beta, normalization=norm, geometry="euclidean").velocity(X)
    scale = max(1.0, float(np.max(np.abs(w))))
    # tangent to the sphere at every token
    assert np.max(np.abs(np.sum(v * X, axis=1))) <= 1e-12 * scale
    # the identity model commutes with rotations: v(X R) = v(X) R
    np.testing.assert_allclose(m.velocity(al.retract(X @ R)), v @ R, atol=1e-11 * scale)


@settings(max_examples=40, deadline=None)
@given(configs)
def test_sa_velocity_is_bounded_and_attention_stochastic(cfg):
    n, d, beta, seed, _ = cfg
    rng = np.random.default_rng(seed)
    X = al.sample_sphere(n, d, rng=rng)
    m = al.Model(beta=beta)
    A = m.attention(X)
    np.testing.assert_allclose(A.sum(axis=1), 1.0, rtol=1e-12)
    assert np.all(A >= 0)
    # SA velocity is the projection of a convex combination of unit vectors: |v_i| <= 1
    assert np.max(np.linalg.norm(m.velocity(X), axis=1)) <= 1.0 + 1e-12


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 10), st.integers(0, 2**32 - 1), st.floats(0.1, 5.0))
def test_sinkhorn_plan_is_doubly_stochastic_and_symmetric(n, seed, beta):
    X = al.sample_sphere(n, 3, rng=seed)
    P = al.Model(beta=beta, kernel="sinkhorn").attention(X)
    np.testing.assert_allclose(P.sum(axis=0), 1.0, atol=1e-10)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
    # the entropic plan of a symmetric cost between equal marginals is symmetric
    np.testing.assert_allclose(P, P.T, atol=1e-9)
