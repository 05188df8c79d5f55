"""Golden outputs of the library's integrators, fields and solvers.

Each case below calls one public function of ``attnlib`` on small, seeded inputs and
returns its arrays. ``python tests/golden/make_golden.py`` evaluates every case and
saves the results to ``tests/golden/golden.npz`` (with the platform they were computed
on, :func:`signature`); ``tests/test_golden.py`` evaluates the cases again and compares.

A case is ``"exact"`` when the code under it computes the same floating-point
operations in the same order as the code that wrote the file: its arrays must then be
bit-for-bit equal on the platform recorded in the file. A case is ``"close"`` when
the order of operations changed (a fused step, a reassociated sum): its arrays must
agree to ``1e-13`` relative to the largest entry of each array.

Bit for bit needs the same run-time kernels, not only the same wheels: OpenBLAS
(``DYNAMIC_ARCH``) picks its kernels for the CPU it finds (or for
``OPENBLAS_CORETYPE``) and splits work over its threads, and numpy dispatches its
SIMD loops (``exp``, ``log``, sums) to the CPU's features (less those turned off by
``NPY_DISABLE_CPU_FEATURES``). :func:`signature` records all of these; where it
differs from the file's, every floating array is compared to ``PORTABLE`` relative
to its largest entry (``PORTABLE_FIELDS`` for a few ill-conditioned fields), which
the rounding of another dispatch stays far below and a change of ``1e-10`` in the
attention field exceeds (both are tested in ``tests/test_golden.py``).

Threshold outputs (a fraction of pairs closer than ``1 - delta``, a cluster count, a
histogram) jump by a whole quantum when rounding moves one pair across the
threshold: a hitting time one step earlier changes one entry of a phase diagram by
one pair. Those fields are listed per case with their quantum (``thresholds``) and
compared as counts: off the same platform, at most ``FLIPS`` entries of an array may
differ, each by at most one quantum; a standard error may differ only where its
probability does, by at most what one pair moves it.

The file is written from the code before the restructuring of the library (commit
43eda3b), never from the code under test: to add or change a case, run this script
with that commit's ``attnlib`` first on the path (``PYTHONPATH=<its checkout>``),
naming the case (``python tests/golden/make_golden.py CASE``: the other cases' arrays
are kept), and check that every other array is unchanged.
"""

from __future__ import annotations

import json
import platform
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "golden.npz"

# off the platform of the file: tolerance relative to the largest entry of an array
PORTABLE = 1e-12
# (case, field prefix) -> tolerance, for fields that amplify rounding: Sinkhorn on
# logits of size ~60 (each exponential carries ~60 ulp, and 30 sweeps add them up;
# 3.8e-13 measured under another OpenBLAS core)
PORTABLE_FIELDS = {("sinkhorn_runs", "scaled_"): 1e-11}
# off the platform of the file: entries of a threshold output that may differ
FLIPS = 2


@dataclass(frozen=True)
class Case:
    """A registered case: its function, mode, "close" fields and threshold fields."""

    fn: Callable[[], dict[str, np.ndarray]]
    mode: str
    close: tuple[str, ...]
    thresholds: dict[str, float]
    errors: dict[str, tuple[str, int]]


CASES: dict[str, Case] = {}


def case(
    mode: str = "exact",
    close: tuple[str, ...] = (),
    thresholds: dict[str, float] | None = None,
    errors: dict[str, tuple[str, int]] | None = None,
):
    """Register a case.

    ``close`` lists prefixes of fields compared as ``"close"``; ``thresholds`` maps
    the fields that are threshold outputs to their quantum (the jump of one pair,
    one cluster, one count); ``errors`` maps a standard error over samples to the
    threshold field it belongs to and the number of samples.
    """
    if mode not in ("exact", "close"):
        raise ValueError(mode)

    def register(fn):
        CASES[fn.__name__] = Case(
            fn, mode, close, dict(thresholds or {}), dict(errors or {})
        )
        return fn

    return register


def mode_of(name: str, key: str) -> str:
    """How the field ``key`` of case ``name`` is compared."""
    c = CASES[name]
    return "close" if any(key.startswith(p) for p in c.close) else c.mode


def portable_rtol(name: str, key: str) -> float:
    """The tolerance of ``key`` off the platform of the file."""
    for (c, prefix), rtol in PORTABLE_FIELDS.items():
        if c == name and key.startswith(prefix):
            return rtol
    return PORTABLE


