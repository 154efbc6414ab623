"""Crammer and Singer's multi-class linear SVM by the sequential dual method, readable.

The problem (Crammer and Singer, JMLR 2001; LIBLINEAR's ``MCSVM_CS``, which
``LinearSVC(multi_class="crammer_singer")`` solves) on ``k`` classes, with
``x_i`` augmented by the bias feature ``B`` and one bound ``C_i`` per example::

    primal:  min_{w_1..w_k}  1/2 sum_m |w_m|^2
                             + sum_i C_i max_m (e_i^m + w_m'x_i - w_{y_i}'x_i)
             (e_i^m = 1 for m != y_i, 0 for m = y_i)
    dual:    min_a  1/2 sum_m |sum_i a_i^m x_i|^2 + sum_i sum_m e_i^m a_i^m
             s.t.  a_i^m <= C_i^m  (C_i for m = y_i, 0 otherwise),  sum_m a_i^m = 0

with ``w_m = sum_i a_i^m x_i`` kept up to date.  The method: Keerthi,
Sundararajan, Chang, Hsieh and Lin, "A Sequential Dual Method for Large Scale
Multi-Class Linear SVMs", KDD 2008, Algorithm 1: the examples one at a time,
each one's ``k`` variables optimised exactly together.  For example ``i``:

1. ``gradient``: ``G_m = e_i^m + w_m'x_i`` for its active classes;
2. ``shrink_classes``: the smallest gradient over the variables that can still
   decrease, ``minG``; a variable at its bound whose ``G_m < minG`` leaves the
   example's active classes (section 4); an example left with one active
   class leaves the active examples;
3. ``sub_problem``: if ``max G - min G > 1e-12``, the exact minimiser over the
   active classes (Crammer and Singer's fixed point on the sorted ``D``,
   LIBLINEAR's ``solve_sub_problem``);
4. ``update_w``: ``w_m += (a_new - a_old) x_i`` for the classes that moved.

Each epoch visits the active examples in a random order (LIBLINEAR's
permutation, the generator of :func:`svmlab.reference.dcd.lcg`).  The epoch's
largest ``max G - min G`` ("stopping") decides: below ``eps_shrink`` (first
``max(10 tol, 1)``) the shrinking phase ends: if the epoch had started from
every variable and is below ``tol`` too, the run has converged; otherwise
every example and class is made active again and ``eps_shrink`` halves (not
below ``tol``).

Same steps as the compiled solver.  :class:`svmlab.linear._cs.CSRun`
(``LinearSVC(multi_class="crammer_singer")``) keeps the same state under the
same names (``alpha``, ``W`` of shape (d+1, k), ``index``, and per example
``aidx`` its classes with the ``act_i`` active first and ``y_index`` the
position of its label there) and returns the same
:class:`~svmlab.linear._cs.CSRecord` per epoch; ``tests/test_linear_twins.py``
proves the two equal epoch by epoch, bit for bit.  For that, ``w_m'x_i`` is
summed over the non-zeros of ``x_i`` left to right and then the bias, as the
compiled kernel does.

    run = CrammerSinger(X, y_idx, k, C=1.0, B=1.0, tol=0.1, seed=0)
    rec = run.step()                   # one epoch, None at the end
    res = crammer_singer(X, y_idx, k)  # res.coef (k, d), res.intercept (k,)
"""

from dataclasses import dataclass, field

import numpy as np

from svmlab.linear._cs import CSRecord
from svmlab.reference.cdn import permute
from svmlab.reference.tron import rows_of

__all__ = ["CrammerSinger", "CSResult", "crammer_singer", "sub_problem"]


