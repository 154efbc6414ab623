"""scikit-learn's callback API (``sklearn.callback``, scikit-learn >= 1.9) on
the six svmlab estimators.

The mapping under test (see :mod:`svmlab._stepping`): ``fit`` is the root
task; its subtasks are blocks of ``steps_per_task`` consecutive steps
(1000 SMO joint steps, one step for the other solvers); there are
``ceil(n_iter_ / B)`` blocks, plus one final block without a step when the
optimality conditions were found to hold at the start of a block.

Step counts are taken from the ``fitted_estimator`` handed to the hooks and
from svmlab's own per-step ``callback=`` records, and compared with each
other; models are compared with plain fits (no callbacks) and feasibility is
checked from ``alpha_``, never from the solver's own numbers.
"""

import math
import os
import warnings

import numpy as np
import pytest

pytest.importorskip("sklearn.callback", reason="sklearn.callback needs scikit-learn >= 1.9")

from sklearn.callback import ProgressBar  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402
from sklearn.pipeline import Pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

import svmlab._stepping as stepping  # noqa: E402
from svmlab import (ChunkingClassifier, CuttingPlaneClassifier,  # noqa: E402
                    CuttingPlaneOrdinalRegressor, DecompositionClassifier, IRWLSClassifier,
                    SMOClassifier)
from svmlab.smo._estimator import SMORun  # noqa: E402

# small problems: every fit below takes milliseconds once compiled
def _factory(cls, **defaults):
    def make(**kw):
        return cls(**{**defaults, "progress": False, **kw})
    return make


FACTORIES = {
    "SMOClassifier": _factory(SMOClassifier, C=1.0, random_state=0),
    "SMOClassifier-wss2": _factory(SMOClassifier, C=1.0, selection="wss2"),
    "IRWLSClassifier": _factory(IRWLSClassifier, C=1.0, random_state=0),
    "ChunkingClassifier": _factory(ChunkingClassifier, C=1.0),
    "DecompositionClassifier": _factory(DecompositionClassifier, C=1.0),
    "CuttingPlaneClassifier": _factory(CuttingPlaneClassifier, C=100.0),
    "CuttingPlaneOrdinalRegressor": _factory(CuttingPlaneOrdinalRegressor, C=100.0),
}
NAMES = list(FACTORIES)

#: a small SMO block for the tests, so that the 120-sample fits span several
#: blocks (the default, 1000 joint steps, is for real data sets)
SMO_BLOCK = 25


@pytest.fixture(autouse=True)
def _small_smo_block(monkeypatch):
    monkeypatch.setattr(SMORun, "steps_per_task", SMO_BLOCK)


def _problem(seed=0, n=120):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + 0.7 * rng.normal(size=n) > 0, 1, -1)
    return X, y


def _data(name):
    X, y = _problem()
    if name == "CuttingPlaneOrdinalRegressor":
        # three ranks from a noisy linear score
        rng = np.random.default_rng(1)
        s = X @ np.array([1.0, -0.5, 0.3]) + 0.3 * rng.normal(size=len(X))
        y = np.digitize(s, np.quantile(s, [1 / 3, 2 / 3]))
    return X, y


def _block(est):
    return SMO_BLOCK if isinstance(est, SMOClassifier) else 1


def _solution(est):
    return est.alpha_ if hasattr(est, "alpha_") else np.r_[est.coef_.ravel(), est.intercept_]


class Recorder:
    """A FitCallback that records every hook call with what it was given:
    the task's name, estimator names, whether it is a leaf, the step count of
    ``fitted_estimator`` and the shapes of X and y."""

    def __init__(self, stop_after_blocks=None):
        self.calls = []
        self.stop_after_blocks = stop_after_blocks
        self._blocks_ended = 0

    def setup(self, estimator, context):
        self.calls.append(dict(hook="setup", estimator=type(estimator).__name__,
                               task=context.task_name))

    def teardown(self, estimator, context):
        self.calls.append(dict(hook="teardown", estimator=type(estimator).__name__,
                               task=context.task_name))

    def _record(self, hook, estimator, context, X, y, fitted_estimator):
        self.calls.append(dict(
            hook=hook, estimator=type(estimator).__name__, task=context.task_name,
            ctx_estimator=context.estimator_name, source=context.source_estimator_name,
            max_subtasks=context.max_subtasks, leaf=context.max_subtasks == 0,
            parent=None if context.parent is None else context.parent.task_name,
            X_shape=None if X is None else np.shape(X),
            y_len=None if y is None else len(y),
            n_iter=getattr(fitted_estimator, "n_iter_", None),
            fitted=fitted_estimator))

    def on_fit_task_begin(self, estimator, context, *, X=None, y=None, fitted_estimator=None):
        self._record("begin", estimator, context, X, y, fitted_estimator)

    def on_fit_task_end(self, estimator, context, *, X=None, y=None, fitted_estimator=None):
        self._record("end", estimator, context, X, y, fitted_estimator)
        if context.parent is not None and context.max_subtasks == 0:
            self._blocks_ended += 1
            if self.stop_after_blocks is not None:
                return self._blocks_ended >= self.stop_after_blocks
        return False

    # helpers for the assertions
    def hooks(self, hook, leaf=None, estimator=None):
        return [c for c in self.calls if c["hook"] == hook
                and (leaf is None or c.get("leaf") == leaf)
                and (estimator is None or c.get("ctx_estimator") == estimator)]


