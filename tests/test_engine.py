"""The library as one engine: old import paths, validation once, layering, imports,
and the inputs that used to give silent NaN or unclear errors."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import attnlib as al
from attnlib import Model, sample_sphere, simulate
from attnlib.integrate import Dynamics
from attnlib import _kernel as kern
from attnlib.clustering import (
    PairFraction,
    phase_diagram,
    random_qkv,
    simulate_ensemble,
)

ROOT = Path(__file__).resolve().parents[1]

# Every name of the __all__ of each module before the library was split (commit
# 43eda3b): each must still resolve from its old module.
OLD_ALL = {
    "attnlib": [
        "KERNELS",
        "METHODS",
        "NORMALIZATIONS",
        "Model",
        "SinkhornResult",
        "TooManyStepsError",
        "Trajectory",
        "all_within",
        "attention_matrix",
        "cluster_count",
        "cluster_labels",
        "circle",
        "clustering",
        "energy",
        "energy_D",
        "energy_D_field",
        "energy_D_gradient",
        "energy_gradient",
        "extremisers",
        "gaussian",
        "equiangular_gamma",
        "equiangular_rhs",
        "equiangular_time_to",
        "glpr_usa_step",
        "gram",
        "log_energy",
        "orthonormal_frame",
        "pair_fraction",
        "project",
        "retract",
        "sample_sphere",
        "simulate",
        "sinkhorn",
        "velocity",
    ],  # noqa: E501
    "attnlib.attention": [
        "Model",
        "SinkhornResult",
        "attention_matrix",
        "velocity",
        "sinkhorn",
        "KERNELS",
        "NORMALIZATIONS",
    ],  # noqa: E501
    "attnlib.clustering": [
        "EnsembleResult",
        "simulate_ensemble",
        "PairFraction",
        "ClusterCount",
        "InnerProductHistogram",
        "Energy",
        "cluster_count_from_gram",
        "QKV_KINDS",
        "VALUE_KINDS",
        "random_qkv",
        "phase_transition_curve",
        "PhaseDiagram",
        "phase_diagram",
        "wendel_probability",
        "HemisphereEstimate",
        "hemisphere_probability_mc",
        "in_hemisphere",
        "sweep",
    ],  # noqa: E501
    "attnlib.circle": [
        "to_angles",
        "from_angles",
        "bessel_modes",
        "kernel_coefficients",
        "angle_velocity",
        "CircleModel",
        "Kuramoto",
        "order_parameter",
        "torus_energy",
        "lorentzian_frequencies",
        "kuramoto_r",
        "simulate_angles",
        "AngleTrajectory",
        "growth_rates",
        "dominant_mode",
        "spaced_state_eigenvalues",
        "angle_clusters",
        "Clusters",
        "mean_field",
        "DensityTrajectory",
        "sample_density",
        "circle_wasserstein",
    ],  # noqa: E501
    "attnlib.integrate": [
        "simulate",
        "Trajectory",
        "glpr_usa_step",
        "METHODS",
        "output_times",
        "check_observables",
        "planned_steps",
        "run_explicit",
        "MAX_STEPS",
    ],  # noqa: E501
    "attnlib.energy": [
        "energy",
        "log_energy",
        "energy_gradient",
        "as_interaction",
        "energy_D",
        "energy_D_field",
        "energy_D_gradient",
    ],  # noqa: E501
    "attnlib.extremisers": [
        "EnergyFlow",
        "energy_flow",
        "DensityResult",
        "circle_grid",
        "density_mirror_descent",
        "Configuration",
        "minimise_configuration",
        "platonic_points",
        "platonic_energy",
        "gegenbauer_coefficients",
        "uniform_energy",
        "four_particle_ratio",
    ],  # noqa: E501
    "attnlib.gaussian": [
        "AffineField",
        "GaussianTrajectory",
        "gaussian_field",
        "gaussian_rhs",
        "integrate_gaussian",
        "riccati_covariance",
        "blowup_time",
        "sample_gaussian",
        "empirical_moments",
        "moment_observables",
        "fit_affine",
        "mardia_kurtosis",
        "effective_rank",
        "condition_number",
        "numerical_rank",
        "disc_coordinates",
        "GAUSSIAN_KERNELS",
    ],  # noqa: E501
    "attnlib.metrics": [
        "gram",
        "pair_fraction",
        "all_within",
        "cluster_labels",
        "cluster_count",
    ],  # noqa: E501
    "attnlib.sphere": ["project", "retract", "sample_sphere", "orthonormal_frame"],
    "attnlib.equiangular": [
        "equiangular_rhs",
        "equiangular_gamma",
        "equiangular_time_to",
    ],  # noqa: E501
}
#: The __all__ of each module that became part of a topic package (before the
#: move): every name still resolves from its old path, with one warning naming
#: its new home.
MOVED_ALL = {
    "attnlib.angles": [
        "to_angles",
        "from_angles",
        "bessel_modes",
        "kernel_coefficients",
        "angle_velocity",
        "CircleModel",
        "torus_energy",
        "simulate_angles",
    ],
    "attnlib.kuramoto": [
        "order_parameter",
        "Kuramoto",
        "lorentzian_frequencies",
        "kuramoto_r",
    ],
    "attnlib.meanfield": [
        "growth_rates",
        "dominant_mode",
        "spaced_state_eigenvalues",
        "mean_field",
        "DensityTrajectory",
        "sample_density",
        "circle_wasserstein",
    ],
    "attnlib.ensemble": [
        "EnsembleResult",
        "simulate_ensemble",
    ],
    "attnlib.phase": [
        "QKV_KINDS",
        "VALUE_KINDS",
        "random_qkv",
        "phase_transition_curve",
        "PhaseDiagram",
        "PhaseTask",
        "PHASE_METHODS",
        "phase_diagram",
    ],
    "attnlib.wendel": [
        "wendel_probability",
        "HemisphereEstimate",
        "hemisphere_probability_mc",
        "in_hemisphere",
    ],
    "attnlib.normalisation": [
        "SCHEMES",
        "NormalisedModel",
        "sphere_clock",
        "EquiangularScheme",
        "equiangular_scheme",
        "equiangular_scheme_rhs",
        "scheme_time_to",
    ],
    "attnlib.causal": [
        "CAUSAL_NORMALIZATIONS",
        "CausalModel",
        "alibi_bias",
        "positional_weights",
        "renyi_centres",
        "retention_profile",
        "retention_linear",
        "retention_estimate",
    ],
    "attnlib.hardmax": [
        "hardmax_weights",
        "Hardmax",
    ],
    "attnlib.noise": [
        "funk_hecke",
        "noisy_rates",
        "noise_threshold",
        "NoisyTrajectory",
        "simulate_noisy",
    ],
    "attnlib.modes": [
        "ModeCount",
        "circle_modes",
        "line_modes",
        "count_modes",
    ],
    "attnlib.staircase": [
        "cluster_energy",
        "MergeFlow",
        "merge_flow",
        "weighted_angle_velocity",
    ],
    "attnlib.scenarios": [
        "VARIANTS",
        "variant_model",
        "usa_clock",
        "variant_field",
        "variant_trajectory",
        "particle_run",
        "density_run",
        "ALPHA0",
        "SIGMA0",
        "GAUSSIAN_PRESETS",
        "KERNEL_CHOICES",
        "preset_model",
        "ellipse_points",
        "CloudScenario",
        "cloud_scenario",
        "EXTREMISER_PRESETS",
        "interaction_matrix",
        "extremiser_run",
        "scheme_solutions",
        "four_clusters",
        "causal_run",
        "voronoi_tokens",
        "temperature_runs",
    ],
}
#: Old names kept as deprecated aliases or retired from the public API, and the
#: object (its dotted path) each resolves to.
DEPRECATED = {
    ("attnlib.circle", "AngleTrajectory"): "attnlib.Trajectory",
    # natural_frequencies(n, scale=gamma) replaces it, with the same numbers
    ("attnlib.circle", "lorentzian_frequencies"): (
        "attnlib.circle._kuramoto._lorentzian_frequencies"
    ),
    ("attnlib.kuramoto", "lorentzian_frequencies"): (
        "attnlib.circle._kuramoto._lorentzian_frequencies"
    ),
    ("attnlib.extremisers", "DensityResult"): "attnlib.extremisers.Configuration",
    ("attnlib.clustering", "cluster_count_from_gram"): (
        "attnlib.metrics._cluster_count_from_gram"
    ),
    ("attnlib.gaussian", "condition_number"): (
        "attnlib.gaussian._dynamics.condition_number"
    ),
    ("attnlib.gaussian", "disc_coordinates"): (
        "attnlib.gaussian._dynamics.disc_coordinates"
    ),
}
#: The time-stepping driver's internals that attnlib.integrate exported: no longer
#: public (not in __all__), still resolved for one release with a warning.
INTERNALS = {
    ("attnlib.integrate", n): "attnlib._stepping"
    for n in ("output_times", "check_observables", "planned_steps", "run_explicit")
} | {("attnlib.integrate", "MAX_STEPS"): "attnlib._stepping"}


@pytest.mark.parametrize("module", sorted(OLD_ALL))
def test_every_old_name_resolves_from_its_old_module(module):
    mod = importlib.import_module(module)
    for name in OLD_ALL[module]:
        if (module, name) in DEPRECATED:
            with pytest.warns(DeprecationWarning, match=name) as rec:
                home, _, new = DEPRECATED[module, name].rpartition(".")
                assert getattr(mod, name) is getattr(importlib.import_module(home), new)
            assert len(rec) == 1
            continue
        if (module, name) in INTERNALS:
            with pytest.warns(DeprecationWarning, match=f"integrate.{name} is dep"):
                home = importlib.import_module(INTERNALS[module, name])
                assert getattr(mod, name) is getattr(home, name)
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert getattr(mod, name) is not None, f"{module}.{name}"
    ns: dict = {}
    with warnings.catch_warnings():  # star import keeps every public old name
        warnings.simplefilter("ignore", DeprecationWarning)
        exec(f"from {module} import *", ns)
    # the internals and the deprecated aliases are no longer listed in __all__
    internal = {n for m, n in INTERNALS if m == module}
    aliases = {n for m, n in DEPRECATED if m == module}
    assert set(OLD_ALL[module]) - internal - aliases <= set(ns)
    assert not internal & set(ns)  # the internals are no longer exported


def _new_home(message: str):
    """The object that the warning's new spelling names."""
    new = message.split(": use ", 1)[1].split(" ")[0]
    module, _, name = new.rpartition(".")
    return getattr(importlib.import_module(module), name)


