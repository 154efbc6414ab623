"""Joachims' cutting-plane linear SVM (SVMperf; "Training Linear SVMs in
Linear Time", KDD 2006).

Classification, :class:`CuttingPlaneClassifier` -- Algorithm 1 on OP2::

    OP1:  min_{w, xi >= 0}  1/2 w'w + (C/n) sum_i xi_i
          s.t.  y_i w'x_i >= 1 - xi_i                       for all i
    OP2:  min_{w, xi >= 0}  1/2 w'w + C xi
          s.t.  (1/n) w' sum_i c_i y_i x_i >= (1/n) sum_i c_i - xi
                                                     for all c in {0,1}^n

OP1 and OP2 have the same solution w (Theorem 1).  ``C`` here is the
paper's C: LIBLINEAR's / scikit-learn's ``C_liblinear = C / n``
(equivalently ``C = n * C_liblinear``).  The bias is modelled as a constant
extra feature of value 1 (``fit_intercept=True``), as the paper suggests, so
it is regularised like the other weights.

Weights (``sample_weight``, ``class_weight``; LIBLINEAR's per-example
``C_i``): example i gets the weight ``v_i = class_weight[y_i] *
sample_weight_i`` and its hinge loss is multiplied by it::

    OP1w: min 1/2 w'w + (C/n) sum_i v_i xi_i      s.t. y_i w'x_i >= 1 - xi_i
    OP2w: min 1/2 w'w + C xi
          s.t. (1/n) w' sum_i c_i v_i y_i x_i >= (1/n) sum_i c_i v_i - xi
                                                     for all c in {0,1}^n

(Theorem 1's proof goes through with ``v_i >= 0`` unchanged.)  The most
violated constraint is still ``c_i = [y_i w'x_i < 1]``; only its vector and
offset carry ``v_i``.  Rows of weight 0 are removed first and ``n`` counts
the remaining rows, so a zero weight is exactly a removed row (with the
same C).  Hence ``LinearSVC(C=c, class_weight=cw).fit(X, y,
sample_weight=s)`` corresponds to ``CuttingPlaneClassifier(C=c * n,
class_weight=cw).fit(X, y, sample_weight=s)`` with ``n`` the number of rows
of positive weight.  (A weight of 2 is therefore *not* a repeated row: a
repeated row also increases n.)

Each iteration (Algorithm 1):

1. solve OP3 = OP2 restricted to the working set W, through its dual
   ``max sum_k alpha_k d_k - 1/2 ||sum_k alpha_k g_k||^2`` subject to
   ``alpha >= 0, sum alpha <= C`` (:mod:`svmlab.cutting_plane._qp`), giving
   ``w = sum_k alpha_k g_k`` and ``xi = max(0, max_k d_k - w'g_k)``;
2. the O(sn) pass over the data
   (:class:`svmlab.cutting_plane._oracle.ClassifierOracle`) finds the most
   violated constraint ``c_i = [y_i w'x_i < 1]``, its vector
   ``g = (1/n) sum c_i v_i y_i x_i``, offset ``d = (1/n) sum c_i v_i`` and
   ``xi' = d - w'g`` (``v_i = 1`` without weights);
3. stop when ``xi' <= xi + epsilon``, else add c to W.

At the end ``P(w) = 1/2 w'w + C xi' <= OP2's optimum + C epsilon``
(Theorem 3): the QP value over W is a lower bound on the optimum.

``CuttingPlaneClassifier(method="ocas")`` runs Franc & Sonnenburg's OCAS
instead (:mod:`svmlab.cutting_plane._ocas`): the same cuts and the same OP3, but a
best-so-far point, an exact line search towards OP3's solution and cuts
taken between the two; it stops with the same ``C epsilon`` guarantee.

The OP3 solver is never silently imprecise: when SMO stalls on an
ill-conditioned working set at large C, an exact active-set method takes
over (:func:`svmlab.cutting_plane._qp.active_set_qp`), and a QP left above its
tolerance anyway raises a ConvergenceWarning.

Ordinal regression, :class:`CuttingPlaneOrdinalRegressor` -- Algorithm 2 on
OP5, with P = {(i, j): y_i > y_j} and m = |P|::

    OP4:  min 1/2 w'w + (C/m) sum_{(i,j) in P} xi_ij
          s.t.  w'x_i >= w'x_j + 1 - xi_ij
    OP5:  min 1/2 w'w + C xi
          s.t.  (1/m) w' sum_{(i,j) in P} c_ij (x_i - x_j) >= (1/m) sum c_ij - xi
                                                   for all c in {0,1}^m

The most violated constraint is found by the paper's condensed
O(n log n + R n) sweep (sort by w'x, per-rank counters c+ and c-); pairs are
never enumerated.  With two ranks, OP4 is the ROC-area SVM.

Both accept a dask array for X (row chunks, dense or scipy.sparse blocks):
the O(sn) pass then runs blockwise on Dask with w broadcast to the workers,
and the small QP stays on the client (:mod:`svmlab.cutting_plane._dask`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from scipy.stats import rankdata
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

from ._oracle import ClassifierOracle, OrdinalOracle, check_ranks
from ._qp import add_cut_and_solve, qp_rounding_floor
from ._ocas import MU, OcasRecord, dense_as_csr, ocas_step
from ._ovr import OneVsRestRecord, OneVsRestRun, ovr_weights
from .._stepping import SolverRun, SteppedFitMixin, with_callbacks
from .._validation import (check_binary, check_classification, check_data, check_weights,
                           class_and_sample_weights, to_csr32)

__all__ = [
    "CuttingPlaneClassifier",
    "CuttingPlaneOrdinalRegressor",
    "CuttingPlaneRecord",
    "OrdinalCuttingPlaneRecord",
    "OcasRecord",
    "OneVsRestRecord",
    "ordered_pair_fraction",
    "warm_up",
]


# --------------------------------------------------------------------------
# records
# --------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class CuttingPlaneRecord:
    """One iteration of Algorithm 1 (classification).

    The iteration evaluates the current ``w`` (the OP3 solution over the
    working set before this iteration), finds the most violated constraint
    c at ``w``, adds it to the working set and re-solves OP3.

    Fields
    ------
    iteration : 1-based iteration number.
    w, b : the weights and bias at which c was found (``b = 0`` without
        intercept); ``w_norm`` is the norm of the full regularised vector
        ``[w, b]`` (the bias is a constant feature, so it counts).
    xi : OP3's slack at ``w`` (the working set's most violated offset).
    xi_new : ``xi'`` of the new constraint (= the average hinge loss at w,
        ``(1/n) sum_i v_i max(0, 1 - y_i w.x_i)`` with weights).
    constraint : boolean mask of c over the n training examples (``None`` on
        the Dask path, where it is not gathered; with zero weights, over the
        rows of positive weight); ``constraint_size`` is ``sum c``,
        ``constraint_norm`` the norm of ``(1/n) sum c_i v_i y_i x_i`` and
        ``constraint_offset`` is ``(1/n) sum c_i v_i`` (``v_i = 1`` without
        weights).
    working_set_size : |W| after adding c.
    alpha : OP3 dual multipliers of the working set after re-solving (one
        per constraint, in order of addition).
    primal : ``1/2 |w|^2 + C xi'`` = OP1/OP2 objective at ``w`` (an upper
        bound on the optimum).
    dual : the OP3 value of the working set that produced ``w`` (a lower
        bound on the optimum); ``gap = primal - dual``.  Training stops when
        ``xi' <= xi + epsilon``, i.e. ``gap <= C epsilon``.
    """

    iteration: int
    w: np.ndarray = field(repr=False)
    b: float
    w_norm: float
    xi: float
    xi_new: float
    constraint: np.ndarray | None = field(repr=False)
    constraint_size: int
    constraint_norm: float
    constraint_offset: float
    working_set_size: int
    alpha: np.ndarray = field(repr=False)
    primal: float
    dual: float
    gap: float


@dataclass(frozen=True, slots=True)
class OrdinalCuttingPlaneRecord:
    """One iteration of Algorithm 2 (ordinal regression / ROC area).

    As :class:`CuttingPlaneRecord`, with the constraint given by its
    condensed counts: ``c_plus[i]`` = number of violated pairs where i is the
    higher-ranked member, ``c_minus[i]`` = where i is the lower-ranked one
    (``None`` on the Dask path).  ``constraint_size`` is the number of
    violated pairs ``sum c+``, out of ``n_pairs`` = m.
    """

    iteration: int
    w: np.ndarray = field(repr=False)
    w_norm: float
    xi: float
    xi_new: float
    c_plus: np.ndarray | None = field(repr=False)
    c_minus: np.ndarray | None = field(repr=False)
    constraint_size: int
    n_pairs: int
    constraint_norm: float
    constraint_offset: float
    working_set_size: int
    alpha: np.ndarray = field(repr=False)
    primal: float
    dual: float
    gap: float


# --------------------------------------------------------------------------
# oracles: the O(sn) most-violated-constraint passes live in the leaf module
# svmlab.cutting_plane._oracle (ClassifierOracle, OrdinalOracle, check_ranks)
# --------------------------------------------------------------------------
_QPTOL = 1e-12
#: dense X is converted to CSR when at most this fraction is nonzero
DENSE_TO_CSR = 0.5


# --------------------------------------------------------------------------
# the solver state
# --------------------------------------------------------------------------
class _CuttingPlaneRun(SolverRun):
    """Explicit state of Algorithms 1/2: working set, multipliers, w, xi."""

    step_name = "iteration"
    tol_name = "epsilon"
    #: one BLAS thread while the run works: its BLAS calls are inner
    #: products of w (length d + 1), and OpenBLAS runs one of more than
    #: 10000 terms on every core, whose threads then spin for tens of
    #: milliseconds on cores the compiled passes need (decision 27b01)
    blas_threads = 1

    def __init__(self, estimator, oracle, C, epsilon, max_iter, progress, ordinal,
                 qp_tol=None):
        super().__init__(estimator, max_iter=max_iter, progress=progress)
        self.oracle = oracle
        self.n_samples = int(oracle.n)
        self.C = float(C)
        self.epsilon = float(epsilon)
        self.ordinal = ordinal
        self.qp_tol = float(_QPTOL if qp_tol is None else qp_tol)
        self.use_newton = True  # subspace-Newton steps in the QP's fallback
        self.use_active_set = True  # the QP's main engine first (False: the fallback only)
        D = oracle.dim
        self.D = D
        cap = 16
        self._G = np.zeros((cap, D))     # constraint vectors g_k (rows)
        self._H = np.zeros((cap + 1, cap + 1))  # [slack, g_1..g_K] Gram
        self._d = np.zeros(cap + 1)            # [0, d_1..d_K]
        self._a = np.zeros(cap + 1)            # [slack, alpha_1..alpha_K]
        self._a[0] = self.C
        self.K = 0
        self.w = np.zeros(D)
        self.xi = 0.0
        self.dual = 0.0
        self.qp_steps = 0
        self.qp_violation = 0.0
        self.qp_warned = False
        self.last_primal = np.nan

    # -- working set ----------------------------------------------------------
    def _grow(self):
        cap = self._G.shape[0] * 2
        G = np.zeros((cap, self.D))
        G[: self.K] = self._G[: self.K]
        H = np.zeros((cap + 1, cap + 1))
        H[: self.K + 1, : self.K + 1] = self._H[: self.K + 1, : self.K + 1]
        d = np.zeros(cap + 1)
        d[: self.K + 1] = self._d[: self.K + 1]
        a = np.zeros(cap + 1)
        a[: self.K + 1] = self._a[: self.K + 1]
        self._G, self._H, self._d, self._a = G, H, d, a

    def _add_and_solve(self, g, off):
        """Add the cut ``(g, off)`` to the working set and re-solve the
        reduced problem, with ``w``, ``xi`` and the dual value
        (:func:`~svmlab.cutting_plane._qp.add_cut_and_solve`: one compiled
        call when the main engine suffices).  A reduced QP left above its
        tolerance (step limit hit, or no step could make progress) is
        reported once, never silently."""
        if self.K == self._G.shape[0]:
            self._grow()
        w = np.empty(self.D)
        steps, viol, xi, dual = add_cut_and_solve(
            self._G, self._H, self._d, self._a, self.K, np.ascontiguousarray(g, dtype=float),
            float(off), self.C, self.qp_tol, self.D + 1, w, self.use_newton,
            self.use_active_set)
        self.K += 1
        self.w = w
        self.xi = max(0.0, float(xi))
        self.dual = float(dual)
        self.qp_steps += int(steps)
        self.qp_violation = float(viol)
        if viol > self.qp_tol and not self.qp_warned:
            k1 = self.K + 1
            limit = max(self.qp_tol, qp_rounding_floor(self._H[:k1, :k1], self.C))
            if viol > limit:
                self.qp_warned = True
                warnings.warn(
                    f"The reduced QP (OP3) of cutting-plane iteration {self.n_iter + 1} "
                    f"stopped with KKT violation {viol:.3g} above its tolerance {limit:.3g} "
                    f"(|W| = {self.K}, C = {self.C:g}); the lower bound and w of this "
                    "iteration are less precise. A smaller C usually helps.",
                    ConvergenceWarning, stacklevel=2)

    # -- one iteration ----------------------------------------------------------
    def _iterate(self, want_record):
        w = self.w
        g, off, xi_new, size, detail = self.oracle(w, want_record)
        ww = float(w @ w)
        primal = 0.5 * ww + self.C * xi_new
        self.last_primal = primal
        if xi_new <= self.xi + self.epsilon:
            self.converged = True
            return None
        xi_before, dual_before = self.xi, self.dual
        if self.K == 0:
            dual_before = 0.0
        self._add_and_solve(g, off)
        if not want_record:
            return True
        common = dict(
            iteration=self.n_iter + 1,
            w_norm=float(np.sqrt(ww)),
            xi=float(xi_before),
            xi_new=float(xi_new),
            constraint_size=int(size),
            constraint_norm=float(np.linalg.norm(g)),
            constraint_offset=float(off),
            working_set_size=int(self.K),
            alpha=self._a[1: self.K + 1].copy(),
            primal=float(primal),
            dual=float(dual_before),
            gap=float(primal - dual_before),
        )
        if self.ordinal:
            return OrdinalCuttingPlaneRecord(
                w=w[:-1].copy(), c_plus=detail.get("c_plus"), c_minus=detail.get("c_minus"),
                n_pairs=int(self.oracle.m), **common)
        return CuttingPlaneRecord(
            w=w[:-1].copy(), b=float(w[-1] * self.oracle.B),
            constraint=detail.get("constraint"), **common)

    def _step(self):
        return self._iterate(True)

    def _advance(self, max_steps):
        k = 0
        while k < max_steps:
            if self._iterate(False) is None:
                break
            k += 1
        return k

    def result(self):
        alpha = self._a[1: self.K + 1].copy()
        return {
            "w": self.w.copy(),
            "alpha": alpha,
            "working_set_size": self.K,
            "xi": self.xi,
            "dual": self.dual,
            "qp_steps": self.qp_steps,
        }


class _OcasRun(_CuttingPlaneRun):
    """Explicit state of OCAS (:mod:`svmlab.cutting_plane._ocas`): the working set and its
    reduced solution ``w_t`` (as in Algorithm 1), plus the best-so-far point
    ``w_b``, its margins ``m_b`` and objective ``F(w_b)``.

    One call of :meth:`_iterate` = steps 1-4 of the module docstring of
    :mod:`svmlab.cutting_plane._ocas`: margins of ``w_t``, exact line search from ``w_b``
    towards ``w_t``, the stopping test ``F(w_b) - dual <= C epsilon``, the cut
    at ``w_c = (1 - mu) w_b + mu w_t`` and the re-solved reduced problem.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        n = self.n_samples
        self.mu = MU
        self.w_best = np.zeros(self.D)
        self.m_best = np.zeros(n)           # margins y_i w_b.[x_i, B]
        v = self.oracle.v
        # the n of (1/n) sum_i v_i hinge_i: the rows of positive weight (the
        # Dask path keeps zero-weight rows in its blocks, see
        # svmlab.cutting_plane._dask)
        self.n_loss = int(getattr(self.oracle, "n_loss", n))
        # F(0) = C * (1/n) sum_i v_i max(0, 1 - 0)
        self.primal_best = (self.C * 1.0 if v is None
                            else self.C * float(v.sum()) / self.n_loss)
        self._m_c = np.empty(n)             # margins of the cutting point
        self._work_k = np.empty(2 * n)      # work arrays of the line search
        self._work_j = np.empty(2 * n)
        self.last_primal = self.primal_best

    def _iterate(self, want_record):
        C, n = self.C, self.n_samples
        n_loss = self.n_loss
        w_t = self.w
        # 1. margins of the reduced solution w_t (0 before the first cut)
        m_t = self.oracle.margins(w_t) if self.K else np.zeros(n)
        v = self.oracle.v
        hinge_t = np.maximum(0.0, 1.0 - m_t) if want_record else None
        reduced_primal = (0.5 * float(w_t @ w_t)
                          + C * (float(hinge_t.mean()) if v is None
                                 else float((v * hinge_t).sum()) / n_loss)
                          ) if want_record else 0.0
        # 2. exact line search along w_b + k (w_t - w_b), k >= 0, and (4.)
        # the cutting point's margins, in one compiled call on the margins
        delta = w_t - self.w_best
        m_c = self._m_c
        k, hinge = ocas_step(float(self.w_best @ delta), float(delta @ delta), self.m_best,
                             m_t, C / n_loss, self.mu, m_c, self._work_k, self._work_j, v)
        k = float(k)
        if k > 0.0:
            self.w_best = self.w_best + k * delta
        self.primal_best = 0.5 * float(self.w_best @ self.w_best) + C * float(hinge) / n_loss
        self.last_primal = self.primal_best
        # 3. stop: upper bound F(w_b) within C epsilon of the lower bound
        dual_before = self.dual if self.K else 0.0
        if self.K and self.primal_best - dual_before <= C * self.epsilon:
            self.converged = True
            return None
        # 4. cut at w_c = (1 - mu) w_b + mu w_t (margins m_c from step 2)
        mu = self.mu
        g, off, xi_new, size, detail = self.oracle.cut(m_c, want_record)
        xi_before = self.xi
        self._add_and_solve(g, off)
        if not want_record:
            return True
        B = self.oracle.B
        w_c = (1.0 - mu) * self.w_best + mu * w_t
        wb = self.w_best
        return OcasRecord(
            iteration=self.n_iter + 1,
            w=wb[:-1].copy(), b=float(wb[-1] * B), w_norm=float(np.linalg.norm(wb)),
            primal=float(self.primal_best), dual=float(dual_before),
            gap=float(self.primal_best - dual_before), step=k,
            reduced_w=w_t[:-1].copy(), reduced_b=float(w_t[-1] * B),
            reduced_primal=float(reduced_primal),
            cut_w=w_c[:-1].copy(), cut_b=float(w_c[-1] * B), mu=float(mu),
            xi=float(xi_before), xi_new=float(xi_new),
            constraint=detail.get("constraint"), constraint_size=int(size),
            constraint_norm=float(np.linalg.norm(g)), constraint_offset=float(off),
            working_set_size=int(self.K), alpha=self._a[1: self.K + 1].copy())

    def result(self):
        res = super().result()
        res["w"] = self.w_best.copy()   # the model is the best-so-far point
        return res


