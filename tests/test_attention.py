import warnings

import numpy as np
import pytest

import attnlib as al
from attnlib import Model, measure_field, sample_sphere

from . import reference as ref

VARIANTS = [
    dict(kernel="softmax", normalization="sa"),
    dict(kernel="softmax", normalization="usa"),
    dict(kernel="l2", normalization="sa"),
    dict(kernel="l2", normalization="usa"),
    dict(kernel="sigmoid", normalization="usa", bias=-0.5),
    dict(kernel="sigmoid", normalization="sa", bias=0.3),
    dict(kernel="sinkhorn", normalization="sa"),
    dict(kernel="softmax", normalization="sa", mask="causal"),
    dict(kernel="softmax", normalization="usa", mask="causal"),
    dict(kernel="l2", normalization="sa", mask="causal"),
]


def _qkv(rng, d, m=None):
    m = d if m is None else m
    return (
        rng.standard_normal((m, d)) / np.sqrt(d),
        rng.standard_normal((m, d)) / np.sqrt(d),
        rng.standard_normal((d, d)) / np.sqrt(d),
    )


@pytest.mark.parametrize(
    "variant", VARIANTS, ids=lambda v: "-".join(map(str, v.values()))
)
@pytest.mark.parametrize("sphere", [True, False])
def test_variants_match_double_loop(variant, sphere, rng):
    n, d = 7, 3
    X = sample_sphere(n, d, rng=rng)
    if not sphere:
        X = X * rng.uniform(0.5, 1.5, size=(n, 1))
    Q, K, V = _qkv(rng, d)
    beta = 1.7
    model = Model(
        beta=beta,
        Q=Q,
        K=K,
        V=V,
        geometry=("sphere" if sphere else "euclidean"),
        **variant,
    )
    kw = {k: v for k, v in variant.items()}
    A_ref = ref.attention(X, beta, Q, K, **kw)
    np.testing.assert_allclose(model.attention(X), A_ref, rtol=1e-10, atol=1e-12)
    v_ref = ref.velocity(X, beta, Q, K, V, sphere=sphere, **kw)
    np.testing.assert_allclose(model.velocity(X), v_ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("normalization", ["sa", "usa"])
def test_identity_model_matches_double_loop_and_tiling(normalization, rng):
    # n larger than the tile so the symmetric block-tiled path runs with several tiles
    n, d = 37, 4
    X = sample_sphere(n, d, rng=rng)
    beta = 2.5
    v_ref = ref.velocity(X, beta, normalization=normalization)
    for block in (5, 8, 64):
        v = Model(beta=beta, normalization=normalization, block=block).velocity(X)
        np.testing.assert_allclose(v, v_ref, rtol=1e-11, atol=1e-13)


def test_symmetric_psd_qk_uses_tiles_and_matches(rng):
    n, d = 41, 3
    X = sample_sphere(n, d, rng=rng)
    M = rng.standard_normal((d, d))
    Q = M
    K = M  # Q^T K = M^T M is symmetric PSD
    V = rng.standard_normal((d, d))
    v_ref = ref.velocity(X, 1.3, Q, K, V)
    v = Model(beta=1.3, Q=Q, K=K, V=V, block=6).velocity(X)
    np.testing.assert_allclose(v, v_ref, rtol=1e-10, atol=1e-12)


def test_multihead_matches_sum_of_heads(rng):
    n, d = 6, 4
    X = sample_sphere(n, d, rng=rng)
    heads = [_qkv(rng, d, m=2), _qkv(rng, d, m=3)]
    model = Model(beta=0.8, heads=heads)
    v_ref = ref.velocity(X, 0.8, heads=heads)
    np.testing.assert_allclose(model.velocity(X), v_ref, rtol=1e-10, atol=1e-12)
    A = model.attention(X)
    assert A.shape == (2, n, n)
    np.testing.assert_allclose(A.sum(axis=-1), 1.0, rtol=1e-12)


def test_ensemble_equals_loop_over_members(rng):
    B, n, d = 5, 9, 3
    X = sample_sphere(n, d, rng=rng, batch=B)
    betas = np.linspace(0.0, 4.0, B)
    for kw in (
        dict(),
        dict(normalization="usa"),
        dict(kernel="l2"),
        dict(mask="causal"),
    ):
        vb = Model(beta=betas, **kw).velocity(X)
        for b in range(B):
            np.testing.assert_allclose(
                vb[b], Model(beta=betas[b], **kw).velocity(X[b]), rtol=1e-12, atol=1e-14
            )
    # large ensembles with n above the tile size take the per-member tiled path
    X = sample_sphere(40, 3, rng=rng, batch=3)
    vb = Model(beta=1.0, block=16).velocity(X)
    for b in range(3):
        np.testing.assert_allclose(
            vb[b], ref.velocity(X[b], 1.0), rtol=1e-11, atol=1e-13
        )


def test_permutation_equivariance(rng):
    n, d = 12, 3
    X = sample_sphere(n, d, rng=rng)
    perm = rng.permutation(n)
    Q, K, V = _qkv(rng, d)
    for kw in (
        dict(),
        dict(normalization="usa"),
        dict(Q=Q, K=K, V=V),
        dict(kernel="l2"),
        dict(kernel="sinkhorn"),
        dict(kernel="sigmoid", normalization="usa"),
    ):
        m = Model(beta=2.0, **kw)
        np.testing.assert_allclose(
            m.velocity(X[perm]), m.velocity(X)[perm], rtol=1e-10, atol=1e-13
        )
        A = m.attention(X)
        np.testing.assert_allclose(
            m.attention(X[perm]), A[np.ix_(perm, perm)], rtol=1e-9, atol=1e-13
        )


def test_velocity_is_tangent_and_rd_is_not_projected(rng):
    X = sample_sphere(20, 5, rng=rng)
    v = Model(beta=3.0).velocity(X)
    assert np.max(np.abs(np.sum(v * X, axis=1))) < 1e-14
    w = Model(beta=3.0, geometry="euclidean").velocity(X)
    assert np.max(np.abs(np.sum(w * X, axis=1))) > 1e-3
    np.testing.assert_allclose(al.project(X, w), v, atol=1e-14)


def test_sinkhorn_doubly_stochastic_and_one_iteration_is_softmax(rng):
    X = sample_sphere(30, 3, rng=rng)
    A = Model(beta=2.0, kernel="sinkhorn", sinkhorn_tol=1e-12).attention(X)
    assert np.max(np.abs(A.sum(axis=1) - 1)) < 1e-10
    assert np.max(np.abs(A.sum(axis=0) - 1)) < 1e-10
    one = Model(beta=2.0, kernel="sinkhorn", sinkhorn_max_iter=1)
    with pytest.warns(RuntimeWarning, match="Sinkhorn stopped"):
        A1 = one.attention(X)
    np.testing.assert_allclose(A1, Model(beta=2.0).attention(X), rtol=1e-12)
    r = al.sinkhorn(2.0 * X @ X.T, tol=1e-12, max_iter=1)
    assert r.n_iter == 1 and not r.converged
    r = al.sinkhorn(2.0 * X @ X.T, tol=1e-12)
    assert r.converged and r.error <= 1e-12 and r.n_iter > 1


def test_sinkhorn_log_domain_survives_large_logits():
    rng = np.random.default_rng(0)
    X = sample_sphere(10, 3, rng=rng)
    # exp(800) overflows: plain Sinkhorn iterations would produce inf/nan
    r = al.sinkhorn(800.0 * X @ X.T, tol=1e-10, max_iter=100000)
    assert np.all(np.isfinite(r.matrix))
    assert np.max(np.abs(r.matrix.sum(axis=0) - 1)) < 1e-8


def test_causal_attention_is_lower_triangular(rng):
    X = sample_sphere(9, 3, rng=rng)
    for norm in ("sa", "usa"):
        A = Model(beta=1.0, mask="causal", normalization=norm).attention(X)
        assert np.all(np.triu(A, 1) == 0)
        assert np.all(A[np.tril_indices(9)] > 0)
    A = Model(beta=1.0, mask="causal").attention(X)
    np.testing.assert_allclose(A.sum(axis=1), 1.0, rtol=1e-13)
    np.testing.assert_allclose(A[0], np.eye(9)[0])
    # the first token attends only to itself: its velocity V x_1 projected is zero
    assert np.allclose(Model(beta=1.0, mask="causal").velocity(X)[0], 0.0, atol=1e-15)


def test_large_beta_does_not_overflow(rng):
    X = sample_sphere(300, 3, rng=rng)
    for beta in (1e2, 1e3):
        for block in (64, 512):
            v = Model(beta=beta, block=block).velocity(X)
            assert np.all(np.isfinite(v))
        A = Model(beta=beta).attention(X)
        assert np.all(np.isfinite(A))
        np.testing.assert_allclose(A.sum(axis=1), 1.0, rtol=1e-12)
    # at beta = 1e3 each token sees essentially itself and its nearest neighbours
    v1 = Model(beta=1e3, block=64).velocity(X)
    v2 = Model(beta=1e3, block=1000).velocity(X)
    np.testing.assert_allclose(v1, v2, rtol=1e-10, atol=1e-13)
    Q = np.diag([1.0, 2.0, 0.5])
    K = np.eye(3)
    assert np.all(np.isfinite(Model(beta=1e3, Q=Q, K=K).velocity(X)))
    assert np.all(np.isfinite(Model(beta=1e3, kernel="l2").velocity(X)))
    assert np.all(np.isfinite(Model(beta=1e3, geometry="euclidean").velocity(3.0 * X)))
    with pytest.raises(ValueError, match="USA"):
        Model(beta=1e3, normalization="usa").velocity(X)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dtype_is_preserved(dtype, rng):
    X = sample_sphere(50, 3, rng=rng).astype(dtype)
    for kw in (dict(), dict(kernel="l2"), dict(block=8), dict(mask="causal")):
        assert Model(beta=1.0, **kw).velocity(X).dtype == dtype
    traj = al.simulate(Model(beta=1.0), X, t_final=0.5, dt=0.1)
    assert traj.final.dtype == dtype
    assert sample_sphere(4, 3, rng=0).dtype == np.float64


def _clustered(rng, n=32, d=3):
    # two tight clusters: the regime where plain Sinkhorn iterations crawl
    c = al.retract(rng.standard_normal((2, d)))
    X = c[rng.integers(0, 2, n)] + 1e-3 * rng.standard_normal((n, d))
    return al.retract(X)


def test_sinkhorn_newton_steps_match_plain_iterations(rng, monkeypatch):
    import attnlib._sinkhorn as solver

    L = 4.0 * (lambda X: X @ X.T)(_clustered(rng))
    fast = al.sinkhorn(L, tol=1e-13, max_iter=1000)
    assert fast.converged and fast.n_iter < 60
    monkeypatch.setattr(solver, "_NEWTON_MAX_N", 0)  # plain iterations only
    slow = al.sinkhorn(L, tol=1e-13, max_iter=200_000)
    assert slow.converged and slow.n_iter > 10 * fast.n_iter
    np.testing.assert_allclose(fast.matrix, slow.matrix, atol=1e-12)


def test_sinkhorn_warm_start_along_a_trajectory(rng):
    X0 = sample_sphere(24, 3, rng=rng)
    m = Model(beta=4.0, kernel="sinkhorn", sinkhorn_tol=1e-11)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no solve may stop at the cap
        traj = al.simulate(m, X0, times=[0.0, 5.0, 15.0], dt=0.05)
    assert al.cluster_count(traj.final) < 24
    cold = Model(beta=4.0, kernel="sinkhorn", sinkhorn_warm_start=False)
    for X in traj.states:
        np.testing.assert_allclose(m.attention(X), cold.attention(X), atol=1e-10)
    r = al.sinkhorn(4.0 * X0 @ X0.T, tol=1e-12)
    again = al.sinkhorn(4.0 * X0 @ X0.T, tol=1e-12, init=r.log_scaling)
    assert again.n_iter == 1 and again.converged
    with pytest.raises(ValueError, match="init"):
        al.sinkhorn(np.zeros((3, 3)), init=np.zeros(4))


# ------------------------------------------- weighted atoms: the same family
def _frozen_measure_velocity(X, w, beta, norm):
    """The velocity of the MeasureModel class before it became Model(weights=...),
    frozen: weights w_j e^{beta <x_i, x_j>} with the row maximum of the logits
    subtracted, projected, then divided by the weighted row sum (SA) or scaled back
    (USA, the masses carrying the 1/n)."""
    L = beta * X @ X.T
    m = L.max(axis=1, keepdims=True)
    W = np.exp(L - m) * w[None, :]
    F = W @ X
    F -= np.sum(F * X, axis=1, keepdims=True) * X
    return F / W.sum(axis=1, keepdims=True) if norm == "sa" else F * np.exp(m)


@pytest.mark.parametrize("n", [9, 300])  # 300 > block: two row blocks
@pytest.mark.parametrize("norm", ["sa", "usa"])
def test_measure_model_is_the_old_measure_model(norm, n):
    from attnlib.attention import MeasureModel

    rng = np.random.default_rng(n)
    X = sample_sphere(n, 3, rng=n)
    w = rng.uniform(0, 1, n) / n
    w[rng.integers(0, n, 3)] = 0.0  # atoms without mass are moved, not moving others
    for beta in (0.5, 3.0):
        m = MeasureModel(w, beta, normalization=norm)
        assert isinstance(m, Model) and np.array_equal(m.weights, w)
        want = _frozen_measure_velocity(X, w, beta, norm)
        np.testing.assert_allclose(m.velocity(X), want, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(
            measure_field(X, X, w, beta=beta, normalization=norm),
            want,
            rtol=1e-12,
            atol=1e-15,
        )
    # the empirical measure is the model without weights
    u = np.full(n, 1 / n)
    np.testing.assert_allclose(
        MeasureModel(u, 2.0, normalization=norm).velocity(X),
        Model(2.0, normalization=norm).velocity(X),
        rtol=1e-13,
        atol=1e-15,
    )


def test_weighted_attention_matrix_and_validation():
    X = sample_sphere(5, 3, rng=2)
    w = np.array([0.1, 0.0, 0.4, 0.2, 0.3])
    A = Model(1.5, weights=w).attention(X)
    E = np.exp(1.5 * X @ X.T) * w
    np.testing.assert_allclose(A, E / E.sum(axis=1, keepdims=True), rtol=1e-13)
    with pytest.raises(ValueError, match="one row per weight"):
        Model(weights=w).velocity(X[:4])
    with pytest.raises(ValueError, match="positive sum"):
        Model(weights=[0.0, -1.0, 2.0])
    with pytest.raises(ValueError, match="weights .* without a mask"):
        Model(weights=w, mask="causal")
    with pytest.raises(ValueError, match="kernel='softmax'"):
        Model(weights=w, kernel="sigmoid")
    with pytest.raises(ValueError, match="weights must be a 1-D"):
        Model(weights=np.ones((2, 2)))