@pytest.mark.parametrize("module", sorted(MOVED_ALL))
def test_every_moved_name_warns_once_naming_its_new_home(module):
    mod = importlib.import_module(module)  # importing the old path is silent
    for name in MOVED_ALL[module]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            obj = getattr(mod, name)
        notes = [w for w in caught if issubclass(w.category, DeprecationWarning)]
        assert len(notes) == 1, (module, name, [str(w.message) for w in caught])
        message = str(notes[0].message)
        assert message.startswith(f"{module}.{name} is deprecated in attnlib"), message
        new = message.split(": use ", 1)[1]
        assert new.startswith("attnlib.") and not new.startswith(module + "."), new
        assert _new_home(message) is obj, message
        # the new home is no shim: reading the object there is silent
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            _new_home(message)


def test_the_old_import_forms_keep_working():
    with pytest.warns(DeprecationWarning, match="use attnlib.circle.simulate_angles"):
        from attnlib.angles import simulate_angles
    assert simulate_angles is al.circle.simulate_angles
    with pytest.warns(DeprecationWarning, match="use attnlib.gaussian.PRESETS"):
        from attnlib.scenarios import GAUSSIAN_PRESETS
    assert GAUSSIAN_PRESETS is al.gaussian.PRESETS
    import attnlib.normalisation as old

    assert old is al.normalisation
    with pytest.warns(DeprecationWarning, match="attnlib.frontiers.NormalisedModel"):
        assert old.NormalisedModel is al.frontiers.NormalisedModel
    ns: dict = {}
    with pytest.warns(DeprecationWarning) as rec:
        exec("from attnlib.hardmax import *", ns)
    assert {"Hardmax", "hardmax_weights"} <= set(ns) and len(rec) == 2
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        al.angles.nothing  # noqa: B018


