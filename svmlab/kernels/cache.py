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

The full-kernel path (:func:`full_cache`, ``KernelCache(..., full=True)``)
computes the whole matrix at once when it fits ``cache_size`` and keeps it
as the cache's rows: every request is then a hit.

One-vs-one multiclass shares kernel values between its pairs through a
:class:`SharedRowStore` of class blocks (``CacheData.shared``): a miss of a
pair's cache is served from the store, which computes only the blocks it
lacks.  Without a store ``shared`` is a typed placeholder (same numba
types, so nothing compiles twice) and a miss costs one more predictable
branch; the values are unchanged.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from .._jit import njit

from ._blocks import kernel_block, kernel_block_gemm
from ._pool import BufferPool
from ._rows import (PRECOMPUTED, Kernel, KernelData, kernel_row, kernel_row_against,
                    kernel_row_range, kernel_row_subset)

__all__ = ["CacheData", "KernelCache", "SharedRows", "SharedRowStore", "cache_from_buffer",
           "check_cache_dtype", "fill_block", "fill_block_gemm", "full_cache", "full_kernel_fits", "get_row",
           "get_row_against", "get_row_subset", "cache_reset", "n_slots_for"]

_HEAD, _TAIL, _USED, _HITS, _MISSES = 0, 1, 2, 3, 4


#: an empty KernelData with the field types of every real one (the
#: placeholder ``kd`` of an unused :class:`SharedRows`)
_NO_KD = KernelData(False, np.zeros((0, 0)), np.zeros(1, np.int32), np.zeros(0, np.int32),
                    np.zeros(0), np.zeros(0), 0, 1.0, 0.0, 3.0, np.zeros(0), False,
                    np.zeros((0, 0), np.uint64), np.zeros((0, 0), np.uint64),
                    np.zeros(0, np.int32), np.zeros(0), np.zeros(0, np.int32),
                    np.zeros((0, 0), np.float32))


class SharedRows(NamedTuple):
    """One sub-problem's view of a store of class blocks of kernel rows
    shared by the pairs of a one-vs-one multiclass fit
    (:class:`SharedRowStore`, :mod:`svmlab._multiclass`).

    The training set is ordered by class (``kd``: class c holds the rows
    ``coff[c]:coff[c+1]``).  An entry of the store is a *class block*
    ``K(x_g, X_c)`` (row g against the rows of class c), key ``g k + c``;
    the pair (a, b)'s row of example g is the block of class a followed by
    the block of class b (its rows are those of a, then those of b).  The
    block of g's own class serves every pair that g's class is in.

    The first six fields are an LRU cache exactly like :class:`CacheData`'s
    (the same compiled LRU code serves both; slots hold ``max_c |class c|``
    values).  ``gmap[i]``: the position in ``kd`` of the pair's example i;
    ``cls``: ``[a, b]``; ``coff`` (k+1,) class offsets; ``counts`` this
    pair's int64 ``[kernel values computed, blocks computed, blocks found]``.
    Unused (an ordinary cache): ``gmap`` is empty and every array a
    0-length placeholder of the same type, so a solver loop compiles once
    for both."""

    rows: np.ndarray  # (m, max class size) the cache's dtype
    slot_of: np.ndarray  # (N k,) int64
    owner: np.ndarray  # (m,) int64
    prev: np.ndarray  # (m,) int64
    next: np.ndarray  # (m,) int64
    meta: np.ndarray  # int64 [head, tail, used, hits, misses], shared by every pair
    gmap: np.ndarray  # (n,) int64 pair index -> position in kd; empty: no store
    kd: KernelData  # the full training set, ordered by class
    cls: np.ndarray  # int64 [a, b]
    coff: np.ndarray  # (k + 1,) int64 class offsets in kd
    counts: np.ndarray  # int64 [values computed, blocks computed, blocks found]


def no_shared_rows(dtype):
    """The placeholder :class:`SharedRows` of a cache of ``dtype`` values."""
    z = np.zeros(0, np.int64)
    return SharedRows(np.zeros((0, 0), dtype), z, z, z, z, np.zeros(5, np.int64), z, _NO_KD,
                      np.zeros(2, np.int64), np.zeros(1, np.int64), np.zeros(3, np.int64))


