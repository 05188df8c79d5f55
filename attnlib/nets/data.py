r"""Data that exists offline: a text corpus, a character tokenizer, batches, tasks.

The corpus is the docstrings of a fixed list of Python standard-library modules
(:data:`STDLIB_MODULES`), read with :mod:`ast` from the files of the running Python
(``sysconfig.get_paths()["stdlib"]``): files → text → token ids → batches. Its
SHA-256 goes into every trained model's metadata, so that a model can be checked
against the text it was trained on. Another Python release changes the docstrings,
hence the hash: the models ship the text they were trained on
(:func:`write_corpus`, :func:`read_corpus`).

The synthetic task :class:`CopyTask` has a known structure: a random string, a
separator, and the masked positions where the string must be reproduced.
"""

from __future__ import annotations

import ast
import hashlib
import sysconfig
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from attnlib._validation import (
    as_numeric,
    check_choice,
    check_int,
    check_real,
    check_rng,
)
from attnlib.nets._budget import check_bytes

__all__ = [
    "STDLIB_MODULES",
    "Corpus",
    "stdlib_corpus",
    "read_corpus",
    "write_corpus",
    "docstrings",
    "CharTokenizer",
    "batches",
    "Batch",
    "CorpusTask",
    "CopyTask",
    "MASK",
    "UNK",
]

#: The standard-library modules whose docstrings make the corpus (fixed: the hash of
#: the text identifies it).
STDLIB_MODULES = (
    "abc",
    "argparse",
    "ast",
    "base64",
    "bisect",
    "calendar",
    "cmd",
    "codecs",
    "collections/__init__",
    "colorsys",
    "configparser",
    "contextlib",
    "copy",
    "csv",
    "dataclasses",
    "datetime",
    "decimal",
    "difflib",
    "doctest",
    "enum",
    "filecmp",
    "fnmatch",
    "fractions",
    "ftplib",
    "functools",
    "getopt",
    "gettext",
    "glob",
    "gzip",
    "heapq",
    "hmac",
    "inspect",
    "ipaddress",
    "json/__init__",
    "locale",
    "logging/__init__",
    "mailbox",
    "numbers",
    "operator",
    "optparse",
    "pathlib",
    "pickle",
    "pprint",
    "queue",
    "random",
    "re/__init__",
    "sched",
    "selectors",
    "shlex",
    "shutil",
    "smtplib",
    "socket",
    "statistics",
    "string",
    "subprocess",
    "tarfile",
    "tempfile",
    "textwrap",
    "threading",
    "timeit",
    "tokenize",
    "traceback",
    "typing",
    "unittest/case",
    "uuid",
    "warnings",
    "weakref",
    "zipfile",
)

#: The reserved id of :class:`CharTokenizer` for a masked (hidden) position.
MASK = 0
#: The reserved id of :class:`CharTokenizer` for a character outside its vocabulary.
UNK = 1


def docstrings(source: str) -> list[str]:
    """The docstrings of a module's source: the module's, then its classes' and
    functions' in the order of the file (``ast.get_docstring``, cleaned)."""
    if not isinstance(source, str):
        raise TypeError(f"source must be a str, got {type(source).__name__}")
    tree = ast.parse(source)
    nodes = [tree] + [
        n
        for n in ast.walk(tree)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    ]
    nodes[1:] = sorted(nodes[1:], key=lambda n: (n.lineno, n.col_offset))
    return [d for d in (ast.get_docstring(n, clean=True) for n in nodes) if d]


@dataclass(frozen=True)
class Corpus:
    """A text and where it came from.

    Attributes
    ----------
    text : str
    sha256 : str
        Hex digest of the UTF-8 text.
    sources : tuple of str
        The files read, relative to the standard library's folder.
    """

    text: str
    sha256: str
    sources: tuple[str, ...]


def stdlib_corpus(
    modules: tuple[str, ...] = STDLIB_MODULES, *, stdlib: Any = None
) -> Corpus:
    """The docstrings of ``modules``, joined by blank lines.

    Parameters
    ----------
    modules : tuple of str
        Module paths relative to the standard library, without ``.py``.
    stdlib : str or Path, optional
        The folder to read (default: this Python's ``sysconfig`` stdlib path).

    Returns
    -------
    Corpus
    """
    if isinstance(modules, str) or not all(isinstance(m, str) for m in modules):
        raise TypeError("modules must be a sequence of module paths (str)")
    if len(modules) == 0:
        raise ValueError("modules must not be empty")
    root = Path(sysconfig.get_paths()["stdlib"] if stdlib is None else stdlib)
    parts, sources = [], []
    for mod in modules:
        path = root / f"{mod}.py"
        if not path.is_file():
            path = root / mod / "__init__.py"
        if not path.is_file():
            raise ValueError(f"module {mod!r} not found under {root}")
        parts.extend(docstrings(path.read_text(encoding="utf-8")))
        sources.append(path.relative_to(root).as_posix())
    text = "\n\n".join(parts)
    return Corpus(text, hashlib.sha256(text.encode()).hexdigest(), tuple(sources))


