"""Chunking, Osuna/SVMlight decomposition and SMO side by side (Platt 1998, Fig. 2).

Platt's Figure 2 contrasts three ways of splitting the SVM dual into
sub-problems: **chunking** (every non-zero multiplier plus the worst
violators: a sub-problem that grows with the number of SVs), **Osuna
decomposition** (a fixed-size working set, solved by a QP engine) and
**SMO** (always two multipliers, solved analytically).  Here each method's
step records (:class:`svmlab.decomposition.estimators.DecompositionRecord` with
``working_set``/``alpha_B``/``b``; :class:`svmlab.smo._estimator.SMOStep` with
``i1, i2, a1_new, a2_new, b_new``) are turned into:

:func:`working_sets`        list of index arrays, one per step
:func:`membership`          boolean (steps x n) matrix: which samples were in each working set
:func:`replay`              alpha and b after every step, rebuilt from the records
:func:`sample_order`        an order of the samples (non-SVs, free SVs, bound SVs) for rasters
:func:`plot_working_set_raster`  Figure 2 as a raster: steps along x, samples along y
:class:`FamilyExplorer`     one 2-D panel per method and a Play/slider over *progress*
                            (0-100 % of each method's own steps), blitted
"""

from __future__ import annotations

import numpy as np

from ._protocol import Explorer

from ._common import (
    CLASS_COLORS,
    CLASS_MARKERS,
    HIGHLIGHT,
    DecisionGrid,
    FramePlayer,
    new_figure,
)

__all__ = ["working_sets", "membership", "replay", "sample_order", "plot_working_set_raster",
           "FamilyExplorer"]


def _is_smo(rec):
    return hasattr(rec, "i1") and hasattr(rec, "i2") and not hasattr(rec, "working_set")


def working_sets(records):
    """The working set of every step, as sorted int arrays."""
    out = []
    for r in records:
        if _is_smo(r):
            out.append(np.array(sorted((int(r.i1), int(r.i2)))))
        else:
            out.append(np.sort(np.asarray(r.working_set, dtype=np.int64)))
    return out


def membership(records, n):
    """Boolean matrix ``M[t, i]``: sample ``i`` is in the working set of step ``t``."""
    M = np.zeros((len(records), n), dtype=bool)
    for t, ws in enumerate(working_sets(records)):
        M[t, ws] = True
    return M


def replay(records, n):
    """Multipliers and intercept after every step: ``alphas[t]`` (``t = 0``:
    all zero) and ``bs[t]``.  SMO records set ``alpha[i1], alpha[i2]``;
    decomposition records set ``alpha[working_set] = alpha_B`` and carry the
    sub-problem's intercept ``b``."""
    T = len(records)
    alphas = np.zeros((T + 1, n))
    bs = np.zeros(T + 1)
    a = np.zeros(n)
    for t, r in enumerate(records, start=1):
        if _is_smo(r):
            a[r.i1] = r.a1_new
            a[r.i2] = r.a2_new
            bs[t] = r.b_new
            if t == 1:
                bs[0] = r.b_old
        else:
            a[np.asarray(r.working_set, dtype=np.int64)] = r.alpha_B
            bs[t] = r.b
        alphas[t] = a
    if T and not _is_smo(records[0]):
        bs[0] = bs[1]
    return alphas, bs


def sample_order(alpha, C, y=None):
    """Order the samples for a raster: non-SVs, then free SVs, then bound SVs
    (within each group by label, then index)."""
    alpha = np.asarray(alpha)
    group = np.where(alpha <= 0, 0, np.where(alpha >= C, 2, 1))
    lab = np.zeros_like(group) if y is None else (np.asarray(y) > 0).astype(int)
    return np.lexsort((np.arange(len(alpha)), lab, group))


def plot_working_set_raster(ax, records, n, order=None, color="k", max_cols=600, title=None):
    """Figure 2 as a raster: one column per step (subsampled to ``max_cols``
    columns for long runs), one row per sample in ``order``; dark cells are
    the working set.  Returns the image artist."""
    M = membership(records, n)
    if order is not None:
        M = M[:, order]
    T = M.shape[0]
    if T > max_cols:  # merge consecutive steps: a cell is dark if any merged step used it
        edges = np.linspace(0, T, max_cols + 1).astype(int)
        M = np.array([M[a:b].any(0) for a, b in zip(edges[:-1], edges[1:])])
    from matplotlib.colors import ListedColormap

    im = ax.imshow(M.T, aspect="auto", interpolation="nearest", origin="lower",
                   cmap=ListedColormap(["white", color]), vmin=0, vmax=1,
                   extent=(0.5, T + 0.5, -0.5, n - 0.5))
    ax.set_xlabel("step")
    ax.set_ylabel("sample")
    if title:
        ax.set_title(title, fontsize=10)
    return im


