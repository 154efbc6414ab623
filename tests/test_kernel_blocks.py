"""Kernel blocks (svmlab.kernels._blocks) against single kernel rows.

float64 blocks must equal the single rows bit for bit (the float64 cache
promises exactly the iterates of the single-row code).  float32 blocks are
checked against the float64 rows with a tolerance derived below, not
guessed.

The float32 tolerance
---------------------
With u = 2**-24 (float32's unit roundoff), a dense float32 block rounds every
input to float32 (relative error <= u each, so <= 2u on each product) and sums
the d products of an inner product in float32 in some order (GEMM's), which
adds at most d u relative to ``sum_k |x_k z_k|`` (Higham, *Accuracy and
Stability*, eq. 3.5: ``|fl(x.z) - x.z| <= gamma_n sum |x_k z_k|``,
``gamma_n = n u / (1 - n u)``).  So the inner product is off by at most
``D = gamma_{d+2} * sum_k |x_k z_k|``.  The transform runs in float64 (its
own error ~1e-16 is negligible) and a kernel value then moves by at most
``L * D`` where L bounds ``|dK/d<x,z>|`` over ``[dot - D, dot + D]``
(rbf: ``2 gamma K``; poly: ``gamma degree |gamma t + coef0|**(degree-1)``;
sigmoid: at most gamma; linear: 1), and the stored value is rounded once
more to float32 (``u |K|``).  Sparse and binary float32 blocks compute the
float64 value and round it once: ``|K32 - K64| <= u |K64|``.

On top of this rigorous bound, the data here (values in [0, 1], d <= 40)
keep every float32 block within 1e-6 of the block's largest value, the
"float32 rounding" of the issue.
"""

import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

from svmlab.kernels import (Kernel, kernel_block, kernel_block_cols, kernel_block_cols_gemm,
                            kernel_block_gemm, kernel_row)
from svmlab.kernels._rows import kernel_row_against

U32 = 2.0 ** -24
KERNEL_PARAMS = dict(gamma=0.1, coef0=0.3, degree=3)
KERNEL_NAMES = ("linear", "poly", "rbf", "sigmoid")


