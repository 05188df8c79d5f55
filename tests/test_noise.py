"""Brownian noise on the sphere: Funk-Hecke, the threshold, Euler-Maruyama."""

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.special import eval_gegenbauer, gamma

from attnlib import Model, sample_sphere, simulate
from attnlib.frontiers import funk_hecke, noise_threshold, simulate_noisy
from attnlib.frontiers._noise import noisy_rates


def _funk_hecke_quad(ell, beta, d):
    # c_l = int e^{bt} C_l(t)/C_l(1) (1-t^2)^{(d-3)/2} dt / int (1-t^2)^{(d-3)/2} dt
    lam = d / 2 - 1
    if lam == 0:  # d = 2: Chebyshev polynomials, cos(l acos t)
        pl = lambda t: np.cos(ell * np.arccos(t))  # noqa: E731
    else:
        pl = lambda t: eval_gegenbauer(ell, lam, t) / eval_gegenbauer(ell, lam, 1.0)  # noqa: E731
    w = lambda t: (1 - t * t) ** ((d - 3) / 2)  # noqa: E731
    num = quad(lambda t: np.exp(beta * t) * pl(t) * w(t), -1, 1, limit=200)[0]
    den = quad(w, -1, 1, limit=200)[0]
    return num / den


@pytest.mark.parametrize("d", [2, 3, 4, 6])
@pytest.mark.parametrize("ell", [0, 1, 3])
def test_funk_hecke_against_quadrature(d, ell):
    for beta in (0.5, 3.0):
        assert np.isclose(
            funk_hecke(ell, beta=beta, d=d), _funk_hecke_quad(ell, beta, d), rtol=1e-8
        )


def test_threshold_closed_forms_and_limits():
    b = np.array([0.5, 2.0, 8.0])
    sc = [noise_threshold(beta=x, d=3) for x in b]
    assert np.allclose(sc, (1 / np.tanh(b) - 1 / b) / b)
    for d in (2, 3, 7):
        assert np.isclose(noise_threshold(beta=1e-8, d=d), 1 / d, rtol=1e-6)
        # USA at beta -> 0 equals SA (Z -> 1)
        assert np.isclose(
            noise_threshold(beta=1e-8, d=d, normalization="usa"), 1 / d, rtol=1e-6
        )
    # usa = sa * c_0
    assert np.isclose(
        noise_threshold(beta=3.0, d=4, normalization="usa"),
        noise_threshold(beta=3.0, d=4) * funk_hecke(0, beta=3.0, d=4),
    )
    assert np.isclose(gamma(1.5) * 2 / np.sqrt(np.pi), 1.0)


def test_degree_one_is_the_last_to_stabilise():
    beta, d = 5.0, 3
    sc = noise_threshold(beta=beta, d=d)
    ell = np.arange(1, 8)
    assert np.all(noisy_rates(ell, beta=beta, d=d, sigma=0.999 * sc)[:1] > 0)
    assert np.all(noisy_rates(ell, beta=beta, d=d, sigma=1.001 * sc) < 0)
    # just below sigma_c only degree one grows
    assert np.all(noisy_rates(ell[1:], beta=beta, d=d, sigma=0.999 * sc) < 0)


def test_zero_noise_is_euler_with_retraction():
    X0 = sample_sphere(10, 3, rng=0)
    noisy = simulate_noisy(Model(beta=2.0), X0, sigma=0.0, rng=0, t_final=1.0, dt=0.01)
    plain = simulate(Model(beta=2.0), X0, t_final=1.0, dt=0.01, method="euler")
    assert np.allclose(noisy.final, plain.final, atol=1e-13)


def test_pure_brownian_motion_decorrelates_at_rate_sigma_d_minus_1():
    # E <x(t), x(0)> = e^{-sigma (d-1) t} for Brownian motion with generator
    # sigma * Laplacian on S^{d-1}; weak order one in dt
    zero = Model(beta=0.0, V=np.zeros((4, 4)))
    X0 = sample_sphere(4, 4, rng=1, batch=1000)  # 4000 independent walkers
    sigma, T = 0.3, 1.0
    tr = simulate_noisy(zero, X0, sigma=sigma, rng=2, t_final=T, dt=0.005)
    corr = np.mean(np.sum(tr.final * X0, axis=-1))
    assert abs(corr - np.exp(-sigma * 3 * T)) < 0.02
    assert np.allclose(np.linalg.norm(tr.final, axis=-1), 1.0)


