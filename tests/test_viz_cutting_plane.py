"""svmlab.viz.cutting_plane: what is drawn equals quantities computed here."""

import numpy as np
import pytest

from svmlab.viz._protocol import Fit

from svmlab import CuttingPlaneClassifier
from svmlab.datasets import toy_2d
from svmlab.viz import cutting_plane as vc


def _risk(Z, y, v):
    # direct loop, independent of the module's vectorised version
    return sum(max(0.0, 1.0 - y[i] * float(np.dot(Z[i], v))) for i in range(len(y))) / len(y)


def test_lower_bound_is_max_of_planes_at_sampled_points(rng):
    K, d, m = 7, 3, 50
    off = rng.uniform(0, 1, K)
    G = rng.normal(size=(K, d))
    V = rng.normal(size=(m, d))
    lb = vc.lower_bound(off, G, V)
    for j in range(m):
        best = 0.0
        for k in range(K):
            best = max(best, off[k] - float(G[k] @ V[j]))
        assert lb[j] == pytest.approx(best, abs=1e-12)
    assert np.all(vc.lower_bound([], np.zeros((0, d)), V) == 0)


def test_planes_are_cutting_planes_of_the_hinge_risk(rng):
    n = 40
    Z = vc.augment(rng.normal(size=(n, 2)), 1.0)
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    for _ in range(5):
        v0 = rng.normal(size=3)
        c = vc.most_violated(Z, y, v0)
        assert np.array_equal(c, np.array([y[i] * (Z[i] @ v0) < 1 for i in range(n)]))
        off, g = vc.constraint_plane(Z, y, c)
        # tight where it was found
        assert off - g @ v0 == pytest.approx(_risk(Z, y, v0), abs=1e-12)
        # below the risk everywhere
        for v in rng.normal(scale=2.0, size=(30, 3)):
            assert off - g @ v <= _risk(Z, y, v) + 1e-12
        assert vc.hinge_risk(Z, y, v0)[0] == pytest.approx(_risk(Z, y, v0), abs=1e-12)


def test_line_endpoints_lie_on_line_and_box(rng):
    for _ in range(20):
        w = rng.normal(size=2)
        b = rng.normal() * 0.3
        xs, ys = vc.line_endpoints(w, b, 1.0, (-2, 2), (-3, 3))
        if np.isnan(xs).any():
            continue
        for x, y in zip(xs, ys):
            assert w[0] * x + w[1] * y + b == pytest.approx(1.0, abs=1e-9)
            assert -2 - 1e-9 <= x <= 2 + 1e-9 and -3 - 1e-9 <= y <= 3 + 1e-9
            assert min(abs(x + 2), abs(x - 2), abs(y + 3), abs(y - 3)) < 1e-9


@pytest.fixture(scope="module")
def explorer():
    X, y = toy_2d("blobs", n=40, random_state=3, noise=1.1)
    est = CuttingPlaneClassifier(C=20.0, epsilon=1e-3)
    tr = vc.cutting_plane_trace(est, X, y)
    return X, y, tr, vc.CuttingPlaneExplorer(tr)


