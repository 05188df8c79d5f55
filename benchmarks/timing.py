"""Timing helpers shared by the benchmark scripts (python benchmarks/<name>.py)."""

from __future__ import annotations

import importlib.util
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

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


def load_checkout(path: str, name: str = "attnlib_before") -> ModuleType:
    """The ``attnlib`` of another checkout, imported in this process as ``name``.

    For comparisons measured in one run: both libraries are timed alternately in
    the same process, so that they see the same machine (a shared machine's load
    changes from minute to minute).
    """
    root = Path(path).resolve() / "attnlib"
    spec = importlib.util.spec_from_file_location(
        name, root / "__init__.py", submodule_search_locations=[str(root)]
    )
    if spec is None or spec.loader is None:
        raise ImportError(f"no attnlib package under {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
