r"""Parameter sweeps, serially or on any :class:`concurrent.futures.Executor`.

:func:`sweep` maps a function over parameters with per-task seeds from
:class:`numpy.random.SeedSequence`, so that every executor (none, a process pool, a
Dask cluster's ``get_executor()``) gives the same arrays.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ._lazy import futures
from ._progress import progress_bar
from ._deprecation import moved_arguments
from ._validation import check_bool, spawn_seeds

if TYPE_CHECKING:
    from concurrent.futures import Executor

__all__ = ["sweep"]


@moved_arguments("fn params", renamed={"seed": "rng"})
def sweep(
    fn: Callable[[Any, np.random.SeedSequence], Any],
    params: Sequence[Any],
    *,
    rng: Any = 0,
    executor: Executor | None = None,
    progress: bool = True,
    desc: str = "sweep",
    seeds: Sequence[Any] | None = None,
) -> list[Any]:
    r"""Evaluate ``fn(p, seed_k)`` for every parameter ``p``, serially or in a pool.

    Task ``k`` receives the child seed ``SeedSequence(rng).spawn(len(params))[k]``
    (for an integer ``rng``), so the results depend only on ``rng`` and ``params``,
    never on the executor or on the order of completion: a serial run, a
    ``ProcessPoolExecutor`` and a Dask client's ``get_executor()`` give identical
    arrays. With an executor, ``fn`` and
    the parameters must be picklable (a module-level function).

    Parameters
    ----------
    fn : callable(param, SeedSequence) -> result
        Build the random generator with ``numpy.random.default_rng(seed_k)``.
    params : sequence
    rng : int, SeedSequence or Generator
        The root of the tasks' seeds; a Generator spawns them from its own seed
        sequence.
    executor : concurrent.futures.Executor, optional
        ``None`` runs serially in this process.
    progress : bool
        ``tqdm.auto`` progress bar over the tasks.
    desc : str
        Label of the progress bar.
    seeds : sequence, optional
        The seed of each task, handed to ``fn`` instead of the children of
        ``rng`` (e.g. a tuple of the children of a finer grid, when a task holds
        several of its points; :func:`attnlib.clustering.phase_diagram` does this).

    Returns
    -------
    list, in the order of ``params``

    Examples
    --------
    >>> import numpy as np
    >>> def draw(scale, s):
    ...     return scale * np.random.default_rng(s).random()
    >>> a = sweep(draw, [1.0, 2.0], rng=3, progress=False)
    >>> b = sweep(draw, [1.0, 2.0], rng=3, progress=False)
    >>> a == b
    True
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    if isinstance(params, (str, bytes)) or not hasattr(params, "__iter__"):
        raise TypeError(
            f"params must be a sequence of parameters, got {type(params).__name__}"
        )
    params = list(params)
    if executor is not None and not isinstance(executor, futures.Executor):
        raise TypeError(
            "executor must be a concurrent.futures.Executor, got "
            f"{type(executor).__name__}"
        )
    progress = check_bool(progress, "progress")
    if seeds is None:
        seeds = spawn_seeds(rng, len(params))
    elif len(seeds) != len(params):
        raise ValueError(
            f"seeds must have one entry per task ({len(params)}), got {len(seeds)}"
        )
    results: list[Any] = [None] * len(params)
    with progress_bar(progress, len(params), desc) as bar:
        if executor is None:
            for k, (p, s) in enumerate(zip(params, seeds)):
                results[k] = fn(p, s)
                bar.update(1)
        else:
            pending = {
                executor.submit(fn, p, s): k
                for k, (p, s) in enumerate(zip(params, seeds))
            }
            for fut in futures.as_completed(pending):
                results[pending[fut]] = fut.result()
                bar.update(1)
    return results
