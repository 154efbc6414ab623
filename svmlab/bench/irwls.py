"""Suite ``irwls``: Perez-Cruz et al. (NIPS 2000), Tables 2 and 3 on our data.

Table 3 rows: IRWLS-SVC against LIBSVM (peer), svmlab SMO and the SVMlight-
style decomposition baseline (``DecompositionClassifier(engine="qp")``), all
in the same run, tol = 1e-3.  The paper writes the RBF kernel as
``exp(-||x - z||^2 / (2 sigma^2))``; we use ``gamma = 1 / (2 sigma^2)``
(sigma=1 -> gamma=0.5, sigma=2 -> 0.125, sigma=10 -> 0.005,
sigma=70 -> 1.02e-4).

Table 2: the engine swap inside decomposition, ``engine="qp"`` against
``engine="irwls"`` for q = 20, 40, 70.

Objectives come from each solution's alpha through the harness
(:func:`svmlab.objectives.dual_objective`), the same way for every solver.
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from ._harness import Result, accuracy, kernel_dual_objective, subsample, suite, svc_alpha, timed

TOL = 1e-3
CACHE_MB = 200


def _gamma(sigma):
    return 1.0 / (2.0 * sigma * sigma)


def _dense(X):
    return X.toarray() if hasattr(X, "toarray") else X


def _emit_model(ctx, case, name, model, secs, X, y_pm, gamma, Xt, yt, peer=False, extra=None):
    a = model.alpha_
    ctx.emit(Result(case=case, solver=name, time_s=secs, n_iter=int(model.n_iter_),
                    objective=kernel_dual_objective(X, y_pm, a, "rbf", gamma),
                    objective_kind="dual", n_sv=int(np.count_nonzero(a > 0)),
                    accuracy=accuracy(model, Xt, yt), peer=peer,
                    extra={"converged": bool(model.converged_), **(extra or {})}))


def _fit(ctx, case, name, model, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return timed(model.fit, X, y)
        except Exception as exc:  # report and keep going
            ctx.fail(f"{case}: {name} raised {type(exc).__name__}: {exc}")
            return None, None


def _table3_case(ctx, case, X, y, C, sigma, Xt=None, yt=None, ws=None, decomposition=True,
                 smo=True):
    from sklearn.svm import SVC

    from .. import DecompositionClassifier, IRWLSClassifier, SMOClassifier
    from ..decomposition.irwls import default_working_set

    gamma = _gamma(sigma)
    Xt, yt = (X, y) if Xt is None else (Xt, yt)
    n = X.shape[0]
    y_pm = np.where(y == np.unique(y)[-1], 1.0, -1.0)
    svc = SVC(C=C, kernel="rbf", gamma=gamma, tol=TOL, cache_size=CACHE_MB)
    svc, secs = timed(svc.fit, X, y)
    alpha = svc_alpha(svc, n)
    ctx.emit(Result(case=case, solver="LIBSVM (sklearn SVC)", time_s=secs,
                    n_iter=int(np.sum(svc.n_iter_)),
                    objective=kernel_dual_objective(X, y_pm, alpha, "rbf", gamma),
                    objective_kind="dual", n_sv=int(len(svc.support_)),
                    accuracy=accuracy(svc, Xt, yt), peer=True,
                    extra={"C": C, "sigma": sigma, "gamma": gamma, "n": n}))
    # ws=None: the estimator's default working set (default_working_set(n))
    m = IRWLSClassifier(C=C, gamma=gamma, tol=TOL,
                        working_set_size=None if ws is None else min(ws, n),
                        cache_size=CACHE_MB, random_state=0, progress=ctx.progress)
    m, secs = _fit(ctx, case, "IRWLS", m, X, y)
    sw = default_working_set(n) if ws is None else min(ws, n)
    if m is not None:
        _emit_model(ctx, case, f"svmlab IRWLS (Sw={sw})", m, secs, X, y_pm, gamma, Xt,
                    yt, extra={"chunks": int(m.n_chunks_)})
    if smo:
        m = SMOClassifier(C=C, gamma=gamma, tol=TOL, cache_size=CACHE_MB, random_state=0,
                          progress=ctx.progress)
        m, secs = _fit(ctx, case, "SMO", m, X, y)
        if m is not None:
            _emit_model(ctx, case, "svmlab SMO", m, secs, X, y_pm, gamma, Xt, yt)
    if decomposition:
        m = DecompositionClassifier(C=C, gamma=gamma, tol=TOL, engine="qp", working_set_size=10,
                                    cache_size=CACHE_MB, progress=ctx.progress)
        m, secs = _fit(ctx, case, "decomposition", m, X, y)
        if m is not None:
            _emit_model(ctx, case, "svmlab decomposition q=10 qp", m, secs, X, y_pm, gamma, Xt,
                        yt)


def _table2_case(ctx, case, X, y, C, sigma, qs=(20, 40, 70)):
    from .. import DecompositionClassifier

    gamma = _gamma(sigma)
    y_pm = np.where(y == np.unique(y)[-1], 1.0, -1.0)
    from sklearn.svm import SVC

    svc, secs = timed(SVC(C=C, gamma=gamma, tol=TOL, cache_size=CACHE_MB).fit, X, y)
    ctx.emit(Result(case=case, solver="LIBSVM (sklearn SVC)", time_s=secs,
                    objective=kernel_dual_objective(X, y_pm, svc_alpha(svc, X.shape[0]), "rbf",
                                                    gamma),
                    objective_kind="dual", n_sv=int(len(svc.support_)), peer=True,
                    extra={"C": C, "sigma": sigma, "gamma": gamma}))
    for q in qs:
        for engine in ("qp", "irwls"):
            m = DecompositionClassifier(C=C, gamma=gamma, tol=TOL, engine=engine,
                                        working_set_size=min(q, X.shape[0]),
                                        cache_size=CACHE_MB, progress=ctx.progress)
            m, secs = _fit(ctx, case, f"decomposition {engine} q={q}", m, X, y)
            if m is not None:
                _emit_model(ctx, case, f"decomposition q={q} engine={engine}", m, secs, X, y_pm,
                            gamma, X, y)


def _warm_up():
    """Load/compile the numba code of every solver here outside the timings
    (the first fit otherwise pays ~0.3 s of cache loading)."""
    from .. import DecompositionClassifier, IRWLSClassifier, SMOClassifier

    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 2))
    y = np.where(X[:, 0] + 0.3 * rng.standard_normal(60) > 0, 1.0, -1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        IRWLSClassifier(C=100.0, gamma=0.5, working_set_size=20, random_state=0).fit(X, y)
        SMOClassifier(C=100.0, gamma=0.5, random_state=0).fit(X, y)
        for engine in ("qp", "irwls", "smo"):
            DecompositionClassifier(C=100.0, gamma=0.5, engine=engine).fit(X, y)


@suite("irwls", "Perez-Cruz et al. 2000: Table 3 (IRWLS vs LIBSVM/SMO/decomposition), "
                "Table 2 (qp vs irwls engine inside decomposition)")
def irwls(ctx):
    from .. import datasets

    smoke = ctx.size == "smoke"
    _warm_up()
    t0 = time.perf_counter()
    # --- Table 3 -------------------------------------------------------------
    Xb, yb = datasets.load("banana", "train")
    _table3_case(ctx, "banana-400 C=100 sigma=1 (gamma=0.5)", _dense(Xb), yb, 100.0, 1.0,
                 ws=400)
    Xg, yg = datasets.gauss_m(600 if smoke else 4000, random_state=0)
    Xg = _dense(Xg)
    for C in ((1.0,) if smoke else (1.0, 100.0)):
        _table3_case(ctx, f"gauss-m-{Xg.shape[0]} C={C:g} sigma=1 (gamma=0.5)", Xg, yg, C, 1.0,
                     decomposition=not smoke or C == 1.0)
    Xd, yd = datasets.load("diabetes", "all")
    Xd = _dense(Xd)
    Xd = (Xd - Xd.mean(0)) / Xd.std(0)
    if smoke:
        Xd, yd = subsample(Xd, yd, 300)
    _table3_case(ctx, f"diabetes-{Xd.shape[0]} (standardised) C=10 sigma=2 (gamma=0.125)",
                 Xd, yd, 10.0, 2.0)
    if smoke:
        ctx.log(f"irwls smoke done in {time.perf_counter() - t0:.1f}s")
        _table2_case(ctx, "banana-400 C=100 sigma=1: engine swap", _dense(Xb), yb, 100.0, 1.0,
                     qs=(20,))
        return
    Xs, ys = datasets.load("ratsch-splice", "train")
    _table3_case(ctx, "ratsch-splice-1000 C=1000 sigma=70", _dense(Xs), ys, 1000.0, 70.0)
    Xb4, yb4 = datasets.load("banana", "test")
    _table3_case(ctx, "banana-4900 C=316.2 sigma=1 (gamma=0.5)", _dense(Xb4), yb4, 316.2, 1.0)
    Xa, ya = datasets.load("a9a", "train")
    Xa6, ya6 = subsample(Xa, ya, 11221, seed=0)
    _table3_case(ctx, "a9a-11221 (Adult6-like) C=1 sigma=10", Xa6, ya6, 1.0, 10.0,
                 decomposition=False)
    Xw, yw = datasets.load("w8a", "train")
    Xw6, yw6 = subsample(Xw, yw, 24693, seed=0)
    _table3_case(ctx, "w8a-24693 C=5 sigma=10", Xw6, yw6, 5.0, 10.0, decomposition=False)
    if ctx.size == "full-large":  # a9a / w8a in full take long on 2 cores
        _table3_case(ctx, "a9a C=1 sigma=10", Xa, ya, 1.0, 10.0, decomposition=False)
        _table3_case(ctx, "w8a C=5 sigma=10", Xw, yw, 5.0, 10.0, decomposition=False)
    # --- Table 2 -------------------------------------------------------------
    _table2_case(ctx, "banana-400 C=100 sigma=1: engine swap", _dense(Xb), yb, 100.0, 1.0)
    _table2_case(ctx, "diabetes-768 C=10 sigma=2: engine swap", Xd, yd, 10.0, 2.0)
