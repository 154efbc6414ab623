"""The readable twins of TRON, CDN and Crammer-Singer (svmlab.reference.tron, .cdn,
.crammer_singer) take the compiled solvers' steps, and reach LIBLINEAR's optimum.

For each solver, on dense and CSR input, with and without the intercept, with
and without class/sample weights: the compiled run (through the stepping
protocol, ``est.start(...).step()``) and its twin are advanced side by side,
and after every step (a trust-region trial for TRON, an epoch for CDN and
Crammer-Singer) their records and their whole state (w, the dual variables,
the permutation and the active sets, the counters) must be equal bit for bit.
Then the twins are run to the end and their primal objective, computed here,
is compared with scikit-learn's (LIBLINEAR's) at a tight tolerance.
"""

import math

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn import svm as sk
from sklearn.datasets import make_classification, make_regression
from sklearn.utils.class_weight import compute_class_weight

import svmlab.reference as reference
from svmlab import LinearSVC, LinearSVR
from svmlab.reference.cdn import CDN, cdn
from svmlab.reference.crammer_singer import CrammerSinger, crammer_singer
from svmlab.reference.tron import ETA0, ETA1, Tron, tron

RANDOM_STATE = 5


def seed_of(random_state):
    """The generator's start the estimators draw from ``random_state``."""
    return np.random.RandomState(random_state).randint(np.iinfo("i").max)


def sparsify(X, cut=0.5):
    X = X.copy()
    X[np.abs(X) < cut] = 0.0          # zeros, so that the CSR rows are really sparse
    return X


@pytest.fixture(scope="module")
def binary():
    X, y = make_classification(120, 8, n_informative=5, random_state=3, flip_y=0.1)
    return sparsify(X), y


@pytest.fixture(scope="module")
def hard():
    """Separable, badly scaled: TRON's model is poor far out, so trials get
    rejected and the radius shrinks."""
    X, y = make_classification(60, 4, n_informative=3, n_redundant=0, class_sep=3.0,
                               random_state=1)
    return sparsify(X, 0.3) * np.array([1.0, 10.0, 0.1, 100.0]), y


@pytest.fixture(scope="module")
def regression():
    X, y = make_regression(120, 8, noise=5.0, random_state=1)
    return sparsify(X), y / 50


@pytest.fixture(scope="module")
def multiclass():
    X, y = make_classification(90, 6, n_informative=4, n_classes=3, n_clusters_per_class=1,
                               class_sep=2.0, random_state=0)
    X = sparsify(X, 0.3)
    X[7] = 0.0                        # an empty row: skipped when there is no bias feature
    return X, y


def weights(y, weighted):
    """(sample_weight, class_weight) of a case: positive sample weights and a
    heavier class 1, or none."""
    if not weighted:
        return None, None
    sw = np.random.default_rng(0).uniform(0.5, 2.0, len(y))
    return sw, {1: 2.0}


def per_example_C(C, y, sw, cw):
    """LIBLINEAR's ``C_i = C * sample_weight_i * class_weight[y_i]`` (binary:
    class_weight is keyed by the label)."""
    classes, y_idx = np.unique(y, return_inverse=True)
    base = np.full(len(y), float(C)) if sw is None else float(C) * sw
    w = compute_class_weight(cw, classes=classes, y=y)
    return base * w[y_idx]


def lockstep(run, twin, check):
    """Advance both one step at a time; ``check(a, b)`` after each; returns the
    number of steps.  Both must end on the same step."""
    n = 0
    while True:
        a, b = run.step(), twin.step()
        if a is None or b is None:
            assert a is None and b is None, f"one run ended after {n} steps, the other did not"
            return n
        check(a, b, n)
        n += 1


def same_record(a, b, n):
    """Field by field, NaN equal to NaN."""
    assert type(a) is type(b), n
    for name in a.__dataclass_fields__:
        x, y = getattr(a, name), getattr(b, name)
        if isinstance(x, float) and math.isnan(x):
            assert math.isnan(y), (n, name, x, y)
        else:
            assert x == y, (n, name, x, y)


