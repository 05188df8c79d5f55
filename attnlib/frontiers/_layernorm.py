r"""Where to put layer normalisation: post-LN, pre-LN and peri-LN dynamics.

A Transformer layer adds an attention update to each token, and layer normalisation
(LN, here: division by the norm) can sit in three places. With
:math:`u_i(X) = \sum_j A_{ij}(X)\,V x_j` the attention update of the normalised tokens
:math:`x_j` (softmax weights :math:`A` of :class:`attnlib.Model`), the continuous-time
versions are

* **post-LN** (the book's model): the state is normalised after the update, tokens
  stay on the sphere, :math:`\dot x_i = P_{x_i} u_i(X)`;
* **pre-LN**: the state :math:`y_i \in \mathbb R^d` is not normalised; attention
  reads :math:`x_i = y_i/|y_i|`, and :math:`\dot y_i = u_i(X)`;
* **peri-LN**: as pre-LN, and the update is normalised too,
  :math:`\dot y_i = u_i(X)/|u_i(X)|`.

Each is :class:`attnlib.Model` with ``layer_norm="post"``, ``"pre"`` or ``"peri"``
(what :func:`NormalisedModel` returns).

With :math:`r_i = |y_i|`, differentiating :math:`x_i = y_i/r_i` gives

.. math::

    \dot r_i = \langle x_i, u_i\rangle / m_i, \qquad
    \dot x_i = \frac{P_{x_i} u_i}{r_i\, m_i},

with :math:`m_i = 1` (pre-LN) or :math:`|u_i|` (peri-LN): on the sphere, pre- and
peri-LN run the post-LN field at the slower speed :math:`1/(r_i m_i)`, a change of
clock per token, and a global one when all radii are equal (the equiangular
configuration below, and asymptotically, since every :math:`r_i(t)/t` tends to the
same limit once the tokens have clustered).

Equiangular reduction (orthonormal initial tokens, ``d >= n``, [GLPR] Thm 6.8): all
inner products stay equal to :math:`\gamma`, all radii to :math:`r`. With the weights
:math:`a` of a token on itself and :math:`b` on each other token (SA:
:math:`a = 1/(1+(n-1)w)`, :math:`b = w\,a`, :math:`w = e^{-\beta(1-\gamma)}`; USA:
:math:`a = e^\beta/n`, :math:`b = e^{\beta\gamma}/n`),

.. math::

    \dot\gamma = \frac{2b(1-\gamma)(1+(n-1)\gamma)}{r\,m},\qquad
    \dot r = \frac{a + (n-1)b\gamma}{m},\qquad
    m^2 = a^2 + 2(n-1)ab\gamma + (n-1)b^2\big(1 + (n-2)\gamma\big).

Post-LN is :math:`r \equiv 1, m \equiv 1`. Near :math:`\gamma = 1`,
:math:`1 - \gamma \sim e^{-2t}` for post-LN SA, and :math:`\sim C/t^2` for pre- and
peri-LN (both grow :math:`r \sim t`).

References
----------
Rigollet, *The mean-field dynamics of transformers*, arXiv:2512.01868 (normalisation
schemes and contraction speeds).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from .._lazy import integrate

from .._validation import (
    NORMALIZATIONS,
    as_finite,
    as_numeric,
    check_choice,
    check_int,
    check_real,
)
from ..attention import Model
from ..equiangular import equiangular_field, equiangular_weights, solve_equiangular
from .._stepping import output_times
from ..integrate import Trajectory
from .._results import trajectory

__all__ = [
    "SCHEMES",
    "NormalisedModel",
    "sphere_clock",
    "EquiangularScheme",
    "equiangular_scheme",
    "equiangular_scheme_rhs",
    "scheme_time_to",
]

#: The placements of layer normalisation of :func:`NormalisedModel`.
SCHEMES = ("post", "pre", "peri")


def NormalisedModel(scheme: str = "post", **model: Any) -> Model:
    r"""Self-attention with layer normalisation at one of three places:
    :class:`attnlib.Model` with ``layer_norm=scheme``.

    Parameters
    ----------
    scheme : {"post", "pre", "peri"}
        Where LN sits (see the module docstring).
    **model
        Keyword arguments of :class:`attnlib.Model` (``beta``, ``Q``, ``K``, ``V``,
        ``normalization``, ``mask``, ...), except ``geometry``, which the scheme sets.

    Returns
    -------
    Model
        ``Model(layer_norm=scheme, **model)``, usable with :func:`attnlib.simulate`:
        on the sphere for post-LN (``sphere`` is True, states retracted after each
        step), in :math:`\mathbb R^d` for pre- and peri-LN, the attention reading
        the normalised states.

    Examples
    --------
    >>> import numpy as np
    >>> from attnlib import simulate, sample_sphere
    >>> Y0 = sample_sphere(6, 3, rng=0)
    >>> tr = simulate(NormalisedModel("pre", beta=1.0), Y0, t_final=2.0, dt=0.05)
    >>> bool(np.all(np.linalg.norm(tr.final, axis=1) > 1.0))  # the radius grows
    True
    """
    check_choice(scheme, "scheme", SCHEMES)
    if "sphere" in model or "geometry" in model:
        raise ValueError(
            "the geometry is set by the scheme: post-LN on the sphere, pre- and "
            "peri-LN in R^d"
        )
    return Model(layer_norm=scheme, **model)


def sphere_clock(times: Any, radii: Any, *, speed: Any = None) -> np.ndarray:
    r"""The clock :math:`s(t) = \int_0^t d\tau / (r(\tau) m(\tau))` of a token.

    The directions of pre-LN (``speed=None``, :math:`m = 1`) and peri-LN
    (``speed`` :math:`= |u|`) tokens move like post-LN tokens at the clock ``s``
    (exactly when all radii are equal). Trapezoidal rule on the given samples.

    Parameters
    ----------
    times : array_like, shape (T,)
        Non-decreasing times, starting at 0.
    radii : array_like, shape (T, ...)
        Radii :math:`r(t) > 0` at ``times`` (any trailing shape, e.g. one per token).
    speed : array_like, shape (T, ...), optional
        :math:`m(t) = |u(t)|` for peri-LN.

    Returns
    -------
    ndarray, shape (T, ...)

    Examples
    --------
    >>> import numpy as np
    >>> t = np.linspace(0, 1, 1001)
    >>> float(sphere_clock(t, 1 + t)[-1].round(6)), round(float(np.log(2)), 6)
    (0.693147, 0.693147)
    """
    t = output_times(times)
    r = as_numeric(radii, "radii").astype(np.float64)
    if r.shape[:1] != t.shape or not np.all(np.isfinite(r)) or np.any(r <= 0):
        raise ValueError(
            f"radii must be positive and finite with leading axis {t.size} (one per "
            f"entry of times), got shape {r.shape}"
        )
    rate = 1.0 / r
    if speed is not None:
        m = as_numeric(speed, "speed").astype(np.float64)
        if m.shape != r.shape or not np.all(np.isfinite(m)) or np.any(m <= 0):
            raise ValueError(f"speed must be positive with shape {r.shape}")
        rate = rate / m
    dt = np.diff(t).reshape((-1,) + (1,) * (r.ndim - 1))
    steps = 0.5 * dt * (rate[1:] + rate[:-1])
    return np.concatenate([np.zeros_like(rate[:1]), np.cumsum(steps, axis=0)])


def equiangular_scheme_rhs(
    gamma: Any,
    radius: Any,
    *,
    beta: float,
    n: int,
    scheme: str = "post",
    normalization: str = "sa",
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Right-hand side :math:`(\dot\gamma, \dot r, \dot s)` of the equiangular ODE.

    :math:`s` is the clock of :func:`sphere_clock` (:math:`\dot s = 1/(r m)`); for
    post-LN, :math:`\dot r = 0` and :math:`\dot s = 1`. Vectorised in ``gamma`` and
    ``radius``.
    """
    beta = check_real(beta, "beta", low=0.0)
    n = check_int(n, "n", low=1)
    check_choice(scheme, "scheme", SCHEMES)
    check_choice(normalization, "normalization", NORMALIZATIONS)
    g = as_finite(gamma, "gamma")
    if np.any(np.abs(g) > 1.0):
        raise ValueError("gamma must lie in [-1, 1] (an inner product of unit tokens)")
    r = as_finite(radius, "radius")
    if np.any(r <= 0):
        raise ValueError("radius must be > 0")
    try:
        np.broadcast_shapes(g.shape, r.shape)
    except ValueError:
        raise ValueError(
            f"gamma and radius must broadcast together, got shapes {g.shape} and "
            f"{r.shape}"
        ) from None
    return equiangular_field(g, r, beta, n, scheme, normalization)


