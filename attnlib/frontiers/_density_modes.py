r"""Counting the modes of a kernel density: how many clusters can form.

For points :math:`x_1, \dots, x_n` and an inverse temperature :math:`\beta`, the
kernel density

.. math::

    f(x) = \sum_{j=1}^n e^{\beta(\langle x, x_j\rangle - 1)}

is, up to a constant, the normaliser :math:`Z(x)` of self-attention seen from a
token at :math:`x`, and the SA velocity :math:`P_x\nabla Z/(\beta Z)` is a mean-shift
step on it: tokens start climbing towards its local maxima. On the circle,
:math:`f(\theta) = \sum_j e^{\beta(\cos(\theta - \theta_j) - 1)}`; on the line,
the Gaussian kernel density :math:`f(x) = \sum_j e^{-\beta(x - x_j)^2/2}` (bandwidth
:math:`\beta^{-1/2}`) of [GRS], whose expected number of modes for :math:`n`
i.i.d. standard Gaussian points is :math:`\Theta(\sqrt{\beta\log\beta})` when
:math:`n^c \lesssim \beta \lesssim n^{2-c}`.

The count is robust in three ways:

* the sign of :math:`f'` is computed with every exponent shifted by its largest
  value (the nearest point), so nothing underflows, even between points that are
  far apart at large :math:`\beta`; terms more than :math:`e^{-80}` below the
  nearest one are left out (a window around each grid point);
* a local maximum is a change of sign of :math:`f'` from ``+`` to ``-`` on a grid
  of spacing :math:`h \le \beta^{-1/2}/\text{oversample}`; values of :math:`f'`
  below ``rtol`` times the sum of the absolute values of its terms count as zero
  (their sign is rounding), and zeros are skipped;
* the count is repeated on a grid twice as fine until two successive counts agree
  (``converged``); each maximum is then located by bisection on :math:`f'`,
  evaluated this time with every term (the nearest one factored out, so only terms
  below the float range vanish): :math:`f'` is positive at the left end of the
  bracket, negative at the right end, and the root returned is a zero of
  :math:`f'` to rounding. On the line the grid reaches one step beyond the extreme
  points, where :math:`f'` has a strict sign, so a maximum at an isolated extreme
  point is bracketed like any other.

References
----------
[GRS] Geshkovski, Rigollet, Sun, *On the number of modes of Gaussian kernel density
estimators*, arXiv:2412.09080.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from .._deprecation import moved_arguments
from .._lazy import optimize
from .._validation import as_finite, check_choice, check_int, check_real

__all__ = ["ModeCount", "circle_modes", "line_modes", "count_modes"]

TWO_PI = 2.0 * np.pi
# Terms below e^{-_CUT} times the nearest term are left out of the derivative.
_CUT = 80.0
# Grid points per evaluation chunk (memory: chunk x window entries).
_CHUNK = 512


@dataclass(frozen=True)
class ModeCount:
    """Result of :func:`circle_modes` and :func:`line_modes`.

    Attributes
    ----------
    count : int
        Number of local maxima of the kernel density.
    locations : ndarray, shape (count,)
        Their positions (angles in ``[0, 2 pi)`` on the circle, sorted).
    grid_size : int
        Number of grid points of the finest grid used.
    converged : bool
        Whether the last two grids gave the same count.
    """

    count: int
    locations: np.ndarray = field(repr=False)
    grid_size: int = 0
    converged: bool = True


def _check_points(x, name):
    arr = as_finite(x, name, what="array of points", ndims=(1,))
    if arr.size == 0:
        raise ValueError(f"{name} must be non-empty")
    return arr


def _common(beta, oversample, max_refine, rtol):
    beta = check_real(beta, "beta", low=0.0, strict_low=True)
    oversample = check_real(oversample, "oversample", low=1.0)
    max_refine = check_int(max_refine, "max_refine", low=1)
    rtol = check_real(rtol, "rtol", low=0.0)
    return beta, oversample, max_refine, rtol


class _Circle:
    """Sign of f' on the circle, from sorted angles padded by one period."""

    def __init__(self, theta, beta):
        s = np.sort(np.mod(theta, TWO_PI))
        self.beta = beta
        self.pts = np.concatenate([s - TWO_PI, s, s + TWO_PI])
        self.n = s.size

    def window(self, g):
        """Angular half-width of the window of each grid point."""
        i = np.searchsorted(self.pts, g)
        d0 = np.minimum(np.abs(self.pts[i] - g), np.abs(self.pts[i - 1] - g))
        s2 = np.sin(0.5 * d0) ** 2 + 0.5 * _CUT / self.beta
        return np.where(s2 >= 1.0, np.pi, 2.0 * np.arcsin(np.sqrt(np.minimum(s2, 1.0))))

    def terms(self, g, lo, hi):
        P = self.pts[lo:hi]
        D = P[None, :] - g[:, None]  # theta_j - theta
        E = self.beta * (np.cos(D) - 1.0)
        # each point once: its copy within (-pi, pi] of the grid point
        E[(D > np.pi) | (D <= -np.pi)] = -np.inf
        return np.sin(D), E

    def fprime(self, x):
        """f'(x) with every term, divided by the largest term."""
        D = self.pts[self.n : 2 * self.n] - x
        E = self.beta * (np.cos(D) - 1.0)
        return float(np.sum(np.sin(D) * np.exp(E - E.max())))

    def logf(self, x):
        D = self.pts[self.n : 2 * self.n] - x
        E = self.beta * (np.cos(D) - 1.0)
        m = E.max()
        return float(m + np.log(np.sum(np.exp(E - m))))

    def span(self, g):
        w = min(float(np.max(self.window(g))), np.pi)
        lo = np.searchsorted(self.pts, g[0] - w, side="left")
        hi = np.searchsorted(self.pts, g[-1] + w, side="right")
        # at most one period of points around the chunk
        return lo, min(hi, lo + 3 * self.n)


