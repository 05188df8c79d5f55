"""Grading that students cannot cheat or sabotage, and results a lecturer cannot lose.

The slow tests grade Assignment 1 with ``make grade``'s grader: one run with the
attacks of ``tests/assignments/attacks.py``, the inputs Jupyter accepts, the broken
ones and a correct notebook (the victim); a regrade that must keep a hand-graded
column; an interrupted run, a second run beside it and its resumption; and the
guide's recipe for adding a question. The fast tests check the pieces that need the
book (its settings, its assignments, attnlib): the static scan of the book's cells
and of copies of attnlib, the tester's and the harness's handling of the library,
the build's check cell, the command line of make grade. The pieces that need none
of it (the plain-data messages, the formula parser, the notebook reader, the
gradebook's merge and spreadsheet safety, the lock, the sandbox's limits and
control groups) are tested with the grader, in ``gradebox/tests/test_pieces.py``.
"""

from __future__ import annotations

import copy
import csv
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import psutil
import pytest
import sympy as sp

from tests.assignments import attack_notebook, builds, code_cell
from tests.assignments.attacks import ATTACKS, disguised
from tests.assignments.honest import HONEST, honest_notebook
from gradebox import grade as cwgrade
from gradebox import masters, sandbox, scan, tester, wire
from gradebox.common import GradingError, configure
from tools.coursework import build as cwbuild
from tools.coursework import common
from tools.coursework import grade as bookgrade
from tools.coursework.masters import master_paths

ROOT = common.ROOT
SLUG = "a1_modelling"
MARK = "PWNED_BY_AN_ATTACK"
# in the command line of every process an attack starts: this test process's own
TAG = f"grading-attack-process-{os.getpid()}"
# CPU seconds per notebook: a solution needs about 2 here (a machine ten times
# slower passes); the endless loop of one attack burns all of them. Sandboxes of
# 3 GB: two notebooks at once (two sandboxes and a tester each) fit in 20 GB
LIMITS = sandbox.Limits(cpu=20, wall_s=400, sandbox_memory_mb=3072)
# the attacks (and the copies of the solution among them, which need about 3 s):
# those that run until the limit burn it twice (two sandboxes), at each grading
ATTACK_LIMITS = sandbox.Limits(cpu=12, wall_s=400, sandbox_memory_mb=3072)
SLOW_MARKS = [
    pytest.mark.slow,
    pytest.mark.skipif(SLUG not in builds.SLUGS, reason="COURSEWORK_ONLY"),
    pytest.mark.skipif(sandbox.bwrap() is None, reason="bubblewrap is not installed"),
]


@pytest.fixture(autouse=True)
def book_settings():
    """The book's settings of the grader (attnlib under test, the book's install
    cell exempt) for the pieces of the grader that the tests run in this process;
    the grading runs set them themselves."""
    previous = configure(common.grading_settings())
    yield
    configure(previous)


def slow(func):
    """Grades notebooks in sandboxes: a slow lane (make test-fast skips it)."""
    for mark in SLOW_MARKS:
        func = mark(func)
    return func


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")[:40]


def _notebook(path: Path) -> dict:
    return json.loads(path.read_text())


def _leftovers(*graders: int) -> list[str]:
    """Processes an attack of this test process started, or any process of the
    sandboxes of this process or of the grading processes ``graders`` (a grading
    run beside the tests has other sandboxes: they are not looked at)."""
    ours = {
        uid
        for pid in (os.getpid(), *graders)
        for slot in range(sandbox.MAX_SLOTS)
        for uid in (
            sandbox.slot_uid(pid, slot),
            sandbox.absent_uid(sandbox.slot_uid(pid, slot)),
        )
    }
    out = []
    for p in psutil.process_iter(["pid", "uids", "cmdline"]):
        try:
            cmd = " ".join(p.info["cmdline"] or [])
            uid = p.info["uids"].real if p.info["uids"] else 0
        except (psutil.Error, TypeError):
            continue
        if TAG in cmd.split() or uid in ours:
            out.append(f"{p.info['pid']} uid {uid}: {cmd[:80]}")
    return out


def _gone(*graders: int, within: float = 30.0) -> list[str]:
    """:func:`_leftovers` once they are gone, or what is left after ``within`` s:
    a killed sandbox takes a moment to exit on a loaded machine (two sandboxes of
    a run stopped by Ctrl-C were still listed 2 s later while make test ran)."""
    deadline = time.monotonic() + within
    while True:
        left = _leftovers(*graders)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.5)


@pytest.fixture(scope="module")
def a1() -> Path:
    """Assignment 1, built (with the others, once for all the coursework tests)."""
    return builds.built()


def _malformed(folder: Path, solution: dict, student: dict) -> dict[str, tuple]:
    """Inputs that Jupyter accepts, and broken ones; expected (status, total)."""
    expected = {}

    def save(name, nb, status="graded", total=18.0, raw=None):
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(raw if raw is not None else json.dumps(nb).encode())
        return path

    # copies of the solution notebook, written differently: full marks, flagged
    save("bom.ipynb", None, raw=b"\xef\xbb\xbf" + json.dumps(solution).encode())
    expected["bom"] = ("flagged", 18.0)
    extra = copy.deepcopy(solution)
    extra["an_unknown_field"] = {"x": 1}
    for cell in extra["cells"]:
        cell["an_unknown_field"] = [1, 2]
    save("unknown_fields.ipynb", extra)
    expected["unknown_fields"] = ("flagged", 18.0)
    kernel = copy.deepcopy(solution)
    kernel["metadata"]["kernelspec"] = {
        "name": "conda-env-course-py",
        "display_name": "Python (course)",
        "language": "python",
    }
    save("kernel.ipynb", kernel)
    expected["kernel"] = ("flagged", 18.0)
    moved = copy.deepcopy(solution)
    checks = [c for c in moved["cells"] if "grader.check" in "".join(c["source"])]
    moved["cells"] = [c for c in moved["cells"] if c not in checks] + checks[::-1]
    save("moved_checks.ipynb", moved)
    expected["moved_checks"] = ("graded", 18.0)
    save("SHOUTING.IPYNB", student)
    expected["SHOUTING"] = ("graded", 0.0)
    save("frank/a1_modelling.ipynb", student)
    save("frank/.ipynb_checkpoints/a1_modelling-checkpoint.ipynb", solution)
    expected["frank"] = ("graded", 0.0)
    save("grace/notes.txt", None, raw=b"I could not finish")
    expected["grace"] = ("invalid", 0.0)
    (folder / "dir.ipynb").mkdir()
    expected["dir"] = ("invalid", 0.0)
    (folder / "link.ipynb").symlink_to(folder / "does-not-exist.ipynb")
    expected["link"] = ("invalid", 0.0)
    save("=cmd|' -C calc'!A0.ipynb", student)
    expected["=cmd|' -C calc'!A0"] = ("graded", 0.0)
    save("truncated.ipynb", None, raw=json.dumps(solution).encode()[:500])
    expected["truncated"] = ("invalid", 0.0)
    save("zero_bytes.ipynb", None, raw=b"")
    expected["zero_bytes"] = ("invalid", 0.0)
    save("no_code.ipynb", {**solution, "cells": []})
    expected["no_code"] = ("empty", 0.0)
    save("notes.txt", None, raw=b"not a notebook")
    expected["notes"] = ("invalid", 0.0)
    save("r_kernel.ipynb", {**solution, "metadata": {"kernelspec": {"language": "R"}}})
    expected["r_kernel"] = ("invalid", 0.0)
    (folder / ".DS_Store").write_bytes(b"\0")
    return expected


@pytest.fixture(scope="module")
def attacked(a1, tmp_path_factory) -> dict:
    """One run: the victim, every attack, and the malformed inputs."""
    folder = tmp_path_factory.mktemp("attack-submissions")
    out = tmp_path_factory.mktemp("attack-grades")
    sentinel = tmp_path_factory.mktemp("outside") / "sentinel"
    solution = _notebook(a1 / SLUG / "solution" / f"{SLUG}.ipynb")
    student = _notebook(a1 / SLUG / "student" / f"{SLUG}.ipynb")
    (folder / "victim.ipynb").write_text(json.dumps(solution))
    fill = {
        "{ROOT}": str(ROOT),
        "{OUT}": str(out),
        "{SENTINEL}": str(sentinel),
        "{MARK}": MARK,
        "{TAG}": TAG,
    }
    names = {}
    for attack in ATTACKS:
        nb = attack_notebook(attack, solution, student, fill)
        name = f"attack_{_slug(attack['name'])}"
        (folder / f"{name}.ipynb").write_text(json.dumps(nb))
        names[name] = attack
    malformed = _malformed(folder, solution, student)
    # the victim's feedback of an earlier run, which an attack tries to rewrite
    (out / "feedback").mkdir(parents=True)
    grades = bookgrade.grade(
        SLUG, folder, build_root=a1, out=out, jobs=2, limits=ATTACK_LIMITS
    )
    time.sleep(5)  # longer than the delayed writers of the attacks wait
    return {
        "grades": {g.student: g for g in grades},
        "attacks": names,
        "malformed": malformed,
        "out": out,
        "folder": folder,
        "sentinel": sentinel,
        "leftovers": _leftovers(),
        "build": a1,
    }


