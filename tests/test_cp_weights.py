"""Sample and class weights for CuttingPlaneClassifier (both methods).

The weighted 1-slack problem (svmlab.cutting_plane.estimators, OP2w)::

    min 1/2 |w|^2 + (C/n) sum_i v_i max(0, 1 - y_i w.x_i),
    v_i = class_weight[y_i] * sample_weight_i,

with n the number of rows of positive weight, which is LIBLINEAR's weighted
problem (per-example C_i = C_lib * v_i) with C_lib = C / n.  Objectives are
computed here from coef_ and intercept_, never taken from a solver; the
class weights of "balanced" are computed here by counting.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification
from sklearn.svm import LinearSVC
from sklearn.utils.class_weight import compute_class_weight

import svmlab.cutting_plane._oracle as oracle_mod
from svmlab import CuttingPlaneClassifier
from svmlab.cutting_plane._ocas import exact_line_search
from svmlab.reference.cutting_plane import line_objective
from svmlab.reference import cutting_plane as ref1

METHODS = ["joachims", "ocas"]


def data(sparse=False, n=240, seed=0):
    if sparse:
        rng = np.random.default_rng(seed)
        X = sp.random(n, 30, density=0.2, format="csr", random_state=seed, dtype=np.float64)
        y = np.where(X @ rng.normal(size=30) + 0.3 * rng.normal(size=n) > 0, 1, -1)
        return X, y
    return make_classification(n, 8, n_informative=5, flip_y=0.1, weights=[0.7],
                               random_state=seed)


def example_weights(y, sample_weight, class_weight):
    """v_i = class_weight[y_i] * sample_weight_i, computed independently."""
    labels = np.unique(y)
    if class_weight == "balanced":
        cw = {c: len(y) / (2.0 * np.sum(y == c)) for c in labels}
    else:
        cw = class_weight or {}
    v = np.array([cw.get(c, 1.0) for c in y], dtype=np.float64)
    return v if sample_weight is None else v * sample_weight


def primal(X, y, coef, b, C, v, fit_intercept=True):
    """OP1w at (coef, b), the bias regularised (a constant feature 1)."""
    ypm = np.where(y == np.unique(y)[1], 1.0, -1.0)
    m = ypm * (np.asarray(X @ coef).ravel() + b)
    n = np.count_nonzero(v > 0)
    reg = coef @ coef + (b * b if fit_intercept else 0.0)
    return 0.5 * reg + C / n * float(np.sum(v * np.maximum(0.0, 1.0 - m)))


def liblinear(X, y, C, v_sample, class_weight, fit_intercept=True):
    """LIBLINEAR's weighted optimum (dual CD, tolerance 1e-10), its bias a
    regularised constant feature 1 as here (intercept_scaling=1)."""
    n = len(y) if v_sample is None else int(np.count_nonzero(v_sample > 0))
    m = LinearSVC(C=C / n, loss="hinge", dual=True, tol=1e-10, max_iter=1_000_000,
                  fit_intercept=fit_intercept, intercept_scaling=1.0,
                  class_weight=class_weight)
    m.fit(X, y, sample_weight=v_sample)
    return m.coef_[0], (m.intercept_[0] if fit_intercept else 0.0)


# --------------------------------------------------------------------------
# LIBLINEAR's weighted optimum
# --------------------------------------------------------------------------
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("kind", ["sample", "class", "both"])
def test_reaches_liblinear_weighted_optimum(method, sparse, kind):
    X, y = data(sparse)
    n = len(y)
    rng = np.random.default_rng(5)
    sw = rng.uniform(0.2, 3.0, n) if kind in ("sample", "both") else None
    if sw is not None:
        sw[rng.choice(n, 10, replace=False)] = 0.0   # zero weights too
    labels = np.unique(y)
    cw = {labels[0]: 0.4, labels[1]: 2.5} if kind in ("class", "both") else None
    v = example_weights(y, sw, cw)
    C, eps = 0.5 * n, 1e-4
    est = CuttingPlaneClassifier(C=C, epsilon=eps, method=method, class_weight=cw,
                                 progress=False).fit(X, y, sample_weight=sw)
    assert est.converged_
    p_ours = primal(X, y, est.coef_[0], est.intercept_[0], C, v)
    p_lib = primal(X, y, *liblinear(X, y, C, sw, cw), C, v)
    # Theorem 3 (and OCAS's stop): within C epsilon of the optimum, which
    # LIBLINEAR at tol 1e-10 reaches to far better than C epsilon
    assert p_ours <= p_lib + C * eps
    assert p_ours >= p_lib - 1e-6 * p_lib   # nobody beats the optimum
    # the weights matter here: the unweighted model is far from this optimum
    plain = CuttingPlaneClassifier(C=C, epsilon=eps, method=method, progress=False).fit(X, y)
    assert primal(X, y, plain.coef_[0], plain.intercept_[0], C, v) > p_lib + 10 * C * eps


@pytest.mark.parametrize("method", METHODS)
def test_no_intercept_reaches_liblinear(method):
    X, y = data(False, seed=3)
    sw = np.random.default_rng(1).uniform(0.0, 2.0, len(y))
    C, eps = 0.2 * len(y), 1e-4
    est = CuttingPlaneClassifier(C=C, epsilon=eps, method=method, fit_intercept=False,
                                 progress=False).fit(X, y, sample_weight=sw)
    assert est.intercept_[0] == 0.0
    v = example_weights(y, sw, None)
    p_ours = primal(X, y, est.coef_[0], 0.0, C, v, fit_intercept=False)
    p_lib = primal(X, y, *liblinear(X, y, C, sw, None, fit_intercept=False), C, v,
                   fit_intercept=False)
    assert p_lib - 1e-6 * p_lib <= p_ours <= p_lib + C * eps


# --------------------------------------------------------------------------
# exact equivalences
# --------------------------------------------------------------------------
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_all_ones_weights_are_the_unweighted_fit(method, sparse):
    X, y = data(sparse)
    kw = dict(C=50.0, method=method, progress=False)
    plain = CuttingPlaneClassifier(**kw).fit(X, y)
    ones = CuttingPlaneClassifier(**kw).fit(X, y, sample_weight=np.ones(len(y)))
    cw1 = CuttingPlaneClassifier(class_weight={0: 1.0, 1: 1.0} if not sparse
                                 else {-1: 1.0, 1: 1.0}, **kw).fit(X, y)
    # the weighted passes with v = 1: the same steps.  Algorithm 1's passes
    # give the same bits; OCAS's weighted and plain passes are two compiled
    # loops with fastmath reassociation, whose sums the compiler may order
    # differently for a given vector width (x86-64-v3 machine code, as the
    # install ships it, differs in the last bits where host AVX-512 code
    # does not): the same steps, iterates within a few ulps
    same = (np.testing.assert_array_equal if method != "ocas" else
            lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14))
    for other in (ones, cw1):
        assert other.n_iter_ == plain.n_iter_
        same(other.coef_, plain.coef_)
        same(other.intercept_, plain.intercept_)
    np.testing.assert_array_equal(plain.class_weight_, [1.0, 1.0])


@pytest.mark.parametrize("method", METHODS)
def test_weight_two_everywhere_is_twice_C(method):
    # v = 2 doubles every cut (g, d) exactly; OP3's dual in alpha/2 is the
    # unweighted one with 2C.  xi' doubles, so epsilon doubles for the same
    # stopping test (C epsilon is the same absolute guarantee).
    X, y = data(False, seed=2)
    eps = 1e-3
    a = CuttingPlaneClassifier(C=40.0, epsilon=2 * eps, method=method,
                               progress=False).fit(X, y, sample_weight=np.full(len(y), 2.0))
    b = CuttingPlaneClassifier(C=80.0, epsilon=eps, method=method, progress=False).fit(X, y)
    assert a.n_iter_ == b.n_iter_
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(a.intercept_, b.intercept_, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_zero_weights_remove_the_rows(method, sparse):
    X, y = data(sparse, seed=4)
    rng = np.random.default_rng(3)
    sw = rng.uniform(0.5, 2.0, len(y))
    sw[rng.choice(len(y), 40, replace=False)] = 0.0
    keep = sw > 0
    kw = dict(C=60.0, method=method, progress=False)
    a = CuttingPlaneClassifier(**kw).fit(X, y, sample_weight=sw)
    b = CuttingPlaneClassifier(**kw).fit(X[keep], y[keep], sample_weight=sw[keep])
    assert a.n_iter_ == b.n_iter_
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.intercept_, b.intercept_)


@pytest.mark.parametrize("method", METHODS)
def test_balanced_is_compute_class_weight(method):
    X, y = data(False)
    expected = compute_class_weight("balanced", classes=np.unique(y), y=y)
    ours = {c: len(y) / (2.0 * np.sum(y == c)) for c in np.unique(y)}
    np.testing.assert_allclose(expected, [ours[c] for c in np.unique(y)], rtol=1e-15)
    kw = dict(C=50.0, method=method, progress=False)
    a = CuttingPlaneClassifier(class_weight="balanced", **kw).fit(X, y)
    b = CuttingPlaneClassifier(class_weight=dict(zip(np.unique(y), expected)), **kw).fit(X, y)
    np.testing.assert_array_equal(a.class_weight_, expected)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert not np.allclose(a.coef_, CuttingPlaneClassifier(**kw).fit(X, y).coef_, atol=1e-3)


def test_bad_weights_refused_before_any_work(monkeypatch):
    X, y = data(False, n=60)
    calls = []

    def spy(*args):
        calls.append(1)
        raise AssertionError("the pass ran")

    # the passes are looked up in the oracle module (svmlab.cutting_plane._oracle)
    monkeypatch.setattr(oracle_mod, "cls_pass_dense", spy)
    monkeypatch.setattr(oracle_mod, "cut_update_dense", spy)
    monkeypatch.setattr(oracle_mod, "margins_dense", spy)
    bad = np.ones(len(y))
    bad[7] = -0.5
    for method in METHODS:
        est = CuttingPlaneClassifier(method=method, progress=False)
        with pytest.raises(ValueError, match="non-negative"):
            est.fit(X, y, sample_weight=bad)
        with pytest.raises(ValueError, match="non-negative"):
            est.start(X, y, sample_weight=bad)
        with pytest.raises(ValueError, match="NaN"):
            est.fit(X, y, sample_weight=np.full(len(y), np.nan))
        with pytest.raises(ValueError, match="shape"):
            est.fit(X, y, sample_weight=np.ones(len(y) - 1))
        with pytest.raises(ValueError, match="class"):
            est.fit(X, y, sample_weight=np.where(y == y[0], 0.0, 1.0))
        with pytest.raises(ValueError, match="non-negative"):
            CuttingPlaneClassifier(method=method, class_weight={0: -1.0},
                                   progress=False).fit(X, y)
    assert calls == []


@pytest.mark.parametrize("method", METHODS)
def test_iter_fit_and_start_take_weights(method):
    X, y = data(False, n=150)
    sw = np.random.default_rng(0).uniform(0.0, 2.0, len(y))
    kw = dict(C=30.0, method=method, class_weight="balanced", progress=False)
    ref = CuttingPlaneClassifier(**kw).fit(X, y, sample_weight=sw)
    est = CuttingPlaneClassifier(**kw)
    recs = list(est.iter_fit(X, y, sample_weight=sw))
    assert len(recs) == ref.n_iter_ == est.n_iter_
    np.testing.assert_array_equal(est.coef_, ref.coef_)
    run = CuttingPlaneClassifier(**kw).start(X, y, sample_weight=sw)
    while run.step() is not None:
        pass
    run.finish()
    np.testing.assert_array_equal(run.estimator.coef_, ref.coef_)
    # records carry the weighted loss: primal = 1/2|w|^2 + C xi', recomputed here
    v = example_weights(y, sw, "balanced")
    r = recs[-1]
    if method == "joachims":
        assert r.primal == pytest.approx(primal(X, y, r.w, r.b, kw["C"], v), rel=1e-10)


# --------------------------------------------------------------------------
# OCAS's exact line search with weights
# --------------------------------------------------------------------------
def test_weighted_exact_line_search_is_the_minimiser():
    rng = np.random.default_rng(7)
    worse = 0
    for _ in range(20):
        n = 40
        mb = rng.normal(1.0, 1.0, n)
        dm = rng.normal(0.0, 1.0, n)
        v = rng.uniform(0.0, 3.0, n)
        v[rng.random(n) < 0.2] = 0.0
        ww, wd, dd, Cn = 2.0, rng.normal(0, 1.0), rng.uniform(0.1, 2.0), 0.3
        k = exact_line_search(wd, dd, mb, dm, Cn, v)
        # brute force on a fine grid plus every breakpoint
        with np.errstate(divide="ignore", invalid="ignore"):
            kinks = (1.0 - mb) / dm
        grid = np.concatenate([np.linspace(0, 10, 20001), kinks[np.isfinite(kinks)
                                                                  & (kinks > 0)]])
        vals = line_objective(grid, ww, wd, dd, mb, dm, Cn, v)
        best = float(vals.min())
        assert k >= 0.0
        assert float(line_objective(k, ww, wd, dd, mb, dm, Cn, v)) <= best + 1e-12
        # the weights change the answer: the unweighted minimiser is worse
        k1 = exact_line_search(wd, dd, mb, dm, Cn)
        worse += float(line_objective(k1, ww, wd, dd, mb, dm, Cn, v)) > best + 1e-9
    assert worse >= 5


# --------------------------------------------------------------------------
# the readable reference takes the same constraints
# --------------------------------------------------------------------------
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_reference_takes_the_same_weighted_constraints(sparse):
    X, y = data(sparse, n=150, seed=6)
    labels = np.unique(y)
    sw = np.random.default_rng(2).uniform(0.0, 2.0, len(y))
    sw[::17] = 0.0
    cw = {labels[0]: 1.5, labels[1]: 0.5}
    v = example_weights(y, sw, cw)
    C = 40.0
    recs = list(CuttingPlaneClassifier(C=C, class_weight=cw, progress=False)
                .iter_fit(X, y, sample_weight=sw))
    ref = ref1.fit(X, y, C=C, sample_weight=v)
    assert ref.converged and len(ref.records) == len(recs) > 5
    Xk = (X.toarray() if sparse else X)[v > 0]
    yk = np.where(y[v > 0] == labels[1], 1.0, -1.0)
    for r, q in zip(recs, ref.records):
        # no margin within rounding of 1: a flip of c_i would be a legal fork
        assert np.min(np.abs(yk * (Xk @ q.w + q.b) - 1.0)) > 1e-8
        np.testing.assert_array_equal(r.constraint, q.constraint)
        np.testing.assert_allclose(r.w, q.w, rtol=1e-6, atol=1e-9)
        assert r.constraint_offset == pytest.approx(q.constraint_offset, rel=1e-12)
        assert r.xi_new == pytest.approx(q.xi_new, rel=1e-8, abs=1e-12)
    np.testing.assert_allclose(recs[-1].w, ref.records[-1].w, rtol=1e-6, atol=1e-9)


def test_reference_weights_checked():
    X, y = data(False, n=40)
    with pytest.raises(ValueError, match="non-negative"):
        ref1.fit(X, y, sample_weight=-np.ones(len(y)))


# --------------------------------------------------------------------------
# Dask equals in memory
# --------------------------------------------------------------------------
@pytest.mark.parametrize("method", METHODS)
def test_dask_weighted_equals_in_memory(method):
    da = pytest.importorskip("dask.array")
    import dask

    X, y = data(False, n=400, seed=8)
    sw = np.random.default_rng(4).uniform(0.0, 2.0, len(y))
    sw[::9] = 0.0
    kw = dict(C=80.0, method=method, class_weight="balanced", progress=False)
    ref = CuttingPlaneClassifier(**kw).fit(X, y, sample_weight=sw)
    with dask.config.set(scheduler="synchronous"):
        got = CuttingPlaneClassifier(**kw).fit(
            da.from_array(X, chunks=(130, 8)), da.from_array(y, chunks=130),
            sample_weight=da.from_array(sw, chunks=130))
        with pytest.raises(ValueError, match="non-negative"):
            CuttingPlaneClassifier(**kw).fit(da.from_array(X, chunks=(130, 8)), y,
                                             sample_weight=-sw)
    assert got.n_iter_ == ref.n_iter_ and got.converged_
    np.testing.assert_allclose(got.coef_, ref.coef_, atol=1e-10, rtol=0)
    np.testing.assert_allclose(got.intercept_, ref.intercept_, atol=1e-10, rtol=0)
    np.testing.assert_array_equal(got.class_weight_, ref.class_weight_)


def test_dask_csr_blocks_weighted_equal_in_memory():
    da = pytest.importorskip("dask.array")
    import dask

    X, y = data(True, n=300, seed=9)
    sw = np.random.default_rng(6).uniform(0.1, 2.0, len(y))
    kw = dict(C=60.0, fit_intercept=False, progress=False)
    ref = CuttingPlaneClassifier(**kw).fit(X, y, sample_weight=sw)
    blocks = [da.from_delayed(dask.delayed(X[i:i + 100]), shape=(100, X.shape[1]),
                              dtype=float, meta=sp.csr_matrix((0, X.shape[1])))
              for i in range(0, 300, 100)]
    with dask.config.set(scheduler="synchronous"):
        got = CuttingPlaneClassifier(**kw).fit(da.concatenate(blocks, axis=0), y,
                                               sample_weight=sw)
    assert got.n_iter_ == ref.n_iter_
    np.testing.assert_allclose(got.coef_, ref.coef_, atol=1e-10, rtol=0)


_NOJIT = r"""
import json, numpy as np, scipy.sparse as sp
from sklearn.datasets import make_classification
from svmlab import CuttingPlaneClassifier
X, y = make_classification(80, 4, random_state=0)
sw = np.random.default_rng(0).uniform(0.0, 2.0, 80)
out = []
for method in ("joachims", "ocas"):
    for Xi in (X, sp.csr_matrix(X)):
        m = CuttingPlaneClassifier(C=8.0, method=method, class_weight="balanced",
                                   progress=False).fit(Xi, y, sample_weight=sw)
        out.append([m.coef_.ravel().tolist(), m.intercept_.tolist(), m.n_iter_])
print(json.dumps(out))
"""


def test_weighted_passes_without_jit_agree():
    import json
    import os
    import subprocess
    import sys

    def run(disable):
        env = dict(os.environ, NUMBA_DISABLE_JIT="1" if disable else "0")
        out = subprocess.run([sys.executable, "-c", _NOJIT], env=env, capture_output=True,
                             text=True, timeout=300, check=True)
        return json.loads(out.stdout.strip().splitlines()[-1])

    jit, nojit = run(False), run(True)
    for a, b in zip(jit, nojit):
        assert a[2] == b[2]
        np.testing.assert_allclose(a[0], b[0], rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(a[1], b[1], rtol=1e-9, atol=1e-12)
