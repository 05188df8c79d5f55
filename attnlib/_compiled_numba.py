r"""Compiled tiles of the attention field (numba): logits, exponential and weighted
sums fused, per group of four query rows, with no ``n x n`` array anywhere.

Imported by :mod:`attnlib._compiled` on the first field evaluation (never by
``import attnlib``); the machine code is cached on disk (``cache=True``), so that only
the first process on a machine pays the compilation (a few seconds).

The exponential is computed here, not by ``libm``: a scalar ``exp`` call cannot be
vectorised, and it is several times slower than numpy's SIMD ``exp``. The kernels
work in base 2 (every exponent is multiplied by :math:`\log_2 e` once, where it is
loaded): :math:`2^y = 2^k\,2^r` with :math:`k` the integer nearest to :math:`y`
(one rounding instruction, no table), :math:`|r| \le \tfrac12` exact, and
:math:`2^r` the degree-10 polynomial interpolating it at the Chebyshev points of
:math:`[-\tfrac12, \tfrac12]` (relative error :math:`3.1\cdot 10^{-16}`, see
:data:`EXP2_COEFFS`), scaled by :math:`2^k` by adding :math:`k` to its exponent bits
(an integer addition, not a multiplication). Measured against ``numpy.exp2`` in
extended precision, its relative error is below :math:`4\cdot 10^{-16}` everywhere
above :data:`EXP2_MIN`. Below it :func:`exp2_inplace` gives ``0``, and the symmetric
kernels :math:`2^{-1020} p`, at most :math:`10^{-307}` of the largest weight of
the row (every exponent here is shifted to be ``<= 0``, the row's largest weight is
at least :math:`e^{-2}`). The usual reduction in base :math:`e` needs a polynomial
of degree 12 and two multiply-adds for :math:`r`: the multiply-adds are what the
field's time is made of.
"""

from __future__ import annotations

import os

import numba as nb
import numpy as np
from llvmlite import ir as llvm_ir
from numba.extending import intrinsic

__all__ = [
    "EXP2_MIN",
    "exp2_inplace",
    "symmetric_tiles",
    "unit_tiles",
    "unit_tiles_serial",
    "row_field",
    "set_threads",
]

# numba's workqueue threads survive a fork (a process pool of the sweeps, dask): GNU
# OpenMP's, numba's default where it is found, abort every forked child that uses
# them. The workqueue takes one caller at a time: attnlib._compiled serialises calls.
if "NUMBA_THREADING_LAYER" not in os.environ:
    nb.config.THREADING_LAYER = "workqueue"

# below this 2**y is 2**EXP2_MIN times the polynomial (symmetric kernels) or 0
# (exp2_inplace); above it the scaling by 2**k stays a normal float64
EXP2_MIN = -1020.0
LOG2E = 1.4426950408889634
LN2 = 0.6931471805599453
# 2**r on [-1/2, 1/2]: the degree-10 interpolant at the Chebyshev points (computed in
# 40-digit arithmetic, then rounded), lowest degree first; relative error 3.1e-16
EXP2_COEFFS = (
    1.0,
    0.69314718055995,
    0.24022650695910097,
    0.05550410866444772,
    0.009618129107606888,
    0.0013333558230164974,
    0.0001540353044173605,
    1.5252657260200837e-05,
    1.321544258792169e-06,
    1.0208690299958306e-07,
    7.072585949269223e-09,
)
_C0, _C1, _C2, _C3, _C4, _C5, _C6, _C7, _C8, _C9, _C10 = EXP2_COEFFS
# 1.5 * 2**52: k + _SHIFTER holds the integer k in its lowest mantissa bits (two's
# complement modulo 2**12 for k < 0), so that its bits shifted left by 52 are k's in
# the exponent field
_SHIFTER = 6755399441055744.0
# reassociation (vectorised sums), fused multiply-adds; no assumption on inf or nan
_FM = {"reassoc", "contract", "nsz"}
_OPTS = {"fastmath": _FM, "cache": True, "nogil": True, "error_model": "numpy"}


@intrinsic
def _as_float(typingctx, bits):
    """The float64 whose bits are the int64 ``bits`` (an LLVM bitcast)."""
    sig = nb.float64(nb.int64)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], llvm_ir.DoubleType())

    return sig, codegen


