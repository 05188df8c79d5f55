"""Robustness of the library at the edges: large beta, float32, underflow, step caps.

Every test here pins an input on which the library once crashed deep inside numpy,
returned inf/NaN without a word, or never returned; each must now give a finite,
correct result or a ValueError that names the argument and what was expected.
"""

import contextlib
import signal
import tomllib
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy.special import logsumexp

import attnlib as al
import attnlib.attention as att
from attnlib import Model, sample_sphere
from attnlib.circle import _angles as angles
from attnlib import circle as cir
from attnlib import clustering, extremisers, gaussian
from attnlib._validation import TooManyStepsError, exp_scale, log_max

ROOT = Path(__file__).resolve().parents[1]
EPS = np.finfo(np.float64).eps


@contextlib.contextmanager
def time_limit(seconds):
    """Fail (instead of hanging the suite) if the block runs longer than ``seconds``."""

    def handler(signum, frame):
        raise TimeoutError(f"still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, handler)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


# ---------------------------------------------------------------- the helpers
def test_log_max_follows_the_dtype():
    assert log_max(np.float64) == pytest.approx(709.782712893384)
    assert log_max(np.float32) == pytest.approx(88.72283935546875)
    assert np.isfinite(np.exp(log_max(np.float64)))
    with np.errstate(over="ignore"):
        assert np.isinf(np.exp(np.nextafter(log_max(np.float64), np.inf)))


def test_exp_scale_returns_the_product_or_raises():
    # e^750 alone overflows float64; the products do not (and 0 stays 0, not NaN)
    out = exp_scale(np.array([0.0, 1e-300, -2e-300]), 750.0, what="x")
    assert out[0] == 0.0
    np.testing.assert_allclose(
        out[1:], np.array([1.0, -2.0]) * np.exp(750.0 - 300 * np.log(10)), rtol=1e-12
    )
    with pytest.raises(ValueError, match="x exceeds the float64 range"):
        exp_scale(np.array([0.0, -3.0]), 710.0, what="x")
    f32 = exp_scale(np.array([1.0], dtype=np.float32), 80.0, what="y")
    assert f32.dtype == np.float32 and f32[0] == pytest.approx(np.exp(80.0), rel=1e-6)
    with pytest.raises(ValueError, match="float32"):
        exp_scale(np.array([1.0], dtype=np.float32), 90.0, what="y")


# ---------------------------------------------------------------- Sinkhorn
def _marginal_errors(P):
    return (
        float(np.max(np.abs(P.sum(axis=-1) - 1.0))),
        float(np.max(np.abs(P.sum(axis=-2) - 1.0))),
    )


def test_sinkhorn_kernel_isolated_tokens_at_large_beta():
    # the Newton matrix is singular for a near-permutation plan: LinAlgError before
    X = sample_sphere(16, 3, rng=0)
    m = Model(beta=200, kernel="sinkhorn")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # converged: no SinkhornConvergenceWarning
        v = m.velocity(X)
        A = m.attention(X)
    assert np.all(np.isfinite(v))
    assert max(_marginal_errors(A)) < 1e-10
    np.testing.assert_allclose(np.sum(v * X, axis=1), 0.0, atol=1e-14)


@pytest.mark.parametrize("n, beta", [(16, 100.0), (16, 200.0), (64, 700.0)])
def test_sinkhorn_plans_are_doubly_stochastic_for_every_draw(n, beta):
    for seed in range(20):
        X = sample_sphere(n, 3, rng=seed)
        r = al.sinkhorn(beta * X @ X.T)
        assert r.converged, (seed, r.error, r.n_iter)
        assert max(_marginal_errors(r.matrix)) <= 1e-11
        assert np.all(np.isfinite(r.matrix)) and np.all(r.matrix >= 0)


def test_sinkhorn_batch_with_singular_members():
    X = sample_sphere(32, 3, rng=3, batch=4)
    beta = np.array([2.0, 700.0, 50.0, 700.0])
    L = beta[:, None, None] * X @ np.swapaxes(X, -1, -2)
    r = al.sinkhorn(L)
    assert r.converged and max(_marginal_errors(r.matrix)) <= 1e-11


def test_sinkhorn_falls_back_to_plain_iterations(monkeypatch):
    def broken(*args, **kwargs):
        raise np.linalg.LinAlgError("Singular matrix")

    monkeypatch.setattr(att.np.linalg, "solve", broken)
    X = sample_sphere(12, 3, rng=1)
    r = al.sinkhorn(3.0 * X @ X.T, tol=1e-12, max_iter=5000)
    assert r.converged and max(_marginal_errors(r.matrix)) <= 1e-12
    r = al.sinkhorn(3.0 * X @ X.T, tol=1e-12, max_iter=25)  # cap hit: flagged
    assert not r.converged and r.n_iter == 25
    with pytest.warns(att.SinkhornConvergenceWarning, match="Sinkhorn stopped"):
        Model(beta=3.0, kernel="sinkhorn", sinkhorn_max_iter=25).attention(X)


# ---------------------------------------------------------------- float32
FIELDS = {
    "usa": lambda X, b: Model(beta=b, normalization="usa").velocity(X),
    "usa, symmetric Q": lambda X, b: Model(
        beta=b, normalization="usa", Q=np.diag([1.0, 1.0, 0.5])
    ).velocity(X),
    "usa, general Q": lambda X, b: Model(
        beta=b, normalization="usa", Q=np.array([[1, 0.2, 0], [0, 1, 0], [0, 0, 1]])
    ).velocity(X),
    "usa, causal": lambda X, b: Model(
        beta=b, normalization="usa", mask="causal"
    ).velocity(X),
    "usa attention": lambda X, b: Model(beta=b, normalization="usa").attention(X),
    "energy_gradient": lambda X, b: al.energy_gradient(X, beta=b),
    "energy_D_field": lambda X, b: al.energy_D_field(X, b * np.eye(3)),
    "energy": lambda X, b: np.asarray(al.energy(X, beta=b)),
}


@pytest.mark.parametrize("name", sorted(FIELDS))
@pytest.mark.parametrize("beta", [50.0, 85.0, 95.0, 120.0, 300.0])
def test_float32_is_finite_where_float64_is_or_raises(name, beta):
    f = FIELDS[name]
    X64 = sample_sphere(16, 3, rng=0)
    X32 = X64.astype(np.float32)
    ref = f(X64, beta)
    assert np.all(np.isfinite(ref))
    try:
        out = f(X32, beta)
    except ValueError as exc:
        assert "float32" in str(exc)
        assert beta > 80  # float32 holds e^x up to x = 88.7
        return
    assert np.all(np.isfinite(out))
    scale = float(np.max(np.abs(ref)))
    np.testing.assert_allclose(out, ref, rtol=0, atol=1e-4 * scale)


def test_float32_ensemble_energy():
    X = sample_sphere(8, 3, rng=2, batch=3, dtype=np.float32)
    with pytest.raises(ValueError, match="log_energy"):
        al.energy(X, beta=np.array([1.0, 2.0, 150.0]))
    e = al.energy(X, beta=np.array([1.0, 2.0, 3.0]))
    X64 = al.retract(X.astype(np.float64))
    np.testing.assert_allclose(e, al.energy(X64, beta=np.array([1.0, 2.0, 3.0])), 1e-5)


# ---------------------------------------------------------------- sigmoid SA
def test_sigmoid_sa_with_underflowing_rows_is_the_softmax_limit():
    X = sample_sphere(8, 3, rng=0)
    m = Model(beta=1.0, kernel="sigmoid", bias=-800.0)
    A = m.attention(X)
    v = m.velocity(X)
    assert np.all(np.isfinite(A)) and np.all(np.isfinite(v))
    np.testing.assert_allclose(A.sum(axis=1), 1.0, rtol=1e-14)
    # sigma(s - 800) = e^(s - 800) (1 + O(e^-800)): the softmax of the logits
    soft = Model(beta=1.0).attention(X)
    np.testing.assert_allclose(A, soft, rtol=1e-12)
    np.testing.assert_allclose(v, Model(beta=1.0).velocity(X), atol=1e-13)
    causal = Model(beta=1.0, kernel="sigmoid", bias=-800.0, mask="causal")
    np.testing.assert_allclose(
        causal.attention(X), Model(beta=1.0, mask="causal").attention(X), rtol=1e-12
    )


def test_sigmoid_sa_matches_the_plain_ratio_where_it_is_representable():
    X = sample_sphere(10, 3, rng=4)
    S = 2.0 * X @ X.T - 3.0
    sig = 1.0 / (1.0 + np.exp(-S))
    ref = sig / sig.sum(axis=1, keepdims=True)
    A = Model(beta=2.0, kernel="sigmoid", bias=-3.0).attention(X)
    np.testing.assert_allclose(A, ref, rtol=1e-13)


# ---------------------------------------------------------------- hangs
def test_equiangular_nan_time_raises_at_once():
    with time_limit(10), pytest.raises(ValueError, match="times must be finite"):
        al.equiangular_gamma([0.0, np.nan], beta=1.0, n=4)


def test_equiangular_stiff_usa_hits_the_step_cap():
    with time_limit(30), pytest.raises(TooManyStepsError, match="max_steps=2000"):
        al.equiangular_gamma(
            [0.0, 30.0], beta=10.0, n=32, normalization="usa", max_steps=2000
        )
    with pytest.raises(ValueError, match="float64 range"):
        al.equiangular_rhs(0.9, beta=1000.0, n=4, normalization="usa")


def test_gaussian_unreachable_trace_threshold_is_a_blowup():
    with time_limit(20):
        tr = gaussian.integrate_gaussian(
            Model(geometry="euclidean"),
            np.zeros(2),
            np.eye(2),
            t_final=1.0,
            max_trace=1e300,
        )
    # Sigma(t) = I / (1 - 2t): the step stops advancing t just before t* = 1/2
    assert tr.info["blowup"] and abs(tr.info["t_stop"] - 0.5) < 1e-5
    assert abs(tr.info["blowup_time"] - 0.5) < 1e-5
    with pytest.raises(TooManyStepsError, match="integrate_gaussian"):
        gaussian.integrate_gaussian(
            Model(geometry="euclidean"),
            np.zeros(2),
            0 * np.eye(2),
            t_final=10.0,
            dt=0.01,
            max_steps=100,
        )


def test_glpr_step_on_sa_raises_instead_of_taking_1e23_steps():
    X = sample_sphere(4, 3, rng=0)
    with time_limit(10), pytest.raises(TooManyStepsError, match="SA model"):
        al.simulate(Model(beta=50.0), X, t_final=1.0, step_rule="glpr")
    with pytest.raises(ValueError, match="max_steps"):
        al.simulate(Model(beta=1.0), X, t_final=10.0, dt=0.1, max_steps=50)
    assert al.simulate(Model(beta=1.0), X, t_final=5.0, dt=0.1, max_steps=50).n_steps
    with pytest.raises(ValueError, match="underflows"):
        al.glpr_usa_step(beta=800.0)
    assert al.glpr_usa_step(beta=700.0) == pytest.approx(
        0.1 / (np.sqrt(700) * np.exp(699.5))
    )


def test_bessel_modes_at_huge_beta_is_fast_or_raises():
    with time_limit(10):
        K = cir.bessel_modes(beta=1e9)
        with pytest.raises(ValueError, match="max_modes"):
            cir.bessel_modes(beta=1e12)
    # K ~ sqrt(2 beta log(1/tol)) for large beta (the Gaussian tail of I_k)
    assert 0.5 < K / np.sqrt(2e9 * np.log(1e16)) < 1.5
    # the direct method needs no modes, whatever beta
    m = cir.CircleModel(beta=1e12, normalization="sa", method="direct")
    th = np.array([0.0, 1e-7, 2.0])
    assert np.all(np.isfinite(m.velocity(th)))


def test_mean_field_and_angle_simulation_are_capped():
    rho = lambda t: (1 + 0.1 * np.cos(t)) / (2 * np.pi)  # noqa: E731
    # USA collapses to a point: the CFL step shrinks until it no longer advances t
    with time_limit(30), pytest.raises(TooManyStepsError, match="too small to adv"):
        cir.mean_field(rho, beta=1.0, times=[0.0, 1e3], grid_size=64)
    with pytest.raises(TooManyStepsError, match="mean_field"):
        cir.mean_field(
            rho, beta=1.0, times=[0.0, 5.0], grid_size=64, dt=1e-3, max_steps=100
        )
    with pytest.raises(TooManyStepsError, match="simulate_angles"):
        cir.simulate_angles(
            cir.CircleModel(beta=1.0), np.zeros(3), t_final=1e3, dt=1e-6
        )


def test_exp_scale_of_zeros_is_immediate_for_any_scale():
    # zero values allow any factor; the pieces of the factor must not depend on it
    with time_limit(5):
        assert np.all(exp_scale(np.zeros(3), 1e300, what="x") == 0)
        X = np.tile([1.0, 0.0, 0.0], (4, 1))  # identical tokens: the field is 0
        for beta in (1e12, 1e300):
            assert np.all(al.energy_gradient(X, beta=beta) == 0)
        assert np.all(al.energy_D_field(X, 1e12 * np.eye(3)) == 0)
        V0 = np.zeros((3, 3))
        assert np.all(Model(beta=1e12, normalization="usa", V=V0).velocity(X) == 0)


@pytest.mark.parametrize("Q", [None, np.eye(3)])
def test_float32_usa_ensemble_names_its_range(Q):
    from attnlib.clustering import simulate_ensemble

    X0 = al.sample_sphere(8, 3, rng=0, batch=2, dtype=np.float32)
    kw = dict(times=[0.0, 0.01], dt=1e-3, normalization="usa", Q=Q)
    with pytest.raises(ValueError, match="float32"):
        simulate_ensemble(X0, beta=95.0, **kw)
    # below the limit the velocity (about e^80 / n) is finite: one step of 1e-36
    kw.update(times=[0.0, 1e-36], dt=1e-36)
    r = simulate_ensemble(X0, beta=80.0, **kw)
    assert r.final.dtype == np.float32 and np.all(np.isfinite(r.final))
    assert r.n_steps == 1 and not np.array_equal(r.final, X0)


def test_equiangular_at_huge_beta_is_silent_or_raises():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rate = al.equiangular_rhs(np.array([0.0, 0.5, 1.0]), beta=800.0, n=4)
    assert rate[0] == 0 and rate[-1] == 0 and np.all(np.isfinite(rate))
    with pytest.raises(ValueError, match="exceeds the float64 range"):
        al.equiangular_time_to(0.5, beta=1e3, n=4)
    assert np.isfinite(al.equiangular_time_to(0.5, beta=300.0, n=4))


def test_mean_field_refuses_a_run_it_cannot_finish_at_once():
    rho = lambda t: np.ones_like(t) / (2 * np.pi)  # noqa: E731
    with time_limit(5), pytest.raises(TooManyStepsError, match="needs 2e\\+07 steps"):
        cir.mean_field(rho, beta=1.0, times=[0.0, 1e6], normalization="sa", dt=0.05)


def test_ensembles_and_phase_diagrams_are_capped():
    from attnlib.clustering import phase_diagram, simulate_ensemble

    X0 = al.sample_sphere(4, 3, rng=0, batch=2)
    with time_limit(10), pytest.raises(TooManyStepsError, match="simulate_ensemble"):
        simulate_ensemble(X0, beta=1.0, times=[0.0, 1.0], dt=1e-12)
    with pytest.raises(TooManyStepsError, match="max_steps=5"):
        simulate_ensemble(X0, beta=1.0, times=[0.0, 1.0], dt=0.1, max_steps=5)
    assert simulate_ensemble(X0, beta=1.0, times=[0, 1], max_steps=10).n_steps == 10
    with time_limit(10), pytest.raises(TooManyStepsError, match="phase_diagram"):
        phase_diagram(4, betas=[1.0], samples=2, t_final=1.0, dt=1e-12, progress=False)


# ---------------------------------------------------------------- log energies
def test_clustering_energy_at_beta_1e3():
    X = sample_sphere(8, 3, rng=0, batch=2)
    G = X @ np.swapaxes(X, -1, -2)
    with pytest.raises(ValueError, match="log=True"):
        clustering.Energy()(G, 1e3)
    le = clustering.Energy(log=True)(G, np.array([1e3, 2.0]))
    np.testing.assert_allclose(
        le, al.log_energy(X, beta=np.array([1e3, 2.0])), rtol=1e-14
    )
    np.testing.assert_allclose(
        clustering.Energy()(G, 2.0), al.energy(X, beta=np.array([2.0, 2.0])), rtol=1e-13
    )


def test_platonic_and_uniform_energies_have_log_forms():
    for name in ("tetrahedron", "octahedron", "icosahedron"):
        with pytest.raises(ValueError, match="log=True"):
            extremisers.platonic_energy(name, beta=1e3)  # was inf
        P = extremisers.platonic_points(name)
        for beta in (1.0, 1e3):
            le = extremisers.platonic_energy(name, beta=beta, log=True)
            assert le == pytest.approx(al.log_energy(P, beta=beta), rel=1e-13)
        assert extremisers.platonic_energy(name, beta=2.0) == pytest.approx(
            al.energy(P, beta=2.0), rel=1e-13
        )
    # uniform measure on S^2: sinh(beta) / beta
    le = extremisers.uniform_energy(beta=1e3, d=3, log=True)
    assert le == pytest.approx(1e3 - np.log(2.0) - np.log(1e3), rel=1e-14)
    assert extremisers.uniform_energy(beta=3.0, d=3) == pytest.approx(
        np.sinh(3.0) / 3.0
    )
    with pytest.raises(ValueError, match="log=True"):
        extremisers.uniform_energy(beta=1e3, d=3)
    for method in ("bessel", "quadrature"):
        a5 = extremisers.gegenbauer_coefficients(beta=5.0, d=4, kmax=6, method=method)
        s5 = extremisers.gegenbauer_coefficients(
            beta=5.0, d=4, kmax=6, method=method, scaled=True
        )
        np.testing.assert_allclose(s5 * np.exp(5.0), a5, rtol=1e-12)
        s = extremisers.gegenbauer_coefficients(
            beta=1e3, d=3, kmax=8, method="bessel", scaled=True
        )
        assert np.all(np.isfinite(s)) and np.all(s > 0)
        with pytest.raises(ValueError, match="scaled=True"):
            extremisers.gegenbauer_coefficients(beta=1e3, d=3, kmax=8, method=method)


def test_minimise_configuration_at_beta_1e3():
    res = extremisers.minimise_configuration(4, 3, beta=1e3, rng=0, restarts=2)
    with pytest.raises(ValueError, match="log_energy"):
        _ = res.energy  # was inf
    # every off-diagonal term is below e^-1000: E = e^beta / (2 beta n)
    assert res.log_energy == pytest.approx(1e3 - np.log(2e3 * 4), rel=1e-14)
    assert np.all(np.isfinite(res.log_energies))
    small = extremisers.minimise_configuration(4, 3, beta=1.0, rng=0, restarts=2)
    assert small.energy == pytest.approx(
        extremisers.platonic_energy("tetrahedron", beta=1.0), rel=1e-10
    )


def test_density_mirror_descent_at_large_D():
    res = extremisers.density_mirror_descent(1e3 * np.eye(2), m=32, steps=20)
    assert np.all(np.isfinite(res.weights)) and res.weights.sum() == pytest.approx(1)
    with pytest.raises(ValueError, match="log_energies"):
        _ = res.energies  # was NaN
    assert np.all(np.isfinite(res.log_energies))
    assert np.all(np.diff(res.log_energies) <= 1e-12)
    # where E_D is representable the log energies are those of energy_D
    r = extremisers.density_mirror_descent(np.diag([1.0, 0.3]), m=64, steps=30)
    _, pts = extremisers.circle_grid(64)
    e = al.energy_D(pts, np.diag([1.0, 0.3]), weights=r.weights)
    assert r.energies[-1] == pytest.approx(e, rel=1e-12)


def test_energy_D_and_torus_energy_log_forms():
    X = sample_sphere(6, 3, rng=1)
    th = np.random.default_rng(3).uniform(0, 2 * np.pi, 50)
    with pytest.raises(ValueError, match="log=True"):
        al.energy_D(X, 1e4 * np.eye(3))
    with pytest.raises(ValueError, match="log=True"):
        cir.torus_energy(th, beta=1e3)
    for D in (np.diag([1.0, 2.0, -0.5]), -1e3 * np.eye(3), 1e4 * np.eye(3)):
        G = X @ D @ X.T
        ref = logsumexp(G) - 2 * np.log(6)
        assert al.energy_D(X, D, log=True) == pytest.approx(ref, rel=1e-13)
    lt = cir.torus_energy(th, beta=1e3, log=True)
    assert lt == pytest.approx(al.log_energy(cir.from_angles(th), beta=1e3), rel=1e-13)


# ---------------------------------------------------------------- the circle
def _reference(theta, beta, normalization):
    """Velocity and weights A_i/N_i by an extended-precision double sum (self out)."""
    t = np.asarray(theta, dtype=np.longdouble)
    d = t[:, None] - t[None, :]
    W = np.exp(beta * (np.cos(d) - 1))  # e^{beta cos} e^{-beta}
    np.fill_diagonal(W, 0)
    num = (W * np.sin(d)).sum(axis=1)
    N = W.sum(axis=1) + 1 if normalization == "sa" else np.full(t.size, len(t) * 1.0)
    scale = 1.0 if normalization == "sa" else np.exp(np.longdouble(beta))
    v = -num * scale / N
    A = W.sum(axis=1) * scale / N
    return v.astype(np.float64), A.astype(np.float64)


def _check_per_particle(v, theta, beta, normalization, rtol):
    ref, A = _reference(theta, beta, normalization)
    bound = rtol * np.abs(ref) + 1e3 * EPS * (2 + beta) * A
    assert np.all(np.abs(v - ref) <= bound), np.max(np.abs(v - ref) / bound)


def test_circle_two_far_apart_particles_relative_error():
    th = np.array([0.0, 0.9 * np.pi])
    for norm in ("usa", "sa"):
        ref, _ = _reference(th, 64.0, norm)
        for method in ("fourier", "direct", "auto"):
            v = cir.angle_velocity(th, beta=64.0, normalization=norm, method=method)
            np.testing.assert_allclose(v, ref, rtol=1e-8)
    # the plain Fourier sums are off by about eps * e^64 ~ 1e10 for USA
    plain = cir.angle_velocity(th, beta=64.0, method="fourier", rtol=None)
    assert np.max(np.abs(plain)) > 1.0


@pytest.mark.parametrize("normalization", ["usa", "sa"])
@pytest.mark.parametrize("beta", [4.0, 16.0, 64.0])
def test_circle_fourier_per_particle_guarantee(normalization, beta):
    rng = np.random.default_rng(int(beta))
    n = 400
    configs = {
        "uniform": rng.uniform(0, 2 * np.pi, n),
        "clusters": rng.integers(0, 5, n) * 1.2 + 1e-3 * rng.standard_normal(n),
        "isolated": np.concatenate(
            [1e-2 * rng.standard_normal(n - 3), [2.0, 3.5, 4.9]]
        ),
        "near-uniform": 2 * np.pi * np.arange(n) / n + 1e-9 * rng.standard_normal(n),
    }
    for th in configs.values():
        for method in ("fourier", "direct"):
            v = cir.angle_velocity(
                th, beta=beta, normalization=normalization, method=method
            )
            _check_per_particle(v, th, beta, normalization, 1e-8)
        model = cir.CircleModel(beta=beta, normalization=normalization)
        _check_per_particle(model(th), th, beta, normalization, 1e-8)


def test_circle_rounding_bound_is_not_exceeded():
    """The a-priori bound of the Fourier sums holds with a margin (20x) measured on
    large ``n`` (rows sampled against an extended-precision reference)."""
    rng = np.random.default_rng(7)
    for beta in (1.0, 16.0, 200.0):
        K = cir.bessel_modes(beta=beta)
        a, b = cir.kernel_coefficients(beta=beta, K=K)
        for n in (3000, 20000):
            configs = (
                rng.uniform(0, 2 * np.pi, n),
                rng.integers(0, 3, n) * 2.0 + 1e-4 * rng.standard_normal(n),
                2 * np.pi * np.arange(n) / n + 1e-9 * rng.standard_normal(n),
            )
            for th in configs:
                S = angles._fourier_sums(th, K)
                rows = rng.choice(n, 40, replace=False)
                num = angles._mode_sums(th[rows], b * np.conj(S)).imag
                den = angles._mode_sums(th[rows], a * np.conj(S)).real
                t = th.astype(np.longdouble)
                d = t[rows, None] - t[None, :]
                W = np.exp(beta * (np.cos(d) - 1))
                en = np.max(np.abs(num - (W * np.sin(d)).sum(1).astype(float)))
                ed = np.max(np.abs(den - W.sum(1).astype(float)))
                assert en <= angles._rounding_bound(b, n) / 20
                assert ed <= angles._rounding_bound(a, n) / 20


# ---------------------------------------------------------------- packaging
def test_pyproject_declares_dependencies_python_and_doctests():
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())
    project = cfg["project"]
    deps = " ".join(project["dependencies"])
    extras = " ".join(" ".join(v) for v in project["optional-dependencies"].values())
    assert "tqdm" in deps and "sympy" in deps + extras
    assert project["requires-python"] == ">=3.11"
    pytest_cfg = cfg["tool"]["pytest"]["ini_options"]
    assert "--doctest-modules" in pytest_cfg["addopts"]
    assert "attnlib" in pytest_cfg["testpaths"]
