"""warm_start=True and regularization_path: a warm fit reaches the same
optimum as a cold one (objectives and KKT conditions computed here from the
fitted coefficients with scikit-learn's kernels), and along a path of C (or
nu) values it takes fewer steps in all; the projected start is feasible."""

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression

import reference as R
from svmlab.reference import dual
from svmlab.svm import SVC, SVR, NuSVC, NuSVR, OneClassSVM, regularization_path
from svmlab.svm._base import project_start

GAMMA = 0.1
TOL = 1e-5


def _data(regression=False, n=160):
    if regression:
        X, z = make_regression(n, 6, noise=10.0, random_state=0)
        return X / X.std(0), (z - z.mean()) / z.std()
    X, y = make_classification(n, 6, flip_y=0.1, random_state=0)
    return X / X.std(0), y


def _coef(est, n):
    c = np.zeros(n)
    c[est.support_] = est.dual_coef_[0]
    return c


def _objective(est, K, X, y):
    """The formulation's own objective (minimised) from the fitted
    coefficients, and the largest KKT violation of the C-SVC case."""
    c = _coef(est, len(X))
    if isinstance(est, SVC):  # c = a y (public sign: +1 for classes_[1])
        return 0.5 * c @ K @ c - np.abs(c).sum()
    if isinstance(est, SVR):
        return 0.5 * c @ K @ c + est.epsilon * np.abs(c).sum() - y @ c
    if isinstance(est, NuSVR):
        return 0.5 * c @ K @ c - y @ c
    if isinstance(est, OneClassSVM):
        return 0.5 * c @ K @ c
    y_pm = np.where(y == est.classes_[1], 1.0, -1.0)  # NuSVC: the scaled problem
    v = np.abs(c) * est.nu * len(y) / np.abs(c).sum()
    return 0.5 * (v * y_pm) @ K @ (v * y_pm)


PATHS = [(SVC(gamma=GAMMA, tol=TOL), "C", np.logspace(-1, 1.5, 6)),
         (SVR(gamma=GAMMA, tol=TOL), "C", np.logspace(-1, 1.5, 6)),
         (NuSVR(gamma=GAMMA, tol=TOL), "C", np.logspace(-1, 1, 5)),
         (OneClassSVM(gamma=GAMMA, tol=TOL), "nu", np.linspace(0.1, 0.6, 6)),
         (NuSVC(gamma=GAMMA, tol=TOL), "nu", np.linspace(0.1, 0.6, 6))]


@pytest.mark.parametrize("est,param,values", PATHS, ids=[type(p[0]).__name__ for p in PATHS])
def test_warm_path_reaches_the_cold_optimum(est, param, values):
    X, y = _data(regression=isinstance(est, (SVR, NuSVR)))
    K = R.gram(X, "rbf", gamma=GAMMA)
    warm = regularization_path(est, X, y, values)
    for v, w in zip(values, warm):
        cold = type(est)(**{**est.get_params(), param: v}).fit(X, y)
        assert w.fit_status_ == cold.fit_status_ == 0
        fw, fc = _objective(w, K, X, y), _objective(cold, K, X, y)
        assert abs(fw - fc) <= 1e-5 * max(1.0, abs(fc)), (v, fw, fc)
        if isinstance(est, SVC):
            y_pm = np.where(y == w.classes_[1], 1.0, -1.0)
            viol = R.kkt_violation(K, y_pm, _coef(w, len(y)) * y_pm, w.intercept_[0], v,
                                   bound_tol=1e-9 * v)
            assert viol <= 10 * TOL


@pytest.mark.parametrize("est,param,values", [
    (SVC(gamma=GAMMA, solver="full"), "C", np.logspace(-1, 1.5, 20)),
    (OneClassSVM(gamma=GAMMA), "nu", np.linspace(0.1, 0.6, 8))], ids=["SVC", "OneClassSVM"])
def test_warm_path_takes_fewer_steps(est, param, values):
    """The same solver cold and warm (a warm start runs the generalised
    solver; ``"full"`` makes the cold fits use it too).  (A path of 20 C
    values over 2.5 decades: on coarse paths, a factor 3
    between neighbours, WSS 2 from the seeded start takes about as many
    steps as from zero; docs/decisions/2503-svm-family-warm-start.md.)"""
    X, y = _data()
    warm = regularization_path(est, X, y, values)
    cold = [type(est)(**{**est.get_params(), param: v}).fit(X, y) for v in values]
    steps_warm = sum(int(np.sum(w.n_iter_)) for w in warm)
    steps_cold = sum(int(np.sum(c.n_iter_)) for c in cold)
    assert steps_warm < 0.9 * steps_cold, (steps_warm, steps_cold)
    # the first fit of the path is a cold one
    assert int(np.sum(warm[0].n_iter_)) == int(np.sum(cold[0].n_iter_))


def test_warm_start_needs_the_same_rows():
    X, y = _data()
    est = SVC(warm_start=True).fit(X, y)
    with pytest.raises(ValueError, match="same training rows"):
        est.fit(X[:100], y[:100])
    est.set_params(warm_start=False).fit(X[:100], y[:100])  # a cold fit is fine


@pytest.mark.parametrize("kind", ["c_svc", "epsilon_svr", "one_class", "nu_svc", "nu_svr"])
def test_projected_start_is_feasible(kind):
    rng = np.random.RandomState(0)
    X, z = _data(regression=True, n=50)
    y = np.where(z > 0, 1.0, -1.0)
    K = R.gram(X, "rbf", gamma=GAMMA)
    w = rng.uniform(0.5, 2.0, 50)
    build = {"c_svc": lambda: dual.c_svc(K, y, 2.0, w),
             "epsilon_svr": lambda: dual.epsilon_svr(K, z, 2.0, 0.1, w),
             "one_class": lambda: dual.one_class(K, 0.3, w),
             "nu_svc": lambda: dual.nu_svc(K, y, 0.3, w),
             "nu_svr": lambda: dual.nu_svr(K, z, 2.0, 0.3, w)}
    prob = build[kind]()
    for trial in range(5):
        a = rng.uniform(0, 3.0, len(prob.y)) * (rng.rand(len(prob.y)) < 0.5)
        a0 = project_start(prob, a, U_old=prob.U * rng.choice([0.5, 1.0, 3.0]))
        assert np.all(a0 >= 0) and np.all(a0 <= prob.U)
        scale = prob.U.sum()
        assert abs(prob.y @ a0 - prob.y @ prob.a0) <= 1e-9 * scale
        if prob.nu or kind == "one_class":
            for c in (1.0, -1.0):
                s = prob.y == c
                assert abs(a0[s].sum() - prob.a0[s].sum()) <= 1e-9 * scale
        res = dual.solve(prob._replace(a0=a0), tol=1e-6, record=False)
        cold = dual.solve(prob, tol=1e-6, record=False)
        assert res.converged and abs(res.objective - cold.objective) <= 1e-5 * abs(cold.objective)
