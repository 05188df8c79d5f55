r"""The tiles of :mod:`attnlib._compiled_numba` under ``jax.jit``: the GPU route.

Same functions, same arguments and results (numpy arrays in, float64 numpy arrays
out), evaluated by XLA on JAX's default device: a GPU where JAX sees one. Row blocks
of ``block`` queries against every key (``jax.lax.map``, memory ``O(n * block)``),
so each exponential is computed twice in the symmetric case: on a GPU the
exponentials are cheap and the halving would cost a scatter. On a CPU numba is
faster (``benchmarks/velocity.py``); the tests run this path on the CPU so that it
keeps working. Float64 throughout (``jax.enable_x64`` around each call only, so
that JAX users elsewhere keep their default dtype).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["symmetric_tiles", "row_field"]


def _pad_rows(M: np.ndarray, axis: int, size: int) -> np.ndarray:
    pad = [(0, 0)] * M.ndim
    pad[axis] = (0, size - M.shape[axis])
    return np.pad(M, pad)


@functools.partial(jax.jit, static_argnames=("block",))
def _sym(left, rightT, shift, ZT, block):
    # left (B, N, q) padded rows, rightT (B, q, n), shift (B, n), ZT (B, p, n)
    B, N, q = left.shape
    nb = N // block
    shift_rows = jnp.pad(shift, ((0, 0), (0, N - shift.shape[1])))

    def member(args):
        lb, rb, sb, srb, zb = args

        def rows(t):
            L = jax.lax.dynamic_slice_in_dim(lb, t * block, block)
            s = jax.lax.dynamic_slice_in_dim(srb, t * block, block)
            E = jnp.exp(L @ rb + s[:, None] + sb[None, :])
            return E @ zb.T

        return jax.lax.map(rows, jnp.arange(nb)).reshape(N, -1)

    out = jax.lax.map(member, (left, rightT, shift, shift_rows, ZT))
    return jnp.swapaxes(out, 1, 2)


def symmetric_tiles(left, rightT, shift, ZT, block, work, chunks):
    """See :func:`attnlib._compiled_numba.symmetric_tiles` (``work`` and ``chunks``
    are ignored: XLA spreads the blocks)."""
    B, n, _ = left.shape
    block = int(min(block, n))
    N = -(-n // block) * block
    with jax.enable_x64(True):
        out = _sym(_pad_rows(left, 1, N), rightT, shift, ZT, block)
        return np.asarray(out)[..., :n]


@functools.partial(jax.jit, static_argnames=("causal",))
def _rows(QA, KT, VT, rows, bias, causal):
    L = jnp.einsum("brq,bqn->brn", QA, KT) + bias[None]
    if causal:
        keep = jnp.arange(KT.shape[2])[None, :] <= rows[:, None]
        L = jnp.where(keep[None], L, -jnp.inf)
    m = L.max(axis=-1)
    E = jnp.exp(L - m[..., None])
    return jnp.einsum("brn,bpn->brp", E, VT), m


def row_field(QA, KT, VT, r0, r1, bias, bias_scalar, causal, block=256):
    """See :func:`attnlib._compiled_numba.row_field` (in blocks of ``block`` rows)."""
    n = KT.shape[2]
    nums, ms = [], []
    with jax.enable_x64(True):
        for s in range(r0, r1, block):
            e = min(r1, s + block)
            Bm = np.full((e - s, n), float(bias_scalar))
            if bias.shape[0] > 0:
                Bm += bias[s - r0 : e - r0]
            num, m = _rows(QA[:, s:e], KT, VT, np.arange(s, e), Bm, bool(causal))
            nums.append(np.asarray(num))
            ms.append(np.asarray(m))
    return np.concatenate(nums, axis=1), np.concatenate(ms, axis=1)
