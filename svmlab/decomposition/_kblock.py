"""Kernel-block access for the decomposition family: the working set's
block ``K_BB`` and the gradient update ``G += K_B' d``, through the shared
LRU row cache (:mod:`svmlab.kernels.cache`) and the kernel-block layer
(:mod:`svmlab.kernels._blocks`).

A working-set block does not need the full rows of its samples: only the
samples whose multiplier changes fetch full rows (for the G update,
:func:`add_rows`); the block itself reads the rows already cached and
computes the others as one block.
"""

from __future__ import annotations

import numpy as np

from .._jit import njit
from ..kernels._blocks import kernel_block_cols_gemm
from ..kernels._rows import is_float64
from ..kernels.cache import get_row, lru_hit

__all__ = ["PANEL", "kernel_block_counted", "kernel_block_into", "add_rows"]

#: Rows per panel of a square block computed by its upper triangle
#: (:func:`kernel_block_into`)
PANEL = 64


def kernel_block_counted(kd, cd, rows, cols):
    """``(K[rows][:, cols], n_direct)`` in float64 (:func:`kernel_block_into`
    into fresh arrays), ``n_direct`` the entries computed outside the cache."""
    m, p = len(rows), len(cols)
    out = np.empty((m, p))
    n_direct = kernel_block_into(kd, cd, rows, cols, out, np.empty((m, p)))
    return out, n_direct


@njit(cache=True, inline="always")
def _read_cached(cd, rows, cols, out, todo):
    """Copy the columns ``cols`` of the cached rows among ``rows`` into
    ``out`` (each read is a hit of the LRU cache, as
    :func:`~svmlab.kernels.cache.get_row`'s); the positions of the rows not
    cached go to ``todo``.  Returns their number.  Only a float64 cache is
    read (the block is factorised by Cholesky and must be float64 throughout)."""
    m = rows.shape[0]
    p = cols.shape[0]
    n_todo = 0
    use_cache = is_float64(cd.rows)
    for a in range(m):
        s = cd.slot_of[rows[a]]
        if use_cache and s >= 0:
            lru_hit(cd.prev, cd.next, cd.meta, s)
            r = cd.rows[s]
            o = out[a]
            for c in range(p):
                o[c] = r[cols[c]]
        else:
            todo[n_todo] = a
            n_todo += 1
    return n_todo


@njit(cache=True, inline="always")
def _square_block(kd, rows, out, tmp):
    """``out = K[rows][:, rows]`` computed by its upper triangle, in panels
    of :data:`PANEL` rows (one GEMM each), and mirrored: exactly symmetric
    from about half the kernel values.  ``tmp``: scratch of at least m^2
    values.  Returns the entries computed."""
    m = rows.shape[0]
    flat = tmp.reshape(tmp.size)
    n_done = 0
    for a0 in range(0, m, PANEL):
        a1 = min(m, a0 + PANEL)
        w = m - a0
        n_done += (a1 - a0) * w
        buf = flat[:(a1 - a0) * w].reshape((a1 - a0, w))
        kernel_block_cols_gemm(kd, rows[a0:a1], rows[a0:], buf)
        for a in range(a0, a1):
            o = out[a]
            br = buf[a - a0]
            for c in range(a, m):
                o[c] = br[c - a0]
    # the lower triangle from the upper, by 32 x 32 tiles (a transpose
    # column by column would write with a stride of a row)
    for i0 in range(0, m, 32):
        for j0 in range(0, i0 + 1, 32):
            for i in range(i0, min(m, i0 + 32)):
                oi = out[i]
                for j in range(j0, min(i, j0 + 32)):
                    oi[j] = out[j, i]
    return n_done


@njit(cache=True)
def kernel_block_into(kd, cd, rows, cols, out, tmp):
    """``out = K[rows][:, cols]`` in float64; returns ``n_direct``, the
    entries computed outside the cache.

    Parameters
    ----------
    kd : KernelData
        The kernel and its training set.
    cd : CacheData
        The LRU row cache.  When it holds float64 rows, a row ``rows[a]``
        already cached is read from it (a hit); float32 rows are not used,
        so that the block is float64 throughout.
    rows, cols : int64 arrays (m,), (p,)
        Training indices.
    out : float64 array (m, p), output
    tmp : float64 array (>= m, p)
        Scratch for the rows not cached.

    The rows not cached come as one block
    (:func:`~svmlab.kernels._blocks.kernel_block_cols_gemm`: the inner
    products as one DGEMM, whose values may differ from the cached rows in
    the last bits, ``d u64 sum_k |x_ak x_jk|``; exactly the same on data
    whose inner products are exact).  A square block ``K_BB`` with no row
    cached (``rows`` equal to ``cols``) is computed by its upper triangle
    (:func:`_square_block`).  Callers that fit many working sets of one
    size keep ``out`` and ``tmp`` between them (a fresh array costs its
    page faults before its first use)."""
    m = rows.shape[0]
    p = cols.shape[0]
    todo = np.empty(m, np.int64)
    n_todo = _read_cached(cd, rows, cols, out, todo)
    square = n_todo == m and m == p
    a = 0
    while square and a < m:
        square = rows[a] == cols[a]
        a += 1
    if square:
        return _square_block(kd, rows, out, tmp)
    if n_todo == m:
        # no row cached: the block straight into ``out`` (a temporary of
        # the block's size would cost its page faults and a copy)
        kernel_block_cols_gemm(kd, rows, cols, out)
    elif n_todo > 0:
        sub = np.empty(n_todo, np.int64)
        for k in range(n_todo):
            sub[k] = rows[todo[k]]
        blk = tmp[:n_todo]
        kernel_block_cols_gemm(kd, sub, cols, blk)
        for k in range(n_todo):
            o = out[todo[k]]
            bk = blk[k]
            for c in range(p):
                o[c] = bk[c]
    return n_todo * p


@njit(cache=True)
def add_rows(kd, cd, G, idx, coef):
    """``G += sum_k coef[k] K(x_idx[k], X)`` (the G update), skipping zeros.

    Parameters
    ----------
    kd : KernelData
    cd : CacheData
        The LRU row cache the rows come from (float64 or float32 rows).
    G : float64 array (n,), updated in place
    idx : int64 array (q,)
        Training indices of the rows.
    coef : float64 array (q,)
        Their coefficients (the changes of ``beta``); zeros are skipped.

    Rows are applied two at a time: ``G[j] = (G[j] + c1 r1[j]) + c2 r2[j]``,
    the same operations in the same order as one row after the other (so
    the same bits), with ``G`` read and written once per pair instead of
    once per row.  :func:`~svmlab.kernels.cache.get_row` keeps the two most
    recently fetched rows, so both views stay valid."""
    n = G.shape[0]
    q = idx.shape[0]
    k = 0
    while k < q:
        c1 = coef[k]
        if c1 == 0.0:
            k += 1
            continue
        k2 = k + 1
        while k2 < q and coef[k2] == 0.0:
            k2 += 1
        r1 = get_row(kd, cd, idx[k])
        if k2 >= q:
            for j in range(n):
                G[j] += c1 * r1[j]
            break
        c2 = coef[k2]
        r2 = get_row(kd, cd, idx[k2])
        for j in range(n):
            g = G[j] + c1 * r1[j]
            G[j] = g + c2 * r2[j]
        k = k2 + 1
