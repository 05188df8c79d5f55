"""Hardmax dynamics against loops, closed forms and the softmax limit."""

import numpy as np
import pytest

from attnlib import Model, sample_sphere, simulate
from attnlib.frontiers import Hardmax, hardmax_weights


def _naive_weights(X, A, tol=1e-12):
    n = X.shape[0]
    H = np.zeros((n, n))
    for i in range(n):
        s = np.array([X[i] @ A @ X[j] for j in range(n)])
        scale = max(1.0, np.max(np.abs(s)))
        J = [j for j in range(n) if s[j] >= s.max() - tol * scale]
        for j in J:
            H[i, j] = 1.0 / len(J)
    return H


@pytest.mark.parametrize("seed", range(3))
def test_weights_match_loop(seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((9, 4))
    Q, K = rng.standard_normal((2, 4, 4))
    H = hardmax_weights(X, Q=Q, K=K)
    assert np.allclose(H, _naive_weights(X, Q.T @ K))
    assert np.allclose(H.sum(axis=1), 1.0)


def test_ties_split_evenly_and_batches():
    X = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 0.0]])
    H = hardmax_weights(X, queries=np.array([[0.0, 1.0]]))
    assert np.allclose(H, [[1 / 3, 1 / 3, 1 / 3]])
    XB = np.stack([X, X[::-1]])
    HB = hardmax_weights(XB)
    assert HB.shape == (2, 3, 3)
    assert np.allclose(HB[1], hardmax_weights(X[::-1]))


@pytest.mark.parametrize("sphere", [True, False])
def test_velocity_matches_loop(sphere):
    rng = np.random.default_rng(3)
    X = sample_sphere(7, 3, rng=4) if sphere else rng.standard_normal((7, 3))
    Q, K, V = rng.standard_normal((3, 3, 3))
    v = Hardmax(Q=Q, K=K, V=V, geometry=("sphere" if sphere else "euclidean")).velocity(
        X
    )
    H = _naive_weights(X, Q.T @ K)
    ref = np.array([sum(H[i, j] * V @ X[j] for j in range(7)) for i in range(7)])
    if sphere:
        ref = np.array([r - (r @ x) * x for r, x in zip(ref, X)])
    assert np.allclose(v, ref)


def test_identity_hardmax_on_sphere_is_frozen():
    # with Q = K = I every token is its own maximiser on the sphere
    X = sample_sphere(20, 3, rng=0)
    assert np.allclose(Hardmax().velocity(X), 0.0)


def test_voronoi_straight_lines_to_the_vertices():
    # vertices on the unit circle, interior points: each interior token runs on a
    # straight line to the vertex of its cell, z(t) = v + e^{-t}(z(0) - v)
    ang = np.array([0.3, 1.7, 2.9, 4.1, 5.4])
    verts = np.c_[np.cos(ang), np.sin(ang)]
    rng = np.random.default_rng(1)
    inner = 0.4 * rng.uniform(-1, 1, (12, 2))
    Z0 = np.vstack([verts, inner])
    cell = np.argmax(inner @ verts.T, axis=1)
    tr = simulate(
        Hardmax(geometry="euclidean", consensus=True),
        Z0,
        times=[0.0, 0.5, 2.0],
        dt=0.01,
    )
    for k, t in enumerate(tr.times):
        exact = verts[cell] + np.exp(-t) * (inner - verts[cell])
        assert np.allclose(tr.states[k, 5:], exact, atol=1e-9)
        assert np.allclose(tr.states[k, :5], verts)


def test_rescaling_identity_exact_for_hardmax():
    # z = e^{-t} x maps the R^d hardmax dynamics (V = I) onto the consensus form
    rng = np.random.default_rng(2)
    X0 = rng.standard_normal((10, 3))
    T = 1.5
    x = simulate(Hardmax(geometry="euclidean"), X0, t_final=T, dt=1e-3).final
    z = simulate(
        Hardmax(geometry="euclidean", consensus=True), X0, t_final=T, dt=1e-3
    ).final
    assert np.allclose(np.exp(-T) * x, z, atol=1e-8)


