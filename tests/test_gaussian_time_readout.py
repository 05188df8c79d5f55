"""The Gaussian explorer's frame control is read in the time of its figure: beside it
a readout "t = ..." gives the time of the frame shown, which depends on the preset
and the kernel (a run stops at 0.9 of its blow-up time), live and in the static
explorer of the page, where it must be the t that the frame's title writes."""

from __future__ import annotations

import itertools
import json
import re

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from attnlib.widgets._static import STATIC_ENV  # noqa: E402
from attnlib.widgets.gaussian import gaussian_widget, time_text  # noqa: E402

from .helpers import recording_labels  # noqa: E402

TIMES = re.compile(r"var times = (\{.*?\}), frames = (\[.*?\]);", re.S)
READOUT = re.compile(r'<output class="attnlib-explorer-time"[^>]*>([^<]*)</output>')


def test_the_live_readout_follows_the_frame_and_the_preset():
    w = gaussian_widget(n=30, frames=4)
    title = w.ax.get_title()
    assert w.time_readout.value in title  # the last frame of the blow-up run
    assert w.time_readout.value == time_text(w.scenario().times[-1])
    assert w.scenario().times[-1] < 0.5  # it stops before the blow-up time
    w.frame.value = 1
    assert w.time_readout.value == time_text(w.scenario().times[1])
    assert w.time_readout.value in w.ax.get_title()
    w.preset.value = "decay to a point (Q = -I)"
    assert w.time_readout.value == time_text(w.scenario().times[1]) == "t = 0.667"
    # the readout is shown beside the frame control
    assert w.time_readout in w.children[1].children


@pytest.fixture(scope="module")
def static():
    w = gaussian_widget(n=30, frames=4)
    spec = w.static
    with pytest.MonkeyPatch.context() as mp, recording_labels(spec) as frames:
        mp.setenv(STATIC_ENV, "1")
        bundle = w._repr_mimebundle_()
    return spec, bundle["text/html"], frames


def test_the_static_readout_is_the_time_each_frame_writes(static):
    spec, page, frames = static
    m = TIMES.search(page)
    assert m, "the explorer has no table of times"
    times, frame_values = json.loads(m.group(1)), json.loads(m.group(2))
    assert frame_values == list(spec.axes[2].values)
    combos = list(itertools.product(*(range(len(a.values)) for a in spec.axes)))
    compared = 0
    for (i, j, k), (_, written) in zip(combos, frames):
        shown = float(time_text(times[f"{i},{j}"][frame_values[k]])[4:])
        assert shown in written.get("t", set()), (i, j, k, shown, written)
        compared += 1
    assert compared == len(combos) == len(frames)
    # the runs do not share a time grid: a frame's index alone does not give t
    assert len({tuple(v) for v in times.values()}) > 1


def test_the_page_opens_with_the_time_of_its_first_frame(static):
    spec, page, _ = static
    first = READOUT.search(page).group(1)
    assert first == time_text(json.loads(TIMES.search(page).group(1))["0,0"][-1])
    alt = re.search(r'class="attnlib-explorer-frame" src="[^"]*" alt="([^"]*)"', page)
    assert alt.group(1).endswith(f"frame = 3, {first}.")
    # beside the frame control, after its own value
    control = page.index('data-axis="2"')
    assert control < page.index("attnlib-explorer-time")


@pytest.mark.slow  # Chromium
def test_the_readout_follows_the_controls_in_chromium(static, tmp_path, browser):
    _, page_html, _ = static
    times = json.loads(TIMES.search(page_html).group(1))
    path = tmp_path / "explorer.html"
    path.write_text(
        "<!doctype html><html lang='en'><head><meta charset='utf-8'><title>e</title>"
        f"</head><body>{page_html}</body></html>",
        encoding="utf-8",
    )
    page = browser.new_page()
    page.goto(path.as_uri(), wait_until="load")
    readout = page.locator("output.attnlib-explorer-time")
    frame = page.locator("input[data-axis='2']")
    assert readout.inner_text() == time_text(times["0,0"][3])
    frame.focus()
    frame.press("ArrowLeft")  # frame 0
    assert readout.inner_text() == "t = 0.000"
    page.locator("select[data-axis='0']").select_option("1")
    frame.press("ArrowRight")  # frame 3 of the second preset
    assert readout.inner_text() == time_text(times["1,0"][3])
    assert readout.inner_text() != time_text(times["0,0"][3])
    assert frame.get_attribute("aria-valuetext").endswith(readout.inner_text())
    alt = page.locator("img.attnlib-explorer-frame").get_attribute("alt")
    assert alt.endswith(f", {readout.inner_text()}.")
    page.close()
