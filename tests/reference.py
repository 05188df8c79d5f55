"""Naive double-loop reference implementations of the attention variants.

Written directly from the formulas of [GLPR] (2.3) and of the attention variants of
[CACP], one entry at a time, with no vectorisation and no numerical tricks, for
comparison with attnlib on small cases.
"""

import math

import numpy as np


def _weight(kernel, qx, ky, beta, bias):
    if kernel in ("softmax", "sinkhorn"):
        return math.exp(beta * float(qx @ ky))
    if kernel == "l2":
        diff = qx - ky
        return math.exp(-0.5 * beta * float(diff @ diff))
    if kernel == "sigmoid":
        return 1.0 / (1.0 + math.exp(-(beta * float(qx @ ky) + bias)))
    raise ValueError(kernel)


def attention(
    X,
    beta,
    Q=None,
    K=None,
    normalization="sa",
    kernel="softmax",
    mask=None,
    bias=0.0,
    sinkhorn_iters=5000,
):
    n, d = X.shape
    Q = np.eye(d) if Q is None else Q
    K = np.eye(d) if K is None else K
    W = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            if mask == "causal" and j > i:
                continue
            W[i, j] = _weight(kernel, Q @ X[i], K @ X[j], beta, bias)
    if kernel == "sinkhorn":
        P = W.copy()
        for _ in range(sinkhorn_iters):
            for i in range(n):
                s = sum(P[i, j] for j in range(n))
                for j in range(n):
                    P[i, j] /= s
            for j in range(n):
                s = sum(P[i, j] for i in range(n))
                for i in range(n):
                    P[i, j] /= s
        for i in range(n):
            s = sum(P[i, j] for j in range(n))
            for j in range(n):
                P[i, j] /= s
        return P
    A = np.zeros((n, n))
    for i in range(n):
        Z = sum(W[i, k] for k in range(n)) if normalization == "sa" else n
        for j in range(n):
            A[i, j] = W[i, j] / Z
    return A


def velocity(X, beta, Q=None, K=None, V=None, heads=None, sphere=True, **kw):
    n, d = X.shape
    if heads is None:
        heads = [(Q, K, V)]
    out = np.zeros((n, d))
    for q, k, v in heads:
        v = np.eye(d) if v is None else v
        A = attention(X, beta, q, k, **kw)
        for i in range(n):
            for j in range(n):
                out[i] += A[i, j] * (v @ X[j])
    if sphere:
        for i in range(n):
            out[i] = out[i] - float(out[i] @ X[i]) * X[i]
    return out
