"""What the five estimators of :mod:`svmlab.svm` share: validation, the
weights, the problems handed to the solvers, the fitted attributes in
scikit-learn's layout, and prediction.

Problem.  :class:`sklearn.svm.SVC` and its siblings are thin layers over
LIBSVM with many conventions a drop-in replacement has to keep: which
inputs are accepted and the messages for the others, how sample and class
weights become per-example bounds (and which rows they remove), the
one-vs-one layout of ``dual_coef_``, the sign flip of the binary case,
which attributes exist, and how ``predict`` decides.  This module keeps
them; the solving happens in :mod:`svmlab.svm._solve`.

Contract (scikit-learn's, unless said otherwise):

* ``fit(X, y, sample_weight)`` validates everything before any solver work.
  ``kernel="precomputed"``: X is the (n, n) Gram matrix (sparse Gram
  matrices are refused with a TypeError, as SVC does); a callable kernel is
  called on the raw X (anything with a length: lists of strings too).
* Weights: example i's bound is ``C_i = C * class_weight[y_i] *
  sample_weight_i`` (C-SVC), ``C * sample_weight_i`` (SVR, NuSVR) or
  ``sample_weight_i`` (OneClassSVM, NuSVC: the nu forms scale their bounds
  to 1; as in LIBSVM, NuSVC does not use ``class_weight``, though it
  computes ``class_weight_``).  Rows whose weight is zero *or negative* are
  removed before training, as LIBSVM does; NaN or infinite weights are
  refused.  ``support_`` holds row numbers of the X passed to ``fit``
  (SVC: positions among the rows kept; the same when no row is removed).
* Attributes: ``support_``, ``support_vectors_`` (CSR for sparse input,
  empty for precomputed and callable kernels), ``n_support_`` (per class;
  one value for SVR/OneClassSVM), ``dual_coef_``, ``intercept_``,
  ``fit_status_`` (0, or 1 when the solver stopped before the optimality
  conditions held), ``n_iter_`` (per pair for classifiers, an int
  otherwise), ``shape_fit_``, ``class_weight_``, ``classes_``, ``probA_``,
  ``probB_``, ``offset_`` (OneClassSVM), ``coef_`` (linear kernel), and
  svmlab's ``solver_`` (the solver that ran), ``converged_``,
  ``stop_reason_``, ``alpha_`` (the solver's variables: (l,) for one
  problem, a list with one array per pair for classifiers).
* Internally, as SVC, ``_dual_coef_`` and ``_intercept_`` keep LIBSVM's
  sign (the first class of a pair is +1); prediction reads them (with
  ``_n_support`` and the support vectors), so editing them changes
  predictions, and inconsistent edits are refused.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError
from sklearn.utils import check_random_state, column_or_1d, compute_class_weight
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import _ovr_decision_function
from sklearn.utils.validation import (_num_samples, check_consistent_length, check_is_fitted,
                                      validate_data)

from .._stepping import FitOptions, SteppedFitMixin, effective_n_jobs, with_callbacks
from .._validation import _check_label_type, _plain_valid_xy, check_kernel_scale, check_scale
from ..reference import dual as ref_dual
from . import _solve
from ._kernel import TrainKernel, predict_kernel
from ._solve import base_kernel, project_start  # noqa: F401 - their home was here
from ._run import FamilyRun

try:  # scikit-learn >= 1.8: the sparse container the configuration asks for
    from sklearn.utils._sparse import _align_api_if_sparse
except ImportError:  # pragma: no cover
    def _align_api_if_sparse(X):
        return X

__all__ = ["BaseSVM", "BaseSVC", "LIBSVM_IMPL", "class_pairs"]

LIBSVM_IMPL = ("c_svc", "nu_svc", "one_class", "epsilon_svr", "nu_svr")
#: sparse training data up to this dense size (bytes) is trained densely
DENSIFY_MAX_BYTES = 1 << 20
#: prediction evaluates the kernel against the support vectors in blocks of
#: about this many values (:meth:`BaseSVM._internal_decision`) ...
PREDICT_BLOCK_ELEMENTS = 1 << 16
#: ... and of at least this many rows
PREDICT_ROWS_AT_ONCE = 64


def max_sqnorm(X, rows):
    """The largest squared norm among the rows ``rows`` of ``X`` (dense or
    CSR), 0.0 when there is none; einsum, one thread (as check_scale)."""
    if len(rows) == 0:
        return 0.0
    Xr = X if len(rows) == X.shape[0] else X[rows]
    if sp.issparse(Xr):
        sq = np.asarray(Xr.multiply(Xr).sum(axis=1)).ravel()
    else:
        sq = np.einsum("ij,ij->i", Xr, Xr)
    return float(sq.max())


def class_pairs(k):
    """One-vs-one pairs ``(a, b)``, ``a < b``, in LIBSVM's order."""
    return [(a, b) for a in range(k) for b in range(a + 1, k)]


#: parameter value types whose validation :meth:`BaseSVM._validate_params` remembers
_PLAIN = frozenset({str, int, float, bool, type(None)})


