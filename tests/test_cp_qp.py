"""The OP3 dual QP solver (svmlab.cutting_plane._qp) against independent solutions.

Problem: max sum_k a_k d_k - 1/2 a'Ha, a >= 0, sum a <= C with H = G G'.
References: (1) exhaustive enumeration of the free set with the KKT system
solved on each (exact up to linear algebra), (2) scipy's SLSQP with a tight
tolerance, (3) the KKT conditions checked in the test, (4) numpy's Cholesky
of the same submatrix for the updated factor of the active-set engine.
"""

import itertools

import numpy as np
import pytest
from scipy.optimize import minimize

from svmlab.cutting_plane._qp import solve_op3_dual


def dual_value(a, G, d):
    w = a @ G
    return float(a @ d - 0.5 * w @ w)


def brute_force(G, d, C):
    """Enumerate free sets F of [slack, 1..K]; on each, solve the KKT
    equalities by least squares and keep the best point that is feasible
    and satisfies the inequality KKT conditions."""
    K = len(d)
    H = np.zeros((K + 1, K + 1))
    H[1:, 1:] = G @ G.T
    dd = np.concatenate([[0.0], d])
    best = None
    for size in range(1, K + 2):
        for F in itertools.combinations(range(K + 1), size):
            F = list(F)
            m = len(F)
            M = np.zeros((m + 1, m + 1))
            M[:m, :m] = H[np.ix_(F, F)]
            M[:m, m] = -1.0
            M[m, :m] = 1.0
            rhs = np.concatenate([dd[F], [C]])
            sol = np.linalg.lstsq(M, rhs, rcond=None)[0]
            if np.linalg.norm(M @ sol - rhs) > 1e-8 * max(1.0, C):
                continue
            a = np.zeros(K + 1)
            a[F] = sol[:m]
            if a.min() < -1e-10 * C:
                continue
            a = np.maximum(a, 0)
            grad = H @ a - dd
            lam = sol[m]
            if grad.min() < lam - 1e-8:
                continue
            val = dual_value(a[1:], G, d)
            if best is None or val > best[0]:
                best = (val, a[1:])
    return best


def kkt_violation(a, G, d, C):
    """Largest violation of the KKT conditions of the slack-form problem."""
    H = G @ G.T
    grad = np.concatenate([[0.0], H @ a - d])
    aa = np.concatenate([[C - a.sum()], a])
    return grad[aa > 1e-12 * C].max() - grad.min()


def random_problem(rng, K, D, C, rank=None):
    G = rng.normal(size=(K, D)) / np.sqrt(D)
    if rank is not None:  # rank-deficient working set (K > D in practice)
        G = rng.normal(size=(K, rank)) @ rng.normal(size=(rank, D)) / D
    d = rng.uniform(0.05, 1.0, size=K)
    return G, d, C


CASES = [(K, D, C, rank) for K, D, C, rank in [
    (3, 5, 1.0, None), (5, 3, 10.0, None), (6, 2, 100.0, None), (6, 8, 0.01, None),
    (5, 6, 1000.0, 2), (6, 4, 5.0, 1), (4, 4, 1e4, None),
]]