def platform_info() -> dict[str, object]:
    """What decides the rounding of every array: the versions of the numerical
    stack, the BLAS build and the kernels chosen at run time.

    * each OpenBLAS loaded (numpy's, scipy's): version, the core whose kernels it
      runs and its number of threads (threadpoolctl);
    * numpy's SIMD dispatch: the CPU features it found and did not turn off;
    * the C library (``libm`` rounds the scalar functions).
    """
    import scipy
    import scipy.linalg  # noqa: F401  (loads scipy's OpenBLAS)
    from threadpoolctl import threadpool_info

    cfg = np.show_config(mode="dicts")
    blas = cfg.get("Build Dependencies", {}).get("blas", {})
    from numpy._core._multiarray_umath import __cpu_features__

    pools = sorted(
        (
            p.get("internal_api", ""),
            p.get("version") or "",
            p.get("architecture") or "",
            int(p.get("num_threads", 0)),
        )
        for p in threadpool_info()
        if p.get("user_api") == "blas"
    )
    return {
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "python": f"{sys.version_info.major}.{sys.version_info.minor}",
        "machine": platform.machine(),
        "libc": "-".join(platform.libc_ver()),
        "blas build": str(blas.get("openblas configuration", blas.get("name", ""))),
        "blas at run time": [list(p) for p in pools],
        "cpu features": sorted(k for k, on in __cpu_features__.items() if on),
    }


def signature() -> str:
    """:func:`platform_info` as one string (stored in the file)."""
    return json.dumps(platform_info(), sort_keys=True)


def _rng(seed):
    return np.random.default_rng(seed)


def _traj(tr) -> dict[str, np.ndarray]:
    out = {"times": tr.times, "final": tr.final, "n_steps": np.array(tr.n_steps)}
    if tr.states is not None:
        out["states"] = tr.states
    for k, v in tr.observables.items():
        out[f"obs_{k}"] = v
    return out


def _mats(seed, d, m=None):
    g = _rng(seed)
    m = d if m is None else m
    return (
        g.standard_normal((m, d)) / np.sqrt(d),
        g.standard_normal((m, d)) / np.sqrt(d),
        g.standard_normal((d, d)) / np.sqrt(d),
    )


# --------------------------------------------------------------------- simulate
@case()
def simulate_methods():
    from attnlib import Model, sample_sphere, simulate

    X0 = sample_sphere(12, 3, rng=1)
    out = {}
    for method in ("euler", "heun", "rk4"):
        tr = simulate(
            Model(beta=2.0), X0, times=np.linspace(0, 2, 5), dt=0.1, method=method
        )
        for k, v in _traj(tr).items():
            out[f"{method}_{k}"] = v
    return out


@case()
def simulate_usa_glpr():
    from attnlib import Model, sample_sphere, simulate

    X0 = sample_sphere(10, 4, rng=2)
    m = Model(beta=3.0, normalization="usa")
    out = _traj(simulate(m, X0, t_final=0.5, dt=0.1, step_rule="glpr"))
    out["dt"] = np.array(simulate(m, X0, t_final=0.5, dt=0.1, step_rule="glpr").dt)
    return out


# logits from A = Q^T K, (X A) X^T, instead of (X Q^T)(K X^T): rounding only
@case("close")
def simulate_qkv():
    from attnlib import Model, sample_sphere, simulate

    Q, K, V = _mats(3, 3)
    X0 = sample_sphere(9, 3, rng=3)
    out = {}
    for norm in ("sa", "usa"):
        beta = 1.5 if norm == "sa" else 0.5  # USA: |v| up to e^(beta |Q^T K|)
        m = Model(beta=beta, Q=Q, K=K, V=V, normalization=norm)
        tr = simulate(m, X0, times=[0.0, 0.5, 1.0], dt=0.05)
        for k, v in _traj(tr).items():
            out[f"{norm}_{k}"] = v
    return out


