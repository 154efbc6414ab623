"""The compiled WSS 2 loop of the generalised SVM dual (LIBSVM's ``Solver``
and, for the nu forms, ``Solver_NU``).

Problem (LIBSVM's form; l dual variables, n examples)::

    min_a  1/2 a'Qa + p'a   s.t.  y'a = Delta,  0 <= a_t <= U_t,
    Q_ts = y_t y_s K(x_idx(t), x_idx(s))

``idx`` maps a variable to its kernel row (identity for C-SVC and
one-class; ``[0..n-1, 0..n-1]`` for the SVR forms).  The loop keeps, for
the active variables, ``G_t = sum_s a_s y_s K_ts`` (the decision value
without intercept, ``f0``; LIBSVM's gradient is ``y_t G_t + p_t``), and
works with ``v_t = -y_t p_t`` (``yp``): ``-y_t grad_t = v_t - G_t`` (for
C-SVC ``p = -1`` and ``v = y``).

One step (:func:`dual_run`): WSS 2 selects ``(i, j)`` (:mod:`svmlab._wss2`;
for nu problems ``i`` is taken within each class and the pair lies in one
class, LIBSVM's ``Solver_NU::select_working_set``), the analytic pair step
moves them (:func:`svmlab.smo._pairstep.pair_step_box`, with the errors
``E_t = G_t + b - v_t`` of a running threshold ``b``), then ``G`` of the
active variables, ``Gbar`` and the free count are updated.  It stops when
the maximal violation ``m - M`` (per class for nu problems, the larger
one) is at most ``tol`` on every variable (``ist[IS_DONE] = 1``), or when
no step can move (``ist[IS_DONE] = 2``: no partner ``j``, a point segment,
a change below rounding that does not end on a bound of the segment, or an
unbounded direction with an infinite bound).  A clipped step is taken
however small: a multiplier left a rounding residue inside its bound gets
onto it, as in LIBSVM (decision 30s01).

Bookkeeping shared with Platt's loop: :mod:`svmlab.smo._core` (shrinking,
``Gbar``, the gradient reconstruction).  With an identity ``idx`` rows are
the cache's rows (only their active entries while shrunk); otherwise
(``mapped``) variable t reads entry ``idx[t]`` of the example's full
cached row (LIBSVM's ``SVR_Q`` gathers it into a buffer instead).

Speed: the first loop of WSS 2 (``m``, ``M`` and ``i``; per class for the
nu forms) is fused into the previous step's gradient update (one pass over
the active set instead of two; the same values in the same order), the gains of the second loop are
computed branch-free into a scratch array and then scanned, and the loops
are written in :func:`dual_run`'s body: a call that takes the cache's
named tuple costs reference-count updates per member, more than a step on
a small active set.  For the same reason rows are read in place through
their cache slots (``R[s, idx[t]]``), never as row views: each view of a
row costs an atomic reference-count increment and decrement (numba's
runtime), and a handful of those per step was about half of a step on
a small active set (decision record 30d01).  With the SVR forms' layout
(:func:`_svr_half`) the loops walk each kernel row in order, the nu forms
one class at a time, and a shrunk WSS 2 scores only its candidates
(decision record 31r01).  Helpers that take arrays and branch or loop
(the nu forms' selection, the mapped problems' ``Gbar`` update) are
written out in the body too: numba's inlining gives an inlined helper's
array arguments reference-count updates at every call, which its pruning
does not remove; and the loops over the active set index with uint64, so
that no load pays numba's negative-index wraparound (decision record
32s01).  A row miss is handled in the body as well: the slot from the
cache's LRU arrays (:func:`svmlab.kernels.cache.slot_of_row`), the row
computed into it; ``get_row`` and ``fetch_row`` take the kernel's and the
cache's named tuples, whose reference counts cost more than a small row
(decision record 33s01).  While shrunk, the loops over the active set read
position-by-position copies of the active variables' entries (``y``, ``v``,
``U``, the diagonal, ``alpha``, ``G``; :func:`_compact_active`), contiguous
as LIBSVM's swapped active set but in the same order, so the same sums
(decision record 34f01), from :data:`COPY_MIN_ACTIVE` active variables on
(below, the full arrays through ``act``: the same values in the same order;
decision record 35d01).  The nu forms' per-class loops test I_up / I_low
with each variable's own sign, not the class's loop-invariant one (equal
values; the invariant sign made the fused update about 2.7 times as slow
per variable, decision record 36d01).  A miss of ``i``'s row with float32 rows of dense input
fetches the rows of the next likely candidates as one block
(:func:`_prefetch`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._jit import njit
from .._kkt import in_low, in_up, takes_i
from .._linalg import insert_sorted
from .._wss2 import gain as wss2_gain
from .._wss2 import gain_or_nan, takes_j
from ..kernels._rows import KernelData, kernel_row, kernel_row_subset
from ..kernels.cache import CacheData, get_row, lru_hit, row_from_store, slot_of_row
from ._core import (ACTIVE, FS_B, IS_DONE, IS_ITER, IS_N_ACTIVE, IS_NB, IS_SHRINK_COUNTER,
                    IS_UNSHRUNK, PREFETCH_MIN_FEATURES, PREFETCH_ROWS, SHRUNK, be_shrunk,
                    fetch_row, fill_full_rows, inactive_list,
                    rebuild_active_list, reconstruct_gradient)
from ._fetch import complete_rows
from ._pairstep import pair_step_box, pair_threshold_box, segment_objective
from ._records import DUAL_ID, DUAL_LAYOUT, DUAL_SLOT


class DualRows(NamedTuple):
    """The kernel side of the dual loop."""

    #: the kernel over the n examples (:class:`svmlab.kernels._rows.KernelData`)
    kd: KernelData
    #: the LRU cache of full kernel rows (length n, keyed by example)
    cd: CacheData
    #: float64 (l,) scratch (the gains of WSS 2's second loop; a row in the
    #: gradient reconstruction)
    full: np.ndarray
    #: bool (n,) the cached row of example e has every entry (``rowfull[e]``;
    #: for a mapped problem: the loop computed it by ``kernel_row``)
    rowfull: np.ndarray
    #: (2, 0) of the cache's dtype: unused (the loop reads the cached rows
    #: in place; kept so that the compiled signatures stay as they were)
    rb: np.ndarray


class DualProblem(NamedTuple):
    """The problem (read only)."""

    #: float64 (l,) signs, +1 or -1
    y: np.ndarray
    #: float64 (l,) ``v_t = -y_t p_t`` (the linear term in the f0 form)
    yp: np.ndarray
    #: float64 (l,) upper bounds ``U_t`` (inf allowed)
    U: np.ndarray
    #: float64 (l,) ``K(x_idx(t), x_idx(t))``
    kdiag: np.ndarray
    #: int64 (l,) the example (kernel row) of each variable
    idx: np.ndarray
    #: the stopping tolerance on ``m - M``
    tol: float
    #: smallest relative change of ``a_j`` that counts as a step (1e-12)
    eps: float


class DualIterate(NamedTuple):
    """The iterate and the loop's own scalars."""

    #: float64 (l,) the variables
    alpha: np.ndarray
    #: float64 (l,) ``G_t = sum_s a_s y_s K_ts`` for the active t
    G: np.ndarray
    #: float64 (2, l) ``Gbar[0]_t = sum_{a_s = U_s} U_s y_s K_ts``; ``Gbar[1]``
    #: the changes noted while shrunk
    Gbar: np.ndarray
    #: float64 (FS_SIZE,) the running threshold ``b``
    fst: np.ndarray
    #: int64 (IS_SIZE,) integer state (``IS_*`` of :mod:`svmlab.smo._core`)
    ist: np.ndarray
    #: int8 (l,) ``ACTIVE`` or ``SHRUNK``
    active: np.ndarray
    #: int64 (l,) the active variables, ``act[:n_active]``, in index order
    act: np.ndarray


