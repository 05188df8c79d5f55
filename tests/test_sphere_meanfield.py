"""The spectral mean-field solver on the sphere S^2 (attnlib._sphere_meanfield).

Checked against mathematics: the transforms are exact for band-limited functions,
the linear growth rates are those of Funk-Hecke, the scheme converges (order 4 in
dt, spectrally in lmax), the mass is conserved, the particles of ``simulate`` follow
the density up to Monte Carlo errors, a thin equatorial band follows the circle
solver, and noise above the threshold returns the density to uniform at the
linear rate.
"""

import re

import numpy as np
import pytest
from scipy.special import gammaln

from attnlib import Model, sample_sphere, simulate
from attnlib._sphere_meanfield import (
    _degree_norms,
    _grid,
    _harmonics,
    _transport,
    sphere_density,
    sphere_growth_rates,
    sphere_mean_field,
)
from attnlib.circle import mean_field
from attnlib.frontiers import funk_hecke
from attnlib.frontiers._noise import noisy_rates

FOUR_PI = 4 * np.pi


def _random_coefficients(L, rng):
    """Coefficients of a random real band-limited function (m <= l, a_l0 real)."""
    a = rng.standard_normal((L + 1, L + 1)) + 1j * rng.standard_normal((L + 1, L + 1))
    a[:, 0] = a[:, 0].real
    return np.where(np.tril(np.ones((L + 1, L + 1), bool)), a, 0.0)


def _normalised(f, L=48):
    """``f`` divided by its integral (Gauss-Legendre quadrature of degree 3L)."""
    g = _grid(L)
    Z = np.sum(g.weights() * f(g.points().reshape(-1, 3)).reshape(g.shape))
    return lambda x: f(x) / Z


_E = np.array([0.3, 0.2, 0.93]) / np.linalg.norm([0.3, 0.2, 0.93])
#: a smooth density with no symmetry, of mass one
_RHO = _normalised(lambda x: np.exp(x @ _E) * (1 + 0.5 * x[:, 0] * x[:, 1]))


# -------------------------------------------------------------- transforms
@pytest.mark.parametrize("L", [2, 5, 16, 33])
def test_transforms_round_trip_exactly(L, rng):
    g = _grid(L)
    a = _random_coefficients(L, rng)
    f = g.synth(a)
    assert f.shape == (g.nlat, g.nlon) and np.isrealobj(f)
    assert np.max(np.abs(g.analyse(f) - a)) < 1e-13 * np.max(np.abs(a)) * L
    # and the grid values are the sum of the harmonics at the grid points
    vals = sphere_density(a, g.points().reshape(-1, 3)).reshape(g.shape)
    assert np.max(np.abs(vals - f)) < 1e-12 * np.max(np.abs(f))


def test_harmonics_are_orthonormal_and_products_are_dealiased(rng):
    L = 10
    g = _grid(L)
    Y = _harmonics(L, g.points().reshape(-1, 3))
    w = g.weights().ravel()
    mask = np.tril(np.ones((L + 1, L + 1), bool))
    Yv = Y[mask]  # (pairs, n)
    gram = (Yv * w) @ Yv.conj().T
    assert np.max(np.abs(gram - np.eye(Yv.shape[0]))) < 1e-13
    # Y_10 = sqrt(3 / 4 pi) z, Y_11 = -sqrt(3 / 8 pi) (x + iy): Condon-Shortley
    x = np.array([[0.6, 0.0, 0.8], [0.0, 1.0, 0.0]])
    Y1 = _harmonics(1, x)
    assert np.allclose(Y1[1, 0], np.sqrt(3 / FOUR_PI) * x[:, 2])
    assert np.allclose(Y1[1, 1], -np.sqrt(3 / (8 * np.pi)) * (x[:, 0] + 1j * x[:, 1]))
    # the product of two degree-L functions is analysed on the degree-L grid as on
    # a grid of twice the degree (the 3/2 rule)
    a, b = _random_coefficients(L, rng), _random_coefficients(L, rng)
    g2 = _grid(2 * L)
    pad = np.zeros((2 * L + 1, 2 * L + 1), complex)
    a2, b2 = pad.copy(), pad.copy()
    a2[: L + 1, : L + 1], b2[: L + 1, : L + 1] = a, b
    fine = g2.analyse(g2.synth(a2) * g2.synth(b2))
    coarse = g.analyse(g.synth(a) * g.synth(b))
    assert np.max(np.abs(coarse - fine[: L + 1, : L + 1])) < 1e-12 * np.max(
        np.abs(fine)
    )


