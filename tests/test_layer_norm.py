"""Layer normalisation as an option of the one model: ``Model(layer_norm=...)``.

``NormalisedModel`` was a class of its own until the layer-norm scheme became an
argument of :class:`attnlib.Model`. A copy of that class, frozen as it was, is kept
here: the model that replaces it must give its velocities bit for bit, on the inputs
of the normalisation tests and on random inputs (several heads, masks, kernels,
ensembles, float32), and the same trajectories through ``simulate``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import attnlib._kernel as kern
from attnlib import Model, orthonormal_frame, sample_sphere, simulate
from attnlib._validation import as_states, check_choice
from attnlib.frontiers import NormalisedModel
from attnlib.frontiers._layernorm import SCHEMES


class _FrozenNormalisedModel:
    """``NormalisedModel`` as it was (a class), for the comparison."""

    def __init__(self, scheme: str = "post", **model: Any) -> None:
        check_choice(scheme, "scheme", SCHEMES)
        if "sphere" in model or "geometry" in model:
            raise ValueError(
                "the geometry is set by the scheme: post-LN on the sphere, pre- and "
                "peri-LN in R^d"
            )
        self.scheme = scheme
        self.attention = Model(
            geometry=("sphere" if scheme == "post" else "euclidean"), **model
        )

    @property
    def sphere(self) -> bool:
        return self.scheme == "post"

    @property
    def beta(self) -> Any:
        return self.attention.beta

    @property
    def normalization(self) -> str:
        return self.attention.normalization

    def check_states(self, Y: Any, name: str = "Y") -> np.ndarray:
        Y = as_states(Y, name)
        if self.sphere:
            return self.attention.check_states(Y, name)
        r = np.linalg.norm(Y, axis=-1, keepdims=True)
        if np.any(r == 0):
            raise ValueError(f"{name} has a zero row, whose direction is not defined")
        self.attention.check_states(Y / r, name)
        return Y

    def stable_step(self) -> float:
        return self.attention.stable_step()

    def velocity(self, Y: Any) -> np.ndarray:
        return self.rhs(self.check_states(Y))

    def rhs(self, Y: np.ndarray) -> np.ndarray:
        if self.sphere:
            return self.attention.rhs(Y)
        X = kern.retract(Y.copy())
        u = self.attention.rhs(X)
        if self.scheme == "pre":
            return u
        m = np.linalg.norm(u, axis=-1, keepdims=True)
        return np.divide(u, m, out=np.zeros_like(u), where=m > 0)


def _bits(a, b):
    """Equal bit for bit: same dtype, same shape, same bytes."""
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def _states(scheme, Y):
    """``Y`` as states of the scheme: unit rows for post-LN."""
    return Y / np.linalg.norm(Y, axis=-1, keepdims=True) if scheme == "post" else Y


_RNG = np.random.default_rng(20261207)
_M = _RNG.standard_normal((4, 4))

# the model arguments of the comparison: the normalisation tests' and more
OPTIONS = {
    "plain": {"beta": 2.0},
    "usa": {"beta": 1.5, "normalization": "usa"},
    "beta 0": {"beta": 0.0},
    "QKV": {"beta": 1.0, "Q": _M, "K": np.eye(4), "V": -_M.T @ _M / 4},
    "heads": {"beta": 0.7, "heads": [(None, None, None), (_M, _M, _M.T)]},
    "causal alibi": {"beta": 3.0, "mask": "causal", "slope": 0.4},
    "positional": {
        "beta": 1.0,
        "mask": "causal",
        "normalization": "positional",
        "slope": 0.3,
    },
    "l2": {"beta": 2.0, "kernel": "l2"},
    "sigmoid": {"beta": 2.0, "kernel": "sigmoid", "bias": -1.0},
    "sinkhorn": {"beta": 1.0, "kernel": "sinkhorn", "sinkhorn_warm_start": False},
    "hardmax": {"kernel": "hardmax"},
    "small blocks": {"beta": 4.0, "block": 3},
}


def _inputs():
    """The normalisation tests' states and random ones, in dimension 4."""
    rng = np.random.default_rng(7)
    return {
        "frame": orthonormal_frame(4, 4),
        "2 frame": 2.0 * orthonormal_frame(4, 4),
        "3 sphere": 3.0 * sample_sphere(7, 4, rng=1),
        "gaussian": 4.0 * rng.standard_normal((9, 4)),
        "small": 1e-3 * rng.standard_normal((5, 4)),
        "float32": rng.standard_normal((6, 4)).astype(np.float32),
        "one token": rng.standard_normal((1, 4)),
        "equal tokens": np.tile(rng.standard_normal(4), (3, 1)),
    }


