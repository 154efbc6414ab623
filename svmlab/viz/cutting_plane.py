"""Cutting planes made visible (Joachims 2006, Algorithm 1 on OP2), for
``notebooks/03_cutting_plane.ipynb``.

Notation (as :mod:`svmlab.cutting_plane.estimators`): augmented points
``z_i = [x_i, B]`` (``B = 1`` with an intercept, ``B = 0`` without), augmented
weights ``v = [w, b/B]``.  The empirical hinge risk is

    R(v) = (1/n) sum_i max(0, 1 - y_i v.z_i)

and every constraint ``c in {0,1}^n`` of OP2 is a *cutting plane* below it::

    R(v) >= d_c - v.g_c,   d_c = (1/n) sum_i c_i,   g_c = (1/n) sum_i c_i y_i z_i

with equality at the ``v`` where c was found (the most violated constraint,
``c_i = [y_i v.z_i < 1]``).  The working set's planes give the piecewise-linear
lower bound ``max(0, max_k d_k - v.g_k)``; OP3's ``xi`` is that bound at the
current ``v`` and ``xi'`` is the true risk there.

Everything below works on plain arrays (so it is unit-tested against direct
computations); :class:`CuttingPlaneExplorer` reads
:class:`svmlab.cutting_plane.estimators.CuttingPlaneRecord` traces.

The solver records one step per constraint it *adds*.  The last check of
Algorithm 1 (the iteration that finds ``xi' <= xi + epsilon`` at the final
``w`` and stops without adding anything) is not a record; the trace
recomputes it here from the fitted model (``CuttingPlaneTrace.final_*``) and
the explorer shows it as one extra, last frame.  Colours: ``xi`` is always
:data:`XI_COLOR` (blue), ``xi'`` and the primal upper bound
:data:`XI_NEW_COLOR` (red), in notebook 03 and 04 alike.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ._protocol import Explorer

from ._common import (record_trace, CLASS_COLORS, CLASS_MARKERS, HIGHLIGHT, NEUTRAL, VIOLATOR,
                      FramePlayer, freeze_label_positions, new_figure,
                      stepped_count_end)

#: colour of ``xi`` (the working set's bound) and of the QP dual lower bound
XI_COLOR = "tab:blue"
#: colour of ``xi'`` (the true risk / new constraint) and of the primal upper bound
XI_NEW_COLOR = HIGHLIGHT
#: smallest legend font size in these figures (points)
LEGEND_SIZE = 9

__all__ = [
    "XI_COLOR",
    "XI_NEW_COLOR",
    "augment",
    "constraint_plane",
    "most_violated",
    "hinge_risk",
    "plane_values",
    "lower_bound",
    "slice_points",
    "line_endpoints",
    "CuttingPlaneTrace",
    "cutting_plane_trace",
    "CuttingPlaneExplorer",
    "plot_bounds",
    "plot_primal_dual",
    "plot_upper_lower",
    "plot_gap",
    "plot_ocas_lines",
    "plot_ocas_weights",
    "plot_xi",
    "iterations_sweep",
    "plot_sweep",
]


# --------------------------------------------------------------------------
# geometry on plain arrays
# --------------------------------------------------------------------------
def augment(X, B=1.0):
    """``Z = [X, B]`` (dense): the constant feature that models the bias."""
    X = np.asarray(X, float)
    return np.column_stack([X, np.full(X.shape[0], float(B))])


def constraint_plane(Z, y, c):
    """``(d_c, g_c)`` of the OP2 constraint ``c`` (boolean mask over examples):
    ``d_c = mean(c)``, ``g_c = (1/n) sum_i c_i y_i z_i``."""
    c = np.asarray(c, bool)
    y = np.asarray(y, float)
    n = len(y)
    return float(c.sum()) / n, (Z.T @ (c * y)) / n


def most_violated(Z, y, v):
    """The most violated constraint at ``v``: ``c_i = [y_i v.z_i < 1]``."""
    return np.asarray(y, float) * (Z @ np.asarray(v, float)) < 1.0


def hinge_risk(Z, y, V):
    """``R(v)`` for each row ``v`` of ``V`` (or a single vector)."""
    V = np.atleast_2d(np.asarray(V, float))
    m = np.asarray(y, float)[:, None] * (Z @ V.T)
    out = np.maximum(0.0, 1.0 - m).mean(axis=0)
    return out


def plane_values(offsets, G, V):
    """``d_k - v.g_k`` for every plane k (rows) and point v (columns)."""
    offsets = np.asarray(offsets, float).reshape(-1)
    G = np.asarray(G, float).reshape(len(offsets), -1)
    V = np.atleast_2d(np.asarray(V, float))
    return offsets[:, None] - G @ V.T


def lower_bound(offsets, G, V):
    """Cutting-plane model ``max(0, max_k d_k - v.g_k)`` at each row of ``V``
    (the zero constraint c = 0 is always valid, hence the 0)."""
    V = np.atleast_2d(np.asarray(V, float))
    if len(np.asarray(offsets).reshape(-1)) == 0:
        return np.zeros(len(V))
    return np.maximum(0.0, plane_values(offsets, G, V).max(axis=0))


def slice_points(v_from, v_to, ts):
    """Points ``v(t) = v_from + t (v_to - v_from)`` for ``t`` in ``ts``."""
    v_from = np.asarray(v_from, float)
    return v_from[None, :] + np.asarray(ts, float)[:, None] * (np.asarray(v_to, float) - v_from)[None, :]


def line_endpoints(w, b, level, xlim, ylim):
    """Endpoints of ``w[0] x + w[1] y + b = level`` clipped to the box, or
    ``([nan, nan], [nan, nan])`` if the line misses it (or w = 0)."""
    w0, w1 = float(w[0]), float(w[1])
    (x0, x1), (y0, y1) = xlim, ylim
    pts = []
    if abs(w1) > 1e-300:
        for x in (x0, x1):
            yy = (level - b - w0 * x) / w1
            if y0 - 1e-12 <= yy <= y1 + 1e-12:
                pts.append((x, yy))
    if abs(w0) > 1e-300:
        for yy in (y0, y1):
            x = (level - b - w1 * yy) / w0
            if x0 - 1e-12 <= x <= x1 + 1e-12:
                pts.append((x, yy))
    if len(pts) < 2:
        return np.array([np.nan, np.nan]), np.array([np.nan, np.nan])
    pts = np.array(pts)
    # the two most distant candidates (corners may appear twice)
    d = ((pts[:, None, :] - pts[None, :, :]) ** 2).sum(-1)
    i, j = np.unravel_index(np.argmax(d), d.shape)
    return pts[[i, j], 0], pts[[i, j], 1]


# --------------------------------------------------------------------------
# traces from the solver's records
# --------------------------------------------------------------------------
@dataclass
class CuttingPlaneTrace:
    """Arrays of one recorded cutting-plane fit (classification).

    ``V[k]`` augmented iterate of record k; ``masks[k]`` its constraint c;
    ``offsets[k], G[k]`` the plane of c computed here from the mask;
    ``xi, xi_new, primal, dual, gap, ws_size`` the record's numbers;
    ``v_final`` the fitted (augmented) weights; ``B`` the constant feature.

    The final stopping check (Algorithm 1, line "until xi' <= xi + epsilon"),
    recomputed here from the data and the fitted model, not read from the
    solver: ``final_xi`` is the working set's bound ``max(0, max_k d_k -
    v*.g_k)`` at ``v_final``, ``final_xi_new`` the hinge risk there,
    ``final_primal = 1/2 |v*|^2 + C final_xi_new``, ``final_dual`` the OP3
    dual value ``sum_k alpha_k d_k - 1/2 |sum_k alpha_k g_k|^2`` of the final
    multipliers, ``final_gap = final_primal - final_dual``; ``final_mask`` is
    the most violated constraint at ``v_final`` (found, checked, not added).
    """

    Z: np.ndarray
    y: np.ndarray
    B: float
    C: float
    epsilon: float
    V: np.ndarray
    masks: np.ndarray
    offsets: np.ndarray
    G: np.ndarray
    xi: np.ndarray
    xi_new: np.ndarray
    primal: np.ndarray
    dual: np.ndarray
    gap: np.ndarray
    ws_size: np.ndarray
    v_final: np.ndarray
    records: list
    estimator: object
    fit_seconds: float
    final_xi: float = np.nan
    final_xi_new: float = np.nan
    final_primal: float = np.nan
    final_dual: float = np.nan
    final_gap: float = np.nan
    final_mask: np.ndarray = None

    def __len__(self):
        return len(self.records)

    @property
    def stopped(self):
        """``True`` when the final check passed: ``xi' <= xi + epsilon``."""
        return bool(self.final_xi_new <= self.final_xi + self.epsilon)


