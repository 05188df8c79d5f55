r"""The compiled attention field behind :mod:`attnlib._kernel`, and its switch.

:func:`attnlib._kernel.softmax_field` and :func:`attnlib._kernel.symmetric_field`
hand their work to this module first; it answers with the field, or with
``NotImplemented`` for what it does not compile (the sigmoid weights, a custom
``logits_fn``, a bias that differs per ensemble member), which the numpy tiles then
evaluate. The numpy tiles stay the reference the compiled field is tested against
(``tests/test_compiled_kernel.py``).

Backends, chosen by the environment variable ``ATTNLIB_KERNEL`` or by :func:`use`:

* ``"numba"`` (the default when numba is installed: the extra ``fast`` of the
  checkout, ``pip install -e ".[fast]"``, which the book's environment includes):
  :mod:`attnlib._compiled_numba`, logits, exponential and weighted sums fused per
  group of four query rows, vectorised, tiles spread over threads. Compiled on first
  use and cached on disk; never imported by ``import attnlib``.
* ``"jax"``: :mod:`attnlib._compiled_jax`, the same tiles under ``jax.jit``; where JAX
  sees a GPU it runs there. On a CPU it is slower than numba
  (``benchmarks/velocity.py`` measures both).
* ``"numpy"``: the numpy tiles of :mod:`attnlib._kernel` only.

Why numba on the CPU. Measured on one core of the 2-core AVX-512 machine the book is
built on (``benchmarks/velocity.py``; the host is shared, so every figure is the
best of many calls): an exponential costs 0.80 ns in numpy (SIMD, the floor the
benchmark prints), 0.40 ns in the base-2 exponential of
:mod:`attnlib._compiled_numba` (0.46 ns inside the field), 1.0 ns under ``jax.jit``
and 4.2 ns through numba's ``np.exp`` (a ``libm`` call per entry, not vectorised).
The SA velocity of 4096 tokens on the sphere :math:`S^2` takes 1.3-1.45 times the
exponential floor with numba (1.1-1.2 from 16384 tokens on), 2.1-2.6 times with the
numpy tiles and 3.3-5 times under JAX: XLA cannot use each exponential for both
entries of a symmetric pair without a scatter, and each block is a separate
product, exponential and product over memory, where numba keeps four rows of a tile
in registers from the logits to the sums. numba also compiles once per machine
(cached on disk; ``make env`` does it) and is a 210 MB dependency; JAX is kept for
GPUs, where XLA's generated code is the fast one.

Threads. The compiled kernels use :func:`threads` threads: ``ATTNLIB_THREADS`` or
:func:`use`'s ``threads`` when given, otherwise the BLAS-thread setting of the
process (``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS``, ``MKL_NUM_THREADS``: the
book's kernels and the tests get their share of the CPUs there,
:func:`tools.execution.share_cpus` and the Makefile), otherwise every CPU. The
kernels never call BLAS inside their threads, so the two pools never nest.

Precision. The compiled field is computed in float64 whatever the dtype of the
tokens, with float64 accumulators, and returned in the dtype of ``X``. In float64
it agrees with the numpy tiles to about :math:`10^{-15}` relative (the tests ask
:math:`10^{-12}`): only the order of the sums and the last bits of the exponential
differ. For float32 tokens the result is the float64 field rounded to float32: its
error is the rounding, at most :math:`2^{-24}` of each entry, plus the effect of
the rounding of the tokens themselves (the numpy float32 path also rounds every
logit and exponential to float32, and is less accurate).
"""

from __future__ import annotations

import concurrent.futures
import functools
import importlib
import importlib.util
import os
import threading
import warnings
from typing import Any

import numpy as np

from ._validation import exp_scale, log_max

__all__ = [
    "BACKENDS",
    "use",
    "backend",
    "threads",
    "warm",
    "softmax_field",
    "symmetric_field",
]

