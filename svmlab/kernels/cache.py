"""An LRU cache of kernel rows, bounded in megabytes, shared by all solvers.

LIBSVM keeps its kernel cache apart from the solver (``class Cache`` in
``svm.cpp``); so does svmlab.  A cache holds up to ``n_slots`` full rows
``K(x_i, X)``, where ``n_slots = cache_size MB / (itemsize n)`` (at least
two, so the two rows of a joint SMO step can be held at once, and at most
``n``).  The least recently used row is evicted first.

Row values are float64 or float32 (``dtype``).  float32 is LIBSVM's
``Qfloat``: half the memory per row, so twice as many rows in the same
``cache_size``, and dense rows computed by SGEMV/SGEMM on a float32 copy of
the data (:mod:`svmlab.kernels._blocks` states the precision); the solvers
keep their gradients, multipliers and intercept in float64 and only read
kernel values from the rows.  The estimators default to float32
(``cache_dtype="float32"``); ``cache_dtype="float64"`` is the single-row
float64 arithmetic, bit for bit.  :class:`KernelCache` itself defaults to
float64.

Everything is plain arrays (:class:`CacheData`), so ``@njit`` solver loops
call :func:`get_row` directly.  :class:`KernelCache` is the Python face of
the same arrays.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from ._blocks import kernel_block
from ._rows import Kernel, kernel_row, kernel_row_against, kernel_row_subset

__all__ = ["CacheData", "KernelCache", "cache_from_buffer", "check_cache_dtype", "fill_block",
           "get_row",
           "get_row_against", "get_row_subset", "cache_reset", "n_slots_for"]

_HEAD, _TAIL, _USED, _HITS, _MISSES = 0, 1, 2, 3, 4


class CacheData(NamedTuple):
    rows: np.ndarray  # (n_slots, n) float64 or float32
    slot_of: np.ndarray  # (n,) int64, -1 when row i is not cached
    owner: np.ndarray  # (n_slots,) int64, the row a slot holds, -1 if free
    prev: np.ndarray  # (n_slots,) int64, towards the most recently used
    next: np.ndarray  # (n_slots,) int64, towards the least recently used
    meta: np.ndarray  # int64 [head (MRU), tail (LRU), used, hits, misses]


def check_cache_dtype(dtype):
    """``dtype`` as a numpy dtype, float32 or float64 (else a ValueError)."""
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    if dt not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise ValueError(f"cache dtype must be 'float32' or 'float64', got {dtype!r}")
    return dt


def n_slots_for(n, cache_size_mb, itemsize=8):
    """Number of full rows of length n (values of ``itemsize`` bytes) that
    fit in ``cache_size_mb`` MB (at least 2, at most n)."""
    k = int(cache_size_mb * (1 << 20) // (itemsize * max(n, 1)))
    return int(min(max(k, 2), max(n, 1)))


def new_cache(n, cache_size_mb, row_len=None, dtype=np.float64):
    """Arrays of an empty cache for row keys ``0..n-1``; rows hold
    ``row_len`` values (default n: full rows; fewer for rows against a
    subset, :func:`get_row_against`) of ``dtype`` (float64 or float32)."""
    dt = check_cache_dtype(dtype)
    row_len = n if row_len is None else row_len
    m = min(n_slots_for(row_len, cache_size_mb, dt.itemsize), max(n, 1))
    return cache_from_buffer(np.empty((m, row_len), dtype=dt), n)


def cache_from_buffer(rows, n):
    """An empty cache for row keys ``0..n-1`` whose slots are the rows of the
    given (slots x row_len) float64 or float32 array -- for instance a view
    of another cache's memory, which must then not be used meanwhile."""
    m = rows.shape[0]
    meta = np.zeros(5, np.int64)
    meta[_HEAD] = -1
    meta[_TAIL] = -1
    return CacheData(rows, np.full(n, -1, np.int64), np.full(m, -1, np.int64),
                     np.full(m, -1, np.int64), np.full(m, -1, np.int64), meta)