@intrinsic
def _as_int(typingctx, x):
    """The int64 whose bits are the float64 ``x`` (an LLVM bitcast)."""
    sig = nb.int64(nb.float64)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], llvm_ir.IntType(64))

    return sig, codegen


@nb.njit(inline="always", **_OPTS)
def _exp2(y):
    r""":math:`2^y` for ``y <= 0``, vectorisable; below :data:`EXP2_MIN` it gives
    :math:`2^{-1020} p` with :math:`p < \sqrt 2` (no select: one instruction less;
    :func:`exp2_inplace` gives ``0``)."""
    z = y if y > EXP2_MIN else EXP2_MIN
    k = np.rint(z)
    r = z - k
    p = _C10
    p = p * r + _C9
    p = p * r + _C8
    p = p * r + _C7
    p = p * r + _C6
    p = p * r + _C5
    p = p * r + _C4
    p = p * r + _C3
    p = p * r + _C2
    p = p * r + _C1
    p = p * r + _C0
    # times 2**k: k added to the exponent bits of p (an integer addition, not a
    # multiplication: p is in [0.7, 1.42], and 2**k p is normal for k >= -1020)
    return _as_float(_as_int(p) + (_as_int(k + _SHIFTER) << 52))


@nb.njit(inline="always", **_OPTS)
def exp2_inplace(s, nc):
    """``s[:nc] = 2**s[:nc]`` (vectorised; ``0`` below :data:`EXP2_MIN`)."""
    for j in range(nc):
        y = s[j]
        s[j] = _exp2(y) if y > EXP2_MIN else 0.0


@nb.njit(inline="always", **_OPTS)
def _logits4(left, rightT, shift2, i0, i1, i2, i3, c0, nc, s0, s1, s2, s3, take_exp):
    """``s_g[j] = 2**y_gj`` with ``y_gj = log2(e) left[i_g] . rightT[:, c0 + j]
    + shift2[i_g] + shift2[c0 + j]`` (``shift2`` in base 2 already) for four rows,
    ``j < nc``; the number of columns of ``left`` is a multiple of four (padded with
    zeros). The shift enters in the first pass over ``j``, the exponential in the
    last (without it for ``take_exp=False``: the exponents ``y``, in base 2)."""
    h = shift2[c0 : c0 + nc]
    h0, h1, h2, h3 = shift2[i0], shift2[i1], shift2[i2], shift2[i3]
    q = left.shape[1]
    for cc in range(0, q, 4):
        a00, a01, a02, a03 = (
            LOG2E * left[i0, cc],
            LOG2E * left[i0, cc + 1],
            LOG2E * left[i0, cc + 2],
            LOG2E * left[i0, cc + 3],
        )
        a10, a11, a12, a13 = (
            LOG2E * left[i1, cc],
            LOG2E * left[i1, cc + 1],
            LOG2E * left[i1, cc + 2],
            LOG2E * left[i1, cc + 3],
        )
        a20, a21, a22, a23 = (
            LOG2E * left[i2, cc],
            LOG2E * left[i2, cc + 1],
            LOG2E * left[i2, cc + 2],
            LOG2E * left[i2, cc + 3],
        )
        a30, a31, a32, a33 = (
            LOG2E * left[i3, cc],
            LOG2E * left[i3, cc + 1],
            LOG2E * left[i3, cc + 2],
            LOG2E * left[i3, cc + 3],
        )
        r0 = rightT[cc, c0 : c0 + nc]
        r1 = rightT[cc + 1, c0 : c0 + nc]
        r2 = rightT[cc + 2, c0 : c0 + nc]
        r3 = rightT[cc + 3, c0 : c0 + nc]
        last = cc + 4 >= q and take_exp
        if cc == 0 and not last:
            for j in range(nc):
                x0, x1, x2, x3 = r0[j], r1[j], r2[j], r3[j]
                hj = h[j]
                s0[j] = (hj + h0) + (a00 * x0 + a01 * x1 + a02 * x2 + a03 * x3)
                s1[j] = (hj + h1) + (a10 * x0 + a11 * x1 + a12 * x2 + a13 * x3)
                s2[j] = (hj + h2) + (a20 * x0 + a21 * x1 + a22 * x2 + a23 * x3)
                s3[j] = (hj + h3) + (a30 * x0 + a31 * x1 + a32 * x2 + a33 * x3)
        elif cc == 0:
            for j in range(nc):
                x0, x1, x2, x3 = r0[j], r1[j], r2[j], r3[j]
                hj = h[j]
                s0[j] = _exp2((hj + h0) + (a00 * x0 + a01 * x1 + a02 * x2 + a03 * x3))
                s1[j] = _exp2((hj + h1) + (a10 * x0 + a11 * x1 + a12 * x2 + a13 * x3))
                s2[j] = _exp2((hj + h2) + (a20 * x0 + a21 * x1 + a22 * x2 + a23 * x3))
                s3[j] = _exp2((hj + h3) + (a30 * x0 + a31 * x1 + a32 * x2 + a33 * x3))
        elif not last:
            for j in range(nc):
                x0, x1, x2, x3 = r0[j], r1[j], r2[j], r3[j]
                s0[j] += a00 * x0 + a01 * x1 + a02 * x2 + a03 * x3
                s1[j] += a10 * x0 + a11 * x1 + a12 * x2 + a13 * x3
                s2[j] += a20 * x0 + a21 * x1 + a22 * x2 + a23 * x3
                s3[j] += a30 * x0 + a31 * x1 + a32 * x2 + a33 * x3
        else:
            for j in range(nc):
                x0, x1, x2, x3 = r0[j], r1[j], r2[j], r3[j]
                s0[j] = _exp2(s0[j] + a00 * x0 + a01 * x1 + a02 * x2 + a03 * x3)
                s1[j] = _exp2(s1[j] + a10 * x0 + a11 * x1 + a12 * x2 + a13 * x3)
                s2[j] = _exp2(s2[j] + a20 * x0 + a21 * x1 + a22 * x2 + a23 * x3)
                s3[j] = _exp2(s3[j] + a30 * x0 + a31 * x1 + a32 * x2 + a33 * x3)


