r"""Phase diagrams of clustering: [GLPR] Figs 3 and 5, and the curve Gamma.

* :func:`phase_diagram` estimates
  :math:`P(\langle x_i(t), x_j(t)\rangle \ge 1-\delta)` over a grid of
  :math:`(t, \beta)` from ensembles of i.i.d. uniform initial tokens, integrated by
  the engine of :mod:`attnlib.clustering`, split into tasks run by
  :func:`attnlib.sweep.sweep` (serially or on any executor);
* :func:`phase_transition_curve` is the curve
  :math:`\Gamma = \{(t,\beta) : \gamma_\beta(t) = 1-\delta\}` of the
  equiangular ODE ([GLPR] Thm 6.8);
* :func:`random_qkv` draws the random query, key and value matrices of [GLPR] Fig 5.

Seed contract. Value number ``k`` of the grid of ``beta`` draws its initial tokens
(then, with ``qkv``, its random matrices) from
``numpy.random.default_rng(SeedSequence(rng).spawn(m)[k])`` (an integer ``rng``),
exactly as
``sample_sphere(n, d, rng=..., batch=samples)`` followed by ``random_qkv(...)``.
A task holds some values of ``beta`` and :func:`attnlib.sweep.sweep` hands it the
seeds of its values, which is all it draws from: the diagram depends on ``rng``
only, never on the method, the grouping of the values into tasks or the executor.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .._stepping import MAX_STEPS, output_times, planned_steps
from .._deprecation import moved_arguments
from .._validation import (
    NORMALIZATIONS,
    as_finite,
    check_bool,
    check_choice,
    check_int,
    check_real,
    check_rng,
    check_steps,
    log_max,
    spawn_seeds,
)
from ._ensemble import (
    can_retire,
    retire_margin,
    run_ensemble,
    simulate_ensemble,
    span_coordinates,
)
from ..equiangular import equiangular_time_to
from ..metrics import PairFraction
from ..sphere import retract, sample_sphere
from ..sweep import sweep

if TYPE_CHECKING:  # concurrent.futures imports logging: only for the annotations
    from concurrent.futures import Executor

__all__ = [
    "QKV_KINDS",
    "VALUE_KINDS",
    "random_qkv",
    "phase_transition_curve",
    "PhaseDiagram",
    "PhaseTask",
    "PHASE_METHODS",
    "phase_diagram",
]


def _tr(M):
    return np.swapaxes(M, -1, -2)


# ------------------------------------------------------------------- random Q,K,V
#: The kinds of random ``Q``, ``K`` of :func:`random_qkv`.
QKV_KINDS = ("ginibre", "goe", "wishart", "goe_form")
#: The kinds of value matrix ``V`` of :func:`random_qkv`.
VALUE_KINDS = ("identity", "random", "plus", "minus", "wishart")


def _random_matrix(kind, d, rng, batch):
    shape = (d, d) if batch is None else (batch, d, d)
    G = rng.standard_normal(shape) / np.sqrt(d)
    if kind == "ginibre":
        return G
    if kind == "goe":
        return (G + _tr(G)) / np.sqrt(2.0)
    return G @ _tr(G)  # wishart


def random_qkv(
    d: int,
    *,
    kind: str = "ginibre",
    value: str = "identity",
    rng: np.random.Generator | int,
    batch: int | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Random query, key and value matrices, as in [GLPR] Fig 5.

    Convention (scaled so that spectra stay of order one as ``d`` grows): with
    :math:`G` a ``d x d`` matrix of i.i.d. :math:`N(0, 1/d)` entries,

    * ``"ginibre"``: :math:`G` (circular law on the unit disc);
    * ``"goe"``: :math:`(G + G^\top)/\sqrt 2` (semicircle on :math:`[-2, 2]`);
    * ``"wishart"``: :math:`G G^\top` (Marchenko–Pastur on :math:`[0, 4]`).

    For unit ``x``, ``y`` and independent Ginibre ``Q``, ``K`` the score
    :math:`\langle Qx, Ky\rangle` has standard deviation :math:`1/\sqrt d`. The
    [GLPR] code uses the bilinear form :math:`G_1 G_2/\sqrt d` with :math:`N(0, 1)`
    entries, whose scores have standard deviation 1: ``beta`` here corresponds to
    ``beta / sqrt(d)`` there.

    ``Q`` and ``K`` are drawn independently from ``kind``, except ``"goe_form"``:
    ``Q = I`` and ``K`` from the GOE, so that the bilinear form :math:`Q^\top K` is
    itself a GOE matrix (the "KQ = GOE" panels of [GLPR] Fig 5). ``V`` is the
    identity (``"identity"``), an independent draw of ``kind`` (``"random"``), an
    independent Wishart matrix :math:`GG^\top` (``"wishart"``, positive
    semi-definite whatever ``kind``), or :math:`\pm Q^\top K`
    (``"plus"``/``"minus"``). For the kinds with independent ``Q`` and ``K``,
    :math:`Q^\top K` is not symmetric (almost surely), so the model with
    :math:`V = \pm Q^\top K` is *not* the gradient flow of the energy :math:`E_D`
    of [BKKRW] (that needs :math:`Q^\top K = V = D` symmetric); with ``"goe_form"``
    it is (up to the factor beta, a time scale, with an indefinite :math:`D`). For
    ``"wishart"`` the eigenvalues of
    :math:`Q^\top K = QK` are real and non-negative (:math:`QK` is similar to
    :math:`Q^{1/2} K Q^{1/2}`), and with ``"plus"`` the tokens are observed to end
    in two antipodal clusters on the top eigenvector of
    ``V`` (Chapter 2, Exercise 3).

    Parameters
    ----------
    d : int
    kind : {"ginibre", "goe", "wishart", "goe_form"}
    value : {"identity", "random", "plus", "minus", "wishart"}
    rng : Generator or int
    batch : int, optional
        Draw ``batch`` independent triples (arrays of shape ``(batch, d, d)``).

    Returns
    -------
    Q, K, V : ndarrays of shape (d, d) or (batch, d, d)

    Examples
    --------
    >>> Q, K, V = random_qkv(4, kind="goe", value="minus", rng=0)
    >>> bool(np.allclose(V, -(Q.T @ K)))
    True
    """
    d = check_int(d, "d", low=1)
    check_choice(kind, "kind", QKV_KINDS)
    check_choice(value, "value", VALUE_KINDS)
    rng = check_rng(rng)
    if batch is not None:
        batch = check_int(batch, "batch", low=1)
    if kind == "goe_form":
        K = _random_matrix("goe", d, rng, batch)
        Q = np.broadcast_to(np.eye(d), K.shape).copy()
    else:
        Q = _random_matrix(kind, d, rng, batch)
        K = _random_matrix(kind, d, rng, batch)
    if value == "identity":
        V = np.broadcast_to(np.eye(d), Q.shape).copy()
    elif value == "random":
        V = _random_matrix("goe" if kind == "goe_form" else kind, d, rng, batch)
    elif value == "wishart":
        V = _random_matrix("wishart", d, rng, batch)
    else:
        V = (1.0 if value == "plus" else -1.0) * (_tr(Q) @ K)
    return Q, K, V


