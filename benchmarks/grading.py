"""How long ``make grade`` takes for a class: N copies of a solution, measured here.

Builds Assignment 1 (not timed), writes N copies of its solution notebook (each with
its own comment cell, so that none is a repeat of another and all are graded), grades
them with ``make grade``'s grader (each in its sandbox, ``--jobs`` at once) and
prints the wall-clock time, the time per notebook and the time extrapolated to 200
notebooks on this machine. Run from the repository root::

    python benchmarks/grading.py [--copies 40] [--jobs N] [--slug a1_modelling]

Measured on this project's 2-core machine, 40 copies of Assignment 1 with 2 jobs:
47 s, 1.2 s per notebook, 3.9 min extrapolated to 200 (load average 1.6 at the
start); 177 s, 14.8 min extrapolated, while other work kept the load average at 7.7.
The target is 200 notebooks within 15 minutes.
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tools.coursework import build, grade, sandbox  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, default=40)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--slug", default="a1_modelling")
    args = parser.parse_args()
    sandbox.require(unsafe=False)
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


if __name__ == "__main__":
    sys.exit(main())
