"""The page check's rules on small notebooks: each fails on the defect it names."""

from tools.check_html import notebook_failures, widget_failures

PNG = "iVBORw0KGgo="  # the rules compare outputs, they do not decode them
VIEW = "application/vnd.jupyter.widget-view+json"


def _figure(png=PNG):
    data = {"text/plain": "<Figure size 640x480 with 1 Axes>"}
    if png is not None:
        data["image/png"] = png
    return {"output_type": "display_data", "data": data, "metadata": {}}


def _cell(source, *outputs, tags=()):
    return {
        "cell_type": "code",
        "source": source,
        "metadata": {"tags": list(tags)},
        "outputs": list(outputs),
    }


def _notebook(*cells, state=None):
    meta = {}
    if state is not None:
        meta["widgets"] = {
            "application/vnd.jupyter.widget-state+json": {"state": state}
        }
    return {"cells": list(cells), "metadata": meta}


def _widget(*outputs):
    """A saved VBox (id "box") holding an output area (id "out") and its view."""
    state = {
        "box": {
            "model_name": "VBoxModel",
            "state": {"children": ["IPY_MODEL_slider", "IPY_MODEL_out"]},
        },
        "slider": {"model_name": "FloatSliderModel", "state": {}},
        "out": {"model_name": "OutputModel", "state": {"outputs": list(outputs)}},
    }
    view = {
        "output_type": "display_data",
        "data": {VIEW: {"model_id": "box"}, "text/plain": "VBox(...)"},
        "metadata": {},
    }
    return state, view


def test_a_chapter_with_its_figures_passes():
    state, view = _widget(_figure("AAAA"))
    nb = _notebook(
        _cell("fig, ax = plt.subplots()\nax.plot(x)\nplt.show()", _figure()),
        _cell("print(1)", {"output_type": "stream", "name": "stdout", "text": "1\n"}),
        _cell("w = explorer()\ndisplay(w.widget)", view),
        _cell("w.fig", _figure("BBBB")),
        state=state,
    )
    failures, n_images = notebook_failures(nb, "ch")
    assert failures == []
    assert n_images == 2


def test_a_figure_cell_without_image_fails():
    nb = _notebook(_cell("fig = energy_figure(t, E)\nplt.show()"))
    failures, n_images = notebook_failures(nb, "ch")
    assert n_images == 0
    assert len(failures) == 1 and "makes a figure but shows no image" in failures[0]


def test_a_comment_naming_a_plot_call_makes_no_figure_cell():
    nb = _notebook(_cell("plt.close(w.fig)  # not shown again by plt.show()"))
    assert notebook_failures(nb, "ch")[0] == []


def test_a_hidden_cell_is_exempt():
    nb = _notebook(_cell("fig = plot_decay(t, y)", tags=["remove-output"]))
    assert notebook_failures(nb, "ch")[0] == []


def test_a_figure_shown_as_text_fails():
    nb = _notebook(_cell("w.fig", _figure(png=None)))
    failures, _ = notebook_failures(nb, "ch")
    assert any("shows a figure as text only" in f for f in failures)


def test_stderr_and_errors_fail():
    warn = {"output_type": "stream", "name": "stderr", "text": "RuntimeWarning: x"}
    err = {"output_type": "error", "ename": "ValueError", "evalue": "", "traceback": []}
    failures, _ = notebook_failures(_notebook(_cell("f()", warn, err)), "ch")
    assert len(failures) == 2
    assert "writes to stderr" in failures[0] and "holds an error" in failures[1]


def test_the_same_image_twice_fails():
    nb = _notebook(
        _cell("fig = particles_figure(r)\nplt.show()", _figure(), _figure()),
    )
    failures, _ = notebook_failures(nb, "ch")
    assert len(failures) == 1 and "shows again an image of cell 1" in failures[0]


def test_a_widget_snapshot_without_image_fails():
    state, view = _widget(_figure(png=None))
    failures = widget_failures(state, ["box"], "ch")
    assert any("widget output out shows a figure as text only" in f for f in failures)
    assert any("the snapshot of widget box has no image" in f for f in failures)
    nb = _notebook(_cell("display(w.widget)", view), state=state)
    assert notebook_failures(nb, "ch")[0] == failures


def test_a_widget_writing_to_stderr_fails():
    warn = {"output_type": "stream", "name": "stderr", "text": "RuntimeWarning"}
    state, _ = _widget(_figure(), warn)
    failures = widget_failures(state, ["box"], "ch")
    assert len(failures) == 1 and "writes to stderr" in failures[0]