class FamilyExplorer(Explorer):
    """The three methods on the same 2-D problem, stepped together.

    ``traces`` maps a method name to ``(records, estimator)``.  The slider
    runs over ``n_frames`` values of *progress*: frame ``k`` shows, for each
    method, the state after ``round(k / (n_frames - 1) * T_method)`` of its
    steps -- the decision boundary and margins of the replayed model, its
    support vectors (black rings) and the working set of that step (red).
    """


    # -- the explorer protocol (svmlab.viz._protocol) ----------------------
    @classmethod
    def from_fit(cls, fit):
        """A new explorer for ``fit`` (``fit.trace``: ``{method: (records,
        estimator)}``; ``fit.params``: kernel, gamma, n_frames ...)."""
        return cls(fit.X, fit.y, fit.trace, **fit.params)

    def reset(self, fit):
        """Show ``fit`` in the same figure (see :meth:`_reset`)."""
        return self._reset(fit.X, fit.y, fit.trace, **fit.params)

    def record(self, k):
        """The decomposition record of frame ``k`` (the first one at 0 %)."""
        t = self.step_at("decomposition", k)
        return self.records["decomposition"][max(t, 1) - 1]

    def __init__(self, X, y, traces, kernel="rbf", gamma=1.0, degree=3, coef0=0.0,
                 n_frames=41, grid=50, figsize=(8.5, 3.875), dpi=96):
        self._grid_n = int(grid)
        fig = new_figure(figsize=figsize, dpi=dpi)
        if len(traces) < 1:
            raise ValueError("FamilyExplorer needs at least one method")
        axes = fig.subplots(1, len(traces))
        self._axes = list(np.atleast_1d(axes))
        fig.subplots_adjust(left=0.01, right=0.99, bottom=0.02, top=0.80, wspace=0.05)
        self.fig = fig
        self.suptitle = fig.suptitle("", fontsize=10, y=0.985)
        self._draw(X, y, traces, kernel, gamma, degree, coef0, n_frames)

    def _reset(self, X, y, traces, kernel="rbf", gamma=1.0, degree=3, coef0=0.0, n_frames=None):
        """Show other fits (new data, C, kernel, working-set size ...) in the
        same figure: the panels are cleared and drawn again as the
        constructor draws them, so the pixels equal those of a new explorer
        with the same arguments (``grid``, ``figsize``, ``dpi`` stay the
        constructor's; ``n_frames=None`` keeps the current number).  What
        :func:`svmlab.viz.live.live_family` does after every refit.

        ``traces`` must name as many methods as there are panels.  Returns
        ``False`` when the points, their classes or the kernel changed (a
        player must render its background again); otherwise (a change of
        C, the working-set size or the engine) the panels' static artists
        (the points, the limits, the decision grid) are those a new explorer
        would draw: they stay, the new fits are replayed into the animated
        artists, and ``True`` says that no static pixel changed."""
        if len(traces) != len(self._axes):
            raise ValueError(f"this figure has {len(self._axes)} panels; got {len(traces)} "
                             "methods (build a new FamilyExplorer)")
        from ._reuse import clear_for_redraw

        X = np.asarray(X, float)
        n_frames = self.n_frames if n_frames is None else n_frames
        same = (X.shape == self.X.shape and np.array_equal(X, self.X)
                and np.array_equal(self._y_pm_of(y), self.y_pm)
                and self._kernel_key == (kernel, gamma, degree, coef0)
                and list(traces) == self.names)
        if same:
            self._replay(traces, n_frames)
            return True
        for ax in self._axes:
            clear_for_redraw(ax)  # like ax.cla(), but keeps the ticks
        self._draw(X, y, traces, kernel, gamma, degree, coef0, n_frames)
        return False

    @staticmethod
    def _y_pm_of(y):
        classes = np.unique(y)
        return np.where(np.asarray(y) == classes[1], 1.0, -1.0)

    def _replay(self, traces, n_frames):
        """The records, multipliers and working sets of ``traces`` (what
        :meth:`update` draws), for the points and grid shown."""
        self.names = list(traces)
        self.records = {k: list(v[0]) for k, v in traces.items()}
        self.C = {k: float(v[1].C) for k, v in traces.items()}
        self.states = {k: replay(r, len(self.X)) for k, r in self.records.items()}
        self.ws = {k: working_sets(r) for k, r in self.records.items()}
        self.n_frames = int(n_frames)
        self.frame = None

    def _draw(self, X, y, traces, kernel, gamma, degree, coef0, n_frames):
        """Replay ``traces`` and draw them into the (empty) panels."""
        from matplotlib.collections import LineCollection

        X = np.asarray(X, float)
        self.X = X
        self.y_pm = self._y_pm_of(y)
        self._kernel_key = (kernel, gamma, degree, coef0)
        self.grid = DecisionGrid(X, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0,
                                 n=self._grid_n)
        self._replay(traces, n_frames)
        self.panels = {}
        dyn = []
        for ax, name in zip(self._axes, self.names):
            bnd = LineCollection([], colors="k", linewidths=1.6)
            mar = LineCollection([], colors="k", linewidths=0.9, linestyles="--")
            ax.add_collection(bnd)
            ax.add_collection(mar)
            for lab in (-1, 1):
                m = self.y_pm == lab
                ax.scatter(X[m, 0], X[m, 1], s=18, c=CLASS_COLORS[lab],
                           marker=CLASS_MARKERS[lab], linewidths=0, zorder=2)
            empty = np.empty((0, 2))
            sv = ax.scatter(empty[:, 0], empty[:, 1], s=45, facecolors="none",
                            edgecolors="k", linewidths=0.8, zorder=3)
            wsart = ax.scatter(empty[:, 0], empty[:, 1], s=70, facecolors="none",
                               edgecolors=HIGHLIGHT, linewidths=1.8, zorder=4)
            ax.set_xlim(*self.grid.extent[:2])
            ax.set_ylim(*self.grid.extent[2:])
            ax.set_xticks([])
            ax.set_yticks([])
            title = ax.set_title("", fontsize=9.5, y=1.0)
            self.panels[name] = dict(boundary=bnd, margins=mar, sv=sv, ws=wsart, title=title)
            dyn += [bnd, mar, sv, wsart, title]
        self.suptitle.set_text("")
        dyn.append(self.suptitle)
        self.animated = dyn
        self.frame = None

    def step_at(self, name, k):
        """Steps of ``name`` done at frame ``k`` (0 .. T)."""
        T = len(self.records[name])
        return int(round(k / max(self.n_frames - 1, 1) * T))

    def update(self, k):
        k = int(k)
        parts = []
        for name in self.names:
            p = self.panels[name]
            t = self.step_at(name, k)
            alphas, bs = self.states[name]
            a = alphas[t]
            Z = self.grid.values(a * self.y_pm, bs[t])
            p["boundary"].set_segments(self.grid.lines(Z, 0.0))
            p["margins"].set_segments(self.grid.lines(Z, -1.0) + self.grid.lines(Z, 1.0))
            p["sv"].set_offsets(self.X[a > 0].reshape(-1, 2))
            T = len(self.records[name])
            if t >= 1:
                ws = self.ws[name][t - 1]
                p["ws"].set_offsets(self.X[ws].reshape(-1, 2))
                size = len(ws)
            else:
                p["ws"].set_offsets(np.empty((0, 2)))
                size = 0
            p["title"].set_text(f"{name}\nstep {t}/{T}, |B| = {size}, {int((a > 0).sum())} SVs")
            parts.append(f"<b>{name}</b> step {t}/{T}, |B| = {size}")
        pct = 100.0 * k / max(self.n_frames - 1, 1)
        self.suptitle.set_text(f"progress {pct:.0f} % of each method's steps "
                               "(red: working set of that step)")
        self.frame = k
        return f"progress {pct:.0f} % &middot; " + " &middot; ".join(parts)

    def frame_labels(self):
        """The slider's readout: the progress in percent (as in the caption)."""
        return [f"{100.0 * k / max(self.n_frames - 1, 1):.0f} %" for k in range(self.n_frames)]

    def player(self, interval=400, start=0):
        return FramePlayer(self.fig, self.n_frames, self.update, interval=interval,
                           description="progress", animated=self.animated, start=start,
                           labels=self.frame_labels())
