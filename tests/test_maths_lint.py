"""The chapters' inline maths survives Markdown: the lint and its rules on snippets."""

import pytest

from tools.maths_lint import book_sources, lint_file, lint_text


def test_no_source_of_the_book_has_a_cut_formula():
    found = [f for path in book_sources() for f in lint_file(path)]
    assert found == [], "\n".join(found)


@pytest.mark.parametrize(
    "snippet, line",
    [
        # a formula continued on a line that starts with '+ ': a list item
        ("Text\n$a = b\n+ c$ and more.\n", 2),
        # the same with '- ' inside a numbered list item
        ("1. Item\n   $a = b\n   - c$ so.\n", 2),
        # display maths right after a line of text, inside a proof
        ("```{prf:proof}\nHence\n$$x = y$$\nso $t^*$ and $s^*$.\n```\n", 3),
    ],
)
def test_a_cut_formula_fails_with_its_file_and_line(snippet, line):
    found = lint_text(snippet, "ch.md")
    assert found, "the cut formula was not found"
    assert found[0].startswith(f"ch.md:{line}: ")
    assert "formula is cut" in found[0]


def test_a_tex_command_left_in_text_is_named():
    # an unpaired dollar elsewhere on the line is not needed to see it
    found = lint_text("The bound \\frac12 holds.\n", "ch.md")
    assert len(found) == 1 and "\\frac" in found[0] and found[0].startswith("ch.md:1:")


def test_the_reflowed_formula_passes():
    ok = (
        "Text\n$a = b +\nc$ and more, $t^*$ and $s^*$ stay maths.\n\n"
        "1. Item\n   $a = b -\n   c$ so\n\n   $$x = y$$\n\n"
        "A price of \\$5 is text, and so is `$x$` in code.\n\n"
        "```{code-cell} ipython3\nprint('$a$ \\\\frac')\n```\n\n"
        "```{math}\n\\frac12\n```\n"
    )
    assert lint_text(ok, "ch.md") == []


def test_a_directive_body_is_checked_at_its_line_in_the_file():
    text = "# Title\n\n```{prf:theorem} A title\n:label: t\n\nLet\n$a\n+ b$.\n```\n"
    found = lint_text(text, "ch.md")
    assert found and found[0].startswith("ch.md:7:"), found
