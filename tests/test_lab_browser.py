"""A chapter in JupyterLab, as ``make lab`` serves it, read in Chromium.

JupyterLab starts headless on a free port of 127.0.0.1 with the settings of
``make lab`` (``binder/overrides.json``, ``binder/labextensions``) in folders of its
own; a chapter opens as a notebook (jupytext), jupyterlab-myst renders it, and the
rendered page is checked: the book's macros typeset (``\\S`` is the sphere 𝕊, not
the section sign), citations labelled as in the book's bibliography, and the
exercises' solutions hidden until the reader opens them. About a minute on a quiet
two-core machine; every wait allows minutes.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from .helpers import CHROMIUM

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = "book/modelling.md"
WAIT = 600  # seconds: starting JupyterLab, a kernel and rendering on a busy machine

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        CHROMIUM is None, reason="the Debian package chromium is not installed"
    ),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """The address of a JupyterLab serving the repository as ``make lab`` does."""
    home = tmp_path_factory.mktemp("lab")
    settings = home / "app-settings"
    settings.mkdir()
    overrides = json.loads((ROOT / "binder" / "overrides.json").read_text())
    # for the test only: every cell in the page (no virtual scrolling), no news
    overrides["@jupyterlab/notebook-extension:tracker"] = {"windowingMode": "none"}
    overrides["@jupyterlab/apputils-extension:notification"] = {
        "fetchNews": "false",
        "checkForUpdates": False,
    }
    (settings / "overrides.json").write_text(json.dumps(overrides))
    env = dict(os.environ)
    for var, sub in (
        ("JUPYTER_CONFIG_DIR", "config"),
        ("JUPYTER_RUNTIME_DIR", "runtime"),
        ("JUPYTERLAB_SETTINGS_DIR", "user-settings"),
        ("JUPYTERLAB_WORKSPACES_DIR", "workspaces"),
    ):
        env[var] = str(home / sub)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    port = _free_port()
    log = (home / "lab.log").open("w")
    command = [
        sys.executable, "-m", "jupyterlab", "--no-browser",
        "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0", "--ServerApp.token=", "--ServerApp.password=",
        f"--ServerApp.root_dir={ROOT}", f"--LabApp.app_settings_dir={settings}",
        f"--LabApp.extra_labextensions_path={ROOT / 'binder' / 'labextensions'}",
    ]  # fmt: skip
    if os.geteuid() == 0:
        command.append("--allow-root")
    proc = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + WAIT
        while True:
            if proc.poll() is not None:
                pytest.fail("JupyterLab stopped:\n" + (home / "lab.log").read_text())
            try:
                with urllib.request.urlopen(f"{url}/api/status", timeout=10):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail("JupyterLab did not start:\n" + _tail(home))
                time.sleep(1)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def _tail(home: Path) -> str:
    return "\n".join((home / "lab.log").read_text().splitlines()[-30:])


# the text of the rendered notebook as a reader sees it (hidden cells leave it out),
# once the exercises at its end are rendered and typeset
_NOTEBOOK = "'.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook'"
_RENDERED = f"""() => {{
  const nb = document.querySelector({_NOTEBOOK});
  if (!nb) {{ return null; }}
  const cells = [...nb.querySelectorAll('.jp-MarkdownCell')];
  const done = cells.length > 20 &&
    cells.every(c => c.classList.contains('jp-mod-rendered'));
  const exercise = cells.find(c => c.innerText.includes('Take USA with'));
  if (!done || !exercise || !exercise.querySelector('.katex')) {{ return null; }}
  return nb.innerText;
}}"""


# the blackboard letters KaTeX typeset (\mathbb{S} is a span of class mathbb holding
# "S"), and the formulas it could not typeset
_BLACKBOARD = f"""() => {{
  const nb = document.querySelector({_NOTEBOOK});
  const letters = [...nb.querySelectorAll('.katex-html .mathbb')]
    .map(e => e.textContent);
  return {{S: letters.filter(x => x === 'S').length,
           R: letters.filter(x => x === 'R').length,
           errors: nb.querySelectorAll('.katex-error').length}};
}}"""


# every citation labelled (tools/lab_citations.py), none left as jupyterlab-myst's
# "Citation Not Found"
_LABELLED = """() => {
  const nb = document.querySelector('.jp-Notebook');
  return nb.querySelectorAll('span.attnlib-cite').length > 10 &&
    nb.querySelectorAll('span[title="Citation Not Found"]').length === 0;
}"""

# each citation: its text, the index of its group and the group's brackets
_CITATIONS = """() => {
  const groups = [...document.querySelectorAll('.jp-Notebook .cite-group')];
  return [...document.querySelectorAll('.jp-Notebook span.attnlib-cite')].map(s => {
    const g = s.closest('.cite-group');
    return {text: s.textContent.trim(), group: g ? groups.indexOf(g) : null,
            brackets: g ? [getComputedStyle(g, '::before').content,
                           getComputedStyle(g, '::after').content] : null};
  });
}"""


def test_a_chapter_reads_in_jupyterlab_as_in_the_book(lab, browser, tmp_path):
    source = (ROOT / CHAPTER).read_text(encoding="utf-8")
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    page.set_default_timeout(WAIT * 1000)
    try:
        page.goto(f"{lab}/lab/tree/{CHAPTER}")
        text = page.wait_for_function(_RENDERED, polling=1000).json_value()
        # (1) the macros: \S is the sphere (KaTeX's own \S is the section sign, which
        # the chapter writes once, as text), \R the reals; the frontmatter is not shown
        assert text.count("§") == source.count("§"), "\\S typeset as §"
        letters = page.evaluate(_BLACKBOARD)
        assert letters["S"] >= 10 and letters["R"] >= 10, letters
        assert letters["errors"] == 0, letters
        assert "math:" not in text
        # (2) the citations: labelled as in the book's bibliography, no raw key
        # the extension relabels a citation in the frame after it is drawn: two
        # minutes are plenty even on a busy machine, and end a run without it sooner
        page.wait_for_function(_LABELLED, polling=1000, timeout=120_000)
        cites = page.evaluate(_CITATIONS)
        first = [c for c in cites if c["group"] == 0]
        assert [c["text"] for c in first] == [
            "Geshkovski et al., 2025",
            "Castin et al., 2025",
        ], cites[:3]
        assert first[0]["brackets"] == ['"["', '"]"']
        assert any(c["text"] == "[Geshkovski et al., 2025]" for c in cites)
        assert all(re.search(r"\b(19|20)\d\d[a-z]?\]?$", c["text"]) for c in cites)
        text = page.evaluate("() => document.querySelector('.jp-Notebook').innerText")
        assert "GLPR2023" not in text and "CACP2025" not in text
        # (3) the solutions: a bar each, their text hidden until it is opened
        bars = page.locator(".jp-InputPlaceholder .jp-PlaceholderText")
        labels = bars.all_inner_texts()
        assert "% Solution to mod-ex1" in labels, labels
        assert source.count("{solution-start}") == sum(
            bool(re.fullmatch(r"% Solution to [\w-]+", t)) for t in labels
        )
        hidden = "The energy decreases monotonically"
        assert hidden in source and hidden not in text
        page.locator(
            ".jp-InputPlaceholder", has_text="% Solution to mod-ex1, continued"
        ).click()
        page.wait_for_function(
            "t => document.querySelector('.jp-Notebook').innerText.includes(t)",
            arg=hidden,
            polling=500,
        )
    except Exception:
        page.screenshot(path=str(tmp_path / "jupyterlab.png"))
        print(f"screenshot: {tmp_path / 'jupyterlab.png'}")
        raise
    finally:
        page.close()
