"""A release a course can download: ``make release`` puts into ``release/``

* ``attnlib-<v>-py3-none-any.whl`` and ``attnlib-<v>.tar.gz`` (``make dist``: built
  offline, ``twine check --strict`` clean);
* ``mathematics-of-transformers-<v>-html.zip``: the book's site (``make book``),
  and ``...-student-html.zip``, the student edition, when it is built;
* ``mathematics-of-transformers-<v>-notebooks.zip``: every reader and student
  notebook with the wheel beside them (their first cell installs that copy, so the
  folder runs offline once the dependencies are installed);
* ``book.pdf`` renamed ``mathematics-of-transformers-<v>.pdf`` when ``make pdf``
  has made it (it needs TeX);
* ``SHA256SUMS`` of all of them (``sha256sum -c SHA256SUMS`` checks a download).

Everything carries the one version of ``attnlib/_version.py``; :func:`check_release`
verifies that (file names, the wheel's metadata, the notebooks' install cells, the
footer of the site) and is what ``python -m bookext.release`` runs last.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import sys
import zipfile
from pathlib import Path

from attnlib._version import __version__

from .downloads import DATA_DIRS, DOWNLOADS

NAME = "mathematics-of-transformers"
SUMS = "SHA256SUMS"


def _zip_tree(folder: Path, target: Path, prefix: str) -> Path:
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as z:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and ".doctrees" not in path.parts:
                z.write(path, f"{prefix}/{path.relative_to(folder)}")
    return target


def collect(
    out: Path,
    dist: Path,
    html: Path,
    student: Path | None = None,
    pdf: Path | None = None,
    version: str = __version__,
) -> list[Path]:
    """The release files of ``version`` in ``out`` (emptied first)."""
    wheel = dist / f"attnlib-{version}-py3-none-any.whl"
    sdist = dist / f"attnlib-{version}.tar.gz"
    for needed in (wheel, sdist, html / "index.html", html / "notebooks"):
        if not needed.exists():
            raise FileNotFoundError(f"{needed} is missing: run make dist and make book")
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    files = [Path(shutil.copy2(wheel, out)), Path(shutil.copy2(sdist, out))]
    site = out / f"{NAME}-{version}-html.zip"
    files.append(_zip_tree(html, site, f"{NAME}-{version}"))
    if student is not None and (student / "index.html").exists():
        target = out / f"{NAME}-{version}-student-html.zip"
        files.append(_zip_tree(student, target, f"{NAME}-{version}-student"))
    notebooks = out / f"{NAME}-{version}-notebooks.zip"
    folder = f"{NAME}-{version}-notebooks"
    with zipfile.ZipFile(notebooks, "w", zipfile.ZIP_DEFLATED) as z:
        for path in sorted((html / "notebooks").glob("*.ipynb")):
            z.write(path, f"{folder}/{path.name}")
        z.write(wheel, f"{folder}/{wheel.name}")
        # the files chapters read (models/ ...), beside the notebooks as the
        # notebooks' first cell looks for them
        for data in DATA_DIRS:
            for path in sorted((html / DOWNLOADS / data).glob("*")):
                z.write(path, f"{folder}/{data}/{path.name}")
    files.append(notebooks)
    if pdf is not None and pdf.exists():
        files.append(Path(shutil.copy2(pdf, out / f"{NAME}-{version}.pdf")))
    lines = [f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.name}" for p in files]
    (out / SUMS).write_text("\n".join(lines) + "\n")
    return files + [out / SUMS]


def check_release(out: Path, version: str = __version__) -> list[str]:
    """What is wrong with a release folder (empty: nothing)."""
    problems = []
    names = sorted(p.name for p in out.iterdir())
    sums = {}
    if SUMS in names:
        for line in (out / SUMS).read_text().splitlines():
            digest, name = line.split(maxsplit=1)
            sums[name] = digest
    for name in names:
        if name == SUMS:
            continue
        if version not in name:
            problems.append(f"{name}: the file name has no version {version}")
        digest = hashlib.sha256((out / name).read_bytes()).hexdigest()
        if sums.get(name) != digest:
            problems.append(f"{name}: not in {SUMS} or another checksum")
    for needed in (
        f"attnlib-{version}-py3-none-any.whl",
        f"attnlib-{version}.tar.gz",
        f"{NAME}-{version}-html.zip",
        f"{NAME}-{version}-notebooks.zip",
        SUMS,
    ):
        if needed not in names:
            problems.append(f"{needed} is missing")
    if problems:
        return problems
    with zipfile.ZipFile(out / f"attnlib-{version}-py3-none-any.whl") as z:
        meta = z.read(f"attnlib-{version}.dist-info/METADATA").decode()
        code = z.read("attnlib/_version.py").decode()
    if f"\nVersion: {version}\n" not in meta or f'"{version}"' not in code:
        problems.append("the wheel's metadata or attnlib/_version.py: another version")
    with zipfile.ZipFile(out / f"{NAME}-{version}-notebooks.zip") as z:
        members = z.namelist()
        notebooks = [n for n in members if n.endswith(".ipynb")]
        if not notebooks or not any(n.endswith("-student.ipynb") for n in notebooks):
            problems.append("the notebooks zip has no reader and student notebooks")
        if f"{NAME}-{version}-notebooks/attnlib-{version}-py3-none-any.whl" not in (
            members
        ):
            problems.append("the notebooks zip has no wheel beside the notebooks")
        for name in notebooks:
            first = "".join(json.loads(z.read(name))["cells"][0]["source"])
            if f'ATTNLIB = "{version}"' not in first:
                problems.append(f"{name}: its install cell names another version")
    with zipfile.ZipFile(out / f"{NAME}-{version}-html.zip") as z:
        site = z.namelist()
        pages = [n for n in site if n.startswith(f"{NAME}-{version}/book/")]
        shown = set()  # the versions that the pages' footers name
        for name in (n for n in pages if n.endswith(".html")):
            text = z.read(name).decode("utf-8", "replace")
            shown |= set(re.findall(r"Version (\d+\.\d+\.\d+[^\s<]*?)\.\s", text))
        if shown != {version}:
            problems.append(f"the site's footers name {sorted(shown)}, not {version}")
        for shipped in (f"attnlib-{version}-py3-none-any.whl", "attnlib.json"):
            if f"{NAME}-{version}/_downloads/{shipped}" not in site:
                problems.append(f"the site does not ship _downloads/{shipped}")
    return problems


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bookext.release")
    parser.add_argument("--out", type=Path, default=Path("release"))
    parser.add_argument("--dist", type=Path, default=Path("dist"))
    parser.add_argument("--html", type=Path, default=Path("_build/html"))
    parser.add_argument("--student", type=Path, default=Path("_build/student/html"))
    parser.add_argument("--pdf", type=Path, default=Path("_build/latex/book.pdf"))
    args = parser.parse_args(argv)
    for path in collect(args.out, args.dist, args.html, args.student, args.pdf):
        print(path)
    problems = check_release(args.out)
    for problem in problems:
        print("release:", problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
