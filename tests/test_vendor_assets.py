"""The script that fetches the book's MathJax and widget scripts fails clearly."""

import os
import shutil
import subprocess
import sys

import pytest
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


def _tarball(path: Path, members: dict[str, bytes]) -> Path:
    import io
    import tarfile

    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


@pytest.mark.parametrize("filters", [True, False], ids=["filter", "python-3.11.2"])
def test_packages_extract_inside_their_folder_with_or_without_tar_filters(
    tmp_path, monkeypatch, filters
):
    """Python before 3.11.4 (Debian 12's 3.11.2) has no tar filters: make book
    failed there with "extractall() got an unexpected keyword argument 'filter'".
    Without them the members are checked by hand: a member that would land outside
    the package's folder is refused either way."""
    import tarfile

    sys.path.insert(0, str(ROOT))
    from tools.vendor_assets import extract

    if not filters:
        monkeypatch.delattr(tarfile, "data_filter", raising=False)
    elif not hasattr(tarfile, "data_filter"):
        pytest.skip("this Python has no tar filters")
    good = _tarball(tmp_path / "good.tgz", {"package/es5/tex-chtml.js": b"x = 1"})
    with tarfile.open(good) as tar:
        extract(tar, tmp_path / "out")
    assert (tmp_path / "out" / "package" / "es5" / "tex-chtml.js").read_bytes() == (
        b"x = 1"
    )
    bad = _tarball(tmp_path / "bad.tgz", {"package/../../evil.js": b"y = 2"})
    with tarfile.open(bad) as tar, pytest.raises(tarfile.TarError):
        extract(tar, tmp_path / "out2")
    assert not (tmp_path / "evil.js").exists()
