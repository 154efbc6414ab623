"""The ``platt`` suite: the rows of Platt (1998, MSR-TR-98-14, Table 2) we can run.

Cases (Platt's settings, section 3):

* AdultGauss  a9a, rbf, C=1, sigma^2=10 (gamma=0.05)
* AdultLin    a9a, linear kernel, C=0.05
* WebGauss    w8a, rbf, C=5, gamma=0.05
* WebLin      w8a, linear kernel, C=1
* MNIST class 8 vs rest, poly degree 5 (Platt: ``(x.z + 1)^5 / 512``... here
  ``(gamma x.z + 1)^5`` with gamma = 1/784 on [0,1] pixels), C=100, on the
  10000 MNIST test images (the training images are not in the shared data)
* scaling: AdultGauss on nested subsets of a9a, fitted exponent of time vs n
  (Platt reports SMO between linear and quadratic in n)

Every case runs SMO with ``selection="platt"`` and ``"wss2"`` (plus Platt
without shrinking at full size) and LIBSVM (sklearn SVC) at the same tol
(1e-3) and kernel-cache size (40 MB, Platt's), in the same run.  Dual
objectives are computed from each solution's alpha with
:func:`svmlab.objectives.dual_objective` (through the harness helper), test
accuracy on the test split.  Smoke size uses small random subsets.
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from ._harness import (Result, accuracy, kernel_dual_objective, subsample, suite, svc_alpha,
                       timed)

TOL = 1e-3
CACHE_MB = 40


def _case(ctx, case, X, y, Xt, yt, C, kernel, gamma=1.0, degree=3, coef0=0.0,
          variants=(("platt", True), ("wss2", True))):
    from sklearn.svm import SVC

    from .. import SMOClassifier

    n = X.shape[0]
    y_pm = np.where(y == np.unique(y)[-1], 1.0, -1.0)
    svc = SVC(C=C, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0, tol=TOL,
              cache_size=CACHE_MB)
    c0 = time.process_time()
    svc, secs = timed(svc.fit, X, y)
    cpu = time.process_time() - c0
    alpha = svc_alpha(svc, n)
    ctx.emit(Result(case=case, solver="LIBSVM (sklearn SVC)", time_s=secs,
                    n_iter=int(np.sum(svc.n_iter_)),
                    objective=kernel_dual_objective(X, y_pm, alpha, kernel, gamma, degree, coef0),
                    objective_kind="dual", n_sv=int(len(svc.support_)),
                    accuracy=accuracy(svc, Xt, yt), peer=True,
                    extra={"C": C, "gamma": gamma, "tol": TOL, "cache_MB": CACHE_MB, "n": n,
                           "cpu_s": round(cpu, 2)}))
    out = {}
    for sel, shrinking in variants:
        model = SMOClassifier(C=C, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0,
                              tol=TOL, cache_size=CACHE_MB, selection=sel,
                              shrinking=shrinking, random_state=0, progress=ctx.progress)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            c0 = time.process_time()
            try:
                model, secs = timed(model.fit, X, y)
            except Exception as exc:  # report, keep going
                ctx.fail(f"{case}: SMO {sel} raised {type(exc).__name__}: {exc}")
                continue
            cpu = time.process_time() - c0
        a = model.alpha_
        name = f"svmlab SMO {sel}" + ("" if shrinking else " no-shrink")
        ctx.emit(Result(case=case, solver=name, time_s=secs, n_iter=int(model.n_iter_),
                        objective=kernel_dual_objective(X, y_pm, a, kernel, gamma, degree,
                                                        coef0),
                        objective_kind="dual", n_sv=int(np.count_nonzero(a > 0)),
                        accuracy=accuracy(model, Xt, yt),
                        extra={"converged": bool(model.converged_), "cpu_s": round(cpu, 2),
                               "kernel_rows": int(getattr(model, "cache_misses_", 0)),
                               "warnings": [str(w.message)[:120] for w in caught]}))
        out[(sel, shrinking)] = secs
    return out


def _scaling(ctx, X, y, Xt, yt, sizes):
    """Time vs n on nested subsets; log the fitted exponent per solver."""
    perm = np.random.default_rng(0).permutation(X.shape[0])
    times = {}
    for m in sizes:
        idx = np.sort(perm[:m])
        res = _case(ctx, f"scaling AdultGauss n={m}", X[idx], y[idx], Xt, yt, 1.0, "rbf",
                    gamma=0.05, variants=(("platt", True), ("wss2", True)))
        for k, v in res.items():
            times.setdefault(k, []).append(v)
    for (sel, _), ts in times.items():
        if len(ts) == len(sizes) and len(sizes) > 1:
            slope = np.polyfit(np.log(sizes), np.log(ts), 1)[0]
            ctx.log(f"scaling: SMO {sel} time ~ n^{slope:.2f} over n = {list(sizes)} "
                    "(Platt 1998: SMO between n^1 and n^2.2)")


def _warm_up():
    """Compile (or load from numba's cache) the SMO loop outside the timings."""
    from sklearn.datasets import make_classification

    from .. import SMOClassifier

    Xw, yw = make_classification(60, 5, random_state=0)
    for kernel in ("rbf", "linear"):
        for sel in ("platt", "wss2"):
            SMOClassifier(kernel=kernel, selection=sel, progress=False).fit(Xw, yw)


@suite("platt", "Platt 1998 Table 2 rows we can run: SMO (platt, wss2) vs LIBSVM")
def platt(ctx):
    from .. import datasets

    _warm_up()
    smoke = ctx.size == "smoke"
    X, y = datasets.load("a9a", "train")
    Xt, yt = datasets.load("a9a", "test")
    if smoke:
        Xs, ys = subsample(X, y, 1500, seed=0)
        Xts, yts = subsample(Xt, yt, 1500, seed=1)
        _case(ctx, "AdultGauss a9a[1500] rbf C=1 g=0.05", Xs, ys, Xts, yts, 1.0, "rbf", 0.05)
        Xl, yl = subsample(X, y, 3000, seed=0)
        _case(ctx, "AdultLin a9a[3000] linear C=0.05", Xl, yl, Xts, yts, 0.05, "linear")
        _scaling(ctx, X, y, Xts, yts, (250, 500, 1000))
        return
    full = (("platt", True), ("wss2", True), ("platt", False))
    _case(ctx, "AdultGauss a9a rbf C=1 g=0.05", X, y, Xt, yt, 1.0, "rbf", 0.05, variants=full)
    _case(ctx, "AdultLin a9a linear C=0.05", X, y, Xt, yt, 0.05, "linear", variants=full)
    try:
        Xw, yw = datasets.load("w8a", "train")
        Xwt, ywt = datasets.load("w8a", "test")
    except Exception as exc:
        ctx.fail(f"w8a not available: {exc}")
    else:
        _case(ctx, "WebGauss w8a rbf C=5 g=0.05", Xw, yw, Xwt, ywt, 5.0, "rbf", 0.05,
              variants=full)
        _case(ctx, "WebLin w8a linear C=1", Xw, yw, Xwt, ywt, 1.0, "linear", variants=full)
    try:
        Xm, ym = datasets.load("mnist", "test")
    except Exception as exc:
        ctx.log(f"MNIST case skipped: {exc}")
    else:
        y8 = datasets.one_vs_rest(ym, 8)
        Xm = np.asarray(Xm, dtype=np.float64)
        tr = np.arange(Xm.shape[0]) % 4 != 0  # 7500 train / 2500 held out
        _case(ctx, "MNIST test images class 8 poly d=5 C=100", Xm[tr], y8[tr], Xm[~tr],
              y8[~tr], 100.0, "poly", gamma=1.0 / 784, degree=5, coef0=1.0)
    _scaling(ctx, X, y, Xt[:4000], yt[:4000], (2000, 4000, 8000, 16000))
