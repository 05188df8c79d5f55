"""The library reproduces the golden outputs saved by ``tests/golden/make_golden.py``.

Every case of that script is evaluated again and compared with the saved arrays by
the script's rules (:func:`compare`): bit for bit for the ``"exact"`` cases where
the run-time kernels are those that wrote the file (:func:`signature`), to ``1e-13``
for the ``"close"`` cases, and elsewhere to ``PORTABLE`` with threshold outputs
compared as counts.

Two checks keep those rules honest:

* another dispatch, simulated in a child process (another OpenBLAS core through
  ``OPENBLAS_CORETYPE``, numpy's SIMD loops of a lower CPU level through
  ``NPY_DISABLE_CPU_FEATURES``; set for that child only), changes arrays in their
  last bits and moves a hitting time, and every case still passes;
* the attention field changed by ``1e-10`` relative fails the cases that evaluate it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from .golden import make_golden as mg
from .golden.make_golden import CASES, GOLDEN, compare, compute, signature

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def golden():
    with np.load(GOLDEN) as z:
        return {k: z[k] for k in z.files}


def _want(golden, name):
    return {
        k.split("/", 1)[1]: v for k, v in golden.items() if k.startswith(name + "/")
    }


def _platform_differences(stored: str) -> list[str]:
    try:
        old, new = json.loads(stored), json.loads(signature())
    except json.JSONDecodeError:
        return ["the file's signature is of an older format"]
    return [f"{k}: {old.get(k)} -> {new.get(k)}" for k in new if old.get(k) != new[k]]


def test_every_case_has_golden_arrays(golden):
    saved = {k.split("/")[0] for k in golden if k != "__signature__"}
    assert saved == set(CASES)


@pytest.mark.parametrize("name", list(CASES))
def test_golden(name, golden):
    stored = str(golden["__signature__"])
    same_platform = stored == signature()
    bad = compare(name, compute(name), _want(golden, name), same_platform)
    where = (
        "same run-time kernels as the file: exact cases bit for bit"
        if same_platform
        else "other run-time kernels ("
        + "; ".join(_platform_differences(stored))
        + "): portable tolerances"
    )
    assert not bad, where + "\n" + "\n".join(bad)


# ------------------------------------------------------- another dispatch, simulated
CHILD = """
import json, sys
import numpy as np
from tests.golden import make_golden as mg
arrays = {}
for name in mg.CASES:
    for k, v in mg.compute(name).items():
        arrays[f"{name}/{k}"] = v
np.savez(sys.argv[1], **arrays)
print(json.dumps(mg.platform_info()))
"""


def _other_dispatch() -> dict[str, str]:
    """Environment variables that make a child process run other kernels than this
    one: another OpenBLAS core this CPU can run, and numpy's SIMD loops without the
    highest dispatch targets found here."""
    info = mg.platform_info()
    features = set(info["cpu features"])
    cores = {core for _, _, core, _ in info["blas at run time"]}
    env = {}
    # the kernels of these cores need these features
    for core, needs in (
        ("Haswell", {"AVX2", "FMA3"}),
        ("Sandybridge", {"AVX"}),
        ("Nehalem", {"SSE42"}),
    ):
        if core not in cores and needs <= features:
            env["OPENBLAS_CORETYPE"] = core
            break
    simd = np.show_config(mode="dicts").get("SIMD Extensions", {}).get("found", [])
    if len(simd) > 1:
        env["NPY_DISABLE_CPU_FEATURES"] = ",".join(simd[1:])
    return env


@pytest.mark.parametrize("variable", ["OPENBLAS_CORETYPE", "NPY_DISABLE_CPU_FEATURES"])
def test_another_dispatch_passes_and_differs_in_the_last_bits(
    variable, golden, tmp_path
):
    changes = _other_dispatch()
    if variable not in changes:
        pytest.skip(f"this CPU offers no other choice through {variable}")
    env = {**os.environ, variable: changes[variable]}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    out = tmp_path / "arrays.npz"
    r = subprocess.run(
        [sys.executable, "-c", CHILD, str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    child = json.loads(r.stdout.strip().splitlines()[-1])
    here = mg.platform_info()
    assert child != here, f"{variable}={changes[variable]} changed no kernel choice"
    with np.load(out) as z:
        arrays = dict(z)
    assert json.dumps(child, sort_keys=True) != str(golden["__signature__"])
    moved = [k for k in arrays if not np.array_equal(arrays[k], golden[k])]
    assert moved, "the other kernels gave every array bit for bit"
    bad = []
    for name in CASES:
        got = {k.split("/", 1)[1]: v for k, v in arrays.items() if k.startswith(name)}
        bad += compare(name, got, _want(golden, name), same_platform=False)
    assert not bad, "\n".join(bad)


# ------------------------------------------------------ a regression the goldens see
# the cases whose arrays go through the kernel's attention field
FIELD_CASES = [
    "simulate_methods",
    "simulate_usa_glpr",
    "simulate_qkv",
    "simulate_psd_tiled",
    "simulate_multihead",
    "simulate_variants",
    "simulate_ensemble_members",
    "velocity_large_beta",
]


def _perturbed(fn, factor):
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs) * factor

    return wrapper


@pytest.mark.parametrize("name", FIELD_CASES)
def test_a_field_off_by_1e_10_fails_the_goldens(name, golden, monkeypatch):
    from attnlib import _kernel

    for fn in ("softmax_field", "measure_field"):
        monkeypatch.setattr(_kernel, fn, _perturbed(getattr(_kernel, fn), 1.0 + 1e-10))
    # even under the tolerances for other kernels
    bad = compare(name, compute(name), _want(golden, name), same_platform=False)
    assert bad, f"{name}: a field off by 1e-10 passed"