@pytest.mark.parametrize("K,D,C,rank", CASES)
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("engine", ["active-set", "smo+newton", "smo"])
def test_qp_matches_brute_force_enumeration(K, D, C, rank, seed, engine):
    rng = np.random.default_rng(seed)
    G, d, C = random_problem(rng, K, D, C, rank)
    a, info = solve_op3_dual(G @ G.T, d, C, use_newton=engine == "smo+newton",
                             use_active_set=engine == "active-set")
    assert a.min() >= 0 and a.sum() <= C * (1 + 1e-12)
    best = brute_force(G, d, C)
    assert best is not None
    scale = max(1.0, abs(best[0]))
    assert dual_value(a, G, d) >= best[0] - 1e-9 * scale
    assert dual_value(a, G, d) <= best[0] + 1e-9 * scale  # cannot beat the optimum
    assert kkt_violation(a, G, d, C) <= 1e-8


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("use_warm", [False, True])
def test_qp_matches_slsqp_on_larger_sets(seed, use_warm):
    rng = np.random.default_rng(10 + seed)
    K, D, C = 15, 8, [0.1, 3.0, 50.0, 800.0][seed]
    G, d, C = random_problem(rng, K, D, C)
    H = G @ G.T
    a0 = None
    if use_warm:  # warm start from a feasible, non-optimal point
        a0 = rng.uniform(size=K)
        a0 *= 0.5 * C / a0.sum()
    a, _ = solve_op3_dual(H, d, C, alpha0=a0)

    res = minimize(lambda x: -(x @ d - 0.5 * x @ H @ x), np.full(K, C / (2 * K)),
                   jac=lambda x: -(d - H @ x), method="SLSQP",
                   bounds=[(0, None)] * K,
                   constraints=[{"type": "ineq", "fun": lambda x: C - x.sum(),
                                 "jac": lambda x: -np.ones(K)}],
                   options={"ftol": 1e-15, "maxiter": 2000})
    ref = dual_value(np.maximum(res.x, 0), G, d)
    ours = dual_value(a, G, d)
    assert ours >= ref - 1e-7 * max(1.0, abs(ref))
    assert kkt_violation(a, G, d, C) <= 1e-7


def test_qp_slack_inactive_and_active():
    # d tiny relative to C: the sum constraint is slack (sum alpha < C)
    rng = np.random.default_rng(5)
    G, d, _ = random_problem(rng, 4, 6, 1.0)
    a, _ = solve_op3_dual(G @ G.T, d, 1e6)
    assert a.sum() < 1e6 * 0.5
    # primal xi = max(0, max_k d_k - w.g_k) must be 0 when the sum is slack
    w = a @ G
    assert max(0.0, (d - G @ w).max()) <= 1e-9
    # tiny C: the sum constraint binds
    a, _ = solve_op3_dual(G @ G.T, d, 1e-3)
    assert a.sum() == pytest.approx(1e-3, rel=1e-9)


# --------------------------------------------------------------------------
# the reduced QP at large C (issue 16): never silently imprecise
# --------------------------------------------------------------------------
@pytest.mark.parametrize("K,D,C,rank", CASES)
@pytest.mark.parametrize("seed", [0, 1])
def test_compiled_active_set_matches_brute_force(K, D, C, rank, seed):
    """The compiled active-set fallback alone, from the slack-only start."""
    from svmlab.cutting_plane._qp import active_set_qp

    rng = np.random.default_rng(seed)
    G, d, C = random_problem(rng, K, D, C, rank)
    H = np.zeros((K + 1, K + 1))
    H[1:, 1:] = G @ G.T
    dd = np.concatenate([[0.0], d])
    a = np.zeros(K + 1)
    a[0] = C
    assert active_set_qp(H, dd, C, a, 1e-13 * max(1.0, C), 50 * (K + 1))
    assert a.min() >= 0 and a.sum() == pytest.approx(C, rel=1e-12)
    best = brute_force(G, d, C)
    scale = max(1.0, abs(best[0]))
    assert dual_value(a[1:], G, d) == pytest.approx(best[0], abs=1e-9 * scale)
    assert kkt_violation(a[1:], G, d, C) <= 1e-8