def test_the_moved_names_are_the_same_objects():
    from attnlib import circle, clustering, metrics, sweep
    from attnlib.circle import _angles, _kuramoto, _meanfield
    from attnlib.clustering import _ensemble, _phase, _wendel

    assert clustering.simulate_ensemble is _ensemble.simulate_ensemble
    assert clustering.PairFraction is metrics.PairFraction
    assert clustering.phase_diagram is _phase.phase_diagram
    assert clustering.sweep is sweep.sweep
    assert clustering.wendel_probability is _wendel.wendel_probability
    assert circle.angle_velocity is _angles.angle_velocity
    assert circle.Kuramoto is _kuramoto.Kuramoto
    assert circle.mean_field is _meanfield.mean_field
    assert circle.angle_clusters is metrics.angle_clusters


# --------------------------------------------------------------- result names
def test_results_share_their_names_and_keep_deprecated_aliases():
    from attnlib.circle import CircleModel, mean_field, simulate_angles
    from attnlib.extremisers import energy_flow

    tr = simulate_angles(CircleModel(beta=1.0), np.array([0.0, 1.0]), t_final=1.0)
    assert isinstance(tr, al.Trajectory) and tr.method == "rk4"
    sol = mean_field(
        lambda t: np.full_like(t, 1 / (2 * np.pi)),
        beta=1.0,
        times=[0, 0.1],
        grid_size=32,
    )
    assert sol.states.shape == (2, 32) and np.array_equal(sol.final, sol.states[-1])
    with pytest.warns(DeprecationWarning, match="use Trajectory.states"):
        assert sol.densities is sol.states
    r = energy_flow(sample_sphere(5, 2, rng=0), np.eye(2), steps=6, record_every=4)
    assert r.info["step_indices"].tolist() == [0, 4, 6] and r.n_steps == 6
    with pytest.warns(DeprecationWarning, match=r"info\['step_indices'\]"):
        assert r.steps is r.info["step_indices"]


