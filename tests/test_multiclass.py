"""Native one-vs-one multiclass of the kernel classifiers (svmlab._multiclass).

Checked against scikit-learn's SVC (LIBSVM): predictions, the per-pair dual
objectives computed here from the fitted ``dual_coef_``/``support_`` (decoded
with LIBSVM's layout, independently of svmlab's code), KKT conditions per
pair, support sets, intercepts, both decision-function shapes; and the
shared kernel store: bit-identical rows, and fewer kernel evaluations than
separate binary fits of the same pairs.
"""

import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.datasets import load_iris, make_blobs
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics.pairwise import pairwise_kernels
from sklearn.model_selection import GridSearchCV
from sklearn.svm import SVC

from svmlab import (ChunkingClassifier, DecompositionClassifier, IRWLSClassifier,
                    SMOClassifier)
from svmlab._multiclass import PairStep
from svmlab.kernels._rows import Kernel
from svmlab.kernels.cache import (KernelCache, SharedRowStore, get_row, get_row_subset)
from svmlab.smo import SMOStep


# ------------------------------------------------------------------ data
def _iris():
    X, y = load_iris(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    return X, y


def _blobs():
    X, y = make_blobs(n_samples=160, centers=4, n_features=5, cluster_std=2.5,
                      random_state=3)
    return X / 4.0, np.array(["d", "a", "c", "b"])[y]  # string labels, not sorted by first use


def _sparse():
    rng = np.random.default_rng(7)
    n, d = 150, 40
    X = sp.random(n, d, density=0.15, random_state=7, format="csr")
    y = rng.integers(0, 3, n)
    X = X.toarray()
    X[np.arange(n), y] += 1.0  # a class-dependent feature
    return sp.csr_matrix(X), y


DATA = {"iris": _iris, "blobs": _blobs, "sparse": _sparse}

KERNELS = [("rbf", dict(gamma=0.5)), ("linear", {}), ("poly", dict(gamma=0.5, degree=2,
                                                                    coef0=1.0))]


def _solvers(**p):
    return {
        "smo-wss2": SMOClassifier(selection="wss2", progress=False, cache_size=40, **p),
        "smo-platt": SMOClassifier(selection="platt", eps=1e-12, progress=False, **p),
        "irwls": IRWLSClassifier(progress=False, **p),
        "chunking": ChunkingClassifier(progress=False, **p),
        "decomposition": DecompositionClassifier(progress=False, **p),
        "blocked": DecompositionClassifier(engine="smo", working_set_size=16,
                                           progress=False, **p),
    }


# --------------------------------------------- LIBSVM's layout, decoded here
def _pairs(k):
    return [(a, b) for a in range(k) for b in range(a + 1, k)]


def _pair_coefs(est, y_idx, k):
    """Per pair: (rows of X, alpha*y with +1 for the first class), decoded
    from ``support_``/``dual_coef_`` with LIBSVM's layout (class a's
    coefficient in pair (a, b) is in row b-1, class b's in row a)."""
    sup = np.asarray(est.support_)
    dc = est.dual_coef_
    dc = dc.toarray() if sp.issparse(dc) else np.asarray(dc)
    cls = y_idx[sup]
    out = []
    for a, b in _pairs(k):
        ia = np.flatnonzero(cls == a)
        ib = np.flatnonzero(cls == b)
        rows = np.concatenate([sup[ia], sup[ib]])
        coef = np.concatenate([dc[b - 1, ia], dc[a, ib]])
        out.append((rows, coef))
    return out


def _pair_objective(X, y_idx, a, b, rows, coef, kernel, params):
    """The pair's dual objective W = sum alpha - 1/2 (alpha y)' K (alpha y)."""
    Xr = X[rows]
    K = pairwise_kernels(Xr, Xr, metric=kernel, **params)
    return float(np.abs(coef).sum() - 0.5 * coef @ K @ coef)


def _pair_kkt(X, y_idx, a, b, rows_sv, coef_sv, intercept, C, kernel, params):
    """Max KKT violation of the pair problem over all its rows: y f(x) >= 1
    where alpha = 0, <= 1 where alpha = C, = 1 in between."""
    m = (y_idx == a) | (y_idx == b)
    rows = np.flatnonzero(m)
    yy = np.where(y_idx[rows] == a, 1.0, -1.0)
    f = pairwise_kernels(X[rows], X[rows_sv], metric=kernel, **params) @ coef_sv + intercept
    al = np.zeros(len(rows))
    pos = {r: t for t, r in enumerate(rows)}
    for r, c in zip(rows_sv, coef_sv):
        al[pos[r]] = abs(c)
    yf = yy * f
    viol = np.zeros(len(rows))
    viol = np.where(al <= 1e-12, np.maximum(1 - yf, 0), viol)
    viol = np.where(al >= C - 1e-12, np.maximum(yf - 1, 0), viol)
    free = (al > 1e-12) & (al < C - 1e-12)
    viol = np.where(free, np.abs(yf - 1), viol)
    return float(viol.max())


def _dense(X):
    return X.toarray() if sp.issparse(X) else X


@pytest.mark.parametrize("data", list(DATA))
@pytest.mark.parametrize("kernel,params", KERNELS, ids=[k for k, _ in KERNELS])
@pytest.mark.parametrize("solver", ["smo-wss2", "smo-platt", "irwls", "chunking",
                                    "decomposition", "blocked"])
def test_agrees_with_svc(data, kernel, params, solver):
    X, y = DATA[data]()
    C = 1.0
    svc = SVC(C=C, kernel=kernel, tol=1e-8, **params).fit(X, y)
    est = _solvers(C=C, kernel=kernel, tol=1e-6, **params)[solver]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est.fit(X, y)
    k = len(svc.classes_)
    assert k > 2
    np.testing.assert_array_equal(est.classes_, svc.classes_)
    assert est.converged_ and est.stop_reason_ == "converged"
    P = k * (k - 1) // 2
    assert est.n_iter_.shape == (P,) and est.intercept_.shape == (P,)
    assert est.dual_coef_.shape == (k - 1, len(est.support_))
    assert est.n_support_.shape == (k,) and est.n_support_.sum() == len(est.support_)
    y_idx = np.searchsorted(svc.classes_, y)
    # support_ grouped by class, ascending within each class
    cls = y_idx[est.support_]
    assert np.all(np.diff(cls) >= 0)
    for c in range(k):
        s = est.support_[cls == c]
        assert np.all(np.diff(s) > 0) and len(s) == est.n_support_[c]
    Xd = _dense(X)
    ours = _pair_coefs(est, y_idx, k)
    theirs = _pair_coefs(svc, y_idx, k)
    for p, (a, b) in enumerate(_pairs(k)):
        (r1, c1), (r2, c2) = ours[p], theirs[p]
        # coefficients: +1 for the first class (LIBSVM's sign), within [-C, C]
        assert np.all(np.sign(c1[y_idx[r1] == a]) >= 0) and np.all(np.abs(c1) <= C + 1e-9)
        assert abs(c1.sum()) < 1e-8  # sum alpha y = 0
        w1 = _pair_objective(Xd, y_idx, a, b, r1, c1, kernel, params)
        w2 = _pair_objective(Xd, y_idx, a, b, r2, c2, kernel, params)
        assert abs(w1 - w2) <= 1e-3 * max(1.0, abs(w2))
        assert _pair_kkt(Xd, y_idx, a, b, r1, c1, est.intercept_[p], C, kernel,
                         params) < 1e-2
    np.testing.assert_array_equal(est.predict(X), svc.predict(X))
    svc.decision_function_shape = "ovo"
    est.set_params(decision_function_shape="ovo")
    d_ovo = est.decision_function(X)
    assert d_ovo.shape == (X.shape[0], P)
    np.testing.assert_allclose(d_ovo, svc.decision_function(X), atol=2e-3)
    svc.decision_function_shape = "ovr"
    est.set_params(decision_function_shape="ovr")
    d_ovr = est.decision_function(X)
    assert d_ovr.shape == (X.shape[0], k)
    np.testing.assert_allclose(d_ovr, svc.decision_function(X), atol=2e-3)
    np.testing.assert_allclose(est.intercept_, svc.intercept_, atol=2e-3)
    if kernel == "linear":
        ref = svc.coef_.toarray() if sp.issparse(svc.coef_) else svc.coef_
        np.testing.assert_allclose(est.coef_, ref, atol=2e-3)


@pytest.mark.parametrize("solver", ["smo-wss2", "irwls", "decomposition"])
def test_support_and_coefficients_match_svc_on_iris(solver):
    """Where the optimum is unique (strictly convex rbf problems), the
    support sets and coefficients themselves agree."""
    X, y = _iris()
    svc = SVC(C=10.0, gamma=0.5, tol=1e-10).fit(X, y)
    est = _solvers(C=10.0, gamma=0.5, tol=1e-8)[solver].fit(X, y)
    np.testing.assert_array_equal(est.support_, svc.support_)
    np.testing.assert_array_equal(est.n_support_, svc.n_support_)
    np.testing.assert_allclose(est.dual_coef_, svc.dual_coef_, atol=1e-4)
    np.testing.assert_allclose(est.intercept_, svc.intercept_, atol=1e-4)


def test_weights_agree_with_svc():
    X, y = _blobs()
    rng = np.random.default_rng(0)
    sw = rng.uniform(0.2, 2.0, len(y))
    cw = {"a": 2.0, "b": 0.5, "c": 1.0, "d": 3.0}
    for class_weight in (cw, "balanced"):
        svc = SVC(C=0.5, gamma=0.5, tol=1e-8, class_weight=class_weight).fit(X, y, sample_weight=sw)
        est = SMOClassifier(selection="wss2", C=0.5, gamma=0.5, tol=1e-7, progress=False,
                            class_weight=class_weight).fit(X, y, sample_weight=sw)
        np.testing.assert_allclose(est.class_weight_, svc.class_weight_)
        np.testing.assert_array_equal(est.predict(X), svc.predict(X))
        est.set_params(decision_function_shape="ovo")
        svc.decision_function_shape = "ovo"
        np.testing.assert_allclose(est.decision_function(X), svc.decision_function(X),
                                   atol=2e-3)


def test_zero_weight_rows_and_empty_class():
    X, y = _iris()
    sw = np.ones(len(y))
    sw[:10] = 0.0
    est = SMOClassifier(selection="wss2", gamma=0.5, progress=False).fit(X, y, sample_weight=sw)
    ref = SMOClassifier(selection="wss2", gamma=0.5, progress=False).fit(X[10:], y[10:])
    np.testing.assert_array_equal(est.support_, ref.support_ + 10)
    np.testing.assert_allclose(est.dual_coef_, ref.dual_coef_)
    sw[y == 2] = 0.0
    with pytest.raises(ValueError, match="zero weight to every example of class"):
        SMOClassifier(progress=False).fit(X, y, sample_weight=sw)


# --------------------------------------------------------- the shared store
def _class_sorted(kind, rng, N=120):
    if kind == "dense":
        X = rng.normal(size=(N, 6))
    elif kind == "sparse":
        X = sp.random(N, 30, density=0.2, random_state=2, format="csr")
    else:
        X = (rng.random((N, 70)) < 0.3).astype(float)
    coff = np.array([0, 30, 75, 100, N])  # four classes, rows ordered by class
    return X, coff


@pytest.mark.parametrize("kind", ["dense", "sparse", "binary"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_store_rows_equal_the_pair_alone(kind, dtype):
    rng = np.random.default_rng(1)
    X, coff = _class_sorted(kind, rng)
    N = X.shape[0]
    a, b = 1, 3
    pos = np.r_[coff[a]:coff[a + 1], coff[b]:coff[b + 1]]
    kall = Kernel(X, "rbf", 0.3)
    store = SharedRowStore(kall, coff, 0.02, dtype)  # 43 blocks of 150: evictions
    assert store.n_slots < 2 * N
    kp = Kernel(X[pos], "rbf", 0.3)
    store.attach(kp, a, b)
    shared = KernelCache(kp, 40.0, dtype)
    alone = KernelCache(Kernel(X[pos], "rbf", 0.3), 40.0, dtype)
    assert shared.shared is not None and alone.shared is None
    n = len(pos)
    for i in list(range(n)) + list(range(n)):
        r1 = shared.row(i).copy()
        r2 = alone.row(i)
        if kind == "dense":
            np.testing.assert_allclose(r1, r2, rtol=1e-14 if dtype == np.float64 else 1e-6,
                                       atol=0)
        else:
            np.testing.assert_array_equal(r1, r2)
    np.testing.assert_allclose(shared.row(7), pairwise_kernels(
        _dense(X[pos])[7:8], _dense(X[pos]), metric="rbf", gamma=0.3)[0], rtol=1e-6)
    # a subset fetch through the store fills both blocks whole
    shared.clear()
    act = np.arange(0, n, 3, dtype=np.int64)
    r = get_row_subset(kp.data, shared.data, 4, act, len(act))
    np.testing.assert_allclose(r, alone.row(4), rtol=1e-6)
    # values counted: each computed block is its class's size
    c = shared.shared.counts
    assert shared.kernel_evaluations == int(c[0]) == store.kernel_evaluations > 0
    assert int(c[1]) == store.blocks_computed
    # fill_block through the store
    shared.clear()
    assert shared.fill(np.array([1, 2, 3])) == 3
    for i in (1, 2, 3):
        assert i in shared
    np.testing.assert_allclose(shared.row(2), alone.row(2), rtol=1e-6)


def test_store_serves_the_own_class_block_to_every_pair():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(90, 4))
    coff = np.array([0, 30, 60, 90])
    store = SharedRowStore(Kernel(X, "rbf", 0.5), coff, 10.0, np.float64)
    ab = np.r_[0:60]
    k1 = store.attach(Kernel(X[ab], "rbf", 0.5), 0, 1)
    c1 = KernelCache(k1, 10.0)
    for i in range(30):
        get_row(k1.data, c1.data, i)
    assert c1.kernel_evaluations == 30 * 60 and store.blocks_computed == 60
    ac = np.r_[0:30, 60:90]
    k2 = store.attach(Kernel(X[ac], "rbf", 0.5), 0, 2)
    c2 = KernelCache(k2, 10.0)
    for i in range(30):  # class 0's rows: their own-class blocks are stored
        r = get_row(k2.data, c2.data, i)
        np.testing.assert_allclose(r, pairwise_kernels(X[ac][i:i + 1], X[ac], metric="rbf",
                                                       gamma=0.5)[0], rtol=1e-13)
    # only the blocks against class 2 were computed: half of separate fits
    assert c2.kernel_evaluations == 30 * 30
    assert int(c2.shared.counts[2]) == 30
    with pytest.raises(ValueError, match="rows"):
        store.attach(Kernel(X[:10], "rbf", 0.5), 0, 1)


@pytest.mark.parametrize("solver", ["smo-wss2", "smo-platt", "irwls", "decomposition"])
def test_sharing_computes_fewer_kernel_values(solver):
    X, y = _blobs()
    classes = np.unique(y)
    est = _solvers(C=1.0, gamma=0.5, tol=1e-3, cache_dtype="float64")[solver]
    if solver == "irwls":
        # chunking, so that rows go through the cache: each 80-sample pair
        # would otherwise be one working set, whose block is computed apart
        # from the cache (no sharing, and no extra values either)
        est.set_params(working_set_size=32)
    est.fit(X, y)
    separate = 0
    for a in range(len(classes)):
        for b in range(a + 1, len(classes)):
            m = (y == classes[a]) | (y == classes[b])
            one = clone(est).fit(X[m], y[m])
            separate += one.kernel_evaluations_
    assert 0 < est.kernel_evaluations_ < separate


# --------------------------------------------------------- records / stepping
def test_records_name_their_pair():
    X, y = _blobs()
    est = SMOClassifier(selection="wss2", gamma=0.5, progress=False)
    recs = list(est.iter_fit(X, y))
    assert all(isinstance(r, PairStep) and isinstance(r.record, SMOStep) for r in recs)
    assert [r.iteration for r in recs] == list(range(1, len(recs) + 1))
    order = [r.pair_index for r in recs]
    assert order == sorted(order)  # pairs one after the other
    P = len(est.intercept_)
    counts = np.bincount(order, minlength=P)
    np.testing.assert_array_equal(counts, est.n_iter_)
    labels = est.classes_
    pairs = [(labels[a], labels[b]) for a in range(4) for b in range(a + 1, 4)]
    for r in recs:
        assert r.pair == pairs[r.pair_index]
        assert r.classes == (list(labels).index(r.pair[0]), list(labels).index(r.pair[1]))
        assert r.record.iteration <= est.n_iter_[r.pair_index]
        assert r.i1 == r.record.i1  # fields of the binary record are readable
    # the same fit through fit(callback) and the fast path
    seen = []
    est2 = clone(est).fit(X, y, callback=seen.append)
    fast = clone(est).fit(X, y)
    assert len(seen) == len(recs)
    np.testing.assert_array_equal(est2.n_iter_, fast.n_iter_)
    np.testing.assert_allclose(est2.dual_coef_, fast.dual_coef_)
    np.testing.assert_allclose(est.dual_coef_, fast.dual_coef_)


def test_callback_stop_and_start_step():
    X, y = _iris()
    est = SMOClassifier(selection="wss2", gamma=0.5, progress=False)
    est.fit(X, y, callback=lambda r: r.iteration < 25)
    assert est.stop_reason_ == "callback" and not est.converged_
    assert est.n_iter_.sum() == 25
    run = clone(est).start(X, y)
    recs = [run.step() for _ in range(5)]
    assert all(r.pair_index == 0 for r in recs)
    run.stop()
    fitted = run.finish()
    assert fitted.n_iter_[0] == 5 and fitted.n_iter_[1:].sum() == 0


def test_max_iter_is_per_pair_and_honest():
    X, y = _blobs()
    est = SMOClassifier(selection="wss2", gamma=0.5, max_iter=3, progress=False)
    with pytest.warns(ConvergenceWarning, match="One-vs-one"):
        est.fit(X, y)
    assert not est.converged_ and est.stop_reason_ == "max_iter"
    assert np.all(est.n_iter_ <= 3) and est.n_iter_.max() == 3
    assert len(est.predict(X)) == len(y)


def test_binary_is_unchanged():
    X, y = _iris()
    m = y > 0
    a = SMOClassifier(selection="wss2", gamma=0.5, progress=False).fit(X[m], y[m])
    b = SMOClassifier(selection="wss2", gamma=0.5, progress=False,
                      decision_function_shape="ovo").fit(X[m], y[m])
    np.testing.assert_array_equal(a.alpha_, b.alpha_)
    assert isinstance(a.n_iter_, int) and a.intercept_.shape == (1,)
    assert a.decision_function(X[m]).shape == (m.sum(),)
    recs = list(SMOClassifier(selection="wss2", gamma=0.5, progress=False).iter_fit(X[m], y[m]))
    assert isinstance(recs[0], SMOStep)
    assert not hasattr(a, "_pair_coef")


def test_pickle_clone_gridsearch():
    X, y = _iris()
    est = SMOClassifier(selection="wss2", gamma=0.5, progress=False,
                        decision_function_shape="ovo").fit(X, y)
    est2 = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(est2.decision_function(X), est.decision_function(X))
    c = clone(est)
    assert c.get_params()["decision_function_shape"] == "ovo"
    gs = GridSearchCV(IRWLSClassifier(progress=False), {"C": [0.5, 5.0], "gamma": [0.2, 1.0]},
                      cv=3).fit(X, y)
    assert gs.best_score_ > 0.9
    assert gs.best_estimator_.n_iter_.shape == (3,)


def test_parameter_is_validated():
    X, y = _iris()
    with pytest.raises(ValueError, match="decision_function_shape"):
        SMOClassifier(decision_function_shape="bad", progress=False).fit(X, y)
    for cls in (SMOClassifier, IRWLSClassifier, ChunkingClassifier, DecompositionClassifier):
        assert "decision_function_shape" in cls().get_params()
        assert "decision_function_shape" in cls._parameter_constraints


def test_sklearn_callbacks_see_the_multiclass_state():
    pytest.importorskip("sklearn.callback")

    class StopAfter:
        """Asks for the fitted estimator at each block's end; stops after 4."""

        def __init__(self):
            self.n_iter = []

        def setup(self, estimator, context):
            pass

        def teardown(self, estimator, context):
            pass

        def on_fit_task_begin(self, estimator, context, *, X=None, y=None,
                              fitted_estimator=None):
            pass

        def on_fit_task_end(self, estimator, context, *, X=None, y=None,
                            fitted_estimator=None):
            if context.parent is None:
                return False
            self.n_iter.append(np.asarray(fitted_estimator.n_iter_).copy())
            return len(self.n_iter) >= 4

    X, y = _iris()
    cb = StopAfter()
    est = IRWLSClassifier(gamma=0.5, progress=False).set_callbacks(cb).fit(X, y)
    assert est.stop_reason_ == "callback" and not est.converged_
    assert est.n_iter_.sum() == 4 and est.n_iter_.shape == (3,)
    assert [int(n.sum()) for n in cb.n_iter] == [1, 2, 3, 4]
    assert len(est.predict(X)) == len(y)


def test_pair_size_is_checked_before_work():
    X, y = _iris()  # three classes of 50: every pair has 100 rows
    IRWLSClassifier(working_set_size=100, progress=False, max_iter=1).fit(X, y)
    with pytest.raises(ValueError, match="working_set_size=101"):
        IRWLSClassifier(working_set_size=101, progress=False).fit(X, y)
