"""MyST Markdown as plain Markdown, for notebooks read outside the book.

A chapter's markdown uses MyST: roles (``{cite}``, ``{eq}``, ``{prf:ref}``,
``{ref}``, ``{doc}``, ``{math}``), directives (``{math}``, theorem-like blocks of
sphinx-proof, ``{exercise}`` and ``{solution}`` of sphinx-exercise, admonitions,
figures), targets ``(label)=`` and the book's TeX macros (``\\R``, ``\\S``). A plain
Jupyter or Colab front end shows all of them as raw text. :func:`convert` rewrites
them as CommonMark with inline HTML anchors and TeX that MathJax and KaTeX read:

* a reference shows the text the HTML book shows for it (``Theorem 2.1``,
  ``(3.4)``) when :class:`Index` was read from a built book, and the target's title
  otherwise; a citation shows ``(Author et al., 2024)``. Where they lead follows
  :meth:`Index.link`: with the book's address (``html.baseurl``) a link to its
  page; without one, a notebook may be read anywhere (downloaded alone or in a
  chapter's zip, away from the site), so a target in the same notebook is an
  anchor link in it, a target on another page is named in plain text (the page's
  title), and a citation links to the notebook's own list of references
  (:func:`references_markdown`), never a relative path that would lead nowhere;
* a theorem-like block becomes a paragraph that starts with its bold name and
  number, a proof folds (``<details open>``, open at first) and ends with ∎, a
  numbered equation carries ``\\tag{...}``;
* the macros are expanded (``\\R`` -> ``\\mathbb{R}``).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from pathlib import Path

OPEN = re.compile(r"^(\s*)(`{3,}|:{3,})\{([\w:-]+)\}[ \t]*(.*)$")
PLAIN_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")


def _closes(fence: str, line: str) -> bool:
    """Whether ``line`` (stripped) closes the code fence opened by ``fence``."""
    return set(line) == {fence[0]} and len(line) >= len(fence)


OPTION = re.compile(r"^:([\w-]+):[ \t]*(.*)$")
ROLE = re.compile(r"\{([\w:-]+)\}`([^`]*)`")
TARGET = re.compile(r"^\(([\w:.-]+)\)=\s*$")
# a MyST comment line (``% ...``): nothing for a reader
COMMENT = re.compile(r"^%(\s|$)")
DOLLAR_LABEL = re.compile(r"^(\s*\$\$.*\$\$)\s*\(([\w:.-]+)\)\s*$")
EXPLICIT = re.compile(r"^(.*?)\s*<([^<>]+)>$")

PROOF_KINDS = {
    "algorithm": "Algorithm",
    "axiom": "Axiom",
    "conjecture": "Conjecture",
    "corollary": "Corollary",
    "criterion": "Criterion",
    "definition": "Definition",
    "example": "Example",
    "lemma": "Lemma",
    "observation": "Observation",
    "property": "Property",
    "proposition": "Proposition",
    "remark": "Remark",
    "theorem": "Theorem",
    "assumption": "Assumption",
}
ADMONITIONS = {
    "note",
    "tip",
    "hint",
    "important",
    "warning",
    "caution",
    "attention",
    "danger",
    "error",
    "seealso",
}


@dataclass
class Target:
    """Where a label points in the book: a page, an anchor, the text of a link."""

    page: str  # docname, e.g. "book/modelling"
    anchor: str  # "" for the page itself
    text: str
    number: str = ""  # "2.1" when read from the built book
    word: str = ""  # "Theorem", "Exercise": the name a numbered reference shows


@dataclass
class Index:
    """The book's labels, citations and pages, and where the notebooks link them."""

    base_url: str = ""  # the book's address ("" -> links relative to notebooks/)
    targets: dict[str, Target] = field(default_factory=dict)
    citations: dict[str, tuple[str, str]] = field(default_factory=dict)
    titles: dict[str, str] = field(default_factory=dict)  # docname -> title
    macros: dict[str, str] = field(default_factory=dict)  # "\\R" -> "\\mathbb{R}"
    unresolved: list[str] = field(default_factory=list)
    # key -> the entry as Markdown, and the keys cited since :meth:`start` (in order)
    references: dict[str, str] = field(default_factory=dict)
    cited: list[str] = field(default_factory=list)

    def url(self, page: str, anchor: str = "") -> str:
        """The address of a page of the book (``base_url`` must be set)."""
        if not self.base_url:
            raise ValueError("base_url: a page of the book has no address without it")
        base = self.base_url.rstrip("/") + "/"
        return f"{base}{page}.html" + (f"#{anchor}" if anchor else "")

    def start(self) -> None:
        """A new notebook: no citation yet."""
        self.cited.clear()

    def link(self, text: str, page: str, anchor: str = "", here: str = "") -> str:
        """``text`` leading to ``page#anchor`` from a notebook of the page ``here``.

        With ``base_url``: a link to the book's page. Without it, nothing outside
        the notebook has an address that is sure to exist where it is read: a target
        of the same page is an anchor link inside the notebook (its ``<a id>``), a
        page itself is its title, and a target on another page is named in plain
        text with that page's title, e.g. ``Theorem 2.1 (in “Clustering”)``."""
        if self.base_url:
            return f"[{text}]({self.url(page, anchor)})"
        if page == here:
            return f"[{text}](#{anchor})" if anchor else text
        title = self.titles.get(page, page)
        if text.strip() in (title, f"“{title}”"):
            return f"“{title}”"
        return f"{text} (in “{title}”)"

    def cite_link(self, label: str, key: str) -> str:
        """A citation: to the book's references with ``base_url``, else to the entry
        in the list at the end of the notebook (:func:`references_markdown`)."""
        if self.base_url:
            return f"[{label}]({self.url('book/references')})"
        if key not in self.references:
            return label
        if key not in self.cited:
            self.cited.append(key)
        return f"[{label}](#{ref_anchor(key)})"


