"""The script that fetches the book's MathJax and widget scripts fails clearly."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "tools" / "vendor_assets.py"


def test_unreachable_registry_gives_npm_error(tmp_path):
    dest = tmp_path / "vendor"
    env = {
        **os.environ,
        # nothing listens on port 9; a fresh npm cache holds no copy of the packages
        "npm_config_registry": "http://127.0.0.1:9/",
        "npm_config_cache": str(tmp_path / "npm-cache"),
    }
    # the bound only stops a hang: npm's defaults stay silent for over a minute here
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), str(dest)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    if shutil.which("npm") is None:
        assert "npm (Node.js) is needed" in proc.stderr
        return
    assert "fetching mathjax@3.2.2 from http://127.0.0.1:9/" in proc.stdout
    assert "ECONNREFUSED" in proc.stderr  # npm's own message
    assert "npm pack mathjax@3.2.2 failed" in proc.stderr
    assert not (dest / ".complete").exists()
