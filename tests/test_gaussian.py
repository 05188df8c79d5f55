"""Tests of attnlib.gaussian: mean/covariance equations of the Gaussian case."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from attnlib import Model, simulate
from attnlib.gaussian import (
    AffineField,
    blowup_time,
    effective_rank,
    empirical_moments,
    fit_affine,
    gaussian_field,
    gaussian_rhs,
    integrate_gaussian,
    mardia_kurtosis,
    moment_observables,
    numerical_rank,
    riccati_covariance,
    sample_gaussian,
)
from attnlib.gaussian._dynamics import condition_number, disc_coordinates

# The blow-up example of the Gaussian chapter (closed form of [CACP] Section 4).
S0_REF = np.array([[1.0, 0.3], [0.3, 0.6]])
Q_REF = np.array([[1.0, 0.2], [0.0, 0.8]])
K_REF = np.array([[0.9, 0.0], [0.1, 1.1]])

Q2 = np.array([[0.6, 0.2], [-0.1, 0.5]])
K2 = np.array([[0.5, 0.1], [0.2, -0.4]])
V2 = np.array([[1.0, 0.3], [-0.2, 0.8]])
ALPHA = np.array([0.3, -0.2])

VARIANTS = {
    "softmax": dict(Q=Q2, K=K2, V=V2),
    "l2": dict(Q=Q2, K=K2, V=V2, kernel="l2"),
    "sinkhorn": dict(Q=Q2, K=K2, V=V2, kernel="sinkhorn", sinkhorn_tol=1e-5),
    "multihead": dict(heads=[(Q2, K2, V2), (K2, Q2, 0.5 * np.eye(2))]),
}


def _model(name: str) -> Model:
    return Model(geometry="euclidean", **VARIANTS[name])


@pytest.fixture(scope="module")
def cloud():
    X = sample_gaussian(ALPHA, S0_REF, 3000, rng=0)
    return X, *empirical_moments(X)


@pytest.mark.parametrize("name", list(VARIANTS))
def test_empirical_jacobian_matches_formula(cloud, name):
    """Least-squares affine fit of particle velocities (N = 3000) vs the formula."""
    X, m, C = cloud
    model = _model(name)
    vel = model.velocity(X)
    fit = fit_affine(X, vel)
    f = gaussian_field(model, m, C)
    rel = np.abs(fit.M - f.M).max() / np.abs(f.M).max()
    assert rel < 0.05, rel
    assert np.abs(fit.c - f.c).max() < 0.05
    # The field is affine up to sampling error: residuals small against the spread.
    resid = np.sqrt(np.mean((vel - f(X)) ** 2)) / np.sqrt(np.mean(vel**2))
    assert resid < 0.05, resid


def test_wrong_formula_is_detected(cloud):
    """The check has teeth: the softmax M differs from the wrong V(Sigma A + I)."""
    X, m, C = cloud
    model = _model("softmax")
    fit = fit_affine(X, model.velocity(X))
    A = K2.T @ Q2
    wrong = V2 @ C @ A + V2
    assert np.abs(fit.M - wrong).max() > 0.5


def test_softmax_formula_closed_form():
    A = 0.7 * K2.T @ Q2
    S = np.array([[2.0, -0.4], [-0.4, 0.5]])
    da, dS = gaussian_rhs(
        Model(beta=0.7, Q=Q2, K=K2, V=V2, geometry="euclidean"), ALPHA, S
    )
    np.testing.assert_allclose(da, V2 @ (np.eye(2) + S @ A) @ ALPHA, atol=1e-13)
    np.testing.assert_allclose(dS, V2 @ S @ A @ S + S @ A.T @ S @ V2.T, atol=1e-13)


def test_l2_formula_closed_form():
    S = np.array([[2.0, -0.4], [-0.4, 0.5]])
    G, H = K2.T @ K2, K2.T @ Q2
    Sg = np.linalg.inv(np.linalg.inv(S) + G)
    f = gaussian_field(
        Model(Q=Q2, K=K2, V=V2, kernel="l2", geometry="euclidean"), ALPHA, S
    )
    np.testing.assert_allclose(f.M, V2 @ Sg @ H, atol=1e-13)
    np.testing.assert_allclose(f.c, V2 @ Sg @ np.linalg.inv(S) @ ALPHA, atol=1e-13)


def test_sinkhorn_plan_is_the_entropic_plan_1d():
    """d = 1: the plan correlation r solves r / (1 - r^2) = a sigma^2."""
    for a, s2 in [(0.8, 1.3), (-0.5, 2.0), (2.0, 0.2)]:
        model = Model(Q=[[a]], kernel="sinkhorn", geometry="euclidean")
        f = gaussian_field(model, [0.0], [[s2]])
        r = f.M[0, 0]  # E[y|x] = r x for a standardised plan, and Sigma cancels in 1-D
        assert abs(r / (1 - r**2) - a * s2) < 1e-12
        assert abs(r) < 1


def test_sinkhorn_mean_moves_with_V_only():
    model = Model(Q=Q2, K=K2, V=V2, kernel="sinkhorn", geometry="euclidean")
    da, _ = gaussian_rhs(model, ALPHA, S0_REF)
    np.testing.assert_allclose(da, V2 @ ALPHA, atol=1e-13)


@pytest.mark.parametrize("name", list(VARIANTS))
def test_factorised_integrator_matches_direct_rhs(name):
    """integrate_gaussian (factor form) vs solve_ivp on (alpha, Sigma) directly."""
    model = _model(name)
    d = 2

    def rhs(t, y):
        a, S = y[:d], y[d:].reshape(d, d)
        da, dS = gaussian_rhs(model, a, 0.5 * (S + S.T))
        return np.concatenate([da, dS.ravel()])

    ts = np.linspace(0.0, 0.5, 5)  # the multi-head example blows up at t = 0.908
    ref = solve_ivp(
        rhs,
        (0, 0.5),
        np.concatenate([ALPHA, S0_REF.ravel()]),
        t_eval=ts,
        rtol=1e-11,
        atol=1e-12,
        max_step=0.01,
    )
    tr = integrate_gaussian(model, ALPHA, S0_REF, times=ts)
    assert not tr.info["blowup"]
    np.testing.assert_allclose(tr.info["means"], ref.y[:d].T, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(
        tr.info["covariances"], ref.y[d:].T.reshape(-1, d, d), rtol=1e-6, atol=1e-8
    )


def test_closed_form_matches_integration_and_symbolic_derivative():
    m = Model(beta=0.5, Q=Q2, K=K2, geometry="euclidean")
    ts = np.linspace(0.0, 0.9 * blowup_time(m, S0_REF), 7)
    tr = integrate_gaussian(m, ALPHA, S0_REF, times=ts)
    cf = riccati_covariance(m, S0_REF, ts)
    np.testing.assert_allclose(tr.info["covariances"], cf, rtol=1e-7, atol=1e-10)
    # derivative of the closed form = right-hand side
    h = 1e-5
    t1 = ts[3]
    S1, S2 = riccati_covariance(m, S0_REF, [t1 - h, t1 + h])
    _, dS = gaussian_rhs(m, ALPHA, riccati_covariance(m, S0_REF, [t1])[0])
    np.testing.assert_allclose((S2 - S1) / (2 * h), dS, rtol=1e-6)


def test_reference_blowup_time():
    """[CACP] Section 4 closed form: t* = 0.6057 with the 1/sqrt(d_k) scaling
    (beta = 1/sqrt 2), t* = 1 / lambda_max(Sigma0^1/2 (A + A^T) Sigma0^1/2)."""
    m = Model(beta=1 / np.sqrt(2), Q=Q_REF, K=K_REF, geometry="euclidean")
    assert abs(blowup_time(m, S0_REF) - 0.6057) < 1e-3
    tr = integrate_gaussian(m, np.zeros(2), S0_REF, t_final=2.0)
    assert tr.info["blowup"]
    assert abs(tr.info["blowup_time"] - 0.6057) < 1e-3
    assert abs(tr.info["t_stop"] - blowup_time(m, S0_REF)) < 1e-5
    # Without the scaling (beta = 1) the same matrices blow up earlier.
    m1 = Model(beta=1.0, Q=Q_REF, K=K_REF, geometry="euclidean")
    assert abs(blowup_time(m1, S0_REF) - 0.42831) < 1e-5
    assert (
        abs(
            integrate_gaussian(m1, np.zeros(2), S0_REF, t_final=1).info["blowup_time"]
            - 0.42831
        )
        < 1e-4
    )


def test_blowup_stretches_to_a_line_and_closed_form_refuses_after():
    m = Model(Q=Q_REF, K=K_REF, geometry="euclidean")
    t_star = blowup_time(m, S0_REF)
    S = riccati_covariance(m, S0_REF, [t_star * (1 - 1e-6)])
    assert effective_rank(S[0]) < 1.0001
    with pytest.raises(ValueError, match="before the blow-up time"):
        riccati_covariance(m, S0_REF, [t_star * (1 - 1e-6), t_star * 1.01])


def test_regimes_collapse_and_decay():
    # A + A^T negative definite: Sigma -> 0 like 1/t.
    m = Model(Q=-np.eye(2), geometry="euclidean")
    S = riccati_covariance(m, S0_REF, [1e3, 2e3])
    np.testing.assert_allclose(np.trace(S[0]) / np.trace(S[1]), 2.0, rtol=1e-3)
    assert blowup_time(m, S0_REF) == np.inf
    # Rank-deficient negative semi-definite: Sigma tends to a rank-one matrix.
    Q = np.array([[1.0, 0.0]])
    m = Model(Q=Q, K=-Q, geometry="euclidean")
    assert blowup_time(m, S0_REF) == np.inf
    # A + A^T has a kernel: its zero eigenvalue must not read as a round-off blow-up
    Q3 = np.random.default_rng(0).standard_normal((1, 3))
    assert blowup_time(Model(Q=Q3, K=-Q3, geometry="euclidean"), np.eye(3)) == np.inf
    tr = integrate_gaussian(m, np.zeros(2), S0_REF, times=[0.0, 1e3], dt=50.0)
    assert numerical_rank(tr.info["covariances"][-1]) == 1
    assert (
        tr.info["covariances"][-1][1, 1] > 0.5
    )  # the kernel direction keeps its variance


@pytest.mark.parametrize("name", list(VARIANTS))
def test_symmetry_and_psd_preserved(name):
    model = _model(name)
    rng = np.random.default_rng(3)
    M = rng.standard_normal((2, 2))
    tr = integrate_gaussian(
        model,
        ALPHA,
        M @ M.T + 0.01 * np.eye(2),
        times=np.linspace(0, 2, 21),
        max_trace=1e6,
    )
    C = tr.info["covariances"]
    assert np.array_equal(C, np.swapaxes(C, 1, 2))
    assert np.all(np.linalg.eigvalsh(C) >= -1e-12 * np.abs(C).max())


def test_singular_initial_covariance_is_allowed():
    m = Model(Q=Q2, K=K2, geometry="euclidean")
    S = np.array([[1.0, 0.0], [0.0, 0.0]])
    tr = integrate_gaussian(m, ALPHA, S, times=[0.0, 0.5])
    assert numerical_rank(tr.info["covariances"][-1], rtol=1e-12) == 1
    np.testing.assert_allclose(
        riccati_covariance(m, S, [0.5])[0],
        tr.info["covariances"][-1],
        rtol=1e-7,
        atol=1e-12,
    )


def test_particles_follow_the_ode_and_error_shrinks():
    """Particles of N(alpha, Sigma) vs the ODE; the error decreases with N."""
    m = Model(beta=0.5, Q=Q2, K=K2, V=V2, geometry="euclidean")
    ts = np.array([0.0, 0.5])
    ode = integrate_gaussian(m, ALPHA, S0_REF, times=ts)
    errs = []
    for n in (100, 1600):
        e = []
        for seed in range(3):
            X0 = sample_gaussian(ALPHA, S0_REF, n, rng=seed)
            tr = simulate(
                m,
                X0,
                times=ts,
                dt=0.25,
                observables=moment_observables(),
                save_states=False,
            )
            e.append(
                np.abs(tr.observables["cov"][-1] - ode.info["covariances"][-1]).max()
            )
        errs.append(np.mean(e))
    assert errs[1] < errs[0] / 2
    assert errs[1] < 0.1


def test_mardia_kurtosis_invariant_under_affine_and_detects_non_gaussian():
    X = sample_gaussian(ALPHA, S0_REF, 4000, rng=1)
    k0 = mardia_kurtosis(X)
    assert abs(k0 - 8.0) < 0.5
    assert abs(mardia_kurtosis(X @ V2.T + 3.0) - k0) < 1e-10
    U = np.random.default_rng(0).uniform(-1, 1, (4000, 2))
    assert mardia_kurtosis(U) < 6.0  # uniform on a square: 2 * 9/5 + 2 = 5.6


def _affine_residual(model, X):
    v = model.velocity(X)
    f = fit_affine(X, v)
    return np.sqrt(np.mean((v - f(X)) ** 2) / np.mean((v - v.mean(0)) ** 2))


def test_sigmoid_field_is_not_affine_softmax_is():
    """Relative residual of the affine fit: -> 0 with N for softmax, not for sigmoid.

    (A small softmax beta keeps the importance weights e^{y.Ax} of finite variance.)
    """
    soft = Model(beta=0.4, geometry="euclidean")
    sig = Model(kernel="sigmoid", normalization="usa", geometry="euclidean")
    res = {}
    for n in (250, 2000):
        Xs = [sample_gaussian(np.zeros(2), np.eye(2), n, rng=s) for s in range(3)]
        res[n] = (
            np.mean([_affine_residual(soft, X) for X in Xs]),
            np.min([_affine_residual(sig, X) for X in Xs]),
        )
    assert res[2000][0] < res[250][0] / 3
    assert res[2000][0] < 0.03
    assert min(res[250][1], res[2000][1]) > 0.15


def test_sigmoid_changes_the_kurtosis():
    X0 = sample_gaussian(np.zeros(2), np.eye(2), 1000, rng=2)
    sig = simulate(
        Model(beta=3.0, kernel="sigmoid", normalization="usa", geometry="euclidean"),
        X0,
        t_final=2.0,
        dt=0.25,
        observables={"k": mardia_kurtosis},
        save_states=False,
    )
    k = sig.observables["k"]
    assert k[0] - k[-1] > 1.5  # the cloud becomes a ring: platykurtic


def test_shape_measures_and_sampling():
    S = np.diag([4.0, 1.0])
    assert condition_number(S) == 4.0
    assert condition_number(np.diag([1.0, 0.0])) == np.inf
    assert abs(effective_rank(np.diag([1.0, 0.0])) - 1.0) < 1e-12
    np.testing.assert_allclose(disc_coordinates(np.eye(2)), [0.0, 0.0])
    xy = disc_coordinates(np.array([[1.0, 1.0], [1.0, 1.0]]))
    np.testing.assert_allclose(np.hypot(*xy), 1.0)  # rank one -> on the circle
    X = sample_gaussian([1.0, 2.0], S0_REF, 50000, rng=4)
    m, C = empirical_moments(X)
    np.testing.assert_allclose(m, [1.0, 2.0], atol=0.02)
    np.testing.assert_allclose(C, S0_REF, atol=0.03)
    f = AffineField(np.eye(2), np.ones(2))
    np.testing.assert_allclose(f(np.zeros((3, 2))), np.ones((3, 2)))


# --------------------------------------------------------------------- bad inputs
def test_bad_inputs_raise():
    m = Model(geometry="euclidean")
    with pytest.raises(ValueError, match="Sigma must be symmetric"):
        gaussian_rhs(m, [0.0, 0.0], [[1.0, 0.5], [0.0, 1.0]])
    with pytest.raises(ValueError, match="Sigma must be positive semi-definite"):
        gaussian_rhs(m, [0.0, 0.0], [[1.0, 0.0], [0.0, -1.0]])
    with pytest.raises(ValueError, match=r"Sigma must have shape \(2, 2\)"):
        gaussian_rhs(m, [0.0, 0.0], np.eye(3))
    with pytest.raises(ValueError, match="Sigma0 must be square"):
        integrate_gaussian(m, [0.0, 0.0], np.ones((2, 3)), t_final=1.0)
    with pytest.raises(ValueError, match="alpha must have shape"):
        gaussian_field(m, np.zeros((2, 2)), np.eye(2))
    with pytest.raises(ValueError, match="alpha must contain only finite"):
        gaussian_field(m, [np.nan, 0.0], np.eye(2))
    with pytest.raises(ValueError, match="dimension"):
        gaussian_field(Model(Q=np.eye(3), geometry="euclidean"), [0.0, 0.0], np.eye(2))
    with pytest.raises(ValueError, match="geometry='euclidean'"):
        gaussian_rhs(Model(), [0.0, 0.0], np.eye(2))
    with pytest.raises(ValueError, match="kernel"):
        gaussian_rhs(
            Model(kernel="sigmoid", geometry="euclidean"), [0.0, 0.0], np.eye(2)
        )
    with pytest.raises(ValueError, match="normalization"):
        gaussian_rhs(
            Model(normalization="usa", geometry="euclidean"), [0.0, 0.0], np.eye(2)
        )
    with pytest.raises(TypeError, match="model must be an attnlib.Model"):
        gaussian_rhs("softmax", [0.0, 0.0], np.eye(2))
    # the options of the model that the Gaussian equations do not describe
    for kw in ({"consensus": True}, {"weights": [0.5, 0.5]}):
        with pytest.raises(ValueError, match="consensus must be False and model.weig"):
            gaussian_rhs(Model(geometry="euclidean", **kw), [0.0, 0.0], np.eye(2))
    with pytest.raises(ValueError, match="V = I"):
        blowup_time(Model(V=2 * np.eye(2), geometry="euclidean"), np.eye(2))
    with pytest.raises(ValueError, match="single-head softmax"):
        riccati_covariance(Model(kernel="l2", geometry="euclidean"), np.eye(2), [0.0])
    with pytest.raises(ValueError, match="exactly one of times and t_final"):
        integrate_gaussian(m, [0.0, 0.0], np.eye(2))
    with pytest.raises(ValueError, match="dt must be >"):
        integrate_gaussian(m, [0.0, 0.0], np.eye(2), t_final=1.0, dt=0.0)
    with pytest.raises(TypeError, match="rng"):
        sample_gaussian([0.0], [[1.0]], 3, rng=None)
    with pytest.raises(ValueError, match="n must be an integer >= 1"):
        sample_gaussian([0.0], [[1.0]], 0, rng=0)
    with pytest.raises(ValueError, match="X and Y must have the same shape"):
        fit_affine(np.zeros((5, 2)), np.zeros((4, 2)))
    with pytest.raises(ValueError, match=r"Sigma must have shape \(\.\.\., 2, 2\)"):
        disc_coordinates(np.eye(3))


# ------------------------------------------------------------ property checks
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra.numpy import arrays  # noqa: E402

_mats = arrays(np.float64, (3, 3), elements=st.floats(-1.0, 1.0))


@settings(max_examples=40, deadline=None)
@given(
    Q=_mats,
    K=_mats,
    V=_mats,
    W=_mats,
    a=arrays(np.float64, (3,), elements=st.floats(-2.0, 2.0)),
    kernel=st.sampled_from(["softmax", "l2", "sinkhorn"]),
)
def test_field_and_factor_paths_agree(Q, K, V, W, a, kernel):
    """gaussian_field's (M, c) and the factor-form right-hand side give one ODE."""
    S = W @ W.T + 0.1 * np.eye(3)
    model = Model(Q=Q, K=K, V=V, kernel=kernel, geometry="euclidean")
    f = gaussian_field(model, a, S)
    da, dS = gaussian_rhs(model, a, S)
    np.testing.assert_allclose(da, f.M @ a + f.c, atol=1e-9)
    np.testing.assert_allclose(dS, f.M @ S + S @ f.M.T, atol=1e-9)
    assert np.array_equal(dS, dS.T)


@pytest.mark.parametrize("kernel", ["softmax", "l2"])
def test_empirical_jacobian_d3(kernel):
    g = np.random.default_rng(8)
    Q, K = 0.4 * g.standard_normal((2, 2, 3))
    V = np.eye(3) + 0.3 * g.standard_normal((3, 3))
    W = g.standard_normal((3, 3))
    X = sample_gaussian(np.ones(3), W @ W.T / 3 + 0.3 * np.eye(3), 3000, rng=9)
    model = Model(
        Q=Q, K=K, V=V, kernel=kernel, geometry="euclidean"
    )  # Q, K of shape (2, 3)
    fit = fit_affine(X, model.velocity(X))
    f = gaussian_field(model, *empirical_moments(X))
    # sampling error ~ 0.05 at N = 3000 for this L2 example (0.035 at N = 10^4)
    assert np.abs(fit.M - f.M).max() / np.abs(f.M).max() < 0.1