def _pm(y, classes):
    return np.where(np.asarray(y) == classes[1], 1.0, -1.0)


def cutting_plane_trace(estimator, X, y, max_steps=None):
    """Fit ``estimator`` (a :class:`~svmlab.CuttingPlaneClassifier`) with a
    callback, keep every record, and compute the planes from the records'
    constraint masks, and the final stopping check from the fitted model
    (see :class:`CuttingPlaneTrace`).  ``X`` dense (the notebook's small data)."""
    trace = record_trace(estimator, X, y, max_steps=max_steps)
    records, secs = trace.records, trace.fit_seconds
    if not records:
        raise ValueError("the fit produced no iterations (already optimal at w = 0)")
    B = 1.0 if estimator.fit_intercept else 0.0
    Xd = X.toarray() if hasattr(X, "toarray") else np.asarray(X, float)
    Z = augment(Xd, B)
    ypm = _pm(y, estimator.classes_)

    def aug(w, b):
        return np.concatenate([np.asarray(w, float).ravel(), [b / B if B else 0.0]])

    V = np.array([aug(r.w, r.b) for r in records])
    masks = np.array([np.asarray(r.constraint, bool) for r in records])
    planes = [constraint_plane(Z, ypm, m) for m in masks]
    offsets = np.array([p[0] for p in planes])
    G = np.array([p[1] for p in planes])
    v_final = aug(estimator.coef_[0], estimator.intercept_[0])
    # the stopping check at the final w, from our planes and the data
    C = float(estimator.C)
    final_xi = float(lower_bound(offsets, G, v_final)[0])
    final_xi_new = float(hinge_risk(Z, ypm, v_final)[0])
    alpha = np.asarray(estimator.dual_coef_, float).ravel()
    if len(alpha) == len(offsets):
        wa = alpha @ G
        final_dual = float(alpha @ offsets - 0.5 * wa @ wa)   # OP3's dual objective
    else:  # stopped early by max_steps: the fitted multipliers are not all recorded
        final_dual = np.nan
    final_primal = 0.5 * float(v_final @ v_final) + C * final_xi_new   # OP2's objective
    f = np.array
    return CuttingPlaneTrace(
        Z=Z, y=ypm, B=B, C=C, epsilon=float(estimator.epsilon), V=V,
        masks=masks, offsets=offsets, G=G,
        xi=f([r.xi for r in records]), xi_new=f([r.xi_new for r in records]),
        primal=f([r.primal for r in records]), dual=f([r.dual for r in records]),
        gap=f([r.gap for r in records]), ws_size=f([r.working_set_size for r in records]),
        v_final=v_final, records=records, estimator=estimator, fit_seconds=secs,
        final_xi=final_xi, final_xi_new=final_xi_new, final_primal=final_primal,
        final_dual=final_dual, final_gap=final_primal - final_dual,
        final_mask=most_violated(Z, ypm, v_final))


def slice_direction(trace, k):
    """The 1-D slice shown at record k: ``v(t) = v_k + t L u`` with ``u`` the
    unit vector from ``v_k`` towards the final solution ``v*`` (along ``v*``
    itself when they coincide) and ``L = |v*|``, so the slice keeps a
    readable width even when ``v_k`` is close to ``v*``.  Returns
    ``(v_k, v_k + L u, t_star)`` where ``t_star`` is the position of ``v*``
    on the slice (``nan`` if ``v*`` is not on it).  ``k = len(trace)`` is
    the final stopping check: the slice runs through ``v*`` along ``v*``."""
    vk = trace.V[k] if k < len(trace) else trace.v_final
    L = float(np.linalg.norm(trace.v_final)) or 1.0
    d = trace.v_final - vk
    nd = float(np.linalg.norm(d))
    if nd <= 1e-9 * (1.0 + L):
        u = trace.v_final / L if np.linalg.norm(trace.v_final) > 0 else np.eye(len(vk))[0]
        t_star = 0.0
    else:
        u = d / nd
        t_star = nd / L
    return vk, vk + L * u, t_star


# --------------------------------------------------------------------------
# the explorer
# --------------------------------------------------------------------------
#: subplot parameters of :class:`CuttingPlaneExplorer` (fixed, so that a
#: reused figure and a new one are laid out alike; ``tight_layout`` gives
#: nearly these for the teaching data, but costs a text-measuring pass)
LAYOUT = dict(left=0.06, right=0.985, bottom=0.075, top=0.955, wspace=0.16, hspace=0.36)


def iteration_axis_end(n):
    """The last iteration on the x axis of the explorer's lower panels that
    shows ``n`` iterations (``K`` records and the final check): a step, not
    ``n`` itself (:func:`svmlab.viz._common.stepped_count_end`)."""
    return stepped_count_end(n)


