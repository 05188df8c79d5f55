"""The pieces of grading, each checked on its own: the plain-data messages between
the sandbox and the tester, the formula parser, the static scan, the lenient
notebook reader, the submissions folder (links, pipes, devices), the gradebook's
merge (hand marks that stay with their student when a spreadsheet changes ids, a
merge that would lose marks refused, a full disk), its spreadsheet safety, the
lock of a run, the feedback and the console, the sandbox (refused without
bubblewrap, its filter of system calls failing closed) and its limits (memory,
processes, CPU time for all its processes together, inodes, user namespaces) and
control groups. None of them needs an assignment of the book: they run with the
grader's default settings (no library under test). The book's tests grade its
assignments, with their attacks, through this package (``tests/test_grading.py``
and ``tests/test_coursework.py`` of the book's repository).
"""

from __future__ import annotations

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
import unicodedata
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

from gradebox import grade as cwgrade
from gradebox import sandbox, tester, wire
from gradebox.common import GradingError, Settings, configure


@pytest.fixture(autouse=True, scope="module")
def default_settings(tmp_path_factory):
    """The grader's default settings, with its caches in a folder of this run."""
    previous = configure(Settings(cache=str(tmp_path_factory.mktemp("cache"))))
    yield
    configure(previous)


def test_plain_data_round_trip():
    x, t = sp.symbols("x t", positive=True)
    values = [
        1,
        2.5,
        float("nan"),
        True,
        None,
        "text",
        (1, 2.0),
        {1.0: "a", "sa": [3]},
        1 + 2j,
        np.arange(6.0).reshape(2, 3),
        np.int64(3),
        np.array(["dirac"]),
        sp.exp(x) * sp.besseli(2, t) / 2,
        sp.Matrix([[x, 1]]),
        sp.Symbol(r"\beta"),
        sp.Piecewise((x, t > 1), (0, True)),
        sp.Function("g")(t),
    ]
    for v in values:
        d = wire.decode(json.loads(json.dumps(wire.encode(v))))
        if isinstance(v, np.ndarray):
            assert d.dtype == v.dtype and np.array_equal(d, v)
        elif isinstance(v, float) and v != v:
            assert d != d
        else:
            assert d == v and type(d) is type(v), (v, d)
    assert isinstance(wire.decode(wire.encode(lambda: 1)), wire.Opaque)
    objects = wire.decode(wire.encode(np.array([object()])))
    assert objects.dtype == object and isinstance(objects[0], wire.Opaque)


def test_the_wire_carries_what_otter_compares():
    """Values a test may compare with ``==`` as otter does in the notebook: dict
    subclasses, sets, object arrays (``np.array(sympy_matrix)``), pandas."""
    import collections

    import pandas as pd

    x = sp.Symbol("x")
    counts = collections.Counter("abracadabra")
    ordered = collections.OrderedDict([("b", 1), ("a", 2)])
    table = collections.defaultdict(list, {"a": [1]})
    weird = collections.defaultdict(lambda: 0, {"a": 1})
    frame = pd.DataFrame(
        {"n": [1, 2, 3], "beta": [0.5, 1.0, 2.0], "name": ["a", "b", "c"]},
        index=pd.Index([10, 20, 30], name="run"),
    )
    series = pd.Series([1.5, 2.5], index=["u", "v"], name="rate")

    def trip(v):
        return wire.decode(json.loads(json.dumps(wire.encode(v))))

    for v in (counts, ordered, table, {1, 2, "a"}, frozenset({3})):
        d = trip(v)
        assert d == v and type(d) is type(v), (v, d)
    assert trip(counts)["zzz"] == 0  # still a Counter
    assert trip(table)["new"] == [] and trip(weird) == {"a": 1}
    assert list(trip(ordered)) == ["b", "a"]
    sym = np.array(sp.Matrix([[x, 1], [2, x**2]]))
    d = trip(sym)
    assert d.dtype == object and d.shape == (2, 2) and (d == sym).all()
    d = trip(frame)
    pd.testing.assert_frame_equal(d, frame)
    assert trip(frame).equals(frame)
    pd.testing.assert_series_equal(trip(series), series)
    pd.testing.assert_frame_equal(
        trip(pd.DataFrame({"a": []})), pd.DataFrame({"a": []})
    )
    dates = pd.Series(pd.to_datetime(["2024-01-01", "2024-02-01"]))
    pd.testing.assert_series_equal(trip(dates), dates)
    # decoding builds nothing but the listed classes and dtypes
    with pytest.raises(wire.WireError):
        wire.decode({"__t": "dict", "cls": "os.system", "v": []})
    with pytest.raises(wire.WireError):
        wire.decode({"__t": "dict", "cls": "defaultdict", "factory": "eval", "v": []})
    bad = wire.encode(series)
    bad["data"]["dtype"] = "object'); import os; ('"
    with pytest.raises(wire.WireError):
        wire.decode(bad)


@pytest.mark.parametrize(
    "text",
    [
        'Matrix([\'__import__("os").system("true")\'])',
        "Symbol('x').__class__",
        "__import__('os')",
        "Poly('x**2')",
        "Add(Symbol('x'), 'y')",
        "Symbol('x); import os')",
        "Function('exit')(Integer(0))",
        "Function('os.system')(Integer(1))",
        "Integer(1) + Integer(2)",
        "Symbol('x', positive='yes')",
    ],
)
def test_sympy_reader_refuses_code(text):
    with pytest.raises(wire.WireError):
        wire.parse_srepr(text)


def test_sympy_answers_that_would_not_end_are_refused_before_evaluation():
    # a power of a hundred million digits, or a factorial of a hundred million, is
    # refused before sympy builds (and so evaluates) it
    start = time.process_time()
    for text in [
        "Pow(Integer(10), Integer(100000000))",
        "Pow(Integer(10), Integer(-100000000))",
        "Mul(Symbol('x'), Pow(Integer(7), Integer(10000000)))",
        "factorial(Integer(100000000))",
        "Add(Symbol('x'), fibonacci(Integer(10000000000)))",
    ]:
        with pytest.raises(wire.WireError, match="digits|integer argument"):
            wire.parse_srepr(text)
    assert time.process_time() - start < 5
    # powers and functions of moderate size and symbolic powers are answers
    assert wire.parse_srepr("Pow(Integer(10), Integer(50))") == 10**50
    assert wire.parse_srepr("factorial(Integer(20))") == sp.factorial(20)
    x, y = sp.symbols("x y", real=True)
    power = wire.parse_srepr(
        "Pow(Add(Symbol('x', real=True), Integer(1)), Integer(1000000))"
    )
    assert power == (x + 1) ** (10**6)
    answer = 2 * x * y - x**2 * sp.sin(y) / 3
    assert wire.parse_srepr(sp.srepr(answer)) == answer