# ------------------------------------------------------------------ the curve
def phase_transition_curve(
    betas: Any, *, n: int, delta: float = 1e-3, normalization: str = "sa"
) -> np.ndarray:
    r"""Phase-transition curve: times with :math:`\gamma_\beta(t_\beta) = 1-\delta`.

    :math:`\gamma_\beta` solves the equiangular ODE of [GLPR] Thm 6.8 (see
    :mod:`attnlib.equiangular`); :math:`\Gamma = \{(t_\beta, \beta)\}`.

    Parameters
    ----------
    betas : array_like, shape (m,)
    n : int
    delta : float in (0, 1]
    normalization : {"sa", "usa"}

    Returns
    -------
    ndarray, shape (m,)

    Examples
    --------
    >>> round(float(phase_transition_curve([4.0], n=32)[0]), 3)
    6.954
    """
    bs = np.atleast_1d(as_finite(betas, "betas"))
    if bs.ndim != 1 or np.any(bs < 0):
        raise ValueError("betas must be a 1-D array of finite values >= 0")
    delta = check_real(delta, "delta", low=0.0, high=1.0, strict_low=True)
    if 1.0 - delta == 1.0:
        raise ValueError(f"delta must be above rounding (1 - delta < 1), got {delta}")
    return np.array(
        [
            equiangular_time_to(
                1.0 - delta, beta=float(bb), n=n, normalization=normalization
            )
            for bb in bs
        ]
    )


