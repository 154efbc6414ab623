"""Coordinate descent Newton (CDN) for the L1-regularised L2-loss linear SVM, readable.

The problem (LIBLINEAR's ``L1R_L2LOSS_SVC``, which
``LinearSVC(penalty="l1", loss="squared_hinge", dual=False)`` solves), with
``x_i`` augmented by the bias feature ``B`` (its weight, the last entry of
``w``, is penalised like the others), ``y_i`` in {-1, +1} and one bound ``C_i``
per example::

    min_w  F(w) = |w|_1 + L(w),   L(w) = sum_i C_i max(0, b_i)^2,
           b_i = 1 - y_i w'x_i

The method: Yuan, Chang, Hsieh and Lin, "A Comparison of Optimization Methods
and Software for Large-scale L1-regularized Linear Classification", JMLR 11
(2010), section 4.1.2, Algorithm 3 (CDN, after Chang, Hsieh and Lin 2008).
One variable ``w_j`` at a time, with ``b`` kept up to date for every example
(so one variable costs two passes over column ``j``):

1. ``derivatives``: ``G = dL/dw_j = -2 sum_{b_i > 0} C_i y_i x_ij b_i`` and the
   generalised second derivative ``H = max(2 sum_{b_i > 0} C_i x_ij^2, 1e-12)``;
2. ``violation``: how far ``w_j`` is from optimal (the projected gradient of
   ``F`` in ``w_j``, from ``G + 1`` and ``G - 1``); a variable at 0 whose ``G``
   lies strictly inside ``(-1 + M/l, 1 - M/l)`` leaves the active set
   (shrinking; ``M`` the previous epoch's largest violation, ``l`` the
   number of examples);
3. ``newton_direction``: the minimiser of the one-variable model
   ``G d + H d^2 / 2 + |w_j + d|`` (equation (29));
4. ``line_search``: ``lambda = 1, 1/2, 1/4, ...`` until
   ``F(w + lambda d e_j) - F(w) <= sigma lambda (|w_j + d| - |w_j| + G d)``
   (``sigma = 0.01``, equation (30)), first tried by the cheap upper bound of
   section 4.1.2 (``x_j'Cx_j d^2 + G d + ...``, LIBLINEAR's ``appxcond``), at
   most 20 halvings (then ``b`` is recomputed from ``w``).

Each epoch visits the active variables in a random order (LIBLINEAR's
permutation, the generator of :func:`svmlab.reference.dcd.lcg`).  The run
stops when an epoch's sum of violations is at most ``eps`` times that of the
first epoch, ``eps = tol min(#pos, #neg) / l``; when that happens on a shrunk
active set, every variable is checked once more.

Same steps as the compiled solver.  :class:`svmlab.linear._cdn.CDNRun`
(``LinearSVC(solver="cdn")``) keeps the same state under the same names
(``w``, ``b``, ``index``, the active size, ``Gmax_old``, ``Gnorm1_init``,
``xj_sq``) and returns the same :class:`~svmlab.linear._cdn.CDNRecord` per
epoch; ``tests/test_linear_twins.py`` proves the two equal epoch by epoch,
bit for bit.  For that, the column sums here run over the non-zeros of
column ``j`` in increasing row order, with ``y_i`` folded into the values
(``vals = y_i x_ij``), as the compiled kernel reads its CSC matrix; the loss
in the line search is summed over those rows only (the others do not change).

    run = CDN(X, y, C=1.0, B=1.0, tol=1e-4, seed=0)
    rec = run.step()           # one epoch, None at the end
    res = cdn(X, y, C=1.0)     # res.w, res.b, res.records
"""

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from svmlab.linear._cdn import CDNRecord
from svmlab.reference.dcd import lcg

__all__ = ["CDN", "CDNResult", "cdn", "permute"]

SIGMA = 0.01          # the line search's sufficient decrease
MAX_HALVINGS = 20     # LIBLINEAR's max_num_linesearch


