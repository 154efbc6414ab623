"""Step hooks of the family estimators (svmlab's contract,
svmlab._stepping): ``fit(callback=f)``, ``iter_fit`` and ``start`` visit
the same steps as the fast ``fit``, records say which problem (pair) they
belong to, a callback can stop the fit with a feasible model, and
``max_iter`` bounds each problem."""

import numpy as np
import pytest
from sklearn.datasets import make_blobs, make_regression

from svmlab.smo import DualStep, SMOStep
from svmlab.svm import SVC, SVR, NuSVC, NuSVR, OneClassSVM
from svmlab.svm._run import FamilyStep
from svmlab.svm._solve import backend


def _data(kind):
    if kind == "regression":
        X, z = make_regression(60, 3, noise=5.0, random_state=0)
        return X / X.std(0), (z - z.mean()) / z.std()
    X, y = make_blobs(75, centers=3, cluster_std=2.5, random_state=0)
    return X / X.std(0), y


CASES = [(SVR(gamma=0.5), "regression"), (NuSVR(gamma=0.5), "regression"),
         (OneClassSVM(gamma=0.5), "classification"), (NuSVC(gamma=0.5), "classification"),
         (SVC(kernel="precomputed"), "classification"), (SVC(gamma=0.5), "classification")]
IDS = ["SVR", "NuSVR", "OneClassSVM", "NuSVC", "SVC-precomputed", "SVC-compiled"]


def _fit_args(est, kind):
    X, y = _data(kind)
    if est.kernel == "precomputed":
        X = X @ X.T
    return X, y


@pytest.mark.parametrize("est,kind", CASES, ids=IDS)
def test_stepped_equals_fast(est, kind):
    X, y = _fit_args(est, kind)
    fast = type(est)(**est.get_params()).fit(X, y)
    records = []
    stepped = type(est)(**est.get_params()).fit(X, y, callback=records.append)
    np.testing.assert_array_equal(stepped.dual_coef_, fast.dual_coef_)
    np.testing.assert_array_equal(stepped.intercept_, fast.intercept_)
    np.testing.assert_array_equal(stepped.support_, fast.support_)
    assert len(records) == int(np.sum(fast.n_iter_)) > 0
    assert all(isinstance(r, FamilyStep) for r in records)
    assert [r.iteration for r in records] == list(range(1, len(records) + 1))
    # the compiled C-SVC runs record SMOStep; the generalised dual records
    # the compiled loop's DualStep (svmlab.smo.DualRun; the readable twin's
    # record only when the compiled loop is absent)
    kind = "precomputed" if est.kernel == "precomputed" else "named"
    bk = backend(fast, "c_svc" if isinstance(fast, SVC) else "other", kind)
    assert bk == ("rows" if kind == "named" and isinstance(fast, SVC) else "dual")
    inner = SMOStep if bk in ("rows", "full") else DualStep
    assert all(isinstance(r.record, inner) for r in records)
    via_iter = list(type(est)(**est.get_params()).iter_fit(X, y))
    assert [(r.problem_index, r.i1, r.i2) for r in via_iter] == \
        [(r.problem_index, r.i1, r.i2) for r in records]


@pytest.mark.parametrize("est,kind", CASES[:5], ids=IDS[:5])
def test_records_replay_to_the_solution(est, kind):
    """The records (svmlab.smo.DualStep of the compiled generalised dual, or
    the compiled SMO's SMOStep for C-SVC on its own runs: the same field
    names), replayed per problem, end at the fitted ``alpha_``."""
    X, y = _fit_args(est, kind)
    run = type(est)(**est.get_params()).start(X, y)
    records = list(iter(run.step, None))
    fitted = run.finish()
    alphas = fitted.alpha_ if isinstance(fitted.alpha_, list) else [fitted.alpha_]
    for p, alpha in enumerate(alphas):
        mine = [r for r in records if r.problem_index == p]
        a = None
        for r in mine:
            if a is None:  # the start: alpha with the first step's pair undone
                a = alpha.copy() * np.nan
            a[r.i1], a[r.i2] = r.a1_new, r.a2_new
        touched = ~np.isnan(a)
        np.testing.assert_array_equal(a[touched], alpha[touched])
    if isinstance(fitted, (SVC, NuSVC)):
        assert {r.pair for r in records} <= {(fitted.classes_[a], fitted.classes_[b])
                                            for a in range(3) for b in range(a + 1, 3)}


