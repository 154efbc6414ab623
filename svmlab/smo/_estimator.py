"""Platt's Sequential Minimal Optimization (SMO), with step hooks.

Problem (Platt, MSR-TR-98-14, eq. 11; svmlab's sign convention, see
:mod:`svmlab.smo._pairstep`)::

    max_alpha  W(alpha) = sum_i alpha_i - 1/2 sum_ij y_i y_j K(x_i, x_j) alpha_i alpha_j
    s.t.       0 <= alpha_i <= C,    sum_i y_i alpha_i = 0,

with decision function ``f(x) = sum_i alpha_i y_i K(x_i, x) + b`` (``b`` is
``intercept_[0]``; Platt writes ``u = w.x - b``, eq. 10).  The optimum
satisfies the KKT conditions of TR eq. 12, checked within ``tol`` on
``y_i E_i`` with ``E_i = f(x_i) - y_i``.

Algorithm (TR section 2, pseudo-code in section 4 / Table 1):

* analytic step on two multipliers (eqs. 13-19): the segment ``[L, H]``
  (eq. 13 for ``y1 != y2``, eq. 14 for ``y1 == y2``), ``eta = K11 + K22 -
  2 K12`` (eq. 15 up to sign), ``a2_new = a2 + y2 (E1 - E2) / eta`` (eq. 16),
  clipped (eq. 17), ``a1`` from ``s = y1 y2`` (eq. 18); ``eta <= 0`` evaluates
  the objective at both ends (eq. 19).  Implemented once in
  :func:`svmlab.smo._pairstep.pair_step`;
* threshold after every step (eqs. 20, 21: b1, b2, their average when both
  multipliers end at a bound);
* first-choice heuristic (section 2.2): one pass over every example, then
  repeated passes over the non-bound ones, until every example obeys KKT
  within ``tol``; second choice: the non-bound example maximising
  ``|E1 - E2|``, then the non-bound examples from a random start, then the
  whole set from a random start;
* linear SVMs fold the weight vector ``w`` (section 2.4; eq. 22) and use sparse
  dot products instead of kernel rows (rows only over the non-bound examples
  during a parked phase, below);
* shrinking: the full passes (and the wss2 scans) visit only the "active"
  examples; an example at a bound that cannot be part of a violating pair is
  shrunk (Joachims 1999; LIBSVM's rule, Fan, Chen and Lin 2005 sec. 5,
  reconstructing the gradient once when the gap reaches ``10 tol``).  Platt's
  own passes over the non-bound subset are the same idea (NIPS 1999 paper,
  section 2), and svmlab takes it literally: during a run of those passes the
  examples at a bound are *parked* (no gradient updates, as Platt keeps
  errors for the non-bound examples only) and the non-bound ones are served
  by rows against a contiguous copy of their data, so a step costs
  O(#non-bound) instead of O(n); the parked examples' gradients are brought
  up to date before the next full pass.  Before convergence is declared
  every example is unshrunk and checked again (a final full pass).

Weights (``fit(X, y, sample_weight=...)``, ``class_weight``; LIBSVM's
meaning, see :mod:`svmlab._base`): example i has its own bound ``0 <=
alpha_i <= C_i``; every rule above reads ``C_i`` where it read C, a pair's
segment is cut from its box ``[0, C_i1] x [0, C_i2]`` and its records carry
``C1, C2``.  Without weights every ``C_i`` is C: the same steps.

``selection="wss2"`` replaces the heuristics by LIBSVM's second-order working
set selection (Fan, Chen and Lin 2005, WSS 2): ``i = argmax_{I_up} -y_t grad_t``,
``j = argmin_{t in I_low, -y_t grad_t < m} -(m + y_t grad_t)^2 / a_it``,
stopping when ``m - M <= tol``; it uses the same step, cache, shrinking and
records.  Its final intercept is LIBSVM's (mean over free SVs).
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions

from . import _core as core
from ._dual import DualState
from ._ovo import FastPairs
from ._records import R_BUFFER, SMOStep, decode_record, smo_step_of
from .._base import BaseKernelSVC
from .._stepping import FitOptions, SolverRun
from .._validation import RANDOM_STATE_CONSTRAINT
from ..kernels.cache import KernelCache, cache_from_buffer, new_cache

__all__ = ["SMOClassifier", "SMOStep", "SMORun"]

#: Memory (bytes) the error cache of Platt's linear SMO on binary inputs may
#: take for its feature-major copy of the non-bound rows (one byte per
#: feature and example, allocated for every example: 15 MB for w8a).  Above
#: it, the full passes take each non-bound error from ``w`` (a sparse dot
#: product), as for other inputs: same algorithm, slower steps.
ERROR_CACHE_BYTES = 1 << 26


#: seeds drawn for integer ``random_state`` values (see :func:`_seed_from`)
_SEEDS: dict = {}


def _seed_from(random_state):
    """The loop's seed: ``check_random_state(random_state).randint(1,
    2147483646)``.  For an integer ``random_state`` that number is always
    the same, so it is drawn once and remembered (seeding a RandomState is
    a sizeable part of a small fit: docs/decisions/26s06-chunks-and-seeds.md);
    None and RandomState instances are drawn from every time."""
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        key = int(random_state)
        seed = _SEEDS.get(key)
        if seed is None:
            seed = int(check_random_state(random_state).randint(1, 2147483646))
            if len(_SEEDS) < 1024:
                _SEEDS[key] = seed
        return seed
    return int(check_random_state(random_state).randint(1, 2147483646))


PLATT, WSS2 = 0, 1


def smo_run(X, y, kernel, o, estimator=None, name="SMOClassifier"):
    """The :class:`SMORun` over ``(X, y)`` (``y`` in {-1, +1}) and ``kernel``
    with the options ``o`` (a :class:`svmlab._stepping.FitOptions`, its
    ``cache_dtype`` resolved): what :meth:`SMOClassifier._make_run` makes,
    without an estimator (the SVM family builds its runs from its frozen
    problem; ``name`` is then what the run's messages call the solver).
    ``estimator`` given: the run names and stores into it."""
    # only Platt's loop draws from the seed (its second-choice loops'
    # random starts); wss2 takes none, so none is drawn (with
    # random_state=None that was a draw from NumPy's global state per
    # one-vs-one pair)
    seed = _seed_from(o.random_state) if o.selection != "wss2" else 0
    return SMORun(estimator, X, y, kernel, C=o.C, tol=o.tol, eps=o.eps,
                  cache_size=o.cache_size, shrinking=o.shrinking,
                  selection=o.selection, seed=seed, max_iter=o.max_iter,
                  progress=o.progress, Cv=o.Cv, cache_dtype=o.cache_dtype,
                  name=None if estimator is not None else name)


class SMORun(SolverRun):
    """Explicit SMO state (all arrays), advanced by Platt's compiled loop
    (:func:`svmlab.smo._platt.platt_run`) or, for ``selection="wss2"``, by
    the generalised dual's (:func:`svmlab.smo._dual_core.dual_run`, the C-SVC
    problem ``p = -1``, through a :class:`svmlab.smo._dual.DualState`)."""

    step_name = "joint step"
    #: a scikit-learn callback task (block) is 1000 joint steps: a step costs
    #: microseconds, and fits take up to millions of them (svmlab._stepping)
    steps_per_task = 1000

    def __init__(self, estimator, X, y, kernel, *, C, tol, eps, cache_size, shrinking,
                 selection, seed, max_iter, progress, Cv=None, full_kernel=False,
                 cache_dtype="float64", name=None):
        super().__init__(estimator, max_iter=max_iter, progress=progress, name=name)
        n = X.shape[0]
        self.n_samples = n
        self.X = X  # only read by the final KKT check of Platt's mode (linear kernel)
        self.kernel = kernel
        self.linear = kernel.kernel == "linear"
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        self.C = float(C)
        # per-example upper bounds C_i = C * weight_i (LIBSVM's weighted
        # C-SVC); all C without weights (the same iterates as a scalar C)
        if Cv is None:
            self.Cv = np.full(n, self.C)
        else:
            self.Cv = np.ascontiguousarray(Cv, dtype=np.float64)
            if self.Cv.shape != (n,):
                raise ValueError(f"Cv has shape {self.Cv.shape}, expected ({n},)")
        self.tol = float(tol)
        self.selection = WSS2 if selection == "wss2" else PLATT
        # wss2 takes every improving step (Platt's relative step test would
        # stall it), so only Platt's mode uses eps
        self.eps = float(eps) if self.selection == PLATT else 1e-12
        self.shrinking = bool(shrinking)
        self.shrink_every = int(min(n, 1000))
        # Platt's linear SMO folds w and caches no full rows; a parked phase
        # caches rows against its layout in the same memory
        self.e_from_w = self.linear and self.selection == PLATT
        # cache rows of cache_dtype (float32: LIBSVM's Qfloat, twice the
        # rows); the parked phases' compact cache views the same memory, so
        # it has the same dtype (the loop reads either); full_kernel: the
        # whole matrix at once (the caller checks it fits)
        cdt = np.dtype(cache_dtype)
        self.cache = KernelCache(kernel, cache_size if not self.e_from_w else 1e-9, dtype=cdt,
                                 full=bool(full_kernel) and not self.e_from_w)
        self.kd = kernel.data  # with the float32 copy of dense X when cdt is float32
        self.cd = self.cache.data
        self.rec = np.zeros(R_BUFFER)
        self._empty_rec = np.zeros(R_BUFFER)
        if self.selection == WSS2:
            self._init_dual()
            self.kdiag = self.dual.kdiag  # the same K_ii (identity map), made once
        else:
            self.kdiag = np.ascontiguousarray(kernel.diag(), dtype=np.float64)
            self._init_platt(n, seed, cache_size, cdt)

    def _init_dual(self):
        """The C-SVC problem of the dual loop (``p = -1``, ``v = y``), whose
        arrays this run shares."""
        # one bound for every example: the scalar (the loop gets the same
        # (n,) values, made without the array path's broadcast and copy)
        uniform = bool(np.all(self.Cv == self.C))
        d = DualState(self.kernel, self.y, -1.0, self.C if uniform else self.Cv,
                      tol=self.tol, cache=self.cache, shrinking=self.shrinking, eps=self.eps,
                      check=False)
        self.dual = d
        self.alpha, self.G, self.Gbar, self.fst, self.ist = d.alpha, d.G, d.Gbar, d.fst, d.ist
        self.active, self.act, self.full, self.rowfull = d.active, d.act, d.full, d.rowfull

    def _init_platt(self, n, seed, cache_size, cdt):
        self.dual = None
        # the loop's switches: float32 block paths (a feature switch,
        # svmlab.smo._core) and the folded linear kernel (a runtime bool)
        self._switches = (core.blocks_switch(self.kd, self.cd), bool(self.linear))
        self._buf = self.cd.rows.reshape(-1)
        if self.e_from_w and self.shrinking:
            self._buf = np.empty(int(cache_size * (1 << 20)) // cdt.itemsize, dtype=cdt)
        self.kdL = self.kd  # placeholder until a parked phase
        self.kdL0 = self.kd
        self.cdL = new_cache(1, 1e-9, row_len=1, dtype=cdt)
        self.layout_size = 0
        self._compact_counts = [0, 0, 0]  # hits, misses, kernel values of past phases
        self._miss_base = 0  # misses of the phase before its layout last changed
        self.pos = np.full(n, -1, dtype=np.int64)
        self.pos0 = np.full(n, -1, dtype=np.int64)
        self.aref = np.zeros(n)
        # a parked phase's layout, in layout order: example, F = G - y, and
        # 0 if non-bound, inf at a bound (see svmlab.smo._platt._park)
        self.lay = np.zeros(n, dtype=np.int64)
        self.FL = np.zeros(n)
        self.BL = np.zeros(n)
        # Platt's error cache of the full passes for binary inputs with the
        # linear kernel (see svmlab.smo._platt): E - b of the non-bound
        # examples, in the order of the non-bound list, and their features
        # (nbf[f, k], one byte each: only while that fits ERROR_CACHE_BYTES,
        # else E comes from w like for other inputs)
        d_bits = 64 * self.kd.brows.shape[1]
        bin_ec = (self.e_from_w and self.kd.binary and d_bits * n <= ERROR_CACHE_BYTES)
        self.EF = np.zeros(n if bin_ec else 0)
        self.nbf = np.zeros((d_bits, n) if bin_ec else (0, 0), dtype=np.uint8)
        self.cnt = np.zeros((2, n if bin_ec else 0), dtype=np.int32)
        self.alpha = np.zeros(n)
        self.G = np.zeros(n)
        self.Gbar = np.zeros((2, n if not self.e_from_w else 0))
        self.w = np.zeros(self.kernel.n_features if self.linear else 0)
        self.active = np.ones(n, dtype=np.int8)  # ACTIVE/SHRUNK/PARKED (svmlab.smo._core)
        self.act = np.arange(n, dtype=np.int64)
        self.ist = np.zeros(core.IS_SIZE, dtype=np.int64)
        self.ist[core.IS_EXAMINE_ALL] = 1
        self.ist[core.IS_N_ACTIVE] = n
        self.ist[core.IS_SHRINK_COUNTER] = self.shrink_every
        self.ist[core.IS_RNG] = int(seed)
        self.nbi = np.zeros(n, dtype=np.int64)
        self.nbp = np.full(n, -1, dtype=np.int64)
        self.plist = np.zeros(n, dtype=np.int64)
        self.full = np.zeros(n if not self.e_from_w else 0)
        # which cached rows were computed with every entry (svmlab.smo._core.fetch_row)
        self.rowfull = np.zeros(n, dtype=np.bool_)
        if self.cache.full:
            self.rowfull[:] = True  # every row is cached, every entry valid
        self.fst = np.zeros(core.FS_SIZE)

    def _call(self, kmax, want_rec):
        if self.dual is not None:
            total = self.dual.advance(kmax, want_rec)
        else:
            # platt_run returns early when a parked phase begins (build its
            # layout data, then go on) or ends (go on in full mode)
            from . import _platt as platt  # Platt's loop only: not on a wss2 fit's path

            total = 0
            while total < kmax and self.ist[core.IS_DONE] == 0:
                if self.ist[core.IS_REQUEST]:
                    self._new_layout()
                total += int(platt.platt_run(*self._platt_state(want_rec), int(kmax - total),
                                             *self._switches))
        if self.ist[core.IS_DONE] != 0 and not (self.converged or self.stalled):
            self._end_of_run()
        return total

    def _platt_state(self, want_rec):
        """The named state :func:`svmlab.smo._platt.platt_run` takes, over
        this run's arrays (the tuples only name them; rebuilt per call, as a
        parked phase replaces ``kdL``/``kdL0``/``cdL``), and the record buffer."""
        from . import _platt as platt

        return (platt.KernelSide(self.kd, self.cd, self.kdL, self.kdL0, self.cdL, self.full,
                                 self.rowfull),
                platt.Problem(self.y, self.Cv, self.kdiag, self.tol, self.eps),
                platt.Iterate(self.alpha, self.G, self.Gbar, self.w, self.fst, self.ist),
                platt.PlattLists(self.active, self.act, self.nbi, self.nbp, self.plist),
                platt.Layout(self.pos, self.pos0, self.aref, self.lay, self.FL, self.BL),
                platt.ErrorCache(self.EF, self.nbf, self.cnt),
                self.rec if want_rec else self._empty_rec,
                platt.Options(self.shrinking, self.shrink_every, bool(want_rec)))
    def kkt_violators(self):
        """Examples violating Platt's KKT conditions (TR eq. 12) by more than
        ``tol``: ``y_i E_i < -tol`` with ``alpha_i < C_i`` or ``y_i E_i > tol``
        with ``alpha_i > 0``, ``E_i = f(x_i) - y_i``.  Returns ``(mask, r)``
        with ``r = y E``.  ``f`` comes from the solver's gradient (non-linear
        kernels; every example is active and up to date at the end) or from
        the folded ``w`` (the linear kernel), i.e. the values the solver's
        own KKT test used; a relative slack of 1e-9 absorbs the different
        summation order of ``X @ w``."""
        if self.e_from_w:
            f0 = np.asarray(self.X @ self.w).ravel()
        else:
            f0 = self.G
        r = self.y * (f0 + self.b - self.y)
        slack = self.tol * (1.0 + 1e-9) + 1e-12
        mask = ((r < -slack) & (self.alpha < self.Cv)) | ((r > slack) & (self.alpha > 0.0))
        return mask, r

    def _end_of_run(self):
        """``ist[IS_DONE]`` became nonzero: decide, honestly, how the run ended.

        wss2: 1 means ``m - M <= tol`` (converged); 2 means a violating pair
        exists on which no step is possible (stalled).  Platt's loop ends
        when a full pass over every example changes nothing, which is
        convergence only if no example violates KKT by more than ``tol``; an
        example can violate it while all its pair steps are rejected (a
        change below Platt's ``eps``, or ``eta <= 0`` with equal objective at
        both ends): that is a stall, and says so."""
        if self.ist[core.IS_DONE] == 2:
            self._mark_stalled(
                "the second-order working-set selection found a violating pair on "
                "which the analytic step cannot move (eta <= 0, or a change below "
                "rounding)")
            return
        if self.selection == PLATT:
            mask, r = self.kkt_violators()
            if mask.any():
                worst = float(np.max(np.abs(r[mask])))
                self._mark_stalled(
                    f"Platt's loop ended (a full pass changed nothing) with "
                    f"{int(mask.sum())} examples violating the KKT conditions by up to "
                    f"|y E| = {worst:.3g} > tol={self.tol:g}, every pair step for them "
                    f"rejected (a change below eps={self.eps:g}, or eta <= 0 with equal "
                    "ends). Pass a smaller eps, or selection='wss2'")
                return
        self.converged = True

    def _new_layout(self):
        """A parked phase began (see :func:`svmlab.smo._platt._park`): copy the
        layout's rows contiguously and set up the compact cache over them,
        in the memory of the (emptied) full-row cache.  Or its layout was
        compacted (:func:`svmlab.smo._platt._repark`, which moved the cached rows to
        the new row length in the same memory): copy the new layout's rows
        and view the cache memory with the new row length."""
        misses = int(self.cdL.meta[4])
        self._compact_counts[2] += (misses - self._miss_base) * self.layout_size
        m = int(self.ist[core.IS_LAYOUT])
        self.kdL = self.kernel.subset_data(self.lay[:m].copy())
        n = self.alpha.shape[0]
        if self.ist[core.IS_REQUEST] == 1:
            self._compact_counts[0] += int(self.cdL.meta[3])
            self._compact_counts[1] += misses
            self.kdL0 = self.kdL
            slots = int(min(max(self._buf.shape[0] // m, 2), n))
            if slots * m > self._buf.shape[0]:
                self._buf = np.empty(slots * m, dtype=self._buf.dtype)
            self.cdL = cache_from_buffer(self._buf[:slots * m].reshape(slots, m), n)
            self._miss_base = 0
        else:
            slots = self.cdL.rows.shape[0]
            self.cdL = self.cdL._replace(rows=self._buf[:slots * m].reshape(slots, m))
            self._miss_base = misses
        self.layout_size = m
        self.ist[core.IS_REQUEST] = 0

    @property
    def cache_hits(self):
        if self.dual is not None:
            return self.cache.hits
        return self.cache.hits + self._compact_counts[0] + int(self.cdL.meta[3])

    @property
    def cache_misses(self):
        if self.dual is not None:
            return self.cache.misses
        return self.cache.misses + self._compact_counts[1] + int(self.cdL.meta[4])

    @property
    def kernel_evaluations(self):
        """Kernel values computed for cached rows: full rows (n values, fewer
        while examples are shrunk) and rows against a parked phase's layout."""
        if self.dual is not None:
            return self.cache.kernel_evaluations
        full = 0 if self.e_from_w else self.cache.kernel_evaluations
        return (full + self._compact_counts[2]
                + (int(self.cdL.meta[4]) - self._miss_base) * self.layout_size)

    @property
    def first_chunk(self):
        """The first fast-path chunk.  wss2: about 2**22 / n joint steps (at
        least 64): a step costs O(n), so the chunk lasts tens of
        milliseconds at most and a small fit is one call of the compiled
        loop (chunk boundaries never change the iterates).  Platt's mode:
        64, as every solver: one of its joint steps can follow many rejected
        examinations, so its cost is not bounded by O(n), and Ctrl-C waits
        for the chunk in flight (docs/decisions/26s06-chunks-and-seeds.md)."""
        if self.selection != WSS2:
            return 64
        return max(64, (1 << 22) // max(int(self.n_samples), 1))

    @property
    def chunk_growth(self):
        """wss2 chunks far below the target duration grow 8-fold (same
        reason as :attr:`first_chunk`); Platt's double."""
        return 8 if self.selection == WSS2 else 2

    def _advance(self, max_steps):
        return self._call(max_steps, False)

    def run(self, chunk=20000, tasks=None):
        return super().run(chunk=chunk, tasks=tasks)

    def _step(self):
        if self._call(1, True) == 0:
            return None
        counts = dict(cache_hits=self.cache_hits, cache_misses=self.cache_misses,
                      kernel_evaluations=self.kernel_evaluations)
        if self.dual is not None:
            return smo_step_of(self.dual.decode(**counts))
        return decode_record(self.rec, True, **counts)

    @property
    def b(self):
        return float(self.fst[core.FS_B])

    def intercept(self):
        """LIBSVM's intercept (mean over the free SVs, else the midpoint) in
        wss2 mode; Platt's running threshold ``b`` in Platt's mode."""
        if self.dual is not None:
            return -self.dual.intercepts()[0]
        return self.b

    def result(self):
        return {
            "alpha": self.alpha.copy(),
            "intercept": self.intercept(),
            "cache_hits": self.cache_hits,
            "cache_misses": self.cache_misses,
            "kernel_evaluations": self.kernel_evaluations,
        }


class SMOClassifier(BaseKernelSVC):
    """Platt's SMO (1998) for the soft-margin SVM dual, with step hooks.

    Solves (Platt, MSR-TR-98-14, eq. 11)::

        max_alpha  sum_i alpha_i - 1/2 sum_ij y_i y_j K(x_i, x_j) alpha_i alpha_j
        s.t.       0 <= alpha_i <= C,   sum_i y_i alpha_i = 0

    by Platt's analytic two-multiplier steps (eqs. 13-19) with the threshold
    rules of eqs. 20-21, his first/second-choice heuristics (section 2.2),
    weight folding for the linear kernel (section 2.4) and shrinking with a
    final unshrunk check.  ``selection="wss2"`` uses LIBSVM's second-order
    working-set selection instead (Fan, Chen and Lin, JMLR 2005).  See
    :mod:`svmlab.smo._estimator` for the details, :mod:`svmlab.smo._platt` and
    :mod:`svmlab.smo._dual_core` for the bookkeeping of the two compiled
    loops (full gradient for non-linear kernels, folded ``w`` for Platt's
    linear one).

    Parameters
    ----------
    C : float, default=1.0
        Box constraint (> 0).
    kernel : {"rbf", "linear", "poly", "sigmoid"}, default="rbf"
    gamma : float or {"scale", "auto"}, default="scale"
    degree : int, default=3
    coef0 : float, default=0.0
        Kernel parameters, same meaning as in :class:`sklearn.svm.SVC`.
    tol : float, default=1e-3
        Platt mode: KKT tolerance on ``y_i E_i`` (Platt's ``tol``).  wss2 mode:
        LIBSVM's stopping tolerance on ``m(alpha) - M(alpha)``.
    eps : float, default=1e-6
        Platt's ``eps``: a step that changes ``a2`` by less than
        ``eps (a2 + a2_new + eps)`` counts as no progress, and the ends of the
        segment are "equal" within ``eps`` when ``eta <= 0``.  Platt mode only.
        Platt's code used ``eps=1e-3``; with it the loop can end while some
        examples still violate KKT by several ``tol`` (their steps are all
        rejected as too small), so svmlab defaults to ``1e-6``.  Pass
        ``eps=1e-3`` to reproduce Platt exactly.
    cache_size : float, default=40
        Kernel-row cache in MB (Platt's experiments used 40 MB).  During a
        parked phase the same memory holds rows over the non-bound examples.
        With the linear kernel, Platt's selection folds ``w`` and uses the
        cache only in parked phases; wss2 needs the row of its first index
        at every step, so it caches rows (and keeps the gradient) for every
        kernel, the folded ``w`` besides.
    cache_dtype : {"auto", "float32", "float64"}, default="auto"
        Type of the cached kernel values (LIBSVM's ``Qfloat``): float32 holds
        twice as many rows in ``cache_size`` and computes dense rows with
        single-precision BLAS; ``"float64"`` keeps float64 kernel values (the
        precision of each path: :mod:`svmlab.kernels._blocks`).  ``"auto"``: float32 unless the whole
        kernel matrix fits in ``cache_size`` at float64 (then every row is
        computed once, and float64 costs nothing); the choice made is
        ``cache_dtype_`` (see :mod:`svmlab._base`).
    n_jobs : int or None, default=None
        BLAS threads for large kernel blocks (``None``: 1 unless in a
        ``joblib.parallel_config`` context; -1: all cores; see
        :mod:`svmlab._base`); with more than two classes, the one-vs-one
        pairs trained at once, in threads (:mod:`svmlab._multiclass`; the
        same model for any value).
    decision_function_shape : {"ovr", "ovo"}, default="ovr"
        With more than two classes (LIBSVM's one-vs-one, see
        :mod:`svmlab._multiclass`): ``"ovr"`` makes ``decision_function``
        return (n, k) values, ``"ovo"`` the (n, k(k-1)/2) pair values, as
        :class:`sklearn.svm.SVC`.  Ignored for two classes.
    shrinking : bool, default=True
        LIBSVM's shrinking, and parked phases when the cache cannot hold
        every row (see :mod:`svmlab.smo._estimator`).  ``False`` runs Platt's loops on
        every example throughout.
    selection : {"platt", "wss2"}, default="platt"
    max_iter : int, default=-1
        Maximum number of successful joint steps.  -1 means the safeguard
        cap, ``max(100_000_000, 100 * n_samples)`` steps
        (:func:`svmlab._stepping.iteration_cap`); an explicit value overrides
        it.  Hitting either stops cleanly with a ConvergenceWarning.
    random_state : int, RandomState or None
        Seeds the random start positions of Platt's second-choice loops.
    progress : bool, default=True
        tqdm progress bar for fits longer than 2 s.
    class_weight : dict, "balanced" or None, default=None
        Weight of each class, as :class:`sklearn.svm.SVC`: example i gets the
        upper bound ``C_i = C * class_weight[y_i] * sample_weight_i``
        (``fit(X, y, sample_weight=...)``); ``"balanced"`` is
        ``n / (k * count(y_i))`` over the k classes.  See :mod:`svmlab._base` (zero weights
        remove the example).

    Attributes
    ----------
    alpha_, intercept_, support_, support_vectors_, dual_coef_, n_support_,
    coef_ (linear kernel), n_iter_ (successful joint steps), converged_,
    stop_reason_, gamma_, classes_, class_weight_, cache_hits_, cache_misses_,
    kernel_evaluations_.

    Honest stops
    ------------
    ``converged_`` is True only when the stopping rule holds: in wss2 mode
    ``m - M <= tol``; in Platt's mode the loop's end (a full pass that
    changes nothing) *and* no example violating KKT by more than ``tol``
    (checked on the final state).  When no pair can move although KKT does
    not hold (wss2's stalled state; Platt's steps all rejected by ``eps`` or
    by ``eta <= 0`` with a non-PSD kernel or duplicate points) the fit
    stops with ``converged_ = False``, ``stop_reason_ = "stalled"`` and a
    ConvergenceWarning saying what to try.  Ctrl-C during ``fit`` completes
    the compiled chunk in flight (at most 20000 steps, sized to last about
    0.25 s) and returns the feasible model reached, with a warning
    (``stop_reason_ = "interrupted"``); see :mod:`svmlab._stepping`.

    Step hooks
    ----------
    ``fit(X, y, callback=f)`` calls ``f(record)`` with an :class:`SMOStep`
    after every successful joint step; ``f`` returning False stops with a
    feasible model.  ``iter_fit(X, y)`` yields the records lazily and
    ``start(X, y)`` returns the :class:`SMORun` state whose ``step()``
    advances one step at a time.  All use the same compiled function as the
    fast path and visit the same pairs.

    scikit-learn callbacks (scikit-learn >= 1.9):
    ``SMOClassifier().set_callbacks(ProgressBar())``; one callback task per
    block of ``SMORun.steps_per_task = 1000`` joint steps (the compiled
    chunks are cut at block boundaries; same iterates); svmlab's tqdm bar is
    then off.  See :mod:`svmlab._stepping`.

    Multi-class
    -----------
    This estimator is binary (as Platt's SMO).  For several classes wrap it::

        from sklearn.multiclass import OneVsOneClassifier, OneVsRestClassifier
        OneVsOneClassifier(SMOClassifier(C=10, gamma=0.1)).fit(X, y)   # LIBSVM's scheme
        OneVsRestClassifier(SMOClassifier(kernel="linear")).fit(X, y)

    Passing more than two classes directly raises a ValueError saying so.

    scikit-learn compatibility
    --------------------------
    ``sklearn.utils.estimator_checks.check_estimator`` passes without
    exceptions (see ``tests/test_smo_sklearn.py``); the estimator declares
    itself binary-only through its tags, so the multi-class checks expect the
    ValueError above.
    """

    _parameter_constraints: dict = {
        **BaseKernelSVC._parameter_constraints,
        **RANDOM_STATE_CONSTRAINT,
        "eps": [Interval(Real, 0.0, None, closed="left")],
        "shrinking": ["boolean"],
        "selection": [StrOptions({"platt", "wss2"})],
    }

    def __init__(self, *, C=1.0, kernel="rbf", gamma="scale", degree=3, coef0=0.0, tol=1e-3,
                 eps=1e-6, cache_size=40, shrinking=True, selection="platt", max_iter=-1,
                 random_state=None, progress=True, class_weight=None, cache_dtype="auto",
                 n_jobs=None, decision_function_shape="ovr"):
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.tol = tol
        self.eps = eps
        self.cache_size = cache_size
        self.cache_dtype = cache_dtype
        self.n_jobs = n_jobs
        self.decision_function_shape = decision_function_shape
        self.shrinking = shrinking
        self.selection = selection
        self.max_iter = max_iter
        self.random_state = random_state
        self.progress = progress
        self.class_weight = class_weight

    def _make_run(self, X, y, kernel, opts=None):
        """The run over ``(X, y)`` with the options ``opts`` (a
        :class:`svmlab._stepping.FitOptions`; None: this estimator's, once
        ``start`` resolved ``cache_dtype_`` and the bounds)."""
        return smo_run(X, y, kernel, FitOptions.of(self) if opts is None else opts,
                       estimator=self)


# the one-vs-one fast path of SMO's WSS 2 pairs (svmlab.smo._ovo): carried by
# the run makers, so the shared one-vs-one run finds it without importing
# this room (svmlab._multiclass reads ``make_run.ovo_fast_path``)
smo_run.ovo_fast_path = FastPairs(SMORun)
SMOClassifier._make_run.ovo_fast_path = smo_run.ovo_fast_path
