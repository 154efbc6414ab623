"""The ThunderSVM-style blocked decomposition (``DecompositionClassifier(
engine="smo")`` with a working set of more than two samples,
:mod:`svmlab.decomposition._blocked`).

Every optimum is checked against LIBSVM (scikit-learn's SVC at tol 1e-6) and
against SMO with objectives and KKT violations computed here from a kernel
matrix built by scikit-learn (tests/reference.py), never from numbers the
solver reports about itself."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC

from svmlab import DecompositionClassifier, SMOClassifier
from svmlab.decomposition._blocked import block_smo, select_working_set
from svmlab.reference.blocked import blocked_decomposition as blocked_decomposition_np
from svmlab.decomposition.estimators import BlockedDecompositionRun, DecompositionRecord

from reference import dual_objective, gram, kkt_violation, libsvm_dual, to_pm


def _data(n=300, d=6, seed=0):
    return make_classification(n, d, n_informative=4, random_state=seed, flip_y=0.1)


def _kkt_allowance(alpha, dtype):
    """The KKT violation a float32 cache may add: each G_i sums kernel
    values rounded to float32 (relative error a few u32 = 2**-24, |K| <= 1)
    times the multipliers, so about 4 u32 sum(alpha) (LIBSVM's Qfloat has
    the same)."""
    return 0.0 if dtype == "float64" else 4 * 2.0 ** -24 * float(np.sum(alpha))


def _check(model, X, y, C, gamma, dtype="float32", Cv=None):
    K = gram(X.toarray() if sp.issparse(X) else X, "rbf", gamma)
    yp = to_pm(y, model.classes_)
    a = model.alpha_
    Cb = C if Cv is None else Cv
    assert np.all(a >= 0) and np.all(a <= Cb)
    assert abs(a @ yp) < 1e-8 * max(1.0, C) * len(y)
    W = dual_objective(K, yp, a)
    if Cv is None:
        _, _, W_ref = libsvm_dual(X.toarray() if sp.issparse(X) else X, y, C, "rbf", gamma)
        assert abs(W - W_ref) <= 1e-3 * abs(W_ref), (W, W_ref)
        viol = kkt_violation(K, yp, a, model.intercept_[0], C)
        assert viol <= model.tol * 1.0001 + _kkt_allowance(a, dtype), viol
    assert model.converged_ and model.stop_reason_ == "converged"
    return W


@pytest.mark.parametrize("C", [1.0, 1000.0])
@pytest.mark.parametrize("q", [16, 64])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_reaches_libsvm_and_smo_optimum_dense(C, q, dtype):
    X, y = _data(300 if C < 100 else 150, seed=1)
    m = DecompositionClassifier(C=C, gamma=0.5, engine="smo", working_set_size=q,
                                cache_dtype=dtype, progress=False).fit(X, y)
    W = _check(m, X, y, C, 0.5, dtype)
    s = SMOClassifier(C=C, gamma=0.5, progress=False).fit(X, y)
    W_smo = dual_objective(gram(X, "rbf", 0.5), to_pm(y, s.classes_), s.alpha_)
    assert abs(W - W_smo) <= 1e-3 * abs(W_smo)
    assert np.mean(m.predict(X) == s.predict(X)) > 0.99


@pytest.mark.parametrize("C", [1.0, 1000.0])
def test_reaches_optimum_sparse(C):
    rng = np.random.default_rng(2)
    X = sp.random(200, 40, density=0.15, random_state=3, format="csr")
    X.data = rng.normal(size=X.nnz)
    y = np.where(X @ rng.normal(size=40) + 0.3 * rng.normal(size=200) > 0, 1, -1)
    m = DecompositionClassifier(C=C, gamma=0.3, engine="smo", working_set_size=32,
                                progress=False).fit(X, y)
    _check(m, X, y, C, 0.3)


def test_reaches_optimum_binary_inputs():
    """Bit-packed binary inputs (the kernel layer's popcount path)."""
    rng = np.random.default_rng(4)
    X = sp.csr_matrix((rng.random((250, 70)) < 0.12).astype(float))
    y = (X @ rng.normal(size=70) + 0.4 * rng.normal(size=250) > 0).astype(int)
    m = DecompositionClassifier(C=2.0, gamma=0.2, engine="smo", working_set_size=40,
                                progress=False).fit(X, y)
    _check(m, X, y, 2.0, 0.2)


@pytest.mark.parametrize("C", [1.0, 1000.0])
def test_duplicate_points(C):
    """Exact duplicates, some with the opposite label (K[B, B] singular)."""
    X, y = _data(120, seed=5)
    X = np.vstack([X, X[:40], X[40:60]])
    y = np.concatenate([y, y[:40], 1 - y[40:60]])
    m = DecompositionClassifier(C=C, gamma=0.5, engine="smo", working_set_size=32,
                                progress=False).fit(X, y)
    _check(m, X, y, C, 0.5)


def test_sample_weights_match_weighted_libsvm():
    X, y = _data(200, seed=6)
    rng = np.random.default_rng(0)
    sw = rng.uniform(0.2, 3.0, len(y))
    C = 5.0
    cw = {0: 1.0, 1: 2.5}
    m = DecompositionClassifier(C=C, gamma=0.5, engine="smo", working_set_size=32,
                                class_weight=cw, progress=False).fit(X, y, sample_weight=sw)
    Cv = C * sw * np.where(y == 1, 2.5, 1.0)
    W = _check(m, X, y, C, 0.5, Cv=Cv)
    svc = SVC(C=C, gamma=0.5, tol=1e-6, class_weight=cw).fit(X, y, sample_weight=sw)
    a_ref = np.zeros(len(y))
    a_ref[svc.support_] = np.abs(svc.dual_coef_[0])
    W_ref = dual_objective(gram(X, "rbf", 0.5), to_pm(y), a_ref)
    assert abs(W - W_ref) <= 1e-3 * abs(W_ref)
    # the weighted KKT conditions, checked here with the per-example bounds
    K = gram(X, "rbf", 0.5)
    yp = to_pm(y)
    f = K @ (m.alpha_ * yp) + m.intercept_[0]
    r = yp * f - 1
    a = m.alpha_
    viol = np.where(a <= 0, np.maximum(-r, 0), np.where(a >= Cv, np.maximum(r, 0), np.abs(r)))
    assert viol.max() <= 1e-3 + 1e-4


def _fit_all_ways(X, y, **kw):
    fast = DecompositionClassifier(**kw).fit(X, y)
    recs = []
    stepped = DecompositionClassifier(**kw).fit(X, y, callback=recs.append)
    lazy = list(DecompositionClassifier(**kw).iter_fit(X, y))
    est = DecompositionClassifier(**kw)
    run = est.start(X, y)
    assert isinstance(run, BlockedDecompositionRun)
    manual = []
    while (r := run.step()) is not None:
        manual.append(r)
    run.finish()
    return fast, stepped, recs, lazy, manual, est


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_stepped_equals_fast(dtype):
    X, y = _data(400, seed=7)
    # a small cache: the row store evicts (it holds q rows at least)
    kw = dict(C=10.0, gamma=0.5, engine="smo", working_set_size=32, cache_size=0.02,
              cache_dtype=dtype, progress=False)
    fast, stepped, recs, lazy, manual, est = _fit_all_ways(X, y, **kw)
    sets = [tuple(r.working_set) for r in recs]
    assert sets == [tuple(r.working_set) for r in lazy] == [tuple(r.working_set) for r in manual]
    assert fast.n_iter_ == stepped.n_iter_ == len(recs) == est.n_iter_
    np.testing.assert_array_equal(stepped.alpha_, fast.alpha_)
    np.testing.assert_array_equal(est.alpha_, fast.alpha_)
    assert fast.intercept_[0] == stepped.intercept_[0]
    assert sum(r.rows_computed for r in recs) == fast.kernel_rows_


def test_records_recomputed_in_test():
    """Each record: the working set (kept half + new half), alpha_B, and the
    dual objective, recomputed here; W never decreases."""
    X, y = _data(200, seed=8)
    C, q = 5.0, 20
    est = DecompositionClassifier(C=C, gamma=0.5, engine="smo", working_set_size=q,
                                  cache_dtype="float64", progress=False)
    recs = list(est.iter_fit(X, y))
    assert len(recs) == est.n_iter_ >= 2 and est.converged_
    K = gram(X, "rbf", 0.5)
    yp = to_pm(y, est.classes_)
    a = np.zeros(len(y))
    prev = 0.0
    last = None
    for r in recs:
        assert isinstance(r, DecompositionRecord) and r.engine == "smo"
        assert r.subproblem_size == len(r.working_set) == q
        assert len(set(r.working_set.tolist())) == q
        if last is not None:  # ThunderSVM: the last q/2 of B stay
            np.testing.assert_array_equal(r.working_set[:q // 2], last.working_set[q // 2:])
        assert r.max_violation > est.tol and r.engine_iterations >= 1
        a[r.working_set] = r.alpha_B
        W = dual_objective(K, yp, a)
        assert r.dual_objective == pytest.approx(W, rel=1e-9, abs=1e-9)
        assert W >= prev - 1e-12
        prev = W
        last = r
    np.testing.assert_allclose(a, est.alpha_)


def test_first_step_takes_the_maximal_violators():
    """Step 1's working set is the first-order ranking of I_up / I_low,
    alternating, computed here from v = y (alpha = 0)."""
    X, y = _data(100, seed=9)
    est = DecompositionClassifier(C=1.0, gamma=0.5, engine="smo", working_set_size=10,
                                  progress=False)
    r = est.start(X, y).step()
    yp = to_pm(y)
    # alpha = 0: I_up = positives (v = 1), I_low = negatives (v = -1); ties
    # broken by index
    pos = np.flatnonzero(yp > 0)[:5]
    neg = np.flatnonzero(yp < 0)[:5]
    expect = np.ravel(np.column_stack([pos, neg]))
    np.testing.assert_array_equal(r.working_set, expect)


def test_numpy_twin_reaches_the_same_optimum():
    """The readable twin (NumPy, full kernel matrix) and the compiled run."""
    X, y = _data(150, seed=10)
    C, q = 10.0, 16
    K = gram(X, "rbf", 0.5)
    yp = to_pm(y)
    a_np, steps = blocked_decomposition_np(K, yp, C, 1e-3, q)
    m = DecompositionClassifier(C=C, gamma=0.5, engine="smo", working_set_size=q,
                                cache_dtype="float64", progress=False).fit(X, y)
    W_np = dual_objective(K, yp, a_np)
    W = dual_objective(K, yp, m.alpha_)
    assert abs(W - W_np) <= 1e-6 * abs(W)
    assert abs(steps - m.n_iter_) <= max(2, 0.1 * steps)


def test_block_smo_solves_a_whole_problem():
    """block_smo on B = every sample, tiny eps: LIBSVM's optimum."""
    X, y = _data(60, seed=11)
    C = 3.0
    K = gram(X, "rbf", 0.5)
    yp = to_pm(y)
    a = np.zeros(60)
    v = yp.copy()
    steps, gap0, stuck = block_smo(K, yp, a, np.full(60, C), v, 1e-8, 100000)
    assert not stuck and steps > 0 and gap0 == pytest.approx(2.0)
    _, _, W_ref = libsvm_dual(X, y, C, "rbf", 0.5)
    assert abs(dual_objective(K, yp, a) - W_ref) <= 1e-7 * abs(W_ref)
    np.testing.assert_allclose(v, yp - K @ (a * yp), atol=1e-9)


def test_select_working_set_matches_a_sort():
    rng = np.random.default_rng(12)
    for _ in range(50):
        n = int(rng.integers(4, 40))
        y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
        C = 2.0
        alpha = rng.choice([0.0, 1.0, C], n)
        v = rng.integers(-4, 4, n).astype(float)
        excl = rng.random(n) < 0.2
        k = int(rng.integers(1, n))
        got = select_working_set(v, y, alpha, np.full(n, C), k, excl)
        up = np.where(y > 0, alpha < C, alpha > 0) & ~excl
        low = np.where(y > 0, alpha > 0, alpha < C) & ~excl
        iu = [i for i in np.argsort(-v, kind="stable") if up[i]]
        il = [i for i in np.argsort(v, kind="stable") if low[i]]
        want = []
        for p in range(max(len(iu), len(il))):
            for lst in (iu, il):
                if p < len(lst) and lst[p] not in want and len(want) < k:
                    want.append(lst[p])
        assert list(got) == want


def test_max_iter_honoured_with_warning():
    X, y = _data(300, seed=13)
    m = DecompositionClassifier(C=100.0, gamma=0.5, engine="smo", working_set_size=8,
                                max_iter=3, progress=False)
    with pytest.warns(ConvergenceWarning, match="max_iter=3"):
        m.fit(X, y)
    assert m.n_iter_ == 3 and not m.converged_ and m.stop_reason_ == "max_iter"
    a = m.alpha_
    assert np.all((a >= 0) & (a <= 100.0)) and abs(a @ to_pm(y)) < 1e-8


def test_q2_is_still_plain_smo_and_default_is_blocked():
    X, y = _data(80, seed=14)
    run = DecompositionClassifier(engine="smo", working_set_size=2).start(X, y)
    assert not isinstance(run, BlockedDecompositionRun)
    run = DecompositionClassifier(engine="smo").start(X, y)
    assert isinstance(run, BlockedDecompositionRun) and run.q == 80
    run = DecompositionClassifier(engine="qp", working_set_size=10).start(X, y)
    assert not isinstance(run, BlockedDecompositionRun)


def test_row_store_stays_within_the_cache():
    X, y = _data(400, seed=15)
    for cache_mb, dtype in ((0.2, "float32"), (0.2, "float64"), (0.01, "float32")):
        est = DecompositionClassifier(C=1.0, gamma=0.5, engine="smo", working_set_size=20,
                                      cache_size=cache_mb, cache_dtype=dtype, progress=False)
        run = est.start(X, y)
        nbytes = run.store.buf.nbytes
        assert nbytes <= max(cache_mb * 2**20, 20 * 400 * np.dtype(dtype).itemsize)
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)
            run.run()
        assert run.converged


def test_jit_equals_no_jit():
    """The same fit with numba's JIT off (the compiled loops run as Python):
    the same outer steps and the same multipliers (float64 rows)."""
    import json
    import os
    import subprocess
    import sys

    code = (
        "import json, numpy as np;"
        "from sklearn.datasets import make_classification;"
        "from svmlab import DecompositionClassifier;"
        "X, y = make_classification(120, 5, n_informative=3, random_state=16, flip_y=0.1);"
        "m = DecompositionClassifier(C=10.0, gamma=0.5, engine='smo', working_set_size=12,"
        " cache_dtype='float64', progress=False).fit(X, y);"
        "print(json.dumps({'n_iter': m.n_iter_, 'alpha': m.alpha_.tolist()}))"
    )
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    outs = []
    for jit_off in ("0", "1"):
        env = dict(os.environ, NUMBA_DISABLE_JIT=jit_off)
        out = subprocess.run([sys.executable, "-c", code], env=env, cwd=root,
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        outs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    assert outs[0]["n_iter"] == outs[1]["n_iter"]
    np.testing.assert_allclose(outs[0]["alpha"], outs[1]["alpha"], rtol=0, atol=1e-12)


def test_row_store_holds_the_right_rows():
    """Random fetches through a small store (evictions, scattered and
    contiguous slots, runs longer than the scratch block): every held row
    equals the kernel row computed here by scikit-learn, and K[B, B]
    assembled by block_BB equals the kernel matrix."""
    from svmlab.decomposition._blocked import RowStore
    from svmlab.kernels import Kernel

    rng = np.random.default_rng(17)
    X = rng.normal(size=(700, 4))
    K = gram(X, "rbf", 0.3)
    kern = Kernel(X, "rbf", 0.3)
    store = RowStore(kern, 700, 600 * 700 * 8 / 2**20, 40, "float64")
    assert store.cap == 600
    for step in range(1, 40):
        k = int(rng.integers(1, 330))
        B = rng.choice(700, k, replace=False)
        slots, n_new = store.fetch(B, step)
        assert n_new <= k
        np.testing.assert_allclose(store.buf[slots], K[B], rtol=1e-12, atol=1e-14)
        held = np.flatnonzero(store.slot_of >= 0)
        assert len(held) <= store.cap
        np.testing.assert_array_equal(store.owner[store.slot_of[held]], held)
        np.testing.assert_allclose(store.buf[store.slot_of[held]], K[held], rtol=1e-12,
                                   atol=1e-14)
        Bq = rng.choice(700, 30, replace=False)
        out = np.empty((30, 30))
        store.block_BB(Bq, step, out)
        np.testing.assert_allclose(out, K[np.ix_(Bq, Bq)], rtol=1e-12, atol=1e-14)


def test_stall_is_never_convergence(monkeypatch):
    """A sub-problem solver that cannot move (simulated): the fit stops as
    a stall with a warning, converged_ False, the state feasible."""
    import svmlab.decomposition.estimators as est_mod

    monkeypatch.setattr(est_mod, "block_smo", lambda K, y, a, C, v, eps, cap: (0, 1.0, True))
    X, y = _data(80, seed=18)
    m = DecompositionClassifier(C=1.0, gamma=0.5, engine="smo", working_set_size=8,
                                progress=False)
    with pytest.warns(ConvergenceWarning, match="stalled.*block SMO made no progress"):
        m.fit(X, y)
    assert not m.converged_ and m.stop_reason_ == "stalled" and m.n_iter_ == 0
    assert np.all(m.alpha_ == 0)


def test_check_estimator_on_the_blocked_path():
    """scikit-learn's checks with engine="smo" (the blocked path; the sample-
    weight equivalence checks fail for every weighted svmlab estimator, by
    tol, see tests/test_estimator_hygiene.py)."""
    from sklearn.utils.estimator_checks import check_estimator
    from test_estimator_hygiene import SAMPLE_WEIGHT_XFAIL

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(DecompositionClassifier(engine="smo", progress=False),
                                  on_fail=None, expected_failed_checks=SAMPLE_WEIGHT_XFAIL)
    failed = [(r["check_name"], str(r["exception"])[:300]) for r in results
              if r["status"] == "failed"]
    assert failed == []
    assert len([r for r in results if r["status"] == "passed"]) >= 35