def ref_anchor(key: str) -> str:
    """The anchor of a reference in a notebook's list of references."""
    return "ref-" + re.sub(r"[^\w-]", "-", key)


def references_markdown(index: Index) -> str | None:
    """The works cited in a notebook since :meth:`Index.start`, each with its anchor,
    as the last cell of a notebook read without the book's site (None: no citation
    or the citations link to the book's references page)."""
    if index.base_url or not index.cited:
        return None
    entries = []
    for key in index.cited:
        authors, year = index.citations.get(key, (key, ""))
        label = f"{authors}, {year}" if year else authors
        entries.append(
            f"{_anchor(ref_anchor(key))}**{label}.** {index.references[key]}"
        )
    return "## References\n\n" + "\n\n".join(entries)


SOURCE_LINK = re.compile(r"\[([^\]]*)\]\(([^)\s#]+?\.(?:md|ipynb))(#[^)\s]*)?\)")


def relink(text: str, index: Index, folder: str) -> str:
    """Markdown links of a file in the book's ``folder`` (e.g. ``book/assignments``)
    to the book's sources (``[The circle](../circle.md)``) as :meth:`Index.link`
    gives them: to the built page, or its title in plain text."""
    import posixpath

    def fix(m: re.Match) -> str:
        target = m.group(2)
        if re.match(r"[a-z][a-z0-9+.-]*:|/", target, re.I):
            return m.group(0)
        doc = posixpath.normpath(posixpath.join(folder, target)).rsplit(".", 1)[0]
        return index.link(m.group(1), doc, (m.group(3) or "#")[1:])

    return SOURCE_LINK.sub(fix, text)


def expand_macros(text: str, macros: dict[str, str]) -> str:
    """The book's TeX macros replaced by their definitions (``\\R`` but not
    ``\\Rightarrow``; ``\\\\R`` is a line break and an R)."""
    for name, value in macros.items():
        pattern = re.compile(r"(?<!\\)" + re.escape(name) + r"(?![A-Za-z])")
        text = pattern.sub(lambda _m, v=value: "{" + v + "}", text)
    return text


def _split_explicit(content: str) -> tuple[str | None, str]:
    m = EXPLICIT.match(content.strip())
    if m and m.group(1):
        return m.group(1), m.group(2).strip()
    return None, content.strip()


def _cite(keys: str, index: Index, textual: bool) -> str:
    parts = []
    for key in (k.strip() for k in keys.split(",") if k.strip()):
        authors, year = index.citations.get(key, (key, ""))
        if key not in index.citations:
            index.unresolved.append(f"cite:{key}")
        label = f"{authors} ({year})" if textual else f"{authors}, {year}"
        if not year:
            label = authors
        parts.append(index.cite_link(label, key))
    return "; ".join(parts) if textual else "(" + "; ".join(parts) + ")"


