"""Common estimator base for the kernel (dual) classifiers.

:class:`BaseKernelSVC` is shared by SMO, IRWLS, chunking and decomposition.
They all solve the same dual problem (Platt's TR eq. 11)::

    max_alpha  W(alpha) = sum_i alpha_i - 1/2 sum_ij y_i y_j K(x_i, x_j) alpha_i alpha_j
    s.t.       0 <= alpha_i <= C,   sum_i y_i alpha_i = 0

and share the fitted attributes and prediction:

``alpha_`` (n,)
    All n multipliers, each in [0, C].
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
    (``max_iter=-1`` still stops at LIBSVM's ``max(10_000_000, 100 n)``
    steps), ``"stalled"`` (no progress possible), ``"interrupted"``
    (Ctrl-C) or ``"callback"``; every one but the first and the last comes
    with a ConvergenceWarning (see :mod:`svmlab._stepping`).
``gamma_``
    The numeric gamma used (after ``"scale"``/``"auto"``).
"""

from __future__ import annotations

from numbers import Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted, validate_data

from ._stepping import SteppedFitMixin
from ._validation import KERNEL_CONSTRAINTS, SOLVER_CONSTRAINTS, check_binary, to_csr32
from .kernels import Kernel

__all__ = ["BaseKernelSVC"]


class BaseKernelSVC(SteppedFitMixin, ClassifierMixin, BaseEstimator):
    """Base class: subclasses implement ``_make_run(X, y, kernel)``."""

    _parameter_constraints: dict = {
        **SOLVER_CONSTRAINTS,
        **KERNEL_CONSTRAINTS,
        "cache_size": [Interval(Real, 0.0, None, closed="neither")],
        "progress": ["boolean"],
    }

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.classifier_tags.multi_class = False
        return tags

    # ------------------------------------------------------------------ fit
    def start(self, X, y):
        """Validate everything and return the solver state (lazy form)."""
        self._validate_params()
        X_in = X
        X, y_pm, classes = check_binary(X, y)
        validate_data(self, X_in, reset=True, skip_check_array=True)
        self._check_extra(X, y_pm)
        self.classes_ = classes
        kernel = Kernel(X, self.kernel, self.gamma, self.degree, self.coef0)
        self._fit_X = X
        self._fit_y = y_pm
        self._kernel_obj = kernel
        return self._make_run(X, y_pm, kernel)

    def _check_extra(self, X, y):
        """Solver-specific checks that need the data (e.g. working-set size)."""

    def _make_run(self, X, y, kernel):  # pragma: no cover - abstract
        raise NotImplementedError

    def _fitted_attributes(self, run):
        """The fitted attributes of the state ``run`` has reached, as a dict
        (what :meth:`_store_run` stores; also the ``fitted_estimator`` that a
        scikit-learn callback gets at a block boundary, see
        :mod:`svmlab._stepping`).  Needs the training data kept by
        :meth:`start`, so it is only valid during ``fit``."""
        res = run.result()
        alpha = np.asarray(res["alpha"], dtype=np.float64)
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

    def _store_run(self, run):
        for name, value in self._fitted_attributes(run).items():
            setattr(self, name, value)
        # training data are not kept beyond what prediction needs
        del self._fit_X, self._fit_y, self._kernel_obj

    # -------------------------------------------------------------- predict
    def _validate_X_predict(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse=["csr", "csc", "coo"], reset=False,
                          dtype=np.float64)
        return to_csr32(X) if sp.issparse(X) else np.ascontiguousarray(X)

    def decision_function(self, X, block=4096):
        """``f(x) = sum_i alpha_i y_i K(x_i, x) + intercept_``; positive
        values predict ``classes_[1]``."""
        X = self._validate_X_predict(X)
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
        d = self.decision_function(X)
        return self.classes_[(d > 0).astype(int)]
