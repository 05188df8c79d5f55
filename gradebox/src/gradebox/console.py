"""What the lecturer sees in the terminal: a progress line per notebook and a summary,
in columns that hold with names of any script (a CJK character takes two).
"""

from __future__ import annotations

import sys
import time

from .common import fmt
from .feedback import STATUS_HELP
from .submissions import printable
from .grades import Grade


def cell(text: str, width: int) -> str:
    """``text`` cut and padded to ``width`` columns of a terminal: a CJK character
    takes two (wcwidth), so that names such as 李雷 keep the columns aligned."""
    from wcwidth import wcwidth

    out, used = [], 0
    for ch in text:
        w = max(wcwidth(ch), 0)
        if used + w > width:
            break
        out.append(ch)
        used += w
    return "".join(out) + " " * (width - used)


class Progress:
    """One line per graded notebook with the time left, estimated from the pace
    so far (on standard error)."""

    def __init__(self, total: int, possible: float):
        self.total, self.done, self.possible = total, 0, possible
        self.start = time.monotonic()

    def update(self, g: Grade) -> None:
        self.done += 1
        elapsed = time.monotonic() - self.start
        left = elapsed / self.done * (self.total - self.done)
        score = f"{fmt(g.total)}/{fmt(self.possible)}"
        print(
            f"[{self.done:>{len(str(self.total))}}/{self.total}] "
            f"{cell(printable(g.student), 28)} {score:>9s}  {g.status:8s} "
            f"{_clock(elapsed)} elapsed, about {_clock(left)} left",
            file=sys.stderr,
            flush=True,
        )


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 60}:{seconds % 60:02d}"


def _summary(grades, possible, out, questions, interrupted) -> None:
    print(f"{'student':28s} {'total':>9s}  status")
    for g in grades:
        score = f"{fmt(g.total)}/{fmt(possible)}"
        print(f"{cell(printable(g.student), 28)} {score:>9s}  {g.status}", end="")
        print(f"  ({printable(g.reason)[:100]})" if g.reason else "")
    counts = {s: sum(g.status == s for g in grades) for s in STATUS_HELP}
    print(", ".join(f"{n} {s}" for s, n in counts.items() if n))
    print(f"gradebook: {out / 'gradebook.csv'}")
    print(f"feedback:  {out / 'feedback'}/ (file names in the gradebook's column)")
    manual = [q["name"] for q in questions if q["manual"]]
    if manual:
        print(f"graded by hand (kept as you fill them in): {', '.join(manual)}")
    if interrupted:
        print("interrupted: run the same command again to grade the rest")