def case_ids(sparse, intercept, weighted):
    return f"{'csr' if sparse else 'dense'}-{'b' if intercept else 'nob'}-{'w' if weighted else 'unw'}"


CASES = [(s, i, w) for s in (False, True) for i in (True, False) for w in (False, True)]
IDS = [case_ids(*c) for c in CASES]


# ---------------------------------------------------------------------------
# objectives, computed here
# ---------------------------------------------------------------------------
def l2_primal(coef, b, X, y, C, B, kind, eps=0.0):
    """1/2 |[w, b/B]|^2 + sum C_i loss^2 (squared hinge or squared eps-insensitive)."""
    coef = np.ravel(coef)
    wb = b / B if B else 0.0
    z = np.asarray(X @ coef).ravel() + b
    if kind == "svc":
        m = np.maximum(1.0 - y * z, 0.0)
    else:
        m = np.maximum(np.abs(z - y) - eps, 0.0)
    return 0.5 * (coef @ coef + wb * wb) + np.sum(C * m * m)


def l1_primal(coef, b, X, y_pm, C, B):
    """|[w, b/B]|_1 + sum C_i max(0, 1 - y_i (w'x_i + b))^2."""
    coef = np.ravel(coef)
    wb = b / B if B else 0.0
    m = np.maximum(1.0 - y_pm * (np.asarray(X @ coef).ravel() + b), 0.0)
    return np.abs(coef).sum() + abs(wb) + np.sum(C * m * m)


def cs_primal(W, b, X, y_idx, C, B):
    """1/2 sum_m |[w_m, b_m/B]|^2 + sum C_i max_m (e_i^m + z_im - z_iy_i)."""
    wb = b / B if B else np.zeros(len(b))
    Z = np.asarray(X @ W.T) + b
    e = np.ones_like(Z)
    rows = np.arange(len(y_idx))
    e[rows, y_idx] = 0.0
    xi = np.max(Z + e - Z[rows, y_idx][:, None], axis=1)
    return 0.5 * (np.sum(W * W) + wb @ wb) + np.sum(C * xi)


def cs_dual(alpha, X, y_idx, B):
    """The dual's value at ``alpha`` (to maximise: minus the minimised one)."""
    Xa = np.c_[X, np.full(len(X), B)]
    Wa = alpha.T @ Xa
    e = np.ones_like(alpha)
    e[np.arange(len(y_idx)), y_idx] = 0.0
    return -(0.5 * np.sum(Wa * Wa) + np.sum(e * alpha))


# ---------------------------------------------------------------------------
# TRON
# ---------------------------------------------------------------------------
def tron_state_equal(run, twin, n):
    np.testing.assert_array_equal(run.w, twin.w, err_msg=str(n))
    np.testing.assert_array_equal(run.g, twin.g, err_msg=str(n))
    assert list(run.active[:run.m]) == twin.active, n
    assert (run.f, run.gnorm, run.delta) == (twin.f, twin.gnorm, twin.delta), n
    assert (run.newton_iter, run.trials, run.cg_total) == (twin.newton_iter, twin.trials,
                                                          twin.cg_total), n


@pytest.mark.parametrize("sparse, intercept, weighted", CASES, ids=IDS)
@pytest.mark.parametrize("data, C", [("binary", 0.7), ("hard", 10.0), ("hard", 1e3),
                                     ("regression", 2.0)])
