"""The benchmark harness: suite registry, results, run context, timing.

A suite is a function ``f(ctx)`` registered with ``@suite(name, description)``.
It trains svmlab solvers and their peers (LIBSVM / LIBLINEAR through
scikit-learn) IN THE SAME RUN and reports each fit with ``ctx.emit(Result(...))``.
Within a case, the first Result with ``peer=True`` is the reference: the
harness prints every solver's time ratio against it and the relative
objective difference (objectives must be computed the same way for every
solver of a case, with :mod:`svmlab.objectives`).

``ctx.size`` is ``"smoke"`` (tiny, the whole suite under ~40 s) or ``"full"``.
"""

from __future__ import annotations

import math
import sys
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path

__all__ = ["suite", "SUITES", "Result", "Context", "timed", "timed_best", "SuiteInfo"]


@dataclass
class SuiteInfo:
    name: str
    description: str
    func: object


SUITES: dict[str, SuiteInfo] = {}


def suite(name, description=""):
    """Register ``func(ctx)`` as benchmark suite ``name``."""

    def deco(func):
        SUITES[name] = SuiteInfo(name, description or (func.__doc__ or "").strip(), func)
        func.suite_name = name
        return func

    return deco


@dataclass
class Result:
    """One fit of one solver on one case.

    ``objective_kind`` is ``"dual"`` (W(alpha), maximised) or ``"primal"``
    (minimised); ``peer=True`` marks the reference (LIBSVM/LIBLINEAR) of the case.
    """

    case: str
    solver: str
    time_s: float = math.nan
    n_iter: int | None = None
    objective: float | None = None
    objective_kind: str | None = None
    n_sv: int | None = None
    accuracy: float | None = None
    peer: bool = False
    extra: dict = field(default_factory=dict)
    # filled in by the harness
    suite: str = ""
    size: str = ""
    ratio: float | None = None
    objective_rel_diff: float | None = None

    def to_row(self):
        d = asdict(self)
        d["extra"] = dict(self.extra)
        return d


def timed(fn, *args, **kwargs):
    """Run ``fn(*args, **kwargs)``; return ``(value, wall-clock seconds)``."""
    t0 = time.perf_counter()
    value = fn(*args, **kwargs)
    return value, time.perf_counter() - t0


def timed_best(fn, *args, repeats=5, budget=1.0, **kwargs):
    """The fastest of up to ``repeats`` runs of ``fn(*args, **kwargs)``, as
    ``(value of the last run, best wall-clock seconds)``: runs stop early
    once their total time exceeds ``budget`` seconds (a 3 s fit runs once).

    For fits of milliseconds to a fraction of a second, whose single
    timings move by 30-50% on a shared 2-core machine (a page fault, the
    other core's work); the minimum is the usual estimate of the cost
    (``timeit``'s).  A suite that uses it times the peer the same way, so
    the ratios compare like with like."""
    value, best = timed(fn, *args, **kwargs)
    total = best
    for _ in range(int(repeats) - 1):
        if total >= budget:
            break
        value, secs = timed(fn, *args, **kwargs)
        total += secs
        best = min(best, secs)
    return value, best