def iteration_ticks(end):
    """Integer ticks from 1 to ``end`` (at most 6 of them, at a 1-2-5 step)."""
    step = next(s * 10 ** e for e in range(6) for s in (1, 2, 5) if end / (s * 10 ** e) <= 6)
    return [t for t in range(0, int(end) + 1, int(step)) if t >= 1]


def _nice_ceil(v):
    mag = 10.0 ** np.floor(np.log10(v))
    return next(m * mag for m in (1.0, 2.0, 2.5, 5.0, 10.0) if m * mag >= v * (1 - 1e-12))


#: the lower panels' lines fill at most 1 / LEGEND_BAND of a panel's height:
#: the band above them holds the legend
LEGEND_BAND = 1.5


def xi_axis_limits(values):
    """The y range of the explorer's xi panel: the largest value rounded up
    to a 1-2-2.5-5 step, times :data:`LEGEND_BAND` (room for the legend)."""
    top = LEGEND_BAND * _nice_ceil(max(float(np.max(values)), 1e-3))
    return (-0.04 * top, top)


#: the explorer's gap panel draws gaps below this fraction of C epsilon at
#: it (the title gives the final gap's value)
GAP_FLOOR = 1e-4


def gap_axis_limits(gaps, Ceps, final_gap=None):
    """The log y range of the explorer's gap panel, in whole decades: a
    decade below the smallest of the gaps and ``C epsilon``, and above the
    largest as many decades again as :data:`LEGEND_BAND` leaves for the
    legend."""
    vals = [float(np.min(gaps)), float(np.max(gaps)), Ceps]
    if final_gap is not None:
        vals.append(final_gap)
    lo = int(np.floor(np.log10(min(vals)))) - 1
    hi = int(np.ceil(np.log10(max(vals))))
    top = hi + max(1, int(np.ceil((LEGEND_BAND - 1) * (hi - lo))))
    return (10.0 ** lo, 10.0 ** top)


def _check_trace(trace):
    if trace.Z.shape[1] != 3:
        raise ValueError("the explorer's data panel needs 2-D points")
    if len(trace) == 0:
        raise ValueError("the trace has no records")


def _hashable(v):
    """``v`` (a number or a tuple of numbers) as a hashable tuple of floats."""
    return tuple(float(x) for x in np.ravel(v))


