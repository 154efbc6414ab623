"""The objective helpers of the ``family`` benchmark suite against naive
computations with scikit-learn's kernels (tests/reference.py), on models of
both libraries: the suite's comparisons use one code for both sides, so
that code must be right."""

import numpy as np
from sklearn import svm as sk
from sklearn.datasets import make_blobs, make_regression

import reference as R
from svmlab.bench import family


def test_svc_objective_binary_and_multiclass():
    for k in (2, 3):
        X, y = make_blobs(60, centers=k, cluster_std=2.0, random_state=k)
        m = sk.SVC(C=2.0, gamma=0.3).fit(X, y)
        y_idx = np.searchsorted(m.classes_, y)
        expected = 0.0
        for a in range(k):
            for b in range(a + 1, k):
                # the pair's model refitted alone: its dual objective, naively
                rows = np.flatnonzero((y == m.classes_[a]) | (y == m.classes_[b]))
                p = sk.SVC(C=2.0, gamma=0.3, tol=1e-10).fit(X[rows], y[rows])
                ya = np.where(y[rows] == m.classes_[b], 1.0, -1.0)
                alpha = np.zeros(len(rows))
                alpha[p.support_] = np.abs(p.dual_coef_[0])
                expected += R.dual_objective(R.gram(X[rows], "rbf", gamma=0.3), ya, alpha)
        got = family.svc_objective(m, X, y_idx, k, 0.3)
        assert abs(got - expected) <= 1e-3 * abs(expected)


def test_regression_and_one_class_objectives():
    X, z = make_regression(50, 3, noise=5.0, random_state=0)
    z = (z - z.mean()) / z.std()
    m = sk.SVR(C=1.0, epsilon=0.2, gamma=0.5).fit(X, z)
    beta = np.zeros(50)
    beta[m.support_] = m.dual_coef_[0]
    K = R.gram(X, "rbf", gamma=0.5)
    naive = 0.5 * beta @ K @ beta + 0.2 * np.abs(beta).sum() - z @ beta
    assert abs(family.regression_objective(m, X, z, 0.2) - naive) <= 1e-10 * abs(naive)
    o = sk.OneClassSVM(nu=0.3, gamma=0.5).fit(X)
    a = np.zeros(50)
    a[o.support_] = o.dual_coef_[0]
    assert abs(family.one_class_objective(o, X) - 0.5 * a @ K @ a) <= 1e-10 * (a @ K @ a)


def test_regression_objective_uses_the_model_kernel():
    # the poly SVR case of the suite (plot_svm_regression.py's parameters):
    # the objective with the model's own poly kernel, against the naive sum
    rng = np.random.RandomState(1)
    X = np.sort(5 * rng.rand(30, 1), axis=0)
    z = np.sin(X).ravel()
    m = sk.SVR(kernel="poly", C=10.0, gamma="auto", degree=3, coef0=1.0, epsilon=0.1).fit(X, z)
    beta = np.zeros(30)
    beta[m.support_] = m.dual_coef_[0]
    K = (X @ X.T + 1.0) ** 3  # gamma="auto": 1 / n_features = 1
    naive = 0.5 * beta @ K @ beta + 0.1 * np.abs(beta).sum() - z @ beta
    assert abs(family.regression_objective(m, X, z, 0.1) - naive) <= 1e-10 * abs(naive)
