"""gradebox: grades Jupyter notebooks in a box.

Each submission runs in a bubblewrap sandbox (:mod:`.sandbox`, :mod:`.harness`),
and its answers are compared with the assignment's tests outside it
(:mod:`.tester`), over a wire format that never unpickles what the student's side
wrote (:mod:`.wire`); a static scan flags what a person should look at
(:mod:`.scan`). An assignment is a notebook in otter-grader's format (its
*master*, :mod:`.masters`); :func:`.grade.grade` grades a folder of submissions and
merges the gradebook and the feedback (:mod:`.grade`, :mod:`.gradebook`,
:mod:`.feedback`). :class:`Settings` says what a course adds: the library under
test, its own cells that the scan passes over, where the caches go.

Command line: ``gradebox grade MASTER FOLDER`` (``gradebox --help``).
"""

from __future__ import annotations

from .common import GradingError, Settings, configure, current
from .grades import Grade

__version__ = "1.0.0"

__all__ = ["Grade", "GradingError", "Settings", "configure", "current"]
