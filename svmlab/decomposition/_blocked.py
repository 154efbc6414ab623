"""Blocked decomposition: the ThunderSVM / cuML scheme on a CPU.

Problem (the SVC dual of :mod:`svmlab._base`, LIBSVM's minimisation form)::

    min_alpha  1/2 sum_ij alpha_i alpha_j y_i y_j K_ij - sum_i alpha_i
    s.t.       0 <= alpha_i <= C_i,   sum_i y_i alpha_i = 0

with ``G = K (alpha * y)`` kept for every sample and ``v = y - G`` (so
``v_i = -y_i grad_i``, the quantity of :mod:`svmlab._kkt`).

One outer step (Wen et al., ThunderSVM, JMLR 2018; cuML's SMO solver; the
Osuna/SVMlight family with a modern engine):

1. **Working set.**  Rank I_up by ``v`` (largest first) and I_low by ``v``
   (smallest first), LIBSVM's first-order rule, and take examples from the
   two lists alternately.  The first step takes q of them; every later step
   keeps the half chosen last time (with its kernel rows) and adds q/2 new
   ones (ThunderSVM keeps the newer half, so each example stays for two
   consecutive steps).
2. **Rows.**  ``K[B_new, :]`` for the new examples whose rows are not
   already held, as one kernel block (:func:`row_block`; float32 by
   default, ``cache_dtype``), into a row store of ``cap`` full rows
   (:class:`RowStore`).  Decision: unlike ThunderSVM, which keeps exactly
   the working set's rows, the store keeps as many rows as ``cache_size``
   allows and evicts the least recently used: on a CPU the rows are the
   cost, and support vectors re-enter the working set often.  The store
   never holds fewer rows than the working set (``q`` rows even when
   ``cache_size`` is smaller: that is the stated bound of one block), and
   it is filled through a scratch block of at most ``SCRATCH_ROWS`` rows.
3. **Sub-problem.**  :func:`block_smo`: SMO with LIBSVM's WSS2 pair
   selection (Fan, Chen and Lin 2005) on ``K[B, B]`` (gathered from the
   rows, float64), the other multipliers fixed.  Decision (the stopping
   rule): ThunderSVM's, the sub-problem stops when its own maximal
   violation is ``<= max(tol, INNER_FRACTION * gap)`` (``gap`` the outer
   violation ``m - M``) or after ``INNER_STEPS_PER_EXAMPLE * q`` pair
   steps.  The first pair is the global maximal violating pair's WSS2
   partner, so every outer step with ``gap > tol`` moves.
4. **Gradient.**  ``G += K[B_changed, :]^T (delta alpha * y)``, only the
   multipliers that changed, accumulated in float64 from the stored rows
   (:func:`add_changed_rows`).
5. **Stop** when ``m - M <= tol`` over all samples
   (:func:`svmlab._kkt.kkt_violation`); a step in which no multiplier moves
   while ``m - M > tol`` is a stall (``converged_ = False``, warning).

The readable one-screen version of the same loop is
:func:`svmlab.reference.blocked.blocked_decomposition` (NumPy only; a test
oracle).
"""

from __future__ import annotations

import numpy as np
from .._jit import njit

from .._kkt import in_low, in_up
from .._wss2 import gain, takes_j
from ..kernels.cache import plain_pages
from ..smo._pairstep import pair_step_box

__all__ = ["RowStore", "lru_slots", "block_smo", "add_changed_rows", "select_working_set",
           "select_working_set_np", "gather_block", "gather_block_sorted", "scatter_rows",
           "row_block", "INNER_FRACTION",
           "INNER_STEPS_PER_EXAMPLE", "SCRATCH_ROWS", "LOWDIM_FEATURES", "LOWDIM_MIN_ROWS",
           "LOWDIM_WS", "lowdim_working_set_size", "prefers_blocked_lowdim"]

#: the sub-problem stops at ``max(tol, INNER_FRACTION * outer gap)`` (ThunderSVM)
INNER_FRACTION = 0.1
#: and after at most this many pair steps per working-set example
INNER_STEPS_PER_EXAMPLE = 10
#: rows computed per kernel block when filling scattered store slots
SCRATCH_ROWS = 256


