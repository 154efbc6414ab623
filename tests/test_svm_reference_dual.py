"""svmlab.reference.dual, LIBSVM's generalised Solver / Solver_NU, readable:

* on C-SVC problems it takes THE SAME STEPS as svmlab.reference.wss2 and as
  the compiled ``SMOClassifier(selection="wss2", shrinking=False)`` with
  every row cached: the same (i, j) sequence, alpha within 1e-10 after every
  step, the same final intercept;
* on every formulation (C-SVC, epsilon-SVR, one-class, nu-SVC, nu-SVR,
  weighted or not) it reaches LIBSVM's optimum: the objective of each
  solution is computed here from its coefficients and compared with the
  objective of scikit-learn's (LIBSVM's) solution on the same precomputed
  kernel; the KKT conditions are checked here.
"""

import warnings

import numpy as np
import pytest
from sklearn import svm as sk
from sklearn.datasets import make_blobs, make_moons, make_regression

import reference as R
from svmlab import SMOClassifier
from svmlab.kernels import Kernel
from svmlab.reference import dual
from svmlab.reference import wss2 as ref_wss2


def _moons(n=80, seed=1):
    X, y = make_moons(n, noise=0.25, random_state=seed)
    return X, np.where(y == 1, 1.0, -1.0)


def _replay(records, l, a0=None, fields=("i1", "i2", "a1_new", "a2_new")):
    a = np.zeros(l) if a0 is None else np.array(a0, float)
    out = []
    fi, fj, fa, fb = fields
    for r in records:
        a[getattr(r, fi)], a[getattr(r, fj)] = getattr(r, fa), getattr(r, fb)
        out.append(a.copy())
    return out


CSVC = [
    ("moons", "rbf", dict(gamma=1.0), 1.0),
    ("moons", "rbf", dict(gamma=2.0), 100.0),
    ("blobs", "rbf", dict(gamma=0.1), 0.05),
    ("moons", "poly", dict(gamma=1.0, coef0=1.0, degree=3), 10.0),
    ("blobs", "linear", {}, 0.5),
]


def _data(name):
    if name == "moons":
        return _moons()
    X, y = make_blobs(70, centers=2, cluster_std=3.0, random_state=3)
    return X, np.where(y == 1, 1.0, -1.0)


def _solver_matrix(X, kernel, kw):
    """K and its diagonal as the compiled solver sees them (svmlab's rows)."""
    k = Kernel(X, kernel, kw.get("gamma", 1.0), kw.get("degree", 3), kw.get("coef0", 0.0))
    return np.vstack([k.row(i) for i in range(X.shape[0])]), k.diag()


def _same_pairs(mine, theirs, l, their_fields):
    assert len(mine) == len(theirs) > 10
    fi, fj = their_fields[:2]
    assert [(r.i1, r.i2) for r in mine] == [(getattr(r, fi), getattr(r, fj)) for r in theirs]
    for a, b in zip(_replay(mine, l), _replay(theirs, l, fields=their_fields)):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-10)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("config", CSVC, ids=[f"{c[0]}-{c[1]}-C{c[3]}" for c in CSVC])
def test_c_svc_same_steps_as_reference_wss2(config, weighted):
    name, kernel, kw, C = config
    X, y = _data(name)
    K, kdiag = _solver_matrix(X, kernel, kw)
    w = np.random.RandomState(0).choice([0.25, 1.0, 3.0], len(y)) if weighted else None
    prob = dual.c_svc(K, y, C, weight=w)
    mine = dual.solve(prob, tol=1e-3, kdiag=kdiag)
    theirs = ref_wss2.wss2(K, y, prob.U if weighted else C, tol=1e-3, kdiag=kdiag)
    assert mine.converged and theirs.converged
    _same_pairs(mine.records, theirs.records, len(y), ("i1", "i2", "a1_new", "a2_new"))
    np.testing.assert_allclose(mine.alpha, theirs.alpha, rtol=0, atol=1e-10)
    assert abs(-mine.rho - theirs.b) <= 1e-10  # LIBSVM's intercept on both sides


