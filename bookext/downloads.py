"""The library ships with the book: attnlib's wheel and sdist in ``<html>/_downloads``.

``make book`` writes them at the end of the build (``build-finished``, before the
notebooks, whose first cell installs that wheel), ``python -m bookext.downloads
[HTML]`` writes them into a built book:

* ``_downloads/attnlib-<version>-py3-none-any.whl`` and ``attnlib-<version>.tar.gz``,
  built from this checkout without network (``python -m build --no-isolation``);
* ``_downloads/attnlib.json``, the version-free address of the current release: its
  version, the two file names and their SHA-256. (A version-free copy of the wheel
  would not do: pip refuses a wheel whose file name has no version.)
* ``_downloads/models/``, the files chapters read (:data:`DATA_DIRS`): the first cell
  of a chapter's notebook fetches those it needs.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from attnlib._version import __version__

WHEEL = "attnlib-{version}-py3-none-any.whl"
SDIST = "attnlib-{version}.tar.gz"
DOWNLOADS = "_downloads"

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = "attnlib.json"
# folders of data files that chapters read (book/<folder>/, e.g. the trained weights
# of Chapter 7), shipped as _downloads/<folder>/ for the notebooks to fetch
DATA_DIRS = ("models",)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def build_distributions(root: Path, out: Path) -> list[Path]:
    """attnlib's wheel and sdist of ``root`` (this version) into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        # a copy of what the sdist takes, so that the build leaves no build/ or
        # *.egg-info in the checkout (a build running beside it would read them)
        src = Path(tmp) / "src"
        src.mkdir()
        for name in ("pyproject.toml", "README.md", "LICENSE", "MANIFEST.in"):
            shutil.copy2(root / name, src / name)
        for extra in ("LICENSE-CC-BY-4.0.txt",):
            if (root / extra).exists():
                shutil.copy2(root / extra, src / extra)
        shutil.copytree(
            root / "attnlib",
            src / "attnlib",
            ignore=shutil.ignore_patterns("__pycache__", "*.py[cod]"),
        )
        r = subprocess.run(
            [sys.executable, "-m", "build", "--no-isolation", "--sdist", "--wheel"]
            + ["--outdir", str(Path(tmp) / "dist"), str(src)],
            capture_output=True,
            text=True,
        )
        if r.returncode != 0:
            raise RuntimeError(f"building attnlib failed:\n{r.stdout}\n{r.stderr}")
        made = []
        for name in (WHEEL, SDIST):
            path = Path(tmp) / "dist" / name.format(version=__version__)
            if not path.exists():
                raise RuntimeError(f"the build made no {path.name}: {r.stdout[-2000:]}")
            made.append(Path(shutil.copy2(path, out / path.name)))
    return made


def write_downloads(root: Path, html: Path) -> list[Path]:
    """The wheel, the sdist and the manifest of this version in ``html/_downloads``;
    files of other versions of attnlib found there are removed."""
    out = html / DOWNLOADS
    keep = {n.format(version=__version__) for n in (WHEEL, SDIST)}
    for old in out.glob("attnlib-*"):
        if old.name not in keep:
            old.unlink()
    wheel, sdist = build_distributions(root, out)
    manifest = {
        "name": "attnlib",
        "version": __version__,
        "wheel": wheel.name,
        "sdist": sdist.name,
        "sha256": {wheel.name: sha256(wheel), sdist.name: sha256(sdist)},
    }
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    data = []
    for folder in DATA_DIRS:
        shutil.rmtree(out / folder, ignore_errors=True)
        for f in sorted((root / "book" / folder).glob("*")):
            if f.is_file():
                (out / folder).mkdir(parents=True, exist_ok=True)
                data.append(Path(shutil.copy2(f, out / folder / f.name)))
    return [wheel, sdist, out / MANIFEST, *data]


def main(argv: list[str]) -> int:
    html = Path(argv[0]) if argv else ROOT / "_build" / "html"
    for path in write_downloads(ROOT, html):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
