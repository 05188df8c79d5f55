"""The script that fetches the book's KaTeX and axe-core fails clearly and lays
them out as the build and the pages expect."""

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
    assert "fetching katex@0.16.22 from http://127.0.0.1:9/" in proc.stdout
    assert "ECONNREFUSED" in proc.stderr  # npm's own message
    assert "npm pack katex@0.16.22 failed" in proc.stderr
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


def test_katex_serves_its_fonts_in_woff2_only():
    sys.path.insert(0, str(ROOT))
    from tools.vendor_assets import woff2_only

    face = (
        "@font-face{font-family:KaTeX_AMS;src:url(fonts/KaTeX_AMS-Regular.woff2) "
        'format("woff2"),url(fonts/KaTeX_AMS-Regular.woff) format("woff"),'
        'url(fonts/KaTeX_AMS-Regular.ttf) format("truetype")}'
    )
    assert woff2_only(face + ".katex{font:normal 1.21em KaTeX_Main}") == (
        "@font-face{font-family:KaTeX_AMS;src:url(fonts/KaTeX_AMS-Regular.woff2) "
        'format("woff2")}.katex{font:normal 1.21em KaTeX_Main}'
    )
    # a stylesheet that names its fonts otherwise is not rewritten blindly
    with pytest.raises(ValueError, match="does not name its fonts"):
        woff2_only(face.replace("url(fonts/KaTeX_AMS-Regular.ttf)", "url('a.ttf')"))


VENDOR = ROOT / "book" / "_vendor"


@pytest.mark.skipif(
    not (VENDOR / ".complete").exists(), reason="python -m tools.vendor_assets not run"
)
def test_the_vendored_katex_is_laid_out_for_the_build_and_the_pages():
    import re

    css = (VENDOR / "katex" / "katex.min.css").read_text(encoding="utf-8")
    fonts = set(re.findall(r"url\(fonts/([^)]+)\)", css))
    assert fonts and all(name.endswith(".woff2") for name in fonts)
    assert fonts == {p.name for p in (VENDOR / "katex" / "fonts").iterdir()}
    assert (VENDOR / "katex-node" / "katex.js").stat().st_size > 100_000
    assert not (VENDOR / "mathjax").exists()
