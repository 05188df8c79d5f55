"""Geometry of the unit sphere S^{d-1}: tangent projection, retraction, sampling.

Arrays hold points along the last axis: ``(n, d)`` for one configuration,
``(B, n, d)`` for an ensemble, or any leading shape.
"""

from __future__ import annotations

import numpy as np

from ._validation import (
    as_numeric,
    as_states,
    check_finite_result,
    check_int,
    check_rng,
)

__all__ = ["project", "retract", "sample_sphere", "orthonormal_frame"]


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
        y - np.sum(x * y, axis=-1, keepdims=True) * x,
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
    return y / norms


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
