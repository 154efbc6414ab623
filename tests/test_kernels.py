"""Kernels (dense and CSR) against scikit-learn's pairwise_kernels, and the
LRU kernel-row cache (eviction order, MB bound, hit/miss counts)."""

import numpy as np
import pytest
import scipy.sparse as sp

import reference as R
from svmlab.kernels.cache import KernelCache, n_slots_for
from svmlab.kernels import Kernel, kernel_value, resolve_gamma


def _X(rng, n=25, d=7, density=0.4):
    X = rng.normal(size=(n, d))
    X[rng.random((n, d)) > density] = 0.0
    return X


@pytest.mark.parametrize("kernel", ["linear", "rbf", "poly", "sigmoid"])
@pytest.mark.parametrize("sparse", [False, True])
def test_rows_values_matrix_match_sklearn(kernel, sparse, rng):
    X = _X(rng)
    Xin = sp.csr_matrix(X) if sparse else X
    k = Kernel(Xin, kernel, gamma=0.3, degree=3, coef0=0.7)
    K = R.gram(X, kernel, 0.3, 3, 0.7)
    for i in (0, 3, 24):
        np.testing.assert_allclose(k.row(i), K[i], rtol=1e-12, atol=1e-12)
        for j in (0, 5, 24):
            assert kernel_value(k.data, i, j) == pytest.approx(K[i, j], rel=1e-12, abs=1e-12)
    np.testing.assert_allclose(k.matrix(), K, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(k.diag(), np.diag(K), rtol=1e-12, atol=1e-12)
    Z = _X(rng, n=6)
    np.testing.assert_allclose(k.matrix(rows=[1, 2], Z=sp.csr_matrix(Z) if sparse else Z),
                               R.gram(X[[1, 2]], kernel, 0.3, 3, 0.7, Z=Z), rtol=1e-12,
                               atol=1e-12)


def test_gamma_scale_auto_like_svc(rng):
    X = _X(rng)
    assert resolve_gamma("auto", X) == 1.0 / X.shape[1]
    assert resolve_gamma("scale", X) == pytest.approx(1.0 / (X.shape[1] * X.var()))
    assert resolve_gamma("scale", sp.csr_matrix(X)) == pytest.approx(
        1.0 / (X.shape[1] * X.var()))


def test_unknown_kernel():
    with pytest.raises(ValueError, match="Unknown kernel"):
        Kernel(np.eye(3), "cosine")


def test_cache_lru_eviction_and_counts(rng):
    X = _X(rng, n=50)
    k = Kernel(X, "rbf", gamma=0.5)
    # 3 rows of 50 float64 = 1200 bytes
    c = KernelCache(k, cache_size=3 * 50 * 8 / 2**20)
    assert c.n_slots == 3
    K = R.gram(X, "rbf", 0.5)
    for i in (0, 1, 2):
        np.testing.assert_allclose(c.row(i), K[i])
    assert (c.hits, c.misses) == (0, 3)
    c.row(0)  # 0 becomes most recent; LRU order now 1, 2, 0
    assert (c.hits, c.misses) == (1, 3)
    c.row(7)  # evicts 1 (least recently used)
    assert 1 not in c and 0 in c and 2 in c and 7 in c
    c.row(8)  # evicts 2
    assert 2 not in c and {0, 7, 8} == {i for i in range(50) if i in c}
    np.testing.assert_allclose(c.row(0), K[0])
    np.testing.assert_allclose(c.row(8), K[8])
    assert (c.hits, c.misses) == (3, 5)
    assert c.kernel_evaluations == 5 * 50


def test_cache_size_bound_in_mb():
    n = 1000
    assert n_slots_for(n, 1.0) == (1 << 20) // (8 * n)
    assert n_slots_for(n, 1e-9) == 2  # always room for the two rows of a step
    assert n_slots_for(10, 100.0) == 10  # never more rows than points
    k = Kernel(np.random.default_rng(0).normal(size=(n, 3)), "rbf", gamma=1.0)
    c = KernelCache(k, cache_size=2.0)
    assert c.data.rows.nbytes <= 2.0 * (1 << 20)
    for i in range(n):
        c.row(i)
    assert sum(i in c for i in range(n)) == c.n_slots


def test_cache_random_access_matches_model(rng):
    """LRU behaviour against a tiny Python model over random accesses."""
    X = _X(rng, n=30)
    k = Kernel(sp.csr_matrix(X), "poly", gamma=0.2, degree=2, coef0=1.0)
    c = KernelCache(k, cache_size=4 * 30 * 8 / 2**20)
    K = R.gram(X, "poly", 0.2, 2, 1.0)
    model = []  # most recent last
    hits = misses = 0
    for i in rng.integers(0, 30, 300):
        i = int(i)
        if i in model:
            hits += 1
            model.remove(i)
        else:
            misses += 1
            if len(model) == 4:
                model.pop(0)
        model.append(i)
        np.testing.assert_allclose(c.row(i), K[i], rtol=1e-12)
        assert set(model) == {j for j in range(30) if j in c}
    assert (c.hits, c.misses) == (hits, misses)


def test_subset_rows_and_reset(rng):
    from svmlab.kernels.cache import cache_reset, get_row_subset

    X = _X(rng, n=40)
    for Xin in (X, sp.csr_matrix(X)):
        k = Kernel(Xin, "rbf", gamma=0.4)
        c = KernelCache(k, cache_size=3 * 40 * 8 / 2**20)
        K = R.gram(X, "rbf", 0.4)
        idx = np.array([3, 7, 8, 20, 39, 0], dtype=np.int64)
        r = get_row_subset(k.data, c.data, 5, idx, 4)
        np.testing.assert_allclose(r[idx[:4]], K[5, idx[:4]], rtol=1e-12)
        assert 5 in c and (c.hits, c.misses) == (0, 1)
        get_row_subset(k.data, c.data, 5, idx, 4)
        assert (c.hits, c.misses) == (1, 1)
        cache_reset(c.data)
        assert not any(i in c for i in range(40)) and (c.hits, c.misses) == (1, 1)
        np.testing.assert_allclose(c.row(5), K[5], rtol=1e-12)  # recomputed in full
        assert c.misses == 2


def test_row_dot_is_the_plain_inner_product(rng):
    """kernels.row_dot (the one sparse/dense dot, also Platt's loop's _xx)
    against a sum written out over the dense rows, with empty rows and rows
    that share no feature; CSR and dense give bit-identical values (both sum
    the shared features in increasing index)."""
    from svmlab.smo import _platt
    from svmlab.kernels import row_dot

    X = _X(rng, n=12, d=9, density=0.35)
    X[3] = 0.0                                  # an empty row
    X[4] = 0.0
    X[4, 0] = 2.0                               # shares features only with some rows
    A = sp.csr_matrix(X)
    A.sort_indices()
    for i in range(12):
        for j in range(12):
            ref = 0.0
            for k in range(9):
                if X[i, k] != 0.0 and X[j, k] != 0.0:
                    ref += X[i, k] * X[j, k]
            got_sp = row_dot(True, X, A.indptr, A.indices, A.data, i, j)
            got_dn = row_dot(False, X, A.indptr, A.indices, A.data, i, j)
            assert got_sp == ref
            assert got_dn == pytest.approx(ref, rel=1e-15, abs=1e-15)
    assert _platt._xx is row_dot