@pytest.mark.parametrize("option", sorted(OPTIONS))
@pytest.mark.parametrize("scheme", SCHEMES)
def test_velocities_are_those_of_the_former_class_bit_for_bit(scheme, option):
    new = NormalisedModel(scheme, **OPTIONS[option])
    old = _FrozenNormalisedModel(scheme, **OPTIONS[option])
    assert isinstance(new, Model) and new.layer_norm == scheme
    assert new.sphere is old.sphere and new.stable_step() == old.stable_step()
    for name, Y in _inputs().items():
        Y = _states(scheme, Y)
        if option == "sinkhorn" and Y.dtype == np.float32:
            continue  # the tolerance 1e-12 is below float32's resolution
        want = old.velocity(Y)
        got = new.velocity(Y)
        assert _bits(got, want), (name, np.max(np.abs(got - want)))
        assert _bits(new.rhs(Y), old.rhs(Y)), name
        assert _bits(new.check_states(Y, "Y"), old.check_states(Y, "Y")), name


@pytest.mark.parametrize("scheme", SCHEMES)
def test_ensembles_are_those_of_the_former_class_bit_for_bit(scheme):
    rng = np.random.default_rng(11)
    Y = _states(scheme, 2.0 * rng.standard_normal((3, 8, 5)))
    for kw in (
        {"beta": [0.5, 2.0, 8.0]},
        {"beta": 1.0, "normalization": "usa"},
        {"beta": np.array([1.0, 0.0, 3.0]), "mask": "causal", "block": 2},
    ):
        new, old = NormalisedModel(scheme, **kw), _FrozenNormalisedModel(scheme, **kw)
        assert _bits(new.velocity(Y), old.velocity(Y)), kw


@pytest.mark.parametrize("method", ["euler", "heun", "rk4"])
@pytest.mark.parametrize("scheme", SCHEMES)
def test_trajectories_are_those_of_the_former_class_bit_for_bit(scheme, method):
    rng = np.random.default_rng(3)
    for Y0, kw in (
        (_states(scheme, 2.0 * rng.standard_normal((6, 3))), {"beta": 1.5}),
        (
            2.0 * orthonormal_frame(5, 5)
            if scheme != "post"
            else orthonormal_frame(5, 5),
            {"beta": 1.5, "normalization": "usa"},
        ),
        (_states(scheme, rng.standard_normal((2, 6, 3))), {"beta": [1.0, 4.0]}),
    ):
        a = simulate(
            NormalisedModel(scheme, **kw), Y0, t_final=2.0, dt=0.1, method=method
        )
        b = simulate(
            _FrozenNormalisedModel(scheme, **kw), Y0, t_final=2.0, dt=0.1, method=method
        )
        assert _bits(a.states, b.states) and a.n_steps == b.n_steps


def test_the_comparison_can_fail():
    # the frozen class is not the model of another scheme, nor of another beta
    Y = 2.0 * sample_sphere(6, 3, rng=0)
    old = _FrozenNormalisedModel("peri", beta=1.0)
    assert not _bits(NormalisedModel("pre", beta=1.0).velocity(Y), old.velocity(Y))
    assert not _bits(
        NormalisedModel("peri", beta=1.0 + 1e-15).velocity(Y), old.velocity(Y)
    )


