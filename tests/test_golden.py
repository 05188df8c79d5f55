"""The library reproduces the golden outputs saved by ``tests/golden/make_golden.py``.

Every case of that script is evaluated again and compared with the saved arrays:
bit-for-bit for the ``"exact"`` cases on the platform that wrote the file (elsewhere
to ``rtol=1e-13``), and to ``1e-13`` relative to the largest entry of each array for
the ``"close"`` cases (see the script's docstring).
"""

from __future__ import annotations

import numpy as np
import pytest

from .golden.make_golden import CASES, GOLDEN, compute, mode_of, signature

RTOL = 1e-13


@pytest.fixture(scope="module")
def golden():
    with np.load(GOLDEN) as z:
        return {k: z[k] for k in z.files}


def test_every_case_has_golden_arrays(golden):
    saved = {k.split("/")[0] for k in golden if k != "__signature__"}
    assert saved == set(CASES)


@pytest.mark.parametrize("name", list(CASES))
def test_golden(name, golden):
    same_platform = str(golden["__signature__"]) == signature()
    got = compute(name)
    want = {
        k.split("/", 1)[1]: v for k, v in golden.items() if k.startswith(name + "/")
    }
    assert set(got) == set(want), f"{name}: fields differ"
    for key, w in want.items():
        g = got[key]
        mode = mode_of(name, key)
        assert g.shape == w.shape and g.dtype == w.dtype, (key, g.shape, w.shape)
        if w.dtype.kind not in "fc":
            np.testing.assert_array_equal(g, w, err_msg=f"{name}/{key}")
        elif mode == "exact" and same_platform:
            np.testing.assert_array_equal(g, w, err_msg=f"{name}/{key}")
        else:
            finite = np.isfinite(w)
            np.testing.assert_array_equal(finite, np.isfinite(g), err_msg=key)
            scale = float(np.max(np.abs(w[finite]), initial=0.0))
            np.testing.assert_allclose(
                g[finite],
                w[finite],
                rtol=RTOL,
                atol=RTOL * scale if mode == "close" else 0.0,
                err_msg=f"{name}/{key}",
            )
            np.testing.assert_array_equal(g[~finite], w[~finite], err_msg=key)