# --------------------------------------------------------------------------
# shared estimator machinery
# --------------------------------------------------------------------------
def _is_dask(X):
    return type(X).__module__.split(".")[0] == "dask"


_PARAMS = {
    "C": [Interval(Real, 0.0, None, closed="neither")],
    "epsilon": [Interval(Real, 0.0, None, closed="neither")],
    "max_iter": [Interval(Integral, -1, None, closed="left")],
    "progress": ["boolean"],
}


class _CuttingPlaneBase(SteppedFitMixin, BaseEstimator):
    _ordinal = False

    def _fitted_attributes(self, run):
        """The fitted attributes of the state ``run`` has reached, as a dict
        (what :meth:`_store_run` stores; also the ``fitted_estimator`` that a
        scikit-learn callback gets after an iteration, see
        :mod:`svmlab._stepping`)."""
        res = run.result()
        w = res["w"]
        return {
            "coef_": w[:-1].reshape(1, -1).copy(),
            "intercept_": (np.array([float(w[-1] * run.oracle.B)]) if not self._ordinal
                           else np.array([0.0])),
            "n_iter_": int(run.n_iter),
            "converged_": bool(run.converged),
            "stop_reason_": run.stop_reason,
            "fit_time_": float(run.elapsed),
            "dual_coef_": res["alpha"],
            "working_set_size_": int(res["working_set_size"]),
            "xi_": float(res["xi"]),
            "dual_objective_": float(res["dual"]),
            "qp_steps_": int(res["qp_steps"]),
        }

    def _store_run(self, run):
        for name, value in self._fitted_attributes(run).items():
            setattr(self, name, value)

    def _validate_X_predict(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse=["csr", "csc", "coo"], reset=False,
                          dtype=np.float64)
        return to_csr32(X) if sp.issparse(X) else np.ascontiguousarray(X)

    def decision_function(self, X):
        """``w'x + b``."""
        X = self._validate_X_predict(X)
        return np.asarray(X @ self.coef_[0]).ravel() + self.intercept_[0]


