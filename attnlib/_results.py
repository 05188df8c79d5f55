r"""The library's one trajectory vocabulary.

Every time-dependent result of the library (particles, angles, densities on a grid,
Gaussian moments, energy flows, the cluster staircase, ensembles) is a
:class:`Trajectory`: the fields shared by all of them, and the quantities proper to
one solver in the mapping ``info`` (``tr.info["means"]``). This is the shape of
:func:`scipy.integrate.solve_ivp`'s result and of diffrax's ``Solution``: one class
with typed fields, whose optional entries depend on the solver. Each solver declares
which of its entries are time series (``series``), so that
:meth:`Trajectory.subsample` samples them with the times.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

import numpy as np

from ._deprecation import warn_moved

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
        Quantities proper to one solver (listed in its Returns section).
    series : frozenset of str
        The keys of ``info`` that are time series (first axis along ``times``).
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
    series: frozenset[str] = field(default=frozenset(), repr=False)

    def __getattr__(self, name: str) -> Any:
        # called only when the ordinary lookup fails: the old attribute spellings
        if name.startswith("__"):
            raise AttributeError(name)
        info = self.__dict__.get("info") or {}
        if name in info:
            warn_moved(f"Trajectory.{name}", f"Trajectory.info[{name!r}]")
            return info[name]
        new = _RENAMED.get(name)
        if new is not None and new in info:
            warn_moved(f"Trajectory.{name}", f"Trajectory.info[{new!r}]")
            return info[new]
        if new is not None and new in self.__dict__:
            warn_moved(f"Trajectory.{name}", f"Trajectory.{new}")
            return self.__dict__[new]
        raise AttributeError(
            f"this Trajectory has no attribute {name!r} (its solver's quantities: "
            f"{', '.join(sorted(info)) or 'none'})"
        )

    def __getstate__(self) -> dict[str, Any]:
        # read-only mappings do not pickle: their contents do
        state = dict(self.__dict__)
        for k in ("observables", "info"):
            if isinstance(state.get(k), MappingProxyType):
                state[k] = dict(state[k])
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        state = {"series": frozenset(), **state}  # pickled before series existed
        for k, v in state.items():
            if k in ("observables", "info") and isinstance(v, dict):
                v = MappingProxyType(v)
            object.__setattr__(self, k, v)

    def subsample(self, index: Any) -> Trajectory:
        """The trajectory at ``times[index]`` (a slice or integer indices): the
        states, the observables and the solver's time series sampled alike.

        Examples
        --------
        >>> import numpy as np
        >>> from attnlib import Model, sample_sphere, simulate
        >>> tr = simulate(Model(), sample_sphere(4, 3, rng=0),
        ...               times=np.linspace(0, 1, 11))
        >>> sub = tr.subsample(slice(0, None, 5))
        >>> sub.times.tolist(), sub.states.shape, bool((sub.final == tr.final).all())
        ([0.0, 0.5, 1.0], (3, 4, 3), True)
        """
        if self.times is None:
            raise ValueError("this Trajectory has no times to subsample")
        times = np.asarray(self.times)[index]
        if np.ndim(times) != 1:
            raise ValueError(
                f"index must select a 1-D run of times (a slice or integer indices), "
                f"got {index!r}"
            )
        info = {
            k: np.asarray(v)[index] if k in self.series else v
            for k, v in self.info.items()
        }
        return replace(
            self,
            times=times,
            states=None if self.states is None else self.states[index],
            observables=MappingProxyType(
                {k: np.asarray(v)[index] for k, v in self.observables.items()}
            ),
            info=MappingProxyType(info),
        )


def trajectory(*, series: tuple[str, ...] = (), **fields: Any) -> Trajectory:
    """A :class:`Trajectory` from keyword arguments: the shared fields by name, every
    other one into ``info`` (read-only); ``series`` names the entries of ``info``
    that are time series."""
    shared = {f: fields.pop(f) for f in list(fields) if f in _SHARED}
    stray = set(series) - set(fields)
    if stray:
        raise ValueError(f"series {sorted(stray)} are not entries of info")
    return Trajectory(**shared, info=MappingProxyType(fields), series=frozenset(series))


_SHARED = frozenset(Trajectory.__dataclass_fields__) - {"info", "series"}

# documented and pickled under the public name that simulate's users know
Trajectory.__module__ = "attnlib.integrate"
