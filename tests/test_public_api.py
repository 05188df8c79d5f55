"""The size of the public API, and the names retired from it.

The public names are those in the ``__all__`` of a module or package of attnlib whose
name has no leading underscore (the pages of the library reference), the trained
networks (``attnlib.nets``) apart. Each retired name keeps working for one minor
release: reading it gives one DeprecationWarning that names what to use instead.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import warnings

import pytest

import attnlib

#: The most public names the library may have (without ``attnlib.nets``).
MAX_PUBLIC = 200

#: Every name retired from the public API, by the module it was public in.
RETIRED = {
    "attnlib.circle": [
        "AngleTrajectory",
        "lorentzian_frequencies",
        "particle_run",
        "density_run",
    ],
    "attnlib.clustering": ["cluster_count_from_gram"],
    "attnlib.extremisers": [
        "DensityResult",
        "PRESETS",
        "interaction_matrix",
        "extremiser_run",
    ],
    "attnlib.frontiers": [
        "SCHEMES",
        "equiangular_scheme_rhs",
        "noisy_rates",
        "cluster_energy",
        "weighted_angle_velocity",
        "scheme_solutions",
    ],
    "attnlib.gaussian": [
        "condition_number",
        "disc_coordinates",
        "KERNEL_CHOICES",
        "CloudScenario",
        "cloud_scenario",
        "ellipse_points",
    ],
    "attnlib.geometry": ["GEOMETRIES"],
    "attnlib.metrics": ["cluster_count_from_gram"],
    "attnlib.sphere": ["tangent_frame"],
    "attnlib.viz": [
        "describe",
        "frame_dpi",
        "player_html",
        "record_text_sizes",
        "mark_text_size",
        "smallest_text",
    ],
    "attnlib.viz.screens": [
        "DESKTOP_COLUMN_PX",
        "PHONE_COLUMN_PX",
        "TARGET_PX",
        "attach_phone",
        "figure_text",
        "one_column",
        "phone_image",
        "screen_pngs",
        "without_phone",
    ],
    "attnlib.viz.circle": [
        "particle_run",
        "draw_circle",
        "particles_beta_animation",
        "density_animation",
    ],
    "attnlib.viz.clustering": [
        "animate_phase_diagrams",
        "animate_inner_product_histograms",
    ],
    "attnlib.viz.extremisers": ["animate_lambda_sweep"],
    "attnlib.viz.frontiers": ["SCHEME_COLORS", "draw_cells", "frames_animation"],
    "attnlib.viz.gaussian": [
        "ellipse_points",
        "CloudScenario",
        "cloud_scenario",
        "cloud_animation",
    ],
    "attnlib.viz.modelling": [
        "VARIANTS",
        "variant_model",
        "variant_field",
        "usa_clock",
        "variant_trajectory",
        "animate_states",
    ],
    "attnlib.widgets.circle": ["CircleParticles", "CircleDensity"],
    "attnlib.widgets.extremisers": ["PRESETS", "interaction_matrix"],
    "attnlib.widgets.frontiers": [
        "SchemeExplorer",
        "CausalExplorer",
        "TemperatureExplorer",
        "four_clusters",
        "causal_run",
        "voronoi_tokens",
        "temperature_runs",
    ],
    "attnlib.widgets.gaussian": ["PRESETS", "preset_model"],
    "attnlib.widgets.modelling": ["SphereExplorer"],
    # deprecated aliases that were still listed in __all__
    "attnlib.symbolic": ["NormRate", "EnergyGradientIdentity", "TwoParticleAngle"],
}


def public_modules() -> list:
    """``attnlib`` and its modules and packages without a leading underscore in
    their name, ``attnlib.nets`` apart."""
    names = ["attnlib"] + [
        m.name
        for m in pkgutil.walk_packages(attnlib.__path__, "attnlib.")
        if not any(p.startswith("_") for p in m.name.split(".")[1:])
        and m.name.split(".")[1] != "nets"
    ]
    return [importlib.import_module(n) for n in names]


def public_objects(modules) -> dict:
    """The distinct public objects: a class or function once however many modules
    list it; a constant once per module that lists it. A name whose reading warns
    (an old spelling still served) is not public."""
    out: dict = {}
    for mod in modules:
        for name in getattr(mod, "__all__", ()):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                obj = getattr(mod, name)
            if caught or inspect.ismodule(obj):
                continue
            key = id(obj) if callable(obj) else (mod.__name__, name)
            out.setdefault(key, f"{mod.__name__}.{name}")
    return out


def test_at_most_200_public_names():
    found = public_objects(public_modules())
    assert len(found) <= MAX_PUBLIC, sorted(found.values())
    # the count sees the API: the core, every topic package, the front ends
    names = set(found.values())
    assert {"attnlib.simulate", "attnlib.circle.simulate_angles"} <= names
    assert {"attnlib.viz.caption", "attnlib.widgets.show"} <= names
    assert len(found) > 150


def test_the_count_counts_a_constant_per_module_and_a_function_once():
    class Module:
        __name__ = "m"
        __all__ = ["K", "f", "g"]
        K = (1, 2)

        @staticmethod
        def f():
            pass

        g = f

    class Other(Module):
        __name__ = "n"

    assert len(public_objects([Module, Other])) == 3  # K twice, f once


def test_no_public_name_warns():
    for mod in public_modules():
        for name in getattr(mod, "__all__", ()):
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                getattr(mod, name)


def _use(message: str) -> str:
    return message.split(": use ", 1)[1]


@pytest.mark.parametrize(
    "module, name", [(m, n) for m, names in RETIRED.items() for n in names]
)
def test_a_retired_name_warns_once_naming_its_replacement(module, name):
    mod = importlib.import_module(module)
    assert name not in vars(mod)  # served by the module's __getattr__ only
    if module != "attnlib.viz.screens":  # a module of old paths lists its names
        assert name not in mod.__all__
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        obj = getattr(mod, name)
    assert len(caught) == 1, [str(w.message) for w in caught]
    assert caught[0].category is DeprecationWarning
    message = str(caught[0].message)
    assert message.startswith(f"{module}.{name} is deprecated in attnlib"), message
    # the replacement is a name that resolves, silently
    new = _use(message).split(" ", 1)[0]
    home, _, attr = new.rpartition(".")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        replacement = getattr(importlib.import_module(home), attr)
    if "(not public" in message or replacement is obj:
        assert replacement is obj
    elif isinstance(obj, type):  # a holder class: what the factory returns
        assert issubclass(obj, replacement)
    else:  # a player that an explorer or a figure covers, or a panel's helper
        assert callable(replacement)


def test_every_retired_name_is_listed():
    served = {}
    for mod in public_modules():
        homes = getattr(getattr(mod, "__getattr__", None), "homes", {})
        served.update({(mod.__name__, n): h for n, h in homes.items()})
    listed = {(m, n) for m, names in RETIRED.items() for n in names}
    assert set(served) <= listed
    assert {m for m, _ in listed - set(served)} == {
        "attnlib.viz.screens",  # the module of old paths
        "attnlib.symbolic",  # its own __getattr__, older than this list
    }
