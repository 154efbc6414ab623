"""The cutting-plane speed-ups of issue 16 (second round), each against an
independent computation:

* the branch-free sweep of the exact line search (``_ocas._search``) against
  the full-sort version and a brute-force grid, with rows whose direction is
  0 (their quotient a/b is inf or nan and must be ignored), minimisers on
  both sides of k = 1, and example weights;
* the index-only passes for binary CSR matrices (``data=None``) against the
  passes that read the stored ones, bit for bit, and against NumPy;
* the reduced QP's partial Newton steps: warm and cold solves reach the
  optimum that scipy's SLSQP finds, with the KKT conditions checked here;
* OCAS's stopping certificate: the lower bound it stops on, recomputed here
  from its cuts, is below LIBLINEAR's optimum and within C epsilon of the
  primal of the returned w;
* third round: the line search's vectorised slopes against NumPy's masked
  sums, its blocked sweep at block edges and its bracketed path against the
  full sort and a grid; the counting-sort row grouping against NumPy's
  stable argsort; the binary oracle's index-only grouping.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize
from sklearn.svm import LinearSVC

from svmlab.cutting_plane._oracle import ClassifierOracle, uidx
from svmlab.cutting_plane._ocas import (
    cut_csr,
    exact_line_search,
    margins_csr,
    margins_csr_parallel,
    ocas_step,
)
from svmlab.reference.cutting_plane import exact_line_search_sorted, line_objective
from svmlab.cutting_plane._passes import cls_pass_csr
from svmlab.cutting_plane._qp import solve_op3_dual
from svmlab.cutting_plane.estimators import CuttingPlaneClassifier


# --------------------------------------------------------------------------
# line search
# --------------------------------------------------------------------------
def _segment(seed, n, zero_frac, far):
    rng = np.random.default_rng(seed)
    mb = rng.normal(0.8, 0.7, size=n)
    dm = rng.normal(0.0, 1.0 if not far else 0.05, size=n)
    dm[rng.random(n) < zero_frac] = 0.0          # rows the direction does not move
    mb[rng.random(n) < 0.05] = 1.0               # rows exactly at the hinge (a = 0)
    wd = float(rng.normal()) * (0.1 if far else 1.0)
    dd = float(rng.uniform(0.01, 2.0))
    return 0.5, wd, dd, mb, dm


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("far", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_branch_free_line_search_matches_sort_and_brute_force(seed, far, weighted):
    ww, wd, dd, mb, dm = _segment(seed, 3000, 0.2, far)
    rng = np.random.default_rng(100 + seed)
    v = rng.uniform(0.2, 3.0, size=mb.size) if weighted else None
    for Cn in (1e-3, 0.05, 2.0):
        k = exact_line_search(wd, dd, mb, dm, Cn, v)
        assert np.isfinite(k) and k >= 0.0
        if v is None:
            assert k == pytest.approx(exact_line_search_sorted(wd, dd, mb, dm, Cn),
                                      rel=1e-12, abs=1e-15)
        f_k = float(line_objective(k, ww, wd, dd, mb, dm, Cn, v))
        grid = np.linspace(0.0, 3.0 * max(k, 1.0), 4001)
        vals = line_objective(grid, ww, wd, dd, mb, dm, Cn, v)
        assert f_k <= vals.min() + 1e-12 * max(1.0, abs(f_k))


def test_ocas_step_updates_the_margins_as_numpy_does():
    rng = np.random.default_rng(3)
    n = 2000
    mb = rng.normal(0.8, 0.7, size=n)
    mt = mb + rng.normal(0.0, 0.5, size=n)
    mt[:100] = mb[:100]                       # direction 0 on some rows
    wd, dd, Cn, mu = -0.3, 0.7, 0.02, 0.1
    kk, jump, mc = np.empty(2 * n), np.empty(2 * n), np.empty(n)
    mb_in = mb.copy()
    k, hinge = ocas_step(wd, dd, mb_in, mt, Cn, mu, mc, kk, jump)
    assert k == pytest.approx(exact_line_search_sorted(wd, dd, mb, mt - mb, Cn),
                              rel=1e-12, abs=1e-15)
    new_mb = mb + k * (mt - mb) if k > 0 else mb
    np.testing.assert_allclose(mb_in, new_mb, rtol=0, atol=1e-15)
    np.testing.assert_allclose(mc, (1 - mu) * new_mb + mu * mt, rtol=0, atol=1e-15)
    assert hinge == pytest.approx(np.maximum(0.0, 1.0 - new_mb).sum(), rel=1e-12)


# --------------------------------------------------------------------------
# binary CSR: index-only passes
# --------------------------------------------------------------------------
def _binary(seed=4, n=3000, d=120, density=0.08):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, format="csr", random_state=seed)
    X.data[:] = 1.0
    y = np.where(rng.random(n) < 0.3, 1.0, -1.0)
    return X, y, rng


def test_binary_passes_equal_the_passes_reading_the_ones_exactly():
    X, y, rng = _binary()
    n, d = X.shape
    idx, ptr = X.indices, X.indptr
    w = rng.normal(size=d + 1) * 0.3
    for B in (0.0, 1.0):
        a, b, c = np.empty(n), np.empty(n), np.empty(n)
        margins_csr(X.data, idx, ptr, y, w, B, a)
        margins_csr(None, idx, ptr, y, w, B, b)
        margins_csr_parallel(None, idx, ptr, y, w, B, c)
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)
        np.testing.assert_allclose(a, y * (X @ w[:-1] + w[-1] * B), rtol=1e-13, atol=1e-13)
        for v in (None, rng.uniform(0.5, 2.0, size=n)):
            g1, g2 = np.zeros(d + 1), np.zeros(d + 1)
            m1, m2 = np.zeros(n, np.uint8), np.zeros(n, np.uint8)
            r1 = cut_csr(X.data, idx, ptr, y, a, B, g1, m1, v)
            r2 = cut_csr(None, idx, ptr, y, a, B, g2, m2, v)
            assert r1 == r2
            np.testing.assert_array_equal(g1, g2)
            np.testing.assert_array_equal(m1, m2)
            g3, m3 = np.zeros(d + 1), np.zeros(n, np.uint8)
            r3 = cls_pass_csr(None, idx, ptr, y, w, B, g3, m3, v)
            assert r3[0] == r1[0]
            np.testing.assert_array_equal(m3, m1)
            np.testing.assert_allclose(g3, g1, rtol=1e-13, atol=1e-13)
            # against NumPy: g = sum over violated rows of v_i y_i [x_i, B]
            viol = a < 1.0
            coef = y * (1.0 if v is None else v) * viol
            np.testing.assert_allclose(g1[:-1], X.T @ coef, rtol=1e-12, atol=1e-12)
            assert g1[-1] == pytest.approx(B * coef.sum(), rel=1e-12, abs=1e-12)


def test_oracle_reads_binary_csr_by_index_only_and_fits_are_unchanged(monkeypatch):
    X, y, _ = _binary(seed=9, n=1500, d=60, density=0.1)
    assert ClassifierOracle(X, y, 1.0).data is None
    Xr = X.copy()
    Xr.data[0] = 2.0
    assert ClassifierOracle(Xr, y, 1.0).data is Xr.data
    kw = dict(C=150.0, epsilon=1e-4, max_iter=-1, progress=False)
    fast = {m: CuttingPlaneClassifier(method=m, **kw).fit(X, y) for m in ("ocas", "joachims")}
    # the same fits with the passes made to read the stored ones
    init = ClassifierOracle.__init__

    def keep_data(self, X, y, B, v=None, **kw):
        init(self, X, y, B, v, **kw)
        if sp.issparse(X):
            self.data = self.X.data

    monkeypatch.setattr(ClassifierOracle, "__init__", keep_data)
    for m, est in fast.items():
        slow = CuttingPlaneClassifier(method=m, **kw).fit(X, y)
        assert slow.n_iter_ == est.n_iter_
        np.testing.assert_allclose(slow.coef_, est.coef_, rtol=1e-12, atol=1e-13)


# --------------------------------------------------------------------------
# rows grouped by length
# --------------------------------------------------------------------------
def _ragged(seed=2, n=1200, d=80):
    """CSR rows of very different lengths (1 to ~40 values), real values."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 40, size=n)
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    indices = np.concatenate([np.sort(rng.choice(d, size=k, replace=False))
                              for k in lengths]).astype(np.int32)
    X = sp.csr_matrix((rng.normal(size=indptr[-1]), indices, indptr), shape=(n, d))
    y = np.sign(X @ rng.normal(size=d) + 0.3 * rng.normal(size=n))
    y[y == 0] = 1
    return X, y, rng