@slow
@pytest.mark.parametrize("attack", ATTACKS, ids=lambda a: _slug(a["name"]))
def test_attack(attacked, attack):
    name = f"attack_{_slug(attack['name'])}"
    g = attacked["grades"][name]
    assert g.total <= attack["max_total"], (g.total, g.reason, g.cases)
    if attack.get("flagged"):  # a notebook that also failed keeps that status
        assert g.flags and g.status in ("flagged", "failed", "timeout"), g.reason
        assert g.reason.startswith("flagged: "), g.reason
    elif attack.get("flagged") is False:
        assert g.status != "flagged", g.reason
    if attack.get("status"):
        assert g.status == attack["status"], (g.status, g.reason)
    feedback = attacked["out"] / "feedback" / f"{cwgrade.safe_name(name)}.md"
    feedback = feedback.read_text()
    for q in attack.get("library", []):
        assert g.scores[q] == 0 and "without the library" in g.library[q], g.library
        assert "without the library" in feedback
    # nothing outside the submission's folder, no hidden test in its feedback
    assert not attacked["sentinel"].exists()
    assert not (Path.home() / f"{MARK}.txt").exists()
    secret = masters.secrets(masters.parse_master(master_paths()[SLUG]))
    for line in secret["hidden"] + secret["solution"]:
        assert line not in feedback, line


@slow
def test_attacks_leave_the_victim_the_gradebook_and_the_machine_intact(attacked):
    victim = attacked["grades"]["victim"]  # a copy of the solution: flagged
    assert victim.status == "flagged" and victim.total == 18, victim.reason
    assert victim.reason.startswith("flagged: the same code as the solution notebook")
    out = attacked["out"]
    gradebook = (out / "gradebook.csv").read_text()
    assert MARK not in gradebook
    for path in out.rglob("*"):
        if path.is_file():
            assert MARK not in path.read_text(errors="replace"), path
    victim_feedback = out / "feedback" / f"{cwgrade.safe_name('victim')}.md"
    victim_feedback = victim_feedback.read_text()
    assert "Autograded score: **18 / 18**" in victim_feedback
    assert attacked["leftovers"] == [], attacked["leftovers"]
    assert _leftovers() == []
    assert not attacked["sentinel"].exists()
    # the folder of submissions is as it was given (no notebook wrote into it)
    names = {p.name for p in attacked["folder"].iterdir()}
    assert not any(n.startswith(("results", "big")) for n in names)


@slow
def test_malformed_inputs_each_get_their_row(attacked):
    grades = attacked["grades"]
    for student, (status, total) in attacked["malformed"].items():
        assert student in grades, f"no row for {student}: {sorted(grades)}"
        g = grades[student]
        assert (g.status, g.total) == (status, total), (student, g.reason)
        if status != "graded":
            assert g.reason, student
    rows = list(
        csv.reader(io.StringIO((attacked["out"] / "gradebook.csv").read_text()))
    )
    cells = [c for row in rows for c in row]
    assert not any(c.startswith(cwgrade.DANGEROUS) for c in cells)
    assert "'=cmd|' -C calc'!A0" in cells
    files = {r[rows[0].index("file")] for r in rows[1:]}
    assert "frank/a1_modelling.ipynb" in files and "notes.txt" in files
    assert ".DS_Store" not in files


@slow
def test_regrading_keeps_the_hand_graded_column_and_earlier_results(attacked, capsys):
    out, folder = attacked["out"], attacked["folder"]
    path = out / "gradebook.csv"
    rows = list(csv.DictReader(io.StringIO(path.read_text())))
    header = list(rows[0]) + ["ta_comment"]
    for row in rows:
        row["ta_comment"] = ""
        if row["student"] == "victim":
            row["q6_explain"], row["ta_comment"] = "2", "clear, complete answer"
    buf = io.StringIO()
    writer = csv.DictWriter(buf, header, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    path.write_text(buf.getvalue())
    # one student hands in a corrected notebook; nothing else changed
    (folder / "no_code.ipynb").write_bytes((folder / "victim.ipynb").read_bytes())
    capsys.readouterr()
    grades = bookgrade.grade(
        SLUG,
        folder,
        build_root=attacked["build"],
        out=out,
        jobs=2,
        limits=ATTACK_LIMITS,
    )
    err = capsys.readouterr().err
    # the corrected notebook, and those that failed or ran out of time (never kept)
    again = 1 + sum(
        g.status in cwgrade.UNCACHED and g.student in attacked["attacks"]
        for g in attacked["grades"].values()
    )
    assert re.search(rf"grading {again} of \d+ file", err), err
    rows = {r["student"]: r for r in csv.DictReader(io.StringIO(path.read_text()))}
    assert rows["victim"]["q6_explain"] == "2"
    assert rows["victim"]["ta_comment"] == "clear, complete answer"
    assert rows["no_code"]["total"] == "18" and rows["no_code"]["status"] == "flagged"
    assert "the same code as" in rows["no_code"]["reason"]
    assert len(rows) == len(grades)
    history = sorted((out / "history").glob("gradebook-*.csv"))
    assert history and "no_code" in history[-1].read_text()
    name = cwgrade.safe_name("no_code")
    old = sorted((out / "history" / "feedback").glob(f"{name}-*.md"))
    assert old and "Not graded (empty)" in old[-1].read_text()


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _start(cmd) -> subprocess.Popen:
    """Start a grading run; return once it has graded its first notebook. It starts
    with SIGINT ignored, as a shell without job control starts a background command
    (CI's own runs were started so): Ctrl-C must stop it all the same."""
    proc = subprocess.Popen(
        cmd,
        cwd=ROOT,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        preexec_fn=_ignore_sigint,
    )
    lines = []
    while True:
        line = proc.stderr.readline()
        assert line, f"the run ended before grading a notebook: {lines}"
        lines.append(line)
        if re.match(r"\[1/\d+\]", line):
            # keep reading what it prints (a full pipe would block it), for the
            # messages of a failing test
            proc.lines = lines
            threading.Thread(
                target=lambda: lines.extend(proc.stderr), daemon=True
            ).start()
            return proc


def _wait_or_show_where(proc: subprocess.Popen, timeout: float) -> None:
    """Wait for a grading run; if it is still running after ``timeout`` seconds,
    have it print its threads' stacks (SIGUSR1), kill it and fail with them."""
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGUSR1)
        time.sleep(3)
        proc.kill()
        proc.wait(timeout=60)
        time.sleep(1)  # the reader thread takes the last lines
        pytest.fail(
            f"the run had not stopped {timeout} s after Ctrl-C; its stderr and "
            "stacks:\n" + "".join(proc.lines[-150:])
        )


@slow
def test_interrupted_run_stops_fast_and_resumes(a1, tmp_path):
    """Ctrl-C stops a run within seconds and writes what is done; a second run
    beside it refuses; a run killed outright (SIGKILL) leaves no process and no
    temporary file; the next run grades only what is left."""
    solution = _notebook(a1 / SLUG / "solution" / f"{SLUG}.ipynb")
    folder, out = tmp_path / "subs", tmp_path / "grades"
    folder.mkdir()

    def save(i: int, wait: str = "") -> None:
        nb = copy.deepcopy(solution)
        nb["cells"].append(code_cell(f"# student {i}\n{wait}"))
        (folder / f"s{i}.ipynb").write_text(json.dumps(nb))

    for i in range(5):
        save(i)
    # the second notebook waits (wall time, no CPU) until Ctrl-C, so that the run
    # is still going when the second run's refusal below is checked and Ctrl-C is
    # sent, however loaded the machine: without it five notebooks took 13 s as an
    # ordinary user, and with 4 s in each the run still ended first (28 s) while
    # the attacks' sandboxes loaded the machine (exit 0, not 130); the wait is
    # within the sandbox's wall limit, so only Ctrl-C can end it in time
    save(1, f"import time\ntime.sleep({LIMITS.wall_s - 60})\n")
    cmd = [
        sys.executable,
        "-m",
        "tools.coursework",
        "grade",
        SLUG,
        str(folder),
        "--build-root",
        str(a1),
        "--out",
        str(out),
        "--jobs",
        "1",
        "--timeout",
        str(LIMITS.cpu),
    ]
    proc = _start(cmd)
    # a second run of the same assignment refuses while the first one runs
    with pytest.raises(GradingError, match="another grading"):
        bookgrade.grade(SLUG, folder, build_root=a1, out=out, limits=LIMITS)
    start = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _wait_or_show_where(proc, 90)
    stopped = time.monotonic() - start
    assert proc.returncode == 130, "".join(proc.lines[-40:])
    assert stopped < 30, f"Ctrl-C took {stopped:.1f} s"
    rows = list(csv.DictReader((out / "gradebook.csv").open()))
    assert 1 <= len(rows) < 5 and all(r["total"] == "18" for r in rows)
    first = len(rows)
    assert _gone(proc.pid) == []
    # the second notebook, never graded, no longer waits: the next run grades it
    # first, and is killed outright once it has (the testers and their sandboxes
    # die with the run)
    save(1)
    proc = _start(cmd)
    proc.kill()
    proc.wait(timeout=60)
    assert _gone(proc.pid) == []
    assert not [p for p in out.rglob("*") if p.name.endswith(".tmp")]
    state = json.loads((out / ".state.json").read_text())
    assert first < len(state["results"]) < 5  # what it graded was saved at once
    grades = bookgrade.grade(
        SLUG, folder, build_root=a1, out=out, jobs=2, limits=LIMITS
    )
    assert sorted(g.student for g in grades) == [f"s{i}" for i in range(5)]
    assert all(g.total == 18 for g in grades)
    rows = list(csv.DictReader((out / "gradebook.csv").open()))
    assert len(rows) == 5


