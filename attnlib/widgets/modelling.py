r"""Widget of the modelling chapter: tokens on :math:`S^2` under an attention variant.

:func:`sphere_explorer` returns a :class:`SphereExplorer` (an
:class:`~attnlib.widgets.Explorer`) whose sliders (``beta``,
``n``, ``variant``, ``time``) redraw a 3-D view of the tokens and the curve of the
mean pairwise inner product :math:`\frac{1}{n^2}\sum_{ij}\langle x_i, x_j\rangle`.
Trajectories are computed once per ``(beta, n, variant)`` and cached; the time
slider only indexes into the stored states, so moving it is instant.
"""

from __future__ import annotations

from .._moved import retired

from typing import Any

import ipywidgets as widgets
from matplotlib.figure import Figure
import numpy as np
from IPython import get_ipython

from .._deprecation import moved_arguments
from .._validation import check_int, check_real, fixed_seed
from ..sphere import sample_sphere
from .._variants import VARIANTS, variant_trajectory
from ..viz.modelling import draw_sphere, token_colors
from ._static import Axis, Explorer, StaticSpec, every, show, slider

__all__ = ["sphere_explorer"]


class _SphereExplorer(Explorer):
    """A live view of tokens on :math:`S^2` (an :class:`~attnlib.widgets.Explorer`).

    Attributes
    ----------
    beta, n, variant, time : ipywidgets controls
        Setting any ``.value`` recomputes (if needed) and redraws the figure.
    fig : matplotlib.figure.Figure
        Left: tokens and their paths on the sphere; right: mean inner product
        against time with a marker at the current time.
    times : ndarray, shape (T,)
        Output times of the stored trajectories.
    """

    def __init__(self, controls, fig, *, rows, times: np.ndarray, rng: Any, n_max: int):
        super().__init__(controls, fig, rows=rows)
        self.times, self.n_max = times, n_max
        self.seed = fixed_seed(rng)  # one sample of n_max points for every key
        self._cache: dict = {}
        self._artists: dict = {}

    def states(self) -> np.ndarray:
        """States ``(T, n, 3)`` for the current ``beta``, ``n`` and ``variant``."""
        key = (float(self.beta.value), int(self.n.value), str(self.variant.value))
        if key not in self._cache:
            X0 = sample_sphere(self.n_max, 3, rng=self.seed)[: key[1]]
            traj = variant_trajectory(key[2], X0, beta=key[0], times=self.times)
            self._cache[key] = traj.states
        return self._cache[key]

    def _frame(self) -> int:
        step = self.times[1] - self.times[0] if self.times.size > 1 else 1.0
        k = int(round(float(self.time.value) / step))
        return min(max(k, 0), self.times.size - 1)

    def redraw(self, *_: Any) -> None:
        """Redraw the figure for the current control values."""
        S = self.states()
        k = self._frame()
        a = self._artists
        ax3, ax = a["ax3"], a["ax"]
        for art in a.get("dynamic", []):
            art.remove()
        colors = token_colors(S.shape[1])
        dyn = [
            ax3.plot(
                S[: k + 1, i, 0],
                S[: k + 1, i, 1],
                S[: k + 1, i, 2],
                color=colors[i],
                lw=0.6,
            )[0]
            for i in range(S.shape[1])
        ]
        dyn.append(
            ax3.scatter(
                S[k, :, 0], S[k, :, 1], S[k, :, 2], c=colors, s=22, depthshade=False
            )
        )
        a["dynamic"] = dyn
        m = np.einsum("tid,tjd->t", S, S) / S.shape[1] ** 2
        a["curve"].set_data(self.times, m)
        a["marker"].set_data([self.times[k]], [m[k]])
        clock = "s" if self.variant.value == "USA" else "t"
        ax.set_xlabel(clock)
        ax3.set_title(
            f"{self.variant.value}, beta = {self.beta.value:g}, n = {self.n.value}, "
            f"{clock} = {self.times[k]:.3g}",
            fontsize=10,
        )
        if get_ipython() is not None:  # show the figure in the widget's output area
            show(self.output, self.fig)


