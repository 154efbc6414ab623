"""Scaling studies for ``notebooks/07_scale_up.ipynb``: log-log fits, the seeds'
published scaling claims, and the tables/plots that put them side by side.

Everything here works on plain arrays (sizes, seconds, counts) so that it can
be unit-tested on synthetic power laws; the notebook feeds it measured
numbers.

Published scaling claims (quoted only where we are sure of the source):

* Platt (1998), "Fast Training of Support Vector Machines using Sequential
  Minimal Optimization", abstract: SMO "scales somewhere between linear and
  quadratic in the training set size for various test problems", while PCG
  chunking "scales somewhere between linear and cubic".  Per-dataset
  exponents are in the paper's scaling table; we state the range only.
* Joachims (2006), "Training Linear SVMs in Linear Time", Theorem/abstract:
  the cutting-plane algorithm needs O(sn) time per iteration and a number
  of iterations independent of n, i.e. linear in n (Figure 1 shows the
  empirical slopes); ordinal regression costs O(sn log n).
* Perez-Cruz et al. (2000), "Fast Training of Support Vector Classifiers"
  (IRWLS-SVC), Table 3 reports run times against SMO/SVMlight-style solvers
  rather than exponents; no exponent is quoted here.

Reading a slope honestly (:func:`read_slope`): every solver studied here
does at least one pass over the n rows per iteration, so its time cannot
grow more slowly than about linearly in n once n is large.  A fitted slope
below 0.5, or a fit that explains little of the variation (r^2 < 0.9), means
that fixed costs (imports, allocation, the first kernel rows, timer noise)
and not the algorithm dominate at these sizes; the table and the plot then
say so and claim no slope.  Times are medians over repeated fits
(:func:`scaling_times`, ``repeats``), since a single timing on a shared
machine can be off by a factor of two.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "PUBLISHED_SCALING",
    "REFERENCE_SECONDS",
    "LoglogFit",
    "SlopeReading",
    "fit_loglog",
    "read_slope",
    "below_published",
    "expected_seconds",
    "long_cell_note",
    "nested_subsets",
    "plot_scaling",
    "scaling_table",
    "format_table",
    "TIME_TO_TARGET_STYLES",
    "plot_time_to_target",
    "time_to_target_figure",
    "equal_objective_rows",
    "available_cases",
    "equal_objective_summary",
]

#: solver key -> (low, high) exponent range, source text.  ``None`` means the
#: source gives no exponent.
PUBLISHED_SCALING = {
    "smo": ((1.0, 2.0), "Platt 1998, abstract: between linear and quadratic in n"),
    "chunking": ((1.0, 3.0), "Platt 1998, abstract: PCG chunking between linear and cubic"),
    "cutting_plane": ((1.0, 1.0), "Joachims 2006, abstract/Theorem: O(sn), linear in n"),
    "ordinal": ((1.0, 1.0), "Joachims 2006: O(sn log n) per iteration, ~linear"),
    "irwls": (None, "Perez-Cruz et al. 2000, Table 3 gives times, not exponents"),
}


#: fits on a 2-core machine, used to tell a reader how long a cell will take:
#: key -> (rows, seconds, exponent used to scale to other row counts); the
#: linear solvers scale linearly (Joachims' linear time).  Estimates for a
#: printed note, nothing more: a busy machine can take twice as long.  Where
#: the numbers come from: docs/decisions/23c06-cell-time-estimates.md.
REFERENCE_SECONDS = {
    "LIBSVM a9a rbf": (8000, 2.55, 1.9),
    "SMO a9a rbf": (32561, 6.86, 1.9),
    "SMO a9a linear": (32561, 0.30, 1.0),
    "IRWLS a9a rbf": (2000, 0.38, 1.5),
    "LIBSVM gauss-m rbf": (4000, 0.41, 2.0),
    "SMO gauss-m rbf": (4000, 0.31, 2.0),
    "IRWLS gauss-m rbf": (4000, 2.0, 1.5),
    "LIBLINEAR a9a": (32561, 0.16, 1.0),
    "cutting plane a9a": (32561, 0.34, 1.0),
    "LIBLINEAR w8a": (49749, 0.97, 1.0),
    "cutting plane w8a": (49749, 0.79, 1.0),
    "LIBLINEAR ijcnn1": (49990, 0.19, 1.0),
    "cutting plane ijcnn1": (49990, 0.53, 1.0),
    # one fit of the equal-objective grids (svmlab.bench.linear, no bias),
    # averaged over LIBLINEAR, Algorithm 1 and OCAS and their tolerances
    "grid fit a9a": (8000, 0.017, 1.0),
    "grid fit w8a": (8000, 0.053, 1.0),
    "grid fit ijcnn1": (8000, 0.025, 1.0),
    "grid fit fashion-mnist": (10000, 0.5, 1.0),
    "grid fit mnist": (10000, 0.12, 1.0),
}


def expected_seconds(key, n):
    """Rough wall time of the fit ``key`` (:data:`REFERENCE_SECONDS`) on ``n``
    rows: the reference time scaled by ``(n / rows) ** exponent``."""
    if key not in REFERENCE_SECONDS:
        raise KeyError(f"no reference time for {key!r}; known: {sorted(REFERENCE_SECONDS)}")
    if not n > 0:
        raise ValueError(f"n must be positive, got {n}")
    rows, secs, p = REFERENCE_SECONDS[key]
    return secs * (n / rows) ** p


def _format_seconds(t):
    if t < 1.0:
        return "under a second"
    if t < 90:
        return f"about {t:.0f} s"
    return f"about {t / 60:.0f} min"


def long_cell_note(what, seconds):
    """The line a notebook prints before a long cell, e.g. ``"fitting LIBSVM on
    32,561 rows: about 37 s on a 2-core machine"``.  ``seconds`` is an
    estimate (see :func:`expected_seconds`); it is rounded, so the line is the
    same on every run."""
    return f"{what}: {_format_seconds(float(seconds))} on a 2-core machine"


@dataclass(frozen=True)
class LoglogFit:
    """Least-squares fit ``log t = slope * log n + log coef``."""

    slope: float
    coef: float
    r2: float

    def __call__(self, n):
        return self.coef * np.asarray(n, float) ** self.slope


def fit_loglog(n, t):
    """Fit ``t ~ coef * n**slope`` by least squares on the logarithms.

    Non-positive or non-finite times are dropped (a run that was too fast to
    time, or failed).  At least two distinct sizes are required.
    """
    n = np.asarray(n, float).ravel()
    t = np.asarray(t, float).ravel()
    if n.shape != t.shape:
        raise ValueError(f"n and t must have the same length, got {n.shape} and {t.shape}")
    ok = np.isfinite(n) & np.isfinite(t) & (n > 0) & (t > 0)
    n, t = n[ok], t[ok]
    if len(np.unique(n)) < 2:
        raise ValueError("fit_loglog needs at least two distinct sizes with positive times")
    ln, lt = np.log(n), np.log(t)
    A = np.column_stack([ln, np.ones_like(ln)])
    (slope, c), *_ = np.linalg.lstsq(A, lt, rcond=None)
    resid = lt - A @ np.array([slope, c])
    ss = np.sum((lt - lt.mean()) ** 2)
    r2 = 1.0 - np.sum(resid ** 2) / ss if ss > 0 else 1.0
    return LoglogFit(float(slope), float(np.exp(c)), float(r2))


@dataclass(frozen=True)
class SlopeReading:
    """What a log-log fit may honestly be said to show (see :func:`read_slope`).

    ``claimed`` is False when fixed costs or noise dominate; ``text`` is the
    slope (``"1.38"``) or the reason none is claimed."""

    fit: LoglogFit
    claimed: bool
    text: str
    growth: float  # t(largest n) / t(smallest n), from the medians


def read_slope(sizes, times, r2_min=0.9, min_slope=0.5):
    """Fit ``times ~ c n^p`` and decide whether ``p`` may be reported.

    No slope is claimed when the fit explains little (``r2 < r2_min``) or when
    the slope is below ``min_slope``: all solvers here do at least O(n) work
    per iteration, so such a slope says that fixed costs, not the algorithm,
    set the time at these sizes.
    """
    sizes = np.asarray(sizes, float)
    times = np.asarray(times, float)
    fit = fit_loglog(sizes, times)
    growth = float(times[np.argmax(sizes)] / times[np.argmin(sizes)])
    n_growth = float(sizes.max() / sizes.min())
    if fit.r2 < r2_min:
        return SlopeReading(fit, False, f"none: r2 = {fit.r2:.2f}, noise or fixed costs dominate",
                            growth)
    if fit.slope < min_slope:
        return SlopeReading(fit, False, f"none: fixed costs dominate (time x{growth:.1f} "
                                        f"for n x{n_growth:.0f})", growth)
    return SlopeReading(fit, True, f"{fit.slope:.2f}", growth)


def below_published(reading, key, margin=0.2):
    """True when a claimed slope lies more than ``margin`` below the lower end
    of the published range of ``key`` (:data:`PUBLISHED_SCALING`): the fixed
    costs are then still visible at these sizes, and the text says so."""
    rng = PUBLISHED_SCALING.get(key, (None, ""))[0] if key else None
    return bool(reading.claimed and rng is not None and reading.fit.slope < rng[0] - margin)


def nested_subsets(n_total, sizes, random_state=0):
    """Index arrays of nested random subsets (each a prefix of one permutation),
    as in the seeds' scaling studies."""
    sizes = [int(s) for s in sizes]
    if any(s <= 0 or s > n_total for s in sizes):
        raise ValueError(f"subset sizes must be in 1..{n_total}, got {sizes}")
    perm = np.random.default_rng(random_state).permutation(n_total)
    return [np.sort(perm[:s]) for s in sizes]


