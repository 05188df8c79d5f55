"""Tests of attnlib.frontiers._ffn: attention plus a perceptron block on the circle."""

from __future__ import annotations

import numpy as np
import pytest

from attnlib.circle import angle_clusters, angle_velocity, simulate_angles
from attnlib.frontiers._ffn import FeedForwardCircle, Perceptron

TWO_PI = 2 * np.pi
H = 1e-6


def _circ(a, b):
    return np.abs(np.angle(np.exp(1j * (np.asarray(a) - np.asarray(b)))))


def test_field_is_the_tangential_perceptron_and_the_derivative_of_phi():
    p = Perceptron.random(6, scale=1.3, rng=4)
    th = np.linspace(0, TWO_PI, 501)
    x = np.stack([np.cos(th), np.sin(th)], axis=-1)
    W2 = p.W1.T * p.a  # W2 = W1^T diag(a)
    out = np.maximum(x @ p.W1.T + p.b, 0.0) @ W2.T
    tangential = -np.sin(th) * out[:, 0] + np.cos(th) * out[:, 1]
    assert np.abs(p.field(th) - tangential).max() < 1e-12
    fd = (p.potential(th + H) - p.potential(th - H)) / (2 * H)
    assert np.abs(p.field(th) - fd).max() < 1e-6
    # Phi by its definition, one neuron at a time
    pre = x @ p.W1.T + p.b
    assert np.allclose(
        p.potential(th), 0.5 * (p.a * np.maximum(pre, 0) ** 2).sum(axis=1)
    )
    assert p.field(th.reshape(3, -1)).shape == (3, 167)


@pytest.mark.parametrize("beta", [0.0, 1.5])
def test_velocity_is_n_times_the_gradient_of_the_energy(beta):
    m = FeedForwardCircle(Perceptron.random(5, rng=1), beta=beta, strength=0.7)
    n = 12
    th = np.random.default_rng(2).uniform(0, TWO_PI, n)
    grad = np.array(
        [(m.energy(th + H * e) - m.energy(th - H * e)) / (2 * H) for e in np.eye(n)]
    )
    assert np.abs(n * grad - m(th)).max() < 1e-7
    # the attention part is the library's USA velocity
    m0 = FeedForwardCircle(m.perceptron, beta=beta, strength=0.0)
    assert np.array_equal(m0(th), angle_velocity(th, beta=beta))
    # batched energies are the energies of the rows
    thb = np.stack([th, th[::-1] + 0.3])
    assert np.allclose(m.energy(thb), [m.energy(thb[0]), m.energy(thb[1])])
    # the energy stays finite up to the largest beta, where e^beta / (2 beta) bounds it
    big = FeedForwardCircle(m.perceptron, beta=709.0, strength=0.0)
    assert np.isfinite(big.energy(np.zeros(3))) and np.isclose(
        big.energy(np.zeros(3)), np.exp(709.0) / (2 * 709.0)
    )


def test_energy_increases_along_a_run():
    m = FeedForwardCircle(Perceptron.random(8, rng=0), beta=1.0, strength=1.0)
    th0 = np.random.default_rng(3).uniform(0, TWO_PI, 40)
    tr = simulate_angles(m, th0, times=np.linspace(0, 20, 81), dt=0.05)
    E = m.energy(tr.states)
    assert np.all(np.diff(E) > -1e-12) and E[-1] > E[0] + 1e-3


def test_single_atom_is_stationary_exactly_at_critical_points_of_phi():
    p = Perceptron.random(8, rng=0)
    m = FeedForwardCircle(p, beta=2.0, strength=1.0)
    grid = np.linspace(0, TWO_PI, 20001)[:-1]
    phi = p.potential(grid)
    top = grid[np.argmax(phi)]
    assert abs(m(np.full(4, top))[0]) < 1e-3  # grid resolution
    assert abs(m(np.full(4, top + 0.5))[0]) > 1e-2
    # attention alone: a single cluster is stationary anywhere
    m0 = FeedForwardCircle(p, beta=2.0, strength=0.0)
    assert np.abs(m0(np.full(4, top + 0.5))).max() < 1e-15


def test_atoms_do_not_depend_on_the_initial_condition():
    """Two starts of n = 60 tokens end in the same atoms near the maxima of Phi;
    attention alone ends in one cluster whose place depends on the start."""
    p = Perceptron.random(8, rng=0)  # Phi has two local maxima
    th0 = np.random.default_rng(11).uniform(0, TWO_PI, (2, 60))
    grid = np.linspace(0, TWO_PI, 4000, endpoint=False)
    phi = p.potential(grid)
    maxima = grid[(phi > np.roll(phi, 1)) & (phi > np.roll(phi, -1))]
    assert maxima.size == 2
    for strength in (1.0, 0.0):
        m = FeedForwardCircle(p, beta=1.0, strength=strength)
        end = simulate_angles(m, th0, t_final=100.0, dt=0.1, save_states=False).final
        assert np.abs(m(end)).max() < 1e-8
        a, b = (angle_clusters(e, gap=1e-3) for e in end)
        if strength:
            assert a.count == b.count == 2
            assert np.all(_circ(a.centers, b.centers) < 0.03)
            assert np.all(_circ(a.centers, maxima) < 0.1)
        else:
            assert a.count == b.count == 1
            assert _circ(a.centers[0], b.centers[0]) > 0.5


@pytest.mark.parametrize(
    "make, error, match",
    [
        (
            lambda: Perceptron(np.ones((3, 3)), np.zeros(3), np.ones(3)),
            ValueError,
            "W1",
        ),
        (
            lambda: Perceptron(np.ones((3, 2)), np.zeros(2), np.ones(3)),
            ValueError,
            "b ",
        ),
        (
            lambda: Perceptron(np.ones((3, 2)), np.zeros(3), np.ones(4)),
            ValueError,
            "a ",
        ),
        (
            lambda: Perceptron(np.full((1, 2), np.nan), np.zeros(1), np.ones(1)),
            ValueError,
            "W1",
        ),
        (
            lambda: Perceptron(np.full((1, 2), 1e200), np.zeros(1), np.ones(1)),
            ValueError,
            "W1, b and a must be small enough",
        ),
        (lambda: Perceptron.random(0, rng=0), ValueError, "m must"),
        (lambda: Perceptron.random(2, scale=0.0, rng=0), ValueError, "scale"),
        (lambda: Perceptron.random(2, rng="x"), TypeError, "rng"),
        (lambda: FeedForwardCircle("p", beta=1.0), TypeError, "perceptron"),
        (
            lambda: FeedForwardCircle(Perceptron.random(2, rng=0), beta=-1.0),
            ValueError,
            "beta",
        ),
        (
            lambda: FeedForwardCircle(Perceptron.random(2, rng=0), beta=710.0),
            ValueError,
            "beta",
        ),
        (
            lambda: FeedForwardCircle(
                Perceptron.random(2, rng=0), beta=1.0, strength=-1.0
            ),
            ValueError,
            "strength",
        ),
    ],
)
def test_bad_input_is_a_clear_error(make, error, match):
    with pytest.raises(error, match=match):
        make()
