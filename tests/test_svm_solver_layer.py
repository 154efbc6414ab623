"""The solver layer under both estimator families (issue 31 item 1, in part).

Runs take an explicit, frozen :class:`svmlab._stepping.FitOptions` and read
or write no estimator attribute:

* fits through the solver layer with no estimator at all (``None``),
  checked against scikit-learn's LIBSVM dual objective computed here;
* estimators whose every attribute access raises while their run runs
  (after ``start``, before ``finish``) still fit, to the same model.
"""

import dataclasses
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_iris, make_classification
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC as SkSVC

import svmlab
from svmlab._multiclass import MulticlassRun
from svmlab._stepping import FitOptions
from svmlab.decomposition import DecompositionClassifier, IRWLSClassifier
from svmlab.decomposition.estimators import BlockedDecompositionRun, DecompositionRun
from svmlab.decomposition.irwls import IRWLSRun
from svmlab.kernels import Kernel
from svmlab.smo import SMOClassifier
from svmlab.smo._estimator import SMORun

GAMMA = 0.2


@pytest.fixture(scope="module")
def binary():
    X, y = make_classification(120, 5, random_state=3, flip_y=0.1)
    X = StandardScaler().fit_transform(X)
    return X, np.where(y == 1, 1.0, -1.0)


def dual_objective(X, y_pm, alpha):
    """LIBSVM's minimised dual ``1/2 a'Qa - sum a`` (float64)."""
    K = rbf_kernel(X, gamma=GAMMA)
    c = alpha * y_pm
    return 0.5 * c @ K @ c - alpha.sum()


def libsvm_objective(X, y_pm, C=1.0):
    ref = SkSVC(C=C, gamma=GAMMA, tol=1e-6).fit(X, y_pm)
    a = np.zeros(len(y_pm))
    a[ref.support_] = np.abs(ref.dual_coef_.ravel())
    return dual_objective(X, y_pm, a)


OPTS = FitOptions(C=1.0, tol=1e-4, max_iter=-1, cache_size=50.0, cache_dtype="float64",
                  kernel="rbf", eps=1e-3, shrinking=True, selection="wss2", random_state=0)


def _runs(X, y):
    k = Kernel(X, "rbf", GAMMA)
    yield "smo-wss2", SMORun(None, X, y, k, C=1.0, tol=1e-4, eps=1e-12, cache_size=50.0,
                             shrinking=True, selection="wss2", seed=1, max_iter=-1,
                             progress=False)
    yield "smo-platt", SMORun(None, X, y, Kernel(X, "rbf", GAMMA), C=1.0, tol=1e-4, eps=1e-12,
                              cache_size=50.0, shrinking=True, selection="platt", seed=1,
                              max_iter=-1, progress=False)
    o = dataclasses.replace(OPTS, selection="mixed", working_set_size=None)
    yield "irwls", IRWLSRun(None, X, y, Kernel(X, "rbf", GAMMA), o)
    yield "decomposition", DecompositionRun(None, X, y, Kernel(X, "rbf", GAMMA),
                                            "decomposition", 10, "qp", True, OPTS)
    yield "blocked", BlockedDecompositionRun(None, X, y, Kernel(X, "rbf", GAMMA), 16, OPTS)


@pytest.mark.parametrize("which", ["smo-wss2", "smo-platt", "irwls", "decomposition",
                                   "blocked"])
def test_fit_through_the_solver_layer_with_no_estimator(binary, which):
    """The runs solve the C-SVC dual with no estimator behind them."""
    X, y = binary
    run = dict(_runs(X, y))[which]
    assert run.estimator is None
    run.run()
    assert run.converged, run.stop_reason
    res = run.result()
    alpha = np.asarray(res["alpha"] if "alpha" in res else np.abs(res["beta"]), dtype=float)
    assert np.all(alpha >= -1e-12) and np.all(alpha <= 1.0 + 1e-12)
    assert abs(alpha @ y) <= 1e-8
    ours = dual_objective(X, y, alpha)
    theirs = libsvm_objective(X, y)
    assert ours == pytest.approx(theirs, rel=1e-4)


