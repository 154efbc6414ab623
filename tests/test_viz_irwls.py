"""svmlab.viz.irwls: the drawn sets, weights, working sets and boundary
equal what the IRWLS records say, recomputed here."""

import numpy as np
import pytest

from svmlab.viz._protocol import Fit
from matplotlib.colors import to_rgba
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.svm import SVC

from svmlab import IRWLSClassifier
from svmlab.datasets import gauss_m, toy_2d
from svmlab.viz import SET_COLORS
from svmlab.viz import irwls as vi
from reference import check_figure_text

GAMMA = 0.5
COLOR = {1: to_rgba(SET_COLORS["free"]), 2: to_rgba(SET_COLORS["zero"]),
         3: to_rgba(SET_COLORS["bound"])}


def test_weight_function_is_eq8():
    C = 2.0
    ye = np.array([-2.0, -0.1, 0.0, 0.5, 1.0, 4.0])
    a = vi.irwls_weight(ye, C)
    assert a[0] == 0 and a[1] == 0 and np.isinf(a[2])
    assert np.allclose(a[3:], [4.0, 2.0, 0.5])
    assert np.allclose(vi.irwls_beta(ye, C)[[0, 1, 3, 4, 5]], [0, 0, C, C, C])
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    curve = vi.plot_weight_function(ax, C, (-1, 3), a_max=10.0)
    x, y = curve.get_data()
    shown = ~np.isnan(y)
    want = np.where(x > 0, C / np.where(x > 0, x, 1), 0.0)
    assert np.allclose(y[shown], want[shown])
    assert np.all(want[~shown] > 10.0)  # only clipped where off the axes
    plt.close(fig)


@pytest.fixture(scope="module")
def chunked():
    X, y = toy_2d("blobs", n=30, random_state=2, noise=1.0)
    est = IRWLSClassifier(C=1.0, gamma=GAMMA, working_set_size=12, random_state=0)
    tr = vi.irwls_trace(est, X, y)
    return X, y, tr


def test_trace_folds_records_into_global_state(chunked):
    X, y, tr = chunked
    n = len(y)
    beta = np.zeros(n)
    sets = np.full(n, 2)
    for k, r in enumerate(tr.records):
        beta[r.working_set] = r.beta
        sets[r.working_set] = r.sets
        assert np.array_equal(tr.sets[k], sets) and np.allclose(tr.beta[k], beta)
    est = tr.estimator
    ypm = np.where(y == est.classes_[1], 1.0, -1.0)
    assert np.allclose(np.clip(ypm * tr.beta[-1], 0, est.C), est.alpha_, atol=1e-12)
    assert tr.b[-1] == pytest.approx(est.intercept_[0])
    assert len(np.unique(tr.chunk)) >= 2  # really chunked


def test_membership_matches_beta_and_eq8(chunked):
    X, y, tr = chunked
    C = tr.C
    for r in tr.records:
        if not r.chunk_done:
            continue  # Table 1's intermediate iterates may be infeasible
        yw = tr.y[r.working_set]
        ab = yw * r.beta
        assert np.allclose(ab[r.sets == 2], 0, atol=1e-9)
        assert np.allclose(ab[r.sets == 3], C, atol=1e-9)
        assert np.all((ab[r.sets == 1] > -1e-9) & (ab[r.sets == 1] < C + 1e-9))
    for r in tr.records:
        s3 = (r.sets == 3) & (r.ye > 0)
        assert np.allclose(r.weights[s3], C / r.ye[s3])
        assert np.allclose(vi.irwls_weight(r.ye[s3], C), r.weights[s3])
        assert np.all(r.weights[r.sets == 2] == 0)
        assert np.all(np.isinf(r.weights[r.sets == 1]))


