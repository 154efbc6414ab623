"""One-vs-one pairs in parallel under ``n_jobs`` (issue 31, item 4).

The contract (svmlab._multiclass.ParallelParts,
docs/decisions/28j01-parallel-pairs.md): the fast path of a multiclass fit
runs up to ``n_jobs`` pairs at once in threads, and the model is the same
bit for bit for any ``n_jobs`` (each pair's run is the one the sequential
path makes: same options, cache size and BLAS threads).  So every check
here compares ``n_jobs=1`` and ``n_jobs=2`` models with ``array_equal``,
and checks that the parallel path really ran (the threads that drove the
pairs are recorded), so that a silent fall-back to the sequential path
fails the test instead of passing it.
"""

import threading
import time
import warnings

import joblib
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_digits
from sklearn.svm import SVC as SkSVC

from _pair_workers import every_worker_runs, in_parallel_phase, worker_name
from svmlab import _multiclass
from svmlab.decomposition import DecompositionClassifier, IRWLSClassifier
from svmlab.smo import SMOClassifier, _nuovo, _ovo
from svmlab.svm import SVC, NuSVC


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    idx = np.random.RandomState(0).permutation(len(y))[:450]
    return X[idx], y[idx]


@pytest.fixture
def drivers(monkeypatch):
    """The names of the threads that drove pairs on the parallel paths, one
    entry per pair: each pair's run (``ParallelParts._drive``) or a pair the
    compiled driver ran to convergence in a worker (``FastPairs.advance_parallel``,
    decision 32p01, whose worker 0 is the calling thread, "caller", 35n01;
    NuSVC's ``NuPairs``, 34n01, the same workers since 36n01).  Every worker
    of either driver runs pairs (:func:`_pair_workers.every_worker_runs`)."""
    seen = []
    original = _multiclass.ParallelParts._drive

    def recording(self, r, halt):
        seen.append(threading.current_thread().name)
        return original(self, r, halt)

    driver = _ovo.ovo_pairs

    def recording_driver(*args):
        out = driver(*args)
        name = worker_name()
        if name.startswith("svmlab-pair-") or in_parallel_phase():
            p0, done = int(args[4]), args[18]
            seen.extend([name] * int(np.sum(done[p0:int(out[0])])))
        return out

    nu_driver = _nuovo.nu_pairs

    def recording_nu_driver(*args):
        # NuSVC's pairs through their compiled driver (decision 34n01),
        # whose worker 0 is the calling thread too (36n01)
        out = nu_driver(*args)
        name = worker_name()
        if name.startswith("svmlab-pair-") or in_parallel_phase():
            seen.extend([name] * int(np.sum(args[19] == 1)))
        return out

    monkeypatch.setattr(_multiclass.ParallelParts, "_drive", recording)
    monkeypatch.setattr(_ovo, "ovo_pairs", recording_driver)
    monkeypatch.setattr(_nuovo, "nu_pairs", recording_nu_driver)
    every_worker_runs(monkeypatch)
    return seen