def test_explorer_draws_the_records(explorer):
    X, y, tr, ex = explorer
    assert len(tr) >= 3
    Z = np.column_stack([X, np.ones(len(y))])
    for k, rec in enumerate(tr.records):
        ex.update(k)
        fd = ex.frame_data(k)
        # the highlighted subset is the record's constraint ...
        assert np.array_equal(fd["highlight"], np.flatnonzero(rec.constraint))
        drawn = np.asarray(ex.ring.get_offsets())
        assert np.allclose(drawn, X[rec.constraint])
        # ... which is the set of margin violators at the record's w, b
        viol = np.array([y[i] * (X[i] @ rec.w + rec.b) < 1 for i in range(len(y))])
        assert np.array_equal(rec.constraint, viol)
        v = np.concatenate([rec.w, [rec.b]])
        # at w_k: the planes found before bound the risk at xi, the new one touches it at xi'
        old = [(np.mean(m), (Z.T @ (m * y)) / len(y)) for m in tr.masks[:k]]
        lb = max([0.0] + [o - g @ v for o, g in old])
        assert fd["lb_at_wk"] == pytest.approx(lb, abs=1e-12)
        assert lb == pytest.approx(rec.xi, abs=1e-7)
        assert fd["risk_at_wk"] == pytest.approx(_risk(Z, y, v), abs=1e-12)
        assert rec.xi_new == pytest.approx(_risk(Z, y, v), abs=1e-10)
        assert ex.xi_pt.get_ydata()[0] == pytest.approx(lb, abs=1e-12)
        # the drawn lower-bound curve is the max of the old planes along the slice
        Vs = fd["V"]
        want = np.array([max([0.0] + [o - g @ p for o, g in old]) for p in Vs])
        assert np.allclose(ex.lb_line.get_ydata(), want, atol=1e-12)
        # the new (red) plane line
        o, g = np.mean(rec.constraint), (Z.T @ (rec.constraint * y)) / len(y)
        assert np.allclose(ex.plane_lines[k].get_ydata(), o - Vs @ g, atol=1e-12)
        assert ex.plane_lines[k].get_visible()
        assert not any(ln.get_visible() for ln in ex.plane_lines[k + 1:])
        # the slice passes through w_k at t = 0
        i0 = np.argmin(np.abs(ex.ts))
        assert np.allclose(Vs[i0], v, atol=1e-9 * (1 + np.linalg.norm(v)))
        # separating line: w.x + b = 0 on both drawn endpoints
        xs, ys = ex.sep.get_data()
        if not np.isnan(xs).any():
            assert np.allclose(rec.w[0] * np.asarray(xs) + rec.w[1] * np.asarray(ys) + rec.b, 0,
                               atol=1e-9)


def test_bounds_meet_within_C_epsilon(explorer):
    X, y, tr, ex = explorer
    est = tr.estimator
    w = np.concatenate([est.coef_[0], est.intercept_])
    Z = np.column_stack([X, np.ones(len(y))])
    primal_final = 0.5 * w @ w + est.C * _risk(Z, y, w)
    # every recorded dual value is a lower bound of every primal value
    assert tr.dual.max() <= tr.primal.min() + 1e-9
    assert tr.dual.max() <= primal_final + 1e-9
    # the final model is within C epsilon of the last dual lower bound
    assert primal_final - est.dual_objective_ <= est.C * est.epsilon + 1e-9


def test_player_drives_every_frame(explorer):
    pytest.importorskip("ipywidgets")
    *_, tr, ex = explorer
    shown = []
    update = ex.update
    ex.update = lambda k: (shown.append(int(k)), update(k))[1]
    try:
        p = ex.player()
        assert p.drive() == ex.n_frames
    finally:
        del ex.update
    # every record and the final stopping check were drawn without error
    assert ex.n_frames == len(tr) + 1
    assert set(range(ex.n_frames)) <= set(shown)


def test_final_check_is_recomputed_and_meets_within_C_epsilon(explorer):
    X, y, tr, ex = explorer
    est = tr.estimator
    Z = np.column_stack([X, np.ones(len(y))])
    v = np.concatenate([est.coef_[0], est.intercept_])
    # xi at w*: the max of the working set's planes, each built here from its mask
    planes = [(np.mean(m), (Z.T @ (m * y)) / len(y)) for m in tr.masks]
    xi = max([0.0] + [o - g @ v for o, g in planes])
    assert tr.final_xi == pytest.approx(xi, abs=1e-12)
    assert tr.final_xi_new == pytest.approx(_risk(Z, y, v), abs=1e-12)
    # OP3's dual objective from the multipliers and our planes
    alpha = est.dual_coef_
    wa = sum(a * g for a, (_, g) in zip(alpha, planes))
    dual = sum(a * o for a, (o, _) in zip(alpha, planes)) - 0.5 * wa @ wa
    assert tr.final_dual == pytest.approx(dual, abs=1e-9)
    assert np.allclose(wa, v, atol=1e-8)   # w = sum_k alpha_k g_k (OP3's optimality)
    primal = 0.5 * v @ v + est.C * _risk(Z, y, v)
    assert tr.final_primal == pytest.approx(primal, abs=1e-12)
    # the stopping rule held, and the bounds meet within C epsilon ...
    assert tr.stopped and tr.final_xi_new <= tr.final_xi + tr.epsilon
    assert 0 <= tr.final_gap <= tr.C * tr.epsilon
    # ... while the last *recorded* iteration had not stopped yet
    assert tr.xi_new[-1] > tr.xi[-1] + tr.epsilon
    # and the primal is within C epsilon of an independent optimum (LIBLINEAR)
    from sklearn.svm import LinearSVC

    ll = LinearSVC(C=est.C / len(y), loss="hinge", dual=True, fit_intercept=False, tol=1e-10,
                   max_iter=1_000_000).fit(Z, y)
    p_ll = 0.5 * ll.coef_[0] @ ll.coef_[0] + est.C * _risk(Z, y, ll.coef_[0])
    assert p_ll - 1e-6 <= primal <= p_ll + est.C * est.epsilon


