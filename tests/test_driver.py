"""The stepping driver: it takes the step-size controller and is its only caller,
every run ends in one :class:`Outcome`, and the equiangular ODE has one solver.

* A solver hands ``drive`` a controller (``Fixed``, ``Adaptive``, ``Backtracking``)
  and hooks; no hook calls the controller (checked on the source, by walking the
  hooks that each call of ``drive`` is given, and at run time, by a spy on every
  method of the controllers).
* How a run ended is a member of :class:`attnlib._stepping.Outcome`, which carries
  its message (and, for a failure, its error); the driver's :class:`Run` carries
  the member.
* ``equiangular_gamma`` and ``equiangular_scheme`` both integrate through
  :func:`attnlib.equiangular.solve_equiangular`, and agree.
"""

from __future__ import annotations

import ast
import inspect
import sys
from pathlib import Path

import numpy as np
import pytest

import attnlib
from attnlib import _control, _stepping
from attnlib._control import CONTROLLERS, Adaptive, Backtracking, Fixed
from attnlib._stepping import Outcome, Run, drive
from attnlib._validation import TooManyStepsError

ROOT = Path(attnlib.__file__).parent

#: The public methods of the controllers: what only the driver may call.
CONTROLLER_METHODS = {
    name
    for cls in CONTROLLERS
    for name, _ in inspect.getmembers(cls, inspect.isfunction)
    if not name.startswith("_")
}
#: The keywords of drive that take a hook (a function of the solver).
HOOK_KEYWORDS = ("advance", "bound", "observe", "finite")


# ----------------------------------------------------- no hook calls a controller
def _functions(tree: ast.AST) -> dict[str, list[ast.AST]]:
    out: dict[str, list[ast.AST]] = {}
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.setdefault(n.name, []).append(n)
    return out


def hooks_of(tree: ast.AST) -> set[str]:
    """Names of the functions passed to ``drive`` as hooks."""
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "drive":
            args = n.args[:1] + [k.value for k in n.keywords if k.arg in HOOK_KEYWORDS]
            out |= {a.id for a in args if isinstance(a, ast.Name)}
    return out


def controller_names(tree: ast.AST) -> set[str]:
    """The controller classes, and the variables bound to a controller (assigned
    one, or passed to ``drive`` as ``control``)."""
    classes = {cls.__name__ for cls in CONTROLLERS}
    out = set(classes)
    for n in ast.walk(tree):
        if (
            isinstance(n, ast.Assign)
            and isinstance(n.value, ast.Call)
            and getattr(n.value.func, "id", "") in classes
        ):
            out |= {t.id for t in n.targets if isinstance(t, ast.Name)}
        if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "drive":
            out |= {
                k.value.id
                for k in n.keywords
                if k.arg == "control" and isinstance(k.value, ast.Name)
            }
    return out


def hook_controller_calls(source: str, module: str = "m") -> list[str]:
    """``module.hook:line`` of every use of a controller inside a driver hook (its
    nested functions included): a call of a controller's method, or a reference to
    a controller or its class."""
    tree = ast.parse(source)
    hooks, ctl, funcs = hooks_of(tree), controller_names(tree), _functions(tree)
    out = []
    for hook in sorted(hooks):
        for fn in funcs.get(hook, []):
            for n in ast.walk(fn):
                if (
                    isinstance(n, ast.Call)
                    and isinstance(n.func, ast.Attribute)
                    and n.func.attr in CONTROLLER_METHODS
                    and isinstance(n.func.value, ast.Name)
                    and n.func.value.id in ctl
                ):
                    out.append(f"{module}.{hook}:{n.lineno} calls {n.func.attr}")
                elif isinstance(n, ast.Name) and n.id in ctl:
                    out.append(f"{module}.{hook}:{n.lineno} uses {n.id}")
    return out