@case()
def simulate_psd_tiled():
    """Q^T K symmetric PSD and n > block: the symmetric tiled evaluation."""
    from attnlib import Model, sample_sphere, simulate

    g = _rng(4)
    R = g.standard_normal((3, 3))
    A = R @ R.T / 3
    Q = np.linalg.cholesky(A).T  # Q^T Q = A
    X0 = sample_sphere(150, 3, rng=4)
    out = {}
    for norm in ("sa", "usa"):
        for name, kw in (("psd", {"Q": Q, "K": Q}), ("identity", {})):
            m = Model(beta=2.0, normalization=norm, block=32, **kw)
            out[f"{norm}_{name}_velocity"] = m.velocity(X0)
            tr = simulate(m, X0, times=[0.0, 0.2], dt=0.05, method="heun")
            out[f"{norm}_{name}_final"] = tr.final
    return out


@case("close")  # A = Q^T K as in simulate_qkv
def simulate_multihead():
    from attnlib import Model, sample_sphere, simulate

    h1 = _mats(5, 3, m=2)
    h2 = _mats(6, 3)
    X0 = sample_sphere(8, 3, rng=5)
    m = Model(beta=1.2, heads=[h1, (h2[0], h2[1], None), (None, None, h1[2])])
    out = _traj(simulate(m, X0, times=[0.0, 0.3, 0.6], dt=0.05))
    out["attention"] = m.attention(X0)
    return out


@case(close=("sinkhorn_qk", "rd_softmax"))  # A = Q^T K as in simulate_qkv
def simulate_variants():
    from attnlib import Model, sample_sphere, simulate

    X0 = sample_sphere(10, 3, rng=6)
    Q, K, _ = _mats(7, 3)
    specs = {
        "l2": dict(kernel="l2", beta=1.5, Q=Q, K=K),
        "l2_usa": dict(kernel="l2", beta=1.5, normalization="usa"),
        "sigmoid_sa": dict(kernel="sigmoid", beta=2.0, bias=-1.0),
        "sigmoid_usa": dict(kernel="sigmoid", beta=2.0, bias=0.5, normalization="usa"),
        "sinkhorn": dict(kernel="sinkhorn", beta=2.0),
        "sinkhorn_qk": dict(kernel="sinkhorn", beta=1.0, Q=Q, K=K),
        "causal_sa": dict(mask="causal", beta=2.0),
        "causal_usa": dict(mask="causal", beta=2.0, normalization="usa"),
        "causal_sigmoid": dict(mask="causal", kernel="sigmoid", beta=1.0),
        "rd_softmax": dict(beta=0.7, geometry="euclidean", Q=Q, K=K),
        "rd_usa": dict(beta=0.7, geometry="euclidean", normalization="usa"),
    }
    out = {}
    for name, kw in specs.items():
        m = Model(**kw)
        out[f"{name}_velocity"] = m.velocity(X0)
        out[f"{name}_attention"] = m.attention(X0)
        tr = simulate(m, X0, times=[0.0, 0.25, 0.5], dt=0.05)
        out[f"{name}_states"] = tr.states
    return out


@case(close=("qkv",))  # A = Q^T K as in simulate_qkv
def simulate_ensemble_members():
    """simulate on (B, n, d) with one beta per member."""
    from attnlib import Model, sample_sphere, simulate

    X0 = sample_sphere(7, 3, rng=8, batch=3)
    beta = np.array([0.5, 2.0, 6.0])
    Q, K, V = _mats(9, 3)
    out = {}
    for name, kw in (("identity", {}), ("qkv", dict(Q=Q, K=K, V=V))):
        for norm in ("sa", "usa"):
            b = beta if norm == "sa" else beta / 4  # USA speeds grow like e^beta
            m = Model(beta=b, normalization=norm, **kw)
            tr = simulate(m, X0, times=[0.0, 0.5], dt=0.1)
            out[f"{name}_{norm}"] = tr.states
    return out


@case(close=("qk_usa",))  # A = Q^T K as in simulate_qkv
def velocity_large_beta():
    """Shifted exponents: USA at large beta, tiled and dense."""
    from attnlib import Model, sample_sphere

    X = sample_sphere(40, 3, rng=10)
    out = {}
    for beta in (50.0, 300.0):
        for norm in ("sa", "usa"):
            for block in (16, 256):
                m = Model(beta=beta, normalization=norm, block=block)
                out[f"b{beta:g}_{norm}_{block}"] = m.velocity(X)
    Q, K, _ = _mats(11, 3)
    out["qk_usa"] = Model(beta=40.0, Q=Q, K=K, normalization="usa").velocity(X)
    return out


