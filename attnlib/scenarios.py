r"""Scenarios of the chapters: presets and the runs behind figures and widgets.

The front ends (:mod:`attnlib.viz`, :mod:`attnlib.widgets`) only draw; the
numbers they show come from here, so a chapter, a widget and a benchmark that show
the same scenario compute it once, in the library.

* attention variants of the modelling chapter: :data:`VARIANTS`,
  :func:`variant_model`, :func:`usa_clock`, :func:`variant_field`,
  :func:`variant_trajectory`;
* the circle: :func:`particle_run`, :func:`density_run`;
* the Gaussian chapter: :data:`ALPHA0`, :data:`SIGMA0`, :data:`GAUSSIAN_PRESETS`,
  :data:`KERNEL_CHOICES`, :func:`preset_model`, :func:`ellipse_points`,
  :func:`cloud_scenario`;
* energy extremisers: :data:`EXTREMISER_PRESETS`, :func:`interaction_matrix`,
  :func:`extremiser_run`;
* the frontiers: :func:`scheme_solutions`, :func:`four_clusters`,
  :func:`causal_run`, :func:`voronoi_tokens`, :func:`temperature_runs`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ._deprecation import moved_arguments
from ._results import Trajectory, trajectory
from ._validation import (
    NORMALIZATIONS,
    TooManyStepsError,
    as_angles,
    as_finite,
    as_matrix,
    as_states,
    check_bool,
    check_choice,
    check_finite_result,
    check_int,
    check_real,
    check_rng,
    log_max,
)
from .angles import CircleModel, simulate_angles
from .extremisers import energy_flow
from .meanfield import mean_field, sample_density
from .attention import Model
from .causal import CausalModel
from .gaussian import integrate_gaussian, sample_gaussian
from .hardmax import Hardmax
from .integrate import simulate
from .normalisation import equiangular_scheme

__all__ = [
    "VARIANTS",
    "variant_model",
    "usa_clock",
    "variant_field",
    "variant_trajectory",
    "particle_run",
    "density_run",
    "ALPHA0",
    "SIGMA0",
    "GAUSSIAN_PRESETS",
    "KERNEL_CHOICES",
    "preset_model",
    "ellipse_points",
    "CloudScenario",
    "cloud_scenario",
    "EXTREMISER_PRESETS",
    "interaction_matrix",
    "extremiser_run",
    "scheme_solutions",
    "four_clusters",
    "causal_run",
    "voronoi_tokens",
    "temperature_runs",
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
@moved_arguments("beta n", renamed={"seed": "rng"})
def particle_run(
    *,
    beta: float,
    n: int,
    t_final: float = 20.0,
    n_frames: int = 81,
    rng: Any = 0,
    normalization: str = "sa",
    n_max: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Angles ``(T, n)`` at ``T = n_frames`` times from uniform random initial data.

    The first ``n`` of ``n_max`` uniform angles drawn from ``rng`` (a seed or a
    :class:`numpy.random.Generator`) are used, so the initial data of different ``n``
    drawn with one seed are nested.
    """
    beta = check_real(beta, "beta", low=0.0)
    n = check_int(n, "n", low=1)
    t_final = check_real(t_final, "t_final", low=0.0)
    n_frames = check_int(n_frames, "n_frames", low=1)
    rng = check_rng(rng)
    normalization = check_choice(normalization, "normalization", NORMALIZATIONS)
    if n_max is not None:
        n_max = check_int(n_max, "n_max", low=1)
    th0 = rng.uniform(0, TWO_PI, max(n, n_max or n))[:n]
    times = np.linspace(0, t_final, n_frames)
    model = CircleModel(beta=beta, normalization=normalization)
    dt = 0.1 if normalization == "sa" else 0.2 * np.exp(-beta)
    tr = simulate_angles(model, th0, times=times, dt=dt)
    return times, tr.states


@moved_arguments("rho0 beta times", renamed={"seed": "rng"})
def density_run(
    rho0: Any,
    *,
    beta: float,
    times: np.ndarray,
    n_particles: int,
    grid_size: int,
    rng: Any,
) -> tuple[Trajectory, np.ndarray]:
    """The SA mean-field density from ``rho0`` and ``n_particles`` particles sampled
    from it (with ``rng``, a seed or a Generator), at ``times``: ``(density
    trajectory, angles (T, n))``."""
    n_particles = check_int(n_particles, "n_particles", low=1)
    rng = check_rng(rng)
    sol = mean_field(
        rho0, beta=beta, times=times, normalization="sa", grid_size=grid_size
    )
    th0 = sample_density(sol.states[0], n_particles, rng=rng)
    model = CircleModel(beta=beta, normalization="sa")
    tr = simulate_angles(model, th0, times=times, dt=0.05)
    return sol, tr.states


# ---------------------------------------------------------------- Gaussian case
#: Initial mean of the Gaussian cloud of the chapter and its widget.
ALPHA0 = np.array([0.3, -0.2])
#: Initial covariance of the Gaussian cloud of the chapter and its widget.
SIGMA0 = np.array([[1.0, 0.3], [0.3, 0.6]])