def test_explorer_draws_sets_working_set_and_boundary(chunked):
    X, y, tr = chunked
    ex = vi.IRWLSExplorer(tr, X, gamma=GAMMA, grid_n=40)
    ypm = tr.y
    for frame in range(0, ex.n_frames, max(1, ex.n_frames // 12)):
        ex.update(frame)
        k = ex.frames[frame]
        rec = tr.records[k]
        # colours of the points are the S1/S2/S3 membership
        for lab in (-1, 1):
            idx = np.flatnonzero(ypm == lab)
            fc = ex.pts[lab].get_facecolors()
            assert np.allclose(fc, [COLOR[int(s)] for s in tr.sets[k][idx]])
        # the ringed points are the record's working set
        assert np.allclose(ex.ring.get_offsets(), X[rec.working_set])
        # weight panel: (e y, a) of the working set, S1 at the top
        wp = np.asarray(ex.wpts.get_offsets())
        assert np.allclose(wp[:, 0], rec.ye)
        fin = np.isfinite(rec.weights) & (rec.weights < ex.a_max * 0.98)
        assert np.allclose(wp[fin, 1], rec.weights[fin])
        assert np.allclose(wp[rec.sets == 1, 1], ex.a_max * 0.98)
        # beta panel: y_i beta_i of every sample
        assert np.allclose(np.asarray(ex.bpts.get_offsets())[:, 1], ypm * tr.beta[k])
        # decision values on the grid: sum beta_i K(x_i, p) + b, computed here
        Z = ex.frame_data(frame)["Z"]
        f = rbf_kernel(ex.grid.points, X, gamma=GAMMA) @ tr.beta[k] + tr.b[k]
        assert np.allclose(Z.ravel(), f, atol=1e-9)
    check_figure_text(ex.fig)
    chunks = vi.IRWLSExplorer(tr, X, gamma=GAMMA, grid_n=30, frames="chunks")
    assert [tr.records[k].chunk_done for k in chunks.frames] == [True] * chunks.n_frames
    assert chunks.n_frames == len(np.unique(tr.chunk))
    # both players redraw every frame without error
    pytest.importorskip("ipywidgets")
    for e in (ex, chunks):
        drawn = []
        update = e.update
        e.update = lambda k, update=update: (drawn.append(int(k)), update(k))[1]
        p = e.player()
        assert p.drive() == e.n_frames
        assert set(drawn) >= set(range(e.n_frames))
        del e.update
    R = vi.chunk_raster(tr)
    for k, r in enumerate(tr.records):
        assert set(np.flatnonzero(R[k])) == set(r.working_set.tolist())


def test_strategies_reach_libsvm_dual():
    X, y = gauss_m(120, random_state=1)
    K = rbf_kernel(X, gamma=GAMMA)
    res = vi.compare_strategies(
        lambda selection: IRWLSClassifier(C=1.0, gamma=GAMMA, working_set_size=30,
                                          selection=selection, random_state=0), X, y, K=K)
    sv = SVC(C=1.0, gamma=GAMMA, tol=1e-6).fit(X, y)
    a = np.zeros(len(y))
    a[sv.support_] = np.abs(sv.dual_coef_[0])
    ref = a.sum() - 0.5 * (a * y) @ K @ (a * y)
    assert set(res) == {"random", "mixed", "largest", "smallest"}
    for s, r in res.items():
        assert r["dual"] == pytest.approx(ref, rel=1e-3), s
        assert r["n_chunks"] == len(r["chunk_dual"])
        assert r["chunk_dual"][-1] == pytest.approx(r["dual"], rel=1e-9)


def test_multiplier_function_is_a_step_from_S2_to_S3():
    import matplotlib.pyplot as plt

    C = 1.5
    fig, (a1, a2) = plt.subplots(1, 2)
    vi.plot_weight_function(a1, C)
    curve = vi.plot_multiplier_function(a2, C, (-1.0, 2.0), n=301)
    x, yb = curve.get_data()
    # y beta = a e y with a from eq. (8), computed here: 0 left of 0, C right of it
    assert np.allclose(yb[x < 0], 0.0) and np.allclose(yb[x > 0], C)
    # the S1 segment: e y = 0, every value in [0, C]
    seg = a2.get_lines()[1]
    assert np.allclose(seg.get_xdata(), 0) and sorted(seg.get_ydata()) == [0, C]
    check_figure_text(fig)
    plt.close(fig)


# --------------------------------------------------------------------------
# reset: a new fit in the same figure (what the live explorer does)
# --------------------------------------------------------------------------
def _pixels_at(player, k):
    player.goto(k)
    return np.asarray(player.fig.canvas.buffer_rgba()).copy()


def test_reset_draws_the_pixels_of_a_new_explorer(chunked):
    """reset() clears the four axes (keeping their ticks) and draws the new
    fit: the pixels must equal those of an explorer built afresh, at several
    frames; other C (the weight panel), other points, another kernel."""
    pytest.importorskip("ipywidgets")
    X1, y1, tr1 = chunked
    X2, y2 = toy_2d("moons", n=24, random_state=5)
    est2 = IRWLSClassifier(C=20.0, kernel="poly", gamma=1.0, degree=3, working_set_size=8,
                           random_state=1)
    tr2 = vi.irwls_trace(est2, X2, y2)
    ex = vi.IRWLSExplorer(tr1, X1, gamma=GAMMA, grid_n=30)
    p = ex.player()
    fig = ex.fig
    for tr, X, kw in ((tr2, X2, dict(kernel="poly", gamma=1.0)), (tr1, X1, dict(gamma=GAMMA)),
                      (tr2, X2, dict(kernel="poly", gamma=1.0))):
        assert ex.reset(Fit(X, trace=tr, params=kw)) is False  # the background must be drawn again
        p.replace(ex.fig, ex.n_frames, ex.update, animated=ex.animated)
    assert ex.fig is fig and ex.trace is tr2 and ex.n_frames == len(tr2)
    fresh = vi.IRWLSExplorer(tr2, X2, kernel="poly", gamma=1.0, grid_n=30)
    q = fresh.player()
    assert [len(a.get_children()) for a in ex.fig.axes] == \
        [len(a.get_children()) for a in fresh.fig.axes]
    for k in (0, len(tr2) // 3, len(tr2) - 1):
        a, b = _pixels_at(p, k), _pixels_at(q, k)
        assert a.shape == b.shape
        assert np.array_equal(a, b), f"frame {k}: {np.mean(np.any(a != b, -1)):.3%} differ"
    # the new fit is what is drawn: C of the weight panel, the points, the
    # decision values of the poly kernel (computed here)
    # (the weight axis' top: the 1-2-2.5-5 value at or above 2.5 C = 50)
    assert ex.a_max == pytest.approx(50.0)
    assert ex.ax_w.get_ylim()[1] == pytest.approx(50.0)
    pts = np.vstack([np.asarray(ex.pts[lab].get_offsets()) for lab in (-1, 1)])
    assert sorted(map(tuple, pts)) == sorted(map(tuple, X2))
    k = len(tr2) - 1
    Z = ex.frame_data(k)["Z"]
    f = (ex.grid.points @ X2.T + 0.0) ** 3 @ tr2.beta[k] + tr2.b[k]
    assert np.allclose(Z.ravel(), f, atol=1e-8)
    # chunk frames after a reset, and a bad X refused before clearing
    ex.reset(Fit(X1, trace=tr1, params=dict(gamma=GAMMA, frames="chunks")))
    assert ex.n_frames == len(np.unique(tr1.chunk))
    with pytest.raises(ValueError, match="rows"):
        ex.reset(Fit(X1, trace=tr2, params=dict(gamma=GAMMA)))
    with pytest.raises(ValueError, match="2-D"):
        ex.reset(Fit(np.column_stack([X2, X2]), trace=tr2, params=dict(gamma=GAMMA)))
    assert ex.trace is tr1