@nb.njit(inline="always", **_OPTS)
def _sums4(s0, s1, s2, s3, ZT, c0, nc, out, i0, i1, i2, i3, v1, v2, v3):
    """``out[:, i_g] += sum_j s_g[j] ZT[:, c0 + j]`` (``ZT`` has 4k rows)."""
    for cc in range(0, ZT.shape[0], 4):
        z0 = ZT[cc, c0 : c0 + nc]
        z1 = ZT[cc + 1, c0 : c0 + nc]
        z2 = ZT[cc + 2, c0 : c0 + nc]
        z3 = ZT[cc + 3, c0 : c0 + nc]
        t00 = t01 = t02 = t03 = 0.0
        t10 = t11 = t12 = t13 = 0.0
        t20 = t21 = t22 = t23 = 0.0
        t30 = t31 = t32 = t33 = 0.0
        for j in range(nc):
            e0, e1, e2, e3 = s0[j], s1[j], s2[j], s3[j]
            y0, y1, y2, y3 = z0[j], z1[j], z2[j], z3[j]
            t00 += e0 * y0
            t01 += e0 * y1
            t02 += e0 * y2
            t03 += e0 * y3
            t10 += e1 * y0
            t11 += e1 * y1
            t12 += e1 * y2
            t13 += e1 * y3
            t20 += e2 * y0
            t21 += e2 * y1
            t22 += e2 * y2
            t23 += e2 * y3
            t30 += e3 * y0
            t31 += e3 * y1
            t32 += e3 * y2
            t33 += e3 * y3
        out[cc, i0] += t00
        out[cc + 1, i0] += t01
        out[cc + 2, i0] += t02
        out[cc + 3, i0] += t03
        out[cc, i1] += t10 * v1
        out[cc + 1, i1] += t11 * v1
        out[cc + 2, i1] += t12 * v1
        out[cc + 3, i1] += t13 * v1
        out[cc, i2] += t20 * v2
        out[cc + 1, i2] += t21 * v2
        out[cc + 2, i2] += t22 * v2
        out[cc + 3, i2] += t23 * v2
        out[cc, i3] += t30 * v3
        out[cc + 1, i3] += t31 * v3
        out[cc + 2, i3] += t32 * v3
        out[cc + 3, i3] += t33 * v3