# ------------------------------------------------------------- linear theory
def test_growth_rates_are_funk_hecke():
    ell = np.arange(8)
    for beta in (0.3, 2.0, 9.0):
        r = sphere_growth_rates(ell, beta=beta)
        c = funk_hecke(ell, beta=beta, d=3)  # i_l(beta)
        assert np.allclose(r, ell * (ell + 1) * c / beta, rtol=1e-13)
        for sigma in (0.02, 0.85):  # the library's noise intensity: sigma Delta
            assert np.allclose(
                sphere_growth_rates(ell, beta=beta, sigma=sigma),
                noisy_rates(ell, beta=beta, d=3, sigma=sigma, normalization="usa"),
                rtol=1e-13,
                atol=1e-14,
            )
    # closed form: i_1(b) = (b cosh b - sinh b) / b^2
    b = 2.0
    assert np.isclose(
        sphere_growth_rates(1, beta=b), 2 * (b * np.cosh(b) - np.sinh(b)) / b**3
    )
    # beta -> 0: 2/3 for l = 1, 0 above; the limit is continuous
    assert np.allclose(sphere_growth_rates([0, 1, 2], beta=0.0), [0, 2 / 3, 0])
    assert np.allclose(sphere_growth_rates([1, 2], beta=1e-7), [2 / 3, 0], atol=1e-6)
    # where the Bessel function underflows (beta < 1e-6, a series): no jump
    tiny = sphere_growth_rates([1, 2, 3], beta=1e-300)
    assert np.isclose(tiny[0], 2 / 3, rtol=1e-14) and np.isclose(tiny[1], 4e-301)
    below, above = (
        sphere_growth_rates([1, 2, 3], beta=b) for b in (1e-6 - 1e-15, 1e-6)
    )
    assert np.allclose(below, above, rtol=1e-12)


@pytest.mark.parametrize(
    "beta, ell, m, sigma", [(3.0, 2, 0, 0.0), (3.0, 3, 2, 0.0), (1.0, 1, 1, 1.125)]
)
def test_linear_growth_at_the_rate_of_the_linearisation(beta, ell, m, sigma):
    """eps Y_lm on the uniform density grows like exp(r_l t); RK4 has order 4."""
    eps = 1e-9  # nonlinear terms: relative O(eps)
    r = float(sphere_growth_rates(ell, beta=beta, sigma=sigma))
    T = 1.0 / abs(r)

    def rho0(x):
        return 1 / FOUR_PI + eps * _harmonics(ell, x)[ell, m].real

    def rate_error(**kw):
        sol = sphere_mean_field(
            rho0, beta=beta, lmax=8, times=[0, T], sigma=sigma, **kw
        )
        c = np.abs(sol.info["coefficients"][:, ell, m])
        return abs(np.log(c[1] / c[0]) / T - r) / abs(r)

    assert rate_error() < 1e-5  # adaptive steps
    errs = np.array([rate_error(dt=T / k) for k in (2, 4, 8)])
    assert errs[-1] < 1e-5
    order = np.log2(errs[:-1] / errs[1:])
    assert np.all(order > 3.4) and np.all(order < 4.6), (errs, order)


def test_spectral_convergence_in_lmax():
    """A nonlinear run: low-degree coefficients converge geometrically in lmax."""
    times = [0.0, 0.8]

    def low(L):
        sol = sphere_mean_field(_RHO, beta=1.0, lmax=L, times=times, dt=0.02)
        return sol.info["coefficients"][-1, :5, :5]

    ref = low(32)
    errs = np.array([np.max(np.abs(low(L) - ref)) for L in (8, 12, 16)])
    assert errs[0] > 1e-8  # the coarsest grid is visibly truncated ...
    assert errs[1] < errs[0] / 100 and errs[2] < errs[1] / 20  # ... then geometric
    assert errs[2] < 1e-12


