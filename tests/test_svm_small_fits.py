"""The shortcuts of a small fit in :mod:`svmlab.svm` (decision record 28s01)
change no result: behaviour only, never timings.

* the feasible start's rows as one DGEMM block
  (:func:`svmlab.kernels.cache.fill_block_gemm`): the rows are the kernel's
  (to GEMM rounding, computed here with numpy), the cache's bookkeeping is
  :func:`fill_block`'s, and OneClassSVM / NuSVR / NuSVC started from them
  reach LIBSVM's optimum on dense data wide enough for the block to be a
  real GEMM;
* the compiled dual runs of the family step with one BLAS thread;
* SVC's compiled C-SVC path validates once: labels of every kind give
  scikit-learn's classes and predictions, bad labels scikit-learn's errors,
  and the inner estimator's checks are not run a second time.
"""

import numpy as np
import pytest
from sklearn import svm as sk

import reference as R
from svmlab.kernels import Kernel
from svmlab.kernels.cache import KernelCache
from svmlab.svm import SVC, NuSVC, NuSVR, OneClassSVM


def _wide(n=160, d=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / np.sqrt(d)
    return np.ascontiguousarray(X)


# ------------------------------------------------------------ the block fill
@pytest.mark.parametrize("kernel", ["rbf", "linear", "poly"])
def test_gemm_fill_rows_are_the_kernel_rows(kernel):
    X = _wide()
    k = Kernel(X, kernel, 0.7, 3, 0.5)
    rows = np.array([5, 17, 17, 3, 99, 42, 0, 150, 7, 8, 9, 10], dtype=np.int64)
    gemm, plain = KernelCache(k, 50.0), KernelCache(k, 50.0)
    assert gemm.fill(rows, gemm=True) == plain.fill(rows) == len(set(rows.tolist()))
    assert gemm.misses == plain.misses
    # the same slots, in the same LRU order, hold the same rows
    np.testing.assert_array_equal(gemm.data.slot_of, plain.data.slot_of)
    K = R.gram(X, kernel, gamma=0.7, degree=3, coef0=0.5)
    for i in set(rows.tolist()):
        s = gemm.data.slot_of[i]
        np.testing.assert_allclose(gemm.data.rows[s], K[i], rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(gemm.data.rows[s], plain.data.rows[s], rtol=1e-12,
                                   atol=1e-13)
    # rows already cached are not computed again
    assert gemm.fill(rows[:4], gemm=True) == 0


def test_gemm_fill_of_a_float32_cache_is_the_plain_fill():
    X = _wide()
    k = Kernel(X, "rbf", 0.7)
    rows = np.arange(0, 60, 3, dtype=np.int64)
    a, b = KernelCache(k, 50.0, dtype="float32"), KernelCache(k, 50.0, dtype="float32")
    a.fill(rows, gemm=True)
    b.fill(rows)
    np.testing.assert_array_equal(a.data.slot_of, b.data.slot_of)
    used = a.data.slot_of[rows]
    np.testing.assert_array_equal(a.data.rows[used], b.data.rows[used])


def test_gemm_fill_respects_the_cache_bound():
    X = _wide(n=400)
    k = Kernel(X, "rbf", 0.7)
    c = KernelCache(k, 400 * 8 * 10 / 2**20)  # 10 rows
    assert c.n_slots == 10
    assert c.fill(np.arange(50), gemm=True) == 8  # n_slots - 2, as fill_block


# ------------------------------------------- the feasible start's optimum
def _coef(est, n):
    c = np.zeros(n)
    c[est.support_] = est.dual_coef_[0]
    return c


TOL = 1e-7


@pytest.mark.parametrize("nu", [0.1, 0.5])
def test_one_class_from_block_start_reaches_libsvm(nu):
    X = _wide(n=240, d=60, seed=1)
    p = dict(nu=nu, gamma=0.5, tol=TOL)
    ours, theirs = OneClassSVM(**p).fit(X), sk.OneClassSVM(**p).fit(X)
    K = R.gram(X, "rbf", gamma=0.5)
    a, b = _coef(ours, len(X)), _coef(theirs, len(X))
    assert abs(a.sum() - nu * len(X)) <= 1e-9 * nu * len(X) and np.all(a >= 0)
    assert abs(a @ K @ a - b @ K @ b) <= 1e-6 * (b @ K @ b)
    np.testing.assert_allclose(ours.decision_function(X), theirs.decision_function(X),
                               atol=1e-3)


def test_nu_svr_from_block_start_reaches_libsvm():
    X = _wide(n=200, d=50, seed=2)
    z = np.sin(3 * X[:, 0]) + X[:, 1]
    p = dict(C=3.0, nu=0.4, gamma=0.5, tol=TOL)
    ours, theirs = NuSVR(**p).fit(X, z), sk.NuSVR(**p).fit(X, z)
    K = R.gram(X, "rbf", gamma=0.5)
    a, b = _coef(ours, len(X)), _coef(theirs, len(X))

    def f(beta):
        return 0.5 * beta @ K @ beta - z @ beta

    assert abs(f(a) - f(b)) <= 1e-6 * abs(f(b))
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), atol=1e-3)


