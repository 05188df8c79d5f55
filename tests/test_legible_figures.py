"""Figures keep their text legible: their PNG records the height of their smallest
text, a figure drawn for a phone too is shown through <picture> (its phone's image
on a narrow screen), no image scrolls sideways, and the page check
(tools.figure_check) fails on a figure whose smallest text shows smaller than 8 px
where it is held to that."""

import io
from pathlib import Path

import matplotlib.pyplot as plt
import pytest

from attnlib.viz._render import frame_png as _frame_png
from attnlib.viz._render import (
    _palette_png,
    frame_dpi,
    mark_text_size,
    player_html,
    record_text_sizes,
    smallest_text,
)
from bookext.legible import (
    MIN_TEXT_PX,
    PHONE_COLUMN,
    legible_html,
    legible_width,
    png_size,
)
from tools.figure_check import FIGURES, figure_failures

from .helpers import CHROMIUM

CSS = Path(__file__).resolve().parents[1] / "bookext" / "_static" / "attnlib-book.css"


def _png(panels: int, fontsize: float, dpi: int = 100, mark: bool = True) -> bytes:
    """A figure of ``panels`` panels side by side, its text ``fontsize`` points
    (its PNG marked with the size of its smallest text, unless not ``mark``)."""
    fig, axes = plt.subplots(1, panels, figsize=(2.2 * panels, 2.2), dpi=dpi)
    for k, ax in enumerate(axes if panels > 1 else [axes]):
        ax.plot([0, 1], [1, 0], label="decay")
        ax.set_title(f"panel {k}", fontsize=fontsize)
        ax.tick_params(labelsize=fontsize)
        ax.legend(fontsize=fontsize)
    buffer = io.BytesIO()
    with record_text_sizes() as sizes:
        fig.savefig(buffer, format="png")
    plt.close(fig)
    return mark_text_size(buffer.getvalue(), sizes) if mark else buffer.getvalue()


def test_a_figure_records_its_smallest_text_in_its_pixels():
    png = _png(2, 7, dpi=100)
    assert smallest_text(png) == pytest.approx(7 * 100 / 72, abs=0.01)
    assert smallest_text(_png(2, 7, dpi=200)) == pytest.approx(7 * 200 / 72, abs=0.01)
    # marking again replaces the record; the image is the same
    again = mark_text_size(png, [20.0])
    assert smallest_text(again) == 20.0 and png_size(again) == png_size(png)
    with pytest.raises(ValueError, match="PNG"):
        smallest_text(b"GIF89a")
    with pytest.raises(ValueError, match="positive"):
        mark_text_size(png, [0.0])


@pytest.mark.parametrize("dpi", [72, 100, 110.7])
def test_a_frame_drawn_once_is_the_palette_png_of_matplotlibs_png(dpi, monkeypatch):
    """An explorer's frame is drawn into RGBA pixels and encoded once; it must be,
    byte for byte, the palette PNG made from matplotlib's own PNG (the figure's
    size, 4.3 by 2.7 inches, is a fractional number of pixels at these dpi)."""
    fig, ax = plt.subplots(figsize=(4.3, 2.7))
    ax.imshow([[0.0, 0.3], [0.7, 1.0]], cmap="viridis")
    ax.plot([0, 1], [1, 0], label="decay")
    ax.set_title("a frame", fontsize=9)
    buffer = io.BytesIO()
    with record_text_sizes() as sizes:
        fig.savefig(buffer, format="png", dpi=dpi)
    two_steps = mark_text_size(_palette_png(buffer.getvalue(), 256), sizes)
    assert _palette_png(buffer.getvalue(), 256) != buffer.getvalue()  # smaller
    with monkeypatch.context() as m:  # drawn once: no PNG of matplotlib decoded
        m.setattr("attnlib.viz._render._palette_png", lambda *a: pytest.fail("decoded"))
        assert _frame_png(fig, dpi, 256) == two_steps
    # a transparent figure keeps its transparency: matplotlib's PNG, marked
    fig.patch.set_alpha(0.0)
    buffer = io.BytesIO()
    with record_text_sizes() as sizes:
        fig.savefig(buffer, format="png", dpi=dpi)
    assert _frame_png(fig, dpi, 256) == mark_text_size(buffer.getvalue(), sizes)
    plt.close(fig)


