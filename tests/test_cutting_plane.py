"""CuttingPlaneClassifier (Joachims 2006, Algorithm 1 on OP2).

Every objective is computed here, from the returned weights:
    P(w) = 1/2 |w|^2 + (C/n) sum_i max(0, 1 - y_i w.x_i)
and compared with LIBLINEAR's optimum (sklearn LinearSVC, dual hinge,
C_liblinear = C/n, tol 1e-8).  Theorem 3: P(w_cp) <= P* + C * epsilon.
"""

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC

from svmlab import CuttingPlaneClassifier
from svmlab.cutting_plane.estimators import CuttingPlaneRecord

from conftest import require_shared_data


def pm(y, classes):
    return np.where(y == classes[1], 1.0, -1.0)


def primal(X, y_pm, w, C):
    n = X.shape[0]
    m = np.asarray(X @ w).ravel()
    return 0.5 * w @ w + C / n * np.maximum(0.0, 1.0 - y_pm * m).sum()


def liblinear_w(X, y, C_paper):
    n = X.shape[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ref = LinearSVC(loss="hinge", dual=True, fit_intercept=False, C=C_paper / n,
                        tol=1e-8, max_iter=200_000).fit(X, y)
    return ref.coef_[0]


def synthetic(n=400, d=15, seed=0, sparse=False):
    X, y = make_classification(n, d, n_informative=min(6, d - 1), n_redundant=0,
                               flip_y=0.08, random_state=seed)
    if sparse:
        rng = np.random.default_rng(seed)
        X = X * (rng.uniform(size=X.shape) < 0.3)
        X = sp.csr_matrix(X)
    return X, y


def shared(name, n, seed=0):
    require_shared_data()
    from svmlab.datasets import load

    X, y = load(name)
    idx = np.random.default_rng(seed).choice(X.shape[0], n, replace=False)
    return X[idx], y[idx]


DATASETS = {
    "dense": lambda: synthetic(),
    "sparse": lambda: synthetic(500, 30, seed=1, sparse=True),
    "a9a-3000": lambda: shared("a9a", 3000),
    "w8a-3000": lambda: shared("w8a", 3000, seed=1),
}
C_OVER_N = {"dense": 0.5, "sparse": 1.0, "a9a-3000": 0.05, "w8a-3000": 1.0}


@pytest.mark.parametrize("eps", [1e-3, 1e-4])
@pytest.mark.parametrize("name", list(DATASETS))
def test_primal_within_C_eps_of_liblinear(name, eps):
    X, y = DATASETS[name]()
    n = X.shape[0]
    C = C_OVER_N[name] * n
    clf = CuttingPlaneClassifier(C=C, epsilon=eps, fit_intercept=False, max_iter=-1).fit(X, y)
    assert clf.converged_
    assert clf.coef_.shape == (1, X.shape[1]) and clf.intercept_.tolist() == [0.0]
    y_pm = pm(y, clf.classes_)
    p_cp = primal(X, y_pm, clf.coef_[0], C)
    p_ll = primal(X, y_pm, liblinear_w(X, y, C), C)
    assert p_cp <= p_ll + C * eps
    # and not suspiciously below the optimum (LIBLINEAR at 1e-8 is ~exact)
    assert p_cp >= p_ll - 1e-6 * p_ll


def test_intercept_is_a_regularised_constant_feature():
    X, y = synthetic(300, 8, seed=3)
    n = X.shape[0]
    C, eps = 0.3 * n, 1e-4
    clf = CuttingPlaneClassifier(C=C, epsilon=eps).fit(X, y)
    Xa = np.hstack([X, np.ones((n, 1))])
    y_pm = pm(y, clf.classes_)
    wa = np.concatenate([clf.coef_[0], clf.intercept_])
    assert primal(Xa, y_pm, wa, C) <= primal(Xa, y_pm, liblinear_w(Xa, y, C), C) + C * eps
    assert clf.intercept_.shape == (1,) and clf.intercept_[0] != 0.0
    np.testing.assert_allclose(clf.decision_function(X), X @ clf.coef_[0] + clf.intercept_[0])
    assert np.array_equal(clf.predict(X), clf.classes_[(clf.decision_function(X) > 0).astype(int)])


def test_dense_and_csr_give_the_same_model():
    X, y = synthetic(300, 10, seed=4, sparse=True)
    a = CuttingPlaneClassifier(C=100.0).fit(X, y)
    b = CuttingPlaneClassifier(C=100.0).fit(X.toarray(), y)
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-12)
    assert a.n_iter_ == b.n_iter_


