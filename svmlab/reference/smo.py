"""Platt's SMO, readable: TR MSR-TR-98-14, section 4 pseudo-code, line by line.

TR eq. 11: ``max W = sum alpha - 1/2 sum_ij y_i y_j K_ij alpha_i alpha_j``, ``0 <= alpha
<= C``, ``sum y alpha = 0``, on a dense kernel matrix ``K`` (weights: ``C`` holds one bound
per example, ``0 <= alpha_i <= C_i``, a pair's box is ``[0, C1] x [0, C2]``).  svmlab's
signs (:mod:`svmlab.smo._pairstep`): ``f(x_i) = sum_j alpha_j y_j K_ij + b`` (Platt: ``u =
w.x - b``), ``E = f - y``, ``eta = K11 + K22 - 2 K12`` (minus Platt's)::

    res = smo(K, y, C=1.0)          # res.alpha, res.b, res.records (svmlab.smo._estimator.SMOStep)
    run = PlattSMO(K, y, C=1.0)     # run.step() -> the next SMOStep, None at the end
    explain(res.records[0], C=1.0)  # [(PlattSMO.take_step, {"clip-H", "b2", ...}), ...]

Given the same ``K``, ``kdiag`` and ``random_state`` it takes the same steps as
``SMOClassifier(selection="platt", shrinking=False)`` with every row cached (the
compiled :func:`svmlab.smo._platt.platt_run`; tests/test_reference_smo.py proves it).
Where Platt leaves a choice, both decide alike:

* Errors: both keep ``f0_i = sum_j alpha_j y_j K_ij`` of *every* example, not only
  Platt's cached E of the non-bound ones: ``f0 += d1 K[i1] + d2 K[i2]``, ``E = f0 + b
  - y``, the same float operations in the same order, so every comparison agrees.
* Passes: a full pass visits 0..n-1; a non-bound pass, in index order, the examples
  non-bound when it began, skipping those now at a bound.
* The non-bound list of the second choice: an example becoming non-bound is
  appended, one leaving is replaced by the last (i1 updated before i2).  Ties of
  max |E1 - E2| (tried with > 1 non-bound example) go to the first in the list.
* Random starts: :class:`ParkMiller`, seeded as SMOClassifier does; a loop of length
  m starts at ``next() % m``; the non-bound loop draws only if it is non-empty.
* takeStep: none if ``L >= H`` or ``i1 == i2``; values within ``1e-12 C`` of a bound
  go onto it; Platt's code's eps test; ``eta <= 0``: ends equal within eps.
* ``K12 = K[i2, i1]``, ``K11, K22`` from ``kdiag`` (default ``np.diag(K)``): pass
  ``kernel.diag()``, svmlab's own formula (rbf: 1), which may differ by an ulp.
* Linear kernel: svmlab folds ``w`` (TR section 2.4): ``E = w.x + b - y`` rounds
  otherwise than f0 and breaks near-ties of max |E1 - E2| otherwise.  Pass the dense
  data ``X`` to fold ``w`` here too, with the same sums.

Records: fields as :class:`svmlab.smo._estimator.SMOStep` says, ``n_active = n``.  The cache
fields count row reads as if every row stayed cached (first read a miss,
``kernel_evaluations = misses * n``): i2's per KKT violator examined, i1's and i2's
per step (none with folded ``w``).  Misses match the compiled solver's; its hits
also count its reads to track ``alpha = C``.
"""

import numpy as np
from sklearn.utils import check_random_state

from svmlab.reference._smo_support import SMOResult, drive, per_example_bounds, take_step_tags
from svmlab.smo._estimator import SMOStep

__all__ = ["ParkMiller", "PlattSMO", "SMOResult", "explain", "park_miller_seed", "smo"]
# (SMOResult, drive, per_example_bounds, take_step_tags: plumbing in ._smo_support)


class ParkMiller:
    """Park and Miller's minimal standard generator, ``x <- 48271 x mod (2^31 - 1)``."""

    def __init__(self, state):
        if not 0 < int(state) < 2**31 - 1:
            raise ValueError(f"Park-Miller state must be in [1, 2^31 - 2], got {state}")
        self.state = int(state)

    def next(self):
        self.state = (self.state * 48271) % (2**31 - 1)
        return self.state


def park_miller_seed(random_state):
    """First state, drawn from ``random_state`` as :class:`svmlab.SMOClassifier` draws it."""
    return int(check_random_state(random_state).randint(1, 2**31 - 2))