def test_large_C_reproducer_is_precise():
    """make_classification(153, 11, ...) at C = 4590, epsilon = 1e-4: SMO used
    to exhaust its 10,000,000 steps at iteration 85 and return a KKT
    violation ~7e-7 (dual 2171.8223268 against 2171.8225267), silently.
    Now every reduced QP is solved to its tolerance (no warning) and its
    value matches the readable reference's exact active-set solve of the
    same working set."""
    import warnings

    from sklearn.datasets import make_classification

    from svmlab import CuttingPlaneClassifier
    from svmlab.reference.cutting_plane import solve_reduced_qp

    X, y = make_classification(153, 11, n_informative=3, n_redundant=0, flip_y=0.1,
                               random_state=5)
    est = CuttingPlaneClassifier(C=4590, epsilon=1e-4, max_iter=-1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an imprecise QP would warn
        run = est.start(X, y)
        duals = {}
        while True:
            rec = run.step()
            if rec is None:
                break
            assert run.qp_violation <= 1e-9, (rec.iteration, run.qp_violation)
            if 84 <= rec.iteration <= 87:
                K = run.K
                G, d = run._G[:K].copy(), run._d[1: K + 1].copy()
                alpha, w, _xi = solve_reduced_qp(G, d, run.C)
                duals[rec.iteration] = (run.dual, float(alpha @ d - 0.5 * w @ w))
        run.finish()
    assert est.converged_
    for it, (ours, exact) in duals.items():
        assert ours == pytest.approx(exact, rel=1e-11, abs=0), it
    # the record of iteration 86 shows the bound of the working set of 85
    assert duals[85][1] == pytest.approx(2171.8225267, abs=1e-6)


def test_imprecise_qp_warns(monkeypatch):
    """When the reduced QP reports a KKT violation above its tolerance (the
    solver is wrapped to report one: with the active-set fallback no natural
    case is known to us), the fit says so with a ConvergenceWarning."""
    from sklearn.datasets import make_classification
    from sklearn.exceptions import ConvergenceWarning

    import svmlab.cutting_plane.estimators as cpmod
    from svmlab import CuttingPlaneClassifier

    real = cpmod.add_cut_and_solve

    def sloppy(*args):
        steps, viol, xi, dual = real(*args)
        return steps, 1e-3, xi, dual  # pretend the KKT conditions were left violated

    monkeypatch.setattr(cpmod, "add_cut_and_solve", sloppy)
    X, y = make_classification(100, 4, random_state=0)
    with pytest.warns(ConvergenceWarning, match="reduced QP"):
        CuttingPlaneClassifier(C=50.0).fit(X, y)


# --------------------------------------------------------------------------
# the main engine (issue 16, third round): active set on an updated Cholesky
# --------------------------------------------------------------------------
def test_cholesky_append_and_delete_equal_the_factor_from_scratch():
    """chol_append / chol_delete against numpy's Cholesky of the same
    submatrix, over a random sequence of insertions and deletions."""
    from svmlab._linalg import chol_append, chol_delete, chol_solve

    rng = np.random.default_rng(0)
    N = 30
    V = rng.normal(size=(N, 40))
    L = V @ V.T + 1.0  # lifted Gram matrix: SPD
    Lc = np.full((N + 1, N + 1), np.nan)  # nothing above the diagonal is read
    order = []
    for step in range(200):
        outside = [k for k in range(N) if k not in order]
        if outside and (len(order) < 3 or rng.random() < 0.6):
            k = int(rng.choice(outside))
            col = np.array([L[j, k] for j in order] + [0.0])
            assert chol_append(Lc, len(order), col, L[k, k], 1e-12)
            order.append(k)
        else:
            r = int(rng.integers(len(order)))
            chol_delete(Lc, len(order), r)
            order.pop(r)
        m = len(order)
        ref = np.linalg.cholesky(L[np.ix_(order, order)])
        got = np.tril(Lc[:m, :m])
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-10 * np.abs(ref).max())
        b = rng.normal(size=m)
        x = np.empty(m)
        chol_solve(Lc, m, b, x)
        np.testing.assert_allclose(L[np.ix_(order, order)] @ x, b, rtol=0, atol=1e-8)


