"""A clipped step below Platt's relative 1e-12 is still taken (decision
30s01): a multiplier left a rounding residue inside its bound must reach it.

The case is the scikit-learn gallery's ``plot_rbf_parameters`` grid point
``C=1, gamma=100`` on a standardised 3-class iris split: pair (0, 1) left
``alpha_i = C - 1.9e-12`` (outside the 1e-12 C snapping band), the WSS 2 pair
then could only move by 1.9e-12, which the step test rejected, and the fit
stopped as "stalled" with the optimality conditions violated by far more than
``tol``.  LIBSVM takes such steps and converges.
"""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import StratifiedShuffleSplit
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC as SkSVC

import svmlab


@pytest.fixture(scope="module")
def iris_split():
    iris = load_iris()
    X = StandardScaler().fit_transform(iris.data)
    y = iris.target
    tr = list(StratifiedShuffleSplit(5, test_size=0.2, random_state=42).split(X, y))[2][0]
    return X[tr], y[tr]


def _pair_objectives(model, X, y, gamma):
    """LIBSVM's dual objective ``1/2 a'Qa - e'a`` of every one-vs-one pair,
    from the fitted ``dual_coef_``/``support_`` (computed here)."""
    classes = model.classes_
    starts = np.r_[0, np.cumsum(model.n_support_)]
    out = []
    for a in range(len(classes)):
        for b in range(a + 1, len(classes)):
            k = sum(len(classes) - 1 - q for q in range(a)) + (b - a - 1)
            sa = slice(starts[a], starts[a + 1])
            sb = slice(starts[b], starts[b + 1])
            coef = np.r_[model.dual_coef_[b - 1, sa], model.dual_coef_[a, sb]]
            S = np.r_[model.support_[sa], model.support_[sb]]
            K = rbf_kernel(X[S], X[S], gamma=gamma)
            out.append((k, 0.5 * coef @ K @ coef - np.abs(coef).sum()))
    return [v for _, v in sorted(out)]


def test_the_gallery_pair_converges_to_libsvms_optimum(iris_split):
    X, y = iris_split
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        m = svmlab.SVC(C=1.0, gamma=100.0).fit(X, y)
    assert m.fit_status_ == 0
    s = SkSVC(C=1.0, gamma=100.0).fit(X, y)
    ours, theirs = _pair_objectives(m, X, y, 100.0), _pair_objectives(s, X, y, 100.0)
    for o, t in zip(ours, theirs):
        # at tol 1e-3 both sit near the optimum; ours is never worse by more
        # than the stopping tolerance's share
        assert o <= t + 1e-6 * abs(t) + 1e-9, (ours, theirs)
    df = m.decision_function(X) - s.decision_function(X)
    assert np.max(np.abs(df)) < 1e-2
