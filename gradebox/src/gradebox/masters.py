"""The assignment master: one notebook per assignment, annotated for otter-grader
7.0.0 (``otter assign``'s format; a ``.ipynb``, or any text notebook jupytext
reads, such as a MyST ``.md``). The grader reads two keys of a question's
configuration that otter does not know: ``implement:`` and ``derive:``
(:class:`Question`), and raw ``# BEGIN EXPECTED``/``# END EXPECTED`` blocks.
:func:`parse_master` collects its questions, public and hidden tests and solutions;
:func:`secrets` the lines that must never reach a student.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .common import GradingError


# keys of a question's configuration that the grader reads and otter does not know
GRADER_KEYS = {"implement", "derive"}


@dataclass
class Question:
    """One question of a master: its points and the text that students never see."""

    name: str
    points: float
    manual: bool = False
    public: list[str] = field(default_factory=list)
    hidden: list[str] = field(default_factory=list)
    public_points: list[float | None] = field(default_factory=list)
    hidden_points: list[float | None] = field(default_factory=list)
    solution: list[str] = field(default_factory=list)
    # functions the student writes without the library under test (an "implement"
    # question): while a test calls one of them, no code of the library may run
    implement: list[str] = field(default_factory=list)
    # values the student computes without the library under test (a "derive"
    # question): the tests read them where the library is absent
    derive: list[str] = field(default_factory=list)
    # (hidden, body) of every test case, in the master's order
    order: list[tuple[bool, str]] = field(default_factory=list)

    def cases(self) -> list[tuple[bool, float, str]]:
        """(hidden, points, body) of every test case in order, with otter's rule
        for cases without points: the question's points left over, shared equally.
        """
        given = {}
        for hidden, pts in [(False, self.public_points), (True, self.hidden_points)]:
            bodies = self.hidden if hidden else self.public
            for body, p in zip(bodies, pts):
                given[(hidden, body)] = p
        points = [given[(h, b)] for h, b in self.order]
        fixed = sum(float(p) for p in points if p is not None)
        free = sum(p is None for p in points)
        share = (self.points - fixed) / free if free else 0.0
        return [
            (h, float(p) if p is not None else share, b)
            for (h, b), p in zip(self.order, points)
        ]


@dataclass
class Master:
    """A parsed assignment master."""

    slug: str
    path: Path
    title: str
    config: dict[str, Any]
    questions: list[Question]
    code: list[str]
    shared: list[str]
    # code cells outside the solution and test blocks (what every student has), and
    # the code cells of the solution blocks, in the master's order
    setup: list[str] = field(default_factory=list)
    solution_cells: list[str] = field(default_factory=list)
    # code cells between raw "# BEGIN EXPECTED" and "# END EXPECTED": they fill the
    # dict ``expected`` of the values the public tests compare with, so that those
    # tests never show the library call that computes them (see expected_values)
    expected_cells: list[str] = field(default_factory=list)

    @property
    def points(self) -> float:
        return float(sum(q.points for q in self.questions))

    @property
    def autograded(self) -> list[Question]:
        return [q for q in self.questions if not q.manual]

    @property
    def manual(self) -> list[Question]:
        return [q for q in self.questions if q.manual]


def raw_header(source: str) -> tuple[str, dict[str, Any]]:
    """First line of a raw otter cell and the YAML below it."""
    import yaml

    first, _, rest = source.strip().partition("\n")
    data = yaml.safe_load(rest) if rest.strip() else {}
    return first.strip().upper(), data if isinstance(data, dict) else {}


_TEST_CONFIG = re.compile(
    r'^\s*"""\s*#\s*BEGIN TEST CONFIG\s*\n(.*?)\n\s*"""\s*#\s*END TEST CONFIG\s*\n?',
    re.S,
)


def _solution_lines(source: str) -> list[str]:
    """Lines of a solution cell that otter removes from the student version."""
    out, inside = [], False
    for line in source.splitlines():
        s = line.strip()
        if re.match(r"#\s*BEGIN SOLUTION", s):
            inside = True
        elif re.match(r"#\s*END SOLUTION", s):
            inside = False
        elif inside:
            out.append(line)
        elif re.search(r"#\s*SOLUTION\s*$", line):
            out.append(re.sub(r"#\s*SOLUTION\s*$", "", line))
    return out


