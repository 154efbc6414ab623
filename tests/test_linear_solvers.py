"""TRON, CDN, Crammer-Singer and the cutting plane as solvers of LinearSVC /
LinearSVR: each reaches LIBLINEAR's optimum (primal objectives computed here),
sparse equals dense, the optimality conditions hold, ``solver="auto"`` chooses as
documented, and bad combinations are refused with scikit-learn's messages."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn import svm as sk
from sklearn.datasets import make_classification, make_regression
from sklearn.exceptions import ConvergenceWarning

from svmlab import LinearSVC, LinearSVR, l1_min_c


@pytest.fixture(scope="module")
def binary():
    X, y = make_classification(250, 15, n_informative=8, random_state=7)
    return X, y, np.where(y == 1, 1.0, -1.0)


def sq_hinge_primal(coef, b, X, y_pm, C, B=1.0):
    coef = np.asarray(coef).ravel()
    m = np.maximum(1 - y_pm * (np.asarray(X @ coef).ravel() + b), 0)
    return 0.5 * (coef @ coef + (b / B) ** 2) + np.sum(C * m * m)


def l1_primal(coef, b, X, y_pm, C):
    coef = np.asarray(coef).ravel()
    m = np.maximum(1 - y_pm * (np.asarray(X @ coef).ravel() + b), 0)
    return np.abs(coef).sum() + abs(b) + np.sum(C * m * m)


def cs_primal(W, b, X, y, C):
    W = np.c_[W, b]
    Z = np.c_[X, np.ones(len(X))] @ W.T
    e = np.ones_like(Z)
    e[np.arange(len(y)), y] = 0
    xi = np.max(Z + e - Z[np.arange(len(y)), y][:, None], axis=1)
    return 0.5 * np.sum(W * W) + C * np.sum(xi)


@pytest.mark.parametrize("C", [0.01, 1.0, 100.0])
@pytest.mark.parametrize("sparse", [False, True])
def test_tron_svc_matches_liblinear(binary, C, sparse):
    X, y, y_pm = binary
    Xs = sp.csr_matrix(X) if sparse else X
    ref = sk.LinearSVC(dual=False, C=C, tol=1e-9).fit(Xs, y)
    ours = LinearSVC(dual=False, C=C, tol=1e-9).fit(Xs, y)
    assert ours.solver_ == "tron" and ours.converged_
    p_ref = sq_hinge_primal(ref.coef_, ref.intercept_[0], X, y_pm, C)
    p = sq_hinge_primal(ours.coef_, ours.intercept_[0], X, y_pm, C)
    assert abs(p - p_ref) <= 1e-6 * p_ref
    # the gradient of the primal vanishes at the solution
    w = np.r_[ours.coef_[0], ours.intercept_[0]]
    Xa = np.c_[X, np.ones(len(X))]
    m = np.maximum(1 - y_pm * (Xa @ w), 0)
    g = w - 2 * C * Xa.T @ (y_pm * m)
    g0 = -2 * C * Xa.T @ y_pm            # the gradient at w = 0, TRON's yardstick
    assert np.linalg.norm(g) <= 1e-7 * np.linalg.norm(g0)


@pytest.mark.parametrize("C", [0.1, 10.0])
def test_tron_svr_matches_liblinear(C):
    X, y = make_regression(200, 10, noise=4.0, random_state=2)
    y = y / 30
    kw = dict(dual=False, loss="squared_epsilon_insensitive", C=C, epsilon=0.2, tol=1e-10)
    ref = sk.LinearSVR(**kw).fit(X, y)
    ours = LinearSVR(**kw).fit(X, y)
    assert ours.solver_ == "tron"
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, rtol=1e-6, atol=1e-8)
    ours2 = LinearSVR(**kw).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(ours2.coef_, ours.coef_, rtol=0, atol=1e-12)


@pytest.mark.parametrize("C", [0.01, 0.5])
@pytest.mark.parametrize("sparse", [False, True])
def test_cdn_matches_liblinear(binary, C, sparse):
    X, y, y_pm = binary
    Xs = sp.csr_matrix(X) if sparse else X
    kw = dict(penalty="l1", dual=False, C=C, tol=1e-8, max_iter=20000)
    ref = sk.LinearSVC(**kw).fit(Xs, y)
    ours = LinearSVC(**kw).fit(Xs, y)
    assert ours.solver_ == "cdn" and ours.converged_
    p_ref = l1_primal(ref.coef_, ref.intercept_[0], X, y_pm, C)
    p = l1_primal(ours.coef_, ours.intercept_[0], X, y_pm, C)
    assert abs(p - p_ref) <= 1e-6 * p_ref
    # optimality of the L1 problem: |grad_j loss| <= 1, = -sign(w_j) where w_j != 0
    w = np.r_[ours.coef_[0], ours.intercept_[0]]
    Xa = np.c_[X, np.ones(len(X))]
    m = np.maximum(1 - y_pm * (Xa @ w), 0)
    g = -2 * C * Xa.T @ (y_pm * m)
    assert np.all(np.abs(g) <= 1 + 1e-4)
    nz = w != 0
    np.testing.assert_allclose(g[nz], -np.sign(w[nz]), atol=1e-4)


@pytest.mark.parametrize("C", [0.1, 1.0])
def test_crammer_singer_matches_liblinear(C):
    X, y = make_classification(200, 8, n_informative=5, n_classes=3, random_state=0)
    kw = dict(multi_class="crammer_singer", C=C, tol=1e-6, max_iter=100000, random_state=0)
    ref = sk.LinearSVC(**kw).fit(X, y)
    ours = LinearSVC(**kw).fit(X, y)
    assert ours.solver_ == "crammer_singer" and ours.converged_
    assert ours.coef_.shape == (3, 8) and ours.intercept_.shape == (3,)
    p_ref = cs_primal(ref.coef_, ref.intercept_, X, y, C)
    p = cs_primal(ours.coef_, ours.intercept_, X, y, C)
    assert p <= p_ref * (1 + 1e-6)
    assert p >= p_ref * (1 - 1e-4)        # LIBLINEAR's own point is within its tol
    ours_s = LinearSVC(**kw).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(ours_s.coef_, ours.coef_, atol=1e-6)
    # the dual: sum_m a_i^m = 0, a_i^m <= C_i^m, and w_m = sum_i a_i^m x_i
    run = LinearSVC(**kw).start(X, y)
    run.run()
    a = run.alpha
    np.testing.assert_allclose(a.sum(axis=1), 0, atol=1e-10)
    C_im = np.zeros_like(a)
    C_im[np.arange(len(y)), y] = C
    assert np.all(a <= C_im + 1e-12)
    np.testing.assert_allclose(run.W[:-1].T, a.T @ X, atol=1e-9)


def test_crammer_singer_binary_is_one_row():
    X, y = make_classification(120, 6, random_state=1)
    kw = dict(multi_class="crammer_singer", tol=1e-8, max_iter=100000)
    ref = sk.LinearSVC(**kw).fit(X, y)
    ours = LinearSVC(**kw).fit(X, y)
    assert ours.coef_.shape == ref.coef_.shape == (1, 6)
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-4)


@pytest.mark.parametrize("solver", ["cutting_plane", "ocas"])
def test_cutting_plane_solvers(binary, solver):
    X, y, y_pm = binary
    C = 0.1
    ref = sk.LinearSVC(loss="hinge", dual=True, C=C, tol=1e-10, max_iter=100000).fit(X, y)
    ours = LinearSVC(loss="hinge", C=C, tol=1e-6, solver=solver, max_iter=10000).fit(X, y)
    assert ours.solver_ == solver and ours.converged_

    def hinge(coef, b):
        m = np.maximum(1 - y_pm * (X @ coef.ravel() + b), 0)
        return 0.5 * (coef.ravel() @ coef.ravel() + b * b) + C * m.sum()

    p_ref = hinge(ref.coef_, ref.intercept_[0])
    p = hinge(ours.coef_, ours.intercept_[0])
    # the cutting plane stops within (n C) epsilon of the optimum (Theorem 3)
    assert p_ref - 1e-9 <= p <= p_ref + len(y) * C * 1e-6 + 1e-9


def test_solver_auto_choices(binary):
    X, y, _ = binary
    assert LinearSVC().fit(X, y).solver_ == "tron"                 # n > d: primal
    assert LinearSVC().fit(X[:10], y[:10]).solver_ == "dcd"        # n < d: dual
    assert LinearSVC(loss="hinge").fit(X, y).solver_ == "dcd"      # only the dual
    assert LinearSVC(penalty="l1", dual=False).fit(X, y).solver_ == "cdn"
    assert LinearSVR().fit(X, y.astype(float)).solver_ == "dcd"
    assert LinearSVR(loss="squared_epsilon_insensitive").fit(X, y.astype(float)).solver_ == "tron"


@pytest.mark.parametrize("params, match", [
    (dict(penalty="l1", loss="hinge", dual=False), "The combination of penalty='l1' and loss='hinge'"),
    (dict(penalty="l2", loss="hinge", dual=False), "are not supported when dual=False"),
    (dict(penalty="l1", loss="squared_hinge", dual=True), "are not supported when dual=True"),
    (dict(solver="tron", loss="hinge"), "solver='tron' solves"),
    (dict(solver="dcd", dual=False), "solver='dcd' solves the dual"),
    (dict(solver="cdn"), "solver='cdn' solves"),
    (dict(solver="ocas", loss="hinge", intercept_scaling=2.0), "intercept_scaling"),
    (dict(intercept_scaling=0.0), "intercept_scaling"),
])
def test_bad_combinations_are_refused(binary, params, match):
    X, y, _ = binary
    with pytest.raises(ValueError, match=match):
        LinearSVC(**params).fit(X, y)


@pytest.mark.parametrize("est", [LinearSVC(dual=False, max_iter=1),
                                 LinearSVC(penalty="l1", dual=False, max_iter=1),
                                 LinearSVC(multi_class="crammer_singer", max_iter=1),
                                 LinearSVR(max_iter=1)])
def test_every_solver_warns_at_max_iter(binary, est):
    X, y, _ = binary
    with pytest.warns(ConvergenceWarning, match="Liblinear failed to converge"):
        est.fit(X, y if isinstance(est, LinearSVC) else y.astype(float))
    assert est.n_iter_ == 1 and est.stop_reason_ == "max_iter"


@pytest.mark.parametrize("kw", [dict(dual=False), dict(penalty="l1", dual=False),
                                dict(multi_class="crammer_singer")])
def test_sample_weight_is_repetition(kw):
    X, y = make_classification(90, 5, random_state=3, n_classes=3, n_informative=3)
    sw = np.ones(len(y))
    sw[:20] = 2
    sw[20:30] = 0
    rep = np.r_[np.arange(20), np.arange(len(y))]
    rep = rep[(rep < 20) | (rep >= 30)]
    kw = dict(kw, tol=1e-10, max_iter=100000)
    a = LinearSVC(**kw).fit(X, y, sample_weight=sw)
    b = LinearSVC(**kw).fit(X[rep], y[rep])
    np.testing.assert_allclose(a.coef_, b.coef_, atol=2e-4)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("loss", ["squared_hinge", "log"])
@pytest.mark.parametrize("fit_intercept, scaling", [(False, 1.0), (True, 1.0), (True, 10.0)])
def test_l1_min_c_equals_sklearn(binary, sparse, loss, fit_intercept, scaling):
    X, y, _ = binary
    Xs = sp.csr_matrix(X) if sparse else X
    kw = dict(loss=loss, fit_intercept=fit_intercept, intercept_scaling=scaling)
    assert l1_min_c(Xs, y, **kw) == sk.l1_min_c(Xs, y, **kw)
    if loss == "squared_hinge":
        # at the bound the L1 model is zero, just above it is not
        c = l1_min_c(X, y, **kw)
        m = LinearSVC(penalty="l1", dual=False, C=c, fit_intercept=fit_intercept,
                      intercept_scaling=scaling).fit(X, y)
        assert not np.any(m.coef_) and not np.any(m.intercept_)
        m = LinearSVC(penalty="l1", dual=False, C=1.01 * c, fit_intercept=fit_intercept,
                      intercept_scaling=scaling).fit(X, y)
        assert np.any(m.coef_) or np.any(m.intercept_)
    with pytest.raises(ValueError, match="Ill-posed"):
        l1_min_c(np.zeros((2, 2)), [0, 1])


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("make", [
    lambda: LinearSVC(loss="hinge", dual=True, random_state=0, max_iter=50),
    lambda: LinearSVC(dual=False, max_iter=50),
    lambda: LinearSVC(penalty="l1", dual=False, random_state=0, max_iter=50),
    lambda: LinearSVC(multi_class="crammer_singer", random_state=0, max_iter=50),
    lambda: LinearSVR(random_state=0, max_iter=50),
], ids=["dcd", "tron", "cdn", "crammer_singer", "dcd-svr"])
@pytest.mark.parametrize("sparse", [False, True])
def test_interpreted_tier_equals_compiled(make, sparse):
    """svmlab._jit's contract: a small call may run the kernels' Python bodies
    (interpreted tier) and must give the compiled results bit for bit."""
    from svmlab import _jit

    X, y = make_classification(60, 5, n_informative=3, n_classes=3, random_state=0)
    X[np.abs(X) < 0.4] = 0.0
    Xs = sp.csr_matrix(X) if sparse else X
    old = _jit.get_mode()
    try:
        _jit.set_mode("interpret")
        a = make().fit(Xs, y)
        _jit.set_mode("eager")
        b = make().fit(Xs, y)
    finally:
        _jit.set_mode(old)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.intercept_, b.intercept_)
    assert a.n_iter_ == b.n_iter_


@pytest.mark.parametrize("solver", ["tron", "dcd"])
def test_dense_input_with_few_nonzeros_reads_sparse_rows_same_iterates(binary, solver, monkeypatch):
    """A dense X with at most half non-zeros is read through CSR rows of its
    non-zeros (svmlab.linear._runs.sparse_kernel_data); the sums skip only
    ``+ 0`` terms, so the fit is bit for bit the dense loop's."""
    from svmlab.linear import _runs

    X, y = binary[0].copy(), binary[1]
    X[np.abs(X) < 1.5] = 0.0
    assert np.count_nonzero(X) <= _runs.DCD_SPARSE_BELOW * X.size
    kw = dict(solver=solver, dual=solver == "dcd", C=0.3, tol=1e-6, max_iter=5000,
              random_state=2)
    run = LinearSVC(**kw).start(X, y)
    assert run.data[0]                                      # the sparse path
    fast = LinearSVC(**kw).fit(X, y)
    monkeypatch.setattr(_runs, "DCD_SPARSE_BELOW", -1.0)    # force the dense loop
    assert not LinearSVC(**kw).start(X, y).data[0]
    dense = LinearSVC(**kw).fit(X, y)
    np.testing.assert_array_equal(fast.coef_, dense.coef_)
    np.testing.assert_array_equal(fast.intercept_, dense.intercept_)
    assert fast.n_iter_ == dense.n_iter_


