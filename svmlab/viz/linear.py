"""Linear SVMs in the lab: dual coordinate descent one coordinate at a time,
beside the cutting plane on the same data (notebook 09).

The problem (LIBLINEAR's, with the bias as a feature of value 1)::

    min_{w, b}  1/2 (|w|^2 + b^2) + C sum_i max(0, 1 - y_i (w.x_i + b))

Its dual is ``min_a 1/2 a'Qa - e'a`` over the box ``0 <= a_i <= C``, with
``Q_ij = y_i y_j (x_i.x_j + 1)``, and ``(w, b) = sum_i a_i y_i (x_i, 1)``.
Dual coordinate descent (Hsieh et al. 2008) visits one ``a_i`` at a time,
takes the Newton step along that coordinate and clips it to the box; the
primal ``(w, b)`` moves with it by ``(a_i^new - a_i^old) y_i (x_i, 1)``.

The steps shown here are those of the readable twin
:mod:`svmlab.reference.dcd` (:class:`~svmlab.reference.dcd.DualCD`), which
takes the same steps as the compiled solver behind
``svmlab.LinearSVC(solver="dcd")``.  The cutting plane is
:class:`svmlab.cutting_plane.CuttingPlaneClassifier` (Algorithm 1) on the
same problem (its C is ``n`` times this C: it averages the losses).

* :func:`dcd_trace`: the records of one run, with the primal objective after
  every step and the cutting plane's iterations on the same data;
* :class:`DCDExplorer`: the figure (the data with both separating lines,
  the multipliers in their box, the primal objective of both solvers
  against passes over the data) and its ``update(k)`` for step ``k``;
* :func:`live_dcd`: the explorer with live controls (C, dataset, n, seed),
  step buttons and Play (:class:`svmlab.viz.live.LiveExplorer`).

Passes over the data are the common clock of the comparison: a coordinate
step reads one example (``1/n`` of a pass); an iteration of the cutting
plane computes every margin (one pass).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ._protocol import Explorer

from ._common import new_figure

__all__ = ["DCDTrace", "dcd_trace", "DCDExplorer", "live_dcd", "primal", "clipped_steps"]


def primal(X, y, w, b, C):
    """``1/2 (|w|^2 + b^2) + C sum_i max(0, 1 - y_i (w.x_i + b))``."""
    m = y * (X @ w + b)
    return 0.5 * (float(w @ w) + b * b) + C * float(np.maximum(0.0, 1.0 - m).sum())


@dataclass
class DCDTrace:
    """One dual coordinate descent run and the cutting plane on the same data.

    ``records``: the twin's :class:`~svmlab.linear.DCDRecord` per step;
    ``alpha``: ``(steps + 1, n)`` the multipliers before step 1 and after each
    step; ``primal``: ``(steps + 1,)`` the primal objective there; ``cp_w``,
    ``cp_b``, ``cp_primal``: the cutting plane's model and objective after
    ``0, 1, 2, ...`` iterations (its records: the ``w`` each iteration cuts at); ``optimum``: the primal optimum (the compiled
    solver at ``tol = 1e-10``); ``Qii``: the diagonal ``x_i.x_i + 1``."""

    X: np.ndarray
    y: np.ndarray
    C: float
    records: list
    alpha: np.ndarray
    primal: np.ndarray
    Qii: np.ndarray
    cp_w: np.ndarray
    cp_b: np.ndarray
    cp_primal: np.ndarray
    optimum: float
    converged: bool
    fit_seconds: float


def dcd_trace(X, y, C=1.0, *, tol=1e-3, random_state=0, max_steps=600, cp_epsilon=1e-5):
    """Run the twin's dual coordinate descent (hinge loss, bias feature 1)
    for at most ``max_steps`` coordinate steps, and the cutting plane
    (Algorithm 1, ``epsilon = cp_epsilon``) on the same data: a
    :class:`DCDTrace`.  The twin's generator starts where
    ``LinearSVC(random_state=random_state)``'s does (scikit-learn's
    convention: a seed drawn from ``check_random_state(random_state)``), so
    it takes that estimator's steps."""
    from sklearn.utils import check_random_state

    from ..cutting_plane import CuttingPlaneClassifier
    from ..reference.dcd import DualCD

    X = np.asarray(X, dtype=np.float64)
    y = np.where(np.asarray(y) > 0, 1.0, -1.0)
    if X.ndim != 2 or len(X) != len(y) or len(np.unique(y)) < 2:
        raise ValueError("X must be (n, d) with labels of both classes, one per row")
    if not C > 0:
        raise ValueError(f"C must be positive, got {C!r}")
    seed = int(check_random_state(random_state).randint(np.iinfo("i").max))
    t0 = time.perf_counter()
    run = DualCD(X, y, C=C, loss="hinge", tol=tol, max_iter=10_000, seed=seed)
    records, alphas = [], [run.alpha.copy()]
    while len(records) < max_steps:
        rec = run.step()
        if rec is None:
            break
        records.append(rec)
        alphas.append(run.alpha.copy())
    objective = [primal(X, y, np.zeros(X.shape[1]), 0.0, C)]
    objective += [primal(X, y, r.coef, r.intercept, C) for r in records]
    cp_w, cp_b, cp_p = [], [], []
    est = CuttingPlaneClassifier(C=C * len(y), epsilon=cp_epsilon, progress=False, max_iter=200)
    for rec in est.iter_fit(X, y):
        w = np.asarray(rec.w, dtype=np.float64)
        cp_w.append(w)
        cp_b.append(float(rec.b))
        cp_p.append(primal(X, y, w, float(rec.b), C))
    # the model after the last iteration (the records hold the w each
    # iteration cut at, so the last re-solve is not among them)
    cp_w.append(np.asarray(est.coef_[0], dtype=np.float64))
    cp_b.append(float(est.intercept_[0]))
    cp_p.append(primal(X, y, cp_w[-1], cp_b[-1], C))
    fit_s = time.perf_counter() - t0
    # the optimum: the compiled solver of the same steps, run tight
    from ..linear import LinearSVC

    best = LinearSVC(C=C, loss="hinge", solver="dcd", tol=1e-10, max_iter=100_000,
                     random_state=0).fit(X, y)
    optimum = min(primal(X, y, best.coef_[0], float(best.intercept_[0]), C), min(objective),
                  min(cp_p, default=np.inf))
    return DCDTrace(X, y, float(C), records, np.array(alphas), np.array(objective), run.Qii.copy(),
                    np.array(cp_w).reshape(-1, X.shape[1]), np.array(cp_b), np.array(cp_p),
                    float(optimum), bool(run.converged), fit_s)


