"""The fast phase-diagram method: same answers as the reference, retirement exact.

``phase_diagram(method="fast")`` integrates several values of beta in one ensemble
with a kernel arranged for speed and retires the systems whose pairs are all within
delta. These tests check that none of that changes the result: the fast method
against the reference (one ``simulate_ensemble`` per beta, the same initial tokens),
retirement and grouping against the plain run (identical arrays), float32 against
float64 (within the Monte Carlo error), and a Dask cluster against a serial run.
"""

import numpy as np
import pytest

from attnlib import TooManyStepsError
from attnlib.clustering import phase_diagram, simulate_ensemble

TIMES = np.linspace(0.0, 30.0, 31)


def _pd(d, **kw):
    base = dict(samples=24, times=TIMES, dt=0.1, rng=4, progress=False)
    return phase_diagram(d, **{**base, **kw})


CASES = [
    (128, "sa", [0.0, 1.0, 4.0, 6.5, 9.0]),
    (32, "sa", [0.0, 2.0, 8.0]),  # d = n: no span reduction
    (8, "sa", [0.5, 3.0, 9.0]),
    (2, "sa", [1.0, 4.0, 9.0]),  # the circle: metastable, few retire
    (128, "usa", [0.0, 1.0, 2.0, 4.0]),  # retirement only where dt e^beta <= 1
    (16, "usa", [0.5, 3.0]),
]


@pytest.mark.parametrize(("d", "normalization", "betas"), CASES)
def test_fast_method_matches_reference(d, normalization, betas):
    kw = dict(betas=betas, normalization=normalization)
    ref = _pd(d, method="reference", **kw)
    fast = _pd(d, **kw)
    # same tokens, same steps: only rounding differs, and a pair would have to sit
    # within ~1e-13 of 1 - delta at an output time for a fraction to change
    n_pairs = 32 * 31 / 2
    assert np.abs(fast.probability - ref.probability).max() <= 1 / (24 * n_pairs)
    assert np.abs(fast.stderr - ref.stderr).max() <= 1e-3
    assert fast.method == "fast" and ref.method == "reference"


