"""NuSVC's one-vs-one pairs through the compiled driver (svmlab.smo._nuovo,
docs/decisions/34n01): the same model as the per-pair ``DualRun`` path bit
for bit, with one worker and with two; pairs the driver hands back run
through their own runs; the driver is taken only where it applies; and the
model agrees with scikit-learn's NuSVC."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_digits, load_iris, load_wine
from sklearn.preprocessing import StandardScaler
from sklearn.svm import NuSVC as SkNuSVC

import svmlab.smo._nuovo as nuovo
from _pair_workers import every_worker_runs
from svmlab.svm import NuSVC


def _digits(n=600):
    X, y = load_digits(return_X_y=True)
    return StandardScaler().fit_transform(X)[:n], y[:n]


def _wine():
    return load_wine(return_X_y=True)


def _iris():
    return load_iris(return_X_y=True)


def _count_driver_calls(patch):
    """Count the driver's calls (``NuPairs._call``) from now on, through
    ``patch`` (a ``monkeypatch`` or one of its contexts); returns the
    one-element list the count goes to."""
    calls = [0]
    real_call = nuovo.NuPairs._call

    def counting(a, S, bufs):
        calls[0] += 1
        return real_call(a, S, bufs)

    patch.setattr(nuovo.NuPairs, "_call", staticmethod(counting))
    return calls


def _fit(X, y, fast, monkeypatch, **kw):
    """A NuSVC fit with the driver on (``fast``) or off (the per-pair
    runs), its warnings' texts, and the number of driver calls."""
    with monkeypatch.context() as m:
        calls = _count_driver_calls(m)
        if not fast:
            m.setattr(nuovo, "nu_pairs_fast", lambda run: None)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            model = NuSVC(**kw).fit(X, y)
    return model, sorted(str(x.message) for x in w), calls[0]


def _same(m1, m2):
    for name in ("dual_coef_", "intercept_", "support_", "n_support_", "n_iter_"):
        a, b = getattr(m1, name), getattr(m2, name)
        a, b = (np.asarray(v.toarray() if sp.issparse(v) else v) for v in (a, b))
        assert a.shape == b.shape, name
        assert np.array_equal(a, b), name  # bit for bit
    assert m1.fit_status_ == m2.fit_status_


CASES = [
    ("digits", _digits, {}),
    ("digits nu=0.2 C-order", _digits, {"nu": 0.2}),
    ("iris linear nu=0.1", _iris, {"kernel": "linear", "nu": 0.1}),
    ("wine raw poly", _wine, {"kernel": "poly"}),
    ("wine scaled sigmoid", lambda: (StandardScaler().fit_transform(_wine()[0]), _wine()[1]),
     {"kernel": "sigmoid", "gamma": 0.01}),
    ("digits no shrinking", _digits, {"shrinking": False}),
    ("digits balanced weights", _digits, {"class_weight": "balanced"}),
    ("iris max_iter=5", _iris, {"max_iter": 5}),
    # (small CSR input trains on dense rows: the driver takes it too)
    ("digits CSR", lambda: (sp.csr_matrix(_digits()[0]), _digits()[1]), {}),
]


@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize("name,data,kw", CASES, ids=[c[0] for c in CASES])
def test_driver_gives_the_per_pair_model(monkeypatch, name, data, kw, n_jobs):
    X, y = data()
    ref, wref, _ = _fit(X, y, False, monkeypatch, **kw)  # n_jobs=1, per-pair runs
    got, wgot, calls = _fit(X, y, True, monkeypatch, n_jobs=n_jobs, **kw)
    assert calls > 0  # the driver ran
    _same(got, ref)
    assert wgot == wref
    Xq = X[::7]
    assert np.array_equal(got.decision_function(Xq), ref.decision_function(Xq))


def test_sample_weights_same_model(monkeypatch):
    X, y = _digits(400)
    w = np.random.default_rng(0).uniform(0.5, 2.0, len(y))
    ref = NuSVC(nu=0.3)
    with monkeypatch.context() as m:
        m.setattr(nuovo, "nu_pairs_fast", lambda run: None)
        ref.fit(X, y, sample_weight=w)
    calls = _count_driver_calls(monkeypatch)
    for n_jobs in (1, 2):
        got = NuSVC(nu=0.3, n_jobs=n_jobs).fit(X, y, sample_weight=w)
        _same(got, ref)
    assert calls[0] > 0