# ------------------------------------------------------------ simulate_ensemble
# the fused identity step (scaled rows, one product for the row sums) replaces the
# plain Euler step: rounding only
def _pairs(n: int) -> int:
    return n * (n - 1) // 2


_ENSEMBLE_IDENTITY_RUNS = ("reduced_sa", "full_sa", "noreduce_sa", "usa", "reduced_usa")


# n = 8 tokens: a pair fraction moves by 1/28, a cluster count and a histogram bin by 1
@case(
    "close",
    thresholds={
        **{f"{r}_p": 1 / _pairs(8) for r in _ENSEMBLE_IDENTITY_RUNS},
        **{f"{r}_{o}": 1.0 for r in _ENSEMBLE_IDENTITY_RUNS for o in ("c", "h")},
        "single_p": 1 / _pairs(5),
    },
)
def ensemble_identity():
    from attnlib import sample_sphere
    from attnlib.clustering import (
        ClusterCount,
        Energy,
        InnerProductHistogram,
        PairFraction,
        simulate_ensemble,
    )

    obs = {
        "p": PairFraction(1e-2),
        "c": ClusterCount(1e-2),
        "e": Energy(),
        "le": Energy(log=True),
        "h": InnerProductHistogram(8),
    }
    beta = np.array([0.5, 1.0, 2.0, 4.0, 8.0, 1e-3])
    out = {}
    for name, d, norm, kw in (
        ("reduced_sa", 16, "sa", {}),
        ("full_sa", 3, "sa", dict(chunk=4)),
        ("noreduce_sa", 16, "sa", dict(reduce=False, chunk=2)),
        ("usa", 3, "usa", {}),
        ("reduced_usa", 12, "usa", {}),
    ):
        X0 = sample_sphere(8, d, rng=12, batch=6)
        b = np.minimum(beta, 2.0) if norm == "usa" else beta
        r = simulate_ensemble(
            X0,
            beta=b,
            times=[0.0, 0.5, 1.0, 3.0],
            dt=0.1,
            normalization=norm,
            observables=obs,
            **kw,
        )
        out[f"{name}_final"] = r.final
        out[f"{name}_steps"] = np.array(r.n_steps)
        for k, v in r.observables.items():
            out[f"{name}_{k}"] = v
    X0 = sample_sphere(5, 3, rng=13)
    r = simulate_ensemble(X0, beta=1.0, times=[0, 1, 2], observables={"p": obs["p"]})
    out["single_final"] = r.final
    out["single_p"] = r.observables["p"]
    return out


# the kernel's field: SA normalises the weights before the product, and the projection
# and retraction are those of the kernel: rounding only
@case(
    "close",
    thresholds={
        f"{norm}_{name}_p": 1 / _pairs(6)
        for norm in ("sa", "usa")
        for name in ("batched", "shared", "qk_only", "v_only")
    },
)
def ensemble_qkv():
    from attnlib import sample_sphere
    from attnlib.clustering import PairFraction, random_qkv, simulate_ensemble

    X0 = sample_sphere(6, 4, rng=14, batch=5)
    Q, K, V = random_qkv(4, kind="ginibre", value="random", rng=15, batch=5)
    out = {}
    for norm in ("sa", "usa"):
        for name, kw in (
            ("batched", dict(Q=Q, K=K, V=V)),
            ("shared", dict(Q=Q[0], K=K[0], V=V[0])),
            ("qk_only", dict(Q=Q, K=K)),
            ("v_only", dict(V=V[1])),
        ):
            # USA at half the betas: at beta = 3, 4 with random V a perturbation of
            # 1e-16 of X0 moves the final states by 1e-13 to 2e-11 (ill-conditioned)
            r = simulate_ensemble(
                X0,
                beta=np.array([0.5, 1.0, 2.0, 3.0, 4.0])
                * (1.0 if norm == "sa" else 0.5),
                times=[0.0, 1.0, 2.0],
                dt=0.1,
                normalization=norm,
                observables={"p": PairFraction(0.05)},
                chunk=3,
                **kw,
            )
            out[f"{norm}_{name}_final"] = r.final
            out[f"{norm}_{name}_p"] = r.observables["p"]
    return out


# ---------------------------------------------------------------- phase diagram
def _pd(pd):
    return {
        "probability": pd.probability,
        "stderr": pd.stderr,
        "times": pd.times,
        "system_steps": np.array(pd.system_steps),
    }