# ------------------------------------------------------------ phase diagrams
@dataclass(frozen=True)
class PhaseDiagram:
    r"""Result of :func:`phase_diagram`.

    Attributes
    ----------
    betas : ndarray, shape (m,)
    times : ndarray, shape (T,)
    probability : ndarray, shape (m, T)
        Ensemble mean of the fraction of pairs with
        :math:`\langle x_i,x_j\rangle\ge 1-\delta`.
    stderr : ndarray, shape (m, T)
        Standard error of that mean over the samples.
    d, n, samples : int
    delta : float
    qkv : str or None
        ``"kind/value"`` for random matrices (:func:`random_qkv`), else ``None``.
    system_steps : int
        Euler steps integrated, summed over the systems (with retirement, fewer than
        ``samples * len(betas)`` times the steps of one system).
    method : str
        ``"fast"`` or ``"reference"`` (see :func:`phase_diagram`).
    """

    betas: np.ndarray
    times: np.ndarray
    probability: np.ndarray = field(repr=False)
    stderr: np.ndarray = field(repr=False)
    d: int = 2
    n: int = 32
    samples: int = 0
    delta: float = 1e-3
    qkv: str | None = None
    system_steps: int = 0
    method: str = "fast"

    def level_beta(self, t: float, level: float = 0.5) -> float:
        """The ``beta`` at which the probability at time ``t`` crosses ``level``.

        Linear interpolation in ``beta`` at the output time closest to ``t``, for
        a probability decreasing in ``beta``; ``nan`` if it never crosses.
        """
        k = int(np.argmin(np.abs(self.times - t)))
        p = self.probability[:, k]
        below = np.nonzero(p < level)[0]
        if below.size == 0 or below[0] == 0:
            return float("nan")
        j = below[0]
        p0, p1 = p[j - 1], p[j]
        return float(
            self.betas[j - 1]
            + (p0 - level) / (p0 - p1) * (self.betas[j] - self.betas[j - 1])
        )


#: The methods of :func:`phase_diagram` (``method=None`` picks the fastest).
PHASE_METHODS = ("fast", "reference")


@dataclass(frozen=True, eq=False)
class PhaseTask:
    """One task of :func:`phase_diagram`: some values of ``beta``, one worker.

    Its seeds (one per value of ``beta``) are handed to it by
    :func:`attnlib.sweep.sweep` (module docstring, seed contract).

    Attributes
    ----------
    betas : tuple of float
    d, n, samples : int
    times : ndarray, shape (T,)
    dt, delta : float
    normalization : {"sa", "usa"}
    method : {"fast", "reference"}
        ``"fast"``: every value of ``beta`` of the task in one ensemble on the
        fused step, retiring clustered members; ``"reference"``: one
        :func:`attnlib.clustering.simulate_ensemble` per value, every member to the
        end (random ``qkv`` allowed).
    qkv : str or None
    retire : bool
    dtype : str
        ``"float64"`` or ``"float32"`` (fast method).
    """

    betas: tuple[float, ...]
    d: int
    n: int
    samples: int
    times: np.ndarray = field(repr=False)
    dt: float
    delta: float
    normalization: str = "sa"
    method: str = "fast"
    qkv: str | None = None
    retire: bool = True
    dtype: str = "float64"


