import numpy as np
import pytest

import attnlib as al
from attnlib import Model, sample_sphere, simulate


def test_unit_norm_after_ten_thousand_steps(rng):
    X0 = sample_sphere(16, 3, rng=rng)
    for method in ("euler", "rk4"):
        traj = simulate(
            Model(beta=2.0),
            X0,
            t_final=100.0,
            dt=0.01,
            method=method,
            save_states=False,
        )
        assert traj.n_steps == 10_000
        assert np.max(np.abs(np.linalg.norm(traj.final, axis=1) - 1)) < 1e-12


def _error(method, dt, X0, model, T, ref):
    X = simulate(model, X0, t_final=T, dt=dt, method=method).final
    return np.max(np.abs(X - ref))


@pytest.mark.parametrize(
    "method, dts, order",
    [
        ("euler", [0.04, 0.02, 0.01], 1),
        ("heun", [0.1, 0.05, 0.025], 2),
        ("rk4", [0.2, 0.1, 0.05], 4),
    ],
)
@pytest.mark.parametrize("sphere", [True, False])
def test_empirical_convergence_order(method, dts, order, sphere, rng):
    X0 = sample_sphere(8, 3, rng=rng)
    model = Model(
        beta=1.5,
        V=np.array([[1.0, 0.3, 0], [0, 0.8, 0], [0.1, 0, 1.2]]),
        geometry=("sphere" if sphere else "euclidean"),
    )
    T = 1.0
    ref = simulate(model, X0, t_final=T, dt=1e-3, method="rk4").final
    errs = [_error(method, dt, X0, model, T, ref) for dt in dts]
    slopes = np.diff(np.log(errs)) / np.diff(np.log(dts))
    assert np.all(np.abs(slopes - order) < 0.25), (errs, slopes)


def test_times_are_hit_and_observables_recorded(rng):
    X0 = sample_sphere(10, 3, rng=rng)
    times = np.array([0.0, 0.03, 0.5, 0.5, 1.7])
    traj = simulate(
        Model(beta=1.0),
        X0,
        times=times,
        dt=0.1,
        observables={"E": lambda X: al.energy(X, beta=1.0), "k": al.cluster_count},
    )
    np.testing.assert_array_equal(traj.times, times)
    assert traj.states.shape == (5, 10, 3)
    np.testing.assert_array_equal(traj.states[0], X0)
    np.testing.assert_array_equal(traj.states[2], traj.states[3])
    np.testing.assert_array_equal(traj.final, traj.states[-1])
    assert traj.observables["E"].shape == (5,)
    np.testing.assert_allclose(
        traj.observables["E"], [al.energy(x, beta=1.0) for x in traj.states]
    )
    # with save_states=False the observables are identical and no states are kept
    t2 = simulate(
        Model(beta=1.0),
        X0,
        times=times,
        dt=0.1,
        save_states=False,
        observables={"E": lambda X: al.energy(X, beta=1.0)},
    )
    assert t2.states is None
    np.testing.assert_array_equal(t2.observables["E"], traj.observables["E"])
    with pytest.raises(TypeError):
        traj.observables["new"] = 1  # read-only result


def test_ensemble_simulation_equals_members(rng):
    X0 = sample_sphere(6, 3, rng=rng, batch=4)
    betas = np.array([0.0, 1.0, 4.0, 9.0])
    traj = simulate(Model(beta=betas), X0, t_final=2.0, dt=0.05, method="heun")
    for b in range(4):
        one = simulate(Model(beta=betas[b]), X0[b], t_final=2.0, dt=0.05, method="heun")
        np.testing.assert_allclose(traj.final[b], one.final, rtol=1e-12, atol=1e-14)


def test_callable_field_in_rd():
    # linear ODE x' = -x in R^2 has the closed form x(t) = e^{-t} x0
    X0 = np.array([[1.0, 2.0], [-0.5, 0.25]])
    traj = simulate(lambda X: -X, X0, t_final=1.0, dt=0.01, geometry="euclidean")
    np.testing.assert_allclose(traj.final, np.exp(-1.0) * X0, rtol=1e-9)


def test_glpr_step_rule():
    assert al.glpr_usa_step(beta=0.0) == pytest.approx(0.1)
    assert al.glpr_usa_step(beta=4.0) == pytest.approx(0.1 / (2.0 * np.exp(3.5)))
    X0 = sample_sphere(32, 2, rng=1)
    traj = simulate(
        Model(beta=4.0, normalization="usa"),
        X0,
        t_final=1.0,
        dt=0.1,
        method="euler",
        step_rule="glpr",
    )
    assert traj.dt == pytest.approx(al.glpr_usa_step(beta=4.0))
    assert traj.n_steps == int(np.ceil(1.0 / al.glpr_usa_step(beta=4.0)))