def test_the_model_is_written_with_layer_norm():
    Y = 3.0 * sample_sphere(7, 3, rng=1)
    X = Y / 3.0
    for scheme in SCHEMES:
        m = Model(beta=2.0, layer_norm=scheme)
        assert repr(m) == repr(NormalisedModel(scheme, beta=2.0))
        assert m.sphere is (scheme == "post")
        assert m.geometry.name == ("sphere" if scheme == "post" else "euclidean")
    assert Model().layer_norm is None and Model().sphere
    assert Model(layer_norm="post").velocity(X).tobytes() == (
        Model().velocity(X).tobytes()
    )
    # pre-LN: the R^d field of the directions; peri-LN: that field normalised
    u = Model(beta=2.0, geometry="euclidean").velocity(X)
    assert np.allclose(Model(beta=2.0, layer_norm="pre").velocity(Y), u, atol=1e-14)
    v = Model(beta=2.0, layer_norm="peri").velocity(Y)
    assert np.allclose(v, u / np.linalg.norm(u, axis=1, keepdims=True), atol=1e-14)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0)
    # the attention matrix is that of the normalised tokens
    A = Model(beta=2.0, layer_norm="pre").attention(Y)
    assert np.allclose(A, Model(beta=2.0).attention(X), atol=1e-14)
    assert not np.allclose(A, Model(beta=2.0, geometry="euclidean").attention(Y))
    assert np.allclose(A.sum(axis=1), 1.0)


def test_peri_ln_of_a_zero_update_is_zero():
    # two antipodal tokens with V = 0 on one head: u = 0, no division by zero
    Y = np.array([[2.0, 0.0], [-1.0, 0.0]])
    v = Model(V=np.zeros((2, 2)), layer_norm="peri").velocity(Y)
    assert np.array_equal(v, np.zeros_like(Y))


def test_invalid_combinations_are_refused():
    with pytest.raises(ValueError, match="layer_norm must be one of"):
        Model(layer_norm="mid")
    for scheme, other in (("pre", "sphere"), ("peri", "sphere"), ("post", "euclidean")):
        with pytest.raises(ValueError, match="geometry must be the one layer_norm"):
            Model(layer_norm=scheme, geometry=other)
    with pytest.raises(
        ValueError, match="layer_norm='post' is not defined with weights"
    ):
        Model(layer_norm="post", weights=np.full(3, 1 / 3))
    with pytest.raises(ValueError, match="layer_norm='pre' is not defined with consen"):
        Model(layer_norm="pre", consensus=True)
    with pytest.raises(ValueError, match="zero row"):
        Model(layer_norm="peri").velocity(np.array([[1.0, 0.0], [0.0, 0.0]]))
    with pytest.raises(ValueError, match="zero row"):
        Model(layer_norm="pre").attention(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="unit norm"):
        Model(layer_norm="post").velocity(2 * np.eye(3))
    with pytest.raises(ValueError, match="geometry is set by the scheme"):
        NormalisedModel("pre", geometry="euclidean")
    with pytest.raises(ValueError, match="scheme must be one of"):
        NormalisedModel("mid")


def test_the_former_scheme_attribute_warns_and_names_layer_norm():
    m = NormalisedModel("peri", beta=1.0)
    with pytest.warns(
        DeprecationWarning, match=r"scheme is deprecated .* Model\.layer_norm"
    ):
        assert m.scheme == "peri"
    # the attributes that every model has read as they did
    assert m.beta == 1.0 and m.normalization == "sa" and m.sphere is False


@pytest.mark.parametrize("scheme", ["pre", "peri"])
def test_the_gaussian_equations_refuse_a_layer_norm_model(scheme):
    from attnlib.gaussian import gaussian_rhs

    with pytest.raises(ValueError, match="model.layer_norm must be None"):
        gaussian_rhs(Model(layer_norm=scheme), [0.0, 0.0], np.eye(2))


@pytest.mark.parametrize("scheme", ["post", "pre", "peri"])
def test_a_layer_norm_model_is_replaced_with_its_own_geometry(scheme):
    # dataclasses.replace passes the geometry the scheme set back to the constructor
    import dataclasses

    m = Model(beta=1.0, layer_norm=scheme)
    m2 = dataclasses.replace(m, beta=2.0)
    assert (m2.layer_norm, m2.beta, m2.geometry.name) == (scheme, 2.0, m.geometry.name)
    assert Model(layer_norm=scheme, geometry=m.geometry.name).geometry == m.geometry
