"""IRWLS-SVC (Perez-Cruz et al. 2000): optimum vs LIBSVM, KKT, the set
reordering rules a-d on hand-made cases, records, stop/resume, bad input.

Objectives and KKT violations are computed here from ``alpha_`` and
``intercept_`` with ``tests/reference.py`` (sklearn's pairwise kernels)."""

import os
import subprocess
import sys

import numpy as np
import pytest
from sklearn.datasets import make_classification

from svmlab.decomposition._active_set import S1, S2, S3, ActiveSetSubproblem
from svmlab.decomposition.irwls import IRWLSClassifier, IRWLSRecord

from conftest import require_shared_data
from reference import dual_objective, gram, kkt_violation, libsvm_dual, to_pm


def _data(n=200, seed=0, d=5):
    return make_classification(n, d, n_informative=3, random_state=seed, flip_y=0.1)


def _check_vs_libsvm(model, X, y, C, kernel="rbf", gamma=0.5, degree=3, coef0=0.0, rel=1e-3):
    _, _, W_ref = libsvm_dual(X, y, C, kernel, gamma, degree, coef0)
    K = gram(X, kernel, gamma, degree, coef0)
    yp = to_pm(y, model.classes_)
    a = model.alpha_
    assert np.all(a >= 0) and np.all(a <= C)
    assert abs(np.dot(a, yp)) < 1e-6 * max(1.0, C)
    W = dual_objective(K, yp, a)
    assert abs(W - W_ref) <= rel * abs(W_ref), (W, W_ref)
    kkt = kkt_violation(K, yp, a, model.intercept_[0], C)
    assert kkt <= model.tol * 1.0001, kkt
    # prediction agrees with the dual decision function computed here
    f = K @ (a * yp) + model.intercept_[0]
    np.testing.assert_allclose(model.decision_function(X), f, atol=1e-8 * max(1, C))
    return W


@pytest.mark.parametrize("selection", ["random", "largest", "smallest", "mixed"])
def test_selection_strategies_small_working_set(selection):
    X, y = _data(250)
    m = IRWLSClassifier(C=1.0, gamma=0.5, working_set_size=25, selection=selection,
                        random_state=0).fit(X, y)
    # a working set smaller than the number of support vectors
    assert len(m.support_) > 25
    assert m.n_chunks_ > 1
    _check_vs_libsvm(m, X, y, 1.0)


@pytest.mark.parametrize("kernel,gamma,C", [("rbf", 0.5, 1.0), ("poly", 0.2, 1.0),
                                             ("linear", 1.0, 0.1), ("rbf", 0.5, 1000.0)])
def test_kernels_and_large_C(kernel, gamma, C):
    X, y = _data(120 if C > 100 else 200, seed=1)
    m = IRWLSClassifier(C=C, kernel=kernel, gamma=gamma, coef0=1.0,
                        working_set_size=60, random_state=0).fit(X, y)
    _check_vs_libsvm(m, X, y, C, kernel, gamma, 3, 1.0)


@pytest.mark.parametrize("cap", [0, 1, 10])
def test_linear_kernel_no_subproblem_runs_to_max_iter(cap, monkeypatch):
    # issue 15: the linear kernel (rank 3 here: make_classification's 2
    # redundant features) stalled IRWLS with a release cap, and made its
    # sub-problems run to max_iter without one: a freed violator alone at
    # S1 empty cannot move (sum beta fixed), and the nearly singular K_11
    # took the direction off the plane sum beta = s0.  Every working set
    # must now end on its own (done before 50 m + 200 iterations) and the
    # fit converge to LIBSVM's optimum
    import svmlab.decomposition._active_set as eng
    monkeypatch.setattr(eng, "RELEASE_CAP", cap)
    X, y = _data(200, seed=1)
    m = IRWLSClassifier(C=0.1, kernel="linear", working_set_size=60, random_state=0)
    per_chunk = {}
    for r in m.iter_fit(X, y):
        per_chunk[r.chunk] = per_chunk.get(r.chunk, 0) + 1
    assert m.converged_
    assert max(per_chunk.values()) < 50 * 60 + 200, per_chunk
    _check_vs_libsvm(m, X, y, 0.1, "linear", 1.0)