# --------------------------------------------------------------- invariants
def test_mass_is_conserved_to_rounding():
    L = 32
    sol = sphere_mean_field(_RHO, beta=2.0, lmax=L, times=np.linspace(0, 0.5, 3))
    assert sol.info["resolution"][-1] < 1e-3  # a strongly nonlinear run, resolved
    assert np.max(np.abs(sol.info["mass"] - 1.0)) < 1e-13
    assert np.allclose(
        sol.info["coefficients"][:, 0, 0], 1 / np.sqrt(FOUR_PI), 0, 1e-15
    )
    # the states integrate to one with an independent quadrature (degree 3 * 40)
    g = _grid(40)
    vals = sphere_density(sol.info["coefficients"], g.points().reshape(-1, 3))
    assert np.max(np.abs(vals @ g.weights().ravel() - 1.0)) < 1e-13
    # the transport term conserves mass by itself (Green's identity, exact
    # quadrature): its degree-0 entry is round-off before it is pinned to zero
    grid = _grid(L)
    ell = np.arange(L + 1)
    gker = FOUR_PI * sphere_growth_rates(ell, beta=2.0) / np.maximum(ell * (ell + 1), 1)
    raw = _transport(grid, gker[:, None])(sol.info["coefficients"][-1], pin=False)
    assert abs(raw[0, 0]) < 1e-13 * np.max(np.abs(raw))
    assert np.max(np.abs(raw[1:])) > 1e-2  # and the rest is not


def test_rotation_about_the_axis_commutes_with_the_flow():
    """Rotating the data by alpha about the z-axis rotates the solution (the
    coefficients of order m are multiplied by e^{-i m alpha})."""
    alpha = 0.7
    c, s = np.cos(alpha), np.sin(alpha)
    R = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])
    sol = sphere_mean_field(_RHO, beta=1.5, lmax=16, times=[0, 0.5])
    rot = sphere_mean_field(lambda x: _RHO(x @ R), beta=1.5, lmax=16, times=[0, 0.5])
    m = np.arange(17)
    a, b = sol.info["coefficients"][-1], rot.info["coefficients"][-1]
    assert np.max(np.abs(b - a * np.exp(-1j * m * alpha))) < 1e-12
    assert np.max(np.abs(b - a)) > 1e-2


# ---------------------------------------------------------------- particles
def _sample(rho, N, rng, top):
    """N i.i.d. points of the density ``rho`` (rejection from uniform, rho <= top)."""
    out, have = [], 0
    while have < N:
        X = sample_sphere(4 * N, 3, rng=rng)
        X = X[rng.uniform(size=4 * N) * top < rho(X)]
        out.append(X)
        have += len(X)
    return np.concatenate(out)[:N]


def test_particles_follow_the_density():
    """N = 20000 USA particles sampled from rho0 (simulate, RK4) vs the solver:
    the harmonic moments mean_i conj(Y_lm(x_i)) agree with a_lm(t) to Monte Carlo
    accuracy. The standard deviation of a moment is at most sqrt(max rho / N)
    (|Y_lm|^2 integrates to one); the flow may amplify it by a bounded factor over
    t <= 0.8, so the errors are compared with 6 / sqrt(4 pi N).
    """
    beta, N, L = 1.0, 20000, 3
    times = [0.0, 0.4, 0.8]
    sol = sphere_mean_field(_RHO, beta=beta, lmax=32, times=times)
    assert sol.info["resolution"][-1] < 1e-4
    rng = np.random.default_rng(5)
    top = 1.6 * float(_RHO(_E[None])[0])
    X0 = _sample(_RHO, N, rng, top)
    tr = simulate(Model(beta=beta, normalization="usa"), X0, times=times, dt=0.2)
    mask = np.tril(np.ones((L + 1, L + 1), bool))
    moments = np.array([_harmonics(L, X).conj().mean(axis=-1) for X in tr.states])
    ref = sol.info["coefficients"][:, : L + 1, : L + 1]
    err = np.abs(moments - ref)[:, mask].max(axis=1)
    scale = 1 / np.sqrt(FOUR_PI * N)
    assert np.all(err < 6 * scale), err / scale
    # the moments move by much more than the errors: the comparison has teeth
    assert np.abs(ref[-1] - ref[0])[mask].max() > 5 * 6 * scale