# the drops are what this test makes happen: pytest reports each as a warning
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_case_past_its_cpu_limit_fails_even_when_its_finalisers_swallow_the_stop():
    """Python drops an exception raised in a ``__del__``: a case spending nearly all
    its time in finalisers (as a large sympy computation can, when the garbage
    collector runs) must still end as a timeout, never as passed."""

    class Busy:
        def __del__(self):
            s = 0
            for i in range(3000):
                s += i

    start = time.process_time()
    with pytest.raises(tester.CaseTimeout):
        with tester.case_clock(0.3):
            end = time.process_time() + 3
            while time.process_time() < end:
                Busy()
    assert time.process_time() - start < 60


def test_formula_parser_refuses_code(tmp_path):
    tester.install_safe_parser()
    target = tmp_path / "ran"
    assert sp.sympify("2*exp(b*g)/n + sqrt(x)") == 2 * sp.exp(
        sp.Symbol("b") * sp.Symbol("g")
    ) / sp.Symbol("n") + sp.sqrt(sp.Symbol("x"))
    for text in [
        f"__import__('os').system('touch {target}')",
        "x.__class__",
        "exec('1')",
        "lambdify(x, x)",
        "[x for x in y]",
    ]:
        with pytest.raises((ValueError, sp.SympifyError)):
            sp.sympify(text)
    assert not target.exists()


def test_reader_accepts_what_jupyter_accepts(tmp_path):
    nb = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {"kernelspec": {"name": "my-env", "language": "python"}},
        "cells": [
            {"cell_type": "markdown", "source": "# T", "extra": 1},
            {"cell_type": "code", "source": ["x = 1\n", "y = 2"], "unknown": {}},
        ],
    }
    path = tmp_path / "a.ipynb"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(nb).encode())
    assert cwgrade.read_notebook(path) == (["x = 1\ny = 2"], "", "")
    v3 = {
        "nbformat": 3,
        "worksheets": [{"cells": [{"cell_type": "code", "input": "z = 3"}]}],
    }
    path.write_text(json.dumps(v3))
    assert cwgrade.read_notebook(path)[0] == ["z = 3"]
    for raw, status in [
        (b"", "invalid"),
        (b'{"cells": [', "invalid"),
        (b'{"hello": 1}', "invalid"),
        (b"\xff\xfe\x00", "invalid"),
        (json.dumps({"cells": []}).encode(), "empty"),
    ]:
        path.write_bytes(raw)
        cells, got, reason = cwgrade.read_notebook(path)
        assert cells is None and got == status and reason, raw


def test_collect_gives_every_file_a_row(tmp_path):
    (tmp_path / "a.ipynb").write_text("{}")
    (tmp_path / "B.IPYNB").write_text("{}")
    (tmp_path / "c.txt").write_text("x")
    (tmp_path / "d.ipynb").mkdir()
    (tmp_path / "e").mkdir()
    (tmp_path / "e" / "work.ipynb").write_text("{}")
    (tmp_path / "f").mkdir()
    (tmp_path / "f" / "a1_modelling.ipynb").write_text("{}")
    (tmp_path / "f" / "scratch.ipynb").write_text("{}")
    (tmp_path / "g").mkdir()
    (tmp_path / "h.ipynb").symlink_to(tmp_path / "missing")
    (tmp_path / ".ipynb_checkpoints").mkdir()
    entries, hidden = cwgrade.collect(tmp_path, "a1_modelling")
    rows = {e.student: (e.problem, e.rel) for e in entries}
    assert rows == {
        "a": ("", "a.ipynb"),
        "B": ("", "B.IPYNB"),
        "c": ("invalid", "c.txt"),
        "d": ("invalid", "d.ipynb"),
        "e": ("", "e/work.ipynb"),
        "f": ("", "f/a1_modelling.ipynb"),
        "f/scratch.ipynb": ("invalid", "f/scratch.ipynb"),
        "g": ("invalid", "g"),
        "h": ("invalid", "h.ipynb"),
    }
    assert hidden == 1


def _grade(student, total=3.0, status="graded"):
    return cwgrade.Grade(
        student, status, scores={"q1": total, "q2": 0.0}, file=f"{student}.ipynb"
    )


QUESTIONS = [
    {"name": "q1", "points": 3, "manual": False},
    {"name": "q2", "points": 2, "manual": False},
    {"name": "q3", "points": 2, "manual": True},
]


def test_the_console_summary_keeps_its_columns_with_cjk_names(capsys, tmp_path):
    from wcwidth import wcswidth

    names = ["李雷", "王芳", "alice", "Zoë", "李" * 20, "a" * 40]
    grades = [_grade(n, total=float(i % 3)) for i, n in enumerate(names)]
    cwgrade._summary(grades, 5.0, tmp_path, QUESTIONS, False)
    rows = capsys.readouterr().out.splitlines()[1 : 1 + len(names)]
    # the score ends, and the status starts, in the same column on every row
    columns = {wcswidth(row[: row.index("  graded")]) for row in rows}
    assert columns == {28 + 1 + 9}, rows
    progress = cwgrade.Progress(len(names), 5.0)
    for g in grades:
        progress.update(g)
    lines = capsys.readouterr().err.splitlines()
    assert len({wcswidth(line[: line.index(" graded")]) for line in lines}) == 1


def test_gradebook_merges_and_neutralises_formulas(tmp_path):
    path, history = tmp_path / "gradebook.csv", tmp_path / "history"
    cwgrade.write_gradebook(
        path, [_grade("alice"), _grade("=cmd|' /C calc'!A0")], QUESTIONS, history
    )
    rows = list(csv.reader(path.open()))
    assert rows[0] == [
        "student",
        "q1",
        "q2",
        "q3",
        "total",
        "status",
        "reason",
        "file",
        "digest",
        "feedback",
    ]
    assert all(not c.startswith(cwgrade.DANGEROUS) for r in rows for c in r)
    # a teaching assistant fills in the written question and adds a column
    text = path.read_text().splitlines()
    text[0] += ",comment"
    text = [text[0]] + [
        line.replace(",3,0,,3,", ",3,0,2,3,") + (",+good" if "alice" in line else ",")
        for line in text[1:]
    ]
    path.write_text("\n".join(text) + "\n")
    cwgrade.write_gradebook(
        path, [_grade("alice", 1.0), _grade("bob")], QUESTIONS, history
    )
    rows = {r["student"]: r for r in csv.DictReader(path.open())}
    assert rows["alice"]["q1"] == "1" and rows["alice"]["q3"] == "2"
    assert rows["alice"]["comment"] == "'+good"
    assert rows["'=cmd|' /C calc'!A0"]["q1"] == "3"  # kept, not in this run
    assert rows["bob"]["q3"] == ""
    assert len(list(history.glob("gradebook-*.csv"))) == 1


