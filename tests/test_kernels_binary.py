"""The bit-packed path for binary inputs (svmlab.kernels._bits): packing against a
brute-force bit layout, popcount against Python's, and every kernel row,
subset row and value equal -- bit for bit -- to the general dense/CSR path
and to scikit-learn's pairwise kernels."""

import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

import reference as R
from svmlab.kernels._bits import is_binary, pack_rows, popcount
from svmlab.kernels.cache import KernelCache, get_row_subset
from svmlab.kernels import Kernel, kernel_value


def _binary(rng, n=60, d=150, density=0.08):
    X = (rng.random((n, d)) < density).astype(float)
    X[3] = 0.0  # an empty row
    X[7] = X[5]  # a duplicate
    return X


def test_popcount_matches_python(rng):
    from numba import njit

    @njit
    def pc(a):
        out = np.empty(a.shape[0], np.int64)
        for k in range(a.shape[0]):
            out[k] = popcount(a[k])
        return out

    words = rng.integers(0, 2**63, 200, dtype=np.int64).astype(np.uint64)
    words[:4] = [0, 1, np.uint64(2**64 - 1), np.uint64(2**63)]
    np.testing.assert_array_equal(pc(words), [bin(int(w)).count("1") for w in words])


@pytest.mark.parametrize("d", [1, 63, 64, 65, 130, 300])
def test_pack_rows_brute_force(rng, d):
    X = _binary(rng, n=20, d=d, density=0.3)
    for Xin in (X, sp.csr_matrix(X)):
        bits = pack_rows(Xin)
        assert bits.shape == (20, max(1, (d + 63) // 64)) and bits.dtype == np.uint64
        for i in range(20):
            for k in range(d):
                assert bool((int(bits[i, k // 64]) >> (k % 64)) & 1) == bool(X[i, k])


def test_is_binary():
    assert is_binary(np.array([[0.0, 1.0], [1.0, 1.0]]))
    assert not is_binary(np.array([[0.0, 2.0], [1.0, 1.0]]))
    assert is_binary(sp.csr_matrix(np.array([[0.0, 1.0], [1.0, 0.0]])))
    assert not is_binary(sp.csr_matrix(np.array([[0.0, 0.5], [1.0, 0.0]])))
    with pytest.raises(ValueError, match="binary=True"):
        Kernel(np.array([[0.0, 0.5], [1.0, 0.0]]), "rbf", gamma=1.0, binary=True)
    with pytest.raises(ValueError, match="binary must be"):
        Kernel(np.eye(3), "rbf", gamma=1.0, binary="yes")


@pytest.mark.parametrize("kernel", ["linear", "rbf", "poly", "sigmoid"])
@pytest.mark.parametrize("sparse", [False, True])
def test_binary_rows_equal_general_path(rng, kernel, sparse):
    X = _binary(rng)
    Xin = sp.csr_matrix(X) if sparse else X
    kw = dict(gamma=0.07, degree=3, coef0=0.4)
    kb = Kernel(Xin, kernel, binary="auto", **kw)
    kg = Kernel(Xin, kernel, binary=False, **kw)
    assert kb.binary and not kg.binary
    K = R.gram(X, kernel, 0.07, 3, 0.4)
    n = X.shape[0]
    for i in range(n):
        rb = kb.row(i)
        np.testing.assert_array_equal(rb, kg.row(i))  # bit for bit
        np.testing.assert_allclose(rb, K[i], rtol=1e-12, atol=1e-12)
        for j in (0, 3, 5, 7, n - 1):
            assert kernel_value(kb.data, i, j) == kernel_value(kg.data, i, j)
    # subset rows: small subsets gather per entry, large ones stream the row
    for m in (3, n):
        idx = rng.permutation(n).astype(np.int64)
        cb = KernelCache(kb, cache_size=1.0)
        cg = KernelCache(kg, cache_size=1.0)
        for i in (0, 3, 11):
            rb = get_row_subset(kb.data, cb.data, i, idx, m)
            rg = get_row_subset(kg.data, cg.data, i, idx, m)
            np.testing.assert_array_equal(rb[idx[:m]], rg[idx[:m]])


def test_auto_skips_wide_sparse_binary(rng):
    # 5000 features in 79 words against ~3 nonzeros per row: the gather wins
    X = sp.random(40, 5000, density=0.0006, random_state=0, format="csr")
    X.data[:] = 1.0
    assert not Kernel(X, "rbf", gamma=0.1).binary
    assert Kernel(X, "rbf", gamma=0.1, binary=True).binary


def test_binary_rows_without_jit(tmp_path):
    """The popcount fallback of NUMBA_DISABLE_JIT gives the same rows."""
    code = (
        "import numpy as np, sys\n"
        "from svmlab.kernels import Kernel\n"
        "rng = np.random.default_rng(1)\n"
        "X = (rng.random((30, 140)) < 0.1).astype(float)\n"
        "out = [Kernel(X, k, gamma=0.1, coef0=0.3).row(i) for k in ('rbf', 'linear') "
        "for i in range(30)]\n"
        "np.save(sys.argv[1], np.array(out))\n"
    )
    res = {}
    for jit in ("0", "1"):
        f = tmp_path / f"r{jit}.npy"
        subprocess.run([sys.executable, "-c", code, str(f)], check=True, timeout=300,
                       env=dict(os.environ, NUMBA_DISABLE_JIT=jit))
        res[jit] = np.load(f)
    np.testing.assert_array_equal(res["0"], res["1"])