#: the size gate of the shrunk loop's contiguous copies (decision records
#: 34f01, 35d01): on fewer active variables their loads fit in L1 scattered
#: as they are, and building the copies at each shrink and finding the
#: positions of ``i`` and ``j`` at each step cost more than they save
#: (measured: about 3 % per step on a 40-row SVR, nothing on diabetes's 884
#: variables; Friedman #1's 6000, whose shrunk active set averages about
#: 1,300, keep their 13-15 % saving with 256 but lose most of it with 1000)
COPY_MIN_ACTIVE = 256


class DualOptions(NamedTuple):
    """The run's options (constant during a fit, except ``want_rec``)."""

    #: LIBSVM's shrinking
    shrinking: bool
    #: successful steps between two shrinking checks
    shrink_every: int
    #: fill the record buffer at every step (the stepped path)
    want_rec: bool


# ----------------------------------------------------------------------------
# rows, Gbar and the gradient of a mapped problem (idx not the identity)

@njit(cache=True, inline="always")
def _svr_half(idx, y):
    """``n`` when the problem has the SVR forms' layout, ``idx = [0..n-1,
    0..n-1]`` and ``y = [+1]*n + [-1]*n`` (signs: ``y > 0`` in the first
    half only), else 0.

    With that layout an unshrunk pass over the variables is two contiguous
    passes over one kernel row (``t`` and ``t + n`` read entry ``t``), and
    the active list (in index order) holds the positive class first: the
    loops of :func:`dual_run` walk the row in order instead of through
    ``idx[t]`` and the nu forms' loops take one class at a time, without a
    test of the class per variable.  The same entries in the same order
    (the same values and steps), with loads the compiler can vectorise
    (decision record 31r01)."""
    l = idx.shape[0]
    if l == 0 or l % 2 != 0:
        return np.int64(0)
    n = l // 2
    for t in range(n):
        if idx[t] != t or idx[t + n] != t or not y[t] > 0 or y[t + n] > 0:
            return np.int64(0)
    return np.int64(n)


@njit(cache=True)
def _reconstruct_mapped(kd, y, U, alpha, G, Gbar, active, idx, row, R, slot_of, rowfull):
    """:func:`svmlab.smo._core.reconstruct_gradient` for a mapped problem:
    pending ``Gbar`` changes, then ``G_t = Gbar_t + sum_{free s} a_s y_s
    K(x_idx(s), x_idx(t))`` for the inactive t, a full example row each.

    The row of example e is read in place from the cache (``R[slot_of[e]]``)
    when :func:`dual_run` computed it there by :func:`kernel_row` in float64
    (``rowfull[e]``, which marks only those rows for a mapped problem: the
    values :func:`kernel_row` gives, so the same sums), else computed into
    the scratch ``row`` (length n), as LIBSVM's ``reconstruct_gradient``
    reads its cached rows (decision record 34f01)."""
    l = alpha.shape[0]
    exact = R.itemsize == 8
    gb = Gbar[0]
    pend = Gbar[1]
    for s in range(l):
        if pend[s] != 0.0:
            e = idx[s]
            c = pend[s]
            sl = slot_of[e]
            if exact and sl >= 0 and rowfull[e]:
                for t in range(l):
                    gb[t] += c * R[sl, idx[t]]
            else:
                kernel_row(kd, e, row)
                for t in range(l):
                    gb[t] += c * row[idx[t]]
            pend[s] = 0.0
    inact = inactive_list(active)
    if inact.shape[0] == 0:
        return
    for p in range(inact.shape[0]):
        G[inact[p]] = gb[inact[p]]
    for s in range(l):
        a = alpha[s]
        if a > 0.0 and a < U[s]:
            e = idx[s]
            c = a * y[s]
            sl = slot_of[e]
            if exact and sl >= 0 and rowfull[e]:
                for p in range(inact.shape[0]):
                    t = inact[p]
                    G[t] += c * R[sl, idx[t]]
            else:
                kernel_row(kd, e, row)
                for p in range(inact.shape[0]):
                    t = inact[p]
                    G[t] += c * row[idx[t]]


@njit(cache=True)
def dual_gradient(rows, pb, it, mapped, blocks):
    """``G`` of every variable (the shrunk ones reconstructed), on copies of
    ``G`` and ``Gbar``: the state is not changed.  For the intercept and
    the results of a stopped run.  ``mapped``, ``blocks``: feature switches
    (module docstring)."""
    G = it.G.copy()
    Gbar = it.Gbar.copy()
    if mapped is not None:
        _reconstruct_mapped(rows.kd, pb.y, pb.U, it.alpha, G, Gbar, it.active, pb.idx,
                            np.empty(rows.rowfull.shape[0]), rows.cd.rows, rows.cd.slot_of,
                            rows.rowfull)
    else:
        reconstruct_gradient(rows.kd, rows.cd, pb.y, pb.U, it.alpha, G, Gbar, it.active,
                             rows.full, rows.rowfull, blocks)
    return G


@njit(cache=True)
def dual_init(rows, pb, it):
    """``G`` and ``Gbar[0]`` of a feasible start ``alpha`` (nothing shrunk):
    ``G += a_s y_s K_s`` and, at the bound, ``Gbar += U_s y_s K_s`` for
    every nonzero ``a_s``, with rows read through the cache (LIBSVM's
    initialisation in ``Solver::Solve``)."""
    kd, cd, rowfull = rows.kd, rows.cd, rows.rowfull
    y, U, idx = pb.y, pb.U, pb.idx
    alpha, G, Gbar = it.alpha, it.G, it.Gbar
    l = alpha.shape[0]
    for s in range(l):
        a = alpha[s]
        if a == 0.0:
            continue
        e = idx[s]
        r = get_row(kd, cd, e)
        rowfull[e] = True
        c = a * y[s]
        for t in range(l):
            G[t] += c * r[idx[t]]
        if a >= U[s]:
            c = U[s] * y[s]
            gb = Gbar[0]
            for t in range(l):
                gb[t] += c * r[idx[t]]


