"""The circle widgets redraw when each slider moves (driven headless, Agg)."""

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

from attnlib.widgets.circle import circle_density, circle_particles


@pytest.fixture(scope="module")
def particles():
    return circle_particles(beta=2.0, n=12, t_final=4.0, n_max=32)


@pytest.fixture(scope="module")
def density():
    return circle_density(
        beta=4.0, t_final=1.0, n_frames=5, n_particles=300, grid_size=64
    )


def _points(w):
    return w.fig.axes[0].collections[0].get_offsets()


def test_particles_initial(particles):
    assert particles.fig.axes[1].get_title() == "SA, beta = 2, n = 12"
    assert _points(particles).shape == (12, 2)
    r1 = particles.fig.axes[2].lines[0].get_ydata()
    assert r1[-1] > r1[0]  # particles gather


def test_particles_beta_slider(particles):
    r1 = particles.fig.axes[2].lines[0].get_ydata().copy()
    particles.beta.value = 8.0
    assert particles.fig.axes[1].get_title() == "SA, beta = 8, n = 12"
    assert not np.allclose(particles.fig.axes[2].lines[0].get_ydata(), r1)
    particles.beta.value = 2.0


def test_particles_n_slider(particles):
    particles.n.value = 20
    assert "n = 20" in particles.fig.axes[1].get_title()
    assert _points(particles).shape == (20, 2)
    particles.n.value = 12


def test_density_time_slider(density):
    y_end = density.fig.axes[0].lines[0].get_ydata().copy()
    density.time.value = 0.0
    assert density.fig.axes[0].get_title() == "SA mean field, beta = 4, t = 0"
    y0 = density.fig.axes[0].lines[0].get_ydata()
    assert not np.allclose(y0, y_end)
    g = np.linspace(0, 2 * np.pi, 64, endpoint=False)
    rho0 = (1 + 0.3 * np.cos(2 * g) + 0.2 * np.sin(3 * g)) / (2 * np.pi)
    assert np.allclose(y0[:-1], rho0)
    density.time.value = 1.0


def test_density_beta_slider(density):
    y = density.fig.axes[0].lines[0].get_ydata().copy()
    density.beta.value = 8.0
    assert "beta = 8" in density.fig.axes[0].get_title()
    assert not np.allclose(density.fig.axes[0].lines[0].get_ydata(), y)
    # the histogram of the particles is redrawn too
    assert len(density.fig.axes[0].patches) == 64
    density.beta.value = 4.0


def test_bad_arguments():
    with pytest.raises(ValueError, match="n"):
        circle_particles(n=100, n_max=50)
    with pytest.raises(ValueError, match="beta"):
        circle_density(beta=100.0)


def test_widget_figures_are_not_left_to_pyplot(particles, density):
    # a figure registered with pyplot would be shown a second time by the next
    # plt.show() of the chapter, below the widget
    import matplotlib.pyplot as plt

    open_figs = set(plt.get_fignums())
    assert particles.fig.number not in open_figs
    assert density.fig.number not in open_figs
