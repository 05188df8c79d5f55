"""Causal attention with ALiBi against loops, and the retention profile."""

import math

import numpy as np
import pytest

from attnlib import sample_sphere, simulate
from attnlib.causal import (
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