class _Line:
    """Sign of f' on the line for the Gaussian kernel e^{-beta (x - x_j)^2 / 2}."""

    def __init__(self, x, beta):
        self.pts = np.sort(x)
        self.beta = beta

    def window(self, g):
        i = np.clip(np.searchsorted(self.pts, g), 1, self.pts.size - 1)
        d0 = np.minimum(np.abs(self.pts[i] - g), np.abs(self.pts[i - 1] - g))
        if self.pts.size == 1:
            d0 = np.abs(self.pts[0] - g)
        return d0 + np.sqrt(2.0 * _CUT / self.beta)

    def terms(self, g, lo, hi):
        D = self.pts[None, lo:hi] - g[:, None]  # x_j - x
        return D, -0.5 * self.beta * D * D

    def fprime(self, x):
        """f'(x) with every term, divided by the largest term."""
        D = self.pts - x
        E = -0.5 * self.beta * D * D
        return float(np.sum(D * np.exp(E - E.max())))

    def logf(self, x):
        D = self.pts - x
        E = -0.5 * self.beta * D * D
        m = E.max()
        return float(m + np.log(np.sum(np.exp(E - m))))

    def span(self, g):
        w = float(np.max(self.window(g)))
        lo = np.searchsorted(self.pts, g[0] - w, side="left")
        hi = np.searchsorted(self.pts, g[-1] + w, side="right")
        return lo, hi


def _derivative_sign(kern, g, rtol):
    """Sign (-1, 0, +1) of f' at the sorted grid points ``g`` (chunked)."""
    out = np.empty(g.size, dtype=np.int8)
    for s in range(0, g.size, _CHUNK):
        gc = g[s : s + _CHUNK]
        lo, hi = kern.span(gc)
        slope, E = kern.terms(gc, lo, hi)
        E -= E.max(axis=1, keepdims=True)
        W = np.exp(E)
        terms = slope * W
        val = terms.sum(axis=1)
        scale = np.abs(terms).sum(axis=1)
        sign = np.sign(val).astype(np.int8)
        sign[np.abs(val) <= rtol * scale] = 0
        out[s : s + _CHUNK] = sign
    return out


def _maxima_brackets(sign, periodic):
    """Indices (a, b) of grid points where the sign goes from + to - (zeros skipped)."""
    nz = np.flatnonzero(sign)
    if nz.size == 0:
        return []
    sg = sign[nz]
    nxt = np.roll(nz, -1) if periodic else nz[1:]
    cur = nz if periodic else nz[:-1]
    s_cur = sg if periodic else sg[:-1]
    s_nxt = np.roll(sg, -1) if periodic else sg[1:]
    hits = (s_cur > 0) & (s_nxt < 0)
    if periodic and nz.size == 1:
        hits[:] = False
    return list(zip(cur[hits], nxt[hits]))


def _count(kern, grid_fn, m0, max_refine, rtol, periodic, period=None):
    m = m0
    prev = None
    for _ in range(max_refine + 1):
        g = grid_fn(m)
        sign = _derivative_sign(kern, g, rtol)
        br = _maxima_brackets(sign, periodic)
        if prev is not None and len(br) == len(prev[1]):
            return g, br, True
        prev = (g, br)
        m *= 2
    return prev[0], prev[1], False


def _locate(kern, g, brackets, period=None):
    """Zero of f' in each bracket (a, b), with f' evaluated on every term.

    The grid signs drop terms below e^{-_CUT}; they matter only where the nearest
    terms cancel (at a data point, say), and there the full derivative decides.
    When rounding still leaves no sign change (f' zero to rounding at an end), the
    end where f' vanishes is the maximum; failing that, log f is maximised on the
    bracket directly.
    """
    locs = []
    for a, b in brackets:
        xa, xb = g[a], g[b]
        if period is not None and xb < xa:
            xb += period
        fa, fb = kern.fprime(xa), kern.fprime(xb)
        if fa > 0 > fb:
            x = optimize.brentq(kern.fprime, xa, xb, xtol=1e-14 * max(1.0, abs(xa)))
        elif fa == 0.0 and fb <= 0.0:
            x = xa
        elif fb == 0.0 and fa >= 0.0:
            x = xb
        else:  # rounding at both ends: maximise f itself
            res = optimize.minimize_scalar(
                lambda y: -kern.logf(y),
                bounds=(xa, xb),
                method="bounded",
                options={"xatol": 1e-13},
            )
            x = float(res.x)
        locs.append(x if period is None else np.mod(x, period))
    return np.sort(np.asarray(locs, dtype=np.float64))


