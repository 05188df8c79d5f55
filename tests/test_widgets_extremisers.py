"""The extremiser widget redraws headless when a control's value is set."""

from __future__ import annotations

import warnings

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from attnlib.energy import energy_D  # noqa: E402
from attnlib.widgets.extremisers import extremiser_widget
from attnlib.extremisers._presets import PRESETS, interaction_matrix


def titles(w):
    return [ax.get_title() for ax in w.fig.axes]


def test_widget_redraws_on_every_control():
    w = extremiser_widget(n=20, steps=60)
    assert set(w.controls) == {"preset", "lam", "direction", "metric"}
    before = titles(w)
    w.controls["lam"].value = 1.4
    after_lam = titles(w)
    assert after_lam != before and "1.40" in after_lam[0]
    w.controls["direction"].value = "descent"
    assert titles(w)[0].startswith("descent")
    w.controls["metric"].value = "sa"
    assert w.result.info["metric"] == "sa"
    w.controls["preset"].value = "λ·I on S²"
    assert w.fig._suptitle.get_text() == "λ·I on S²"
    assert w.fig.axes[0].name == "3d"
    assert w.result.final.shape == (20, 3)


def test_widget_energy_matches_library():
    w = extremiser_widget(n=15, steps=50, lam=0.7)
    D = interaction_matrix("diag(1, λ) on S¹", 0.7)
    assert w.result.info["energies"][-1] == pytest.approx(energy_D(w.result.final, D))
    line = w.fig.axes[1].get_lines()[0]
    assert np.allclose(line.get_ydata(), w.result.info["energies"])
    assert np.all(np.diff(w.result.info["energies"]) >= -1e-12)  # ascent is monotone


def test_widget_at_lambda_zero_draws_without_warnings():
    # lambda = 0 on the slider makes D = 0 for the preset lambda * I: E_D = 1 is
    # constant along the flow and the particles do not move
    w = extremiser_widget(n=15, steps=40, preset="λ·I on S²")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        w.controls["lam"].value = 0.0
        w.controls["direction"].value = "descent"
        w.controls["metric"].value = "sa"
    assert np.array_equal(
        w.result.info["energies"], np.ones_like(w.result.info["energies"])
    )
    assert "λ = 0.00" in titles(w)[0]


def test_presets_are_symmetric_and_bad_preset_raises():
    for d, make in PRESETS.values():
        D = make(0.5)
        assert D.shape == (d, d) and np.allclose(D, D.T)
    with pytest.raises(ValueError, match="preset must be one of"):
        interaction_matrix("nonsense", 1.0)
