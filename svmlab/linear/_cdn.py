"""Coordinate descent Newton (CDN) for the L1-regularised L2-loss linear SVM.

The problem (LIBLINEAR's ``L1R_L2LOSS_SVC``, scikit-learn's
``LinearSVC(penalty="l1", loss="squared_hinge", dual=False)``), with ``x_i``
augmented by the bias feature ``B`` (whose weight is penalised like the
others) and ``C_i = C * weight_i``::

    min_w  F(w) = |w|_1 + sum_i C_i max(0, 1 - y_i w'x_i)^2

The method: Yuan, Chang, Hsieh and Lin, "A Comparison of Optimization Methods
and Software for Large-scale L1-regularized Linear Classification", JMLR 11
(2010), section 4.1.2, Algorithm 3 (CDN, after Chang, Hsieh and Lin 2008):
one variable ``w_j`` at a time, the Newton direction of the one-variable
problem with the L1 term kept exact (equation (29): ``d = -(G + 1)/H`` if
``G + 1 <= H w_j``, ``-(G - 1)/H`` if ``G - 1 >= H w_j``, else ``-w_j``, with
``G`` and ``H = max(2 sum_{b_i > 0} C_i x_ij^2, 1e-12)`` the first and
generalised second derivative of the loss in ``w_j``), then an Armijo line
search ``F(w + lambda d e_j) - F(w) <= sigma lambda (|w_j + d| - |w_j| + G d)``
with ``sigma = 0.01``, halving ``lambda`` (equation (30)), first tried by the
cheap upper bound of section 4.1.2 (``x_j'x_j d^2 C + G d + ...``, LIBLINEAR's
``appxcond``).  It keeps ``b_i = 1 - y_i w'x_i`` for all i, so one variable
costs two passes over its column: X is read by columns (CSC with ``y_i``
folded into the values).  Shrinking as Algorithm 3's: a variable at 0 whose
gradient lies strictly inside ``(-1 + M/l, 1 - M/l)`` leaves the active set
(``M`` the previous epoch's largest violation); the epochs visit the active
set in a random order, and stop when the sum of violations is at most
``eps`` times that of the first epoch, with LIBLINEAR's ``eps = tol
min(#pos, #neg) / l`` (then once more over every variable).

Why CDN and not newGLMNET: LIBLINEAR itself solves this problem
(``solve_l1r_l2_svc``) with CDN; newGLMNET is its solver for L1-regularised
*logistic* regression (docs/decisions/27l01-linear-solvers.md).

One step of :class:`CDNRun` is one epoch (a record gives the sum and largest
of the violations, the active set and the non-zero weights).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from svmlab._jit import njit

from ._dcd import count_nonzeros, dense_to_csr, permute
from ._runs import EpochStateRun

__all__ = ["CDNRecord", "CDNRun", "cdn_epochs", "columns"]


@njit(cache=True)
def cdn_epochs(vals, rows, colptr, C, xj_sq, w, b, index, ist, fst, max_epochs, rec):
    """Up to ``max_epochs`` epochs of CDN (module docstring) on the column-major
    data ``vals, rows, colptr`` (``vals = y_i x_ij``); ``ist``: active size,
    epochs, generator, done (1 converged, 2 max_iter), max_iter; ``fst``:
    Gmax_old, eps, Gnorm1_init.  Returns the epochs taken; ``rec`` row k gets
    (Gnorm1, Gmax, active size) of epoch k."""
    w_size = w.shape[0]
    l = b.shape[0]
    sigma = 0.01
    k = 0
    while k < max_epochs and ist[3] == 0:
        Gmax_old = fst[0]
        Gmax_new = 0.0
        Gnorm1_new = 0.0
        active = ist[0]
        ist[2] = permute(index, active, ist[2])
        s = 0
        while s < active:
            j = index[s]
            G_loss = 0.0
            H = 0.0
            for q in range(colptr[j], colptr[j + 1]):
                i = rows[q]
                if b[i] > 0.0:
                    val = vals[q]
                    tmp = C[i] * val
                    G_loss -= tmp * b[i]
                    H += tmp * val
            G_loss *= 2.0
            G = G_loss
            H *= 2.0
            if H < 1e-12:
                H = 1e-12
            Gp = G + 1.0
            Gn = G - 1.0
            violation = 0.0
            wj = w[j]
            if wj == 0.0:
                if Gp < 0.0:
                    violation = -Gp
                elif Gn > 0.0:
                    violation = Gn
                elif Gp > Gmax_old / l and Gn < -Gmax_old / l:
                    active -= 1
                    index[s] = index[active]
                    index[active] = j
                    continue
            elif wj > 0.0:
                violation = abs(Gp)
            else:
                violation = abs(Gn)
            if violation > Gmax_new:
                Gmax_new = violation
            Gnorm1_new += violation
            if Gp < H * wj:
                d = -Gp / H
            elif Gn > H * wj:
                d = -Gn / H
            else:
                d = -wj
            if abs(d) < 1.0e-12:
                s += 1
                continue
            delta = abs(wj + d) - abs(wj) + G * d
            d_old = 0.0
            loss_old = 0.0
            n_ls = 0
            while n_ls < 20:
                d_diff = d_old - d
                cond = abs(wj + d) - abs(wj) - sigma * delta
                appx = xj_sq[j] * d * d + G_loss * d + cond
                if appx <= 0.0:
                    for q in range(colptr[j], colptr[j + 1]):
                        b[rows[q]] += d_diff * vals[q]
                    break
                loss_new = 0.0
                if n_ls == 0:
                    loss_old = 0.0
                    for q in range(colptr[j], colptr[j + 1]):
                        i = rows[q]
                        if b[i] > 0.0:
                            loss_old += C[i] * b[i] * b[i]
                        bn = b[i] + d_diff * vals[q]
                        b[i] = bn
                        if bn > 0.0:
                            loss_new += C[i] * bn * bn
                else:
                    for q in range(colptr[j], colptr[j + 1]):
                        i = rows[q]
                        bn = b[i] + d_diff * vals[q]
                        b[i] = bn
                        if bn > 0.0:
                            loss_new += C[i] * bn * bn
                cond = cond + loss_new - loss_old
                if cond <= 0.0:
                    break
                d_old = d
                d *= 0.5
                delta *= 0.5
                n_ls += 1
            w[j] += d
            if n_ls >= 20:
                # the line search failed: recompute b from w
                for i in range(l):
                    b[i] = 1.0
                for jj in range(w_size):
                    if w[jj] == 0.0:
                        continue
                    for q in range(colptr[jj], colptr[jj + 1]):
                        b[rows[q]] -= w[jj] * vals[q]
            s += 1
        if ist[1] == 0:
            fst[2] = Gnorm1_new
        ist[1] += 1
        if rec.shape[0] > 0:
            rec[k, 0] = Gnorm1_new
            rec[k, 1] = Gmax_new
            rec[k, 2] = active
        k += 1
        if Gnorm1_new <= fst[1] * fst[2]:
            if active == w_size:
                ist[0] = active
                ist[3] = 1
                break
            ist[0] = w_size
            fst[0] = np.inf
        else:
            ist[0] = active
            fst[0] = Gmax_new
        if ist[1] >= ist[4]:
            ist[3] = 2
            break
    return k


@njit(cache=True)
def columns(data, indices, indptr, y, B, d, C):
    """The column data of CDN in one counting-sort transposition of the CSR
    rows ``data, indices, indptr`` (n rows, d columns, no duplicates): the
    non-zeros of column j of ``[X, B]`` in ascending row order, their values
    ``y_i x_ij`` (``vals``), rows (``rows``, uint32) and ``colptr`` (int64,
    d + 2 entries; the bias column is empty when ``B == 0``), and
    ``xj_sq[j] = sum_i (v_ij v_ij) C_i`` summed in row order.  Stored zeros
    are left out.  The rows are unsigned so that the kernel indexes ``b``
    and ``C`` without numba's negative-index test (about 6 % of an epoch on
    a9a).  One pass to count, one to fill, where the scipy chain it
    replaces (hstack, diag(y) @ X, CSC, sort, multiply, a product) made
    six; on w8a that chain was 15 % of a CDN fit (decision record 29l01)."""
    n = indptr.shape[0] - 1
    colptr = np.zeros(d + 2, dtype=np.int64)
    for p in range(indptr[0], indptr[n]):
        if data[p] != 0.0:
            colptr[indices[p] + 1] += 1
    if B != 0.0:
        colptr[d + 1] = n
    for j in range(d + 1):
        colptr[j + 1] += colptr[j]
    nnz = colptr[d + 1]
    vals = np.empty(nnz)
    rows = np.empty(nnz, dtype=np.uint32)
    fill = colptr[:d + 1].copy()
    for i in range(n):
        yi = y[i]
        for p in range(indptr[i], indptr[i + 1]):
            x = data[p]
            if x != 0.0:
                j = indices[p]
                q = fill[j]
                vals[q] = yi * x
                rows[q] = i
                fill[j] = q + 1
        if B != 0.0:
            q = fill[d]
            vals[q] = yi * B
            rows[q] = i
            fill[d] = q + 1
    xj_sq = np.zeros(d + 1)
    for j in range(d + 1):
        acc = 0.0
        for q in range(colptr[j], colptr[j + 1]):
            v = vals[q]
            acc += (v * v) * C[rows[q]]
        xj_sq[j] = acc
    return vals, rows, colptr, xj_sq


@dataclass(frozen=True)
class CDNRecord:
    """One epoch of CDN: ``iteration`` (= epochs so far), ``violation_sum`` and
    ``violation_max`` over the visited variables, ``active_size`` after the
    epoch's shrinking, ``nnz`` the non-zero weights after it."""

    iteration: int
    violation_sum: float
    violation_max: float
    active_size: int
    nnz: int