def test_line_mode_direction_stays_on_the_plane_with_singular_K11():
    # a rank-2 kernel (linear, 2-D points): the sub-problem solved in the
    # line-search mode keeps sum beta = s0 to rounding and stops at a KKT
    # point (it used to wander off the plane by 1e-7 and run to max_iter)
    rng = np.random.default_rng(3)
    X = rng.standard_normal((60, 2))
    y = np.where(X[:, 0] - X[:, 1] + 0.7 * rng.standard_normal(60) > 0, 1.0, -1.0)
    K = X @ X.T
    C, tol = 0.1, 1e-3
    sub = ActiveSetSubproblem(K, y, np.zeros(60), y.copy(), C, tol, mode="line", s0=0.0)
    while not sub.done:
        sub.iterate()
        assert abs(sub.beta.sum()) <= 1e-12
    assert sub.n_iter < sub.max_iter
    a = y * sub.beta
    e = y - K @ sub.beta - sub.b
    free = (a > 1e-12) & (a < C - 1e-12)
    assert np.all(y[a <= 0] * e[a <= 0] <= tol * 1.0001)
    assert np.all(y[a >= C] * e[a >= C] >= -tol * 1.0001)
    assert np.all(np.abs(e[free]) <= tol * 1.0001)
    _, _, W_ref = libsvm_dual(X, y, C, "linear", 1.0)
    assert abs(dual_objective(K, y, np.clip(a, 0, C)) - W_ref) <= 1e-3 * abs(W_ref)


def test_whole_set_in_one_chunk_and_sparse_input():
    import scipy.sparse as sp
    X, y = _data(150, seed=2)
    m = IRWLSClassifier(C=10.0, gamma=0.3).fit(sp.csr_matrix(X), y)
    assert m.n_chunks_ == 1
    _check_vs_libsvm(m, X, y, 10.0, gamma=0.3)


def test_shared_data_banana_and_diabetes():
    require_shared_data()
    from svmlab.datasets import load

    X, y = load("banana", "train")  # Ratsch's 400 training rows
    X = X.toarray()
    # sigma = 1 -> gamma = 1 / (2 sigma^2) = 0.5
    m = IRWLSClassifier(C=100.0, gamma=0.5, working_set_size=100, random_state=0).fit(X, y)
    _check_vs_libsvm(m, X, y, 100.0)
    X, y = load("diabetes", "all")
    X = X.toarray()[:300]
    y = y[:300]
    X = (X - X.mean(0)) / X.std(0)
    m = IRWLSClassifier(C=10.0, gamma=1 / 8, working_set_size=80, random_state=0).fit(X, y)
    _check_vs_libsvm(m, X, y, 10.0, gamma=1 / 8)


# ------------------------------------------------------------ rules a-d
def _bordered_solution(K, y):
    m = len(y)
    M = np.zeros((m + 1, m + 1))
    M[:m, :m] = K
    M[:m, m] = 1
    M[m, :m] = 1
    return np.linalg.solve(M, np.append(y, 0.0))


def _rbf1d(x, gamma=0.5):
    x = np.asarray(x, float)
    return np.exp(-gamma * (x[:, None] - x[None, :]) ** 2)


def test_rule_c_moves_violating_S2_samples_to_S1():
    K = np.eye(2)
    y = np.array([1.0, -1.0])
    sub = ActiveSetSubproblem(K, y, np.zeros(2), y.copy(), C=5.0, tol=1e-3, mode="table1",
                              handover=False)
    assert list(sub.sets) == [S2, S2]
    sub.iterate()  # S1 empty: b from the bounds (0), e = y, y e = 1 > tol
    assert sub.moved == (0, 0, 2, 0)
    assert list(sub.sets) == [S1, S1]


