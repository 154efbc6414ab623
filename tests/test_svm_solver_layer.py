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
    """``cls`` whose instances raise on any attribute access while armed."""

    class Watched(cls):
        def __getattribute__(self, name):
            if _Armed.on and not (name.startswith("__") and name.endswith("__")):
                raise AssertionError(f"a run read the estimator's attribute {name!r}")
            return super().__getattribute__(name)

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
    (svmlab.NuSVC, dict(gamma=GAMMA)),
    (svmlab.SVR, dict(gamma=GAMMA)),
    (svmlab.OneClassSVM, dict(gamma=GAMMA)),
]


WATCH = [(c, p, k) for c, p in CASES for k in (2, 3)
         if k == 2 or c not in (svmlab.SVR, svmlab.OneClassSVM)]


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
    f = "predict" if cls is svmlab.SVR else "decision_function"
    np.testing.assert_allclose(getattr(est, f)(X), getattr(plain, f)(X), rtol=1e-12, atol=1e-12)