def test_non_uniqueness_at_a_tie():
    # a token on the bisector of two vertices: the even split slides it along the
    # bisector to the midpoint of the edge, while a perturbation of either sign sends
    # it to one vertex or the other
    Z = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0], [0.2, 0.2]])
    model = Hardmax(geometry="euclidean", consensus=True)
    assert np.allclose(model.velocity(Z)[4], [0.3, 0.3])
    tr = simulate(model, Z, t_final=20.0, dt=0.01)
    assert np.allclose(tr.final[4], [0.5, 0.5], atol=1e-6)
    ends = []
    for eps in (1e-6, -1e-6):
        kick = np.zeros_like(Z)
        kick[4, 0] = eps
        tr = simulate(model, Z + kick, t_final=20.0, dt=0.01)
        ends.append(tr.final[4])
    assert np.allclose(ends[0], [1, 0], atol=1e-6)
    assert np.allclose(ends[1], [0, 1], atol=1e-6)


@pytest.mark.parametrize("sphere", [True, False])
def test_softmax_field_tends_to_hardmax(sphere):
    rng = np.random.default_rng(6)
    d = 3
    X = sample_sphere(8, d, rng=7) if sphere else rng.standard_normal((8, d))
    Q, K = rng.standard_normal((2, d, d))
    hard = Hardmax(Q=Q, K=K, geometry=("sphere" if sphere else "euclidean")).velocity(X)
    S = (X @ Q.T) @ (X @ K.T).T
    top2 = np.sort(S, axis=1)[:, -2:]
    gap = float(np.min(top2[:, 1] - top2[:, 0]))  # smallest margin of a maximiser
    for c in (5.0, 20.0, 40.0):
        beta = c / gap
        soft = Model(
            beta=beta, Q=Q, K=K, geometry=("sphere" if sphere else "euclidean")
        ).velocity(X)
        err = np.max(np.abs(soft - hard))
        # each losing weight is at most e^{-beta * gap}; |V x_j| <= max |x_j|
        bound = 2 * 8 * np.exp(-c) * np.max(np.linalg.norm(X, axis=1))
        assert err <= bound


def test_validation():
    with pytest.raises(ValueError, match="consensus"):
        Hardmax(consensus=True)
    with pytest.raises(TypeError, match="geometry must be"):
        Hardmax(geometry=1)
    with pytest.raises(TypeError, match="sphere must be a bool"):
        Hardmax(sphere=1)  # the old flag, still checked
    with pytest.raises(ValueError, match="unit norm"):
        Hardmax().velocity(np.ones((3, 2)))
    with pytest.raises(ValueError, match="token dimension"):
        Hardmax(V=np.eye(3), geometry="euclidean").velocity(np.ones((2, 2)))
    with pytest.raises(ValueError, match="queries"):
        hardmax_weights(np.ones((3, 2)), queries=np.ones((3, 3)))
    with pytest.raises(ValueError, match="square"):
        Hardmax(Q=np.ones((2, 3)))
    with pytest.raises(ValueError, match="tol"):
        hardmax_weights(np.ones((3, 2)), tol=-1.0)


# ------------------------------------------- the hardmax kernel of the one model
def _frozen_hardmax_velocity(X, Q=None, K=None, V=None, sphere=True, consensus=False):
    """The velocity of the Hardmax class before it became a kernel of Model, frozen
    (scores (XQ^T)(XK^T)^T, ties within 1e-12 of the row's scale split evenly)."""
    QX = X if Q is None else X @ Q.T
    KX = X if K is None else X @ K.T
    S = QX @ np.swapaxes(KX, -1, -2)
    top = S.max(axis=-1, keepdims=True)
    scale = np.maximum(np.abs(S).max(axis=-1, keepdims=True), 1.0)
    W = (S >= top - 1e-12 * scale).astype(S.dtype)
    H = W / W.sum(axis=-1, keepdims=True)
    out = H @ (X if V is None else X @ V.T)
    if sphere:
        out -= np.sum(out * X, axis=-1, keepdims=True) * X
    elif consensus:
        out -= X
    return out


def _tied_tokens(rng, n, d, sphere):
    """Tokens with exact ties: repeated tokens, and in R^d integer grid points (many
    equal scores), on the sphere signed coordinate vectors."""
    if sphere:
        base = np.vstack([np.eye(d), -np.eye(d), sample_sphere(n, d, rng=rng)])
    else:
        base = rng.integers(-2, 3, (n, d)).astype(float)
    return base[rng.integers(0, len(base), n)]


