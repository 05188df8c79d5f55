"""The compiled attention field (attnlib._compiled) against the numpy tiles.

Every compiled backend installed here (numba, and JAX on the CPU so that the GPU
route keeps working) is compared with the numpy reference of attnlib._kernel on
random input: the symmetric tiles (SA and USA), the general field with Q, K, V, a
causal mask and a bias with -inf entries, multi-head models, ensembles with one
beta and one A per member; float64 to 1e-12 relative, float32 within the bound the
module states (the float64 field rounded to float32). Errors of bad input are the
same whatever the backend.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import numpy as np
import pytest

from attnlib import Model, sample_sphere
from attnlib import _compiled as C
from attnlib import _kernel as K
from attnlib.frontiers import CausalModel

BACKENDS = [
    pytest.param(
        name,
        marks=pytest.mark.skipif(
            importlib.util.find_spec(name) is None, reason=f"{name} is not installed"
        ),
    )
    for name in ("numba", "jax")
]


@pytest.fixture(autouse=True)
def _restore_backend(monkeypatch):
    # every size goes to the compiled kernels (small ones go to numpy by default)
    monkeypatch.setattr(C, "MIN_ENTRIES", 0)
    monkeypatch.setattr(C, "SHORT", 0)
    monkeypatch.setattr(C, "PARALLEL_ENTRIES", 0)  # two threads: the parallel kernels
    saved = dict(C._state)
    yield
    C._state.update(saved)


def on(backend, f, threads=None):
    """``f()`` with the given backend."""
    C.use(backend, threads=threads)
    return f()


def rel(a, b):
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


def tokens(n, d, seed, B=None):
    rng = np.random.default_rng(seed)
    shape = (n, d) if B is None else (B, n, d)
    X = rng.standard_normal(shape)
    return X / np.linalg.norm(X, axis=-1, keepdims=True)


def mats(d, seed):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((d, d)) / np.sqrt(d)
    return A, A @ A.T, rng.standard_normal((d, d)) / np.sqrt(d)


# sizes below, at and above a tile of 256, and not multiples of four
SIZES = [1, 7, 256, 517]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("normalization", ["sa", "usa"])
def test_symmetric_field_equals_the_numpy_tiles(backend, n, normalization):
    X = tokens(n, 5, n)
    _, S, V = mats(5, 1)
    XV = X @ V.T
    for A, beta in ((None, 3.0), (S, 1.5)):
        ref = on("numpy", lambda: K.symmetric_field(X, XV, beta, A, normalization))
        got = on(backend, lambda: K.symmetric_field(X, XV, beta, A, normalization))
        assert got.shape == ref.shape and got.dtype == ref.dtype
        assert rel(got, ref) < 1e-12


NUMBA = pytest.mark.skipif(
    importlib.util.find_spec("numba") is None, reason="numba is not installed"
)


@NUMBA
@pytest.mark.parametrize("normalization", ["sa", "usa"])
def test_tokens_of_one_norm_in_three_coordinates_take_the_unit_kernel(
    monkeypatch, normalization
):
    """The unit kernel (one shift, at most three coordinates) equals the numpy tiles,
    and runs exactly where it applies: tokens of one norm (up to 1 in beta |x|^2/2)
    and at most three coordinates; tokens of several norms and wider tokens take
    the general tiles."""
    from attnlib import _compiled_numba as CN

    calls = []
    for name in ("unit_tiles", "unit_tiles_serial"):  # two threads or one
        real = getattr(CN, name)
        monkeypatch.setattr(CN, name, lambda *a, real=real: calls.append(1) or real(*a))
    rng = np.random.default_rng(21)
    for d in (1, 2, 3, 4):
        S = tokens(517, d, d)
        V = rng.standard_normal((d, d))
        Q = np.linalg.qr(rng.standard_normal((d, d)))[0]  # |x|_A = |x|: one norm
        Y = S * rng.uniform(0.5, 2.0, (517, 1))
        for X, XV, A, beta, unit in (
            (S, S, None, 3.0, True),
            (S, S @ V.T, Q @ Q.T, 1.5, True),
            (S, S, np.diag(np.arange(1.0, d + 1)), 4.0, d == 1),
            (Y, Y, None, 4.0, False),
        ):
            calls.clear()
            ref = on("numpy", lambda: K.symmetric_field(X, XV, beta, A, normalization))
            got = on("numba", lambda: K.symmetric_field(X, XV, beta, A, normalization))
            assert rel(got, ref) < 1e-12, (d, unit)
            assert bool(calls) == (unit and d <= 3), (d, unit)


@NUMBA
def test_the_kernels_exponential_is_exact_to_four_tenths_of_an_ulp():
    """``_exp2`` against numpy's ``exp2`` in extended precision: relative error below
    4e-16 (two units in the last place would be 4.4e-16) above ``EXP2_MIN``, exactly
    0 below it and at -inf, 1 at 0."""
    from attnlib import _compiled_numba as CN

    y = np.concatenate([np.linspace(-1100.0, 0.0, 400_001), -np.logspace(-12, 1, 999)])
    s = np.append(y, -np.inf)
    CN.exp2_inplace(s, s.size)
    above = y > CN.EXP2_MIN
    ref = np.exp2(y[above].astype(np.longdouble))
    assert np.max(np.abs(s[:-1][above] / ref - 1)) < 4e-16
    assert np.all(s[:-1][~above] == 0.0) and s[-1] == 0.0
    one = np.zeros(1)
    CN.exp2_inplace(one, 1)
    assert one[0] == 1.0


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("normalization", ["sa", "usa"])
@pytest.mark.parametrize("mask", [None, "causal"])
def test_general_field_equals_the_numpy_tiles(backend, n, normalization, mask):
    X = tokens(n, 6, n + 1) * 1.3  # off the sphere too
    A, _, V = mats(6, 2)
    bias = np.random.default_rng(3).standard_normal((n, n))
    bias[np.triu_indices(n, 2)] = -np.inf  # a mask carried by the bias
    for kwargs in ({}, {"bias": 0.7}, {"bias": lambda rows, m: bias[rows]}):
        args = (X, 2.0, A, V)
        kw = dict(normalization=normalization, mask=mask, **kwargs)
        ref = on("numpy", lambda: K.softmax_field(*args, **kw))
        got = on(backend, lambda: K.softmax_field(*args, **kw))
        assert got.shape == ref.shape
        assert rel(got, ref) < 1e-12, kwargs


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n", [9, 300])
def test_ensembles_with_a_beta_and_matrices_per_member(backend, n):
    B = 4
    X = tokens(n, 3, 5, B=B)
    beta = np.array([0.0, 0.5, 4.0, 12.0])
    rng = np.random.default_rng(6)
    A = rng.standard_normal((B, 3, 3))
    V = rng.standard_normal((B, 3, 3))
    _, S, _ = mats(3, 7)
    cases = [
        dict(A=A, V=V),
        dict(A=S, V=None, symmetric=True),
        dict(A=None, V=None, symmetric=True, normalization="usa"),
        dict(A=A, V=None, mask="causal"),
    ]
    for kw in cases:
        ref = on("numpy", lambda: K.softmax_field(X, beta, **kw))
        got = on(backend, lambda: K.softmax_field(X, beta, **kw))
        assert rel(got, ref) < 1e-12, kw


@pytest.mark.parametrize("backend", BACKENDS)
def test_models_multihead_and_causal_velocity(backend):
    X = sample_sphere(300, 4, rng=8)
    rng = np.random.default_rng(9)
    heads = [tuple(rng.standard_normal((3, 4, 4)) / 2) for _ in range(3)]
    models = [
        Model(beta=2.0, heads=heads),
        Model(beta=2.0, heads=heads, mask="causal", normalization="usa"),
        Model(beta=np.array([1.0, 5.0])),
        CausalModel(beta=1.5, slope=0.3),
    ]
    for m in models:
        Y = np.stack([X, X[::-1]]) if np.ndim(m.beta) else X
        ref = on("numpy", lambda: m.velocity(Y))
        got = on(backend, lambda: m.velocity(Y))
        assert rel(got, ref) < 1e-12, m


@pytest.mark.parametrize("backend", BACKENDS)
def test_float32_is_the_float64_field_rounded(backend):
    """The stated bound: float32 tokens give the float64 field of the same tokens,
    rounded to float32 (half an ulp of each entry; 1e-13 of slack for the float64
    evaluations' own differences)."""
    X32 = tokens(700, 3, 10).astype(np.float32)
    A, S, V = (M.astype(np.float32) for M in mats(3, 11))
    for kw in (dict(A=S, symmetric=True), dict(A=A, V=V, mask="causal")):
        got = on(backend, lambda: K.softmax_field(X32, 4.0, **kw))
        kw64 = {
            k: v.astype(np.float64) if hasattr(v, "dtype") else v for k, v in kw.items()
        }
        X64 = X32.astype(np.float64)
        ref = on("numpy", lambda: K.softmax_field(X64, 4.0, **kw64))
        assert got.dtype == np.float32
        err = np.abs(got.astype(np.float64) - ref)
        assert np.all(err <= 2.0**-24 * np.abs(ref) + 1e-13 * np.max(np.abs(ref)))
        # and it is at least as accurate as the numpy float32 tiles
        np32 = on("numpy", lambda: K.softmax_field(X32, 4.0, **kw))
        assert np32.dtype == np.float32
        assert np.max(err) <= np.max(np.abs(np32.astype(np.float64) - ref))


@pytest.mark.parametrize("backend", BACKENDS)
def test_threads_change_nothing_but_the_order_of_sums(backend):
    X = tokens(1100, 3, 12)
    one = on(backend, lambda: K.softmax_field(X, 2.0, symmetric=True), threads=1)
    two = on(backend, lambda: K.softmax_field(X, 2.0, symmetric=True), threads=2)
    assert rel(two, one) < 1e-13


@pytest.mark.parametrize("backend", BACKENDS)
def test_bad_input_errors_are_unchanged(backend):
    def errors():
        out = []
        for f in (
            lambda: Model(beta=1.0).velocity(np.full((4, 3), np.nan)),
            lambda: Model(beta=-1.0),
            lambda: Model(beta=1.0).velocity(np.ones((4, 3, 2, 1))),
            # a USA field that does not fit float32
            lambda: Model(beta=200.0, normalization="usa").velocity(
                sample_sphere(300, 3, rng=0).astype(np.float32)
            ),
        ):
            with pytest.raises((ValueError, TypeError)) as e:
                f()
            out.append((e.type, str(e.value)))
        return out

    assert on(backend, errors) == on("numpy", errors)


def test_the_switch_rejects_what_it_does_not_know(monkeypatch):
    with pytest.raises(ValueError, match="backend must be one of"):
        C.use("cuda")
    with pytest.raises(ValueError, match="threads must be >= 1"):
        C.use(threads=0)
    with pytest.raises(TypeError, match="threads must be an int"):
        C.use(threads=1.5)
    C._state["backend"] = None
    monkeypatch.setenv("ATTNLIB_KERNEL", "fortran")
    with pytest.raises(ValueError, match="ATTNLIB_KERNEL must be one of"):
        C.backend()
    monkeypatch.setenv("ATTNLIB_KERNEL", "numpy")
    assert C.backend() == "numpy"


def test_threads_follow_the_blas_rule(monkeypatch):
    C._state["threads"] = None
    for var in ("ATTNLIB_THREADS", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")
    assert C.threads() == 1
    monkeypatch.setenv("ATTNLIB_THREADS", "3")
    assert C.threads() == 3
    C.use(threads=2)
    assert C.threads() == 2


def test_a_kernel_that_cannot_load_leaves_the_numpy_tiles(monkeypatch):
    real = C.importlib.import_module

    def failing(name, *args):
        if name == "attnlib._compiled_numba":
            raise RuntimeError("cannot cache function: no locator available")
        return real(name, *args)

    monkeypatch.setattr(C.importlib, "import_module", failing)
    C._state["backend"] = "numba"
    X = tokens(300, 3, 14)
    with pytest.warns(RuntimeWarning, match="no locator available"):
        F = K.softmax_field(X, 1.0, symmetric=True)
    assert C.backend() == "numpy"
    assert np.array_equal(F, K.softmax_field(X, 1.0, symmetric=True))


def test_short_wide_members_stay_on_the_numpy_tiles(monkeypatch):
    # 256 members of 32 tokens in 32 coordinates: the batched products are faster
    monkeypatch.setattr(C, "MIN_ENTRIES", 1 << 15)
    monkeypatch.setattr(C, "SHORT", 256)
    C.use("numba" if importlib.util.find_spec("numba") else "numpy")
    X = tokens(32, 32, 0, B=256)
    assert C.softmax_field(X, 1.0, symmetric=True) is NotImplemented
    assert C.symmetric_field(X, X, 1.0, None) is NotImplemented
    if C.backend() == "numba":  # narrow members and long ones are compiled
        assert C.softmax_field(tokens(32, 8, 0, B=256), 1.0) is not NotImplemented
        assert C.softmax_field(tokens(256, 32, 0), 1.0) is not NotImplemented


def test_small_systems_stay_on_the_numpy_tiles(monkeypatch):
    monkeypatch.setattr(C, "MIN_ENTRIES", 1 << 15)
    C.use("numba" if importlib.util.find_spec("numba") else "numpy")
    assert K.softmax_field(tokens(32, 3, 0), 1.0, symmetric=True) is not None
    assert C.softmax_field(tokens(32, 3, 0), 1.0) is NotImplemented
    assert C.symmetric_field(tokens(32, 3, 0), tokens(32, 3, 0), 1.0, None) is (
        NotImplemented
    )


FORK = """
import multiprocessing as mp, numpy as np
from concurrent.futures import ProcessPoolExecutor
from attnlib import _compiled as C, _kernel as K
C.use("numba", threads=2)
C.PARALLEL_ENTRIES = 0  # the parent's threads are started before the fork
X = np.random.default_rng(0).standard_normal((600, 3))
U = X / np.linalg.norm(X, axis=1, keepdims=True)  # the unit kernel's thread pool
u = K.softmax_field(U, 1.0, symmetric=True)
a = K.softmax_field(X, 1.0, symmetric=True)
def child(_):
    d = np.abs(K.softmax_field(U, 1.0, symmetric=True) - u)
    return max(float(np.max(d)), float(np.max(np.abs(
        K.softmax_field(X, 1.0, symmetric=True) - a))))
# a child that dies breaks the pool at once (multiprocessing.Pool would wait)
with ProcessPoolExecutor(2, mp_context=mp.get_context("fork")) as pool:
    print(max(pool.map(child, range(4))))
"""


@pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="no numba")
def test_forked_workers_use_the_kernel_after_the_parent_did():
    """A process pool forked after the parent ran the threaded kernel (the sweeps)
    must work: GNU OpenMP's threads would abort every child."""
    r = subprocess.run(
        [sys.executable, "-c", FORK], capture_output=True, text=True, timeout=600
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert float(r.stdout.strip()) == 0.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_python_threads_may_call_it_at_once(backend):
    from concurrent.futures import ThreadPoolExecutor

    X = tokens(600, 3, 13)
    C.use(backend, threads=2)
    ref = K.softmax_field(X, 1.0, symmetric=True)
    with ThreadPoolExecutor(4) as pool:
        out = list(
            pool.map(lambda _: K.softmax_field(X, 1.0, symmetric=True), range(8))
        )
    assert all(np.array_equal(o, ref) for o in out)


def test_import_attnlib_compiles_nothing():
    code = (
        "import sys, attnlib; "
        # a small system (what the assignments and most cells integrate) stays on
        # the numpy tiles without importing numba (a second of start-up)
        "attnlib.Model(beta=1.0).velocity(attnlib.sample_sphere(32, 3, rng=0)); "
        "print(sorted(m for m in ('numba', 'jax') if m in sys.modules))"
    )
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"
