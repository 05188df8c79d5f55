r"""A feed-forward (perceptron) block next to self-attention, on the circle.

A Transformer layer adds to the attention update a feed-forward one,
:math:`x \mapsto W_2\,\mathrm{relu}(W_1x + b)`, with :math:`W_1 \in \R^{m\times 2}`,
:math:`b \in \R^m`, :math:`W_2 \in \R^{2\times m}`. On the circle,
:math:`x = (\cos\theta, \sin\theta)`, keeping its tangential part gives the angle
velocity

.. math::

    \dot\theta_i = \underbrace{-\frac1n\sum_j e^{\beta\cos(\theta_i-\theta_j)}
        \sin(\theta_i-\theta_j)}_{\text{USA}}
        + \lambda\,\langle W_2\,\mathrm{relu}(W_1x_i + b),\ x_i^\perp\rangle,
    \qquad x^\perp = (-\sin\theta, \cos\theta).

With :math:`W_2 = W_1^\top\mathrm{diag}(a)` the feed-forward field is the gradient of
the perceptron potential
:math:`\Phi(x) = \frac12\sum_k a_k\,\mathrm{relu}(\langle w_k, x\rangle + b_k)^2`
(:math:`w_k` the rows of :math:`W_1`), and the whole dynamics is the gradient ascent
:math:`\dot\theta = n\nabla_\theta \mathcal E` of

.. math::

    \mathcal E(\theta) = \frac{1}{2\beta n^2}\sum_{i,j} e^{\beta\cos(\theta_i-\theta_j)}
        + \frac{\lambda}{n}\sum_i \Phi(x_i)

(:func:`FeedForwardCircle.energy`; at :math:`\beta = 0` the first sum is replaced by
its :math:`\beta`-derivative at zero, :math:`\frac1{2n^2}\sum\cos(\theta_i-\theta_j)`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._validation import as_angles, as_finite, check_int, check_real, check_rng
from ..circle._angles import angle_velocity

__all__ = ["Perceptron", "FeedForwardCircle"]

#: Largest beta: the USA field and energy carry e^beta (float64 overflows beyond).
_BETA_MAX = float(np.log(np.finfo(float).max))


@dataclass(frozen=True)
class Perceptron:
    r"""The perceptron
    :math:`x \mapsto W_1^\top\mathrm{diag}(a)\,\mathrm{relu}(W_1x + b)` on the
    circle, the gradient of
    :math:`\Phi(x) = \frac12\sum_k a_k\,\mathrm{relu}(\langle w_k, x\rangle + b_k)^2`.

    Parameters
    ----------
    W1 : ndarray, shape (m, 2)
    b : ndarray, shape (m,)
    a : ndarray, shape (m,)
        Output weights (``W2 = W1.T * a``); ``a > 0`` makes :math:`\Phi` convex in
        :math:`x`.

    Examples
    --------
    >>> p = Perceptron(np.array([[1.0, 0.0]]), np.zeros(1), np.ones(1))
    >>> p.potential(np.array([0.0, np.pi])).tolist()
    [0.5, 0.0]
    """

    W1: Any = field(repr=False)
    b: Any = field(repr=False)
    a: Any = field(repr=False)

    def __post_init__(self) -> None:
        W1 = as_finite(self.W1, "W1")
        if W1.ndim != 2 or W1.shape[1] != 2 or W1.shape[0] < 1:
            raise ValueError(f"W1 must have shape (m, 2) with m >= 1, got {W1.shape}")
        m = W1.shape[0]
        b = as_finite(self.b, "b")
        a = as_finite(self.a, "a")
        for name, v in (("b", b), ("a", a)):
            if v.shape != (m,):
                raise ValueError(
                    f"{name} must have shape ({m},) as W1 has m = {m} rows, "
                    f"got {v.shape}"
                )
        with np.errstate(over="ignore"):  # bounds on |Phi| and |Phi'| on the circle
            top = np.abs(a) * (np.hypot(W1[:, 0], W1[:, 1]) + np.abs(b)) ** 2
            if not np.isfinite(np.sum(top)):
                raise ValueError(
                    "W1, b and a must be small enough for the potential to be "
                    "finite (sum_k |a_k| (|w_k| + |b_k|)^2 overflows)"
                )
        object.__setattr__(self, "W1", W1)
        object.__setattr__(self, "b", b)
        object.__setattr__(self, "a", a)

    @classmethod
    def random(
        cls, m: int, *, scale: float = 1.0, rng: np.random.Generator | int
    ) -> Perceptron:
        """Gaussian ``W1``, ``b`` and ``a`` of standard deviation ``scale``
        (``|a|`` for the output weights, so that :math:`\\Phi` is convex)."""
        m = check_int(m, "m", low=1)
        scale = check_real(scale, "scale", low=0.0, strict_low=True)
        g = check_rng(rng)
        W1 = scale * g.standard_normal((m, 2))
        b = scale * g.standard_normal(m)
        a = np.abs(scale * g.standard_normal(m))
        return cls(W1, b, a)

    def _pre(self, theta: np.ndarray) -> np.ndarray:
        # <w_k, x> + b_k for every angle: shape theta.shape + (m,)
        c, s = np.cos(theta)[..., None], np.sin(theta)[..., None]
        return c * self.W1[:, 0] + s * self.W1[:, 1] + self.b

    def potential(self, theta: Any) -> np.ndarray:
        r""":math:`\Phi(x(\theta))`, of the shape of ``theta``."""
        theta = as_angles(theta)
        return 0.5 * np.sum(self.a * np.maximum(self._pre(theta), 0.0) ** 2, axis=-1)

    def field(self, theta: Any) -> np.ndarray:
        r"""The tangential component :math:`\langle W_2\,\mathrm{relu}(W_1x+b),
        x^\perp\rangle = \frac{d}{d\theta}\Phi(x(\theta))`, of the shape of
        ``theta``."""
        theta = as_angles(theta)
        h = self.a * np.maximum(self._pre(theta), 0.0)  # diag(a) relu(W1 x + b)
        out = h @ self.W1  # W2 relu(...) with W2 = W1^T diag(a), shape (..., 2)
        return -np.sin(theta) * out[..., 0] + np.cos(theta) * out[..., 1]


@dataclass(frozen=True)
class FeedForwardCircle:
    r"""USA self-attention on the circle plus a feed-forward block of strength
    ``strength``: :math:`\dot\theta = v_\beta(\theta) + \lambda\,\Phi'(\theta)`.

    Parameters
    ----------
    perceptron : Perceptron
    beta : float
        Inverse temperature, ``>= 0`` and at most :math:`\log(\text{float64 max})
        \approx 709.78` (keyword-only; USA carries :math:`e^\beta`).
    strength : float
        :math:`\lambda \ge 0`; ``0`` is pure attention.

    Examples
    --------
    >>> p = Perceptron(np.array([[1.0, 0.0]]), np.zeros(1), np.ones(1))
    >>> m = FeedForwardCircle(p, beta=1.0, strength=0.0)
    >>> float(abs(m(np.array([0.3, 0.3]))[0]))
    0.0
    """

    perceptron: Perceptron
    beta: float = field(kw_only=True)
    strength: float = field(default=1.0, kw_only=True)

    def __post_init__(self) -> None:
        if not isinstance(self.perceptron, Perceptron):
            raise TypeError(
                f"perceptron must be a Perceptron, got {type(self.perceptron).__name__}"
            )
        object.__setattr__(
            self, "beta", check_real(self.beta, "beta", low=0.0, high=_BETA_MAX)
        )
        object.__setattr__(
            self, "strength", check_real(self.strength, "strength", low=0.0)
        )

    def __call__(self, theta: np.ndarray) -> np.ndarray:
        v = angle_velocity(theta, beta=self.beta)
        if self.strength:
            v = v + self.strength * self.perceptron.field(theta)
        return v

    def energy(self, theta: Any) -> np.ndarray:
        r"""The energy :math:`\mathcal E(\theta)` that the dynamics ascends, for
        ``theta`` of shape (n,) or (B, n)."""
        theta = as_angles(theta)
        n = theta.shape[-1]
        diff = theta[..., :, None] - theta[..., None, :]
        if self.beta > 0:  # e^beta mean(e^{beta (cos - 1)}): finite up to _BETA_MAX
            att = np.mean(np.exp(self.beta * (np.cos(diff) - 1)), axis=(-2, -1))
            att = np.exp(self.beta) * att / (2 * self.beta)
        else:
            att = np.sum(np.cos(diff), axis=(-2, -1)) / (2 * n**2)
        pot = np.mean(self.perceptron.potential(theta), axis=-1)
        return att + self.strength * pot
