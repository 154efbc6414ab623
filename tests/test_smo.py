"""SMOClassifier against LIBSVM (scikit-learn SVC), KKT, and its own step hooks.

Objectives and KKT violations are computed here from ``alpha_`` with the
naive references of ``tests/reference.py``, never taken from the solver.
"""

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_blobs, make_circles, make_classification, make_moons
from sklearn.exceptions import ConvergenceWarning

import reference as R
from conftest import require_shared_data
from svmlab import SMOClassifier


def _data(name):
    if name == "classif":
        X, y = make_classification(160, 8, n_informative=5, random_state=0)
    elif name == "moons":
        X, y = make_moons(150, noise=0.25, random_state=1)
    elif name == "circles":
        X, y = make_circles(150, noise=0.1, factor=0.5, random_state=2)
    elif name == "blobs":
        X, y = make_blobs(140, centers=2, cluster_std=3.0, random_state=3)
    elif name == "dups":
        X0, y0 = make_moons(70, noise=0.3, random_state=4)
        X = np.vstack([X0, X0[:30]])  # duplicate points (eta = 0 pairs)
        y = np.concatenate([y0, y0[:30]])
    else:
        raise KeyError(name)
    return X, y


def _check_solution(X, y, m, kernel, gamma, degree, coef0, C, rel=1e-3, kkt_tol=None):
    Xd = X.toarray() if sp.issparse(X) else X
    yp = R.to_pm(y, m.classes_)
    K = R.gram(Xd, kernel, gamma, degree, coef0)
    a = m.alpha_
    # feasibility
    assert np.all(a >= 0) and np.all(a <= C)
    assert abs(np.dot(a, yp)) <= 1e-9 * max(1.0, C)
    # objective against LIBSVM at tol 1e-6
    _, _, W_ref = R.libsvm_dual(Xd, y, C, kernel, gamma, degree, coef0, tol=1e-6)
    W = R.dual_objective(K, yp, a)
    assert W == pytest.approx(W_ref, rel=rel), (W, W_ref)
    if kkt_tol is not None:
        assert R.kkt_violation(K, yp, a, m.intercept_[0], C, bound_tol=0.0) <= kkt_tol
    # decision_function is what the dual says
    f = K @ (a * yp) + m.intercept_[0]
    np.testing.assert_allclose(m.decision_function(X), f, atol=1e-8)


CASES = [
    ("classif", "rbf", 0.1, 3, 0.0, 1.0),
    ("moons", "rbf", 1.0, 3, 0.0, 10.0),
    ("circles", "poly", 1.0, 3, 1.0, 1.0),
    ("blobs", "linear", 1.0, 3, 0.0, 0.5),
    ("circles", "poly", 1.0, 2, 1.0, 1000.0),  # large C
    ("moons", "rbf", 2.0, 3, 0.0, 1000.0),  # large C
    ("dups", "rbf", 1.0, 3, 0.0, 5.0),  # duplicate points
]


