"""Fetch the scripts the HTML book serves itself, so that it renders with no network.

The pages need MathJax 3 (mathematics), require.js and the Jupyter widgets HTML manager
(static widget snapshots). They are taken from the npm registry with ``npm pack`` at the
exact versions below, checked against their published sha512 integrity, and unpacked
into ``book/_vendor`` (not tracked), which ``_config.yml`` serves as static files.

Run from the repository root: ``python book/vendor_assets.py``.
"""

from __future__ import annotations

import base64
import hashlib
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

PACKAGES = {
    "mathjax@3.2.2": (
        "sha512-Bt+SSVU8eBG27zChVewOicYs7Xsdt40qm4+UpHyX7k0/"
        "O9NliPc+x77k1/FEsPsjKPZGJvtRZM1vO+geW0OhGw=="
    ),
    "@jupyter-widgets/html-manager@1.0.6": (
        "sha512-+Mn+Ra8wyIHrYaUpfmf9A3dsLkt/NuwzPQN8sthdxBD35VV5cOJbpmg"
        "MhNR27n/rmP3mKyEe0PWCJrtZrXTXDQ=="
    ),
    "requirejs@2.3.8": (
        "sha512-7/cTSLOdYkNBNJcDMWf+luFvMriVm7eYxp4BcFCsAX0wF421Vyce5SXP17c+"
        "Jd5otXKGNehIonFlyQXSowL6Mw=="
    ),
}
# What each package contributes: (path inside the tarball, destination in book/_vendor).
LAYOUT = {
    "mathjax@3.2.2": [("package/es5", "mathjax")],
    "@jupyter-widgets/html-manager@1.0.6": [("package/dist", "html-manager")],
    "requirejs@2.3.8": [("package/require.js", "require.js")],
}
DEST = Path(__file__).resolve().parent / "_vendor"
STAMP = DEST / ".complete"


def _integrity(path: Path) -> str:
    digest = hashlib.sha512(path.read_bytes()).digest()
    return "sha512-" + base64.b64encode(digest).decode()


def main() -> int:
    if STAMP.exists() and STAMP.read_text() == repr(sorted(PACKAGES.items())):
        return 0
    npm = shutil.which("npm")
    if npm is None:
        print(
            "npm (Node.js) is needed to fetch MathJax and the widget manager",
            file=sys.stderr,
        )
        return 1
    shutil.rmtree(DEST, ignore_errors=True)
    DEST.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as tmp:
        for spec, expected in PACKAGES.items():
            out = subprocess.run(
                [npm, "pack", spec, "--silent", "--pack-destination", tmp],
                check=True,
                capture_output=True,
                text=True,
            ).stdout.split()[-1]
            tarball = Path(tmp) / out
            got = _integrity(tarball)
            if got != expected:
                print(f"{spec}: integrity mismatch ({got})", file=sys.stderr)
                return 1
            with tarfile.open(tarball) as tar:
                tar.extractall(Path(tmp) / spec.replace("/", "_"), filter="data")
            root = Path(tmp) / spec.replace("/", "_")
            for src, dst in LAYOUT[spec]:
                s, d = root / src, DEST / dst
                if s.is_dir():
                    shutil.copytree(s, d, ignore=shutil.ignore_patterns("*.map"))
                else:
                    shutil.copy2(s, d)
    STAMP.write_text(repr(sorted(PACKAGES.items())))
    print(f"vendored {', '.join(PACKAGES)} into {DEST}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
