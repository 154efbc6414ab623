"""Cutting-plane fits on Dask equal the in-memory fits (to 1e-10).

One dask.distributed LocalCluster (2 worker processes on 127.0.0.1) is
shared by the module.
"""

import numpy as np
import pytest
import scipy.sparse as sp

da = pytest.importorskip("dask.array")  # dask is an optional extra
distributed = pytest.importorskip("distributed")

import dask  # noqa: E402
from sklearn.datasets import make_classification  # noqa: E402

from svmlab import CuttingPlaneClassifier, CuttingPlaneOrdinalRegressor  # noqa: E402


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(processes=True, n_workers=2, threads_per_worker=1,
                                       host="127.0.0.1", dashboard_address=None)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def sparse_dask(X, rows):
    n, d = X.shape
    blocks = [da.from_delayed(dask.delayed(X[i:i + rows]), shape=(min(rows, n - i), d),
                              dtype=float, meta=sp.csr_matrix((0, d)))
              for i in range(0, n, rows)]
    return da.concatenate(blocks, axis=0)


def test_dense_dask_equals_in_memory(client):
    X, y = make_classification(1500, 12, random_state=0, flip_y=0.05)
    ref = CuttingPlaneClassifier(C=100.0).fit(X, y)
    got = CuttingPlaneClassifier(C=100.0).fit(da.from_array(X, chunks=(400, 12)),
                                              da.from_array(y, chunks=400))
    assert got.n_iter_ == ref.n_iter_ and got.converged_
    np.testing.assert_allclose(got.coef_, ref.coef_, atol=1e-10, rtol=0)
    np.testing.assert_allclose(got.intercept_, ref.intercept_, atol=1e-10, rtol=0)
    np.testing.assert_array_equal(got.classes_, ref.classes_)
    # the fitted model predicts in memory
    np.testing.assert_allclose(got.decision_function(X), ref.decision_function(X), atol=1e-9)


def test_sparse_blocks_equal_in_memory_and_records(client):
    rng = np.random.default_rng(1)
    Xs = sp.random(1200, 40, density=0.15, random_state=1, format="csr")
    ys = np.where(Xs @ rng.normal(size=40) + 0.1 * rng.normal(size=1200) > 0, 1, -1)
    ref = CuttingPlaneClassifier(C=100.0, fit_intercept=False).fit(Xs, ys)
    Xd = sparse_dask(Xs, 250)
    got = CuttingPlaneClassifier(C=100.0, fit_intercept=False).fit(Xd, ys)
    assert got.n_iter_ == ref.n_iter_
    np.testing.assert_allclose(got.coef_, ref.coef_, atol=1e-10, rtol=0)
    # step records on Dask carry the same numbers (no gathered mask)
    recs_ref = list(CuttingPlaneClassifier(C=100.0, fit_intercept=False, max_iter=4)
                    .iter_fit(Xs, ys))
    recs = list(CuttingPlaneClassifier(C=100.0, fit_intercept=False, max_iter=4)
                .iter_fit(Xd, ys))
    assert len(recs) == len(recs_ref) == 4
    for a, b in zip(recs, recs_ref):
        assert a.constraint is None and a.constraint_size == b.constraint_size
        assert a.xi_new == pytest.approx(b.xi_new, abs=1e-12)
        np.testing.assert_allclose(a.w, b.w, atol=1e-10, rtol=0)


def test_ordinal_dask_equals_in_memory(client):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(900, 6))
    y = np.digitize(X @ rng.normal(size=6) + rng.normal(size=900), [-1, 0, 1]) + 1
    ref = CuttingPlaneOrdinalRegressor(C=20.0).fit(X, y)
    got = CuttingPlaneOrdinalRegressor(C=20.0).fit(da.from_array(X, chunks=(250, 6)),
                                                   da.from_array(y, chunks=250))
    assert got.n_iter_ == ref.n_iter_ and got.n_pairs_ == ref.n_pairs_
    np.testing.assert_allclose(got.coef_, ref.coef_, atol=1e-10, rtol=0)


def test_dask_bad_input_fails_before_training(client):
    X, y = make_classification(200, 5, random_state=3)
    X[57, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        CuttingPlaneClassifier().fit(da.from_array(X, chunks=(50, 5)), y)
    X[57, 2] = 0.0
    with pytest.raises(ValueError, match="one label per row"):
        CuttingPlaneClassifier().fit(da.from_array(X, chunks=(50, 5)), y[:-1])
    with pytest.raises(ValueError, match="two classes"):
        CuttingPlaneClassifier().fit(da.from_array(X, chunks=(50, 5)), np.zeros(200))
    with pytest.raises(ValueError, match="single rank"):
        CuttingPlaneOrdinalRegressor().fit(da.from_array(X, chunks=(50, 5)), np.ones(200))


@pytest.mark.parametrize("fmt", ["dense", "sparse"])
def test_ocas_on_dask_equals_in_memory(client, fmt):
    """method="ocas": margins gathered blockwise, line search on the client,
    the cut reduced in a tree; same iterations and model as in memory."""
    rng = np.random.default_rng(5)
    if fmt == "dense":
        X, y = make_classification(1300, 10, random_state=6, flip_y=0.05)
        Xd = da.from_array(X, chunks=(300, 10))
    else:
        X = sp.random(1100, 50, density=0.12, random_state=7, format="csr")
        y = np.where(X @ rng.normal(size=50) + 0.1 * rng.normal(size=1100) > 0, 1, -1)
        Xd = sparse_dask(X, 240)
    kw = dict(C=150.0, epsilon=1e-4, method="ocas", max_iter=-1)
    ref = CuttingPlaneClassifier(**kw).fit(X, y)
    got = CuttingPlaneClassifier(**kw).fit(Xd, y)
    assert got.converged_ and got.n_iter_ == ref.n_iter_
    np.testing.assert_allclose(got.coef_, ref.coef_, atol=1e-10, rtol=0)
    np.testing.assert_allclose(got.intercept_, ref.intercept_, atol=1e-10, rtol=0)
    recs_ref = list(CuttingPlaneClassifier(**{**kw, "max_iter": 5}).iter_fit(X, y))
    recs = list(CuttingPlaneClassifier(**{**kw, "max_iter": 5}).iter_fit(Xd, y))
    assert len(recs) == len(recs_ref) == 5
    for a, b in zip(recs, recs_ref):
        assert a.constraint is None and a.constraint_size == b.constraint_size
        assert a.step == pytest.approx(b.step, rel=1e-10, abs=1e-14)
        assert a.primal == pytest.approx(b.primal, rel=1e-12)