@pytest.mark.parametrize("selection", ["platt", "wss2"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}-C{c[5]}")
def test_agrees_with_libsvm(case, selection):
    name, kernel, gamma, degree, coef0, C = case
    X, y = _data(name)
    m = SMOClassifier(C=C, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0,
                      selection=selection, random_state=0, progress=False).fit(X, y)
    assert m.converged_
    # Platt's criterion is KKT within tol on y_i E_i given the running b;
    # wss2's is m - M <= tol, i.e. KKT within tol/2 for the midpoint b.
    _check_solution(X, y, m, kernel, gamma, degree, coef0, C,
                    kkt_tol=None if C >= 1000 else 2e-3)


@pytest.mark.parametrize("shrinking", [True, False])
@pytest.mark.parametrize("selection", ["platt", "wss2"])
def test_shrinking_on_off_csr(shrinking, selection):
    X, y = make_classification(250, 30, n_informative=6, random_state=5)
    X[np.abs(X) < 0.8] = 0.0
    Xs = sp.csr_matrix(X)
    for kernel, gamma in [("rbf", 0.05), ("linear", 1.0)]:
        m = SMOClassifier(C=2.0, kernel=kernel, gamma=gamma, shrinking=shrinking,
                          selection=selection, random_state=1, progress=False).fit(Xs, y)
        _check_solution(Xs, y, m, kernel, gamma, 3, 0.0, 2.0, kkt_tol=2e-3)
        # dense input reaches the same optimum (rounding differs, so the
        # pair sequences may too)
        md = SMOClassifier(C=2.0, kernel=kernel, gamma=gamma, shrinking=shrinking,
                           selection=selection, random_state=1, progress=False).fit(X, y)
        _check_solution(X, y, md, kernel, gamma, 3, 0.0, 2.0, kkt_tol=2e-3)


def test_sigmoid_non_psd_takes_eta_branch():
    X, y = make_classification(120, 4, random_state=7)
    X = X / np.abs(X).max()
    recs = []
    m = SMOClassifier(C=1.0, kernel="sigmoid", gamma=2.0, coef0=-1.0, random_state=0,
                      progress=False)
    m.fit(X, y, callback=recs.append)
    assert any(r.eta <= 0 for r in recs), "the eta <= 0 branch was never taken"
    for r in recs:
        if r.eta <= 0:
            assert r.a2_new in (r.L, r.H)
    yp = R.to_pm(y)
    K = R.gram(X, "sigmoid", 2.0, 3, -1.0)
    a = m.alpha_
    assert np.all((a >= 0) & (a <= 1.0)) and abs(a @ yp) < 1e-9
    # non-concave problem: every step increased W (checked here, not trusted)
    W = [0.0]
    alpha = np.zeros(len(y))
    for r in recs:
        alpha[r.i1], alpha[r.i2] = r.a1_new, r.a2_new
        W.append(R.dual_objective(K, yp, alpha))
    assert np.all(np.diff(W) > -1e-12)
    np.testing.assert_allclose(alpha, a, atol=0)


def test_duplicates_eta_zero_branch_records():
    X, y = _data("dups")
    recs = []
    SMOClassifier(C=5.0, gamma=1.0, random_state=0, progress=False).fit(
        X, y, callback=recs.append)
    assert len(recs) > 0


@pytest.mark.parametrize("selection", ["platt", "wss2"])
def test_hook_invariants_and_replay(selection):
    X, y = _data("moons")
    C = 3.0
    recs = []
    # float64 cached values: the replay below checks against a float64 K to 1e-9
    m = SMOClassifier(C=C, gamma=1.0, selection=selection, random_state=2,
                      cache_dtype="float64", progress=False).fit(X, y, callback=recs.append)
    yp = R.to_pm(y, m.classes_)
    K = R.gram(X, "rbf", 1.0)
    alpha = np.zeros(len(y))
    for k, r in enumerate(recs, 1):
        assert r.iteration == k
        assert (r.y1, r.y2) == (yp[r.i1], yp[r.i2])
        assert (r.a1_old, r.a2_old) == (alpha[r.i1], alpha[r.i2])
        assert r.y1 * r.a1_new + r.y2 * r.a2_new == pytest.approx(
            r.y1 * r.a1_old + r.y2 * r.a2_old, abs=1e-12 * C * 10)
        assert r.L - 1e-12 <= r.a2_new <= r.H + 1e-12
        assert 0 <= r.a1_new <= C and 0 <= r.a2_new <= C
        # E values are the true errors of the state before the step
        f = K @ (alpha * yp) + r.b_old
        assert r.E1 == pytest.approx(f[r.i1] - yp[r.i1], abs=1e-9)
        assert r.E2 == pytest.approx(f[r.i2] - yp[r.i2], abs=1e-9)
        assert r.eta == pytest.approx(K[r.i1, r.i1] + K[r.i2, r.i2] - 2 * K[r.i1, r.i2])
        if not r.clipped:
            assert r.a2_new == pytest.approx(r.a2_unclipped)
        W0 = R.dual_objective(K, yp, alpha)
        alpha[r.i1], alpha[r.i2] = r.a1_new, r.a2_new
        assert R.dual_objective(K, yp, alpha) - W0 == pytest.approx(r.delta_objective,
                                                                    abs=1e-9)
        assert r.heuristic in (("wss2",) if selection == "wss2" else
                               ("max|E1-E2|", "nonbound-scan", "full-scan"))
    np.testing.assert_array_equal(alpha, m.alpha_)
    assert m.n_iter_ == len(recs)
    if selection == "platt":
        assert recs[-1].b_new == m.intercept_[0]


@pytest.mark.parametrize("selection", ["platt", "wss2"])
@pytest.mark.parametrize("kernel", ["rbf", "linear"])
@pytest.mark.parametrize("data", ["dense", "binary"])
def test_stepped_equals_fast(selection, kernel, data):
    if data == "dense":
        X, y = make_classification(200, 6, random_state=11, flip_y=0.1)
    else:
        # bit-packed inputs (and, for Platt's linear SMO, the full passes'
        # error cache of shared-feature counts); parked phases with layout
        # compaction
        rng = np.random.default_rng(4)
        X = sp.csr_matrix((rng.random((240, 70)) < 0.12).astype(float))
        y = (X @ rng.normal(size=70) + 0.4 * rng.normal(size=240) > 0).astype(int)
    kw = dict(C=2.0, kernel=kernel, gamma=0.2, selection=selection, random_state=5,
              progress=False, cache_size=0.05)  # tiny cache: evictions happen
    fast = SMOClassifier(**kw).fit(X, y)
    recs = []
    stepped = SMOClassifier(**kw).fit(X, y, callback=recs.append)
    lazy = list(SMOClassifier(**kw).iter_fit(X, y))
    est = SMOClassifier(**kw)
    run = est.start(X, y)
    manual = []
    while (r := run.step()) is not None:
        manual.append(r)
    run.finish()
    pairs = [(r.i1, r.i2) for r in recs]
    assert pairs == [(r.i1, r.i2) for r in lazy] == [(r.i1, r.i2) for r in manual]
    assert fast.n_iter_ == len(recs) == stepped.n_iter_
    np.testing.assert_allclose(stepped.alpha_, fast.alpha_, atol=1e-12, rtol=0)
    np.testing.assert_allclose(est.alpha_, fast.alpha_, atol=1e-12, rtol=0)
    assert stepped.intercept_[0] == pytest.approx(fast.intercept_[0], abs=1e-12)
    # the fast path, interrupted and resumed at arbitrary points, is the same too
    run2 = SMOClassifier(**kw).start(X, y)
    seq = []
    while not run2.finished:
        k = run2._advance(7)
        run2.n_iter += k
        r = run2.step()
        if r is not None:
            seq.append((r.iteration, r.i1, r.i2))
    for it, i1, i2 in seq:
        assert pairs[it - 1] == (i1, i2)


def test_callback_false_stops_feasible():
    X, y = _data("classif")
    C = 1.0
    m = SMOClassifier(C=C, gamma=0.1, random_state=0, progress=False)
    seen = []

    def cb(r):
        seen.append(r)
        return len(seen) < 15

    m.fit(X, y, callback=cb)
    yp = R.to_pm(y)
    assert m.n_iter_ == 15
    assert not m.converged_
    assert abs(m.alpha_ @ yp) < 1e-12 and np.all((m.alpha_ >= 0) & (m.alpha_ <= C))
    assert m.predict(X).shape == y.shape
    # iter_fit closed early also leaves a feasible model
    m2 = SMOClassifier(C=C, gamma=0.1, random_state=0, progress=False)
    for k, r in enumerate(m2.iter_fit(X, y)):
        if k == 9:
            break
    assert m2.n_iter_ == 10
    np.testing.assert_array_equal(m2.alpha_ != 0, m2.alpha_ > 0)


@pytest.mark.parametrize("selection", ["platt", "wss2"])
def test_max_iter_warns(selection):
    X, y = _data("moons")
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        m = SMOClassifier(max_iter=5, selection=selection, progress=False).fit(X, y)
    assert m.n_iter_ == 5 and not m.converged_
    assert abs(m.alpha_ @ R.to_pm(y)) < 1e-12


@pytest.mark.parametrize(
    "kw,X,y,match",
    [
        ({}, np.array([[0.0, np.nan], [1, 1]]), [0, 1], "NaN"),
        ({}, np.array([[0.0, np.inf], [1, 1]]), [0, 1], "infinity"),
        ({}, np.ones((4, 2)), [1, 1, 1, 1], "single class"),
        ({}, np.arange(12.0).reshape(6, 2), [[0, 1], [1, 0], [0, 1], [1, 1], [0, 0], [1, 0]],
         "multilabel|1d|column|shape"),
        ({}, np.ones((4, 2)), [0, 1, 0], "inconsistent"),
        ({"C": 0.0}, np.eye(4), [0, 1, 0, 1], "C"),
        ({"C": -1.0}, np.eye(4), [0, 1, 0, 1], "C"),
        ({"gamma": 0.0}, np.eye(4), [0, 1, 0, 1], "gamma"),
        ({"gamma": -2.0}, np.eye(4), [0, 1, 0, 1], "gamma"),
        ({"kernel": "cosine"}, np.eye(4), [0, 1, 0, 1], "kernel"),
        ({"selection": "wss3"}, np.eye(4), [0, 1, 0, 1], "selection"),
        ({"tol": 0.0}, np.eye(4), [0, 1, 0, 1], "tol"),
        ({"cache_size": 0}, np.eye(4), [0, 1, 0, 1], "cache_size"),
    ],
)
def test_bad_input(kw, X, y, match):
    m = SMOClassifier(progress=False, **kw)
    with pytest.raises(ValueError, match=match):
        m.fit(X, y)
    assert not hasattr(m, "alpha_")


def test_callers_arrays_untouched():
    X, y = _data("classif")
    Xs = sp.csr_matrix(np.where(np.abs(X) > 0.5, X, 0.0))
    X0, y0, d0 = X.copy(), y.copy(), Xs.data.copy()
    SMOClassifier(random_state=0, progress=False).fit(X, y)
    SMOClassifier(kernel="linear", random_state=0, progress=False).fit(Xs, y)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(y, y0)
    np.testing.assert_array_equal(Xs.data, d0)


def test_labels_and_multiclass_wrappers():
    from sklearn.multiclass import OneVsOneClassifier

    X, y = make_blobs(150, centers=3, random_state=0)
    clf = OneVsOneClassifier(SMOClassifier(gamma=0.5, progress=False)).fit(X, y)
    assert clf.score(X, y) > 0.9
    Xb, yb = _data("moons")
    labels = np.array(["no", "yes"])[yb]
    m = SMOClassifier(gamma=1.0, progress=False).fit(Xb, labels)
    assert set(m.predict(Xb)) <= {"no", "yes"}
    assert list(m.classes_) == ["no", "yes"]
    # sklearn layout of dual_coef_ / support_vectors_ / coef_
    ml = SMOClassifier(kernel="linear", progress=False).fit(Xb, yb)
    np.testing.assert_allclose(ml.coef_[0], ml.dual_coef_[0] @ ml.support_vectors_)


def test_no_jit_subprocess_same_alpha(tmp_path):
    """JIT == NUMBA_DISABLE_JIT=1, bit for bit, with float64 cached values.
    (float32 rows come from SGEMV: numba calls scipy's BLAS, the no-JIT path
    numpy's, whose float32 sums may round differently; both paths then reach
    the optimum, see tests/test_cache_dtype.py, but not along the same steps.)"""
    code = (
        "import numpy as np, sys\n"
        "from sklearn.datasets import make_moons\n"
        "from svmlab import SMOClassifier\n"
        "X, y = make_moons(40, noise=0.3, random_state=0)\n"
        "rng = np.random.default_rng(2)\n"
        "Xb = (rng.random((50, 70)) < 0.15).astype(float)\n"
        "yb = (Xb @ rng.normal(size=70) > 0).astype(int)\n"
        "out = []\n"
        "for sel in ('platt', 'wss2'):\n"
        "    for k in ('rbf', 'linear'):\n"
        "        m = SMOClassifier(kernel=k, gamma=1.0, selection=sel, random_state=3,\n"
        "                          cache_dtype='float64', progress=False).fit(X, y)\n"
        "        out.append(m.alpha_)\n"
        "        # binary inputs, a tiny cache: parked phases, compaction,\n"
        "        # popcount kernels and the linear error cache (feature counts)\n"
        "        m = SMOClassifier(kernel=k, gamma=0.1, C=3.0, selection=sel,\n"
        "                          random_state=3, cache_size=0.005, cache_dtype='float64',\n"
        "                          progress=False).fit(Xb, yb)\n"
        "        out.append(m.alpha_)\n"
        "np.save(sys.argv[1], np.concatenate(out))\n"
    )
    res = {}
    for jit in ("0", "1"):
        env = dict(os.environ, NUMBA_DISABLE_JIT=jit)
        f = tmp_path / f"a{jit}.npy"
        subprocess.run([sys.executable, "-c", code, str(f)], env=env, check=True,
                       timeout=300)
        res[jit] = np.load(f)
    np.testing.assert_allclose(res["1"], res["0"], atol=1e-12, rtol=0)


def test_a9a_subset_against_libsvm():
    require_shared_data()
    from svmlab import datasets

    X, y = datasets.load("a9a", "train")
    X, y = X[:600], y[:600]
    for kernel, C, gamma in [("rbf", 1.0, 0.05), ("linear", 0.05, 1.0)]:
        for sel in ("platt", "wss2"):
            m = SMOClassifier(C=C, kernel=kernel, gamma=gamma, selection=sel, random_state=0,
                              progress=False).fit(X, y)
            _check_solution(X, y, m, kernel, gamma, 3, 0.0, C)