def clipped_steps(trace):
    """The steps whose Newton step ``a_i - G / Q_ii`` left the box and was
    clipped to ``0`` or ``C`` (1-based step numbers)."""
    out = []
    for r in trace.records:
        if r.shrunk or abs(r.PG) <= 1e-12:
            continue
        raw = r.alpha_old - r.G / trace.Qii[r.i]
        if raw < 0.0 or raw > trace.C:
            out.append(r.iteration)
    return out


def _line(ax, w, b, lim, **kw):
    """The line ``w.x + b = 0`` inside the square view ``lim``."""
    (line,) = ax.plot([], [], **kw)
    _set_line(line, w, b, lim)
    return line


def _set_line(line, w, b, lim, offset=0.0):
    lo, hi = lim
    xs = np.array([lo, hi])
    if abs(w[1]) > 1e-12 and abs(w[1]) >= abs(w[0]) * 1e-3:
        line.set_data(xs, (offset - b - w[0] * xs) / w[1])
    elif abs(w[0]) > 1e-12:
        line.set_data([(offset - b) / w[0]] * 2, xs)
    else:
        line.set_data([], [])


class DCDExplorer(Explorer):
    """Figure and frames of a :class:`DCDTrace`: frame ``k`` shows the state
    after step ``k + 1``.

    Left, the data (``+1`` orange circles, ``-1`` blue squares) with dual
    coordinate descent's line ``w.x + b = 0`` (red, its margins dashed), the
    example of the step ringed, and the cutting plane's line (blue, dotted)
    after as many passes over the data as the coordinate steps have made.
    Middle, every ``a_i`` as a bar in its box ``[0, C]`` (the grey band),
    the bar of the step red with its value before the step in black.  Right,
    the primal objective's distance to the optimum against passes over the
    data: dual coordinate descent step by step, the cutting plane iteration
    by iteration, the current step marked."""


    # -- the explorer protocol (svmlab.viz._protocol) ----------------------
    @classmethod
    def from_fit(cls, fit):
        return cls(fit.trace)

    def reset(self, fit):
        """Show ``fit.trace`` in the same figure (see :meth:`_reset`)."""
        return self._reset(fit.trace)

    def __init__(self, trace, figsize=(8.5, 3.4), dpi=96):
        self.fig = new_figure(figsize=figsize, dpi=dpi)
        gs = self.fig.add_gridspec(1, 3, width_ratios=[1.0, 1.15, 1.05], wspace=0.42,
                                   left=0.06, right=0.985, bottom=0.16, top=0.86)
        self.ax_data = self.fig.add_subplot(gs[0])
        self.ax_alpha = self.fig.add_subplot(gs[1])
        self.ax_obj = self.fig.add_subplot(gs[2])
        self.same_background = False
        self.capped_at = None
        self._reset(trace)

    # -- build --------------------------------------------------------------
    def _reset(self, trace):
        """Draw ``trace`` into the same figure (axes cleared)."""
        self.trace = tr = trace
        X, y, n = tr.X, tr.y, len(tr.y)
        self.n_frames = max(1, len(tr.records))
        for ax in (self.ax_data, self.ax_alpha, self.ax_obj):
            ax.clear()
        ax = self.ax_data
        pad = 0.15 * float(np.ptp(X)) + 1e-9
        lo, hi = float(X.min()) - pad, float(X.max()) + pad
        self.lim = (lo, hi)
        pos = y > 0
        ax.scatter(X[pos, 0], X[pos, 1], s=22, marker="o", c="tab:orange", edgecolors="k",
                   linewidths=0.4, label="+1")
        ax.scatter(X[~pos, 0], X[~pos, 1], s=22, marker="s", c="tab:blue", edgecolors="k",
                   linewidths=0.4, label="-1")
        z = np.zeros(X.shape[1])
        self.l_w = _line(ax, z, 0.0, self.lim, color="tab:red", lw=1.6, label="DCD")
        self.l_p = _line(ax, z, 0.0, self.lim, color="tab:red", lw=0.8, ls="--")
        self.l_m = _line(ax, z, 0.0, self.lim, color="tab:red", lw=0.8, ls="--")
        self.l_cp = _line(ax, z, 0.0, self.lim, color="tab:blue", lw=1.4, ls=":",
                          label="cutting plane")
        (self.ring,) = ax.plot([], [], "o", ms=13, mfc="none", mec="tab:red", mew=1.8)
        ax.set_xlim(self.lim)
        ax.set_ylim(self.lim)
        ax.set_aspect("equal", adjustable="box")
        ax.set_title("data, w.x + b = 0", fontsize=10)
        ax.legend(fontsize=9, loc="upper left", handlelength=1.4, framealpha=0.8)
        ax.tick_params(labelsize=9)
        # the box of every multiplier
        ax = self.ax_alpha
        ax.axhspan(0.0, tr.C, color="0.9", zorder=0)
        self.bars = ax.bar(np.arange(n), np.zeros(n), width=0.8, color="0.55")
        (self.old_mark,) = ax.plot([], [], "_", color="k", ms=12, mew=2.0)
        ax.set_xlim(-0.8, n - 0.2)
        ax.set_ylim(-0.08 * tr.C, 1.12 * tr.C)
        ax.set_xlabel("example i", fontsize=10)
        ax.set_title(r"$\alpha_i$ in its box $[0, C]$", fontsize=10)
        ax.tick_params(labelsize=9)
        # objective against passes over the data
        ax = self.ax_obj
        gap = np.maximum(tr.primal - tr.optimum, 1e-12)
        passes = np.arange(len(gap)) / n
        ax.semilogy(passes, gap, color="tab:red", lw=1.2, label="DCD")
        if len(tr.cp_primal):
            ax.semilogy(np.arange(len(tr.cp_primal)),
                        np.maximum(tr.cp_primal - tr.optimum, 1e-12), "o:", color="tab:blue",
                        ms=4, lw=1.0, label="cutting plane")
        (self.obj_mark,) = ax.plot([], [], "o", color="tab:red", ms=6)
        ax.set_xlabel("passes over the data", fontsize=10)
        ax.set_title(r"$P(w, b) - P^*$", fontsize=10)
        ax.legend(fontsize=9, loc="upper right")
        ax.tick_params(labelsize=9)
        ax.set_xlim(0, max(passes[-1], len(tr.cp_primal) - 1) * 1.02 + 1e-9)
        return False

    # -- frames -------------------------------------------------------------
    def frame_labels(self):
        return [str(k + 1) for k in range(self.n_frames)]

    def record(self, k):
        return self.trace.records[min(k, len(self.trace.records) - 1)] \
            if self.trace.records else None

    def update(self, k):
        """Show the state after step ``k + 1``; returns the caption."""
        tr = self.trace
        if not tr.records:
            return "no step: the starting point is optimal"
        k = int(min(max(k, 0), len(tr.records) - 1))
        r = tr.records[k]
        n = len(tr.y)
        w, b = r.coef, r.intercept
        _set_line(self.l_w, w, b, self.lim)
        _set_line(self.l_p, w, b, self.lim, 1.0)
        _set_line(self.l_m, w, b, self.lim, -1.0)
        passes = (k + 1) / n
        # the cutting plane's model after as many iterations as whole passes
        # (its record j holds the w it reached after j iterations)
        j = min(int(np.floor(passes)), len(tr.cp_primal) - 1)
        if j >= 1:
            _set_line(self.l_cp, tr.cp_w[j], tr.cp_b[j], self.lim)
        else:
            self.l_cp.set_data([], [])
        self.ring.set_data([tr.X[r.i, 0]], [tr.X[r.i, 1]])
        a = tr.alpha[k + 1]
        for t, bar in enumerate(self.bars):
            bar.set_height(a[t])
            bar.set_color("tab:red" if t == r.i else "0.55")
        self.old_mark.set_data([r.i], [r.alpha_old])
        self.obj_mark.set_data([passes], [max(tr.primal[k + 1] - tr.optimum, 1e-12)])
        raw = r.alpha_old - r.G / tr.Qii[r.i] if not r.shrunk else np.nan
        if r.shrunk:
            what = "shrunk: it sits at its bound and will stay there, so it leaves the active set"
        elif abs(r.PG) <= 1e-12:
            what = "projected gradient 0: no move"
        elif raw < 0.0 or raw > tr.C:
            what = (f"Newton step to {raw:.3f}, clipped to "
                    f"{'0' if raw < 0 else 'C'}")
        else:
            what = f"Newton step inside the box: {raw:.3f}"
        return (f"step {r.iteration} (epoch {r.epoch + 1}): coordinate i = {r.i}, "
                f"a_i {r.alpha_old:.3f} &rarr; {r.alpha_new:.3f} ({what}); "
                f"P = {tr.primal[k + 1]:.4f}, optimum {tr.optimum:.4f}")