def test_row_grouping_permutes_consistently():
    from svmlab.cutting_plane._ocas import permute_csr_rows, row_grouping

    X, y, rng = _ragged()
    perm = row_grouping(X.indptr)
    assert perm is not None
    lengths = np.diff(X.indptr)
    assert np.all(np.diff(lengths[perm]) >= 0)
    data, indices, indptr = (np.empty_like(X.data), np.empty_like(X.indices),
                             np.empty_like(X.indptr))
    permute_csr_rows(X.data, X.indices, X.indptr, perm, data, indices, indptr)
    Xp = sp.csr_matrix((data, indices, indptr), shape=X.shape)
    assert (Xp != X[perm]).nnz == 0
    # uniform rows are left alone
    assert row_grouping(np.arange(0, 14 * 50 + 1, 14)) is None
    # the oracle's margins and masks are in its own order, masks given out in the caller's
    o = ClassifierOracle(X, y, 1.0, group_rows=True)
    assert o.perm is not None
    w = rng.normal(size=X.shape[1] + 1)
    m = o.margins(w)
    np.testing.assert_allclose(m, (y * (X @ w[:-1] + w[-1]))[o.perm], rtol=1e-12, atol=1e-12)
    *_, detail = o.cut(m, True)
    np.testing.assert_array_equal(detail["constraint"], y * (X @ w[:-1] + w[-1]) < 1.0)