def test_a_widget_without_output_area_needs_no_image():
    state = {"bar": {"model_name": "FloatProgressModel", "state": {}}}
    assert widget_failures(state, ["bar"], "ch") == []


def test_a_page_with_fewer_images_than_the_notebook_fails(tmp_path):
    """The page itself must carry every image output: a build whose kernel used a
    non-inline backend, or whose images were not copied, shows fewer."""
    import json

    from tools.check_html import static_failures

    sources, build = tmp_path / "book", tmp_path / "_build"
    sources.mkdir()
    (sources / "ch.md").write_text(
        "---\nkernelspec:\n  display_name: Python 3\n  language: python\n"
        "  name: python3\n---\n\n# Ch\n\n```{code-cell} ipython3\n"
        "fig, ax = plt.subplots()\nplt.show()\n```\n"
    )
    executed = build / "jupyter_execute" / "book" / "ch.ipynb"
    executed.parent.mkdir(parents=True)
    executed.write_text(
        json.dumps(_notebook(_cell("fig, ax = plt.subplots()\nplt.show()", _figure())))
    )
    page = tmp_path / "ch.html"
    page.write_text("<html><body><p>no image here</p></body></html>")
    failures, _ = static_failures(page, build, sources)
    assert failures == ["ch.html: 0 images on the page for 1 image outputs"]
    page.write_text(
        '<html><body><img alt="" src="../_images/ch_1_0.png" /></body></html>'
    )
    assert static_failures(page, build, sources)[0] == []


def test_the_student_edition_is_checked_against_its_own_sources(tmp_path):
    from tools.check_html import sources_and_build

    main_html = tmp_path / "_build" / "html"
    main_html.mkdir(parents=True)
    student = tmp_path / "_build" / "student"
    for sub in ("html", "src/book", "src/_build"):
        (student / sub).mkdir(parents=True)
    assert sources_and_build(student / "html") == (
        student / "src" / "book",
        student / "src" / "_build",
    )
    sources, build = sources_and_build(main_html)
    assert build == tmp_path / "_build" and sources.name == "book"


def test_a_page_that_shows_a_rubric_or_a_model_answer_fails():
    from tools.check_html import instructor_lines, leak_failures

    lines = instructor_lines()
    assert len(lines) >= 10  # every assignment has a rubric and a model answer
    line = lines[0]
    words = line.split()
    page = f"<p>{' '.join(words[:3])} <em>{' '.join(words[3:])}</em></p>"
    assert leak_failures(page, "guide.html", lines) == [
        f"guide.html: shows instructors' material: {line[:60]!r}"
    ]
    assert leak_failures("<p>The assignments of this part.</p>", "p.html", lines) == []


# the text of a page: raw TeX, literal dollars, images without a description, stale
# sentences (tools.check_html on the HTML as Chromium reads it with scripts disabled,
# tools.browser_check once they ran); the formulas are typeset in the HTML, as KaTeX
# writes them when the book is built (bookext/katex.py), the TeX source kept in the
# MathML's annotation, which no browser shows
def _typeset(tex: str, glyphs: str) -> str:
    return (
        "<span class='katex'><span class='katex-mathml'><math><semantics><mrow>"
        f"<mi>{glyphs}</mi></mrow><annotation encoding='application/x-tex'>{tex}"
        "</annotation></semantics></math></span><span class='katex-html' "
        f"aria-hidden='true'><span class='mord'>{glyphs}</span></span></span>"
    )


GOOD_PAGE = (
    "<html><body><main><section id='proof'><p>Here "
    "<span class='math notranslate nohighlight'>"
    + _typeset("\\langle x, y\\rangle \\le 1", "⟨x, y⟩ ≤ 1")
    + "</span>"
    " and the code <code>$HOME \\frac</code>.</p>"
    # a signature's default value is code, in spans of the class "pre"
    "<dl><dt class='sig'><em class='sig-param'><span class='pre'>ylabel='$1</span> "
    "<span class='pre'>-</span> <span class='pre'>\\min_{i,j}$'</span></em></dt></dl>"
    "<div class='math notranslate nohighlight'>"
    "<span class='katex-display'>" + _typeset("\\frac12", "½") + "</span></div>"
    "<script>var a = '$x$ \\\\frac';</script>"
    "<img src='../_images/abc.png' alt='Energy against time for beta = 4.'>"
    "</section></main></body></html>"
)
# a formula cut by a list: its halves print as text
GARBLED_PAGE = GOOD_PAGE.replace(
    "<p>Here",
    "<p>For unit x, $P_xy - P_{x'}y' = P_x(y - y') + \\langle x' - x, y'\\rangle x'</p>"
    "<ul><li><p>\\langle x, y'\\rangle(x' - x)$, so</p></li></ul><p>Here",
)


