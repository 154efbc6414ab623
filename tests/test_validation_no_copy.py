"""check_classification / check_binary: labels mapped by a binary search on
the sorted classes (the same mapping as numpy's unique with
return_inverse), and a CSR input that is already canonical (sorted, no
duplicates, float64 values, int32 indices) used without a copy -- never
modified, whatever the fit does with it -- while any other CSR input is
canonicalised in a copy (svmlab._validation.canonical_csr32)."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from svmlab._validation import canonical_csr32, check_binary, check_classification


def _snapshot(X):
    return {name: (a.copy(), a.dtype, a.flags.writeable, a.flags.c_contiguous,
                   a.__array_interface__["data"][0])
            for name, a in (("data", X.data), ("indices", X.indices), ("indptr", X.indptr))}


def _same(X, snap):
    for name, (vals, dtype, writeable, contiguous, addr) in snap.items():
        a = getattr(X, name)
        assert a.dtype == dtype and a.flags.writeable == writeable
        assert a.flags.c_contiguous == contiguous
        assert a.__array_interface__["data"][0] == addr, f"{name} replaced"
        np.testing.assert_array_equal(a, vals, err_msg=name)


def _canonical(rng, n=80, d=30, density=0.2):
    X = sp.random(n, d, density=density, format="csr", random_state=rng, dtype=np.float64)
    X.indices = X.indices.astype(np.int32)
    X.indptr = X.indptr.astype(np.int32)
    X.sort_indices()
    return X


@pytest.mark.parametrize("labels", [np.array([3, 7]), np.array([-1.0, 1.0]),
                                    np.array(["neg", "pos"]), np.array([0, 2, 5, 9])])
def test_label_mapping_matches_unique_inverse(labels):
    rng = np.random.default_rng(0)
    y = labels[rng.integers(0, len(labels), 200)]
    X = rng.normal(size=(200, 3))
    _, y_idx, classes = check_classification(X, y)
    ref_classes, ref_idx = np.unique(y, return_inverse=True)
    np.testing.assert_array_equal(classes, ref_classes)
    np.testing.assert_array_equal(y_idx, ref_idx)
    assert y_idx.dtype == np.int64
    if len(labels) == 2:
        _, y_pm, _ = check_binary(X, y)
        np.testing.assert_array_equal(y_pm, np.where(y == ref_classes[1], 1.0, -1.0))


def test_canonical_csr_is_shared_not_copied_and_not_modified():
    rng = np.random.default_rng(1)
    X = _canonical(rng)
    y = np.where(rng.random(X.shape[0]) < 0.5, 1, -1)
    snap = _snapshot(X)
    attrs = dict(vars(X))
    Xv, y_pm, classes = check_binary(X, y)
    assert Xv is not X  # a matrix of its own (nothing set on the user's)
    for name in ("data", "indices", "indptr"):
        assert getattr(Xv, name) is getattr(X, name) or np.shares_memory(
            getattr(Xv, name), getattr(X, name)), f"{name} was copied"
    assert Xv.indices.dtype == np.int32 and Xv.indptr.dtype == np.int32
    _same(X, snap)
    assert set(vars(X)) == set(attrs)  # no cached flag added to the user's matrix


@pytest.mark.parametrize("fit", ["ocas", "joachims", "smo", "irwls"])
def test_fits_leave_the_users_canonical_csr_untouched(fit):
    """The solvers read the shared arrays only: every array of the user's
    matrix (values, flags, address) is as it was after a fit."""
    from svmlab import IRWLSClassifier, SMOClassifier
    from svmlab.cutting_plane import CuttingPlaneClassifier

    rng = np.random.default_rng(2)
    X = _canonical(rng, n=150, d=20, density=0.3)
    # unsorted-looking values: mixed signs, so no solver's binary shortcut applies
    X.data[:] = rng.normal(size=X.nnz)
    y = np.where(np.asarray(X.sum(axis=1)).ravel() + 0.3 * rng.normal(size=150) > 0, 1, -1)
    snap = _snapshot(X)
    est = {"ocas": lambda: CuttingPlaneClassifier(method="ocas", C=10.0, progress=False),
           "joachims": lambda: CuttingPlaneClassifier(method="joachims", C=10.0, progress=False),
           "smo": lambda: SMOClassifier(C=1.0, kernel="rbf", progress=False),
           "irwls": lambda: IRWLSClassifier(C=1.0, kernel="rbf", progress=False)}[fit]()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
        est.predict(X)
    _same(X, snap)


def _non_canonical_cases(rng):
    base = _canonical(rng)
    # unsorted indices within rows
    un = base.copy()
    for i in range(un.shape[0]):
        s, e = un.indptr[i], un.indptr[i + 1]
        un.indices[s:e] = un.indices[s:e][::-1].copy()
        un.data[s:e] = un.data[s:e][::-1].copy()
    un.has_sorted_indices = False
    # duplicates: row 0 holds column 0 twice
    dup = sp.csr_matrix((np.array([1.0, 2.0, 3.0]), np.array([0, 0, 4], np.int32),
                         np.array([0, 3, 3], np.int32)), shape=(2, 6))
    # int64 indices, float32 values
    i64 = base.copy()
    i64.indices = i64.indices.astype(np.int64)
    i64.indptr = i64.indptr.astype(np.int64)
    f32 = base.astype(np.float32)
    return {"unsorted": un, "duplicates": dup, "int64": i64, "float32": f32}


@pytest.mark.parametrize("case", ["unsorted", "duplicates", "int64", "float32"])
def test_non_canonical_csr_is_canonicalised_in_a_copy(case):
    rng = np.random.default_rng(3)
    X = _non_canonical_cases(rng)[case]
    assert canonical_csr32(X) is None
    snap = _snapshot(X)
    dense = X.toarray()  # duplicates summed
    y = np.arange(X.shape[0]) % 2
    Xv, _, _ = check_binary(X, y)
    _same(X, snap)
    for name in ("data", "indices", "indptr"):
        assert not np.shares_memory(getattr(Xv, name), getattr(X, name))
    assert Xv.indices.dtype == np.int32 and Xv.indptr.dtype == np.int32
    assert Xv.data.dtype == np.float64
    # canonical: sorted, no duplicates (checked on the arrays, not the flag)
    for i in range(Xv.shape[0]):
        row = Xv.indices[Xv.indptr[i]:Xv.indptr[i + 1]]
        assert np.all(np.diff(row) > 0)
    np.testing.assert_allclose(Xv.toarray(), dense, rtol=1e-7 if case == "float32" else 0)


def test_stale_canonical_flag_is_not_trusted():
    """A caller who reversed a row's indices in place after scipy cached
    has_canonical_format = True still gets a sorted copy."""
    rng = np.random.default_rng(4)
    X = _canonical(rng)
    assert X.has_canonical_format  # cached True
    s, e = X.indptr[0], X.indptr[1]
    assert e - s >= 2
    X.indices[s:e] = X.indices[s:e][::-1].copy()
    X.data[s:e] = X.data[s:e][::-1].copy()
    assert canonical_csr32(X) is None
    Xv, _, _ = check_binary(X, np.arange(X.shape[0]) % 2)
    assert np.all(np.diff(Xv.indices[Xv.indptr[0]:Xv.indptr[1]]) > 0)
    np.testing.assert_array_equal(Xv.toarray(), X.toarray())
