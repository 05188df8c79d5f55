r"""The extremiser chapter's presets: the interaction matrices ``D`` of its widget
and the energy flow each one runs (:func:`extremiser_run`).
"""

from __future__ import annotations


import numpy as np

from .._results import Trajectory
from .._validation import (
    check_choice,
    check_real,
    log_max,
)
from ._flows import energy_flow

__all__ = [
    "PRESETS",
    "interaction_matrix",
    "extremiser_run",
]

PRESETS = {
    "diag(1, λ) on S¹": (2, lambda lam: np.diag([1.0, lam])),
    "diag(-1, λ) on S¹": (2, lambda lam: np.diag([-1.0, lam])),
    "diag(1, λ, 4) on S²": (3, lambda lam: np.diag([1.0, lam, 4.0])),
    "λ·I on S²": (3, lambda lam: lam * np.eye(3)),
    "diag(1, 0, λ) on S² (PSD, kernel e₂)": (3, lambda lam: np.diag([1.0, 0.0, lam])),
    "-diag(1, λ, 2) on S² (negative definite)": (
        3,
        lambda lam: -np.diag([1.0, lam, 2.0]),
    ),
}


def interaction_matrix(preset: str, lam: float) -> np.ndarray:
    """The matrix ``D`` of a preset of :data:`PRESETS` at ``lam``.

    Examples
    --------
    >>> interaction_matrix("diag(1, λ) on S¹", 0.5)
    array([[1. , 0. ],
           [0. , 0.5]])
    """
    check_choice(preset, "preset", tuple(PRESETS))
    lam = check_real(lam, "lam")
    return PRESETS[preset][1](lam)


def extremiser_run(
    preset: str,
    lam: float,
    X0: np.ndarray,
    *,
    direction: str = "ascent",
    metric: str = "wasserstein",
    steps: int = 400,
) -> tuple[np.ndarray, Trajectory]:
    """The energy flow (:func:`attnlib.extremisers.energy_flow`, ``tau = 0.5``,
    energies every five steps) of a preset from ``X0``: ``(D, trajectory)``."""
    D = interaction_matrix(preset, lam)
    norm = float(np.linalg.norm(D, 2))
    if norm > log_max(np.float64):
        raise ValueError(
            f"lam = {lam:g} gives ||D||_2 = {norm:.3g}: the energy e^(||D||_2) "
            f"overflows float64 (limit {log_max(np.float64):.1f}); take |lam| smaller"
        )
    res = energy_flow(
        X0,
        D,
        direction=direction,
        metric=metric,
        tau=0.5,
        steps=steps,
        record_every=5,
    )
    return D, res


# ----------------------------------------------------------------- the frontiers
