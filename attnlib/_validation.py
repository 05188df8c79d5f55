"""Input validation shared by every public function.

Every check raises :class:`ValueError` or :class:`TypeError` with a message that
names the argument, what was expected and what was received.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, NamedTuple

import numpy as np

__all__ = [
    "NORMALIZATIONS",
    "as_states",
    "as_finite",
    "check_finite_result",
    "as_angles",
    "as_matrix",
    "as_beta",
    "as_circle_beta",
    "as_weights",
    "as_member_param",
    "as_heads",
    "Head",
    "check_int",
    "check_real",
    "check_unit_norm",
    "check_choice",
    "check_bool",
    "check_rng",
    "fixed_seed",
    "log_max",
    "spawn_seeds",
    "exp_of_log",
    "exp_scale",
    "TooManyStepsError",
    "check_steps",
]

UNIT_NORM_TOL = 1e-8
#: The largest integer a count or a size may take: numpy indexes with int64.
INT_MAX = 2**63 - 1
#: The two normalisations of the attention weights: divide by the row sum (SA) or by
#: ``n`` (USA).
NORMALIZATIONS = ("sa", "usa")


def _describe(x: Any) -> str:
    if isinstance(x, np.ndarray):
        return f"array of shape {x.shape} and dtype {x.dtype}"
    return f"{type(x).__name__} {x!r}"[:120]


def as_numeric(x: Any, name: str, what: str = "array") -> np.ndarray:
    """``x`` as a numpy array of a real numeric dtype (no strings, objects, None)."""
    if x is None or isinstance(x, (str, bytes)):
        raise TypeError(f"{name} must be a real numeric {what}, got {_describe(x)}")
    arr = np.asarray(x)
    if arr.dtype == object or not (
        np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)
    ):
        raise TypeError(f"{name} must be a real numeric {what}, got {_describe(x)}")
    return arr


def as_finite(
    x: Any, name: str, *, what: str = "array", ndims: tuple[int, ...] | None = None
) -> np.ndarray:
    """``x`` as a float64 array of finite values (of one of the ranks ``ndims``)."""
    arr = as_numeric(x, name, what).astype(np.float64, copy=False)
    if ndims is not None and arr.ndim not in ndims:
        raise ValueError(
            f"{name} must be a {' or '.join(f'{k}-D' for k in ndims)} {what}, got "
            f"shape {arr.shape}"
        )
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite values (found NaN or inf)")
    return arr


def check_finite_result(out: Any, what: str, hint: str) -> Any:
    """Return ``out`` if every value is finite, else raise a ValueError saying which
    arguments to change (``hint`` names them)."""
    if not np.all(np.isfinite(out)):
        raise ValueError(f"{what} is not finite in float64: {hint}")
    return out


def as_states(
    x: Any,
    name: str = "X",
    *,
    ndims: tuple[int, ...] = (2, 3),
    dtype: Any = None,
) -> np.ndarray:
    """Return ``x`` as a finite floating array with one of the allowed ranks.

    Integer input is promoted to float64; float32/float64 are preserved unless
    ``dtype`` is given.
    """
    arr = as_numeric(x, name)
    if dtype is not None:
        arr = arr.astype(dtype, copy=False)
    elif not np.issubdtype(arr.dtype, np.floating) or arr.dtype == np.float16:
        arr = arr.astype(np.float64)
    if arr.ndim not in ndims:
        shapes = " or ".join(
            {1: "(d,)", 2: "(n, d)", 3: "(B, n, d)", 4: "(T, B, n, d)"}.get(k, f"{k}-D")
            for k in ndims
        )
        raise ValueError(f"{name} must have shape {shapes}, got shape {arr.shape}")
    if any(s == 0 for s in arr.shape):
        raise ValueError(f"{name} must be non-empty, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite values (found NaN or inf)")
    return arr


def as_angles(
    theta: Any, name: str = "theta", ndims: tuple[int, ...] = (1, 2)
) -> np.ndarray:
    """A finite floating array of angles of shape ``(n,)`` or ``(B, n)``."""
    arr = as_numeric(theta, name, "array of angles")
    if not np.issubdtype(arr.dtype, np.floating) or arr.dtype == np.float16:
        arr = arr.astype(np.float64)
    if arr.ndim not in ndims:
        want = " or ".join({1: "(n,)", 2: "(B, n)"}[k] for k in ndims)
        raise ValueError(f"{name} must have shape {want}, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} must be non-empty, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite values (found NaN or inf)")
    return arr


def check_unit_norm(x: np.ndarray, name: str = "X", tol: float | None = None) -> None:
    """Raise unless every row (last axis) of ``x`` has unit Euclidean norm.

    The default tolerance is ``1e-8`` in float64 and ``64 * eps`` in lower precision.
    """
    if tol is None:
        tol = max(UNIT_NORM_TOL, 64 * float(np.finfo(x.dtype).eps))
    dev = float(np.max(np.abs(np.linalg.norm(x, axis=-1) - 1.0)))
    if dev > tol:
        raise ValueError(
            f"{name} must have rows of unit norm for a model on the sphere "
            f"(max | |x_i| - 1 | = {dev:.3g} > {tol:g}); normalise with attnlib.retract"
        )


def as_matrix(
    m: Any, name: str, *, shape: tuple[int | None, int | None] | None = None
) -> np.ndarray:
    """Return a finite 2-D float array, optionally with a required shape."""
    arr = as_numeric(m, name, "matrix")
    arr = arr.astype(
        np.result_type(arr.dtype, np.float32)
        if np.issubdtype(arr.dtype, np.floating)
        else np.float64,
        copy=False,
    )
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D matrix, got shape {arr.shape}")
    if shape is not None:
        for k, s in enumerate(shape):
            if s is not None and arr.shape[k] != s:
                want = tuple("*" if s is None else s for s in shape)
                raise ValueError(
                    f"{name} must have shape {want}, got shape {arr.shape}"
                )
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite values (found NaN or inf)")
    return arr


def check_real(
    x: Any,
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
    strict_low: bool = False,
) -> float:
    """Return ``x`` as a finite float within the given bounds."""
    if isinstance(x, bool) or not isinstance(
        x, (numbers.Real, np.floating, np.integer)
    ):
        if isinstance(x, np.ndarray) and x.ndim == 0:
            x = x.item()
        else:
            raise TypeError(f"{name} must be a real number, got {_describe(x)}")
    xf = float(x)
    if not np.isfinite(xf):
        raise ValueError(f"{name} must be finite, got {xf}")
    if low is not None and (xf < low or (strict_low and xf == low)):
        op = ">" if strict_low else ">="
        raise ValueError(f"{name} must be {op} {low}, got {xf}")
    if high is not None and xf > high:
        raise ValueError(f"{name} must be <= {high}, got {xf}")
    return xf


def as_beta(
    beta: Any, batch: int | None, name: str = "beta", states: str = "X"
) -> float | np.ndarray:
    """A scalar beta >= 0, or for an ensemble of ``batch`` systems an array (B,).

    ``states`` names the ensemble argument whose leading axis ``batch`` is; see
    :func:`as_member_param`.
    """
    return as_member_param(beta, name, batch, states=states)


_ANY = object()  # as_member_param: an array of any length (the ensemble comes later)


def as_member_param(
    x: Any,
    name: str,
    batch: Any = _ANY,
    *,
    states: str = "X",
    positive: bool = False,
) -> float | np.ndarray:
    """A parameter ``>= 0`` (``> 0`` if ``positive``) that may vary over an ensemble.

    The one validator of ``beta``, ``sigma``, ``lam`` and ``coupling``: a finite
    number, or a finite 1-D array with one value per member of an ensemble ``states``
    of shape ``(B, ...)``. ``batch`` is ``B`` (the array must have that length),
    ``None`` (the states are not an ensemble: no array) or left out (any length).
    """
    low_msg = "> 0" if positive else ">= 0"
    if isinstance(x, (np.ndarray, list, tuple)) and np.ndim(x) > 0:
        arr = as_numeric(x, name).astype(np.float64)
        if arr.ndim != 1 or arr.size == 0:
            raise ValueError(
                f"{name} must be a scalar or of shape (B,), got shape {arr.shape}"
            )
        if batch is None:
            raise ValueError(
                f"{name} given as an array of shape {arr.shape} needs an ensemble "
                f"{states} of shape (B, n, d)"
            )
        if batch is not _ANY and arr.shape[0] != batch:
            raise ValueError(
                f"{name} must have shape ({batch},) to match the ensemble {states} of "
                f"{batch} members, got {arr.shape} ({name} must be a scalar or of "
                "shape (B,))"
            )
        if not np.all(np.isfinite(arr)) or np.any(arr <= 0 if positive else arr < 0):
            raise ValueError(f"{name} must be finite and {low_msg}")
        return arr
    return check_real(x, name, low=0.0, strict_low=positive)


class Head(NamedTuple):
    """What one attention head needs at every evaluation, validated once."""

    q: np.ndarray | None  # (m, d) or None (identity)
    k: np.ndarray | None
    v: np.ndarray | None  # (d, d) or None
    A: np.ndarray | None  # Q^T K, or None for Q = K = I
    A_sym: np.ndarray | None  # symmetrised A if it is symmetric PSD (tiled path)
    psd: bool  # Q^T K symmetric positive semi-definite (or the identity)


def make_head(q, k, v, psd: bool) -> Head:
    """Cache ``Q^T K`` and, if ``psd``, its symmetric PSD test (one ``eigvalsh``)."""
    if q is None and k is None:
        return Head(q, k, v, None, None, True)
    qm = q if q is not None else np.eye(k.shape[1])
    km = k if k is not None else np.eye(q.shape[1])
    A = qm.T @ km
    if not np.all(np.isfinite(A)):
        raise ValueError(
            "Q^T K overflows float64: the entries of Q and K are too large"
        )
    if not psd:
        return Head(q, k, v, A, None, False)
    scale = max(1.0, float(np.max(np.abs(A))))
    if np.max(np.abs(A - A.T)) > 1e-13 * scale:
        return Head(q, k, v, A, None, False)
    A_sym = 0.5 * (A + A.T)
    if np.min(np.linalg.eigvalsh(A_sym)) < -1e-12 * scale:
        return Head(q, k, v, A, None, False)
    return Head(q, k, v, A, A_sym, True)


def as_heads(
    Q: Any = None,
    K: Any = None,
    V: Any = None,
    heads: Any = None,
    *,
    d: int | None = None,
    psd: bool = True,
) -> tuple[tuple[Head, ...], int | None]:
    """The one validator of query, key and value matrices.

    ``Q`` and ``K`` have the same shape ``(m, d)``, or one of them is omitted (the
    identity) and the other is square; ``V`` is square ``(d, d)``; ``heads`` is a
    non-empty sequence of ``(Q, K, V)`` triples (``None`` for an identity),
    exclusive with ``Q``, ``K``, ``V``. Every matrix acts on the same token
    dimension, ``d`` if it is given. ``psd`` also tests each ``Q^T K`` for symmetric
    positive semi-definiteness (one ``eigvalsh``), for the tiled field.

    Returns
    -------
    heads : tuple of Head
    d : int or None
        The token dimension of the matrices (``None``: all identities).
    """
    if heads is not None:
        if any(m is not None for m in (Q, K, V)):
            raise ValueError("give either heads or Q, K, V, not both")
        if isinstance(heads, (str, bytes, np.ndarray)):
            raise TypeError(
                f"heads must be a sequence of (Q, K, V) triples, got {_describe(heads)}"
            )
        try:
            raw = [tuple(h) for h in heads]
        except TypeError as exc:
            raise TypeError("heads must be a sequence of (Q, K, V) triples") from exc
        if len(raw) == 0 or any(len(h) != 3 for h in raw):
            raise ValueError("heads must be a non-empty sequence of (Q, K, V) triples")
    else:
        raw = [(Q, K, V)]
    checked = []
    d_seen: set[int] = set()
    for h, (q, k, v) in enumerate(raw):
        sfx = "" if heads is None else f" of heads[{h}]"
        q, k, v = (
            None if m is None else as_matrix(m, nm + sfx)
            for m, nm in ((q, "Q"), (k, "K"), (v, "V"))
        )
        if q is not None and k is not None and q.shape != k.shape:
            raise ValueError(
                f"Q{sfx} and K{sfx} must have the same shape (m, d), got {q.shape} "
                f"and {k.shape}"
            )
        alone = q if k is None else k if q is None else None
        if alone is not None and alone.shape[0] != alone.shape[1]:
            raise ValueError(
                f"Q{sfx} and K{sfx}: a rectangular (m, d) matrix alone must be square "
                f"(its partner is the d x d identity), got shape {alone.shape}"
            )
        if v is not None and v.shape[0] != v.shape[1]:
            raise ValueError(f"V{sfx} must be square (d, d), got shape {v.shape}")
        d_seen |= {m.shape[1] for m in (q, k, v) if m is not None}
        checked.append((q, k, v))
    if d is not None:
        d_seen.add(d)
    if len(d_seen) > 1:
        raise ValueError(
            f"Q, K, V have inconsistent token dimensions d: {sorted(d_seen)}"
            + (f" (the tokens have d={d})" if d is not None else "")
        )
    heads = tuple(make_head(*m, psd) for m in checked)
    return heads, (d_seen.pop() if d_seen else None)


def check_int(x: Any, name: str, *, low: int = 0) -> int:
    """Return ``x`` as a Python int ``>= low``."""
    if isinstance(x, bool) or not isinstance(x, (numbers.Integral, np.integer)):
        if isinstance(x, float) and x.is_integer():
            x = int(x)
        else:
            raise TypeError(f"{name} must be an integer, got {_describe(x)}")
    xi = int(x)
    if xi < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {xi}")
    if xi > INT_MAX:
        raise ValueError(
            f"{name} must be an integer below 2**63 (numpy's index range), got {xi:.3g}"
        )
    return xi


def check_choice(x: Any, name: str, choices: tuple) -> Any:
    """Return ``x`` if it is one of ``choices`` (an array is never one)."""
    try:
        ok = x in choices
    except (ValueError, TypeError):  # an array compared with the choices
        ok = False
    if not ok:
        raise ValueError(f"{name} must be one of {choices}, got {x!r}")
    return x


def check_bool(x: Any, name: str) -> bool:
    """Return ``x`` as a bool; anything but ``True``/``False`` is a ``TypeError``."""
    if not isinstance(x, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {_describe(x)}")
    return bool(x)


def check_rng(rng: Any, name: str = "rng") -> np.random.Generator:
    """Accept a Generator or an integer seed; never the global random state."""
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (numbers.Integral, np.integer)) and not isinstance(rng, bool):
        if rng < 0:
            raise ValueError(f"{name} must be a non-negative integer seed, got {rng}")
        return np.random.default_rng(int(rng))
    raise TypeError(
        f"{name} must be a numpy.random.Generator or an integer seed, "
        f"got {_describe(rng)}"
    )


def fixed_seed(rng: Any, name: str = "rng") -> int:
    """An integer seed from ``rng`` (an integer seed, or a Generator that draws one),
    for what draws the same numbers again for each frame of a figure or widget."""
    if isinstance(rng, np.random.Generator):
        return int(rng.integers(2**63))
    if isinstance(rng, (numbers.Integral, np.integer)) and not isinstance(rng, bool):
        if rng < 0:
            raise ValueError(f"{name} must be a non-negative integer seed, got {rng}")
        return int(rng)
    raise TypeError(
        f"{name} must be a numpy.random.Generator or an integer seed, "
        f"got {_describe(rng)}"
    )


#: What to do when e^beta leaves the float range under USA.
USA_HINT = "use normalization='sa' or a smaller beta"


def as_circle_beta(beta: Any, normalization: str) -> float:
    """``beta >= 0``; for USA on the circle at most ``log_max`` (the field carries
    ``e^beta``)."""
    beta = check_real(beta, "beta", low=0.0)
    if normalization == "usa" and beta > log_max(np.float64):
        raise ValueError(
            f"beta must be <= {log_max(np.float64):.2f} for USA (the field carries "
            f"e^beta, beyond the float64 range), got {beta}; use normalization='sa'"
        )
    return beta


def as_weights(weights, n: int, batch: int | None, dtype) -> np.ndarray:
    """Probability weights of shape (n,) or (B, n); ``None`` gives ``1/n``."""
    if weights is None:
        shape = (n,) if batch is None else (batch, n)
        return np.full(shape, 1.0 / n, dtype=dtype)
    w = as_numeric(weights, "weights").astype(np.float64)
    ok = w.shape == (n,) or (batch is not None and w.shape == (batch, n))
    if not ok:
        want = f"({n},)" if batch is None else f"({n},) or ({batch}, {n})"
        raise ValueError(
            f"weights must have shape {want} (one per token of X), got shape {w.shape}"
        )
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("weights must be finite and >= 0")
    s = w.sum(axis=-1)
    if np.any(np.abs(s - 1.0) > 1e-8):
        raise ValueError(f"weights must sum to 1 (a probability measure), got sums {s}")
    if batch is not None and w.ndim == 1:
        w = np.broadcast_to(w, (batch, n))
    return w.astype(dtype, copy=False)


def spawn_seeds(rng: Any, k: int, name: str = "rng") -> list[np.random.SeedSequence]:
    """``k`` independent child seeds of ``rng`` (an integer seed, a SeedSequence or a
    Generator): ``SeedSequence(rng).spawn(k)`` for an integer, so that the children
    of a seed never change; a Generator spawns from its own seed sequence (each call
    gives new children, as each draw from a Generator gives new numbers)."""
    if isinstance(rng, np.random.SeedSequence):
        return rng.spawn(k)
    if isinstance(rng, np.random.Generator):
        seq = rng.bit_generator.seed_seq
        if not isinstance(seq, np.random.SeedSequence):
            raise TypeError(f"{name}: this Generator has no SeedSequence to spawn from")
        return seq.spawn(k)
    if isinstance(rng, (numbers.Integral, np.integer)) and not isinstance(rng, bool):
        if rng < 0:
            raise ValueError(f"{name} must be a non-negative integer seed, got {rng}")
        return np.random.SeedSequence(int(rng)).spawn(k)
    raise TypeError(
        f"{name} must be an integer seed, a numpy.random.SeedSequence or a "
        f"numpy.random.Generator, got {_describe(rng)}"
    )


# ---------------------------------------------------------------------------
# Overflow guards (one place for every module) and step caps
# ---------------------------------------------------------------------------


def log_max(dtype: Any = np.float64) -> float:
    r"""Natural logarithm of the largest finite value of a floating dtype.

    :math:`e^x` is finite in ``dtype`` exactly when ``x <= log_max(dtype)``: about
    709.78 for float64 and 88.72 for float32. Every overflow guard of the library
    compares a log-magnitude with this number, so that the guards follow the dtype of
    the data.

    Parameters
    ----------
    dtype : numpy floating dtype (or anything :class:`numpy.finfo` accepts)

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> round(log_max(np.float64), 2), round(log_max(np.float32), 2)
    (709.78, 88.72)
    """
    return float(np.log(np.finfo(dtype).max))


def exp_of_log(log_value: Any, *, what: str, use: str, dtype: Any = np.float64) -> Any:
    """``exp(log_value)`` in ``dtype``, or a ``ValueError`` pointing to the log form.

    The one guard of the library for a quantity computed as a logarithm (an energy)
    whose exponential may overflow: ``what`` names the quantity and ``use`` the call
    that returns its logarithm, which is always finite.
    """
    dtype = np.dtype(dtype)
    log_value = np.asarray(log_value, dtype=dtype)
    top = float(np.max(log_value))
    if top > log_max(dtype):
        raise ValueError(
            f"{what} overflows {dtype.name} (log = {top:.6g} > "
            f"{log_max(dtype):.1f}); use {use}, its logarithm, which is finite"
        )
    return np.exp(log_value)


def exp_scale(
    values: np.ndarray,
    log_scale: Any,
    *,
    what: str,
    hint: str = "",
    dtype: Any = None,
) -> np.ndarray:
    r"""``values * exp(log_scale)`` in the dtype of ``values``, or a clear error.

    The product is formed only when every entry is finite in that dtype, i.e. when
    :math:`\log|v| + s \le` :func:`log_max`; otherwise a :class:`ValueError` naming
    the quantity (``what``), the dtype and the size of the overflow is raised. The
    factor :math:`e^{s}` may itself exceed the float64 range while the product does
    not (tiny ``values``): it is then applied in several finite pieces.

    Parameters
    ----------
    values : ndarray of a floating dtype
        Finite values, e.g. a velocity computed with a shifted exponent.
    log_scale : float or ndarray broadcastable to ``values``
        Logarithm of the (positive) factor.
    what : str
        Name of the quantity for the error message.
    hint : str
        What to do instead, appended to the error message.
    dtype : numpy floating dtype, optional
        Dtype of the result (default: that of ``values``, float64 for other input).

    Returns
    -------
    ndarray of ``dtype``

    Raises
    ------
    ValueError
        If some entry of the product is not finite in the dtype of ``values``.

    Examples
    --------
    >>> import numpy as np
    >>> v = exp_scale(np.array([0.0, np.exp(-100.0)]), 800.0, what="x")  # e^800 = inf
    >>> v[0], bool(np.isclose(v[1], np.exp(700.0), rtol=1e-12))
    (np.float64(0.0), True)
    >>> exp_scale(np.zeros(2), 1e300, what="x")  # zeros stay zero, at once
    array([0., 0.])
    >>> exp_scale(np.array([1.0], dtype=np.float32), 100.0, what="the field")
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: the field exceeds the float32 range (largest value about e^100.0 > ...
    """
    v = np.asarray(values)
    if dtype is None:
        dtype = v.dtype if np.issubdtype(v.dtype, np.floating) else np.float64
    dtype = np.dtype(dtype)
    s = np.asarray(log_scale, dtype=np.float64)
    with np.errstate(divide="ignore"):
        mag = np.log(np.abs(v.astype(np.float64, copy=False))) + s
    top = float(np.max(mag)) if mag.size else -np.inf
    lim = log_max(dtype)
    if np.isnan(top) or top > lim:
        size = "a non-finite value" if not np.isfinite(top) else f"about e^{top:.1f}"
        raise ValueError(
            f"{what} exceeds the {dtype.name} range (largest value {size} > "
            f"e^{lim:.1f}); {hint}"
        )
    # zero entries stay zero whatever the factor: leave them out of the factor, so
    # that a huge log_scale (allowed where the value is 0) needs no more pieces
    s = np.where(v == 0, 0.0, s)
    s_top = float(np.max(s)) if s.size else 0.0
    pieces = max(1, math.ceil(s_top / (log_max(np.float64) - 1.0)))
    factor = np.exp(s / pieces)
    out = v.astype(np.float64, copy=False)
    for _ in range(pieces):
        out = out * factor
    return out.astype(dtype, copy=False)


class TooManyStepsError(ValueError):
    """A stepping loop would need more steps than its ``max_steps`` cap allows."""


def check_steps(n_steps: float, max_steps: int, *, what: str, hint: str = "") -> None:
    """Raise :class:`TooManyStepsError` if ``n_steps`` exceeds ``max_steps``.

    The one way every stepping loop of the library is capped: called with the number
    of steps a loop is about to take (before it starts, when that number is known) or
    has taken so far (inside an adaptive loop).

    Parameters
    ----------
    n_steps : int or float
        Steps planned or taken (may be ``inf`` for a step that no longer advances).
    max_steps : int
        The cap (the ``max_steps`` keyword of the calling function).
    what : str
        The loop, for the message (e.g. ``"simulate"``).
    hint : str
        What to change, appended to the message.

    Raises
    ------
    TooManyStepsError
        A subclass of :class:`ValueError`.

    Examples
    --------
    >>> check_steps(10, 100, what="simulate")
    >>> check_steps(1e23, 100, what="simulate", hint="increase dt")
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attnlib._validation.TooManyStepsError: simulate needs 1e+23 steps, more than ...
    """
    if n_steps > max_steps:
        count = f"{n_steps:.3g}" if isinstance(n_steps, float) else f"{n_steps}"
        raise TooManyStepsError(
            f"{what} needs {count} steps, more than max_steps={max_steps}"
            + (f"; {hint}" if hint else "")
        )
