"""Suite "joachims": Joachims, "Training Linear SVMs in Linear Time" (KDD 2006).

Problem (all solvers of a case, objective computed the same way):
``P(w) = 1/2 |w|^2 + C_lib sum_i max(0, 1 - y_i w.x_i)`` without bias, where
``C_lib = C / n`` is LIBLINEAR's C and C the paper's (Table 1 uses C/n).

* Table 1 style rows: a9a (C/n = 0.05), w8a (C/n = 1), ijcnn1 (C/n = 1),
  Fashion-MNIST class 0 vs rest (pixels in [0, 1], C/n = 0.01):
  svmlab CuttingPlaneClassifier (epsilon = 1e-3, fit_intercept=False)
  against LIBLINEAR (sklearn LinearSVC, dual hinge, same C, no intercept),
  and linear SMO (svmlab.SMOClassifier(kernel="linear")) on a subset
  case when it is importable.  Numba compilation is warmed up before timing.
  OCAS (``method="ocas"``) runs beside Algorithm 1 on every Table 1 row.
* Figures 1-2: time and iterations vs n on nested random subsets of a9a at a
  fixed paper C, with the log-log slope (Algorithm 1 and OCAS); Figures 5-6: vs epsilon; Figures
  8-9: vs C up to C/n = 1 (Algorithm 1 and OCAS); and the ordinal
  (ROC-area) model's time vs n.

Time ratios here are at each solver's default tolerance, so at unequal
objectives; the ``linear`` suite (:mod:`svmlab.bench.linear`) compares at
equal primal objective.
"""

from __future__ import annotations

import warnings

import numpy as np

from ._harness import Result, linear_primal, subsample, suite, timed

EPS = 1e-3


def _liblinear(X, y, C_lib, tol=1e-4):
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.svm import LinearSVC

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return LinearSVC(loss="hinge", dual=True, fit_intercept=False, C=C_lib, tol=tol,
                         max_iter=100_000).fit(X, y)


def _cp(X, y, C_paper, eps=EPS, **kw):
    from ..cutting_plane.estimators import CuttingPlaneClassifier

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return CuttingPlaneClassifier(C=C_paper, epsilon=eps, fit_intercept=False,
                                      max_iter=-1, **kw).fit(X, y)


def _warm():
    """Compile/load the numba passes outside every timing."""
    from sklearn.datasets import make_classification

    from ..cutting_plane.estimators import CuttingPlaneOrdinalRegressor
    import scipy.sparse as sp

    X, y = make_classification(200, 5, random_state=0)
    for method in ("joachims", "ocas"):
        _cp(X, y, 20.0, method=method)
        _cp(sp.csr_matrix(X), y, 20.0, method=method)
        _cp(sp.csr_matrix((X > 0).astype(float)), y, 20.0, method=method)  # binary CSR
    CuttingPlaneOrdinalRegressor(C=5.0).fit(X, y)
    CuttingPlaneOrdinalRegressor(C=5.0).fit(sp.csr_matrix(X), y)


def _load(name, split="train"):
    from .. import datasets

    X, y = datasets.load(name, split)
    if name == "fashion-mnist":  # one class (0, T-shirt/top) vs rest
        y = np.where(np.asarray(y) == 0, 1, -1)
    return X, y


def _pm(y):
    y = np.asarray(y)
    return np.where(y == np.unique(y)[-1], 1.0, -1.0)


def _slope(ns, ts):
    return float(np.polyfit(np.log(ns), np.log(ts), 1)[0])


