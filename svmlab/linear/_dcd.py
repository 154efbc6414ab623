"""Dual coordinate descent with shrinking for linear SVMs (LIBLINEAR's default).

Classification (Hsieh, Chang, Lin, Keerthi and Sundararajan, "A Dual
Coordinate Descent Method for Large-scale Linear SVM", ICML 2008,
Algorithm 1 with the shrinking of Algorithm 3).  With ``x_i`` augmented by
the constant feature ``B`` (``intercept_scaling``; absent when
``fit_intercept=False``), ``y_i`` in {-1, +1} and ``C_i = C * weight_i``::

    primal:  min_w  1/2 w'w + sum_i C_i xi(w; x_i, y_i)
             L1 loss (hinge):          xi = max(0, 1 - y_i w'x_i)
             L2 loss (squared hinge):  xi = max(0, 1 - y_i w'x_i)^2
    dual:    min_a  f(a) = 1/2 a'Qbar a - e'a   s.t.  0 <= a_i <= U_i
             Qbar = Q + D,  Q_ij = y_i y_j x_i'x_j
             L1: U_i = C_i, D_ii = 0;   L2: U_i = inf, D_ii = 1/(2 C_i)

The method keeps ``w = sum_i y_i a_i x_i`` so that one coordinate costs one
sparse dot and one sparse axpy (equation (4)): ``G = y_i w'x_i - 1 + D_ii a_i``,
projected gradient ``PG`` (equation (5)), and the clipped Newton step
``a_i <- min(max(a_i - G / Qbar_ii, 0), U_i)`` (Algorithm 1, step 2(c)).
Shrinking (Algorithm 3, section 3.2): ``a_i = 0`` with ``G > Mbar`` or
``a_i = U_i`` with ``G < mbar`` leaves the active set, where ``Mbar``/``mbar``
are the previous epoch's largest/smallest projected gradients (``+-inf`` when
not positive/negative); the stopping rule is ``max PG - min PG <= tol`` over
the active set, after which the active set is reset to every example once
(LIBLINEAR's ``solve_l2r_l1l2_svc``).  Each epoch visits the active set in a
random order (section 3.1, "random permutation of sub-problems").

Regression (Ho and Lin, "Large-scale Linear Support Vector Regression",
JMLR 2012, Algorithm 4 with the shrinking of section 4.3)::

    primal:  min_w 1/2 w'w + sum_i C_i xi_eps(w'x_i - y_i)
             L1: max(0, |r| - eps);   L2: max(0, |r| - eps)^2
    dual:    min_b  1/2 b'Qbar b - y'b + eps |b|_1   s.t.  -U_i <= b_i <= U_i
             Qbar = X X' + D,  L1: U_i = C_i, D_ii = 0;  L2: U_i = inf, D_ii = 1/(2 C_i)

one coordinate: ``G = w'x_i - y_i + D_ii b_i``, ``H = Qbar_ii``, the exact
minimiser of the one-variable piecewise quadratic, clipped to the box; the
stopping rule is ``sum of violations <= tol * (that sum at the first epoch)``.

The compiled kernels take *steps*: one step is one visit of one active
coordinate (an update, a no-op, or its removal by shrinking); the epoch
boundary work (the stopping test, unshrinking, the next permutation) runs
inside the step that ends the epoch.  The whole state lives in arrays, so a
fit can be advanced one step at a time (a notebook) or a million at a time
(the fast path) along the same iterates.  The random permutations come from
a 31-bit linear congruential generator (:func:`lcg`, glibc's constants,
LIBLINEAR draws with ``rand() % k`` the same way) seeded from
``random_state``; :mod:`svmlab.reference.dcd` is the readable twin that takes
the same steps.

Memory layout (the cost of a step is its cache misses: the rows are visited
in a random order, so each visit fetches its row and its per-example values
from far away; decision record 28d01 has the measurements):

* rows: a dense C-ordered float64 array (at least half non-zeros), or
  *packed* sparse rows, one float64 array holding ``index, value`` pairs
  row after row (:func:`pack_rows`; 16 bytes a non-zero, LIBLINEAR's
  ``feature_node`` layout), with ``indptr`` counting pairs: a row's indices
  and values arrive in the same cache lines;
* per example, ``info[i] = (y_i v_i, Qbar_ii)``, 16 bytes: ``v_i`` is
  ``D_ii`` for the L2 loss (``U_i = inf``) and ``U_i`` for the L1 loss
  (``D_ii = 0``), ``y_i`` its sign, so that ``info``, ``alpha``, ``index``
  and ``indptr`` stay in the core's L2 cache on a9a-sized problems;
* while step ``s`` computes, the first pair of the next row in the order
  and its ``info`` and ``alpha`` are read ahead (their sum goes to the
  scratch slot ``fst[FS_TOUCH]``), so their misses overlap this step's work.
"""