class PlattSMO:
    """Platt's SMO state on ``K``; ``step()`` runs to the next successful
    takeStep and returns its :class:`SMOStep` (None at the end).  ``X``
    (dense, optional): fold ``w`` for the linear kernel (module docstring).
    ``converged``: the main loop ended (a full pass changed nothing) and no
    example violates KKT by more than tol; ``stalled``: it ended with some."""

    def __init__(self, K, y, C, *, tol=1e-3, eps=1e-3, random_state=0, kdiag=None, X=None):
        self.K, self.y = np.array(K, dtype=np.float64), np.array(y, dtype=np.float64).ravel()
        n = len(self.y)
        self.kdiag = np.diag(self.K).copy() if kdiag is None else np.array(kdiag, dtype=float)
        self.X = None if X is None else np.array(X, dtype=np.float64)
        if n < 2 or not np.all(np.isin(self.y, (-1.0, 1.0))):
            raise ValueError("y must hold at least two labels, each -1 or +1")
        if self.K.shape != (n, n) or self.kdiag.shape != (n,) or (X is not None and (
                self.X.ndim != 2 or len(self.X) != n)):
            raise ValueError(f"K must be n x n, kdiag n values, X n dense rows; n = len(y) = {n}")
        if not (np.all(np.isfinite(self.K)) and np.all(np.isfinite(self.kdiag))):
            raise ValueError("K or kdiag contains NaN or inf")
        if X is not None and not np.allclose(self.K, self.X @ self.X.T, rtol=1e-9, atol=1e-9):
            raise ValueError("X (folded w) is for the linear kernel only: K must be X X^T")
        self.C, self.Cv = per_example_bounds(C, n, tol, eps)  # Cv[i] = C_i, i's bound
        self.tol, self.eps = float(tol), float(eps)
        self.alpha, self.f0, self.b = np.zeros(n), np.zeros(n), 0.0  # f0 = f(x) - b
        self.w = None if X is None else np.zeros(self.X.shape[1])  # folded w (linear SMO)
        self.nonbound = []  # the non-bound list (module docstring)
        self.rng = ParkMiller(park_miller_seed(random_state))
        self.examine_all, self.n_iter, self.converged, self.stalled = True, 0, False, False
        self.rows_read, self.cache_hits, self.cache_misses = set(), 0, 0
        self._loop = self.main_loop()

    def error(self, i):
        """E_i = f(x_i) - y_i (Platt's error cache, for non-bound i)."""
        if self.w is None:
            return self.f0[i] + self.b - self.y[i]
        wx = 0.0
        for k in range(len(self.w)):  # w.x_i summed in feature order, as svmlab does
            wx += self.X[i, k] * self.w[k]
        return wx + self.b - self.y[i]

    def row(self, i):
        """Kernel row i, counted as a cache hit or miss (module docstring)."""
        hit = i in self.rows_read
        self.cache_hits, self.cache_misses = self.cache_hits + hit, self.cache_misses + (not hit)
        self.rows_read.add(i)
        return self.K[i]

    def step(self):
        """The next step's record, None at the end (``for r in iter(run.step, None)``)."""
        return next(self._loop, None)

    def main_loop(self):
        """Platt's main routine: yields the record of every successful step."""
        n = len(self.y)
        num_changed = 0
        self.examine_all = True
        while num_changed > 0 or self.examine_all:
            num_changed = 0
            if self.examine_all:
                order = range(n)  # loop I over all training examples  # [examine-all]
            else:
                order = sorted(self.nonbound)  # loop I over 0 < alpha < C  # [examine-nonbound]
            for i2 in order:
                if not self.examine_all and not 0.0 < self.alpha[i2] < self.Cv[i2]:
                    continue  # it reached a bound during this pass
                record = self.examine_example(i2)
                if record is not None:
                    num_changed += 1
                    yield record
            if self.examine_all:
                self.examine_all = False
            elif num_changed == 0:
                self.examine_all = True
        # the loop ended: converged unless some example still violates KKT
        # (all of its steps were rejected by the eps test or eta <= 0)
        r = self.y * np.array([self.error(i) for i in range(n)])
        self.stalled = bool(np.any(((r < -self.tol) & (self.alpha < self.Cv))
                                   | ((r > self.tol) & (self.alpha > 0.0))))
        self.converged = not self.stalled

    def examine_example(self, i2):
        """Platt's examineExample: if i2 violates KKT within tol, look for a
        partner i1 (second-choice hierarchy) and return the step's record."""
        y2, alph2, C2 = self.y[i2], self.alpha[i2], self.Cv[i2]
        E2 = self.error(i2)
        r2 = E2 * y2
        if not ((r2 < -self.tol and alph2 < C2) or (r2 > self.tol and alph2 > 0.0)):
            return None  # KKT holds within tol
        if self.w is None:  # (the linear SMO reads no rows)  # [kkt-violated]
            self.row(i2)  # every candidate's K12 is in row i2  # [kkt-violated]
        nb = self.nonbound
        if len(nb) > 1:
            # 1) the non-bound i1 maximising |E1 - E2| (the first in list order)
            E = np.array([self.error(t) for t in nb])  # [heuristic-maxdiff]
            i1 = nb[int(np.argmax(np.abs(E - E2)))]  # [heuristic-maxdiff]
            if i1 != i2 and (record := self.take_step(i1, i2, "max|E1-E2|")):
                return record  # [heuristic-maxdiff]
        if len(nb) > 0:
            # 2) every non-bound example, from a random position of the list
            start = self.rng.next() % len(nb)  # [heuristic-nonbound]
            for k in range(len(nb)):
                i1 = nb[(start + k) % len(nb)]  # [heuristic-nonbound]
                if i1 != i2 and (record := self.take_step(i1, i2, "nonbound-scan")):
                    return record  # [heuristic-nonbound]
        # 3) every example, from a random start
        n = len(self.y)
        start = self.rng.next() % n  # [heuristic-full]
        for k in range(n):
            i1 = (start + k) % n  # [heuristic-full]
            if i1 != i2 and (record := self.take_step(i1, i2, "full-scan")):
                return record  # [heuristic-full]
        return None

    def take_step(self, i1, i2, heuristic):
        """Platt's takeStep: the analytic step on (alpha[i1], alpha[i2]); the
        record of the step, or None when it makes no progress."""
        C1, C2, eps = float(self.Cv[i1]), float(self.Cv[i2]), self.eps  # the pair's box
        alph1, alph2 = float(self.alpha[i1]), float(self.alpha[i2])
        y1, y2 = float(self.y[i1]), float(self.y[i2])
        E1, E2, b = float(self.error(i1)), float(self.error(i2)), self.b
        s = y1 * y2
        if y1 != y2:  # eq. 13  # [L-H-differ]
            L, H = max(0.0, alph2 - alph1), min(C2, C1 + alph2 - alph1)  # [L-H-differ]
        else:  # eq. 14  # [L-H-same]
            L, H = max(0.0, alph2 + alph1 - C1), min(C2, alph2 + alph1)  # [L-H-same]
        if L >= H:
            return None  # [L-equals-H]
        k11, k12, k22 = float(self.kdiag[i1]), float(self.K[i2, i1]), float(self.kdiag[i2])
        eta = k11 + k22 - 2.0 * k12  # eq. 15, opposite sign  # [eta]
        if eta > 0:
            a2_unc = alph2 + y2 * (E1 - E2) / eta  # eq. 16  # [eta-positive]
            if a2_unc < L:  # eq. 17  # [clip-L]
                a2 = L  # [clip-L]
            elif a2_unc > H:  # [clip-H]
                a2 = H  # [clip-H]
            else:
                a2 = a2_unc  # [interior]
        else:  # objective at both ends of the segment, eq. 19  # [eta-nonpositive]
            a2_unc = np.nan  # [eta-nonpositive]
            args = (y1, y2, alph1, alph2, E1, E2, b, k11, k12, k22)  # [eta-nonpositive]
            Lobj, Hobj = segment_gain(L, *args), segment_gain(H, *args)  # [eta-nonpositive]
            if Lobj > Hobj + eps:
                a2 = L  # [end-L]
            elif Lobj < Hobj - eps:
                a2 = H  # [end-H]
            else:
                a2 = alph2  # [ends-equal]
        if abs(a2 - alph2) < eps * (a2 + alph2 + eps):
            return None  # [eps-reject]
        a1 = alph1 + s * (alph2 - a2)  # eq. 18  # [a1]
        a1, a2 = snap(a1, C1), snap(a2, C2)  # [a1]
        # threshold, eqs. 20-21: b1 (b2) puts E1 (E2) at 0 after the step
        d1, d2 = y1 * (a1 - alph1), y2 * (a2 - alph2)  # [threshold]
        b1 = b - E1 - d1 * k11 - d2 * k12  # [threshold]
        b2 = b - E2 - d1 * k12 - d2 * k22  # [threshold]
        if 0.0 < a1 < C1:
            b_new = b1  # [b1]
        elif 0.0 < a2 < C2:
            b_new = b2  # [b2]
        else:
            b_new = 0.5 * (b1 + b2)  # [b-average]
        if self.w is None:  # error cache update (here f0 of every example)  # [update-f0]
            self.f0 += d1 * self.row(i1) + d2 * self.row(i2)  # [update-f0]
        else:  # the linear SMO folds w, eq. 22  # [update-w]
            self.w += d1 * self.X[i1]  # [update-w]
            self.w += d2 * self.X[i2]  # [update-w]
        self.alpha[i1], self.alpha[i2], self.b = a1, a2, b_new  # [update]
        for i, a in ((i1, a1), (i2, a2)):
            self.update_nonbound_list(i, 0.0 < a < self.Cv[i])  # [update]
        self.n_iter += 1
        gain = segment_gain(a2, y1, y2, alph1, alph2, E1, E2, b, k11, k12, k22)
        return SMOStep(
            iteration=self.n_iter, i1=int(i1), i2=int(i2), a1_old=alph1, a2_old=alph2,
            a1_new=a1, a2_new=a2, L=L, H=H, eta=eta, E1=E1, E2=E2, b_old=b, b_new=b_new,
            heuristic=heuristic, clipped=bool(eta <= 0 or a2_unc < L or a2_unc > H),
            a2_unclipped=a2_unc, y1=y1, y2=y2, examine_all=self.examine_all, K11=k11,
            K12=k12, K22=k22, delta_objective=gain, n_active=len(self.y),
            n_nonbound=len(self.nonbound), cache_hits=self.cache_hits,
            cache_misses=self.cache_misses, kernel_evaluations=self.cache_misses * len(self.y),
            C1=C1, C2=C2)

    def update_nonbound_list(self, i, inside):
        """Append i when it becomes non-bound; when it leaves, the last takes its place."""
        if inside and i not in self.nonbound:
            self.nonbound.append(i)
        elif not inside and i in self.nonbound:
            last = self.nonbound.pop()
            if last != i:
                self.nonbound[self.nonbound.index(i)] = last


