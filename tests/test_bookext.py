"""The book's Sphinx extension on small inputs: progress bars from their saved state,
explorer frames moved to files, the reference pages, the LaTeX macros."""

import base64
import importlib
import inspect
import json
import re
import warnings
from pathlib import Path

import pytest

from bookext.apiref import canonical, data_comment, page, public_modules
from bookext.latex import macro_preamble
from bookext.static import (
    WIDGET_STATE,
    externalise_frames,
    progress_bar,
    progress_html,
    progress_text,
)


def _bar_state(value, total, left, right, style=""):
    return {
        "box": {
            "model_name": "HBoxModel",
            "state": {"children": ["IPY_MODEL_l", "IPY_MODEL_p", "IPY_MODEL_r"]},
        },
        "l": {"model_name": "HTMLModel", "state": {"value": left}},
        "p": {
            "model_name": "FloatProgressModel",
            "state": {"value": value, "max": total, "bar_style": style},
        },
        "r": {"model_name": "HTMLModel", "state": {"value": right}},
    }


def test_a_closed_bar_shows_its_final_count_not_its_stale_label():
    # tqdm refreshed the labels last at 54/55, the value when the bar closed
    state = _bar_state(55, 55, "simulate:\u2007\u200798%", "\u200754/55\u2007[00:03]")
    bar = progress_bar(state, "box")
    assert bar == {"desc": "simulate", "n": 55.0, "total": 55.0, "failed": False}
    assert progress_text(bar) == "simulate: 55/55 (done)"
    out = progress_html(bar)
    assert '<progress value="55" max="55"' in out and "54/55" not in out
    assert 'aria-label="simulate"' in out


def test_other_widgets_are_not_progress_bars():
    state = _bar_state(1, 2, "a", "b")
    state["box"]["state"]["children"] = ["IPY_MODEL_l"]
    assert progress_bar(state, "box") is None
    assert progress_bar(state, "missing") is None
    failed = progress_bar(_bar_state(3, 10, "beta: 30%", "3/10", "danger"), "box")
    assert progress_text(failed) == "beta: 3/10 (stopped)"


class _Script:
    """Like Sphinx's _JavaScript: a file name and attributes (its str is not)."""

    def __init__(self, filename, **attributes):
        self.filename, self.attributes = filename, attributes


def test_frames_become_files_and_scripts_are_not_repeated(tmp_path):
    png = b"\x89PNG\r\n\x1a\nframe"
    uri = "data:image/png;base64," + base64.b64encode(png).decode()
    body = (
        '<div role="list" class="citation-list"><div role="doc-biblioentry">'
        "</div></div>"
        '<p>text <img src="data:image/png;base64,AAAA"></p>'
        '<div class="attnlib-explorer" id="attnlib-explorer-1">'
        f'<img class="attnlib-explorer-frame" src="{uri}">'
        '<script type="application/json" class="attnlib-explorer-data">'
        + json.dumps({"frames": [uri, uri]})
        + "</script><script>(function () {})();</script></div>"
    )
    thebe = _Script("", body="const THEBE_JS_URL = 1;")
    scripts = [
        thebe,
        _Script("", body="const THEBE_JS_URL = 1;"),
        _Script("", type=WIDGET_STATE, body="{}"),
        _Script("_static/x.js"),
    ]

    class Builder:
        outdir = tmp_path

    class App:
        builder = Builder()

    context = {
        "body": body,
        "script_files": scripts,
        "pathto": lambda name, resource: "../" + name,
    }
    externalise_frames(App(), "book/x", "page.html", context, None)
    out = context["body"]
    files = list((tmp_path / "_images" / "explorer").glob("*.png"))
    assert len(files) == 1 and files[0].read_bytes() == png
    assert f"../_images/explorer/{files[0].name}" in out
    assert uri not in out
    assert 'src="data:image/png;base64,AAAA"' in out  # not an explorer: untouched
    assert scripts == [thebe, scripts[-1]]  # one thebe, no widget state
    assert 'role="list"' not in out


