"""``Kernel(qfloat=True)`` (``KernelData.qround``): LIBSVM's ``Qfloat``
rounding of the float64 kernel values (docs/decisions/36a01).

Every path that writes float64 kernel values -- full rows, rows against a
subset, subset rows, the one-vs-one store's class-block rows, blocks (row
by row and GEMM), the full matrix and single values -- gives, with the
rounding, the unrounded kernel's value rounded to float32 (bit for bit: the
same float64 arithmetic, then one rounding), for dense, CSR, bit-packed and
precomputed input; the diagonal stays unrounded (LIBSVM's ``QD``); and the
rounded values are the float32 neighbours of scikit-learn's kernel
matrix (independent reference).  The drop-in SVC asks for the rounding,
the educational SMOClassifier does not."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics.pairwise import pairwise_kernels

import svmlab
from svmlab.kernels import Kernel
from svmlab.kernels import _blocks as B
from svmlab.kernels import _rows as R
from svmlab.kernels.cache import full_cache
from svmlab.smo import SMOClassifier


def _data(kind, rng):
    X = rng.normal(size=(23, 5))
    if kind == "sparse":
        X[rng.random(X.shape) < 0.5] = 0.0
        return sp.csr_matrix(X)
    if kind == "binary":
        return (rng.random((23, 70)) < 0.3).astype(np.float64)
    if kind == "zeros":  # dense with many zeros: the feature-major rows
        X[rng.random(X.shape) < 0.6] = 0.0
    return X


KINDS = ["dense", "zeros", "sparse", "binary", "precomputed"]


def _pair(kind, kernel, seed=0):
    rng = np.random.default_rng(seed)
    if kind == "precomputed":
        X = rng.normal(size=(23, 5))
        G = pairwise_kernels(X, metric="rbf", gamma=0.3)
        return Kernel(G, "precomputed"), Kernel(G, "precomputed", qfloat=True), G
    X = _data(kind, rng)
    kw = dict(gamma=0.3, coef0=0.5, degree=3)
    exact = Kernel(X, kernel, **kw)
    ref = pairwise_kernels(X, metric=kernel, **({"gamma": 0.3} if kernel == "rbf" else
                                               {"gamma": 0.3, "coef0": 0.5, "degree": 3}
                                               if kernel == "poly" else {}))
    return exact, Kernel(X, kernel, qfloat=True, **kw), ref


def _rounded(a):
    return np.asarray(a, np.float64).astype(np.float32).astype(np.float64)


CASES = [(k, f) for k in KINDS if k != "precomputed" for f in ("rbf", "poly", "linear")] \
    + [("precomputed", "rbf")]  # one Gram matrix (of an rbf kernel)


@pytest.mark.parametrize("kind, kernel", CASES)
def test_every_path_rounds_the_float64_values(kind, kernel):
    exact, q, ref = _pair(kind, kernel)
    assert q.qfloat and not exact.qfloat
    if kind == "binary":
        assert q.binary
    n = exact.n_samples
    K = np.array([exact.row(i) for i in range(n)])
    Kq = np.array([q.row(i) for i in range(n)])
    assert np.array_equal(Kq, _rounded(K))
    # the rounding did something (a linear kernel of 0/1 data has integer
    # values, exact in float32)
    assert np.array_equal(Kq, K) == (kind == "binary" and kernel == "linear")
    # the float32 neighbour of an independent computation (one float32 ulp)
    assert np.allclose(Kq, ref, rtol=2 ** -23, atol=1e-30)
    rows = np.array([3, 0, 7, 3], np.int64)
    cols = np.array([1, 5, 2, 9, 22], np.int64)
    for i in (0, 11, 22):
        # single values
        assert all(R.kernel_value(q.data, i, j) == Kq[i, j] for j in range(n))
        # subset rows (shrinking solvers)
        out = np.full(n, -7.0)
        R.kernel_row_subset(q.data, i, cols, len(cols), out)
        assert np.array_equal(out[cols], Kq[i, cols])
        assert np.all(out[np.setdiff1d(np.arange(n), cols)] == -7.0)
        # rows against a subset of the training set
        sub = q.subset_data(cols)
        out = np.empty(len(cols))
        R.kernel_row_against(q.data, i, sub, out)
        assert np.array_equal(out, Kq[i, cols])
        # class-block rows (the one-vs-one store)
        out = np.empty(9)
        R.kernel_row_range(q.data, i, 4, 13, out)
        assert np.array_equal(out, Kq[i, 4:13])
    # blocks: row by row, against columns, and the GEMM blocks
    assert np.array_equal(q.block(rows), Kq[rows])
    assert np.array_equal(q.block(rows, cols), Kq[np.ix_(rows, cols)])
    out = np.empty((len(rows), n))
    B.kernel_block_gemm(q.data, rows, out)
    assert np.array_equal(out, _rounded(out)) and np.allclose(out, Kq[rows], rtol=2 ** -22)
    out = np.empty((len(rows), len(cols)))
    B.kernel_block_cols_gemm(q.data, rows, cols, out)
    assert np.array_equal(out, _rounded(out))
    assert np.allclose(out, Kq[np.ix_(rows, cols)], rtol=2 ** -22)
    # the full kernel matrix of a cache that holds every row
    full = full_cache(q).rows
    assert np.array_equal(full, _rounded(full)) and np.allclose(full, Kq, rtol=2 ** -22)
    # the diagonal stays float64 (LIBSVM's QD)
    assert np.array_equal(q.diag(), exact.diag())


def test_float32_rows_are_unchanged():
    """A float32 row is rounded once anyway: the flag changes nothing there."""
    exact, q, _ = _pair("dense", "rbf")
    exact.ensure_float32()
    q.ensure_float32()
    for i in range(exact.n_samples):
        a = np.empty(exact.n_samples, np.float32)
        b = np.empty(exact.n_samples, np.float32)
        exact.row(i, a)
        q.row(i, b)
        assert np.array_equal(a, b)


def test_drop_in_rounds_educational_estimator_does_not():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 3))
    y = np.repeat([0, 1, 2], 20)
    seen = []
    real = Kernel.__init__

    def spy(self, *args, qfloat=False, **kw):
        seen.append(qfloat)
        real(self, *args, qfloat=qfloat, **kw)

    mp = pytest.MonkeyPatch()
    mp.setattr(Kernel, "__init__", spy)
    try:
        svmlab.SVC(C=10.0).fit(X, y)
        drop_in = list(seen)
        seen.clear()
        SMOClassifier(C=10.0).fit(X, y)
        edu = list(seen)
    finally:
        mp.undo()
    assert drop_in and drop_in[0] is True
    assert edu and not any(edu)
