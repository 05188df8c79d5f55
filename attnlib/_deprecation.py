"""Old spellings of the public API, kept working for one minor release with a warning.

Every warning of the library about an old spelling is a :class:`DeprecationWarning`
whose message reads ``"<old> is deprecated in attnlib ...: use <new>"`` (the test
suite turns exactly these into errors), raised at the
caller's line (so that a notebook shows it under the cell that used the old form, and
the book's build, which treats a cell's warning as an error, fails on it).

Two kinds of moves are handled here:

* :func:`moved_arguments` -- a function whose arguments became keyword-only (the
  inverse temperature ``beta`` is passed by name everywhere except to the model
  constructors) or were renamed (``seed`` is now ``rng``). A call in the old form is
  translated to the new one, with a warning that shows the new call.
* :func:`warn_moved` -- any other old name (a module attribute, a result attribute),
  from the ``__getattr__`` that still serves it.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

__all__ = ["MARK", "geometry_of_flag", "moved_arguments", "warn_moved"]

#: What the message of every deprecation warning of the library says.
MARK = "is deprecated in attnlib"

F = TypeVar("F", bound=Callable[..., Any])


def warn_moved(old: str, new: str, *, stacklevel: int = 3) -> None:
    """Warn that ``old`` is deprecated in favour of ``new`` (a DeprecationWarning)."""
    warnings.warn(
        f"{old} {MARK} and will be removed in its next minor release: use {new}",
        DeprecationWarning,
        stacklevel=stacklevel,
    )


def moved_arguments(
    old_positional: str | Sequence[str],
    *,
    renamed: dict[str, str | tuple[str, Callable[[Any], Any]]] | None = None,
) -> Callable[[F], F]:
    """Accept the earlier calling convention of the decorated function, with a warning.

    Parameters
    ----------
    old_positional : str or sequence of str
        The names of the parameters that could be passed by position before the move,
        in their order then (a string is split on whitespace). Passing more
        positional arguments than the new signature takes binds them by this order.
    renamed : dict, optional
        Old keyword name -> new keyword name (e.g. ``{"seed": "rng"}``), or -> (new
        name, function of the old value giving the new one).

    Examples
    --------
    >>> import warnings
    >>> @moved_arguments("X beta")
    ... def energy(X, *, beta):
    ...     return X * beta
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     energy(2.0, 3.0)
    6.0
    >>> print(w[0].message)  # doctest: +NORMALIZE_WHITESPACE
    energy(X, beta) with beta by position is deprecated in attnlib and will be removed
    in its next minor release: use energy(X, beta=...)
    """
    if isinstance(old_positional, str):
        old_positional = old_positional.split()
    old = tuple(old_positional)
    renamed = {
        o: (n, None) if isinstance(n, str) else (n[0], n[1])
        for o, n in (renamed or {}).items()
    }

    def decorate(func: F) -> F:
        sig = inspect.signature(func)
        params = sig.parameters
        n_new = sum(
            p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
            for p in params.values()
        )
        if any(p.kind is p.VAR_POSITIONAL for p in params.values()):
            raise TypeError(f"{func.__qualname__}: *args cannot be translated")
        unknown = [
            n for n in (*old, *(n for n, _ in renamed.values())) if n not in params
        ]
        if unknown:
            raise TypeError(f"{func.__qualname__}: no parameters {unknown}")
        # a class's __init__ is called by the class's name
        name = (
            func.__qualname__.split(".")[0]
            if func.__name__ == "__init__"
            else func.__name__
        )

        def translate(args: tuple, kwargs: dict) -> tuple[tuple, dict]:
            """The call in the current form, warning for each old spelling in it."""
            kwargs = dict(kwargs)
            if len(args) > n_new:
                if len(args) > len(old):
                    raise TypeError(
                        f"{name}() takes at most {len(old)} positional arguments "
                        f"({len(args)} given)"
                    )
                moved = old[n_new : len(args)]
                twice = [k for k in moved if k in kwargs]
                if twice:
                    raise TypeError(f"{name}() got multiple values for {twice}")
                kwargs.update(zip(moved, args[n_new:]))
                args = args[:n_new]
                new_call = ", ".join([*old[:n_new], *(f"{k}=..." for k in moved)])
                warn_moved(
                    f"{name}({', '.join(old[: n_new + len(moved)])}) with "
                    f"{', '.join(moved)} by position",
                    f"{name}({new_call})",
                    stacklevel=4,
                )
            for o, (n, convert) in renamed.items():
                if o in kwargs:
                    if n in kwargs:
                        raise TypeError(f"{name}() got both {o!r} and {n!r}")
                    value = kwargs.pop(o)
                    kwargs[n] = value if convert is None else convert(value)
                    shown = "..." if convert is None else repr(kwargs[n])
                    warn_moved(f"{name}({o}=...)", f"{name}({n}={shown})", stacklevel=4)
            return args, kwargs

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if len(args) > n_new or (renamed and not renamed.keys().isdisjoint(kwargs)):
                args, kwargs = translate(args, kwargs)
            return func(*args, **kwargs)

        wrapper.__signature__ = sig  # type: ignore[attr-defined]
        # what a call in the old form meant, and its translation (for the tests)
        wrapper.__moved_arguments__ = (  # type: ignore[attr-defined]
            old,
            n_new,
            {o: n for o, (n, _) in renamed.items()},
        )
        wrapper.translate = translate  # type: ignore[attr-defined]
        return wrapper  # type: ignore[return-value]

    return decorate


def geometry_of_flag(sphere: Any) -> str:
    """The geometry's name that the ``sphere=`` flag of earlier releases meant."""
    if not isinstance(sphere, (bool, np.bool_)):
        raise TypeError(f"sphere must be a bool, got {type(sphere).__name__}")
    return "sphere" if sphere else "euclidean"
