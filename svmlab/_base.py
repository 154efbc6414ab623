"""Common estimator base for the kernel (dual) classifiers.

:class:`BaseKernelSVC` is shared by SMO, IRWLS, chunking and decomposition.
They all solve the same dual problem (Platt's TR eq. 11)::

    max_alpha  W(alpha) = sum_i alpha_i - 1/2 sum_ij y_i y_j K(x_i, x_j) alpha_i alpha_j
    s.t.       0 <= alpha_i <= C,   sum_i y_i alpha_i = 0

and share the fitted attributes and prediction:

``alpha_`` (n,)
    All n multipliers, each in [0, C_i] (``C_i = C`` without weights).
``intercept_`` (1,)
    ``f(x) = sum_i alpha_i y_i K(x_i, x) + intercept_[0]``; same shape and
    sign as :class:`sklearn.svm.SVC`.  ``y_i = +1`` for ``classes_[1]``.
``support_``, ``support_vectors_``, ``n_support_``, ``dual_coef_``
    scikit-learn's layout: ``dual_coef_ = (alpha * y)[support_][None, :]``.
``coef_`` (1, d)
    ``dual_coef_ @ support_vectors_`` for the linear kernel only.
``n_iter_``
    Steps taken (each solver says what a step is).
``converged_``
    Whether the optimality conditions held within ``tol`` at the end.
``stop_reason_``
    Why the fit ended: ``"converged"``, ``"max_iter"``, ``"iteration_cap"``
    (``max_iter=-1`` still stops at the safeguard of ``max(100_000_000,
    100 n)`` steps), ``"stalled"`` (no progress possible), ``"interrupted"``
    (Ctrl-C) or ``"callback"``; every one but the first and the last comes
    with a ConvergenceWarning (see :mod:`svmlab._stepping`).
``gamma_``
    The numeric gamma used (after ``"scale"``/``"auto"``).
``class_weight_`` (2,)
    The weight of each class in ``classes_`` (all ones without
    ``class_weight``), as :class:`sklearn.svm.SVC`.

Multiclass (k > 2 classes): LIBSVM's one-vs-one
------------------------------------------------
Every kernel classifier fits the k(k-1)/2 pairs of classes with its own
binary solver, one kernel store shared by all pairs, and SVC's fitted
layout (``support_`` grouped by class, ``n_support_`` (k,), ``dual_coef_``
(k-1, n_SV), ``intercept_`` and ``n_iter_`` (k(k-1)/2,), ``alpha_``
(k(k-1)/2, n)); ``decision_function_shape="ovr"`` (default) or ``"ovo"``
as SVC's, and ``predict`` by LIBSVM's vote.  With two classes nothing of
the above applies and ``decision_function_shape`` is ignored (as SVC).
Records of ``iter_fit``/``callback`` are :class:`svmlab._multiclass.PairStep`
(the pair, and the binary record).  Details and decisions:
:mod:`svmlab._multiclass`.

Weights (LIBSVM's weighted C-SVC, :class:`sklearn.svm.SVC`'s meaning)
----------------------------------------------------------------------
``fit(X, y, sample_weight=w)`` and the ``class_weight`` parameter (None, a
dict ``{label: weight}``, or ``"balanced"``, ``n / (k * count(label))`` over
every training row, as scikit-learn's ``compute_class_weight``) give every
example its own upper bound::

    0 <= alpha_i <= C_i = C * class_weight[y_i] * sample_weight_i

(the primal ``1/2 |w|^2 + sum_i C_i xi_i``).  The solvers read ``C_i``
wherever the unweighted algorithms read C; without weights every ``C_i``
is C and the iterates are exactly those of a scalar C.

* Negative, NaN or infinite weights, or a ``sample_weight`` of the wrong
  shape, raise a ValueError before any work starts.
* Examples whose ``C_i`` is 0 are removed before training, as LIBSVM in
  scikit-learn does (their multiplier could only be 0).  The solver (its
  records, ``start`` and ``iter_fit``, their indices ``i1``, ``i2``, ...)
  sees only the remaining rows, in their order: ``run.kept`` (None when
  nothing was removed) maps its indices to the rows of X.  The fitted
  attributes index the rows of X as passed: ``alpha_`` has all n entries
  (0 for the removed rows) and ``support_`` holds row numbers of X.  (This
  is a deliberate difference from SVC, whose ``support_`` then counts the
  remaining rows only.)  ``gamma="scale"``/``"auto"`` is computed from the
  remaining rows (SVC: from all rows), so a fit with zero weights is
  exactly the fit on the remaining rows.  If fewer than two classes keep a
  positive weight, ``fit`` raises a ValueError.
* ``sample_weight=None`` and ``class_weight=None``, or weights that are
  all 1, give exactly the unweighted fit (same iterates, same ``alpha_``).

Kernel values and threads (parameters of every kernel estimator)
----------------------------------------------------------------
``cache_dtype`` : {"auto", "float32", "float64"}, default="auto"
    The type of the cached kernel values (LIBSVM's ``Qfloat`` is float32).
    ``"auto"`` is float32 when the full kernel matrix does not fit in
    ``cache_size`` at float64 -- the large problems, where rows are
    recomputed and memory and BLAS speed matter -- and float64 when it does:
    every row is then computed once, so float32 would only round the values
    and make the readable references of :mod:`svmlab.reference` (which
    compute in float64) drift from the steps taken.  The resolved type is the
    fitted attribute ``cache_dtype_``.
    float32 rows take half the memory, so ``cache_size`` holds twice as many,
    and dense rows and blocks come from single-precision BLAS on a float32
    copy of X (``4 n d`` more bytes); gradients, multipliers and the
    intercept stay float64.  ``"float64"`` keeps float64 kernel values:
    block rows equal the single rows bit for bit, rows over a subset sum
    entry by entry (the last bits may differ), and every rbf value takes
    the same exp (svmlab's own, within 2 ulp of libm's, on every path).  The
    precision of each path is stated in :mod:`svmlab.kernels._blocks`.
``n_jobs`` : int or None, default=None
    BLAS threads for large kernel blocks and rows, with scikit-learn's
    conventions: ``None`` is 1 unless inside a ``joblib.parallel_config``
    context, -1 all cores.  Solvers whose run is kernel rows throughout
    (SMO) run with that many BLAS threads; those that also factorise small
    matrices (IRWLS, chunking, decomposition) keep one thread for those and
    use ``n_jobs`` threads for blocks of at least
    :data:`svmlab._stepping.BLOCK_THREADS_MIN_WORK` multiply-adds (two
    threads slowed 200 x 200 Cholesky factors on a busy 2-core machine).
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ._stepping import FitOptions, SteppedFitMixin, effective_n_jobs, with_callbacks
from ._validation import (KERNEL_CONSTRAINTS, SOLVER_CONSTRAINTS, check_classification,
                          check_kernel_scale, check_weights, to_csr32)
from .kernels._rows import Kernel, resolve_gamma
from .kernels.cache import n_slots_for

__all__ = ["BaseKernelSVC", "example_bounds", "start_kernel_run"]


def example_bounds(est, n):
    """The upper bounds a solver state of ``est`` works with: the scalar
    ``C`` when every example has it (no weights, or weights that change
    nothing), else the (n,) array ``C_i = C * weight_i`` that
    :meth:`BaseKernelSVC.start` computed.  numpy code broadcasts either, so
    the unweighted path is the scalar one, unchanged."""
    C = float(est.C)
    Cv = getattr(est, "_fit_Cv", None)
    if Cv is None or len(Cv) != n or np.all(Cv == C):
        return C
    return np.ascontiguousarray(Cv, dtype=np.float64)


def resolve_cache_dtype(cache_dtype, n, cache_size_mb):
    """The type of the cached kernel values for ``n`` examples:
    ``cache_dtype`` itself, or for ``"auto"`` float64 when every full row
    fits in ``cache_size_mb`` at float64 (the whole kernel matrix is then
    computed once: float32 would save no kernel work, only round it) and
    float32 otherwise (LIBSVM's ``Qfloat``: twice the rows in the same
    memory, single-precision BLAS for dense rows and blocks)."""
    if cache_dtype != "auto":
        return cache_dtype
    return "float64" if n_slots_for(n, cache_size_mb, 8) >= n else "float32"


def start_kernel_run(X, y_idx, classes, sample_weight, opts, make_run, *, gamma,
                     cache_dtype="auto", class_weight=None, n_jobs=None, check_extra=None,
                     estimator=None, name=None, qfloat=False):
    """The solver run of a kernel C-SVC over checked data, with no
    estimator object needed: what :meth:`BaseKernelSVC.start` does after
    its validation (``X``, ``y_idx``, ``classes`` as
    :meth:`BaseKernelSVC._start_checked` takes them).

    ``opts`` (:class:`svmlab._stepping.FitOptions`) the parameters; its
    ``Cv`` and ``cache_dtype`` are replaced here by the per-example bounds
    ``C * class_weight[y_i] * sample_weight_i`` of the kept rows and by
    ``cache_dtype`` resolved (:func:`resolve_cache_dtype`).
    ``make_run(X, y_pm, kernel, opts)`` makes a binary run (each pair's,
    for k > 2 classes: one-vs-one, :class:`svmlab._multiclass.MulticlassRun`).
    ``gamma`` the kernel's (``"scale"``, ``"auto"`` or a number),
    ``check_extra(X, y_pm)`` a solver's data check (on the smallest pair for
    k > 2: the solvers bound their working set by the number of samples),
    ``n_jobs`` the cores.  Every check runs before any solver work.
    ``estimator`` is held by the run (its ``finish`` stores into it) and
    ``name`` names the run (and each pair's) in its messages when there is
    no estimator.  ``qfloat``: the kernel's float64 values rounded to
    float32 precision (LIBSVM's ``Qfloat``, :class:`svmlab.kernels.Kernel`),
    what the drop-in classes ask for.

    Returns ``(run, state)``: ``state`` the attributes an estimator keeps
    of the fit (``classes_``, ``class_weight_``, ``cache_dtype_``,
    ``_fit_X``, ``_fit_y``, ``_fit_yidx``, ``_fit_keep``, ``_fit_Cv``,
    ``_kernel_obj``); nothing is written anywhere."""
    C = float(opts.C)
    k = len(classes)
    if k > 2:
        from ._multiclass import multiclass_weights

        w, cw, keep = multiclass_weights(y_idx, classes, sample_weight, class_weight)
        Cv = np.ascontiguousarray(C * w)
        X_all, yi_all = X, y_idx
        if keep is not None:
            X, y_idx, Cv = X[keep], y_idx[keep], Cv[keep]
        counts = np.bincount(y_idx, minlength=k)
        if check_extra is not None:
            two = np.argsort(counts, kind="stable")[:2]
            m = np.isin(y_idx, two)
            check_extra(X[np.flatnonzero(m)], np.where(y_idx[m] == min(two), 1.0, -1.0))
        # the kernel over the rows ordered by class (stable: row order within
        # a class), gamma from the rows as given (SVC's)
        perm = np.argsort(y_idx, kind="stable")
        coff = np.concatenate([[0], np.cumsum(counts)])
        kernel = Kernel(X[perm], opts.kernel, resolve_gamma(gamma, X), opts.degree, opts.coef0,
                        qfloat=qfloat)
    else:
        yi_all = None
        y_pm = np.where(y_idx == 1, 1.0, -1.0)
        w, cw, keep = check_weights(y_pm, classes, sample_weight, class_weight)
        Cv = np.ascontiguousarray(C * w)
        y_all = y_pm
        X_all = X
        if keep is not None:
            X, y_pm, Cv = X[keep], y_pm[keep], Cv[keep]
        if check_extra is not None:
            check_extra(X, y_pm)
        kernel = Kernel(X, opts.kernel, gamma, opts.degree, opts.coef0, qfloat=qfloat)
    sq = kernel.data.sqnorm
    check_kernel_scale(kernel.gamma_, opts.kernel, float(sq.max()) if sq.size else 0.0,
                       opts.degree, opts.coef0)
    cdt = resolve_cache_dtype(cache_dtype, X.shape[0], opts.cache_size)
    if cdt == "float32":
        kernel.ensure_float32()  # the float32 copy of dense X for SGEMV/SGEMM
    threads = effective_n_jobs(n_jobs)
    # dataclasses.replace(opts, Cv=Cv, cache_dtype=cdt), without its cost
    run_opts = opts.replaced(Cv=Cv, cache_dtype=cdt)
    state = {"class_weight_": cw, "classes_": classes, "cache_dtype_": cdt,
             "_fit_X": X_all, "_fit_y": None if k > 2 else y_all, "_fit_yidx": yi_all,
             "_fit_keep": keep, "_fit_Cv": Cv, "_kernel_obj": kernel}
    if k > 2:
        from ._multiclass import MulticlassRun

        run = MulticlassRun(estimator, kernel, perm, coff, classes, Cv[perm], threads,
                            opts=run_opts, make_run=make_run, name=name)
        run.blas_threads = threads
    else:
        run = make_run(X, y_pm, kernel, run_opts)
        if estimator is None and name is not None:
            run.name = name
        if run.blas_threads is None:
            run.blas_threads = threads
    run.kept = keep
    run.n_jobs = threads
    return run, state


class BaseKernelSVC(SteppedFitMixin, ClassifierMixin, BaseEstimator):
    """Base class: subclasses implement ``_make_run(X, y, kernel)``."""

    _parameter_constraints: dict = {
        **SOLVER_CONSTRAINTS,
        **KERNEL_CONSTRAINTS,
        "cache_size": [Interval(Real, 0.0, None, closed="neither")],
        "cache_dtype": [StrOptions({"auto", "float32", "float64"})],
        "n_jobs": [Integral, None],
        "progress": ["boolean"],
        "class_weight": [StrOptions({"balanced"}), dict, None],
        "decision_function_shape": [StrOptions({"ovr", "ovo"})],
    }

    @classmethod
    def _get_param_names(cls):
        """scikit-learn's parameter names (from ``__init__``'s signature),
        found once per class: ``inspect.signature`` cost about 0.15 ms at
        every ``_validate_params`` and ``get_params``, a sizeable part of a
        small fit.  (Decision: cached in the class's own ``__dict__``, so a
        subclass with its own ``__init__`` gets its own names.)"""
        names = cls.__dict__.get("_svmlab_param_names")
        if names is None:
            names = super()._get_param_names()
            cls._svmlab_param_names = names
        return list(names)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.classifier_tags.multi_class = True
        return tags

    # ------------------------------------------------------------------ fit
    @with_callbacks
    def fit(self, X, y, sample_weight=None, callback=None):
        """Train.  ``sample_weight`` (n,) non-negative: example i gets the
        upper bound ``C_i = C * class_weight[y_i] * sample_weight_i``
        (LIBSVM's meaning; zero removes the example, see the module
        docstring).  ``callback(record)`` is called after every step;
        returning ``False`` from it stops training with the model reached
        so far.  scikit-learn callbacks set with ``set_callbacks`` are called
        per block of steps (see :mod:`svmlab._stepping`)."""
        return self._fit_run(self.start(X, y, sample_weight=sample_weight), X, y, callback)

    def iter_fit(self, X, y, sample_weight=None):
        """Generator of step records; the estimator is fitted when the
        generator is exhausted or closed.  ``sample_weight`` as in :meth:`fit`."""
        yield from self._iter_run(self.start(X, y, sample_weight=sample_weight))

    def start(self, X, y, sample_weight=None):
        """Validate everything and return the solver state (lazy form).
        ``sample_weight`` as in :meth:`fit`."""
        self._validate_params()
        X_in = X
        X, y_idx, classes = check_classification(X, y)
        validate_data(self, X_in, reset=True, skip_check_array=True)
        return self._start_checked(X, y_idx, classes, sample_weight)

    def _start_checked(self, X, y_idx, classes, sample_weight):
        """:meth:`start` on data already checked as :meth:`start` checks
        them: ``X`` as :func:`svmlab._validation.check_classification`
        returns it (float64, C-contiguous, finite, squared norms checked),
        ``y_idx`` (n,) int64 label indices, ``classes`` the sorted labels,
        the parameters validated.  For the drop-in classes of
        :mod:`svmlab.svm`, which validate everything once before handing
        their rows over (scikit-learn's ``_base.py`` converts once before
        it calls libsvm): their small fits paid for a second validation
        (decision record 28s01).  Sets no ``n_features_in_``.  The work is
        :func:`start_kernel_run`'s (one code path with the SVM family's
        runs, which have no estimator of this class); this stores what it
        hands back."""
        run, state = start_kernel_run(
            X, y_idx, classes, sample_weight, FitOptions.of(self), self._make_run,
            gamma=self.gamma, cache_dtype=self.cache_dtype, class_weight=self.class_weight,
            n_jobs=self.n_jobs, check_extra=self._check_extra, estimator=self)
        for name, value in state.items():
            setattr(self, name, value)
        return run

    def _check_extra(self, X, y):
        """Solver-specific checks that need the data (e.g. working-set size)."""

    def _non_finite_fit(self):
        """What of the fitted model is not finite (None: all is), for the
        end-of-fit guard of :meth:`svmlab._stepping.SolverRun.finish`; run by
        :meth:`_store_run` while the training data are still at hand.  The
        multipliers, the intercepts, ``coef_``, and the decision values on
        the training rows, bounded without computing them: ``|f(x)| <= sum
        |dual_coef_| * max K + |intercept_|``, ``max K`` the kernel's bound
        over the training rows (1 for rbf and sigmoid), provided the squared
        norms and gamma are finite; otherwise they are computed."""
        for name in ("alpha_", "dual_coef_", "intercept_", "coef_"):
            v = getattr(self, name, None)
            if v is not None and not np.all(np.isfinite(np.asarray(v))):
                return name
        sq = self._kernel_obj.data.sqnorm
        sq = float(sq.max()) if sq.size else 0.0
        with np.errstate(over="ignore", invalid="ignore"):
            kmax = {"linear": sq,
                    "poly": np.float64(self.gamma_ * sq + abs(self.coef0)) ** float(self.degree)
                    }.get(self.kernel, 1.0)
            bound = (float(np.abs(self.dual_coef_).sum()) * kmax
                     + float(np.abs(self.intercept_).max()))
            if np.isfinite(bound) and np.isfinite(sq) and np.isfinite(self.gamma_):
                return None   # (the kernel's own arithmetic is finite too)
            dec = self.decision_function(self._fit_X)
        return None if np.all(np.isfinite(dec)) else "decision values"

    def _make_run(self, X, y, kernel):  # pragma: no cover - abstract
        raise NotImplementedError

    def _fitted_attributes(self, run):
        """The fitted attributes of the state ``run`` has reached, as a dict
        (what :meth:`_store_run` stores; also the ``fitted_estimator`` that a
        scikit-learn callback gets at a block boundary, see
        :mod:`svmlab._stepping`).  Needs the training data kept by
        :meth:`start`, so it is only valid during ``fit``."""
        if getattr(self, "_fit_yidx", None) is not None:
            return self._multiclass_attributes(run)
        res = run.result()
        alpha = np.asarray(res["alpha"], dtype=np.float64)
        if self._fit_keep is not None:
            # zero-weight rows were removed before training: their alpha is 0
            alpha_kept = alpha
            alpha = np.zeros(self._fit_y.shape[0])
            alpha[self._fit_keep] = alpha_kept
        y = self._fit_y
        X = self._fit_X
        support = np.flatnonzero(alpha > 0).astype(np.int32)
        sv = X[support]
        dual_coef = (alpha * y)[support][None, :]
        gamma = self._kernel_obj.gamma_
        attrs = {
            "alpha_": alpha,
            "intercept_": np.array([float(res["intercept"])]),
            "support_": support,
            "support_vectors_": sv,
            "dual_coef_": dual_coef,
            "n_support_": np.array([np.sum(y[support] < 0), np.sum(y[support] > 0)],
                                   dtype=np.int32),
            "n_iter_": int(run.n_iter),
            "converged_": bool(run.converged),
            "stop_reason_": run.stop_reason,
            "fit_time_": float(run.elapsed),
            "gamma_": gamma,
            "shape_fit_": X.shape,
        }
        for k, v in res.items():
            if k not in ("alpha", "intercept"):
                attrs[k + "_"] = v
        if self.kernel == "linear":
            w = dual_coef @ sv
            attrs["coef_"] = np.asarray(w.toarray() if sp.issparse(w) else w).reshape(1, -1)
        attrs["_sv_kernel"] = Kernel(sv if len(support) else X[:1],
                                     self.kernel, gamma, self.degree, self.coef0)
        return attrs

    def _multiclass_attributes(self, run):
        """The fitted attributes of a one-vs-one state, in SVC's layout
        (:func:`svmlab._multiclass.ovo_layout`)."""
        from ._multiclass import ovo_layout

        res = run.result()
        keep = self._fit_keep
        rows = [run.pair_rows(p) if keep is None else keep[run.pair_rows(p)]
                for p in range(len(run.pairs))]
        k = len(self.classes_)
        alpha, support, n_support, dual_coef, pair_coef = ovo_layout(
            self._fit_yidx, rows, res["alphas"], k)
        X = self._fit_X
        sv = X[support]
        gamma = self._kernel_obj.gamma_
        attrs = {
            "alpha_": alpha,
            "intercept_": np.asarray(res["intercepts"], dtype=np.float64),
            "support_": support,
            "support_vectors_": sv,
            "dual_coef_": dual_coef,
            "n_support_": n_support,
            "n_iter_": np.asarray(res["n_iter"], dtype=np.int32),
            "converged_": bool(run.converged),
            "stop_reason_": run.stop_reason,
            "fit_time_": float(run.elapsed),
            "gamma_": gamma,
            "shape_fit_": X.shape,
            "_pair_coef": pair_coef,
        }
        for key, v in res.items():
            if key not in ("alphas", "intercepts", "n_iter"):
                attrs[key + "_"] = v
        if self.kernel == "linear":
            w = pair_coef @ sv if len(support) else np.zeros((len(run.pairs), X.shape[1]))
            attrs["coef_"] = np.asarray(w.toarray() if sp.issparse(w) else w)
        attrs["_sv_kernel"] = Kernel(sv if len(support) else X[:1],
                                     self.kernel, gamma, self.degree, self.coef0)
        return attrs

    def _store_run(self, run):
        if getattr(self, "_fit_yidx", None) is None:
            # a binary fit leaves no multiclass attribute of an earlier fit
            self.__dict__.pop("_pair_coef", None)
        for name, value in self._fitted_attributes(run).items():
            setattr(self, name, value)
        # read (and removed) by the end-of-fit guard, SolverRun.finish
        self._non_finite_reason = self._non_finite_fit()
        # training data are not kept beyond what prediction needs
        del self._fit_X, self._fit_y, self._kernel_obj, self._fit_keep, self._fit_Cv
        del self._fit_yidx

    # -------------------------------------------------------------- predict
    def _validate_X_predict(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse=["csr", "csc", "coo"], reset=False,
                          dtype=np.float64)
        return to_csr32(X) if sp.issparse(X) else np.ascontiguousarray(X)

    def _ovo_decision(self, X, block=4096):
        """(n, k(k-1)/2) one-vs-one decision values (LIBSVM's: positive for
        the first class of each pair); the support vectors' kernel values
        are computed once for all pairs."""
        P = self.intercept_.shape[0]
        if len(self.support_) == 0:
            return np.tile(self.intercept_, (X.shape[0], 1))
        if self.kernel == "linear":
            out = X @ self.coef_.T
            return np.asarray(out) + self.intercept_
        out = np.empty((X.shape[0], P))
        coef = self._pair_coef
        for s in range(0, X.shape[0], block):
            Kb = self._sv_kernel.matrix(Z=X[s:s + block])
            out[s:s + block] = (coef @ Kb).T
        return out + self.intercept_

    def decision_function(self, X, block=4096):
        """``f(x) = sum_i alpha_i y_i K(x_i, x) + intercept_``; positive
        values predict ``classes_[1]``.  With k > 2 classes: the one-vs-one
        values (n, k(k-1)/2) for ``decision_function_shape="ovo"``, and for
        ``"ovr"`` (n, k) SVC's transform of them
        (``sklearn.utils.multiclass._ovr_decision_function``: votes plus
        confidences squashed below 1/3)."""
        X = self._validate_X_predict(X)
        if len(self.classes_) > 2:
            from sklearn.utils.multiclass import _ovr_decision_function

            dec = self._ovo_decision(X, block)
            if getattr(self, "decision_function_shape", "ovr") == "ovr":
                return _ovr_decision_function(dec < 0, -dec, len(self.classes_))
            return dec
        if len(self.support_) == 0:
            return np.full(X.shape[0], self.intercept_[0])
        if self.kernel == "linear":
            out = X @ self.coef_[0]
            return np.asarray(out).ravel() + self.intercept_[0]
        out = np.empty(X.shape[0])
        coef = self.dual_coef_[0]
        for s in range(0, X.shape[0], block):
            Kb = self._sv_kernel.matrix(Z=X[s:s + block])
            out[s:s + block] = coef @ Kb
        return out + self.intercept_[0]

    def predict(self, X):
        check_is_fitted(self)
        if len(self.classes_) > 2:
            from ._multiclass import ovo_votes

            X = self._validate_X_predict(X)
            return self.classes_[ovo_votes(self._ovo_decision(X), len(self.classes_))]
        d = self.decision_function(X)
        return self.classes_[(d > 0).astype(int)]