def test_a_page_without_raw_tex_passes():
    from tools.check_html import image_alt_failures, prose_failures

    assert prose_failures(GOOD_PAGE, "p.html") == []
    assert image_alt_failures(GOOD_PAGE, "p.html") == []


def test_a_page_with_a_cut_formula_fails():
    from tools.check_html import prose_failures

    failures = prose_failures(GARBLED_PAGE, "p.html")
    assert len(failures) == 2, failures
    assert all(f.startswith("p.html: ") and "near #proof" in f for f in failures)
    assert "\\langle" in failures[0] or "$" in failures[0]


def test_a_formula_left_for_a_script_to_typeset_fails():
    # client-side MathJax: the first paint (and a reader without scripts) sees TeX
    from tools.check_html import formula_counts, prose_failures

    for tex in ("\\(\\langle x, y\\rangle\\)", "\\[x = 1\\]", "\\(x\\)", "$$x$$"):
        page = GOOD_PAGE.replace(
            "<span class='math notranslate nohighlight'>",
            f"<span class='math notranslate nohighlight'>{tex}</span><span>",
        )
        (failure,) = prose_failures(page, "p.html")
        assert failure.startswith("p.html: ") and "near #proof" in failure, failure
        assert formula_counts(page) == (2, 1, 0)  # one formula is TeX
    assert formula_counts(GOOD_PAGE) == (2, 2, 0)
    # the TeX source in a typeset formula's annotation is not text a reader sees,
    # but the same TeX anywhere else is
    assert prose_failures(GOOD_PAGE.replace("annotation", "span"), "p.html")


def test_literal_dollars_in_a_bibliography_fail():
    from tools.check_html import prose_failures

    page = "<html><body><p id='r1'>Almost global consensus on the $n$-sphere.</p>"
    (failure,) = prose_failures(page + "</body></html>", "bib.html")
    assert "a literal $...$" in failure and "#r1" in failure


def test_an_image_named_by_its_file_fails():
    from tools.check_html import image_alt_failures

    for alt in (
        "",
        "../_images/f0c553a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7.png",
        "f0c553a1b2c3d4e5f6a7b8c9d0e1f2a3",
        "figure.png",
    ):
        page = f"<html><body><img src='../_images/x.png' alt='{alt}'></body></html>"
        (failure,) = image_alt_failures(page, "p.html")
        assert "no description" in failure
    assert image_alt_failures("<img src='a.png'>", "p.html")  # no alt at all


def test_stale_sentences_and_absent_solutions_fail():
    from tools.check_html import stale_failures

    stale = "<p>In the HTML pages each widget shows its initial state.</p>"
    assert stale_failures(stale, "p.html", has_solutions=True)
    dup = "<p>For readers of the static page, the figure for the default values.</p>"
    assert stale_failures(dup, "p.html", has_solutions=True)
    promise = "<p>Solutions of exercises are folded; click to open them.</p>"
    assert stale_failures(promise, "p.html", has_solutions=True) == []
    assert stale_failures(promise, "p.html", has_solutions=False)
    qualified = (
        "<p>Where an edition includes the solutions, they are folded (click to open "
        "them); the student edition leaves them out.</p>"
    )
    assert stale_failures(qualified, "p.html", has_solutions=False) == []


def test_a_redirect_page_is_followed_to_its_target_not_opened(tmp_path):
    """Jupyter Book's site index only redirects (an HTML refresh): opening it in the
    browser races with the navigation, so the check reads its target instead."""
    from tools.check_html import redirect_target

    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "intro.html").write_text("<html><body><p>Intro</p></body>")
    index = tmp_path / "index.html"
    index.write_text('<meta http-equiv="Refresh" content="0; url=book/intro.html" />')
    assert redirect_target(index) == (tmp_path / "book" / "intro.html").resolve()
    assert redirect_target(tmp_path / "book" / "intro.html") is None
    # a page with content and a refresh in it is a page: it is opened
    long = tmp_path / "long.html"
    long.write_text(index.read_text() + "<p>text</p>" * 400)
    assert redirect_target(long) is None