def test_rule_d_moves_violating_S3_samples_to_S1():
    K = np.eye(2)
    y = np.array([1.0, -1.0])
    C = 5.0
    sub = ActiveSetSubproblem(K, y, C * y, y.copy(), C=C, tol=1e-3, mode="table1",
                              handover=False)
    assert list(sub.sets) == [S3, S3]
    sub.iterate()
    # v = y - K beta = (-4, 4); e y = -4 < 0 for both: they leave S3
    assert sub.moved == (0, 0, 0, 2)
    assert list(sub.sets) == [S1, S1]
    sub.iterate()  # now (3) on both: beta = y (b = 0), inside the box
    np.testing.assert_allclose(sub.beta, y, atol=1e-12)
    assert sub.done


def test_rule_a_moves_negative_beta_to_S2():
    x = [0.0, 0.4, 0.8, 3.0]
    y = np.array([1.0, 1.0, 1.0, -1.0])
    K = _rbf1d(x)
    sol = _bordered_solution(K, y)
    yb = y * sol[:4]
    assert yb[1] < 0 and np.all(np.delete(yb, 1) > 0)  # the hand-made case
    C = 100.0  # large enough that no sample exceeds C
    assert yb.max() < C
    sub = ActiveSetSubproblem(K, y, np.zeros(4), y.copy(), C=C, tol=1e-3, mode="table1",
                              handover=False)
    sub.iterate()  # rule c: all into S1
    sub.iterate()  # solve (3) on all four; rule a fires for sample 1
    assert sub.moved == (1, 0, 0, 0)
    assert sub.sets[1] == S2 and sub.beta[1] == 0.0
    np.testing.assert_allclose(np.delete(sub.beta, 1), np.delete(sol[:4], 1), rtol=1e-8)


def test_rule_b_moves_beta_above_C_to_S3():
    x = [0.0, 3.0, 6.0, 9.0]
    y = np.array([1.0, 1.0, -1.0, -1.0])
    K = _rbf1d(x)
    sol = _bordered_solution(K, y)
    C = 0.5
    assert np.all(y * sol[:4] > C)
    sub = ActiveSetSubproblem(K, y, np.zeros(4), y.copy(), C=C, tol=1e-3, mode="table1",
                              handover=False)
    sub.iterate()
    sub.iterate()
    assert sub.moved == (0, 4, 0, 0)
    assert np.all(sub.sets == S3)
    np.testing.assert_allclose(sub.beta, C * y)


@pytest.mark.parametrize("gap, mode", [(1e-15, "table1"), (1e-6, "line")])
def test_table1_downhill_test_ignores_rounding(gap, mode):
    """Table 1 leaves for the line-search mode when a full step lowers the
    dual by more than DOWNHILL_RTOL (1e-12, relative), not when it is lower
    by rounding.  S1 = {0, 1} starts at the optimum of (3) on it, so the
    step is rounding noise; the best value is set ``gap`` (relative) above
    this point's W: 1e-15 is rounding (Table 1 goes on), 1e-6 a real drop."""
    x = [0.0, 1.0, 2.5, 4.0]
    y = np.array([1.0, -1.0, 1.0, -1.0])
    K = _rbf1d(x)
    beta = np.zeros(4)
    beta[:2] = _bordered_solution(K[:2, :2], y[:2])[:2]
    C = 100.0
    sub = ActiveSetSubproblem(K, y, beta, y.copy(), C=C, tol=1e-3, mode="table1",
                              handover=False)
    assert list(sub.sets) == [S1, S1, S2, S2]
    W0 = dual_objective(K, y, np.clip(y * beta, 0, C))
    sub._best_W = W0 + gap * abs(W0)
    sub.iterate()
    assert sub.mode == mode
    if mode == "table1":
        assert sub.moved[2] >= 1  # rule c released the violators of S2
    sub.solve()
    _, _, W_ref = libsvm_dual(np.array(x)[:, None], y, C, gamma=0.5)
    a = np.clip(y * sub.beta, 0, C)
    assert abs(dual_objective(K, y, a) - W_ref) <= 1e-6 * abs(W_ref)


