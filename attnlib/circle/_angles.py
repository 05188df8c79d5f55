r"""Self-attention on the circle :math:`S^1` (d = 2) in angles: the Fourier form.

The dynamics in the angles :math:`x_i = (\cos\theta_i, \sin\theta_i)` and its
Fourier (Jacobi–Anger) form, which makes a velocity cost :math:`O(nK)` for ``K``
modes, are written out in :mod:`attnlib.circle`. This module holds the particle model
in angles (its field, its energy, its integration); :mod:`attnlib.circle` gathers it
with the Kuramoto model, the mean field and the cluster rule on the circle.

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
[GLPR] §7, and the Kuramoto literature: listed in :mod:`attnlib.circle`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from .._deprecation import moved_arguments
from .._special import ive

from .._stepping import (
    MAX_STEPS,
    METHODS,
    check_observables,
    output_times,
    run_explicit,
)
from .._validation import (
    NORMALIZATIONS,
    USA_HINT,
    as_angles,
    as_circle_beta,
    as_states,
    check_bool,
    check_choice,
    check_int,
    check_real,
    exp_scale,
)
from ..integrate import Trajectory

__all__ = [
    "to_angles",
    "from_angles",
    "bessel_modes",
    "kernel_coefficients",
    "angle_velocity",
    "CircleModel",
    "torus_energy",
    "simulate_angles",
]

TWO_PI = 2.0 * np.pi
_METHODS = ("auto", "fourier", "direct")
_CHUNK = 4096  # particles per chunk in the Fourier evaluation (cache sized)
_DIRECT_ENTRIES = 1 << 21  # largest (rows x n) tile of the direct evaluation (16 MB)


# --------------------------------------------------------------------- validation
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
    theta = as_angles(theta)
    return np.stack([np.cos(theta), np.sin(theta)], axis=-1)


# ------------------------------------------------------------- Bessel expansion
@moved_arguments("beta")
def bessel_modes(*, beta: float, tol: float = 1e-16, max_modes: int = 1_000_000) -> int:
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
    >>> bessel_modes(beta=1.0), bessel_modes(beta=64.0) > 60
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


@moved_arguments("beta K")
def kernel_coefficients(*, beta: float, K: int) -> tuple[np.ndarray, np.ndarray]:
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
    >>> a, b = kernel_coefficients(beta=0.0, K=3)
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
        hint=USA_HINT,
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
    a, b = kernel_coefficients(beta=beta, K=K)
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


@moved_arguments("theta beta")
def angle_velocity(
    theta: Any,
    *,
    beta: float,
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
    >>> v1 = angle_velocity(th, beta=3.0, method="fourier")
    >>> v2 = angle_velocity(th, beta=3.0, method="direct")
    >>> bool(np.max(np.abs(v1 - v2)) < 1e-12 * np.max(np.abs(v2)))
    True
    """
    check_choice(normalization, "normalization", NORMALIZATIONS)
    check_choice(method, "method", _METHODS)
    theta = as_angles(theta).astype(np.float64, copy=False)
    beta = as_circle_beta(beta, normalization)
    block = check_int(block, "block", low=1)
    rtol = _rtol(rtol)
    if method == "direct":
        return _velocity_direct(theta, beta, normalization, block)
    K = (
        bessel_modes(beta=beta, tol=tol)
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
        check_choice(self.normalization, "normalization", NORMALIZATIONS)
        check_choice(self.method, "method", _METHODS)
        object.__setattr__(self, "beta", as_circle_beta(self.beta, self.normalization))
        check_real(self.tol, "tol", low=0.0, strict_low=True)
        object.__setattr__(self, "rtol", _rtol(self.rtol))
        # the direct method needs no modes (and works for any beta)
        K = (
            None
            if self.method == "direct"
            else bessel_modes(beta=self.beta, tol=self.tol)
        )
        object.__setattr__(self, "_K", K)

    @property
    def modes(self) -> int:
        """Number of Fourier modes used by the Fourier method."""
        if self._K is None:
            object.__setattr__(self, "_K", bessel_modes(beta=self.beta, tol=self.tol))
        return self._K

    def velocity(self, theta: Any) -> np.ndarray:
        """Validated velocity, see :func:`angle_velocity`."""
        return angle_velocity(
            theta,
            beta=self.beta,
            normalization=self.normalization,
            method=self.method,
            modes=self._K,
            rtol=self.rtol,
        )

    def __call__(self, theta: np.ndarray) -> np.ndarray:
        """The velocity for integrators: a float array is trusted, anything else
        goes through :meth:`velocity`'s validation."""
        if not (isinstance(theta, np.ndarray) and theta.dtype.kind == "f"):
            return self.velocity(theta)
        n = theta.shape[-1]
        if self.method == "direct" or (self.method == "auto" and n <= 2 * self._K):
            return _velocity_direct(theta, self.beta, self.normalization, 512)
        return _velocity_fourier(
            theta, self.beta, self.normalization, self._K, self.rtol
        )


# --------------------------------------------------------------------- energy
@moved_arguments("theta beta")
def torus_energy(theta: Any, *, beta: float, log: bool = False) -> np.ndarray:
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
    >>> bool(np.isclose(torus_energy(np.zeros(3), beta=1.0), np.e / 2))
    True
    >>> round(float(torus_energy(np.zeros(3), beta=1000.0, log=True)), 6)  # e^1000/2000
    992.399098
    """
    theta = as_angles(theta)
    beta = check_real(beta, "beta", low=0.0, strict_low=True)
    log = check_bool(log, "log")
    K = bessel_modes(beta=beta)
    a, _ = kernel_coefficients(beta=beta, K=K)
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
) -> Trajectory:
    r"""Integrate :math:`\dot\theta = v(\theta)` on the torus (explicit RK scheme).

    Parameters
    ----------
    model : callable
        ``v(theta) -> array`` of the shape of ``theta`` (a :class:`CircleModel`, a
        :class:`Kuramoto` or any function).
    theta0 : ndarray, shape (n,) or (B, n)
    times : array_like, shape (T,), optional
        Non-decreasing output times ``>= 0``, as in :func:`attnlib.simulate`; give
        ``times`` or ``t_final``, not both.
    t_final : float, optional
        Shorthand for ``times=[0, t_final]``.
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
    Trajectory
        The result of :func:`attnlib.simulate` (states are the angles wrapped to
        :math:`[0, 2\pi)`).

    Examples
    --------
    >>> import numpy as np
    >>> tr = simulate_angles(CircleModel(beta=1.0), np.array([0.0, 1.0]), t_final=20.0)
    >>> bool(abs(np.cos(tr.final[0] - tr.final[1]) - 1) < 1e-10)
    True
    """
    if not callable(model):
        raise TypeError(f"model must be callable v(theta), got {type(model).__name__}")
    th = as_angles(theta0, "theta0").astype(np.float64, copy=True)
    times = output_times(times, t_final)
    dt = check_real(dt, "dt", low=0.0, strict_low=True)
    check_choice(method, "method", METHODS)
    max_steps = check_int(max_steps, "max_steps", low=1)
    save_states = check_bool(save_states, "save_states")
    progress = check_bool(progress, "progress")
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
    return Trajectory(times, states, out_obs, th, method, n_steps, dt)