from __future__ import annotations

import math

import numpy as np

from svmlab._jit import njit

__all__ = ["lcg", "permute", "shuffle_active", "dcd_svc_steps", "dcd_svr_steps", "row_sqnorms",
           "IS_ACTIVE", "IS_POS", "IS_EPOCH", "IS_RNG", "IS_DONE", "IS_FRESH", "IS_MAXIT",
           "FS_MOLD", "FS_mOLD", "FS_MNEW", "FS_mNEW", "FS_TOL", "FS_NORM1", "FS_NORM1_INIT", "FS_TOUCH",
           "FS_SIZE", "count_nonzeros", "dense_to_csr", "pack_rows",
           "REC_WIDTH", "DONE_RUNNING", "DONE_CONVERGED", "DONE_MAX_ITER"]

# integer state (int64 array ``ist``)
IS_ACTIVE, IS_POS, IS_EPOCH, IS_RNG, IS_DONE, IS_FRESH, IS_MAXIT = range(7)
# float state (float64 array ``fst``); SVC: M/m old and new; SVR: Gmax old/new in
# FS_MOLD / FS_MNEW and the violation sums in FS_NORM1 / FS_NORM1_INIT
FS_MOLD, FS_mOLD, FS_MNEW, FS_mNEW, FS_TOL, FS_NORM1, FS_NORM1_INIT = range(7)
#: scratch slot: the sum of the values read ahead (kept so that the reads stay)
FS_TOUCH = 7
FS_SIZE = 8
DONE_RUNNING, DONE_CONVERGED, DONE_MAX_ITER = 0, 1, 2
#: one record row: i, old, new, G, PG (violation for SVR), shrunk, epoch, active size
REC_WIDTH = 8

_LCG_A = 1103515245
_LCG_C = 12345
_LCG_M = 0x7FFFFFFF


@njit(cache=True)
def lcg(state):
    """The next state of the 31-bit generator ``s <- (a s + c) mod 2^31``
    (its values are below 2^31 and ``a < 2^31``, so no int64 overflow)."""
    return (state * 1103515245 + 12345) & 0x7FFFFFFF


@njit(cache=True)
def permute(index, active, r):
    """LIBLINEAR's permutation of ``index[:active]``: for ``s = 0..active-1``
    swap ``index[s]`` with ``index[s + r % (active - s)]``, ``r`` the next
    value of the generator (:func:`lcg`) from state ``r``; returns the new
    state.  Shared by the dual CD, CDN and Crammer-Singer."""
    for s in range(active):
        r = (r * 1103515245 + 12345) & 0x7FFFFFFF
        j = s + r % (active - s)
        t = index[s]
        index[s] = index[j]
        index[j] = t
    return r


@njit(cache=True)
def shuffle_active(index, active, ist):
    """:func:`permute` with the generator's state in ``ist[IS_RNG]``."""
    ist[3] = permute(index, active, ist[3])


@njit(cache=True)
def row_sqnorms(sparse, Xd, data, indices, indptr, B, n):
    """``|x_i|^2 + B^2`` of every row."""
    out = np.empty(n)
    for i in range(n):
        s = B * B
        if sparse:
            for p in range(indptr[i], indptr[i + 1]):
                s += data[p] * data[p]
        else:
            for j in range(Xd.shape[1]):
                s += Xd[i, j] * Xd[i, j]
        out[i] = s
    return out


