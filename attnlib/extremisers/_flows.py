r"""Extremisers of the interaction energy: gradient flows, mirror descent, repulsion.

The energy is the [BKKRW] energy of :mod:`attnlib.energy` with the factor 1/2
omitted (their code's convention),

.. math::

    E_D[\mu] = \iint e^{\langle x, D y\rangle}\,d\mu(x)\,d\mu(y),
    \qquad E_D(X) = \frac{1}{n^2}\sum_{i,j} e^{\langle x_i, D x_j\rangle},

with ``D`` symmetric. For ``D = beta * I`` it is ``2 * beta`` times the [GLPR]
energy :func:`attnlib.energy`.

Contents

* :func:`energy_flow`: gradient ascent/descent flows of :math:`E_D` for particles,
  in the Wasserstein metric (:math:`\dot x_i = \pm V_i`, the USA-type field) or in the
  reweighted self-attention metric (:math:`\dot x_i = \pm V_i / Z_i`, SA-type),
  vectorised over an ensemble ``(B, n, d)`` with one ``D`` per member, with a stable
  step-size control or the plain explicit Euler scheme of the reference code;
* :func:`density_mirror_descent`: exponentiated-gradient optimisation of the weights
  of a measure supported on a fixed grid (e.g. of the circle);
* :func:`minimise_configuration`, :func:`platonic_points`, :func:`platonic_energy`:
  repulsive configurations (``V = -I``), i.e. minimisers of :math:`E_\beta` over
  ``n`` points, and the closed-form energies of the universally optimal
  configurations on :math:`S^2` ([Cohn–Kumar 2007]);
* :func:`gegenbauer_coefficients`, :func:`uniform_energy`: the expansion
  :math:`e^{\beta t} = \sum_k a_k C_k^{(d-2)/2}(t)` with :math:`a_k > 0`, the key of
  [GLPR] Prop. 3.4 (the uniform measure minimises :math:`E_\beta`).

References: [BKKRW] Burger, Kabri, Korolev, Roith, Weigand, arXiv:2501.03096 (§3–§5,
Figs 1–7); [GLPR] Geshkovski, Letrouit, Polyanskiy, Rigollet, arXiv:2312.10794 (§3).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from .. import _kernel as kern
from .._deprecation import moved_arguments, warn_moved
from .._lazy import optimize, special
from .._special import ive, spectral_norm
from .._results import Trajectory, trajectory
from .._control import Backtracking, Fixed
from .._stepping import MAX_STEPS, drive
from .._validation import (
    as_weights,
    as_member_param,
    as_states,
    check_bool,
    check_choice,
    check_finite_result,
    check_int,
    check_real,
    check_rng,
    check_steps,
    check_unit_norm,
    exp_scale,
    exp_of_log,
    log_max,
)
from ..energy import as_interaction
from ..sphere import sample_sphere

__all__ = [
    "EnergyFlow",
    "energy_flow",
    "DensityResult",  # noqa: F822 (deprecated alias, module __getattr__)
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

DIRECTIONS = ("ascent", "descent")


def _energies(log_e, name: str):
    """``exp(log_e)``, or a ``ValueError`` pointing to the log form if it overflows."""
    return exp_of_log(log_e, what="the energy at this beta", use=name)


METRICS = ("wasserstein", "sa")
STEP_CONTROLS = ("stable", "fixed")


# ---------------------------------------------------------------------------
# Gradient flows of E_D for particles
# ---------------------------------------------------------------------------


#: The result of :func:`energy_flow` is an :class:`attnlib.Trajectory` (the name of
#: earlier releases is kept).
EnergyFlow = Trajectory


def energy_flow(
    X0: np.ndarray,
    D: np.ndarray,
    *,
    direction: str = "ascent",
    metric: str = "wasserstein",
    tau: float = 0.1,
    steps: int = 1000,
    step_control: str = "stable",
    c: float = 0.5,
    projected: bool = True,
    record_every: int = 1,
    max_halvings: int = 40,
    progress: bool = False,
) -> Trajectory:
    r"""Gradient ascent or descent of :math:`E_D` for ``n`` particles on the sphere.

    One step is an explicit Euler step followed by the retraction
    :math:`R(y) = y/|y|`:

    .. math::

        x_i \leftarrow R\big(x_i \pm \tau\, V_i / Z_i^{m}\big),\quad
        V_i = P_{x_i}\frac1n\sum_j e^{\langle x_i, D x_j\rangle} D x_j,\quad
        Z_i = \frac1n\sum_j e^{\langle x_i, D x_j\rangle},

    with :math:`m = 0` for the Wasserstein metric (``metric="wasserstein"``, the
    [BKKRW] scheme, USA-type) and :math:`m = 1` for the reweighted self-attention
    metric (``metric="sa"``, [GLPR] §3.4: this is the SA dynamics with
    :math:`Q^\top K = V = D`).

    Step-size control (``step_control``):

    * ``"stable"``: per ensemble member the step is
      :math:`\tau_k = \min(\tau, c / (w_{\max}\,\|D\|_2))`, with :math:`w_{\max}` the
      largest attention weight (:math:`\max_{ij} e^{\langle x_i, Dx_j\rangle}` for
      Wasserstein, 1 for SA), and a step is accepted only if the energy moves in the
      requested direction (else it is halved, backtracking). The energy is then
      monotone and the explicit-Euler overshoot cannot bite.
    * ``"fixed"``: plain explicit Euler with step ``tau`` and no test, as in the
      reference code ([BKKRW] Fig. 4 shows what a too-large ``tau`` does).

    Parameters
    ----------
    X0 : ndarray, shape (n, d) or (B, n, d)
        Initial unit vectors (an ensemble of ``B`` independent runs).
    D : ndarray, shape (d, d) or (B, d, d)
        Symmetric interaction matrix, one per member if 3-D.
    direction : {"ascent", "descent"}
        Maximise (ascent, the attention dynamics) or minimise (descent) :math:`E_D`.
    metric : {"wasserstein", "sa"}
    tau : float > 0
        (Largest) step size.
    steps : int >= 0
        Number of steps.
    step_control : {"stable", "fixed"}
    c : float > 0
        Safety constant of the stable step bound.
    projected : bool
        Project the field on the tangent space before the step (``True``). With
        ``False`` the ambient field
        :math:`\frac1n\sum_j e^{\langle x_i,Dx_j\rangle}Dx_j` is used, exactly as in
        the [BKKRW] reference code; after the retraction this changes the
        effective step by the factor
        :math:`1/(1 \pm \tau\langle x_i, \cdot\rangle)`.
    record_every : int >= 1
        Record the energy every this many steps (and at the end).
    max_halvings : int
        Cap on the number of halvings per step (``"stable"``).
    progress : bool
        Show a ``tqdm.auto`` progress bar.

    Returns
    -------
    Trajectory
        ``final`` of shape ``(n, d)`` or ``(B, n, d)``: the configuration after the
        last step; ``times`` of shape ``(T,)`` or ``(T, B)``: the flow time reached
        at the recorded steps (sum of the step sizes used); ``method="euler"``;
        ``dt``: ``tau``; and, in ``info`` (read as attributes):

        * ``step_indices`` (ndarray of int, shape (T,)): Step indices at which the
          energy was recorded (0 = initial state).
        * ``energies`` (ndarray, shape (T,) or (T, B)): :math:`E_D` (1/2 omitted) at the
          recorded steps.
        * ``tau`` (ndarray, shape () or (B,)): Step size used in the last step.
        * ``n_rejected`` (int): Number of (member, step) trials rejected by the energy
          test.
        * ``direction``, ``metric``, ``step_control`` (str): The options of the run.

    Examples
    --------
    >>> import numpy as np
    >>> from attnlib import sample_sphere
    >>> res = energy_flow(sample_sphere(20, 2, rng=0), np.diag([1.0, 0.5]), steps=200)
    >>> bool(np.all(np.diff(res.info["energies"]) >= -1e-12))   # ascent: monotone
    True

    References
    ----------
    [BKKRW] §5 (numerical scheme, Figs 2–4); [GLPR] §3.4 (SA as a gradient flow).
    """
    X = as_states(X0, "X0")
    check_unit_norm(X, "X0")
    single = X.ndim == 2
    if single:
        X = X[None]
    B, n, d = X.shape
    D = as_interaction(D, d, None if single else B)
    if D.ndim == 2:
        D = np.broadcast_to(D, (B, d, d))
    D = np.ascontiguousarray(D, dtype=X.dtype)
    check_choice(direction, "direction", DIRECTIONS)
    check_choice(metric, "metric", METRICS)
    check_choice(step_control, "step_control", STEP_CONTROLS)
    tau = check_real(tau, "tau", low=0.0, strict_low=True)
    steps = check_int(steps, "steps", low=0)
    c = check_real(c, "c", low=0.0, strict_low=True)
    record_every = check_int(record_every, "record_every", low=1)
    max_halvings = check_int(max_halvings, "max_halvings", low=0)
    projected = check_bool(projected, "projected")
    progress = check_bool(progress, "progress")
    sign = 1.0 if direction == "ascent" else -1.0

    s = spectral_norm(D).astype(X.dtype)  # ||D||_2 per member
    norm = np.maximum(s, np.finfo(X.dtype).tiny)
    # energies are float64 and <= e^{||D||}; the Wasserstein field, in the dtype of
    # X, is <= e^{||D||} ||D||, which is 0 for D = 0 (then E_D = 1 and nothing moves)
    s_top = float(np.max(s))
    exp_of_log(  # E_D <= e^(||D||_2)
        s_top,
        what=f"the energy e^(||D||_2) of D with ||D||_2 = {s_top:.1f}",
        use="attnlib.energy_D(..., log=True)",
    )
    big_field = s_top > 0 and s_top + np.log(s_top) > log_max(X.dtype)
    if metric == "wasserstein" and big_field:
        raise ValueError(
            f"D has ||D||_2 = {s_top:.1f}: the Wasserstein field e^(||D||_2) D x "
            f"overflows {X.dtype.name} (limit e^{log_max(X.dtype):.1f}); use float64 "
            "or metric='sa'"
        )
    escale = np.exp(s.astype(np.float64))  # float64 energies
    n_scale = (escale / n).astype(X.dtype)[:, None, None]  # in range: checked above

    def kernel(X, D, s):
        """``W = exp(<x_i, D x_j> - s)`` and the values ``D x_j``."""
        W, _ = kern.attention_weights(kern.logits(X, 1.0, D), "usa", shift=s)
        return W, X @ np.swapaxes(D, -1, -2)

    def field(X, W, DX):
        F = kern.aggregate(W, DX)  # shifted: the field is escale / n * F (W.)
        if metric == "sa":
            F /= W.sum(axis=-1, keepdims=True)
        else:
            F *= n_scale
        return kern.project(X, F) if projected else F

    def step(X, F, t):
        Y = X + (sign * t).astype(X.dtype)[:, None, None] * F
        nrm = np.linalg.norm(Y, axis=-1, keepdims=True)
        if np.any(nrm == 0) or not np.all(np.isfinite(nrm)):
            raise FloatingPointError(
                "a particle hit the origin or overflowed in the Euler step; reduce tau "
                f"(currently {tau:g}) or use step_control='stable'"
            )
        return Y / nrm

    def energies(W, escale):
        return escale * W.mean(axis=(-1, -2))

    X = X.copy()
    W, DX = kernel(X, D, s)
    st = {"X": X, "W": W, "DX": DX, "E": energies(W, escale)}
    st.update(t_acc=np.zeros(B), tau=np.full(B, tau), n_rej=0)

    def advance(st, _h, m):
        """``m`` Euler steps of size ``tau`` (``step_control="fixed"``)."""
        X, W, DX = st["X"], st["W"], st["DX"]
        for _ in range(m):
            F = field(X, W, DX)
            t = np.full(B, tau)
            X = step(X, F, t)
            W, DX = kernel(X, D, s)
            st["tau"] = t
            st["t_acc"] = st["t_acc"] + t
        st.update(X=X, W=W, DX=DX, E=None)  # E is evaluated where it is recorded
        return st

    def stable_bound(st):
        """The stable step of each member, ``c / (max W ||D||_2)``, and the field."""
        F = field(st["X"], st["W"], st["DX"])
        wmax = escale * st["W"].max(axis=(-1, -2)) if metric == "wasserstein" else 1.0
        return c / (wmax * norm), F

    def trial(st, handed):
        """Try the members ``handed.members`` (all: ``None``) at their steps and
        return those whose energy moved the wrong way; with ``handed.end = None``,
        keep the members still rejected where they were and accept the rest."""
        X, W, DX, E, F = st["X"], st["W"], st["DX"], st["E"], handed.aux
        t, bad = handed.h, handed.members
        if handed.end is None:  # accept: a rejected member takes a step of size 0
            Y, Wy, DXy, Ey = st["trial"]
            if bad.size:
                st["n_rej"] += bad.size
                t[bad] = 0.0
                Y[bad], Wy[bad], DXy[bad], Ey[bad] = X[bad], W[bad], DX[bad], E[bad]
            st.update(X=Y, W=Wy, DX=DXy, E=Ey, tau=t, t_acc=st["t_acc"] + t)
            del st["trial"]
            return st
        if bad is None:  # every member
            Y = step(X, F, t)
            Wy, DXy = kernel(Y, D, s)
            Ey = energies(Wy, escale)
            st["trial"] = (Y, Wy, DXy, Ey)
            return np.flatnonzero(sign * (Ey - E) < -1e-13 * np.abs(E))
        st["n_rej"] += bad.size
        Y, Wy, DXy, Ey = st["trial"]
        Yb = step(X[bad], F[bad], t[bad])
        Wb, DXb = kernel(Yb, D[bad], s[bad])
        Eb = energies(Wb, escale[bad])
        Y[bad], Wy[bad], DXy[bad], Ey[bad] = Yb, Wb, DXb, Eb
        return bad[sign * (Eb - E[bad]) < -1e-13 * np.abs(E[bad])]

    rec_E: list[np.ndarray] = []
    rec_t: list[np.ndarray] = []

    def observe(_k, st):
        if st["E"] is None:
            st["E"] = energies(st["W"], escale)
        rec_E.append(st["E"].copy())
        rec_t.append(st["t_acc"].copy())

    # the recorded steps are the output "times" of the driver, in steps of one
    recorded = np.unique(
        np.concatenate([np.arange(0, steps + 1, record_every), [steps]])
    )
    if step_control == "fixed":
        st = drive(
            advance,
            st,
            recorded.astype(np.float64),
            control=Fixed(1.0),
            observe=observe,
            max_steps=None,
            progress=progress,
            name="energy_flow",
        ).state
    else:
        st = drive(
            trial,
            st,
            recorded.astype(np.float64),
            # a rising energy: halve the member's step, up to max_halvings times
            control=Backtracking(tau, max_tries=max_halvings),
            bound=stable_bound,
            observe=observe,
            max_steps=None,
            progress=progress,
            name="energy_flow",
        ).state
    X, tau_used = st["X"], st["tau"]
    energies_ = np.stack(rec_E)
    times = np.stack(rec_t)
    if single:
        X, energies_, times, tau_used = X[0], energies_[:, 0], times[:, 0], tau_used[0]
    return trajectory(
        series=("step_indices", "energies"),
        times=times,
        final=X,
        method="euler",
        n_steps=steps,
        dt=float(tau),
        step_indices=recorded,
        energies=energies_,
        tau=np.asarray(tau_used),
        n_rejected=int(st["n_rej"]),
        direction=direction,
        metric=metric,
        step_control=step_control,
    )


def four_particle_ratio(X: np.ndarray, lam: float | np.ndarray) -> np.ndarray:
    r"""The [BKKRW] four-particle ratio :math:`\tanh(x_1^2)/\tanh(\lambda x_2^2)`.

    For ``D = diag(1, lam)`` on :math:`S^1`, the stationary rectangle
    :math:`(\pm a, \pm b)` satisfies :math:`\tanh(a^2)/\tanh(\lambda b^2) = \lambda`.

    Parameters
    ----------
    X : ndarray, shape (n, 2) or (B, n, 2)
    lam : float > 0, or ndarray of shape (B,) (one value per ensemble member)

    Returns
    -------
    ndarray, shape (n,) or (B, n); ``inf`` where :math:`x_2 = 0`.
    """
    X = as_states(X, "X")
    if X.shape[-1] != 2:
        raise ValueError(f"X must have shape (n, 2) or (B, n, 2), got shape {X.shape}")
    check_unit_norm(X, "X")
    lam = as_member_param(
        lam, "lam", X.shape[0] if X.ndim == 3 else None, positive=True
    )
    if np.ndim(lam):
        lam = lam[:, None]
    with np.errstate(divide="ignore"):
        return np.tanh(X[..., 0] ** 2) / np.tanh(lam * X[..., 1] ** 2)


# ---------------------------------------------------------------------------
# Measures on a grid: mirror descent on the weights
# ---------------------------------------------------------------------------


def circle_grid(m: int) -> tuple[np.ndarray, np.ndarray]:
    """``m`` equispaced points on :math:`S^1`: angles (m,) and points (m, 2)."""
    m = check_int(m, "m", low=1)
    theta = 2.0 * np.pi * np.arange(m) / m
    return theta, np.stack([np.cos(theta), np.sin(theta)], axis=-1)


def density_mirror_descent(
    D: np.ndarray,
    *,
    points: np.ndarray | None = None,
    m: int = 256,
    steps: int = 500,
    eta: float = 1.0,
    direction: str = "descent",
    w0: np.ndarray | None = None,
) -> Configuration:
    r"""Optimise :math:`E_D[\mu]` over :math:`\mu = \sum_k w_k\delta_{y_k}` on a grid.

    Mirror descent with the entropy (exponentiated gradient) on the simplex:

    .. math::

        E(w) = w^\top K w,\quad K_{kl} = e^{\langle y_k, D y_l\rangle},\qquad
        w_k \leftarrow \frac{w_k\, e^{\mp 2\eta (K w)_k}}
                            {\sum_l w_l\, e^{\mp 2\eta (K w)_l}},

    with ``-`` for descent. The weights stay positive and sum to one; the kernel is
    shifted by :math:`\|D\|_2` and the exponent by its extreme value, and the
    energies are kept as logarithms, so nothing overflows for any ``D`` (for very
    large ``D`` the factor :math:`2\eta e^{\|D\|_2}` saturates at the float64
    maximum: the step then jumps to the best vertex, as it does in exact arithmetic
    for such a step). Step-size control: a step that does not move the energy in the
    requested direction is retried with half the step (the step then grows back
    towards ``eta``), so the energy is monotone for any ``eta``.

    Parameters
    ----------
    D : ndarray, shape (d, d)
        Symmetric interaction matrix.
    points : ndarray, shape (m, d), optional
        Grid on the sphere; default: ``m`` equispaced points of :math:`S^1`.
    m : int
        Grid size when ``points`` is not given.
    steps : int
    eta : float > 0
        Largest step size of the mirror step.
    direction : {"descent", "ascent"}
    w0 : ndarray, shape (m,), optional
        Initial weights (default uniform).

    Returns
    -------
    Configuration
        ``points``: the grid nodes, ``weights``: the final probability weights,
        ``log_energies``: :math:`\log E_D` (1/2 omitted) after each step (finite
        for every ``D``, shape ``(steps + 1,)``), ``log_energy`` the last of them.

    Examples
    --------
    >>> import numpy as np
    >>> res = density_mirror_descent(np.eye(2), m=64, steps=50)
    >>> bool(np.isclose(res.energies[-1], 1.2660658777520082, rtol=1e-10))  # I_0(1)
    True

    References
    ----------
    [BKKRW] §5 (density experiments); Beck & Teboulle, mirror descent.
    """
    if points is None:
        _, points = circle_grid(m)
    points = as_states(points, "points", ndims=(2,))
    check_unit_norm(points, "points")
    mm, d = points.shape
    D = as_interaction(D, d)
    steps = check_int(steps, "steps", low=0)
    eta = check_real(eta, "eta", low=0.0, strict_low=True)
    check_choice(direction, "direction", DIRECTIONS)
    w = as_weights(w0, mm, None, np.float64).copy()
    sgn = -1.0 if direction == "descent" else 1.0
    s = float(spectral_norm(D))
    # shifted kernel e^{<y_k, D y_l> - s}: E = e^s w^T Ks w
    Ks, _ = kern.attention_weights(kern.logits(points, 1.0, D), "usa", shift=s)
    q = np.empty(steps + 1)  # shifted energies w^T Ks w (> 0)
    q[0] = w @ Ks @ w

    def mirror_step(st, handed):
        """The mirror step of size ``handed.h`` from ``st = (w, q)``, or ``None``
        when it moves the energy the wrong way (the driver then halves it)."""
        w, q_old = st
        eta_k = handed.h
        Kw = Ks @ w  # the gradient is 2 e^s Kw
        # 2 eta_k e^s, saturated at the float64 maximum (eta_k may underflow)
        log_step = np.log(2.0 * eta_k) + s if eta_k > 0 else -np.inf
        step = float(np.exp(min(log_step, log_max(np.float64))))
        z = (sgn * step) * (Kw - (Kw.max() if sgn > 0 else Kw.min()))
        w_new = w * np.exp(z)
        w_new /= w_new.sum()
        q_new = w_new @ Ks @ w_new
        return (w_new, q_new) if sgn * (q_new - q_old) >= -1e-14 * q_old else None

    def observe(k, st):
        q[k] = st[1]

    w, _ = drive(
        mirror_step,
        (w, q[0]),
        np.arange(steps + 1, dtype=np.float64),  # one output per step
        # overshoot: halve the step; then let it grow back towards eta
        control=Backtracking(eta),
        observe=observe,
        max_steps=None,  # the number of steps is an argument
        name="density_mirror_descent",
    ).state
    log_energies = check_finite_result(
        s + np.log(q),
        "the energy of the mirror descent",
        "the entries of D are too large",
    )
    return Configuration(
        points=points,
        log_energy=float(log_energies[-1]),
        log_energies=log_energies,
        weights=w,
        direction=direction,
    )


# ---------------------------------------------------------------------------
# Repulsion: optimal point configurations
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Configuration:
    """Result of :func:`minimise_configuration` and :func:`density_mirror_descent`.

    Attributes
    ----------
    points : ndarray, shape (n, d)
        Best configuration found (the grid nodes for a density).
    log_energy : float
        :math:`\\log E_\\beta` of it ([GLPR] normalisation, :func:`attnlib.energy`),
        finite for every ``beta`` (:math:`\\log E_D` of the final density).
    log_energies : ndarray, shape (restarts,) or (steps + 1,)
        Final :math:`\\log E_\\beta` of every restart, or :math:`\\log E_D` after
        each mirror-descent step.
    weights : ndarray, shape (m,), or None
        Probability weights of the points (``None``: equal weights).
    direction : str
        ``"descent"`` or ``"ascent"`` for a density, ``"descent"`` otherwise.
    energy : float
        :math:`E_\\beta` itself (a ``ValueError`` if it overflows float64, for
        ``beta`` above about 717: use ``log_energy`` there).
    energies : ndarray, shape (restarts,) or (steps + 1,)
        ``exp(log_energies)`` (same overflow rule).
    """

    points: np.ndarray = field(repr=False)
    log_energy: float
    log_energies: np.ndarray = field(repr=False)
    weights: np.ndarray | None = field(default=None, repr=False)
    direction: str = "descent"

    @property
    def energy(self) -> float:
        return float(_energies(self.log_energy, "Configuration.log_energy"))

    @property
    def energies(self) -> np.ndarray:
        return _energies(self.log_energies, f"{type(self).__name__}.log_energies")


def _ebeta_and_grad(y: np.ndarray, n: int, d: int, beta: float):
    Y = y.reshape(n, d)
    r = np.linalg.norm(Y, axis=1, keepdims=True)
    X = Y / r
    # W = e^{beta (<x_i, x_j> - 1)}: the USA weights of the kernel, shifted by beta
    W, _ = kern.attention_weights(kern.logits(X, beta), "usa", shift=beta)
    f = W.sum() / (n * n)  # = 2 beta e^{-beta} E_beta
    gx = kern.aggregate(W, X, tangent=X) * (2.0 * beta / (n * n))
    return f, (gx / r).ravel()


def minimise_configuration(
    n: int,
    d: int = 3,
    *,
    beta: float = 1.0,
    rng: np.random.Generator | int,
    restarts: int = 8,
    gtol: float = 1e-9,
) -> Configuration:
    r"""Minimise :math:`E_\beta` over configurations of ``n`` points (repulsion).

    .. math::

        E_\beta(X) = \frac{1}{2\beta n^2}\sum_{ij}e^{\beta\langle x_i,x_j\rangle}.


    This is the repulsive dynamics (``V = -I``) run to its end, i.e. an optimal
    configuration problem for the Gaussian kernel
    :math:`e^{-\beta|x-y|^2/2}` ([Cohn–Kumar 2007]). L-BFGS on unconstrained
    :math:`y_i \in \mathbb R^d` with :math:`x_i = y_i/|y_i|` (exact gradient), from
    ``restarts`` uniform random starts; the best result is returned.

    Parameters
    ----------
    n, d : int
        Number of points and ambient dimension.
    beta : float > 0
    rng : Generator or int
    restarts : int >= 1
    gtol : float
        Gradient tolerance of L-BFGS (the energy error is of its square).

    Returns
    -------
    Configuration

    Examples
    --------
    >>> res = minimise_configuration(4, 3, beta=1.0, rng=0, restarts=2)
    >>> bool(abs(res.energy - platonic_energy("tetrahedron", beta=1.0)) < 1e-10)
    True
    """
    n = check_int(n, "n", low=1)
    d = check_int(d, "d", low=1)
    beta = check_real(beta, "beta", low=0.0, strict_low=True)
    restarts = check_int(restarts, "restarts", low=1)
    check_steps(
        restarts, MAX_STEPS, what="minimise_configuration", hint="use fewer restarts"
    )
    gtol = check_real(gtol, "gtol", low=0.0, strict_low=True)
    rng = check_rng(rng)
    best, best_f, finals = None, np.inf, []
    for _ in range(restarts):
        y0 = sample_sphere(n, d, rng=rng).ravel()
        with np.errstate(all="ignore"):
            try:
                res = optimize.minimize(
                    _ebeta_and_grad,
                    y0,
                    args=(n, d, beta),
                    jac=True,
                    method="L-BFGS-B",
                    options={"gtol": gtol, "ftol": 1e-15, "maxiter": 5000},
                )
            except (TypeError, ValueError) as exc:  # a non-finite energy or gradient
                raise ValueError(
                    f"the minimisation failed at beta={beta:g} ({exc}); use a smaller "
                    "beta"
                ) from None
        f = float(res.fun)
        if not (np.isfinite(f) and np.all(np.isfinite(res.x))):
            raise ValueError(
                f"the minimisation failed at beta={beta:g} (a non-finite energy); use "
                "a smaller beta"
            )
        finals.append(f)
        if f < best_f:
            best_f, best = f, res.x.reshape(n, d)
    X = best / np.linalg.norm(best, axis=1, keepdims=True)
    log_to_e = beta - np.log(2.0 * beta)  # E = f e^beta / (2 beta)
    return Configuration(
        points=X,
        log_energy=float(np.log(best_f) + log_to_e),
        log_energies=np.log(np.asarray(finals)) + log_to_e,
    )


_PLATONIC_GRAM = {
    # name: (n, list of (inner product, multiplicity per point))
    "tetrahedron": (4, [(1.0, 1), (-1.0 / 3.0, 3)]),
    "octahedron": (6, [(1.0, 1), (0.0, 4), (-1.0, 1)]),
    "icosahedron": (12, [(1.0, 1), (5**-0.5, 5), (-(5**-0.5), 5), (-1.0, 1)]),
}


def platonic_points(name: str) -> np.ndarray:
    """Vertices of the tetrahedron (4), octahedron (6) or icosahedron (12).

    Returns
    -------
    ndarray, shape (n, 3), unit rows.
    """
    check_choice(name, "name", tuple(_PLATONIC_GRAM))
    if name == "tetrahedron":
        P = np.array([[1, 1, 1], [1, -1, -1], [-1, 1, -1], [-1, -1, 1]], dtype=float)
    elif name == "octahedron":
        P = np.vstack([np.eye(3), -np.eye(3)])
    else:
        g = (1 + 5**0.5) / 2
        P = []
        for s1 in (1, -1):
            for s2 in (1, -1):
                P += [[0, s1, s2 * g], [s1, s2 * g, 0], [s2 * g, 0, s1]]
        P = np.array(P, dtype=float)
    return P / np.linalg.norm(P, axis=1, keepdims=True)


@moved_arguments("name beta")
def platonic_energy(name: str, *, beta: float, log: bool = False) -> float:
    r"""Closed-form :math:`E_\beta` of a regular configuration on :math:`S^2`.

    Every point sees the same inner-product distribution
    :math:`\{(t_k, m_k)\}` (value, multiplicity), so

    .. math::

        E_\beta = \frac{1}{2\beta n}\sum_k m_k e^{\beta t_k};

    tetrahedron :math:`t \in \{1, -1/3^{(3)}\}`, octahedron :math:`\{1, 0^{(4)}, -1\}`,
    icosahedron :math:`\{1, \pm 5^{-1/2\,(5)}, -1\}`. These configurations are
    universally optimal (Cohn–Kumar 2007), hence minimise :math:`E_\beta` for every
    :math:`\beta > 0`.

    With ``log=True`` returns :math:`\log E_\beta` (log-sum-exp, finite for every
    ``beta``); the energy itself raises ``ValueError`` where it overflows float64.

    Examples
    --------
    >>> round(platonic_energy("octahedron", beta=1000.0, log=True), 6)  # e^1000/12000
    990.607338
    """
    check_choice(name, "name", tuple(_PLATONIC_GRAM))
    beta = check_real(beta, "beta", low=0.0, strict_low=True)
    log = check_bool(log, "log")
    n, dist = _PLATONIC_GRAM[name]
    t = np.array([t for t, _ in dist])
    m = np.array([m for _, m in dist], dtype=np.float64)
    # log sum_k m_k e^{beta t_k}, shifted by the largest t (= 1, the point itself)
    log_e = beta + np.log(np.sum(m * np.exp(beta * (t - 1.0)))) - np.log(2 * beta * n)
    return float(log_e) if log else float(_energies(log_e, "platonic_energy(log=True)"))


# ---------------------------------------------------------------------------
# Gegenbauer expansion of exp(beta t) ([GLPR] Prop. 3.4)
# ---------------------------------------------------------------------------


@moved_arguments("beta d kmax")
def gegenbauer_coefficients(
    *,
    beta: float,
    d: int,
    kmax: int,
    method: str = "bessel",
    nodes: int = 200,
    scaled: bool = False,
) -> np.ndarray:
    r"""Gegenbauer coefficients :math:`a_k` of :math:`e^{\beta t}`, :math:`\nu=(d-2)/2`.

    .. math::

        a_k = \Gamma(\nu)\Big(\frac{2}{\beta}\Big)^{\nu}(k+\nu)\, I_{k+\nu}(\beta)
        \quad (d \ge 3),\qquad
        a_0 = I_0(\beta),\ a_k = 2I_k(\beta)\ \text{with } C_k = T_k \quad (d = 2).

    All are positive for :math:`\beta > 0`, which makes :math:`(x,y)\mapsto
    e^{\beta\langle x,y\rangle}` a positive-definite kernel on :math:`S^{d-1}` and the
    uniform measure the unique minimiser of :math:`E_\beta` ([GLPR] Prop. 3.4).

    Parameters
    ----------
    beta : float > 0
    d : int >= 2
    kmax : int >= 0
        Highest degree; returns ``kmax + 1`` coefficients.
    method : {"bessel", "quadrature"}
        Closed form (modified Bessel functions) or Gauss–Gegenbauer quadrature of
        :math:`\int_{-1}^1 e^{\beta t} C_k(t)(1-t^2)^{\nu-1/2}dt / h_k`.
    nodes : int
        Quadrature nodes.
    scaled : bool
        Return :math:`e^{-\beta}a_k`, finite for every ``beta`` (through
        :func:`scipy.special.ive`, or the weight :math:`e^{\beta(t-1)}` in the
        quadrature). The unscaled coefficients grow like :math:`e^\beta` and raise
        ``ValueError`` where they overflow float64 (``beta`` above about 700).

    Returns
    -------
    ndarray, shape (kmax + 1,)

    Examples
    --------
    >>> a = gegenbauer_coefficients(beta=1000.0, d=3, kmax=2, scaled=True)
    >>> bool(np.all(a > 0) and np.all(np.isfinite(a)))
    True
    """
    beta = check_real(beta, "beta", low=0.0, strict_low=True)
    d = check_int(d, "d", low=2)
    kmax = check_int(kmax, "kmax", low=0)
    check_choice(method, "method", ("bessel", "quadrature"))
    nodes = check_int(nodes, "nodes", low=1)
    scaled = check_bool(scaled, "scaled")
    a = _gegenbauer_scaled(beta, d, kmax, method, nodes)  # e^{-beta} a_k
    if scaled:
        return a
    return exp_scale(
        a,
        beta,
        what="a Gegenbauer coefficient of e^(beta t)",
        hint="use scaled=True for e^(-beta) a_k",
    )


def _gegenbauer_scaled(
    beta: float, d: int, kmax: int, method: str, nodes: int
) -> np.ndarray:
    """The coefficients of :func:`gegenbauer_coefficients` times ``e^-beta``."""
    k = np.arange(kmax + 1)
    nu = (d - 2) / 2.0
    if method == "bessel":
        if d == 2:
            a = 2.0 * ive(k, beta)
            a[0] /= 2.0
            return a
        pref = special.gamma(nu) * (2.0 / beta) ** nu
        return pref * (k + nu) * ive(k + nu, beta)
    if d == 2:
        t, wq = special.roots_chebyt(nodes)
        C = special.eval_chebyt(k[:, None], t[None, :])
        h = np.where(k == 0, np.pi, np.pi / 2)
    else:
        t, wq = special.roots_gegenbauer(nodes, nu)
        C = special.eval_gegenbauer(k[:, None], nu, t[None, :])
        h = (
            np.pi
            * 2.0 ** (1 - 2 * nu)
            * special.gamma(k + 2 * nu)
            / (special.factorial(k) * (k + nu) * special.gamma(nu) ** 2)
        )
    return (C * (wq * np.exp(beta * (t - 1.0)))[None, :]).sum(axis=1) / h


@moved_arguments("beta d")
def uniform_energy(*, beta: float, d: int, log: bool = False) -> float:
    r"""Energy :math:`E_{\beta I}[\sigma]` (1/2 omitted) of the uniform measure.

    .. math::

        \iint e^{\beta\langle x,y\rangle}d\sigma\,d\sigma = a_0
        = \Gamma(\tfrac d2)\,(2/\beta)^{\frac d2-1} I_{\frac d2-1}(\beta),

    e.g. :math:`\sinh(1)` for :math:`d = 3`, :math:`\beta = 1` and :math:`I_0(\beta)`
    for :math:`d = 2`. Divide by :math:`2\beta` for the [GLPR] normalisation.

    With ``log=True`` returns its logarithm (through the scaled Bessel function
    :func:`scipy.special.ive`), finite for every ``beta``; the energy itself raises
    ``ValueError`` where it overflows float64.

    Examples
    --------
    >>> bool(np.isclose(uniform_energy(beta=1.0, d=3), np.sinh(1.0)))
    True
    >>> round(uniform_energy(beta=1000.0, d=3, log=True), 6)   # log(sinh(1000) / 1000)
    992.399098
    """
    beta = check_real(beta, "beta", low=0.0, strict_low=True)
    d = check_int(d, "d", low=2)
    log = check_bool(log, "log")
    nu = d / 2.0 - 1.0
    scaled = float(ive(nu, beta))
    if scaled > 1e-280:
        log_e = (
            special.gammaln(d / 2.0) + nu * np.log(2.0 / beta) + np.log(scaled) + beta
        )
    else:
        # e^-beta I_nu(beta) underflows (high dimension, small beta): the same
        # number is the limit function 0F1(; d/2; beta^2/4) of the series of I_nu
        log_e = float(np.log(special.hyp0f1(d / 2.0, beta * beta / 4.0)))
    if log:
        return float(log_e)
    return float(_energies(log_e, "uniform_energy(..., log=True)"))


def __getattr__(name: str) -> Any:
    # density_mirror_descent returns a Configuration (with weights)
    if name == "DensityResult":
        warn_moved(
            "attnlib.extremisers.DensityResult",
            "attnlib.extremisers.Configuration (what density_mirror_descent returns)",
        )
        return Configuration
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