def test_the_legible_width_of_a_figure():
    assert legible_width(1000, 18.0) == 500  # shrinks to half: text 9 px
    assert legible_width(1000, 6.0) == 1000  # never enlarged
    assert legible_width(1000, None) is None  # not measured
    assert legible_width(1000, float("inf")) is None  # no text
    with pytest.raises(ValueError, match="positive"):
        legible_width(1000, 0.0)


def test_a_measured_image_carries_its_legible_width_and_scrolls_in_no_box():
    wide, narrow = _png(6, 9), _png(1, 14)
    images = {"wide.png": wide, "narrow.png": narrow}
    body = '<div><img alt="a" src="../_images/wide.png" /></div>' + (
        '<img alt="b" src="../_images/narrow.png" /><img src="../_images/other.png" />'
    )
    out = legible_html(body, images.get)
    w_wide = legible_width(png_size(wide)[0], smallest_text(wide))
    w_narrow = legible_width(png_size(narrow)[0], smallest_text(narrow))
    assert w_wide > PHONE_COLUMN >= w_narrow
    assert f'<img style="--attnlib-legible-width: {w_wide}px" alt="a"' in out
    assert f'<img style="--attnlib-legible-width: {w_narrow}px" alt="b"' in out
    assert 'attnlib-legible"' not in out and "tabindex" not in out  # no scroll box
    assert '<img src="../_images/other.png" />' in out  # not known: unchanged
    assert legible_html(out, images.get) == out  # held once


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="the Debian package chromium is missing")
def test_in_chromium_a_wide_figure_shrinks_and_its_picture_shows_the_phone_image(
    browser, tmp_path
):
    """One page with a figure of six panels, as the book's CSS shows it: alone, it
    shrinks to the phone's column (its text about 3 px, which the check does not
    hold it to, and nothing scrolls sideways); in a <picture> with a phone's image,
    Chromium shows the phone's image at 390 px, whose text the check measures, and
    the desktop's at 1366 px."""
    from attnlib.viz._screens import attach_phone

    images = tmp_path / "_images"
    (images / "phone").mkdir(parents=True)
    png, small = _png(6, 8), _png(1, 12)
    (images / "fig.png").write_bytes(attach_phone(png, small))
    (images / "phone" / "fig.png").write_bytes(small)
    img = '<figure id="fig-1"><img alt="six panels" src="_images/fig.png" /></figure>'
    pictured = legible_html(
        img,
        {"fig.png": attach_phone(png, small)}.get,
        lambda n, p: "_images/phone/fig.png",
    )
    results = {}
    for width in (390, 1366):
        page = browser.new_page(viewport={"width": width, "height": 800})
        try:
            for name, body in (("shrunk", img), ("picture", pictured)):
                path = tmp_path / f"{name}.html"
                path.write_text(
                    "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
                    f"<title>t</title><link rel='stylesheet' href='{CSS.as_uri()}'>"
                    "<style>main { padding: 0 16px; } body { margin: 0; }</style>"
                    f"</head><body><main><div class='cell_output'>{body}</div></main>"
                    "</body></html>",
                    encoding="utf-8",
                )
                page.goto(path.as_uri(), wait_until="load")
                measures = page.evaluate(FIGURES)
                results[name, width] = (measures, *figure_failures(measures, width))
        finally:
            page.close()
    measures, failures, summary = results["shrunk", 390]
    assert summary["sideways"] == 0 and summary["phone"] == 0
    assert measures[0]["shown"] < 360 and not any("px high" in f for f in failures)
    measures, failures, summary = results["picture", 390]
    assert measures[0]["url"].endswith("/_images/phone/fig.png")
    assert summary["phone"] == 1 and summary["smallest"] == pytest.approx(
        smallest_text(small)
    )
    measures, failures, summary = results["picture", 1366]
    assert measures[0]["url"].endswith("/_images/fig.png") and summary["phone"] == 0