# ------------------------------------------------------------- validate once
def test_one_eigvalsh_per_model_and_none_per_step(monkeypatch):
    calls = []
    eigvalsh = np.linalg.eigvalsh

    def counted(a, *args, **kw):
        calls.append(np.shape(a))
        return eigvalsh(a, *args, **kw)

    monkeypatch.setattr(np.linalg, "eigvalsh", counted)
    Q = np.array([[1.0, 0.2, 0.0], [0.0, 0.9, 0.1], [0.0, 0.0, 1.1]])
    m = Model(beta=2.0, Q=Q, K=Q)  # Q^T K symmetric PSD: the tiled path
    assert len(calls) == 1
    tr = simulate(m, sample_sphere(16, 3, rng=0), t_final=1.0, dt=0.01, method="rk4")
    assert tr.n_steps == 100
    assert len(calls) == 1  # 400 field evaluations, no further test
    Model(beta=1.0)  # the identity needs none
    assert len(calls) == 1


def test_rhs_validates_nothing_and_simulate_checks_X0_without_the_field(monkeypatch):
    import attnlib.attention as att

    checks, fields = [], []
    unit = att.check_unit_norm
    monkeypatch.setattr(
        att, "check_unit_norm", lambda *a, **k: (checks.append(1), unit(*a, **k))
    )
    field = Model._field
    monkeypatch.setattr(
        Model, "_field", lambda self, X, b: (fields.append(1), field(self, X, b))[1]
    )
    m = Model(beta=1.0)
    X0 = sample_sphere(8, 3, rng=1)
    simulate(m, X0, times=[0.0])
    assert fields == [] and len(checks) == 1
    simulate(m, X0, t_final=1.0, dt=0.1, method="rk4")
    assert len(fields) == 40 and len(checks) == 2  # one check per call
    with pytest.raises(ValueError, match="token dimension"):
        simulate(Model(Q=np.eye(4)), X0, t_final=1.0)
    with pytest.raises(ValueError, match="ensemble"):
        simulate(Model(beta=[1.0, 2.0]), X0, t_final=1.0)
    assert len(fields) == 40


# ------------------------------------------- one field evaluation per stage
def _models():
    from attnlib.attention import MeasureModel
    from attnlib.frontiers import CausalModel
    from attnlib.frontiers import Hardmax
    from attnlib.frontiers import NormalisedModel

    Q = np.array([[1.0, 0.2, 0.0], [0.0, 0.9, 0.1], [0.0, 0.0, 1.1]])
    return {
        "Model": (lambda: Model(beta=1.0), "kernel", 1.0),
        "Model usa QK": (
            lambda: Model(beta=1.0, Q=Q, normalization="usa"),
            "kernel",
            1.0,
        ),
        "Model ensemble": (lambda: Model(beta=[1.0, 2.0]), "kernel", "batch"),
        "NormalisedModel post": (
            lambda: NormalisedModel("post", beta=1.0),
            "kernel",
            1.0,
        ),
        "NormalisedModel pre": (
            lambda: NormalisedModel("pre", beta=1.0),
            "kernel",
            2.0,
        ),
        "NormalisedModel peri": (
            lambda: NormalisedModel("peri", beta=1.0),
            "kernel",
            2.0,
        ),
        "CausalModel": (lambda: CausalModel(1.0, slope=0.5), "kernel", 1.0),
        "CausalModel positional": (
            lambda: CausalModel(1.0, slope=0.5, normalization="positional"),
            "kernel",
            1.0,
        ),
        "MeasureModel": (lambda: MeasureModel(np.full(6, 1 / 6), 1.0), "kernel", 1.0),
        "Hardmax": (lambda: Hardmax(), "kernel", 1.0),
        "Hardmax consensus": (
            lambda: Hardmax(geometry="euclidean", consensus=True),
            "kernel",
            3.0,
        ),
    }


