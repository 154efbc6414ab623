"""The one-vs-one compiled driver in worker threads (``n_jobs`` > 1,
``svmlab.smo._ovo.FastPairs.advance_parallel``, decision 32p01).

Contract: with several workers, the pending pairs of an SVC fit (dense
float64 rows, WSS 2, no callback) run in batches through ``ovo_pairs`` in
``workers`` threads, each over its own store; the model is the one-worker
fit's bit for bit, a pair the driver hands back runs through its own run
(stop reason and warning as before), Ctrl-C keeps the pairs reached, and an
error in a worker is raised in the caller.  Every check compares against
``n_jobs=1`` (and the run-by-run path) with ``array_equal`` and checks that
the path was taken (both workers ran the driver: the calling thread,
"caller", and the helper ``svmlab-pair-1``; :mod:`_pair_workers` makes the
caller wait for the helper to begin), so a silent fall-back fails."""

import os
import signal
import threading
import time
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning

from _pair_workers import every_worker_runs, worker_name
from svmlab import _multiclass
from svmlab.smo import _ovo
from svmlab.svm import SVC

ATTRS = ("dual_coef_", "intercept_", "support_", "n_support_", "n_iter_")


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    idx = np.random.RandomState(3).permutation(len(y))[:600]
    return X[idx] / 16.0, y[idx]


@pytest.fixture
def seen(monkeypatch):
    """Records ``(worker, pairs converged)`` per ``ovo_pairs`` call
    (:func:`_pair_workers.worker_name`), ``"drive"`` per pair run by its own
    run in a thread, and the calls of ``advance_parallel``; every worker of
    a parallel phase runs pairs (:func:`_pair_workers.every_worker_runs`)."""
    log = {"driver": [], "drive": [], "parallel": 0}
    driver = _ovo.ovo_pairs

    def spy(*args):
        out = driver(*args)
        p0, done = int(args[4]), args[18]
        log["driver"].append((worker_name(), int(np.sum(done[p0:int(out[0])]))))
        return out

    drive = _multiclass.ParallelParts._drive

    def spy_drive(self, r, halt):
        log["drive"].append(threading.current_thread().name)
        return drive(self, r, halt)

    par = _ovo.FastPairs.advance_parallel

    def spy_par(self, mc):
        log["parallel"] += 1
        return par(self, mc)

    monkeypatch.setattr(_ovo, "ovo_pairs", spy)
    monkeypatch.setattr(_multiclass.ParallelParts, "_drive", spy_drive)
    monkeypatch.setattr(_ovo.FastPairs, "advance_parallel", spy_par)
    every_worker_runs(monkeypatch)
    return log


def _fit(est, X, y, **kw):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        est.fit(X, y, **kw)
    return est, sorted(str(x.message) for x in w)


def _same(a, b):
    for name in ATTRS:
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    for pa, pb in zip(a.alpha_, b.alpha_):
        assert np.array_equal(pa, pb)
    assert a.converged_ == b.converged_ and a.stop_reason_ == b.stop_reason_


def _threads(log):
    return sorted({name for name, n in log["driver"] if n > 0})


@pytest.mark.parametrize("kw", [{}, {"kernel": "poly", "degree": 2, "C": 10.0},
                                {"class_weight": "balanced"}, {"shrinking": False},
                                {"cache_size": 0.5}],
                         ids=["rbf", "poly", "class_weight", "no-shrinking", "float32"])
def test_two_workers_give_the_one_worker_model(digits, seen, monkeypatch, kw):
    X, y = digits
    one, w1 = _fit(SVC(n_jobs=1, **kw), X, y)
    assert seen["parallel"] == 0
    del seen["driver"][:]
    two, w2 = _fit(SVC(n_jobs=2, **kw), X, y)
    assert seen["parallel"] == 1 and seen["drive"] == []
    # both workers ran pairs through the driver, every pair once
    assert _threads(seen) == ["caller", "svmlab-pair-1"]
    assert sum(n for _, n in seen["driver"]) == 45
    _same(one, two)
    assert w1 == w2 == []
    assert np.array_equal(one.decision_function(X[:40]), two.decision_function(X[:40]))
    # and the run-by-run path's model (each pair's SMORun)
    with monkeypatch.context() as m:
        m.setattr(_multiclass.MulticlassRun, "_lean_ok", lambda self: False)
        m.setattr(_multiclass.MulticlassRun, "_parallel_driver_ok", lambda self: False)
        runs, _ = _fit(SVC(n_jobs=1, **kw), X, y)
    _same(runs, two)


def test_sample_weights_per_pair_bounds(digits, seen):
    X, y = digits
    sw = np.random.RandomState(2).uniform(0.2, 2.0, len(y))
    sw[y == 4] = 1.0  # pairs of some classes with uniform bounds, some not
    one, _ = _fit(SVC(n_jobs=1), X, y, sample_weight=sw)
    two, _ = _fit(SVC(n_jobs=2), X, y, sample_weight=sw)
    assert seen["parallel"] == 1
    _same(one, two)


def test_pairs_handed_back_run_their_own_runs(digits, seen, monkeypatch):
    """Pairs over the driver's allowance go to their own runs (in threads),
    the other pairs stay in the driver: the same model as one worker."""
    X, y = digits
    original = _ovo.FastPairs._driver_args

    def small(self, mc):
        a = original(self, mc)
        a["limits"][[3, 20, 44]] = 2  # three pairs get two steps in the driver
        return a

    monkeypatch.setattr(_ovo.FastPairs, "_driver_args", small)
    one, w1 = _fit(SVC(n_jobs=1), X, y)
    del seen["driver"][:]
    two, w2 = _fit(SVC(n_jobs=2), X, y)
    assert seen["parallel"] == 1
    assert _threads(seen) == ["caller", "svmlab-pair-1"]
    assert sum(n for _, n in seen["driver"]) == 42
    assert len([d for d in seen["drive"] if d.startswith("svmlab-pair-")]) == 3
    _same(one, two)
    assert w1 == w2 == [] and two.converged_


