"""SMO, seen one joint step at a time (Platt 1998, TR MSR-TR-98-14, sec. 2).

Everything here is built from the step records of
:class:`svmlab.SMOClassifier` (fields ``i1, i2, a1_old, a2_old, a1_new,
a2_new, L, H, eta, E1, E2, b_old, b_new, heuristic, clipped, a2_unclipped``)
and the analytic step of :mod:`svmlab.smo._pairstep`; the sign conventions are
those documented there (``f(x) = sum_j alpha_j y_j K(x_j, x) + b``,
``E_i = f(x_i) - y_i``, ``eta = K11 + K22 - 2 K12``).

Geometry of one step (Platt's Figure 1).  With ``s = y1 y2`` the equality
constraint keeps ``a1 + s a2 = k`` fixed, so the pair moves on a line
through the box ``[0, C]^2`` (``[0, C1] x [0, C2]`` with weights: each
example has its own bound ``C_i = C * weight_i``, and a record's ``C1, C2``
are its pair's): the diagonal ``a1 + a2 = k`` when
``y1 == y2`` and ``a1 - a2 = k`` when ``y1 != y2``.  The feasible part is the
segment ``a2 in [L, H]``; the unconstrained maximiser along the line is
``a2_unclipped`` and the step lands on its clipped value ``a2_new``.

Main entry points
-----------------
:func:`segment_geometry`   the segment, its ends, the old/unclipped/new points (box coordinates)
:func:`segment_curve`      the 1-D dual objective along the segment (``segment_objective``)
:func:`replay`             alpha and b after every step, rebuilt from the records
:func:`kkt_violators`      indices violating Platt's KKT conditions (TR eq. 12) within tol
:class:`SMOStepExplorer`   the two-panel figure + Play/slider (:class:`~svmlab.viz.FramePlayer`)
:func:`random_pair_smo`    SMO with random pairs, the baseline for the heuristics notebook
                           (lives in :mod:`svmlab.reference.random_pairs`, re-exported here)
:func:`objective_path`     dual objective after every step, accumulated from the records
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._protocol import Explorer

from ..smo._pairstep import segment_objective
from ..reference.random_pairs import PairRecord, random_pair_smo
from ._common import (
    CLASS_COLORS,
    CLASS_MARKERS,
    HIGHLIGHT,
    NEUTRAL,
    VIOLATOR,
    FramePlayer,
    DecisionGrid,
    new_figure,
    static_animation,
)

__all__ = [
    "SegmentGeometry",
    "segment_geometry",
    "segment_curve",
    "replay",
    "kkt_violators",
    "objective_path",
    "PairRecord",
    "random_pair_smo",
    "SMOStepExplorer",
    "pick_key_steps",
]


def _labels(rec, y_pm=None):
    """(y1, y2) of a record, from the record or from the +-1 labels."""
    y1 = getattr(rec, "y1", None)
    y2 = getattr(rec, "y2", None)
    if y1 is None or y2 is None:
        y1, y2 = y_pm[rec.i1], y_pm[rec.i2]
    return float(y1), float(y2)


# --------------------------------------------------------------------------
# geometry of one step
# --------------------------------------------------------------------------
class SegmentGeometry(NamedTuple):
    """One SMO step in box coordinates ``(a1, a2)``.

    ``s = y1 y2`` and ``k = a1 + s a2`` (``a1 + a2 = k`` for equal labels,
    ``a1 - a2 = k`` for different labels).  ``end_L``/``end_H`` are the
    segment ends (``a2 = L`` / ``a2 = H``), ``old``/``new`` the pair before
    and after the step, ``unclipped`` the unconstrained optimum along the
    line (``None`` when ``eta <= 0``: the objective has no maximum there).
    """

    s: float
    k: float
    end_L: tuple
    end_H: tuple
    old: tuple
    new: tuple
    unclipped: tuple | None
    label: str

    def a1_of(self, a2):
        """a1 on the constraint line for a given a2."""
        return self.k - self.s * np.asarray(a2, dtype=float)


def segment_geometry(rec, y_pm=None):
    """The segment of a record in the box (see :class:`SegmentGeometry`)."""
    y1, y2 = _labels(rec, y_pm)
    s = y1 * y2
    k = rec.a1_old + s * rec.a2_old

    def a1(a2):
        return k - s * a2

    a2u = getattr(rec, "a2_unclipped", np.nan)
    unc = None if (a2u is None or not np.isfinite(a2u)) else (a1(a2u), float(a2u))
    # mathtext, as in the figure's axis labels (Platt's eq. 13 constraint line)
    label = (rf"$y_1 = y_2$:  $\alpha_1 + \alpha_2 = {k:.3g}$" if s > 0
             else rf"$y_1 \neq y_2$:  $\alpha_1 - \alpha_2 = {k:.3g}$")
    return SegmentGeometry(
        s=s,
        k=k,
        end_L=(a1(rec.L), float(rec.L)),
        end_H=(a1(rec.H), float(rec.H)),
        old=(float(rec.a1_old), float(rec.a2_old)),
        new=(float(rec.a1_new), float(rec.a2_new)),
        unclipped=unc,
        label=label,
    )


def segment_curve(rec, K11, K12, K22, y_pm=None, n=121, lo=None, hi=None):
    """The change of the dual objective W along the constraint line.

    Returns ``(a2, dW)``: ``dW[j] = W(a2[j]) - W(a2_old)`` from
    :func:`svmlab.smo._pairstep.segment_objective`, for ``a2`` from ``lo`` to
    ``hi`` (default: covering ``[L, H]``, the old value and the unclipped
    optimum, with a margin).
    """
    y1, y2 = _labels(rec, y_pm)
    pts = [rec.L, rec.H, rec.a2_old]
    a2u = getattr(rec, "a2_unclipped", np.nan)
    if a2u is not None and np.isfinite(a2u):
        pts.append(a2u)
    span = max(max(pts) - min(pts), 1e-9)
    lo = min(pts) - 0.08 * span if lo is None else lo
    hi = max(pts) + 0.08 * span if hi is None else hi
    a2 = np.linspace(lo, hi, n)
    dW = np.array([
        segment_objective(v, y1, y2, rec.a1_old, rec.a2_old, rec.E1, rec.E2, rec.b_old,
                          K11, K12, K22)
        for v in a2
    ])
    return a2, dW


# --------------------------------------------------------------------------
# the model along the trace
# --------------------------------------------------------------------------
def replay(records, n, alpha0=None, b0=None):
    """Multipliers and intercept after every step, rebuilt from the records.

    Returns ``(alphas, bs)`` with ``alphas[t]`` (shape ``(T+1, n)``) the
    multipliers after ``t`` steps (``t = 0``: before the first, all zero
    unless ``alpha0`` is given) and ``bs[t]`` the intercept (``bs[0]`` is the
    first record's ``b_old`` unless ``b0`` is given).
    """
    T = len(records)
    alphas = np.empty((T + 1, n))
    alphas[0] = 0.0 if alpha0 is None else alpha0
    bs = np.empty(T + 1)
    bs[0] = (records[0].b_old if T else 0.0) if b0 is None else b0
    a = alphas[0].copy()
    for t, r in enumerate(records, start=1):
        a[r.i1] = r.a1_new
        a[r.i2] = r.a2_new
        alphas[t] = a
        bs[t] = r.b_new
    return alphas, bs


def kkt_violators(K, y_pm, alpha, b, C, tol=1e-3):
    """Indices violating Platt's KKT conditions (TR eq. 12) by more than tol.

    With ``r_i = y_i E_i = y_i f(x_i) - 1``: ``alpha_i < C`` and ``r_i < -tol``,
    or ``alpha_i > 0`` and ``r_i > tol`` (the test of Platt's examineExample).
    ``C`` is a number or one bound per example (weights).
    """
    y = np.asarray(y_pm, dtype=float)
    f = K @ (alpha * y) + b
    r = y * f - 1.0
    bad = ((r < -tol) & (alpha < C)) | ((r > tol) & (alpha > 0))
    return np.flatnonzero(bad)


def objective_path(records, K, y_pm):
    """Dual objective ``W(alpha_t)`` after every step ``t = 0..T``, accumulated
    from the records (``W_0 = 0`` at ``alpha = 0``; each step adds
    ``segment_objective`` at its ``a2_new``)."""
    W = np.zeros(len(records) + 1)
    for t, r in enumerate(records, start=1):
        y1, y2 = float(y_pm[r.i1]), float(y_pm[r.i2])
        W[t] = W[t - 1] + segment_objective(
            r.a2_new, y1, y2, r.a1_old, r.a2_old, r.E1, r.E2, r.b_old,
            K[r.i1, r.i1], K[r.i1, r.i2], K[r.i2, r.i2])
    return W


def pick_key_steps(records, n_frames=12):
    """A few informative step indices (0-based) for a static animation: the
    first steps, every clipped or ``eta <= 0`` step (up to the budget), and
    evenly spaced ones, always including the last."""
    T = len(records)
    if T <= n_frames:
        return list(range(T))
    keep = {0, 1, 2, T - 1}
    special = [t for t, r in enumerate(records) if r.eta <= 0]
    special += [t for t, r in enumerate(records) if getattr(r, "clipped", False)]
    for t in special:
        if len(keep) >= n_frames // 2:
            break
        keep.add(t)
    for t in np.linspace(0, T - 1, n_frames).astype(int):
        if len(keep) >= n_frames:
            break
        keep.add(int(t))
    return sorted(keep)


# --------------------------------------------------------------------------
# the explorer figure
# --------------------------------------------------------------------------
def _clamp_on_line(geom, a2, lo, hi):
    """Move a point along the constraint line until both coordinates lie in
    ``[lo, hi]`` (to keep an off-view optimum visible at the edge)."""
    # a1 = k - s a2 in [lo, hi]  <=>  a2 in [(k - hi)/s, (k - lo)/s] (sorted)
    b1, b2 = sorted(((geom.k - hi) / geom.s, (geom.k - lo) / geom.s))
    a2_lo, a2_hi = max(lo, b1), min(hi, b2)
    if a2_lo > a2_hi:
        return None
    v = float(np.clip(a2, a2_lo, a2_hi))
    return float(geom.a1_of(v)), v


class SMOStepExplorer(Explorer):
    """Platt's Figure 1 made live, plus the data the step acts on.

    Built once from a recorded SMO trace on 2-D data; ``update(t)`` changes
    the artists for frame ``t`` (the ``t``-th joint step, 0-based), and
    :meth:`player` wraps it in a Play button + slider that blits only the
    changing artists.

    * top left: the box ``[0, C]^2`` (the step's own ``[0, C1] x [0, C2]``
      when its record has them: weights) in ``(a1, a2)`` with the constraint
      line, the feasible segment from ``L`` to ``H``, the pair before the
      step (grey), the unconstrained optimum (hollow; drawn at the view edge
      if it lies outside) and the clipped new pair (red star);
    * bottom left: the change of the dual objective along the line as a
      function of the new ``a2`` (solid inside ``[L, H]``), in coordinates
      rescaled per step (the a2 range and the gain are written on it);
    * right: the data, the decision boundary ``f = 0`` and margins
      ``f = +-1`` of the model *after* the step (alpha and b rebuilt from the
      records), the support vectors (black rings), the two chosen points (red
      rings) and the points that still violate KKT by more than ``tol``
      (purple crosses);
    * caption and title: step, heuristic, indices, E1, E2, eta, b.

    Parameters
    ----------
    X : (n, 2) array, y : labels (two classes), records : the step records,
    C : box bound, a number or one per example (weights; the box of a step
    comes from its record's ``C1, C2``), kernel/gamma/degree/coef0 : the
    kernel the records used
    (``gamma`` numeric; take ``estimator.gamma_``), tol : KKT tolerance for
    the violator marks, grid : grid resolution of the right panel.
    """


    # -- the explorer protocol (svmlab.viz._protocol) ----------------------
    @classmethod
    def from_fit(cls, fit):
        """A new explorer for ``fit`` (its estimator gives C, kernel ...;
        ``fit.params["grid"]``: the grid size)."""
        kw = {"grid": fit.params["grid"]} if "grid" in fit.params else {}
        return cls.from_estimator(fit.estimator, fit.X, fit.y, fit.records, **kw)

    def reset(self, fit):
        """Show ``fit`` (new data, C, kernel ...) in the same figure; see
        :meth:`_reset` for when the background survives."""
        est = fit.estimator
        return self._reset(fit.X, fit.y, fit.records, C=est.C, kernel=est.kernel,
                           gamma=est.gamma_, degree=getattr(est, "degree", 3),
                           coef0=getattr(est, "coef0", 0.0), classes=est.classes_)

    def record(self, k):
        return self.records[int(k)]

    @property
    def n_frames(self):
        return self.T

    def __init__(self, X, y, records, C, kernel="rbf", gamma=1.0, degree=3, coef0=0.0,
                 tol=1e-3, grid=70, figsize=(8.5, 4.875), dpi=96, classes=None):
        from matplotlib.collections import LineCollection
        from matplotlib.colors import ListedColormap
        from matplotlib.patches import Rectangle
        import matplotlib

        self.tol, self._grid_n = tol, grid
        X, coefs = self._set_trace(X, y, records, C, kernel, gamma, degree, coef0, classes)
        classes = self.classes

        C_ = self.C
        fig = new_figure(figsize=figsize, dpi=dpi)
        gs = fig.add_gridspec(2, 2, width_ratios=[1.25, 1.1], height_ratios=[2.2, 1.0],
                              left=0.06, right=0.99, bottom=0.215, top=0.90, wspace=0.06,
                              hspace=0.36)
        self.fig = fig
        self.ax_box = fig.add_subplot(gs[0, 0])
        self.ax_obj = fig.add_subplot(gs[1, 0])
        self.ax_data = fig.add_subplot(gs[:, 1])
        dyn = []  # the artists update() changes, in drawing order

        # ---- box
        ax = self.ax_box
        self.view = (-0.3 * self.C_view, 1.3 * self.C_view)
        self.box_rect = ax.add_patch(Rectangle((0, 0), C_, C_, fill=False, lw=1.5, ec="k"))
        ax.set_xlim(*self.view)
        ax.set_ylim(*self.view)
        ax.set_aspect("equal")
        ax.set_anchor("W")
        ax.set_xlabel(r"$\alpha_1$", labelpad=0)
        ax.set_ylabel(r"$\alpha_2$", labelpad=0)
        ax.tick_params(labelsize=9)
        ax.set_xticks([0, C_])
        ax.set_yticks([0, C_])
        ax.set_xticklabels(["0", "C"])
        ax.set_yticklabels(["0", "C"])
        (self.line_full,) = ax.plot([], [], ls=":", lw=1, color=NEUTRAL, label="constraint line")
        (self.line_seg,) = ax.plot([], [], lw=3, color="#2ca02c", solid_capstyle="butt",
                                   label="feasible segment [L, H]")
        (self.pt_ends,) = ax.plot([], [], ls="none", marker="o", ms=4, color="#2ca02c")
        self.txt_L = ax.text(0, 0, " L", fontsize=10, color="#2ca02c", ha="left", va="top")
        self.txt_H = ax.text(0, 0, " H", fontsize=10, color="#2ca02c", ha="left", va="bottom")
        (self.pt_old,) = ax.plot([], [], ls="none", marker="o", ms=7, color=NEUTRAL,
                                 label="pair before the step")
        (self.pt_unc,) = ax.plot([], [], ls="none", marker="o", ms=10, mfc="none", mew=1.8,
                                 color="k", label="unconstrained optimum")
        (self.pt_new,) = ax.plot([], [], ls="none", marker="*", ms=14, color=HIGHLIGHT,
                                 label=_NEW_PAIR_LABEL[True])
        ax.legend(handles=[self.line_full, self.line_seg, self.pt_old, self.pt_unc],
                  fontsize=9, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False,
                  handlelength=1.5, borderaxespad=0.3)
        # the new pair's entry is a legend of its own, redrawn per frame (a
        # one-line legend is cheap to blit): it says whether the step on
        # screen was clipped to [L, H] or landed inside (see update)
        from matplotlib.legend import Legend

        self.step_legend = Legend(ax, [self.pt_new], [_NEW_PAIR_LABEL[True]], fontsize=9,
                                  loc="lower left", bbox_to_anchor=(1.0, 0.0), frameon=False,
                                  handlelength=1.5, borderaxespad=0.3)
        ax.add_artist(self.step_legend)
        self.legend_new = self.step_legend.get_texts()[0]
        self.box_title = ax.set_title("", fontsize=9, loc="left", y=1.0)
        # the box is the step's own [0, C1] x [0, C2] (weights): drawn per frame
        dyn += [self.box_rect, self.line_full, self.line_seg, self.pt_ends, self.txt_L, self.txt_H,
                self.pt_old, self.pt_unc, self.pt_new, self.step_legend, self.box_title]

        # ---- objective along the line, rescaled to [0, 1] x [0, 1] per step
        ax = self.ax_obj
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(-0.12, 1.12)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_ylabel(r"$W - W_{\mathrm{old}}$", fontsize=9, labelpad=2)
        ax.set_xlabel(r"new $\alpha_2$ along the line (rescaled per step)", fontsize=9,
                      labelpad=2)
        (self.obj_zero,) = ax.plot([], [], lw=0.6, color=NEUTRAL)
        (self.obj_out,) = ax.plot([], [], ls="--", lw=1, color=NEUTRAL)
        (self.obj_in,) = ax.plot([], [], lw=2.2, color="#2ca02c")
        (self.obj_LH,) = ax.plot([], [], lw=0.8, ls=":", color="#2ca02c")
        (self.obj_unc,) = ax.plot([], [], ls="none", marker="o", ms=8, mfc="none", mew=1.5,
                                  color="k")
        (self.obj_old,) = ax.plot([], [], ls="none", marker="o", ms=5, color=NEUTRAL)
        (self.obj_new,) = ax.plot([], [], ls="none", marker="*", ms=12, color=HIGHLIGHT)
        self.obj_txt_L = ax.text(0, 1.0, "L", fontsize=9, ha="center", va="bottom",
                                 color="#2ca02c")
        self.obj_txt_H = ax.text(0, 1.0, "H", fontsize=9, ha="center", va="bottom",
                                 color="#2ca02c")
        dyn += [self.obj_zero, self.obj_out, self.obj_in, self.obj_LH, self.obj_unc,
                self.obj_old, self.obj_new, self.obj_txt_L, self.obj_txt_H]

        # ---- data
        ax = self.ax_data
        base = matplotlib.colormaps["RdBu_r"](np.linspace(0, 1, 256))
        light = ListedColormap(0.35 * base + 0.65 * np.array([1.0, 1.0, 1.0, 1.0]))
        Z0 = self.grid.values(coefs[0], self.bs[0])
        self.bg = ax.imshow(np.clip(Z0, -2, 2), origin="lower", extent=self.grid.extent,
                            cmap=light, vmin=-2.5, vmax=2.5, aspect="auto",
                            interpolation="nearest", zorder=0)
        self.boundary = LineCollection([], colors="k", linewidths=1.8, zorder=1,
                                       label="f = 0")
        self.margins = LineCollection([], colors="k", linewidths=1.0, linestyles="--",
                                      zorder=1, label="f = -1, +1")
        ax.add_collection(self.boundary)
        ax.add_collection(self.margins)
        self.points = []
        for lab in (-1, 1):
            m = self.y_pm == lab
            self.points.append(ax.scatter(
                X[m, 0], X[m, 1], s=30, c=CLASS_COLORS[lab], marker=CLASS_MARKERS[lab],
                edgecolors="white", linewidths=0.5, zorder=3,
                label=f"class {_fmt_label(classes[(lab + 1) // 2])}"))
        empty = np.empty((0, 2))
        self.sv = ax.scatter(empty[:, 0], empty[:, 1], s=85, facecolors="none",
                             edgecolors="k", linewidths=1.0, zorder=4, label="support vectors")
        self.viol = ax.scatter(empty[:, 0], empty[:, 1], s=45, marker="x", c=VIOLATOR,
                               linewidths=1.6, zorder=5, label=f"KKT violators (tol {tol:g})")
        self.chosen = ax.scatter(empty[:, 0], empty[:, 1], s=240, facecolors="none",
                                 edgecolors=HIGHLIGHT, linewidths=2.2, zorder=6,
                                 label="chosen pair i1, i2")
        self.txt_i = [ax.text(0, 0, "", fontsize=10, color=HIGHLIGHT, zorder=7,
                              fontweight="bold") for _ in range(2)]
        ax.set_xlim(*self.grid.extent[:2])
        ax.set_ylim(*self.grid.extent[2:])
        ax.set_xticks([])
        ax.set_yticks([])
        ax.legend(fontsize=9, loc="upper center", bbox_to_anchor=(0.45, -0.01), ncol=2,
                  frameon=False, columnspacing=0.8, handletextpad=0.2, borderaxespad=0.2,
                  labelspacing=0.3)
        self.data_title = ax.set_title("", fontsize=9, y=1.0)
        self.suptitle = fig.suptitle("", fontsize=10, y=0.985)
        dyn += [self.bg, self.boundary, self.margins, *self.points, self.sv, self.viol,
                self.chosen, *self.txt_i, self.data_title, self.suptitle]
        self.animated = dyn
        self.frame = None

    def _set_trace(self, X, y, records, C, kernel, gamma, degree, coef0, classes):
        """The arrays every frame reads: the kernel on the grid and on the
        data, alpha and b after every step, the KKT violators per state."""
        X = np.asarray(X, dtype=float)
        y = np.asarray(y)
        classes = np.unique(y) if classes is None else np.asarray(classes)
        if len(classes) != 2:
            raise ValueError("SMOStepExplorer needs two classes")
        if len(records) == 0:
            raise ValueError("no step records: the trace is empty")
        tol = self.tol
        self.classes = classes
        self.y_pm = np.where(y == classes[1], 1.0, -1.0)
        self.X, self.records = X, list(records)
        Cv = np.asarray(C, dtype=float)
        if Cv.ndim != 0 and Cv.shape != (len(X),):
            raise ValueError(f"C must be a number or one bound per example ({len(X)}), "
                             f"got shape {Cv.shape}")
        # C: the scalar C (ticks, sizes); Cv: every example's bound (violators)
        self.C = float(Cv) if Cv.ndim == 0 else float(np.max(Cv))
        self.Cv = np.broadcast_to(Cv, (len(X),)).copy()
        bounds = [self.C] + [c for r in self.records for c in
                             (getattr(r, "C1", np.nan), getattr(r, "C2", np.nan))
                             if np.isfinite(c)]
        self.C_view = float(max(bounds))  # the view holds every step's box
        self.T = len(self.records)
        self.grid = DecisionGrid(X, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0,
                                 n=self._grid_n)
        self.K = self.grid.kernel.matrix()
        self.alphas, self.bs = replay(self.records, len(X))
        coefs = self.alphas * self.y_pm
        F = coefs @ self.K + self.bs[:, None]  # training decision values per state
        r = self.y_pm * F - 1.0
        A = self.alphas
        self._viol = (((r < -tol) & (A < self.Cv)) | ((r > tol) & (A > 0)))
        return X, coefs

    def _reset(self, X, y, records, C, kernel="rbf", gamma=1.0, degree=3, coef0=0.0,
              classes=None):
        """Show another trace (new data, C, kernel ...) in the same figure,
        without building it again (what :func:`svmlab.viz.live.live_smo`
        does after every refit).

        Returns True when everything outside :attr:`animated` draws the same
        pixels as before, so a player may keep its blitting background: the
        box is drawn in a view that scales with C (ticks 0 and C stay where
        they were), the data panel has no ticks, and the legends change only
        if the class labels do (then False)."""
        old = [_fmt_label(c) for c in self.classes]
        X, coefs = self._set_trace(X, y, records, C, kernel, gamma, degree, coef0, classes)
        C_ = self.C
        self.box_rect.set_width(C_)
        self.box_rect.set_height(C_)
        self.view = (-0.3 * self.C_view, 1.3 * self.C_view)
        ax = self.ax_box
        ax.set_xlim(*self.view)
        ax.set_ylim(*self.view)
        ax.set_xticks([0, C_], ["0", "C"])
        ax.set_yticks([0, C_], ["0", "C"])
        ex = self.grid.extent
        self.bg.set_data(np.clip(self.grid.values(coefs[0], self.bs[0]), -2, 2))
        self.bg.set_extent(ex)
        self.ax_data.set_xlim(*ex[:2])
        self.ax_data.set_ylim(*ex[2:])
        for lab, sc in zip((-1, 1), self.points):
            sc.set_offsets(X[self.y_pm == lab].reshape(-1, 2))
        self.frame = None
        return [_fmt_label(c) for c in self.classes] == old

    # ----------------------------------------------------------------- frames
    def violators_after(self, t):
        """Indices violating KKT after step ``t`` (0-based step index)."""
        return np.flatnonzero(self._viol[t + 1])

    def support_after(self, t):
        """Indices with alpha > 0 after step ``t``."""
        return np.flatnonzero(self.alphas[t + 1] > 0)

    def geometry(self, t):
        return segment_geometry(self.records[t], self.y_pm)

    def caption(self, t):
        r = self.records[t]
        heur = getattr(r, "heuristic", "?")
        clip = "clipped" if getattr(r, "clipped", False) else "interior"
        eta_note = " (eta &le; 0: best end of the segment)" if r.eta <= 0 else ""
        return (f"step {t + 1}/{self.T} &middot; heuristic <b>{heur}</b> &middot; "
                f"i1={r.i1}, i2={r.i2} &middot; E1={r.E1:+.4f}, E2={r.E2:+.4f} &middot; "
                f"eta={r.eta:.4f}{eta_note} &middot; b: {r.b_old:+.4f} &rarr; {r.b_new:+.4f} "
                f"&middot; a2: {r.a2_old:.4f} &rarr; {r.a2_new:.4f} ({clip}), "
                f"W gains {self._gain(t):+.4g} &middot; "
                f"{len(self.violators_after(t))} KKT violators left")

    def _gain(self, t):
        r = self.records[t]
        i1, i2 = r.i1, r.i2
        return float(segment_objective(
            r.a2_new, float(self.y_pm[i1]), float(self.y_pm[i2]), r.a1_old, r.a2_old, r.E1,
            r.E2, r.b_old, self.K[i1, i1], self.K[i1, i2], self.K[i2, i2]))

    def update(self, t):
        """Draw step ``t`` (0-based) by changing the existing artists."""
        t = int(t)
        r = self.records[t]
        i1, i2 = r.i1, r.i2
        g = self.geometry(t)
        lo, hi = self.view

        # box: the pair's own [0, C1] x [0, C2] (C without weights), the full
        # line across the view, the segment, the points
        C1, C2 = getattr(r, "C1", np.nan), getattr(r, "C2", np.nan)
        self.box_rect.set_width(C1 if np.isfinite(C1) else self.C)
        self.box_rect.set_height(C2 if np.isfinite(C2) else self.C)
        a2s = np.array([lo - self.C_view, hi + self.C_view])
        self.line_full.set_data(g.a1_of(a2s), a2s)
        self.line_seg.set_data([g.end_L[0], g.end_H[0]], [g.end_L[1], g.end_H[1]])
        self.pt_ends.set_data([g.end_L[0], g.end_H[0]], [g.end_L[1], g.end_H[1]])
        self.txt_L.set_position(g.end_L)
        self.txt_H.set_position(g.end_H)
        self.pt_old.set_data([g.old[0]], [g.old[1]])
        self.pt_new.set_data([g.new[0]], [g.new[1]])
        self.legend_new.set_text(_NEW_PAIR_LABEL[bool(getattr(r, "clipped", False))])
        unc_view = None if g.unclipped is None else _clamp_on_line(g, g.unclipped[1], lo, hi)
        if unc_view is None:
            self.pt_unc.set_data([], [])
        else:
            self.pt_unc.set_data([unc_view[0]], [unc_view[1]])
        self.box_title.set_text(g.label)

        # objective along the line, rescaled
        K11, K12, K22 = self.K[i1, i1], self.K[i1, i2], self.K[i2, i2]
        a2, dW = segment_curve(r, K11, K12, K22, self.y_pm)
        x0, x1 = a2[0], a2[-1]
        ymin, ymax = float(dW.min()), float(dW.max())
        yspan = max(ymax - ymin, 1e-15)

        def u(v):
            return (np.asarray(v, float) - x0) / (x1 - x0)

        def v_(w):
            return (np.asarray(w, float) - ymin) / yspan

        y1, y2 = float(self.y_pm[i1]), float(self.y_pm[i2])

        def w(v):
            return segment_objective(v, y1, y2, r.a1_old, r.a2_old, r.E1, r.E2, r.b_old,
                                     K11, K12, K22)

        inside = (a2 >= r.L) & (a2 <= r.H)
        self.obj_zero.set_data([0, 1], [v_(0.0), v_(0.0)])
        self.obj_out.set_data(u(a2), v_(dW))
        self.obj_in.set_data(u(a2[inside]), v_(dW[inside]))
        uL, uH = float(u(r.L)), float(u(r.H))
        self.obj_LH.set_data([uL, uL, np.nan, uH, uH], [-0.1, 1.0, np.nan, -0.1, 1.0])
        self.obj_txt_L.set_x(uL)
        self.obj_txt_H.set_x(uH)
        self.obj_new.set_data([u(r.a2_new)], [v_(w(r.a2_new))])
        self.obj_old.set_data([u(r.a2_old)], [v_(0.0)])
        if g.unclipped is None:
            self.obj_unc.set_data([], [])
        else:
            self.obj_unc.set_data([u(g.unclipped[1])], [v_(w(g.unclipped[1]))])
        self.gain = float(w(r.a2_new))

        # data: model after the step
        coef = self.alphas[t + 1] * self.y_pm
        Z = self.grid.values(coef, self.bs[t + 1])
        self.bg.set_data(np.clip(Z, -2, 2))
        self.boundary.set_segments(self.grid.lines(Z, 0.0))
        self.margins.set_segments(self.grid.lines(Z, -1.0) + self.grid.lines(Z, 1.0))
        self.sv.set_offsets(self.X[self.support_after(t)].reshape(-1, 2))
        self.viol.set_offsets(self.X[self.violators_after(t)].reshape(-1, 2))
        self.chosen.set_offsets(self.X[[i1, i2]])
        # the labels on opposite sides of the pair, so they never overlap
        d = self.X[i1] - self.X[i2]
        if np.hypot(*d) < 1e-12 * (1.0 + np.abs(self.X).max()):
            d = np.array([-1.0, 0.0])  # one point twice (duplicates): 1 left, 2 right
        for txt, i, name, sgn in zip(self.txt_i, (i1, i2), ("1", "2"), (1.0, -1.0)):
            right = sgn * d[0] >= 0
            txt.set_position((self.X[i, 0], self.X[i, 1]))
            txt.set_horizontalalignment("left" if right else "right")
            txt.set_verticalalignment("bottom" if sgn * d[1] >= 0 else "top")
            txt.set_text(f"  {name}" if right else f"{name}  ")
        self.data_title.set_text(
            f"model after step {t + 1}: b = {r.b_new:+.3f}, "
            f"{int((self.alphas[t + 1] > 0).sum())} SVs, "
            f"{len(self.violators_after(t))} KKT violators")
        self.suptitle.set_text(
            f"SMO step {t + 1}/{self.T}  [{getattr(r, 'heuristic', '?')}]   "
            rf"$E_1 = {r.E1:+.3f}$   $E_2 = {r.E2:+.3f}$   $\eta = {r.eta:.3f}$   "
            rf"$b = {r.b_old:+.3f} \to {r.b_new:+.3f}$")
        self.suptitle.set_visible(True)
        self.data_title.set_visible(True)
        self.frame = t
        return self.caption(t)

    def player(self, interval=500, start=0):
        """A :class:`~svmlab.viz.FramePlayer` over every joint step (blitted).

        In the live player the long figure texts (suptitle and data-panel
        title) are left to the HTML caption above the image, which is cheaper
        than rendering glyphs per frame; :meth:`animation` and
        :meth:`snapshot` draw them into the figure."""
        p = FramePlayer(self.fig, self.T, self._update_live, interval=interval,
                        description="step", start=start, animated=self.animated)
        return p

    def _update_live(self, t):
        text = self.update(t)
        self.suptitle.set_visible(False)
        self.data_title.set_visible(False)
        return text

    def animation(self, steps=None, interval=700):
        """Static ``to_jshtml`` animation of the given (0-based) steps
        (default: :func:`pick_key_steps`)."""
        steps = pick_key_steps(self.records) if steps is None else list(steps)
        return static_animation(self.fig, self.update, steps, interval=interval,
                                animated=self.animated)

    def snapshot(self, t):
        """Draw step ``t`` and return PNG bytes of the full figure (display
        with ``IPython.display.Image``)."""
        from ._common import _unanimated, fig_to_png

        self.update(t)
        with _unanimated(self.animated):
            return fig_to_png(self.fig)

    @classmethod
    def from_estimator(cls, estimator, X, y, records, **kwargs):
        """Explorer for records recorded while fitting ``estimator`` (takes C,
        kernel, gamma_, degree, coef0, tol and classes_ from it; with weights
        pass ``C=`` the per-example bounds for the violator marks: each
        step's box comes from its record)."""
        kwargs.setdefault("C", estimator.C)
        return cls(X, y, records, kernel=estimator.kernel,
                   gamma=estimator.gamma_, degree=getattr(estimator, "degree", 3),
                   coef0=getattr(estimator, "coef0", 0.0),
                   tol=getattr(estimator, "tol", 1e-3), classes=estimator.classes_, **kwargs)


#: legend text of the new pair, by whether the step was clipped to [L, H]
#: (plain text: the legend is redrawn every frame, and mathtext costs a parse)
_NEW_PAIR_LABEL = {True: "new pair: clipped to [L, H]",
                   False: "new pair: interior"}


def _fmt_label(c):
    """Class label for a legend: ``-1`` rather than ``-1.0``."""
    try:
        return f"{float(c):g}"
    except (TypeError, ValueError):
        return str(c)
