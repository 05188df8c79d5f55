"""Fetch the scripts the HTML book serves itself, so that it renders with no network.

The build needs KaTeX, which typesets the formulas in Node.js (``bookext.katex``),
and the pages its stylesheet and fonts (WOFF2 only: every browser that reads the
pages reads it); the page check needs axe-core (accessibility). No page loads a script
to show its mathematics, and the widgets need no script of Jupyter's: they are static
explorers in the pages (``attnlib.widgets``, ``bookext``). The packages are taken
from the npm registry with
``npm pack`` at the exact versions below, checked against their published sha512
integrity, and unpacked into ``book/_vendor`` (not tracked), which ``_config.yml``
serves as static files.

Run from the repository root: ``python -m tools.vendor_assets [DEST]`` (default
``book/_vendor``). npm gives up on an unreachable registry after one quick retry and
its own error is printed; the ``npm_config_fetch_*`` environment variables override
the timeouts below for a slow connection.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

PACKAGES = {
    "katex@0.16.22": (
        "sha512-XCHRdUw4lf3SKBaJe4EvgqIuWwkPSo9XoeO8GjQW94Bp7TWv9hNhzZjZ+OH9yf1UmLygb7DI"
        "T5GSFQiyt16zYg=="
    ),
    # the accessibility engine of the page check (tools/check_html.py), which reads
    # it from book/_vendor: no page loads it, and the build does not copy it into the
    # site (bookext/assets.py)
    "axe-core@4.14.1": (
        "sha512-FHfa+lmNjQZfJz1q8wKqIDwC6DExcHt/pkjNQb09a3NPjCKg2rhu5qb2S4r76ASyFNNtuF"
        "ooJpZe37OgudVGtQ=="
    ),
}
# What each package contributes: (path inside the tarball, destination in book/_vendor);
# a path ending in a pattern copies the files it matches into the destination folder.
LAYOUT = {
    "katex@0.16.22": [
        # the build's (bookext/assets.py keeps it out of the site)
        ("package/dist/katex.js", "katex-node/katex.js"),
        # the pages'
        ("package/dist/katex.min.css", "katex/katex.min.css"),
        ("package/dist/fonts/*.woff2", "katex/fonts"),
    ],
    "axe-core@4.14.1": [("package/axe.min.js", "axe/axe.min.js")],
}
DEST = Path(__file__).resolve().parents[1] / "book" / "_vendor"
# npm's defaults wait up to 5 minutes per request and retry twice with long back-offs,
# silently: fail within seconds on a refused connection, within minutes on a dead one.
NPM_FETCH = {
    "npm_config_fetch_timeout": "60000",
    "npm_config_fetch_retries": "1",
    "npm_config_fetch_retry_mintimeout": "2000",
    "npm_config_fetch_retry_maxtimeout": "10000",
}
PACK_TIMEOUT = 300  # seconds for one ``npm pack``, a bound on a stalled download


def _integrity(path: Path) -> str:
    digest = hashlib.sha512(path.read_bytes()).digest()
    return "sha512-" + base64.b64encode(digest).decode()


def _pack(npm: str, spec: str, dest: Path) -> Path | None:
    """``npm pack`` one package into ``dest``; its tarball, or None after a message."""
    env = {**NPM_FETCH, **os.environ}
    registry = env.get("npm_config_registry", "the npm registry")
    print(f"fetching {spec} from {registry}", flush=True)
    try:
        proc = subprocess.run(
            [npm, "pack", spec, "--json", "--loglevel=error"],
            cwd=dest,
            env=env,
            capture_output=True,
            text=True,
            timeout=PACK_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        print(f"npm pack {spec}: no answer within {PACK_TIMEOUT} s", file=sys.stderr)
        return None
    if proc.returncode != 0:
        print(proc.stderr.strip(), file=sys.stderr)
        print(
            f"npm pack {spec} failed (exit status {proc.returncode}): "
            "the book's vendored packages could not be fetched",
            file=sys.stderr,
        )
        return None
    return dest / json.loads(proc.stdout)[0]["filename"]


def main(dest: Path = DEST) -> int:
    stamp = dest / ".complete"
    if stamp.exists() and stamp.read_text() == repr(sorted(PACKAGES.items())):
        return 0
    npm = shutil.which("npm")
    if npm is None:
        print(
            "npm (Node.js) is needed to fetch KaTeX and axe-core "
            "(Debian: apt-get install nodejs npm)",
            file=sys.stderr,
        )
        return 1
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as tmp:
        for spec, expected in PACKAGES.items():
            tarball = _pack(npm, spec, Path(tmp))
            if tarball is None:
                return 1
            got = _integrity(tarball)
            if got != expected:
                print(f"{spec}: integrity mismatch ({got})", file=sys.stderr)
                return 1
            with tarfile.open(tarball) as tar:
                extract(tar, Path(tmp) / spec.replace("/", "_"))
            root = Path(tmp) / spec.replace("/", "_")
            for src, dst in LAYOUT[spec]:
                s, d = root / src, dest / dst
                if "*" in s.name:
                    d.mkdir(parents=True, exist_ok=True)
                    for f in sorted(s.parent.glob(s.name)):
                        shutil.copy2(f, d / f.name)
                elif s.is_dir():
                    shutil.copytree(s, d, ignore=shutil.ignore_patterns("*.map"))
                else:
                    d.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(s, d)
    css = dest / "katex" / "katex.min.css"
    css.write_text(woff2_only(css.read_text(encoding="utf-8")), encoding="utf-8")
    stamp.write_text(repr(sorted(PACKAGES.items())))
    print(f"vendored {', '.join(PACKAGES)} into {dest}")
    return 0


_OTHER_FONTS = re.compile(r',url\([^)]*\.(?:woff|ttf)\) format\("(?:woff|truetype)"\)')


def woff2_only(css: str) -> str:
    """KaTeX's stylesheet with its fonts in WOFF2 only (the site ships no other)."""
    out = _OTHER_FONTS.sub("", css)
    if "woff2" not in out or re.search(r"\.(?:ttf|woff)\b", out):
        raise ValueError("KaTeX's stylesheet does not name its fonts as expected")
    return out


def extract(tar: tarfile.TarFile, dest: Path) -> None:
    """Extract ``tar`` into ``dest`` with tarfile's ``data`` filter: plain files and
    folders inside ``dest`` only. Python before 3.11.4 (Debian 12 has 3.11.2) has no
    filters: the members are checked here instead, with the same refusals."""
    if hasattr(tarfile, "data_filter"):
        tar.extractall(dest, filter="data")
        return
    root = dest.resolve()
    for member in tar.getmembers():
        target = (dest / member.name).resolve()
        if not (member.isfile() or member.isdir()) or (
            target != root and root not in target.parents
        ):
            raise tarfile.TarError(
                f"{member.name}: not a plain file or folder inside the package"
            )
        member.mode = (member.mode | 0o600) & 0o755 if member.isfile() else 0o755
        member.uid = member.gid = 0
        member.uname = member.gname = ""
    tar.extractall(dest)


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else DEST))
