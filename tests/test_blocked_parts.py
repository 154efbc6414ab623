"""The parts of the blocked decompositions that decision 32b01 rewrote for
speed, each against an independent statement of the same rule: the
compiled working-set selection against its NumPy statement and a sort of
all candidates, the row store's LRU pick against a sort of the slots, the
block sub-problem solvers against the plain loop (``violating_pair``,
WSS2's partner, ``pair_update``) and against their stopping rule computed
here, and the kept-half ``K[B, B]`` against the kernel block."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel

from svmlab._kkt import violating_pair
from svmlab._wss2 import gain
from svmlab.decomposition._blocked import (RowStore, block_smo, lru_slots, select_working_set,
                                           select_working_set_np)
from svmlab.decomposition._blocked_dual import block_smo_nu
from svmlab.decomposition._smo_engine import pair_update
from svmlab.kernels import Kernel


def _random_state(rng, l, ties=True):
    v = rng.normal(size=l)
    if ties:
        v = np.round(v, int(rng.integers(0, 3)))
    y = rng.choice([-1.0, 1.0], l)
    C = rng.choice([1.0, 2.5], l)
    r = rng.random(l)
    alpha = np.where(r < 0.3, 0.0, np.where(r < 0.6, C, rng.random(l) * C))
    return v, y, alpha, C


def _select_by_sort(v, y, alpha, C, q_new, exclude):
    """The rule read literally: both lists fully sorted (key, then index),
    taken alternately, a sample in both lists once."""
    l = len(v)
    up = [t for t in range(l) if not exclude[t]
          and (alpha[t] < C[t] if y[t] > 0 else alpha[t] > 0)]
    low = [t for t in range(l) if not exclude[t]
           and (alpha[t] > 0 if y[t] > 0 else alpha[t] < C[t])]
    up.sort(key=lambda t: (-v[t], t))
    low.sort(key=lambda t: (v[t], t))
    out, seen = [], set()
    a = b = 0
    while len(out) < q_new and (a < len(up) or b < len(low)):
        for lst, pos in ((up, a), (low, b)):
            if len(out) == q_new:
                break
            if pos < len(lst):
                t = lst[pos]
                if t not in seen:
                    seen.add(t)
                    out.append(t)
            if lst is up:
                a += 1
            else:
                b += 1
    return np.asarray(out, np.int64)


def test_select_working_set_matches_its_statements():
    rng = np.random.default_rng(0)
    for _ in range(200):
        l = int(rng.integers(2, 300))
        v, y, alpha, C = _random_state(rng, l)
        ex = rng.random(l) < 0.2
        q = int(rng.integers(0, l + 3))
        got = select_working_set(v, y, alpha, C, q, ex)
        assert np.array_equal(got, select_working_set_np(v, y, alpha, C, q, ex))
        assert np.array_equal(got, _select_by_sort(v, y, alpha, C, q, ex))
    # a scalar C, as the C-SVC path may pass
    v, y, alpha, _ = _random_state(rng, 50)
    alpha = np.minimum(alpha, 1.0)
    ex = np.zeros(50, bool)
    assert np.array_equal(select_working_set(v, y, alpha, 1.0, 10, ex),
                          select_working_set_np(v, y, alpha, 1.0, 10, ex))


@pytest.mark.parametrize("big_stamps", [False, True])
def test_lru_slots_is_the_least_recently_used(big_stamps):
    rng = np.random.default_rng(1)
    for _ in range(200):
        cap = int(rng.integers(1, 60))
        top = 10 ** 9 if big_stamps else 3 * cap
        stamp = rng.integers(-1, top, cap).astype(np.int64)
        stamp[rng.random(cap) < 0.3] = -1
        n_held = int(rng.integers(0, cap))
        held = rng.choice(cap, n_held, replace=False).astype(np.int64)
        held = np.concatenate([held, -np.ones(int(rng.integers(0, 4)), np.int64)])
        k = int(rng.integers(1, cap - n_held + 1))
        free = [s for s in range(cap) if s not in set(held.tolist())]
        want = np.sort(np.asarray(sorted(free, key=lambda s: (stamp[s], s))[:k], np.int64))
        assert np.array_equal(lru_slots(stamp, held, k), want)


def test_row_store_fills_in_order_and_evicts_lru():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 3))
    K = rbf_kernel(X, gamma=0.3)
    kern = Kernel(X, "rbf", 0.3)
    # room for 10 rows of 40 float64 values
    store = RowStore(kern, 40, 10 * 40 * 8 / (1 << 20), 4, "float64")
    assert store.cap == 10
    slots, k = store.fetch(np.array([5, 7, 9]), 1)
    assert k == 3 and np.array_equal(slots, [0, 1, 2])  # an empty store: a run from 0
    store.fetch(np.arange(20, 27), 2)
    # full now; the next fetch evicts the rows of step 1 first, never a row it asks for
    slots, k = store.fetch(np.array([7, 30, 31]), 3)
    assert k == 2
    assert store.slot_of[7] >= 0 and store.slot_of[5] < 0 and store.slot_of[9] < 0
    for r in [7, 30, 31] + list(range(20, 27)):
        np.testing.assert_allclose(store.buf[store.slot_of[r]], K[r], rtol=0, atol=1e-12)


def test_block_BB_kept_is_the_kernel_block():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 4))
    K = rbf_kernel(X, gamma=0.2)
    store = RowStore(Kernel(X, "rbf", 0.2), 60, 1.0, 16, "float64")
    store.fetch(rng.choice(60, 20, replace=False), 1)  # some rows held, others not
    for h in (0, 5, 8):
        B = rng.choice(60, 16, replace=False)
        out = np.full((16, 16), np.nan)
        out[:h, :h] = K[np.ix_(B[:h], B[:h])]
        store.block_BB_kept(B, h, 2, out)
        np.testing.assert_allclose(out, K[np.ix_(B, B)], rtol=0, atol=1e-12)


def _plain_block_smo(K, y, alpha, C, v, eps, max_steps):
    """The loop as it read before 32b01: violating_pair, WSS2's partner over
    the candidates, pair_update (columns of K)."""
    steps = 0
    while steps < max_steps:
        m, i, M, _ = violating_pair(v, y, alpha, C)
        if i < 0 or M == np.inf or m - M <= eps:
            break
        j, best = -1, np.inf
        for t in range(len(y)):
            low = alpha[t] > 0 if y[t] > 0 else alpha[t] < C[t]
            if v[t] < m and low:
                g = gain(m, v[t], K[i, i], K[t, t], K[i, t])
                if g <= best:
                    best, j = g, t
        if j < 0 or not pair_update(K, y, alpha, C, v, i, j):
            break
        steps += 1
    return steps


def _svr_block(rng, q, dup=True):
    """An SVR-like block: q variables over q/2 data rows (both variables of
    a row when ``dup``), signs mixed, exactly symmetric K."""
    X = rng.normal(size=(q, 5))
    rows = np.concatenate([np.arange(q // 2)] * 2) if dup else np.arange(q)
    rng.shuffle(rows)
    K = rbf_kernel(X[rows], gamma=0.3)
    K = 0.5 * (K + K.T)
    y = np.where(np.arange(q) % 2 == 0, 1.0, -1.0)[rng.permutation(q)]
    z = rng.normal(size=q)
    p = np.where(y > 0, 0.1 - z, 0.1 + z)
    C = rng.choice([1.0, 3.0], q)
    return K, y, C, -y * p


def test_block_smo_is_the_plain_loop():
    rng = np.random.default_rng(4)
    for trial in range(12):
        q = 2 * int(rng.integers(2, 40))
        K, y, C, v0 = _svr_block(rng, q, dup=trial % 2 == 0)
        a1, v1 = np.zeros(q), v0.copy()
        a2, v2 = np.zeros(q), v0.copy()
        steps, _, stuck = block_smo(K, y, a1, C, v1, 1e-3, 10 * q)
        assert steps == _plain_block_smo(K, y, a2, C, v2, 1e-3, 10 * q)
        np.testing.assert_array_equal(a1, a2)
        np.testing.assert_array_equal(v1, v2)
        # and it did what it claims: feasible, y'a kept, violation <= eps (or the cap)
        assert np.all((a1 >= 0) & (a1 <= C)) and abs(y @ a1) < 1e-10
        if steps < 10 * q and not stuck:
            vt = v0 - K @ (y * a1)
            up = np.where(y > 0, a1 < C, a1 > 0)
            low = np.where(y > 0, a1 > 0, a1 < C)
            assert vt[up].max() - vt[low].min() <= 1e-3 + 1e-9


def test_block_smo_nu_meets_both_classes_stop():
    rng = np.random.default_rng(5)
    for trial in range(10):
        q = 2 * int(rng.integers(4, 40))
        K, y, C, v0 = _svr_block(rng, q)
        a = np.where(rng.random(q) < 0.5, C * rng.random(q), 0.0)
        v0 = v0 - K @ (y * a)  # v consistent with the start
        a0 = a.copy()
        v = v0.copy()
        steps, gap0, stuck = block_smo_nu(K, y, a, C, v, 1e-4, 50 * q)
        assert not stuck and steps < 50 * q
        pos = y > 0
        for mask in (pos, ~pos):  # each class's sum kept
            assert abs(a[mask].sum() - a0[mask].sum()) < 1e-9
        assert np.all((a >= 0) & (a <= C))
        vt = v0 - K @ (y * (a - a0))
        np.testing.assert_allclose(v, vt, rtol=0, atol=1e-9)
        up = np.where(pos, a < C, a > 0)
        low = np.where(pos, a > 0, a < C)
        for mask in (pos, ~pos):
            u, lo = up & mask, low & mask
            if u.any() and lo.any():
                assert vt[u].max() - vt[lo].min() <= 1e-4 + 1e-9


def test_dual_jit_equals_no_jit():
    """solve_blocked_dual (epsilon-SVR and nu-SVR, float64 rows) with
    numba's JIT off, so that the compiled loops run as Python: the same
    outer steps and the same multipliers."""
    import json
    import os
    import subprocess
    import sys

    code = (
        "import json, numpy as np;"
        "from svmlab.kernels import Kernel;"
        "from svmlab.decomposition._blocked_dual import ("
        " solve_blocked_dual, svr_problem, nu_svr_problem);"
        "rng = np.random.default_rng(6); X = rng.normal(size=(90, 3));"
        "z = np.sin(X[:, 0]) + 0.1 * rng.normal(size=90);"
        "k = Kernel(X, 'rbf', 0.5); out = {};"
        "r = solve_blocked_dual(k, *svr_problem(z, 3.0, 0.05), q=12,"
        " cache_dtype='float64', tol=1e-5);"
        "out['svr'] = [r[3], r[0].tolist()];"
        "r = solve_blocked_dual(k, *nu_svr_problem(z, 3.0, 0.4), q=12,"
        " cache_dtype='float64', nu=True, tol=1e-5);"
        "out['nu'] = [r[3], r[0].tolist()];"
        "print(json.dumps(out))"
    )
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    outs = []
    for jit_off in ("0", "1"):
        env = dict(os.environ, NUMBA_DISABLE_JIT=jit_off)
        out = subprocess.run([sys.executable, "-c", code], env=env, cwd=root,
                             capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, out.stderr
        outs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    for key in ("svr", "nu"):
        assert outs[0][key][0] == outs[1][key][0] > 1
        np.testing.assert_allclose(outs[0][key][1], outs[1][key][1], rtol=0, atol=1e-12)
