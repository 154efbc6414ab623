"""svmlab.viz.ordinal: the displayed sweep gives the solver's constraint and
the brute-force pair enumeration; the explorer draws the sweep's counters."""

import numpy as np
import pytest

from svmlab.viz._protocol import Fit
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_auc_score

from svmlab import CuttingPlaneOrdinalRegressor
from svmlab.cutting_plane._passes import ordinal_counts
from svmlab.viz import ordinal as vo
from reference import check_figure_text


def _pairs_brute(s, y):
    cp = np.zeros(len(s), int)
    cm = np.zeros(len(s), int)
    for i in range(len(s)):
        for j in range(len(s)):
            if y[i] > y[j] and s[i] - s[j] < 1:
                cp[i] += 1
                cm[j] += 1
    return cp, cm


def _solver_counts(s, y):
    levels = np.unique(y)
    rank = np.searchsorted(levels, y).astype(np.int64)
    cp = np.zeros(len(s), np.int64)
    cm = np.zeros(len(s), np.int64)
    ordinal_counts(np.ascontiguousarray(s, float), rank, len(levels), cp, cm)
    return cp, cm


# scores on a grid of quarters: many exact ties, both in s and in s_i - s_j = 1
@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(-12, 12), st.integers(1, 5)), min_size=2, max_size=30))
def test_sweep_equals_brute_force_and_solver(data):
    s = np.array([a / 4.0 for a, _ in data])
    y = np.array([r for _, r in data])
    if len(np.unique(y)) < 2:
        return
    cp, cm = vo.sweep_counts(s, y)
    bp, bm = _pairs_brute(s, y)
    assert np.array_equal(cp, bp) and np.array_equal(cm, bm)
    sp_, sm_ = _solver_counts(s, y)
    assert np.array_equal(cp, sp_) and np.array_equal(cm, sm_)


def test_sweep_with_empty_ranks_and_constraint_vector(rng):
    n = 25
    X = rng.normal(size=(n, 3))
    y = rng.choice([1, 3, 4], size=n)  # rank 2 has no members
    w = rng.normal(size=3)
    s = X @ w
    tr = vo.sweep_trace(s, y, rank_values=np.array([1, 2, 3, 4]))
    bp, bm = _pairs_brute(s, y)
    assert np.array_equal(tr.final_c_plus, bp) and np.array_equal(tr.final_c_minus, bm)
    # counters at the end: every d and u value of each rank was passed
    assert np.array_equal(tr.a[-1], [np.sum(y == r) for r in (1, 2, 3, 4)])
    assert np.array_equal(tr.b[-1], tr.a[-1])
    m = vo.n_pairs(y)
    assert m == sum(1 for i in range(n) for j in range(n) if y[i] > y[j])
    off, vec = vo.constraint_from_counts(X, tr.final_c_plus, tr.final_c_minus, m)
    ii, jj = vo.violated_pairs(s, y)
    assert off == pytest.approx(len(ii) / m)
    assert np.allclose(vec, (X[ii] - X[jj]).sum(axis=0) / m)
    # xi' = offset - w.vec = average pairwise hinge loss
    loss = sum(max(0.0, 1 - (s[i] - s[j])) for i in range(n) for j in range(n) if y[i] > y[j])
    assert off - w @ vec == pytest.approx(loss / m)


def test_sweep_matches_the_solver_records(rng):
    n = 60
    X = rng.normal(size=(n, 2))
    y = np.digitize(X @ [1.0, 0.5] + 0.5 * rng.normal(size=n), [-0.7, 0.0, 0.7]) + 1
    recs = []
    CuttingPlaneOrdinalRegressor(C=5.0, epsilon=1e-3).fit(X, y, callback=recs.append)
    assert len(recs) >= 2
    for rec in recs:
        cp, cm = vo.sweep_counts(X @ rec.w, y)
        assert np.array_equal(cp, rec.c_plus) and np.array_equal(cm, rec.c_minus)


def test_pairwise_accuracy_is_roc_area_for_two_ranks(rng):
    s = np.round(rng.normal(size=80), 1)  # with ties
    y = rng.integers(0, 2, size=80)
    assert vo.pairwise_accuracy(s, y) == pytest.approx(roc_auc_score(y, s))
    y3 = rng.integers(1, 4, size=80)
    good = sum((s[i] > s[j]) + 0.5 * (s[i] == s[j])
               for i in range(80) for j in range(80) if y3[i] > y3[j])
    assert vo.pairwise_accuracy(s, y3) == pytest.approx(good / vo.n_pairs(y3))