def _recipe_master() -> str:
    """Assignment 1's master with a question added as the guide's recipe says: a
    copy of Question 3 renamed ``q4_two_steps`` (2 points), its solution, EXPECTED
    values and tests; the later questions renamed."""
    text = master_paths()[SLUG].read_text()
    start = text.index("```{raw-cell}\n# BEGIN QUESTION\nname: q3_euler_step")
    end = text.index("# END QUESTION\n```", start) + len("# END QUESTION\n```")
    block = text[start:end]
    new = block.replace(
        "name: q3_euler_step\npoints: 3\nimplement: [euler_step]",
        "name: q4_two_steps\npoints: 2\nimplement: [two_steps]",
    ).replace(
        "## Question 3: one layer of the Transformer (implement, 3 points)",
        "## Question 4: two layers (implement, 2 points)",
    )
    sol_start = new.index("```{raw-cell}\n# BEGIN SOLUTION")
    tests_end = new.index("```{raw-cell}\n# END TESTS")
    new = (
        new[:sol_start]
        + '''```{raw-cell}
# BEGIN SOLUTION
```

```{code-cell} ipython3
def two_steps(X, h, beta):
    """Two layers: two Euler steps with retraction."""
    # BEGIN SOLUTION NO PROMPT
    return euler_step(euler_step(X, h, beta), h, beta)
    # END SOLUTION
    """ # BEGIN PROMPT
    raise NotImplementedError("Student exercise: two layers")
    """ # END PROMPT
```

```{raw-cell}
# END SOLUTION
```

```{raw-cell}
# BEGIN EXPECTED
```

```{code-cell} ipython3
from attnlib import Model as _Model, simulate as _simulate

expected["q4_two"] = _simulate(_Model(beta=2.0), sample_sphere(8, 3, rng=71),
                               t_final=0.2, dt=0.1, method="euler").final
```

```{raw-cell}
# END EXPECTED
```

```{raw-cell}
# BEGIN TESTS
```

```{code-cell} ipython3
""" # BEGIN TEST CONFIG
points: 1
""" # END TEST CONFIG
_Y = np.asarray(two_steps(sample_sphere(8, 3, rng=71), 0.1, 2.0))
assert np.allclose(_Y, expected["q4_two"]), "two layers are two Euler steps"
```

```{code-cell} ipython3
""" # BEGIN TEST CONFIG
hidden: true
points: 1
""" # END TEST CONFIG
_X = sample_sphere(9, 4, rng=72)
_ref = simulate(Model(beta=1.0), _X, t_final=0.6, dt=0.3, method="euler").final
assert np.allclose(two_steps(_X, 0.3, 1.0), _ref)
```

'''
        + new[tests_end:]
    )
    # the new question goes after Question 3; the later ones move up by one
    for old_q, new_q in (
        ("q6_explain", "q7_explain"),
        ("q5_clusters", "q6_clusters"),
        ("q4_derive", "q5_derive"),
    ):
        text = text.replace(old_q, new_q)
    return text[:end] + "\n\n" + new + text[end:]


# ---------------------------------------------------------------- the pieces (fast)


# the mistakes of Assignment 1 that a two-step question calling euler_step shares
# (step 5 of the recipe), and the renamed questions (step 1)
RECIPE_SCORES = {
    "velocity without the tangent projection": 0.0,
    "USA instead of SA normalisation (divides by n, not by Z_i)": 0.0,
    "Euler step without the retraction": 0.0,
    "Euler step that returns its input": 0.0,
}


def _guide_commands() -> list[str]:
    """The shell commands of the guide's recipe for adding a question."""
    guide = (ROOT / "book" / "coursework" / "guide.md").read_text()
    recipe = guide[guide.index("## Adding or changing a question") :]
    recipe = recipe[: recipe.index("\n## ", 1)]
    blocks = re.findall(r"```shell\n(.*?)```", recipe, re.S)
    return [
        line.strip() for block in blocks for line in block.splitlines() if line.strip()
    ]


@slow
@pytest.mark.skipif(
    not (ROOT / ".venv" / ".installed").exists(), reason="needs make env's .venv"
)
def test_the_guides_commands_work_in_a_fresh_shell(a1, tmp_path):
    """Follow "Adding or changing a question" of the instructor's guide on a copy
    of the repository: copy Question 3 from BEGIN QUESTION to END QUESTION, give it
    the next name and its points, write the solution, the EXPECTED values and tests
    whose points add up to the question's (steps 1-5); then paste the guide's
    commands into a shell that has not activated anything. The assignment builds
    and its tests pass: the conventions hold, the solution gets full marks (20 with
    the new question), the blank notebook none, every mistake loses its points."""
    guide = (ROOT / "book" / "coursework" / "guide.md").read_text()
    recipe = guide[guide.index("## Adding or changing a question") :]
    for step in (
        "# BEGIN QUESTION",
        "points",
        "implement:",
        "# BEGIN EXPECTED",
        "expected[",
        "add up",
        "make assignments",
    ):
        assert step in recipe, f"the recipe no longer says {step!r}"
    commands = _guide_commands()
    assert commands and commands[0] == "make assignments", commands
    repo = tmp_path / "repo"
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for rel in filter(None, listed.split("\0")):
        src = ROOT / rel
        if src.is_file() and not src.is_symlink():
            (repo / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, repo / rel)
    (repo / ".venv").symlink_to(ROOT / ".venv")
    # the assignments as a lecturer has them built before adding the question
    built = repo / "_build" / "assignments"
    shutil.copytree(a1, built, ignore=shutil.ignore_patterns(".partial-*"))
    (built / ".built").touch()
    time.sleep(1.5)  # the edits below are newer than the build, as for make
    (repo / "book" / "assignments" / f"{SLUG}.md").write_text(_recipe_master())
    mistakes = repo / "tests" / "assignments" / f"{SLUG}.py"
    text = mistakes.read_text()
    for old_q, new_q in (("q5_clusters", "q6_clusters"), ("q4_derive", "q5_derive")):
        text = text.replace(f'"{old_q}"', f'"{new_q}"')
    for name, score in RECIPE_SCORES.items():
        start = text.index(f'"name": "{name}"')
        at = text.index('"scores": {', start) + len('"scores": {')
        text = text[:at] + f'"q4_two_steps": {score}, ' + text[at:]
    mistakes.write_text(text)
    # a fresh shell: no environment activated, nothing of this test run
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTEST", "COURSEWORK", "VIRTUAL_ENV"))
    }
    env["PATH"] = os.pathsep.join(
        p for p in env.get("PATH", "").split(os.pathsep) if ".venv" not in p
    )
    for command in commands:
        r = subprocess.run(
            ["bash", "-c", command],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=3600,
            check=False,
        )
        assert r.returncode == 0, (command, r.stdout[-3000:], r.stderr[-3000:])
    info = json.loads((built / SLUG / "questions.json").read_text())
    points = {q["name"]: q["points"] for q in info["questions"]}
    assert list(points)[3] == "q4_two_steps" and points["q4_two_steps"] == 2, points
    assert sum(p for p in points.values()) >= 20, points
    ran = re.search(r"(\d+) passed", r.stdout)
    assert ran and "failed" not in r.stdout, r.stdout[-2000:]
    # the tests of Assignment 1 that grade: its solution, its blank notebook, its
    # mistakes (the conventions, the zip, the pages...)
    assert int(ran.group(1)) >= 12, r.stdout[-2000:]


class _Cases:
    """An assignment of one question whose test compares the answer ``v``."""

    def __init__(self, body: str):
        self.questions = [("q", 1.0)]
        self.names, self.absent = ["v"], set()
        tree = masters.parse_cell(body, "q")
        code = compile(tree, "<q public test 1>", "exec")
        self.cases = [tester.Case("q", 1, False, 1.0, body, code, frozenset({"v"}))]

    def namespace(self):
        return {"sp": sp}