def _check_not_multiclass(y):
    # scikit-learn's message for binary-only classifiers (check_estimator
    # looks for it); check_binary words the same failure differently
    from sklearn.utils.multiclass import type_of_target

    try:
        kind = type_of_target(y, input_name="y")
    except ValueError:
        return None  # left to check_binary, which explains it
    if kind in ("binary", "multiclass"):
        labels = np.unique(np.asarray(y))
        if len(labels) == 1:
            raise ValueError(
                f"y contains 1 class ({labels[0]!r}): a single class cannot "
                "train a classifier, which needs two classes.")
    if kind == "multiclass-multioutput":
        raise ValueError(
            "Only single-output classification is supported. The type of the "
            f"target is {kind}.")
    return kind


class CuttingPlaneClassifier(ClassifierMixin, _CuttingPlaneBase):
    """Linear SVM trained by Joachims' cutting-plane Algorithm 1 (SVMperf).

    Solves OP1, ``min 1/2 |w|^2 + (C/n) sum_i max(0, 1 - y_i (w'x_i + b))``
    (with ``b`` the weight of a constant feature 1, so regularised), through
    its 1-slack form OP2; see the module docstring.

    Parameters
    ----------
    C : float, default=1.0
        The paper's C, which multiplies the *average* hinge loss.  It relates
        to LIBLINEAR's / :class:`sklearn.svm.LinearSVC`'s C by
        ``C_liblinear = C / n_samples``, i.e. ``C = n_samples * C_liblinear``.
        With weights the loss is ``(C/n) sum_i v_i hinge_i`` with ``v_i =
        class_weight[y_i] * sample_weight_i`` and ``n`` the number of rows of
        positive weight: ``LinearSVC(C=c, class_weight=cw).fit(X, y,
        sample_weight=s)`` is ``CuttingPlaneClassifier(C=c * n,
        class_weight=cw).fit(X, y, sample_weight=s)``.
    epsilon : float, default=1e-3
        Stopping tolerance on xi: stop when the most violated constraint's
        ``xi'`` is at most ``xi + epsilon``.  The primal objective is then
        within ``C * epsilon`` of the optimum (Theorem 3).
    fit_intercept : bool, default=True
        Model the bias as a constant extra feature of value 1 (regularised,
        as in the paper).  ``False``: no bias, ``intercept_ = [0.]``.
    max_iter : int, default=1000
        Maximum number of cutting-plane iterations; -1 means the safeguard
        cap ``max(100_000_000, 100 * n_samples)`` shared with the kernel
        solvers (:mod:`svmlab._stepping`; Theorem 5 bounds the iterations
        far below it).  Hitting either gives a ConvergenceWarning.  Ctrl-C
        during ``fit`` ends the iteration in flight and keeps that model, with
        a warning (``stop_reason_ = "interrupted"``).
    progress : bool, default=True
        tqdm progress bar for fits longer than 2 s (``SVMLAB_PROGRESS=0`` turns all bars off).
    method : {"joachims", "ocas"}, default="joachims"
        ``"joachims"``: Algorithm 1 of the paper, cutting at the reduced
        problem's solution.  ``"ocas"``: Franc & Sonnenburg's OCAS
        (:mod:`svmlab.cutting_plane._ocas`): the same cuts and reduced problem, but a
        best-so-far point with an exact line search and cuts between the two,
        which needs far fewer iterations.  It stops when ``F(w_b)`` is within
        ``C * epsilon`` of the reduced problem's lower bound (so within
        ``C * epsilon`` of the optimum, as Theorem 3 guarantees for
        Algorithm 1); records are :class:`svmlab.cutting_plane._ocas.OcasRecord`, and
        ``coef_`` is the best-so-far point.
    class_weight : None, dict or "balanced", default=None
        Multiplies the losses of a class's examples: ``{label: weight}``, or
        ``"balanced"`` = ``n / (2 * count(label))`` over all training rows
        (scikit-learn's ``compute_class_weight``).  Combined with
        ``fit(..., sample_weight=s)`` as ``v_i = class_weight[y_i] * s_i``
        (the module docstring's OP2w).  Rows with ``v_i = 0`` are removed
        before training (``n`` then counts the others); negative weights are
        refused before any work.  Weights that are all 1 give exactly the
        unweighted iterates.

    Attributes
    ----------
    coef_ : (1, n_features)
    intercept_ : (1,)
    classes_ : (2,)
    n_iter_ : cutting-plane iterations (= constraints added).
    converged_ : whether ``xi' <= xi + epsilon`` held at the end.

    More than two classes: one-vs-rest, as LinearSVC
    (:mod:`svmlab.cutting_plane._ovr`, which also states how weights apply).
    ``coef_`` is then (k, n_features), ``intercept_`` (k,), ``n_iter_`` (k,)
    the iterations of each class's problem (``max_iter`` bounds each), the
    per-problem attributes below are (k,) arrays (``dual_coef_`` a list),
    ``decision_function`` gives (n, k) and ``predict`` the largest; records
    are :class:`~svmlab.cutting_plane._ovr.OneVsRestRecord`.  Dask input is
    binary only.
    dual_coef_ : OP3 multipliers of the final working set;
    working_set_size_, xi_, dual_objective_ (OP3 value, a lower bound on the
    optimum), qp_steps_ (pair steps of the inner QP solver), fit_time_.
    class_weight_ : (2,) the weights of ``classes_`` (ones without
    ``class_weight``), as :class:`sklearn.svm.LinearSVC`.

    Step hooks: ``fit(X, y, callback=f)`` calls ``f(record)`` with a
    :class:`CuttingPlaneRecord` per iteration (return False to stop);
    ``iter_fit(X, y)`` yields them; ``start(X, y)`` returns the solver state.
    scikit-learn callbacks (``set_callbacks``, scikit-learn >= 1.9) get one
    task per iteration (:mod:`svmlab._stepping`).

    X may be a dask array (row chunks of dense or scipy.sparse blocks, one
    column chunk); then y may be a numpy or dask array and the O(sn) pass
    runs on Dask (see :mod:`svmlab.cutting_plane._dask`).

    Examples
    --------
    >>> from svmlab import CuttingPlaneClassifier
    >>> clf = CuttingPlaneClassifier(C=0.05 * X.shape[0]).fit(X, y)  # doctest: +SKIP
    """

    _parameter_constraints = {**_PARAMS, "fit_intercept": ["boolean"],
                              "method": [StrOptions({"joachims", "ocas"})],
                              "class_weight": [StrOptions({"balanced"}), dict, None]}

    def __init__(self, *, C=1.0, epsilon=1e-3, fit_intercept=True, max_iter=1000,
                 progress=True, method="joachims", class_weight=None):
        self.C = C
        self.epsilon = epsilon
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.progress = progress
        self.method = method
        self.class_weight = class_weight

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.classifier_tags.multi_class = True
        return tags

    @with_callbacks
    def fit(self, X, y, sample_weight=None, callback=None):
        """Train.  ``sample_weight`` (n,) non-negative: example i's hinge loss
        is multiplied by ``class_weight[y_i] * sample_weight_i`` (zero
        removes it; see the class docstring for the C it corresponds to in
        LinearSVC).  ``callback(record)`` is called after every iteration;
        returning ``False`` from it stops training with the model reached so
        far.  scikit-learn callbacks set with ``set_callbacks`` get one task
        per iteration (see :mod:`svmlab._stepping`)."""
        return self._fit_run(self.start(X, y, sample_weight=sample_weight), X, y, callback)

    def iter_fit(self, X, y, sample_weight=None):
        """Generator of iteration records; the estimator is fitted when the
        generator is exhausted or closed.  ``sample_weight`` as in :meth:`fit`."""
        yield from self._iter_run(self.start(X, y, sample_weight=sample_weight))

    def start(self, X, y, sample_weight=None):
        """Validate everything and return the solver state (lazy form).
        ``sample_weight`` as in :meth:`fit`; every check (weights included)
        runs before any solver work."""
        self._validate_params()
        B = 1.0 if self.fit_intercept else 0.0
        weighted = sample_weight is not None or self.class_weight is not None
        if _is_dask(X):
            from ._dask import DaskClassifierOracle

            oracle, classes, n_features = DaskClassifierOracle.build(
                X, y, B, sample_weight=sample_weight, class_weight=self.class_weight)
            self.class_weight_ = oracle.class_weight_
            self.n_features_in_ = n_features
            if hasattr(self, "feature_names_in_"):
                del self.feature_names_in_
        else:
            X_in = X
            if _check_not_multiclass(y) == "multiclass" and len(np.unique(np.asarray(y))) > 2:
                return self._start_ovr(X, y, sample_weight, B)
            X, y_pm, classes = check_binary(X, y)
            validate_data(self, X_in, reset=True, skip_check_array=True)
            if hasattr(sample_weight, "compute"):
                sample_weight = sample_weight.compute()
            v, self.class_weight_, keep = check_weights(y_pm, classes, sample_weight,
                                                        self.class_weight)
            if keep is not None:
                # zero weights remove the example (n then counts the others)
                X, y_pm, v = X[keep], y_pm[keep], v[keep]
                X = to_csr32(X) if sp.issparse(X) else np.ascontiguousarray(X)
            if not weighted:
                v = None  # the unweighted passes (v_i = 1 is the same arithmetic)
            X = self._pass_data(X)
            oracle = ClassifierOracle(X, y_pm, B, v, group_rows=self._group_rows())
        self.classes_ = classes
        run_class = _OcasRun if self.method == "ocas" else _CuttingPlaneRun
        return run_class(self, oracle, self.C, self.epsilon, self.max_iter,
                         self.progress, ordinal=False)

    def _group_rows(self):
        """How the oracle may reorder CSR rows by length (see
        :class:`~svmlab.cutting_plane._oracle.ClassifierOracle`): always for
        OCAS, only for binary matrices for Algorithm 1 (decision 28c01)."""
        return True if self.method == "ocas" else "binary"

    def _pass_data(self, X):
        """Both methods read mostly-zero dense rows (images) as CSR: the
        passes then cost O(nnz) (MNIST's pixels are 81% zeros; Algorithm 1
        on MNIST odd/even 1.7 ms per iteration against 3.0 ms dense,
        decision 28c01).  The sums differ from the dense ones by rounding
        only, so Algorithm 1's steps stay the ones the readable reference
        replays (tests/test_reference_cutting_plane.py)."""
        if not sp.issparse(X) and X.size:
            Xc = dense_as_csr(X, DENSE_TO_CSR)
            if Xc is not None:
                return Xc
        return X

    def _start_ovr(self, X, y, sample_weight, B):
        """The one-vs-rest run of k > 2 classes (:mod:`svmlab.cutting_plane._ovr`);
        every check runs here, before any solver work."""
        X_in = X
        X, y_idx, classes = check_classification(X, y)
        validate_data(self, X_in, reset=True, skip_check_array=True)
        k = len(classes)
        if hasattr(sample_weight, "compute"):
            sample_weight = sample_weight.compute()
        # class_weight_ (k,): "balanced" is n / (k count(label))
        cw, sw = class_and_sample_weights(y_idx, classes, sample_weight, self.class_weight)
        vs = [ovr_weights(y_idx, k, c, sw, cw) for c in range(k)]
        for c, v in enumerate(vs):
            if v is not None and (not np.any(v[y_idx == c] > 0)
                                  or not np.any(v[y_idx != c] > 0)):
                raise ValueError(
                    f"sample_weight and class_weight give zero weight to every example of "
                    f"class {classes[c]} or of the rest; each one-vs-rest problem needs "
                    "examples of positive weight on both sides.")
        self.class_weight_ = cw
        self.classes_ = classes
        Xo = self._pass_data(X)
        run_class = _OcasRun if self.method == "ocas" else _CuttingPlaneRun

        def make_run(c):
            y_pm = np.where(y_idx == c, 1.0, -1.0)
            v = vs[c]
            Xc = Xo
            if v is not None and np.any(v <= 0):
                keep = np.flatnonzero(v > 0)
                Xc, y_pm, v = Xo[keep], y_pm[keep], v[keep]
                Xc = to_csr32(Xc) if sp.issparse(Xc) else np.ascontiguousarray(Xc)
            oracle = ClassifierOracle(Xc, y_pm, B, v, group_rows=self._group_rows())
            return run_class(self, oracle, self.C, self.epsilon, self.max_iter,
                             self.progress, ordinal=False)

        return OneVsRestRun(self, make_run, classes, X.shape[0], self.progress)

    def _fitted_attributes(self, run):
        if not isinstance(run, OneVsRestRun):
            return super()._fitted_attributes(run)
        res = run.class_results()
        d = self.n_features_in_
        coef = np.zeros((run.k, d))
        intercept = np.zeros(run.k)
        B = run.B if run.B is not None else (1.0 if self.fit_intercept else 0.0)
        for c, r in enumerate(res):
            if r is not None:
                coef[c] = r["w"][:-1]
                intercept[c] = float(r["w"][-1] * B)
        iters = np.asarray(run.part_steps(), dtype=np.int64)

        def per_class(key, dtype):
            return np.array([r[key] if r is not None else 0 for r in res], dtype=dtype)

        return {
            "coef_": coef,
            "intercept_": intercept,
            "n_iter_": iters,
            "converged_": bool(run.converged),
            "stop_reason_": run.stop_reason,
            "fit_time_": float(run.elapsed),
            "dual_coef_": [r["alpha"] if r is not None else np.zeros(0) for r in res],
            "working_set_size_": per_class("working_set_size", np.int64),
            "xi_": per_class("xi", np.float64),
            "dual_objective_": per_class("dual", np.float64),
            "qp_steps_": per_class("qp_steps", np.int64),
        }

    def decision_function(self, X):
        """``w'x + b``: shape (n,) for two classes (positive: ``classes_[1]``),
        (n, k) for k > 2 classes (column c: class c against the rest)."""
        X = self._validate_X_predict(X)
        if self.coef_.shape[0] == 1:
            return np.asarray(X @ self.coef_[0]).ravel() + self.intercept_[0]
        return np.asarray(X @ self.coef_.T) + self.intercept_[None, :]

    def predict(self, X):
        d = self.decision_function(X)
        if d.ndim == 2:
            return self.classes_[np.argmax(d, axis=1)]
        return self.classes_[(d > 0).astype(int)]