def _labels_and_index(y):
    """``np.unique(y, return_inverse=True)`` for 1-D labels: the same sorted
    classes (y's dtype) and indices.  Integer labels in a range of at most
    a few times their number are counted (``np.bincount``) instead of
    sorted: np.unique's sort was a visible part of a small fit's
    validation (decision record 34p01); other labels go to np.unique."""
    if y.dtype.kind in "iu" and y.ndim == 1 and y.shape[0] > 0:
        lo, hi = int(y.min()), int(y.max())
        if hi - lo <= 4 * y.shape[0] + 64 and -2**62 < lo and hi < 2**62:
            z = y.astype(np.int64, copy=False)
            z = z - lo if lo else z
            present = np.bincount(z, minlength=hi - lo + 1) > 0
            cls = (np.flatnonzero(present) + lo).astype(y.dtype, copy=False)
            index = np.cumsum(present) - 1
            return cls, index[z]
    return np.unique(y, return_inverse=True)


_PAIR_LAYOUTS = {}


def _pair_layout(k):
    """For k classes, the pairs' classes ``(a0, b0, a1, b1, ...)`` in
    LIBSVM's order and the dual_coef_ row of each: ``b - 1`` for class a's
    rows, ``a`` for class b's (made once per k)."""
    out = _PAIR_LAYOUTS.get(k)
    if out is None:
        pairs = class_pairs(k)
        ab = np.array([c for pair in pairs for c in pair], dtype=np.int64)
        to_row = np.array([r for a, b in pairs for r in (b - 1, a)], dtype=np.int64)
        out = _PAIR_LAYOUTS[k] = (ab, to_row)
    return out