#: The result of :func:`equiangular_scheme` is an :class:`attnlib.Trajectory` (the
#: name of earlier releases is kept).
EquiangularScheme = Trajectory


def equiangular_scheme(
    times: Any,
    *,
    beta: float,
    n: int,
    scheme: str = "post",
    normalization: str = "sa",
    gamma0: float = 0.0,
    radius0: float = 1.0,
    max_steps: int = 100_000,
) -> Trajectory:
    r"""Solve the equiangular ODE of a normalisation scheme (DOP853, ``rtol=1e-12``).

    Parameters
    ----------
    times : array_like, shape (T,)
        Non-decreasing output times ``>= 0``.
    beta, n, normalization
        As in :func:`attnlib.equiangular_gamma`.
    scheme : {"post", "pre", "peri"}
    gamma0 : float
        Initial inner product in ``[-1/(n-1), 1)``.
    radius0 : float
        Initial norm of the tokens (``> 0``).
    max_steps : int
        Cap on the number of DOP853 steps, as in :func:`attnlib.equiangular_gamma`
        (the one solver of both, ``attnlib.equiangular.solve_equiangular``).

    Returns
    -------
    Trajectory
        ``method="DOP853"`` and, in ``info`` (read as attributes):

        * ``gamma`` (ndarray, shape (T,)): The common inner product of the normalised
          tokens.
        * ``radius`` (ndarray, shape (T,)): The common norm of the tokens (one for
          post-LN).
        * ``clock`` (ndarray, shape (T,)): :math:`s(t)`: the post-LN time at which
          post-LN has the same ``gamma``.
        * ``scheme`` (str)

    Examples
    --------
    >>> sol = equiangular_scheme([0.0, 3.0], beta=1.0, n=32, scheme="post")
    >>> round(float(sol.info["gamma"][-1]), 6)
    0.914207
    """
    t = output_times(times)
    gamma0 = check_real(gamma0, "gamma0", low=-1.0, high=1.0)
    radius0 = check_real(radius0, "radius0", low=0.0, strict_low=True)
    max_steps = check_int(max_steps, "max_steps", low=1)
    equiangular_scheme_rhs(
        gamma0, radius0, beta=beta, n=n, scheme=scheme, normalization=normalization
    )
    gamma, radius, clock = solve_equiangular(
        t,
        beta=beta,
        n=n,
        normalization=normalization,
        scheme=scheme,
        gamma0=gamma0,
        radius0=radius0,
        max_steps=max_steps,
        name="equiangular_scheme",
    )
    return _scheme_result(t, gamma, radius, clock, scheme)