@pytest.mark.parametrize("n", [7, 40, 300])  # 300 > block: two row blocks
@pytest.mark.parametrize("sphere", [True, False])
def test_model_hardmax_is_the_old_hardmax_exactly(sphere, n):
    rng = np.random.default_rng(n)
    d = 3
    geometry = "sphere" if sphere else "euclidean"
    cases = [{}, dict(zip("QKV", rng.standard_normal((3, d, d))))]
    if not sphere:
        cases.append({"consensus": True})
    for _ in range(3):
        X = _tied_tokens(rng, n, d, sphere)
        for kw in cases:
            got = Hardmax(geometry=geometry, **kw).velocity(X)
            want = _frozen_hardmax_velocity(X, sphere=sphere, **kw)
            np.testing.assert_array_equal(got, want)
            same = Model(kernel="hardmax", geometry=geometry, **kw).velocity(X)
            np.testing.assert_array_equal(same, want)
        # the ties are real: some row splits its weight
        assert np.any(np.sum(hardmax_weights(X) > 0, axis=1) > 1)
    # an ensemble (B, n, d) is evaluated member by member
    XB = np.stack([_tied_tokens(rng, n, d, sphere) for _ in range(2)])
    np.testing.assert_array_equal(
        Hardmax(geometry=geometry).velocity(XB),
        _frozen_hardmax_velocity(XB, sphere=sphere),
    )


def test_the_tests_inputs_give_the_old_velocities_exactly():
    Z = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0], [0.2, 0.2]])
    m = Hardmax(geometry="euclidean", consensus=True)
    want = _frozen_hardmax_velocity(Z, sphere=False, consensus=True)
    np.testing.assert_array_equal(m.velocity(Z), want)
    X = sample_sphere(20, 3, rng=0)
    np.testing.assert_array_equal(Hardmax().velocity(X), _frozen_hardmax_velocity(X))
    rng = np.random.default_rng(3)
    X = sample_sphere(7, 3, rng=4)
    Q, K, V = rng.standard_normal((3, 3, 3))
    np.testing.assert_array_equal(
        Hardmax(Q=Q, K=K, V=V).velocity(X), _frozen_hardmax_velocity(X, Q, K, V)
    )


def test_hardmax_is_a_model_with_its_options():
    m = Hardmax(geometry="euclidean", consensus=True, tol=1e-9)
    assert isinstance(m, Model) and m.kernel == "hardmax" and m.hardmax_tol == 1e-9
    assert m.consensus and not m.sphere and m.stable_step() is None
    X = _tied_tokens(np.random.default_rng(0), 9, 2, sphere=False)
    assert np.array_equal(m.attention(X), hardmax_weights(X, tol=1e-9))


def test_masks_apply_to_the_hardmax():
    # causal: token i takes the maximisers of its scores over j <= i only
    rng = np.random.default_rng(5)
    X = _tied_tokens(rng, 12, 2, sphere=False)
    v = Model(kernel="hardmax", mask="causal", geometry="euclidean").velocity(X)
    for i in range(12):
        H = hardmax_weights(X[: i + 1], queries=X[i : i + 1])
        np.testing.assert_allclose(v[i], H[0] @ X[: i + 1], rtol=0, atol=1e-15)
    A = Model(kernel="hardmax", mask="causal", geometry="euclidean").attention(X)
    assert np.allclose(np.triu(A, 1), 0.0) and np.allclose(A.sum(axis=1), 1.0)


def test_hardmax_model_validation():
    with pytest.raises(ValueError, match="normalization must be 'sa'"):
        Model(kernel="hardmax", normalization="usa")
    with pytest.raises(ValueError, match="beta has no role"):
        Model(2.0, kernel="hardmax")
    with pytest.raises(ValueError, match="consensus=True is the R\\^d dynamics"):
        Model(kernel="hardmax", consensus=True)
    with pytest.raises(ValueError, match="no V"):
        Model(kernel="hardmax", geometry="euclidean", consensus=True, V=np.eye(2))
    with pytest.raises(TypeError, match="consensus must be a bool"):
        Hardmax(geometry="euclidean", consensus=1)
    with pytest.raises(ValueError, match="hardmax_tol"):
        Model(kernel="hardmax", hardmax_tol=-1.0)
    with pytest.raises(ValueError, match="tol"):
        Hardmax(tol=-1.0)