def test_the_student_check_skips_only_pages_whose_article_is_the_readers(tmp_path):
    """The student edition's check leaves to the reader edition's the pages whose
    article is the same there (their title and navigation name the edition), and
    reads every page whose text differs, or that the reader edition lacks."""
    from tools.check_html import same_article

    def page(folder, title, article):
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "api.html"
        path.write_text(
            f"<html><head><title>{title}</title></head><body><nav>{title}</nav>"
            f'<article class="bd-article" role="main">{article}</article></body></html>'
        )
        return path

    article = "<h1>attnlib.sphere</h1><p>The sphere.</p>"
    reader = page(tmp_path / "reader", "Book", article)
    student = page(tmp_path / "student", "Book (student edition)", article)
    assert same_article(student, reader)
    changed = page(tmp_path / "changed", "Book", article.replace("The", "A"))
    assert not same_article(student, changed)
    assert not same_article(student, tmp_path / "missing" / "api.html")
    no_article = tmp_path / "bare.html"
    no_article.write_text("<html><body><p>The sphere.</p></body></html>")
    assert not same_article(no_article, no_article)


def _edition_page(folder, name, article, title="Book", sheets=("theme.css",)):
    folder.mkdir(parents=True, exist_ok=True)
    links = "".join(f'<link rel="stylesheet" href="_static/{s}?v=1" />' for s in sheets)
    path = folder / name
    path.write_text(
        f"<html><head><title>{title}</title>{links}</head><body><nav>{title}</nav>"
        f'<article class="bd-article" role="main">{article}</article></body></html>'
    )
    return path


READER_ARTICLE = (
    '<h1>Clustering</h1><p class="lead">Text <a class="reference internal" '
    'href="#x">a link</a>.</p><details class="solution"><p>The proof.</p></details>'
    '<div class="cell_output"><pre style="color: #333">0.5</pre></div>'
)


def test_colours_are_left_to_the_reader_edition_only_for_elements_styled_as_there(
    tmp_path,
):
    """A chapter of the student edition is its reader page without the solutions:
    axe-core's colour rules, run on the reader page, measured every element of it
    when each element is of a kind (tag, classes, inline style) found there, with
    the same stylesheets; any other element, stylesheet or missing page runs them
    again."""
    from tools.check_html import colours_checked_there

    reader = _edition_page(tmp_path / "r", "c.html", READER_ARTICLE)
    stripped = READER_ARTICLE.replace(
        '<details class="solution"><p>The proof.</p></details>', ""
    )
    student = _edition_page(tmp_path / "s", "c.html", stripped, "Book (student)")
    assert colours_checked_there(student, reader)
    # an element of a new kind: a class, an inline colour, a tag
    for new in (
        '<p class="exercise-note">Try it.</p>',
        '<pre style="color: #999">0.5</pre>',
        "<mark>note</mark>",
    ):
        other = _edition_page(tmp_path / "n", "c.html", stripped + new)
        assert not colours_checked_there(other, reader), new
    # the same elements under another stylesheet, or no reader page
    restyled = _edition_page(tmp_path / "t", "c.html", stripped, sheets=("dark.css",))
    assert not colours_checked_there(restyled, reader)
    assert not colours_checked_there(student, tmp_path / "missing" / "c.html")


EXPLORER = (
    '<div class="attnlib-explorer" id="e1"><img class="attnlib-explorer-frame" '
    'src="../_images/explorer/a.png" alt="The frame.">'
    '<div class="attnlib-explorer-controls" hidden><label for="e1-0">t</label>'
    '<input type="range" id="e1-0" data-axis="0" min="0" max="1" value="0"></div>'
    '<script type="application/json" class="attnlib-explorer-data">'
    '{"frames": ["../_images/explorer/a.png", "../_images/explorer/b.png"]}</script>'
    "<script>/* shows the frame of the values */</script></div>"
)


def _explorer_edition(root, article, frames=None, script="show();", name="c.html"):
    """A chapter ``book/<name>`` of an edition under ``root``, with the files it
    loads: the explorer's frames (name -> bytes) and the book's script."""
    page = _edition_page(root / "book", name, article)
    page.write_text(
        page.read_text().replace(
            "</head>", '<script src="../_static/book.js?v=1"></script></head>'
        )
    )
    (root / "_static").mkdir(parents=True, exist_ok=True)
    (root / "_static" / "book.js").write_text(script)
    (root / "_images" / "explorer").mkdir(parents=True, exist_ok=True)
    for name, data in (frames or {"a.png": b"A", "b.png": b"B"}).items():
        (root / "_images" / "explorer" / name).write_bytes(data)
    return page