@pytest.mark.skipif(sandbox.bwrap() is None, reason="bubblewrap is not installed")
def test_an_environment_under_tmp_stays_visible_in_the_sandbox(monkeypatch):
    """The sandbox's own /tmp must not hide a checkout or a venv that lives under
    /tmp (a CI runner's checkout often does): it is mounted before the binds."""
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(dir="/tmp", prefix="grader-env-"))
    try:
        folder.chmod(0o755)
        (folder / "marker.txt").write_text("seen")
        (folder / "marker.txt").chmod(0o644)
        binds = sandbox._binds
        monkeypatch.setattr(
            sandbox, "_binds", lambda: binds() + ["--ro-bind", str(folder), str(folder)]
        )
        args, env = sandbox.command(
            sandbox.UID_BASE, sandbox.Limits(cpu=5), unsafe=False
        )
        start = len(args) - 1 - args[::-1].index(sys.executable)  # the harness
        out = subprocess.run(
            [*args[:start], "/bin/cat", str(folder / "marker.txt")],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert out.stdout == "seen", out.stderr
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _spreadsheet_save(path: Path, encoding: str, delimiter: str) -> None:
    """Save the gradebook back as a spreadsheet does: its encoding (``utf-8-sig``
    writes a byte-order mark), its separator, CRLF line ends; a teaching assistant
    has filled in the written question and added a column, and one name has an
    accent."""
    rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8-sig"))))
    header = list(rows[0]) + ["ta_comment"]
    for row in rows:
        row["ta_comment"] = ""
        if row["student"] == "alice":
            row["q3"], row["ta_comment"] = "2", "clear; complete"
        if row["student"] == "josé":
            row["q3"], row["ta_comment"] = "1,5", "à revoir"
    with open(path, "w", encoding=encoding, newline="") as fh:
        writer = csv.DictWriter(fh, header, delimiter=delimiter, lineterminator="\r\n")
        writer.writeheader()
        writer.writerows(rows)


@pytest.mark.parametrize(
    "encoding, delimiter",
    [("utf-8-sig", ","), ("utf-8-sig", ";"), ("cp1252", ";"), ("utf-8", "\t")],
    ids=["bom", "bom-semicolon", "cp1252-semicolon", "tab"],
)
def test_gradebook_survives_a_spreadsheet_round_trip(tmp_path, encoding, delimiter):
    path, history = tmp_path / "gradebook.csv", tmp_path / "history"
    grades = [_grade("alice"), _grade("josé"), _grade("bob")]
    cwgrade.write_gradebook(path, grades, QUESTIONS, history)
    _spreadsheet_save(path, encoding, delimiter)
    cwgrade.write_gradebook(path, [_grade("alice", 1.0)], QUESTIONS, history)
    raw = path.read_bytes()
    text = raw.decode("utf-8-sig")  # UTF-8 from now on
    header = text.splitlines()[0]
    assert header.startswith("student" + delimiter), header  # as the sheet had it
    rows = {
        r["student"]: r for r in csv.DictReader(io.StringIO(text), delimiter=delimiter)
    }
    assert sorted(rows) == ["alice", "bob", "josé"]
    assert rows["alice"]["q1"] == "1" and rows["alice"]["q3"] == "2"
    assert rows["alice"]["ta_comment"] == "clear; complete"
    assert rows["josé"]["q3"] == "1,5" and rows["josé"]["ta_comment"] == "à revoir"
    assert raw.startswith(b"\xef\xbb\xbf") == (encoding != "utf-8")


def test_feedback_files_are_one_per_student():
    names = ["a b", "a_b", "a;b", "李雷", "王芳", "Alice", "alice", "x" * 240]
    files = cwgrade.file_names(names)
    assert len({f.lower() for f in files.values()}) == len(names), files
    for student, name in files.items():
        assert re.fullmatch(r"[A-Za-z0-9_-]{1,80}", name), name
        assert name == cwgrade.safe_name(student)  # stable between runs
    assert files["a b"].startswith("a_b-") and files["李雷"].startswith("student-")


def test_what_a_student_controls_is_shown_as_text(capsys, tmp_path):
    """A name, an error message or a test's message cannot forge a line, a
    heading, an image or a terminal escape in the feedback, the CSV or the
    console."""
    forged = "\x1b[2J\x1b[32mok\x1b[0m\n## q1: 4 / 4\n![x](http://evil.example/x.png)"
    fence = "```\n## q1: 4 / 4\n<img src=http://evil.example/y.png>\n```"
    g = cwgrade.Grade(
        f"mallory{forged}",
        "failed",
        f"cell 1: ValueError: {forged}",
        {"q1": 0.0, "q2": 0.0},
        {
            "q1": [
                {
                    "hidden": False,
                    "number": 1,
                    "points": 3,
                    "passed": False,
                    "message": fence,
                }
            ]
        },
        file="mallory.ipynb",
    )
    g = cwgrade._grade_from(
        cwgrade.Entry(g.student, tmp_path, "mallory.ipynb"),
        {"status": "failed", "reason": g.reason, "cases": g.cases},
        QUESTIONS,
    )
    info = {"title": "A1", "questions": QUESTIONS}
    text = cwgrade.feedback(info, g)
    assert "\x1b" not in text
    # as a Markdown renderer (JupyterLab's is CommonMark) reads it
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").parse(text)
    inline = [c for t in tokens if t.children for c in t.children]
    headings = [
        tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"
    ]
    assert headings[1:] == ["q1: 0 / 3", "q2: 0 / 2"], headings
    assert (
        headings[0].startswith("A1, feedback for mallory") and "\n" not in headings[0]
    )
    assert not [
        t
        for t in tokens + inline
        if t.type in ("image", "html_block", "html_inline", "link_open")
    ]
    fences = [t.content for t in tokens if t.type == "fence"]
    assert fences == [fence + "\n"], fences  # the message, shown whole as text
    path = tmp_path / "gradebook.csv"
    cwgrade.write_gradebook(path, [g], QUESTIONS, tmp_path / "history")
    raw = path.read_text()
    assert "\x1b" not in raw and len(raw.strip().splitlines()) == 2
    cwgrade._summary([g], 5, tmp_path, QUESTIONS, False)
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\n## q1" not in out
    assert len([line for line in out.splitlines() if "mallory" in line]) == 1


def test_collect_refuses_links_pipes_and_devices(tmp_path):
    folder = tmp_path / "subs"
    folder.mkdir()
    (folder / "ok.ipynb").write_text("{}")
    os.mkfifo(folder / "pipe.ipynb")
    (folder / "zero.ipynb").symlink_to("/dev/zero")
    (folder / "copy.ipynb").symlink_to(folder / "ok.ipynb")
    home = tmp_path / "home"
    home.mkdir()
    (home / "secret.ipynb").write_text("{}")
    (folder / "linked").symlink_to(home)
    (folder / "dana").mkdir()
    (folder / "dana" / "a1.ipynb").symlink_to(home / "secret.ipynb")
    (folder / os.fsdecode(b"caf\xe9.ipynb")).write_text("{}")
    entries, _ = cwgrade.collect(folder, "a1")
    by = {e.student: e for e in entries}
    assert sorted(by) == ["caf\\xe9", "copy", "dana", "linked", "ok", "pipe", "zero"]
    assert not by["ok"].problem and not by["caf\\xe9"].problem
    for name in ("copy", "zero", "linked", "dana"):
        assert by[name].problem == "invalid" and "link" in by[name].reason, name
    assert "regular file" in by["pipe"].reason
    assert not any("secret" in e.rel for e in entries if not e.problem)
    # following links is a choice; a link to a device is still refused
    entries, _ = cwgrade.collect(folder, "a1", follow_links=True)
    by = {e.student: e for e in entries}
    assert not by["copy"].problem and not by["linked"].problem
    assert not by["dana"].problem
    raw, why = cwgrade.read_limited(folder / "zero.ipynb", follow=True)
    assert raw is None and "regular file" in why
    # the reader neither blocks on a pipe nor reads a device without end
    start = time.monotonic()
    raw, why = cwgrade.read_limited(folder / "pipe.ipynb")
    assert raw is None and time.monotonic() - start < 30


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


def test_a_notebook_cannot_make_a_user_namespace_of_its_own():
    """In a user namespace of its own a notebook would be root and could mount a
    tmpfs of half the machine's memory; bubblewrap's --disable-userns forbids
    making one, for a root lecturer and for another user."""
    if not sandbox.disable_userns():
        pytest.skip("this bubblewrap or kernel cannot disable user namespaces")
    code = (
        "import subprocess\n"
        "r = subprocess.run(['unshare', '-Urm', 'sh', '-c', "
        "'mkdir -p /tmp/m && mount -t tmpfs -o size=8g none /tmp/m && echo MOUNTED'],"
        " capture_output=True, text=True)\n"
        "print('unshare', r.returncode, r.stdout.strip())\n"
    )
    proc, group = _in_sandbox(code, sandbox.Limits())
    if group is not None:
        group.remove()
    assert proc.returncode == 0, proc.stderr
    assert "MOUNTED" not in proc.stdout and "unshare 1" in proc.stdout, proc.stdout


@NEEDS_BWRAP
@pytest.mark.skipif(not sandbox.cgroup_kind(), reason="no control groups here")
def test_memory_and_processes_are_limited_per_sandbox_not_per_process():
    """Three processes of 1.5 GB each fit the limit of one process (3 GB) but not
    the sandbox's (2 GB in this test); a fork bomb gets at most the
    sandbox's processes, however many processes share them."""
    limits = sandbox.Limits(sandbox_memory_mb=2048, processes=30)
    code = (
        "import os, time\n"
        "import numpy as np\n"
        "kids = []\n"
        "for _ in range(3):\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        a = np.ones(1536 * 2**20 // 8)\n"
        "        time.sleep(3)\n"
        "        os._exit(0)\n"
        "    kids.append(pid)\n"
        "codes = [os.waitpid(k, 0)[1] for k in kids]\n"
        "print('killed', sum(os.WIFSIGNALED(c) for c in codes))\n"
    )
    proc, group = _in_sandbox(code, limits)
    try:
        assert "killed" in proc.stdout, (proc.stdout, proc.stderr)
        assert int(proc.stdout.split()[-1]) >= 1, proc.stdout
        assert group.out_of_memory()
    finally:
        group.remove()
    bomb = (
        "import os, time\n"
        "n = 0\n"
        "for _ in range(200):\n"
        "    try:\n"
        "        if os.fork() == 0:\n"
        "            time.sleep(20)\n"
        "            os._exit(0)\n"
        "        n += 1\n"
        "    except OSError:\n"
        "        pass\n"
        "print('started', n, flush=True)\n"
        "os._exit(0)\n"
    )
    proc, group = _in_sandbox(bomb, limits, slot=6)
    try:
        started = int(proc.stdout.split()[-1])
        assert 0 < started < limits.processes, proc.stdout
    finally:
        group.remove()
    assert not any(d.exists() for d in group.dirs)


@NEEDS_BWRAP
@pytest.mark.skipif(not sandbox.cgroup_kind(), reason="no control groups here")
def test_the_cpu_limit_holds_for_all_the_processes_of_a_sandbox_together():
    """Six processes that each stay under the CPU limit of one process (14 s here)
    are stopped when together they reach the cells' time (2 s, and 10 s of
    margin), as a timeout that says so: before, they ran to 84 s of CPU, and a
    fork bomb of forty held the machine for the whole wall-time limit while the
    other notebooks waited. Once the notebook has run, its calls get as much
    again."""
    limits = sandbox.Limits(cpu=2, wall_s=600)
    cells = [
        "import os\n"
        "kids = []\n"
        "for _ in range(6):\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        while True:\n"
        "            pass\n"
        "    kids.append(pid)\n"
        "for pid in kids:\n"
        "    os.waitpid(pid, 0)\n"
    ]
    uid = sandbox.slot_uid(os.getpid(), 5)
    # a group named as a tester's, by this test process that is none, would be
    # removed by a tester starting beside it as one of a tester killed
    name = f"test-{os.getpid()}-5"
    proc, scratch, group = tester._start(limits, uid, False, False, group_name=name)
    assert group is not None and group.cpu_seconds() is not None, group
    channel = tester.Channel(proc, time.monotonic() + limits.wall, limits, group)
    try:
        with tester.CpuWatch([channel]):
            channel.send({"cells": cells, "names": [], "cpu_cells": limits.cpu})
            with pytest.raises(tester.Stopped) as stopped:
                channel.recv()
        used = group.cpu_seconds()
    finally:
        tester._end(proc, scratch, group)
    assert stopped.value.kind == "timeout", stopped.value
    why = "processes together used up its CPU time for running its cells (12 s"
    assert why in str(stopped.value), stopped.value
    # stopped when the group reached 12 s: its six processes had about 2 s each
    assert 12 <= used < 12 + 10, used
    channel.executed = True
    assert channel.cpu_budget() == 2 * limits.cpu + 10


def test_the_reason_of_a_sandbox_stopped_for_its_memory():
    class Group:
        def out_of_memory(self):
            return True

    proc = subprocess.Popen(["sleep", "60"])
    proc.kill()
    channel = tester.Channel(proc, time.monotonic() + 60, sandbox.Limits(), Group())
    why, kind = channel._why_gone()
    assert kind == "failed"
    assert "processes together used more than the sandbox's memory (4096 MB" in why


def test_a_kill_far_from_the_cpu_limit_is_not_called_a_timeout():
    """The out-of-memory killer sends SIGKILL: after a second of CPU that is not
    the CPU limit (killed at 2 cpu + 10 s), and the reason says so."""
    limits = sandbox.Limits(cpu=120)
    for code in ("import os; os.kill(os.getpid(), 9)", "raise SystemExit(137)"):
        proc = subprocess.Popen([sys.executable, "-c", code])
        why, kind = tester.Channel(proc, time.monotonic() + 60, limits)._why_gone()
        assert kind == "failed" and "memory" in why and "CPU time" not in why, why
    proc = subprocess.Popen(
        [sys.executable, "-c", "import os; os.kill(os.getpid(), 24)"]
    )
    why, kind = tester.Channel(proc, time.monotonic() + 60, limits)._why_gone()
    assert kind == "timeout" and "CPU time (250 s)" in why, why


def test_magics_that_jupyter_accepts_run(tmp_path):
    """The harness's shell runs what a Jupyter kernel runs: ``%matplotlib`` with
    any backend, ``%config`` of the inline backend, ``%time``, ``%%capture``."""
    cells = [
        "%matplotlib inline",
        "%matplotlib widget",
        "%matplotlib notebook",
        "%config InlineBackend.figure_format = 'retina'",
        "%gui qt",
        "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax.plot([1, 2])\n"
        "plt.show()\nbackend = plt.get_backend()",
        "%time x = 1 + 1",
        "%%capture\nprint('hidden')",
        "from IPython.display import display\ndisplay(x)",
    ]
    code = (
        "import json, sys\n"
        f"sys.path.insert(0, {str(Path(sandbox.__file__).parent)!r})\n"
        "import harness\n"
        "shell = harness._shell()\n"
        f"errors, ran_out, _ = harness._run_cells(shell, {cells!r}, 60)\n"
        "print(json.dumps([errors, shell.user_ns.get('backend')]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "MPLBACKEND": "Agg", "IPYTHONDIR": str(tmp_path)},
        timeout=300,
    )
    errors, backend = json.loads(out.stdout.strip().splitlines()[-1])
    assert errors == [], errors
    assert backend.lower() == "agg"


def test_a_failing_test_says_what_failed_in_a_few_lines():
    """The feedback of a failing test: its message (the hint), the assertion that
    failed, and the values it compared, not a dump of the test."""
    source = (
        "_A = np.asarray(attention_matrix(_X))\n"
        "assert _A.shape == (2, 2), f'shape {_A.shape}'\n"
        "assert np.allclose(_A, expected['q1']), 'SA at beta = 2: A is not the "
        "expected matrix'\n"
    )
    code = compile(source, "<q1 public test 1>", "exec")
    case = tester.Case("q1", 1, False, 1.0, source, code)
    ns = {
        "np": np,
        "_X": np.eye(2),
        "attention_matrix": lambda X: X * 2,
        "expected": {"q1": np.full((2, 2), 0.5)},
    }
    with pytest.raises(AssertionError) as info:
        exec(code, ns)
    message = tester._message(info.value, case, ns)
    lines = message.splitlines()
    assert lines[0] == "SA at beta = 2: A is not the expected matrix"
    assert (
        lines[1] == "failed: assert np.allclose(_A, expected['q1']), "
        "'SA at beta = 2: A is not the expected matrix'"
    )
    assert lines[2].startswith("_A = array of shape (2, 2): [[2. 0.]")
    assert lines[3].startswith("expected['q1'] = array of shape (2, 2): [[0.5 0.5]")
    assert len(lines) == 4
    # an operand that calls a function is not evaluated again
    assert tester._compared("assert f(x) == 3", {"f": None}) == []


def test_copies_of_the_solution_or_of_a_classmate_are_flagged():
    solution = ["import numpy as np", "def f(x):\n    return 2 * x\n"]
    blank = ["import numpy as np", "def f(x):\n    raise NotImplementedError\n"]
    refs = {
        "solution": cwgrade.code_digest(solution),
        "student": cwgrade.code_digest(blank),
    }
    notebooks = {
        "ann.ipynb": solution[:1] + ["def f(x):\n\n    return 2 * x   \n"],  # spacing
        "bob.ipynb": ["import numpy as np", "def f(x):\n    return x + x\n"],
        "cat.ipynb": ["import numpy as np", "def f(x):\n    return x + x\n"],
        "dan.ipynb": list(blank),
        "eve.ipynb": list(blank),
        "fay.ipynb": ["def f(x):\n    return 3 * x\n"],
        "gus.ipynb": list(solution),
        # the solution with comments, a comment-only cell and an empty cell
        "hal.ipynb": [
            "# my work\nimport numpy as np  # arrays",
            "# TODO: check",
            "",
            "def f(x):\n    # twice\n    return 2 * x  # done\n",
        ],
    }
    grades = {
        rel: cwgrade.Grade(rel[:3], "graded", scores={"q1": 3.0}) for rel in notebooks
    }
    digests = {rel: cwgrade.code_digest(c) for rel, c in notebooks.items()}
    cwgrade._flag_copies(grades, digests, refs)
    status = {g.student: (g.status, g.reason) for g in grades.values()}
    assert status["ann"] == (
        "flagged",
        "flagged: the same code as the solution notebook; the same code as gus, hal",
    )
    assert status["hal"][1].startswith("flagged: the same code as the solution")
    assert status["bob"] == ("flagged", "flagged: the same code as cat")
    assert status["cat"] == ("flagged", "flagged: the same code as bob")
    for name in ("dan", "eve", "fay"):  # the unchanged notebook is nobody's copy
        assert status[name] == ("graded", ""), name


@pytest.mark.skipif(not sandbox.cgroup_kind(), reason="no control groups here")
def test_the_group_of_a_tester_killed_outright_is_removed_by_the_next():
    """A tester killed with SIGKILL cannot remove its sandboxes' control groups; the
    next tester removes them and kills what is left in them, and leaves alone the
    groups of testers that still run."""
    tester_like = [sys.executable, "-c", "import time; time.sleep(600)"]
    gone = subprocess.Popen([*tester_like, "gradebox.tester"])
    alive = subprocess.Popen([*tester_like, "gradebox.tester"])
    groups, left = {}, None
    try:
        for proc in (gone, alive):
            groups[proc] = sandbox.Cgroup.create(f"{proc.pid}-12345", sandbox.Limits())
            assert groups[proc] is not None
        # what the killed tester's sandbox left running, inside its group
        left = subprocess.Popen(
            ["sleep", "600"], preexec_fn=groups[gone].enter, start_new_session=True
        )
        ours = (f"{gone.pid}-", f"{alive.pid}-")
        assert not [n for n in sandbox.remove_stale_groups() if n.startswith(ours)]
        assert all(d.is_dir() for g in groups.values() for d in g.dirs)
        gone.send_signal(signal.SIGKILL)
        gone.wait(timeout=60)
        removed = sandbox.remove_stale_groups()
        # or a grading beside this test removed it first (a tester that starts or
        # stops removes the groups of testers that are gone)
        assert f"{gone.pid}-12345" in removed or not groups[gone].dirs[0].exists()
        assert not any(d.exists() for d in groups[gone].dirs)
        assert left.wait(timeout=60) == -signal.SIGKILL
        assert all(d.is_dir() for d in groups[alive].dirs)  # its tester still runs
    finally:
        for proc in (gone, alive, left):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait(timeout=60)
        for group in groups.values():
            if group is not None:
                group.remove()


@pytest.mark.skipif(not sandbox.cgroup_kind(), reason="no control groups here")
def test_a_stopped_tester_leaves_nothing_running_in_its_sandboxes_groups():
    """Stopping a tester (Ctrl-C, a hung tester) kills what its sandboxes still run,
    even a process that would not die with it, and removes their groups."""
    from gradebox.workers import Worker

    worker = Worker(Path("master.md"), unsafe=False)
    tester_like = [sys.executable, "-c", "import time; time.sleep(600)"]
    worker.proc = subprocess.Popen(
        [*tester_like, "gradebox.tester"], start_new_session=True
    )
    tester, group, left = worker.proc, None, None
    try:
        group = sandbox.Cgroup.create(f"{tester.pid}-12346", sandbox.Limits())
        assert group is not None
        # a sandbox's process that outlives its tester: its own session, in the group
        left = subprocess.Popen(
            ["sleep", "600"], preexec_fn=group.enter, start_new_session=True
        )
        worker.stop()
        assert tester.poll() == -signal.SIGKILL
        assert left.wait(timeout=60) == -signal.SIGKILL
        assert not any(d.exists() for d in group.dirs)
    finally:
        for proc in (tester, left):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait(timeout=60)
        if group is not None:
            group.remove()


@pytest.mark.skipif(not sandbox.cgroup_kind(), reason="no control groups here")
def test_the_sandboxes_parent_group_weighs_one_process_per_sandbox():
    """The scheduler weighs the sandboxes' parent group against each busy process
    of the machine: with one process's weight, all the sandboxes of a grading run
    together got one process's share beside a test runner and a browser. While
    three sandboxes' groups exist, the parent weighs at least three processes."""
    kind = sandbox.cgroup_kind()
    unit = sandbox.V2_WEIGHT if kind == "v2" else sandbox.V1_SHARES
    target = sandbox.cpu_parent(kind) / ("cpu.weight" if kind == "v2" else "cpu.shares")
    groups = []
    try:
        for slot in range(3):
            name = f"test-{os.getpid()}-weight{slot}"
            groups.append(sandbox.Cgroup.create(name, sandbox.Limits()))
            assert groups[-1] is not None
        if not target.exists():
            pytest.skip("no CPU controller for the sandboxes' groups here")
        # other testers running beside this one can only add groups of their own
        assert int(target.read_text()) >= 3 * unit, target.read_text()
    finally:
        for group in groups:
            group.remove()


@pytest.mark.parametrize("kind", ["v1", "v2"])
def test_the_parent_weight_follows_the_groups_made_and_removed(
    tmp_path, monkeypatch, kind
):
    """On a folder laid out as cgroup v1 (``cpu`` and ``cpuacct`` mounted
    together) or v2: the weight is one process's per group, at least one
    process's, and at most v2's largest weight."""
    monkeypatch.setattr(sandbox, "CGROUP_ROOT", tmp_path)
    if kind == "v1":
        (tmp_path / "cpu,cpuacct").mkdir()
        (tmp_path / "cpu,cpuacct" / "cgroup.procs").write_text("")
        for name in ("cpu", "cpuacct"):
            (tmp_path / name).symlink_to(tmp_path / "cpu,cpuacct")
        parent, file, unit = (
            tmp_path / "cpu,cpuacct" / "coursework-grader",
            "cpu.shares",
            1024,
        )
    else:
        parent, file, unit = tmp_path / "coursework-grader", "cpu.weight", 100
    assert sandbox.cpu_parent(kind).resolve() == parent
    parent.mkdir()
    assert sandbox.balance_cpu_weight(kind) == unit
    assert (parent / file).read_text() == str(unit)
    for n in range(1, 4):
        (parent / f"{n}-1000").mkdir()
        assert sandbox.balance_cpu_weight(kind) == n * unit
    (parent / "1-1000").rmdir()
    assert sandbox.balance_cpu_weight(kind) == 2 * unit
    assert (parent / file).read_text() == str(2 * unit)
    if kind == "v2":
        for n in range(200):
            (parent / f"x{n}").mkdir()
        assert sandbox.balance_cpu_weight(kind) == sandbox.V2_MAX_WEIGHT
    assert sandbox.balance_cpu_weight("") is None


def test_a_frame_too_large_is_refused_before_it_is_decoded():
    """json.loads of a frame builds objects up to ~30 times its size (60 MB of
    small lists took 1.6 GB): the tester refuses a frame from a sandbox over
    16 MB from its length alone, and one of more than 2**20 JSON values before
    decoding it; the submission fails with a reason that says so, and the
    tester's memory does not grow."""
    import resource

    def pipe_with(data: bytes):
        r, w = os.pipe()
        threading.Thread(target=lambda: (os.write(w, data), os.close(w))).start()
        return r

    ok = json.dumps({"op": "executed", "answers": {"v": [1.5, 2]}}).encode()
    r = pipe_with(wire.HEADER.pack(len(ok)) + ok)
    assert wire.read_frame(r, wire.MAX_RECEIVED, wire.MAX_VALUES)["op"] == "executed"
    os.close(r)
    r = pipe_with(wire.HEADER.pack(60 * 2**20))  # only the length: never read
    with pytest.raises(wire.FrameTooLarge, match="60.0 MB, more than the 16 MB"):
        wire.read_frame(r, wire.MAX_RECEIVED, wire.MAX_VALUES)
    os.close(r)
    many = b"[" + b"[]," * (wire.MAX_VALUES // 2) + b"[]]"  # 1.5 MB, 2**20 values
    r = pipe_with(wire.HEADER.pack(len(many)) + many)
    with pytest.raises(wire.FrameTooLarge, match="values"):
        wire.read_frame(r, wire.MAX_RECEIVED, wire.MAX_VALUES)
    os.close(r)
    # a sandbox that sends 60 MB of small lists (under the 64 MB of any frame)
    writer = (
        "import os, struct, time\n"
        "body = b'[' + b'[],' * (20 * 2**20) + b'[]]'\n"
        "os.write(1, struct.pack('>Q', len(body)))\n"
        "view = memoryview(body)\n"
        "try:\n"
        "    while view:\n"
        "        view = view[os.write(1, view[: 2**20]):]\n"
        "except BrokenPipeError:\n"
        "    pass\n"
        "time.sleep(60)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", writer], stdout=subprocess.PIPE, start_new_session=True
    )
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    channel = tester.Channel(proc, time.monotonic() + 60, sandbox.Limits())
    try:
        with pytest.raises(tester.Stopped, match="answers are too large to test"):
            channel.recv()
    finally:
        tester.kill(proc)
        proc.wait(timeout=30)
    grew_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grew_mb < 100, grew_mb


_FILL = (
    "import os\n"
    "made = {}\n"
    "for where in ('/tmp', '/dev/shm'):\n"
    "    n = 0\n"
    "    try:\n"
    "        while n < 100000:\n"
    "            open(f'{where}/f{n}', 'w').close()\n"
    "            n += 1\n"
    "    except OSError as exc:\n"
    "        made[where] = (n, exc.errno)\n"
    "    else:\n"
    "        made[where] = (n, 0)\n"
    "print(made)\n"
)


def _user_namespaces() -> bool:
    try:
        cmd = ["unshare", "--user", "--map-root-user", "--mount", "true"]
        return subprocess.run(cmd, capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@NEEDS_BWRAP
@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("runuser") is None or not _user_namespaces(),
    reason="needs root (to become another user) and user namespaces",
)
def test_a_lecturer_without_root_gets_sandboxes_bounded_in_inodes(monkeypatch):
    """Empty files take no room of a tmpfs's size but an inode each (kernel
    memory): a lecturer who is not root has no control group to count them, so
    the sandbox's /tmp and /dev/shm are mounted with ``nr_inodes`` in namespaces
    of their own before bubblewrap runs. As the user ``nobody``: the wrapper
    and bubblewrap inside it work, and /tmp holds no more files than allowed."""
    import errno
    import tempfile

    assert sandbox.own_tmpfs() == ""  # the grader's own check
    limits = sandbox.Limits(inodes=40)
    scratch = tempfile.mkdtemp(prefix="grader-test-")
    try:
        for sub in ("tmp", "shm"):
            os.mkdir(os.path.join(scratch, sub))
        shutil.chown(scratch, "nobody")
        for sub in ("tmp", "shm"):
            shutil.chown(os.path.join(scratch, sub), "nobody")
        count = "i=0; while [ $i -lt 1000 ] && touch /tmp/f$i; do i=$((i+1)); done"
        cmd = ["runuser", "-u", "nobody", "--", *sandbox.tmpfs_wrapper(scratch, limits)]
        cmd += [sandbox.bwrap(), "--unshare-user", "--uid", "65534"]
        cmd += ["--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin"]
        cmd += ["--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64"]
        cmd += ["--bind", f"{scratch}/tmp", "/tmp", "--proc", "/proc", "--dev", "/dev"]
        cmd += ["/bin/sh", "-c", count + "; echo $i; id -u"]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        made, uid = r.stdout.split()
        assert uid == "65534" and 30 <= int(made) < 40, (r.stdout, r.stderr)
        assert "No space left on device" in r.stderr
        assert os.listdir(os.path.join(scratch, "tmp")) == []  # its own mount
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    # the sandbox of a notebook as a lecturer without root builds it (the files
    # of this checkout's environment are readable by root alone here, so it runs
    # as root in the user namespace the wrapper makes)
    monkeypatch.setattr(sandbox.os, "geteuid", lambda: 1000)
    cmd, env = sandbox.command(4321, sandbox.Limits(inodes=500), unsafe=False)
    monkeypatch.undo()
    assert cmd[: len(cmd) - len(cmd[cmd.index("--user") :])][-1].endswith("unshare")
    assert "nr_inodes=500" in " ".join(cmd) and "--tmpfs" not in cmd
    scratch = env.pop("GRADER_SCRATCH")
    try:
        proc = subprocess.run(
            [*cmd[:-2], "-c", _FILL],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    assert proc.returncode == 0, proc.stderr
    import ast

    made = ast.literal_eval(proc.stdout.strip())
    for where in ("/tmp", "/dev/shm"):
        n, err = made[where]
        assert n < 500 and err == errno.ENOSPC, made


def test_the_separator_is_the_one_that_makes_a_student_column(tmp_path):
    """A sheet that moved the student column away from the first place, saved
    with ``;`` (or a tab) and a byte-order mark, is read with its separator."""
    path = tmp_path / "gradebook.csv"
    for sep in (";", "\t", ","):
        out = io.StringIO()
        writer = csv.writer(out, delimiter=sep, lineterminator="\r\n")
        writer.writerows([["comment", "student", "q3"], ["late, see", "0042", "1,5"]])
        path.write_bytes(b"\xef\xbb\xbf" + out.getvalue().encode())
        book = cwgrade.read_gradebook(path)
        assert book.delimiter == sep and book.bom, (sep, book.delimiter)
        assert book.rows == [
            {"comment": "late, see", "student": "0042", "q3": "1,5"}
        ], book.rows


def test_a_second_run_refuses_while_the_first_holds_the_lock(tmp_path):
    lock = cwgrade.Lock(tmp_path / ".lock", wait=False)
    try:
        with pytest.raises(GradingError, match="another grading"):
            cwgrade.Lock(tmp_path / ".lock", wait=False)
    finally:
        lock.release()
    cwgrade.Lock(tmp_path / ".lock", wait=False).release()


def test_grading_refuses_without_a_sandbox(monkeypatch):
    monkeypatch.setattr(sandbox, "probe", lambda: (None, sandbox.INSTALL_HINT))
    monkeypatch.setattr(sandbox, "bwrap", lambda: None)
    with pytest.raises(GradingError, match="bubblewrap"):
        sandbox.require(unsafe=False)
    sandbox.require(unsafe=True)
    with pytest.raises(GradingError, match="limit cpu"):
        sandbox.Limits(cpu=0)


def test_a_blocked_bubblewrap_says_how_to_allow_it(monkeypatch, tmp_path):
    """bwrap installed but refused its namespaces (Ubuntu 24.04's AppArmor
    restriction of unprivileged user namespaces): the error names the cause and the
    two ways to allow it, and does not say bwrap is missing."""
    fake = tmp_path / "bin" / "bwrap"
    fake.parent.mkdir()
    fake.write_text(
        "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n"
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:/usr/bin:/bin")
    sandbox.bwrap.cache_clear()
    try:
        assert sandbox.bwrap() is None
        with pytest.raises(GradingError) as info:
            sandbox.require(unsafe=False)
        message = str(info.value)
        assert str(fake) in message and "Permission denied" in message, message
        assert "not installed" not in message, message
        assert "apparmor_restrict_unprivileged_userns" in message, message
        assert "/etc/apparmor.d/" in message and "userns" in message, message
    finally:
        sandbox.bwrap.cache_clear()
    # missing altogether: the install hint
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    try:
        with pytest.raises(GradingError, match="not installed"):
            sandbox.require(unsafe=False)
    finally:
        sandbox.bwrap.cache_clear()


def test_gradebook_refuses_a_merge_that_would_lose_marks(tmp_path):
    path, history = tmp_path / "gradebook.csv", tmp_path / "history"
    # a column without a name, and a note below the class: both kept
    path.write_text(
        "student,q1,q2,q3,,total\nalice,3,0,2,seen by TA,3\n,,,,average,3\n",
        encoding="utf-8",
    )
    cwgrade.write_gradebook(path, [_grade("bob")], QUESTIONS, history)
    book = cwgrade.read_gradebook(path)
    rows = {r["student"]: r for r in book.rows}
    assert rows["alice"]["column 5"] == "seen by TA" and rows["alice"]["q3"] == "2"
    assert any(r["column 5"] == "average" for r in book.rows if not r["student"])
    # no student column (a sheet saved with another separator, a renamed column):
    # refused, the file untouched
    for text in (
        "name,q1\nalice,3\n",
        "student,q1\nalice,3\nalice,2\n",  # two rows of one student
    ):
        path.write_text(text, encoding="utf-8")
        with pytest.raises(GradingError, match="student|two rows"):
            cwgrade.write_gradebook(path, [_grade("bob")], QUESTIONS, history)
        assert path.read_text(encoding="utf-8") == text
    path.write_bytes(b"student,q1\n\x81\x8d,3\n")  # neither UTF-8 nor cp1252
    with pytest.raises(GradingError, match="CSV UTF-8"):
        cwgrade.write_gradebook(path, [_grade("bob")], QUESTIONS, history)
    # read-only: not replaced
    path.write_text("student,q1\nalice,3\n", encoding="utf-8")
    path.chmod(0o444)
    with pytest.raises(GradingError, match="read-only"):
        cwgrade.read_gradebook(path, check_writable=True)
    # the safety net itself: a merge that drops a hand-graded cell is refused
    old = cwgrade.read_gradebook(path)
    with pytest.raises(GradingError, match="'alice'"):
        cwgrade._check_merge(path, old, "student,q1\n", {"q1"})
    with pytest.raises(GradingError, match="'q3'"):
        old.rows[0]["q3"] = "2"
        cwgrade._check_merge(path, old, "student,q1,q3\nalice,3,\n", {"q1"})


def test_a_full_disk_says_so_and_leaves_nothing(tmp_path, monkeypatch):
    import errno

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(cwgrade.os, "fsync", full)
    path = tmp_path / "gradebook.csv"
    path.write_text("student\nalice\n")
    with pytest.raises(GradingError, match="the disk is full"):
        cwgrade.atomic_write(path, "student\nalice\nbob\n")
    assert path.read_text() == "student\nalice\n"
    assert [p.name for p in tmp_path.iterdir()] == ["gradebook.csv"]


def test_the_filter_of_system_calls_fails_closed():
    """The filter knows its system call numbers per architecture: elsewhere no
    sandbox starts (rather than one without the filter)."""
    import struct

    with pytest.raises(GradingError, match="riscv64"):
        sandbox.seccomp_program("riscv64")
    for machine, arch in (("x86_64", 0xC000003E), ("aarch64", 0xC00000B7)):
        program = sandbox.seccomp_program(machine)
        assert len(program) % 8 == 0
        code = [
            struct.unpack("=HBBI", program[i : i + 8])
            for i in range(0, len(program), 8)
        ]
        # the architecture is checked first, a foreign one kills the process
        assert code[0] == (0x20, 0, 0, 4) and code[1][3] == arch
        assert code[2 + code[1][2]][3] == 0x80000000
        flock = sandbox.SYSCALLS[machine]["denied"]["flock"]
        assert any(op == 0x15 and k == flock for op, _, _, k in code)


RESAVED = ["0042", "1-2", "张伟", "李娜", "José", "bob"]


def _graded(student: str, total: float = 3.0) -> cwgrade.Grade:
    g = _grade(student, total)
    g.digest = cwgrade.hashlib.sha256(f"notebook of {student}".encode()).hexdigest()
    return g


def _mangle(text: str, style: str) -> tuple[str, str, str]:
    """What a spreadsheet writes back of ``text`` in ``style``: the text, its
    encoding, its separator."""
    rows = list(csv.reader(io.StringIO(text)))
    for row in rows[1:]:
        if style == "zeros":
            row[0] = row[0].lstrip("0")  # a number: 0042 -> 42
        elif style == "dates":
            row[0] = "02-Jan" if row[0] == "1-2" else row[0]  # a date
    out = io.StringIO()
    sep = ";" if style == "bom-semicolon" else ","
    csv.writer(out, delimiter=sep, lineterminator="\r\n").writerows(rows)
    text = out.getvalue()
    if style == "nfd":  # a Mac's "CSV": accents decomposed
        text = unicodedata.normalize("NFD", text)
    encoding = {"question-marks": "cp1252", "bom-semicolon": "utf-8-sig"}
    return text, encoding.get(style, "utf-8"), sep


def _hand_mark(path: Path, style: str, marks: dict, digest: bool = True) -> None:
    """Save the gradebook back as a spreadsheet in ``style`` does, with the
    written question's marks ``marks`` (row's id as saved -> mark) filled in;
    without the ``digest`` column unless ``digest``."""
    text, encoding, sep = _mangle(path.read_text(encoding="utf-8-sig"), style)
    rows = list(csv.reader(io.StringIO(text), delimiter=sep))
    if not digest:
        at = rows[0].index("digest")
        rows = [r[:at] + r[at + 1 :] for r in rows]
    q3 = rows[0].index("q3")
    for row in rows[1:]:
        saved = row[0].encode(encoding, "replace").decode(encoding)
        if saved in marks:
            row[q3] = marks.pop(saved)
    assert not marks, marks  # every mark found its row as the sheet shows it
    out = io.StringIO()
    csv.writer(out, delimiter=sep, lineterminator="\r\n").writerows(rows)
    path.write_bytes(out.getvalue().encode(encoding, "replace"))


SHOWN = {  # each student's id as the spreadsheet in each style shows it
    "zeros": {"0042": "42"},
    "dates": {"1-2": "02-Jan"},
    "question-marks": {"张伟": "??", "李娜": "??"},
    "nfd": {"José": unicodedata.normalize("NFD", "José")},
    "bom-semicolon": {},
}


@pytest.mark.parametrize("digest", [True, False], ids=["digest", "no-digest"])
@pytest.mark.parametrize("style", list(SHOWN))
def test_hand_marks_stay_with_their_student_when_a_spreadsheet_changes_ids(
    tmp_path, style, digest, capsys
):
    """The five ways spreadsheets save ids back (leading zeros stripped, a date,
    ``??`` for a script the encoding lacks, decomposed accents, a byte-order mark
    and ``;``): the hand mark stays on its student's row, no stale row is left,
    and the ids are written back as they were. Without the ``digest`` column (a
    gradebook of an earlier version) the file and the id (NFC) find the rows,
    except two rows "??" of one file "??.ipynb": refused, the file untouched."""
    path, history = tmp_path / "gradebook.csv", tmp_path / "history"
    grades = [_graded(s) for s in RESAVED]
    assert cwgrade.write_gradebook(path, grades, QUESTIONS, history) == []
    shown = {s: SHOWN[style].get(s, s) for s in RESAVED}
    regraded = [_graded(s, 1.0) for s in RESAVED]
    if style == "question-marks":  # two rows "??": told apart by their digests
        _hand_mark(path, style, {"??": "2"}, digest)
        marks = {"张伟": "2", "李娜": ""}
        if not digest:
            before = path.read_bytes()
            with pytest.raises(GradingError, match="two rows for '\\?\\?'"):
                cwgrade.write_gradebook(path, regraded, QUESTIONS, history)
            assert path.read_bytes() == before
            return
    else:
        _hand_mark(
            path,
            style,
            {shown[s]: str(i % 2 + 1) for i, s in enumerate(RESAVED)},
            digest,
        )
        marks = {s: str(i % 2 + 1) for i, s in enumerate(RESAVED)}
    # regraded: every score changes
    assert cwgrade.write_gradebook(path, regraded, QUESTIONS, history) == []
    book = cwgrade.read_gradebook(path)
    rows = {r["student"]: r for r in book.rows}
    assert sorted(rows) == sorted(RESAVED), sorted(rows)  # no stale row
    for student, mark in marks.items():
        assert rows[student]["q3"] == mark, (student, rows[student])
        assert rows[student]["q1"] == "1", rows[student]  # the new score
    if style == "bom-semicolon":
        assert book.delimiter == ";" and book.bom
    moved = capsys.readouterr().err
    for student, saved in SHOWN[style].items():
        if saved != student and style != "question-marks":
            assert f"{saved!r} (line" in moved, moved
    assert len(list(history.glob("gradebook-*.csv"))) == 1  # the one saved back
