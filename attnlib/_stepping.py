r"""The stepping driver shared by every time integrator of the library.

One loop over the output times, with either

* fixed steps: each span between output times is cut into
  :math:`m = \lceil \text{span}/dt\rceil` equal steps, which a hook ``advance(state,
  h, m)`` takes (an explicit Runge–Kutta scheme :func:`rk_step` with a retraction,
  the fused Euler step of an ensemble, ...); or
* adaptive steps: a hook ``advance(state, t, t_next)`` takes one step of its own
  size towards ``t_next`` (a CFL condition, a relative growth bound) and may stop
  the run (a blow-up);

and, in one place, the step cap (:func:`attnlib._validation.check_steps`, before the
first step when the number of steps is known), the finiteness check after each span,
the observation at each output time and the progress bar.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

import numpy as np

from ._progress import progress_bar
from ._validation import check_real, check_steps

__all__ = [
    "MAX_STEPS",
    "METHODS",
    "output_times",
    "check_observables",
    "planned_steps",
    "substeps",
    "rk_step",
    "drive",
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
    spans = np.diff(np.concatenate([[0.0], times]))
    spans = spans[spans > 0]
    return float(np.sum(np.ceil(spans / dt - 1e-9)))


def substeps(span: float, dt: float) -> tuple[int, float]:
    """The ``m`` equal steps ``h <= dt`` (up to rounding) that cover ``span > 0``.

    Examples
    --------
    >>> substeps(1.0, 0.3)
    (4, 0.25)
    """
    m = int(np.ceil(span / dt - 1e-9))
    return m, float(span / m)


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


def drive(
    advance: Callable[..., Any],
    state: Any,
    times: np.ndarray,
    *,
    dt: float,
    adaptive: bool = False,
    reached: Callable[[float, float], bool] | None = None,
    observe: Callable[[int, Any], Any] | None = None,
    finite: Callable[[Any], bool] | None = None,
    nonfinite: str = "the solution became non-finite before t={t:g}; reduce dt",
    max_steps: int | None = MAX_STEPS,
    what: str = "simulate",
    steps_hint: str = "increase dt or max_steps",
    progress: bool = False,
    desc: str = "simulate",
) -> tuple[Any, int, int]:
    r"""Integrate from time 0 through the output times ``times``.

    Parameters
    ----------
    advance : callable
        Fixed steps: ``advance(state, h, m) -> state`` takes ``m`` steps of size
        ``h``. Adaptive steps (``adaptive=True``): ``advance(state, t, t_next) ->
        (state, t, stop)`` takes one step towards ``t_next`` (landing on it exactly
        at the end), ``stop=True`` ending the run (and ``t`` unchanged if no step was
        taken).
    state : any
        Initial state (time 0).
    times : ndarray, shape (T,)
        Validated output times (:func:`output_times`).
    dt : float
        Largest step; with fixed steps, the number of steps is known before the
        first one and compared with ``max_steps`` then.
    adaptive : bool
    reached : callable(t, t_next) -> bool, optional
        Adaptive steps: whether ``t`` counts as ``t_next`` (default ``t >= t_next``;
        a tolerance absorbs the rounding of accumulated steps). The time is then
        ``max(t, t_next)``.
    observe : callable(k, state), optional
        Called at output time ``times[k]``; a true return value ends the run there
        (e.g. every member of an ensemble has retired).
    finite : callable(state) -> bool, optional
        Checked after each span: ``False`` raises ``FloatingPointError`` with the
        message ``nonfinite.format(t=times[k])``.
    nonfinite : str
    max_steps : int or None
        Step cap (``None``: no cap, for loops whose step count is an argument).
    what, steps_hint : str
        The loop and the advice, for the message of the cap.
    progress : bool
        A bar over the output times (:func:`attnlib._progress.progress_bar`).
    desc : str
        Label of the bar.

    Returns
    -------
    state : any
        State at the last time reached.
    n_steps : int
        Steps taken.
    reached : int
        Output times reached (``T`` unless the run stopped early).
    """
    if not adaptive and max_steps is not None:
        check_steps(
            planned_steps(times, dt),
            max_steps,
            what=f"{what} (dt = {dt:.3g}, up to t_final = {times[-1]:g}, the last "
            "of times)",
            hint=steps_hint,
        )
    t = 0.0
    n_steps = 0
    n_reached = 0
    with progress_bar(progress, times.size, desc) as bar:
        for k, tk in enumerate(times):
            if adaptive:
                stop = False
                while not (t >= tk if reached is None else reached(t, tk)):
                    if max_steps is not None:
                        check_steps(
                            n_steps + 1,
                            max_steps,
                            what=f"{what} (at t = {t:g}; output time {tk:g})",
                            hint=steps_hint,
                        )
                    state, t_new, stop = advance(state, t, tk)
                    if t_new != t:
                        n_steps += 1
                    t = t_new
                    if stop:
                        break
                if stop:
                    break
                t = max(t, tk)
            else:
                span = tk - t
                if span > 0:
                    m, h = substeps(span, dt)
                    state = advance(state, h, m)
                    n_steps += m
                    t = tk
                    if finite is not None and not finite(state):
                        raise FloatingPointError(nonfinite.format(t=tk))
            n_reached = k + 1
            stop = observe is not None and observe(k, state)
            bar.update(1)
            if stop:
                break
    return state, n_steps, n_reached


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
    states = np.empty((times.size,) + X.shape, dtype=X.dtype) if save_states else None
    recorded: dict[str, list] = {k: [] for k in observables}

    def advance(X, h, m):
        for _ in range(m):
            X = rk_step(f, X, h, method)
            if after_step is not None:
                X = after_step(X)
        return X

    def observe(k, X):
        if save_states:
            states[k] = X
        for name, fn in observables.items():
            recorded[name].append(np.asarray(fn(X)))

    X, n_steps, _ = drive(
        advance,
        X,
        times,
        dt=dt,
        observe=observe,
        finite=lambda X: bool(np.all(np.isfinite(X))),
        nonfinite=f"the solution became non-finite before t={{t:g}}; {hint} "
        f"(dt = {dt:g})",
        max_steps=max_steps,
        what=what,
        steps_hint=steps_hint,
        progress=progress,
        desc=what,
    )
    out = MappingProxyType({k: np.stack(v) for k, v in recorded.items()})
    return states, out, X, n_steps