def test_stop_frame_draws_the_final_check(explorer):
    X, y, tr, ex = explorer
    K = len(tr)
    caption = ex.update(K)
    assert "stop" in caption and "not converged" not in caption
    Z = np.column_stack([X, np.ones(len(y))])
    v = tr.v_final
    viol = np.array([y[i] * (Z[i] @ v) < 1 for i in range(len(y))])
    assert np.allclose(np.asarray(ex.ring.get_offsets()), X[viol])
    assert all(ln.get_visible() for ln in ex.plane_lines)          # every plane of W ...
    assert all(ln.get_color() != ex.check_line.get_color() for ln in ex.plane_lines)  # ... grey
    assert ex.check_line.get_visible()
    Vs = ex.frame_data(K)["V"]
    o, g = np.mean(viol), (Z.T @ (viol * y)) / len(y)
    assert np.allclose(ex.check_line.get_ydata(), o - Vs @ g, atol=1e-12)
    assert ex.xi_pt.get_ydata()[0] == pytest.approx(tr.final_xi, abs=1e-12)
    assert ex.xinew_pt.get_ydata()[0] == pytest.approx(_risk(Z, y, v), abs=1e-12)
    assert ex.cur_b.get_xdata()[0] == K + 1
    assert "stop" in ex.title_risk.get_text()
    ex.update(K - 1)
    assert not ex.check_line.get_visible()


def test_risk_panel_is_rescaled_on_every_frame(explorer):
    *_, ex = explorer
    spans = []
    for k in range(ex.n_frames):
        ex.update(k)
        lo, hi = ex.ax_risk.get_ylim()
        r = ex.risk_line.get_ydata()
        # the whole risk curve is inside the panel and fills a good part of it
        assert lo <= r.min() and r.max() <= hi
        assert r.max() >= 0.5 * hi
        assert lo <= ex.xinew_pt.get_ydata()[0] <= hi and lo <= ex.xi_pt.get_ydata()[0] <= hi
        spans.append(hi - lo)
    assert max(spans) > 2 * min(spans)   # the range really changes (late risk curves are flat)


def _plain_text_outside_math(s):
    import re

    return re.sub(r"\$[^$]*\$", "", s)


def _check_text(fig):
    """Legends at least 9 pt; Greek quantities only as mathtext."""
    import re

    greek = re.compile(r"\b(xi|eta|alpha|beta|epsilon|eps)\b")
    for ax in fig.axes:
        leg = ax.get_legend()
        if leg is not None:
            assert all(t.get_fontsize() >= 9 for t in leg.get_texts())
            texts = [t.get_text() for t in leg.get_texts()]
        else:
            texts = []
        texts += [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()]
        texts += [t.get_text() for t in ax.texts]
        for t in texts:
            assert not greek.search(_plain_text_outside_math(t)), t