@njit(cache=True)
def count_nonzeros(Xd):
    """The number of non-zero entries of each row of the dense ``Xd``."""
    n, d = Xd.shape
    out = np.zeros(n, dtype=np.int64)
    for i in range(n):
        c = 0
        for j in range(d):
            if Xd[i, j] != 0.0:
                c += 1
        out[i] = c
    return out


@njit(cache=True)
def dense_to_csr(Xd, counts):
    """The CSR arrays ``data, indices, indptr`` (int32 indices) of the dense
    ``Xd`` without its zeros (``counts`` from :func:`count_nonzeros`): a row
    read through them visits its non-zeros in the same column order, so the
    sums of the dot and the axpy are the dense loop's without its ``+ 0``
    terms (the same values)."""
    n, d = Xd.shape
    indptr = np.zeros(n + 1, dtype=np.int32)
    for i in range(n):
        indptr[i + 1] = indptr[i] + counts[i]
    data = np.empty(indptr[n])
    indices = np.empty(indptr[n], dtype=np.int32)
    for i in range(n):
        p = indptr[i]
        for j in range(d):
            v = Xd[i, j]
            if v != 0.0:
                data[p] = v
                indices[p] = j
                p += 1
    return data, indices, indptr


@njit(cache=True)
def pack_rows(data, indices, nnz):
    """The packed rows of CSR arrays: ``out[2p] = indices[p]``, ``out[2p + 1]
    = data[p]`` (float64 holds every int32 index exactly)."""
    out = np.empty(2 * nnz)
    for p in range(nnz):
        out[2 * p] = indices[p]
        out[2 * p + 1] = data[p]
    return out


@njit(cache=True, inline="always")
def _dot(sparse, Xd, packed, indptr, B, w, i):
    """``w'[x_i, B]`` (w has the bias weight last)."""
    s = 0.0
    if sparse:
        for p in range(indptr[i], indptr[i + 1]):
            s += packed[2 * p + 1] * w[np.uint32(packed[2 * p])]
    else:
        for j in range(Xd.shape[1]):
            s += Xd[i, j] * w[j]
    return s + B * w[w.shape[0] - 1]


@njit(cache=True, inline="always")
def _axpy(sparse, Xd, packed, indptr, B, w, i, c):
    """``w += c [x_i, B]``."""
    if sparse:
        for p in range(indptr[i], indptr[i + 1]):
            w[np.uint32(packed[2 * p])] += c * packed[2 * p + 1]
    else:
        for j in range(Xd.shape[1]):
            w[j] += c * Xd[i, j]
    w[w.shape[0] - 1] += c * B


@njit(cache=True, inline="always")
def _first(sparse, Xd, packed, indptr, i):
    """The first stored value of row ``i`` (a read that brings its cache
    line in; 0 for an empty row)."""
    if sparse:
        p = indptr[i]
        if p < indptr[i + 1]:
            return packed[2 * p + 1]
        return 0.0
    if Xd.shape[1] > 0:
        return Xd[i, 0]
    return 0.0


@njit(cache=True, error_model="numpy")
def dcd_svc_steps(sparse, Xd, packed, indptr, B, info, l2, alpha, w, index, ist, fst,
                  max_steps, rec):
    """Up to ``max_steps`` steps of Algorithm 1 + 3 (module docstring) on the
    state ``alpha, w, index, ist, fst``; returns the number of steps taken
    (fewer once ``ist[IS_DONE]`` is set).  When ``rec`` has rows, row k gets
    step k's record (``REC_WIDTH`` values).  ``info`` (n, 2) holds
    ``(y_i v_i, Qbar_ii)``, ``v_i = D_ii`` when ``l2`` (then ``U_i = inf``),
    else ``v_i = U_i`` (then ``D_ii = 0``).

    The loop (:func:`_svc_steps`) is inlined twice, once with ``sparse``
    the constant True and once False, so each copy holds only its own row
    loops: with the flag a run-time value, both the sparse and the dense
    dot and axpy sat in the step loop and the compiled step took twice as
    long on w8a (decision record 29l01).  The iterates are the same."""
    if sparse:
        return _svc_steps(True, Xd, packed, indptr, B, info, l2, alpha, w, index, ist, fst,
                          max_steps, rec)
    return _svc_steps(False, Xd, packed, indptr, B, info, l2, alpha, w, index, ist, fst,
                      max_steps, rec)