def warm_up(background=False):
    """Load the cutting-plane estimators' compiled code before the first fit.

    Even with numba's on-disk cache filled, the first fit in a fresh process
    pays numba's one-time initialisation of its typing and target
    registries (``load_additional_registries``), a few tenths of a second
    (docs/decisions/26d10-ocas-passes-and-line-search.md).  This moves it
    out of the first fit:
    it fits tiny problems with both methods, dense, CSR and binary CSR, and
    the ordinal regressor.  With ``background=True`` it runs in a daemon thread and
    returns it (numba's compiler lock makes a fit that starts meanwhile
    wait, never fail), so an ``import`` cell can start it while the data
    loads.
    """
    def work():
        from sklearn.datasets import make_classification

        X, y = make_classification(60, 4, random_state=0)
        Xs = sp.csr_matrix(X)
        Xb = sp.csr_matrix((X > 0).astype(np.float64))  # binary CSR: index-only passes
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for method in ("joachims", "ocas"):
                CuttingPlaneClassifier(C=10.0, method=method, progress=False).fit(Xb, y)
            for Xi in (X, Xs):
                for method in ("joachims", "ocas"):
                    CuttingPlaneClassifier(C=10.0, method=method, progress=False).fit(Xi, y)
                CuttingPlaneOrdinalRegressor(C=10.0, progress=False).fit(Xi, y)

    if not background:
        work()
        return None
    import threading

    thread = threading.Thread(target=work, name="svmlab-warm-up", daemon=True)
    thread.start()
    return thread


