"""The compiled SMO state machine behind :class:`svmlab.SMOClassifier`.

Everything the algorithm knows lives in explicit arrays (see ``IS_*`` and
``FS_*`` below), so a fit can stop after any successful joint step and resume
later.  :func:`smo_run` is the ONLY implementation of the algorithm: the fast
path calls it with ``want_rec=False`` and a large step budget, the stepped
path calls it with ``kmax=1`` and ``want_rec=True`` to get the record buffer
filled.  Without records it pays one predictable branch per step.

Bookkeeping (documented here because it differs from Platt's pseudo-code):

* While examples are shrunk, kernel rows are computed (and cached) only for
  the active examples, as LIBSVM does.  When examples are reactivated the
  rows computed in full stay cached and the others are completed in place
  (or, when they are most of the cache, forgotten:
  :func:`svmlab.smo._fetch.complete_rows`); the gradient of the shrunk
  examples is then rebuilt from the cached rows of the free SVs where they
  are cached (:func:`reconstruct_gradient`).  As LIBSVM, after the final
  unshrink (the active set converged) a still-violating pair gets one step
  before the next shrinking check.
* WSS2's two loops over the active set (Fan, Chen and Lin 2005, Algorithm
  2): the first (``m``, ``M`` and ``i``) is fused into the previous step's
  gradient update while examples are shrunk; the second computes every
  gain branch-free into a scratch array, then scans it (vectorised when
  nothing is shrunk).  Same choices, in the same order, as the readable
  rule (:mod:`svmlab.reference.wss2`).  Measured on the small dense sets
  of issue 15 (banana, gauss-m, diabetes, splice; the same iterates before
  and after): 10% to 25% of the fit each.
* Platt's passes over the non-bound examples visit the non-bound examples of
  the start of the pass (kept in an O(1)-update list), in index order.
* The "gradient" ``G_i = sum_j alpha_j y_j K_ij`` (the decision value
  without the threshold) is kept for every *active* example, LIBSVM-style,
  so ``E_i = G_i + b - y_i`` is O(1) wherever Platt's heuristics need it;
  ``Gbar_i = sum_{alpha_j = C} C y_j K_ij`` lets the gradient of shrunk
  examples be rebuilt (LIBSVM's reconstruct_gradient).
* Parked phases (with ``shrinking``): Platt keeps an error cache for the
  non-bound examples only, and his inner loop works on them alone.  So
  when a run of passes over the non-bound examples begins, the examples at
  a bound are *parked*: no gradient updates, no kernel-row entries.  The
  remaining *layout* (the non-bound examples, fixed for the phase) gets a
  contiguous copy of its rows (``kdL``) and a compact row cache (``cdL``,
  in the memory of the full-row cache), and its decision values move to
  layout order (``FL``, with ``BL``: 0 if non-bound, inf at a bound), so a step costs
  one contiguous O(layout) update, not O(n) scattered ones.  (Not when
  every full row fits in the cache: the rows are then all cached, and
  parking would only drop them.)  Before the next full pass the parked
  examples get their exact gradient back, ``G_t += sum_j (alpha_j -
  alpha_j^park) y_j K_jt`` over the layout.  Step 3 of examineExample (the
  scan of the whole set) scans the active layout during a parked phase, as
  it scans only the active examples while shrunk; the final full pass over
  every example still decides convergence.
* The linear kernel folds the weight vector: ``w`` (dense, length d) is
  updated at every step (Platt's TR section 2.4) and in full passes
  ``E_i = w.x_i + b - y_i`` is a sparse dot product, with no kernel rows.
  During a parked phase the layout's decision values are kept in ``FL``
  (from ``w`` at the start, then updated with rows against the layout),
  which is cheaper than a sparse dot product per candidate; the phase's
  steps are folded into ``w`` when it ends (``w`` is not read meanwhile,
  and the fitted ``coef_`` comes from ``alpha``).  With binary inputs the
  full passes also keep Platt's error cache for the non-bound examples
  (``EF``) instead of a sparse dot product per non-bound example and step.
  It is updated with exact shared-feature counts, from a feature-major
  0/1 copy of the non-bound rows (``nbf``, see :func:`_ec_counts`).
* Weights (LIBSVM's weighted C-SVC): every example has its own upper bound
  ``Cv[i] = C * weight_i``; ``Cv`` is read wherever the unweighted
  algorithm reads C (the box of a pair is ``[0, Cv[i1]] x [0, Cv[i2]]``,
  see :func:`svmlab.smo._pairstep.pair_step_box`; ``Gbar`` sums ``Cv[j] y_j
  K_j`` over the examples at their bound).  Without weights ``Cv`` is all
  C, and the iterates are bit for bit those of a scalar C.
* The random start positions of Platt's second-choice loops come from a
  Park-Miller "minimal standard" generator whose state is ``ist[IS_RNG]``
  (integer arithmetic that never overflows int64, so the compiled and the
  NUMBA_DISABLE_JIT paths draw the same numbers).
* Named state.  :func:`smo_run` takes its state as seven named tuples
  (:class:`KernelSide`, :class:`Problem`, :class:`Iterate`,
  :class:`PlattLists`, :class:`Layout`, :class:`ErrorCache`,
  :class:`Options`) and the record buffer, instead of 38 positional
  arguments.  Every field is documented on its tuple.
* Speed: numba updates reference counts (atomic operations) for every array
  argument of a compiled function and for every array taken out of a tuple
  or bound to a new name, and relies on an LLVM pass to remove the pairs
  that cancel.  In a function as large as :func:`smo_run` that pass leaves
  many of them in, and at tens of nanoseconds each they cost more than a
  step's own work.  So :func:`smo_run` takes every array out of the named
  tuples once per call, and its per-step path (Platt's examineExample and
  takeStep) is written out in its body, in sections named after Platt's
  procedures, calling only scalar functions and the small inlined loops
  that were there before.  Decision (measured on w8a, linear kernel,
  Platt, 1.2 million steps, best CPU time of two fits): moving the
  per-step procedures into helpers (``inline="always"`` or ordinary
  compiled functions taking the unpacked arrays) took 1.5 s to 1.8 s
  instead of 0.82 s, about 30% of it in the reference-count functions
  (``perf``); moving only the fall-back second-choice scans, the
  non-bound list update and the error-cache update took 1.17 s; even the
  end-of-pass bookkeeping as a function taking the named tuples (once per
  pass, 11,448 passes) cost 5% (0.77 s: every array of every tuple gets
  its count updated on entry and exit).  Helpers that run on rare events
  do take arrays: the parked-phase transitions (:func:`_park`,
  :func:`_repark`, :func:`_unpark`), unshrinking, shrinking, cache misses
  (:func:`_fetch_miss`), ``Gbar`` changes and the records.
* Kernel blocks (float32 rows of dense input, issue 15).  Profiled on
  MNIST test 8-vs-rest (10000 x 784, rbf, wss2, 200 MB, a loaded
  machine): of a traced 17.7 s fit, 11.5 s went to the two gradient
  reconstructions of shrinking (a float64 dot product per free SV and
  shrunk example), and most of the rest to single rows by SGEMV (1.3 ms
  each on a quiet machine); without shrinking the fit took 1.8 s, LIBSVM
  about 3.5 s.  Now, only when
  the cache holds float32 rows of dense input (``f32`` below; a float64
  cache keeps its row-by-row arithmetic):
  the reconstructions and the parked phases' gradient restores are SGEMM
  blocks (:mod:`svmlab.smo._fetch`); a miss of a full row fetches, as one
  SGEMM block, the rows likely needed next (:func:`_prefetch_wss2`: the
  next candidates of WSS2 by gradient; :func:`_prefetch_pass`: the next
  KKT violators of Platt's full pass), when the data have at least
  :data:`PREFETCH_MIN_FEATURES` features; and an unshrink keeps the rows
  computed in full, completing the others in place
  (:func:`svmlab.smo._fetch.complete_rows`).  Rows computed while shrunk
  stay entry by entry over the active set (:func:`kernel_row_subset`,
  vectorised ``dot32``): on MNIST they cost 0.5 ms each at ~1300 active
  examples, a few percent of the fit.  WSS2's selection is written out
  in :func:`smo_run`'s body (as Platt's steps are): a call taking the
  ``kd``/``cd`` tuples cost more than a step on a small active set
  (banana, 74,201 steps, mostly on ~50 active examples: 1.7x LIBSVM's
  time before, 1.3x after, same runs, same iterates).
* Records: the record buffer's slots are generated from the fields of
  :class:`svmlab.smo._records.SMOStep` (``SLOT.<field>``, see
  :mod:`svmlab.smo._records`); :func:`_record` writes one line per field.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from .._jit import njit

from .._kkt import in_low, in_up, intercept
from .._wss2 import gain_or_nan, takes_i, takes_j
from ._pairstep import pair_step_box, pair_threshold_box, segment_objective
from ._records import HEURISTICS, LAYOUT_ID, R_BUFFER, R_LAYOUT, R_SIZE, SLOT  # noqa: F401
from ._simd import extremes
from ..kernels.cache import (CacheData, cache_reset, fill_block, get_row, get_row_against,
                             get_row_subset, lru_hit)
from ..kernels._bits import popcount
from ..kernels._rows import (KernelData, is_dense_data, is_float64, kernel_row,
                             kernel_row_against, kernel_row_subset, row_dot)
from ._fetch import add_kernel_sum32, complete_rows, gathered_cols32

# --- integer state (Iterate.ist) ----------------------------------------------
IS_EXAMINE_ALL = 0  # Platt: current pass visits every (active) example
IS_POS = 1  # Platt: next index of the current pass
IS_NUM_CHANGED = 2  # Platt: successful steps in the current pass
IS_RNG = 3  # Park-Miller state
IS_DONE = 4  # 1 converged, 2 stalled (no progress possible)
IS_N_ACTIVE = 5  # examples active (neither shrunk nor parked)
IS_SHRINK_COUNTER = 6  # steps until the next shrinking check
IS_UNSHRUNK = 7  # the one-time LIBSVM unshrink near the end happened
IS_ITER = 8  # successful joint steps so far
IS_NB = 9  # number of non-bound examples (0 < alpha < Cv)
IS_PLEN = 10  # length of the current non-bound pass list (Platt)
IS_COMPACT = 11  # a parked phase is on: rows against the layout (kdL, cdL)
IS_REQUEST = 12  # the caller must build kdL/cdL: 1 for a new layout, 2 a compacted one
IS_LAYOUT = 13  # size of the parked phase's current layout (rows of kdL)
IS_LAYOUT0 = 14  # size of its layout at the park (rows of kdL0)
IS_SIZE = 15

# --- float state (Iterate.fst) ------------------------------------------------
FS_B = 0  # threshold b (svmlab sign: f(x) = sum alpha y K + b)
FS_SIZE = 1

# --- which rule chose a pair (SMOStep.heuristic names them: HEURISTICS) --------
H_MAXDIFF, H_NONBOUND, H_FULL, H_WSS2 = 0, 1, 2, 3

PLATT, WSS2 = 0, 1

# states of an example (the ``active`` array)
SHRUNK = 0  # dropped by LIBSVM's shrinking rule until the final unshrink
ACTIVE = 1
PARKED = 2  # at a bound during Platt's passes over the non-bound examples
_ONE = np.uint64(1)
_RNG_M = 2147483647
_RNG_A = 48271

# ----------------------------------------------------------------------------
# Named state: what smo_run reads and writes, grouped by concern.  n is the
# number of training examples.  The caller (svmlab.smo._estimator.SMORun)
# owns the arrays; the tuples only name them.


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
    #: KKT tolerance (Platt: on ``y_i E_i``; wss2: on ``m - M``)
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
    linear kernel (every array empty when unused, see :func:`smo_run`)."""

    #: float64 (n,) ``E - b`` of the non-bound examples, in ``nbi`` order
    EF: np.ndarray
    #: uint8 (64 * words, n) ``nbf[f, k] = 1`` if ``nbi[k]`` has feature f
    nbf: np.ndarray
    #: int32 (2, n) scratch: shared-feature counts of i1 and i2
    cnt: np.ndarray