def snap(a, C):
    """Rounding residue within 1e-12 C of a bound goes onto it (C: the example's own)."""
    return 0.0 if a < 1e-12 * C else C if a > C - 1e-12 * C else a


def segment_gain(a2_new, y1, y2, alph1, alph2, E1, E2, b, k11, k12, k22):
    """Increase of W when a2 moves to ``a2_new`` along the constraint line
    (eq. 19 up to sign and a constant); the gradient of W is -y_i (E_i - b)."""
    s, d2 = y1 * y2, a2_new - alph2
    d1 = -s * d2
    g1, g2 = -y1 * (E1 - b), -y2 * (E2 - b)
    quad = d1 * d1 * k11 + d2 * d2 * k22 + 2.0 * s * d1 * d2 * k12
    return g1 * d1 + g2 * d2 - 0.5 * quad


def smo(K, y, C, *, tol=1e-3, eps=1e-3, random_state=0, max_iter=-1, callback=None,
        kdiag=None, X=None):
    """Run Platt's SMO on the kernel matrix ``K``; returns :class:`SMOResult`
    (``alpha``, threshold ``b``, the ``records``, ``n_iter``, ``converged``).
    ``C``: a number or one bound per example.  ``eps=1e-3``: Platt's (SMOClassifier: 1e-6)."""
    run = PlattSMO(K, y, C, tol=tol, eps=eps, random_state=random_state, kdiag=kdiag, X=X)
    return drive(run, max_iter, callback)


def explain(record, C=None):
    """``[(function, tags)]``: the functions a recorded step ran and the tags
    of their branches it took, for :func:`svmlab.reference._source.source_html`.
    The record's own bounds ``C1, C2`` name the threshold rule exactly (or
    ``C``, for a record built without them); without either, the first of
    b1, b2, average whose formula gives ``b_new`` is named."""
    pick = {"max|E1-E2|": "heuristic-maxdiff", "nonbound-scan": "heuristic-nonbound",
            "full-scan": "heuristic-full"}
    if record.heuristic not in pick:
        raise ValueError(f"not a step of Platt's SMO: heuristic {record.heuristic!r}")
    loop = {"examine-all" if record.examine_all else "examine-nonbound"}
    return [(PlattSMO.main_loop, loop),
            (PlattSMO.examine_example, {"kkt-violated", pick[record.heuristic]}),
            (PlattSMO.take_step, take_step_tags(record, C))]
