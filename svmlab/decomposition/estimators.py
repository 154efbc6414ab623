"""The decomposition family: chunking (Vapnik) and Osuna/SVMlight decomposition.

Problem solved (the SVC dual of :mod:`svmlab._base`)::

    max_alpha  sum_i alpha_i - 1/2 sum_ij y_i y_j K(x_i, x_j) alpha_i alpha_j
    s.t.       0 <= alpha_i <= C,   sum_i y_i alpha_i = 0

Every member repeats: choose a working set B, solve the dual over B with the
other multipliers fixed (a sub-problem of the same form, see
:mod:`svmlab.decomposition._engines`), update ``G = K (alpha * y)`` with the rows of B.

=====================  ===========================  ==========================
method                 working set                  sub-problem engine
=====================  ===========================  ==========================
chunking (Vapnik;      every alpha_i > 0 plus the   ``"qp"`` (active-set QP)
Platt TR sec. 1.2)     M worst KKT violators
decomposition (Osuna   q samples along the          any of ``"qp"``,
1997; Joachims 1999)   steepest feasible direction  ``"irwls"``, ``"smo"``
SMO (Platt 1998)       q = 2, maximal violating     ``"smo"`` (one analytic
                       pair                         step: ``_pairstep``)
IRWLS-SVC (Perez-Cruz  section-3 selection          ``"irwls"`` (Table 1)
et al. 2000)           (:class:`svmlab.IRWLSClassifier`)
=====================  ===========================  ==========================

So ``DecompositionClassifier(working_set_size=2, engine="smo")`` *is* SMO
with LIBSVM's maximal-violating-pair selection, and
``DecompositionClassifier(engine="irwls")`` is the paper's Table 2
experiment (IRWLS inside SVMlight's decomposition).

``engine="smo"`` with a working set of more than two samples (the default
is 1024, see :meth:`DecompositionClassifier.blocked_default_ws`) is the
ThunderSVM / cuML scheme, :class:`BlockedDecompositionRun`
(:mod:`svmlab.decomposition._blocked`): LIBSVM's first-order ranking picks
q examples, half of them kept from the last step with their kernel rows;
the rows come as kernel blocks (one GEMM, float32 by default), an SMO with
WSS2 solves the sub-problem, and ``G`` is updated from the multipliers that
changed only.  It is svmlab's fastest kernel solver on large dense data
(MNIST, Fashion-MNIST, ijcnn1: see ``benchmarks/README.md``).  It does not
shrink (``shrinking`` is ignored on that path): ranking all n samples is
O(n) per outer step, small next to the rows.

Stopping rule (all members): the maximal violation
``max_{I_up} v - min_{I_low} v <= tol`` with ``v_i = y_i - (K beta)_i``
(LIBSVM's ``m(alpha) - M(alpha)``), which bounds every KKT violation by tol
for the intercept chosen as LIBSVM does (mean of v over free SVs).

Shrinking (decomposition): as in SVMlight, a multiplier at a bound whose
KKT condition has held (it could not enter a violating pair) for
``shrink_after`` consecutive steps leaves the selection; when the active set
is optimal every variable is restored and optimality is re-checked.  The
kernel cache keeps full rows, so ``G`` stays exact for every sample and
un-shrinking needs no gradient reconstruction.

Kernel values: chunking builds its sub-problem matrix ``K[B, B]`` from the
LRU cache's rows and, for rows not cached, from the kernel layer's blocks
(:meth:`svmlab.kernels.Kernel.block`, see ``DecompositionRun._chunk_block``);
the blocked path computes all of its rows as blocks.

One step (record) is one outer iteration: one sub-problem solved.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from numbers import Integral

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, StrOptions

from .._base import BaseKernelSVC
from ._blocked import (INNER_FRACTION, INNER_STEPS_PER_EXAMPLE, RowStore, add_changed_rows,
                       block_smo, gather_block, lowdim_working_set_size, select_working_set)
from ._engines import ENGINES, solve_subproblem
from ._kblock import add_rows, kernel_block_counted
from .._kkt import intercept, intercept_from_v, kkt_violation, up_low
from .._stepping import FitOptions, SolverRun
from ._working_set import break_cycle, chunk_select, steepest_feasible
from ..kernels.cache import KernelCache

__all__ = ["ChunkingClassifier", "DecompositionClassifier", "DecompositionRecord"]


def restore_equality(a_new, a_old, yB, C):
    """Put the working set back on the equality constraint
    ``sum_B y_i alpha_i = const`` when the engine's answer drifted from it.

    The engines keep the constraint to their own tolerance (the line-search
    mode accepts ``|sum beta - s0| <= 1e-9 (1 + C m)``), and the clip and
    snap to the box above add rounding of their own.  Drift beyond
    ``1e-12 (1 + min(max C, 1e6 max(1, max alpha)))`` is taken out of the free multipliers of the working
    set in equal shares (a projection onto the constraint along the free
    coordinates), clipped to the box, at most three times; smaller drift is
    left alone, so an exact engine answer is returned bit for bit.  Returns
    the corrected copy (or ``a_new`` itself)."""
    Cb = np.broadcast_to(np.asarray(C, dtype=float), a_new.shape)
    # the scale of the drift is the multipliers' own; C stands for it unless
    # it is far above them (a huge C: 1e-12 C would accept any drift)
    scale = max(1.0, float(a_new.max(initial=0.0)), float(a_old.max(initial=0.0)))
    limit = 1e-12 * (1.0 + min(float(Cb.max(initial=0.0)), 1e6 * scale))
    resid = float(yB @ a_new - yB @ a_old)
    if abs(resid) <= limit:
        return a_new
    a = a_new.copy()
    for _ in range(3):
        free = (a > 0.0) & (a < Cb)
        k = int(free.sum())
        if k == 0:
            break
        a[free] -= yB[free] * (resid / k)
        np.clip(a, 0.0, Cb, out=a)
        resid = float(yB @ a - yB @ a_old)
        if abs(resid) <= limit:
            break
    return a


@dataclass(frozen=True, slots=True)
class DecompositionRecord:
    """One outer step of chunking/decomposition.

    ``working_set`` global indices of B; ``subproblem_size`` = len(B);
    ``engine`` and ``engine_iterations`` (inner iterations of the engine);
    ``dual_objective`` W(alpha) after the step; ``max_violation`` the gap
    ``m - M`` before the step; ``n_active`` variables not shrunk;
    ``alpha_B`` the new multipliers of B; ``b`` the sub-problem's intercept;
    ``rows_computed`` the kernel rows computed in this step (the blocked
    ``engine="smo"`` path; None on the others).
    """

    iteration: int
    working_set: np.ndarray
    subproblem_size: int
    engine: str
    engine_iterations: int
    dual_objective: float
    max_violation: float
    n_active: int
    alpha_B: np.ndarray
    b: float
    rows_computed: int | None = None


class _OuterStepRun(SolverRun):
    """The stepping contract for runs whose ``_step_impl(make_record)``
    takes one outer step (a record, or None at the end)."""

    def _step(self):
        return self._step_impl(True)

    def _advance(self, max_steps):
        k = 0
        t0 = time.perf_counter()
        while k < max_steps:
            if self._step_impl(False) is None:
                break
            k += 1
            if self._chunk_should_end(t0):  # Ctrl-C within one step
                break
        return k


class DecompositionRun(_OuterStepRun):
    """State: alpha, ``G = K (alpha y)``, the active (unshrunk) set."""

    step_name = "outer step"
    #: small dense sub-problems: one BLAS thread (svmlab._stepping.blas_thread_limit)
    blas_threads = 1

    def __init__(self, est, X, y, kernel, scheme, q, engine, shrinking, opts):
        # opts: a svmlab._stepping.FitOptions (the run reads nothing of est,
        # which only receives the fitted attributes at finish)
        super().__init__(est, opts.max_iter, opts.progress)
        n = len(y)
        self.n, self.y = n, y
        self.n_samples = n
        self.C = float(opts.C)
        # the upper bounds: the scalar C, or per-example C_i = C * weight_i
        # when weights differ (numpy broadcasts either; see svmlab._base)
        self.Cb = opts.bounds(n)
        self.tol = float(opts.tol)
        self.scheme, self.q, self.engine, self.shrinking = scheme, q, engine, shrinking
        self.shrink_after = 100
        self.cache = KernelCache(kernel, opts.cache_size, dtype=opts.cache_dtype)
        self.kernel = kernel
        self.kd = kernel.data
        self.alpha = np.zeros(n)
        self.G = np.zeros(n)
        self.active = np.ones(n, bool)
        self.counter = np.zeros(n, np.int64)
        self.b = 0.0
        self._direct_evals = 0  # block entries computed outside the row cache
        self._recent = []  # the last two working sets (break_cycle)

    def dual_objective(self):
        return float(self.alpha.sum() - 0.5 * np.dot(self.alpha * self.y, self.G))

    def _chunk_block(self, B):
        """``K[B, B]`` of a chunking step (every support vector plus the M
        worst violators) as a float64 matrix for the engines: the rows of B
        held in the LRU cache are gathered from it; the others are full rows
        from the kernel layer (:meth:`svmlab.kernels.Kernel.block`, in the
        cache's dtype, at most 256 rows per block), of which the columns B
        are kept.  Decision: full rows rather than ``K[B_missing, B]``, so
        that with ``cache_dtype="float64"`` every entry is bit for bit the
        value of the row the cache would hold (a product over the subset
        sums in another order), and the fast path replays the readable
        reference exactly."""
        cd = self.cache.data
        slots = cd.slot_of[B]
        have = slots >= 0
        K = np.empty((len(B), len(B)))
        if have.any():
            K[have] = cd.rows[np.ix_(slots[have], B)]
        miss = np.flatnonzero(~have)
        n = len(self.y)
        for a in range(0, len(miss), 256):
            rows = miss[a:a + 256]
            K[rows] = self.kernel.block(B[rows], dtype=cd.rows.dtype)[:, B]
            self._direct_evals += len(rows) * n
        return K

    def _select(self, v):
        if self.scheme == "chunking":
            return chunk_select(v, self.y, self.alpha, self.Cb, self.q, self.tol)
        B, gap = steepest_feasible(v, self.y, self.alpha, self.Cb, self.q,
                                   self.active if self.shrinking else None)
        if gap <= self.tol and self.shrinking and not self.active.all():
            # optimal on the active set: restore everything, check again
            self.active[:] = True
            self.counter[:] = 0
            B, gap = steepest_feasible(v, self.y, self.alpha, self.Cb, self.q)
        if self.q > 2:
            B = break_cycle(B, self._recent)
            self._recent = (self._recent + [B])[-2:]
        return B, gap

    def _shrink(self, v):
        up, low = up_low(self.y, self.alpha, self.Cb)
        m_up = v[up].max() if up.any() else np.inf
        m_low = v[low].min() if low.any() else -np.inf
        # only-up samples below min_{I_low} v, only-low samples above
        # max_{I_up} v, cannot join a violating pair
        ok = (up & ~low & (v < m_low)) | (low & ~up & (v > m_up))
        self.counter = np.where(ok, self.counter + 1, 0)
        self.active &= ~(self.counter >= self.shrink_after)

    def _step_impl(self, make_record):
        y = self.y
        v = y - self.G
        B, gap = self._select(v)
        if gap <= self.tol:
            self.converged = True
            return None
        if len(B) < 2:
            # a violation above tol but no working set of two variables
            # along a feasible direction: no step possible
            self._mark_stalled(
                f"no working set of two or more variables could be selected while the "
                f"maximal violation is {gap:.3g} > tol")
            return None
        if self.scheme == "chunking":
            Kbb = self._chunk_block(B)
        else:
            Kbb, n_direct = kernel_block_counted(self.kd, self.cache.data, B, B)
            self._direct_evals += int(n_direct)
        aB = self.alpha[B]
        beta_B = y[B] * aB
        r = v[B] + Kbb @ beta_B  # = y_B - G_in
        # the working set's bounds: C, or its examples' own C_i
        C = self.Cb if np.ndim(self.Cb) == 0 else self.Cb[B]
        # a step to a bound of C = 1e300 overflows to inf (never reached),
        # which is the answer; the interpreted tier would warn about it
        with np.errstate(over="ignore"):
            a_new, b, n_inner = solve_subproblem(self.engine, Kbb, y[B], aB, r, C,
                                                 0.5 * self.tol)
        a_new = np.clip(a_new, 0.0, C)
        # rounding residue next to a bound is the bound: within 1e-12 C of
        # C, and within 1e-12 C of 0 unless C is far above the multipliers
        # (then 1e-6 of their magnitude: a band of 1e-12 C at 0 zeroed every
        # multiplier for C = 1e300; for C up to 1e6 max(1, alpha) the band
        # is the same as before, on which the engines' steps were tuned)
        snap = 1e-12 * C
        scale = max(1.0, float(aB.max(initial=0.0)), float(a_new.max(initial=0.0)))
        a_new[a_new < 1e-12 * np.minimum(C, 1e6 * scale)] = 0.0
        high = a_new > C - snap
        a_new[high] = C if np.ndim(C) == 0 else C[high]
        a_new = restore_equality(a_new, aB, y[B], C)
        d = y[B] * (a_new - aB)
        nz = d != 0.0
        if not nz.any():
            # the engine could not move (degenerate sub-problem, e.g. a
            # singular linear-kernel block): stop rather than spin, and say
            # so (a stall: finish() warns, converged_ stays False)
            self._mark_stalled(
                f"the {self.engine!r} engine made no progress on a working set while "
                f"the maximal violation is {gap:.3g} > tol (try engine='smo' or a "
                "larger working_set_size)")
            return None
        add_rows(self.kd, self.cache.data, self.G, B[nz], d[nz])
        self.alpha[B] = a_new
        self.b = b
        if self.shrinking and self.scheme == "decomposition":
            self._shrink(y - self.G)
        if not make_record:
            return True
        return DecompositionRecord(
            iteration=self.n_iter + 1,
            working_set=B.copy(),
            subproblem_size=len(B),
            engine=self.engine,
            engine_iterations=int(n_inner),
            dual_objective=self.dual_objective(),
            max_violation=gap,
            n_active=int(self.active.sum()),
            alpha_B=a_new.copy(),
            b=float(b),
        )

    def result(self):
        v = self.y - self.G
        b = intercept_from_v(v, self.y, self.alpha, self.Cb)
        return {"alpha": self.alpha.copy(), "intercept": b,
                "kernel_evaluations": self.cache.kernel_evaluations + self._direct_evals}


class BlockedDecompositionRun(_OuterStepRun):
    """The ThunderSVM-style blocked decomposition (:mod:`svmlab.decomposition._blocked`):
    ``DecompositionClassifier(engine="smo")`` with ``working_set_size > 2``.

    State: alpha, ``G = K (alpha y)`` (float64), the kept half of the last
    working set, the row store (``cache_dtype`` rows).  Every outer step is
    one :class:`DecompositionRecord`; the fast path runs the same
    :meth:`_step_impl` without building records, so both take the same
    steps."""

    step_name = "outer step"
    #: None here: :meth:`svmlab._base.BaseKernelSVC.start` sets ``n_jobs``
    #: threads (the row blocks are large GEMMs, which threads do speed up;
    #: the sub-problem is compiled code that calls no BLAS)
    blas_threads = None

    def __init__(self, est, X, y, kernel, q, opts):
        super().__init__(est, opts.max_iter, opts.progress)
        n = len(y)
        self.n, self.y = n, y
        self.n_samples = n
        self.q = int(min(q, n))
        self.half = max(self.q // 2, 1) if self.q < n else 0
        self.Cb = opts.bounds(n)
        self.Cv = np.ascontiguousarray(np.broadcast_to(np.asarray(self.Cb, float), (n,)))
        self.tol = float(opts.tol)
        dtype = opts.cache_dtype
        self.store = RowStore(kernel, n, float(opts.cache_size), self.q, dtype)
        self.alpha = np.zeros(n)
        self.G = np.zeros(n)
        self.keep_half = np.zeros(0, np.int64)
        self._clock = 0  # outer steps taken, for the row store's LRU stamps
        self.b = 0.0
        self.Kbb = np.empty((self.q, self.q))

    def dual_objective(self):
        return float(self.alpha.sum() - 0.5 * np.dot(self.alpha * self.y, self.G))

    def _step_impl(self, make_record):
        y, Cv = self.y, self.Cv
        v = y - self.G
        gap = float(kkt_violation(v, y, self.alpha, Cv))
        if gap <= self.tol:
            self.converged = True
            return None
        excl = np.zeros(self.n, bool)
        excl[self.keep_half] = True
        new = select_working_set(v, y, self.alpha, Cv, self.q - len(self.keep_half), excl)
        B = np.concatenate([self.keep_half, new])
        if len(B) < 2:
            self._mark_stalled(
                f"no working set of two or more variables could be selected while the "
                f"maximal violation is {gap:.3g} > tol")
            return None
        m = len(B)
        Kbb = self.Kbb[:m, :m]
        self._clock += 1
        self.store.block_BB(B, self._clock, Kbb)
        aB = self.alpha[B].copy()
        vB = v[B].copy()
        a_old = self.alpha[B]
        eps = max(self.tol, INNER_FRACTION * gap)
        n_inner, _, _ = block_smo(Kbb, y[B], aB, Cv[B], vB, eps,
                                  INNER_STEPS_PER_EXAMPLE * m)
        d = y[B] * (aB - a_old)
        nz = np.flatnonzero(d != 0.0)
        if len(nz) == 0:
            self._mark_stalled(
                f"the block SMO made no progress on a working set of {m} samples while "
                f"the maximal violation is {gap:.3g} > tol")
            return None
        # full rows only for the multipliers that changed (one block for
        # those not stored yet), then one pass over them for G
        slots, n_rows = self.store.fetch(B[nz], self._clock)
        add_changed_rows(self.store.buf, slots, np.ascontiguousarray(d[nz]), self.G)
        self.alpha[B] = aB
        self.b = float(intercept(vB, y[B], aB, Cv[B]))
        self.keep_half = B[m - self.half:] if self.half else np.zeros(0, np.int64)
        if not make_record:
            return True
        return DecompositionRecord(
            iteration=self.n_iter + 1,
            working_set=B.copy(),
            subproblem_size=m,
            engine="smo",
            engine_iterations=int(n_inner),
            dual_objective=self.dual_objective(),
            max_violation=gap,
            n_active=self.n,
            alpha_B=aB.copy(),
            b=self.b,
            rows_computed=int(n_rows),
        )

    def result(self):
        v = self.y - self.G
        b = intercept_from_v(v, self.y, self.alpha, self.Cb)
        return {"alpha": self.alpha.copy(), "intercept": b,
                "kernel_evaluations": self.store.rows_computed * self.n
                + self.store.block_entries,
                "kernel_rows": self.store.rows_computed}


class _DecompositionBase(BaseKernelSVC):
    _parameter_constraints = {
        **BaseKernelSVC._parameter_constraints,
        "working_set_size": [Interval(Integral, 2, None, closed="left"), None],
        "engine": [StrOptions(set(ENGINES))],
        "shrinking": ["boolean"],
    }
    _default_ws = 10

    def _ws(self, n):
        return min(self._default_ws, n) if self.working_set_size is None else int(self.working_set_size)

    def _check_extra(self, X, y):
        n = X.shape[0]
        ws = self.working_set_size
        if ws is not None and ws > n:
            raise ValueError(
                f"working_set_size={ws} is larger than the number of samples ({n}); "
                f"use a value in [2, n_samples] or None for the default "
                f"({self._default_ws})."
            )


class DecompositionClassifier(_DecompositionBase):
    """Osuna/SVMlight decomposition with a pluggable sub-problem engine.

    Parameters
    ----------
    C, kernel, gamma, degree, coef0 : as :class:`sklearn.svm.SVC`.
    tol : float, default=1e-3
        Stop when the maximal KKT violation ``m - M`` is <= tol.
    working_set_size : int or None, default=None
        q, the working-set size (None: 10, or n if smaller; on the blocked
        path :meth:`blocked_default_ws`, 1024).  q = 2 with ``engine="smo"``
        is SMO with the maximal violating pair.
    selection : {"auto", "steepest", "blocked"}, default="auto"
        How working sets follow one another.  ``"steepest"``: SVMlight's
        steepest feasible direction, a fresh working set each outer step
        (Osuna/Joachims; every engine); with q > 2, when the selection
        returns the set used two steps before, up to one sample (two sets
        alternating, a zig-zag along which the violation does not fall),
        the step takes the union of it and the previous set
        (:func:`svmlab.decomposition._working_set.break_cycle`).  ``"blocked"``: the ThunderSVM/cuML
        scheme, :class:`BlockedDecompositionRun`: half the working set and
        its kernel rows kept from the last outer step, the new rows as one
        kernel block, the sub-problem solved by SMO (needs ``engine="smo"``
        and q > 2).  ``"auto"``: ``"blocked"`` for ``engine="smo"`` with
        q > 2 (the fastest svmlab path on large dense data), else
        ``"steepest"``.  The live family explorer of notebook 06 uses
        ``"steepest"``, so that switching the engine changes only the
        sub-problem solver.
    engine : {"qp", "irwls", "smo"}, default="qp"
        Sub-problem solver (:mod:`svmlab.decomposition._engines`;
        :func:`svmlab.decomposition._blocked.block_smo` on the blocked path).
    shrinking : bool, default=True
        SVMlight's shrinking (not used by the blocked path).
    cache_size : float, default=200 (MB)
        The kernel row cache; on the blocked path the row store, which holds
        ``cache_size`` MB of full rows in ``cache_dtype`` but never fewer
        than q rows (its bound: ``max(cache_size MB, q n itemsize)``), plus
        a scratch block of at most 256 rows and the q x q sub-problem.
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
        :mod:`svmlab._base`).
    decision_function_shape : {"ovr", "ovo"}, default="ovr"
        With more than two classes (LIBSVM's one-vs-one, see
        :mod:`svmlab._multiclass`): ``"ovr"`` makes ``decision_function``
        return (n, k) values, ``"ovo"`` the (n, k(k-1)/2) pair values, as
        :class:`sklearn.svm.SVC`.  Ignored for two classes.
    max_iter : int, default=-1 (outer steps)
        -1 means the safeguard cap ``max(100_000_000, 100 * n_samples)``
        (see :mod:`svmlab._stepping`); an explicit value overrides it.  A
        working set on which the engine cannot move stops the fit as a
        stall (``converged_ = False``, ``stop_reason_ = "stalled"``,
        ConvergenceWarning).
    progress : bool, default=True
        tqdm progress bar for fits longer than 2 s (``SVMLAB_PROGRESS=0``
        turns all bars off).
    class_weight : dict, "balanced" or None, default=None
        Weight of each class, as :class:`sklearn.svm.SVC`: example i gets the
        upper bound ``C_i = C * class_weight[y_i] * sample_weight_i``
        (``fit(X, y, sample_weight=...)``); ``"balanced"`` is
        ``n / (k * count(y_i))`` over the k classes.  See :mod:`svmlab._base`
        (zero weights remove the example).

    Notes
    -----
    scikit-learn callbacks (``set_callbacks``, scikit-learn >= 1.9) get one
    task per outer step (:mod:`svmlab._stepping`).
    """

    def __init__(self, *, C=1.0, kernel="rbf", gamma="scale", degree=3, coef0=0.0, tol=1e-3,
                 working_set_size=None, engine="qp", shrinking=True, cache_size=200.0,
                 max_iter=-1, progress=True, class_weight=None, cache_dtype="auto",
                 n_jobs=None, selection="auto", decision_function_shape="ovr"):
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.tol = tol
        self.working_set_size = working_set_size
        self.engine = engine
        self.shrinking = shrinking
        self.cache_size = cache_size
        self.cache_dtype = cache_dtype
        self.n_jobs = n_jobs
        self.decision_function_shape = decision_function_shape
        self.max_iter = max_iter
        self.progress = progress
        self.class_weight = class_weight
        self.selection = selection

    _parameter_constraints = {
        **_DecompositionBase._parameter_constraints,
        "selection": [StrOptions({"auto", "steepest", "blocked"})],
    }

    def _check_extra(self, X, y):
        super()._check_extra(X, y)
        q = self.working_set_size
        if self.selection == "blocked" and (self.engine != "smo" or (q is not None and q <= 2)):
            raise ValueError(
                f"selection='blocked' needs engine='smo' and working_set_size > 2 (or None), "
                f"got engine={self.engine!r}, working_set_size={q!r}; use "
                f"selection='steepest' for SVMlight's selection with this engine.")

    #: default working-set size of the blocked path (``engine="smo"``)
    _default_blocked_ws = 1024

    def blocked_default_ws(self, n):
        """The blocked path's default working-set size for n samples: 1024
        (ThunderSVM's on a GPU, and the fastest of 256, 512 and 1024 on two
        cores, docs/decisions/26d08-blocked-decomposition.md), at most n,
        and at most half the rows that ``cache_size`` holds in
        ``cache_dtype``, so that rows outlive their working set (at least
        2)."""
        return _blocked_default_ws(type(self), self.cache_dtype_, self.cache_size, n)

    def _make_run(self, X, y, kernel, opts=None):
        # reads the options only (one-vs-one calls this while its fit runs)
        return decomposition_run(type(self), X, y, kernel,
                                 FitOptions.of(self) if opts is None else opts, estimator=self)


def decomposition_run(cls, X, y, kernel, o, estimator=None):
    """The run :meth:`DecompositionClassifier._make_run` makes for the class
    ``cls`` (its default working-set sizes) with the options ``o``: the
    blocked decomposition or SVMlight's; ``estimator`` None for a run made
    from a frozen problem (the SVM family's)."""
    n = len(y)
    q_user = o.working_set_size
    blocked = o.selection == "blocked" or (
        o.selection == "auto" and o.engine == "smo" and (q_user is None or q_user > 2))
    if blocked:
        if q_user is not None:
            q = int(q_user)
        else:
            q = (lowdim_working_set_size(n, X.shape[1], sp.issparse(X))
                 or _blocked_default_ws(cls, o.cache_dtype, o.cache_size, n))
        return BlockedDecompositionRun(estimator, X, y, kernel, q, o)
    ws = min(cls._default_ws, n) if q_user is None else int(q_user)
    return DecompositionRun(estimator, X, y, kernel, "decomposition", ws, o.engine,
                            o.shrinking, o)


def _blocked_default_ws(cls, cache_dtype, cache_size, n):
    """:meth:`DecompositionClassifier.blocked_default_ws` from its values."""
    item = np.dtype(cache_dtype).itemsize
    fit = int(float(cache_size) * (1 << 20) // (item * max(n, 1)))
    return max(2, min(cls._default_blocked_ws, n, fit // 2))


class ChunkingClassifier(_DecompositionBase):
    """Vapnik's chunking: each step solves the QP over every non-zero
    multiplier plus the ``working_set_size`` (M) worst KKT violators.

    Parameters as :class:`DecompositionClassifier`; ``working_set_size`` is
    M (None: 10, or n if smaller), ``engine`` defaults to ``"qp"``.
    """

    _default_ws = 10

    def __init__(self, *, C=1.0, kernel="rbf", gamma="scale", degree=3, coef0=0.0, tol=1e-3,
                 working_set_size=None, engine="qp", cache_size=200.0, max_iter=-1,
                 progress=True, class_weight=None, cache_dtype="auto", n_jobs=None,
                 decision_function_shape="ovr"):
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.tol = tol
        self.working_set_size = working_set_size
        self.engine = engine
        self.cache_size = cache_size
        self.cache_dtype = cache_dtype
        self.n_jobs = n_jobs
        self.decision_function_shape = decision_function_shape
        self.max_iter = max_iter
        self.progress = progress
        self.class_weight = class_weight

    _parameter_constraints = {
        k: v for k, v in _DecompositionBase._parameter_constraints.items() if k != "shrinking"
    }

    def _make_run(self, X, y, kernel, opts=None):
        o = FitOptions.of(self) if opts is None else opts
        n = len(y)
        ws = min(type(self)._default_ws, n) if o.working_set_size is None \
            else int(o.working_set_size)
        return DecompositionRun(self, X, y, kernel, "chunking", ws, o.engine, False, o)