@njit(cache=True, error_model="numpy", inline="always")
def _svc_steps(sparse, Xd, packed, indptr, B, info, l2, alpha, w, index, ist, fst,
               max_steps, rec):
    """:func:`dcd_svc_steps`'s loop.  The scalar state is held in local
    variables during the call (written back at the end: the compiler then
    keeps it in registers, as the stores into ``w`` could otherwise alias
    it)."""
    n = info.shape[0]
    inf = np.inf
    keep = rec.shape[0] > 0
    active = ist[0]
    s = ist[1]
    epoch = ist[2]
    done = ist[4]
    fresh = ist[5]
    maxit = ist[6]
    Mold = fst[0]
    mold = fst[1]
    Mnew = fst[2]
    mnew = fst[3]
    tol = fst[4]
    touch = 0.0
    k = 0
    while k < max_steps and done == 0:
        if fresh == 1:                         # a new epoch: permutation, reset M/m
            shuffle_active(index, active, ist)
            Mnew = -inf
            mnew = inf
            fresh = 0
        if s + 1 < active:                     # read the next row's lines ahead
            nx = index[s + 1]
            touch += _first(sparse, Xd, packed, indptr, nx) + info[nx, 0] + alpha[nx]
        i = index[s]
        yv = info[i, 0]
        yi = math.copysign(1.0, yv)           # (the sign of y_i v_i, also when v_i = 0)
        G = yi * _dot(sparse, Xd, packed, indptr, B, w, i) - 1.0
        a_old = alpha[i]
        if l2:
            G += a_old * abs(yv)
            U = inf
        else:
            U = abs(yv)
        PG = 0.0
        shrunk = False
        if a_old == 0.0:
            if G > Mold:
                shrunk = True
            elif G < 0.0:
                PG = G
        elif a_old == U:
            if G < mold:
                shrunk = True
            elif G > 0.0:
                PG = G
        else:
            PG = G
        a_new = a_old
        if shrunk:
            active -= 1
            index[s] = index[active]
            index[active] = i
        else:
            if PG > Mnew:
                Mnew = PG
            if PG < mnew:
                mnew = PG
            if abs(PG) > 1e-12:
                a_new = min(max(a_old - G / info[i, 1], 0.0), U)
                alpha[i] = a_new
                _axpy(sparse, Xd, packed, indptr, B, w, i, (a_new - a_old) * yi)
            s += 1
        if keep:
            rec[k, 0] = i
            rec[k, 1] = a_old
            rec[k, 2] = a_new
            rec[k, 3] = G
            rec[k, 4] = PG
            rec[k, 5] = 1.0 if shrunk else 0.0
            rec[k, 6] = epoch
            rec[k, 7] = active
        k += 1
        if s >= active:                        # the epoch ends
            epoch += 1
            s = 0
            fresh = 1
            if Mnew - mnew <= tol:
                if active == n:
                    done = 1
                    break
                active = n                     # unshrink: check every example
                Mold = inf
                mold = -inf
            else:
                Mold = Mnew if Mnew > 0.0 else inf
                mold = mnew if mnew < 0.0 else -inf
            if epoch >= maxit:
                done = 2
                break
    ist[0] = active
    ist[1] = s
    ist[2] = epoch
    ist[4] = done
    ist[5] = fresh
    fst[0] = Mold
    fst[1] = mold
    fst[2] = Mnew
    fst[3] = mnew
    fst[7] = touch
    return k