def scaling_table(sizes, times_by_solver, published_keys=None):
    """Rows ``(solver, fitted slope, r2, published range, source)``, all text.

    ``times_by_solver``: ``{label: sequence of seconds, aligned with sizes}``;
    ``published_keys``: ``{label: key of PUBLISHED_SCALING}``.  The fitted
    slope is the text of :func:`read_slope`: the slope (``"1.38"``) when it
    may be claimed, otherwise the reason none is (fixed costs or noise).
    """
    published_keys = published_keys or {}
    rows = []
    for label, t in times_by_solver.items():
        reading = read_slope(sizes, t)
        fit = reading.fit
        key = published_keys.get(label)
        rng, src = PUBLISHED_SCALING.get(key, (None, "")) if key else (None, "")
        if rng is None:
            pub = "n/a"
        elif rng[0] == rng[1]:
            pub = f"{rng[0]:.1f}"
        else:
            pub = f"{rng[0]:.1f}-{rng[1]:.1f}"
        text = reading.text
        if below_published(reading, key):
            text += " (below the paper: fixed costs still visible)"
        rows.append((label, text, f"{fit.r2:.2f}", pub, src))
    return rows


def format_table(rows, header, floatfmt=".3g"):
    """Plain-text table (monospace), deterministic formatting."""
    cells = [[(format(c, floatfmt) if isinstance(c, float) else str(c)) for c in r]
             for r in rows]
    widths = [max(len(str(h)), *(len(r[i]) for r in cells)) for i, h in enumerate(header)]
    line = "  ".join(str(h).ljust(w) for h, w in zip(header, widths))
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in cells]
    return "\n".join(out)