def test_tron_twin_takes_the_same_trials(request, data, C, sparse, intercept, weighted):
    X, y = request.getfixturevalue(data)
    kind = "svr" if data == "regression" else "svc"
    sw, cw = weights(y, weighted)
    Xin = sp.csr_matrix(X) if sparse else X
    if kind == "svc":
        est = LinearSVC(dual=False, C=C, tol=1e-6, fit_intercept=intercept, class_weight=cw,
                        solver="tron")
        y_t = np.where(y == 1, 1.0, -1.0)
        Ci = per_example_C(C, y, sw, cw)
    else:
        est = LinearSVR(loss="squared_epsilon_insensitive", dual=False, C=C, epsilon=0.1,
                        tol=1e-6, fit_intercept=intercept, solver="tron")
        y_t = y
        Ci = per_example_C(C, np.zeros(len(y)), sw, None)
    run = est.start(Xin, y, sample_weight=sw)
    twin = Tron(Xin, y_t, C=Ci, kind=kind, epsilon=0.1 if kind == "svr" else 0.0,
                B=1.0 if intercept else 0.0, tol=1e-6)
    np.testing.assert_array_equal(run.C, twin.C)
    assert run.eps == twin.eps and run.gnorm0 == twin.gnorm0
    tron_state_equal(run, twin, -1)
    recs = []

    def check(a, b, n):
        same_record(a, b, n)
        tron_state_equal(run, twin, n)
        recs.append(b)

    n = lockstep(run, twin, check)
    assert n >= 3
    assert run.converged and twin.converged
    if data == "hard" and intercept and not weighted:
        # the radius does its work: some trial is rejected (ratio < eta0), some
        # accepted with a shrinking radius (eta0 < ratio < eta1)
        if C == 1e3:
            assert any(not r.accepted for r in recs)
        else:
            assert any(ETA0 < r.ratio < ETA1 and r.accepted for r in recs)
    est = run.finish()
    assert est.n_iter_ == twin.newton_iter
    np.testing.assert_array_equal(est.coef_.ravel(), twin.w[:-1])


@pytest.mark.parametrize("kind", ["svc", "svr"])
@pytest.mark.parametrize("weighted", [False, True])
def test_tron_twin_reaches_liblinear_optimum(binary, regression, kind, weighted):
    X, y = binary if kind == "svc" else regression
    sw, cw = weights(y, weighted)
    C = 1.3
    if kind == "svc":
        y_t = np.where(y == 1, 1.0, -1.0)
        Ci = per_example_C(C, y, sw, cw)
        ref = sk.LinearSVC(dual=False, C=C, tol=1e-12, class_weight=cw,
                           max_iter=100000).fit(X, y, sample_weight=sw)
    else:
        y_t = y
        Ci = per_example_C(C, np.zeros(len(y)), sw, None)
        ref = sk.LinearSVR(loss="squared_epsilon_insensitive", dual=False, C=C, epsilon=0.1,
                           tol=1e-12, max_iter=100000).fit(X, y, sample_weight=sw)
    res = tron(X, y_t, C=Ci, kind=kind, epsilon=0.1 if kind == "svr" else 0.0, tol=1e-9)
    assert res.converged
    p = l2_primal(res.w, res.b, X, y_t, Ci, 1.0, kind, 0.1)
    p_ref = l2_primal(ref.coef_, np.ravel(ref.intercept_)[0], X, y_t, Ci, 1.0, kind, 0.1)
    assert p == pytest.approx(res.f, rel=1e-12)        # the twin's own f is this objective
    assert abs(p - p_ref) <= 1e-8 * p_ref
    # and the gradient vanishes, computed here, relative to the one at w = 0
    Xa = np.c_[X, np.ones(len(X))]

    def grad(w):
        z = Xa @ w
        if kind == "svc":
            return w - 2 * Xa.T @ (Ci * y_t * np.maximum(1 - y_t * z, 0))
        r = z - y_t
        return w + 2 * Xa.T @ (Ci * np.where(r > 0.1, r - 0.1, np.where(r < -0.1, r + 0.1, 0.0)))

    g0 = np.linalg.norm(grad(np.zeros(Xa.shape[1])))
    assert np.linalg.norm(grad(np.r_[res.w, res.b])) <= 1e-7 * g0


