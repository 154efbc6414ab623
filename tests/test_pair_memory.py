"""The memory of one-vs-one pairs reused from pair to pair (decision 32j01).

A worker thread's pairs take their kernel-row cache, their copy of the
training rows and its float32 copy from pools of their worker's store
(:class:`svmlab.kernels._pool.BufferPool`), instead of a fresh heap per pair.
Checked here: the pool hands memory out again only once the array using it
is garbage, keeps no more than its bound, and dies with its owner; the
pooled copies are the values of the plain ones bit for bit; a fit reuses
the buffers (one per worker and kind, not one per pair), gives the model
of a fit without pools and of ``n_jobs=1`` bit for bit, and keeps nothing
after it returns.
"""

import gc
import threading
import warnings
import weakref

import numpy as np
import pytest
from sklearn.datasets import load_digits

from _pair_workers import every_worker_runs
from svmlab import _multiclass
from svmlab.kernels import Kernel
from svmlab.kernels._pool import BufferPool
from svmlab.kernels.cache import KernelCache, SharedRowStore
from svmlab.svm import SVC, NuSVC


def _addr(a):
    return a.__array_interface__["data"][0]


def test_pool_reuses_memory_only_after_the_array_is_gone():
    pool = BufferPool(keep_bytes=4 << 20, min_bytes=1024)
    a = pool.empty((200, 300), np.float64)
    assert a.shape == (200, 300) and a.dtype == np.float64 and a.flags.c_contiguous
    a[...] = 1.0
    base = _addr(a)
    # a is alive: a second request gets other memory
    b = pool.empty((100, 300), np.float32)
    assert _addr(b) != base and pool.made == 2 and pool.reused == 0
    del a
    gc.collect()
    # a's buffer serves a request of at most its size (float32 of the same bytes too)
    c = pool.empty((200, 600), np.float32)
    assert _addr(c) == base and pool.reused == 1
    c[...] = 2.0
    assert np.all(b.shape == (100, 300))
    # a larger request than any free buffer gets a fresh one of at least reserve bytes
    del c
    gc.collect()
    d = pool.empty((10, 10), np.float64)  # below min_bytes: not pooled
    assert pool.made == 2 and pool.reused == 1
    e = pool.empty((400, 300), np.float64, reserve=2 << 20)
    assert pool.made == 3
    del e, d
    gc.collect()
    f = pool.empty((500, 500), np.float64)  # 2 MB: served by e's reserved buffer
    assert pool.reused == 2
    del f, b


def test_pool_keeps_at_most_its_bound_and_dies_with_its_owner():
    pool = BufferPool(keep_bytes=3 << 20, min_bytes=1)
    arrays = [pool.empty((1 << 20,), np.uint8) for _ in range(5)]
    del arrays
    gc.collect()
    assert pool.free_bytes <= 3 << 20
    assert pool.free_bytes == 3 << 20  # three of the five kept
    x = pool.empty((1 << 20,), np.uint8)
    ref = weakref.ref(pool)
    del pool
    gc.collect()
    assert ref() is None
    del x  # its finalizer finds no pool: nothing kept, no error
    gc.collect()


def test_pool_is_safe_across_threads():
    pool = BufferPool(keep_bytes=8 << 20, min_bytes=1)
    errors = []

    def work(seed):
        try:
            for i in range(200):
                a = pool.empty((1000 + (i % 7) * 10,), np.float64)
                a[...] = seed
                assert np.all(a == seed)  # nobody else writes into it meanwhile
                del a
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(s,)) for s in (1.0, 2.0)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert pool.made < 20


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    idx = np.random.RandomState(0).permutation(len(y))[:450]
    return X[idx], y[idx]


def _class_ordered(X, y):
    order = np.argsort(y, kind="stable")
    coff = np.concatenate([[0], np.cumsum(np.bincount(y))])
    return np.ascontiguousarray(X[order]), coff