def _ref(kind: str, content: str, index: Index, page: str) -> str:
    text, label = _split_explicit(content)
    if kind == "doc":
        doc = label if "/" in label else f"{page.rsplit('/', 1)[0]}/{label}"
        doc = doc.removesuffix(".md")
        title = index.titles.get(doc)
        if title is None:
            index.unresolved.append(f"doc:{label}")
        return index.link(text or title or label, doc, "", page)
    target = index.targets.get(label)
    if target is None:
        index.unresolved.append(f"{kind}:{label}")
        return text or label
    shown = text or unlinked(convert_roles(target.text, index, target.page))
    if kind == "eq":
        shown = f"({target.number})" if target.number else text or "the equation"
    return index.link(shown, target.page, target.anchor, page)


def unlinked(text: str) -> str:
    """Markdown links as their text (a link's text cannot hold another link)."""
    return re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)


ROLE_OR_CODE = re.compile(r"\{([\w:-]+)\}`([^`]*)`|(`+)")


def convert_roles(text: str, index: Index, page: str) -> str:
    """Every role of some prose; inline code (which may span lines) is left as it
    is, roles in it included."""
    out, pos = [], 0
    while True:
        m = ROLE_OR_CODE.search(text, pos)
        if m is None:
            out.append(text[pos:])
            return "".join(out)
        if m.group(3):  # a code span: to the next run of as many backticks
            run = m.group(3)
            close = re.compile(r"(?<!`)" + run + r"(?!`)").search(text, m.end())
            end = close.end() if close else m.end()
            out.append(text[pos:end])
            pos = end
            continue
        out.append(text[pos : m.start()] + _role(m.group(1), m.group(2), index, page))
        pos = m.end()


def _role(name: str, content: str, index: Index, page: str) -> str:
    if name in ("cite", "cite:p", "cite:ps"):
        return _cite(content, index, textual=False)
    if name in ("cite:t", "cite:ts"):
        return _cite(content, index, textual=True)
    if name in ("eq", "prf:ref", "ref", "numref", "doc", "ref:exercise"):
        return _ref(name, content, index, page)
    if name == "math":
        return f"${content}$"
    if name in ("sub", "sup"):
        return f"<{name}>{html.escape(content)}</{name}>"
    if name in ("code", "kbd", "file", "command", "program", "samp"):
        return f"`{content}`"
    if name not in ("abbr", "term", "dfn", "guilabel", "menuselection", "index"):
        index.unresolved.append(f"role {name}:{content}")
    return content


def _options(lines: list[str]) -> tuple[dict[str, str], list[str]]:
    options: dict[str, str] = {}
    i = 0
    while i < len(lines):
        m = OPTION.match(lines[i])
        if not m:
            break
        options[m.group(1)] = m.group(2).strip()
        i += 1
    return options, lines[i:]


def _close(lines: list[str], start: int, marker: str) -> int:
    """The index of the line that closes the directive opened with ``marker``."""
    depth = 0
    for j in range(start, len(lines)):
        m = OPEN.match(lines[j])
        if m and m.group(2) == marker:
            depth += 1
        elif lines[j].strip() == marker:
            if depth == 0:
                return j
            depth -= 1
    raise ValueError(f"a directive opened with {marker!r} is never closed")


def _anchor(label: str | None) -> str:
    return f'<a id="{html.escape(label)}"></a>' if label else ""


def _math(body: str, label: str | None, index: Index) -> str:
    body = "\n".join(line for line in body.strip().splitlines() if line.strip())
    if ("&" in body or "\\\\" in body) and "\\begin{" not in body:
        # Sphinx sets such a body in a split environment; bare, MathJax and KaTeX
        # in Jupyter stop at the first & ("Misplaced &")
        body = f"\\begin{{aligned}}\n{body}\n\\end{{aligned}}"
    tag = ""
    if label and label in index.targets and index.targets[label].number:
        tag = f" \\tag{{{index.targets[label].number}}}"
    anchor = _anchor(f"equation-{label}" if label else None)
    head = f"{anchor}\n\n" if anchor else ""
    return f"{head}$$\n{body}{tag}\n$$"


