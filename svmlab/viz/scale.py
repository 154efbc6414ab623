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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "PUBLISHED_SCALING",
    "LoglogFit",
    "fit_loglog",
    "nested_subsets",
    "plot_scaling",
    "scaling_table",
    "format_table",
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


def nested_subsets(n_total, sizes, random_state=0):
    """Index arrays of nested random subsets (each a prefix of one permutation),
    as in the seeds' scaling studies."""
    sizes = [int(s) for s in sizes]
    if any(s <= 0 or s > n_total for s in sizes):
        raise ValueError(f"subset sizes must be in 1..{n_total}, got {sizes}")
    perm = np.random.default_rng(random_state).permutation(n_total)
    return [np.sort(perm[:s]) for s in sizes]


def scaling_table(sizes, times_by_solver, published_keys=None):
    """Rows ``(solver, fitted slope, r2, published range, source)``.

    ``times_by_solver``: ``{label: sequence of seconds, aligned with sizes}``;
    ``published_keys``: ``{label: key of PUBLISHED_SCALING}``.
    """
    published_keys = published_keys or {}
    rows = []
    for label, t in times_by_solver.items():
        fit = fit_loglog(sizes, t)
        key = published_keys.get(label)
        rng, src = PUBLISHED_SCALING.get(key, (None, "")) if key else (None, "")
        if rng is None:
            pub = "n/a"
        elif rng[0] == rng[1]:
            pub = f"{rng[0]:.1f}"
        else:
            pub = f"{rng[0]:.1f}-{rng[1]:.1f}"
        rows.append((label, fit.slope, fit.r2, pub, src))
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
    """Log-log plot of each solver's times with its fitted line; the legend
    shows the fitted slope and the published range.  Returns ``{label: fit}``
    and the line artists ``{label: (points, fitted_line)}`` for inspection."""
    published_keys = published_keys or {}
    sizes = np.asarray(sizes, float)
    fits, artists = {}, {}
    for label, t in times_by_solver.items():
        fit = fit_loglog(sizes, t)
        fits[label] = fit
        key = published_keys.get(label)
        pub = ""
        if key and PUBLISHED_SCALING.get(key, (None,))[0] is not None:
            lo, hi = PUBLISHED_SCALING[key][0]
            pub = f", paper {lo:.0f}" if lo == hi else f", paper {lo:.0f}-{hi:.0f}"
        (pts,) = ax.loglog(sizes, t, "o", label=f"{label}: slope {fit.slope:.2f}{pub}")
        (ln,) = ax.loglog(sizes, fit(sizes), "-", color=pts.get_color(), alpha=0.6)
        artists[label] = (pts, ln)
    ax.set_xlabel("n (training examples)")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    return fits, artists
