"""Platt's SMO loop for C-SVC, compiled: :func:`platt_run`.

Problem (Platt, MSR-TR-98-14, eq. 11; weights give example i its own bound
``C_i``)::

    max_alpha  sum_i alpha_i - 1/2 sum_ij y_i y_j K_ij alpha_i alpha_j
    s.t.       0 <= alpha_i <= C_i,   sum_i y_i alpha_i = 0

Everything the algorithm knows lives in explicit arrays (the named tuples
below, the ``IS_*``/``FS_*`` slots of :mod:`svmlab.smo._core`), so a fit
can stop after any successful joint step and resume later.
:func:`platt_run` is the only implementation: the fast path calls it with a
large step budget, the stepped path with ``kmax=1`` and ``want_rec=True``
(the record of the step in the buffer); one predictable branch per step
tells them apart.  LIBSVM's WSS 2 has its own loop
(:mod:`svmlab.smo._dual_core`); a fit compiles only the loop it runs.

Bookkeeping, where it differs from Platt's pseudo-code:

* The "gradient" ``G_i = sum_j alpha_j y_j K_ij`` (the decision value
  without threshold) is kept for every active example, LIBSVM-style, so
  ``E_i = G_i + b - y_i`` is O(1) wherever the heuristics need it;
  ``Gbar`` (:mod:`svmlab.smo._core`) lets the gradient of shrunk examples
  be rebuilt.
* Passes over the non-bound examples visit those that were non-bound when
  the pass began (kept in an O(1)-update list), in index order.
* Shrinking is LIBSVM's rule (:func:`svmlab.smo._core.be_shrunk`); the loop
  ends with a pass over every example, unshrunk, which decides.
* Parked phases (with ``shrinking``): Platt keeps errors for the non-bound
  examples only, and his inner loop works on them alone.  So when a run of
  passes over the non-bound examples begins, the examples at a bound are
  *parked* (:func:`_park`: no gradient updates, no kernel-row entries);
  the remaining *layout* gets a contiguous copy of its rows (``kdL``), a
  compact row cache (``cdL``, in the memory of the full-row cache) and its
  decision values in layout order (``FL``, with ``BL``: 0 if non-bound, inf
  at a bound), so a step costs one contiguous O(layout) update.  Not when
  every full row fits in the cache (the rows are then all cached, and
  parking would only drop them).  Before the next full pass the parked
  examples get their exact gradient back (:func:`_unpark`).  Step 3 of
  examineExample (the scan of the whole set) scans the active layout
  during a parked phase; the final pass over every example still decides
  convergence.
* The linear kernel folds the weight vector (TR section 2.4): ``w`` is
  updated at every step and a full pass computes ``E_i = w.x_i + b - y_i``
  as a sparse dot product, with no kernel rows (during a parked phase the
  layout's values are kept in ``FL`` and the phase's steps are folded into
  ``w`` when it ends).  With binary inputs the full passes also keep
  Platt's error cache of the non-bound examples (``EF``), updated with
  exact shared-feature counts from a feature-major 0/1 copy of their rows
  (``nbf``, :func:`_ec_counts`).
* Weights (LIBSVM's weighted C-SVC): ``Cv[i]`` is read wherever the
  unweighted algorithm reads C; without weights it is all C and the
  iterates are those of a scalar C bit for bit.
* The random starts of the second-choice loops come from a Park-Miller
  "minimal standard" generator in ``ist[IS_RNG]`` (integer arithmetic that
  never overflows int64: the compiled and the interpreted loop draw the
  same numbers).
* Float32 rows of dense input (LIBSVM's ``Qfloat``): the gradient
  reconstructions and the parked phases' gradient restores are SGEMM
  blocks (:mod:`svmlab.smo._fetch`), and a miss in a pass over every
  example fetches, as one block, the rows of the next KKT violators of the
  pass (:func:`_prefetch_pass`) when the data have at least
  :data:`svmlab.smo._core.PREFETCH_MIN_FEATURES` features.
* Speed: numba updates reference counts for every array argument of a
  compiled call and every array taken out of a tuple, and in a function as
  large as this loop LLVM does not remove them all; at tens of nanoseconds
  each they cost more than a step.  So :func:`platt_run` takes the arrays
  out of its named tuples once per call, and its per-step path
  (examineExample and takeStep) is written out in its body in sections
  named after Platt's procedures, calling only scalar functions and small
  inlined loops.  Helpers that take arrays run on rare events: the
  parked-phase transitions, shrinking, cache misses, ``Gbar`` changes and
  the records (docs/decisions/26s01-written-out-step-paths.md).
* Records: the buffer's slots are generated from the fields of
  :class:`svmlab.smo._records.SMOStep` (``SLOT.<field>``); :func:`_record`
  writes one line per field.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from .._jit import njit

from .._kkt import in_low, in_up, takes_i
from ..kernels._bits import popcount
from ..kernels._rows import KernelData, kernel_row_against, row_dot
from ..kernels.cache import CacheData, cache_reset, get_row_against, lru_hit
from ._core import (ACTIVE, FS_B, H_FULL, H_MAXDIFF, H_NONBOUND, IS_COMPACT, IS_DONE,
                    IS_EXAMINE_ALL, IS_ITER, IS_LAYOUT, IS_LAYOUT0, IS_N_ACTIVE, IS_NB,
                    IS_NUM_CHANGED, IS_PLEN, IS_POS, IS_REQUEST, IS_RNG, IS_SHRINK_COUNTER,
                    IS_UNSHRUNK, PARKED, PREFETCH_MIN_FEATURES, PREFETCH_ROWS, SHRUNK,
                    be_shrunk, fetch_row, fill_full_rows, gbar_change, rebuild_active_list,
                    reconstruct_gradient)
from ._fetch import add_kernel_sum32, complete_rows, gathered_cols32
from ._pairstep import pair_step_box, pair_threshold_box, segment_objective
from ._records import LAYOUT_ID, R_LAYOUT, SLOT
from ._simd import extremes

_ONE = np.uint64(1)
_RNG_M = 2147483647
_RNG_A = 48271

# Named state: what platt_run reads and writes, grouped by concern (n examples;
# the caller, svmlab.smo._estimator.SMORun, owns the arrays).


class KernelSide(NamedTuple):
    """The kernel side: the training set's kernel data and the row caches."""

    #: the kernel over the training set (:class:`svmlab.kernels._rows.KernelData`)
    kd: KernelData
    #: the LRU cache of full kernel rows (length n; while examples are shrunk
    #: only their active entries are valid)
    cd: CacheData
    #: parked phase: the current layout's rows, contiguous (``Kernel.subset_data``)
    kdL: KernelData
    #: parked phase: the layout's rows at the park (kept to restore gradients)
    kdL0: KernelData
    #: parked phase: the compact cache of rows against the layout, in the
    #: memory of ``cd`` (or of a buffer of the same size)
    cdL: CacheData
    #: float64 (n,) scratch row for gradient reconstruction (length 0 when
    #: Platt's linear SMO keeps no gradient)
    full: np.ndarray
    #: bool (n,) ``rowfull[i]``: the cached full-cache row of example i was
    #: computed while nothing was shrunk (every entry valid), so it survives
    #: an unshrink (:func:`svmlab.smo._fetch.complete_rows`)
    rowfull: np.ndarray


