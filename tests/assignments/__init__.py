"""Known mistakes and attacks of the assignments (one module each), and the two
notebook edits that the grading tests and ``gradebox/benchmarks/grading.py`` make
with them."""

from __future__ import annotations

import copy


def code_cell(source: str) -> dict:
    """A code cell of nbformat 4 holding ``source``."""
    return {
        "cell_type": "code",
        "execution_count": None,
        "id": f"c{abs(hash(source)) % 10**8:08d}",
        "metadata": {},
        "outputs": [],
        "source": source.splitlines(keepends=True),
    }


def with_cells(nb: dict, append=(), prepend=(), first_line: str = "") -> dict:
    """A copy of ``nb`` with code cells ``prepend`` (in order) after its first code
    cell, ``append`` at its end, and ``first_line`` put first in its imports cell."""
    nb = copy.deepcopy(nb)
    first = next(i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code")
    for src in reversed(list(prepend)):
        nb["cells"].insert(first + 1, code_cell(src))
    for src in append:
        nb["cells"].append(code_cell(src))
    if first_line:
        imports = next(
            c
            for c in nb["cells"]
            if c["cell_type"] == "code" and "import" in "".join(c["source"])
        )
        imports["source"] = [first_line + "\n", *imports["source"]]
    return nb


def attack_notebook(attack: dict, solution: dict, student: dict, fill: dict) -> dict:
    """The notebook of an attack of :mod:`.attacks`: its base notebook with its cells,
    each placeholder of ``fill`` (e.g. ``{OUT}``) replaced in their source."""
    cells = {key: [] for key in ("prepend", "append")}
    for key, sources in cells.items():
        for src in attack.get(key, []):
            for k, v in fill.items():
                src = src.replace(k, v)
            sources.append(src)
    base = solution if attack["base"] == "solution" else student
    return with_cells(base, **cells)
