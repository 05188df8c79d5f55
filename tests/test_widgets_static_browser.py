"""In Chromium, with no kernel and no network, every control of a static explorer
changes the figure, at desktop and phone widths.

Two explorers are rendered into a page (one with range inputs, one with selects too);
the test moves each control as a reader would (arrow keys on a slider, choosing an
option) and checks that the image and its alternative text change. It needs the
Debian ``chromium`` package (``.ci/run`` installs it) and runs it through playwright.
"""

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from attnlib.widgets._static import STATIC_ENV  # noqa: E402
from attnlib.widgets.circle import circle_density  # noqa: E402
from attnlib.widgets.gaussian import gaussian_widget  # noqa: E402
from tools.browser_check import chromium_path, drive_explorers  # noqa: E402

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        chromium_path() is None, reason="the Debian package chromium is not installed"
    ),
]


@pytest.fixture(scope="module")
def explorer_page(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv(STATIC_ENV, "1")
    try:
        boxes = [
            circle_density(
                n_particles=50, t_final=0.4, n_frames=5, grid_size=64
            ).widget,
            gaussian_widget(n=30, frames=4),
        ]
        body = "".join(b._repr_mimebundle_()["text/html"] for b in boxes)
    finally:
        mp.undo()
    path = tmp_path_factory.mktemp("explorers") / "page.html"
    path.write_text(
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>explorers</title></head><body><main>{body}</main></body></html>",
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize("width", [1366, 390])
def test_every_control_changes_the_figure_in_chromium(explorer_page, width, browser):
    page = browser.new_page(viewport={"width": width, "height": 900})
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.route("http*://**", lambda route: route.abort())  # offline
    page.goto(explorer_page.as_uri())
    assert page.locator(".attnlib-explorer").count() == 2
    failures = drive_explorers(page)
    # nothing wider than the screen
    overflow = page.evaluate(
        "() => document.documentElement.scrollWidth - window.innerWidth"
    )
    page.close()
    assert not errors, errors
    assert not failures, "\n".join(failures)
    assert overflow <= 0, f"the page is {overflow}px wider than the screen"
