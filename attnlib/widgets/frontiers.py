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

from .._moved import retired

from typing import Any

import numpy as np

from .._validation import check_int, check_real
from ..frontiers import (
    causal_run as _causal_run,
    four_clusters as _four_clusters,
    retention_profile,
    temperature_runs as _temperature_runs,
    voronoi_tokens as _voronoi_tokens,
)
from ..frontiers._scenarios import scheme_solutions
from ..viz.frontiers import draw_causal, draw_hardmax, draw_schemes
from ._static import Axis, Explorer, StaticSpec, detached_figure, show, slider

__all__ = [
    "scheme_explorer",
    "causal_explorer",
    "temperature_explorer",
]


# ------------------------------------------------------------- normalisation


class _SchemeExplorer(Explorer):
    """Live equiangular solutions of the three schemes (an
    :class:`~attnlib.widgets.Explorer` with controls ``beta`` and ``n``)."""

    def __init__(self, controls, fig):
        super().__init__(controls, fig)
        self._cache: dict = {}

    def solutions(self) -> dict:
        key = (float(self.beta.value), int(self.n.value))
        if key not in self._cache:
            self._cache[key] = scheme_solutions(beta=key[0], n=key[1])
        return self._cache[key]

    def redraw(self, *_: Any) -> None:
        draw_schemes(
            self.fig.axes,
            self.solutions(),
            title=f"beta = {self.beta.value:g}, n = {self.n.value}",
        )
        self.fig.tight_layout()
        show(self.output, self.fig)


def scheme_explorer(*, beta: float = 1.0, n: int = 32) -> Explorer:
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
    sl_b = slider(beta, 0.0, 9.0, 0.5, "beta")
    sl_n = slider(n, 2, 256, 1, "n", integer=True)
    fig = detached_figure(1, 2, figsize=(10, 3.6))
    # without a kernel: seven values of beta and four of n
    return _SchemeExplorer({"beta": sl_b, "n": sl_n}, fig).start(
        StaticSpec(
            fig,
            [
                Axis("β", sl_b, sorted({0.0, 1.0, 2.0, 3.0, 4.0, 6.0, 9.0} | {beta})),
                Axis("n", sl_n, sorted({2, 8, 32, 256} | {n})),
            ],
            alt=(
                "Left: 1 - gamma(t) on log-log axes for post-, pre- and peri-LN "
                "(equiangular tokens), with the slope t^-2 dotted; post-LN falls "
                "exponentially, the others like t^-2. Right: the radius of the "
                "tokens, constant for post-LN and growing linearly for pre- and "
                "peri-LN."
            ),
        )
    )


# ------------------------------------------------------------------ causal


class _CausalExplorer(Explorer):
    """Live causal run and retention profile (an :class:`~attnlib.widgets.Explorer`
    with controls ``lam`` and ``beta``)."""

    def __init__(self, controls, fig, *, theta0, labels, t_final: float, dt: float):
        super().__init__(controls, fig)
        self.theta0, self.labels, self.t_final, self.dt = theta0, labels, t_final, dt
        self._cache: dict = {}

    def run(self) -> tuple[np.ndarray, np.ndarray]:
        key = (float(self.lam.value), float(self.beta.value))
        if key not in self._cache:
            self._cache[key] = _causal_run(
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
        show(self.output, self.fig)


def causal_explorer(
    *,
    lam: float = 1.0,
    beta: float = 1.0,
    n: int = 32,
    t_final: float = 10.0,
    dt: float = 0.01,
) -> Explorer:
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
    theta0, labels = _four_clusters(check_int(n, "n", low=4))
    sl_l = slider(lam, 0.0, 8.0, 0.5, "lam")
    sl_b = slider(beta, 0.25, 4.0, 0.25, "beta")
    fig = detached_figure(
        1, 3, figsize=(12, 3.6), gridspec_kw={"width_ratios": [1, 1.8, 1.4]}
    )
    w = _CausalExplorer(
        {"lam": sl_l, "beta": sl_b},
        fig,
        theta0=theta0,
        labels=labels,
        t_final=t_final,
        dt=dt,
    )
    return w.start(
        StaticSpec(
            fig,
            [
                Axis("λ", sl_l, sorted({0.0, 1.0, 2.0, 4.0, 8.0} | {lam})),
                Axis("β", sl_b, sorted({0.5, 1.0, 2.0, 4.0} | {beta})),
            ],
            alt=(
                "Causal attention on the circle from four clusters: the tokens' "
                "angles at the start and the end, their paths over time, and the "
                "retention profile of the last token over the source position at "
                "t = 0.5, 1 and 2 (log scale), U-shaped."
            ),
        )
    )


# ---------------------------------------------------------- low temperature


class _TemperatureExplorer(Explorer):
    """Softmax against hardmax tokens (an :class:`~attnlib.widgets.Explorer` with
    the control ``log2beta``)."""

    def __init__(self, controls, fig, *, Z0: np.ndarray, k: int):
        super().__init__(controls, fig)
        self.Z0, self.k = Z0, k
        self._cache: dict = {}

    def runs(self) -> tuple[np.ndarray, np.ndarray]:
        b = float(2.0**self.log2beta.value)
        if "hard" not in self._cache:
            self._cache["hard"] = _temperature_runs(self.Z0, beta=None)
        if b not in self._cache:
            self._cache[b] = _temperature_runs(self.Z0, beta=b)
        return self._cache[b], self._cache["hard"]

    def redraw(self, *_: Any) -> None:
        soft, hard = self.runs()
        b = 2.0**self.log2beta.value
        verts = self.Z0[: self.k]
        draw_hardmax(self.fig.axes[0], verts, soft, title=f"softmax, beta = {b:g}")
        draw_hardmax(self.fig.axes[1], verts, hard, title="hardmax")
        self.fig.tight_layout()
        show(self.output, self.fig)


def temperature_explorer(*, log2beta: float = 4.0, k: int = 5) -> Explorer:
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
    sl = slider(log2beta, 0.0, 9.0, 1.0, "log2 beta")
    fig = detached_figure(1, 2, figsize=(8, 3.9))
    w = _TemperatureExplorer({"log2beta": sl}, fig, Z0=_voronoi_tokens(k), k=k)
    return w.start(
        StaticSpec(
            fig,
            [Axis("log₂ β", sl, sorted({float(v) for v in range(10)} | {log2beta}))],
            alt=(
                "Paths of tokens inside the convex hull of five vertices: left, the "
                "softmax dynamics at the chosen beta; right, the hardmax dynamics, "
                "straight lines to the vertex of each token's cell."
            ),
        )
    )


#: Names no longer public, served for one release with a warning.
__getattr__ = retired(
    __name__,
    {
        "SchemeExplorer": "attnlib.widgets.Explorer (what scheme_explorer returns)",
        "CausalExplorer": "attnlib.widgets.Explorer (what causal_explorer returns)",
        "TemperatureExplorer": "attnlib.widgets.Explorer"
        " (what temperature_explorer returns)",
        "four_clusters": "attnlib.frontiers.four_clusters",
        "causal_run": "attnlib.frontiers.causal_run",
        "voronoi_tokens": "attnlib.frontiers.voronoi_tokens",
        "temperature_runs": "attnlib.frontiers.temperature_runs",
    },
)
