"""The fixed per-fit cost of the kernel classifiers (issue 15): the
shortcuts taken on small fits change no result and no behaviour.

Behaviour only, never timings: no tqdm object when progress is off, X not
copied when it already has the solvers' layout, the fast validation path
agreeing with scikit-learn's (values and errors), the weight shortcut equal
to ``compute_class_weight``, cached parameter names and seeds equal to the
uncached ones, and chunk sizes that do not change the iterates.
"""

import numpy as np
import pytest
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_X_y

import svmlab._stepping as stepping
from svmlab import IRWLSClassifier, SMOClassifier
from svmlab._multiclass import multiclass_weights
from svmlab._validation import check_classification, check_weights
from svmlab.smo._estimator import SMORun, _seed_from


def _problem(n=80, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1, 0)
    return X, y


class _CountingBar:
    made = 0

    def __init__(self, *a, **k):
        type(self).made += 1

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def update(self, n=1):
        pass


@pytest.fixture
def counting_tqdm(monkeypatch):
    import tqdm.auto

    _CountingBar.made = 0
    monkeypatch.setattr(tqdm.auto, "tqdm", _CountingBar)
    return _CountingBar


@pytest.mark.parametrize("cls", [SMOClassifier, IRWLSClassifier])
def test_no_tqdm_object_when_progress_is_off(cls, counting_tqdm, monkeypatch):
    X, y = _problem()
    monkeypatch.setenv("SVMLAB_PROGRESS", "1")
    cls(progress=False).fit(X, y)
    assert counting_tqdm.made == 0
    monkeypatch.setenv("SVMLAB_PROGRESS", "0")
    cls(progress=True).fit(X, y)
    assert counting_tqdm.made == 0
    # progress on: the bar is still made (shown after 2 s by tqdm itself)
    monkeypatch.setenv("SVMLAB_PROGRESS", "1")
    cls(progress=True).fit(X, y)
    assert counting_tqdm.made == 1


def test_plain_float64_X_is_not_copied():
    X, y = _problem()
    Xc, y_idx, classes = check_classification(X, y)
    assert Xc is X
    # any other layout or type is copied once, to float64 C order
    for Xo in (np.asfortranarray(X), X.astype(np.float32), X.tolist()):
        Xc, _, _ = check_classification(Xo, y)
        assert Xc.dtype == np.float64 and Xc.flags.c_contiguous
        assert not np.shares_memory(Xc, X)
        np.testing.assert_array_equal(Xc, X.astype(np.asarray(Xo).dtype).astype(np.float64))


def _sklearn_way(X, y):
    X, y = check_X_y(X, y, accept_sparse=["csr", "csc", "coo"], dtype=np.float64)
    check_classification_targets(y)
    classes, y_idx = np.unique(y, return_inverse=True)
    return np.ascontiguousarray(X), y_idx, classes


@pytest.mark.parametrize("labels", [
    np.array([0, 1]), np.array([-1, 1]), np.array([3, 7, 9]), np.array([False, True]),
    np.array([0.0, 2.0]), np.array([1.0, 2.0, 5.0]), np.array(["a", "b"]),
    np.array(["x", "y", "z"], dtype=object), np.array([0, 1], dtype=np.uint8)])
def test_fast_validation_agrees_with_sklearn(labels):
    X, _ = _problem(60)
    y = labels[np.arange(60) % len(labels)]
    Xa, ia, ca = check_classification(X, y)
    Xb, ib, cb = _sklearn_way(X, y)
    np.testing.assert_array_equal(Xa, Xb)
    np.testing.assert_array_equal(ia, ib)
    np.testing.assert_array_equal(ca, cb)
    assert ca.dtype == cb.dtype


@pytest.mark.parametrize("case", ["continuous", "nan_X", "inf_X", "nan_y", "short_y",
                                  "empty", "1d_X", "column_y"])
def test_fast_validation_keeps_sklearn_errors(case):
    X, y = _problem(40)
    y = y.astype(np.float64)
    if case == "continuous":
        y = y + 0.5 * (np.arange(40) % 3)
    elif case == "nan_X":
        X = X.copy()
        X[3, 1] = np.nan
    elif case == "inf_X":
        X = X.copy()
        X[0, 0] = np.inf
    elif case == "nan_y":
        y[5] = np.nan
    elif case == "short_y":
        y = y[:-1]
    elif case == "empty":
        X, y = X[:0], y[:0]
    elif case == "1d_X":
        X = X[:, 0]
    elif case == "column_y":
        # a column vector: scikit-learn warns and ravels; same here
        with pytest.warns(Warning):
            Xa, ia, ca = check_classification(X, y[:, None])
        np.testing.assert_array_equal(ia, np.unique(y, return_inverse=True)[1])
        return
    with pytest.raises(ValueError) as mine:
        check_classification(X, y)
    with pytest.raises(ValueError) as theirs:
        _sklearn_way(X, y)
    assert str(mine.value) == str(theirs.value)