def permute(index, active, rng):
    """LIBLINEAR's random order of ``index[:active]``; returns the generator's
    new state."""
    for s in range(active):
        rng = lcg(rng)
        j = s + rng % (active - s)
        index[s], index[j] = index[j], index[s]
    return rng


@dataclass
class CDNResult:
    w: np.ndarray
    b: float
    epochs: int
    converged: bool
    records: list = field(default_factory=list)


class CDN:
    """Algorithm 3 as an object advanced by :meth:`step` (one epoch).

    ``X`` dense or sparse (n, d), ``y`` in {-1, +1}, ``C`` a number or one
    positive bound per example, ``B`` the bias feature (0: no bias; the
    variable stays and is 0), ``tol`` as in LIBLINEAR, ``max_iter`` the most
    epochs, ``seed`` the generator's start."""

    def __init__(self, X, y, C=1.0, B=1.0, tol=1e-4, max_iter=1000, seed=0):
        X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
        n, d = X.shape
        self.y = np.asarray(y, dtype=np.float64)
        self.C = np.broadcast_to(np.asarray(C, dtype=np.float64), (n,)).copy()
        self.B = float(B)
        # column j: the rows where x_ij != 0 and the values y_i x_ij
        Xa = np.column_stack([X, np.full(n, self.B)])
        self.cols = []
        for j in range(d + 1):
            rows = np.flatnonzero(Xa[:, j])
            self.cols.append((rows, self.y[rows] * Xa[rows, j]))
        # x_j' diag(C) x_j, for the cheap test of the line search
        self.xj_sq = np.zeros(d + 1)
        for j, (rows, vals) in enumerate(self.cols):
            for i, v in zip(rows, vals):
                self.xj_sq[j] += v * v * self.C[i]
        self.l = n
        self.w = np.zeros(d + 1)
        self.b = np.ones(n)                      # b_i = 1 - y_i w'x_i at w = 0
        self.index = list(range(d + 1))
        self.active = d + 1                      # index[:active] is active
        self.Gmax_old = np.inf                   # M of the shrinking test
        pos = int(np.count_nonzero(self.y > 0))
        self.eps = float(tol) * min(pos, n - pos) / n
        self.Gnorm1_init = -1.0                  # set by the first epoch
        self.epochs = 0
        self.max_iter = int(max_iter)
        self.rng = int(seed) & 0x7FFFFFFF
        self.converged = False
        self.done = self.max_iter <= 0

    # -- one variable -----------------------------------------------------------
    def derivatives(self, j):
        """Step 1: ``G_loss = dL/dw_j`` and ``H`` (rows with ``b_i > 0`` only)."""
        G_loss = 0.0
        H = 0.0
        for i, v in zip(*self.cols[j]):
            if self.b[i] > 0.0:
                tmp = self.C[i] * v
                G_loss -= tmp * self.b[i]
                H += tmp * v
        G_loss *= 2.0
        H *= 2.0
        return G_loss, max(H, 1e-12)

    def violation(self, wj, G):
        """Step 2: the optimality violation of ``w_j``, or None when ``w_j`` is
        shrunk (at 0, with ``G`` well inside ``(-1, 1)``)."""
        Gp, Gn = G + 1.0, G - 1.0                # the derivatives of F at w_j = 0+ and 0-
        if wj == 0.0:
            if Gp < 0.0:
                return -Gp
            if Gn > 0.0:
                return Gn
            if Gp > self.Gmax_old / self.l and Gn < -self.Gmax_old / self.l:
                return None
            return 0.0
        return abs(Gp) if wj > 0.0 else abs(Gn)

    @staticmethod
    def newton_direction(wj, G, H):
        """Step 3, equation (29)."""
        if G + 1.0 < H * wj:
            return -(G + 1.0) / H
        if G - 1.0 > H * wj:
            return -(G - 1.0) / H
        return -wj

    def _move_b(self, j, step):
        """``b_i += step y_i x_ij`` over column j; the new loss there, before and
        after (only rows with ``b_i > 0`` count)."""
        loss_old = loss_new = 0.0
        for i, v in zip(*self.cols[j]):
            if self.b[i] > 0.0:
                loss_old += self.C[i] * self.b[i] * self.b[i]
            self.b[i] += step * v
            if self.b[i] > 0.0:
                loss_new += self.C[i] * self.b[i] * self.b[i]
        return loss_old, loss_new

    def line_search(self, j, d, G_loss):
        """Step 4: the accepted step along ``d`` (``b`` moves with it); returns
        it and the number of halvings."""
        wj = self.w[j]
        delta = abs(wj + d) - abs(wj) + G_loss * d  # the decrease the model promises
        d_old = 0.0                              # b is up to date for w_j + d_old
        loss_old = 0.0
        n_ls = 0
        while n_ls < MAX_HALVINGS:
            cond = abs(wj + d) - abs(wj) - SIGMA * delta
            if self.xj_sq[j] * d * d + G_loss * d + cond <= 0.0:
                # the cheap upper bound already shows sufficient decrease
                self._move_b(j, d_old - d)
                break
            old, loss_new = self._move_b(j, d_old - d)
            if n_ls == 0:
                loss_old = old                   # the loss at w_j itself
            if cond + loss_new - loss_old <= 0.0:
                break
            d_old = d
            d *= 0.5
            delta *= 0.5
            n_ls += 1
        return d, n_ls

    def _recompute_b(self):
        """After a failed line search: ``b = 1 - y * Xw`` from scratch."""
        self.b[:] = 1.0
        for j, wj in enumerate(self.w):
            if wj != 0.0:
                for i, v in zip(*self.cols[j]):
                    self.b[i] -= wj * v

    # -- one epoch ----------------------------------------------------------------
    def step(self):
        """One epoch over the active variables; its record (None once finished)."""
        if self.done:
            return None
        Gmax_new = 0.0
        Gnorm1_new = 0.0
        self.rng = permute(self.index, self.active, self.rng)
        s = 0
        while s < self.active:
            j = self.index[s]
            G_loss, H = self.derivatives(j)
            viol = self.violation(self.w[j], G_loss)
            if viol is None:
                # shrink: swap with the last active variable, which is visited next
                self.active -= 1
                self.index[s], self.index[self.active] = self.index[self.active], j
                continue
            Gmax_new = max(Gmax_new, viol)
            Gnorm1_new += viol
            d = self.newton_direction(self.w[j], G_loss, H)
            if abs(d) >= 1.0e-12:
                d, n_ls = self.line_search(j, d, G_loss)
                self.w[j] += d
                if n_ls >= MAX_HALVINGS:
                    self._recompute_b()
            s += 1
        if self.epochs == 0:
            self.Gnorm1_init = Gnorm1_new
        self.epochs += 1
        rec = CDNRecord(iteration=self.epochs, violation_sum=float(Gnorm1_new),
                        violation_max=float(Gmax_new), active_size=self.active,
                        nnz=int(np.count_nonzero(self.w)))
        n_vars = len(self.index)
        if Gnorm1_new <= self.eps * self.Gnorm1_init:
            if self.active == n_vars:
                self.converged = self.done = True
                return rec
            self.active = n_vars                 # optimal on the active set: check all once
            self.Gmax_old = np.inf
        else:
            self.Gmax_old = Gmax_new
        if self.epochs >= self.max_iter:
            self.done = True
        return rec


def cdn(X, y, C=1.0, B=1.0, tol=1e-4, max_iter=1000, seed=0, keep_records=True):
    """Run :class:`CDN` to the end; ``w`` without the bias weight, ``b = B
    w_bias``."""
    run = CDN(X, y, C=C, B=B, tol=tol, max_iter=max_iter, seed=seed)
    records = []
    while (rec := run.step()) is not None:
        if keep_records:
            records.append(rec)
    return CDNResult(w=run.w[:-1].copy(), b=float(run.w[-1] * run.B), epochs=run.epochs,
                     converged=run.converged, records=records)