def test_multiclass_through_the_solver_layer_with_no_estimator():
    """One-vs-one pairs made by a plain function from frozen options."""
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    perm = np.argsort(y, kind="stable")
    coff = np.concatenate([[0], np.cumsum(np.bincount(y))])
    kernel = Kernel(X[perm], "rbf", GAMMA)

    def make(Xp, yp, kp, opts):
        assert opts.Cv is not None and len(opts.Cv) == len(yp)
        return SMORun(None, Xp, yp, kp, C=opts.C, tol=opts.tol, eps=1e-12,
                      cache_size=opts.cache_size, shrinking=True, selection="wss2", seed=1,
                      max_iter=opts.max_iter, progress=False, Cv=opts.Cv,
                      cache_dtype=opts.cache_dtype)

    run = MulticlassRun(None, kernel, perm, coff, np.unique(y), np.ones(len(y)), 1,
                        opts=OPTS, make_run=make)
    run.run()
    assert run.converged
    ref = SkSVC(C=1.0, gamma=GAMMA, tol=1e-6).fit(X, y)
    res = run.result()
    start = np.concatenate([[0], np.cumsum(ref.n_support_)])
    for p, (a, b) in enumerate([(0, 1), (0, 2), (1, 2)]):
        rows = perm[run._pos[p]]
        y_pm = np.where(y[rows] == a, 1.0, -1.0)
        ours = dual_objective(X[rows], y_pm, res["alphas"][p])
        ia = np.arange(start[a], start[a + 1])
        ib = np.arange(start[b], start[b + 1])
        c = np.concatenate([ref.dual_coef_[b - 1, ia], ref.dual_coef_[a, ib]])
        sv = ref.support_[np.concatenate([ia, ib])]
        K = rbf_kernel(X[sv], gamma=GAMMA)
        theirs = 0.5 * c @ K @ c - np.abs(c).sum()
        assert ours == pytest.approx(theirs, rel=1e-4)


class _Armed:
    on = False


def _watched(cls):
    """``cls`` whose instances raise on any attribute access (read, write or
    delete) while armed."""

    class Watched(cls):
        def __getattribute__(self, name):
            if _Armed.on and not (name.startswith("__") and name.endswith("__")):
                raise AssertionError(f"a run read the estimator's attribute {name!r}")
            return super().__getattribute__(name)

        def __setattr__(self, name, value):
            if _Armed.on:
                raise AssertionError(f"a run wrote the estimator's attribute {name!r}")
            super().__setattr__(name, value)

        def __delattr__(self, name):
            if _Armed.on:
                raise AssertionError(f"a run deleted the estimator's attribute {name!r}")
            super().__delattr__(name)

    Watched.__name__ = cls.__name__
    Watched.__qualname__ = cls.__qualname__
    return Watched


CASES = [
    (SMOClassifier, dict(kernel="rbf", gamma=GAMMA, selection="wss2", progress=False,
                         random_state=0)),
    (SMOClassifier, dict(kernel="rbf", gamma=GAMMA, selection="platt", progress=False,
                         random_state=0)),
    (IRWLSClassifier, dict(kernel="rbf", gamma=GAMMA, progress=False)),
    (DecompositionClassifier, dict(kernel="rbf", gamma=GAMMA, progress=False)),
    (DecompositionClassifier, dict(kernel="rbf", gamma=GAMMA, engine="smo", progress=False)),
    (svmlab.SVC, dict(gamma=GAMMA)),
    (svmlab.SVC, dict(gamma=GAMMA, solver="full")),
    (svmlab.SVC, dict(gamma=GAMMA, solver="irwls")),
    (svmlab.SVC, dict(gamma=GAMMA, solver="blocked")),
    (svmlab.SVC, dict(kernel="precomputed")),  # the generalised dual's backend
    (svmlab.NuSVC, dict(gamma=GAMMA)),
    (svmlab.NuSVC, dict(gamma=GAMMA, solver="full")),
    (svmlab.SVR, dict(gamma=GAMMA)),
    (svmlab.NuSVR, dict(gamma=GAMMA)),
    (svmlab.OneClassSVM, dict(gamma=GAMMA)),
]


WATCH = [(c, p, k) for c, p in CASES for k in (2, 3)
         if k == 2 or c not in (svmlab.SVR, svmlab.NuSVR, svmlab.OneClassSVM)]


@pytest.mark.parametrize("cls,params,n_classes", WATCH,
                         ids=[f"{c.__name__}-{i}-{k}" for i, (c, _, k) in enumerate(WATCH)])