def test_fluctuations_above_threshold():
    # above sigma_c, n E|mean x|^2 = 1 / (1 - sigma_c / sigma) (linear mode with
    # damping (d-1)(sigma - sigma_c) forced by the independent noises)
    beta, d, n = 4.0, 3, 96
    sc = noise_threshold(beta=beta, d=d)
    frac = np.repeat([2.0, 4.0], 4)
    X0 = sample_sphere(n, d, rng=3, batch=frac.size)
    T = np.linspace(0, 60, 121)
    tr = simulate_noisy(
        Model(beta=beta),
        X0,
        sigma=frac * sc,
        rng=4,
        times=T,
        dt=0.05,
        save_states=False,
        observables={"m2": lambda X: np.sum(X.mean(axis=1) ** 2, axis=-1)},
    )
    m2 = n * tr.observables["m2"][T >= 15].mean(axis=0)
    for f in (2.0, 4.0):
        assert abs(m2[frac == f].mean() / (1 / (1 - 1 / f)) - 1) < 0.3


def test_validation():
    X0 = sample_sphere(4, 3, rng=0)
    with pytest.raises(ValueError, match="sigma"):
        simulate_noisy(Model(), X0, sigma=-1.0, rng=0, t_final=1.0)
    with pytest.raises(ValueError, match="sigma"):
        simulate_noisy(Model(), X0, sigma=np.ones(2), rng=0, t_final=1.0)
    with pytest.raises(TypeError, match="rng"):
        simulate_noisy(Model(), X0, sigma=0.1, rng=None, t_final=1.0)
    with pytest.raises(ValueError, match="sphere"):
        simulate_noisy(Model(geometry="euclidean"), X0, sigma=0.1, rng=0, t_final=1.0)
    with pytest.raises(ValueError, match="ell"):
        funk_hecke(-1, beta=1.0, d=3)
    with pytest.raises(ValueError, match="normalization"):
        noise_threshold(beta=1.0, d=3, normalization="x")


def _textbook_euler_maruyama(model, X, sigma, rng, times, dt):
    """The scheme of the module docstring, written out: the reference of the driver."""
    rng = np.random.default_rng(rng)
    out, t = [X.copy()], 0.0
    for tk in times[1:]:
        m = int(np.ceil((tk - t) / dt - 1e-9))  # 0 for a repeated output time
        h = (tk - t) / max(m, 1)
        for _ in range(m):
            xi = rng.standard_normal(X.shape)
            xi -= np.sum(xi * X, axis=-1, keepdims=True) * X
            X = X + h * model.rhs(X) + np.sqrt(2.0 * sigma * h) * xi
            X /= np.linalg.norm(X, axis=-1, keepdims=True)
        out.append(X.copy())
        t = tk
    return np.stack(out)


def test_simulate_noisy_is_the_textbook_scheme_bit_for_bit_on_the_driver(monkeypatch):
    import attnlib._kernel as kern
    from attnlib import Model, Trajectory, sample_sphere
    from attnlib.frontiers import NoisyTrajectory, simulate_noisy

    model = Model(beta=2.0)
    X0 = sample_sphere(10, 3, rng=3)
    times = np.array([0.0, 0.13, 0.5, 0.5, 1.7])
    calls = []
    field = kern.softmax_field
    monkeypatch.setattr(
        kern, "softmax_field", lambda *a, **k: (calls.append(1), field(*a, **k))[1]
    )
    tr = simulate_noisy(model, X0, sigma=0.3, rng=7, times=times, dt=0.05)
    assert len(calls) == tr.n_steps == 35  # one field per step, none to validate X0
    monkeypatch.undo()
    ref = _textbook_euler_maruyama(model, X0, 0.3, 7, times, 0.05)
    np.testing.assert_array_equal(tr.states, ref)
    assert isinstance(tr, Trajectory) and NoisyTrajectory is Trajectory
    assert tr.method == "euler-maruyama"