def test_explorer_shows_the_sweep_state(rng):
    pytest.importorskip("ipywidgets")
    s = np.round(rng.normal(size=12), 2)
    y = rng.integers(1, 4, size=12)
    tr = vo.sweep_trace(s, y)
    ex = vo.SweepExplorer(tr)
    p = ex.player()
    assert p.drive() == 2 * len(s)
    by_score = np.argsort(s, kind="stable")
    for k in (0, 5, tr.n_events - 1):
        ex.update(k)
        assert [b.get_height() for b in ex.bars_a] == list(tr.a[k])
        assert [b.get_height() for b in ex.bars_b] == list(tr.b[k])
        assert [b.get_height() for b in ex.bars_cp] == list(tr.c_plus[k][by_score])
        assert ex.cursor.get_xdata()[0] == tr.value[k]
    # after the last event the c+ bars are the brute-force counts
    bp, bm = _pairs_brute(s, y)
    assert [b.get_height() for b in ex.bars_cp] == list(bp[by_score])
    assert [-b.get_height() for b in ex.bars_cm] == list(bm[by_score])
    # the sweep visits values in decreasing order
    assert np.all(np.diff(tr.value) <= 0)


def test_plot_pairs_draws_violated_pairs(rng):
    import matplotlib.pyplot as plt

    X = rng.normal(size=(15, 2))
    y = rng.integers(1, 4, size=15)
    w = np.array([1.0, -0.5])
    fig, ax = plt.subplots()
    i, j, lc = vo.plot_pairs(ax, X, y, w)
    s = X @ w
    want = {(a, b) for a in range(15) for b in range(15) if y[a] > y[b] and s[a] - s[b] < 1}
    assert set(zip(i.tolist(), j.tolist())) == want
    segs = lc.get_segments()
    assert len(segs) == len(want)
    assert all(np.allclose(sg, [X[a], X[b]]) for sg, a, b in zip(segs, i, j))
    plt.close(fig)


def test_sweep_widget_uses_one_up_down_notation(rng):
    pytest.importorskip("ipywidgets")
    s = np.round(rng.normal(size=10), 2)
    y = rng.integers(1, 4, size=10)
    tr = vo.sweep_trace(s, y)
    ex = vo.SweepExplorer(tr)
    drawn = []
    update = ex.update
    ex.update = lambda k: (drawn.append(int(k)), update(k))[1]
    p = ex.player()
    assert p.drive() == tr.n_events
    assert set(drawn) >= set(range(tr.n_events))   # every event redrawn without error
    del ex.update
    symbol = {"u": vo.UP, "d": vo.DOWN}
    for k in range(tr.n_events):
        ex.update(k)
        title = ex.title.get_text()
        other = symbol["d" if tr.kind[k] == "u" else "u"]
        assert symbol[tr.kind[k]] in title and other not in title
        assert f" {tr.kind[k]} of" not in title   # no letters u/d for the events
    # ▲ values are s - 1/2, ▼ values s + 1/2, and the x label says so
    up = np.asarray(ex.ev_u.get_offsets())[:, 0]
    down = np.asarray(ex.ev_d.get_offsets())[:, 0]
    assert np.allclose(np.sort(up), np.sort(s - 0.5))
    assert np.allclose(np.sort(down), np.sort(s + 0.5))
    assert vo.UP in ex.ax_line.get_xlabel() and vo.DOWN in ex.ax_line.get_xlabel()
    labels = [t.get_text() for ax in (ex.ax_ab, ex.ax_c) for t in ax.get_legend().get_texts()]
    assert labels[0].endswith(f"{vo.DOWN} passed") and labels[1].endswith(f"{vo.UP} passed")
    assert vo.UP in labels[2] and vo.DOWN in labels[3]
    check_figure_text(ex.fig)


