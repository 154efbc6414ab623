"""IRWLS-SVC made visible (Perez-Cruz et al. 2000), for ``notebooks/05_irwls.ipynb``.

IRWLS rewrites the SVC primal as a weighted least-squares problem,
``1/2 ||w||^2 + 1/2 sum_i a_i e_i^2`` with ``e_i = y_i - f(x_i)``, and
re-weights after every solve with eq. (8)::

    a_i = 0               if e_i y_i < 0     (outside the margin: S2, beta = 0)
    a_i = C / (e_i y_i)   if e_i y_i > 0     (inside / wrong side: S3, beta = C y_i)
    a_i = infinite        if e_i y_i = 0     (on the margin: S1, 0 < y beta < C)

so that ``beta_i = a_i e_i`` is 0, ``C y_i`` or free.  Records
(:class:`svmlab.decomposition.irwls.IRWLSRecord`) hold, over the current working set, the
weights, ``e_i y_i``, ``beta``, ``b`` and the S1/S2/S3 membership; this
module folds them into global per-iteration arrays (samples outside the
working set keep their last values) and draws them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ._protocol import Explorer

from ._common import (record_trace, CLASS_COLORS, CLASS_MARKERS, HIGHLIGHT, NEUTRAL, SET_COLORS,
                      FramePlayer, freeze_label_positions, new_figure, stepped_count_end)

__all__ = [
    "irwls_weight",
    "irwls_beta",
    "SET_NAMES",
    "set_colors",
    "plot_weight_function",
    "plot_multiplier_function",
    "IRWLSTrace",
    "irwls_trace",
    "IRWLSExplorer",
    "chunk_raster",
    "compare_strategies",
]

S1, S2, S3 = 1, 2, 3
SET_NAMES = {S1: r"S1: $0 < y\beta < C$", S2: r"S2: $\beta = 0$", S3: r"S3: $y\beta = C$"}
#: smallest legend font size (points)
LEGEND_SIZE = 9
_SET_KEY = {S1: "free", S2: "zero", S3: "bound"}


def irwls_weight(ye, C):
    """Eq. (8): ``a(e y) = 0`` for ``e y < 0``, ``C / (e y)`` for ``e y > 0``,
    ``inf`` at ``e y = 0``."""
    ye = np.asarray(ye, float)
    with np.errstate(divide="ignore"):
        a = np.where(ye > 0, C / np.where(ye > 0, ye, 1.0), 0.0)
    return np.where(ye == 0, np.inf, a)


def irwls_beta(ye, C):
    """``y beta = a e y``: 0 for ``e y < 0`` and ``C`` for ``e y > 0`` (S1's
    value at ``e y = 0`` is whatever the least-squares solve gives; nan)."""
    ye = np.asarray(ye, float)
    return np.where(ye > 0, float(C), np.where(ye < 0, 0.0, np.nan))


def set_colors(sets):
    """RGBA colours for a membership array (1 = S1, 2 = S2, 3 = S3)."""
    from matplotlib.colors import to_rgba

    table = {k: to_rgba(SET_COLORS[v]) for k, v in _SET_KEY.items()}
    return np.array([table[int(s)] for s in np.asarray(sets)])


def plot_weight_function(ax, C, ye_range=(-1.5, 3.0), a_max=None, n=400):
    """The weight function (8) with its S1/S2/S3 regions.  Returns the curve
    (a ``Line2D``; its data are exactly ``irwls_weight`` on the grid)."""
    lo, hi = ye_range
    a_max = 4.0 * C if a_max is None else a_max
    ye = np.linspace(lo, hi, n)
    ye = ye[ye != 0]
    a_plot = _clipped_weights(ye, C, a_max)
    (curve,) = ax.plot(ye, a_plot, "k-", lw=1.8, label="$a(e y)$ of eq. (8)")
    ax.axvspan(lo, 0, color=SET_COLORS["zero"], alpha=0.25, lw=0)
    ax.axvspan(0, hi, color=SET_COLORS["bound"], alpha=0.12, lw=0)
    ax.axvline(0, color=SET_COLORS["free"], lw=3, alpha=0.8)
    # region labels: S2 left of the green S1 line, S1 and S3 right of it,
    # S1's label low (the curve C/(e y) is high near 0), S3's at the top right
    ax.text(lo + 0.04 * (hi - lo), 0.84 * a_max, "S2: $a = 0$\n" + r"($\beta = 0$)",
            fontsize=9, va="top")
    ax.text(0.45 * hi, 0.84 * a_max, r"S3: $a = C/(e y)$" + "\n" + r"($y\beta = C$)",
            fontsize=9, va="top")
    ax.text(0.03 * (hi - lo), 0.12 * a_max, "S1: $a = \\infty$\n($e = 0$)", fontsize=9,
            color=SET_COLORS["free"], va="bottom")
    ax.set_xlim(lo, hi)
    ax.set_ylim(-0.05 * a_max, a_max)
    ax.set_xlabel("$e_i y_i = 1 - y_i f(x_i)$")
    ax.set_ylabel("weight $a_i$")
    return curve


def plot_multiplier_function(ax, C, ye_range=(-1.5, 3.0), n=451):
    """``y_i beta_i = a_i e_i y_i`` against ``e_i y_i`` (eq. 8 times ``e y``):
    0 for ``e y < 0`` (S2), ``C`` for ``e y > 0`` (S3), and at ``e y = 0`` the
    S1 samples, whose value anywhere in ``[0, C]`` comes from the
    least-squares solve (a green segment).  Returns the step curve."""
    ye = np.linspace(*ye_range, n)
    (curve,) = ax.plot(ye, irwls_beta(ye, C), "k-", lw=2, label=r"$y_i\beta_i$ (S2, S3)")
    ax.plot([0, 0], [0, C], color=SET_COLORS["free"], lw=4, alpha=0.8,
            label=r"S1: any value in $[0, C]$")
    ax.set_xlabel("$e_i y_i$")
    ax.set_ylabel(r"$y_i\beta_i = a_i e_i y_i$")
    ax.legend(fontsize=LEGEND_SIZE, loc="center right")
    return curve


def nice_ceil(x, steps=(1.0, 2.0, 2.5, 5.0)):
    """The smallest ``m * 10**e`` at or above ``x > 0`` with ``m`` in
    ``steps``.  The explorer's C-dependent axis ranges take these values, so
    that a range (its ticks and tick labels, the cached background of its
    panel) changes only when C crosses a step, and a new explorer at the same
    C gets the same range (a function of the data, not of the refits before)."""
    x = float(x)
    if not x > 0 or not np.isfinite(x):
        raise ValueError(f"nice_ceil needs a finite positive number, got {x!r}")
    e = np.floor(np.log10(x))
    for base in (10.0 ** (e - 1), 10.0 ** e):
        for m in steps:
            v = float(m * base)
            if v >= x * (1 - 1e-12):
                return v
    return float(10.0 ** (e + 1))


def weight_axis_top(C):
    """Top of the explorer's weight panel: the 1-2-2.5-5 value at or above
    ``2.5 C`` (so between 2.5 C and 5 C; :func:`plot_weight_function`'s own
    default is 4 C)."""
    return nice_ceil(2.5 * float(C))


def beta_axis_limits(ab, C):
    """y range of the explorer's ``y beta`` panel for the values ``ab`` of all
    records: from ``lo`` (0, or ``-nice_ceil(-min(ab))`` when some value is
    negative: a step too, so that the range does not follow the smallest
    value of every refit) up to ``lo`` plus a nice value (see
    :func:`nice_ceil`) at or above ``1.05 (hi - lo)``, ``hi = max(ab, C)``;
    6 % of the span below ``lo``."""
    m = float(np.min(ab))
    lo, hi = (-nice_ceil(-m) if m < 0 else 0.0), max(float(np.max(ab)), float(C))
    top = lo + nice_ceil(1.05 * (hi - lo))
    return (lo - 0.06 * (top - lo), top)


def _clipped_weights(ye, C, a_max):
    a = irwls_weight(ye, C)
    return np.where(a > a_max * 1.05, np.nan, a)


# --------------------------------------------------------------------------
# traces
# --------------------------------------------------------------------------
@dataclass
class IRWLSTrace:
    """Global per-record arrays of one IRWLS fit.

    ``beta[k]``, ``sets[k]`` (n,): beta and membership of every sample after
    record k (samples outside that record's working set keep their last
    values; at the start beta = 0, all in S2).  ``b[k]``, ``chunk[k]``,
    ``working_set[k]`` (indices), ``records``.
    """

    y: np.ndarray
    C: float
    beta: np.ndarray
    sets: np.ndarray
    b: np.ndarray
    chunk: np.ndarray
    working_set: list
    records: list
    estimator: object
    fit_seconds: float

    def __len__(self):
        return len(self.records)


def irwls_trace(estimator, X, y, max_steps=None):
    """Fit ``estimator`` (an :class:`~svmlab.IRWLSClassifier`) with a callback
    and fold its records into global arrays (see :class:`IRWLSTrace`)."""
    # IRWLSRun.blas_threads: set once for the fit, not at every step
    trace = record_trace(estimator, X, y, max_steps=max_steps, blas_threads=1)
    records, secs = trace.records, trace.fit_seconds
    n = X.shape[0]
    ypm = np.where(np.asarray(y) == estimator.classes_[1], 1.0, -1.0)
    beta = np.zeros(n)
    sets = np.full(n, S2, np.int8)
    B, SETS = [], []
    for r in records:
        beta[r.working_set] = r.beta
        sets[r.working_set] = r.sets
        B.append(beta.copy())
        SETS.append(sets.copy())
    return IRWLSTrace(
        y=ypm, C=float(estimator.C), beta=np.array(B), sets=np.array(SETS),
        b=np.array([r.b for r in records]), chunk=np.array([r.chunk for r in records]),
        working_set=[np.asarray(r.working_set) for r in records], records=records,
        estimator=estimator, fit_seconds=secs)


def chunk_raster(trace):
    """``(K, n)`` int array for an image of the working sets: 0 = not in the
    working set of record k, else 1 + (chunk number mod 2) so consecutive
    chunks alternate colours."""
    K, n = len(trace), len(trace.y)
    R = np.zeros((K, n), np.int8)
    for k, (ws, c) in enumerate(zip(trace.working_set, trace.chunk)):
        R[k, ws] = 1 + (int(c) % 2)
    return R


def set_raster(trace, fade=0.72):
    """``(K, n, 3)`` RGB image of the sets: row k, column i is sample i's set
    after record k in the set colours (S1 green, S2 grey, S3 red), faded
    towards white (by ``fade``) where i is not in record k's working set.
    Unlike :func:`chunk_raster` it shows something when the working set
    holds every sample: how the sets change from iteration to iteration."""
    from matplotlib.colors import to_rgb

    table = np.array([[1.0, 1.0, 1.0]] + [to_rgb(SET_COLORS[_SET_KEY[s]]) for s in (S1, S2, S3)])
    K, n = len(trace), len(trace.y)
    img = np.empty((K, n, 3))
    for k in range(K):
        rgb = table[np.asarray(trace.sets[k], int)]
        out = np.ones(n, bool)
        out[np.asarray(trace.working_set[k], int)] = False
        rgb[out] = fade + (1.0 - fade) * rgb[out]
        img[k] = rgb
    return img


# --------------------------------------------------------------------------
# explorer
# --------------------------------------------------------------------------
#: subplot parameters of :class:`IRWLSExplorer` (fixed, so that a reused
#: figure and a new one are laid out alike; ``tight_layout`` gives nearly
#: these for the teaching data, but costs a text-measuring pass)
LAYOUT = dict(left=0.09, right=0.985, bottom=0.075, top=0.955, wspace=0.22, hspace=0.36)


class IRWLSExplorer(Explorer):
    """Four panels per IRWLS iteration on 2-D data.

    * the data, the class by the marker's shape (circle -1, square +1) and
      the set S1/S2/S3 (global membership after the iteration) by its colour,
      the working set ringed, the decision boundary and margins of that
      iteration's beta and b;
    * the weight function (8) with the working set's ``(e_i y_i, a_i)``
      (S1's infinite weights drawn at the top);
    * ``y_i beta_i`` of every sample (in ``[0, C]`` once feasible), coloured
      by set: beta evolving;
    * the sets of every sample after every iteration (rows), faded outside
      that iteration's working set (:func:`set_raster`), with the current
      iteration marked: chunk after chunk, the working set moves across the
      samples, and the colours show which samples change set.
    """


    # -- the explorer protocol (svmlab.viz._protocol) ----------------------
    @classmethod
    def from_fit(cls, fit):
        """A new explorer for ``fit`` (``fit.params``: kernel, gamma, ...)."""
        return cls(fit.trace, fit.X, **fit.params)

    def reset(self, fit):
        """Show ``fit`` in the same figure (see :meth:`_reset`)."""
        return self._reset(fit.trace, fit.X, **fit.params)

    def record(self, k):
        """The IRWLS record frame ``k`` shows."""
        return self.trace.records[int(self.frames[int(k)])]

    def __init__(self, trace: IRWLSTrace, X, kernel="rbf", gamma="scale", degree=3, coef0=0.0,
                 grid_n=60, figsize=(8.5, 6.75), ye_range=(-1.5, 3.0), frames=None, dpi=96):
        self._grid_n = int(grid_n)
        self._ye_range = ye_range
        self.fig = fig = new_figure(figsize=figsize, dpi=dpi)
        axes = fig.subplots(2, 2).ravel()
        self.ax_data, self.ax_w, self.ax_beta, self.ax_chunk = axes
        # a fixed layout (close to what tight_layout gives for these panels):
        # it does not depend on the data, so reset() can keep the figure
        fig.subplots_adjust(**LAYOUT)
        self._draw(trace, X, kernel, gamma, degree, coef0, frames)
        freeze_label_positions(fig)

    def _reset(self, trace: IRWLSTrace, X, kernel="rbf", gamma="scale", degree=3, coef0=0.0,
              frames=None):
        """Show another fit (new data, C, kernel, selection ...) in the same
        figure: the four axes are cleared and drawn again as the constructor
        draws them, so the pixels equal those of a new explorer with the same
        arguments (``grid_n``, ``ye_range``, ``figsize``, ``dpi`` stay those
        given to the constructor).  No new figure and no layout pass: what
        :func:`svmlab.viz.live.live_irwls` does after every refit.

        Returns the list ``[weights, y beta, sets]`` of axes when the points,
        their classes and the kernel are those shown (a change of C, the
        selection or the working-set size): the data panel's static pixels
        (frame, legend; no ticks) stay, its artists are kept and only the
        three other axes are drawn again (a player draws just those into its
        background).  Otherwise ``False``: every axes is drawn again."""
        X = self._check(trace, X)  # refuse before anything is cleared
        from ._reuse import clear_for_redraw

        gamma = getattr(trace.estimator, "gamma_", gamma)
        same = (self._data_key is not None and X.shape == self.X.shape
                and np.array_equal(X, self.X) and np.array_equal(trace.y, self.trace.y)
                and self._data_key == (kernel, gamma, degree, coef0))
        # the weight and y beta panels' static parts are functions of their
        # (snapped) ranges: kept when those are the ranges shown
        keep_w = same and self._w_key == self._weight_key(trace)
        keep_b = same and self._beta_key == self._beta_key_of(trace)
        # the sets panel's image is animated; its axes are a function of the
        # number of samples and of the (stepped) number of iterations
        keep_c = self._chunk_key == self._chunk_key_of(trace)
        redraw = [ax for ax, keep in ((self.ax_data, same), (self.ax_w, keep_w),
                                      (self.ax_beta, keep_b), (self.ax_chunk, keep_c))
                  if not keep]
        for ax in redraw:
            clear_for_redraw(ax)  # like ax.cla(), but keeps the ticks
        self._draw(trace, X, kernel, gamma, degree, coef0, frames, keep_data=same,
                   keep_w=keep_w, keep_beta=keep_b, keep_chunk=keep_c)
        if redraw:
            freeze_label_positions(self.fig, axes=redraw)
        if not same:
            return False
        return redraw if redraw else True

    _chunk_key = None

    @staticmethod
    def _chunk_key_of(trace):
        return (stepped_count_end(len(trace)), len(trace.y))

    _w_key = _beta_key = None

    def _weight_key(self, trace):
        return (weight_axis_top(trace.C), tuple(self._ye_range))

    @staticmethod
    def _beta_key_of(trace):
        return (beta_axis_limits(trace.y[None, :] * trace.beta, trace.C), len(trace.y))

    @staticmethod
    def _check(trace, X):
        X = np.asarray(X, float)
        if X.ndim != 2 or X.shape[1] != 2:
            raise ValueError("IRWLSExplorer needs 2-D points")
        if len(X) != len(trace.y):
            raise ValueError(f"X has {len(X)} rows but the trace has {len(trace.y)} samples")
        if len(trace) == 0:
            raise ValueError("the trace has no records")
        return X

    _data_key = None

    def _draw(self, trace, X, kernel, gamma, degree, coef0, frames, keep_data=False,
              keep_w=False, keep_beta=False, keep_chunk=False):
        """Draw ``trace`` into the (empty) axes and create the artists that
        :meth:`update` changes; ``keep_data``: the data panel and its
        artists stay as they are (same points, classes and kernel);
        ``keep_w``, ``keep_beta``: the weight and y beta panels keep their
        static artists (same snapped ranges) and only C's curve and line,
        which are animated, are set."""
        X = self._check(trace, X)
        self.trace = tr = trace
        if frames is None:
            frames = np.arange(len(tr))
        elif isinstance(frames, str) and frames == "chunks":
            frames = np.flatnonzero([r.chunk_done for r in tr.records])
        #: record index shown by each frame
        self.frames = np.asarray(frames, int)
        if len(self.frames) == 0:
            raise ValueError("no frames to show")
        gamma = getattr(trace.estimator, "gamma_", gamma)
        if not keep_data:
            self._draw_data(X, kernel, gamma, degree, coef0)
        ye_range = self._ye_range
        axw, axb, axc = self.ax_w, self.ax_beta, self.ax_chunk
        n = len(tr.y)

        # the weight panel's range follows C in steps (weight_axis_top): its
        # curve, a function of C, is animated, the rest a function of the range
        self._w_key = self._weight_key(tr)
        self.a_max = self._w_key[0]
        if keep_w:
            self.curve.set_ydata(_clipped_weights(self.curve.get_xdata(), tr.C, self.a_max))
        else:
            self.curve = plot_weight_function(axw, tr.C, ye_range, self.a_max)
            self.wpts = axw.scatter([], [], s=18, zorder=3, edgecolors="k", linewidths=0.3)
            self.title_w = axw.set_title("weights of the working set", fontsize=9, y=1.0)

        # the y beta panel's range likewise (beta_axis_limits); the line at C
        # is animated
        self._beta_key = self._beta_key_of(tr)
        if keep_beta:
            self.c_line.set_ydata([tr.C, tr.C])
        else:
            self.bpts = axb.scatter(np.arange(n), np.zeros(n), s=12, zorder=3)
            axb.axhline(0, color=NEUTRAL, lw=0.8)
            self.c_line = axb.axhline(tr.C, color=NEUTRAL, lw=0.8, ls="--")
            axb.set_ylim(*self._beta_key[0])
            axb.set_xlim(-1, n)
            axb.set_xlabel("sample $i$")
            axb.set_ylabel(r"$y_i\beta_i$  $(= \alpha_i)$")
            self.title_beta = axb.set_title("", fontsize=9, y=1.0)

        # the sets panel: its image (one row per iteration) is animated, over
        # axes whose rows end at a step (stepped_count_end) and not at the
        # trace's length, so a refit keeps them until the count steps
        self._chunk_key = self._chunk_key_of(tr)
        extent = (-0.5, n - 0.5, len(tr) + 0.5, 0.5)
        if keep_chunk:
            self.set_image.set_data(set_raster(tr))
            self.set_image.set_extent(extent)
        else:
            axc.set_autoscale_on(False)
            self.set_image = axc.imshow(set_raster(tr), aspect="auto", interpolation="nearest",
                                        extent=extent)
            axc.set_xlim(-0.5, n - 0.5)
            axc.set_ylim(self._chunk_key[0] + 0.5, 0.5)
            self.cur_row = axc.axhline(1, color="k", lw=1.2)
            axc.set_xlabel("sample $i$")
            axc.set_ylabel("IRWLS iteration")
            axc.set_title("sets after each iteration (faded: outside the working set)",
                          fontsize=9, y=1.0)
        # what each panel's static pixels are a function of: a player keeps
        # them per key and restores them when a refit comes back to it
        axw._svmlab_static_key = ("irwls weights",) + self._w_key
        axb._svmlab_static_key = ("irwls y beta",) + self._beta_key
        axc._svmlab_static_key = ("irwls sets",) + self._chunk_key
        self.k = None
        self.update(0)
        self.animated = [self.ring, self.pts[-1], self.pts[1], self.boundary, self.margins,
                         self.title_data, self.curve, self.wpts, self.c_line, self.bpts,
                         self.title_beta, self.set_image, self.cur_row]
        #: the sets panel's image changes with the trace, not with the frame
        #: (a player draws it once per refit, under the frame's artists)
        self.refit_artists = [self.set_image]

    def _draw_data(self, X, kernel, gamma, degree, coef0):
        """The data panel (empty): the points, the ring of the working set,
        the boundary and margins (drawn per frame), the legend, the title."""
        from matplotlib.collections import LineCollection

        from ._common import DecisionGrid

        self.X = X
        self._data_key = (kernel, gamma, degree, coef0)
        self.grid = DecisionGrid(X, kernel, gamma, degree, coef0, n=self._grid_n)
        axd = self.ax_data
        # data panel: one scatter per class marker, facecolours = set colours
        self._cls_idx = {lab: np.flatnonzero(self.trace.y == lab) for lab in (-1, 1)}
        self.pts = {}
        for lab, idx in self._cls_idx.items():
            self.pts[lab] = axd.scatter(X[idx, 0], X[idx, 1], s=34, marker=CLASS_MARKERS[lab],
                                        edgecolors="k", linewidths=0.6, zorder=3)
        self.ring = axd.scatter([], [], s=120, facecolors="none", edgecolors=SET_COLORS["working"],
                                linewidths=1.2, zorder=2)
        self.boundary = LineCollection([], colors="k", linewidths=1.5)
        self.margins = LineCollection([], colors="k", linewidths=0.8, linestyles="dashed")
        axd.add_collection(self.boundary)
        axd.add_collection(self.margins)
        ex = self.grid.extent
        axd.set_xlim(ex[0], ex[1])
        axd.set_ylim(ex[2], ex[3])
        axd.set_xticks([])   # the toy set's coordinates mean nothing: no tick text to draw
        axd.set_yticks([])
        from matplotlib.lines import Line2D

        handles = [Line2D([], [], ls="", marker="s", mec="k", mew=0.6,
                          color=SET_COLORS[_SET_KEY[s]], label=SET_NAMES[s].split(":")[0])
                   for s in (S1, S2, S3)]
        handles += [Line2D([], [], ls="", marker=CLASS_MARKERS[lab], mfc="white", mec="k",
                           label=f"$y = {lab:+d}$") for lab in (-1, 1)]
        handles.append(Line2D([], [], ls="", marker="o", mfc="none", mec=SET_COLORS["working"],
                              ms=10, label="working set"))
        axd.legend(handles=handles, fontsize=LEGEND_SIZE, loc="lower right", framealpha=0.9,
                   ncol=2, columnspacing=0.6, handletextpad=0.2, borderpad=0.3,
                   labelspacing=0.3)
        self.title_data = axd.set_title("", fontsize=9, y=1.0)


    @property
    def n_frames(self):
        return len(self.frames)

    def frame_data(self, k):
        """What frame ``k`` draws (record ``self.frames[k]``)."""
        tr = self.trace
        k = int(self.frames[k])
        rec = tr.records[k]
        Z = self.grid.values(tr.beta[k], tr.b[k])
        w = np.asarray(rec.weights, float)
        w_plot = np.where(np.isfinite(w), np.minimum(w, self.a_max * 0.98), self.a_max * 0.98)
        return {"sets": tr.sets[k], "working_set": tr.working_set[k], "Z": Z,
                "w_points": np.column_stack([rec.ye, w_plot]),
                "w_sets": np.asarray(rec.sets), "alpha": tr.y * tr.beta[k]}

    def update(self, frame):
        tr = self.trace
        fd = self.frame_data(frame)
        k = int(self.frames[frame])
        cols = set_colors(fd["sets"])
        for lab, idx in self._cls_idx.items():
            self.pts[lab].set_facecolors(cols[idx])
        self.ring.set_offsets(self.X[fd["working_set"]])
        self.boundary.set_segments(self.grid.lines(fd["Z"], 0.0))
        self.margins.set_segments(self.grid.lines(fd["Z"], 1.0) + self.grid.lines(fd["Z"], -1.0))
        rec = tr.records[k]
        cnt = [int(np.sum(fd["sets"] == s)) for s in (S1, S2, S3)]
        self.title_data.set_text(f"iteration {k + 1}, chunk {rec.chunk}: $|S1|$={cnt[0]} "
                                 f"$|S2|$={cnt[1]} $|S3|$={cnt[2]}")
        self.wpts.set_offsets(fd["w_points"])
        self.wpts.set_facecolors(set_colors(fd["w_sets"]))
        self.bpts.set_offsets(np.column_stack([np.arange(len(tr.y)), fd["alpha"]]))
        self.bpts.set_facecolors(cols)
        self.title_beta.set_text(rf"$y_i\beta_i$ after iteration {k + 1} ($b$ = {tr.b[k]:.3f})")
        self.cur_row.set_ydata([k + 1, k + 1])
        self.k = frame
        done = " - working set solved" if rec.chunk_done else ""
        return (f"iteration {k + 1}/{len(tr)}, chunk {rec.chunk}: moved by rules a-d {rec.moved}, "
                f"solve: {rec.method}, mode {rec.mode}{done}")

    def frame_labels(self):
        """The slider's readout: the IRWLS iteration a frame shows (the
        number of the caption; with ``frames="chunks"`` not every iteration
        has a frame)."""
        return [str(int(k) + 1) for k in self.frames]

    def player(self, interval=500, start=0):
        return FramePlayer(self.fig, self.n_frames, self.update, interval=interval,
                           description="iteration", animated=self.animated, start=start,
                           refit_artists=self.refit_artists,
                           labels=self.frame_labels())


# --------------------------------------------------------------------------
# the selection strategies (section 3, and svmlab's default "mixed")
# --------------------------------------------------------------------------
def _dual(K, alpha, y):
    ay = alpha * y
    return float(alpha.sum() - 0.5 * ay @ K @ ay)


def compare_strategies(make_estimator, X, y,
                       strategies=("random", "mixed", "largest", "smallest"),
                       K=None):
    """Fit ``make_estimator(selection=s)`` for each strategy, recording.

    Returns ``{strategy: dict(n_iter, n_chunks, kernel_evaluations, seconds,
    dual, chunk_dual)}`` where ``dual`` is the final dual objective and
    ``chunk_dual`` the dual objective after each completed chunk (needs the
    dense kernel matrix ``K``; pass it for moderate n, else it is skipped).
    ``seconds`` is timed on a second fit without callback (the fast path).
    """
    out = {}
    ypm = None
    for s in strategies:
        est = make_estimator(selection=s)
        tr = irwls_trace(est, X, y)
        ypm = tr.y
        chunk_dual = []
        if K is not None:
            for k, r in enumerate(tr.records):
                if r.chunk_done:
                    a = np.clip(ypm * tr.beta[k], 0.0, tr.C)
                    chunk_dual.append(_dual(K, a, ypm))
        est2 = make_estimator(selection=s)
        t0 = time.perf_counter()
        est2.fit(X, y)
        secs = time.perf_counter() - t0
        dual = _dual(K, est.alpha_, ypm) if K is not None else np.nan
        out[s] = {"n_iter": int(est.n_iter_), "n_chunks": int(est.n_chunks_),
                  "kernel_evaluations": int(est2.kernel_evaluations_), "seconds": secs,
                  "dual": dual, "chunk_dual": np.array(chunk_dual), "estimator": est}
    return out
