"""Ordinal regression / ROC area with cutting planes (Joachims 2006, OP4/OP5,
Algorithm 2), made visible for ``notebooks/04_ordinal_regression.ipynb``.

Ranks ``y_i`` in ``{1..R}``; the preference pairs are
``P = {(i, j) : y_i > y_j}``, ``m = |P|``.  For scores ``s = X w`` a pair is
violated (``c_ij = 1``) when ``s_i - s_j < 1``.  The most violated
constraint of OP5 is condensed into two counts per example::

    c+_i = #{j : y_j < y_i, s_i - s_j < 1}   (i as the higher-ranked member)
    c-_j = #{i : y_i > y_j, s_i - s_j < 1}   (j as the lower-ranked member)

so that ``sum_ij c_ij = sum_i c+_i`` and
``sum_ij c_ij (x_i - x_j) = sum_i (c+_i - c-_i) x_i``.  The constraint reads
``xi >= (1/m) sum_i c+_i - w' (1/m) sum_i (c+_i - c-_i) x_i``.

The sorted sweep (this module's display version of the paper's O(n log n + Rn)
routine): write ``u_i = s_i - 1/2`` and ``d_j = s_j + 1/2``; pair (i, j) is
violated iff ``u_i < d_j``.  Walk the 2n values from the largest down, keeping
per-rank counters ``a[r]`` (number of ``d`` values of rank r passed) and
``b[r]`` (number of ``u`` values of rank r passed).  At ``u_i`` (rank r):
``c+_i = sum_{r' < r} a[r']``.  At ``d_j`` (rank r):
``c-_j = sum_{r' > r} (N_r' - b[r'])``, the ``u`` values not yet passed.  At
equal values ``u`` is processed before ``d`` (an exact tie is *not* a
violation).  The solver has its own compiled routine; the unit tests check
that both give the same constraint.

Notation, the same in the notebook's text, the widget and its legends: a
``u`` event (``s_i - 1/2``, i as the *higher*-ranked member of its pairs) is
drawn and written as an up triangle (:data:`UP`, "▲"), a ``d`` event
(``s_j + 1/2``, j as the *lower*-ranked member) as a down triangle
(:data:`DOWN`, "▼").  ``SweepTrace.kind`` keeps the letters ``"u"``/``"d"``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._protocol import Explorer

__all__ = [
    "UP",
    "DOWN",
    "SweepTrace",
    "sweep_trace",
    "sweep_counts",
    "brute_force_counts",
    "violated_pairs",
    "constraint_from_counts",
    "pairwise_accuracy",
    "SweepExplorer",
    "plot_pairs",
    "plot_xi_records",
    "final_check",
]

#: symbol of a "u" event (s_i - 1/2: i as the higher-ranked member)
UP = "\u25b2"
#: symbol of a "d" event (s_j + 1/2: j as the lower-ranked member)
DOWN = "\u25bc"
_SYMBOL = {"u": UP, "d": DOWN}
#: bar colours of the quantities an event changes (greys, so they are not
#: mistaken for the rank colours): an up event sets c+ and counts in b[r],
#: a down event sets c- and counts in a[r]
UP_COLOR, DOWN_COLOR = "#4d4d4d", "#b3b3b3"
#: smallest legend font size (points)
LEGEND_SIZE = 9


def _ranks(y):
    y = np.asarray(y)
    if not np.issubdtype(y.dtype, np.integer):
        if not np.all(np.asarray(y, float) == np.round(np.asarray(y, float))):
            raise ValueError("ordinal ranks must be integers")
        y = np.asarray(y, float).astype(np.int64)
    return y.astype(np.int64)


@dataclass(frozen=True)
class SweepTrace:
    """Every event of one sweep (computed once; a slider indexes it).

    ``order`` (2n,): event k visits example ``example[k]``; ``kind[k]`` is
    ``"u"`` (``s_i - 1/2``, i as higher member) or ``"d"``; ``value[k]``.
    ``a[k]``, ``b[k]`` (2n, R): the counters *after* event k.
    ``c_plus[k]``, ``c_minus[k]`` (2n, n): counts known after event k (the
    unknown ones are 0).  ``rank_values``: the sorted distinct ranks ``1..R``
    positions map to.
    """

    scores: np.ndarray
    y: np.ndarray
    rank_values: np.ndarray
    example: np.ndarray
    kind: np.ndarray
    value: np.ndarray
    a: np.ndarray
    b: np.ndarray
    c_plus: np.ndarray
    c_minus: np.ndarray

    @property
    def n_events(self):
        return len(self.example)

    @property
    def final_c_plus(self):
        return self.c_plus[-1]

    @property
    def final_c_minus(self):
        return self.c_minus[-1]


def sweep_trace(scores, y, rank_values=None):
    """Run the sorted sweep step by step and record every event."""
    s = np.asarray(scores, float).ravel()
    y = _ranks(y).ravel()
    if s.shape != y.shape:
        raise ValueError("scores and y must have the same length")
    if rank_values is None:
        rank_values = np.unique(y)
    rank_values = np.asarray(rank_values)
    R = len(rank_values)
    pos = np.searchsorted(rank_values, y)  # rank index 0..R-1
    n = len(s)
    N = np.bincount(pos, minlength=R)
    vals = np.concatenate([s - 0.5, s + 0.5])
    ex = np.concatenate([np.arange(n), np.arange(n)])
    is_d = np.concatenate([np.zeros(n, bool), np.ones(n, bool)])
    # descending by value; at ties "u" (is_d False) first
    order = np.lexsort((is_d, -vals))
    a = np.zeros(R, np.int64)
    b = np.zeros(R, np.int64)
    cp = np.zeros(n, np.int64)
    cm = np.zeros(n, np.int64)
    A = np.empty((2 * n, R), np.int64)
    B = np.empty((2 * n, R), np.int64)
    CP = np.empty((2 * n, n), np.int64)
    CM = np.empty((2 * n, n), np.int64)
    for k, e in enumerate(order):
        i = ex[e]
        r = pos[i]
        if not is_d[e]:
            cp[i] = a[:r].sum()
            b[r] += 1
        else:
            cm[i] = (N[r + 1:] - b[r + 1:]).sum()
            a[r] += 1
        A[k], B[k], CP[k], CM[k] = a, b, cp, cm
    return SweepTrace(s, y, rank_values, ex[order], np.where(is_d[order], "d", "u"),
                      vals[order], A, B, CP, CM)


def sweep_counts(scores, y):
    """``(c_plus, c_minus)`` from the sorted sweep (final counts only)."""
    tr = sweep_trace(scores, y)
    return tr.final_c_plus, tr.final_c_minus


def brute_force_counts(scores, y):
    """``(c_plus, c_minus)`` by enumerating all pairs, O(n^2) (for checks)."""
    s = np.asarray(scores, float).ravel()
    y = _ranks(y).ravel()
    viol = (y[:, None] > y[None, :]) & ((s[:, None] - s[None, :]) < 1.0)
    return viol.sum(axis=1), viol.sum(axis=0)


def violated_pairs(scores, y):
    """``(i, j)`` index arrays of all preference pairs with ``s_i - s_j < 1``
    (small n only: enumerates pairs)."""
    s = np.asarray(scores, float).ravel()
    y = _ranks(y).ravel()
    viol = (y[:, None] > y[None, :]) & ((s[:, None] - s[None, :]) < 1.0)
    return np.nonzero(viol)


def n_pairs(y):
    """``m = |{(i, j): y_i > y_j}|`` without enumerating pairs."""
    _, cnt = np.unique(_ranks(y), return_counts=True)
    below = np.concatenate([[0], np.cumsum(cnt)[:-1]])
    return int(np.sum(cnt * below))


def constraint_from_counts(X, c_plus, c_minus, m):
    """``(offset, vector)`` of the OP5 constraint built from the counts.

    The constraint reads ``xi >= offset - w'vector`` (Algorithm 2); how the
    counts give it is Exercise 3 of notebook 04, so it is not spelt out here."""
    coef = (np.asarray(c_plus, float) - np.asarray(c_minus, float)) / m
    vec = X.T @ coef
    return float(np.sum(c_plus)) / m, np.asarray(vec).ravel()


def pairwise_accuracy(scores, y):
    """Fraction of preference pairs ordered correctly (ties count 1/2); with
    two ranks this is the ROC area.  O(n log n) via ranks, no enumeration."""
    from scipy.stats import rankdata

    s = np.asarray(scores, float).ravel()
    y = _ranks(y).ravel()
    m = n_pairs(y)
    if m == 0:
        raise ValueError("need at least two different ranks")
    # for each class r: pairs (i in r, j in lower class) correctly ordered
    levels = np.unique(y)
    total = 0.0
    for k in range(1, len(levels)):
        hi = y == levels[k]
        lo = y < levels[k]
        sub = np.concatenate([s[lo], s[hi]])
        rk = rankdata(sub)  # average ranks handle ties as 1/2
        n_lo, n_hi = lo.sum(), hi.sum()
        total += rk[n_lo:].sum() - n_hi * (n_hi + 1) / 2.0
    return float(total / m)


# --------------------------------------------------------------------- plots
_RANK_COLORS = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple",
                "tab:brown", "tab:pink", "tab:gray"]


def plot_pairs(ax, X2, y, w, max_pairs=400):
    """2-D points coloured by rank, the scoring direction ``w`` and the
    violated pairs (``w'x_i - w'x_j < 1`` with ``y_i > y_j``) as segments.
    Returns ``(pairs_i, pairs_j, LineCollection)``."""
    from matplotlib.collections import LineCollection

    X2 = np.asarray(X2, float)
    y = _ranks(y)
    s = X2 @ np.asarray(w, float)
    i, j = violated_pairs(s, y)
    segs = np.stack([X2[i], X2[j]], axis=1)[:max_pairs]
    lc = LineCollection(segs, colors="0.6", linewidths=0.6, alpha=0.6, zorder=1)
    ax.add_collection(lc)
    for k, r in enumerate(np.unique(y)):
        m = y == r
        ax.scatter(X2[m, 0], X2[m, 1], s=25, color=_RANK_COLORS[k % 8],
                   label=f"rank {r}", zorder=3, edgecolor="k", linewidth=0.3)
    if np.linalg.norm(w) > 0:  # the scoring direction (none at w = 0)
        c = X2.mean(axis=0)
        wn = np.asarray(w, float) / np.linalg.norm(w)
        span = np.ptp(X2, axis=0).max() / 2
        ax.annotate("", xy=c + span * wn, xytext=c,
                    arrowprops=dict(arrowstyle="->", color="k", lw=1.5))
    ax.set_title(f"{len(i)} of {n_pairs(y)} pairs violated "
                 r"($w^\top x_i - w^\top x_j < 1$)")
    ax.legend(fontsize=LEGEND_SIZE, loc="best")
    ax.set_aspect("equal", adjustable="datalim")
    return i, j, lc


#: subplot parameters of :class:`SweepExplorer` (fixed, so that a reused
#: figure and a new one are laid out alike; ``tight_layout`` gives nearly
#: these, but costs a text-measuring pass)
SWEEP_LAYOUT = dict(left=0.07, right=0.985, bottom=0.10, top=0.935, wspace=0.14, hspace=0.30)


def _c_lim(trace):
    """Half the y range of the sweep explorer's ``c`` panel."""
    return float(max(trace.final_c_plus.max(), trace.final_c_minus.max(), 1) + 0.5)


