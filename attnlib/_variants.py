r"""The attention variants of the modelling chapter, and the runs its figures show.

:data:`VARIANTS` names the model options of each variant (SA, USA, L2, sigmoid,
Sinkhorn, causal); :func:`variant_model` builds its :class:`attnlib.Model`,
:func:`variant_field` and :func:`variant_trajectory` evaluate and integrate it, and
:func:`usa_clock` is the time change that compares USA with SA. :mod:`attnlib.viz`
and :mod:`attnlib.widgets` draw these; the numbers are computed here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ._deprecation import moved_arguments
from ._results import Trajectory
from ._validation import (
    as_matrix,
    check_bool,
    check_choice,
    check_finite_result,
    check_real,
)
from .attention import Model
from .integrate import simulate

__all__ = [
    "VARIANTS",
    "variant_model",
    "usa_clock",
    "variant_field",
    "variant_trajectory",
]

TWO_PI = 2 * np.pi


# ------------------------------------------------------------ attention variants
#: Model options of each attention variant (beta and Q, K are added by
#: :func:`variant_model`).
VARIANTS: dict[str, dict[str, Any]] = {
    "SA": dict(kernel="softmax", normalization="sa"),
    "USA": dict(kernel="softmax", normalization="usa"),
    "L2": dict(kernel="l2", normalization="sa"),
    "sigmoid": dict(kernel="sigmoid", normalization="usa"),
    "Sinkhorn": dict(kernel="sinkhorn", normalization="sa", sinkhorn_tol=1e-10),
    "causal": dict(kernel="softmax", normalization="sa", mask="causal"),
}


@moved_arguments("name beta")
def variant_model(
    name: str, *, beta: float, Q: np.ndarray | None = None, K: np.ndarray | None = None
) -> Model:
    """The :class:`attnlib.Model` of the variant ``name`` (a key of :data:`VARIANTS`).

    Examples
    --------
    >>> variant_model("Sinkhorn", beta=2.0).kernel
    'sinkhorn'
    """
    check_choice(name, "name", tuple(VARIANTS))
    return Model(beta=beta, Q=Q, K=K, **VARIANTS[name])


@moved_arguments("beta Q K")
def usa_clock(
    *, beta: float, Q: np.ndarray | None = None, K: np.ndarray | None = None
) -> float:
    r"""Exponent :math:`c = \beta\|Q\|_2\|K\|_2` of the USA clock :math:`s = e^c t`.

    :math:`|\langle Qx, Ky\rangle| \le \|Q\|_2\|K\|_2` on the sphere, so the USA
    weights :math:`e^{\beta\langle Qx_i, Kx_j\rangle - c}` on this clock are at most one
    (:math:`c = \beta` for :math:`Q = K = I`).
    """
    beta = check_real(beta, "beta", low=0.0)
    norms = []
    for M, name in ((Q, "Q"), (K, "K")):
        if M is None:
            norms.append(1.0)
            continue
        M = as_matrix(M, name)
        if M.size == 0:
            raise ValueError(f"{name} must be a non-empty matrix, got shape {M.shape}")
        norms.append(float(np.linalg.norm(M, 2)))
    c = beta * norms[0] * norms[1]
    return check_finite_result(
        c, "the USA clock exponent beta |Q|_2 |K|_2", "take beta, Q or K smaller"
    )


@moved_arguments("name beta")
def variant_field(
    name: str,
    *,
    beta: float,
    Q: np.ndarray | None = None,
    K: np.ndarray | None = None,
    usa_clock_rescaled: bool = True,
) -> Callable[[np.ndarray], np.ndarray]:
    r"""Velocity field of a variant, USA optionally on its display clock.

    Every variant uses its own time, except USA with ``usa_clock_rescaled=True``,
    whose field is then multiplied by :math:`e^{-c}` with :math:`c` from
    :func:`usa_clock` (clock :math:`s = e^{c} t`; :math:`c = \beta` for
    :math:`Q = K = I`): same trajectories, bounded speed. Each call builds a fresh
    model, so the Sinkhorn warm start follows one trajectory.
    """
    usa_clock_rescaled = check_bool(usa_clock_rescaled, "usa_clock_rescaled")
    model = variant_model(name, beta=beta, Q=Q, K=K)
    if name != "USA" or not usa_clock_rescaled:
        return model.rhs
    scale = float(np.exp(-usa_clock(beta=beta, Q=Q, K=K)))
    return lambda X: scale * model.rhs(X)


@moved_arguments("name X0 beta times")
def variant_trajectory(
    name: str,
    X0: np.ndarray,
    *,
    beta: float,
    times: np.ndarray,
    Q: np.ndarray | None = None,
    K: np.ndarray | None = None,
    dt: float = 0.1,
    method: str = "heun",
    usa_clock_rescaled: bool = True,
) -> Trajectory:
    """Trajectory of ``X0`` (on the sphere) under a variant.

    USA runs on the clock of :func:`variant_field`; with
    ``usa_clock_rescaled=False`` it runs in its own time with the step shortened
    to ``0.2 * exp(-c)`` (:func:`usa_clock`) for stability.
    """
    usa_clock_rescaled = check_bool(usa_clock_rescaled, "usa_clock_rescaled")
    dt = check_real(dt, "dt", low=0.0, strict_low=True)
    model = variant_model(name, beta=beta, Q=Q, K=K)
    model.check_states(X0, "X0")  # unit rows, dimension: without a field evaluation
    if name == "USA" and not usa_clock_rescaled:
        dt = min(dt, 0.2 * float(np.exp(-usa_clock(beta=beta, Q=Q, K=K))))
    field = variant_field(
        name, beta=beta, Q=Q, K=K, usa_clock_rescaled=usa_clock_rescaled
    )
    return simulate(field, X0, times=times, dt=dt, method=method, geometry="sphere")


# ------------------------------------------------------------------- the circle