def test_energy_monotone_along_sa_usa_and_reversed_with_minus_identity(rng):
    X0 = sample_sphere(24, 3, rng=rng)
    beta = 2.0
    E = {"E": lambda X: al.energy(X, beta=beta)}
    times = np.linspace(0, 10, 101)
    for norm in ("sa", "usa"):
        up = simulate(
            Model(beta=beta, normalization=norm),
            X0,
            times=times,
            dt=0.02,
            observables=E,
            save_states=False,
        ).observables["E"]
        assert np.all(np.diff(up) >= -1e-13), norm
        assert up[-1] > up[0] + 0.1
        down = simulate(
            Model(beta=beta, normalization=norm, V=-np.eye(3)),
            X0,
            times=times,
            dt=0.02,
            observables=E,
            save_states=False,
        ).observables["E"]
        assert np.all(np.diff(down) <= 1e-13), norm
        assert down[-1] < down[0] - 0.01


def test_usa_is_n_times_energy_gradient(rng):
    for n, beta in ((5, 0.5), (30, 3.0)):
        X = sample_sphere(n, 4, rng=rng)
        np.testing.assert_allclose(
            Model(beta=beta, normalization="usa").velocity(X),
            n * al.energy_gradient(X, beta=beta),
            rtol=1e-12,
            atol=1e-14,
        )


def test_energy_gradient_matches_finite_differences(rng):
    X = sample_sphere(6, 3, rng=rng)
    beta = 1.3
    G = al.energy_gradient(X, beta=beta)
    # directional derivative along a tangent direction through the retraction
    H = al.project(X, rng.standard_normal(X.shape))
    eps = 1e-6
    dE = al.energy(al.retract(X + eps * H), beta=beta) - al.energy(
        al.retract(X - eps * H), beta=beta
    )
    assert dE / (2 * eps) == pytest.approx(np.sum(G * H), rel=1e-7)


@pytest.mark.parametrize("normalization", ["sa", "usa"])
def test_equiangular_ode_matches_particles(normalization):
    # orthonormal initial data, d = n = 32, beta = 1: the equiangular reduction of
    # [GLPR] Thm 6.8
    X0 = al.orthonormal_frame(32, 32, rng=3)
    times = np.array([0.0, 1.0, 2.0, 3.0])
    traj = simulate(
        Model(beta=1.0, normalization=normalization), X0, times=times, dt=0.01
    )
    gamma = al.equiangular_gamma(times, beta=1.0, n=32, normalization=normalization)
    iu = np.triu_indices(32, 1)
    for k in range(4):
        G = traj.states[k] @ traj.states[k].T
        assert np.max(np.abs(G[iu] - gamma[k])) < 1e-6


def test_equiangular_reference_numbers():
    g = al.equiangular_gamma([1.0, 2.0, 3.0], beta=1.0, n=32)
    np.testing.assert_allclose(g, [0.151849, 0.589773, 0.914207], atol=1e-6)
    for beta, t in ((0.0, 5.186), (2.0, 5.458), (4.0, 6.954), (5.0, 9.544)):
        assert al.equiangular_time_to(1 - 1e-3, beta=beta, n=32) == pytest.approx(
            t, abs=1e-3
        )
    # rates near gamma = 1: 2 (SA) and 2 e^beta (USA)
    eps = 1e-7
    for beta in (0.5, 3.0):
        sa = al.equiangular_rhs(1 - eps, beta=beta, n=10) / eps
        usa = al.equiangular_rhs(1 - eps, beta=beta, n=10, normalization="usa") / eps
        assert sa == pytest.approx(2.0, rel=1e-5)
        assert usa == pytest.approx(2.0 * np.exp(beta), rel=1e-5)


def test_simulate_bad_inputs(rng):
    X0 = sample_sphere(5, 3, rng=rng)
    m = Model(beta=1.0)
    with pytest.raises(ValueError, match="dt"):
        simulate(m, X0, t_final=1.0, dt=-0.1)
    with pytest.raises(ValueError, match="dt"):
        simulate(m, X0, t_final=1.0, dt=0.0)
    with pytest.raises(ValueError, match="times"):
        simulate(m, X0, times=[0.0, 2.0, 1.0])
    with pytest.raises(ValueError, match="times"):
        simulate(m, X0, times=[-1.0, 1.0])
    with pytest.raises(ValueError, match="t_final"):
        simulate(m, X0, t_final=-1.0)
    with pytest.raises(ValueError, match="exactly one"):
        simulate(m, X0)
    with pytest.raises(ValueError, match="method"):
        simulate(m, X0, t_final=1.0, method="rk45")
    with pytest.raises(ValueError, match="unit norm"):
        simulate(m, 2 * X0, t_final=1.0)
    with pytest.raises(ValueError, match="finite"):
        simulate(m, np.full((3, 3), np.nan), t_final=1.0)
    with pytest.raises(TypeError, match="model"):
        simulate("sa", X0, t_final=1.0)
    with pytest.raises(TypeError, match="geometry"):
        simulate(lambda X: X, X0, t_final=1.0)
    with pytest.raises(TypeError, match="observable"):
        simulate(m, X0, t_final=1.0, observables={"E": 3})
    with pytest.raises(TypeError, match="dt"):
        simulate(m, X0, t_final=1.0, dt="0.1")
