"""Dual coordinate descent for linear SVMs, readable: Hsieh, Chang, Lin, Keerthi and
Sundararajan (ICML 2008), Algorithm 1 with the shrinking of Algorithm 3, line by line.

The dual, with ``x_i`` augmented by the bias feature ``B`` and ``y_i`` in {-1, +1}::

    min_a  f(a) = 1/2 a'Qbar a - e'a    s.t.  0 <= a_i <= U_i
    Qbar = Q + D,  Q_ij = y_i y_j x_i'x_j
    hinge (L1 loss):          U_i = C_i,  D_ii = 0
    squared hinge (L2 loss):  U_i = inf,  D_ii = 1 / (2 C_i)

and ``w = sum_i y_i a_i x_i`` is kept up to date, so the primal model moves with every
coordinate step::

    run = DualCD(X, y, C=1.0, loss="hinge", seed=0)
    rec = run.step()          # a svmlab.linear.DCDRecord, None at the end
    res = dual_cd(X, y, C=1.0)   # res.w, res.b, res.alpha, res.records

Given the same data, bounds and seed it takes the same steps as the compiled kernel
(:func:`svmlab.linear._dcd.dcd_svc_steps`, which ``LinearSVC(solver="dcd")`` runs;
tests/test_linear_dcd.py proves it record by record): the same permutation of the
active set at the start of each epoch (LIBLINEAR's ``swap(index[s], index[s + rand() %
(active - s)])`` with the 31-bit generator of :func:`lcg`), the same shrinking swap
(the removed example goes to the end of the active part, and the one from there is
visited next), the same sums in the same order, and the same clipping.

A *step* is one visit of one active coordinate; the epoch's end (the stopping test
``max PG - min PG <= tol``, the unshrinking, the new bounds Mbar and mbar) belongs to
the step that ends the epoch.
"""

from dataclasses import dataclass, field

import numpy as np

from svmlab.linear._runs import DCDRecord

__all__ = ["DualCD", "DCDResult", "dual_cd", "lcg"]


def lcg(state):
    """The random generator: ``s <- (1103515245 s + 12345) mod 2^31`` (glibc's
    constants)."""
    return (state * 1103515245 + 12345) & 0x7FFFFFFF


@dataclass
class DCDResult:
    w: np.ndarray
    b: float
    alpha: np.ndarray
    epochs: int
    converged: bool
    records: list = field(default_factory=list)


