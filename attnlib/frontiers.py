r"""The frontiers of the theory (the sixth chapter), gathered under one name.

Each tool lives in the module of its idea; this module gathers them, as
:mod:`attnlib.circle` and :mod:`attnlib.clustering` do for theirs:

* where to put the layer norm: post-, pre- and peri-LN dynamics
  (:func:`NormalisedModel`, the equiangular solutions :func:`equiangular_scheme`
  and :func:`scheme_time_to`; :mod:`attnlib.normalisation`);
* causal attention with a positional (ALiBi) bias and what the last token retains
  (:func:`CausalModel`, :func:`retention_profile`; :mod:`attnlib.causal`);
* the hardmax limit :math:`\beta \to \infty` (:func:`Hardmax`;
  :mod:`attnlib.hardmax`);
  these three build an :class:`attnlib.Model` (``layer_norm=scheme``,
  ``mask="causal"``, ``kernel="hardmax"``);
* tokens with Brownian noise and the noise threshold (:func:`simulate_noisy`,
  :func:`noise_threshold`; :mod:`attnlib.noise`);
* the modes of a kernel density, how many clusters can form (:func:`circle_modes`,
  :func:`line_modes`; :mod:`attnlib.modes`);
* metastability at large :math:`\beta`, the staircase of merging clusters
  (:func:`merge_flow`; :mod:`attnlib.staircase`).

Like the core, it imports only numpy (scipy on first use).
"""

from __future__ import annotations

from .causal import (
    CAUSAL_NORMALIZATIONS,
    CausalModel,
    alibi_bias,
    positional_weights,
    renyi_centres,
    retention_estimate,
    retention_linear,
    retention_profile,
)
from .hardmax import Hardmax, hardmax_weights
from .modes import ModeCount, circle_modes, count_modes, line_modes
from .noise import (
    NoisyTrajectory,
    funk_hecke,
    noise_threshold,
    noisy_rates,
    simulate_noisy,
)
from .normalisation import (
    SCHEMES,
    EquiangularScheme,
    NormalisedModel,
    equiangular_scheme,
    equiangular_scheme_rhs,
    scheme_time_to,
    sphere_clock,
)
from .staircase import MergeFlow, cluster_energy, merge_flow, weighted_angle_velocity

__all__ = [
    # layer normalisation
    "SCHEMES",
    "NormalisedModel",
    "sphere_clock",
    "EquiangularScheme",
    "equiangular_scheme",
    "equiangular_scheme_rhs",
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
    "noisy_rates",
    "noise_threshold",
    "NoisyTrajectory",
    "simulate_noisy",
    # modes of kernel densities
    "ModeCount",
    "circle_modes",
    "line_modes",
    "count_modes",
    # metastability
    "cluster_energy",
    "MergeFlow",
    "merge_flow",
    "weighted_angle_velocity",
]
