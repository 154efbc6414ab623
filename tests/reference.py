"""Naive reference implementations (stumpy-style): dense, obvious, slow.

Tests check solvers against these, never against numbers a solver reports
about itself.  Kernels come from scikit-learn's ``pairwise_kernels``, an
implementation independent of ``svmlab.kernels``.
"""

import numpy as np
import scipy.sparse as sp
from sklearn.metrics.pairwise import pairwise_kernels


def gram(X, kernel="rbf", gamma=1.0, degree=3, coef0=0.0, Z=None):
    """Dense kernel matrix K(X, Z) (Z defaults to X) with sklearn's code."""
    kw = {}
    if kernel in ("rbf", "poly", "sigmoid"):
        kw["gamma"] = gamma
    if kernel in ("poly", "sigmoid"):
        kw["coef0"] = coef0
    if kernel == "poly":
        kw["degree"] = degree
    return pairwise_kernels(X, Z, metric=kernel, **kw)


def to_pm(y, classes=None):
    """Labels as -1/+1 with classes_[1] -> +1 (scikit-learn's convention)."""
    y = np.asarray(y)
    if classes is None:
        classes = np.unique(y)
    return np.where(y == classes[1], 1.0, -1.0)


def dual_objective(K, y, alpha):
    """W(alpha) = sum alpha - 1/2 (alpha*y)' K (alpha*y)."""
    ay = alpha * y
    return float(alpha.sum() - 0.5 * ay @ K @ ay)


def decision(K, y, alpha, b):
    return K @ (alpha * y) + b


def kkt_violation(K, y, alpha, b, C, bound_tol=0.0):
    """Largest KKT violation of (alpha, b): 0 at an exact optimum."""
    yf = y * decision(K, y, alpha, b)
    r = yf - 1.0
    at0 = alpha <= bound_tol
    atC = alpha >= C - bound_tol
    free = ~(at0 | atC)
    v = np.zeros_like(r)
    v[at0] = np.maximum(-r[at0], 0.0)
    v[atC] = np.maximum(r[atC], 0.0)
    v[free] = np.abs(r[free])
    return float(v.max())


def libsvm_dual(X, y, C, kernel="rbf", gamma=1.0, degree=3, coef0=0.0, tol=1e-6):
    """Reference optimum from LIBSVM (scikit-learn SVC): (alpha_full, b, W)."""
    from sklearn.svm import SVC

    clf = SVC(C=C, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0,
              tol=tol, cache_size=200, shrinking=True)
    clf.fit(X, y)
    alpha = np.zeros(X.shape[0])
    alpha[clf.support_] = np.abs(clf.dual_coef_[0])
    ypm = to_pm(y, clf.classes_)
    K = gram(X, kernel, gamma, degree, coef0)
    return alpha, float(clf.intercept_[0]), dual_objective(K, ypm, alpha)


def linear_primal(X, y, w, b, C):
    """1/2 ||w||^2 + C sum hinge (LIBSVM/LIBLINEAR's C)."""
    m = np.asarray(X @ w).ravel() + b
    return float(0.5 * w @ w + C * np.maximum(0.0, 1.0 - y * m).sum())


def check_figure_text(fig):
    """The figure conventions of the course: legends at least 9 pt, and the
    Greek quantities (xi, eta, alpha, beta, epsilon, inf) only as mathtext in
    legends, titles, axis labels and free texts."""
    import re

    greek = re.compile(r"\b(xi|eta|alpha|beta|epsilon|eps|inf)\b")
    for ax in fig.axes:
        leg = ax.get_legend()
        texts = []
        if leg is not None:
            assert all(t.get_fontsize() >= 9 for t in leg.get_texts())
            texts = [t.get_text() for t in leg.get_texts()]
        texts += [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()]
        texts += [t.get_text() for t in ax.texts]
        for t in texts:
            assert not greek.search(re.sub(r"\$[^$]*\$", "", t)), t