def sub_problem(A, yi, Cyi, Bv):
    """The minimiser over one example's active variables ``a_m`` (``m`` in the
    order of ``Bv``; ``yi`` the position of its label, or ``len(Bv)`` when the
    label's variable is not active) of ``A/2 sum a_m^2 + sum Bv_m a_m``,
    ``a_m <= C^m``, ``sum a_m = 0`` (``Bv_m = G_m - A a_m^old``)."""
    act = len(Bv)
    D = list(Bv)
    if yi < act:
        D[yi] += A * Cyi
    D.sort(reverse=True)
    # beta: the level that the largest D's are cut to
    beta = D[0] - A * Cyi
    r = 1
    while r < act and beta < r * D[r]:
        beta += D[r]
        r += 1
    beta /= r
    return [min(Cyi if m == yi else 0.0, (beta - Bv[m]) / A) for m in range(act)]


@dataclass
class CSResult:
    coef: np.ndarray
    intercept: np.ndarray
    alpha: np.ndarray
    epochs: int
    converged: bool
    records: list = field(default_factory=list)


class CrammerSinger:
    """Algorithm 1 as an object advanced by :meth:`step` (one epoch).

    ``X`` dense or sparse (n, d), ``y_idx`` the class of each example in
    ``0..k-1``, ``C`` a number or one bound per example (``C_i = 0`` keeps
    ``a_i = 0``), ``B`` the bias feature (0: none), ``tol`` LIBLINEAR's
    ``eps``, ``max_iter`` the most epochs, ``seed`` the generator's start."""

    def __init__(self, X, y_idx, k, C=1.0, B=1.0, tol=0.1, max_iter=1000, seed=0):
        self.rows = rows_of(X)
        n, d = X.shape
        self.k = int(k)
        self.y_idx = np.asarray(y_idx, dtype=np.int64)
        self.C = np.broadcast_to(np.asarray(C, dtype=np.float64), (n,)).copy()
        self.B = float(B)
        # A_i = |[x_i, B]|^2, the curvature of example i's sub-problem
        self.QD = np.zeros(n)
        for i, (cols, vals) in enumerate(self.rows):
            s = self.B * self.B
            for v in vals:
                s += v * v
            self.QD[i] = s
        self.alpha = np.zeros((n, self.k))       # a_i^m
        self.W = np.zeros((d + 1, self.k))       # column m: w_m, its last entry the bias weight
        self.aidx = [list(range(self.k)) for _ in range(n)]   # classes, the active ones first
        self.act_i = [self.k] * n                # how many of them are active
        self.y_index = [int(c) for c in self.y_idx]           # where the label sits in aidx[i]
        self.index = list(range(n))
        self.active = n                          # index[:active]: the active examples
        self.eps = float(tol)
        self.eps_shrink = max(10.0 * self.eps, 1.0)
        self.start_from_all = True
        self.stopping = np.inf
        self.epochs = 0
        self.max_iter = int(max_iter)
        self.rng = int(seed) & 0x7FFFFFFF
        self.converged = False
        self.done = self.max_iter <= 0

    # -- one example -------------------------------------------------------------
    def gradient(self, i):
        """Step 1: ``G_m = e_i^m + w_m'[x_i, B]`` for the active classes."""
        cols, vals = self.rows[i]
        G = []
        for m in range(self.act_i[i]):
            c = self.aidx[i][m]
            g = 0.0 if m == self.y_index[i] else 1.0
            for j, v in zip(cols, vals):
                g += self.W[j, c] * v
            if self.B != 0.0:
                g += self.W[-1, c] * self.B
            G.append(g)
        return G

    def _at_bound(self, i, m, yi, G, minG):
        bound = self.C[i] if m == yi else 0.0
        return self.alpha[i, self.aidx[i][m]] == bound and G[m] < minG

    def shrink_classes(self, i, G):
        """Step 2: ``minG``, ``maxG``; the variables at their bound with
        ``G_m < minG`` move behind the active ones (``aidx``, ``G``, ``y_index``
        follow)."""
        na, yi = self.act_i[i], self.y_index[i]
        alpha, aidx = self.alpha[i], self.aidx[i]
        minG, maxG = np.inf, -np.inf
        for m in range(na):
            if alpha[aidx[m]] < 0.0 and G[m] < minG:       # can decrease
                minG = G[m]
            maxG = max(maxG, G[m])
        if yi < na and alpha[self.y_idx[i]] < self.C[i] and G[yi] < minG:
            minG = G[yi]
        m = 0
        while m < na:
            if self._at_bound(i, m, yi, G, minG):
                na -= 1
                # swap m with the last active class that stays
                while na > m:
                    if not self._at_bound(i, na, yi, G, minG):
                        aidx[m], aidx[na] = aidx[na], aidx[m]
                        G[m], G[na] = G[na], G[m]
                        if yi == na:
                            yi = m
                        elif yi == m:
                            yi = na
                        break
                    na -= 1
            m += 1
        self.act_i[i], self.y_index[i] = na, yi
        return minG, maxG

    def update_w(self, i, changes):
        """Step 4: ``w_m += delta_m [x_i, B]`` for each ``(m, delta_m)``."""
        cols, vals = self.rows[i]
        for c, delta in changes:
            for j, v in zip(cols, vals):
                self.W[j, c] += delta * v
            self.W[-1, c] += delta * self.B

    def visit(self, s):
        """Example ``index[s]``; the position of the next one."""
        i = self.index[s]
        A = self.QD[i]
        if A <= 0.0:
            return s + 1                         # x_i = 0: nothing to do
        G = self.gradient(i)
        minG, maxG = self.shrink_classes(i, G)
        na, yi = self.act_i[i], self.y_index[i]
        if na <= 1:
            # one class left: the example leaves, the last active one comes here
            self.active -= 1
            self.index[s], self.index[self.active] = self.index[self.active], i
            return s
        if maxG - minG <= 1e-12:
            return s + 1                         # already optimal
        self.stopping = max(self.stopping, maxG - minG)
        classes = self.aidx[i][:na]
        Bv = [G[m] - A * self.alpha[i, c] for m, c in enumerate(classes)]
        a_new = sub_problem(A, yi, self.C[i], Bv)
        changes = []
        for c, a in zip(classes, a_new):
            delta = a - self.alpha[i, c]
            self.alpha[i, c] = a
            if abs(delta) >= 1e-12:
                changes.append((c, delta))
        self.update_w(i, changes)
        return s + 1

    # -- one epoch ----------------------------------------------------------------
    def step(self):
        """One epoch over the active examples; its record (None once finished)."""
        if self.done:
            return None
        self.stopping = -np.inf
        self.rng = permute(self.index, self.active, self.rng)
        s = 0
        while s < self.active:
            s = self.visit(s)
        self.epochs += 1
        if self.stopping < self.eps_shrink:
            if self.stopping < self.eps and self.start_from_all:
                self.converged = self.done = True
            else:
                # the end of a shrinking phase: everything active again
                self.active = len(self.index)
                self.act_i = [self.k] * len(self.index)
                self.eps_shrink = max(self.eps_shrink / 2, self.eps)
                self.start_from_all = True
        else:
            self.start_from_all = False
        if not self.done and self.epochs >= self.max_iter:
            self.done = True
        return CSRecord(iteration=self.epochs, violation=float(self.stopping),
                        active_size=self.active)

    @property
    def coef(self):
        return self.W[:-1].T.copy()

    @property
    def intercept(self):
        return self.W[-1] * self.B


def crammer_singer(X, y_idx, k, C=1.0, B=1.0, tol=0.1, max_iter=1000, seed=0,
                   keep_records=True):
    """Run :class:`CrammerSinger` to the end."""
    run = CrammerSinger(X, y_idx, k, C=C, B=B, tol=tol, max_iter=max_iter, seed=seed)
    records = []
    while (rec := run.step()) is not None:
        if keep_records:
            records.append(rec)
    return CSResult(coef=run.coef, intercept=run.intercept, alpha=run.alpha.copy(),
                    epochs=run.epochs, converged=run.converged, records=records)
