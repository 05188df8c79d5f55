"""Hostile inputs for every public callable of the library.

Each public function and class of ``attnlib`` (the numerical modules: not the
plotting, widgets or sympy layers) has one call spec: a small valid call. Each
argument of it is then replaced, one at a time, by hostile values of its kind
(NaN/inf/empty/wrong-shape/tiny/huge arrays, NaN/inf/negative/zero/1e300/1e-300
numbers, strings where numbers go, numbers where strings go, ...), and every call
runs in-process under a time guard. A call may

* return: then every float it returns is finite (no silent NaN/inf), except the
  documented infinite values listed in ``INF_OK``;
* raise: then the error is a ``ValueError`` or ``TypeError`` whose message names
  the replaced argument.

``python tests/test_fuzz.py`` prints the counts and every failure.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import re
import signal
import sys
import time
import types
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

import attnlib as al

#: The modules whose public callables are fuzzed (the topic packages' numerics are in
#: their private modules, each callable fuzzed where it is defined).
MODULE_NAMES = (
    "circle._angles attention frontiers._causal energy clustering._ensemble "
    "equiangular extremisers._flows gaussian._dynamics frontiers._hardmax integrate "
    "circle._kuramoto circle._meanfield metrics frontiers._noise frontiers._layernorm "
    "clustering._phase sphere frontiers._metastability sweep clustering._wendel "
    "_sphere_meanfield frontiers._stationary frontiers._resampled frontiers._ffn "
    "frontiers._zoo "
    "_variants circle._scenarios gaussian._presets extremisers._presets "
    "frontiers._scenarios"
).split()

(
    angles,
    attention,
    causal,
    energy,
    ensemble,
    equiangular,
    extremisers,
    gaussian,
    hardmax,
    integrate,
    kuramoto,
    meanfield,
    metrics,
    noise,
    normalisation,
    phase,
    sphere,
    staircase,
    sweep,
    wendel,
    sphere_meanfield,
    stationary,
    resampled,
    ffn,
    zoo,
    *_scenario_modules,
) = (
    importlib.import_module(f"attnlib.{m}")  # attnlib.energy is also a function
    for m in MODULE_NAMES
)
#: The runs behind the chapters' figures and widgets, from the packages that hold them.
scenarios = types.SimpleNamespace(
    **{n: getattr(m, n) for m in _scenario_modules for n in m.__all__}
)

#: A call that takes longer than this is a hang (a valid call takes milliseconds;
#: the limit is generous so that a busy machine cannot fail the test).
CALL_LIMIT = 60.0

# ------------------------------------------------------------------ inputs
X8 = al.sample_sphere(8, 3, rng=0)
XB = al.sample_sphere(5, 3, rng=1, batch=2)
TH = np.linspace(0.0, 6.0, 7)
THB = np.random.default_rng(2).uniform(0, 2 * np.pi, (3, 6))
Q3 = np.array([[1.0, 0.2, 0.0], [0.0, 0.9, 0.1], [0.0, 0.0, 1.1]])
D3 = np.diag([1.0, -0.5, 0.25])
SIG = np.array([[1.0, 0.2], [0.2, 0.5]])
ALPHA = np.array([0.1, -0.2])
G8 = al.gram(X8)


class FuzzHang(BaseException):
    """Raised by the time guard (a BaseException: no library ``except`` eats it)."""


@dataclass(frozen=True)
class Spec:
    """A valid call ``fn(*args, **kwargs)``; ``args`` are named for the messages."""

    name: str
    fn: Callable[..., Any]
    kwargs: dict
    positional: tuple = ()  # names of kwargs passed positionally, in order
    skip: tuple = ()  # arguments not fuzzed (callbacks, executors)
    extra: dict = field(default_factory=dict)  # more hostile values per argument
    values: dict = field(default_factory=dict)  # hostile values instead of the kind's


def _m(cls, method, *args):
    """Construct ``cls`` and call ``method(*args)`` (so that a model's stored
    arguments are used, not only accepted)."""

    def call(*a, **kw):
        obj = cls(*a, **kw)
        return getattr(obj, method)(*args)

    call.__name__ = f"{cls.__name__}.{method}"
    return call


def _sim(model_fn):
    def call(**kw):
        return al.simulate(model_fn(), t_final=0.2, dt=0.05, **kw)

    return call


SPECS = [
    # sphere
    Spec("project", sphere.project, {"x": X8, "y": X8[::-1]}),
    Spec("retract", sphere.retract, {"y": X8 * 2}),
    Spec("sample_sphere", sphere.sample_sphere, {"n": 4, "d": 3, "rng": 0}),
    Spec("orthonormal_frame", sphere.orthonormal_frame, {"n": 3, "d": 4, "rng": 0}),
    Spec("tangent_frame", sphere._tangent_frame, {"x": X8[0]}),
    Spec(
        "tangent_jacobian",
        sphere.tangent_jacobian,
        {"field": al.Model(beta=1.0).velocity, "X": X8[:4], "eps": 1e-6},
        skip=("field",),
    ),
    # attention
    Spec(
        "Model.velocity",
        _m(attention.Model, "velocity", X8),
        {
            "beta": 1.0,
            "Q": Q3,
            "K": Q3,
            "V": np.eye(3),
            "normalization": "sa",
            "kernel": "softmax",
            "mask": None,
            "sphere": True,
            "block": 4,
        },
    ),
    Spec(
        "Model(heads).velocity",
        _m(attention.Model, "velocity", X8),
        {"heads": [(Q3, None, None), (None, None, -np.eye(3))]},
    ),
    Spec(
        "Model(layer_norm).velocity",
        _m(attention.Model, "velocity", X8),
        {"beta": 1.0, "Q": Q3, "layer_norm": "peri", "mask": "causal"},
    ),
    Spec(
        "Model(sigmoid).attention",
        _m(attention.Model, "attention", X8),
        {"beta": 1.0, "kernel": "sigmoid", "bias": -1.0},
    ),
    Spec(
        "Model(sinkhorn).velocity",
        _m(attention.Model, "velocity", X8),
        {
            "beta": 1.0,
            "kernel": "sinkhorn",
            "sinkhorn_tol": 1e-10,
            "sinkhorn_max_iter": 200,
        },
    ),
    Spec(
        "Model.velocity(X)", lambda X: attention.Model(beta=2.0).velocity(X), {"X": X8}
    ),
    Spec(
        "Model(usa).velocity(X)",
        lambda X, beta: attention.Model(beta=beta, normalization="usa").velocity(X),
        {"X": XB, "beta": np.array([1.0, 2.0])},
    ),
    Spec(
        "attention_matrix",
        attention.attention_matrix,
        {"X": X8, "beta": 2.0, "normalization": "usa"},
    ),
    Spec("velocity", attention.velocity, {"X": X8, "beta": 2.0, "mask": "causal"}),
    Spec(
        "measure_field",
        attention.measure_field,
        {
            "points": X8[:3],
            "atoms": X8,
            "weights": np.full(8, 0.125),
            "beta": 2.0,
            "Q": Q3,
            "normalization": "sa",
        },
    ),
    Spec(
        "MeasureModel.velocity",
        _m(attention.MeasureModel, "velocity", X8),
        {"weights": np.full(8, 0.125), "beta": 2.0, "normalization": "usa"},
    ),
    # integrate
    Spec(
        "simulate",
        integrate.simulate,
        {
            "model": attention.Model(beta=1.0),
            "X0": X8,
            "t_final": 0.5,
            "dt": 0.1,
            "method": "rk4",
            "save_states": True,
            "max_steps": 100,
        },
    ),
    Spec(
        "simulate(times)",
        integrate.simulate,
        {
            "model": attention.Model(beta=1.0),
            "X0": XB,
            "times": [0.0, 0.3, 0.5],
            "dt": 0.1,
            "step_rule": "glpr",
        },
    ),
    Spec(
        "simulate(callable)",
        integrate.simulate,
        {"model": lambda X: -X, "X0": X8, "t_final": 0.5, "dt": 0.1, "sphere": False},
    ),
    Spec("glpr_usa_step", integrate.glpr_usa_step, {"beta": 2.0}),
    # energy
    Spec("energy", energy.energy, {"X": X8, "beta": 2.0}),
    Spec("log_energy", energy.log_energy, {"X": XB, "beta": np.array([1.0, 3.0])}),
    Spec("energy_gradient", energy.energy_gradient, {"X": X8, "beta": 2.0}),
    Spec("as_interaction", energy.as_interaction, {"D": D3, "d": 3}),
    Spec(
        "energy_D",
        energy.energy_D,
        {"X": X8, "D": D3, "weights": np.full(8, 0.125), "log": False},
    ),
    Spec("energy_D_field", energy.energy_D_field, {"X": X8, "D": D3}),
    Spec("energy_D_gradient", energy.energy_D_gradient, {"X": X8, "D": D3}),
    # metrics
    Spec("gram", metrics.gram, {"X": X8}),
    Spec("pair_fraction", metrics.pair_fraction, {"X": X8, "delta": 1e-3}),
    Spec("all_within", metrics.all_within, {"X": XB, "delta": 1e-3}),
    Spec("cluster_labels", metrics.cluster_labels, {"X": X8, "delta": 0.1}),
    Spec("cluster_count", metrics.cluster_count, {"X": XB, "delta": 0.1}),
    Spec(
        "PairFraction",
        _m(metrics.PairFraction, "__call__", al.gram(XB)),
        {"delta": 1e-3},
    ),
    Spec("ClusterCount", _m(metrics.ClusterCount, "__call__", G8), {"delta": 1e-3}),
    Spec("ClusterCount()(G)", lambda G: metrics.ClusterCount(0.1)(G), {"G": G8}),
    Spec(
        "InnerProductHistogram",
        _m(metrics.InnerProductHistogram, "__call__", G8),
        {"bins": 10},
    ),
    Spec("Energy", _m(metrics.Energy, "__call__", G8, 2.0), {"log": True}),
    Spec(
        "Energy()(G, beta)",
        lambda G, beta: metrics.Energy()(G, beta),
        {"G": G8, "beta": 2.0},
    ),
    Spec(
        "cluster_count_from_gram",
        metrics._cluster_count_from_gram,
        {"G": G8, "delta": 0.1},
    ),
    Spec(
        "angle_clusters",
        metrics.angle_clusters,
        {"theta": TH, "gap": 0.1, "min_fraction": 0.0},
    ),
    # equiangular
    Spec(
        "gram_field",
        equiangular.gram_field,
        {"G": G8, "beta": 1.0, "normalization": "usa"},
    ),
    Spec(
        "equiangular_rhs",
        equiangular.equiangular_rhs,
        {"gamma": 0.2, "beta": 1.0, "n": 4, "normalization": "sa"},
    ),
    Spec(
        "equiangular_gamma",
        equiangular.equiangular_gamma,
        {
            "times": [0.0, 1.0],
            "beta": 1.0,
            "n": 4,
            "normalization": "usa",
            "gamma0": 0.0,
            "max_steps": 1000,
        },
    ),
    Spec(
        "equiangular_time_to",
        equiangular.equiangular_time_to,
        {"level": 0.5, "beta": 1.0, "n": 4, "normalization": "sa"},
    ),
    # ensemble, phase, wendel, sweep
    Spec(
        "simulate_ensemble",
        ensemble.simulate_ensemble,
        {
            "X0": XB,
            "beta": np.array([1.0, 2.0]),
            "times": [0.0, 0.5],
            "dt": 0.1,
            "normalization": "sa",
            "Q": Q3,
            "chunk": 1,
            "max_steps": 100,
        },
    ),
    Spec(
        "random_qkv",
        phase.random_qkv,
        {"d": 3, "kind": "ginibre", "value": "identity", "rng": 0, "batch": 2},
    ),
    Spec(
        "phase_transition_curve",
        phase.phase_transition_curve,
        {"betas": [1.0, 4.0], "n": 8, "delta": 1e-3, "normalization": "sa"},
    ),
    Spec(
        "phase_diagram",
        phase.phase_diagram,
        {
            "d": 2,
            "betas": [1.0, 2.0],
            "samples": 2,
            "n": 4,
            "t_final": 1.0,
            "dt": 0.2,
            "delta": 1e-3,
            "rng": 0,
            "progress": False,
            "betas_per_task": 1,
            "max_steps": 1000,
        },
    ),
    Spec("wendel_probability", wendel.wendel_probability, {"n": 5, "d": 3}),
    Spec(
        "hemisphere_probability_mc",
        wendel.hemisphere_probability_mc,
        {"n": 5, "d": 3, "samples": 20, "rng": 0},
    ),
    Spec("in_hemisphere", wendel.in_hemisphere, {"X": XB}),
    # the parameters go to fn as they are: only non-sequences are hostile
    Spec(
        "sweep",
        sweep.sweep,
        {
            "fn": lambda p, s: p * 2.0,
            "params": [1.0, 2.0],
            "rng": 0,
            "progress": False,
            "desc": "x",
        },
        values={"params": [None, 3.0]},
    ),
    # circle
    Spec("to_angles", angles.to_angles, {"X": np.c_[np.cos(TH), np.sin(TH)]}),
    Spec("from_angles", angles.from_angles, {"theta": THB}),
    Spec(
        "bessel_modes",
        angles.bessel_modes,
        {"beta": 3.0, "tol": 1e-16, "max_modes": 1000},
    ),
    Spec("kernel_coefficients", angles.kernel_coefficients, {"beta": 3.0, "K": 5}),
    Spec(
        "angle_velocity",
        angles.angle_velocity,
        {
            "theta": TH,
            "beta": 2.0,
            "normalization": "sa",
            "method": "auto",
            "tol": 1e-16,
            "block": 4,
            "rtol": 1e-8,
        },
    ),
    Spec(
        "angle_velocity(fourier)",
        angles.angle_velocity,
        {"theta": THB, "beta": 2.0, "method": "fourier", "modes": 12},
    ),
    Spec(
        "CircleModel",
        _m(angles.CircleModel, "velocity", TH),
        {
            "beta": 2.0,
            "normalization": "usa",
            "method": "auto",
            "tol": 1e-16,
            "rtol": 1e-8,
        },
    ),
    Spec("torus_energy", angles.torus_energy, {"theta": THB, "beta": 2.0, "log": True}),
    Spec(
        "simulate_angles",
        angles.simulate_angles,
        {
            "model": angles.CircleModel(beta=1.0),
            "theta0": TH,
            "t_final": 0.5,
            "dt": 0.1,
            "method": "rk4",
            "max_steps": 100,
        },
    ),
    Spec("order_parameter", kuramoto.order_parameter, {"theta": THB, "k": 1}),
    Spec(
        "Kuramoto",
        _m(kuramoto.Kuramoto, "velocity", THB),
        {"omega": np.linspace(-1, 1, 6), "coupling": np.array([0.5, 1.0, 2.0])},
    ),
    Spec(
        "natural_frequencies",
        kuramoto.natural_frequencies,
        {"n": 5, "law": "gaussian", "scale": 0.5, "rng": 0},
    ),
    Spec("kuramoto_r", kuramoto.kuramoto_r, {"coupling": [0.5, 2.0], "gamma": 0.5}),
    Spec(
        "Perceptron",
        _m(ffn.Perceptron, "field", THB),
        {"W1": np.eye(3, 2), "b": np.zeros(3), "a": np.ones(3)},
    ),
    Spec(
        "FeedForwardCircle",
        _m(ffn.FeedForwardCircle, "energy", THB),
        {
            "perceptron": ffn.Perceptron(np.eye(3, 2), np.zeros(3), np.ones(3)),
            "beta": 2.0,
            "strength": 0.5,
        },
        positional=("perceptron",),
    ),
    Spec(
        "growth_rates",
        meanfield.growth_rates,
        {"k": [1, 2, 3], "beta": 2.0, "normalization": "sa"},
    ),
    Spec("dominant_mode", meanfield.dominant_mode, {"beta": 5.0, "kmax": 20}),
    Spec(
        "spaced_state_eigenvalues",
        meanfield.spaced_state_eigenvalues,
        {"n": 6, "beta": 2.0, "normalization": "usa"},
    ),
    Spec(
        "mean_field",
        meanfield.mean_field,
        {
            "rho0": (1 + 0.1 * np.cos(np.linspace(0, 2 * np.pi, 32, endpoint=False)))
            / (2 * np.pi),
            "beta": 2.0,
            "times": [0.0, 0.2],
            "normalization": "usa",
            "grid_size": 32,
            "dt": 0.05,
            "cfl": 0.5,
            "max_steps": 1000,
        },
    ),
    Spec(
        "sample_density",
        meanfield.sample_density,
        {
            "rho": 1 + 0.5 * np.cos(np.linspace(0, 2 * np.pi, 16, endpoint=False)),
            "n": 10,
            "rng": 0,
        },
    ),
    Spec(
        "circle_wasserstein",
        meanfield.circle_wasserstein,
        {"theta": TH, "rho": np.ones(16)},
    ),
    Spec(
        "cluster_energy",
        staircase.cluster_energy,
        {
            "theta": np.array([0.0, 1.0, 3.0]),
            "masses": np.array([0.2, 0.3, 0.5]),
            "beta": 2.0,
        },
    ),
    Spec(
        "merge_flow",
        staircase.merge_flow,
        {
            "theta0": np.array([0.0, 0.5, 2.0, 4.0]),
            "beta": 2.0,
            "masses": np.full(4, 0.25),
            "t_max": 5.0,
            "merge_tol": 1e-7,
            "rtol": 1e-8,
        },
    ),
    Spec(
        "weighted_angle_velocity",
        staircase.weighted_angle_velocity,
        {
            "theta": np.array([0.0, 1.0, 3.0]),
            "masses": np.array([0.2, 0.3, 0.5]),
            "beta": 2.0,
            "n": 3.0,
        },
    ),
    # gaussian
    Spec(
        "gaussian_field",
        gaussian.gaussian_field,
        {
            "model": attention.Model(beta=1.0, geometry="euclidean"),
            "alpha": ALPHA,
            "Sigma": SIG,
        },
    ),
    Spec(
        "gaussian_rhs",
        gaussian.gaussian_rhs,
        {
            "model": attention.Model(beta=1.0, geometry="euclidean", Q=np.eye(2)),
            "alpha": ALPHA,
            "Sigma": SIG,
        },
    ),
    Spec(
        "integrate_gaussian",
        gaussian.integrate_gaussian,
        {
            "model": attention.Model(beta=1.0, geometry="euclidean"),
            "alpha0": ALPHA,
            "Sigma0": SIG,
            "t_final": 0.5,
            "dt": 0.05,
            "rel_step": 0.05,
            "max_trace": 1e8,
            "max_steps": 1000,
        },
    ),
    Spec(
        "riccati_covariance",
        gaussian.riccati_covariance,
        {
            "model": attention.Model(beta=1.0, geometry="euclidean"),
            "Sigma0": SIG,
            "times": [0.0, 0.1],
        },
    ),
    Spec(
        "blowup_time",
        gaussian.blowup_time,
        {"model": attention.Model(beta=1.0, geometry="euclidean"), "Sigma0": SIG},
    ),
    Spec(
        "sample_gaussian",
        gaussian.sample_gaussian,
        {"alpha": ALPHA, "Sigma": SIG, "n": 5, "rng": 0},
    ),
    Spec(
        "empirical_moments",
        gaussian.empirical_moments,
        {"X": np.random.default_rng(0).normal(size=(6, 2))},
    ),
    Spec(
        "fit_affine",
        gaussian.fit_affine,
        {
            "X": np.random.default_rng(0).normal(size=(6, 2)),
            "Y": np.random.default_rng(1).normal(size=(6, 2)),
        },
    ),
    Spec(
        "mardia_kurtosis",
        gaussian.mardia_kurtosis,
        {"X": np.random.default_rng(0).normal(size=(6, 2))},
    ),
    Spec("effective_rank", gaussian.effective_rank, {"Sigma": SIG}),
    Spec("condition_number", gaussian.condition_number, {"Sigma": SIG}),
    Spec("numerical_rank", gaussian.numerical_rank, {"Sigma": SIG, "rtol": 1e-3}),
    Spec("disc_coordinates", gaussian.disc_coordinates, {"Sigma": SIG}),
    # extremisers
    Spec(
        "energy_flow",
        extremisers.energy_flow,
        {
            "X0": X8,
            "D": D3,
            "direction": "ascent",
            "metric": "wasserstein",
            "tau": 0.1,
            "steps": 5,
            "step_control": "stable",
            "c": 0.5,
            "projected": True,
            "record_every": 1,
            "max_halvings": 10,
        },
    ),
    Spec("circle_grid", extremisers.circle_grid, {"m": 8}),
    Spec(
        "density_mirror_descent",
        extremisers.density_mirror_descent,
        {
            "D": np.diag([1.0, 1.0]),
            "m": 16,
            "steps": 5,
            "eta": 1.0,
            "direction": "descent",
        },
    ),
    Spec(
        "minimise_configuration",
        extremisers.minimise_configuration,
        {"n": 4, "d": 3, "beta": 1.0, "rng": 0, "restarts": 1, "gtol": 1e-6},
    ),
    Spec("platonic_points", extremisers.platonic_points, {"name": "tetrahedron"}),
    Spec(
        "platonic_energy",
        extremisers.platonic_energy,
        {"name": "octahedron", "beta": 2.0, "log": False},
    ),
    Spec(
        "gegenbauer_coefficients",
        extremisers.gegenbauer_coefficients,
        {
            "beta": 2.0,
            "d": 3,
            "kmax": 4,
            "method": "bessel",
            "nodes": 50,
            "scaled": False,
        },
    ),
    Spec(
        "uniform_energy",
        extremisers.uniform_energy,
        {"beta": 2.0, "d": 3, "log": False},
    ),
    Spec(
        "four_particle_ratio",
        extremisers.four_particle_ratio,
        {"X": al.sample_sphere(4, 2, rng=0), "lam": 0.5},
    ),
    # frontiers
    Spec(
        "CausalModel",
        _m(causal.CausalModel, "velocity", X8),
        {
            "beta": 2.0,
            "slope": 0.5,
            "Q": Q3,
            "K": Q3,
            "V": np.eye(3),
            "normalization": "positional",
        },
    ),
    Spec(
        "CausalModel.velocity(X)",
        lambda X: causal.CausalModel(beta=2.0).velocity(X),
        {"X": X8},
    ),
    Spec("alibi_bias", causal.alibi_bias, {"n": 4, "slope": 0.5, "positional": False}),
    Spec("positional_weights", causal.positional_weights, {"n": 4, "slope": 0.5}),
    Spec("renyi_centres", causal.renyi_centres, {"X": X8, "delta": 0.5}),
    Spec(
        "retention_profile",
        causal.retention_profile,
        {
            "s": np.linspace(0.05, 0.95, 5),
            "beta": 2.0,
            "t": 1.0,
            "slope": 1.0,
            "modes": 10,
            "width": 8.0,
            "per_mode": False,
        },
    ),
    Spec(
        "retention_linear",
        causal.retention_linear,
        {"n": 8, "beta": 2.0, "t": 1.0, "slope": 1.0, "modes": 10, "width": 8.0},
    ),
    Spec(
        "retention_estimate",
        causal.retention_estimate,
        {
            "theta0": THB,
            "theta_t": THB[::-1],
            "modes": 10,
            "width": 8.0,
            "control": True,
        },
    ),
    Spec(
        "hardmax_weights",
        hardmax.hardmax_weights,
        {"X": X8, "queries": X8[:3], "Q": Q3, "K": Q3, "tol": 1e-12},
    ),
    Spec(
        "Hardmax",
        _m(hardmax.Hardmax, "velocity", X8),
        {
            "Q": Q3,
            "K": Q3,
            "V": np.eye(3),
            "sphere": True,
            "consensus": False,
            "tol": 1e-12,
        },
    ),
    Spec("Hardmax.attention(X)", lambda X: hardmax.Hardmax().attention(X), {"X": X8}),
    Spec("funk_hecke", noise.funk_hecke, {"ell": [0, 1, 2], "beta": 2.0, "d": 3}),
    Spec(
        "noisy_rates",
        noise.noisy_rates,
        {"ell": [1, 2], "beta": 2.0, "d": 3, "sigma": 0.3, "normalization": "sa"},
    ),
    Spec(
        "noise_threshold",
        noise.noise_threshold,
        {"beta": 2.0, "d": 3, "normalization": "usa"},
    ),
    Spec("noise_threshold(sa)", noise.noise_threshold, {"beta": 2.0, "d": 5}),
    # Frontiers II: the sphere's mean field, stationary states, resampled layers
    Spec(
        "sphere_growth_rates",
        sphere_meanfield.sphere_growth_rates,
        {"ell": [1, 2, 3], "beta": 2.0, "sigma": 0.1},
    ),
    Spec(
        "sphere_density",
        sphere_meanfield.sphere_density,
        {"coefficients": np.eye(3, dtype=complex) / np.sqrt(4 * np.pi), "points": X8},
        positional=("coefficients", "points"),
    ),
    Spec(
        "sphere_mean_field",
        sphere_meanfield.sphere_mean_field,
        {
            "rho0": lambda x: (1 + 0.1 * x[:, 2]) / (4 * np.pi),
            "beta": 1.0,
            "lmax": 8,
            "t_final": 0.05,
            "sigma": 0.1,
            "max_steps": 200,
        },
        positional=("rho0",),
    ),
    Spec("transition_beta", stationary.transition_beta, {"d": 3}, positional=("d",)),
    Spec("linear_coupling", stationary.linear_coupling, {"beta": 2.0, "d": 3}),
    Spec("landau_coefficient", stationary.landau_coefficient, {"beta": 2.0, "d": 3}),
    Spec(
        "stationary_state",
        stationary.stationary_state,
        {"beta": 1.0, "d": 2, "sigma": 0.2, "lmax": 24},
    ),
    Spec(
        "stationary_branches",
        stationary.stationary_branches,
        {"sigmas": [0.1, 0.15, 0.2], "beta": 1.0, "d": 2, "lmax": 24},
        positional=("sigmas",),
    ),
    Spec(
        "circle_noisy_mean_field",
        stationary.circle_noisy_mean_field,
        {
            "rho0": 1 + 0.1 * np.cos(2 * np.pi * np.arange(32) / 32),
            "beta": 1.0,
            "sigma": 0.2,
            "t_final": 0.05,
        },
        positional=("rho0",),
        # t_final = 1e3 is a valid request of 1e5 steps (11 s of CPU on a loaded
        # core, past the hang limit when the two CPUs are shared five ways), not a
        # hang; 1e300 still checks that a huge horizon is refused at once
        values={
            "t_final": [np.nan, np.inf, -np.inf, -1.0, 0.0, 1e300, 1e-300, "1.0", [1.0]]
        },
    ),
    Spec(
        "resampled_run",
        resampled.resampled_run,
        {"X0": X8, "beta": 1.0, "layers": 4, "rng": 0},
        positional=("X0",),
    ),
    Spec(
        "overlap_coefficients",
        resampled.overlap_coefficients,
        {"u": [0.0, 0.5], "beta": 1.0, "d": 3},
        positional=("u",),
    ),
    Spec(
        "overlap_sde",
        resampled.overlap_sde,
        {"u0": [0.0, 0.5], "beta": 1.0, "d": 3, "t_final": 0.1, "dt": 0.01, "rng": 0},
        positional=("u0",),
    ),
    Spec(
        "antipodal_probability",
        resampled.antipodal_probability,
        {"u0": 0.0, "beta": 1.0, "d": 4},
        positional=("u0",),
    ),
    Spec("count_clusters", resampled.count_clusters, {"X": X8}, positional=("X",)),
    # Frontiers II: Mix-LN, nGPT and several heads
    Spec(
        "ngpt_velocity",
        zoo.ngpt_velocity,
        {"X": X8, "beta": 1.0, "alpha": 0.5},
        positional=("X",),
    ),
    Spec(
        "zoo_run",
        zoo.zoo_run,
        {
            "X0": X8[:4],
            "beta": 1.0,
            "scheme": "mix",
            "times": [0.0, 0.2, 0.4],
            "switch": 0.2,
            "dt": 0.1,
            "method": "rk4",
        },
        positional=("X0",),
    ),
    Spec(
        "zoo_run(ngpt)",
        zoo.zoo_run,
        {
            "X0": XB,
            "beta": 1.0,
            "scheme": "ngpt",
            "times": [0.0, 0.2],
            "alpha": 0.5,
            "dt": 0.1,
        },
        positional=("X0",),
    ),
    Spec(
        "zoo_equiangular",
        zoo.zoo_equiangular,
        {
            "times": [0.0, 1.0, 2.0],
            "beta": 1.0,
            "n": 4,
            "scheme": "mix",
            "switch": 1.0,
            "normalization": "sa",
            "gamma0": 0.0,
            "max_steps": 1000,
        },
        positional=("times",),
    ),
    Spec(
        "zoo_equiangular(ngpt)",
        zoo.zoo_equiangular,
        {
            "times": [0.0, 1.0],
            "beta": 1.0,
            "n": 4,
            "scheme": "ngpt",
            "alpha": 0.5,
            "normalization": "usa",
            "gamma0": 0.1,
            "max_steps": 1000,
        },
        positional=("times",),
    ),
    Spec(
        "zoo_time_to",
        zoo.zoo_time_to,
        {
            "level": 0.5,
            "beta": 1.0,
            "n": 4,
            "scheme": "mix",
            "switch": 0.2,
            "normalization": "sa",
        },
        positional=("level",),
    ),
    Spec(
        "zoo_time_to(ngpt)",
        zoo.zoo_time_to,
        {"level": 0.5, "beta": 1.0, "n": 4, "scheme": "ngpt", "alpha": 0.5},
        positional=("level",),
    ),
    Spec(
        "multihead_rate",
        zoo.multihead_rate,
        {
            "gamma": 0.2,
            "beta": [1.0, 2.0],
            "weights": [1.0, 0.5],
            "n": 4,
            "normalization": "sa",
        },
        positional=("gamma",),
    ),
    Spec(
        "multihead_gamma",
        zoo.multihead_gamma,
        {
            "times": [0.0, 1.0],
            "beta": [1.0, 2.0],
            "weights": [1.0, 0.5],
            "n": 4,
            "normalization": "usa",
            "gamma0": 0.0,
            "max_steps": 1000,
        },
        positional=("times",),
    ),
    Spec(
        "multihead_time_to",
        zoo.multihead_time_to,
        {
            "level": 0.5,
            "beta": [1.0, 2.0],
            "weights": [1.0, 0.5],
            "n": 4,
            "normalization": "sa",
            "gamma0": 0.0,
        },
        positional=("level",),
    ),
    Spec(
        "two_head_threshold",
        zoo.two_head_threshold,
        {"scores": [1.0, 0.0], "weights": [1.0, -2.0]},
        positional=("scores", "weights"),
    ),
    Spec(
        "simulate_noisy",
        noise.simulate_noisy,
        {
            "model": attention.Model(beta=1.0),
            "X0": X8,
            "sigma": 0.2,
            "rng": 0,
            "t_final": 0.2,
            "dt": 0.05,
            "max_steps": 100,
        },
    ),
    Spec(
        "NormalisedModel",
        _m(normalisation.NormalisedModel, "velocity", X8 * 2),
        {"scheme": "pre", "beta": 1.0, "Q": Q3},
    ),
    Spec(
        "NormalisedModel.velocity(X)",
        lambda X: normalisation.NormalisedModel("peri", beta=1.0).velocity(X),
        {"X": X8 * 2},
    ),
    Spec(
        "sphere_clock",
        normalisation.sphere_clock,
        {"times": [0.0, 1.0, 2.0], "radii": [1.0, 2.0, 3.0]},
    ),
    Spec(
        "equiangular_scheme",
        normalisation.equiangular_scheme,
        {
            "times": [0.0, 1.0],
            "beta": 1.0,
            "n": 4,
            "scheme": "pre",
            "normalization": "sa",
            "gamma0": 0.0,
            "radius0": 1.0,
        },
    ),
    Spec(
        "equiangular_scheme_rhs",
        normalisation.equiangular_scheme_rhs,
        {
            "gamma": 0.2,
            "radius": 1.5,
            "beta": 1.0,
            "n": 4,
            "scheme": "peri",
            "normalization": "usa",
        },
    ),
    Spec(
        "scheme_time_to",
        normalisation.scheme_time_to,
        {"level": 0.5, "beta": 1.0, "n": 4, "scheme": "pre", "normalization": "sa"},
    ),
    # scenarios: the runs behind the chapters' figures and widgets (short runs)
    Spec(
        "variant_model",
        scenarios.variant_model,
        {"name": "SA", "beta": 2.0, "Q": Q3, "K": Q3},
    ),
    Spec("usa_clock", scenarios.usa_clock, {"beta": 2.0, "Q": Q3, "K": Q3}),
    Spec(
        "variant_field",
        lambda **kw: scenarios.variant_field(**kw)(X8),
        {"name": "USA", "beta": 2.0, "Q": Q3, "K": Q3, "usa_clock_rescaled": True},
    ),
    Spec(
        "variant_trajectory",
        scenarios.variant_trajectory,
        {
            "name": "SA",
            "X0": X8,
            "beta": 1.0,
            "times": [0.0, 0.2],
            "Q": Q3,
            "K": Q3,
            "dt": 0.1,
            "method": "heun",
            "usa_clock_rescaled": True,
        },
    ),
    Spec(
        "particle_run",
        scenarios.particle_run,
        {
            "beta": 1.0,
            "n": 6,
            "t_final": 0.5,
            "n_frames": 3,
            "rng": 0,
            "normalization": "sa",
            "n_max": 8,
        },
    ),
    Spec(
        "density_run",
        scenarios.density_run,
        {
            "rho0": np.full(16, 1 / (2 * np.pi)),
            "beta": 1.0,
            "times": [0.0, 0.1],
            "n_particles": 5,
            "grid_size": 16,
            "rng": 0,
        },
    ),
    Spec(
        "preset_model",
        scenarios.preset_model,
        {"name": "decay to a point (Q = -I)", "rng": 0, "kernel": "softmax"},
    ),
    Spec(
        "ellipse_points",
        scenarios.ellipse_points,
        {"alpha": ALPHA, "Sigma": SIG, "nsig": 2.0, "num": 10},
    ),
    Spec(
        "cloud_scenario",
        scenarios.cloud_scenario,
        {
            "model": attention.Model(Q=-np.eye(2), geometry="euclidean"),
            "alpha0": ALPHA,
            "Sigma0": SIG,
            "n": 10,
            "rng": 0,
            "t_max": 0.2,
            "frames": 3,
            "dt": 0.05,
        },
        # t_max = 1e3 is a valid request of 20,000 steps (about 10 s on an idle core,
        # a minute on a loaded one: it ends in the clear overflow error at t = 641),
        # not a hang; 1e300 still checks that a huge horizon is refused at once
        values={
            "t_max": [np.nan, np.inf, -np.inf, -1.0, 0.0, 1e300, 1e-300, "1.0", [1.0]]
        },
    ),
    Spec(
        "interaction_matrix",
        scenarios.interaction_matrix,
        {"preset": "diag(1, λ) on S¹", "lam": 0.5},
    ),
    Spec(
        "extremiser_run",
        scenarios.extremiser_run,
        {
            "preset": "diag(1, λ) on S¹",
            "lam": 0.5,
            "X0": al.sample_sphere(5, 2, rng=0),
            "direction": "ascent",
            "metric": "wasserstein",
            "steps": 5,
        },
    ),
    Spec(
        "scheme_solutions",
        scenarios.scheme_solutions,
        {"beta": 1.0, "n": 4, "t_final": 2.0},
    ),
    Spec("four_clusters", scenarios.four_clusters, {"n": 8, "rng": 17}),
    Spec(
        "causal_run",
        scenarios.causal_run,
        {
            "theta0": TH,
            "beta": 1.0,
            "lam": 1.0,
            "t_final": 0.05,
            "dt": 0.05,
            "n_frames": 3,
        },
    ),
    Spec("voronoi_tokens", scenarios.voronoi_tokens, {"k": 5, "m": 6, "rng": 3}),
    Spec(
        "temperature_runs",
        scenarios.temperature_runs,
        {"Z0": 0.5 * X8[:, :2], "beta": 2.0, "t_final": 0.05, "n_frames": 3},
        # t_final = 1e3 is a valid run of 10^5 steps (dt is fixed at 0.01): slow on a
        # busy machine, not hostile
        values={
            "t_final": [np.nan, np.inf, -np.inf, -1.0, 0.0, 1e300, 1e-300, -1e-300]
            + ["1.0", [1.0, 2.0]]
        },
    ),
]

#: Callables that only hold results (frozen dataclasses filled by the library): they
#: take what they are given, by design.
HOLDERS = {
    "Trajectory",
    "EnsembleResult",
    "EnsembleRun",
    "EnergyFlow",
    "DensityResult",
    "Configuration",
    "AffineField",
    "GaussianTrajectory",
    "DensityTrajectory",
    "Clusters",
    "NoisyTrajectory",
    "EquiangularScheme",
    "PhaseDiagram",
    "PhaseTask",
    "MergeFlow",
    "HemisphereEstimate",
    "SinkhornResult",
    "moment_observables",
    "AngleTrajectory",
    "Dynamics",  # a typing.Protocol: what simulate needs of a model
    "StationaryState",
    "Branches",
}

#: Infinite values that a function documents as its answer (the result field, "" for
#: the whole result); NaN is never an answer.
INF_OK = {
    "alibi_bias": {""},  # -inf above the diagonal is the causal mask
    # inf: the level is never reached
    "equiangular_time_to": {""},
    "scheme_time_to": {""},
    "blowup_time": {""},
    "integrate_gaussian": {"blowup_time"},
    "merge_flow": {"merge_times"},
    "four_particle_ratio": {""},  # inf where x_2 = 0
    "cloud_scenario": {"t_star"},  # inf: the covariance does not blow up
    "multihead_time_to": {""},  # inf: the rate vanishes or changes sign on the way
}

FUZZED_MODULES = tuple(sys.modules[f"attnlib.{name}"] for name in MODULE_NAMES)


# ------------------------------------------------------------- hostile values
def _arrays(x: np.ndarray) -> list:
    x = np.asarray(x, dtype=float)
    out = []
    nan = x.copy()
    nan.flat[0] = np.nan
    inf = x.copy()
    inf.flat[-1] = np.inf
    out += [nan, inf, x * 1e300, x * 1e-300, np.empty((0,) + x.shape[1:])]
    out += [x[..., None], x.reshape(-1)[: max(1, x.size - 1)]]
    if x.ndim >= 1 and x.shape[0] > 1:
        out.append(x[:1])
    out += ["abc", np.array(["a"] * 3), None if x.ndim else 1.0]
    return out


def hostile(name: str, value: Any) -> list:
    if name == "rng":
        return ["seed", -1, 1.5, None]
    if callable(value) and not isinstance(value, (np.ndarray, type)):
        return ["model", 3.0]
    if isinstance(value, (bool, np.bool_)):
        return ["yes", 2, None]
    if isinstance(value, str):
        return ["bogus", 3, None]
    if isinstance(value, type) or isinstance(value, np.dtype):
        return ["float128x", 3]
    if isinstance(value, (int, np.integer)):
        return [-1, 0, 2.5, "3", 10**30, np.nan]
    if isinstance(value, (float, np.floating)):
        return [
            np.nan,
            np.inf,
            -np.inf,
            -1.0,
            0.0,
            1e300,
            1e-300,
            -1e-300,
            "1.0",
            [1.0, 2.0],
            1e3,
        ]
    if (
        isinstance(value, (list, tuple))
        and value
        and all(isinstance(v, (int, float)) for v in value)
    ):
        return _arrays(np.asarray(value, float)) + [list(value)[::-1]]
    if isinstance(value, np.ndarray):
        return _arrays(value)
    if value is None:
        return ["abc", np.full((3, 3), np.nan)]
    if isinstance(value, list):  # heads
        return ["abc", [], [(Q3,)], [(np.full((3, 3), np.nan), None, None)]]
    return ["abc", 3.0]


# ----------------------------------------------------------------- checking
def _floats(obj: Any, path: str = "", depth: int = 0):
    """(field, float array) for every float in a result."""
    if depth > 4:
        return
    if isinstance(obj, np.ndarray):
        if np.issubdtype(obj.dtype, np.floating) or np.issubdtype(
            obj.dtype, np.complexfloating
        ):
            yield path, obj
    elif isinstance(obj, (float, np.floating)):
        yield path, np.asarray(obj)
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name)
            if f.name == "info":  # a Trajectory's own quantities, named as attributes
                for k, v in value.items():
                    yield from _floats(v, path or k, depth + 1)
                continue
            yield from _floats(value, path or f.name, depth + 1)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _floats(v, path, depth + 1)
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _floats(v, path, depth + 1)


def _alarm(signum, frame):
    raise FuzzHang()


@dataclass
class Outcome:
    hangs: list = field(default_factory=list)
    nonfinite: list = field(default_factory=list)
    unclear: list = field(default_factory=list)
    calls: int = 0
    raised: int = 0
    seconds: float = 0.0


def _short(v: Any) -> str:
    if isinstance(v, np.ndarray):
        return f"array{v.shape}[{np.ravel(v)[:1]}...]"
    return repr(v)[:40]


def _names(message: str, arg: str) -> bool:
    """Whether an error message names the argument (``beta`` also names ``betas``,
    whose entries it describes)."""
    names = {arg, arg[:-1]} if arg.endswith("s") and len(arg) > 2 else {arg}
    return any(re.search(rf"\b{re.escape(a)}\b", message) for a in names)


def run_spec(spec: Spec, out: Outcome) -> None:
    cases = [(None, None)]
    for arg, value in spec.kwargs.items():
        if arg in spec.skip:
            continue
        values = spec.values.get(arg, hostile(arg, value))
        cases += [(arg, h) for h in values + spec.extra.get(arg, [])]
    for arg, value in cases:
        kw = dict(spec.kwargs)
        if arg is not None:
            kw[arg] = value
        args = [kw.pop(p) for p in spec.positional]
        where = f"{spec.name}({arg}={_short(value)})" if arg else f"{spec.name}()"
        out.calls += 1
        old = signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, CALL_LIMIT)
        t0 = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with np.errstate(all="ignore"):
                    res = spec.fn(*args, **kw)
        except FuzzHang:
            out.hangs.append(where)
            continue
        except (ValueError, TypeError) as exc:
            out.raised += 1
            if arg is None:
                out.unclear.append(f"{where}: valid call raised {exc!r}")
            elif not _names(str(exc), arg):
                out.unclear.append(f"{where}: {type(exc).__name__}: {exc}"[:300])
            continue
        except Exception as exc:  # noqa: BLE001 - what the fuzz is looking for
            out.raised += 1
            out.unclear.append(f"{where}: {type(exc).__name__}: {exc}"[:300])
            continue
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
            out.seconds += time.perf_counter() - t0
        ok = INF_OK.get(spec.name, set())
        for path, a in _floats(res):
            if np.any(np.isnan(a)) or (path not in ok and not np.all(np.isfinite(a))):
                out.nonfinite.append(f"{where} -> {path or 'result'}")
                break


def fuzz(specs=SPECS) -> Outcome:
    out = Outcome()
    for spec in specs:
        run_spec(spec, out)
    return out


# -------------------------------------------------------------------- tests
@pytest.fixture(scope="module")
def outcome():
    return fuzz()


def _listing(items):
    return "\n".join(items[:40]) + (
        f"\n... {len(items) - 40} more" if len(items) > 40 else ""
    )


def test_every_public_callable_has_a_spec():
    specced = {s.name.split(".")[0].split("(")[0] for s in SPECS}
    missing = []
    for mod in FUZZED_MODULES:
        for name in mod.__all__:
            with warnings.catch_warnings():  # deprecated aliases resolve too
                warnings.simplefilter("ignore", DeprecationWarning)
                obj = getattr(mod, name)
            if (
                callable(obj)
                and getattr(obj, "__module__", "") == mod.__name__
                and name not in HOLDERS
                and name not in specced
            ):
                missing.append(f"{mod.__name__}.{name}")
    assert not missing, missing


def test_no_hang(outcome):
    assert not outcome.hangs, _listing(outcome.hangs)


def test_no_silent_nan_or_inf(outcome):
    assert not outcome.nonfinite, _listing(outcome.nonfinite)


def test_every_error_is_a_value_or_type_error_naming_the_argument(outcome):
    assert not outcome.unclear, _listing(outcome.unclear)


def test_the_fuzz_catches_what_it_looks_for():
    """The three checks fail on functions built to fail them."""
    nan = Outcome()
    run_spec(Spec("nan", lambda x: np.full(2, np.nan), {"x": 1.0}), nan)
    assert len(nan.nonfinite) == len(hostile("x", 1.0)) + 1  # every call
    inf = Outcome()
    run_spec(Spec("inf", lambda x: np.array([x * 1.0]), {"x": 1.0}), inf)
    assert inf.nonfinite == [f"inf(x={v}) -> result" for v in ("nan", "inf", "-inf")]
    vague = Outcome()
    run_spec(Spec("vague", lambda x: [1.0][int(x > 1e100)], {"x": 1.0}), vague)
    assert any("vague(x=1e+300): IndexError" in u for u in vague.unclear)
    assert any("TypeError: '>' not supported" in u for u in vague.unclear)
    named = Outcome()
    run_spec(Spec("named", lambda x: al.glpr_usa_step(beta=x), {"x": 1.0}), named)
    assert any("ValueError: beta must be" in u for u in named.unclear)  # not "x"
    sleepy = Outcome()
    old = CALL_LIMIT
    try:
        globals()["CALL_LIMIT"] = 0.2
        run_spec(
            Spec(
                "sleepy",
                lambda x: time.sleep(5) if x == 1.0 else 0.0,
                {"x": 2.0},
                extra={"x": [1.0]},
            ),
            sleepy,
        )
    finally:
        globals()["CALL_LIMIT"] = old
    assert sleepy.hangs == ["sleepy(x=1.0)"]


if __name__ == "__main__":
    res = fuzz()
    print(
        f"{res.calls} calls over {len(SPECS)} specs in {res.seconds:.1f} s: "
        f"{len(res.hangs)} hangs, {len(res.nonfinite)} silent NaN/inf, "
        f"{len(res.unclear)} unclear errors ({res.raised} raised)"
    )
    for title, items in (
        ("hangs", res.hangs),
        ("silent NaN/inf", res.nonfinite),
        ("unclear", res.unclear),
    ):
        print(f"--- {title}")
        print("\n".join(items))
    sys.exit(0 if math.isfinite(res.seconds) else 1)
