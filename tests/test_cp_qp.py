"""The OP3 dual QP solver (svmlab.cutting_plane._qp) against independent solutions.

Problem: max sum_k a_k d_k - 1/2 a'Ha, a >= 0, sum a <= C with H = G G'.
References: (1) exhaustive enumeration of the free set with the KKT system
solved on each (exact up to linear algebra), (2) scipy's SLSQP with a tight
tolerance, (3) the KKT conditions checked in the test.
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
@pytest.mark.parametrize("newton", [True, False])
def test_qp_matches_brute_force_enumeration(K, D, C, rank, seed, newton):
    rng = np.random.default_rng(seed)
    G, d, C = random_problem(rng, K, D, C, rank)
    a, info = solve_op3_dual(G @ G.T, d, C, use_newton=newton)
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

    real = cpmod.solve_simplex_qp

    def sloppy(H, d, C, a, tol, max_iter, use_newton, max_free):
        steps, viol = real(H, d, C, a, tol, max_iter, use_newton, max_free)
        return steps, 1e-3  # pretend the KKT conditions were left violated

    monkeypatch.setattr(cpmod, "solve_simplex_qp", sloppy)
    X, y = make_classification(100, 4, random_state=0)
    with pytest.warns(ConvergenceWarning, match="reduced QP"):
        CuttingPlaneClassifier(C=50.0).fit(X, y)
