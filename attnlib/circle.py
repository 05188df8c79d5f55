r"""Self-attention on the circle :math:`S^1` (d = 2) and Kuramoto oscillators.

With :math:`x_i = (\cos\theta_i, \sin\theta_i)` the USA dynamics of [GLPR] §7 reads

.. math::

    \dot\theta_i = -\frac1n \sum_{j=1}^n e^{\beta\cos(\theta_i-\theta_j)}
        \sin(\theta_i-\theta_j),

and SA divides by :math:`\sum_k e^{\beta\cos(\theta_i-\theta_k)}` instead of
:math:`n`. At :math:`\beta = 0` this is the Kuramoto model with coupling one and no
natural frequencies. The Jacobi–Anger expansion

.. math::

    e^{\beta\cos\varphi} = I_0(\beta) + 2\sum_{k\ge1} I_k(\beta)\cos k\varphi,
    \qquad
    e^{\beta\cos\varphi}\sin\varphi = \sum_{k\ge1} \frac{2k I_k(\beta)}{\beta}
        \sin k\varphi,

turns both sums into ``K`` Fourier modes of the empirical measure, so a velocity
evaluation costs :math:`O(nK)` instead of :math:`O(n^2)`, and the mean-field
(continuity) equation for a density on the circle can be solved spectrally.

Conventions
-----------
* Angles are arrays of shape ``(n,)`` (or ``(B, n)`` for an ensemble), any real value.
* Bessel functions are used exponentially scaled (:func:`scipy.special.ive`,
  :math:`I_k(\beta)e^{-\beta}`), so nothing overflows; the USA field carries the
  factor :math:`e^\beta` (finite in float64 for
  :math:`\beta \le \log(\text{float64 max}) \approx 709.78`).
* Densities are with respect to :math:`d\theta` on :math:`[0, 2\pi)` and have mass one.

References
----------
[GLPR] Geshkovski, Letrouit, Polyanskiy, Rigollet, *A mathematical perspective on
Transformers*, §7. Kuramoto (1984); Strogatz, *From Kuramoto to Crawford* (2000).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.special import ive

from ._validation import (
    as_numeric,
    check_choice,
    check_int,
    check_real,
    check_rng,
    check_steps,
    exp_scale,
    log_max,
)
from .integrate import (
    MAX_STEPS,
    METHODS,
    check_observables,
    output_times,
    planned_steps,
    run_explicit,
)

__all__ = [
    "to_angles",
    "from_angles",
    "bessel_modes",
    "kernel_coefficients",
    "angle_velocity",
    "CircleModel",
    "Kuramoto",
    "order_parameter",
    "torus_energy",
    "lorentzian_frequencies",
    "kuramoto_r",
    "simulate_angles",
    "AngleTrajectory",
    "growth_rates",
    "dominant_mode",
    "spaced_state_eigenvalues",
    "angle_clusters",
    "Clusters",
    "mean_field",
    "DensityTrajectory",
    "sample_density",
    "circle_wasserstein",
]

TWO_PI = 2.0 * np.pi
_METHODS = ("auto", "fourier", "direct")
_USA_HINT = "use normalization='sa' or a smaller beta"
_CHUNK = 4096  # particles per chunk in the Fourier evaluation (cache sized)
_DIRECT_ENTRIES = 1 << 21  # largest (rows x n) tile of the direct evaluation (16 MB)


# --------------------------------------------------------------------- validation
def _as_angles(
    theta: Any, name: str = "theta", ndims: tuple[int, ...] = (1, 2)
) -> np.ndarray:
    arr = as_numeric(theta, name, "array of angles")
    if not np.issubdtype(arr.dtype, np.floating) or arr.dtype == np.float16:
        arr = arr.astype(np.float64)
    if arr.ndim not in ndims:
        want = " or ".join({1: "(n,)", 2: "(B, n)"}[k] for k in ndims)
        raise ValueError(f"{name} must have shape {want}, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} must be non-empty, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite values (found NaN or inf)")
    return arr


def _beta(beta: Any, normalization: str) -> float:
    beta = check_real(beta, "beta", low=0.0)
    if normalization == "usa" and beta > log_max(np.float64):
        raise ValueError(
            f"beta must be <= {log_max(np.float64):.2f} for USA (the field carries "
            f"e^beta, beyond the float64 range), got {beta}; use normalization='sa'"
        )
    return beta


# ----------------------------------------------------------------- coordinates
def to_angles(X: Any) -> np.ndarray:
    r"""Angles :math:`\theta_i = \operatorname{atan2}(x_{i,2}, x_{i,1})` of points.

    Parameters
    ----------
    X : ndarray, shape (n, 2) or (B, n, 2)

    Returns
    -------
    ndarray, shape (n,) or (B, n), values in :math:`(-\pi, \pi]`.

    Examples
    --------
    >>> import numpy as np
    >>> float(to_angles(np.array([[0.0, 1.0]]))[0]) == np.pi / 2
    True
    """
    from ._validation import as_states

    X = as_states(X, "X")
    if X.shape[-1] != 2:
        raise ValueError(
            f"X must have d = 2 (points of the circle), got shape {X.shape}"
        )
    return np.arctan2(X[..., 1], X[..., 0])


def from_angles(theta: Any) -> np.ndarray:
    r"""Points :math:`(\cos\theta_i, \sin\theta_i)`, of shape ``theta.shape + (2,)``.

    Examples
    --------
    >>> from_angles([0.0]).tolist()
    [[1.0, 0.0]]
    """
    theta = _as_angles(theta)
    return np.stack([np.cos(theta), np.sin(theta)], axis=-1)


# ------------------------------------------------------------- Bessel expansion
def bessel_modes(beta: float, *, tol: float = 1e-16, max_modes: int = 1_000_000) -> int:
    r"""Number of Fourier modes ``K`` that resolve the kernels to ``tol``.

    ``K`` is the smallest integer such that both tails, relative to the kernel's
    maximum :math:`e^\beta`, are below ``tol``:

    .. math::

        \sum_{k>K}\frac{2kI_k(\beta)}{\beta} = I_K(\beta) + I_{K+1}(\beta)
        \le \mathrm{tol}\,e^{\beta},
        \qquad 2\sum_{k>K} I_k(\beta) \le \mathrm{tol}\,e^{\beta}.

    The first sum telescopes since :math:`2kI_k/\beta = I_{k-1} - I_{k+1}`; it bounds
    the truncation error of :math:`e^{\beta\cos\varphi}\sin\varphi` uniformly in
    :math:`\varphi`.

    Parameters
    ----------
    beta : float
        Inverse temperature ``>= 0``.
    tol : float
        Relative tolerance, ``> 0``.
    max_modes : int
        Largest number of modes searched. ``K`` grows like
        :math:`\sqrt{2\beta\log(1/\mathrm{tol})}`; beyond ``max_modes`` (``beta``
        above about :math:`10^{10}` at the defaults) a ``ValueError`` is raised:
        the direct double sum is then the better method anyway.

    Returns
    -------
    int
        ``K >= 1`` (about 15, 22, 38, 69 for beta = 1, 4, 16, 64 at ``tol=1e-16``).

    Examples
    --------
    >>> bessel_modes(1.0), bessel_modes(64.0) > 60
    (15, True)
    """
    beta = check_real(beta, "beta", low=0.0)
    tol = check_real(tol, "tol", low=0.0, strict_low=True)
    max_modes = check_int(max_modes, "max_modes", low=1)
    # e^{-beta} I_k(beta) <= e^{-k^2 / (2 (beta + k))} (checked numerically over
    # 1e-3 <= beta <= 1e9): beyond this kmax the terms
    # are below tol * 1e-17, far under the rounding of the tails
    kmax = int(
        min(
            beta + 40.0 * np.sqrt(beta + 1.0) + 60.0,
            60.0 + np.sqrt(2.0 * (beta + 1.0) * (np.log(1.0 / tol) + 40.0)),
        )
    )
    if kmax > max_modes:
        raise ValueError(
            f"beta={beta:g} needs up to {kmax} Fourier modes at tol={tol:g}, more "
            f"than max_modes={max_modes}; use the direct method (method='direct')"
        )
    k = np.arange(kmax + 2)
    scaled = ive(k, beta)
    if not np.all(np.isfinite(scaled)):
        raise ValueError(
            f"the Bessel coefficients of beta={beta:g} are not finite in float64; "
            "use method='direct'"
        )
    sin_tail = scaled[:-1] + scaled[1:]  # index K -> I_K + I_{K+1}
    upper = np.cumsum(scaled[::-1])[::-1]  # sum_{k>=K}, summed from the small end
    cos_tail = 2.0 * upper[1:]  # index K -> 2 sum_{k>K} I_k
    ok = np.nonzero((sin_tail <= tol) & (cos_tail <= tol))[0]
    return max(1, int(ok[0]) if ok.size else kmax)


def kernel_coefficients(beta: float, K: int) -> tuple[np.ndarray, np.ndarray]:
    r"""Scaled Fourier coefficients of the two kernels of the circle model.

    .. math::

        e^{\beta(\cos\varphi - 1)} = \sum_{k=0}^{\infty} a_k \cos k\varphi,
        \qquad
        e^{\beta(\cos\varphi - 1)}\sin\varphi = \sum_{k=1}^{\infty} b_k \sin k\varphi,

    with :math:`a_0 = e^{-\beta}I_0`, :math:`a_k = 2e^{-\beta}I_k` and
    :math:`b_k = e^{-\beta}(I_{k-1} - I_{k+1}) = 2ke^{-\beta}I_k/\beta`.

    Returns
    -------
    a, b : ndarray, shape (K + 1,)
        ``a[k]`` and ``b[k]`` for ``k = 0..K`` (``b[0] = 0``).

    Examples
    --------
    >>> a, b = kernel_coefficients(0.0, 3)
    >>> a.tolist(), b.tolist()
    ([1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0])
    """
    beta = check_real(beta, "beta", low=0.0)
    K = check_int(K, "K", low=1)
    k = np.arange(K + 2)
    s = ive(k, beta)
    a = 2.0 * s[: K + 1]
    a[0] = s[0]
    b = np.zeros(K + 1)
    if beta > 0.0:
        b[1:] = 2.0 * k[1 : K + 1] * s[1 : K + 1] / beta  # no cancellation
    else:
        b[1] = 1.0
    return a, b


def _fourier_sums(theta: np.ndarray, K: int) -> np.ndarray:
    """Empirical Fourier sums ``S_k = sum_j e^{i k theta_j}``, k = 0..K, (..., K+1).

    The powers ``e^{ik theta_j}`` are built by repeated multiplication on cache-sized
    chunks of particles and never stored: memory O(chunk), time O(nK).
    """
    S = np.zeros(theta.shape[:-1] + (K + 1,), dtype=np.complex128)
    S[..., 0] = theta.shape[-1]
    for s in range(0, theta.shape[-1], _CHUNK):
        z = np.exp(1j * theta[..., s : s + _CHUNK])
        zk = z.copy()
        S[..., 1] += zk.sum(axis=-1)
        for k in range(2, K + 1):
            zk *= z
            S[..., k] += zk.sum(axis=-1)
    return S


def _mode_sums(theta: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``sum_k w_k e^{ik theta_i}`` for k = 0..K, with w of shape (..., K+1)."""
    out = np.empty(theta.shape, dtype=np.complex128)
    K = w.shape[-1] - 1
    for s in range(0, theta.shape[-1], _CHUNK):
        z = np.exp(1j * theta[..., s : s + _CHUNK])
        zk = z.copy()
        acc = np.multiply(zk, w[..., 1:2])
        acc += w[..., 0:1]
        tmp = np.empty_like(zk)
        for k in range(2, K + 1):
            zk *= z
            np.multiply(zk, w[..., k : k + 1], out=tmp)
            acc += tmp
        out[..., s : s + _CHUNK] = acc
    return out


