"""The memory budget of one call of :mod:`attnlib.nets` (numpy only).

A network's arrays grow with its size arguments (depth, batch, tokens, width,
vocabulary). Allocating more than the machine has does not raise in JAX: XLA aborts
the process. Every public function of the package that allocates in proportion to
its arguments therefore estimates the bytes first (with Python integers: no
overflow) and raises a :class:`ValueError` naming the argument when the estimate
exceeds :data:`MAX_BYTES`.
"""

from __future__ import annotations

__all__ = ["MAX_BYTES", "check_bytes"]

#: The most memory one call may plan to allocate: 1 GiB, a third of a small
#: machine's 3 GB, so that the copies a call makes around what it keeps still fit.
MAX_BYTES = 2**30


def _size(nbytes: int) -> str:
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20)):
        if nbytes >= scale:
            return f"{nbytes / scale:.3g} {unit}"
    return f"{nbytes} bytes"


def check_bytes(nbytes: int, what: str, hint: str) -> None:
    """Raise a ValueError if ``nbytes`` exceeds :data:`MAX_BYTES`.

    ``what`` names the call and the arguments that set the size (e.g.
    ``"forward with n_layers=10**9"``), ``hint`` what to lower.

    Examples
    --------
    >>> check_bytes(2**20, "x", "")
    >>> check_bytes(3 * 2**30, "forward with n_layers=10", "lower n_layers")
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: forward with n_layers=10 would need about 3 GiB, more than the 1 GiB ...
    """
    if nbytes > MAX_BYTES:
        raise ValueError(
            f"{what} would need about {_size(nbytes)}, more than the "
            f"{_size(MAX_BYTES)} one call of attnlib.nets may allocate; {hint}"
        )
