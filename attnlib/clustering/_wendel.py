r"""Wendel's theorem: n uniform points on the sphere in a hemisphere ([GLPR] Thm 6.7).

The probability that the initial tokens lie in an open hemisphere, in which case
they collapse to a single cluster (the cone collapse, [GLPR] Lemma 6.4): the exact
:func:`wendel_probability`, the test :func:`in_hemisphere` and the Monte Carlo
estimate :func:`hemisphere_probability_mc`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from .._lazy import optimize
from .._validation import as_states, check_int
from ..sphere import sample_sphere

__all__ = [
    "wendel_probability",
    "HemisphereEstimate",
    "hemisphere_probability_mc",
    "in_hemisphere",
]


def wendel_probability(n: int, d: int) -> float:
    r"""Probability that ``n`` uniform points on :math:`S^{d-1}` lie in a hemisphere.

    Wendel's theorem ([GLPR] Thm 6.7, [Wendel 1962]):

    .. math::

        p_{n,d} = 2^{-(n-1)} \sum_{k=0}^{d-1} \binom{n-1}{k},

    equal to 1 for ``n <= d``. Computed exactly with rationals.

    Examples
    --------
    >>> wendel_probability(4, 2)
    0.5
    """
    n = check_int(n, "n", low=1)
    d = check_int(d, "d", low=1)
    s = sum(math.comb(n - 1, k) for k in range(0, min(d, n)))
    return s / 2 ** (n - 1)  # int / int: correctly rounded


def in_hemisphere(X: np.ndarray) -> bool | np.ndarray:
    r"""Whether the rows of ``X`` lie in an open hemisphere.

    That is, whether some :math:`w` has :math:`\langle w, x_i\rangle > 0` for all ``i``.

    For ``d = 2`` this is decided by the largest angular gap (``> pi``), vectorised;
    otherwise by the linear programme :math:`X w \ge 1` (HiGHS), one per member.

    Parameters
    ----------
    X : ndarray, shape (n, d) or (B, n, d)

    Returns
    -------
    bool or ndarray of bool, shape (B,)
    """
    X = as_states(X, "X")
    single = X.ndim == 2
    Xb = X[None] if single else X
    if Xb.shape[-1] == 2:
        ang = np.sort(np.arctan2(Xb[..., 1], Xb[..., 0]), axis=-1)
        gaps = np.diff(ang, axis=-1, append=ang[..., :1] + 2 * np.pi)
        out = gaps.max(axis=-1) > np.pi
    else:
        n, d = Xb.shape[-2:]
        out = np.empty(Xb.shape[0], dtype=bool)
        for k, x in enumerate(Xb):
            r = optimize.linprog(
                np.zeros(d),
                A_ub=-x,
                b_ub=-np.ones(n),
                bounds=[(None, None)] * d,
                method="highs",
            )
            out[k] = r.status == 0
    return bool(out[0]) if single else out


@dataclass(frozen=True)
class HemisphereEstimate:
    """Monte Carlo estimate of a probability with its standard error."""

    estimate: float
    stderr: float
    samples: int


def hemisphere_probability_mc(
    n: int, d: int, *, samples: int, rng: np.random.Generator | int
) -> HemisphereEstimate:
    r"""Monte Carlo estimate of Wendel's probability :math:`p_{n,d}`.

    Draws ``samples`` configurations of ``n`` uniform points on :math:`S^{d-1}` and
    tests each with :func:`in_hemisphere`.

    Examples
    --------
    >>> est = hemisphere_probability_mc(4, 2, samples=4000, rng=0)
    >>> abs(est.estimate - 0.5) < 4 * est.stderr
    True
    """
    n = check_int(n, "n", low=1)
    d = check_int(d, "d", low=1)
    samples = check_int(samples, "samples", low=2)
    X = sample_sphere(n, d, rng=rng, batch=samples)
    hits = in_hemisphere(X)
    p = float(np.mean(hits))
    return HemisphereEstimate(
        p, float(np.sqrt(max(p * (1 - p), 1e-300) / samples)), samples
    )
