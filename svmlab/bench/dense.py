"""Suite ``dense``: kernel SVMs on dense, real-valued data.

Every case trains LIBSVM (scikit-learn's SVC, the peer) and the svmlab
kernel solvers in the same run, with the same ``tol = 1e-3`` and the same
kernel cache (200 MB):

* ``SMOClassifier(selection="wss2")`` and, on the three large cases,
  ``selection="platt"``;
* ``IRWLSClassifier`` on the cases of Perez-Cruz et al. (banana, gauss-m,
  diabetes, splice, Adult6);
* the blocked decomposition, ``DecompositionClassifier(engine="smo")``
  (ThunderSVM's scheme, :mod:`svmlab.decomposition._blocked`, with its
  default working set and float32 rows), with one BLAS thread (the
  default) and, on the three large cases, with ``n_jobs=-1`` too (LIBSVM
  uses one core).

Each time is the fastest of up to 5 fits of a fresh estimator, fewer once
the fits have taken 1 s in all (:func:`svmlab.bench._harness.timed_best`;
a fit of seconds runs once), for the peer and for every svmlab solver
alike: the small cases' single timings move by 30-50% between runs.

The table prints each time as a ratio against LIBSVM's and the dual
objective ``W(alpha)`` computed from each solution's alpha by
:func:`svmlab.objectives.dual_objective` (the same code for every solver);
a row whose objective differs from LIBSVM's by more than 1e-3 (relative) is
flagged in the log and in its ``extra["objective_ok"]``.

Cases (size ``full``; ``smoke`` takes small subsets of the same data):

=============================  =======================================
MNIST test, 8 vs rest          10000 x 784, pixels / 255, rbf C=10 g=0.02
Fashion-MNIST 15k, 0 vs rest   the first 15000 training images, same
ijcnn1 20k                     the first 20000 rows of the training
                               file (dense array), rbf C=1 g=1
banana 4900                    C=316.2 g=0.5
gauss-m 4000                   C=1 g=0.5
diabetes                       standardised, C=10 g=1/8
ratsch splice                  the 1000 training rows, C=1000 g=1e-4
a9a 11221 (Adult6)             random subset (seed 0), C=1 g=0.05
=============================  =======================================

Size ``full`` also measures the **peak memory** of the blocked
decomposition on the 60000 Fashion-MNIST training images (0 vs rest), in a
fresh subprocess: the peak of Python/numpy allocations during ``fit``
(``tracemalloc``) and the process's peak resident set size (``VmHWM`` of
``/proc/self/status``; ``resource.getrusage`` where that is missing), next
to the peak after loading the data.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import warnings

import numpy as np

from ._harness import Result, kernel_dual_objective, subsample, suite, svc_alpha, timed_best

TOL = 1e-3
CACHE_MB = 200
#: relative dual-objective difference to LIBSVM above which a row is flagged
OBJ_TOL = 1e-3


def _dense(X):
    return X.toarray() if hasattr(X, "toarray") else np.asarray(X)


def _cases(smoke):
    """``(name, X, y, C, gamma, solvers)``; ``solvers`` a subset of
    {"wss2", "platt", "irwls", "blocked", "blocked-2"} (``blocked-2``: the
    blocked decomposition with ``n_jobs=-1``, every core for the kernel
    blocks; the default ``n_jobs=None`` is one BLAS thread)."""
    from .. import datasets

    big = ("wss2", "platt", "blocked", "blocked-2")
    small = ("wss2", "irwls", "blocked")
    out = []
    Xm, ym = datasets.load("mnist", "test")
    Xm, ym = np.asarray(Xm, dtype=np.float64), datasets.one_vs_rest(ym, 8)
    if smoke:
        Xm, ym = subsample(Xm, ym, 1000, seed=0)
    out.append((f"MNIST test[{len(ym)}] 8 vs rest rbf C=10 g=0.02", Xm, ym, 10.0, 0.02, big))
    Xf, yf = datasets.load("fashion-mnist", "train")
    nf = 1000 if smoke else 15000
    Xf, yf = np.asarray(Xf[:nf], dtype=np.float64), datasets.one_vs_rest(yf[:nf], 0)
    out.append((f"Fashion-MNIST[{nf}] 0 vs rest rbf C=10 g=0.02", Xf, yf, 10.0, 0.02, big))
    Xi, yi = datasets.load("ijcnn1", "train")
    ni = 2000 if smoke else 20000
    Xi, yi = _dense(Xi[:ni]), np.asarray(yi[:ni], dtype=np.float64)
    out.append((f"ijcnn1[{ni}] rbf C=1 g=1", Xi, yi, 1.0, 1.0, big))
    Xb, yb = datasets.load("banana", "test")
    Xb = _dense(Xb)
    if smoke:
        Xb, yb = subsample(Xb, yb, 800, seed=0)
    out.append((f"banana-{len(yb)} C=316.2 g=0.5", Xb, yb, 316.2, 0.5, small))
    Xg, yg = datasets.gauss_m(600 if smoke else 4000, random_state=0)
    out.append((f"gauss-m-{len(yg)} C=1 g=0.5", _dense(Xg), yg, 1.0, 0.5, small))
    Xd, yd = datasets.load("diabetes", "all")
    Xd = _dense(Xd)
    Xd = (Xd - Xd.mean(0)) / Xd.std(0)
    if smoke:
        Xd, yd = subsample(Xd, yd, 300, seed=0)
    out.append((f"diabetes-{len(yd)} (standardised) C=10 g=1/8", Xd, yd, 10.0, 0.125, small))
    Xs, ys = datasets.load("ratsch-splice", "train")
    Xs = _dense(Xs)
    if smoke:
        Xs, ys = subsample(Xs, ys, 400, seed=0)
    out.append((f"ratsch-splice-{len(ys)} C=1000 g=1e-4", Xs, ys, 1000.0, 1e-4, small))
    Xa, ya = datasets.load("a9a", "train")
    Xa, ya = subsample(Xa, ya, 1500 if smoke else 11221, seed=0)
    out.append((f"a9a-{len(ya)} (Adult6) C=1 g=0.05", Xa, ya, 1.0, 0.05, small))
    return out


def _models(solvers, C, gamma, progress):
    from .. import DecompositionClassifier, IRWLSClassifier, SMOClassifier

    kw = dict(C=C, gamma=gamma, tol=TOL, cache_size=CACHE_MB, progress=progress)
    out = []
    for s in solvers:
        if s in ("wss2", "platt"):
            out.append((f"svmlab SMO {s}",
                        SMOClassifier(selection=s, random_state=0, **kw)))
        elif s == "irwls":
            out.append(("svmlab IRWLS", IRWLSClassifier(random_state=0, **kw)))
        elif s == "blocked":
            out.append(("svmlab blocked decomposition (smo engine)",
                        DecompositionClassifier(engine="smo", **kw)))
        elif s == "blocked-2":
            out.append(("svmlab blocked decomposition, n_jobs=-1",
                        DecompositionClassifier(engine="smo", n_jobs=-1, **kw)))
    return out


def _case(ctx, name, X, y, C, gamma, solvers):
    from sklearn.base import clone
    from sklearn.svm import SVC

    n = X.shape[0]
    y_pm = np.where(y == np.unique(y)[-1], 1.0, -1.0)
    svc, secs = timed_best(
        lambda: SVC(C=C, kernel="rbf", gamma=gamma, tol=TOL, cache_size=CACHE_MB).fit(X, y))
    W_ref = kernel_dual_objective(X, y_pm, svc_alpha(svc, n), "rbf", gamma)
    ctx.emit(Result(case=name, solver="LIBSVM (sklearn SVC)", time_s=secs,
                    n_iter=int(np.sum(svc.n_iter_)), objective=W_ref, objective_kind="dual",
                    n_sv=int(len(svc.support_)), peer=True,
                    extra={"C": C, "gamma": gamma, "tol": TOL, "cache_MB": CACHE_MB, "n": n}))
    for label, model in _models(solvers, C, gamma, ctx.progress):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                model, secs = timed_best(lambda: clone(model).fit(X, y))
            except Exception as exc:  # report, keep going
                ctx.fail(f"{name}: {label} raised {type(exc).__name__}: {exc}")
                continue
        a = model.alpha_
        W = kernel_dual_objective(X, y_pm, a, "rbf", gamma)
        rel = (W - W_ref) / max(abs(W_ref), 1e-300)
        ok = abs(rel) <= OBJ_TOL
        if not ok:
            ctx.log(f"OBJECTIVE MISS: {name} | {label}: dual {W:.9g} vs LIBSVM {W_ref:.9g} "
                    f"(rel {rel:.2e} > {OBJ_TOL:g})")
        extra = {"converged": bool(model.converged_), "objective_ok": ok,
                 "warnings": [str(w.message)[:120] for w in caught]}
        if hasattr(model, "kernel_rows_"):
            extra["kernel_rows"] = int(model.kernel_rows_)
        ctx.emit(Result(case=name, solver=label, time_s=secs, n_iter=int(model.n_iter_),
                        objective=W, objective_kind="dual",
                        n_sv=int(np.count_nonzero(a > 0)), extra=extra))


#: run in a fresh interpreter by :func:`peak_memory` (argv: n C gamma)
_MEMORY_SCRIPT = r"""
import json, resource, sys, time, tracemalloc
import numpy as np
from svmlab import DecompositionClassifier, datasets

def peak_rss_mb():
    # the high-water mark of this process's own memory (VmHWM; getrusage's
    # ru_maxrss also counts the parent's peak, inherited through fork)
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0

n, C, gamma = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
X, y = datasets.load("fashion-mnist", "train")
X = np.array(X[:n], dtype=np.float64)  # a writeable copy, as a user's array
y = datasets.one_vs_rest(y[:n], 0)
datasets.clear_memory_cache()
rss_loaded = peak_rss_mb()
tracemalloc.start()
t0 = time.perf_counter()
m = DecompositionClassifier(C=C, gamma=gamma, engine="smo", tol=1e-3, cache_size=200,
                            progress=False).fit(X, y)
secs = time.perf_counter() - t0
_, peak = tracemalloc.get_traced_memory()
tracemalloc.stop()
print(json.dumps({"n": n, "seconds": secs, "converged": bool(m.converged_),
                  "n_iter": int(m.n_iter_), "n_sv": int(len(m.support_)),
                  "kernel_rows": int(m.kernel_rows_),
                  "tracemalloc_peak_MB": peak / 2**20, "rss_after_load_MB": rss_loaded,
                  "peak_rss_MB": peak_rss_mb(),
                  "data_MB": X.nbytes / 2**20}))
"""


def peak_memory(n=60000, C=10.0, gamma=0.02, timeout=3000):
    """Fit the blocked decomposition on the first ``n`` Fashion-MNIST
    training images (0 vs rest) in a fresh interpreter; returns its
    measurements (a dict, see ``_MEMORY_SCRIPT``)."""
    out = subprocess.run([sys.executable, "-c", _MEMORY_SCRIPT, str(n), str(C), str(gamma)],
                         capture_output=True, text=True, timeout=timeout, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _warm_up():
    """Compile (or load from numba's cache) every solver outside the timings."""
    from .. import DecompositionClassifier, IRWLSClassifier, SMOClassifier

    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 3))
    y = np.where(X[:, 0] + 0.3 * rng.standard_normal(80) > 0, 1.0, -1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for sel in ("wss2", "platt"):
            SMOClassifier(selection=sel, gamma=0.5, progress=False).fit(X, y)
        IRWLSClassifier(gamma=0.5, working_set_size=20, random_state=0, progress=False).fit(X, y)
        DecompositionClassifier(engine="smo", gamma=0.5, working_set_size=16,
                                progress=False).fit(X, y)


@suite("dense", "Kernel solvers on dense real-valued data vs LIBSVM: MNIST, "
                "Fashion-MNIST, ijcnn1, banana, gauss-m, diabetes, splice, Adult6")
def dense(ctx):
    smoke = ctx.size == "smoke"
    _warm_up()
    t0 = time.perf_counter()
    for name, X, y, C, gamma, solvers in _cases(smoke):
        _case(ctx, name, X, y, C, gamma, solvers)
    ctx.log(f"dense cases done in {time.perf_counter() - t0:.1f}s")
    if smoke:
        return
    try:
        mem = peak_memory()
    except Exception as exc:
        ctx.fail(f"peak memory on Fashion-MNIST 60k failed: {type(exc).__name__}: {exc}")
        return
    ctx.log("peak memory, blocked decomposition on Fashion-MNIST 60000 x 784 (0 vs rest, "
            f"C=10 g=0.02, float32 rows, cache 200 MB): fit {mem['seconds']:.1f}s, "
            f"converged={mem['converged']}, {mem['n_sv']} SVs, {mem['kernel_rows']} rows; "
            f"tracemalloc peak {mem['tracemalloc_peak_MB']:.0f} MB during fit; "
            f"peak RSS {mem['peak_rss_MB']:.0f} MB (peak before fit, data loaded: "
            f"{mem['rss_after_load_MB']:.0f} MB; X float64 {mem['data_MB']:.0f} MB)")
    ctx.emit(Result(case="Fashion-MNIST 60000 peak memory (no peer)",
                    solver="svmlab blocked decomposition (smo engine)", time_s=mem["seconds"],
                    n_iter=mem["n_iter"], n_sv=mem["n_sv"], extra=mem))
