r"""Exponentially scaled Bessel functions that stay finite where scipy's do not.

:func:`scipy.special.ive` returns ``nan`` for arguments above about :math:`10^{10}`
(and :math:`e^{-x} I_\nu(x)` underflows to zero for large orders at small ``x``).
:func:`ive` fills the first gap with the large-argument expansion

.. math::

    e^{-x} I_\nu(x) = \frac{1}{\sqrt{2\pi x}} \sum_{k\ge0} (-1)^k
        \frac{\prod_{j=1}^{k} (4\nu^2 - (2j-1)^2)}{k!\,(8x)^k}

(Abramowitz & Stegun 9.7.1), accurate to rounding where :math:`\nu^2 \ll x`, and
raises a ``ValueError`` where neither applies, so that no caller sees a silent
``nan``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from ._lazy import special
from ._validation import log_max

__all__ = ["ive", "equiangular_rate", "spectral_norm"]

# the expansion is used where nu^2 / (2 x) is below this (terms then fall below
# 1e-16 after a few)
_ASYMPTOTIC_RATIO = 1e-3


def _ive_large(v: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The large-argument expansion of ``ive(v, x)`` (10 terms)."""
    mu = 4.0 * v * v
    term = np.ones(np.broadcast(v, x).shape)
    total = term.copy()
    for k in range(1, 11):
        term = term * (-(mu - (2 * k - 1) ** 2) / (k * 8.0 * x))
        total = total + term
    return total / np.sqrt(2.0 * np.pi * x)


def ive(v: Any, x: Any) -> np.ndarray:
    r""":math:`e^{-x} I_\nu(x)` for ``x >= 0``, finite for every ``x``.

    Parameters
    ----------
    v, x : array_like
        Orders and non-negative arguments (broadcast together).

    Returns
    -------
    ndarray

    Raises
    ------
    ValueError
        Where scipy gives no finite value and the expansion does not apply
        (orders comparable with :math:`\sqrt x` at arguments above about
        :math:`10^{10}`).

    Examples
    --------
    >>> float(ive(0.5, 1e300) * np.sqrt(2 * np.pi * 1e300))
    1.0
    """
    v, x = np.broadcast_arrays(
        np.asarray(v, dtype=np.float64), np.asarray(x, dtype=np.float64)
    )
    out = np.array(special.ive(v, x), dtype=np.float64, ndmin=1)
    vf, xf = v.reshape(out.shape), x.reshape(out.shape)
    bad = ~np.isfinite(out)
    if np.any(bad):
        vb, xb = vf[bad], xf[bad]
        if np.any(~(vb * vb / (2.0 * xb) <= _ASYMPTOTIC_RATIO)):
            raise ValueError(
                "the scaled Bessel function e^-x I_v(x) is not available in float64 "
                f"for orders up to {float(np.max(vb)):g} at x = {float(np.min(xb)):g}"
            )
        out[bad] = _ive_large(vb, xb)
    return out.reshape(v.shape)


def equiangular_rate(g: Any, beta: float, n: int, normalization: str) -> Any:
    """:func:`attnlib.equiangular_rhs` on checked arguments: the integrators of the
    equiangular ODE (:mod:`attnlib.equiangular`, :mod:`attnlib.frontiers`) call it
    once per evaluation (the quadrature of ``equiangular_time_to`` some 500 times)."""
    core = 2.0 * (1.0 - g) * ((n - 1) * g + 1.0)
    if normalization == "sa":
        w = np.exp(-beta * (1.0 - g))
        return core * w / (1.0 + (n - 1) * w)
    top = beta * float(np.max(g, initial=0.0))
    if top > log_max(np.float64):
        raise ValueError(
            f"the USA equiangular rate carries e^(beta gamma) = e^{top:.1f}, beyond "
            f"the float64 range (e^{log_max(np.float64):.1f}); use "
            "normalization='sa' or a smaller beta"
        )
    return core * np.exp(beta * g) / n


def spectral_norm(D: np.ndarray) -> np.ndarray:
    """Spectral norm of the symmetric ``D`` (per member): a bound of <x, D y> on the
    sphere, by which the energies of ``D`` are shifted."""
    return np.max(np.abs(np.linalg.eigvalsh(D)), axis=-1)
