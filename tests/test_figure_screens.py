"""Figures drawn for a desktop's and a phone's column (attnlib.viz.screens), shown
through <picture> (bookext.legible), and the page check of figures
(tools.figure_check): no figure to scroll sideways on a phone, text of at least 8 px,
captions and alternative texts written for a reader."""

import io

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from attnlib.viz import caption  # noqa: E402
from attnlib.viz._render import mark_text_size, record_text_sizes, smallest_text  # noqa: E402
from attnlib.viz._screens import (
    DESKTOP_COLUMN_PX,
    PHONE_COLUMN_PX,
    TARGET_PX,
    attach_phone,
    figure_text,
    one_column,
    phone_image,
    screen_pngs,
    without_phone,
)
from bookext.legible import legible_html, png_size  # noqa: E402
from bookext.static import figure_texts  # noqa: E402
from tools.figure_check import figure_failures, machine_dump  # noqa: E402


def _strip(panels=4, width=15.0, fontsize=7):
    fig, axes = plt.subplots(1, panels, figsize=(width, 3), sharey=True)
    for k, ax in enumerate(axes):
        ax.plot([0, 1], [k, 0], label=f"layer {k}")
        ax.set_title(f"layer {k}")
        ax.legend(fontsize=fontsize)
    fig.tight_layout()
    return fig


def _drawer(fig):
    def draw():
        buf = io.BytesIO()
        with record_text_sizes() as sizes:
            fig.savefig(buf, format="png", bbox_inches="tight", dpi=fig.dpi)
        return buf.getvalue(), sizes

    return draw


def _shown(png, sizes, column):
    return min(sizes) * min(1, column / png_size(png)[0])


def test_a_strip_of_panels_is_drawn_legible_for_both_columns_and_left_as_it_was():
    fig = _strip()
    draw = _drawer(fig)
    before = png_size(draw()[0])
    (desk, desk_sizes), phone = screen_pngs(fig, draw)
    # as drawn at first: 1490 px wide, its 7 pt legends under 4 px in the column
    assert _shown(*draw(), DESKTOP_COLUMN_PX) < 8
    assert _shown(desk, desk_sizes, DESKTOP_COLUMN_PX) >= TARGET_PX
    w, h = png_size(desk)
    assert w > 2 * h  # still one row of panels
    assert phone is not None
    assert _shown(*phone, PHONE_COLUMN_PX) >= TARGET_PX
    pw, ph = png_size(phone[0])
    assert ph > 3 * pw  # four panels stacked
    assert png_size(draw()[0]) == before  # the figure is as it was
    assert [ax.get_subplotspec().colspan.start for ax in fig.axes] == [0, 1, 2, 3]
    plt.close(fig)


def test_a_figure_legible_in_a_phone_column_gets_no_phone_image():
    fig, ax = plt.subplots(figsize=(3.2, 2.4), dpi=100)
    ax.plot([0, 1])
    assert screen_pngs(fig, _drawer(fig))[1] is None
    plt.close(fig)


def test_one_column_stacks_row_by_row_and_keeps_colorbars_with_their_panel():
    fig, axes = plt.subplots(2, 2, figsize=(8, 6))
    image = axes[0, 1].imshow([[0, 1], [1, 0]])
    fig.colorbar(image, ax=axes[0, 1])  # a grid nested in the panel's cell
    with one_column(fig) as stacked:
        rows = [
            ax.get_subplotspec().get_topmost_subplotspec().rowspan.start
            for ax in axes.flat
        ]
        bar = [ax for ax in fig.axes if ax not in axes.flat][0]
        top = bar.get_position().y1
    assert stacked and rows == [0, 1, 2, 3]
    # the colorbar sits beside the second panel of four, in the top half
    assert top > 0.5
    plt.close(fig)
    fig, ax = plt.subplots()
    with one_column(fig) as stacked:
        assert not stacked
    plt.close(fig)


def test_the_phone_image_rides_in_the_desktop_png_and_is_taken_out():
    fig = _strip(2, 6)
    draw = _drawer(fig)
    desk, sizes = draw()
    small, small_sizes = draw()
    both = attach_phone(mark_text_size(desk, sizes), mark_text_size(small, small_sizes))
    assert phone_image(both) == mark_text_size(small, small_sizes)
    assert smallest_text(both) == pytest.approx(min(sizes), abs=0.01)
    assert without_phone(both) == mark_text_size(desk, sizes)
    assert phone_image(desk) is None and without_phone(desk) is desk
    with pytest.raises(ValueError, match="png must be"):
        attach_phone(b"not a png", desk)
    plt.close(fig)


def test_a_caption_travels_in_the_text_form_and_must_say_more_than_itself():
    fig = plt.figure()
    assert figure_texts(figure_text(fig)) == ("Figure", "An empty figure.")
    caption(fig, "Energy against time.", alt="The energy rises, then stays.")
    assert figure_texts(figure_text(fig)) == (
        "Energy against time.",
        "The energy rises, then stays.",
    )
    with pytest.raises(ValueError, match="alt must say more"):
        caption(fig, "Energy.", alt="energy.")
    with pytest.raises(ValueError, match="text must not be empty"):
        caption(fig, " ", alt="x")
    with pytest.raises(TypeError, match="fig must be a matplotlib Figure"):
        caption("fig", "a", alt="b")
    plt.close(fig)


