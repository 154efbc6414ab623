"""Cutting planes made visible (Joachims 2006, Algorithm 1 on OP2), for
``notebooks/03_cutting_plane.ipynb``.

Notation (as :mod:`svmlab.cutting_plane`): augmented points
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
:class:`svmlab.cutting_plane.CuttingPlaneRecord` traces.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ._common import record_trace, CLASS_COLORS, HIGHLIGHT, NEUTRAL, FramePlayer, new_figure

__all__ = [
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

    def __len__(self):
        return len(self.records)


def _pm(y, classes):
    return np.where(np.asarray(y) == classes[1], 1.0, -1.0)


def cutting_plane_trace(estimator, X, y, max_steps=None):
    """Fit ``estimator`` (a :class:`~svmlab.CuttingPlaneClassifier`) with a
    callback, keep every record, and compute the planes from the records'
    constraint masks.  ``X`` dense (the notebook's small data)."""
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
    f = np.array
    return CuttingPlaneTrace(
        Z=Z, y=ypm, B=B, C=float(estimator.C), epsilon=float(estimator.epsilon), V=V,
        masks=masks, offsets=offsets, G=G,
        xi=f([r.xi for r in records]), xi_new=f([r.xi_new for r in records]),
        primal=f([r.primal for r in records]), dual=f([r.dual for r in records]),
        gap=f([r.gap for r in records]), ws_size=f([r.working_set_size for r in records]),
        v_final=aug(estimator.coef_[0], estimator.intercept_[0]),
        records=records, estimator=estimator, fit_seconds=secs)


def slice_direction(trace, k):
    """The 1-D slice shown at record k: ``v(t) = v_k + t L u`` with ``u`` the
    unit vector from ``v_k`` towards the final solution ``v*`` (along ``v*``
    itself when they coincide) and ``L = |v*|``, so the slice keeps a
    readable width even when ``v_k`` is close to ``v*``.  Returns
    ``(v_k, v_k + L u, t_star)`` where ``t_star`` is the position of ``v*``
    on the slice (``nan`` if ``v*`` is not on it)."""
    vk = trace.V[k]
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
class CuttingPlaneExplorer:
    """Four panels over the records of one fit on 2-D data.

    * data: classes, the separating line and margins of ``w_k``, and the new
      constraint c_k as the highlighted subset of points;
    * the hinge risk along a 1-D slice through ``w_k`` (towards ``w*``), the
      planes of the working set so far (grey), the new plane (red) and their
      maximum, the cutting-plane lower bound (blue); at ``t = 0`` the bound
      equals ``xi`` and the new plane touches the risk at ``xi'``;
    * ``xi`` and ``xi'`` per iteration (stop when ``xi' <= xi + epsilon``);
    * the primal upper bound and the QP (dual) lower bound per iteration.

    ``update(k)`` only changes artists; :meth:`player` wraps it in a Play +
    slider widget.
    """

    def __init__(self, trace: CuttingPlaneTrace, n_t=121, t_range=(-0.6, 1.2), figsize=(10, 7.5),
                 dpi=72):
        self.trace = tr = trace
        K = len(tr)
        if tr.Z.shape[1] != 3:
            raise ValueError("the explorer's data panel needs 2-D points")
        self.ts = np.linspace(*t_range, n_t)
        self.fig = fig = new_figure(figsize=figsize, dpi=dpi)
        axd, axr, axx, axb = fig.subplots(2, 2).ravel()
        self.ax_data, self.ax_risk, self.ax_xi, self.ax_bounds = axd, axr, axx, axb
        X2 = tr.Z[:, :2]
        for lab in (-1, 1):
            m = tr.y == lab
            axd.scatter(X2[m, 0], X2[m, 1], s=22, color=CLASS_COLORS[lab], zorder=2,
                        label=f"y = {lab:+d}")
        self.ring = axd.scatter(X2[tr.masks[0], 0], X2[tr.masks[0], 1], s=110,
                                facecolors="none", edgecolors=HIGHLIGHT, linewidths=1.5,
                                zorder=3, label="new constraint c")
        pad = 0.1 * np.ptp(X2, axis=0)
        self.xlim = (X2[:, 0].min() - pad[0], X2[:, 0].max() + pad[0])
        self.ylim = (X2[:, 1].min() - pad[1], X2[:, 1].max() + pad[1])
        axd.set_xlim(self.xlim)
        axd.set_ylim(self.ylim)
        (self.sep,) = axd.plot([], [], "k-", lw=1.5)
        (self.mplus,) = axd.plot([], [], "k--", lw=0.8)
        (self.mminus,) = axd.plot([], [], "k--", lw=0.8)
        axd.legend(fontsize=7, loc="lower right")
        self.title_data = axd.set_title("", fontsize=9)

        (self.risk_line,) = axr.plot(self.ts, np.zeros(n_t), "k-", lw=2, label="hinge risk R(w)")
        self.plane_lines = [axr.plot(self.ts, np.zeros(n_t), "-", color=NEUTRAL, lw=0.8,
                                     alpha=0.7)[0] for _ in range(K)]
        (self.lb_line,) = axr.plot(self.ts, np.zeros(n_t), "-", color="tab:blue", lw=2,
                                   label="max of planes (lower bound)")
        (self.xi_pt,) = axr.plot([0], [0], "o", color="tab:blue", ms=7, label="xi")
        (self.xinew_pt,) = axr.plot([0], [0], "o", color=HIGHLIGHT, ms=7, label="xi'")
        axr.axvline(0.0, color="k", lw=0.5, ls=":")
        self.star_line = axr.axvline(0.0, color="tab:green", lw=1, ls="--", label="w* (final)")
        axr.set_xlabel("t: w = w_k + t |w*| u, u towards w*", fontsize=8)
        axr.legend(fontsize=7, loc="upper right")
        self.title_risk = axr.set_title("", fontsize=9)

        it = np.arange(1, K + 1)
        axx.plot(it, tr.xi_new, "o-", color=HIGHLIGHT, ms=3, label="xi' (new constraint)")
        axx.plot(it, tr.xi, "o-", color="tab:blue", ms=3, label="xi (working set)")
        axx.plot(it, tr.xi + tr.epsilon, ":", color="tab:blue", lw=1, label="xi + epsilon")
        self.cur_xi = axx.axvline(1, color="k", lw=0.8)
        axx.set_xlabel("iteration")
        axx.legend(fontsize=7)
        axx.set_title("xi against xi'", fontsize=9)

        axb.plot(it, tr.primal, "o-", color=HIGHLIGHT, ms=3, label="primal (upper bound)")
        axb.plot(it, tr.dual, "o-", color="tab:blue", ms=3, label="QP dual (lower bound)")
        self.cur_b = axb.axvline(1, color="k", lw=0.8)
        axb.set_xlabel("iteration")
        axb.legend(fontsize=7)
        self.title_b = axb.set_title("", fontsize=9)
        # one y-range for the risk panel over all frames (no limit changes per
        # frame, so the player can blit)
        top = max(max(self.frame_data(k)["risk"].max() for k in range(K)), 1e-3)
        axr.set_ylim(-0.05 * top, 1.1 * top)
        self.k = None
        self.update(0)
        fig.tight_layout()
        self.animated = [self.ring, self.sep, self.mplus, self.mminus, self.title_data,
                         self.risk_line, *self.plane_lines, self.lb_line, self.star_line,
                         self.xi_pt, self.xinew_pt, self.title_risk, self.cur_xi, self.cur_b,
                         self.title_b]

    @property
    def n_frames(self):
        return len(self.trace)

    # data drawn at frame k (also what the tests check)
    def frame_data(self, k):
        tr = self.trace
        v0, v1, t_star = slice_direction(tr, k)
        Vs = slice_points(v0, v1, self.ts)
        risk = hinge_risk(tr.Z, tr.y, Vs)
        planes = plane_values(tr.offsets[: k + 1], tr.G[: k + 1], Vs)
        lb = lower_bound(tr.offsets[:k], tr.G[:k], Vs)
        return {"V": Vs, "risk": risk, "planes": planes, "lower_bound": lb,
                "highlight": np.flatnonzero(tr.masks[k]), "t_star": t_star,
                "lb_at_wk": float(lower_bound(tr.offsets[:k], tr.G[:k], tr.V[k])[0]),
                "risk_at_wk": float(hinge_risk(tr.Z, tr.y, tr.V[k])[0])}

    def update(self, k):
        tr = self.trace
        k = int(k)
        fd = self.frame_data(k)
        X2 = tr.Z[:, :2]
        self.ring.set_offsets(X2[fd["highlight"]] if len(fd["highlight"]) else np.zeros((0, 2)))
        v = tr.V[k]
        b = v[2] * tr.B
        for art, lev in ((self.sep, 0.0), (self.mplus, 1.0), (self.mminus, -1.0)):
            art.set_data(*line_endpoints(v[:2], b, lev, self.xlim, self.ylim))
        self.title_data.set_text(f"iteration {k + 1}: |c| = {len(fd['highlight'])} of "
                                 f"{len(tr.y)} points (y w'x < 1)")
        self.risk_line.set_ydata(fd["risk"])
        for j, ln in enumerate(self.plane_lines):
            if j <= k:
                ln.set_ydata(fd["planes"][j])
                ln.set_visible(True)
                ln.set_color(HIGHLIGHT if j == k else NEUTRAL)
                ln.set_linewidth(1.6 if j == k else 0.8)
            else:
                ln.set_visible(False)
        self.lb_line.set_ydata(fd["lower_bound"])
        self.star_line.set_xdata([fd["t_star"], fd["t_star"]])
        self.xi_pt.set_data([0.0], [fd["lb_at_wk"]])
        self.xinew_pt.set_data([0.0], [fd["risk_at_wk"]])
        self.title_risk.set_text(f"xi = {tr.xi[k]:.4f}   xi' = {tr.xi_new[k]:.4f}   "
                                 f"|W| = {int(tr.ws_size[k])}")
        self.cur_xi.set_xdata([k + 1, k + 1])
        self.cur_b.set_xdata([k + 1, k + 1])
        self.title_b.set_text(f"gap = {tr.gap[k]:.3g}  (stop at C eps = {tr.C * tr.epsilon:.3g})")
        self.k = k
        return (f"iteration {k + 1}/{len(tr)}: xi' - xi = {tr.xi_new[k] - tr.xi[k]:.4f} "
                f"(epsilon = {tr.epsilon:g}), primal {tr.primal[k]:.4f}, dual {tr.dual[k]:.4f}")

    def player(self, interval=600):
        return FramePlayer(self.fig, self.n_frames, self.update, interval=interval,
                           description="iteration", animated=self.animated)


def plot_bounds(ax, trace, log_gap=True):
    """Gap ``primal - dual`` per iteration on a log axis with the stopping
    level ``C epsilon``."""
    it = np.arange(1, len(trace) + 1)
    (ln,) = ax.semilogy(it, np.maximum(trace.gap, 1e-16), "o-", ms=3, label="primal - dual")
    ax.axhline(trace.C * trace.epsilon, color=NEUTRAL, ls="--", label="C epsilon")
    ax.set_xlabel("iteration")
    ax.legend(fontsize=8)
    return ln


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
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("iterations")
    ax.grid(True, which="both", alpha=0.3)
    return ln