class _Channel:
    def __init__(self, limits):
        self.limits = limits


def test_a_costly_answer_stops_at_the_cpu_limit_of_a_test_case():
    # 60 characters that sympy takes minutes to expand
    text = "Pow(Add(Symbol('x'), Integer(1)), Integer(100000))"
    cases = _Cases("x = sp.Symbol('x')\nassert sp.expand(v - (x + 1)) != 0\n")
    limits = sandbox.Limits(case_cpu=2)
    start = time.monotonic()
    out = tester.run_cases(
        cases,
        {False: _Channel(limits)},
        {False: {"v": wire.encode(wire.parse_srepr(text))}},
    )
    (case,) = out["cases"]["q"]
    assert not case["passed"], case
    assert "did not finish within 2 s of CPU" in case["message"], case
    assert time.monotonic() - start < 120  # CPU seconds, on a busy machine


def test_the_tester_runs_within_its_memory_and_its_sandboxes_get_theirs():
    code = (
        "import resource, subprocess, sys\n"
        "import numpy as np\n"
        "from gradebox import tester\n"
        "tester.limit_memory(1024)\n"
        "try:\n"
        "    np.ones(2 * 2**30 // 8)\n"
        "    print('allocated')\n"
        "except MemoryError:\n"
        "    print('MemoryError')\n"
        "child = subprocess.run([sys.executable, '-c', 'import resource; "
        "print(resource.getrlimit(resource.RLIMIT_AS)[0])'], capture_output=True, "
        "text=True, preexec_fn=tester._restore_memory)\n"
        "print(child.stdout.strip())\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    lines = r.stdout.split()
    assert lines[0] == "MemoryError", (r.stdout, r.stderr)
    import resource

    assert int(lines[1]) == resource.getrlimit(resource.RLIMIT_AS)[0], r.stdout


def test_scan_flags_what_a_human_should_read():
    assert (
        scan.scan_cells(
            [
                "import otter\ngrader = otter.Notebook('a.ipynb')",
                "grader.check('q1')",
                "import numpy as np\nX = np.ones(3)\nplt.savefig('figure.png')",
                # the pools of workers the chapters use
                "from concurrent.futures import ProcessPoolExecutor\n"
                "with ProcessPoolExecutor(2) as ex:\n    list(ex.map(abs, [-1]))",
                "import concurrent.futures as cf\ncf.ThreadPoolExecutor(24)",
                "import multiprocessing as mp\nwith mp.Pool(mp.cpu_count()) as p:\n"
                "    p.map(abs, [-1])",
                "from multiprocessing import Pool, get_context",
                "from multiprocessing.pool import ThreadPool",
            ]
        )
        == []
    )
    cases = {
        "import doctest": "doctest",
        "import numpy as np\nnp.allclose = lambda *a: True": "np.allclose",
        "import os\nos._exit(0)": "os._exit",
        "import subprocess": "subprocess",
        "open('/etc/passwd').read()": "/etc/passwd",
        "f.__code__": "__code__",
        "getattr(__builtins__, 'ex' + 'ec')": "getattr",
        "import sys\nsys.setprofile(None)": "sys.setprofile",
        "from pathlib import Path\nPath.home()": "Path.home",
        "import otter\notter.test_files.x = 1": "otter.test_files",
        "import pickle": "pickle",
        "open('../../gradebook.csv', 'w')": "../../gradebook.csv",
        # processes of its own beyond a pool
        "import multiprocessing as m\nm.Process(target=f).start()": "m.Process",
        "from multiprocessing import Process": "multiprocessing.Process",
        "from multiprocessing.connection import Client": "multiprocessing.connection",
        # code brought in at run time: packed data, Python files, the import system
        "import zlib": "zlib",
        "import base64 as b": "base64",
        "from lzma import decompress": "lzma",
        f"blob = '{'QUJD' * 600}'": "2400 characters of encoded data",
        f"blob = {bytes(range(256)) * 5!r}": "bytes literal of 1280 bytes",
        "open('mine.py', 'w').write(code)": "'mine.py'",
        "%%writefile mine.py\nx = 1": "'mine.py'",
        "%run helper.py": "%run",
        "import sys\nsys.path.insert(0, '.')": "sys.path",
        "import sys\nsys.meta_path.append(f)": "sys.meta_path",
        "import importlib.util as u\nu.spec_from_file_location('m', p)": "importlib",
        "import attnlib_copy": "attnlib_copy, which is not installed",
        "from mylib.attention import Model": "mylib, which is not installed",
    }
    for code, word in cases.items():
        found = scan.scan_cells([code])
        assert any(word in f for f in found), (code, found)
    # installed and standard modules, relative imports and short literals are not
    assert (
        scan.scan_cells(
            [
                "import numpy, scipy.linalg, json, attnlib\n"
                "from . import x\n"
                "s = 'QUJD' * 9"
            ]
        )
        == []
    )


def test_the_books_install_cell_is_not_a_finding(monkeypatch):
    """The install cell the book writes at the top of its notebooks uses
    importlib, subprocess and urllib: the book's rule (a hook of the grader's
    settings, common.grading_settings) lets the scan pass over that exact cell,
    and over no changed copy of it."""
    from tests.assignments.honest import install_cell

    cell = install_cell()
    assert scan.scan_cells([cell]) == []
    changed = cell.replace("\nif ", "\nimport socket\nif ", 1)
    assert changed != cell and scan.scan_cells([changed])
    configure(replace(common.grading_settings(), exempt_hooks=()))
    found = scan.scan_cells([cell])
    assert any("subprocess" in f for f in found), found


def test_a_copy_of_the_librarys_code_is_found_under_any_name():
    """A function of attnlib pasted into a notebook under another name, in a code
    cell, a file written by %%writefile or %%bash, or a string run with exec."""
    import inspect
    import textwrap

    from attnlib import _kernel

    src = textwrap.dedent(inspect.getsource(_kernel.attention_weights))
    src = src.replace("def attention_weights", "def my_weights")
    src = "\n".join(
        line for line in src.splitlines() if not line.strip().startswith("#")
    )
    for cells in (
        [src],
        # disguised: no-op statements, another docstring, renamed variables
        [disguised("attention_weights", "w")],
        [disguised("attention_weights", "w", rename=True)],
        [
            disguised("attention_weights", "w", rename=True).replace(
                '"""My own weights."""', "L = L\n    ...\n    my_L"
            )
        ],
        ["%%writefile mylib.py\n" + src],
        ["%%bash\ncat > /tmp/m.py <<'PY'\n" + src + "\nPY\n"],
        [f"code = {src!r}\nexec(code)"],
    ):
        found = scan.scan_cells(cells)
        assert "a copy of attnlib's code (attnlib._kernel.attention_weights)" in found
    # an honest softmax is not a copy
    honest = (
        "def attention_matrix(X, beta):\n"
        "    L = beta * X @ X.T\n"
        "    W = np.exp(L - L.max(axis=1, keepdims=True))\n"
        "    W = W / W.sum(axis=1, keepdims=True)\n"
        "    return W\n"
    )
    assert scan.library_copies([honest]) == []
    tested = {
        "scores": {"q1": 4.0, "q2": 3.0},
        "cases": {"q1": [{"passed": True}], "q2": [{"passed": True}]},
        "library": {},
    }

    class Assignment:
        questions = [("q1", 4.0), ("q2", 3.0)]
        implement = {"q1": {"f"}, "q2": set()}
        derive = {"q1": set(), "q2": set()}

    tester._refuse_copies(Assignment, tested, scan.scan_cells([src]))
    assert tested["scores"] == {"q1": 0.0, "q2": 3.0}
    assert "attention_weights" in tested["library"]["q1"]
    assert tested["cases"]["q1"][0]["passed"] is False


def _grade(student, total=3.0, status="graded"):
    return cwgrade.Grade(
        student, status, scores={"q1": total, "q2": 0.0}, file=f"{student}.ipynb"
    )


QUESTIONS = [
    {"name": "q1", "points": 3, "manual": False},
    {"name": "q2", "points": 2, "manual": False},
    {"name": "q3", "points": 2, "manual": True},
]


def test_feedback_reads_right_in_jupyterlab_and_shows_no_hidden_test():
    info = {"title": "A1", "questions": QUESTIONS}
    g = _grade("alice")
    g.cases = {
        "q1": [
            {
                "hidden": False,
                "number": 1,
                "points": 1,
                "passed": False,
                "message": "subtract ⟨x_i, y_i⟩ x_i",
            },
            {
                "hidden": True,
                "number": 1,
                "points": 2,
                "passed": False,
                "message": "assert secret_hidden_check(X)",
            },
        ],
        "q2": [],
    }
    g.library = {"q2": "f runs code of attnlib: write it yourself, without the library"}
    text = cwgrade.feedback(info, g)
    assert "⟨x_i, y_i⟩" in text and "secret_hidden_check" not in text
    assert "Hidden tests: 0 / 2 points (0 of 1 passed)" in text
    assert "without the library" in text
    assert "Graded by hand, separately: `q3` (2 points)" in text


def test_make_grade_and_ci_know_the_sandbox():
    makefile = (ROOT / "Makefile").read_text()
    assert "--unsafe-no-sandbox" in makefile
    ci = (ROOT / ".ci" / "run").read_text()
    assert "bubblewrap" in ci
    readme = (ROOT / "README.md").read_text()
    assert "bubblewrap" in readme


def test_a_kernel_that_dies_at_start_is_started_again(monkeypatch, tmp_path):
    # otter assign starts kernels; one that dies before it replies (a port taken by
    # a build beside it) is retried, a master's own error is reported at once
    master = tmp_path / "x.md"
    master.write_text("")
    monkeypatch.setattr(
        cwbuild, "_assignment_notebook", lambda m, src, w: src / "x.ipynb"
    )
    died = "RuntimeError: Kernel died before replying to kernel_info"
    errors = [died, "NameError: name 'solution' is not defined"]
    calls = []

    def fake_run(cmd, cwd=None, what=""):
        calls.append(cmd)
        message = errors[len(calls) - 1]
        raise GradingError(f"{what} failed (exit 1):\n{message}")

    monkeypatch.setattr(cwbuild, "run", fake_run)
    with pytest.raises(GradingError, match="NameError"):
        cwbuild.build_assignment("x", master, tmp_path / "w.whl", tmp_path / "out")
    assert len(calls) == 2

    calls.clear()
    errors[:] = [died] * cwbuild.KERNEL_START_ATTEMPTS
    with pytest.raises(GradingError, match="Kernel died"):
        cwbuild.build_assignment("x", master, tmp_path / "w.whl", tmp_path / "out")
    assert len(calls) == cwbuild.KERNEL_START_ATTEMPTS
    assert not (tmp_path / "out" / "x").exists()


def _with_first_cell(nb: dict, before: str) -> dict:
    """``nb`` with ``before`` written at the top of its first code cell (the
    imports), as a student would write it."""
    nb = copy.deepcopy(nb)
    cell = next(c for c in nb["cells"] if c["cell_type"] == "code")
    cell["source"] = before + "".join(cell["source"])
    return nb


FORGED = "\x1b[31m```\n## q1: 4 / 4\n![x](http://evil.example/x.png)"


@pytest.fixture(scope="module")
def classroom(a1, tmp_path_factory) -> dict:
    """A class folder of honest notebooks written in ordinary ways, names that
    read alike, and files that used to stop the whole run; graded once."""
    folder = tmp_path_factory.mktemp("class-submissions")
    out = tmp_path_factory.mktemp("class-grades")
    solution = _notebook(a1 / SLUG / "solution" / f"{SLUG}.ipynb")
    student = _notebook(a1 / SLUG / "student" / f"{SLUG}.ipynb")

    def save(name: str | bytes, nb: dict) -> None:
        path = os.path.join(os.fsencode(folder), os.fsencode(name) + b".ipynb")
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(nb, fh, ensure_ascii=False)

    expected = {}  # student: (status, total)
    save("inline", _with_first_cell(solution, "%matplotlib inline\n"))
    save(
        "widget",
        _with_first_cell(
            solution,
            "%matplotlib widget\n%config InlineBackend.figure_format = 'retina'\n",
        ),
    )
    for name in ("inline", "widget"):
        expected[name] = ("graded", 18.0)
    # correct notebooks written as students write them (autoreload and other
    # magics, a constant of the library, pools of processes and threads): full
    # marks, unflagged
    for variant in HONEST:
        name = f"honest_{_slug(variant['name'])}"
        save(name, honest_notebook(variant, solution))
        expected[name] = ("graded", 18.0)
    # the out-of-memory killer's SIGKILL, after a second of computing
    save(
        "killed",
        _with_first_cell(
            solution,
            "import os, signal, time\n_t = time.process_time()\n"
            "while time.process_time() - _t < 1.0:\n    pass\n"
            "os.kill(os.getpid(), signal.SIGKILL)\n",
        ),
    )
    expected["killed"] = ("failed", 0.0)
    for name in ("a b", "a_b", "a;b", "李雷", "王芳"):
        nb = copy.deepcopy(student)
        nb["cells"].append(code_cell(f"# the notebook of {name}\n"))
        save(name, nb)
        expected[name] = ("graded", 0.0)
    mallory = copy.deepcopy(student)
    mallory["cells"].append(code_cell(f"raise ValueError({FORGED!r})\n"))
    save("mallory", mallory)
    expected["mallory"] = ("graded", 0.0)
    save(b"caf\xe9", student)  # a zip made on Windows
    expected["caf\\xe9"] = ("graded", 0.0)
    save("x" * 234, student)  # 240 characters with .ipynb
    expected["x" * 234] = ("graded", 0.0)
    # two notebooks of 24 MB of non-ASCII text (in a comment: the solution's code)
    for name, letter in (("big1", "é"), ("big2", "ü")):
        nb = copy.deepcopy(solution)
        nb["cells"].append(code_cell("# " + letter * (12 * 2**20) + "\n"))
        save(name, nb)
        expected[name] = ("flagged", 18.0)
    os.mkfifo(folder / "pipe.ipynb")
    expected["pipe"] = ("invalid", 0.0)
    (folder / "zero.ipynb").symlink_to("/dev/zero")
    expected["zero"] = ("invalid", 0.0)
    (folder / "copy.ipynb").symlink_to(folder / "inline.ipynb")
    expected["copy"] = ("invalid", 0.0)
    home = tmp_path_factory.mktemp("a-home")
    (home / "private.ipynb").write_text(json.dumps(solution))
    (folder / "home").symlink_to(home)
    expected["home"] = ("invalid", 0.0)
    start = time.monotonic()
    grades = bookgrade.grade(
        SLUG, folder, build_root=a1, out=out, jobs=2, limits=LIMITS
    )
    return {
        "grades": {g.student: g for g in grades},
        "expected": expected,
        "folder": folder,
        "out": out,
        "seconds": time.monotonic() - start,
        "build": a1,
    }


@slow
def test_every_file_of_a_class_gets_its_row(classroom):
    grades, expected = classroom["grades"], classroom["expected"]
    assert sorted(grades) == sorted(expected)
    for student, (status, total) in expected.items():
        g = grades[student]
        assert (g.status, g.total) == (status, total), (student, g.reason)
    for name in ("pipe", "zero", "copy", "home"):
        assert grades[name].reason, name
    assert "link" in grades["zero"].reason and "link" in grades["home"].reason
    assert "regular file" in grades["pipe"].reason
    killed = grades["killed"].reason
    assert "memory" in killed and "CPU time" not in killed, killed
    rows = list(
        csv.DictReader(io.StringIO((classroom["out"] / "gradebook.csv").read_text()))
    )
    assert sorted(r["student"] for r in rows) == sorted(expected)
    assert not any("private" in r["file"] for r in rows)


# What ``grader.check`` shows the student of each notebook: its code cells run in
# order in the grader's harness shell (Jupyter's magics; attnlib present, ``grader`` a
# stand-in), then each question's public tests run as otter runs them in the
# notebook. It runs in a child process: an IPython shell replaces ``__main__``, the
# display hook and matplotlib's backend of the process it runs in, and the tests that
# the same pytest worker runs next (multiprocessing's spawn, dask, doctests that
# draw) failed on them.
STUDENTS_VIEW = """
import importlib.util, json, sys
from pathlib import Path
from otter.test_files.ok_test import OKTestFile
notebooks, specs = json.loads(Path(sys.argv[1]).read_text())
spec = importlib.util.spec_from_file_location("_harness_view", sys.argv[2])
harness = importlib.util.module_from_spec(spec)
spec.loader.exec_module(harness)
shell = harness._shell()
views = []
for nb in notebooks:
    shell.reset(new_session=False)
    shell.user_ns["grader"] = type("Grader", (), {"check": lambda *a, **k: None})()
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        # otter's own lines aside (grader is the stand-in above); the rest of its
        # cell (an import a student added there) runs
        lines = "".join(cell["source"]).splitlines()
        source = "\\n".join(line for line in lines if "otter" not in line)
        result = shell.run_cell(source, store_history=False, silent=True)
        if not result.success:
            why = f"{source[:200]!r}: {result.error_in_exec!r}"
            raise SystemExit(f"a cell failed: {why}")
    failed = {}
    for question, test_spec in specs.items():
        test = OKTestFile.from_spec(test_spec)
        test.run(dict(shell.user_ns))
        failed[question] = [r.message for r in test.test_case_results if not r.passed]
    views.append(failed)
print(json.dumps(views))
"""


def _students_views(notebooks: list[dict], specs: dict, tmp: Path) -> list[dict]:
    """What ``grader.check`` shows the student of each notebook (the messages of
    the public tests that fail, per question), from a child process."""
    data = tmp / "students_view.json"
    data.write_text(json.dumps([notebooks, specs]))
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            STUDENTS_VIEW,
            str(data),
            str(Path(sandbox.__file__).with_name("harness.py")),
        ],
        cwd=tmp,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@slow
