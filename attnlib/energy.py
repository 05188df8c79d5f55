r"""Interaction energies of particle configurations and measures, and their gradients.

Normalisation (stated once, used everywhere; [GLPR] (3.5)):

.. math::

    E_\beta(X) = \frac{1}{2\beta n^2} \sum_{i,j=1}^n e^{\beta \langle x_i, x_j\rangle},
    \qquad \beta > 0,

so that USA is ``dX/dt = n * energy_gradient(X, beta)`` (gradient ascent).

The [BKKRW] energy with a symmetric interaction matrix ``D`` (:func:`energy_D`) is
normalised **without** the factor 1/2 of the paper (as in their code):

.. math::

    E_D[\mu] = \iint e^{\langle x, D y\rangle}\,d\mu(x)\,d\mu(y),
    \qquad E_{\beta I} = 2\beta\,E_\beta,

for the empirical measure of ``X`` or for weights on a grid (``weights=``).
"""

from __future__ import annotations

import numpy as np

from . import _kernel as kern
from ._deprecation import moved_arguments
from ._special import spectral_norm
from ._validation import (
    as_weights,
    as_beta,
    check_bool,
    check_int,
    as_numeric,
    as_states,
    check_unit_norm,
    exp_scale,
    exp_of_log,
)

__all__ = ["energy", "log_energy", "energy_gradient"]


def _prepare(X, beta):
    X = as_states(X, "X")
    check_unit_norm(X, "X")
    batch = X.shape[0] if X.ndim == 3 else None
    beta = as_beta(beta, batch)
    if np.any(np.asarray(beta) <= 0):
        raise ValueError(
            "beta must be > 0 for the energy E_beta (it has a 1/(2 beta) factor)"
        )
    b = np.asarray(beta, dtype=X.dtype)
    if X.ndim == 3:
        b = b.reshape(-1, 1, 1) if b.ndim == 1 else b
    return X, b


@moved_arguments("X beta")
def log_energy(X: np.ndarray, *, beta: float | np.ndarray) -> np.ndarray | float:
    r"""Natural logarithm of :math:`E_\beta(X)`, finite for any ``beta > 0``.

    Computed as
    :math:`\beta - \log(2\beta n^2) + \log\sum_{ij} e^{\beta(\langle x_i,x_j\rangle-1)}`
    (all exponentials of the sum are ``<= 1``).

    Parameters
    ----------
    X : ndarray, shape (n, d) or (B, n, d)
        Unit vectors.
    beta : float or ndarray of shape (B,)

    Returns
    -------
    float or ndarray of shape (B,)
    """
    X, b = _prepare(X, beta)
    n = X.shape[-2]
    G = X @ np.swapaxes(X, -1, -2)
    E = b * (G - 1.0)
    if np.max(E) > 1.0:  # <x_i, x_i> above 1 by rounding, blown up by beta ~ 1e16
        E = np.minimum(E, 0.0)
    s = np.exp(E).sum(axis=(-1, -2))
    bb = np.asarray(b).reshape(-1) if X.ndim == 3 else b
    out = bb + np.log(s) - np.log(2.0 * bb * n * n)
    return float(out) if X.ndim == 2 else np.asarray(out)


@moved_arguments("X beta")
def energy(X: np.ndarray, *, beta: float | np.ndarray) -> np.ndarray | float:
    r"""Interaction energy :math:`E_\beta` of [GLPR] (3.5) for particles.

    .. math::

        E_\beta(X) = \frac{1}{2\beta n^2}\sum_{ij} e^{\beta\langle x_i,x_j\rangle}.

    Parameters
    ----------
    X : ndarray, shape (n, d) or (B, n, d)
        Unit vectors.
    beta : float > 0, or ndarray of shape (B,) for an ensemble

    Returns
    -------
    float or ndarray of shape (B,)

    Raises
    ------
    ValueError
        If the energy exceeds the range of its dtype (float64: ``beta`` above
        about 710; float32 ensembles: about 89); :func:`log_energy` is finite
        there.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0.0], [1.0, 0.0]])
    >>> bool(np.isclose(energy(X, beta=1.0), np.e / 2))
    True
    """
    le = log_energy(X, beta=beta)
    e = exp_of_log(
        le,
        what="the energy E_beta at this beta",
        use="attnlib.log_energy",
        dtype=np.result_type(le),
    )
    return float(e) if np.ndim(e) == 0 else e


