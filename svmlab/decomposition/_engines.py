"""Sub-problem engines shared by IRWLS, chunking and decomposition.

Every member of the decomposition family (Osuna, Freund & Girosi 1997;
Joachims' SVMlight 1999; Vapnik's chunking; Platt's SMO; Perez-Cruz et al.'s
IRWLS-SVC with its chunking scheme) alternates two things: choose a working
set ``B`` (:mod:`svmlab.decomposition._working_set`), then solve the dual restricted to
``B`` with everything else fixed.  This module is the second half.

The sub-problem, written with ``beta_i = y_i alpha_i`` (Perez-Cruz et al.'s
variables) over the ``m`` working-set samples::

    max_beta   r' beta - 1/2 beta' K_BB beta
    s.t.       sum_i beta_i = s0,     0 <= y_i beta_i <= C

with ``r_B = y_B - G_in`` where ``G_in = K_BN beta_N`` is the contribution of
the fixed samples (the paper's ``G_in``) and ``s0 = -sum_N beta_N`` (minus the
paper's ``Gb_in``).  For ``B`` = everything, ``r = y`` and ``s0 = 0``: the full
dual of :mod:`svmlab._base`.  The multiplier of the equality constraint is
the intercept ``b``; ``e_i = r_i - (K_BB beta)_i - b`` is the error of
sample i, ``y_i e_i = 1 - y_i f(x_i)``.

Engines (``engine=`` of :class:`~svmlab.DecompositionClassifier`):

``"irwls"``  :class:`ActiveSetSubproblem` with ``rule="irwls"``: the IRWLS-SVC
    procedure of Table 1 of Perez-Cruz et al. (2000): solve the weighted
    least-squares system (3) on S1 (0 < y beta < C) with S2 (beta = 0) and S3
    (y beta = C) fixed, then reorder the sets with rules a-d (all violators
    at once; after freeing more violators than there were free samples,
    the line-search mode takes over: :data:`TABLE1_HANDOVER`).
``"qp"``  the same class with ``rule="qp"``: a classical primal active-set
    method for a box + one equality QP (Nocedal & Wright, Algorithm 16.3):
    the same equality-constrained Newton system, but a line search that
    stops at the first bound hit, and one constraint released at a time.
    Monotone, finite, dependable for large C; slower than IRWLS because it
    changes one set member per linear solve.
``"smo"``  :func:`smo_engine`: Platt's analytic pair step
    (:func:`svmlab.smo._pairstep.pair_step`) iterated on the sub-problem with the
    maximal-violating pair.  With ``|B| = 2`` it is exactly one SMO step, so
    SMO is decomposition with q = 2 and this engine.

The linear system (3) of the paper, in increment form on S1::

    [ K_11  1 ] [ dbeta_1 ]   [ r_1 - (K beta)_1 ]
    [ 1'    0 ] [    b    ] = [ s0 - sum beta    ]

is solved by Cholesky of ``K_11`` and a Schur complement for ``b``
(``scipy.linalg.cho_factor``).  When ``K_11`` is not positive definite,
Table 1 stops there ((3) singular: the line-search mode takes over); the
line-search mode's Python fallback uses LU of the bordered matrix
(``scipy.linalg.lu_factor``) and, if that is singular too, least squares.

Speed (the line-search mode is where IRWLS spends almost all of its
iterations on hard problems such as banana with C=316): that mode runs
compiled (:func:`line_iterations`; :meth:`ActiveSetSubproblem.iterate` runs
a line-search iteration in Python only when no usable factor exists, with
the LU / least-squares fallback of :func:`solve_ls`), keeps the Cholesky factor of
``K_11 + ridge I`` between iterations and updates it in O(|S1|^2) per sample
that enters (:func:`chol_append`) or leaves (:func:`chol_delete`, Givens
rotations) S1; and the solvers run with single-threaded BLAS
(``blas_threads = 1`` on their :class:`svmlab._stepping.SolverRun`), since
threads cost more than they save on blocks of a few hundred rows.

Where the time of the line-search mode goes (issue 15, IRWLS at LIBSVM's
speed): it is an active-set method, so a working set of 200 takes ~150
iterations on gauss-m (C=1), each O(|S1|^2) for the factor update and the
two solves plus O(|S1| m) for ``K beta``, and a fresh O(|S1|^3 / 3) factor
after each release of violators.  (Since then ``K beta`` is updated on S1
only, O(|S1|^2) per iteration, and on the other samples once per full
step, :func:`_flush_pending`; and at most :data:`RELEASE_CAP` violators
are freed at a time.)  The compiled loops are therefore written
for the memory layout: the factor is only read by rows (the back
substitution with ``L'`` as row updates, :func:`chol_solve2` solving for
``rhs`` and ``1`` in one pass, :func:`chol_delete` taking its rotations row
by row), ``K beta`` is updated from rows of ``K'`` (contiguous), and the
inner products of the factor (:func:`_dot`) may be summed in any order
(SIMD).  Together 1.6x to 2x fewer seconds per line-search iteration
than the column-oriented loops they replace (measured on gauss-m 4000);
the results agree with those within rounding
(``tests/test_irwls_speed.py``).  Since issue 15's round 4 the products
with ``K_11`` of the ``"irwls"`` rule read the factor too
(:func:`k11_times`: ``K_11 v = L (L' v) - rr v``, contiguous rows instead
of a gather per entry of ``K``), the deferred update of ``K beta`` reads
rows of ``K'`` (:func:`_flush_pending`), and :func:`chol_delete` takes
four rows at a time (``tests/test_irwls_round4.py``).  Table 1's solves
are LAPACK's ``dpotrf``/``dpotrs`` called directly (:func:`_cho_factor`), the same calls
as the readable reference's ``scipy.linalg.cho_factor``, so bit for bit
the same, without scipy's per-call checks.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg as sla
from .._jit import njit

from .._kkt import intercept, intercept_from_v, up_low, violating_pair
from ..smo._pairstep import pair_step_box
from ..kernels.cache import get_row
from ..kernels._blocks import kernel_block_cols, kernel_block_cols_gemm
from ..kernels._rows import is_float64

__all__ = [
    "ENGINES",
    "ActiveSetSubproblem",
    "kernel_block",
    "kernel_block_counted",
    "add_rows",
    "smo_engine",
    "solve_subproblem",
    "solve_ls",
    "intercept_from_v",
]

ENGINES = ("qp", "irwls", "smo")

S1, S2, S3 = 1, 2, 3
#: How many violators of (9)/(10) the line-search mode of the "irwls" rule
#: frees after a full step: at most RELEASE_CAP, the worst of each sign of
#: ``e`` (:func:`_release_pick`); 0 frees every violator (the paper's
#: safeguard).  Measured (issue 15): freeing every violator at once (up to
#: a few hundred on gauss-m) makes S1 large, and the active-set iterations
#: that bound them again one by one cost O(|S1|^2) each; a cap of 10 took
#: gauss-m 4000 from 6.4x to 2.4x LIBSVM's time, Adult6 from 1.1x to 0.7x
#: (caps of 5 and 20 within noise of 10).
#:
#: The cap used to stall IRWLS on a linear-kernel problem
#: (tests/test_irwls.py, test_kernels_and_large_C[linear]: three working
#: sets in a row changed no multiplier).  Causes found and fixed:
#: (1) the cap freed the worst violators whatever their sign; at a point
#: with S1 empty they all needed ``sum beta`` to move one way, so the
#: step was zero, and the zero-step rule then freed the single worst
#: violator, which alone cannot move either (its step is fixed to 0 by the
#: equality): freed, bounded again, freed, until ``max_iter``, when the
#: sub-problem fell back to its starting point.  Now the cap frees the
#: worst of each sign, and the single release frees one of each sign
#: when S1 is empty.  (2) With a rank-deficient kernel (the linear one, S1
#: larger than the rank) the ridge-regularised direction lost ``1'd = c``
#: to cancellation (1e-7), so the iterate never passed the feasibility
#: test that ends the sub-problem; the direction is now put back on the
#: plane.  Both also ran without a cap (sub-problems at ``max_iter``: 6531
#: IRWLS iterations on that test problem, now ~270).
RELEASE_CAP = 10

#: Table 1 hands over (issue 15, round 4): when a Table 1 iteration has
#: freed (rules c/d) more violators of (9)/(10) than there were samples in
#: S1, the next iteration does not solve (3) with all of them free: it goes
#: back to the point before the release (feasible, the last one saved) and
#: the line-search mode takes the working set from there.  That solve was
#: a system over (nearly) the whole working set whose solution rules a/b
#: then clipped by the hundreds: on the first working set of diabetes (S1
#: empty, all 400, or with one working set all 768, samples freed) Table 1
#: was abandoned for its start point after that factor, ~1.5 ms (15 ms for
#: 768).  Measured with everything else of round 4 in place, best of 5,
#: hand-over off -> on: diabetes 28 -> 12 ms, splice 20.5 -> 19.7 ms,
#: banana 4900 134 -> 117 ms, gauss-m 4000 273 -> 234 ms.  Table 1 itself
#: runs as the paper's, rules c/d included; the hand-over is one of the
#: exits to the line-search mode, as a repeated set configuration or a
#: downhill step.
#: Only when S1 then holds more than TABLE1_HANDOVER_MIN samples: a
#: smaller (3) costs little, and Table 1 keeps its own course there.
#: See ActiveSetSubproblem.
TABLE1_HANDOVER = True
TABLE1_HANDOVER_MIN = 100

#: Table 1's downhill test (issue 15, round 3): a full Table 1 step counts
#: as lowering the dual only when ``W < best_W - DOWNHILL_RTOL (1 + |best_W|)``.
#: With S1 already optimal the solve of (3) returns rounding noise and W
#: equals the best value up to a few ulps; the exact comparison ``W <
#: best_W`` then sent sound Table 1 iterations to the line-search mode at
#: random (diabetes: -7e-12 on W = 6.4e4, relative 1e-16; that working set
#: then took ~100 line-search iterations; the fit's time is unchanged, as
#: Table 1 leaves for the line-search mode later on that set anyway).  A
#: real downhill step lowers W by far more than 1e-12 relative; one that
#: lowers it by less is accepted, and the dual can fall by that much.
#: The readable twin (:func:`svmlab.reference.irwls.table1_iteration`)
#: applies the same test.
DOWNHILL_RTOL = 1e-12


#: Rows per panel of a square block computed by its upper triangle
#: (:func:`kernel_block_into`)
PANEL = 64


# --------------------------------------------------------------------------
# kernel rows through the shared cache
# --------------------------------------------------------------------------
@njit(cache=True)
def kernel_block_counted(kd, cd, rows, cols):
    """``(K[rows][:, cols], n_direct)`` in float64, from the kernel-block
    layer (:mod:`svmlab.kernels._blocks`).

    Parameters
    ----------
    kd : KernelData
        The kernel and its training set.
    cd : CacheData
        The LRU row cache.  When it holds float64 rows, a row ``rows[a]``
        already cached is read from it (a hit, as ``get_row``); float32
        rows are not used here, so that the block (``K_BB`` of a
        sub-problem, factorised by Cholesky) is float64 throughout.
    rows, cols : int64 arrays (m,), (p,)
        Training indices.

    The other rows come as one block, :func:`kernel_block_cols_gemm`
    (float64, the inner products as one DGEMM: the values may differ from
    the cached rows in the last bits, ``d u64 sum_k |x_ak x_jk|``; exactly
    the same on data whose inner products are exact), ``n_direct`` the
    entries computed outside the cache.  A square block ``K_BB`` with no
    row cached (``rows`` equal to ``cols``) is computed by its upper
    triangle, in panels of :data:`PANEL` rows, and mirrored: exactly
    symmetric, about half the kernel values (issue 15, round 4: the rows
    made one GEMV each, the whole square: 2.3 ms on diabetes' 768 x 768
    against 1.6 ms; a GEMM alone takes splice's 1000 x 1000 with 60
    features from 4.2 ms to 2.4 ms).
    A working-set block does not need the full rows of its samples: only
    the samples whose multiplier changes fetch full rows (for the G update,
    :func:`add_rows`).

    (Before the block layer, an uncached row's entries were computed one
    ``kernel_value`` at a time, or read by symmetry from cached rows ``cols``
    with a strided gather: 1.5x the time on gauss-m's 200 x 200 blocks.)"""
    m = rows.shape[0]
    p = cols.shape[0]
    out = np.empty((m, p))
    n_direct = kernel_block_into(kd, cd, rows, cols, out, np.empty((m, p)))
    return out, n_direct


@njit(cache=True)
def kernel_block_into(kd, cd, rows, cols, out, tmp):
    """:func:`kernel_block_counted` into given arrays; returns ``n_direct``.

    Parameters
    ----------
    kd, cd, rows, cols : as :func:`kernel_block_counted`.
    out : float64 array (m, p), output
        ``K[rows][:, cols]``.
    tmp : float64 array (>= m, p)
        Scratch for the uncached rows (when some rows are cached).

    IRWLS keeps both between working sets (issue 15, round 4: a fresh
    400 x 400 float64 array costs ~0.1 ms of page faults before its first
    use, several times per working set)."""
    m = rows.shape[0]
    p = cols.shape[0]
    todo = np.empty(m, np.int64)
    n_todo = 0
    use_cache = is_float64(cd.rows)
    for a in range(m):
        i = rows[a]
        if use_cache and cd.slot_of[i] >= 0:
            r = get_row(kd, cd, i)
            o = out[a]
            for c in range(p):
                o[c] = r[cols[c]]
        else:
            todo[n_todo] = a
            n_todo += 1
    same = m == p
    if same:
        for a in range(m):
            if rows[a] != cols[a]:
                same = False
                break
    if n_todo == m and same:
        # no row cached, a square block K_BB: its upper triangle by panels
        # of PANEL rows, mirrored (about half the kernel values)
        flat = tmp.reshape(tmp.size)
        n_done = 0
        for a0 in range(0, m, PANEL):
            a1 = min(m, a0 + PANEL)
            w = m - a0
            n_done += (a1 - a0) * w
            buf = flat[:(a1 - a0) * w].reshape((a1 - a0, w))
            kernel_block_cols_gemm(kd, rows[a0:a1], cols[a0:], buf)
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
    if n_todo == m:
        # no row cached: the block straight into ``out`` (a temporary of the
        # block's size costs its page faults and a copy: 2x the block's
        # time on diabetes' 768 x 768)
        kernel_block_cols_gemm(kd, rows, cols, out)
    elif n_todo > 0:
        sub = np.empty(n_todo, np.int64)
        for k in range(n_todo):
            sub[k] = rows[todo[k]]
        blk = tmp[:n_todo]
        kernel_block_cols_gemm(kd, sub, cols, blk)
        for k in range(n_todo):
            out[todo[k]] = blk[k]
    return n_todo * p


@njit(cache=True)
def kernel_block(kd, cd, rows, cols):
    """``K[rows][:, cols]`` (cached rows reused, see :func:`kernel_block_counted`)."""
    return kernel_block_counted(kd, cd, rows, cols)[0]


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
    once per row (memory traffic: a row of n values is streamed from the
    cache either way).  :func:`get_row` keeps the two most recently fetched
    rows, so both views stay valid."""
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


# --------------------------------------------------------------------------
# Cholesky factor of K_11 (+ ridge) kept up to date while S1 changes
# --------------------------------------------------------------------------
@njit(cache=True)
def _rotate_row(r, cs, sn, k0, k1):
    """Rotations ``k0..k1-1`` of :func:`chol_delete` on row ``r``, in order:
    rotation k mixes entries k and k+1 (skipped when ``cs[k] == 2``)."""
    for k in range(k0, k1):
        c = cs[k]
        if c == 2.0:  # skipped rotation (r == 0)
            continue
        s = sn[k]
        lk = r[k]
        lk1 = r[k + 1]
        r[k] = c * lk + s * lk1
        r[k + 1] = -s * lk + c * lk1


@njit(cache=True)
def chol_delete(L, n, p):
    """Remove row/column ``p`` from the lower factor ``L[:n, :n]`` of
    ``A = L L'`` in O(n^2) (rows shifted up, Givens rotations on columns).

    Row-oriented: after the shift, row ``i`` has one entry right of its
    diagonal; rotation ``k`` (columns k, k+1) is computed from row k once
    rotations p..k-1 have reached it, so each row takes its rotations in
    order while it is in cache (the same operations, in the same order per
    entry, as rotating column pairs over all rows).

    Four rows at a time (issue 15, round 4): rotations ``p..i0-1``, all
    known before the block of rows ``i0..i0+3``, go to the four rows
    interleaved (four independent chains of dependent multiply-adds
    instead of one: ~2.5x fewer seconds for a deletion near the top of a
    150-row factor); the rows then finish one after the other (rotations
    ``i0..i-1``, then their own).  Each entry still takes the same
    operations in the same order: the result is bit for bit the same."""
    cs = np.empty(n)
    sn = np.empty(n)
    i0 = p
    while i0 < n - 1:
        nb = min(4, n - 1 - i0)
        # shift rows i0+1..i0+nb up (each copied before it is overwritten)
        for i in range(i0, i0 + nb):
            ri = L[i]
            rn = L[i + 1]
            for j in range(i + 2):
                ri[j] = rn[j]
        if nb == 4:
            r0 = L[i0]
            r1 = L[i0 + 1]
            r2 = L[i0 + 2]
            r3 = L[i0 + 3]
            for k in range(p, i0):
                c = cs[k]
                if c == 2.0:
                    continue
                s = sn[k]
                a0 = r0[k]
                b0 = r0[k + 1]
                a1 = r1[k]
                b1 = r1[k + 1]
                a2 = r2[k]
                b2 = r2[k + 1]
                a3 = r3[k]
                b3 = r3[k + 1]
                r0[k] = c * a0 + s * b0
                r0[k + 1] = -s * a0 + c * b0
                r1[k] = c * a1 + s * b1
                r1[k + 1] = -s * a1 + c * b1
                r2[k] = c * a2 + s * b2
                r2[k + 1] = -s * a2 + c * b2
                r3[k] = c * a3 + s * b3
                r3[k + 1] = -s * a3 + c * b3
            kdone = i0
        else:
            kdone = p
        for i in range(i0, i0 + nb):
            ri = L[i]
            # the remaining rotations, then the one that zeroes L[i, i+1]
            _rotate_row(ri, cs, sn, kdone, i)
            a = ri[i]
            bb = ri[i + 1]
            r = np.hypot(a, bb)
            if r == 0.0:
                cs[i] = 2.0
                continue
            c = a / r
            s = bb / r
            cs[i] = c
            sn[i] = s
            ri[i] = c * a + s * bb
            ri[i + 1] = 0.0
        i0 += nb
    for j in range(n):
        L[n - 1, j] = 0.0
        L[j, n - 1] = 0.0


@njit(cache=True, fastmath={"reassoc", "contract"})
def _dot(a, b, n):
    """``sum_k a[k] b[k]`` for k < n, with the sum reassociated (SIMD
    partial sums: numba compiles a plain float reduction one product at a
    time).  The fast-math flags are only these two: no assumption about
    NaN or infinities, so the finiteness tests of the callers still hold.
    Used by the kept Cholesky factor of the line-search mode only (Table 1's
    solves are scipy's, bit for bit those of the readable reference)."""
    s = 0.0
    for k in range(n):
        s += a[k] * b[k]
    return s


@njit(cache=True)
def chol_append(L, n, kcol, kdiag):
    """Append a row/column (``kcol`` = its entries against the n current
    ones, ``kdiag`` its diagonal) to the factor in O(n^2).  False (factor
    unchanged) if the new pivot is not positive."""
    s = kdiag
    Ln = L[n]
    for i in range(n):
        t = (kcol[i] - _dot(L[i], Ln, i)) / L[i, i]
        L[n, i] = t
        s -= t * t
    if not (s > 0.0) or not np.isfinite(s):
        for i in range(n):
            L[n, i] = 0.0
        return False
    L[n, n] = np.sqrt(s)
    return True


@njit(cache=True)
def chol_solve(L, n, rhs):
    """``(L L')^{-1} rhs`` for the leading n x n factor."""
    x = rhs.copy()
    for i in range(n):
        t = x[i]
        for j in range(i):
            t -= L[i, j] * x[j]
        x[i] = t / L[i, i]
    for i in range(n - 1, -1, -1):
        t = x[i]
        for j in range(i + 1, n):
            t -= L[j, i] * x[j]
        x[i] = t / L[i, i]
    return x


@njit(cache=True)
def chol_solve2(L, n, rhs, u, w):
    """``u = (L L')^{-1} rhs`` and ``w = (L L')^{-1} 1`` for the leading
    n x n factor, both in one pass over ``L`` (rows only: the back
    substitution with ``L'`` subtracts each solved entry times row i of L
    from the entries before it).  ``u``, ``w``: outputs, length >= n."""
    for i in range(n):
        li = L[i]
        d = li[i]
        u[i] = (rhs[i] - _dot(li, u, i)) / d
        w[i] = (1.0 - _dot(li, w, i)) / d
    for i in range(n - 1, -1, -1):
        li = L[i]
        d = li[i]
        ui = u[i] / d
        wi = w[i] / d
        u[i] = ui
        w[i] = wi
        for j in range(i):
            u[j] -= li[j] * ui
            w[j] -= li[j] * wi


@njit(cache=True)
def chol_factor(K, order, n, rr, L):
    """Cholesky of ``K[order][:, order] + rr I`` into ``L[:n, :n]`` (lower);
    False if a pivot is not positive (LAPACK potrf's test)."""
    for j in range(n):
        oj = order[j]
        Lj = L[j]
        s = K[oj, oj] + rr - _dot(Lj, Lj, j)
        if not (s > 0.0) or not np.isfinite(s):
            return False
        ljj = np.sqrt(s)
        Lj[j] = ljj
        for i in range(j + 1, n):
            L[i, j] = (K[order[i], oj] - _dot(L[i], Lj, j)) / ljj
    return True


# state vector of the compiled line-search iterations (see line_iterations)
_ST_B, _ST_NORD, _ST_RR, _ST_BESTW, _ST_FB, _ST_DEGEN, _ST_NITER, _ST_DONE = range(8)
_ST_NA, _ST_NB, _ST_NC, _ST_ND, _ST_METHOD, _ST_KMAX, _ST_NPEND = range(8, 15)
_ST_SIZE = 15
_METHODS = ("cholesky", "cholesky+ridge", "bounds")


@njit(cache=True)
def _bounds_b(r, Kb, y, beta, C):
    """:func:`svmlab._kkt.intercept` for ``v = r - K beta`` and ``alpha =
    clip(y beta, 0, C)`` (S1 empty); ``C`` the per-sample upper bounds (m,)."""
    m = y.shape[0]
    v = np.empty(m)
    a = np.empty(m)
    for k in range(m):
        v[k] = r[k] - Kb[k]
        a[k] = min(max(y[k] * beta[k], 0.0), C[k])
    return intercept(v, y, a, C)


@njit(cache=True)
def _is_symmetric(K):
    """Whether ``K == K.T`` bit for bit (stops at the first difference;
    ``np.array_equal(K, K.T)`` compared every entry through a temporary)."""
    m = K.shape[0]
    for i in range(m):
        for j in range(i):
            if K[i, j] != K[j, i]:
                return False
    return True


@njit(cache=True)
def _flush_pending(KT, Kb, sets, pend, pidx, npend, inp, clear=True):
    """Apply the deferred ``K beta`` update to the samples outside S1 and
    clear it; returns the new count of pending entries (0).

    Parameters
    ----------
    KT : float64 array (m, m)
        The sub-problem's kernel matrix transposed (``K`` itself when it is
        symmetric): row j of ``KT`` is column j of ``K``, and the update is
        ``sum_j pend_j KT[j]``, one contiguous row per pending sample (issue
        15, round 4: the gathers ``K[k, pidx]`` row by row it replaces cost
        several times more).
    Kb : float64 array (m,), updated in place
        ``K beta``: exact on S1 (``sets == 1``); outside S1 it lacks
        ``K[k, pidx] @ pend[pidx]``, which this adds.
    sets : int8 array (m,)
        1 = S1, 2 = S2, 3 = S3.
    pend : float64 array (m,), zeroed on ``pidx`` on return
        Changes of beta since the last flush.
    pidx : int64 array (m,)
        ``pidx[:npend]``: the samples whose ``pend`` is non-zero.
    npend : int
    inp : bool array (m,), cleared on ``pidx`` on return
        Marks the samples in ``pidx[:npend]``.
    clear : bool
        False: only add the pending part to ``Kb`` (a copy for Python),
        keep ``pend``, ``inp`` and return ``npend``.

    Our decision (issue 15): a blocked line-search step changes every beta
    of S1, and updating ``K beta`` on all m samples cost ``|S1| m`` per
    step, more than the factor update and the solves (``|S1|^2``) when
    S1 is small (~40 of m = 400 on gauss-m).  Only S1's entries are needed
    until the next full step (the next right-hand side); the others are
    needed by the release test after a full step, so they are brought up to
    date then (and before returning to Python): ``(m - |S1|) * npend``
    once per full step instead of ``m * |S1|`` per step.  A sample that
    leaves S1 is put into the deferred state by subtracting its pending
    part.  The sums differ from the step-by-step update only in rounding
    (the naive twin :mod:`svmlab.reference.subproblem` updates step by
    step)."""
    m = Kb.shape[0]
    if npend == 0:
        return 0
    acc = np.zeros(m)
    for a in range(npend):
        j = pidx[a]
        kj = KT[j]
        pj = pend[j]
        for k in range(m):
            acc[k] += kj[k] * pj
    for k in range(m):
        if sets[k] != 1:
            Kb[k] += acc[k]
    if not clear:
        return npend
    for a in range(npend):
        j = pidx[a]
        pend[j] = 0.0
        inp[j] = False
    return 0


@njit(cache=True)
def _k_smallest(vval, vpos, side, k, out, a):
    """Write into ``out[a:a+k']`` the positions of the ``k`` smallest
    ``(vval[q], q)`` (lexicographic: the lower position on equal values)
    among the positions with ``vpos[q] == (side == 1)`` (``side`` 2: all);
    returns ``a + k'``, ``k' = min(k, their number)``.  One pass, keeping
    the k best in order (insertion; most positions fail the first test)."""
    if k <= 0:
        return a
    bv = np.empty(k)
    bq = np.empty(k, np.int64)
    cnt = 0
    for q in range(vval.shape[0]):
        if side != 2 and vpos[q] != (side == 1):
            continue
        v = vval[q]
        if cnt == k and not v < bv[k - 1]:
            continue
        # insertion point: after every kept value <= v (those came first)
        j = cnt if cnt < k else k - 1
        while j > 0 and bv[j - 1] > v:
            if j < k:
                bv[j] = bv[j - 1]
                bq[j] = bq[j - 1]
            j -= 1
        bv[j] = v
        bq[j] = q
        if cnt < k:
            cnt += 1
    for t in range(cnt):
        out[a + t] = bq[t]
    return a + cnt


@njit(cache=True)
def _release_pick(vval, vpos, npos, kmax, nF):
    """Which violators of (9)/(10) a full line-search step frees (rules c/d):
    positions into ``vval``.

    Parameters
    ----------
    vval : float64 array (nv,)
        Minus the violation of each violator (``-y e`` on S2, ``y e`` on
        S3): the worst first in ascending order.
    vpos : bool array (nv,)
        Whether its error ``e_i`` is positive, i.e. ``beta_i`` must grow
        (S2 with ``y = +1``, S3 with ``y = -1``).
    npos : int
        ``vpos.sum()``.
    kmax : int
        How many to free: 0 all; 1 the single worst (the ``"qp"`` rule, a
        zero step); else at most ``kmax``, the worst of each sign (below).
    nF : int
        |S1|.

    Our decisions (issue 15), made because ``sum beta`` is fixed in the
    sub-problem, so the freed samples can only move together with samples
    moving ``beta`` the other way:

    * the single release (``kmax = 1``) frees the worst violator of *each*
      sign when S1 is empty: then b is the middle of the interval of the
      bounded samples, the two extreme violators tie, and one of them
      alone cannot move (its step is fixed to 0 by the equality); freeing
      it, bounding it again and freeing it once more cycled until
      ``max_iter``, and the working set changed nothing (a stall);
    * the cap (``kmax > 1``) frees up to ``kmax // 2`` of the worst of
      each sign, a sign with fewer leaving its share to the other (as the
      working-set selection :func:`svmlab.decomposition._working_set.irwls_select`):
      the ``kmax`` worst overall were often all of one sign, which cannot
      move against the equality, so the step was zero and the release
      fell back to one sample at a time.

    Ties: the lower position first (a stable sort; for up to 16 picks, the
    same picks in one pass, :func:`_k_smallest`).  The naive twin
    is the sort kept below for more picks (``tests/test_irwls_round4.py``
    compares the two)."""
    nv = vval.shape[0]
    if kmax <= 0 or nv <= kmax and not (kmax == 1 and nF == 0):
        return np.arange(nv)
    nneg = nv - npos
    if kmax == 1 and nF > 0:
        kp = 1
        kn = 0
    elif kmax == 1:
        kp = 1 if npos > 0 else 0
        kn = 1 if nneg > 0 else 0
    else:
        kp = min(npos, max(kmax // 2, kmax - nneg))
        kn = min(nneg, kmax - kp)
    if kp + kn <= 16:
        # a few: one pass keeping the k smallest of each side instead of
        # sorting every violator (issue 15, round 4: the sort took a fifth
        # of the line-search mode's time on gauss-m 4000)
        out = np.empty(kp + kn, np.int64)
        if kmax == 1 and nF > 0:
            _k_smallest(vval, vpos, 2, 1, out, 0)
            return out
        a = _k_smallest(vval, vpos, 1, kp, out, 0)
        _k_smallest(vval, vpos, 0, kn, out, a)
        return np.sort(out)
    order = np.argsort(vval, kind="mergesort")
    out = np.empty(kp + kn, np.int64)
    a = 0
    gp = 0
    gn = 0
    for q in range(nv):
        k = order[q]
        if vpos[k]:
            if gp < kp:
                out[a] = k
                a += 1
                gp += 1
        elif gn < kn:
            out[a] = k
            a += 1
            gn += 1
    return np.sort(out)


@njit(cache=True)
def k11_times(L, n, rr, v, out, tmp):
    """``out = K_11 v`` from the kept factor: ``L L' = K_11 + rr I``, so
    ``K_11 v = L (L' v) - rr v``.

    Parameters
    ----------
    L : float64 array (>= n, >= n)
        Lower Cholesky factor of ``K_11 + rr I`` (leading n x n block).
    n : int
        |S1|.
    rr : float
        The ridge of the factor.
    v : float64 array (>= n,)
    out, tmp : float64 arrays (>= n,), outputs (``tmp`` is scratch: ``L' v``)

    Our decision (issue 15, round 4): the update of ``K beta`` on S1 after
    a line-search step of the ``"irwls"`` rule reads the rows of the
    factor, contiguous, instead of a row of ``K'`` per changed sample
    gathered at the positions of S1 (a gather per entry, several times
    slower); the result equals ``K_11 v`` up to the factor's backward
    error (a few ulps of ``||K_11||``), and ``K beta`` on S1 is summed in
    another order than before (rounding only; the ``"qp"`` rule keeps the
    gathers)."""
    for j in range(n):
        tmp[j] = 0.0
    for i in range(n):
        li = L[i]
        vi = v[i]
        for j in range(i + 1):
            tmp[j] += li[j] * vi
    for i in range(n):
        out[i] = _dot(L[i], tmp, i + 1) - rr * v[i]


@njit(cache=True)
def line_iterations(K, y, r, C, tol, s0, qp, max_steps, max_iter, beta, Kb, sets, fbeta, fKb,
                    L, order, st, KT, Kout, pend, pidx, inp):
    """Up to ``max_steps`` line-search-mode iterations of
    :class:`ActiveSetSubproblem`, compiled (solve (3) on S1 with the kept
    Cholesky factor of ``K_11 + rr I``,
    step to the first bound, rules a/b for the blocking samples, release the
    violators of (9)/(10) by rules c/d).  State in/out through the arrays and
    ``st``.  Returns ``(n_done, need_python)``: ``need_python`` means the
    next iteration needs the LU / least-squares fallback of :func:`solve_ls`
    (nothing was changed for it).  ``C`` holds the per-sample upper bounds
    (m,).  ``KT`` is ``K`` transposed (C-contiguous; ``K`` itself when it is
    symmetric): the update ``Kb += K[:, i] delta`` reads row i of ``KT``,
    contiguous, instead of a strided column of ``K``.  ``st[_ST_KMAX]``
    caps how many violators a full step frees (:func:`_release_pick`: the
    worst of each sign of e, the lower index on ties; 0: all; see
    :data:`RELEASE_CAP`); ``qp`` and a zero step free the single worst (one
    of each sign when S1 is empty).  The direction is put back on the
    plane ``1'd = c`` before the step.

    ``Kb`` is the state's own ``K beta``, up to date on S1 and, outside S1,
    lacking the changes ``pend`` of the samples ``pidx[:st[_ST_NPEND]]``
    (marked in ``inp``), which :func:`_flush_pending` applies after each
    full step; ``Kout`` receives ``K beta`` up to date everywhere (for
    Python) on return, without changing the state, so that the iterates do
    not depend on how the iterations are split into calls."""
    m = y.shape[0]
    Cmax = 0.0
    for i in range(m):
        Cmax = max(Cmax, C[i])
    dmax = 1.0
    for i in range(m):
        dmax = max(dmax, abs(K[i, i]))
    ridge = 1e-12 * dmax
    mark = np.zeros(m, np.bool_)
    kcol = np.empty(m)
    u = np.empty(m)
    w = np.empty(m)
    rhs = np.empty(m)
    vidx = np.empty(m, np.int64)
    vval = np.empty(m)
    vpos = np.empty(m, np.bool_)
    kpbuf = np.empty(m)
    tbuf = np.empty(m)
    npend = int(st[_ST_NPEND])
    done_steps = 0
    while done_steps < max_steps and st[_ST_DONE] == 0.0:
        nF = 0
        for i in range(m):
            if sets[i] == 1:
                nF += 1
        na = nb = nc = nd = 0
        full = True
        if nF == 0:
            npend = _flush_pending(KT, Kb, sets, pend, pidx, npend, inp)
            st[_ST_B] = _bounds_b(r, Kb, y, beta, C)
            st[_ST_METHOD] = 2
        else:
            c = s0 - beta.sum()
            n = int(st[_ST_NORD])
            ok = False
            den = 0.0
            usum = 0.0
            for attempt in range(2):
                fresh = n < 0 or attempt == 1
                if not fresh:
                    n_keep = 0
                    for q in range(n):
                        if sets[order[q]] == 1:
                            n_keep += 1
                    if (n - n_keep + nF - n_keep) * 3 > n + 8:
                        fresh = True
                    else:
                        for q in range(n - 1, -1, -1):
                            if sets[order[q]] != 1:
                                chol_delete(L, n, q)
                                for p in range(q, n - 1):
                                    order[p] = order[p + 1]
                                n -= 1
                        mark[:] = False
                        for q in range(n):
                            mark[order[q]] = True
                        for i in range(m):
                            if sets[i] == 1 and not mark[i]:
                                for q in range(n):
                                    kcol[q] = K[i, order[q]]
                                if not chol_append(L, n, kcol[:n], K[i, i] + st[_ST_RR]):
                                    fresh = True
                                    break
                                order[n] = i
                                n += 1
                if fresh:
                    # entries outside the leading block of the largest factor
                    # held so far are zero already
                    nz = m if st[_ST_NORD] < 0 else max(int(st[_ST_NORD]), nF)
                    n = 0
                    scale = 1.0
                    for i in range(m):
                        if sets[i] == 1:
                            order[n] = i
                            n += 1
                            scale = max(scale, abs(K[i, i]))
                    L[:nz, :nz] = 0.0
                    rr = ridge
                    got = False
                    while rr < 1e-2 * scale:
                        if chol_factor(K, order, n, rr, L):
                            got = True
                            break
                        L[:nz, :nz] = 0.0
                        rr *= 100.0
                    if not got:
                        st[_ST_NORD] = -1.0
                        st[_ST_NPEND] = _flush_pending(KT, Kb, sets, pend, pidx, npend, inp)
                        Kout[:] = Kb
                        return done_steps, True
                    st[_ST_RR] = rr
                st[_ST_NORD] = n
                for q in range(n):
                    rhs[q] = r[order[q]] - Kb[order[q]]
                chol_solve2(L, n, rhs, u, w)
                den = 0.0
                usum = 0.0
                for q in range(n):
                    den += w[q]
                    usum += u[q]
                if den > 0 and np.isfinite(den) and np.isfinite(usum):
                    ok = True
                    break
                if fresh:
                    break
            if not ok:
                st[_ST_NORD] = -1.0
                st[_ST_NPEND] = _flush_pending(KT, Kb, sets, pend, pidx, npend, inp)
                Kout[:] = Kb
                return done_steps, True
            b = (usum - c) / den
            st[_ST_METHOD] = 0 if st[_ST_RR] == ridge else 1
            # the direction, put back on the plane 1'd = c: with a nearly
            # singular K_11 (a rank-deficient kernel such as the linear one
            # with |S1| above its rank) u and w are ~1/ridge large and
            # u - b w loses the equality to cancellation (1e-7 on
            # tests/test_irwls.py's linear case); the iterate then never
            # passes the feasibility test below, the sub-problem runs to
            # max_iter and falls back to its start point, a stall.  One
            # sample in S1: the equality fixes its step to c exactly (the
            # sign of u - b w - c, rounding, would decide between a blocked
            # step and a tiny one)
            d = np.empty(n)
            dsum = 0.0
            for q in range(n):
                d[q] = u[q] - b * w[q]
                dsum += d[q]
            corr = (c - dsum) / n
            for q in range(n):
                d[q] = d[q] + corr if n > 1 else c
            # step to the first bound
            t = 1.0
            tq = np.empty(n)
            for q in range(n):
                i = order[q]
                yd = y[i] * d[q]
                yo = y[i] * beta[i]
                if yd < 0:
                    tq[q] = yo / -yd
                elif yd > 0:
                    tq[q] = (C[i] - yo) / yd
                else:
                    tq[q] = np.inf
                if tq[q] < t:
                    t = tq[q]
            t = max(t, 0.0)
            st[_ST_DEGEN] = 1.0 if t <= 1e-14 else 0.0
            full = t >= 1.0
            for q in range(n):
                i = order[q]
                old = beta[i]
                new = old + t * d[q]
                if not full and tq[q] <= t * (1 + 1e-12) + 1e-300:
                    yd = y[i] * d[q]
                    if yd < 0:
                        new = 0.0
                        na += 1
                        sets[i] = 2
                    elif yd > 0:
                        new = C[i] * y[i]
                        nb += 1
                        sets[i] = 3
                beta[i] = new
                delta = new - old
                d[q] = delta
                if delta != 0.0:
                    if not inp[i]:
                        inp[i] = True
                        pidx[npend] = i
                        npend += 1
                    pend[i] += delta
                    if qp:
                        # K beta on the rows of S1 now (they give the next rhs)
                        kt = KT[i]
                        for p in range(n):
                            k = order[p]
                            Kb[k] += kt[k] * delta
            if not qp:
                # K beta on the rows of S1 from the factor (k11_times)
                k11_times(L, n, st[_ST_RR], d, kpbuf, tbuf)
                for q in range(n):
                    Kb[order[q]] += kpbuf[q]
            if not full:
                # samples leaving S1: back to "K beta minus the pending part"
                for q in range(n):
                    k = order[q]
                    if sets[k] != 1:
                        Kk = K[k]
                        acc = 0.0
                        for a in range(npend):
                            j = pidx[a]
                            acc += Kk[j] * pend[j]
                        Kb[k] -= acc
            st[_ST_B] = b
        if full:
            npend = _flush_pending(KT, Kb, sets, pend, pidx, npend, inp)
            b = st[_ST_B]
            # release the violators of (9)/(10) (rules c/d): all of them, at
            # most ``st[_ST_KMAX]`` of the worst (0: no cap), or the single
            # worst after a zero step or with the "qp" rule; the worst first,
            # the lower index on equal violations
            kmax = 1 if (qp or st[_ST_DEGEN] != 0.0) else int(st[_ST_KMAX])
            nv = 0
            npos = 0
            for i in range(m):
                ye = y[i] * (r[i] - Kb[i] - b)
                if sets[i] == 2 and ye > tol:
                    vidx[nv] = i
                    vval[nv] = -ye
                    vpos[nv] = y[i] > 0
                    npos += vpos[nv]
                    nv += 1
                elif sets[i] == 3 and ye < -tol:
                    vidx[nv] = i
                    vval[nv] = ye
                    vpos[nv] = y[i] < 0
                    npos += vpos[nv]
                    nv += 1
            pick = _release_pick(vval[:nv], vpos[:nv], npos, kmax, nF)
            for q in range(pick.shape[0]):
                i = vidx[pick[q]]
                if sets[i] == 2:
                    nc += 1
                else:
                    nd += 1
                sets[i] = 1
            if abs(beta.sum() - s0) <= 1e-9 * (1.0 + Cmax * m):
                W = 0.0
                for i in range(m):
                    W += beta[i] * (r[i] - 0.5 * Kb[i])
                st[_ST_BESTW] = W
                fbeta[:] = beta
                fKb[:] = Kb
                st[_ST_FB] = st[_ST_B]
                if nc == 0 and nd == 0:
                    st[_ST_DONE] = 1.0
        st[_ST_NA] = na
        st[_ST_NB] = nb
        st[_ST_NC] = nc
        st[_ST_ND] = nd
        st[_ST_NITER] += 1
        done_steps += 1
        if st[_ST_DONE] == 0.0 and st[_ST_NITER] >= max_iter:
            npend = _flush_pending(KT, Kb, sets, pend, pidx, npend, inp)
            beta[:] = fbeta
            Kb[:] = fKb
            st[_ST_B] = st[_ST_FB]
            for i in range(m):
                a = y[i] * beta[i]
                sets[i] = 2 if a <= 0.0 else (3 if a >= C[i] else 1)
            st[_ST_DONE] = 1.0
    # Kout: K beta up to date on every sample, for Python (the state itself
    # keeps its deferred part, so that the iterates do not depend on how
    # the iterations are split into calls)
    st[_ST_NPEND] = npend
    Kout[:] = Kb
    if npend > 0:
        _flush_pending(KT, Kout, sets, pend, pidx, npend, inp, False)
    return done_steps, False


# --------------------------------------------------------------------------
# intercept from the gradient (LIBSVM's rule), shared by all engines
# --------------------------------------------------------------------------
def as_bounds(C, m):
    """The per-sample upper bounds as a contiguous float64 array of length
    m: a scalar C is repeated, an array is checked and copied."""
    Cv = np.asarray(C, dtype=np.float64)
    if Cv.ndim == 0:
        return np.full(m, float(Cv))
    if Cv.shape != (m,):
        raise ValueError(f"C has shape {Cv.shape}; expected a scalar or ({m},)")
    return np.ascontiguousarray(Cv, dtype=np.float64).copy()


# --------------------------------------------------------------------------
# the linear system (3)
# --------------------------------------------------------------------------
_potrf = sla.lapack.dpotrf
_potrs = sla.lapack.dpotrs


def _cho_factor(A):
    """``scipy.linalg.cho_factor(A, lower=True, check_finite=False)`` without
    its Python checks: the same LAPACK ``dpotrf`` call on the same array
    (so the same bits as the readable reference's ``cho_factor``).  Raises
    LinAlgError when ``A`` is not positive definite, as cho_factor does."""
    cf, info = _potrf(A, lower=1, clean=0, overwrite_a=0)
    if info != 0:
        raise np.linalg.LinAlgError(f"dpotrf info={info}")
    return cf


def _cho_solve(cf, b):
    """``scipy.linalg.cho_solve((cf, True), b, check_finite=False)``: the same
    LAPACK ``dpotrs`` call."""
    x, info = _potrs(cf, b, lower=1, overwrite_b=0)
    if info != 0:
        raise ValueError(f"dpotrs info={info}")
    return x


def solve_ls(K11, rhs, c, ridge=0.0, allow_lstsq=True, allow_lu=True):
    """Solve ``K11 d + b 1 = rhs``, ``1' d = c``.  Returns ``(d, b, method)``.

    With ``ridge > 0`` (the monotone line-search mode) ``K11 + ridge I`` is
    factorised by Cholesky, the ridge growing x100 until it is positive
    definite: the direction is then always a descent direction.
    ``allow_lu=False`` (Table 1): when Cholesky fails, ``(None, 0.0,
    "lstsq")`` at once, without the LU of the bordered matrix."""
    m = K11.shape[0]
    ones = np.ones(m)
    if ridge:
        scale = max(1.0, float(np.abs(np.diag(K11)).max()) if m else 1.0)
        rr = ridge
        while rr < 1e-2 * scale:
            try:
                cf = _cho_factor(K11 + rr * np.eye(m))
                u = _cho_solve(cf, rhs)
                w = _cho_solve(cf, ones)
                if np.all(np.isfinite(u)) and np.all(np.isfinite(w)) and w.sum() > 0:
                    b = (u.sum() - c) / w.sum()
                    return u - b * w, float(b), "cholesky" if rr == ridge else "cholesky+ridge"
            except np.linalg.LinAlgError:
                pass
            rr *= 100.0
        ridge = rr
    A = K11 + ridge * np.eye(m) if ridge else K11
    try:
        cf = _cho_factor(A)
        u = _cho_solve(cf, rhs)
        w = _cho_solve(cf, ones)
        den = w.sum()
        if den > 0 and np.isfinite(den) and np.all(np.isfinite(u)):
            b = (u.sum() - c) / den
            return u - b * w, float(b), "cholesky"
    except np.linalg.LinAlgError:
        pass
    if not allow_lu and not allow_lstsq:
        return None, 0.0, "lstsq"
    M = np.zeros((m + 1, m + 1))
    M[:m, :m] = A
    M[:m, m] = 1.0
    M[m, :m] = 1.0
    full_rhs = np.append(rhs, c)
    with warnings.catch_warnings():
        warnings.simplefilter("error", sla.LinAlgWarning)
        try:
            lu = sla.lu_factor(M, check_finite=False)
            sol = sla.lu_solve(lu, full_rhs, check_finite=False)
            if np.all(np.isfinite(sol)) and np.abs(np.diag(lu[0])).min() > 1e-12 * max(
                1.0, np.abs(np.diag(lu[0])).max()
            ):
                return sol[:m], float(sol[m]), "lu"
        except (sla.LinAlgWarning, ValueError, np.linalg.LinAlgError):
            pass
    if not allow_lstsq:
        return None, 0.0, "lstsq"
    sol = np.linalg.lstsq(M, full_rhs, rcond=None)[0]
    return sol[:m], float(sol[m]), "lstsq"


# --------------------------------------------------------------------------
# IRWLS (Table 1) and the primal active-set QP
# --------------------------------------------------------------------------
class ActiveSetSubproblem:
    """One sub-problem, advanced one IRWLS (or active-set) iteration at a time.

    Parameters
    ----------
    K : (m, m) kernel block ``K_BB``
    y : (m,) labels in {-1, +1}
    beta : (m,) feasible start (``0 <= y beta <= C``, ``sum beta = s0``)
    r : (m,) linear term (``y - G_in``)
    C, tol : box bound (a scalar, or per-sample bounds ``C_i``) and the
        tolerance of the stopping conditions
    rule : {"irwls", "qp"}
        ``"irwls"``: Table 1 of Perez-Cruz et al.: after solving (3), rule a
        moves every S1 sample with ``y beta < 0`` to S2 and rule b every S1
        sample with ``y beta > C`` to S3 (all at once, clipped to the bound);
        when neither fires, rule c moves every S2 sample with ``y e > tol``
        and rule d every S3 sample with ``y e < -tol`` into S1.  If the sets
        ever repeat (Table 1 is not guaranteed to terminate), the iteration
        returns to the last feasible point and continues with line-search
        steps (releasing at most ``release_cap`` of the worst violators,
        balanced by the sign of e, after each full step), which decrease the dual monotonically.
        ``"qp"``: line search to the first bound (rules a/b only for the
        blocking samples) and release of the single worst violator.

    release_cap : int or None
        The line-search mode of ``rule="irwls"`` frees at most this many
        violators (the worst of each sign of e, see :func:`_release_pick`)
        after a full step; 0 frees all of them; None means
        :data:`RELEASE_CAP` (10).
    handover : bool or None
        ``rule="irwls"``: when a Table 1 iteration has freed (rules c/d)
        more violators than there were samples in S1, and S1 now holds more
        than :data:`TABLE1_HANDOVER_MIN` (100), the next iteration goes back
        to the point before (feasible) and the line-search mode takes over,
        instead of solving (3) with all of them free; None means
        :data:`TABLE1_HANDOVER` (True).  False: the paper's Table 1.
    workspace : float64 array (m, m) or None
        Memory for the kept factor of the line-search mode (its contents
        are ignored); None allocates it.

    Attributes after each :meth:`iterate`: ``beta``, ``b``, ``sets`` (1, 2, 3),
    ``moved`` (counts of rules a, b, c, d in the last iteration),
    ``method`` (cholesky / lu / lstsq), ``done``.
    """

    def __init__(self, K, y, beta, r, C, tol, rule="irwls", s0=None, max_iter=None,
                 mode="table1", patience=3, release_cap=None, handover=None,
                 workspace=None):
        self.K = np.ascontiguousarray(K, dtype=np.float64)
        self.y = np.asarray(y, dtype=np.float64)
        self.beta = np.array(beta, dtype=np.float64)
        self.r = np.asarray(r, dtype=np.float64)
        # ``C`` as given (a scalar, or per-sample upper bounds for weighted
        # problems); ``Cv`` the per-sample bounds the iterations read
        self.C = float(C) if np.ndim(C) == 0 else as_bounds(C, len(y))
        self.Cv = as_bounds(C, len(y))
        self._Cmax = float(self.Cv.max()) if len(self.Cv) else 0.0
        self.tol = float(tol)
        self.rule = rule
        self.m = len(self.y)
        self.s0 = float(self.beta.sum()) if s0 is None else float(s0)
        self.Kb = self.K @ self.beta
        yb = self.y * self.beta
        self.sets = np.where(yb <= 0.0, S2, np.where(yb >= self.Cv, S3, S1)).astype(np.int8)
        self.b = self._b_bounds(self.r - self.Kb)
        self.done = False
        self.n_iter = 0
        self.moved = (0, 0, 0, 0)
        self.method = ""
        self.mode = mode if rule == "irwls" else "line"
        self.max_iter = max_iter if max_iter is not None else 50 * self.m + 200
        self._seen = set()
        self.patience = patience
        self._bad = 0
        self._degenerate = False
        self._st = None  # state of the compiled line-search iterations
        self.release_cap = RELEASE_CAP if release_cap is None else int(release_cap)
        # Table 1 hands a working set over to the line-search mode after
        # freeing more violators than there were free samples (TABLE1_HANDOVER)
        self.handover = TABLE1_HANDOVER if handover is None else bool(handover)
        # a float64 (m, m) array for the kept factor of the line-search mode
        # (its contents are ignored; IRWLS passes the same one to every
        # working set, sparing a fresh array's page faults)
        self._workspace = workspace
        self._best_W = float(self.r @ self.beta - 0.5 * self.beta @ self.Kb)
        self._save_feasible()

    # -- helpers ------------------------------------------------------------
    def _save_feasible(self):
        self.feasible_beta = self.beta.copy()
        self.feasible_Kb = self.Kb.copy()
        self.feasible_b = self.b

    def _b_bounds(self, v):
        """b when S1 is empty: the middle of the interval allowed by S2/S3."""
        alpha = self.y * self.beta
        return intercept_from_v(v, self.y, np.clip(alpha, 0, self.Cv), self.Cv)

    def errors(self):
        """``e_i = r_i - (K beta)_i - b`` of every working-set sample."""
        return self.r - self.Kb - self.b

    def weights(self):
        """The IRWLS weights a_i of (8): infinite on S1 (e_i = 0 enforced),
        0 on S2, ``C / (y_i e_i)`` on S3 (infinite if ``y_i e_i <= 0``)."""
        ye = self.y * self.errors()
        a = np.zeros(self.m)
        a[self.sets == S1] = np.inf
        s3 = self.sets == S3
        with np.errstate(divide="ignore"):
            a[s3] = np.where(ye[s3] > 0, self.Cv[s3] / np.where(ye[s3] > 0, ye[s3], 1.0), np.inf)
        return a

    # -- one iteration ---------------------------------------------------------
    def _line_run(self, k):
        """Up to k line-search-mode iterations in compiled code
        (:func:`line_iterations`).  Returns ``(n_done, need_python)``."""
        st = self._st
        if st is None:
            st = self._st = np.zeros(_ST_SIZE)
            st[_ST_NORD] = -1.0
            ws = self._workspace
            # (the first factor zeroes the whole array: st[_ST_NORD] < 0)
            self._Lnb = ws if ws is not None and ws.shape == (self.m, self.m) else np.zeros(
                (self.m, self.m))
            self._ord_nb = np.zeros(self.m, np.int64)
            K = self.K
            self._KT = K if _is_symmetric(K) else np.ascontiguousarray(K.T)
            # the compiled state's own K beta (deferred outside S1, see
            # _flush_pending) and its pending changes
            self._Kbl = np.empty(self.m)
            self._pend = np.zeros(self.m)
            self._pidx = np.empty(self.m, np.int64)
            self._inp = np.zeros(self.m, np.bool_)
            self._kb_dirty = True
        if self._kb_dirty:
            # Python changed K beta (Table 1, the LU fallback, a restore):
            # the compiled state starts from it, nothing pending
            self._Kbl[:] = self.Kb
            self._pend[:] = 0.0
            self._inp[:] = False
            st[_ST_NPEND] = 0.0
            self._kb_dirty = False
        st[_ST_B] = self.b
        st[_ST_BESTW] = self._best_W
        st[_ST_FB] = self.feasible_b
        st[_ST_DEGEN] = float(self._degenerate)
        st[_ST_NITER] = self.n_iter
        st[_ST_DONE] = float(self.done)
        st[_ST_KMAX] = self.release_cap
        n_done, need = line_iterations(self.K, self.y, self.r, self.Cv, self.tol, self.s0,
                                       self.rule == "qp", int(k), int(self.max_iter), self.beta,
                                       self._Kbl, self.sets, self.feasible_beta, self.feasible_Kb,
                                       self._Lnb, self._ord_nb, st, self._KT, self.Kb,
                                       self._pend, self._pidx, self._inp)
        self.b = float(st[_ST_B])
        self._best_W = float(st[_ST_BESTW])
        self.feasible_b = float(st[_ST_FB])
        self._degenerate = bool(st[_ST_DEGEN])
        self.n_iter = int(st[_ST_NITER])
        self.done = bool(st[_ST_DONE])
        if n_done:
            self.moved = (int(st[_ST_NA]), int(st[_ST_NB]), int(st[_ST_NC]), int(st[_ST_ND]))
            self.method = _METHODS[int(st[_ST_METHOD])]
        return int(n_done), bool(need)

    def iterate_many(self, k):
        """Up to k iterations (fewer if the sub-problem is solved); the
        line-search mode runs compiled.  Returns how many were done."""
        n = 0
        while n < k and not self.done:
            if self.mode == "line":
                n_done, need = self._line_run(k - n)
                n += n_done
                if not need:
                    continue
            self.iterate()
            n += 1
        return n

    def iterate(self):
        if self.done:
            return
        if self.mode == "line":
            # compiled; falls through only when (3) needs LU / least squares
            n_done, need = self._line_run(1)
            if not need:
                return
        self.n_iter += 1
        self._kb_dirty = True  # K beta changes here, in Python
        y, C = self.y, self.Cv
        F = np.flatnonzero(self.sets == S1)
        if (self.mode == "table1" and self.handover and len(F) > TABLE1_HANDOVER_MIN
                and 2 * (self.moved[2] + self.moved[3]) > len(F)):
            # the last Table 1 iteration freed more violators than there
            # were free samples: back to the point before (feasible, saved)
            # and line-search iterations from there (TABLE1_HANDOVER)
            self._to_line_search()
            self.moved = (0, 0, 0, 0)
            return
        na = nb = nc = nd = 0
        full = True
        feasible = False
        if len(F) == 0:
            self.b = self._b_bounds(self.r - self.Kb)
            self.method = "bounds"
        else:
            v = self.r[F] - self.Kb[F]
            c = self.s0 - self.beta.sum()
            if self.mode == "line":
                # reached only when the compiled iterations (line_iterations,
                # with their kept Cholesky factor) found no usable factor:
                # the LU / least-squares fallback of the bordered system (3)
                d, b, self.method = solve_ls(self.K[F[:, None], F], v, c, 1e-2 * max(
                    1.0, float(np.abs(np.diag(self.K)).max())), allow_lstsq=True)
                # back on the plane 1'd = c (as line_iterations)
                d = d + (c - d.sum()) / len(d) if len(d) > 1 else np.full(1, c)
            else:
                # Table 1: the plain system (3), no ridge, by Cholesky of
                # K_11; a K_11 that Cholesky cannot factor counts as a
                # singular (3) (our decision, issue 15: the LU of the
                # bordered matrix that used to decide it found (3) singular
                # on every such block of the issue-15 cases and cost ~17% of
                # gauss-m's time; for a positive semi-definite kernel a
                # failed Cholesky means K_11 is singular to working
                # precision)
                d, b, self.method = solve_ls(self.K[F[:, None], F], v, c, 0.0,
                                             allow_lstsq=False, allow_lu=False)
            if self.mode == "table1" and self.method == "lstsq":
                # singular (3): Table 1 cannot continue; the line-search mode
                # uses a ridge-regularised Cholesky direction instead
                self._to_line_search()
                self.moved = (0, 0, 0, 0)
                return
            old = self.beta[F].copy()
            yF = y[F]
            CF = C[F]
            if self.mode == "table1":
                new = old + d
                ynew = yF * new
                low = ynew < 0.0
                high = ynew > CF
                new[low] = 0.0
                new[high] = CF[high] * yF[high]
                na, nb = int(low.sum()), int(high.sum())
                full = na == 0 and nb == 0
                self.beta[F] = new
                self.sets[F[low]] = S2
                self.sets[F[high]] = S3
            else:
                yd = yF * d
                yo = yF * old
                with np.errstate(divide="ignore", invalid="ignore"):
                    t_i = np.where(yd < 0, yo / -yd, np.where(yd > 0, (CF - yo) / yd, np.inf))
                t = min(1.0, float(t_i.min()) if len(t_i) else 1.0)
                t = max(t, 0.0)
                # a zero step (released samples pushed straight back out):
                # release one violator at a time until a step moves again
                self._degenerate = t <= 1e-14
                new = old + t * d
                if t < 1.0:
                    full = False
                    block = t_i <= t * (1 + 1e-12) + 1e-300
                    low = block & (yd < 0)
                    high = block & (yd > 0)
                    new[low] = 0.0
                    new[high] = CF[high] * yF[high]
                    na, nb = int(low.sum()), int(high.sum())
                    self.sets[F[low]] = S2
                    self.sets[F[high]] = S3
                self.beta[F] = new
            self.b = b
            self.Kb += self.K[:, F] @ (self.beta[F] - old)
        if full:
            ye = y * self.errors()
            c_mask = (self.sets == S2) & (ye > self.tol)
            d_mask = (self.sets == S3) & (ye < -self.tol)
            rel = np.flatnonzero(c_mask | d_mask)
            if self.rule == "qp" or self._degenerate:
                kmax = 1
            else:
                kmax = self.release_cap if self.mode == "line" else 0
            if kmax > 0:
                # the line-search mode's release (as line_iterations, by the
                # same compiled rule _release_pick: the worst of each sign)
                vpos = ((self.sets == S2) == (y > 0))[rel]
                pick = _release_pick(np.where(c_mask, -ye, ye)[rel], vpos,
                                     int(vpos.sum()), int(kmax), len(F))
                rel = rel[pick]
            nc, nd = int(c_mask[rel].sum()), int(d_mask[rel].sum())
            self.sets[rel] = S1
            feasible = abs(self.beta.sum() - self.s0) <= 1e-9 * (1.0 + self._Cmax * self.m)
            if feasible:
                W = float(self.r @ self.beta - 0.5 * self.beta @ self.Kb)
                if self.mode == "table1" and W < self._best_W - DOWNHILL_RTOL * (
                        1.0 + abs(self._best_W)):
                    # Table 1 went downhill (it has no convergence guarantee):
                    # back to the best feasible point, line-search steps from now
                    self._to_line_search()
                    self.moved = (na, nb, 0, 0)
                    return
                self._best_W = W
                if nc == 0 and nd == 0:
                    self.done = True
                    self._save_feasible()
                    self.moved = (na, nb, nc, nd)
                    return
                self._save_feasible()
            if nc == 0 and nd == 0 and feasible:
                self.done = True
        self.moved = (na, nb, nc, nd)
        if self.mode == "table1" and not self.done:
            # Table 1 has no convergence guarantee: after a repeated set
            # configuration, or `patience` iterations in a row that end at an
            # infeasible point, go back to the last feasible point and continue
            # with line-search steps (monotone in the dual objective)
            self._bad = 0 if (full and feasible) else self._bad + 1
            key = self.sets.tobytes()
            if key in self._seen or self._bad > self.patience:
                self._to_line_search()
            else:
                self._seen.add(key)
        if not self.done and self.n_iter >= self.max_iter:
            # give up on this sub-problem at its last feasible point
            self._restore_feasible()
            self.done = True

    def _restore_feasible(self):
        self._kb_dirty = True
        self.beta = self.feasible_beta.copy()
        self.Kb = self.feasible_Kb.copy()
        self.b = self.feasible_b
        yb = self.y * self.beta
        self.sets = np.where(yb <= 0.0, S2, np.where(yb >= self.Cv, S3, S1)).astype(np.int8)

    def _to_line_search(self):
        self._restore_feasible()
        self.mode = "line"

    def solve(self):
        while not self.done:
            self.iterate_many(1 << 30)
        return self

    @property
    def alpha(self):
        return np.clip(self.y * self.beta, 0.0, self.Cv)


# --------------------------------------------------------------------------
# SMO engine: analytic pair steps on the sub-problem
# --------------------------------------------------------------------------
@njit(cache=True, inline="always")
def pair_update(K, y, alpha, C, v, i, j):
    """One analytic SMO step on the pair (i, j) of a dense sub-problem, in
    place: Platt's step on the box ``[0, C_j] x [0, C_i]``
    (:func:`svmlab.smo._pairstep.pair_step_box`, E = -v, b = 0), then
    ``v -= K[:, j] dj + K[:, i] di``.  Shared by :func:`smo_engine` and the
    blocked decomposition's :func:`svmlab.decomposition._blocked.block_smo`.

    Parameters
    ----------
    K : float64 array (q, q)
        The sub-problem's kernel matrix.
    y, C : float64 arrays (q,)
        Labels (+1 / -1) and upper bounds C_i.
    alpha : float64 array (q,)
        Multipliers, updated in place.
    v : float64 array (q,)
        ``y_t - G_t`` (= -E_t up to b), updated in place.
    i, j : int
        The pair (i from I_up, j from I_low).

    Returns
    -------
    bool
        Whether the pair moved (False leaves everything unchanged).
    """
    moved, aj, ai, _, _, _, _ = pair_step_box(
        y[j], y[i], alpha[j], alpha[i], -v[j], -v[i], 0.0,
        K[j, j], K[j, i], K[i, i], C[j], C[i], 1e-12,
    )
    if not moved:
        return False
    dj = y[j] * (aj - alpha[j])
    di = y[i] * (ai - alpha[i])
    alpha[j] = aj
    alpha[i] = ai
    for k in range(v.shape[0]):
        v[k] -= K[k, j] * dj + K[k, i] * di
    return True


@njit(cache=True)
def smo_engine(K, y, alpha, r, C, tol, max_iter):
    """Maximal-violating-pair SMO on the sub-problem (in place on ``alpha``).

    ``E_i = (K beta)_i - r_i`` is Platt's error with the fixed part of the
    output folded into ``r`` and b = 0 (b cancels in the pair step).
    ``C`` holds the per-sample upper bounds (m,); a pair moves in its box
    ``[0, C_j] x [0, C_i]``.  Returns ``(n_steps, b)``."""
    m = y.shape[0]
    # v = -E (v_i = r_i - (K beta)_i), kept instead of E so that the shared
    # rules of svmlab._kkt read it directly; negation is exact, so every
    # value is bit for bit -E of Platt's form
    v = np.empty(m)
    for i in range(m):
        s = 0.0
        for j in range(m):
            s += K[i, j] * y[j] * alpha[j]
        v[i] = r[i] - s
    it = 0
    while it < max_iter:
        # i = argmax v over I_up, j = argmin v over I_low (maximal violating pair)
        vi, i, vj, j = violating_pair(v, y, alpha, C)
        if i < 0 or j < 0 or vi - vj <= tol:
            break
        if not pair_update(K, y, alpha, C, v, i, j):
            break
        it += 1
    # intercept: mean over free of v, else middle of the interval
    b = intercept(v, y, alpha, C)
    return it, b


def solve_subproblem(engine, K, y, alpha, r, C, tol, max_iter=None):
    """Solve a sub-problem with the named engine.

    ``C`` is a scalar or the per-sample upper bounds (m,).  Returns
    ``(alpha_new, b, n_inner)``; ``alpha`` is not modified."""
    if engine == "smo":
        a = np.array(alpha, dtype=np.float64)
        cap = max_iter if max_iter is not None else 100 * len(a) + 1000
        it, b = smo_engine(np.ascontiguousarray(K), np.asarray(y, np.float64), a,
                           np.asarray(r, np.float64), as_bounds(C, len(a)), float(tol), cap)
        return a, float(b), int(it)
    if engine not in ("qp", "irwls"):
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    sub = ActiveSetSubproblem(K, y, y * alpha, r, C, tol, rule=engine, max_iter=max_iter)
    sub.solve()
    return sub.alpha, float(sub.b), sub.n_iter
