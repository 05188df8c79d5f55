"""Timing helpers shared by the benchmark scripts (python benchmarks/<name>.py)."""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable

import numpy as np


def best_time(fn: Callable[[], object], repeat: int) -> float:
    """Best wall time of ``repeat`` calls, in seconds."""
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def peak_bytes(fn: Callable[[], object]) -> int:
    """Peak memory allocated through Python and numpy during one call, in bytes."""
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak
