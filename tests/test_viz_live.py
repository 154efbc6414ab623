"""The live explorers (svmlab.viz.live), driven without a browser.

A control is changed by setting its ``value`` (what the browser does), a
click by :meth:`LiveExplorer.click` at a pixel of the rendered image, and
the results are checked against references computed here: LIBSVM's dual
objective (scikit-learn's SVC) for the refitted models, brute-force nearest
points, the step geometry recomputed from the kernel, and the rendered
image's pixels.
"""

import io

import numpy as np
import pytest

from svmlab.viz._protocol import Fit
from PIL import Image
from sklearn.metrics.pairwise import rbf_kernel, sigmoid_kernel
from sklearn.svm import SVC

from svmlab.viz import live as vlive
from svmlab.viz.smo import replay

GAMMA = 0.5


def _dual(alpha, y, K):
    """W(alpha) = sum alpha - 1/2 (alpha y)' K (alpha y), computed here."""
    ay = alpha * y
    return alpha.sum() - 0.5 * ay @ K @ ay


def _libsvm_dual(X, y, C, gamma):
    svc = SVC(C=C, kernel="rbf", gamma=gamma, tol=1e-8).fit(X, y)
    alpha = np.zeros(len(y))
    alpha[svc.support_] = np.abs(svc.dual_coef_[0])
    return _dual(alpha, y, rbf_kernel(X, gamma=gamma))


def _final_alpha(live):
    X, y = live.points
    alphas, _ = replay(live.explorer.records, len(X))
    return alphas[-1]


@pytest.fixture(scope="module")
def smo_live():
    return vlive.live_smo(C=1.0, gamma=GAMMA, dataset="moons", n=30, seed=1, grid=30)


def test_changing_C_refits_and_redraws(smo_live):
    L = smo_live
    X, y = L.points
    trace0, img0 = L.explorer.records, L.player.image.value
    a0 = _final_alpha(L)
    assert _dual(a0, y, rbf_kernel(X, gamma=GAMMA)) == pytest.approx(
        _libsvm_dual(X, y, 1.0, GAMMA), rel=1e-3)
    L.controls["C"].value = 10.0
    assert L.explorer.records is not trace0 and L.explorer.C == pytest.approx(10.0)
    a1 = _final_alpha(L)
    assert not np.allclose(a0, a1)
    assert a1.max() > 1.0 + 1e-6  # the new box allows alpha above the old C
    # the refit model is the optimum for the new C (LIBSVM as the reference)
    assert _dual(a1, y, rbf_kernel(X, gamma=GAMMA)) == pytest.approx(
        _libsvm_dual(X, y, 10.0, GAMMA), rel=1e-3)
    assert L.player.image.value != img0
    # it opens at the first step, and the slider covers the new trace
    assert len(L.player.slider.options) == len(L.explorer.records) == L.n_frames
    assert L.player.value == 0 and L.player.slider.label == "1"
    assert "step 1/" in L.player.caption.value
    assert L.timing()["n"] >= 2
    L.controls["C"].value = 1.0


def test_add_point_and_remove_nearest_refit(smo_live):
    L = smo_live
    X0, y0 = L.points
    img0 = L.player.image.value
    L.add_point(0.5, 0.25, +1)
    X1, y1 = L.points
    assert len(X1) == len(X0) + 1 and np.array_equal(X1[-1], [0.5, 0.25]) and y1[-1] == 1
    assert len(L.explorer.X) == len(X1) and L.player.image.value != img0
    assert L.controls["dataset"].value == "your data"
    a = _final_alpha(L)
    assert _dual(a, y1, rbf_kernel(X1, gamma=GAMMA)) == pytest.approx(
        _libsvm_dual(X1, y1, 1.0, GAMMA), rel=1e-3)
    # remove the point nearest to a query, found here by brute force
    q = np.array([-0.7, 0.9])
    expect = min(range(len(X1)), key=lambda i: (X1[i, 0] - q[0]) ** 2 + (X1[i, 1] - q[1]) ** 2)
    assert L.remove_nearest(*q) == expect
    X2, y2 = L.points
    assert len(X2) == len(X1) - 1
    assert np.array_equal(X2, np.delete(X1, expect, axis=0))
    # a solver parameter keeps the reader's points
    L.controls["gamma"].value = 1.0
    assert np.array_equal(L.points[0], X2)
    L.controls["gamma"].value = GAMMA
    # bad input says what is wrong
    with pytest.raises(ValueError, match="label"):
        L.add_point(0.0, 0.0, 0)
    with pytest.raises(ValueError, match="finite"):
        L.add_point(np.nan, 0.0, 1)
    # the seed keeps the reader's points; a dataset forgets them
    L.controls["seed"].value = 2
    assert np.array_equal(L.points[0], X2)
    L.controls["dataset"].value = "moons"
    assert len(L.points[0]) == 30 and not np.array_equal(L.points[0][:5], X2[:5])


