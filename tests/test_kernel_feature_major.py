"""Feature-major kernel rows of dense data with many zeros (decision
32m01): the kept transpose, the products over a row's nonzeros, and the
sums over the nonzeros of the subset rows, against plain references
(the sequential float64 sum in feature order, bit for bit, and the Gram
matrix of :mod:`reference`), and an SVC fit on such data against LIBSVM."""

import numpy as np
import pytest

import reference as R
from svmlab.kernels import Kernel
from svmlab.kernels._rows import (TRANSPOSE_MAX_DENSITY, kernel_row_range,
                                  kernel_row_subset, transposed_ready)


def _sparse_dense(rng, n=40, d=23, density=0.2):
    """Dense data with ~``density`` nonzeros (negative values too), and one
    row with every entry nonzero (it takes the GEMV)."""
    X = rng.normal(size=(n, d))
    X[rng.random((n, d)) > density] = 0.0
    X[7] = rng.normal(size=d) + 3.0
    X[9] = 0.0  # an all-zero row
    return X


def _seq_dot(a, b):
    s = 0.0
    for k in range(a.shape[0]):
        s += float(a[k]) * float(b[k])
    return s


def test_transpose_kept_only_for_data_with_many_zeros(rng):
    Xd = rng.normal(size=(30, 8))
    assert Kernel(Xd, "rbf", gamma=0.1).data.denseT.shape == (0, 0)
    X = _sparse_dense(rng)
    assert np.count_nonzero(X) <= TRANSPOSE_MAX_DENSITY * X.size
    k = Kernel(X, "rbf", gamma=0.1)
    assert k.data.denseT.shape == (X.shape[1], X.shape[0])
    assert k.data.tstate[0] == 0  # nothing filled before a row is computed
    k.row(3)
    assert k.data.tstate[0] == 1
    np.testing.assert_array_equal(k.data.denseT, X.T)
    # bit-packed binary data and sparse input keep none
    Xb = (rng.random((30, 70)) < 0.1).astype(float)
    assert Kernel(Xb, "rbf", gamma=0.1).data.denseT.shape == (0, 0)


def test_no_transpose_above_the_byte_cap(rng, monkeypatch):
    """Data whose transpose would exceed TRANSPOSE_MAX_BYTES keep none (the
    memory would double) and give the same rows through the GEMV."""
    from svmlab.kernels import _rows

    X = _sparse_dense(rng)
    with_t = Kernel(X, "rbf", gamma=0.1)
    monkeypatch.setattr(_rows, "TRANSPOSE_MAX_BYTES", 8 * X.size - 8)
    assert not _rows.keeps_transpose(*X.shape, np.count_nonzero(X))
    k = Kernel(X, "rbf", gamma=0.1)
    assert k.data.denseT.shape == (0, 0)
    for i in (0, 3, 9):
        np.testing.assert_allclose(k.row(i), with_t.row(i), rtol=1e-12, atol=1e-12)
    monkeypatch.setattr(_rows, "TRANSPOSE_MAX_BYTES", 8 * X.size)
    assert Kernel(X, "rbf", gamma=0.1).data.denseT.shape == (X.shape[1], X.shape[0])


@pytest.mark.parametrize("kernel", ["linear", "rbf", "poly", "sigmoid"])
def test_rows_through_the_transpose(kernel, rng):
    X = _sparse_dense(rng)
    k = Kernel(X, kernel, gamma=0.3, degree=3, coef0=0.7)
    assert transposed_ready(k.data)
    K = R.gram(X, kernel, 0.3, 3, 0.7)
    for i in range(X.shape[0]):  # rows 7 (every entry nonzero) and 9 (none) included
        np.testing.assert_allclose(k.row(i), K[i], rtol=1e-12, atol=1e-12)
    # the inner products: the sequential feature-order sums, bit for bit
    lin = Kernel(X, "linear")
    for i in (0, 3, 9, 20):
        want = np.array([_seq_dot(X[i], X[j]) for j in range(X.shape[0])])
        np.testing.assert_array_equal(lin.row(i), want)


