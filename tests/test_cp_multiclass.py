"""One-vs-rest multiclass of CuttingPlaneClassifier (issue 17).

Checked against LIBLINEAR's one-vs-rest (scikit-learn's LinearSVC with the
hinge loss, its bias regularised as the cutting plane's constant feature):
each class's primal objective, computed here from the weights, is within
``C * epsilon`` of LinearSVC's, with and without weights; predictions agree;
the stepped path equals the fast path; a class that stops early is named in
the warning and makes ``converged_`` False.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_iris, make_blobs
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC

from svmlab import CuttingPlaneClassifier
from svmlab.cutting_plane import OneVsRestRecord


def _primal(w, b, X, ypm, C, v=None):
    """Paper's OP1 with the bias as a regularised constant feature:
    1/2 (|w|^2 + b^2) + (C/n) sum_i v_i hinge_i, n the rows of positive weight."""
    m = ypm * (np.asarray(X @ w).ravel() + b)
    h = np.maximum(0.0, 1.0 - m)
    if v is None:
        return 0.5 * (w @ w + b * b) + C * h.mean()
    return 0.5 * (w @ w + b * b) + C * (v * h).sum() / np.count_nonzero(v > 0)


def _data(kind):
    if kind == "iris":
        X, y = load_iris(return_X_y=True)
        return X / X.max(axis=0), y
    X, y = make_blobs(300, n_features=6, centers=4, cluster_std=3.0, random_state=1)
    X = X / np.abs(X).max()  # well-conditioned for LIBLINEAR's reference fit
    if kind == "sparse":
        X = np.where(np.abs(X) > 0.2, X, 0.0)
        return sp.csr_matrix(X), y
    return X, y


@pytest.mark.parametrize("kind", ["iris", "blobs", "sparse"])
@pytest.mark.parametrize("method", ["joachims", "ocas"])
def test_ovr_reaches_liblinear_optimum_per_class(kind, method):
    X, y = _data(kind)
    n = X.shape[0]
    c_ll, eps = 0.5, 1e-4
    C = c_ll * n
    cp = CuttingPlaneClassifier(C=C, epsilon=eps, method=method, max_iter=5000,
                                progress=False).fit(X, y)
    ls = LinearSVC(C=c_ll, loss="hinge", dual=True, tol=1e-12, max_iter=10**7,
                   random_state=0).fit(X, y)
    classes = np.unique(y)
    assert cp.coef_.shape == (len(classes), X.shape[1]) and cp.intercept_.shape == (len(classes),)
    assert cp.converged_ and cp.stop_reason_ == "converged"
    assert cp.n_iter_.shape == (len(classes),) and np.all(cp.n_iter_ > 0)
    for c, label in enumerate(classes):
        ypm = np.where(y == label, 1.0, -1.0)
        f_cp = _primal(cp.coef_[c], cp.intercept_[c], X, ypm, C)
        f_ls = _primal(ls.coef_[c], ls.intercept_[c], X, ypm, C)
        assert f_cp - f_ls <= C * eps + 1e-9, (label, f_cp, f_ls)
        # (the other direction bounds LIBLINEAR, not us: it may stop short of
        # the optimum on these sets, and f_cp below f_ls is then simply better)
    d = cp.decision_function(X)
    assert d.shape == (n, len(classes))
    np.testing.assert_array_equal(cp.predict(X), classes[np.argmax(d, axis=1)])
    agree = np.mean(cp.predict(X) == ls.predict(X))
    assert agree >= 0.97, agree


def test_ovr_weights_match_liblinear():
    X, y = _data("blobs")
    n = X.shape[0]
    rng = np.random.default_rng(0)
    sw = rng.uniform(0.2, 2.0, n)
    sw[:10] = 0.0
    cw = {0: 2.0, 2: 0.5}
    c_ll, eps = 0.3, 1e-5
    keep = sw > 0
    cp = CuttingPlaneClassifier(C=c_ll, epsilon=eps, method="ocas", class_weight=cw,
                                max_iter=5000, progress=False)
    # the paper's C is per row of positive weight of each problem (here the
    # same rows in every problem: those with a positive sample weight)
    cp.set_params(C=c_ll * int(keep.sum())).fit(X, y, sample_weight=sw)
    ls = LinearSVC(C=c_ll, loss="hinge", dual=True, tol=1e-12, max_iter=10**7,
                   class_weight=cw, random_state=0).fit(X, y, sample_weight=sw)
    C = c_ll * int(keep.sum())
    np.testing.assert_array_equal(cp.class_weight_, [2.0, 1.0, 0.5, 1.0])
    for c in range(4):
        ypm = np.where(y == c, 1.0, -1.0)
        v = sw * np.where(y == c, cp.class_weight_[c], 1.0)
        f_cp = _primal(cp.coef_[c], cp.intercept_[c], X, ypm, C, v)
        f_ls = _primal(ls.coef_[c], ls.intercept_[c], X, ypm, C, v)
        # (LIBLINEAR itself may stop short of the optimum here: only the
        # cutting plane's side is bounded)
        assert f_cp - f_ls <= C * eps + 1e-9, (c, f_cp, f_ls)


def test_ovr_balanced_class_weight_is_sklearns():
    X, y = _data("blobs")
    y = y.copy()
    y[y == 3] = 0  # unbalanced: 150 / 75 / 75
    cp = CuttingPlaneClassifier(C=30.0, class_weight="balanced", progress=False).fit(X, y)
    counts = np.bincount(y)
    np.testing.assert_allclose(cp.class_weight_, len(y) / (3 * counts))


@pytest.mark.parametrize("method", ["joachims", "ocas"])
def test_ovr_stepped_equals_fast_and_records_name_the_class(method):
    X, y = _data("iris")
    kw = dict(C=200.0, epsilon=1e-3, method=method, progress=False)
    fast = CuttingPlaneClassifier(**kw).fit(X, y)
    recs = []
    stepped = CuttingPlaneClassifier(**kw).fit(X, y, callback=recs.append)
    np.testing.assert_array_equal(fast.coef_, stepped.coef_)
    np.testing.assert_array_equal(fast.intercept_, stepped.intercept_)
    np.testing.assert_array_equal(fast.n_iter_, stepped.n_iter_)
    assert all(isinstance(r, OneVsRestRecord) for r in recs)
    assert [r.iteration for r in recs] == list(range(1, len(recs) + 1))
    idx = [r.class_index for r in recs]
    assert idx == sorted(idx) and set(idx) == {0, 1, 2}
    assert [idx.count(c) for c in range(3)] == fast.n_iter_.tolist()
    assert all(r.label == fast.classes_[r.class_index] for r in recs)
    # each class's own record counts within the class
    assert [r.record.iteration for r in recs if r.class_index == 1] == \
        list(range(1, fast.n_iter_[1] + 1))
    # iter_fit gives the same records and model
    est = CuttingPlaneClassifier(**kw)
    it = list(est.iter_fit(X, y))
    assert len(it) == len(recs)
    np.testing.assert_array_equal(est.coef_, fast.coef_)


def test_ovr_early_stop_is_honest():
    X, y = _data("blobs")
    est = CuttingPlaneClassifier(C=3000.0, epsilon=1e-6, max_iter=3, progress=False)
    with pytest.warns(ConvergenceWarning, match="classes 0, 1, 2, 3 against the rest") as rec:
        est.fit(X, y)
    assert not est.converged_ and est.stop_reason_ == "max_iter"
    assert np.all(est.n_iter_ == 3)
    # the same through iter_fit, run to its end: still max_iter, not "callback"
    est = CuttingPlaneClassifier(C=3000.0, epsilon=1e-6, max_iter=3, progress=False)
    with pytest.warns(ConvergenceWarning, match="against the rest"):
        recs = list(est.iter_fit(X, y))
    assert len(recs) == 12 and est.stop_reason_ == "max_iter" and not est.converged_
    # a callback that stops in the second class: classes not reached keep w = 0
    seen = []

    def stop_in_second(r):
        seen.append(r)
        return r.class_index < 1

    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = CuttingPlaneClassifier(C=30.0, progress=False).fit(X, y, callback=stop_in_second)
    assert est.stop_reason_ == "callback" and not est.converged_
    assert np.all(est.coef_[2:] == 0) and np.any(est.coef_[0] != 0)


def test_ovr_bad_input_refused_before_work():
    X, y = _data("iris")
    with pytest.raises(ValueError, match="not in the training classes"):
        CuttingPlaneClassifier(class_weight={7: 1.0}).fit(X, y)
    with pytest.raises(ValueError, match="(?i)negative"):
        CuttingPlaneClassifier().fit(X, y, sample_weight=-np.ones(len(y)))
    sw = np.ones(len(y))
    sw[y == 1] = 0.0
    with pytest.raises(ValueError, match="zero weight to every example of class 1"):
        CuttingPlaneClassifier().fit(X, y, sample_weight=sw)
    X0, y0 = X.copy(), y.copy()
    CuttingPlaneClassifier(C=10.0, progress=False).fit(X, y)
    assert np.array_equal(X, X0) and np.array_equal(y, y0)


def test_binary_unchanged_by_the_multiclass_path():
    X, y = _data("iris")
    m = y < 2
    a = CuttingPlaneClassifier(C=20.0, progress=False).fit(X[m], y[m])
    assert a.coef_.shape == (1, 4) and isinstance(a.n_iter_, int)
    assert a.decision_function(X[m]).shape == (int(m.sum()),)