@njit(cache=True)
def _unshrink(rows, pb, it, mapped, blocks):
    """Every variable active again, with its exact ``G`` (LIBSVM's
    unshrink); rows cached while shrunk are completed or forgotten first."""
    kd, cd = rows.kd, rows.cd
    l = it.alpha.shape[0]
    if mapped is not None:
        _reconstruct_mapped(kd, pb.y, pb.U, it.alpha, it.G, it.Gbar, it.active, pb.idx,
                            np.empty(rows.rowfull.shape[0]), cd.rows, cd.slot_of, rows.rowfull)
    else:
        if it.ist[IS_N_ACTIVE] < l:
            complete_rows(kd, cd, rows.rowfull, blocks)
        reconstruct_gradient(kd, cd, pb.y, pb.U, it.alpha, it.G, it.Gbar, it.active,
                             rows.full, rows.rowfull, blocks)
    it.active[:] = ACTIVE
    rebuild_active_list(it.active, it.act, it.ist)


@njit(cache=True)
def _extremes(yp, y, U, alpha, G, act, na, nu):
    """WSS 2's first loop over the active variables: ``(m, i, M)`` with ``m
    = v_i`` the maximum over I_up of ``v_t = yp_t - G_t`` (first index) and
    ``M`` the minimum over I_low; for nu problems the same per class,
    ``(mp, ip, Mp, mn, in, Mn)`` (the negative class's in the last three;
    the first three are the standard ones otherwise)."""
    ext = (-np.inf, np.int64(-1), np.inf, -np.inf, np.int64(-1), np.inf)
    for p in range(na):
        t = act[p]
        ext = _extremes_with(ext, t, yp[t] - G[t], y[t], alpha[t], U[t], nu)
    return ext


@njit(cache=True, inline="always")
def _extremes_with(ext, t, mf, yt, a, u, nu):
    """The tuple of :func:`_extremes` once variable ``t`` (with ``v_t =
    mf``, label ``yt``, multiplier ``a`` and bound ``u``) is taken into
    it: one pass's step, shared with the loops that fuse the pass into
    the gradient update."""
    m, i, M, mn, i_n, Mn = ext
    up = in_up(yt, a, u)
    low = in_low(yt, a, u)
    if nu is not None and yt < 0:
        if up and takes_i(mf, mn):
            mn = mf
            i_n = t
        if low and mf < Mn:
            Mn = mf
    else:
        if up and takes_i(mf, m):
            m = mf
            i = t
        if low and mf < M:
            M = mf
    return m, i, M, mn, i_n, Mn


@njit(cache=True)
def _shrink(rows, pb, it, nu, mapped, blocks):
    """LIBSVM's do_shrinking (``Solver_NU``'s per class for nu problems):
    drop the variables at a bound that can join no violating pair
    (:func:`svmlab.smo._core.be_shrunk`); once the violation is within
    ``10 tol`` the one-time unshrink happens first."""
    y, yp, U, tol = pb.y, pb.yp, pb.U, pb.tol
    alpha, G, ist, active, act = it.alpha, it.G, it.ist, it.active, it.act
    m, i, M, mn, i_n, Mn = _extremes(yp, y, U, alpha, G, act, ist[IS_N_ACTIVE], nu)
    gap = m - M
    if nu is not None:
        gap = max(m - M, mn - Mn)
    if ist[IS_UNSHRUNK] == 0 and gap <= 10.0 * tol:
        ist[IS_UNSHRUNK] = 1
        _unshrink(rows, pb, it, mapped, blocks)
        m, i, M, mn, i_n, Mn = _extremes(yp, y, U, alpha, G, act, ist[IS_N_ACTIVE], nu)
    changed = False
    for p in range(ist[IS_N_ACTIVE]):
        t = act[p]
        a = alpha[t]
        if a > 0.0 and a < U[t]:
            continue
        neg = False
        if nu is not None:
            neg = y[t] < 0
        if be_shrunk(y[t], a, U[t], yp[t] - G[t], mn if neg else m, Mn if neg else M):
            active[t] = SHRUNK
            changed = True
    if changed:
        rebuild_active_list(active, act, ist)


@njit(cache=True)
def _prefetch(kd, cd, i, m, y, yp, U, alpha, G, act, ist, rowfull):
    """A miss of the row of ``i`` (float32 rows of dense input, identity
    ``idx``, nothing shrunk): fetch it with the rows of the variables
    likely chosen next, as one kernel block (one SGEMM,
    :func:`svmlab.kernels.cache.fill_block`): the uncached ones of I_up
    with the largest ``v_t`` (the next i's) and of I_low with the smallest
    (the partners with the largest steps), up to :data:`PREFETCH_ROWS`
    rows, half from each side.  While shrunk the row is fetched alone.
    Returns the slot of ``i``.  Cache bound: ``fill_block`` computes at most
    ``n_slots - 2`` rows and never evicts the two used last."""
    n = alpha.shape[0]
    na = ist[IS_N_ACTIVE]
    if na < n:
        fetch_row(kd, cd, i, act, ist, rowfull)
        return cd.slot_of[i]
    half = PREFETCH_ROWS // 2
    rows = np.empty(PREFETCH_ROWS, np.int64)
    rows[0] = i
    k = np.int64(1)
    slot_of = cd.slot_of
    ku = half - 1
    kl = PREFETCH_ROWS - half
    cu = np.empty(ku, np.int64)
    vu = np.full(ku, np.inf)
    cl = np.empty(kl, np.int64)
    vl = np.full(kl, np.inf)
    nup = np.int64(0)
    nlo = np.int64(0)
    for p in range(na):
        t = act[p]
        if t == i or slot_of[t] >= 0:
            continue
        mf = yp[t] - G[t]
        if in_up(y[t], alpha[t], U[t]) and -mf < vu[ku - 1]:
            nup = insert_sorted(cu, vu, nup, t, -mf)
        elif in_low(y[t], alpha[t], U[t]) and mf < m and mf < vl[kl - 1]:
            nlo = insert_sorted(cl, vl, nlo, t, mf)
    for q in range(nup):
        rows[k] = cu[q]
        k += 1
    for q in range(nlo):
        rows[k] = cl[q]
        k += 1
    fill_full_rows(kd, cd, rows, k, rowfull)
    return slot_of[i]