@moved_arguments((), renamed={"seed": "rng"})
def sphere_explorer(
    *,
    beta: float = 4.0,
    n: int = 32,
    variant: str = "SA",
    t_final: float = 20.0,
    n_frames: int = 41,
    n_max: int = 64,
    rng: Any = 0,
) -> Explorer:
    r"""Explore tokens on :math:`S^2` under the attention variants of the chapter.

    Parameters
    ----------
    beta : float
        Initial inverse temperature (slider from 0 to 10).
    n : int
        Initial number of tokens (slider from 2 to ``n_max``); the tokens are the
        first ``n`` of one fixed uniform sample of ``n_max`` points (drawn from
        ``rng``, a seed or a Generator).
    variant : str
        One of "SA", "USA", "L2", "sigmoid", "Sinkhorn", "causal".
    t_final : float
        Final time (USA: on the clock :math:`s = e^\beta t`).
    n_frames : int
        Number of stored output times (positions of the time slider).

    Returns
    -------
    Explorer

    Examples
    --------
    >>> e = sphere_explorer(n=8)
    >>> e.beta.value = 1.0  # recomputes and redraws
    """
    beta = check_real(beta, "beta", low=0.0, high=10.0)
    n_max = check_int(n_max, "n_max", low=2)
    n = check_int(n, "n", low=2)
    if n > n_max:
        raise ValueError(f"n must be <= n_max={n_max}, got {n}")
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {tuple(VARIANTS)}, got {variant!r}")
    t_final = check_real(t_final, "t_final", low=0.0, strict_low=True)
    n_frames = check_int(n_frames, "n_frames", low=2)
    times = np.linspace(0.0, t_final, n_frames)
    style = {"description_width": "60px"}
    b = slider(beta, 0.0, 10.0, 0.5, "beta", style=style)
    nn = slider(n, 2, n_max, 1, "n", integer=True, style=style)
    var = widgets.Dropdown(
        options=list(VARIANTS), value=variant, description="variant", style=style
    )
    tt = slider(
        t_final,
        0.0,
        t_final,
        times[1] - times[0],
        "time",
        continuous_update=True,
        style=style,
    )
    # a Figure outside pyplot: shown only through the output area (or explicitly),
    # never again by the inline backend at the end of a later cell
    fig = Figure(figsize=(9, 4))
    ax3 = fig.add_axes((0.0, 0.0, 0.52, 0.92), projection="3d")
    draw_sphere(ax3)
    ax = fig.add_axes((0.6, 0.14, 0.38, 0.76))
    (curve,) = ax.plot([], [], color="C0")
    (marker,) = ax.plot([], [], "o", color="C3")
    ax.set_xlim(-0.02 * t_final, 1.02 * t_final)
    ax.set_ylim(-0.1, 1.02)
    ax.set_ylabel(r"mean $\langle x_i, x_j\rangle$")
    ax.grid(alpha=0.3)
    e = _SphereExplorer(
        {"beta": b, "n": nn, "variant": var, "time": tt},
        fig,
        rows=[["beta", "n"], ["variant", "time"]],
        times=times,
        rng=rng,
        n_max=n_max,
    )
    e._artists.update(ax3=ax3, ax=ax, curve=curve, marker=marker)
    # without a kernel: beta and time over a grid (n and the variant stay as given)
    beta_grid = sorted({0.0, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, float(b.value)})
    return e.start(
        StaticSpec(
            fig,
            [
                Axis("β", b, beta_grid),
                Axis("time", tt, every(times, 4), fmt=lambda v: f"{v:.3g}"),
            ],
            alt=(
                f"Left: {n} tokens on the sphere S² under {variant} attention and "
                "their paths up to the chosen time; right: the mean pairwise inner "
                "product against time, rising to 1 as the tokens gather into "
                "clusters."
            ),
            live_only=["n", "variant"],
        )
    )


#: Names no longer public, served for one release with a warning.
__getattr__ = retired(
    __name__,
    {
        "SphereExplorer": "attnlib.widgets.Explorer (what sphere_explorer returns)",
    },
)