def test_the_students_check_and_the_grader_agree_on_honest_notebooks(
    classroom, tmp_path
):
    """The honest variants (magics, autoreload, a library constant in an
    implement function, pools): the student's ``grader.check`` passes every
    public test, and ``make grade`` gives every question its full marks,
    unflagged. The two views of one notebook agree."""
    a1 = classroom["build"]
    student = _notebook(a1 / SLUG / "student" / f"{SLUG}.ipynb")
    solution = _notebook(a1 / SLUG / "solution" / f"{SLUG}.ipynb")
    specs = student["metadata"]["otter"]["tests"]
    info = json.loads((a1 / SLUG / "questions.json").read_text())
    full = {q["name"]: float(q["points"]) for q in info["questions"] if not q["manual"]}
    views = _students_views(
        [honest_notebook(variant, solution) for variant in HONEST], specs, tmp_path
    )
    for variant, view in zip(HONEST, views):
        assert not any(view.values()), (variant["name"], view)
        g = classroom["grades"][f"honest_{_slug(variant['name'])}"]
        assert g.scores == full and g.status == "graded", (variant["name"], g.reason)


@slow
def test_each_student_gets_their_own_feedback(classroom):
    from markdown_it import MarkdownIt

    out = classroom["out"]
    rows = list(csv.DictReader(io.StringIO((out / "gradebook.csv").read_text())))
    files = [r["feedback"] for r in rows]
    assert len({f.lower() for f in files}) == len(rows), files
    for row in rows:
        text = (out / "feedback" / row["feedback"]).read_text()
        tokens = MarkdownIt("commonmark").parse(text)
        shown = "".join(c.content for c in tokens[1].children)  # as rendered
        assert shown.endswith(f"feedback for {row['student']}"), (shown, row)
        assert (out / "details" / row["feedback"].replace(".md", ".json")).exists()
    mallory = next(r for r in rows if r["student"] == "mallory")
    text = (out / "feedback" / mallory["feedback"]).read_text()
    tokens = MarkdownIt("commonmark").parse(text)
    inline = [c for t in tokens if t.children for c in t.children]
    assert not [t for t in tokens + inline if t.type in ("image", "html_inline")]
    headings = [
        tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"
    ]
    assert not any("4 / 4" in h for h in headings), headings
    assert "\x1b" not in text and "\x1b" not in mallory["reason"]


