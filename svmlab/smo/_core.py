"""The compiled pieces both SMO loops share: their state slots, the active
set, kernel rows through the cache, ``Gbar`` and the gradient
reconstruction of LIBSVM's shrinking.

Two compiled loops solve SMO's problems: :func:`svmlab.smo._platt.platt_run`
(Platt's heuristics, C-SVC) and :func:`svmlab.smo._dual_core.dual_run`
(LIBSVM's WSS 2 on the generalised dual).  Each fit compiles only the loop
it runs; this module holds what both read and write.  Every function here
takes plain arrays (no named tuples), so each loop calls it with its own.

State of a run (explicit arrays, so a fit can stop after any step and go on
later): the multipliers ``alpha``; ``G_t = sum_s alpha_s y_s K_ts`` (the
decision value without intercept, ``f0``) for the active examples;
``Gbar[0]_t = sum_{alpha_s = U_s} U_s y_s K_ts`` (LIBSVM's ``G_bar``, in
the same f0 form) with ``Gbar[1]`` the bound changes noted while examples
are shrunk; the integer state ``ist`` (``IS_*``) and the float state
``fst`` (``FS_*``); the active set ``active``/``act``.

Shrinking (LIBSVM's, Fan, Chen and Lin 2005, section 5): while examples
are shrunk their gradient is not updated and kernel rows are computed only
over the active examples; a row computed with every entry is noted in
``rowfull`` (it survives an unshrink, :func:`svmlab.smo._fetch.complete_rows`);
at an unshrink the shrunk examples' gradient is rebuilt from ``Gbar`` and
the free SVs (:func:`reconstruct_gradient`).

Feature switches.  A loop's features that a fit may not use (the nu rules,
an ``idx`` map, float32 kernel blocks) are passed as arguments that are
either ``None`` (off) or ``True`` (on), and tested only as ``x is None`` /
``x is not None``.  numba removes a branch on a ``None``-typed argument
before typing, so a fit without the feature compiles none of its code (a
runtime flag would compile every branch, used or not), and the signatures
stay plain types, found in numba's cache as they are
(docs/decisions/26s09-compile-time.md).  One exception: ``blocks`` is None
only for float64 rows; with float32 rows it is a runtime bool, so that
dense and CSR float32 fits share one compiled loop (:func:`blocks_switch`).
"""

from __future__ import annotations

import numpy as np

from .._jit import njit
from ..kernels._rows import is_dense_data, kernel_row, kernel_row_subset
from ..kernels.cache import fill_block, get_row, get_row_subset
from ._fetch import add_kernel_sum32, all_cols32, gathered_cols32

# --- integer state (ist) --------------------------------------------------------
IS_EXAMINE_ALL = 0  # Platt: current pass visits every (active) example
IS_POS = 1  # Platt: next index of the current pass
IS_NUM_CHANGED = 2  # Platt: successful steps in the current pass
IS_RNG = 3  # Platt: Park-Miller state
IS_DONE = 4  # 1 converged, 2 stalled (no progress possible)
IS_N_ACTIVE = 5  # examples active (neither shrunk nor parked)
IS_SHRINK_COUNTER = 6  # steps until the next shrinking check
IS_UNSHRUNK = 7  # the one-time LIBSVM unshrink near the end happened
IS_ITER = 8  # successful joint steps so far
IS_NB = 9  # number of free (non-bound) examples, 0 < alpha < U
IS_PLEN = 10  # Platt: length of the current non-bound pass list
IS_COMPACT = 11  # Platt: a parked phase is on (rows against the layout)
IS_REQUEST = 12  # Platt: the caller must build the layout's rows: 1 new, 2 compacted
IS_LAYOUT = 13  # Platt: size of the parked phase's current layout
IS_LAYOUT0 = 14  # Platt: size of its layout at the park
IS_SIZE = 15

# --- float state (fst) ----------------------------------------------------------
FS_B = 0  # the running threshold b (svmlab's sign: f(x) = sum alpha y K + b)
FS_SIZE = 1

# --- which rule chose a pair (the records' ``heuristic`` names them) -------------
H_MAXDIFF, H_NONBOUND, H_FULL, H_WSS2 = 0, 1, 2, 3

# --- states of an example (the ``active`` array) --------------------------------
SHRUNK = 0  # dropped by LIBSVM's shrinking rule until the final unshrink
ACTIVE = 1
PARKED = 2  # Platt: at a bound during the passes over the non-bound examples

#: rows a miss fetches as one block with the rows likely needed next
#: (float32 rows of dense input: WSS 2's next candidates, Platt's next KKT
#: violators)
PREFETCH_ROWS = 32
#: fewest features for which a miss fetches a block: with few features a
#: row costs its n transforms, not the read of X, and a block gains nothing
PREFETCH_MIN_FEATURES = 64


@njit(cache=True)
def fetch_row(kd, cd, i, act, ist, rowfull):
    """Full kernel row i through the cache: every entry while nothing is
    shrunk, else only the active entries ``act[:n_active]`` (the others
    stale); a miss notes in ``rowfull[i]`` whether the row has every entry."""
    na = ist[IS_N_ACTIVE]
    if cd.slot_of[i] < 0:
        rowfull[i] = na == act.shape[0]
    if na == act.shape[0]:
        return get_row(kd, cd, i)
    return get_row_subset(kd, cd, i, act, na)


