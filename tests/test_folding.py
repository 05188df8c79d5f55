"""Cells that assert a result are folded behind "Show the check"; a check that draws
folds its code only, and its figure stays in view; the label of a check stays above
its control."""

import re

import nbformat
import pytest

from bookext.folding import asserts

PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAA"
    "AABJRU5ErkJggg=="
)


def test_asserts():
    assert asserts("x = 1\nassert x == 1, 'one'")
    assert asserts("for k in range(3):\n    assert k < 3")
    assert asserts("%time y = 2\nassert y")  # a magic: read line by line
    assert not asserts("x = 1  # assert nothing\nprint('assert')")


@pytest.mark.slow  # a Sphinx build
def test_a_page_folds_its_checks(tmp_path):
    from sphinx.cmd.build import build_main

    from tools.maths_lint import ROOT

    src, out = tmp_path / "src", tmp_path / "html"
    src.mkdir()
    (src / "conf.py").write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "extensions = ['myst_nb']\n"
        "nb_execution_mode = 'off'\n"
        "def setup(app):\n"
        "    from bookext.folding import FoldChecks\n"
        "    app.add_transform(FoldChecks)\n"
    )
    figure = nbformat.v4.new_output(
        "display_data", data={"image/png": PNG, "text/plain": "Figure: a line."}
    )
    printed = nbformat.v4.new_output("stream", name="stdout", text="error 1e-12\n")
    cells = [
        nbformat.v4.new_markdown_cell("# Page\n\n(chk-one)=\n"),
        nbformat.v4.new_code_cell(
            "err = 1e-12\nprint('error', err)\nassert err < 1e-9", outputs=[printed]
        ),
        nbformat.v4.new_markdown_cell("See {ref}`the check <chk-one>`."),
        nbformat.v4.new_code_cell("fig = plot()\nassert fig", outputs=[figure]),
        nbformat.v4.new_code_cell("y = 2"),
        nbformat.v4.new_code_cell(
            "assert explorer\nexplorer",
            outputs=[
                nbformat.v4.new_output(
                    "display_data",
                    data={
                        "text/html": "<div class='attnlib-explorer'>x</div>",
                        "text/plain": "<static explorer>",
                    },
                )
            ],
        ),
        nbformat.v4.new_code_cell(
            "assert True", metadata={"tags": ["hide-input"]}, outputs=[]
        ),
    ]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), src / "index.ipynb")
    assert build_main(["-q", "-b", "html", str(src), str(out)]) == 0
    page = (out / "index.html").read_text(encoding="utf-8")
    folded = re.findall(
        r'<details class="admonition hide above-input">(.*?)</details>', page, re.S
    )
    # the check; the code of the figure's and of the explorer's checks; the cell
    # tagged hide-input
    assert len(folded) == 4
    assert "Show the check<" in folded[0] and "assert err" in folded[0]
    assert "error 1e-12" in folded[0]  # its output is folded with it
    for code in folded[1:3]:  # their pictures are not folded
        assert "Show the code of the check" in code
        assert "assert " in code and "<img" not in code
        assert "attnlib-explorer" not in code
    assert "Show code cell source" in folded[3]  # a tag keeps its own folding
    assert "<img" in page
    assert page.count("attnlib-check-code") == 2
    assert "attnlib-explorer" in page
    # not the cell without assert
    assert "y = 2" not in "".join(folded)
    # the link lands just above the folded check
    between = page[page.index('id="chk-one"') : page.index("Show the check")]
    assert "<details" in between and "err = " not in between


PROOF_PAGE = """# Page

:::{prf:theorem} A result
:label: thm-a
It holds.
:::

:::{prf:proof}
The first step.

(step-two)=
The second step.
:::

:::{prf:proof}
Another proof.
:::
"""


def _proof_site(tmp_path):
    """A page with a theorem and two proofs, built with sphinx-proof and the
    book's folding of proofs."""
    from sphinx.cmd.build import build_main

    from tools.maths_lint import ROOT

    src, out = tmp_path / "src", tmp_path / "html"
    src.mkdir()
    (src / "conf.py").write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "extensions = ['myst_nb', 'sphinx_proof']\nnb_execution_mode = 'off'\n"
        "myst_enable_extensions = ['colon_fence']\n"
        f"html_static_path = [{str(ROOT / 'bookext' / '_static')!r}]\n"
        "html_css_files = ['attnlib-book.css']\n"
        "def setup(app):\n"
        "    from bookext.folding import register_proof_folds\n"
        "    register_proof_folds(app)\n"
    )
    (src / "index.md").write_text(PROOF_PAGE)
    assert build_main(["-q", "-b", "html", str(src), str(out)]) == 0
    return out / "index.html"


@pytest.mark.slow  # a Sphinx build
def test_every_proof_has_its_fold_control_and_the_theorem_none(tmp_path):
    from tools.check_html import proof_fold_failures

    page = _proof_site(tmp_path).read_text(encoding="utf-8")
    assert page.count('<div class="proof admonition" id="proof">') == 2
    assert page.count('<details class="attnlib-proof-fold" open>') == 2
    assert proof_fold_failures(page, "index.html") == []
    theorem = page[page.index('class="proof theorem') : page.index("It holds")]
    assert "<details" not in theorem
    # without the folding, the page check fails each proof
    bare = page.replace('<details class="attnlib-proof-fold" open>', "<div>")
    assert len(proof_fold_failures(bare, "index.html")) == 2


@pytest.mark.slow  # a Sphinx build and Chromium
def test_a_proof_folds_and_unfolds_in_chromium(tmp_path, browser):
    page_path = _proof_site(tmp_path)
    page = browser.new_page()
    page.goto(page_path.as_uri(), wait_until="load")
    control = page.locator("summary.attnlib-fold").first
    assert page.locator("summary.attnlib-fold").count() == 2
    assert page.locator("#step-two").is_visible()  # open when the page loads
    assert control.inner_text() == "Hide the proof"
    control.click()
    assert not page.locator("#step-two").is_visible()
    assert control.inner_text() == "Show the proof"
    assert control.is_visible()
    page.evaluate("location.hash = '#step-two'")  # a link into the proof
    page.wait_for_function(
        "() => document.querySelector('details.attnlib-proof-fold').open"
    )
    assert page.locator("#step-two").is_visible()
    assert control.inner_text() == "Hide the proof"
    page.close()
