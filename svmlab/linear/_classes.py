"""``LinearSVC`` and ``LinearSVR``: scikit-learn's LIBLINEAR estimators on
svmlab's solvers.

Same names, parameters, defaults, attributes and messages as
:class:`sklearn.svm.LinearSVC` / :class:`sklearn.svm.LinearSVR`, plus

* ``solver`` (default ``"auto"``): which of svmlab's solvers runs, and the
  fitted ``solver_`` saying which one did:

  ==================  =====================================================
  ``"dcd"``           dual coordinate descent with shrinking (Hsieh et al.
                      2008; Ho & Lin 2012 for SVR), :mod:`svmlab.linear._dcd`
  ``"tron"``          primal trust-region Newton (Lin, Weng & Keerthi
                      2008), L2 penalty and squared losses,
                      :mod:`svmlab.linear._tron`
  ``"cdn"``           primal coordinate descent Newton for ``penalty="l1"``
                      (Chang, Hsieh & Lin 2008; Yuan et al. 2010),
                      :mod:`svmlab.linear._cdn`
  ``"crammer_singer"`` Keerthi et al.'s sequential dual method (2008) for
                      ``multi_class="crammer_singer"``,
                      :mod:`svmlab.linear._cs`
  ``"cutting_plane"``, Joachims' Algorithm 1 / Franc & Sonnenburg's OCAS
  ``"ocas"``          (:mod:`svmlab.cutting_plane`), hinge loss, L2 penalty
  ==================  =====================================================

  ``"auto"`` chooses as LIBLINEAR does: Crammer-Singer for that
  ``multi_class``, ``"cdn"`` for the L1 penalty, ``"dcd"`` when the (resolved)
  ``dual`` is True and ``"tron"`` when it is False.  An explicit solver must
  fit the problem (a ValueError says which combinations it takes), and an
  explicit ``dual`` must agree with it.
* the stepping protocol (:mod:`svmlab._stepping`): ``fit(X, y, callback=f)``,
  ``iter_fit(X, y)`` and ``start(X, y)``; the dual CD steps one coordinate at
  a time (:class:`svmlab.linear._runs.DCDRecord`).
* ``converged_``, ``stop_reason_`` and ``fit_time_``, as every svmlab estimator.

The problems are LIBLINEAR's: the bias is the weight of a constant feature
``intercept_scaling`` (so it is regularised), ``C_i = C * class_weight[y_i] *
sample_weight_i``, and in the one-vs-rest problem of class c the examples of c
get ``class_weight[c]`` and the rest weight 1 (LIBLINEAR's ``weighted_C``).
``max_iter`` counts epochs of the dual CD, Newton iterations of TRON, outer
iterations of CDN and of Crammer-Singer (LIBLINEAR's meaning), cutting-plane
iterations for those two.  ``n_iter_`` is the largest over the binary
problems, as scikit-learn reports it.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.linear_model._base import LinearClassifierMixin, SparseCoefMixin
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .._stepping import SteppedFitMixin, with_callbacks
from .._validation import MAX_SUM_OF_SQUARES, check_scale, to_csr32
from ._runs import DCDRun, LinearOvRRun

__all__ = ["LinearSVC", "LinearSVR"]

#: LIBLINEAR's table: loss -> penalty -> dual -> available (scikit-learn's
#: ``_get_liblinear_solver_type``, whose messages these are)
_TABLE = {
    "hinge": {"l2": {True}},
    "squared_hinge": {"l1": {False}, "l2": {False, True}},
    "epsilon_insensitive": {"l2": {True}},
    "squared_epsilon_insensitive": {"l2": {False, True}},
}

_SOLVERS = ("auto", "dcd", "tron", "cdn", "crammer_singer", "cutting_plane", "ocas")


def _check_combination(multi_class, penalty, loss, dual):
    """scikit-learn's check of a (penalty, loss, dual) combination, with its
    message."""
    if multi_class == "crammer_singer":
        return
    pens = _TABLE.get(loss)
    if pens is None:
        err = "loss='%s' is not supported" % loss
    elif penalty not in pens:
        err = "The combination of penalty='%s' and loss='%s' is not supported" % (penalty, loss)
    elif dual not in pens[penalty]:
        err = ("The combination of penalty='%s' and loss='%s' are not supported when dual=%s"
               % (penalty, loss, dual))
    else:
        return
    raise ValueError("Unsupported set of arguments: %s, Parameters: penalty=%r, loss=%r, dual=%r"
                     % (err, penalty, loss, dual))


def _resolve_dual(dual, loss, penalty, multi_class, X):
    """scikit-learn's ``dual="auto"``: the dual when n_samples < n_features and
    it is available, else the primal when available."""
    if dual != "auto":
        return dual
    want = X.shape[0] < X.shape[1]
    try:
        _check_combination(multi_class, penalty, loss, want)
        return want
    except ValueError:
        return not want


def _choose_solver(solver, multi_class, penalty, loss, dual_param, dual, classification):
    """The solver that runs (see the module docstring), or a ValueError."""
    if multi_class == "crammer_singer":
        if solver not in ("auto", "crammer_singer"):
            raise ValueError(f"solver={solver!r} does not solve multi_class='crammer_singer'; "
                             "use solver='auto' or 'crammer_singer'.")
        return "crammer_singer"
    if solver == "auto":
        if penalty == "l1":
            return "cdn"
        return "dcd" if dual else "tron"
    squared = loss in ("squared_hinge", "squared_epsilon_insensitive")
    need = {"dcd": (penalty == "l2", True, "penalty='l2' (any loss)"),
            "tron": (penalty == "l2" and squared, False,
                     "penalty='l2' with loss='squared_hinge' or 'squared_epsilon_insensitive'"),
            "cdn": (penalty == "l1" and loss == "squared_hinge", False,
                    "penalty='l1' with loss='squared_hinge'"),
            "crammer_singer": (False, None, "multi_class='crammer_singer'"),
            "cutting_plane": (classification and penalty == "l2" and loss == "hinge", True,
                              "classification with penalty='l2' and loss='hinge'"),
            "ocas": (classification and penalty == "l2" and loss == "hinge", True,
                     "classification with penalty='l2' and loss='hinge'")}
    ok, its_dual, what = need[solver]
    if not ok:
        raise ValueError(f"solver={solver!r} solves {what}; got penalty={penalty!r}, "
                         f"loss={loss!r}. Use solver='auto' to let svmlab choose.")
    if dual_param != "auto" and its_dual is not None and bool(dual_param) != its_dual:
        raise ValueError(f"solver={solver!r} solves the {'dual' if its_dual else 'primal'} "
                         f"problem but dual={dual_param!r}; leave dual='auto' or drop the "
                         "solver.")
    return solver


def _validate_X(est, X, y, reset=True):
    X, y = validate_data(est, X, y, accept_sparse="csr", dtype=np.float64, order="C",
                         accept_large_sparse=False, reset=reset)
    if sp.issparse(X):
        X = to_csr32(X)
    else:
        X = np.ascontiguousarray(X)
    # svmlab's overflow guard (check_scale, which raises its message), called
    # only when an element-wise sum says it may fire: check_scale's np.dot
    # goes through a multi-threaded BLAS, slow on a busy machine
    # (einsum's single-threaded sum of products: no temporary array, no BLAS)
    data = X.data if sp.issparse(X) else X.reshape(-1)
    with np.errstate(over="ignore", invalid="ignore"):
        total = float(np.einsum("i,i->", data, data)) if data.size else 0.0
    if not total <= MAX_SUM_OF_SQUARES:
        check_scale(X)
    return X, y


def _sample_weight(sample_weight, n):
    if sample_weight is None:
        return None
    sw = np.asarray(sample_weight, dtype=np.float64)
    if sw.ndim == 0:
        sw = np.full(n, float(sw))
    if sw.shape != (n,):
        raise ValueError(f"sample_weight.shape == {sw.shape}, expected ({n},)!")
    if not np.all(np.isfinite(sw)):
        raise ValueError("sample_weight contains NaN or infinity.")
    if np.any(sw < 0):
        raise ValueError("Negative values in data passed to sample_weight: LIBLINEAR's "
                         "per-example bound C_i = C * sample_weight_i must be non-negative "
                         "(use 0 to remove an example).")
    return sw


class _LinearBase(SteppedFitMixin, BaseEstimator):
    """What LinearSVC and LinearSVR share: the runs of the binary problems,
    the stored attributes."""

    _classification = True

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _bias(self):
        if not self.fit_intercept:
            return 0.0
        if self.intercept_scaling <= 0:
            raise ValueError(
                "Intercept scaling is %r but needs to be greater than 0. To disable fitting "
                "an intercept, set fit_intercept=False." % self.intercept_scaling)
        return float(self.intercept_scaling)

    def _binary_run(self, solver, X, y, Ci, B, seed):
        """The run of one binary (or regression) problem with per-example
        bounds ``Ci`` (rows with ``Ci = 0`` are removed first)."""
        rows = None
        if np.any(Ci <= 0):
            rows = np.flatnonzero(Ci > 0)
            X, y, Ci = X[rows], y[rows], Ci[rows]
            if sp.issparse(X):
                X = to_csr32(X)
        l2 = self.loss in ("squared_hinge", "squared_epsilon_insensitive")
        progress = False
        if solver == "dcd":
            kind = "svc" if self._classification else "svr"
            if l2:
                upper = np.full(Ci.shape, np.inf)
                diag = 0.5 / Ci
            else:
                upper = Ci
                diag = np.zeros_like(Ci)
            return DCDRun(self, X, y, upper, diag, B, self.tol, self.max_iter, seed, kind=kind,
                          epsilon=getattr(self, "epsilon", 0.0), rows=rows, progress=progress)
        if solver == "tron":
            from ._tron import TronRun

            return TronRun(self, X, y, Ci, B, self.tol, self.max_iter,
                           kind="svc" if self._classification else "svr",
                           epsilon=getattr(self, "epsilon", 0.0))
        if solver == "cdn":
            from ._cdn import CDNRun

            return CDNRun(self, X, y, Ci, B, self.tol, self.max_iter, seed)
        raise AssertionError(solver)  # pragma: no cover

    # -- fitted attributes ----------------------------------------------------
    def _parts(self, run):
        if isinstance(run, LinearOvRRun):
            return [run.part_result(i) for i in range(run.n_parts)], run.part_steps()
        return [run.result()], None

    def _store_run(self, run):
        for name, value in self._fitted_attributes(run).items():
            setattr(self, name, value)

    def _common(self, run, n_iter):
        return {"n_iter_": int(n_iter), "converged_": bool(run.converged),
                "stop_reason_": run.stop_reason, "fit_time_": float(run.elapsed),
                "solver_": self._solver_ran}

    @with_callbacks
    def fit(self, X, y, sample_weight=None, callback=None):
        """Fit the model to ``(X, y)``; ``sample_weight`` multiplies each
        example's ``C``.  ``callback(record)`` is called after every step
        (return False to stop with the model reached), see
        :mod:`svmlab._stepping`."""
        return self._fit_run(self.start(X, y, sample_weight=sample_weight), X, y, callback)

    def iter_fit(self, X, y, sample_weight=None):
        """Generator of step records; the estimator is fitted when it is
        exhausted or closed."""
        yield from self._iter_run(self.start(X, y, sample_weight=sample_weight))


class LinearSVC(LinearClassifierMixin, SparseCoefMixin, _LinearBase):
    """Linear support vector classification (scikit-learn's
    :class:`~sklearn.svm.LinearSVC`, LIBLINEAR's problems) on svmlab's solvers.

    Solves, for each binary problem (one-vs-rest for k > 2 classes),
    ``min_w R(w) + sum_i C_i loss(y_i w'[x_i, B])`` with ``R = 1/2 |w|^2``
    (``penalty="l2"``) or ``|w|_1`` (``"l1"``), loss the hinge or squared
    hinge and ``B = intercept_scaling`` (the bias weight is regularised, as in
    LIBLINEAR).  ``multi_class="crammer_singer"`` solves Crammer and Singer's
    joint problem instead.  Parameters and attributes are scikit-learn's (see
    its documentation), plus ``solver`` / ``solver_``, ``converged_``,
    ``stop_reason_`` and ``fit_time_``; see :mod:`svmlab.linear._classes`.
    """

    _parameter_constraints: dict = {
        "penalty": [StrOptions({"l1", "l2"})],
        "loss": [StrOptions({"hinge", "squared_hinge"})],
        "dual": ["boolean", StrOptions({"auto"})],
        "tol": [Interval(Real, 0.0, None, closed="neither")],
        "C": [Interval(Real, 0.0, None, closed="neither")],
        "multi_class": [StrOptions({"ovr", "crammer_singer"})],
        "fit_intercept": ["boolean"],
        "intercept_scaling": [Interval(Real, 0, None, closed="neither")],
        "class_weight": [None, dict, StrOptions({"balanced"})],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "solver": [StrOptions(set(_SOLVERS))],
    }

    def __init__(self, penalty="l2", loss="squared_hinge", *, dual="auto", tol=1e-4, C=1.0,
                 multi_class="ovr", fit_intercept=True, intercept_scaling=1, class_weight=None,
                 verbose=0, random_state=None, max_iter=1000, solver="auto"):
        self.dual = dual
        self.tol = tol
        self.C = C
        self.multi_class = multi_class
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.class_weight = class_weight
        self.verbose = verbose
        self.random_state = random_state
        self.max_iter = max_iter
        self.penalty = penalty
        self.loss = loss
        self.solver = solver

    def start(self, X, y, sample_weight=None):
        """Validate everything and return the solver state (a
        :class:`svmlab._stepping.SolverRun`); no solver work yet."""
        self._validate_params()
        X, y = _validate_X(self, X, y)
        check_classification_targets(y)
        # np.unique(y, return_inverse=True) argsorts y (12 ms on ijcnn1's 91701
        # labels); the sorted classes and a binary search give the same codes
        classes = np.unique(y)
        y_idx = np.searchsorted(classes, y)
        self.classes_ = classes
        if len(classes) < 2:
            raise ValueError("This solver needs samples of at least 2 classes in the data, "
                             "but the data contains only one class: %r" % classes[0])
        n = X.shape[0]
        sw = _sample_weight(sample_weight, n)
        if sw is not None and not np.any(sw > 0):
            raise ValueError("sample_weight is zero for every example; nothing to fit.")
        if sw is not None and len(np.unique(y_idx[sw > 0])) < 2:
            raise ValueError("This solver needs samples of at least 2 classes with a positive "
                             "sample_weight, but only one class keeps one: %r"
                             % classes[y_idx[sw > 0][0]])
        dual = _resolve_dual(self.dual, self.loss, self.penalty, self.multi_class, X)
        _check_combination(self.multi_class, self.penalty, self.loss, dual)
        solver = _choose_solver(self.solver, self.multi_class, self.penalty, self.loss,
                                self.dual, dual, True)
        B = self._bias()
        if self.class_weight is None:
            cw = np.ones(len(classes))
        else:
            cw = np.asarray(compute_class_weight(self.class_weight, classes=classes, y=y,
                                                 sample_weight=sw), dtype=np.float64)
        if self.class_weight is not None and np.any(~np.isfinite(cw) | (cw < 0)):
            raise ValueError("class_weight must be finite and non-negative.")
        self._solver_ran = solver
        seed = check_random_state(self.random_state).randint(np.iinfo("i").max)
        base = np.full(n, float(self.C)) if sw is None else float(self.C) * sw
        if solver in ("cutting_plane", "ocas"):
            return self._start_cutting_plane(X, y, sw, solver)
        if solver == "crammer_singer":
            from ._cs import CSRun

            Ci = base * cw[y_idx]
            return CSRun(self, X, y_idx.astype(np.int64), len(classes), Ci, B, self.tol,
                         self.max_iter, seed)
        k = len(classes)
        if k == 2:
            y_pm = np.where(y_idx == 1, 1.0, -1.0)
            Ci = base * cw[y_idx]
            self._check_two_sides(Ci, y_pm)
            return self._binary_run(solver, X, y_pm, Ci, B, seed)

        def make_run(c):
            y_pm = np.where(y_idx == c, 1.0, -1.0)
            Ci = np.where(y_idx == c, base * cw[c], base)
            return self._binary_run(solver, X, y_pm, Ci, B, seed)

        for c in range(k):
            self._check_two_sides(np.where(y_idx == c, base * cw[c], base),
                                  np.where(y_idx == c, 1.0, -1.0))
        return LinearOvRRun(self, make_run, classes, n)

    @staticmethod
    def _check_two_sides(Ci, y_pm):
        if not (np.any(Ci[y_pm > 0] > 0) and np.any(Ci[y_pm < 0] > 0)):
            raise ValueError(
                "sample_weight and class_weight give zero weight to every example of a "
                "class (or of the rest, one-vs-rest); each binary problem needs examples of "
                "positive weight on both sides.")

    def _start_cutting_plane(self, X, y, sw, solver):
        from ..cutting_plane import CuttingPlaneClassifier

        if self.fit_intercept and float(self.intercept_scaling) != 1.0:
            raise ValueError(f"solver={solver!r} models the bias as a constant feature 1; "
                             f"intercept_scaling={self.intercept_scaling!r} is not available "
                             "with it (use solver='dcd').")
        n_pos = X.shape[0] if sw is None else int(np.count_nonzero(sw > 0))
        inner = CuttingPlaneClassifier(C=float(self.C) * n_pos, epsilon=float(self.tol),
                                       fit_intercept=self.fit_intercept, max_iter=self.max_iter,
                                       progress=False,
                                       method="ocas" if solver == "ocas" else "joachims",
                                       class_weight=self.class_weight)
        run = inner.start(X, y, sample_weight=sw)
        run.estimator = self
        self._cp_inner = inner
        run._svmlab_cp = True
        return run

    def _fitted_attributes(self, run):
        if getattr(run, "_svmlab_cp", False):
            a = self._cp_inner._fitted_attributes(run)
            coef = a["coef_"]
            intercept = a["intercept_"] if self.fit_intercept else 0.0
            return {"coef_": coef, "intercept_": intercept,
                    **self._common(run, np.max(a["n_iter_"]))}
        if self._solver_ran == "crammer_singer":
            res = run.result()
            W, b = res["W"], res["b"]
            coef, intercept = W, b
            if len(self.classes_) == 2:
                coef = (W[1] - W[0]).reshape(1, -1)
                intercept = np.array([b[1] - b[0]])
            return {"coef_": coef, "intercept_": intercept if self.fit_intercept else 0.0,
                    **self._common(run, res["n_iter"])}
        parts, _ = self._parts(run)
        d = self.n_features_in_
        coef = np.zeros((len(parts), d))
        intercept = np.zeros(len(parts))
        n_iter = 0
        for c, r in enumerate(parts):
            if r is not None:
                coef[c] = r["w"]
                intercept[c] = r["b"]
                n_iter = max(n_iter, r["n_iter"])
        return {"coef_": coef, "intercept_": intercept if self.fit_intercept else 0.0,
                **self._common(run, n_iter)}


class LinearSVR(RegressorMixin, _LinearBase):
    """Linear support vector regression (scikit-learn's
    :class:`~sklearn.svm.LinearSVR`, LIBLINEAR's problems) on svmlab's solvers:
    ``min_w 1/2 |w|^2 + sum_i C_i loss(w'[x_i, B] - y_i)`` with the
    epsilon-insensitive loss or its square.  Parameters and attributes are
    scikit-learn's, plus ``solver`` (``"auto"``, ``"dcd"``, ``"tron"``) /
    ``solver_``, ``converged_``, ``stop_reason_``, ``fit_time_``."""

    _classification = False

    _parameter_constraints: dict = {
        "epsilon": [Real],
        "tol": [Interval(Real, 0.0, None, closed="neither")],
        "C": [Interval(Real, 0.0, None, closed="neither")],
        "loss": [StrOptions({"epsilon_insensitive", "squared_epsilon_insensitive"})],
        "fit_intercept": ["boolean"],
        "intercept_scaling": [Interval(Real, 0, None, closed="neither")],
        "dual": ["boolean", StrOptions({"auto"})],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "solver": [StrOptions({"auto", "dcd", "tron"})],
    }

    def __init__(self, *, epsilon=0.0, tol=1e-4, C=1.0, loss="epsilon_insensitive",
                 fit_intercept=True, intercept_scaling=1.0, dual="auto", verbose=0,
                 random_state=None, max_iter=1000, solver="auto"):
        self.tol = tol
        self.C = C
        self.epsilon = epsilon
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.verbose = verbose
        self.random_state = random_state
        self.max_iter = max_iter
        self.dual = dual
        self.loss = loss
        self.solver = solver

    def start(self, X, y, sample_weight=None):
        """Validate everything and return the solver state; no solver work yet."""
        self._validate_params()
        X, y = _validate_X(self, X, y)
        y = np.asarray(y, dtype=np.float64)
        n = X.shape[0]
        sw = _sample_weight(sample_weight, n)
        dual = _resolve_dual(self.dual, self.loss, "l2", "ovr", X)
        _check_combination("ovr", "l2", self.loss, dual)
        solver = _choose_solver(self.solver, "ovr", "l2", self.loss, self.dual, dual, False)
        B = self._bias()
        self._solver_ran = solver
        seed = check_random_state(self.random_state).randint(np.iinfo("i").max)
        Ci = np.full(n, float(self.C)) if sw is None else float(self.C) * sw
        if not np.any(Ci > 0):
            raise ValueError("sample_weight is zero for every example; nothing to fit.")
        return self._binary_run(solver, X, y, Ci, B, seed)

    def _fitted_attributes(self, run):
        r = run.result()
        return {"coef_": r["w"].copy(),
                "intercept_": np.array([r["b"]]) if self.fit_intercept else 0.0,
                **self._common(run, r["n_iter"])}

    def predict(self, X):
        """``X @ coef_ + intercept_``."""
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        return np.asarray(X @ self.coef_).ravel() + self.intercept_