class CuttingPlaneExplorer(Explorer):
    """Four panels over the records of one fit on 2-D data.

    * data: classes, the separating line and margins of ``w_k``, and the new
      constraint c_k as the highlighted subset of points;
    * the hinge risk along a 1-D slice through ``w_k`` (towards ``w*``), the
      planes of the working set so far (grey), the new plane (red) and their
      maximum, the cutting-plane lower bound (blue); at ``t = 0`` the bound
      equals ``xi`` and the new plane touches the risk at ``xi'``.  The
      y-range follows the risk curve of each frame (so the curve stays
      readable late in the fit, when it is flat);
    * ``xi`` and ``xi'`` per iteration (stop when ``xi' <= xi + epsilon``);
    * the gap ``primal - dual`` per iteration (log scale) and the stopping
      band ``gap <= C epsilon`` (shaded).

    With ``stop_frame=True`` (the default) a last frame shows the final
    check at ``w*``: all planes grey, the constraint found there dashed (it
    is not added), ``xi' - xi <= epsilon`` in the titles and a star at
    "stop" in the two lower panels.  So ``n_frames = len(trace) + 1``;
    ``stop_frame=False`` gives one frame per record, as before.

    ``update(k)`` only changes artists; :meth:`player` wraps it in a Play +
    slider widget.
    """


    # -- the explorer protocol (svmlab.viz._protocol) ----------------------
    @classmethod
    def from_fit(cls, fit):
        return cls(fit.trace)

    def reset(self, fit):
        """Show ``fit.trace`` in the same figure (see :meth:`_reset`)."""
        return self._reset(fit.trace)

    def record(self, k):
        """The record frame ``k`` shows: the frame after the last record
        (the final check of Algorithm 1, which adds no constraint) shows the
        last record's lines."""
        recs = self.trace.records
        return recs[min(int(k), len(recs) - 1)]

    def __init__(self, trace: CuttingPlaneTrace, n_t=121, t_range=(-0.6, 1.2), figsize=(8.5, 6.75),
                 dpi=96, stop_frame=True):
        _check_trace(trace)
        self._stop_frame_arg = bool(stop_frame)
        self.ts = np.linspace(*t_range, n_t)
        self.fig = fig = new_figure(figsize=figsize, dpi=dpi)
        axes = fig.subplots(2, 2).ravel()
        self.ax_data, self.ax_risk, self.ax_xi, self.ax_bounds = axes
        # a fixed layout (close to what tight_layout gives for these panels):
        # it does not depend on the data, so reset() can keep the figure
        fig.subplots_adjust(**LAYOUT)
        self._lower_state = None
        self._make_lower()
        self._draw(trace)
        freeze_label_positions(fig)

    def _reset(self, trace: CuttingPlaneTrace):
        """Show another trace (new data, C, epsilon ...) in the same figure,
        with the pixels of a new explorer on ``trace`` (with the same
        ``n_t``, ``t_range`` and ``stop_frame``).  No new figure, no layout
        pass, and the canvas' text caches stay warm: what
        :func:`svmlab.viz.live.live_cutting_plane` does after every refit.

        On the same points the data panel (points, legend, limits:
        functions of the points) and the risk panel's static parts (x range,
        label, legend) are those a new explorer would draw: their artists
        stay, only the number of plane lines follows the trace
        (:meth:`_match_plane_lines`).  Other points: both are cleared and
        drawn again.  The two lower panels keep their artists always: their
        lines are animated and their ranges are stepped functions of the
        trace (:func:`iteration_axis_end`, :func:`xi_axis_limits`,
        :func:`gap_axis_limits`), so their static parts (ticks, tick labels,
        legend) change only when a range steps.

        Returns True when no static pixel changed (the player keeps its
        cached background and draws the animated artists on it), else the
        axes whose static parts changed (a player draws only those into its
        background)."""
        _check_trace(trace)
        from ._reuse import clear_for_redraw

        old = self.trace
        same_points = (old.Z.shape == trace.Z.shape and np.array_equal(old.Z, trace.Z)
                       and np.array_equal(old.y, trace.y))
        if same_points:
            self.trace = trace
            self._match_plane_lines(len(trace))
        else:
            for ax in (self.ax_data, self.ax_risk):
                clear_for_redraw(ax)  # like ax.cla(), but keeps the ticks
            self._draw_data(trace)
            self._draw_risk(trace)
        changed = self._draw_lower(trace)
        stale = changed + ([] if same_points else [self.ax_data, self.ax_risk])
        if stale:
            freeze_label_positions(self.fig, axes=stale)
        stale = changed + ([] if same_points else [self.ax_data])
        return stale if stale else True

    def _match_plane_lines(self, K):
        """Give the risk panel ``K`` plane lines, in the drawing order of a
        new explorer's: surplus lines are removed; missing ones are made as
        :meth:`_draw_risk` makes them, and the lines that a new explorer
        creates after the plane lines are taken out and added again after
        them (their data reset to the construction's, so that the axes' data
        limits are those of a new explorer)."""
        axr, n_t = self.ax_risk, len(self.ts)
        while len(self.plane_lines) > K:
            self.plane_lines.pop().remove()
        if len(self.plane_lines) == K:
            return
        tail = [self.check_line, self.lb_line, self.xi_pt, self.xinew_pt, self.zero_line,
                self.star_line]
        for ln in tail:
            ln.remove()
        self.plane_lines += [self._plane_line() for _ in range(K - len(self.plane_lines))]
        self.check_line.set_ydata(np.zeros(n_t))
        self.lb_line.set_ydata(np.zeros(n_t))
        self.xi_pt.set_data([0], [0])
        self.xinew_pt.set_data([0], [0])
        self.star_line.set_xdata([0.0, 0.0])
        for ln in tail:
            axr.add_line(ln)

    def _plane_line(self):
        return self.ax_risk.plot(self.ts, np.zeros(len(self.ts)), "-", color=NEUTRAL, lw=0.8,
                                 alpha=0.7)[0]

    def _draw(self, trace):
        """Draw ``trace`` into the (empty) four axes and create the artists
        that :meth:`update` changes."""
        self._draw_data(trace)
        self._draw_risk(trace)
        self._draw_lower(trace)

    def _draw_data(self, trace):
        """The data panel's points, legend and line artists (a function of
        the points only: :meth:`update` sets the lines and the title)."""
        axd = self.ax_data
        tr = trace
        X2 = tr.Z[:, :2]
        for lab in (-1, 1):
            m = tr.y == lab
            axd.scatter(X2[m, 0], X2[m, 1], s=22, color=CLASS_COLORS[lab], zorder=2,
                        label=f"$y = {lab:+d}$")
        self.ring = axd.scatter(X2[tr.masks[0], 0], X2[tr.masks[0], 1], s=110,
                                facecolors="none", edgecolors=HIGHLIGHT, linewidths=1.5,
                                zorder=3, label="constraint $c$")
        pad = 0.1 * np.ptp(X2, axis=0)
        self.xlim = (X2[:, 0].min() - pad[0], X2[:, 0].max() + pad[0])
        # an empty band at the top holds the legend, clear of the points
        self.ylim = (X2[:, 1].min() - pad[1], X2[:, 1].max() + 3.5 * pad[1])
        axd.set_xlim(self.xlim)
        axd.set_ylim(self.ylim)
        axd.set_xticks([])   # the toy set's coordinates mean nothing: no tick text to draw
        axd.set_yticks([])
        (self.sep,) = axd.plot([], [], "k-", lw=1.5)
        (self.mplus,) = axd.plot([], [], "k--", lw=0.8)
        (self.mminus,) = axd.plot([], [], "k--", lw=0.8)
        axd.legend(fontsize=LEGEND_SIZE, loc="upper center", ncol=3, framealpha=0.9,
                   handletextpad=0.3, columnspacing=1.0)
        self.title_data = axd.set_title("", fontsize=9, y=1.0)

    def _draw_risk(self, trace):
        """The risk panel's artists, one plane line per record."""
        axr, n_t = self.ax_risk, len(self.ts)
        (self.risk_line,) = axr.plot(self.ts, np.zeros(n_t), "k-", lw=2, label="hinge risk $R(w)$")
        self.plane_lines = [self._plane_line() for _ in range(len(trace))]
        # the constraint of the final check (found at w*, not added)
        (self.check_line,) = axr.plot(self.ts, np.zeros(n_t), "--", color=XI_NEW_COLOR, lw=1.4,
                                      visible=False)
        (self.lb_line,) = axr.plot(self.ts, np.zeros(n_t), "-", color=XI_COLOR, lw=2,
                                   label="max of planes")
        (self.xi_pt,) = axr.plot([0], [0], "o", color=XI_COLOR, ms=7, label=r"$\xi$")
        (self.xinew_pt,) = axr.plot([0], [0], "o", color=XI_NEW_COLOR, ms=7, label=r"$\xi'$")
        self.zero_line = axr.axvline(0.0, color="k", lw=0.5, ls=":")
        self.star_line = axr.axvline(0.0, color="tab:green", lw=1, ls="--",
                                     label="$w^*$ (final)")
        axr.set_xlabel(r"$t$:  $w = w_k + t\,|w^*|\,u$,  $u$ towards $w^*$", fontsize=9)
        axr.legend(fontsize=LEGEND_SIZE, loc="upper center", ncol=3, framealpha=0.9,
                   handletextpad=0.3, columnspacing=0.8, handlelength=1.5)
        self.title_risk = axr.set_title("", fontsize=9, y=1.0)

    def _make_lower(self):
        """The two lower panels' artists, made once: their data is set by
        :meth:`_draw_lower` for each trace (they are animated, so that a
        refit draws them over the cached background).  The legends sit in a
        band at the top of each panel that the ranges keep clear of the
        lines, so they can stay in the background."""
        axx, axb = self.ax_xi, self.ax_bounds
        (self.xi_new_line,) = axx.plot([], [], "o-", color=XI_NEW_COLOR, ms=3,
                                       label=r"$\xi'$ (risk at $w_k$)")
        (self.xi_line,) = axx.plot([], [], "o-", color=XI_COLOR, ms=3,
                                   label=r"$\xi$ (working set)")
        (self.xi_eps_line,) = axx.plot([], [], ":", color=XI_COLOR, lw=1,
                                       label=r"$\xi + \varepsilon$")
        (self.xi_new_star,) = axx.plot([], [], "*", color=XI_NEW_COLOR, ms=11, zorder=4)
        (self.xi_star,) = axx.plot([], [], "*", color=XI_COLOR, ms=11, zorder=4,
                                   label=r"stop check at $w^*$")
        self.cur_xi = axx.axvline(1, color="k", lw=0.8)
        axx.set_xlabel("iteration")
        axx.set_title(r"$\xi$ against $\xi'$", fontsize=9, y=1.0)
        axx.legend(fontsize=LEGEND_SIZE, framealpha=0.9, loc="upper center", ncol=2,
                   handletextpad=0.3, columnspacing=0.8, handlelength=1.5)

        from matplotlib.patches import Rectangle

        axb.set_yscale("log")
        (self.gap_line,) = axb.plot([], [], "o-", color=XI_NEW_COLOR, ms=3,
                                    label="primal $-$ dual")
        self.gap_band = axb.add_patch(Rectangle(
            (0.0, 1e-3), 1.0, 1e-3, transform=axb.get_yaxis_transform(), color=XI_COLOR,
            alpha=0.12, lw=0, label=r"stop: gap $\leq C\varepsilon$"))
        (self.gap_stop_line,) = axb.plot([0.0, 1.0], [1e-3, 1e-3], color=XI_COLOR, ls="--",
                                         lw=1, transform=axb.get_yaxis_transform())
        (self.gap_star,) = axb.plot([], [], "*", color="k", ms=12, zorder=4,
                                    label=r"final check at $w^*$")
        self.cur_b = axb.axvline(1, color="k", lw=0.8)
        axb.set_xlabel("iteration")
        axb.legend(fontsize=LEGEND_SIZE, framealpha=0.9, loc="upper center", ncol=2,
                   handletextpad=0.3, columnspacing=0.8, handlelength=1.5)
        self.title_b = axb.set_title("", fontsize=9, y=1.0)
        for ax in (axx, axb):
            ax.set_autoscale_on(False)

    def _draw_lower(self, trace):
        """Set the lower panels' lines to ``trace`` (xi, xi' and xi + epsilon
        per iteration; the gap, the band up to C epsilon; the final check
        at ``w*`` as stars at ``K + 1``), their stepped ranges, then frame 0
        of ``trace`` and the list of animated artists.  Returns the lower
        axes whose ranges (so static pixels) changed."""
        axx, axb = self.ax_xi, self.ax_bounds
        self.trace = tr = trace
        K = len(tr)
        self.stop_frame = self._stop_frame_arg and np.isfinite(tr.final_xi_new)
        # iterations 1..K on the x axes of the lower panels; the final check at K + 1
        self.x_stop = K + 1   # where the final check is drawn in the lower panels
        it = np.arange(1, K + 1)
        self.xi_new_line.set_data(it, tr.xi_new)
        self.xi_line.set_data(it, tr.xi)
        final = (tr.final_xi, tr.final_xi_new) if self.stop_frame else None
        xs = np.arange(1, K + 1 + (final is not None))
        ys = np.append(tr.xi, final[0]) if final is not None else tr.xi
        self.xi_eps_line.set_data(xs, ys + tr.epsilon)
        for star, val in ((self.xi_new_star, 1), (self.xi_star, 0)):
            star.set_data([K + 1], [final[val]] if final is not None else [np.nan])
            star.set_visible(final is not None)
        Ceps = tr.C * tr.epsilon
        # gaps below GAP_FLOOR C epsilon (the final check's, often round-off)
        # are drawn at that floor: the range does not follow round-off
        floor = GAP_FLOOR * Ceps
        gaps = np.maximum(tr.gap, floor)
        self.gap_line.set_data(it, gaps)
        final_gap = max(tr.final_gap, floor) if self.stop_frame else None
        self.gap_star.set_data([K + 1], [final_gap if final_gap is not None else np.nan])
        self.gap_star.set_visible(final_gap is not None)
        end = iteration_axis_end(K + 1)
        state = {axx: (end, xi_axis_limits(np.concatenate(
                     [tr.xi, tr.xi_new, ys + tr.epsilon, [] if final is None else final]))),
                 axb: (end, gap_axis_limits(gaps, Ceps, final_gap))}
        old = self._lower_state or {}
        changed = [ax for ax in (axx, axb) if old.get(ax) != state[ax]]
        for ax in changed:
            end, ylim = state[ax]
            ax.set_xlim(0.5, end + 0.5)
            ax.set_xticks(iteration_ticks(end))
            ax.set_ylim(*ylim)
        self._lower_state = state
        # the static pixels of each lower panel are a function of its ranges:
        # a player keeps them per key (a refit back to these ranges restores them)
        axx._svmlab_static_key = ("cutting plane xi",) + tuple(map(_hashable, state[axx]))
        axb._svmlab_static_key = ("cutting plane gap",) + tuple(map(_hashable, state[axb]))
        bottom = state[axb][1][0]
        self.gap_band.set_y(bottom)
        self.gap_band.set_height(Ceps - bottom)
        self.gap_stop_line.set_ydata([Ceps, Ceps])
        self.k = None
        self.update(0)
        # the risk panel's y-axis changes with the frame: it is redrawn with
        # the other changing artists (first, so the curves lie on top); the
        # lower panels' lines follow the trace and come before the frame's
        # cursor (a player draws them first, as refit_artists)
        self.animated = [self.ax_risk.yaxis, self.ring, self.sep, self.mplus, self.mminus,
                         self.title_data, self.risk_line, *self.plane_lines, self.check_line,
                         self.lb_line, self.star_line, self.xi_pt, self.xinew_pt, self.title_risk,
                         self.xi_new_line, self.xi_line, self.xi_eps_line,
                         self.xi_new_star, self.xi_star, self.cur_xi,
                         self.gap_band, self.gap_line, self.gap_stop_line,
                         self.gap_star, self.cur_b, self.title_b]
        #: the animated artists that change with the trace, not with the
        #: frame (a player draws them once per refit, under the frame's)
        self.refit_artists = [self.xi_new_line, self.xi_line, self.xi_eps_line,
                              self.xi_new_star, self.xi_star, self.gap_band, self.gap_line,
                              self.gap_stop_line, self.gap_star]
        return changed

    @property
    def n_frames(self):
        return len(self.trace) + (1 if self.stop_frame else 0)

    def is_stop(self, k):
        """Whether frame ``k`` is the final stopping check (not a record)."""
        return self.stop_frame and int(k) == len(self.trace)

    # data drawn at frame k (also what the tests check)
    def frame_data(self, k):
        """What frame ``k`` draws.  For a record ``k``: the risk and the planes
        ``0..k`` along the slice (plane ``k`` is the new one), the lower bound
        of planes ``0..k-1``, the points of ``c_k``.  For the stop frame: the
        slice through ``w*``, all planes, their bound, and the constraint
        found at ``w*`` (``check_plane``)."""
        tr = self.trace
        k = int(k)
        stop = self.is_stop(k)
        v0, v1, t_star = slice_direction(tr, k)
        Vs = slice_points(v0, v1, self.ts)
        risk = hinge_risk(tr.Z, tr.y, Vs)
        n_old = len(tr) if stop else k
        planes = plane_values(tr.offsets[: n_old + (0 if stop else 1)],
                              tr.G[: n_old + (0 if stop else 1)], Vs)
        lb = lower_bound(tr.offsets[:n_old], tr.G[:n_old], Vs)
        v = tr.v_final if stop else tr.V[k]
        mask = tr.final_mask if stop else tr.masks[k]
        out = {"V": Vs, "risk": risk, "planes": planes, "lower_bound": lb,
               "highlight": np.flatnonzero(mask), "t_star": t_star, "v": v, "stop": stop,
               "lb_at_wk": float(lower_bound(tr.offsets[:n_old], tr.G[:n_old], v)[0]),
               "risk_at_wk": float(hinge_risk(tr.Z, tr.y, v)[0])}
        if stop:
            off, g = constraint_plane(tr.Z, tr.y, mask)
            out["check_plane"] = plane_values([off], g[None, :], Vs)[0]
        # the risk panel's y-range: the risk curve of this frame fills the
        # lower two thirds (the legend sits above it)
        top = max(float(risk.max()), out["risk_at_wk"], 1e-3)
        out["ylim"] = (-0.06 * top, 1.45 * top)
        return out

    def update(self, k):
        tr = self.trace
        k = int(k)
        fd = self.frame_data(k)
        stop = fd["stop"]
        X2 = tr.Z[:, :2]
        self.ring.set_offsets(X2[fd["highlight"]] if len(fd["highlight"]) else np.zeros((0, 2)))
        v = fd["v"]
        b = v[2] * tr.B
        for art, lev in ((self.sep, 0.0), (self.mplus, 1.0), (self.mminus, -1.0)):
            art.set_data(*line_endpoints(v[:2], b, lev, self.xlim, self.ylim))
        where = "stop check at $w^*$" if stop else f"iteration {k + 1}"
        self.title_data.set_text(f"{where}: $|c|$ = {len(fd['highlight'])} of "
                                 f"{len(tr.y)} points with $y_i(w^\\top x_i + b) < 1$")
        self.ax_risk.set_ylim(*fd["ylim"])
        self.risk_line.set_ydata(fd["risk"])
        for j, ln in enumerate(self.plane_lines):
            if j < len(fd["planes"]):
                new = (j == k) and not stop
                ln.set_ydata(fd["planes"][j])
                ln.set_visible(True)
                ln.set_color(HIGHLIGHT if new else NEUTRAL)
                ln.set_linewidth(1.6 if new else 0.8)
            else:
                ln.set_visible(False)
        self.check_line.set_visible(stop)
        if stop:
            self.check_line.set_ydata(fd["check_plane"])
        self.lb_line.set_ydata(fd["lower_bound"])
        self.star_line.set_xdata([fd["t_star"], fd["t_star"]])
        self.xi_pt.set_data([0.0], [fd["lb_at_wk"]])
        self.xinew_pt.set_data([0.0], [fd["risk_at_wk"]])
        x = self.x_stop if stop else k + 1
        self.cur_xi.set_xdata([x, x])
        self.cur_b.set_xdata([x, x])
        eps, Ceps = tr.epsilon, tr.C * tr.epsilon
        if stop:
            d = tr.final_xi_new - tr.final_xi
            rel = r"\leq" if tr.stopped else ">"
            self.title_risk.set_text(rf"stop: $\xi' - \xi$ = {d:.2g} ${rel}\ \varepsilon$ = {eps:g}"
                                     f"   $|W|$ = {len(tr)}")
            self.title_b.set_text(f"final gap = {tr.final_gap:.3g} "
                                  rf"(${rel}\ C\varepsilon$ = {Ceps:.3g})")
            self.k = k
            le = "&le;" if tr.stopped else "&gt;"
            return (f"stopping check at the final <i>w</i>*: &xi;&prime; &minus; &xi; = {d:.5f} "
                    f"{le} &epsilon; = {eps:g}, so primal &minus; dual = "
                    f"{tr.final_gap:.4f} {le} C&epsilon; = {Ceps:.4g}: "
                    f"<b>{'stop' if tr.stopped else 'not converged'}</b>")
        self.title_risk.set_text(rf"$\xi$ = {tr.xi[k]:.4f}   $\xi'$ = {tr.xi_new[k]:.4f}   "
                                 f"$|W|$ = {int(tr.ws_size[k])}")
        self.title_b.set_text(f"gap = {tr.gap[k]:.3g}  "
                              + rf"(stop at $C\varepsilon$ = {Ceps:.3g})")
        self.k = k
        return (f"iteration {k + 1}/{len(tr)}: &xi;&prime; &minus; &xi; = "
                f"{tr.xi_new[k] - tr.xi[k]:.4f} &gt; &epsilon; = {eps:g}: add <i>c</i>, re-solve; "
                f"primal {tr.primal[k]:.4f}, dual {tr.dual[k]:.4f}")

    def frame_labels(self):
        """The slider's readout: the iteration number (as in the caption),
        and ``"stop"`` for the final check."""
        return [str(k + 1) for k in range(len(self.trace))] + (["stop"] if self.stop_frame else [])

    def player(self, interval=600, start=0):
        return FramePlayer(self.fig, self.n_frames, self.update, interval=interval,
                           description="iteration", animated=self.animated, start=start,
                           refit_artists=self.refit_artists,
                           labels=self.frame_labels())


def plot_xi(ax, trace_or_xi, xi_new=None, epsilon=None, stop=True, final=None):
    """``xi`` (blue, :data:`XI_COLOR`) and ``xi'`` (red, :data:`XI_NEW_COLOR`)
    per iteration, with ``xi + epsilon`` dotted.

    Call it with a :class:`CuttingPlaneTrace` (its final check is drawn as
    stars at iteration ``K + 1`` when ``stop``), or with arrays
    ``plot_xi(ax, xi, xi_new, epsilon, final=(xi, xi_new))`` (the ordinal
    notebook).  Returns the ``xi'`` line."""
    if isinstance(trace_or_xi, CuttingPlaneTrace):
        tr = trace_or_xi
        xi, xi_new, epsilon = tr.xi, tr.xi_new, tr.epsilon
        if stop and np.isfinite(tr.final_xi_new):
            final = (tr.final_xi, tr.final_xi_new)
    else:
        xi = np.asarray(trace_or_xi, float)
        xi_new = np.asarray(xi_new, float)
    it = np.arange(1, len(xi) + 1)
    (ln,) = ax.plot(it, xi_new, "o-", color=XI_NEW_COLOR, ms=3, label=r"$\xi'$ (risk at $w_k$)")
    ax.plot(it, xi, "o-", color=XI_COLOR, ms=3, label=r"$\xi$ (working set)")
    if epsilon is not None:
        xs = np.arange(1, len(xi) + 1 + (final is not None))
        ys = np.append(xi, final[0]) if final is not None else xi
        ax.plot(xs, ys + epsilon, ":", color=XI_COLOR, lw=1, label=r"$\xi + \varepsilon$")
    if final is not None:
        x = len(xi) + 1
        ax.plot([x], [final[1]], "*", color=XI_NEW_COLOR, ms=11, zorder=4)
        ax.plot([x], [final[0]], "*", color=XI_COLOR, ms=11, zorder=4,
                label=r"stop check at $w^*$")
        _label_stop_tick(ax, len(xi))
    ax.set_xlabel("iteration")
    ax.legend(fontsize=LEGEND_SIZE, framealpha=0.9)
    return ln