class BaseSVM(SteppedFitMixin, BaseEstimator):
    """Base of the five estimators (not for direct use).  Subclasses set
    ``_impl`` and their ``__init__`` with scikit-learn's parameters plus
    svmlab's ``solver`` and ``warm_start``."""

    _impl = None
    _parameter_constraints: dict = {
        "kernel": [StrOptions({"linear", "poly", "rbf", "sigmoid", "precomputed"}), callable],
        "degree": [Interval(Integral, 0, None, closed="left")],
        "gamma": [StrOptions({"scale", "auto"}), Interval(Real, 0.0, None, closed="left")],
        "coef0": [Interval(Real, None, None, closed="neither")],
        "tol": [Interval(Real, 0.0, None, closed="neither")],
        "C": [Interval(Real, 0.0, None, closed="right")],
        "nu": [Interval(Real, 0.0, 1.0, closed="right")],
        "epsilon": [Interval(Real, 0.0, None, closed="left")],
        "shrinking": ["boolean"],
        "probability": ["boolean"],
        "cache_size": [Interval(Real, 0, None, closed="neither")],
        "class_weight": [StrOptions({"balanced"}), dict, None],
        "verbose": ["verbose"],
        "max_iter": [Interval(Integral, -1, None, closed="left")],
        "random_state": ["random_state"],
        "solver": [StrOptions(set(_solve.SOLVERS))],
        "warm_start": ["boolean"],
    }

    @classmethod
    def _get_param_names(cls):
        """scikit-learn's parameter names (``__init__``'s signature), found
        once per class, as :meth:`svmlab._base.BaseKernelSVC._get_param_names`
        does: ``inspect.signature`` at every ``_validate_params`` and
        ``get_params`` was a sizeable part of a 300-row fit (decision record
        28s01)."""
        names = cls.__dict__.get("_svmlab_param_names")
        if names is None:
            names = super()._get_param_names()
            cls._svmlab_param_names = names
        return list(names)

    def _validate_params(self):
        """scikit-learn's parameter validation, run once per class and set
        of plain parameter values: a set whose every value is a ``str``,
        ``int``, ``float``, ``bool`` or None (immutable, so its answer cannot
        change) that passed once is not checked again (scikit-learn's
        ``validate_parameter_constraints`` was about 7 % of a small fit, and
        a cross-validation fits the same parameters again and again).  Any
        other value (a dict ``class_weight``, a ``RandomState``, a callable
        kernel) is checked every time, with scikit-learn's errors."""
        params = self.get_params(deep=False)
        key = []
        for name, v in params.items():
            if type(v) not in _PLAIN:
                key = None
                break
            key.append((name, type(v), v))
        cls = type(self)
        seen = cls.__dict__.get("_svmlab_valid_params")
        if key is not None and seen is not None and tuple(key) in seen:
            return
        super()._validate_params()
        if key is not None:
            if seen is None or len(seen) > 1024:
                seen = set()
                cls._svmlab_valid_params = seen
            seen.add(tuple(key))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        tags.input_tags.sparse = self.kernel != "precomputed"
        return tags

    # ------------------------------------------------------------------ fit
    @with_callbacks
    def fit(self, X, y, sample_weight=None, callback=None):
        """Fit the model (see the class docstring for the problem solved).

        ``X`` (n, d) dense or sparse, or the (n, n) Gram matrix for
        ``kernel="precomputed"``; ``y`` the labels or targets;
        ``sample_weight`` (n,) rescales each example's bound (zero or
        negative removes the example).  ``callback(record)`` (svmlab's step
        hook) is called after every step with a
        :class:`svmlab.svm._run.FamilyStep`; returning False stops with the
        feasible model reached.  Returns self."""
        return self._fit_run(self.start(X, y, sample_weight=sample_weight), X, y, callback)

    def iter_fit(self, X, y, sample_weight=None):
        """Generator of the fit's step records (:class:`svmlab.svm._run.FamilyStep`);
        the estimator is fitted when it is exhausted or closed."""
        yield from self._iter_run(self.start(X, y, sample_weight=sample_weight))

    def start(self, X, y, sample_weight=None):
        """Validate everything and return the fit's state, a
        :class:`svmlab.svm._run.FamilyRun`: ``run.step()`` takes one step and
        returns its record, ``run.finish()`` stores the fitted attributes."""
        self._validate_params()
        if hasattr(self, "_tags_cache"):
            del self._tags_cache
        sparse = sp.issparse(X)
        if sparse and self.kernel == "precomputed":
            raise TypeError("Sparse precomputed kernels are not supported.")
        self._sparse = sparse and not callable(self.kernel)
        if callable(self.kernel):
            check_consistent_length(X, y)
        elif _plain_valid_xy(X, y) and X.flags.c_contiguous:
            # what validate_data gives for a finite float64 C-ordered array
            # and 1-D numeric labels: X and y themselves, n_features_in_ set
            # and no feature names (its dataframe probes were about 8 % of a
            # small fit; every other input goes through it, with its errors)
            if hasattr(self, "feature_names_in_"):
                del self.feature_names_in_
            self.n_features_in_ = X.shape[1]
        else:
            X, y = validate_data(self, X, y, dtype=np.float64, order="C", accept_sparse="csr",
                                 accept_large_sparse=False)
            if sp.issparse(X):
                X = X.copy()
                X.sum_duplicates()
                X.sort_indices()
        if not callable(self.kernel) and self.kernel != "precomputed":
            # squared norms that overflow: refused before any work, in
            # SVC's words first (SVC itself sees it after its fit); on the
            # plain-array path too (tests/test_untrusted_extreme.py)
            try:
                check_scale(X)
            except ValueError as exc:
                raise ValueError("The dual coefficients or intercepts are not finite for "
                                 f"these data. {exc}") from None
        y = self._validate_targets(y)
        n = X.shape[0] if isinstance(X, np.ndarray) else _num_samples(X)
        if self._impl != "one_class" and n != y.shape[0]:
            raise ValueError("X and y have incompatible shapes.\n"
                             f"X has {n} samples, but y has {y.shape[0]}.")
        if self.kernel == "precomputed" and n != X.shape[1]:
            raise ValueError("Precomputed matrix must be a square matrix."
                             f" Input is a {X.shape[0]}x{X.shape[1]} matrix.")
        sw = np.asarray([] if sample_weight is None else sample_weight, dtype=np.float64)
        if sw.ndim == 0:
            sw = np.full(n, float(sw))
        if sw.shape[0] > 0 and sw.shape[0] != n:
            raise ValueError(
                "sample_weight and X have incompatible shapes: "
                f"{sw.shape!r} vs {getattr(X, 'shape', (n,))!r}\n"
                "Note: Sparse matrices cannot be indexed w/"
                "boolean masks (use `indices=True` in CV).")
        if sw.ndim != 1 and sw.size:
            raise ValueError(f"sample_weight must be 1-D, got shape {sw.shape}.")
        if sw.size and not np.all(np.isfinite(sw)):
            raise ValueError("sample_weight contains NaN or infinity; every weight must be "
                             "a finite number (zero or negative removes the example).")
        w = np.ones(n) if sw.size == 0 else sw
        self._gamma = self._resolve_gamma(X)
        self.shape_fit_ = X.shape if hasattr(X, "shape") else (n,)
        return self._start(X, self._training_copy(X), y, w)

    def _check_kernel_scale(self, Xt, keep):
        """Refuse, before any work, a named kernel whose values overflow
        float64 on the training rows ``keep`` of ``Xt`` (a poly kernel of a
        high degree, a huge gamma, gamma='scale' on data of a tiny variance):
        :func:`svmlab._validation.check_kernel_scale`, the check every
        formulation makes (SVR, NuSVR and OneClassSVM ran such a fit to a
        non-finite model).  Only linear, poly and sigmoid read the rows'
        squared norms; rbf needs a finite gamma alone."""
        if callable(self.kernel) or self.kernel == "precomputed":
            return
        sq = max_sqnorm(Xt, keep) if self.kernel in ("linear", "poly", "sigmoid") else 0.0
        check_kernel_scale(self._gamma, self.kernel, sq, self.degree, self.coef0)

    def _training_copy(self, X):
        """The rows the solvers train on: X itself, or for sparse X whose
        dense copy takes at most :data:`DENSIFY_MAX_BYTES` the dense copy,
        so that sparse and dense input give the same kernel values, hence
        the same model (scikit-learn's tests compare them to 7 digits);
        ``support_vectors_`` stay sparse."""
        if sp.issparse(X) and not callable(self.kernel) \
                and 8.0 * X.shape[0] * X.shape[1] <= DENSIFY_MAX_BYTES:
            return np.ascontiguousarray(X.toarray())
        return X

    def _resolve_gamma(self, X):
        if callable(self.kernel) or self.kernel == "precomputed":
            return 0.0
        if isinstance(self.gamma, str):
            if self.gamma == "scale":
                var = (X.multiply(X)).mean() - (X.mean()) ** 2 if sp.issparse(X) else X.var()
                return 1.0 / (X.shape[1] * var) if var != 0 else 1.0
            return 1.0 / X.shape[1]
        return float(self.gamma)

    def _validate_targets(self, y):
        """SVR and one-class: float targets (classifiers override).  A 1-D
        real numeric array is column_or_1d's answer already (its dataframe
        probes were about 80 us of a small regression fit); anything else
        goes through it, with its warnings and errors."""
        if isinstance(y, np.ndarray) and y.ndim == 1 and y.dtype.kind in "fiub":
            return np.ascontiguousarray(y, dtype=np.float64)
        return column_or_1d(y, warn=True).astype(np.float64, copy=False)

    def _bounds(self, y, w):
        """Per-example upper bounds of the problem (before removing rows)."""
        if self._impl in ("epsilon_svr", "nu_svr"):
            return float(self.C) * w
        return w.copy()  # one-class (nu-SVC: BaseSVC overrides)

    def _start(self, X, Xt, y, w):
        """The run of one problem (SVR, NuSVR, OneClassSVM; classifiers
        override).  ``Xt``: the rows the solvers train on
        (:meth:`_training_copy`)."""
        U = self._bounds(y, w)
        keep = np.flatnonzero(U > 0)
        if len(keep) == 0:
            raise ValueError("Invalid input - all samples have zero or negative weights.")
        self._check_kernel_scale(Xt, keep)
        kern = TrainKernel(self.kernel, Xt, self._gamma, self.degree, self.coef0)
        self.solver_ = _solve.choose_solver(self, self._impl, Xt, None, kern.kind, 1)
        bk = _solve.select_backend(self, self._impl, kern.kind)
        z, Uk = y[keep], U[keep]
        if self._impl == "epsilon_svr":
            prob = ref_dual.epsilon_svr(None, z, 1.0, float(self.epsilon), weight=Uk)
        elif self._impl == "nu_svr":
            prob = ref_dual.nu_svr(None, z, 1.0, float(self.nu), weight=Uk)
        else:
            prob = ref_dual.one_class(None, float(self.nu), weight=Uk)
        n_vars = 2 * len(keep) if self._impl in ("epsilon_svr", "nu_svr") else len(keep)
        last = self._check_warm_sizes([n_vars])
        # the parameters converted once: the problem and the options the
        # runs read (they read no estimator attribute)
        problem = _solve.FitProblem(self._impl, self.solver_, X, Xt, kern, self._gamma,
                                    self.degree, self.coef0, U, keep, [keep], [prob.U],
                                    duals=[prob])
        # every formulation runs on the compiled generalised dual here
        # (svmlab.smo.DualRun; "full": the whole kernel matrix at once)
        solving = bk.open(problem, FitOptions.of(self), last=last, estimator=self)
        return self._family_run(solving, None)

    def _family_run(self, solving, labels):
        """The :class:`svmlab.svm._run.FamilyRun` over ``solving``'s parts,
        the fit's problem and its solving kept on it (``fit_problem``,
        ``solving``) for :meth:`_fitted_attributes`."""
        pb = solving.problem
        run = FamilyRun(self, solving.n_parts, len(pb.keep), solving.open_part, pb.pairs,
                        pb.rows, labels=labels, threads=solving.threads,
                        traits=getattr(solving, "part_traits", None))
        run.fit_problem, run.solving = pb, solving
        return run

    def _store_run(self, run):
        """The fitted attributes of the state ``run`` reached (SolverRun's
        ``finish`` calls this after its warning)."""
        for name, value in self._fitted_attributes(run).items():
            setattr(self, name, value)
        # what SolverRun.finish's end-of-fit guard (non_finite_fit) would
        # find: nothing.  _status_attributes raised unless every problem's
        # coefficients and intercept are finite, and every multiplier
        # (alpha_) enters a coefficient (alpha y, alpha - alpha*, alpha / r):
        # a non-finite one makes it non-finite
        self._non_finite_reason = None
        if callable(self.kernel):
            self._X_fit = run.fit_problem.X
        self._after_store(run)

    def _after_store(self, run):
        """Hook for work after the attributes exist (classifiers: the
        probability model)."""

    def _fitted_attributes(self, run):
        """The fitted attributes of the state ``run`` has reached, as a dict
        (for :meth:`_store_run`, and for scikit-learn callbacks' fitted
        copies)."""
        pb = run.fit_problem
        res = run.solving.results(run)[0]
        keep, X = pb.keep, pb.X
        coef = res.coef
        sv = np.flatnonzero(coef != 0)
        support = keep[sv].astype(np.int32)
        dual = self._as_sparse_if(coef[sv][None, :])
        attrs = {
            "support_": support,
            "support_vectors_": self._support_vectors(X, support),
            "_dual_coef_": dual, "dual_coef_": dual,
            "_intercept_": np.array([-res.rho]), "intercept_": np.array([-res.rho]),
            "_n_support": np.array([len(sv), 0], dtype=np.int32),
            "_probA": np.empty(0), "_probB": np.empty(0),
            "n_iter_": int(res.n_iter), "alpha_": res.alpha, "_fit_rows": keep,
        }
        attrs.update(self._status_attributes(run, [res], pb.bounds))
        if self._impl == "one_class":
            attrs["offset_"] = np.array([res.rho])
        if self._impl == "nu_svr":
            attrs["epsilon_"] = float(-res.r)
        return attrs

    def _gram(self, kern, rows):
        """The kernel matrix over ``rows``, checked finite."""
        return self._checked(kern.gram(rows, rows))

    @staticmethod
    def _checked(K):
        """``K``, or scikit-learn's error when it has NaN or infinite values."""
        return _solve.check_finite_gram(K)

    def _check_warm_sizes(self, sizes):
        """``(last alphas, last bounds)`` for a warm start, or None (a cold
        start: ``warm_start`` off or no earlier fit).  The earlier fit must
        have had problems of the same sizes (the same rows and classes)."""
        if not self.warm_start:
            return None
        last = getattr(self, "_last_alpha", None)
        if last is None:
            return None
        if len(last) != len(sizes) or any(len(a) != m for a, m in zip(last, sizes)):
            raise ValueError(
                "warm_start=True needs the same training rows (and classes) as the last fit: "
                f"the last fit had problems of sizes {[len(a) for a in last]}, this one "
                f"{list(sizes)}. Set warm_start=False, or fit a new estimator.")
        return last, getattr(self, "_last_U", [None] * len(last))

    def _support_vectors(self, X, support):
        if callable(self.kernel) or self.kernel == "precomputed":
            return np.empty((0, 0))
        if sp.issparse(X):
            return _align_api_if_sparse(sp.csr_matrix(X[support]))
        return np.ascontiguousarray(X[support])

    def _as_sparse_if(self, dual):
        if self._sparse:
            return _align_api_if_sparse(sp.csr_matrix(dual))
        return dual

    def _status_attributes(self, run, results, bounds):
        """``converged_``, ``fit_status_``, ``stop_reason_`` and the warm-start
        memory; checks that the coefficients are finite (scikit-learn's
        message).  The warning for an early stop is the run's
        (:meth:`svmlab.svm._run.FamilyRun.warning_message`)."""
        # one check over every problem's coefficients (a loop of np.all
        # per pair was a sizeable part of a 45-pair fit's end)
        coefs = [r.coef for r in results]
        rhos = np.array([r.rho for r in results], dtype=np.float64)
        if not (np.isfinite(np.concatenate(coefs) if len(coefs) > 1 else coefs[0]).all()
                and np.isfinite(rhos).all()):
            raise ValueError(
                "The dual coefficients or intercepts are not finite. The input data may "
                "contain large values and need to be preprocessed.")
        converged = bool(run.converged)
        return {"converged_": converged, "fit_status_": 0 if converged else 1,
                "stop_reason_": run.stop_reason,
                "_last_alpha": [np.asarray(r.alpha) for r in results],
                "_last_U": [np.asarray(U) for U in bounds]}

    # -------------------------------------------------------------- predict
    def _validate_for_predict(self, X):
        check_is_fitted(self)
        if not callable(self.kernel):
            X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, order="C",
                              accept_large_sparse=False, reset=False)
        if self._sparse:
            if not sp.issparse(X):
                X = sp.csr_matrix(X)
            X = X.copy()
            X.sum_duplicates()
            X.sort_indices()
        if sp.issparse(X) and not self._sparse and not callable(self.kernel):
            raise ValueError(
                f"cannot use sparse input in {type(self).__name__!r} trained on dense data")
        if self.kernel == "precomputed" and X.shape[1] != self.shape_fit_[0]:
            raise ValueError(
                f"X.shape[1] = {X.shape[1]} should be equal to {self.shape_fit_[0]}, "
                "the number of samples at training time")
        sv = self.support_vectors_
        if not self._sparse and sv.size > 0 and self.n_support_.sum() != sv.shape[0]:
            raise ValueError(
                f"The internal representation of {type(self).__name__} was altered")
        return X

    def _internal_decision(self, X, validated=False):
        """LIBSVM's decision values (its sign), (m,) for one problem or
        (m, P) for the pairs of a classifier, from ``_dual_coef_``,
        ``_intercept_``, ``_n_support`` and the support vectors.

        Named kernels are evaluated in blocks of rows of X (about
        :data:`PREDICT_BLOCK_ELEMENTS` kernel values, at least
        :data:`PREDICT_ROWS_AT_ONCE` rows).  Why: the whole (m, n_SV) block
        and the five or six NumPy temporaries of its kernel, for a plot's
        grid of 250,000 points, came to 300-400 MB of fresh pages whose
        faults cost 0.4-0.8 s of system time on first use (the gallery's
        ``plot_svm_kernels`` and ``plot_svm_tie_breaking`` predict on such
        grids; docs/decisions/33g01-fresh-process-fixed-costs.md); blocks
        of half a megabyte reuse the same memory.  A row's value
        agrees with the whole block's to rounding (BLAS may sum a row in an
        order that depends on the block's size), as it already did between
        two sizes of X.  Callable and precomputed kernels take X whole (the
        callable is called once, as in scikit-learn)."""
        if not validated:
            X = self._validate_for_predict(X)
        if callable(self.kernel) or self.kernel == "precomputed":
            return self._decision_block(X)  # X may be any input the callable takes
        m = X.shape[0]
        step = max(PREDICT_ROWS_AT_ONCE,
                   PREDICT_BLOCK_ELEMENTS // max(1, self.support_vectors_.shape[0]))
        if step >= m:
            return self._decision_block(X)
        return np.concatenate([self._decision_block(X[lo:lo + step])
                               for lo in range(0, m, step)])

    def _decision_block(self, X):
        """:meth:`_internal_decision` of the validated rows ``X`` at once."""
        Kx = predict_kernel(self, X)
        D = self._dual_coef_
        D = D.toarray() if sp.issparse(D) else np.asarray(D)
        b = np.asarray(self._intercept_, dtype=np.float64)
        if Kx.shape[1] != D.shape[1]:
            raise ValueError(
                f"The internal representation of {type(self).__name__} was altered: "
                f"{D.shape[1]} dual coefficients for {Kx.shape[1]} support vectors.")
        if getattr(self, "classes_", None) is None or len(self.classes_) == 2 \
                or self._impl not in ("c_svc", "nu_svc"):
            return Kx @ D[0] + b[0]
        k = len(self.classes_)
        start = np.concatenate([[0], np.cumsum(self._n_support)])
        out = np.empty((Kx.shape[0], len(b)))
        for p, (a, c) in enumerate(class_pairs(k)):
            sa, sc = slice(start[a], start[a + 1]), slice(start[c], start[c + 1])
            out[:, p] = Kx[:, sa] @ D[c - 1, sa] + Kx[:, sc] @ D[a, sc] + b[p]
        return out

    def predict(self, X):
        """SVR/NuSVR: the regression values; OneClassSVM: +1 inside, -1 outside."""
        return self._internal_decision(X)

    @property
    def coef_(self):
        """Weights in the input space, ``kernel="linear"`` only (read-only)."""
        if self.kernel != "linear":
            raise AttributeError("coef_ is only available when using a linear kernel")
        coef = self._get_coef()
        if sp.issparse(coef):
            coef.data.flags.writeable = False
        else:
            coef.flags.writeable = False
        return coef

    def _get_coef(self):
        return safe_sparse_dot(self._dual_coef_, self.support_vectors_)

    @property
    def n_support_(self):
        """Number of support vectors for each class (one value for SVR and
        OneClassSVM)."""
        try:
            check_is_fitted(self)
        except NotFittedError:
            raise AttributeError
        if self._impl in ("c_svc", "nu_svc"):
            return self._n_support
        return np.array([self._n_support[0]])


class BaseSVC(BaseSVM):
    """Classifiers: SVC (C-SVC) and NuSVC (nu-SVC), one-vs-one over pairs."""

    def _validate_targets(self, y):
        # y from validate_data is already column_or_1d's answer (a 1-D
        # array); its second pass (the dataframe probes) is skipped
        y_ = y if isinstance(y, np.ndarray) and y.ndim == 1 else column_or_1d(y, warn=True)
        # scikit-learn's check, its cost skipped where its answer is known
        # (integer, boolean and integral float labels; the same errors)
        _check_label_type(y_)
        cls, y_idx = _labels_and_index(y_)
        # no class weights: every class weighs 1 (compute_class_weight's
        # answer, without its scan of y)
        self.class_weight_ = (np.ones(len(cls)) if self.class_weight is None
                              else compute_class_weight(self.class_weight, classes=cls, y=y_))
        if len(cls) < 2:
            raise ValueError(
                f"The number of classes has to be greater than one; got {len(cls)} class")
        self.classes_ = cls
        return np.asarray(y_idx, dtype=np.float64, order="C")

    def _bounds(self, y, w):
        y_idx = y.astype(np.int64)
        if self._impl == "c_svc":
            return float(self.C) * self.class_weight_[y_idx] * w
        return w.copy()  # nu-SVC: LIBSVM uses the sample weights alone

    def _start(self, X, Xt, y, w):
        y_idx = y.astype(np.int64)
        k = len(self.classes_)
        U = self._bounds(y, w)
        if self._impl == "nu_svc":
            self._check_nu_feasible(y_idx, w, k)
        keep = np.flatnonzero(U > 0)
        if len(keep) == 0:
            raise ValueError("Invalid input - all samples have zero or negative weights.")
        # the classes left with a positive weight (np.unique's answer for
        # labels 0..k-1, by one count)
        left = np.flatnonzero(np.bincount(y_idx[keep], minlength=k))
        if len(left) < 2:
            raise ValueError("Invalid input - all samples with positive weights belong to "
                             "the same class.")
        if len(left) < k:
            gone = [str(self.classes_[c]) for c in range(k) if c not in set(left.tolist())]
            raise ValueError(
                f"Invalid input - every sample of class(es) {', '.join(gone)} has zero or "
                "negative weight; one-vs-one needs every class with a positive weight "
                "(drop the class from the labels instead).")
        self._check_kernel_scale(Xt, keep)
        kern = TrainKernel(self.kernel, Xt, self._gamma, self.degree, self.coef0)
        yk, Uk = y_idx[keep], U[keep]
        self.solver_ = _solve.choose_solver(self, self._impl, Xt, yk, kern.kind, k)
        pairs = class_pairs(k)
        # each pair's rows (positions in X): class a's, then class b's
        # (one scan of the labels per class, not two per pair)
        by_class = [keep[np.flatnonzero(yk == c)] for c in range(k)]
        rows = [np.concatenate([by_class[a], by_class[b]]) for a, b in pairs]
        bk = _solve.select_backend(self, self._impl, kern.kind)
        # each pair's +1/-1 over its rows: read by the full and dual
        # backends only (the compiled C-SVC runs order their own rows)
        signs = None
        if bk is not _solve.ROWS:
            signs = []
            for r, (a, b) in zip(rows, pairs):
                sg = np.ones(len(r))
                sg[len(by_class[a]):] = -1.0
                signs.append(sg)
        seed = check_random_state(self.random_state).randint(1, 2**31 - 2)
        # the cores for the pairs (scikit-learn's n_jobs, read here, in the
        # caller's joblib.parallel_config context)
        threads = effective_n_jobs(getattr(self, "n_jobs", None))
        # the compiled C-SVC runs take no warm start (select_backend)
        last = None if bk is _solve.ROWS else self._check_warm_sizes([len(r) for r in rows])
        # the parameters converted once: the problem and the options the
        # runs read (they read no estimator attribute)
        problem = _solve.FitProblem(self._impl, self.solver_, X, Xt, kern, self._gamma,
                                    self.degree, self.coef0, U, keep, rows,
                                    [U[r] for r in rows], y_idx, k, pairs, signs,
                                    float(getattr(self, "nu", 0.5)))
        solving = bk.open(problem, FitOptions.of(self), seed=seed, threads=threads, last=last,
                          estimator=self)
        return self._family_run(solving, self.classes_)

    def _fitted_attributes(self, run):
        pb = run.fit_problem
        results = run.solving.results(run)
        attrs = self._pair_attributes(pb.X, pb.y_idx, pb.k, pb.rows, results)
        attrs.update({"_fit_rows": pb.keep, "_probA": np.empty(0),
                      "_probB": np.empty(0)})
        attrs.update(self._status_attributes(run, results, pb.bounds))
        return attrs

    def _after_store(self, run):
        if self.probability and not (run.interrupted or run.stopped):
            self._fit_probability(run.fit_problem, run.solving.backend, run.solving.opts)

    def _check_nu_feasible(self, y_idx, w, k):
        """LIBSVM's check: for every pair, ``nu (n_a + n_b) / 2 <= min(n_a,
        n_b)`` with the weighted class sizes (all weights, negative ones
        included, as LIBSVM counts them)."""
        counts = np.bincount(y_idx, weights=w, minlength=k)
        for a, b in class_pairs(k):
            if float(self.nu) * (counts[a] + counts[b]) / 2 > min(counts[a], counts[b]):
                raise ValueError("specified nu is infeasible")

    def _pair_attributes(self, X, y_idx, k, rows, results):
        """SVC's layout from the pairs' coefficients over their rows.

        The pairs' rows and coefficients are taken as one concatenation
        (``(k - 1) n`` entries for ``n`` kept rows), not scattered into a
        pairs x rows matrix (``k (k - 1) n / 2`` entries, most of them zero:
        on digits the largest serial part of the fit's end, decision record
        34p01).  Every entry of a support vector's row is written, zeros
        (and LIBSVM's ``-0.0`` of a class-b row) included, so the layout is
        the matrix's, value for value."""
        n = len(y_idx)
        R = np.concatenate(rows) if len(rows) > 1 else np.asarray(rows[0])
        coef = np.concatenate([res.coef for res in results]) if len(results) > 1 \
            else np.asarray(results[0].coef)
        m = np.zeros(n, dtype=bool)
        m[R[coef != 0]] = True
        sv = np.flatnonzero(m)
        # the support vectors class by class, in row order within a class
        support = sv[np.argsort(y_idx[sv], kind="stable")].astype(np.int32)
        cls = y_idx[support]
        n_support = np.bincount(cls, minlength=k).astype(np.int32)
        # LIBSVM's layout: the coefficient of a support vector of class a in
        # pair (a, b) sits in row b - 1, of class b in row a.  Pair p's rows
        # are class a's then class b's, each class in k - 1 pairs: the row
        # of every entry is the pair's (b - 1, a) repeated over the classes'
        # sizes
        ab, to_row = _pair_layout(k)
        sizes = np.bincount(y_idx[R], minlength=k) // (k - 1)
        on_sv = m[R]
        t = np.repeat(to_row, sizes[ab])[on_sv]
        where = np.empty(n, dtype=np.int64)
        where[support] = np.arange(len(support))
        dual = np.zeros((k - 1, len(support)))
        dual[t, where[R[on_sv]]] = coef[on_sv]
        _dual = self._as_sparse_if(dual)
        _intercept = np.array([-r.rho for r in results])
        return {
            "support_": support, "_n_support": n_support,
            "support_vectors_": self._support_vectors(X, support),
            "_dual_coef_": _dual, "_intercept_": _intercept,
            "intercept_": -_intercept if k == 2 else _intercept.copy(),
            "dual_coef_": -_dual if k == 2 else _dual,
            "n_iter_": np.array([r.n_iter for r in results], dtype=np.int32),
            "alpha_": [np.asarray(r.alpha) for r in results], "_pair_rows": rows,
        }

    # ---------------------------------------------------------- probability
    def _fit_probability(self, problem, bk, opts):
        """Platt's sigmoid per pair, on 5-fold cross-validated decision
        values (:mod:`svmlab.svm._probability`), each fold trained by the
        fit's own backend ``bk`` with its options ``opts`` (chosen once, at
        ``start``: chosen again after the fit, a warm start's memory, by
        then stored, sent a first fit's folds to the generalised dual)."""
        from ._probability import libsvm_permutation, sigmoid_fit

        y_idx = problem.y_idx
        seed = check_random_state(self.random_state).randint(np.iinfo("i").max)
        A, B = np.empty(len(problem.pairs)), np.empty(len(problem.pairs))
        for p, ((a, b), r) in enumerate(zip(problem.pairs, problem.rows)):
            perm = libsvm_permutation(seed, len(r))
            dec = self._cv_decision(bk, opts, problem, r, a, perm)
            A[p], B[p], _ = sigmoid_fit(dec, np.where(y_idx[r] == a, 1.0, -1.0))
        self._probA, self._probB = A, B

    def _cv_decision(self, bk, opts, problem, r, a, perm):
        """Cross-validated decision values (positive for class a) of the pair
        over rows ``r``, folds from the permutation ``perm`` of positions."""
        from ._probability import fold_bounds

        y_pm = np.where(problem.y_idx[r] == a, 1.0, -1.0)
        U = problem.U
        dec = np.zeros(len(r))
        for begin, end in fold_bounds(len(r)):
            test = perm[begin:end]
            train = np.concatenate([perm[:begin], perm[end:]])
            yt = y_pm[train]
            if not (yt > 0).any() or not (yt < 0).any():
                dec[test] = 1.0 if (yt > 0).any() else -1.0 if (yt < 0).any() else 0.0
                continue
            # the backend's solver on the training folds (the random
            # state drawn per fold, as before)
            seed = check_random_state(self.random_state).randint(1, 2**31 - 2)
            train_rows = r[train]
            coef, rho = bk.solve_binary(problem, opts, train_rows, yt, U[train_rows], seed,
                                        estimator=self)
            sv = np.flatnonzero(coef != 0)
            if len(sv) == 0:
                dec[test] = np.full(len(test), -rho)
                continue
            dec[test] = problem.kern.gram(r[test], train_rows[sv]) @ coef[sv] - rho
        return dec

    # ------------------------------------------------------------- predict
    def _decision_function(self, X):
        dec = self._internal_decision(X)
        if len(self.classes_) == 2:
            return -dec.ravel()
        return dec

    def decision_function(self, X):
        """Decision values: (m,) for two classes (positive for
        ``classes_[1]``); with k > 2 the (m, k(k-1)/2) pair values for
        ``decision_function_shape="ovo"`` (positive for the pair's first
        class), or SVC's (m, k) transform of them for ``"ovr"``."""
        dec = self._decision_function(X)
        if self.decision_function_shape == "ovr" and len(self.classes_) > 2:
            return _ovr_decision_function(dec < 0, -dec, len(self.classes_))
        return dec

    def predict(self, X):
        """Class labels: LIBSVM's one-vs-one vote (ties to the first class);
        with ``break_ties=True`` and k > 2 classes, the argmax of the "ovr"
        decision function."""
        check_is_fitted(self)
        if self.break_ties and self.decision_function_shape == "ovo":
            raise ValueError(
                "break_ties must be False when decision_function_shape is 'ovo'")
        k = len(self.classes_)
        if self.break_ties and self.decision_function_shape == "ovr" and k > 2:
            idx = np.argmax(self.decision_function(X), axis=1)
        else:
            dec = self._internal_decision(X)
            if k == 2:
                idx = np.where(dec > 0, 0, 1)
            else:
                votes = np.zeros((dec.shape[0], k), dtype=np.int64)
                for p, (a, b) in enumerate(class_pairs(k)):
                    pos = dec[:, p] > 0
                    votes[pos, a] += 1
                    votes[~pos, b] += 1
                idx = np.argmax(votes, axis=1)
        return self.classes_.take(np.asarray(idx, dtype=np.intp))

    def _check_proba(self):
        if not self.probability:
            raise AttributeError("predict_proba is not available when probability=False")
        return True

    @available_if(_check_proba)
    def predict_proba(self, X):
        """Class probabilities (m, k), columns in ``classes_`` order: Platt's
        sigmoid of each pair's decision value, coupled over the pairs
        (:mod:`svmlab.svm._probability`).  Needs ``probability=True`` at fit.
        As SVC's, they come from a cross-validated model of the decision
        values, so ``argmax predict_proba`` can differ from ``predict`` on a
        few points near the boundary; on very small data sets they mean
        little."""
        X = self._validate_for_predict(X)
        return self._predict_proba(X)

    @available_if(_check_proba)
    def predict_log_proba(self, X):
        """``log(predict_proba(X))``."""
        return np.log(self.predict_proba(X))

    def _predict_proba(self, X):
        from ._probability import couple, pairwise_matrix, sigmoid_predict

        if self._probA.size == 0 or self._probB.size == 0:
            raise NotFittedError(
                "predict_proba is not available when fitted with probability=False")
        dec = self._internal_decision(X, validated=True)
        k = len(self.classes_)
        dec = dec.reshape(-1, 1) if dec.ndim == 1 else dec
        probs = sigmoid_predict(dec, self._probA[None, :], self._probB[None, :])
        return couple(pairwise_matrix(probs, k, class_pairs(k)))

    def _get_coef(self):
        if self.dual_coef_.shape[0] == 1:
            return safe_sparse_dot(self.dual_coef_, self.support_vectors_)
        start = np.concatenate([[0], np.cumsum(self._n_support)])
        D = self.dual_coef_
        SV = self.support_vectors_
        coefs = []
        for a, b in class_pairs(len(self.classes_)):
            sa, sb = slice(start[a], start[a + 1]), slice(start[b], start[b + 1])
            da = D[b - 1, sa] if not sp.issparse(D) else D[[b - 1], sa]
            db = D[a, sb] if not sp.issparse(D) else D[[a], sb]
            coefs.append(safe_sparse_dot(da, SV[sa]) + safe_sparse_dot(db, SV[sb]))
        if sp.issparse(coefs[0]):
            return _align_api_if_sparse(sp.vstack(coefs).tocsr())
        return np.vstack([np.asarray(c).reshape(1, -1) for c in coefs])

    @property
    def probA_(self):
        """Platt's A of each pair (``probability=True``; empty otherwise)."""
        return self._probA

    @property
    def probB_(self):
        """Platt's B of each pair (``probability=True``; empty otherwise)."""
        return self._probB