def parse_master(path: Path) -> Master:
    """Read a master and collect its questions, tests and solutions.

    Parameters
    ----------
    path : Path
        A MyST text notebook in the otter-grader 7 format.

    Returns
    -------
    Master
    """
    import jupytext
    import yaml

    nb = jupytext.read(path)
    cells = nb.cells
    if not cells or cells[0].cell_type != "raw":
        raise GradingError(f"{path}: the first cell must be a raw ASSIGNMENT CONFIG")
    head, config = raw_header(cells[0].source)
    if head != "# ASSIGNMENT CONFIG":
        raise GradingError(f"{path}: the first cell must be '# ASSIGNMENT CONFIG'")
    title, questions, code, shared = "", [], [], []
    setup: list[str] = []
    solution_cells: list[str] = []
    expected_cells: list[str] = []
    current: Question | None = None
    block = None
    for cell in cells[1:]:
        src = cell.source
        if cell.cell_type == "raw":
            head, data = raw_header(src)
            if head == "# BEGIN QUESTION":
                implement = data.get("implement", [])
                if isinstance(implement, str):
                    implement = [implement]
                derive = data.get("derive", [])
                if isinstance(derive, str):
                    derive = [derive]
                current = Question(
                    name=str(data.get("name")),
                    points=float(data.get("points", 0)),
                    manual=bool(data.get("manual", False)),
                    implement=[str(n) for n in implement],
                    derive=[str(n) for n in derive],
                )
                questions.append(current)
            elif head == "# END QUESTION":
                current = None
            elif head in ("# BEGIN SOLUTION", "# BEGIN TESTS", "# BEGIN EXPECTED"):
                block = head.split()[-1].lower()
            elif head in ("# END SOLUTION", "# END TESTS", "# END EXPECTED"):
                block = None
            continue
        if cell.cell_type == "code":
            code.append(src)
            if block == "solution":
                solution_cells.append(src)
            elif block == "expected":
                expected_cells.append(src)
                continue
            elif block is None:
                setup.append(src)
        if block == "solution" and current is not None:
            if cell.cell_type == "markdown":
                current.solution.extend(src.splitlines())
            else:
                secret = _solution_lines(src)
                current.solution.extend(secret)
                kept = set(secret)
                shared.extend(s for s in src.splitlines() if s not in kept)
        elif block == "tests" and current is not None:
            m = _TEST_CONFIG.match(src)
            conf = yaml.safe_load(m.group(1)) if m else {}
            body = src[m.end() :] if m else src
            pts = conf.get("points") if isinstance(conf, dict) else None
            hidden = bool(isinstance(conf, dict) and conf.get("hidden"))
            current.order.append((hidden, body))
            if hidden:
                current.hidden.append(body)
                current.hidden_points.append(pts)
            else:
                current.public.append(body)
                current.public_points.append(pts)
        else:
            shared.extend(src.splitlines())
            if not title and cell.cell_type == "markdown":
                m = re.search(r"^#\s+(.+)$", src, re.M)
                title = m.group(1).strip() if m else ""
    master = Master(
        path.stem,
        path,
        title or path.stem,
        config,
        questions,
        code,
        shared,
        setup,
        solution_cells,
        expected_cells,
    )
    _check_points(master)
    return master


def _check_points(master: Master) -> None:
    """Every autograded question's test cases add up to its points (otter gives
    the question the sum of its cases, so a mismatch would change the total)."""
    for q in master.autograded:
        total = sum(p for _, p, _ in q.cases())
        if abs(total - q.points) > 1e-9 or any(p < 0 for _, p, _ in q.cases()):
            raise GradingError(
                f"{master.path.name}: question {q.name} is worth {q.points:g} points "
                f"but its test cases add up to {total:g}: make the cases' points "
                "(TEST CONFIG) sum to the question's points"
            )


