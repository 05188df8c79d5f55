"""The bibliography labels its entries as the text cites them: author and year.

The chapters cite with ``bibtex_reference_style: author_year`` (``Geshkovski et al.
[2023]``, ``[Geshkovski et al., 2023]``); pybtex's ``plain`` style numbered the list
of references ([25], [27]), so a reader could not find a citation in it by its text.
:class:`AuthorYearStyle` (``bibtex_default_style: author_year_plain`` in
``_config.yml``) is ``plain`` with labels ``Geshkovski et al., 2023``: one author by
name, two as "A and B", three or more as "A et al." (the names as the citations
print them), and a letter after the year when two entries would share a label.
"""

from __future__ import annotations

from collections import Counter
from functools import cache
from typing import Any

from pybtex.plugin import find_plugin, register_plugin
from pybtex.style.formatting.plain import Style as PlainStyle
from pybtex.style.labels import BaseLabelStyle

LABELS = "author_year_labels"
STYLE = "author_year_plain"


@cache
def _text_backend() -> Any:
    """pybtex's plain-text backend. ``Text.render_as("text")`` would look it up
    among the entry points of every installed package at each call (about 60 ms
    in the book's environment: 10 s for the labels of the bibliography)."""
    return find_plugin("pybtex.backends", "text")()


def _surname(person: Any) -> str:
    parts = [*person.rich_prelast_names, *person.rich_last_names]
    return " ".join(p.render(_text_backend()) for p in parts)


def cited_names(entry: Any) -> str:
    """``Surname``, ``A and B`` or ``A et al.`` (TeX accents decoded: Łojasiewicz)."""
    persons = entry.persons.get("author") or entry.persons.get("editor") or []
    names = [_surname(p) for p in persons]
    if not names:
        return entry.fields.get("title", entry.key)[:40]
    if len(names) == 1:
        return names[0]
    if len(names) == 2:
        return f"{names[0]} and {names[1]}"
    return f"{names[0]} et al."


def author_year(entry: Any) -> str:
    """``Surname, 2023``, ``A and B, 2023`` or ``A et al., 2023``."""
    return f"{cited_names(entry)}, {entry.fields.get('year', 'n.d.')}"


class AuthorYearLabels(BaseLabelStyle):
    def format_labels(self, sorted_entries):
        labels = [author_year(e) for e in sorted_entries]
        count, seen = Counter(labels), Counter()
        for label in labels:
            if count[label] == 1:
                yield label
            else:
                yield label + "abcdefghijklmnopqrstuvwxyz"[seen[label]]
                seen[label] += 1


class AuthorYearStyle(PlainStyle):
    default_label_style = LABELS


def register() -> None:
    """The book's style, and pybtex's text backend under the name that
    sphinxcontrib-bibtex asks for at every citation it resolves: pybtex returns a
    plugin registered here without scanning the entry points of every installed
    package (about 30 ms a lookup, 10 s of a build)."""
    register_plugin("pybtex.style.labels", LABELS, AuthorYearLabels, force=True)
    register_plugin("pybtex.style.formatting", STYLE, AuthorYearStyle, force=True)
    for name in ("plaintext", "text"):
        register_plugin("pybtex.backends", name, type(_text_backend()), force=True)