@moved_arguments("X beta")
def energy_gradient(X: np.ndarray, *, beta: float | np.ndarray) -> np.ndarray:
    r"""Spherical gradient of :math:`E_\beta`.

    .. math::

        \nabla_{x_i} E_\beta
        = \frac{1}{n^2}\sum_j e^{\beta\langle x_i,x_j\rangle} P_{x_i} x_j.

    Equal to ``1/n`` times the USA velocity field ([GLPR] §3.1).

    Returns
    -------
    ndarray, same shape as ``X``

    Raises
    ------
    ValueError
        If the gradient is not finite in the dtype of ``X`` (it carries the factor
        :math:`e^\beta`: ``beta`` above about 710 in float64, 89 in float32).
    """
    X, b = _prepare(X, beta)
    n = X.shape[-2]
    # the USA field / n: e^{beta G_ij} = e^beta e^{beta (G_ij - 1)}, scaled last
    W, log_scale = kern.attention_weights(kern.logits(X, b), "usa", shift=b, n=n * n)
    return kern.aggregate(
        W,
        X,
        log_scale,
        what="the energy gradient",
        hint="use a smaller beta or float64",
        tangent=X,
    )


# ---------------------------------------------------------------------------
# The [BKKRW] energy with an interaction matrix D, for particles and for measures
# ---------------------------------------------------------------------------

__all__ += ["as_interaction", "energy_D", "energy_D_field", "energy_D_gradient"]


def as_interaction(D, d: int, batch: int | None = None, name: str = "D") -> np.ndarray:
    """Validate a symmetric interaction matrix ``D`` of shape (d, d) or (B, d, d).

    Returns a float64 array of shape (d, d), or (B, d, d) when ``D`` is given per
    ensemble member. Raises ``ValueError`` on a wrong shape, a non-finite entry or an
    asymmetric matrix (the energy only sees the symmetric part of ``D``, and the flows
    of this module are gradient flows only for a symmetric ``D``).
    """
    d = check_int(d, "d", low=1)
    if batch is not None:
        batch = check_int(batch, "batch", low=1)
    arr = as_numeric(D, name, f"matrix of shape ({d}, {d})").astype(np.float64)
    if arr.ndim == 2:
        if arr.shape != (d, d):
            raise ValueError(
                f"{name} must have shape ({d}, {d}) (d={d}), got shape {arr.shape}"
            )
    elif arr.ndim == 3:
        if batch is None or arr.shape != (batch, d, d):
            want = f"({d}, {d})"
            if batch is not None:
                want += f" or ({batch}, {d}, {d})"
            raise ValueError(f"{name} must have shape {want}, got shape {arr.shape}")
    else:
        raise ValueError(
            f"{name} must have shape ({d}, {d}) (d={d}), got shape {arr.shape}"
        )
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite values (found NaN or inf)")
    asym = float(np.max(np.abs(arr - np.swapaxes(arr, -1, -2))))
    if asym > 1e-12 * max(1.0, float(np.max(np.abs(arr)))):
        raise ValueError(f"{name} must be symmetric, got max |D - D^T| = {asym:.3g}")
    return arr


def _prepare_D(X, D, weights):
    X = as_states(X, "X")
    check_unit_norm(X, "X")
    batch = X.shape[0] if X.ndim == 3 else None
    D = as_interaction(D, X.shape[-1], batch)
    w = as_weights(weights, X.shape[-2], batch, X.dtype)
    return X, D, w


def _kernel_D(X, D):
    """Shifted kernel ``exp(<x_i, D x_j> - s)``, shift ``s = ||D||_2``, and ``s``."""
    s = spectral_norm(D)
    L = kern.logits(X, 1.0, D.astype(X.dtype))
    W, _ = kern.attention_weights(L, "usa", shift=np.asarray(s, dtype=X.dtype))
    return W, s


