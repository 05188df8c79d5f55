r"""The Kuramoto model of coupled oscillators and its order parameter.

At :math:`\beta = 0` self-attention on the circle ([GLPR] §7, :mod:`attnlib.circle`)
is the Kuramoto model with coupling one and no natural frequencies; with
frequencies :math:`\omega_i` of a symmetric unimodal density :math:`g` it
synchronises above the critical coupling :math:`K_c = 2/(\pi g(0))`: :math:`2\gamma`
for the Lorentzian of width :math:`\gamma`, :math:`\sqrt{8/\pi}\,s` for the Gaussian
of standard deviation :math:`s` (Kuramoto 1984; Strogatz, *From Kuramoto to
Crawford*, 2000).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._validation import (
    as_angles,
    as_finite,
    as_member_param,
    check_choice,
    check_int,
    check_real,
    check_rng,
)

__all__ = ["order_parameter", "Kuramoto", "natural_frequencies", "kuramoto_r"]


def order_parameter(theta: Any, *, k: int = 1) -> tuple[np.ndarray, np.ndarray]:
    r"""Kuramoto order parameter :math:`r e^{i\psi} = \frac1n\sum_j e^{ik\theta_j}`.

    Parameters
    ----------
    theta : ndarray, shape (n,) or (B, n)
    k : int
        Harmonic (``k = 1`` is the usual order parameter; ``k = m`` detects ``m``
        equally spaced clusters).

    Returns
    -------
    r, psi : float arrays of shape () or (B,)

    Examples
    --------
    >>> import numpy as np
    >>> r, psi = order_parameter(np.zeros(5))
    >>> float(r)
    1.0
    """
    theta = as_angles(theta)
    k = check_int(k, "k", low=1)
    z = np.mean(np.exp(1j * k * theta), axis=-1)
    return np.abs(z), np.angle(z)


@dataclass(frozen=True)
class Kuramoto:
    r"""The Kuramoto model of coupled oscillators.

    .. math::

        \dot\theta_i = \omega_i + \frac{K}{n}\sum_{j=1}^n\sin(\theta_j-\theta_i).


    Evaluated in :math:`O(n)` as :math:`\omega_i + K r\sin(\psi - \theta_i)` with the
    order parameter :math:`re^{i\psi} = \frac1n\sum_j e^{i\theta_j}`.

    Parameters
    ----------
    omega : ndarray, shape (n,)
        Natural frequencies.
    coupling : float or ndarray of shape (B,)
        Coupling strength ``K >= 0``; an array couples an ensemble of angles of shape
        ``(B, n)`` (one coupling per member), e.g. to sweep ``K`` in one run.

    Examples
    --------
    >>> import numpy as np
    >>> m = Kuramoto(np.zeros(2), 1.0)
    >>> np.round(m(np.array([0.0, np.pi / 2])), 12).tolist()
    [0.5, -0.5]
    """

    omega: Any = field(repr=False)
    coupling: Any = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "omega", as_angles(self.omega, "omega", (1,)))
        c = as_member_param(self.coupling, "coupling")
        if np.ndim(c):
            c = c[:, None]
        object.__setattr__(self, "_c", c)

    def __call__(self, theta: np.ndarray) -> np.ndarray:
        z = np.mean(np.exp(1j * theta), axis=-1, keepdims=True)
        return self.omega + self._c * np.imag(z * np.exp(-1j * theta))

    def velocity(self, theta: Any) -> np.ndarray:
        """Validated velocity at ``theta`` of shape (n,) or (B, n)."""
        theta = as_angles(theta)
        if theta.shape[-1] != self.omega.shape[0]:
            raise ValueError(
                f"theta must have n = {self.omega.shape[0]} angles (as omega), got "
                f"shape {theta.shape}"
            )
        if np.ndim(self._c) and (theta.ndim != 2 or theta.shape[0] != self._c.shape[0]):
            raise ValueError(
                f"theta must have shape ({self._c.shape[0]}, n) for the "
                f"{self._c.shape[0]} values of coupling, got shape {theta.shape}"
            )
        return self(theta)


#: The frequency laws of :func:`natural_frequencies`.
_LAWS = ("lorentzian", "gaussian")


def natural_frequencies(
    n: int,
    *,
    law: str = "lorentzian",
    scale: float = 1.0,
    rng: np.random.Generator | int | None = None,
) -> np.ndarray:
    r"""Natural frequencies of ``n`` oscillators with a centred, symmetric law.

    ``law="lorentzian"``: the Lorentzian (Cauchy) density of width
    :math:`\gamma` = ``scale``, :math:`g(\omega) = \gamma/(\pi(\omega^2+\gamma^2))`,
    whose Kuramoto critical coupling is :math:`K_c = 2/(\pi g(0)) = 2\gamma`.
    ``law="gaussian"``: the normal density of standard deviation :math:`s` =
    ``scale``, :math:`g(\omega) = e^{-\omega^2/2s^2}/(s\sqrt{2\pi})`, with
    :math:`K_c = \sqrt{8/\pi}\,s`.

    Without ``rng`` the deterministic quantiles :math:`\omega_i = G^{-1}(u_i)`,
    :math:`u_i = (i - 1/2)/n`, of the distribution function :math:`G` are returned (a
    standard way to remove sampling noise), e.g.
    :math:`\omega_i = \gamma\tan(\pi(u_i - 1/2))` for the Lorentzian; with ``rng``
    an i.i.d. sample.

    Parameters
    ----------
    n : int
        Number of oscillators, ``>= 1``.
    law : {"lorentzian", "gaussian"}
    scale : float
        The width ``gamma`` (Lorentzian) or the standard deviation (Gaussian),
        ``>= 0``.
    rng : numpy.random.Generator or int, optional
        Randomness for an i.i.d. sample; ``None`` gives the quantiles.

    Returns
    -------
    ndarray, shape (n,)

    Examples
    --------
    >>> w = natural_frequencies(4, scale=1.0)
    >>> bool(abs(w.sum()) < 1e-12)
    True
    >>> natural_frequencies(3, law="gaussian", scale=2.0).round(4).tolist()
    [-1.9348, 0.0, 1.9348]
    """
    n = check_int(n, "n", low=1)
    law = check_choice(law, "law", _LAWS)
    scale = check_real(scale, "scale", low=0.0)
    if law == "lorentzian":
        if rng is None:
            u = (np.arange(1, n + 1) - 0.5) / n
        else:
            u = check_rng(rng).uniform(size=n)
        return scale * np.tan(np.pi * (u - 0.5))
    if rng is not None:
        return scale * check_rng(rng).standard_normal(n)
    from scipy.special import ndtri  # not at import: attnlib stays light

    return scale * ndtri((np.arange(1, n + 1) - 0.5) / n)


def _lorentzian_frequencies(
    n: int, gamma: float, *, rng: np.random.Generator | int | None = None
) -> np.ndarray:
    """The calling convention of the retired ``lorentzian_frequencies``:
    ``natural_frequencies(n, scale=gamma, rng=rng)``, the same numbers."""
    return natural_frequencies(n, law="lorentzian", scale=gamma, rng=rng)


def kuramoto_r(coupling: Any, gamma: float) -> np.ndarray:
    r"""Stationary order parameter of the Kuramoto model with Lorentzian frequencies.

    .. math::

        r_\infty = \sqrt{1 - K_c/K}\ \ (K > K_c = 2\gamma),
        \qquad r_\infty = 0\ \ (K \le K_c),

    in the limit :math:`n\to\infty` (Kuramoto 1984; Strogatz 2000).

    Examples
    --------
    >>> kuramoto_r([1.0, 4.0], 1.0).tolist()
    [0.0, 0.7071067811865476]
    """
    gamma = check_real(gamma, "gamma", low=0.0)
    K = as_finite(coupling, "coupling")
    if not np.all(np.isfinite(K)) or np.any(K < 0):
        raise ValueError("coupling must be finite and >= 0")
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.sqrt(np.clip(1.0 - 2.0 * gamma / K, 0.0, None))
    return np.where(K > 2.0 * gamma, r, 0.0)