class Problem(NamedTuple):
    """The optimisation problem (read only)."""

    #: float64 (n,) labels, +1 or -1
    y: np.ndarray
    #: float64 (n,) upper bounds ``C_i = C * weight_i``
    Cv: np.ndarray
    #: float64 (n,) kernel diagonal ``K(x_i, x_i)``
    kdiag: np.ndarray
    #: KKT tolerance on ``y_i E_i``
    tol: float
    #: Platt's ``eps``: smallest relative change of ``a2`` that counts as a step
    eps: float


class Iterate(NamedTuple):
    """The iterate and the solver's own scalars."""

    #: float64 (n,) the multipliers
    alpha: np.ndarray
    #: float64 (n,) ``G_i = sum_j alpha_j y_j K_ij`` (f without b) for active i
    G: np.ndarray
    #: float64 (2, n) ``Gbar[0] = sum_{alpha_j = C_j} C_j y_j K_j``; ``Gbar[1]``
    #: the pending coefficients while examples are shrunk ((2, 0) when unused)
    Gbar: np.ndarray
    #: float64 (d,) the folded weight vector (linear kernel; length 0 otherwise)
    w: np.ndarray
    #: float64 (FS_SIZE,) float state: the threshold ``b``
    fst: np.ndarray
    #: int64 (IS_SIZE,) integer state (``IS_*``)
    ist: np.ndarray


class PlattLists(NamedTuple):
    """Platt's bookkeeping: which examples are active, which non-bound."""

    #: int8 (n,) ``ACTIVE``, ``SHRUNK`` or ``PARKED`` per example
    active: np.ndarray
    #: int64 (n,) the active examples, ``act[:ist[IS_N_ACTIVE]]``, in index order
    act: np.ndarray
    #: int64 (n,) the non-bound examples, ``nbi[:ist[IS_NB]]`` (unordered)
    nbi: np.ndarray
    #: int64 (n,) position of each example in ``nbi``, -1 if at a bound
    nbp: np.ndarray
    #: int64 (n,) the current non-bound pass, ``plist[:ist[IS_PLEN]]``
    plist: np.ndarray


class Layout(NamedTuple):
    """A parked phase's layout (see :func:`_park`)."""

    #: int64 (n,) position of each example in the current layout, -1 outside
    pos: np.ndarray
    #: int64 (n,) position of each example in the layout at the park, -1 outside
    pos0: np.ndarray
    #: float64 (n,) the multipliers at the park
    aref: np.ndarray
    #: int64 (n,) the layout's examples, ``lay[:ist[IS_LAYOUT]]``
    lay: np.ndarray
    #: float64 (n,) the layout's ``G - y``, in layout order
    FL: np.ndarray
    #: float64 (n,) 0 for a non-bound layout example, inf at a bound
    BL: np.ndarray


class ErrorCache(NamedTuple):
    """Platt's error cache of the full passes, for binary inputs with the
    linear kernel (every array empty when unused, see :func:`platt_run`)."""

    #: float64 (n,) ``E - b`` of the non-bound examples, in ``nbi`` order
    EF: np.ndarray
    #: uint8 (64 * words, n) ``nbf[f, k] = 1`` if ``nbi[k]`` has feature f
    nbf: np.ndarray
    #: int32 (2, n) scratch: shared-feature counts of i1 and i2
    cnt: np.ndarray


class Options(NamedTuple):
    """The run's options (constant during a fit, except ``want_rec``)."""

    #: LIBSVM's shrinking (and parked phases)
    shrinking: bool
    #: successful steps between two shrinking checks
    shrink_every: int
    #: fill the record buffer at every step (the stepped path)
    want_rec: bool

@njit(cache=True, inline="always")
def rng_next(ist):
    x = (ist[IS_RNG] * _RNG_A) % _RNG_M
    ist[IS_RNG] = x
    return x


@njit(cache=True)
def _add_w(kd, w, i, c):
    if kd.sparse:
        for p in range(kd.indptr[i], kd.indptr[i + 1]):
            w[kd.indices[p]] += c * kd.data[p]
    else:
        row = kd.dense[i]
        for k in range(row.shape[0]):
            w[k] += c * row[k]


@njit(cache=True, inline="always")
def _xw(sparse, dense, indptr, indices, data, w, i):
    """<x_i, w> from the raw arrays.  Hot loops call this (and never a helper
    taking the ``kd``/``cd`` tuples: passing a tuple of arrays costs numba a
    reference-count update per member and call, ~40 ns, more than the work)."""
    s = 0.0
    if sparse:
        for p in range(indptr[i], indptr[i + 1]):
            s += data[p] * w[indices[p]]
    else:
        for k in range(dense.shape[1]):
            s += dense[i, k] * w[k]
    return s


@njit(cache=True, inline="always")
def _xw_ones(indptr, indices, w, i):
    """:func:`_xw` for a CSR row whose stored values are all 1 (bit-packed
    binary inputs): the same sum, in the same order, without reading the
    values (a third of the memory traffic of a full sweep).  Kept apart from
    :func:`_xw` and chosen by the two per-sweep loops that pay for it: as a
    flag inside ``_xw`` it made those loops slower
    (docs/decisions/26s05-binary-dot-without-values.md)."""
    s = 0.0
    for p in range(indptr[i], indptr[i + 1]):
        s += w[indices[p]]
    return s


# <x_i, x_j> from the raw arrays: one home, in kernels (row_dot)
_xx = row_dot


@njit(cache=True)
def _m_and_M(kd, y, Cv, alpha, G, w, act, ist, linear):
    """m = max_{I_up} -F_t, M = min_{I_low} -F_t over active t, F_t = f0_t - y_t
    (LIBSVM's -y_t grad_t).  Returns (m, i_m, M).  With ``linear`` (the
    runtime flag of the folded linear kernel, whose full passes keep no
    G) it first stores ``G_t = w.x_t`` for the active examples, for
    :func:`_shrink` to reuse.  Written with selects, not branches: the set
    memberships are unpredictable."""
    m = -np.inf
    M = np.inf
    im = np.int64(-1)
    sp, dn, ip, ix, dt = kd.sparse, kd.dense, kd.indptr, kd.indices, kd.data
    ones = kd.binary and sp
    for p in range(ist[IS_N_ACTIVE]):
        t = act[p]
        if linear:
            G[t] = _xw_ones(ip, ix, w, t) if ones else _xw(sp, dn, ip, ix, dt, w, t)
        mf = y[t] - G[t]
        a = alpha[t]
        c = Cv[t]
        up = in_up(y[t], a, c)
        low = in_low(y[t], a, c)
        u = mf if up else -np.inf
        if takes_i(u, m):
            m = u
            im = t
        v = mf if low else np.inf
        M = v if v < M else M
    return m, im, M