def _sources():
    for path in sorted(ROOT.rglob("*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        if module not in ("_stepping", "_control"):
            yield module, path.read_text()


def test_no_hook_calls_a_controller():
    found, hooks = [], set()
    for module, source in _sources():
        found += hook_controller_calls(source, module)
        hooks |= {f"{module}.{h}" for h in hooks_of(ast.parse(source))}
    # the walk sees the hooks of the adaptive and backtracking solvers
    assert {
        "circle._meanfield.advance",
        "circle._meanfield.cfl_bound",
        "gaussian._dynamics.growth_bound",
        "extremisers._flows.trial",
        "extremisers._flows.mirror_step",
        "frontiers._metastability.advance",
    } <= hooks, sorted(hooks)
    assert not found, "hooks that call a controller:\n" + "\n".join(found)


@pytest.mark.parametrize(
    "src",
    [
        # the former shape: the hook asks the controller for its step
        "def f(x, times, dt):\n"
        "    control = Adaptive(dt)\n"
        "    def advance(x, t, tk):\n"
        "        h = control.step(t, tk, 1.0)\n"
        "        return x, t + h, False\n"
        "    drive(advance, x, times, control=control)\n",
        # in a function nested in a hook, and a backtracking hook
        "def f(x, times, dt):\n"
        "    ctl = Backtracking(dt)\n"
        "    def advance(x, h, m):\n"
        "        def inner(h):\n"
        "            return ctl.attempt(lambda h: x, h)\n"
        "        return inner(h)\n"
        "    drive(advance, x, times, control=Fixed(dt))\n",
        # a bound hook that makes a controller of its own
        "def f(x, times, dt):\n"
        "    def cap(x):\n"
        "        return Adaptive(dt).step(0.0, 1.0, 2.0), None\n"
        "    drive(g, x, times, control=c, bound=cap)\n",
        # the controller given to the driver, used by an observer
        "def f(x, times, c):\n"
        "    def observe(k, x):\n"
        "        c.grow(1.0)\n"
        "    drive(g, x, times, control=c, observe=observe)\n",
    ],
)
def test_the_walk_sees_a_hook_calling_a_controller(src):
    assert hook_controller_calls(src)


def test_a_hook_taking_its_handed_step_passes():
    src = (
        "def f(x, times, dt):\n"
        "    control = Adaptive(dt)\n"
        "    def advance(x, step):\n"
        "        return x + step.h, step.end, False\n"
        "    drive(advance, x, times, control=control)\n"
    )
    assert hook_controller_calls(src) == []


def _spy(monkeypatch):
    """Record the module that calls each controller method."""
    calls: dict[str, set[str]] = {}
    for cls in CONTROLLERS:
        for name in CONTROLLER_METHODS & set(vars(cls)):
            method = getattr(cls, name)

            def spy(*a, __method=method, __name=f"{cls.__name__}.{name}", **k):
                caller = sys._getframe(1).f_globals["__name__"]
                calls.setdefault(__name, set()).add(caller)
                return __method(*a, **k)

            monkeypatch.setattr(cls, name, spy)
    return calls


def test_only_the_driver_calls_the_controllers(monkeypatch):
    from attnlib.extremisers import density_mirror_descent, energy_flow
    from attnlib.gaussian import integrate_gaussian
    from attnlib.circle import mean_field

    calls = _spy(monkeypatch)
    rho = lambda th: (1 + 0.3 * np.cos(th)) / (2 * np.pi)  # noqa: E731
    mean_field(rho, beta=2.0, times=[0.0, 0.5], grid_size=32)
    integrate_gaussian(
        attnlib.Model(geometry="euclidean"), np.zeros(2), np.eye(2), t_final=0.6
    )
    X = attnlib.sample_sphere(5, 3, rng=0, batch=2)
    energy_flow(X, 3.0 * np.eye(3), steps=5, tau=2.0)  # rejected steps: retries
    density_mirror_descent(np.diag([1.0, 3.0]), m=16, steps=5, eta=30.0)
    attnlib.simulate(attnlib.Model(), X[0], t_final=0.5)
    attnlib.frontiers.merge_flow(np.array([0.0, 0.3, 1.0]), beta=2.0)
    # every kind of controller was consulted ...
    assert {
        "Adaptive.step",
        "Adaptive.end",
        "Adaptive.reached",
        "Backtracking.attempt",
        "Backtracking.grow",
        "Backtracking.retry_members",
        "Fixed.substeps",
    } <= set(calls), sorted(calls)
    # ... and only by the driver
    callers = set().union(*calls.values())
    assert callers <= {"attnlib._stepping", "attnlib._control"}, calls


# ------------------------------------------------------------- one Outcome enum
DETAILS = dict(
    name="solver", t=1.0, t_next=2.0, h=1e-20, count="3", max_steps=2, where="here"
)


@pytest.mark.parametrize("outcome", list(Outcome))
def test_each_outcome_carries_its_message(outcome):
    assert isinstance(outcome.message, str) and outcome.label
    text = outcome.describe(**DETAILS)
    assert text.startswith("solver") and len(text) > len("solver") + 10
    assert "{" not in text  # every field of the template was filled
    if outcome.failed:
        assert issubclass(outcome.error, (ValueError, ArithmeticError))
    else:
        assert outcome.error is None


def test_the_outcomes_are_the_endings_of_a_run():
    assert {o.name for o in Outcome} == {
        "COMPLETED",
        "STOPPED",
        "HALTED",
        "NONFINITE",
        "STEP_TOO_SMALL",
        "BUDGET_EXHAUSTED",
    }
    assert len({o.label for o in Outcome}) == len(Outcome)
    assert len({o.message for o in Outcome}) == len(Outcome)
    assert {o for o in Outcome if o.failed} == {
        Outcome.NONFINITE,
        Outcome.STEP_TOO_SMALL,
        Outcome.BUDGET_EXHAUSTED,
    }


def test_the_driver_takes_no_message_strings():
    params = inspect.signature(drive).parameters
    assert not {"nonfinite", "what", "steps_hint", "desc", "dt", "adaptive"} & set(
        params
    )
    assert "control" in params and len(params) <= 11
    # the only string is the solver's name; the advice is keyed by outcome
    strings = [p for p in params.values() if isinstance(p.default, str)]
    assert [p.name for p in strings] == ["name"]


def _fixed(state, h, m):
    return state + h * m


def _adaptive(state, step):
    return state + step.h, step.end, False


TIMES = np.array([0.0, 0.5, 1.0])


def test_a_completed_run_carries_its_outcome():
    run = drive(_fixed, 0.0, TIMES, control=Fixed(0.1))
    assert isinstance(run, Run) and run.outcome is Outcome.COMPLETED
    assert run.n_steps == 10 and run.n_reached == 3 and run.t == 1.0
    run = drive(_adaptive, 0.0, TIMES, control=Adaptive(0.3))
    assert run.outcome is Outcome.COMPLETED and run.t == 1.0
    assert run.state == pytest.approx(1.0) and run.n_steps == 4  # 0.3, 0.2, 0.3, 0.2


def test_a_span_far_below_the_step_is_one_short_step():
    # t_final = 1e-300 with dt = 0.1 once gave zero steps and a division by zero
    assert Fixed(0.1).substeps(1e-300) == (1, 1e-300)
    assert Fixed(0.1).planned(np.array([1e-300, 1.0])) == 11.0
    with np.errstate(all="raise"):
        run = drive(_fixed, 0.0, np.array([0.0, 1e-300]), control=Fixed(0.1))
    assert run.outcome is Outcome.COMPLETED and run.n_steps == 1 and run.t == 1e-300


def test_an_observer_or_the_solver_ends_a_run():
    run = drive(_fixed, 0.0, TIMES, control=Fixed(0.1), observe=lambda k, s: k == 1)
    assert run.outcome is Outcome.STOPPED and run.n_reached == 2 and run.t == 0.5

    def blowup(state, step):
        return state + step.h, step.end, state + step.h > 0.6

    run = drive(blowup, 0.0, TIMES, control=Adaptive(0.25))
    assert run.outcome is Outcome.HALTED and run.t == 0.75 and run.n_reached == 2


def test_a_failure_raises_its_error_with_the_advice_or_is_returned():
    def nan(state, h, m):
        return np.nan

    with pytest.raises(FloatingPointError, match=r"^f: the solution became non-fin"):
        drive(nan, 0.0, TIMES, control=Fixed(0.1), finite=np.isfinite, name="f")
    run = drive(
        nan,
        0.0,
        TIMES,
        control=Fixed(0.1),
        finite=np.isfinite,
        advice={Outcome.NONFINITE: None},
    )
    # time 0 was observed; the first span gave NaN
    assert run.outcome is Outcome.NONFINITE and run.n_reached == 1 and run.t == 0.5
    with pytest.raises(TooManyStepsError, match=r"needs 10 steps.*max_steps=5; less"):
        drive(
            _fixed,
            0.0,
            TIMES,
            control=Fixed(0.1),
            max_steps=5,
            advice={Outcome.BUDGET_EXHAUSTED: "less"},
        )
    with pytest.raises(TooManyStepsError, match=r"at t = 0.8; output time 1"):
        drive(_adaptive, 0.0, TIMES, control=Adaptive(0.1), max_steps=8)

    def tiny(state):  # from t = 0.5 on, a bound below the float64 spacing of t
        return (1.0 if state < 0.5 else 1e-300), None

    with pytest.raises(TooManyStepsError, match="too small to advance t"):
        drive(_adaptive, 0.0, TIMES, control=Adaptive(1.0), bound=tiny)
    run = drive(
        _adaptive,
        0.0,
        TIMES,
        control=Adaptive(1.0),
        bound=tiny,
        advice={Outcome.STEP_TOO_SMALL: None},
    )
    assert run.outcome is Outcome.STEP_TOO_SMALL and run.t == 0.5 and run.n_steps == 1


def test_the_driver_takes_a_controller():
    with pytest.raises(TypeError, match="control must be a Fixed, Adaptive or"):
        drive(_fixed, 0.0, TIMES, control=0.1)


def test_a_backtracking_run_retries_and_grows_its_step():
    # accepted when h <= 0.3: 1 -> 0.5 -> 0.25 accepted, then grown to 0.5 ...
    seen = []

    def trial(state, step):
        seen.append(step.h)
        return state + step.h if step.h <= 0.3 else None

    run = drive(trial, 0.0, np.array([0.0, 2.0]), control=Backtracking(1.0))
    assert seen == [1.0, 0.5, 0.25, 0.5, 0.25]
    assert run.outcome is Outcome.COMPLETED and run.state == 0.5 and run.n_steps == 2


# ------------------------------------------------ one solver of the equiangular ODE
@pytest.mark.parametrize(
    "beta, n, normalization",
    [
        (beta, n, norm)
        for beta, n in [(0.0, 2), (1.0, 32), (4.0, 5), (8.0, 32)]
        for norm in ("sa", "usa")
        if norm == "sa" or beta <= 4  # USA at beta = 8 is stiff: the step cap
    ],
)
def test_the_two_equiangular_solvers_agree(beta, n, normalization):
    from attnlib.equiangular import equiangular_gamma
    from attnlib.frontiers import equiangular_scheme

    t = np.concatenate([[0.0], np.logspace(-2, 1.3, 25)])
    gamma = equiangular_gamma(t, beta=beta, n=n, normalization=normalization)
    sol = equiangular_scheme(t, beta=beta, n=n, normalization=normalization)
    np.testing.assert_allclose(sol.info["gamma"], gamma, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(sol.info["radius"], 1.0)
    np.testing.assert_allclose(sol.info["clock"], t, rtol=0, atol=1e-12)


def test_the_equiangular_solvers_share_one_function(monkeypatch):
    import scipy.integrate

    from attnlib.equiangular import equiangular_gamma
    from attnlib.frontiers import equiangular_scheme

    callers = []
    solve_ivp = scipy.integrate.solve_ivp

    def spy(*a, **k):
        callers.append(sys._getframe(1).f_code.co_name)
        return solve_ivp(*a, **k)

    monkeypatch.setattr(scipy.integrate, "solve_ivp", spy)
    t = [0.0, 1.0, 3.0]
    equiangular_gamma(t, beta=1.0, n=8)
    for scheme in ("post", "pre", "peri"):
        equiangular_scheme(t, beta=1.0, n=8, scheme=scheme)
    assert callers == ["solve_equiangular"] * 4


def test_the_step_cap_reaches_the_scheme_solutions():
    from attnlib.frontiers import equiangular_scheme

    with pytest.raises(TooManyStepsError, match="equiangular_scheme .*max_steps=5"):
        equiangular_scheme(
            [0.0, 30.0], beta=3.0, n=8, scheme="peri", normalization="usa", max_steps=5
        )


def test_the_controllers_live_below_the_driver():
    assert _stepping.Fixed is _control.Fixed
    assert set(CONTROLLERS) == {Fixed, Adaptive, Backtracking}