def test_nu_svc_from_block_start_reaches_libsvm():
    X = _wide(n=200, d=50, seed=3)
    y = np.where(X[:, 0] + 0.3 * X[:, 1] > 0, 1, 0)
    p = dict(nu=0.4, gamma=0.5, tol=TOL)
    ours, theirs = NuSVC(**p).fit(X, y), sk.NuSVC(**p).fit(X, y)
    np.testing.assert_allclose(ours.decision_function(X), theirs.decision_function(X),
                               atol=1e-3)
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))


def test_family_dual_runs_step_with_one_blas_thread():
    X = _wide(n=60, d=8)
    for est in (OneClassSVM(nu=0.3), NuSVR(), NuSVC(nu=0.3)):
        y = None if isinstance(est, OneClassSVM) else np.where(X[:, 0] > 0, 1, 0)
        run = est.start(X) if y is None else est.start(X, y)
        part = run._current()
        assert part.blas_threads == 1
        run.run()
        run.finish()
        assert est.converged_


# ------------------------------------------------- SVC: one validation
@pytest.mark.parametrize("labels", [
    np.array([0, 1]), np.array([-1, 1]), np.array([3, 7, 9]), np.array([False, True]),
    np.array([0.0, 2.0]), np.array(["a", "b"]), np.array(["x", "y", "z"], dtype=object),
    np.array([0, 1], dtype=np.uint8)])
def test_svc_labels_as_sklearn(labels):
    X = _wide(n=90, d=5, seed=4)
    y = labels[np.argsort(X[:, 0]) % len(labels)]
    ours, theirs = SVC(tol=TOL).fit(X, y), sk.SVC(tol=TOL).fit(X, y)
    assert ours.solver_ == "wss2"
    np.testing.assert_array_equal(ours.classes_, theirs.classes_)
    assert ours.classes_.dtype == theirs.classes_.dtype
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
    np.testing.assert_allclose(ours.decision_function(X), theirs.decision_function(X),
                               atol=1e-3)
    np.testing.assert_array_equal(ours.class_weight_, theirs.class_weight_)


@pytest.mark.parametrize("y_kind", ["continuous", "multioutput"])
def test_svc_bad_labels_get_sklearns_error(y_kind):
    X = _wide(n=40, d=3)
    y = X[:, 0] * 1.37 if y_kind == "continuous" else np.c_[X[:, 0] > 0, X[:, 1] > 0]
    with pytest.raises(ValueError) as theirs:
        sk.SVC().fit(X, y)
    with pytest.raises(ValueError) as ours:
        SVC().fit(X, y)
    assert str(ours.value).split(".")[0] == str(theirs.value).split(".")[0]


def test_svc_rows_path_validates_once(monkeypatch):
    from svmlab import smo

    calls = []
    orig = smo.SMOClassifier._validate_params
    monkeypatch.setattr(smo.SMOClassifier, "_validate_params",
                        lambda self: calls.append(1) or orig(self))
    X = _wide(n=80, d=5)
    y = np.where(X[:, 0] > 0, "p", "n")
    est = SVC(tol=TOL).fit(X, y)
    assert est.solver_ == "wss2" and calls == []
    theirs = sk.SVC(tol=TOL).fit(X, y)
    np.testing.assert_allclose(est.decision_function(X), theirs.decision_function(X),
                               atol=1e-3)
    # class weights and sample weights still become the bounds
    sw = np.linspace(0.2, 2.0, len(y))
    cw = {"p": 2.0, "n": 0.5}
    ours = SVC(tol=TOL, class_weight=cw).fit(X, y, sample_weight=sw)
    theirs = sk.SVC(tol=TOL, class_weight=cw).fit(X, y, sample_weight=sw)
    np.testing.assert_allclose(ours.decision_function(X), theirs.decision_function(X),
                               atol=1e-3)


def test_bench_cpu_clock_keeps_the_fastest_fit():
    from svmlab.bench.family import _cpu_timed

    calls = []
    f = _cpu_timed(lambda: calls.append(sum(range(20000))) or len(calls))
    assert f() == 1 and f() == 2
    assert 0.0 <= f.cpu < float("inf")
