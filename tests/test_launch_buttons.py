"""Launch buttons from one setting: with ``repository.url`` every chapter page opens
on Binder and Colab (and on JupyterHub when a hub is named); without it there are
none and the build says so.

Two small books (two chapter notebooks of one cell each) are built with
Jupyter Book, warnings as errors, with the book's own ``launch_buttons`` settings
and bookext's launch hooks (:mod:`bookext.launch`), once with a repository address
and a hub, once with neither.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from bookext.launch import colab_url

from .helpers import MYST_HEADER

ROOT = Path(__file__).resolve().parents[1]
JB = Path(sys.executable).parent / "jupyter-book"
CHAPTER = (
    MYST_HEADER
    + """
# Chapter {name}

```{{code-cell}} ipython3
print("{name}")
```
"""
)


def build(tmp: Path, url: str, hub: str = "") -> tuple[dict[str, str], str]:
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    buttons = dict(config["launch_buttons"], jupyterhub_url=hub)
    small = {
        "title": "Launch",
        "only_build_toc_files": True,
        "execute": {"execute_notebooks": "force"},
        "launch_buttons": buttons,
        "repository": dict(config["repository"], url=url),
        "sphinx": {"extra_extensions": ["bookext.launch"]},
    }
    (tmp / "_config.yml").write_text(yaml.safe_dump(small))
    toc = {"format": "jb-book", "root": "intro", "chapters": [{"file": "book/a"}]}
    toc["chapters"].append({"file": "book/b"})
    (tmp / "_toc.yml").write_text(yaml.safe_dump(toc))
    (tmp / "intro.md").write_text("# Intro\n")
    (tmp / "book").mkdir()
    for name in ("a", "b"):
        (tmp / "book" / f"{name}.md").write_text(CHAPTER.format(name=name))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run(
        [JB, "build", str(tmp), "-W", "-n", "--keep-going"],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    html = tmp / "_build" / "html" / "book"
    return {n: (html / f"{n}.html").read_text() for n in ("a", "b")}, r.stdout


@pytest.mark.slow
def test_buttons_on_every_chapter_with_a_repository(tmp_path):
    repo = "https://github.com/owner/book"
    pages, _ = build(tmp_path, repo, hub="https://hub.example.edu")
    for name, page in pages.items():
        binder = f"https://mybinder.org/v2/gh/owner/book/main?urlpath=lab/tree/book/{name}.md"
        assert binder in page, name
        colab = "https://colab.research.google.com/github/owner/book/blob/gh-pages/"
        assert f"{colab}notebooks/{name}.ipynb" in page, name
        assert "book/blob/main/book/" not in page  # Colab cannot open the .md
        assert "https://hub.example.edu/hub/user-redirect/git-pull?" in page, name


@pytest.mark.slow
def test_no_buttons_and_a_message_without_a_repository(tmp_path):
    pages, log = build(tmp_path, "")
    assert "repository.url is empty" in log
    for name, page in pages.items():
        for service in ("mybinder.org", "colab.research", "git-pull"):
            assert service not in page, (name, service)


def test_colab_opens_reader_notebooks_of_github_repositories_only():
    colab = "https://colab.research.google.com"
    assert (
        colab_url("https://github.com/o/r.git", "notebooks/a.ipynb", colab)
        == f"{colab}/github/o/r/blob/gh-pages/notebooks/a.ipynb"
    )
    assert colab_url("https://gitlab.com/o/r", "notebooks/a.ipynb", colab) is None


def test_chapters_link_the_jupyterlite_site_when_it_is_published(tmp_path):
    from types import SimpleNamespace

    from bookext.notebooks import add_links

    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    assert config["launch_buttons"]["jupyterlite_url"] == ""  # off by default
    (tmp_path / "_toc.yml").write_text(
        yaml.safe_dump({"root": "intro", "chapters": [{"file": "book/a"}]})
    )
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "a.md").write_text(CHAPTER.format(name="a"))
    app = SimpleNamespace(builder=SimpleNamespace(format="html"), srcdir=tmp_path)

    def page(lite: str) -> str:
        buttons = dict(config["launch_buttons"], jupyterlite_url=lite)
        (tmp_path / "_config.yml").write_text(
            yaml.safe_dump({"launch_buttons": buttons})
        )
        context = {"body": "<h1>A</h1>text", "pathto": lambda p, _: f"../{p}"}
        add_links(app, "book/a", "page.html", context, None)
        return context["body"]

    off = page("")
    assert 'href="../notebooks/a.ipynb"' in off and "in your browser" not in off
    on = page("lite/lab/index.html")
    assert '<a href="../lite/lab/index.html?path=a.ipynb">run it in your browser' in on