def _phase_stats(p: np.ndarray, samples: int) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard error over the members (axis 1) of fractions (T, samples)."""
    se = (
        p.std(axis=1, ddof=1) / np.sqrt(samples)
        if samples > 1
        else np.zeros(p.shape[0])
    )
    return p.mean(axis=1), se


def _initial_tokens(seed: Any, n: int, d: int, samples: int) -> np.ndarray:
    """The tokens of one beta: the draw of :func:`sample_sphere`, in span coordinates.

    The Gaussian draw of ``sample_sphere(n, d, rng=default_rng(seed), batch=samples)``
    (the reference method's draw). For ``d > n`` the result is the Cholesky factor
    of the Gram matrix of the normalised rows: a lower-triangular ``(n, n)`` array
    with the same Gram matrix, i.e. the same tokens up to a rotation, which the
    dynamics commutes with. It is four times cheaper than normalising the
    ``(n, d)`` rows and taking a QR factorisation.
    """
    Z = np.random.default_rng(seed).standard_normal((samples, n, d))
    if d <= n:
        return retract(Z)
    G = Z @ _tr(Z)
    s = 1.0 / np.sqrt(np.einsum("bii->bi", G))
    G *= s[:, :, None]
    G *= s[:, None, :]
    try:
        return np.linalg.cholesky(G)
    except np.linalg.LinAlgError:  # numerically singular: factor the rows instead
        return span_coordinates(retract(Z))[0]


def _reference(task: PhaseTask, beta: float, seed: Any) -> tuple:
    """``samples`` systems of one beta through simulate_ensemble, to the end."""
    rng = np.random.default_rng(seed)
    X0 = sample_sphere(task.n, task.d, rng=rng, batch=task.samples)
    mats: dict[str, Any] = {}
    if task.qkv is not None:
        kind, value = task.qkv.split("/")
        mats = dict(
            zip(
                "QKV",
                random_qkv(task.d, kind=kind, value=value, rng=rng, batch=task.samples),
            )
        )
    r = simulate_ensemble(
        X0,
        beta=beta,
        times=task.times,
        dt=task.dt,
        normalization=task.normalization,
        observables={"p": PairFraction(task.delta)},
        **mats,
    )
    return _phase_stats(r.observables["p"], task.samples)


def _fast(task: PhaseTask, seeds: tuple) -> tuple[list[tuple], int]:
    """Every beta of the task in one ensemble, retiring fully clustered systems."""
    dtype = np.dtype(task.dtype)
    samples, times = task.samples, task.times
    Y0 = np.concatenate(
        [
            _initial_tokens(s, task.n, task.d, samples).astype(dtype, copy=False)
            for s in seeds
        ]
    )
    beta = np.repeat(np.asarray(task.betas, dtype=np.float64), samples)
    p = np.empty((times.size, beta.size), dtype=np.float64)
    fraction = PairFraction(task.delta)
    threshold = 1.0 - task.delta
    can = np.zeros(beta.size, dtype=bool)
    if task.retire and threshold >= 0:
        can = can_retire(beta, task.dt, task.normalization)
    margin = retire_margin(dtype)

    def observe(ti, members, G):
        p[ti, members] = fraction(G)

    def retire(ti, members, G):
        done = can[members] & (G.min(axis=(-1, -2)) >= threshold + margin)
        p[ti + 1 :, members[done]] = 1.0  # by the lemma of attnlib.clustering._ensemble
        return done

    run = run_ensemble(
        Y0,
        beta,
        times,
        task.dt,
        normalization=task.normalization,
        observe=observe,
        retire=retire,
        what="phase_diagram",
    )
    stats = [
        _phase_stats(p[:, i * samples : (i + 1) * samples], samples)
        for i in range(len(task.betas))
    ]
    return stats, run.info["member_steps"]


def _run_task(task: PhaseTask, seeds: tuple) -> tuple[list[tuple], int]:
    """Run one task with the seeds :func:`attnlib.sweep.sweep` hands it."""
    if task.method == "fast":
        return _fast(task, seeds)
    stats = [_reference(task, b, s) for b, s in zip(task.betas, seeds)]
    steps = int(planned_steps(task.times, task.dt)) * task.samples * len(task.betas)
    return stats, steps


@moved_arguments("d", renamed={"seed": "rng"})
def phase_diagram(
    d: int,
    *,
    betas: Any,
    samples: int,
    n: int = 32,
    times: Any = None,
    t_final: float = 30.0,
    dt: float = 0.1,
    delta: float = 1e-3,
    qkv: str | None = None,
    normalization: str = "sa",
    rng: Any = 0,
    executor: Executor | None = None,
    progress: bool = True,
    method: str | None = None,
    retire: bool = True,
    dtype: Any = np.float64,
    betas_per_task: int | None = None,
    max_steps: int = MAX_STEPS,
) -> PhaseDiagram:
    r"""Estimate :math:`P(\langle x_i(t),x_j(t)\rangle \ge 1-\delta)` over (beta, t).

    [GLPR] Fig 3 (and Fig 5 with ``qkv``): for each ``beta``, ``samples`` systems of
    ``n`` i.i.d. uniform tokens on :math:`S^{d-1}` are integrated with explicit Euler
    steps ``dt`` and the retraction (the scheme of
    :func:`attnlib.clustering.simulate_ensemble`), and the fraction of close pairs is
    averaged over the systems.

    Two methods give the same estimates, from the same initial tokens (the seed
    contract of the module docstring):

    * ``"fast"`` (``Q = K = V = I``): several values of ``beta`` form one ensemble
      (per-member ``beta``) on the fused step of :mod:`attnlib.clustering`, and, with
      ``retire``, a system leaves the computation once all its pairs are within
      ``delta``: by the invariance lemma of :mod:`attnlib.clustering` (the discrete
      cone collapse), its fraction is 1 at every later time, so the arrays are
      identical with and without retirement. ``dtype=np.float32`` halves the cost;
      its diagram agrees with float64 within the Monte Carlo error (the tests check
      it) but float64 is the default.
    * ``"reference"``: one :func:`attnlib.clustering.simulate_ensemble` per ``beta``,
      every system to the end (the only method for random ``qkv``).

    ``method=None`` takes the fastest that applies: ``"fast"``, or ``"reference"``
    with ``qkv``; asking for ``"fast"`` with ``qkv`` warns and runs the reference
    method. The work is split into :class:`PhaseTask` tasks run by
    :func:`attnlib.sweep.sweep`, serially or on ``executor`` (a process pool, or a
    Dask cluster through ``client.get_executor()``). A fast task holds
    ``betas_per_task`` values of ``beta`` (strided over the grid, so that tasks
    cost about the same); a reference task one.

    Parameters
    ----------
    d : int
        Dimension of the ambient space.
    betas : array_like, shape (m,)
    samples : int
        Systems per ``beta``.
    n : int
    times : array_like, optional
        Output times (default: equally spaced on ``[0, t_final]`` with spacing
        ``max(dt, t_final / 60)``).
    t_final, dt, delta : float
    qkv : str, optional
        ``"kind/value"`` for random matrices drawn per system by :func:`random_qkv`,
        e.g. ``"ginibre/identity"`` (reference method only).
    normalization : {"sa", "usa"}
    rng : int, SeedSequence or Generator
        Root of the seeds; for an integer, ``beta`` number ``k`` uses
        ``SeedSequence(rng).spawn(m)[k]``.
    executor : concurrent.futures.Executor, optional
    progress : bool
        ``tqdm.auto`` bar over the tasks.
    method : {None, "fast", "reference"}
    retire : bool
        Retire fully clustered systems (fast method; SA with ``dt <= 1``, USA with
        ``dt * e**beta <= 1``, where the lemma applies).
    dtype : numpy.float64 or numpy.float32
        Floating type of the fast method.
    betas_per_task : int, optional
        Values of ``beta`` per fast task. The default gives tasks of about 1024
        systems but at least 16 tasks where the grid allows, so that every worker
        of a pool gets some. Grouping sizes the tasks for a scheduler; it does not
        change the arithmetic of a system-step.
    max_steps : int
        Cap on the Euler steps of one system.

    Returns
    -------
    PhaseDiagram

    Examples
    --------
    >>> pd = phase_diagram(8, betas=[1.0, 4.0], samples=4, t_final=2.0, progress=False)
    >>> pd.probability.shape, pd.method
    ((2, 21), 'fast')
    >>> ref = phase_diagram(8, betas=[1.0, 4.0], samples=4, t_final=2.0,
    ...                     progress=False, method="reference")
    >>> bool(np.abs(pd.probability - ref.probability).max() < 1e-12)
    True
    """
    d = check_int(d, "d", low=2)
    n = check_int(n, "n", low=2)
    samples = check_int(samples, "samples", low=1)
    try:
        bs = np.atleast_1d(np.asarray(betas, dtype=np.float64))
    except (TypeError, ValueError):
        raise TypeError(
            f"betas must be a 1-D array of numbers, got {type(betas).__name__}"
        ) from None
    if bs.ndim != 1 or bs.size == 0 or not np.all(np.isfinite(bs)) or np.any(bs < 0):
        raise ValueError("betas must be a non-empty 1-D array of finite values >= 0")
    dt = check_real(dt, "dt", low=0.0, strict_low=True)
    delta = check_real(delta, "delta", low=0.0, high=2.0)
    check_choice(normalization, "normalization", NORMALIZATIONS)
    check_choice(method, "method", (None,) + PHASE_METHODS)
    retire = check_bool(retire, "retire")
    progress = check_bool(progress, "progress")
    if qkv is not None:
        if not isinstance(qkv, str) or qkv.count("/") != 1:
            raise ValueError(
                f"qkv must be 'kind/value' (e.g. 'ginibre/identity'), got {qkv!r}"
            )
        kind, value = qkv.split("/")
        check_choice(kind, "qkv kind", QKV_KINDS)
        check_choice(value, "qkv value", VALUE_KINDS)
        if method == "fast":
            warnings.warn(
                "method='fast' integrates Q = K = V = I only: random matrices "
                f"(qkv={qkv!r}) use method='reference'",
                UserWarning,
                stacklevel=2,
            )
        method = "reference"
    elif method is None:
        method = "fast"
    try:
        dtype = np.dtype(dtype)
    except TypeError:
        raise TypeError(
            f"dtype must be numpy.float64 or numpy.float32, got {dtype!r}"
        ) from None
    if dtype not in (np.dtype(np.float64), np.dtype(np.float32)):
        raise ValueError(f"dtype must be numpy.float64 or numpy.float32, got {dtype}")
    if dtype != np.float64 and method != "fast":
        raise ValueError("dtype=float32 needs method='fast' (and qkv=None)")
    if times is None:
        t_final = check_real(t_final, "t_final", low=0.0, strict_low=True)
        step = max(dt, t_final / 60.0)
        times = np.linspace(0.0, t_final, int(round(t_final / step)) + 1)
    times = output_times(times)
    max_steps = check_int(max_steps, "max_steps", low=1)
    check_steps(
        planned_steps(times, dt),
        max_steps,
        what=f"phase_diagram (dt = {dt:.3g}, up to t_final = {times[-1]:g}, the "
        "last of times)",
        hint="increase dt or max_steps",
    )
    children = spawn_seeds(rng, bs.size)  # the seed contract
    if method == "reference":
        groups = [[i] for i in range(bs.size)]
    else:
        # weights up to e^(1 + beta) summed over n tokens must stay finite
        limit = log_max(dtype) - 1.0 - math.log(n)
        if bs.max() > limit:
            raise ValueError(
                f"beta must be <= {limit:.1f} for method='fast' in {dtype} "
                f"(got {bs.max():g}); use float64 or method='reference'"
            )
        if betas_per_task is None:
            # about 1024 systems a task, but at least 16 tasks where the grid allows
            betas_per_task = max(1, min(-(-1024 // samples), -(-bs.size // 16)))
        per = min(check_int(betas_per_task, "betas_per_task", low=1), bs.size)
        n_tasks = -(-bs.size // per)
        groups = [list(range(j, bs.size, n_tasks)) for j in range(n_tasks)]
        # largest beta first: its systems retire last, so its tasks take longest
        # and should not be the ones left running alone at the end
        groups.sort(key=lambda g: -bs[g].max())
    tasks = [
        PhaseTask(
            betas=tuple(float(bs[i]) for i in g),
            d=d,
            n=n,
            samples=samples,
            times=times,
            dt=dt,
            delta=delta,
            normalization=normalization,
            method=method,
            qkv=qkv,
            retire=retire,
            dtype=dtype.name,
        )
        for g in groups
    ]
    out = sweep(
        _run_task,
        tasks,
        seeds=[tuple(children[i] for i in g) for g in groups],
        executor=executor,
        progress=progress,
        desc=f"phase diagram d={d}",
    )
    res: list[Any] = [None] * bs.size
    system_steps = 0
    for g, (stats, steps) in zip(groups, out):
        system_steps += steps
        for i, st in zip(g, stats):
            res[i] = st
    prob = np.stack([r[0] for r in res])
    se = np.stack([r[1] for r in res])
    return PhaseDiagram(
        bs, times, prob, se, d, n, samples, delta, qkv, system_steps, method
    )
