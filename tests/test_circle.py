"""Tests of attnlib.circle: angle dynamics, Bessel expansion, mean field, Kuramoto."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import iv

from attnlib import Model, energy
from attnlib.circle import (
    CircleModel,
    Kuramoto,
    angle_clusters,
    angle_velocity,
    bessel_modes,
    circle_wasserstein,
    dominant_mode,
    from_angles,
    growth_rates,
    kernel_coefficients,
    kuramoto_r,
    natural_frequencies,
    mean_field,
    order_parameter,
    sample_density,
    simulate_angles,
    spaced_state_eigenvalues,
    to_angles,
    torus_energy,
)

TWO_PI = 2 * np.pi


def _rho0(t):
    return (1 + 0.3 * np.cos(2 * t) + 0.2 * np.sin(3 * t)) / TWO_PI


def _jacobian(f, th, h=1e-6):
    n = th.size
    J = np.empty((n, n))
    for j in range(n):
        e = np.zeros(n)
        e[j] = h
        J[:, j] = (f(th + e) - f(th - e)) / (2 * h)
    return J


# ------------------------------------------------------------- angle dynamics
@pytest.mark.parametrize("normalization", ["usa", "sa"])
@pytest.mark.parametrize("beta", [0.0, 1.0, 4.0, 9.0, 30.0])
def test_angle_dynamics_equal_cartesian(normalization, beta):
    rng = np.random.default_rng(3)
    th = rng.uniform(-10, 10, 150)
    X = from_angles(th)
    V = Model(beta=beta, normalization=normalization).velocity(X)
    tangent = np.stack([-np.sin(th), np.cos(th)], axis=1)
    scale = max(1.0, float(np.max(np.abs(V))))
    for method in ("direct", "fourier"):
        w = angle_velocity(th, beta=beta, normalization=normalization, method=method)
        # the Cartesian field is tangent and its tangential component is dtheta/dt
        assert np.max(np.abs(V - w[:, None] * tangent)) < 1e-10 * scale


def test_to_from_angles_roundtrip():
    th = np.random.default_rng(0).uniform(-np.pi, np.pi, (3, 20))
    assert np.allclose(to_angles(from_angles(th)), th, atol=1e-14)
    assert np.allclose(np.linalg.norm(from_angles(th), axis=-1), 1.0)


# ------------------------------------------------------------ Bessel expansion
@pytest.mark.parametrize("beta", [0.0, 0.3, 1.0, 4.0, 16.0, 64.0])
def test_kernel_coefficients_reconstruct_kernels(beta):
    K = bessel_modes(beta=beta)
    a, b = kernel_coefficients(beta=beta, K=K)
    phi = np.linspace(-np.pi, np.pi, 101)
    k = np.arange(K + 1)
    g = np.cos(np.outer(phi, k)) @ a
    f = np.sin(np.outer(phi, k)) @ b
    assert np.max(np.abs(g - np.exp(beta * (np.cos(phi) - 1)))) < 1e-14
    assert np.max(np.abs(f - np.exp(beta * (np.cos(phi) - 1)) * np.sin(phi))) < 1e-14
    # b_k = (I_{k-1} - I_{k+1}) e^{-beta}, with the unscaled Bessel functions
    if 0 < beta <= 16:
        kk = np.arange(1, 6)
        assert np.allclose(
            b[1:6], (iv(kk - 1, beta) - iv(kk + 1, beta)) * np.exp(-beta)
        )


def test_bessel_modes_range_and_tails():
    Ks = [bessel_modes(beta=b) for b in (1.0, 4.0, 16.0, 64.0)]
    assert Ks == sorted(Ks)
    assert 12 <= Ks[0] <= 18 and 60 <= Ks[-1] <= 75  # K ~ 15-70 for beta = 1-64
    assert bessel_modes(beta=16.0, tol=1e-8) < bessel_modes(beta=16.0, tol=1e-16)
    fine = [bessel_modes(beta=b) for b in np.linspace(0.5, 100, 200)]
    assert np.all(np.diff(fine) >= 0) and np.all(np.diff(fine) <= 3)
    # the truncated field is within tol of the converged one
    th = np.random.default_rng(1).uniform(0, TWO_PI, 400)
    beta = 9.0
    for tol in (1e-4, 1e-8):
        K = bessel_modes(beta=beta, tol=tol)
        v = angle_velocity(th, beta=beta, method="fourier", modes=K, rtol=None)
        ref = angle_velocity(th, beta=beta, method="fourier", modes=K + 40, rtol=None)
        assert np.max(np.abs(v - ref)) <= tol * np.exp(beta)
        assert np.max(np.abs(v - ref)) > 1e-3 * tol * np.exp(beta)  # not over-resolved


@pytest.mark.parametrize("normalization", ["usa", "sa"])
@pytest.mark.parametrize("beta", [0.0, 0.5, 4.0, 16.0, 64.0])
def test_fourier_equals_direct(normalization, beta):
    rng = np.random.default_rng(7)
    uniform = rng.uniform(0, TWO_PI, 1000)
    clustered = np.concatenate(
        [c + 0.05 * rng.standard_normal(250) for c in (0.0, 1.5, 3.5, 5.0)]
    )
    for th in (uniform, clustered, rng.uniform(0, TWO_PI, (3, 200))):
        vd = angle_velocity(th, beta=beta, normalization=normalization, method="direct")
        vf = angle_velocity(
            th, beta=beta, normalization=normalization, method="fourier"
        )
        assert np.max(np.abs(vf - vd)) < 1e-12 * np.max(np.abs(vd))


def test_direct_is_blocked_and_circle_model():
    th = np.random.default_rng(2).uniform(0, TWO_PI, 700)
    v1 = angle_velocity(th, beta=2.0, method="direct", block=64)
    v2 = angle_velocity(th, beta=2.0, method="direct", block=700)
    assert np.allclose(v1, v2, rtol=0, atol=1e-13)
    m = CircleModel(beta=2.0)
    assert np.allclose(m(th), v1, atol=1e-12) and np.allclose(
        m.velocity(th), v1, atol=1e-12
    )
    assert m.modes == bessel_modes(beta=2.0)


def test_large_beta_sa_does_not_overflow():
    th = np.array([0.0, 0.1, 3.0])
    v = angle_velocity(th, beta=2000.0, normalization="sa")
    assert np.all(np.isfinite(v))
    with pytest.raises(ValueError, match="beta"):
        angle_velocity(th, beta=2000.0, normalization="usa")


# -------------------------------------------------------------------- energy
@pytest.mark.parametrize("beta", [0.5, 3.0, 20.0])
def test_torus_energy_and_gradient(beta):
    rng = np.random.default_rng(4)
    th = rng.uniform(0, TWO_PI, (2, 30))
    assert np.allclose(
        torus_energy(th, beta=beta), energy(from_angles(th), beta=beta), rtol=1e-12
    )
    n = th.shape[1]
    x = th[0]
    grad = np.array(
        [
            (torus_energy(x + h, beta=beta) - torus_energy(x - h, beta=beta)) / 2e-6
            for h in 1e-6 * np.eye(n)
        ]
    )
    v = angle_velocity(x, beta=beta)
    assert np.allclose(n * grad, v, rtol=1e-6, atol=1e-7 * np.max(np.abs(v)))


def test_energy_nondecreasing_along_usa():
    th0 = np.random.default_rng(5).uniform(0, TWO_PI, 60)
    tr = simulate_angles(
        CircleModel(beta=2.0),
        th0,
        times=np.linspace(0, 5, 26),
        dt=0.02,
        observables={"E": lambda t: torus_energy(t, beta=2.0)},
    )
    assert np.all(np.diff(tr.observables["E"]) >= -1e-13)


# -------------------------------------------------------------- linear theory
def test_dominant_mode_reference_values():
    assert [dominant_mode(beta=b) for b in (4.0, 9.0, 16.0)] == [3, 4, 6]
    assert dominant_mode(beta=0.5) == 1


def test_growth_rates_formula_and_sa_ratio():
    k = np.arange(1, 8)
    beta = 5.0
    assert np.allclose(
        growth_rates(k, beta=beta), k**2 * iv(k, beta) / beta, rtol=1e-12
    )
    sa = growth_rates(k, beta=beta, normalization="sa")
    assert np.allclose(sa, k**2 * iv(k, beta) / (beta * iv(0, beta)), rtol=1e-12)
    # small beta limit: lambda_1 -> 1/2
    assert abs(growth_rates(1, beta=1e-6) - 0.5) < 1e-6


@pytest.mark.parametrize("normalization", ["usa", "sa"])
def test_mean_field_growth_rate_matches_linearisation(normalization):
    beta, k, eps = 3.0, 2, 1e-7
    lam = float(growth_rates(k, beta=beta, normalization=normalization))
    T = 1.0 / lam
    sol = mean_field(
        lambda t: (1 + eps * np.cos(k * t)) / TWO_PI,
        beta=beta,
        times=[0.0, T],
        normalization=normalization,
        grid_size=64,
    )
    amp = np.abs(np.fft.rfft(sol.states, axis=1)[:, k])
    assert abs(np.log(amp[1] / amp[0]) / T - lam) < 1e-5 * lam


@pytest.mark.parametrize("normalization", ["usa", "sa"])
def test_spaced_state_eigenvalues_match_jacobian(normalization):
    n, beta = 7, 2.0
    th = TWO_PI * np.arange(n) / n
    f = lambda t: angle_velocity(t, beta=beta, normalization=normalization)  # noqa: E731
    ev = np.sort(np.linalg.eigvals(_jacobian(f, th)).real)
    mu = np.sort(spaced_state_eigenvalues(n, beta=beta, normalization=normalization))
    assert np.allclose(ev, mu, atol=1e-6)
    assert abs(mu[0]) < 1e-12 and np.all(mu[1:] > 0)  # unstable except the rotation
    # large n: the eigenvalues tend to the mean-field growth rates
    big = spaced_state_eigenvalues(400, beta=beta, normalization=normalization)
    k = np.arange(1, 6)
    assert np.allclose(
        big[k], growth_rates(k, beta=beta, normalization=normalization), rtol=1e-10
    )


@pytest.mark.parametrize("normalization,rate", [("usa", "exp"), ("sa", "one")])
def test_synchronised_state_is_stable(normalization, rate):
    n, beta = 6, 1.5
    th = np.full(n, 0.7)
    f = lambda t: angle_velocity(t, beta=beta, normalization=normalization)  # noqa: E731
    ev = np.sort(np.linalg.eigvalsh(0.5 * (_jacobian(f, th) + _jacobian(f, th).T)))
    expect = np.exp(beta) if rate == "exp" else 1.0
    assert abs(ev[-1]) < 1e-6 and np.allclose(ev[:-1], -expect, rtol=1e-6)


# beta = 16 takes steps of 5.6e-8 (tens of seconds): make test runs it, make
# test-fast the two others
@pytest.mark.parametrize("beta", [4.0, 9.0, pytest.param(16.0, marks=pytest.mark.slow)])
def test_mode_selection_cluster_count(beta):
    """Near-uniform data (equally spaced + 1e-10 noise) form argmax_k k^2 I_k clusters.

    At beta = 16 the rates of k = 5 and k = 6 differ by 1.7% only, so a minority of
    seeds form 5 clusters: the most frequent count is asserted there.
    """
    n, B = 360, 10
    rng = np.random.default_rng(0)
    th0 = TWO_PI * np.arange(n) / n + 1e-10 * rng.standard_normal((B, n))
    kstar = dominant_mode(beta=beta)
    T = (np.log(1e12) + 4) / float(growth_rates(kstar, beta=beta))
    tr = simulate_angles(CircleModel(beta=beta), th0, t_final=T, dt=0.5 * np.exp(-beta))
    counts = np.array(
        [angle_clusters(f, gap=0.2, min_fraction=0.02).count for f in tr.final]
    )
    if beta < 10:
        assert np.all(counts == kstar)
    else:
        assert np.argmax(np.bincount(counts)) == kstar and set(counts) <= {
            kstar - 1,
            kstar,
        }


# ----------------------------------------------------------------- mean field
@pytest.mark.parametrize("normalization", ["usa", "sa"])
def test_mean_field_mass_and_particles(normalization):
    beta = 3.0
    T = [0.0, 0.3] if normalization == "usa" else [0.0, 2.0]
    sol = mean_field(
        _rho0, beta=beta, times=T, normalization=normalization, grid_size=512
    )
    assert np.max(np.abs(sol.info["mass"] - 1.0)) < 1e-12
    assert sol.info["resolution"][-1] < 1e-6
    model = CircleModel(beta=beta, normalization=normalization)
    # deterministic quantiles: W1 = O(1/n)
    errs = []
    for n in (1000, 10000):
        tr = simulate_angles(model, sample_density(sol.states[0], n), times=T, dt=0.02)
        errs.append(circle_wasserstein(tr.final, sol.states[-1]))
    assert errs[1] < 2e-4 and errs[0] / errs[1] > 5
    # ... and their histogram equals the cell averages of the density
    h, _ = np.histogram(tr.final, bins=32, range=(0, TWO_PI), density=True)
    cells = sol.states[-1].reshape(32, -1).mean(axis=1)
    assert np.max(np.abs(h - cells)) < 0.02 * np.max(cells)
    # i.i.d. samples: W1 to the density decreases like n^{-1/2} (amplified in time)
    w1 = []
    for n in (2000, 20000):
        th0 = sample_density(sol.states[0], n, rng=11)
        tr = simulate_angles(model, th0, times=T, dt=0.02)
        w1.append(circle_wasserstein(tr.final, sol.states[-1]))
    assert w1[1] < 0.03 and w1[1] < w1[0] / 2


def test_mean_field_bad_inputs():
    with pytest.raises(ValueError, match="rho0"):
        mean_field(lambda t: 2 * np.ones_like(t), beta=1.0, times=[0, 1])
    with pytest.raises(ValueError, match="grid_size"):
        mean_field(_rho0, beta=1.0, times=[0, 1], grid_size=63)
    with pytest.raises(ValueError, match="rho0"):
        mean_field(np.ones(10), beta=1.0, times=[0, 1], grid_size=64)


def test_sample_density_and_wasserstein():
    rho = _rho0(TWO_PI * np.arange(128) / 128)
    th = sample_density(rho, 20000, rng=0)
    h, _ = np.histogram(th, bins=16, range=(0, TWO_PI), density=True)
    assert np.max(np.abs(h - rho.reshape(16, -1).mean(1))) < 0.02  # ~5 sigma
    # W1 between the uniform density and a point mass at 0 is pi/2
    assert (
        abs(circle_wasserstein(np.zeros(10), np.full(128, 1 / TWO_PI)) - np.pi / 2)
        < 1e-3
    )
    # rotation invariance of the circle distance
    a = circle_wasserstein(th, rho)
    assert a < 0.03


# ------------------------------------------------------------------ Kuramoto
def test_kuramoto_critical_coupling_lorentzian():
    """r_inf = sqrt(1 - 2 gamma / K), n = 2000, quantile frequencies; tolerance 0.03."""
    gamma, n = 0.5, 2000
    K = np.array([0.5, 1.5, 2.0, 3.0])
    omega = natural_frequencies(n, scale=gamma)
    th0 = np.random.default_rng(0).uniform(0, TWO_PI, (K.size, n))
    tr = simulate_angles(
        Kuramoto(omega, K),
        th0,
        times=np.linspace(0, 60, 61),
        dt=0.05,
        save_states=False,
        observables={"r": lambda t: order_parameter(t)[0]},
    )
    r = tr.observables["r"][30:].mean(axis=0)
    theory = kuramoto_r(K, gamma)
    assert np.all(np.abs(r[1:] - theory[1:]) < 0.03)
    assert r[0] < 0.1  # incoherent below K_c = 2 gamma = 1
    Kc = np.mean(K[1:] * (1 - r[1:] ** 2))  # r^2 = 1 - K_c / K
    assert abs(Kc - 2 * gamma) < 0.05


def test_kuramoto_equals_circle_model_at_beta_zero():
    th = np.random.default_rng(1).uniform(0, TWO_PI, 50)
    assert np.allclose(
        Kuramoto(np.zeros(50), 1.0)(th), angle_velocity(th, beta=0.0), atol=1e-14
    )


def test_natural_frequencies_lorentzian_quantiles_and_sample():
    w = natural_frequencies(4001, scale=0.7)
    assert abs(np.median(w)) < 1e-12
    assert np.allclose(np.quantile(w, [0.25, 0.75]), [-0.7, 0.7], rtol=2e-3)
    w2 = natural_frequencies(10, scale=1.0, rng=3)
    assert np.array_equal(w2, natural_frequencies(10, scale=1.0, rng=3))
    # the numbers of the former lorentzian_frequencies, bit for bit
    u = (np.arange(1, 8) - 0.5) / 7
    assert np.array_equal(
        natural_frequencies(7, scale=0.3), 0.3 * np.tan(np.pi * (u - 0.5))
    )
    u = np.random.default_rng(5).uniform(size=7)
    assert np.array_equal(
        natural_frequencies(7, law="lorentzian", scale=0.3, rng=5),
        0.3 * np.tan(np.pi * (u - 0.5)),
    )


def test_natural_frequencies_gaussian():
    s = 0.8
    w = natural_frequencies(4001, law="gaussian", scale=s)
    assert np.all(np.diff(w) > 0) and abs(np.median(w)) < 1e-12
    assert np.allclose(w, -w[::-1], atol=1e-12)  # symmetric quantiles
    # quartiles of N(0, s^2) are -+ 0.6744897501960817 s
    assert np.allclose(
        np.quantile(w, [0.25, 0.75]), [-0.67449 * s, 0.67449 * s], rtol=1e-3
    )
    assert abs(w.std() / s - 1) < 2e-3
    g = natural_frequencies(20000, law="gaussian", scale=s, rng=1)
    assert np.array_equal(g, natural_frequencies(20000, law="gaussian", scale=s, rng=1))
    assert abs(g.mean()) < 4 * s / np.sqrt(2e4) and abs(g.std() / s - 1) < 0.02
    assert np.all(natural_frequencies(5, law="gaussian", scale=0.0) == 0)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"n": 0}, ValueError, "n must be an integer >= 1"),
        ({"n": 2.5}, TypeError, "n must be an integer"),
        ({"n": 4, "law": "cauchy"}, ValueError, "law must be one of"),
        ({"n": 4, "scale": -1.0}, ValueError, "scale"),
        ({"n": 4, "scale": np.nan}, ValueError, "scale"),
        ({"n": 4, "rng": "seed"}, TypeError, "rng must be"),
    ],
)
def test_natural_frequencies_rejects_bad_input(kwargs, error, match):
    with pytest.raises(error, match=match):
        natural_frequencies(**kwargs)


def test_retired_lorentzian_frequencies_gives_the_same_numbers():
    import attnlib.circle as circle

    with pytest.warns(DeprecationWarning, match="natural_frequencies"):
        old = circle.lorentzian_frequencies
    assert np.array_equal(old(9, 0.4), natural_frequencies(9, scale=0.4))
    assert np.array_equal(old(9, 0.4, rng=2), natural_frequencies(9, scale=0.4, rng=2))


def _gaussian_self_consistent_r(K, s):
    """The r > 0 root of 1 = K int_{-pi/2}^{pi/2} cos^2 t g(K r sin t) dt for
    g = N(0, s^2), or 0 when there is none (K <= K_c = sqrt(8/pi) s)."""
    from scipy.optimize import brentq

    t = np.linspace(-np.pi / 2, np.pi / 2, 2001)

    def f(r):
        g = np.exp(-((K * r * np.sin(t)) ** 2) / (2 * s**2)) / (s * np.sqrt(2 * np.pi))
        return K * np.trapezoid(np.cos(t) ** 2 * g, t) - 1

    return brentq(f, 1e-9, 1.0) if f(1e-9) > 0 else 0.0


def test_kuramoto_critical_coupling_gaussian():
    """Gaussian frequencies (quantiles, s = 0.5): incoherent below K_c = sqrt(8/pi) s,
    r on the self-consistent branch above, n = 2000; tolerance 0.02 (a width 10%
    larger moves r at K = 1 by 0.13)."""
    s, n = 0.5, 2000
    Kc = np.sqrt(8 / np.pi) * s
    K = np.array([0.6, 1.0, 1.4, 2.0])
    omega = natural_frequencies(n, law="gaussian", scale=s)
    th0 = np.random.default_rng(0).uniform(0, TWO_PI, (K.size, n))
    tr = simulate_angles(
        Kuramoto(omega, K),
        th0,
        times=np.linspace(0, 40, 41),
        dt=0.1,
        save_states=False,
        observables={"r": lambda t: order_parameter(t)[0]},
    )
    r = tr.observables["r"][20:].mean(axis=0)
    theory = np.array([_gaussian_self_consistent_r(k, s) for k in K])
    assert theory[0] == 0 and np.all(theory[1:] > 0) and K[0] < Kc < K[1]
    assert r[0] < 0.1
    assert np.all(np.abs(r[1:] - theory[1:]) < 0.02)


def test_order_parameter_and_clusters():
    r, psi = order_parameter(np.array([0.3, 0.3, 0.3]))
    assert np.isclose(r, 1) and np.isclose(psi, 0.3)
    r3, _ = order_parameter(TWO_PI * np.arange(3) / 3, k=3)
    r1, _ = order_parameter(TWO_PI * np.arange(3) / 3)
    assert np.isclose(r3, 1) and r1 < 1e-12
    c = angle_clusters(
        np.array([6.25, 0.02, 3.0, 3.05, 1.5]), gap=0.2, min_fraction=0.3
    )
    assert c.count == 2 and sorted(c.masses.tolist()) == [2, 2]
    assert c.labels[4] == -1 and c.labels[0] == c.labels[1]


# -------------------------------------------------------------- integration
def test_rk4_order():
    th0 = np.array([0.0, 0.5, 2.0, 4.0])
    m = CircleModel(beta=1.0)
    ref = simulate_angles(m, th0, t_final=2.0, dt=0.005).final
    e1 = np.abs(simulate_angles(m, th0, t_final=2.0, dt=0.2).final - ref).max()
    e2 = np.abs(simulate_angles(m, th0, t_final=2.0, dt=0.1).final - ref).max()
    assert 12 < e1 / e2 < 20


# -------------------------------------------------------------- bad inputs
def test_bad_inputs():
    with pytest.raises(ValueError, match="theta"):
        angle_velocity(np.zeros((2, 2, 2)), beta=1.0)
    with pytest.raises(ValueError, match="theta"):
        angle_velocity([0.0, np.nan], beta=1.0)
    with pytest.raises(TypeError, match="theta"):
        angle_velocity("abc", beta=1.0)
    with pytest.raises(ValueError, match="beta"):
        angle_velocity([0.0], beta=-1.0)
    with pytest.raises(ValueError, match="normalization"):
        angle_velocity([0.0], beta=1.0, normalization="xx")
    with pytest.raises(ValueError, match="method"):
        angle_velocity([0.0], beta=1.0, method="fast")
    with pytest.raises(ValueError, match="tol"):
        bessel_modes(beta=1.0, tol=0.0)
    with pytest.raises(ValueError, match="X"):
        to_angles(np.ones((3, 3)))
    with pytest.raises(ValueError, match="omega"):
        Kuramoto(np.zeros((2, 2)), 1.0)
    with pytest.raises(ValueError, match="coupling"):
        Kuramoto(np.zeros(3), -1.0)
    with pytest.raises(ValueError, match="gap"):
        angle_clusters([0.0], gap=0.0)
    with pytest.raises(TypeError, match="model"):
        simulate_angles(3, [0.0], t_final=1.0)
    with pytest.raises(ValueError, match="times"):
        simulate_angles(CircleModel(), [0.0])
    with pytest.raises(ValueError, match="k"):
        growth_rates(1.5, beta=1.0)
    with pytest.raises(ValueError, match="beta"):
        torus_energy([0.0], beta=0.0)


# ------------------------------------------------------- sympy vs numerics
def test_sympy_spaced_state_and_linear_rate():
    import sympy as sp

    b = sp.symbols(r"\beta", positive=True)
    T = sp.symbols("t1:4", real=True)

    def f(d):
        return sp.exp(b * sp.cos(d)) * sp.sin(d)

    V = sp.Matrix([-sum(f(T[i] - T[j]) for j in range(3)) / 3 for i in range(3)])
    J = V.jacobian(T).subs({T[0]: 0, T[1]: 2 * sp.pi / 3, T[2]: 4 * sp.pi / 3})
    for beta in (0.5, 2.0, 7.0):
        ev = np.sort(np.linalg.eigvals(np.array(J.subs(b, beta).evalf(), float)).real)
        closed = (3 * beta + 2) * np.exp(-beta / 2) / 4
        assert np.allclose(ev, [0.0, closed, closed], atol=1e-12)
        assert np.allclose(
            np.sort(spaced_state_eigenvalues(3, beta=beta)), ev, atol=1e-12
        )
    # linear rate: -d/dtheta (rho_0 v) for rho = 1/(2 pi) + eps cos(k theta)
    k = sp.symbols("k", integer=True, positive=True)
    th, ph = sp.symbols(r"\theta \varphi", real=True)
    integrand = sp.expand(sp.expand_trig(sp.sin(k * th - k * ph)) * sp.cos(k * ph))
    v = -2 * k * sp.besseli(k, b) / b * sp.integrate(integrand, (ph, 0, 2 * sp.pi))
    lam = sp.simplify(-sp.diff(v / (2 * sp.pi), th) / sp.cos(k * th))
    for kk, beta in ((1, 0.7), (3, 4.0), (6, 16.0)):
        assert np.isclose(
            float(lam.subs({k: kk, b: beta})), growth_rates(kk, beta=beta)
        )
