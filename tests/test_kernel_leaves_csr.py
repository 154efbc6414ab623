"""``Kernel`` on a user's CSR matrix never changes it: a non-canonical one
(unsorted or duplicated column indices, int64 indices, float32 values) is
copied before the kernel sorts it; the kernel's values are those of the
canonical matrix."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics.pairwise import rbf_kernel

from svmlab.kernels import Kernel


def _csr(data, indices, indptr, idx_dtype=np.int32, dtype=np.float64):
    return sp.csr_matrix((np.array(data, dtype), np.array(indices, idx_dtype),
                          np.array(indptr, idx_dtype)), shape=(3, 3))


CASES = {
    "unsorted": _csr([1.0, 2.0, 3.0, 4.0], [2, 0, 1, 0], [0, 2, 3, 4]),
    "duplicated": _csr([1.0, 2.0, 3.0, 4.0], [0, 0, 1, 2], [0, 2, 3, 4]),
    "int64": _csr([1.0, 2.0, 3.0], [0, 1, 2], [0, 1, 2, 3], idx_dtype=np.int64),
    "float32": _csr([1.0, 2.0, 3.0], [0, 1, 2], [0, 1, 2, 3], dtype=np.float32),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_kernel_leaves_the_users_csr_as_it_was(name):
    X = CASES[name]
    before = [a.copy() for a in (X.data, X.indices, X.indptr)]
    dtypes = [a.dtype for a in (X.data, X.indices, X.indptr)]
    k = Kernel(X, "rbf", gamma=0.5)
    after = [X.data, X.indices, X.indptr]
    for b, a, dt in zip(before, after, dtypes):
        assert a.dtype == dt
        np.testing.assert_array_equal(a, b)
    Xc = X.astype(np.float64).tocsr(copy=True)
    Xc.sum_duplicates()
    want = rbf_kernel(Xc, Xc, gamma=0.5)
    got = np.vstack([k.row(i) for i in range(3)])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