@pytest.mark.parametrize("method, stages", [("euler", 1), ("heun", 2), ("rk4", 4)])
@pytest.mark.parametrize("name", sorted(_models()))
def test_simulate_evaluates_each_model_once_per_stage(
    monkeypatch, name, method, stages
):
    """No model pays a field evaluation to validate X0: exactly steps x stages."""
    import attnlib._kernel as kern

    make, kind, scale = _models()[name]
    assert kind == "kernel"  # every model of the family is evaluated by the kernel
    calls = []
    field = kern.softmax_field
    monkeypatch.setattr(
        kern, "softmax_field", lambda *a, **k: (calls.append(1), field(*a, **k))[1]
    )
    model = make()
    assert isinstance(model, Dynamics)
    X0 = sample_sphere(6, 3, rng=2, batch=2 if scale == "batch" else None)
    if scale != "batch":
        X0 = X0 * scale
    tr = simulate(model, X0, t_final=0.5, dt=0.1, method=method)
    assert tr.n_steps == 5
    assert len(calls) == tr.n_steps * stages


def test_simulate_requires_the_dynamics_protocol():
    class VelocityOnly:  # what simulate used to duck-type
        sphere = True

        def velocity(self, X):
            return np.zeros_like(X)

    with pytest.raises(TypeError, match="without check_states, rhs, stable_step"):
        simulate(VelocityOnly(), sample_sphere(4, 3, rng=0), t_final=1.0)
    with pytest.raises(TypeError, match="geometry must be given"):
        simulate(lambda X: -X, sample_sphere(4, 3, rng=0), t_final=1.0)
    from attnlib.frontiers import Hardmax

    with pytest.raises(ValueError, match="stable step"):
        simulate(Hardmax(), sample_sphere(4, 3, rng=0), t_final=1.0, step_rule="glpr")


# ---------------------------------------------------------------- engine
def test_simulate_ensemble_fast_path_is_simulate_euler(rng):
    X0 = sample_sphere(6, 9, rng=rng, batch=3)
    beta = np.array([0.0, 1.5, 4.0])
    for norm in ("sa", "usa"):
        r = simulate_ensemble(
            X0, beta=beta, times=[0.0, 0.7, 1.0], dt=0.1, normalization=norm
        )
        assert r.info["reduced"] and r.n_steps == 10
        tr = simulate(
            Model(beta=beta, normalization=norm),
            X0,
            times=[0.0, 0.7, 1.0],
            dt=0.1,
            method="euler",
        )
        np.testing.assert_allclose(r.final, tr.final, rtol=0, atol=1e-13)


def test_ensemble_observables_chunked_like_unchunked(rng):
    X0 = sample_sphere(5, 3, rng=rng, batch=7)
    Q, K, V = random_qkv(3, rng=1, batch=7, value="random")
    kw = dict(
        beta=1.0,
        times=[0.0, 1.0, 2.0],
        observables={"p": PairFraction(0.1)},
        Q=Q,
        K=K,
        V=V,
    )
    a = simulate_ensemble(X0, chunk=3, **kw)
    b = simulate_ensemble(X0, chunk=100, **kw)
    np.testing.assert_array_equal(a.observables["p"], b.observables["p"])
    np.testing.assert_array_equal(a.final, b.final)


def test_phase_diagram_seed_contract_and_method_choice():
    kw = dict(betas=[0.5, 2.0, 4.0], samples=3, t_final=3.0, progress=False, rng=7)
    base = phase_diagram(6, betas_per_task=1, **kw)
    for per in (2, 3):
        other = phase_diagram(6, betas_per_task=per, **kw)
        np.testing.assert_array_equal(other.probability, base.probability)
    ref = phase_diagram(6, method="reference", **kw)
    np.testing.assert_allclose(ref.probability, base.probability, atol=1e-12)
    assert base.method == "fast" and ref.method == "reference"
    q = phase_diagram(6, qkv="ginibre/identity", **kw)
    assert q.method == "reference"
    with pytest.warns(UserWarning, match="method='reference'"):
        phase_diagram(6, qkv="ginibre/identity", method="fast", **kw)