def test_final_check_and_xi_colours_match_notebook_03(rng):
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_rgba

    from svmlab import CuttingPlaneClassifier
    from svmlab.datasets import toy_2d
    from svmlab.viz import cutting_plane as vc

    n = 24
    X = rng.normal(size=(n, 2))
    y = np.digitize(X @ [1.0, 0.5] + 0.5 * rng.normal(size=n), [-0.5, 0.5]) + 1
    est = CuttingPlaneOrdinalRegressor(C=5.0, epsilon=1e-3)
    recs = []
    est.fit(X, y, callback=recs.append)
    w = est.coef_[0]
    xi, xi_new = vo.final_check(recs, X, y, w)
    # by enumeration: the average pairwise hinge loss at w ...
    P = [(i, j) for i in range(n) for j in range(n) if y[i] > y[j]]
    loss = sum(max(0.0, 1 - (X[i] - X[j]) @ w) for i, j in P) / len(P)
    assert xi_new == pytest.approx(loss, abs=1e-12)
    # ... and the working set's bound: each record's constraint enumerated at its own w
    bound = 0.0
    for r in recs:
        viol = [(i, j) for i, j in P if (X[i] - X[j]) @ r.w < 1]
        off = len(viol) / len(P)
        vec = sum((X[i] - X[j] for i, j in viol), np.zeros(2)) / len(P)
        bound = max(bound, off - w @ vec)
    assert xi == pytest.approx(bound, abs=1e-12)
    assert xi_new <= xi + est.epsilon   # the stopping rule held at the end
    fig, (a1, a2) = plt.subplots(1, 2)
    line = vo.plot_xi_records(a1, recs, est.epsilon, final=(xi, xi_new))
    assert np.allclose(line.get_ydata(), [r.xi_new for r in recs])
    Xc, yc = toy_2d("blobs", n=30, random_state=3, noise=1.1)
    ex = vc.CuttingPlaneExplorer(vc.cutting_plane_trace(CuttingPlaneClassifier(C=20.0), Xc, yc))
    # the same colour for xi' (and for xi) in notebook 03's explorer and here
    assert to_rgba(line.get_color()) == to_rgba(ex.ax_xi.get_lines()[0].get_color())
    assert to_rgba(a1.get_lines()[1].get_color()) == to_rgba(ex.ax_xi.get_lines()[1].get_color())
    assert to_rgba(line.get_color()) != to_rgba(a1.get_lines()[1].get_color())
    vo.plot_pairs(a2, X, y, w)
    check_figure_text(fig)
    plt.close(fig)


def test_reset_draws_the_pixels_of_a_new_explorer(rng):
    """reset() clears the three axes (keeping their ticks) and draws another
    sweep (other n, other number of ranks: other bars and rank labels): the
    pixels must equal those of an explorer built afresh, at several events,
    and no bar or legend entry of the old sweep is left."""
    pytest.importorskip("ipywidgets")
    tr1 = vo.sweep_trace(np.round(rng.normal(size=8), 2), rng.integers(1, 3, size=8))
    s2, y2 = np.round(rng.normal(size=13), 2), rng.integers(1, 5, size=13)
    tr2 = vo.sweep_trace(s2, y2)
    ex = vo.SweepExplorer(tr1)
    p = ex.player()
    fig = ex.fig
    for tr in (tr2, tr1, tr2):
        assert ex.reset(Fit(trace=tr)) is False  # the background must be drawn again
        p.replace(ex.fig, ex.n_frames, ex.update, animated=ex.animated)
    assert ex.fig is fig and ex.n_frames == 2 * 13
    fresh = vo.SweepExplorer(tr2)
    q = fresh.player()
    assert [len(a.get_children()) for a in ex.fig.axes] == \
        [len(a.get_children()) for a in fresh.fig.axes]
    assert [t.get_text() for t in ex.ax_ab.get_legend().get_texts()] == \
        [t.get_text() for t in fresh.ax_ab.get_legend().get_texts()]
    for k in (0, 7, tr2.n_events - 1):
        a, b = _pixels_at(p, k), _pixels_at(q, k)
        assert a.shape == b.shape
        assert np.array_equal(a, b), f"event {k}: {np.mean(np.any(a != b, -1)):.3%} differ"
    # the bars are those of the new sweep: after the last event the c+ / c-
    # bars are the brute-force pair counts
    ex.update(tr2.n_events - 1)
    bp, bm = _pairs_brute(s2, y2)
    order = np.argsort(s2, kind="stable")
    assert [b.get_height() for b in ex.bars_cp] == list(bp[order])
    assert [-b.get_height() for b in ex.bars_cm] == list(bm[order])
    assert len(ex.bars_a) == len(np.unique(y2))


def _pixels_at(player, k):
    player.goto(k)
    return np.asarray(player.fig.canvas.buffer_rgba()).copy()