@pytest.mark.parametrize("est,kind", CASES, ids=IDS)
def test_callback_stops_with_a_feasible_model(est, kind):
    X, y = _fit_args(est, kind)
    seen = []

    def stop_after_5(rec):
        seen.append(rec)
        return len(seen) < 5

    m = type(est)(**est.get_params()).fit(X, y, callback=stop_after_5)
    assert len(seen) == 5 and m.stop_reason_ == "callback" and m.fit_status_ == 1
    assert not m.converged_
    dual = np.asarray(m.dual_coef_)
    if isinstance(m, (SVC, NuSVC)):  # each pair's y'a = 0 (LIBSVM layout)
        start = np.r_[0, np.cumsum(m.n_support_)]
        for a in range(3):
            for b in range(a + 1, 3):
                s = dual[b - 1, start[a]:start[a + 1]].sum() + dual[a, start[b]:start[b + 1]].sum()
                assert abs(s) <= 1e-12
    elif isinstance(m, OneClassSVM):
        assert abs(dual.sum() - m.nu * len(X)) <= 1e-9
    else:
        assert abs(dual.sum()) <= 1e-9


def test_max_iter_bounds_each_problem():
    X, y = _data("classification")
    m = NuSVC(gamma=0.5, max_iter=4)
    with pytest.warns(Warning, match="max_iter=4"):
        m.fit(X, y)
    np.testing.assert_array_equal(m.n_iter_, [4, 4, 4])
    assert m.stop_reason_ == "max_iter"


class _Blocks:
    """A scikit-learn fit callback (``sklearn.callback`` protocol) that
    counts the block tasks, keeps the fitted copies' step counts, and can
    ask to stop after a number of blocks."""

    def __init__(self, stop_after=None):
        self.ends, self.stop_after = [], stop_after

    def setup(self, estimator, context):
        pass

    def teardown(self, estimator, context):
        pass

    def on_fit_task_begin(self, estimator, context, *, X=None, y=None, fitted_estimator=None):
        pass

    def on_fit_task_end(self, estimator, context, *, X=None, y=None, fitted_estimator=None):
        if context.parent is not None and context.max_subtasks == 0:  # a block
            self.ends.append(np.sum(fitted_estimator.n_iter_))
            return self.stop_after is not None and len(self.ends) >= self.stop_after
        return False


@pytest.mark.parametrize("est,kind", [CASES[0], CASES[3]], ids=["SVR", "NuSVC"])
def test_sklearn_callbacks(est, kind, monkeypatch):
    pytest.importorskip("sklearn.callback", reason="sklearn.callback needs scikit-learn >= 1.9")
    from svmlab.smo import DualRun

    # several blocks: 5 steps a block
    monkeypatch.setattr(DualRun, "steps_per_task", 5)
    X, y = _fit_args(est, kind)
    plain = type(est)(**est.get_params()).fit(X, y)
    rec = _Blocks()
    with_cb = type(est)(**est.get_params()).set_callbacks(rec).fit(X, y)
    np.testing.assert_array_equal(with_cb.dual_coef_, plain.dual_coef_)
    assert len(rec.ends) >= 2 and rec.ends[-1] == np.sum(plain.n_iter_)
    stop = _Blocks(stop_after=2)
    stopped = type(est)(**est.get_params()).set_callbacks(stop).fit(X, y)
    assert stopped.stop_reason_ == "callback" and stopped.fit_status_ == 1
    assert len(stop.ends) == 2
