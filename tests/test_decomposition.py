"""Chunking and SVMlight-style decomposition with every engine: optimum vs
LIBSVM, KKT, records re-checked here, SMO = decomposition(q=2, smo), bad input.
Objectives and KKT are computed in the test (tests/reference.py)."""

import numpy as np
import pytest
from sklearn.datasets import make_classification

from svmlab.decomposition._engines import solve_subproblem
from svmlab.decomposition.estimators import ChunkingClassifier, DecompositionClassifier, DecompositionRecord

from reference import dual_objective, gram, kkt_violation, libsvm_dual, to_pm


def _data(n=150, seed=0):
    return make_classification(n, 5, n_informative=3, random_state=seed, flip_y=0.1)


def _check(model, X, y, C, kernel="rbf", gamma=0.5, coef0=0.0):
    _, _, W_ref = libsvm_dual(X, y, C, kernel, gamma, 3, coef0)
    K = gram(X, kernel, gamma, 3, coef0)
    yp = to_pm(y, model.classes_)
    a = model.alpha_
    assert np.all(a >= 0) and np.all(a <= C)
    assert abs(a @ yp) < 1e-6 * max(1.0, C)
    W = dual_objective(K, yp, a)
    assert abs(W - W_ref) <= 1e-3 * abs(W_ref), (W, W_ref)
    assert kkt_violation(K, yp, a, model.intercept_[0], C) <= model.tol * 1.0001
    return W


@pytest.mark.parametrize("engine", ["qp", "irwls", "smo"])
@pytest.mark.parametrize("C", [1.0, 1000.0])
def test_decomposition_engines(engine, C):
    X, y = _data(150 if C < 100 else 80)
    m = DecompositionClassifier(C=C, gamma=0.5, engine=engine, working_set_size=10).fit(X, y)
    _check(m, X, y, C)


@pytest.mark.parametrize("engine", ["qp", "irwls", "smo"])
@pytest.mark.parametrize("C", [1.0, 1000.0])
def test_chunking_engines(engine, C):
    X, y = _data(150 if C < 100 else 80, seed=1)
    m = ChunkingClassifier(C=C, gamma=0.5, engine=engine, working_set_size=15).fit(X, y)
    _check(m, X, y, C)


@pytest.mark.parametrize("kernel,gamma,C", [("poly", 0.2, 1.0)])
def test_other_kernels(kernel, gamma, C):
    X, y = _data(120, seed=2)
    for m in (DecompositionClassifier(C=C, kernel=kernel, gamma=gamma, coef0=1.0, engine="irwls",
                                      working_set_size=20),
              ChunkingClassifier(C=C, kernel=kernel, gamma=gamma, coef0=1.0)):
        _check(m.fit(X, y), X, y, C, kernel, gamma, 1.0)


def test_q2_smo_engine_is_smo():
    """SMO is decomposition with q = 2 and the analytic engine."""
    X, y = _data(150, seed=3)
    m = DecompositionClassifier(C=10.0, gamma=0.5, engine="smo", working_set_size=2,
                                shrinking=False).fit(X, y)
    recs = []
    DecompositionClassifier(C=10.0, gamma=0.5, engine="smo", working_set_size=2,
                            shrinking=False).fit(X, y, callback=recs.append)
    # every step is exactly one analytic pair step on two samples
    assert all(r.subproblem_size == 2 and r.engine_iterations == 1 for r in recs)
    _check(m, X, y, 10.0)


def test_records_recomputed_in_test():
    X, y = _data(120, seed=4)
    C = 5.0
    # float64 cache: the records' objectives are checked to 1e-9
    est = DecompositionClassifier(C=C, gamma=0.5, engine="qp", working_set_size=6,
                                  cache_dtype="float64")
    recs = list(est.iter_fit(X, y))
    assert len(recs) == est.n_iter_ and est.converged_
    K = gram(X, gamma=0.5)
    yp = to_pm(y, est.classes_)
    a = np.zeros(len(y))
    prev = 0.0
    for r in recs:
        assert isinstance(r, DecompositionRecord)
        # q = 6, or the union of two alternating working sets (break_cycle:
        # at most 2q + CYCLE_SLACK)
        assert r.subproblem_size == len(r.working_set) <= 13
        a[r.working_set] = r.alpha_B
        W = dual_objective(K, yp, a)
        assert r.dual_objective == pytest.approx(W, rel=1e-9, abs=1e-9)
        assert W >= prev - 1e-9  # each sub-problem solve increases W
        prev = W
    np.testing.assert_allclose(a, est.alpha_)


def test_shrinking_and_stop():
    X, y = _data(200, seed=5)
    C = 100.0
    for shrinking in (True, False):
        m = DecompositionClassifier(C=C, gamma=0.5, engine="smo", shrinking=shrinking).fit(X, y)
        _check(m, X, y, C)
    m = DecompositionClassifier(C=C, gamma=0.5)
    m.fit(X, y, callback=lambda r: r.iteration < 5)
    assert m.n_iter_ == 5
    a = m.alpha_
    assert np.all((a >= 0) & (a <= C)) and abs(a @ to_pm(y, m.classes_)) < 1e-8 * C


def test_engines_agree_on_a_subproblem():
    """The three engines solve the same box + equality QP (vs LIBSVM)."""
    X, y = _data(40, seed=6)
    K = gram(X, gamma=0.5)
    yp = to_pm(y)
    C = 3.0
    _, _, W_ref = libsvm_dual(X, y, C, gamma=0.5)
    for engine in ("qp", "irwls", "smo"):
        a, b, it = solve_subproblem(engine, K, yp, np.zeros(40), yp.copy(), C, 1e-6)
        assert abs(dual_objective(K, yp, a) - W_ref) <= 1e-6 * abs(W_ref), engine
        assert kkt_violation(K, yp, a, b, C) <= 1e-5


@pytest.mark.parametrize("cls", [DecompositionClassifier, ChunkingClassifier])
@pytest.mark.parametrize("params,match", [
    ({"working_set_size": 1}, "working_set_size"),
    ({"working_set_size": 500}, "larger than the number of samples"),
    ({"engine": "cg"}, "engine"),
    ({"C": -1.0}, "C"),
])
def test_bad_params(cls, params, match):
    X, y = _data(50)
    with pytest.raises(ValueError, match=match):
        cls(**params).fit(X, y)


def test_bad_data():
    X, y = _data(50)
    Xi = X.copy()
    Xi[0, 0] = np.inf
    with pytest.raises(ValueError):
        DecompositionClassifier().fit(Xi, y)
    with pytest.raises(ValueError):
        ChunkingClassifier().fit(X, np.ones(50))


def test_partial_selection_matches_full_stable_sort():
    """steepest_feasible's top-q selection (partition + small sort) picks the
    same indices in the same order as a full stable argsort, ties and
    infinities included."""
    from svmlab.decomposition._working_set import _smallest

    rng = np.random.default_rng(0)
    for _ in range(500):
        n = int(rng.integers(1, 60))
        v = rng.integers(-3, 3, n).astype(float)
        v[rng.random(n) < 0.3] = np.inf
        k = int(rng.integers(0, n + 2))
        np.testing.assert_array_equal(_smallest(v, k), np.argsort(v, kind="stable")[:k])


def test_restore_equality_projects_drift_onto_the_free_multipliers():
    """The working set's equality constraint after an engine answer that
    drifted: the drift leaves through the free multipliers, the box holds,
    and an answer already on the constraint is returned untouched."""
    from svmlab.decomposition.estimators import restore_equality

    rng = np.random.default_rng(3)
    yB = np.where(rng.random(12) < 0.5, -1.0, 1.0)
    C = np.full(12, 5.0)
    a_old = rng.uniform(0, 5, 12)
    a_old[[0, 1]] = [0.0, 5.0]                    # two at a bound
    exact = a_old.copy()
    assert restore_equality(exact, a_old, yB, C) is exact
    drifted = a_old + yB * 3e-7 * (np.arange(12) > 1)   # only free ones move
    assert abs(yB @ drifted - yB @ a_old) > 1e-6
    fixed = restore_equality(drifted, a_old, yB, C)
    assert abs(yB @ fixed - yB @ a_old) <= 1e-12 * 6
    assert np.all(fixed >= 0) and np.all(fixed <= C)
    assert fixed[0] == 0.0 and fixed[1] == 5.0    # bounds untouched
    assert np.max(np.abs(fixed - drifted)) < 1e-6  # a small correction


# --------------------------------------------------------------------------
# issue 24, item 7: a zig-zag between two working sets
# --------------------------------------------------------------------------
def _near_return(B, before, last):
    """B is ``before`` with at most one sample exchanged each way, and is not
    ``last`` in that sense (the zig-zag signature)."""
    B, before, last = set(B.tolist()), set(before.tolist()), set(last.tolist())

    def close(S, T):
        return len(S - T) <= 1 and len(T - S) <= 1

    return close(B, before) and not close(B, last)


def _large_C_problem():
    rng = np.random.RandomState(0)
    X = rng.randn(300, 5)
    y = np.where(X[:, 0] + 0.3 * rng.randn(300) > 0, 1, -1)
    return X, y


@pytest.mark.parametrize("engine", ["qp", "irwls"])
def test_alternating_working_sets_are_merged_and_the_fit_converges(engine):
    """A 300-sample linear problem at C = 1e8 (nearly hard margin on
    overlapping classes; LIBSVM does not converge in 1e8 iterations): fresh
    working sets of 10 alternated between two sets from about step 800 on,
    each exact sub-problem moving its multipliers a little along a valley,
    the maximal violation fixed at 15.5, and the fit ran to any max_iter
    (200000 outer steps: 450 s).  With the union of two alternating sets
    taken as the working set the fit converges in a few hundred steps, at
    the optimum that IRWLS, a different method, reaches (objective and KKT
    computed here).  The "irwls" engine (inexact sub-problems) alternates
    through A, B, A', B' with A' = A but for one sample; the return is
    detected up to one sample (docs/decisions/29z01-near-return-cycle-test.md)."""
    import warnings

    from svmlab import IRWLSClassifier

    X, y = _large_C_problem()
    C = 1e8
    m = DecompositionClassifier(C=C, kernel="linear", engine=engine, max_iter=5000)
    recs = list(m.iter_fit(X, y))
    assert m.stop_reason_ == "converged" and m.n_iter_ < 2000, (m.stop_reason_, m.n_iter_)
    # no working set used again (up to one sample) right after a step on
    # another set
    sets = [r.working_set for r in recs]
    assert not any(_near_return(sets[t], sets[t - 2], sets[t - 1]) for t in range(2, len(sets)))
    assert any(r.subproblem_size > 10 for r in recs)  # merged steps happened
    K = gram(X, "linear")
    yp = to_pm(y, m.classes_)
    a = m.alpha_
    assert np.all(a >= 0) and np.all(a <= C) and abs(a @ yp) <= 1e-9 * C
    assert kkt_violation(K, yp, a, m.intercept_[0], C) <= m.tol * 1.0001
    # the maximal violation m(alpha) - M(alpha), from K and alpha only
    v = yp - K @ (yp * a)
    up = ((yp > 0) & (a < C)) | ((yp < 0) & (a > 0))
    low = ((yp > 0) & (a > 0)) | ((yp < 0) & (a < C))
    assert v[up].max() - v[low].min() <= m.tol * 1.0001
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        other = IRWLSClassifier(C=C, kernel="linear", random_state=0, max_iter=20000).fit(X, y)
    assert other.converged_
    W, W_other = dual_objective(K, yp, m.alpha_), dual_objective(K, yp, other.alpha_)
    assert abs(W - W_other) <= 1e-6 * abs(W_other), (W, W_other)


def test_pairs_are_never_merged():
    """q = 2 with the smo engine stays SMO with the maximal violating pair
    (no merging of alternating pairs): every sub-problem has two samples."""
    X, y = _large_C_problem()
    m = DecompositionClassifier(C=1e4, gamma=0.5, engine="smo", working_set_size=2, max_iter=3000)
    assert all(r.subproblem_size == 2 for r in m.iter_fit(X, y))


def test_break_cycle_matches_its_readable_twin_and_the_exact_rule():
    """The fast rule and the reference's take the same decision on random
    histories; with no slack it is the exact rule of 26d12 (a return to the
    very set of two steps before); a set returning with one sample
    exchanged is merged with the previous set."""
    from svmlab.decomposition._working_set import CYCLE_SLACK, break_cycle
    from svmlab.reference import decomposition as ref

    import inspect
    assert inspect.signature(ref.break_cycle).parameters["slack"].default == CYCLE_SLACK
    A = np.arange(10)
    Bs = np.arange(20, 30)
    A2 = np.array([0, 1, 2, 3, 4, 5, 6, 7, 8, 15])
    np.testing.assert_array_equal(break_cycle(A2, [A, Bs]), np.union1d(A2, Bs))
    np.testing.assert_array_equal(ref.break_cycle(A2, [A, Bs]), np.union1d(A2, Bs))
    assert break_cycle(A2, [A, Bs], slack=0) is A2           # exact rule: no return
    assert break_cycle(A2, [A, A2]) is A2                    # no alternation
    rng = np.random.default_rng(0)
    fired = {0: 0, 1: 0}
    for _ in range(3000):
        pool = rng.choice(40, 16, replace=False)

        def draw():
            return np.sort(rng.choice(pool, int(rng.integers(2, 9)), replace=False))

        before, last = draw(), draw()
        B = before.copy()
        if rng.random() < 0.5:  # exchange a sample or two
            for _ in range(int(rng.integers(1, 3))):
                out = [k for k in pool if k not in B]
                B[int(rng.integers(len(B)))] = out[int(rng.integers(len(out)))]
            B = np.unique(B)
        elif rng.random() < 0.5:
            B = draw()
        for slack in (0, 1):
            got = break_cycle(B, [before, last], slack)
            np.testing.assert_array_equal(got, ref.break_cycle(B, [before, last], slack))
            fired[slack] += len(got) != len(B)
            if slack == 0:  # 26d12's exact rule
                want = np.union1d(B, last) if np.array_equal(B, before) else B
                np.testing.assert_array_equal(got, want)
    assert 0 < fired[0] < fired[1]


@pytest.mark.parametrize("engine", ["qp", "irwls"])
@pytest.mark.parametrize("case", ["moons", "blobs"])
def test_near_return_rule_leaves_fits_that_do_not_zig_zag_alone(engine, case, monkeypatch):
    """Where the plain selection never returns (up to one sample) to the set
    of two steps before, the rule changes nothing: the same working sets and
    the same multipliers, bit for bit, as a fit without it; and the fit is
    at LIBSVM's optimum."""
    from sklearn.datasets import make_blobs, make_moons

    import svmlab.decomposition.estimators as est_mod

    if case == "moons":
        X, y = make_moons(150, noise=0.25, random_state=0)
        C = 1.0
    else:
        X, y = make_blobs(200, centers=2, cluster_std=2.0, random_state=3)
        C = 3.0
    gamma = 1.0 / (X.shape[1] * X.var())  # "scale"
    params = dict(C=C, gamma=gamma, engine=engine, working_set_size=10)
    ours = DecompositionClassifier(**params)
    recs = list(ours.iter_fit(X, y))
    with monkeypatch.context() as mp:
        mp.setattr(est_mod, "break_cycle", lambda B, recent: B)
        plain = DecompositionClassifier(**params)
        plain_recs = list(plain.iter_fit(X, y))
    sets = [r.working_set for r in plain_recs]
    assert len(sets) > 15
    assert not any(_near_return(sets[t], sets[t - 2], sets[t - 1]) for t in range(2, len(sets)))
    assert len(recs) == len(plain_recs)
    for r, p in zip(recs, plain_recs):
        np.testing.assert_array_equal(r.working_set, p.working_set)
    np.testing.assert_array_equal(ours.alpha_, plain.alpha_)
    _check(ours, X, y, C, gamma=gamma)