def read_corpus(path: Any) -> Corpus:
    """The corpus saved in the UTF-8 text file ``path`` (:func:`write_corpus`).

    The trained models ship their corpus beside their weights: the docstrings of
    the standard library differ between Python releases (3.11.2 and 3.11.7 do), so
    :func:`stdlib_corpus` gives another text, hence other numbers, on another
    Python.
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"path must be a corpus text file, got {str(path)!r}")
    text = path.read_bytes().decode("utf-8")
    return Corpus(text, hashlib.sha256(text.encode()).hexdigest(), (path.name,))


def write_corpus(corpus: Corpus, path: Any) -> Path:
    """Save ``corpus.text`` to ``path`` (UTF-8, as it is: :func:`read_corpus` gives
    the same text and hash back)."""
    path = Path(path)
    path.write_bytes(corpus.text.encode("utf-8"))
    return path


class CharTokenizer:
    """Characters to ids: ``0`` is the mask token, ``1`` unknown characters, and
    ``2, 3, ...`` the characters of the fitted text by decreasing frequency (ties by
    code point).

    Examples
    --------
    >>> tok = CharTokenizer.fit("abracadabra")
    >>> tok.encode("abc?")
    array([2, 3, 5, 1], dtype=int32)
    >>> tok.decode(tok.encode("cab"))
    'cab'
    """

    def __init__(self, chars: Any) -> None:
        if isinstance(chars, str):
            chars = list(chars)
        chars = list(chars)
        if not all(isinstance(c, str) and len(c) == 1 for c in chars):
            raise TypeError("chars must be a sequence of single characters")
        if len(set(chars)) != len(chars):
            raise ValueError("chars must not repeat a character")
        self.chars = tuple(chars)
        self._ids = {c: i + 2 for i, c in enumerate(self.chars)}

    @classmethod
    def fit(cls, text: str, *, max_vocab: int | None = None) -> "CharTokenizer":
        """The characters of ``text``, the ``max_vocab - 2`` most frequent if given."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        if not text:
            raise ValueError("text must not be empty")
        counts = Counter(text)
        chars = sorted(counts, key=lambda c: (-counts[c], ord(c)))
        if max_vocab is not None:
            chars = chars[: check_int(max_vocab, "max_vocab", low=3) - 2]
        return cls(chars)

    @property
    def vocab_size(self) -> int:
        """Number of ids (characters plus the two reserved ones)."""
        return len(self.chars) + 2

    def encode(self, text: str) -> np.ndarray:
        """``text`` as an int32 array of ids."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        return np.fromiter(
            (self._ids.get(c, UNK) for c in text), dtype=np.int32, count=len(text)
        )

    def decode(self, ids: Any) -> str:
        """The text of ``ids`` (the mask shows as ``_``, unknown as ``?``)."""
        arr = as_numeric(ids, "ids")
        if not np.issubdtype(arr.dtype, np.integer) or arr.ndim != 1:
            raise TypeError("ids must be a 1-D integer array")
        if arr.size and (arr.min() < 0 or arr.max() >= self.vocab_size):
            raise ValueError(f"ids must lie in [0, {self.vocab_size})")
        table = ("_", "?") + self.chars
        return "".join(table[i] for i in arr.tolist())

    def to_dict(self) -> dict:
        """JSON-serialisable form (for a model's metadata)."""
        return {"chars": "".join(self.chars)}

    @classmethod
    def from_dict(cls, data: dict) -> "CharTokenizer":
        if not isinstance(data, dict) or "chars" not in data:
            raise TypeError("data must be a dict with the key 'chars'")
        return cls(data["chars"])


def _check_stream(tokens: Any, name: str = "tokens") -> np.ndarray:
    arr = as_numeric(tokens, name, "array of token ids")
    if not np.issubdtype(arr.dtype, np.integer) or arr.ndim != 1:
        raise TypeError(
            f"{name} must be a 1-D integer array, got {arr.dtype} of shape {arr.shape}"
        )
    return arr


def _check_batch(batch_size: Any, length: Any, *, low: int = 1) -> tuple[int, int]:
    """``batch_size`` and ``length`` as ints, a batch of them within the budget
    (int64 indices, inputs, targets and float32 weights: 24 bytes a position)."""
    batch_size = check_int(batch_size, "batch_size", low=1)
    length = check_int(length, "length", low=low)
    check_bytes(
        24 * batch_size * (length + 1),
        f"a batch of batch_size={batch_size} sequences of length={length}",
        "lower batch_size or length",
    )
    return batch_size, length


def _windows(stream, batch_size, length, rng):
    if stream.size < length:
        raise ValueError(f"tokens holds {stream.size} ids, fewer than length={length}")
    starts = rng.integers(0, stream.size - length + 1, size=batch_size)
    return stream[starts[:, None] + np.arange(length)]


def batches(
    tokens: Any,
    batch_size: int,
    length: int,
    rng: Any,
    *,
    n_batches: int | None = None,
) -> Iterator[np.ndarray]:
    """Random windows of a token stream, ``(batch_size, length)`` int32 each.

    Window starts are uniform over the stream, drawn from ``rng`` (a Generator or a
    seed): the same seed gives the same batches.

    Parameters
    ----------
    tokens : array_like of int, shape (N,)
    batch_size, length : int
    rng : numpy.random.Generator or int
    n_batches : int, optional
        Stop after this many (default: never).

    Examples
    --------
    >>> b = next(batches(np.arange(10), 2, 3, rng=0))
    >>> b.shape, bool(np.all(np.diff(b, axis=1) == 1))
    ((2, 3), True)
    """
    stream = _check_stream(tokens).astype(np.int32)
    batch_size, length = _check_batch(batch_size, length)
    rng = check_rng(rng)
    if n_batches is not None:
        n_batches = check_int(n_batches, "n_batches")
    if stream.size < length:
        raise ValueError(f"tokens holds {stream.size} ids, fewer than length={length}")

    def gen():
        k = 0
        while n_batches is None or k < n_batches:
            yield _windows(stream, batch_size, length, rng)
            k += 1

    return gen()


class Batch(NamedTuple):
    """Inputs, targets and weights (1 where a target is predicted), all ``(B, n)``."""

    inputs: np.ndarray
    targets: np.ndarray
    weights: np.ndarray


class CorpusTask:
    r"""Prediction on a token stream: next-token (``"next"``, causal models) or
    masked-token (``"masked"``) objective.

    ``"next"``: inputs are windows of the stream, targets the same shifted by one.
    ``"masked"``: each position is chosen with probability ``mask_rate``; a chosen
    position's input is replaced by :data:`MASK` and its target is the original id
    (weights 1 there, 0 elsewhere).
    """

    def __init__(
        self, tokens: Any, objective: str = "next", *, mask_rate: float = 0.15
    ) -> None:
        self.tokens = _check_stream(tokens).astype(np.int32)
        self.objective = check_choice(objective, "objective", ("next", "masked"))
        self.mask_rate = check_real(
            mask_rate, "mask_rate", low=0.0, high=1.0, strict_low=True
        )
        self.vocab_size = int(self.tokens.max()) + 1 if self.tokens.size else 0

    def sample(self, rng: np.random.Generator, batch_size: int, length: int) -> Batch:
        """One batch of ``batch_size`` sequences of ``length`` tokens."""
        batch_size, length = _check_batch(batch_size, length)
        rng = check_rng(rng)
        if self.objective == "next":
            w = _windows(self.tokens, batch_size, length + 1, rng)
            return Batch(w[:, :-1], w[:, 1:], np.ones((batch_size, length), np.float32))
        w = _windows(self.tokens, batch_size, length, rng)
        chosen = rng.random(w.shape) < self.mask_rate
        inputs = np.where(chosen, MASK, w).astype(np.int32)
        return Batch(inputs, w, chosen.astype(np.float32))


class CopyTask:
    r"""Copy a random string: ``s_1 .. s_k SEP MASK .. MASK``, targets ``s_1 .. s_k``.

    Symbols are ids ``2 .. n_symbols + 1`` (``0`` is :data:`MASK`, ``1`` the
    separator), uniform and independent; the sequence length is ``2k + 1``. The
    weights select the ``k`` masked positions, whose targets are the string: a model
    must move the information of token ``i`` to token ``k + 1 + i``, which attention
    does in one layer. The best loss without looking at the string is
    :math:`\log(\text{n\_symbols})` nats, with it 0.
    """

    SEP = 1

    def __init__(self, n_symbols: int = 16) -> None:
        self.n_symbols = check_int(n_symbols, "n_symbols", low=2)
        self.vocab_size = self.n_symbols + 2

    def sample(self, rng: np.random.Generator, batch_size: int, length: int) -> Batch:
        """One batch; ``length`` must be odd (``2k + 1``, ``k >= 1``)."""
        batch_size, length = _check_batch(batch_size, length, low=3)
        rng = check_rng(rng)
        if length % 2 == 0:
            raise ValueError(f"length must be odd (2k + 1) for CopyTask, got {length}")
        k = (length - 1) // 2
        s = rng.integers(2, self.n_symbols + 2, size=(batch_size, k), dtype=np.int32)
        sep = np.full((batch_size, 1), self.SEP, np.int32)
        inputs = np.concatenate([s, sep, np.full_like(s, MASK)], axis=1)
        targets = np.concatenate([s, sep, s], axis=1)
        weights = np.zeros(inputs.shape, np.float32)
        weights[:, k + 1 :] = 1.0
        return Batch(inputs, targets, weights)