#: name -> (Q, K, V); ``None`` entries are random (drawn from the seed).
GAUSSIAN_PRESETS = {
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
    check_choice(name, "name", tuple(GAUSSIAN_PRESETS))
    g = check_rng(rng)
    check_choice(kernel, "kernel", KERNEL_CHOICES)
    spec = GAUSSIAN_PRESETS[name]
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
EXTREMISER_PRESETS = {
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
    """The matrix ``D`` of a preset of :data:`EXTREMISER_PRESETS` at ``lam``.

    Examples
    --------
    >>> interaction_matrix("diag(1, λ) on S¹", 0.5)
    array([[1. , 0. ],
           [0. , 0.5]])
    """
    check_choice(preset, "preset", tuple(EXTREMISER_PRESETS))
    lam = check_real(lam, "lam")
    return EXTREMISER_PRESETS[preset][1](lam)


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
@moved_arguments("beta n t_final")
def scheme_solutions(*, beta: float, n: int, t_final: float = 200.0) -> dict:
    """Equiangular solutions of the three schemes on a log time grid.

    The grid is ``0`` followed by 120 points from ``0.01`` to ``t_final``, with
    ``0.01 <= t_final <= 1e4``: at the solver's tolerance (``rtol=1e-12``) a longer
    grid is slow (``t_final = 1e6`` takes about 40 s, ``1e4`` under a second).
    """
    t_final = check_real(t_final, "t_final", low=0.01, high=1e4)
    times = np.concatenate([[0.0], np.logspace(-2, np.log10(t_final), 120)])
    return {
        s: equiangular_scheme(times, beta=beta, n=n, scheme=s)
        for s in ("post", "pre", "peri")
    }


@moved_arguments("n rng", renamed={"seed": "rng"})
def four_clusters(n: int = 64, *, rng: Any = 17) -> tuple[np.ndarray, np.ndarray]:
    r"""Initial angles of [DGR]'s run: four clusters of :math:`n/4` consecutive
    tokens at :math:`(0.1, 0.7, 1.3, 1.9)\pi`, spread :math:`N(0, 0.075^2)` (drawn
    from ``rng``, a seed or a Generator; the default is [DGR]'s figure).

    Returns
    -------
    theta, labels : ndarrays, shape (n,)
    """
    n = check_int(n, "n", low=4)
    rng = check_rng(rng)
    labels = np.repeat(np.arange(4), int(np.ceil(n / 4)))[:n]
    centres = np.linspace(0.1, 1.9, 4) * np.pi
    theta = centres[labels] + rng.normal(0.0, 0.075, size=n)
    return np.mod(theta, 2 * np.pi), labels


def causal_run(
    theta0: np.ndarray,
    *,
    beta: float,
    lam: float,
    t_final: float = 10.0,
    dt: float = 0.0025,
    n_frames: int = 101,
) -> tuple[np.ndarray, np.ndarray]:
    """RK4 run of the positional causal model on the circle (slope ``lam / n``).

    Returns the output times and the angles, shape (T, n).
    """
    theta0 = as_angles(theta0, "theta0", ndims=(1,))
    lam = check_real(lam, "lam", low=0.0)
    t_final = check_real(t_final, "t_final", low=0.0)
    dt = check_real(dt, "dt", low=0.0, strict_low=True)
    n_frames = check_int(n_frames, "n_frames", low=1)
    n = theta0.size
    X0 = np.c_[np.cos(theta0), np.sin(theta0)]
    model = CausalModel(beta, slope=lam / n, normalization="positional")
    times = np.linspace(0.0, t_final, n_frames)
    tr = simulate(model, X0, times=times, dt=dt)
    return times, np.arctan2(tr.states[..., 1], tr.states[..., 0])


@moved_arguments("k m rng", renamed={"seed": "rng"})
def voronoi_tokens(k: int = 5, m: int = 30, *, rng: Any = 3) -> np.ndarray:
    """``k`` hull vertices on the unit circle followed by ``m`` tokens inside, drawn
    from ``rng`` (a seed or a Generator).

    ``k >= 1``, ``m >= 0``; returns an array of shape ``(k + m, 2)``.
    """
    k = check_int(k, "k", low=1)
    m = check_int(m, "m")
    rng = check_rng(rng)
    ang = np.sort(rng.uniform(0, 2 * np.pi, k))
    verts = np.c_[np.cos(ang), np.sin(ang)]
    inner = rng.dirichlet(np.full(k, 0.7), m) @ verts
    return np.vstack([verts, inner])


@moved_arguments("Z0 beta")
def temperature_runs(
    Z0: np.ndarray, *, beta: float | None, t_final: float = 3.0, n_frames: int = 31
) -> np.ndarray:
    """Consensus-form paths, shape (T, n, 2): hardmax if ``beta`` is None.

    ``Z0`` has shape ``(n, d)``: free tokens (not on the sphere).
    """
    Z0 = as_states(Z0, "Z0", ndims=(2,))
    if beta is not None:
        beta = check_real(beta, "beta", low=0.0)
    t_final = check_real(t_final, "t_final", low=0.0)
    n_frames = check_int(n_frames, "n_frames", low=1)
    times = np.linspace(0.0, t_final, n_frames)
    try:
        if beta is None:
            return simulate(
                Hardmax(geometry="euclidean", consensus=True), Z0, times=times, dt=0.01
            ).states
        soft = Model(beta=beta, geometry="euclidean")
        return simulate(
            lambda X: soft.rhs(X) - X, Z0, times=times, dt=0.01, geometry="euclidean"
        ).states
    except TooManyStepsError:
        raise
    except ValueError as exc:
        raise ValueError(
            "the paths from Z0 leave the float64 range: take Z0 (or beta) smaller "
            f"({exc})"
        ) from exc