@pytest.mark.parametrize("config", CSVC[:3] + CSVC[4:], ids=lambda c: f"{c[0]}-{c[1]}")
def test_c_svc_same_steps_as_compiled_wss2(config):
    name, kernel, kw, C = config
    X, y = _data(name)
    K, kdiag = _solver_matrix(X, kernel, kw)
    est = SMOClassifier(C=C, kernel=kernel, selection="wss2", shrinking=False,
                        cache_dtype="float64", cache_size=40, tol=1e-3, progress=False, **kw)
    fast = []
    est.fit(X, y, callback=fast.append)
    mine = dual.solve(dual.c_svc(K, y, C), tol=1e-3, kdiag=kdiag)
    _same_pairs(mine.records, fast, len(y), ("i1", "i2", "a1_new", "a2_new"))
    np.testing.assert_allclose(mine.alpha, est.alpha_, rtol=0, atol=1e-10)
    assert abs(-mine.rho - est.intercept_[0]) <= 1e-10


# ------------------------------------------------------------------ optimum
def _regression(n=60, seed=0):
    X, z = make_regression(n, 3, noise=10.0, random_state=seed)
    return X / X.std(0), (z - z.mean()) / z.std()


def _kkt_gap(prob, res):
    """max over the two (or four) KKT sides, computed here from alpha:
    ``max_{I_up} -yG - min_{I_low} -yG`` with ``G = Q alpha + p``."""
    y, a, U = prob.y, res.alpha, prob.U
    idx = np.asarray(prob.idx)
    G = (y[:, None] * y[None, :] * prob.K[np.ix_(idx, idx)]) @ a + prob.p
    v = -y * G
    up = np.where(y > 0, a < U, a > 0)
    low = np.where(y > 0, a > 0, a < U)
    groups = [np.ones(len(y), bool)] if not prob.nu else [y > 0, y < 0]
    return max(np.max(v, where=up & g, initial=-np.inf) - np.min(v, where=low & g,
                                                                 initial=np.inf)
               for g in groups)


def _feasible(prob, res):
    a = res.alpha
    assert np.all(a >= 0) and np.all(a <= prob.U)
    assert abs(np.dot(prob.y, a) - np.dot(prob.y, prob.a0)) <= 1e-9 * max(1, prob.U.max())
    if prob.nu:
        assert abs(a.sum() - prob.a0.sum()) <= 1e-9 * max(1, a.sum())