def _label_stop_tick(ax, K):
    """Integer iteration ticks, and "stop" at ``K + 1`` (the final check)."""
    step = max(1, int(np.ceil(K / 6)))
    ticks = list(range(1, K + 1, step))
    if K + 1 - ticks[-1] < max(1, step / 2) and len(ticks) > 1:
        ticks = ticks[:-1]
    ax.set_xticks(ticks + [K + 1], [str(t) for t in ticks] + ["stop"])
    ax.set_xlim(0.5, K + 1.5)


def plot_bounds(ax, trace, log_gap=True, stop=True):
    """Gap ``primal - dual`` per iteration (log axis by default) and the
    stopping band ``gap <= C epsilon`` shaded; with ``stop`` the final check
    at ``w*`` (recomputed in :func:`cutting_plane_trace`) is a star at
    ``K + 1``: it lies inside the band when the fit converged.  Returns the
    gap line."""
    K = len(trace)
    it = np.arange(1, K + 1)
    Ceps = trace.C * trace.epsilon
    gaps = np.maximum(trace.gap, 1e-16)
    (ln,) = ax.plot(it, gaps, "o-", color=XI_NEW_COLOR, ms=3, label="primal $-$ dual")
    if log_gap:
        ax.set_yscale("log")
    has_final = stop and np.isfinite(trace.final_gap)
    # a final gap of exactly 0 would put the log axis' bottom at 0
    lo_data = min(gaps.min(), max(trace.final_gap, 1e-16) if has_final else np.inf)
    bottom = (min(lo_data, Ceps) / 10) if log_gap else 0.0
    ax.axhspan(bottom, Ceps, color=XI_COLOR, alpha=0.12, lw=0,
               label=r"stop: gap $\leq C\varepsilon$")
    ax.axhline(Ceps, color=XI_COLOR, ls="--", lw=1)
    if has_final:
        ax.plot([K + 1], [max(trace.final_gap, 1e-16)], "*", color="k", ms=12, zorder=4,
                label=r"final check at $w^*$")
        _label_stop_tick(ax, K)
    ax.set_ylim(bottom=bottom)
    ax.set_xlabel("iteration")
    ax.legend(fontsize=LEGEND_SIZE, framealpha=0.9)
    return ln