BACKENDS = ("numba", "jax", "numpy")
# Below this many kernel entries (members x n x n) the numpy tiles are faster: a
# compiled call costs about 0.1 ms of preparation and thread start-up, the whole
# numpy evaluation of 32 tokens less than that.
MIN_ENTRIES = 1 << 15
# Members of fewer tokens than a tile and more than this many coordinates stay on the
# numpy tiles too: their batched matrix products (BLAS) beat the compiled tiles, which
# are fused for narrow tokens (256 members of 32 tokens in 32 coordinates: 1.4 times
# the numpy time; in 8 coordinates, or from 256 tokens on, the compiled tiles win)
MAX_SHORT_WIDTH = 8
SHORT = 256
# Below this many kernel entries the unit kernel runs on the calling thread whatever
# the threads: handing work to numba's threads costs 0.15-0.25 ms, the field of 1024
# tokens on one core about 0.5 ms
PARALLEL_ENTRIES = 1 << 20
_state: dict[str, Any] = {"backend": None, "threads": None}
_BLAS_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
# one compiled call at a time: each uses every thread it is given, and numba's
# workqueue threads (chosen because they survive a fork) take one caller at a time
_LOCK = threading.Lock()
# The threads of the unit kernel: Python threads, each running the serial kernel on
# its run of tiles (numba releases the GIL), the calling thread one of them. Handing
# work to them costs less than numba's own threads (two threads: 1.87 times one
# against 1.74, at 4096 tokens). Made on first use, forgotten in a forked child
# (whose copy has no threads).
_POOL: dict[str, Any] = {}
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_POOL.clear)


def _pool(workers: int) -> concurrent.futures.ThreadPoolExecutor:
    pool = _POOL.get("pool")
    if pool is None or pool._max_workers < workers:
        pool = _POOL["pool"] = concurrent.futures.ThreadPoolExecutor(
            workers, thread_name_prefix="attnlib-field"
        )
    return pool


def _available(name: str) -> bool:
    """Whether the backend's package is installed (found, not imported: numba takes
    a second to import, and a process whose systems are small never needs it)."""
    if name == "numpy":
        return True
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def use(name: str | None = None, *, threads: int | None = None) -> str:
    """Select the backend of the attention field, and optionally its threads.

    Parameters
    ----------
    name : {"numba", "jax", "numpy"}, optional
        ``None`` keeps the current choice (default: ``ATTNLIB_KERNEL``, else numba
        when it is installed, else numpy).
    threads : int, optional
        Threads of the compiled kernels (default: see :func:`threads`).

    Returns
    -------
    str
        The backend in use.

    Raises
    ------
    ValueError
        For an unknown backend, or ``threads < 1``.
    ImportError
        When the backend's package is not installed.
    """
    if name is not None:
        if name not in BACKENDS:
            raise ValueError(f"backend must be one of {BACKENDS}, got {name!r}")
        if not _available(name):
            raise ImportError(
                f"the {name} backend needs the package {name!r} (the extra 'fast' "
                f"of attnlib installs numba)"
            )
        _state["backend"] = name
    if threads is not None:
        if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)):
            raise TypeError(f"threads must be an int, got {type(threads).__name__}")
        if threads < 1:
            raise ValueError(f"threads must be >= 1, got {threads}")
        _state["threads"] = int(threads)
    return backend()


def backend() -> str:
    """The backend in use (resolved on the first call, see :func:`use`)."""
    if _state["backend"] is None:
        name = os.environ.get("ATTNLIB_KERNEL", "").strip().lower()
        if name:
            if name not in BACKENDS:
                raise ValueError(
                    f"ATTNLIB_KERNEL must be one of {BACKENDS}, got {name!r}"
                )
            if not _available(name):
                raise ImportError(f"ATTNLIB_KERNEL={name} but {name} is not installed")
        else:
            name = "numba" if _available("numba") else "numpy"
        _state["backend"] = name
    return _state["backend"]


def threads() -> int:
    """Threads of the compiled kernels: set by :func:`use`, ``ATTNLIB_THREADS``, the
    BLAS-thread variables, or the number of CPUs, in this order."""
    if _state["threads"] is not None:
        return _state["threads"]
    for var in ("ATTNLIB_THREADS",) + _BLAS_VARS:
        value = os.environ.get(var, "").strip()
        if value.isdigit() and int(value) > 0:
            return int(value)
    return os.cpu_count() or 1


