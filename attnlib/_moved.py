"""The module paths of earlier releases, served for one minor release with a warning.

The topic modules became packages (``attnlib.angles`` is now
:mod:`attnlib.circle`, ``attnlib.normalisation`` is :mod:`attnlib.frontiers`, ...)
and :mod:`attnlib.scenarios` was split among them. Each old path is a module
registered in :data:`sys.modules` by :func:`install`, so that ``import
attnlib.angles`` and ``from attnlib.angles import simulate_angles`` keep working:
importing it is silent, and each name read from it gives one
:class:`DeprecationWarning` naming its new home. The shims are modules without
files, so that no file of the old layout is left at its old path.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

from ._deprecation import warn_moved

_MISSING = object()

#: old module -> (the package that now holds its names, the old names).
MOVED_MODULES: dict[str, tuple[str, tuple[str, ...]]] = {
    "angles": (
        "circle",
        (
            "to_angles",
            "from_angles",
            "bessel_modes",
            "kernel_coefficients",
            "angle_velocity",
            "torus_energy",
            "CircleModel",
            "simulate_angles",
        ),
    ),
    "kuramoto": (
        "circle",
        ("order_parameter", "Kuramoto", "lorentzian_frequencies", "kuramoto_r"),
    ),
    "meanfield": (
        "circle",
        (
            "growth_rates",
            "dominant_mode",
            "spaced_state_eigenvalues",
            "mean_field",
            "DensityTrajectory",
            "sample_density",
            "circle_wasserstein",
        ),
    ),
    "ensemble": ("clustering", ("EnsembleResult", "simulate_ensemble")),
    "phase": (
        "clustering",
        (
            "QKV_KINDS",
            "VALUE_KINDS",
            "random_qkv",
            "phase_transition_curve",
            "PhaseDiagram",
            "phase_diagram",
        ),
    ),
    "wendel": (
        "clustering",
        (
            "wendel_probability",
            "HemisphereEstimate",
            "hemisphere_probability_mc",
            "in_hemisphere",
        ),
    ),
    "normalisation": (
        "frontiers",
        (
            "SCHEMES",
            "NormalisedModel",
            "sphere_clock",
            "EquiangularScheme",
            "equiangular_scheme",
            "equiangular_scheme_rhs",
            "scheme_time_to",
        ),
    ),
    "causal": (
        "frontiers",
        (
            "CAUSAL_NORMALIZATIONS",
            "CausalModel",
            "alibi_bias",
            "positional_weights",
            "renyi_centres",
            "retention_profile",
            "retention_linear",
            "retention_estimate",
        ),
    ),
    "hardmax": ("frontiers", ("hardmax_weights", "Hardmax")),
    "noise": (
        "frontiers",
        (
            "funk_hecke",
            "noisy_rates",
            "noise_threshold",
            "NoisyTrajectory",
            "simulate_noisy",
        ),
    ),
    "modes": ("frontiers", ("ModeCount", "circle_modes", "line_modes", "count_modes")),
    "staircase": (
        "frontiers",
        ("cluster_energy", "MergeFlow", "merge_flow", "weighted_angle_velocity"),
    ),
}

#: old module -> the private module that holds its code now (its other names, those
#: that were not in its ``__all__``, are served from there).
PRIVATE: dict[str, str] = {
    "angles": "circle._angles",
    "kuramoto": "circle._kuramoto",
    "meanfield": "circle._meanfield",
    "ensemble": "clustering._ensemble",
    "phase": "clustering._phase",
    "wendel": "clustering._wendel",
    "normalisation": "frontiers._layernorm",
    "causal": "frontiers._causal",
    "hardmax": "frontiers._hardmax",
    "noise": "frontiers._noise",
    "modes": "frontiers._density_modes",
    "staircase": "frontiers._metastability",
}

#: attnlib.scenarios was split: each of its names -> its new home.
SCENARIOS: dict[str, str] = {
    "variant_model": "attnlib.variant_model",
    **{
        n: f"attnlib._variants.{n} (not public: what the modelling figures draw)"
        for n in ("VARIANTS", "usa_clock", "variant_field", "variant_trajectory")
    },
    **{
        n: f"attnlib.circle._scenarios.{n} (not public: the run the widgets draw)"
        for n in ("particle_run", "density_run")
    },
    **{n: f"attnlib.gaussian.{n}" for n in ("ALPHA0", "SIGMA0", "preset_model")},
    "GAUSSIAN_PRESETS": "attnlib.gaussian.PRESETS",
    **{
        n: f"attnlib.gaussian._presets.{n} (not public: what the widget runs)"
        for n in ("KERNEL_CHOICES", "ellipse_points", "CloudScenario", "cloud_scenario")
    },
    **{
        f"EXTREMISER_{n}" if n == "PRESETS" else n: f"attnlib.extremisers._presets.{n}"
        " (not public: what the widget runs)"
        for n in ("PRESETS", "interaction_matrix", "extremiser_run")
    },
    "scheme_solutions": "attnlib.frontiers._scenarios.scheme_solutions"
    " (not public: what the scheme explorer draws)",
    **{
        n: f"attnlib.frontiers.{n}"
        for n in (
            "four_clusters",
            "causal_run",
            "voronoi_tokens",
            "temperature_runs",
        )
    },
}


def _resolve(new: str) -> Any:
    """The object that ``new`` (a dotted path, maybe followed by a comment) names."""
    module, _, name = new.split(" ", 1)[0].rpartition(".")
    return getattr(importlib.import_module(module), name)


def _home(new: str) -> str:
    """``new``, or, if that name was retired since, where it went."""
    module, _, name = new.split(" ", 1)[0].rpartition(".")
    mod = importlib.import_module(module)
    if name in vars(mod):
        return new
    return getattr(getattr(mod, "__getattr__", None), "homes", {}).get(name, new)


def shim(old: str, homes: dict[str, str], code: str | None = None) -> types.ModuleType:
    """A module ``old`` whose names (keys of ``homes``) are read, with a warning,
    from their new homes (the dotted paths of ``homes``); its other names without a
    leading underscore, from the module ``code`` that holds its code now."""
    module = types.ModuleType(
        old, f"Deprecated path of earlier releases: its names moved ({__name__})."
    )

    def __getattr__(name: str) -> Any:
        if name not in homes:
            if code is None or name.startswith("_"):
                raise AttributeError(f"module {old!r} has no attribute {name!r}")
            try:
                value = getattr(importlib.import_module(code), name)
            except AttributeError:
                raise AttributeError(
                    f"module {old!r} has no attribute {name!r}"
                ) from None
            warn_moved(f"{old}.{name}", f"{code}.{name} (not public)")
            return value
        home = _home(homes[name])
        warn_moved(f"{old}.{name}", home)
        return _resolve(home)

    def __dir__() -> list[str]:
        return sorted(homes)

    module.__getattr__ = __getattr__  # type: ignore[method-assign]
    module.__dir__ = __dir__  # type: ignore[method-assign]
    module.__all__ = list(homes)  # type: ignore[attr-defined]
    return module


def old_modules() -> dict[str, dict[str, str]]:
    """Every old module path -> {old name: new dotted path}."""
    out = {
        f"attnlib.{old}": {n: f"attnlib.{pkg}.{n}" for n in names}
        for old, (pkg, names) in MOVED_MODULES.items()
    }
    out["attnlib.scenarios"] = dict(SCENARIOS)
    return out


def install() -> dict[str, types.ModuleType]:
    """Register the old module paths in :data:`sys.modules`; return them by their
    name in the package (``"angles"``)."""
    out = {}
    for old, homes in old_modules().items():
        code = PRIVATE.get(old.rpartition(".")[2])
        module = sys.modules.setdefault(
            old, shim(old, homes, code and f"attnlib.{code}")
        )
        out[old.rpartition(".")[2]] = module
    return out


def retired(module: str, homes: dict[str, str], code: str | None = None) -> Any:
    """A module ``__getattr__`` for ``module`` that serves its retired names (keys of
    ``homes``) from their homes (dotted paths), each with a warning naming it; and,
    if ``code`` names the private module its code moved to, the other names without
    a leading underscore that the module had, from there."""

    def __getattr__(name: str) -> Any:
        if name not in homes:
            value = _MISSING
            if code is not None and not name.startswith("_"):
                value = getattr(importlib.import_module(code), name, _MISSING)
            if value is _MISSING:
                raise AttributeError(f"module {module!r} has no attribute {name!r}")
            warn_moved(f"{module}.{name}", f"{code}.{name} (not public)")
            return value
        home = _home(homes[name])
        warn_moved(f"{module}.{name}", home)
        return _resolve(home)

    __getattr__.homes = homes  # type: ignore[attr-defined]
    return __getattr__