@njit(cache=True)
def _unlink(cd, s):
    p = cd.prev[s]
    q = cd.next[s]
    if p >= 0:
        cd.next[p] = q
    else:
        cd.meta[_HEAD] = q
    if q >= 0:
        cd.prev[q] = p
    else:
        cd.meta[_TAIL] = p
    cd.prev[s] = -1
    cd.next[s] = -1


@njit(cache=True)
def _push_front(cd, s):
    h = cd.meta[_HEAD]
    cd.prev[s] = -1
    cd.next[s] = h
    if h >= 0:
        cd.prev[h] = s
    cd.meta[_HEAD] = s
    if cd.meta[_TAIL] < 0:
        cd.meta[_TAIL] = s


@njit(cache=True, inline="always")
def lru_hit(prev, nxt, meta, s):
    """Count a hit on slot s and make it the most recently used.  Takes the
    raw arrays of a :class:`CacheData`, so that a solver's hot loop can do
    the lookup ``s = slot_of[i]`` itself and call this on a hit."""
    meta[_HITS] += 1
    h = meta[_HEAD]
    if h != s:
        p = prev[s]
        q = nxt[s]
        nxt[p] = q  # s is not the head, so p >= 0
        if q >= 0:
            prev[q] = p
        else:
            meta[_TAIL] = p
        prev[s] = -1
        nxt[s] = h
        prev[h] = s
        meta[_HEAD] = s


@njit(cache=True)
def _slot(cd, i):
    """Slot holding row i, made most recently used; on a miss the least
    recently used slot is handed over to i.  Returns ``(slot, hit)``."""
    s = cd.slot_of[i]
    if s >= 0:
        lru_hit(cd.prev, cd.next, cd.meta, s)
        return s, True
    cd.meta[_MISSES] += 1
    if cd.meta[_USED] < cd.rows.shape[0]:
        s = cd.meta[_USED]
        cd.meta[_USED] += 1
    else:
        s = cd.meta[_TAIL]
        _unlink(cd, s)
        cd.slot_of[cd.owner[s]] = -1
    cd.owner[s] = i
    cd.slot_of[i] = s
    _push_front(cd, s)
    return s, False


@njit(cache=True)
def get_row(kd, cd, i):
    """Row ``K(x_i, X)``: a view into the cache, valid until the next miss
    evicts it (the two most recently fetched rows are never evicted by the
    next fetch)."""
    s, hit = _slot(cd, i)
    r = cd.rows[s]
    if hit:
        return r
    kernel_row(kd, i, r)
    return r


@njit(cache=True)
def get_row_against(kd, kd2, cd, i):
    """Row ``K(x_i, Z)`` against the rows Z of ``kd2`` (a contiguous subset of
    the training set, see :func:`svmlab.kernels._rows.kernel_row_against`),
    through a cache made with ``row_len`` = len(Z)."""
    s, hit = _slot(cd, i)
    r = cd.rows[s]
    if hit:
        return r
    kernel_row_against(kd, i, kd2, r)
    return r


@njit(cache=True)
def get_row_subset(kd, cd, i, idx, m):
    """Like :func:`get_row`, but a miss computes only the entries ``idx[:m]``
    (a shrinking solver's active set); the other entries of the returned row
    are stale.  The caller must :func:`cache_reset` whenever the subset grows
    (rows cached earlier lack the new entries)."""
    s, hit = _slot(cd, i)
    r = cd.rows[s]
    if hit:
        return r
    kernel_row_subset(kd, i, idx, m, r)
    return r