@njit(cache=True, inline="always")
def _unshrink(kd, cd, y, Cv, alpha, G, Gbar, active, act, ist, keep_g, full, rowfull, blocks):
    """Every example active again (LIBSVM's unshrink; never during a parked
    phase, which ends with :func:`_unpark`), with its exact gradient when
    ``keep_g`` (the folded linear kernel keeps none); ``blocks``: the
    feature switch of float32 block sums (:mod:`svmlab.smo._core`)."""
    if ist[IS_N_ACTIVE] < alpha.shape[0]:
        # rows cached while shrunk lack the entries that become active:
        # complete them (or forget them all), keep the full ones; first,
        # so that the reconstruction reads the free SVs' rows from the cache
        complete_rows(kd, cd, rowfull, blocks)
    if keep_g:
        reconstruct_gradient(kd, cd, y, Cv, alpha, G, Gbar, active, full, rowfull, blocks)
    active[:] = ACTIVE
    rebuild_active_list(active, act, ist)


@njit(cache=True)
def _park(kd, cd, y, Cv, alpha, G, w, active, act, ist, linear, pos, pos0, aref, lay, FL, BL):
    """Start of a phase of passes over the non-bound examples: park the
    active examples at a bound; True if any was parked.  Nothing is parked
    when no active example is non-bound (the phase's passes would be empty:
    the next pass is over every example anyway) or when none is at a bound.

    Platt keeps errors for the non-bound examples only.  Likewise, while
    parked, examples get no gradient updates: the phase works on the
    *layout* ``act[:n_active]`` (``pos[t]`` is t's position in it; examples
    leave it when :func:`_repark` compacts it, none joins before
    :func:`_unpark`), whose rows the caller copies contiguously (``kdL``)
    for a compact kernel cache that reuses the memory of the full-row cache
    (emptied here).  The layout at the park (positions ``pos0``, rows
    ``kdL0``) is kept for restoring the parked examples' gradients.

    During the phase the layout's decision values live in layout order:
    ``FL[p] = G_t - y_t`` (so ``E_t = FL[p] + b``) for ``t = lay[p]``, and
    ``BL[p]`` is 0 for the non-bound ones and inf for those at a bound; a
    step updates ``FL`` as one contiguous axpy with the two compact rows, and
    Platt's max |E1 - E2| is a vectorised scan (:mod:`svmlab.smo._simd`) for
    the extremes of ``FL - BL`` and ``FL + BL``.  ``linear`` (a runtime bool,
    :func:`platt_run`): the folded linear kernel, whose decision values
    come from ``w``."""
    na = ist[IS_N_ACTIVE]
    n_parked = 0
    for p in range(na):
        t = act[p]
        a = alpha[t]
        if not (a > 0.0 and a < Cv[t]):
            n_parked += 1
    if n_parked == 0 or n_parked == na:
        return False
    for p in range(na):
        t = act[p]
        a = alpha[t]
        if not (a > 0.0 and a < Cv[t]):
            active[t] = PARKED
    rebuild_active_list(active, act, ist)
    cache_reset(cd)
    aref[:] = alpha
    sp, dn, ip, ix, dt = kd.sparse, kd.dense, kd.indptr, kd.indices, kd.data
    for p in range(ist[IS_N_ACTIVE]):
        t = act[p]
        pos[t] = p
        pos0[t] = p
        lay[p] = t
        BL[p] = 0.0  # every active example is non-bound now
        # (the folded w gives the linear kernel's decision values)
        if linear:
            FL[p] = _xw(sp, dn, ip, ix, dt, w, t) - y[t]
        else:
            FL[p] = G[t] - y[t]
    ist[IS_LAYOUT] = ist[IS_N_ACTIVE]
    ist[IS_LAYOUT0] = ist[IS_N_ACTIVE]
    ist[IS_COMPACT] = 1
    return True


@njit(cache=True)
def _layout_deltas(y, alpha, pos, aref, m):
    """``c[pos[j]] = (alpha_j - aref_j) y_j`` over the layout at the park
    (``pos`` = ``pos0``); and whether any multiplier moved since the park."""
    c = np.zeros(m)
    moved = False
    for j in range(alpha.shape[0]):
        p = pos[j]
        if p >= 0:
            c[p] = (alpha[j] - aref[j]) * y[j]
            if c[p] != 0.0:
                moved = True
    return c, moved


@njit(cache=True)
def _delta_at(kd, kdL0, t, c, tmp):
    """``sum_j c_j K(x_j, x_t)`` over the layout at the park (``kdL0``, the
    coefficients ``c`` of :func:`_layout_deltas`): how much example t's
    gradient moved since the park.  ``tmp`` is scratch of the layout's size."""
    kernel_row_against(kd, t, kdL0, tmp)
    s = 0.0
    for q in range(tmp.shape[0]):
        s += c[q] * tmp[q]
    return s


@njit(cache=True)
def _layout_delta_blocks(kd, y, alpha, aref, pos0, cols, nc):
    """``acc[q] = sum_j (alpha_j - aref_j) y_j K(x_j, x_cols[q])`` over the
    layout at the park (``pos0[j] >= 0``), for ``q < nc``: the gradient
    moves of :func:`_delta_at` for many examples at once, as float32 SGEMM
    blocks (:func:`svmlab.smo._fetch.add_kernel_sum32`; dense input with a
    float32 cache only)."""
    n = alpha.shape[0]
    rows = np.empty(n, np.int64)
    coef = np.empty(n)
    k = np.int64(0)  # (typed: a literal reaching a call compiles it twice)
    for j in range(n):
        if pos0[j] >= 0:
            cj = (alpha[j] - aref[j]) * y[j]
            if cj != 0.0:
                rows[k] = j
                coef[k] = cj
                k += 1
    acc = np.zeros(nc)
    Z, sqz = gathered_cols32(kd, cols, nc)
    add_kernel_sum32(kd, rows, coef, k, Z, sqz, acc)
    return acc


