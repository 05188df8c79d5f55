r"""The frontiers of the theory (the sixth chapter), in one package.

Each tool lives in the submodule of its idea:

* where to put the layer norm: post-, pre- and peri-LN dynamics
  (:func:`NormalisedModel`, the equiangular solutions :func:`equiangular_scheme`
  and :func:`scheme_time_to`; ``attnlib.frontiers._layernorm``);
* causal attention with a positional (ALiBi) bias and what the last token retains
  (:func:`CausalModel`, :func:`retention_profile`; ``attnlib.frontiers._causal``);
* the hardmax limit :math:`\beta \to \infty` (:func:`Hardmax`;
  ``attnlib.frontiers._hardmax``);
  these three build an :class:`attnlib.Model` (``layer_norm=scheme``,
  ``mask="causal"``, ``kernel="hardmax"``);
* tokens with Brownian noise and the noise threshold (:func:`simulate_noisy`,
  :func:`noise_threshold`; ``attnlib.frontiers._noise``);
* the modes of a kernel density, how many clusters can form (:func:`circle_modes`,
  :func:`line_modes`; ``attnlib.frontiers._density_modes``);
* metastability at large :math:`\beta`, the staircase of merging clusters
  (:func:`merge_flow`; ``attnlib.frontiers._metastability``);
* the chapter's sequel, *Frontiers II* (the eighth chapter): the mean-field equation
  on :math:`S^2` solved spectrally (:func:`sphere_mean_field`;
  ``attnlib._sphere_meanfield``), the stationary states of the noisy dynamics beyond
  the linear threshold, one at a time or followed up and down in the noise
  (:func:`stationary_state`, :func:`stationary_branches`;
  ``attnlib.frontiers._stationary``), and layers whose value matrices are drawn
  afresh at every layer (:func:`resampled_run`, :func:`antipodal_probability`;
  ``attnlib.frontiers._resampled``);
* the runs the chapter's figures and widgets show (:func:`four_clusters`,
  :func:`causal_run`, :func:`voronoi_tokens`, :func:`temperature_runs`;
  ``attnlib.frontiers._scenarios``).

Like the core, it imports only numpy (scipy on first use).
"""

from __future__ import annotations

from .._moved import retired
from ._causal import (
    CAUSAL_NORMALIZATIONS,
    CausalModel,
    alibi_bias,
    positional_weights,
    renyi_centres,
    retention_estimate,
    retention_linear,
    retention_profile,
)
from ._hardmax import Hardmax, hardmax_weights
from ._density_modes import ModeCount, circle_modes, count_modes, line_modes
from ._noise import (
    NoisyTrajectory,
    funk_hecke,
    noise_threshold,
    simulate_noisy,
)
from ._layernorm import (
    EquiangularScheme,
    NormalisedModel,
    equiangular_scheme,
    scheme_time_to,
    sphere_clock,
)
from ._scenarios import (
    causal_run,
    four_clusters,
    temperature_runs,
    voronoi_tokens,
)
from ._metastability import (
    MergeFlow,
    merge_flow,
)
from .._sphere_meanfield import sphere_mean_field
from ._resampled import antipodal_probability, resampled_run
from ._stationary import stationary_branches, stationary_state

__all__ = [
    # layer normalisation
    "NormalisedModel",
    "sphere_clock",
    "EquiangularScheme",
    "equiangular_scheme",
    "scheme_time_to",
    # causal attention
    "CAUSAL_NORMALIZATIONS",
    "CausalModel",
    "alibi_bias",
    "positional_weights",
    "renyi_centres",
    "retention_profile",
    "retention_linear",
    "retention_estimate",
    # hardmax
    "hardmax_weights",
    "Hardmax",
    # noise
    "funk_hecke",
    "noise_threshold",
    "NoisyTrajectory",
    "simulate_noisy",
    # modes of kernel densities
    "ModeCount",
    "circle_modes",
    "line_modes",
    "count_modes",
    # metastability
    "MergeFlow",
    "merge_flow",
    # Frontiers II: the sphere's mean field, noise beyond the threshold,
    # weights resampled at every layer
    "sphere_mean_field",
    "stationary_state",
    "stationary_branches",
    "resampled_run",
    "antipodal_probability",
    # the chapter's scenarios
    "four_clusters",
    "causal_run",
    "voronoi_tokens",
    "temperature_runs",
]

#: Helpers that only the library calls, no longer public.
__getattr__ = retired(
    __name__,
    {
        "SCHEMES": "attnlib.frontiers._layernorm.SCHEMES"
        " (not public: the schemes of attnlib.attention.LAYER_NORMS)",
        "equiangular_scheme_rhs": "attnlib.frontiers._layernorm.equiangular_scheme_rhs"
        " (not public: what equiangular_scheme integrates)",
        "noisy_rates": "attnlib.frontiers._noise.noisy_rates"
        " (not public: what noise_threshold solves)",
        **{
            n: f"attnlib.frontiers._metastability.{n}"
            " (not public: what merge_flow integrates)"
            for n in ("cluster_energy", "weighted_angle_velocity")
        },
        "scheme_solutions": "attnlib.frontiers._scenarios.scheme_solutions"
        " (not public: what the scheme explorer draws)",
    },
)