def test_pairs_over_the_allowance_go_to_their_own_runs(monkeypatch):
    """Pairs the driver does not finish within their allowance are run from
    the start by their own DualRun: same model, no warning, and the other
    pairs are still the driver's."""
    X, y = _digits()
    ref, wref, _ = _fit(X, y, False, monkeypatch)
    real_args = nuovo.NuPairs._args
    opened = []

    def tight(run):
        a = real_args(run)
        a["limits"] = a["limits"].copy()
        a["limits"][::3] = 2  # every third pair: far too few steps
        real_open = run._open_part

        def counting_open(i):
            opened.append(i)
            return real_open(i)

        run._open_part = counting_open
        return a

    for n_jobs in (1, 2):
        opened.clear()
        with monkeypatch.context() as m:
            m.setattr(nuovo.NuPairs, "_args", staticmethod(tight))
            got, wgot, calls = _fit(X, y, True, m, n_jobs=n_jobs)
        assert calls > 0
        _same(got, ref)
        assert wgot == wref == []
        assert sorted(opened) == list(range(0, 45, 3))


def test_scratch_made_once_per_fit_and_worker(monkeypatch):
    X, y = _digits()
    made = []
    real = nuovo.NuPairs._scratch

    def counting(a):
        made.append(1)
        return real(a)

    monkeypatch.setattr(nuovo.NuPairs, "_scratch", staticmethod(counting))
    # both workers run pairs (a helper not begun when the caller has taken
    # every pair is cancelled and makes none: decision 36n01)
    every_worker_runs(monkeypatch)
    for n_jobs, want in ((1, 1), (2, 2)):
        made.clear()
        _, _, calls = _fit(X, y, True, monkeypatch, n_jobs=n_jobs)
        assert calls >= want
        assert len(made) == want


@pytest.mark.parametrize("case", ["precomputed", "callback", "binary pair",
                                  "two classes"])
def test_driver_not_taken_where_it_does_not_apply(monkeypatch, case):
    X, y = _iris()
    kw, fit_kw = {}, {}
    if case == "precomputed":
        X = X @ X.T
        kw = {"kernel": "precomputed"}
    elif case == "callback":
        fit_kw = {"callback": lambda step: None}
    elif case == "binary pair":
        X = (X > np.median(X, axis=0)).astype(np.float64)
    elif case == "two classes":
        X, y = X[y < 2], y[y < 2]
    calls = _count_driver_calls(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = NuSVC(**kw).fit(X, y, **fit_kw)
    assert calls[0] == 0
    assert model.fit_status_ == 0


@pytest.mark.parametrize("data,kw", [(_digits, {}), (_wine, {"kernel": "linear", "nu": 0.2}),
                                     (_iris, {"nu": 0.4})])
def test_agrees_with_scikit_learn_nusvc(data, kw):
    """The driver's model against LIBSVM's (scikit-learn's NuSVC): each
    pair's nu-SVC objective within tolerance of LIBSVM's (neither far
    below: both solve the same problem), and the decision values close."""
    X, y = data()
    X = StandardScaler().fit_transform(X)
    ours = NuSVC(**kw).fit(X, y)
    theirs = SkNuSVC(**kw).fit(X, y)
    assert np.array_equal(ours.support_, theirs.support_) or \
        len(np.setxor1d(ours.support_, theirs.support_)) <= 0.02 * len(theirs.support_) + 1
    d1, d2 = ours.decision_function(X), theirs.decision_function(X)
    scale = np.abs(d2).max()
    assert np.max(np.abs(d1 - d2)) <= 2e-2 * scale
    assert np.mean(ours.predict(X) == theirs.predict(X)) >= 0.995
    # per pair: 1/2 a'Qa of the rescaled multipliers (dual_coef_ = y a / r,
    # the same rescaling for both) from the two models' coefficients
    from sklearn.metrics.pairwise import pairwise_kernels

    def pair_objectives(m):
        k = len(m.classes_)
        out = []
        start = np.concatenate(([0], np.cumsum(m.n_support_)))
        params = {"gamma": m._gamma} if m.kernel != "linear" else {}
        for a in range(k):
            for b in range(a + 1, k):
                ia = np.arange(start[a], start[a + 1])
                ib = np.arange(start[b], start[b + 1])
                coef = np.concatenate((m.dual_coef_[b - 1, ia], m.dual_coef_[a, ib]))
                SV = m.support_vectors_[np.concatenate((ia, ib))]
                K = pairwise_kernels(SV, metric=m.kernel, **params)
                out.append(0.5 * coef @ K @ coef)
        return np.array(out)

    o1, o2 = pair_objectives(ours), pair_objectives(theirs)
    assert np.allclose(o1, o2, rtol=2e-2, atol=1e-6)


def test_interrupt_between_driver_calls_keeps_the_pairs_reached(monkeypatch):
    """A Ctrl-C (a real SIGINT) noted while the driver runs: the call in
    flight ends, the pairs it finished are kept (their model the full
    fit's), the others are not begun, the fit is 'interrupted'."""
    import os
    import signal
    import time

    from sklearn.exceptions import ConvergenceWarning

    X, y = _digits()
    full = NuSVC().fit(X, y)
    real = nuovo.nu_pairs
    sizes = []

    def spy(*args):
        sizes.append(len(args[3]))
        out = real(*args)
        if len(sizes) == 1:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.2)
        return out

    monkeypatch.setattr(nuovo, "nu_pairs", spy)
    with pytest.warns(ConvergenceWarning, match="interrupted"):
        est = NuSVC().fit(X, y)
    assert est.stop_reason_ == "interrupted" and not est.converged_
    assert len(sizes) == 1 and 0 < sizes[0] < 45
    m = sizes[0]
    assert np.array_equal(est.n_iter_[:m], full.n_iter_[:m])
    assert not np.any(est.n_iter_[m:])
    assert np.array_equal(est.intercept_[:m], full.intercept_[:m])