def _rounding_bound(w: np.ndarray, n: int) -> float:
    r"""Bound on the rounding error of ``sum_k w_k Re/Im(z_i^k conj S_k)``, any ``i``.

    In units of the scaled kernel. The errors of the powers :math:`z^k`, of the
    sums :math:`S_k` (over chunks of particles) and of the sum over the modes behave
    like random walks: measured against extended-precision sums they stay below
    1/20 of this bound for :math:`1 \le \beta \le 200`, ``n`` up to 20 000 and
    uniform, clustered and near-uniform angles (``tests/test_robustness.py``).
    """
    K = w.size - 1
    walk = np.sqrt((K + 1.0) * (1.0 + n / _CHUNK))
    return 10.0 * float(np.finfo(np.float64).eps) * n * float(np.sum(np.abs(w))) * walk


def _usa_scale(num: np.ndarray, beta: float, n: int) -> np.ndarray:
    """The USA velocity ``-num e^beta / n`` from the scaled sum (overflow checked)."""
    return -exp_scale(
        num,
        beta - np.log(n),
        what="the USA velocity on the circle",
        hint=_USA_HINT,
    )


def _velocity_fourier(theta, beta, normalization, K, rtol=None):
    r"""Fourier velocity; with ``rtol``, poorly resolved particles are summed directly.

    The Fourier sums have an error of order :math:`\varepsilon n` in units of the
    largest kernel value, whatever the particle; a particle whose own sum is much
    smaller (an isolated particle at large ``beta``) gets it as a large relative
    error. The error bound (truncation tail plus :func:`_rounding_bound`) marks the
    particles whose numerator (or SA denominator) it cannot certify to ``rtol / 4``;
    of those, the ones for which the direct sum is more accurate by a factor above
    1000 (of the two estimates; about 50 in fact, the bound being pessimistic)
    are recomputed by it, in ``O(n)`` each. The direct sum has an error of about
    :math:`\varepsilon(2+\beta)A_i` with :math:`A_i = \sum_{j\ne i}
    e^{\beta(\cos(\theta_i-\theta_j)-1)}` the weight of the other particles
    (measured below :math:`0.8\,\varepsilon(2+\beta)A_i`): small for an isolated
    particle, and of the order of the Fourier error where the terms cancel
    (near-uniform data), where the Fourier value is kept.
    """
    a, b = kernel_coefficients(beta, K)
    S = _fourier_sums(theta, K)
    n = theta.shape[-1]
    # sum_j e^{b cos} sin(th_i - th_j) = sum_k b_k Im(z_i^k conj S_k); cos part: Re
    num = _mode_sums(theta, b * np.conj(S)).imag
    den = _mode_sums(theta, a * np.conj(S)).real if normalization == "sa" else None
    if rtol is None:
        return -num / den if den is not None else _usa_scale(num, beta, n)
    eps = float(np.finfo(np.float64).eps)
    sin_tail = float(np.sum(ive([K, K + 1], beta)))  # sum_{k>K} b_k (telescoped)
    err_num = n * sin_tail + _rounding_bound(b, n)
    kk = np.arange(K + 1, K + 2 + int(40.0 * np.sqrt(beta + 1.0)) + 60)
    err_den = n * 2.0 * float(np.sum(ive(kk, beta))) + _rounding_bound(a, n)
    fix = err_num > 0.25 * rtol * np.abs(num)
    if den is not None:
        fix |= err_den > 0.25 * rtol * den
    if np.any(fix):
        # the weight A_i of the other particles (an upper bound) from the cosine sums:
        # for the candidates only when they are few (USA has no denominator yet)
        if den is not None:
            den_c = den[fix]
        elif np.count_nonzero(fix) > fix.size // 8:
            den_c = _mode_sums(theta, a * np.conj(S)).real[fix]
        else:
            Sm, fm = S.reshape(-1, K + 1), fix.reshape(-1, n)
            th = theta.reshape(-1, n)
            den_c = np.concatenate(
                [
                    _mode_sums(th[m, fm[m]], a * np.conj(Sm[m])).real
                    for m in range(fm.shape[0])
                ]
            )
        err_direct = eps * (2.0 + beta) * (np.maximum(den_c - 1.0, 0.0) + err_den)
        fix[fix] = max(err_num, err_den) > 1000.0 * err_direct
    if np.any(fix):
        th = theta.reshape(-1, n)
        num = num.reshape(-1, n).copy()
        den = None if den is None else den.reshape(-1, n).copy()
        fix = fix.reshape(-1, n)
        for m in np.nonzero(fix.any(axis=1))[0]:
            rows = np.nonzero(fix[m])[0]
            nm, dm = _direct_sums(th[m], beta, rows, 512)
            num[m, rows] = nm
            if den is not None:
                den[m, rows] = dm
        num = num.reshape(theta.shape)
        den = None if den is None else den.reshape(theta.shape)
    if normalization == "sa":
        return -num / den
    return _usa_scale(num, beta, n)


