"""The reference pages cite the papers as the chapters do: a docstring's [GLPR] is a
citation linked to the bibliography, not plain text."""

import re
import warnings
from pathlib import Path

import pytest

from bookext.apiref import CITATIONS, link_citations, public_modules

ROOT = Path(__file__).resolve().parents[1]
LABEL = re.compile(r"\[([A-Z]{3,})\]")


def _docstrings():
    for module in public_modules():
        yield module.__name__, module.__doc__ or ""
        for name in getattr(module, "__all__", []):
            with warnings.catch_warnings():  # deprecated names still cite
                warnings.simplefilter("ignore", DeprecationWarning)
                obj = getattr(module, name, None)
            yield f"{module.__name__}.{name}", getattr(obj, "__doc__", None) or ""


def test_every_label_the_docstrings_cite_is_an_entry_of_the_bibliography():
    bib = (ROOT / "book" / "references.bib").read_text(encoding="utf-8")
    keys = set(re.findall(r"^@\w+\{([^,]+),", bib, re.M))
    assert set(CITATIONS.values()) <= keys, set(CITATIONS.values()) - keys
    used = {label for _, doc in _docstrings() for label in LABEL.findall(doc)}
    assert used and used <= set(CITATIONS), used - set(CITATIONS)


def test_a_label_becomes_a_citation():
    lines = ["Equation (2.3) of [GLPR]; [BKKRW] §3.", "[GLPR]'s code, Fig. 3."]
    link_citations(None, "function", "f", None, None, lines)
    assert lines == [
        "Equation (2.3) of :cite:t:`GLPR2023`; :cite:t:`BKKRW2025` §3.",
        ":cite:t:`GLPR2023`'s code, Fig. 3.",
    ]


@pytest.mark.slow  # a Sphinx build
def test_a_reference_page_links_its_citations(tmp_path):
    from sphinx.cmd.build import build_main

    src, out = tmp_path / "src", tmp_path / "html"
    src.mkdir()
    (src / "conf.py").write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "extensions = ['sphinx.ext.autodoc', 'sphinx.ext.napoleon',"
        " 'sphinxcontrib.bibtex']\n"
        f"bibtex_bibfiles = [{str(ROOT / 'book' / 'references.bib')!r}]\n"
        "bibtex_reference_style = 'author_year'\n"
        "def setup(app):\n"
        "    from bookext.apiref import link_citations\n"
        "    app.connect('autodoc-process-docstring', link_citations, priority=600)\n"
    )
    (src / "index.rst").write_text(
        "Modes\n=====\n\n.. automodule:: attnlib.frontiers._density_modes\n\n"
        "References\n==========\n\n.. bibliography::\n"
    )
    log = tmp_path / "warnings.log"
    status = build_main(["-q", "-W", "-w", str(log), "-b", "html", str(src), str(out)])
    assert status == 0, log.read_text(encoding="utf-8") if log.exists() else status
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "[GRS]" not in page
    # author and year, linked to the entry of the bibliography
    link = re.search(
        r'<a class="reference internal" href="#(id\d+)" title="([^"]*)"', page
    )
    assert link and link.group(2).startswith("Borjan Geshkovski, Philippe Rigollet")
    assert f'id="{link.group(1)}"' in page
