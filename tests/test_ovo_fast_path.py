"""The one-vs-one fast paths of a C-SVC fit (svmlab._multiclass, svmlab.smo._ovo):
several pairs per compiled call (``ovo_pairs``), or each pair's arrays
without its run object (``FastPairs.advance``), must give the model of the
run-by-run path (each pair's SMORun, the path of ``step()`` and callbacks)
bit for bit, hand a pair that does not converge to its own run (its
warning), and keep the pairs reached on Ctrl-C."""

import os
import signal
import time
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_digits, load_iris, load_wine
from sklearn.exceptions import ConvergenceWarning

from _pair_workers import every_worker_runs
from svmlab import _jit, _multiclass
from svmlab.smo import _ovo
from svmlab.svm import SVC

ATTRS = ("dual_coef_", "intercept_", "support_", "n_support_", "n_iter_")


@pytest.fixture(scope="module")
def sets():
    Xi, yi = load_iris(return_X_y=True)
    Xw, yw = load_wine(return_X_y=True)
    Xd, yd = load_digits(return_X_y=True)
    m = np.isin(yd, [0, 3, 5, 8])
    return {"iris": (Xi, yi), "wine": (Xw, yw), "digits4": (Xd[m][:400], yd[m][:400])}


def _fit(make, X, y, path, monkeypatch, **fit_kw):
    """``make()`` fitted on the given path: "driver" (the default fit),
    "lean" (no compiled driver), "runs" (each pair's SMORun), "stepped"
    (a callback: every step recorded)."""
    with monkeypatch.context() as m:
        if path in ("lean", "runs"):
            m.setattr(_ovo.FastPairs, "_driver_ok", lambda self, mc: False)
        if path == "runs":
            m.setattr(_multiclass.MulticlassRun, "_lean_ok", lambda self: False)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            if path == "stepped":
                est = make().fit(X, y, callback=lambda rec: None, **fit_kw)
            else:
                est = make().fit(X, y, **fit_kw)
    return est, sorted(str(x.message) for x in w)


def _same(a, b):
    for name in ATTRS:
        va, vb = getattr(a, name), getattr(b, name)
        if sp.issparse(va):
            va, vb = va.toarray(), vb.toarray()
        assert np.array_equal(np.asarray(va), np.asarray(vb)), name
    assert a.converged_ == b.converged_ and a.stop_reason_ == b.stop_reason_