def test_figures_use_mathtext_and_readable_legends(explorer):
    import matplotlib.pyplot as plt

    *_, tr, ex = explorer
    for k in (0, ex.n_frames - 1):
        ex.update(k)
        _check_text(ex.fig)
    fig, (a1, a2) = plt.subplots(1, 2)
    vc.plot_bounds(a1, tr)
    line = vc.plot_xi(a2, tr)
    _check_text(fig)
    # xi' and xi have the module's colours (shared with notebook 04)
    from matplotlib.colors import to_rgba

    assert to_rgba(line.get_color()) == to_rgba(vc.XI_NEW_COLOR)
    # plot_bounds: the gap per record, the band up to C epsilon, the final check as a star
    gap_line = a1.get_lines()[0]
    assert np.allclose(gap_line.get_ydata(), tr.gap)
    star = [ln for ln in a1.get_lines() if ln.get_marker() == "*"][0]
    assert star.get_xdata()[0] == len(tr) + 1
    assert star.get_ydata()[0] == pytest.approx(tr.final_gap)
    band = [p for p in a1.patches][0]
    top = band.get_path().vertices[:, 1].max()
    top = band.get_transform().transform([[0, top]])[0, 1]
    assert a1.transData.inverted().transform([[0, top]])[0, 1] == pytest.approx(tr.C * tr.epsilon)
    plt.close(fig)


def test_iterations_sweep_counts_fits():
    X, y = toy_2d("blobs", n=60, random_state=1, noise=1.0)

    def make():
        return CuttingPlaneClassifier(C=10.0, epsilon=1e-2)

    it, secs = vc.iterations_sweep(make, X, y, [20, 40, 60], "n")
    assert it.shape == (3,) and np.all(it >= 1) and np.all(secs > 0)
    # last size is the whole set: same count as a direct fit
    assert it[-1] == make().fit(X, y).n_iter_
    it_eps, _ = vc.iterations_sweep(make, X, y, [1e-1, 1e-4], "epsilon")
    assert it_eps[0] == make().set_params(epsilon=1e-1).fit(X, y).n_iter_
    assert it_eps[1] >= it_eps[0]


# --------------------------------------------------------------------------
# reset: a new trace in the same figure (what the live explorer does)
# --------------------------------------------------------------------------
def _pixels_at(player, k):
    player.goto(k)
    return np.asarray(player.fig.canvas.buffer_rgba()).copy()