def _direct_sums(theta, beta, rows, block):
    r"""Scaled direct sums of the particles ``rows`` of one configuration ``(n,)``.

    Returns ``num_i = sum_{j != i} e^{beta (cos(th_i - th_j) - 1)} sin(th_i - th_j)``
    and ``den_i = 1 + sum_{j != i} e^{beta (cos(th_i - th_j) - 1)}``. The self term
    (weight one, sine zero) is left out of the sums and added exactly, so an isolated
    particle keeps its relative accuracy: its tiny sum is not the rounding residue of
    :math:`s_i c_i - c_i s_i` at the scale of its own weight.
    """
    n = theta.shape[0]
    block = max(1, min(block, _DIRECT_ENTRIES // n))  # a tile holds <= 2^21 entries
    c, s = np.cos(theta), np.sin(theta)
    cs = np.stack([c, s, np.ones_like(c)], axis=1)  # (n, 3)
    num = np.empty(rows.size, dtype=np.float64)
    den = np.empty(rows.size, dtype=np.float64)
    for st in range(0, rows.size, block):
        sel = slice(st, min(rows.size, st + block))
        r = rows[sel]
        W = np.multiply.outer(c[r], c)
        W += np.multiply.outer(s[r], s)
        W -= 1.0
        W *= beta
        np.exp(W, out=W)  # e^{beta (cos(th_i - th_j) - 1)}, (block, n)
        W[np.arange(r.size), r] = 0.0  # the self term, added exactly below
        M = W @ cs
        # sum_j W_ij sin(th_i - th_j) = s_i (W c)_i - c_i (W s)_i
        num[sel] = s[r] * M[:, 0] - c[r] * M[:, 1]
        den[sel] = M[:, 2] + 1.0
    return num, den


def _velocity_direct(theta, beta, normalization, block):
    if theta.ndim == 2:
        return np.stack(
            [_velocity_direct(t, beta, normalization, block) for t in theta]
        )
    n = theta.shape[0]
    num, den = _direct_sums(theta, beta, np.arange(n), block)
    if normalization == "sa":
        return -num / den
    return _usa_scale(num, beta, n)


def angle_velocity(
    theta: Any,
    beta: float,
    *,
    normalization: str = "usa",
    method: str = "auto",
    tol: float = 1e-16,
    modes: int | None = None,
    block: int = 512,
    rtol: float | None = 1e-8,
) -> np.ndarray:
    r"""Velocity :math:`\dot\theta` of self-attention on the circle.

    .. math::

        \dot\theta_i = -\frac{1}{N_i}\sum_{j=1}^n e^{\beta\cos(\theta_i-\theta_j)}
            \sin(\theta_i-\theta_j),
        \qquad N_i = n \ (\text{USA}),\quad
        N_i = \sum_k e^{\beta\cos(\theta_i-\theta_k)} \ (\text{SA}).

    This is the tangential component of ``attnlib.Model(beta,
    normalization=...).velocity`` at :math:`x_i = (\cos\theta_i, \sin\theta_i)`.

    Parameters
    ----------
    theta : ndarray, shape (n,) or (B, n)
        Angles.
    beta : float
        Inverse temperature ``>= 0`` (for USA at most
        :math:`\log(\text{float64 max}) \approx 709.78`, the field carries
        :math:`e^\beta`).
    normalization : {"usa", "sa"}
    method : {"auto", "fourier", "direct"}
        ``"fourier"``: :math:`O(nK)` through the Jacobi–Anger expansion with
        ``K = bessel_modes(beta, tol=tol)`` (or ``modes``); ``"direct"``: the
        :math:`O(n^2)` double sum in row blocks of at most ``block`` rows and
        :math:`2^{21}` entries (never an ``n x n`` array); ``"auto"``: direct for
        ``n <= 2K``.
    tol : float
        Truncation tolerance of the Fourier series, relative to the kernel's
        maximum :math:`e^\beta` (it chooses ``K``).
    modes : int, optional
        Number of Fourier modes (overrides ``tol``).
    block : int
        Row-block size of the direct method.
    rtol : float or None
        Relative accuracy per particle of the Fourier method (see Accuracy);
        ``None`` keeps the plain Fourier sums.

    Returns
    -------
    ndarray, same shape as ``theta`` (float64).

    Notes
    -----
    Accuracy. The direct sum leaves out the self term (its sine is zero) and is
    accurate to about :math:`\varepsilon(2+\beta)A_i/N_i` for particle ``i``, with
    :math:`A_i = \sum_{j\ne i} e^{\beta\cos(\theta_i-\theta_j)}` the weight of the
    other particles (the rounding of the cosines and sines of the angles). The
    Fourier sums are accurate to about :math:`\varepsilon n e^\beta/N_i` for
    every particle, a large relative error for a particle whose own sum is small:
    two particles at distance :math:`\varphi` move at speed
    :math:`\propto e^{\beta\cos\varphi}`, about :math:`e^{-2\beta}` times that
    error at :math:`\varphi = \pi`. So with ``rtol`` the Fourier method bounds the
    error of every particle (truncation tail plus rounding of the mode sums) and
    recomputes by the direct sum, in :math:`O(n)` each, the particles that the
    bound does not certify to ``rtol`` and for which the direct sum is much more
    accurate. Every returned velocity then satisfies

    .. math::

        |v_i - v_i^{\rm exact}| \le \mathrm{rtol}\,|v_i^{\rm exact}|
            + 10^3\,\varepsilon(2+\beta)\,A_i/N_i,

    that is, a relative error of at most about ``rtol`` for every particle whose
    terms do not cancel (an isolated particle however slow, two far-apart
    particles), and otherwise an error within a modest factor of the direct sum's
    (``tests/test_robustness.py`` checks both against extended-precision sums).
    Where the terms cancel (near-uniform angles) the Fourier value is kept, and
    the cost stays :math:`O(nK)` plus :math:`O(n)` per recomputed particle.

    References
    ----------
    [GLPR] §7, equation of :math:`\dot\theta_i`; Jacobi–Anger expansion.

    Examples
    --------
    >>> import numpy as np
    >>> th = np.random.default_rng(0).uniform(0, 2 * np.pi, 50)
    >>> v1 = angle_velocity(th, 3.0, method="fourier")
    >>> v2 = angle_velocity(th, 3.0, method="direct")
    >>> bool(np.max(np.abs(v1 - v2)) < 1e-12 * np.max(np.abs(v2)))
    True
    """
    check_choice(normalization, "normalization", ("usa", "sa"))
    check_choice(method, "method", _METHODS)
    theta = _as_angles(theta).astype(np.float64, copy=False)
    beta = _beta(beta, normalization)
    block = check_int(block, "block", low=1)
    rtol = _rtol(rtol)
    if method == "direct":
        return _velocity_direct(theta, beta, normalization, block)
    K = (
        bessel_modes(beta, tol=tol)
        if modes is None
        else check_int(modes, "modes", low=1)
    )
    if method == "auto" and theta.shape[-1] <= 2 * K:
        return _velocity_direct(theta, beta, normalization, block)
    return _velocity_fourier(theta, beta, normalization, K, rtol)


def _rtol(rtol: Any) -> float | None:
    if rtol is None:
        return None
    return check_real(rtol, "rtol", low=0.0, high=1.0, strict_low=True)


@dataclass(frozen=True)
class CircleModel:
    r"""Self-attention on the circle as a vector field on angles (callable).

    Parameters
    ----------
    beta : float
        Inverse temperature.
    normalization : {"usa", "sa"}
    method : {"auto", "fourier", "direct"}
        See :func:`angle_velocity`.
    tol : float
        Truncation tolerance of the Fourier method.
    rtol : float or None
        Relative accuracy per particle of the Fourier method, see
        :func:`angle_velocity`.

    Examples
    --------
    >>> import numpy as np
    >>> m = CircleModel(beta=2.0, normalization="sa")
    >>> m(np.array([0.0, 0.0])).tolist()
    [-0.0, -0.0]
    """

    beta: float = 1.0
    normalization: str = "usa"
    method: str = "auto"
    tol: float = 1e-16
    rtol: float | None = 1e-8

    def __post_init__(self) -> None:
        check_choice(self.normalization, "normalization", ("usa", "sa"))
        check_choice(self.method, "method", _METHODS)
        object.__setattr__(self, "beta", _beta(self.beta, self.normalization))
        check_real(self.tol, "tol", low=0.0, strict_low=True)
        object.__setattr__(self, "rtol", _rtol(self.rtol))
        # the direct method needs no modes (and works for any beta)
        K = None if self.method == "direct" else bessel_modes(self.beta, tol=self.tol)
        object.__setattr__(self, "_K", K)

    @property
    def modes(self) -> int:
        """Number of Fourier modes used by the Fourier method."""
        if self._K is None:
            object.__setattr__(self, "_K", bessel_modes(self.beta, tol=self.tol))
        return self._K

    def velocity(self, theta: Any) -> np.ndarray:
        """Validated velocity, see :func:`angle_velocity`."""
        return angle_velocity(
            theta,
            self.beta,
            normalization=self.normalization,
            method=self.method,
            modes=self._K,
            rtol=self.rtol,
        )

    def __call__(self, theta: np.ndarray) -> np.ndarray:
        n = theta.shape[-1]
        if self.method == "direct" or (self.method == "auto" and n <= 2 * self._K):
            return _velocity_direct(theta, self.beta, self.normalization, 512)
        return _velocity_fourier(
            theta, self.beta, self.normalization, self._K, self.rtol
        )


# ------------------------------------------------------------------- Kuramoto
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
    theta = _as_angles(theta)
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
        object.__setattr__(self, "omega", _as_angles(self.omega, "omega", (1,)))
        if np.ndim(self.coupling) == 0:
            c = check_real(self.coupling, "coupling", low=0.0)
        else:
            c = np.asarray(self.coupling, dtype=np.float64)
            if c.ndim != 1 or not np.all(np.isfinite(c)) or np.any(c < 0):
                raise ValueError(
                    f"coupling must be a number >= 0 or a 1-D array of them, got {c!r}"
                )
            c = c[:, None]
        object.__setattr__(self, "_c", c)

    def __call__(self, theta: np.ndarray) -> np.ndarray:
        z = np.mean(np.exp(1j * theta), axis=-1, keepdims=True)
        return self.omega + self._c * np.imag(z * np.exp(-1j * theta))

    def velocity(self, theta: Any) -> np.ndarray:
        """Validated velocity at ``theta`` of shape (n,) or (B, n)."""
        theta = _as_angles(theta)
        if theta.shape[-1] != self.omega.shape[0]:
            raise ValueError(
                f"theta must have n = {self.omega.shape[0]} angles (as omega), got "
                f"shape {theta.shape}"
            )
        if np.ndim(self._c) and (theta.ndim != 2 or theta.shape[0] != self._c.shape[0]):
            raise ValueError(
                f"theta must have shape ({self._c.shape[0]}, n) for {self._c.shape[0]} "
                f"couplings, got shape {theta.shape}"
            )
        return self(theta)


def lorentzian_frequencies(
    n: int, gamma: float, *, rng: np.random.Generator | int | None = None
) -> np.ndarray:
    r"""Natural frequencies with the Lorentzian (Cauchy) density of width ``gamma``.

    The density is :math:`g(\omega) = \gamma / (\pi(\omega^2+\gamma^2))`.

    Without ``rng`` the deterministic quantiles
    :math:`\omega_i = \gamma\tan(\pi(i - 1/2)/n - \pi/2)` are returned (a standard
    way to remove sampling noise); with ``rng`` an i.i.d. sample.

    Examples
    --------
    >>> w = lorentzian_frequencies(4, 1.0)
    >>> bool(abs(w.sum()) < 1e-12)
    True
    """
    n = check_int(n, "n", low=1)
    gamma = check_real(gamma, "gamma", low=0.0)
    if rng is None:
        u = (np.arange(1, n + 1) - 0.5) / n
    else:
        u = check_rng(rng).uniform(size=n)
    return gamma * np.tan(np.pi * (u - 0.5))


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
    K = np.asarray(coupling, dtype=np.float64)
    if not np.all(np.isfinite(K)) or np.any(K < 0):
        raise ValueError("coupling must be finite and >= 0")
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.sqrt(np.clip(1.0 - 2.0 * gamma / K, 0.0, None))
    return np.where(K > 2.0 * gamma, r, 0.0)


# --------------------------------------------------------------------- energy
def torus_energy(theta: Any, beta: float, *, log: bool = False) -> np.ndarray:
    r"""Interaction energy on the torus, in :math:`O(nK)`.

    .. math::

        E_\beta(\theta)
        = \frac{1}{2\beta n^2}\sum_{i,j=1}^n e^{\beta\cos(\theta_i-\theta_j)}
        = \frac{1}{2\beta n^2}\sum_{k\in\mathbb Z} I_{|k|}(\beta)\,|S_k|^2,
        \quad S_k = \sum_j e^{ik\theta_j},

    equal to ``attnlib.energy(from_angles(theta), beta)``; USA is
    :math:`\dot\theta = n\nabla E_\beta` ([GLPR] §7).

    Parameters
    ----------
    theta : ndarray, shape (n,) or (B,n)
    beta : float > 0
    log : bool
        Return :math:`\log E_\beta`, finite for every ``beta`` (all terms of the
        Bessel sum are non-negative, so it has no cancellation). The energy itself
        carries :math:`e^\beta` and raises ``ValueError`` beyond the float64 range.

    Returns
    -------
    float array of shape () or (B,)

    Examples
    --------
    >>> import numpy as np
    >>> bool(np.isclose(torus_energy(np.zeros(3), 1.0), np.e / 2))
    True
    >>> round(float(torus_energy(np.zeros(3), 1000.0, log=True)), 6)  # e^1000/2000
    992.399098
    """
    theta = _as_angles(theta)
    beta = check_real(beta, "beta", low=0.0, strict_low=True)
    if not isinstance(log, (bool, np.bool_)):
        raise TypeError(f"log must be a bool, got {log!r}")
    K = bessel_modes(beta)
    a, _ = kernel_coefficients(beta, K)
    S = _fourier_sums(theta.astype(np.float64), K)
    n = theta.shape[-1]
    tot = np.sum(a * np.abs(S) ** 2, axis=-1)
    log_scale = beta - np.log(2.0 * beta * n * n)
    if log:
        return np.log(tot) + log_scale
    return exp_scale(
        tot,
        log_scale,
        what="the energy E_beta on the torus",
        hint="use torus_energy(..., log=True), which is finite",
    )


# ----------------------------------------------------------------- simulation
@dataclass(frozen=True)
class AngleTrajectory:
    """Result of :func:`simulate_angles`.

    Attributes
    ----------
    times : ndarray, shape (T,)
    states : ndarray, shape (T, *theta0.shape), or None
        Angles at ``times`` wrapped to :math:`[0, 2\\pi)`.
    observables : mapping str -> ndarray of shape (T, ...)
    final : ndarray, shape theta0.shape
    n_steps : int
    dt : float
    """

    times: np.ndarray
    states: np.ndarray | None = field(repr=False)
    observables: Mapping[str, np.ndarray] = field(repr=False)
    final: np.ndarray = field(repr=False)
    n_steps: int = 0
    dt: float = 0.0


def simulate_angles(
    model: Callable[[np.ndarray], np.ndarray],
    theta0: Any,
    *,
    times: Any = None,
    t_final: float | None = None,
    dt: float = 0.05,
    method: str = "rk4",
    observables: Mapping[str, Callable[[np.ndarray], Any]] | None = None,
    save_states: bool = True,
    progress: bool = False,
    max_steps: int = MAX_STEPS,
) -> AngleTrajectory:
    r"""Integrate :math:`\dot\theta = v(\theta)` on the torus (explicit RK scheme).

    Parameters
    ----------
    model : callable
        ``v(theta) -> array`` of the shape of ``theta`` (a :class:`CircleModel`, a
        :class:`Kuramoto` or any function).
    theta0 : ndarray, shape (n,) or (B, n)
    times, t_final
        Output times (exactly one of them), as in :func:`attnlib.simulate`.
    dt : float
        Largest step (steps are shortened to hit every output time).
    method : {"euler", "heun", "rk4"}
    observables : mapping name -> callable(theta), optional
    save_states : bool
    progress : bool
        ``tqdm.auto`` progress bar over the output times.
    max_steps : int
        Cap on the number of steps, checked before the first one (``ValueError``).

    Returns
    -------
    AngleTrajectory

    Examples
    --------
    >>> import numpy as np
    >>> tr = simulate_angles(CircleModel(beta=1.0), np.array([0.0, 1.0]), t_final=20.0)
    >>> bool(abs(np.cos(tr.final[0] - tr.final[1]) - 1) < 1e-10)
    True
    """
    if not callable(model):
        raise TypeError(f"model must be callable v(theta), got {type(model).__name__}")
    th = _as_angles(theta0, "theta0").astype(np.float64, copy=True)
    times = output_times(times, t_final)
    dt = check_real(dt, "dt", low=0.0, strict_low=True)
    check_choice(method, "method", METHODS)
    max_steps = check_int(max_steps, "max_steps", low=1)
    obs = check_observables(observables)
    out = model(th)
    if np.shape(out) != th.shape:
        raise ValueError(
            f"model(theta0) must have shape {th.shape}, got {np.shape(out)}"
        )
    states, out_obs, th, n_steps = run_explicit(
        model,
        th,
        times,
        dt=dt,
        method=method,
        observables=obs,
        save_states=save_states,
        after_step=lambda th: np.mod(th, TWO_PI, out=th),
        progress=progress,
        max_steps=max_steps,
        what="simulate_angles",
    )
    return AngleTrajectory(times, states, out_obs, th, n_steps, dt)


# ------------------------------------------------------------- linear theory
def growth_rates(k: Any, beta: float, *, normalization: str = "usa") -> np.ndarray:
    r"""Growth rate of the Fourier mode ``k`` of the mean field at the uniform density.

    .. math::

        \lambda_k^{\mathrm{USA}} = \frac{k^2 I_k(\beta)}{\beta},
        \qquad
        \lambda_k^{\mathrm{SA}} = \frac{k^2 I_k(\beta)}{\beta I_0(\beta)},

    (with the limit :math:`\lambda_1 = 1/2`, :math:`\lambda_{k\ge2} = 0` at
    :math:`\beta = 0`): a perturbation :math:`\varepsilon e^{ik\theta}` of
    :math:`\rho = 1/(2\pi)` grows like :math:`e^{\lambda_k t}`.

    Examples
    --------
    >>> growth_rates([1, 2], 0.0).tolist()
    [0.5, 0.0]
    """
    check_choice(normalization, "normalization", ("usa", "sa"))
    beta = _beta(beta, normalization)
    k = np.asarray(k)
    if not np.issubdtype(k.dtype, np.integer) or np.any(k < 0):
        raise ValueError(f"k must be non-negative integers, got {k!r}")
    kf = k.astype(np.float64)
    if beta == 0.0:
        lam = np.where(k == 1, 0.5, 0.0)
    else:
        lam = kf * kf * ive(kf, beta) / beta  # scaled by e^{-beta}
        if normalization == "usa":
            lam = exp_scale(lam, beta, what="a USA growth rate", hint=_USA_HINT)
        else:
            lam = lam / ive(0, beta)
    return lam


def dominant_mode(beta: float, *, kmax: int | None = None) -> int:
    r"""The fastest-growing mode :math:`\arg\max_{k\ge1} k^2 I_k(\beta)`.

    This is the number of clusters that emerge from near-uniform data ([GLPR] §7):
    3, 4, 6 for :math:`\beta` = 4, 9, 16.

    Examples
    --------
    >>> [dominant_mode(b) for b in (4.0, 9.0, 16.0)]
    [3, 4, 6]
    """
    beta = check_real(beta, "beta", low=0.0)
    if kmax is None:
        kmax = int(2 * np.sqrt(2 * beta) + 10)
    k = np.arange(1, check_int(kmax, "kmax", low=1) + 1, dtype=np.float64)
    return int(k[np.argmax(k * k * ive(k, beta))])


def spaced_state_eigenvalues(
    n: int, beta: float, *, normalization: str = "usa"
) -> np.ndarray:
    r"""Eigenvalues of the Jacobian at the equally spaced state.

    At :math:`\theta_j = 2\pi j/n` the Jacobian is circulant; with
    :math:`f(\varphi) = e^{\beta\cos\varphi}\sin\varphi`,

    .. math::

        \mu_m = \frac{1}{N}\sum_{j=1}^{n-1} f'(2\pi j/n)
            \,\bigl(\cos(2\pi jm/n) - 1\bigr),
        \qquad m = 0, \dots, n-1,

    with :math:`N = n` (USA) or :math:`N = \sum_j e^{\beta\cos(2\pi j/n)}` (SA).
    :math:`\mu_0 = 0` is the rotation; for large ``n``,
    :math:`\mu_m \to \lambda_m` of :func:`growth_rates`.

    Returns
    -------
    ndarray, shape (n,)

    Examples
    --------
    >>> import numpy as np
    >>> mu = spaced_state_eigenvalues(2, 1.0)
    >>> bool(np.isclose(mu[1], np.exp(-1.0)))
    True
    """
    n = check_int(n, "n", low=1)
    check_choice(normalization, "normalization", ("usa", "sa"))
    beta = _beta(beta, normalization)
    phi = TWO_PI * np.arange(n) / n
    # f'(phi) e^{-beta} = e^{beta (cos - 1)} (cos - beta sin^2)
    fp = np.exp(beta * (np.cos(phi) - 1.0)) * (np.cos(phi) - beta * np.sin(phi) ** 2)
    m = np.arange(n)
    C = np.cos(np.outer(m, phi)) - 1.0
    mu = C @ fp
    if normalization == "usa":
        return exp_scale(mu, beta - np.log(n), what="a USA eigenvalue", hint=_USA_HINT)
    return mu / np.sum(np.exp(beta * (np.cos(phi) - 1.0)))


@dataclass(frozen=True)
class Clusters:
    """Clusters of angles found by :func:`angle_clusters`.

    Attributes
    ----------
    centers : ndarray, shape (k,)
        Circular mean of each cluster, in :math:`[0, 2\\pi)`, sorted.
    masses : ndarray of int, shape (k,)
        Number of particles in each cluster.
    labels : ndarray of int, shape (n,)
        Cluster index of each particle (``-1`` for particles in groups below
        ``min_fraction``).
    """

    centers: np.ndarray
    masses: np.ndarray
    labels: np.ndarray = field(repr=False)

    @property
    def count(self) -> int:
        return int(self.centers.size)


def angle_clusters(
    theta: Any, *, gap: float = 0.1, min_fraction: float = 0.0
) -> Clusters:
    r"""Clusters of points on the circle: maximal arcs without a gap wider than ``gap``.

    Sorting the angles, consecutive particles (cyclically) closer than ``gap``
    radians are in the same cluster; groups holding fewer than
    ``min_fraction * n`` particles (stragglers between clusters) are not counted.

    Parameters
    ----------
    theta : ndarray, shape (n,)
    gap : float
        Gap in radians, in ``(0, pi]``.
    min_fraction : float
        Minimal mass fraction of a counted cluster, in ``[0, 1)``.

    Returns
    -------
    Clusters

    Examples
    --------
    >>> angle_clusters([0.0, 0.01, 3.0, 3.02, 3.01]).masses.tolist()
    [2, 3]
    """
    theta = _as_angles(theta, ndims=(1,))
    gap = check_real(gap, "gap", low=0.0, high=np.pi, strict_low=True)
    min_fraction = check_real(min_fraction, "min_fraction", low=0.0, high=1.0)
    n = theta.size
    th = np.mod(theta, TWO_PI)
    order = np.argsort(th)
    s = th[order]
    gaps = np.diff(np.concatenate([s, [s[0] + TWO_PI]]))  # gap after s[i]
    cuts = np.nonzero(gaps > gap)[0]
    lab_sorted = np.empty(n, dtype=int)
    if cuts.size == 0:
        lab_sorted[:] = 0
    else:
        # start a new group after each cut; the group crossing 2 pi wraps around
        start = (cuts[-1] + 1) % n
        idx = (np.arange(n) - start) % n  # position in the rotated order
        rolled_cuts = np.zeros(n, dtype=int)
        rolled_cuts[(cuts - start + 1) % n] = 1
        rolled_cuts[0] = 0
        group = np.cumsum(rolled_cuts)
        lab_sorted = group[idx]
    labels = np.empty(n, dtype=int)
    labels[order] = lab_sorted
    k = int(labels.max()) + 1
    masses = np.bincount(labels, minlength=k)
    z = np.bincount(labels, weights=np.cos(th), minlength=k) + 1j * np.bincount(
        labels, weights=np.sin(th), minlength=k
    )
    centers = np.mod(np.angle(z), TWO_PI)
    keep = masses >= max(1, min_fraction * n)
    remap = -np.ones(k, dtype=int)
    kept = np.nonzero(keep)[0]
    kept = kept[np.argsort(centers[kept])]
    remap[kept] = np.arange(kept.size)
    return Clusters(centers[kept], masses[kept], remap[labels])


# ----------------------------------------------------------------- mean field
@dataclass(frozen=True)
class DensityTrajectory:
    r"""Result of :func:`mean_field`.

    Attributes
    ----------
    times : ndarray, shape (T,)
    grid : ndarray, shape (M,)
        Grid :math:`\theta_m = 2\pi m/M`.
    densities : ndarray, shape (T, M)
        Density at the grid points (w.r.t. :math:`d\theta`).
    mass : ndarray, shape (T,)
        :math:`\int\rho\,d\theta` (spectrally exact: the mean of the grid values times
        :math:`2\pi`).
    resolution : ndarray, shape (T,)
        Largest Fourier coefficient beyond :math:`|k| > M/3`, relative to the mean:
        once it exceeds about ``1e-6`` the grid no longer resolves the peaks.
    n_steps : int
    """

    times: np.ndarray
    grid: np.ndarray
    densities: np.ndarray = field(repr=False)
    mass: np.ndarray = field(repr=False)
    resolution: np.ndarray = field(repr=False)
    n_steps: int = 0


def mean_field(
    rho0: Any,
    beta: float,
    *,
    times: Any,
    normalization: str = "usa",
    grid_size: int = 256,
    dt: float = 0.05,
    cfl: float = 0.5,
    progress: bool = False,
    max_steps: int = MAX_STEPS,
) -> DensityTrajectory:
    r"""Pseudo-spectral solver of the mean-field equation on the circle.

    .. math::

        \partial_t\rho + \partial_\theta(\rho\, v[\rho]) = 0,
        \qquad
        v[\rho](\theta) = -\frac{\int e^{\beta\cos(\theta-\varphi)}\sin(\theta-\varphi)
            \rho(\varphi)\,d\varphi}{N[\rho](\theta)},

    with :math:`N = 1` (USA) or
    :math:`N[\rho](\theta) = \int e^{\beta\cos(\theta-\varphi)}
    \rho(\varphi)\,d\varphi` (SA). Convolutions are products of Fourier coefficients
    (the kernels' coefficients are Bessel functions), :math:`\partial_\theta` is
    spectral, the flux :math:`\rho v` is formed on the grid and the time stepping is
    RK4 with steps bounded by ``dt``, by ``cfl * (2pi/M) / max|v|`` and by
    :math:`0.1/\max_k\lambda_k` (the fastest linear rate, :func:`growth_rates`).
    The mass (the zero mode) is conserved to rounding. For empirical measures
    :math:`\rho = \frac1n\sum\delta_{\theta_i}` the same equation is the particle
    system.

    Parameters
    ----------
    rho0 : callable or ndarray of shape (M,)
        Initial density (mass one), a function of the angle or its grid values.
    beta : float
    times : array_like, shape (T,)
        Output times.
    normalization : {"usa", "sa"}
    grid_size : int
        Number ``M`` of grid points (even, ``>= 16``).
    dt : float
        Largest time step.
    cfl : float
        CFL number.
    progress : bool
    max_steps : int
        Cap on the number of RK4 steps (the CFL condition shrinks the step where
        the velocity is large); a ``ValueError`` is raised when it is reached or
        when a step no longer advances the float64 time.

    Returns
    -------
    DensityTrajectory

    References
    ----------
    [GLPR] §2 (mean field) and §7 (the circle).

    Examples
    --------
    >>> import numpy as np
    >>> sol = mean_field(lambda t: (1 + 0.1 * np.cos(2 * t)) / (2 * np.pi), 1.0,
    ...                  times=[0.0, 1.0], grid_size=64)
    >>> bool(abs(sol.mass[-1] - 1.0) < 1e-12)
    True
    """
    check_choice(normalization, "normalization", ("usa", "sa"))
    beta = _beta(beta, normalization)
    M = check_int(grid_size, "grid_size", low=16)
    if M % 2:
        raise ValueError(f"grid_size must be even, got {M}")
    dt = check_real(dt, "dt", low=0.0, strict_low=True)
    cfl = check_real(cfl, "cfl", low=0.0, high=2.0, strict_low=True)
    max_steps = check_int(max_steps, "max_steps", low=1)
    grid = TWO_PI * np.arange(M) / M
    if callable(rho0):
        rho = np.asarray(rho0(grid), dtype=np.float64)
    else:
        rho = np.asarray(rho0, dtype=np.float64)
    if rho.shape != (M,):
        raise ValueError(
            f"rho0 must have shape ({M},) (grid_size values), got {rho.shape}"
        )
    if not np.all(np.isfinite(rho)):
        raise ValueError("rho0 must contain only finite values")
    mass0 = float(np.mean(rho) * TWO_PI)
    if abs(mass0 - 1.0) > 1e-6:
        raise ValueError(
            f"rho0 must have mass one (integral over [0, 2pi)), got {mass0:.6g}"
        )
    times = np.asarray(times, dtype=np.float64)
    if times.ndim != 1 or times.size == 0 or not np.all(np.isfinite(times)):
        raise ValueError(f"times must be a non-empty finite 1-D array, got {times!r}")
    if times[0] < 0 or np.any(np.diff(times) < 0):
        raise ValueError("times must be >= 0 and non-decreasing")

    kk = np.fft.fftfreq(M, 1.0 / M)  # integer wavenumbers
    ak = np.abs(kk).astype(int)
    Kc = min(M // 2, bessel_modes(beta))
    a, b = kernel_coefficients(beta, max(Kc, 1))
    ia = np.where(ak <= Kc, ak, 0)
    ghat = np.where(ak <= Kc, 0.5 * a[ia] * np.where(ak == 0, 2.0, 1.0), 0.0)
    fhat = np.where(ak <= Kc, b[ia] * np.sign(kk) / 2j, 0.0)
    # conv(theta) = int f(theta - phi) rho(phi) dphi = ifft(2 pi fhat_k rho_hat_k M)
    scale = np.exp(beta) if normalization == "usa" else 1.0  # finite: see _beta
    # fastest linear rate at the uniform density: resolve it (h * rate <= 0.1)
    kb = np.arange(b.size) * b / 2.0
    lam_max = float(np.max(kb)) * (scale if normalization == "usa" else 1.0 / a[0])
    dt = min(dt, 0.1 / max(lam_max, 1e-300))
    # steps are at most dt (the CFL bound can only shorten them): at least this many
    check_steps(
        planned_steps(times, dt),
        max_steps,
        what=f"mean_field (steps of at most dt = {dt:.3g} up to t = {times[-1]:g})",
        hint="increase max_steps or dt, or use a smaller beta",
    )
    ik = 1j * kk
    ik[M // 2] = 0.0  # Nyquist mode of a real derivative

    def velocity(rhat):
        num = np.fft.ifft(TWO_PI * fhat * rhat).real
        if normalization == "sa":
            return -num / np.fft.ifft(TWO_PI * ghat * rhat).real
        v = -scale * num
        if not np.all(np.isfinite(v)):  # raise the overflow error with its message
            exp_scale(num, beta, what="the USA mean-field velocity", hint=_USA_HINT)
        return v

    def rhs(rhat):
        v = velocity(rhat)
        rho_x = np.fft.ifft(rhat).real
        return -ik * np.fft.fft(rho_x * v), v

    rhat = np.fft.fft(rho)
    dx = TWO_PI / M
    dens = np.empty((times.size, M))
    res = np.empty(times.size)
    high = ak > M // 3
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=times.size, desc="mean field", leave=False)
    t, n_steps = 0.0, 0
    for i, tk in enumerate(times):
        while tk - t > 1e-14 * max(1.0, tk):
            k1, v = rhs(rhat)
            h = min(dt, tk - t, cfl * dx / max(float(np.max(np.abs(v))), 1e-300))
            stuck = t + h == t  # the step no longer advances the float64 time
            check_steps(
                np.inf if stuck else n_steps + 1,
                max_steps,
                what=f"mean_field (the CFL step is {h:.3g} at t = {t:g}"
                + (", too small to advance t" if stuck else "")
                + f"; output time {tk:g})",
                hint="increase max_steps or dt, or use a smaller beta",
            )
            k2, _ = rhs(rhat + 0.5 * h * k1)
            k3, _ = rhs(rhat + 0.5 * h * k2)
            k4, _ = rhs(rhat + h * k3)
            rhat = rhat + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
            t += h
            n_steps += 1
            if not np.all(np.isfinite(rhat)):
                raise FloatingPointError(
                    f"the density became non-finite before t={tk:g}"
                )
        t = max(t, tk)
        dens[i] = np.fft.ifft(rhat).real
        res[i] = float(np.max(np.abs(rhat[high])) / abs(rhat[0]))
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    mass = dens.mean(axis=1) * TWO_PI
    return DensityTrajectory(times, grid, dens, mass, res, n_steps)


def _fine_cdf(rho: np.ndarray, L: int) -> tuple[np.ndarray, np.ndarray]:
    """Spectral interpolation of grid values on L points and their cumulative mass."""
    M = rho.size
    rhat = np.fft.rfft(rho)
    fine = np.fft.irfft(rhat, n=L) * (L / M)
    fine = np.clip(fine, 0.0, None)
    x = TWO_PI * np.arange(L + 1) / L
    cdf = np.concatenate([[0.0], np.cumsum(0.5 * (fine + np.roll(fine, -1)))]) * (
        TWO_PI / L
    )
    return x, cdf / cdf[-1]


def sample_density(
    rho: Any, n: int, *, rng: np.random.Generator | int | None = None
) -> np.ndarray:
    r"""``n`` angles distributed as a density given on the grid :math:`2\pi m/M`.

    The density is interpolated spectrally on a grid 16 times finer, clipped at zero
    and inverted through its piecewise-linear cumulative distribution function
    :math:`F`. With ``rng``: i.i.d. samples :math:`F^{-1}(U_i)`; without: the
    deterministic quantiles :math:`F^{-1}((i - 1/2)/n)` (an empirical measure within
    :math:`W_1 = O(1/n)` of the density).

    Examples
    --------
    >>> import numpy as np
    >>> th = sample_density(np.full(32, 1 / (2 * np.pi)), 1000, rng=0)
    >>> th.shape, bool(np.all((th >= 0) & (th < 2 * np.pi)))
    ((1000,), True)
    """
    rho = _as_angles(rho, "rho", (1,))
    if np.any(rho < -1e-12 * np.max(np.abs(rho))) or np.max(rho) <= 0:
        raise ValueError("rho must be a non-negative density with positive mass")
    n = check_int(n, "n", low=1)
    if rng is None:
        u = (np.arange(n) + 0.5) / n
    else:
        u = check_rng(rng).uniform(size=n)
    x, cdf = _fine_cdf(rho, 16 * rho.size)
    return np.mod(np.interp(u, cdf, x), TWO_PI)


def circle_wasserstein(theta: Any, rho: Any) -> float:
    r"""Wasserstein-1 distance on the circle between particles and a grid density.

    .. math::

        W_1(\mu, \nu) = \min_{c\in\mathbb R}\int_0^{2\pi}
            |F_\mu(\theta) - F_\nu(\theta) - c|
        \,d\theta,

    (arc-length cost), evaluated on a grid 16 times finer than the density's; the
    minimising ``c`` is a median of :math:`F_\mu - F_\nu`.

    Parameters
    ----------
    theta : ndarray, shape (n,)
        Particle angles (the empirical measure :math:`\mu`).
    rho : ndarray, shape (M,)
        Density values on :math:`2\pi m/M` (the measure :math:`\nu`).

    Examples
    --------
    >>> import numpy as np
    >>> th = np.linspace(0, 2 * np.pi, 4000, endpoint=False)
    >>> bool(circle_wasserstein(th, np.full(64, 1 / (2 * np.pi))) < 1e-3)
    True
    """
    theta = _as_angles(theta, ndims=(1,))
    rho = _as_angles(rho, "rho", (1,))
    x, cdf = _fine_cdf(rho, 16 * rho.size)
    mid = 0.5 * (x[:-1] + x[1:])
    G = np.interp(mid, x, cdf)
    F = np.searchsorted(np.sort(np.mod(theta, TWO_PI)), mid, side="right") / theta.size
    D = F - G
    c = np.median(D)
    return float(np.mean(np.abs(D - c)) * TWO_PI)