@njit(cache=True)
def _repark(kd, kdL0, y, Cv, alpha, G, active, act, ist, linear, pos, pos0, aref, lay, FL, BL,
            R, owner, blocks):
    """Start of another pass of a parked phase: once a quarter of the layout
    examples sit at a bound (an eighth for the folded linear kernel, whose
    newly parked examples need no rebase, so compacting costs less), park
    them too and compact the layout (``FL``,
    ``BL``, ``lay``, ``pos``, and the cached rows, in place: row s moves
    from stride m to stride m_new in the flat memory of ``R``, which is
    safe front to back).  True if it did; the caller then copies the new
    layout's rows (``kdL``) and views the cache memory with the new stride.
    The newly parked examples' G is rebased to the phase start, ``G_t =
    FL_t + y_t - sum_j (alpha_j - aref_j) y_j K_jt`` over the layout at the
    park, so that :func:`_unpark` restores every parked example alike (the
    linear kernel's parked examples need no G: full passes use the folded
    w).  ``linear`` (a runtime bool) and ``blocks`` (a feature switch),
    :func:`platt_run`: the folded linear kernel; the cache holds float32 rows of dense input, and
    the rebase sums are SGEMM blocks (:func:`_layout_delta_blocks`)."""
    m = ist[IS_LAYOUT]
    n_bound = 0
    for p in range(m):
        if BL[p] != 0.0:
            n_bound += 1
    if (8 if linear else 4) * n_bound <= m or n_bound == m:
        # (an empty layout is never made: the phase's passes have no
        # non-bound example left, and the next one is over every example)
        return False
    m0 = ist[IS_LAYOUT0]
    c, moved = _layout_deltas(y, alpha, pos0, aref, m0)
    rebase = moved and not linear
    f32 = blocks is not None and blocks
    tmp = np.empty(m0 if rebase and not f32 else 0)
    keep = np.empty(m - n_bound, dtype=np.int64)
    newly = np.empty(n_bound if rebase and f32 else 0, dtype=np.int64)
    nn = np.int64(0)
    k = 0
    for p in range(m):
        t = lay[p]
        if BL[p] == 0.0:
            keep[k] = p
            pos[t] = k
            lay[k] = t
            FL[k] = FL[p]
            BL[k] = 0.0
            act[k] = t
            k += 1
            continue
        active[t] = PARKED
        pos[t] = -1
        G[t] = FL[p] + y[t]
        if rebase and f32:
            newly[nn] = t
            nn += 1
        elif rebase:
            G[t] -= _delta_at(kd, kdL0, t, c, tmp)
    if blocks is not None and blocks and nn > 0:
        acc = _layout_delta_blocks(kd, y, alpha, aref, pos0, newly, nn)
        for q in range(nn):
            G[newly[q]] -= acc[q]
    flat = R.reshape(-1)
    for sl in range(R.shape[0]):
        if owner[sl] >= 0:
            src = sl * m
            dst = sl * k
            for q in range(k):
                flat[dst + q] = flat[src + keep[q]]
    ist[IS_N_ACTIVE] = k
    ist[IS_LAYOUT] = k
    return True


@njit(cache=True)
def _unpark(kd, kdL0, y, alpha, G, w, active, act, ist, linear, pos, pos0, aref, lay, FL,
            blocks):
    """End of a parked phase (before a full pass): the parked examples become
    active again, with exact gradients.  The layout's come from ``FL``; the
    others' are those of the phase start (rebased so by :func:`_repark`) and
    get ``G_t += sum_j (alpha_j - aref_j) y_j K_jt`` over the layout at the
    park (only the examples whose multiplier moved in the phase count),
    computed parked example by parked example against that layout's
    contiguous rows ``kdL0``, which stay in the CPU cache.  The linear
    kernel's full passes take E from the folded w instead: the phase's
    steps are folded into it here, ``w += sum_j (alpha_j - aref_j) y_j
    x_j``, rather than at every step.  ``blocks`` (feature switch): the
    cache holds float32 rows of dense input, and the sums are SGEMM blocks
    (:func:`_layout_delta_blocks`)."""
    n = alpha.shape[0]
    m = ist[IS_LAYOUT]
    for p in range(m):
        t = lay[p]
        G[t] = FL[p] + y[t]
    if linear:
        for j in range(n):
            if pos0[j] >= 0 and alpha[j] != aref[j]:
                _add_w(kd, w, j, (alpha[j] - aref[j]) * y[j])
    else:
        m0 = ist[IS_LAYOUT0]
        c, moved = _layout_deltas(y, alpha, pos0, aref, m0)
        if blocks is not None and blocks and moved:
            cols = np.empty(n, dtype=np.int64)
            nc = np.int64(0)
            for t in range(n):
                if active[t] == PARKED and pos[t] < 0:
                    cols[nc] = t
                    nc += 1
            acc = _layout_delta_blocks(kd, y, alpha, aref, pos0, cols, nc)
            for q in range(nc):
                G[cols[q]] += acc[q]
        elif moved:
            tmp = np.empty(m0)
            for t in range(n):
                if active[t] == PARKED and pos[t] < 0:
                    G[t] += _delta_at(kd, kdL0, t, c, tmp)
    pos[:] = -1
    pos0[:] = -1
    for i in range(n):
        if active[i] == PARKED:
            active[i] = ACTIVE
    rebuild_active_list(active, act, ist)
    ist[IS_COMPACT] = 0


@njit(cache=True, inline="always")
def _lowest_bit(u):
    """Position of the lowest set bit of a nonzero uint64 (its trailing
    zeros); ``u & (u - 1)`` then clears it."""
    return popcount((u & (~u + _ONE)) - _ONE)


@njit(cache=True, inline="always")
def _ec_column(br, nbf, i, k, v):
    """``nbf[f, k] = v`` for the features f of example i (its set bits)."""
    for q in range(br.shape[1]):
        u = br[i, q]
        while u != 0:
            nbf[q * 64 + _lowest_bit(u), k] = v
            u &= u - _ONE


@njit(cache=True, inline="always")
def _ec_counts(br, nbf, cnt, r, i, nbk):
    """``cnt[r, k]`` = number of features example i shares with the k-th
    non-bound example, for k < nbk: the sum of the rows ``nbf[f, :nbk]``
    over the features f of i (a dozen contiguous byte rows for Platt's
    sparse Adult and Web sets, which vectorise; exact integers, so Platt's
    error-cache update ``dE = d1 K(1, t) + d2 K(2, t)`` is exactly the
    kernel value's)."""
    for k in range(nbk):
        cnt[r, k] = 0
    for q in range(br.shape[1]):
        u = br[i, q]
        while u != 0:
            f = q * 64 + _lowest_bit(u)
            for k in range(nbk):
                cnt[r, k] += nbf[f, k]
            u &= u - _ONE


@njit(cache=True)
def _fill_error_cache(kd, y, w, nbi, nb, EF, nbf):
    """Platt's error cache of the full passes (binary inputs, linear kernel,
    see :func:`platt_run`) from scratch (``nbf`` is all zero): ``EF[k] =
    w.x_t - y_t`` and the features of ``t = nbi[k]`` in column k of
    ``nbf``, for every non-bound example."""
    sp, dn, ip, ix, dt = kd.sparse, kd.dense, kd.indptr, kd.indices, kd.data
    for k in range(nb):
        t = nbi[k]
        _ec_column(kd.brows, nbf, t, k, 1)
        EF[k] = _xw(sp, dn, ip, ix, dt, w, t) - y[t]