@pytest.mark.parametrize("weighted", [False, True])
def test_grouped_rows_give_the_same_ocas_fit_and_records(monkeypatch, weighted):
    import svmlab.cutting_plane._oracle as oracle_mod

    X, y, rng = _ragged(seed=5)
    sw = rng.uniform(0.5, 2.0, size=X.shape[0]) if weighted else None
    kw = dict(C=300.0, epsilon=1e-4, method="ocas", max_iter=-1, progress=False)
    grouped = CuttingPlaneClassifier(**kw).fit(X, y, sample_weight=sw)
    recs = list(CuttingPlaneClassifier(**{**kw, "max_iter": 6}).iter_fit(X, y, sample_weight=sw))
    monkeypatch.setattr(oracle_mod, "row_grouping", lambda indptr: None)
    plain = CuttingPlaneClassifier(**kw).fit(X, y, sample_weight=sw)
    recs_plain = list(CuttingPlaneClassifier(**{**kw, "max_iter": 6}).iter_fit(
        X, y, sample_weight=sw))
    assert grouped.n_iter_ == plain.n_iter_
    # the sums run in another order, so the iterates differ by rounding
    # (amplified by the QP's conditioning); the objectives agree closely
    np.testing.assert_allclose(grouped.coef_, plain.coef_, rtol=1e-5, atol=1e-7)
    v = np.ones(X.shape[0]) if sw is None else sw

    def F(est):  # the paper's objective with the bias as a constant feature
        w = np.concatenate([est.coef_[0], est.intercept_])
        marg = y * (X @ est.coef_[0] + est.intercept_[0])
        return 0.5 * w @ w + kw["C"] / X.shape[0] * (v * np.maximum(0.0, 1.0 - marg)).sum()

    assert F(grouped) == pytest.approx(F(plain), rel=1e-9)
    for a, b in zip(recs, recs_plain):
        np.testing.assert_array_equal(a.constraint, b.constraint)
        # and the mask is the cut at w_c, recomputed here in the caller's order
        marg = y * (X @ a.cut_w + a.cut_b)
        np.testing.assert_array_equal(a.constraint, marg < 1.0)


