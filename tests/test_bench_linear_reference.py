"""The linear-family suite's certified reference optimum
(svmlab.bench.linear_family.reference_optimum, dual_bound): on small
problems the certified bracket [lower, P*] holds the optimum found by a
brute-force scipy solve and by LIBLINEAR at tol 1e-12, the dual bound is
below the optimum at any primal point, and an uncertified reference fails
loudly."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize
from sklearn.exceptions import ConvergenceWarning

from svmlab.bench import linear_family as LF

PROBLEMS = {
    "l2 squared hinge + intercept": dict(loss="squared_hinge", penalty="l2", intercept=True),
    "l2 hinge + intercept": dict(loss="hinge", penalty="l2", intercept=True),
    "l2 hinge": dict(loss="hinge", penalty="l2", intercept=False),
    "l1 squared hinge + intercept": dict(loss="squared_hinge", penalty="l1", intercept=True),
}


def _data(seed=0, n=160, d=8, sparse=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.6)
    y = np.where(X[:, 0] - 0.5 * X[:, 1] + 0.8 * rng.normal(size=n) > 0, 1.0, -1.0)
    return (sp.csr_matrix(X) if sparse else X), y


def _aug(X, problem):
    Xd = X.toarray() if sp.issparse(X) else np.asarray(X)
    return np.hstack([Xd, np.ones((len(Xd), 1))]) if problem["intercept"] else Xd


def _split(problem, wt):
    return (wt[:-1], wt[-1]) if problem["intercept"] else (wt, 0.0)


def brute_force(X, y, C, problem):
    """The optimum by scipy (L-BFGS-B), independent of LIBLINEAR: the
    hinge through its box-constrained dual (w = sum a_i y_i x~_i), the
    squared hinge through its smooth primal, the L1 penalty with w = p - q,
    p, q >= 0.  Returns the primal value at the point found."""
    A = _aug(X, problem) * y[:, None]  # rows y_i x~_i
    n, d = A.shape
    opts = {"ftol": 1e-15, "gtol": 1e-12, "maxiter": 50000, "maxfun": 10**6}
    if problem["loss"] == "hinge":
        def f(a):
            u = A.T @ a
            return 0.5 * u @ u - a.sum(), A @ u - 1.0
        r = minimize(f, np.zeros(n), jac=True, method="L-BFGS-B", bounds=[(0, C)] * n,
                     options=opts)
        wt = A.T @ r.x
    elif problem["penalty"] == "l2":
        def f(wt):
            xi = np.maximum(0.0, 1.0 - A @ wt)
            return 0.5 * wt @ wt + C * xi @ xi, wt - 2 * C * A.T @ xi
        wt = minimize(f, np.zeros(d), jac=True, method="L-BFGS-B", options=opts).x
    else:
        def f(pq):
            wt = pq[:d] - pq[d:]
            xi = np.maximum(0.0, 1.0 - A @ wt)
            g = -2 * C * A.T @ xi
            return pq.sum() + C * xi @ xi, np.concatenate([1 + g, 1 - g])
        pq = minimize(f, np.zeros(2 * d), jac=True, method="L-BFGS-B",
                      bounds=[(0, None)] * (2 * d), options=opts).x
        wt = pq[:d] - pq[d:]
    w, b = _split(problem, wt)
    return LF.primal_objective(X, y, w, b, C, loss=problem["loss"], penalty=problem["penalty"])


def liblinear(X, y, C, problem, tol, max_iter=10**6):
    """LIBLINEAR's solution and whether it stopped by its tolerance."""
    from sklearn.svm import LinearSVC

    m = LinearSVC(C=C, loss=problem["loss"], penalty=problem["penalty"],
                  fit_intercept=problem["intercept"], dual=problem["loss"] == "hinge",
                  tol=tol, max_iter=max_iter, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        m.fit(X, y)
    b = float(m.intercept_[0]) if problem["intercept"] else 0.0
    return m.coef_[0], b, int(np.max(m.n_iter_)) < max_iter


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("name", list(PROBLEMS))
def test_certified_bracket_holds_the_optimum(name, sparse):
    problem = PROBLEMS[name]
    X, y = _data(1, sparse=sparse)
    C = 0.5
    ref = LF.reference_optimum(X, y, C, problem)
    assert ref.gap <= LF.REF_MAX_GAP
    assert ref.lower <= ref.p_star
    p_brute = brute_force(X, y, C, problem)
    coef, b, converged = liblinear(X, y, C, problem, 1e-12)
    p_ll = LF.primal_objective(X, y, coef, b, C, loss=problem["loss"], penalty=problem["penalty"])
    eps = 1e-12 * abs(ref.p_star)
    # every primal value is above the certified lower bound ...
    assert ref.lower <= p_brute + eps and ref.lower <= p_ll + eps, (ref, p_brute, p_ll)
    # ... and the reference is as good as the tightest independent solves
    best = min(p_brute, p_ll)
    assert ref.p_star <= best * (1 + LF.REF_MAX_GAP), (ref, p_brute, p_ll)
    # weak duality at LIBLINEAR's 1e-12 point, and there (when LIBLINEAR
    # stopped by its tolerance) the bound closes far below the suite's gap
    d_ll = LF.dual_bound(X, y, C, problem, coef, b)
    assert d_ll <= best + eps
    if converged:
        assert (p_ll - d_ll) / p_ll <= 1e-8, (p_ll, d_ll)


@pytest.mark.parametrize("name", list(PROBLEMS))
def test_dual_bound_is_below_the_optimum_at_any_point(name):
    """Weak duality: from poor primal points (zero, random, scaled optimum)
    the bound stays below the optimum (a wrong dual formula breaks this)."""
    problem = PROBLEMS[name]
    X, y = _data(2)
    C = 2.0
    p_opt = brute_force(X, y, C, problem)
    coef, b, _ = liblinear(X, y, C, problem, 1e-12)
    rng = np.random.default_rng(0)
    points = [(np.zeros_like(coef), 0.0), (rng.normal(size=coef.shape), 0.3),
              (0.5 * coef, 0.5 * b), (1.5 * coef, b), (coef, b)]
    bounds = [LF.dual_bound(X, y, C, problem, w, bb) for w, bb in points]
    assert max(bounds) <= p_opt * (1 + 1e-12), (bounds, p_opt)
    assert bounds[-1] >= p_opt * (1 - 1e-7)


def test_uncertified_reference_fails_loudly():
    X, y = _data(3)
    with pytest.raises(RuntimeError, match="not certified"):
        LF.reference_optimum(X, y, 1.0, PROBLEMS["l1 squared hinge + intercept"],
                             ladder=(1e-1,), max_gap=1e-14)


def test_measure_row_rule_reads_the_lower_bound():
    """A side is within a target only when (P - lower) / P* is: with a
    Reference whose lower bound sits below P*, the recorded gap is measured
    from it (larger than from P*)."""
    X, y = _data(4, n=120)
    C = 0.5
    problem = LF.ROWS["OCAS"][3]
    ref = LF.reference_optimum(X, y, C, problem)
    widened = LF.Reference(ref.p_star, ref.p_star * (1 - 5e-4), 5e-4, ref.tol)
    logs = []
    out = LF.measure_row("OCAS", X, y, C, widened, 1, 20.0, logs.append)
    for target, sides in out.items():
        for side, r in sides.items():
            if r is None:
                continue
            coef_gap = r["gap"]
            assert coef_gap >= 5e-4 * (1 - 1e-9)  # at least the widened bracket
            assert coef_gap <= target


@pytest.mark.parametrize("name", ["l2 squared hinge + intercept", "l1 squared hinge + intercept"])
@pytest.mark.parametrize("sparse", [False, True])
def test_polished_bias_is_the_exact_coordinate_minimum(name, sparse):
    """polish_bias against scipy's bounded scalar minimisation of the primal
    in the intercept alone, from LIBLINEAR's loose solution; the primal
    never gets worse."""
    from scipy.optimize import minimize_scalar

    problem = PROBLEMS[name]
    X, y = _data(5, n=300, sparse=sparse)
    C = 1.0
    coef, b, _ = liblinear(X, y, C, problem, 1e-1)

    def P(bb):
        return LF.primal_objective(X, y, coef, bb, C, loss=problem["loss"],
                                   penalty=problem["penalty"])

    bb = LF.polish_bias(X, y, C, problem, coef, b)
    ref = minimize_scalar(P, bounds=(b - 5.0, b + 5.0), method="bounded",
                          options={"xatol": 1e-12})
    assert P(bb) <= P(b)
    assert P(bb) <= ref.fun * (1 + 1e-12) + 1e-12
    # the L1 penalty's kink: a zero intercept stays zero where it is optimal
    if problem["penalty"] == "l1":
        assert P(bb) <= P(0.0)
    # no intercept, or the hinge: unchanged
    assert LF.polish_bias(X, y, C, PROBLEMS["l2 hinge"], coef, 0.25) == 0.25


def test_reference_past_its_time_limit_fails_loudly():
    X, y = _data(6)
    with pytest.raises(RuntimeError, match="took over"):
        LF.reference_optimum(X, y, 1.0, PROBLEMS["l2 hinge"], ladder=(1e-1, 1e-2),
                             max_gap=1e-14, limit_s=0.0)