@njit(cache=True)
def _clear_error_cache(kd, nbi, nb, nbf):
    """``nbf`` all zero again (a parked phase begins; its non-bound list
    differs when :func:`_fill_error_cache` runs at its end)."""
    for k in range(nb):
        _ec_column(kd.brows, nbf, nbi[k], k, 0)


@njit(cache=True, inline="always")
def _shrink(kd, cd, y, Cv, tol, alpha, G, Gbar, w, active, act, ist, linear, full, rowfull,
            blocks):
    """LIBSVM's do_shrinking: drop bound examples that cannot be part of a
    violating pair (Joachims 1999; Fan, Chen and Lin 2005, section 5).  The
    caller never shrinks during a parked phase (its layout stays fixed).
    ``linear`` (runtime bool), ``blocks`` (feature switch): :func:`platt_run`."""
    m, im, M = _m_and_M(kd, y, Cv, alpha, G, w, act, ist, linear)
    if ist[IS_UNSHRUNK] == 0 and m - M <= 10.0 * tol:
        ist[IS_UNSHRUNK] = 1
        _unshrink(kd, cd, y, Cv, alpha, G, Gbar, active, act, ist, not linear, full,
                  rowfull, blocks)
        m, im, M = _m_and_M(kd, y, Cv, alpha, G, w, act, ist, linear)
    # (G holds w.x_t for the linear kernel too: _m_and_M stored it)
    changed = False
    for p in range(ist[IS_N_ACTIVE]):
        t = act[p]
        a = alpha[t]
        if a > 0.0 and a < Cv[t]:
            continue
        if be_shrunk(y[t], a, Cv[t], y[t] - G[t], m, M):
            active[t] = SHRUNK
            changed = True
    if changed:
        rebuild_active_list(active, act, ist)


@njit(cache=True)
def _record(rec, ist, i1, i2, a1, a2, a1n, a2n, a2u, L, H, eta, E1, E2, b, bn, heur, y1, y2,
            K11, K12, K22, C1, C2):
    """Write the record of the step just taken into ``rec``, one line per
    field of :class:`svmlab.smo._records.SMOStep` (its slots ``SLOT.<field>``
    are generated from the fields; the run's cache counters are filled in
    Python), plus the layout checksum in ``rec[R_LAYOUT]``.

    Parameters
    ----------
    rec : float64 (R_BUFFER,)
        The record buffer.
    ist : int64 (IS_SIZE,)
        Integer state, after the step (``IS_ITER`` counts it).
    i1, i2 : int
        The pair (``i2`` examined first).
    a1, a2, a1n, a2n : float
        Their multipliers before and after.
    a2u : float
        The unclipped maximiser of the segment (NaN when ``eta <= 0``).
    L, H : float
        The segment of ``a2``.
    eta : float
        ``K11 + K22 - 2 K12``.
    E1, E2 : float
        The errors ``f(x) - y`` before the step.
    b, bn : float
        The threshold before and after.
    heur : int
        ``H_*``: the rule that chose the pair.
    y1, y2, K11, K12, K22, C1, C2 : float
        Labels, kernel values and upper bounds of the pair.
    """
    rec[SLOT.iteration] = ist[IS_ITER]
    rec[SLOT.i1] = i1
    rec[SLOT.i2] = i2
    rec[SLOT.a1_old] = a1
    rec[SLOT.a2_old] = a2
    rec[SLOT.a1_new] = a1n
    rec[SLOT.a2_new] = a2n
    rec[SLOT.L] = L
    rec[SLOT.H] = H
    rec[SLOT.eta] = eta
    rec[SLOT.E1] = E1
    rec[SLOT.E2] = E2
    rec[SLOT.b_old] = b
    rec[SLOT.b_new] = bn
    rec[SLOT.heuristic] = heur
    clipped = (eta <= 0.0) or (a2u < L) or (a2u > H)
    rec[SLOT.clipped] = 1.0 if clipped else 0.0
    rec[SLOT.a2_unclipped] = a2u
    rec[SLOT.y1] = y1
    rec[SLOT.y2] = y2
    rec[SLOT.examine_all] = ist[IS_EXAMINE_ALL]
    rec[SLOT.K11] = K11
    rec[SLOT.K12] = K12
    rec[SLOT.K22] = K22
    rec[SLOT.delta_objective] = segment_objective(a2n, y1, y2, a1, a2, E1, E2, b, K11, K12, K22)
    rec[SLOT.n_active] = ist[IS_N_ACTIVE]
    rec[SLOT.n_nonbound] = ist[IS_NB]
    rec[SLOT.C1] = C1
    rec[SLOT.C2] = C2
    rec[R_LAYOUT] = LAYOUT_ID


@njit(cache=True, inline="always")
def _fetch_miss(kd, cd, kdL, cdL, i, act, ist, rowfull):
    """Compute (and cache) row i after a cache miss; return its slot.  In a
    parked phase the row is over the layout (position p for ``lay[p]``),
    against the contiguous copy ``kdL`` of its rows, in the compact cache."""
    if ist[IS_COMPACT]:
        get_row_against(kd, kdL, cdL, i)
        return cdL.slot_of[i]
    fetch_row(kd, cd, i, act, ist, rowfull)
    return cd.slot_of[i]


@njit(cache=True)
def _prefetch_pass(kd, cd, i2, y, Cv, alpha, G, b, tol, active, ist, rowfull):
    """A miss of row ``i2`` in Platt's pass over every example (nothing
    shrunk, no parked phase, float32 rows of dense input): fetch it together
    with the rows of the next examples of the pass that violate KKT now
    (``y_t E_t < -tol`` with ``alpha_t < C_t``, or ``> tol`` with
    ``alpha_t > 0``) and are not cached, up to :data:`PREFETCH_ROWS` rows,
    as one kernel block (:func:`svmlab.kernels.cache.fill_block`: one SGEMM,
    far cheaper than as many single rows).
    examineExample fetches the row of every violator it examines, so the
    block's rows are the rows the pass will most likely ask for next
    (a step may fix a violator before the pass reaches it: its row is then
    computed for nothing).  Returns the slot of ``i2``.

    Cache bound: the block is at most ``min(PREFETCH_ROWS, n_slots - 2)``
    rows of the cache itself (fill_block never evicts the two rows used
    last before it), plus fill_block's scratch of as many rows."""
    n = alpha.shape[0]
    rows = np.empty(PREFETCH_ROWS, np.int64)
    rows[0] = i2
    k = np.int64(1)
    slot_of = cd.slot_of
    for t in range(ist[IS_POS], n):
        if k >= PREFETCH_ROWS:
            break
        if active[t] != ACTIVE or slot_of[t] >= 0:
            continue
        a = alpha[t]
        r = (G[t] + b - y[t]) * y[t]
        if (r < -tol and a < Cv[t]) or (r > tol and a > 0.0):
            rows[k] = t
            k += 1
    fill_full_rows(kd, cd, rows, k, rowfull)
    return slot_of[i2]