def test_interpreted_driver_equals_compiled(monkeypatch):
    """nu_pairs' Python body (the interpreted tier of svmlab._jit, which
    ``SVMLAB_JIT=auto`` runs for small fits before the background compiler
    has the machine code) gives the compiled driver's model, bit for bit."""
    from svmlab import _jit

    X, y = _iris()
    compiled, _, calls = _fit(X, y, True, monkeypatch, nu=0.3)
    assert calls > 0
    with monkeypatch.context() as m:
        m.setattr(nuovo, "nu_pairs", _jit.interpreted(nuovo.nu_pairs))
        slow, _, calls = _fit(X, y, True, m, nu=0.3)
    assert calls > 0
    _same(slow, compiled)


@pytest.mark.parametrize("solver", ["wss2", "full"])
def test_family_run_reads_part_traits_without_opening_a_pair(monkeypatch, solver):
    """A NuSVC fit's run is made without opening pair 0 (its compiled
    driver never runs that pair's own run; decision 36n01): the traits it
    reads instead (``_DualSolving.part_traits``) are each pair's opened
    ``DualRun``'s, and the model is the per-pair runs'."""
    X, y = _digits(300)
    y = np.where(y < 3, 0, np.where(y < 5, 1, y))  # pairs of unequal sizes
    run = NuSVC(nu=0.1, solver=solver).start(X, y)
    assert run.cur is None and run.n_parts > 2
    sizes = set()
    for p in range(run.n_parts):
        opened = run.solving.open_part(p)
        sizes.add(opened.n_samples)
        want = (opened.step_name, opened.steps_per_task, opened.first_chunk,
                opened.chunk_growth)
        assert run.solving.part_traits(p) == want
        if p == 0:
            assert (run.step_name, run.steps_per_task, run.first_chunk,
                    run.chunk_growth) == want
    assert len(sizes) > 1
    ref, _, _ = _fit(X, y, False, monkeypatch, nu=0.1, solver=solver)
    got, _, _ = _fit(X, y, True, monkeypatch, nu=0.1, solver=solver)
    _same(got, ref)
    # the stepped path opens pair 0 when it steps
    stepped = NuSVC(nu=0.1, solver=solver).start(X, y)
    assert stepped.step() is not None and stepped.cur is not None
