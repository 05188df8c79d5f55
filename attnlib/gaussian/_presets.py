r"""The Gaussian chapter's presets: the initial cloud, the (Q, K, V) scenarios, and
the run its figure and widget show (:func:`cloud_scenario`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._deprecation import moved_arguments
from .._results import Trajectory, trajectory
from .._validation import (
    TooManyStepsError,
    as_finite,
    as_matrix,
    check_choice,
    check_finite_result,
    check_int,
    check_real,
    check_rng,
)
from ..attention import Model
from ..integrate import simulate
from ._dynamics import integrate_gaussian, sample_gaussian

__all__ = [
    "ALPHA0",
    "SIGMA0",
    "PRESETS",
    "KERNEL_CHOICES",
    "preset_model",
    "ellipse_points",
    "CloudScenario",
    "cloud_scenario",
]

#: Initial mean of the Gaussian cloud of the chapter and its widget.
ALPHA0 = np.array([0.3, -0.2])
#: Initial covariance of the Gaussian cloud of the chapter and its widget.
SIGMA0 = np.array([[1.0, 0.3], [0.3, 0.6]])

#: name -> (Q, K, V); ``None`` entries are random (drawn from the seed).
PRESETS = {
    "blow-up (Q, K of the reference)": (
        np.array([[1.0, 0.2], [0.0, 0.8]]),
        np.array([[0.9, 0.0], [0.1, 1.1]]),
        None,
    ),
    "collapse onto a line (K = -Q, rank 1)": (
        np.array([[1.0, 0.5]]),
        -np.array([[1.0, 0.5]]),
        None,
    ),
    "decay to a point (Q = -I)": (-np.eye(2), np.eye(2), None),
    "rotation (A antisymmetric)": (
        np.array([[0.0, 1.0], [-1.0, 0.0]]),
        np.eye(2),
        None,
    ),
    "random Q, K, V": "random",
}


#: Kernels offered by the widget. Sinkhorn is left out: it solves a transport plan at
#: every stage of every step, and a 400-particle scenario takes 12-55 s here, far too
#: slow for a slider.
KERNEL_CHOICES = ("softmax", "l2")


@moved_arguments("name rng", renamed={"seed": "rng"})
def preset_model(name: str, *, rng: Any = 0, kernel: str = "softmax") -> Model:
    """The ``Model`` (``geometry="euclidean"``) of a preset; random ones drawn from
    ``rng`` (a seed or a Generator).

    ``kernel`` is ``"softmax"`` or ``"l2"``.
    """
    check_choice(name, "name", tuple(PRESETS))
    g = check_rng(rng)
    check_choice(kernel, "kernel", KERNEL_CHOICES)
    spec = PRESETS[name]
    if spec == "random":
        Q, K = g.standard_normal((2, 2, 2)) / np.sqrt(2)
        V = np.eye(2) + 0.5 * g.standard_normal((2, 2)) / np.sqrt(2)
    else:
        Q, K, V = spec
    return Model(Q=Q, K=K, V=V, kernel=kernel, geometry="euclidean")


def ellipse_points(alpha, Sigma, *, nsig: float = 2.0, num: int = 100) -> np.ndarray:
    """Points ``(num, 2)`` of the ellipse ``{alpha + nsig Sigma^{1/2} u : |u| = 1}``.

    ``alpha`` has shape ``(2,)``, ``Sigma`` ``(2, 2)`` (its symmetric part is used,
    negative eigenvalues count as zero), ``nsig >= 0`` and ``num >= 1``.

    Examples
    --------
    >>> ellipse_points([1.0, 0.0], np.diag([4.0, 1.0]), nsig=1.0, num=3).round(12)
    array([[ 3.,  0.],
           [-1.,  0.],
           [ 3., -0.]])
    """
    alpha = as_finite(alpha, "alpha", ndims=(1,))
    if alpha.shape != (2,):
        raise ValueError(f"alpha must have shape (2,), got shape {alpha.shape}")
    Sigma = as_matrix(Sigma, "Sigma", shape=(2, 2)).astype(np.float64)
    nsig = check_real(nsig, "nsig", low=0.0)
    num = check_int(num, "num", low=1)
    w, U = np.linalg.eigh(0.5 * (Sigma + Sigma.T))
    R = (U * np.sqrt(np.clip(w, 0.0, None))) @ U.T
    th = np.linspace(0.0, 2 * np.pi, num)
    with np.errstate(over="ignore", invalid="ignore"):
        out = alpha + nsig * np.stack([np.cos(th), np.sin(th)], 1) @ R.T
    return check_finite_result(
        out, "the ellipse", "alpha, Sigma or nsig is too large for float64"
    )


#: The result of :func:`cloud_scenario` is an :class:`attnlib.Trajectory` (the name
#: of earlier releases is kept).
CloudScenario = Trajectory


@moved_arguments("model alpha0 Sigma0", renamed={"seed": "rng"})
def cloud_scenario(
    model: Model,
    alpha0,
    Sigma0,
    *,
    n: int = 400,
    rng: Any = 0,
    t_max: float = 2.0,
    frames: int = 30,
    dt: float = 0.05,
) -> Trajectory:
    """Simulate ``n`` particles from N(alpha0, Sigma0) and the (alpha, Sigma) ODE.

    The time range stops at 90% of the blow-up time when the covariance blows up.
    Returns a :class:`attnlib.Trajectory`: the particles' ``states`` at ``times``
    and, in ``info``, the ODE's ``means`` and ``covariances`` and ``t_star`` (the
    blow-up time of the covariance, ``inf`` if none).
    """
    n = check_int(n, "n", low=1)
    rng = check_rng(rng)
    t_max = check_real(t_max, "t_max", low=0.0, strict_low=True)
    frames = check_int(frames, "frames", low=2)
    dt = check_real(dt, "dt", low=0.0, strict_low=True)
    try:
        probe = integrate_gaussian(model, alpha0, Sigma0, t_final=t_max)
    except TooManyStepsError as exc:
        raise TooManyStepsError(f"t_max = {t_max:g} is too long: {exc}") from exc
    t_end = min(t_max, 0.9 * probe.info["blowup_time"])
    if not t_end / frames > 0.0:
        t_blow = probe.info["blowup_time"]
        raise ValueError(
            f"the covariance from Sigma0 blows up at t = {t_blow:.3g}, too early "
            f"for {frames} frames in float64; take Sigma0 (or alpha0) smaller"
        )
    times = np.linspace(0.0, t_end, frames)
    ode = integrate_gaussian(model, alpha0, Sigma0, times=times)
    X0 = sample_gaussian(alpha0, Sigma0, n, rng=rng)
    try:
        tr = simulate(model, X0, times=times, dt=min(dt, t_end / frames), method="rk4")
    except TooManyStepsError:
        raise
    except ValueError as exc:
        raise ValueError(
            f"the {n} particles drawn from N(alpha0, Sigma0) leave the float64 range "
            f"before t = {t_end:.3g}: take alpha0, Sigma0 or t_max smaller ({exc})"
        ) from exc
    return trajectory(
        series=("means", "covariances"),
        times=times,
        states=tr.states,
        final=tr.final,
        method="rk4",
        n_steps=tr.n_steps,
        dt=tr.dt,
        means=ode.info["means"],
        covariances=ode.info["covariances"],
        t_star=probe.info["blowup_time"],
    )


# ------------------------------------------------------------ energy extremisers
#: name -> (dimension, function of lambda giving D)
