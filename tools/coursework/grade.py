"""``python -m tools.coursework grade``: grade a folder of submissions (``make grade``).

Grades every notebook of a folder with ``otter run`` and writes
``_build/grades/<slug>/gradebook.csv`` and ``feedback/<student>.md``.
"""

from __future__ import annotations

import concurrent.futures
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .common import BUILD, GRADES, CourseworkError, fmt
from .common import env as kernel_env
from .masters import master_paths


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
        env = kernel_env()
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
    return f"{fmt(x)} point" + ("" if x == 1 else "s")


def _feedback(slug: str, info: dict[str, Any], g: Grade) -> str:
    auto = [q for q in info["questions"] if not q["manual"]]
    manual = [q for q in info["questions"] if q["manual"]]
    possible = sum(q["points"] for q in auto)
    lines = [f"# {info['title']}, feedback for {g.student}", ""]
    if g.status != "graded":
        lines += [
            f"**Not graded ({g.status})**: {g.reason}.",
            "",
            f"Autograded score: 0 / {fmt(possible)}.",
            "",
        ]
        return "\n".join(lines)
    lines += [f"Autograded score: **{fmt(g.total)} / {fmt(possible)}**."]
    if manual:
        names = ", ".join(f"`{q['name']}` ({_points(q['points'])})" for q in manual)
        lines += [f"Graded by hand, separately: {names}."]
    if g.reason:
        lines += ["", f"Note: {g.reason}."]
    lines += ["", "| question | score | points |", "| --- | --- | --- |"]
    for q in auto:
        score = g.scores.get(q["name"], 0.0)
        lines.append(f"| `{q['name']}` | {fmt(score)} | {fmt(q['points'])} |")
    for q in auto:
        name = q["name"]
        cases = g.cases.get(name, [])
        lines += [
            "",
            f"## {name}: {fmt(g.scores.get(name, 0.0))} / {fmt(q['points'])}",
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
                f"Hidden tests: {fmt(got)} / {_points(tot)} "
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
                row.append("" if q["manual"] else fmt(g.scores.get(q["name"], 0.0)))
            w.writerow([*row, fmt(g.total), g.status, g.reason])
    for g in grades:
        (out / "feedback" / f"{g.student}.md").write_text(_feedback(slug, info, g))
    possible = sum(q["points"] for q in auto)
    print(f"{'student':24s} {'total':>8s}  status")
    for g in grades:
        score = f"{fmt(g.total)}/{fmt(possible)}"
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