@njit(cache=True)
def _dual_record(rec, ist, i1, i2, a1, a2, a1n, a2n, a2u, L, H, eta, y1, y2, v1, v2, C1, C2,
                 K11, K12, K22, G1, G2, b, bn, m, M, gap, sign_class, gain):
    """Write the record of the step just taken into ``rec``, one line per
    field of :class:`svmlab.smo._records.DualStep` (slots
    ``DUAL_SLOT.<field>``; the run's cache counters are filled in Python),
    plus the layout checksum in ``rec[DUAL_LAYOUT]``.

    Parameters
    ----------
    rec : float64 (DUAL_BUFFER,)
        The record buffer.
    ist : int64 (IS_SIZE,)
        Integer state, after the step (``IS_ITER`` counts it).
    i1, i2 : int
        The pair (WSS 2's i and j).
    a1, a2, a1n, a2n : float
        Their values before and after.
    a2u : float
        The unclipped minimiser for ``a2`` (NaN when ``eta <= 0``).
    L, H : float
        The segment of ``a2``.
    eta : float
        ``K11 + K22 - 2 K12``.
    y1, y2, v1, v2, C1, C2 : float
        Signs, ``v = -y p`` and upper bounds of the pair.
    K11, K12, K22 : float
        Kernel values of the pair.
    G1, G2 : float
        Their ``f0`` before the step.
    b, bn : float
        The running threshold before and after.
    m, M, gap : float
        The violation's ends (the pair's class for nu problems) and the
        stopping rule's value.
    sign_class : int
        0, or the pair's sign for nu problems.
    gain : float
        WSS 2's score of ``i2``.
    """
    E1 = G1 + b - v1
    E2 = G2 + b - v2
    rec[DUAL_SLOT.iteration] = ist[IS_ITER]
    rec[DUAL_SLOT.i1] = i1
    rec[DUAL_SLOT.i2] = i2
    rec[DUAL_SLOT.y1] = y1
    rec[DUAL_SLOT.y2] = y2
    rec[DUAL_SLOT.C1] = C1
    rec[DUAL_SLOT.C2] = C2
    rec[DUAL_SLOT.p1] = -y1 * v1
    rec[DUAL_SLOT.p2] = -y2 * v2
    rec[DUAL_SLOT.a1_old] = a1
    rec[DUAL_SLOT.a2_old] = a2
    rec[DUAL_SLOT.a1_new] = a1n
    rec[DUAL_SLOT.a2_new] = a2n
    rec[DUAL_SLOT.L] = L
    rec[DUAL_SLOT.H] = H
    rec[DUAL_SLOT.eta] = eta
    rec[DUAL_SLOT.K11] = K11
    rec[DUAL_SLOT.K12] = K12
    rec[DUAL_SLOT.K22] = K22
    rec[DUAL_SLOT.E1] = E1
    rec[DUAL_SLOT.E2] = E2
    rec[DUAL_SLOT.b_old] = b
    rec[DUAL_SLOT.b_new] = bn
    rec[DUAL_SLOT.a2_unclipped] = a2u
    rec[DUAL_SLOT.clipped] = 1.0 if (eta <= 0.0) or (a2u < L) or (a2u > H) else 0.0
    rec[DUAL_SLOT.delta_objective] = segment_objective(a2n, y1, y2, a1, a2, E1, E2, b, K11,
                                                       K12, K22)
    rec[DUAL_SLOT.m] = m
    rec[DUAL_SLOT.M] = M
    rec[DUAL_SLOT.gap] = gap
    rec[DUAL_SLOT.sign_class] = sign_class
    rec[DUAL_SLOT.gain] = gain
    rec[DUAL_SLOT.n_active] = ist[IS_N_ACTIVE]
    rec[DUAL_SLOT.n_free] = ist[IS_NB]
    rec[DUAL_LAYOUT] = DUAL_ID


@njit(cache=True)
def _compact_active(act, na, y, yp, U, kdiag, alpha, G, cy, cyp, cU, ckd, ca, cG):
    """Copies of the active variables' entries, position by position
    (``c*[p]`` is entry ``act[p]``), for the loops of a shrunk
    :func:`dual_run`: they then read contiguous arrays instead of loading
    scattered entries of the full ones (decision record 34f01)."""
    for p in range(na):
        t = act[p]
        cy[p] = y[t]
        cyp[p] = yp[t]
        cU[p] = U[t]
        ckd[p] = kdiag[t]
        ca[p] = alpha[t]
        cG[p] = G[t]


@njit(cache=True)
def _write_back(act, na, cG, G):
    """``G`` of the active variables from the shrunk loop's copy ``cG``
    (:func:`_compact_active`)."""
    for p in range(na):
        G[act[p]] = cG[p]


@njit(cache=True)
def dual_run(rows, pb, it, rec, opt, kmax, nu, mapped, blocks):
    """:func:`dual_run_gated` with the copies' size gate at
    :data:`COPY_MIN_ACTIVE` (the loop's entry point: the drivers of
    :mod:`svmlab.smo._ovo` and :mod:`svmlab.smo._nuovo` call it).

    Parameters
    ----------
    rows, pb, it, rec, opt, kmax, nu, mapped, blocks :
        As :func:`dual_run_gated`; returns what it returns.
    """
    return dual_run_gated(rows, pb, it, rec, opt, kmax, nu, mapped, blocks,
                          np.int64(COPY_MIN_ACTIVE))


