"""The attention kernel (attnlib._kernel) against double loops over the tokens."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit

from attnlib import _kernel as K
from attnlib import sample_sphere


def naive_field(
    X,
    beta,
    A=None,
    V=None,
    *,
    norm="sa",
    kind="softmax",
    causal=False,
    bias=None,
    Y=None,
    w=None,
):
    """sum_j w_j f(L_ij) V y_j / N_i by loops, L_ij = beta <x_i, A y_j> + bias_ij."""
    Y = X if Y is None else Y
    n, k = X.shape
    m = Y.shape[0]
    A = np.eye(k) if A is None else A
    V = np.eye(k) if V is None else V
    usa_den = m if w is None else 1.0  # USA: 1/n for tokens, the weights for atoms
    w = np.ones(m) if w is None else w
    out = np.zeros((n, V.shape[0]))
    for i in range(n):
        num = np.zeros(V.shape[0])
        den = 0.0
        for j in range(m):
            if causal and j > i:
                continue
            L = beta * X[i] @ A @ Y[j] + (0.0 if bias is None else bias(i, j))
            f = np.exp(L) if kind == "softmax" else expit(L)
            num += w[j] * f * (V @ Y[j])
            den += w[j] * f
        out[i] = num / den if norm == "sa" else num / usa_den
    return out


def _mats(rng, k, sym=False):
    A = rng.standard_normal((k, k)) / np.sqrt(k)
    if sym:
        A = A @ A.T
    return A, rng.standard_normal((k, k)) / np.sqrt(k)


@pytest.mark.parametrize("norm", ["sa", "usa"])
@pytest.mark.parametrize("block", [4, 256])
def test_softmax_field_matches_loops(rng, norm, block):
    X = sample_sphere(11, 3, rng=rng)
    A, V = _mats(rng, 3)
    for a, v in ((None, None), (A, None), (None, V), (A, V)):
        got = K.softmax_field(X, 1.7, a, v, normalization=norm, block=block)
        np.testing.assert_allclose(
            got, naive_field(X, 1.7, a, v, norm=norm), rtol=1e-12, atol=1e-14
        )


@pytest.mark.parametrize("norm", ["sa", "usa"])
def test_symmetric_tiles_match_rowwise(rng, norm):
    X = sample_sphere(70, 4, rng=rng)
    A, V = _mats(rng, 4, sym=True)
    for a in (None, A):
        want = naive_field(X, 2.5, a, V, norm=norm)
        for block in (8, 16, 70, 256):
            got = K.softmax_field(
                X, 2.5, a, V, normalization=norm, symmetric=True, block=block
            )
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def test_ensemble_members_have_their_own_beta_A_V(rng):
    B = 4
    X = sample_sphere(9, 3, rng=rng, batch=B)
    beta = np.array([0.0, 0.5, 2.0, 7.0])
    A = np.stack([_mats(rng, 3)[0] for _ in range(B)])
    V = np.stack([_mats(rng, 3)[1] for _ in range(B)])
    for norm in ("sa", "usa"):
        for block in (3, 256):
            got = K.softmax_field(X, beta, A, V, normalization=norm, block=block)
            for b in range(B):
                np.testing.assert_allclose(
                    got[b],
                    naive_field(X[b], beta[b], A[b], V[b], norm=norm),
                    rtol=1e-12,
                    atol=1e-14,
                )
        got = K.softmax_field(X, beta, normalization=norm, symmetric=True, block=4)
        for b in range(B):
            np.testing.assert_allclose(
                got[b], naive_field(X[b], beta[b], norm=norm), rtol=1e-12, atol=1e-14
            )


@pytest.mark.parametrize("norm", ["sa", "usa"])
@pytest.mark.parametrize("kind", ["softmax", "sigmoid"])
def test_mask_bias_and_sigmoid(rng, norm, kind):
    X = sample_sphere(8, 3, rng=rng)
    A, _ = _mats(rng, 3)
    lam = 0.3

    def alibi(rows, n):
        i = np.arange(n)[rows][:, None]
        return -lam * np.abs(i - np.arange(n)[None, :])

    for causal in (False, True):
        got = K.softmax_field(
            X,
            1.3,
            A,
            normalization=norm,
            kind=kind,
            mask="causal" if causal else None,
            bias=alibi,
            block=3,
        )
        want = naive_field(
            X,
            1.3,
            A,
            norm=norm,
            kind=kind,
            causal=causal,
            bias=lambda i, j: -lam * abs(i - j),
        )
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def test_causal_first_token_sees_only_itself(rng):
    X = sample_sphere(6, 3, rng=rng)
    F = K.softmax_field(X, 3.0, mask="causal")
    np.testing.assert_allclose(F[0], X[0], rtol=1e-15)


def test_measure_field_of_the_empirical_measure_is_the_particle_field(rng):
    X = sample_sphere(13, 3, rng=rng)
    A, V = _mats(rng, 3)
    w = np.full(13, 1 / 13)
    for norm in ("sa", "usa"):
        np.testing.assert_allclose(
            K.measure_field(X, X, w, 1.4, A, V, normalization=norm, block=5),
            K.softmax_field(X, 1.4, A, V, normalization=norm),
            rtol=1e-12,
            atol=1e-14,
        )


def test_measure_field_at_points_with_weights_and_shift(rng):
    P = sample_sphere(7, 3, rng=rng)
    Y = sample_sphere(5, 3, rng=rng)
    w = rng.uniform(0.1, 1.0, 5)
    w /= w.sum()
    A, V = _mats(rng, 3, sym=True)
    for norm in ("sa", "usa"):
        want = naive_field(P, 2.0, A, V, norm=norm, Y=Y, w=w)
        got = K.measure_field(P, Y, w, 2.0, A, V, normalization=norm)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
        shift = 2.0 * np.linalg.norm(A, 2)  # a bound of the logits of unit vectors
        got = K.measure_field(P, Y, w, 2.0, A, V, normalization=norm, shift=shift)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def test_symmetric_field_declines_a_spread_beyond_the_dtype(rng):
    X = sample_sphere(300, 3, rng=rng)
    X[:10] *= 40.0  # c_i = beta |x_i|^2 / 2 spans 800 > log_max(float64)
    assert K.symmetric_field(X, X, 1.0, None, "sa", 64) is None
    # the general evaluation is finite there
    assert np.all(np.isfinite(K.softmax_field(X, 1.0, symmetric=True, block=64)))


def test_usa_overflow_is_a_clear_error(rng):
    X = sample_sphere(5, 3, rng=rng)
    with pytest.raises(ValueError, match="USA velocity exceeds the float64 range"):
        K.softmax_field(X, 800.0, normalization="usa")


def test_attention_weights_rows():
    L = np.array([[0.0, 1.0, 2.0], [5.0, -3.0, 0.5]])
    W, s = K.attention_weights(L)
    assert s is None
    np.testing.assert_allclose(W.sum(axis=1), 1.0, rtol=1e-15)
    W, s = K.attention_weights(L, "usa")
    np.testing.assert_allclose(W * np.exp(s), np.exp(L) / 3, rtol=1e-15)
    W, s = K.attention_weights(L, "usa", shift=5.0)
    np.testing.assert_allclose(W, np.exp(L - 5.0), rtol=1e-15)
    # sigmoid SA in the log domain: a huge negative bias tends to the softmax
    W, _ = K.attention_weights(L - 800.0, kind="sigmoid")
    np.testing.assert_allclose(W, K.attention_weights(L)[0], rtol=1e-12)


def naive_euler(Y, beta, h, steps, norm):
    Y = Y.copy()
    n = Y.shape[0]
    for _ in range(steps):
        W = np.exp(beta * Y @ Y.T)
        v = W @ Y / (W.sum(axis=1, keepdims=True) if norm == "sa" else n)
        v -= np.sum(v * Y, axis=1, keepdims=True) * Y
        Y = Y + h * v
        Y /= np.linalg.norm(Y, axis=1, keepdims=True)
    return Y


@pytest.mark.parametrize("norm", ["sa", "usa"])
def test_fused_identity_euler_step_is_euler_with_retraction(rng, norm):
    Y = sample_sphere(10, 4, rng=rng, batch=3)
    beta = np.array([0.0, 1.0, 3.0])
    Yx, s, b = K.scaled_state(Y, beta)
    den = K.euler_identity_steps(Yx, s, b, 0.1, 25, normalization=norm)
    assert den.shape == (3, 10)
    got = K.unscaled(Yx, s)
    for m in range(3):
        want = naive_euler(Y[m], beta[m], 0.1, 25, norm)
        np.testing.assert_allclose(got[m], want, rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(
            K.scaled_gram(Yx, b)[m], want @ want.T, rtol=1e-12, atol=1e-13
        )


def test_usa_step_that_points_backwards_keeps_its_direction(rng):
    # 1 - h c < 0: h larger than 1 / c; the retraction of (1 - h c) y + h v
    Y = sample_sphere(4, 3, rng=rng, batch=1)
    Yx, s, b = K.scaled_state(Y, np.array([2.0]))
    den = K.euler_identity_steps(Yx, s, b, 3.0, 1, normalization="usa")
    assert np.any(den < 0)
    np.testing.assert_allclose(
        K.unscaled(Yx, s)[0],
        naive_euler(Y[0], 2.0, 3.0, 1, "usa"),
        rtol=1e-12,
        atol=1e-13,
    )


def test_project_and_retract_in_place(rng):
    X = sample_sphere(6, 3, rng=rng)
    F = rng.standard_normal((6, 3))
    out = K.project(X, F)
    assert out is F
    np.testing.assert_allclose(np.sum(F * X, axis=1), 0.0, atol=1e-15)
    Y = 3.0 * rng.standard_normal((2, 5, 3))
    assert K.retract(Y) is Y
    np.testing.assert_allclose(np.linalg.norm(Y, axis=-1), 1.0, rtol=1e-15)


def test_logits_with_keys_and_members(rng):
    X = rng.standard_normal((2, 4, 3))
    Y = rng.standard_normal((2, 5, 3))
    A = rng.standard_normal((2, 3, 3))
    L = K.logits(X, np.array([1.0, 2.0]), A, Y=Y)
    assert L.shape == (2, 4, 5)
    np.testing.assert_allclose(L[1], 2.0 * X[1] @ A[1] @ Y[1].T, rtol=1e-13)


def test_the_in_place_causal_mask_is_the_mask():
    # -inf at j > i of each row block, nothing else touched (2-D and ensembles)
    n = 11
    for shape in ((n,), (3, n)):
        for rows in (slice(0, 4), slice(4, 8), slice(8, 11), slice(None)):
            r = len(range(n)[rows])
            L = np.random.default_rng(r).standard_normal((*shape[:-1], r, n))
            want = np.where(K.causal_mask(rows, n), L, -np.inf)
            K._mask_future(L, rows, n)
            assert np.array_equal(L, want)