def plot_scaling(ax, sizes, times_by_solver, published_keys=None, ylabel="time (s)"):
    """Log-log plot of each solver's (median) times.  Where :func:`read_slope`
    claims a slope, the fitted line is drawn and the legend shows the slope,
    r^2 and the published range; otherwise the points are joined by a thin
    line and the legend says why no slope is claimed (no "paper" next to a
    meaningless number).  Returns ``{label: fit}`` and the line artists
    ``{label: (points, fitted_line or None)}`` for inspection."""
    published_keys = published_keys or {}
    sizes = np.asarray(sizes, float)
    fits, artists = {}, {}
    for label, t in times_by_solver.items():
        reading = read_slope(sizes, t)
        fit = reading.fit
        fits[label] = fit
        key = published_keys.get(label)
        pub = ""
        if key and PUBLISHED_SCALING.get(key, (None,))[0] is not None:
            lo, hi = PUBLISHED_SCALING[key][0]
            pub = f", paper {lo:.0f}" if lo == hi else f", paper {lo:.0f}-{hi:.0f}"
        if reading.claimed:
            text = f"{label}:\nslope {fit.slope:.2f} ($r^2$={fit.r2:.2f}){pub}"
            if below_published(reading, key):
                text += "\n(below the paper: fixed costs still visible)"
            (pts,) = ax.loglog(sizes, t, "o", label=text)
            (ln,) = ax.loglog(sizes, fit(sizes), "-", color=pts.get_color(), alpha=0.6)
        else:
            why = reading.text[len("none: "):].replace("r2 =", "$r^2$ =")
            text = f"{label}:\nno slope claimed, {why}"
            (pts,) = ax.loglog(sizes, t, "o:", lw=0.8, label=text)
            ln = None
        artists[label] = (pts, ln)
    from matplotlib.ticker import NullFormatter

    ax.xaxis.set_minor_formatter(NullFormatter())  # 2x10^3, 3x10^3 ... would overlap
    ax.set_xlabel("n (training examples)")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=9, loc="upper left")
    ax.grid(True, which="both", alpha=0.3)
    return fits, artists