_PD_FAST_RUNS = {
    "sa_d8": dict(d=8, betas=[0.0, 1.0, 3.0, 6.0], samples=5, t_final=6.0),
    "sa_d2": dict(d=2, betas=[1.0, 4.0], samples=4, t_final=4.0, n=6),
    "usa_d3": dict(d=3, betas=[0.5, 2.0], samples=4, t_final=3.0, normalization="usa"),
    "sa_noretire": dict(d=5, betas=[2.0], samples=3, t_final=8.0, retire=False),
    "sa_grouped": dict(
        d=20,
        betas=[0.5, 1.5, 2.5, 3.5, 4.5],
        samples=3,
        t_final=8.0,
        n=8,
        betas_per_task=2,
    ),
    "f32": dict(d=8, betas=[1.0, 3.0], samples=4, t_final=8.0, dtype=np.float32),
}
_PD_REFERENCE_RUNS = {
    "sa_d8": dict(d=8, betas=[0.0, 1.0, 3.0, 6.0], samples=5, t_final=6.0),
    "usa_d3": dict(d=3, betas=[0.5, 2.0], samples=4, t_final=3.0, normalization="usa"),
    "qkv": dict(d=4, betas=[1.0, 2.0], samples=3, t_final=3.0, qkv="goe/plus"),
}


def _pd_thresholds(runs) -> dict[str, dict]:
    """The probability of a phase diagram moves by one pair of one sample:
    ``1 / (samples * n (n - 1) / 2)`` (``n = 32`` unless given)."""
    return dict(
        thresholds={
            f"{r}_probability": 1 / (kw["samples"] * _pairs(kw.get("n", 32)))
            for r, kw in runs.items()
        },
        errors={
            f"{r}_stderr": (f"{r}_probability", kw["samples"]) for r, kw in runs.items()
        },
    )


@case(**_pd_thresholds(_PD_FAST_RUNS))
def phase_diagram_fast():
    from attnlib.clustering import phase_diagram

    out = {}
    for name, kw in _PD_FAST_RUNS.items():
        for k, v in _pd(phase_diagram(progress=False, rng=3, **kw)).items():
            out[f"{name}_{k}"] = v
    return out


@case(**_pd_thresholds(_PD_REFERENCE_RUNS))
def phase_diagram_reference():
    from attnlib.clustering import phase_diagram

    out = {}
    for name, kw in _PD_REFERENCE_RUNS.items():
        pd = phase_diagram(progress=False, rng=3, method="reference", **kw)
        for k, v in _pd(pd).items():
            out[f"{name}_{k}"] = v
    return out


# ---------------------------------------------------------------------- energies
# the kernel's logits (X D) X^T and the order of scaling and projection: rounding
@case(close=("field", "gradient", "energy_D"))
def energies():
    from attnlib import (
        energy,
        energy_D,
        energy_D_field,
        energy_D_gradient,
        energy_gradient,
        log_energy,
        sample_sphere,
    )

    X = sample_sphere(9, 3, rng=16)
    Xb = sample_sphere(9, 3, rng=17, batch=3)
    g = _rng(18)
    R = g.standard_normal((3, 3))
    D = (R + R.T) / 2
    Db = np.stack([D, 2 * D, np.diag([1.0, -0.5, 0.3])])
    w = g.uniform(0.1, 1.0, 9)
    w /= w.sum()
    return {
        "energy": np.array(energy(X, beta=2.0)),
        "energy_b": energy(Xb, beta=np.array([0.5, 1.0, 2.0])),
        "log_energy": np.array(log_energy(X, beta=500.0)),
        "energy_gradient": energy_gradient(X, beta=2.0),
        "energy_gradient_b": energy_gradient(Xb, beta=np.array([0.5, 1.0, 2.0])),
        "energy_D": np.array(energy_D(X, D)),
        "energy_D_w": np.array(energy_D(X, D, weights=w)),
        "energy_D_log": np.array(energy_D(X, 800 * D, log=True)),
        "energy_D_b": energy_D(Xb, Db),
        "field": energy_D_field(X, D),
        "field_w": energy_D_field(X, D, weights=w),
        "field_b": energy_D_field(Xb, Db),
        "field_big": energy_D_field(X, 150 * D),
        "gradient": energy_D_gradient(X, D, weights=w),
        "gradient_b": energy_D_gradient(Xb, Db),
    }