def _table1(ctx):
    cases = [("a9a", 0.05), ("w8a", 1.0), ("ijcnn1", 1.0), ("fashion-mnist", 0.01)]
    smoke_n = 4000
    try:
        from .. import SMOClassifier  # noqa: F401
        have_smo = True
    except Exception as exc:  # pragma: no cover - depends on the other solvers
        have_smo = False
        ctx.log(f"linear SMO not importable ({exc}); rows without it")
    ratios = {}
    for name, c_over_n in cases:
        try:
            X, y = _load(name)
            Xt, yt = _load(name, "test")
        except Exception as exc:
            ctx.log(f"{name}: not available ({type(exc).__name__}: {exc}); skipped")
            continue
        if ctx.smoke:
            if name == "fashion-mnist":
                continue
            X, y = subsample(X, y, smoke_n, seed=0)
            Xt, yt = subsample(Xt, yt, smoke_n, seed=1)
        n = X.shape[0]
        C_lib = c_over_n
        C = c_over_n * n
        y_pm = _pm(y)
        case = f"{name} n={n} C/n={c_over_n:g} (no bias)"
        ll, t_ll = timed(_liblinear, X, y, C_lib)
        p_ll = linear_primal(X, y_pm, ll.coef_[0], 0.0, C_lib)
        ctx.emit(Result(case=case, solver="LIBLINEAR (LinearSVC dual hinge)", time_s=t_ll,
                        n_iter=int(np.max(ll.n_iter_)), objective=p_ll,
                        objective_kind="primal", accuracy=float(np.mean(ll.predict(Xt) == yt)),
                        peer=True))
        cp, t_cp = timed(_cp, X, y, C)
        p_cp = linear_primal(X, y_pm, cp.coef_[0], 0.0, C_lib)
        ctx.emit(Result(case=case, solver=f"svmlab cutting plane eps={EPS:g}", time_s=t_cp,
                        n_iter=cp.n_iter_, objective=p_cp, objective_kind="primal",
                        accuracy=float(np.mean(cp.predict(Xt) == yt)),
                        extra={"working_set": cp.working_set_size_, "qp_steps": cp.qp_steps_,
                               "C_paper": C, "theorem3_bound": p_ll + C_lib * n * EPS}))
        ratios[name] = t_cp / t_ll
        oc, t_oc = timed(_cp, X, y, C, method="ocas")
        p_oc = linear_primal(X, y_pm, oc.coef_[0], 0.0, C_lib)
        ctx.emit(Result(case=case, solver=f"svmlab OCAS eps={EPS:g}", time_s=t_oc,
                        n_iter=oc.n_iter_, objective=p_oc, objective_kind="primal",
                        accuracy=float(np.mean(oc.predict(Xt) == yt)),
                        extra={"working_set": oc.working_set_size_, "qp_steps": oc.qp_steps_,
                               "C_paper": C, "iterations_algorithm_1": cp.n_iter_}))
        ratios[f"{name} OCAS"] = t_oc / t_ll
        if p_oc > p_ll + C_lib * n * EPS * (1 + 1e-9):
            ctx.fail(f"{name}: OCAS primal {p_oc:.6g} exceeds LIBLINEAR's "
                     f"{p_ll:.6g} + C*eps")
        if p_cp > p_ll + C_lib * n * EPS * (1 + 1e-9):
            ctx.fail(f"{name}: cutting-plane primal {p_cp:.6g} exceeds LIBLINEAR's "
                     f"{p_ll:.6g} + C*eps (Theorem 3)")
        # linear SMO on a subset (it solves the dual with an unregularised bias,
        # so its objective includes that bias)
        if have_smo and name != "fashion-mnist":
            from .. import SMOClassifier

            ns = min(n, 2000 if ctx.smoke else 8000)
            Xs, ys = subsample(X, y, ns, seed=2)
            ys_pm = _pm(ys)
            scase = f"{name} n={ns} C/n={c_over_n:g} subset (SMO row)"
            ll2, t2 = timed(_liblinear, Xs, ys, C_lib)
            ctx.emit(Result(case=scase, solver="LIBLINEAR (LinearSVC dual hinge)", time_s=t2,
                            n_iter=int(np.max(ll2.n_iter_)),
                            objective=linear_primal(Xs, ys_pm, ll2.coef_[0], 0.0, C_lib),
                            objective_kind="primal",
                            accuracy=float(np.mean(ll2.predict(Xt) == yt)), peer=True))
            cp2, t3 = timed(_cp, Xs, ys, C_lib * ns)
            ctx.emit(Result(case=scase, solver=f"svmlab cutting plane eps={EPS:g}", time_s=t3,
                            n_iter=cp2.n_iter_,
                            objective=linear_primal(Xs, ys_pm, cp2.coef_[0], 0.0, C_lib),
                            objective_kind="primal",
                            accuracy=float(np.mean(cp2.predict(Xt) == yt))))
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    smo, t4 = timed(lambda: SMOClassifier(
                        kernel="linear", C=C_lib, progress=ctx.progress).fit(Xs, ys))
                w = np.asarray(smo.coef_).ravel()
                b = float(smo.intercept_[0])
                ctx.emit(Result(case=scase, solver="svmlab SMO (linear kernel, with bias)",
                                time_s=t4, n_iter=getattr(smo, "n_iter_", None),
                                objective=linear_primal(Xs, ys_pm, w, b, C_lib),
                                objective_kind="primal",
                                accuracy=float(np.mean(smo.predict(Xt) == yt)),
                                extra={"note": "unregularised bias: a different problem"}))
            except Exception as exc:
                ctx.log(f"{name}: linear SMO failed: {type(exc).__name__}: {exc}")
    ctx.log("time ratios cutting plane (Algorithm 1; OCAS) / LIBLINEAR at unequal "
            "tolerances (see the 'linear' suite for equal objectives): "
            + ", ".join(f"{k} {v:.2f}x" for k, v in ratios.items()))