class CDNRun(EpochStateRun):
    """CDN on one binary problem (y in {-1, +1}, per-example bounds ``C``)."""

    solver_name = "cdn"
    limit_unit = "epochs"
    step_name = "epoch"
    first_chunk = 16

    def __init__(self, estimator, X, y, C, B, tol, max_iter, seed, progress=False):
        self.n_samples = int(y.shape[0])
        super().__init__(estimator, max_iter=-1, progress=progress)
        n = self.n_samples
        self.B = float(B)
        if sp.issparse(X):
            Xa = X
            if not Xa.has_canonical_format:
                Xa = Xa.copy()
                Xa.sum_duplicates()
            data, indices, indptr = Xa.data.astype(np.float64, copy=False), Xa.indices, Xa.indptr
        else:
            # a dense X's non-zeros in compiled code (scipy's csr_matrix of
            # Fashion-MNIST's 10000 x 784 took 94 ms of CPU, this 15 ms)
            Xd = np.ascontiguousarray(X, dtype=np.float64)
            data, indices, indptr = dense_to_csr(Xd, count_nonzeros(Xd))
        y = np.asarray(y, dtype=np.float64)
        self.C = np.ascontiguousarray(C, dtype=np.float64)
        self.vals, self.rows_, self.colptr, self.xj_sq = columns(
            data, indices, indptr, y, self.B, int(X.shape[1]), self.C)
        w_size = X.shape[1] + 1
        self.w = np.zeros(w_size)
        self.b = np.ones(n)
        self.index = np.arange(w_size, dtype=np.int64)
        pos = int(np.count_nonzero(y > 0))
        self.ist = np.array([w_size, 0, int(seed) & 0x7FFFFFFF, 0, int(max_iter)],
                            dtype=np.int64)
        self.fst = np.array([np.inf, float(tol) * min(pos, n - pos) / n, -1.0])
        self.iter_limit = int(max_iter)
        self._mark_start_limit()

    def _criterion(self):
        return f"violation sum <= {self.fst[1]:.3g} x the first epoch's"

    def _kernel(self, k, rec):
        t = cdn_epochs(self.vals, self.rows_, self.colptr, self.C, self.xj_sq, self.w, self.b,
                       self.index, self.ist, self.fst, int(k), rec)
        self._note_converged()
        return int(t)

    def _step(self):
        rec = np.zeros((1, 3))
        if self._kernel(1, rec) == 0:
            return None
        return CDNRecord(iteration=self.n_iter + 1, violation_sum=float(rec[0, 0]),
                         violation_max=float(rec[0, 1]), active_size=int(rec[0, 2]),
                         nnz=int(np.count_nonzero(self.w)))

    def _advance(self, max_steps):
        return self._kernel(max_steps, np.zeros((0, 3)))

    def result(self):
        return {"w": self.w[:-1].copy(), "b": float(self.w[-1] * self.B),
                "n_iter": int(self.ist[1])}
