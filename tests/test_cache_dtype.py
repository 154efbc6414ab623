"""float32 cached kernel values (LIBSVM's Qfloat), ``cache_dtype`` and
``n_jobs`` on every kernel estimator.

Solutions are checked against LIBSVM (scikit-learn SVC at tol 1e-6) with the
dual objective computed here from a scikit-learn Gram matrix
(``tests/reference.py``), never from the solver's own numbers.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from joblib import parallel_config
from sklearn.datasets import make_classification, make_moons
from sklearn.utils._param_validation import InvalidParameterError
from threadpoolctl import threadpool_info

import reference as R
from svmlab import (ChunkingClassifier, DecompositionClassifier, IRWLSClassifier,
                    SMOClassifier)
from svmlab._stepping import BLOCK_THREADS_MIN_WORK, effective_n_jobs
from svmlab.kernels import Kernel, KernelCache, kernel_row
from svmlab.kernels.cache import n_slots_for

ESTIMATORS = (SMOClassifier, IRWLSClassifier, DecompositionClassifier, ChunkingClassifier)


def _data(kind, n=220, seed=0):
    if kind == "moons":
        X, y = make_moons(n, noise=0.3, random_state=seed)
        return X * 2.0, y
    X, y = make_classification(n, 20, n_informative=8, random_state=seed)
    if kind == "dense":
        return X, y
    if kind == "csr":
        X = X * (np.abs(X) > 0.8)
        return sp.csr_matrix(X), y
    if kind == "binary":
        return sp.csr_matrix((X > 0.5).astype(float)), y
    raise ValueError(kind)


# ---------------------------------------------------------------- the cache
@pytest.mark.parametrize("kind", ["dense", "csr", "binary"])
def test_cache_rows_are_the_kernel_rows(kind):
    """A float64 cache row is kernel_row bit for bit; a float32 cache row is
    the float32 kernel row (SGEMV for dense input) bit for bit, and within
    float32 rounding of the float64 row (the bound is derived in
    tests/test_kernel_blocks.py; here 1e-6 of the row's largest value)."""
    X, _ = _data(kind)
    K = Kernel(X, "rbf", gamma=0.05)
    c64 = KernelCache(K, 1.0)
    c32 = KernelCache(K, 1.0, dtype="float32")
    assert c64.data.rows.dtype == np.float64 and c32.data.rows.dtype == np.float32
    for i in (0, 7, 7, 219, 3):
        r64 = np.empty(K.n_samples)
        kernel_row(K.data, i, r64)
        np.testing.assert_array_equal(c64.row(i), r64)
        r32 = np.empty(K.n_samples, np.float32)
        kernel_row(K.data, i, r32)
        np.testing.assert_array_equal(c32.row(i), r32)
        assert np.max(np.abs(c32.row(i) - r64)) <= 1e-6 * np.max(np.abs(r64))
        if kind != "dense":  # the float64 value rounded once
            np.testing.assert_array_equal(r32, r64.astype(np.float32))


def test_float32_cache_holds_twice_the_rows_within_cache_size():
    X = np.random.default_rng(0).random((600, 5))
    K = Kernel(X, "rbf", gamma=1.0)
    for mb in (0.1, 0.5, 1.0):
        c64 = KernelCache(K, mb)
        c32 = KernelCache(K, mb, dtype=np.float32)
        assert c64.n_slots == n_slots_for(600, mb, 8)
        assert c32.n_slots == n_slots_for(600, mb, 4)
        assert c32.n_slots in (2 * c64.n_slots, 2 * c64.n_slots + 1)
        for c in (c64, c32):
            assert c.data.rows.nbytes <= mb * (1 << 20)
    with pytest.raises(ValueError, match="cache dtype"):
        KernelCache(K, 1.0, dtype=np.int32)


@pytest.mark.parametrize("kind", ["dense", "csr", "binary"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fill_block(kind, dtype):
    """Rows cached as one block: float64 rows are get_row's bit for bit,
    float32 within 1e-6 of the float64 row's largest value (the float32
    bound of tests/test_kernel_blocks.py); the LRU bookkeeping stays
    consistent and the two rows used last survive."""
    X, _ = _data(kind)
    K = Kernel(X, "rbf", gamma=0.05)
    n = K.n_samples
    c = KernelCache(K, 10 * n * np.dtype(dtype).itemsize / (1 << 20), dtype=dtype)
    assert c.n_slots == 10
    c.row(5)
    c.row(6)
    k = c.fill(np.array([1, 2, 2, 6, 3, 4, 7, 8, 9, 10, 11, 12]))
    assert k == 8  # n_slots - 2; 6 is cached and 2 duplicated
    assert 5 in c and 6 in c
    for i in (1, 2, 3, 4, 7, 8, 9, 10):
        assert i in c
    assert 11 not in c
    assert c.misses == 2 + 8 and c.hits == 0
    for i in (1, 2, 3, 4, 7, 8, 9, 10, 5, 6):
        r64 = K.row(i)
        got = c.row(i).astype(np.float64)
        if dtype == np.float64:
            np.testing.assert_array_equal(got, r64)
        else:
            assert np.max(np.abs(got - r64)) <= 1e-6 * np.max(np.abs(r64))
    assert c.hits == 10 and c.misses == 10
    # the linked list holds every slot once
    cd = c.data
    seen, s = [], cd.meta[0]
    while s >= 0:
        seen.append(int(s))
        s = cd.next[s]
    assert sorted(seen) == list(range(10))
    assert all(cd.slot_of[cd.owner[s]] == s for s in seen)
    assert c.fill([]) == 0 and c.fill([1, 2]) == 0


def test_float64_cache_keeps_no_float32_copy():
    X, y = _data("dense")
    run = SMOClassifier(cache_dtype="float64", progress=False).start(X, y)
    assert run.kd.dense32.shape == (0, 0)
    run = SMOClassifier(cache_dtype="float32", progress=False).start(X, y)
    assert run.kd.dense32.dtype == np.float32 and run.kd.dense32.shape == X.shape
    np.testing.assert_array_equal(run.kd.dense32, X.astype(np.float32))


# ------------------------------------------------------------------ solvers
@pytest.mark.parametrize("kind", ["dense", "csr", "binary", "moons"])
@pytest.mark.parametrize("selection", ["platt", "wss2"])
@pytest.mark.parametrize("kernel", ["rbf", "linear"])
def test_smo_both_dtypes_reach_libsvm(kind, selection, kernel):
    X, y = _data(kind)
    C, gamma = 3.0, 0.1
    Xd = X.toarray() if sp.issparse(X) else X
    K = R.gram(Xd, kernel, gamma)
    _, _, W = R.libsvm_dual(Xd, y, C, kernel, gamma)
    for dt in ("float32", "float64"):
        # a small cache: evictions, and parked phases when shrinking
        m = SMOClassifier(C=C, kernel=kernel, gamma=gamma, selection=selection,
                          random_state=0, progress=False, cache_size=0.05,
                          cache_dtype=dt).fit(X, y)
        yp = R.to_pm(y, m.classes_)
        a = m.alpha_
        assert m.converged_
        assert np.all(a >= 0) and np.all(a <= C) and abs(a @ yp) <= 1e-9 * C
        assert R.dual_objective(K, yp, a) == pytest.approx(W, rel=1e-3)


@pytest.mark.parametrize("kind", ["dense", "binary"])
@pytest.mark.parametrize("selection", ["platt", "wss2"])
def test_smo_stepped_equals_fast_with_float32(kind, selection):
    X, y = _data(kind, n=240, seed=3)
    kw = dict(C=2.0, gamma=0.2, selection=selection, random_state=5, progress=False,
              cache_size=0.05)  # a tiny cache: evictions and parked phases
    fast = SMOClassifier(**kw).fit(X, y)
    recs = []
    stepped = SMOClassifier(**kw).fit(X, y, callback=recs.append)
    run = SMOClassifier(**kw).start(X, y)
    assert run.cd.rows.dtype == np.float32
    manual = []
    while (r := run.step()) is not None:
        manual.append(r)
    assert [(r.i1, r.i2) for r in recs] == [(r.i1, r.i2) for r in manual]
    assert fast.n_iter_ == len(recs) == stepped.n_iter_
    np.testing.assert_array_equal(stepped.alpha_, fast.alpha_)


def test_smo_cached_rows_after_fit_are_kernel_rows():
    """What the solver kept in its cache is exactly what kernel_row computes
    in float64 (no other arithmetic writes cache rows); in float32 it is the
    kernel row within float32 rounding (single rows by SGEMV, or the rows of
    a prefetched block by SGEMM, svmlab.smo._dual_core._prefetch: the
    bound of tests/test_kernel_blocks.py is about 1e-6 here), and every row
    is at least close to the float64 row."""
    X, y = _data("dense", n=300, seed=2)
    for dt in (np.float32, np.float64):
        run = SMOClassifier(C=2.0, gamma=0.1, selection="wss2", shrinking=False,
                            cache_size=0.2, cache_dtype=np.dtype(dt).name,
                            progress=False).start(X, y)
        run.run()
        cd = run.cd
        owners = np.flatnonzero(cd.slot_of >= 0)
        assert len(owners) >= 2
        for i in owners[:20]:
            r = np.empty(len(y), dt)
            kernel_row(run.kd, int(i), r)
            if dt == np.float64:
                np.testing.assert_array_equal(cd.rows[cd.slot_of[i]], r)
            else:
                r64 = np.empty(len(y))
                kernel_row(run.kd, int(i), r64)
                got = cd.rows[cd.slot_of[i]].astype(np.float64)
                # the bound of tests/test_kernel_blocks.py for the rbf kernel:
                # inner products off by (d + 2) u sum_k |x_ik x_jk|, times
                # |dK/d<x,z>| <= 2 gamma, plus one float32 rounding
                u = 2.0 ** -24
                g = (X.shape[1] + 2) * u / (1 - (X.shape[1] + 2) * u)
                bound = 2 * 0.1 * g * (np.abs(X) @ np.abs(X[i])) + u * np.abs(r64) + 1e-300
                assert np.all(np.abs(got - r64) <= bound)
                assert np.all(np.abs(r.astype(np.float64) - r64) <= bound)


@pytest.mark.parametrize("cls", [IRWLSClassifier, DecompositionClassifier, ChunkingClassifier])
def test_other_solvers_use_the_dtype_and_reach_libsvm(cls):
    X, y = _data("dense", n=160, seed=1)
    C, gamma = 2.0, 0.1
    K = R.gram(X, "rbf", gamma)
    _, _, W = R.libsvm_dual(X, y, C, "rbf", gamma)
    for dt in ("float32", "float64"):
        est = cls(C=C, gamma=gamma, cache_dtype=dt, progress=False)
        run = est.start(X, y)
        cache = getattr(run, "cache", None)
        if cache is not None:
            assert cache.data.rows.dtype == np.dtype(dt)
        m = cls(C=C, gamma=gamma, cache_dtype=dt, progress=False).fit(X, y)
        yp = R.to_pm(y, m.classes_)
        assert R.dual_objective(K, yp, m.alpha_) == pytest.approx(W, rel=1e-3)


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_bad_cache_dtype_is_refused_before_work(cls):
    X, y = _data("dense", n=40)
    with pytest.raises(InvalidParameterError, match="cache_dtype"):
        cls(cache_dtype="float16").fit(X, y)
    with pytest.raises(InvalidParameterError, match="n_jobs"):
        cls(n_jobs="two").fit(X, y)
    with pytest.raises(ValueError, match="n_jobs"):
        cls(n_jobs=0).fit(X, y)


def test_user_arrays_not_modified():
    X, y = _data("dense", n=80)
    X0, y0 = X.copy(), y.copy()
    SMOClassifier(progress=False).fit(X, y)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(y, y0)


# ------------------------------------------------------------------- n_jobs
def test_effective_n_jobs_conventions():
    import os

    ncpu = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert effective_n_jobs(None) == 1
    assert effective_n_jobs(3) == 3
    assert effective_n_jobs(-1) >= 1
    assert effective_n_jobs(-1) <= max(ncpu, os.cpu_count())
    with parallel_config(n_jobs=2):
        assert effective_n_jobs(None) == 2
    with pytest.raises(ValueError):
        effective_n_jobs(0)


def _blas_threads():
    return {m["internal_api"]: m["num_threads"] for m in threadpool_info()
            if m["user_api"] == "blas"}


def test_n_jobs_reaches_the_runs():
    X, y = _data("dense", n=60)
    run = SMOClassifier(progress=False).start(X, y)
    assert run.n_jobs == 1 and run.blas_threads == 1
    run = SMOClassifier(progress=False, n_jobs=2).start(X, y)
    assert run.n_jobs == 2 and run.blas_threads == 2
    with parallel_config(n_jobs=2):
        run = SMOClassifier(progress=False).start(X, y)
    assert run.n_jobs == 2 and run.blas_threads == 2
    # IRWLS keeps one thread for its small factorisations; large blocks get n_jobs
    run = IRWLSClassifier(progress=False, n_jobs=2).start(X, y)
    assert run.blas_threads == 1 and run.n_jobs == 2
    with run.block_threads(BLOCK_THREADS_MIN_WORK):
        assert set(_blas_threads().values()) == {2}
    with run.block_threads(1), run.block_threads(BLOCK_THREADS_MIN_WORK - 1):
        before = _blas_threads()
    assert before == _blas_threads()
    run.n_jobs = 1
    with run.block_threads(10 * BLOCK_THREADS_MIN_WORK):
        assert _blas_threads() == before


def test_n_jobs_reaches_the_same_optimum():
    """Threads may split a BLAS product differently (last-bit differences),
    so only the optimum is compared."""
    X, y = _data("dense", n=200, seed=4)
    K = R.gram(X, "rbf", 0.1)
    for cls in ESTIMATORS:
        a = cls(progress=False, gamma=0.1).fit(X, y)
        b = cls(progress=False, gamma=0.1, n_jobs=2).fit(X, y)
        yp = R.to_pm(y, a.classes_)
        assert R.dual_objective(K, yp, b.alpha_) == pytest.approx(
            R.dual_objective(K, yp, a.alpha_), rel=1e-4)


def test_auto_cache_dtype_is_float64_when_the_matrix_fits():
    """``cache_dtype="auto"`` (the default): float64 when every full row fits
    in ``cache_size`` at float64, float32 otherwise; explicit values win.
    The resolved type is ``cache_dtype_`` and is what the cache holds."""
    from svmlab import SMOClassifier, IRWLSClassifier
    from svmlab._base import resolve_cache_dtype

    assert resolve_cache_dtype("auto", 1000, 200.0) == "float64"     # 8 MB matrix
    assert resolve_cache_dtype("auto", 10000, 200.0) == "float32"    # 800 MB matrix
    assert resolve_cache_dtype("float32", 10, 200.0) == "float32"
    assert resolve_cache_dtype("float64", 10**6, 1.0) == "float64"
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] > 0).astype(int)
    for cls in (SMOClassifier, IRWLSClassifier):
        big = cls(progress=False).fit(X, y)                   # 300^2 * 8 B = 0.7 MB
        small = cls(cache_size=0.1, progress=False).fit(X, y)
        forced = cls(cache_size=0.1, cache_dtype="float64", progress=False).fit(X, y)
        assert big.cache_dtype_ == "float64" and big.cache_dtype == "auto"
        assert small.cache_dtype_ == "float32" and forced.cache_dtype_ == "float64"
    run = SMOClassifier(cache_size=0.1, progress=False).start(X, y)
    assert run.cache.data.rows.dtype == np.float32