# --------------------------------------------------------------------------
# solver comparisons for 07_scale_up (objectives computed the same way for all)
# --------------------------------------------------------------------------
def time_fit(make, X, y):
    """``(fitted model, seconds)`` of ``make().fit(X, y)`` (one run, wall time)."""
    import time as _time

    m = make()
    t0 = _time.perf_counter()
    m.fit(X, y)
    return m, _time.perf_counter() - t0


def _pm(y):
    y = np.asarray(y)
    return np.where(y == np.unique(y)[-1], 1.0, -1.0)


def model_alpha(model, n):
    """Full-length dual multipliers of a fitted kernel model: svmlab's
    ``alpha_``, or scikit-learn SVC's ``|dual_coef_|`` scattered to ``support_``."""
    if hasattr(model, "alpha_"):
        return np.asarray(model.alpha_, float)
    dc = model.dual_coef_
    dc = dc.toarray() if hasattr(dc, "toarray") else np.asarray(dc)  # sparse fits give CSR
    a = np.zeros(n)
    a[model.support_] = np.abs(dc[0])
    return a


def linear_primal(X, y_pm, w, b, C_liblinear):
    """``1/2 (|w|^2 + b^2) + C sum_i hinge_i`` -- LIBLINEAR's objective with
    the bias as a regularised constant feature (what both LinearSVC and the
    cutting-plane solver minimise)."""
    m = np.asarray(X @ np.asarray(w, float)).ravel() + b
    return float(0.5 * (np.dot(w, w) + b * b) + C_liblinear * np.maximum(0.0, 1.0 - y_pm * m).sum())


def kernel_comparison(solvers, X, y, Xt, yt, C, gamma, kernel="rbf"):
    """Fit every ``{name: factory}`` on ``(X, y)``; rows with time, dual
    objective W(alpha) (:func:`svmlab.objectives.dual_objective`, the same
    for all), number of SVs and test accuracy.  The first solver is the peer
    the ratios refer to."""
    from ..kernels._rows import Kernel
    from ..objectives import dual_objective

    y_pm = _pm(y)
    K = Kernel(X, kernel, gamma)
    rows = []
    for name, make in solvers.items():
        m, secs = time_fit(make, X, y)
        a = model_alpha(m, X.shape[0])
        rows.append({"solver": name, "seconds": secs, "objective": dual_objective(K, a, y_pm),
                     "n_sv": int(np.count_nonzero(a > 0)),
                     "accuracy": float(np.mean(m.predict(Xt) == yt)), "model": m})
    for r in rows:
        r["ratio"] = r["seconds"] / rows[0]["seconds"]
    return rows


