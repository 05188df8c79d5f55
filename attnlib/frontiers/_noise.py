r"""Tokens with independent Brownian noise on the sphere, and the noise threshold.

Each token receives its own Brownian motion of intensity :math:`\sigma` on
:math:`S^{d-1}` (generator :math:`\sigma\Delta_{S^{d-1}}`):

.. math::

    dx_i = v_i(X)\,dt + \sqrt{2\sigma}\,P_{x_i}\,dB_i - \sigma(d-1)x_i\,dt

(Itô form; the last term keeps :math:`|x_i| = 1`). The mean-field equation gains
:math:`\sigma\Delta\rho`. At the uniform measure the linearisation is diagonal on
spherical harmonics of degree :math:`\ell`, with eigenvalues
(Funk–Hecke, :math:`c_\ell(\beta) = \Gamma(\tfrac d2)(\tfrac2\beta)^{d/2-1}
I_{\ell+d/2-1}(\beta)` the coefficient of :math:`e^{\beta t}` on degree
:math:`\ell`)

.. math::

    \lambda_\ell = \ell(\ell+d-2)\Big(\frac{c_\ell}{\beta N} - \sigma\Big),
    \qquad N = 1\ (\text{USA}),\quad N = c_0\ (\text{SA}).

Since :math:`I_\nu(\beta)` decreases in :math:`\nu`, the degree :math:`\ell = 1` is
the last to become stable as :math:`\sigma` grows: the uniform state is linearly
stable exactly above

.. math::

    \sigma_c(\beta, d) = \frac{c_1}{\beta N} =
    \frac{I_{d/2}(\beta)}{\beta\,I_{d/2-1}(\beta)}\ (\text{SA}),\qquad
    \Gamma(\tfrac d2)\Big(\frac2\beta\Big)^{d/2-1}\frac{I_{d/2}(\beta)}{\beta}\
    (\text{USA}).

:func:`simulate_noisy` integrates the particles by Euler–Maruyama with retraction,
:math:`x_i \leftarrow R\big(x_i + h\,v_i + \sqrt{2\sigma h}\,P_{x_i}\xi_i\big)`,
:math:`\xi_i \sim N(0, I_d)`: the retraction supplies the Itô drift
:math:`-\sigma(d-1)x_i h` to first order, and the scheme has weak order one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from .. import _kernel as kern
from .._deprecation import moved_arguments
from .._lazy import special

from .._validation import (
    NORMALIZATIONS,
    as_finite,
    as_member_param,
    check_choice,
    check_int,
    check_real,
    check_rng,
    exp_scale,
)
from .._control import Fixed
from .._stepping import (
    MAX_STEPS,
    Outcome,
    Recorder,
    check_observables,
    drive,
    output_times,
)
from ..integrate import Dynamics, Trajectory

__all__ = [
    "funk_hecke",
    "noisy_rates",
    "noise_threshold",
    "NoisyTrajectory",
    "simulate_noisy",
]


@moved_arguments("ell beta d")
def funk_hecke(ell: Any, *, beta: float, d: int) -> np.ndarray:
    r"""Coefficient :math:`c_\ell(\beta)` of :math:`e^{\beta\langle x, y\rangle}` on
    spherical harmonics of degree :math:`\ell` (uniform probability on
    :math:`S^{d-1}`): :math:`\int e^{\beta\langle x, y\rangle}Y_\ell(y)\,d\sigma(y) =
    c_\ell Y_\ell(x)`.

    Examples
    --------
    >>> import numpy as np
    >>> c = funk_hecke([0, 1], beta=2.0, d=3)  # sinh(b)/b and (b cosh b - sinh b)/b^2
    >>> bool(np.allclose(c, [np.sinh(2) / 2, (2 * np.cosh(2) - np.sinh(2)) / 4]))
    True
    """
    beta = check_real(beta, "beta", low=0.0, strict_low=True)
    d = check_int(d, "d", low=2)
    ell = _check_ell(ell)
    nu = d / 2 - 1
    log_pref = special.gammaln(d / 2) + nu * np.log(2 / beta) + beta
    c = special.ive(ell + nu, beta)
    if not np.all(np.isfinite(c)):
        raise ValueError(
            f"the Bessel function I_(ell + d/2 - 1)(beta) is not available in float64 "
            f"for ell up to {np.max(ell):g}, d={d}, beta={beta:g}; use a smaller beta "
            "or ell"
        )
    return exp_scale(
        c,
        log_pref,
        what=f"the Funk-Hecke coefficient at beta={beta:g}",
        hint="use a smaller beta",
    )


def _check_ell(ell: Any) -> np.ndarray:
    ell = as_finite(ell, "ell")
    if np.any(ell < 0) or np.any(ell != np.round(ell)):
        raise ValueError("ell must be non-negative integers")
    return ell


@moved_arguments("ell beta d sigma")
def noisy_rates(
    ell: Any, *, beta: float, d: int, sigma: float, normalization: str = "sa"
) -> np.ndarray:
    r"""Growth rates :math:`\lambda_\ell` of degree-:math:`\ell` perturbations of the
    uniform measure (see the module docstring)."""
    sigma = check_real(sigma, "sigma", low=0.0)
    check_choice(normalization, "normalization", NORMALIZATIONS)
    ell = _check_ell(ell)
    c = funk_hecke(ell, beta=beta, d=d)
    N = 1.0 if normalization == "usa" else float(funk_hecke(0, beta=beta, d=d))
    return ell * (ell + d - 2) * (c / (beta * N) - sigma)


@moved_arguments("beta d")
def noise_threshold(*, beta: float, d: int, normalization: str = "sa") -> float:
    r"""The critical noise :math:`\sigma_c(\beta, d)` above which the uniform measure
    is linearly stable.

    Examples
    --------
    >>> import numpy as np
    >>> b = 4.0  # d = 3, SA: the Langevin function (coth b - 1/b) over b
    >>> bool(np.isclose(noise_threshold(beta=b, d=3), (1 / np.tanh(b) - 1 / b) / b))
    True
    >>> round(noise_threshold(beta=1e-6, d=5), 6)  # beta -> 0: 1/d
    0.2
    """
    check_choice(normalization, "normalization", NORMALIZATIONS)
    beta = check_real(beta, "beta", low=0.0, strict_low=True)
    d = check_int(d, "d", low=2)
    if normalization == "sa":
        # I_(d/2)(beta) / I_(d/2-1)(beta) / beta, whose Bessel functions underflow
        # (beta -> 0) or are not computed (beta > 1e6): there its two-term series
        if beta < 1e-6:
            return (1.0 - beta * beta / (d * (d + 2))) / d
        if beta > 1e6:
            return (1.0 - (d - 1) / (2.0 * beta)) / beta
        return float(special.ive(d / 2, beta) / (beta * special.ive(d / 2 - 1, beta)))
    return float(funk_hecke(1, beta=beta, d=d) / beta)


#: The result of :func:`simulate_noisy` is the :class:`attnlib.Trajectory` of
#: :func:`attnlib.simulate` (``method="euler-maruyama"``); the old name is kept.
NoisyTrajectory = Trajectory


def simulate_noisy(
    model: Any,
    X0: Any,
    *,
    sigma: Any,
    rng: np.random.Generator | int,
    times: Any = None,
    t_final: float | None = None,
    dt: float = 0.01,
    observables: Mapping[str, Callable[[np.ndarray], Any]] | None = None,
    save_states: bool = True,
    max_steps: int = MAX_STEPS,
) -> NoisyTrajectory:
    r"""Euler–Maruyama with retraction for tokens with Brownian noise on the sphere.

    Parameters
    ----------
    model : Dynamics
        A model of the library on the sphere (e.g. :class:`attnlib.Model`): its
        ``rhs`` is evaluated once per step.
    X0 : ndarray, shape (n, d) or (B, n, d)
        Unit initial tokens.
    sigma : float or ndarray of shape (B,)
        Noise intensity :math:`\sigma \ge 0` (one per ensemble member if an array).
    rng : Generator or int
        Source of the noise.
    times, t_final, dt, observables, save_states, max_steps
        As in :func:`attnlib.simulate`.

    Returns
    -------
    Trajectory
        With ``method="euler-maruyama"`` (``NoisyTrajectory`` is the same class).

    Examples
    --------
    >>> from attnlib import Model, sample_sphere
    >>> tr = simulate_noisy(Model(beta=1.0), sample_sphere(8, 3, rng=0), sigma=0.1,
    ...                     rng=1, t_final=0.5, dt=0.05)
    >>> tr.final.shape, tr.n_steps
    ((8, 3), 10)
    """
    if not isinstance(model, Dynamics):
        raise TypeError(
            "model must be an attnlib model on the sphere (the Dynamics protocol: "
            f"sphere, check_states, rhs, stable_step), got {type(model).__name__}"
        )
    if not model.sphere:
        raise ValueError("simulate_noisy integrates models on the sphere")
    X = model.check_states(X0, "X0").copy()
    sig = as_member_param(
        sigma, "sigma", X.shape[0] if X.ndim == 3 else None, states="X0"
    )
    if np.ndim(sig):
        sig = sig.reshape(-1, 1, 1)
    rng = check_rng(rng)
    times = output_times(times, t_final)
    dt = check_real(dt, "dt", low=0.0, strict_low=True)
    max_steps = check_int(max_steps, "max_steps", low=1)
    obs = check_observables(observables)
    record = Recorder(times.size, X, obs, save_states)

    def advance(X, h, m):
        # m Euler-Maruyama steps of size h for the driver (the Generator advances);
        # h a numpy float64, as the states of float32 runs have always been promoted
        h = np.float64(h)
        amp = np.sqrt(2.0 * sig * h)
        for _ in range(m):
            xi = rng.standard_normal(X.shape)
            kern.project(X, xi)
            X = kern.retract(X + h * model.rhs(X) + amp * xi)
        return X

    run = drive(
        advance,
        X,
        times,
        control=Fixed(dt),
        observe=record,
        max_steps=max_steps,
        name="simulate_noisy",
        advice={Outcome.BUDGET_EXHAUSTED: "increase dt or max_steps"},
    )
    X, n_steps = run.state, run.n_steps
    return Trajectory(
        times, record.states, record.observables(), X, "euler-maruyama", n_steps, dt
    )
