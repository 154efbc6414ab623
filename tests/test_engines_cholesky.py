"""The Cholesky factor kept by the line-search mode of the IRWLS / active-set
engine (svmlab._linalg, svmlab.decomposition._line_search): deletions, appends and fresh factorisations of
``K_11 + rr I`` against numpy's Cholesky of the same sub-matrix, and the
compiled line-search iterations against the KKT conditions computed here."""

import numpy as np
import pytest
from sklearn.datasets import make_classification

from svmlab._linalg import chol_append, chol_delete, chol_factor, chol_solve
from svmlab.decomposition._active_set import S1, ActiveSetSubproblem

from reference import gram, to_pm


def _spd(m, seed):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, m + 3))
    return A @ A.T + 0.1 * np.eye(m)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_delete_and_append_match_fresh_factor(seed):
    rng = np.random.default_rng(seed)
    m = 30
    K = _spd(m, seed)
    rr = 1e-8
    order = list(rng.permutation(m)[:20])
    L = np.zeros((m, m))
    assert chol_factor(K, np.array(order, np.int64), len(order), rr, L)
    n = len(order)
    for step in range(25):
        if rng.random() < 0.5 and n > 1:
            p = int(rng.integers(n))
            chol_delete(L, n, p)
            order.pop(p)
            n -= 1
        else:
            out = [i for i in range(m) if i not in order]
            if not out:
                continue
            i = int(rng.choice(out))
            assert chol_append(L, n, K[i, order].copy(), K[i, i] + rr, 0.0)
            order.append(i)
            n += 1
        sub = K[np.ix_(order, order)] + rr * np.eye(n)
        ref = np.linalg.cholesky(sub)
        np.testing.assert_allclose(L[:n, :n], ref, atol=1e-9)
        assert np.all(L[n:, :] == 0) and np.all(np.triu(L[:n, :n], 1) == 0)
        rhs = rng.standard_normal(n)
        x = np.empty(n)
        chol_solve(L, n, rhs, x)
        np.testing.assert_allclose(x, np.linalg.solve(sub, rhs), rtol=1e-8, atol=1e-9)


def test_append_and_factor_refuse_non_pd():
    K = np.ones((3, 3))  # rank one: the second pivot is 0
    L = np.zeros((3, 3))
    assert not chol_factor(K, np.arange(3, dtype=np.int64), 3, 0.0, L)
    L = np.zeros((3, 3))
    assert chol_factor(K, np.arange(1, dtype=np.int64), 1, 0.0, L)
    assert not chol_append(L, 1, K[1, :1].copy(), K[1, 1], 0.0)
    assert np.all(L[1] == 0)  # left unchanged


@pytest.mark.parametrize("rule", ["irwls", "qp"])
@pytest.mark.parametrize("C", [1.0, 1000.0])
def test_line_mode_subproblem_reaches_kkt(rule, C):
    """A whole sub-problem solved by the compiled line-search iterations
    (mode="line"): KKT of the box + equality QP checked here."""
    X, y = make_classification(120, 5, n_informative=3, random_state=3, flip_y=0.1)
    yp = to_pm(y)
    K = gram(X, "rbf", 0.5)
    tol = 1e-3
    sub = ActiveSetSubproblem(K, yp, np.zeros(len(yp)), yp.copy(), C, tol, rule=rule,
                              mode="line", s0=0.0).solve()
    beta = sub.beta
    a = yp * beta
    assert np.all(a >= -1e-12) and np.all(a <= C * (1 + 1e-12))
    assert abs(beta.sum()) < 1e-8 * C * len(yp)
    e = yp - K @ beta - sub.b
    ye = yp * e
    free = (a > 0) & (a < C)
    assert np.all(ye[a <= 0] <= tol * 1.0001)
    assert np.all(ye[a >= C] >= -tol * 1.0001)
    assert np.all(np.abs(e[free]) <= tol * 1.0001)
    assert np.array_equal(sub.sets == S1, free)


def test_python_fallback_of_line_mode_reaches_kkt(monkeypatch):
    """When the compiled iterations hand over (no usable factor), one Python
    iteration (the LU / least-squares fallback of the bordered system, with
    a 1e-2 ridge: ``solve_ls``) moves the sub-problem and hands back.  Forced
    here for the first iterations: the fallback really runs, and the
    sub-problem still reaches its KKT point, checked here."""
    import svmlab.decomposition._active_set as eng

    real = eng.line_iterations
    calls = {"forced": 0, "python": 0}

    def forced_first(*a):
        if calls["forced"] < 6:
            calls["forced"] += 1
            return 0, True
        return real(*a)

    real_ls = eng.solve_ls

    def counted_ls(*a, **kw):
        calls["python"] += 1
        return real_ls(*a, **kw)

    monkeypatch.setattr(eng, "line_iterations", forced_first)
    monkeypatch.setattr(eng, "solve_ls", counted_ls)
    X, y = make_classification(80, 5, n_informative=3, random_state=4, flip_y=0.1)
    yp = to_pm(y)
    K = gram(X, "rbf", 0.5)
    C, tol = 10.0, 1e-3
    sub = ActiveSetSubproblem(K, yp, np.zeros(len(yp)), yp.copy(), C, tol, mode="line",
                              s0=0.0).solve()
    assert calls["python"] >= 1  # the fallback ran (the others had S1 empty: bounds)
    a = yp * sub.beta
    e = yp - K @ sub.beta - sub.b
    free = (a > 0) & (a < C)
    assert abs(sub.beta.sum()) < 1e-8 * C * len(yp)
    assert np.all(yp[a <= 0] * e[a <= 0] <= tol * 1.0001)
    assert np.all(yp[a >= C] * e[a >= C] >= -tol * 1.0001)
    assert np.all(np.abs(e[free]) <= tol * 1.0001)


def test_python_fallback_alone_stays_feasible_and_ascends(monkeypatch):
    """Forced for every iteration, the fallback alone (a heavily ridged
    direction, so free errors are not driven to 0) keeps the point feasible,
    satisfies (9)/(10) at the bounds when it stops, and raises the dual
    objective ``r'beta - beta'K beta / 2`` from its start."""
    import svmlab.decomposition._active_set as eng

    monkeypatch.setattr(eng, "line_iterations", lambda *a: (0, True))
    X, y = make_classification(80, 5, n_informative=3, random_state=4, flip_y=0.1)
    yp = to_pm(y)
    K = gram(X, "rbf", 0.5)
    C, tol = 10.0, 1e-3
    sub = ActiveSetSubproblem(K, yp, np.zeros(len(yp)), yp.copy(), C, tol, mode="line",
                              s0=0.0).solve()
    a = yp * sub.beta
    e = yp - K @ sub.beta - sub.b
    assert np.all(a >= -1e-12) and np.all(a <= C * (1 + 1e-12))
    assert abs(sub.beta.sum()) < 1e-8 * C * len(yp)
    assert np.all(yp[a <= 0] * e[a <= 0] <= tol * 1.0001)
    assert np.all(yp[a >= C] * e[a >= C] >= -tol * 1.0001)
    W = yp @ sub.beta - 0.5 * sub.beta @ K @ sub.beta
    assert W > 0.0  # the start beta = 0 has W = 0