@pytest.mark.parametrize("B", [0.0, 1.0, 2.5])
def test_cdn_columns_equal_the_scipy_transposition(B):
    """CDN's one-pass column build (``_cdn.columns``) gives bit for bit what
    scipy's chain gives (bias column, ``y_i x_ij``, CSC with sorted rows,
    ``sum_i (v v) C_i``), with stored zeros, unsorted rows and an empty row
    in the input."""
    from svmlab.linear._cdn import columns

    rng = np.random.default_rng(3)
    n, d = 40, 9
    A = rng.standard_normal((n, d)) * (rng.random((n, d)) < 0.4)
    A[5] = 0.0
    X = sp.csr_matrix(A)
    X.data[::7] = 0.0                       # stored zeros
    X.has_sorted_indices = False
    for i in range(n):                      # reverse each row's order
        s, e = X.indptr[i], X.indptr[i + 1]
        X.indices[s:e] = X.indices[s:e][::-1].copy()
        X.data[s:e] = X.data[s:e][::-1].copy()
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    C = rng.uniform(0.1, 3.0, n)
    bias = sp.csr_matrix(np.full((n, 1), B)) if B else sp.csr_matrix((n, 1))
    Xc = sp.csc_matrix(sp.diags(y) @ sp.hstack([X, bias], format="csr"))
    Xc.eliminate_zeros()
    Xc.sort_indices()
    want_sq = np.array([np.sum(Xc[:, j].toarray().ravel() ** 2 * C) for j in range(d + 1)])
    vals, rows, colptr, xj_sq = columns(X.data, X.indices, X.indptr, y, B, d, C)
    assert rows.dtype == np.uint32
    np.testing.assert_array_equal(colptr, Xc.indptr)
    np.testing.assert_array_equal(rows, Xc.indices)
    np.testing.assert_array_equal(vals, Xc.data)
    np.testing.assert_allclose(xj_sq, want_sq, rtol=1e-14)