def test_cholesky_append_refuses_a_dependent_vector():
    from svmlab._linalg import chol_append

    rng = np.random.default_rng(1)
    V = rng.normal(size=(3, 5))
    V = np.vstack([V, V[0] - 2 * V[1] + 0.5 * V[2]])  # 4th in the span of the first 3
    L = V @ V.T
    Lc = np.zeros((5, 5))
    for m in range(3):
        assert chol_append(Lc, m, L[m, :m].copy(), L[m, m], 1e-12)
    assert not chol_append(Lc, 3, L[3, :3].copy(), L[3, 3], 1e-12)


def _lifted(G, d, C):
    K = len(d)
    H = np.zeros((K + 1, K + 1))
    H[1:, 1:] = G @ G.T
    return H, np.concatenate([[0.0], d])


@pytest.mark.parametrize("K,D,C,rank", CASES + [(9, 2, 50.0, None), (10, 3, 1e3, 2)])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_active_set_chol_alone_matches_brute_force(K, D, C, rank, seed):
    """The Cholesky active-set method alone (no SMO fallback), cold from the
    slack and warm from a random feasible point; K > D + 1 forces entering
    variables whose lifted vector depends on the free set's (null steps)."""
    from svmlab.cutting_plane._qp import active_set_chol

    rng = np.random.default_rng(seed)
    G, d, C = random_problem(rng, K, D, C, rank)
    H, dd = _lifted(G, d, C)
    best = brute_force(G, d, C)
    scale = max(1.0, abs(best[0]))
    starts = [np.concatenate([[C], np.zeros(K)])]
    x = rng.uniform(size=K + 1) * (rng.random(K + 1) < 0.3)
    x[0] += 0.1
    starts.append(x * C / x.sum())
    for a in starts:
        a = a.copy()
        steps, status = active_set_chol(H, dd, C, a, 1e-13 * max(1.0, C), 50 * (K + 1))
        if status == -1:  # a dependent random start: the caller falls back to SMO
            assert a.min() >= 0
            continue
        assert status == 1 and steps >= 1
        assert a.min() >= 0 and a.sum() == pytest.approx(C, rel=1e-12)
        assert dual_value(a[1:], G, d) == pytest.approx(best[0], abs=1e-9 * scale)
        assert kkt_violation(a[1:], G, d, C) <= 1e-8


def test_active_set_chol_warm_start_takes_few_pivots_like_ocas():
    """OCAS's pattern: the optimum of K - 1 cuts plus a new cut at 0.  The
    warm solve reaches the cold optimum (value and KKT computed here) in
    far fewer pivots than the cold one."""
    from svmlab.cutting_plane._qp import active_set_chol

    rng = np.random.default_rng(7)
    K, D, C = 60, 80, 200.0
    base = rng.normal(size=D)
    G = (base + 0.3 * rng.normal(size=(K, D))) / np.sqrt(D)
    d = rng.uniform(0.2, 1.0, size=K)
    H, dd = _lifted(G, d, C)
    cold = np.concatenate([[C], np.zeros(K)])
    s_cold, st = active_set_chol(H, dd, C, cold, 1e-12, 50 * (K + 1))
    assert st == 1
    prev = np.concatenate([[C], np.zeros(K - 1)])
    assert active_set_chol(H[:K, :K].copy(), dd[:K].copy(), C, prev, 1e-12, 50 * K)[1] == 1
    warm = np.concatenate([prev, [0.0]])
    s_warm, st = active_set_chol(H, dd, C, warm, 1e-12, 50 * (K + 1))
    assert st == 1
    assert s_warm < s_cold / 3
    assert dual_value(warm[1:], G, d) == pytest.approx(dual_value(cold[1:], G, d), rel=1e-12)
    for a in (warm, cold):
        assert kkt_violation(a[1:], G, d, C) <= 1e-9
    res = minimize(lambda x: -(x @ d - 0.5 * x @ (G @ G.T) @ x), np.full(K, C / (2 * K)),
                   jac=lambda x: -(d - G @ G.T @ x), method="SLSQP", bounds=[(0, None)] * K,
                   constraints=[{"type": "ineq", "fun": lambda x: C - x.sum(),
                                 "jac": lambda x: -np.ones(K)}],
                   options={"ftol": 1e-15, "maxiter": 3000})
    assert dual_value(warm[1:], G, d) >= dual_value(np.maximum(res.x, 0), G, d) - 1e-8


