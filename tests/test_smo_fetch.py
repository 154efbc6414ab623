"""SMO's kernel blocks with float32 rows of dense input (issue 15):
block-fetched rows, block gradient reconstruction (svmlab.smo._fetch) and
rows completed at an unshrink -- checked against float64 kernel values
computed here, against LIBSVM's optimum, and JIT against no-JIT.

The float32 bound (tests/test_kernel_blocks.py derives it): an rbf value
from float32 inputs is off by at most ``2 gamma gamma_{d+2} sum_k |x_k z_k|
+ u |K|`` (u = 2**-24, ``gamma_m = m u / (1 - m u)``).
"""

import os
import subprocess
import sys

import numpy as np
import pytest
from sklearn.datasets import make_classification

import reference as R
from svmlab import SMOClassifier
from svmlab.kernels import Kernel, KernelCache, kernel_row
from svmlab.kernels.cache import get_row, get_row_subset
from svmlab.smo import _core as core
from svmlab.smo._fetch import add_kernel_sum32, all_cols32, complete_rows, gathered_cols32

U = 2.0 ** -24
GAMMA = 0.02


def _dense(n=300, d=80, seed=0):
    X, y = make_classification(n, d, n_informative=12, random_state=seed)
    return X, y


def _entry_bound(X, rows, cols, gamma=GAMMA):
    """Elementwise bound on |K32 - K64| for rbf values (see the module doc)."""
    d = X.shape[1]
    g = (d + 2) * U / (1 - (d + 2) * U)
    return 2 * gamma * g * (np.abs(X[rows]) @ np.abs(X[cols]).T) + U


