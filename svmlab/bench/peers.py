"""The ``peers`` suite: every svmlab solver against LIBSVM and LIBLINEAR at matched settings.

Kernel (dual) solvers -- SMOClassifier, IRWLSClassifier, ChunkingClassifier,
DecompositionClassifier -- against LIBSVM (sklearn.svm.SVC) with the same C,
kernel, gamma, tol (1e-3) and kernel-cache size.  Each solution's dual
objective W(alpha) is computed by :func:`svmlab.objectives.dual_objective`
from its alpha (SVC's from |dual_coef_|), so speed is compared at equal quality.

Linear solver -- CuttingPlaneClassifier -- against LIBLINEAR
(sklearn.svm.LinearSVC, loss="hinge", dual=True).  Both regularise the bias
(a constant feature of value 1), so the primal objective printed is
``1/2 (||w||^2 + b^2) + C_liblinear sum_i hinge_i``.  SVMperf's C is n times
LIBLINEAR's: ``CuttingPlaneClassifier(C=n * C_liblinear)``.

Cases (Platt's settings): a9a RBF C=1 gamma=0.05 and linear C=0.05;
w8a RBF C=5 gamma=0.05 and linear C=1 (full size only).  Smoke size uses
random subsets of a9a (500 rows kernel, 8000 rows linear; 2000 test rows).
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np

from ._harness import (Result, accuracy, kernel_dual_objective, linear_primal, subsample, suite,
                       svc_alpha, timed)

KERNEL_SOLVERS = ("SMOClassifier", "IRWLSClassifier", "ChunkingClassifier",
                  "DecompositionClassifier")
LINEAR_SOLVERS = ("CuttingPlaneClassifier",)
TOL = 1e-3
CACHE_MB = 200


def _solver_class(name, ctx):
    import svmlab

    try:
        return getattr(svmlab, name)
    except (ImportError, AttributeError) as exc:
        ctx.fail(f"svmlab.{name} is not available: {type(exc).__name__}: {exc}")
        return None


def _make(cls, **params):
    """Instantiate with the params the estimator accepts (the others are reported)."""
    accepted = inspect.signature(cls.__init__).parameters
    use = {k: v for k, v in params.items() if k in accepted}
    return cls(**use), sorted(set(params) - set(use))


def _warm_up(model, X, y, n=80):
    """Untimed fit on a small stratified slice, so numba's compilation (cached on
    disk after the first run) is not counted in the timed fit."""
    from sklearn.base import clone

    pos = np.flatnonzero(y == np.unique(y)[-1])[: n // 2]
    neg = np.flatnonzero(y != np.unique(y)[-1])[: n // 2]
    idx = np.sort(np.concatenate([pos, neg]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clone(model).set_params(progress=False).fit(X[idx], y[idx])


def kernel_case(ctx, case, X, y, Xt, yt, C, gamma, kernel="rbf"):
    from sklearn.svm import SVC

    n = X.shape[0]
    y_pm = np.where(y == np.unique(y)[-1], 1.0, -1.0)
    svc = SVC(C=C, kernel=kernel, gamma=gamma, tol=TOL, cache_size=CACHE_MB)
    svc, secs = timed(svc.fit, X, y)
    alpha = svc_alpha(svc, n)
    ctx.emit(Result(case=case, solver="LIBSVM (sklearn SVC)", time_s=secs,
                    n_iter=int(np.sum(svc.n_iter_)),
                    objective=kernel_dual_objective(X, y_pm, alpha, kernel, gamma),
                    objective_kind="dual", n_sv=int(len(svc.support_)),
                    accuracy=accuracy(svc, Xt, yt), peer=True,
                    extra={"C": C, "gamma": gamma, "tol": TOL, "n": n}))
    for name in KERNEL_SOLVERS:
        cls = _solver_class(name, ctx)
        if cls is None:
            continue
        model, ignored = _make(cls, C=C, kernel=kernel, gamma=gamma, tol=TOL,
                               cache_size=CACHE_MB, random_state=0,
                               progress=ctx.progress)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                _warm_up(model, X, y)
                model, secs = timed(model.fit, X, y)
            except Exception as exc:
                ctx.fail(f"{case}: {name}.fit raised {type(exc).__name__}: {exc}")
                continue
        alpha = np.asarray(model.alpha_, float)
        ctx.emit(Result(case=case, solver=f"svmlab {name}", time_s=secs,
                        n_iter=int(getattr(model, "n_iter_", -1)),
                        objective=kernel_dual_objective(X, y_pm, alpha, kernel, gamma),
                        objective_kind="dual", n_sv=int(np.count_nonzero(alpha > 0)),
                        accuracy=accuracy(model, Xt, yt),
                        extra={"converged": bool(getattr(model, "converged_", True)),
                               "ignored_params": ignored,
                               "warnings": [str(w.message)[:200] for w in caught]}))


def linear_case(ctx, case, X, y, Xt, yt, C):
    from sklearn.svm import LinearSVC

    n = X.shape[0]
    y_pm = np.where(y == np.unique(y)[-1], 1.0, -1.0)
    lin = LinearSVC(C=C, loss="hinge", dual=True, tol=1e-4, max_iter=100_000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lin, secs = timed(lin.fit, X, y)
    w, b = lin.coef_.ravel(), float(lin.intercept_[0])
    ctx.emit(Result(case=case, solver="LIBLINEAR (sklearn LinearSVC hinge dual)", time_s=secs,
                    n_iter=int(np.max(lin.n_iter_)),
                    objective=linear_primal(X, y_pm, w, b, C, regularize_bias=True),
                    objective_kind="primal", accuracy=accuracy(lin, Xt, yt), peer=True,
                    extra={"C_liblinear": C, "tol": 1e-4, "n": n}))
    for name in LINEAR_SOLVERS:
        cls = _solver_class(name, ctx)
        if cls is None:
            continue
        model, ignored = _make(cls, C=C * n, epsilon=1e-3, progress=ctx.progress)
        try:
            _warm_up(model, X, y)
            model, secs = timed(model.fit, X, y)
        except Exception as exc:
            ctx.fail(f"{case}: {name}.fit raised {type(exc).__name__}: {exc}")
            continue
        w, b = model.coef_.ravel(), float(model.intercept_[0])
        ctx.emit(Result(case=case, solver=f"svmlab {name} (C = n*C_lib)", time_s=secs,
                        n_iter=int(getattr(model, "n_iter_", -1)),
                        objective=linear_primal(X, y_pm, w, b, C, regularize_bias=True),
                        objective_kind="primal", accuracy=accuracy(model, Xt, yt),
                        extra={"C_svmperf": C * n, "epsilon": 1e-3, "ignored_params": ignored}))


@suite("peers", "every svmlab solver vs LIBSVM (SVC) and LIBLINEAR (LinearSVC) at matched settings")
def peers(ctx):
    from .. import datasets

    X, y = datasets.load("a9a", "train")
    Xt, yt = datasets.load("a9a", "test")
    if ctx.size == "smoke":
        Xs, ys = subsample(X, y, 500, seed=0)
        Xts, yts = subsample(Xt, yt, 2000, seed=1)
        kernel_case(ctx, "a9a[500] rbf C=1 gamma=0.05", Xs, ys, Xts, yts, 1.0, 0.05)
        Xl, yl = subsample(X, y, 8000, seed=0)
        linear_case(ctx, "a9a[8000] linear C=0.05", Xl, yl, Xts, yts, 0.05)
        return
    cases = [("a9a", 1.0, 0.05, 0.05), ("w8a", 5.0, 0.05, 1.0)]
    for name, C_rbf, gamma, C_lin in ctx.tqdm(cases, desc="peers datasets"):
        X, y = datasets.load(name, "train")
        Xt, yt = datasets.load(name, "test")
        kernel_case(ctx, f"{name} rbf C={C_rbf:g} gamma={gamma:g}", X, y, Xt, yt, C_rbf, gamma)
        linear_case(ctx, f"{name} linear C={C_lin:g}", X, y, Xt, yt, C_lin)
