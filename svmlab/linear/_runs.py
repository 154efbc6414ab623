"""The stepping-protocol runs of the linear solvers (:mod:`svmlab._stepping`).

:class:`DCDRun` advances dual coordinate descent (:mod:`svmlab.linear._dcd`)
one *coordinate step* at a time: ``run.step()`` returns a :class:`DCDRecord`
(which example, its multiplier before and after the clipped step, the
gradient and projected gradient, whether shrinking removed it, and the primal
``w`` after the step), and the fast path runs the same compiled kernel in
chunks without records, along the same iterates.  ``max_iter`` counts
*epochs* (passes over the active set), LIBLINEAR's and scikit-learn's
meaning, while ``n_iter`` of the run counts coordinate steps; the estimators
report ``n_iter_`` in epochs.

:class:`LinearOvRRun` takes the one-vs-rest binary problems one after the
other (a :class:`svmlab._stepping.SequentialRun`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._stepping import SequentialRun, SolverRun
from . import _dcd as K

__all__ = ["LimitedRun", "DCDRecord", "DCDRun", "LinearOvRRun", "LinearOvRRecord", "LIBLINEAR_MESSAGE",
           "kernel_data", "sparse_kernel_data"]

#: the start of scikit-learn's ConvergenceWarning for LinearSVC/LinearSVR
#: (its tests match it)
LIBLINEAR_MESSAGE = "Liblinear failed to converge, increase the number of iterations."

def at_limit_message(run, solver, limit, unit):
    """scikit-learn warns whenever LIBLINEAR used all ``max_iter`` iterations,
    even when the last one met the tolerance; so do these runs (saying so:
    ``converged_`` stays True)."""
    return (f"{LIBLINEAR_MESSAGE} ({type(run.estimator).__name__}, solver '{solver}': the "
            f"fit used all max_iter={limit} {unit}; the last one met the tolerance, so "
            "converged_ is True, but scikit-learn warns whenever the limit is reached.)")


_EMPTY_REC = np.zeros((0, K.REC_WIDTH))
_NO_DENSE = np.zeros((0, 0))
_NO_F = np.zeros(0)
_NO_I = np.zeros(0, dtype=np.int32)


#: a dense input whose fraction of non-zeros is at most this is read through a
#: CSR copy without its zeros by the dual CD and TRON (decision record 28d01)
DCD_SPARSE_BELOW = 0.5


def sparse_kernel_data(X):
    """:func:`kernel_data` for the dual CD and TRON: a dense ``X`` with at
    most :data:`DCD_SPARSE_BELOW` non-zeros becomes CSR arrays of its
    non-zeros.  Their row loops (a dot and an axpy per row) then do the work
    LIBLINEAR does, which (through scikit-learn) stores every row sparse: on
    MNIST-like images (19 % non-zeros) a dense row costs five times that.
    The iterates are the same (the skipped terms are ``+ 0``, and the sums
    keep their order)."""
    if not sp.issparse(X) and X.size:
        counts = K.count_nonzeros(X)
        nnz = int(counts.sum())
        if nnz <= DCD_SPARSE_BELOW * X.size and nnz < 2**31 - 1:
            return (True, _NO_DENSE) + tuple(K.dense_to_csr(X, counts))
    return kernel_data(X)


def kernel_data(X):
    """``(sparse, Xd, data, indices, indptr)`` for the compiled kernels: a
    C-ordered float64 array, or a CSR matrix's raw arrays (int32 indices)."""
    if sp.issparse(X):
        return True, _NO_DENSE, X.data, X.indices, X.indptr
    return False, X, _NO_F, _NO_I, _NO_I


class LimitedRun(SolverRun):
    """A run whose ``max_iter`` counts something else than its steps (epochs,
    Newton iterations): the step count is unbounded, and the run ends with
    ``stop_reason = "max_iter"`` when :meth:`_hit_limit` says so."""

    #: the solver's name in messages, the unit ``max_iter`` counts
    solver_name = ""
    limit_unit = "iterations"

    def _hit_limit(self):
        raise NotImplementedError

    def _iterations(self):
        """The iterations ``max_iter`` bounds, done so far."""
        raise NotImplementedError

    def _criterion(self):
        """The stopping condition, in words, for the warning."""
        return "see the solver's module"

    def warning_message(self):
        if self.stop_reason == "max_iter":
            return (f"{LIBLINEAR_MESSAGE} ({type(self.estimator).__name__}, solver "
                    f"'{self.solver_name}': max_iter={self.iter_limit} {self.limit_unit} ended "
                    f"before the stopping condition held ({self._criterion()}); the model is feasible but not optimal: "
                    "raise max_iter, loosen tol, or scale the features.)")
        if self.converged and self._iterations() >= self.iter_limit:
            return at_limit_message(self, self.solver_name, self.iter_limit, self.limit_unit)
        return super().warning_message()

    @property
    def step_limit(self):
        return 1 << 62

    @property
    def finished(self):
        return super().finished or self._hit_limit()

    @property
    def stop_reason(self):
        r = super().stop_reason
        if r == "running" and self._hit_limit():
            return "max_iter"
        return r


