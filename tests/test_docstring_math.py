r"""The math of attnlib's docstrings, as the library reference renders it.

The reference pages (:mod:`bookext.apiref`) pass every public docstring through
napoleon and reStructuredText; MathJax (HTML) and LaTeX (PDF) then typeset each
``:math:`` role and ``.. math::`` block. A role only ends at a backtick that follows
a non-blank character, so ``:math:`\gamma(t) = ` ``level``` runs on into the
literal and typesets its backticks. These tests parse the docstrings as the build
does and check each piece of math: no backtick, balanced groups and environments,
and (where LaTeX is installed) that it compiles.
"""

from __future__ import annotations

import inspect
import re
import shutil
import subprocess
import warnings
from pathlib import Path

import pytest
import yaml
from docutils import nodes
from docutils.core import publish_doctree
from docutils.parsers.rst import Directive, directives, roles
from sphinx.ext.napoleon import Config
from sphinx.ext.napoleon.docstring import NumpyDocstring
from sphinx.pycode import ModuleAnalyzer
from sphinx.util.math import wrap_displaymath

from bookext.apiref import escape_type_stars, public_modules
from bookext.latex import macro_preamble

ROOT = Path(__file__).resolve().parents[1]
# the roles of Sphinx's Python domain and of the book, read as literals here
SPHINX_ROLES = ("func", "class", "data", "mod", "attr", "meth", "obj", "exc", "ref")


class _Body(Directive):
    """A Sphinx directive (``.. attribute::`` of napoleon) whose body is parsed."""

    has_content = True
    optional_arguments = 1
    final_argument_whitespace = True
    option_spec = {"type": directives.unchanged, "value": directives.unchanged}

    def run(self):
        node = nodes.container()
        self.state.nested_parse(self.content, self.content_offset, node)
        return [node]


def _setup_docutils() -> None:
    for name in SPHINX_ROLES:
        roles.register_generic_role(name, nodes.literal)
    for name in ("attribute", "method", "function", "data"):
        directives.register_directive(name, _Body)


def _docstrings():
    """(name, docstring) of every module, name of an ``__all__``, public member of a
    class and ``#:`` comment of data that the reference pages document."""
    seen: set[int] = set()
    for module in public_modules():
        yield module.__name__, inspect.cleandoc(module.__doc__ or "")
        for (_, attr), lines in (
            ModuleAnalyzer.for_module(module.__name__).find_attr_docs().items()
        ):
            yield f"{module.__name__}.{attr}", "\n".join(lines)
        for attr in module.__all__:
            obj = getattr(module, attr)
            if inspect.ismodule(obj) or not (
                inspect.isclass(obj) or inspect.isroutine(obj)
            ):
                continue  # data: its documentation is its #: comment
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            yield f"{module.__name__}.{attr}", inspect.getdoc(obj) or ""
            if not inspect.isclass(obj):
                continue
            for key, member in vars(obj).items():
                if key.startswith("_"):
                    continue
                member = getattr(member, "fget", None) or member
                member = getattr(member, "__func__", member)
                if inspect.isroutine(member) and id(member) not in seen:
                    seen.add(id(member))
                    yield f"{module.__name__}.{attr}.{key}", inspect.getdoc(member)


def _parse(doc: str):
    """The doctree of a docstring as the book reads it: napoleon, then bookext."""
    lines = NumpyDocstring(doc, Config(napoleon_use_rtype=False)).lines()
    escape_type_stars(None, "", "", None, None, lines)
    return publish_doctree(
        "\n".join(lines), settings_overrides={"report_level": 5, "halt_level": 5}
    )


@pytest.fixture(scope="module")
def math():
    """(name, text, is_block) of every piece of math, and the parser's messages."""
    _setup_docutils()
    pieces, messages = [], []
    with warnings.catch_warnings():  # deprecated names are documented too
        warnings.simplefilter("ignore", DeprecationWarning)
        docs = list(_docstrings())
    for name, doc in docs:
        if not doc:
            continue
        tree = _parse(doc)
        for msg in tree.findall(nodes.system_message):
            if msg["level"] >= 2:
                messages.append(f"{name}: {msg.astext()}")
        for node in tree.findall(
            lambda n: isinstance(n, (nodes.math, nodes.math_block))
        ):
            pieces.append((name, node.astext(), isinstance(node, nodes.math_block)))
    return pieces, messages


def test_the_checks_see_a_role_that_runs_on_into_a_literal():
    _setup_docutils()
    tree = _parse(r"At :math:`\gamma(t) = ` ``level`` the time is finite.")
    (node,) = tree.findall(nodes.math)
    assert "`" in node.astext()  # what test_math_has_no_backtick rejects
    tree = _parse(r"At :math:`\gamma(t)` equal to ``level`` the time is finite.")
    (node,) = tree.findall(nodes.math)
    assert node.astext() == r"\gamma(t)"


def test_docstrings_parse_without_warnings(math):
    pieces, messages = math
    assert len(pieces) > 300  # the library's docstrings were found
    assert messages == []


def test_math_has_no_backtick(math):
    bad = [(name, text) for name, text, _ in math[0] if "`" in text]
    assert bad == []


def _unbalanced(text: str) -> str | None:
    body = re.sub(r"\\[{}]", "", text)  # \{ and \} are characters, not groups
    depth = 0
    for ch in body:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if depth < 0:
            return "a } closes no group"
    if depth:
        return "a { is not closed"
    if len(re.findall(r"\\left\b", text)) != len(re.findall(r"\\right\b", text)):
        return r"\left and \right do not pair"
    stack = []
    for kind, env in re.findall(r"\\(begin|end)\{(\w+\*?)\}", text):
        if kind == "begin":
            stack.append(env)
        elif not stack or stack.pop() != env:
            return f"\\end{{{env}}} closes no \\begin{{{env}}}"
    if stack:
        return f"\\begin{{{stack[-1]}}} is not closed"
    return None


def test_math_groups_and_environments_are_balanced(math):
    bad = [(n, t, why) for n, t, _ in math[0] if (why := _unbalanced(t))]
    assert bad == []


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="no pdflatex")
def test_math_compiles_with_latex(math, tmp_path):
    """Every piece, as the PDF typesets it (Sphinx's wrapping of a block, the book's
    macros), in one document: pdflatex reports no error."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    macros = config["sphinx"]["config"]["mathjax3_config"]["tex"]["macros"]
    lines = [
        r"\documentclass{article}",
        r"\usepackage{amsmath,amssymb,amsfonts}",
        macro_preamble(macros),
        r"\begin{document}",
    ]
    owner = {}
    for i, (_, text, block) in enumerate(math[0]):
        src = wrap_displaymath(text, None, False) if block else f"${text}$"
        for line in [*src.splitlines(), r"\par"]:
            lines.append(line)
            owner[len(lines)] = i
    lines.append(r"\end{document}")
    (tmp_path / "math.tex").write_text("\n".join(lines) + "\n")
    subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "math.tex"],
        cwd=tmp_path,
        capture_output=True,
        timeout=600,
    )
    log = (tmp_path / "math.log").read_text(errors="replace")
    errors = [
        (m.group(1), math[0][owner[int(m.group(2))]][:2])
        for m in re.finditer(r"^! (.*)\n(?:.*\n){0,8}?l\.(\d+)", log, re.M)
    ]
    assert errors == []
    assert "! " not in log and (tmp_path / "math.pdf").exists()