CASES = [
    ("iris", lambda: SVC(), {}),
    ("wine", lambda: SVC(), {}),
    ("digits4", lambda: SVC(), {}),
    ("iris", lambda: SVC(kernel="linear", C=3.0), {}),
    ("iris", lambda: SVC(kernel="poly", degree=2), {}),
    ("wine", lambda: SVC(class_weight="balanced"), {}),
    ("iris", lambda: SVC(shrinking=False), {}),
    ("iris", lambda: SVC(max_iter=7), {}),        # every pair stops at max_iter
    ("wine", lambda: SVC(C=1e4, max_iter=60), {}),  # some pairs stop, some converge
    ("iris", lambda: SVC(), {"sample_weight": np.linspace(0.2, 2.0, 150)}),
    ("iris", lambda: SVC(cache_size=0.1), {}),   # float32 rows
    ("digits4", lambda: SVC(cache_size=0.5), {}),  # float32 rows, pairs of several sizes
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_fast_paths_give_the_run_by_run_model(sets, monkeypatch, case):
    name, make, kw = CASES[case]
    X, y = sets[name]
    ref, ref_w = _fit(make, X, y, "runs", monkeypatch, **kw)
    for path in ("driver", "lean", "stepped"):
        est, w = _fit(make, X, y, path, monkeypatch, **kw)
        _same(est, ref)
        assert w == ref_w, path


def test_smo_classifier_pairs_take_the_fast_path_with_the_same_model(sets, monkeypatch):
    """SMOClassifier(selection="wss2") on three classes: its pairs' runs are
    SMORuns too (made by its _make_run), so the fast paths take them; the
    model and the kernel evaluations are the run-by-run path's."""
    from svmlab.smo import SMOClassifier

    X, y = sets["iris"]
    calls = []
    original = _ovo.ovo_pairs
    monkeypatch.setattr(_ovo, "ovo_pairs", lambda *a: calls.append(1) or original(*a))
    fast = SMOClassifier(selection="wss2", progress=False).fit(X, y)
    assert calls
    ref, _ = _fit(lambda: SMOClassifier(selection="wss2", progress=False), X, y, "runs",
                  monkeypatch)
    for name in ("dual_coef_", "intercept_", "support_", "n_iter_"):
        assert np.array_equal(getattr(fast, name), getattr(ref, name)), name
    assert fast.kernel_evaluations_ == ref.kernel_evaluations_


def test_the_default_fit_runs_the_pairs_in_compiled_calls(sets, monkeypatch):
    """iris: one call of ovo_pairs runs all three pairs (so the test above
    compares the compiled driver, not a path that silently fell back)."""
    calls = []
    original = _ovo.ovo_pairs

    def spy(*args):
        out = original(*args)
        calls.append((int(out[0]), args[25].dtype))  # args[25]: the row cache's memory
        return out

    monkeypatch.setattr(_ovo, "ovo_pairs", spy)
    X, y = sets["iris"]
    SVC().fit(X, y)
    assert calls == [(3, np.float64)]
    calls.clear()
    SVC(cache_size=0.1).fit(X, y)  # float32 rows (the matrix does not fit): the same
    assert calls == [(3, np.float32)]


@pytest.mark.parametrize("cache_size", [200.0, 0.5], ids=["float64", "float32"])
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_driver_scratch_reused_from_pair_to_pair(sets, monkeypatch, cache_size, n_jobs):
    """The driver's pairs share one caller's scratch (the rows' copy, the
    transpose, the row cache, the float32 rows: FastPairs._scratch): with
    that memory full of NaN before every call, and so holding the previous
    pairs' values (larger pairs first and after), the model is still the
    run-by-run path's, so no pair reads memory it did not write."""
    X, y = sets["digits4"]
    ref, _ = _fit(lambda: SVC(cache_size=cache_size), X, y, "runs", monkeypatch)
    made, seen = [], []
    scratch = _ovo.FastPairs._scratch

    def poisoned(a):
        bufs = scratch(a)
        made.append(bufs)
        return bufs

    original = _ovo.ovo_pairs

    def spy(*args):
        bufs = args[23:27]
        seen.append(tuple(b.ctypes.data for b in bufs))
        for b in bufs:
            b[...] = np.nan
        return original(*args)

    monkeypatch.setattr(_ovo.FastPairs, "_scratch", staticmethod(poisoned))
    monkeypatch.setattr(_ovo, "ovo_pairs", spy)
    every_worker_runs(monkeypatch)  # n_jobs=2: both workers run pairs
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = SVC(cache_size=cache_size, n_jobs=n_jobs).fit(X, y)
    _same(est, ref)
    # one scratch per caller (the main thread, or each worker), every call on one
    assert len(made) == n_jobs and len(set(seen)) == n_jobs
    xbuf, tbuf, cbuf, x32buf = made[0]
    f32 = cache_size < 1
    assert cbuf.dtype == (np.float32 if f32 else np.float64)
    assert (x32buf.size > 0) == f32


def test_a_pair_over_its_allowance_goes_to_its_own_run(sets, monkeypatch):
    """The driver stops at a pair that needs more steps than its allowance;
    that pair runs through its SMORun (chunked, interruptible) and the
    driver takes the pairs after it: the same model."""
    X, y = sets["wine"]
    ref, _ = _fit(SVC, X, y, "runs", monkeypatch)
    original = _ovo.FastPairs._driver_args
    stops = []

    def small(self, mc):
        a = original(self, mc)
        a["limits"][1] = 2  # pair 1 gets two steps in the driver
        return a

    spy_orig = _ovo.ovo_pairs

    def spy(*args):
        out = spy_orig(*args)
        stops.append(int(out[0]))
        return out

    monkeypatch.setattr(_ovo.FastPairs, "_driver_args", small)
    monkeypatch.setattr(_ovo, "ovo_pairs", spy)
    est = SVC().fit(X, y)
    _same(est, ref)
    assert stops == [1, 3]


def test_interpreted_driver_equals_compiled(sets):
    """ovo_pairs' Python body (the interpreted tier of svmlab._jit) writes
    the same multipliers, intercepts and steps as its machine code."""
    X, y = sets["iris"]
    run = SVC().start(X, y).cur
    outs = []
    for fn in (_ovo.ovo_pairs, _jit.interpreted(_ovo.ovo_pairs)):
        a = dict(run._fast._driver_args(run))
        for key in ("alpha_out", "n_iter", "done", "icpt", "counts"):
            a[key] = np.zeros_like(a[key])
        a["tmpl"] = run.store.view(0, 1)
        stop, taken = fn(a["kd"], a["tmpl"], a["pa"], a["pb"], 0, a["kdiag_all"], a["Cv"],
                         a["C"], a["uniform"], a["tol"], a["eps"], a["shrinking"],
                         a["want_rec"], a["limits"], a["slots"], a["offsets"],
                         a["alpha_out"], a["n_iter"], a["done"], a["icpt"], a["counts"],
                         a["budget"], a["keeps"], *run._fast._scratch(a), a["blocks"])
        outs.append((int(stop), int(taken), a["alpha_out"], a["n_iter"], a["done"], a["icpt"]))
    c, i = outs
    assert c[0] == i[0] == 3 and c[1] == i[1] > 0
    for u, v in zip(c[2:], i[2:]):
        assert np.array_equal(u, v)
    # the driver's result is each pair's own run's
    est = SVC().fit(X, y)
    assert np.array_equal(c[5], est.intercept_)


def _mixed_density():
    """Three classes: 0 and 1 dense, 2 mostly zeros, so that pair (0, 1)
    is over the transpose's density bound and the pairs with class 2 are
    under it."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(90, 12)) + 0.5
    X[60:] *= rng.random((30, 12)) < 0.15
    return X, np.repeat([0, 1, 2], 30)


@pytest.mark.parametrize("case", ["iris", "digits4", "mixed", "weighted"])
def test_driver_args_keep_each_pairs_scalar_rules(sets, case):
    """The driver's per-pair inputs made for all pairs at once equal each
    pair's own rules: ``keeps`` is keeps_transpose of the pair's rows (size
    and counted nonzeros) and ``uniform`` says that every row of the pair
    has the plain C."""
    from svmlab.kernels._rows import keeps_transpose

    kw = {}
    if case in ("iris", "digits4"):
        X, y = sets[case]
    else:
        X, y = _mixed_density()
        if case == "weighted":
            kw = {"class_weight": {1: 3.0}}
    run = SVC(**kw).start(X, y).cur
    a = run._fast._driver_args(run)
    kd, c = run.kernel.data, run.coff
    dense = np.asarray(kd.dense)
    keeps, uniform = [], []
    for i, j in run.pairs:
        rows = np.concatenate([dense[c[i]:c[i + 1]], dense[c[j]:c[j + 1]]])
        keeps.append(keeps_transpose(rows.shape[0], rows.shape[1], int(np.count_nonzero(rows)))
                     and not kd.binary)
        cv = np.concatenate([run.Cv[c[i]:c[i + 1]], run.Cv[c[j]:c[j + 1]]])
        uniform.append(bool(np.all(cv == float(run.opts.C))))
    assert a["keeps"].tolist() == keeps
    assert a["uniform"].tolist() == uniform
    assert a["pa"].tolist() == [p[0] for p in run.pairs]
    assert a["pb"].tolist() == [p[1] for p in run.pairs]
    if case == "mixed":
        assert keeps == [False, True, True]
    if case == "weighted":
        assert uniform == [False, True, False]


def test_interrupt_between_driver_calls_keeps_the_pairs_reached(sets, monkeypatch):
    """A Ctrl-C (a real SIGINT) noted while the driver runs: the call in
    flight ends, the pairs it finished are kept, the fit is 'interrupted'."""
    X, y = sets["wine"]
    full = SVC().fit(X, y)
    original = _ovo.FastPairs._driver_args

    def one_pair_per_call(self, mc):
        a = original(self, mc)
        a["budget"] = 1
        return a

    spy_orig = _ovo.ovo_pairs
    calls = []

    def spy(*args):
        calls.append(1)
        out = spy_orig(*args)
        if len(calls) == 1:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.2)
        return out

    monkeypatch.setattr(_ovo.FastPairs, "_driver_args", one_pair_per_call)
    monkeypatch.setattr(_ovo, "ovo_pairs", spy)
    with pytest.warns(ConvergenceWarning, match="interrupted"):
        est = SVC().fit(X, y)
    assert est.stop_reason_ == "interrupted" and not est.converged_
    assert len(calls) == 1
    assert est.n_iter_[0] == full.n_iter_[0] and list(est.n_iter_[1:]) == [0, 0]
    assert est.intercept_[0] == full.intercept_[0]