def test_explorer_frames_are_drawn_with_legible_text_and_held_on_a_phone(tmp_path):
    """An explorer drawn at 72 dpi with 7-point legends would show 7 px text even at
    full size: its frames are drawn at the dpi that makes the smallest text 9 px,
    no wider than a desktop column holds legibly, record that size, and the page
    gives the explorer's image its legible width."""
    import ipywidgets as widgets

    from attnlib.widgets._static import (
        FRAME_WIDTH_PX,
        Axis,
        StaticSpec,
        explorer_html,
    )

    fig, axes = plt.subplots(1, 3, figsize=(9, 2.5))
    slider = widgets.FloatSlider(value=1.0, min=0.5, max=1.5, step=0.5)

    def redraw(*_):
        for k, ax in enumerate(axes):
            ax.clear()
            ax.plot([0, 1], [0, slider.value * (k + 1)], label="line")
            ax.legend(fontsize=7)

    slider.observe(redraw, names="value")
    redraw()
    spec = StaticSpec(fig, [Axis("c", slider, [0.5, 1.0, 1.5])], alt="Three lines.")
    assert frame_dpi(fig, 72.0) == pytest.approx(72 * 9 / 7)
    assert frame_dpi(fig, 200.0) == 200.0  # never lowered
    page, default = explorer_html(spec)
    plt.close(fig)
    assert smallest_text(default) == pytest.approx(MIN_TEXT_PX)
    width = png_size(default)[0]
    # 9 inches at the dpi of 9 px text would be 833 px: drawn narrower, so that
    # its text still shows 8.5 px high in a desktop column of 680 px
    assert 9 * 72 * 9 / 7 > 833 and width == FRAME_WIDTH_PX
    assert fig.get_size_inches()[0] == 9.0  # the figure as it was

    body = _page(page, tmp_path)
    assert list((tmp_path / "_images" / "explorer").glob("*.png"))
    assert "data:image/png" not in body
    # its legible width (9 px text at its own width) in its style, and no box that
    # scrolls sideways on a phone
    assert f"--attnlib-legible-width: {width}px" in body and width > PHONE_COLUMN
    assert 'class="attnlib-legible"' not in body


def _animation(legends=(7, 7, 7), figsize=(4, 2.5)):
    """A tiny animation at 72 dpi: one line, its legend ``legends[k]`` points in
    frame ``k``."""
    from matplotlib.animation import FuncAnimation

    fig, ax = plt.subplots(figsize=figsize, dpi=72)

    def draw(k):
        ax.clear()
        ax.plot([0, 1], [0, k + 1], label="line")
        ax.legend(fontsize=legends[k])

    anim = FuncAnimation(fig, draw, frames=len(legends), interval=100)
    plt.close(fig)
    return anim


def _page(body, tmp_path):
    """``body`` as ``externalise_frames`` leaves it in a page of ``tmp_path``."""
    from bookext.static import externalise_frames

    class Builder:
        outdir = str(tmp_path)

    class App:
        builder = Builder()

    context = {"body": body, "pathto": lambda name, _: "../" + name}
    externalise_frames(App(), "page", "page.html", context, None)
    return context["body"]


