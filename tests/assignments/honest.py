"""Honest ways of writing a correct notebook of a1_modelling, graded by
tests/test_grading.py (its class of submissions).

Each variant is the solution notebook written as students write it: IPython's
magics (autoreload, timing, ``%matplotlib inline``), a constant of the library read
inside an "implement" function, a pool of processes or many threads. Each must get
full marks, unflagged, from ``make grade`` (status ``graded``), as it does from the
student's own ``grader.check``: ``prepend`` cells go after the first code cell,
``append`` cells at the end, ``replace`` is a list of (old, new) replacements in
the code cells (each ``old`` occurs once), ``first_line`` goes first in the
imports cell.
"""

from __future__ import annotations

import copy

from . import code_cell, with_cells

HONEST = [
    {
        "name": "autoreload",
        "prepend": ["%load_ext autoreload\n%autoreload 2\n"],
    },
    {
        "name": "common magics",
        "prepend": [
            "%matplotlib inline\n%load_ext autoreload\n",
            "%time _t = sum(range(10))\n",
            "%%time\n_u = sum(range(10))\n",
            "%timeit -n 1 -r 1 sum(range(10))\n",
        ],
        "append": ["%%timeit -n 1 -r 1\n_v = velocity(np.eye(3), 1.0)\n"],
    },
    {
        "name": "a library constant in an implement function",
        "first_line": "from attnlib import NORMALIZATIONS",
        "replace": [
            (
                "    X = np.asarray(X, dtype=float)\n"
                "    QX = X if Q is None else X @ np.asarray(Q).T",
                "    if normalization not in NORMALIZATIONS:\n"
                "        raise ValueError(f'normalization must be one of "
                "{NORMALIZATIONS}, got {normalization!r}')\n"
                "    X = np.asarray(X, dtype=float)\n"
                "    QX = X if Q is None else X @ np.asarray(Q).T",
            )
        ],
    },
    {
        "name": "a process pool",
        "append": [
            "from concurrent.futures import ProcessPoolExecutor\n"
            "_tokens = [np.eye(3), 2 * np.eye(3)]\n"
            "with ProcessPoolExecutor(max_workers=2) as _ex:\n"
            "    _norms = list(_ex.map(np.linalg.norm, _tokens))\n"
            "assert np.allclose(_norms, [np.sqrt(3), 2 * np.sqrt(3)])\n"
        ],
    },
    {
        "name": "multiprocessing's Pool",
        "append": [
            "import multiprocessing as mp\n"
            "with mp.Pool(processes=min(2, mp.cpu_count())) as _pool:\n"
            "    _sizes = _pool.map(abs, [-1, -2, -3])\n"
            "assert _sizes == [1, 2, 3]\n"
        ],
    },
    {
        # matplotlib's font cache and its lock file live in the sandbox's own
        # MPLCONFIGDIR, so no lock is shared (the sandbox refuses flock and fcntl's)
        "name": "a figure",
        "append": [
            "import io\n"
            "import matplotlib.pyplot as plt\n"
            "_fig, _ax = plt.subplots()\n"
            "_ax.plot(np.arange(5), np.arange(5) ** 2, label='squares')\n"
            "_ax.set_title('a figure')\n"
            "_ax.legend()\n"
            "_fig.savefig(io.BytesIO(), format='png')\n"
            "plt.close(_fig)\n"
        ],
    },
    {
        # the cell the book writes at the top of its notebooks (it uses importlib,
        # subprocess and urllib to install attnlib's wheel where it is missing):
        # the book's own, not the student's, so not a finding
        "name": "the book's install cell first",
        "install_cell": True,
    },
    {
        "name": "many threads",
        "append": [
            "import time\n"
            "from concurrent.futures import ThreadPoolExecutor\n"
            "with ThreadPoolExecutor(max_workers=24) as _ex:\n"
            "    _fs = [_ex.submit(time.sleep, 0.2) for _ in range(24)]\n"
            "    assert all(f.result() is None for f in _fs)\n"
        ],
    },
]


def honest_notebook(variant: dict, solution: dict) -> dict:
    """The solution notebook written as ``variant`` says (see the module)."""
    nb = copy.deepcopy(solution)
    for old, new in variant.get("replace", []):
        cells = [
            c
            for c in nb["cells"]
            if c["cell_type"] == "code" and old in "".join(c["source"])
        ]
        count = sum("".join(c["source"]).count(old) for c in cells)
        if count != 1:
            raise AssertionError(
                f"{variant['name']!r}: {old!r} occurs {count} times in the "
                "solution's code cells (expected exactly once)"
            )
        cells[0]["source"] = (
            "".join(cells[0]["source"]).replace(old, new).splitlines(keepends=True)
        )
    nb = with_cells(
        nb,
        append=variant.get("append", ()),
        prepend=variant.get("prepend", ()),
        first_line=variant.get("first_line", ""),
    )
    if variant.get("install_cell"):
        nb["cells"].insert(0, code_cell(install_cell()))
    return nb


def install_cell() -> str:
    """The install cell the book writes at the top of an assignment's notebook."""
    from bookext.notebooks import install_source

    return install_source(
        "https://example.org/book/",
        "https://example.org/repo.git",
        None,
        "a1_modelling.zip",
        "assignments/a1_modelling",
    )
