r"""Ensembles of independent particle systems on the sphere: one engine.

:func:`run_ensemble` integrates ``B`` systems at once with the explicit Euler step
followed by the retraction :math:`x \mapsto x/|x|` (the scheme of [GLPR]'s public
code), members in chunks that stay in cache, observing Gram matrices at the output
times and, when asked, *retiring* the members whose tokens have all come within
``delta`` of each other (see the lemma below). It is the loop under both
:func:`simulate_ensemble` and the phase diagrams of :mod:`attnlib.clustering`.

* With :math:`Q = K = V = I` it takes the fused step of
  :func:`attnlib._kernel.euler_identity_steps` (one Gram product, one weighted sum
  that also gives the row sums, a few passes over the state); otherwise the field
  of :func:`attnlib._kernel.softmax_field` with one ``beta``, :math:`Q^\top K` and
  ``V`` per member (or shared), projected and retracted.
* The span trick. With :math:`Q=K=V=I` every velocity :math:`\dot x_i` is a
  combination of :math:`x_1,\dots,x_n`, and so is every Euler step and its
  retraction: the configuration stays in the span of the initial tokens. For
  :math:`d > n`, :func:`simulate_ensemble` therefore integrates the coordinates
  :math:`Y = X_0 U` of the tokens in an orthonormal basis :math:`U` of that span
  (dimension ``n`` instead of ``d``) and maps back with :math:`X = Y U^\top`; in
  exact arithmetic the result is the same, and the cost no longer depends on ``d``.

*Lemma (the close cone is invariant).* Let :math:`m = \min_{i,j}\langle x_i,
x_j\rangle \ge 0` and take one Euler step with retraction,
:math:`x_i' \propto u_i = (1 - h c_i) x_i + h v_i`, where
:math:`v_i = \sum_j A_{ij} x_j` with :math:`A_{ij} \ge 0` and
:math:`c_i = \langle x_i, v_i\rangle`. If :math:`h c_i \le 1` for all ``i``, then
:math:`\min_{i,j}\langle x_i', x_j'\rangle \ge m`. *Proof.* Each :math:`u_i =
\sum_k a_{ik} x_k` with :math:`a_{ik} \ge 0`, so :math:`\langle u_i, u_j\rangle =
\sum_{k,l} a_{ik} a_{jl} \langle x_k, x_l\rangle \ge m \sum_k a_{ik} \sum_l
a_{jl} \ge m |u_i| |u_j|`. :math:`\square` For SA, :math:`c_i \le 1` and
``dt <= 1`` suffice; for USA, :math:`c_i \le e^\beta`, so ``dt * e**beta <= 1``.
It is the discrete form of the cone collapse ([GLPR] Lemma 6.4): once every pair is
within ``delta``, every pair stays so, and a retired member's pair fraction is 1 at
every later time. A member for which the condition fails is never retired.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

import numpy as np

from .. import _kernel as kern
from .._results import Trajectory, trajectory
from .._control import Fixed
from .._stepping import MAX_STEPS, Outcome, check_observables, drive, output_times
from .._validation import (
    NORMALIZATIONS,
    as_beta,
    as_matrix,
    as_states,
    check_bool,
    check_choice,
    check_int,
    check_real,
    check_unit_norm,
    log_max,
)

# the engine of the phase diagrams (run_ensemble, EnsembleRun, can_retire,
# retire_margin, span_coordinates) takes validated input and is not listed here
__all__ = ["EnsembleResult", "simulate_ensemble"]


def _tr(M):
    return np.swapaxes(M, -1, -2)


# ------------------------------------------------------------------ the engine
#: The result of :func:`run_ensemble` is an :class:`attnlib.Trajectory` (the name of
#: earlier releases is kept).
EnsembleRun = Trajectory


def retire_margin(dtype: Any) -> float:
    """Slack above ``1 - delta`` before a member retires: far above rounding."""
    return float(np.sqrt(np.finfo(dtype).eps))


def can_retire(beta: np.ndarray, dt: float, normalization: str) -> np.ndarray:
    """Members for which the invariance lemma (module docstring) holds, shape (B,).

    SA with ``dt <= 1``; USA with ``dt * e**beta <= 1``.
    """
    max_c = np.exp(beta) if normalization == "usa" else np.ones(beta.shape)
    return dt * max_c <= 1.0


def _fused(beta: np.ndarray, n: int, dtype: Any) -> bool:
    """Whether the weights :math:`e^{1 + \\beta G}` of the fused step stay finite."""
    return float(np.max(beta, initial=0.0)) <= log_max(dtype) - 1.0 - math.log(n)


def run_ensemble(
    Y: np.ndarray,
    beta: np.ndarray,
    times: np.ndarray,
    dt: float,
    *,
    normalization: str = "sa",
    A: np.ndarray | None = None,
    V: np.ndarray | None = None,
    observe: Callable[[int, np.ndarray, np.ndarray], Any] | None = None,
    retire: Callable[[int, np.ndarray, np.ndarray], np.ndarray] | None = None,
    chunk: int = 128,
    progress: bool = False,
    max_steps: int = MAX_STEPS,
    what: str = "simulate_ensemble",
) -> Trajectory:
    r"""Euler + retraction for ``B`` independent systems, observed at output times.

    Inputs are assumed validated (see :func:`simulate_ensemble`).

    Parameters
    ----------
    Y : ndarray, shape (B, n, k)
        Unit rows (tokens, or their coordinates in a basis of their span); float32
        or float64, kept.
    beta : ndarray, shape (B,)
    times : ndarray, shape (T,)
    dt : float
        Largest step; the steps are shortened to hit every output time.
    normalization : {"sa", "usa"}
    A, V : ndarray of shape (k, k) or (B, k, k), optional
        :math:`Q^\top K` and ``V``; both ``None`` (the identity) selects the fused
        step (unless ``beta`` is too large for it in the dtype, see
        :func:`attnlib._kernel.euler_identity_steps`).
    observe : callable(k, members, G), optional
        Called at output time ``k`` for each chunk of the members still running:
        ``members`` their indices ``(c,)`` into ``Y``, ``G`` their Gram matrices
        ``(c, n, n)``.
    retire : callable(k, members, G) -> ndarray of bool (c,), optional
        After ``observe``, before the last output time: the members of the chunk
        that leave the computation (the caller vouches for what they would have
        done, e.g. by the lemma of the module docstring).
    chunk : int
        Members integrated together (the results do not depend on it).
    progress : bool
        Bar over the output times.
    what : str
        The loop's name: the label of the bar and the subject of error messages.
    max_steps : int
        Cap on the Euler steps of one member.

    Returns
    -------
    Trajectory
        ``times`` (the output times reached), ``final`` of shape ``(B, n, k)``: the
        unit rows of every member at the last output time, or at the time it
        retired; ``n_steps``: the Euler steps of a member that ran to the end;
        ``method="euler"``, ``dt``; and, in ``info`` (read as attributes):

        * ``member_steps`` (int): Euler steps summed over the members (fewer than ``B *
          n_steps`` when members retire).
        * ``reached`` (int): Output times reached (all of them, unless every member
          retired earlier).
    """
    B, n, k = Y.shape
    dtype = Y.dtype
    fused = A is None and V is None and _fused(beta, n, dtype)
    final = np.empty_like(Y)
    st: dict[str, Any] = {"active": np.arange(B), "member_steps": 0}
    if fused:
        st["Yx"], st["s"], st["b"] = kern.scaled_state(Y, beta)
        work = (
            np.empty((min(chunk, B), n, n), dtype=dtype),
            np.empty((min(chunk, B), n, k + 1), dtype=dtype),
            np.empty((min(chunk, B), k + 1, n), dtype=dtype),
        )
    else:
        st["Y"], st["beta"] = Y.copy(), beta.astype(dtype)
        st["A"], st["V"] = A, V

    def members(arr, lo):
        return arr if arr is None or np.ndim(arr) <= 2 else arr[lo : lo + chunk]

    def advance(st, h, m):
        active = st["active"]
        st["member_steps"] += m * active.size
        for lo in range(0, active.size, chunk):
            if fused:
                sl = slice(lo, lo + chunk)
                kern.euler_identity_steps(
                    st["Yx"][sl],
                    st["s"][sl],
                    st["b"][sl],
                    dtype.type(h),
                    m,
                    normalization=normalization,
                    work=work,
                )
                continue
            Yc = st["Y"][lo : lo + chunk]
            bc = st["beta"][lo : lo + chunk]
            Ac, Vc = members(st["A"], lo), members(st["V"], lo)
            for _ in range(m):
                F = kern.softmax_field(Yc, bc, Ac, Vc, normalization=normalization)
                kern.project(Yc, F)
                F *= h
                Yc += F
                kern.retract(Yc)
        return st

    def state_of(st):
        return st["Yx"] if fused else st["Y"]

    def observe_all(ti, st):
        if observe is None and retire is None:
            return False  # no Gram matrix needed
        active = st["active"]
        keep = np.ones(active.size, dtype=bool)
        for lo in range(0, active.size, chunk):
            sl = slice(lo, lo + chunk)
            if fused:
                G = kern.scaled_gram(st["Yx"][sl], st["b"][sl])
            else:
                Yc = st["Y"][sl]
                G = Yc @ _tr(Yc)
            if observe is not None:
                observe(ti, active[sl], G)
            if retire is not None and ti + 1 < times.size:
                keep[sl] = ~np.asarray(retire(ti, active[sl], G), dtype=bool)
        if not keep.all():
            done = ~keep
            final[active[done]] = _rows_of(st, done)
            st["active"] = active[keep]
            for key in ("Yx", "s", "b", "Y", "beta"):
                if key in st:
                    st[key] = st[key][keep]
            for key in ("A", "V"):
                if st.get(key) is not None and np.ndim(st[key]) == 3:
                    st[key] = st[key][keep]
        return st["active"].size == 0  # every member retired: stop

    def _rows_of(st, sel):
        if fused:
            return kern.unscaled(st["Yx"][sel], st["s"][sel])
        return st["Y"][sel]

    run = drive(
        advance,
        st,
        times,
        control=Fixed(dt),
        observe=observe_all,
        finite=lambda st: bool(np.all(np.isfinite(state_of(st)))),
        max_steps=max_steps,
        progress=progress,
        name=what,
        advice={
            Outcome.NONFINITE: "reduce dt",
            Outcome.BUDGET_EXHAUSTED: "increase dt or max_steps",
        },
    )
    st, n_steps, reached = run.state, run.n_steps, run.n_reached
    if st["active"].size:
        final[st["active"]] = _rows_of(st, slice(None))
    return trajectory(
        times=times[:reached],
        final=final,
        method="euler",
        n_steps=n_steps,
        dt=dt,
        member_steps=st["member_steps"],
        reached=reached,
    )


# ------------------------------------------------------------ simulate_ensemble
#: The result of :func:`simulate_ensemble` is an :class:`attnlib.Trajectory` (the
#: name of earlier releases is kept).
EnsembleResult = Trajectory


def _batched_matrix(M, name, B, d):
    if M is None:
        return None
    arr = np.asarray(M)
    if arr.ndim == 2:
        arr = as_matrix(arr, name, shape=(d, d))
        return arr
    if arr.ndim == 3:
        if arr.shape != (B, d, d):
            raise ValueError(
                f"{name} must have shape ({d}, {d}) or ({B}, {d}, {d}), got {arr.shape}"
            )
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} must contain only finite values")
        return arr.astype(np.float64, copy=False)
    raise ValueError(
        f"{name} must have shape ({d}, {d}) or ({B}, {d}, {d}), got {arr.shape}"
    )


def span_coordinates(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Coordinates ``Y`` (B, n, n) of tokens ``X`` (B, n, d), d > n, in an
    orthonormal basis ``U`` (B, d, n) of their span: ``X = Y U^T``."""
    U, _ = np.linalg.qr(_tr(X))
    return X @ U, U