class EpochStateRun(LimitedRun):
    """A :class:`LimitedRun` whose compiled kernel keeps its counters in the
    int64 array ``ist``: ``ist[1]`` the epochs done, ``ist[3]`` the end state
    (1 converged, 2 max_iter reached); the layout CDN and Crammer-Singer's
    kernels share.  ``_mark_start_limit`` marks a ``max_iter <= 0`` run as
    ended before its first epoch."""

    def _mark_start_limit(self):
        if self.iter_limit <= 0:
            self.ist[3] = 2

    def _hit_limit(self):
        return bool(self.ist[3] == 2)

    def _iterations(self):
        return int(self.ist[1])

    def _note_converged(self):
        if self.ist[3] == 1:
            self.converged = True


@dataclass(frozen=True)
class DCDRecord:
    """One coordinate step of dual coordinate descent.

    ``iteration``: 1-based step count; ``epoch``: 0-based pass over the
    active set the step belongs to; ``i``: the example (row of the training
    data as passed to ``fit``); ``alpha_old``, ``alpha_new``: its dual
    variable before and after the step (for SVR the signed ``beta_i``);
    ``G``: the dual gradient ``y_i w'x_i - 1 + D_ii alpha_i`` (SVR: ``w'x_i -
    y_i + D_ii beta_i``); ``PG``: the projected gradient (SVR: the
    coordinate's violation); ``shrunk``: the step removed ``i`` from the
    active set (no update); ``active_size``: the active set's size after the
    step; ``coef``, ``intercept``: the primal ``w`` and ``b`` after the
    step (``w = sum_i y_i alpha_i x_i``, kept up to date by every step)."""

    iteration: int
    epoch: int
    i: int
    alpha_old: float
    alpha_new: float
    G: float
    PG: float
    shrunk: bool
    active_size: int
    coef: np.ndarray
    intercept: float