# ---------------------------------------------------------------------------
# CDN
# ---------------------------------------------------------------------------
def cdn_state_equal(run, twin, n):
    np.testing.assert_array_equal(run.w, twin.w, err_msg=str(n))
    np.testing.assert_array_equal(run.b, twin.b, err_msg=str(n))
    assert list(run.index) == twin.index, n
    assert int(run.ist[0]) == twin.active and int(run.ist[1]) == twin.epochs, n
    assert run.fst[0] == twin.Gmax_old or (math.isinf(run.fst[0]) and math.isinf(twin.Gmax_old))
    assert run.fst[2] == twin.Gnorm1_init, n


@pytest.mark.parametrize("sparse, intercept, weighted", CASES, ids=IDS)
@pytest.mark.parametrize("data, C", [("binary", 0.7), ("hard", 1e3)])
def test_cdn_twin_takes_the_same_epochs(request, data, C, sparse, intercept, weighted):
    """On ``hard`` the cheap test of the line search fails and the step halves."""
    X, y = request.getfixturevalue(data)
    sw, cw = weights(y, weighted)
    Xin = sp.csr_matrix(X) if sparse else X
    est = LinearSVC(penalty="l1", dual=False, C=C, tol=1e-2, fit_intercept=intercept,
                    class_weight=cw, random_state=RANDOM_STATE, max_iter=400)
    run = est.start(Xin, y, sample_weight=sw)
    y_pm = np.where(y == 1, 1.0, -1.0)
    twin = CDN(Xin, y_pm, C=per_example_C(C, y, sw, cw), B=1.0 if intercept else 0.0,
               tol=1e-2, max_iter=400, seed=seed_of(RANDOM_STATE))
    np.testing.assert_array_equal(run.C, twin.C)
    np.testing.assert_array_equal(run.xj_sq, twin.xj_sq)
    assert run.fst[1] == twin.eps
    recs = []

    def check(a, b, n):
        same_record(a, b, n)
        cdn_state_equal(run, twin, n)
        recs.append(b)

    n = lockstep(run, twin, check)
    assert n >= 5
    assert run.converged and twin.converged and run.stop_reason == "converged"
    if data == "binary":
        assert any(r.active_size < len(twin.index) for r in recs)  # shrinking happened
        assert 0 < recs[-1].nnz < len(twin.index)                   # a sparse model
    assert run.finish().n_iter_ == twin.epochs


@pytest.mark.parametrize("intercept", [True, False])
def test_cdn_twin_reaches_liblinear_optimum(binary, intercept):
    X, y = binary
    sw, cw = weights(y, True)
    C = 0.3
    y_pm = np.where(y == 1, 1.0, -1.0)
    Ci = per_example_C(C, y, sw, cw)
    B = 1.0 if intercept else 0.0
    res = cdn(X, y_pm, C=Ci, B=B, tol=1e-6, max_iter=5000, seed=1, keep_records=False)
    ref = sk.LinearSVC(penalty="l1", dual=False, C=C, tol=1e-10, class_weight=cw,
                       fit_intercept=intercept, max_iter=100000).fit(X, y, sample_weight=sw)
    p = l1_primal(res.w, res.b, X, y_pm, Ci, B)
    p_ref = l1_primal(ref.coef_, np.ravel(ref.intercept_)[0], X, y_pm, Ci, B)
    assert abs(p - p_ref) <= 1e-6 * p_ref
    # optimality, computed here: |grad_j L| <= 1 where w_j = 0, = -sign(w_j) elsewhere
    Xa = np.c_[X, np.full(len(X), B)]
    w = np.r_[res.w, res.b / B if B else 0.0]
    m = np.maximum(1 - y_pm * (Xa @ w), 0)
    G = -2 * Xa.T @ (Ci * y_pm * m)
    tol = 1e-4 * np.abs(-2 * Xa.T @ (Ci * y_pm)).max()
    nz = w != 0
    assert np.all(np.abs(G[~nz]) <= 1 + tol)
    np.testing.assert_allclose(G[nz], -np.sign(w[nz]), atol=tol)