@case("close")  # the kernel's logits (X D) X^T: rounding only
def energy_flows():
    from attnlib import sample_sphere
    from attnlib.extremisers import energy_flow

    out = {}
    X0 = sample_sphere(12, 2, rng=19)
    Xb = sample_sphere(10, 3, rng=20, batch=3)
    Db = np.stack([np.eye(3), np.diag([1.0, 0.5, -0.2]), 3.0 * np.eye(3)])
    runs = {
        "asc_w_stable": (X0, np.diag([1.0, 0.6]), dict(steps=60)),
        "desc_w_stable": (X0, np.diag([2.0, 0.6]), dict(direction="descent", steps=60)),
        "asc_sa_fixed": (
            X0,
            np.diag([3.0, 0.5]),
            dict(metric="sa", step_control="fixed", tau=0.2, steps=40),
        ),
        "asc_w_fixed_unprojected": (
            X0,
            np.diag([1.0, 1.4]),
            dict(step_control="fixed", projected=False, steps=40, record_every=7),
        ),
        "asc_w_backtrack": (X0, np.diag([2.0, 0.6]), dict(steps=40, tau=2.0, c=30.0)),
        "batch_desc": (Xb, Db, dict(direction="descent", steps=50, tau=0.5)),
        "batch_sa": (Xb, Db, dict(metric="sa", steps=30, tau=1.0, record_every=4)),
    }
    for name, (X, D, kw) in runs.items():
        r = energy_flow(X, D, **kw)
        out[f"{name}_final"] = r.final
        # .steps before the results shared the names .step_indices and .n_steps
        out[f"{name}_steps"] = r.info.get("step_indices")
        if out[f"{name}_steps"] is None:
            out[f"{name}_steps"] = r.steps
        out[f"{name}_energies"] = r.info["energies"]
        out[f"{name}_times"] = r.times
        out[f"{name}_tau"] = r.info["tau"]
        out[f"{name}_rejected"] = np.array(r.info["n_rejected"])
    return out


def _heavier_first(m: int) -> np.ndarray:
    w = np.ones(m)
    w[0] = 1.5
    return w / w.sum()


@case()
def mirror_descent():
    from attnlib.extremisers import density_mirror_descent

    out = {}
    for name, (D, kw) in {
        "desc": (np.eye(2), dict(m=32, steps=30)),
        # ascent from the uniform weights stays on a saddle (two antipodal atoms
        # with equal mass) that rounding alone breaks: 2e-2 apart under another
        # OpenBLAS core. A heavier first atom decides the climb.
        "asc": (
            np.diag([1.0, 0.4]),
            dict(m=24, steps=30, direction="ascent", w0=_heavier_first(24)),
        ),
    }.items():
        r = density_mirror_descent(D, **kw)
        out[f"{name}_weights"] = r.weights
        out[f"{name}_log_energies"] = r.log_energies
    return out


# ---------------------------------------------------------------------- Gaussian
def _gauss(tr):
    return {
        "times": tr.times,
        "means": tr.info["means"],
        "covariances": tr.info["covariances"],
        "blowup": np.array(tr.info["blowup"]),
        "blowup_time": np.array(tr.info["blowup_time"]),
        "t_stop": np.array(tr.info["t_stop"]),
        "final_mean": tr.info["final_mean"],
        "final_covariance": tr.info["final_covariance"],
        "n_steps": np.array(tr.n_steps),
    }