def secrets(master: Master) -> dict[str, list[str]]:
    """Distinctive lines of the solutions and of the hidden tests of a master.

    A line counts when it has at least 12 characters, is not a comment, and does not
    also occur in the parts of the master that students see (prompts, shared code,
    public tests), not even as part of a longer line, so that its presence in a
    student notebook proves a leak. The EXPECTED blocks give the "reference" lines.
    """
    visible = set()
    for text in master.shared:
        visible.add(text.strip())
    for q in master.questions:
        for t in q.public:
            visible.update(s.strip() for s in t.splitlines())
    seen = "\n".join(sorted(visible))

    def keep(lines):
        out = []
        for line in lines:
            s = line.strip()
            if len(s) >= 12 and not s.startswith("#") and s not in seen:
                out.append(s)
        return sorted(set(out))

    sol, hid = [], []
    for q in master.questions:
        sol.extend(q.solution)
        for t in q.hidden:
            hid.extend(t.splitlines())
    ref = [line for cell in master.expected_cells for line in cell.splitlines()]
    return {"solution": keep(sol), "hidden": keep(hid), "reference": keep(ref)}


def bound_names(tree: ast.AST) -> set[str]:
    """Names a cell binds at its top level (not inside functions or classes)."""
    out = set()

    def visit(node):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
            return
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp)):
            return
        if isinstance(node, ast.GeneratorExp):
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                out.add((a.asname or a.name).split(".")[0])
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            out.add(node.id)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return out


def used_names(tree: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}


MAGIC = re.compile(r"^\s*(%|!|\?)")


def parse_cell(source: str, what: str) -> ast.Module:
    """A code cell's syntax tree, with IPython's magics blanked out."""
    lines = ["" if MAGIC.match(line) else line for line in source.splitlines()]
    try:
        return ast.parse("\n".join(lines))
    except SyntaxError as exc:
        raise SyntaxError(f"{what}: {exc}") from None


def setup_plan(master: Master) -> tuple[list[str], set[str]]:
    """The setup cells that run without the student's answers, and the names of
    the answers: bound by a solution cell, or by a setup cell that uses one (a cell
    that displays an answer, say; such cells are left out)."""
    answers = set()
    for cell in master.solution_cells:
        answers |= bound_names(parse_cell(cell, "a solution cell"))
    setup = [(src, parse_cell(src, "a setup cell")) for src in master.setup]
    skipped: set[int] = set()
    changed = True
    while changed:
        changed = False
        for i, (_, tree) in enumerate(setup):
            if i not in skipped and used_names(tree) & answers:
                skipped.add(i)
                answers |= bound_names(tree)
                changed = True
    return [src for i, (src, _) in enumerate(setup) if i not in skipped], answers


EXPECTED_MARK = "# The expected values of the public tests"


def _no_display(*args, **kwargs) -> None:
    """``display`` of a notebook, where nothing is shown."""


def expected_values(master: Master) -> dict:
    """Run the master's setup cells, then its EXPECTED cells, and return the dict
    ``expected`` they fill (numpy arrays). Trusted code of the master only."""
    import contextlib
    import io

    import numpy as np

    ns: dict = {"__name__": "__main__", "display": _no_display}
    with contextlib.redirect_stdout(io.StringIO()):
        for src in setup_plan(master)[0]:
            tree = parse_cell(src, f"{master.slug} setup")
            exec(compile(tree, f"<{master.slug} setup>", "exec"), ns)
        local = dict(ns)
        local["expected"] = {}
        for src in master.expected_cells:
            exec(compile(src, f"<{master.slug} expected>", "exec"), local)
    out = {}
    for key, value in local["expected"].items():
        arr = np.asarray(value)
        if arr.dtype.kind not in "biufc":
            raise GradingError(
                f"{master.path.name}: expected[{key!r}] is not numeric ({arr.dtype})"
            )
        out[str(key)] = arr
    return out


def expected_cell(values: dict) -> str:
    """The code cell that defines ``expected`` in the student's notebook."""
    import base64
    import io

    import numpy as np

    buf = io.BytesIO()
    np.savez_compressed(buf, **values)
    blob = base64.b64encode(buf.getvalue()).decode()
    return (
        f"{EXPECTED_MARK} (computed when the assignment was built)\n"
        "import base64 as _base64, io as _io, numpy as _np\n\n"
        f'expected = dict(_np.load(_io.BytesIO(_base64.b64decode("{blob}"))))\n'
    )