# ----------------------------------------------------------------------------
# platt_run (its per-step path and the end of a pass are in its body, see the
# module docstring).


@njit(cache=True, inline="always")
def _modes(linear, shrinking, compact, binary, n_error_cache, n_cache_rows, n):
    """The bookkeeping modes of one call of :func:`platt_run` (fixed within it).

    Parameters
    ----------
    linear : bool
        The kernel is linear.
    shrinking : bool
        Shrinking (and parked phases) allowed.
    compact : bool
        A parked phase is on.
    binary : bool
        The inputs are bit-packed binary (``KernelData.binary``).
    n_error_cache : int
        Length of ``ErrorCache.EF`` (0: no error cache).
    n_cache_rows : int
        Slots of the full-row cache.
    n : int
        Number of examples.

    Returns
    -------
    e_from_w : bool
        The linear kernel: full passes take E from the folded ``w``.
    lin_w : bool
        ``e_from_w`` outside a parked phase: no kernel rows at all.
    use_rows : bool
        Steps read kernel rows (``not lin_w``).
    bin_ec : bool
        Binary inputs with ``e_from_w``: full passes keep Platt's error cache
        of the non-bound examples (``ErrorCache``).
    bin_w : bool
        ``bin_ec`` outside a parked phase.
    can_park : bool
        Parked phases pay off: shrinking, and not every full row fits in
        the cache (or no full rows are cached at all, ``e_from_w``).
    """
    e_from_w = linear
    lin_w = e_from_w and not compact
    use_rows = not lin_w
    bin_ec = e_from_w and binary and n_error_cache > 0
    bin_w = bin_ec and not compact
    can_park = shrinking and (e_from_w or n_cache_rows < n)
    return e_from_w, lin_w, use_rows, bin_ec, bin_w, can_park


