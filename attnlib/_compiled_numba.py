r"""Compiled tiles of the attention field (numba): logits, exponential and weighted
sums fused, per group of four query rows, with no ``n x n`` array anywhere.

Imported by :mod:`attnlib._compiled` on the first field evaluation (never by
``import attnlib``); the machine code is cached on disk (``cache=True``), so that only
the first process on a machine pays the compilation (a few seconds).

The exponential is computed here, not by ``libm``: a scalar ``exp`` call cannot be
vectorised, and it is several times slower than numpy's SIMD ``exp``. The one below
is the classic reduction :math:`x = k \ln 2 + r`, :math:`|r| \le \tfrac12\ln 2`, with
:math:`\ln 2` split in two so that :math:`k \ln 2` is exact, the Taylor polynomial of
degree 12 of :math:`e^r` (truncation :math:`< 2\cdot 10^{-16}` relative) and the
scaling by :math:`2^k` built from the exponent bits. Its relative error is a few
units in the last place of float64; arguments below :data:`EXP_MIN` give ``0``
(their weight is below :math:`10^{-307}` of the largest of their row, which is
``1``: every exponent here is shifted to be ``<= 0``).
"""

from __future__ import annotations

import os

import numba as nb
import numpy as np
from llvmlite import ir as llvm_ir
from numba.extending import intrinsic

__all__ = ["EXP_MIN", "exp_inplace", "symmetric_tiles", "row_field", "set_threads"]

# numba's workqueue threads survive a fork (a process pool of the sweeps, dask): GNU
# OpenMP's, numba's default where it is found, abort every forked child that uses
# them. The workqueue takes one caller at a time: attnlib._compiled serialises calls.
if "NUMBA_THREADING_LAYER" not in os.environ:
    nb.config.THREADING_LAYER = "workqueue"

EXP_MIN = -708.0
_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01  # 32 significant bits: k * _LN2_HI is exact
_LN2_LO = 1.90821492927058770002e-10
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


@nb.njit(inline="always", **_OPTS)
def _exp(x):
    """:math:`e^x` for ``x <= 709`` (``0`` below :data:`EXP_MIN`), vectorisable."""
    y = x if x > EXP_MIN else EXP_MIN
    y = y if y < 709.0 else 709.0
    k = np.floor(y * _LOG2E + 0.5)
    r = (y - k * _LN2_HI) - k * _LN2_LO
    p = 1.0 / 479001600.0
    p = p * r + 1.0 / 39916800.0
    p = p * r + 1.0 / 3628800.0
    p = p * r + 1.0 / 362880.0
    p = p * r + 1.0 / 40320.0
    p = p * r + 1.0 / 5040.0
    p = p * r + 1.0 / 720.0
    p = p * r + 1.0 / 120.0
    p = p * r + 1.0 / 24.0
    p = p * r + 1.0 / 6.0
    p = p * r + 0.5
    p = p * r + 1.0
    p = p * r + 1.0
    p = p * _as_float((np.int64(k) + 1023) << 52)
    return p if x > EXP_MIN else 0.0


@nb.njit(inline="always", **_OPTS)
def exp_inplace(s, nc):
    """``s[:m] = exp(s[:m])`` (vectorised)."""
    for j in range(nc):
        s[j] = _exp(s[j])


@nb.njit(inline="always", **_OPTS)
def _logits4(left, rightT, shift, i0, i1, i2, i3, c0, nc, s0, s1, s2, s3, take_exp):
    """``s_g[j] = exp(left[i_g] . rightT[:, c0 + j] + shift[i_g] + shift[c0 + j])``
    for four rows, ``j < nc``; the number of columns of ``left`` is a multiple of four
    (padded with zeros). The exponential is taken in the last pass over ``j``
    (without it for ``take_exp=False``: the logits)."""
    h = shift[c0 : c0 + nc]
    h0, h1, h2, h3 = shift[i0], shift[i1], shift[i2], shift[i3]
    for j in range(nc):
        s0[j] = h[j] + h0
        s1[j] = h[j] + h1
        s2[j] = h[j] + h2
        s3[j] = h[j] + h3
    q = left.shape[1]
    for cc in range(0, q, 4):
        a00, a01, a02, a03 = (
            left[i0, cc],
            left[i0, cc + 1],
            left[i0, cc + 2],
            left[i0, cc + 3],
        )
        a10, a11, a12, a13 = (
            left[i1, cc],
            left[i1, cc + 1],
            left[i1, cc + 2],
            left[i1, cc + 3],
        )
        a20, a21, a22, a23 = (
            left[i2, cc],
            left[i2, cc + 1],
            left[i2, cc + 2],
            left[i2, cc + 3],
        )
        a30, a31, a32, a33 = (
            left[i3, cc],
            left[i3, cc + 1],
            left[i3, cc + 2],
            left[i3, cc + 3],
        )
        r0 = rightT[cc, c0 : c0 + nc]
        r1 = rightT[cc + 1, c0 : c0 + nc]
        r2 = rightT[cc + 2, c0 : c0 + nc]
        r3 = rightT[cc + 3, c0 : c0 + nc]
        if cc + 4 < q or not take_exp:
            for j in range(nc):
                x0, x1, x2, x3 = r0[j], r1[j], r2[j], r3[j]
                s0[j] += a00 * x0 + a01 * x1 + a02 * x2 + a03 * x3
                s1[j] += a10 * x0 + a11 * x1 + a12 * x2 + a13 * x3
                s2[j] += a20 * x0 + a21 * x1 + a22 * x2 + a23 * x3
                s3[j] += a30 * x0 + a31 * x1 + a32 * x2 + a33 * x3
        else:
            for j in range(nc):
                x0, x1, x2, x3 = r0[j], r1[j], r2[j], r3[j]
                s0[j] = _exp(s0[j] + a00 * x0 + a01 * x1 + a02 * x2 + a03 * x3)
                s1[j] = _exp(s1[j] + a10 * x0 + a11 * x1 + a12 * x2 + a13 * x3)
                s2[j] = _exp(s2[j] + a20 * x0 + a21 * x1 + a22 * x2 + a23 * x3)
                s3[j] = _exp(s3[j] + a30 * x0 + a31 * x1 + a32 * x2 + a33 * x3)


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
    ``acc[b, :, i] = sum_j exp(left_i . right_j) ZT[b, :, j]``.
    """
    B, n, q = left.shape
    p = ZT.shape[1]
    nw = work.shape[0]
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
                    shift[b],
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
                    row[j] += br[j]
            if bias_scalar != 0.0:
                for j in range(nc):
                    row[j] += bias_scalar
            if causal:
                for j in range(ii[g] + 1, nc):
                    row[j] = -np.inf
            top = -np.inf
            for j in range(nc):
                top = max(top, row[j])
            for j in range(nc):
                row[j] -= top
            exp_inplace(row, nc)
            if i0 + g < r1:
                mx[b, i0 + g - r0] = top
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
