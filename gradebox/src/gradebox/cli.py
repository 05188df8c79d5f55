"""The command line: ``gradebox grade MASTER FOLDER [options]``."""

from __future__ import annotations

import argparse
import faulthandler
import signal
import sys
from pathlib import Path

from . import __version__
from .common import GradingError, Settings


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="gradebox",
        description="Grade Jupyter notebooks, each in a bubblewrap sandbox, with "
        "the tests run outside it.",
    )
    p.add_argument("--version", action="version", version=f"gradebox {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    g = sub.add_parser("grade", help="grade a folder of submissions")
    add_grade_arguments(g)
    g.add_argument(
        "master", type=Path, help="the assignment in otter-grader's format (.ipynb/.md)"
    )
    g.add_argument("folder", type=Path, help="folder of <student>.ipynb files")
    g.add_argument(
        "--out", type=Path, default=None, help="output folder (default grades/MASTER)"
    )
    g.add_argument(
        "--built",
        type=Path,
        default=None,
        help="the assignment as built (questions.json, student/, solution/)",
    )
    g.add_argument(
        "--library",
        default=None,
        help="top-level module name of the library under test (e.g. attnlib)",
    )
    g.add_argument("--library-path", default=None, help="its package folder")
    g.add_argument(
        "--exempt-pattern",
        action="append",
        default=[],
        metavar="REGEX",
        help="a cell of the course's own, passed over by the scan (repeatable)",
    )
    g.add_argument(
        "--exempt-hook",
        action="append",
        default=[],
        metavar="MODULE:FUNCTION",
        help="a predicate of cells of the course's own (repeatable)",
    )
    g.add_argument("--cache", default=None, help="folder of the grader's caches")
    g.add_argument(
        "--path",
        action="append",
        default=[],
        metavar="FOLDER",
        help="put FOLDER first on the tester's Python path (repeatable)",
    )
    return p


def add_grade_arguments(p: argparse.ArgumentParser) -> None:
    """The options of a grading run (shared with a course's own command line)."""
    p.add_argument(
        "--timeout", type=float, default=120.0, help="CPU seconds per notebook"
    )
    p.add_argument("--jobs", type=int, default=None, help="notebooks graded at once")
    p.add_argument(
        "--unsafe-no-sandbox",
        action="store_true",
        help="grade without bubblewrap (only notebooks you trust)",
    )
    p.add_argument(
        "--wait", action="store_true", help="wait for another run of this assignment"
    )
    p.add_argument(
        "--force", action="store_true", help="regrade every notebook, changed or not"
    )
    p.add_argument(
        "--regrade",
        action="append",
        default=[],
        metavar="STUDENT",
        help="regrade this student's notebook even if unchanged (repeatable)",
    )
    p.add_argument(
        "--follow-links",
        action="store_true",
        help="grade what symbolic links point to (refused by default)",
    )


def run_grading(func, *args, **kwargs) -> None:
    """Run ``func`` (a grading) as a command should: kill -USR1 prints where every
    thread is, and Ctrl-C stops the run and writes what is graded."""
    # kill -USR1 <pid> prints where every thread of a run that seems stuck is
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    # Ctrl-C (SIGINT) stops the run and writes what is graded, even where it
    # was started with SIGINT ignored (a shell without job control starts
    # background commands so, and Python then never raises KeyboardInterrupt)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    func(*args, **kwargs)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``gradebox`` command."""
    args = parser().parse_args(argv)
    try:
        settings = Settings(
            library=args.library,
            library_path=args.library_path,
            exempt_patterns=tuple(args.exempt_pattern),
            exempt_hooks=tuple(args.exempt_hook),
            cache=args.cache,
            pythonpath=tuple(str(Path(p).resolve()) for p in args.path),
        )
    except (ValueError, TypeError) as exc:  # a setting that is not usable
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from .grade import grade

    try:
        run_grading(
            grade,
            args.master,
            args.folder,
            out=args.out if args.out is not None else Path("grades") / args.master.stem,
            built=args.built,
            timeout=args.timeout,
            jobs=args.jobs,
            unsafe=args.unsafe_no_sandbox,
            wait=args.wait,
            force=args.force,
            regrade=args.regrade,
            follow_links=args.follow_links,
            settings=settings,
        )
    except GradingError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0