class Context:
    """What a suite gets: size, progress flag, output directory, emit/log/plot."""

    def __init__(self, suite_name="", size="full", out_dir="bench-results", progress=True,
                 stream=None, plots=True):
        if size not in ("smoke", "full"):
            raise ValueError(f"size must be 'smoke' or 'full', got {size!r}")
        self.suite = suite_name
        self.size = size
        self.progress = bool(progress)  # pass as the solvers' progress= parameter
        self.out_dir = Path(out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.results: list[Result] = []
        self.logs: list[str] = []
        self.plots: list[str] = []
        self.failures: list[str] = []
        self.save_plots = plots
        self._stream = stream if stream is not None else sys.stdout

    @property
    def smoke(self):
        return self.size == "smoke"

    def _write(self, text):
        try:
            from tqdm import tqdm

            tqdm.write(text, file=self._stream)
        except Exception:  # pragma: no cover
            print(text, file=self._stream)

    def emit(self, result: Result):
        if not isinstance(result, Result):
            raise TypeError("ctx.emit expects a svmlab.bench.Result")
        result.suite = result.suite or self.suite
        result.size = self.size
        self.results.append(result)
        t = "" if result.time_s is None or math.isnan(result.time_s) else f"{result.time_s:.3f}s"
        obj = "" if result.objective is None else f" obj={result.objective:.6g}"
        self._write(f"  [{self.suite}] {result.case} | {result.solver}: {t}{obj}")
        return result

    def log(self, message):
        self.logs.append(str(message))
        self._write(f"  [{self.suite}] {message}")

    def fail(self, message):
        """Record a problem that makes this suite (and the run) fail, and go on."""
        self.failures.append(str(message))
        self._write(f"  [{self.suite}] FAILED: {message}")

    def plot(self, name, fig):
        """Save a matplotlib figure as ``<out>/plots/<suite>-<name>.png`` and close it."""
        import matplotlib.pyplot as plt

        path = None
        if self.save_plots:
            d = self.out_dir / "plots"
            d.mkdir(parents=True, exist_ok=True)
            safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in str(name))
            path = d / f"{self.suite}-{safe}.png"
            fig.savefig(path, dpi=110, bbox_inches="tight")
            self.plots.append(str(path))
        plt.close(fig)
        return path

    def tqdm(self, iterable=None, **kwargs):
        """A tqdm bar (disabled when progress is off)."""
        from tqdm.auto import tqdm

        kwargs.setdefault("leave", False)
        kwargs.setdefault("desc", self.suite)
        return tqdm(iterable, disable=not self.progress, **kwargs)


def fill_ratios(results):
    """Per case: ratio of time against the case's first peer and relative objective diff."""
    by_case = {}
    for r in results:
        by_case.setdefault((r.suite, r.case), []).append(r)
    for rs in by_case.values():
        peer = next((r for r in rs if r.peer), None)
        for r in rs:
            r.ratio = None
            r.objective_rel_diff = None
            if peer is None:
                continue
            if (peer.time_s and not math.isnan(peer.time_s) and r.time_s is not None
                    and not math.isnan(r.time_s)):
                r.ratio = r.time_s / peer.time_s
            if (r.objective is not None and peer.objective is not None
                    and r.objective_kind == peer.objective_kind):
                r.objective_rel_diff = (r.objective - peer.objective) / max(abs(peer.objective),
                                                                             1e-300)
    return results


def _fmt(v, spec):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        width = int(spec.split(".")[0].rstrip("dfegs") or 1)
        return "-".rjust(width)
    return format(v, spec)


def format_table(results):
    """Plain-text tables, one per (suite, case)."""
    fill_ratios(results)
    out = []
    cases = {}
    for r in results:
        cases.setdefault((r.suite, r.case), []).append(r)
    head = (f"  {'solver':<46} {'time s':>9} {'ratio':>7} {'iters':>8} {'objective':>14} "
            f"{'kind':>6} {'rel diff':>9} {'n_SV':>7} {'acc':>7}")
    for (s, case), rs in cases.items():
        out.append(f"[{s}] {case}")
        out.append(head)
        for r in rs:
            name = (r.solver + (" (peer)" if r.peer else ""))[:46]
            out.append(
                f"  {name:<46} {_fmt(r.time_s, '9.3f')} {_fmt(r.ratio, '7.3f')} "
                f"{_fmt(r.n_iter, '8d')} {_fmt(r.objective, '14.7g')} "
                f"{(r.objective_kind or '-'):>6} {_fmt(r.objective_rel_diff, '9.1e')} "
                f"{_fmt(r.n_sv, '7d')} {_fmt(r.accuracy, '7.4f')}")
        out.append("")
    return "\n".join(out)


def load_average():
    """The machine's load averages over 1, 5 and 15 minutes (floats), or
    None where the platform has none: the one reading of the load that the
    suites print beside their timings (on a shared machine a ratio means
    little without it)."""
    import os

    try:
        return tuple(float(v) for v in os.getloadavg())
    except (AttributeError, OSError):  # pragma: no cover - not Unix
        return None


