"""Causal attention with ALiBi against loops, and the retention profile."""

import math

import numpy as np
import pytest

from attnlib import Model, sample_sphere, simulate
from attnlib.frontiers import (
    CausalModel,
    alibi_bias,
    positional_weights,
    renyi_centres,
    retention_estimate,
    retention_linear,
    retention_profile,
)


def _naive(X, beta, slope, A, V, norm):
    n, d = X.shape
    out = np.zeros((n, d))
    W = positional_weights(n, slope)
    for i in range(n):
        num = np.zeros(d)
        den = 0.0
        for j in range(i + 1):
            s = beta * X[i] @ A @ X[j]
            if norm == "positional":
                if j == i:
                    continue
                num += W[i, j] * np.exp(s) * (V @ X[j])
                continue
            e = np.exp(s - slope * (i - j))
            num += e * (V @ X[j])
            den += e
        v = num / den if norm == "sa" else (num / n if norm == "usa" else num)
        out[i] = v - (v @ X[i]) * X[i]
    return out


@pytest.mark.parametrize("norm", ["sa", "usa", "positional"])
def test_field_matches_loops(norm):
    rng = np.random.default_rng(0)
    X = sample_sphere(9, 3, rng=1)
    Q, K, V = rng.standard_normal((3, 3, 3))
    got = CausalModel(1.3, slope=0.4, Q=Q, K=K, V=V, normalization=norm).velocity(X)
    want = _naive(X, 1.3, 0.4, Q.T @ K, V, norm)
    assert np.allclose(got, want, rtol=1e-12, atol=1e-13)


def test_positional_model_is_the_angle_dynamics_of_the_lost_in_the_middle_code():
    # theta_j' = sum_{k<j} w_jk (-beta sin(theta_j - theta_k) e^{beta cos(...)}) at
    # beta = 1 (their field carries a factor beta)
    n, beta, lam = 16, 1.0, 1.0
    th = np.random.default_rng(2).uniform(0, 2 * np.pi, n)
    W = positional_weights(n, lam / n)
    ref = np.array(
        [
            np.dot(
                W[j, :j],
                -beta * np.sin(th[j] - th[:j]) * np.exp(beta * np.cos(th[j] - th[:j])),
            )
            for j in range(n)
        ]
    )
    X = np.c_[np.cos(th), np.sin(th)]
    v = CausalModel(beta, slope=lam / n, normalization="positional").velocity(X)
    assert np.allclose(np.sum(v * np.c_[-np.sin(th), np.cos(th)], axis=1), ref)


def test_sequential_structure():
    X = sample_sphere(12, 3, rng=3)
    m = CausalModel(2.0, slope=0.3)
    v = m.velocity(X)
    assert np.allclose(v[0], 0.0)
    # the first k tokens are a closed system
    for k in (3, 7):
        assert np.allclose(m.velocity(X[:k]), v[:k])
    tr = simulate(m, X, t_final=30.0, dt=0.05)
    assert np.allclose(tr.final[0], X[0])
    assert np.min(tr.final @ X[0]) > 1 - 1e-5  # one cluster, at the first token


def test_ensemble_beta_array():
    X = sample_sphere(6, 3, rng=4, batch=3)
    betas = np.array([0.5, 1.0, 4.0])
    v = CausalModel(betas, slope=0.2).velocity(X)
    for b in range(3):
        assert np.allclose(v[b], CausalModel(betas[b], slope=0.2).velocity(X[b]))
    with pytest.raises(ValueError, match="ensemble"):
        CausalModel(betas).velocity(X[0])


def test_weights_and_bias():
    W = positional_weights(6, 0.7)
    assert np.allclose(W[1:].sum(axis=1), 1.0) and np.allclose(np.triu(W), 0.0)
    B = alibi_bias(4, 0.5)
    assert B[3, 1] == -1.0 and np.isneginf(B[1, 3]) and B[2, 2] == 0.0
    P = alibi_bias(5, 0.5, positional=True)
    assert np.allclose(np.exp(P[3, :3]) / 5, positional_weights(5, 0.5)[3, :3])