# --------------------------------------------------------------------------
# reduced QP: partial Newton steps
# --------------------------------------------------------------------------
def _dual(a, G, d):
    w = a @ G
    return float(a @ d - 0.5 * w @ w)


def _kkt(a, H, d, C):
    grad = np.concatenate([[0.0], H @ a - d])
    aa = np.concatenate([[C - a.sum()], a])
    return grad[aa > 1e-12 * C].max() - grad.min()


@pytest.mark.parametrize("seed", range(4))
def test_qp_warm_and_cold_reach_the_slsqp_optimum_on_many_cuts(seed):
    """Cutting-plane-like working sets: many cuts (K = 40) of low rank with
    nearly parallel vectors (ill-conditioned H), large C."""
    rng = np.random.default_rng(seed)
    K, D = 40, 12
    base = rng.normal(size=D)
    G = base + 0.15 * rng.normal(size=(K, D))
    G /= np.sqrt(D)
    d = rng.uniform(0.2, 1.0, size=K)
    H = G @ G.T
    C = [5.0, 50.0, 500.0, 5000.0][seed]
    cold, _ = solve_op3_dual(H, d, C)
    # warm start as OCAS does: the optimum of the first K - 1 cuts, new cut at 0
    prev, _ = solve_op3_dual(H[:-1, :-1], d[:-1], C)
    warm, _ = solve_op3_dual(H, d, C, alpha0=np.concatenate([prev, [0.0]]))
    res = minimize(lambda x: -(x @ d - 0.5 * x @ H @ x), np.full(K, C / (2 * K)),
                   jac=lambda x: -(d - H @ x), method="SLSQP", bounds=[(0, None)] * K,
                   constraints=[{"type": "ineq", "fun": lambda x: C - x.sum(),
                                 "jac": lambda x: -np.ones(K)}],
                   options={"ftol": 1e-15, "maxiter": 3000})
    ref = _dual(np.maximum(res.x, 0.0), G, d)
    scale = max(1.0, abs(ref))
    for a in (cold, warm):
        assert a.min() >= 0.0 and a.sum() <= C * (1 + 1e-12)
        assert _dual(a, G, d) >= ref - 1e-8 * scale
        assert _kkt(a, H, d, C) <= 1e-8 * max(1.0, C * np.diag(H).max())
    assert _dual(warm, G, d) == pytest.approx(_dual(cold, G, d), rel=1e-10, abs=1e-12)


# --------------------------------------------------------------------------
# OCAS's certificate, recomputed from its cuts
# --------------------------------------------------------------------------
@pytest.mark.parametrize("eps", [1e-3, 1e-4])
def test_ocas_lower_bound_recomputed_from_its_cuts_is_valid(eps):
    rng = np.random.default_rng(21)
    n, dim = 2000, 30
    X = rng.normal(size=(n, dim))
    y = np.sign(X @ rng.normal(size=dim) + 0.8 * rng.normal(size=n))
    C_lib = 0.5
    est = CuttingPlaneClassifier(C=C_lib * n, epsilon=eps, fit_intercept=False,
                                 method="ocas", max_iter=-1, progress=False)
    run = est.start(X, y)
    while run._iterate(False) is not None:
        pass
    assert run.converged
    K = run.K
    alpha = run._a[1:K + 1]
    G, d = run._G[:K], run._d[1:K + 1]
    assert alpha.min() >= 0.0 and alpha.sum() <= run.C * (1 + 1e-12)
    w = alpha @ G
    lower = float(alpha @ d - 0.5 * w @ w)          # OP3 dual value, any feasible alpha
    ll = LinearSVC(loss="hinge", dual=True, fit_intercept=False, C=C_lib, tol=1e-10,
                   max_iter=1_000_000).fit(X, y)
    y_pm = np.where(y > 0, 1.0, -1.0)

    def F(v):  # the paper's objective, C / n = C_lib
        return 0.5 * v @ v + C_lib * np.maximum(0.0, 1.0 - y_pm * (X @ v)).sum()

    p_star = F(ll.coef_[0])
    w_b = run.w_best[:-1]
    assert lower <= p_star * (1 + 1e-9)
    assert F(w_b) - lower <= run.C * eps * (1 + 1e-9)
    assert F(w_b) - p_star <= run.C * eps