@pytest.mark.parametrize(("d", "normalization", "betas"), CASES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_retirement_gives_identical_arrays(d, normalization, betas, dtype):
    kw = dict(betas=betas, normalization=normalization, dtype=dtype)
    plain = _pd(d, retire=False, **kw)
    retired = _pd(d, **kw)
    np.testing.assert_array_equal(retired.probability, plain.probability)
    np.testing.assert_array_equal(retired.stderr, plain.stderr)
    full = 300 * 24 * len(betas)
    assert plain.system_steps == full
    if d >= 8 and min(betas) <= 1.0:
        # small beta clusters within a few time units: most steps are saved
        assert retired.system_steps < 0.9 * full


def test_grouping_of_betas_gives_identical_arrays():
    betas = np.linspace(0.0, 9.0, 7)
    runs = [_pd(64, betas=betas, betas_per_task=k) for k in (1, 3, 7)]
    for other in runs[1:]:
        np.testing.assert_array_equal(other.probability, runs[0].probability)
        np.testing.assert_array_equal(other.stderr, runs[0].stderr)
    # the grouping changes the tasks, never the draws: another seed does differ
    assert not np.array_equal(
        _pd(64, betas=betas, rng=5).probability, runs[0].probability
    )


def test_float32_agrees_with_float64_within_the_monte_carlo_error():
    betas = np.linspace(0.1, 9.0, 12)
    kw = dict(betas=betas, samples=64)
    p64 = _pd(128, **kw)
    p32 = _pd(128, dtype=np.float32, **kw)
    # Tolerance: three standard errors of the float64 estimate, plus one pair of one
    # system (where the standard error is 0, e.g. all systems clustered).
    tol = 3 * p64.stderr + 1 / (64 * 32 * 31 / 2)
    assert np.all(np.abs(p32.probability - p64.probability) <= tol)
    assert abs(p32.level_beta(30.0) - p64.level_beta(30.0)) < 0.05


def test_invariance_lemma_along_euler_steps():
    """The lemma behind retirement: once every pair has <x_i, x_j> >= m >= 0, the
    Euler step with retraction never lowers the smallest inner product."""
    rng = np.random.default_rng(0)
    # tokens in a cap around e_1; keep the systems whose pairs all have
    # <x_i, x_j> >= 0 (the smallest ones come close to 0)
    X = rng.standard_normal((200, 12, 16)) * 0.25
    X[..., 0] = 1.0
    X /= np.linalg.norm(X, axis=-1, keepdims=True)
    m0 = np.einsum("bid,bjd->bij", X, X).min(axis=(-1, -2))
    X = X[m0 >= 0][:40]
    assert len(X) == 40 and m0[m0 >= 0].min() < 0.1
    beta = rng.uniform(0.0, 12.0, 40)
    mins = simulate_ensemble(
        X,
        beta=beta,
        times=np.arange(0, 61) * 0.1,
        dt=0.1,
        observables={"m": lambda G, b: G.min(axis=(-1, -2))},
    ).observables["m"]
    assert np.all(np.diff(mins, axis=0) >= -1e-14)
    assert np.all(mins[-1] > mins[0])


def test_retirement_needs_the_lemma_conditions():
    # USA at beta = 4 with dt = 0.1: dt e^beta > 1, the lemma does not apply and no
    # system retires (every step is integrated)
    pd = _pd(128, betas=[4.0], normalization="usa")
    assert pd.system_steps == 300 * 24
    # delta > 1: the threshold 1 - delta is negative, the lemma does not apply
    pd = _pd(8, betas=[0.5], delta=1.5)
    assert pd.system_steps == 300 * 24 and np.all(pd.probability[1:] == 1.0)


def test_dask_local_cluster_gives_the_serial_arrays():
    distributed = pytest.importorskip("distributed")
    kw = dict(betas=[0.5, 3.0, 6.0, 8.5], samples=8, rng=3, betas_per_task=1)
    serial = _pd(16, **kw)
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        assert len(client.nthreads()) == 2
        on_dask = _pd(16, executor=client.get_executor(), **kw)
        ref_on_dask = _pd(16, executor=client.get_executor(), method="reference", **kw)
    np.testing.assert_array_equal(on_dask.probability, serial.probability)
    np.testing.assert_array_equal(on_dask.stderr, serial.stderr)
    assert on_dask.system_steps == serial.system_steps
    assert np.abs(ref_on_dask.probability - serial.probability).max() <= 1 / (8 * 120)


def test_bad_arguments():
    kw = dict(betas=[1.0], samples=2, t_final=1.0, progress=False)
    with pytest.raises(ValueError, match="method"):
        phase_diagram(4, method="gpu", **kw)
    with pytest.raises(ValueError, match="dtype"):
        phase_diagram(4, dtype=np.int64, **kw)
    with pytest.raises(TypeError, match="dtype"):
        phase_diagram(4, dtype="no such type", **kw)
    with pytest.raises(ValueError, match="dtype=float32 needs"):
        phase_diagram(4, dtype=np.float32, method="reference", **kw)
    with pytest.raises(ValueError, match="beta must be <= "):
        phase_diagram(4, **{**kw, "betas": [100.0]}, dtype=np.float32)
    with pytest.raises(ValueError, match="betas_per_task"):
        phase_diagram(4, betas_per_task=0, **kw)
    with pytest.raises(TooManyStepsError, match="max_steps"):
        phase_diagram(4, dt=1e-9, **kw)
    with pytest.raises(ValueError, match="betas"):
        phase_diagram(4, **{**kw, "betas": []})
    # float32 reaches beta = 80 without overflow
    pd = phase_diagram(4, **{**kw, "betas": [80.0]}, dtype=np.float32)
    assert np.all(np.isfinite(pd.probability))
