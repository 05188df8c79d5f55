"""The numerical tests again, under the kernels of other CPUs.

Numpy and scipy round differently on different CPUs: OpenBLAS (``DYNAMIC_ARCH``) picks
its kernels for the CPU it finds, and numpy dispatches its SIMD loops (``exp``,
``log``, sums) to the CPU's features. A test that passes with one choice may fail with
another (a solver that starts or not on the last bit of a product); ``make test`` only
sees the machine's own choice. Both choices can be forced in a process:
``OPENBLAS_CORETYPE`` names the OpenBLAS core to use, and ``NPY_DISABLE_CPU_FEATURES``
turns off numpy's dispatch targets above its baseline.

``python -m tools.cpu_lanes [--out DIR] [PYTEST_ARGS...]`` runs the numerical lane (the
tests ``make test-fast`` runs, less those of the browser, the book's build and grading
tooling, :data:`NOT_NUMERICAL`) once under each of

* ``prescott``: OpenBLAS's oldest x86-64 kernels (``OPENBLAS_CORETYPE=Prescott``) and
  numpy's baseline SIMD only: the slowest and most different rounding;
* ``other``: the first of Haswell, Zen and SkylakeX that this CPU can run and whose
  kernels differ from the ones OpenBLAS picks here by itself (Zen runs Haswell's
  kernels; SkylakeX needs AVX-512), with numpy's own dispatch;

prints, for each lane, the kernels that its processes actually ran (threadpoolctl and
numpy's dispatch, read in a child with the lane's environment), and fails when a test
fails or errors in any lane, or when a lane did not change the kernels (the check
would then compare nothing). Each lane writes a JUnit file to ``DIR`` (default
``_build/cpu-lanes``); the outcome of every test in every lane is compared, and a test
that passes in one lane and is skipped in another is listed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Test files outside the numerical lane: the browser, the book's build, its HTML,
#: notebooks and release tooling, and grading (none of them computes with numpy
#: beyond what the numerical files already cover; their slow tests are left out by
#: the marker anyway).
NOT_NUMERICAL = (
    "test_accessibility_browser.py",
    "test_book_build.py",
    "test_bookext.py",
    "test_check_html.py",
    "test_check_mutations.py",
    "test_coursework.py",
    "test_grading.py",
    "test_lab_browser.py",
    "test_lab_view.py",
    "test_launch_buttons.py",
    "test_makefile.py",
    "test_notebook_install.py",
    "test_page_toc_browser.py",
    "test_raw_tex_browser.py",
    "test_release.py",
    "test_requirements.py",
    "test_search.py",
    "test_vendor_assets.py",
    "test_widgets_static_browser.py",
)

#: OpenBLAS cores that may differ from the machine's own, and the CPU features
#: (numpy's names) their kernels need, in the order they are tried.
OTHER_CORES = (
    ("Haswell", {"AVX2", "FMA3"}),
    ("Zen", {"AVX2", "FMA3"}),
    ("SkylakeX", {"AVX512F", "AVX512CD", "AVX512BW", "AVX512DQ", "AVX512VL"}),
    ("Sandybridge", {"AVX"}),
)

ONE_BLAS_THREAD = {
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}

PROBE = """
import json
import numpy as np
import scipy.linalg  # loads scipy's OpenBLAS too
from numpy._core._multiarray_umath import __cpu_features__
from threadpoolctl import threadpool_info
simd = np.show_config(mode="dicts").get("SIMD Extensions", {})
print(json.dumps({
    "blas": sorted({p.get("architecture") or "?" for p in threadpool_info()
                    if p.get("user_api") == "blas"}),
    "simd": simd.get("found", []),
    "features": sorted(k for k, on in __cpu_features__.items() if on),
}))
"""


def probe(env: dict[str, str]) -> dict:
    """The kernels a process started with ``env`` runs: the OpenBLAS cores of numpy
    and scipy, numpy's SIMD dispatch targets, and the CPU features it uses."""
    r = subprocess.run(
        [sys.executable, "-c", PROBE],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if r.returncode != 0:
        raise SystemExit(f"could not start Python with {lane_vars(env)}:\n{r.stderr}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def lane_vars(env: dict[str, str]) -> dict[str, str]:
    keys = ("OPENBLAS_CORETYPE", "NPY_DISABLE_CPU_FEATURES")
    return {k: env[k] for k in keys if k in env}


def lanes(base: dict[str, str], here: dict) -> dict[str, dict[str, str]]:
    """The environments of the two lanes, chosen for this CPU, whose own kernels
    (:func:`probe` of ``base``) are ``here``."""
    found = here["simd"]
    prescott = {**base, "OPENBLAS_CORETYPE": "Prescott"}
    if found:
        prescott["NPY_DISABLE_CPU_FEATURES"] = ",".join(found)
    chosen = {"prescott": prescott}
    features = set(here["features"])
    for core, needs in OTHER_CORES:
        if not needs <= features:
            continue
        env = {**base, "OPENBLAS_CORETYPE": core}
        env.pop("NPY_DISABLE_CPU_FEATURES", None)
        if probe(env)["blas"] != here["blas"]:
            chosen["other"] = env
            break
    return chosen


def outcomes(junit: Path) -> dict[str, str]:
    """test id -> passed, failed, error or skipped, from a JUnit file."""
    out = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        kinds = {child.tag for child in case}
        out[name] = next(
            (k for k in ("failure", "error", "skipped") if k in kinds), "passed"
        ).replace("failure", "failed")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "cpu-lanes")
    args, pytest_args = parser.parse_known_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    base = {**os.environ, **ONE_BLAS_THREAD, "MPLBACKEND": "Agg"}
    base.pop("NPY_DISABLE_CPU_FEATURES", None)
    here = probe(base)
    print(
        f"[cpu-lanes] this machine: OpenBLAS {', '.join(here['blas'])}; numpy SIMD "
        f"{', '.join(here['simd']) or 'baseline only'}",
        flush=True,
    )
    ignore = [f"--ignore=tests/{name}" for name in NOT_NUMERICAL]
    # the grader's own tests (gradebox/tests, in make test's paths) are tooling too
    ignore.append("--ignore=gradebox/tests")
    results: dict[str, dict[str, str]] = {}
    status = 0
    for name, env in lanes(base, here).items():
        ran = probe(env)
        print(
            f"[cpu-lanes] lane {name}: {lane_vars(env)} -> OpenBLAS "
            f"{', '.join(ran['blas'])}; numpy SIMD "
            f"{', '.join(ran['simd']) or 'baseline only'}",
            flush=True,
        )
        if ran["blas"] == here["blas"] and ran["simd"] == here["simd"]:
            print(
                f"[cpu-lanes] lane {name} runs this machine's own kernels: it "
                "would check nothing",
                flush=True,
            )
            status = 1
            continue
        junit = args.out / f"{name}.xml"
        cmd = [
            sys.executable,
            "-m",
            "pytest",
            "-m",
            "not slow",
            "-p",
            "no:cacheprovider",
            "-q",
            f"--junitxml={junit}",
            *ignore,
            *pytest_args,
        ]
        r = subprocess.run(cmd, cwd=ROOT, env=env, check=False)
        if r.returncode not in (0, 1) or not junit.exists():
            print(f"[cpu-lanes] lane {name}: pytest exited {r.returncode}", flush=True)
            status = 1
            continue
        results[name] = outcomes(junit)
    for name, res in results.items():
        bad = sorted(t for t, o in res.items() if o in ("failed", "error"))
        for t in bad:
            print(f"[cpu-lanes] {name}: {res[t]}: {t}")
        status |= bool(bad)
    ids = sorted(set().union(*results.values())) if results else []
    for t in ids:
        seen = {name: res.get(t, "absent") for name, res in results.items()}
        if len(set(seen.values())) > 1:
            print(f"[cpu-lanes] outcomes differ: {t}: {seen}")
    counts = {n: sum(o == "passed" for o in r.values()) for n, r in results.items()}
    print(
        f"[cpu-lanes] passed per lane: {counts}; "
        + ("every test passed in every lane" if status == 0 else "FAILED")
    )
    return status


if __name__ == "__main__":
    sys.exit(main())
