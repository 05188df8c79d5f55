"""Check the built HTML book: self-contained pages whose mathematics renders.

Run after ``make book``: ``python tests/check_html.py [_build/html]``.

1. No page loads a script or stylesheet from another host (the book works offline).
2. Every chapter page, opened in headless Chromium with no network, typesets its
   mathematics with MathJax (``mjx-container`` elements, no ``merror``), renders the
   snapshots of its saved widgets, and shows no traceback output.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

EXTERNAL = re.compile(
    r'<(?:script|link)\b[^>]*(?:src|href)="(?:https?:)?//[^"]+"[^>]*>'
)


def main(root: Path) -> int:
    pages = sorted(root.glob("book/*.html"))
    if not pages:
        print(f"no chapter pages under {root}/book")
        return 1
    failures = []
    for page in pages:
        text = page.read_text(encoding="utf-8")
        for tag in EXTERNAL.findall(text):
            if 'rel="canonical"' not in tag:
                failures.append(f"{page.name}: loads from another host: {tag[:120]}")
        if "Traceback (most recent call last)" in text:
            failures.append(f"{page.name}: shows a traceback")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print(
            "chromium is not installed: the rendering check cannot run", file=sys.stderr
        )
        return 1
    for page in pages:
        with tempfile.TemporaryDirectory() as profile:
            dom = subprocess.run(
                [
                    chromium,
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--no-first-run",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                    f"--user-data-dir={profile}",
                    "--virtual-time-budget=15000",
                    "--dump-dom",
                    page.as_uri(),
                ],
                capture_output=True,
                text=True,
                timeout=120,
            ).stdout
        n_math = dom.count("<mjx-container")
        has_math = (
            "\\(" in page.read_text(encoding="utf-8") or "math notranslate" in dom
        )
        if has_math and n_math == 0:
            failures.append(f"{page.name}: MathJax typeset nothing")
        if "<mjx-merror" in dom:
            failures.append(f"{page.name}: MathJax reports an error")
        n_views = page.read_text(encoding="utf-8").count(
            'type="application/vnd.jupyter.widget-view+json"'
        )
        n_rendered = dom.count("jupyter-widgets-disconnected")
        if n_views and n_rendered == 0:
            failures.append(f"{page.name}: the saved widget views did not render")
        print(f"{page.name}: {n_math} formulas typeset, {n_views} widget views saved")
    for f in failures:
        print("FAIL", f)
    print(
        f"{len(pages) - len({f.split(':')[0] for f in failures})} passed, "
        f"{len({f.split(':')[0] for f in failures})} failed"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "_build/html").resolve()))
