r"""The mean-field equation of self-attention on the sphere :math:`S^2`, spectrally.

For a density :math:`\rho(t, x)` on :math:`S^2` (with respect to the surface area
:math:`dA`, total area :math:`4\pi`, mass one) the USA mean-field (continuity)
equation with optional Brownian noise is

.. math::

    \partial_t\rho + \operatorname{div}_S(\rho\,X[\rho])
        = \sigma\Delta_S\rho,
    \qquad
    X[\rho](x) = \int e^{\beta\langle x, y\rangle} P_x^\perp y\,\rho(y)\,dA(y)
        = \nabla_S\Phi,\quad \Phi = \frac1\beta K\ast\rho,

with :math:`K(x, y) = e^{\beta\langle x, y\rangle}` and
:math:`P_x^\perp y = y - \langle x, y\rangle x`. For the empirical measure
:math:`\frac1n\sum\delta_{x_i}` it is the particle system of
``attnlib.Model(beta=beta, normalization="usa")`` (velocity
:math:`\frac1n\sum_j e^{\beta\langle x_i, x_j\rangle}P_{x_i}x_j`), in the same time.

**Funk–Hecke.** :math:`K` acts on a spherical harmonic :math:`Y_{\ell m}` of degree
:math:`\ell` by a scalar,

.. math::

    \int e^{\beta\langle x, y\rangle} Y_{\ell m}(y)\,dA(y) = \lambda_\ell(\beta)
    Y_{\ell m}(x),
    \qquad \lambda_\ell(\beta) = 4\pi\, i_\ell(\beta)
        = 4\pi\sqrt{\frac{\pi}{2\beta}}\, I_{\ell+1/2}(\beta),

with :math:`i_\ell` the modified spherical Bessel function of the first kind;
:math:`i_\ell = c_\ell` is ``attnlib.frontiers.funk_hecke(ell, beta=beta, d=3)`` (the
same coefficient for the uniform *probability* measure, hence the :math:`4\pi`). It is
evaluated from the exponentially scaled Bessel function and the factor
:math:`e^\beta` is applied by the library's overflow guard
(:func:`attnlib._validation.exp_scale`), so that an overflow is a clear error.

**Linear growth rates.** At the uniform density :math:`\rho_0 = 1/(4\pi)`,
:math:`X[\rho_0] = 0`; for :math:`\rho = \rho_0 + \varepsilon Y_{\ell m}`,
:math:`\Phi = \Phi_0 + \varepsilon\frac{\lambda_\ell}{\beta} Y_{\ell m}` and to first
order :math:`\partial_t\rho = -\rho_0\Delta_S\Phi + \sigma\Delta_S\rho`,
so (using :math:`\Delta_S Y_{\ell m} = -\ell(\ell+1)Y_{\ell m}`) the mode grows like
:math:`e^{r_\ell t}`,

.. math::

    r_\ell = \frac{\lambda_\ell(\beta)\,\ell(\ell+1)}{4\pi\beta}
        - \sigma\ell(\ell+1)
        = \ell(\ell+1)\Big(\frac{i_\ell(\beta)}{\beta} - \sigma\Big).

This is ``attnlib.frontiers._noise.noisy_rates(ell, beta=beta, d=3, sigma=sigma,
normalization="usa")``: the noise has the library's convention, intensity
:math:`\sigma` (generator :math:`\sigma\Delta_S`, the particles of
``simulate_noisy`` driven by :math:`\sqrt{2\sigma}\,dB_t`). At :math:`\beta = 0` the
limit is :math:`r_1 = 2/3 - 2\sigma`, :math:`r_{\ell\ge2} = -\sigma\ell(\ell+1)`.

**The method.** The density is a sum of orthonormal spherical harmonics
:math:`Y_{\ell m}(\theta,\varphi) = \bar P_{\ell m}(\cos\theta)e^{im\varphi}`
(:math:`\int|Y_{\ell m}|^2 dA = 1`, Condon–Shortley phase) up to degree
:math:`L` = ``lmax``; the coefficients :math:`a_{\ell m} = \int\rho\,\bar Y_{\ell m}
\,dA` are stored for :math:`0\le m\le\ell` (the real density fixes
:math:`a_{\ell,-m} = (-1)^m\bar a_{\ell m}`). The grid is the Gauss–Legendre nodes in
:math:`\cos\theta` (``nlat = floor(3L/2) + 1``) times ``nlon >= 3L + 1`` equispaced
:math:`\varphi`: an FFT in :math:`\varphi` and the normalised associated Legendre
functions (computed by the stable three-term recurrence in :math:`\ell` from
:math:`\bar P_{mm}`) take coefficients to grid values and back, exactly for every
product of two functions of degree :math:`\le L` (the 3/2 rule: the quadrature is
exact to degree :math:`3L`). The flux is never formed: by
:math:`\Delta(fg) = f\Delta g + g\Delta f + 2\nabla f\cdot\nabla g`,

.. math::

    \operatorname{div}_S(\rho\nabla_S\Phi)
    = \tfrac12\big(\Delta_S(\rho\Phi) + \rho\Delta_S\Phi - \Phi\Delta_S\rho\big),

whose three terms are products of two band-limited functions, each dealiased by the
3/2 rule; the right-hand side is exact (to rounding) for the truncated system. The
degree-0 coefficient of :math:`\rho\Delta\Phi - \Phi\Delta\rho` vanishes by Green's
identity (to rounding, since the quadrature is exact) and is set to zero, so the mass
:math:`\sqrt{4\pi}\,a_{00}` is conserved exactly.

Time stepping is classical RK4, with an integrating factor
:math:`e^{-\sigma\ell(\ell+1)h}` for the noise (exact diffusion, no step limit
from it), on the library's driver :func:`attnlib._stepping.drive`: fixed steps of
``dt``, or (``dt=None``) adaptive steps bounded by a CFL condition
:math:`h\le \mathrm{cfl}/(L\sup|\nabla\Phi| + \sup|\Delta\Phi|)` (both suprema
bounded from the coefficients by the addition theorem) and by :math:`0.1/\max_\ell
r_\ell`.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from ._control import Adaptive, Fixed
from ._lazy import special
from ._results import Trajectory, trajectory
from ._special import ive
from ._stepping import MAX_STEPS, Outcome, drive, output_times
from ._validation import (
    as_finite,
    as_numeric,
    check_bool,
    check_int,
    check_real,
    exp_scale,
)

__all__ = ["sphere_mean_field", "sphere_growth_rates", "sphere_density"]

FOUR_PI = 4.0 * np.pi

#: A degree beyond ``lmax`` whose noise-free linear rate exceeds this fraction of the
#: fastest rate makes ``lmax`` too small for ``beta`` (an unstable mode left out).
_RATE_CUTOFF = 1e-2


# --------------------------------------------------------------- Funk-Hecke
def _kernel_over_beta(ell: np.ndarray, beta: float) -> np.ndarray:
    r""":math:`i_\ell(\beta)/\beta` for :math:`\ell \ge 1` (at :math:`\beta = 0`
    its limit: 1/3 for :math:`\ell = 1`, 0 above), and 0 for :math:`\ell = 0`: the
    constant part of the potential moves nothing, and leaving it out spares the
    solver a cancellation of two terms of size :math:`e^\beta/\beta`."""
    ell = np.asarray(ell, dtype=np.float64)
    if beta == 0.0:
        return np.where(ell == 1, 1.0 / 3.0, 0.0)
    if beta < 1e-6:
        # the Bessel function underflows: i_l(b)/b = b^(l-1) / (2l+1)!!
        # (1 + b^2 / (2 (2l + 3)) + ...), the correction below 1e-13 here;
        # (2l+1)!! = 2^(l+1) Gamma(l+3/2) / sqrt(pi)
        log_df = (
            (ell + 1) * np.log(2.0) + special.gammaln(ell + 1.5) - 0.5 * np.log(np.pi)
        )
        series = np.exp((ell - 1) * np.log(beta) - log_df)
        return np.where(ell == 0, 0.0, series)
    # i_l(b)/b = sqrt(pi/2) b^{-3/2} e^b ive(l + 1/2, b)
    scaled = np.where(ell == 0, 0.0, ive(ell + 0.5, beta))
    log_pref = 0.5 * np.log(np.pi / 2.0) - 1.5 * np.log(beta) + beta
    return exp_scale(
        scaled,
        log_pref,
        what=f"the Funk-Hecke coefficient of e^(beta <x, y>) at beta={beta:g}",
        hint="use a smaller beta",
    )


#: The largest degree whose growth rate is evaluated (ten times any ``lmax`` a run
#: on this grid can afford).
_ELL_MAX = 10_000


def sphere_growth_rates(ell: Any, *, beta: float, sigma: float = 0.0) -> np.ndarray:
    r"""Linear growth rate :math:`r_\ell` of degree-:math:`\ell` perturbations of the
    uniform density on :math:`S^2` (USA mean field, noise :math:`\sigma\Delta_S`).

    .. math::

        r_\ell = \frac{\lambda_\ell(\beta)\,\ell(\ell+1)}{4\pi\beta}
        - \sigma\ell(\ell+1),
        \qquad \lambda_\ell(\beta) = 4\pi\,i_\ell(\beta),

    (derivation in the module docstring): a perturbation
    :math:`\varepsilon Y_{\ell m}` of :math:`\rho_0 = 1/(4\pi)` grows like
    :math:`e^{r_\ell t}`. Equal to
    ``attnlib.frontiers._noise.noisy_rates(ell, beta=beta, d=3, sigma=sigma,
    normalization="usa")``.

    Parameters
    ----------
    ell : int or array_like of int
        Degrees (``>= 0``).
    beta : float
        Inverse temperature (``>= 0``; at 0 the limit).
    sigma : float
        Noise level (``>= 0``).

    Returns
    -------
    ndarray of the shape of ``ell``

    Examples
    --------
    >>> import numpy as np
    >>> r = sphere_growth_rates([0, 1, 2], beta=2.0)
    >>> bool(np.allclose(r, [0, 2 * (2 * np.cosh(2) - np.sinh(2)) / 8, r[2]]))
    True
    >>> sphere_growth_rates(1, beta=0.0, sigma=0.125).round(6)  # 2/3 - 2 sigma
    np.float64(0.416667)
    """
    beta = check_real(beta, "beta", low=0.0)
    sigma = check_real(sigma, "sigma", low=0.0)
    ell = as_finite(ell, "ell")
    if np.any(ell < 0) or np.any(ell != np.round(ell)):
        raise ValueError(f"ell must be non-negative integers, got {ell!r}")
    if np.any(ell > _ELL_MAX):
        raise ValueError(
            f"ell must be at most {_ELL_MAX} (degrees of a band-limited density), "
            f"got {float(np.max(ell)):g}"
        )
    ll = ell * (ell + 1.0)
    return ll * (_kernel_over_beta(ell, beta) - sigma)


# ------------------------------------------------ harmonics and transforms
def _legendre(L: int, z: np.ndarray) -> list[np.ndarray]:
    r"""Normalised associated Legendre functions at ``z`` (shape (n,)), one array
    per order: ``out[m][l - m]`` is :math:`\bar P_{\ell m}(z)` for
    :math:`m \le \ell \le L`, with :math:`\bar P_{\ell m}(\cos\theta)e^{im\varphi}`
    orthonormal on the sphere (area measure) and the Condon–Shortley phase.

    The recurrence starts from :math:`\bar P_{00} = 1/\sqrt{4\pi}`,
    :math:`\bar P_{mm} = -\sqrt{(2m+1)/(2m)}\,s\,\bar P_{m-1,m-1}`
    (:math:`s = \sqrt{1-z^2}`), :math:`\bar P_{m+1,m} = \sqrt{2m+3}\,z\bar P_{mm}`, and
    :math:`\bar P_{\ell m} = a_{\ell m}(z\bar P_{\ell-1,m} - b_{\ell m}\bar
    P_{\ell-2,m})` with :math:`a_{\ell m} = \sqrt{(4\ell^2-1)/(\ell^2-m^2)}`,
    :math:`b_{\ell m} = \sqrt{((\ell-1)^2-m^2)/(4(\ell-1)^2-1)}`: every coefficient
    is O(1), so it is stable (the :math:`\bar P_{mm}` underflow gracefully to zero
    near the poles for large ``m``, where they are negligible).
    """
    z = np.asarray(z, dtype=np.float64)
    s = np.sqrt(np.clip(1.0 - z * z, 0.0, None))
    out = []
    pmm = np.full(z.shape, 1.0 / np.sqrt(FOUR_PI))
    for m in range(L + 1):
        if m > 0:
            pmm = -np.sqrt((2.0 * m + 1.0) / (2.0 * m)) * s * pmm
        P = np.empty((L + 1 - m,) + z.shape)
        P[0] = pmm
        if m < L:
            P[1] = np.sqrt(2.0 * m + 3.0) * z * pmm
        for ell in range(m + 2, L + 1):
            a = np.sqrt((4.0 * ell * ell - 1.0) / (ell * ell - m * m))
            b = np.sqrt(((ell - 1.0) ** 2 - m * m) / (4.0 * (ell - 1.0) ** 2 - 1.0))
            P[ell - m] = a * (z * P[ell - m - 1] - b * P[ell - m - 2])
        out.append(P)
    return out


def _harmonics(L: int, points: np.ndarray) -> np.ndarray:
    r""":math:`Y_{\ell m}(x)` for unit ``points`` (n, 3): complex array
    ``(L+1, L+1, n)`` indexed ``[l, m]`` for ``0 <= m <= l`` (zero for ``m > l``)."""
    x, y, z = points[:, 0], points[:, 1], points[:, 2]
    phi = np.arctan2(y, x)
    P = _legendre(L, np.clip(z, -1.0, 1.0))
    Y = np.zeros((L + 1, L + 1, points.shape[0]), dtype=np.complex128)
    for m in range(L + 1):
        Y[m:, m] = P[m] * np.exp(1j * m * phi)
    return Y


class _Grid:
    """The Gauss–Legendre x equispaced grid of degree ``L`` and its transforms."""

    def __init__(self, L: int) -> None:
        self.L = L
        self.nlat = (3 * L) // 2 + 1  # Gauss-Legendre exact to degree 2 nlat - 1 >= 3L
        self.nlon = 3 * L + 2 if L % 2 == 0 else 3 * L + 3  # even, >= 3L + 1
        z, w = np.polynomial.legendre.leggauss(self.nlat)
        self.z = z[::-1].copy()  # north to south: theta increasing
        self.wz = w[::-1].copy()
        self.theta = np.arccos(self.z)
        self.phi = 2.0 * np.pi * np.arange(self.nlon) / self.nlon
        P = _legendre(L, self.z)
        self.P = P  # P[m]: (L+1-m, nlat)
        self.PT = [p.T.copy() for p in P]  # (nlat, L+1-m): synthesis
        dphi = 2.0 * np.pi / self.nlon
        self.PW = [p * (self.wz * dphi) for p in P]  # (L+1-m, nlat): analysis
        ell = np.arange(L + 1, dtype=np.float64)
        self.ll = ell * (ell + 1.0)
        self.mask = np.tril(np.ones((L + 1, L + 1), dtype=bool))  # m <= l

    @property
    def shape(self) -> tuple[int, int]:
        return (self.nlat, self.nlon)

    def points(self) -> np.ndarray:
        """Unit vectors of the grid, shape (nlat, nlon, 3)."""
        st = np.sqrt(np.clip(1.0 - self.z**2, 0.0, None))[:, None]
        return np.stack(
            [
                st * np.cos(self.phi)[None, :],
                st * np.sin(self.phi)[None, :],
                np.broadcast_to(self.z[:, None], self.shape),
            ],
            axis=-1,
        )

    def weights(self) -> np.ndarray:
        """Quadrature weights (nlat, nlon): ``sum(w * f)`` is the integral of
        ``f dA``, exact for harmonics of degree ``<= 2 nlat - 1``."""
        return np.broadcast_to(
            (self.wz * (2.0 * np.pi / self.nlon))[:, None], self.shape
        ).copy()

    def synth(self, a: np.ndarray) -> np.ndarray:
        """Coefficients ``(..., L+1, L+1)`` -> grid values ``(..., nlat, nlon)``."""
        F = np.zeros(a.shape[:-2] + (self.nlat, self.nlon // 2 + 1), np.complex128)
        for m in range(self.L + 1):
            F[..., :, m] = a[..., m:, m] @ self.P[m]
        # f = F_0 + 2 Re sum_{m>0} F_m e^{im phi} (no Nyquist term: nlon > 2L)
        return np.fft.irfft(F, n=self.nlon, axis=-1) * self.nlon

    def analyse(self, f: np.ndarray) -> np.ndarray:
        """Grid values ``(..., nlat, nlon)`` -> coefficients ``(..., L+1, L+1)``:
        exact for functions of degree ``<= 2L`` (products of two of degree L)."""
        G = np.fft.rfft(f, axis=-1)[..., : self.L + 1]
        a = np.zeros(f.shape[:-2] + (self.L + 1, self.L + 1), np.complex128)
        for m in range(self.L + 1):
            a[..., m:, m] = G[..., :, m] @ self.PW[m].T
        return a


@lru_cache(maxsize=8)
def _grid(L: int) -> _Grid:
    return _Grid(L)


def _degree_norms(a: np.ndarray) -> np.ndarray:
    r""":math:`(\sum_{m=-\ell}^{\ell}|a_{\ell m}|^2)^{1/2}` per degree, shape (L+1,)."""
    sq = np.abs(a) ** 2
    return np.sqrt(sq[:, 0] + 2.0 * sq[:, 1:].sum(axis=1))


# ----------------------------------------------------------------- evaluation
def sphere_density(coefficients: Any, points: Any) -> np.ndarray:
    r"""The density :math:`\sum_{\ell\le L}\sum_{|m|\le\ell} a_{\ell m}Y_{\ell m}(x)`
    at unit ``points``, from the coefficients of :func:`sphere_mean_field`.

    Parameters
    ----------
    coefficients : ndarray, shape (..., L+1, L+1), complex
        :math:`a_{\ell m}` at ``[..., l, m]`` for :math:`0\le m\le\ell` (entries with
        ``m > l`` are ignored), e.g. ``sol.info["coefficients"]`` (one per time).
    points : ndarray, shape (n, 3)
        Unit vectors.

    Returns
    -------
    ndarray, shape (..., n)
        Real density values (w.r.t. the area measure).

    Examples
    --------
    >>> import numpy as np
    >>> a = np.zeros((3, 3), complex); a[0, 0] = 1 / np.sqrt(4 * np.pi)  # uniform
    >>> bool(np.allclose(sphere_density(a, np.eye(3)), 1 / (4 * np.pi)))
    True
    """
    a = np.asarray(coefficients)
    if not np.issubdtype(a.dtype, np.complexfloating):
        a = as_numeric(a, "coefficients")
    a = a.astype(np.complex128)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2] or a.shape[-1] < 1:
        raise ValueError(
            f"coefficients must have shape (..., L+1, L+1), got shape {a.shape}"
        )
    if not np.all(np.isfinite(a)):
        raise ValueError("coefficients must contain only finite values")
    X = as_finite(points, "points", ndims=(2,))
    if X.shape[1] != 3:
        raise ValueError(f"points must have shape (n, 3), got shape {X.shape}")
    if np.any(np.abs(np.linalg.norm(X, axis=1) - 1.0) > 1e-8):
        raise ValueError("points must be unit vectors (|x| = 1 within 1e-8)")
    L = a.shape[-1] - 1
    Y = _harmonics(L, X)  # (L+1, L+1, n)
    a = np.where(np.tril(np.ones((L + 1, L + 1), bool)), a, 0.0)
    w = np.where(np.arange(L + 1) == 0, 1.0, 2.0)  # m and -m
    return np.einsum("...lm,lmn,m->...n", a, Y, w).real


# -------------------------------------------------------------------- solver
def _transport(grid: _Grid, gker: np.ndarray) -> Any:
    r"""The transport term :math:`-\operatorname{div}_S(\rho\nabla_S\Phi)` on
    coefficients, :math:`\Phi` having the coefficients ``gker[l] * a[l, m]``.

    ``rhs(a, pin=True)``: with ``pin``, the degree-0 entry (round-off, by Green's
    identity and the exact quadrature) is set to zero.
    """
    ll = grid.ll[:, None]
    lap = -ll

    def rhs(a: np.ndarray, pin: bool = True) -> np.ndarray:
        phi = gker * a
        rho, Phi, lrho, lPhi = grid.synth(np.stack([a, phi, lap * a, lap * phi]))
        # div(rho grad Phi) = (Lap(rho Phi) + rho Lap Phi - Phi Lap rho) / 2
        A1, A2 = grid.analyse(np.stack([rho * Phi, Phi * lrho - rho * lPhi]))
        out = 0.5 * (ll * A1 + A2)
        if pin:
            out[0, 0] = 0.0
        return out

    return rhs


def _check_lmax(L: int, beta: float) -> None:
    ell = np.arange(1, L + 2, dtype=np.float64)
    rates = ell * (ell + 1.0) * _kernel_over_beta(ell, beta)
    if rates[-1] > _RATE_CUTOFF * np.max(rates):
        # the first degree that the bound allows
        need = L + 1
        while True:
            e = np.arange(1, need + 2, dtype=np.float64)
            r = e * (e + 1.0) * _kernel_over_beta(e, beta)
            if r[-1] <= _RATE_CUTOFF * np.max(r):
                break
            need += 1
        raise ValueError(
            f"lmax={L} is too small for beta={beta:g}: the degree {L + 1} left out "
            f"grows at {rates[-1]:.3g}, more than {_RATE_CUTOFF:g} times the fastest "
            f"linear rate {np.max(rates):.3g}; use lmax >= {need}"
        )


def sphere_mean_field(
    rho0: Any,
    *,
    beta: float,
    lmax: int,
    times: Any = None,
    t_final: float | None = None,
    sigma: float = 0.0,
    dt: float | None = None,
    cfl: float = 1.0,
    progress: bool = False,
    max_steps: int = MAX_STEPS,
) -> Trajectory:
    r"""Pseudo-spectral solver of the USA mean-field equation on the sphere
    :math:`S^2`, with optional noise.

    .. math::

        \partial_t\rho + \operatorname{div}_S\Big(\rho\,\frac1\beta\nabla_S
        (K\ast\rho)\Big) = \sigma\Delta_S\rho,
        \qquad K\ast\rho(x) = \int e^{\beta\langle x,y\rangle}\rho(y)\,dA(y),

    for a density :math:`\rho` w.r.t. the area measure :math:`dA` (uniform density
    :math:`1/(4\pi)`). The field :math:`\frac1\beta\nabla_S(K\ast\rho)(x) = \int
    e^{\beta\langle x,y\rangle}P_x^\perp y\,\rho(y)\,dA(y)` is that of the USA
    particles ``Model(beta=beta, normalization="usa")``, in the same time; the
    noise is that of ``simulate_noisy``'s particles (intensity :math:`\sigma`,
    driven by :math:`\sqrt{2\sigma}\,dB_t`). Only
    USA is solved (the SA field divides by :math:`K\ast\rho`, which is not
    band-limited; it is left out). A perturbation of the uniform density of degree
    :math:`\ell` grows at :func:`sphere_growth_rates`. The method (spherical
    harmonics up to ``lmax``, Gauss–Legendre grid, 3/2-rule dealiasing, RK4 with an
    integrating factor for the noise) is described in the module docstring.

    Parameters
    ----------
    rho0 : callable or ndarray of shape (nlat, nlon)
        Initial density of mass one: a function of unit vectors (an array (n, 3)
        -> (n,)), or its values on the solver's grid (``info["points"]`` of a run
        with the same ``lmax``, e.g. with ``t_final=0``). It is replaced by its
        projection on the harmonics of degree ``<= lmax``.
    beta : float
        Inverse temperature (``>= 0``).
    lmax : int
        Largest degree ``L`` (``>= 2``). It must resolve the unstable modes: a
        ``ValueError`` is raised when the degree ``L + 1`` grows (without noise)
        faster than 1% of the fastest linear rate.
    times : array_like, shape (T,), optional
        Output times (or give ``t_final``: ``[0, t_final]``).
    t_final : float, optional
    sigma : float
        Noise level (``>= 0``): the term :math:`\sigma\Delta_S\rho`.
    dt : float or None
        Fixed time step (the driver's :class:`~attnlib._control.Fixed` controller);
        ``None``: adaptive steps under the CFL bound (module docstring).
    cfl : float
        CFL number of the adaptive steps, in ``(0, 2.5]``.
    progress : bool
    max_steps : int
        Cap on the number of steps.

    Returns
    -------
    Trajectory
        ``states`` of shape ``(T, nlat, nlon)``: the density on the grid at
        ``times`` (``final`` is ``states[-1]``); in ``info``:

        * ``coefficients`` (ndarray, shape (T, L+1, L+1), complex):
          :math:`a_{\ell m}(t) = \int\rho\,\bar Y_{\ell m}\,dA` at ``[:, l, m]``
          for :math:`0\le m\le\ell` (zero above the diagonal); evaluate with
          :func:`sphere_density`.
        * ``points`` (ndarray, shape (nlat, nlon, 3)): the grid's unit vectors.
        * ``theta`` (nlat,), ``phi`` (nlon,): colatitudes (Gauss–Legendre nodes of
          :math:`\cos\theta`) and longitudes :math:`2\pi k/\mathrm{nlon}`.
        * ``weights`` (ndarray, shape (nlat, nlon)): quadrature weights,
          ``sum(weights * f)`` :math:`=\int f\,dA` exactly to degree :math:`3L`.
        * ``mass`` (ndarray, shape (T,)): ``sum(weights * states[k])``.
        * ``resolution`` (ndarray, shape (T,)): the largest degree norm
          :math:`(\sum_m|a_{\ell m}|^2)^{1/2}` over :math:`\ell > 2L/3`, relative
          to :math:`|a_{00}|`; above about ``1e-6`` the truncation no longer
          resolves the density.
        * ``lmax``, ``beta``, ``sigma``.

    Raises
    ------
    ValueError
        For a bad argument (named in the message), ``lmax`` too small for ``beta``,
        an initial density without mass one, or a step count above ``max_steps``.
    FloatingPointError
        If the solution becomes non-finite (a fixed ``dt`` too large).

    References
    ----------
    [GLPR] §2 (mean field), §3 (the energy; Funk–Hecke in the proof of Prop 3.4).

    Examples
    --------
    >>> import numpy as np
    >>> rho0 = lambda x: (1 + 0.1 * x[:, 2]) / (4 * np.pi)
    >>> sol = sphere_mean_field(rho0, beta=1.0, lmax=8, t_final=0.5)
    >>> bool(np.max(np.abs(sol.info["mass"] - 1.0)) < 1e-13)
    True
    """
    beta = check_real(beta, "beta", low=0.0)
    L = check_int(lmax, "lmax", low=2)
    sigma = check_real(sigma, "sigma", low=0.0)
    if dt is not None:
        dt = check_real(dt, "dt", low=0.0, strict_low=True)
    cfl = check_real(cfl, "cfl", low=0.0, high=2.5, strict_low=True)
    progress = check_bool(progress, "progress")
    max_steps = check_int(max_steps, "max_steps", low=1)
    times = output_times(times, t_final)
    g_over = _kernel_over_beta(np.arange(L + 1), beta)  # i_l / beta
    _check_lmax(L, beta)
    grid = _grid(L)
    pts = grid.points()
    if callable(rho0):
        vals = rho0(pts.reshape(-1, 3))
        rho = as_finite(vals, "rho0(points)")
        npts = pts.shape[0] * pts.shape[1]
        if rho.size != npts:
            raise ValueError(
                f"rho0(points) must return one value per point ({npts} for points of "
                f"shape ({npts}, 3)), got shape {rho.shape}"
            )
        rho = rho.reshape(grid.shape)
    else:
        rho = as_finite(rho0, "rho0")
        if rho.shape != grid.shape:
            raise ValueError(
                f"rho0 must be a callable or the values on the grid of lmax={L}, of "
                f"shape {grid.shape} (nlat, nlon), got shape {rho.shape}"
            )
    a = grid.analyse(rho)
    mass0 = float(a[0, 0].real * np.sqrt(FOUR_PI))
    if abs(mass0 - 1.0) > 1e-6:
        raise ValueError(
            f"rho0 must have mass one (integral over the sphere w.r.t. area), got "
            f"{mass0:.6g}"
        )
    # Phi = (1/beta) K * rho has coefficients 4 pi (i_l / beta) a_lm
    gker = (FOUR_PI * g_over)[:, None]
    ll = grid.ll[:, None]
    mask = grid.mask
    rhs = _transport(grid, gker)

    damp = -sigma * ll  # exact diffusion rates

    def ifrk4(a, h):
        # a step too long for the flow overflows: the driver's finiteness check
        # reports it as a FloatingPointError, without numpy's warnings on the way
        with np.errstate(over="ignore", invalid="ignore"):
            return _ifrk4(a, h)

    def _ifrk4(a, h):
        # the integrating-factor RK4 (exact for the noise term)
        if sigma == 0.0:
            k1 = h * rhs(a)
            k2 = h * rhs(a + 0.5 * k1)
            k3 = h * rhs(a + 0.5 * k2)
            k4 = h * rhs(a + k3)
            return a + (k1 + 2.0 * k2 + 2.0 * k3 + k4) / 6.0
        E = np.exp(0.5 * h * damp)
        E2 = E * E
        k1 = h * rhs(a)
        k2 = h * rhs(E * (a + 0.5 * k1))
        k3 = h * rhs(E * a + 0.5 * k2)
        k4 = h * rhs(E2 * a + E * k3)
        return E2 * a + (E2 * k1 + 2.0 * E * (k2 + k3) + k4) / 6.0

    # fastest noise-free linear rate (resolve it: h * rate <= 0.1)
    ell = np.arange(L + 1)
    rate_max = float(np.max(ell * (ell + 1.0) * g_over))
    # sup over the sphere of sum_m |grad Y_lm|^2 and |Lap Y_lm|^2 (addition theorem)
    c_grad = np.sqrt(grid.ll * (2.0 * ell + 1.0) / FOUR_PI)
    c_lap = grid.ll * np.sqrt((2.0 * ell + 1.0) / FOUR_PI)

    def cfl_bound(a):
        nphi = _degree_norms(gker * a)
        speed = L * float(c_grad @ nphi) + float(c_lap @ nphi)
        return cfl / max(speed, 1e-300), None

    if dt is None:
        dt_cap = 0.1 / max(rate_max, 1e-300)
        control: Fixed | Adaptive = Adaptive(dt_cap, reach=1e-14)

        def advance(a, step):
            return ifrk4(a, step.h), step.end, False

        bound = cfl_bound
    else:
        dt_cap = dt
        control = Fixed(dt)

        def advance(a, h, m):
            for _ in range(m):
                a = ifrk4(a, h)
            return a

        bound = None

    T = times.size
    coefs = np.empty((T, L + 1, L + 1), dtype=np.complex128)
    high = ell > (2 * L) // 3

    def observe(k, a):
        coefs[k] = np.where(mask, a, 0.0)

    run = drive(
        advance,
        np.where(mask, a, 0.0),
        times,
        control=control,
        bound=bound,
        observe=observe,
        finite=lambda a: bool(np.all(np.isfinite(a))),
        max_steps=max_steps,
        progress=progress,
        name="sphere_mean_field",
        advice={
            Outcome.BUDGET_EXHAUSTED: "shorten t_final (times), increase max_steps "
            "or dt, or use a smaller "
            "beta or lmax",
            Outcome.STEP_TOO_SMALL: "increase max_steps or use a smaller beta",
            Outcome.NONFINITE: "use a smaller dt (or dt=None, adaptive steps)",
        },
    )
    dens = grid.synth(coefs)
    w = grid.weights()
    mass = np.einsum("tij,ij->t", dens, w)
    norms = np.array([_degree_norms(c) for c in coefs])
    resolution = np.max(norms[:, high], axis=1) / np.abs(coefs[:, 0, 0])
    return trajectory(
        series=("coefficients", "mass", "resolution"),
        times=times,
        states=dens,
        final=dens[-1],
        method="rk4" if sigma == 0.0 else "ifrk4",
        n_steps=run.n_steps,
        dt=float(dt_cap),
        coefficients=coefs,
        points=pts,
        theta=grid.theta.copy(),  # the grid is cached: hand out copies
        phi=grid.phi.copy(),
        weights=w,
        mass=mass,
        resolution=resolution,
        lmax=L,
        beta=beta,
        sigma=sigma,
    )