def test_records_checked_against_quantities_computed_here():
    X, y = synthetic(250, 6, seed=5)
    n = X.shape[0]
    C = 0.5 * n
    # optimum (for the bound checks) from LIBLINEAR on [X, 1]
    Xa = np.hstack([X, np.ones((n, 1))])
    clf = CuttingPlaneClassifier(C=C, epsilon=1e-3)
    recs = list(clf.iter_fit(X, y))
    y_pm = pm(y, clf.classes_)
    p_star = primal(Xa, y_pm, liblinear_w(Xa, y, C), C)
    assert len(recs) == clf.n_iter_ > 2
    for k, r in enumerate(recs, 1):
        assert isinstance(r, CuttingPlaneRecord) and r.iteration == k
        wa = np.concatenate([r.w, [r.b]])
        marg = y_pm * (Xa @ wa)
        c = marg < 1
        assert np.array_equal(r.constraint, c)
        assert r.constraint_size == c.sum()
        assert r.xi_new == pytest.approx(np.maximum(0, 1 - marg).mean(), abs=1e-12)
        gvec = (y_pm[c, None] * Xa[c]).sum(0) / n
        assert r.constraint_norm == pytest.approx(np.linalg.norm(gvec), abs=1e-12)
        assert r.constraint_offset == pytest.approx(c.mean())
        assert r.w_norm == pytest.approx(np.linalg.norm(wa))
        assert r.primal == pytest.approx(primal(Xa, y_pm, wa, C), rel=1e-12)
        assert r.working_set_size == len(r.alpha) <= k
        assert np.all(r.alpha >= 0) and r.alpha.sum() <= C * (1 + 1e-12)
        # bounds: dual <= optimum <= primal
        assert r.dual <= p_star + 1e-7 * p_star
        assert r.primal >= p_star - 1e-7 * p_star
        assert r.gap == pytest.approx(r.primal - r.dual)
    # the gap shrinks to (about) C*eps: last record's gap is the last one
    # that did not pass the stopping test
    assert recs[-1].gap < recs[0].gap
    with pytest.raises(AttributeError):
        recs[0].iteration = 5  # frozen


def test_fit_callback_iter_fit_and_start_agree_and_stop_cleanly():
    X, y = synthetic(300, 10, seed=6)
    C = 150.0
    fast = CuttingPlaneClassifier(C=C).fit(X, y)
    seen = []
    cb = CuttingPlaneClassifier(C=C).fit(X, y, callback=seen.append)
    assert len(seen) == fast.n_iter_ == cb.n_iter_
    np.testing.assert_array_equal(fast.coef_, cb.coef_)
    # lazy form
    est = CuttingPlaneClassifier(C=C)
    run = est.start(X, y)
    r1, r2 = run.step(), run.step()
    assert (r1.iteration, r2.iteration) == (1, 2)
    np.testing.assert_array_equal(r2.w, seen[1].w)
    run.run()
    run.finish()
    np.testing.assert_array_equal(est.coef_, fast.coef_)
    # callback returning False stops with a valid model after 3 iterations
    stop = CuttingPlaneClassifier(C=C)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # a stop is not a failure
        stop.fit(X, y, callback=lambda r: r.iteration < 3)
    assert stop.n_iter_ == 3 and not stop.converged_
    assert np.all(np.isfinite(stop.coef_)) and stop.predict(X).shape == y.shape
    # early close of iter_fit
    it = CuttingPlaneClassifier(C=C)
    for r in it.iter_fit(X, y):
        if r.iteration == 2:
            break
    assert it.n_iter_ == 2 and hasattr(it, "coef_")


def test_max_iter_warns():
    X, y = synthetic(300, 10, seed=7)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        clf = CuttingPlaneClassifier(C=300.0, max_iter=3).fit(X, y)
    assert clf.n_iter_ == 3 and not clf.converged_


