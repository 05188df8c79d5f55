r"""Stationary states of the noisy USA mean field beyond the linear threshold.

The USA mean-field equation with noise :math:`\sigma\Delta` on :math:`S^{d-1}`,
for a density :math:`\rho` with respect to the uniform *probability* measure
:math:`\omega` (so that the uniform density is :math:`\rho \equiv 1`),

.. math::

    \partial_t\rho + \operatorname{div}\big(\rho\,\nabla\Phi[\rho]\big)
        = \sigma\Delta\rho,
    \qquad
    \Phi[\rho] = \frac1\beta K\ast\rho,\quad
    K\ast\rho(x) = \int e^{\beta\langle x, y\rangle}\rho(y)\,d\omega(y),

is the Wasserstein gradient flow of the free energy

.. math::

    \mathcal F_\sigma[\rho] = \sigma\int\rho\log\rho\,d\omega
        - \frac1{2\beta}\iint e^{\beta\langle x, y\rangle}
          \rho(x)\rho(y)\,d\omega(x)\,d\omega(y)

(:math:`\delta\mathcal F_\sigma/\delta\rho = \sigma(\log\rho + 1) - \Phi[\rho]`, and
:math:`\partial_t\rho = \operatorname{div}(\rho\nabla\,\delta\mathcal F_\sigma/
\delta\rho)`). A stationary density has zero flux, :math:`\sigma\nabla\log\rho =
\nabla\Phi[\rho]`, that is the self-consistency equation

.. math::

    \rho = \frac{1}{Z}\exp\Big(\frac{K\ast\rho}{\beta\sigma}\Big),
    \qquad Z = \int\exp\Big(\frac{K\ast\rho}{\beta\sigma}\Big)d\omega .

**Zonal reduction.** For a density :math:`\rho(x) = f(\langle x, e\rangle)` the law of
:math:`t = \langle x, e\rangle` under :math:`\omega` is
:math:`\mu_d(dt)\propto(1-t^2)^{(d-3)/2}dt` (:math:`t = \cos\theta` on the circle,
:math:`d = 2`; uniform on :math:`[-1, 1]` for :math:`S^2`). With :math:`q_\ell` the
orthonormal polynomials of :math:`\mu_d` (Gegenbauer; Chebyshev for :math:`d = 2`,
Legendre for :math:`d = 3`), :math:`f = \sum_\ell b_\ell q_\ell` with :math:`b_0 = 1`,
and Funk–Hecke gives :math:`K\ast\rho = \sum_\ell c_\ell b_\ell q_\ell` with
:math:`c_\ell = c_\ell(\beta)` of :func:`attnlib.frontiers.funk_hecke`. Writing
:math:`\sigma_c = c_1/\beta` (the USA linear threshold :func:`noise_threshold`) and
:math:`r_\ell = c_\ell/c_1`, the equation for :math:`b = (b_1, \dots, b_L)` is

.. math::

    b_\ell = G_\ell(b) = \frac{\int q_\ell\, e^{u}\,d\mu_d}{\int e^{u}\,d\mu_d},
    \qquad u = \frac{\sigma_c}{\sigma}\sum_{m\ge1} r_m b_m q_m,

solved by Newton's method with the exact Jacobian :math:`\partial G_\ell/\partial b_m
= \frac{\sigma_c}{\sigma} r_m \operatorname{Cov}_\rho(q_\ell, q_m)` (Gauss–Jacobi
quadrature in :math:`t`). The order parameter is the length of the first moment,
:math:`|\int x\rho\,d\omega| = b_1/\sqrt d` (:math:`q_1 = \sqrt d\,t`), and the free
energy relative to the uniform density is

.. math::

    \Delta\mathcal F = \sigma\int\rho\log\rho\,d\omega
        - \frac{\sigma_c}{2}\sum_{\ell\ge1} r_\ell b_\ell^2 .

A stationary state is *stable* (a local minimiser among zonal densities) when the
eigenvalues of :math:`DG` (real and non-negative: :math:`DG` is similar to a
symmetric positive semi-definite matrix) are all below one; the undamped iteration
:math:`b \leftarrow G(b)` converges to exactly such states, and is how a sweep falls
off a branch that ends or loses stability. Only zonal perturbations are examined.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._lazy import special
from .._special import ive
from .._validation import as_finite, check_int, check_real
from ._noise import noise_threshold

__all__ = [
    "transition_beta",
    "linear_coupling",
    "landau_coefficient",
    "StationaryState",
    "stationary_state",
    "Branches",
    "stationary_branches",
    "circle_noisy_mean_field",
]


# ------------------------------------------------------------ Mun-Rosenzweig
#: The range of beta: below _BETA_SMALL the Bessel functions are replaced by their
#: leading terms (relative error below 1e-12); above _BETA_MAX the coupling
#: e^(-beta) underflows and the zonal expansions would need thousands of degrees.
_BETA_SMALL = 1e-6
_BETA_MAX = 500.0

#: The smallest noise, as a fraction of sigma_c, at which a stationary density is
#: computed: below it the density is too concentrated for the quadrature.
_SIGMA_MIN = 0.05

#: The largest beta of the fixed-step circle solver (meant for the moderate beta of
#: the noisy transition; its steps would have to shrink like e^(-beta) beyond).
_BETA_CIRCLE = 50.0


def transition_beta(d: int) -> float:
    r"""The :math:`\beta^*(d)` of Mun and Rosenzweig: the root of
    :math:`I_{d/2+1}(\beta)/I_{d/2}(\beta) = 1/d`.

    Below it the noisy USA transition is continuous, above it discontinuous.
    The ratio increases from 0 (:math:`\approx\beta/(d+2)`) to 1, so the root is
    unique; it is bracketed in :math:`(0, d + 2]`.

    Examples
    --------
    >>> round(transition_beta(3), 6)
    1.816155
    """
    d = check_int(d, "d", low=2)
    from scipy.optimize import brentq

    def gap(b):
        return special.ive(d / 2 + 1, b) / special.ive(d / 2, b) - 1.0 / d

    return float(brentq(gap, 1e-8, d + 2.0, xtol=1e-14, rtol=1e-14))


def linear_coupling(*, beta: float, d: int) -> float:
    r"""Mun and Rosenzweig's linear-stability coupling
    :math:`K_\#^{(d)}(\beta) = \beta^{d/2}/(2^{d/2}\Gamma(d/2)I_{d/2}(\beta))`.

    It equals :math:`1/(2\sigma_c)` with :math:`\sigma_c` the USA threshold
    ``noise_threshold(beta=beta, d=d, normalization="usa")`` (an identity of the
    two formulas: :math:`\sigma_c = \Gamma(d/2)2^{d/2-1}I_{d/2}(\beta)/\beta^{d/2}`).

    Examples
    --------
    >>> round(linear_coupling(beta=1e-9, d=3), 6)  # K_#(0+) = d/2
    1.5
    """
    beta = check_real(beta, "beta", low=0.0, strict_low=True, high=_BETA_MAX)
    d = check_int(d, "d", low=2)
    if beta < _BETA_SMALL:  # I_nu(b) = (b/2)^nu / Gamma(nu + 1) (1 + O(b^2))
        return d / 2
    log_k = (
        (d / 2) * np.log(beta)
        - (d / 2) * np.log(2.0)
        - special.gammaln(d / 2)
        - np.log(float(ive(d / 2, beta)))
        - beta
    )
    return float(np.exp(log_k))


def landau_coefficient(*, beta: float, d: int) -> float:
    r"""The cubic coefficient :math:`A` of the bifurcation from the uniform density,
    :math:`\sigma/\sigma_c - 1 = A\,a^2 + O(a^4)` with :math:`a = (\sigma_c/\sigma)
    b_1` the amplitude of the first mode:

    .. math::

        A = \frac{d-1}{d+2}\,\frac{r_2}{1 - r_2} - \frac{1}{d+2},
        \qquad r_2 = \frac{c_2}{c_1} = \frac{I_{d/2+1}(\beta)}{I_{d/2}(\beta)} .

    :math:`A < 0` (the branch lives below :math:`\sigma_c`: continuous) exactly when
    :math:`r_2 < 1/d`, i.e. :math:`\beta < \beta^*(d)`; :math:`A > 0` (subcritical,
    discontinuous) when :math:`\beta > \beta^*(d)`.

    Examples
    --------
    >>> landau_coefficient(beta=1.0, d=2) < 0 < landau_coefficient(beta=4.0, d=2)
    True
    """
    beta = check_real(beta, "beta", low=0.0, strict_low=True, high=_BETA_MAX)
    d = check_int(d, "d", low=2)
    if beta < _BETA_SMALL:  # I_(nu+1)/I_nu = b / (2 nu + 2) (1 + O(b^2))
        r2 = beta / (d + 2)
    else:
        r2 = float(ive(d / 2 + 1, beta) / ive(d / 2, beta))
    return (d - 1) / (d + 2) * r2 / (1.0 - r2) - 1.0 / (d + 2)


# ------------------------------------------------------------ zonal machinery
class _Zonal:
    """Quadrature in t = <x, e> and the orthonormal polynomials of mu_d."""

    def __init__(self, d: int, beta: float, L: int, M: int) -> None:
        self.d, self.beta, self.L = d, beta, L
        a = (d - 3) / 2
        t, w = special.roots_jacobi(M, a, a)
        self.t, self.w = t, w / w.sum()
        Q = np.array([special.eval_jacobi(ell, a, a, t) for ell in range(L + 1)])
        self.norms = np.sqrt((Q**2) @ self.w)
        Q /= self.norms[:, None]
        self.Q = Q  # (L+1, M); Q[1] = sqrt(d) t
        nu = d / 2 - 1
        c = special.ive(np.arange(L + 1) + nu, beta)
        self.r = c / c[1]  # r_l = c_l / c_1
        self.sigma_c = noise_threshold(beta=beta, d=d, normalization="usa")

    def potential(self, b, sigma, t=None):
        """u = (sigma_c / sigma) sum_l r_l b_l q_l at the nodes (or at ``t``)."""
        if t is None:
            Q = self.Q[1:]
        else:
            a = (self.d - 3) / 2
            Q = np.array(
                [special.eval_jacobi(ell, a, a, t) for ell in range(1, self.L + 1)]
            ) / self.norms[1:].reshape((-1,) + (1,) * np.ndim(t))
            return (self.sigma_c / sigma) * np.tensordot(self.r[1:] * b, Q, 1)
        return (self.sigma_c / sigma) * ((self.r[1:] * b) @ Q)

    def density(self, b: np.ndarray, sigma: float) -> np.ndarray:
        u = self.potential(b, sigma)
        e = np.exp(u - u.max())
        return e / (e @ self.w)

    def G(self, b, sigma):
        rho = self.density(b, sigma)
        return (self.Q[1:] * rho) @ self.w, rho

    def DG(self, b, sigma):
        g, rho = self.G(b, sigma)
        cov = (self.Q[1:] * (rho * self.w)) @ self.Q[1:].T - np.outer(g, g)
        return g, cov * ((self.sigma_c / sigma) * self.r[1:])[None, :]

    def free_energy(self, b, sigma):
        rho = self.density(b, sigma)
        ent = (rho * np.log(rho)) @ self.w
        return sigma * ent - 0.5 * self.sigma_c * np.sum(self.r[1:] * b**2)

    def stability(self, b, sigma) -> float:
        _, J = self.DG(b, sigma)
        return float(np.max(np.linalg.eigvals(J).real))


#: The most degrees of the zonal expansion.
_LMAX = 400


def _zonal(d: int, beta: float, lmax: int | None) -> _Zonal:
    if lmax is None:
        # keep every degree whose kernel coefficient is above 1e-16 of c_1
        nu = d / 2 - 1
        ells = np.arange(1, _LMAX)
        r = special.ive(ells + nu, beta) / special.ive(1 + nu, beta)
        lmax = int(max(8, ells[np.nonzero(r > 1e-16)[0][-1]] + 1))
    return _Zonal(d, beta, lmax, 2 * lmax + 64)


def _newton(z: _Zonal, b: np.ndarray, sigma: float, tol: float, maxit: int = 60):
    for _ in range(maxit):
        g, J = z.DG(b, sigma)
        F = b - g
        if np.max(np.abs(F)) < tol:
            return b, True
        step = np.linalg.solve(np.eye(b.size) - J, -F)
        b = b + step
        if not np.all(np.isfinite(b)):
            return b, False
    return b, bool(np.max(np.abs(b - z.G(b, sigma)[0])) < tol)


def _relax(z: _Zonal, b: np.ndarray, sigma: float, tol: float, maxit: int = 200000):
    """The undamped iteration b <- G(b) (it converges to stable states), then Newton."""
    for _ in range(maxit):
        g = z.G(b, sigma)[0]
        if np.max(np.abs(g - b)) < 1e-7:
            b = g
            break
        b = g
    return _newton(z, b, sigma, tol)


def _settle(z, b, sigma, tol, kick):
    """A stable stationary state near ``b``: Newton from ``b``; if it fails or lands
    on an unstable state, kick along the first mode and relax."""
    b1, ok = _newton(z, b.copy(), sigma, tol)
    if ok and z.stability(b1, sigma) < 1.0 - 1e-9:
        return b1
    start = (b1 if ok else b).copy()
    start[0] += kick
    b2, ok = _relax(z, start, sigma, tol)
    if not ok:
        raise RuntimeError(
            f"no stable stationary state found at sigma={sigma:g} "
            f"(beta={z.beta:g}, d={z.d}); use a larger lmax"
        )
    return b2


# ----------------------------------------------------------------- public-ish
@dataclass(frozen=True)
class StationaryState:
    """A zonal stationary density of the noisy USA mean field (module docstring)."""

    beta: float
    d: int
    sigma: float
    coefficients: np.ndarray  # b_1..b_L
    order: float  # |first moment| = b_1 / sqrt(d)
    free_energy: float  # F_sigma[rho] - F_sigma[uniform]
    stability: float  # largest eigenvalue of DG (< 1: stable among zonal densities)
    t: np.ndarray  # quadrature nodes in t = <x, e>
    density: np.ndarray  # rho at the nodes (w.r.t. the uniform probability)

    def __call__(self, t: Any) -> np.ndarray:
        r"""The density :math:`\rho` at :math:`t = \langle x, e\rangle` (w.r.t. the
        uniform probability measure)."""
        t = as_finite(t, "t")
        if np.any(np.abs(t) > 1 + 1e-12):
            raise ValueError("t must lie in [-1, 1] (t = <x, e>)")
        z = _zonal(self.d, self.beta, self.coefficients.size)
        u_nodes = z.potential(self.coefficients, self.sigma)
        top = u_nodes.max()
        log_z = np.log(np.exp(u_nodes - top) @ z.w) + top
        return np.exp(z.potential(self.coefficients, self.sigma, t) - log_z)


def _state(z: _Zonal, b: np.ndarray, sigma: float) -> StationaryState:
    return StationaryState(
        beta=z.beta,
        d=z.d,
        sigma=sigma,
        coefficients=b.copy(),
        order=float(abs(b[0]) / np.sqrt(z.d)),
        free_energy=float(z.free_energy(b, sigma)),
        stability=z.stability(b, sigma),
        t=z.t.copy(),
        density=z.density(b, sigma),
    )


def _check(beta, d, sigma=None, lmax=None):
    beta = check_real(beta, "beta", low=0.0, strict_low=True, high=_BETA_MAX)
    d = check_int(d, "d", low=2)
    if sigma is not None:
        sigma = check_real(sigma, "sigma", low=0.0, strict_low=True)
        _check_sigma_range(sigma, "sigma", beta, d)
    if lmax is not None:
        lmax = check_int(lmax, "lmax", low=2)
        if lmax > _LMAX:
            raise ValueError(f"lmax must be at most {_LMAX}, got {lmax}")
    return beta, d, sigma, lmax


def _check_sigma_range(sigma: float, name: str, beta: float, d: int) -> None:
    floor = _SIGMA_MIN * noise_threshold(beta=beta, d=d, normalization="usa")
    if sigma < floor:
        raise ValueError(
            f"{name} must be at least {_SIGMA_MIN:g} sigma_c = {floor:.4g} "
            f"(beta={beta:g}, d={d}), got {sigma:g}: the stationary density is "
            "then too concentrated for the quadrature"
        )


def stationary_state(
    *,
    beta: float,
    d: int,
    sigma: float,
    order: float | None = None,
    lmax: int | None = None,
    tol: float = 1e-12,
) -> StationaryState:
    r"""A zonal stationary density of the noisy USA mean field (module docstring).

    Parameters
    ----------
    beta, d, sigma : float, int, float
        Inverse temperature (``0 < beta <= 500``), ambient dimension (``>= 2``;
        the circle is ``d = 2``), noise (at least :math:`0.05\,\sigma_c`: below,
        the density is too concentrated for the quadrature).
    order : float, optional
        Start of the iteration :math:`b \leftarrow G(b)` (its first mode at this
        order parameter, the others zero): the stable state whose basin holds that
        start; ``None``: the stable state reached from a small perturbation of the
        uniform density.
    lmax : int, optional
        Number of Gegenbauer modes (default: every degree whose kernel coefficient
        is above :math:`10^{-16}c_1`).
    tol : float
        Newton tolerance on :math:`\max_\ell|b_\ell - G_\ell(b)|`.

    Examples
    --------
    >>> s = stationary_state(beta=1.0, d=2, sigma=0.3)
    >>> bool(0.5 < s.order < 1 and s.free_energy < 0 and s.stability < 1)
    True
    """
    beta, d, sigma, lmax = _check(beta, d, sigma, lmax)
    z = _zonal(d, beta, lmax)
    b = np.zeros(z.L)
    if order is None:
        return _state(z, _settle(z, b, sigma, tol, kick=1e-3), sigma)
    order = check_real(order, "order", low=0.0, high=1.0)
    b[0] = order * np.sqrt(d)
    b, ok = _relax(z, b, sigma, tol)
    if not ok:
        raise RuntimeError(f"no stationary state found at sigma={sigma:g}")
    return _state(z, b, sigma)


@dataclass(frozen=True)
class Branches:
    """The up and down sweeps of :func:`stationary_branches`."""

    beta: float
    d: int
    sigma: np.ndarray
    sigma_c: float
    up: list  # StationaryState per sigma, sweep from small to large sigma
    down: list  # from large to small sigma (listed in increasing sigma)

    @property
    def order_up(self) -> np.ndarray:
        return np.array([s.order for s in self.up])

    @property
    def order_down(self) -> np.ndarray:
        return np.array([s.order for s in self.down])

    @property
    def free_up(self) -> np.ndarray:
        return np.array([s.free_energy for s in self.up])

    @property
    def free_down(self) -> np.ndarray:
        return np.array([s.free_energy for s in self.down])

    def hysteresis(self, atol: float = 1e-4) -> np.ndarray:
        """The sigmas where the two sweeps reach different states."""
        return self.sigma[np.abs(self.order_up - self.order_down) > atol]

    def crossing(self) -> float | None:
        r"""The :math:`\sigma_K` where the ordered branch's free energy crosses the
        uniform one (:math:`\Delta\mathcal F = 0`), by root-finding on the ordered
        branch continued from the up sweep; ``None`` without hysteresis."""
        band = self.hysteresis()
        if band.size == 0:
            return None
        from scipy.optimize import brentq

        z = _zonal(self.d, self.beta, self.up[0].coefficients.size)
        idx = np.nonzero(np.isin(self.sigma, band))[0]
        F = self.free_up[idx]
        change = np.nonzero((F[:-1] < 0) & (F[1:] >= 0))[0]
        if change.size == 0:
            return None
        k0, k1 = idx[change[0]], idx[change[0] + 1]
        if k1 != k0 + 1:
            return None
        b0 = self.up[k0].coefficients

        def dF(s):
            b, ok = _newton(z, b0.copy(), s, 1e-12)
            if not ok or b[0] < 1e-6:
                raise RuntimeError("lost the ordered branch")
            return z.free_energy(b, s)

        return float(brentq(dF, self.sigma[k0], self.sigma[k1], xtol=1e-13))


def stationary_branches(
    sigmas: Any,
    *,
    beta: float,
    d: int,
    lmax: int | None = None,
    tol: float = 1e-12,
) -> Branches:
    r"""Continuation of the stable zonal stationary states in :math:`\sigma`.

    The up sweep starts at the smallest :math:`\sigma` on the ordered state and
    warm-starts each next :math:`\sigma` from the last state; the down sweep starts
    at the largest :math:`\sigma` on the uniform density. When the followed state
    ceases to exist or loses stability the sweep falls (by the iteration
    :math:`b\leftarrow G(b)`, module docstring) to the stable state below it, as the
    mean-field dynamics would. Different states of the two sweeps at the same
    :math:`\sigma` are hysteresis.

    Examples
    --------
    >>> br = stationary_branches([0.2, 0.9], beta=1.0, d=2)
    >>> br.order_up.round(3).tolist() == br.order_down.round(3).tolist()
    True
    """
    beta, d, _, lmax = _check(beta, d, lmax=lmax)
    sig = as_finite(sigmas, "sigmas", ndims=(1,))
    if sig.size < 2 or np.any(np.diff(sig) <= 0) or sig[0] <= 0:
        raise ValueError(
            "sigmas must be positive and strictly increasing (>= 2 values)"
        )
    _check_sigma_range(float(sig[0]), "sigmas", beta, d)
    z = _zonal(d, beta, lmax)
    up = []
    b = np.zeros(z.L)
    for s in sig:
        b = _settle(z, b, s, tol, kick=1e-3)
        up.append(_state(z, b, s))
    down = []
    b = np.zeros(z.L)
    for s in sig[::-1]:
        b = _settle(z, b, s, tol, kick=1e-3)
        down.append(_state(z, b, s))
    return Branches(beta, d, sig.copy(), z.sigma_c, up, down[::-1])


# ------------------------------------------------- the noisy circle mean field
def circle_noisy_mean_field(
    rho0: Any,
    *,
    beta: float,
    sigma: float,
    t_final: float,
    dt: float = 0.01,
) -> np.ndarray:
    r"""The noisy USA mean field on the circle, pseudo-spectrally, to ``t_final``.

    :math:`\partial_t\rho + \partial_\theta(\rho\,\partial_\theta\Phi) =
    \sigma\partial_\theta^2\rho` with :math:`\Phi = \frac1\beta K\ast\rho`,
    :math:`K\ast\rho(\theta) = \int e^{\beta\cos(\theta-\varphi)}\rho(\varphi)
    \frac{d\varphi}{2\pi}` (Fourier multiplier :math:`I_k(\beta)`), for a density
    w.r.t. :math:`d\theta/2\pi` given by its values on the ``n`` equispaced points
    :math:`2\pi j/n`. The particles are those of ``simulate_noisy`` with
    ``Model(beta=beta, normalization="usa")`` in dimension 2. Classical RK4 with an
    integrating factor :math:`e^{-\sigma k^2 h}` for the noise, fixed steps ``dt``
    on the library's driver; the product is dealiased by zero padding (3/2 rule).
    ``rho0`` must be non-negative of mean one, and ``0 < beta <= 50`` (the
    moderate :math:`\beta` of the noisy transition; fixed steps would have to
    shrink like :math:`e^{-\beta}` beyond).

    Returns
    -------
    ndarray, shape (n,)
        The density at ``t_final`` on the same points.

    Examples
    --------
    >>> import numpy as np
    >>> th = 2 * np.pi * np.arange(64) / 64
    >>> rho = circle_noisy_mean_field(1 + 0.1 * np.cos(th), beta=1.0, sigma=2.0,
    ...                               t_final=1.0)
    >>> bool(np.max(np.abs(rho - 1)) < 0.1 * np.exp(-1.4))  # rate 2 - I_1(1) > 1.4
    True
    """
    from .._control import Fixed
    from .._stepping import drive, output_times

    beta = check_real(beta, "beta", low=0.0, strict_low=True, high=_BETA_CIRCLE)
    sigma = check_real(sigma, "sigma", low=0.0)
    t_final = check_real(t_final, "t_final", low=0.0)
    dt = check_real(dt, "dt", low=0.0, strict_low=True)
    rho = as_finite(rho0, "rho0", ndims=(1,))
    n = rho.size
    if n < 8 or n % 2:
        raise ValueError(f"rho0 must have an even number (>= 8) of values, got {n}")
    if np.any(rho < 0) or abs(rho.mean() - 1.0) > 1e-6:
        raise ValueError(
            "rho0 must be a density w.r.t. dtheta/2pi (non-negative values of mean "
            f"one), got values in [{rho.min():.3g}, {rho.max():.3g}] of mean "
            f"{rho.mean():.6g}"
        )
    k = np.arange(n // 2 + 1)
    kern_over_beta = special.ive(k, beta) * np.exp(beta) / beta
    npad = 3 * n // 2 + (3 * n // 2) % 2

    def pad_irfft(ch):
        full = np.zeros(npad // 2 + 1, complex)
        full[: ch.size] = ch
        return np.fft.irfft(full, npad) * (npad / n)

    def rhs(ch):
        dphi = pad_irfft(1j * k * kern_over_beta * ch)
        r = pad_irfft(ch)
        flux = np.fft.rfft(r * dphi)[: k.size] * (n / npad)
        return -1j * k * flux

    damp = -sigma * k**2

    def step(ch, h):
        e2 = np.exp(damp * h / 2)
        e1 = np.exp(damp * h)
        k1 = rhs(ch)
        k2 = rhs(e2 * (ch + h / 2 * k1))
        k3 = rhs(e2 * ch + h / 2 * k2)
        k4 = rhs(e1 * ch + h * e2 * k3)
        return e1 * ch + h / 6 * (e1 * k1 + 2 * e2 * (k2 + k3) + k4)

    def advance(ch, h, m):
        for _ in range(m):
            ch = step(ch, h)
        return ch

    run = drive(
        advance,
        np.fft.rfft(rho),
        output_times(None, t_final),
        control=Fixed(dt),
        finite=lambda ch: bool(np.all(np.isfinite(ch))),
        name="circle_noisy_mean_field",
    )
    return np.fft.irfft(run.state, n)