# ----------------------------------------------------------------- equator
def _band(p):
    """Density (1 - z^2)^p (1 + 0.6 cos 2phi + 0.3 sin 4phi) of mass one: a band of
    width about eps = (2p + 1)^(-1/2) about the equator (degree 2p)."""
    Z = 2 * np.pi * np.exp(0.5 * np.log(np.pi) + gammaln(p + 1) - gammaln(p + 1.5))

    def rho(x):
        phi = np.arctan2(x[:, 1], x[:, 0])
        return (
            (1 - x[:, 2] ** 2) ** p
            * (1 + 0.6 * np.cos(2 * phi) + 0.3 * np.sin(4 * phi))
            / Z
        )

    return rho


def test_equatorial_band_follows_the_circle():
    """The azimuthal marginal m(phi) = int rho dz (dA = dz dphi) of a band of width
    eps follows the circle solver (USA, density w.r.t. dphi, the same time) up to
    O(eps^2): <x, y> = cos(phi - phi') + O(z^2 + z'^2 + z z')."""
    beta, times = 1.0, [0.0, 0.5, 1.0]
    errs, moved = [], []
    for p, L in ((4, 32), (8, 40), (16, 56)):
        sol = sphere_mean_field(_band(p), beta=beta, lmax=L, times=times)
        g = _grid(L)
        marg = np.einsum("tjk,j->tk", sol.states, g.wz)
        circ = mean_field(marg[0], beta=beta, times=times, grid_size=g.nlon)
        errs.append(np.max(np.abs(circ.states[-1] - marg[-1])) * (2 * p + 1))
        moved.append(np.max(np.abs(marg[-1] - marg[0])))
    # error / eps^2: about constant (0.13); the truncation is not what it measures
    # (lmax = 48 and 80 instead of 32 and 56 change the errors by under 1%)
    errs = np.array(errs)
    assert np.all(errs < 0.2) and np.all(errs > 0.05), errs
    assert np.max(errs) / np.min(errs) < 1.3
    assert min(moved) > 0.1  # the marginal moves: the band is not at rest


# -------------------------------------------------------------------- noise
def test_noise_above_the_threshold_returns_to_uniform_at_the_linear_rate():
    """beta = 1, sigma = 0.5 > i_1(1) = 1/e, every degree decays; the
    slowest, l = 1, at r_1 = 2 (1/e - 1/2), with a nonlinear correction O(|a_1|^2)."""
    beta, sigma = 1.0, 0.5
    r1 = float(sphere_growth_rates(1, beta=beta, sigma=sigma))
    assert np.isclose(r1, 2 * (np.exp(-1) - 0.5))
    kap = 2.0

    def vmf(x):  # von Mises-Fisher density about _E
        return np.exp(kap * (x @ _E - 1)) * kap / (2 * np.pi * (1 - np.exp(-2 * kap)))

    times = np.arange(0.0, 12.5, 2.0)
    sol = sphere_mean_field(vmf, beta=beta, lmax=16, times=times, sigma=sigma)
    n1 = np.array([_degree_norms(c)[1] for c in sol.info["coefficients"]])
    rate = np.diff(np.log(n1)) / np.diff(times)
    rel = np.abs(rate / r1 - 1)
    assert rel[-1] < 2e-3 and np.all(np.diff(rel) < 0), rel
    dev = np.max(np.abs(sol.states - 1 / FOUR_PI), axis=(1, 2))
    assert np.all(np.diff(dev) < 0) and dev[-1] < 0.1 / FOUR_PI
    assert np.max(np.abs(sol.info["mass"] - 1)) < 1e-13


def test_noise_below_the_threshold_lets_the_mode_grow():
    # sigma < 1/e: degree 1 grows at r_1 > 0 from near-uniform data
    r1 = float(sphere_growth_rates(1, beta=1.0, sigma=0.18))
    assert r1 > 0
    sol = sphere_mean_field(
        lambda x: (1 + 1e-6 * x[:, 0]) / FOUR_PI,
        beta=1.0,
        lmax=8,
        sigma=0.18,
        times=[0.0, 1.0 / r1],
    )
    c = np.abs(sol.info["coefficients"][:, 1, 1])
    assert abs(np.log(c[1] / c[0]) - 1.0) < 1e-4


