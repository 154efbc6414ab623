"""Kernel blocks for SMO's rare, large kernel sums (float32 caches of dense input).

SMO reads kernel values one or two rows per step, through the cache
(:mod:`svmlab.kernels.cache`).  A few events need many rows at once, only
to sum them: LIBSVM's ``reconstruct_gradient`` (when shrunk examples come
back) adds ``alpha_j y_j K_jt`` of every free support vector j to every
inactive example t, and brings ``Gbar`` up to date with the bound changes
noted while shrunk.  Row by row these are thousands of matrix-vector
products (or, against a subset, thousands of entry-by-entry dot products);
as blocks they are a few matrix-matrix products (SGEMM), which run at
arithmetic speed instead of memory speed
(docs/decisions/26s02-float32-kernel-blocks.md).

Used only when the cache holds float32 rows of dense input: the values are
then those of :mod:`svmlab.kernels._blocks` (float32 inner products by
SGEMM, transform in float64, rounded once to float32; LIBSVM's
``Qfloat``), accumulated in float64.  With a float64 cache SMO keeps its
row-by-row arithmetic bit for bit (:func:`svmlab.smo._core.reconstruct_gradient`).

:func:`complete_rows` is the other event: at an unshrink, the rows cached
while examples were shrunk (only their active entries computed) are
completed in place as blocks, and the rows computed in full are kept; for
float32 and float64 caches.

The sums' blocks live beside the cache and do not go through it (nothing is
cached; this bypasses the cache's miss paths, including any shared-row
store of :mod:`svmlab.kernels.cache`; so does :func:`complete_rows`, which
writes cached rows in place).  Memory: a scratch of at most
:data:`BLOCK_BYTES` bytes for one block, plus the gathered float32 columns
(``len(cols) x d``).
"""

from __future__ import annotations

import numpy as np
from .._jit import njit

from ..kernels._blocks import (_gather32, _gather_sq, _gemm_nt, _full32, kernel_block,
                               transform_block)
from ..kernels._rows import kernel_row
from ..kernels.cache import cache_reset

#: the largest kernel block (bytes of float32 values) one call holds at once
BLOCK_BYTES = 1 << 24


@njit(cache=True)
def gathered_cols32(kd, cols, nc):
    """``(Z, sqz)``: the float32 rows of the columns ``cols[:nc]`` of a
    kernel sum (a contiguous ``nc x d`` copy) and their squared norms.
    ``kd``: dense input (``dense32`` made, or the float64 rows rounded)."""
    idx = cols[:nc]
    return _gather32(kd, idx), _gather_sq(kd.sqnorm, idx)


@njit(cache=True)
def all_cols32(kd):
    """``(Z, sqz)`` when the columns are the whole training set in order:
    the float32 copy itself (no copy when it exists) and the squared norms."""
    return _full32(kd), kd.sqnorm


@njit(cache=True)
def add_kernel_sum32(kd, rows, coef, nr, Z, sqz, acc):
    """``acc[c] += sum_a coef[a] K(x_rows[a], z_c)`` for every column c, the
    kernel values as float32 SGEMM blocks.

    Solves no optimisation problem: it is the kernel sum of
    ``reconstruct_gradient``, ``G_t += sum_j alpha_j y_j K_jt``, by blocks.

    Parameters
    ----------
    kd : KernelData
        Dense input, any kernel.
    rows : int64 array
        Training indices of the block rows, ``rows[:nr]``.
    coef : float64 array
        Their coefficients, ``coef[:nr]``.
    nr : int
        Number of rows.
    Z : float32 array (p, d), C-contiguous
        The columns' float32 rows (:func:`gathered_cols32`, :func:`all_cols32`).
    sqz : float64 array (p,)
        Their squared norms.
    acc : float64 array (p,)
        Accumulator, updated in place (float64 sums of the float32 values).

    Rows are taken ``bs`` at a time, ``bs`` such that a block holds at most
    :data:`BLOCK_BYTES` bytes (and at most 512 rows); each block is one
    SGEMM ``X32[rows] @ Z.T`` and the transform of
    :func:`svmlab.kernels._blocks.transform_block`.
    """
    p = Z.shape[0]
    if nr == 0 or p == 0:
        return
    bs = BLOCK_BYTES // (4 * p)
    bs = max(8, min(bs, 512, nr))
    blk = np.empty((bs, p), np.float32)
    for a0 in range(0, nr, bs):
        k = min(bs, nr - a0)
        idx = rows[a0:a0 + k]
        out = blk[:k]
        _gemm_nt(_gather32(kd, idx), Z, out)
        transform_block(out, _gather_sq(kd.sqnorm, idx), sqz, kd.ktype, kd.gamma, kd.coef0,
                        kd.degree)
        for a in range(k):
            c = coef[a0 + a]
            o = out[a]
            for q in range(p):
                acc[q] += c * np.float64(o[q])