# ---------------------------------------------------------------------------
# Crammer-Singer
# ---------------------------------------------------------------------------
def cs_state_equal(run, twin, n):
    np.testing.assert_array_equal(run.W, twin.W, err_msg=str(n))
    np.testing.assert_array_equal(run.alpha, twin.alpha, err_msg=str(n))
    assert list(run.index) == twin.index, n
    assert run.aidx.tolist() == twin.aidx and run.act_i.tolist() == twin.act_i, n
    assert run.y_index.tolist() == twin.y_index, n
    assert int(run.ist[0]) == twin.active and int(run.ist[1]) == twin.epochs, n
    assert bool(run.ist[5]) == twin.start_from_all and run.fst[1] == twin.eps_shrink, n


@pytest.mark.parametrize("sparse, intercept, weighted", CASES, ids=IDS)
def test_crammer_singer_twin_takes_the_same_epochs(multiclass, sparse, intercept, weighted):
    X, y = multiclass
    sw, cw = weights(y, weighted)
    C = 0.5
    Xin = sp.csr_matrix(X) if sparse else X
    est = LinearSVC(multi_class="crammer_singer", C=C, tol=0.05, fit_intercept=intercept,
                    class_weight=cw, random_state=RANDOM_STATE, max_iter=1000)
    run = est.start(Xin, y, sample_weight=sw)
    twin = CrammerSinger(Xin, y, 3, C=per_example_C(C, y, sw, cw),
                         B=1.0 if intercept else 0.0, tol=0.05, max_iter=1000,
                         seed=seed_of(RANDOM_STATE))
    np.testing.assert_array_equal(run.C, twin.C)
    np.testing.assert_array_equal(run.QD, twin.QD)
    recs = []

    def check(a, b, n):
        same_record(a, b, n)
        cs_state_equal(run, twin, n)
        recs.append(b)

    n = lockstep(run, twin, check)
    assert n >= 5
    assert run.converged and twin.converged and run.stop_reason == "converged"
    assert any(r.active_size < len(y) for r in recs)                # shrinking happened
    assert any(a < 3 for a in twin.act_i)                           # and of classes too
    est = run.finish()
    assert est.n_iter_ == twin.epochs
    np.testing.assert_array_equal(est.coef_, twin.coef)


@pytest.mark.parametrize("intercept", [True, False])
def test_crammer_singer_twin_reaches_liblinear_optimum(multiclass, intercept):
    X, y = multiclass
    sw, cw = weights(y, True)
    C = 0.5
    Ci = per_example_C(C, y, sw, cw)
    B = 1.0 if intercept else 0.0
    res = crammer_singer(X, y, 3, C=Ci, B=B, tol=1e-4, max_iter=20000, seed=2,
                         keep_records=False)
    assert res.converged
    ref = sk.LinearSVC(multi_class="crammer_singer", C=C, tol=1e-6, class_weight=cw,
                       fit_intercept=intercept, max_iter=200000).fit(X, y, sample_weight=sw)
    p = cs_primal(res.coef, res.intercept, X, y, Ci, B)
    p_ref = cs_primal(ref.coef_, np.broadcast_to(ref.intercept_, (3,)), X, y, Ci, B)
    # the dual is feasible and its value closes the gap
    a = res.alpha
    assert np.all(a <= np.where(np.arange(3) == y[:, None], Ci[:, None], 0.0) + 1e-15)
    np.testing.assert_allclose(a.sum(axis=1), 0.0, atol=1e-12)
    # an empty row (no bias feature) is skipped with a_i = 0; its dual optimum
    # a_i = C_i (e_y - e_m) for some m != y_i lowers the dual by C_i and leaves w alone
    empty = np.flatnonzero(~np.any(np.c_[X, np.full(len(X), B)], axis=1))
    a = a.copy()
    for i in empty:
        a[i, y[i]], a[i, (y[i] + 1) % 3] = Ci[i], -Ci[i]
    d = cs_dual(a, X, y, B)
    assert d <= p + 1e-12 and d <= p_ref + 1e-9
    assert p - d <= 5e-5 * p
    assert abs(p - p_ref) <= 5e-5 * p_ref