@njit(cache=True)
def dual_run_gated(rows, pb, it, rec, opt, kmax, nu, mapped, blocks, copy_min):
    """Advance by up to ``kmax`` successful pair steps; return how many were
    taken.  ``ist[IS_DONE]`` becomes nonzero once the stopping rule holds
    (1) or no step can move (2).

    Solves the generalised dual of the module docstring by WSS 2 pairs and
    the analytic pair step; the stepped path calls it with ``kmax=1`` and
    ``want_rec=True`` (the record of the step in ``rec``), the fast path
    with a large budget and no records: the same code, the same steps.
    Its per-step path is written out in sections (selection, pair step,
    rows, gradient update, ``Gbar``), for speed (module docstring), so it is
    longer than a screen.

    Parameters
    ----------
    rows : DualRows
        Kernel data, row cache, scratch and row buffers.
    pb : DualProblem
        Signs, ``v = -y p``, bounds, kernel diagonal, ``idx``, ``tol``, ``eps``.
    it : DualIterate
        Variables, ``G``, ``Gbar``, scalar state and active set (in place).
    rec : float64 (DUAL_BUFFER,)
        Record buffer, filled after every step when ``opt.want_rec``.
    opt : DualOptions
        Shrinking and recording options.
    kmax : int
        Most successful steps to take in this call.
    nu, mapped : None or True
        Feature switches (module docstring): LIBSVM's ``Solver_NU``; an
        ``idx`` that is not the identity.  None compiles the loop without
        the feature.
    blocks : None or bool
        Float32 rows of dense input (block prefetches and block sums):
        None for float64 rows (compiled without them), a runtime bool for
        float32 rows (:func:`svmlab.smo._core.blocks_switch`).
    copy_min : int
        While shrunk, the loops read contiguous copies of the active
        variables' entries (:func:`_compact_active`) only when at least
        this many are active; below, the full arrays through ``act``
        (:func:`dual_run` passes :data:`COPY_MIN_ACTIVE`; tests pass others
        to take both sides of the gate; decision record 35d01).
    """
    kd, cd, full, rowfull, rb = rows.kd, rows.cd, rows.full, rows.rowfull, rows.rb
    y, yp, U, kdiag, idx, tol, eps = pb.y, pb.yp, pb.U, pb.kdiag, pb.idx, pb.tol, pb.eps
    alpha, G, Gbar, fst, ist, act = it.alpha, it.G, it.Gbar, it.fst, it.ist, it.act
    shrinking, shrink_every, want_rec = opt.shrinking, opt.shrink_every, opt.want_rec
    l = alpha.shape[0]
    R, c_slot, c_prev, c_next, c_meta = cd.rows, cd.slot_of, cd.prev, cd.next, cd.meta
    # a miss: the slot by slot_of_row on the LRU arrays, the row by
    # kernel_row or the one-vs-one store (row_from_store) into it -- never
    # get_row(kd, cd, .) / fetch_row: a call taking the named tuples pays
    # reference-count updates per array in them, 46 for kd and cd, more than
    # a small row's arithmetic (decision record 33s01)
    c_owner = cd.owner
    n_slots = R.shape[0]
    sh = cd.shared
    store = sh.gmap.shape[0] > 0
    # the SVR forms' map: rows walked in order, no idx[t] load (_svr_half)
    nh = np.int64(0)
    if mapped is not None:
        nh = _svr_half(idx, y)
    unh = np.uint64(nh)
    prefetch = False
    if blocks is not None and blocks:
        prefetch = kd.dense.shape[1] >= PREFETCH_MIN_FEATURES
    # WSS 2's first loop, fused into the previous step's gradient update
    # (indices that reach calls start as typed int64, not as the literal -1:
    # numba would compile those callees once more for the literal's type)
    pre = False
    pre_m = -np.inf
    pre_M = np.inf
    pre_i = np.int64(-1)
    # (nu: the negative class's; pre_* are then the positive class's)
    pn_m = -np.inf
    pn_M = np.inf
    pn_i = np.int64(-1)
    # while shrunk, the loops over the active set read position-by-position
    # copies (_compact_active; ``cG`` holds the active variables' G until
    # _write_back, ``ca`` is written with ``alpha``): contiguous loads, as
    # LIBSVM's swapped active set, with the variables' order kept
    # (allocated here, never assigned in the loop: arrays reassigned inside
    # the step loop made every small step about 20 % slower, measured on a
    # 40-row SVR even with the copies never taken; decision record 35d01)
    cvalid = False
    lc = l if shrinking and l > copy_min else 0
    cy = np.empty(lc)
    cyp = np.empty(lc)
    cU = np.empty(lc)
    ckd = np.empty(lc)
    ca = np.empty(lc)
    cG = np.empty(lc)
    pi = np.int64(-1)
    pj = np.int64(-1)
    steps = 0
    while steps < kmax and ist[IS_DONE] == 0:
        if shrinking and ist[IS_SHRINK_COUNTER] <= 0:
            pre = False
            if cvalid:
                _write_back(act, ist[IS_N_ACTIVE], cG, G)
                cvalid = False
            ist[IS_SHRINK_COUNTER] = shrink_every
            _shrink(rows, pb, it, nu, mapped, blocks)
        b = fst[FS_B]
        na = ist[IS_N_ACTIVE]
        if na < l and not cvalid and na >= copy_min:
            _compact_active(act, na, y, yp, U, kdiag, alpha, G, cy, cyp, cU, ckd, ca, cG)
            cvalid = True
        # the nu forms with the SVR layout: the negative class starts at
        # act[k_pos] (the active list is in index order; a binary search
        # written out: see the nu selection below for why not a helper)
        k_pos = nh
        if nu is not None and nh > 0 and na < l:
            lo = np.int64(0)
            hi = na
            while lo < hi:
                mid = (lo + hi) // 2
                if act[mid] < nh:
                    lo = mid + 1
                else:
                    hi = mid
            k_pos = lo
        # ---- selection: i (and m, M), then j ----
        # (rows are read in place, ``R[slot, idx[t]]``: a row view, or a
        # row gathered into a buffer, would cost reference-count updates or
        # a pass over the active set at every step)
        if nu is not None:
            # LIBSVM's Solver_NU selection: i per class (the maximal v over
            # I_up of each class, first index), j the partner of best WSS 2
            # gain over both classes (each candidate scored against its own
            # class's i; last index on ties); stop_now 1 when both classes'
            # violations are within tol, 2 when no partner exists; s1 the
            # slot of i's row.  Written out here, not as a helper: an inlined
            # helper that takes arrays and loops costs numba reference-count
            # updates of each array at every call (decision record 32s01)
            if pre:
                mp, ip, Mp, mn, i_n, Mn = pre_m, pre_i, pre_M, pn_m, pn_i, pn_M
            else:
                mp, ip, Mp, mn, i_n, Mn = _extremes(yp, y, U, alpha, G, act, na, nu)
            pre = False
            gap = max(mp - Mp, mn - Mn)
            i = ip
            j = ip
            m = 0.0
            M = 0.0
            best = 0.0
            stop_now = 1
            s1 = np.int64(-1)
            if gap > tol:
                # the rows of both i's (the positive one fetched first); the
                # second fetch never evicts the first
                sp = np.int64(-1)
                sn = np.int64(-1)
                for cls in range(2):
                    tc = ip if cls == 0 else i_n
                    if tc < 0:
                        continue
                    ec = idx[tc] if mapped is not None else tc
                    sc = c_slot[ec]
                    if sc >= 0:
                        lru_hit(c_prev, c_next, c_meta, sc)
                    else:
                        if mapped is None:
                            rowfull[ec] = na == l
                        sc, _ = slot_of_row(c_slot, c_owner, c_prev, c_next, c_meta, n_slots, ec)
                        if store:
                            row_from_store(sh, ec, R[sc])
                        elif mapped is None and na < l:
                            kernel_row_subset(kd, ec, act, na, R[sc])
                        else:
                            kernel_row(kd, ec, R[sc])
                            if mapped is not None:
                                rowfull[ec] = True
                    if cls == 0:
                        sp = sc
                    else:
                        sn = sc
                if sp >= 0:
                    sp = c_slot[idx[ip] if mapped is not None else ip]
                j = np.int64(-1)
                best = np.inf
                if nh > 0:
                    for cls in range(2):
                        ic = ip if cls == 0 else i_n
                        if ic < 0:
                            continue
                        mc = mp if cls == 0 else mn
                        sc = sp if cls == 0 else sn
                        yc = 1.0 if cls == 0 else -1.0
                        o = 0 if cls == 0 else nh
                        Kcc = kdiag[ic]
                        if na == l:
                            # unshrunk: the class's gains branch-free into
                            # the scratch over a contiguous row, then the scan
                            for q in range(nh):
                                t = o + q
                                full[t] = gain_or_nan(in_low(yc, alpha[t], U[t]), mc,
                                                      yp[t] - G[t], Kcc, kdiag[t], R[sc, q])
                            for t in range(o, o + nh):
                                if takes_j(full[t], best):
                                    best = full[t]
                                    j = t
                            continue
                        uo = np.uint64(o)
                        if not cvalid:
                            # shrunk below the copies' size gate: the full
                            # arrays through act
                            for p in range(k_pos if cls == 0 else na - k_pos):
                                t = act[p if cls == 0 else k_pos + p]
                                ut = np.uint64(t)
                                v = yp[ut] - G[ut]
                                if in_low(yc, alpha[ut], U[ut]) and mc - v > 0.0:
                                    g = wss2_gain(mc, v, Kcc, kdiag[ut], R[sc, ut - uo])
                                    if takes_j(g, best):
                                        best = g
                                        j = t
                            continue
                        for p in range(k_pos if cls == 0 else na - k_pos):
                            # (uint64 indices: no negative-index wraparound;
                            # the copies by position, _compact_active)
                            up = np.uint64(p if cls == 0 else k_pos + p)
                            t = act[up]
                            ut = np.uint64(t)
                            v = cyp[up] - cG[up]
                            if in_low(yc, ca[up], cU[up]) and mc - v > 0.0:
                                g = wss2_gain(mc, v, Kcc, ckd[up], R[sc, ut - uo])
                                if takes_j(g, best):
                                    best = g
                                    j = t
                elif cvalid:
                    # the general layout, shrunk: the copies by position
                    # (_compact_active).  Written twice (here and below on
                    # the full arrays), not with the six arrays selected
                    # per step: an array variable assigned in the step loop
                    # costs reference-count updates (decisions 35d01, 36d01)
                    for p in range(na):
                        up = np.uint64(p)
                        t = act[up]
                        yt = cy[up]
                        if yt > 0:
                            if ip < 0:
                                continue
                            mc = mp
                            ic = ip
                            sc = sp
                        else:
                            if i_n < 0:
                                continue
                            mc = mn
                            ic = i_n
                            sc = sn
                        v = cyp[up] - cG[up]
                        if in_low(yt, ca[up], cU[up]) and mc - v > 0.0:
                            ut = np.uint64(t)
                            uq = np.uint64(idx[ut]) if mapped is not None else ut
                            g = wss2_gain(mc, v, kdiag[ic], ckd[up], R[sc, uq])
                            if takes_j(g, best):
                                best = g
                                j = t
                else:
                    # the general layout, unshrunk or shrunk below the
                    # copies' size gate: the full arrays at t
                    for p in range(na):
                        t = act[np.uint64(p)]
                        ut = np.uint64(t)
                        yt = y[ut]
                        if yt > 0:
                            if ip < 0:
                                continue
                            mc = mp
                            ic = ip
                            sc = sp
                        else:
                            if i_n < 0:
                                continue
                            mc = mn
                            ic = i_n
                            sc = sn
                        v = yp[ut] - G[ut]
                        if in_low(yt, alpha[ut], U[ut]) and mc - v > 0.0:
                            uq = np.uint64(idx[ut]) if mapped is not None else ut
                            g = wss2_gain(mc, v, kdiag[ic], kdiag[ut], R[sc, uq])
                            if takes_j(g, best):
                                best = g
                                j = t
                if j < 0:
                    i = ip
                    best = 0.0
                    stop_now = 2
                elif y[j] > 0:
                    i, m, M, stop_now, s1 = ip, mp, Mp, 0, sp
                else:
                    i, m, M, stop_now, s1 = i_n, mn, Mn, 0, sn
        else:
            if pre:
                m, M, i = pre_m, pre_M, pre_i
                pre = False
            else:
                m, i, M, _, _, _ = _extremes(yp, y, U, alpha, G, act, na, nu)
            gap = m - M
            stop_now = 1 if gap <= tol else 0
        if stop_now == 1:
            if na < l:
                # LIBSVM: reconstruct the gradient, select again over every
                # variable, and shrink again one step later if a pair still
                # violates
                if cvalid:
                    _write_back(act, na, cG, G)
                    cvalid = False
                _unshrink(rows, pb, it, mapped, blocks)
                ist[IS_UNSHRUNK] = 1
                if shrinking:
                    ist[IS_SHRINK_COUNTER] = 1
                continue
            ist[IS_DONE] = 1
            break
        if stop_now == 2:
            ist[IS_DONE] = 2
            break
        if nu is None:
            # the row of i (its slot)
            if mapped is not None:
                e1 = idx[i]
                s1 = c_slot[e1]
                if s1 >= 0:
                    lru_hit(c_prev, c_next, c_meta, s1)
                else:
                    s1, _ = slot_of_row(c_slot, c_owner, c_prev, c_next, c_meta, n_slots, e1)
                    if store:
                        row_from_store(sh, e1, R[s1])
                    else:
                        kernel_row(kd, e1, R[s1])
                        rowfull[e1] = True
            else:
                s1 = c_slot[i]
                if s1 >= 0:
                    lru_hit(c_prev, c_next, c_meta, s1)
                elif blocks is not None and blocks and prefetch:
                    s1 = _prefetch(kd, cd, i, m, y, yp, U, alpha, G, act, ist, rowfull)
                else:
                    rowfull[i] = na == l
                    s1, _ = slot_of_row(c_slot, c_owner, c_prev, c_next, c_meta, n_slots, i)
                    if store:
                        row_from_store(sh, i, R[s1])
                    elif na < l:
                        kernel_row_subset(kd, i, act, na, R[s1])
                    else:
                        kernel_row(kd, i, R[s1])
            # j: unshrunk, the gains of every t into the scratch ``full``
            # (branch-free, contiguous loads: vectorised), then the scan;
            # shrunk, one pass over the candidates (``full`` written as it
            # is: no array variable is assigned in the step loop, decision
            # record 35d01)
            Kii = kdiag[i]
            j = np.int64(-1)
            best = np.inf
            if cvalid:
                # shrunk: one pass, the gain computed for the candidates
                # only (gain_or_nan's NaN never takes j: the same j and
                # best as the scratch and the scan below)
                for p in range(na):
                    # (indices as uint64: no negative-index wraparound on
                    # each load; act holds indices in [0, l); the copies
                    # by position, _compact_active)
                    up = np.uint64(p)
                    t = act[up]
                    ut = np.uint64(t)
                    v = cyp[up] - cG[up]
                    if in_low(cy[up], ca[up], cU[up]) and m - v > 0.0:
                        uq = ut
                        if mapped is not None:
                            if nh > 0:
                                uq = ut - unh if ut >= unh else ut
                            else:
                                uq = np.uint64(idx[ut])
                        g = wss2_gain(m, v, Kii, ckd[up], R[s1, uq])
                        if takes_j(g, best):
                            best = g
                            j = t
            elif na < l:
                # shrunk below the copies' size gate: the same pass on the
                # full arrays through act
                for p in range(na):
                    t = act[p]
                    ut = np.uint64(t)
                    v = yp[ut] - G[ut]
                    if in_low(y[ut], alpha[ut], U[ut]) and m - v > 0.0:
                        uq = ut
                        if mapped is not None:
                            if nh > 0:
                                uq = ut - unh if ut >= unh else ut
                            else:
                                uq = np.uint64(idx[ut])
                        g = wss2_gain(m, v, Kii, kdiag[ut], R[s1, uq])
                        if takes_j(g, best):
                            best = g
                            j = t
            else:
                if mapped is not None and nh > 0:
                    for h in range(2):
                        o = h * nh
                        for q in range(nh):
                            t = o + q
                            full[t] = gain_or_nan(in_low(y[t], alpha[t], U[t]), m,
                                                  yp[t] - G[t], Kii, kdiag[t], R[s1, q])
                elif mapped is not None:
                    for t in range(l):
                        full[t] = gain_or_nan(in_low(y[t], alpha[t], U[t]), m, yp[t] - G[t],
                                              Kii, kdiag[t], R[s1, idx[t]])
                else:
                    for t in range(l):
                        full[t] = gain_or_nan(in_low(y[t], alpha[t], U[t]), m, yp[t] - G[t],
                                              Kii, kdiag[t], R[s1, t])
                for p in range(l):
                    if takes_j(full[p], best):
                        best = full[p]
                        j = p
            if j < 0:
                ist[IS_DONE] = 2
                break
        Kij = R[s1, idx[j]] if mapped is not None else R[s1, j]
        Gi = G[i]
        Gj = G[j]
        if cvalid:
            # the positions of i and j in the active list (in index order;
            # both are in it): a binary search written with selects, no
            # branch to mispredict
            for side in range(2):
                ts = i if side == 0 else j
                base = np.int64(0)
                w = na
                while w > 1:
                    half = w >> 1
                    base = base + half if act[np.uint64(base + half)] <= ts else base
                    w -= half
                if side == 0:
                    pi = base
                else:
                    pj = base
            Gi = cG[pi]
            Gj = cG[pj]
        # ---- the pair step ----
        ai = alpha[i]
        aj = alpha[j]
        yi = y[i]
        yj = y[j]
        Ui = U[i]
        Uj = U[j]
        Kjj = kdiag[j]
        Ei = Gi + b - yp[i]
        Ej = Gj + b - yp[j]
        moved, ain, ajn, aju, L, H, eta = pair_step_box(yi, yj, ai, aj, Ei, Ej, b, kdiag[i],
                                                        Kij, Kjj, Ui, Uj, eps)
        if not moved and i != j and ((aju < L and L != aj) or (aju > H and H != aj)):
            # below Platt's relative 1e-12 but clipped onto an end of the
            # segment: a multiplier left a rounding residue inside its bound
            # gets there (else the pair stays the most violating one and the
            # run stalls short of the optimum; LIBSVM takes such steps)
            moved, ain, ajn, aju, L, H, eta = pair_step_box(yi, yj, ai, aj, Ei, Ej, b, kdiag[i],
                                                            Kij, Kjj, Ui, Uj, 0.0)
        if not moved or i == j:
            ist[IS_DONE] = 2
            break
        bn = pair_threshold_box(yi, yj, ai, aj, ain, ajn, Ei, Ej, b, kdiag[i], Kij, Kjj, Ui,
                                Uj)
        d1 = yi * (ain - ai)
        d2 = yj * (ajn - aj)
        # ---- the rows of i and j, their slots (i's was fetched by the
        # selection: a hit; the two most recent rows are never evicted by a
        # fetch, so s1 stays i's) ----
        if mapped is not None:
            e1 = idx[i]
            e2 = idx[j]
            s1 = c_slot[e1]
            lru_hit(c_prev, c_next, c_meta, s1)
            s2 = c_slot[e2]
            if s2 >= 0:
                lru_hit(c_prev, c_next, c_meta, s2)
            else:
                s2, _ = slot_of_row(c_slot, c_owner, c_prev, c_next, c_meta, n_slots, e2)
                if store:
                    row_from_store(sh, e2, R[s2])
                else:
                    kernel_row(kd, e2, R[s2])
                    rowfull[e2] = True
        else:
            e1 = i
            e2 = j
            s1 = c_slot[i]
            if s1 >= 0:
                lru_hit(c_prev, c_next, c_meta, s1)
            else:
                fetch_row(kd, cd, i, act, ist, rowfull)
                s1 = c_slot[i]
            s2 = c_slot[j]
            if s2 >= 0:
                lru_hit(c_prev, c_next, c_meta, s2)
            else:
                rowfull[j] = na == l
                s2, _ = slot_of_row(c_slot, c_owner, c_prev, c_next, c_meta, n_slots, j)
                if store:
                    row_from_store(sh, j, R[s2])
                elif na < l:
                    kernel_row_subset(kd, j, act, na, R[s2])
                else:
                    kernel_row(kd, j, R[s2])
        s1 = c_slot[e1]
        alpha[i] = ain
        alpha[j] = ajn
        if cvalid:
            ca[pi] = ain
            ca[pj] = ajn
        if nu is not None:
            # the same fusion, per class (the values and order of
            # _extremes with nu)
            if nh > 0:
                # the SVR forms' layout: the positive class is act[:k],
                # the negative act[k:na], each tracked on its own (each
                # class's values in the same order as the mixed pass)
                k = k_pos
                for c in range(2):
                    cm = -np.inf
                    ci = np.int64(-1)
                    cM = np.inf
                    o = 0 if c == 0 else nh
                    uo = np.uint64(o)
                    if cvalid:
                        # shrunk: the copies by position (_compact_active)
                        for p in range(k if c == 0 else na - k):
                            # (uint64 indices: no negative-index wraparound)
                            up = np.uint64(p if c == 0 else k + p)
                            t = act[up]
                            uq = np.uint64(t) - uo
                            g = cG[up] + (d1 * R[s1, uq] + d2 * R[s2, uq])
                            cG[up] = g
                            mf = cyp[up] - g
                            a = ca[up]
                            u = cU[up]
                            # (the class's sign read per variable, cy[up]
                            # == yc: with the loop-invariant yc this loop
                            # cost about 2.7 times as much; decision 36d01)
                            yt = cy[up]
                            if in_up(yt, a, u) and takes_i(mf, cm):
                                cm = mf
                                ci = t
                            if in_low(yt, a, u) and mf < cM:
                                cM = mf
                        if c == 0:
                            pre_m, pre_i, pre_M = cm, ci, cM
                        else:
                            pn_m, pn_i, pn_M = cm, ci, cM
                        continue
                    for p in range(k if c == 0 else na - k):
                        # (unshrunk, or shrunk below the copies' size gate)
                        p2 = p if c == 0 else k + p
                        t = act[p2] if na < l else p2
                        # (uint64 indices: no negative-index wraparound)
                        ut = np.uint64(t)
                        uq = ut - uo
                        g = G[ut] + (d1 * R[s1, uq] + d2 * R[s2, uq])
                        G[ut] = g
                        mf = yp[ut] - g
                        a = alpha[ut]
                        u = U[ut]
                        # (y[ut] == yc: read per variable, as above)
                        yt = y[ut]
                        if in_up(yt, a, u) and takes_i(mf, cm):
                            cm = mf
                            ci = t
                        if in_low(yt, a, u) and mf < cM:
                            cM = mf
                    if c == 0:
                        pre_m, pre_i, pre_M = cm, ci, cM
                    else:
                        pn_m, pn_i, pn_M = cm, ci, cM
            else:
                ext = (-np.inf, np.int64(-1), np.inf, -np.inf, np.int64(-1), np.inf)
                if cvalid:
                    # shrunk: the copies by position (_compact_active)
                    for p in range(na):
                        up = np.uint64(p)
                        t = act[up]
                        ut = np.uint64(t)
                        uq = np.uint64(idx[ut]) if mapped is not None else ut
                        g = cG[up] + (d1 * R[s1, uq] + d2 * R[s2, uq])
                        cG[up] = g
                        ext = _extremes_with(ext, t, cyp[up] - g, cy[up], ca[up], cU[up], nu)
                else:
                    for p in range(na):
                        t = act[p]
                        ut = np.uint64(t)
                        uq = np.uint64(idx[ut]) if mapped is not None else ut
                        g = G[ut] + (d1 * R[s1, uq] + d2 * R[s2, uq])
                        G[ut] = g
                        ext = _extremes_with(ext, t, yp[ut] - g, y[ut], alpha[ut], U[ut], nu)
                pre_m, pre_i, pre_M, pn_m, pn_i, pn_M = ext
            pre = True
        else:
            # the gradient update with the next selection's first loop fused
            # in (the same values in the same order as _extremes); valid
            # unless the next iteration shrinks or unshrinks first
            pre_m = -np.inf
            pre_M = np.inf
            pre_i = np.int64(-1)
            n_rest = na
            if mapped is None and na == l:
                # unshrunk, identity rows: the same pass with ``t = p``,
                # written out so that its loads need no select of the index
                for t in range(l):
                    g = G[t] + (d1 * R[s1, t] + d2 * R[s2, t])
                    G[t] = g
                    mf = yp[t] - g
                    a = alpha[t]
                    u = U[t]
                    v = mf if in_up(y[t], a, u) else -np.inf
                    if takes_i(v, pre_m):
                        pre_m = v
                        pre_i = t
                    v = mf if in_low(y[t], a, u) else np.inf
                    pre_M = v if v < pre_M else pre_M
                n_rest = 0
            if cvalid:
                # shrunk: the copies by position (_compact_active)
                for p in range(na):
                    up = np.uint64(p)
                    t = act[up]
                    ut = np.uint64(t)
                    uq = ut
                    if mapped is not None:
                        if nh > 0:
                            uq = ut - unh if ut >= unh else ut
                        else:
                            uq = np.uint64(idx[ut])
                    g = cG[up] + (d1 * R[s1, uq] + d2 * R[s2, uq])
                    cG[up] = g
                    mf = cyp[up] - g
                    a = ca[up]
                    u = cU[up]
                    v = mf if in_up(cy[up], a, u) else -np.inf
                    if takes_i(v, pre_m):
                        pre_m = v
                        pre_i = t
                    v = mf if in_low(cy[up], a, u) else np.inf
                    pre_M = v if v < pre_M else pre_M
                n_rest = 0
            for p in range(n_rest):
                # (mapped rows unshrunk, or any rows shrunk below the
                # copies' size gate; indices as uint64: no negative-index
                # wraparound per load)
                t = p if na == l else act[p]
                ut = np.uint64(t)
                uq = ut
                if mapped is not None:
                    if nh > 0:
                        uq = ut - unh if ut >= unh else ut
                    else:
                        uq = np.uint64(idx[ut])
                g = G[ut] + (d1 * R[s1, uq] + d2 * R[s2, uq])
                G[ut] = g
                mf = yp[ut] - g
                a = alpha[ut]
                u = U[ut]
                v = mf if in_up(y[ut], a, u) else -np.inf
                if takes_i(v, pre_m):
                    pre_m = v
                    pre_i = t
                v = mf if in_low(y[ut], a, u) else np.inf
                pre_M = v if v < pre_M else pre_M
            pre = True
        # ---- Gbar (the sum over the variables at their bound) ----
        # (svmlab.smo._core.gbar_change written out: the cached row read in
        # place through its slot, and no helper taking arrays or the named
        # tuples -- their reference-count updates at every call, decision
        # records 32s01 and 33s01; nh: _svr_half)
        for side in range(2):
            tb = i if side == 0 else j
            ub = Ui if side == 0 else Uj
            yb = yi if side == 0 else yj
            a_was = ai if side == 0 else aj
            a_now = ain if side == 0 else ajn
            if (a_was >= ub) == (a_now >= ub):
                continue
            cb = ub * yb if a_now >= ub else -ub * yb
            if na < l:
                Gbar[1, tb] += cb
                continue
            eb = idx[tb] if mapped is not None else tb
            sb = c_slot[eb]
            if sb >= 0:
                lru_hit(c_prev, c_next, c_meta, sb)
            else:
                sb, _ = slot_of_row(c_slot, c_owner, c_prev, c_next, c_meta, n_slots, eb)
                if store:
                    row_from_store(sh, eb, R[sb])
                else:
                    kernel_row(kd, eb, R[sb])
                    if mapped is not None:
                        rowfull[eb] = True
            if mapped is None:
                for q in range(l):
                    Gbar[0, q] += cb * R[sb, q]
            elif nh > 0:
                for h in range(2):
                    o = h * nh
                    for q in range(nh):
                        Gbar[0, o + q] += cb * R[sb, q]
            else:
                for q in range(l):
                    Gbar[0, q] += cb * R[sb, idx[q]]
        # ---- the free count ----
        ist[IS_NB] += (int(0.0 < ain < Ui) - int(0.0 < ai < Ui)
                       + int(0.0 < ajn < Uj) - int(0.0 < aj < Uj))
        fst[FS_B] = bn
        ist[IS_ITER] += 1
        if want_rec:
            sign_class = np.int64(0)
            if nu is not None:
                sign_class = np.int64(yi)
            _dual_record(rec, ist, i, j, ai, aj, ain, ajn, aju, L, H, eta, yi, yj, yp[i],
                         yp[j], Ui, Uj, kdiag[i], Kij, Kjj, Gi, Gj, b, bn, m, M, gap,
                         sign_class, best)
        steps += 1
        ist[IS_SHRINK_COUNTER] -= 1
    if cvalid:
        _write_back(act, ist[IS_N_ACTIVE], cG, G)
    return steps