def test_line_search_mode_stops_at_first_bound():
    x = [0.0, 0.4, 0.8, 3.0]
    y = np.array([1.0, 1.0, 1.0, -1.0])
    K = _rbf1d(x)
    sub = ActiveSetSubproblem(K, y, np.zeros(4), y.copy(), C=100.0, tol=1e-3, mode="line")
    sub.iterate()
    sub.iterate()
    # feasible after every step: box and equality
    yb = y * sub.beta
    assert np.all(yb >= -1e-12) and np.all(yb <= 100.0 + 1e-12)
    assert abs(sub.beta.sum()) < 1e-12
    assert sub.moved[0] + sub.moved[1] >= 1
    sub.solve()
    # optimum of the 4-point dual, checked against LIBSVM
    _, _, W_ref = libsvm_dual(np.array(x)[:, None], y, 100.0, gamma=0.5)
    a = np.clip(y * sub.beta, 0, 100.0)
    assert abs(dual_objective(K, y, a) - W_ref) <= 1e-6 * abs(W_ref)


# -------------------------------------------------------------- records
def test_records_and_callback_stop():
    X, y = _data(150, seed=3)
    m = IRWLSClassifier(C=1.0, gamma=0.5, working_set_size=40, random_state=0)
    recs = list(m.iter_fit(X, y))
    assert len(recs) == m.n_iter_ and m.converged_
    assert [r.iteration for r in recs] == list(range(1, len(recs) + 1))
    yp = to_pm(y, m.classes_)
    C = 1.0
    for r in recs:
        assert isinstance(r, IRWLSRecord)
        assert len(r.working_set) == 40 and len(np.unique(r.working_set)) == 40
        yb = yp[r.working_set] * r.beta
        # weights (8): inf on S1, 0 on S2, C / (y e) on S3
        assert np.all(np.isinf(r.weights[r.sets == S1]))
        assert np.all(r.weights[r.sets == S2] == 0)
        s3 = (r.sets == S3) & (r.ye > 0)
        np.testing.assert_allclose(r.weights[s3], C / r.ye[s3])
        if not (r.moved[0] or r.moved[1]) or r.mode == "line":
            assert np.all(yb >= -1e-12) and np.all(yb <= C + 1e-12)
    assert recs[-1].chunk == m.n_chunks_
    # stepped and fast paths give the same fit
    m2 = IRWLSClassifier(C=1.0, gamma=0.5, working_set_size=40, random_state=0).fit(X, y)
    np.testing.assert_array_equal(m2.alpha_, m.alpha_)
    assert m2.n_iter_ == m.n_iter_

    # stop after 7 iterations: feasible model
    m3 = IRWLSClassifier(C=1.0, gamma=0.5, working_set_size=40, random_state=0)
    seen = []
    m3.fit(X, y, callback=lambda r: seen.append(r) or len(seen) < 7)
    assert m3.n_iter_ == 7
    a = m3.alpha_
    assert np.all(a >= 0) and np.all(a <= C) and abs(np.dot(a, yp)) < 1e-10


def test_max_iter_warns():
    from sklearn.exceptions import ConvergenceWarning

    X, y = _data(100)
    with pytest.warns(ConvergenceWarning):
        IRWLSClassifier(gamma=0.5, max_iter=2).fit(X, y)


# ------------------------------------------------------------ bad input
@pytest.mark.parametrize("params,match", [
    ({"working_set_size": 1}, "working_set_size"),
    ({"working_set_size": 1000}, "larger than the number of samples"),
    ({"selection": "worst"}, "selection"),
    ({"C": 0.0}, "C"),
    ({"tol": -1.0}, "tol"),
    ({"gamma": -1.0}, "gamma"),
])
def test_bad_params(params, match):
    X, y = _data(50)
    with pytest.raises(ValueError, match=match):
        IRWLSClassifier(**params).fit(X, y)