class SweepExplorer(Explorer):
    """Slider over the events of one sorted sweep.

    Top: the 2n sweep values ``s - 1/2`` (▲, :data:`UP`) and ``s + 1/2``
    (▼, :data:`DOWN`) per rank, the sweep line and the already-passed events darkened.  Bottom left:
    the counters ``a[r]`` and ``b[r]``.  Bottom right: ``c+_i`` and ``c-_i``
    known so far, examples in score order.  ``update(k)`` changes artists only.
    """


    # -- the explorer protocol (svmlab.viz._protocol) ----------------------
    cp_record = None

    @classmethod
    def from_fit(cls, fit):
        ex = cls(fit.trace)
        ex.cp_record = fit.params.get("cp_record")
        return ex

    def reset(self, fit):
        """Show the sweep ``fit.trace`` in the same figure (see :meth:`_reset`);
        ``fit.params["cp_record"]`` is the cutting-plane iteration whose ``w``
        is swept (what the source panel explains at every frame)."""
        self.cp_record = fit.params.get("cp_record")
        return self._reset(fit.trace)

    def record(self, k):
        return self.cp_record

    def __init__(self, trace: SweepTrace, figsize=(8.5, 5.375), dpi=96):
        from ._common import new_figure

        self.fig = fig = new_figure(figsize=figsize, dpi=dpi)
        gs = fig.add_gridspec(2, 2, height_ratios=[1.1, 1])
        self.ax_line = fig.add_subplot(gs[0, :])
        self.ax_ab = fig.add_subplot(gs[1, 0])
        self.ax_c = fig.add_subplot(gs[1, 1])
        # a fixed layout (close to what tight_layout gives for these panels):
        # it does not depend on the data, so reset() can keep the figure
        fig.subplots_adjust(**SWEEP_LAYOUT)
        self._draw(trace)

    def _reset(self, trace: SweepTrace):
        """Show another sweep (other scores, ranks, n) in the same figure: the
        three axes are cleared and drawn again as the constructor draws them,
        so the pixels equal those of a new explorer on ``trace``.  No new
        figure and no layout pass: what :func:`svmlab.viz.live.live_ordinal`
        does after every refit.

        Returns the axes whose static parts changed (a player draws only
        those into its background) when the examples' ranks are those shown
        (a change of C or of the swept iteration: only the scores moved):
        the sweep line, and the ``c`` panel when its y range (from the final
        ``c+``/``c-``) changed; the ``a``/``b`` panel (its range from the
        rank counts) and its artists stay.  Otherwise ``False``: every axes
        is drawn again."""
        if trace.n_events < 1:
            raise ValueError("the sweep has no events")
        from ._reuse import clear_for_redraw

        old = self.trace
        keep_ab = (np.array_equal(old.y, trace.y)
                   and np.array_equal(old.rank_values, trace.rank_values))
        keep_c = keep_ab and _c_lim(old) == _c_lim(trace)
        for ax, keep in ((self.ax_line, False), (self.ax_ab, keep_ab), (self.ax_c, keep_c)):
            if not keep:
                clear_for_redraw(ax)  # like ax.cla(), but keeps the ticks
        self._draw(trace, keep_ab, keep_c)
        if not keep_ab:
            return False
        return [self.ax_line] + ([] if keep_c else [self.ax_c])

    def _draw(self, trace, keep_ab=False, keep_c=False):
        """Draw ``trace`` into the (empty) axes and create the artists that
        :meth:`update` changes; ``keep_ab``, ``keep_c``: that panel and its
        artists stay as they are (same ranks; same ``c`` range)."""
        self.trace = tr = trace
        n = len(tr.scores)
        R = len(tr.rank_values)
        pos = np.searchsorted(tr.rank_values, tr.y)
        ax = self.ax_line
        ypos = pos[tr.example] + np.where(tr.kind == "u", -0.12, 0.12)
        self._ev_colors_todo = np.array([[0.8, 0.8, 0.8, 1.0]] * tr.n_events)
        import matplotlib.colors as mcolors

        self._ev_colors_done = np.array(
            [mcolors.to_rgba(_RANK_COLORS[p % 8]) for p in pos[tr.example]])
        self.ev_u = ax.scatter(tr.value[tr.kind == "u"], ypos[tr.kind == "u"], marker="^",
                               s=40, zorder=3)
        self.ev_d = ax.scatter(tr.value[tr.kind == "d"], ypos[tr.kind == "d"], marker="v",
                               s=40, zorder=3)
        self._u_idx = np.flatnonzero(tr.kind == "u")
        self._d_idx = np.flatnonzero(tr.kind == "d")
        self.cursor = ax.axvline(tr.value[0], color="k", lw=1)
        (self.current,) = ax.plot([tr.value[0]], [ypos[0]], "o", ms=14, mfc="none",
                                  mec="red", mew=2, zorder=4)
        self._ypos = ypos
        ax.set_yticks(range(R), [f"rank {r}" for r in tr.rank_values])
        ax.set_xlabel(f"sweep value:  {UP} $s_i - 1/2$,  {DOWN} $s_j + 1/2$;  "
                      "swept from right to left")
        self.title = ax.set_title("", fontsize=10, y=1.0)
        xr = np.arange(R)
        if not keep_ab:
            self.bars_a = self.ax_ab.bar(xr - 0.2, tr.a[0], 0.4, color=DOWN_COLOR,
                                         label=f"$a[r]$: {DOWN} passed")
            self.bars_b = self.ax_ab.bar(xr + 0.2, tr.b[0], 0.4, color=UP_COLOR,
                                         label=f"$b[r]$: {UP} passed")
            cnt = np.bincount(pos, minlength=R)
            self.ax_ab.set_ylim(0, 1.45 * cnt.max() + 0.5)   # room for the legend
            self.ax_ab.set_xticks(xr, [str(r) for r in tr.rank_values])
            self.ax_ab.set_xlabel("rank $r$")
            self.ax_ab.legend(fontsize=LEGEND_SIZE, loc="upper center", ncol=2)
        self._by_score = np.argsort(tr.scores, kind="stable")
        xe = np.arange(n)
        if not keep_c:
            self.bars_cp = self.ax_c.bar(xe, tr.c_plus[0][self._by_score], 0.8, color=UP_COLOR,
                                         label=f"$c^+_i$ (set at {UP})")
            self.bars_cm = self.ax_c.bar(xe, -tr.c_minus[0][self._by_score], 0.8,
                                         color=DOWN_COLOR, label=f"$-c^-_i$ (set at {DOWN})")
            lim = _c_lim(tr)
            self.ax_c.set_ylim(-lim, lim)
            self.ax_c.set_xlabel("examples in order of score")
            # low scores get c- (bars down, left), high scores c+ (up, right)
            self.ax_c.legend(fontsize=LEGEND_SIZE, loc="upper left")
        self.k = None
        self.update(0)
        self.animated = [self.ev_u, self.ev_d, self.cursor, self.current, self.title,
                         *self.bars_a, *self.bars_b, *self.bars_cp, *self.bars_cm]

    @property
    def n_frames(self):
        return self.trace.n_events

    def update(self, k):
        tr = self.trace
        k = int(k)
        done = np.arange(tr.n_events) <= k
        cols = np.where(done[:, None], self._ev_colors_done, self._ev_colors_todo)
        self.ev_u.set_facecolors(cols[self._u_idx])
        self.ev_d.set_facecolors(cols[self._d_idx])
        self.cursor.set_xdata([tr.value[k], tr.value[k]])
        self.current.set_data([tr.value[k]], [self._ypos[k]])
        for bar, h in zip(self.bars_a, tr.a[k]):
            bar.set_height(h)
        for bar, h in zip(self.bars_b, tr.b[k]):
            bar.set_height(h)
        cp = tr.c_plus[k][self._by_score]
        cm = tr.c_minus[k][self._by_score]
        for bar, h in zip(self.bars_cp, cp):
            bar.set_height(h)
        for bar, h in zip(self.bars_cm, cm):
            bar.set_height(-h)
        i = tr.example[k]
        r = tr.y[i]
        sym = _SYMBOL[tr.kind[k]]
        if tr.kind[k] == "u":
            msg = f"c<sup>+</sup><sub>{i}</sub> = sum of a[r'] for r' &lt; {r} = {tr.c_plus[k][i]}"
        else:
            msg = (f"c<sup>&minus;</sup><sub>{i}</sub> = {UP} of ranks &gt; {r} not yet passed = "
                   f"{tr.c_minus[k][i]}")
        head = f"event {k + 1}/{tr.n_events}: {sym} of example {i} (rank {r})"
        self.title.set_text(head)
        self.k = k
        return f"{head}: {msg}"

    def player(self, interval=300, start=0):
        """Play button + slider (:class:`~svmlab.viz.FramePlayer`) over the events."""
        from ._common import FramePlayer

        return FramePlayer(self.fig, self.n_frames, self.update, interval=interval,
                           description="event", animated=self.animated, start=start)