def test_reference_pages_document_every_public_name_once():
    modules = public_modules()
    names = {m.__name__ for m in modules}
    assert {"attnlib", "attnlib.integrate", "attnlib.widgets.modelling"} <= names
    documented, objects = {}, {}
    for module in modules:
        text = page(module, modules)
        for line in text.splitlines():
            documents = line.startswith((".. auto", ".. py:data::"))
            if documents and not line.startswith(".. automodule"):
                target = line.split("::")[1].strip()
                if line.startswith(".. py:data::"):  # named in its module
                    target = f"{module.__name__}.{target}"
                assert target not in documented, f"{target} twice"
                documented[target] = module.__name__
                # the same object under two names (a re-export of a private
                # module's class) would be two descriptions of one object
                modname, attr = target.rsplit(".", 1)
                obj = getattr(importlib.import_module(modname), attr)
                if inspect.isclass(obj) or inspect.isroutine(obj):
                    assert id(obj) not in objects, f"{target} and {objects[id(obj)]}"
                    objects[id(obj)] = target
    for module in modules:
        for attr in module.__all__:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                obj = getattr(module, attr)
            if any(issubclass(w.category, DeprecationWarning) for w in caught):
                # a deprecated alias is listed as such, not documented again
                assert f"- `{attr}`: " in page(module, modules)
                continue
            if hasattr(obj, "__path__") or type(obj).__name__ == "module":
                continue
            home = canonical(f"{module.__name__}.{attr}")
            target = home or f"{module.__name__}.{attr}"
            if target not in documented:
                # data is documented where its source assigns it
                assert any(t.endswith(f".{attr}") for t in documented), target
            if callable(obj) and not isinstance(obj, type(print)):
                assert (obj.__doc__ or "").strip(), f"{target} has no docstring"


@pytest.mark.parametrize("name", ["R", "S"])
def test_latex_defines_the_mathjax_macros(name):
    text = macro_preamble({"R": "\\mathbb{R}", "S": "\\mathbb{S}"})
    assert f"\\providecommand{{\\{name}}}{{}}" in text
    # braced twice, so that a subscript takes it whole: x_\S
    assert f"\\renewcommand{{\\{name}}}{{{{\\mathbb{{{name}}}}}}}" in text


def test_the_footer_template_is_in_the_config():
    import yaml

    config = yaml.safe_load(
        (Path(__file__).resolve().parents[1] / "_config.yml").read_text()
    )
    assert "{release}" in config["html"]["extra_footer"]


def test_launch_buttons_only_with_a_repository_url():
    import yaml

    from bookext import _config_inited

    config = yaml.safe_load(
        (Path(__file__).resolve().parents[1] / "_config.yml").read_text()
    )
    assert config["launch_buttons"]["binderhub_url"]
    assert config["launch_buttons"]["notebook_interface"] == "jupyterlab"

    def theme(url):
        class C:
            version = release = None
            html_context = None
            html_theme_options = {
                "launch_buttons": dict(config["launch_buttons"]),
                "repository_url": url,
            }

        c = C()
        _config_inited(None, c)
        return c.html_theme_options

    assert "launch_buttons" not in theme("")
    on = theme("https://example.org/owner/book")
    assert (
        on["launch_buttons"]["binderhub_url"]
        == config["launch_buttons"]["binderhub_url"]
    )


def test_documented_data_has_its_own_description():
    # autodata falls back to the docstring of the value's type (dict's is not even
    # valid reStructuredText, and failed the -W build): every data name of a page is
    # described by the "#:" comment above its assignment, read by autodata in the
    # module that assigns it, or copied into the page from a private module
    modules = public_modules()
    seen = 0
    for module in modules:
        lines = page(module, modules).splitlines()
        for k, line in enumerate(lines):
            if line.startswith(".. autodata::"):
                target = line.split("::")[1].strip()
                modname, attr = target.rsplit(".", 1)
                source = inspect.getsource(importlib.import_module(modname))
                source = source.splitlines()
                at = [i for i, s in enumerate(source) if re.match(rf"{attr}\s*[:=]", s)]
                assert at, f"{target}: {modname} does not assign it"
                assert source[at[0] - 1].startswith("#:"), f"{target}: no '#:' comment"
                seen += 1
            elif line.startswith(".. py:data::"):
                attr = line.split("::")[1].strip()
                # the module's name, or Sphinx files it under module.module.attr
                assert lines[k + 1] == f"   :module: {module.__name__}", attr
                assert lines[k + 2].startswith("   :value: "), attr
                assert lines[k + 4].strip(), f"{attr} has no description"
                assert data_comment(attr) in "\n".join(
                    s.strip() for s in lines[k + 4 :]
                )
                seen += 1
    assert seen >= 10