def test_store_pair_copies_are_the_plain_copies(digits, monkeypatch):
    monkeypatch.setattr(BufferPool, "MIN_BYTES", 0)
    X, y = digits
    Xs, coff = _class_ordered(X, y)
    store = SharedRowStore(Kernel(Xs, "rbf", gamma=0.5), coff, 2.0, "float32")
    for a, b in [(0, 1), (3, 7), (8, 9)]:
        Xp = store.pair_rows(Xs, a, b)
        ref = np.concatenate((Xs[coff[a]:coff[a + 1]], Xs[coff[b]:coff[b + 1]]))
        assert Xp.dtype == np.float64 and Xp.flags.c_contiguous
        assert np.array_equal(Xp, ref)
        kp = Kernel(Xp, "rbf", gamma=0.5)
        assert kp.X is Xp  # the pooled array is the kernel's own (its lifetime)
        store.pair_float32(kp)
        plain = Kernel(ref, "rbf", gamma=0.5).ensure_float32()
        assert kp.data.dense32.dtype == np.float32
        assert np.array_equal(kp.data.dense32, plain.data.dense32)
        store.attach(kp, a, b)
        c = KernelCache(kp, 100.0, dtype="float32")
        n = kp.n_samples
        assert c.data.rows.shape == (min(n, c.data.rows.shape[0]), n)
        assert c.data.rows.nbytes <= store.pair_cache_bytes
        for i in (0, n - 1):
            assert np.array_equal(c.row(i), kp.row(i, out=np.empty(n, np.float32)))
        del Xp, kp, c, plain
        gc.collect()
    # three pairs, one after the other: one buffer per kind
    assert store.pool.made == 1 and store.pool.reused == 2
    assert all(p.made == 1 and p.reused == 2 for p in store._xpools.values())


@pytest.fixture
def stores(monkeypatch):
    """Weak references to every store a multiclass fit makes."""
    made = []
    original = _multiclass.MulticlassRun._new_store

    def recording(self, kernel):
        s = original(self, kernel)
        made.append(weakref.ref(s))
        made.append(s)  # strong until the test drops it (pool counts)
        return s

    monkeypatch.setattr(_multiclass.MulticlassRun, "_new_store", recording)
    return made


def _fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return est.fit(X, y)


def _same(a, b):
    assert np.array_equal(a.support_, b.support_)
    assert np.array_equal(a.dual_coef_, b.dual_coef_)
    assert np.array_equal(a.intercept_, b.intercept_)
    assert np.array_equal(a.n_iter_, b.n_iter_)


@pytest.mark.parametrize("cache_size", [200.0, 0.5])  # float64 rows; float32 rows
def test_fit_reuses_pair_memory_and_gives_the_same_model(digits, monkeypatch, stores,
                                                         cache_size):
    X, y = digits
    # the pools serve the pairs' own runs: not the compiled driver of the
    # pairs (decisions 32o01, 32p01), which makes its arrays in compiled code
    monkeypatch.setattr(_multiclass.MulticlassRun, "_lean_ok", lambda self: False)
    monkeypatch.setattr(_multiclass.MulticlassRun, "_parallel_driver_ok", lambda self: False)
    # both workers run pairs (a late second thread found the queue empty on
    # a busy machine: one buffer made, not two)
    every_worker_runs(monkeypatch)
    # no pools: every pair's arrays fresh, as before decision 32j01
    monkeypatch.setattr(BufferPool, "MIN_BYTES", 1 << 62)
    plain = _fit(SVC(n_jobs=1, cache_size=cache_size), X, y)
    stores.clear()
    monkeypatch.setattr(BufferPool, "MIN_BYTES", 0)  # pool everything
    for n_jobs in (1, 2):
        est = _fit(SVC(n_jobs=n_jobs, cache_size=cache_size), X, y)
        _same(plain, est)
        live = [s for s in stores if isinstance(s, SharedRowStore)]
        assert len(live) == n_jobs  # one store per worker
        P = 45
        for kind in ("cache", "x", "x32"):
            pools = [s.pool if kind == "cache" else s._xpools.get(kind) for s in live]
            pools = [p for p in pools if p is not None]
            if kind == "x32" and cache_size == 200.0:
                assert pools == []  # float64 rows: no float32 copy
                continue
            made = sum(p.made for p in pools)
            used = made + sum(p.reused for p in pools)
            assert used == P
            # a buffer per worker: a pair's run is dropped before the next
            # opens (the sequential path too)
            assert made == n_jobs
            for p in pools:
                assert p.free_bytes <= p.keep_bytes
        refs = [s for s in stores if isinstance(s, weakref.ref)]
        stores.clear()
        del live, pools, p
        gc.collect()
        # nothing of the fit's stores (and their pools) is kept after it
        assert all(r() is None for r in refs)


def test_nusvc_parallel_with_pools(digits, monkeypatch):
    """NuSVC's pairs (the generalised dual's runs, caches of their own) go
    through the same driver: same model for n_jobs 1 and 2."""
    monkeypatch.setattr(BufferPool, "MIN_BYTES", 0)
    X, y = digits
    _same(_fit(NuSVC(nu=0.1, n_jobs=1), X, y), _fit(NuSVC(nu=0.1, n_jobs=2), X, y))
