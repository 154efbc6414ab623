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

One step (record) is one outer iteration: one sub-problem solved.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from .._base import BaseKernelSVC, example_bounds
from ._engines import ENGINES, add_rows, kernel_block_counted, solve_subproblem
from .._kkt import intercept_from_v, up_low
from .._stepping import SolverRun
from ._working_set import chunk_select, steepest_feasible
from ..kernels.cache import KernelCache

__all__ = ["ChunkingClassifier", "DecompositionClassifier", "DecompositionRecord"]


@dataclass(frozen=True, slots=True)
class DecompositionRecord:
    """One outer step of chunking/decomposition.

    ``working_set`` global indices of B; ``subproblem_size`` = len(B);
    ``engine`` and ``engine_iterations`` (inner iterations of the engine);
    ``dual_objective`` W(alpha) after the step; ``max_violation`` the gap
    ``m - M`` before the step; ``n_active`` variables not shrunk;
    ``alpha_B`` the new multipliers of B; ``b`` the sub-problem's intercept.
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


class DecompositionRun(SolverRun):
    """State: alpha, ``G = K (alpha y)``, the active (unshrunk) set."""

    step_name = "outer step"
    #: small dense sub-problems: one BLAS thread (svmlab._stepping.blas_thread_limit)
    blas_threads = 1

    def __init__(self, est, X, y, kernel, scheme, q, engine, shrinking):
        super().__init__(est, est.max_iter, est.progress)
        n = len(y)
        self.n, self.y = n, y
        self.n_samples = n
        self.C = float(est.C)
        # the upper bounds: the scalar C, or per-example C_i = C * weight_i
        # when weights differ (numpy broadcasts either; see svmlab._base)
        self.Cb = example_bounds(est, n)
        self.tol = float(est.tol)
        self.scheme, self.q, self.engine, self.shrinking = scheme, q, engine, shrinking
        self.shrink_after = 100
        self.cache = KernelCache(kernel, est.cache_size)
        self.kd = kernel.data
        self.alpha = np.zeros(n)
        self.G = np.zeros(n)
        self.active = np.ones(n, bool)
        self.counter = np.zeros(n, np.int64)
        self.b = 0.0
        self._direct_evals = 0  # block entries computed outside the row cache

    def dual_objective(self):
        return float(self.alpha.sum() - 0.5 * np.dot(self.alpha * self.y, self.G))

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
        Kbb, n_direct = kernel_block_counted(self.kd, self.cache.data, B, B)
        self._direct_evals += int(n_direct)
        aB = self.alpha[B]
        beta_B = y[B] * aB
        r = v[B] + Kbb @ beta_B  # = y_B - G_in
        # the working set's bounds: C, or its examples' own C_i
        C = self.Cb if np.ndim(self.Cb) == 0 else self.Cb[B]
        a_new, b, n_inner = solve_subproblem(self.engine, Kbb, y[B], aB, r, C, 0.5 * self.tol)
        a_new = np.clip(a_new, 0.0, C)
        snap = 1e-12 * C  # rounding residue next to a bound is the bound
        a_new[a_new < snap] = 0.0
        high = a_new > C - snap
        a_new[high] = C if np.ndim(C) == 0 else C[high]
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

    def _step(self):
        return self._step_impl(True)

    def _advance(self, max_steps):
        k = 0
        while k < max_steps:
            if self._step_impl(False) is None:
                break
            k += 1
        return k

    def result(self):
        v = self.y - self.G
        b = intercept_from_v(v, self.y, self.alpha, self.Cb)
        return {"alpha": self.alpha.copy(), "intercept": b,
                "kernel_evaluations": self.cache.kernel_evaluations + self._direct_evals}


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
        q, the working-set size (None: 10, or n if smaller).  q = 2 with
        ``engine="smo"`` is SMO.
    engine : {"qp", "irwls", "smo"}, default="qp"
        Sub-problem solver (:mod:`svmlab.decomposition._engines`).
    shrinking : bool, default=True
    cache_size : float, default=200 (MB)
    max_iter : int, default=-1 (outer steps)
        -1 means LIBSVM's safeguard cap ``max(10_000_000, 100 * n_samples)``
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
        ``n / (2 * count(y_i))``.  See :mod:`svmlab._base` (zero weights
        remove the example).

    scikit-learn callbacks (``set_callbacks``, scikit-learn >= 1.9) get one
    task per outer step (:mod:`svmlab._stepping`).
    """

    def __init__(self, *, C=1.0, kernel="rbf", gamma="scale", degree=3, coef0=0.0, tol=1e-3,
                 working_set_size=None, engine="qp", shrinking=True, cache_size=200.0,
                 max_iter=-1, progress=True, class_weight=None):
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
        self.max_iter = max_iter
        self.progress = progress
        self.class_weight = class_weight

    def _make_run(self, X, y, kernel):
        return DecompositionRun(self, X, y, kernel, "decomposition", self._ws(len(y)),
                                self.engine, self.shrinking)


class ChunkingClassifier(_DecompositionBase):
    """Vapnik's chunking: each step solves the QP over every non-zero
    multiplier plus the ``working_set_size`` (M) worst KKT violators.

    Parameters as :class:`DecompositionClassifier`; ``working_set_size`` is
    M (None: 10, or n if smaller), ``engine`` defaults to ``"qp"``.
    """

    _default_ws = 10

    def __init__(self, *, C=1.0, kernel="rbf", gamma="scale", degree=3, coef0=0.0, tol=1e-3,
                 working_set_size=None, engine="qp", cache_size=200.0, max_iter=-1,
                 progress=True, class_weight=None):
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.tol = tol
        self.working_set_size = working_set_size
        self.engine = engine
        self.cache_size = cache_size
        self.max_iter = max_iter
        self.progress = progress
        self.class_weight = class_weight

    _parameter_constraints = {
        k: v for k, v in _DecompositionBase._parameter_constraints.items() if k != "shrinking"
    }

    def _make_run(self, X, y, kernel):
        return DecompositionRun(self, X, y, kernel, "chunking", self._ws(len(y)),
                                self.engine, False)
