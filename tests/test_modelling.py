"""Claims of the modelling chapter: sympy derivations against the numerics, mean field,
residual layers as Euler steps, gradient-flow identities, the variants' helpers."""

import matplotlib

matplotlib.use("Agg")

import base64
import io
import re

import numpy as np
import pytest
import sympy as sp
from scipy.integrate import solve_ivp

from attnlib import (
    Model,
    energy,
    energy_gradient,
    measure_field,
    retract,
    sample_sphere,
    simulate,
)
from attnlib.symbolic import energy_gradient_identity, norm_rate, two_particle_angle
from attnlib.viz._render import player_html, smallest_text
from attnlib.viz.modelling import plot_snapshots, plot_variants
from attnlib._variants import VARIANTS, variant_field
from attnlib.viz.modelling import _animate_states as animate_states
from attnlib import variant_model


# the SA field X[mu] of mu = sum_j w_j delta_{y_j} at arbitrary points, as the
# chapter uses it
meanfield_field = measure_field


# --------------------------------------------------------------------- sympy (1)
def test_norm_rate_vanishes_on_sphere_and_matches_extended_field():
    r = norm_rate(3)
    assert r.on_sphere == 0
    x, y = r.x, r.y
    expected = 2 * x.dot(y) * (1 - sum(xi**2 for xi in x))
    assert sp.simplify(r.rate - expected) == 0
    f = sp.lambdify([*x, *y], r.rate, "numpy")
    rng = np.random.default_rng(0)
    X = 1.3 * rng.standard_normal((7, 3))  # off the sphere
    Y = Model(beta=2.0, geometry="euclidean").rhs(X)  # unprojected attention output
    V = Model(beta=2.0).rhs(X)  # projected (extended) field
    numeric = 2 * np.sum(X * V, axis=1)
    symbolic = np.array([f(*X[i], *Y[i]) for i in range(7)])
    np.testing.assert_allclose(numeric, symbolic, rtol=1e-10, atol=1e-12)
    # on the sphere: zero
    Xs = sample_sphere(7, 3, rng=1)
    assert np.max(np.abs(np.sum(Xs * Model(beta=2.0).velocity(Xs), axis=1))) < 1e-14


@pytest.mark.parametrize("d", [1, 2, 4])
def test_norm_rate_other_dimensions(d):
    assert norm_rate(d).on_sphere == 0


def test_norm_rate_bad_input():
    with pytest.raises(ValueError, match="d"):
        norm_rate(0)
    with pytest.raises(TypeError, match="d"):
        norm_rate(2.5)


