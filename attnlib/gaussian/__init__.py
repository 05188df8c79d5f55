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
  :func:`preset_model`) and the run its widget shows.

References
----------
[CACP] Castin, Ablin, Carrillo, Peyré, *A unified perspective on the dynamics of deep
Transformers*, arXiv:2501.18322 (2025), Section 4.
"""

from __future__ import annotations

from .._moved import retired
from ._dynamics import (
    GAUSSIAN_KERNELS,
    AffineField,
    GaussianTrajectory,
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
from ._presets import (
    ALPHA0,
    PRESETS,
    SIGMA0,
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
    "numerical_rank",
    # the chapter's scenarios
    "ALPHA0",
    "SIGMA0",
    "PRESETS",
    "preset_model",
]

__getattr__ = retired(
    __name__,
    {
        **{
            n: f"attnlib.gaussian._dynamics.{n} (not public: what the figures draw)"
            for n in ("condition_number", "disc_coordinates")
        },
        **{
            n: f"attnlib.gaussian._presets.{n} (not public: what the widget runs)"
            for n in (
                "KERNEL_CHOICES",
                "CloudScenario",
                "cloud_scenario",
                "ellipse_points",
            )
        },
    },
)