def test_renyi_centres_matches_loop():
    X = sample_sphere(200, 2, rng=5)
    delta = 0.3
    cent = []
    for i in range(200):
        if all(np.arccos(np.clip(X[c] @ X[i], -1, 1)) > delta for c in cent):
            cent.append(i)
    assert renyi_centres(X, delta).tolist() == cent


def test_profile_series_and_discrete_limit():
    # psi_c(y) = sum_k c^{k+1} y^k / (k! (k+1)!)
    s = np.array([0.1, 0.4, 0.9])
    beta, t, lam = 1.0, 1.5, 1.0
    g = retention_profile(s, beta=beta, t=t, slope=lam, modes=3, per_mode=True)
    for m in range(1, 4):
        from scipy.special import iv

        c = m * m * iv(m, beta) / beta * t
        Y = np.log(np.expm1(lam) / np.expm1(lam * s))
        psi = sum(
            c ** (k + 1) * Y**k / (math.factorial(k) * math.factorial(k + 1))
            for k in range(60)
        )
        assert np.allclose(g[m - 1], lam * np.exp(lam * s) / np.expm1(lam) * psi)
    # n [e^{a t W}] tends to the mean-field resolvent
    errs = []
    for n in (50, 200, 800):
        L = retention_linear(n, beta=beta, t=t)
        k = (np.array([0.25, 0.5, 0.75]) * n).astype(int)
        errs.append(np.max(np.abs(L[k] - retention_profile(k / n, beta=beta, t=t))))
    assert errs[0] > errs[1] > errs[2] and errs[2] < 0.01


def test_profile_is_u_shaped():
    s = np.linspace(0.02, 0.98, 97)
    R = retention_profile(s, beta=1.0, t=2.0)
    k = int(np.argmin(R))
    assert 0 < k < s.size - 1
    assert np.all(np.diff(R[: k + 1]) < 0) and np.all(np.diff(R[k:]) > 0)


def test_estimator_is_centred_without_dynamics():
    rng = np.random.default_rng(6)
    th0 = rng.uniform(0, 2 * np.pi, (4000, 10))
    tht = rng.uniform(0, 2 * np.pi, (4000, 10))  # independent of the start
    mean, se = retention_estimate(th0, tht, control=False)
    assert np.all(np.abs(mean) < 4.5 * se)
    # no motion: the control variate cancels every sample exactly
    mean, se = retention_estimate(th0, th0)
    assert np.allclose(mean, 0.0) and np.allclose(se, 0.0)


def test_validation():
    with pytest.raises(ValueError, match="normalization"):
        CausalModel(normalization="causal")
    with pytest.raises(ValueError, match="slope"):
        CausalModel(slope=-1.0)
    with pytest.raises(ValueError, match="unit norm"):
        CausalModel().velocity(2 * np.eye(3))
    with pytest.raises(ValueError, match="s must lie"):
        retention_profile([0.0, 0.5], beta=1.0, t=1.0)
    with pytest.raises(ValueError, match="same shape"):
        retention_estimate(np.zeros((3, 4)), np.zeros((3, 5)))
    with pytest.raises(ValueError, match="delta"):
        renyi_centres(sample_sphere(3, 2, rng=0), 4.0)


# ------------------------------------------- one spelling: a causal Model
def _frozen_causal_velocity(X, beta, slope, A, V, norm):
    """The velocity of the CausalModel class before it became Model(mask="causal"),
    frozen in plain numpy: dense logits beta <x_i, A x_j> plus the ALiBi bias
    (-inf above the diagonal), or for "positional" the bias log(n w_ij) under USA
    with the first row's field zero, then the tangent projection."""
    n, d = X.shape[-2:]
    b = np.asarray(beta, dtype=float).reshape((-1, 1, 1) if np.ndim(beta) else ())
    i = np.arange(n)
    lag = i[:, None] - i[None, :]
    if norm == "positional":
        with np.errstate(divide="ignore"):
            bias = np.log(n * positional_weights(n, slope))
        bias[0, 0] = 0.0
    else:
        bias = np.where(lag >= 0, -slope * lag, -np.inf)
    L = b * (X @ (np.eye(d) if A is None else A) @ np.swapaxes(X, -1, -2)) + bias
    m = L.max(axis=-1, keepdims=True)
    W = np.exp(L - m)
    XV = X if V is None else X @ V.T
    if norm == "sa":
        F = (W / W.sum(axis=-1, keepdims=True)) @ XV
    else:
        F = (W @ XV) * np.exp(m) / n
    if norm == "positional":
        F[..., 0, :] = 0.0
    return F - np.sum(F * X, axis=-1, keepdims=True) * X


