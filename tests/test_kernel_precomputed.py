"""kernel="precomputed" and the full-kernel path of svmlab.kernels.

* A precomputed kernel serves every row, value, subset row, row against a
  subset, block and class block as the entries of the user's Gram matrix
  (checked against the matrix itself and sklearn.metrics.pairwise), in both
  cache dtypes, through every cache function the SMO loops use.
* The full-kernel cache holds the whole matrix from the start: its rows are
  the kernel's (exact for CSR, binary and precomputed input; within the
  float64 GEMM's summation order or float32 rounding for dense input), and
  no request misses.
* SMO on a precomputed kernel, and SMO on a full-kernel cache, reach
  LIBSVM's optimum (sklearn's SVC, kernel="precomputed" for the first); the
  dual objective is computed here from alpha.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification
from sklearn.metrics.pairwise import pairwise_kernels
from sklearn.svm import SVC

from svmlab import SMOClassifier
from svmlab.kernels import Kernel, KernelCache, full_matrix, kernel_block, kernel_block_cols
from svmlab.kernels import kernel_block_cols_gemm, kernel_block_gemm, kernel_row_against
from svmlab.kernels._rows import kernel_row_subset
from svmlab.kernels.cache import (SharedRowStore, full_kernel_fits, get_row, get_row_against,
                                  get_row_subset)
from svmlab.smo._estimator import SMORun


def _data(n=60, d=4, seed=0):
    X, y = make_classification(n, d, n_informative=3, n_redundant=0, random_state=seed)
    return X, np.where(y == 1, 1.0, -1.0)


def _gram(X, kernel="rbf", **kw):
    return pairwise_kernels(X, metric=kernel, **kw)


def test_precomputed_rows_values_subsets_blocks():
    X, _ = _data()
    G = _gram(X, gamma=0.3)
    G[3, 7] += 0.25  # not symmetric: row i is row i of the matrix, as LIBSVM reads it
    k = Kernel(G, "precomputed")
    n = len(G)
    assert k.n_samples == n and not k.binary
    for i in (0, 3, n - 1):
        np.testing.assert_array_equal(k.row(i), G[i])
        np.testing.assert_array_equal(k.row(i, out=np.empty(n, np.float32)),
                                      G[i].astype(np.float32))
        assert k.value(i, 7) == G[i, 7]
    np.testing.assert_array_equal(k.diag(), np.diag(G))
    idx = np.array([5, 1, 9, 30], dtype=np.int64)
    out = np.full(n, -7.0)
    kernel_row_subset(k.data, 3, idx, 3, out)
    np.testing.assert_array_equal(out[idx[:3]], G[3, idx[:3]])
    assert np.all(np.delete(out, idx[:3]) == -7.0)
    sub = k.subset_data(idx)
    out = np.empty(len(idx))
    kernel_row_against(k.data, 3, sub, out)
    np.testing.assert_array_equal(out, G[3, idx])
    rows = np.array([3, 0, 3], dtype=np.int64)
    for dt in (np.float64, np.float32):
        B = np.empty((3, n), dt)
        kernel_block(k.data, rows, B)
        np.testing.assert_array_equal(B, G[rows].astype(dt))
        B2 = np.empty((3, n), dt)
        kernel_block_gemm(k.data, rows, B2)
        np.testing.assert_array_equal(B2, B)
        Bc = np.empty((3, 4), dt)
        kernel_block_cols(k.data, rows, idx, Bc)
        np.testing.assert_array_equal(Bc, G[np.ix_(rows, idx)].astype(dt))
        kernel_block_cols_gemm(k.data, rows, idx, Bc)
        np.testing.assert_array_equal(Bc, G[np.ix_(rows, idx)].astype(dt))
        np.testing.assert_array_equal(k.block(rows, dtype=dt), G[rows].astype(dt))
        np.testing.assert_array_equal(k.block(rows, idx, dtype=dt),
                                      G[np.ix_(rows, idx)].astype(dt))
    # prediction blocks: the Gram matrix of new points against the training set
    Z = np.arange(2.0 * n).reshape(2, n)
    np.testing.assert_array_equal(k.matrix(rows=idx, Z=Z), Z[:, idx].T)
    np.testing.assert_array_equal(k.matrix(rows=idx), G[idx])


def test_precomputed_input_checks():
    X, _ = _data()
    G = _gram(X)
    with pytest.raises(ValueError, match="Precomputed matrix must be a square matrix"):
        Kernel(G[:, :10], "precomputed")
    ks = Kernel(sp.csr_matrix(G), "precomputed")  # densified
    np.testing.assert_array_equal(ks.row(4), G[4])
    G_ro = G.copy()
    G_ro.setflags(write=False)
    assert Kernel(G_ro, "precomputed").data.dense.flags.writeable
    G0 = G.copy()
    Kernel(G, "precomputed").row(2)
    np.testing.assert_array_equal(G, G0)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_precomputed_through_the_cache(dtype):
    X, _ = _data(n=40)
    G = _gram(X, "poly", degree=2, coef0=1.0)
    k = Kernel(G, "precomputed")
    c = KernelCache(k, cache_size=40 * 40 * 8 * 3 / 2**20, dtype=dtype)  # 3 (or 6) rows
    expect = G.astype(dtype)
    for i in (0, 5, 7, 5, 11, 0, 20):
        np.testing.assert_array_equal(get_row(k.data, c.data, i), expect[i])
    act = np.array([2, 4, 8, 16], dtype=np.int64)
    r = get_row_subset(k.data, c.data, 33, act, 4)
    np.testing.assert_array_equal(r[act], expect[33, act])
    assert c.fill([1, 2, 3]) >= 1
    for i in (1, 2, 3):
        np.testing.assert_array_equal(c.row(i), expect[i])
    lay = np.array([3, 9, 12], dtype=np.int64)
    sub = k.subset_data(lay)
    from svmlab.kernels.cache import new_cache
    cl = new_cache(40, 1.0, row_len=3, dtype=dtype)
    np.testing.assert_array_equal(get_row_against(k.data, sub, cl, 6), expect[6, lay])


def test_precomputed_class_blocks_of_the_shared_store():
    X, _ = _data(n=30)
    G = _gram(X, gamma=0.5)
    k = Kernel(G, "precomputed")
    coff = np.array([0, 10, 18, 30])
    store = SharedRowStore(k, coff, cache_size=1.0)
    pair = np.r_[np.arange(10, 18), np.arange(18, 30)]  # classes 1 and 2
    pk = store.attach(Kernel(G[np.ix_(pair, pair)], "precomputed"), 1, 2)
    c = KernelCache(pk, cache_size=0.5)
    for i in (0, 3, 12, 19):
        np.testing.assert_array_equal(c.row(i), G[pair[i], pair])


def _full_kinds():
    X, _ = _data(n=50, d=6)
    Xs = sp.csr_matrix(np.where(np.abs(X) > 0.6, X, 0.0))
    Xb = sp.csr_matrix((np.random.default_rng(1).random((50, 70)) < 0.2).astype(float))
    return {"dense": X, "csr": Xs, "binary": Xb, "precomputed": _gram(X, gamma=0.2)}


@pytest.mark.parametrize("kind,kernel", [(k, f) for k in ("dense", "csr", "binary")
                                         for f in ("rbf", "linear", "poly")]
                         + [("precomputed", "rbf")])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_full_cache_rows_are_the_kernel_rows(kind, kernel, dtype):
    X = _full_kinds()[kind]
    if kind == "precomputed":
        k = Kernel(X, "precomputed")
    else:
        k = Kernel(X, kernel, gamma=0.2, degree=2, coef0=1.0)
        assert k.binary == (kind == "binary")
    n = k.n_samples
    c = KernelCache(k, cache_size=1.0, dtype=dtype, full=True)
    assert c.n_slots == n and c.misses == n and c.kernel_evaluations == n * n
    params = {"rbf": dict(gamma=0.2), "linear": {}, "poly": dict(gamma=0.2, degree=2, coef0=1.0)}
    ref = pairwise_kernels(X.toarray() if sp.issparse(X) else X, metric=kernel,
                           **params[kernel]) if kind != "precomputed" else X
    for i in range(n):
        r = get_row(k.data, c.data, i).copy()
        single = k.row(i, out=np.empty(n, dtype))
        if kind == "dense" or dtype == np.float32:
            tol = 1e-12 if dtype == np.float64 else 2e-6
            np.testing.assert_allclose(r, single, rtol=tol, atol=tol)
        else:
            np.testing.assert_array_equal(r, single)  # the rows' own values
        np.testing.assert_allclose(r, ref[i], rtol=1e-5 if dtype == np.float32 else 1e-10,
                                   atol=1e-6 if dtype == np.float32 else 1e-12)
    act = np.arange(0, n, 3, dtype=np.int64)
    get_row_subset(k.data, c.data, 4, act, len(act))
    c.fill(np.arange(n))
    assert c.misses == n and c.hits == n + 1  # every request after the fill hit
    np.testing.assert_array_equal(full_matrix(k, dtype), c.data.rows)


def test_full_cache_must_fit():
    X, _ = _data(n=200)
    k = Kernel(X, "rbf")
    assert full_kernel_fits(200, 200 * 200 * 8 / 2**20)
    assert not full_kernel_fits(200, 0.1)
    with pytest.raises(ValueError, match="more than cache_size"):
        KernelCache(k, cache_size=0.1, full=True)


def _dual(K, y, a):
    v = a * y
    return a.sum() - 0.5 * v @ K @ v


def _smo_run(X, y, kernel, C, selection, **kw):
    est = SMOClassifier(C=C, selection=selection, progress=False, cache_dtype="float64")
    est.cache_dtype_ = "float64"
    run = SMORun(est, X, y, kernel, C=C, tol=1e-4, eps=1e-6, cache_size=40, shrinking=True,
                 selection=selection, seed=1, max_iter=-1, progress=False, **kw)
    run.run()
    assert run.converged
    return run


@pytest.mark.parametrize("selection", ["wss2", "platt"])
def test_smo_on_a_precomputed_kernel_reaches_svc_precomputed(selection):
    X, y = _data(n=120, seed=3)
    G = _gram(X, gamma=0.4)
    C = 2.0
    run = _smo_run(X, y, Kernel(G, "precomputed"), C, selection)
    svc = SVC(kernel="precomputed", C=C, tol=1e-4).fit(G, y)
    a_ref = np.zeros(len(y))
    a_ref[svc.support_] = np.abs(svc.dual_coef_[0])
    W, W_ref = _dual(G, y, run.alpha), _dual(G, y, a_ref)
    assert W == pytest.approx(W_ref, rel=1e-5)
    assert np.all(run.alpha >= 0) and np.all(run.alpha <= C) and abs(run.alpha @ y) < 1e-9
    # the same decision values on the training set
    f = G @ (run.alpha * y) + run.intercept()
    np.testing.assert_allclose(f, svc.decision_function(G), atol=5e-3)


@pytest.mark.parametrize("selection", ["wss2", "platt"])
@pytest.mark.parametrize("kind", ["dense", "csr"])
def test_smo_on_a_full_kernel_cache_reaches_libsvm(selection, kind):
    X, y = _data(n=150, seed=5)
    if kind == "csr":
        X = sp.csr_matrix(np.where(np.abs(X) > 0.4, X, 0.0))
    C, gamma = 3.0, 0.3
    run = _smo_run(X, y, Kernel(X, "rbf", gamma=gamma), C, selection, full_kernel=True)
    assert run.cache_misses == len(y)  # the matrix, computed once
    K = pairwise_kernels(X, metric="rbf", gamma=gamma)
    svc = SVC(C=C, gamma=gamma, tol=1e-4).fit(X, y)
    dc = svc.dual_coef_
    a_ref = np.zeros(len(y))
    a_ref[svc.support_] = np.abs(dc.toarray() if sp.issparse(dc) else dc)[0]
    assert _dual(K, y, run.alpha) == pytest.approx(_dual(K, y, a_ref), rel=1e-5)