@njit(cache=True)
def platt_run(ks, pb, it, pl, lo, ec, rec, opt, kmax, blocks, linear):
    """Advance by up to ``kmax`` successful joint steps; return how many were
    taken.  ``ist[IS_DONE]`` becomes nonzero once the stopping rule holds.

    Solves the SMO dual (Platt, MSR-TR-98-14, eq. 11; weights give each
    example its own bound)::

        max_alpha  sum_i alpha_i - 1/2 sum_ij y_i y_j K_ij alpha_i alpha_j
        s.t.       0 <= alpha_i <= C_i,   sum_i y_i alpha_i = 0

    by Platt's analytic joint steps on pairs chosen by his heuristics, until
    a full pass over every example changes nothing (the caller then checks
    the KKT conditions within ``tol``).

    Returns early, for the caller to call again, when a parked phase begins
    (``ist[IS_REQUEST] = 1``: the caller first builds ``kdL``, the layout's
    rows, contiguous, and the compact cache ``cdL`` over them), when its
    layout is compacted (``ist[IS_REQUEST] = 2``: the caller rebuilds
    ``kdL`` and views the cache memory with the new row length) and when
    one ends.  So the mode (full or compact rows) and the layout are fixed
    within one call.

    The arrays are taken out of the named tuples once, here.  The loop
    reads as Platt's pseudo-code (TR section 4), in marked sections: the
    main routine (passes, the end of a pass and the parked-phase
    transitions), examineExample (first choice i2, KKT test, the three
    second-choice rules) and takeStep (the analytic step is
    :func:`svmlab.smo._pairstep.pair_step_box`, the update of ``w``, the
    error cache, ``G``/``FL``, ``Gbar``, the non-bound list and ``b``
    follows).  The per-step sections are written out rather than split into
    helpers, for speed (see the module docstring), so this function is
    longer than a screen: read it section by section.

    Parameters
    ----------
    ks : KernelSide
        Kernel data and row caches (full rows; a parked phase's layout rows).
    pb : Problem
        Labels, bounds, kernel diagonal, ``tol`` and ``eps`` (read only).
    it : Iterate
        ``alpha``, ``G``, ``Gbar``, ``w`` and the scalar state ``fst``/``ist``
        (updated in place).
    pl : PlattLists
        Active and non-bound examples, the current pass (updated in place).
    lo : Layout
        A parked phase's layout (updated in place).
    ec : ErrorCache
        Platt's error cache for binary inputs with the linear kernel (empty
        arrays when unused; the caller passes empty ones when its feature
        copy would not fit the memory budget).
    rec : float64 (R_BUFFER,)
        Record buffer, filled after every step when ``opt.want_rec``
        (:mod:`svmlab.smo._records`).
    opt : Options
        Kernel kind, shrinking and recording options.
    kmax : int
        Most successful joint steps to take in this call.
    blocks : None or bool
        Feature switch (:func:`svmlab.smo._core.blocks_switch`): None for
        float64 rows (the loop is compiled without the block paths); with
        float32 rows True for dense input (block prefetches, block sums) and
        False otherwise, one compiled loop for both.
    linear : bool
        True for the linear kernel (the folded ``w``, the binary error
        cache).  A runtime flag, not a ``None``/``True`` feature switch: the
        rbf and linear fits share one compiled loop per row type, which
        halves the loop's compile mass; since svmlab ships compiled code,
        the folded-``w`` code an rbf fit compiles with it costs a first fit
        nothing (docs/decisions/29m01-compile-mass-seams.md).
    """
    # ---- the named state, unpacked once (see the module docstring) ----
    kd, cd, kdL, kdL0, cdL, full = ks.kd, ks.cd, ks.kdL, ks.kdL0, ks.cdL, ks.full
    rowfull = ks.rowfull
    y, Cv, kdiag, tol, eps = pb.y, pb.Cv, pb.kdiag, pb.tol, pb.eps
    alpha, G, Gbar, w, fst, ist = it.alpha, it.G, it.Gbar, it.w, it.fst, it.ist
    active, act, nbi, nbp, plist = pl.active, pl.act, pl.nbi, pl.nbp, pl.plist
    pos, pos0, aref, lay, FL, BL = lo.pos, lo.pos0, lo.aref, lo.lay, lo.FL, lo.BL
    EF, nbf, cnt = ec.EF, ec.nbf, ec.cnt
    shrinking, shrink_every = opt.shrinking, opt.shrink_every
    want_rec = opt.want_rec
    n = alpha.shape[0]
    steps = 0
    if ist[IS_REQUEST]:
        return 0
    compact = ist[IS_COMPACT] != 0
    _, lin_w, use_rows, bin_ec, bin_w, can_park = _modes(
        linear, shrinking, compact, kd.binary, EF.shape[0], cd.rows.shape[0], n)
    br = kd.brows
    sp, dn, ip, ix, dt = kd.sparse, kd.dense, kd.indptr, kd.indices, kd.data
    ones = kd.binary and sp  # CSR values all 1: sparse dot products skip them
    cc = cdL if compact else cd
    R, c_slot, c_prev, c_next, c_meta = cc.rows, cc.slot_of, cc.prev, cc.next, cc.meta
    # Platt's max |E1 - E2| scans the layout in a parked phase, the error
    # cache in a binary linear full pass
    scan_E = lay if compact else nbi
    scan_F = FL if compact else EF
    while steps < kmax and ist[IS_DONE] == 0:
        if shrinking and ist[IS_SHRINK_COUNTER] <= 0 and not compact:
            ist[IS_SHRINK_COUNTER] = shrink_every
            _shrink(kd, cd, y, Cv, tol, alpha, G, Gbar, w, active, act, ist, linear, full,
                    rowfull, blocks)
        b = fst[FS_B]
        s2 = -1
        # ---- Platt's main routine (TR section 4): a pass over every
        # example, then passes over the non-bound ones, until a full pass
        # changes nothing ----
        plen = n if ist[IS_EXAMINE_ALL] else ist[IS_PLEN]
        if ist[IS_POS] >= plen:
            # ---- a pass has ended: Platt's loop test, the next pass,
            # and the parked-phase transitions (_park, _repark, _unpark) ----
            if ist[IS_EXAMINE_ALL]:
                ist[IS_EXAMINE_ALL] = 0
            elif ist[IS_NUM_CHANGED] == 0:
                ist[IS_EXAMINE_ALL] = 1
            if ist[IS_NUM_CHANGED] == 0 and ist[IS_EXAMINE_ALL] == 0:
                # every active example obeys KKT within tol
                if ist[IS_N_ACTIVE] < n:
                    # final pass over every example (unshrink and check)
                    _unshrink(kd, cd, y, Cv, alpha, G, Gbar, active, act, ist, not linear,
                              full, rowfull, blocks)
                    ist[IS_UNSHRUNK] = 1
                    ist[IS_EXAMINE_ALL] = 1
                else:
                    ist[IS_DONE] = 1
                    break
            ist[IS_NUM_CHANGED] = 0
            ist[IS_POS] = 0
            if ist[IS_EXAMINE_ALL] == 0:
                # the non-bound examples at the start of the pass, in
                # index order (an example becoming non-bound during the
                # pass waits for the next one)
                nb = ist[IS_NB]
                if compact:
                    # the layout is in index order (and holds every
                    # non-bound example): no sort needed
                    k = 0
                    for q in range(ist[IS_LAYOUT]):
                        if BL[q] == 0.0:
                            plist[k] = lay[q]
                            k += 1
                else:
                    plist[:nb] = np.sort(nbi[:nb])
                ist[IS_PLEN] = nb
                if can_park and not compact:
                    if _park(kd, cd, y, Cv, alpha, G, w, active, act, ist, linear, pos,
                             pos0, aref, lay, FL, BL):
                        if bin_ec:
                            _clear_error_cache(kd, nbi, nb, nbf)
                        ist[IS_REQUEST] = 1
                        break
                elif compact:
                    if _repark(kd, kdL0, y, Cv, alpha, G, active, act, ist, linear,
                               pos, pos0, aref, lay, FL, BL, cdL.rows, cdL.owner, blocks):
                        ist[IS_REQUEST] = 2
                        break
            elif compact:
                _unpark(kd, kdL0, y, alpha, G, w, active, act, ist, linear, pos, pos0,
                        aref, lay, FL, blocks)
                if bin_ec:
                    _fill_error_cache(kd, y, w, nbi, ist[IS_NB], EF, nbf)
                    BL[:ist[IS_LAYOUT0]] = 0.0
                break  # the caller calls again, in full mode
            continue
        # ---- examineExample(i2): first choice, the next example of the pass ----
        if ist[IS_EXAMINE_ALL]:
            i2 = ist[IS_POS]
        else:
            i2 = plist[ist[IS_POS]]
        ist[IS_POS] += 1
        if active[i2] != ACTIVE:
            continue
        a2 = alpha[i2]
        C2 = Cv[i2]
        if ist[IS_EXAMINE_ALL] == 0 and not (a2 > 0.0 and a2 < C2):
            continue
        y2 = y[i2]
        if compact:
            E2 = FL[pos[i2]] + b
        else:
            if not lin_w:
                E2 = G[i2] + b - y2
            elif ones:
                E2 = _xw_ones(ip, ix, w, i2) + b - y2
            else:
                E2 = _xw(sp, dn, ip, ix, dt, w, i2) + b - y2
        r2 = E2 * y2
        if not ((r2 < -tol and a2 < C2) or (r2 > tol and a2 > 0.0)):
            continue
        # ---- examineExample(i2) for a KKT violator: second choice i1
        # (TR section 2.2), the first of three rules whose step moves ----
        if use_rows:
            s2 = c_slot[i2]
            if s2 >= 0:
                lru_hit(c_prev, c_next, c_meta, s2)
            elif blocks is not None and blocks and not compact and ist[IS_EXAMINE_ALL] \
                    and ist[IS_N_ACTIVE] == n \
                    and dn.shape[1] >= PREFETCH_MIN_FEATURES:
                s2 = _prefetch_pass(kd, cd, i2, y, Cv, alpha, G, b, tol, active, ist,
                                    rowfull)
            else:
                s2 = _fetch_miss(kd, cd, kdL, cdL, i2, act, ist, rowfull)
        K22 = kdiag[i2]
        i1 = np.int64(-1)  # (typed: a literal -1 reaching calls compiles them twice)
        # second choice 1) the non-bound example maximising |E1 - E2|
        nb = ist[IS_NB]
        t1 = np.int64(-1)
        if nb > 1 and (compact or bin_w):
            qmax, qmin = extremes(scan_F, BL, ist[IS_LAYOUT] if compact else nb)
            fmax = scan_F[qmax]
            fmin = scan_F[qmin]
            f2 = E2 - b
            if fmax - f2 >= f2 - fmin:
                t1 = scan_E[qmax]
                E1b = fmax + b
            else:
                t1 = scan_E[qmin]
                E1b = fmin + b
        elif nb > 1:
            best = -1.0
            E1b = 0.0
            for p in range(nb):
                t = nbi[p]
                if lin_w:
                    Et = _xw(sp, dn, ip, ix, dt, w, t) + b - y[t]
                else:
                    Et = G[t] + b - y[t]
                d = abs(Et - E2)
                if d > best:
                    best = d
                    t1 = t
                    E1b = Et
        if t1 >= 0 and t1 != i2:
            if compact:
                K12 = R[s2, pos[t1]]
            elif lin_w:
                K12 = _xx(sp, dn, ip, ix, dt, t1, i2)
            else:
                K12 = R[s2, t1]
            moved, a1n, a2n, a2u, L, H, eta = pair_step_box(y[t1], y2, alpha[t1], a2, E1b, E2,
                                                            b, kdiag[t1], K12, K22, Cv[t1], C2,
                                                            eps)
            if moved:
                i1 = t1
                E1 = E1b
                heur = H_MAXDIFF
        # second choice 2) the non-bound examples, then 3) the whole (active) set, each
        # from a random start (a parked phase scans its active layout)
        for stage in range(2):
            if i1 >= 0 or (stage == 0 and nb == 0):
                continue
            na = ist[IS_N_ACTIVE]
            m3 = nb if stage == 0 else (na if compact else n)
            start = rng_next(ist) % m3
            for k in range(m3):
                q = (start + k) % m3
                t = nbi[q] if stage == 0 else (act[q] if compact else q)
                if t == i2 or active[t] != ACTIVE:
                    continue
                if compact:
                    Et = FL[pos[t]] + b
                    K12 = R[s2, pos[t]]
                elif bin_w and stage == 0:
                    Et = EF[q] + b
                    K12 = _xx(sp, dn, ip, ix, dt, t, i2)
                elif lin_w:
                    Et = _xw(sp, dn, ip, ix, dt, w, t) + b - y[t]
                    K12 = _xx(sp, dn, ip, ix, dt, t, i2)
                else:
                    Et = G[t] + b - y[t]
                    K12 = R[s2, t]
                moved, a1n, a2n, a2u, L, H, eta = pair_step_box(y[t], y2, alpha[t], a2, Et,
                                                                E2, b, kdiag[t], K12, K22,
                                                                Cv[t], C2, eps)
                if moved:
                    i1 = t
                    E1 = Et
                    heur = H_NONBOUND if stage == 0 else H_FULL
                    break
        if i1 < 0:
            continue
        ist[IS_NUM_CHANGED] += 1
        # ---- takeStep(i1, i2): the step was computed above (pair_step_box);
        # here the threshold (eqs. 20-21) and the update of w, the error
        # cache, G (or FL), Gbar, alpha and the non-bound list ----
        a1 = alpha[i1]
        a2 = alpha[i2]
        y1 = y[i1]
        y2 = y[i2]
        K11 = kdiag[i1]
        K22 = kdiag[i2]
        C1 = Cv[i1]
        C2 = Cv[i2]
        bn = pair_threshold_box(y1, y2, a1, a2, a1n, a2n, E1, E2, b, K11, K12, K22, C1, C2)
        d1 = y1 * (a1n - a1)
        d2 = y2 * (a2n - a2)
        if linear and not compact:
            # (a parked phase folds its steps into w when it ends, _unpark)
            for (ii, dd) in ((i1, d1), (i2, d2)):
                if sp:
                    for q in range(ip[ii], ip[ii + 1]):
                        w[ix[q]] += dd * dt[q]
                else:
                    for q in range(dn.shape[1]):
                        w[q] += dd * dn[ii, q]
        if bin_w:
            # Platt's error-cache update, dE = d1 K(1, t) + d2 K(2, t), with
            # the shared-feature counts K
            nbk = ist[IS_NB]
            _ec_counts(br, nbf, cnt, 0, i1, nbk)
            _ec_counts(br, nbf, cnt, 1, i2, nbk)
            for k in range(nbk):
                EF[k] += d1 * cnt[0, k] + d2 * cnt[1, k]
        if use_rows:
            na = ist[IS_N_ACTIVE]
            # rows of i1 and i2 (i2's is usually cached by examineExample;
            # the two most recent rows are never evicted by a fetch)
            s1 = c_slot[i1]
            if s1 >= 0:
                lru_hit(c_prev, c_next, c_meta, s1)
            else:
                s1 = _fetch_miss(kd, cd, kdL, cdL, i1, act, ist, rowfull)
            if s2 < 0 or c_slot[i2] != s2:
                s2 = c_slot[i2]
                if s2 >= 0:
                    lru_hit(c_prev, c_next, c_meta, s2)
                else:
                    s2 = _fetch_miss(kd, cd, kdL, cdL, i2, act, ist, rowfull)
            if compact:
                # the layout's decision values (the layout is the active
                # set, contiguous: one axpy)
                for q in range(ist[IS_LAYOUT]):
                    FL[q] += d1 * R[s1, q] + d2 * R[s2, q]
            elif na == n:
                for t in range(n):
                    G[t] += d1 * R[s1, t] + d2 * R[s2, t]
            else:
                for p in range(na):
                    t = act[p]
                    G[t] += d1 * R[s1, t] + d2 * R[s2, t]
        if not linear:
            # Gbar[0] tracks sum over alpha_j = C of C y_j K_j (Gbar[1]: pending)
            if (a1 >= C1) != (a1n >= C1):
                gbar_change(kd, cd, i1, C1 * y1 if a1n >= C1 else -C1 * y1, Gbar, ist)
            if (a2 >= C2) != (a2n >= C2):
                gbar_change(kd, cd, i2, C2 * y2 if a2n >= C2 else -C2 * y2, Gbar, ist)
        alpha[i1] = a1n
        alpha[i2] = a2n
        # the unordered list of non-bound examples (O(1) per change)
        for (ii, aa, cc_ii) in ((i1, a1n, C1), (i2, a2n, C2)):
            inside = aa > 0.0 and aa < cc_ii
            if compact:
                BL[pos[ii]] = 0.0 if inside else np.inf
            pi = nbp[ii]
            if inside and pi < 0:
                k = ist[IS_NB]
                nbi[k] = ii
                nbp[ii] = k
                ist[IS_NB] = k + 1
                if bin_w:
                    _ec_column(br, nbf, ii, k, 1)
                    EF[k] = _xw(sp, dn, ip, ix, dt, w, ii) - y[ii]
            elif not inside and pi >= 0:
                k = ist[IS_NB] - 1
                last = nbi[k]
                nbi[pi] = last
                nbp[last] = pi
                nbp[ii] = -1
                ist[IS_NB] = k
                if bin_w:
                    _ec_column(br, nbf, ii, pi, 0)
                    if last != ii:
                        _ec_column(br, nbf, last, pi, 1)
                        _ec_column(br, nbf, last, k, 0)
                    EF[pi] = EF[k]
        fst[FS_B] = bn
        ist[IS_ITER] += 1
        if want_rec:
            _record(rec, ist, i1, i2, a1, a2, a1n, a2n, a2u, L, H, eta, E1, E2, b, bn,
                    np.int64(heur), y1, y2, K11, K12, K22, C1, C2)
        steps += 1
        ist[IS_SHRINK_COUNTER] -= 1
    return steps
