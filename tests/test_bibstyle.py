"""The bibliography is labelled as the text cites: author and year, not numbers."""

import re
from pathlib import Path

import pytest
from pybtex.database import parse_file, parse_string

from bookext import bibstyle
from bookext.plainmd import _citations

ROOT = Path(__file__).resolve().parents[1]
BIB = ROOT / "book" / "references.bib"
PAGE = ROOT / "_build" / "html" / "book" / "references.html"
# a label, or the link back to the citation that wraps it
LABEL = re.compile(
    r'<span class="label"><span class="fn-bracket">\[</span>(?:<a [^>]*>)?([^<]*)<'
)


def _labels(data):
    bibstyle.register()
    entries = bibstyle.AuthorYearStyle().sort(data.entries.values())
    labels = bibstyle.AuthorYearLabels().format_labels(entries)
    return {e.key: label for e, label in zip(entries, labels)}


def test_labels_are_author_and_year_as_cited_in_the_notebooks():
    # the notebooks cite (Łojasiewicz, 1963): the names decoded from TeX
    labels = _labels(parse_file(str(BIB)))
    cited = _citations(BIB)
    assert len(labels) == len(cited) >= 20
    for key, label in labels.items():
        who, year = cited[key]
        assert label.rstrip("ab") == f"{who}, {year}", (key, label)
        assert not re.search(r"\\|[{}]", who), who
    assert len(set(labels.values())) == len(labels)


def test_one_two_and_more_authors_and_a_shared_label():
    data = parse_string(
        r"""
        @article{a, author={{\L}ojasiewicz, Stanis{\l}aw}, title={T}, year={1963}}
        @article{b, author={Geshkovski, Borjan and Rigollet, Philippe}, title={U},
                 year={2023}}
        @article{c, author={Geshkovski, B. and Letrouit, C. and Polyanskiy, Y.},
                 title={V}, year={2024}}
        @article{d, author={Geshkovski, B. and Koubbi, H. and Polyanskiy, Y.},
                 title={W}, year={2024}}
        """,
        "bibtex",
    )
    labels = _labels(data)
    assert labels["a"] == "Łojasiewicz, 1963"
    assert labels["b"] == "Geshkovski and Rigollet, 2023"
    assert {labels["c"], labels["d"]} == {
        "Geshkovski et al., 2024a",
        "Geshkovski et al., 2024b",
    }


@pytest.mark.skipif(not PAGE.exists(), reason="make book builds the references page")
def test_the_built_bibliography_has_author_year_labels():
    shown = LABEL.findall(PAGE.read_text(encoding="utf-8"))
    assert len(shown) >= 20
    bad = [s for s in shown if not re.fullmatch(r".+, \d{4}[a-z]?", s)]
    assert bad == [], bad[:5]


def test_labels_and_citations_do_not_scan_the_installed_packages(monkeypatch):
    """pybtex finds a plugin by scanning the entry points of every installed package
    unless it was registered at run time: 30 ms a lookup in the book's environment,
    which the labels (one per author) and sphinxcontrib-bibtex (one per citation it
    resolves) made a third of the book's build. With the book's registration, the
    lookups they make are served without a scan."""
    import pybtex.plugin

    bibstyle.register()
    entries = parse_file(str(BIB)).entries  # one lookup, of the .bib parser

    def scan(*args, **kwargs):
        raise AssertionError(f"entry points scanned for {args} {kwargs}")

    monkeypatch.setattr(pybtex.plugin, "entry_points", scan)
    # what sphinxcontrib-bibtex asks for at every citation (its domain.resolve_xref)
    backend = pybtex.plugin.find_plugin("pybtex.backends", "plaintext")
    assert backend.__module__ == "pybtex.backends.plaintext"
    names = {key: bibstyle.cited_names(entry) for key, entry in entries.items()}
    assert names["GLPR2023"] == "Geshkovski et al."
    assert len(names) >= 20
