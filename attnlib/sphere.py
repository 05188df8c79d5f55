"""Geometry of the unit sphere S^{d-1}: tangent projection, retraction, sampling.

Arrays hold points along the last axis: ``(n, d)`` for one configuration,
``(B, n, d)`` for an ensemble, or any leading shape.
"""

from __future__ import annotations

from ._moved import retired

from typing import Any

import numpy as np

from . import _kernel as kern
from ._validation import (
    as_numeric,
    as_states,
    check_finite_result,
    check_int,
    check_real,
    check_rng,
    check_unit_norm,
)

__all__ = [
    "project",
    "retract",
    "sample_sphere",
    "orthonormal_frame",
    "tangent_jacobian",
]


def project(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    r"""Tangent projection :math:`P_x y = y - \langle x, y\rangle x` (last axis).

    Parameters
    ----------
    x, y : ndarray, shape (..., d)
        Base points (not required to be unit vectors) and vectors to project.

    Returns
    -------
    ndarray, shape (..., d)

    Examples
    --------
    >>> import numpy as np
    >>> project(np.array([[0.0, 0.0, 1.0]]), np.array([[1.0, 2.0, 3.0]]))
    array([[1., 2., 0.]])
    """
    x = as_states(x, "x", ndims=tuple(range(1, 33)))
    y = as_states(y, "y", ndims=tuple(range(1, 33)))
    if x.shape != y.shape:
        raise ValueError(
            f"x and y must have the same shape, got {x.shape} and {y.shape}"
        )
    return check_finite_result(
        kern.project(x, y.copy()),
        "the projection",
        "x and y are too large (<x, y> x overflows; x is a unit vector on the sphere)",
    )


def retract(y: np.ndarray) -> np.ndarray:
    r"""Retraction onto the sphere: :math:`y \mapsto y / |y|` row by row.

    This is what layer normalisation does ([GLPR] §2). Raises ``ValueError`` on a
    zero row, which has no direction.
    """
    y = as_numeric(y, "y")
    norms = np.linalg.norm(y, axis=-1, keepdims=True)
    if np.any(norms == 0) or not np.all(np.isfinite(norms)):
        raise ValueError("y has a zero or non-finite row, which cannot be normalised")
    return kern.retract(y.astype(np.result_type(y.dtype, norms.dtype)))


def sample_sphere(
    n: int,
    d: int,
    *,
    rng: np.random.Generator | int,
    batch: int | None = None,
    dtype: type = np.float64,
) -> np.ndarray:
    """Draw i.i.d. points uniformly on :math:`S^{d-1}` (normalised Gaussians).

    Parameters
    ----------
    n, d : int
        Number of points and ambient dimension (``d >= 1``).
    rng : numpy.random.Generator or int
        Source of randomness (an integer is used as a seed).
    batch : int, optional
        If given, return an ensemble of shape ``(batch, n, d)``.

    Returns
    -------
    ndarray, shape (n, d) or (batch, n, d)

    Examples
    --------
    >>> X = sample_sphere(5, 3, rng=0)
    >>> X.shape
    (5, 3)
    """
    n = check_int(n, "n", low=1)
    d = check_int(d, "d", low=1)
    rng = check_rng(rng)
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"dtype must be a real floating dtype, got {dtype!r}") from None
    if dt.kind != "f":
        raise TypeError(f"dtype must be a real floating dtype, got {dt}")
    shape = (n, d) if batch is None else (check_int(batch, "batch", low=1), n, d)
    g = rng.standard_normal(shape)
    return retract(g).astype(dtype, copy=False)


def orthonormal_frame(
    n: int, d: int, *, rng: np.random.Generator | int | None = None
) -> np.ndarray:
    """``n`` orthonormal vectors in R^d (``n <= d``), random if ``rng`` is given.

    Without ``rng`` the first ``n`` standard basis vectors are returned. This is the
    initial datum of the equiangular reduction ([GLPR] Thm 6.8).
    """
    n = check_int(n, "n", low=1)
    d = check_int(d, "d", low=1)
    if n > d:
        raise ValueError(f"n must be <= d for an orthonormal frame, got n={n}, d={d}")
    if rng is None:
        return np.eye(d)[:n].copy()
    rng = check_rng(rng)
    q, r = np.linalg.qr(rng.standard_normal((d, n)))
    q = q * np.sign(np.diag(r))
    return np.ascontiguousarray(q.T)