@slow
def test_failures_are_graded_again(classroom, capsys):
    """A failed notebook is not kept: the next run grades it again (and a student
    named with REGRADE); everything else is reused."""
    capsys.readouterr()
    bookgrade.grade(
        SLUG,
        classroom["folder"],
        build_root=classroom["build"],
        out=classroom["out"],
        jobs=2,
        limits=LIMITS,
        regrade=["a b"],
    )
    err = capsys.readouterr().err
    assert re.search(r"grading 2 of \d+ file", err), err
    with pytest.raises(GradingError, match="nobody"):
        bookgrade.grade(
            SLUG,
            classroom["folder"],
            build_root=classroom["build"],
            out=classroom["out"],
            regrade=["nobody"],
            limits=LIMITS,
        )


def _in_sandbox(code: str, limits: sandbox.Limits, slot: int = 7):
    """Run Python ``code`` where a notebook runs (its sandbox and control group,
    without the harness): the finished process and the control group."""
    uid = sandbox.slot_uid(os.getpid(), slot)
    cmd, env = sandbox.command(uid, limits, unsafe=False)
    assert cmd[-2] == f"{sandbox.INSIDE}/harness.py", cmd[-4:]
    group = sandbox.Cgroup.create(f"test-{os.getpid()}-{slot}", limits)

    def enter():
        if group is not None:
            group.enter()

    proc = subprocess.run(
        [*cmd[:-2], "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        preexec_fn=enter,
        check=False,
    )
    return proc, group


NEEDS_BWRAP = pytest.mark.skipif(
    sandbox.bwrap() is None, reason="bubblewrap is not installed"
)


@NEEDS_BWRAP
@NEEDS_BWRAP
def test_a_sandbox_can_take_no_lock_lease_or_watch_another_sandbox_sees():
    """Two sandboxes graded at once see the same read-only files: a lock on one
    (flock, or fcntl's on a file opened read-only) or a watch on its opens would
    carry answers from the sandbox with attnlib to the one without it. The
    filter of system calls refuses them; querying a lock (F_GETLK) and other
    fcntl commands still work, and matplotlib still draws."""
    code = (
        "import ctypes, errno, fcntl, os, struct\n"
        "fd = os.open(os.__file__, os.O_RDONLY)\n"
        "lk = lambda kind: struct.pack('hhqqi4x', kind, 0, 5, 1, 0)\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "def sys(n, *a):\n"
        "    r = libc.syscall(n, *a)\n"
        "    return 'ok' if r >= 0 else errno.errorcode[ctypes.get_errno()]\n"
        "tries = {\n"
        "    'flock': lambda: fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB),\n"
        "    'F_SETLK': lambda: fcntl.fcntl(fd, fcntl.F_SETLK, lk(fcntl.F_RDLCK)),\n"
        "    'F_SETLKW': lambda: fcntl.fcntl(fd, fcntl.F_SETLKW, lk(fcntl.F_RDLCK)),\n"
        "    'F_OFD_SETLK': lambda: fcntl.fcntl(fd, 37, lk(fcntl.F_RDLCK)),\n"
        "    'F_SETLEASE': lambda: fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK),\n"
        "    'F_NOTIFY': lambda: fcntl.fcntl(os.open('/usr', os.O_RDONLY),\n"
        "                                    fcntl.F_NOTIFY, fcntl.DN_ACCESS),\n"
        "    'F_GETLK': lambda: fcntl.fcntl(fd, fcntl.F_GETLK, lk(fcntl.F_WRLCK)),\n"
        "    'F_GETFD': lambda: fcntl.fcntl(fd, fcntl.F_GETFD),\n"
        "}\n"
        "out = {}\n"
        "for name, f in tries.items():\n"
        "    try:\n"
        "        f()\n"
        "        out[name] = 'ok'\n"
        "    except OSError as exc:\n"
        "        out[name] = errno.errorcode[exc.errno]\n"
        "tries = {\n"
        "    'fadvise': lambda: os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED),\n"
        "    'preadv2': lambda: os.preadv(fd, [bytearray(8)], 0, os.RWF_NOWAIT),\n"
        "    'pread': lambda: os.pread(fd, 8, 0),\n"
        "}\n"
        "for name, f in tries.items():\n"
        "    try:\n"
        "        f()\n"
        "        out[name] = 'ok'\n"
        "    except OSError as exc:\n"
        "        out[name] = errno.errorcode[exc.errno]\n"
        "import platform\n"
        "nr = {'x86_64': (294, 300, 27), 'aarch64': (26, 262, 232)}\n"
        "nr = nr[platform.machine()]\n"
        "out['inotify_init1'] = sys(nr[0], 0)\n"
        "out['fanotify_init'] = sys(nr[1], 0, 0)\n"
        "vec = ctypes.create_string_buffer(1)\n"
        "# without the filter: ENOMEM (nothing is mapped at 0)\n"
        "out['mincore'] = sys(nr[2], ctypes.c_void_p(0), 4096, vec)\n"
        "import matplotlib.pyplot as plt\n"
        "plt.plot([0, 1], [1, 0])\n"
        "plt.savefig('/tmp/f.png')\n"
        "out['plot'] = 'ok' if os.path.getsize('/tmp/f.png') > 1000 else 'empty'\n"
        "print(out)\n"
    )
    proc, group = _in_sandbox(code, sandbox.Limits(cpu=30))
    if group is not None:
        group.remove()
    assert proc.returncode == 0, proc.stderr
    import ast

    seen = ast.literal_eval(proc.stdout.strip().splitlines()[-1])
    refused = ["flock", "F_SETLK", "F_SETLKW", "F_OFD_SETLK", "F_SETLEASE"]
    refused += ["F_NOTIFY", "inotify_init1", "fanotify_init"]
    refused += ["fadvise", "preadv2", "mincore"]  # the page cache of shared files
    assert {k: seen[k] for k in refused} == dict.fromkeys(refused, "EPERM"), seen
    assert seen["F_GETLK"] == seen["F_GETFD"] == seen["plot"] == "ok", seen
    assert seen["pread"] == "ok", seen


def _fake_run(monkeypatch, entries, ran=None):
    """Grade ``entries`` with testers that give every notebook 5 points, or raise
    what ``fail`` names for its file; the files they were given go to ``ran``."""
    info = {"title": "A1", "questions": QUESTIONS}

    class Fake:
        def __init__(self, fail):
            self.fail = fail

        def grade(self, task, timeout):
            if ran is not None:
                ran.append(task["id"])
            if task["id"] in self.fail:
                raise self.fail[task["id"]]
            return {"status": "graded", "scores": {"q1": 3.0, "q2": 2.0}}

        def stop(self):
            pass

    def run(fail, out):
        monkeypatch.setattr(cwgrade, "_workers", lambda m, u, n: [Fake(fail)])
        run = cwgrade.GradingRun(
            slug=SLUG,
            master=master_paths()[SLUG],
            info=info,
            out=out,
            limits=LIMITS,
            jobs=1,
            unsafe=True,
        )
        return cwgrade._grade_locked(run, entries, 0)

    return run


def test_notebooks_with_the_same_code_cells_are_run_once(tmp_path, monkeypatch, capsys):
    """A class hands in the unchanged notebook many times, and copies: a notebook
    is graded from its code cells alone, so the same cells (outputs, metadata and
    Markdown aside) are run once and their result is every such file's, each
    saved under its own name; a different cell is run on its own."""
    folder = tmp_path / "subs"
    folder.mkdir()
    code = [{"cell_type": "code", "source": "x = 1", "outputs": []}]
    notes = {"cell_type": "markdown", "source": "my answer"}
    variants = {
        "ann": {"cells": code, "metadata": {}},
        "bob": {"cells": [notes, *code], "metadata": {"kernelspec": {"name": "x"}}},
        "cat": {"cells": code, "metadata": {}, "nbformat": 4},
        "dan": {"cells": [{**code[0], "source": "x = 1 "}], "metadata": {}},
    }
    for name, nb in variants.items():
        (folder / f"{name}.ipynb").write_text(json.dumps(nb))
    entries, _ = cwgrade.collect(folder, SLUG)
    ran: list[str] = []
    grades = _fake_run(monkeypatch, entries, ran)({}, tmp_path / "out")
    assert sorted(ran) == ["ann.ipynb", "dan.ipynb"], ran
    assert "4 of 4 file(s)" in capsys.readouterr().err
    assert {g.student: g.total for g in grades} == dict.fromkeys(variants, 5.0)
    state = json.loads((tmp_path / "out" / ".state.json").read_text())
    assert sorted(state["results"]) == [f"{n}.ipynb" for n in variants]
    for name in variants:  # each under the hash of its own file
        raw = (folder / f"{name}.ipynb").read_bytes()
        assert (
            state["results"][f"{name}.ipynb"]["sha256"]
            == cwgrade.hashlib.sha256(raw).hexdigest()
        )
    # the twin of a notebook whose tester failed fails with it, and is run again
    ran.clear()
    grades = _fake_run(monkeypatch, entries, ran)(
        {"ann.ipynb": ValueError("broken")}, tmp_path / "again"
    )
    by = {g.student: g for g in grades}
    assert by["bob"].status == by["cat"].status == "failed" and by["dan"].total == 5


def test_a_dead_tester_costs_one_row_and_a_run_without_results_fails(
    tmp_path, monkeypatch
):
    """A tester that fails on one notebook gives that notebook a failed row and
    grades the rest; testers that all die leave the rest as failed rows named in
    an error (a non-zero exit), never a short gradebook."""
    folder = tmp_path / "subs"
    folder.mkdir()
    for i, name in enumerate(("ann", "bob", "cat")):
        nb = {"cells": [{"cell_type": "code", "source": f"x = {i}"}], "metadata": {}}
        (folder / f"{name}.ipynb").write_text(json.dumps(nb))
    entries, _ = cwgrade.collect(folder, SLUG)
    run = _fake_run(monkeypatch, entries)
    grades = run({"bob.ipynb": ValueError("message of 80 MB")}, tmp_path / "one")
    by = {g.student: g for g in grades}
    assert by["bob"].status == "failed" and "80 MB" in by["bob"].reason
    assert by["ann"].total == by["cat"].total == 5
    with pytest.raises(cwgrade.Incomplete, match="bob, cat") as info_:
        run({"bob.ipynb": SystemExit(1)}, tmp_path / "dead")  # the thread dies
    by = {g.student: g for g in info_.value.grades}
    assert by["ann"].total == 5 and by["bob"].status == by["cat"].status == "failed"
    rows = list(csv.DictReader((tmp_path / "dead" / "gradebook.csv").open()))
    assert sorted(r["student"] for r in rows) == ["ann", "bob", "cat"]
    from tools.coursework.__main__ import main

    monkeypatch.setattr(
        bookgrade,
        "grade",
        lambda *a, **k: run({"ann.ipynb": SystemExit(1)}, tmp_path / "x"),
    )
    assert main(["grade", SLUG, str(folder)]) == 1


@slow
def test_the_public_check_applies_the_implement_rule(a1):
    """``grader.check`` in the student's notebook fails, with the grader's message,
    when an "implement" answer calls attnlib; an answer written with numpy passes.
    (The tests run as otter runs them in the notebook.)"""
    from otter.test_files.ok_test import OKTestFile

    student = _notebook(a1 / SLUG / "student" / f"{SLUG}.ipynb")
    solution = _notebook(a1 / SLUG / "solution" / f"{SLUG}.ipynb")
    code = ["".join(c["source"]) for c in student["cells"] if c["cell_type"] == "code"]
    env: dict = {}
    first_answer = next(i for i, s in enumerate(code) if "def attention_matrix" in s)
    # what the notebook runs before its first answer (after otter's own cell): the
    # imports, the public checks' short report and the expected values
    for src in code[1:first_answer]:
        exec(src, env)
    answer = next(
        "".join(c["source"])
        for c in solution["cells"]
        if c["cell_type"] == "code" and "def attention_matrix" in "".join(c["source"])
    )
    exec(answer, env)
    spec = student["metadata"]["otter"]["tests"]["q1_attention"]
    honest = OKTestFile.from_spec(spec)
    honest.run(dict(env))
    assert [r.passed for r in honest.test_case_results] == [True] * 3

    def attention_matrix(X, beta, Q=None, K=None, normalization="sa"):
        return env["Model"](beta=beta, Q=Q, K=K, normalization=normalization).attention(
            X
        )

    cheat = OKTestFile.from_spec(spec)
    cheat.run({**env, "attention_matrix": attention_matrix})
    assert not any(r.passed for r in cheat.test_case_results)
    message = cheat.test_case_results[0].message
    assert "attention_matrix calls attnlib" in message, message
    assert "without the library" in message


@slow
def test_grader_check_shows_a_failing_test_in_a_few_lines(a1, tmp_path, monkeypatch):
    """``grader.check`` in the student's notebook, as otter runs it there: each
    failing test shows its hint, the line that failed and the values it compared
    in a few lines (doctest's transcript took about 70 lines a test)."""
    import otter.test_files.ok_test as ok_test

    monkeypatch.setattr(ok_test, "run_doctest", ok_test.run_doctest)
    student = a1 / SLUG / "student" / f"{SLUG}.ipynb"
    shutil.copy2(student, tmp_path / student.name)
    monkeypatch.chdir(tmp_path)
    code = ["".join(c["source"]) for c in _notebook(student)["cells"]]
    code = [
        c
        for c, cell in zip(code, _notebook(student)["cells"])
        if cell["cell_type"] == "code"
    ]
    assert common.CHECK_CELL in code, "the student notebook lacks the check cell"
    env: dict = {}
    for src in code[:4]:  # otter, the check cell, the imports, the expected values
        exec(src, env)
    exec(
        "def attention_matrix(X, beta, Q=None, K=None, normalization='sa'):\n"
        "    A = np.exp(beta * X @ X.T)\n"
        "    return A / A.sum()\n"
        "result = grader.check('q1_attention')\n",
        env,
    )
    failed = [r for r in env["result"].test_case_results if not r.passed]
    assert len(failed) == 3
    for r in failed:
        lines = r.message.splitlines()
        assert 3 <= len(lines) <= 10, r.message
        assert lines[0] == "❌ Test case failed" and lines[2].startswith(
            "failed: assert"
        )
    assert "every row of A must sum to 1" in failed[0].message
    assert "_A = array(" in failed[1].message  # the value the failing line compared
    assert "Trying:" not in repr(env["result"])
    # the grader's scan passes over the cell as built, and only over it
    assert scan.scan_cells([common.CHECK_CELL]) == []
    assert scan.scan_cells([common.CHECK_CELL + "\nx = 1\n"]) != []


def _running(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie left unreaped."""
    try:
        status = psutil.Process(pid).status()
    except psutil.NoSuchProcess:
        return False
    return status not in (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD)


def test_a_sandbox_dies_with_a_tester_killed_before_bubblewrap_runs():
    """A tester killed just after it started a sandbox, before bubblewrap ran far
    enough to ask for the parent-death signal (bubblewrap's issue 633), leaves
    nothing running, with or without control groups: the sandbox's first process
    asks before its exec. A ``sleep`` in a session of its own stands for that
    bubblewrap here; nothing but the kernel's signal would end it."""
    script = f"""
import os, sys, time
sys.path.insert(0, {str(ROOT)!r})
from gradebox import sandbox, tester
sandbox.command = lambda *a, **k: (["sleep", "600"], dict(os.environ))
sandbox.Cgroup.create = staticmethod(lambda *a, **k: None)
proc, _, _ = tester._start(sandbox.Limits(), 0, True, False)
print(proc.pid, flush=True)
time.sleep(600)
"""
    fake = subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    child = None
    try:
        child = int(fake.stdout.readline())
        assert _running(child)
        fake.kill()
        fake.wait(timeout=60)
        deadline = time.monotonic() + 60
        while _running(child) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _running(child), "the sandbox outlived its tester"
    finally:
        if fake.poll() is None:
            fake.kill()
            fake.wait(timeout=60)
        if child is not None and _running(child):
            os.kill(child, signal.SIGKILL)


# -- a gradebook saved back by a spreadsheet that changed the students' ids --------


def _graded(student: str, total: float = 3.0) -> cwgrade.Grade:
    g = _grade(student, total)
    g.digest = cwgrade.hashlib.sha256(f"notebook of {student}".encode()).hexdigest()
    return g


def test_two_rows_of_one_submission_are_refused_and_unattached_marks_named(
    tmp_path, monkeypatch, capfd
):
    """A row that a spreadsheet detached, beside the row an earlier run made for
    the same file: refused, the file untouched. A hand mark that matches no
    submission of a run that makes new rows: kept where it was, named, and the
    command ends with an error (a non-zero exit)."""
    path, history = tmp_path / "gradebook.csv", tmp_path / "history"
    twice = (
        "student,q1,q2,q3,total,status,reason,file,feedback\n"
        "42,3,0,2,3,graded,,0042.ipynb,0042.md\n"
        "0042,3,0,,3,graded,,0042.ipynb,0042.md\n"
    )
    path.write_text(twice, encoding="utf-8")
    with pytest.raises(GradingError, match=r"'42' \(line 2\) and '0042'"):
        cwgrade.write_gradebook(path, [_graded("0042")], QUESTIONS, history)
    assert path.read_text(encoding="utf-8") == twice
    # a mark on a row whose file and id match no submission
    lone = (
        "student,q1,q2,q3,total,status,reason,file,feedback\n"
        "??,3,0,2,3,graded,,??.ipynb,x.md\n"
    )
    path.write_text(lone, encoding="utf-8")
    detached = cwgrade.write_gradebook(path, [_graded("张伟")], QUESTIONS, history)
    assert len(detached) == 1 and "'??' (line 2" in detached[0], detached
    assert "WARNING" in capfd.readouterr().err
    rows = {r["student"]: r for r in cwgrade.read_gradebook(path).rows}
    assert rows["??"]["q3"] == "2" and rows["张伟"]["q3"] == ""  # kept, not lost
    # the same through a run of the grader: an error that names the row
    folder = tmp_path / "subs"
    folder.mkdir()
    nb = {"cells": [{"cell_type": "code", "source": "x = 1"}], "metadata": {}}
    (folder / "李娜.ipynb").write_text(json.dumps(nb))
    out = tmp_path / "out"
    out.mkdir()
    (out / "gradebook.csv").write_text(lone, encoding="utf-8")
    entries, _ = cwgrade.collect(folder, SLUG)
    run = _fake_run(monkeypatch, entries)
    with pytest.raises(cwgrade.Unattached, match=r"'\?\?' \(line 2") as info_:
        run({}, out)
    assert [g.student for g in info_.value.grades] == ["李娜"]
    from tools.coursework.__main__ import main

    monkeypatch.setattr(bookgrade, "grade", lambda *a, **k: run({}, out))
    # the next run made no new row: the row is still named only at the run that
    # made the new rows, and the file is not touched again
    assert main(["grade", SLUG, str(folder)]) == 0
    (out / "gradebook.csv").write_text(lone, encoding="utf-8")
    assert main(["grade", SLUG, str(folder)]) == 1


def test_a_timeout_is_kept_like_a_score_until_forced(tmp_path, monkeypatch, capfd):
    """A notebook that only sleeps holds a worker for its whole time limit: its
    timeout is saved like any result, so the next run of the unchanged notebook
    costs nothing (under a second); FORCE and REGRADE grade it again, and the
    feedback says it timed out."""
    folder = tmp_path / "subs"
    folder.mkdir()
    for name, code in (("sleepy", "import time\ntime.sleep(10**6)"), ("ok", "x=1")):
        nb = {"cells": [{"cell_type": "code", "source": code}], "metadata": {}}
        (folder / f"{name}.ipynb").write_text(json.dumps(nb))
    entries, _ = cwgrade.collect(folder, SLUG)
    ran: list[str] = []
    run = _fake_run(monkeypatch, entries, ran)

    real = cwgrade._grade_from

    def timed_out(entry, result, questions, sha=""):  # the tester's timeout result
        if entry.student == "sleepy" and result.get("status") == "graded":
            result = {"status": "timeout", "reason": "ran out of its time: 400 s"}
        return real(entry, result, questions, sha)

    monkeypatch.setattr(cwgrade, "_grade_from", timed_out)
    out = tmp_path / "out"
    run({}, out)
    assert sorted(ran) == ["ok.ipynb", "sleepy.ipynb"]
    capfd.readouterr()
    ran.clear()
    start = time.monotonic()
    grades = {g.student: g for g in run({}, out)}
    assert time.monotonic() - start < 1.0
    assert ran == [] and grades["sleepy"].status == "timeout"
    err = capfd.readouterr().err
    assert "timed out then" in err and "sleepy" in err and "FORCE=1" in err, err
    feedback = next((out / "feedback").glob("sleepy-*.md")).read_text()
    assert "**timeout**" in feedback and "ran out of its time" in feedback
    for again in ({"force": True}, {"regrade": ("sleepy",)}):
        ran.clear()
        monkeypatch.setattr(
            cwgrade,
            "GradingRun",
            lambda *a, _k=again, _real=cwgrade.GradingRun, **k: _real(*a, **k, **_k),
        )
        run({}, out)
        assert "sleepy.ipynb" in ran, (again, ran)
        monkeypatch.undo()
        monkeypatch.setattr(cwgrade, "_grade_from", timed_out)


def test_the_memory_limits_of_notebooks_graded_at_once_fit_in_the_machine(
    tmp_path, monkeypatch, capfd
):
    """Each notebook graded at once may hold two sandboxes and a tester: JOBS=2
    with sandboxes of 4 GB (24 GB in all) on a machine of 23 GB grades one at a
    time, and says so; a machine too small for one gets lower limits; a machine
    large enough changes nothing."""
    limits = sandbox.Limits()
    assert sandbox.job_memory_mb(limits) == 2 * 4096 + 4096
    assert sandbox.fit_memory(2, limits, 64000) == (2, limits, "")
    assert sandbox.fit_memory(2, limits, None) == (2, limits, "")
    jobs, same, note = sandbox.fit_memory(2, limits, 23 * 1024)
    assert jobs == 1 and same == limits
    assert "24576 MB" in note and "23552 MB" in note and "1 at a time" in note
    jobs, smaller, note = sandbox.fit_memory(4, limits, 6144)
    assert jobs == 1 and sandbox.job_memory_mb(smaller) <= 6144
    assert smaller.memory_mb <= smaller.sandbox_memory_mb == 2048
    assert f"sandbox limited to {smaller.sandbox_memory_mb} MB" in note
    for jobs in range(1, 9):
        for machine in (2048, 8192, 16000, 23 * 1024, 64000):
            n, lim, _ = sandbox.fit_memory(jobs, limits, machine)
            assert 1 <= n <= jobs and n * sandbox.job_memory_mb(lim) <= machine
    # the run uses what fits, and prints the note
    assert sandbox.machine_memory_mb() > 0
    monkeypatch.setattr(sandbox, "machine_memory_mb", lambda: 23 * 1024)
    seen = {}

    def locked(run, entries, hidden):
        seen.update(jobs=run.jobs, limits=run.limits)
        return []

    monkeypatch.setattr(cwgrade, "_grade_locked", locked)
    folder = tmp_path / "subs"
    folder.mkdir()
    (folder / "ann.ipynb").write_text("{}")
    built = tmp_path / "build"
    (built / SLUG).mkdir(parents=True)
    (built / SLUG / "questions.json").write_text(json.dumps({"questions": QUESTIONS}))
    bookgrade.grade(
        SLUG, folder, build_root=built, out=tmp_path / "out", jobs=2, unsafe=True
    )
    assert seen["jobs"] == 1, seen
    assert "grading 1 at a time" in capfd.readouterr().err