@njit(cache=True)
def fill_block(kd, cd, rows, m):
    """Make the full rows ``rows[:m]`` cached, the missing ones computed
    together as one kernel block (:func:`svmlab.kernels._blocks.kernel_block`:
    one SGEMM for dense input into a float32 cache, instead of one
    memory-bound SGEMV per row).  For a solver that knows which rows it will
    need next (LIBSVM-style SMO fetching, with a missing row, the next
    candidates of its selection; a decomposition's new working set).

    Parameters
    ----------
    kd : KernelData
    cd : CacheData
        A cache of full rows (row length n).
    rows : int64 array
        Training indices, most wanted first; duplicates and rows already
        cached are skipped.
    m : int
        Use ``rows[:m]``.

    Returns the number of rows computed.  At most ``n_slots - 2`` rows are
    computed (the most wanted ones), so that the block never evicts one of
    its own rows nor the two rows most recently used before it; each counts
    as a miss, and becomes most recently used (the first of ``rows`` last).
    Memory: a scratch block of ``k x n`` values of the cache's dtype beside
    the cache, k the number of rows computed.  Values: exactly those of
    :func:`get_row` for a float64 cache (the block's rows are the single
    rows); for a float32 cache the SGEMM values, within float32 rounding of
    the single rows (:mod:`svmlab.kernels._blocks`).
    """
    cap = cd.rows.shape[0] - 2
    miss = np.empty(max(min(m, cap), 0), np.int64)
    k = 0
    for a in range(m):
        if k >= cap:
            break
        i = rows[a]
        if cd.slot_of[i] >= 0:
            continue
        dup = False
        for b in range(k):
            if miss[b] == i:
                dup = True
                break
        if not dup:
            miss[k] = i
            k += 1
    if k == 0:
        return 0
    blk = np.empty_like(cd.rows[:k])
    kernel_block(kd, miss[:k], blk)
    for a in range(k - 1, -1, -1):
        s, hit = _slot(cd, miss[a])
        cd.rows[s, :] = blk[a]
    return k


@njit(cache=True)
def cache_reset(cd):
    """Forget every cached row (hit/miss counts are kept)."""
    for s in range(cd.owner.shape[0]):
        o = cd.owner[s]
        if o >= 0:
            cd.slot_of[o] = -1
        cd.owner[s] = -1
        cd.prev[s] = -1
        cd.next[s] = -1
    cd.meta[_HEAD] = -1
    cd.meta[_TAIL] = -1
    cd.meta[_USED] = 0


@njit(cache=True)
def is_cached(cd, i):
    return cd.slot_of[i] >= 0


class KernelCache:
    """LRU cache of rows of a :class:`~svmlab.kernels._rows.Kernel`.

    Parameters
    ----------
    kernel : Kernel
    cache_size : float
        Size bound in MB (default 40, as in Platt's experiments).
    dtype : {"float64", "float32"} or numpy dtype, default="float64"
        The type of the cached values.  float32 holds twice as many rows;
        for dense input it keeps a float32 copy of the data in ``kernel``
        (:meth:`~svmlab.kernels.Kernel.ensure_float32`) for SGEMV rows.

    Attributes
    ----------
    data : CacheData
        The arrays a numba loop passes to :func:`get_row`.
    """

    def __init__(self, kernel: Kernel, cache_size=40.0, dtype=np.float64):
        self.kernel = kernel
        self.cache_size = cache_size
        self.dtype = check_cache_dtype(dtype)
        if self.dtype == np.float32:
            kernel.ensure_float32()
        self.data = new_cache(kernel.n_samples, cache_size, dtype=self.dtype)

    @property
    def n_slots(self):
        return self.data.rows.shape[0]

    def row(self, i):
        """Row i (a read-only copy is not made; do not write into it)."""
        return get_row(self.kernel.data, self.data, int(i))

    def fill(self, rows):
        """Cache the rows ``rows`` (the missing ones as one kernel block,
        :func:`fill_block`); returns how many were computed."""
        rows = np.ascontiguousarray(np.asarray(rows, dtype=np.int64).ravel())
        if rows.size and (rows.min() < 0 or rows.max() >= self.kernel.n_samples):
            raise IndexError("rows must be training indices")
        return int(fill_block(self.kernel.data, self.data, rows, rows.shape[0]))

    def __contains__(self, i):
        return bool(self.data.slot_of[int(i)] >= 0)

    @property
    def hits(self):
        return int(self.data.meta[_HITS])

    @property
    def misses(self):
        return int(self.data.meta[_MISSES])

    @property
    def kernel_evaluations(self):
        """Kernel values computed so far through this cache (misses x n)."""
        return self.misses * self.kernel.n_samples

    def clear(self):
        self.data = new_cache(self.kernel.n_samples, self.cache_size, dtype=self.dtype)