@moved_arguments("theta beta")
def circle_modes(
    theta,
    *,
    beta: float,
    oversample: float = 8.0,
    max_refine: int = 6,
    rtol: float = 1e-12,
) -> ModeCount:
    r"""Local maxima of :math:`f(\theta) = \sum_j e^{\beta(\cos(\theta-\theta_j)-1)}`.

    Parameters
    ----------
    theta : array_like, shape (n,)
        Angles of the points (any real values).
    beta : float
        Inverse temperature ``> 0``; the kernel has width :math:`\beta^{-1/2}`.
    oversample : float
        Grid points per kernel width on the first grid (``>= 1``); the grid has at
        least ``256`` points.
    max_refine : int
        Largest number of grid doublings when two counts disagree.
    rtol : float
        Relative size below which :math:`f'` counts as zero.

    Returns
    -------
    ModeCount

    Examples
    --------
    >>> import numpy as np
    >>> circle_modes(np.array([0.0, 2.0, 4.0]), beta=50.0).count  # far apart
    3
    >>> circle_modes(np.array([0.0, 0.05]), beta=50.0).count  # one bump
    1
    """
    theta = _check_points(theta, "theta")
    beta, oversample, max_refine, rtol = _common(beta, oversample, max_refine, rtol)
    kern = _Circle(theta, beta)
    m0 = int(max(256, np.ceil(oversample * TWO_PI * np.sqrt(beta))))

    def grid(m):
        return np.arange(m) * (TWO_PI / m)

    g, br, ok = _count(kern, grid, m0, max_refine, rtol, periodic=True)
    locs = _locate(kern, g, br, period=TWO_PI)
    return ModeCount(len(br), locs, g.size, ok)


@moved_arguments("x beta")
def line_modes(
    x,
    *,
    beta: float,
    oversample: float = 8.0,
    max_refine: int = 6,
    rtol: float = 1e-12,
) -> ModeCount:
    r"""Local maxima of the kernel density :math:`\sum_j e^{-\beta(x-x_j)^2/2}`.

    Every maximum lies between the smallest and the largest point (outside, every
    term decreases away from them), so the grid covers that interval and one grid
    step beyond each end: a maximum on an isolated extreme point (at large
    :math:`\beta` it sits within rounding of the point) is bracketed and located
    like the others.

    Parameters
    ----------
    x : array_like, shape (n,)
        The points.
    beta : float
        Inverse squared bandwidth ``> 0``.
    oversample, max_refine, rtol
        As in :func:`circle_modes`.

    Returns
    -------
    ModeCount

    Examples
    --------
    >>> import numpy as np
    >>> line_modes(np.array([-1.0, 1.0]), beta=1.0).count  # bandwidth 1: one bump
    1
    >>> line_modes(np.array([-1.0, 1.0]), beta=4.0).count
    2
    """
    x = _check_points(x, "x")
    beta, oversample, max_refine, rtol = _common(beta, oversample, max_refine, rtol)
    kern = _Line(x, beta)
    a, b = float(x.min()), float(x.max())
    if b == a:
        return ModeCount(1, np.array([a]), 1, True)
    h0 = 1.0 / (oversample * np.sqrt(beta))
    m0 = int(max(256, np.ceil((b - a) / h0) + 1))

    def grid(m):
        # [a, b] and one step beyond each end, where f' > 0 (left) and f' < 0
        # (right) strictly: a maximum at an isolated extreme point is then a sign
        # change from + to - like any other, and its bracket contains it
        inner = np.linspace(a, b, m)
        step = inner[1] - inner[0]
        return np.concatenate([[a - step], inner, [b + step]])

    g, br, ok = _count(kern, grid, m0, max_refine, rtol, periodic=False)
    locs = _locate(kern, g, br)
    return ModeCount(len(br), locs, g.size, ok)


@moved_arguments("points beta")
def count_modes(points, *, beta: float, domain: str = "circle", **options) -> int:
    """Number of modes on ``domain`` ("circle": angles, "line": reals).

    Shorthand for ``circle_modes(...).count`` / ``line_modes(...).count``.

    Examples
    --------
    >>> import numpy as np
    >>> count_modes(np.array([0.0, 3.0]), beta=10.0, domain="line")
    2
    """
    check_choice(domain, "domain", ("circle", "line"))
    fn = circle_modes if domain == "circle" else line_modes
    return fn(points, beta=beta, **options).count