def test_add_kernel_sum32_against_float64_sum():
    X, _ = _dense(n=700, d=70, seed=1)
    ker = Kernel(X, "rbf", gamma=GAMMA)
    ker.ensure_float32()
    rng = np.random.default_rng(0)
    rows = rng.permutation(700)[:600]  # more rows than one block (512)
    cols = np.sort(rng.permutation(700)[:250])
    coef = rng.normal(size=600)
    K = R.gram(X, "rbf", GAMMA)
    want = 1.5 + coef @ K[np.ix_(rows, cols)]
    for all_cols in (False, True):
        c = np.arange(700) if all_cols else cols
        acc = np.full(len(c), 1.5)
        Z, sqz = (all_cols32(ker.data) if all_cols
                  else gathered_cols32(ker.data, c.astype(np.int64), len(c)))
        add_kernel_sum32(ker.data, rows.astype(np.int64), coef, 600, Z, sqz, acc)
        exact = 1.5 + coef @ K[np.ix_(rows, c)]
        bound = np.abs(coef) @ _entry_bound(X, rows, c) + 1e-12
        assert np.all(np.abs(acc - exact) <= bound)
        if not all_cols:
            np.testing.assert_allclose(acc, want, rtol=0, atol=float(bound.max()))
    # nothing to add: nothing changes
    acc = np.zeros(3)
    Z, sqz = gathered_cols32(ker.data, np.arange(3), 3)
    add_kernel_sum32(ker.data, rows.astype(np.int64), coef, 0, Z, sqz, acc)
    assert np.all(acc == 0.0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_reconstruct_gradient_is_the_gradient(dtype):
    """reconstruct_gradient (blocks for float32 rows of dense input, rows for
    float64) gives every inactive example its exact f0 = sum alpha y K,
    pending Gbar changes included; active examples are left alone."""
    n, C = 400, 2.0
    X, y01 = _dense(n=n, d=80, seed=2)
    y = np.where(y01 == 1, 1.0, -1.0)
    rng = np.random.default_rng(3)
    alpha = rng.uniform(0, C, n)
    alpha[rng.random(n) < 0.3] = 0.0
    alpha[rng.random(n) < 0.2] = C
    K = R.gram(X, "rbf", GAMMA)
    f0 = K @ (alpha * y)
    atC = np.flatnonzero(alpha >= C)
    pending = atC[::3]  # bound changes noted while shrunk
    noted = np.setdiff1d(atC, pending)
    Gbar = np.zeros((2, n))
    Gbar[0] = K[:, noted] @ (C * y[noted])
    Gbar[1, pending] = C * y[pending]
    active = np.where(rng.random(n) < 0.4, core.ACTIVE, core.SHRUNK).astype(np.int8)
    G = np.full(n, 7.0)
    ker = Kernel(X, "rbf", gamma=GAMMA)
    cache = KernelCache(ker, 0.05, dtype=dtype)
    rowfull = np.zeros(n, dtype=np.bool_)
    Gbar_cold, G_cold = Gbar.copy(), G.copy()
    if dtype == np.float64:
        # every row computed, nothing cached: the reference for the cached run
        cold = KernelCache(ker, 0.05, dtype=dtype)
        core.reconstruct_gradient(ker.data, cold.data, y, np.full(n, C), alpha, G_cold,
                                  Gbar_cold, active, np.zeros(n), rowfull.copy(), None)
        # half the pending rows and of the free SVs' rows cached in full
        # (summed from the cache), one of each cached but partial (computed
        # while shrunk: must not be read)
        free_sv = np.flatnonzero((alpha > 0) & (alpha < C))
        for j in np.concatenate([pending[::2], free_sv[::2]]):
            cache.row(j)
            rowfull[j] = True
        for j_part in (pending[1], free_sv[1]):
            cache.row(j_part)
            cache.data.rows[cache.data.slot_of[j_part]] = np.nan
    blocks = True if core.blocks_apply(ker.data, cache.data) else None
    assert (blocks is True) == (dtype == np.float32)
    core.reconstruct_gradient(ker.data, cache.data, y, np.full(n, C), alpha, G, Gbar, active,
                              np.zeros(n), rowfull, blocks)
    if dtype == np.float64:
        # the cached full rows are the computed rows bit for bit (Gbar); the
        # free SVs' cached rows are matrix-vector sums where the cold run
        # sums entry by entry over the shrunk examples (last bits)
        np.testing.assert_array_equal(Gbar, Gbar_cold)
        np.testing.assert_allclose(G, G_cold, rtol=0, atol=1e-12)
    inactive = active != core.ACTIVE
    assert np.all(G[~inactive] == 7.0)
    assert np.all(Gbar[1] == 0.0)
    gbar_true = K[:, atC] @ (C * y[atC])
    if dtype == np.float64:
        np.testing.assert_allclose(G[inactive], f0[inactive], rtol=0, atol=1e-10)
        np.testing.assert_allclose(Gbar[0], gbar_true, rtol=0, atol=1e-10)
    else:
        free = (alpha > 0) & (alpha < C)
        eb = _entry_bound(X, np.arange(n), np.arange(n))
        bound_g = (np.abs(alpha * y) * (free | np.isin(np.arange(n), pending))) @ eb + 1e-10
        assert np.all(np.abs(G[inactive] - f0[inactive]) <= bound_g[inactive])
        assert np.all(np.abs(Gbar[0] - gbar_true) <= bound_g)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_complete_rows(dtype):
    """At an unshrink, rows cached while shrunk are completed in place (the
    full rows are kept; float64 rows then equal kernel_row bit for bit,
    float32 rows the float64 kernel within float32 rounding), or the cache
    forgets every row when most rows are partial."""
    n = 200
    X, _ = _dense(n=n, d=70, seed=4)
    ker = Kernel(X, "rbf", gamma=GAMMA)
    cache = KernelCache(ker, 1.0, dtype=dtype)
    cd = cache.data
    rowfull = np.zeros(n, dtype=np.bool_)
    full_rows = np.arange(0, 40)
    for i in full_rows:
        get_row(ker.data, cd, int(i))
        rowfull[i] = True
    act = np.arange(0, n, 3).astype(np.int64)
    partial = np.arange(100, 105)
    for i in partial:
        get_row_subset(ker.data, cd, int(i), act, len(act))
    saved = cd.rows[cd.slot_of[full_rows]].copy()
    misses = cache.misses
    blocks = True if core.blocks_apply(ker.data, cd) else None
    complete_rows(ker.data, cd, rowfull, blocks)
    assert cache.misses == misses + len(partial)
    assert np.all(rowfull[np.concatenate([full_rows, partial])])
    np.testing.assert_array_equal(cd.rows[cd.slot_of[full_rows]], saved)
    K = R.gram(X, "rbf", GAMMA)
    got = cd.rows[cd.slot_of[partial]].astype(np.float64)
    if dtype == np.float64:
        for i in partial:
            r = np.empty(n)
            kernel_row(ker.data, int(i), r)
            np.testing.assert_array_equal(cd.rows[cd.slot_of[i]], r)
        np.testing.assert_allclose(got, K[partial], rtol=0, atol=1e-13)
    else:
        bound = _entry_bound(X, partial, np.arange(n))
        assert np.all(np.abs(got - K[partial]) <= bound)
    # mostly partial rows: forget them all
    for i in range(120, 160):
        get_row_subset(ker.data, cd, i, act, len(act))
        rowfull[i] = False
    complete_rows(ker.data, cd, rowfull, blocks)
    assert np.all(cd.slot_of < 0)


@pytest.mark.parametrize("form", ["csr", "binary"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_complete_rows_without_blocks_equal_a_miss(form, dtype):
    """Without the float32 block switch (CSR or bit-packed input, either
    row dtype) a row completed at an unshrink is the row a miss computes,
    bit for bit, and equals the kernel computed here within the row's
    rounding; the full rows are kept."""
    n = 150
    rng = np.random.default_rng(7)
    if form == "csr":
        import scipy.sparse as sp
        X = rng.normal(size=(n, 30)) * (rng.random((n, 30)) < 0.3)
        Xk = sp.csr_matrix(X)
    else:
        X = (rng.random((n, 100)) < 0.2).astype(np.float64)
        Xk = X
    ker = Kernel(Xk, "rbf", gamma=GAMMA)
    assert ker.data.sparse == (form == "csr") and ker.data.binary == (form == "binary")
    cache = KernelCache(ker, 1.0, dtype=dtype)
    cd = cache.data
    assert not core.blocks_apply(ker.data, cd)
    rowfull = np.zeros(n, dtype=np.bool_)
    full_rows = np.arange(0, 40)
    for i in full_rows:
        get_row(ker.data, cd, int(i))
        rowfull[i] = True
    # fewer than a quarter of the entries: a bit-packed subset row is then
    # computed entry by entry, not streamed whole
    act = np.arange(0, n, 5).astype(np.int64)
    partial = np.arange(100, 105)
    for i in partial:
        get_row_subset(ker.data, cd, int(i), act, len(act))
    saved = cd.rows[cd.slot_of[full_rows]].copy()
    misses = cache.misses
    complete_rows(ker.data, cd, rowfull, None)
    assert cache.misses == misses + len(partial)
    assert np.all(rowfull[partial])
    np.testing.assert_array_equal(cd.rows[cd.slot_of[full_rows]], saved)
    K = R.gram(X, "rbf", GAMMA)
    for i in partial:
        miss = np.empty(n, dtype=dtype)
        kernel_row(ker.data, int(i), miss)
        np.testing.assert_array_equal(cd.rows[cd.slot_of[i]], miss)
    tol = 1e-13 if dtype == np.float64 else 2.0 ** -24 + 1e-13
    np.testing.assert_allclose(cd.rows[cd.slot_of[partial]].astype(np.float64), K[partial],
                               rtol=0, atol=tol)


def _fit_case(selection, shrinking=True, **kw):
    X, y = _dense(n=500, d=80, seed=5)
    # float32 rows (a cache far below n rows: evictions, block fetches of
    # capped size, parked phases for Platt), shrinking
    m = SMOClassifier(C=5.0, gamma=GAMMA, selection=selection, shrinking=shrinking,
                      cache_size=0.3, cache_dtype="float32", random_state=0,
                      progress=False, **kw)
    return X, y, m


@pytest.mark.parametrize("selection", ["wss2", "platt"])
@pytest.mark.parametrize("shrinking", [True, False])
def test_same_optimum_as_libsvm_with_block_fetches(selection, shrinking):
    X, y, m = _fit_case(selection, shrinking)
    m.fit(X, y)
    assert m.converged_
    K = R.gram(X, "rbf", GAMMA)
    yp = R.to_pm(y, m.classes_)
    _, _, W = R.libsvm_dual(X, y, 5.0, "rbf", GAMMA)
    a = m.alpha_
    assert np.all(a >= 0) and np.all(a <= 5.0) and abs(a @ yp) <= 1e-9
    assert R.dual_objective(K, yp, a) == pytest.approx(W, rel=1e-4)
    # KKT from alpha and b alone, the kernel computed here in float64
    # (float32 kernel values move f by ~1e-4 at most on these data)
    assert R.kkt_violation(K, yp, a, float(m.intercept_[0]), 5.0) <= 1e-2


def test_cached_block_rows_within_float32_rounding():
    X, y, m = _fit_case("wss2", False)
    run = m.start(X, y)
    run.run()
    cd = run.cd
    owners = np.flatnonzero(cd.slot_of >= 0)
    assert len(owners) > core.PREFETCH_ROWS
    K = R.gram(X, "rbf", GAMMA)
    got = cd.rows[cd.slot_of[owners]].astype(np.float64)
    assert np.all(np.abs(got - K[owners]) <= _entry_bound(X, owners, np.arange(len(y))))
    for i in owners[:10]:
        r = np.empty(len(y), np.float32)
        kernel_row(run.kd, int(i), r)
        assert np.all(np.abs(r - K[i]) <= _entry_bound(X, [i], np.arange(len(y)))[0])


@pytest.mark.parametrize("selection", ["wss2", "platt"])
def test_stepped_equals_fast_with_block_fetches(selection):
    X, y, m = _fit_case(selection)
    fast = m.fit(X, y).alpha_.copy()
    n_fast = m.n_iter_
    recs = []
    stepped = SMOClassifier(**m.get_params()).fit(X, y, callback=recs.append)
    assert stepped.n_iter_ == n_fast == len(recs)
    np.testing.assert_array_equal(stepped.alpha_, fast)


_NOJIT = """
import sys, numpy as np
from sklearn.datasets import make_classification
from svmlab import SMOClassifier
X, y = make_classification(240, 80, n_informative=12, random_state=7)
out = []
for sel in ("wss2", "platt"):
    m = SMOClassifier(C=5.0, gamma=0.02, selection=sel, cache_size=0.1,
                      cache_dtype="float32", random_state=0, progress=False).fit(X, y)
    assert m.converged_
    out.append(m.alpha_)
np.save(sys.argv[1], np.concatenate(out))
"""


def test_jit_equals_no_jit_with_block_fetches(tmp_path):
    """The compiled float32 block paths and their NUMBA_DISABLE_JIT twins
    reach the same optimum (not bit for bit: numba's BLAS and numpy's may
    round float32 sums differently, see tests/test_smo.py)."""
    res = {}
    for jit in ("0", "1"):
        f = tmp_path / f"a{jit}.npy"
        subprocess.run([sys.executable, "-c", _NOJIT, str(f)], check=True, timeout=600,
                       env=dict(os.environ, NUMBA_DISABLE_JIT=jit))
        res[jit] = np.load(f)
    X, y = make_classification(240, 80, n_informative=12, random_state=7)
    K = R.gram(X, "rbf", GAMMA)
    yp = np.where(y == 1, 1.0, -1.0)
    for k in range(2):
        a0 = res["0"][k * 240:(k + 1) * 240]
        a1 = res["1"][k * 240:(k + 1) * 240]
        assert R.dual_objective(K, yp, a0) == pytest.approx(R.dual_objective(K, yp, a1),
                                                            rel=1e-5)
