r"""Time integration of particle systems, on the sphere or in :math:`\mathbb R^d`.

One entry point, :func:`simulate`, with explicit Runge–Kutta schemes:

* ``"euler"``: :math:`x \leftarrow R(x + h\,v(x))`, what the reference codes do;
* ``"heun"``: the explicit trapezoidal rule (order 2);
* ``"rk4"``: the classical fourth-order scheme.

On the sphere every step is taken in the ambient space with the (extended)
projected field and followed by the retraction :math:`R(y) = y/|y|`. The exact flow
of the extended field keeps the sphere invariant, so the retraction changes a step
by :math:`O(h^{p+1})` and each scheme keeps its order :math:`p` (measured in
``tests/test_integrate.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol, runtime_checkable

import numpy as np

from . import _kernel as kern
from ._control import glpr_usa_step
from ._results import Trajectory
from . import _stepping
from ._deprecation import geometry_of_flag, moved_arguments, warn_moved
from .geometry import as_geometry
from ._stepping import METHODS
from ._validation import (
    as_states,
    check_bool,
    check_choice,
    check_int,
    check_real,
    check_unit_norm,
)

__all__ = [
    "simulate",
    "Dynamics",
    "Trajectory",
    "glpr_usa_step",
    "METHODS",
]


@runtime_checkable
class Dynamics(Protocol):
    r"""What :func:`simulate` needs of a model: the protocol of the library's models.

    :class:`attnlib.Model` implements it: every model of the library is one,
    including those that the constructor functions
    :func:`attnlib.frontiers.NormalisedModel` (``layer_norm=``),
    :func:`attnlib.frontiers.CausalModel` (``mask="causal"``),
    :func:`attnlib.frontiers.Hardmax` (``kernel="hardmax"``) and
    :func:`attnlib.attention.MeasureModel` (``weights=``) return.

    Attributes
    ----------
    sphere : bool
        States on the unit sphere (each step is followed by the retraction).

    Methods
    -------
    check_states(X, name)
        ``X`` validated for the model (shape, dimension, unit rows, ensemble size)
        and returned as a floating array, without evaluating the field.
    rhs(X)
        The velocity field without validation, for the integrators: called exactly
        once per stage of every step.
    stable_step()
        The step of ``step_rule="glpr"`` (the [GLPR] stable USA step), or ``None``
        when the model has none.
    """

    sphere: bool

    def check_states(self, X: Any, name: str = "X") -> np.ndarray: ...

    def rhs(self, X: np.ndarray) -> np.ndarray: ...

    def stable_step(self) -> float | None: ...


@moved_arguments("model X0", renamed={"sphere": ("geometry", geometry_of_flag)})
def simulate(
    model: Any,
    X0: np.ndarray,
    *,
    times: Any = None,
    t_final: float | None = None,
    dt: float = 0.05,
    method: str = "rk4",
    observables: Mapping[str, Callable[[np.ndarray], Any]] | None = None,
    save_states: bool = True,
    step_rule: str | None = None,
    geometry: Any = None,
    progress: bool = False,
    max_steps: int = _stepping.MAX_STEPS,
) -> Trajectory:
    r"""Integrate :math:`\dot X = v(X)` from ``X0`` and record states and observables.

    Parameters
    ----------
    model : Dynamics or callable
        A model of the library (:class:`Dynamics`: its ``check_states``, ``rhs``,
        geometry and ``stable_step`` are used; ``rhs`` once per stage) or any
        callable ``v(X) -> array`` of the shape of ``X`` (then give ``geometry``).
    X0 : ndarray, shape (n, d) or (B, n, d)
        Initial state at time 0 (unit rows for a model on the sphere).
    times : array_like, shape (T,), optional
        Non-decreasing output times ``>= 0``. Steps are shortened so every output
        time is hit exactly.
    t_final : float, optional
        Shorthand for ``times=[0, t_final]``.
    dt : float
        Largest step.
    method : {"euler", "heun", "rk4"}
    observables : mapping of name -> callable, optional
        Functions of the state evaluated at every output time, so that a long run
        need not store its states.
    save_states : bool
        Keep the states at the output times.
    step_rule : {None, "glpr"}
        ``"glpr"`` caps the step by the stable USA step of the [GLPR] code,
        :func:`glpr_usa_step` (of the largest beta); it decays like
        :math:`e^{-\beta}`, which SA does not need.
    geometry : Sphere, Euclidean, "sphere" or "euclidean", optional
        Where the states live, for a callable ``model`` (on the sphere each step is
        followed by the retraction); a model of the library carries its own, and a
        different one here is an error. ``sphere=True``/``False`` is its old
        spelling.
    progress : bool
        Show a ``tqdm.auto`` progress bar over the output times.
    max_steps : int
        Cap on the number of steps. The number of steps is known before the first
        one (output times and ``dt``); if it exceeds the cap, a ``ValueError`` is
        raised at once instead of running for hours.

    Returns
    -------
    Trajectory

    Examples
    --------
    >>> import numpy as np
    >>> from attnlib import Model, sample_sphere, simulate
    >>> traj = simulate(Model(beta=1.0), sample_sphere(16, 3, rng=0),
    ...                 times=np.linspace(0, 5, 6), dt=0.1)
    >>> traj.states.shape
    (6, 16, 3)
    """
    if isinstance(model, Dynamics):
        f = model.rhs
        sphere = bool(model.sphere)
        if geometry is not None and (as_geometry(geometry).name == "sphere") != sphere:
            raise ValueError(
                f"geometry={geometry!r} differs from the model's (on the sphere: "
                f"{sphere}); the model carries its geometry"
            )
        # X0 against the model (dimension, unit rows, beta shape), without a field
        X = model.check_states(X0, "X0")
    elif callable(model):
        f = model
        if geometry is None:
            raise TypeError(
                "geometry must be given ('sphere' or 'euclidean', or attnlib.Sphere() "
                "or attnlib.Euclidean()) when model is a callable"
            )
        sphere = as_geometry(geometry).name == "sphere"
        X = as_states(X0, "X0")
    else:
        missing = [
            a
            for a in ("sphere", "check_states", "rhs", "stable_step")
            if not hasattr(model, a)
        ]
        raise TypeError(
            "model must be an attnlib model (the Dynamics protocol: sphere, "
            "check_states, rhs, stable_step) or a callable v(X), got "
            f"{type(model).__name__}"
            + (f" without {', '.join(missing)}" if missing else "")
        )
    if sphere:
        check_unit_norm(X, "X0")
    X = X.copy()
    times = _stepping.output_times(times, t_final)
    dt = check_real(dt, "dt", low=0.0, strict_low=True)
    check_choice(method, "method", METHODS)
    check_choice(step_rule, "step_rule", (None, "glpr"))
    save_states = check_bool(save_states, "save_states")
    progress = check_bool(progress, "progress")
    max_steps = check_int(max_steps, "max_steps", low=1)
    steps_hint = "increase dt or max_steps"
    if step_rule == "glpr":
        stable = model.stable_step() if isinstance(model, Dynamics) else None
        if stable is None:
            raise ValueError(
                "step_rule='glpr' needs a model with a stable step (a Model or "
                "CausalModel: the [GLPR] USA step of its beta)"
            )
        dt = min(dt, stable)
        steps_hint = "increase max_steps, or use a smaller beta"
        if getattr(model, "normalization", None) == "sa":
            steps_hint = (
                "step_rule='glpr' gives the stable step of USA, which decays like "
                "e^-beta and which an SA model does not need: drop step_rule"
            )
    obs = _stepping.check_observables(observables)
    states, out_obs, X, n_steps = _stepping.run_explicit(
        f,
        X,
        times,
        dt=dt,
        method=method,
        observables=obs,
        save_states=save_states,
        after_step=kern.retract if sphere else None,
        progress=progress,
        hint="reduce dt or use step_rule='glpr'",
        max_steps=max_steps,
        steps_hint=steps_hint,
    )
    return Trajectory(times, states, out_obs, X, method, n_steps, dt)


#: The driver's internals this module exported before 0.3: no longer public.
_INTERNALS = ("output_times", "check_observables", "planned_steps", "run_explicit")


def __getattr__(name: str) -> Any:
    if name in _INTERNALS or name == "MAX_STEPS":
        warn_moved(
            f"attnlib.integrate.{name}",
            "simulate's own arguments (it was an internal of the time-stepping driver)",
        )
        return getattr(_stepping, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
