"""svmlab._wss2, the one home of WSS 2's rule: the compiled pieces against
their readable twins (svmlab.reference.wss2) and against a brute-force
choice of j written here from the paper (Fan, Chen and Lin 2005,
Algorithm 2), ties included."""

import numpy as np
import pytest
from numba import njit

from svmlab import _wss2 as W
from svmlab._kkt import up_low
from svmlab.reference import wss2 as R


def _brute_j(m, v, low, Kii, kdiag, Ki):
    """The paper's argmin over I_low with v_t < m of -b^2/a, tau for a <= 0,
    the LAST index among equal minima; -1 without candidates."""
    best, j = None, -1
    for t in range(len(v)):
        if low[t] and v[t] < m:
            a = Kii + kdiag[t] - 2 * Ki[t]
            a = 1e-12 if a <= 0 else a
            g = -(m - v[t]) ** 2 / a
            if best is None or g <= best:
                best, j = g, t
    return j


def _problem(seed, q=30, ties=False):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((q, 3))
    if ties:
        X[q // 2:] = X[:q - q // 2]  # duplicate points: a_it = 0 and equal gains
    K = np.exp(-0.5 * ((X[:, None] - X[None]) ** 2).sum(-1))
    y = np.where(rng.random(q) < 0.5, 1.0, -1.0)
    C = np.full(q, 2.0)
    alpha = rng.choice([0.0, 0.7, 2.0], q)
    v = np.round(rng.standard_normal(q), 1 if ties else 12)
    return K, y, C, alpha, v


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("ties", [False, True])
def test_select_j_compiled_numpy_brute(seed, ties):
    K, y, C, alpha, v = _problem(seed, ties=ties)
    up, low = up_low(y, alpha, C)
    i = int(np.flatnonzero(up)[np.argmax(v[up])])
    m = v[i]
    kd = np.diag(K).copy()
    j_brute = _brute_j(m, v, low, K[i, i], kd, K[i])
    assert W.select_j(m, i, K, v, y, alpha, C) == j_brute
    assert R.select_j(m, v, low, K[i, i], kd, K[i]) == j_brute
    assert W.select_j.py_func(m, i, K, v, y, alpha, C) == j_brute


@njit(cache=False)
def _last_max(v):
    m, i = -np.inf, -1
    for t in range(v.shape[0]):
        if W.takes_i(v[t], m):
            m, i = v[t], t
    return i


def test_ties_pick_the_last_j_and_last_i():
    """LIBSVM's ties: ``>=`` for i, ``<=`` for j (the last index wins);
    ``-inf`` (a scan's value outside I_up) never becomes i."""
    assert W.takes_j(-1.0, -1.0) and not W.takes_j(-0.5, -1.0)
    assert W.takes_i(1.0, 1.0) and W.takes_i(1.5, 1.0) and not W.takes_i(0.5, 1.0)
    assert not W.takes_i(-np.inf, -np.inf) and not W.takes_i(np.nan, -np.inf)
    # the compiled scan over a vector with ties: the last maximiser, as the twin
    v = np.array([2.0, 3.0, -np.inf, 3.0, 1.0])
    assert _last_max(v) == 3
    assert _last_max(np.full(3, -np.inf)) == -1
    # equal gains: the last candidate wins
    v = np.array([0.0, -1.0, -1.0, 5.0])
    low = np.array([True, True, True, False])
    kd = np.ones(4)
    Ki = np.zeros(4)
    assert R.select_j(1.0, v, low, 1.0, kd, Ki) == 2


def test_tau_replaces_nonpositive_curvature():
    assert W.TAU == 1e-12
    assert W.curvature(1.0, 1.0, 1.0) == W.TAU  # duplicate points
    assert W.curvature(1.0, 1.0, 1.5) == W.TAU  # a < 0 (not PSD)
    assert W.curvature(1.0, 2.0, 0.5) == 2.0
    assert W.gain(2.0, 1.0, 1.0, 1.0, 1.0) == -1.0 / W.TAU
    assert W.gain_or_nan(True, 2.0, 1.0, 1.0, 2.0, 0.5) == -1.0 / 2.0


def test_non_candidates_never_win():
    assert np.isnan(W.gain_or_nan(False, 2.0, 1.0, 1.0, 2.0, 0.5))  # not in I_low
    assert np.isnan(W.gain_or_nan(True, 1.0, 1.0, 1.0, 2.0, 0.5))  # v_t = m
    assert not W.takes_j(np.nan, np.inf)
    assert R.select_j(0.0, np.array([1.0, 2.0]), np.array([True, True]), 1.0,
                         np.ones(2), np.zeros(2)) == -1
    # a huge gain (-inf after overflow) is still a candidate
    assert R.select_j(1e200, np.array([0.0]), np.array([True]), 1.0, np.ones(1),
                         np.ones(1)) == 0


@pytest.mark.parametrize("seed", range(3))
def test_gain_compiled_equals_readable_twin(seed):
    """The one compiled gain (every loop inlines it) and its readable twin
    agree bit for bit, non-positive curvature (TAU) included."""
    K, y, C, alpha, v = _problem(seed, ties=True)
    kd = np.diag(K).copy()
    for i in range(len(v)):
        m = v[i] + 0.5
        twin = R.gain(m, v, K[i, i], kd, K[i])
        for t in range(len(v)):
            assert W.gain(m, v[t], K[i, i], kd[t], K[i, t]) == twin[t]
            low = bool(up_low(y, alpha, C)[1][t])
            g = W.gain_or_nan(low, m, v[t], K[i, i], kd[t], K[i, t])
            if low and v[t] < m:
                assert g == twin[t]
            else:
                assert np.isnan(g)
    assert R.gain(2.0, 1.0, 1.0, 1.0, 1.0) == -1.0 / W.TAU


@pytest.mark.parametrize("name", sorted(W.RULES))
def test_every_registered_rule_equals_its_readable_twin(name):
    """Each entry of the registry of working-set rules: its compiled score is
    inlined by the loops, its twin lives in svmlab.reference, and the two
    agree bit for bit on every candidate of a problem with duplicate points
    (non-positive curvature) and tied values."""
    import importlib

    entry = W.rule(name)
    assert entry.name == name
    assert entry.score.targetoptions.get("inline") == "always"
    module, _, attr = entry.twin.rpartition(".")
    assert module.startswith("svmlab.reference.")
    twin = getattr(importlib.import_module(module), attr)
    K, y, C, alpha, v = _problem(7, ties=True)
    kd = np.diag(K).copy()
    for i in range(len(v)):
        m = v[i] + 0.5
        ref = twin(m, v, K[i, i], kd, K[i])
        got = np.array([entry.score(m, v[t], K[i, i], kd[t], K[i, t]) for t in range(len(v))])
        np.testing.assert_array_equal(got, ref)
    with pytest.raises(ValueError, match="unknown working-set rule"):
        W.rule("no-such-rule")