# --------------------------------------------------------------------------
# the incremental cut
# --------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["dense", "csr", "binary"])
@pytest.mark.parametrize("weighted", [False, True])
def test_incremental_cut_equals_the_cut_summed_afresh(fmt, weighted):
    from svmlab.cutting_plane._ocas import cut_dense, cut_update_csr, cut_update_dense

    rng = np.random.default_rng(8)
    n, d = 900, 25
    Xd = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.3)
    if fmt == "binary":
        Xd = (Xd != 0).astype(float)
    X = sp.csr_matrix(Xd)
    data = None if fmt == "binary" else X.data
    y = np.where(rng.random(n) < 0.4, 1.0, -1.0)
    v = rng.uniform(0.3, 2.0, size=n) if weighted else None
    g_run, mask = np.zeros(d + 1), np.zeros(n, np.uint8)
    w = rng.normal(size=d + 1)
    for step in range(12):   # a sequence of nearby cutting points
        w = w + 0.15 * rng.normal(size=d + 1)
        marg = y * (Xd @ w[:-1] + w[-1])
        if fmt == "dense":
            got = cut_update_dense(Xd, y, marg, 1.0, g_run, mask, v)
        else:
            got = cut_update_csr(data, X.indices, X.indptr, y, marg, 1.0, g_run, mask, v)
        g_ref, m_ref = np.zeros(d + 1), np.zeros(n, np.uint8)
        ref = cut_dense(Xd, y, marg, 1.0, g_ref, m_ref, v)
        assert got[0] == ref[0]
        assert got[1] == pytest.approx(ref[1], rel=1e-12)
        assert got[2] == pytest.approx(ref[2], rel=1e-12)
        np.testing.assert_array_equal(mask, m_ref)
        np.testing.assert_allclose(g_run, g_ref, rtol=1e-11, atol=1e-11)
        if step:
            assert got[3] < n  # only the changed rows were touched
        # and against NumPy
        coef = y * (1.0 if v is None else v) * (marg < 1.0)
        np.testing.assert_allclose(g_run[:-1], Xd.T @ coef, rtol=1e-11, atol=1e-11)


# --------------------------------------------------------------------------
# line search, third round: vectorised slopes, blocked breakpoint sweep
# --------------------------------------------------------------------------
@pytest.mark.parametrize("weighted", [False, True])
def test_line_search_slopes_equal_numpy_masked_sums(weighted):
    from svmlab.cutting_plane._ocas import _slopes

    ww, wd, dd, mb, dm = _segment(8, 1001, 0.2, False)
    rng = np.random.default_rng(9)
    wt = rng.uniform(0.2, 3.0, size=mb.size) if weighted else None
    v = np.ones_like(mb) if wt is None else wt
    a, b = 1.0 - mb, dm
    for Cn in (1e-3, 0.7):
        s0, s1, n_low = _slopes(wd, mb, dm, False, Cn, wt)
        assert n_low == np.count_nonzero(((b > 0) & (0 < a) & (a < b))
                                         | ((b < 0) & (b < a) & (a < 0)))
        act0 = (a > 0) | ((a == 0) & (b < 0))
        act1 = (a - b > 0) | ((a - b == 0) & (b < 0))
        scale = Cn * np.abs(v * b).sum() + abs(wd)
        assert s0 == pytest.approx(wd - Cn * (v * b)[act0].sum(), rel=0, abs=1e-13 * scale)
        assert s1 == pytest.approx(wd - Cn * (v * b)[act1].sum(), rel=0, abs=1e-13 * scale)
        # the same with the direction given by the target's margins
        t0, t1, _ = _slopes(wd, mb, mb + dm, True, Cn, wt)
        assert (t0, t1) == pytest.approx((s0, s1), rel=1e-12, abs=1e-13 * scale)


