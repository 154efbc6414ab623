"""Suite ``multiclass``: native one-vs-one multiclass against SVC.

Fashion-MNIST, all 10 classes: the first 10000 training images (size
``full``; ``smoke``: 1500), pixels / 255, rbf ``C=10``, ``gamma=0.02``;
``tol=1e-3``, ``cache_size=200`` MB for every solver:

* LIBSVM, scikit-learn's :class:`~sklearn.svm.SVC` (the peer; one-vs-one,
  a kernel cache per pair);
* ``SMOClassifier(selection="wss2")`` (one-vs-one with one shared store of
  full-set kernel rows, :mod:`svmlab._multiclass`);
* the blocked decomposition ``DecompositionClassifier(engine="smo")``
  (one-vs-one; each pair fills its own row store, which the shared store
  does not reach).

Each row reports the fit time (ratio against SVC's in the same run), the sum
over the 45 pairs of the pairs' dual objectives ``W_p``, computed here from
each model's ``support_``/``dual_coef_`` decoded with LIBSVM's layout (the
same code for every solver), the largest relative difference of a pair's
``W_p`` to SVC's (flagged above 1e-3 in the log and ``extra``), and the
accuracy on held-out images (the first 5000 Fashion-MNIST test images;
smoke: 500).  Each svmlab solver is first fitted on 300 rows with the
cache dtype of the timed fit, so that the time excludes numba's one-time
compilation (cached on disk in normal use).  ``extra`` carries the kernel values computed
(``kernel_evaluations_``) where the solver counts them.
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from ._harness import Result, load_images, suite, timed

TOL = 1e-3
CACHE_MB = 200
C = 10.0
GAMMA = 0.02
#: relative difference of a pair's dual objective to SVC's above which a row
#: is flagged
OBJ_TOL = 1e-3


def pair_objectives(model, X, y_idx, k, gamma):
    """Per pair (a, b), a < b: ``W = sum |c| - 1/2 c' K c`` over the pair's
    support vectors, ``c`` the coefficients decoded from ``dual_coef_``
    (class a's in row b-1, class b's in row a: LIBSVM's layout)."""
    from sklearn.metrics.pairwise import rbf_kernel

    dc = model.dual_coef_
    dc = dc.toarray() if hasattr(dc, "toarray") else np.asarray(dc)
    sup = np.asarray(model.support_)
    cls = y_idx[sup]
    out = []
    for a in range(k):
        for b in range(a + 1, k):
            ia = np.flatnonzero(cls == a)
            ib = np.flatnonzero(cls == b)
            rows = np.concatenate([sup[ia], sup[ib]])
            c = np.concatenate([dc[b - 1, ia], dc[a, ib]])
            K = rbf_kernel(X[rows], X[rows], gamma=gamma)
            out.append(float(np.abs(c).sum() - 0.5 * c @ K @ c))
    return np.array(out)


def _models(progress):
    from .. import DecompositionClassifier, SMOClassifier

    kw = dict(C=C, gamma=GAMMA, tol=TOL, cache_size=CACHE_MB, progress=progress)
    return [("svmlab SMO wss2 (one-vs-one, shared store)",
             SMOClassifier(selection="wss2", random_state=0, **kw)),
            ("svmlab blocked decomposition (smo engine)",
             DecompositionClassifier(engine="smo", **kw))]


@suite("multiclass", "Fashion-MNIST 10 classes, one-vs-one: SMO and blocked decomposition "
                     "vs SVC (time ratio, accuracy, per-pair dual objectives)")
def run(ctx):
    from sklearn.svm import SVC

    n = 1500 if ctx.smoke else 10000
    n_test = 500 if ctx.smoke else 5000
    X, y = load_images("fashion-mnist", "train", n)
    Xt, yt = load_images("fashion-mnist", "test", n_test)
    classes = np.unique(y)
    k = len(classes)
    y_idx = np.searchsorted(classes, y)
    case = f"Fashion-MNIST[{n}] {k} classes rbf C={C:g} g={GAMMA:g}"
    svc, secs = timed(SVC(C=C, kernel="rbf", gamma=GAMMA, tol=TOL, cache_size=CACHE_MB).fit,
                      X, y)
    W_ref = pair_objectives(svc, X, y_idx, k, GAMMA)
    acc = float(np.mean(svc.predict(Xt) == yt))
    ctx.emit(Result(case=case, solver="LIBSVM (sklearn SVC)", time_s=secs,
                    n_iter=int(np.sum(svc.n_iter_)), objective=float(W_ref.sum()),
                    objective_kind="dual", n_sv=int(len(svc.support_)), accuracy=acc,
                    peer=True,
                    extra={"C": C, "gamma": GAMMA, "tol": TOL, "cache_MB": CACHE_MB, "n": n,
                           "n_test": n_test, "classes": k}))
    for label, model in _models(ctx.progress):
        # compile first (numba caches the code on disk; a user pays this once):
        # a small fit with the cache dtype the timed fit resolves to
        from sklearn.base import clone

        from .._base import resolve_cache_dtype

        dt = resolve_cache_dtype(model.cache_dtype, n, model.cache_size)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clone(model).set_params(cache_dtype=dt).fit(X[:300], y[:300])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                model, secs = timed(model.fit, X, y)
            except Exception as exc:  # report, keep going
                ctx.fail(f"{case}: {label} raised {type(exc).__name__}: {exc}")
                continue
        W = pair_objectives(model, X, y_idx, k, GAMMA)
        rel = (W - W_ref) / np.maximum(np.abs(W_ref), 1e-300)
        worst = float(np.max(np.abs(rel)))
        ok = worst <= OBJ_TOL
        if not ok:
            ctx.log(f"OBJECTIVE MISS: {case} | {label}: a pair's dual objective differs from "
                    f"LIBSVM's by {worst:.2e} (relative) > {OBJ_TOL:g}")
        pred_acc = float(np.mean(model.predict(Xt) == yt))
        extra = {"converged": bool(model.converged_), "objective_ok": ok,
                 "worst_pair_rel_diff": worst,
                 "predictions_equal_svc": float(np.mean(model.predict(Xt) == svc.predict(Xt))),
                 "warnings": [str(w.message)[:120] for w in caught]}
        if hasattr(model, "kernel_evaluations_"):
            extra["kernel_evaluations"] = int(model.kernel_evaluations_)
        ctx.emit(Result(case=case, solver=label, time_s=secs, n_iter=int(np.sum(model.n_iter_)),
                        objective=float(W.sum()), objective_kind="dual",
                        n_sv=int(len(model.support_)), accuracy=pred_acc, extra=extra))


# ------------------------------------------------------------------ n_jobs
#: timed fits per n_jobs value, interleaved (1, 2, 1, 2, ...): a load change
#: on the shared machine then hits both values alike
NJOBS_REPEATS = 2


def _load():
    """The 1-minute load average as printed ("n/a" where there is none)."""
    from ._harness import load_average

    la = load_average()
    return "n/a" if la is None else f"{la[0]:.2f}"


def _usage():
    """``[user s, system s, minor page faults]`` of this process so far (all
    threads; zeros where ``resource`` is missing): the system time of a fit
    is mostly the kernel zeroing fresh pages (docs/decisions/32j01)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not on Windows
        return np.zeros(3)
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return np.array([ru.ru_utime, ru.ru_stime, float(ru.ru_minflt)])


class _DriverProbe:
    """While active, records per thread the CPU seconds spent in the
    one-vs-one compiled driver (``svmlab.smo._ovo.ovo_pairs``, which
    ``FastPairs`` looks up on its module at every call) and the kernel
    values its pairs' stores computed: where an ``n_jobs=2`` fit loses
    (the workers' balance, the values both workers' stores compute;
    docs/decisions/33n01).  Empty for fits that do not take the driver
    (NuSVC's pairs).  ``take()`` returns ``(sorted per-thread CPU
    seconds, kernel values)`` since the last ``take()``."""

    def __init__(self):
        import threading

        self._lock = threading.Lock()
        self._rows = []

    def __enter__(self):
        import threading

        from ..smo import _ovo

        self._mod, self._orig = _ovo, _ovo.ovo_pairs
        orig, rows, lock = self._orig, self._rows, self._lock

        def probe(*args):
            c0 = time.thread_time()
            out = orig(*args)
            cpu = time.thread_time() - c0
            counts, p0 = args[20], int(args[4])
            values = int(counts[p0:min(int(out[0]) + 1, len(counts)), 2].sum())
            with lock:
                rows.append((threading.get_ident(), cpu, values))
            return out

        _ovo.ovo_pairs = probe
        return self

    def __exit__(self, *exc):
        self._mod.ovo_pairs = self._orig
        return False

    def take(self):
        with self._lock:
            rows, self._rows[:] = list(self._rows), []
        per = {}
        for tid, cpu, _ in rows:
            per[tid] = per.get(tid, 0.0) + cpu
        return sorted(per.values()), sum(v for _, _, v in rows)


def _njobs_cases(ctx):
    """``(case, X, y, params)``: digits (all 1797), MNIST test (5000; smoke
    1000) and Fashion-MNIST training images (10000; smoke 1500), 10 classes
    each, pixels scaled to [0, 1]."""
    from sklearn.datasets import load_digits

    Xd, yd = load_digits(return_X_y=True)
    yield f"digits[{len(yd)}] 10 classes rbf C=1 g=scale", Xd / 16.0, yd, {}
    n = 1000 if ctx.smoke else 5000
    Xm, ym = load_images("mnist", "test", n)
    yield f"MNIST test[{n}] 10 classes rbf C=10 g=0.02", Xm, ym, dict(C=10.0, gamma=0.02)
    n = 1500 if ctx.smoke else 10000
    Xf, yf = load_images("fashion-mnist", "train", n)
    yield f"Fashion-MNIST[{n}] 10 classes rbf C=10 g=0.02", Xf, yf, dict(C=10.0, gamma=0.02)


def compiled_share(fit):
    """The share of ``fit()``'s time spent inside svmlab's compiled
    functions called from Python (cProfile's own time of every numba
    dispatcher, which runs without the GIL), and the wall time under the
    profiler.  With a share ``f``, two free cores can run the fit at most
    ``1 / ((1 - f) + f / 2)`` times faster: the Python work around the
    compiled loops holds the GIL."""
    import cProfile
    import pstats
    import sys

    from numba.core.registry import CPUDispatcher

    prof = cProfile.Profile()
    t0 = time.perf_counter()
    prof.enable()
    fit()
    prof.disable()
    wall = time.perf_counter() - t0
    inside = 0.0
    for (path, _line, name), row in pstats.Stats(prof).stats.items():
        if "svmlab" not in path:
            continue
        mod = next((m for m in list(sys.modules.values())
                    if getattr(m, "__file__", None) == path), None)
        if isinstance(getattr(mod, name, None), CPUDispatcher):
            inside += row[2]  # own time
    return inside / wall if wall > 0 else float("nan"), wall


@suite("n-jobs", "One-vs-one pairs in parallel: svmlab.SVC and NuSVC with n_jobs=2 vs "
                 "n_jobs=1 (time ratio, models equal bit for bit), 10-class cases")
def run_n_jobs(ctx):
    """``svmlab.SVC`` (defaults but the case's C and gamma, ``tol=1e-3``,
    ``cache_size=200``) and, on the sets of at most 5000 rows,
    ``NuSVC(nu=0.1)``, with ``n_jobs=1`` (the peer)
    and ``n_jobs=2``, :data:`NJOBS_REPEATS` fits each, interleaved, the
    fastest kept; untimed fits on 300 rows first (numba's compilation, the
    float64 and the float32 rows), and one full-size fit of each ``n_jobs``
    (the process's first touch of that much memory).  ``extra``: the machine load (``/proc/loadavg``)
    before and after the case, whether the two models are equal bit for bit
    (``dual_coef_``, ``intercept_``, ``support_``), the median time of
    each, the process's CPU seconds per fit (all threads: on a machine
    whose scheduler shares the CPU per session, two threads get no more
    than one) with its user and system seconds and minor page faults
    (:func:`_usage`), and the share of an ``n_jobs=1`` fit spent in compiled code
    with the speedup two free cores could give it (:func:`compiled_share`)."""
    from ..svm import SVC, NuSVC

    for case, X, y, params in _njobs_cases(ctx):
        members = [("SVC", SVC, dict(params))]
        if len(y) <= 5000:  # NuSVC (the generalised dual's pairs) on the smaller sets
            members.append(("NuSVC nu=0.1", NuSVC,
                            {k: v for k, v in params.items() if k != "C"} | {"nu": 0.1}))
        for name, cls, kw in members:
            kw.update(tol=TOL, cache_size=CACHE_MB)
            label = f"{name} {case}"
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                # compile off the clock: float64 rows, and float32 rows (a
                # cache too small for the 300 rows), which the large sets take
                for mb in (CACHE_MB, 0.1):
                    cls(n_jobs=2, **(kw | {"cache_size": mb})).fit(X[:300], y[:300])
                if not ctx.smoke:
                    # and one full-size fit of each n_jobs: a process's first
                    # fit of this size faults its heap in (MNIST 5000: 3.2-3.6 K
                    # faults, 0.23-0.29 s of system time, against 1.2-1.5 K
                    # after; docs/decisions/33n01), which would land on
                    # whichever n_jobs is timed first
                    for j in (1, 2):
                        cls(n_jobs=j, **kw).fit(X, y)
                load0 = _load()
                times = {1: [], 2: []}
                cpu = {1: [], 2: []}
                usage = {1: [], 2: []}
                driver = {1: [], 2: []}
                models = {}
                try:
                    with _DriverProbe() as probe:
                        for _ in range(1 if ctx.smoke else NJOBS_REPEATS):
                            for j in (1, 2):
                                c0 = time.process_time()
                                u0 = _usage()
                                probe.take()
                                models[j], secs = timed(cls(n_jobs=j, **kw).fit, X, y)
                                cpu[j].append(time.process_time() - c0)
                                usage[j].append(_usage() - u0)
                                times[j].append(secs)
                                driver[j].append(probe.take())
                except Exception as exc:  # report, keep going
                    ctx.fail(f"{label}: raised {type(exc).__name__}: {exc}")
                    continue
            load1 = _load()
            share, _ = compiled_share(lambda: cls(n_jobs=1, **kw).fit(X, y))
            bound = 1.0 / ((1.0 - share) + share / 2.0)
            ctx.log(f"{label}: compiled share of an n_jobs=1 fit {share:.2f}: at most "
                    f"{bound:.2f}x on two free cores; load {load0} -> {load1}")
            a, b = models[1], models[2]
            same = bool(np.array_equal(a.dual_coef_, b.dual_coef_)
                        and np.array_equal(a.intercept_, b.intercept_)
                        and np.array_equal(a.support_, b.support_))
            if not same:
                ctx.log(f"MODEL MISMATCH: {label}: n_jobs=2 gave another model")
            ctx.log(f"{label}: per fit (median) " + "; ".join(
                f"n_jobs={j} wall {np.median(times[j]):.2f} s, user "
                f"{np.median([u[0] for u in usage[j]]):.2f} s, system "
                f"{np.median([u[1] for u in usage[j]]):.2f} s, "
                f"{int(np.median([u[2] for u in usage[j]]))} page faults" for j in (1, 2)))
            if driver[1][-1][0]:
                # the compiled driver's CPU per thread and the kernel values
                # its stores computed, in the last fit of each
                ctx.log(f"{label}: compiled driver, last fit: " + "; ".join(
                    f"n_jobs={j} CPU per thread "
                    + " / ".join(f"{c:.3f}" for c in driver[j][-1][0])
                    + f" s, {driver[j][-1][1]} kernel values" for j in (1, 2)))
            for j in (1, 2):
                m = models[j]
                ctx.emit(Result(case=label, solver=f"svmlab {name} n_jobs={j}",
                                time_s=float(min(times[j])),
                                n_iter=int(np.sum(m.n_iter_)), n_sv=int(len(m.support_)),
                                peer=(j == 1),
                                extra={"load_before": load0, "load_after": load1,
                                       "compiled_share": round(share, 3),
                                       "two_core_bound": round(bound, 2),
                                       "models_equal": same, "solver_": m.solver_,
                                       "median_s": float(np.median(times[j])),
                                       # CPU seconds of the process per fit
                                       # (all threads): what the fit got
                                       "cpu_s": round(float(np.median(cpu[j])), 3),
                                       # of which user and system (kernel)
                                       # seconds, and the page faults
                                       # (decision 32j01)
                                       "user_s": round(float(np.median(
                                           [u[0] for u in usage[j]])), 3),
                                       "sys_s": round(float(np.median(
                                           [u[1] for u in usage[j]])), 3),
                                       "minor_faults": int(np.median(
                                           [u[2] for u in usage[j]])),
                                       # the compiled driver's CPU seconds
                                       # per thread (sorted) and kernel
                                       # values, last fit (_DriverProbe)
                                       "driver_thread_cpu_s": [
                                           round(c, 4) for c in driver[j][-1][0]],
                                       "driver_kernel_values": int(driver[j][-1][1]),
                                       "converged": bool(m.converged_)}))
