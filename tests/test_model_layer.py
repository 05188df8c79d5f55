"""The shape of the layer above the kernel, checked on the code itself.

* **Result classes.** A *result class* is a dataclass that a public callable of the
  numerical library returns (named in its return annotation) and that holds what it
  is given (no ``__post_init__``: the models, which validate their arguments, are
  not results). The particle library has at most ``MAX_RESULT_CLASSES`` of them:
  time series share :class:`attnlib.Trajectory`. The trained networks of
  :mod:`attnlib.nets` (a run of a network, a training, a corpus, their analyses)
  are a vocabulary of their own, counted apart with at most ``MAX_NET_RESULT_CLASSES``.
* **Every time-stepping loop on the driver.** A *time-stepping loop* (see
  :func:`is_time_loop`) is a loop that advances a state through time: a ``while``
  whose condition reads a time, a ``for`` over ``range`` of a step count, or a loop
  that calls a time stepper. Only the driver (``attnlib/_stepping.py``) has them; a
  driver hook (a function passed to ``drive`` as ``advance``) takes the steps the
  driver asks for, and the kernel's fused steps are called from hooks only.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import pickle
import pkgutil
import re
import types
import typing
import warnings
from pathlib import Path

import pytest

import attnlib

#: 9 result classes in 1.0.0; chapter 8 adds one concept, the stationary states of a
#: free energy and their sweeps in the noise (StationaryState, Branches), while its
#: layered runs are Trajectory objects like every other series.
MAX_RESULT_CLASSES = 11
MAX_NET_RESULT_CLASSES = 6
NETS = "attnlib.nets"
TRAINING_LOOP = "nets.train.train:"
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
    every = result_classes()
    found = {c for c in every if not c.__module__.startswith(NETS)}
    nets = every - found
    net_names = sorted(f"{c.__module__}.{c.__qualname__}" for c in nets)
    assert 0 < len(nets) <= MAX_NET_RESULT_CLASSES, "\n".join(net_names)
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
        ("DensityTrajectory", "circle"),
        ("EnergyFlow", "extremisers"),
        ("MergeFlow", "frontiers"),
        ("EquiangularScheme", "frontiers"),
        ("EnsembleRun", "clustering._ensemble"),
        ("EnsembleResult", "clustering"),
        ("NoisyTrajectory", "frontiers"),
    ],
)
def test_old_time_series_names_are_the_trajectory(old, module):
    mod = importlib.import_module(f"attnlib.{module}")
    assert getattr(mod, old) is attnlib.Trajectory


def test_a_solvers_own_quantities_are_read_from_info():
    import numpy as np

    from attnlib.gaussian import integrate_gaussian

    model = attnlib.Model(geometry="euclidean")
    tr = integrate_gaussian(model, np.zeros(2), np.eye(2), t_final=1.0)
    assert tr.info["means"] is tr.info["means"] and tr.info["blowup"]
    assert tr.info["blowup_time"] == pytest.approx(
        0.5, rel=1e-6
    )  # Sigma = I / (1 - 2t)
    # a typed field, not attribute magic: editors and type checkers see what exists
    assert "covariances" not in dir(tr) and "covariances" in tr.info
    assert {"means", "covariances"} == set(tr.series)
    with pytest.raises(AttributeError, match="no attribute 'nope'.*blowup"):
        tr.nope  # noqa: B018 - the lookup is what is tested
    with pytest.raises(dataclasses.FrozenInstanceError):
        tr.info = None
    back = pickle.loads(pickle.dumps(tr))  # to and from worker processes
    assert (
        np.array_equal(back.info["covariances"], tr.info["covariances"])
        and back.info["blowup"]
    )
    assert isinstance(back.info, types.MappingProxyType)
    sub = tr.subsample([0, -1])
    assert (
        np.array_equal(sub.info["means"], tr.info["means"][[0, -1]])
        and sub.info["kernel"] == tr.info["kernel"]
    )


# ------------------------------------------------------- every loop on the driver
#: Names of time: a ``while`` loop whose condition reads one of them runs through
#: time (``t``, ``time``, ``t_max``, ``t_final``, ``tk``, ...).
TIME_NAME = re.compile(r"^(t|tk|time|times|t_\w+)$")
#: Names of a step count: a ``for`` loop up to one of them (``range``'s stop)
#: repeats a step (``m``, the driver's count; ``steps``, ``n_steps``, ...).
STEP_COUNT = re.compile(r"^(m|\w*steps\w*)$")
#: Calls that take time steps: a loop calling one repeats them.
STEPPERS = {"rk_step", "solve_ivp", "euler_identity_steps", "drive", "run_explicit"}
#: Kernel primitives that take ``steps`` fused steps; every call of one must be in a
#: driver hook (it then takes the hook's steps, as the hook's own loop would).
STEP_PRIMITIVES = {("_kernel", "euler_identity_steps")}
DRIVER = "_stepping"  # the one module that owns the loop over time


def _names(node) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _called(node) -> set[str]:
    out = set()
    for n in _walk_body(node):
        if isinstance(n, ast.Call):
            f = n.func
            out.add(f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", ""))
    return out


def _walk_body(node):
    """ast.walk without entering nested functions (they are visited on their own)."""
    todo = list(ast.iter_child_nodes(node))
    while todo:
        n = todo.pop()
        yield n
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(n))


def is_time_loop(loop) -> bool:
    """Whether a ``for``/``while`` loop advances a state through time: a ``while``
    on a time name, a ``for`` over ``range`` of a step count, or a loop whose body
    calls a time stepper."""
    if isinstance(loop, ast.While) and any(
        TIME_NAME.match(n) for n in _names(loop.test)
    ):
        return True
    if (
        isinstance(loop, ast.For)
        and isinstance(loop.iter, ast.Call)
        and getattr(loop.iter.func, "id", "") == "range"
        and loop.iter.args
        and any(STEP_COUNT.match(n) for n in _names(_range_stop(loop.iter)))
    ):
        return True
    return bool(_called(loop) & STEPPERS)


def _range_stop(call):
    return call.args[0] if len(call.args) == 1 else call.args[1]


def _hooks(tree) -> set[str]:
    """Names of the functions passed to the driver as its ``advance`` hook."""
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "drive":
            args = n.args[:1] + [k.value for k in n.keywords if k.arg == "advance"]
            out |= {a.id for a in args if isinstance(a, ast.Name)}
    return out


def time_loops(source: str, module: str) -> list[str]:
    """``function:line`` of every time-stepping loop outside the driver and its
    hooks, and of every call of a step primitive outside a hook."""
    tree = ast.parse(source)
    hooks = _hooks(tree)
    out = []

    def visit(node, where, in_hook):
        for n in ast.iter_child_nodes(node):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{where}.{n.name}" if where else n.name
                hook = in_hook or n.name in hooks
                if (module, n.name) in STEP_PRIMITIVES:
                    continue  # its calls are checked instead
                visit(n, name, hook)
                continue
            if isinstance(n, (ast.For, ast.While)) and not in_hook:
                if is_time_loop(n):
                    out.append(f"{module}.{where or '<module>'}:{n.lineno}")
            if isinstance(n, ast.Call) and not in_hook:
                f = n.func
                name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
                if name in {p for _, p in STEP_PRIMITIVES}:
                    out.append(f"{module}.{where}:{n.lineno} calls {name}")
            visit(n, where, in_hook)

    visit(tree, "", False)
    return out


def test_every_time_stepping_loop_is_on_the_driver():
    root = Path(attnlib.__file__).parent
    found = []
    for path in sorted(root.rglob("*.py")):
        module = ".".join(path.relative_to(root).with_suffix("").parts)
        if module == DRIVER:
            continue
        found += time_loops(path.read_text(), module)
    # the one loop that is not a time discretisation of the book's dynamics: the
    # optimiser's steps of a network's training (optax updates, not a flow)
    optimiser = [f for f in found if f.startswith(TRAINING_LOOP)]
    assert len(optimiser) == 1, optimiser  # the walk still sees it
    found = [f for f in found if not f.startswith(TRAINING_LOOP)]
    assert not found, "time-stepping loops outside the driver:\n" + "\n".join(found)


@pytest.mark.parametrize(
    "src",
    [
        "def f(x, steps):\n    for k in range(steps):\n        x = x + 1\n",
        "def f(x, t_max):\n    t = 0\n    while t < t_max:\n        t += 1\n",
        "def f(x):\n    while True:\n        x = rk_step(g, x, 0.1, 'rk4')\n",
        "def f(Y):\n    euler_identity_steps(Y, 1, 1, 0.1, 3)\n",
        "def f(x):\n    def advance(s, h, m):\n        return s\n"
        "    for _ in range(m):\n        x = advance(x, 1, 1)\n",
    ],
)
def test_the_walk_sees_a_time_loop(src):
    assert time_loops(src, "m")


def test_a_driver_hook_may_take_the_drivers_steps():
    src = (
        "def f(x, times):\n"
        "    def advance(s, h, m):\n"
        "        for _ in range(m):\n"
        "            s = rk_step(g, s, h, 'rk4')\n"
        "        euler_identity_steps(s, 1, 1, h, m)\n"
        "        return s\n"
        "    for k in range(3):\n"  # not a step count
        "        pass\n"
        "    return drive(advance, x, times, dt=0.1)\n"
    )
    assert time_loops(src, "m") == []


# ------------------------------------------------------ front ends that only draw
#: What the front ends must not call: the integrators, the steppers and the velocity
#: fields. The runs they show come ready from the library (the topic packages'
#: scenarios, or a result-level function such as phase_transition_curve).
NUMERICS = re.compile(
    r"^(simulate\w*|integrate_\w+|mean_field|energy_flow|merge_flow|"
    r"density_mirror_descent|minimise_configuration|phase_diagram|run_ensemble|"
    r"equiangular_(gamma|scheme|time_to)|scheme_time_to|run_explicit|drive|rk_step|"
    r"solve_ivp|odeint|velocity|rhs|\w+_velocity|\w+_field|\w+_rhs)$"
)
FRONT_END_DIRS = ("viz", "widgets")


def front_end_numerics(source: str, where: str) -> list[str]:
    """``where:line what`` for each use of numerics in a front-end module: a
    ``linalg`` attribute (numpy's or scipy's), an import of scipy, or a call of an
    integrator, stepper or field (:data:`NUMERICS`)."""
    out = []
    for n in ast.walk(ast.parse(source)):
        if isinstance(n, ast.Attribute) and n.attr == "linalg":
            out.append(f"{where}:{n.lineno} linalg")
        elif isinstance(n, ast.Import) and any(
            a.name.split(".")[0] == "scipy" for a in n.names
        ):
            out.append(f"{where}:{n.lineno} imports scipy")
        elif isinstance(n, ast.ImportFrom) and (n.module or "").startswith("scipy"):
            out.append(f"{where}:{n.lineno} imports scipy")
        elif isinstance(n, ast.Call):
            f = n.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if NUMERICS.match(name):
                out.append(f"{where}:{n.lineno} calls {name}")
    return out


def test_the_front_ends_only_draw():
    root = Path(attnlib.__file__).parent
    found = []
    for sub in FRONT_END_DIRS:
        for path in sorted((root / sub).glob("*.py")):
            found += front_end_numerics(path.read_text(), f"{sub}/{path.name}")
    assert not found, "numerics in the front ends:\n" + "\n".join(found)


@pytest.mark.parametrize(
    "src, what",
    [
        ("import numpy as np\nw = np.linalg.eigh(S)\n", "linalg"),
        ("from scipy.special import iv\n", "imports scipy"),
        ("tr = simulate(model, X0, t_final=1.0)\n", "calls simulate"),
        ("v = model.velocity(X)\n", "calls velocity"),
        ("F = measure_field(X, X, w)\n", "calls measure_field"),
        ("sol = mean_field(rho, 1.0, times=t)\n", "calls mean_field"),
    ],
)
def test_the_front_end_walk_sees_numerics(src, what):
    found = front_end_numerics(src, "m.py")
    assert found and what in found[0], found


def front_end_imports_of_numerics(text: str) -> list[str]:
    """The names a chapter imports from ``attnlib.viz`` or ``attnlib.widgets`` that
    are the library's numerics (the presets and runners of the topic packages, which
    the front ends import): a chapter takes them from the library."""
    from attnlib._moved import SCENARIOS, _resolve

    numerics = [_resolve(home) for home in SCENARIOS.values()]

    out = []
    for n in ast.walk(ast.parse(text)):
        if not isinstance(n, ast.ImportFrom) or not (n.module or "").startswith(
            ("attnlib.viz", "attnlib.widgets")
        ):
            continue
        module = importlib.import_module(n.module)
        for alias in n.names:
            obj = getattr(module, alias.name)
            if any(obj is s for s in numerics):
                out.append(f"{n.module}.{alias.name}")
    return out


def _chapter_code(path: Path) -> str:
    """The code cells of a MyST chapter, one after the other (magics left out)."""
    jupytext = pytest.importorskip("jupytext")
    cells = jupytext.read(path).cells
    return "\n".join(
        "\n".join(ln for ln in c.source.splitlines() if not ln.startswith(("%", "!")))
        for c in cells
        if c.cell_type == "code"
    )


def test_chapters_take_numerics_from_the_library_not_the_front_ends():
    pytest.importorskip("ipywidgets")
    book = Path(attnlib.__file__).parents[1] / "book"
    found = []
    for path in sorted(book.glob("*.md")):
        code = _chapter_code(path)
        if "attnlib" in code:
            found += [
                f"{path.name}: {name}" for name in front_end_imports_of_numerics(code)
            ]
    assert not found, found


def test_the_chapter_import_walk_sees_a_preset_from_a_front_end():
    pytest.importorskip("ipywidgets")
    src = "from attnlib.widgets.gaussian import ALPHA0, gaussian_widget\n"
    assert front_end_imports_of_numerics(src) == ["attnlib.widgets.gaussian.ALPHA0"]
    assert front_end_imports_of_numerics("from attnlib.gaussian import ALPHA0\n") == []
