"""The PDF book (``make pdf``): pictures instead of object texts, chapters 1-6.

The check itself (:mod:`bookext.pdfcheck`) is tested on texts that have each defect;
the built PDF is checked when ``make pdf`` has written it (``make pdf`` also runs
the check, and is not part of CI: it needs Debian's TeX packages, see the README).
"""

from pathlib import Path

import pytest

from bookext.latex import last_frame
from bookext.pdfcheck import failures, pdf_text

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
    ],
)
def test_object_texts_fail(bad):
    assert failures(GOOD + "\n" + bad)


def test_the_check_knows_every_numbered_chapter():
    # a chapter added to _toc.yml must be added to the check, or make pdf fails
    import yaml

    from bookext.pdfcheck import CHAPTERS

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
        heading = next(
            line
            for line in (root / f"{path}.md").read_text().splitlines()
            if line.startswith("# ")
        )
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


def test_built_pdf():
    if not PDF.exists():
        pytest.skip("make pdf writes _build/latex/book.pdf")
    assert failures(pdf_text(PDF)) == []