def test_explorers_are_left_to_the_reader_edition_only_where_all_is_the_same(
    tmp_path,
):
    """The student check does not drive a chapter's static explorers again when each
    is one of the reader page's byte for byte and every frame and script it loads is
    the same file in both editions: the reader check moved those controls over those
    frames. A changed explorer, a frame missing or different in this edition's
    build, another script, a page without explorers or no reader page drives them."""
    from tools.check_html import explorers, explorers_checked_there

    article = f"<h1>Circle</h1>{EXPLORER}<p>After.</p>"
    reader = _explorer_edition(tmp_path / "r", article + "<p>The proof.</p>")
    student = _explorer_edition(tmp_path / "s", article)
    assert explorers(student.read_text()) == [EXPLORER]
    assert explorers_checked_there(student, reader)
    changed = _explorer_edition(tmp_path / "c", article.replace('max="1"', 'max="2"'))
    assert not explorers_checked_there(changed, reader)
    missing = _explorer_edition(tmp_path / "m", article, {"a.png": b"A"})
    assert not explorers_checked_there(missing, reader)
    other_frame = _explorer_edition(
        tmp_path / "f", article, {"a.png": b"A", "b.png": b"b"}
    )
    assert not explorers_checked_there(other_frame, reader)
    other_script = _explorer_edition(tmp_path / "j", article, script="show(1);")
    assert not explorers_checked_there(other_script, reader)
    bare = _explorer_edition(tmp_path / "b", "<h1>Circle</h1>")
    assert not explorers_checked_there(
        bare, _explorer_edition(tmp_path / "b2", "<h1>Circle</h1>")
    )
    assert not explorers_checked_there(student, tmp_path / "none" / "c.html")


def test_the_student_check_reads_in_the_browser_only_what_differs(
    tmp_path, monkeypatch, capsys
):
    """With --same-as, the pages whose article is the reader's are not opened again;
    the others are, with axe-core's colour rules only where an element is styled
    otherwise than on the reader page."""
    import tools.browser_check as browser_check
    import tools.check_html as check_html

    reader_root, student_root = tmp_path / "r" / "html", tmp_path / "s" / "html"
    stripped = READER_ARTICLE.replace(
        '<details class="solution"><p>The proof.</p></details>', ""
    )
    for name, reader, student in (
        ("same.html", READER_ARTICLE, READER_ARTICLE),
        ("stripped.html", READER_ARTICLE, stripped),
        ("new.html", READER_ARTICLE, stripped + '<p class="new">x</p>'),
    ):
        _edition_page(reader_root / "book", name, reader)
        _edition_page(student_root / "book", name, student, "Book (student)")
    # a chapter with a static explorer, the same in both editions
    explorer = f"<h1>Circle</h1>{EXPLORER}"
    _explorer_edition(reader_root, explorer + "<p>The proof.</p>", name="e.html")
    _explorer_edition(student_root, explorer, name="e.html")
    seen = {}

    def check_pages(
        pages,
        root,
        chromium,
        shots,
        figures,
        doms,
        colours_there=(),
        driven=(),
        noscript=None,
    ):
        seen["pages"] = sorted(p.name for p in pages)
        seen["no colours"] = sorted(p.name for p in colours_there)
        seen["not driven"] = sorted(p.name for p in driven)
        doms.update({p: p.read_text() for p in pages})  # as loaded
        noscript.update({p: p.read_text() for p in pages})
        return [], {}

    monkeypatch.setattr(browser_check, "check_pages", check_pages)
    monkeypatch.setattr(browser_check, "accessibility_pages", lambda p: [])
    monkeypatch.setattr(browser_check, "search_failures", lambda r: ([], 1))
    # these small pages have no footer (its links are checked on their own)
    monkeypatch.setattr(check_html, "footer_failures", lambda p, r, u: [])
    monkeypatch.setattr(browser_check, "chromium_path", lambda: "/usr/bin/true")
    assert check_html.main(student_root, None, reader_root) == 0
    assert seen == {
        "pages": ["e.html", "new.html", "stripped.html"],
        "no colours": ["e.html", "stripped.html"],
        "not driven": ["e.html"],
    }
    assert "1 pages hold the article" in capsys.readouterr().out
    # the reader edition itself is read in full, with every rule
    assert check_html.main(reader_root, None, None) == 0
    assert seen == {
        "pages": ["e.html", "new.html", "same.html", "stripped.html"],
        "no colours": [],
        "not driven": [],
    }