def _directive(
    name: str, arg: str, options: dict[str, str], body: str, index: Index, page: str
) -> str:
    label = options.get("label")
    inner = convert(body, index, page, macros=False).strip()
    if name == "math":
        return _math(body, label, index)
    kind = name.removeprefix("prf:")
    if name.startswith("prf:") and kind == "proof":
        # foldable like the book's proofs, open until the reader folds it
        return (
            "<details open><summary><em>Proof.</em></summary>\n\n"
            f'{inner}\n\n<p align="right">∎</p>\n\n</details>'
        )
    if name.startswith("prf:") or name == "exercise":
        word = "Exercise" if name == "exercise" else PROOF_KINDS.get(kind, kind.title())
        target = index.targets.get(label or "")
        number = f" {target.number}" if target and target.number else ""
        title = f" ({convert_roles(arg, index, page)})" if arg else ""
        return f"{_anchor(label)}**{word}{number}{title}.** {inner}"
    if name in ("solution", "solution-start"):
        return f"<details><summary>Solution</summary>\n\n{inner}\n\n</details>"
    if name in ("figure", "image"):
        alt = options.get("alt", "")
        src = arg.strip()
        if not re.match(r"[a-z]+://", src) and not index.base_url:
            # no address for the image: say where the book shows it
            img = f"*Figure: {alt or src} (in “{index.titles.get(page, page)}”).*"
            return (
                f"{_anchor(label)}{img}\n\n{inner}" if inner else _anchor(label) + img
            )
        if not re.match(r"[a-z]+://", src):
            src = index.url(f"{page.rsplit('/', 1)[0]}/{src}").removesuffix(".html")
        img = f"![{alt}]({src})"
        return f"{_anchor(label)}{img}\n\n{inner}" if inner else _anchor(label) + img
    if name == "admonition" or name in ADMONITIONS:
        title = convert_roles(arg, index, page) if arg else name.title()
        if name == "seealso":
            title = "See also"
        return f"**{title}.** {inner}"
    if name in ("code-block", "code", "sourcecode"):
        return f"```{arg}\n{body.strip()}\n```"
    # any other directive: its title and body as prose
    title = f"**{convert_roles(arg, index, page)}.** " if arg else ""
    return f"{_anchor(label)}{title}{inner}"


def convert(text: str, index: Index, page: str, macros: bool = True) -> str:
    """One markdown cell of a chapter (``page``, e.g. ``book/modelling``) as plain
    Markdown. Fenced code that is not a directive is left as it is."""
    lines = text.splitlines()
    if lines and lines[0].strip() == "---":  # front matter: nothing for a reader
        end = next((k for k in range(1, len(lines)) if lines[k].strip() == "---"), None)
        if end is not None:
            lines = lines[end + 1 :]
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        m = OPEN.match(line)
        if m:
            marker, name, arg = m.group(2), m.group(3), m.group(4).strip()
            j = _close(lines, i + 1, marker)
            options, body = _options(lines[i + 1 : j])
            block = _directive(name, arg, options, "\n".join(body), index, page)
            out.extend(["", *block.splitlines(), ""])
            i = j + 1
            continue
        fence = PLAIN_FENCE.match(line)
        if fence:
            tick = fence.group(1)
            j = i + 1
            while j < len(lines) and not lines[j].strip().startswith(tick):
                j += 1
            out.extend(lines[i : j + 1])
            i = j + 1
            continue
        if COMMENT.match(line):
            i += 1
            continue
        t = TARGET.match(line)
        if t:
            out.append(_anchor(t.group(1)))
            i += 1
            continue
        d = DOLLAR_LABEL.match(line)
        if d:
            label = d.group(2)
            number = index.targets.get(label, Target("", "", "")).number
            math = d.group(1).rstrip()
            if number:
                math = math[:-2] + f" \\tag{{{number}}}$$"
            out.extend([_anchor(f"equation-{label}"), "", math])
            i += 1
            continue
        prose = [line]
        i += 1
        while i < len(lines) and not (
            OPEN.match(lines[i])
            or PLAIN_FENCE.match(lines[i])
            or TARGET.match(lines[i])
            or DOLLAR_LABEL.match(lines[i])
            or COMMENT.match(lines[i])
        ):
            prose.append(lines[i])
            i += 1
        out.extend(convert_roles("\n".join(prose), index, page).split("\n"))
    result = "\n".join(out)
    result = re.sub(r"\n{3,}", "\n\n", result).strip("\n")
    if macros:
        result = expand_macros(result, index.macros)
    return result


# ---------------------------------------------------------------------- the index
SOURCE_LABEL = re.compile(r"^:label:\s*(\S+)")


def _closes(fence: str, line: str) -> bool:
    """Whether ``line`` (stripped) closes the code fence opened by ``fence``."""
    return set(line) == {fence[0]} and len(line) >= len(fence)


