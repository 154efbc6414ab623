"""Kernel values for the SVM family: named kernels, precomputed Gram
matrices and callables, as :class:`sklearn.svm.SVC` takes them.

Problem.  A fit needs kernel values among the training rows (a Gram matrix
over a subset, for the readable dual solver and the probability folds) and,
at prediction, between new rows and the support vectors.  The three kinds of
kernel give them differently:

* a named kernel (``"linear"``, ``"poly"``, ``"rbf"``, ``"sigmoid"``):
  svmlab's :class:`svmlab.kernels.Kernel` (one matrix product, then the
  element-wise transform), for dense or CSR rows;
* ``"precomputed"``: ``X`` *is* the Gram matrix, ``K[i, j] = K(x_i, x_j)``
  at fit (n, n) and ``K(x_test_i, x_train_j)`` at prediction (m, n); values
  are read, never computed;
* a callable ``k(A, B)`` returning the (len(A), len(B)) matrix: called once
  on the whole training set at fit (as SVC does; it may take anything
  ``_num_samples`` understands: arrays, sparse matrices, lists of strings),
  and at prediction on ``(X, X_fit)``, whose columns of the support vectors
  are then read.

Contract.  :class:`TrainKernel` hands out ``gram(rows, cols)`` over training
rows (positions in the training set as given to ``fit``), the values a
solver trains on; :func:`predict_kernel` the (m, n_SV) block for prediction.
Both return C-contiguous float64 arrays.  A callable's result must be a
2-D numeric array of the right shape, else a ValueError says what came back.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..kernels import Kernel

__all__ = ["TrainKernel", "predict_kernel", "call_kernel", "NAMED"]

NAMED = ("linear", "poly", "rbf", "sigmoid")


def call_kernel(func, A, B):
    """``func(A, B)`` as a float64 array, checked: 2-D, ``(len(A), len(B))``,
    finite."""
    from sklearn.utils.validation import _num_samples

    K = func(A, B)
    if sp.issparse(K):
        K = K.toarray()
    try:
        K = np.asarray(K, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"The kernel callable returned a value that is not a numeric "
                         f"matrix ({type(K).__name__}): {exc}") from exc
    shape = (_num_samples(A), _num_samples(B))
    if K.shape != shape:
        raise ValueError(f"The kernel callable returned an array of shape {K.shape}; "
                         f"expected {shape} = (len(X), len(Y)) for kernel(X, Y).")
    return np.ascontiguousarray(K)


class TrainKernel:
    """Kernel values among the training rows of one fit.

    ``kind`` is ``"named"``, ``"precomputed"`` or ``"callable"``; ``X`` the
    training data as validated (a Gram matrix for ``"precomputed"``, the
    callable's full Gram matrix for ``"callable"``).  ``kernel_obj`` is the
    :class:`svmlab.kernels.Kernel` over all training rows for named kernels
    (None otherwise)."""

    def __init__(self, kernel, X, gamma, degree, coef0):
        self.degree, self.coef0, self.gamma = degree, coef0, gamma
        if callable(kernel):
            self.kind = "callable"
            self.G = call_kernel(kernel, X, X)
            self.n = self.G.shape[0]
        elif kernel == "precomputed":
            self.kind = "precomputed"
            self.G = np.ascontiguousarray(X, dtype=np.float64)
            self.n = self.G.shape[0]
        else:
            self.kind = "named"
            self.name = kernel
            self.G = None
            self.n = X.shape[0]
            self.X = X
            self._kernel_obj = None

    @property
    def kernel_obj(self):
        """The :class:`svmlab.kernels.Kernel` over every training row (named
        kernels; None otherwise), made when first read: the compiled C-SVC
        path makes its own and never reads it, and a small fit paid for its
        squared norms and data scan (decision record 28s01)."""
        if self.kind != "named":
            return None
        if self._kernel_obj is None:
            self._kernel_obj = Kernel(self.X, self.name, self.gamma, self.degree, self.coef0,
                                      binary=False)
        return self._kernel_obj

    @property
    def named(self):
        return self.kind == "named"

    def gram(self, rows=None, cols=None):
        """``K[rows][:, cols]`` (all rows / all columns when None), float64."""
        if self.G is not None:
            G = self.G
            if rows is not None:
                G = G[rows]
            if cols is not None:
                G = G[:, cols]
            return np.ascontiguousarray(G)
        k = self.kernel_obj
        if rows is None and cols is None:
            return np.ascontiguousarray(k.matrix())
        A = self.X if rows is None else self.X[rows]
        B = self.X if cols is None else self.X[cols]
        sub = Kernel(A, self.name, self.gamma, self.degree, self.coef0, binary=False)
        return np.ascontiguousarray(sub.matrix(Z=B))

    def diag(self, rows=None):
        if self.G is not None:
            d = np.diag(self.G)
        else:
            d = self.kernel_obj.diag()
        return np.ascontiguousarray(d if rows is None else d[rows])


def predict_kernel(est, X):
    """The (m, n_SV) kernel block between the rows ``X`` (validated) and
    the support vectors of the fitted ``est``."""
    sv = est.support_
    if callable(est.kernel):
        K = call_kernel(est.kernel, X, est._X_fit)
        return np.ascontiguousarray(K[:, sv])
    if est.kernel == "precomputed":
        Xd = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
        return np.ascontiguousarray(Xd[:, sv])
    SV = est.support_vectors_
    m = X.shape[0]
    if SV.shape[0] == 0:
        return np.zeros((m, 0))
    k = Kernel(SV, est.kernel, est._gamma, est.degree, est.coef0, binary=False)
    return np.ascontiguousarray(k.matrix(Z=X).T)
