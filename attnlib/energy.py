r"""Interaction energy :math:`E_\beta` of a particle configuration and its spherical gradient.

Normalisation (stated once, used everywhere; MATH.md §3, [GLPR] (3.5)):

.. math::

    E_\beta(X) = \frac{1}{2\beta n^2} \sum_{i,j=1}^n e^{\beta \langle x_i, x_j\rangle},
    \qquad \beta > 0,

so that USA is ``dX/dt = n * energy_gradient(X, beta)`` (gradient ascent).
"""

from __future__ import annotations

import numpy as np

from ._validation import as_beta, as_states, check_unit_norm
from .sphere import project

__all__ = ["energy", "log_energy", "energy_gradient"]


def _prepare(X, beta):
    X = as_states(X, "X")
    check_unit_norm(X, "X")
    batch = X.shape[0] if X.ndim == 3 else None
    beta = as_beta(beta, batch)
    if np.any(np.asarray(beta) <= 0):
        raise ValueError("beta must be > 0 for the energy E_beta (it has a 1/(2 beta) factor)")
    b = np.asarray(beta, dtype=X.dtype)
    if X.ndim == 3:
        b = b.reshape(-1, 1, 1) if b.ndim == 1 else b
    return X, b


def log_energy(X: np.ndarray, beta: float | np.ndarray) -> np.ndarray | float:
    r"""Natural logarithm of :math:`E_\beta(X)`, finite for any ``beta > 0``.

    Computed as :math:`\beta - \log(2\beta n^2) + \log\sum_{ij} e^{\beta(\langle x_i,x_j\rangle - 1)}`,
    whose exponentials are all ``<= 1``.

    Parameters
    ----------
    X : ndarray, shape (n, d) or (B, n, d)
        Unit vectors.
    beta : float or ndarray of shape (B,)

    Returns
    -------
    float or ndarray of shape (B,)
    """
    X, b = _prepare(X, beta)
    n = X.shape[-2]
    G = X @ np.swapaxes(X, -1, -2)
    s = np.exp(b * (G - 1.0)).sum(axis=(-1, -2))
    bb = np.asarray(b).reshape(-1) if X.ndim == 3 else b
    out = bb + np.log(s) - np.log(2.0 * bb * n * n)
    return float(out) if X.ndim == 2 else np.asarray(out)


def energy(X: np.ndarray, beta: float | np.ndarray) -> np.ndarray | float:
    r"""Interaction energy :math:`E_\beta(X) = \frac{1}{2\beta n^2}\sum_{ij} e^{\beta\langle x_i,x_j\rangle}`.

    Parameters
    ----------
    X : ndarray, shape (n, d) or (B, n, d)
        Unit vectors.
    beta : float > 0, or ndarray of shape (B,) for an ensemble

    Returns
    -------
    float or ndarray of shape (B,)

    Raises
    ------
    ValueError
        If the energy exceeds the float64 range (``beta`` above ~700); use
        :func:`log_energy` there.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0.0], [1.0, 0.0]])
    >>> bool(np.isclose(energy(X, 1.0), np.e / 2))
    True
    """
    le = log_energy(X, beta)
    if np.any(np.asarray(le) > 709.0):
        raise ValueError("energy overflows float64 for this beta; use attnlib.log_energy")
    return float(np.exp(le)) if np.ndim(le) == 0 else np.exp(le)


def energy_gradient(X: np.ndarray, beta: float | np.ndarray) -> np.ndarray:
    r"""Spherical gradient of :math:`E_\beta`: :math:`\frac{1}{n^2}\sum_j e^{\beta\langle x_i,x_j\rangle} P_{x_i} x_j`.

    Equal to ``1/n`` times the USA velocity field (MATH.md §3).

    Returns
    -------
    ndarray, same shape as ``X``
    """
    X, b = _prepare(X, beta)
    n = X.shape[-2]
    G = X @ np.swapaxes(X, -1, -2)
    # exp(beta * G) = exp(beta) * exp(beta (G - 1)); the prefactor is applied last.
    W = np.exp(b * (G - 1.0))
    scale = np.exp(np.asarray(b, dtype=np.float64)) / (n * n)
    if np.any(~np.isfinite(scale)):
        raise ValueError("energy gradient overflows float64 for this beta (beta > ~700)")
    return (scale * project(X, W @ X)).astype(X.dtype, copy=False)
