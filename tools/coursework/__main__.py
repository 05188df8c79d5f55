"""Command line of the coursework tools: ``python -m tools.coursework COMMAND``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gradebox.cli import add_grade_arguments, run_grading

from . import __doc__ as DOC
from . import build, grade, pages, student
from .common import BUILD, ROOT, CourseworkError


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point (see :mod:`tools.coursework`)."""
    parser = argparse.ArgumentParser(
        prog="python -m tools.coursework", description=DOC.split("\n\n")[0]
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
    add_grade_arguments(p)
    p.add_argument("--out", type=Path, default=None, help="default _build/grades/SLUG")
    p.add_argument("--build-root", type=Path, default=BUILD)
    sub.add_parser("student", help="build the student edition (make student)")
    args = parser.parse_args(argv)
    try:
        if args.command == "build":
            build.build(args.slugs, changed=args.changed, out=args.out, jobs=args.jobs)
        elif args.command == "pages":
            for path in pages.pages():
                print(f"wrote {path.relative_to(ROOT)}")
        elif args.command == "grade":
            if not args.slug or not str(args.folder):
                parser.error("usage: make grade A=<assignment> SUBMISSIONS=<folder>")
            run_grading(
                grade.grade,
                args.slug,
                args.folder,
                build_root=args.build_root,
                out=args.out,
                timeout=args.timeout,
                jobs=args.jobs,
                unsafe=args.unsafe_no_sandbox,
                wait=args.wait,
                force=args.force,
                regrade=args.regrade,
                follow_links=args.follow_links,
            )
        elif args.command == "student":
            student.student()
    except CourseworkError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