#: an unshrink recomputes the rows cached while shrunk in place when they are
#: at most this fraction of the cached rows, else forgets every row (the rows
#: asked for again are then recomputed on demand)
COMPLETE_FRACTION = 0.25


@njit(cache=True)
def complete_rows(kd, cd, rowfull, blocks):
    """Make every cached full-cache row valid in all its entries, at an
    unshrink (examples that were shrunk become active again).

    Parameters
    ----------
    kd : KernelData
    cd : CacheData
        The full-row cache; while examples were shrunk, a miss computed only
        the active entries of a row.
    rowfull : bool array (n,)
        ``rowfull[i]``: the cached row of i was computed with every entry
        (nothing shrunk at the time); kept as it is.
    blocks : None or bool
        The switch of float32 blocks (:func:`svmlab.smo._core.blocks_switch`):
        True for float32 rows of dense input.

    The other cached rows (``k`` of them) are recomputed in full, in place
    (with ``blocks``, :func:`svmlab.kernels._blocks.kernel_block`'s SGEMM
    blocks, within float32 rounding of a miss's row; otherwise each row by
    :func:`svmlab.kernels._rows.kernel_row`, the row a miss would compute
    bit for bit), and counted as misses -- when ``k`` is at most
    :data:`COMPLETE_FRACTION` of the cached rows.  Otherwise the cache
    forgets every row (:func:`cache_reset`).  Either way no slot changes
    owner and the LRU order stays, so the cache's own bookkeeping is
    untouched; ``rowfull`` is True for every cached row on return.
    Memory: a scratch block of at most 64 rows.
    Keeping the full rows saves their recomputation
    (docs/decisions/26s04-complete-rows-at-unshrink.md).
    """
    owner = cd.owner
    n_cached = 0
    k = 0
    for s in range(owner.shape[0]):
        o = owner[s]
        if o >= 0:
            n_cached += 1
            if not rowfull[o]:
                k += 1
    if k == 0:
        return
    if k > COMPLETE_FRACTION * n_cached:
        cache_reset(cd)
        return
    if blocks is None or not blocks:
        for s in range(owner.shape[0]):
            o = owner[s]
            if o >= 0 and not rowfull[o]:
                kernel_row(kd, o, cd.rows[s])
                rowfull[o] = True
        cd.meta[4] += k
        return
    slots = np.empty(k, np.int64)
    q = 0
    for s in range(owner.shape[0]):
        o = owner[s]
        if o >= 0 and not rowfull[o]:
            slots[q] = s
            q += 1
    bs = 64
    blk = np.empty_like(cd.rows[:min(bs, k)])
    rows = np.empty(min(bs, k), np.int64)
    for a0 in range(0, k, bs):
        m = min(bs, k - a0)
        for a in range(m):
            rows[a] = owner[slots[a0 + a]]
        kernel_block(kd, rows[:m], blk[:m])
        for a in range(m):
            cd.rows[slots[a0 + a], :] = blk[a]
            rowfull[rows[a]] = True
    cd.meta[4] += k
