"""How long ``make grade`` takes for a class: N copies of a solution, measured here.

The grader is this package; the class is the book's (Assignment 1 of *The
Mathematics of Transformers*, with attnlib under test), so this benchmark runs from
the book's repository, where ``make env`` installed both.

Builds Assignment 1 (not timed), writes N copies of its solution notebook (each with
its own comment cell, so that none is a repeat of another and all are graded), grades
them with ``make grade``'s grader (each in its sandbox, ``--jobs`` at once) and
prints the wall-clock time, the time per notebook and the time extrapolated to 200
notebooks on this machine. Run from the repository root::

    python gradebox/benchmarks/grading.py [--copies 40] [--jobs N] [--slug a1_modelling]

Measured on this project's 2-core machine, 40 copies of Assignment 1 with 2 jobs:
47 s, 1.2 s per notebook, 3.9 min extrapolated to 200 (load average 1.6 at the
start); 177 s, 14.8 min extrapolated, while other work kept the load average at 7.7.
The target is 200 notebooks within 15 minutes.

``--mixed 200`` grades a class as it comes instead: copies of the solution and of
the blank notebook, the wrong submissions of ``tests/assignments/<slug>.py``, every
attack of ``tests/assignments/attacks.py`` (cheats, a fork bomb, an endless loop,
all the memory, ...), ``%matplotlib`` magics, and the folders a class hands in:
links (to a classmate, to ``/dev/zero``, to a home folder), a FIFO, a name that is
not UTF-8, a 240-character name, CJK names, names that differ only in punctuation,
two notebooks of 24 MB of non-ASCII text. It reports the wall-clock time, whether
every file got its row, and whether a hand-graded mark and an added column survive
a spreadsheet's save of the gradebook (byte-order mark and ``;``) and a regrade.

Measured on the same machine, nothing else running, ``--mixed 200 --jobs 2`` with
the default ``TIMEOUT`` of 120 s: every file got its row in 661 s (11.0 min; 170
graded, 16 flagged, 4 timeout, 4 failed, 6 invalid), and the regrade after a
spreadsheet's save, which runs the 8 timed-out and failed notebooks again, took
393 s and kept the 200 hand marks and comments. Before a sandbox's processes shared
one CPU budget, the fork bomb held two cores for 840 s and the first pass took
1271 s. The four timeouts cost 2 x 120 s of CPU each (the notebook runs with and
without attnlib), about half the CPU time of the pass.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import tempfile
import time
from pathlib import Path

# the book's repository (gradebox/benchmarks/ is two levels down)
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from gradebox import sandbox  # noqa: E402
from gradebox.grade import Incomplete  # noqa: E402
from tools.coursework import build, grade  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, default=40)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--slug", default="a1_modelling")
    parser.add_argument("--mixed", type=int, default=0, help="grade N mixed files")
    args = parser.parse_args()
    sandbox.require(unsafe=False)
    if args.mixed:
        return mixed(args.mixed, args.jobs)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        build.build([args.slug], out=tmp / "build", jobs=1)
        solution = json.loads(
            (tmp / "build" / args.slug / "solution" / f"{args.slug}.ipynb").read_text()
        )
        folder = tmp / "submissions"
        folder.mkdir()
        for i in range(args.copies):
            nb = copy.deepcopy(solution)
            nb["cells"].append(
                {
                    "cell_type": "code",
                    "execution_count": None,
                    "id": f"student{i:04d}",
                    "metadata": {},
                    "outputs": [],
                    "source": [f"# submitted by student {i}\n"],
                }
            )
            (folder / f"student{i:03d}.ipynb").write_text(json.dumps(nb))
        load = os.getloadavg()[0]
        start = time.perf_counter()
        grades = grade.grade(
            args.slug,
            folder,
            build_root=tmp / "build",
            out=tmp / "grades",
            jobs=args.jobs,
        )
        seconds = time.perf_counter() - start
    full = sum(g.status == "graded" and g.total == grades[0].total for g in grades)
    per = seconds / args.copies
    print(
        f"\n{args.copies} copies of the {args.slug} solution, {args.jobs} job(s), "
        f"{os.cpu_count()} CPUs, load average {load:.1f} at the start"
    )
    print(
        f"graded in {seconds:.0f} s ({per:.1f} s per notebook of wall-clock time); "
        f"{full} of {len(grades)} with full marks"
    )
    print(
        f"extrapolated to 200 notebooks: {200 * per / 60:.1f} min "
        f"(target: at most 15 min)"
    )
    return 0 if full == len(grades) else 1


def _folder(folder: Path, solution: dict, student: dict, fill: dict, n: int) -> int:
    """Write a class of ``n`` files (at least the hostile ones) into ``folder``;
    the number of files a row is expected for."""
    sys.path.insert(0, str(ROOT))
    from tests.assignments import attack_notebook, with_cells as _with
    from tests.assignments.attacks import ATTACKS
    from tests.assignments.a1_modelling import MISTAKES

    count = 0

    def save(name, nb=None, raw=None):
        nonlocal count
        path = (
            folder / name
            if isinstance(name, str)
            else Path(os.fsdecode(os.path.join(os.fsencode(folder), name)))
        )
        data = raw if raw is not None else json.dumps(nb, ensure_ascii=False).encode()
        with open(os.fsencode(path), "wb") as fh:
            fh.write(data)
        count += 1

    for i, attack in enumerate(ATTACKS):
        save(f"attack{i:02d}.ipynb", attack_notebook(attack, solution, student, fill))
    for i, mistake in enumerate(MISTAKES):
        nb = copy.deepcopy(solution)
        for cell in nb["cells"]:
            text = "".join(cell["source"])
            for old, new in mistake["replace"]:
                text = text.replace(old, new)
            cell["source"] = text.splitlines(keepends=True)
        save(f"mistake{i:02d}.ipynb", nb)
    save("magic_inline.ipynb", _with(solution, first_line="%matplotlib inline"))
    save("magic_widget.ipynb", _with(solution, first_line="%matplotlib widget"))
    save(
        "oom.ipynb",
        _with(
            solution,
            append=["import numpy as np\n_hog = [np.ones(2**27) for _ in range(64)]\n"],
        ),
    )
    save("loop.ipynb", _with(student, append=["while True:\n    pass\n"]))
    save(
        "forkbomb.ipynb",
        _with(
            student,
            append=[
                "import os\nwhile True:\n    try:\n        os.fork()\n"
                "    except OSError:\n        pass\n"
            ],
        ),
    )
    text = "é" * (12 * 2**20)  # 24 MB of UTF-8
    for name in ("huge1.ipynb", "huge2.ipynb"):
        nb = copy.deepcopy(solution)
        nb["cells"].append({"cell_type": "markdown", "metadata": {}, "source": text})
        save(name, nb)
    for name in (
        "李雷.ipynb",
        "王芳.ipynb",
        "a b.ipynb",
        "a_b.ipynb",
        "a;b.ipynb",
        "A_B.ipynb",
        "n" * 234 + ".ipynb",
    ):
        save(name, _with(student, append=[f"# {name[:20]}\n"]))
    save(b"caf\xe9.ipynb", _with(student, append=["# latin-1 name\n"]))
    save("notes.txt", raw=b"I could not finish")
    save("truncated.ipynb", raw=json.dumps(solution).encode()[:500])
    # links, a FIFO: refused, each with its row
    os.symlink(folder / "attack00.ipynb", folder / "link_classmate.ipynb")
    os.symlink("/dev/zero", folder / "zero.ipynb")
    os.symlink(Path.home(), folder / "home_link")
    os.mkfifo(folder / "fifo.ipynb")
    count += 4
    i = 0
    while count < n:
        base = solution if i % 4 else student
        save(f"student{i:03d}.ipynb", _with(base, append=[f"# student {i}\n"]))
        i += 1
    return count


def _spreadsheet_round_trip(out: Path, manual: str) -> dict[str, str]:
    """Give every row a hand mark and a comment, and save the gradebook as a
    spreadsheet does (byte-order mark, ``;``); the marks given."""
    import csv
    import io

    path = out / "gradebook.csv"
    rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8-sig"))))
    header = list(rows[0]) + ["ta_comment"]
    marks = {}
    for i, row in enumerate(rows):
        row[manual] = str(i % 3)
        row["ta_comment"] = f"seen {i}"
        marks[row["file"]] = row[manual]
    buf = io.StringIO()
    writer = csv.DictWriter(buf, header, delimiter=";", lineterminator="\r\n")
    writer.writeheader()
    writer.writerows(rows)
    path.write_bytes(b"\xef\xbb\xbf" + buf.getvalue().encode())
    return marks


def mixed(n: int, jobs: int, slug: str = "a1_modelling") -> int:
    import csv
    import io

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        build.build([slug], out=tmp / "build", jobs=1)
        nbs = {
            kind: json.loads(
                (tmp / "build" / slug / kind / f"{slug}.ipynb").read_text()
            )
            for kind in ("solution", "student")
        }
        folder, out = tmp / "class", tmp / "grades"
        folder.mkdir()
        fill = {
            "{ROOT}": str(ROOT),
            "{OUT}": str(out),
            "{SENTINEL}": str(tmp / "sentinel"),
            "{MARK}": "PWNED",
            "{TAG}": f"benchmark-{os.getpid()}",
        }
        files = _folder(folder, nbs["solution"], nbs["student"], fill, n)
        load = os.getloadavg()[0]
        start = time.perf_counter()
        try:
            grades = grade.grade(
                slug, folder, build_root=tmp / "build", out=out, jobs=jobs
            )
        except Incomplete as exc:
            print(f"incomplete: {exc}")
            grades = exc.grades
        seconds = time.perf_counter() - start
        text = (out / "gradebook.csv").read_text(encoding="utf-8-sig")
        rows = list(csv.DictReader(io.StringIO(text)))
        statuses = {}
        for g in grades:
            statuses[g.status] = statuses.get(g.status, 0) + 1
        manual = next(
            q["name"]
            for q in json.loads((tmp / "build" / slug / "questions.json").read_text())[
                "questions"
            ]
            if q["manual"]
        )
        marks = _spreadsheet_round_trip(out, manual)
        again = time.perf_counter()
        grade.grade(slug, folder, build_root=tmp / "build", out=out, jobs=jobs)
        regrade = time.perf_counter() - again
        text = (out / "gradebook.csv").read_bytes().decode("utf-8-sig")
        dialect = csv.Sniffer().sniff(text.splitlines()[0], delimiters=",;")
        after = list(csv.DictReader(io.StringIO(text), dialect=dialect))
        kept = sum(
            r.get(manual) == marks.get(r["file"]) and r.get("ta_comment", "") != ""
            for r in after
        )
        pwned = (tmp / "sentinel").exists()
    print(
        f"\n{files} files of a mixed class of {slug}, {jobs} job(s), "
        f"{os.cpu_count()} CPUs, load average {load:.1f} at the start"
    )
    print(f"graded in {seconds:.0f} s ({seconds / 60:.1f} min; target: 15 min)")
    print(f"rows: {len(rows)} for {files} files; statuses: {statuses}")
    print(
        f"after a spreadsheet's save and a regrade ({regrade:.0f} s): "
        f"{kept} of {len(after)} rows kept their hand mark and comment"
    )
    written = "WRITTEN" if pwned else "not written"
    print(f"the file outside the class folder that attacks aim at was {written}")
    ok = len(rows) == files and kept == len(after) == files and not pwned
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