class AutoRecorder(Recorder):
    """The same recorder, auto-propagated to sub-estimators."""

    max_propagation_depth = None


def _check_blocks(rec, est, n_iter):
    """The block structure the mapping promises, for a fit of n_iter steps."""
    B = _block(est)
    begins = rec.hooks("begin", leaf=True)
    ends = rec.hooks("end", leaf=True)
    assert len(begins) == len(ends)
    full = math.ceil(n_iter / B)
    # step counts at the block ends: B, 2B, ..., then n_iter
    counts = [c["n_iter"] for c in ends]
    assert counts[:full] == [min((j + 1) * B, n_iter) for j in range(full)]
    extra = counts[full:]
    # at most one block with no step (the final optimality check), and only
    # when the last step closed a full block
    assert extra in ([], [n_iter])
    if extra:
        assert n_iter % B == 0
    # every block begins where the previous one ended
    assert [c["n_iter"] for c in begins] == [0] + counts[:-1]
    return len(ends)


@pytest.mark.parametrize("name", NAMES)
def test_recorded_hooks_and_same_model(name):
    X, y = _data(name)
    plain = FACTORIES[name]().fit(X, y)
    rec = Recorder()
    est = FACTORIES[name]().set_callbacks(rec)
    assert est.fit(X, y) is est
    # the callbacks do not change the model
    np.testing.assert_allclose(_solution(est), _solution(plain), rtol=0, atol=1e-12)
    assert est.n_iter_ == plain.n_iter_ and est.stop_reason_ == "converged"

    # setup, root begin, blocks, root end, teardown: in that order
    assert rec.calls[0]["hook"] == "setup" and rec.calls[-1]["hook"] == "teardown"
    roots = [c for c in rec.calls if c["hook"] in ("begin", "end") and c["parent"] is None]
    assert [c["hook"] for c in roots] == ["begin", "end"]
    assert rec.calls[1] is roots[0] and rec.calls[-2] is roots[1]
    assert roots[0]["task"] == "fit"
    B = _block(est)
    assert roots[0]["max_subtasks"] == (None if est.max_iter < 0 else
                                        math.ceil(est.max_iter / B))
    # the hooks get the caller's X and y
    assert all(c["X_shape"] == X.shape and c["y_len"] == len(y)
               for c in rec.calls if c["hook"] in ("begin", "end"))
    n_blocks = _check_blocks(rec, est, plain.n_iter_)
    assert n_blocks >= 2
    # begin and end alternate: blocks do not overlap
    seq = [c["hook"] for c in rec.calls if c.get("leaf")]
    assert seq == ["begin", "end"] * n_blocks
    # the fitted_estimator at the last block predicts like the fitted model
    last = rec.hooks("end", leaf=True)[-1]["fitted"]
    np.testing.assert_allclose(last.decision_function(X), est.decision_function(X),
                               rtol=0, atol=1e-9)


@pytest.mark.parametrize("name", NAMES)
def test_sklearn_and_svmlab_callbacks_together(name):
    X, y = _data(name)
    rec = Recorder()
    records = []
    est = FACTORIES[name]().set_callbacks(rec)
    est.fit(X, y, callback=records.append)
    plain = FACTORIES[name]().fit(X, y)
    np.testing.assert_allclose(_solution(est), _solution(plain), rtol=0, atol=1e-12)
    # svmlab's records: one per step, numbered 1..n_iter_
    assert [r.iteration for r in records] == list(range(1, plain.n_iter_ + 1))
    _check_blocks(rec, est, len(records))