# --------------------------------------------------------------------------
# ordinal regression
# --------------------------------------------------------------------------
def ordered_pair_fraction(y, scores):
    """Fraction of pairs with ``y_i > y_j`` that the scores order correctly
    (``s_i > s_j``), ties in the scores counting 1/2.  For two ranks this is
    the ROC area.  O(R n log n); no pair is enumerated."""
    y = np.asarray(y)
    s = np.asarray(scores, dtype=np.float64).ravel()
    levels = np.unique(y)
    good = 0.0
    total = 0.0
    lower = np.zeros(len(y), dtype=bool)
    for lev in levels:
        cur = y == lev
        n_cur, n_low = int(cur.sum()), int(lower.sum())
        if n_low and n_cur:
            both = cur | lower
            r = rankdata(s[both])  # midranks: ties count 1/2
            u = r[cur[both]].sum() - n_cur * (n_cur + 1) / 2.0
            good += u
            total += n_cur * n_low
        lower |= cur
    if total == 0:
        raise ValueError("y has a single rank: there are no ordered pairs to score.")
    return float(good / total)


class CuttingPlaneOrdinalRegressor(_CuttingPlaneBase):
    """Linear ranking SVM for ordinal regression, Joachims' Algorithm 2 on OP5.

    Solves OP4, ``min 1/2 |w|^2 + (C/m) sum_{y_i > y_j} max(0, 1 - w'(x_i - x_j))``
    over all m pairs with different ranks, without enumerating them.  With
    two ranks this maximises (a hinge bound on) the ROC area.

    Parameters
    ----------
    C : float, default=1.0
        The paper's C, multiplying the *average* pairwise hinge loss.  A
        pairwise SVM with LIBLINEAR's convention (sum of pair losses) has
        ``C_liblinear = C / m``.
    epsilon, max_iter, progress : as :class:`CuttingPlaneClassifier`.

    There are no ``sample_weight`` / ``class_weight`` (left for later): a
    weighted OP4 weights *pairs*, and whether a pair's weight is the product
    of its two examples' weights (or a per-rank-pair weight, as for ROC area
    with unequal costs) is a modelling choice the paper does not make; the
    condensed sweep would then accumulate weight sums instead of the counts
    ``c+`` and ``c-``.

    There is no ``fit_intercept``: pairwise constraints are invariant to
    shifts of the scores, so ``intercept_`` is always ``[0.]``.

    There is no ``method="ocas"`` here (a decision).  OCAS applies
    in principle: OP4 has a convex piecewise-quadratic primal and the same
    cutting-plane model.  Its exact line search is what does not carry over
    cheaply.  Along a line ``w_b + k delta`` a pairwise hinge term
    ``max(0, 1 - (s_i(k) - s_j(k)))`` has its own breakpoint, so there are up
    to m = O(n^2) of them, and the classifier's search, which collects and
    partially sorts the breakpoints, would enumerate the pairs that
    Algorithm 2 exists to avoid.  The slope along the line can be had
    without pairs (sort the scores at k, then the condensed per-rank sweep,
    O(n log n + R n)), so an exact search by bisection on the slope, until
    no breakpoint is left in the bracket, is possible; but it costs one such
    sweep per bisection step (tens per iteration, where Algorithm 2 makes
    one), and neither Franc & Sonnenburg nor Joachims analyse that variant.

    ``decision_function(X)`` and ``predict(X)`` both return the ranking
    scores ``w'x`` (larger = higher rank).  ``score(X, y)`` is the fraction
    of correctly ordered pairs (pairs with ``y_i > y_j`` and ``s_i > s_j``,
    score ties counting 1/2) -- the ROC area for two ranks, a concordance
    index (like Kendall's tau rescaled to [0, 1]) for more.

    Attributes: ``coef_`` (1, d), ``intercept_`` (1,) = 0, ``ranks_`` (the
    distinct training ranks), ``n_pairs_`` (m), ``n_iter_``, ``converged_``
    and the extras of :class:`CuttingPlaneClassifier`.
    """

    _ordinal = True
    _parameter_constraints = dict(_PARAMS)

    def __init__(self, *, C=1.0, epsilon=1e-3, max_iter=1000, progress=True):
        self.C = C
        self.epsilon = epsilon
        self.max_iter = max_iter
        self.progress = progress

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def start(self, X, y):
        """Validate everything and return the solver state (lazy form)."""
        self._validate_params()
        if _is_dask(X):
            from ._dask import DaskOrdinalOracle

            oracle, ranks, n_features = DaskOrdinalOracle.build(X, y)
            self.n_features_in_ = n_features
        else:
            X_in = X
            if y is None:
                raise ValueError("CuttingPlaneOrdinalRegressor requires y (the ranks).")
            X = check_data(X)
            if X.shape[0] < 2:
                raise ValueError(
                    f"Ordinal regression needs at least 2 samples (ordered pairs); got "
                    f"n_samples = {X.shape[0]}.")
            rank, ranks = check_ranks(y, X.shape[0])
            validate_data(self, X_in, reset=True, skip_check_array=True)
            oracle = OrdinalOracle(X, rank, len(ranks))
        self.ranks_ = ranks
        self.n_pairs_ = int(oracle.m)
        return _CuttingPlaneRun(self, oracle, self.C, self.epsilon, self.max_iter,
                                self.progress, ordinal=True)

    def predict(self, X):
        """Ranking scores ``w'x`` (same as :meth:`decision_function`)."""
        return self.decision_function(X)

    def score(self, X, y, sample_weight=None):
        """Fraction of correctly ordered pairs (ROC area for two ranks)."""
        if sample_weight is not None:
            raise ValueError("sample_weight is not supported by the pairwise score.")
        y = check_array(np.asarray(y), ensure_2d=False, dtype=None, ensure_all_finite=True)
        return ordered_pair_fraction(y, self.decision_function(X))
