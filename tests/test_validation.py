"""Bad input raises ValueError / TypeError naming the argument."""

import numpy as np
import pytest

import attnlib as al
from attnlib import Model, sample_sphere


def test_sampling_arguments():
    with pytest.raises(ValueError, match="n must be"):
        sample_sphere(-1, 3, rng=0)
    with pytest.raises(ValueError, match="d must be"):
        sample_sphere(4, 0, rng=0)
    with pytest.raises(TypeError, match="n must be an integer"):
        sample_sphere(2.5, 3, rng=0)
    with pytest.raises(TypeError, match="rng"):
        sample_sphere(4, 3, rng="seed")
    with pytest.raises(TypeError, match="rng"):
        sample_sphere(4, 3, rng=None)
    with pytest.raises(ValueError, match="batch"):
        sample_sphere(4, 3, rng=0, batch=0)
    np.testing.assert_array_equal(
        sample_sphere(4, 3, rng=5), sample_sphere(4, 3, rng=5)
    )


def test_model_arguments():
    with pytest.raises(ValueError, match="beta"):
        Model(beta=-1.0)
    with pytest.raises(ValueError, match="beta"):
        Model(beta=np.inf)
    with pytest.raises(TypeError, match="beta"):
        Model(beta="1")
    with pytest.raises(ValueError, match="normalization"):
        Model(normalization="softmax")
    with pytest.raises(ValueError, match="kernel"):
        Model(kernel="relu")
    with pytest.raises(ValueError, match="mask"):
        Model(mask="anticausal")
    with pytest.raises(ValueError, match="normalization must be 'sa'"):
        Model(kernel="sinkhorn", normalization="usa")
    with pytest.raises(ValueError, match="Q and K"):
        Model(Q=np.ones((2, 3)), K=np.ones((3, 3)))
    with pytest.raises(ValueError, match="V must be square"):
        Model(V=np.ones((3, 2)))
    with pytest.raises(ValueError, match="inconsistent"):
        Model(Q=np.eye(3), K=np.eye(3), V=np.eye(4))
    with pytest.raises(ValueError, match="finite"):
        Model(V=np.array([[np.nan, 0], [0, 1.0]]))
    with pytest.raises(TypeError, match="Q"):
        Model(Q="identity")
    with pytest.raises(ValueError, match="Q must be a 2-D"):
        Model(Q=np.ones(3))
    with pytest.raises(ValueError, match="heads"):
        Model(heads=[])
    with pytest.raises(ValueError, match="either heads"):
        Model(heads=[(None, None, None)], V=np.eye(2))
    with pytest.raises(ValueError, match="block"):
        Model(block=0)
    with pytest.raises(TypeError, match="geometry must be"):
        Model(geometry="yes")


def test_states_arguments():
    m = Model(beta=1.0)
    X = sample_sphere(5, 3, rng=0)
    with pytest.raises(ValueError, match="unit norm"):
        m.velocity(2.0 * X)
    with pytest.raises(ValueError, match="finite"):
        m.velocity(np.where(np.eye(5, 3) > 0, np.nan, X))
    with pytest.raises(ValueError, match=r"shape \(n, d\) or \(B, n, d\)"):
        m.velocity(X[0])
    with pytest.raises(TypeError, match="X"):
        m.velocity("tokens")
    with pytest.raises(TypeError, match="X"):
        m.velocity(np.array([["a", "b"]]))
    with pytest.raises(ValueError, match="non-empty"):
        m.velocity(np.zeros((0, 3)))
    with pytest.raises(ValueError, match="dimension"):
        Model(Q=np.eye(4), K=np.eye(4)).velocity(X)
    with pytest.raises(ValueError, match="beta"):
        Model(beta=[1.0, 2.0]).velocity(X)
    with pytest.raises(ValueError, match="beta must have shape"):
        Model(beta=[1.0, 2.0]).velocity(sample_sphere(5, 3, rng=0, batch=3))
    # R^d models accept any finite points
    assert Model(geometry="euclidean").velocity(3.0 * X).shape == X.shape


def test_metric_and_energy_arguments():
    X = sample_sphere(5, 3, rng=0)
    with pytest.raises(ValueError, match="delta"):
        al.cluster_count(X, delta=-0.1)
    with pytest.raises(ValueError, match="beta must be > 0"):
        al.energy(X, beta=0.0)
    with pytest.raises(ValueError, match="unit norm"):
        al.energy(2 * X, beta=1.0)
    with pytest.raises(ValueError, match="log_energy"):
        al.energy(X, beta=1e3)
    assert np.isfinite(al.log_energy(X, beta=1e3))
    with pytest.raises(ValueError, match="level"):
        al.equiangular_time_to(1.0, beta=1.0, n=4)
    with pytest.raises(ValueError, match="n must be"):
        al.equiangular_rhs(0.5, beta=1.0, n=0)
    with pytest.raises(ValueError, match="logits"):
        al.sinkhorn(np.ones((2, 3)))
    with pytest.raises(ValueError, match="max_iter"):
        al.sinkhorn(np.ones((2, 2)), max_iter=0)
    with pytest.raises(ValueError, match="same shape"):
        al.project(np.ones((2, 3)), np.ones((3, 3)))
    with pytest.raises(ValueError, match="zero"):
        al.retract(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="n must be <= d"):
        al.orthonormal_frame(4, 3)
