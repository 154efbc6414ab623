"""The lean per-fit path of the regression and one-class estimators
(decision record 32l01): the targets' shortcut gives the model that
scikit-learn's validation path gives, every other target still goes
through scikit-learn (its warnings and errors), and the greedy feasible
start of the nu forms keeps its definition."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import DataConversionWarning

from svmlab import SVR, NuSVR, OneClassSVM
from svmlab.reference.dual import _fill, nu_svr, one_class


def _data(n=60, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = X @ rng.normal(size=d) + 0.1 * rng.normal(size=n)
    return X, y


def _model(est):
    return est.dual_coef_.copy(), est.intercept_.copy(), est.support_.copy()


def _same(a, b):
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)


@pytest.mark.parametrize("make", [lambda: SVR(C=3.0, gamma=0.2),
                                  lambda: NuSVR(C=3.0, gamma=0.2, nu=0.4)])
def test_target_forms_give_the_same_model(make):
    X, y = _data()
    ref = _model(make().fit(X, y))
    # a list (scikit-learn's path), a strided view, a float32 copy of an
    # integral target and the (n, 1) column all give what the float64
    # array gives (integral targets: the exact same numbers)
    _same(_model(make().fit(X, list(y))), ref)
    y2 = np.empty(2 * len(y))
    y2[::2] = y
    _same(_model(make().fit(X, y2[::2])), ref)
    yi = np.round(3 * y).astype(np.int64)
    ref_i = _model(make().fit(X, yi.astype(np.float64)))
    _same(_model(make().fit(X, yi)), ref_i)
    _same(_model(make().fit(X, yi.astype(np.float32))), ref_i)
    with pytest.warns(DataConversionWarning):
        col = _model(make().fit(X, y[:, None]))
    _same(col, ref)


def test_bad_targets_still_refused():
    X, y = _data()
    with pytest.raises(ValueError):
        SVR().fit(X, y.astype(np.complex128))
    # a callable kernel: X and y are not validated together, the targets'
    # own check refuses complex values
    with pytest.raises(ValueError, match="[Cc]omplex"):
        SVR(kernel=lambda A, B: A @ B.T).fit(X, y.astype(np.complex128))
    with pytest.raises(ValueError):
        SVR().fit(X, np.where(np.arange(len(y)) == 3, np.nan, y))
    with pytest.raises(ValueError):
        SVR().fit(X, y[:-1])
    with pytest.raises(ValueError):
        SVR().fit(X, np.c_[y, y])


def test_plain_targets_not_copied_into_the_model_and_untouched():
    X, y = _data()
    y0, X0 = y.copy(), X.copy()
    SVR(C=2.0).fit(X, y)
    NuSVR(C=2.0).fit(X, y)
    OneClassSVM(gamma=0.3).fit(X)
    np.testing.assert_array_equal(y, y0)
    np.testing.assert_array_equal(X, X0)


def _fill_reference(U, total):
    """The definition, one NumPy scalar at a time."""
    a = np.zeros_like(U)
    left = np.float64(total)
    for t in range(len(U)):
        if left <= 0:
            break
        a[t] = min(U[t], left)
        left = left - a[t]
    return a


@pytest.mark.parametrize("seed", range(6))
def test_fill_is_the_greedy_start(seed):
    rng = np.random.default_rng(seed)
    U = rng.uniform(0.01, 3.0, size=int(rng.integers(1, 80)))
    if seed == 5:
        U[2] = np.inf  # a hard-margin example
    for frac in (0.0, 0.13, 0.5, 0.99, 1.5):
        total = frac * float(np.sum(U[np.isfinite(U)]))
        a = _fill(U, total)
        np.testing.assert_array_equal(a, _fill_reference(U, total))
        assert np.all((a >= 0) & (a <= U))
        # a prefix at its bounds, then at most one partial value, then zeros
        part = np.flatnonzero((a > 0) & (a < U))
        assert len(part) <= 1
        nz = np.flatnonzero(a > 0)
        if len(nz):
            assert np.array_equal(nz, np.arange(nz[-1] + 1))
        if np.all(np.isfinite(U)) and frac <= 0.99:
            assert abs(a.sum() - total) <= 1e-12 * max(1.0, total)


def test_nu_forms_start_on_the_fill():
    U = np.array([0.5, 2.0, 1.0, 0.25])
    prob = nu_svr(None, np.arange(4.0), 2.0, 0.5, weight=U)
    half = _fill_reference(2.0 * U, 0.5 * 0.5 * (2.0 * U).sum())
    np.testing.assert_array_equal(prob.a0, np.concatenate((half, half)))
    oc = one_class(None, 0.3, weight=U)
    np.testing.assert_array_equal(oc.a0, _fill_reference(U, 0.3 * U.sum()))
