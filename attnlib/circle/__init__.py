r"""Self-attention on the circle :math:`S^1` (d = 2) and Kuramoto oscillators.

With :math:`x_i = (\cos\theta_i, \sin\theta_i)` the USA dynamics of [GLPR] §7 reads

.. math::

    \dot\theta_i = -\frac1n \sum_{j=1}^n e^{\beta\cos(\theta_i-\theta_j)}
        \sin(\theta_i-\theta_j),

and SA divides by :math:`\sum_k e^{\beta\cos(\theta_i-\theta_k)}` instead of
:math:`n`. At :math:`\beta = 0` this is the Kuramoto model with coupling one and no
natural frequencies. The Jacobi–Anger expansion

.. math::

    e^{\beta\cos\varphi} = I_0(\beta) + 2\sum_{k\ge1} I_k(\beta)\cos k\varphi,
    \qquad
    e^{\beta\cos\varphi}\sin\varphi = \sum_{k\ge1} \frac{2k I_k(\beta)}{\beta}
        \sin k\varphi,

turns both sums into ``K`` Fourier modes of the empirical measure, so a velocity
evaluation costs :math:`O(nK)` instead of :math:`O(n^2)`, and the mean-field
(continuity) equation for a density on the circle can be solved spectrally.

Where each part lives:

* ``attnlib.circle._angles`` -- the particle model in angles
  (:class:`CircleModel`, :func:`simulate_angles`) and its conventions (shapes of
  angle arrays, scaled Bessel functions, densities);
* ``attnlib.circle._kuramoto`` -- the Kuramoto model;
* ``attnlib.circle._meanfield`` -- the mean field and its linear theory;
* ``attnlib.circle._scenarios`` -- the runs the chapter's widgets show;
* the cluster rule on the circle, :func:`angle_clusters`, is in :mod:`attnlib.metrics`.

References
----------
[GLPR] Geshkovski, Letrouit, Polyanskiy, Rigollet, *A mathematical perspective on
Transformers*, §7. Kuramoto (1984); Strogatz, *From Kuramoto to Crawford* (2000).
"""

from __future__ import annotations

from .._moved import retired
from ._angles import (
    CircleModel,
    angle_velocity,
    bessel_modes,
    from_angles,
    kernel_coefficients,
    simulate_angles,
    to_angles,
    torus_energy,
)
from ._kuramoto import Kuramoto, kuramoto_r, natural_frequencies, order_parameter
from ._meanfield import (
    DensityTrajectory,
    circle_wasserstein,
    dominant_mode,
    growth_rates,
    mean_field,
    sample_density,
    spaced_state_eigenvalues,
)
from ..metrics import Clusters, angle_clusters

__all__ = [
    "to_angles",
    "from_angles",
    "bessel_modes",
    "kernel_coefficients",
    "angle_velocity",
    "CircleModel",
    "Kuramoto",
    "order_parameter",
    "torus_energy",
    "natural_frequencies",
    "kuramoto_r",
    "simulate_angles",
    "growth_rates",
    "dominant_mode",
    "spaced_state_eigenvalues",
    "angle_clusters",
    "Clusters",
    "mean_field",
    "DensityTrajectory",
    "sample_density",
    "circle_wasserstein",
]


__getattr__ = retired(
    __name__,
    {
        # simulate_angles returns the Trajectory of attnlib.simulate since 0.2
        "AngleTrajectory": "attnlib.Trajectory (what simulate_angles returns)",
        # natural_frequencies has the Gaussian law too (law=..., scale=...)
        "lorentzian_frequencies": "attnlib.circle._kuramoto._lorentzian_frequencies"
        " (not public; its replacement: attnlib.circle.natural_frequencies(n,"
        " scale=gamma), the same numbers)",
        **{
            n: f"attnlib.circle._scenarios.{n} (not public: the run the widgets draw)"
            for n in ("particle_run", "density_run")
        },
    },
)