def machine_info():
    """CPU count, platform, Python and package versions, UTC date."""
    import datetime
    import os
    import platform
    from importlib import metadata

    vers = {}
    for pkg in ("svmlab", "numpy", "scipy", "scikit-learn", "numba", "matplotlib", "pooch", "tqdm"):
        try:
            vers[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            vers[pkg] = None
    try:
        affinity = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover
        affinity = None
    return {
        "date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "cpu_count": os.cpu_count(),
        "cpu_affinity": affinity,
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "python": platform.python_version(),
        "versions": vers,
        "svmlab_data": os.environ.get("SVMLAB_DATA"),
    }


def run_suite(info: SuiteInfo, ctx: Context):
    """Run one suite; an exception is recorded as a failure, not propagated."""
    t0 = time.perf_counter()
    try:
        info.func(ctx)
    except Exception as exc:  # a broken suite must not hide the others' results
        ctx.fail(f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}")
    return time.perf_counter() - t0


# --------------------------------------------------------------------------
# helpers shared by the suites (objectives computed the same way for everyone)

def subsample(X, y, n, seed=0):
    """A deterministic random subset of ``n`` rows (all rows if n is None or >= len)."""
    import numpy as np

    if n is None or n >= X.shape[0]:
        return X, y
    idx = np.sort(np.random.default_rng(seed).choice(X.shape[0], n, replace=False))
    return X[idx], y[idx]


def load_images(name, split, n=None):
    """``(X, y)``: the first ``n`` images (all if None) of ``"mnist"`` or
    ``"fashion-mnist"`` (``split`` ``"train"`` or ``"test"``) through
    :func:`svmlab.datasets.load`, as a C-contiguous float64 array of pixels
    in [0, 1], and their labels.  The one loader of the suites: the loader
    already divides the bytes by 255, and a second division (pixels in
    [0, 1/255]) changes the problem a given ``gamma`` poses, so the scaling
    is done here once, only when a pixel exceeds 1."""
    import numpy as np

    from .. import datasets

    X, y = datasets.load(name, split)
    if n is not None:
        X, y = X[:n], y[:n]
    X = np.ascontiguousarray(X, dtype=np.float64)
    if X.size and X.max() > 1.0:
        X = X / 255.0
    return X, np.asarray(y)


def to_pm(y, positive=None):
    """Labels as float64 {-1,+1}; +1 = the larger class value (sklearn's classes_[1])."""
    import numpy as np

    y = np.asarray(y)
    pos = np.unique(y)[-1] if positive is None else positive
    return np.where(y == pos, 1.0, -1.0)


def svc_alpha(svc, n):
    """Full-length alpha (>= 0) of a fitted binary sklearn SVC."""
    import numpy as np

    dc = svc.dual_coef_
    dc = dc.toarray() if hasattr(dc, "toarray") else np.asarray(dc)
    alpha = np.zeros(n)
    alpha[svc.support_] = np.abs(dc.ravel())
    return alpha


def kernel_dual_objective(X, y_pm, alpha, kernel="rbf", gamma="scale", degree=3, coef0=0.0):
    """W(alpha) with :func:`svmlab.objectives.dual_objective` (same for every solver)."""
    from ..kernels._rows import Kernel
    from ..objectives import dual_objective

    return dual_objective(Kernel(X, kernel, gamma, degree, coef0), alpha, y_pm)


def linear_primal(X, y_pm, w, b, C, regularize_bias=False):
    """``1/2 ||w||^2 + C sum hinge`` (:func:`svmlab.objectives.linear_primal_objective`);
    with ``regularize_bias`` add ``b^2/2`` (LIBLINEAR / SVMperf model the bias as a
    constant feature of value 1, so this is the objective they minimise)."""
    import numpy as np

    from ..objectives import linear_primal_objective

    w = np.asarray(w, float).ravel()
    p = linear_primal_objective(X, y_pm, w, float(b), C)
    return p + (0.5 * float(b) ** 2 if regularize_bias else 0.0)


def accuracy(model, X, y):
    import numpy as np

    return float(np.mean(model.predict(X) == y))