def plot_primal_dual(ax, trace, stop=True):
    """The primal upper bound (red) and the QP dual lower bound (blue) per
    iteration; with ``stop`` the final check at ``w*`` as stars at "stop",
    where the two are within ``C epsilon``.  Returns the primal line."""
    K = len(trace)
    it = np.arange(1, K + 1)
    (ln,) = ax.plot(it, trace.primal, "o-", color=XI_NEW_COLOR, ms=3,
                    label=r"primal $\frac{1}{2}|w|^2 + C\xi'$ (upper bound)")
    ax.plot(it, trace.dual, "o-", color=XI_COLOR, ms=3, label="QP dual (lower bound)")
    if stop and np.isfinite(trace.final_gap):
        ax.plot([K + 1], [trace.final_primal], "*", color=XI_NEW_COLOR, ms=11, zorder=4)
        ax.plot([K + 1], [trace.final_dual], "*", color=XI_COLOR, ms=11, zorder=4,
                label=r"final check at $w^*$")
        _label_stop_tick(ax, K)
    ax.set_xlabel("iteration")
    ax.legend(fontsize=LEGEND_SIZE, framealpha=0.9)
    return ln


# --------------------------------------------------------------------------
# Algorithm 1 and OCAS side by side (Franc & Sonnenburg, svmlab.cutting_plane._ocas)
# --------------------------------------------------------------------------
def plot_upper_lower(ax, records, label, color, marker="o"):
    """Upper and lower bound per iteration of one recorded fit: each record's
    ``primal`` (solid) and ``dual`` (dashed), in one colour.

    Works for both kinds of record.  For Algorithm 1
    (:class:`svmlab.cutting_plane.estimators.CuttingPlaneRecord`) ``primal`` is
    ``F(w_k)`` at the iterate itself, which can go *up* from one iteration
    to the next; for OCAS (:class:`svmlab.cutting_plane._ocas.OcasRecord`) it is ``F`` at
    the best-so-far point, which never goes up.  ``dual`` is in both cases
    the reduced problem's value (OP3), a lower bound on ``min F``.  Only the
    records are drawn (the final stopping check, which adds no cut, is not a
    record).  Returns ``(primal line, dual line)``."""
    if not records:
        raise ValueError("no records to plot")
    it = np.arange(1, len(records) + 1)
    primal = np.array([r.primal for r in records], float)
    dual = np.array([r.dual for r in records], float)
    (up,) = ax.plot(it, primal, marker + "-", color=color, ms=4,
                    label=f"{label}: primal (upper bound)")
    (lo,) = ax.plot(it, dual, marker + "--", color=color, ms=4, mfc="white",
                    label=f"{label}: reduced problem (lower bound)")
    ax.set_xlabel("iteration")
    ax.legend(fontsize=LEGEND_SIZE, framealpha=0.9)
    return up, lo


def plot_gap(ax, records, label, color, marker="o", C_epsilon=None):
    """The gap ``primal - dual`` of each record on a log axis (both kinds of
    record, see :func:`plot_upper_lower`); with ``C_epsilon`` a dotted line
    at the stopping threshold ``gap <= C epsilon``.  Returns the line."""
    if not records:
        raise ValueError("no records to plot")
    it = np.arange(1, len(records) + 1)
    gap = np.array([r.primal - r.dual for r in records], float)
    (ln,) = ax.plot(it, np.maximum(gap, 1e-16), marker + "-", color=color, ms=4, label=label)
    ax.set_yscale("log")
    if C_epsilon is not None:
        ax.axhline(C_epsilon, color="0.4", ls=":", lw=1.2)
        ax.annotate(r"stop: gap $\leq C\varepsilon$", (1, C_epsilon), xytext=(2, 3),
                    textcoords="offset points", fontsize=LEGEND_SIZE, color="0.3")
    ax.set_xlabel("iteration")
    ax.set_ylabel("primal $-$ lower bound")
    ax.legend(fontsize=LEGEND_SIZE, framealpha=0.9)
    return ln