def test_click_on_the_picture_adds_a_point_where_clicked(smo_live):
    L = smo_live
    ax = L.explorer.ax_data
    target = np.array([0.3, -0.1])
    # pixel of the target, from the axes' extent in the rendered image: the
    # axes box in image pixels (origin top left) is read off its bbox
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    bb = ax.bbox  # display pixels, origin bottom left
    H = L.player.fig.bbox.height
    px = bb.x0 + (target[0] - x0) / (x1 - x0) * bb.width
    py = H - (bb.y0 + (target[1] - y0) / (y1 - y0) * bb.height)
    # the image really has the figure's pixel size (the mapping's premise)
    im = Image.open(io.BytesIO(L.player.image.value))
    assert im.size == L.fig_pixels
    n = len(L.points[0])
    L.click_mode.value = -1
    xy = L.click(px, py)
    X, y = L.points
    assert len(X) == n + 1 and y[-1] == -1
    np.testing.assert_allclose(X[-1], target, atol=1e-9)
    np.testing.assert_allclose(xy, target, atol=1e-9)
    # a click outside the data panel does nothing
    assert L.click(2, 2) is None and len(L.points[0]) == n + 1
    # the ipyevents handler: a click event carries image pixels as dataX/dataY
    L.click_mode.value = 0
    L._on_click_event({"type": "click", "dataX": px, "dataY": py})
    assert len(L.points[0]) == n
    L.click_mode.value = 1


def test_navigation_lands_on_steps_with_the_property():
    from sklearn.datasets import make_blobs

    # a sigmoid kernel (not positive semi-definite) gives eta <= 0 steps here
    X, y = make_blobs(40, centers=[[0, 0], [2, 2]], cluster_std=0.9, random_state=1)
    L = vlive.live_smo(X, y, C=1.0, kernel="sigmoid", gamma=0.5, seed=0, grid=20,
                       start="first", source=None)
    recs = L.explorer.records
    ypm = np.where(y > 0, 1.0, -1.0)
    K = sigmoid_kernel(X, gamma=0.5, coef0=0.0)

    def eta(r):  # recomputed from the kernel, not read from the record
        return K[r.i1, r.i1] + K[r.i2, r.i2] - 2 * K[r.i1, r.i2]

    alphas, bs = replay(recs, len(X))

    def clipped(r):
        # Platt's unconstrained optimum a2 + y2 (E1 - E2) / eta (TR eq. 16) from
        # errors recomputed with the replayed model before the step; clipping
        # was needed when it leaves [L, H] (or when eta <= 0: no maximum)
        t = r.iteration - 1
        f = K @ (alphas[t] * ypm) + bs[t]
        E = f - ypm
        e = eta(r)
        if e <= 1e-12:
            return True
        a2u = alphas[t][r.i2] + ypm[r.i2] * (E[r.i1] - E[r.i2]) / e
        return a2u < r.L - 1e-9 or a2u > r.H + 1e-9

    checks = {"next clipped": clipped, "next eta <= 0": lambda r: eta(r) <= 1e-12,
              "next heuristic change": None}
    for name, prop in checks.items():
        L.player.goto(0)
        k = L.jump(name)
        if prop is None:
            expect = next((t for t in range(1, len(recs))
                           if recs[t].heuristic != recs[t - 1].heuristic), None)
        else:
            expect = next((t for t in range(1, len(recs)) if prop(recs[t])), None)
        assert expect is not None, f"the test problem should have a {name} step"
        assert k == expect and L.player.slider.value == k and L.explorer.frame == k
    # eta <= 0 really happens here and the records agree with the kernel
    assert any(eta(r) <= 0 for r in recs)
    assert all(abs(eta(r) - r.eta) < 1e-9 for r in recs)
    assert set(np.unique(ypm)) == {-1.0, 1.0}
    L.player.goto(3)
    assert L.jump("+10") == min(13, len(recs) - 1)
    assert L.jump("-10") == max(min(13, len(recs) - 1) - 10, 0)
    # past the last such step: round to the first one from the start, and say so
    first_clipped = next(t for t in range(len(recs)) if clipped(recs[t]))
    L.player.goto(len(recs) - 1)
    assert L.jump("next clipped") == first_clipped
    assert f"no clipped step after step {len(recs)}: back to the first one, step " \
        f"{first_clipped + 1}" in L.note.value
    # the note goes with the next successful jump, and with a slider move
    L.jump("next clipped")
    assert L.note.value == ""
    L.player.goto(len(recs) - 1)
    L.jump("next clipped")
    assert L.note.value
    L.player.slider.value = 2
    assert L.note.value == ""
    # a fit without such a step says so and stays
    L.explorer.records[0]  # noqa: B018
    L._nav_pred["next miracle"] = lambda live, k: False
    assert L.jump("next miracle") is None and "this fit has no miracle step" in L.note.value
    assert L.player.value == 2
    del L._nav_pred["next miracle"]
    with pytest.raises(KeyError):
        L.jump("next miracle")


def _tagged(x):
    if x > 0:
        y = 2 * x  # [positive]
    else:
        y = -x  # [other]
    return y  # [out]