# ---------------------------------------------------------------------------
# max_iter ends both at the same place
# ---------------------------------------------------------------------------
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_twins_stop_at_max_iter_with_the_compiled_solvers(binary, multiclass):
    X, y = binary
    y_pm = np.where(y == 1, 1.0, -1.0)
    run = LinearSVC(dual=False, solver="tron", tol=1e-12, max_iter=3).start(X, y)
    twin = Tron(X, y_pm, C=1.0, tol=1e-12, max_iter=3)
    lockstep(run, twin, lambda a, b, n: same_record(a, b, n))
    assert run.stop_reason == "max_iter" and twin.reached_max and not twin.converged
    np.testing.assert_array_equal(run.w, twin.w)

    run = LinearSVC(penalty="l1", dual=False, tol=1e-12, max_iter=4,
                    random_state=RANDOM_STATE).start(X, y)
    twin = CDN(X, y_pm, C=1.0, tol=1e-12, max_iter=4, seed=seed_of(RANDOM_STATE))
    assert lockstep(run, twin, lambda a, b, n: same_record(a, b, n)) == 4
    assert run.stop_reason == "max_iter" and twin.done and not twin.converged
    np.testing.assert_array_equal(run.w, twin.w)

    X, y = multiclass
    run = LinearSVC(multi_class="crammer_singer", tol=1e-12, max_iter=4,
                    random_state=RANDOM_STATE).start(X, y)
    twin = CrammerSinger(X, y, 3, C=1.0, tol=1e-12, max_iter=4, seed=seed_of(RANDOM_STATE))
    assert lockstep(run, twin, lambda a, b, n: same_record(a, b, n)) == 4
    assert run.stop_reason == "max_iter" and twin.done and not twin.converged
    np.testing.assert_array_equal(run.W, twin.W)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_twins_follow_intercept_scaling(binary, multiclass):
    """The bias feature B = intercept_scaling enters every row the same way."""
    X, y = binary
    y_pm = np.where(y == 1, 1.0, -1.0)
    kw = dict(intercept_scaling=3.0, random_state=RANDOM_STATE)
    run = LinearSVC(dual=False, solver="tron", tol=1e-6, **kw).start(X, y)
    twin = Tron(X, y_pm, C=1.0, B=3.0, tol=1e-6)
    lockstep(run, twin, lambda a, b, n: same_record(a, b, n))
    np.testing.assert_array_equal(run.w, twin.w)
    run = LinearSVC(penalty="l1", dual=False, tol=1e-2, max_iter=50, **kw).start(X, y)
    twin = CDN(X, y_pm, C=1.0, B=3.0, tol=1e-2, max_iter=50, seed=seed_of(RANDOM_STATE))
    lockstep(run, twin, lambda a, b, n: same_record(a, b, n))
    np.testing.assert_array_equal(run.w, twin.w)
    X, y = multiclass
    run = LinearSVC(multi_class="crammer_singer", tol=0.1, max_iter=50, **kw).start(X, y)
    twin = CrammerSinger(X, y, 3, C=1.0, B=3.0, tol=0.1, max_iter=50,
                         seed=seed_of(RANDOM_STATE))
    lockstep(run, twin, lambda a, b, n: same_record(a, b, n))
    np.testing.assert_array_equal(run.W, twin.W)


# ---------------------------------------------------------------------------
# registered with the other readable references
# ---------------------------------------------------------------------------
def test_twins_are_listed_with_the_references():
    for name in ("dcd", "tron", "cdn", "crammer_singer"):
        assert name in reference.__all__
        mod = getattr(reference, name)
        assert "same steps" in " ".join(mod.__doc__.lower().split())
