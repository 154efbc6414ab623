"""CuttingPlaneOrdinalRegressor (Joachims 2006, Algorithm 2 on OP5).

* the condensed O(n log n + Rn) sweep == brute-force O(n^2) pair enumeration
  (hypothesis: ties in w'x, margins exactly 1, R > 2, empty ranks);
* the model's OP4 objective, computed here, is within C*epsilon of a
  brute-force pairwise SVM (LIBLINEAR on difference vectors);
* score() == ROC AUC (two ranks) / brute-force pair concordance.
"""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import roc_auc_score
from sklearn.svm import LinearSVC

from svmlab import CuttingPlaneOrdinalRegressor
from svmlab.cutting_plane._passes import ordinal_counts
from svmlab.cutting_plane.estimators import OrdinalCuttingPlaneRecord


def brute_counts(s, rank):
    n = len(s)
    cp = np.zeros(n, dtype=np.int64)
    cm = np.zeros(n, dtype=np.int64)
    for i in range(n):
        for j in range(n):
            if rank[i] > rank[j] and s[i] - s[j] < 1.0:  # violated pair (i above j)
                cp[i] += 1
                cm[j] += 1
    return cp, cm


@settings(max_examples=150, deadline=None)
@given(
    data=st.data(),
    n=st.integers(1, 40),
    R=st.integers(2, 6),
)
def test_sweep_equals_brute_force(data, n, R):
    # scores on a quarter grid: exact arithmetic, many ties and exact margins
    k = data.draw(st.lists(st.integers(-12, 12), min_size=n, max_size=n))
    s = np.array(k, dtype=np.float64) / 4.0
    rank = np.array(data.draw(st.lists(st.integers(0, R - 1), min_size=n, max_size=n)),
                    dtype=np.int64)  # some ranks may be empty
    cp = np.zeros(n, dtype=np.int64)
    cm = np.zeros(n, dtype=np.int64)
    npairs, loss = ordinal_counts(s, rank, R, cp, cm)
    bp, bm = brute_counts(s, rank)
    np.testing.assert_array_equal(cp, bp)
    np.testing.assert_array_equal(cm, bm)
    assert npairs == bp.sum() == bm.sum()
    brute_loss = sum(1.0 - (s[i] - s[j]) for i in range(n) for j in range(n)
                     if rank[i] > rank[j] and s[i] - s[j] < 1.0)
    assert loss == pytest.approx(brute_loss, abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 60), R=st.integers(2, 5))
def test_sweep_equals_brute_force_continuous(seed, n, R):
    rng = np.random.default_rng(seed)
    s = rng.normal(scale=1.5, size=n)
    rank = rng.integers(0, R, size=n)
    cp = np.zeros(n, dtype=np.int64)
    cm = np.zeros(n, dtype=np.int64)
    ordinal_counts(s, rank, R, cp, cm)
    bp, bm = brute_counts(s, rank)
    np.testing.assert_array_equal(cp, bp)
    np.testing.assert_array_equal(cm, bm)