def test_bad_data():
    X, y = _data(50)
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(ValueError):
        IRWLSClassifier().fit(Xn, y)
    with pytest.raises(ValueError):
        IRWLSClassifier().fit(X, np.zeros(50))
    with pytest.raises(ValueError):
        IRWLSClassifier().fit(X, y[:-1])
    X0 = X.copy()
    IRWLSClassifier(gamma=0.5).fit(X, y)
    np.testing.assert_array_equal(X, X0)


def test_numba_disabled_subprocess():
    """The numba code (cache rows, SMO engine, the compiled line-search mode
    with its Cholesky updates) run as plain Python."""
    code = (
        "import numpy as np, sys; sys.path.insert(0, 'tests');"
        "from reference import libsvm_dual, gram, dual_objective, to_pm;"
        "from sklearn.datasets import make_classification;"
        "from svmlab import IRWLSClassifier, DecompositionClassifier;"
        "X, y = make_classification(60, 4, random_state=0);"
        "_, _, W = libsvm_dual(X, y, 1.0, gamma=0.5); K = gram(X, gamma=0.5); yp = to_pm(y);"
        "ms = [IRWLSClassifier(gamma=0.5, working_set_size=20, random_state=0).fit(X, y),"
        "      DecompositionClassifier(gamma=0.5, engine='smo').fit(X, y),"
        "      DecompositionClassifier(gamma=0.5, engine='qp', working_set_size=20).fit(X, y)];"
        "r = [abs(dual_objective(K, yp, m.alpha_) - W) / W for m in ms];"
        "assert max(r) < 1e-3, r; print('ok')"
    )
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=root,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "ok" in out.stdout


# --------------------------------------------------------------------------
# issue 14: a fit stopped early stores the feasible state it reached
# --------------------------------------------------------------------------
def _gauss_m_problem(n=200):
    from svmlab import datasets

    X, y = datasets.gauss_m(n, random_state=0)
    return X, y


def _check_stored_state(clf, X, y, K, C):
    """Feasibility (sum y alpha = 0, 0 <= alpha <= C) and a decision function
    equal to the one computed here from alpha_, intercept_ and the kernel."""
    yp = to_pm(y, clf.classes_)
    a = clf.alpha_
    assert np.all(a >= 0) and np.all(a <= C)
    assert abs(np.dot(a, yp)) <= 1e-9 * C * len(a)
    f = K @ (a * yp) + clf.intercept_[0]
    np.testing.assert_allclose(clf.decision_function(X), f, atol=1e-9 * max(1.0, C))
    return yp


def _expected_intercept(K, yp, a, C, ws):
    """The rule of svmlab.decomposition._engines.intercept_from_v over the working set,
    recomputed here: mean of v = y - K(alpha y) over its free samples."""
    v = yp[ws] - (K @ (a * yp))[ws]
    free = (a[ws] > 0) & (a[ws] < C)
    assert free.any()
    return v[free].mean()


@pytest.mark.parametrize("how", ["max_iter", "callback", "iter_fit"])
def test_early_stop_keeps_the_feasible_state_reached(how):
    """The bug: a fit stopped in the line-search mode reported alpha_ = 0 (the
    sub-problem's stale saved point) although its records showed non-zero
    betas.  Now alpha_ is the last record's (feasible) iterate."""
    X, y = _gauss_m_problem()
    C = 1.0
    K = gram(X, "linear")
    clf = IRWLSClassifier(kernel="linear", C=C, random_state=0, max_iter=-1)
    recs = []
    if how == "max_iter":
        clf.set_params(max_iter=12)
        with pytest.warns(Warning, match="max_iter"):
            clf.fit(X, y, callback=recs.append)
    elif how == "callback":
        clf.fit(X, y, callback=lambda r: recs.append(r) or len(recs) < 12)
        assert clf.stop_reason_ == "callback"
    else:
        for r in clf.iter_fit(X, y):
            recs.append(r)
            if len(recs) == 12:
                break
    assert len(recs) == 12
    last = recs[-1]
    # the case of the bug: line-search mode, chunk open, betas non-zero
    assert last.mode == "line" and not last.chunk_done
    assert np.abs(last.beta).sum() > 1.0
    yp = _check_stored_state(clf, X, y, K, C)
    ws = last.working_set
    np.testing.assert_allclose(clf.alpha_[ws], yp[ws] * last.beta, atol=1e-12)
    np.testing.assert_allclose(clf.intercept_[0],
                               _expected_intercept(K, yp, clf.alpha_, C, ws), atol=1e-9)
    # a feasible point strictly better than the start, and not better than
    # the optimum (LIBSVM through scikit-learn)
    W = dual_objective(K, yp, clf.alpha_)
    _, _, W_opt = libsvm_dual(X, y, C, "linear")
    assert 0.0 < W <= W_opt + 1e-6 * abs(W_opt)


