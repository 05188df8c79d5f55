r"""Clustering of self-attention dynamics: ensembles, phase diagrams, Wendel, sweeps.

The tools behind [GLPR] §4–6 and Figs 3–5, gathered in one package (each in the
submodule of its idea):

* :func:`simulate_ensemble` (``attnlib.clustering._ensemble``) integrates ``B``
  independent systems at once with explicit Euler steps followed by the retraction
  :math:`x \mapsto x/|x|` (the scheme of the reference code), records Gram-matrix
  observables on the fly (:class:`PairFraction`, :class:`ClusterCount`,
  :class:`InnerProductHistogram`, :class:`Energy`, from :mod:`attnlib.metrics`) and
  never stores the trajectory.
* :func:`phase_diagram` (``attnlib.clustering._phase``) estimates
  :math:`P(\langle x_i(t), x_j(t)\rangle \ge 1-\delta)` over a grid
  of :math:`(t, \beta)`; :func:`phase_transition_curve` is the curve
  :math:`\Gamma = \{(t,\beta) : \gamma_\beta(t) = 1-\delta\}` of the equiangular ODE.
* :func:`random_qkv` draws the random query, key and value matrices of [GLPR] Fig 5.
* :func:`wendel_probability` and :func:`hemisphere_probability_mc`
  (``attnlib.clustering._wendel``): [GLPR] Thm 6.7.
* :func:`sweep` (:mod:`attnlib.sweep`) maps a function over parameters, serially or
  on any :class:`concurrent.futures.Executor`, with per-task seeds from
  :class:`numpy.random.SeedSequence` so that every executor gives the same arrays.
"""

from __future__ import annotations

from .._moved import retired

from ._ensemble import EnsembleResult, simulate_ensemble
from ..metrics import (
    ClusterCount,
    Energy,
    InnerProductHistogram,
    PairFraction,
)
from ._phase import (
    QKV_KINDS,
    VALUE_KINDS,
    PhaseDiagram,
    phase_diagram,
    phase_transition_curve,
    random_qkv,
)
from ..sweep import sweep
from ._wendel import (
    HemisphereEstimate,
    hemisphere_probability_mc,
    in_hemisphere,
    wendel_probability,
)

__all__ = [
    "EnsembleResult",
    "simulate_ensemble",
    "PairFraction",
    "ClusterCount",
    "InnerProductHistogram",
    "Energy",
    "QKV_KINDS",
    "VALUE_KINDS",
    "random_qkv",
    "phase_transition_curve",
    "PhaseDiagram",
    "phase_diagram",
    "wendel_probability",
    "HemisphereEstimate",
    "hemisphere_probability_mc",
    "in_hemisphere",
    "sweep",
]

__getattr__ = retired(
    __name__,
    {
        "cluster_count_from_gram": "attnlib.metrics._cluster_count_from_gram"
        " (not public; from the states: attnlib.cluster_count)",
    },
)
