r"""Metastability at large :math:`\beta`: clusters that merge over exponentially long
times, and the energy staircase of [GKPR].

On the circle, USA with the exponent shifted by its largest value (time measured in
units of the self-interaction, :math:`t = e^\beta t_{\text{USA}}`) moves clusters of
masses :math:`m_k` (:math:`\sum_k m_k = n`) at angles :math:`\theta_k` by

.. math::

    \dot\theta_k = -\frac1n\sum_l m_l \sin(\theta_k - \theta_l)\,
    e^{\beta(\cos(\theta_k - \theta_l) - 1)},

the gradient ascent of :math:`E = \frac{1}{n^2}\sum_{k,l} m_k m_l
e^{\beta(\cos(\theta_k-\theta_l)-1)}`, which equals :math:`\sum_k m_k^2/n^2` for
well-separated clusters. Tokens that have met move together forever (their relative
velocity vanishes with their distance), so :func:`merge_flow` replaces two clusters
closer than ``merge_tol`` by one cluster at their centre of mass (which USA
conserves, :math:`\sum_k m_k\dot\theta_k = 0`), and integrates along the arc
length of the path, with the forces divided by the largest of them: a gap
:math:`\theta` closes after a time of order :math:`e^{\beta(1 - \cos\theta)}`, which
is :math:`e^{100}` and more for the gaps of the staircase, unreachable with steps in
:math:`t`, and the forces themselves fall below the smallest float from
:math:`\beta(1-\cos\theta) \approx 745`.

The field is the angle form of SA/USA on the circle (:mod:`attnlib.circle`) with
weighted atoms, evaluated from angle differences.

References
----------
[GKPR] Geshkovski, Koubbi, Polyanskiy, Rigollet, *Dynamic metastability in the
self-attention model*, arXiv:2410.06833.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from .._deprecation import moved_arguments
from .._lazy import integrate

from .._results import Trajectory, trajectory
from .._control import Adaptive
from .._stepping import drive
from .._validation import as_finite, check_real

__all__ = ["cluster_energy", "MergeFlow", "merge_flow", "weighted_angle_velocity"]

TWO_PI = 2.0 * np.pi


def _xy(theta):
    return np.stack([np.cos(theta), np.sin(theta)], axis=-1)


@moved_arguments("theta masses beta n")
def weighted_angle_velocity(
    theta: np.ndarray, masses: np.ndarray, *, beta: float, n: float
) -> np.ndarray:
    r""":math:`\dot\theta_k` of the module docstring.

    Evaluated from the angle differences, the angle form of the field on the circle:
    the forces between distant clusters (:math:`e^{-190}` and less along the
    staircase) survive, while any evaluation through Cartesian coordinates and a
    projection leaves a rounding residue of order :math:`10^{-17}` that would drown
    them.
    """
    theta, masses = _angles_and_masses(theta, masses, "theta")
    beta = check_real(beta, "beta", low=0.0)
    n = check_real(n, "n", low=0.0, strict_low=True)
    return _velocity(theta, masses, beta, n)


def _angles_and_masses(theta, masses, name):
    th = as_finite(theta, name, ndims=(1,))
    if th.size == 0:
        raise ValueError(f"{name} must be non-empty")
    m = np.ones_like(th) if masses is None else as_finite(masses, "masses")
    if m.shape != th.shape or np.any(m <= 0):
        raise ValueError(
            f"masses must be positive, one per angle of {name} (the same length, "
            f"shape {th.shape}), "
            f"got shape {m.shape}"
        )
    return th, m


def _velocity(theta, masses, beta, n):
    """:func:`weighted_angle_velocity` on checked arguments: the scaled field of
    :func:`_scaled_velocity` times its scale (a single cluster does not move)."""
    if theta.size == 1:
        return np.zeros(1)
    w, A = _scaled_velocity(theta, masses, beta, n)
    return w * np.exp(A)


@moved_arguments("theta masses beta")
def cluster_energy(theta: Any, masses: Any, *, beta: float) -> float:
    r""":math:`\frac{1}{n^2}\sum_{k,l} m_k m_l e^{\beta(\cos(\theta_k-\theta_l)-1)}`,
    :math:`n = \sum_k m_k`.

    Examples
    --------
    >>> import numpy as np
    >>> round(cluster_energy(np.array([0.0, 3.0]), np.array([3, 2]), beta=200.0), 6)
    0.52
    """
    th, m = _angles_and_masses(theta, masses, "theta")
    beta = check_real(beta, "beta", low=0.0)
    K = np.exp(beta * (np.cos(th[:, None] - th[None, :]) - 1.0))
    m = m / m.max()  # the energy is homogeneous of degree 0 in the masses
    return float(m @ K @ m / m.sum() ** 2)


#: The result of :func:`merge_flow` is an :class:`attnlib.Trajectory` (the name of
#: earlier releases is kept).
MergeFlow = Trajectory


def _closest_pair(theta):
    D = np.abs(np.angle(np.exp(1j * (theta[:, None] - theta[None, :]))))
    np.fill_diagonal(D, np.inf)
    i, j = np.unravel_index(np.argmin(D), D.shape)
    return int(i), int(j), float(D[i, j])


def _scaled_velocity(theta, masses, beta, n):
    r"""The velocity of :func:`_velocity` divided by its largest pair weight, and the
    logarithm of that weight: ``(w, A)`` with :math:`\dot\theta = e^{A} w`,
    :math:`A = \max_{k \ne l} \beta(\cos(\theta_k - \theta_l) - 1) \le 0`.

    Every weight of ``w`` is :math:`e^{a_{kl} - A} \in [0, 1]`, so ``w`` is of order
    one whatever :math:`\beta` and the gaps, and the sums are plain sums (no matrix
    product): nothing here comes near the bottom of the float range, where the
    forces themselves (:math:`e^{-700}` and below) would depend on the last bits of
    how a product is summed.
    """
    D = theta[:, None] - theta[None, :]
    a = beta * (np.cos(D) - 1.0)
    np.fill_diagonal(a, -np.inf)  # a cluster does not pull itself
    A = float(a.max())
    w = -(np.sin(D) * np.exp(a - A) * masses[None, :]).sum(axis=1) / n
    return w, A


#: Largest exponent of a rescaled time rate: a trial point of a rejected step may
#: put the clusters anywhere, and its rate, capped here, only has to stay finite.
_RATE_CAP = 600.0


@moved_arguments("theta0 beta")
def merge_flow(
    theta0: Any,
    *,
    beta: float,
    masses: Any = None,
    t_max: float = np.inf,
    merge_tol: float = 1e-7,
    rtol: float = 1e-10,
) -> Trajectory:
    r"""Integrate the cluster dynamics, merging clusters that meet.

    The path is integrated in its arc length :math:`\sigma`
    (:math:`d\theta/d\sigma = \dot\theta/|\dot\theta|`) with the time as one more
    unknown: a slow approach then takes as many steps as a fast one, and times like
    :math:`e^{700}` cost nothing special. The forces are of order
    :math:`e^{A}`, :math:`A = \max_{k\ne l}\beta(\cos(\theta_k-\theta_l)-1)`, which
    at large :math:`\beta` is far below the smallest float (:math:`e^{-745}`): the
    field is written as :math:`\dot\theta = e^{A} w` with :math:`w` of order one,
    the direction of the path is :math:`w/|w|`, and the time of each segment between
    two merges is :math:`t = t_0 + e^{-A_0}\tau` with
    :math:`d\tau/d\sigma = e^{A_0 - A}/|w|` (:math:`A_0` the value of :math:`A` at
    the start of the segment, so that :math:`\tau` is of order one too). No quantity
    of the integration leaves the float range, and the result does not depend on
    how the machine sums a product. The result is sampled at the integrator's steps.

    Parameters
    ----------
    theta0 : array_like, shape (k,)
        Initial angles.
    beta : float
        Inverse temperature ``> 0``.
    masses : array_like, shape (k,), optional
        Initial masses (default one each).
    t_max : float
        Stop at this time (default: when one cluster is left).
    merge_tol : float
        Two clusters closer than this (radians) become one.
    rtol : float
        Relative tolerance of the DOP853 integration.

    Returns
    -------
    Trajectory
        ``times``: the sampled times (non-decreasing), ``method="DOP853"``, and, in
        ``info`` (read as attributes):

        * ``energy`` (ndarray, shape (T,)): :func:`cluster_energy` at ``times``.
        * ``clusters`` (ndarray of int, shape (T,)): Number of clusters at ``times``.
        * ``merge_times`` (ndarray, shape (M,)): Times of the merges, in order.
        * ``merged_masses`` (list of tuple): The masses of the two clusters of each
          merge.
        * ``final_angles``, ``final_masses`` (ndarray): The clusters at the last time
          (``final`` is ``final_angles``).

    Raises
    ------
    ValueError
        When ``t_max`` is infinite and the next merge comes after the largest float
        (about :math:`e^{709.8}`): the message gives the logarithm of its time; pass
        a finite ``t_max`` to stop before it.

    Examples
    --------
    >>> import numpy as np
    >>> res = merge_flow(np.array([0.0, 0.05, 2.0]), beta=100.0, t_max=1e3)
    >>> int(res.info["clusters"][-1]), res.info["merge_times"].size
    (2, 1)
    """
    th, m = _angles_and_masses(theta0, masses, "theta0")
    th = th.copy()
    beta = check_real(beta, "beta", low=0.0, strict_low=True)
    t_max = np.inf if t_max == np.inf else check_real(t_max, "t_max", low=0.0)
    if not t_max > 0:
        raise ValueError(f"t_max must be > 0, got {t_max}")
    merge_tol = check_real(merge_tol, "merge_tol", low=0.0, strict_low=True)
    rtol = check_real(rtol, "rtol", low=0.0, strict_low=True)
    n = float(m.sum())
    T_all: list[np.ndarray] = []
    E_all: list[np.ndarray] = []
    C_all: list[np.ndarray] = []
    merges: list[float] = []
    pairs: list[tuple] = []
    t = 0.0

    def merge_if_close(force=False):
        nonlocal th, m
        while th.size > 1:
            i, j, dist = _closest_pair(th)
            if dist > merge_tol and not force:
                return
            force = False  # the pair found by the event, at distance merge_tol
            w = m[i] + m[j]
            step = np.angle(np.exp(1j * (th[j] - th[i])))  # along the short arc
            new = th[i] + step * m[j] / w
            pairs.append((m[i], m[j]))
            merges.append(t)
            keep = np.ones(th.size, dtype=bool)
            keep[[i, j]] = False
            th = np.concatenate([th[keep], [new]])
            m = np.concatenate([m[keep], [w]])

    def record(thetas, times):
        T_all.append(np.asarray(times))
        E_all.append(np.array([cluster_energy(x, m, beta=beta) for x in thetas]))
        C_all.append(np.full(len(times), th.size))

    merge_if_close()
    record([th], [t])
    log_float_max = float(np.log(np.finfo(float).max))

    def advance(_state, step):
        """One segment of the path from ``step.t``: to the next merge (merged, then
        go on), or to ``t_max`` or the end of the longest path (stop)."""
        nonlocal th, t
        t_now = step.t
        k = th.size
        if k == 1:  # one cluster left: nothing moves
            return None, t_now, True
        A0 = _scaled_velocity(th, m, beta, n)[1]

        def rhs(_s, y):
            w, A = _scaled_velocity(y[:k], m, beta, n)
            speed = float(np.sqrt(w @ w))
            if speed == 0.0:  # exactly stationary
                return np.zeros(k + 1)
            # dtau/dsigma = e^{A0 - A}/|w|: of order one along the path; capped
            # only at trial points far from it (and where |w| nearly vanishes)
            rate = np.exp(min(A0 - A - np.log(speed), _RATE_CAP))
            return np.concatenate([w / speed, [rate]])

        def close(_s, y):
            return _closest_pair(y[:k])[2] - merge_tol

        # t = t + e^{-A0} tau reaches t_max at tau = (t_max - t) e^{A0}
        tau_max = np.inf if t_max == np.inf else np.exp(np.log(t_max - t) + A0)

        def late(_s, y):
            return y[k] - tau_max if tau_max < np.inf else -1.0

        close.terminal = late.terminal = True
        close.direction = -1
        late.direction = 1
        # the longest path: every cluster crossing half the circle
        span = float(np.pi * np.sqrt(k))
        sol = integrate.solve_ivp(
            rhs,
            (0.0, span),
            np.concatenate([th, [0.0]]),
            method="DOP853",
            events=(close, late),
            rtol=rtol,
            atol=1e-13,
        )
        if sol.status == -1 or not np.all(np.isfinite(sol.y)):
            why = sol.message if sol.status == -1 else "a step left the float range"
            raise ValueError(
                f"the cluster dynamics could not be integrated: {why}; use a smaller "
                "beta or clusters closer together"
            )
        Y = sol.y  # the solver's own steps (an interpolant of tau overshoots)
        tau = np.maximum.accumulate(np.maximum(Y[k], 0.0))
        # log(t + e^{-A0} tau), without forming e^{-A0} (beyond the float range
        # from A0 < -709.8)
        with np.errstate(divide="ignore"):
            log_times = np.logaddexp(np.log(t) if t > 0 else -np.inf, np.log(tau) - A0)
        if t_max == np.inf and log_times[-1] > log_float_max:
            raise ValueError(
                f"the next merge comes at t = e^{log_times[-1]:.1f}, after the largest "
                f"float (e^{log_float_max:.1f}); pass a finite t_max to stop before it"
            )
        times = np.minimum(np.exp(np.minimum(log_times, log_float_max)), t_max)
        if sol.status == 1 and sol.t_events[1].size:
            times[-1] = t_max  # the event landed on t_max, up to rounding
        record(Y[:k].T, times)
        th = np.mod(Y[:k, -1], TWO_PI)
        t = float(times[-1])
        if sol.status == 1 and sol.t_events[0].size:
            merge_if_close(force=True)
            record([th], [t])
            return None, t, False
        # t_max reached, or no merge along the longest path (stationary)
        return None, t, True

    # the driver's adaptive loop, one segment per step, up to t_max (or inf)
    n_segments = drive(
        advance,
        None,
        np.array([t_max]),
        control=Adaptive(np.inf),  # a segment ends at an event, not at a step size
        max_steps=None,  # each segment but the last merges two clusters
        name="merge_flow",
    ).n_steps
    final = np.mod(th, TWO_PI)
    return trajectory(
        series=("energy", "clusters"),
        times=np.concatenate(T_all),
        final=final,
        method="DOP853",
        n_steps=n_segments,
        energy=np.concatenate(E_all),
        clusters=np.concatenate(C_all),
        merge_times=np.asarray(merges),
        merged_masses=pairs,
        final_angles=final,
        final_masses=m,
    )