@njit(cache=True)
def gbar_change(kd, cd, i, c, Gbar, ist):
    """``Gbar[0] += c K_i`` (example i reached or left its bound): at once
    from the cached full row while nothing is shrunk, else noted in
    ``Gbar[1, i]`` (applied by :func:`reconstruct_gradient`)."""
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
    """``act[:n_active]``: the ``ACTIVE`` examples in index order."""
    m = 0
    for i in range(active.shape[0]):
        if active[i] == ACTIVE:
            act[m] = i
            m += 1
    ist[IS_N_ACTIVE] = m


@njit(cache=True)
def inactive_list(active):
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
def reconstruct_gradient(kd, cd, y, U, alpha, G, Gbar, active, full, rowfull, blocks):
    """``G_t`` for every inactive (shrunk or parked) example t, from
    ``Gbar`` and the free SVs (LIBSVM's reconstruct_gradient).

    First brings ``Gbar[0]`` up to date with the pending bound changes
    ``Gbar[1]`` (noted while shrunk instead of costing a full row each),
    then ``G_t = Gbar_t + sum_{0 < alpha_j < U_j} alpha_j y_j K_jt``.  A
    pending example's or free SV's row is read from the cache when it is
    there in full (``rowfull``: the row :func:`kernel_row` would compute),
    else computed into the scratch ``full`` (length n).

    ``blocks`` (a feature switch, None or True: True only for a float32
    cache of dense input): both sums as float32 SGEMM blocks summed in
    float64 (:func:`_reconstruct_blocks`, LIBSVM's ``Qfloat`` values);
    otherwise row by row, in float64.
    """
    n = alpha.shape[0]
    if blocks is not None and blocks:
        _reconstruct_blocks(kd, y, U, alpha, G, Gbar, active)
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
    inact = inactive_list(active)
    n_inactive = inact.shape[0]
    if n_inactive == 0:
        return
    for p in range(n_inactive):
        G[inact[p]] = gb[inact[p]]
    for j in range(n):
        aj = alpha[j]
        if aj > 0.0 and aj < U[j]:
            c = aj * y[j]
            s = cd.slot_of[j]
            if s >= 0 and rowfull[j]:
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
def _reconstruct_blocks(kd, y, U, alpha, G, Gbar, active):
    """:func:`reconstruct_gradient` by kernel blocks (float32 values, dense
    input): ``Gbar[0] += sum_j Gbar[1, j] K_j`` over the pending j, then
    ``G_t = Gbar_t + sum_{free j} alpha_j y_j K_jt`` for the inactive t,
    each as a few SGEMMs (:func:`svmlab.smo._fetch.add_kernel_sum32`)."""
    n = alpha.shape[0]
    gb = Gbar[0]
    pend = Gbar[1]
    rows = np.empty(n, np.int64)
    coef = np.empty(n)
    k = np.int64(0)
    for j in range(n):
        if pend[j] != 0.0:
            rows[k] = j
            coef[k] = pend[j]
            pend[j] = 0.0
            k += 1
    if k > 0:
        Z, sqz = all_cols32(kd)
        add_kernel_sum32(kd, rows, coef, k, Z, sqz, gb)
    inact = inactive_list(active)
    n_inactive = inact.shape[0]
    if n_inactive == 0:
        return
    k = np.int64(0)
    for j in range(n):
        aj = alpha[j]
        if aj > 0.0 and aj < U[j]:
            rows[k] = j
            coef[k] = aj * y[j]
            k += 1
    acc = np.zeros(n_inactive)
    for p in range(n_inactive):
        acc[p] = gb[inact[p]]
    Z, sqz = gathered_cols32(kd, inact, n_inactive)
    add_kernel_sum32(kd, rows, coef, k, Z, sqz, acc)
    for p in range(n_inactive):
        G[inact[p]] = acc[p]


@njit(cache=True, inline="always")
def be_shrunk(y, a, u, mf, m, M):
    """LIBSVM's shrinking rule (``be_shrunk``) for an example at a bound:
    it can join no violating pair while ``m``, ``M`` (the maximum over I_up
    and the minimum over I_low of ``mf = -y grad``) hold.  An example that
    can only move up (``I_up`` only: ``a = 0`` with ``y > 0``, ``a = U``
    with ``y < 0``) is shrunk when ``mf < M``, one that can only move down
    when ``mf > m``.  The caller skips free examples."""
    up_only = (a <= 0.0) if y > 0 else (a >= u)
    return (mf < M) if up_only else (mf > m)


@njit(cache=True)
def fill_full_rows(kd, cd, rows, k, rowfull):
    """Cache the full rows ``rows[:k]`` as one block (:func:`fill_block`) and
    note those now cached as computed in full (``rowfull``)."""
    fill_block(kd, cd, rows, k)
    for q in range(k):
        if cd.slot_of[rows[q]] >= 0:
            rowfull[rows[q]] = True


def blocks_apply(kd, cd):
    """Whether the float32 block paths apply: a float32 cache of dense input
    (not CSR, bit-packed or precomputed)."""
    return cd.rows.dtype == np.float32 and is_dense_data(kd)


def blocks_switch(kd, cd, allowed=True):
    """The ``blocks`` argument of the loops: None for a float64 cache (no
    block code is compiled), and for a float32 cache a runtime bool,
    :func:`blocks_apply` (and ``allowed``).  A float32 fit of dense input and
    one of CSR or bit-packed input share one compiled loop (the loop and
    every function it passes ``blocks`` to are typed once for float32
    rows, both paths included), instead of one specialisation each; the
    compiled code tests ``blocks is not None and blocks``, whose first half
    numba removes before typing for a None-typed argument
    (docs/decisions/28m01-one-home-and-compile-mass.md)."""
    if cd.rows.dtype != np.float32:
        return None
    return bool(allowed and is_dense_data(kd))
