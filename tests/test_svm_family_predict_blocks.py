"""Prediction in blocks of rows (``BaseSVM._internal_decision``): the
decision values of more rows than a block match a brute-force evaluation
of the fitted model (scikit-learn's pairwise kernels, the dual coefficients
and intercepts written out here) and the whole (m, n_SV) kernel block
evaluated at once, to rounding.

Unblocked, a plot's grid of 250,000 points made 300-400 MB of NumPy
temporaries whose page faults cost 0.4-0.8 s of system time on first use
(docs/decisions/33g01-fresh-process-fixed-costs.md)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics.pairwise import linear_kernel, polynomial_kernel, rbf_kernel

import svmlab
from svmlab.svm import _base

KERNELS = {"rbf": dict(gamma=0.5), "linear": {}, "poly": dict(gamma=0.5, degree=3, coef0=1.0)}


def _brute_kernel(A, B, kernel):
    p = KERNELS[kernel]
    if kernel == "rbf":
        return rbf_kernel(A, B, gamma=p["gamma"])
    if kernel == "linear":
        return linear_kernel(A, B)
    return polynomial_kernel(A, B, degree=p["degree"], gamma=p["gamma"], coef0=p["coef0"])


def _brute_decision(est, G, kernel):
    """decision_function of the fitted ``est`` from its public attributes:
    scikit-learn's layout (dual_coef_ rows, one-vs-one pairs in order)."""
    SV = est.support_vectors_
    SV = SV.toarray() if sp.issparse(SV) else SV
    K = _brute_kernel(G, SV, kernel)
    D = est.dual_coef_
    D = D.toarray() if sp.issparse(D) else np.asarray(D)
    if not hasattr(est, "classes_") or len(est.classes_) == 2:
        return K @ D[0] + est.intercept_[0]
    k = len(est.classes_)
    start = np.concatenate([[0], np.cumsum(est.n_support_)])
    cols, p = [], 0
    for a in range(k):
        for c in range(a + 1, k):
            sa, sc = slice(start[a], start[a + 1]), slice(start[c], start[c + 1])
            cols.append(K[:, sa] @ D[c - 1, sa] + K[:, sc] @ D[a, sc] + est.intercept_[p])
            p += 1
    return np.column_stack(cols)


def _data(k):
    rng = np.random.RandomState(0)
    X = rng.randn(90, 3)
    y = np.arange(90) % k
    X += y[:, None] * 0.8
    return X, y


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("kernel", sorted(KERNELS))
@pytest.mark.parametrize("name,k", [("SVC", 2), ("SVC", 3), ("NuSVC", 3), ("SVR", 0),
                                    ("OneClassSVM", 0)])
def test_blocked_prediction_is_the_fitted_model(name, k, kernel, sparse):
    X, y = _data(max(k, 2))
    X = sp.csr_matrix(X) if sparse else X
    extra = {"decision_function_shape": "ovo"} if k > 2 else {}
    est = getattr(svmlab, name)(kernel=kernel, **KERNELS[kernel], **extra)
    if name == "OneClassSVM":
        est.fit(X)
    else:
        est.fit(X, y if k else np.arange(90) % 7 * 0.3)
    n_sv = est.support_vectors_.shape[0]
    step = max(_base.PREDICT_ROWS_AT_ONCE, _base.PREDICT_BLOCK_ELEMENTS // n_sv)
    # more rows than a block, and not a multiple of it (a short last block)
    m = 3 * step + 37
    G = np.random.RandomState(1).uniform(-3, 4, size=(m, 3))
    Gin = sp.csr_matrix(G) if sparse else G
    got = est._internal_decision(Gin)
    whole = est._decision_block(est._validate_for_predict(Gin))
    assert got.shape == whole.shape and got.shape[0] == m
    ref = _brute_decision(est, G, kernel)
    # rounding bound: the size of the terms summed (|K| |dual_coef_| + |b|),
    # not of the sum, which may cancel to near zero
    SV = est.support_vectors_
    SV = SV.toarray() if sp.issparse(SV) else SV
    D = est.dual_coef_
    D = D.toarray() if sp.issparse(D) else np.asarray(D)
    terms = float(np.abs(_brute_kernel(G, SV, kernel)).max() * np.abs(D).sum(axis=1).max()
                  + np.abs(est.intercept_).max())
    np.testing.assert_allclose(got, whole, rtol=0, atol=1e-13 * terms)
    f = est.decision_function(Gin) if hasattr(est, "decision_function") else est.predict(Gin)
    if name == "SVC" and k == 2:
        ref = ref.ravel()
    if name in ("SVR",):
        ref = ref.ravel()
    np.testing.assert_allclose(np.asarray(f).reshape(ref.shape), ref, rtol=0, atol=1e-12 * terms)


def test_callable_kernel_is_called_once():
    X, y = _data(2)
    calls = []

    def kern(A, B):
        calls.append(A.shape[0])
        return rbf_kernel(A, B, gamma=0.5)

    est = svmlab.SVC(kernel=kern).fit(X, y)
    calls.clear()
    G = np.random.RandomState(1).randn(50000, 3)
    est.decision_function(G)
    assert calls == [50000]


def test_callable_kernel_on_a_list_of_strings():
    """A callable kernel's input need not be an array (scikit-learn's
    test_custom_kernel_not_array_input): prediction takes it whole."""
    data = ["A A", "A", "B", "B B", "A B"]
    y = np.array([1, 1, 2, 2, 1])
    X = np.array([[2, 0], [1, 0], [0, 1], [0, 2], [1, 1]], dtype=float)

    def counts(A, B):
        a = np.array([[s.count("A"), s.count("B")] for s in A], dtype=float)
        b = np.array([[s.count("A"), s.count("B")] for s in B], dtype=float)
        return a @ b.T

    for name in ("SVC", "SVR"):
        est = getattr(svmlab, name)(kernel=counts).fit(data, y)
        ref = getattr(svmlab, name)(kernel="linear").fit(X, y)
        np.testing.assert_allclose(est.predict(data), ref.predict(X), atol=1e-6)