# --------------------------------------------------------------------- sympy (2)
def test_energy_gradient_identity_symbolic_and_numeric():
    r = energy_gradient_identity(3, 3)
    assert r.difference.is_zero_matrix
    syms = [r.beta, *list(r.X)]
    grad = sp.lambdify(syms, r.spherical_gradient, "numpy")
    en = sp.lambdify(syms, r.energy, "numpy")
    X = sample_sphere(3, 3, rng=4)
    beta = 1.7
    G = np.asarray(grad(beta, *X.ravel()), dtype=float)
    np.testing.assert_allclose(G, energy_gradient(X, beta=beta), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(
        G, Model(beta=beta, normalization="usa").velocity(X) / 3, rtol=1e-12, atol=1e-14
    )
    assert en(beta, *X.ravel()) == pytest.approx(energy(X, beta=beta), rel=1e-13)


# --------------------------------------------------------------------- sympy (3)
def test_two_particle_angle_closed_forms():
    sa = two_particle_angle("sa")
    b, th = sa.beta, sa.theta
    expected = -2 * sp.sin(th) / (1 + sp.exp(b * (1 - sp.cos(th))))
    assert sp.simplify(sa.theta_rate - expected) == 0
    usa = two_particle_angle("usa")
    assert sp.simplify(usa.theta_rate + sp.sin(th) * sp.exp(b * sp.cos(th))) == 0
    with pytest.raises(ValueError, match="normalization"):
        two_particle_angle("softmax")


@pytest.mark.parametrize("normalization", ["sa", "usa"])
def test_two_particle_angle_matches_simulation(normalization):
    beta, theta0 = 1.0, 2.0
    r = two_particle_angle(normalization)
    rate = sp.lambdify([r.theta, r.beta], r.theta_rate, "numpy")
    times = np.linspace(0.0, 6.0, 13)
    ode = solve_ivp(
        lambda t, y: [rate(y[0], beta)],
        (0, 6),
        [theta0],
        t_eval=times,
        rtol=1e-12,
        atol=1e-13,
    )
    # two particles at angle theta0 in a random plane of R^3
    F = np.linalg.qr(np.random.default_rng(5).standard_normal((3, 2)))[0].T
    X0 = np.stack([F[0], np.cos(theta0) * F[0] + np.sin(theta0) * F[1]])
    tr = simulate(
        Model(beta=beta, normalization=normalization),
        X0,
        times=times,
        dt=0.01,
        method="rk4",
    )
    c = np.clip(np.sum(tr.states[:, 0] * tr.states[:, 1], axis=1), -1, 1)
    np.testing.assert_allclose(np.arccos(c), ode.y[0], atol=1e-8)
    assert np.arccos(c)[-1] < 0.1 * theta0  # the particles merge


# ------------------------------------------------------------------- mean field
def test_empirical_field_equals_particle_velocities():
    X = sample_sphere(40, 3, rng=6)
    w = np.full(40, 1 / 40)
    for beta in (0.0, 1.0, 9.0):
        np.testing.assert_allclose(
            meanfield_field(X, X, w, beta=beta),
            Model(beta=beta).velocity(X),
            atol=1e-13,
        )


def test_field_depends_on_the_measure_only():
    X = sample_sphere(15, 3, rng=7)
    X2 = np.concatenate([X, X, X])  # every particle three times: same measure
    for norm in ("sa", "usa"):
        m = Model(beta=2.0, normalization=norm)
        np.testing.assert_allclose(m.velocity(X2)[:15], m.velocity(X), atol=1e-13)
    # weighted atoms: a measure with masses (2/3, 1/3) = particles (x, x, y)
    a = sample_sphere(2, 3, rng=8)
    v = Model(beta=1.5).velocity(a[[0, 0, 1]])
    f = meanfield_field(a, a, np.array([2 / 3, 1 / 3]), beta=1.5)
    np.testing.assert_allclose(f, v[[0, 2]], atol=1e-13)


def test_continuity_equation_weak_form():
    """d/dt int phi dmu_t = int <grad phi, X[mu_t]> dmu_t for the empirical measure."""
    a = np.array([0.3, -1.1, 0.7])
    phi = lambda X: np.exp(X @ a)  # noqa: E731
    X0 = sample_sphere(30, 3, rng=9)
    m = Model(beta=2.0)
    h = 1e-4
    tr = simulate(m, X0, times=[0.5 - h, 0.5, 0.5 + h], dt=1e-3, method="rk4")
    lhs = (phi(tr.states[2]).mean() - phi(tr.states[0]).mean()) / (2 * h)
    X = tr.states[1]
    grad = phi(X)[:, None] * a[None, :]
    field = meanfield_field(X, X, np.full(30, 1 / 30), beta=2.0)
    rhs = np.mean(np.sum(grad * field, axis=1))
    assert lhs == pytest.approx(rhs, rel=1e-6)


# ------------------------------------------------------- layers as Euler steps
def test_residual_layers_converge_to_the_ode_at_order_one():
    X0 = sample_sphere(16, 3, rng=10)
    m = Model(beta=1.0)
    T = 2.0
    ref = simulate(m, X0, t_final=T, dt=0.005, method="rk4").final
    errs = []
    Ls = [10, 20, 40, 80]
    for L in Ls:
        X = X0.copy()
        for _ in range(L):
            X = retract(X + (T / L) * m.velocity(X))  # residual + layer norm
        errs.append(np.max(np.abs(X - ref)))
    slope = np.polyfit(np.log(Ls), np.log(errs), 1)[0]
    assert -1.15 < slope < -0.85


def test_normalising_unprojected_step_is_second_order_close():
    X = sample_sphere(10, 3, rng=11)
    Y = Model(beta=1.0, geometry="euclidean").velocity(X)
    P = Model(beta=1.0).velocity(X)
    d = [np.max(np.abs(retract(X + h * Y) - (X + h * P))) for h in (1e-2, 5e-3)]
    assert d[0] / d[1] == pytest.approx(4.0, rel=0.05)


# ------------------------------------------------------- gradient-flow structure
def test_sa_is_reweighted_gradient_and_energy_rate():
    beta, n = 2.5, 20
    X = sample_sphere(n, 3, rng=12)
    Z = np.exp(beta * X @ X.T).sum(axis=1)
    v = Model(beta=beta).velocity(X)
    np.testing.assert_allclose(
        v, (n**2 / Z)[:, None] * energy_gradient(X, beta=beta), atol=1e-12
    )
    h = 1e-4
    tr = simulate(Model(beta=beta), X, times=[0, h, 2 * h], dt=h / 4, method="rk4")
    E = [energy(S, beta=beta) for S in tr.states]
    dEdt = (-3 * E[0] + 4 * E[1] - E[2]) / (2 * h)
    assert dEdt == pytest.approx(np.sum(Z * np.sum(v * v, axis=1)) / n**2, rel=1e-6)
    vu = Model(beta=beta, normalization="usa").velocity(X)
    g = energy_gradient(X, beta=beta)
    assert np.sum(g * vu) == pytest.approx(n * np.sum(g * g), rel=1e-12)


def test_multihead_is_sum_of_heads():
    rng = np.random.default_rng(13)
    heads = [tuple(rng.standard_normal((3, 3)) for _ in range(3)) for _ in range(2)]
    X = sample_sphere(9, 3, rng=14)
    total = Model(beta=1.0, heads=heads).velocity(X)
    parts = sum(
        Model(beta=1.0, Q=q, K=k, V=v, geometry="euclidean").velocity(X)
        for q, k, v in heads
    )
    parts = parts - np.sum(parts * X, axis=1, keepdims=True) * X
    np.testing.assert_allclose(total, parts, atol=1e-12)


def test_l2_equals_softmax_on_sphere_with_equal_q_k():
    X = sample_sphere(12, 4, rng=15)
    Q = np.random.default_rng(16).standard_normal((4, 4)) / 2 + np.eye(4)
    A1 = Model(beta=3.0, kernel="l2").attention(X)
    A2 = Model(beta=3.0).attention(X)
    np.testing.assert_allclose(A1, A2, atol=1e-14)
    B1 = Model(beta=3.0, kernel="l2", Q=Q, K=Q).attention(X)
    B2 = Model(beta=3.0, Q=Q, K=Q).attention(X)
    assert np.max(np.abs(B1 - B2)) > 1e-3  # |Qx| is not constant on the sphere


# --------------------------------------------------------------- variant helpers


def test_variant_field_usa_clock_and_models():
    X = sample_sphere(10, 3, rng=19)
    np.testing.assert_allclose(
        variant_field("USA", beta=3.0)(X),
        np.exp(-3.0) * Model(beta=3.0, normalization="usa").velocity(X),
        atol=1e-14,
    )
    np.testing.assert_allclose(
        variant_field("SA", beta=3.0)(X), Model(beta=3.0).velocity(X)
    )
    assert variant_model("causal", beta=1.0).mask == "causal"
    with pytest.raises(ValueError, match="name"):
        variant_model("relu", beta=1.0)


def test_plot_variants_matrices_and_trajectories():
    X0 = sample_sphere(8, 3, rng=20)
    fig, mats, trajs = plot_variants(X0, beta=2.0, times=np.linspace(0, 2, 5))
    assert set(mats) == set(VARIANTS) == set(trajs)
    np.testing.assert_allclose(mats["SA"].sum(axis=1), 1.0)
    np.testing.assert_allclose(mats["Sinkhorn"].sum(axis=0), 1.0, atol=1e-9)
    assert np.all(np.triu(mats["causal"], 1) == 0)
    # USA is shown as n e^{-beta} A
    np.testing.assert_allclose(mats["USA"], np.exp(2.0 * (X0 @ X0.T - 1)))
    for tr in trajs.values():
        np.testing.assert_allclose(np.linalg.norm(tr.states, axis=-1), 1.0, atol=1e-12)
    assert not np.allclose(trajs["SA"].final, trajs["causal"].final)
    np.testing.assert_allclose(
        trajs["causal"].states[:, 0], X0[0][None].repeat(5, 0), atol=1e-14
    )  # the first token attends only to itself
    assert len(fig.axes) == 2 * len(VARIANTS) + 1


def test_animation_and_snapshots():
    X0 = sample_sphere(6, 3, rng=21)
    tr = simulate(Model(beta=1.0), X0, times=np.linspace(0, 1, 4), dt=0.1)
    anim = animate_states(tr.states, [f"{t:.1f}" for t in tr.times])
    html = player_html(anim)
    assert html.count("data:image/png") == 4
    assert "//" not in "".join(re.findall(r"<link[^>]*>", html))  # no CDN stylesheet
    assert "<link" in anim.to_jshtml()  # matplotlib's own player has one
    fig = plot_snapshots(tr, [0, 3])
    assert [ax.get_title() for ax in fig.axes] == ["t = 0", "t = 1"]
    with pytest.raises(ValueError, match="labels"):
        animate_states(tr.states, ["a"])
    with pytest.raises(ValueError, match="states"):
        animate_states(tr.states[..., :2], ["a"] * 4)


def _player_frames(page):
    found = re.findall(
        r'frames\[\d+\] = "data:image/png;base64,([A-Za-z0-9+/=\\\s]+)"', page
    )
    return [base64.b64decode(re.sub(r"[\\\s]", "", b64)) for b64 in found]


def _pixels(png):
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(png)))