class CacheData(NamedTuple):
    rows: np.ndarray  # (n_slots, n) float64 or float32
    slot_of: np.ndarray  # (n,) int64, -1 when row i is not cached
    owner: np.ndarray  # (n_slots,) int64, the row a slot holds, -1 if free
    prev: np.ndarray  # (n_slots,) int64, towards the most recently used
    next: np.ndarray  # (n_slots,) int64, towards the least recently used
    meta: np.ndarray  # int64 [head (MRU), tail (LRU), used, hits, misses]
    #: a store of full-set rows this cache's misses are served from (one-vs-one
    #: multiclass); a placeholder with an empty ``gmap`` when there is none
    shared: SharedRows = no_shared_rows(np.float64)


def check_cache_dtype(dtype):
    """``dtype`` as a numpy dtype, float32 or float64 (else a ValueError)."""
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    if dt not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise ValueError(f"cache dtype must be 'float32' or 'float64', got {dtype!r}")
    return dt


def plain_pages(shape, dtype):
    """An uninitialised C-contiguous array on ordinary pages: an anonymous
    ``mmap`` (kept alive by the array), so that it carries no
    transparent-huge-page advice.  The blocked decomposition's row stores
    are made so (:class:`svmlab.decomposition._blocked.RowStore`).

    Reason: NumPy advises huge pages for arrays of 4 MB or more; where the
    kernel's ``defrag`` setting is ``madvise`` (this project's machines),
    the first touch of each 2 MB page of a fresh row store may compact
    memory in the page-fault handler: up to 1.3 s of system time per blocked
    fit, for the same user time (docs/decisions/31b01).  The one-vs-one
    caches keep NumPy's pages: one pair at a time was faster on huge pages
    (fewer TLB misses; 10-class MNIST 5000, decision 31b01).  Small arrays
    keep ``np.empty``."""
    import mmap

    shape = tuple(int(s) for s in shape)
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape)) * dtype.itemsize
    if nbytes < (4 << 20):
        return np.empty(shape, dtype)
    return np.frombuffer(mmap.mmap(-1, nbytes), dtype=dtype).reshape(shape)


