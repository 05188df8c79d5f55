r"""Where the tokens live: the unit sphere or Euclidean space, as objects.

A model of the library carries its geometry (``Model(geometry=Sphere())``, the
default, or ``Model(geometry=Euclidean())``), and :func:`attnlib.simulate` reads it
from the model: on the sphere each step is followed by the retraction and the field
is projected on the tangent spaces; in :math:`\mathbb R^d` neither happens. The same
three operations (``project``, ``retract``, ``sample``) are what an integrator over a
force and a geometry needs (jax-md's ``shift_fn``, ott-jax's geometries).

A geometry can be given by name where a model takes one: ``"sphere"`` or
``"euclidean"``.
"""

from __future__ import annotations

from ._moved import retired

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from . import sphere
from ._deprecation import warn_moved
from ._validation import as_numeric, check_int, check_rng

__all__ = [
    "Sphere",
    "Euclidean",
    "as_geometry",
]


def _dimension(d: Any) -> int | None:
    return None if d is None else check_int(d, "d", low=1)


@dataclass(frozen=True)
class Sphere:
    r"""The unit sphere :math:`S^{d-1} \subset \mathbb R^d` (layer normalisation).

    Parameters
    ----------
    d : int, optional
        Ambient dimension, needed only by :meth:`sample` (a model takes its
        dimension from its data).

    Examples
    --------
    >>> import numpy as np
    >>> S = Sphere(3)
    >>> X = S.sample(4, rng=0)
    >>> bool(np.allclose(np.linalg.norm(X, axis=-1), 1.0))
    True
    >>> S.project(np.array([[0.0, 0.0, 1.0]]), np.array([[1.0, 2.0, 3.0]]))
    array([[1., 2., 0.]])
    """

    d: int | None = None
    name: ClassVar[str] = "sphere"

    def __post_init__(self) -> None:
        object.__setattr__(self, "d", _dimension(self.d))

    def project(self, X: np.ndarray, V: np.ndarray) -> np.ndarray:
        r"""Tangent projection :math:`P_x v = v - \langle x, v\rangle x` (last axis):
        :func:`attnlib.project`."""
        return sphere.project(X, V)

    def retract(self, Y: np.ndarray) -> np.ndarray:
        r"""Back onto the sphere, :math:`y \mapsto y/|y|` row by row:
        :func:`attnlib.retract`."""
        return sphere.retract(Y)

    def sample(
        self, n: int, *, rng: Any, batch: int | None = None, dtype: Any = np.float64
    ) -> np.ndarray:
        """``n`` uniform points (``(n, d)``, or ``(batch, n, d)``):
        :func:`attnlib.sample_sphere`."""
        if self.d is None:
            raise ValueError("Sphere.sample needs the dimension: Sphere(d)")
        return sphere.sample_sphere(n, self.d, rng=rng, batch=batch, dtype=dtype)


@dataclass(frozen=True)
class Euclidean:
    r"""Euclidean space :math:`\mathbb R^d` (no normalisation): the Gaussian chapter.

    Examples
    --------
    >>> import numpy as np
    >>> E = Euclidean(2)
    >>> E.sample(3, rng=0).shape
    (3, 2)
    >>> E.retract(np.array([[3.0, 4.0]]))
    array([[3., 4.]])
    """

    d: int | None = None
    name: ClassVar[str] = "euclidean"

    def __post_init__(self) -> None:
        object.__setattr__(self, "d", _dimension(self.d))

    def project(self, X: np.ndarray, V: np.ndarray) -> np.ndarray:
        """Every vector is tangent: ``V`` itself (as a new array)."""
        X, V = as_numeric(X, "X"), as_numeric(V, "V")
        if X.shape != V.shape:
            raise ValueError(
                f"X and V must have the same shape, got {X.shape} and {V.shape}"
            )
        return V.copy()

    def retract(self, Y: np.ndarray) -> np.ndarray:
        """Nothing to retract onto: ``Y`` itself (as a new array)."""
        return as_numeric(Y, "Y").copy()

    def sample(self, n: int, *, rng: Any, batch: int | None = None) -> np.ndarray:
        """``n`` standard Gaussian points (``(n, d)``, or ``(batch, n, d)``)."""
        if self.d is None:
            raise ValueError("Euclidean.sample needs the dimension: Euclidean(d)")
        n = check_int(n, "n", low=1)
        shape = (
            (n, self.d)
            if batch is None
            else (check_int(batch, "batch", low=1), n, self.d)
        )
        return check_rng(rng).standard_normal(shape)


#: The geometries by name.
_GEOMETRIES = {"sphere": Sphere, "euclidean": Euclidean}


def as_geometry(geometry: Any, name: str = "geometry") -> Sphere | Euclidean:
    """A geometry object from an object or a name (``"sphere"``, ``"euclidean"``).

    A bool (the ``sphere=`` flag of earlier releases) is accepted with a warning.
    """
    if isinstance(geometry, (Sphere, Euclidean)):
        return geometry
    if isinstance(geometry, (bool, np.bool_)):
        new = "'sphere'" if geometry else "'euclidean'"
        warn_moved(f"{name}={bool(geometry)}", f"geometry={new}", stacklevel=4)
        return Sphere() if geometry else Euclidean()
    if isinstance(geometry, str) and geometry in _GEOMETRIES:
        return _GEOMETRIES[geometry]()
    raise TypeError(
        f"{name} must be attnlib.Sphere(), attnlib.Euclidean() or one of "
        f"{sorted(_GEOMETRIES)}, got {geometry!r}"
    )


#: Names no longer public, served for one release with a warning.
__getattr__ = retired(
    __name__,
    {
        "GEOMETRIES": "attnlib.geometry._GEOMETRIES"
        " (not public: what as_geometry accepts)",
    },
)