def test_source_panel_marks_the_lines_of_the_step():
    from svmlab.reference._source import source_html

    seen = []

    def source(rec):
        seen.append(rec)
        return source_html(_tagged, {"positive" if rec.clipped else "other", "out"})

    L = vlive.live_smo(C=1.0, gamma=GAMMA, n=20, seed=3, grid=20, source=source, start="first")
    recs = L.explorer.records
    k_clip = next(t for t, r in enumerate(recs) if r.clipped)
    L.player.goto(k_clip)
    html = L.source.value
    assert seen[-1] is recs[k_clip] and L.record() is recs[k_clip]
    marked = [line for line in html.split("</span>") if "background:#ffe58a" in line]
    assert len(marked) == 2 and "2 * x" in marked[0] and "return y" in marked[1]
    # no panel at all with source=None
    assert vlive.live_smo(n=12, grid=15, source=None).source is None

    # a source that cannot explain a step leaves a note, not a broken widget
    def broken(rec):
        raise RuntimeError("cannot explain")

    Lb = vlive.live_smo(n=12, grid=15, source=broken)
    assert "cannot explain" in Lb.source.value


def test_default_source_uses_the_reference_explain():
    import importlib

    try:
        importlib.import_module("svmlab.reference.smo").explain  # noqa: B018
    except (ImportError, AttributeError):
        assert vlive.reference_source("smo") is None
        return
    L = vlive.live_smo(n=16, grid=15)
    assert "background:#ffe58a" in L.source.value and "take_step" in L.source.value
    assert vlive.reference_source("no_such_module") is None


def test_the_other_explorers_refit_navigate_and_take_clicks():
    from svmlab import CuttingPlaneClassifier

    # cutting plane: C changes the trace; a click adds a point on its data panel
    L = vlive.live_cutting_plane(C=10.0, n=20, seed=0)
    img, n_rec = L.player.image.value, len(L.explorer.trace.records)
    L.controls["C"].value = 1000.0
    assert L.player.image.value != img
    X, y = L.points
    ref = CuttingPlaneClassifier(C=1000.0, epsilon=L.controls["epsilon"].value).fit(X, y)
    np.testing.assert_allclose(L.explorer.trace.v_final[:2], ref.coef_[0], atol=1e-8)
    assert len(L.explorer.trace.records) != n_rec or not np.allclose(
        L.explorer.trace.v_final[:2], 0)
    L.add_point(0.0, 0.0, -1)
    assert len(L.points[0]) == 21 and L.explorer.trace.Z.shape[0] == 21
    L.player.goto(0)
    k = L.jump("next bigger cut")
    m = L.explorer.trace.masks
    if k is not None:
        assert m[k].sum() > m[k - 1].sum()
        assert all(m[j].sum() <= m[j - 1].sum() for j in range(1, k))

    # IRWLS: the selection strategy refits; navigation finds a new working set
    L = vlive.live_irwls(C=1.0, gamma=GAMMA, n=30, working_set_size=10, seed=0, start="first")
    img = L.player.image.value
    L.controls["selection"].value = "largest"
    assert L.explorer.trace.estimator.selection == "largest" and L.player.image.value != img
    k = L.jump("next working-set change")
    recs = L.explorer.trace.records
    assert k is not None
    assert set(recs[k].working_set.tolist()) != set(recs[k - 1].working_set.tolist())
    L.add_point(0.0, 0.0, 1)
    assert len(L.explorer.trace.y) == 31

    # ordinal sweep: ranks change the sweep; no clicks on a sweep picture
    L = vlive.live_ordinal(n=10, n_ranks=2, seed=0)
    assert len(np.unique(L.explorer.trace.y)) == 2
    L.controls["n_ranks"].value = 3
    assert len(np.unique(L.explorer.trace.y)) == 3 and L.n_frames == 20
    k = L.jump("next d")
    assert L.explorer.trace.kind[k] == "d" and all(
        L.explorer.trace.kind[j] == "u" for j in range(1, k))
    with pytest.raises(TypeError, match="controls"):
        L.add_point(0, 0, 1)

    # the family: working-set size changes the decomposition's sets
    # (a fresh set has working_set_size samples; two alternating sets are
    # merged, at most twice that: decision 26d12)
    L = vlive.live_family(C=1.0, gamma=GAMMA, n=20, working_set_size=4, n_frames=9)
    sizes = [len(w) for w in L.explorer.ws["decomposition"]]
    assert sizes[0] == 4 and max(sizes) <= 2 * 4
    L.controls["working_set_size"].value = 8
    sizes = [len(w) for w in L.explorer.ws["decomposition"]]
    assert sizes[0] == 8 and max(sizes) <= 2 * 8
    n = len(L.points[0])
    ax = L.explorer.panels["chunking"]["title"].axes
    bb, H = ax.bbox, L.player.fig.bbox.height
    L.click(bb.x0 + bb.width / 2, H - (bb.y0 + bb.height / 2), mode=1)
    assert len(L.points[0]) == n + 1