class Options(NamedTuple):
    """The run's options (constant during a fit, except ``want_rec``)."""

    #: the kernel is linear (fold ``w``)
    linear: bool
    #: ``PLATT`` or ``WSS2``
    selection: int
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
    :func:`_xw`, chosen by the two per-sweep loops that pay for it: folded
    into ``_xw`` as a flag, the loop of :func:`_m_and_M` compiled 2 to 3
    times slower (measured on w8a)."""
    s = 0.0
    for p in range(indptr[i], indptr[i + 1]):
        s += w[indices[p]]
    return s


# <x_i, x_j> from the raw arrays: one home, in kernels (row_dot)
_xx = row_dot


@njit(cache=True)
def _row(kd, cd, i, act, ist, rowfull):
    """Full kernel row i through the cache, indexed by example; only the
    active entries are computed (and valid) while some are shrunk (a miss
    notes which in ``rowfull[i]``).  (During a parked phase rows are over
    the layout instead, see :func:`_fetch_miss`.)"""
    na = ist[IS_N_ACTIVE]
    if cd.slot_of[i] < 0:
        rowfull[i] = na == act.shape[0]
    if na == act.shape[0]:
        return get_row(kd, cd, i)
    return get_row_subset(kd, cd, i, act, na)


@njit(cache=True)
def _gbar_change(kd, cd, i, c, Gbar, ist):
    """Gbar += c K_i: at once with the cached full row when nothing is
    shrunk, else noted as pending (applied by reconstruct_gradient)."""
    n = Gbar.shape[1]
    if ist[IS_N_ACTIVE] == n:
        r = get_row(kd, cd, i)
        gb = Gbar[0]
        for t in range(n):
            gb[t] += c * r[t]
    else:
        Gbar[1, i] += c


@njit(cache=True)
def rebuild_active_list(active, act, ist):
    m = 0
    for i in range(active.shape[0]):
        if active[i] == ACTIVE:
            act[m] = i
            m += 1
    ist[IS_N_ACTIVE] = m


@njit(cache=True)
def _inactive(active):
    """The examples that are not ``ACTIVE`` (shrunk or parked), in index order."""
    m = 0
    for i in range(active.shape[0]):
        if active[i] != ACTIVE:
            m += 1
    inact = np.empty(m, dtype=np.int64)
    m = 0
    for i in range(active.shape[0]):
        if active[i] != ACTIVE:
            inact[m] = i
            m += 1
    return inact


@njit(cache=True)
def reconstruct_gradient(kd, cd, y, Cv, alpha, G, Gbar, active, linear, full, rowfull):
    """G_i for the inactive (shrunk or parked) examples, from Gbar and the
    free SVs (LIBSVM's reconstruct_gradient).  First brings Gbar up to date:
    while shrunk, bound changes are only noted in ``Gbar[1]`` (net
    coefficient per example) instead of costing a full kernel row each.
    A pending example or a free SV whose full row is in the cache
    (``rowfull``, see :func:`_row`) is summed from the cached row, which is
    the row :func:`kernel_row` would compute, bit for bit; the others' rows
    are computed (on banana 4900, 380 pending rows at the first unshrink,
    most of them cached: 14.7 ms before; on diabetes, 197 free SVs times 570
    shrunk examples, 0.7 ms, about 5% of the fit, each time).

    With a float32 cache of dense input both sums are computed as SGEMM
    blocks (:mod:`svmlab.smo._fetch`: the cache's float32 kernel values,
    LIBSVM's ``Qfloat``, summed in float64); otherwise row by row, the
    arithmetic of the float64 cache bit for bit."""
    n = alpha.shape[0]
    if linear:
        return
    if not is_float64(cd.rows) and is_dense_data(kd):
        _reconstruct_blocks(kd, y, Cv, alpha, G, Gbar, active)
        return
    gb = Gbar[0]
    pend = Gbar[1]
    for j in range(n):
        if pend[j] != 0.0:
            c = pend[j]
            s = cd.slot_of[j]
            if s >= 0 and rowfull[j]:
                r = cd.rows[s]
                for t in range(n):
                    gb[t] += c * r[t]
            else:
                kernel_row(kd, j, full)
                for t in range(n):
                    gb[t] += c * full[t]
            pend[j] = 0.0
    inact = _inactive(active)
    n_inactive = inact.shape[0]
    if n_inactive == 0:
        return
    for p in range(n_inactive):
        G[inact[p]] = gb[inact[p]]
    for j in range(n):
        aj = alpha[j]
        if aj > 0.0 and aj < Cv[j]:
            c = aj * y[j]
            s = cd.slot_of[j]
            if s >= 0 and rowfull[j]:
                # (LIBSVM reads Q_j from its cache here too)
                r = cd.rows[s]
                for p in range(n_inactive):
                    i = inact[p]
                    G[i] += c * r[i]
            else:
                kernel_row_subset(kd, j, inact, n_inactive, full)
                for p in range(n_inactive):
                    i = inact[p]
                    G[i] += c * full[i]


@njit(cache=True)
def _reconstruct_blocks(kd, y, Cv, alpha, G, Gbar, active):
    """:func:`reconstruct_gradient` by kernel blocks (float32 values, dense
    input): ``Gbar[0] += sum_j Gbar[1, j] K_j`` over the pending j, then
    ``G_t = Gbar_t + sum_{free j} alpha_j y_j K_jt`` for the inactive t,
    each as a few SGEMMs (:func:`svmlab.smo._fetch.add_kernel_sum32`)."""
    n = alpha.shape[0]
    gb = Gbar[0]
    pend = Gbar[1]
    rows = np.empty(n, np.int64)
    coef = np.empty(n)
    k = 0
    for j in range(n):
        if pend[j] != 0.0:
            rows[k] = j
            coef[k] = pend[j]
            pend[j] = 0.0
            k += 1
    if k > 0:
        Z, sqz = gathered_cols32(kd, rows, n, True)
        add_kernel_sum32(kd, rows, coef, k, Z, sqz, gb)
    inact = _inactive(active)
    n_inactive = inact.shape[0]
    if n_inactive == 0:
        return
    k = 0
    for j in range(n):
        aj = alpha[j]
        if aj > 0.0 and aj < Cv[j]:
            rows[k] = j
            coef[k] = aj * y[j]
            k += 1
    acc = np.zeros(n_inactive)
    for p in range(n_inactive):
        acc[p] = gb[inact[p]]
    Z, sqz = gathered_cols32(kd, inact, n_inactive, False)
    add_kernel_sum32(kd, rows, coef, k, Z, sqz, acc)
    for p in range(n_inactive):
        G[inact[p]] = acc[p]


@njit(cache=True)
def _m_and_M(kd, y, Cv, alpha, G, w, act, ist, lin_w):
    """m = max_{I_up} -F_t, M = min_{I_low} -F_t over active t, F_t = f0_t - y_t
    (LIBSVM's -y_t grad_t).  Returns (m, i_m, M).  With ``lin_w`` (Platt's
    linear full passes, which keep no G) it first stores ``G_t = w.x_t``
    for the active examples, for :func:`_shrink` to reuse.  Written with
    selects, not branches: the set memberships are unpredictable."""
    m = -np.inf
    M = np.inf
    im = -1
    sp, dn, ip, ix, dt = kd.sparse, kd.dense, kd.indptr, kd.indices, kd.data
    ones = kd.binary and sp
    for p in range(ist[IS_N_ACTIVE]):
        t = act[p]
        if lin_w:
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


@njit(cache=True)
def _unshrink(kd, cd, y, Cv, alpha, G, Gbar, active, act, ist, linear, full, rowfull):
    """Every example active again, with its exact gradient (LIBSVM's
    unshrink; never during a parked phase, which ends with :func:`_unpark`)."""
    if ist[IS_N_ACTIVE] < alpha.shape[0]:
        # rows cached while shrunk lack the entries that become active:
        # recompute them (or forget them all), keep the full ones; first,
        # so that the reconstruction reads the free SVs' rows from the cache
        complete_rows(kd, cd, rowfull)
    reconstruct_gradient(kd, cd, y, Cv, alpha, G, Gbar, active, linear, full, rowfull)
    active[:] = ACTIVE
    rebuild_active_list(active, act, ist)


@njit(cache=True)
def _park(kd, cd, y, Cv, alpha, G, w, active, act, ist, linear, pos, pos0, aref, lay, FL, BL):
    """Start of a phase of passes over the non-bound examples: park the
    active examples at a bound; True if any was parked.

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
    the extremes of ``FL - BL`` and ``FL + BL``."""
    n_parked = 0
    for p in range(ist[IS_N_ACTIVE]):
        t = act[p]
        a = alpha[t]
        if not (a > 0.0 and a < Cv[t]):
            active[t] = PARKED
            n_parked += 1
    if n_parked == 0:
        return False
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
        FL[p] = (_xw(sp, dn, ip, ix, dt, w, t) if linear else G[t]) - y[t]
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
    k = 0
    for j in range(n):
        if pos0[j] >= 0:
            cj = (alpha[j] - aref[j]) * y[j]
            if cj != 0.0:
                rows[k] = j
                coef[k] = cj
                k += 1
    acc = np.zeros(nc)
    Z, sqz = gathered_cols32(kd, cols, nc, False)
    add_kernel_sum32(kd, rows, coef, k, Z, sqz, acc)
    return acc


@njit(cache=True)
def _repark(kd, kdL0, y, Cv, alpha, G, active, act, ist, linear, pos, pos0, aref, lay, FL, BL,
            R, owner, f32):
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
    w).  ``f32``: the cache holds float32 rows of dense input; the rebase
    sums are then SGEMM blocks (:func:`_layout_delta_blocks`)."""
    m = ist[IS_LAYOUT]
    n_bound = 0
    for p in range(m):
        if BL[p] != 0.0:
            n_bound += 1
    if (8 if linear else 4) * n_bound <= m:
        return False
    m0 = ist[IS_LAYOUT0]
    c, moved = _layout_deltas(y, alpha, pos0, aref, m0)
    rebase = moved and not linear
    tmp = np.empty(m0 if rebase and not f32 else 0)
    keep = np.empty(m - n_bound, dtype=np.int64)
    newly = np.empty(n_bound if rebase and f32 else 0, dtype=np.int64)
    nn = 0
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
    if nn > 0:
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
def _unpark(kd, kdL0, y, alpha, G, w, active, act, ist, linear, pos, pos0, aref, lay, FL, f32):
    """End of a parked phase (before a full pass): the parked examples become
    active again, with exact gradients.  The layout's come from ``FL``; the
    others' are those of the phase start (rebased so by :func:`_repark`) and
    get ``G_t += sum_j (alpha_j - aref_j) y_j K_jt`` over the layout at the
    park (only the examples whose multiplier moved in the phase count),
    computed parked example by parked example against that layout's
    contiguous rows ``kdL0``, which stay in the CPU cache.  The linear
    kernel's full passes take E from the folded w instead: the phase's
    steps are folded into it here, ``w += sum_j (alpha_j - aref_j) y_j
    x_j``, rather than at every step.  ``f32``: the cache holds float32
    rows of dense input; the sums are then SGEMM blocks
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
        if moved and f32:
            cols = np.empty(n, dtype=np.int64)
            nc = 0
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
    see :func:`smo_run`) from scratch (``nbf`` is all zero): ``EF[k] =
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


@njit(cache=True)
def _shrink(kd, cd, y, Cv, tol, alpha, G, Gbar, w, active, act, ist, linear, full, rowfull):
    """LIBSVM's do_shrinking: drop bound examples that cannot be part of a
    violating pair (Joachims 1999; Fan, Chen and Lin 2005, section 5).  The
    caller never shrinks during a parked phase (its layout stays fixed)."""
    m, im, M = _m_and_M(kd, y, Cv, alpha, G, w, act, ist, linear)
    if ist[IS_UNSHRUNK] == 0 and m - M <= 10.0 * tol:
        ist[IS_UNSHRUNK] = 1
        _unshrink(kd, cd, y, Cv, alpha, G, Gbar, active, act, ist, linear, full, rowfull)
        m, im, M = _m_and_M(kd, y, Cv, alpha, G, w, act, ist, linear)
    # (G holds w.x_t for the linear kernel too: _m_and_M stored it)
    changed = False
    for p in range(ist[IS_N_ACTIVE]):
        t = act[p]
        a = alpha[t]
        if a > 0.0 and a < Cv[t]:
            continue
        mf = y[t] - G[t]
        up_only = (a <= 0.0) if y[t] > 0 else (a >= Cv[t])
        if (mf < M) if up_only else (mf > m):
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


@njit(cache=True)
def _fetch_miss(kd, cd, kdL, cdL, i, act, ist, rowfull):
    """Compute (and cache) row i after a cache miss; return its slot.  In a
    parked phase the row is over the layout (position p for ``lay[p]``),
    against the contiguous copy ``kdL`` of its rows, in the compact cache."""
    if ist[IS_COMPACT]:
        get_row_against(kd, kdL, cdL, i)
        return cdL.slot_of[i]
    _row(kd, cd, i, act, ist, rowfull)
    return cd.slot_of[i]


#: rows a miss of Platt's full pass fetches as one block (the missing row and
#: the next KKT violators of the pass, see :func:`_prefetch_pass`)
PREFETCH_ROWS = 32
#: fewest features for which a miss fetches a block: with few features a
#: row costs its n transforms, not the read of X, and a block gains nothing
#: (ijcnn1, 20000 x 22, wss2: 1.49 s with blocks, 1.48 s without)
PREFETCH_MIN_FEATURES = 64


@njit(cache=True)
def _fill_full_rows(kd, cd, rows, k, rowfull):
    """Cache the full rows ``rows[:k]`` as one block (:func:`fill_block`) and
    note those now cached as computed in full (``rowfull``)."""
    fill_block(kd, cd, rows, k)
    for q in range(k):
        if cd.slot_of[rows[q]] >= 0:
            rowfull[rows[q]] = True


@njit(cache=True)
def _prefetch_wss2(kd, cd, i, m, y, Cv, alpha, G, act, ist, rowfull):
    """A miss of the row of WSS2's ``i`` (float32 rows of dense input, nothing
    shrunk: full rows): fetch it with the rows of the examples likely to be
    chosen next, as one kernel block (:func:`svmlab.kernels.cache.fill_block`,
    one SGEMM): the uncached examples of ``I_up`` with the largest ``-y_t
    grad_t`` (the next i's) and of ``I_low`` with the smallest (the j's
    whose steps are largest), up to :data:`PREFETCH_ROWS` rows in all, half
    from each side.  While examples are shrunk the row is fetched alone
    (rows over the active set only, :func:`_row`).  Returns the slot of ``i``.

    Cache bound: as :func:`_prefetch_pass`."""
    n = alpha.shape[0]
    na = ist[IS_N_ACTIVE]
    if na < n:
        _row(kd, cd, i, act, ist, rowfull)
        return cd.slot_of[i]
    half = PREFETCH_ROWS // 2
    rows = np.empty(PREFETCH_ROWS, np.int64)
    rows[0] = i
    k = 1
    slot_of = cd.slot_of
    # the uncached candidates of each side, best first: two small sorted
    # buffers (insertion when a candidate beats the buffer's worst), O(n)
    ku = half - 1
    kl = PREFETCH_ROWS - half
    cu = np.empty(ku, np.int64)
    vu = np.full(ku, np.inf)
    cl = np.empty(kl, np.int64)
    vl = np.full(kl, np.inf)
    nu = 0
    nl = 0
    for p in range(na):
        t = act[p]
        if t == i or slot_of[t] >= 0:
            continue
        mf = y[t] - G[t]
        if in_up(y[t], alpha[t], Cv[t]) and -mf < vu[ku - 1]:
            nu = _insert_best(cu, vu, nu, t, -mf)
        elif in_low(y[t], alpha[t], Cv[t]) and mf < m and mf < vl[kl - 1]:
            nl = _insert_best(cl, vl, nl, t, mf)
    for q in range(nu):
        rows[k] = cu[q]
        k += 1
    for q in range(nl):
        rows[k] = cl[q]
        k += 1
    _fill_full_rows(kd, cd, rows, k, rowfull)
    return slot_of[i]


@njit(cache=True, inline="always")
def _insert_best(c, v, cnt, t, val):
    """Insert example t with value val into the buffer ``c[:cnt]`` kept
    sorted by increasing ``v`` (the largest dropped when full); returns the
    new count."""
    k = c.shape[0]
    q = cnt if cnt < k else k - 1
    while q > 0 and v[q - 1] > val:
        if q < k:
            c[q] = c[q - 1]
            v[q] = v[q - 1]
        q -= 1
    c[q] = t
    v[q] = val
    return cnt + 1 if cnt < k else k


@njit(cache=True)
def _prefetch_pass(kd, cd, i2, y, Cv, alpha, G, b, tol, active, ist, rowfull):
    """A miss of row ``i2`` in Platt's pass over every example (nothing
    shrunk, no parked phase, float32 rows of dense input): fetch it together
    with the rows of the next examples of the pass that violate KKT now
    (``y_t E_t < -tol`` with ``alpha_t < C_t``, or ``> tol`` with
    ``alpha_t > 0``) and are not cached, up to :data:`PREFETCH_ROWS` rows,
    as one kernel block (:func:`svmlab.kernels.cache.fill_block`: one SGEMM;
    a 32-row block costs about a quarter of 32 single rows on MNIST).
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
    k = 1
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
    _fill_full_rows(kd, cd, rows, k, rowfull)
    return slot_of[i2]


