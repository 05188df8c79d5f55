r"""The Gaussian case: exact mean and covariance dynamics of the Transformer PDE.

Without layer normalisation, tokens live in :math:`\mathbb R^d` and the mean-field
velocity of [CACP] at :math:`x` is an average of :math:`Vy` over a reweighting of
:math:`\mu` that depends on :math:`x`. When :math:`\mu = \mathcal N(\alpha, \Sigma)`
the reweighted measure is again Gaussian with a mean affine in :math:`x`, so the
velocity field is affine, :math:`\Gamma(x) = Mx + c`, and the flow keeps
:math:`\mu` Gaussian with

.. math::

    \dot\alpha = M\alpha + c, \qquad \dot\Sigma = M\Sigma + \Sigma M^\top .

With :math:`A = \beta K^\top Q` (the weight of :math:`y` seen from :math:`x` is
:math:`e^{\beta\langle Qx, Ky\rangle} = e^{y^\top A x}`):

* softmax: :math:`M = V\Sigma A`, :math:`c = V\alpha`, hence
  :math:`\dot\alpha = V(I + \Sigma A)\alpha` and
  :math:`\dot\Sigma = V\Sigma A\Sigma + \Sigma A^\top\Sigma V^\top`;
* L2, weight :math:`e^{-\beta|Qx-Ky|^2/2}`, with :math:`G = \beta K^\top K`,
  :math:`H = \beta K^\top Q` and :math:`S = (\Sigma^{-1} + G)^{-1}
  = \Sigma(I + G\Sigma)^{-1}`: :math:`M = VSH`, :math:`c = V(I+\Sigma G)^{-1}\alpha`;
* Sinkhorn (entropic plan, :math:`\varepsilon = 1`, cost :math:`-y^\top A x`, both
  marginals :math:`\mu`): with :math:`\Sigma = LL^\top`, :math:`B = L^\top A L` and
  :math:`D^\top = 2B\,(I + (I + 4B^\top B)^{1/2})^{-1}` (the whitened
  cross-covariance of the plan), :math:`ML = VLD^\top` and
  :math:`\dot\alpha = V\alpha`;
* several heads: the sum of the single-head fields.

Softmax with the ``"usa"`` normalisation, the sigmoid kernel and masks do not keep
Gaussians Gaussian and are rejected.

The integrator :func:`integrate_gaussian` evolves a factor :math:`\Sigma = LL^\top`
(the affine flow moves it by :math:`\dot L = ML`), so :math:`\Sigma` stays symmetric
positive semi-definite by construction, takes steps proportional to the inverse
growth rate, and stops with a flag when :math:`\operatorname{tr}\Sigma` explodes.

References
----------
Castin, Ablin, Carrillo, Peyré, *A unified perspective on the dynamics of deep
Transformers*, arXiv:2501.18322 (2025), Section 4 (Gaussian case).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import (
    as_matrix,
    as_numeric,
    check_bool,
    check_finite_result,
    as_states,
    check_int,
    check_real,
    check_rng,
    check_steps,
)
from ..attention import Model
from .._control import Adaptive
from .._results import Trajectory, trajectory
from .._stepping import (
    MAX_STEPS,
    Outcome,
    drive,
    output_times,
    planned_steps,
    rk_step,
)

__all__ = [
    "AffineField",
    "GaussianTrajectory",
    "gaussian_field",
    "gaussian_rhs",
    "integrate_gaussian",
    "riccati_covariance",
    "blowup_time",
    "sample_gaussian",
    "empirical_moments",
    "moment_observables",
    "fit_affine",
    "mardia_kurtosis",
    "effective_rank",
    "condition_number",
    "numerical_rank",
    "disc_coordinates",
    "GAUSSIAN_KERNELS",
]

#: The kernels for which Gaussian measures stay Gaussian (closed-form fields).
GAUSSIAN_KERNELS = ("softmax", "l2", "sinkhorn")
_SYM_TOL = 1e-10


# --------------------------------------------------------------------- validation
def _as_mean(alpha: Any, name: str = "alpha") -> np.ndarray:
    a = as_states(alpha, name, ndims=(1,))
    return a.astype(np.float64, copy=False)


def _as_cov(
    Sigma: Any, d: int | None, name: str = "Sigma", mean: str = "alpha"
) -> np.ndarray:
    S = as_matrix(Sigma, name).astype(np.float64, copy=False)
    if S.shape[0] != S.shape[1]:
        raise ValueError(f"{name} must be square (d, d), got shape {S.shape}")
    if d is not None and S.shape[0] != d:
        raise ValueError(
            f"{name} must have shape ({d}, {d}) to match the mean {mean} of shape "
            f"({d},), got shape {S.shape}"
        )
    scale = max(1.0, float(np.max(np.abs(S))))
    asym = float(np.max(np.abs(S - S.T)))
    if asym > _SYM_TOL * scale:
        raise ValueError(f"{name} must be symmetric, got max |S - S^T| = {asym:.3g}")
    S = 0.5 * (S + S.T)
    lam = float(np.min(np.linalg.eigvalsh(S)))
    if lam < -_SYM_TOL * scale:
        raise ValueError(
            f"{name} must be positive semi-definite, got smallest eigenvalue {lam:.3g}"
        )
    return S


def _psd_sqrt(S: np.ndarray) -> np.ndarray:
    """Symmetric square root of a PSD matrix (negative round-off clipped)."""
    w, U = np.linalg.eigh(S)
    return (U * np.sqrt(np.clip(w, 0.0, None))) @ U.T


def _heads(model: Any, d: int) -> tuple[str, list]:
    """Per-head matrices ``(A, G, H, V)`` with identities filled in, after checks."""
    if not isinstance(model, Model):
        raise TypeError(f"model must be an attnlib.Model, got {type(model).__name__}")
    if model.sphere:
        raise ValueError(
            "model must have geometry='euclidean': the Gaussian case lives in R^d "
            "(no layer norm)"
        )
    if model.layer_norm is not None:
        raise ValueError(
            f"model.layer_norm must be None for the Gaussian equations, got "
            f"{model.layer_norm!r} (pre- and peri-LN attend to the normalised tokens, "
            "which are not Gaussian)"
        )
    if model.kernel not in GAUSSIAN_KERNELS:
        raise ValueError(
            f"model.kernel must be one of {GAUSSIAN_KERNELS} (kernel={model.kernel!r} "
            "does not keep Gaussian measures Gaussian)"
        )
    if model.normalization != "sa":
        raise ValueError(
            "model.normalization must be 'sa': with 'usa' the velocity is the SA field "
            "times a non-constant factor, and Gaussians are not preserved"
        )
    if model.mask is not None:
        raise ValueError("model.mask must be None for the Gaussian equations")
    if model.consensus or model.weights is not None:
        raise ValueError(
            "model.consensus must be False and model.weights None for the Gaussian "
            "equations (they are the equations of the plain field of a measure)"
        )
    if np.ndim(model.beta) != 0:
        raise ValueError("model.beta must be a scalar for the Gaussian equations")
    beta = float(model.beta)
    # the matrices were validated by Model (attnlib._validation.as_heads)
    if model._d is not None and model._d != d:
        raise ValueError(
            f"Q, K, V of the model act on dimension {model._d} but the Gaussian is in "
            f"dimension d={d}"
        )
    eye = np.eye(d)
    out = []
    for head in model._heads:
        q, k, v = (
            eye if m is None else m.astype(np.float64, copy=False)
            for m in (head.q, head.k, head.v)
        )
        out.append((beta * k.T @ q, beta * k.T @ k, beta * k.T @ q, v))
    return model.kernel, out


def _sinkhorn_DT(B: np.ndarray) -> np.ndarray:
    r""":math:`D^\top = 2B(I + (I + 4B^\top B)^{1/2})^{-1}` (eigendecomposition)."""
    w, U = np.linalg.eigh(B.T @ B)
    g = 2.0 / (1.0 + np.sqrt(1.0 + 4.0 * np.clip(w, 0.0, None)))
    return B @ ((U * g) @ U.T)


def _factor_rhs(kernel, heads, alpha, L):
    """Right-hand side ``(dalpha, dL)`` of the factorised system, ``dL = M L``."""
    dalpha = np.zeros_like(alpha)
    dL = np.zeros_like(L)
    for A, G, H, V in heads:
        if kernel == "softmax":
            LtA = L.T @ A
            dL += V @ (L @ (LtA @ L))
            dalpha += V @ (alpha + L @ (LtA @ alpha))
        elif kernel == "l2":
            W = np.linalg.inv(np.eye(L.shape[1]) + L.T @ G @ L)
            LW = L @ W
            dL += V @ (LW @ (L.T @ H @ L))
            dalpha += V @ (LW @ (L.T @ (H @ alpha)) + alpha - LW @ (L.T @ (G @ alpha)))
        else:  # sinkhorn
            dL += V @ (L @ _sinkhorn_DT(L.T @ A @ L))
            dalpha += V @ alpha
    return dalpha, dL


# ----------------------------------------------------------------- affine field
@dataclass(frozen=True)
class AffineField:
    r"""An affine velocity field :math:`x \mapsto Mx + c` on :math:`\mathbb R^d`.

    Attributes
    ----------
    M : ndarray, shape (d, d)
        Jacobian.
    c : ndarray, shape (d,)
        Value at the origin.
    """

    M: np.ndarray
    c: np.ndarray

    def __call__(self, X: np.ndarray) -> np.ndarray:
        """Evaluate at ``X`` of shape ``(..., d)``."""
        return np.asarray(X) @ self.M.T + self.c


def gaussian_field(model: Model, alpha: Any, Sigma: Any) -> AffineField:
    r"""Mean-field velocity of ``model`` at :math:`\mu = \mathcal N(\alpha, \Sigma)`.

    .. math::

        \Gamma[\mu](x) = \frac{\int e^{y^\top A x}\, V y \, d\mu(y)}
                              {\int e^{y^\top A x}\, d\mu(y)}
                       = V\alpha + V\Sigma A x \quad (\text{softmax}),

    and the L2, Sinkhorn and multi-head analogues listed in the module docstring.

    Parameters
    ----------
    model : Model
        ``geometry="euclidean"``, ``normalization="sa"``, kernel ``"softmax"``,
        ``"l2"`` or ``"sinkhorn"``, one or several heads, scalar ``beta``.
    alpha : ndarray, shape (d,)
    Sigma : ndarray, shape (d, d)
        Symmetric positive semi-definite (positive definite for Sinkhorn's
        :math:`M`, which involves :math:`\Sigma^{-1/2}`; a pseudo-inverse is used
        otherwise, exact on the support of :math:`\mu`).

    Returns
    -------
    AffineField

    Examples
    --------
    >>> import numpy as np
    >>> from attnlib import Model
    >>> A = np.array([[0.5, 0.1], [0.0, 0.3]])
    >>> f = gaussian_field(Model(Q=A, geometry="euclidean"), np.zeros(2), np.eye(2))
    >>> bool(np.allclose(f.M, A))        # V Sigma A with K = V = Sigma = I
    True

    References
    ----------
    [CACP] Section 4.
    """
    alpha = _as_mean(alpha)
    d = alpha.shape[0]
    Sigma = _as_cov(Sigma, d)
    kernel, heads = _heads(model, d)
    M = np.zeros((d, d))
    c = np.zeros(d)
    R = _psd_sqrt(Sigma)
    for A, G, H, V in heads:
        if kernel == "softmax":
            Mh = V @ Sigma @ A
            c += V @ alpha
        elif kernel == "l2":
            S = Sigma @ np.linalg.inv(np.eye(d) + G @ Sigma)
            Mh = V @ S @ H
            c += V @ (alpha - S @ (G @ alpha))
        else:
            Mh = V @ R @ _sinkhorn_DT(R @ A @ R) @ np.linalg.pinv(R)
            c += V @ alpha - Mh @ alpha
        M += Mh
    _check_field((M, c))
    return AffineField(M, c)


def _check_field(values) -> None:
    for v in values:
        check_finite_result(
            v,
            "the Gaussian field",
            "Sigma, alpha or the model's matrices and beta are too large",
        )


def gaussian_rhs(model: Model, alpha: Any, Sigma: Any) -> tuple[np.ndarray, np.ndarray]:
    r"""Right-hand side of the mean and covariance equations.

    .. math::

        \dot\alpha = M\alpha + c, \qquad \dot\Sigma = M\Sigma + \Sigma M^\top,

    with :math:`(M, c)` from :func:`gaussian_field` (for softmax:
    :math:`\dot\alpha = V(I+\Sigma A)\alpha`,
    :math:`\dot\Sigma = V\Sigma A\Sigma + \Sigma A^\top\Sigma V^\top`).

    Parameters
    ----------
    model : Model
    alpha : ndarray, shape (d,)
    Sigma : ndarray, shape (d, d)

    Returns
    -------
    dalpha : ndarray, shape (d,)
    dSigma : ndarray, shape (d, d)
        Symmetric.

    Examples
    --------
    >>> import numpy as np
    >>> from attnlib import Model
    >>> da, dS = gaussian_rhs(Model(geometry="euclidean"), np.ones(2), np.eye(2))
    >>> da.tolist(), dS.tolist()          # (I + I) 1 and 2 I
    ([2.0, 2.0], [[2.0, 0.0], [0.0, 2.0]])
    """
    alpha = _as_mean(alpha)
    Sigma = _as_cov(Sigma, alpha.shape[0])
    kernel, heads = _heads(model, alpha.shape[0])
    R = _psd_sqrt(Sigma)
    da, dR = _factor_rhs(kernel, heads, alpha, R)
    dS = dR @ R.T
    dS = dS + dS.T
    _check_field((da, dS))
    return da, dS


# ------------------------------------------------------------------ integrator
#: The result of :func:`integrate_gaussian` is an :class:`attnlib.Trajectory` (the
#: name of earlier releases is kept).
GaussianTrajectory = Trajectory


def integrate_gaussian(
    model: Model,
    alpha0: Any,
    Sigma0: Any,
    *,
    times: Any = None,
    t_final: float | None = None,
    dt: float = 0.02,
    rel_step: float = 0.05,
    max_trace: float = 1e8,
    progress: bool = False,
    max_steps: int = MAX_STEPS,
) -> Trajectory:
    r"""Integrate the mean and covariance equations, detecting finite-time blow-up.

    Evolves :math:`\alpha` and a factor :math:`\Sigma = LL^\top` with the classical
    RK4 scheme applied to

    .. math::

        \dot\alpha = M\alpha + c, \qquad \dot L = M L,

    which is the affine flow itself acting on :math:`L`; :math:`\Sigma` is therefore
    symmetric positive semi-definite at every step. The step is
    ``min(dt, rel_step / rate)`` with ``rate`` the relative growth rate of
    :math:`(\alpha, L)`, so the steps shrink geometrically when :math:`\Sigma`
    explodes like :math:`1/(t^* - t)`; the run stops with ``blowup=True`` once
    :math:`\operatorname{tr}\Sigma` exceeds ``max_trace``, or once a step is too small
    to change the float64 time ``t`` (a blow-up closer than rounding resolves).

    Parameters
    ----------
    model : Model
        See :func:`gaussian_field`.
    alpha0 : ndarray, shape (d,)
    Sigma0 : ndarray, shape (d, d)
        Symmetric positive semi-definite.
    times : array_like, shape (T,), optional
        Non-decreasing output times ``>= 0``.
    t_final : float, optional
        Shorthand for ``times=[0, t_final]``.
    dt : float
        Largest step.
    rel_step : float
        Largest relative change of :math:`(\alpha, L)` per step.
    max_trace : float
        Blow-up threshold on :math:`\operatorname{tr}\Sigma`.
    progress : bool
        ``tqdm.auto`` bar over the output times.
    max_steps : int
        Cap on the number of RK4 steps; a ``ValueError`` is raised when it is
        reached (e.g. a tiny ``dt`` over a long time span).

    Returns
    -------
    Trajectory
        With ``states=None``, ``final=(final_mean, final_covariance)`` and, in
        ``info`` (read as attributes):

        * ``means`` (ndarray, shape (T, d))
        * ``covariances`` (ndarray, shape (T, d, d)): Symmetric positive semi-definite
          (``L L^T`` of the integrated factor).
        * ``blowup`` (bool): Whether the trace of the covariance exceeded ``max_trace``
          (or overflowed), or the growth became so fast that a step no longer advances
          the float64 time (the solution blows up within rounding of ``t_stop``; this is
          where a threshold ``max_trace`` beyond about ``1 / eps`` times the initial
          trace ends). This also flags fast exponential growth; compare ``t_stop``
          across thresholds to tell it from a finite-time blow-up.
        * ``blowup_time`` (float): Estimated blow-up time :math:`t_{\rm stop} +
          \operatorname{tr}\Sigma / \tfrac{d}{dt}\operatorname{tr}\Sigma`, exact to
          first order for :math:`\Sigma \sim S/(t^*-t)` (for exponential growth at rate
          ``r`` it is only ``t_stop + 1/r``); ``inf`` when the threshold was not
          reached.
        * ``t_stop`` (float): Time at which the integration ended.
        * ``final_mean``, ``final_covariance`` (ndarray): State at ``t_stop``.
        * ``kernel`` (str)

    Examples
    --------
    >>> import numpy as np
    >>> from attnlib import Model
    >>> tr = integrate_gaussian(Model(geometry="euclidean"), np.zeros(2), np.eye(2),
    ...                         t_final=1.0)
    >>> tr.info["blowup"], round(tr.info["blowup_time"], 6)  # Sigma(t) = I/(1 - 2t)
    (True, 0.5)

    References
    ----------
    [CACP] Section 4.
    """
    alpha = _as_mean(alpha0, "alpha0").copy()
    d = alpha.shape[0]
    Sigma0 = _as_cov(Sigma0, d, "Sigma0", "alpha0")
    kernel, heads = _heads(model, d)
    times = output_times(times, t_final)
    dt = check_real(dt, "dt", low=0.0, strict_low=True)
    rel_step = check_real(rel_step, "rel_step", low=0.0, strict_low=True)
    max_trace = check_real(max_trace, "max_trace", low=0.0, strict_low=True)
    max_steps = check_int(max_steps, "max_steps", low=1)
    progress = check_bool(progress, "progress")
    check_steps(  # steps are at most dt: a lower bound, checked before the first
        planned_steps(times, dt),
        max_steps,
        what=f"integrate_gaussian (dt = {dt:.3g}, up to t_final = {times[-1]:g}, "
        "the last of times)",
        hint="increase dt or max_steps",
    )

    L = (
        np.linalg.cholesky(Sigma0)
        if np.min(np.linalg.eigvalsh(Sigma0)) > 0
        else (_psd_sqrt(Sigma0))
    )

    def f(a, Lf):
        return _factor_rhs(kernel, heads, a, Lf)

    # the state (alpha, L) packed in one vector, for the shared RK4 stages
    def unpack(y):
        return y[:d], y[d:].reshape(d, d)

    def f_packed(y):
        da, dL = f(*unpack(y))
        return np.concatenate([da, dL.ravel()])

    means, covs = [], []
    st = {"t": 0.0, "blow": False}
    control = Adaptive(dt, snap=1e-12)  # under the relative growth bound

    def growth_bound(y):
        k1 = f_packed(y)  # the field at the state, reused by the step
        (alpha, L), (k1a, k1L) = unpack(y), unpack(k1)
        scale = np.sqrt(np.sum(alpha**2) + np.sum(L**2)) + 1e-300
        rate = np.sqrt(np.sum(k1a**2) + np.sum(k1L**2)) / scale
        return (rel_step / rate if rate > 0 else np.inf), k1

    def advance(y, step):
        y_new = rk_step(f_packed, y, step.h, "rk4", k1=step.aux)
        if not np.all(np.isfinite(y_new)):  # overflow: stop at the last finite state
            st["blow"] = True
            return y, step.t, True
        y = y_new
        st["t"] = step.end
        alpha, L = unpack(y)
        if float(np.sum(L**2)) > max_trace:
            st["blow"] = True
        return y, step.end, st["blow"]

    def observe(_k, y):
        alpha, L = unpack(y)
        S = L @ L.T
        means.append(alpha.copy())
        covs.append(0.5 * (S + S.T))

    run = drive(
        advance,
        np.concatenate([alpha, L.ravel()]),
        times,
        control=control,
        bound=growth_bound,
        observe=observe,
        max_steps=max_steps,
        progress=progress,
        name="integrate_gaussian",
        advice={
            Outcome.BUDGET_EXHAUSTED: "increase rel_step, dt or max_steps",
            # growth too fast for the float64 time: the blow-up, at t
            Outcome.STEP_TOO_SMALL: None,
        },
    )
    y, n_steps = run.state, run.n_steps
    if run.outcome is Outcome.STEP_TOO_SMALL:
        st["blow"] = True
    alpha, L = unpack(y)
    alpha, L = alpha.copy(), L.copy()
    t, blow = st["t"], st["blow"]
    S = L @ L.T
    S = 0.5 * (S + S.T)
    t_blow = np.inf
    if blow:
        t_blow = t
        if np.all(np.isfinite(L)) and np.all(np.isfinite(alpha)):
            _, dL = f(alpha, L)
            dtr = 2.0 * float(np.sum(L * dL))
            if dtr > 0:
                t_blow = t + float(np.sum(L**2)) / dtr
    T = len(means)
    return trajectory(
        series=("means", "covariances"),
        times=times[:T],
        final=(alpha, S),
        method="rk4",
        dt=float(dt),
        means=np.array(means).reshape(T, d),
        covariances=np.array(covs).reshape(T, d, d),
        blowup=blow,
        blowup_time=float(t_blow),
        t_stop=float(t),
        final_mean=alpha,
        final_covariance=S,
        n_steps=n_steps,
        kernel=kernel,
    )


# ----------------------------------------------------------------- closed form
def _riccati_S(model: Model, d: int) -> np.ndarray:
    kernel, heads = _heads(model, d)
    if kernel != "softmax" or len(heads) != 1:
        raise ValueError(
            "the closed form needs a single-head softmax model, got "
            f"kernel={kernel!r} with {len(heads)} heads"
        )
    A, _, _, V = heads[0]
    if not np.allclose(V, np.eye(d), rtol=0, atol=1e-14):
        raise ValueError("the closed form needs V = I (model.V None or the identity)")
    return A + A.T


def _top_eigenvalue(P: np.ndarray) -> float:
    """Largest eigenvalue of symmetric ``P``, with round-off (``<= 1e-12 |P|``) -> 0."""
    w = np.linalg.eigvalsh(0.5 * (P + P.T))
    tol = 1e-12 * max(float(np.max(np.abs(w))), np.finfo(float).tiny)
    return float(w[-1]) if w[-1] > tol else 0.0


def riccati_covariance(model: Model, Sigma0: Any, times: Any) -> np.ndarray:
    r"""Closed-form covariance for softmax attention with :math:`V = I`.

    .. math::

        \Sigma(t) = \big(\Sigma_0^{-1} - t(A + A^\top)\big)^{-1}
                  = \Sigma_0^{1/2}\big(I - t\,\Sigma_0^{1/2}(A+A^\top)
                    \Sigma_0^{1/2}\big)^{-1}\Sigma_0^{1/2},

    (the second form also for singular :math:`\Sigma_0`), valid for
    :math:`t < t^*` (:func:`blowup_time`); a time from :math:`t^*` on is a
    ``ValueError`` (the covariance is infinite there).

    Parameters
    ----------
    model : Model
        Single-head softmax, ``geometry="euclidean"``, ``V`` the identity.
    Sigma0 : ndarray, shape (d, d)
    times : array_like, shape (T,)

    Returns
    -------
    ndarray, shape (T, d, d)

    Examples
    --------
    >>> import numpy as np
    >>> from attnlib import Model
    >>> S = riccati_covariance(Model(geometry="euclidean"), np.eye(2), [0.0, 0.25])
    >>> S[1].tolist()                      # I / (1 - 2 t)
    [[2.0, 0.0], [0.0, 2.0]]

    References
    ----------
    [CACP] Section 4.
    """
    Sigma0 = _as_cov(Sigma0, None, "Sigma0")
    d = Sigma0.shape[0]
    Ssym = _riccati_S(model, d)
    t = as_numeric(times, "times").astype(np.float64)
    if t.ndim != 1 or not np.all(np.isfinite(t)) or np.any(t < 0):
        raise ValueError("times must be a 1-D array of finite values >= 0")
    R = _psd_sqrt(Sigma0)
    P = R @ Ssym @ R
    lam = _top_eigenvalue(P)
    if np.any(t * lam >= 1.0):
        raise ValueError(
            f"times must be before the blow-up time t* = {1.0 / lam:.6g} of Sigma0 "
            f"(the covariance is infinite from t* on), got t = {float(np.max(t)):g}"
        )
    out = R @ np.linalg.inv(np.eye(d) - t[:, None, None] * P) @ R
    return 0.5 * (out + np.swapaxes(out, -1, -2))


def blowup_time(model: Model, Sigma0: Any) -> float:
    r"""Blow-up time of the softmax covariance with :math:`V = I`.

    .. math::

        t^* = \frac{1}{\lambda_{\max}\big(\Sigma_0^{1/2}(A + A^\top)
              \Sigma_0^{1/2}\big)}, \qquad A = \beta K^\top Q,

    and ``inf`` when that eigenvalue is :math:`\le 0` (no blow-up).

    Examples
    --------
    >>> import numpy as np
    >>> from attnlib import Model
    >>> Q = np.array([[1, .2], [0, .8]]); K = np.array([[.9, 0], [.1, 1.1]])
    >>> m = Model(beta=1 / np.sqrt(2), Q=Q, K=K, geometry="euclidean")   # 1/sqrt(d_k)
    >>> round(blowup_time(m, np.array([[1, .3], [.3, .6]])), 4)
    0.6057

    References
    ----------
    [CACP] Section 4.
    """
    Sigma0 = _as_cov(Sigma0, None, "Sigma0")
    Ssym = _riccati_S(model, Sigma0.shape[0])
    R = _psd_sqrt(Sigma0)
    lam = _top_eigenvalue(R @ Ssym @ R)
    return 1.0 / lam if lam > 0 else float("inf")


# --------------------------------------------------- particle clouds and shapes
def sample_gaussian(alpha: Any, Sigma: Any, n: int, *, rng: Any) -> np.ndarray:
    r"""``n`` i.i.d. samples of :math:`\mathcal N(\alpha, \Sigma)` (``Sigma`` PSD).

    Returns
    -------
    ndarray, shape (n, d)
        :math:`x_i = \alpha + \Sigma^{1/2} z_i`, :math:`z_i \sim \mathcal N(0, I)`.

    Examples
    --------
    >>> X = sample_gaussian([0.0, 1.0], [[1.0, 0.0], [0.0, 4.0]], 5, rng=0)
    >>> X.shape
    (5, 2)
    """
    alpha = _as_mean(alpha)
    Sigma = _as_cov(Sigma, alpha.shape[0])
    n = check_int(n, "n", low=1)
    g = check_rng(rng)
    Z = g.standard_normal((n, alpha.shape[0]))
    return alpha + Z @ _psd_sqrt(Sigma)


def empirical_moments(X: Any) -> tuple[np.ndarray, np.ndarray]:
    r"""Mean and covariance of the empirical measure (normalised by :math:`1/n`).

    .. math::

        \hat\alpha = \frac1n\sum_i x_i, \qquad
        \hat\Sigma = \frac1n\sum_i (x_i - \hat\alpha)(x_i - \hat\alpha)^\top .

    Parameters
    ----------
    X : ndarray, shape (..., n, d)

    Returns
    -------
    mean : ndarray, shape (..., d)
    cov : ndarray, shape (..., d, d)

    Examples
    --------
    >>> m, C = empirical_moments([[0.0, 0.0], [2.0, 0.0]])
    >>> m.tolist(), C.tolist()
    ([1.0, 0.0], [[1.0, 0.0], [0.0, 0.0]])
    """
    X = as_states(X, "X", ndims=(2, 3, 4))
    m = X.mean(axis=-2)
    Y = X - m[..., None, :]
    C = np.swapaxes(Y, -1, -2) @ Y / X.shape[-2]
    C = check_finite_result(
        0.5 * (C + np.swapaxes(C, -1, -2)),
        "the empirical covariance",
        "the entries of X are too large (scale X down)",
    )
    return m, C


def moment_observables() -> dict[str, Callable[[np.ndarray], np.ndarray]]:
    """Observables ``{"mean", "cov"}`` for :func:`attnlib.simulate`.

    Examples
    --------
    >>> import numpy as np
    >>> from attnlib import Model, simulate
    >>> X0 = sample_gaussian(np.zeros(2), np.eye(2), 50, rng=1)
    >>> tr = simulate(Model(geometry="euclidean"), X0, t_final=0.1,
    ...               observables=moment_observables(), save_states=False)
    >>> tr.observables["cov"].shape
    (2, 2, 2)
    """
    return {
        "mean": lambda X: empirical_moments(X)[0],
        "cov": lambda X: empirical_moments(X)[1],
    }


def fit_affine(X: Any, Y: Any) -> AffineField:
    r"""Least-squares affine fit :math:`y_i \approx M x_i + c` (empirical Jacobian).

    Parameters
    ----------
    X, Y : ndarray, shape (n, d)
        Positions and velocities, ``n > d``.

    Returns
    -------
    AffineField

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).standard_normal((20, 2))
    >>> f = fit_affine(X, X @ np.array([[1., 2.], [3., 4.]]).T + 1.0)
    >>> bool(np.allclose(f.M, [[1, 2], [3, 4]]) and np.allclose(f.c, 1))
    True
    """
    X = as_states(X, "X", ndims=(2,))
    Y = as_states(Y, "Y", ndims=(2,))
    if X.shape != Y.shape:
        raise ValueError(
            f"X and Y must have the same shape, got {X.shape} and {Y.shape}"
        )
    n, d = X.shape
    if n <= d:
        raise ValueError(f"X needs more than d={d} rows for an affine fit, got n={n}")
    Xa = np.hstack([X, np.ones((n, 1))])
    coef, *_ = np.linalg.lstsq(Xa, Y, rcond=None)
    return AffineField(coef[:d].T.copy(), coef[d].copy())


def mardia_kurtosis(X: Any) -> np.ndarray:
    r"""Mardia's multivariate kurtosis of a cloud, :math:`d(d+2)` for a Gaussian.

    .. math::

        b_{2,d} = \frac1n\sum_i \big((x_i-\hat\alpha)^\top\hat\Sigma^{-1}
                  (x_i-\hat\alpha)\big)^2 .

    It is invariant under invertible affine maps, so any affine flow of the cloud
    leaves it unchanged.

    Parameters
    ----------
    X : ndarray, shape (..., n, d)

    Returns
    -------
    ndarray, shape (...)

    Examples
    --------
    >>> X = sample_gaussian([0.0, 0.0], [[1.0, 0.0], [0.0, 1.0]], 20000, rng=0)
    >>> abs(float(mardia_kurtosis(X)) - 8.0) < 0.3
    True
    """
    X = as_states(X, "X", ndims=(2, 3, 4))
    m, C = empirical_moments(X)
    Y = X - m[..., None, :]
    w = np.linalg.eigvalsh(C)
    if np.any(w[..., 0] <= 1e-12 * np.maximum(w[..., -1], np.finfo(float).tiny)):
        raise ValueError(
            "the empirical covariance of X is singular (the points lie in a proper "
            "affine subspace, or n <= d): Mardia's kurtosis is undefined"
        )
    Z = np.linalg.solve(C, np.swapaxes(Y, -1, -2))
    q = np.sum(np.swapaxes(Y, -1, -2) * Z, axis=-2)
    return np.mean(q**2, axis=-1)


def _as_covs(Sigma: Any) -> np.ndarray:
    """Covariance matrices ``(..., d, d)``: symmetric, PSD, with a positive trace."""
    S = as_numeric(Sigma, "Sigma", "matrix").astype(np.float64)
    if S.ndim < 2 or S.shape[-1] != S.shape[-2] or S.size == 0:
        raise ValueError(f"Sigma must have shape (..., d, d), got shape {S.shape}")
    if not np.all(np.isfinite(S)):
        raise ValueError("Sigma must contain only finite values (found NaN or inf)")
    scale = np.maximum(1.0, np.max(np.abs(S), axis=(-1, -2)))
    asym = np.max(np.abs(S - np.swapaxes(S, -1, -2)), axis=(-1, -2))
    if np.any(asym > _SYM_TOL * scale):
        raise ValueError(
            f"Sigma must be symmetric, got max |S - S^T| = {float(np.max(asym)):.3g}"
        )
    S = 0.5 * (S + np.swapaxes(S, -1, -2))
    lam = np.linalg.eigvalsh(S)
    if np.any(lam[..., 0] < -_SYM_TOL * scale):
        raise ValueError(
            "Sigma must be positive semi-definite, got smallest eigenvalue "
            f"{float(np.min(lam[..., 0])):.3g}"
        )
    if np.any(lam[..., -1] <= 0):
        raise ValueError("Sigma must be non-zero (a covariance with positive trace)")
    return S


def effective_rank(Sigma: Any) -> np.ndarray:
    r"""Effective rank :math:`\exp(-\sum_k p_k\log p_k)`, :math:`p=\lambda/\sum\lambda`.

    Between 1 (a line) and :math:`d` (isotropic); Roy & Vetterli (2007).

    Examples
    --------
    >>> round(float(effective_rank(np.eye(3))), 12)
    3.0
    """
    w = np.clip(np.linalg.eigvalsh(_as_covs(Sigma)), 0.0, None)
    p = w / np.sum(w, axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        ent = -np.sum(np.where(p > 0, p * np.log(p), 0.0), axis=-1)
    return np.exp(ent)


def condition_number(Sigma: Any) -> np.ndarray:
    r"""Condition number :math:`\lambda_{\max}/\lambda_{\min}` (``inf`` if singular).

    Examples
    --------
    >>> float(condition_number(np.diag([4.0, 1.0])))
    4.0
    """
    w = np.linalg.eigvalsh(_as_covs(Sigma))
    with np.errstate(divide="ignore"):
        pos = w[..., 0] > 0
        return np.where(pos, w[..., -1] / np.where(pos, w[..., 0], 1.0), np.inf)


def numerical_rank(Sigma: Any, *, rtol: float = 1e-3) -> np.ndarray:
    r"""Number of eigenvalues larger than ``rtol`` times the largest.

    Examples
    --------
    >>> int(numerical_rank(np.diag([1.0, 1e-6, 0.5])))
    2
    """
    rtol = check_real(rtol, "rtol", low=0.0)
    w = np.linalg.eigvalsh(_as_covs(Sigma))
    return np.sum(w > rtol * w[..., -1:], axis=-1)


def disc_coordinates(Sigma: Any) -> np.ndarray:
    r"""Coordinates of :math:`\Sigma/\operatorname{tr}\Sigma` in the unit disc (d = 2).

    .. math::

        \begin{pmatrix} a & c \\ c & b\end{pmatrix} \mapsto
        \Big(\frac{a-b}{a+b}, \frac{2c}{a+b}\Big),

    which maps the positive semi-definite cone onto the round cone over the disc;
    the circle is the rank-one matrices, the centre the multiples of :math:`I`.

    Parameters
    ----------
    Sigma : ndarray, shape (..., 2, 2)

    Returns
    -------
    ndarray, shape (..., 2)

    Examples
    --------
    >>> disc_coordinates(np.array([[1.0, 0.0], [0.0, 0.0]])).tolist()
    [1.0, 0.0]
    """
    S = _as_covs(Sigma)
    if S.shape[-1] != 2:
        raise ValueError(f"Sigma must have shape (..., 2, 2), got shape {S.shape}")
    tr = S[..., 0, 0] + S[..., 1, 1]
    x = (S[..., 0, 0] - S[..., 1, 1]) / tr
    return np.stack([x, 2 * S[..., 0, 1] / tr], axis=-1)