def test_bad_input_is_refused_clearly():
    with pytest.raises(ValueError, match="2 columns"):
        vlive.live_smo(np.zeros((6, 3)), np.array([1, -1] * 3))
    with pytest.raises(ValueError, match="two classes"):
        vlive.live_smo(np.zeros((4, 2)), np.array([0, 1, 2, 1]))
    with pytest.raises(ValueError, match="unknown dataset"):
        vlive.toy_points("spirals", 20, 0)
    L = vlive.live_smo(np.array([[0, 0], [1, 1], [0, 1], [1, 0.2]]), np.array([1, 1, -1, -1]),
                       grid=10, source=None)
    with pytest.raises(ValueError, match="two points of each class"):
        L.remove_nearest(0, 0)


def test_reused_figure_draws_what_a_new_figure_draws():
    """live_smo refits into the same figure and keeps the blitting
    background; the pixels must equal those of an explorer built afresh."""
    from svmlab.viz import FramePlayer
    from svmlab.viz.smo import SMOStepExplorer

    L = vlive.live_smo(C=1.0, gamma=GAMMA, dataset="blobs", n=24, seed=0, grid=25,
                       source=None)
    fig0 = L.player.fig
    L.controls["C"].value = 20.0
    L.controls["dataset"].value = "moons"  # other points, other extent
    assert L.player.fig is fig0 and L.kept_background
    X, y = L.points
    fresh = SMOStepExplorer(X, y, L.explorer.records, C=20.0, kernel="rbf", gamma=GAMMA,
                            grid=25)
    p = FramePlayer(fresh.fig, fresh.T, fresh._update_live, animated=fresh.animated)
    for k in (0, fresh.T // 2, fresh.T - 1):
        L.player.goto(k)
        p.goto(k)
        a = np.asarray(L.player.fig.canvas.buffer_rgba())
        b = np.asarray(p.fig.canvas.buffer_rgba())
        assert a.shape == b.shape
        assert np.array_equal(a, b), f"frame {k}: {np.mean(np.any(a != b, axis=-1)):.4%} differ"


def test_a_capped_trace_says_so():
    L = vlive.live_smo(C=100.0, n=30, grid=12, max_steps=5, source=None)
    assert len(L.trace) == 5 == L.n_frames and L.record(4) is L.trace[4]
    assert "max_steps = 5" in L.status.value
    L.controls["C"].value = 0.05  # still more than 5 steps: still capped
    assert len(L.trace) == 5 and "trace is cut" in L.status.value


def _pixels_at(player, k):
    player.goto(k)
    return np.asarray(player.fig.canvas.buffer_rgba()).copy()


def _assert_same_pixels(live, fresh, update, frames):
    """``live``'s player (reused figure) and a new player over ``fresh``
    draw the same pixels at ``frames``.  The new player draws its blitting
    background at the frame the live one opened at, as the live one did
    (legends placed "best" are placed then)."""
    from svmlab.viz import FramePlayer

    q = FramePlayer(fresh.fig, fresh.n_frames, update, animated=fresh.animated,
                    start=live.n_frames - 1 if live._start == "last" else 0)
    for k in frames:
        a, b = _pixels_at(live.player, k), _pixels_at(q, k)
        assert a.shape == b.shape
        assert np.array_equal(a, b), f"frame {k}: {np.mean(np.any(a != b, -1)):.3%} differ"


def test_cutting_plane_and_irwls_refits_reuse_the_figure():
    """live_cutting_plane and live_irwls refit into the same figure (reset);
    the picture equals a new explorer's on the new trace, and the refit
    model is the solver's (independent fits here)."""
    from svmlab import CuttingPlaneClassifier
    from svmlab.viz.cutting_plane import CuttingPlaneExplorer
    from svmlab.viz.irwls import IRWLSExplorer

    L = vlive.live_cutting_plane(C=10.0, n=16, seed=0, source=None)
    fig0 = L.player.fig
    L.controls["C"].value = 1000.0
    # same points: at most the lower panels' static parts are drawn again
    # (those whose stepped ranges changed), into the cached background, and
    # the picture is still a new explorer's
    ex = L.explorer
    assert L.kept_background is True or (
        L.kept_background and set(L.kept_background) <= {ex.ax_xi, ex.ax_bounds})
    fresh = CuttingPlaneExplorer(ex.trace)
    _assert_same_pixels(L, fresh, fresh.update, (0, L.n_frames - 1))
    L.controls["dataset"].value = "moons"  # other points, other extent
    assert L.player.fig is fig0 and L.explorer.fig is fig0
    X, y = L.points
    ref = CuttingPlaneClassifier(C=1000.0, epsilon=L.controls["epsilon"].value).fit(X, y)
    np.testing.assert_allclose(L.explorer.trace.v_final[:2], ref.coef_[0], atol=1e-8)
    fresh = CuttingPlaneExplorer(L.explorer.trace)
    _assert_same_pixels(L, fresh, fresh.update, (0, L.n_frames // 2, L.n_frames - 1))
    assert L.timing()["n"] == 3

    L = vlive.live_irwls(C=1.0, gamma=GAMMA, n=24, working_set_size=8, seed=0, source=None)
    fig0 = L.player.fig
    L.controls["C"].value = 10.0
    L.controls["gamma"].value = 2.0
    assert L.player.fig is fig0 and L.fit.capped_at is None
    X, y = L.points
    est = L.explorer.trace.estimator
    assert est.C == 10.0 and est.gamma == 2.0
    # the model drawn is optimal for the new problem: LIBSVM's dual objective
    assert _dual(est.alpha_, y, rbf_kernel(X, gamma=2.0)) == pytest.approx(
        _libsvm_dual(X, y, 10.0, 2.0), rel=1e-3)
    fresh = IRWLSExplorer(L.explorer.trace, X, kernel="rbf", gamma=2.0)
    _assert_same_pixels(L, fresh, fresh.update, (0, L.n_frames // 2, L.n_frames - 1))


def test_cutting_plane_refits_on_the_same_points_keep_the_upper_panels():
    """A change of C on the same points keeps the data panel's and the risk
    panel's artists (only the number of plane lines follows the trace):
    with more and with fewer records than the trace before, the player's
    frames and a full draw (animated artists included) equal a new
    explorer's."""
    from svmlab.viz._common import _unanimated
    from svmlab.viz.cutting_plane import CuttingPlaneExplorer

    L = vlive.live_cutting_plane(C=10.0, n=16, seed=0, source=None)
    ex = L.explorer
    points, legend = ex.ax_data.collections[:2], ex.ax_data.get_legend()
    seen = [len(ex.trace)]
    for C in (1000.0, 0.05, 100.0):
        L.controls["C"].value = C
        assert L.explorer is ex and ex.ax_data.collections[:2] == points
        assert ex.ax_data.get_legend() is legend
        seen.append(len(ex.trace))
        assert len(ex.plane_lines) == len(ex.trace)
        fresh = CuttingPlaneExplorer(ex.trace)
        _assert_same_pixels(L, fresh, fresh.update, (0, L.n_frames - 1))
        for e in (ex, fresh):
            e.update(e.n_frames - 1)
        pics = []
        for e in (ex, fresh):
            with _unanimated(e.animated):
                e.fig.canvas.draw()
            pics.append(np.asarray(e.fig.canvas.buffer_rgba()).copy())
        assert np.array_equal(*pics)
    # the records' count went up and down
    assert any(b > a for a, b in zip(seen, seen[1:]))
    assert any(b < a for a, b in zip(seen, seen[1:]))


def test_cutting_plane_lower_panels_follow_C_in_steps():
    """The lower panels' lines are animated and their ranges are stepped
    functions of the trace: C stepped as the arrow keys step it keeps the
    whole background at some presses and draws a lower panel again at
    others; every picture equals a new explorer's, and the lines stay below
    the legend band at the top of each panel."""
    from svmlab import datasets
    from svmlab.viz import cutting_plane as vc

    X, y = datasets.toy_2d("blobs", n=50, random_state=3, noise=1.1)
    L = vlive.live_cutting_plane(X, y, C=20.0, epsilon=1e-3, source=None)
    ex = L.explorer
    kept = []
    for step in (1, 1, 1, 1, -1, -1, -1, -1, 8, -12):
        L.controls["C"].value = L.controls["C"].value * 10 ** (0.1 * step)
        kept.append(L.kept_background)
        assert L.kept_background is True or set(L.kept_background) <= {ex.ax_xi, ex.ax_bounds}
        tr = ex.trace
        K = len(tr)
        end = vc.iteration_axis_end(K + 1)
        assert K + 1 <= end < 2 * (K + 1) + 4
        for ax in (ex.ax_xi, ex.ax_bounds):
            assert ax.get_xlim() == (0.5, end + 0.5)
        # the lines fill at most 1 / LEGEND_BAND of the panel (the legend's band)
        lo, hi = ex.ax_xi.get_ylim()
        ys = np.concatenate([tr.xi, tr.xi_new, ex.xi_eps_line.get_ydata()])
        assert lo <= ys.min() and ys.max() <= hi / vc.LEGEND_BAND
        assert ys.max() > hi / vc.LEGEND_BAND / 2.6  # a 1-2-2.5-5 step at most
        lo, hi = ex.ax_bounds.get_ylim()
        g = np.maximum(tr.gap, vc.GAP_FLOOR * tr.C * tr.epsilon)
        np.testing.assert_array_equal(ex.gap_line.get_ydata(), g)
        span = np.log10(hi) - np.log10(lo)
        assert lo < min(g.min(), tr.C * tr.epsilon)
        assert np.log10(max(g.max(), tr.C * tr.epsilon)) - np.log10(lo) <= span / vc.LEGEND_BAND + 1
        fresh = vc.CuttingPlaneExplorer(tr)
        _assert_same_pixels(L, fresh, fresh.update, (0, L.n_frames - 1))
    assert any(k is True for k in kept) and any(k is not True for k in kept)


def test_irwls_refit_on_the_same_points_redraws_three_panels_only():
    """A change of C (or the selection) on the same points keeps the IRWLS
    data panel (its artists and its pixels) and draws only the weights, y
    beta and sets panels into the cached background; the picture equals a
    new explorer's, also when C = 1000 gives the weight panel four-digit
    tick labels that reach into the gap beside the data panel."""
    from svmlab.viz._common import stepped_count_end
    from svmlab.viz.irwls import IRWLSExplorer

    L = vlive.live_irwls(C=1.0, gamma=GAMMA, n=24, working_set_size=8, seed=0, source=None)
    ex = L.explorer
    pts = dict(ex.pts)
    for C, selection in ((1000.0, "random"), (0.05, "random"), (3.0, "largest")):
        L.set_quietly("selection", selection)
        rows = ex.ax_chunk.get_ylim()
        L.controls["C"].value = C
        # the sets panel's axes end at a step above the number of iterations
        # (stepped_count_end); its image is drawn with the trace
        top = stepped_count_end(len(ex.trace))
        assert ex.ax_chunk.get_ylim() == (top + 0.5, 0.5) and top >= len(ex.trace)
        assert L.kept_background == [ex.ax_w, ex.ax_beta] + (
            [ex.ax_chunk] if ex.ax_chunk.get_ylim() != rows else []), C
        assert ex.pts == pts  # the data panel's artists were kept
        X, _ = L.points
        fresh = IRWLSExplorer(ex.trace, X, kernel="rbf", gamma=GAMMA)
        _assert_same_pixels(L, fresh, fresh.update, (0, L.n_frames // 2, L.n_frames - 1))
    # other points: every panel is drawn again
    L.controls["seed"].value = 3
    assert L.kept_background is False and ex.pts != pts
    X, _ = L.points
    fresh = IRWLSExplorer(ex.trace, X, kernel="rbf", gamma=GAMMA)
    _assert_same_pixels(L, fresh, fresh.update, (0, L.n_frames - 1))


def test_irwls_ranges_follow_C_in_steps_and_keep_their_panels():
    """The weight and y beta panels' ranges are nice values that follow C in
    steps (a function of the fit, so a new explorer at the same C draws the
    same range): between steps those panels keep their static pixels and
    only C's curve and line move; the picture is a new explorer's."""
    from svmlab.viz.irwls import IRWLSExplorer, nice_ceil

    L = vlive.live_irwls(C=3.0, gamma=GAMMA, n=24, working_set_size=8, seed=0, source=None)
    ex = L.explorer
    seen_true = False
    for C, kept in ((3.5, (True, True)), (4.0, (True, True)), (4.5, (False, True)),
                    (6.0, (True, False))):
        before = ex.a_max, ex.ax_beta.get_ylim()
        rows = ex.ax_chunk.get_ylim()
        L.controls["C"].value = C
        # the weight axis' top: the 1-2-2.5-5 value at or above 2.5 C
        assert ex.a_max == nice_ceil(2.5 * C) and 2.5 * C <= ex.a_max < 5 * C
        lo, hi = ex.ax_beta.get_ylim()
        ab = ex.trace.y * ex.trace.beta
        assert lo < min(ab.min(), 0.0) and hi >= 1.05 * max(ab.max(), C)
        assert ((ex.a_max == before[0]), (ex.ax_beta.get_ylim() == before[1])) == kept, C
        want = [ax for ax, k in ((ex.ax_w, kept[0]), (ex.ax_beta, kept[1])) if not k]
        want += [ex.ax_chunk] if ex.ax_chunk.get_ylim() != rows else []
        # nothing static changed: the whole background stays
        assert L.kept_background == (want or True), C
        seen_true |= L.kept_background is True
        np.testing.assert_array_equal(  # the curve is C's weight function
            ex.curve.get_ydata()[ex.curve.get_xdata() > 1.0], C / ex.curve.get_xdata()[
                ex.curve.get_xdata() > 1.0])
        X, _ = L.points
        fresh = IRWLSExplorer(ex.trace, X, kernel="rbf", gamma=GAMMA)
        _assert_same_pixels(L, fresh, fresh.update, (0, L.n_frames - 1))
    assert seen_true


def test_irwls_panels_come_back_from_the_player_when_C_comes_back():
    """A refit whose panel ranges were shown before restores those panels'
    static pixels from the player's cell cache (keyed by the ranges) instead
    of drawing them; every picture on the way up and back down equals a new
    explorer's, pixel for pixel."""
    from svmlab.viz.irwls import IRWLSExplorer

    L = vlive.live_irwls(C=1.0, gamma=GAMMA, n=24, working_set_size=8, seed=0, source=None)
    ex = L.explorer
    path = [1.6, 2.5, 4.0, 10.0, 40.0, 10.0, 4.0, 2.5, 1.6, 1.0]
    hits = []
    for C in path:
        before = L.player.cells_restored
        L.controls["C"].value = C
        hits.append(L.player.cells_restored - before)
        X, _ = L.points
        fresh = IRWLSExplorer(ex.trace, X, kernel="rbf", gamma=GAMMA)
        _assert_same_pixels(L, fresh, fresh.update, (0, L.n_frames - 1))
    # on the way back the panels' ranges were all seen on the way up
    assert sum(hits[5:]) > 0, hits


def test_cutting_plane_lower_panels_come_back_from_the_player():
    """The cutting plane's lower panels are restored from the player's cell
    cache when a refit comes back to ranges shown before; every picture
    equals a new explorer's."""
    from svmlab.viz.cutting_plane import CuttingPlaneExplorer

    L = vlive.live_cutting_plane(C=10.0, n=16, seed=0, source=None)
    hits = []
    for C in (20.0, 50.0, 200.0, 1000.0, 200.0, 50.0, 20.0, 10.0):
        before = L.player.cells_restored
        L.controls["C"].value = C
        hits.append(L.player.cells_restored - before)
        fresh = CuttingPlaneExplorer(L.explorer.trace)
        _assert_same_pixels(L, fresh, fresh.update, (0, L.n_frames - 1))
    assert sum(hits[4:]) > 0, hits


def test_ordinal_refit_on_the_same_ranks_redraws_only_what_moved():
    """A change of C or of the swept iteration on the same points keeps the
    a/b panel (its range comes from the rank counts) and redraws the sweep
    line (and the c panel when its range moved) into the cached background;
    the picture equals a new explorer's."""
    from svmlab.viz.ordinal import SweepExplorer, _c_lim

    L = vlive.live_ordinal(C=10.0, n=14, n_ranks=3, seed=0, source=None)
    ex = L.explorer
    bars = list(ex.bars_a)
    seen = set()
    for C, it in ((0.1, 0), (1000.0, 0), (10.0, 2), (10.0, 0), (12.59, 0), (15.85, 0), (19.95, 0)):
        lim = _c_lim(ex.trace)
        L.set_quietly("iteration", it)
        L.controls["C"].value = C * 1.0001 if C == L.controls["C"].value else C
        same_c = lim == _c_lim(ex.trace)
        want = [ex.ax_line] + ([] if same_c else [ex.ax_c])
        assert L.kept_background == want, (C, it)
        seen.add(same_c)
        assert list(ex.bars_a) == bars  # the a/b panel's artists were kept
        fresh = SweepExplorer(ex.trace)
        _assert_same_pixels(L, fresh, fresh.update, (0, L.n_frames // 2, L.n_frames - 1))
    assert seen == {True, False}  # both: c panel kept, and drawn again
    # other ranks: every panel is drawn again
    L.controls["seed"].value = 5
    assert L.kept_background is False
    fresh = SweepExplorer(ex.trace)
    _assert_same_pixels(L, fresh, fresh.update, (0, L.n_frames - 1))


def test_ordinal_and_family_refits_reuse_the_figure():
    from types import SimpleNamespace

    from svmlab.viz.decomposition import FamilyExplorer
    from svmlab.viz.ordinal import SweepExplorer, sweep_counts

    L = vlive.live_ordinal(n=10, n_ranks=2, seed=0, source=None)
    fig0 = L.player.fig
    L.controls["n_ranks"].value = 4
    L.controls["n"].value = 14
    assert L.player.fig is fig0
    X, ranks = L.points
    tr = L.explorer.trace
    # the sweep is the one of the new points and ranks (scores X w recomputed)
    s = X @ np.asarray(L.explorer.cp_record.w, float).ravel()
    np.testing.assert_allclose(tr.scores, s)
    cp, cm = sweep_counts(s, ranks)
    np.testing.assert_array_equal(tr.final_c_plus, cp)
    fresh = SweepExplorer(tr)
    _assert_same_pixels(L, fresh, fresh.update, (0, 9, L.n_frames - 1))

    L = vlive.live_family(C=1.0, gamma=GAMMA, n=16, working_set_size=4, n_frames=7,
                          source=None)
    fig0 = L.player.fig
    L.controls["working_set_size"].value = 6
    L.controls["dataset"].value = "moons"
    ex = L.explorer
    assert L.player.fig is fig0 and ex.fig is fig0
    X, y = L.points
    assert max(len(w) for w in ex.ws["decomposition"]) <= 6
    # FamilyExplorer reads only C from the estimators
    fits = {k: (ex.records[k], SimpleNamespace(C=ex.C[k])) for k in ex.names}
    fresh = FamilyExplorer(X, y, fits, gamma=GAMMA, n_frames=7)
    _assert_same_pixels(L, fresh, fresh.update, (0, 3, 6))
    # a change of C on the same points keeps the static background (points,
    # limits, grid) and replays the new fits: still a new explorer's pixels
    points = [ax.collections[2:4] for ax in ex.fig.axes]
    L.controls["C"].value = 30.0
    assert L.kept_background is True and L.explorer is ex
    assert [ax.collections[2:4] for ax in ex.fig.axes] == points
    assert all(ex.C[k] == 30.0 for k in ex.names)
    fits = {k: (ex.records[k], SimpleNamespace(C=ex.C[k])) for k in ex.names}
    fresh = FamilyExplorer(X, y, fits, gamma=GAMMA, n_frames=7)
    _assert_same_pixels(L, fresh, fresh.update, (0, 3, 6))
    with pytest.raises(ValueError, match="panels"):
        ex.reset(Fit(X, y, {"SMO": fits["SMO"]}, params=dict(gamma=GAMMA)))


def test_reuse_figure_false_builds_a_new_figure_per_refit():
    L = vlive.live_cutting_plane(C=10.0, n=14, seed=0, source=None, reuse_figure=False)
    fig0 = L.player.fig
    L.controls["C"].value = 100.0
    assert L.player.fig is not fig0 and L.explorer.fig is L.player.fig


def test_status_counts_the_support_vectors_of_the_last_frame(smo_live):
    """The status line's support-vector count is that of the model replayed
    from the records (independent of the estimator's own attributes)."""
    L = smo_live
    for C in (0.1, 10.0, 1.0):
        L.controls["C"].value = C
        n_sv = int(np.sum(_final_alpha(L) > 0))
        assert f", {n_sv} support vectors" in L.status.value


def test_source_titles_name_the_module_that_defines_the_function():
    """IRWLS's line-search iteration lives in reference/subproblem.py: the
    panel's title must say subproblem, not irwls."""
    from svmlab.reference import irwls as ref_irwls
    from svmlab.reference import subproblem

    L = vlive.live_irwls(C=1.0, gamma=0.5, dataset="gauss-m", n=40, working_set_size=12)
    want = "subproblem.line_search_iteration"
    seen = False
    for k in range(L.player.n_frames):
        L.player.slider.value = k
        funcs = [f for f, _ in ref_irwls.explain(L.record(k))]
        if subproblem.line_search_iteration in funcs:
            assert want in L.source.value and "irwls.line_search_iteration" not in L.source.value
            seen = True
    assert seen, "no line-search iteration in this fit: choose another problem"


# --------------------------------------------------------------------------
# reveal locks in the source panels
# --------------------------------------------------------------------------
@pytest.fixture
def locked(monkeypatch):
    import svmlab.exercises as ex

    monkeypatch.delenv(ex.LOCKS_ENV, raising=False)
    ex.reset_locks()
    yield ex
    ex.reset_locks()


def _solutions(name):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "instructor" / "solutions" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


#: (a line of the answer, the exercise that hides it) per reference the explorers show
_SMO_ANSWERS = [("alph2 + y2 * (E1 - E2) / eta", "01.take_step"),
                ("min(C2, C1 + alph2 - alph1)", "01.segment_ends"),
                ("b1 = b - E1 - d1 * k11 - d2 * k12", "01.threshold")]


def test_smo_source_panel_hides_the_answers_until_passed_or_revealed(locked):
    from svmlab.exercises import check_threshold

    L = vlive.live_smo(n=16, grid=15)
    html = L.source.value
    assert "white-space:pre" in html  # never wraps inside a name
    for text, eid in _SMO_ANSWERS:
        assert text not in html, text
        assert f"hidden: exercise {eid}" in html or eid == "01.segment_ends"
    assert L.reveal_button.layout.display != "none"
    assert "01.take_step" in L.reveal_button.description
    # passing the threshold exercise opens its lines in the panel on screen
    assert check_threshold(_solutions("solutions_01_smo").threshold).passed
    html = L.source.value
    assert "b1 = b - E1 - d1 * k11 - d2 * k12" in html
    assert "alph2 + y2 * (E1 - E2) / eta" not in html
    # the reveal button opens the rest
    L.reveal()
    html = L.source.value
    assert all(text in html for text, _ in _SMO_ANSWERS)
    assert "hidden: exercise" not in html and L.reveal_button.layout.display == "none"
    # the instructor's view
    locked.reset_locks()
    locked.set_locks(False)
    html = vlive.live_smo(n=16, grid=15, selection="wss2").source.value
    assert all(text in html for text, _ in _SMO_ANSWERS)


def test_every_live_source_panel_hides_its_exercises(locked):
    """Driven through every frame, no panel shows a locked answer line."""
    cases = [
        (vlive.live_cutting_plane(C=20.0, epsilon=1e-3, n=30),
         ["margins < 1.0", "g = (c * v * y) @ X / n"]),
        (vlive.live_ordinal(C=10.0, n=12),
         ["c_plus[i] = n_lower[rank[i]] - passed[:rank[i]].sum()",
          "g = (c_plus - c_minus) @ X / m", "np.sum(size * (np.cumsum(size) - size))"]),
        (vlive.live_irwls(C=1.0, gamma=0.5, dataset="blobs", n=30, working_set_size=30),
         ["(sp.sets == S2) & (ye > sp.tol)", "new[high] = C * y[F][high]"]),
        (vlive.live_smo(n=20, grid=15, selection="wss2"), [t for t, _ in _SMO_ANSWERS]),
    ]
    for L, answers in cases:
        hid = set()
        for k in range(L.n_frames):
            L.player.goto(k)
            for text in answers:
                assert text not in L.source.value, (L.name, k, text)
            hid |= set(L._hidden_ids)
        assert hid, L.name