def _impl():
    name = backend()
    if name == "numba":
        try:
            mod = importlib.import_module("attnlib._compiled_numba")
        except Exception as e:  # noqa: BLE001 - e.g. no writable cache directory
            # (a read-only sandbox): the numpy tiles compute the same field
            _state["backend"] = "numpy"
            warnings.warn(
                f"attnlib: the compiled attention field is unavailable ({e}); "
                "the numpy tiles are used",
                RuntimeWarning,
                stacklevel=3,
            )
            return None
        mod.set_threads(threads())
        return mod
    if name == "jax":
        return importlib.import_module("attnlib._compiled_jax")
    return None


def warm() -> str:
    """Compile every kernel of the backend in use once (numba writes the machine code
    to its cache on disk, which later processes load in a fraction of a second), so
    that processes started together (the chapters executed side by side, the test
    workers) do not each compile it. Returns the backend."""
    global MIN_ENTRIES
    saved, MIN_ENTRIES = MIN_ENTRIES, 0
    threads_before = _state["threads"]
    try:
        X = np.linspace(-1.0, 1.0, 24).reshape(8, 3)
        U = X / np.linalg.norm(X, axis=1, keepdims=True)
        for k in (1, 2):  # one thread takes the serial kernels
            _state["threads"] = k
            symmetric_field(U, U, 1.0, None)  # one norm, three coordinates
            symmetric_field(X, X, 1.0, None)  # several norms
            softmax_field(X, 1.0, mask="causal")
            softmax_field(
                X, 1.0, bias=lambda rows, m: np.zeros((rows.stop - rows.start, m))
            )
    finally:
        MIN_ENTRIES = saved
        _state["threads"] = threads_before
    return backend()


# ------------------------------------------------------------------ preparation
def _small(X: np.ndarray) -> bool:
    """Whether the numpy tiles are faster: few kernel entries, or short wide members."""
    n = X.shape[-2]
    if n < SHORT and X.shape[-1] > MAX_SHORT_WIDTH:
        return True
    return (X.shape[0] if X.ndim == 3 else 1) * n * n < MIN_ENTRIES


def _members(X: np.ndarray, beta: Any) -> tuple[np.ndarray, np.ndarray]:
    """``X`` as (B, n, k) float64 and ``beta`` as (B,) float64."""
    X3 = np.asarray(X if X.ndim == 3 else X[None], dtype=np.float64)
    betas = np.broadcast_to(
        np.asarray(beta, dtype=np.float64).reshape(-1), (X3.shape[0],)
    )
    return X3, betas


def _shape_back(F: np.ndarray, X: np.ndarray) -> np.ndarray:
    F = F if X.ndim == 3 else F[0]
    return F.astype(X.dtype, copy=False)


def _usa(num, log_scale, dtype, what, hint):
    return exp_scale(num, log_scale[..., None], what=what, hint=hint, dtype=dtype)