def ranked_data(n, d, R, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    w = rng.normal(size=d)
    z = X @ w + rng.normal(scale=1.0, size=n)
    cuts = np.quantile(z, np.linspace(0, 1, R + 1)[1:-1])
    y = np.digitize(z, cuts) * 2 + 1  # ranks 1, 3, 5, ...: gaps in the labels
    return X, y


def pairs(y):
    return [(i, j) for i in range(len(y)) for j in range(len(y)) if y[i] > y[j]]


def op4(X, y, w, C):
    P = pairs(y)
    I = np.array([p[0] for p in P])
    J = np.array([p[1] for p in P])
    marg = (X[I] - X[J]) @ w
    return 0.5 * w @ w + C / len(P) * np.maximum(0, 1 - marg).sum()


def pairwise_liblinear(X, y, C):
    """OP4 by brute force: LIBLINEAR on the m difference vectors, symmetrised
    (+d, +1) and (-d, -1), which doubles the loss sum: C_liblinear = C/(2m)."""
    P = pairs(y)
    I = np.array([p[0] for p in P])
    J = np.array([p[1] for p in P])
    D = X[I] - X[J]
    Z = np.vstack([D, -D])
    t = np.concatenate([np.ones(len(P)), -np.ones(len(P))])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ref = LinearSVC(loss="hinge", dual=True, fit_intercept=False,
                        C=C / (2 * len(P)), tol=1e-8, max_iter=200_000).fit(Z, t)
    return ref.coef_[0]


@pytest.mark.parametrize("R,C,seed", [(2, 10.0, 0), (3, 5.0, 1), (4, 50.0, 2)])
@pytest.mark.parametrize("eps", [1e-3, 1e-4])
def test_ordinal_matches_brute_force_pairwise_svm(R, C, seed, eps):
    X, y = ranked_data(50, 4, R, seed)
    est = CuttingPlaneOrdinalRegressor(C=C, epsilon=eps, max_iter=-1).fit(X, y)
    assert est.converged_
    assert est.n_pairs_ == len(pairs(y))
    w = est.coef_[0]
    ref = op4(X, y, pairwise_liblinear(X, y, C), C)
    ours = op4(X, y, w, C)
    assert ours <= ref + C * eps
    assert ours >= ref - 1e-6 * ref
    assert est.intercept_.tolist() == [0.0]
    assert list(est.ranks_) == sorted(set(y.tolist()))


def test_score_is_pair_concordance_and_roc_auc():
    X, y = ranked_data(80, 3, 2, 3)
    est = CuttingPlaneOrdinalRegressor(C=20.0).fit(X, y)
    s = est.decision_function(X)
    np.testing.assert_allclose(est.predict(X), s)
    assert est.score(X, y) == pytest.approx(roc_auc_score(y, s))
    X, y = ranked_data(60, 3, 4, 4)
    est = CuttingPlaneOrdinalRegressor(C=20.0).fit(X, y)
    s = est.decision_function(X)
    P = pairs(y)
    conc = sum(1.0 if s[i] > s[j] else 0.5 if s[i] == s[j] else 0.0 for i, j in P) / len(P)
    assert est.score(X, y) == pytest.approx(conc)
    assert est.score(X, y) > 0.75


def test_records_match_brute_force_counts():
    X, y = ranked_data(40, 3, 3, 5)
    C = 10.0
    est = CuttingPlaneOrdinalRegressor(C=C)
    recs = list(est.iter_fit(X, y))
    assert len(recs) == est.n_iter_ > 1
    m = len(pairs(y))
    for k, r in enumerate(recs, 1):
        assert isinstance(r, OrdinalCuttingPlaneRecord) and r.iteration == k
        rank = np.searchsorted(np.unique(y), y)
        bp, bm = brute_counts(X @ r.w, rank)
        np.testing.assert_array_equal(r.c_plus, bp)
        np.testing.assert_array_equal(r.c_minus, bm)
        assert r.constraint_size == bp.sum() and r.n_pairs == m
        assert r.primal == pytest.approx(op4(X, y, r.w, C), rel=1e-10)
        g = ((bp - bm)[:, None] * X).sum(0) / m
        assert r.constraint_norm == pytest.approx(np.linalg.norm(g), abs=1e-12)
        assert r.working_set_size == len(r.alpha) <= k
        assert r.gap == pytest.approx(r.primal - r.dual)


def test_iter_fit_equals_fit():
    X, y = ranked_data(60, 4, 3, 6)
    a = CuttingPlaneOrdinalRegressor(C=30.0).fit(X, y)
    b = CuttingPlaneOrdinalRegressor(C=30.0)
    n = sum(1 for _ in b.iter_fit(X, y))
    assert n == a.n_iter_
    np.testing.assert_array_equal(a.coef_, b.coef_)


@pytest.mark.parametrize(
    "X,y,match",
    [
        (np.ones((4, 2)), [1.5, 2, 3, 1], "integer"),
        (np.ones((4, 2)), ["a", "b", "a", "b"], "integer"),
        (np.ones((4, 2)), [2, 2, 2, 2], "single rank"),
        (np.ones((4, 2)), [1, 2, np.nan, 1], "NaN"),
        (np.array([[np.nan, 1], [1, 1], [0, 0]]), [1, 2, 1], "NaN|infinity"),
        (np.array([[np.inf, 1], [1, 1], [0, 0]]), [1, 2, 1], "NaN|infinity"),
        (np.ones((4, 2)), [1, 2, 1], "samples"),
        (np.ones((4, 2)), np.ones((4, 2)), "1-D"),
    ],
)
def test_bad_input(X, y, match):
    with pytest.raises(ValueError, match=match):
        CuttingPlaneOrdinalRegressor().fit(X, y)


@pytest.mark.parametrize("params", [{"C": 0.0}, {"epsilon": 0.0}, {"C": -3}])
def test_bad_params(params):
    X, y = ranked_data(20, 2, 2, 0)
    with pytest.raises(ValueError, match="must be"):
        CuttingPlaneOrdinalRegressor(**params).fit(X, y)
