"""The project's tools, run from the repository root with ``python -m``.

``tools.coursework``
    Assignments, grading (with the grader, the package ``gradebox`` of
    ``gradebox/``), the assignment pages and the student edition.
``tools.execution``
    The digest of what the chapters' outputs depend on, and the rule that drops
    an execution cache when it changes (``make book`` and ``make student``).
``tools.check_html``
    The check of a built HTML book (continuous integration).
``tools.vendor_assets``
    Fetches the scripts that the HTML book serves itself.

None of this is part of :mod:`attnlib` or of the book's sources.
"""
