import numpy as np
import pytest

import attnlib as al


def _cluster(center, k, spread, rng):
    pts = center + spread * rng.standard_normal((k, center.size))
    return al.retract(pts)


def test_cluster_count_on_constructed_configurations(rng):
    e = np.eye(3)
    X = np.vstack(
        [
            _cluster(e[0], 5, 1e-4, rng),
            _cluster(e[1], 3, 1e-4, rng),
            _cluster(-e[0], 4, 1e-4, rng),
        ]
    )
    assert al.cluster_count(X, 1e-3) == 3
    lab = al.cluster_labels(X, 1e-3)
    np.testing.assert_array_equal(lab, [0] * 5 + [1] * 3 + [2] * 4)
    # one point alone is a cluster; identical points are one cluster
    assert al.cluster_count(np.tile(e[2], (7, 1))) == 1
    assert al.cluster_count(e) == 3
    # ensembles
    B = np.stack([X, np.tile(e[0], (12, 1))])
    np.testing.assert_array_equal(al.cluster_count(B, 1e-3), [3, 1])


def test_chain_is_one_cluster_but_not_all_within():
    # points 0.01 rad apart along a great circle: neighbours linked, ends far apart
    th = np.arange(50) * 0.01
    X = np.stack([np.cos(th), np.sin(th)], axis=1)
    assert al.cluster_count(X, delta=1e-3) == 1
    assert not al.all_within(X, delta=1e-3)
    assert al.all_within(X[:3], delta=1e-3)


def test_pair_fraction():
    e = np.eye(2)
    X = np.array([e[0], e[0], e[0], e[1]])
    assert al.pair_fraction(X, 1e-3) == pytest.approx(3 / 6)
    np.testing.assert_allclose(
        al.pair_fraction(np.stack([X, X[[0, 1, 2, 0]]]), 1e-3), [0.5, 1.0]
    )
    G = al.gram(X)
    np.testing.assert_allclose(G, G.T)
    np.testing.assert_allclose(np.diag(G), 1.0)


def test_sample_sphere_is_uniform(rng):
    X = al.sample_sphere(20000, 3, rng=rng)
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0, atol=1e-15)
    # mean ~ 0 and second moment ~ I/3 (Archimedes: z uniform on [-1, 1])
    assert np.max(np.abs(X.mean(axis=0))) < 4 / np.sqrt(20000)
    np.testing.assert_allclose(X.T @ X / 20000, np.eye(3) / 3, atol=0.015)
    frame = al.orthonormal_frame(4, 6, rng=rng)
    np.testing.assert_allclose(frame @ frame.T, np.eye(4), atol=1e-14)
