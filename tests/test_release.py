"""Release metadata: one version everywhere, a valid citation, a distribution that
installs and works on its own.

``test_wheel_installs_and_works_in_a_fresh_venv`` runs ``make dist``, installs the
wheel (with its ``all`` extra) into a new virtual environment and runs the README's
example and the library's doctests there, from a folder outside the checkout, so that
nothing of the checkout is imported. The fresh environments install from the package
index configured for pip (pip's cache serves repeated runs).
"""

from __future__ import annotations

import json
import re
import subprocess
import tarfile
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest
import yaml

import attnlib
from attnlib._version import __version__

from .helpers import pip_install

ROOT = Path(__file__).resolve().parents[1]
PIP_TIMEOUT = 1800  # a fresh environment on a slow, shared machine


def _changelog_versions() -> list[str]:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    return re.findall(r"^## \[(\d+\.\d+\.\d+[^\]]*)\]", text, re.M)


def test_one_version_string():
    assert re.fullmatch(r"\d+\.\d+\.\d+((a|b|rc)\d+)?(\.dev\d+)?", __version__)
    assert attnlib.__version__ == __version__
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"]
    assert "version" in project["project"]["dynamic"]
    attr = project["tool"]["setuptools"]["dynamic"]["version"]["attr"]
    assert attr == "attnlib._version.__version__"
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert str(cff["version"]) == __version__
    assert _changelog_versions()[0] == __version__, "CHANGELOG's newest release"


def test_the_book_shows_the_version_and_the_licences():
    """The footer of every page (sphinx-book-theme's extra_footer) names them."""
    from bookext import _config_inited

    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    assert "bookext" in config["sphinx"]["local_extensions"]

    class Config:
        html_theme_options = {"extra_footer": config["html"]["extra_footer"]}
        version = release = None
        html_context = None

    c = Config()
    _config_inited(None, c)
    footer = c.html_theme_options["extra_footer"]
    assert c.release == __version__ and f"Version {__version__}" in footer
    assert "CC BY 4.0" in footer and "MIT" in footer


def test_licence_files_say_which_licence_covers_what():
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "MIT License" in text and "Permission is hereby granted" in text
    code, prose = text.split("Text and figures:")[:2]
    assert "attnlib/" in code and "code cell" in code
    assert "CC BY 4.0" in prose and "figures" in prose
    cc = (ROOT / "LICENSE-CC-BY-4.0.txt").read_text(encoding="utf-8")
    assert cc.startswith("Creative Commons Attribution 4.0 International")
    assert "Section 1 – Definitions." in cc
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT" and "LICENSE" in project["license-files"]
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert set(cff["license"]) == {"MIT", "CC-BY-4.0"}


