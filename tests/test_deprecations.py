"""The old spellings of the API keep working for one minor release, with a warning
that names the new spelling.

Every callable whose arguments moved (``beta`` passed by name, ``seed`` renamed
``rng``) is found by walking the public modules; its old-form call is translated with
sentinels, so that each sentinel must land on the parameter the old signature gave it,
and a DeprecationWarning must name the new form. A few calls run for real and must
give the numbers of the new form. Old module attributes and the old attribute access
to a trajectory's solver quantities warn too.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import warnings

import numpy as np
import pytest

import attnlib


def _moved():
    seen, out = set(), []
    for m in [
        "attnlib",
        *(i.name for i in pkgutil.walk_packages(attnlib.__path__, "attnlib.")),
    ]:
        parts = m.split(".")[1:]
        # the private modules too: a helper that is no longer public still takes
        # its old calls for one release
        if parts and parts[0] == "nets":
            continue
        mod = importlib.import_module(m)
        for name in getattr(mod, "__all__", ()):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                obj = getattr(mod, name)
            if isinstance(obj, type):  # a model whose constructor's arguments moved
                obj = obj.__init__
            spec = getattr(obj, "__moved_arguments__", None)
            if spec and id(obj) not in seen:
                seen.add(id(obj))
                out.append(pytest.param(obj, id=f"{obj.__module__}.{obj.__qualname__}"))
    return out


MOVED = _moved()


def test_the_walk_finds_the_moves():
    names = {p.values[0].__qualname__ for p in MOVED}
    # beta by name, seed renamed rng, the sphere flag a geometry
    assert {"energy", "mean_field", "bessel_modes", "four_clusters", "sweep"} <= names
    assert {"Model.__init__", "Hardmax", "simulate"} <= names
    assert len(MOVED) >= 40


@pytest.mark.parametrize("fn", MOVED)
def test_an_old_positional_call_binds_as_it_did(fn):
    old, n_new, renamed = fn.__moved_arguments__
    sig = inspect.signature(fn)
    if len(old) > n_new:
        sentinels = tuple(object() for _ in old)
        with pytest.warns(DeprecationWarning, match="deprecated in attnlib") as rec:
            args, kwargs = fn.translate(sentinels, {})
        bound = sig.bind_partial(*args, **kwargs).arguments
        for name, s in zip(old, sentinels):
            assert bound[name] is s, name
        # the message shows the new call: the moved names passed by keyword
        assert f"{old[n_new]}=..." in str(rec[0].message)
    shown = fn.__qualname__.split(".")[0] if fn.__name__ == "__init__" else fn.__name__
    for o, n in renamed.items():
        s, want = (True, "sphere") if o == "sphere" else (object(), None)
        with pytest.warns(DeprecationWarning, match=f"use {shown}\\({n}="):
            args, kwargs = fn.translate((), {o: s})
        assert kwargs == {n: want or s} and args == ()
    if "sphere" in renamed:
        with pytest.warns(DeprecationWarning, match="geometry='euclidean'"):
            assert fn.translate((), {"sphere": False})[1] == {"geometry": "euclidean"}


@pytest.mark.parametrize("fn", MOVED)
def test_a_call_in_the_new_form_does_not_warn(fn):
    old, n_new, renamed = fn.__moved_arguments__
    names = list(inspect.signature(fn).parameters)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        args, kwargs = fn.translate(tuple(range(n_new)), {names[-1]: 0})
    assert len(args) == n_new


def test_old_calls_give_the_new_numbers():
    X = attnlib.sample_sphere(6, 3, rng=0)
    with pytest.warns(DeprecationWarning, match=r"energy\(X, beta=\.\.\.\)"):
        old = attnlib.energy(X, 2.5)
    assert old == attnlib.energy(X, beta=2.5)
    with pytest.warns(DeprecationWarning, match=r"four_clusters\(rng=\.\.\.\)"):
        th_old, _ = attnlib.frontiers.four_clusters(16, seed=5)
    th_new, _ = attnlib.frontiers.four_clusters(16, rng=5)
    assert np.array_equal(th_old, th_new)
    # the seed contract: an integer rng gives what the same integer seed gave
    th_gen, _ = attnlib.frontiers.four_clusters(16, rng=np.random.default_rng(5))
    assert np.array_equal(th_gen, th_new)


def test_mistakes_in_an_old_call_are_still_errors():
    X = attnlib.sample_sphere(4, 3, rng=0)
    with pytest.raises(TypeError, match="at most 2 positional"):
        attnlib.energy(X, 1.0, 2.0)
    with pytest.raises(TypeError, match="multiple"):
        attnlib.energy(X, 1.0, beta=1.0)
    with pytest.raises(TypeError, match="both 'seed' and 'rng'"):
        attnlib.frontiers.four_clusters(8, seed=1, rng=1)


def test_the_warning_points_at_the_caller():
    X = attnlib.sample_sphere(4, 3, rng=0)
    with pytest.warns(DeprecationWarning) as rec:
        attnlib.energy(X, 1.0)
    assert rec[0].filename == __file__


@pytest.mark.parametrize(
    "module, old, new",
    [
        ("attnlib.circle", "AngleTrajectory", "attnlib.Trajectory"),
        ("attnlib.extremisers", "DensityResult", "Configuration"),
        ("attnlib.symbolic", "NormRate", "Derivation"),
    ],
)
def test_old_names_warn_and_resolve(module, old, new):
    mod = importlib.import_module(module)
    with pytest.warns(DeprecationWarning, match=f"use .*{new}"):
        obj = getattr(mod, old)
    assert obj.__name__ == new.rsplit(".", 1)[-1]


def test_a_trajectorys_quantities_are_read_from_info():
    theta = np.array([0.0, 0.3, 1.0])
    tr = attnlib.frontiers.merge_flow(theta, beta=2.0)
    assert "energy" in tr.info and "energy" in tr.series
    with pytest.warns(DeprecationWarning, match=r"use Trajectory.info\['energy'\]"):
        old = tr.energy
    assert old is tr.info["energy"]
    assert "energy" not in dir(tr)  # no attribute magic for editors to miss
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        tr.nope  # noqa: B018 - the lookup is what is tested


def test_series_are_declared_by_the_solver():
    from attnlib._results import trajectory

    with pytest.raises(ValueError, match="not entries of info"):
        trajectory(times=np.zeros(1), a=1, series=("b",))
    tr = trajectory(times=np.arange(3.0), a=np.arange(3), b=7, series=("a",))
    sub = tr.subsample([0, 2])
    assert sub.info["a"].tolist() == [0, 2] and sub.info["b"] == 7


def test_the_sphere_flag_is_a_geometry():
    from attnlib import Euclidean, Model, Sphere, simulate

    with pytest.warns(DeprecationWarning, match="Model\\(geometry='euclidean'\\)"):
        old = Model(beta=2.0, sphere=False)
    new = Model(2.0, geometry=Euclidean())
    assert old.geometry == new.geometry == Model(geometry="euclidean").geometry
    assert not old.sphere and Model().sphere and Model().geometry == Sphere()
    X0 = np.array([[1.0, 0.0], [0.0, 2.0]])
    with pytest.warns(DeprecationWarning, match="simulate\\(geometry='euclidean'\\)"):
        a = simulate(lambda X: -X, X0, t_final=1.0, sphere=False)
    b = simulate(lambda X: -X, X0, t_final=1.0, geometry=Euclidean())
    assert np.array_equal(a.final, b.final)
    with pytest.raises(ValueError, match="the model carries its geometry"):
        simulate(
            Model(),
            attnlib.sample_sphere(3, 3, rng=0),
            t_final=1.0,
            geometry="euclidean",
        )