@nb.njit(inline="always", **_OPTS)
def _axpy4(acc, ZT, c0, nc, s0, s1, s2, s3, i0, i1, i2, i3, v1, v2, v3):
    """``acc[:, c0 + j] += sum_g s_g[j] ZT[:, i_g]`` (rows a multiple of 4)."""
    for cc in range(0, ZT.shape[0], 4):
        y0 = acc[cc, c0 : c0 + nc]
        y1 = acc[cc + 1, c0 : c0 + nc]
        y2 = acc[cc + 2, c0 : c0 + nc]
        y3 = acc[cc + 3, c0 : c0 + nc]
        z00, z01, z02, z03 = (
            ZT[cc, i0],
            ZT[cc, i1] * v1,
            ZT[cc, i2] * v2,
            ZT[cc, i3] * v3,
        )
        z10, z11, z12, z13 = (
            ZT[cc + 1, i0],
            ZT[cc + 1, i1] * v1,
            ZT[cc + 1, i2] * v2,
            ZT[cc + 1, i3] * v3,
        )
        z20, z21, z22, z23 = (
            ZT[cc + 2, i0],
            ZT[cc + 2, i1] * v1,
            ZT[cc + 2, i2] * v2,
            ZT[cc + 2, i3] * v3,
        )
        z30, z31, z32, z33 = (
            ZT[cc + 3, i0],
            ZT[cc + 3, i1] * v1,
            ZT[cc + 3, i2] * v2,
            ZT[cc + 3, i3] * v3,
        )
        for j in range(nc):
            e0, e1, e2, e3 = s0[j], s1[j], s2[j], s3[j]
            y0[j] += e0 * z00 + e1 * z01 + e2 * z02 + e3 * z03
            y1[j] += e0 * z10 + e1 * z11 + e2 * z12 + e3 * z13
            y2[j] += e0 * z20 + e1 * z21 + e2 * z22 + e3 * z23
            y3[j] += e0 * z30 + e1 * z31 + e2 * z32 + e3 * z33