@pytest.mark.parametrize("name", NAMES)
def test_callback_asks_to_stop(name):
    X, y = _data(name)
    B = _block(FACTORIES[name]())
    rec = Recorder(stop_after_blocks=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # a requested stop: no warning
        est = FACTORIES[name]().set_callbacks(rec).fit(X, y)
    assert est.stop_reason_ == "callback" and not est.converged_
    assert est.n_iter_ == 2 * B
    assert len(rec.hooks("end", leaf=True)) == 2
    assert rec.hooks("end", leaf=False)[-1]["task"] == "fit"
    # the state after 2B steps is the one a max_iter=2B fit reaches
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        capped = FACTORIES[name](max_iter=2 * B).fit(X, y)
    np.testing.assert_allclose(_solution(est), _solution(capped), rtol=0, atol=1e-12)
    if hasattr(est, "alpha_"):  # feasible: 0 <= alpha <= C, sum y alpha = 0
        ypm = np.where(y == est.classes_[1], 1.0, -1.0)
        assert np.all(est.alpha_ >= 0) and np.all(est.alpha_ <= est.C)
        assert abs(est.alpha_ @ ypm) <= 1e-9


def test_stop_on_the_stepped_path():
    X, y = _problem()
    rec = Recorder(stop_after_blocks=3)
    records = []
    est = FACTORIES["SMOClassifier"]().set_callbacks(rec).fit(X, y, callback=records.append)
    assert est.stop_reason_ == "callback" and est.n_iter_ == 3 * SMO_BLOCK == len(records)


def test_interrupt_ends_the_open_block():
    """A KeyboardInterrupt (here raised by svmlab's callback) stops the fit
    with a feasible model; the open block and the root task still end."""
    X, y = _problem()
    rec = Recorder()

    def interrupt(r):
        if r.iteration == SMO_BLOCK + 5:
            raise KeyboardInterrupt

    with pytest.warns(ConvergenceWarning, match="interrupted"):
        est = FACTORIES["SMOClassifier"]().set_callbacks(rec).fit(X, y, callback=interrupt)
    # the step whose callback was interrupted had been taken
    assert est.stop_reason_ == "interrupted" and est.n_iter_ == SMO_BLOCK + 5
    ypm = np.where(y == est.classes_[1], 1.0, -1.0)
    assert np.all(est.alpha_ >= 0) and np.all(est.alpha_ <= est.C)
    assert abs(est.alpha_ @ ypm) <= 1e-9
    assert len(rec.hooks("begin", leaf=True)) == len(rec.hooks("end", leaf=True)) == 2
    assert [c["hook"] for c in rec.calls[-2:]] == ["end", "teardown"]


def test_max_iter_sets_the_total_and_bounds_the_blocks():
    X, y = _problem()
    rec = Recorder()
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        est = FACTORIES["SMOClassifier"](max_iter=60).set_callbacks(rec).fit(X, y)
    assert est.n_iter_ == 60
    root = rec.hooks("begin", leaf=False)[0]
    assert root["max_subtasks"] == math.ceil(60 / SMO_BLOCK) == 3
    assert [c["n_iter"] for c in rec.hooks("end", leaf=True)] == [25, 50, 60]


def test_fitted_estimator_is_an_honest_snapshot():
    """The fitted_estimator at a block's end has the multipliers of a fit that
    stops there (max_iter), and the estimator being fitted is left alone."""
    X, y = _problem()
    rec = Recorder()
    FACTORIES["DecompositionClassifier"]().set_callbacks(rec).fit(X, y)
    snap = rec.hooks("end", leaf=True)[2]["fitted"]
    assert snap.n_iter_ == 3 and snap.stop_reason_ == "running"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        capped = FACTORIES["DecompositionClassifier"](max_iter=3).fit(X, y)
    np.testing.assert_allclose(snap.alpha_, capped.alpha_, rtol=0, atol=1e-12)
    np.testing.assert_allclose(snap.decision_function(X), capped.decision_function(X),
                               rtol=0, atol=1e-9)


def test_tqdm_bar_off_with_sklearn_callbacks(monkeypatch):
    """svmlab's tqdm bar is disabled when scikit-learn callbacks are set, and
    unchanged otherwise."""
    import tqdm.auto

    seen = []
    real = tqdm.auto.tqdm

    class Spy(real):
        def __init__(self, *args, **kwargs):
            seen.append(kwargs.get("disable"))
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(tqdm.auto, "tqdm", Spy)
    monkeypatch.delenv("SVMLAB_PROGRESS", raising=False)
    X, y = _problem()
    SMOClassifier(random_state=0, progress=True).fit(X, y)
    SMOClassifier(random_state=0, progress=True).set_callbacks(Recorder()).fit(X, y)
    assert seen == [False, True]


def test_no_callbacks_no_context():
    """Without scikit-learn callbacks nothing is set up (the fast path as
    before), and a fit leaves no callback context behind."""
    X, y = _problem()
    est = FACTORIES["SMOClassifier"]().fit(X, y)
    assert not hasattr(est, "_callback_fit_ctx")
    est = FACTORIES["SMOClassifier"]().set_callbacks(Recorder()).fit(X, y)
    assert not hasattr(est, "_callback_fit_ctx")
    with pytest.raises(TypeError, match="FitCallback"):
        SMOClassifier().set_callbacks(print)


def test_bad_input_fails_before_setup():
    rec = Recorder()
    X, y = _problem()
    X = X.copy()
    X[0, 0] = np.nan
    with pytest.raises(ValueError):
        FACTORIES["SMOClassifier"]().set_callbacks(rec).fit(X, y)
    assert rec.calls == []


def test_propagation_through_grid_search():
    X, y = _problem()
    rec = AutoRecorder()
    grid = GridSearchCV(FACTORIES["SMOClassifier"](), {"C": [0.5, 2.0]}, cv=2, n_jobs=1)
    grid.set_callbacks(rec)
    grid.fit(X, y)
    # setup/teardown once, on the outermost estimator
    assert [c["estimator"] for c in rec.calls if c["hook"] == "setup"] == ["GridSearchCV"]
    assert [c["estimator"] for c in rec.calls if c["hook"] == "teardown"] == ["GridSearchCV"]
    # 2 candidates x 2 folds + the refit: five SMO fits, each merged into a
    # leaf task of the search
    smo_roots = [c for c in rec.hooks("begin", estimator="SMOClassifier") if c["task"] == "fit"]
    assert len(smo_roots) == 5
    assert {c["source"] for c in smo_roots} == {"GridSearchCV"}
    # the refit's blocks follow the mapping
    refit = grid.best_estimator_
    last_root = max(i for i, c in enumerate(rec.calls) if c is smo_roots[-1])
    refit_calls = Recorder()
    refit_calls.calls = [c for c in rec.calls[last_root:]
                         if c.get("ctx_estimator") == "SMOClassifier"]
    _check_blocks(refit_calls, refit, refit.n_iter_)
    # the propagated callbacks were removed from the sub-estimators afterwards
    assert not getattr(refit, "_skl_callbacks", [])
    plain = FACTORIES["SMOClassifier"](C=grid.best_params_["C"]).fit(X, y)
    np.testing.assert_allclose(refit.alpha_, plain.alpha_, rtol=0, atol=1e-12)


def test_propagation_through_pipeline():
    X, y = _problem()
    rec = AutoRecorder()
    pipe = Pipeline([("scale", StandardScaler()),
                     ("cp", FACTORIES["CuttingPlaneClassifier"]())]).set_callbacks(rec)
    pipe.fit(X, y)
    cp = pipe.named_steps["cp"]
    roots = [c for c in rec.hooks("begin", estimator="CuttingPlaneClassifier")
             if c["task"] == "fit"]
    assert len(roots) == 1 and roots[0]["source"] == "Pipeline"
    calls = Recorder()
    calls.calls = [c for c in rec.calls if c.get("ctx_estimator") == "CuttingPlaneClassifier"]
    _check_blocks(calls, cp, cp.n_iter_)
    plain = FACTORIES["CuttingPlaneClassifier"]().fit(StandardScaler().fit_transform(X), y)
    np.testing.assert_allclose(cp.coef_, plain.coef_, rtol=0, atol=1e-12)


def _require_rich():
    try:
        import rich  # noqa: F401
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("rich (needed by sklearn.callback.ProgressBar) is not installed in CI")
        pytest.skip("sklearn.callback.ProgressBar needs rich")


@pytest.mark.parametrize("name", NAMES)
def test_progress_bar(name, capsys):
    _require_rich()
    X, y = _data(name)
    est = FACTORIES[name]().set_callbacks(ProgressBar())
    est.fit(X, y)
    out = capsys.readouterr().out
    # rich draws one bar for the root task, named after the estimator
    assert f"{type(est).__name__} - fit" in out
    assert "100%" in out
    plain = FACTORIES[name]().fit(X, y)
    np.testing.assert_allclose(_solution(est), _solution(plain), rtol=0, atol=1e-12)


def test_progress_bar_through_grid_search(capsys):
    _require_rich()
    X, y = _problem()
    grid = GridSearchCV(FACTORIES["SMOClassifier"](), {"C": [0.5, 2.0]}, cv=2, n_jobs=1)
    grid.set_callbacks(ProgressBar(max_propagation_depth=None)).fit(X, y)
    out = capsys.readouterr().out
    assert "GridSearchCV - fit" in out
    assert "SMOClassifier - fit" in out


def test_stepping_module_documents_the_mapping():
    # the students' reference: the mapping is written where the code is
    doc = stepping.__doc__
    assert "steps_per_task" in doc and "ceil(n_iter_ / B)" in doc