def test_range_rows_are_the_full_rows_entries(rng):
    X = _sparse_dense(rng)
    k = Kernel(X, "rbf", gamma=0.2)
    K = R.gram(X, "rbf", 0.2, 3, 0.0)
    for g in (0, 7, 9, 31):
        full = k.row(g)
        for lo, hi in ((0, 40), (5, 17), (33, 40)):
            out = np.empty(hi - lo)
            kernel_row_range(k.data, g, lo, hi, out)
            if g == 7:  # every entry nonzero: GEMVs over different rows
                np.testing.assert_allclose(out, full[lo:hi], rtol=1e-14, atol=0)
            else:  # through the transpose: the same sums, bit for bit
                np.testing.assert_array_equal(out, full[lo:hi])
            np.testing.assert_allclose(out, K[g, lo:hi], rtol=1e-12, atol=1e-12)
    # a float32 row takes the other path: still the same values, rounded
    out32 = np.empty(12, np.float32)
    kernel_row_range(k.data, 4, 10, 22, out32)
    np.testing.assert_allclose(out32, K[4, 10:22], rtol=1e-6)


def test_subset_rows_sum_over_the_nonzeros(rng):
    X = _sparse_dense(rng, n=37)
    k = Kernel(X, "linear")
    idx = np.array([36, 0, 5, 7, 9, 12, 2], dtype=np.int64)
    for i in (1, 7, 9, 30):
        out = np.full(X.shape[0], -5.0)
        kernel_row_subset(k.data, i, idx, len(idx), out)
        want = np.array([_seq_dot(X[i], X[j]) for j in idx])
        np.testing.assert_array_equal(out[idx], want)
        rest = np.setdiff1d(np.arange(X.shape[0]), idx)
        assert np.all(out[rest] == -5.0)
    # and they agree with the full row's entries (the same sums)
    full = k.row(30)
    out = np.empty(X.shape[0])
    kernel_row_subset(k.data, 30, idx, len(idx), out)
    np.testing.assert_array_equal(out[idx], full[idx])


def test_subset_data_gets_its_own_transpose(rng):
    X = _sparse_dense(rng)
    k = Kernel(X, "rbf", gamma=0.2)
    k.row(0)
    sub = k.subset_data([4, 1, 30])
    assert sub.denseT.shape == (X.shape[1], 3) and sub.tstate[0] == 0
    assert transposed_ready(sub)
    np.testing.assert_array_equal(sub.denseT, X[[4, 1, 30]].T)


def test_svc_on_dense_data_with_many_zeros_matches_libsvm(rng):
    """A 4-class fit (one-vs-one, the shared store's class blocks through
    the transpose) against scikit-learn's SVC: dual objectives per pair
    within 1e-6 relative, the same predictions."""
    from sklearn.svm import SVC as SkSVC

    from svmlab import SVC

    n, d = 600, 60
    y = rng.integers(0, 4, size=n)
    centers = rng.random((4, d)) * (rng.random((4, d)) < 0.3)
    X = centers[y] + 0.3 * rng.random((n, d))
    X[rng.random((n, d)) < 0.75] = 0.0
    ours = SVC(tol=1e-3).fit(X, y)
    ref = SkSVC(tol=1e-3).fit(X, y)
    assert ours.solver_ == "wss2"
    gamma = 1.0 / (d * X.var())
    K = R.gram(X, "rbf", gamma, 3, 0.0)

    def duals(m):
        out = []
        for a in range(4):
            for b in range(a + 1, 4):
                coef = np.zeros(n)
                sv = m.support_
                ys = y[sv]
                c = m.dual_coef_
                # LIBSVM's layout: the coefficient of an SV of class a in
                # pair (a, b) is in row b - 1, of class b in row a
                for p, s in enumerate(sv):
                    if ys[p] == a:
                        coef[s] = c[b - 1, p]
                    elif ys[p] == b:
                        coef[s] = c[a, p]
                out.append(np.sum(np.abs(coef)) - 0.5 * coef @ K @ coef)
        return np.array(out)

    np.testing.assert_allclose(duals(ours), duals(ref), rtol=1e-6)
    assert np.mean(ours.predict(X) == ref.predict(X)) > 0.99


def test_pickle_and_copy_leave_the_transpose_out(rng):
    import copy
    import pickle

    X = _sparse_dense(rng, n=300, d=50)
    k = Kernel(X, "rbf", gamma=0.2)
    r = k.row(5).copy()
    assert k.data.tstate[0] == 1
    blob = pickle.dumps(k)
    assert len(blob) < 1.3 * X.nbytes  # the data once, not data and transpose
    for k2 in (pickle.loads(blob), copy.copy(k)):
        assert k2.data.denseT.shape == (50, 300) and k2.data.tstate[0] == 0
        assert k2.data.denseT is not k.data.denseT
        np.testing.assert_array_equal(k2.row(5), r)
        np.testing.assert_array_equal(k2.data.denseT, X.T)
    assert k.data.tstate[0] == 1  # the original keeps its filled transpose