def page_title(path: Path) -> str:
    """The first level-1 heading of a MyST page, outside code fences (a chapter opens
    with a fenced YAML cell of macros whose comments start with ``# ``), or the file's
    stem when it has none."""
    fence = None
    for line in path.read_text(encoding="utf-8").splitlines():
        m = PLAIN_FENCE.match(line)
        if m and fence is None:
            fence = m[1]
        elif m and _closes(fence, line.strip()):
            fence = None
        elif fence is None and line.startswith("# "):
            return line[2:].strip()
    return path.stem


def _entries(bib: Path) -> dict[str, str]:
    """``key -> the entry as Markdown`` (pybtex's plain style, the book's labels)."""
    from pybtex.database import parse_file
    from pybtex.plugin import find_plugin

    from .bibstyle import AuthorYearStyle, register

    register()
    backend = find_plugin("pybtex.backends", "markdown")()
    entries = parse_file(str(bib)).entries.values()
    return {
        e.key: " ".join(e.text.render(backend).split())
        for e in AuthorYearStyle().format_entries(entries)
    }


def _citations(bib: Path) -> dict[str, tuple[str, str]]:
    """``key -> ("Geshkovski et al.", "2023")`` from the book's BibTeX file."""
    from pybtex.database import parse_file

    from .bibstyle import cited_names

    return {
        key: (cited_names(entry), entry.fields.get("year", ""))
        for key, entry in parse_file(str(bib)).entries.items()
    }


def _source_targets(path: Path, page: str) -> dict[str, Target]:
    """Labels of one MyST page with the text a reader can follow without numbers."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found: dict[str, Target] = {}
    for k, line in enumerate(lines):
        m = OPEN.match(line)
        if m:
            name, arg = m.group(3), m.group(4).strip()
            opts, _ = _options(lines[k + 1 : k + 12])
            label = opts.get("label")
            if not label:
                continue
            if name == "math":
                found[label] = Target(page, f"equation-{label}", "")
            else:
                kind = name.removeprefix("prf:")
                word = (
                    "Exercise"
                    if name == "exercise"
                    else PROOF_KINDS.get(kind, kind.title())
                )
                found[label] = Target(page, label, arg or word, word=word)
        t = TARGET.match(line)
        if t:
            heading = next(
                (x.lstrip("#").strip() for x in lines[k + 1 : k + 4] if x.strip()), ""
            )
            found[t.group(1)] = Target(page, t.group(1), heading or t.group(1))
        d = DOLLAR_LABEL.match(line)
        if d:
            found[d.group(2)] = Target(page, f"equation-{d.group(2)}", "")
    return found


CAPTION = re.compile(
    r'id="(?P<id>[^"]+)"[^>]*>\s*(?:<p class="admonition-title">\s*)?'
    r'<span class="caption-number">(?P<text>[^<]+?)\s*</span>'
)
EQNO = re.compile(
    r'<span class="eqno">\((?P<num>[^)]+)\)<a class="headerlink" '
    r'href="#(?P<id>[^"]+)"'
)


def _html_numbers(page_html: str) -> dict[str, str]:
    """anchor -> number shown on a built page (``Theorem 2.1`` -> ``2.1``)."""
    numbers = {}
    for m in CAPTION.finditer(page_html):
        numbers[m.group("id")] = m.group("text").split()[-1]
    for m in EQNO.finditer(page_html):
        numbers[m.group("id")] = m.group("num")
    return numbers


def macros(root: Path) -> dict[str, str]:
    """The TeX macros of the book (``_config.yml``'s MathJax ``tex.macros``)."""
    import yaml

    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    tex = config["sphinx"]["config"].get("mathjax3_config", {}).get("tex", {})
    return {f"\\{k}": v for k, v in (tex.get("macros") or {}).items()}


def book_index(
    root: Path, pages: list[str], base_url: str = "", html_dir: Path | None = None
) -> Index:
    """The index of the book's pages (docnames), numbered from the built HTML when
    ``html_dir`` holds it."""
    index = Index(base_url=base_url, macros=macros(root))
    bib = root / "book" / "references.bib"
    if bib.exists():
        index.citations = _citations(bib)
        index.references = _entries(bib)
    for page in pages:
        path = root / f"{page}.md"
        if not path.exists():
            continue
        index.titles[page] = page_title(path)
        targets = _source_targets(path, page)
        built = html_dir / f"{page}.html" if html_dir is not None else None
        if built is not None and built.exists():
            numbers = _html_numbers(built.read_text(encoding="utf-8"))
            for target in targets.values():
                number = numbers.get(target.anchor, "")
                target.number = number
                if number and target.word:
                    target.text = f"{target.word} {number}"
        index.targets.update(targets)
    return index
