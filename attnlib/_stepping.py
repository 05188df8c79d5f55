r"""The stepping driver shared by every time integrator of the library.

One loop over the output times, :func:`drive`, under a step-size controller of
:mod:`attnlib._control` that the solver gives it and that only the driver calls:

* :class:`~attnlib._control.Fixed`: each span between output times is cut into
  :math:`m = \lceil \text{span}/dt\rceil` equal steps, which a hook ``advance(state,
  h, m)`` takes (an explicit Runge–Kutta scheme :func:`rk_step` with a retraction,
  the fused Euler step of an ensemble, ...);
* :class:`~attnlib._control.Adaptive`: the driver asks the solver's ``bound`` hook
  for its bound on the next step (a CFL condition, a relative growth bound), the
  controller turns it into a step, and a hook takes that :class:`Step` (and may
  end the run: a blow-up);
* :class:`~attnlib._control.Backtracking`: a hook tries the step it is handed,
  the controller shrinks a rejected one and grows it back afterwards (descent
  methods, one step per unit of "time");

and, in one place, the step cap (before the first step when the number of steps is
known), the finiteness check after each span, the observation at each output time,
the progress bar, and how the run ended: one :class:`Outcome`, whose member carries
its message (and, for a failure, its error).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

import numpy as np

from ._control import CONTROLLERS, Adaptive, Backtracking, Fixed
from ._progress import progress_bar
from ._validation import TooManyStepsError, check_real

__all__ = [
    "MAX_STEPS",
    "METHODS",
    "output_times",
    "check_observables",
    "planned_steps",
    "substeps",
    "rk_step",
    "Outcome",
    "Step",
    "Run",
    "drive",
    "Recorder",
    "run_explicit",
]

#: The time steppers of :func:`attnlib.simulate`: explicit Euler, Heun and classical
#: Runge–Kutta (RK4), each followed by the retraction onto the sphere.
METHODS = ("euler", "heun", "rk4")
#: Default cap on the number of steps of every time-stepping loop of the library.
MAX_STEPS = 1_000_000


def output_times(times: Any = None, t_final: float | None = None) -> np.ndarray:
    """Validated output times: exactly one of ``times`` (non-decreasing, ``>= 0``)
    or ``t_final`` (meaning ``[0, t_final]``)."""
    if (times is None) == (t_final is None):
        raise ValueError("give exactly one of times and t_final")
    if times is None:
        times = np.array([0.0, check_real(t_final, "t_final", low=0.0)])
    try:
        times = np.asarray(times, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(
            f"times must be a 1-D array of numbers, got {type(times).__name__}"
        ) from None
    if times.ndim != 1 or times.size == 0:
        raise ValueError(
            f"times must be a non-empty 1-D array, got shape {times.shape}"
        )
    if not np.all(np.isfinite(times)) or times[0] < 0 or np.any(np.diff(times) < 0):
        raise ValueError("times must be finite, >= 0 and non-decreasing")
    return times


def check_observables(
    observables: Mapping[str, Callable[[np.ndarray], Any]] | None,
) -> dict[str, Callable[[np.ndarray], Any]]:
    """A dict of observables, each checked to be callable."""
    if observables is not None and not isinstance(observables, Mapping):
        raise TypeError(
            "observables must be a mapping of name -> callable, got "
            f"{type(observables).__name__}"
        )
    obs = dict(observables or {})
    for name, fn in obs.items():
        if not callable(fn):
            raise TypeError(
                f"observable {name!r} must be callable, got {type(fn).__name__}"
            )
    return obs


def planned_steps(times: np.ndarray, dt: float) -> float:
    """Number of steps of at most ``dt`` that hit every output time of ``times``.

    Returned as a float (it may be astronomically large, e.g. ``1e23``), so that a
    driver can compare it with its ``max_steps`` before taking any step.

    Examples
    --------
    >>> planned_steps(np.array([0.0, 1.0, 1.5]), 0.3)
    6.0
    """
    return Fixed(dt).planned(times)


def substeps(span: float, dt: float) -> tuple[int, float]:
    """The ``m`` equal steps ``h <= dt`` (up to rounding) that cover ``span > 0``.

    Examples
    --------
    >>> substeps(1.0, 0.3)
    (4, 0.25)
    """
    return Fixed(dt).substeps(span)


def rk_step(
    f: Callable[[Any], Any],
    X: Any,
    h: float,
    method: str,
    k1: Any = None,
) -> Any:
    r"""One step of an explicit Runge–Kutta scheme for :math:`\dot X = f(X)`.

    ``"euler"`` (order 1), ``"heun"`` (the explicit trapezoidal rule, order 2) or
    ``"rk4"`` (the classical scheme, order 4); the only place where their stages
    are written.

    Parameters
    ----------
    f : callable
        Right-hand side; ``X`` is any array (or object with ``+`` and scalar ``*``).
    X : ndarray
        State.
    h : float
        Step.
    method : {"euler", "heun", "rk4"}
    k1 : ndarray, optional
        ``f(X)``, when the caller has evaluated it already (e.g. to choose ``h``).

    Returns
    -------
    ndarray
        The state after the step (a new array).
    """
    if k1 is None:
        k1 = f(X)
    if method == "euler":
        return X + h * k1
    if method == "heun":
        k2 = f(X + h * k1)
        return X + (0.5 * h) * (k1 + k2)
    k2 = f(X + (0.5 * h) * k1)
    k3 = f(X + (0.5 * h) * k2)
    k4 = f(X + h * k3)
    return X + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


class Outcome(enum.Enum):
    """How a run of the driver ended: one member per outcome, each with its message.

    ``message`` is a template formatted with the run's details (``name``, the
    solver's name; ``t``, ``t_next``, ``h``, ``count``, ``max_steps``, ``where``);
    ``error`` is the exception raised for a failure, ``None`` for an ending that
    is a result.

    Examples
    --------
    >>> Outcome.NONFINITE.failed, Outcome.COMPLETED.failed
    (True, False)
    >>> Outcome.NONFINITE.describe(name="simulate", t=2.0)
    'simulate: the solution became non-finite before t=2'
    """

    COMPLETED = ("completed", "{name}: reached the last output time t={t:g}", None)
    STOPPED = ("stopped", "{name}: ended by its observer at t={t:g}", None)
    HALTED = (
        "halted",
        "{name}: ended by its solver at t={t:g} (a blow-up, or no further event)",
        None,
    )
    NONFINITE = (
        "non-finite",
        "{name}: the solution became non-finite before t={t:g}",
        FloatingPointError,
    )
    STEP_TOO_SMALL = (
        "step too small",
        "{name} (the step is {h:.3g} at t = {t:g}, too small to advance t; output "
        "time {t_next:g}) needs inf steps, more than max_steps={max_steps}",
        TooManyStepsError,
    )
    BUDGET_EXHAUSTED = (
        "budget exhausted",
        "{name} ({where}) needs {count} steps, more than max_steps={max_steps}",
        TooManyStepsError,
    )

    def __init__(self, label: str, message: str, error: type | None) -> None:
        self.label = label
        self.message = message
        self.error = error

    @property
    def failed(self) -> bool:
        """Whether the outcome is a failure (raised unless the solver accepts it)."""
        return self.error is not None

    def describe(self, **details: Any) -> str:
        """The message of this outcome for a run with these details."""
        return self.message.format(**details)


class Step(NamedTuple):
    """A step that the driver hands to an adaptive or backtracking hook."""

    #: time at the start of the step
    t: float
    #: the step size (per member for a backtracking over members)
    h: Any
    #: time at its end (exactly the output time for the step that lands on it)
    end: float
    #: what the solver's ``bound`` hook computed with its bound (e.g. the field)
    aux: Any = None
    #: the members to try, for a backtracking over members (``None``: all)
    members: Any = None


class Run(NamedTuple):
    """What :func:`drive` returns."""

    #: state at the last time reached
    state: Any
    #: steps taken
    n_steps: int
    #: output times reached (``T`` unless the run ended early)
    n_reached: int
    #: the last time reached
    t: float
    #: how the run ended
    outcome: Outcome


def drive(
    advance: Any,
    state: Any,
    times: np.ndarray,
    *,
    control: Fixed | Adaptive | Backtracking,
    bound: Callable[[Any], tuple[Any, Any]] | None = None,
    observe: Callable[[int, Any], Any] | None = None,
    finite: Callable[[Any], bool] | None = None,
    max_steps: int | None = MAX_STEPS,
    progress: bool = False,
    name: str = "simulate",
    advice: Mapping[Outcome, str | None] | None = None,
) -> Run:
    r"""Integrate from time 0 through the output times ``times`` under ``control``.

    The driver owns the loop over time and is the only caller of the controller; a
    hook takes the step it is handed.

    Parameters
    ----------
    advance : callable
        The solver's step, by controller:

        * :class:`~attnlib._control.Fixed`: ``advance(state, h, m) -> state`` takes
          ``m`` steps of size ``h`` (each span between output times is cut into
          equal steps, and their number is known and capped before the first one).
        * :class:`~attnlib._control.Adaptive`: ``advance(state, step) -> (state, t,
          stop)`` takes the :class:`Step` ``step`` (normally returning
          ``step.end``; an event-driven solver may end earlier, and ``t =
          step.t`` when no step was taken); ``stop=True`` ends the run
          (:attr:`Outcome.HALTED`).
        * :class:`~attnlib._control.Backtracking`: one step per unit of time.
          ``advance(state, step) -> candidate`` tries ``step.h`` and returns
          ``None`` when the trial is rejected (the driver retries shorter steps,
          keeps the state if every trial fails, and grows the step afterwards).
          Over members (``bound`` given, its cap an array): ``advance(state,
          step)`` tries the members ``step.members`` (all when ``None``) at their
          steps ``step.h[members]``, keeping the candidate in ``state``, and
          returns the members rejected; the driver retries those with shorter
          steps and at the end calls ``advance(state, step)`` with
          ``step.members`` the members still rejected and ``step.end = None``,
          for the solver to keep them where they were (step 0) and accept the rest.
    state : any
        Initial state (time 0).
    times : ndarray, shape (T,)
        Validated output times (:func:`output_times`).
    control : Fixed, Adaptive or Backtracking
        The step-size controller.
    bound : callable(state) -> (bound, aux), optional
        Adaptive or backtracking over members: the solver's bound on the next step
        (a CFL condition, a relative growth bound; per member for a
        backtracking), and what it computed on the way, handed back in
        ``Step.aux`` (e.g. the field at the state, reused by the step).
    observe : callable(k, state), optional
        Called at output time ``times[k]``; a true return value ends the run there
        (:attr:`Outcome.STOPPED`, e.g. every member of an ensemble has retired).
    finite : callable(state) -> bool, optional
        Checked after each span of fixed steps and after each adaptive step;
        ``False`` is :attr:`Outcome.NONFINITE` (reported at the output time ahead).
    max_steps : int or None
        Step cap (``None``: no cap, for loops whose step count is an argument);
        exceeding it is :attr:`Outcome.BUDGET_EXHAUSTED`.
    progress : bool
        A bar over the output times (:func:`attnlib._progress.progress_bar`).
    name : str
        The solver, which labels the bar and begins every message.
    advice : mapping Outcome -> str or None, optional
        What the solver advises for a failure, appended to its message; ``None``
        for a failure that the solver takes as a result (it ends the run, which
        returns it in :attr:`Run.outcome`, instead of raising).

    Returns
    -------
    Run
        ``(state, n_steps, n_reached, t, outcome)``.

    Raises
    ------
    TooManyStepsError, FloatingPointError
        The error of a failed :class:`Outcome` (its message, then the advice),
        unless ``advice`` maps the outcome to ``None``.
    """
    if not isinstance(control, CONTROLLERS):
        raise TypeError(
            "control must be a Fixed, Adaptive or Backtracking controller, got "
            f"{type(control).__name__}"
        )
    advice = dict(advice or {})
    t = 0.0
    n_steps = 0
    n_reached = 0

    def ended(outcome: Outcome, **details: Any) -> Run:
        if outcome.failed and (outcome not in advice or advice[outcome] is not None):
            message = outcome.describe(name=name, max_steps=max_steps, **details)
            if advice.get(outcome):
                message += f"; {advice[outcome]}"
            raise outcome.error(message)
        return Run(state, n_steps, n_reached, t, outcome)

    if not isinstance(control, Adaptive) and max_steps is not None:
        # known before the first step: one per unit of time for a backtracking
        planned = (
            control.planned(times)
            if isinstance(control, Fixed)
            else float(np.ceil(times[-1]))
        )
        if planned > max_steps:
            return ended(
                Outcome.BUDGET_EXHAUSTED,
                count=f"{planned:.3g}",
                where=f"dt = {getattr(control, 'dt', 1.0):.3g}, up to t_final = "
                f"{times[-1]:g}, the last of times",
            )
    members = isinstance(control, Backtracking) and bound is not None
    h_back = control.h_max if isinstance(control, Backtracking) else None
    with progress_bar(progress, times.size, name) as bar:
        for k, tk in enumerate(times):
            if isinstance(control, Adaptive):
                stop = False
                while not control.reached(t, tk):
                    if max_steps is not None and n_steps + 1 > max_steps:
                        return ended(
                            Outcome.BUDGET_EXHAUSTED,
                            count=f"{n_steps + 1}",
                            where=f"at t = {t:g}; output time {tk:g}",
                        )
                    limit, aux = (np.inf, None) if bound is None else bound(state)
                    h = control.step(t, tk, limit)
                    t_end = control.end(t, h, tk)
                    if t_end == t:  # the step no longer advances the float64 time
                        return ended(Outcome.STEP_TOO_SMALL, h=h, t=t, t_next=tk)
                    state, t_new, stop = advance(state, Step(t, h, t_end, aux))
                    if t_new != t:
                        n_steps += 1
                    t = t_new
                    if finite is not None and not finite(state):
                        return ended(Outcome.NONFINITE, t=tk)
                    if stop:
                        break
                if stop:
                    return ended(Outcome.HALTED, t=t)
                t = max(t, tk)
            elif isinstance(control, Backtracking):
                while t < tk:  # one step per unit of time
                    if members:
                        cap, aux = bound(state)
                        h = np.minimum(control.h_max, cap)
                        step = Step(t, h, t + 1.0, aux)
                        rejected = advance(state, step)

                        def retry(rejected, h, step=step):
                            return advance(state, step._replace(h=h, members=rejected))

                        rejected = control.retry_members(retry, h, rejected)
                        state = advance(
                            state, step._replace(members=rejected, end=None)
                        )
                    else:
                        step = Step(t, h_back, t + 1.0)

                        def trial(h, step=step):
                            return advance(state, step._replace(h=h))

                        new, h_back = control.attempt(trial, h_back)
                        if new is not None:
                            state = new
                        h_back = control.grow(h_back)
                    n_steps += 1
                    t += 1.0
            else:
                span = tk - t
                if span > 0:
                    m, h = control.substeps(span)
                    state = advance(state, h, m)
                    n_steps += m
                    t = tk
                    if finite is not None and not finite(state):
                        return ended(Outcome.NONFINITE, t=tk)
            n_reached = k + 1
            stop = observe is not None and observe(k, state)
            bar.update(1)
            if stop:
                return ended(Outcome.STOPPED, t=t)
    return ended(Outcome.COMPLETED, t=t)


class Recorder:
    """What a run keeps at its output times, as the ``observe`` callback of
    :func:`drive`: the state (if ``save_states``, in an array of shape
    ``(n_times,) + X.shape`` and dtype ``dtype``) and the value of each observable.

    Inputs are assumed validated (``observables`` as :func:`check_observables`
    returns them).
    """

    def __init__(
        self,
        n_times: int,
        X: np.ndarray,
        observables: Mapping[str, Callable[[np.ndarray], Any]],
        save_states: bool,
        *,
        dtype: Any = None,
    ) -> None:
        self.states = (
            np.empty((n_times,) + X.shape, dtype=dtype) if save_states else None
        )
        self._observables = observables
        self._recorded: dict[str, list] = {k: [] for k in observables}

    def __call__(self, k: int, X: np.ndarray) -> None:
        if self.states is not None:
            self.states[k] = X
        for name, fn in self._observables.items():
            self._recorded[name].append(np.asarray(fn(X)))

    def observables(self) -> MappingProxyType:
        """The recorded observables, each stacked over the output times reached."""
        return MappingProxyType({k: np.stack(v) for k, v in self._recorded.items()})


def run_explicit(
    f: Callable[[np.ndarray], np.ndarray],
    X: np.ndarray,
    times: np.ndarray,
    *,
    dt: float,
    method: str,
    observables: dict[str, Callable[[np.ndarray], Any]],
    save_states: bool,
    after_step: Callable[[np.ndarray], np.ndarray] | None = None,
    progress: bool = False,
    hint: str = "reduce dt",
    max_steps: int = MAX_STEPS,
    what: str = "simulate",
    steps_hint: str = "increase dt or max_steps",
) -> tuple[np.ndarray | None, MappingProxyType, np.ndarray, int]:
    r"""Explicit Runge–Kutta integration of :math:`\dot X = f(X)` with outputs.

    Steps of at most ``dt`` (shortened to hit every output time), each followed by
    ``after_step`` (a retraction, or the reduction of angles modulo :math:`2\pi`),
    on the shared driver :func:`attnlib._stepping.drive` (step cap before the
    first step, finiteness after each span, progress bar). Inputs are assumed
    validated. Returns ``(states, observables, final, n_steps)``.
    """
    record = Recorder(times.size, X, observables, save_states, dtype=X.dtype)

    def advance(X, h, m):
        for _ in range(m):
            X = rk_step(f, X, h, method)
            if after_step is not None:
                X = after_step(X)
        return X

    run = drive(
        advance,
        X,
        times,
        control=Fixed(dt),
        observe=record,
        finite=lambda X: bool(np.all(np.isfinite(X))),
        max_steps=max_steps,
        progress=progress,
        name=what,
        advice={
            Outcome.NONFINITE: f"{hint} (dt = {dt:g})",
            Outcome.BUDGET_EXHAUSTED: steps_hint,
        },
    )
    return record.states, record.observables(), run.state, run.n_steps
