"""Small helpers shared by the tests."""

from __future__ import annotations

import contextlib
import http.server
import itertools
import re
import shutil

#: The jupytext front matter of a MyST text notebook run by the python3 kernel, as
#: every chapter of the book starts (for the tests that build small books).
MYST_HEADER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---
"""


def pip_install(py) -> list:
    """The command that pip-installs into the venv of the interpreter ``py``,
    without compiling every module it installs (JAX, SciPy and SymPy: two thirds of
    an install's CPU time): Python compiles the modules a test imports when it
    imports them. Arguments (requirements, ``-r FILE``) follow."""
    return [py, "-m", "pip", "install", "--quiet", "--no-compile"]


_FRAME = re.compile(r'frames\[\d+\] = "data:image/')


def jshtml_frames(html: str) -> int:
    """Number of frames embedded in the output of ``FuncAnimation.to_jshtml()``."""
    return len(_FRAME.findall(html))


#: Debian's Chromium, which the browser tests drive through playwright (None: absent),
#: started by ``tools.browser_check.chromium`` (the ``browser`` fixture); looked up
#: here too so that importing these helpers does not import Sphinx
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


# ------------------------------------------------ the labels of a static explorer

# the names a figure writes for a control's label
NAMES = {
    "β": ("beta", "β", r"\beta"),
    "λ": ("lam", "lambda", "λ", r"\lambda"),
    "t": ("t",),
    "time": ("t",),
    "d": ("d",),
    "n": ("n",),
    "log₂ β": ("beta",),  # the figure writes beta = 2 ** label
    "σ/σ_c": (r"\sigma",),  # the figure writes sigma = 1.05 sigma_c
}
# controls whose figure writes another quantity: the gaussian widget's frame index
# (the figure writes the time of that frame)
NOT_WRITTEN = {("gaussian_widget", "frame")}
PAIR = re.compile(r"(\\?[A-Za-zλβ]+)\s*=\s*(-?\d+(?:\.\d+)?(?:e-?\d+)?)")


def _written(texts: list[str]) -> dict[str, set[float]]:
    found: dict[str, set[float]] = {}
    for text in texts:
        for name, value in PAIR.findall(text.replace("$", "")):
            found.setdefault(name, set()).add(float(value))
    return found


@contextlib.contextmanager
def recording_labels(spec):
    """While an explorer's frames are drawn (``render_frames``, or its static
    display), the values its controls hold and the numbers its figure writes, one
    entry per saved frame."""
    from matplotlib.text import Text

    from attnlib.widgets import _static

    frames: list[tuple[list, dict[str, set[float]]]] = []
    real = _static._png

    def record(fig, dpi):
        texts = [t.get_text() for t in fig.findobj(Text) if t.get_text().strip()]
        frames.append(([a.control.value for a in spec.axes], _written(texts)))
        return real(fig, dpi)

    _static._png = record
    try:
        yield frames
    finally:
        _static._png = real


def label_failures(spec, name: str, frames=None) -> tuple[list[str], int]:
    """Frames whose controls show another value than the figure was drawn for;
    and the number of (frame, control) pairs compared. ``frames``: recorded by
    :func:`recording_labels` (drawn here when None)."""
    if frames is None:
        from attnlib.widgets import _static

        with recording_labels(spec) as frames:
            _static.render_frames(spec)

    combos = list(itertools.product(*(range(len(a.values)) for a in spec.axes)))
    failures, compared = [], 0
    for combo, (held, written) in zip(combos, frames):
        for axis, i, value in zip(spec.axes, combo, held):
            label, want = axis.text(axis.values[i]), axis.values[i]
            where = f"{name}: {axis.label} = {label}"
            if value != want:
                failures.append(f"{where}: the control holds {value!r}, not {want!r}")
            if not axis.numeric or (name, axis.label) in NOT_WRITTEN:
                continue
            shown = float(label)
            if axis.label == "log₂ β":
                shown = 2.0**shown
            names = NAMES.get(axis.label, (axis.label,))
            drawn = set().union(*(written.get(n, set()) for n in names))
            if not drawn:
                failures.append(f"{where}: the figure does not write {axis.label}")
                continue
            compared += 1
            if shown not in drawn:
                failures.append(
                    f"{where}: the frame is drawn for {sorted(drawn)} (its figure)"
                )
    return failures, compared


#: A script that prints where the ``attnlib`` of its environment was installed from
#: (its file, version and pip's ``direct_url.json``), for the tests that install the
#: book's wheel into a fresh environment.
WHERE = """
import json, attnlib
from importlib.metadata import distribution
direct = distribution("attnlib").read_text("direct_url.json")
print(json.dumps({"file": attnlib.__file__, "version": attnlib.__version__,
                  "direct_url": json.loads(direct) if direct else None}))
"""


class LoggedSite(http.server.SimpleHTTPRequestHandler):
    """A handler for a site served on this machine that prints nothing and records
    the paths asked for (``LoggedSite.requests``; clear it before a test reads it)."""

    requests: list[str] = []

    def log_message(self, format, *args):  # noqa: A002 (http.server's name)
        LoggedSite.requests.append(self.path)