def test_a_figure_with_a_phone_image_becomes_a_picture(tmp_path):
    fig = _strip()
    (desk, sizes), phone = screen_pngs(fig, _drawer(fig))
    plt.close(fig)
    png = attach_phone(mark_text_size(desk, sizes), mark_text_size(*phone))
    written = {}

    def write(name, small):
        written[name] = small
        return f"../_images/phone/{name}"

    body = '<figure><img alt="a" src="../_images/fig.png" /></figure>'
    out = legible_html(body, {"fig.png": png}.get, write)
    assert out == (
        '<figure><picture class="attnlib-screens"><source media="(max-width: 720px)"'
        ' srcset="../_images/phone/fig.png"><img alt="a" src="../_images/fig.png" />'
        "</picture></figure>"
    )
    assert written == {"fig.png": mark_text_size(*phone)}
    assert legible_html(out, {"fig.png": png}.get, write) == out  # once


def _m(name="fig.png", shown=600, natural=600, **kw):
    m = {
        "url": f"file:///site/_images/{name}",
        "shown": shown,
        "natural": natural,
        "near": "fig-1",
        "alt": "The energy rises, then stays at its maximum.",
        "figure": True,
        "caption": "Fig. 1.1 Energy against time",
        "sideways": False,
        "phone": False,
    }
    return {**m, **kw}


def test_the_figure_check_fails_on_sideways_small_text_and_poor_texts():
    png = _png(fontsize=8)  # 11.1 px text in its pixels
    width = png_size(png)[0]
    files = {"fig.png": png}

    def read(path):
        return files[path.name]

    def fails(width_px, **kw):
        m = _m(**{"natural": width, "shown": width, **kw})
        return figure_failures([m], width_px, {"fig.png"}, read)[0]

    assert fails(1366) == [] and fails(390) == []
    # a figure the phone must scroll sideways
    assert "scrolled sideways" in fails(390, sideways=True)[0]
    assert fails(1366, sideways=True) == []  # only the phone's width holds it
    # text under 8 px: on the desktop always, on the phone in its phone layout
    small = {"shown": width * 0.5}
    assert "px high on screen" in " ".join(fails(1366, **small))
    assert fails(390, **small) == []  # shrunk on the phone, no phone layout
    assert "px high on screen" in " ".join(fails(390, phone=True, **small))
    # captions and alternative texts
    assert "caption that says nothing" in fails(1366, caption="Fig. 7.1 Figure")[0]
    assert "caption that says nothing" in fails(1366, caption="Fig. 7.1")[0]
    assert "no alternative text" in fails(1366, alt="")[0]
    assert "machine dump" in fails(1366, alt="2 panels. 1: untitled panel (x: t).")[0]
    assert "its caption again" in fails(1366, alt="Energy against time.")[0]
    # an explorer's frame has no caption of its own, but a written alternative text
    assert fails(1366, figure=False, caption=None) == []
    dump = "Animation of 40 frames; its figure: x (3 curves)."
    assert "machine dump" in fails(1366, figure=False, caption=None, alt=dump)[0]
    with pytest.raises(ValueError, match="width must be a positive int"):
        figure_failures([], 0)


def _png(fontsize):
    fig, ax = plt.subplots(figsize=(4, 2.5), dpi=100)
    ax.set_title("t", fontsize=fontsize)
    ax.tick_params(labelsize=fontsize)
    buffer = io.BytesIO()
    with record_text_sizes() as sizes:
        fig.savefig(buffer, format="png")
    plt.close(fig)
    return mark_text_size(buffer.getvalue(), sizes)


@pytest.mark.parametrize(
    "alt, dump",
    [
        ("Fig: 2 panels. 1: a (x: t; y: r).", True),
        ("1: untitled panel.", True),
        ("energy (x: t; y: E; 47 curves).", True),
        ("SA (legend: n = 8, n = 16).", True),
        ("The curves for n = 8 and n = 16 fall together: 2 panels show it.", False),
        ("Three clusters form by t = 20; the energy then stays flat.", False),
    ],
)
def test_machine_dumps_are_told_from_texts_for_readers(alt, dump):
    assert (machine_dump(alt) is not None) is dump


def test_a_long_title_is_wrapped_on_the_phone_and_restored():
    """A title wider than the phone's figure would widen its cropped image and
    shrink the panels: it is broken into lines there, and kept whole on the
    desktop and after."""
    fig = _strip()
    title = "encoder_post: histograms of the pairwise inner products by layer"
    fig.suptitle(title)
    (desk, sizes), phone = screen_pngs(fig, _drawer(fig))
    assert fig._suptitle.get_text() == title
    # the phone's image is as wide as its panels need, not as the title
    assert png_size(phone[0])[0] < 1.1 * PHONE_COLUMN_PX * min(phone[1]) / TARGET_PX
    plt.close(fig)


def test_a_figure_made_without_pyplot_gets_its_phone_layout():
    """The explorers draw on a Figure made without pyplot, whose bare canvas has
    no renderer: its phone layout (a suptitle over panels in a row) is drawn."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11, 3.4))
    for ax in fig.subplots(1, 2):
        ax.plot([0, 1])
    fig.suptitle("diag(1, λ) on S¹: ascent and its energy")
    fig.tight_layout()
    (desk, sizes), phone = screen_pngs(fig, _drawer(fig))
    assert phone is not None and png_size(phone[0])[1] > png_size(phone[0])[0]