def scaling_times(solvers, X, y, sizes, random_state=0, repeats=1, return_all=False):
    """Seconds of each ``{name: factory}`` on nested random subsets of
    ``sizes`` rows: ``{name: array of seconds}`` (for :func:`plot_scaling`).

    Each fit is timed ``repeats`` times (a fresh estimator each time, the
    same rows) and the **median** is returned, which is robust to the
    occasional slow run on a shared machine.  With ``return_all=True`` also
    returns ``{name: array of shape (len(sizes), repeats)}``.
    """
    repeats = int(repeats)
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    subsets = nested_subsets(X.shape[0], sizes, random_state=random_state)
    out = {name: [] for name in solvers}
    y = np.asarray(y)
    for idx in subsets:
        Xs, ys = X[idx], y[idx]
        for name, make in solvers.items():
            out[name].append([time_fit(make, Xs, ys)[1] for _ in range(repeats)])
    every = {k: np.array(v) for k, v in out.items()}
    med = {k: np.median(v, axis=1) for k, v in every.items()}
    return (med, every) if return_all else med


# --------------------------------------------------------------------------
# linear SVMs at equal primal objective (svmlab.bench.linear)
# --------------------------------------------------------------------------
#: marker and line style of each solver in the time-to-target plots
TIME_TO_TARGET_STYLES = {"LIBLINEAR": "s--", "Algorithm 1": "o-", "OCAS": "^-"}


def plot_time_to_target(ax, points_by_solver, targets=(1e-3, 1e-4), floor=1e-12):
    """Time-to-target curves: for each solver, its grid points ``(tol,
    seconds, relative gap, iterations)`` (what
    :func:`svmlab.bench.linear.measure_case` returns) as relative primal gap
    ``(P - P*) / P*`` against seconds, log-log, joined from the loosest
    tolerance to the tightest; grey lines at the targets.  A gap below
    ``floor`` (the reference itself, or rounding) is drawn at ``floor``.  The
    time a solver needs to reach a target is the leftmost of its points below
    that line."""
    for solver, pts in points_by_solver.items():
        if not pts:
            continue
        pts = sorted(pts, key=lambda p: -p[0])
        ax.loglog([p[1] for p in pts], [max(p[2], floor) for p in pts],
                  TIME_TO_TARGET_STYLES.get(solver, "x-"), label=solver)
    for j, target in enumerate(targets):
        ax.axhline(target, color="0.6", lw=0.9, ls=("-", "-.", ":")[j % 3],
                   label=f"target {target:g}")
    from matplotlib.ticker import NullFormatter

    ax.xaxis.set_minor_formatter(NullFormatter())   # 2x10^-3, 3x10^-3, ... would overlap
    ax.set_xlabel("time (s)")
    ax.set_ylabel("relative primal gap $(P - P^*)/P^*$")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=9)


def equal_objective_rows(points_by_solver, targets=(1e-3, 1e-4), reference="LIBLINEAR"):
    """Rows ``(solver, target, seconds, tolerance, ratio)`` of the
    equal-objective comparison: for each target and solver, the fastest grid
    point whose relative gap is within the target
    (:func:`svmlab.bench.linear.time_to_target`) and its time divided by the
    reference solver's at the same target.  ``seconds``, ``tolerance`` and
    ``ratio`` are ``None`` where the solver's grid never reached the target
    (the ratio also where the reference did not)."""
    from ..bench.linear import time_to_target

    if reference not in points_by_solver:
        raise ValueError(f"no points of the reference solver {reference!r}")
    rows = []
    for target in targets:
        ref = time_to_target(points_by_solver[reference], target)
        for solver, pts in points_by_solver.items():
            best = time_to_target(pts, target)
            if best is None:
                rows.append((solver, target, None, None, None))
                continue
            ratio = best[1] / ref[1] if ref is not None else None
            rows.append((solver, target, best[1], best[0], ratio))
    return rows