@pytest.mark.parametrize("method", ["ocas", "joachims"])
def test_engines_agree_on_the_cutting_plane_sequence(method, monkeypatch):
    """Fits with the reduced QP solved by the main engine (active set on a
    kept Cholesky factor) and by the fallback alone (SMO with Newton steps,
    then exact face solves) give the same model (the reduced optimum is
    unique in w), in the same iterations."""
    from sklearn.datasets import make_classification

    import svmlab.cutting_plane.estimators as cpmod
    from svmlab import CuttingPlaneClassifier

    X, y = make_classification(400, 20, n_informative=8, flip_y=0.05, random_state=3)
    params = dict(C=400.0, epsilon=1e-4, method=method, max_iter=-1)
    ref = CuttingPlaneClassifier(**params).fit(X, y)
    real = cpmod.add_cut_and_solve
    calls = []

    def fallback_only(*args):
        calls.append(1)
        return real(*args[:12], False)

    monkeypatch.setattr(cpmod, "add_cut_and_solve", fallback_only)
    est = CuttingPlaneClassifier(**params).fit(X, y)
    assert len(calls) == est.n_iter_  # every cut re-solved by the fallback
    assert est.n_iter_ == ref.n_iter_
    np.testing.assert_allclose(est.coef_, ref.coef_, rtol=1e-7, atol=1e-9)
    # the objective of both, computed here
    def primal(m):
        w = m.coef_.ravel()
        b = m.intercept_[0]
        yy = np.where(y == 1, 1.0, -1.0)
        return 0.5 * (w @ w + b * b) + 400.0 * np.maximum(0, 1 - yy * (X @ w + b)).mean()
    assert primal(est) == pytest.approx(primal(ref), rel=1e-9)


def test_ocas_active_set_flag_switches_the_engine():
    """The OCAS run's use_active_set flag reaches the compiled solve: with
    it off the QP takes SMO pair steps (many more steps), same model."""
    from sklearn.datasets import make_classification

    from svmlab import CuttingPlaneClassifier

    X, y = make_classification(300, 15, n_informative=6, flip_y=0.05, random_state=4)
    fits = {}
    for flag in (True, False):
        est = CuttingPlaneClassifier(C=300.0, epsilon=1e-4, method="ocas", max_iter=-1)
        run = est.start(X, y)
        run.use_active_set = flag
        while run.step() is not None:
            pass
        run.finish()
        fits[flag] = (est.coef_.copy(), run.qp_steps, est.n_iter_)
    assert fits[True][2] == fits[False][2]
    np.testing.assert_allclose(fits[True][0], fits[False][0], rtol=1e-7, atol=1e-9)
    assert fits[False][1] > 3 * fits[True][1]


def test_imprecise_qp_warns_with_ocas(monkeypatch):
    """OCAS's compiled add-and-solve reports its KKT violation too: wrapped
    to report one above the tolerance, the fit warns."""
    from sklearn.datasets import make_classification
    from sklearn.exceptions import ConvergenceWarning

    import svmlab.cutting_plane.estimators as cpmod
    from svmlab import CuttingPlaneClassifier

    real = cpmod.add_cut_and_solve

    def sloppy(*args):
        steps, viol, xi, dual = real(*args)
        return steps, 1e-3, xi, dual

    monkeypatch.setattr(cpmod, "add_cut_and_solve", sloppy)
    X, y = make_classification(100, 4, random_state=0)
    with pytest.warns(ConvergenceWarning, match="reduced QP"):
        CuttingPlaneClassifier(C=50.0, method="ocas").fit(X, y)