#: feature counts (inclusive) of the "low-dimensional" rule below
LOWDIM_FEATURES = (16, 32)
#: fewest rows (of the largest one-vs-one pair) for which that rule applies
LOWDIM_MIN_ROWS = 3000
#: the working-set size the rule gives
LOWDIM_WS = 256


# --------------------------------------------------------------------------
# low-dimensional data: which solver and which working set

def lowdim_working_set_size(n, d, sparse=False):
    """The blocked decomposition's working-set size for ``n`` rows of dense
    data with ``d`` features when the data is low-dimensional
    (``LOWDIM_FEATURES[0] <= d <= LOWDIM_FEATURES[1]``): ``LOWDIM_WS``
    (256, at most n); None otherwise, and for sparse input (not measured;
    the default of 1024 stands).

    Reason: with some twenty features a kernel entry costs a few
    nanoseconds (one short dot product and an exp), so the outer step's
    other costs decide: gathering ``K[B, B]`` (float64) from the stored
    rows, the ``K[B_new, B]`` blocks of rows not held, and the sub-problem's
    pair steps, all of which grow as ``q**2`` per outer step, while a
    smaller q computes about as many rows.  On high-dimensional data
    (MNIST, Fashion-MNIST) rows dominate and 1024 was the fastest.  The
    measurements behind both rules, and the range of shapes the rule
    covers: docs/decisions/26d08 and 30w01."""
    n, d = int(n), int(d)
    if sparse or n < 2 or not (LOWDIM_FEATURES[0] <= d <= LOWDIM_FEATURES[1]):
        return None
    return max(2, min(LOWDIM_WS, n))


def prefers_blocked_lowdim(n_pair, X):
    """Whether a C-SVC fit (named kernel, the compiled row path) on ``X``
    whose largest one-vs-one pair has ``n_pair`` rows should take the
    blocked decomposition (with :func:`lowdim_working_set_size`) even where
    the pair's kernel matrix fits ``cache_size``: dense ``X`` with
    ``LOWDIM_FEATURES`` features and at least ``LOWDIM_MIN_ROWS`` rows in
    the pair.  There SMO's per-step work over all n gradients costs more
    than the rows it saves (waveform 5000, twonorm 7400:
    docs/decisions/30w01).  Sparse input and narrower or wider data keep
    ``choose_solver``'s other rules."""
    import scipy.sparse as sp

    if sp.issparse(X) or getattr(X, "ndim", 2) != 2:
        return False
    return (int(n_pair) >= LOWDIM_MIN_ROWS
            and lowdim_working_set_size(n_pair, X.shape[1]) is not None)


# --------------------------------------------------------------------------
# kernel rows

def row_block(kernel, rows, dtype, out=None):
    """``K[rows, :]`` as one block of the given dtype (the kernel layer's
    :meth:`svmlab.kernels.Kernel.block`: one GEMM for dense input)."""
    return kernel.block(rows, dtype=dtype, out=out)


