"""Saving and loading trained networks: one portable ``.npz`` file, no pickle.

The file holds every parameter as ``param.<name>``, the
:class:`~attnlib.nets.config.NetConfig` as a JSON string (``config``) and a JSON
object of metadata (``meta``: seed, steps, losses, corpus hash, versions, ...). It
is read with ``allow_pickle=False``: loading a file runs no code.

:func:`save` and :func:`load` name the file the same way: ``path`` itself if it
ends with ``.npz``, else ``path`` with ``.npz`` appended (numpy's rule when it
writes). Saving to ``x`` and loading ``x`` (or ``x.npz``) give the same file.
"""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np

from attnlib.nets.config import NetConfig

__all__ = ["save", "load"]

_PREFIX = "param."
_SUFFIX = ".npz"


def _file(path: Any) -> str:
    """The file of ``path``: itself if it ends with ``.npz``, else ``path + ".npz"``."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
    name = os.fspath(path)
    if isinstance(name, bytes):
        raise TypeError("path must be a str or os.PathLike of str, got bytes")
    if not name:
        raise ValueError("path must not be empty")
    return name if name.endswith(_SUFFIX) else name + _SUFFIX


def save(path: Any, params: dict, config: NetConfig, meta: dict | None = None) -> None:
    """Write ``params``, ``config`` and ``meta`` to the ``.npz`` file ``path``.

    Parameters
    ----------
    path : str or os.PathLike
        Destination; ``.npz`` is appended if missing (as :func:`load` does).
    params : dict of str to array
    config : NetConfig
    meta : dict, optional
        JSON-serialisable metadata.
    """
    file = _file(path)
    if not isinstance(config, NetConfig):
        raise TypeError(f"config must be a NetConfig, got {type(config).__name__}")
    if not isinstance(params, dict) or not params:
        raise TypeError("params must be a non-empty dict of arrays")
    meta = {} if meta is None else meta
    if not isinstance(meta, dict):
        raise TypeError(f"meta must be a dict, got {type(meta).__name__}")
    try:
        meta_text = json.dumps(meta, sort_keys=True)
    except TypeError as exc:
        raise TypeError(f"meta must be JSON-serialisable: {exc}") from exc
    arrays = {}
    for name, value in params.items():
        if not isinstance(name, str) or not name:
            raise TypeError(f"parameter names must be non-empty str, got {name!r}")
        arr = np.asarray(value)
        if arr.dtype == object or not np.issubdtype(arr.dtype, np.number):
            raise TypeError(
                f"params[{name!r}] must be a numeric array, got {arr.dtype}"
            )
        if not np.all(np.isfinite(arr)):
            raise ValueError(
                f"params[{name!r}] must contain only finite values (found NaN or inf)"
            )
        arrays[_PREFIX + name] = arr
    arrays["config"] = np.array(config.to_json())
    arrays["meta"] = np.array(meta_text)
    np.savez_compressed(file, **arrays)


def load(path: Any) -> tuple[dict[str, np.ndarray], NetConfig, dict]:
    """Read a file written by :func:`save`.

    Parameters
    ----------
    path : str or os.PathLike
        The path given to :func:`save`: ``.npz`` is appended if missing.

    Returns
    -------
    params : dict of str to ndarray
    config : NetConfig
    meta : dict
    """
    file = _file(path)
    with np.load(file, allow_pickle=False) as data:
        keys = set(data.files)
        if not {"config", "meta"} <= keys:
            raise ValueError(f"path {file} is not a network file of attnlib.nets")
        config = NetConfig.from_json(str(data["config"]))
        meta = json.loads(str(data["meta"]))
        params = {
            k[len(_PREFIX) :]: data[k] for k in sorted(keys) if k.startswith(_PREFIX)
        }
    return params, config, meta