@pytest.mark.parametrize("n", [9, 300])  # 300 > block: two row blocks
@pytest.mark.parametrize("norm", ["sa", "usa", "positional"])
def test_causal_model_is_the_old_causal_model(norm, n):
    rng = np.random.default_rng(n)
    Q, K, V = rng.standard_normal((3, 3, 3))
    X = sample_sphere(n, 3, rng=n)
    XB = sample_sphere(n, 3, rng=n + 1, batch=3)
    betas = np.array([0.5, 1.3, 4.0])
    for slope in (0.0, 0.4, 3.0):
        for kw, A, Vm in (({}, None, None), ({"Q": Q, "K": K, "V": V}, Q.T @ K, V)):
            m = CausalModel(1.3, slope=slope, normalization=norm, **kw)
            same = Model(1.3, mask="causal", slope=slope, normalization=norm, **kw)
            want = _frozen_causal_velocity(X, 1.3, slope, A, Vm, norm)
            np.testing.assert_allclose(m.velocity(X), want, rtol=1e-12, atol=1e-13)
            np.testing.assert_array_equal(same.velocity(X), m.velocity(X))
            got = CausalModel(betas, slope=slope, normalization=norm, **kw).velocity(XB)
            want = _frozen_causal_velocity(XB, betas, slope, A, Vm, norm)
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)


def test_causal_model_is_a_model_and_one_spelling():
    m = CausalModel(2.0, slope=0.3, normalization="positional")
    assert isinstance(m, Model) and m.mask == "causal" and m.slope == 0.3
    assert m.sphere and m.stable_step() == Model(2.0).stable_step()
    assert np.array_equal(m.logit_bias(6), alibi_bias(6, 0.3, positional=True))
    assert Model(mask="causal").logit_bias(4) is None
    # without a slope, CausalModel and Model(mask="causal") are the same model
    X = sample_sphere(10, 3, rng=8)
    np.testing.assert_array_equal(
        CausalModel(2.0).velocity(X), Model(2.0, mask="causal").velocity(X)
    )
    # the attention matrix carries the bias and the mask
    A = CausalModel(2.0, slope=0.5).attention(X)
    S = 2.0 * X @ X.T + alibi_bias(10, 0.5)
    want = np.exp(S - S.max(axis=1, keepdims=True))
    np.testing.assert_allclose(A, want / want.sum(axis=1, keepdims=True), rtol=1e-13)
    P = m.attention(X)
    assert np.all(P[0] == 0.0) and np.allclose(np.triu(P), 0.0)


def test_alibi_applies_to_the_other_kernels():
    # sigmoid weights of the biased logits, divided by the row sum (SA)
    X = sample_sphere(7, 3, rng=9)
    v = Model(1.5, kernel="sigmoid", bias=-0.5, mask="causal", slope=0.7).velocity(X)
    S = 1.5 * X @ X.T - 0.5 + alibi_bias(7, 0.7)
    W = 1.0 / (1.0 + np.exp(-S))
    F = (W / W.sum(axis=1, keepdims=True)) @ X
    np.testing.assert_allclose(v, F - np.sum(F * X, axis=1)[:, None] * X, atol=1e-14)


def test_positional_biases_need_the_causal_mask():
    with pytest.raises(ValueError, match="use mask='causal'"):
        Model(slope=0.5)
    with pytest.raises(ValueError, match="use mask='causal'"):
        Model(normalization="positional")
    with pytest.raises(ValueError, match="kernel='softmax'"):
        Model(mask="causal", normalization="positional", kernel="l2")
    with pytest.raises(ValueError, match="slope must be 0 for kernel='hardmax'"):
        Model(kernel="hardmax", mask="causal", slope=0.5)
    with pytest.raises(ValueError, match="slope"):
        Model(mask="causal", slope=-1.0)
    with pytest.raises(ValueError, match="n must be"):
        Model(mask="causal", slope=1.0).logit_bias(0)