class DCDRun(LimitedRun):
    """Dual coordinate descent (classification or regression) as an explicit
    state.  ``X`` is a C-ordered float64 array or a CSR matrix (int32
    indices), ``y`` in {-1, +1} (``kind="svc"``) or real (``"svr"``),
    ``upper`` the box ``U_i``, ``diag`` ``D_ii``, ``B`` the bias feature (0:
    none), ``tol`` the stopping tolerance, ``max_iter`` the most epochs,
    ``seed`` the generator's start (< 2**31), ``rows`` the row of the data
    passed to ``fit`` of each row of ``X`` (records report those)."""

    step_name = "coordinate step"
    limit_unit = "epochs"
    tol_name = "tol"
    steps_per_task = 1 << 16
    first_chunk = 1 << 14
    chunk_growth = 8

    def __init__(self, estimator, X, y, upper, diag, B, tol, max_iter, seed, *, kind="svc",
                 epsilon=0.0, rows=None, progress=False, solver_name="dcd"):
        self.n_samples = int(y.shape[0])
        super().__init__(estimator, max_iter=-1, progress=progress)
        self.kind = kind
        self.solver_name = solver_name
        self.iter_limit = int(max_iter)
        self.X = X
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        self.upper = np.ascontiguousarray(upper, dtype=np.float64)
        self.diag = np.ascontiguousarray(diag, dtype=np.float64)
        self.B = float(B)
        self.epsilon = float(epsilon)
        self.seed = int(seed)
        self.rows = np.arange(self.n_samples) if rows is None else np.asarray(rows)
        data = sparse_kernel_data(X)
        n = self.n_samples
        d = X.shape[1]
        self.QD = K.row_sqnorms(*data, self.B, n)
        sparse, Xd, values, indices, indptr = data
        # the kernels' layout (module docstring of svmlab.linear._dcd)
        packed = K.pack_rows(values, indices, int(indptr[-1])) if sparse else _NO_F
        self.data = (sparse, Xd, packed, indptr)
        if kind == "svc":
            self.QD = self.QD + self.diag
            self.l2 = bool(np.all(np.isinf(self.upper)))
            if not self.l2 and np.any(self.diag != 0):
                raise ValueError("the dual CD takes the L1 loss (D_ii = 0) or the L2 loss "
                                 "(U_i = inf)")
            v = self.diag if self.l2 else self.upper
            self.info = np.empty((n, 2))
            self.info[:, 0] = np.where(self.y > 0, v, -v)
            self.info[:, 1] = self.QD
        self.alpha = np.zeros(n)
        self.w = np.zeros(d + 1)
        self.index = np.arange(n, dtype=np.int64)
        self.ist = np.zeros(7, dtype=np.int64)
        self.ist[K.IS_ACTIVE] = n
        self.ist[K.IS_RNG] = int(seed) & 0x7FFFFFFF
        self.ist[K.IS_FRESH] = 1
        self.ist[K.IS_MAXIT] = self.iter_limit
        self.fst = np.zeros(K.FS_SIZE)
        self.fst[K.FS_MOLD] = np.inf
        self.fst[K.FS_mOLD] = -np.inf
        self.fst[K.FS_TOL] = float(tol)
        if self.iter_limit <= 0:
            self.ist[K.IS_DONE] = K.DONE_MAX_ITER

    # -- bookkeeping --------------------------------------------------------
    @property
    def epochs(self):
        """Epochs begun and ended so far (``n_iter_`` of the estimators)."""
        return int(self.ist[K.IS_EPOCH])

    def _hit_limit(self):
        return self.ist[K.IS_DONE] == K.DONE_MAX_ITER

    def _iterations(self):
        return self.epochs

    def _criterion(self):
        return f"max PG - min PG <= tol={self.fst[K.FS_TOL]:g}"

    def run(self, chunk=None, tasks=None):
        return super().run(chunk=1 << 40, tasks=tasks)

    # -- the steps ----------------------------------------------------------
    def _kernel(self, max_steps, rec):
        if self.kind == "svc":
            k = K.dcd_svc_steps(*self.data, self.B, self.info, self.l2, self.alpha, self.w,
                                self.index, self.ist, self.fst, int(max_steps), rec)
        else:
            k = K.dcd_svr_steps(*self.data, self.B, self.y, self.epsilon, self.upper,
                                self.diag, self.QD, self.alpha, self.w, self.index, self.ist,
                                self.fst, int(max_steps), rec)
        if self.ist[K.IS_DONE] == K.DONE_CONVERGED:
            self.converged = True
        return int(k)

    def _step(self):
        rec = np.zeros((1, K.REC_WIDTH))
        if self._kernel(1, rec) == 0:
            return None
        r = rec[0]
        return DCDRecord(iteration=self.n_iter + 1, epoch=int(r[6]), i=int(self.rows[int(r[0])]),
                         alpha_old=float(r[1]), alpha_new=float(r[2]), G=float(r[3]),
                         PG=float(r[4]), shrunk=bool(r[5]), active_size=int(r[7]),
                         coef=self.w[:-1].copy(), intercept=float(self.w[-1] * self.B))

    def _advance(self, max_steps):
        return self._kernel(max_steps, _EMPTY_REC)

    def result(self):
        return {"w": self.w[:-1].copy(), "b": float(self.w[-1] * self.B),
                "alpha": self.alpha.copy(), "n_iter": self.epochs}


@dataclass(frozen=True)
class LinearOvRRecord:
    """One step of a one-vs-rest fit: ``class_index``/``label`` of the binary
    problem that took it, and that problem's own ``record``."""

    iteration: int
    class_index: int
    label: Any
    record: Any


class LinearOvRRun(SequentialRun):
    """The k binary problems of a one-vs-rest fit, one after the other;
    ``make_run(c)`` builds class c's run when its turn comes."""

    def __init__(self, estimator, make_run, classes, n_samples, progress=False):
        super().__init__(estimator, len(classes), n_samples, progress)
        self.make_run = make_run
        self.classes = classes
        self.steps_per_task = 1 << 16

    def _open_part(self, i):
        return self.make_run(i)

    def _part_record(self, i, rec):
        return LinearOvRRecord(iteration=self.n_iter + 1, class_index=i,
                               label=self.classes[i], record=rec)

    def run(self, chunk=None, tasks=None):
        return super().run(chunk=1 << 40, tasks=tasks)

    @property
    def step_limit(self):
        return 1 << 62          # each part's own max_iter bounds it

    def result(self):
        return {"parts": [self.part_result(i) for i in range(self.n_parts)]}

    def warning_message(self):
        msgs = [m for m in self.part_messages if m]
        # every class's run ended on its own (an iter_fit that was read to
        # the end marks the whole run stopped too): the classes' messages
        # say what happened; the generic one knows no max_iter of its own
        if (self.interrupted or self.stopped) and not self.done:
            return super().warning_message()
        if msgs:
            return msgs[0]
        return None
