import os

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
os.environ.setdefault("MPLBACKEND", "Agg")


@pytest.fixture
def rng():
    return np.random.default_rng(20261122)


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium per test module (the browser tests skip without it),
    started as the page check starts its own (``tools.browser_check.chromium``)."""
    from tools.browser_check import chromium, chromium_path

    if chromium_path() is None:
        pytest.skip("the Debian package chromium is not installed")
    with chromium() as b:
        yield b