# ---------------------------------------------- what a page loads and links


def _site(tmp_path, scripts: dict[str, int], body: str = "") -> tuple:
    """A site whose chapter page loads scripts of the given sizes."""
    root = tmp_path / "html"
    (root / "book").mkdir(parents=True)
    tags = ""
    for name, size in scripts.items():
        if size >= 0:
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_bytes(b"x" * size)
        tags += f'<script src="../{name}?v=1"></script>'
    page = root / "book" / "c.html"
    page.write_text(f"<html><head>{tags}</head><body>{body}</body></html>")
    return root, page


def test_script_weight_is_measured_and_held_to_its_budget(tmp_path):
    from tools.check_html import script_failures

    root, page = _site(tmp_path, {"_static/a.js": 600, "_static/b.js": 400})
    assert script_failures(page, root, budget=1000) == ([], 1000)
    failures, total = script_failures(page, root, budget=999)
    assert total == 1000 and len(failures) == 1
    assert "over the budget" in failures[0] and "_static/a.js" in failures[0]


def test_a_chapter_over_the_script_budget_fails(tmp_path):
    # the weight of a chapter page today: the theme's, the search's with its index,
    # the book's (no MathJax: the formulas are typeset in the HTML)
    from tools.check_html import SCRIPT_BUDGET, script_failures

    assert SCRIPT_BUDGET == 1_550_000  # half of the 3.1 MB of a page before
    scripts = {"_static/theme.js": 250_000, "searchindex.js": 350_000}
    root, page = _site(tmp_path, scripts)
    assert script_failures(page, root) == ([], 600_000)
    # one more script of 1 MB: over the budget
    root, page = _site(tmp_path / "heavy", {**scripts, "_static/heavy.js": 1_000_000})
    (failure,), total = script_failures(page, root)
    assert total == 1_600_000
    assert "1.60 MB of script, over the budget of 1.55 MB" in failure
    assert "_static/heavy.js 1.00 MB" in failure


def test_inline_javascript_counts_and_data_does_not(tmp_path):
    from tools.check_html import script_failures

    body = (
        "<script>var a = 1;</script>"  # 10 bytes
        "<script type='application/vnd.jupyter.widget-state+json'>{}</script>"
        "<script type='module'>b()</script>"  # 3 bytes
    )
    root, page = _site(tmp_path, {"_static/a.js": 100}, body)
    assert script_failures(page, root, budget=113) == ([], 113)
    assert script_failures(page, root, budget=112)[0]


def test_font_awesome_script_and_missing_scripts_fail(tmp_path):
    from tools.check_html import script_failures

    root, page = _site(
        tmp_path, {"_static/scripts/fontawesome.js": 10, "_static/gone.js": -1}
    )
    failures, total = script_failures(page, root, budget=10**6)
    assert total == 10
    assert any("Font Awesome's JavaScript" in f for f in failures)
    assert any("_static/gone.js, which is missing" in f for f in failures)


def test_an_icon_class_without_a_style_fails():
    from tools.check_html import icon_failures

    css = ".fa-solid{font-weight:900}.fa-sun:before{content:'\\f185'}"
    page = '<i class="fa-solid fa-sun"></i>'
    assert icon_failures(page, "p", css) == []
    failures = icon_failures(page + '<i class="fa-solid fa-moon"></i>', "p", css)
    assert failures == ["p: the icon class fa-moon has no style (it shows nothing)"]
    # a prefix is not a definition: .fa-sun-plant-wilt does not define fa-sun
    assert icon_failures(page, "p", ".fa-solid{}.fa-sun-plant-wilt:before{}")


def test_a_proof_without_its_fold_control_fails():
    from tools.check_html import proof_fold_failures

    folded = (
        '<div class="proof admonition" id="proof">'
        '<details class="attnlib-proof-fold" open><summary class="attnlib-fold">'
        "<span>Hide the proof</span></summary><p>Proof. x</p></details></div>"
    )
    bare = '<div class="proof admonition" id="proof"><p>Proof. y</p></div>'
    theorem = '<div class="proof theorem admonition" id="thm"><p>x</p></div>'
    assert proof_fold_failures(folded + theorem + folded, "c.html") == []
    failures = proof_fold_failures(folded + bare, "c.html")
    assert len(failures) == 1 and "#proof" in failures[0]