def test_max_iter_gives_the_same_stop_and_warning(digits, seen):
    X, y = digits
    one, w1 = _fit(SVC(n_jobs=1, max_iter=30), X, y)
    two, w2 = _fit(SVC(n_jobs=2, max_iter=30), X, y)
    assert seen["parallel"] == 1
    _same(one, two)
    assert two.stop_reason_ == "max_iter" and not two.converged_
    assert w1 == w2 and any("max_iter" in m for m in w2)


def test_interrupt_keeps_the_pairs_reached(digits, seen, monkeypatch):
    """A Ctrl-C (a real SIGINT) while the workers run the driver one pair
    per call: the calls in flight end, the pairs finished are kept, the fit
    is 'interrupted' with feasible multipliers."""
    X, y = digits
    original = _ovo.FastPairs._driver_args

    def one_pair_per_call(self, mc):
        a = original(self, mc)
        a["budget"] = 1
        return a

    monkeypatch.setattr(_ovo.FastPairs, "_driver_args", one_pair_per_call)
    spy = _ovo.ovo_pairs
    calls = []

    def sigint(*args):
        calls.append(1)
        if len(calls) == 2:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.3)  # the main thread's handler runs meanwhile
        return spy(*args)

    monkeypatch.setattr(_ovo, "ovo_pairs", sigint)
    with pytest.warns(ConvergenceWarning, match="interrupted"):
        est = SVC(n_jobs=2).fit(X, y)
    assert est.stop_reason_ == "interrupted" and not est.converged_
    reached = sum(n for _, n in seen["driver"])
    assert 0 < reached < 45
    assert int(np.sum(np.asarray(est.n_iter_) > 0)) == reached
    for a in est.alpha_:
        assert np.all((a >= 0) & (a <= 1.0))


def test_an_error_in_a_worker_is_raised_in_the_caller(digits, monkeypatch):
    X, y = digits

    def failing(*args):
        if worker_name() == "svmlab-pair-1":
            raise RuntimeError("worker failed")
        return spy(*args)

    spy = _ovo.ovo_pairs
    monkeypatch.setattr(_ovo, "ovo_pairs", failing)
    every_worker_runs(monkeypatch)  # the helper's first call, then its error
    with pytest.raises(RuntimeError, match="worker failed"):
        SVC(n_jobs=2).fit(X, y)


def test_batches_cover_every_pair_once_own_run_first():
    """Each worker owns a run of the pairs in LIBSVM's order (about half
    the cost each), takes it largest first in batches of about a quarter of
    its cost left, then the smallest pairs at the end of the other run."""
    cost = np.array([1.0, 9.0, 4.0, 4.0, 16.0, 1.0, 2.0])  # total 37
    grab = _ovo.FastPairs._batches([0, 1, 2, 3, 4, 5, 6], cost, 2)
    # worker 0's run: pairs 0..3 (cost 18), worker 1's: 4..6 (cost 19)
    assert grab(0) == [1]              # 9: a quarter of 18 reached
    assert grab(0) == [2]
    assert grab(0) == [3]
    assert grab(0) == [0]
    # its run done: the smallest pairs of worker 1's, up to an eighth of its 19
    assert grab(0) == [5, 6]
    assert grab(1) == [4]
    assert grab(1) is None and grab(0) is None
    # any interleaving hands out every pair once
    for seq in ([0, 1] * 10, [1] * 20, [0] * 20, [1, 1, 0] * 7):
        grab = _ovo.FastPairs._batches([6, 2, 4, 0, 1, 5, 3], cost, 2)
        out = [grab(w) for w in seq]
        got = [p for b in out if b is not None for p in b]
        assert sorted(got) == list(range(7))
    # one worker: every pair, largest first
    grab = _ovo.FastPairs._batches(list(range(7)), cost, 1)
    out = []
    while (b := grab(0)) is not None:
        out.extend(b)
    assert out == [4, 1, 2, 3, 6, 0, 5]


def test_workers_share_the_filled_transpose(digits, monkeypatch):
    """The workers' store kernels read the class-ordered rows' transpose of
    the fit's kernel (filled once, before the workers start), not a copy
    each: the same model as one worker."""
    X, y = digits
    every_worker_runs(monkeypatch)  # the helper makes its store in its thread
    stores = []
    new_store = _multiclass.MulticlassRun._new_store

    def spy(self, kernel):
        s = new_store(self, kernel)
        stores.append(s)
        return s

    monkeypatch.setattr(_multiclass.MulticlassRun, "_new_store", spy)
    one, _ = _fit(SVC(n_jobs=1), X, y)
    assert len(stores) == 1
    stores.clear()
    two, _ = _fit(SVC(n_jobs=2), X, y)
    assert len(stores) == 2
    main, other = (s.kernel.data for s in stores)
    assert main.denseT.shape == (X.shape[1], len(y))  # digits keep a transpose
    assert other.denseT is main.denseT and other.tstate is main.tstate
    assert main.tstate[0] == 1
    assert np.array_equal(main.denseT, main.dense.T)
    # the scratch vectors stay the worker's own
    assert other.work is not main.work
    _same(one, two)