def _scheme_result(t, gamma, radius, clock, scheme) -> Trajectory:
    return trajectory(
        series=("gamma", "radius", "clock"),
        times=t,
        final=np.array([gamma[-1], radius[-1], clock[-1]]),
        method="DOP853",
        gamma=gamma,
        radius=radius,
        clock=clock,
        scheme=scheme,
    )


def scheme_time_to(
    level: float,
    *,
    beta: float,
    n: int,
    scheme: str = "post",
    normalization: str = "sa",
) -> float:
    r"""First time at which the equiangular :math:`\gamma` of a scheme hits ``level``.

    Integrated in the post-LN clock :math:`s` (:func:`sphere_clock`), where
    :math:`\gamma` follows the post-LN equation and (module docstring)
    :math:`d\log r/ds = \langle x_i, u_i\rangle` and :math:`dt/ds = r\,m`: the
    pre-LN time is exponential in the post-LN one, e.g. about :math:`e^{70}` for
    ``beta = 8``, ``n = 32``, ``level = 1 - 1e-3``, which no integration in
    :math:`t` reaches. DOP853 with ``rtol=1e-10`` and an event at ``level``.

    Examples
    --------
    >>> t_post = scheme_time_to(1 - 1e-3, beta=1.0, n=32, scheme="post")
    >>> t_pre = scheme_time_to(1 - 1e-3, beta=1.0, n=32, scheme="pre")
    >>> round(t_post, 3), t_pre > 5 * t_post
    (5.27, True)
    """
    level = check_real(level, "level", low=0.0)
    if level >= 1.0:
        raise ValueError(f"level must be < 1 (reached only as t -> inf), got {level}")
    equiangular_scheme_rhs(
        0.0, 1.0, beta=beta, n=n, scheme=scheme, normalization=normalization
    )
    if scheme == "post":
        from ..equiangular import equiangular_time_to

        return equiangular_time_to(level, beta=beta, n=n, normalization=normalization)

    def rhs(_s, y):
        g = y[0]
        a, b = equiangular_weights(g, beta, n, normalization)
        m = 1.0
        if scheme == "peri":
            m = np.sqrt(
                a * a + 2 * (n - 1) * a * b * g + (n - 1) * b * b * (1 + (n - 2) * g)
            )
        flow = 2.0 * b * (1.0 - g) * (1.0 + (n - 1) * g)
        # post-LN clock: gamma' = flow (r = m = 1 there); log r' = <x, u> / m * r m
        return [flow, a + (n - 1) * b * g, np.exp(y[1]) * m]

    def reached(_s, y):
        return y[0] - level

    reached.terminal = True
    s_max = 1e3 + 10 * np.exp(min(beta, 700.0))  # beyond the post-LN time to level
    sol = integrate.solve_ivp(
        rhs,
        (0.0, s_max),
        [0.0, 0.0, 0.0],
        method="DOP853",
        events=reached,
        rtol=1e-10,
        atol=1e-12,
    )
    if sol.status != 1:
        raise ValueError(
            f"gamma did not reach level={level:g} at beta={beta:g}, n={n}: "
            f"{sol.message}; use a smaller beta"
        )
    return float(sol.y_events[0][0][2])