@pytest.mark.parametrize("n", [1, 2, 15, 16, 17, 33, 250])
@pytest.mark.parametrize("far", [False, True])
def test_blocked_sweep_at_block_edges_matches_the_sort(n, far):
    """Row counts around the sweep's block size (16), minimisers on both
    sides of k = 1, rows without a breakpoint."""
    for seed in range(4):
        ww, wd, dd, mb, dm = _segment(50 + seed, n, 0.3, far)
        for Cn in (1e-3, 0.05, 2.0):
            k = exact_line_search(wd, dd, mb, dm, Cn)
            assert k == pytest.approx(exact_line_search_sorted(wd, dd, mb, dm, Cn),
                                      rel=1e-12, abs=1e-15)
            f_k = float(line_objective(k, ww, wd, dd, mb, dm, Cn))
            grid = np.linspace(0.0, 3.0 * max(k, 1.0), 2001)
            assert f_k <= line_objective(grid, ww, wd, dd, mb, dm, Cn).min() + 1e-12 * max(
                1.0, abs(f_k))


def test_row_grouping_is_the_stable_argsort_of_the_lengths():
    """The counting sort of row_grouping against numpy's stable argsort."""
    from svmlab.cutting_plane._ocas import row_grouping

    rng = np.random.default_rng(12)
    for _ in range(30):
        lengths = rng.integers(0, 40, size=int(rng.integers(2, 600)))
        indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
        perm = row_grouping(indptr)
        if perm is not None:
            np.testing.assert_array_equal(perm, np.argsort(lengths, kind="stable"))


def test_grouped_binary_oracle_moves_only_the_indices():
    """A binary CSR matrix grouped by row length: the oracle reads indices
    only (data None) and its margins equal numpy's in its row order."""
    X, y, rng = _ragged()
    X = X.copy()
    X.data[:] = 1.0
    before = X.copy()
    o = ClassifierOracle(X, y, 1.0, group_rows=True)
    assert o.perm is not None and o.data is None
    w = rng.normal(size=X.shape[1] + 1)
    np.testing.assert_allclose(o.margins(w), (y * (X @ w[:-1] + w[-1]))[o.perm],
                               rtol=1e-12, atol=1e-12)
    assert (X != before).nnz == 0  # the caller's matrix is untouched


@pytest.mark.parametrize("weighted", [False, True])
def test_bracketed_line_search_matches_the_sort(weighted):
    """The bracketed path (regula-falsi pivots tested by vectorised passes,
    then the quickselect on the few breakpoints left) against the full
    sort and a brute-force grid, on segments whose minimiser is in (0, 1]
    with most rows having their breakpoint there (as in early OCAS
    iterations); called directly, since the fits use it above 4096 such
    rows only."""
    from svmlab.cutting_plane._ocas import _search_bracketed, _slopes

    done = 0
    for seed in range(40):
        rng = np.random.default_rng(300 + seed)
        n = 5000
        mb = rng.normal(0.5, 0.8, size=n)
        mt = mb + rng.normal(0.0, 1.5, size=n)
        mt[rng.random(n) < 0.1] = mb[rng.random(n) < 0.1].mean()
        wd, dd = float(rng.normal()), float(rng.uniform(0.01, 2.0))
        wt = rng.uniform(0.2, 3.0, size=n) if weighted else None
        for Cn in (1e-3, 0.02, 0.5):
            s0, s1, n_low = _slopes(wd, mb, mt, True, Cn, wt)
            if s0 >= 0.0 or dd + s1 < 0.0:
                continue  # minimiser not in (0, 1]
            kk, jump = np.empty(2 * n), np.empty(2 * n)
            k = _search_bracketed(wd, dd, mb, mt, True, Cn, kk, jump, wt, s0, s1)
            dm = mt - mb
            if wt is None:
                assert k == pytest.approx(exact_line_search_sorted(wd, dd, mb, dm, Cn),
                                          rel=1e-12, abs=1e-15)
            f_k = float(line_objective(k, 0.0, wd, dd, mb, dm, Cn, wt))
            grid = np.linspace(0.0, 1.0, 4001)
            assert f_k <= line_objective(grid, 0.0, wd, dd, mb, dm, Cn, wt).min() + 1e-12 * max(
                1.0, abs(f_k))
            done += 1
    assert done >= 20