class RowStore:
    """Full kernel rows ``K(x_i, X)`` of ``cap`` samples, least recently
    used evicted first.  ``buf`` (cap, n) in ``dtype``; ``slot_of[i]`` the
    slot of sample i (-1: not held); ``owner[s]`` the sample in slot s;
    ``stamp[s]`` the outer step that last used it.  ``cap`` rows take
    ``cap * n * itemsize`` bytes: ``cache_size`` MB, but at least the
    working set ``q``."""

    def __init__(self, kernel, n, cache_mb, q, dtype):
        self.kernel = kernel
        self.dtype = np.dtype(dtype)
        item = self.dtype.itemsize
        cap = int(cache_mb * (1 << 20) // (item * max(n, 1)))
        self.cap = int(min(max(cap, q), n))
        self.buf = plain_pages((self.cap, n), self.dtype)  # no huge pages
        self.slot_of = np.full(n, -1, np.int64)
        self.owner = np.full(self.cap, -1, np.int64)
        self.stamp = np.full(self.cap, -1, np.int64)
        self.scratch = None
        self.rows_computed = 0  # full rows computed
        self.block_entries = 0  # entries of the K[B_missing, B] blocks

    def fetch(self, B, step):
        """Make the rows of every sample of ``B`` present; return their slots
        and the number of rows computed.  Plain LRU
        (docs/decisions/26d08-blocked-decomposition.md)."""
        slots = self.slot_of[B]
        miss = np.flatnonzero(slots < 0)
        if len(miss):
            k = len(miss)
            # least recently used first (empty slots have stamp -1, and
            # form the tail of the store: a new store fills them in order,
            # as one contiguous run computed in place)
            take = lru_slots(self.stamp, slots, k)
            old = self.owner[take]
            self.slot_of[old[old >= 0]] = -1
            new_rows = B[miss]
            self._compute(new_rows, take)
            self.owner[take] = new_rows
            self.slot_of[new_rows] = take
            slots[miss] = take
            self.rows_computed += k
        self.stamp[slots] = step
        return slots, len(miss)

    def block_BB(self, B, step, out):
        """``K[B, B]`` into ``out`` (float64, (q, q)): gathered from the
        stored rows where a row is held, the other rows computed as one
        kernel block ``K[B_missing, B]`` (q columns, not n: a sample whose
        multiplier does not change never needs its full row).  Returns the
        slots of B (-1 where no row is held)."""
        slots = self.slot_of[B]
        have = np.flatnonzero(slots >= 0)
        if len(have):
            perm = np.argsort(B, kind="stable")
            gather_block_sorted(self.buf, slots[have], have, B[perm], perm, out)
            self.stamp[slots[have]] = step
        miss = np.flatnonzero(slots < 0)
        if len(miss):
            out[miss] = self.kernel.block(B[miss], B, dtype=self.dtype)
            self.block_entries += len(miss) * len(B)
        return slots

    def block_BB_kept(self, B, h, step, out):
        """:meth:`block_BB` when ``out[:h, :h]`` already holds ``K[B[:h],
        B[:h]]`` (the kept half of the working set, moved there from the
        previous outer step's block): only the rows ``h:`` of the new
        samples are gathered or computed, and ``out[:h, h:]`` is their
        mirror (``K`` symmetric).  A quarter of the gather of a half-kept
        set, and the kept samples never need a row.  ``out`` may be float64
        or the store's dtype.  Returns the slots of ``B[h:]``."""
        m = len(B)
        Bn = B[h:]
        slots = self.slot_of[Bn]
        have = np.flatnonzero(slots >= 0)
        if len(have):
            perm = np.argsort(B, kind="stable")
            gather_block_sorted(self.buf, slots[have], have + h, B[perm], perm, out)
            self.stamp[slots[have]] = step
        miss = np.flatnonzero(slots < 0)
        if len(miss):
            out[h + miss, :m] = self.kernel.block(Bn[miss], B, dtype=self.dtype)
            self.block_entries += len(miss) * m
        if h:
            out[:h, h:m] = out[h:m, :h].T
        return slots

    def _compute(self, rows, slots):
        """Rows ``rows`` into ``buf[slots]`` (slots sorted): runs of
        consecutive slots are written in place, one block each; the rest go
        through a scratch block."""
        k = len(rows)
        start = 0
        while start < k:
            end = start + 1
            while end < k and slots[end] == slots[end - 1] + 1:
                end += 1
            if end - start >= 16:
                for a in range(start, end, 4 * SCRATCH_ROWS):
                    b = min(end, a + 4 * SCRATCH_ROWS)
                    row_block(self.kernel, rows[a:b], self.dtype,
                              out=self.buf[slots[a]:slots[a] + (b - a)])
                start = end
                continue
            # gather short runs into one scratch block
            idx = []
            while start < k and len(idx) < SCRATCH_ROWS:
                end = start + 1
                while end < k and slots[end] == slots[end - 1] + 1:
                    end += 1
                if end - start >= 16:
                    break
                idx.extend(range(start, end))
                start = end
            idx = np.asarray(idx, np.int64)
            n = self.buf.shape[1]
            if self.scratch is None or self.scratch.shape[0] < len(idx):
                # at most SCRATCH_ROWS + 15 rows (short runs are < 16)
                self.scratch = np.empty((max(len(idx), min(SCRATCH_ROWS, k)), n), self.dtype)
            out = self.scratch[:len(idx)]
            row_block(self.kernel, rows[idx], self.dtype, out=out)
            scatter_rows(out, slots[idx], self.buf)


@njit(cache=True)
def lru_slots(stamp, held, k):
    """The ``k`` least recently used slots (smallest ``stamp``; -1 marks an
    empty slot) that hold none of the rows ``held`` (slots, -1 for rows not
    held), in increasing slot order; ties by slot number, so an empty store
    hands out ``0..k-1``, a contiguous run.

    A counting selection over the stamps (outer-step numbers): O(cap + the
    largest stamp) per call, no sort of the store (NumPy's argpartition
    over a store of mostly equal stamps took about 1 ms a call,
    docs/decisions/32b01).  With stamps far beyond the store's size, a
    stable sort instead.  The caller guarantees at least ``k`` slots that
    are not pinned.

    Parameters
    ----------
    stamp : int64 array (cap,)
        Outer step of each slot's last use, -1 where empty.
    held : int64 array (m,)
        Slots to keep (entries < 0 ignored).
    k : int
        How many slots to hand out.
    """
    cap = stamp.shape[0]
    pinned = np.zeros(cap, np.bool_)
    for s in held:
        if s >= 0:
            pinned[s] = True
    take = np.empty(k, np.int64)
    mx = -1
    for s in range(cap):
        if stamp[s] > mx:
            mx = stamp[s]
    if mx > 4 * cap + 4096:
        order = np.argsort(stamp, kind="mergesort")
        m = 0
        for s in order:
            if m == k:
                break
            if not pinned[s]:
                take[m] = s
                m += 1
        return np.sort(take[:m])
    cnt = np.zeros(mx + 2, np.int64)
    for s in range(cap):
        if not pinned[s]:
            cnt[stamp[s] + 1] += 1
    # thr: the stamp of the k-th slot in (stamp, slot) order
    acc = 0
    thr = mx
    for t in range(mx + 2):
        if acc + cnt[t] >= k:
            thr = t - 1
            break
        acc += cnt[t]
    m = 0
    left = k - acc  # slots taken at the threshold stamp itself
    for s in range(cap):
        if pinned[s]:
            continue
        st = stamp[s]
        if st < thr:
            take[m] = s
            m += 1
        elif st == thr and left > 0:
            take[m] = s
            m += 1
            left -= 1
    return take[:m]


@njit(cache=True)
def scatter_rows(src, slots, buf):
    """``buf[slots[k]] = src[k]`` (row copies into scattered store slots).

    Parameters
    ----------
    src : float32 or float64 array (k, n)
        Freshly computed rows.
    slots : int64 array (k,)
        Their slots in the store.
    buf : array (cap, n) of the same dtype
        The row store, written in place.
    """
    for k in range(slots.shape[0]):
        buf[slots[k], :] = src[k]


@njit(cache=True)
def gather_block(buf, slots, at, B, out):
    """``out[at[k], c] = buf[slots[k], B[c]]``: the rows of ``K[B, B]`` whose
    full kernel rows are stored, in float64.

    Parameters
    ----------
    buf : float32 or float64 array (cap, n)
        The row store.
    slots : int64 array (k,)
        Slots of the stored rows.
    at : int64 array (k,)
        Which row of ``out`` each one fills (its position in B).
    B : int64 array (q,)
        The working set (sample indices).
    out : float64 array (q, q)
        Filled in place (the other rows are left as they are).
    """
    q = B.shape[0]
    for k in range(slots.shape[0]):
        r = buf[slots[k]]
        o = out[at[k]]
        for c in range(q):
            o[c] = r[B[c]]


@njit(cache=True)
def gather_block_sorted(buf, slots, at, Bs, perm, out):
    """:func:`gather_block` with the columns read in increasing order:
    ``out[at[k], perm[c]] = buf[slots[k], Bs[c]]`` where ``Bs = B[perm]``
    is B sorted.  The same values in the same places; a stored row is
    then read front to back (the hardware prefetcher follows it) and the
    scattered writes land in the (q,) row of ``out``, which stays in the
    first-level cache: twice as fast as the reads in B's order on rows of
    5000 float32 (docs/decisions/32b01).

    Parameters
    ----------
    buf : float32 or float64 array (cap, n)
        The row store.
    slots : int64 array (k,)
        Slots of the stored rows.
    at : int64 array (k,)
        Which row of ``out`` each one fills (its position in B).
    Bs : int64 array (q,)
        The working set's samples, sorted.
    perm : int64 array (q,)
        Position in B of each entry of ``Bs`` (``B[perm] == Bs``).
    out : float64 or float32 array (q, q)
        Filled in place (the other rows are left as they are).
    """
    q = Bs.shape[0]
    for k in range(slots.shape[0]):
        r = buf[slots[k]]
        o = out[at[k]]
        for c in range(q):
            o[perm[c]] = r[Bs[c]]


@njit(cache=True)
def add_changed_rows(buf, slots, coef, G):
    """``G += sum_k coef[k] * buf[slots[k]]`` accumulated in float64: the
    gradient update ``G += K[B_changed, :]^T (delta alpha * y)``.

    Parameters
    ----------
    buf : float32 or float64 array (cap, n)
        The row store.
    slots : int64 array (m,)
        Slots of the rows of the samples whose multiplier changed.
    coef : float64 array (m,)
        ``y_i (alpha_i_new - alpha_i_old)`` of those samples.
    G : float64 array (n,)
        ``K (alpha * y)``, updated in place.
    """
    n = G.shape[0]
    m = slots.shape[0]
    k = 0
    # two rows per pass: half the passes over G
    while k + 1 < m:
        r1 = buf[slots[k]]
        r2 = buf[slots[k + 1]]
        c1 = coef[k]
        c2 = coef[k + 1]
        for j in range(n):
            G[j] += c1 * np.float64(r1[j]) + c2 * np.float64(r2[j])
        k += 2
    if k < m:
        r1 = buf[slots[k]]
        c1 = coef[k]
        for j in range(n):
            G[j] += c1 * np.float64(r1[j])


@njit(cache=True, inline="always")
def _partner(m, i, K, D, v, low):
    """WSS2's ``j`` for ``i`` on the block (:mod:`svmlab._wss2`'s rule: its
    :func:`~svmlab._wss2.gain` and its tie rule :func:`~svmlab._wss2.takes_j`),
    the gain computed for the candidates only: on a block whose candidates
    are a fraction of it, the branch-free :func:`svmlab._wss2.select_j`
    (a division for every row) made the sub-problem 1.6x slower.  ``D`` is
    the diagonal of ``K`` and ``low`` the I_low flags (kept by the caller:
    a strided read of ``K[t, t]`` and the sign test of
    :func:`svmlab._kkt.in_low` per entry otherwise); ``K[i, t]`` is read
    along row i (``K`` symmetric)."""
    Kii = D[i]
    ri = K[i]
    j = -1
    best = np.inf
    for t in range(v.shape[0]):
        if v[t] < m and low[t]:
            g = gain(m, v[t], Kii, D[t], np.float64(ri[t]))
            if takes_j(g, best):
                best = g
                j = t
    return j


@njit(cache=True, inline="always")
def _move_fill(rj, ri, dj, di, v, up, low, vu, vl):
    """``v -= rj dj + ri di``
    (:func:`svmlab.decomposition._smo_engine.pair_update`'s update, the same
    arithmetic, with the rows ``K[j]``, ``K[i]`` read for the columns of the
    symmetric block: contiguous); then ``vu = v`` on I_up, ``-inf``
    elsewhere, and ``vl = v`` on I_low, ``+inf`` elsewhere, from the kept
    flags.  The loop has no branch (selects only), so it vectorises; the
    maximal violating pair is then ``argmax vu`` (first index on ties, as
    :func:`svmlab._kkt.violating_pair`) and ``min vl``.  A loop that kept
    the running maximum itself, or tested each variable's sign and bounds,
    took 1.7 times as long per pair step (docs/decisions/32b01)."""
    for k in range(v.shape[0]):
        vk = v[k] - (rj[k] * dj + ri[k] * di)
        v[k] = vk
        vu[k] = vk if up[k] else -np.inf
        vl[k] = vk if low[k] else np.inf


@njit(cache=True)
def block_smo(K, y, alpha, C, v, eps, max_steps):
    """SMO with WSS2 pair selection on one working set, in place.

    Solves, over the working set B with everything else fixed::

        min_{alpha_B}  1/2 a' Q_BB a - sum_B alpha_i + (fixed part)' a
        s.t.           0 <= alpha_i <= C_i,  sum_B y_i alpha_i = const

    (``Q = y y' * K``), from the feasible ``alpha``, with ``v = y - G``
    restricted to B (the fixed samples' contribution is inside ``v``).

    Each pair step is LIBSVM's maximal violating ``i``, its WSS2 partner
    and Platt's step; the I_up / I_low flags are kept per variable (two
    change per step) and the ``v`` update of one step fills the masked
    copies the next step's choice of i reads (:func:`_move_fill`), so a
    step reads the block along rows only.  The choices and values are those of the plain loop
    (``violating_pair``, ``pair_update``), bit for bit when ``K`` is
    exactly symmetric (docs/decisions/32b01).

    Parameters
    ----------
    K : float64 or float32 array (q, q)
        ``K[B, B]``, symmetric (the pair steps read rows for columns);
        float32 when the row store holds float32 rows (the same values, half
        the bytes to gather and read); the arithmetic is float64 either way.
    y : float64 array (q,)
        Labels +1 / -1.
    alpha : float64 array (q,)
        Multipliers of B, updated in place.
    C : float64 array (q,)
        Their upper bounds C_i.
    v : float64 array (q,)
        ``y_i - G_i`` for i in B, updated in place as alpha moves.
    eps : float
        Stop when the sub-problem's maximal violation ``m - M`` is <= eps.
    max_steps : int
        At most this many pair steps.

    Returns
    -------
    (int, float, bool)
        Pair steps taken, the sub-problem's violation at the start, and
        whether the last selected pair could not move (a stall inside B).
    """
    q = y.shape[0]
    if max_steps <= 0:
        return 0, -1.0, False
    D = np.empty(q)
    up = np.empty(q, np.bool_)
    low = np.empty(q, np.bool_)
    for t in range(q):
        D[t] = K[t, t]
        up[t] = in_up(y[t], alpha[t], C[t])
        low[t] = in_low(y[t], alpha[t], C[t])
    vu = np.empty(q)
    vl = np.empty(q)
    for t in range(q):
        vu[t] = v[t] if up[t] else -np.inf
        vl[t] = v[t] if low[t] else np.inf
    gap0 = -1.0
    steps = 0
    stuck = False
    while steps < max_steps:
        # i: argmax v over I_up (first order); m - M the violation
        i = np.argmax(vu)
        m = vu[i]
        M = vl.min()
        if gap0 < 0.0:
            gap0 = m - M if m > -np.inf and M < np.inf else 0.0
        if m == -np.inf or M == np.inf or m - M <= eps:
            break
        j = _partner(m, i, K, D, v, low)
        if j < 0:
            stuck = True
            break
        moved, aj, ai, _, _, _, _ = pair_step_box(
            y[j], y[i], alpha[j], alpha[i], -v[j], -v[i], 0.0,
            D[j], np.float64(K[j, i]), D[i], C[j], C[i], 1e-12,
        )
        if not moved:
            stuck = True
            break
        dj = y[j] * (aj - alpha[j])
        di = y[i] * (ai - alpha[i])
        alpha[j] = aj
        alpha[i] = ai
        up[i] = in_up(y[i], ai, C[i])
        low[i] = in_low(y[i], ai, C[i])
        up[j] = in_up(y[j], aj, C[j])
        low[j] = in_low(y[j], aj, C[j])
        _move_fill(K[j], K[i], dj, di, v, up, low, vu, vl)
        steps += 1
    return steps, gap0, stuck


def _best(idx, key, k):
    """The k entries of ``idx`` with the smallest ``key``, sorted by key,
    ties by index (as a stable sort of all of them would give): a partition
    finds the k-th key, then every entry at least as good is sorted."""
    if k < len(idx):
        kk = key[idx]
        kth = np.partition(kk, k - 1)[k - 1]
        idx = idx[kk <= kth]
    order = np.lexsort((idx, key[idx]))
    return idx[order[:k]]


def select_working_set(v, y, alpha, C, q_new, exclude):
    """LIBSVM's first-order ranking, ThunderSVM's alternation: up to
    ``q_new`` samples not in ``exclude`` (bool mask), taken alternately from
    I_up by decreasing ``v`` and from I_low by increasing ``v`` (a sample in
    both lists is taken once; ties by index).  Returns the indices in the
    order taken.  Compiled (:func:`_select_core`): in NumPy the selection
    cost about 0.3 ms an outer step on 10000 variables, a tenth of a
    low-dimensional SVR fit's time (docs/decisions/32b01); the NumPy
    statement of the same rule is :func:`select_working_set_np`."""
    return _select_core(np.ascontiguousarray(v, dtype=np.float64),
                        np.ascontiguousarray(y, dtype=np.float64),
                        np.ascontiguousarray(alpha, dtype=np.float64),
                        np.ascontiguousarray(np.broadcast_to(C, np.shape(v)), dtype=np.float64),
                        int(max(q_new, 0)), np.ascontiguousarray(exclude, dtype=np.bool_))


@njit(cache=True)
def _best_compiled(idx, key, k):
    """:func:`_best` compiled: the k entries of ``idx`` (increasing) with the
    smallest ``key[idx]``, sorted by key, ties by index."""
    if k <= 0:
        return np.empty(0, np.int64)
    kk = np.empty(idx.shape[0])
    for a in range(idx.shape[0]):
        kk[a] = key[idx[a]]
    if k < idx.shape[0]:
        kth = np.partition(kk.copy(), k - 1)[k - 1]
        m = 0
        for a in range(idx.shape[0]):
            if kk[a] <= kth:
                idx[m] = idx[a]
                kk[m] = kk[a]
                m += 1
        idx = idx[:m]
        kk = kk[:m]
    # a stable sort of entries in index order: ties stay by index
    order = np.argsort(kk, kind="mergesort")
    n_out = min(k, order.shape[0])
    out = np.empty(n_out, np.int64)
    for a in range(n_out):
        out[a] = idx[order[a]]
    return out


@njit(cache=True)
def _select_core(v, y, alpha, C, q_new, exclude):
    """The compiled body of :func:`select_working_set`."""
    l = v.shape[0]
    up = np.empty(l, np.int64)
    low = np.empty(l, np.int64)
    nu_ = 0
    nl = 0
    for t in range(l):
        if exclude[t]:
            continue
        if y[t] > 0:
            u_ok = alpha[t] < C[t]
            l_ok = alpha[t] > 0
        else:
            u_ok = alpha[t] > 0
            l_ok = alpha[t] < C[t]
        if u_ok:
            up[nu_] = t
            nu_ += 1
        if l_ok:
            low[nl] = t
            nl += 1
    negv = -v
    iu = _best_compiled(up[:nu_], negv, q_new)
    il = _best_compiled(low[:nl], v, q_new)
    taken = np.zeros(l, np.bool_)
    out = np.empty(q_new, np.int64)
    m = 0
    a = 0
    b = 0
    while m < q_new and (a < iu.shape[0] or b < il.shape[0]):
        if a < iu.shape[0]:
            t = iu[a]
            a += 1
            if not taken[t]:
                taken[t] = True
                out[m] = t
                m += 1
                if m == q_new:
                    break
        if b < il.shape[0]:
            t = il[b]
            b += 1
            if not taken[t]:
                taken[t] = True
                out[m] = t
                m += 1
    return out[:m]


def select_working_set_np(v, y, alpha, C, q_new, exclude):
    """NumPy statement of :func:`select_working_set` (a test oracle)."""
    pos = y > 0
    up = np.where(pos, alpha < C, alpha > 0) & ~exclude
    low = np.where(pos, alpha > 0, alpha < C) & ~exclude
    iu = _best(np.flatnonzero(up), -v, q_new)
    il = _best(np.flatnonzero(low), v, q_new)
    taken = np.zeros(len(v), bool)
    out = []
    a = b = 0
    while len(out) < q_new and (a < len(iu) or b < len(il)):
        if a < len(iu):
            t = iu[a]
            a += 1
            if not taken[t]:
                taken[t] = True
                out.append(t)
                if len(out) == q_new:
                    break
        if b < len(il):
            t = il[b]
            b += 1
            if not taken[t]:
                taken[t] = True
                out.append(t)
    return np.asarray(out, np.int64)