class DualCD:
    """Algorithm 1 + 3 as an object advanced by :meth:`step`.

    ``X`` dense (n, d), ``y`` in {-1, +1}, ``C`` a number or one bound per example
    (LIBLINEAR's ``C_i = C * weight_i``, all positive), ``loss`` "hinge" or
    "squared_hinge", ``B`` the bias feature (0: no bias), ``tol`` the stopping
    tolerance, ``max_iter`` the most epochs, ``seed`` the generator's start."""

    def __init__(self, X, y, C=1.0, loss="hinge", B=1.0, tol=1e-4, max_iter=1000, seed=0):
        self.X = np.asarray(X, dtype=np.float64)
        self.y = np.asarray(y, dtype=np.float64)
        n, d = self.X.shape
        Ci = np.broadcast_to(np.asarray(C, dtype=np.float64), (n,))
        self.B = float(B)
        # the box and the diagonal of the two losses (section 2)
        if loss == "hinge":
            self.U = Ci.copy()
            self.D = np.zeros(n)
        else:
            self.U = np.full(n, np.inf)
            self.D = 0.5 / Ci
        # Qbar_ii = x_i'x_i + D_ii (with the bias feature), computed once
        self.Qii = np.array([self._sqnorm(i) for i in range(n)]) + self.D
        self.alpha = np.zeros(n)                 # a = 0 is feasible
        self.w = np.zeros(d + 1)                 # w = sum y_i a_i x_i = 0
        self.index = list(range(n))
        self.active = n                          # shrinking: index[:active] is active
        self.pos = 0                             # next position in this epoch
        self.epoch = 0
        self.rng = int(seed) & 0x7FFFFFFF
        self.new_epoch = True
        self.M_old, self.m_old = np.inf, -np.inf   # Mbar, mbar of Algorithm 3
        self.M_new, self.m_new = -np.inf, np.inf
        self.tol = float(tol)
        self.max_iter = int(max_iter)
        self.converged = False
        self.done = self.max_iter <= 0
        self.n_steps = 0

    def _sqnorm(self, i):
        s = self.B * self.B
        for v in self.X[i]:
            s += v * v
        return s

    def _dot(self, i):
        """w'[x_i, B], summed left to right as the compiled kernel does."""
        s = 0.0
        for j, v in enumerate(self.X[i]):
            s += v * self.w[j]
        return s + self.B * self.w[-1]

    def _shuffle(self):
        """Section 3.1: a random permutation of the active coordinates."""
        for s in range(self.active):
            self.rng = lcg(self.rng)
            j = s + self.rng % (self.active - s)
            self.index[s], self.index[j] = self.index[j], self.index[s]

    def step(self):
        """Visit one coordinate; return its record (None once finished)."""
        if self.done:
            return None
        if self.new_epoch:
            self._shuffle()
            self.M_new, self.m_new = -np.inf, np.inf
            self.new_epoch = False
        s = self.pos
        i = self.index[s]
        # Algorithm 1, 2(a): G = y_i w'x_i - 1 + D_ii a_i   (equation (4))
        G = self.y[i] * self._dot(i) - 1.0
        a_old = self.alpha[i]
        G += a_old * self.D[i]
        # 2(b): the projected gradient (5), and Algorithm 3's shrinking tests
        PG = 0.0
        shrunk = False
        if a_old == 0.0:
            if G > self.M_old:
                shrunk = True
            elif G < 0.0:
                PG = G
        elif a_old == self.U[i]:
            if G < self.m_old:
                shrunk = True
            elif G > 0.0:
                PG = G
        else:
            PG = G
        a_new = a_old
        if shrunk:
            # out of the active set: swap with the last active one, visited next
            self.active -= 1
            self.index[s], self.index[self.active] = self.index[self.active], i
        else:
            self.M_new = max(self.M_new, PG)
            self.m_new = min(self.m_new, PG)
            if abs(PG) > 1e-12:
                # 2(c): the clipped Newton step, and w moves with it (2(d))
                a_new = min(max(a_old - G / self.Qii[i], 0.0), self.U[i])
                self.alpha[i] = a_new
                c = (a_new - a_old) * self.y[i]
                for j, v in enumerate(self.X[i]):
                    self.w[j] += c * v
                self.w[-1] += c * self.B
            self.pos = s + 1
        self.n_steps += 1
        rec = DCDRecord(iteration=self.n_steps, epoch=self.epoch, i=i, alpha_old=float(a_old),
                        alpha_new=float(a_new), G=float(G), PG=float(PG), shrunk=shrunk,
                        active_size=self.active, coef=self.w[:-1].copy(),
                        intercept=float(self.w[-1] * self.B))
        if self.pos >= self.active:
            self._end_epoch()
        return rec

    def _end_epoch(self):
        self.epoch += 1
        self.pos = 0
        self.new_epoch = True
        n = len(self.index)
        if self.M_new - self.m_new <= self.tol:
            if self.active == n:
                self.converged = self.done = True
                return
            # optimal on the active set: check every example once more
            self.active = n
            self.M_old, self.m_old = np.inf, -np.inf
        else:
            self.M_old = self.M_new if self.M_new > 0 else np.inf
            self.m_old = self.m_new if self.m_new < 0 else -np.inf
        if self.epoch >= self.max_iter:
            self.done = True


def dual_cd(X, y, C=1.0, loss="hinge", B=1.0, tol=1e-4, max_iter=1000, seed=0,
            keep_records=True):
    """Run :class:`DualCD` to the end; the result holds ``w`` (without the bias
    weight), ``b = B w_bias``, ``alpha``, the epochs and the records."""
    run = DualCD(X, y, C=C, loss=loss, B=B, tol=tol, max_iter=max_iter, seed=seed)
    records = []
    while True:
        rec = run.step()
        if rec is None:
            break
        if keep_records:
            records.append(rec)
    return DCDResult(w=run.w[:-1].copy(), b=float(run.w[-1] * run.B), alpha=run.alpha.copy(),
                     epochs=run.epoch, converged=run.converged, records=records)