def _tangent_frame(x: np.ndarray) -> np.ndarray:
    """An orthonormal basis of the tangent space :math:`T_x S^{d-1}`, as rows.

    Parameters
    ----------
    x : ndarray, shape (d,)
        A unit vector.

    Returns
    -------
    ndarray, shape (d - 1, d)
        Orthonormal rows orthogonal to ``x`` (the last right singular vectors of
        ``x`` as a one-row matrix).

    Examples
    --------
    >>> import numpy as np
    >>> F = _tangent_frame(np.array([0.0, 0.0, 1.0]))
    >>> F.shape, bool(np.allclose(F @ F.T, np.eye(2))), bool(np.allclose(F[:, 2], 0))
    ((2, 3), True, True)
    """
    x = as_states(x, "x", ndims=(1,))
    check_unit_norm(x[None], "x")
    return np.linalg.svd(x[None])[2][1:]


def tangent_jacobian(
    field: Any, X: np.ndarray, *, eps: float = 1e-6, frames: Any = None
) -> np.ndarray:
    r"""Jacobian of a velocity field on :math:`(S^{d-1})^n` in tangent coordinates.

    Column ``(i, a)`` is the centred difference
    :math:`(v(R(X + \varepsilon e)) - v(R(X - \varepsilon e))) / 2\varepsilon`
    along the tangent vector :math:`e` = row ``a`` of the frame of token ``i``
    (moved alone; :math:`R` the retraction), written in the frames of all tokens.
    At a stationary configuration its eigenvalues are those of the linearised
    dynamics; two frames give similar matrices (same spectrum).

    Parameters
    ----------
    field : callable
        The velocity, ``field(X) -> (n, d)`` (e.g. ``Model(...).velocity``).
    X : ndarray, shape (n, d)
        Unit rows.
    eps : float
        Difference step, in ``(0, 0.1]`` (a centred difference needs a small one).
    frames : sequence of n arrays of shape (d - 1, d), optional
        Orthonormal tangent frames, as rows (by default an orthonormal completion
        of each point).

    Returns
    -------
    ndarray, shape (n (d - 1), n (d - 1))

    Examples
    --------
    >>> import numpy as np
    >>> from attnlib import Model
    >>> X = np.array([[1.0, 0.0], [-1.0, 0.0]])     # two antipodal tokens: unstable
    >>> J = tangent_jacobian(Model(beta=1.0).velocity, X)
    >>> [round(float(v), 6) + 0.0 for v in np.sort(np.linalg.eigvals(J).real)]
    [0.0, 0.238406]
    >>> round(float(2 * np.exp(-1) / (np.exp(1) + np.exp(-1))), 6)  # 2e^-b/(e^b+e^-b)
    0.238406
    """
    if not callable(field):
        raise TypeError(f"field must be callable (X -> velocity), got {field!r}")
    X = as_states(X, "X", ndims=(2,))
    check_unit_norm(X, "X")
    eps = check_real(eps, "eps", low=0.0, high=0.1, strict_low=True)
    n, d = X.shape
    if frames is None:
        frames = [_tangent_frame(x) for x in X]
    elif len(frames) != n or any(np.shape(F) != (d - 1, d) for F in frames):
        raise ValueError(
            f"frames must hold n={n} arrays of shape (d - 1, d) = ({d - 1}, {d})"
        )
    cols = []
    for i in range(n):
        for e in frames[i]:
            E = np.zeros_like(X)
            E[i] = eps * e
            dv = field(retract(X + E)) - field(retract(X - E))
            dv /= 2 * eps
            cols.append(np.concatenate([frames[k] @ dv[k] for k in range(n)]))
    return np.array(cols).T


#: Names no longer public, served for one release with a warning.
__getattr__ = retired(
    __name__,
    {
        "tangent_frame": "attnlib.sphere._tangent_frame"
        " (not public: the default frames of tangent_jacobian)",
    },
)