def test_runs_never_touch_the_estimator(cls, params, n_classes):
    """After ``start`` the estimator raises on every attribute access; the
    run still runs to the end (one-vs-one pairs opened on the way
    included), and ``finish`` (which stores the fit) gives the model a
    plain ``fit`` gives."""
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    if n_classes == 2:
        X, y = X[y > 0], y[y > 0]
    y = y.astype(float)
    if params.get("kernel") == "precomputed":
        X = rbf_kernel(X, gamma=GAMMA)
    W = _watched(cls)
    est = W(**params)
    run = est.start(X, y)
    _Armed.on = True
    try:
        run.run()
    finally:
        _Armed.on = False
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run.finish()
    plain = cls(**params).fit(X, y)
    f = "predict" if cls in (svmlab.SVR, svmlab.NuSVR) else "decision_function"
    np.testing.assert_allclose(getattr(est, f)(X), getattr(plain, f)(X), rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------- the family

def _family_problem(impl, X, y, solver="wss2", nu=0.5, epsilon=0.1, C=1.0):
    """The frozen problem of one fit of the family, built here as an
    estimator's ``start`` would (no estimator): all rows kept, unit
    weights."""
    from svmlab.reference import dual as ref_dual
    from svmlab.svm._kernel import TrainKernel
    from svmlab.svm._solve import FitProblem

    n = len(X)
    kern = TrainKernel("rbf", X, GAMMA, 3, 0.0)
    keep = np.arange(n)
    if impl in ("c_svc", "nu_svc"):
        rows = [np.concatenate([np.flatnonzero(y > 0), np.flatnonzero(y < 0)])]
        y_idx = np.where(y > 0, 0, 1)
        signs = [np.where(y[rows[0]] > 0, 1.0, -1.0)]
        U = np.full(n, C if impl == "c_svc" else 1.0)
        return FitProblem(impl, solver, X, X, kern, GAMMA, 3, 0.0, U, keep, rows,
                          [U[rows[0]]], y_idx, 2, [(0, 1)], signs, nu)
    U = np.full(n, C if impl != "one_class" else 1.0)
    if impl == "epsilon_svr":
        prob = ref_dual.epsilon_svr(None, y, 1.0, epsilon, weight=U)
    elif impl == "nu_svr":
        prob = ref_dual.nu_svr(None, y, 1.0, nu, weight=U)
    else:
        prob = ref_dual.one_class(None, nu, weight=U)
    return FitProblem(impl, solver, X, X, kern, GAMMA, 3, 0.0, U, keep, [keep], [prob.U],
                      duals=[prob])


def _solve_without_estimator(problem, backend):
    """Open the problem's runs through the backend with no estimator, run
    them in a :class:`svmlab.svm._run.FamilyRun` that has none either, and
    return the problems' results."""
    from svmlab.svm._run import FamilyRun

    opts = FitOptions(tol=1e-5, max_iter=-1, cache_size=50.0, shrinking=True)
    solving = backend.open(problem, opts, seed=1, estimator=None)
    run = FamilyRun(None, solving.n_parts, len(problem.keep), solving.open_part,
                    problem.pairs, problem.rows, threads=solving.threads)
    assert run.estimator is None
    run.run()
    assert run.converged, run.stop_reason
    return solving.results(run)


@pytest.fixture(scope="module")
def regression():
    rng = np.random.RandomState(4)
    X = StandardScaler().fit_transform(rng.randn(90, 4))
    z = np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.1 * rng.randn(90)
    return X, z


@pytest.mark.parametrize("solver", ["wss2", "full"])
@pytest.mark.parametrize("impl", ["epsilon_svr", "nu_svr", "one_class", "nu_svc"])
def test_family_through_the_solver_layer_with_no_estimator(binary, regression, impl, solver):
    """SVR, NuSVR, OneClassSVM and NuSVC solved by the generalised dual's
    backend from a frozen problem, no estimator anywhere; the objective of
    LIBSVM's dual (computed here from the coefficients) matches
    scikit-learn's own fit of the same problem, and the constraints hold."""
    from sklearn.svm import SVR as SkSVR, NuSVR as SkNuSVR, OneClassSVM as SkOCSVM, \
        NuSVC as SkNuSVC

    from svmlab.svm._solve import DUAL

    nu, eps = 0.4, 0.1
    X, target = regression if impl in ("epsilon_svr", "nu_svr") else binary
    res = _solve_without_estimator(_family_problem(impl, X, target, solver, nu, eps), DUAL)
    assert len(res) == 1 and res[0].status == "converged"
    coef = res[0].coef
    K = rbf_kernel(X, gamma=GAMMA)
    common = dict(gamma=GAMMA, tol=1e-7)
    if impl == "epsilon_svr":
        ref = SkSVR(C=1.0, epsilon=eps, **common).fit(X, target)

        def f(c, z=target):  # sum a + a* = |c|: a_i a*_i = 0 at the optimum
            return 0.5 * c @ K @ c + eps * np.abs(c).sum() - z @ c
        assert abs(coef.sum()) <= 1e-8 and np.all(np.abs(coef) <= 1.0 + 1e-12)
    elif impl == "nu_svr":
        ref = SkNuSVR(C=1.0, nu=nu, **common).fit(X, target)

        def f(c, z=target):
            return 0.5 * c @ K @ c - z @ c
        assert abs(coef.sum()) <= 1e-8
        assert np.abs(coef).sum() <= nu * len(X) + 1e-8
    elif impl == "one_class":
        ref = SkOCSVM(nu=nu, **common).fit(X)

        def f(c):
            return 0.5 * c @ K @ c
        assert coef.sum() == pytest.approx(nu * len(X), rel=1e-12)
        assert np.all((coef >= 0) & (coef <= 1.0 + 1e-12))
    else:
        ref = SkNuSVC(nu=nu, **common).fit(X, target)

        def f(c):  # back to a (sum a = nu l) from LIBSVM's y a / r
            ya = c * (nu * len(X) / np.abs(c).sum())
            return 0.5 * ya @ K @ ya
        y_rows = target[np.concatenate([np.flatnonzero(target > 0),
                                        np.flatnonzero(target < 0)])]
        assert abs(coef @ np.ones_like(coef)) <= 1e-8 * np.abs(coef).sum()
        assert np.all(coef * y_rows >= 0)
        # the solver's own objective, before LIBSVM's rescaling by r, on the
        # kernel values it read: the drop-in's rows, rounded to float32
        # (LIBSVM's Qfloat, docs/decisions/36a01)
        from svmlab.kernels import Kernel

        kq = Kernel(X, "rbf", GAMMA, qfloat=True)
        Kq = np.vstack([kq.row(i) for i in range(len(X))])
        assert np.allclose(Kq, K, rtol=2 ** -23, atol=0)

        def f_read(c):
            ya = c * (nu * len(X) / np.abs(c).sum())
            return 0.5 * ya @ Kq @ ya
        assert res[0].objective == pytest.approx(f_read(coef[np.argsort(
            np.concatenate([np.flatnonzero(target > 0), np.flatnonzero(target < 0)]))]),
            rel=1e-10)
    c_ref = np.zeros(len(X))
    c_ref[ref.support_] = ref.dual_coef_.ravel()
    if impl == "nu_svc":
        rows = np.concatenate([np.flatnonzero(target > 0), np.flatnonzero(target < 0)])
        c = np.zeros(len(X))
        c[rows] = coef
    else:
        c = coef
    assert f(c) == pytest.approx(f(c_ref), rel=1e-5)


def test_probability_folds_train_with_the_fits_backend():
    """The backend is chosen once per fit: the probability folds of a first
    fit with ``warm_start=True`` train on the same backend as the fit (once
    chosen again after the fit, the warm-start memory stored by then sent
    them to the generalised dual), so the model is that of
    ``warm_start=False``, bit for bit."""
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    cold = svmlab.SVC(probability=True, random_state=0).fit(X, y)
    warm = svmlab.SVC(probability=True, random_state=0, warm_start=True).fit(X, y)
    np.testing.assert_array_equal(warm.dual_coef_, cold.dual_coef_)
    np.testing.assert_array_equal(warm.probA_, cold.probA_)
    np.testing.assert_array_equal(warm.probB_, cold.probB_)


# ------------------------------------------------- runs made with no estimator

@pytest.mark.parametrize("k", [2, 3])
def test_start_kernel_run_makes_the_estimators_run_without_it(k):
    """:func:`svmlab._base.start_kernel_run` with no estimator gives the run
    that ``SMOClassifier.start`` gives (the same code path): equal
    multipliers, steps and intercepts, class and sample weights included;
    the run holds no estimator and names itself in its messages."""
    from svmlab._base import start_kernel_run
    from svmlab._validation import check_classification
    from svmlab.smo._estimator import smo_run

    X, y = load_iris(return_X_y=True)
    if k == 2:
        X, y = X[y > 0], y[y > 0]
    sw = np.random.RandomState(0).rand(len(y)) + 0.1
    params = dict(C=2.0, gamma=0.3, tol=1e-3, cache_size=20, selection="wss2",
                  class_weight={int(np.unique(y)[0]): 3.0}, max_iter=7, progress=False)
    est = SMOClassifier(**params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = est.start(X, y, sample_weight=sw)
        ref.run()
    Xc, yi, cls = check_classification(X, y)
    opts = FitOptions.of(SMOClassifier(**params))
    run, state = start_kernel_run(Xc, yi, cls, sw, opts, smo_run, gamma=0.3,
                                  class_weight=params["class_weight"], name="Lab")
    assert run.estimator is None and run.name == "Lab"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run.run()
    a, b = ref.result(), run.result()
    if k == 2:
        np.testing.assert_array_equal(a["alpha"], b["alpha"])
        assert a["intercept"] == b["intercept"]
    else:
        for p in range(3):
            np.testing.assert_array_equal(a["alphas"][p], b["alphas"][p])
            assert run.cur is None or run.cur.estimator is None
        np.testing.assert_array_equal(a["intercepts"], b["intercepts"])
    assert run.n_iter == ref.n_iter and run.stop_reason == ref.stop_reason == "max_iter"
    msg = run.warning_message()
    assert "Lab" in msg and msg.replace("Lab", "SMOClassifier") == ref.warning_message()
    np.testing.assert_array_equal(state["_fit_Cv"], est._fit_Cv)
    np.testing.assert_array_equal(state["class_weight_"], est.class_weight_)
    assert state["cache_dtype_"] == est.cache_dtype_


@pytest.mark.parametrize("k", [2, 3])
def test_svc_rows_backend_builds_its_runs_with_no_estimator(k):
    """SVC's rows backend makes its compiled run (and every pair's) with no
    estimator object, named after the class fitted (its messages say "SVC
    stalled ...", not "SMOClassifier ..."); the model is LIBSVM's to its
    tolerance."""
    X, y = load_iris(return_X_y=True)
    if k == 2:
        X, y = X[y > 0], y[y > 0]
    X = StandardScaler().fit_transform(X)
    m = svmlab.SVC(tol=1e-6)
    run = m.start(X, y)
    assert run.solving.backend.name == "rows"
    run.run()
    inner = run.solving.inner
    assert inner.estimator is None and inner.name == "SVC"
    if k > 2:
        runs = [inner._open_part(p) for p in range(inner.n_parts)]
        assert all(r.estimator is None and r.name == "SVC" for r in runs)
    run.finish()
    ref = SkSVC(tol=1e-6).fit(X, y)
    np.testing.assert_allclose(m.decision_function(X), ref.decision_function(X), atol=1e-4)


@pytest.mark.parametrize("solver", ["wss2", "platt", "irwls", "blocked"])
def test_compiled_options_are_the_estimators(solver):
    """The options SVC's rows backend builds its runs from, with no estimator
    object, are those of the compiled estimator it made before (every field
    but the bounds and the cache type, which the run's start sets)."""
    from svmlab.svm._solve import compiled_estimator, compiled_options

    fam = FitOptions(C=3.0, tol=1e-2, max_iter=55, cache_size=17.0, kernel="poly", degree=2,
                     coef0=0.5, shrinking=False)
    ours = compiled_options(solver, fam, 1234, 3.0)
    theirs = FitOptions.of(compiled_estimator(solver, fam, 0.1, 1234, C=3.0))
    for f in dataclasses.fields(FitOptions):
        if f.name not in ("Cv", "cache_dtype"):
            assert getattr(ours, f.name) == getattr(theirs, f.name), f.name
            assert type(getattr(ours, f.name)) is type(getattr(theirs, f.name)), f.name


@pytest.mark.parametrize("solver", ["irwls", "blocked", "platt"])
def test_other_rows_solvers_build_runs_with_no_estimator(solver):
    """IRWLS, the blocked decomposition and Platt's SMO under SVC: runs with
    no estimator, named after the solver's class, the model LIBSVM's."""
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    m = svmlab.SVC(solver=solver, tol=1e-5)
    run = m.start(X, y)
    run.run()
    inner = run.solving.inner
    assert inner.estimator is None
    pair = inner._open_part(0)
    assert pair.estimator is None and pair.name == inner.name != "NoneType"
    run.finish()
    ref = SkSVC(tol=1e-5).fit(X, y)
    np.testing.assert_allclose(m.decision_function(X), ref.decision_function(X), atol=2e-3)