# --------------------------------------------------------------- bad input
def test_bad_inputs_are_named():
    ok = dict(beta=1.0, lmax=8, t_final=0.1)
    with pytest.raises(ValueError, match="mass one"):
        sphere_mean_field(lambda x: np.ones(len(x)), **ok)
    with pytest.raises(ValueError, match="rho0 must contain only finite"):
        sphere_mean_field(np.full((13, 26), np.nan), **ok)
    with pytest.raises(ValueError, match=r"rho0 .*shape \(13, 26\)"):
        sphere_mean_field(np.ones((10, 10)), **ok)
    with pytest.raises(ValueError, match="one value per point"):
        sphere_mean_field(lambda x: np.ones(3), **ok)
    with pytest.raises(ValueError, match="rho0\\(points\\) must contain only finite"):
        sphere_mean_field(lambda x: np.full(len(x), np.inf), **ok)
    with pytest.raises(TypeError, match="rho0"):
        sphere_mean_field("uniform", **ok)
    with pytest.raises(ValueError, match="sigma must be >= 0"):
        sphere_mean_field(_RHO, sigma=-0.1, **ok)
    with pytest.raises(ValueError, match="beta must be >= 0"):
        sphere_mean_field(_RHO, beta=-1.0, lmax=8, t_final=0.1)
    with pytest.raises(ValueError, match="beta must be finite"):
        sphere_mean_field(_RHO, beta=np.inf, lmax=8, t_final=0.1)
    with pytest.raises(ValueError, match="lmax must be an integer >= 2"):
        sphere_mean_field(_RHO, beta=1.0, lmax=1, t_final=0.1)
    with pytest.raises(TypeError, match="lmax"):
        sphere_mean_field(_RHO, beta=1.0, lmax=8.5, t_final=0.1)
    with pytest.raises(ValueError, match="lmax=8 is too small for beta=16"):
        sphere_mean_field(_RHO, beta=16.0, lmax=8, t_final=0.1)
    with pytest.raises(ValueError, match="dt must be > 0"):
        sphere_mean_field(_RHO, dt=0.0, **ok)
    with pytest.raises(ValueError, match="cfl"):
        sphere_mean_field(_RHO, cfl=3.0, **ok)
    with pytest.raises(ValueError, match="exactly one of times and t_final"):
        sphere_mean_field(_RHO, beta=1.0, lmax=8)
    with pytest.raises(ValueError, match="max_steps"):
        sphere_mean_field(_RHO, beta=1.0, lmax=8, t_final=10.0, dt=0.01, max_steps=10)
    with pytest.raises(FloatingPointError, match="smaller dt"):
        sphere_mean_field(_RHO, beta=3.0, lmax=32, t_final=5.0, dt=0.5)
    with pytest.raises(ValueError, match="sigma"):
        sphere_growth_rates(1, beta=1.0, sigma=-1.0)
    with pytest.raises(ValueError, match="ell"):
        sphere_growth_rates(1.5, beta=1.0)
    with pytest.raises(ValueError, match="points must have shape"):
        sphere_density(np.zeros((3, 3)), np.ones((2, 2)))
    with pytest.raises(ValueError, match="unit vectors"):
        sphere_density(np.zeros((3, 3)), np.ones((2, 3)))
    with pytest.raises(ValueError, match="coefficients must have shape"):
        sphere_density(np.zeros(3), np.eye(3))


def test_lmax_check_names_the_degree_needed():
    with pytest.raises(ValueError, match=r"use lmax >= (\d+)") as info:
        sphere_mean_field(_RHO, beta=16.0, lmax=8, t_final=0.1)
    need = int(re.search(r"use lmax >= (\d+)", str(info.value)).group(1))
    sphere_mean_field(
        lambda x: np.full(len(x), 1 / FOUR_PI), beta=16.0, lmax=need, t_final=0.0
    )
    with pytest.raises(ValueError, match="too small"):
        sphere_mean_field(_RHO, beta=16.0, lmax=need - 1, t_final=0.1)
