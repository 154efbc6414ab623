"""svmlab._kkt: each compiled rule equals its NumPy twin, and both equal a
brute-force reading of the definitions (I_up / I_low from Keerthi et al.,
the intercept from LIBSVM's calculate_rho), on random and edge cases."""

import numpy as np
import pytest
from numba import njit

from svmlab import _kkt


def _brute_sets(y, alpha, C):
    """I_up / I_low written out sample by sample, straight from the
    definition (y alpha may increase / decrease)."""
    up, low = [], []
    for k in range(len(y)):
        inc = alpha[k] < C[k] if y[k] > 0 else alpha[k] > 0   # y_k alpha_k can grow
        dec = alpha[k] > 0 if y[k] > 0 else alpha[k] < C[k]
        up.append(bool(inc))
        low.append(bool(dec))
    return np.array(up, bool), np.array(low, bool)


def _brute_intercept(v, y, alpha, C):
    free = [k for k in range(len(y)) if 0 < alpha[k] < C[k]]
    if free:
        return sum(v[k] for k in free) / len(free)   # sequential sum
    up, low = _brute_sets(y, alpha, C)
    lo = max((v[k] for k in range(len(y)) if up[k]), default=-np.inf)
    hi = min((v[k] for k in range(len(y)) if low[k]), default=np.inf)
    if np.isfinite(lo) and np.isfinite(hi):
        return 0.5 * (lo + hi)
    if np.isfinite(lo):
        return lo
    if np.isfinite(hi):
        return hi
    return 0.0


def _case(rng, n, kind):
    y = rng.choice([-1.0, 1.0], n)
    C = rng.uniform(0.5, 2.0, n)
    if kind == "random":
        alpha = rng.choice([0.0, 1.0, 2.0], n)
        alpha = np.where(alpha == 1.0, rng.uniform(0, 1, n) * C, np.where(alpha == 2.0, C, 0.0))
        v = rng.normal(size=n)
    elif kind == "ties":
        alpha = np.where(rng.random(n) < 0.5, 0.0, C)
        v = rng.choice([-1.0, 0.0, 1.0], n)          # many equal values
    elif kind == "all_C":
        alpha = C.copy()
        v = rng.normal(size=n)
    elif kind == "all_0":
        alpha = np.zeros(n)
        v = rng.normal(size=n)
    elif kind == "no_free":
        alpha = np.where(rng.random(n) < 0.5, 0.0, C)
        v = rng.normal(size=n)
    elif kind == "one_class_at_bounds":
        # positives at C, negatives at 0: I_up is empty, only I_low remains
        alpha = np.where(y > 0, C, 0.0)
        v = rng.normal(size=n)
    else:
        raise AssertionError(kind)
    return v, y, alpha, C


KINDS = ["random", "ties", "all_C", "all_0", "no_free", "one_class_at_bounds"]


@njit
def _compiled_sets(y, alpha, C):
    """in_up / in_low (inline="always") called from a compiled loop, as the
    solvers call them."""
    n = y.shape[0]
    up = np.zeros(n, np.bool_)
    low = np.zeros(n, np.bool_)
    for k in range(n):
        up[k] = _kkt.in_up(y[k], alpha[k], C[k])
        low[k] = _kkt.in_low(y[k], alpha[k], C[k])
    return up, low


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", range(3))
def test_sets_compiled_numpy_brute(kind, seed):
    rng = np.random.default_rng(seed)
    for n in (1, 2, 7, 40):
        v, y, alpha, C = _case(rng, n, kind)
        bu, bl = _brute_sets(y, alpha, C)
        nu, nl = _kkt.up_low(y, alpha, C)
        cu, cl = _compiled_sets(y, alpha, C)
        np.testing.assert_array_equal(nu, bu)
        np.testing.assert_array_equal(nl, bl)
        np.testing.assert_array_equal(cu, bu)
        np.testing.assert_array_equal(cl, bl)
        for k in range(n):   # the Python-called dispatcher too
            assert _kkt.in_up(y[k], alpha[k], C[k]) == bu[k]
            assert _kkt.in_low(y[k], alpha[k], C[k]) == bl[k]


def test_sets_scalar_C_and_bounds():
    y = np.array([1.0, 1.0, 1.0, -1.0, -1.0, -1.0])
    alpha = np.array([0.0, 0.5, 1.0, 0.0, 0.5, 1.0])
    up, low = _kkt.up_low(y, alpha, 1.0)
    np.testing.assert_array_equal(up, [True, True, False, False, True, True])
    np.testing.assert_array_equal(low, [False, True, True, True, True, False])


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", range(3))
def test_intercept_compiled_numpy_brute(kind, seed):
    rng = np.random.default_rng(100 + seed)
    for n in (1, 2, 7, 40):
        v, y, alpha, C = _case(rng, n, kind)
        ref = _brute_intercept(v, y, alpha, C)
        # the compiled loop sums in index order: bit for bit the brute force
        assert _kkt.intercept(v, y, alpha, C) == ref
        assert _kkt.intercept_np(v, y, alpha, C) == pytest.approx(ref, rel=1e-14, abs=1e-15)
        assert _kkt.intercept_from_v is _kkt.intercept_np


