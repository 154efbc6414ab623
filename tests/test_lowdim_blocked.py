"""The low-dimensional rule of the blocked decomposition
(svmlab.decomposition._blocked: lowdim_working_set_size,
prefers_blocked_lowdim) and the blocked decomposition at its working-set
size against LIBSVM's optimum on Breiman's twonorm and waveform."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.preprocessing import MinMaxScaler
from sklearn.svm import SVC as SkSVC

from svmlab import datasets
from svmlab.decomposition import DecompositionClassifier
from svmlab.decomposition._blocked import (LOWDIM_FEATURES, LOWDIM_MIN_ROWS, LOWDIM_WS,
                                           lowdim_working_set_size, prefers_blocked_lowdim)
from svmlab.kernels import Kernel


def test_working_set_size_rule_bounds():
    lo, hi = LOWDIM_FEATURES
    assert lowdim_working_set_size(7400, 20) == LOWDIM_WS
    assert lowdim_working_set_size(20000, 22) == LOWDIM_WS
    assert lowdim_working_set_size(7400, lo) == LOWDIM_WS
    assert lowdim_working_set_size(7400, hi) == LOWDIM_WS
    assert lowdim_working_set_size(7400, lo - 1) is None
    assert lowdim_working_set_size(7400, hi + 1) is None
    assert lowdim_working_set_size(7400, 784) is None
    assert lowdim_working_set_size(100, 20) == 100  # at most n
    assert lowdim_working_set_size(7400, 20, sparse=True) is None


def test_prefers_blocked_lowdim():
    X = np.zeros((10, 20))
    assert prefers_blocked_lowdim(LOWDIM_MIN_ROWS, X)
    assert not prefers_blocked_lowdim(LOWDIM_MIN_ROWS - 1, X)
    assert not prefers_blocked_lowdim(7400, np.zeros((10, 2)))  # banana-like: wss2
    assert not prefers_blocked_lowdim(7400, np.zeros((10, 784)))
    assert not prefers_blocked_lowdim(7400, sp.csr_matrix(X))


def _dual(alpha_y, X, gamma):
    sv = np.flatnonzero(alpha_y)
    K = Kernel(X[sv], "rbf", gamma).matrix()
    c = alpha_y[sv]
    return float(np.abs(c).sum() - 0.5 * c @ K @ c)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["twonorm", "waveform"])
def test_blocked_at_lowdim_ws_reaches_libsvm_optimum(name, dtype):
    n = 1500
    X, y = datasets.twonorm(n, random_state=2) if name == "twonorm" \
        else datasets.waveform(n, random_state=2)
    X = np.ascontiguousarray(MinMaxScaler((-1, 1)).fit_transform(X))
    gamma = 1.0 / (X.shape[1] * X.var())
    q = lowdim_working_set_size(n, X.shape[1])
    assert q == LOWDIM_WS
    ref = SkSVC(C=1.0, gamma=gamma, tol=1e-6).fit(X, y)
    cy_ref = np.zeros(n)
    cy_ref[ref.support_] = ref.dual_coef_[0]
    m = DecompositionClassifier(engine="smo", working_set_size=q, C=1.0, gamma=gamma,
                                tol=1e-6, cache_dtype=dtype, progress=False).fit(X, y)
    assert m.converged_
    alpha = np.asarray(m.alpha_, dtype=np.float64)
    assert np.all(alpha >= -1e-12) and np.all(alpha <= 1.0 + 1e-12)
    y_pm = np.where(y == m.classes_[1], 1.0, -1.0)
    assert abs(alpha @ y_pm) < 1e-8
    W_ref, W = _dual(cy_ref, X, gamma), _dual(alpha * y_pm, X, gamma)
    assert abs(W - W_ref) <= 1e-6 * abs(W_ref)
    assert np.mean(m.predict(X) == ref.predict(X)) > 0.995