def _fit_sklearn(est, K, target=None, weight=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        if target is None:
            est.fit(K, sample_weight=weight)
        else:
            est.fit(K, target, sample_weight=weight)
    coef = np.zeros(K.shape[0])
    coef[est.support_] = est.dual_coef_[0]
    return coef, float(est.intercept_[0])


TOL = 1e-7  # tight tolerances on both sides: the objectives then agree to 1e-6


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("kernel", ["rbf", "linear"])
def test_epsilon_svr_reaches_libsvm_optimum(kernel, weighted):
    X, z = _regression()
    K = R.gram(X, kernel, gamma=0.5)
    w = np.random.RandomState(1).uniform(0.5, 2.0, len(z)) if weighted else None
    C, eps = (3.0 if kernel == "rbf" else 0.5), 0.2  # (linear, large C: 1e5 steps)
    prob = dual.epsilon_svr(K, z, C, eps, weight=w)
    res = dual.solve(prob, tol=TOL)
    assert res.converged and _kkt_gap(prob, res) <= TOL
    _feasible(prob, res)
    coef, b = dual.model(prob, res)
    lib, lib_b = _fit_sklearn(sk.SVR(kernel="precomputed", C=C, epsilon=eps, tol=TOL), K, z, w)

    def f(beta):  # the SVR dual in beta = a - a*: 1/2 b'Kb + eps sum |b| w-free - z'b
        return 0.5 * beta @ K @ beta + eps * np.abs(beta).sum() - z @ beta

    assert abs(f(coef) - f(lib)) <= 1e-6 * abs(f(lib))
    assert abs(res.objective - dual.objective(prob, res.alpha)) <= 1e-9 * abs(res.objective)
    np.testing.assert_allclose(K @ coef + b, K @ lib + lib_b, atol=2e-3)
    assert np.all(np.abs(coef) <= C * (w if weighted else 1.0) + 1e-12)


@pytest.mark.parametrize("weighted", [False, True])
def test_nu_svr_reaches_libsvm_optimum(weighted):
    X, z = _regression(seed=2)
    K = R.gram(X, "rbf", gamma=0.3)
    w = np.random.RandomState(2).uniform(0.5, 2.0, len(z)) if weighted else None
    C, nu = 2.0, 0.4
    prob = dual.nu_svr(K, z, C, nu, weight=w)
    res = dual.solve(prob, tol=TOL)
    assert res.converged and prob.nu and _kkt_gap(prob, res) <= TOL
    _feasible(prob, res)
    coef, b = dual.model(prob, res)
    lib, lib_b = _fit_sklearn(sk.NuSVR(kernel="precomputed", C=C, nu=nu, tol=TOL), K, z, w)

    def f(beta):  # only beta = a - a* enters (a + a* is fixed by the nu constraint)
        return 0.5 * beta @ K @ beta - z @ beta

    assert abs(f(coef) - f(lib)) <= 1e-6 * abs(f(lib))
    np.testing.assert_allclose(K @ coef + b, K @ lib + lib_b, atol=2e-3)
    # epsilon = -r: the tube LIBSVM reports; the free points lie on its edges
    free = (res.alpha > 0) & (res.alpha < prob.U)
    resid = np.r_[z, z] - np.r_[K @ coef + b, K @ coef + b]
    np.testing.assert_allclose(np.abs(resid[free]), -res.r, atol=1e-5)


@pytest.mark.parametrize("weighted", [False, True])
def test_one_class_reaches_libsvm_optimum(weighted):
    X, _ = make_blobs(70, centers=2, random_state=5)
    K = R.gram(X, "rbf", gamma=0.2)
    w = np.random.RandomState(3).uniform(0.5, 2.0, len(X)) if weighted else None
    nu = 0.3
    prob = dual.one_class(K, nu, weight=w)
    assert abs(prob.a0.sum() - nu * prob.U.sum()) <= 1e-12
    res = dual.solve(prob, tol=TOL)
    assert res.converged and _kkt_gap(prob, res) <= TOL
    _feasible(prob, res)
    coef, b = dual.model(prob, res)
    lib, lib_b = _fit_sklearn(sk.OneClassSVM(kernel="precomputed", nu=nu, tol=TOL), K, None, w)
    f = lambda a: 0.5 * a @ K @ a  # noqa: E731
    assert abs(f(coef) - f(lib)) <= 1e-6 * f(lib)
    assert abs(b - lib_b) <= 1e-5 * max(1.0, abs(lib_b))
    # nu bounds the fraction of outliers from above and of support vectors from below
    dec = K @ coef + b
    if not weighted:
        assert np.mean(dec < -1e-6) <= nu + 1e-9 and np.mean(coef > 0) >= nu - 1e-9


@pytest.mark.parametrize("weighted", [False, True])
def test_nu_svc_reaches_libsvm_optimum(weighted):
    X, y = _moons(90, seed=4)
    K = R.gram(X, "rbf", gamma=1.0)
    w = np.random.RandomState(4).uniform(0.5, 2.0, len(y)) if weighted else None
    nu = 0.35
    prob = dual.nu_svc(K, y, nu, weight=w)
    res = dual.solve(prob, tol=TOL)
    assert res.converged and _kkt_gap(prob, res) <= TOL
    _feasible(prob, res)
    coef, b = dual.model(prob, res)
    lib, lib_b = _fit_sklearn(sk.NuSVC(kernel="precomputed", nu=nu, tol=TOL), K, y, w)
    # svmlab's sign: +1 is classes_[1] for both (sklearn flips its binary coef)
    # the scaled problem's variables from the coefficients: a = |coef| r,
    # with r fixed by e'a = nu sum(w)
    total = nu * prob.U.sum()
    f = lambda c: 0.5 * (np.abs(c) * total / np.abs(c).sum()) @ (  # noqa: E731
        (y[:, None] * y[None, :] * K) @ (np.abs(c) * total / np.abs(c).sum()))
    assert abs(f(coef) - f(lib)) <= 1e-6 * f(lib)
    np.testing.assert_allclose(coef, lib, atol=1e-4 * np.abs(lib).max())
    assert abs(b - lib_b) <= 1e-4 * max(1.0, abs(lib_b))


@pytest.mark.parametrize("kernel", ["rbf", "poly"])
def test_c_svc_reaches_libsvm_optimum(kernel):
    X, y = _moons(100, seed=6)
    K = R.gram(X, kernel, gamma=1.0, coef0=1.0)
    C = 5.0
    prob = dual.c_svc(K, y, C)
    res = dual.solve(prob, tol=TOL)
    coef, b = dual.model(prob, res)
    lib, lib_b = _fit_sklearn(sk.SVC(kernel="precomputed", C=C, tol=TOL), K, y)
    assert abs(R.dual_objective(K, y, res.alpha) - R.dual_objective(K, y, lib * y)) <= \
        1e-6 * abs(R.dual_objective(K, y, lib * y))
    assert R.kkt_violation(K, y, res.alpha, b, C, bound_tol=1e-12) <= 1e-6


# ----------------------------------------------------------------- the rules
def test_nu_steps_stay_within_a_sign_class():
    X, z = _regression(40, seed=3)
    prob = dual.nu_svr(R.gram(X, "rbf", gamma=0.5), z, 1.0, 0.5)
    res = dual.solve(prob, tol=1e-4)
    assert len(res.records) > 10
    assert all(r.y1 == r.y2 == r.sign_class for r in res.records)
    # e'a and y'a stay at the start's values after every step
    for a in _replay(res.records, len(prob.y), prob.a0)[::7]:
        assert abs(a.sum() - prob.a0.sum()) <= 1e-10
        assert abs(prob.y @ a) <= 1e-10


def test_records_describe_the_step():
    """Every field of a record, recomputed here from the problem and the
    replayed variables."""
    X, z = _regression(40, seed=5)
    prob = dual.epsilon_svr(R.gram(X, "rbf", gamma=0.5), z, 1.0, 0.1)
    res = dual.solve(prob, tol=1e-3)
    y, idx, K = prob.y, prob.idx, prob.K
    a = np.zeros(len(y))
    seen_clipped = set()
    for r in res.records:
        i, j = r.i1, r.i2
        G = (y[:, None] * y[None, :] * K[np.ix_(idx, idx)]) @ a + prob.p
        v = -y * G
        assert (r.a1_old, r.a2_old) == (a[i], a[j])
        assert (r.y1, r.y2, r.C1, r.C2, r.p1, r.p2) == (y[i], y[j], prob.U[i], prob.U[j],
                                                        prob.p[i], prob.p[j])
        assert r.m == pytest.approx(v[i], abs=1e-9) and r.gap == pytest.approx(r.m - r.M)
        assert r.gap > 1e-3
        assert r.E1 - r.E2 == pytest.approx(y[i] * G[i] - y[j] * G[j], abs=1e-9)
        assert r.eta == pytest.approx(K[idx[i], idx[i]] + K[idx[j], idx[j]]
                                      - 2 * K[idx[i], idx[j]])
        assert r.L <= r.a2_new <= r.H and r.L < r.H
        assert y[i] * r.a1_new + y[j] * r.a2_new == pytest.approx(
            y[i] * r.a1_old + y[j] * r.a2_old, abs=1e-12)
        assert r.clipped == (not r.L <= r.a2_unclipped <= r.H)
        seen_clipped.add(r.clipped)
        before = dual.objective(prob, a)
        a[i], a[j] = r.a1_new, r.a2_new
        assert r.delta_objective > 0
        assert before - dual.objective(prob, a) == pytest.approx(r.delta_objective, abs=1e-9)
    assert seen_clipped == {True, False}
    assert res.records[-1].iteration == res.n_iter == len(res.records)


def test_stall_and_max_iter_are_not_convergence():
    X, y = _moons(40)
    K = R.gram(X, "rbf", gamma=1.0)
    res = dual.solve(dual.c_svc(K, y, 1.0), tol=1e-3, max_iter=3)
    assert res.n_iter == 3 and not res.converged and res.stop_reason == "max_iter"
    # all labels on one side of a nu problem with one class unable to move
    prob = dual.DualProblem(K[:2, :2], np.arange(2), np.array([1.0, 1.0]), np.array([0.0, -5.0]),
                            np.array([1.0, 1.0]), np.array([1.0, 0.0]), False, "custom")
    res = dual.solve(prob, tol=1e-3)
    assert res.converged or res.stop_reason == "stalled"
    with pytest.raises(ValueError, match="box"):
        dual.solve(prob._replace(a0=np.array([2.0, 0.0])))
