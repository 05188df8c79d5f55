"""The shape of the layer above the kernel, checked on the code itself.

* **Result classes.** A *result class* is a dataclass that a public callable of the
  numerical library returns (named in its return annotation) and that holds what it
  is given (no ``__post_init__``: the models, which validate their arguments, are
  not results). The library has at most ``MAX_RESULT_CLASSES`` of them: time
  series share :class:`attnlib.Trajectory`.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
import types
import typing
import warnings

import pytest

import attnlib

MAX_RESULT_CLASSES = 10
#: The front ends return figures and widgets, not results.
FRONT_ENDS = ("attnlib.viz", "attnlib.widgets")


def _modules():
    out = [attnlib]
    for info in pkgutil.walk_packages(attnlib.__path__, "attnlib."):
        if info.name.startswith(FRONT_ENDS):
            continue
        out.append(importlib.import_module(info.name))
    return out


def _public_callables():
    seen = set()
    for mod in _modules():
        for name in getattr(mod, "__all__", ()):
            with warnings.catch_warnings():  # deprecated aliases resolve too
                warnings.simplefilter("ignore", DeprecationWarning)
                obj = getattr(mod, name, None)
            if callable(obj) and id(obj) not in seen:
                seen.add(id(obj))
                yield obj


def _classes_in(annotation) -> set[type]:
    """The classes named in a resolved annotation (unions, generics)."""
    if isinstance(annotation, type) and not typing.get_args(annotation):
        return {annotation}
    out = set()
    for arg in typing.get_args(annotation):
        out |= _classes_in(arg)
    origin = typing.get_origin(annotation)
    if isinstance(origin, type) and origin is not types.UnionType:
        out.add(origin)
    return out


def _returned(obj) -> set[type]:
    if isinstance(obj, type):
        return set()  # a class returns itself: counted if a function returns it
    fn = inspect.unwrap(obj)
    ann = getattr(fn, "__annotations__", {}).get("return")
    if isinstance(ann, str):  # from __future__ import annotations
        try:
            ann = eval(ann, getattr(fn, "__globals__", {}))  # noqa: S307
        except Exception as exc:  # noqa: BLE001 - reported with the callable's name
            msg = f"cannot resolve {fn.__qualname__} -> {ann}: {exc}"
            raise AssertionError(msg) from exc
    return _classes_in(ann)


def result_classes(callables=None) -> set[type]:
    out = set()
    for obj in callables if callables is not None else _public_callables():
        for cls in _returned(obj):
            if dataclasses.is_dataclass(cls) and not hasattr(cls, "__post_init__"):
                out.add(cls)
    return out


def test_at_most_ten_result_classes():
    found = result_classes()
    names = sorted(f"{c.__module__}.{c.__qualname__}" for c in found)
    print(len(found), "result classes:", *names, sep="\n")
    assert attnlib.Trajectory in found  # the walk sees the library's results
    assert len(found) <= MAX_RESULT_CLASSES, "\n".join(names)


def test_the_count_sees_a_new_result_class():
    @dataclasses.dataclass(frozen=True)
    class Extra:
        value: float

    def solver() -> Extra:
        return Extra(1.0)

    def optional_solver() -> Extra | None:
        return None

    @dataclasses.dataclass(frozen=True)
    class Validated:
        value: float

        def __post_init__(self):
            pass

    def model() -> Validated:
        return Validated(1.0)

    # the annotations of this module are strings naming locals: resolve them here
    solver.__annotations__["return"] = Extra
    optional_solver.__annotations__["return"] = Extra | None
    model.__annotations__["return"] = Validated

    assert result_classes([solver]) == {Extra}
    assert result_classes([optional_solver, model]) == {Extra}


@pytest.mark.parametrize(
    "old, module",
    [
        ("GaussianTrajectory", "gaussian"),
        ("DensityTrajectory", "meanfield"),
        ("EnergyFlow", "extremisers"),
        ("MergeFlow", "staircase"),
        ("EquiangularScheme", "normalisation"),
        ("EnsembleRun", "ensemble"),
        ("EnsembleResult", "ensemble"),
        ("NoisyTrajectory", "noise"),
    ],
)
def test_old_time_series_names_are_the_trajectory(old, module):
    mod = importlib.import_module(f"attnlib.{module}")
    assert getattr(mod, old) is attnlib.Trajectory


def test_a_solvers_own_quantities_read_as_attributes():
    import numpy as np

    from attnlib.gaussian import integrate_gaussian

    model = attnlib.Model(sphere=False)
    tr = integrate_gaussian(model, np.zeros(2), np.eye(2), t_final=1.0)
    assert tr.means is tr.info["means"] and tr.blowup
    assert tr.blowup_time == pytest.approx(0.5, rel=1e-6)  # Sigma = I / (1 - 2t)
    assert "covariances" in dir(tr)
    with pytest.raises(AttributeError, match="no attribute 'nope'.*blowup"):
        tr.nope  # noqa: B018 - the lookup is what is tested
    with pytest.raises(dataclasses.FrozenInstanceError):
        tr.means = None