def test_iterations_do_not_grow_with_n():
    """Joachims' Figure 2: with the paper's C fixed, the number of iterations
    is bounded independently of n (Theorem 5)."""
    require_shared_data()
    from svmlab.datasets import load

    X, y = load("a9a")
    perm = np.random.default_rng(0).permutation(X.shape[0])
    iters = {}
    for n in (1000, 4000, 16000, 32000):
        idx = perm[:n]
        clf = CuttingPlaneClassifier(C=300.0, epsilon=1e-3).fit(X[idx], y[idx])
        assert clf.converged_
        iters[n] = clf.n_iter_
    lo = min(iters.values())
    assert iters[32000] <= 1.3 * iters[1000] + 5, iters
    assert max(iters.values()) <= 1.5 * lo + 5, iters


@pytest.mark.parametrize(
    "X,y,match",
    [
        (np.array([[0.0, np.nan], [1.0, 1.0]]), [0, 1], "NaN|infinity"),
        (np.array([[0.0, np.inf], [1.0, 1.0]]), [0, 1], "NaN|infinity"),
        (np.ones((4, 2)), [1, 1, 1, 1], "single class"),
        (np.ones((4, 2)), [[0, 1], [1, 0], [0, 1], [1, 1]], "single-output|multilabel|1d"),
        (np.ones((4, 2)), [0, 1, 0], "inconsistent|samples"),
        (np.ones(4), [0, 1, 0, 1], "2D|2-D|Expected 2D"),
    ],
)
def test_bad_input(X, y, match):
    with pytest.raises(ValueError, match=match):
        CuttingPlaneClassifier().fit(X, y)


@pytest.mark.parametrize("params", [{"C": 0.0}, {"C": -1.0}, {"epsilon": 0.0},
                                    {"epsilon": -1e-3}, {"max_iter": -2}])
def test_bad_params(params):
    X, y = synthetic(50, 3)
    with pytest.raises(ValueError, match="must be"):
        CuttingPlaneClassifier(**params).fit(X, y)


def test_caller_arrays_untouched():
    X, y = synthetic(100, 4)
    X0, y0 = X.copy(), y.copy()
    CuttingPlaneClassifier(C=50.0).fit(X, y)
    assert np.array_equal(X, X0) and np.array_equal(y, y0)


def test_sklearn_check_estimator():
    from sklearn.utils.estimator_checks import check_estimator

    # sample_weight: a weight of 2 is not a repeated row here (a repeated row
    # also increases the n of the paper's C/n), see tests/test_cp_weights.py
    reason = "the paper's C averages over n: a repeated row changes n"
    check_estimator(CuttingPlaneClassifier(), expected_failed_checks={
        "check_sample_weight_equivalence_on_dense_data": reason,
        "check_sample_weight_equivalence_on_sparse_data": reason})


_NOJIT = r"""
import json, sys, numpy as np
from sklearn.datasets import make_classification
import scipy.sparse as sp
from svmlab import CuttingPlaneClassifier, CuttingPlaneOrdinalRegressor
X, y = make_classification(60, 4, random_state=0)
a = CuttingPlaneClassifier(C=3.0).fit(X, y)
b = CuttingPlaneClassifier(C=3.0).fit(sp.csr_matrix(X), y)
r = np.digitize(X[:, 0], [-0.5, 0.5]) + 1
o = CuttingPlaneOrdinalRegressor(C=20.0).fit(X, r)
print(json.dumps([a.coef_.tolist(), a.intercept_.tolist(), a.n_iter_, b.coef_.tolist(),
                  o.coef_.tolist(), o.n_iter_]))
"""


def test_numba_disabled_run_agrees_with_jitted():
    def run(disable):
        env = dict(os.environ, NUMBA_DISABLE_JIT="1" if disable else "0")
        out = subprocess.run([sys.executable, "-c", _NOJIT], env=env, capture_output=True,
                             text=True, timeout=300, check=True)
        import json

        return json.loads(out.stdout.strip().splitlines()[-1])

    jit, nojit = run(False), run(True)
    assert jit[2] == nojit[2] and jit[5] == nojit[5]
    for k in (0, 1, 3, 4):
        np.testing.assert_allclose(jit[k], nojit[k], rtol=1e-9, atol=1e-11)