def _fit(est, X, y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no fit here may stop early
        return est.fit(X, y, **kw)


def assert_same_model(a, b, X_test):
    for name in ("support_", "n_support_", "intercept_", "n_iter_"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    da, db = a.dual_coef_, b.dual_coef_
    if sp.issparse(da):
        da, db = da.toarray(), db.toarray()
    assert np.array_equal(da, db)
    for pa, pb in zip(a.alpha_, b.alpha_):
        assert np.array_equal(pa, pb)
    assert np.array_equal(a.decision_function(X_test), b.decision_function(X_test))
    assert a.converged_ and b.converged_


def _pair_threads(seen):
    return sorted(set(seen))


@pytest.mark.parametrize("case", ["dense", "float32", "csr", "precomputed", "class_weight",
                                  "sample_weight", "full"])
def test_svc_pairs_in_parallel_give_the_same_model(digits, drivers, case):
    X, y = digits
    kw, fit_kw, Xf, Xt = {}, {}, X, X[:50]
    if case == "csr":
        # wide enough that the training copy stays sparse (not densified)
        rng = np.random.RandomState(1)
        Z = sp.random(len(y), 400, density=0.05, random_state=rng, format="csr")
        Xf = sp.hstack([sp.csr_matrix(X), Z]).tocsr()
        Xt = Xf[:50]
    elif case == "precomputed":
        kw["kernel"] = "precomputed"
        Xf = X @ X.T
        Xt = X[:50] @ X.T
    elif case == "float32":
        # a cache too small for the pairs' rows: float32 rows and SGEMM blocks
        kw["cache_size"] = 0.5
    elif case == "class_weight":
        kw["class_weight"] = "balanced"
    elif case == "sample_weight":
        fit_kw["sample_weight"] = np.random.RandomState(2).uniform(0.2, 2.0, len(y))
    elif case == "full":
        kw["solver"] = "full"
    one = _fit(SVC(n_jobs=1, **kw), Xf, y, **fit_kw)
    assert drivers == []  # n_jobs=1: the sequential path
    two = _fit(SVC(n_jobs=2, **kw), Xf, y, **fit_kw)
    # the compiled driver's workers (the caller and a helper) for dense rows,
    # two threads running the pairs' own runs otherwise
    assert _pair_threads(drivers) == (
        ["svmlab-pair-0", "svmlab-pair-1"] if case in ("csr", "precomputed", "full")
        else ["caller", "svmlab-pair-1"])
    assert_same_model(one, two, Xt)
    if case != "full":
        assert two.solver_ == "wss2"


def test_parallel_model_is_libsvms(digits):
    """The parallel fit is LIBSVM's model (scikit-learn's SVC), not only
    its own sequential twin: same support vectors and votes, dual
    coefficients and intercepts to the tolerance."""
    X, y = digits
    ours = _fit(SVC(n_jobs=2, tol=1e-5), X, y)
    ref = SkSVC(tol=1e-5).fit(X, y)
    assert np.array_equal(ours.support_, ref.support_)
    np.testing.assert_allclose(ours.dual_coef_, ref.dual_coef_, atol=2e-3)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, atol=2e-3)
    assert np.array_equal(ours.predict(X), ref.predict(X))


def test_nusvc_pairs_in_parallel(digits, drivers):
    X, y = digits
    one = _fit(NuSVC(nu=0.05, n_jobs=1), X, y)
    two = _fit(NuSVC(nu=0.05, n_jobs=2), X, y)
    # the caller and one helper thread (36n01), every pair once
    assert _pair_threads(drivers) == ["caller", "svmlab-pair-1"]
    assert len(drivers) == 45
    assert_same_model(one, two, X[:50])


@pytest.mark.parametrize("make, threads", [
    (lambda j: SMOClassifier(selection="wss2", progress=False, n_jobs=j),
     ["caller", "svmlab-pair-1"]),  # SVC's compiled driver
    (lambda j: SMOClassifier(selection="platt", progress=False, random_state=0, n_jobs=j),
     ["svmlab-pair-0", "svmlab-pair-1"]),
    (lambda j: IRWLSClassifier(progress=False, random_state=0, n_jobs=j),
     ["svmlab-pair-0", "svmlab-pair-1"]),
    (lambda j: DecompositionClassifier(engine="smo", progress=False, n_jobs=j),
     ["svmlab-pair-0", "svmlab-pair-1"]),
], ids=["smo-wss2", "smo-platt", "irwls", "blocked"])
def test_lab_estimators_pairs_in_parallel(digits, drivers, make, threads):
    X, y = digits
    X, y = X[:240], y[:240]
    one = _fit(make(1), X, y)
    two = _fit(make(2), X, y)
    assert _pair_threads(drivers) == threads
    assert_same_model(one, two, X[:40])


def test_stepped_path_is_the_parallel_fast_path(digits):
    """``iter_fit`` takes the pairs one after the other; with n_jobs=2 it
    ends at the parallel fit's model (same per-pair BLAS threads)."""
    X, y = digits
    fast = _fit(SVC(n_jobs=2), X, y)
    stepped = SVC(n_jobs=2)
    n = sum(1 for _ in stepped.iter_fit(X, y))
    assert n == int(np.sum(fast.n_iter_))
    assert_same_model(fast, stepped, X[:50])


def test_parallel_config_is_honoured(digits, drivers):
    X, y = digits
    _fit(SVC(), X, y)  # n_jobs=None outside a context: one job
    assert drivers == []
    with joblib.parallel_config(n_jobs=2):
        run = SVC().start(X, y)
        assert run.cur.workers == 2  # the compiled one-vs-one run, 45 pairs
        _fit(SVC(), X, y)
        _fit(NuSVC(nu=0.05), X, y)
    # SVC's driver and NuSVC's: the caller and a helper each
    assert _pair_threads(drivers) == ["caller", "svmlab-pair-1"]
    assert len(drivers) == 2 * 45
    with joblib.parallel_config(n_jobs=2):
        # an explicit n_jobs wins over the context, as in scikit-learn
        assert SVC(n_jobs=1).start(X, y).cur.workers == 1


def test_n_jobs_conventions(digits):
    X, y = digits
    import os

    cores = joblib.cpu_count()
    assert SVC(n_jobs=-1).start(X, y).cur.workers == min(cores, 45)
    assert NuSVC(nu=0.05, n_jobs=-1).start(X, y).workers == min(cores, 45)
    # three classes: three pairs, and cores left over go to each pair's BLAS
    m = np.isin(y, [0, 1, 2])
    run = SVC(n_jobs=6).start(X[m], y[m]).cur
    assert (run.workers, run.pair_threads) == (3, 2)
    assert _multiclass.pair_workers(2, 1) == (1, 2)
    with pytest.raises(ValueError):
        SVC(n_jobs=0).fit(X, y)
    with pytest.raises(ValueError):
        SVC(n_jobs=1.5).fit(X, y)
    assert os.cpu_count() >= 1


def test_a_failing_pair_raises_in_the_caller(digits, monkeypatch):
    X, y = digits
    original = _multiclass.MulticlassRun._open_part_in

    def failing(self, p, w):
        if p == 7:
            raise RuntimeError("pair 7 failed")
        return original(self, p, w)

    monkeypatch.setattr(_multiclass.MulticlassRun, "_open_part_in", failing)
    # the pairs' own runs (ParallelParts), not the compiled driver (32p01)
    monkeypatch.setattr(_multiclass.MulticlassRun, "_parallel_driver_ok", lambda self: False)
    with pytest.raises(RuntimeError, match="pair 7 failed"):
        SVC(n_jobs=2).fit(X, y)


def test_interrupt_keeps_the_pairs_reached(digits, monkeypatch):
    """A Ctrl-C (a real SIGINT, sent by a worker) while the pairs run: the
    main thread's handler notes it, the workers stop at their next chunk,
    and the fit is 'interrupted', with a feasible model of the pairs
    reached."""
    import os
    import signal

    from sklearn.exceptions import ConvergenceWarning

    X, y = digits
    original = _multiclass.ParallelParts._drive
    calls = []

    def drive(self, r, halt):
        calls.append(1)
        if len(calls) == 5:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.5)  # the main thread's handler runs meanwhile
        return original(self, r, halt)

    monkeypatch.setattr(_multiclass.ParallelParts, "_drive", drive)
    monkeypatch.setattr(_multiclass.MulticlassRun, "_parallel_driver_ok", lambda self: False)
    with pytest.warns(ConvergenceWarning, match="interrupted"):
        est = SVC(n_jobs=2).fit(X, y)
    assert not est.converged_
    assert est.stop_reason_ == "interrupted"
    assert len(calls) < 45
    C = 1.0
    for a in est.alpha_:
        assert np.all((a >= 0) & (a <= C))


def test_bench_compiled_share(digits):
    """The bench's bound for two cores reads the profile: a fit on the
    compiled SMO spends a real share of its time in compiled functions, a
    pure-Python callable none."""
    from svmlab.bench import __main__ as runner
    from svmlab.bench.multiclass import compiled_share

    assert runner.SUITE_MODULES["n-jobs"] == "svmlab.bench.multiclass"
    X, y = digits
    share, wall = compiled_share(lambda: SVC().fit(X, y))
    assert 0.0 < share < 1.0 and wall > 0
    share, _ = compiled_share(lambda: sum(i * i for i in range(100000)))
    assert share == 0.0
