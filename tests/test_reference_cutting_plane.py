"""The readable cutting-plane references (svmlab.reference.cutting_plane,
svmlab.reference.ordinal) take the same steps as the fast estimators.

Same steps means: the same number of iterations, the same most violated
constraint at every iteration (the boolean vector c of Algorithm 1, the
counts c+ and c- of Algorithm 2), hence the same working sets, and iterates
w, xi that agree to a tolerance.

Why 1e-6 relative on w (observed: below 1e-9): OP3's w is unique (1/2 w'w
is strictly convex) and both QP solvers stop at KKT violations around
1e-12 relative (svmlab: SMO + Newton; the reference: an active-set method
with exact face solves).  The multipliers alpha need not be unique (K can
exceed rank(G) + 1), so they are not compared; the OP3 value (`dual`) is.

Near ties: a c_i could flip if y_i w'x_i were within rounding of 1 (or, in
Algorithm 2, s_i - s_j within rounding of 1).  Every comparison below first
checks, from the reference's w and data computed here, that no margin is
within 1e-8 of 1, so a flip is impossible; when a configuration has such a
tie the test says so instead of passing or failing by luck.  On a9a with
C = 30 an *exact* tie does occur (binary features, a w with rational
structure); :func:`test_a9a_exact_tie_is_a_legitimate_fork` shows that the
two constraints then differ only on examples at margin 1, where either
choice is a most violated constraint.
"""

import dataclasses
import itertools
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_blobs, make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC

from svmlab import CuttingPlaneClassifier, CuttingPlaneOrdinalRegressor
from svmlab.reference import cutting_plane as ref1
from svmlab.reference import ordinal as ref2
from svmlab.reference._source import source_text, tags_of

TIE = 1e-8  # margins closer than this to 1 could be decided differently by rounding


# --------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------
def blobs():
    X, y = make_blobs(120, 2, centers=[[-1, -1], [1.2, 0.8]], cluster_std=1.1, random_state=0)
    return X, y


def dense_random():
    return make_classification(200, 8, n_informative=5, flip_y=0.1, random_state=1)


def small_sparse():
    rng = np.random.default_rng(2)
    X = sp.random(150, 30, density=0.2, format="csr", random_state=3, dtype=np.float64)
    y = np.where(X @ rng.normal(size=30) + 0.3 * rng.normal(size=150) > 0, 1, -1)
    return X, y


def a9a_300():
    from svmlab.datasets import load  # a9a is embedded in the package: never skipped

    X, y = load("a9a")
    return X[:300], y[:300]


CLS_DATA = {"blobs": (blobs, 0.5), "dense": (dense_random, 0.5),
            "sparse": (small_sparse, 2.0), "a9a-300": (a9a_300, 1.0)}  # C / n


def dense(X):
    return X.toarray() if sp.issparse(X) else np.asarray(X)


def pm(y):
    return np.where(y == np.unique(y)[1], 1.0, -1.0)


def augmented(X, fit_intercept):
    X = dense(X)
    return np.hstack([X, np.ones((X.shape[0], 1))]) if fit_intercept else X


def op1(Xa, y_pm, wa, C):
    """OP1 objective, 1/2 |w|^2 + (C/n) sum hinge, computed here."""
    return 0.5 * wa @ wa + C * np.maximum(0.0, 1.0 - y_pm * (Xa @ wa)).mean()


# --------------------------------------------------------------------------
# the step comparison (Algorithm 1)
# --------------------------------------------------------------------------
def compare_cls_steps(fast, ref, Xa, y_pm, rtol_w=1e-6):
    """Assert that two record sequences of Algorithm 1 take the same steps."""
    assert len(fast) == len(ref), f"iteration counts differ: {len(fast)} vs {len(ref)}"
    for f, r in zip(fast, ref):
        k = r.iteration
        assert f.iteration == k
        wf, wr = np.append(f.w, f.b), np.append(r.w, r.b)
        assert np.linalg.norm(wf - wr) <= rtol_w * max(np.linalg.norm(wr), 1e-12), \
            f"w differs at iteration {k}"
        assert abs(f.xi - r.xi) <= 1e-8 * max(1.0, r.xi), f"xi differs at iteration {k}"
        assert abs(f.dual - r.dual) <= 1e-8 * max(1.0, abs(r.dual)), f"dual differs at {k}"
        assert np.array_equal(f.constraint, r.constraint), f"c differs at iteration {k}"
        assert f.working_set_size == r.working_set_size == k


