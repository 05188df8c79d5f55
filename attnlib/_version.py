"""The version of attnlib and of the book, in one place.

``pyproject.toml`` reads it (``[tool.setuptools.dynamic]``), the book shows it in the
footer of every page, and ``CITATION.cff`` and ``CHANGELOG.md`` name it;
``tests/test_release.py`` checks that they agree.
"""

__version__ = "1.0.0"
