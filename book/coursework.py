"""Coursework: assignments, grading, the assignment pages and the student edition.

Every assignment is one MyST text notebook in ``book/assignments/`` (a *master*)
annotated for otter-grader 7.0.0; the instructor's guide
(``book/coursework/guide.md``) describes the format. This script turns the masters
into what a course needs. The Makefile calls it; run from the repository root:

``python book/coursework.py build [SLUG ...] [--changed PATH ...]``
    ``make assignments``. For each master: the student notebook, the solution
    notebook and the autograder zip in ``_build/assignments/<slug>/``.
``python book/coursework.py pages``
    The book's assignment pages (questions and stubs, a download link to the
    student notebook) and the rubric include of the guide, generated into the
    git-ignored ``book/coursework/generated/``.
``python book/coursework.py grade SLUG FOLDER [--timeout S] [--jobs N]``
    ``make grade``. Grades every notebook of FOLDER with ``otter run`` and writes
    ``_build/grades/<slug>/gradebook.csv`` and ``feedback/<student>.md``.
``python book/coursework.py student``
    ``make student``. The student edition of the book, without the exercises'
    solutions and without the instructor's guide, in ``_build/student/html``.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import csv
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MASTERS = ROOT / "book" / "assignments"
RUBRICS = MASTERS / "rubrics"
BUILD = ROOT / "_build" / "assignments"
GRADES = ROOT / "_build" / "grades"
GENERATED = ROOT / "book" / "coursework" / "generated"
STUDENT = ROOT / "_build" / "student"
GUIDE = "book/coursework/guide"

# Packages the autograder needs besides otter, at the versions pinned for the book.
RUNTIME = ("numpy", "scipy", "sympy", "matplotlib")
PYTHON_VERSION = "3.11"
# Where Gradescope unpacks the autograder zip (otter puts autograder_files in files/).
GRADESCOPE_FILES = "/autograder/source/files"


class CourseworkError(RuntimeError):
    """A master, a build or a command-line argument is not usable."""


# --------------------------------------------------------------------------- masters


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

    @property
    def points(self) -> float:
        return float(sum(q.points for q in self.questions))

    @property
    def autograded(self) -> list[Question]:
        return [q for q in self.questions if not q.manual]

    @property
    def manual(self) -> list[Question]:
        return [q for q in self.questions if q.manual]


def master_paths() -> dict[str, Path]:
    """The masters in ``book/assignments/``, by slug (the file stem), sorted."""
    return {p.stem: p for p in sorted(MASTERS.glob("*.md"))}


def _raw_header(source: str) -> tuple[str, dict[str, Any]]:
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
        raise CourseworkError(f"{path}: the first cell must be a raw ASSIGNMENT CONFIG")
    head, config = _raw_header(cells[0].source)
    if head != "# ASSIGNMENT CONFIG":
        raise CourseworkError(f"{path}: the first cell must be '# ASSIGNMENT CONFIG'")
    title, questions, code, shared = "", [], [], []
    current: Question | None = None
    block = None
    for cell in cells[1:]:
        src = cell.source
        if cell.cell_type == "raw":
            head, data = _raw_header(src)
            if head == "# BEGIN QUESTION":
                current = Question(
                    name=str(data.get("name")),
                    points=float(data.get("points", 0)),
                    manual=bool(data.get("manual", False)),
                )
                questions.append(current)
            elif head == "# END QUESTION":
                current = None
            elif head in ("# BEGIN SOLUTION", "# BEGIN TESTS"):
                block = head.split()[-1].lower()
            elif head in ("# END SOLUTION", "# END TESTS"):
                block = None
            continue
        if cell.cell_type == "code":
            code.append(src)
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
            if isinstance(conf, dict) and conf.get("hidden"):
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
    return Master(path.stem, path, title or path.stem, config, questions, code, shared)


def secrets(master: Master) -> dict[str, list[str]]:
    """Distinctive lines of the solutions and of the hidden tests of a master.

    A line counts when it has at least 12 characters, is not a comment, and does not
    also occur in the parts of the master that students see (prompts, shared code,
    public tests), so that its presence in a student notebook proves a leak.
    """
    visible = set()
    for text in master.shared:
        visible.add(text.strip())
    for q in master.questions:
        for t in q.public:
            visible.update(s.strip() for s in t.splitlines())

    def keep(lines):
        out = []
        for line in lines:
            s = line.strip()
            if len(s) >= 12 and not s.startswith("#") and s not in visible:
                out.append(s)
        return sorted(set(out))

    sol, hid = [], []
    for q in master.questions:
        sol.extend(q.solution)
        for t in q.hidden:
            hid.extend(t.splitlines())
    return {"solution": keep(sol), "hidden": keep(hid)}


# --------------------------------------------------------------------------- helpers


def _env() -> dict[str, str]:
    """Environment of the subprocesses: this checkout's attnlib, headless plots."""
    env = dict(os.environ)
    paths = [str(ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    env["MPLBACKEND"] = "Agg"
    env.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    return env


def _run(cmd: list[str], cwd: Path | None = None, what: str = "") -> str:
    r = subprocess.run(
        cmd, cwd=cwd, env=_env(), capture_output=True, text=True, check=False
    )
    if r.returncode != 0:
        tail = "\n".join((r.stdout + r.stderr).strip().splitlines()[-40:])
        raise CourseworkError(f"{what or cmd[0]} failed (exit {r.returncode}):\n{tail}")
    return r.stdout


def _write_if_changed(path: Path, data: bytes | str) -> bool:
    raw = data.encode() if isinstance(data, str) else data
    if path.exists() and path.read_bytes() == raw:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(raw)
    return True


def _pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        m = re.match(r"^([A-Za-z0-9_.\-]+)==(\S+)", line.strip())
        if m:
            pins[m.group(1).lower()] = m.group(2)
    return pins


def _fmt(x: float | None) -> str:
    return "" if x is None else f"{x:g}"


# --------------------------------------------------------------------------- build


def build_wheel(dest: Path) -> Path:
    """Build a wheel of this checkout's attnlib into ``dest`` (no network)."""
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "attnlib-src"
        shutil.copytree(
            ROOT / "attnlib",
            src / "attnlib",
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
        )
        for name in ("pyproject.toml", "README.md"):
            shutil.copy2(ROOT / name, src / name)
        _run(
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                "--no-deps",
                "--no-build-isolation",
                "--no-index",
                "--quiet",
                "--disable-pip-version-check",
                "-w",
                str(dest),
                str(src),
            ],
            what="building the attnlib wheel",
        )
    wheels = sorted(dest.glob("attnlib-*.whl"))
    if not wheels:
        raise CourseworkError("pip wheel produced no attnlib wheel")
    return wheels[-1]


def _assignment_notebook(master: Path, src: Path, wheel: Path) -> Path:
    """The master as an .ipynb whose config adds the autograder's requirements."""
    import jupytext
    import yaml

    pins = _pins()
    reqs = [f"{p}=={pins[p]}" for p in RUNTIME if p in pins]
    reqs.append(f"{GRADESCOPE_FILES}/{wheel.name}")
    shutil.copy2(wheel, src / wheel.name)
    nb = jupytext.read(master)
    head, config = _raw_header(nb.cells[0].source)
    extra = config.get("requirements")
    if isinstance(extra, list):
        reqs.extend(str(r) for r in extra)
    elif extra:
        raise CourseworkError(
            f"{master}: give extra requirements as a YAML list, not a file ({extra!r})"
        )
    (src / "requirements.txt").write_text("\n".join(reqs) + "\n")
    config["requirements"] = "requirements.txt"
    config["autograder_files"] = [*config.get("autograder_files", []), wheel.name]
    config["python_version"] = PYTHON_VERSION
    config.setdefault("name", master.stem)
    nb.cells[0].source = "# ASSIGNMENT CONFIG\n" + yaml.safe_dump(
        config, sort_keys=False
    )
    out = src / f"{master.stem}.ipynb"
    jupytext.write(nb, out, fmt="ipynb")
    return out


def build_assignment(slug: str, master: Path, wheel: Path, out: Path) -> Path:
    """Build one assignment into ``out/<slug>`` (replaced only on success).

    Layout: ``student/<slug>.ipynb`` (to hand out), ``solution/<slug>.ipynb``
    (instructors), ``<slug>-autograder.zip`` (``make grade``, Gradescope),
    ``questions.json`` (names, points, manual flags), ``otter/`` (otter assign's own
    output) and ``src/`` (the notebook given to otter assign).
    """
    work = out / f".partial-{slug}"
    shutil.rmtree(work, ignore_errors=True)
    (work / "src").mkdir(parents=True)
    nb = _assignment_notebook(master, work / "src", wheel)
    _run(
        [sys.executable, "-m", "otter", "assign", nb.name, str(work / "otter")],
        cwd=work / "src",
        what=f"otter assign {slug}",
    )
    zips = sorted((work / "otter" / "autograder").glob(f"{slug}-autograder_*.zip"))
    if len(zips) != 1:
        raise CourseworkError(f"otter assign {slug}: expected one autograder zip")
    (work / "student").mkdir()
    (work / "solution").mkdir()
    shutil.copy2(work / "otter" / "student" / f"{slug}.ipynb", work / "student")
    shutil.copy2(work / "otter" / "autograder" / f"{slug}.ipynb", work / "solution")
    shutil.copy2(zips[0], work / f"{slug}-autograder.zip")
    m = parse_master(master)
    info = {
        "slug": slug,
        "title": m.title,
        "points": m.points,
        "questions": [
            {"name": q.name, "points": q.points, "manual": q.manual}
            for q in m.questions
        ],
    }
    (work / "questions.json").write_text(json.dumps(info, indent=2) + "\n")
    final = out / slug
    shutil.rmtree(final, ignore_errors=True)
    work.rename(final)
    return final


def build(
    slugs: list[str] | None = None,
    *,
    changed: list[str] | None = None,
    out: Path = BUILD,
    jobs: int | None = None,
) -> list[str]:
    """Build the assignments that need it, in parallel.

    Parameters
    ----------
    slugs : list of str, optional
        Build exactly these. Without it: every master named in ``changed`` (all of
        them if ``changed`` names anything else, e.g. this script or attnlib), every
        master whose build is missing, and remove the builds of deleted masters.
    changed : list of str, optional
        Paths that changed since the last build (the Makefile passes ``$?``).
    out : Path
        Output root (``_build/assignments``).
    jobs : int, optional
        Parallel builds (default: the number of CPUs).

    Returns
    -------
    list of str
        The slugs built.
    """
    masters = master_paths()
    if slugs:
        unknown = sorted(set(slugs) - set(masters))
        if unknown:
            raise CourseworkError(
                f"no master for {unknown} in {MASTERS} (have: {sorted(masters)})"
            )
        pending = list(slugs)
    else:
        pending = set()
        for p in changed or []:
            path = (ROOT / p).resolve()
            if path.parent == MASTERS.resolve() and path.suffix == ".md":
                pending.add(path.stem)
            else:
                pending.update(masters)
        pending.update(s for s in masters if not (out / s / "questions.json").exists())
        pending = sorted(pending & set(masters))
        if out.exists():
            for d in out.iterdir():
                if d.is_dir() and not d.name.startswith(".") and d.name not in masters:
                    shutil.rmtree(d)
    out.mkdir(parents=True, exist_ok=True)
    if not pending:
        print("assignments are up to date")
        return []
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        wheel = build_wheel(Path(tmp))
        workers = max(1, min(jobs or os.cpu_count() or 1, len(pending)))
        with concurrent.futures.ThreadPoolExecutor(workers) as pool:
            futures = {
                pool.submit(build_assignment, s, masters[s], wheel, out): s
                for s in pending
            }
            errors = []
            for fut in concurrent.futures.as_completed(futures):
                slug = futures[fut]
                try:
                    fut.result()
                    print(f"built {slug}: {out / slug}")
                except CourseworkError as exc:
                    errors.append(f"{slug}: {exc}")
    if errors:
        raise CourseworkError("\n\n".join(errors))
    print(f"{len(pending)} assignment(s) built in {time.perf_counter() - start:.0f} s")
    return pending


# --------------------------------------------------------------------------- pages


# a Markdown link to a file (not [a, b](x) in a formula)
LINK = re.compile(r"(\[[^\]]*\])\(([^)\s]+\.(?:md|ipynb|png|svg|pdf)(?:#[^)\s]*)?)\)")
# a link target that is not relative to the master: a URL, an anchor, a root path
NOT_RELATIVE = re.compile(r"^([a-z][a-z0-9+.-]*:|#|/)", re.I)


def _relink(markdown: str, page_dir: Path) -> str:
    """Relative links of a master (to ``../circle.md``, say) as seen from the page."""

    def fix(m: re.Match) -> str:
        target = m.group(2)
        if NOT_RELATIVE.match(target):
            return m.group(0)
        path, sep, anchor = target.partition("#")
        new = os.path.relpath((MASTERS / path).resolve(), page_dir.resolve())
        return f"{m.group(1)}({Path(new).as_posix()}{sep}{anchor})"

    return LINK.sub(fix, markdown)


def _page(slug: str, built: Path, page_dir: Path = GENERATED / "assignments") -> str:
    """MyST page of one assignment: its questions, stubs and a download link.

    ``page_dir`` is where the page is written: relative links of the master are
    rewritten to point from there to the same files.
    """
    info = json.loads((built / "questions.json").read_text())
    nb = json.loads((built / "student" / f"{slug}.ipynb").read_text())
    lines: list[str] = []
    title_done = False
    body: list[str] = []
    for cell in nb["cells"]:
        src = "".join(cell["source"]).strip()
        if cell["cell_type"] == "code":
            if not src or "otter.Notebook(" in src or src.startswith("grader.check"):
                continue
            body += ["```python", src, "```", ""]
            continue
        if cell["cell_type"] != "markdown" or not src:
            continue
        src = re.sub(r"<!--\s*(BEGIN|END) QUESTION\s*-->", "", src).strip()
        if not src:
            continue
        if not title_done:
            m = re.match(r"^#\s+(.+?)\s*$", src, re.M)
            if m and src.startswith("#"):
                lines += [f"# {m.group(1)}", ""]
                src = src[m.end() :].strip()
                title_done = True
        if src:
            body += [_relink(src, page_dir), ""]
    if not title_done:
        lines += [f"# {info['title']}", ""]
    total = _fmt(info["points"])
    lines += [
        f"Download the notebook: {{download}}`{slug}.ipynb <../notebooks/{slug}.ipynb>`"
        " (open it in JupyterLab, e.g. with `make lab`, or in any Jupyter with "
        "`attnlib` installed). Each question ends with a `grader.check` cell that "
        "runs its public tests.",
        "",
        "| question | points | graded |",
        "| --- | --- | --- |",
    ]
    for q in info["questions"]:
        how = "by hand (written answer)" if q["manual"] else "automatically"
        lines.append(f"| `{q['name']}` | {_fmt(q['points'])} | {how} |")
    lines += [f"| total | {total} | |", ""]
    return "\n".join(lines + body).rstrip() + "\n"


def pages(build_root: Path = BUILD, dest: Path = GENERATED) -> list[Path]:
    """Write the assignment pages, their notebooks and the rubric include.

    Files are rewritten only when their content changes (so Sphinx re-reads only
    what changed); pages of assignments that no longer exist are removed.
    """
    masters = master_paths()
    written = []
    keep = set()
    for slug in masters:
        built = build_root / slug
        if not (built / "questions.json").exists():
            raise CourseworkError(
                f"{slug} is not built: run `make assignments` (or "
                f"`python book/coursework.py build {slug}`) first"
            )
        page = dest / "assignments" / f"{slug}.md"
        nb = dest / "notebooks" / f"{slug}.ipynb"
        keep.update({page, nb})
        if _write_if_changed(page, _page(slug, built, page.parent)):
            written.append(page)
        _write_if_changed(nb, (built / "student" / f"{slug}.ipynb").read_bytes())
    parts = []
    for rubric in sorted(RUBRICS.glob("*.md")):
        # a path from the source root: Sphinx resolves nested includes against
        # the including page (the guide), not against this file
        rel = rubric.relative_to(ROOT).as_posix()
        parts += [f"```{{include}} /{rel}", "```", ""]
    if not parts:
        parts = ["No rubric has been written yet.", ""]
    rubrics = dest / "rubrics.md"
    keep.add(rubrics)
    if _write_if_changed(rubrics, "\n".join(parts)):
        written.append(rubrics)
    for sub in ("assignments", "notebooks"):
        for f in (dest / sub).glob("*"):
            if f not in keep:
                f.unlink()
    return written


# --------------------------------------------------------------------------- grading

STATUS_HELP = {
    "graded": "graded by otter run",
    "invalid": "not a readable notebook (not JSON, or not in the notebook format)",
    "empty": "no code in the notebook",
    "timeout": "grading took longer than the time limit (a cell that never ends?)",
    "failed": "otter run stopped with an error",
}


@dataclass
class Grade:
    """The grade of one submission."""

    student: str
    status: str
    reason: str = ""
    scores: dict[str, float] = field(default_factory=dict)
    cases: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def total(self) -> float:
        return float(sum(self.scores.values()))


def _kill_tree(pid: int) -> None:
    """Kill a process and all its descendants (otter starts the kernel in its own
    process group, so killing the group alone would leave it running)."""
    import psutil

    try:
        parent = psutil.Process(pid)
        procs = parent.children(recursive=True) + [parent]
    except psutil.NoSuchProcess:
        return
    for p in procs:
        try:
            p.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(procs, timeout=10)


def _read_submission(path: Path) -> tuple[Any, str]:
    """The notebook, or ``None`` and why it cannot be graded."""
    import nbformat

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"cannot read the file: {exc}"
    if not text.strip():
        return None, "the file is empty (0 bytes of notebook JSON)"
    try:
        nb = nbformat.reads(text, as_version=4)
        nbformat.validate(nb)
    except Exception as exc:  # nbformat raises several unrelated types
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return None, f"not a valid notebook: {type(exc).__name__}: {first[:80]}"
    return nb, ""


def grade_one(
    submission: Path, autograder: Path, slug: str, timeout: float, keep: Path | None
) -> Grade:
    """Grade one notebook with ``otter run`` in a subprocess with a time limit.

    The submission is copied under the assignment's notebook name (otter's
    initialisation cell looks for that file). ``keep`` receives otter's
    ``results.json`` (it contains the hidden tests: for instructors only).
    """
    import dill

    student = submission.stem
    start = time.perf_counter()
    nb, why = _read_submission(submission)
    if nb is None:
        return Grade(student, "invalid", why)
    if not any(c.cell_type == "code" and c.source.strip() for c in nb.cells):
        return Grade(student, "empty", "the notebook has no code")
    work = Path(tempfile.mkdtemp(prefix=f"grade-{slug}-"))
    try:
        target = work / f"{slug}.ipynb"
        shutil.copy2(submission, target)
        env = _env()
        env["TMPDIR"] = str(work)  # otter's own temporary files go with ours
        cmd = [sys.executable, "-m", "otter", "run", "--no-logo", "-p"]
        cmd += ["-a", str(autograder), "-o", str(work), str(target)]
        proc = subprocess.Popen(
            cmd,
            cwd=work,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_tree(proc.pid)
            proc.communicate()
            return Grade(
                student,
                "timeout",
                f"not finished after {timeout:g} s (a cell that never ends?); scored 0",
                seconds=time.perf_counter() - start,
            )
        pkl = work / "results.pkl"
        if proc.returncode != 0 or not pkl.exists():
            lines = (err or out or "").strip().splitlines()
            last = lines[-1] if lines else f"exit code {proc.returncode}"
            return Grade(student, "failed", f"otter run failed: {last[:200]}")
        with open(pkl, "rb") as fh, warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # from otter's imports
            results = dill.load(fh)
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            shutil.copy2(work / "results.json", keep / "results.json")
        grade = Grade(student, "graded", seconds=time.perf_counter() - start)
        for name, res in results.to_dict().items():
            grade.scores[name] = float(res["score"])
            grade.cases[name] = [
                {
                    "hidden": bool(r["test_case"]["hidden"]),
                    "points": float(r["test_case"]["points"] or 0),
                    "passed": bool(r["passed"]),
                    "message": "" if r["test_case"]["hidden"] else r["message"],
                }
                for r in res["test_case_results"]
            ]
        errors = []
        for cell in getattr(results, "notebook", None) and results.notebook.cells or []:
            for o in cell.get("outputs", []):
                if o.get("output_type") == "error":
                    errors.append(f"{o.get('ename')}: {str(o.get('evalue'))[:100]}")
        if errors:
            grade.reason = f"{len(errors)} cell(s) raised an error, first: {errors[0]}"
        return grade
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _first_failure(message: str) -> str:
    """The first failing statement of a doctest report and the error it raised."""
    lines = message.splitlines()
    try:
        i = next(k for k, line in enumerate(lines) if line.strip() == "Failed example:")
    except StopIteration:
        return message.strip()
    code, j = [], i + 1
    while j < len(lines) and lines[j].startswith("    "):
        code.append(lines[j])
        j += 1
    error = ""
    for line in lines[j:]:
        if line.strip() == "Trying:" or line.startswith("*****"):
            break
        if line.startswith("    ") and line.strip() and not line.startswith("      "):
            error = line.strip()
    return "\n".join(["Failed example:", *code, error]).strip()


def _points(x: float) -> str:
    return f"{_fmt(x)} point" + ("" if x == 1 else "s")


def _feedback(slug: str, info: dict[str, Any], g: Grade) -> str:
    auto = [q for q in info["questions"] if not q["manual"]]
    manual = [q for q in info["questions"] if q["manual"]]
    possible = sum(q["points"] for q in auto)
    lines = [f"# {info['title']}, feedback for {g.student}", ""]
    if g.status != "graded":
        lines += [
            f"**Not graded ({g.status})**: {g.reason}.",
            "",
            f"Autograded score: 0 / {_fmt(possible)}.",
            "",
        ]
        return "\n".join(lines)
    lines += [f"Autograded score: **{_fmt(g.total)} / {_fmt(possible)}**."]
    if manual:
        names = ", ".join(f"`{q['name']}` ({_points(q['points'])})" for q in manual)
        lines += [f"Graded by hand, separately: {names}."]
    if g.reason:
        lines += ["", f"Note: {g.reason}."]
    lines += ["", "| question | score | points |", "| --- | --- | --- |"]
    for q in auto:
        score = g.scores.get(q["name"], 0.0)
        lines.append(f"| `{q['name']}` | {_fmt(score)} | {_fmt(q['points'])} |")
    for q in auto:
        name = q["name"]
        cases = g.cases.get(name, [])
        lines += [
            "",
            f"## {name}: {_fmt(g.scores.get(name, 0.0))} / {_fmt(q['points'])}",
        ]
        public = [c for c in cases if not c["hidden"]]
        hidden = [c for c in cases if c["hidden"]]
        for i, c in enumerate(public, 1):
            verdict = "passed" if c["passed"] else "failed"
            lines += ["", f"Public test {i} ({_points(c['points'])}): {verdict}."]
            if not c["passed"]:
                lines += ["", "```text", _first_failure(c["message"]), "```"]
        if hidden:
            got = sum(c["points"] for c in hidden if c["passed"])
            tot = sum(c["points"] for c in hidden)
            npass = sum(c["passed"] for c in hidden)
            lines += [
                "",
                f"Hidden tests: {_fmt(got)} / {_points(tot)} "
                f"({npass} of {len(hidden)} passed).",
            ]
    return "\n".join(lines) + "\n"


def grade(
    slug: str,
    folder: Path,
    *,
    build_root: Path = BUILD,
    out: Path | None = None,
    timeout: float = 120.0,
    jobs: int | None = None,
) -> list[Grade]:
    """Grade every ``.ipynb`` of ``folder`` and write the gradebook and feedback.

    Parameters
    ----------
    slug : str
        The assignment (a master's file stem), already built.
    folder : Path
        Submissions, one notebook per student, named ``<student>.ipynb``.
    build_root : Path
        Where the assignment was built (``_build/assignments``).
    out : Path, optional
        Output folder (default ``_build/grades/<slug>``): ``gradebook.csv``,
        ``feedback/<student>.md`` (for the students) and ``otter/<student>/``
        (otter's raw results, which show the hidden tests: for instructors).
    timeout : float
        Seconds of wall time allowed per notebook, otter's start-up included.
    jobs : int, optional
        Notebooks graded at once (default: the number of CPUs).

    Returns
    -------
    list of Grade
        One per notebook, sorted by student.
    """
    built = build_root / slug
    autograder = built / f"{slug}-autograder.zip"
    if not autograder.exists():
        raise CourseworkError(
            f"no autograder for {slug!r} at {autograder}: run `make assignments` "
            f"(masters: {sorted(master_paths())})"
        )
    folder = Path(folder)
    if not folder.is_dir():
        raise CourseworkError(f"SUBMISSIONS must be a folder of notebooks: {folder}")
    if timeout <= 0:
        raise CourseworkError(f"timeout must be > 0 seconds, got {timeout}")
    subs = sorted(p for p in folder.glob("*.ipynb") if p.is_file())
    if not subs:
        raise CourseworkError(f"no .ipynb file in {folder}")
    info = json.loads((built / "questions.json").read_text())
    out = Path(out) if out is not None else GRADES / slug
    for sub in ("feedback", "otter"):
        shutil.rmtree(out / sub, ignore_errors=True)
        (out / sub).mkdir(parents=True)
    workers = max(1, min(jobs or os.cpu_count() or 1, len(subs)))
    print(
        f"grading {len(subs)} notebook(s) of {slug} with {workers} worker(s), ", end=""
    )
    print(f"at most {timeout:g} s each")
    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        grades = list(
            pool.map(
                lambda p: grade_one(
                    p, autograder, slug, timeout, out / "otter" / p.stem
                ),
                subs,
            )
        )
    questions = info["questions"]
    auto = [q for q in questions if not q["manual"]]
    with open(out / "gradebook.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        names = [q["name"] for q in questions]
        w.writerow(["student", *names, "total", "status", "reason"])
        for g in grades:
            row = [g.student]
            for q in questions:
                row.append("" if q["manual"] else _fmt(g.scores.get(q["name"], 0.0)))
            w.writerow([*row, _fmt(g.total), g.status, g.reason])
    for g in grades:
        (out / "feedback" / f"{g.student}.md").write_text(_feedback(slug, info, g))
    possible = sum(q["points"] for q in auto)
    print(f"{'student':24s} {'total':>8s}  status")
    for g in grades:
        score = f"{_fmt(g.total)}/{_fmt(possible)}"
        print(f"{g.student:24s} {score:>8s}  {g.status}", end="")
        print(f"  ({g.reason})" if g.reason else "")
    counts = {s: sum(g.status == s for g in grades) for s in STATUS_HELP}
    print(", ".join(f"{n} {s}" for s, n in counts.items() if n), end="")
    print(f"; {time.perf_counter() - start:.0f} s")
    print(f"gradebook: {out / 'gradebook.csv'}")
    print(f"feedback:  {out / 'feedback'}/<student>.md")
    manual = [q["name"] for q in questions if q["manual"]]
    if manual:
        print(f"graded by hand (empty columns): {', '.join(manual)}")
    return grades


# --------------------------------------------------------------------------- student


def strip_solutions(text: str) -> str:
    """Remove the exercises' solutions from a MyST chapter.

    Drops every gated ``{solution-start}`` ... ``{solution-end}`` block of
    sphinx-exercise (with backtick or colon fences) and every ``{solution}``
    directive, with everything between.
    """
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    i = 0
    fence = re.compile(r"^(`{3,}|:{3,})\{(solution-start|solution-end|solution)\}")
    end = re.compile(r"^(`{3,}|:{3,})\{solution-end\}")
    while i < len(lines):
        m = fence.match(lines[i])
        if m is None:
            out.append(lines[i])
            i += 1
            continue
        marker, kind = m.group(1), m.group(2)
        if kind == "solution-end":
            raise CourseworkError("a {solution-end} without its {solution-start}")
        j = i + 1
        if kind == "solution":
            while j < len(lines) and lines[j].rstrip() != marker:
                j += 1
            i = j + 1
            continue
        # skip to the {solution-end} directive, then past its closing fence
        while j < len(lines) and not end.match(lines[j]):
            j += 1
        if j == len(lines):
            raise CourseworkError("a {solution-start} without its {solution-end}")
        end_marker = re.match(r"^(`{3,}|:{3,})", lines[j]).group(1)
        j += 1
        while j < len(lines) and lines[j].rstrip() != end_marker:
            j += 1
        i = j + 1
        while i < len(lines) and not lines[i].strip() and out and not out[-1].strip():
            i += 1
    return "".join(out)


def _execution_hash() -> str:
    """Digest of what the chapters' outputs depend on besides their code: attnlib,
    the pinned environment, the Makefile and this script (which sets the kernels'
    environment), as for the Makefile's execution-cache stamp of the main book."""
    h = hashlib.sha256()
    files = sorted((ROOT / "attnlib").rglob("*.py")) + [
        ROOT / name
        for name in ("requirements.txt", "pyproject.toml", "Makefile")
        if (ROOT / name).exists()
    ]
    for p in files + [Path(__file__).resolve()]:
        h.update(str(p.relative_to(ROOT)).encode())
        h.update(p.read_bytes())
    return h.hexdigest()


def _student_toc(toc: dict[str, Any]) -> dict[str, Any]:
    def keep(entry):
        return entry.get("file") != GUIDE

    for part in toc.get("parts", []):
        part["chapters"] = [c for c in part.get("chapters", []) if keep(c)]
        for c in part["chapters"]:
            if "sections" in c:
                c["sections"] = [s for s in c["sections"] if keep(s)]
    toc["parts"] = [p for p in toc.get("parts", []) if p["chapters"]]
    return toc


def student_sources(dest: Path) -> None:
    """Mirror the book's sources into ``dest`` without solutions and without the
    instructor's material (masters, rubrics, guide)."""
    import yaml

    files: dict[Path, bytes] = {}
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    config["title"] = f"{config.get('title', '')} (student edition)".strip()
    files[Path("_config.yml")] = yaml.safe_dump(config, sort_keys=False).encode()
    toc = _student_toc(yaml.safe_load((ROOT / "_toc.yml").read_text()))
    files[Path("_toc.yml")] = yaml.safe_dump(toc, sort_keys=False).encode()
    skip_dirs = {"__pycache__", ".ipynb_checkpoints", "_build"}
    for path in sorted((ROOT / "book").rglob("*")):
        rel = path.relative_to(ROOT)
        parts = rel.parts
        if path.is_dir() or skip_dirs & set(parts):
            continue
        if parts[:2] == ("book", "assignments"):
            continue  # masters (solutions, hidden tests) and rubrics
        if parts[:2] == ("book", "coursework") and parts[2:3] != ("generated",):
            continue  # the instructor's guide
        if parts[:4] == ("book", "coursework", "generated", "rubrics.md"):
            continue
        data = path.read_bytes()
        if path.suffix == ".md" and parts[1] != "_vendor":
            data = strip_solutions(data.decode()).encode()
        files[rel] = data
    for rel, data in files.items():
        _write_if_changed(dest / rel, data)
    wanted = {dest / rel for rel in files}
    for path in sorted(dest.rglob("*"), reverse=True):
        rel = path.relative_to(dest)
        if rel.parts[0] == "_build":
            continue
        if path.is_file() and path not in wanted:
            path.unlink()
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()


def student(out: Path = STUDENT) -> Path:
    """Build the student edition into ``out/html`` (``-W -n``, offline)."""
    src = out / "src"
    src.mkdir(parents=True, exist_ok=True)
    student_sources(src)
    stamp = out / ".execution-hash"
    digest = _execution_hash()
    if not stamp.exists() or stamp.read_text() != digest:
        for sub in (".jupyter_cache", ".doctrees", "jupyter_execute"):
            shutil.rmtree(src / "_build" / sub, ignore_errors=True)
    jb = Path(sys.executable).parent / "jupyter-book"
    # the chapters' kernels must use the inline backend to show their figures, as
    # in `make book` (with Agg a figure is only "<Figure ...>" text)
    env = _env()
    env.pop("MPLBACKEND")
    r = subprocess.run(
        [str(jb), "build", str(src), "-W", "-n", "--keep-going"],
        env=env,
        check=False,
    )
    if r.returncode != 0:
        raise CourseworkError("the student edition did not build (see above)")
    stamp.write_text(digest)
    html = out / "html"
    shutil.rmtree(html, ignore_errors=True)
    shutil.copytree(src / "_build" / "html", html)
    print(f"\nThe student edition is built. Open file://{html}/index.html")
    return html


# ----------------------------------------------------------------------- command line


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point (see the module docstring)."""
    parser = argparse.ArgumentParser(
        prog="coursework.py", description=__doc__.split("\n\n")[0]
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("build", help="build the assignments (make assignments)")
    p.add_argument("slugs", nargs="*", help="assignments to build (default: as needed)")
    p.add_argument("--changed", nargs="*", default=None, help="paths that changed")
    p.add_argument("--out", type=Path, default=BUILD)
    p.add_argument("--jobs", type=int, default=None)
    p = sub.add_parser("pages", help="generate the assignment pages of the book")
    p = sub.add_parser("grade", help="grade a folder of submissions (make grade)")
    p.add_argument("slug", help="the assignment, e.g. a1_modelling")
    p.add_argument("folder", type=Path, help="folder of <student>.ipynb files")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds per notebook")
    p.add_argument("--jobs", type=int, default=None, help="notebooks graded at once")
    p.add_argument("--out", type=Path, default=None, help="default _build/grades/SLUG")
    p.add_argument("--build-root", type=Path, default=BUILD)
    sub.add_parser("student", help="build the student edition (make student)")
    args = parser.parse_args(argv)
    try:
        if args.command == "build":
            build(args.slugs, changed=args.changed, out=args.out, jobs=args.jobs)
        elif args.command == "pages":
            for path in pages():
                print(f"wrote {path.relative_to(ROOT)}")
        elif args.command == "grade":
            if not args.slug or not str(args.folder):
                parser.error("usage: make grade A=<assignment> SUBMISSIONS=<folder>")
            grade(
                args.slug,
                args.folder,
                build_root=args.build_root,
                out=args.out,
                timeout=args.timeout,
                jobs=args.jobs,
            )
        elif args.command == "student":
            student()
    except CourseworkError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