def test_intercept_edge_values():
    C = np.ones(4)
    y = np.array([1.0, 1.0, -1.0, -1.0])
    v = np.array([3.0, -1.0, 2.0, 5.0])
    # one free vector: b is its v exactly
    alpha = np.array([0.0, 0.25, 0.0, 1.0])
    assert _kkt.intercept(v, y, alpha, C) == -1.0
    # no free vector: I_up = {0 (y+,0), 3 (y-,C)}, I_low = {2 (y-,0)}
    alpha = np.array([0.0, 0.0, 0.0, 1.0])
    # I_up = {0, 1, 3}: max v = 5; I_low = {2}: min v = 2 -> midpoint 3.5
    assert _kkt.intercept(v, y, alpha, C) == 3.5
    assert _kkt.intercept_np(v, y, alpha, C) == 3.5
    # empty input: 0
    e = np.zeros(0)
    assert _kkt.intercept(e, e, e, e) == 0.0
    assert _kkt.intercept_np(e, e, e, e) == 0.0


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", range(3))
def test_violation_compiled_numpy_brute(kind, seed):
    rng = np.random.default_rng(200 + seed)
    for n in (1, 2, 7, 40):
        v, y, alpha, C = _case(rng, n, kind)
        bu, bl = _brute_sets(y, alpha, C)
        up_idx = [k for k in range(n) if bu[k]]
        low_idx = [k for k in range(n) if bl[k]]
        # first index of the extreme on ties
        bi = max(up_idx, key=lambda k: (v[k], -k)) if up_idx else -1
        bj = min(low_idx, key=lambda k: (v[k], k)) if low_idx else -1
        got_c = _kkt.violating_pair(v, y, alpha, C)
        got_n = _kkt.violating_pair_np(v, y, alpha, C)
        assert got_c[1] == bi and got_n[1] == bi
        assert got_c[3] == bj and got_n[3] == bj
        assert got_c[0] == got_n[0] == (v[bi] if bi >= 0 else -np.inf)
        assert got_c[2] == got_n[2] == (v[bj] if bj >= 0 else np.inf)
        gap = v[bi] - v[bj] if (bi >= 0 and bj >= 0) else 0.0
        assert _kkt.kkt_violation(v, y, alpha, C) == gap
        assert _kkt.kkt_violation_np(v, y, alpha, C) == gap


def test_violation_empty_sets_is_zero():
    # all positives at C and all negatives at 0: I_up empty, nothing can move
    y = np.array([1.0, -1.0, 1.0])
    C = np.full(3, 2.0)
    alpha = np.array([2.0, 0.0, 2.0])
    v = np.array([1.0, -3.0, 4.0])
    assert _kkt.kkt_violation(v, y, alpha, C) == 0.0
    assert _kkt.kkt_violation_np(v, y, alpha, C) == 0.0
    m, i, M, j = _kkt.violating_pair(v, y, alpha, C)
    assert i == -1 and m == -np.inf and j == 1 and M == -3.0


def test_solvers_use_the_shared_rules():
    """The engines and the working-set code get the rules from _kkt (one home)."""
    from svmlab.decomposition import _engines, _working_set
    from svmlab.decomposition import estimators as decomposition

    assert _engines.up_low is _kkt.up_low
    assert _engines.intercept_from_v is _kkt.intercept_from_v
    assert _working_set.up_low is _kkt.up_low
    assert decomposition.intercept_from_v is _kkt.intercept_from_v


def test_bounds_b_equals_intercept_rule():
    """The line search's S1-empty intercept (_engines._bounds_b) is the
    shared rule applied to v = r - K beta, alpha = clip(y beta, 0, C)."""
    from svmlab.decomposition._engines import _bounds_b

    rng = np.random.default_rng(7)
    for kind in KINDS:
        v, y, alpha, C = _case(rng, 9, kind)
        Kb = rng.normal(size=9)
        r = v + Kb
        beta = y * alpha
        a = np.clip(y * beta, 0, C)
        assert _bounds_b(r, Kb, y, beta, C) == _brute_intercept(r - Kb, y, a, C)


def test_first_index_on_ties_and_sets_respected():
    v = np.array([3.0, 1.0, 3.0, -2.0, 9.0, -2.0])
    y = np.array([1.0, 1.0, 1.0, -1.0, -1.0, -1.0])
    alpha = np.array([1.0, 0.5, 0.5, 0.5, 0.0, 0.5])
    C = np.ones(6)
    # sample 4 (v = 9, y = -1 at 0) is not in I_up; of the two 3.0 in I_up
    # (0 is at C: not) the first member (2) is i; M's first index is 3
    # (the decomposition's rule, np.argmax's; the SMO loops' takes_i is
    # LIBSVM's last index: tests/test_wss2_rule.py)
    assert _kkt.violating_pair(v, y, alpha, C) == (3.0, 2, -2.0, 3)
    assert _kkt.takes_i(1.0, 1.0) and _kkt.takes_i(1.5, 1.0) and not _kkt.takes_i(-np.inf, -np.inf)


@pytest.mark.parametrize("kind", KINDS)
def test_violating_pair_active_mask_matches_readable_twin(kind):
    """The NumPy twin over active samples (the decomposition's
    max_violating_pair) against the readable reference of the rule."""
    from svmlab.decomposition._working_set import max_violating_pair
    from svmlab.reference.subproblem import max_violating_pair as ref_pair

    rng = np.random.default_rng(5)
    for n in (1, 7, 40):
        v, y, alpha, C = _case(rng, n, kind)
        assert max_violating_pair(v, y, alpha, C) == ref_pair(v, y, alpha, C)
        active = rng.random(n) < 0.6
        m, i, M, j = _kkt.violating_pair_np(v, y, alpha, C, active)
        up, low = _brute_sets(y, alpha, C)
        up, low = up & active, low & active
        assert i == (int(np.flatnonzero(up)[np.argmax(v[up])]) if up.any() else -1)
        assert j == (int(np.flatnonzero(low)[np.argmin(v[low])]) if low.any() else -1)