def symmetric_field(
    X: np.ndarray,
    XV: np.ndarray,
    beta: Any,
    A: np.ndarray | None,
    normalization: str = "sa",
    block: int = 256,
    *,
    what: str = "the USA velocity",
    hint: str = "",
) -> Any:
    """:func:`attnlib._kernel.symmetric_field`, compiled (``hint``: the advice of the
    USA overflow message); ``NotImplemented`` for the
    numpy backend."""
    # what the kernels do not take is decided before numba is imported (a small
    # system never imports it)
    if (A is not None and np.ndim(A) != 2) or _small(X):
        return NotImplemented
    impl = _impl()
    if impl is None:
        return NotImplemented
    X3, betas = _members(X, beta)
    XV3 = np.asarray(XV if XV.ndim == 3 else XV[None], dtype=np.float64)
    B, n, k = X3.shape
    Y = X3 if A is None else X3 @ np.asarray(A, dtype=np.float64)
    c = 0.5 * betas[:, None] * np.einsum("bij,bij->bi", Y, X3)
    cmax = c.max(axis=1, keepdims=True)
    if float(np.max(cmax - c.min(axis=1, keepdims=True))) > log_max(X.dtype):
        return None
    kv = XV3.shape[2]
    if k <= 3 and kv <= 3 and float(np.max(cmax - c.min(axis=1, keepdims=True))) <= 1:
        if hasattr(impl, "unit_tiles"):
            values = None if XV is X else XV3  # None: the values are the tokens
            return _unit(
                impl, X, X3, values, Y, betas, cmax, block, normalization, what, hint
            )
    g = np.exp(c - cmax)
    ZT = np.zeros((B, _up4(kv + 1), n))
    ZT[:, :kv] = np.swapaxes(XV3 * g[..., None], 1, 2)
    ZT[:, kv] = g
    left = np.zeros((B, n, _up4(k)))
    left[..., :k] = betas[:, None, None] * Y
    rightT = np.zeros((B, _up4(k), n))
    rightT[:, :k] = np.swapaxes(X3, 1, 2)
    with _LOCK:
        acc = impl.symmetric_tiles(
            left, rightT, -c, ZT, int(block), _work(B, n, block), threads()
        )
    acc = acc[:, : kv + 1]
    num = np.swapaxes(acc[:, :-1], 1, 2)
    if normalization == "sa":
        F = num / acc[:, -1][..., None]
    else:
        F = _usa(num, c + cmax - np.log(n), X.dtype, what, hint)
    return _shape_back(F, X)


def _unit(impl, X, X3, XV3, Y, betas, cmax, block, normalization, what, hint):
    """The symmetric field of at most three coordinates whose exponents
    ``beta x_i . A x_j`` all fit under one shift, ``2 max_i c_i`` (the norms
    ``c_i = beta |x_i|_A^2 / 2`` differ by at most 1: the sphere): no per-token
    factor, so the compiled kernel's normaliser is a plain sum. ``XV3`` is ``None``
    when the values are the tokens."""
    B, n, k = X3.shape
    L = np.zeros((B, 3, n))
    L[:, :k] = np.swapaxes(betas[:, None, None] * Y, 1, 2)
    R = np.zeros((B, 3, n))
    R[:, :k] = np.swapaxes(X3, 1, 2)
    if XV3 is None:  # the values are the tokens: one array, read once per tile
        kv, Z = k, R
    else:
        kv = XV3.shape[2]
        Z = np.zeros((B, 3, n))
        Z[:, :kv] = np.swapaxes(XV3, 1, 2)
    shift, work, k_threads = -2.0 * cmax[:, 0], _work(B, n, block), threads()
    with _LOCK:
        if k_threads == 1 or B * n * n < PARALLEL_ENTRIES:  # on this thread
            acc = impl.unit_tiles_serial(L, R, Z, shift, int(block), work)
        elif hasattr(impl, "unit_tiles_serial"):
            cuts = np.linspace(0, len(work), k_threads + 1).astype(int)
            runs = [work[a:b] for a, b in zip(cuts[:-1], cuts[1:])]
            pool = _pool(k_threads - 1)
            rest = [
                pool.submit(impl.unit_tiles_serial, L, R, Z, shift, int(block), w)
                for w in runs[1:]
            ]
            acc = impl.unit_tiles_serial(L, R, Z, shift, int(block), runs[0])
            for f in rest:
                acc += f.result()
        else:
            acc = impl.unit_tiles(L, R, Z, shift, int(block), work, k_threads)
    num = np.swapaxes(acc[:, :kv], 1, 2)
    if normalization == "sa":
        F = num / acc[:, 3][..., None]
    else:
        F = _usa(
            num, np.broadcast_to(2.0 * cmax - np.log(n), (B, n)), X.dtype, what, hint
        )
    return _shape_back(F, X)


