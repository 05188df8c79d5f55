r"""The mean-field equation on the circle, its linear theory, and densities.

For a density :math:`\rho` on the circle, the continuity equation of self-attention
([GLPR] §2 and §7) is solved pseudo-spectrally by :func:`mean_field`: the kernels'
Fourier coefficients are Bessel functions (:mod:`attnlib.circle`), so convolutions
are products of Fourier coefficients. Its linearisation at the uniform density gives
the growth rate of each mode (:func:`growth_rates`, :func:`dominant_mode`: the number
of clusters that emerge); :func:`sample_density` and :func:`circle_wasserstein`
compare particles with densities.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from .._deprecation import moved_arguments
from .._special import ive

from .._control import Adaptive
from .._results import Trajectory, trajectory
from .._stepping import (
    MAX_STEPS,
    Outcome,
    drive,
    output_times,
    planned_steps,
    rk_step,
)
from .._validation import (
    NORMALIZATIONS,
    USA_HINT,
    as_angles,
    as_circle_beta,
    as_numeric,
    check_bool,
    check_choice,
    check_int,
    check_real,
    check_rng,
    check_steps,
    exp_scale,
)
from ._angles import TWO_PI, bessel_modes, kernel_coefficients

__all__ = [
    "growth_rates",
    "dominant_mode",
    "spaced_state_eigenvalues",
    "mean_field",
    "DensityTrajectory",
    "sample_density",
    "circle_wasserstein",
]


# ------------------------------------------------------------- linear theory
@moved_arguments("k beta")
def growth_rates(k: Any, *, beta: float, normalization: str = "usa") -> np.ndarray:
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
    >>> growth_rates([1, 2], beta=0.0).tolist()
    [0.5, 0.0]
    """
    check_choice(normalization, "normalization", NORMALIZATIONS)
    beta = as_circle_beta(beta, normalization)
    k = np.asarray(k)
    if not np.issubdtype(k.dtype, np.integer) or np.any(k < 0):
        raise ValueError(f"k must be non-negative integers, got {k!r}")
    kf = k.astype(np.float64)
    if beta == 0.0:
        lam = np.where(k == 1, 0.5, 0.0)
    else:
        lam = kf * kf * ive(kf, beta) / beta  # scaled by e^{-beta}
        if normalization == "usa":
            lam = exp_scale(lam, beta, what="a USA growth rate", hint=USA_HINT)
        else:
            lam = lam / ive(0, beta)
    return lam


@moved_arguments("beta")
def dominant_mode(*, beta: float, kmax: int | None = None) -> int:
    r"""The fastest-growing mode :math:`\arg\max_{k\ge1} k^2 I_k(\beta)`.

    This is the number of clusters that emerge from near-uniform data ([GLPR] §7):
    3, 4, 6 for :math:`\beta` = 4, 9, 16.

    Examples
    --------
    >>> [dominant_mode(beta=b) for b in (4.0, 9.0, 16.0)]
    [3, 4, 6]
    """
    beta = check_real(beta, "beta", low=0.0)
    if kmax is None:
        kmax = int(2 * np.sqrt(2 * beta) + 10)
    k = np.arange(1, check_int(kmax, "kmax", low=1) + 1, dtype=np.float64)
    return int(k[np.argmax(k * k * ive(k, beta))])


