"""SVC, NuSVC, SVR, NuSVR and OneClassSVM: scikit-learn's SVM family on
svmlab's solvers.

Each estimator takes :class:`sklearn.svm`'s parameters, with the same names,
defaults and meanings, and svmlab's own:

``solver`` : {"auto", "wss2", "full", "platt", "irwls", "blocked"}, default="auto"
    Which solver trains the model (:mod:`svmlab.svm._solve` says which
    apply to which formulation and what ``"auto"`` picks); the choice made
    is the fitted attribute ``solver_``.
``n_jobs`` : int or None, default=None (SVC and NuSVC)
    Cores for the one-vs-one pairs, scikit-learn's conventions (``None``:
    1 unless inside ``joblib.parallel_config(n_jobs=...)``; -1: every
    core): ``fit`` trains up to that many pairs at once, in threads.  The
    model is the same bit for bit for any value (svmlab._multiclass).
    Each running pair keeps its own kernel cache of the sequential fit's
    size, so memory grows with the pairs running at once.
``warm_start`` : bool, default=False
    Start the next ``fit`` from the last fit's solution (``alpha_``),
    projected onto the new problem's constraints (a changed ``C``, ``nu``,
    ``epsilon`` or weights), instead of from LIBSVM's cold start.  The
    training rows must be the same.  LIBSVM cannot do this; along a path of
    C values it saves most of the steps
    (:func:`svmlab.svm.regularization_path`).

What differs from scikit-learn, on purpose:

* ``probability`` defaults to False and is not deprecated (scikit-learn
  1.9 deprecates it in favour of ``CalibratedClassifierCV``): svmlab keeps
  LIBSVM's Platt scaling as a documented method, with ``probA_`` and
  ``probB_`` as plain attributes.
* ``support_`` holds row numbers of the X passed to ``fit`` also when zero
  or negative sample weights removed rows (SVC: positions among the rows
  kept).
* NaN or infinite ``sample_weight`` values are refused (LIBSVM removes NaN
  weights silently).
* A fit that stalls (no pair step can move although the optimality
  conditions do not hold) ends with ``fit_status_ = 1`` and a
  ConvergenceWarning saying so, never reported as converged.
* ``verbose``: the fit is silent by default, as scikit-learn's classes are;
  ``verbose=True`` shows svmlab's progress bar (tqdm, after 2 s) for long
  fits (there is no LIBSVM log to print).  Decision:
  ``docs/decisions/27f01-svm-family-stops-and-silence.md``.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.base import ClassifierMixin, OutlierMixin, RegressorMixin
from sklearn.utils._param_validation import StrOptions

from ._base import BaseSVC, BaseSVM

__all__ = ["SVC", "NuSVC", "SVR", "NuSVR", "OneClassSVM"]


def _ones(X):
    from sklearn.utils.validation import _num_samples

    return np.ones(_num_samples(X))


def _constraints(base, drop):
    c = dict(base._parameter_constraints)
    for name in drop:
        c.pop(name)
    return c


_CLS = {"decision_function_shape": [StrOptions({"ovr", "ovo"})], "break_ties": ["boolean"],
        "n_jobs": [Integral, None]}


class SVC(ClassifierMixin, BaseSVC):
    """C-Support Vector Classification, as :class:`sklearn.svm.SVC`.

    Problem (LIBSVM's C-SVC dual, one per pair of classes)::

        min_a  1/2 sum_ij a_i a_j y_i y_j K(x_i, x_j) - sum_i a_i
        s.t.   sum_i y_i a_i = 0,   0 <= a_i <= C_i = C * class_weight[y_i] * sample_weight_i

    with decision function ``f(x) = sum_i y_i a_i K(x_i, x) + b``; more than
    two classes are trained one-vs-one (LIBSVM's scheme and layout).

    Parameters
    ----------
    C : float, default=1.0
        Regularisation: the bound on each multiplier (``np.inf``: a hard
        margin, solved by the generalised dual solver).
    kernel : {"linear", "poly", "rbf", "sigmoid", "precomputed"} or callable, default="rbf"
    degree : int, default=3
    gamma : {"scale", "auto"} or float, default="scale"
        ``"scale"``: ``1 / (n_features * X.var())``; ``"auto"``: ``1 / n_features``.
    coef0 : float, default=0.0
    shrinking : bool, default=True
        Shrinking in the SMO solvers (does not change the optimum).
    probability : bool, default=False
        Fit Platt's sigmoid per pair on 5-fold cross-validated decision
        values, for :meth:`predict_proba` (five more fits per pair).
    tol : float, default=1e-3
        Stopping tolerance of the optimality conditions (LIBSVM's ``m - M``).
    cache_size : float, default=200
        Kernel cache in MB.
    class_weight : dict, "balanced" or None, default=None
    verbose : bool, default=False
        Silent when False (scikit-learn's convention); True shows a progress
        bar for fits longer than 2 s.
    max_iter : int, default=-1
        Steps per pair (SMO: pair steps; IRWLS: IRWLS iterations; blocked:
        outer steps).  -1: no limit but a safeguard of
        ``max(100_000_000, 100 n)`` steps (compiled solvers; ten times
        upstream LIBSVM's, scikit-learn's LIBSVM has none).
    decision_function_shape : {"ovr", "ovo"}, default="ovr"
    break_ties : bool, default=False
        With k > 2 classes and ``"ovr"``, predict the argmax of the decision
        function instead of LIBSVM's vote.
    random_state : int, RandomState or None, default=None
        Seeds the probability folds (the same folds as SVC's for the same
        integer) and Platt's random starts.
    solver : {"auto", "wss2", "full", "platt", "irwls", "blocked"}, default="auto"
    warm_start : bool, default=False
    n_jobs : int or None, default=None
        Pairs trained at once (threads; module docstring).

    Attributes
    ----------
    support_, support_vectors_, n_support_, dual_coef_, intercept_, coef_,
    classes_, class_weight_, fit_status_, n_iter_, shape_fit_, probA_,
    probB_ as SVC; ``solver_``, ``converged_``, ``stop_reason_``,
    ``alpha_`` (one array per pair) from svmlab.
    """

    _impl = "c_svc"
    _parameter_constraints = {**_constraints(BaseSVM, ("nu", "epsilon")), **_CLS}

    def __init__(self, *, C=1.0, kernel="rbf", degree=3, gamma="scale", coef0=0.0,
                 shrinking=True, probability=False, tol=1e-3, cache_size=200,
                 class_weight=None, verbose=False, max_iter=-1, decision_function_shape="ovr",
                 break_ties=False, random_state=None, solver="auto", warm_start=False,
                 n_jobs=None):
        self.C = C
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.shrinking = shrinking
        self.probability = probability
        self.tol = tol
        self.cache_size = cache_size
        self.class_weight = class_weight
        self.verbose = verbose
        self.max_iter = max_iter
        self.decision_function_shape = decision_function_shape
        self.break_ties = break_ties
        self.random_state = random_state
        self.solver = solver
        self.warm_start = warm_start
        self.n_jobs = n_jobs


class NuSVC(ClassifierMixin, BaseSVC):
    """Nu-Support Vector Classification, as :class:`sklearn.svm.NuSVC`.

    Problem (LIBSVM's scaled nu-SVC dual, one per pair of classes)::

        min_a  1/2 sum_ij a_i a_j y_i y_j K(x_i, x_j)
        s.t.   sum_i y_i a_i = 0,   sum_i a_i = nu sum_i w_i,   0 <= a_i <= w_i

    (``w`` the sample weights; ``class_weight`` is computed but, as in
    LIBSVM, not used).  The solution is rescaled by ``1 / r`` (``r`` the
    multiplier of the second equality): the model of C-SVC with ``C = 1 /
    r``.  ``nu`` bounds the fraction of margin errors from above and of
    support vectors from below.  ``nu`` too large for the class sizes of a
    pair raises "specified nu is infeasible".

    Parameters are those of :class:`SVC` with ``nu`` (default 0.5, in
    (0, 1]) instead of ``C``; ``solver`` takes ``"auto"``, ``"wss2"`` or
    ``"full"`` (the generalised dual with the nu selection and intercept,
    LIBSVM's ``Solver_NU``).
    """

    _impl = "nu_svc"
    _parameter_constraints = {**_constraints(BaseSVM, ("C", "epsilon")), **_CLS}

    def __init__(self, *, nu=0.5, kernel="rbf", degree=3, gamma="scale", coef0=0.0,
                 shrinking=True, probability=False, tol=1e-3, cache_size=200,
                 class_weight=None, verbose=False, max_iter=-1, decision_function_shape="ovr",
                 break_ties=False, random_state=None, solver="auto", warm_start=False,
                 n_jobs=None):
        self.nu = nu
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.shrinking = shrinking
        self.probability = probability
        self.tol = tol
        self.cache_size = cache_size
        self.class_weight = class_weight
        self.verbose = verbose
        self.max_iter = max_iter
        self.decision_function_shape = decision_function_shape
        self.break_ties = break_ties
        self.random_state = random_state
        self.solver = solver
        self.warm_start = warm_start
        self.n_jobs = n_jobs


class SVR(RegressorMixin, BaseSVM):
    """Epsilon-Support Vector Regression, as :class:`sklearn.svm.SVR`.

    Problem (LIBSVM's epsilon-SVR dual over ``a`` and ``a*``, 2n variables)::

        min  1/2 (a - a*)' K (a - a*) + eps sum (a + a*) - z' (a - a*)
        s.t. sum (a - a*) = 0,   0 <= a_i, a*_i <= C_i = C * sample_weight_i

    with ``f(x) = sum_i (a_i - a*_i) K(x_i, x) + b``: points inside the
    epsilon-tube have ``a_i = a*_i = 0``.  The generalised dual solver runs
    it (svmlab's WSS 2 on the 2n variables; ``dual_coef_`` holds ``a - a*``).

    Parameters: ``kernel``, ``degree``, ``gamma``, ``coef0``, ``tol``, ``C``,
    ``epsilon`` (default 0.1), ``shrinking``, ``cache_size``, ``verbose``,
    ``max_iter`` as :class:`sklearn.svm.SVR`; ``solver`` ("auto", "wss2",
    "full", "blocked") and ``warm_start`` from svmlab.
    """

    _impl = "epsilon_svr"
    _parameter_constraints = _constraints(
        BaseSVM, ("class_weight", "nu", "probability", "random_state"))

    def __init__(self, *, kernel="rbf", degree=3, gamma="scale", coef0=0.0, tol=1e-3, C=1.0,
                 epsilon=0.1, shrinking=True, cache_size=200, verbose=False, max_iter=-1,
                 solver="auto", warm_start=False):
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.tol = tol
        self.C = C
        self.epsilon = epsilon
        self.shrinking = shrinking
        self.cache_size = cache_size
        self.verbose = verbose
        self.max_iter = max_iter
        self.solver = solver
        self.warm_start = warm_start



class NuSVR(RegressorMixin, BaseSVM):
    """Nu-Support Vector Regression, as :class:`sklearn.svm.NuSVR`.

    Problem (LIBSVM's nu-SVR dual)::

        min  1/2 (a - a*)' K (a - a*) - z' (a - a*)
        s.t. sum (a - a*) = 0,   sum (a + a*) = C nu sum(w),   0 <= a_i, a*_i <= C w_i

    The width of the tube is found by the solver (``epsilon_ = -r``, ``r``
    the multiplier of the second equality); ``nu`` bounds the fraction of
    points outside the tube from above and of support vectors from below.
    Solved with the nu selection and intercept (LIBSVM's ``Solver_NU``).

    Parameters as :class:`sklearn.svm.NuSVR` (``nu=0.5``, ``C=1.0``, ...)
    plus ``solver`` and ``warm_start``.  Attribute ``epsilon_``: the tube's
    half-width found.
    """

    _impl = "nu_svr"
    _parameter_constraints = _constraints(
        BaseSVM, ("class_weight", "epsilon", "probability", "random_state"))

    def __init__(self, *, nu=0.5, C=1.0, kernel="rbf", degree=3, gamma="scale", coef0=0.0,
                 shrinking=True, tol=1e-3, cache_size=200, verbose=False, max_iter=-1,
                 solver="auto", warm_start=False):
        self.nu = nu
        self.C = C
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.shrinking = shrinking
        self.tol = tol
        self.cache_size = cache_size
        self.verbose = verbose
        self.max_iter = max_iter
        self.solver = solver
        self.warm_start = warm_start



class OneClassSVM(OutlierMixin, BaseSVM):
    """Unsupervised outlier detection, as :class:`sklearn.svm.OneClassSVM`
    (Schoelkopf et al. 2001).

    Problem (LIBSVM's one-class dual)::

        min_a  1/2 a' K a    s.t.  sum a = nu sum(w),   0 <= a_i <= w_i

    (``w`` the sample weights).  ``decision_function(x) = sum_i a_i K(x_i, x)
    - rho`` is positive inside the estimated support; ``predict`` gives +1
    there and -1 outside.  ``nu`` is an upper bound on the fraction of
    training points outside (outliers) and a lower bound on the fraction of
    support vectors.  ``offset_ = rho`` and ``score_samples = decision +
    offset_``.

    Parameters as :class:`sklearn.svm.OneClassSVM` (``nu=0.5``, ...) plus
    ``solver`` and ``warm_start``.
    """

    _impl = "one_class"
    _parameter_constraints = _constraints(
        BaseSVM, ("C", "class_weight", "epsilon", "probability", "random_state"))

    def __init__(self, *, kernel="rbf", degree=3, gamma="scale", coef0=0.0, tol=1e-3, nu=0.5,
                 shrinking=True, cache_size=200, verbose=False, max_iter=-1, solver="auto",
                 warm_start=False):
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.tol = tol
        self.nu = nu
        self.shrinking = shrinking
        self.cache_size = cache_size
        self.verbose = verbose
        self.max_iter = max_iter
        self.solver = solver
        self.warm_start = warm_start


    def fit(self, X, y=None, sample_weight=None, callback=None):
        """Estimate the support of the distribution of X (y is ignored;
        ``sample_weight`` and ``callback`` as for the other estimators)."""
        return super().fit(X, _ones(X), sample_weight=sample_weight, callback=callback)

    def iter_fit(self, X, y=None, sample_weight=None):
        """Generator of the fit's step records (y is ignored)."""
        yield from super().iter_fit(X, _ones(X), sample_weight=sample_weight)

    def start(self, X, y=None, sample_weight=None):
        """The fit's state (y is ignored); see :meth:`SVC.start`."""
        return super().start(X, _ones(X), sample_weight=sample_weight)

    def decision_function(self, X):
        """Signed distance to the boundary: positive inside, negative outside."""
        return self._internal_decision(X).ravel()

    def score_samples(self, X):
        """The unshifted score, ``decision_function(X) + offset_``."""
        return self.decision_function(X) + self.offset_

    def predict(self, X):
        """+1 for inliers, -1 for outliers."""
        dec = self._internal_decision(X)
        return np.asarray(np.where(dec > 0, 1, -1), dtype=np.intp)