def _vs_n(ctx, X, y, C, sizes, label, repeats=1):
    """Figures 1-2: time and iterations against n on nested random subsets
    at a fixed paper C, for Algorithm 1, OCAS and LIBLINEAR (at C/n); the
    log-log slope of time against n per solver.  Each time is the fastest
    of ``repeats`` fits (the machine is shared).  Returns the largest slope
    of the two cutting-plane methods."""
    import matplotlib.pyplot as plt

    perm = np.random.default_rng(0).permutation(X.shape[0])
    methods = (("joachims", "Algorithm 1"), ("ocas", "OCAS"))
    ts = {m: [] for m, _ in methods}
    its = {m: [] for m, _ in methods}
    tl = []

    def fastest(f, *args, **kw):
        best = None
        for _ in range(repeats):
            out, t = timed(f, *args, **kw)
            best = (out, t) if best is None or t < best[1] else best
        return best

    for n in sizes:
        idx = np.sort(perm[:n])
        Xn, yn = X[idx], y[idx]
        case = f"{label} vs n: n={n} C={C:g} (C/n={C / n:.3g})"
        for method, name in methods:
            cp, t = fastest(_cp, Xn, yn, C, method=method)
            ctx.emit(Result(case=case, solver=f"svmlab cutting plane ({name})", time_s=t,
                            n_iter=cp.n_iter_,
                            objective=linear_primal(Xn, _pm(yn), cp.coef_[0], 0.0, C / n),
                            objective_kind="primal"))
            ts[method].append(t)
            its[method].append(cp.n_iter_)
        ll, t_ll = fastest(_liblinear, Xn, yn, C / n)
        ctx.emit(Result(case=case, solver="LIBLINEAR (LinearSVC dual hinge)", time_s=t_ll,
                        objective=linear_primal(Xn, _pm(yn), ll.coef_[0], 0.0, C / n),
                        objective_kind="primal", peer=True))
        tl.append(t_ll)
    slopes = {m: _slope(sizes, ts[m]) for m, _ in methods}
    for method, name in methods:
        ctx.log(f"{label}: {name} time vs n log-log slope {slopes[method]:.2f} "
                f"(LIBLINEAR {_slope(sizes, tl):.2f}); iterations {its[method]}; "
                f"times {[round(t, 4) for t in ts[method]]}")
    fig, ax = plt.subplots(1, 2, figsize=(9, 3.5))
    for (method, name), mk in zip(methods, ("o-", "^-")):
        ax[0].loglog(sizes, ts[method], mk, label=f"{name} (slope {slopes[method]:.2f})")
        ax[1].semilogx(sizes, its[method], mk, label=name)
    ax[0].loglog(sizes, tl, "s--", label="LIBLINEAR")
    ax[0].set_xlabel("n")
    ax[0].set_ylabel("time (s)")
    ax[0].legend()
    ax[1].set_xlabel("n")
    ax[1].set_ylabel("iterations")
    ax[1].set_ylim(0, max(max(v) for v in its.values()) * 1.2)
    ax[1].legend()
    fig.suptitle(f"{label}: fixed C = {C:g} (Joachims Fig. 1-2)")
    ctx.plot(f"{label}-vs-n", fig)
    return max(slopes.values())