@nb.njit(parallel=True, **_OPTS)
def symmetric_tiles(left, rightT, shift, ZT, block, work, chunks):
    r"""Accumulators of the symmetric tiled field.

    ``left`` (B, n, q), ``rightT`` (B, q, n) and ``shift`` (B, n) give the shifted
    exponent of a pair as ``left[b, i] . rightT[b, :, j] + shift[b, i] + shift[b, j]``
    (symmetric in ``i, j``; ``q`` a multiple of 4); ``ZT`` (B, p, n) the scaled values
    (``p`` a multiple of 4). ``work`` (W, 3) lists the tiles ``(b, I, J)`` with
    ``I <= J`` (in units of ``block``), split in ``chunks`` consecutive runs, one per
    thread, each with its own accumulator. Returns ``acc`` (B, p, n) with
    ``acc[b, :, i] = sum_j exp(left_i . right_j + shift_i + shift_j) ZT[b, :, j]``.
    """
    B, n, q = left.shape
    p = ZT.shape[1]
    nw = work.shape[0]
    shift2 = shift * LOG2E
    accs = np.zeros((chunks, B, p, n))
    for c in nb.prange(chunks):
        s0 = np.empty(block)
        s1 = np.empty(block)
        s2 = np.empty(block)
        s3 = np.empty(block)
        acc = accs[c]
        for w in range(c * nw // chunks, (c + 1) * nw // chunks):
            b = work[w, 0]
            r0 = work[w, 1] * block
            r1 = min(n, r0 + block)
            c0 = work[w, 2] * block
            nc = min(n, c0 + block) - c0
            off = r0 != c0
            for i0 in range(r0, r1, 4):
                i1 = min(i0 + 1, r1 - 1)
                i2 = min(i0 + 2, r1 - 1)
                i3 = min(i0 + 3, r1 - 1)
                _logits4(
                    left[b],
                    rightT[b],
                    shift2[b],
                    i0,
                    i1,
                    i2,
                    i3,
                    c0,
                    nc,
                    s0,
                    s1,
                    s2,
                    s3,
                    True,
                )
                v1 = 1.0 if i0 + 1 < r1 else 0.0
                v2 = 1.0 if i0 + 2 < r1 else 0.0
                v3 = 1.0 if i0 + 3 < r1 else 0.0
                _sums4(
                    s0, s1, s2, s3, ZT[b], c0, nc, acc[b], i0, i1, i2, i3, v1, v2, v3
                )
                if off:
                    _axpy4(
                        acc[b],
                        ZT[b],
                        c0,
                        nc,
                        s0,
                        s1,
                        s2,
                        s3,
                        i0,
                        i1,
                        i2,
                        i3,
                        v1,
                        v2,
                        v3,
                    )
    out = accs[0].copy()
    for c in range(1, chunks):
        out += accs[c]
    return out


@nb.njit(inline="always", **_OPTS)
def _unit4(L, R, Z, H, c0, nc, i0, i1, i2, i3, v1, v2, v3, acc, s0, s1, s2, s3, diag):
    """One group of four rows of :func:`unit_tiles` against the columns
    ``c0 <= j < c0 + nc``: their weights go to the rows' sums and to the columns'
    sums; ``diag``: the first four columns are the group's own rows, whose weights
    go to the rows' sums only."""
    lx, ly, lz = L[0], L[1], L[2]
    x, y, z = R[0, c0 : c0 + nc], R[1, c0 : c0 + nc], R[2, c0 : c0 + nc]
    u, v, w = Z[0, c0 : c0 + nc], Z[1, c0 : c0 + nc], Z[2, c0 : c0 + nc]
    a0x, a0y, a0z = LOG2E * lx[i0], LOG2E * ly[i0], LOG2E * lz[i0]
    a1x, a1y, a1z = LOG2E * lx[i1], LOG2E * ly[i1], LOG2E * lz[i1]
    a2x, a2y, a2z = LOG2E * lx[i2], LOG2E * ly[i2], LOG2E * lz[i2]
    a3x, a3y, a3z = LOG2E * lx[i3], LOG2E * ly[i3], LOG2E * lz[i3]
    for j in range(nc):
        xj, yj, zj = x[j], y[j], z[j]
        s0[j] = _exp2(H + a0x * xj + a0y * yj + a0z * zj)
        s1[j] = _exp2(H + a1x * xj + a1y * yj + a1z * zj)
        s2[j] = _exp2(H + a2x * xj + a2y * yj + a2z * zj)
        s3[j] = _exp2(H + a3x * xj + a3y * yj + a3z * zj)
    t0u = t0v = t0w = t0 = 0.0
    t1u = t1v = t1w = t1 = 0.0
    t2u = t2v = t2w = t2 = 0.0
    t3u = t3v = t3w = t3 = 0.0
    for j in range(nc):
        e0, e1, e2, e3 = s0[j], s1[j], s2[j], s3[j]
        uj, vj, wj = u[j], v[j], w[j]
        t0u += e0 * uj
        t0v += e0 * vj
        t0w += e0 * wj
        t0 += e0
        t1u += e1 * uj
        t1v += e1 * vj
        t1w += e1 * wj
        t1 += e1
        t2u += e2 * uj
        t2v += e2 * vj
        t2w += e2 * wj
        t2 += e2
        t3u += e3 * uj
        t3v += e3 * vj
        t3w += e3 * wj
        t3 += e3
    acc[0, i0] += t0u
    acc[1, i0] += t0v
    acc[2, i0] += t0w
    acc[3, i0] += t0
    acc[0, i1] += t1u * v1
    acc[1, i1] += t1v * v1
    acc[2, i1] += t1w * v1
    acc[3, i1] += t1 * v1
    acc[0, i2] += t2u * v2
    acc[1, i2] += t2v * v2
    acc[2, i2] += t2w * v2
    acc[3, i2] += t2 * v2
    acc[0, i3] += t3u * v3
    acc[1, i3] += t3v * v3
    acc[2, i3] += t3w * v3
    acc[3, i3] += t3 * v3
    if diag:  # the group's own 4 x 4 block: counted by the rows' sums above
        for g in range(min(4, nc)):
            s0[g] = 0.0
            s1[g] = 0.0
            s2[g] = 0.0
            s3[g] = 0.0
    U0, V0, W0 = Z[0, i0], Z[1, i0], Z[2, i0]
    U1, V1, W1 = Z[0, i1] * v1, Z[1, i1] * v1, Z[2, i1] * v1
    U2, V2, W2 = Z[0, i2] * v2, Z[1, i2] * v2, Z[2, i2] * v2
    U3, V3, W3 = Z[0, i3] * v3, Z[1, i3] * v3, Z[2, i3] * v3
    au = acc[0, c0 : c0 + nc]
    av = acc[1, c0 : c0 + nc]
    aw = acc[2, c0 : c0 + nc]
    ad = acc[3, c0 : c0 + nc]
    for j in range(nc):
        e0, e1, e2, e3 = s0[j], s1[j], s2[j], s3[j]
        au[j] += e0 * U0 + e1 * U1 + e2 * U2 + e3 * U3
        av[j] += e0 * V0 + e1 * V1 + e2 * V2 + e3 * V3
        aw[j] += e0 * W0 + e1 * W1 + e2 * W2 + e3 * W3
        ad[j] += e0 + e1 * v1 + e2 * v2 + e3 * v3


@nb.njit(inline="always", **_OPTS)
def _unit_run(L, R, Z, shift, block, work, w0, w1, acc):
    """The tiles ``work[w0:w1]`` of :func:`unit_tiles`, summed into ``acc``."""
    n = L.shape[2]
    s0 = np.empty(block)
    s1 = np.empty(block)
    s2 = np.empty(block)
    s3 = np.empty(block)
    for w in range(w0, w1):
        b = work[w, 0]
        r0 = work[w, 1] * block
        r1 = min(n, r0 + block)
        c0 = work[w, 2] * block
        nc = min(n, c0 + block) - c0
        H = LOG2E * shift[b]
        for i0 in range(r0, r1, 4):
            i1 = min(i0 + 1, r1 - 1)
            i2 = min(i0 + 2, r1 - 1)
            i3 = min(i0 + 3, r1 - 1)
            v1 = 1.0 if i0 + 1 < r1 else 0.0
            v2 = 1.0 if i0 + 2 < r1 else 0.0
            v3 = 1.0 if i0 + 3 < r1 else 0.0
            # a tile on the diagonal: each group of rows against the columns from
            # its first row on (the columns before it gave these rows their weights
            # as columns of the earlier groups): half the tile's exponentials
            diagonal = r0 == c0
            _unit4(
                L[b],
                R[b],
                Z[b],
                H,
                i0 if diagonal else c0,
                r1 - i0 if diagonal else nc,
                i0,
                i1,
                i2,
                i3,
                v1,
                v2,
                v3,
                acc[b],
                s0,
                s1,
                s2,
                s3,
                diagonal,
            )


@nb.njit(parallel=True, **_OPTS)
def unit_tiles(L, R, Z, shift, block, work, chunks):
    r"""Accumulators of the symmetric field of at most three coordinates whose
    exponents share one shift (tokens of one norm: the sphere).

    ``L``, ``R`` and ``Z`` (B, 3, n): the rows of ``beta A^T x_i`` (zero-padded to
    three), of the tokens and of their values; ``shift`` (B,) the constant added to
    every exponent (``-beta max |x|_A^2`` keeps them ``<= 0``). ``work`` and
    ``chunks`` as in :func:`symmetric_tiles`. Returns ``acc`` (B, 4, n):
    ``acc[b, :3, i] = sum_j e_ij Z[b, :, j]`` and ``acc[b, 3, i] = sum_j e_ij`` with
    ``e_ij = exp(L_i . R_j + shift)``.

    Why a kernel of its own: with one shift the exponent needs no per-pair shift and
    the weights no per-token factor, so the normaliser is a sum (not a multiply-add)
    and three coordinates fill the multiply-adds that :func:`symmetric_tiles` pads to
    four; on one core at n = 4096, d = 3 it takes about 0.85 of the time of
    :func:`symmetric_tiles`.
    """
    B = L.shape[0]
    n = L.shape[2]
    nw = work.shape[0]
    accs = np.zeros((chunks, B, 4, n))
    for c in nb.prange(chunks):
        _unit_run(
            L,
            R,
            Z,
            shift,
            block,
            work,
            c * nw // chunks,
            (c + 1) * nw // chunks,
            accs[c],
        )
    out = accs[0].copy()
    for c in range(1, chunks):
        out += accs[c]
    return out


@nb.njit(**_OPTS)
def unit_tiles_serial(L, R, Z, shift, block, work):
    """:func:`unit_tiles` on the calling thread: a parallel call costs about 0.14 ms
    of dispatch to numba's threads, 2% of the field of 4096 tokens."""
    acc = np.zeros((L.shape[0], 4, L.shape[2]))
    _unit_run(L, R, Z, shift, block, work, 0, work.shape[0], acc)
    return acc


@nb.njit(parallel=True, **_OPTS)
def row_field(QA, KT, VT, r0, r1, bias, bias_scalar, causal):
    r"""Row-wise softmax sums of the query rows ``r0 <= i < r1`` of every member.

    ``QA`` (B, n, q) holds :math:`\beta A^\top x_i` (so that ``QA[b, i] . KT[b, :, j]``
    is the logit), ``KT`` (B, q, n) the keys, ``VT`` (B, p, n) the values with a row
    of ones (``q`` and ``p`` multiples of 4, padded with zeros). ``bias``
    (r1 - r0, n) is added to the logits when it has rows, then ``bias_scalar``;
    ``causal`` keeps ``j <= i``. Returns ``num`` (B, r, p), the sums
    :math:`\sum_j e^{L_{ij} - m_i} v_j`, and ``m`` (B, r), the row maxima
    :math:`m_i`.
    """
    B, n, q = QA.shape
    p = VT.shape[1]
    r = r1 - r0
    groups = (r + 3) // 4
    num = np.zeros((B, p, r))
    mx = np.empty((B, r))
    has_bias = bias.shape[0] > 0
    zero = np.zeros(n)
    for t in nb.prange(B * groups):
        b = t // groups
        i0 = r0 + 4 * (t % groups)
        S = np.empty((4, n))
        ii = np.empty(4, dtype=np.int64)
        for g in range(4):
            ii[g] = min(i0 + g, r1 - 1)
        nc = n
        if causal:
            nc = min(n, ii[3] + 1)
        _logits4(
            QA[b],
            KT[b],
            zero,
            ii[0],
            ii[1],
            ii[2],
            ii[3],
            0,
            nc,
            S[0],
            S[1],
            S[2],
            S[3],
            False,
        )
        for g in range(4):
            row = S[g]
            if has_bias:
                br = bias[ii[g] - r0]
                for j in range(nc):
                    row[j] += LOG2E * br[j]
            if bias_scalar != 0.0:
                b2 = LOG2E * bias_scalar
                for j in range(nc):
                    row[j] += b2
            if causal:
                for j in range(ii[g] + 1, nc):
                    row[j] = -np.inf
            top = -np.inf
            for j in range(nc):
                top = max(top, row[j])
            for j in range(nc):
                row[j] -= top
            exp2_inplace(row, nc)
            if i0 + g < r1:
                mx[b, i0 + g - r0] = LN2 * top
        v1 = 1.0 if i0 + 1 < r1 else 0.0
        v2 = 1.0 if i0 + 2 < r1 else 0.0
        v3 = 1.0 if i0 + 3 < r1 else 0.0
        _sums4(
            S[0],
            S[1],
            S[2],
            S[3],
            VT[b],
            0,
            nc,
            num[b],
            ii[0] - r0,
            ii[1] - r0,
            ii[2] - r0,
            ii[3] - r0,
            v1,
            v2,
            v3,
        )
    return np.swapaxes(num, 1, 2), mx


def set_threads(n: int) -> None:
    """Threads of the compiled kernels (at most numba's ``NUMBA_NUM_THREADS``)."""
    nb.set_num_threads(max(1, min(int(n), nb.config.NUMBA_NUM_THREADS)))