def test_weight_shortcut_equals_compute_class_weight():
    X, y = _problem(50)
    classes = np.array([0, 1])
    y_pm = np.where(y == 1, 1.0, -1.0)
    w, cw, keep = check_weights(y_pm, classes)
    cw_ref = compute_class_weight(None, classes=classes, y=y)
    np.testing.assert_array_equal(cw, cw_ref)
    np.testing.assert_array_equal(w, cw_ref[(y_pm > 0).astype(int)])
    assert w.dtype == np.float64 and cw.dtype == np.float64 and keep is None
    # the same as explicit weights that are all one (the long path)
    w1, cw1, keep1 = check_weights(y_pm, classes, np.ones(50), {0: 1.0, 1: 1.0})
    np.testing.assert_array_equal(w, w1)
    np.testing.assert_array_equal(cw, cw1)
    assert keep1 is None
    y3 = np.arange(30) % 3
    w, cw, keep = multiclass_weights(y3, np.array([0, 1, 2]))
    w1, cw1, keep1 = multiclass_weights(y3, np.array([0, 1, 2]), np.ones(30),
                                        {0: 1.0, 1: 1.0, 2: 1.0})
    np.testing.assert_array_equal(w, w1)
    np.testing.assert_array_equal(cw, cw1)
    assert keep is None and keep1 is None


def test_cached_parameter_names():
    import inspect

    for cls in (SMOClassifier, IRWLSClassifier):
        sig = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
        assert cls._get_param_names() == sorted(sig)
        assert set(cls().get_params()) == set(sig)
        # the list handed out is a copy: changing it changes nothing
        cls._get_param_names().append("bogus")
        assert "bogus" not in cls._get_param_names()

    class Sub(SMOClassifier):
        def __init__(self, *, extra=1, **kw):
            super().__init__(**kw)
            self.extra = extra

    assert Sub._get_param_names() == ["extra"]
    assert "extra" not in SMOClassifier._get_param_names()


def test_seed_cache_equals_fresh_draw():
    for rs in (0, 1, 42, np.int64(7), 2**31 - 1):
        want = int(np.random.RandomState(int(rs)).randint(1, 2147483646))
        assert _seed_from(rs) == want
        assert _seed_from(rs) == want  # from the cache
    # a RandomState instance is drawn from every time (it advances)
    r = np.random.RandomState(3)
    a, b = _seed_from(r), _seed_from(r)
    r2 = np.random.RandomState(3)
    assert (a, b) == (int(r2.randint(1, 2147483646)), int(r2.randint(1, 2147483646)))


@pytest.mark.parametrize("selection", ["wss2", "platt"])
def test_chunk_sizes_do_not_change_the_iterates(selection, monkeypatch):
    X, y = _problem(300, 5, seed=2)
    kw = dict(selection=selection, C=10.0, gamma=0.5, random_state=0, progress=False)
    big = SMOClassifier(**kw).fit(X, y)
    # the smallest chunks: one joint step per compiled call
    monkeypatch.setattr(SMORun, "first_chunk", 1)
    monkeypatch.setattr(SMORun, "chunk_growth", 2)
    monkeypatch.setattr(stepping, "CHUNK_SECONDS", 0.0)  # never grows
    small = SMOClassifier(**kw).fit(X, y)
    assert big.n_iter_ == small.n_iter_ > 10
    np.testing.assert_array_equal(big.alpha_, small.alpha_)
    np.testing.assert_array_equal(big.intercept_, small.intercept_)
    # and the stepped path (one record per step) agrees too
    monkeypatch.undo()
    recs = []
    stepped = SMOClassifier(**kw).fit(X, y, callback=recs.append)
    assert len(recs) == big.n_iter_
    np.testing.assert_array_equal(big.alpha_, stepped.alpha_)


def test_first_chunk_of_a_small_wss2_fit_is_one_call(monkeypatch):
    X, y = _problem(200, 5, seed=1)
    calls = []
    orig = SMORun._advance

    def counting(self, k):
        calls.append(k)
        return orig(self, k)

    monkeypatch.setattr(SMORun, "_advance", counting)
    m = SMOClassifier(selection="wss2", C=10.0, random_state=0, progress=False).fit(X, y)
    assert m.converged_ and len(calls) == 1 and calls[0] >= m.n_iter_