def _data(kind, n=57, d=23, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    X[5] = X[2]  # duplicate points
    if kind == "dense":
        return X
    if kind == "csr":
        Xs = X * (X > 0.6)
        Xs[7] = 0.0  # an empty row
        return sp.csr_matrix(Xs)
    if kind == "binary-dense":
        return (X > 0.7).astype(np.float64)
    if kind == "binary-csr":
        B = (X > 0.7).astype(np.float64)
        B[7] = 0.0
        return sp.csr_matrix(B)
    raise ValueError(kind)


KINDS = ("dense", "csr", "binary-dense", "binary-csr")


def _kernel(kind, name):
    X = _data(kind)
    K = Kernel(X, name, **KERNEL_PARAMS, binary=True if kind.startswith("binary") else False)
    assert K.binary == kind.startswith("binary")
    assert K.sparse == kind.endswith("csr")
    return K


ROW_SETS = {
    "empty": np.zeros(0, np.int64),
    "one": np.array([11], np.int64),
    "duplicates": np.array([3, 5, 2, 3, 3, 56, 0, 7], np.int64),
    "all": None,  # every row, in order
}


def _rows(K, which):
    r = ROW_SETS[which]
    return np.arange(K.n_samples, dtype=np.int64) if r is None else r


def _single_rows(K, rows):
    R = np.empty((len(rows), K.n_samples))
    for a, i in enumerate(rows):
        kernel_row(K.data, int(i), R[a])
    return R


def _float32_bound(K, rows, cols, R64):
    """The elementwise bound of the module docstring for ``K[rows, cols]``."""
    if K.binary or K.sparse:
        return U32 * np.abs(R64) + 1e-300
    X = K.X
    d = X.shape[1]
    gam = (d + 2) * U32 / (1 - (d + 2) * U32)
    absdot = np.abs(X[rows]) @ np.abs(X[cols]).T
    D = gam * absdot
    dot = X[rows] @ X[cols].T
    g, c0, deg = K.gamma_, K.coef0, K.degree
    if K.kernel == "linear":
        L = np.ones_like(dot)
    elif K.kernel == "rbf":
        # K grows by at most exp(2 g D) over the interval
        L = 2 * g * np.abs(R64) * np.exp(2 * g * D)
    elif K.kernel == "poly":
        lo = np.abs(g * (dot - D) + c0) ** (deg - 1)
        hi = np.abs(g * (dot + D) + c0) ** (deg - 1)
        L = g * deg * np.maximum(lo, hi)
    else:
        L = np.full_like(dot, g)
    return 1.01 * (L * D + U32 * (np.abs(R64) + L * D)) + 1e-300


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", KERNEL_NAMES)
@pytest.mark.parametrize("which", list(ROW_SETS))
def test_float64_block_equals_single_rows(kind, name, which):
    K = _kernel(kind, name)
    rows = _rows(K, which)
    R = _single_rows(K, rows)
    B = K.block(rows)
    assert B.dtype == np.float64 and B.shape == (len(rows), K.n_samples)
    np.testing.assert_array_equal(B, R)
    out = np.full((len(rows), K.n_samples), np.nan)
    kernel_block(K.data, rows, out)  # the compiled function itself
    np.testing.assert_array_equal(out, R)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", KERNEL_NAMES)
@pytest.mark.parametrize("which", list(ROW_SETS))
def test_float32_block_within_float32_rounding(kind, name, which):
    K = _kernel(kind, name)
    rows = _rows(K, which)
    R = _single_rows(K, rows)
    cols = np.arange(K.n_samples)
    bound = _float32_bound(K, rows, cols, R)
    for B in (K.block(rows, dtype=np.float32), _compiled(K, rows, None, np.float32)):
        assert B.dtype == np.float32
        err = np.abs(B.astype(np.float64) - R)
        assert np.all(err <= bound), float(np.max(err - bound))
        if len(rows):
            assert np.max(err) <= 1e-6 * np.max(np.abs(R))
    if kind.startswith("binary") or kind == "csr":
        # the float64 value rounded once, exactly
        np.testing.assert_array_equal(K.block(rows, dtype=np.float32), R.astype(np.float32))


def _compiled(K, rows, cols, dtype):
    shape = (len(rows), K.n_samples if cols is None else len(cols))
    out = np.full(shape, np.nan, dtype=dtype)
    if cols is None:
        kernel_block(K.data, rows, out)
    else:
        kernel_block_cols(K.data, rows, cols, out)
    return out


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", KERNEL_NAMES)
def test_block_cols(kind, name):
    """K[B, C] and K[B, B]: float64 rows equal the single rows against the
    contiguous subset of the columns bit for bit, and the entries of the
    full rows up to the summation order of a shorter GEMV; float32 within
    the bound."""
    K = _kernel(kind, name)
    rows = ROW_SETS["duplicates"]
    for cols in (rows, np.array([0, 56, 9, 9, 30], np.int64), np.arange(K.n_samples)[::-1],
                 np.array([4], np.int64)):
        cols = np.ascontiguousarray(cols)
        sub = K.subset_data(cols)
        R = np.empty((len(rows), len(cols)))
        for a, i in enumerate(rows):
            kernel_row_against(K.data, int(i), sub, R[a])
        for B in (K.block(rows, cols), _compiled(K, rows, cols, np.float64)):
            np.testing.assert_array_equal(B, R)
        full = _single_rows(K, rows)[:, cols]
        np.testing.assert_allclose(R, full, rtol=1e-13, atol=1e-13)
        bound = _float32_bound(K, rows, cols, R)
        for B in (K.block(rows, cols, dtype=np.float32),
                  _compiled(K, rows, cols, np.float32)):
            assert np.all(np.abs(B.astype(np.float64) - R) <= bound)
    # empty columns or rows
    assert K.block(rows, np.zeros(0, np.int64)).shape == (len(rows), 0)
    assert K.block(np.zeros(0, np.int64), rows, dtype=np.float32).shape == (0, len(rows))


@pytest.mark.parametrize("kind", ["dense", "csr", "binary-dense"])
def test_float32_subset_rows(kind):
    """kernel_row_subset into a float32 row (a shrinking solver's float32
    cache): the entries of idx within the float32 bound of the float64 row
    (the vectorised dot32 for dense input), the others untouched; into a
    float64 row, equal to the sequential dot of earlier versions."""
    from svmlab.kernels._rows import kernel_row_subset, kernel_value

    for name in KERNEL_NAMES:
        K = _kernel(kind, name)
        K.ensure_float32()
        n = K.n_samples
        idx = np.array([0, 5, 2, 40, 56, 13], np.int64)
        for i, mm in ((0, 3), (2, 4), (13, 6)):
            R = _single_rows(K, [i])
            out = np.full(n, -7.0, np.float32)
            kernel_row_subset(K.data, i, idx, mm, out)
            rest = np.setdiff1d(np.arange(n), idx[:mm])
            assert np.all(out[rest] == -7.0)
            bound = _float32_bound(K, np.array([i]), idx[:mm], R[:, idx[:mm]])[0]
            assert np.all(np.abs(out[idx[:mm]] - R[0, idx[:mm]]) <= bound)
            o64 = np.full(n, -7.0)
            kernel_row_subset(K.data, i, idx, mm, o64)
            # the sequential dot (kernel_value computes the same sum)
            np.testing.assert_array_equal(o64[idx[:mm]],
                                          [kernel_value(K.data, i, int(j)) for j in idx[:mm]])


@pytest.mark.parametrize("kind", ["dense", "csr"])
def test_float32_single_rows(kind):
    """A float32 kernel row (a float32 cache row): SGEMV on the float32 copy
    for dense input, the float64 value rounded once for CSR."""
    for name in KERNEL_NAMES:
        K = _kernel(kind, name)
        K.ensure_float32()
        rows = np.arange(K.n_samples)
        R = _single_rows(K, rows)
        R32 = np.empty((K.n_samples, K.n_samples), np.float32)
        for i in rows:
            kernel_row(K.data, int(i), R32[i])
        bound = _float32_bound(K, rows, rows, R)
        assert np.all(np.abs(R32.astype(np.float64) - R) <= bound)
        if kind == "csr":
            np.testing.assert_array_equal(R32, R.astype(np.float32))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", KERNEL_NAMES)
def test_gemm_blocks(kind, name):
    """The DGEMM blocks: within float64 rounding of the rows (1e-12 of the
    largest |K| in the block; a float64 dot is off by at most
    ``d u64 sum |x z|`` ~ 1e-14 here), exactly the rows for CSR and binary
    input; float32 ``out`` is exactly kernel_block(_cols)."""
    K = _kernel(kind, name)
    rows = ROW_SETS["duplicates"]
    cols = np.array([0, 56, 9, 9, 30, 3], np.int64)
    R = _single_rows(K, rows)
    B = np.empty_like(R)
    kernel_block_gemm(K.data, rows, B)
    Bc = np.empty((len(rows), len(cols)))
    kernel_block_cols_gemm(K.data, rows, cols, Bc)
    scale = np.max(np.abs(R))
    np.testing.assert_allclose(B, R, rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(Bc, R[:, cols], rtol=0, atol=1e-12 * scale)
    if kind != "dense":
        np.testing.assert_array_equal(B, R)
    for f, args, ref in ((kernel_block_gemm, (rows,), _compiled(K, rows, None, np.float32)),
                         (kernel_block_cols_gemm, (rows, cols),
                          _compiled(K, rows, cols, np.float32))):
        o = np.empty(ref.shape, np.float32)
        f(K.data, *args, o)
        np.testing.assert_array_equal(o, ref)
    empty = np.empty((0, K.n_samples))
    kernel_block_gemm(K.data, np.zeros(0, np.int64), empty)


def test_float32_copy_is_kept_once_and_subsets_carry_it():
    X = _data("dense")
    K = Kernel(X, "rbf", gamma=0.1)
    assert K.data.dense32.shape == (0, 0)
    K.block([1, 2], dtype=np.float32)
    assert K.data.dense32.dtype == np.float32 and K.data.dense32.shape == X.shape
    c = K.data.dense32
    K.ensure_float32()
    assert K.data.dense32 is c
    sub = K.subset_data([4, 1])
    np.testing.assert_array_equal(sub.dense32, c[[4, 1]])
    # sparse and binary data keep no copy
    assert Kernel(_data("csr"), "rbf").ensure_float32().data.dense32.shape == (0, 0)


def test_out_argument_and_bad_input():
    K = _kernel("dense", "rbf")
    rows = np.array([1, 2, 3])
    out = np.empty((3, K.n_samples))
    assert K.block(rows, out=out) is out
    with pytest.raises(ValueError, match="out must be"):
        K.block(rows, out=np.empty((3, K.n_samples), np.float32))
    with pytest.raises(ValueError, match="out must be"):
        K.block(rows, out=np.empty((K.n_samples, 3)).T)
    with pytest.raises(ValueError, match="dtype"):
        K.block(rows, dtype=np.int64)
    with pytest.raises(IndexError):
        K.block([0, K.n_samples])
    with pytest.raises(IndexError):
        K.block([0], [-1])
    X = K.X.copy()
    K.block(rows, dtype=np.float32)
    np.testing.assert_array_equal(K.X, X)  # the data are not modified


def test_vectorised_rbf_exp_against_math_exp():
    """The branch-free exp of the float32 rbf blocks against math.exp (its
    naive twin), over the whole range it serves, before the float32
    rounding."""
    import math

    from svmlab.kernels._blocks import _exp_reduced, rbf_exp_row

    rng = np.random.default_rng(0)
    xs = np.concatenate([-rng.random(20000) * 700, -rng.random(2000) * 1e-3, [0.0, -700.0],
                         -np.arange(0, 700, 0.5)])
    for x in xs:
        p, k = _exp_reduced(float(x))
        v = math.ldexp(p, int(k))
        assert abs(v - math.exp(x)) <= 1e-13 * math.exp(x), x
    # the row function: inner products -> rbf values, clamps, float32 output
    sq = rng.random(500) * 50
    dots = (rng.random(500) * 60 - 10).astype(np.float32)
    o = dots.copy()
    rbf_exp_row(o, 20.0, sq, 0.7, np.empty(500), np.empty(500, np.int64))
    d2 = np.maximum(20.0 + sq - 2.0 * dots.astype(np.float64), 0.0)
    expect = np.array([math.exp(max(-0.7 * v, -700.0)) for v in d2])
    assert np.all(np.abs(o.astype(np.float64) - expect) <= (U32 + 1e-13) * expect)


def test_float64_exp_against_math_exp():
    """exp_nonpos, the exp of every float64 rbf value, against math.exp (its
    naive twin): within 2 ulp over [-708, 0], 0 below -708 (where the true
    value is under 3.3e-308); the vectorised row rbf_exp_row64 gives the
    scalar _transform's values bit for bit (d2 < 0 clamped, underflow),
    and exactly exp(0) = 1 on the diagonal."""
    import math

    from svmlab.kernels._rows import EXP_MIN, RBF, _transform, exp_nonpos, rbf_exp_row64

    rng = np.random.default_rng(1)
    xs = np.concatenate([-rng.random(20000) * 708, -rng.random(3000) * 1e-3,
                         -rng.random(3000) * 5, [0.0, -0.0, -5e-324, -707.99, EXP_MIN],
                         -np.arange(0, 708, 0.25)])
    for x in xs:
        v, e = exp_nonpos(float(x)), math.exp(x)
        assert abs(v - e) <= 2 * np.spacing(e), (x, v, e)
    for x in (-708.0001, -709.0, -745.2, -1e300, -np.inf):
        assert exp_nonpos(x) == 0.0
    assert exp_nonpos(0.0) == 1.0
    n = 3000
    sq = rng.random(n) * 40
    dots = rng.random(n) * 30 - 8
    dots[:5] = 20.0 + sq[:5]  # d2 < 0 after rounding or exactly 0: clamped to 0
    dots[5:10] = -200.0  # gamma d2 > 708: underflow to 0
    gamma = 2.3
    dots[10:12] = (20.0 + sq[10:12]) / 2 - 353.9 / gamma  # gamma d2 = 707.8, just above 0
    o = dots.copy()
    rbf_exp_row64(o, 20.0, sq, gamma, np.empty(n, np.int64))
    want = np.array([_transform(dots[j], 20.0, sq[j], RBF, gamma, 0.0, 3.0) for j in range(n)])
    np.testing.assert_array_equal(o, want)
    assert np.any(want == 0.0) and np.any(want == 1.0)  # both ends really exercised


_JIT_CODE = """
import numpy as np, sys, scipy.sparse as sp
from svmlab.kernels import (Kernel, kernel_block, kernel_block_cols, kernel_block_gemm,
                            kernel_block_cols_gemm)
from svmlab.kernels._rows import kernel_row, kernel_row_subset
rng = np.random.default_rng(3)
X = rng.random((40, 19)); X[4] = X[1]
datas = {"dense": X, "csr": sp.csr_matrix(X * (X > 0.6)), "binary": (X > 0.7).astype(float)}
rows = np.array([3, 3, 0, 39, 17], np.int64); cols = np.array([2, 9, 9, 0], np.int64)
res = {}
for kind, Xk in datas.items():
    for k in ("linear", "poly", "rbf", "sigmoid"):
        K = Kernel(Xk, k, gamma=0.1, coef0=0.3).ensure_float32()
        for dt in ("float64", "float32"):
            key = f"{kind}-{k}-{dt}"
            o = np.empty((5, 40), dt); kernel_block(K.data, rows, o); res[key + "-block"] = o
            o = np.empty((5, 4), dt); kernel_block_cols(K.data, rows, cols, o)
            res[key + "-cols"] = o
            o = np.empty((5, 40), dt); kernel_block_gemm(K.data, rows, o); res[key + "-gemm"] = o
            o = np.empty((5, 4), dt); kernel_block_cols_gemm(K.data, rows, cols, o)
            res[key + "-colsgemm"] = o
            o = np.empty(40, dt); kernel_row(K.data, 7, o); res[key + "-row"] = o
            o = np.zeros(40, dt); kernel_row_subset(K.data, 7, cols, 3, o)
            res[key + "-subset"] = o
            res[key + "-pyblock"] = K.block(rows, dtype=dt)
np.savez(sys.argv[1], **res)
"""


def test_jit_equals_no_jit(tmp_path):
    """The compiled blocks and rows and their NUMBA_DISABLE_JIT fallback give
    the same values: bit for bit for CSR and binary input; for dense input
    numba's BLAS (scipy's) and numpy's may sum in another order, and the
    fastmath float32 dot is reassociated by the compiler only, so there the
    check is 1e-13 (float64) and 2e-6 (float32; the block bound is about
    1e-6 on these data) of the largest value."""
    res = {}
    for jit in ("0", "1"):
        f = tmp_path / f"b{jit}.npz"
        subprocess.run([sys.executable, "-c", _JIT_CODE, str(f)], check=True, timeout=900,
                       env=dict(os.environ, NUMBA_DISABLE_JIT=jit))
        res[jit] = dict(np.load(f))
    assert res["0"].keys() == res["1"].keys() and len(res["0"]) == 3 * 4 * 2 * 7
    for key, a in res["0"].items():
        b = res["1"][key]
        assert a.dtype == b.dtype
        if not key.startswith("dense"):
            np.testing.assert_array_equal(a, b, err_msg=key)
        else:
            tol = 1e-13 if "float64" in key else 2e-6
            scale = max(1.0, float(np.max(np.abs(a))))
            np.testing.assert_allclose(a, b, rtol=0, atol=tol * scale, err_msg=key)