def test_reset_draws_the_pixels_of_a_new_explorer():
    """reset() clears the axes (keeping their ticks) and draws the new trace:
    every frame must equal, pixel for pixel, an explorer built afresh on
    that trace.  Both players draw their blitting background at the same
    first frame (the "best" legend places are computed then)."""
    pytest.importorskip("ipywidgets")
    X1, y1 = toy_2d("blobs", n=16, random_state=1, noise=0.8)
    X2, y2 = toy_2d("moons", n=22, random_state=4)
    tr1 = vc.cutting_plane_trace(CuttingPlaneClassifier(C=5.0, epsilon=1e-2), X1, y1)
    tr2 = vc.cutting_plane_trace(CuttingPlaneClassifier(C=300.0, epsilon=1e-2), X2, y2)
    assert len(tr1) != len(tr2)  # other number of planes, frames and ticks
    ex = vc.CuttingPlaneExplorer(tr1)
    p = ex.player()
    fig, n_art = ex.fig, None
    for tr in (tr2, tr1, tr2):  # back and forth: nothing piles up
        # other points: the data panel and the lower panels must be drawn again
        assert set(ex.reset(Fit(trace=tr))) == {ex.ax_data, ex.ax_xi, ex.ax_bounds}
        p.replace(ex.fig, ex.n_frames, ex.update, animated=ex.animated)
        n_art = [len(a.get_children()) for a in ex.fig.axes]
    assert ex.fig is fig and ex.trace is tr2 and ex.n_frames == len(tr2) + 1
    fresh = vc.CuttingPlaneExplorer(tr2)
    q = fresh.player()
    assert [len(a.get_children()) for a in fresh.fig.axes] == n_art
    for k in (0, 1, len(tr2) // 2, len(tr2)):  # the last one is the stop frame
        a, b = _pixels_at(p, k), _pixels_at(q, k)
        assert a.shape == b.shape
        assert np.array_equal(a, b), f"frame {k}: {np.mean(np.any(a != b, -1)):.3%} differ"
    # what is drawn is the new trace (the points, the constraint of frame k)
    ex.update(2)
    assert np.allclose(ex.ring.get_offsets(), X2[tr2.masks[2]])
    pts = np.vstack([np.asarray(c.get_offsets()) for c in ex.ax_data.collections[:2]])
    assert sorted(map(tuple, pts)) == sorted(map(tuple, X2))
    assert len(ex.plane_lines) == len(tr2)


def test_reset_refuses_bad_traces_before_clearing():
    X, y = toy_2d("blobs", n=12, random_state=0)
    tr = vc.cutting_plane_trace(CuttingPlaneClassifier(C=10.0), X, y)
    ex = vc.CuttingPlaneExplorer(tr)
    X3 = np.column_stack([X, X[:, 0]])
    tr3 = vc.cutting_plane_trace(CuttingPlaneClassifier(C=10.0), X3, y)
    with pytest.raises(ValueError, match="2-D points"):
        ex.reset(Fit(trace=tr3))
    with pytest.raises(ValueError, match="2-D points"):
        vc.CuttingPlaneExplorer(tr3)
    # the explorer still shows the old trace
    assert ex.trace is tr and len(ex.ax_data.collections) >= 3
    ex.update(0)


# --------------------------------------------------------------------------
# Algorithm 1 and OCAS side by side (notebook 03, section 5)
# --------------------------------------------------------------------------
def _primal_2d(X, y, w, b, C):
    """F(w, b) = 1/2 (|w|^2 + b^2) + C mean hinge, by a direct loop."""
    h = sum(max(0.0, 1.0 - y[i] * (float(X[i] @ w) + b)) for i in range(len(y)))
    return 0.5 * (float(w @ w) + b * b) + C * h / len(y)


@pytest.fixture(scope="module")
def side_by_side():
    X, y = toy_2d("blobs", n=50, random_state=3, noise=1.1)
    out = {}
    for method in ("joachims", "ocas"):
        est = CuttingPlaneClassifier(C=20.0, epsilon=1e-3, method=method)
        out[method] = (est, list(est.iter_fit(X, y)))
    return X, np.where(y == np.unique(y)[-1], 1.0, -1.0), out


def _optimum(X, y, C):
    """LIBLINEAR's optimum of the same problem (bias as a feature), tol 1e-10."""
    from sklearn.svm import LinearSVC

    Z = np.column_stack([X, np.ones(len(y))])
    ll = LinearSVC(C=C / len(y), loss="hinge", dual=True, fit_intercept=False, tol=1e-10,
                   max_iter=1_000_000, random_state=0).fit(Z, y)
    return _primal_2d(X, y, ll.coef_[0][:2], ll.coef_[0][2], C)


def test_upper_lower_draws_the_records_and_brackets_the_optimum(side_by_side):
    import matplotlib.pyplot as plt

    X, y, fits = side_by_side
    P_opt = _optimum(X, y, 20.0)
    fig, ax = plt.subplots()
    for method, (est, recs) in fits.items():
        up, lo = vc.plot_upper_lower(ax, recs, method, "k")
        K = len(recs)
        assert np.array_equal(up.get_xdata(), np.arange(1, K + 1))
        assert np.allclose(up.get_ydata(), [r.primal for r in recs])
        assert np.allclose(lo.get_ydata(), [r.dual for r in recs])
        # upper above the optimum, lower below it (the optimum from LIBLINEAR)
        assert np.all(np.array([r.primal for r in recs]) >= P_opt - 1e-9)
        assert np.all(np.array([r.dual for r in recs]) <= P_opt + 1e-9)
    # what the notebook says: OCAS's primal never goes up, Algorithm 1's does,
    # and OCAS needs fewer iterations here
    p_ocas = np.array([r.primal for r in fits["ocas"][1]])
    p_alg1 = np.array([r.primal for r in fits["joachims"][1]])
    assert np.all(np.diff(p_ocas) <= 1e-12)
    assert np.any(np.diff(p_alg1) > 0)
    assert len(fits["ocas"][1]) < len(fits["joachims"][1])
    # the OCAS record's primal is F at its best point, recomputed here
    for r in fits["ocas"][1]:
        assert r.primal == pytest.approx(_primal_2d(X, y, r.w, r.b, 20.0), rel=1e-10)
    with pytest.raises(ValueError, match="no records"):
        vc.plot_upper_lower(ax, [], "x", "k")
    plt.close(fig)


def test_gap_plot_draws_primal_minus_dual_on_a_log_axis(side_by_side):
    import matplotlib.pyplot as plt

    _, _, fits = side_by_side
    recs = fits["ocas"][1]
    fig, ax = plt.subplots()
    ln = vc.plot_gap(ax, recs, "OCAS", "r", C_epsilon=0.02)
    assert ax.get_yscale() == "log"
    assert np.allclose(ln.get_ydata(), [max(r.primal - r.dual, 1e-16) for r in recs])
    assert any(np.allclose(l.get_ydata(), 0.02) for l in ax.lines if l is not ln)
    plt.close(fig)


def test_ocas_lines_are_the_decision_lines_of_the_three_points(side_by_side):
    import matplotlib.pyplot as plt

    X, y, fits = side_by_side
    r = fits["ocas"][1][2]
    fig, ax = plt.subplots()
    vc.plot_ocas_lines(ax, X, y, r)
    by_label = {l.get_label(): l for l in ax.lines}
    for key, (w, b) in (("best", (r.w, r.b)), ("reduced", (r.reduced_w, r.reduced_b)),
                        ("cut", (r.cut_w, r.cut_b))):
        line = by_label[vc.OCAS_STYLES[key]["label"]]
        xs, ys = line.get_xdata(), line.get_ydata()
        assert len(xs) == 2 and xs[0] != xs[1]
        for x0, y0 in zip(xs, ys):       # both endpoints on w.x + b = 0
            assert w[0] * x0 + w[1] * y0 + b == pytest.approx(0.0, abs=1e-9)
    # the circled points are those with margin < 1 at the cutting point
    circled = [c for c in ax.collections if c.get_label().startswith("new cut")][0]
    want = X[y * (X @ np.asarray(r.cut_w) + r.cut_b) < 1.0]
    assert np.allclose(np.sort(circled.get_offsets(), axis=0), np.sort(want, axis=0))
    with pytest.raises(ValueError, match="2-D"):
        vc.plot_ocas_lines(ax, np.zeros((5, 3)), np.ones(5), r)
    plt.close(fig)


def test_ocas_weight_picture_shows_the_line_search_of_iteration_k(side_by_side):
    import matplotlib.pyplot as plt

    _, _, fits = side_by_side
    recs = fits["ocas"][1]
    k = 3
    fig, ax = plt.subplots()
    vc.plot_ocas_weights(ax, recs, k)
    by_label = {l.get_label(): l for l in ax.lines}
    old = np.asarray(recs[k - 2].w)
    seg = by_label[f"line search at iteration {k}"]
    wt = np.asarray(recs[k - 1].reduced_w)
    assert np.allclose(seg.get_xdata(), [old[0], wt[0]])
    assert np.allclose(seg.get_ydata(), [old[1], wt[1]])
    star = [l for lab, l in by_label.items() if lab.startswith("new $w_b$")][0]
    new_wb = old + recs[k - 1].step * (wt - old)          # w_b = w_b_old + k (w_t - w_b_old)
    assert np.allclose([star.get_xdata()[0], star.get_ydata()[0]], new_wb, atol=1e-9)
    cut = [l for lab, l in by_label.items() if lab.startswith("cutting point")][0]
    mu = recs[k - 1].mu
    assert np.allclose([cut.get_xdata()[0], cut.get_ydata()[0]], (1 - mu) * new_wb + mu * wt,
                       atol=1e-9)
    for bad in (0, len(recs) + 1):
        with pytest.raises(ValueError, match="k must be"):
            vc.plot_ocas_weights(ax, recs, bad)
    plt.close(fig)
