r"""Widgets of the frontiers chapter.

* :func:`scheme_explorer`: slider ``beta`` (and ``n``); the equiangular solutions of
  post-, pre- and peri-LN (:math:`1 - \gamma` and the radius).
* :func:`causal_explorer`: sliders for the ALiBi slope ``lam`` and ``beta``; a causal
  run on the circle from four clusters and the retention profile of the last token.
* :func:`temperature_explorer`: slider :math:`\log_2\beta`; softmax against hardmax
  tokens in the consensus form, on the hardmax cells.
* :func:`noise_explorer`: sliders ``beta`` and :math:`\sigma/\sigma_c`; the noisy USA
  mean field on the circle beyond the linear threshold: the order parameter of the
  sweeps up and down in :math:`\sigma` and the stationary densities at the chosen
  :math:`\sigma` (two where the loop is bistable).
* :func:`antipodal_explorer`: sliders ``beta``, ``d`` and ``noise``; two tokens whose
  value matrices are drawn afresh at every layer: the limit probability that they
  end antipodal against :math:`\beta`, and paths of their overlap.

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
    noise_threshold,
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
    "noise_explorer",
    "antipodal_explorer",
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


# ------------------------------------------------ noise beyond the threshold

#: sigma / sigma_c of the sweeps, the steps of the slider (k / 100: each is the float
#: the slider's label reads)
_RATIOS = np.array([k / 100 for k in range(50, 151)])
#: the dimension of the noise explorer: the circle
_NOISE_D = 2


class _NoiseExplorer(Explorer):
    """The noisy USA mean field on the circle beyond the linear threshold (an
    :class:`~attnlib.widgets.Explorer` with controls ``beta`` and ``sigma_ratio``)."""

    def __init__(self, controls, fig):
        super().__init__(controls, fig)
        self._branches: dict = {}
        self._states: dict = {}

    def branches(self, beta: float | None = None) -> Any:
        """The sweeps up and down in sigma over ``_RATIOS * sigma_c`` (one per beta)."""
        from ..frontiers._stationary import stationary_branches

        beta = float(self.beta.value) if beta is None else float(beta)
        if beta not in self._branches:
            sc = noise_threshold(beta=beta, d=_NOISE_D, normalization="usa")
            self._branches[beta] = stationary_branches(
                _RATIOS * sc, beta=beta, d=_NOISE_D
            )
        return self._branches[beta]

    def states(self) -> tuple[Any, Any]:
        """The stable states of the sweeps up and down at the current sigma."""
        beta, ratio = float(self.beta.value), float(self.sigma_ratio.value)
        key = (beta, ratio)
        if key not in self._states:
            hit = np.flatnonzero(_RATIOS == ratio)
            if hit.size:
                br, i = self.branches(beta), int(hit[0])
            else:  # off the grid: the same sweeps through this sigma too
                from ..frontiers._stationary import stationary_branches

                ratios = np.union1d(_RATIOS, [ratio])
                br = stationary_branches(
                    ratios * self.branches(beta).sigma_c, beta=beta, d=_NOISE_D
                )
                i = int(np.flatnonzero(ratios == ratio)[0])
            self._states[key] = (br.up[i], br.down[i])
        return self._states[key]

    def _setup(self) -> None:
        """The artists, made once: each redraw sets their data (clearing the axes
        and laying them out again cost most of a frame)."""
        ax0, ax1 = self.fig.axes
        nan = np.full(_RATIOS.size, np.nan)
        a = self._art = {}
        (a["up"],) = ax0.plot(_RATIOS, nan, color="C0", lw=1.6, label="σ increasing")
        (a["down"],) = ax0.plot(
            _RATIOS, nan, color="C3", lw=1.2, ls="--", label="σ decreasing"
        )
        ax0.axvline(1.0, color="0.6", lw=0.8, ls=":")
        a["at"] = ax0.axvline(1.0, color="k", lw=0.7)
        (a["up_at"],) = ax0.plot([1.0], [0.0], "o", color="C0", ms=6)
        (a["down_at"],) = ax0.plot([1.0], [0.0], "s", mfc="none", color="C3", ms=8)
        ax0.set_ylim(-0.03, 1.03)
        ax0.set_xlim(_RATIOS[0], _RATIOS[-1])
        ax0.set_xlabel(r"$\sigma/\sigma_c$")
        ax0.set_ylabel("order parameter")
        ax0.legend(fontsize=8, loc="upper right")
        theta = self._theta = np.linspace(-np.pi, np.pi, 361)
        ax1.axhline(1.0, color="0.6", lw=0.8, ls=":")
        (a["rho_up"],) = ax1.plot(theta, np.ones_like(theta), color="C0", lw=1.6)
        (a["rho_down"],) = ax1.plot(
            theta, np.ones_like(theta), color="C3", lw=1.2, ls="--"
        )
        ax1.set_xlim(-np.pi, np.pi)
        ax1.set_xticks([-np.pi, 0.0, np.pi], [r"$-\pi$", "0", r"$\pi$"])
        ax1.set_xlabel("angle from the mean direction")
        ax1.set_ylabel("density (uniform = 1)")

    def redraw(self, *_: Any) -> None:
        from ..frontiers._stationary import transition_beta

        if not hasattr(self, "_art"):
            self._setup()
        a, (ax0, ax1) = self._art, self.fig.axes
        beta, ratio = float(self.beta.value), float(self.sigma_ratio.value)
        br = self.branches()
        up, down = self.states()
        bistable = abs(up.order - down.order) > 1e-4
        star = transition_beta(_NOISE_D)
        a["up"].set_ydata(br.order_up)
        a["down"].set_ydata(br.order_down)
        a["at"].set_xdata([ratio, ratio])
        a["up_at"].set_data([ratio], [up.order])
        a["down_at"].set_data([ratio], [down.order])
        kind = "continuous" if beta <= star else "discontinuous"
        ax0.set_title(
            rf"$\beta = {beta:g}$, {kind} ($\beta^* \approx {star:.2f}$)", fontsize=10
        )
        rho_up = up(np.cos(self._theta))
        a["rho_up"].set_ydata(rho_up)
        a["rho_up"].set_label(f"σ increasing, ΔF = {up.free_energy:.3f}")
        top = rho_up.max()
        a["rho_down"].set_visible(bistable)
        handles = [a["rho_up"]]
        if bistable:
            rho_down = down(np.cos(self._theta))
            a["rho_down"].set_ydata(rho_down)
            a["rho_down"].set_label(f"σ decreasing, ΔF = {down.free_energy:.3f}")
            top = max(top, rho_down.max())
            handles.append(a["rho_down"])
        ax1.set_ylim(0.0, 1.25 * top)
        ax1.legend(handles=handles, fontsize=8, loc="upper right")
        ax1.set_title(
            rf"$\sigma = {ratio:g}\,\sigma_c$: "
            + ("bistable" if bistable else "one stable state"),
            fontsize=10,
        )
        self.fig.tight_layout()
        show(self.output, self.fig)


def noise_explorer(*, beta: float = 4.0, sigma_ratio: float = 1.03) -> Explorer:
    r"""Sliders ``beta`` in [0.5, 8] and :math:`\sigma/\sigma_c` in [0.5, 1.5].

    The noisy USA mean field on the circle (``d = 2``) beyond the linear threshold
    :math:`\sigma_c`: on the left the order parameter :math:`|\int x\rho|` of the
    stable stationary states followed as :math:`\sigma` increases and as it
    decreases (``stationary_branches`` of :mod:`attnlib.frontiers._stationary`),
    which differ (hysteresis) above Mun and Rosenzweig's :math:`\beta^*(2)
    \approx 2.45`; on the right the stationary density at the chosen
    :math:`\sigma`, both of them where the loop is bistable, with each one's free
    energy relative to the uniform density. The sweeps are computed once per
    ``beta``.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> w = noise_explorer(beta=4.0)  # doctest: +SKIP
    >>> w.sigma_ratio.value = 1.2  # doctest: +SKIP
    >>> w.fig.axes[1].get_title()  # doctest: +SKIP
    '$\\sigma = 1.2\\,\\sigma_c$: one stable state'
    """
    beta = check_real(beta, "beta", low=0.5, high=8.0)
    sigma_ratio = check_real(sigma_ratio, "sigma_ratio", low=0.5, high=1.5)
    sl_b = slider(beta, 0.5, 8.0, 0.5, "beta")
    sl_s = slider(sigma_ratio, 0.5, 1.5, 0.01, "sigma/sigma_c")
    fig = detached_figure(1, 2, figsize=(7, 3.3))
    ratios = {0.6, 0.8, 0.9, 0.95, 0.99, 1.01, 1.03, 1.05, 1.1, 1.2, 1.4}
    # without a kernel: five values of beta, two below beta*(2) ~ 2.45 and three
    # above, and eleven of sigma/sigma_c, several inside the loops
    return _NoiseExplorer({"beta": sl_b, "sigma_ratio": sl_s}, fig).start(
        StaticSpec(
            fig,
            [
                Axis("β", sl_b, sorted({1.0, 2.0, 3.0, 4.0, 6.0} | {beta})),
                Axis("σ/σ_c", sl_s, sorted(ratios | {sigma_ratio})),
            ],
            alt=(
                "Left: the order parameter of the stable stationary states of the "
                "noisy circle against sigma over sigma_c, followed as sigma "
                "increases and as it decreases; for beta below 2.45 the two agree "
                "and fall continuously to zero at sigma_c, above it the ordered "
                "state survives beyond sigma_c and the sweeps form a hysteresis "
                "loop. Right: the stationary density against the angle at the "
                "chosen sigma, two densities inside the loop."
            ),
        )
    )


# --------------------------------------------------- resampled value matrices

#: the beta of the probability curve
_P_BETAS = np.linspace(0.0, 4.0, 81)


class _AntipodalExplorer(Explorer):
    """Two tokens with value matrices resampled at every layer (an
    :class:`~attnlib.widgets.Explorer` with controls ``beta``, ``d`` and
    ``noise``)."""

    def __init__(self, controls, fig, *, paths: int, layers: int, t_final: float):
        super().__init__(controls, fig)
        self.paths, self.layers, self.t_final = paths, layers, t_final
        self._curves: dict = {}
        self._runs: dict = {}

    def probability(self) -> tuple[np.ndarray, float]:
        """P(antipodal) from orthogonal tokens on ``_P_BETAS`` and at the current
        beta. With centred values it does not depend on the noise (which only
        sets the clock of the overlap), so it is computed at ``noise = 1``."""
        from ..frontiers._resampled import antipodal_probability

        d, beta = int(self.d.value), float(self.beta.value)
        if d not in self._curves:
            self._curves[d] = np.array(
                [float(antipodal_probability(0.0, beta=b, d=d)) for b in _P_BETAS]
            )
        if (d, beta) not in self._curves:
            self._curves[d, beta] = float(antipodal_probability(0.0, beta=beta, d=d))
        return self._curves[d], self._curves[d, beta]

    def overlaps(self) -> tuple[np.ndarray, np.ndarray]:
        """Times and overlaps <x1, x2>, shape (T, paths), of the layered chain
        from two orthogonal tokens (the same seed for every setting)."""
        from ..frontiers._resampled import resampled_run

        beta, d, noise = (
            float(self.beta.value),
            int(self.d.value),
            float(self.noise.value),
        )
        key = (beta, d, noise)
        if key not in self._runs:
            X0 = np.zeros((self.paths, 2, d))
            X0[:, 0, 0] = X0[:, 1, 1] = 1.0
            run = resampled_run(
                X0,
                beta=beta,
                layers=self.layers,
                t_final=self.t_final,
                noise=noise,
                rng=0,
                n_saves=self.layers,
            )
            u = np.einsum("tbd,tbd->tb", run.states[:, :, 0], run.states[:, :, 1])
            self._runs[key] = (run.times, np.clip(u, -1.0, 1.0))
        return self._runs[key]

    def _setup(self) -> None:
        """The artists, made once: each redraw sets their data."""
        ax0, ax1 = self.fig.axes
        a = self._art = {}
        (a["curve"],) = ax0.plot(_P_BETAS, np.zeros_like(_P_BETAS), color="C0", lw=1.6)
        a["line"] = ax0.axvline(
            0.0, color="0.5", lw=1.0, ls=":", label=r"$\cosh 2\beta = d - 2$"
        )
        (a["at"],) = ax0.plot([0.0], [0.0], "o", color="C3", ms=6)
        ax0.set_xlim(_P_BETAS[0], _P_BETAS[-1])
        ax0.set_ylim(-0.02, 0.52)
        ax0.set_xlabel(r"$\beta$")
        ax0.set_ylabel("P(antipodal)")
        ax0.legend(fontsize=8, loc="upper left")
        a["paths"] = [
            ax1.plot([0.0, self.t_final], [0.0, 0.0], lw=0.8)[0]
            for _ in range(self.paths)
        ]
        ax1.set_xlim(0.0, self.t_final)
        ax1.set_ylim(-1.05, 1.05)
        ax1.set_xlabel(f"depth t ({self.layers} layers)")
        ax1.set_ylabel(r"overlap $\langle x_1, x_2\rangle$")

    def redraw(self, *_: Any) -> None:
        if not hasattr(self, "_art"):
            self._setup()
        a, (ax0, ax1) = self._art, self.fig.axes
        beta, d = float(self.beta.value), int(self.d.value)
        noise = float(self.noise.value)
        curve, here = self.probability()
        times, u = self.overlaps()
        a["curve"].set_ydata(curve)
        threshold = np.arccosh(d - 2.0) / 2.0
        a["line"].set_xdata([threshold, threshold])
        a["at"].set_data([beta], [here])
        ax0.set_title(rf"$d = {d}$: limit, from $u(0) = 0$", fontsize=10)
        low = u[-1] < -0.9
        for k, line in enumerate(a["paths"]):
            line.set_data(times, u[:, k])
            line.set_color("C3" if low[k] else "C0")
        ax1.set_title(
            f"β = {beta:g}, noise = {noise:g}: {int(low.sum())} of {u.shape[1]} "
            "end near −1",
            fontsize=10,
        )
        self.fig.tight_layout()
        show(self.output, self.fig)


def antipodal_explorer(
    *,
    beta: float = 2.0,
    d: int = 5,
    noise: float = 1.0,
    paths: int = 12,
    layers: int = 480,
    t_final: float = 12.0,
) -> Explorer:
    r"""Sliders ``beta`` in [0, 4], ``d`` in [3, 8] and ``noise`` in [0.25, 2].

    Two tokens, orthogonal at the start, through layers whose value matrices are
    centred Gaussian matrices drawn afresh at every layer (``resampled_run`` of
    :mod:`attnlib.frontiers._resampled`, ``Q = K = I``). On the left the limit
    probability that the two end antipodal rather than merged
    (``antipodal_probability``), positive exactly when :math:`\cosh 2\beta >
    d - 2`, against :math:`\beta` for the chosen ``d`` (the noise does not change
    it: it only sets the clock); on the right the overlap
    :math:`\langle x_1, x_2\rangle` of ``paths`` runs of ``layers`` layers up to
    depth ``t_final``, red when it ends below :math:`-0.9`.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> w = antipodal_explorer(d=5)  # doctest: +SKIP
    >>> w.d.value = 8  # doctest: +SKIP
    >>> w.fig.axes[0].get_title()  # doctest: +SKIP
    '$d = 8$: limit, from $u(0) = 0$'
    """
    beta = check_real(beta, "beta", low=0.0, high=4.0)
    d = check_int(d, "d", low=3)
    if d > 8:
        raise ValueError(f"d must be an integer in [3, 8], got {d}")
    noise = check_real(noise, "noise", low=0.25, high=2.0)
    paths = check_int(paths, "paths", low=1)
    layers = check_int(layers, "layers", low=1)
    t_final = check_real(t_final, "t_final", low=0.0, strict_low=True)
    sl_b = slider(beta, 0.0, 4.0, 0.25, "beta")
    sl_d = slider(d, 3, 8, 1, "d", integer=True)
    sl_s = slider(noise, 0.25, 2.0, 0.25, "noise")
    fig = detached_figure(1, 2, figsize=(7, 3.3))
    w = _AntipodalExplorer(
        {"beta": sl_b, "d": sl_d, "noise": sl_s},
        fig,
        paths=paths,
        layers=layers,
        t_final=t_final,
    )
    # without a kernel: four values of beta, every d, three noise levels
    return w.start(
        StaticSpec(
            fig,
            [
                Axis("β", sl_b, sorted({0.5, 1.0, 2.0, 3.0} | {beta})),
                Axis("d", sl_d, list(range(3, 9))),
                Axis("noise", sl_s, sorted({0.5, 1.0, 2.0} | {noise})),
            ],
            alt=(
                "Left: the limit probability that two tokens with value matrices "
                "resampled at every layer end antipodal, against beta for the "
                "chosen d: zero up to the dotted line where cosh 2 beta = d - 2, "
                "then rising. Right: the overlap of the two tokens over depth for "
                f"{paths} runs, each drifting to +1 (merged) or, in red, to -1 "
                "(antipodal); more noise makes them get there sooner."
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
