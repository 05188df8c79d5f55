"""attnlib: self-attention dynamics as interacting particles.

The numerical library of the book *The Mathematics of Transformers*. Arrays have shape
``(n, d)`` for one configuration of ``n`` tokens in dimension ``d`` and ``(B, n, d)``
for an ensemble. One engine under thin models: the attention field is computed in
one place (:mod:`attnlib._kernel`) and time is stepped by one driver
(:mod:`attnlib._stepping`); :class:`Model`, the ensembles and phase diagrams, the
energy flows and the measure field are layers over them. The attention variants of the
modelling chapter are built by :func:`variant_model`. Each
later chapter's model is a topic package whose ``__init__`` says what is where:
:mod:`attnlib.clustering`, :mod:`attnlib.gaussian`, :mod:`attnlib.circle`,
:mod:`attnlib.extremisers` and :mod:`attnlib.frontiers`. The core and the topic
packages import only numpy (scipy and tqdm on first use, so that the import is
fast); the sympy derivations live in :mod:`attnlib.symbolic`, plotting in
:mod:`attnlib.viz` and widgets in :mod:`attnlib.widgets`, none of which is imported
here.
"""

from .attention import (
    KERNELS,
    NORMALIZATIONS,
    Model,
    SinkhornResult,
    attention_matrix,
    measure_field,
    sinkhorn,
    velocity,
)
from . import circle, clustering, extremisers, frontiers, gaussian
from ._validation import TooManyStepsError
from .energy import (
    energy,
    energy_D,
    energy_D_field,
    energy_D_gradient,
    energy_gradient,
    log_energy,
)
from .equiangular import (
    equiangular_gamma,
    equiangular_rhs,
    equiangular_time_to,
    gram_field,
)
from .geometry import Euclidean, Sphere
from .integrate import METHODS, Trajectory, glpr_usa_step, simulate
from .metrics import all_within, cluster_count, cluster_labels, gram, pair_fraction
from .sphere import orthonormal_frame, project, retract, sample_sphere

from ._variants import variant_model
from ._moved import install as _install_moved

from ._version import __version__ as __version__

# the module paths of earlier releases (attnlib.angles, attnlib.scenarios, ...)
_MOVED = _install_moved()

__all__ = [
    "KERNELS",
    "METHODS",
    "NORMALIZATIONS",
    "Model",
    "SinkhornResult",
    "TooManyStepsError",
    "Trajectory",
    "all_within",
    "attention_matrix",
    "cluster_count",
    "cluster_labels",
    "circle",
    "clustering",
    "energy",
    "energy_D",
    "energy_D_field",
    "energy_D_gradient",
    "energy_gradient",
    "Euclidean",
    "extremisers",
    "frontiers",
    "gaussian",
    "equiangular_gamma",
    "equiangular_rhs",
    "equiangular_time_to",
    "gram_field",
    "glpr_usa_step",
    "gram",
    "log_energy",
    "measure_field",
    "orthonormal_frame",
    "pair_fraction",
    "project",
    "retract",
    "sample_sphere",
    "simulate",
    "sinkhorn",
    "Sphere",
    "velocity",
    # the attention variants of the modelling chapter
    "variant_model",
]


def __getattr__(name: str):
    if name in _MOVED:  # attnlib.angles etc.: its names warn, not the module
        return _MOVED[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