@case()
def gaussian_runs():
    from attnlib import Model
    from attnlib.gaussian import (
        gaussian_field,
        gaussian_rhs,
        integrate_gaussian,
        riccati_covariance,
    )

    Q = np.array([[1.0, 0.2], [0.0, 0.8]])
    K = np.array([[0.9, 0.0], [0.1, 1.1]])
    S0 = np.array([[1.0, 0.3], [0.3, 0.6]])
    a0 = np.array([0.2, -0.1])
    V = np.array([[0.5, 0.2], [-0.3, 0.8]])
    models = {
        "softmax": Model(beta=1 / np.sqrt(2), Q=Q, K=K, geometry="euclidean"),
        "softmax_v": Model(beta=0.5, Q=Q, K=K, V=V, geometry="euclidean"),
        "l2": Model(beta=0.8, Q=Q, K=K, kernel="l2", geometry="euclidean"),
        "sinkhorn": Model(beta=0.6, Q=Q, K=Q, kernel="sinkhorn", geometry="euclidean"),
        "heads": Model(beta=0.4, heads=[(Q, K, None), (K, Q, V)], geometry="euclidean"),
    }
    out = {}
    for name, m in models.items():
        tr = integrate_gaussian(m, a0, S0, times=np.linspace(0, 1.0, 6), dt=0.02)
        for k, v in _gauss(tr).items():
            out[f"{name}_{k}"] = v
        f = gaussian_field(m, a0, S0)
        out[f"{name}_M"], out[f"{name}_c"] = f.M, f.c
        out[f"{name}_dalpha"], out[f"{name}_dSigma"] = gaussian_rhs(m, a0, S0)
    out["riccati"] = riccati_covariance(models["softmax"], S0, [0.0, 0.2, 0.5])
    return out


# ------------------------------------------------------------------------ circle
@case()
def circle_runs():
    from attnlib.circle import (
        CircleModel,
        Kuramoto,
        angle_velocity,
        natural_frequencies,
        order_parameter,
        simulate_angles,
        torus_energy,
    )

    g = _rng(21)
    th = g.uniform(0, 2 * np.pi, 120)
    thb = g.uniform(0, 2 * np.pi, (2, 40))
    out = {}
    for norm in ("usa", "sa"):
        for method in ("fourier", "direct"):
            out[f"v_{norm}_{method}"] = angle_velocity(
                th, beta=4.0, normalization=norm, method=method
            )
        m = CircleModel(beta=4.0, normalization=norm, method="fourier")
        tr = simulate_angles(
            m,
            th,
            times=[0.0, 0.5, 1.0],
            dt=0.05,
            observables={"r": lambda t: order_parameter(t)[0]},
        )
        for k, v in _traj(tr).items():
            out[f"{norm}_{k}"] = v
    tr = simulate_angles(CircleModel(beta=2.0), thb, t_final=1.0, method="heun")
    out["batch_final"] = tr.final
    w = natural_frequencies(40, scale=0.5)
    tr = simulate_angles(
        Kuramoto(w, np.array([0.5, 2.0])), thb, times=[0.0, 2.0], method="euler"
    )
    out["kuramoto_final"] = tr.final
    out["torus_energy"] = np.array(torus_energy(th, beta=3.0))
    return out


@case()
def mean_field_runs():
    from attnlib.circle import mean_field

    out = {}
    for norm in ("usa", "sa"):
        sol = mean_field(
            lambda t: (1 + 0.05 * np.cos(3 * t) + 0.02 * np.sin(t)) / (2 * np.pi),
            beta=2.0,
            times=[0.0, 0.3, 1.0],
            normalization=norm,
            grid_size=64,
        )
        # .densities before the results shared the name .states
        out[f"{norm}_densities"] = getattr(sol, "states", None)
        if out[f"{norm}_densities"] is None:
            out[f"{norm}_densities"] = sol.densities
        out[f"{norm}_mass"] = sol.info["mass"]
        out[f"{norm}_resolution"] = sol.info["resolution"]
        out[f"{norm}_steps"] = np.array(sol.n_steps)
    return out


# ---------------------------------------------------------------------- Sinkhorn
@case()
def sinkhorn_runs():
    from attnlib import sinkhorn

    g = _rng(22)
    L = g.standard_normal((6, 6))
    Lb = 3.0 * g.standard_normal((2, 7, 7))
    out = {}
    for name, (logits, kw) in {
        "plain": (L, {}),
        "batch": (Lb, {}),
        "softmax": (L, dict(max_iter=1)),
        "init": (L, dict(init=g.standard_normal(6))),
        "scaled": (20.0 * L, dict(tol=1e-10)),
    }.items():
        r = sinkhorn(logits, **kw)
        out[f"{name}_matrix"] = r.matrix
        out[f"{name}_log_scaling"] = r.log_scaling
        out[f"{name}_n_iter"] = np.array(r.n_iter)
        out[f"{name}_converged"] = np.array(r.converged)
    return out