def test_player_frames_are_drawn_with_legible_text_and_held_on_a_phone(tmp_path):
    """A player of an animation drawn at 72 dpi with a 7-point legend would show
    7 px text even at full size: its frames are drawn at the dpi that makes the
    smallest text 9 px and record that size; the page moves them into files, which
    the page check measures, and holds the player's image at its legible width."""
    from bookext.latex import FRAME, frame_png
    from bookext.static import frame_name
    from tools.check_html import figure_images

    player = player_html(_animation())
    frames = [frame_png(b64) for _, b64 in FRAME.findall(player)]
    assert len(frames) == 3
    assert [smallest_text(f) for f in frames] == [pytest.approx(MIN_TEXT_PX)] * 3
    width = png_size(frames[0])[0]
    assert width == pytest.approx(4 * 72 * 9 / 7, abs=1)  # 370 px, not 288
    body = _page(player, tmp_path)
    assert "data:image/png" not in body
    names = {frame_name(f) for f in frames}
    assert {p.name for p in (tmp_path / "_images" / "player").glob("*.png")} == names
    assert all(f'"../_images/player/{name}"' in body for name in names)
    # its legible width (9 px text at its own width) in its style, and no box that
    # scrolls sideways on a phone
    assert f'<img style="--attnlib-legible-width: {width}px" id="_anim_img' in body
    assert width > PHONE_COLUMN and 'class="attnlib-legible"' not in body
    # the page check knows the frames as figures: one that records no text fails
    outputs = [{"output_type": "display_data", "data": {"text/html": player}}]
    assert figure_images({"cells": [{"outputs": outputs}]}) == names


def test_a_player_is_drawn_at_the_dpi_of_its_smallest_text_in_any_frame(tmp_path):
    """The first frame sets the dpi; a later frame with a smaller legend (6 points,
    6 px at 72 dpi) draws the player again at the dpi that makes it 9 px, and the
    page holds the image at the legible width of that frame, not the first's."""
    from bookext.latex import FRAME, frame_png

    player = player_html(_animation(legends=(9, 9, 6)), colors=None)
    frames = [frame_png(b64) for _, b64 in FRAME.findall(player)]
    sizes = [smallest_text(f) for f in frames]
    assert sizes == pytest.approx([9 * 9 / 6, 9 * 9 / 6, MIN_TEXT_PX])
    assert {png_size(f) for f in frames} == {png_size(frames[0])}
    width = png_size(frames[0])[0]
    assert width == pytest.approx(4 * 72 * 9 / 6, abs=1)
    assert f"--attnlib-legible-width: {width}px" in _page(player, tmp_path)


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="the Debian package chromium is missing")
def test_in_chromium_at_390_px_a_player_fits_the_screen(browser, tmp_path):
    """A player as the book's CSS shows it at 390 px, its script running: it fits
    the phone's column (nothing scrolls sideways), the check measures the frame it
    shows and, the player having no phone layout, does not hold it to 8 px."""
    from bookext.latex import FRAME, frame_png
    from bookext.static import frame_name

    player = player_html(_animation())
    names = {frame_name(frame_png(b64)) for _, b64 in FRAME.findall(player)}
    (tmp_path / "book").mkdir()
    path = tmp_path / "book" / "page.html"
    path.write_text(
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>t</title><link rel='stylesheet' href='{CSS.as_uri()}'>"
        "<style>main { padding: 0 16px; } body { margin: 0; }</style></head>"
        f"<body><main><div class='cell_output'>{_page(player, tmp_path)}</div>"
        "</main></body></html>",
        encoding="utf-8",
    )
    page = browser.new_page(viewport={"width": 390, "height": 800})
    try:
        page.goto(path.as_uri(), wait_until="load")
        page.wait_for_function("document.querySelector('main img').naturalWidth > 0")
        measures = page.evaluate(FIGURES)
        wide = page.evaluate("document.documentElement.scrollWidth")
    finally:
        page.close()
    assert len(measures) == 1 and measures[0]["url"].endswith(tuple(names))
    failures, summary = figure_failures(measures, 390, names)
    assert failures == [] and summary["sideways"] == 0 and summary["count"] == 1
    assert measures[0]["shown"] <= 358 and wide <= 390
