"""Coursework: assignments, grading, the assignment pages and the student edition.

Every assignment is one MyST text notebook in ``book/assignments/`` (a *master*)
annotated for otter-grader 7.0.0; the instructor's guide
(``book/coursework/guide.md``) describes the format. One module per command, run
from the repository root as ``python -m tools.coursework COMMAND``; the Makefile
calls them:

``build [SLUG ...] [--changed PATH ...]`` (:mod:`.build`, ``make assignments``)
    For each master: the student notebook, the solution notebook and the autograder
    zip in ``_build/assignments/<slug>/``.
``pages`` (:mod:`.pages`)
    The book's assignment pages (questions and stubs, a download link to the
    student notebook), generated into the git-ignored
    ``book/coursework/generated/``.
``grade SLUG FOLDER [--timeout S] [--jobs N] [--wait] [--unsafe-no-sandbox]``
    (:mod:`.grade`, ``make grade``) Grades every notebook of FOLDER with the
    grader, the package :mod:`gradebox` (``gradebox/``: each notebook in a
    bubblewrap sandbox, the tests run outside it; its README says what it
    guarantees), with the book's settings (attnlib is the library under test),
    and merges ``_build/grades/<slug>/gradebook.csv`` and ``feedback/<student>.md``.
``student`` (:mod:`.student`, ``make student``)
    The student edition of the book, without the exercises' solutions and without
    the instructor's guide, in ``_build/student/html``.

:mod:`.masters` finds the masters (:mod:`gradebox.masters` parses them);
:mod:`.common` holds the paths, the grader's settings and helpers.
"""