def test_repository_url_agrees_between_package_and_book():
    """The launch buttons need _config.yml's repository.url; the package names the
    same address (or neither names one)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    book_url = (config.get("repository") or {}).get("url") or None
    assert "repository" in config, "an unset url must be empty, not Jupyter Book's"
    assert project.get("urls", {}).get("Repository") == book_url


def _venv(path: Path) -> Path:
    venv.EnvBuilder(with_pip=True, clear=True).create(path)
    return path / "bin" / "python"


def _run(args: list, cwd: Path, timeout: float = PIP_TIMEOUT, **kw):
    r = subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        **kw,
    )
    assert r.returncode == 0, f"{args}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    """The Makefile's ``make dist``, run in the checkout (into ``dist/``)."""
    r = subprocess.run(
        ["make", "dist"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "PASSED" in r.stdout and "FAILED" not in r.stdout  # twine check
    return ROOT / "dist"


@pytest.mark.slow
def test_sdist_carries_the_library_and_no_tests_or_build_output(dist):
    (sdist,) = dist.glob(f"attnlib-{__version__}.tar.gz")
    with tarfile.open(sdist) as tar:
        names = [n.split("/", 1)[1] for n in tar.getnames() if "/" in n]
    assert "attnlib/__init__.py" in names and "LICENSE" in names
    assert "pyproject.toml" in names and "README.md" in names
    for bad in ("tests/", "book/", "_build/", "benchmarks/", "dist/", ".venv/"):
        assert not [n for n in names if n.startswith(bad)], bad
    (wheel,) = dist.glob(f"attnlib-{__version__}-py3-none-any.whl")
    with zipfile.ZipFile(wheel) as z:
        meta = z.read(f"attnlib-{__version__}.dist-info/METADATA").decode()
    assert f"Version: {__version__}" in meta
    assert "License-Expression: MIT" in meta
    assert "Classifier: Intended Audience :: Education" in meta


README_EXAMPLE = re.compile(r"## The library.*?```python\n(.*?)```", re.S)


@pytest.mark.slow
def test_wheel_installs_and_works_in_a_fresh_venv(dist, tmp_path):
    (wheel,) = dist.glob(f"attnlib-{__version__}-py3-none-any.whl")
    py = _venv(tmp_path / "venv")
    # every extra: the doctests import every module, the compiled field's too
    _run([*pip_install(py), f"{wheel}[all,nets,fast]", "pytest"], tmp_path)
    work = tmp_path / "work"  # outside the checkout: only the installed copy imports
    work.mkdir()
    where = _run([py, "-c", "import attnlib; print(attnlib.__file__)"], work).stdout
    assert str(tmp_path / "venv") in where and str(ROOT) not in where
    version = _run([py, "-c", "import attnlib; print(attnlib.__version__)"], work)
    assert version.stdout.strip() == __version__
    example = README_EXAMPLE.search((ROOT / "README.md").read_text()).group(1)
    (work / "example.py").write_text(example)
    out = _run([py, "example.py"], work, timeout=600).stdout
    first, last = (int(v) for v in re.findall(r"\d+", out)[:2])
    assert first > last >= 1, out  # many clusters, then few
    doctests = _run(
        [py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--doctest-modules"]
        + ["--pyargs", "attnlib"],
        work,
        timeout=1200,
        env={"MPLBACKEND": "Agg", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    passed = re.search(r"(\d+) passed", doctests.stdout)
    assert passed and int(passed.group(1)) >= 20, doctests.stdout[-2000:]


@pytest.mark.slow
def test_citation_cff_is_valid(tmp_path):
    """``cffconvert --validate`` (schema 1.2.0) in its own environment: its pins
    (jsonschema 3) do not fit the book's."""
    py = _venv(tmp_path / "venv")
    _run([*pip_install(py), "cffconvert==2.0.0"], tmp_path)
    r = _run(
        [tmp_path / "venv" / "bin" / "cffconvert", "--validate", "-i"]
        + [ROOT / "CITATION.cff"],
        tmp_path,
        timeout=300,
    )
    assert "valid" in r.stdout and "1.2.0" in r.stdout


@pytest.mark.slow
def test_make_release_files_have_one_version_and_checksums(dist, tmp_path):
    """``bookext.release`` on ``make dist``'s files and a small site made by the
    build's own code (the wheel in ``_downloads``, the notebooks of one chapter)."""
    import json
    import os

    from bookext import _config_inited
    from bookext.downloads import write_downloads
    from bookext.notebooks import write_notebooks
    from bookext.release import NAME, SUMS, check_release, collect

    html = tmp_path / "html"
    html.mkdir()
    write_downloads(ROOT, html)
    write_notebooks(ROOT, None, html, only=["open_problems"])
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))

    class Config:
        html_theme_options = {"extra_footer": config["html"]["extra_footer"]}
        version = release = html_context = None

    c = Config()
    _config_inited(None, c)
    # the site's index is a redirect; the pages carry the footer
    (html / "index.html").write_text('<meta http-equiv="Refresh" content="0">')
    (html / "book").mkdir()
    (html / "book" / "intro.html").write_text(c.html_theme_options["extra_footer"])

    out = tmp_path / "release"
    files = collect(out, dist, html)
    assert check_release(out) == []
    v = __version__
    assert sorted(p.name for p in files) == sorted(
        [
            f"attnlib-{v}-py3-none-any.whl",
            f"attnlib-{v}.tar.gz",
            f"{NAME}-{v}-html.zip",
            f"{NAME}-{v}-notebooks.zip",
            SUMS,
        ]
    )
    r = subprocess.run(["sha256sum", "-c", SUMS], cwd=out, capture_output=True)
    assert r.returncode == 0 and r.stdout.count(b": OK") == 4, r.stdout
    # the unzipped notebooks' first cell finds the wheel beside them
    folder = tmp_path / "unzipped"
    with zipfile.ZipFile(out / f"{NAME}-{v}-notebooks.zip") as z:
        z.extractall(folder)
    nbdir = folder / f"{NAME}-{v}-notebooks"
    assert sorted(p.name for p in nbdir.iterdir()) == sorted(
        [f"attnlib-{v}-py3-none-any.whl", "open_problems.ipynb"]
        + ["open_problems-student.ipynb", "models"]
    )
    # the trained weights that Chapter 7 reads, beside the notebooks, as shipped
    for model in (ROOT / "book" / "models").iterdir():
        assert (nbdir / "models" / model.name).read_bytes() == model.read_bytes()
    cell = "".join(
        json.loads((nbdir / "open_problems.ipynb").read_text())["cells"][0]["source"]
    )
    namespace: dict = {}
    exec(cell.split("\nbefore = _installed()")[0], namespace)
    here = os.getcwd()
    try:
        os.chdir(nbdir)
        first = next(namespace["_sources"]())
    finally:
        os.chdir(here)
    assert first[1] == nbdir / f"attnlib-{v}-py3-none-any.whl"
    wheel = out / f"attnlib-{v}-py3-none-any.whl"
    assert (nbdir / wheel.name).read_bytes() == wheel.read_bytes()
    # the check fails on a changed file, a wrong version, a missing piece
    wheel.write_bytes(wheel.read_bytes() + b"\0")
    assert any("checksum" in p for p in check_release(out))
    wheel.write_bytes(wheel.read_bytes()[:-1])
    assert check_release(out) == []
    wrong = check_release(out, "9.9.9")
    assert any("has no version 9.9.9" in p for p in wrong), wrong
    (out / f"{NAME}-{v}-notebooks.zip").unlink()
    assert any("notebooks.zip is missing" in p for p in check_release(out))
    intro = html / "book" / "intro.html"
    intro.write_text(intro.read_text().replace(f"Version {v}.", "Version 9.9.9."))
    collect(out, dist, html)
    assert [p for p in check_release(out) if "footers name ['9.9.9']" in p]


@pytest.mark.slow
def test_workflow_files_are_valid(tmp_path):
    """``check-jsonschema`` with its built-in copy of the GitHub workflow schema
    (SchemaStore's), in its own environment; the release publishes by trusted
    publishing (no token) from a tag of the one version."""
    workflows = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
    assert {p.name for p in workflows} == {"ci.yml", "release.yml"}
    py = _venv(tmp_path / "venv")
    _run([*pip_install(py), "check-jsonschema==0.39.0"], tmp_path)
    checker = tmp_path / "venv" / "bin" / "check-jsonschema"
    r = _run(
        [checker, "--builtin-schema", "vendor.github-workflows", *workflows],
        tmp_path,
        timeout=300,
    )
    assert "ok -- validation done" in r.stdout, r.stdout
    bad = tmp_path / "bad.yml"
    bad.write_text("on: push\njobs:\n  x:\n    runs-on: ubuntu-24.04\n    steps: 3\n")
    r = subprocess.run(
        [checker, "--builtin-schema", "vendor.github-workflows", bad],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode != 0, r.stdout  # the schema is really applied
    release = yaml.safe_load((ROOT / ".github/workflows/release.yml").read_text())
    assert release[True]["push"]["tags"] == ["v*"]  # YAML 1.1 reads "on" as True
    pypi = release["jobs"]["pypi"]
    assert pypi["permissions"] == {"id-token": "write"}
    steps = [s.get("uses", "") for s in pypi["steps"]]
    assert "pypa/gh-action-pypi-publish@release/v1" in steps
    assert "password" not in json.dumps(pypi)
    build = "\n".join(s.get("run", "") for s in release["jobs"]["build"]["steps"])
    assert "make release" in build and '"$GITHUB_REF_NAME"' in build
