r"""Widgets of the frontiers chapter.

* :func:`scheme_explorer`: slider ``beta`` (and ``n``); the equiangular solutions of
  post-, pre- and peri-LN (:math:`1 - \gamma` and the radius).
* :func:`causal_explorer`: sliders for the ALiBi slope ``lam`` and ``beta``; a causal
  run on the circle from four clusters and the retention profile of the last token.
* :func:`temperature_explorer`: slider :math:`\log_2\beta`; softmax against hardmax
  tokens in the consensus form, on the hardmax cells.

Setting a slider's ``.value`` recomputes (cached) and redraws, so each can be driven
headless.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
from IPython.display import display

from .._validation import check_int, check_real
from ..causal import retention_profile
from ..viz.frontiers import draw_causal, draw_hardmax, draw_schemes
from ._static import Axis, ExplorerBox, StaticSpec, show
from ..scenarios import (
    causal_run,
    four_clusters,
    scheme_solutions,
    temperature_runs,
    voronoi_tokens,
)

__all__ = [
    "SchemeExplorer",
    "scheme_explorer",
    "CausalExplorer",
    "causal_explorer",
    "four_clusters",
    "causal_run",
    "TemperatureExplorer",
    "temperature_explorer",
    "voronoi_tokens",
    "temperature_runs",
]


def _slider(value, lo, hi, step, name):
    return widgets.FloatSlider(
        value=value,
        min=lo,
        max=hi,
        step=step,
        description=name,
        continuous_update=False,
    )


# ------------------------------------------------------------- normalisation


@dataclass(eq=False)
class SchemeExplorer:
    """Live equiangular solutions of the three schemes; ``display(w.widget)``."""

    widget: Any
    beta: Any
    n: Any
    fig: Any
    out: Any
    _cache: dict = field(default_factory=dict, repr=False)

    def solutions(self) -> dict:
        key = (float(self.beta.value), int(self.n.value))
        if key not in self._cache:
            self._cache[key] = scheme_solutions(*key)
        return self._cache[key]

    def redraw(self, *_: Any) -> None:
        draw_schemes(
            self.fig.axes,
            self.solutions(),
            title=f"beta = {self.beta.value:g}, n = {self.n.value}",
        )
        self.fig.tight_layout()
        show(self.out, self.fig)

    def _ipython_display_(self) -> None:
        display(self.widget)


def scheme_explorer(*, beta: float = 1.0, n: int = 32) -> SchemeExplorer:
    """Sliders ``beta`` in [0, 9] and ``n`` in [2, 256].

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> w = scheme_explorer(beta=2.0)  # doctest: +SKIP
    >>> w.beta.value = 4.0  # doctest: +SKIP
    >>> w.fig.axes[0].get_title()  # doctest: +SKIP
    'beta = 4, n = 32'
    """
    beta = check_real(beta, "beta", low=0.0, high=9.0)
    n = check_int(n, "n", low=2)
    sl_b = _slider(beta, 0.0, 9.0, 0.5, "beta")
    sl_n = widgets.IntSlider(
        value=n, min=2, max=256, step=1, description="n", continuous_update=False
    )
    with plt.ioff():
        fig, _ = plt.subplots(1, 2, figsize=(10, 3.6))
    plt.close(fig)
    out = widgets.Output()
    w = SchemeExplorer(
        ExplorerBox([widgets.HBox([sl_b, sl_n]), out]), sl_b, sl_n, fig, out
    )
    # without a kernel: seven values of beta and four of n
    w.widget.static = StaticSpec(
        fig,
        [
            Axis("β", sl_b, sorted({0.0, 1.0, 2.0, 3.0, 4.0, 6.0, 9.0} | {beta})),
            Axis("n", sl_n, sorted({2, 8, 32, 256} | {n})),
        ],
        alt=(
            "Left: 1 - gamma(t) on log-log axes for post-, pre- and peri-LN "
            "(equiangular tokens), with the slope t^-2 dotted; post-LN falls "
            "exponentially, the others like t^-2. Right: the radius of the tokens, "
            "constant for post-LN and growing linearly for pre- and peri-LN."
        ),
        redraw=w.redraw,
    )
    sl_b.observe(w.redraw, names="value")
    sl_n.observe(w.redraw, names="value")
    w.redraw()
    return w


# ------------------------------------------------------------------ causal


@dataclass(eq=False)
class CausalExplorer:
    """Live causal run and retention profile; ``display(w.widget)``."""

    widget: Any
    lam: Any
    beta: Any
    fig: Any
    out: Any
    theta0: np.ndarray
    labels: np.ndarray
    t_final: float
    dt: float
    _cache: dict = field(default_factory=dict, repr=False)

    def run(self) -> tuple[np.ndarray, np.ndarray]:
        key = (float(self.lam.value), float(self.beta.value))
        if key not in self._cache:
            self._cache[key] = causal_run(
                self.theta0,
                beta=key[1],
                lam=key[0],
                t_final=self.t_final,
                dt=self.dt,
                n_frames=51,
            )
        return self._cache[key]

    def redraw(self, *_: Any) -> None:
        times, theta = self.run()
        lam, beta = float(self.lam.value), float(self.beta.value)
        ax0, ax1, ax2 = self.fig.axes
        draw_causal(
            (ax0, ax1),
            times,
            theta,
            labels=self.labels,
            title=f"causal, lam = {lam:g}, beta = {beta:g}",
        )
        ax2.clear()
        s = np.linspace(0.02, 0.98, 97)
        for t, c in ((0.5, "C0"), (1.0, "C1"), (2.0, "C2")):
            ax2.plot(
                s,
                retention_profile(s, beta=beta, t=t, slope=max(lam, 1e-6)),
                color=c,
                label=f"t = {t:g}",
            )
        ax2.set_yscale("log")
        ax2.set_xlabel("source position s")
        ax2.set_title("retention by the last token", fontsize=10)
        ax2.legend(fontsize=8)
        self.fig.tight_layout()
        show(self.out, self.fig)

    def _ipython_display_(self) -> None:
        display(self.widget)


def causal_explorer(
    *,
    lam: float = 1.0,
    beta: float = 1.0,
    n: int = 32,
    t_final: float = 10.0,
    dt: float = 0.01,
) -> CausalExplorer:
    """Sliders ``lam`` in [0, 8] (ALiBi slope times n) and ``beta`` in [0.25, 4].

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> w = causal_explorer(n=16, t_final=2.0)  # doctest: +SKIP
    >>> w.lam.value = 4.0  # doctest: +SKIP
    >>> w.fig.axes[1].get_title()  # doctest: +SKIP
    'causal, lam = 4, beta = 1'
    """
    lam = check_real(lam, "lam", low=0.0, high=8.0)
    beta = check_real(beta, "beta", low=0.25, high=4.0)
    t_final = check_real(t_final, "t_final", low=0.0, strict_low=True)
    dt = check_real(dt, "dt", low=0.0, strict_low=True)
    theta0, labels = four_clusters(check_int(n, "n", low=4))
    sl_l = _slider(lam, 0.0, 8.0, 0.5, "lam")
    sl_b = _slider(beta, 0.25, 4.0, 0.25, "beta")
    with plt.ioff():
        fig, _ = plt.subplots(
            1, 3, figsize=(12, 3.6), gridspec_kw={"width_ratios": [1, 1.8, 1.4]}
        )
    plt.close(fig)
    out = widgets.Output()
    w = CausalExplorer(
        ExplorerBox([widgets.HBox([sl_l, sl_b]), out]),
        sl_l,
        sl_b,
        fig,
        out,
        theta0,
        labels,
        t_final,
        dt,
    )
    sl_l.observe(w.redraw, names="value")
    sl_b.observe(w.redraw, names="value")
    w.widget.static = StaticSpec(
        fig,
        [
            Axis("λ", sl_l, sorted({0.0, 1.0, 2.0, 4.0, 8.0} | {lam})),
            Axis("β", sl_b, sorted({0.5, 1.0, 2.0, 4.0} | {beta})),
        ],
        alt=(
            "Causal attention on the circle from four clusters: the tokens' angles "
            "at the start and the end, their paths over time, and the retention "
            "profile of the last token over the source position at t = 0.5, 1 and 2 "
            "(log scale), U-shaped."
        ),
        redraw=w.redraw,
    )
    w.redraw()
    return w


# ---------------------------------------------------------- low temperature


@dataclass(eq=False)
class TemperatureExplorer:
    """Softmax against hardmax tokens; ``display(w.widget)``."""

    widget: Any
    log2beta: Any
    fig: Any
    out: Any
    Z0: np.ndarray
    k: int
    _cache: dict = field(default_factory=dict, repr=False)

    def runs(self) -> tuple[np.ndarray, np.ndarray]:
        b = float(2.0**self.log2beta.value)
        if "hard" not in self._cache:
            self._cache["hard"] = temperature_runs(self.Z0, None)
        if b not in self._cache:
            self._cache[b] = temperature_runs(self.Z0, b)
        return self._cache[b], self._cache["hard"]

    def redraw(self, *_: Any) -> None:
        soft, hard = self.runs()
        b = 2.0**self.log2beta.value
        verts = self.Z0[: self.k]
        draw_hardmax(self.fig.axes[0], verts, soft, title=f"softmax, beta = {b:g}")
        draw_hardmax(self.fig.axes[1], verts, hard, title="hardmax")
        self.fig.tight_layout()
        show(self.out, self.fig)

    def _ipython_display_(self) -> None:
        display(self.widget)


def temperature_explorer(*, log2beta: float = 4.0, k: int = 5) -> TemperatureExplorer:
    r"""Slider :math:`\log_2\beta` in [0, 9].

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> w = temperature_explorer()  # doctest: +SKIP
    >>> w.log2beta.value = 6.0  # doctest: +SKIP
    >>> w.fig.axes[0].get_title()  # doctest: +SKIP
    'softmax, beta = 64'
    """
    log2beta = check_real(log2beta, "log2beta", low=0.0, high=9.0)
    k = check_int(k, "k", low=3)
    sl = _slider(log2beta, 0.0, 9.0, 1.0, "log2 beta")
    with plt.ioff():
        fig, _ = plt.subplots(1, 2, figsize=(8, 3.9))
    plt.close(fig)
    out = widgets.Output()
    w = TemperatureExplorer(ExplorerBox([sl, out]), sl, fig, out, voronoi_tokens(k), k)
    sl.observe(w.redraw, names="value")
    w.widget.static = StaticSpec(
        fig,
        [Axis("log₂ β", sl, sorted({float(v) for v in range(10)} | {log2beta}))],
        alt=(
            "Paths of tokens inside the convex hull of five vertices: left, the "
            "softmax dynamics at the chosen beta; right, the hardmax dynamics, "
            "straight lines to the vertex of each token's cell."
        ),
    )
    w.redraw()
    return w