@pytest.mark.parametrize("weighted", [False, True])
def test_algorithm1_binary_oracle_two_passes_equal_the_fused_pass(weighted):
    """Algorithm 1's oracle on binary CSR takes the margins pass and then the
    cut updated from the previous call (decision 28c01).  Over a run of
    unrelated points (more than CUT_REFRESH of them, so the periodic fresh
    sum is crossed) every answer equals the fused pass and NumPy's sums."""
    X, y, rng = _binary(seed=11, n=2000, d=80, density=0.1)
    n, d = X.shape
    v = rng.uniform(0.5, 2.0, size=n) if weighted else None
    o = ClassifierOracle(X, y, 1.0, v)
    assert o.data is None
    for k in range(ClassifierOracle.CUT_REFRESH + 8):
        w = rng.normal(size=d + 1) * (0.05 + 0.3 * (k % 3))
        g, off, loss, cnt, detail = o(w, k % 2 == 0)
        gf, mf = np.zeros(d + 1), np.zeros(n, np.uint8)
        cf, lf, of = cls_pass_csr(None, *uidx(X), y, w, 1.0, gf, mf, v)
        assert cnt == cf
        np.testing.assert_allclose(g, gf * (1.0 / n), rtol=1e-12, atol=1e-14)
        assert off == pytest.approx(of / n, rel=1e-12)
        assert loss == pytest.approx(lf / n, rel=1e-12)
        m = y * (X @ w[:-1] + w[-1])
        viol = m < 1.0
        vv = np.ones(n) if v is None else v
        np.testing.assert_allclose(g[:-1], X.T @ (vv * y * viol) / n, rtol=1e-12, atol=1e-14)
        assert loss == pytest.approx(np.sum(vv * np.maximum(0.0, 1.0 - m)) / n, rel=1e-12)
        if k % 2 == 0:
            np.testing.assert_array_equal(detail["constraint"], viol)
        if not weighted:  # integer partial sums: the update is exact
            np.testing.assert_array_equal(g, gf * (1.0 / n))


def test_algorithm1_groups_rows_of_binary_csr_only():
    """Algorithm 1's oracle reorders the rows of a binary CSR matrix by
    length (its margins pass gains) and keeps real-valued CSR in file order
    (the fused pass there lost to the grouping; decision 28c01); the fit is
    the same either way up to rounding."""
    X, y, _ = _binary(seed=5, n=1500, d=60, density=0.1)
    Xr = X.copy()
    Xr.data = Xr.data * np.linspace(0.5, 1.5, Xr.nnz)
    kw = dict(C=30.0, progress=False, epsilon=1e-4)
    for data, grouped in ((X, True), (Xr, False)):
        run = CuttingPlaneClassifier(**kw).start(data, y)
        assert (run.oracle.perm is not None) == grouped
        a = CuttingPlaneClassifier(**kw).fit(data, y)
        # the same run with the rows in file order (y is already -1/+1)
        b = CuttingPlaneClassifier(**kw).start(data, y)
        b.oracle = ClassifierOracle(data, y, 1.0, group_rows=False)
        steps = b._advance(10_000)
        assert b.converged and a.n_iter_ == steps
        np.testing.assert_allclose(a.coef_[0], b.w[:-1], rtol=1e-9, atol=1e-12)