def test_early_stop_after_infeasible_table1_iterate_reports_last_feasible_point(monkeypatch):
    """A Table 1 iterate clipped by rules a/b is off the plane sum beta = s0;
    the stored model is then the last feasible point (here the chunk's
    start, beta = 0), never the infeasible iterate.  (The paper's Table 1,
    without the hand-over to the line search, so that the first working
    set frees every violator and clips.)"""
    import svmlab.decomposition._active_set as eng
    monkeypatch.setattr(eng, "TABLE1_HANDOVER", False)
    X, y = _gauss_m_problem(300)
    C = 10.0
    K = gram(X, "rbf", gamma=1.0)
    clf = IRWLSClassifier(kernel="rbf", gamma=1.0, C=C, random_state=0, working_set_size=50)
    recs = []
    for r in clf.iter_fit(X, y):
        recs.append(r)
        if len(recs) == 2:
            break
    last = recs[-1]
    assert last.mode == "table1" and sum(last.moved[:2]) > 0
    assert abs(last.beta.sum()) > 1.0  # infeasible: first chunk has s0 = 0
    _check_stored_state(clf, X, y, K, C)
    np.testing.assert_array_equal(clf.alpha_, 0.0)


def test_early_stop_with_several_chunks_is_feasible():
    """Stops inside later chunks (closed chunks plus an open one) store a
    feasible model whose dual objective never decreases with more steps."""
    X, y = _gauss_m_problem(300)
    C = 10.0
    K = gram(X, "rbf", gamma=1.0)
    Ws = []
    for stop in (20, 60, 120):
        clf = IRWLSClassifier(kernel="rbf", gamma=1.0, C=C, random_state=0,
                              working_set_size=50, max_iter=stop)
        with pytest.warns(Warning):
            clf.fit(X, y)
        yp = _check_stored_state(clf, X, y, K, C)
        Ws.append(dual_objective(K, yp, clf.alpha_))
    assert Ws[0] > 0.0
    assert Ws[0] <= Ws[1] + 1e-9 and Ws[1] <= Ws[2] + 1e-9, Ws


def test_mixed_selection_is_the_default_and_needs_fewer_working_sets():
    """The default "mixed" selection (issue 15, round 2) reaches LIBSVM's
    optimum like the paper's "random" one, in fewer working sets on a
    heavily overlapping problem (most samples end at C: the gross violators
    it takes first are clipped at once)."""
    from svmlab import datasets

    assert IRWLSClassifier().selection == "mixed"
    X, y = datasets.gauss_m(1200, random_state=0)
    X = np.asarray(X)
    kw = dict(C=1.0, gamma=0.5, working_set_size=100, random_state=0)
    mixed = IRWLSClassifier(**kw).fit(X, y)
    paper = IRWLSClassifier(selection="random", **kw).fit(X, y)
    for m in (mixed, paper):
        assert m.converged_
        _check_vs_libsvm(m, X, y, 1.0)
    assert mixed.n_chunks_ < paper.n_chunks_, (mixed.n_chunks_, paper.n_chunks_)