def test_phase_task_is_a_frozen_dataclass():
    import dataclasses

    from attnlib.clustering._phase import PhaseTask

    t = PhaseTask(
        betas=(1.0,),
        d=3,
        n=4,
        samples=2,
        times=np.array([0.0, 1.0]),
        dt=0.1,
        delta=1e-3,
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.d = 4  # type: ignore[misc]


# ---------------------------------------------------------------- layering
# Each module imports only modules of a strictly lower layer: the numerical core at
# the bottom, the topic packages (each submodule of a package is a node, its
# ``__init__`` the package's node) and the namespace above it, plotting and widgets
# on top (viz and widgets are one node each).
LAYERS = {
    # the warnings of old spellings, which every layer may give
    "_deprecation": -1,
    **dict.fromkeys(["_validation", "_lazy", "_version", "_results"], 0),
    # the old module paths, served by name (no import of the new homes)
    "_moved": 0.5,
    # the compiled field: its kernels import nothing of attnlib; its switch sits
    # between the validation it uses and the numpy kernel that hands work to it
    **dict.fromkeys(["_compiled_numba", "_compiled_jax"], 0),
    "_compiled": 0.5,
    **dict.fromkeys(["_progress", "_special", "_kernel", "_sinkhorn", "_control"], 1),
    **dict.fromkeys(["metrics", "symbolic"], 1),
    # the sphere's operations, then the geometries over them, below the models
    "sphere": 1.5,
    "geometry": 1.75,
    **dict.fromkeys(["_stepping", "sweep", "attention", "energy"], 2),
    **dict.fromkeys(["equiangular", "integrate", "_sphere_meanfield"], 3),
    # the attention variants of the modelling chapter
    "_variants": 3.5,
    # the circle
    "circle._kuramoto": 1,
    "circle._angles": 4,
    "circle._meanfield": 5,
    "circle._scenarios": 5.5,
    # clustering
    **dict.fromkeys(["clustering._ensemble", "clustering._wendel"], 3),
    "clustering._phase": 4,
    # the Gaussian case
    "gaussian._dynamics": 4,
    "gaussian._presets": 5,
    # energy extremisers
    "extremisers._flows": 3,
    "extremisers._presets": 4,
    # the models of Chapter 6 (frontiers), thin layers over the ones above
    "frontiers._density_modes": 1,
    **dict.fromkeys(
        ["frontiers._hardmax", "frontiers._metastability", "frontiers._causal"], 3
    ),
    # value matrices resampled at every layer (on the kernel and the driver)
    "frontiers._resampled": 3,
    **dict.fromkeys(["frontiers._noise", "frontiers._layernorm"], 4),
    # Mix-LN, nGPT and several heads (over the models and the equiangular ODE)
    "frontiers._zoo": 4,
    "frontiers._scenarios": 5,
    # the stationary states of the noisy dynamics (over the noise threshold)
    "frontiers._stationary": 5,
    # attention plus a perceptron block on the circle (over the angle model)
    "frontiers._ffn": 5,
    # the faces of the topic packages
    **dict.fromkeys(
        ["circle", "clustering", "gaussian", "extremisers", "frontiers"], 6
    ),
    **dict.fromkeys(["__init__", "nets"], 7),
    **dict.fromkeys(["viz"], 8),
    **dict.fromkeys(["widgets"], 9),
}
#: Packages drawn as one node (their modules import each other freely).
WHOLE = ("viz", "widgets", "nets")


def _node(path: Path) -> str:
    rel = path.relative_to(ROOT / "attnlib").with_suffix("")
    parts = list(rel.parts)
    if len(parts) > 1 and parts[0] in WHOLE:
        return parts[0]
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def _as_node(dotted: str) -> str:
    """The node of ``dotted`` (a module under attnlib, without the prefix)."""
    parts = dotted.split(".")
    if parts[0] in WHOLE:
        return parts[0]
    return dotted if dotted in LAYERS else "__init__"


def _deps(path: Path) -> set[str]:
    """The modules of attnlib that ``path`` imports (at any depth in the file)."""
    node = _node(path)
    rel = path.relative_to(ROOT / "attnlib").with_suffix("")
    # the package the file is in, as parts under attnlib
    here = list(rel.parts[:-1])
    out = set()
    for n in ast.walk(ast.parse(path.read_text())):
        if isinstance(n, ast.Import):
            out.update(
                _as_node(a.name.split(".", 1)[1])
                for a in n.names
                if a.name.startswith("attnlib.")
            )
            continue
        if not isinstance(n, ast.ImportFrom):
            continue
        if n.level == 0:
            if not (n.module or "").startswith("attnlib"):
                continue
            base = n.module.split(".")[1:]
        else:
            base = here[: len(here) - (n.level - 1)] + (
                n.module.split(".") if n.module else []
            )
        if base and ".".join(base) in LAYERS or (base and base[0] in WHOLE):
            out.add(_as_node(".".join(base)))
            continue
        # a name of a package: a submodule of it, or a name of its __init__
        for a in n.names:
            sub = ".".join([*base, a.name])
            if sub in LAYERS or (base and base[0] in WHOLE):
                out.add(_as_node(sub))
            else:
                out.add(_as_node(".".join(base)) if base else "__init__")
    out.discard(node)
    return out


def test_imports_are_layered_and_acyclic():
    for path in sorted((ROOT / "attnlib").rglob("*.py")):
        node = _node(path)
        assert node in LAYERS, f"{node} has no layer"
        for dep in _deps(path):
            assert LAYERS[dep] < LAYERS[node], (
                f"{path.relative_to(ROOT)} imports {dep} (layer {LAYERS[dep]}) from "
                f"layer {LAYERS[node]}"
            )
    # strictly decreasing layers along every import: no cycle is possible


def private_imports(source: str) -> list[str]:
    """Names with a leading underscore imported from another module of the package
    (a private module itself, ``from . import _kernel``, is fine: its names are its
    interface to the rest of the package)."""
    out = []
    for n in ast.walk(ast.parse(source)):
        if not isinstance(n, ast.ImportFrom):
            continue
        # relative, or absolute from attnlib (``from attnlib.viz import _x``)
        if n.level > 0 or (n.module or "").startswith("attnlib"):
            out += [
                a.name
                for a in n.names
                if a.name.startswith("_") and not a.name.endswith("__") and n.module
            ]
    return out


def test_no_private_name_is_imported_across_modules():
    found = {
        str(p.relative_to(ROOT)): private_imports(p.read_text())
        for p in sorted((ROOT / "attnlib").rglob("*.py"))
        if "nets" not in p.parts  # the trained networks' package is its own
    }
    assert not {k: v for k, v in found.items() if v}
    assert private_imports("from .energy import _weights, energy") == ["_weights"]
    assert private_imports("from . import _kernel as kern") == []
    assert private_imports("from attnlib.viz import _frame_png") == ["_frame_png"]
    assert private_imports("from attnlib.viz._render import frame_png") == []
    assert private_imports("from numpy import _core") == []


@pytest.mark.parametrize(
    "module",
    [
        "attnlib",
        "attnlib.causal",
        "attnlib.hardmax",
        "attnlib.noise",
        "attnlib.normalisation",
        "attnlib.staircase",
        "attnlib.modes",
        "attnlib.frontiers",
    ],
)
def test_import_attnlib_is_light(module):
    r = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {module}"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    mods = {
        line.split("|")[-1].strip()
        for line in r.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    assert "attnlib" in mods and "numpy" in mods
    for heavy in (
        "scipy.integrate",
        "scipy.special",
        "scipy.sparse",
        "scipy.optimize",
        "matplotlib",
        "sympy",
        "ipywidgets",
        "tqdm",
        "IPython",
    ):
        assert heavy not in mods, f"import {module} imports {heavy}"


# ------------------------------------- inputs that gave NaN or unclear errors
@pytest.mark.parametrize(
    "call, error, match",
    [
        (
            lambda: al.project(np.array([[np.nan, 0, 1.0]]), np.ones((1, 3))),
            ValueError,
            "x must contain only finite",
        ),
        (lambda: al.equiangular_rhs(np.nan, beta=1.0, n=4), ValueError, "gamma"),
        (
            lambda: al.extremisers.uniform_energy(beta=1e300, d=3),
            ValueError,
            "log=True",
        ),
        (
            lambda: al.gaussian._dynamics.disc_coordinates(np.zeros((2, 2))),
            ValueError,
            "non-zero",
        ),
        (
            lambda: al.gaussian._dynamics.disc_coordinates(np.diag([1.0, -1.0])),
            ValueError,
            "positive semi-definite",
        ),
        (
            lambda: al.gaussian.effective_rank(np.diag([1.0, -1.0])),
            ValueError,
            "positive semi-definite",
        ),
        (
            lambda: al.gaussian.riccati_covariance(
                Model(geometry="euclidean"), np.eye(2), [0.0, 0.6]
            ),
            ValueError,
            "blow-up time t\\* = 0.5",
        ),
        (
            lambda: al.gaussian.riccati_covariance(
                Model(geometry="euclidean"), np.diag([1.0, 0.0]), [0.5]
            ),
            ValueError,
            "blow-up",
        ),
        (lambda: sample_sphere(3, 2, rng=0, dtype=int), TypeError, "floating"),
        (lambda: al.sinkhorn(np.zeros((0, 0))), ValueError, "non-empty"),
        (lambda: al.gaussian.mardia_kurtosis(np.zeros((5, 2))), ValueError, "singular"),
        (
            lambda: simulate(
                Model(), sample_sphere(3, 3, rng=0), t_final=0.1, save_states=1
            ),
            TypeError,
            "save_states must be a bool",
        ),
        (
            lambda: simulate_ensemble(
                sample_sphere(3, 3, rng=0, batch=2),
                beta=1.0,
                times=[0, 0.1],
                reduce="yes",
            ),
            TypeError,
            "reduce must be a bool",
        ),
        (
            lambda: simulate_ensemble(
                sample_sphere(3, 3, rng=0, batch=2),
                beta=1.0,
                times=[0, 0.1],
                progress=None,
            ),
            TypeError,
            "progress must be a bool",
        ),
    ],
)
def test_bad_input_is_a_clear_error(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_former_silent_nans_are_finite_values():
    from attnlib.circle import CircleModel, angle_velocity, kernel_coefficients
    from attnlib.extremisers import gegenbauer_coefficients, uniform_energy

    a, b = kernel_coefficients(beta=1e300, K=3)
    assert np.all(np.isfinite(a)) and np.all(np.isfinite(b))
    np.testing.assert_allclose(a[1] * np.sqrt(2 * np.pi * 1e300), 2.0, rtol=1e-14)
    assert np.isfinite(uniform_energy(beta=1e300, d=3, log=True))
    assert np.all(
        np.isfinite(gegenbauer_coefficients(beta=1e12, d=3, kmax=4, scaled=True))
    )
    # the uniform energy in high dimension is 0F1(; d/2; beta^2/4), not 0
    d, beta = 1000, 1.0
    series = sum(
        (beta**2 / 4) ** k
        / (np.prod(d / 2 + np.arange(k)) * np.prod(np.arange(1, k + 1)))
        for k in range(12)
    )
    assert uniform_energy(beta=beta, d=d) == pytest.approx(series, rel=1e-14)
    assert uniform_energy(beta=1.0, d=3) == pytest.approx(np.sinh(1.0), rel=1e-14)
    np.testing.assert_array_equal(al.equiangular_gamma([0.0], beta=1.0, n=4), [0.0])
    th = [0.0, 1.0, 2.5]
    np.testing.assert_allclose(CircleModel(beta=1.0)(th), angle_velocity(th, beta=1.0))


def test_model_block_given_as_a_float_integer():
    X = sample_sphere(300, 3, rng=0)
    m = Model(block=64.0)
    assert m.block == 64 and isinstance(m.block, int)
    np.testing.assert_allclose(m.velocity(X), Model().velocity(X), atol=1e-15)


@pytest.mark.parametrize("scale", [1e2, 1e5])
def test_sinkhorn_of_huge_logits_converges(scale):
    L = scale * np.random.default_rng(0).standard_normal((2, 7, 7))
    r = al.sinkhorn(L)
    assert r.converged and r.error <= 1e-12
    np.testing.assert_allclose(r.matrix.sum(axis=-1), 1.0, atol=1e-12)
    np.testing.assert_allclose(r.matrix.sum(axis=-2), 1.0, atol=1e-12)
    # the plan is the transport plan of the logits: a permutation, in the limit
    assert r.n_iter <= 1000


def test_kernel_projects_before_the_usa_scaling():
    # identical tokens: a zero tangent field at a factor e^1e12 is zero, not overflow
    X = np.tile([1.0, 0.0, 0.0], (4, 1))
    W, log_scale = kern.attention_weights(kern.logits(X, 1e12), "usa", shift=1e12)
    F = kern.aggregate(W, X, log_scale, tangent=X)
    assert np.all(F == 0)
    F = kern.measure_field(
        X, X, np.full(4, 0.25), beta=1e12, normalization="usa", sphere=True
    )
    assert np.all(F == 0)