def time_to_target_figure(points_by_case, titles=None, ncols=2, targets=(1e-3, 1e-4)):
    """One :func:`plot_time_to_target` panel per case (``{case: points by
    solver}``), at most ``ncols`` per row; ``titles`` maps a case to its panel
    title (default: the case name).  Returns the figure."""
    import matplotlib.pyplot as plt

    if not points_by_case:
        raise ValueError("no cases to plot")
    k = len(points_by_case)
    ncols = min(ncols, k)
    nrows = -(-k // ncols)
    fig, axs = plt.subplots(nrows, ncols, figsize=(4.25 * ncols, 3.6 * nrows), squeeze=False)
    for ax, (case, pts) in zip(axs.ravel(), points_by_case.items()):
        plot_time_to_target(ax, pts, targets=targets)
        ax.set_title((titles or {}).get(case, case), fontsize=10)
    for ax in axs.ravel()[k:]:
        ax.set_visible(False)
    fig.tight_layout()
    return fig


# --------------------------------------------------------------------------
# which benchmark files are here, and what a run found (for the notebook text)
# --------------------------------------------------------------------------
def available_cases(cases, download=False):
    """Split benchmark ``cases`` (tuples starting with ``(name, split)``, as
    :data:`svmlab.bench.linear.FULL_CASES`) into ``(present, missing)``:
    those whose files :func:`svmlab.datasets.locate` finds (``SVMLAB_DATA``,
    the user cache, the embedded a9a; a download only when ``download``),
    and ``[(case, why)]`` for the others.  No network is touched unless
    ``download=True``."""
    from .. import datasets

    present, missing = [], []
    for case in cases:
        name, split = case[0], case[1]
        try:
            datasets.locate(name, split, download=download)
        except datasets.DatasetNotFoundError as exc:
            missing.append((case, str(exc).splitlines()[0]))
        else:
            present.append(case)
    return present, missing


def equal_objective_summary(points_by_case, targets=(1e-3, 1e-4)):
    """Sentences on what an equal-objective run found (the notebook prints
    them, so the text is always the run's): per target, OCAS's time against
    Algorithm 1's and LIBLINEAR's, and the cases where a solver did not
    reach the target; and how many times fewer iterations OCAS took than
    Algorithm 1 at the same epsilon.  ``points_by_case`` maps a case to the
    points of :func:`svmlab.bench.linear.measure_case`."""
    lines = []
    for target in targets:
        vs_alg1, vs_lib, unreached = [], [], []
        for case, pts in points_by_case.items():
            rows = {r[0]: r for r in equal_objective_rows(pts, targets=(target,))}
            for solver, r in rows.items():
                if r[2] is None:
                    unreached.append(f"{solver} on {case}")
            o, a = rows.get("OCAS"), rows.get("Algorithm 1")
            if o and a and o[2] is not None and a[2] is not None:
                vs_alg1.append(a[2] / o[2])
            if o and o[4] is not None:
                vs_lib.append(o[4])
        parts = [f"within {target:g} of the optimum:"]
        if vs_alg1:
            parts.append(f"OCAS took {min(vs_alg1):.1f} to {max(vs_alg1):.1f} times less time "
                         f"than Algorithm 1 (where both reached it)")
        if vs_lib:
            parts.append(f"{min(vs_lib):.2f} to {max(vs_lib):.2f} times LIBLINEAR's time")
        parts.append("not reached on its grid: " + (", ".join(unreached) if unreached
                                                    else "none"))
        lines.append(parts[0] + " " + "; ".join(parts[1:]) + ".")
    ratios = []
    for pts in points_by_case.values():
        a = {p[0]: p[3] for p in pts.get("Algorithm 1", [])}
        o = {p[0]: p[3] for p in pts.get("OCAS", [])}
        ratios += [a[e] / o[e] for e in set(a) & set(o) if o[e] > 0]
    if ratios:
        lines.append(f"At the same epsilon OCAS took {min(ratios):.1f} to {max(ratios):.1f} "
                     f"times fewer iterations than Algorithm 1.")
    return "\n".join(lines)