def assert_no_margin_tie(records, Xa, y_pm):
    for r in records:
        m = y_pm * (Xa @ (np.append(r.w, r.b) if Xa.shape[1] > r.w.shape[0] else r.w))
        gap = np.abs(m - 1.0).min()
        assert gap > TIE, (f"near tie at iteration {r.iteration}: a margin is {gap:.1e} from 1, "
                           "so rounding could flip c_i; choose other data for this comparison")


def both_cls(X, y, C, eps, fit_intercept):
    fast_est = CuttingPlaneClassifier(C=C, epsilon=eps, fit_intercept=fit_intercept, max_iter=-1)
    fast = list(fast_est.iter_fit(X, y))
    res = ref1.fit(X, y, C=C, epsilon=eps, fit_intercept=fit_intercept, max_iter=-1)
    return fast_est, fast, res


@pytest.mark.parametrize("eps", [1e-3, 1e-4])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("name", list(CLS_DATA))
def test_algorithm1_same_steps_as_fast_solver(name, fit_intercept, eps):
    make, c_over_n = CLS_DATA[name]
    X, y = make()
    n = X.shape[0]
    C = c_over_n * n
    fast_est, fast, res = both_cls(X, y, C, eps, fit_intercept)
    Xa, y_pm = augmented(X, fit_intercept), pm(y)
    assert_no_margin_tie(res.records, Xa, y_pm)
    assert fast_est.converged_ and res.converged and len(res.records) > 3
    compare_cls_steps(fast, res.records, Xa, y_pm)
    np.testing.assert_allclose(np.append(res.coef, res.intercept),
                               np.append(fast_est.coef_[0], fast_est.intercept_[0]),
                               rtol=1e-6, atol=1e-9 * np.linalg.norm(res.coef))
    # the stopping test (line 9) at the last recorded iteration was not a near
    # tie (a tie at the final test would show as different iteration counts)
    last = res.records[-1]
    assert last.xi_new > last.xi + eps + 1e-9


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("name", ["blobs", "dense", "sparse"])
def test_reference_records_are_honest(name, fit_intercept):
    """Every field of the reference's records, recomputed here from data."""
    X, y = CLS_DATA[name][0]()
    n = X.shape[0]
    C = CLS_DATA[name][1] * n
    res = ref1.fit(X, y, C=C, epsilon=1e-3, fit_intercept=fit_intercept)
    Xa, y_pm = augmented(X, fit_intercept), pm(y)
    for k, r in enumerate(res.records, 1):
        wa = np.append(r.w, r.b) if fit_intercept else r.w
        assert r.iteration == k and (fit_intercept or r.b == 0.0)
        marg = y_pm * (Xa @ wa)
        c = marg < 1
        assert np.array_equal(r.constraint, c) and r.constraint_size == c.sum()
        g = (y_pm[c, None] * Xa[c]).sum(0) / n
        assert r.constraint_norm == pytest.approx(np.linalg.norm(g), rel=1e-12)
        assert r.constraint_offset == pytest.approx(c.mean(), rel=1e-15)
        assert r.xi_new == pytest.approx(np.maximum(0, 1 - marg).mean(), rel=1e-10, abs=1e-14)
        assert r.w_norm == pytest.approx(np.linalg.norm(wa), rel=1e-14)
        assert r.primal == pytest.approx(op1(Xa, y_pm, wa, C), rel=1e-10)
        assert r.gap == pytest.approx(r.primal - r.dual, rel=1e-12, abs=1e-12)
        assert r.working_set_size == len(r.alpha) == k
        assert np.all(r.alpha >= 0) and r.alpha.sum() <= C * (1 + 1e-12)
    # xi and dual of record k+1 are OP3's values after iteration k: recompute
    # them from the working set (the constraints of records 1..k) and alpha
    for prev, r in zip(res.records, res.records[1:]):
        W = [q.constraint for q in res.records[: prev.iteration]]
        G = np.array([(y_pm[c, None] * Xa[c]).sum(0) / n for c in W])
        d = np.array([c.mean() for c in W])
        w = prev.alpha @ G
        wa = np.append(r.w, r.b) if fit_intercept else r.w
        np.testing.assert_allclose(w, wa, rtol=1e-12, atol=1e-14)
        assert r.xi == pytest.approx(max(0.0, (d - G @ w).max()), abs=1e-12)
        assert r.dual == pytest.approx(prev.alpha @ d - 0.5 * w @ w, rel=1e-12, abs=1e-12)