#: colour of OCAS's reduced-problem solutions w_t (purple: blue and orange are the classes)
OCAS_REDUCED_COLOR = VIOLATOR
#: line styles of the three OCAS points in the pictures below
OCAS_STYLES = {
    "best": dict(color="k", ls="-", lw=2.0, label=r"best so far $w_b$"),
    "reduced": dict(color=OCAS_REDUCED_COLOR, ls="--", lw=1.6, label=r"reduced solution $w_t$"),
    "cut": dict(color=XI_NEW_COLOR, ls=":", lw=2.0, label=r"cutting point $w_c$"),
}


def plot_ocas_lines(ax, X, y, record, classes=None):
    """The data and the decision lines ``w.x + b = 0`` of the three points of
    one OCAS record (2-D data): the best-so-far ``w_b`` after the line search
    (``record.w, record.b``), the reduced problem's solution ``w_t``
    (``reduced_w, reduced_b``) and the cutting point ``w_c`` between them
    (``cut_w, cut_b``); circled, the points of the new cut (margin below 1
    at ``w_c``).  ``classes`` (default: the sorted labels) gives which label
    is +1.  A line that misses the view is left out of the picture and of
    the legend."""
    X = np.asarray(X, float)
    if X.ndim != 2 or X.shape[1] != 2:
        raise ValueError(f"plot_ocas_lines draws 2-D data; X has shape {X.shape}")
    y = np.asarray(y)
    classes = np.unique(y) if classes is None else np.asarray(classes)
    ypm = np.where(y == classes[-1], 1.0, -1.0)
    for lab in (-1, 1):
        m = ypm == lab
        ax.scatter(X[m, 0], X[m, 1], s=18, color=CLASS_COLORS[lab], marker=CLASS_MARKERS[lab],
                   alpha=0.7, zorder=2)
    pad = 0.1 * (X.max(0) - X.min(0))
    xlim = (X[:, 0].min() - pad[0], X[:, 0].max() + pad[0])
    ylim = (X[:, 1].min() - pad[1], X[:, 1].max() + pad[1])
    if record.constraint is not None:
        c = np.asarray(record.constraint, bool)
        ax.scatter(X[c, 0], X[c, 1], s=70, facecolors="none", edgecolors=XI_NEW_COLOR,
                   lw=1.0, zorder=3, label=r"new cut: margin $<1$ at $w_c$")
    for key, (w, b) in (("reduced", (record.reduced_w, record.reduced_b)),
                        ("cut", (record.cut_w, record.cut_b)),
                        ("best", (record.w, record.b))):
        xs, ys = line_endpoints(w, b, 0.0, xlim, ylim)
        if np.all(np.isfinite(xs)):
            ax.plot(xs, ys, zorder=4, **OCAS_STYLES[key])
    ax.set_xlim(xlim)
    ax.set_ylim(ylim)
    ax.set_aspect("equal", adjustable="box")
    ax.legend(fontsize=LEGEND_SIZE, framealpha=0.9, loc="best")


def plot_ocas_weights(ax, records, k):
    """OCAS in weight space (the first two weights ``w_1, w_2``): the path of
    the best-so-far points (black) and of the reduced solutions (blue, which
    jump about), and at iteration ``k`` (1-based) the segment of the line
    search from the previous best point ``w_b^old`` (``0`` at ``k = 1``)
    towards ``w_t``, with the new best point ``w_b = w_b^old + step (w_t -
    w_b^old)`` and the cutting point ``w_c = (1 - mu) w_b + mu w_t``."""
    K = len(records)
    if not 1 <= k <= K:
        raise ValueError(f"k must be between 1 and {K}, got {k}")
    best = np.array([np.asarray(r.w, float)[:2] for r in records])
    red = np.array([np.asarray(r.reduced_w, float)[:2] for r in records])
    ax.plot(best[:, 0], best[:, 1], "o-", color="k", ms=4, lw=1.2, label=r"best so far $w_b$")
    ax.plot(red[:, 0], red[:, 1], "o--", color=OCAS_REDUCED_COLOR, ms=4, lw=0.8, mfc="white",
            label=r"reduced solutions $w_t$")
    r = records[k - 1]
    old = best[k - 2] if k >= 2 else np.zeros(2)
    wt, wb, wc = red[k - 1], best[k - 1], np.asarray(r.cut_w, float)[:2]
    ax.plot([old[0], wt[0]], [old[1], wt[1]], "-", color="0.6", lw=5, alpha=0.4, zorder=1,
            label=f"line search at iteration {k}")
    ax.plot(*old, "s", color="0.4", ms=8, zorder=3, label=r"$w_b^{old}$")
    ax.plot(*wt, "D", color=OCAS_REDUCED_COLOR, ms=8, zorder=3)
    ax.plot(*wb, "*", color="k", ms=15, zorder=4,
            label=rf"new $w_b$ (step $k$ = {r.step:.2f})")
    ax.plot(*wc, "P", color=XI_NEW_COLOR, ms=10, zorder=4,
            label=rf"cutting point $w_c$ ($\mu$ = {r.mu:g})")
    ax.set_xlabel("$w_1$")
    ax.set_ylabel("$w_2$")
    ax.legend(fontsize=LEGEND_SIZE, framealpha=0.9, loc="best")


# --------------------------------------------------------------------------
# iterations against n, epsilon and C
# --------------------------------------------------------------------------
def iterations_sweep(make_estimator, X, y, values, param, random_state=0):
    """Fit ``make_estimator()`` for each value and return ``(n_iter, seconds)``.

    ``param`` is ``"n"`` (values are nested random subset sizes of ``X``),
    or an estimator parameter name such as ``"epsilon"`` or ``"C"`` (set with
    ``set_params`` on the full ``X``).
    """
    from .scale import nested_subsets

    iters, secs = [], []
    if param == "n":
        subsets = nested_subsets(X.shape[0], values, random_state=random_state)
    for j, v in enumerate(values):
        est = make_estimator()
        if param == "n":
            idx = subsets[j]
            Xs, ys = X[idx], np.asarray(y)[idx]
        else:
            est.set_params(**{param: v})
            Xs, ys = X, y
        t0 = time.perf_counter()
        est.fit(Xs, ys)
        secs.append(time.perf_counter() - t0)
        iters.append(int(est.n_iter_))
    return np.array(iters), np.array(secs)


def plot_sweep(ax, values, iters, xlabel, logx=True, label=None):
    """Iterations against a swept quantity (log x axis by default)."""
    (ln,) = ax.plot(values, iters, "o-", label=label)
    if logx:
        from matplotlib.ticker import NullFormatter

        ax.set_xscale("log")
        # 2x10^3, 3x10^3, ... between the decades would overlap in a narrow panel
        ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(xlabel)
    ax.set_ylabel("iterations")
    ax.grid(True, which="both", alpha=0.3)
    return ln