def _up4(q: int) -> int:
    """``q`` rounded up to a multiple of 4 (the kernels take columns four at a time)."""
    return -(-q // 4) * 4


@functools.lru_cache(maxsize=16)
def _work(B: int, n: int, block: int) -> np.ndarray:
    """The tiles ``(b, I, J)``, ``I <= J``, of ``B`` members of ``n`` tokens (kept for
    the next call of the same size, a simulation's every step; read-only)."""
    nt = -(-n // block)
    rows, cols = np.triu_indices(nt)
    # the tiles on the diagonal cost about half the others (half their
    # exponentials): spread evenly among the others, so that the threads' equal
    # runs of the list cost the same
    diag = rows == cols
    key = np.where(diag, 0.0, np.cumsum(~diag) - 0.5)
    key[diag] = (np.arange(nt) + 0.5) * max(1, int(np.sum(~diag))) / nt
    order = np.argsort(key, kind="stable")
    rows, cols = rows[order], cols[order]
    b = np.repeat(np.arange(B), rows.size)
    work = np.stack([b, np.tile(rows, B), np.tile(cols, B)], axis=1).astype(np.int64)
    work.flags.writeable = False
    return work


def softmax_field(
    X: np.ndarray,
    beta: Any,
    A: np.ndarray | None = None,
    V: np.ndarray | None = None,
    *,
    normalization: str = "sa",
    kind: str = "softmax",
    mask: str | None = None,
    bias: Any = None,
    logits_fn: Any = None,
    symmetric: bool = False,
    block: int = 256,
    what: str = "the USA velocity",
    hint: str = "",
) -> Any:
    """:func:`attnlib._kernel.softmax_field`, compiled (``hint`` as in
    :func:`symmetric_field`); ``NotImplemented`` for what is
    not compiled (the sigmoid, ``logits_fn``, the numpy backend)."""
    if kind != "softmax" or logits_fn is not None or _small(X):
        return NotImplemented
    if mask not in (None, "causal"):
        return NotImplemented
    impl = _impl()
    if impl is None:
        return NotImplemented
    if symmetric and mask is None and bias is None and (A is None or np.ndim(A) == 2):
        XV = X if V is None else X @ np.swapaxes(V, -1, -2)
        F = symmetric_field(X, XV, beta, A, normalization, block, what=what, hint=hint)
        if F is not None:
            return F
    X3, betas = _members(X, beta)
    B, n, k = X3.shape
    XA = X3 if A is None else X3 @ np.asarray(A, dtype=np.float64)
    QA = np.zeros((B, n, _up4(k)))
    QA[..., :k] = betas[:, None, None] * XA
    XV = X3 if V is None else X3 @ np.swapaxes(np.asarray(V, dtype=np.float64), -1, -2)
    kv = XV.shape[2]
    VT = np.zeros((B, _up4(kv + 1), n))
    VT[:, :kv] = np.swapaxes(XV, 1, 2)
    VT[:, kv] = 1.0
    KT = np.zeros((B, _up4(k), n))
    KT[:, :k] = np.swapaxes(X3, 1, 2)
    p = VT.shape[1]
    causal = mask == "causal"
    none = np.empty((0, n))
    if bias is None or not callable(bias):
        scalar = 0.0 if bias is None else float(bias)
        with _LOCK:
            num, mx = impl.row_field(QA, KT, VT, 0, n, none, scalar, causal)
    else:
        num = np.empty((B, n, p))
        mx = np.empty((B, n))
        for s in range(0, n, block):
            rows = slice(s, min(n, s + block))
            Bm = np.asarray(bias(rows, n), dtype=np.float64)
            if Bm.ndim > 2:
                return NotImplemented
            # a writable copy: a read-only array is another type to numba (a second
            # compilation of the kernel)
            Bm = np.array(np.broadcast_to(Bm, (rows.stop - s, n)), order="C")
            with _LOCK:
                num[:, rows], mx[:, rows] = impl.row_field(
                    QA, KT, VT, s, rows.stop, Bm, 0.0, causal
                )
    if normalization == "sa":
        F = num[..., :kv] / num[..., kv : kv + 1]
    else:
        F = _usa(num[..., :kv], mx - np.log(n), X.dtype, what, hint)
    return _shape_back(F, X)