def energy_D(
    X: np.ndarray,
    D: np.ndarray,
    *,
    weights: np.ndarray | None = None,
    log: bool = False,
) -> np.ndarray | float:
    r"""Interaction energy of [BKKRW] of :math:`\mu = \sum_i w_i\delta_{x_i}`.

    Normalisation (the [BKKRW] code's, i.e. **without** the factor 1/2 of the paper):

    .. math::

        E_D[\mu] = \iint e^{\langle x, D y\rangle}\,d\mu(x)\,d\mu(y)
                 = \sum_{i,j} w_i w_j\, e^{\langle x_i, D x_j\rangle},

    so :math:`E_{\beta I}(X) = 2\beta\,E_\beta(X)` with :func:`energy` (uniform weights
    ``1/n``). The exponent is shifted by :math:`\|D\|_2` (no overflow inside the sum).

    Parameters
    ----------
    X : ndarray, shape (n, d) or (B, n, d)
        Unit vectors (particles, or the nodes of a grid on the sphere).
    D : ndarray, shape (d, d) or (B, d, d)
        Symmetric interaction matrix (:math:`Q^\top K = V = D`, beta absorbed).
    weights : ndarray, shape (n,) or (B, n), optional
        Probability weights of the atoms; ``None`` gives the empirical measure ``1/n``.
    log : bool
        Return :math:`\log E_D`, finite for every ``D`` (the energy itself overflows
        float64 once :math:`\log E_D > 709.78`, and raises ``ValueError`` then).

    Returns
    -------
    float or ndarray of shape (B,)

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0.0], [-1.0, 0.0]])   # antipodal pair, <v, D v> = 2
    >>> bool(np.isclose(energy_D(X, np.diag([2.0, 0.5])), np.cosh(2.0)))
    True
    >>> round(energy_D(X[:1], 1000.0 * np.eye(2), log=True), 9)   # E = e^1000
    1000.0

    References
    ----------
    [BKKRW] §3 (energy :math:`E_D`).
    """
    X, D, w = _prepare_D(X, D, weights)
    log = check_bool(log, "log")
    if log:
        # log-sum-exp with the largest exponent among atoms of positive weight
        G = kern.logits(X, 1.0, D.astype(X.dtype)).astype(np.float64)
        pos = (w[..., :, None] > 0) & (w[..., None, :] > 0)
        m = np.max(np.where(pos, G, -np.inf), axis=(-1, -2))
        W = np.exp(np.where(pos, G - m[..., None, None], -np.inf))
        out = m + np.log(np.einsum("...i,...ij,...j->...", w, W, w))
    else:
        W, s = _kernel_D(X, D)
        tot = np.einsum("...i,...ij,...j->...", w, W, w).astype(np.float64)
        out = exp_scale(
            tot,
            s,
            what="the energy E_D",
            hint="use energy_D(..., log=True), which is finite",
        )
    return float(out) if X.ndim == 2 else np.asarray(out)


def energy_D_field(
    X: np.ndarray, D: np.ndarray, *, weights: np.ndarray | None = None
) -> np.ndarray:
    r"""Wasserstein velocity field of :math:`E_D` at the atoms :math:`x_i`.

    .. math::

        V_i = P_{x_i}\sum_j w_j\, e^{\langle x_i, D x_j\rangle} D x_j
            = \tfrac12 \nabla_{S}\,\frac{\delta E_D}{\delta\mu}(x_i),

    the field of the [BKKRW] ascent flow :math:`\dot x_i = +V_i` (descent:
    :math:`-V_i`).
    With ``D = beta * I`` and uniform weights it is ``beta`` times the USA velocity
    field.

    Returns
    -------
    ndarray, same shape as ``X``

    Raises
    ------
    ValueError
        If the field is not finite in the dtype of ``X`` (it carries the factor
        :math:`e^{\|D\|_2}`: about 710 in float64, 89 in float32).
    """
    X, D, w = _prepare_D(X, D, weights)
    s = spectral_norm(D)
    return kern.measure_field(
        X,
        X,
        w,
        1.0,
        D.astype(X.dtype),
        D.astype(X.dtype),
        normalization="usa",
        shift=s,
        what="the field of E_D",
        hint="use a smaller ||D||_2 or float64",
        sphere=True,
    )


def energy_D_gradient(
    X: np.ndarray, D: np.ndarray, *, weights: np.ndarray | None = None
) -> np.ndarray:
    r"""Spherical gradient of :math:`X \mapsto E_D(X)` (fixed weights), :math:`2w_iV_i`.

    .. math::

        \nabla_{x_i} E_D = 2 w_i P_{x_i}\sum_j w_j e^{\langle x_i,Dx_j\rangle} Dx_j,

    with :math:`V_i` of :func:`energy_D_field` (``D`` symmetric).

    Returns
    -------
    ndarray, same shape as ``X``

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 1.0]])   # a Dirac at the top eigenvector is stationary
    >>> np.allclose(energy_D_gradient(X, np.diag([1.0, 2.0])), 0.0)
    True
    """
    X, D, w = _prepare_D(X, D, weights)
    return 2.0 * w[..., None] * energy_D_field(X, D, weights=w)
