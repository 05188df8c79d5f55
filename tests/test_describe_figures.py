"""Figures are described in the kernels that build the book: a real kernel, with
pyplot's inline backend (as ``make book`` runs the chapters), not ``MPLBACKEND=Agg``."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import nbformat  # noqa: E402
import pytest  # noqa: E402
from nbclient import NotebookClient  # noqa: E402

from attnlib.viz._describe import describe  # noqa: E402
from attnlib.viz._render import smallest_text  # noqa: E402
from bookext.static import IPYTHONDIR  # noqa: E402

CELLS = [
    # pyplot is imported in the cell that draws: the inline backend becomes active
    # while the cell runs, as in a chapter's first figure
    "import matplotlib, matplotlib.pyplot as plt\n"
    "fig, ax = plt.subplots()\n"
    "ax.plot([0, 1], [1, 0], label='$n = 8$')\n"
    "ax.set_title(r'Decay, $\\beta = 4$'); ax.set_xlabel('$t$'); ax.legend()\n"
    "plt.show()",
    "fig, (a, b) = plt.subplots(1, 2)\n"
    "fig.suptitle('Two views'); a.set_ylabel('energy'); b.scatter([0, 1], [1, 2])\n"
    "display(fig)\n"
    "plt.close(fig)",
    "print(matplotlib.get_backend())",
    "from attnlib.viz import caption\n"
    "fig, axes = plt.subplots(1, 3, figsize=(12, 3))\n"
    "for ax in axes: ax.plot([0, 1], [1, 0])\n"
    # a cell that ends with caption(...): the figure is shown once
    "caption(fig, 'Three decays.', alt='Each of the three curves falls to zero.')",
]


@pytest.fixture(scope="module")
def executed():
    mp = pytest.MonkeyPatch()
    mp.delenv("MPLBACKEND", raising=False)
    mp.setenv("IPYTHONDIR", str(IPYTHONDIR))
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    try:
        NotebookClient(nb, timeout=300, kernel_name="python3").execute()
    finally:
        mp.undo()
    return nb


def _figures(cell):
    return [o["data"] for o in cell.outputs if "image/png" in o.get("data", {})]


def test_the_kernel_uses_the_inline_backend(executed):
    assert "inline" in executed.cells[2].outputs[0]["text"]


def test_a_figure_shown_by_the_inline_backend_is_described(executed):
    (data,) = _figures(executed.cells[0])
    assert data["text/plain"] == (
        "Figure: Decay, β = 4 (x: t; 1 curve; legend: n = 8)."
    )


def test_a_figure_displayed_by_the_cell_is_described(executed):
    (data,) = _figures(executed.cells[1])
    assert data["text/plain"] == (
        "Figure: Two views. 2 panels. 1: untitled panel (y: energy). "
        "2: untitled panel (2 points)."
    )


def test_the_png_of_a_figure_records_its_smallest_text(executed):
    """The inline backend's PNG of each figure records the height, in its pixels,
    of its smallest text (bookext/legible.py and the page check read it): the
    tick labels and the legend, at the inline backend's dpi."""
    import base64

    import matplotlib as mpl

    for cell in executed.cells[:2]:
        (data,) = _figures(cell)
        png = base64.b64decode(data["image/png"])
        text = smallest_text(png)
        assert text is not None, cell.source
        # the figures draw their texts at matplotlib's default sizes (10 pt, tick
        # labels "medium"); the inline backend draws them at 100 dpi
        small = min(
            mpl.font_manager.font_scalings.get(mpl.rcParams[k], 1.0)
            for k in ("xtick.labelsize", "legend.fontsize")
        )
        assert text == pytest.approx(10 * small * 100 / 72, abs=0.01)


def test_describe_names_titles_axes_curves_and_legend():
    fig, (a, b) = plt.subplots(1, 2)
    fig.suptitle(r"USA, $\beta = 9$")
    for n in range(8):
        a.plot([0, 1], [0, n], label=f"$n = {n}$")
    a.legend()
    a.set(title=r"$\langle x_i, x_j\rangle$", xlabel="$t$", ylabel=r"$\lambda_k$")
    b.imshow([[0, 1], [1, 0]])
    text = describe(fig)
    plt.close(fig)
    assert text == (
        "USA, β = 9. 2 panels. 1: ⟨x_i, x_j⟩ (x: t; y: λ_k; 8 curves; legend: "
        "n = 0, n = 1, n = 2, n = 3, n = 4, n = 5 and 2 more). "
        "2: untitled panel (an image)."
    )


def test_the_caption_keeps_the_titles_only():
    from bookext.static import caption_of

    assert caption_of("SA, β = 4. 2 panels. 1: decay (x: t; 2 curves).") == "SA, β = 4"
    assert caption_of("Decay, β = 4 (x: t; 1 curve; legend: n = 8).") == "Decay, β = 4"
    nested = (
        "2 panels. 1: linear growth rates (x: mode k; y: k^2 I_k(β); 6 curves). "
        "2: simulations (x: number of clusters; y: runs)."
    )
    assert caption_of(nested) == "linear growth rates; simulations"
    assert caption_of("untitled panel (x: t).") == "Figure"


def test_a_figure_with_a_caption_carries_it_and_a_phone_layout(executed):
    """A figure given its caption and alternative text by the chapter carries both
    in its text form; its three panels in a row are drawn for a phone stacked in
    one column, in a PNG inside the desktop's, whose text shows at least 8.5 px in
    a phone's column and which records its text size too."""
    import base64

    from attnlib.viz._screens import PHONE_COLUMN_PX, TARGET_PX, phone_image
    from bookext.legible import png_size
    from bookext.static import figure_texts

    (data,) = _figures(executed.cells[3])
    assert figure_texts(data["text/plain"]) == (
        "Three decays.",
        "Each of the three curves falls to zero.",
    )
    png = base64.b64decode(data["image/png"])
    phone = phone_image(png)
    assert phone is not None
    (w, h), (pw, ph) = png_size(png), png_size(phone)
    assert w > 2 * h and ph > 2 * pw  # a row on the desktop, a column on the phone
    assert smallest_text(phone) * min(1, PHONE_COLUMN_PX / pw) >= TARGET_PX
    # a single panel gets a phone's image only when its text would read too small
    # in the phone's column (the default figure: 547 px once cropped, its tick
    # labels 13.9 px, 8.1 px in a column of 320 px)
    (single,) = _figures(executed.cells[0])
    png = base64.b64decode(single["image/png"])
    width, _ = png_size(png)
    small = smallest_text(png) * min(1, PHONE_COLUMN_PX / width) < TARGET_PX
    assert (phone_image(png) is not None) is small
