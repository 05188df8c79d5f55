r"""Extremisers of the interaction energy (the fifth chapter).

The model: the energy
:math:`E_D[\mu] = \iint e^{\langle x, Dy\rangle}\,d\mu(x)\,d\mu(y)` on the
sphere ([BKKRW], the [GLPR] energy without its factor 1/2), its gradient flows for
particles and densities, and the configurations that maximise or minimise it.

* ``attnlib.extremisers._flows`` -- the flows (:func:`energy_flow`, in the
  Wasserstein or the self-attention metric), mirror descent on a grid
  (:func:`density_mirror_descent`), repulsive configurations
  (:func:`minimise_configuration`, :func:`platonic_points`, :func:`platonic_energy`)
  and the Gegenbauer expansion behind the uniform minimiser
  (:func:`gegenbauer_coefficients`, :func:`uniform_energy`);
* ``attnlib.extremisers._presets`` -- the matrices ``D`` of the chapter's widget
  and the flow each one runs.

References: [BKKRW] Burger, Kabri, Korolev, Roith, Weigand, arXiv:2501.03096;
[GLPR] Geshkovski, Letrouit, Polyanskiy, Rigollet, arXiv:2312.10794 (§3).
"""

from __future__ import annotations

from .._moved import retired
from ._flows import (
    Configuration,
    EnergyFlow,
    circle_grid,
    density_mirror_descent,
    energy_flow,
    four_particle_ratio,
    gegenbauer_coefficients,
    minimise_configuration,
    platonic_energy,
    platonic_points,
    uniform_energy,
)

__all__ = [
    "EnergyFlow",
    "energy_flow",
    "circle_grid",
    "density_mirror_descent",
    "Configuration",
    "minimise_configuration",
    "platonic_points",
    "platonic_energy",
    "gegenbauer_coefficients",
    "uniform_energy",
    "four_particle_ratio",
]


__getattr__ = retired(
    __name__,
    {
        # density_mirror_descent returns a Configuration (with weights)
        "DensityResult": "attnlib.extremisers.Configuration"
        " (what density_mirror_descent returns)",
        **{
            n: f"attnlib.extremisers._presets.{n} (not public: what the widget runs)"
            for n in ("PRESETS", "interaction_matrix", "extremiser_run")
        },
    },
)