def n_slots_for(n, cache_size_mb, itemsize=8):
    """Number of full rows of length n (values of ``itemsize`` bytes) that
    fit in ``cache_size_mb`` MB (at least 2, at most n)."""
    k = int(cache_size_mb * (1 << 20) // (itemsize * max(n, 1)))
    return int(min(max(k, 2), max(n, 1)))


def new_cache(n, cache_size_mb, row_len=None, dtype=np.float64, shared=None, pool=None,
              reserve=0):
    """Arrays of an empty cache for row keys ``0..n-1``; rows hold
    ``row_len`` values (default n: full rows; fewer for rows against a
    subset, :func:`get_row_against`) of ``dtype`` (float64 or float32);
    ``shared`` as in :func:`cache_from_buffer`.  ``pool``: a
    :class:`svmlab.kernels._pool.BufferPool` the rows' memory comes from
    and returns to when the cache's ``rows`` array is garbage (a fresh
    buffer gets ``reserve`` bytes at least); None: ``np.empty``."""
    dt = check_cache_dtype(dtype)
    row_len = n if row_len is None else row_len
    m = min(n_slots_for(row_len, cache_size_mb, dt.itemsize), max(n, 1))
    if pool is None:
        rows = np.empty((m, row_len), dtype=dt)
    else:
        rows = pool.empty((m, row_len), dt, reserve=reserve)
    return cache_from_buffer(rows, n, shared)


def cache_from_buffer(rows, n, shared=None):
    """An empty cache for row keys ``0..n-1`` whose slots are the rows of the
    given (slots x row_len) float64 or float32 array -- for instance a view
    of another cache's memory, which must then not be used meanwhile.
    ``shared``: a :class:`SharedRows` of the same dtype whose store serves
    the misses (None: none)."""
    m = rows.shape[0]
    meta = np.zeros(5, np.int64)
    meta[_HEAD] = -1
    meta[_TAIL] = -1
    if shared is None:
        shared = no_shared_rows(rows.dtype)
    return CacheData(rows, np.full(n, -1, np.int64), np.full(m, -1, np.int64),
                     np.full(m, -1, np.int64), np.full(m, -1, np.int64), meta, shared)


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
    return slot_of_row(cd.slot_of, cd.owner, cd.prev, cd.next, cd.meta, cd.rows.shape[0], i)


@njit(cache=True)
def slot_of_row(slot_of, owner, prev, nxt, meta, n_slots, i):
    """:func:`_slot` on the LRU arrays of a :class:`CacheData` (or
    :class:`SharedRows`) holding ``n_slots`` rows.  Solver loops call this
    one: a call that takes the cache's named tuple pays a reference-count
    update per array in it (31 with the store's placeholder) on entry and
    exit, more than the LRU work (decision record 33s01)."""
    s = slot_of[i]
    if s >= 0:
        lru_hit(prev, nxt, meta, s)
        return s, True
    meta[_MISSES] += 1
    if meta[_USED] < n_slots:
        s = meta[_USED]
        meta[_USED] += 1
    else:
        s = meta[_TAIL]
        # the least recently used slot out of the list
        p = prev[s]
        q = nxt[s]
        if p >= 0:
            nxt[p] = q
        else:
            meta[_HEAD] = q
        if q >= 0:
            prev[q] = p
        else:
            meta[_TAIL] = p
        prev[s] = -1
        nxt[s] = -1
        slot_of[owner[s]] = -1
    owner[s] = i
    slot_of[i] = s
    # s to the front, the most recently used
    h = meta[_HEAD]
    prev[s] = -1
    nxt[s] = h
    if h >= 0:
        prev[h] = s
    meta[_HEAD] = s
    if meta[_TAIL] < 0:
        meta[_TAIL] = s
    return s, False


@njit(cache=True)
def get_row(kd, cd, i):
    """Row ``K(x_i, X)``: a view into the cache, valid until the next miss
    evicts it (the two most recently fetched rows are never evicted by the
    next fetch)."""
    s, hit = slot_of_row(cd.slot_of, cd.owner, cd.prev, cd.next, cd.meta, cd.rows.shape[0], i)
    r = cd.rows[s]
    if hit:
        return r
    if cd.shared.gmap.shape[0] == 0:
        kernel_row(kd, i, r)
    else:
        row_from_store(cd.shared, i, r)
    return r


@njit(cache=True)
def row_from_store(sh, i, r):
    """The pair's row i, ``r = [K(x_g, X_a), K(x_g, X_b)]`` (g = gmap[i]),
    from the store's class blocks; a missing block is computed into the
    store (evicting the least recently used), counted in ``sh.counts``.
    A miss of a cache with a store (``sh = cd.shared``) fills its slot's
    row with this (:func:`get_row`, and the dual loop, which does its own
    slot lookup)."""
    g = sh.gmap[i]
    k = sh.coff.shape[0] - 1
    o = 0
    for t in range(2):
        c = sh.cls[t]
        lo = sh.coff[c]
        m = sh.coff[c + 1] - lo
        s, hit = slot_of_row(sh.slot_of, sh.owner, sh.prev, sh.next, sh.meta, sh.rows.shape[0],
                             g * k + c)
        blk = sh.rows[s, :m]
        if hit:
            sh.counts[2] += 1
        else:
            # K(x_g, X_c): the arithmetic of the pair's own row over the
            # same rows (kernel_row_range, called directly: each call level
            # taking a KernelData costs its reference counts, 33s01)
            kernel_row_range(sh.kd, g, lo, lo + m, blk)
            sh.counts[0] += m
            sh.counts[1] += 1
        r[o:o + m] = blk
        o += m


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
    if cd.shared.gmap.shape[0] == 0:
        kernel_row_subset(kd, i, idx, m, r)
    else:
        # with a shared store both class blocks whole (the other pairs need
        # all of them; at most the values of the pair's full row)
        row_from_store(cd.shared, i, r)
    return r


@njit(cache=True, inline="always")
def _block_misses(cd, rows, m):
    """The rows of ``rows[:m]`` a block must compute, in the order wanted,
    each once: the first ones not in the cache, at most ``n_slots - 2`` of
    them (so that a block never evicts its own rows nor the two rows used
    last before it).  Returns ``(miss, k)``: compute ``miss[:k]``."""
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
    return miss, k


@njit(cache=True)
def _store_block(cd, miss, k, blk):
    """Store the computed block ``blk`` (row a for ``miss[a]``) into cache
    slots, the last row first, so that ``miss[0]`` ends most recently used.
    Returns ``k``."""
    for a in range(k - 1, -1, -1):
        s, hit = _slot(cd, miss[a])
        cd.rows[s, :] = blk[a]
    return k


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
    miss, k = _block_misses(cd, rows, m)
    if k == 0:
        return 0
    if cd.shared.gmap.shape[0] > 0:
        # served from the shared store (its missing rows one by one)
        for a in range(k - 1, -1, -1):
            s, hit = _slot(cd, miss[a])
            row_from_store(cd.shared, miss[a], cd.rows[s])
        return k
    blk = np.empty_like(cd.rows[:k])
    kernel_block(kd, miss[:k], blk)
    return _store_block(cd, miss, k, blk)


@njit(cache=True)
def fill_block_gemm(kd, cd, rows, m):
    """:func:`fill_block` whose block of dense float64 rows is one DGEMM
    (:func:`svmlab.kernels._blocks.kernel_block_gemm`) instead of one DGEMV
    per row: for the rows a solver reads once, together, before it steps
    (the kernel rows of a feasible start, LIBSVM's initial gradient).  The
    values may differ from :func:`get_row`'s in the last bits (the GEMM's
    summation order; within ``d u64 sum_k |x_ak x_jk|``), as the
    full-kernel path's do; any other input or dtype gets exactly
    :func:`fill_block`'s values.  Same cache bound, order and counts as
    :func:`fill_block`; returns the number of rows computed."""
    if cd.shared.gmap.shape[0] > 0:
        return fill_block(kd, cd, rows, m)
    miss, k = _block_misses(cd, rows, m)
    if k == 0:
        return 0
    blk = np.empty_like(cd.rows[:k])
    kernel_block_gemm(kd, miss[:k], blk)
    return _store_block(cd, miss, k, blk)


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


def full_kernel_fits(n, cache_size_mb, itemsize=8):
    """Whether the whole (n, n) kernel matrix of ``itemsize``-byte values
    fits in ``cache_size_mb`` MB (the full-kernel path, :func:`full_cache`)."""
    return n * n * itemsize <= cache_size_mb * (1 << 20)


def full_cache(kernel, dtype=np.float64):
    """A cache holding every row of ``kernel``'s matrix from the start: the
    matrix is computed at once (:func:`svmlab.kernels._blocks.full_matrix`:
    one GEMM for dense input) and becomes the cache's rows, row i in slot
    i.  Every later request is a hit, so the LRU functions, the subset rows
    of a shrinking solver and the block fetches all serve the rows of the
    matrix (nothing is evicted, nothing recomputed).  The n rows count as n
    misses (``kernel_evaluations = n * n``).  Memory: the matrix, ``n * n``
    values of ``dtype``; the caller checks it fits (:func:`full_kernel_fits`)."""
    from ._blocks import full_matrix

    n = kernel.n_samples
    K = full_matrix(kernel, check_cache_dtype(dtype))
    cd = cache_from_buffer(K, n)
    if n == 0:
        return cd
    order = np.arange(n, dtype=np.int64)
    cd.slot_of[:] = order
    cd.owner[:] = order
    # LRU list from slot 0 (most recent) to slot n - 1 (least recent)
    cd.prev[:] = order - 1
    cd.next[:] = order + 1
    cd.next[n - 1] = -1
    cd.meta[_HEAD] = 0
    cd.meta[_TAIL] = n - 1
    cd.meta[_USED] = n
    cd.meta[_MISSES] = n
    return cd


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
    full : bool, default=False
        The full-kernel path: compute the whole kernel matrix now and keep
        it as the cache (:func:`full_cache`); a ValueError when it does not
        fit ``cache_size`` (:func:`full_kernel_fits`).  Not with a one-vs-one
        shared store.

    Attributes
    ----------
    data : CacheData
        The arrays a numba loop passes to :func:`get_row`.
    """

    def __init__(self, kernel: Kernel, cache_size=40.0, dtype=np.float64, full=False):
        self.kernel = kernel
        self.dtype = check_cache_dtype(dtype)
        self.full = bool(full)
        if self.full:
            n = kernel.n_samples
            if not full_kernel_fits(n, cache_size, self.dtype.itemsize):
                raise ValueError(
                    f"the full {n} x {n} kernel matrix ({self.dtype.name}) needs "
                    f"{n * n * self.dtype.itemsize / 2**20:.1f} MB, more than "
                    f"cache_size={cache_size} MB")
            self.shared = None
            self.cache_size = cache_size
            self.data = full_cache(kernel, self.dtype)
            return
        if self.dtype == np.float32:
            kernel.ensure_float32()
        # a one-vs-one pair's kernel carries the multiclass fit's shared
        # store (SharedRowStore.attach): misses are then served from it, and
        # this cache gets the store's pair share of the memory
        self.shared = None
        self._pool, self._reserve = None, 0
        link = getattr(kernel, "shared_rows", None)
        if link is not None:
            store, (a, b) = link
            if store.dtype == self.dtype:
                self.shared = store.view(a, b)
                cache_size = min(float(cache_size), store.pair_cache_mb)
                # the rows in the memory the store's earlier pair caches
                # used (at most pair_cache_bytes; decision 32j01: no fresh
                # pages per pair)
                self._pool, self._reserve = store.pool, store.pair_cache_bytes
        self.cache_size = cache_size
        self.data = new_cache(kernel.n_samples, cache_size, dtype=self.dtype,
                              shared=self.shared, pool=self._pool, reserve=self._reserve)

    @property
    def n_slots(self):
        return self.data.rows.shape[0]

    def row(self, i):
        """Row i (a read-only copy is not made; do not write into it)."""
        return get_row(self.kernel.data, self.data, int(i))

    def fill(self, rows, gemm=False):
        """Cache the rows ``rows`` (the missing ones as one kernel block,
        :func:`fill_block`; with ``gemm=True`` dense float64 rows as one
        DGEMM, :func:`fill_block_gemm`); returns how many were computed."""
        rows = np.ascontiguousarray(np.asarray(rows, dtype=np.int64).ravel())
        if rows.size and (rows.min() < 0 or rows.max() >= self.kernel.n_samples):
            raise IndexError("rows must be training indices")
        fill = fill_block_gemm if gemm else fill_block
        return int(fill(self.kernel.data, self.data, rows, rows.shape[0]))

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
        """Kernel values computed so far through this cache (misses x n);
        with a shared store, the values of the class blocks this cache had
        the store compute (blocks the store held cost none)."""
        if self.shared is not None:
            return int(self.shared.counts[0])
        return self.misses * self.kernel.n_samples

    def clear(self):
        if self.full:
            self.data = full_cache(self.kernel, self.dtype)
            return
        self.data = None  # the old rows go back to the pool first
        self.data = new_cache(self.kernel.n_samples, self.cache_size, dtype=self.dtype,
                              shared=self.shared, pool=self._pool, reserve=self._reserve)


class SharedRowStore:
    """One LRU store of kernel values shared by the pairs of a one-vs-one
    multiclass fit (:mod:`svmlab._multiclass`), entries *class blocks*
    ``K(x_g, X_c)`` (see :class:`SharedRows`).  The pair (a, b) needs, for
    its example g of class a, the blocks of classes a and b; the block of a
    serves all k-1 pairs of class a.  So the store never computes more
    kernel values than the pairs fitted separately (each block is at most
    what the pair's own row would compute of it), and computes up to half
    as many when rows recur across pairs (a store of full rows ``K(x_g,
    X)`` would compute k/2 times what one pair needs of the row:
    docs/decisions/26s08-shared-class-block-store.md).

    Parameters
    ----------
    kernel : Kernel
        The kernel over the full training set ordered by class.
    class_offsets : (k+1,) int
        Class c is the rows ``class_offsets[c]:class_offsets[c+1]``.
    cache_size : float
        MB for the store AND the pair caches together: each pair's
        :class:`KernelCache` is limited to ``pair_cache_mb = pair_fraction
        * cache_size`` (1/4: one pair cache lives at a time) and
        the store takes the rest.  A pair cache hit costs nothing, a store
        hit one copy of the row, a miss the kernel values.
    dtype : the cached values' dtype (the estimator's ``cache_dtype_``).

    Use :meth:`attach` on a pair's :class:`Kernel` before its solver makes
    its cache; :class:`KernelCache` picks the store up (a cache of another
    dtype ignores it).  Served through the store: :func:`get_row`,
    :func:`get_row_subset` (which then gets both blocks whole) and
    :func:`fill_block`.  Kernel values a solver computes outside its row
    cache (SMO's parked-phase rows against a layout, :func:`get_row_against`;
    decomposition kernel blocks and the blocked decomposition's own row
    store) bypass the store.

    Values: a block is :func:`svmlab.kernels._rows.kernel_row_against` over
    the class's rows, the arithmetic of the pair's own row over the same
    rows: sparse and bit-packed entries are bit for bit those of the pair
    computing alone, dense ones those of a GEMV over the class's rows
    instead of the pair's (in OpenBLAS the same per-entry sums; the tests
    allow 1e-14 relative) -- and a shrinking solver's miss
    (:func:`get_row_subset`) gets the GEMV values instead of the sequential
    per-entry sums of the pair alone.
    """

    pair_fraction = 0.25

    def __init__(self, kernel: Kernel, class_offsets, cache_size=200.0, dtype=np.float64):
        self.kernel = kernel
        self.dtype = check_cache_dtype(dtype)
        if self.dtype == np.float32:
            kernel.ensure_float32()
        self.coff = np.ascontiguousarray(class_offsets, dtype=np.int64)
        k = len(self.coff) - 1
        if k < 1 or self.coff[0] != 0 or self.coff[-1] != kernel.n_samples \
                or np.any(np.diff(self.coff) <= 0):
            raise ValueError("class_offsets must rise strictly from 0 to n_samples")
        self.pair_cache_mb = float(cache_size) * self.pair_fraction
        width = int(np.diff(self.coff).max())
        N = kernel.n_samples
        mb = float(cache_size) - self.pair_cache_mb
        m = int(min(max(int(mb * (1 << 20) // (self.dtype.itemsize * width)), 2), N * k))
        self._lru = cache_from_buffer(np.empty((m, width), dtype=self.dtype), N * k)
        self._views = []
        self._pool = None
        self._pair_bytes = None
        self._xpools = {}

    @property
    def pair_cache_bytes(self):
        """The largest pair cache's rows in bytes: ``min(n_slots, n) * n *
        itemsize`` over the pairs (n the pair's rows) at ``pair_cache_mb``;
        the size of the buffer :attr:`pool` hands every pair cache."""
        if self._pair_bytes is None:
            sizes = np.diff(self.coff)
            n = (sizes[:, None] + sizes[None, :])[np.triu_indices(len(sizes), 1)]
            it = self.dtype.itemsize
            most = 0
            for v in np.unique(n):
                most = max(most, min(n_slots_for(int(v), self.pair_cache_mb, it), int(v))
                           * int(v) * it)
            self._pair_bytes = int(most)
        return self._pair_bytes

    @property
    def pool(self):
        """The memory of the pair caches made through this store
        (:class:`svmlab.kernels._pool.BufferPool`): a pair's cache rows go
        back to it when the pair's run is dropped and serve the next pair,
        so a store's pairs, one after the other (one worker's), fault in
        one buffer of :attr:`pair_cache_bytes` instead of one per pair.
        Keeps at most that one buffer free; released with the store (the
        fit's run)."""
        if self._pool is None:
            self._pool = BufferPool(self.pair_cache_bytes)
        return self._pool

    def _largest_pair(self):
        sizes = np.sort(np.diff(self.coff))
        return int(sizes[-1] + sizes[-2]) if len(sizes) > 1 else int(sizes[-1])

    def _rows_pool(self, key, itemsize, d):
        """The pool of the pairs' copies of X (``key``: "x" float64, "x32"
        float32): one buffer of the largest pair's ``n d`` values kept."""
        pool = self._xpools.get(key)
        if pool is None:
            pool = self._xpools[key] = BufferPool(self._largest_pair() * d * itemsize)
        return pool

    def pair_rows(self, X, a, b):
        """Pair (a, b)'s training rows, class a's then class b's, of the
        class-ordered dense float64 C-contiguous ``X`` (``class_offsets``'
        order), as a new C-contiguous array in memory the store's earlier
        pairs used (a :class:`~svmlab.kernels._pool.BufferPool` keeping one
        buffer of the largest pair's size): a worker thread's pairs then do
        not map, fault in and unmap a fresh heap each (decision 32j01).  The
        array is the pair :class:`Kernel`'s ``X`` itself (``Kernel`` keeps a
        C-contiguous float64 array as it is), so its memory is in use as
        long as that kernel is alive."""
        c = self.coff
        a0, a1, b0, b1 = int(c[a]), int(c[a + 1]), int(c[b]), int(c[b + 1])
        na = a1 - a0
        d = X.shape[1]
        out = self._rows_pool("x", 8, d).empty((na + b1 - b0, d), np.float64,
                                               reserve=self._largest_pair() * d * 8)
        out[:na] = X[a0:a1]
        out[na:] = X[b0:b1]
        return out

    def pair_float32(self, kernel):
        """``kernel.ensure_float32()`` for a pair's kernel over dense rows,
        with the float32 copy (``data.dense32``, the same values: one
        float64-to-float32 cast) in a buffer of the store's earlier pairs
        (see :meth:`pair_rows`); other inputs as ``ensure_float32``.
        Returns ``kernel``."""
        d = kernel.data
        if d.sparse or d.binary or d.ktype == PRECOMPUTED or d.dense.shape[0] == 0 \
                or d.dense32.shape[0] == d.dense.shape[0]:
            return kernel.ensure_float32()
        n, f = d.dense.shape
        x32 = self._rows_pool("x32", 4, f).empty((n, f), np.float32,
                                                 reserve=self._largest_pair() * f * 4)
        x32[...] = d.dense
        kernel.data = d._replace(dense32=x32)
        return kernel

    @property
    def n_slots(self):
        return self._lru.rows.shape[0]

    @property
    def n_classes(self):
        return len(self.coff) - 1

    def view(self, a, b):
        """A :class:`SharedRows` for the pair of classes ``(a, b)``, whose
        examples are the rows of class a then those of class b (with its own
        counts)."""
        a, b = int(a), int(b)
        k = self.n_classes
        if not (0 <= a < k and 0 <= b < k and a != b):
            raise ValueError(f"a pair of two different classes in [0, {k}) expected, "
                             f"got ({a}, {b})")
        # positions of class a's rows, then class b's, in the class-ordered set
        na = int(self.coff[a + 1] - self.coff[a])
        gmap = np.arange(na + int(self.coff[b + 1] - self.coff[b]), dtype=np.int64)
        gmap[:na] += self.coff[a]
        gmap[na:] += self.coff[b] - na
        c = self._lru
        v = SharedRows(c.rows, c.slot_of, c.owner, c.prev, c.next, c.meta, gmap,
                       self.kernel.data, np.array([a, b], np.int64), self.coff,
                       np.zeros(3, np.int64))
        self._views.append(v)
        return v

    def attach(self, pair_kernel, a, b):
        """Make the caches built on ``pair_kernel`` (the rows of class a
        then class b) use this store."""
        n = int(self.coff[a + 1] - self.coff[a] + self.coff[b + 1] - self.coff[b])
        if pair_kernel.n_samples != n:
            raise ValueError(f"the pair's kernel has {pair_kernel.n_samples} rows; classes "
                             f"{a} and {b} have {n}")
        pair_kernel.shared_rows = (self, (int(a), int(b)))
        return pair_kernel

    @property
    def kernel_evaluations(self):
        """Kernel values computed into the store so far (all pairs)."""
        return int(sum(int(v.counts[0]) for v in self._views))

    @property
    def blocks_computed(self):
        return int(sum(int(v.counts[1]) for v in self._views))

    @property
    def hits(self):
        return int(self._lru.meta[_HITS])

    @property
    def misses(self):
        return int(self._lru.meta[_MISSES])