def _footer(cite="CITATION.cff", pdf=None, repo=None) -> str:
    links = []
    if cite:
        links.append(f'Cite: X (<a class="attnlib-cite" href="{cite}">c</a>)')
    if pdf:
        links.append(f'<a class="attnlib-pdf" href="{pdf}">PDF</a>')
    if repo:
        links.append(f'<a class="attnlib-repository" href="{repo}">R</a>')
    return '<p class="attnlib-links">' + " · ".join(links) + "</p>"


def test_the_footer_links_the_citation_the_pdf_and_the_repository(tmp_path):
    from tools.check_html import footer_failures

    root = tmp_path / "html"
    (root / "book").mkdir(parents=True)
    (root / "CITATION.cff").write_text("cff-version: 1.2.0\n")
    page = root / "book" / "c.html"

    def check(footer, repository=""):
        page.write_text(f"<html><body><footer>{footer}</footer></body></html>")
        return footer_failures(page, root, repository)

    assert check(_footer("../CITATION.cff")) == []
    assert check(_footer(None)) == [
        "book/c.html: the footer does not link CITATION.cff"
    ]
    assert "not in the site" in check(_footer("CITATION.cff"))[0]  # a broken link
    # a PDF in the site must be linked, and a link must reach a PDF
    assert check(_footer("../CITATION.cff", pdf="../book.pdf"))[0].endswith(
        "not in the site"
    )
    (root / "book.pdf").write_bytes(b"%PDF")
    assert check(_footer("../CITATION.cff")) == [
        "book/c.html: the footer does not link the PDF"
    ]
    assert check(_footer("../CITATION.cff", pdf="../book.pdf")) == []
    # the repository: linked when configured, not otherwise
    url = "https://github.com/o/r"
    full = _footer("../CITATION.cff", pdf="../book.pdf", repo=url)
    assert check(full, url) == []
    assert (
        "does not link the repository"
        in check(_footer("../CITATION.cff", pdf="../book.pdf"), url)[0]
    )
    assert "not configured" in check(full)[0]


def test_an_assignment_page_showing_the_grader_set_up_fails():
    from tools.check_html import grader_setup_failures
    from tools.coursework.common import CHECK_CELL

    code = "<pre>" + CHECK_CELL.replace("<", "&lt;") + "</pre>"
    assert grader_setup_failures(code, "a.html")
    assert grader_setup_failures(
        "<pre>grader = otter.Notebook(&quot;a.ipynb&quot;)", "a"
    )
    assert grader_setup_failures("<h1>A1</h1><p>Run grader.check.</p>", "a") == []


def test_the_site_ships_no_check_only_script(tmp_path):
    from tools.check_html import shipped_failures

    (tmp_path / "_static" / "katex" / "fonts").mkdir(parents=True)
    assert shipped_failures(tmp_path) == []
    (tmp_path / "_static" / "katex-node").mkdir()
    assert shipped_failures(tmp_path) == [
        "the site ships katex-node/ in _static (only the page check loads it)"
    ]
    (tmp_path / "_static" / "katex-node").rmdir()
    (tmp_path / "_static" / "axe").mkdir()
    assert shipped_failures(tmp_path) == [
        "the site ships axe/ in _static (only the page check loads it)"
    ]


def test_the_site_ships_no_script_that_no_page_loads(tmp_path):
    # MathJax's 24 MB once every page had moved to typeset formulas, Font Awesome's
    # JavaScript, source maps: files that no reader downloads
    from tools.check_html import shipped_failures

    root, page = _site(tmp_path, {"_static/a.js": 10, "_static/scripts/b.js": 10})
    assert shipped_failures(root) == []
    (root / "_static" / "mathjax").mkdir()
    (root / "_static" / "mathjax" / "tex-mml-chtml.js").write_text("x")
    (root / "_static" / "scripts" / "b.js.map").write_text("{}")
    (failure,) = shipped_failures(root)
    assert failure.startswith("the site ships 2 scripts or source maps that no page")
    assert "_static/mathjax/tex-mml-chtml.js" in failure
    assert "_static/scripts/b.js.map" in failure
