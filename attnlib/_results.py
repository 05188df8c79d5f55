r"""The library's one trajectory vocabulary.

Every time-dependent result of the library (particles, angles, densities on a grid,
Gaussian moments, energy flows, the cluster staircase, ensembles) is a
:class:`Trajectory`: the fields shared by all of them, and the quantities proper to
one solver in ``info``, read as attributes (``tr.means`` is ``tr.info["means"]``).
This is the shape of :func:`scipy.integrate.solve_ivp`'s result: one class, whose
optional entries depend on the solver.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

__all__ = ["Trajectory"]

#: Attribute names of earlier releases: old name -> current name.
_RENAMED = {
    "densities": "states",  # mean_field's density samples
    "steps": "step_indices",  # energy_flow's recorded step indices
}


@dataclass(frozen=True)
class Trajectory:
    """A time-dependent result: what :func:`attnlib.simulate` and every other
    solver of the library return.

    Attributes
    ----------
    times : ndarray, shape (T,)
        The output times reached.
    states : ndarray, shape (T, ...), or None
        States at ``times`` (``None`` when not saved, or when the state is not one
        array, e.g. Gaussian moments).
    observables : mapping str -> ndarray of shape (T, ...)
        Each requested observable evaluated at ``times``.
    final : ndarray or None
        State at the last time.
    method : str
        Integration scheme.
    n_steps : int
        Number of steps taken.
    dt : float
        Largest step used.
    info : mapping str -> object
        Quantities proper to one solver (listed in its Returns section), also read
        as attributes.
    """

    times: np.ndarray | None = None
    states: np.ndarray | None = field(default=None, repr=False)
    observables: Mapping[str, np.ndarray] = field(
        default_factory=lambda: MappingProxyType({}), repr=False
    )
    final: Any = field(default=None, repr=False)
    method: str = "rk4"
    n_steps: int = 0
    dt: float = 0.0
    info: Mapping[str, Any] = field(
        default_factory=lambda: MappingProxyType({}), repr=False
    )

    def __getattr__(self, name: str) -> Any:
        # called only when the ordinary lookup fails: the solver's own quantities
        if name.startswith("__"):
            raise AttributeError(name)
        info = self.__dict__.get("info") or {}
        if name in info:
            return info[name]
        new = _RENAMED.get(name)
        if new is not None and (new in info or new in self.__dict__):
            warnings.warn(
                f"Trajectory.{name} is deprecated: use .{new}",
                DeprecationWarning,
                stacklevel=2,
            )
            return getattr(self, new)
        raise AttributeError(
            f"this Trajectory has no attribute {name!r} (its solver's quantities: "
            f"{', '.join(sorted(info)) or 'none'})"
        )

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self.__dict__.get("info") or {}))


def trajectory(**fields: Any) -> Trajectory:
    """A :class:`Trajectory` from keyword arguments: the shared fields by name, every
    other one into ``info`` (read-only)."""
    shared = {f: fields.pop(f) for f in list(fields) if f in _SHARED}
    return Trajectory(**shared, info=MappingProxyType(fields))


_SHARED = frozenset(Trajectory.__dataclass_fields__) - {"info"}
