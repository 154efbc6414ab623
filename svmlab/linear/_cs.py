"""Crammer and Singer's multi-class linear SVM by the sequential dual method.

The problem (Crammer and Singer, JMLR 2001; LIBLINEAR's ``MCSVM_CS``,
scikit-learn's ``LinearSVC(multi_class="crammer_singer")``), with ``x_i``
augmented by the bias feature ``B`` and ``C_i = C * class_weight[y_i] *
sample_weight_i``::

    primal:  min_{w_1..w_k, xi}  1/2 sum_m |w_m|^2 + sum_i C_i xi_i
             s.t.  w_{y_i}'x_i - w_m'x_i >= e_i^m - xi_i   for all i, m
             (e_i^m = 1 for m != y_i, 0 for m = y_i)
    dual:    min_a  1/2 sum_m |sum_i a_i^m x_i|^2 + sum_i sum_m e_i^m a_i^m
             s.t.  a_i^m <= C_i^m  (C_i for m = y_i, 0 otherwise),  sum_m a_i^m = 0

and ``w_m = sum_i a_i^m x_i``.  The method: Keerthi, Sundararajan, Chang,
Hsieh and Lin, "A Sequential Dual Method for Large Scale Multi-Class Linear
SVMs", KDD 2008, Algorithm 1 (sequential dual method over the examples,
each sub-problem over the k variables of one example solved exactly,
Algorithm 2 / Crammer-Singer's fixed-point on the sorted ``D``), with the
shrinking of section 4 (a variable at its bound whose gradient is below the
smallest free one leaves; an example with one variable left leaves) and
LIBLINEAR's stopping rule: an epoch's largest ``max G - min G`` below
``eps_shrink`` (starting at ``max(10 eps, 1)``, halved down to ``eps`` at
each unshrinking) ends the shrinking phase; below ``eps = tol`` over every
variable it stops.  The epochs visit the active examples in a random order.

One step of :class:`CSRun` is one epoch.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from svmlab._jit import njit

from . import _dcd as K
from ._runs import EpochStateRun, kernel_data

__all__ = ["CSRecord", "CSRun", "cs_epochs"]


@njit(cache=True)
def _sub_problem(A, yi, Cyi, act, Bv, D, alpha_new):
    """Crammer-Singer's sub-problem of one example (LIBLINEAR's
    ``solve_sub_problem``): the new values of its ``act`` active variables."""
    for m in range(act):
        D[m] = Bv[m]
    if yi < act:
        D[yi] += A * Cyi
    # sort D[:act] in decreasing order (k is small: insertion sort)
    for a in range(1, act):
        v = D[a]
        c = a - 1
        while c >= 0 and D[c] < v:
            D[c + 1] = D[c]
            c -= 1
        D[c + 1] = v
    beta = D[0] - A * Cyi
    r = 1
    while r < act and beta < r * D[r]:
        beta += D[r]
        r += 1
    beta /= r
    for m in range(act):
        if m == yi:
            alpha_new[m] = min(Cyi, (beta - Bv[m]) / A)
        else:
            alpha_new[m] = min(0.0, (beta - Bv[m]) / A)


@njit(cache=True)
def cs_epochs(sparse, Xd, data, indices, indptr, B, yidx, C, QD, alpha, aidx, y_index,
              act_i, index, W, ist, fst, max_epochs):
    """Up to ``max_epochs`` epochs (module docstring).  ``W`` is (d+1, k)
    C-ordered (row j: feature j's weight in every class); ``alpha``/``aidx``
    (l, k); ``ist``: active examples, epochs, generator, done (1 converged, 2
    max_iter), max_iter, start_from_all; ``fst``: eps, eps_shrink, the last
    epoch's largest violation."""
    l = yidx.shape[0]
    k = W.shape[1]
    d = W.shape[0] - 1
    G = np.empty(k)
    Bv = np.empty(k)
    D = np.empty(k)
    alpha_new = np.empty(k)
    d_ind = np.empty(k, dtype=np.int64)
    d_val = np.empty(k)
    done = 0
    while done < max_epochs and ist[3] == 0:
        stopping = -np.inf
        active = ist[0]
        ist[2] = K.permute(index, active, ist[2])
        s = 0
        while s < active:
            i = index[s]
            Ai = QD[i]
            Ci = C[i]
            if Ai > 0.0:
                na = act_i[i]
                yi = y_index[i]
                for m in range(na):
                    G[m] = 1.0
                if yi < na:
                    G[yi] = 0.0
                if sparse:
                    for q in range(indptr[i], indptr[i + 1]):
                        jj = indices[q]
                        v = data[q]
                        for m in range(na):
                            G[m] += W[jj, aidx[i, m]] * v
                else:
                    for jj in range(d):
                        v = Xd[i, jj]
                        for m in range(na):
                            G[m] += W[jj, aidx[i, m]] * v
                if B != 0.0:
                    for m in range(na):
                        G[m] += W[d, aidx[i, m]] * B
                minG = np.inf
                maxG = -np.inf
                for m in range(na):
                    if alpha[i, aidx[i, m]] < 0.0 and G[m] < minG:
                        minG = G[m]
                    if G[m] > maxG:
                        maxG = G[m]
                if yi < na:
                    if alpha[i, yidx[i]] < Ci and G[yi] < minG:
                        minG = G[yi]
                m = 0
                while m < na:
                    bound = Ci if m == yi else 0.0
                    if alpha[i, aidx[i, m]] == bound and G[m] < minG:
                        na -= 1
                        while na > m:
                            bnd = Ci if na == yi else 0.0
                            if not (alpha[i, aidx[i, na]] == bnd and G[na] < minG):
                                t = aidx[i, m]
                                aidx[i, m] = aidx[i, na]
                                aidx[i, na] = t
                                tg = G[m]
                                G[m] = G[na]
                                G[na] = tg
                                if yi == na:
                                    yi = m
                                elif yi == m:
                                    yi = na
                                break
                            na -= 1
                    m += 1
                act_i[i] = na
                y_index[i] = yi
                if na <= 1:
                    active -= 1
                    index[s] = index[active]
                    index[active] = i
                    continue
                if maxG - minG <= 1e-12:
                    s += 1
                    continue
                if maxG - minG > stopping:
                    stopping = maxG - minG
                for m in range(na):
                    Bv[m] = G[m] - Ai * alpha[i, aidx[i, m]]
                _sub_problem(Ai, yi, Ci, na, Bv, D, alpha_new)
                nz = 0
                for m in range(na):
                    dd = alpha_new[m] - alpha[i, aidx[i, m]]
                    alpha[i, aidx[i, m]] = alpha_new[m]
                    if abs(dd) >= 1e-12:
                        d_ind[nz] = aidx[i, m]
                        d_val[nz] = dd
                        nz += 1
                if sparse:
                    for q in range(indptr[i], indptr[i + 1]):
                        jj = indices[q]
                        v = data[q]
                        for m in range(nz):
                            W[jj, d_ind[m]] += d_val[m] * v
                else:
                    for jj in range(d):
                        v = Xd[i, jj]
                        for m in range(nz):
                            W[jj, d_ind[m]] += d_val[m] * v
                for m in range(nz):
                    W[d, d_ind[m]] += d_val[m] * B
            s += 1
        ist[0] = active
        ist[1] += 1
        fst[2] = stopping
        done += 1
        if stopping < fst[1]:
            if stopping < fst[0] and ist[5] == 1:
                ist[3] = 1
                break
            ist[0] = l
            for i in range(l):
                act_i[i] = k
            fst[1] = max(fst[1] / 2, fst[0])
            ist[5] = 1
        else:
            ist[5] = 0
        if ist[1] >= ist[4]:
            ist[3] = 2
            break
    return done


@dataclass(frozen=True)
class CSRecord:
    """One epoch: ``iteration`` (epochs so far), ``violation`` (the epoch's
    largest ``max G - min G``), ``active_size`` (examples still active)."""

    iteration: int
    violation: float
    active_size: int


class CSRun(EpochStateRun):
    """The sequential dual method on ``k`` classes: ``y_idx`` (n,) class indices,
    ``C`` (n,) per-example bounds (rows with ``C_i = 0`` keep ``a_i = 0``)."""

    solver_name = "crammer_singer"
    limit_unit = "epochs"
    step_name = "epoch"
    first_chunk = 16

    def __init__(self, estimator, X, y_idx, k, C, B, tol, max_iter, seed, progress=False):
        self.n_samples = int(y_idx.shape[0])
        super().__init__(estimator, max_iter=-1, progress=progress)
        n = self.n_samples
        self.data = kernel_data(X)
        self.B = float(B)
        self.k = int(k)
        self.y_idx = np.ascontiguousarray(y_idx, dtype=np.int64)
        self.C = np.ascontiguousarray(C, dtype=np.float64)
        self.QD = K.row_sqnorms(*self.data, self.B, n)
        self.alpha = np.zeros((n, self.k))
        self.aidx = np.ascontiguousarray(np.tile(np.arange(self.k, dtype=np.int64), (n, 1)))
        self.y_index = self.y_idx.copy()
        self.act_i = np.full(n, self.k, dtype=np.int64)
        self.index = np.arange(n, dtype=np.int64)
        self.W = np.zeros((X.shape[1] + 1, self.k))
        self.iter_limit = int(max_iter)
        self.ist = np.array([n, 0, int(seed) & 0x7FFFFFFF, 0, self.iter_limit, 1],
                            dtype=np.int64)
        self.fst = np.array([float(tol), max(10.0 * float(tol), 1.0), np.inf])
        self._mark_start_limit()

    def _criterion(self):
        return f"max G - min G < tol={self.fst[0]:g} over every variable"

    def _kernel(self, k):
        t = cs_epochs(*self.data, self.B, self.y_idx, self.C, self.QD, self.alpha, self.aidx,
                      self.y_index, self.act_i, self.index, self.W, self.ist, self.fst, int(k))
        self._note_converged()
        return int(t)

    def _step(self):
        if self._kernel(1) == 0:
            return None
        return CSRecord(iteration=self.n_iter + 1, violation=float(self.fst[2]),
                        active_size=int(self.ist[0]))

    def _advance(self, max_steps):
        return self._kernel(max_steps)

    def result(self):
        return {"W": self.W[:-1].T.copy(), "b": self.W[-1] * self.B, "n_iter": int(self.ist[1])}