def simulate_ensemble(
    X0: np.ndarray,
    *,
    beta: float | np.ndarray,
    times: Any,
    dt: float = 0.1,
    normalization: str = "sa",
    Q: np.ndarray | None = None,
    K: np.ndarray | None = None,
    V: np.ndarray | None = None,
    observables: Mapping[str, Callable[[np.ndarray], Any]] | None = None,
    reduce: bool = True,
    chunk: int = 128,
    progress: bool = False,
    max_steps: int = MAX_STEPS,
) -> Trajectory:
    r"""Euler + retraction for an ensemble of ``B`` independent systems on the sphere.

    Each step is

    .. math::

        x_i \leftarrow \frac{x_i + h\,P_{x_i} v_i}{|x_i + h\,P_{x_i} v_i|},\qquad
        v_i = \frac{1}{Z_i}\sum_j e^{\beta\langle Q x_i, K x_j\rangle} V x_j

    (SA; USA divides by :math:`n`), the scheme of [GLPR]'s code, vectorised over the
    ensemble with batched matrix products (:func:`run_ensemble`). With
    ``Q = K = V = None`` (identity) the fused step of the engine is taken, whose
    weights :math:`e^{1+\beta\langle x_i,x_j\rangle}` never overflow for
    :math:`\beta \le \log(\text{float max}) - 1 - \log n` (beyond, the row maximum
    is subtracted instead); for ``d > n`` and ``reduce=True`` the system is
    integrated in the span of its initial tokens (module docstring). The step rule
    is that of :func:`attnlib.simulate` with ``method="euler"`` (the same states up
    to rounding).

    Parameters
    ----------
    X0 : ndarray, shape (B, n, d)
        Unit vectors (an ``(n, d)`` array is treated as ``B = 1``).
    beta : float or ndarray of shape (B,)
        Inverse temperature(s), one per member if an array.
    times : array_like, shape (T,)
        Non-decreasing output times ``>= 0``.
    dt : float
        Largest Euler step (steps are shortened to hit every output time).
    normalization : {"sa", "usa"}
    Q, K, V : ndarray, shape (d, d) or (B, d, d), optional
        Query, key and value matrices (identity if omitted), shared or one per member.
    observables : mapping name -> callable(G, beta), optional
        Functions of the Gram matrices ``G`` of shape ``(b, n, n)`` and of the
        inverse temperatures ``beta`` of shape ``(b,)`` of a chunk of ``b`` members
        (for example :class:`PairFraction`, :class:`Energy`), returning arrays whose
        first axis is the member; evaluated at every output time.
    reduce : bool
        Use the span reduction when it applies (``Q = K = V = None`` and ``d > n``).
    chunk : int
        Members integrated together (small chunks stay in cache; the results do not
        depend on it).
    progress : bool
        ``tqdm.auto`` bar over the output times.
    max_steps : int
        Cap on the number of Euler steps; a ``TooManyStepsError`` (a ``ValueError``)
        is raised before the first step if ``times`` and ``dt`` need more.

    Returns
    -------
    Trajectory
        ``times``: the output times; ``observables``: each observable evaluated on
        the Gram matrices ``(B, n, n)`` at ``times`` (shape ``(T, ...)``);
        ``final`` of shape ``(B, n, d)``: the state at the last time;
        ``method="euler"``; and, in ``info`` (read as attributes):

        * ``reduced`` (bool): Whether the span reduction (see the module docstring) was
          used.

    References
    ----------
    [GLPR] §6 and Fig 3; the Euler + normalisation scheme of their public code.

    Examples
    --------
    >>> import numpy as np
    >>> from attnlib import sample_sphere
    >>> from attnlib.metrics import PairFraction
    >>> X0 = sample_sphere(8, 16, rng=0, batch=4)
    >>> r = simulate_ensemble(X0, beta=1.0, times=[0, 5, 10],
    ...                       observables={"p": PairFraction(1e-3)})
    >>> r.observables["p"].shape, r.final.shape
    ((3, 4), (4, 8, 16))
    """
    X = as_states(X0, "X0")
    single = X.ndim == 2
    if single:
        X = X[None]
    check_unit_norm(X, "X0")
    B, n, d = X.shape
    b = as_beta(beta, B, states="X0")
    b = np.full(B, b) if np.ndim(b) == 0 else b
    check_choice(normalization, "normalization", NORMALIZATIONS)
    t_arr = output_times(times)
    dt = check_real(dt, "dt", low=0.0, strict_low=True)
    max_steps = check_int(max_steps, "max_steps", low=1)
    Qm = _batched_matrix(Q, "Q", B, d)
    Km = _batched_matrix(K, "K", B, d)
    Vm = _batched_matrix(V, "V", B, d)
    identity = Qm is None and Km is None and Vm is None
    obs = check_observables(observables)
    reduce = check_bool(reduce, "reduce")
    progress = check_bool(progress, "progress")
    dtype = X.dtype
    if identity and normalization == "usa" and b.max() > log_max(dtype):
        # the velocity is e^beta / n times a sum of n weights <= 1
        raise ValueError(
            f"beta must be <= {log_max(dtype):.1f} for USA in {dtype.name} "
            f"(e^beta overflows), got {b.max():g}; use normalization='sa'"
            + (" or float64" if dtype != np.float64 else "")
        )
    chunk = check_int(chunk, "chunk", low=1)
    reduced = bool(reduce and identity and d > n)
    if reduced:
        Y, U = span_coordinates(X)
    else:
        Y, U = X, None
    A = None
    if Qm is not None or Km is not None:
        # <Q x, K y> = x^T (Q^T K) y
        Qt = np.eye(d, dtype=dtype) if Qm is None else Qm
        Kt = np.eye(d, dtype=dtype) if Km is None else Km
        A = (_tr(Qt) @ Kt).astype(dtype)
    Vt = None if Vm is None else Vm.astype(dtype)
    recorded: dict[str, list[list[np.ndarray]]] = {k: [[] for _ in t_arr] for k in obs}

    def observe(ti, members, G):
        for name, fn in obs.items():
            recorded[name][ti].append(np.asarray(fn(G, b[members])))

    run = run_ensemble(
        Y,
        b,
        t_arr,
        dt,
        normalization=normalization,
        A=A,
        V=Vt,
        observe=observe if obs else None,
        chunk=chunk,
        progress=progress,
        max_steps=max_steps,
    )
    final = run.final @ _tr(U) if reduced else run.final
    final = final.astype(dtype, copy=False)
    out = {
        k: np.stack(
            [parts[0] if len(parts) == 1 else np.concatenate(parts) for parts in v]
        )
        for k, v in recorded.items()
    }
    if single:
        out = {
            k: v[:, 0] if v.ndim >= 2 and v.shape[1] == 1 else v for k, v in out.items()
        }
        final = final[0]
    return trajectory(
        times=t_arr,
        observables=MappingProxyType(out),
        final=final,
        method="euler",
        n_steps=run.n_steps,
        dt=dt,
        reduced=reduced,
    )