def compare(
    name: str,
    got: dict[str, np.ndarray],
    want: dict[str, np.ndarray],
    same_platform: bool,
) -> list[str]:
    """The differences between the arrays of case ``name`` and its golden arrays
    that the rules of this module do not allow (an empty list: they agree)."""
    c = CASES[name]
    if set(got) != set(want):
        return [f"{name}: fields differ: {sorted(set(got) ^ set(want))}"]
    bad = []
    for key, w in want.items():
        g = got[key]
        where = f"{name}/{key}"
        if g.shape != w.shape or g.dtype != w.dtype:
            bad.append(f"{where}: {g.dtype}{g.shape} != {w.dtype}{w.shape}")
            continue
        if key in c.thresholds and not same_platform:
            bad += _compare_counts(where, g, w, c.thresholds[key])
            continue
        if key in c.errors and not same_platform:
            prob, samples = c.errors[key]
            moved = got[prob] != want[prob]
            bad += _compare_errors(where, g, w, moved, c.thresholds[prob], samples)
            continue
        mode = mode_of(name, key)
        if w.dtype.kind not in "fc" or (mode == "exact" and same_platform):
            if not np.array_equal(g, w, equal_nan=w.dtype.kind in "fc"):
                n = int(np.sum(g != w))
                bad.append(f"{where}: {n} of {w.size} entries not bit for bit equal")
            continue
        rtol = 1e-13 if same_platform else portable_rtol(name, key)
        finite = np.isfinite(w)
        if not np.array_equal(finite, np.isfinite(g)) or not np.array_equal(
            g[~finite], w[~finite]
        ):
            bad.append(f"{where}: the non-finite entries differ")
            continue
        scale = float(np.max(np.abs(w[finite]), initial=0.0))
        err = float(np.max(np.abs(g[finite] - w[finite]), initial=0.0))
        if err > rtol * scale:
            bad.append(
                f"{where}: max |difference| {err:.3g} = {err / scale:.3g} of the "
                f"largest entry (allowed {rtol:g})"
            )
    return bad


def _compare_counts(where, g, w, quantum) -> list[str]:
    steps = np.abs(g.astype(float) - w.astype(float)) / quantum
    moved = steps > 1e-6  # the arrays are sums of quanta, up to rounding
    if np.any(steps > 1 + 1e-6) or int(np.sum(moved)) > FLIPS:
        return [
            f"{where}: {int(np.sum(moved))} entries differ, by up to "
            f"{float(steps.max()):.3g} quanta of {quantum:.4g} (allowed: {FLIPS} "
            "entries, one quantum each)"
        ]
    return []


def _compare_errors(where, g, w, moved, quantum, samples) -> list[str]:
    # one sample's fraction moves by samples * quantum; the standard error over
    # the samples (ddof 0 or 1) then moves by at most quantum * sqrt(S / (S - 1))
    bound = quantum * np.sqrt(samples / max(samples - 1, 1)) * (1 + 1e-6)
    diff = np.abs(g - w)
    off = (diff > 1e-12 * max(float(np.max(np.abs(w))), quantum)) & ~moved
    if np.any(off) or np.any(diff > bound):
        return [
            f"{where}: differs where its probability does not, or by more than one "
            f"pair ({float(diff.max()):.3g} > {bound:.3g})"
        ]
    return []


def compute(name: str) -> dict[str, np.ndarray]:
    fn = CASES[name].fn
    return {k: np.asarray(v) for k, v in fn().items()}


def main(names: list[str] | None = None) -> None:
    """Write the arrays of the cases ``names`` (default: every case) and this
    platform's signature; the arrays of every other case are kept as stored."""
    names = list(CASES) if not names else names
    unknown = sorted(set(names) - set(CASES))
    if unknown:
        raise SystemExit(f"no such case: {', '.join(unknown)}")
    arrays: dict[str, np.ndarray] = {}
    if GOLDEN.exists():
        with np.load(GOLDEN) as z:
            arrays = {k: z[k] for k in z.files if k.split("/")[0] not in names}
    arrays["__signature__"] = np.array(signature())
    for name in names:
        for k, v in compute(name).items():
            arrays[f"{name}/{k}"] = v
    np.savez_compressed(GOLDEN, **arrays)
    size = GOLDEN.stat().st_size
    print(f"wrote {GOLDEN} ({len(arrays) - 1} arrays, {size / 1024:.0f} KB)")


if __name__ == "__main__":
    main(sys.argv[1:])