@moved_arguments("n beta")
def spaced_state_eigenvalues(
    n: int, *, beta: float, normalization: str = "usa"
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
    >>> mu = spaced_state_eigenvalues(2, beta=1.0)
    >>> bool(np.isclose(mu[1], np.exp(-1.0)))
    True
    """
    n = check_int(n, "n", low=1)
    check_choice(normalization, "normalization", NORMALIZATIONS)
    beta = as_circle_beta(beta, normalization)
    phi = TWO_PI * np.arange(n) / n
    # f'(phi) e^{-beta} = e^{beta (cos - 1)} (cos - beta sin^2)
    fp = np.exp(beta * (np.cos(phi) - 1.0)) * (np.cos(phi) - beta * np.sin(phi) ** 2)
    m = np.arange(n)
    C = np.cos(np.outer(m, phi)) - 1.0
    mu = C @ fp
    if normalization == "usa":
        return exp_scale(mu, beta - np.log(n), what="a USA eigenvalue", hint=USA_HINT)
    return mu / np.sum(np.exp(beta * (np.cos(phi) - 1.0)))


# ----------------------------------------------------------------- mean field
#: The result of :func:`mean_field` is an :class:`attnlib.Trajectory` (the name of
#: earlier releases is kept).
DensityTrajectory = Trajectory


@moved_arguments("rho0 beta")
def mean_field(
    rho0: Any,
    *,
    beta: float,
    times: Any,
    normalization: str = "usa",
    grid_size: int = 256,
    dt: float = 0.05,
    cfl: float = 0.5,
    progress: bool = False,
    max_steps: int = MAX_STEPS,
) -> Trajectory:
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
    Trajectory
        ``states`` of shape ``(T, M)``: the density at the grid points (w.r.t.
        :math:`d\theta`) at ``times``; ``final`` is ``states[-1]``; in ``info``
        (read as attributes):

        * ``grid`` (ndarray, shape (M,)): Grid :math:`\theta_m = 2\pi m/M`.
        * ``mass`` (ndarray, shape (T,)): :math:`\int\rho\,d\theta` (spectrally exact:
          the mean of the grid values times :math:`2\pi`).
        * ``resolution`` (ndarray, shape (T,)): Largest Fourier coefficient beyond
          :math:`|k| > M/3`, relative to the mean: once it exceeds about ``1e-6`` the
          grid no longer resolves the peaks.

    References
    ----------
    [GLPR] §2 (mean field) and §7 (the circle).

    Examples
    --------
    >>> import numpy as np
    >>> sol = mean_field(lambda t: (1 + 0.1 * np.cos(2 * t)) / (2 * np.pi), beta=1.0,
    ...                  times=[0.0, 1.0], grid_size=64)
    >>> bool(abs(sol.info["mass"][-1] - 1.0) < 1e-12)
    True
    """
    check_choice(normalization, "normalization", NORMALIZATIONS)
    beta = as_circle_beta(beta, normalization)
    M = check_int(grid_size, "grid_size", low=16)
    if M % 2:
        raise ValueError(f"grid_size must be even, got {M}")
    dt = check_real(dt, "dt", low=0.0, strict_low=True)
    cfl = check_real(cfl, "cfl", low=0.0, high=2.0, strict_low=True)
    max_steps = check_int(max_steps, "max_steps", low=1)
    progress = check_bool(progress, "progress")
    grid = TWO_PI * np.arange(M) / M
    if callable(rho0):
        rho = as_numeric(rho0(grid), "rho0(grid)").astype(np.float64)
    else:
        rho = as_numeric(rho0, "rho0").astype(np.float64)
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
    times = output_times(times)

    kk = np.fft.fftfreq(M, 1.0 / M)  # integer wavenumbers
    ak = np.abs(kk).astype(int)
    Kc = min(M // 2, bessel_modes(beta=beta))
    a, b = kernel_coefficients(beta=beta, K=max(Kc, 1))
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
        what=f"mean_field (steps of at most dt = {dt:.3g} up to the last of times, "
        f"{times[-1]:g})",
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
            exp_scale(num, beta, what="the USA mean-field velocity", hint=USA_HINT)
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
    # the CFL condition; an output time within 1e-14 (relative) is reached
    control = Adaptive(dt, reach=1e-14)

    def cfl_bound(rhat):
        k1, v = rhs(rhat)  # the field at the state, reused by the step
        return cfl * dx / max(float(np.max(np.abs(v))), 1e-300), k1

    def advance(rhat, step):
        rhat = rk_step(lambda r: rhs(r)[0], rhat, step.h, "rk4", k1=step.aux)
        return rhat, step.end, False

    def observe(i, rhat):
        dens[i] = np.fft.ifft(rhat).real
        res[i] = float(np.max(np.abs(rhat[high])) / abs(rhat[0]))

    run = drive(
        advance,
        rhat,
        times,
        control=control,
        bound=cfl_bound,
        observe=observe,
        finite=lambda rhat: bool(np.all(np.isfinite(rhat))),
        max_steps=max_steps,
        progress=progress,
        name="mean_field",
        advice={
            Outcome.BUDGET_EXHAUSTED: "increase max_steps, dt or cfl, or use a "
            "smaller beta",
            Outcome.STEP_TOO_SMALL: "increase max_steps or dt, or use a smaller beta",
        },
    )
    n_steps = run.n_steps
    mass = dens.mean(axis=1) * TWO_PI
    return trajectory(
        series=("mass", "resolution"),
        times=times,
        states=dens,
        final=dens[-1],
        method="rk4",
        n_steps=n_steps,
        dt=float(dt),
        grid=grid,
        mass=mass,
        resolution=res,
    )


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
    rho = as_angles(rho, "rho", (1,))
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
    theta = as_angles(theta, ndims=(1,))
    rho = as_angles(rho, "rho", (1,))
    x, cdf = _fine_cdf(rho, 16 * rho.size)
    mid = 0.5 * (x[:-1] + x[1:])
    G = np.interp(mid, x, cdf)
    F = np.searchsorted(np.sort(np.mod(theta, TWO_PI)), mid, side="right") / theta.size
    D = F - G
    c = np.median(D)
    return float(np.mean(np.abs(D - c)) * TWO_PI)
