"""The PDF book (``make pdf``): pictures instead of object texts, chapters 1-7,
every reference resolved and every glyph in its font.

The check itself (:mod:`bookext.pdfcheck`) is tested on texts and LaTeX logs that
have each defect; the built PDF is checked when ``make pdf`` has written it (``make
pdf`` also runs the check; CI runs it, with Debian's TeX packages, see CONTRIBUTING.md).
"""

from pathlib import Path

import pytest

from bookext.latex import last_frame
from bookext.pdfcheck import failures, log_failures, log_problems, pdf_text, unwrap

PDF = Path(__file__).resolve().parents[1] / "_build" / "latex" / "book.pdf"
GOOD = "\n".join(
    f"{2 * k}        Chapter {k}. {title}\n\ntext"
    for k, title in enumerate(
        [
            "Modelling",
            "Clustering",
            "The Gaussian case",
            "The circle and Kuramoto oscillators",
            "Energy extremisers",
            "Frontiers: normalisation, causality, long contexts, low temperature",
            "Trained Transformers",
            "Frontiers II: random weights, noise, metastability, long contexts",
        ],
        start=1,
    )
)


def test_a_good_text_passes():
    assert failures(GOOD) == []


@pytest.mark.parametrize(
    "bad",
    [
        "<IPython.core.display.HTML object>",
        "VBox(children=(HBox(children=(FloatSlider",
        "  0%|          | 0/4 [00:00<?, ?it/s]",
        "VBox(...)",
        "HBox()",
    ],
)
def test_object_texts_fail(bad):
    assert failures(GOOD + "\n" + bad)


def test_code_and_prose_that_look_like_objects_or_heads_pass():
    code = "w = ExplorerBox([widgets.HBox([s_model, s_layer]), out3])"
    prose = "    like t^-2 once it is removed, the law of Chapter 6. The pre-LN radius"
    assert failures(GOOD + "\n" + code + "\n" + prose) == []


def test_the_check_knows_every_numbered_chapter():
    # a chapter added to _toc.yml must be added to the check, or make pdf fails
    import yaml

    from bookext.pdfcheck import CHAPTERS
    from bookext.plainmd import page_title

    root = PDF.parents[2]
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    numbered = [
        ch["file"]
        for part in toc["parts"]
        if part.get("numbered")
        for ch in part.get("chapters", [])
        if "file" in ch
    ]
    assert len(numbered) == len(CHAPTERS)
    for path, word in zip(numbered, CHAPTERS):
        heading = page_title(root / f"{path}.md")
        assert word.lower() in heading.lower(), (path, word)


def test_chapter_numbers_are_checked():
    shifted = GOOD.replace("Chapter 1. Modelling", "Chapter 7. Modelling")
    assert any("chapter 1" in f for f in failures(shifted))
    assert failures(GOOD + "\nSolution to Exercise 1.2\n")


def test_last_frame_of_a_player():
    import base64

    png = base64.b64encode(b"\x89PNG-last").decode()
    png = png[:6] + "\\\n" + png[6:]  # matplotlib breaks the base64 into lines
    player = (
        '<div class="animation">'
        f'frames[0] = "data:image/png;base64,{base64.b64encode(b"x").decode()}";'
        f'frames[1] = "data:image/png;base64,{png}";</div>'
    )
    assert last_frame(player) == b"\x89PNG-last"
    assert last_frame("<p>no player</p>") is None


# the end of a clean log of XeLaTeX's last run, with a line broken at 79 characters
CLEAN_LOG = """\
[248] [249] (./book.ind [250]) (./book.aux)
Package rerunfilecheck Info: File `book.out' has not changed.
(rerunfilecheck)             Checksum: 737A5E1DB8A14EA1B3524743D37D2EB2;17881.
 )
Output written on book.pdf (255 pages).
"""
# what XeLaTeX wrote for the references into the library reference and the glyphs
# the fonts lacked, broken into lines of 79 characters as TeX does
UNRESOLVED = """
LaTeX Warning: Reference `book/api/generated/attnlib.angles:module-attnlib.angl
es' on page 249 undefined on input line 18762.

"""
MISSING = """
Missing character: There is no ⟨ (U+27E8) in font [FreeMonoOblique.otf]/OT:scri
pt=latn;language=dflt;!
"""


def test_a_clean_log_passes():
    assert log_failures(CLEAN_LOG) == []
    assert log_problems(CLEAN_LOG) == ([], [])


def test_a_log_with_an_unresolved_reference_fails():
    bad = CLEAN_LOG + UNRESOLVED + "LaTeX Warning: There were undefined references.\n"
    refs, glyphs = log_problems(bad)
    assert refs == ["book/api/generated/attnlib.angles:module-attnlib.angles"]
    assert glyphs == []
    assert log_failures(bad) == [
        "unresolved reference book/api/generated/attnlib.angles:module-attnlib.angles"
    ]
    # a citation, a hyper reference, or only LaTeX's closing summary fail too
    cite = "\nLaTeX Warning: Citation `GLPR2025' on page 3 undefined on input line 9.\n"
    assert log_failures(CLEAN_LOG + cite)
    hyper = "\nLaTeX Warning: Hyper reference `book/circle::doc' on page 1 undefined\n"
    assert log_failures(CLEAN_LOG + hyper)
    assert log_failures(CLEAN_LOG + "LaTeX Warning: There were undefined references.")


def test_a_log_with_a_missing_glyph_fails():
    for bad in (
        MISSING,
        'Missing character: There is no ö ("F6) in font cmmi10!\n',
    ):
        refs, glyphs = log_problems(CLEAN_LOG + bad)
        assert refs == [] and len(glyphs) == 1
        assert log_failures(CLEAN_LOG + bad)[0].startswith("missing glyph: ")
    assert "[FreeMonoOblique.otf]/OT:script=latn" in log_problems(MISSING)[1][0]


def test_unwrap_joins_only_full_lines():
    assert unwrap("a" * 79 + "\nbc\nd") == "a" * 79 + "bc\nd"
    assert unwrap("a" * 78 + "\nbc") == "a" * 78 + "\nbc"


def test_built_pdf():
    if not PDF.exists():
        pytest.skip("make pdf writes _build/latex/book.pdf")
    assert failures(pdf_text(PDF)) == []
    log = PDF.with_suffix(".log").read_text(encoding="utf-8", errors="replace")
    assert log_failures(log) == []


def test_ci_and_the_release_install_the_tex_packages_contributing_lists():
    # make pdf needs them all (DejaVu Sans Mono for the code, poppler for the check);
    # CONTRIBUTING.md, where the PDF build is documented, lists them for apt-get
    import re

    root = PDF.parents[2]
    contributing = (root / "CONTRIBUTING.md").read_text()
    found = re.search(r"from Debian's\s+packages `([^`]*)`", contributing)
    assert found, "CONTRIBUTING.md lists the PDF's Debian packages"
    listed = found.group(1).split()
    assert "fonts-dejavu-extra" in listed and "texlive-xetex" in listed
    ci = re.search(r'pdf_packages="([^"]*)"', (root / ".ci" / "run").read_text())
    assert ci.group(1).split() == listed
    release = (root / ".github" / "workflows" / "release.yml").read_text()
    assert set(listed) <= set(release.replace("\\", " ").split())