def live_dcd(X=None, y=None, *, C=1.0, dataset="blobs", n=20, seed=0, tol=1e-3,
             max_steps=600, start="first"):
    """Live :class:`DCDExplorer`: C, dataset, n and seed refit; the step
    buttons (``-1``, ``+1``, ``next clipped step``), the slider and Play
    move through the steps; clicks on the data panel add or remove points.

    Example: ``live = live_dcd(); live.controls["C"].value = 10.0``."""
    from ._protocol import Control, Fit
    from .live import _live2d, toy_controls

    specs = [Control("C", "log", C, lo=1e-2, hi=1e2),
             *toy_controls(dataset, n, seed, X is not None)]

    def fit(v, X, y):
        tr = dcd_trace(X, y, C=v["C"], tol=tol, random_state=v["seed"], max_steps=max_steps)
        summary = (f", {'converged' if tr.converged else 'not converged'} after "
                   f"{len(tr.records)} coordinate steps; cutting plane "
                   f"{len(tr.cp_primal)} iterations")
        return Fit(X, y, tr, tr.records, fit_seconds=tr.fit_seconds,
                   summary=summary).capped(max_steps)

    clipped = {}

    def next_clipped(ex, k):
        tr = ex.trace
        key = id(tr)
        if key not in clipped:
            clipped.clear()
            clipped[key] = set(clipped_steps(tr))
        return (k + 1) in clipped[key]

    nav = {"-1": None, "+1": None, "next clipped step": next_clipped}
    return _live2d("dual coordinate descent", specs, fit, DCDExplorer.from_fit, nav, X, y,
                   None, None, start)