@njit(cache=True)
def dcd_svr_steps(sparse, Xd, packed, indptr, B, y, p, upper, lam, QD,
                  beta, w, index, ist, fst, max_steps, rec):
    """Up to ``max_steps`` steps of Ho and Lin's dual CD for SVR (module
    docstring; LIBLINEAR's ``solve_l2r_l1l2_svr``); ``p`` is epsilon.  The
    same state layout as :func:`dcd_svc_steps`; record column 4 is the
    coordinate's violation.  As there, the loop is inlined once per storage
    (``sparse`` a constant in each copy)."""
    if sparse:
        return _svr_steps(True, Xd, packed, indptr, B, y, p, upper, lam, QD, beta, w, index,
                          ist, fst, max_steps, rec)
    return _svr_steps(False, Xd, packed, indptr, B, y, p, upper, lam, QD, beta, w, index,
                      ist, fst, max_steps, rec)


@njit(cache=True, inline="always")
def _svr_steps(sparse, Xd, packed, indptr, B, y, p, upper, lam, QD,
               beta, w, index, ist, fst, max_steps, rec):
    """:func:`dcd_svr_steps`'s loop."""
    n = y.shape[0]
    inf = np.inf
    keep = rec.shape[0] > 0
    k = 0
    while k < max_steps and ist[4] == 0:
        if ist[5] == 1:
            shuffle_active(index, ist[0], ist)
            fst[2] = 0.0                       # Gmax_new
            fst[5] = 0.0                       # Gnorm1_new
            ist[5] = 0
        s = ist[1]
        i = index[s]
        b_old = beta[i]
        U = upper[i]
        G = -y[i] + lam[i] * b_old + _dot(sparse, Xd, packed, indptr, B, w, i)
        H = QD[i] + lam[i]
        Gp = G + p
        Gn = G - p
        viol = 0.0
        shrunk = False
        Gmax_old = fst[0]
        if b_old == 0.0:
            if Gp < 0.0:
                viol = -Gp
            elif Gn > 0.0:
                viol = Gn
            elif Gp > Gmax_old and Gn < -Gmax_old:
                shrunk = True
        elif b_old >= U:
            if Gp > 0.0:
                viol = Gp
            elif Gp < -Gmax_old:
                shrunk = True
        elif b_old <= -U:
            if Gn < 0.0:
                viol = -Gn
            elif Gn > Gmax_old:
                shrunk = True
        elif b_old > 0.0:
            viol = abs(Gp)
        else:
            viol = abs(Gn)
        b_new = b_old
        if shrunk:
            ist[0] -= 1
            index[s] = index[ist[0]]
            index[ist[0]] = i
        else:
            if viol > fst[2]:
                fst[2] = viol
            fst[5] += viol
            if Gp < H * b_old:
                d = -Gp / H
            elif Gn > H * b_old:
                d = -Gn / H
            else:
                d = -b_old
            if abs(d) >= 1e-12:
                b_new = min(max(b_old + d, -U), U)
                beta[i] = b_new
                if b_new != b_old:
                    _axpy(sparse, Xd, packed, indptr, B, w, i, b_new - b_old)
            ist[1] = s + 1
        if keep:
            rec[k, 0] = i
            rec[k, 1] = b_old
            rec[k, 2] = b_new
            rec[k, 3] = G
            rec[k, 4] = viol
            rec[k, 5] = 1.0 if shrunk else 0.0
            rec[k, 6] = ist[2]
            rec[k, 7] = ist[0]
        k += 1
        if ist[1] >= ist[0]:
            if ist[2] == 0:
                fst[6] = fst[5]
            ist[2] += 1
            ist[1] = 0
            ist[5] = 1
            if fst[5] <= fst[4] * fst[6]:
                if ist[0] == n:
                    ist[4] = 1
                    break
                ist[0] = n
                fst[0] = inf
            else:
                fst[0] = fst[2]
            if ist[2] >= ist[6]:
                ist[4] = 2
                break
    return k