def liblinear_primal(Xa, y, C_paper):
    n = Xa.shape[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        w = LinearSVC(loss="hinge", dual=True, fit_intercept=False, C=C_paper / n, tol=1e-10,
                      max_iter=500_000).fit(Xa, y).coef_[0]
    return op1(Xa, pm(y), w, C_paper)


@pytest.mark.parametrize("eps", [1e-3, 1e-4])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("name", list(CLS_DATA))
def test_reference_reaches_liblinear_optimum(name, fit_intercept, eps):
    """Theorem 3: P(w) <= P* + C epsilon.  LIBLINEAR (C_liblinear = C / n)
    runs on [X, 1] without its own intercept when fit_intercept, so the bias
    is a regularised constant feature in both."""
    X, y = CLS_DATA[name][0]()
    n = X.shape[0]
    C = CLS_DATA[name][1] * n
    res = ref1.fit(X, y, C=C, epsilon=eps, fit_intercept=fit_intercept, max_iter=-1)
    Xa = augmented(X, fit_intercept)
    wa = np.append(res.coef, res.intercept) if fit_intercept else res.coef
    p_ref, p_star = op1(Xa, pm(y), wa, C), liblinear_primal(Xa, y, C)
    assert p_ref <= p_star + C * eps
    assert p_ref >= p_star - 1e-6 * p_star  # not below the optimum


def test_a9a_exact_tie_is_a_legitimate_fork():
    """a9a[:300], C = 30, with intercept: at some iteration margins sit at
    exactly 1 (in exact arithmetic); the two codes round them to different
    sides.  Up to that iteration the steps are identical; there the
    constraints differ only on examples at margin 1 (|m - 1| < 1e-9), whose
    terms (1 - m) are zero either way, so both are most violated; and both
    runs still reach the optimum within C epsilon."""
    X, y = a9a_300()
    C, eps = 30.0, 1e-3
    fast_est, fast, res = both_cls(X, y, C, eps, True)
    Xa, y_pm = augmented(X, True), pm(y)
    k = next((i for i, (f, r) in enumerate(zip(fast, res.records))
              if not np.array_equal(f.constraint, r.constraint)), None)
    if k is None:
        pytest.skip("no tie on this platform's rounding: nothing to show")  # pragma: no cover
    compare_cls_steps(fast[:k], res.records[:k], Xa, y_pm)
    f, r = fast[k], res.records[k]
    np.testing.assert_allclose(np.append(f.w, f.b), np.append(r.w, r.b), rtol=1e-9)
    marg = y_pm * (Xa @ np.append(r.w, r.b))
    differ = f.constraint != r.constraint
    assert np.all(np.abs(marg[differ] - 1.0) < 1e-9)
    assert f.xi_new == pytest.approx(r.xi_new, abs=1e-12)  # the same violation
    p_star = liblinear_primal(Xa, y, C)
    wf = np.append(fast_est.coef_[0], fast_est.intercept_[0])
    for wa in (wf, np.append(res.coef, res.intercept)):
        assert op1(Xa, y_pm, wa, C) <= p_star + C * eps


def test_comparison_detects_a_modified_sequence():
    """The step comparison can fail: a flipped bit of one c, a dropped
    iteration, and a w moved by 1e-5 relative are each detected."""
    X, y = dense_random()
    C = 0.5 * X.shape[0]
    _, fast, res = both_cls(X, y, C, 1e-3, True)
    Xa, y_pm = augmented(X, True), pm(y)
    compare_cls_steps(fast, res.records, Xa, y_pm)  # the unmodified pair passes
    recs = list(res.records)
    c = recs[3].constraint.copy()
    c[np.argmax(c)] = False
    flipped = recs[:3] + [dataclasses.replace(recs[3], constraint=c)] + recs[4:]
    with pytest.raises(AssertionError, match="c differs at iteration 4"):
        compare_cls_steps(fast, flipped, Xa, y_pm)
    with pytest.raises(AssertionError, match="iteration counts differ"):
        compare_cls_steps(fast, recs[:-1], Xa, y_pm)
    moved = recs[:5] + [dataclasses.replace(recs[5], w=recs[5].w * (1 + 1e-5))] + recs[6:]
    with pytest.raises(AssertionError, match="w differs at iteration 6"):
        compare_cls_steps(fast, moved, Xa, y_pm)


# --------------------------------------------------------------------------
# most_violated and the reduced QP, standalone
# --------------------------------------------------------------------------
def test_most_violated_maximises_over_all_c():
    """Lines 5-7: the chosen c maximises (1/n) sum c_i (1 - y_i w'x_i) over
    all 2^n vectors (brute force, n = 10), including a margin of exactly 1."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(10, 3))
    y = np.where(rng.normal(size=10) > 0, 1.0, -1.0)
    w = rng.normal(size=3)
    w[0], X[0] = 2.0, 0.0
    X[0, 0] = 0.5 * y[0]  # y_0 w'x_0 == 1 exactly
    assert y[0] * (X[0] @ w) == 1.0
    c = ref1.most_violated(X, y, w)
    assert not c[0]
    value = lambda cc: np.mean(cc * (1 - y * (X @ w)))  # noqa: E731
    best = max(value(np.array(bits)) for bits in itertools.product([0, 1], repeat=10))
    assert value(c) == pytest.approx(best, abs=1e-15)
    assert np.array_equal(ref1.most_violated(X, y, w, b=0.3), y * (X @ w + 0.3) < 1)


@pytest.mark.parametrize("seed", range(4))
def test_reduced_qp_against_enumeration_and_kkt(seed):
    """The reference QP: KKT conditions checked here, and the value of the
    best of all free sets (exhaustive, K = 6) in rank-deficient cases."""
    rng = np.random.default_rng(seed)
    K, D, C = 6, 3, [0.5, 5.0, 50.0, 1e3][seed]
    G = rng.normal(size=(K, D))
    d = rng.uniform(0.1, 1.0, size=K)
    alpha, w, xi = ref1.solve_reduced_qp(G, d, C)
    np.testing.assert_allclose(w, alpha @ G)
    assert np.all(alpha >= 0) and alpha.sum() <= C * (1 + 1e-12)
    slack = d - G @ w
    assert slack.max() <= xi + 1e-10 and xi >= 0
    on = alpha > 1e-12 * C
    np.testing.assert_allclose(slack[on], xi, atol=1e-9)  # active constraints are tight
    if xi > 1e-10:
        assert alpha.sum() == pytest.approx(C, rel=1e-12)
    # strong duality: OP3 primal 1/2|w|^2 + C xi equals the dual value
    assert 0.5 * w @ w + C * xi == pytest.approx(alpha @ d - 0.5 * w @ w, rel=1e-10, abs=1e-12)


def test_bad_input_algorithm1():
    X, y = blobs()
    with pytest.raises(ValueError, match="two classes"):
        ref1.fit(X, np.zeros(len(y)))
    with pytest.raises(ValueError, match="NaN"):
        ref1.fit(np.full_like(X, np.nan), y)
    with pytest.raises(ValueError, match="samples"):
        ref1.fit(X[:-1], y)
    with pytest.raises(ValueError, match="C and epsilon"):
        ref1.fit(X, y, C=0.0)
    with pytest.raises(ValueError, match=r"\{-1, \+1\}"):
        ref1.most_violated(X, y, np.zeros(2))
    with pytest.raises(ValueError, match="most_violated needs"):
        ref1.most_violated(X, pm(y), np.zeros(3))


def test_explain_names_existing_tags_algorithm1():
    X, y = dense_random()
    res = ref1.fit(X, y, C=100.0)
    seen = set()
    for r in res.records:
        for func, tags in ref1.explain(r):
            assert func.__module__ == "svmlab.reference.cutting_plane"
            assert tags and tags <= tags_of(func), tags - tags_of(func)
            assert ">> " in source_text(func, tags)
            if func is ref1.solve_reduced_qp:
                seen |= tags
                binds = r.alpha.sum() >= 100.0 * (1 - 1e-12)  # C = 100
                assert ("sum-binds" in tags) == binds and ("sum-slack" in tags) != binds
    assert {"sum-binds", "sum-slack"} <= seen  # both QP states occur on this run


# --------------------------------------------------------------------------
# Algorithm 2
# --------------------------------------------------------------------------
def brute_counts(s, rank):
    n = len(s)
    cp = np.zeros(n, dtype=np.int64)
    cm = np.zeros(n, dtype=np.int64)
    for i in range(n):
        for j in range(n):
            if rank[i] > rank[j] and s[i] - s[j] < 1.0:  # violated pair, i above j
                cp[i] += 1
                cm[j] += 1
    return cp, cm


@pytest.mark.parametrize("seed", range(12))
def test_sweep_equals_brute_force(seed):
    """Quarter-grid scores (exact arithmetic: many score ties and pairs at
    margin exactly 1), ranks with gaps and empty levels, 2 to 5 ranks."""
    rng = np.random.default_rng(seed)
    n, R = int(rng.integers(1, 45)), int(rng.integers(2, 6))
    s = rng.integers(-10, 11, size=n) / 4.0
    ranks = rng.integers(0, R, size=n) * 3 - 2  # values -2, 1, 4, ...
    cp, cm = ref2.sweep_counts(s, ranks)
    bp, bm = brute_counts(s, ranks)
    np.testing.assert_array_equal(cp, bp)
    np.testing.assert_array_equal(cm, bm)
    s = rng.normal(scale=1.5, size=n)  # continuous scores
    np.testing.assert_array_equal(ref2.sweep_counts(s, ranks), brute_counts(s, ranks))


def test_sweep_roc_case():
    """Two ranks: c+ of a positive counts the negatives scored less than 1
    below it; sum c+ = number of violated positive-negative pairs."""
    s = np.array([2.0, 0.5, 1.0, -1.0, 0.0, 3.0])
    lab = np.array([1, 1, 0, 0, 0, 1])
    cp, cm = ref2.sweep_counts(s, lab)
    # 2.0 vs 1.0 is at margin exactly 1: not violated; 0.5 is violated by
    # 1.0 (margin -0.5) and 0.0 (margin 0.5), not by -1.0 (margin 1.5)
    assert cp.tolist() == [0, 2, 0, 0, 0, 0]
    assert cm.tolist() == [0, 0, 1, 0, 1, 0]
    assert cp.sum() == cm.sum() == 2


def ranked(n, d, R, seed, dup=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    if dup:  # duplicated rows: tied scores at every iteration
        X[n // 2:] = X[: n - n // 2]
    z = X @ rng.normal(size=d) + rng.normal(size=n)
    y = np.digitize(z, np.quantile(z, np.linspace(0, 1, R + 1)[1:-1])) * 2 + 1
    return X, y


ORD_DATA = {"roc-2": lambda: ranked(80, 4, 2, 0), "ranks-4": lambda: ranked(70, 5, 4, 1),
            "ties-3": lambda: ranked(60, 3, 3, 2, dup=True),
            "unbalanced": lambda: (ranked(60, 4, 2, 3)[0],
                                   np.r_[np.zeros(50, int), np.ones(6, int), 2 * np.ones(4, int)])}


def compare_ord_steps(fast, ref, rtol_w=1e-6):
    assert len(fast) == len(ref), f"iteration counts differ: {len(fast)} vs {len(ref)}"
    for f, r in zip(fast, ref):
        k = r.iteration
        assert np.linalg.norm(f.w - r.w) <= rtol_w * max(np.linalg.norm(r.w), 1e-12), \
            f"w differs at iteration {k}"
        assert abs(f.xi - r.xi) <= 1e-8 * max(1.0, r.xi), f"xi differs at iteration {k}"
        assert np.array_equal(f.c_plus, r.c_plus) and np.array_equal(f.c_minus, r.c_minus), \
            f"c differs at iteration {k}"
        assert f.n_pairs == r.n_pairs and f.constraint_size == r.constraint_size


@pytest.mark.parametrize("eps", [1e-3, 1e-4])
@pytest.mark.parametrize("name", list(ORD_DATA))
def test_algorithm2_same_steps_as_fast_solver(name, eps):
    X, y = ORD_DATA[name]()
    C = 20.0
    est = CuttingPlaneOrdinalRegressor(C=C, epsilon=eps, max_iter=-1)
    fast = list(est.iter_fit(X, y))
    res = ref2.fit(X, y, C=C, epsilon=eps, max_iter=-1)
    assert est.converged_ and res.converged and len(res.records) > 3
    for r in res.records:  # no pair difference within rounding of 1
        s = X @ r.w
        diff = s[:, None] - s[None, :]
        assert np.abs(diff - 1.0).min() > TIE, f"near tie at iteration {r.iteration}"
        bp, bm = brute_counts(s, y)  # and the reference's counts are right
        assert np.array_equal(r.c_plus, bp) and np.array_equal(r.c_minus, bm)
    compare_ord_steps(fast, res.records)
    np.testing.assert_allclose(res.coef, est.coef_[0], rtol=1e-6)
    assert res.n_pairs == est.n_pairs_


def test_algorithm2_reaches_pairwise_liblinear_optimum():
    """OP4 by brute force: LIBLINEAR on the m difference vectors,
    symmetrised (which doubles the loss: C_liblinear = C / (2m))."""
    X, y = ranked(40, 3, 3, 5)
    C, eps = 10.0, 1e-4
    res = ref2.fit(X, y, C=C, epsilon=eps)
    P = [(i, j) for i in range(len(y)) for j in range(len(y)) if y[i] > y[j]]
    Dif = np.array([X[i] - X[j] for i, j in P])
    op4 = lambda w: 0.5 * w @ w + C * np.maximum(0, 1 - Dif @ w).mean()  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        w_ll = LinearSVC(loss="hinge", dual=True, fit_intercept=False, C=C / (2 * len(P)),
                         tol=1e-10, max_iter=500_000).fit(
            np.vstack([Dif, -Dif]), np.r_[np.ones(len(P)), -np.ones(len(P))]).coef_[0]
    assert op4(res.coef) <= op4(w_ll) + C * eps
    assert op4(res.coef) >= op4(w_ll) * (1 - 1e-6)
    for r in res.records:  # the records' fields, recomputed here
        assert r.primal == pytest.approx(op4(r.w), rel=1e-10)
        viol = Dif @ r.w < 1.0
        assert r.constraint_size == viol.sum() and r.n_pairs == len(P)
        assert r.constraint_offset == pytest.approx(viol.mean(), rel=1e-14)
        assert r.xi_new == pytest.approx(np.maximum(0, 1 - Dif @ r.w).mean(), rel=1e-10)
        assert r.constraint_norm == pytest.approx(np.linalg.norm(Dif[viol].sum(0) / len(P)),
                                                  rel=1e-10)
        assert r.gap == pytest.approx(r.primal - r.dual, abs=1e-12)
        assert r.working_set_size == len(r.alpha) == r.iteration


def test_comparison_detects_a_modified_sequence_algorithm2():
    X, y = ORD_DATA["ranks-4"]()
    fast = list(CuttingPlaneOrdinalRegressor(C=20.0).iter_fit(X, y))
    recs = ref2.fit(X, y, C=20.0).records
    compare_ord_steps(fast, recs)
    cp = recs[2].c_plus.copy()
    cp[np.argmax(cp)] -= 1
    with pytest.raises(AssertionError, match="c differs at iteration 3"):
        compare_ord_steps(fast, recs[:2] + [dataclasses.replace(recs[2], c_plus=cp)] + recs[3:])


def test_explain_names_existing_tags_algorithm2():
    X, y = ORD_DATA["roc-2"]()
    for r in ref2.fit(X, y, C=20.0).records:
        for func, tags in ref2.explain(r):
            assert tags and tags <= tags_of(func), tags - tags_of(func)
            assert ">> " in source_text(func, tags)
    # every line of the sweep carries a tag, so the notebook can show it
    from svmlab.reference._source import tagged_lines

    body = [(line, t) for line, t in tagged_lines(ref2.sweep_counts)
            if line.strip() and not line.strip().startswith(("#", "def", '"""'))]
    start = next(i for i, (line, _) in enumerate(body) if "argsort" in line)
    assert all(t for _, t in body[start:-1])  # up to the final return


def test_bad_input_algorithm2():
    with pytest.raises(ValueError, match="integers"):
        ref2.sweep_counts([0.0, 1.0], [0.5, 1.0])
    with pytest.raises(ValueError, match="one entry per example"):
        ref2.sweep_counts([0.0, 1.0], [0, 1, 1])
    with pytest.raises(ValueError, match="finite"):
        ref2.sweep_counts([np.nan, 1.0], [0, 1])
    with pytest.raises(ValueError, match="two distinct ranks"):
        ref2.fit(np.ones((3, 2)), [1, 1, 1])