def test_player_frames_are_palette_pngs_close_to_matplotlibs():
    # the frames are what a page with a player weighs: a palette of 256 colours
    # shrinks them and leaves the picture as it was to within rounding
    from PIL import Image

    from bookext.latex import last_frame

    X0 = sample_sphere(32, 3, rng=22)
    tr = simulate(Model(beta=4.0), X0, times=np.linspace(0, 6, 6), dt=0.05)
    anim = animate_states(tr.states, [f"{t:.1f}" for t in tr.times])
    raw = _player_frames(anim.to_jshtml())
    page = player_html(anim)
    small = _player_frames(page)
    plain = _player_frames(player_html(anim, colors=None))
    assert len(small) == len(plain) == len(raw) == 6
    for a, b in zip(raw, plain):  # matplotlib's pixels, with their text size
        assert smallest_text(a) is None and smallest_text(b) is not None
        assert np.array_equal(_pixels(a), _pixels(b))
    assert sum(map(len, small)) < 0.7 * sum(map(len, raw))
    for a, b in zip(raw, small):
        A = np.asarray(Image.open(io.BytesIO(a)).convert("RGB"), dtype=int)
        pb = Image.open(io.BytesIO(b))
        assert pb.mode == "P"
        B = np.asarray(pb.convert("RGB"), dtype=int)
        assert A.shape == B.shape
        d = np.abs(A - B).max(axis=-1)
        assert d.mean() < 1.0 and (d > 8).mean() < 0.01
    assert last_frame(page) == small[-1]  # what the PDF prints
    with pytest.raises(ValueError, match="colors"):
        player_html(anim, colors=1)
    with pytest.raises(TypeError, match="colors"):
        player_html(anim, colors=2.5)


def test_sinkhorn_variant_field_matches_cold_core_solve():
    X = sample_sphere(20, 3, rng=17)
    Q = np.eye(3) + 0.3 * np.random.default_rng(18).standard_normal((3, 3))
    for beta in (0.5, 4.0):
        f = variant_field("Sinkhorn", beta=beta, Q=Q, K=Q)
        cold = Model(beta=beta, Q=Q, K=Q, kernel="sinkhorn", sinkhorn_warm_start=False)
        for _ in range(2):  # the second call is warm-started by the first
            np.testing.assert_allclose(f(X), cold.velocity(X), atol=1e-9)