# ----------------------------------------------------------------------------
# smo_run (its per-step path and the end of a pass are in its body, see the
# module docstring).


@njit(cache=True, inline="always")
def _modes(linear, selection, shrinking, compact, binary, n_error_cache, n_cache_rows, n):
    """The bookkeeping modes of one call of :func:`smo_run` (fixed within it).

    Parameters
    ----------
    linear : bool
        The kernel is linear.
    selection : int
        ``PLATT`` or ``WSS2``.
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
        Platt's linear SMO: full passes take E from the folded ``w`` (wss2
        keeps ``G``, it needs the row of i anyway).
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
    e_from_w = linear and selection == PLATT
    lin_w = e_from_w and not compact
    use_rows = not lin_w
    bin_ec = e_from_w and binary and n_error_cache > 0
    bin_w = bin_ec and not compact
    can_park = shrinking and (e_from_w or n_cache_rows < n)
    return e_from_w, lin_w, use_rows, bin_ec, bin_w, can_park


@njit(cache=True)
def smo_run(ks, pb, it, pl, lo, ec, rec, opt, kmax):
    """Advance by up to ``kmax`` successful joint steps; return how many were
    taken.  ``ist[IS_DONE]`` becomes nonzero once the stopping rule holds.

    Solves the SMO dual (Platt, MSR-TR-98-14, eq. 11; weights give each
    example its own bound)::

        max_alpha  sum_i alpha_i - 1/2 sum_ij y_i y_j K_ij alpha_i alpha_j
        s.t.       0 <= alpha_i <= C_i,   sum_i y_i alpha_i = 0

    by Platt's analytic joint steps on pairs chosen by his heuristics (or by
    LIBSVM's WSS2, ``opt.selection``), until every example obeys the KKT
    conditions within ``tol`` (wss2: ``m - M <= tol``).

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
    helpers, for speed (measured, see the module docstring).

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
        Kernel kind, selection, shrinking and recording options.
    kmax : int
        Most successful joint steps to take in this call.
    """
    # ---- the named state, unpacked once (see the module docstring) ----
    kd, cd, kdL, kdL0, cdL, full = ks.kd, ks.cd, ks.kdL, ks.kdL0, ks.cdL, ks.full
    rowfull = ks.rowfull
    y, Cv, kdiag, tol, eps = pb.y, pb.Cv, pb.kdiag, pb.tol, pb.eps
    alpha, G, Gbar, w, fst, ist = it.alpha, it.G, it.Gbar, it.w, it.fst, it.ist
    active, act, nbi, nbp, plist = pl.active, pl.act, pl.nbi, pl.nbp, pl.plist
    pos, pos0, aref, lay, FL, BL = lo.pos, lo.pos0, lo.aref, lo.lay, lo.FL, lo.BL
    EF, nbf, cnt = ec.EF, ec.nbf, ec.cnt
    linear, selection, shrinking, shrink_every = opt.linear, opt.selection, opt.shrinking, \
        opt.shrink_every
    want_rec = opt.want_rec
    n = alpha.shape[0]
    steps = 0
    if ist[IS_REQUEST]:
        return 0
    compact = ist[IS_COMPACT] != 0
    e_from_w, lin_w, use_rows, bin_ec, bin_w, can_park = _modes(
        linear, selection, shrinking, compact, kd.binary, EF.shape[0], cd.rows.shape[0], n)
    # float32 rows of dense input: the rare large kernel sums as SGEMM blocks
    f32 = not is_float64(cd.rows) and is_dense_data(kd)
    br = kd.brows
    sp, dn, ip, ix, dt = kd.sparse, kd.dense, kd.indptr, kd.indices, kd.data
    ones = kd.binary and sp  # CSR values all 1: sparse dot products skip them
    cc = cdL if compact else cd
    R, c_slot, c_prev, c_next, c_meta = cc.rows, cc.slot_of, cc.prev, cc.next, cc.meta
    # Platt's max |E1 - E2| scans the layout in a parked phase, the error
    # cache in a binary linear full pass
    scan_E = lay if compact else nbi
    scan_F = FL if compact else EF
    # WSS2's first loop, fused into the previous step's gradient update
    pre = False
    pre_m = -np.inf
    pre_M = np.inf
    pre_i = -1
    while steps < kmax and ist[IS_DONE] == 0:
        if shrinking and ist[IS_SHRINK_COUNTER] <= 0 and not compact:
            pre = False
            ist[IS_SHRINK_COUNTER] = shrink_every
            _shrink(kd, cd, y, Cv, tol, alpha, G, Gbar, w, active, act, ist, e_from_w, full,
                    rowfull)
        b = fst[FS_B]
        s2 = -1
        if selection == WSS2:
            # ---- WSS2 (Fan, Chen and Lin 2005, Algorithm 2; the rule's
            # pieces: svmlab._wss2), its loops written out here: a call
            # taking the kd/cd tuples costs more than a step on a small
            # active set (reference counts, see the module docstring) ----
            na = ist[IS_N_ACTIVE]
            if pre:
                # m, M and i from the gradient update of the previous step
                # (below: the same loop, fused into it)
                mw, Mw, i1 = pre_m, pre_M, pre_i
                pre = False
            else:
                mw = -np.inf
                Mw = np.inf
                i1 = -1
                for p in range(na):
                    t = act[p]
                    mf = y[t] - G[t]
                    a = alpha[t]
                    c = Cv[t]
                    u = mf if in_up(y[t], a, c) else -np.inf
                    if takes_i(u, mw):
                        mw = u
                        i1 = t
                    v = mf if in_low(y[t], a, c) else np.inf
                    Mw = v if v < Mw else Mw
            if mw - Mw <= tol:
                if na < n:
                    # LIBSVM: reconstruct the gradient, select again over
                    # every example and, if a pair still violates, shrink
                    # again after one step (counter 1: the steps until the
                    # next shrinking check would otherwise run over all n
                    # examples, with full rows)
                    _unshrink(kd, cd, y, Cv, alpha, G, Gbar, active, act, ist, False, full,
                              rowfull)
                    ist[IS_UNSHRUNK] = 1
                    if shrinking:
                        ist[IS_SHRINK_COUNTER] = 1
                    continue
                ist[IS_DONE] = 1
                break
            s1 = c_slot[i1]
            if s1 >= 0:
                lru_hit(c_prev, c_next, c_meta, s1)
            elif f32 and dn.shape[1] >= PREFETCH_MIN_FEATURES:
                s1 = _prefetch_wss2(kd, cd, i1, mw, y, Cv, alpha, G, act, ist, rowfull)
            else:
                s1 = _fetch_miss(kd, cd, kdL, cdL, i1, act, ist, rowfull)
            Kii = kdiag[i1]
            i2 = -1
            best = np.inf
            # Two loops: the gains -b^2/a of every active t into the scratch
            # ``full`` (branch-free: whether t is in I_low with b > 0 is
            # unpredictable; NaN where not, which never passes ``v <= best``;
            # with nothing shrunk the loop reads contiguous arrays and LLVM
            # vectorises it, divisions included), then the scan for the
            # smallest (ties to the largest index, as the readable rule)
            gain = full
            if na == n:
                for t in range(n):
                    gain[t] = gain_or_nan(in_low(y[t], alpha[t], Cv[t]), mw, y[t] - G[t], Kii,
                                          kdiag[t], R[s1, t])
            else:
                for p in range(na):
                    t = act[p]
                    gain[p] = gain_or_nan(in_low(y[t], alpha[t], Cv[t]), mw, y[t] - G[t], Kii,
                                          kdiag[t], R[s1, t])
            for p in range(na):
                if takes_j(gain[p], best):
                    best = gain[p]
                    i2 = p
            if i2 >= 0 and na < n:
                i2 = act[i2]
            if i2 < 0:
                ist[IS_DONE] = 2
                break
            K12 = R[s1, i2]
            E1 = G[i1] + b - y[i1]
            E2 = G[i2] + b - y[i2]
            moved, a1n, a2n, a2u, L, H, eta = pair_step_box(y[i1], y[i2], alpha[i1], alpha[i2],
                                                            E1, E2, b, kdiag[i1], K12, kdiag[i2],
                                                            Cv[i1], Cv[i2], eps)
            if not moved or i1 == i2:
                ist[IS_DONE] = 2
                break
            heur = H_WSS2
        else:
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
                        _unshrink(kd, cd, y, Cv, alpha, G, Gbar, active, act, ist, e_from_w,
                                  full, rowfull)
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
                        if _park(kd, cd, y, Cv, alpha, G, w, active, act, ist, e_from_w, pos,
                                 pos0, aref, lay, FL, BL):
                            if bin_ec:
                                _clear_error_cache(kd, nbi, nb, nbf)
                            ist[IS_REQUEST] = 1
                            break
                    elif compact:
                        if _repark(kd, kdL0, y, Cv, alpha, G, active, act, ist, e_from_w,
                                   pos, pos0, aref, lay, FL, BL, cdL.rows, cdL.owner, f32):
                            ist[IS_REQUEST] = 2
                            break
                elif compact:
                    _unpark(kd, kdL0, y, alpha, G, w, active, act, ist, e_from_w, pos, pos0,
                            aref, lay, FL, f32)
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
                elif f32 and not compact and ist[IS_EXAMINE_ALL] and ist[IS_N_ACTIVE] == n \
                        and dn.shape[1] >= PREFETCH_MIN_FEATURES:
                    s2 = _prefetch_pass(kd, cd, i2, y, Cv, alpha, G, b, tol, active, ist,
                                        rowfull)
                else:
                    s2 = _fetch_miss(kd, cd, kdL, cdL, i2, act, ist, rowfull)
            K22 = kdiag[i2]
            i1 = -1
            # second choice 1) the non-bound example maximising |E1 - E2|
            nb = ist[IS_NB]
            t1 = -1
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
            elif na == n and selection != WSS2:
                for t in range(n):
                    G[t] += d1 * R[s1, t] + d2 * R[s2, t]
            elif selection == WSS2:
                # WSS2: the next step's first loop (m, M, i) fused into the
                # update, one pass over the active set instead of two (the
                # same values in the same order: the same i); valid unless
                # the next iteration shrinks or unshrinks first (``pre``).
                # (Every active example in index order when none is shrunk.)
                alpha[i1] = a1n
                alpha[i2] = a2n
                pre_m = -np.inf
                pre_M = np.inf
                pre_i = -1
                for p in range(na):
                    t = act[p] if na < n else p
                    g = G[t] + (d1 * R[s1, t] + d2 * R[s2, t])
                    G[t] = g
                    mf = y[t] - g
                    a = alpha[t]
                    c = Cv[t]
                    u = mf if in_up(y[t], a, c) else -np.inf
                    if takes_i(u, pre_m):
                        pre_m = u
                        pre_i = t
                    v = mf if in_low(y[t], a, c) else np.inf
                    pre_M = v if v < pre_M else pre_M
                pre = True
            else:
                for p in range(na):
                    t = act[p]
                    G[t] += d1 * R[s1, t] + d2 * R[s2, t]
        if not e_from_w:
            # Gbar[0] tracks sum over alpha_j = C of C y_j K_j (Gbar[1]: pending)
            if (a1 >= C1) != (a1n >= C1):
                _gbar_change(kd, cd, i1, C1 * y1 if a1n >= C1 else -C1 * y1, Gbar, ist)
            if (a2 >= C2) != (a2n >= C2):
                _gbar_change(kd, cd, i2, C2 * y2 if a2n >= C2 else -C2 * y2, Gbar, ist)
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
            _record(rec, ist, i1, i2, a1, a2, a1n, a2n, a2u, L, H, eta, E1, E2, b, bn, heur,
                    y1, y2, K11, K12, K22, C1, C2)
        steps += 1
        ist[IS_SHRINK_COUNTER] -= 1
    return steps


@njit(cache=True)
def wss2_intercept(kd, cd, y, Cv, alpha, G, Gbar, w, active, linear, full, rowfull):
    """LIBSVM's threshold: the mean of y_i - f0_i over free SVs, else the
    midpoint of the interval the KKT conditions allow."""
    reconstruct_gradient(kd, cd, y, Cv, alpha, G, Gbar, active, linear, full, rowfull)
    n = alpha.shape[0]
    v = np.empty(n)
    sp, dn, ip, ix, dt = kd.sparse, kd.dense, kd.indptr, kd.indices, kd.data
    for i in range(n):
        v[i] = y[i] - (_xw(sp, dn, ip, ix, dt, w, i) if linear else G[i])
    return intercept(v, y, alpha, Cv)
