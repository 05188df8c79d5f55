r"""The Gaussian case: a Gaussian cloud of tokens stays Gaussian (the fourth chapter).

The model: without layer normalisation, for the softmax, L2 and Sinkhorn kernels,
the mean-field velocity at a Gaussian :math:`\mathcal N(\alpha, \Sigma)` is affine,
:math:`\Gamma(x) = Mx + c`, so the mean and covariance solve the closed system
:math:`\dot\alpha = M\alpha + c`, :math:`\dot\Sigma = M\Sigma + \Sigma M^\top`
([CACP] §4), which may blow up in finite time.

* ``attnlib.gaussian._dynamics`` -- the fields (:func:`gaussian_field`,
  :func:`gaussian_rhs`), the integrator :func:`integrate_gaussian`, the Riccati
  solution and blow-up time, and the moments of a sampled cloud (:func:`fit_affine`,
  :func:`mardia_kurtosis`, the ranks);
* ``attnlib.gaussian._presets`` -- the chapter's scenarios: the initial cloud
  (:data:`ALPHA0`, :data:`SIGMA0`), the (Q, K, V) presets (:data:`PRESETS`,
  :func:`preset_model`) and the run its figure and widget show
  (:func:`cloud_scenario`).

References
----------
[CACP] Castin, Ablin, Carrillo, Peyré, *A unified perspective on the dynamics of deep
Transformers*, arXiv:2501.18322 (2025), Section 4.
"""

from __future__ import annotations

from ._dynamics import (
    GAUSSIAN_KERNELS,
    AffineField,
    GaussianTrajectory,
    blowup_time,
    condition_number,
    disc_coordinates,
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
from ._presets import (
    ALPHA0,
    KERNEL_CHOICES,
    PRESETS,
    SIGMA0,
    CloudScenario,
    cloud_scenario,
    ellipse_points,
    preset_model,
)

__all__ = [
    # the closed dynamics of the mean and covariance
    "GAUSSIAN_KERNELS",
    "AffineField",
    "GaussianTrajectory",
    "gaussian_field",
    "gaussian_rhs",
    "integrate_gaussian",
    "riccati_covariance",
    "blowup_time",
    # sampled clouds and their moments
    "sample_gaussian",
    "empirical_moments",
    "moment_observables",
    "fit_affine",
    "mardia_kurtosis",
    "effective_rank",
    "condition_number",
    "numerical_rank",
    "disc_coordinates",
    # the chapter's scenarios
    "ALPHA0",
    "SIGMA0",
    "PRESETS",
    "KERNEL_CHOICES",
    "preset_model",
    "ellipse_points",
    "CloudScenario",
    "cloud_scenario",
]