def _vs_param(ctx, X, y, values, which, C):
    import matplotlib.pyplot as plt

    n = X.shape[0]
    curves = {}
    for method, label in (("joachims", "Algorithm 1"), ("ocas", "OCAS")):
        ts, its = [], []
        for v in values:
            eps, Cp = (v, C) if which == "epsilon" else (EPS, v * n)
            cp, t = timed(_cp, X, y, Cp, eps, method=method)
            ts.append(t)
            its.append(cp.n_iter_)
            ctx.emit(Result(case=f"a9a vs {which}: {which}={v:g}",
                            solver=f"svmlab cutting plane ({label})", time_s=t,
                            n_iter=cp.n_iter_,
                            objective=linear_primal(X, _pm(y), cp.coef_[0], 0.0, Cp / n),
                            objective_kind="primal", extra={"C_paper": Cp, "epsilon": eps}))
        ctx.log(f"a9a vs {which} ({label}): values {list(values)}, iterations {its}, "
                f"times {[round(t, 3) for t in ts]}")
        curves[label] = (ts, its)
    fig, ax = plt.subplots(1, 2, figsize=(9, 3.5))
    for label, (ts, its) in curves.items():
        ax[0].loglog(values, ts, "o-", label=label)
        ax[1].loglog(values, its, "o-", label=label)
    ax[0].set_xlabel(which if which == "epsilon" else "C/n")
    ax[0].set_ylabel("time (s)")
    ax[0].legend()
    ax[1].set_xlabel(which if which == "epsilon" else "C/n")
    ax[1].set_ylabel("iterations")
    fig.suptitle(f"a9a: cutting plane vs {which} (Joachims Fig. "
                 f"{'5-6' if which == 'epsilon' else '8-9'})")
    ctx.plot(f"a9a-vs-{which}", fig)


def _ordinal_vs_n(ctx, X, y, sizes, C):
    import matplotlib.pyplot as plt

    from ..cutting_plane.estimators import CuttingPlaneOrdinalRegressor

    perm = np.random.default_rng(1).permutation(X.shape[0])
    ts, its = [], []
    for n in sizes:
        idx = np.sort(perm[:n])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est, t = timed(lambda: CuttingPlaneOrdinalRegressor(C=C, epsilon=EPS, max_iter=-1)
                           .fit(X[idx], y[idx]))
        ts.append(t)
        its.append(est.n_iter_)
        ctx.emit(Result(case=f"a9a ROC-area SVM vs n: n={n} C={C:g}",
                        solver="svmlab cutting plane (ordinal, Alg. 2)", time_s=t,
                        n_iter=est.n_iter_, accuracy=est.score(X[idx], y[idx]),
                        extra={"n_pairs": est.n_pairs_, "metric": "training ROC area"}))
    slope = _slope(sizes, ts)
    ctx.log(f"ordinal (ROC area) time vs n slope {slope:.2f}; iterations {its}; "
            f"pairs up to {est.n_pairs_:,} never enumerated")
    fig, ax = plt.subplots(figsize=(4.5, 3.5))
    ax.loglog(sizes, ts, "o-", label=f"slope {slope:.2f}")
    ax.set_xlabel("n")
    ax.set_ylabel("time (s)")
    ax.legend()
    ax.set_title("ROC-area SVM (Alg. 2) on a9a")
    ctx.plot("a9a-ordinal-vs-n", fig)


@suite("joachims", "Joachims 2006 (SVMperf): Table 1 rows vs LIBLINEAR and linear SMO; "
                   "time/iterations vs n, epsilon, C; ROC-area SVM vs n")
def joachims(ctx):
    _warm()
    _table1(ctx)
    X, y = _load("a9a")
    if ctx.smoke:
        sizes = [1000, 2000, 4000]
        slope = _vs_n(ctx, X, y, 200.0, sizes, "a9a")
        Xs, ys = subsample(X, y, 4000, seed=3)
        _vs_param(ctx, Xs, ys, [1e-2, 1e-3], "epsilon", 0.05 * 4000)
        _vs_param(ctx, Xs, ys, [0.01, 0.05], "C", None)
        _ordinal_vs_n(ctx, X, y, [1000, 2000, 4000], 200.0)
    else:
        sizes = [2000, 4000, 8000, 16000, 32561]
        slope = _vs_n(ctx, X, y, 1000.0, sizes, "a9a", repeats=3)
        _vs_param(ctx, X, y, [1e-1, 3e-2, 1e-2, 3e-3, 1e-3, 3e-4, 1e-4], "epsilon",
                  0.05 * X.shape[0])
        _vs_param(ctx, X, y, [0.001, 0.005, 0.01, 0.05, 0.1, 0.3, 1.0], "C", None)
        _ordinal_vs_n(ctx, X, y, [2000, 4000, 8000, 16000, 32561], 1000.0)
    if slope > 1.0:
        ctx.log(f"WARNING: time-vs-n slope {slope:.2f} above the paper's linear scaling "
                "(at most 1.0)")