# ------------------------------------------------------- xi against xi'
def final_check(records, X, y, w):
    """The stopping check of Algorithm 2 at the final ``w``, recomputed from
    the data (small n: it runs the display sweep): ``xi`` is the working
    set's bound ``max(0, max_k off_k - w.vec_k)`` over the records'
    constraints (rebuilt from their counts ``c_plus``, ``c_minus``), ``xi'``
    the average pairwise hinge loss at ``w`` (the most violated constraint
    there, from the sweep).  Returns ``(xi, xi_new)``; the solver stopped
    because ``xi_new <= xi + epsilon``."""
    X = np.asarray(X, float)
    w = np.asarray(w, float).ravel()
    m = n_pairs(y)
    xi = 0.0
    for r in records:
        off, vec = constraint_from_counts(X, r.c_plus, r.c_minus, m)
        xi = max(xi, off - float(w @ vec))
    cp, cm = sweep_counts(X @ w, y)
    off, vec = constraint_from_counts(X, cp, cm, m)
    return float(xi), float(off - w @ vec)


def plot_xi_records(ax, records, epsilon=None, final=None):
    """``xi`` and ``xi'`` of ordinal cutting-plane records, in the colours of
    notebook 03 (:func:`svmlab.viz.cutting_plane.plot_xi`: ``xi`` blue,
    ``xi'`` red); ``final = (xi, xi_new)`` (see :func:`final_check`) adds the
    stopping check as stars at "stop".  Returns the ``xi'`` line."""
    from .cutting_plane import plot_xi

    return plot_xi(ax, [r.xi for r in records], [r.xi_new for r in records], epsilon,
                   final=final)
