"""What the SMO visualisations draw, checked against quantities computed here.

The segment is checked against a brute-force intersection of the constraint
line with the box, the model at each step against alphas replayed naively
from the records with scikit-learn's kernels, the KKT marks against Platt's
conditions evaluated in the test, and the random-pair baseline against
LIBSVM's dual objective.
"""

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.metrics.pairwise import rbf_kernel, sigmoid_kernel
from sklearn.svm import SVC

from svmlab import SMOClassifier
from svmlab.smo._pairstep import pair_step
from svmlab.viz import record_trace, smo

C = 1.0
GAMMA = 0.5


@pytest.fixture(scope="module")
def toy():
    X, y = make_blobs(40, centers=[[0, 0], [2, 2]], cluster_std=0.9, random_state=1)
    return X, y


@pytest.fixture(scope="module")
def smo_trace(toy):
    X, y = toy
    est = SMOClassifier(C=C, kernel="rbf", gamma=GAMMA, random_state=0, cache_dtype="float64",
                        progress=False)
    return record_trace(est, X, y)


@pytest.fixture(scope="module")
def explorer(toy, smo_trace):
    X, y = toy
    return smo.SMOStepExplorer.from_estimator(smo_trace.estimator, X, y, smo_trace.records,
                                              grid=40)


def _box_segment(y1, y2, a1, a2, C, n=300001):
    """Ends of {(a1', a2') on the constraint line} intersected with [0, C]^2,
    by brute force over a fine grid of a2' (returned as a2 interval)."""
    s = y1 * y2
    k = a1 + s * a2
    a2g = np.linspace(-C, 2 * C, n)
    a1g = k - s * a2g
    inside = (a1g >= -1e-12) & (a1g <= C + 1e-12) & (a2g >= -1e-12) & (a2g <= C + 1e-12)
    return a2g[inside].min(), a2g[inside].max()


@pytest.mark.parametrize("y1,y2", [(1.0, -1.0), (-1.0, 1.0), (1.0, 1.0), (-1.0, -1.0)])
@pytest.mark.parametrize("a1,a2", [(0.3, 0.6), (0.9, 0.05), (0.0, 0.0), (0.5, 1.0)])
def test_segment_geometry_is_line_cut_by_box(y1, y2, a1, a2):
    Cb = 1.0
    E1, E2 = 0.7, -0.4
    K11, K12, K22 = 1.0, 0.3, 1.0
    moved, a1n, a2n, a2u, L, H, eta = pair_step(y1, y2, a1, a2, E1, E2, 0.1, K11, K12, K22,
                                                Cb, 1e-12)
    rec = smo.PairRecord(iteration=1, i1=0, i2=1, y1=y1, y2=y2, a1_old=a1, a2_old=a2,
                         a1_new=a1n, a2_new=a2n, a2_unclipped=a2u, L=L, H=H, eta=eta,
                         E1=E1, E2=E2, b_old=0.1, b_new=0.1, heuristic="test",
                         clipped=False, kernel_evals=0)
    g = smo.segment_geometry(rec)
    lo, hi = _box_segment(y1, y2, a1, a2, Cb)
    assert g.end_L[1] == pytest.approx(lo, abs=1e-4)
    assert g.end_H[1] == pytest.approx(hi, abs=1e-4)
    # both ends on the constraint line: a1 + s a2 = a1_old + s a2_old
    s = y1 * y2
    for end in (g.end_L, g.end_H, g.new):
        assert end[0] + s * end[1] == pytest.approx(a1 + s * a2, abs=1e-12)
    # the label names the right diagonal
    assert ("\\alpha_1 + \\alpha_2" in g.label) == (y1 == y2)
    assert ("\\alpha_1 - \\alpha_2" in g.label) == (y1 != y2)
    # the new point is the record's pair, on the segment
    assert g.new == (a1n, a2n)
    assert lo - 1e-4 <= g.new[1] <= hi + 1e-4
    if np.isfinite(a2u):
        assert g.unclipped[1] == a2u
        assert g.unclipped[0] == pytest.approx(a1 + s * (a2 - a2u))


def test_drawn_segment_and_points_match_records(explorer, smo_trace, toy):
    X, _ = toy
    recs = smo_trace.records
    both = {}
    for t, r in enumerate(recs):
        if (r.y1 == r.y2) in both:
            continue
        both[r.y1 == r.y2] = t
    assert set(both) == {True, False}, "the toy trace should have both label cases"
    for t in both.values():
        r = recs[t]
        explorer.update(t)
        s = r.y1 * r.y2
        k = r.a1_old + s * r.a2_old
        xs, ys = explorer.line_seg.get_data()
        # endpoints are (L, H) mapped onto the line a1 = k - s a2
        np.testing.assert_allclose(ys, [r.L, r.H])
        np.testing.assert_allclose(xs, [k - s * r.L, k - s * r.H])
        lo, hi = _box_segment(r.y1, r.y2, r.a1_old, r.a2_old, C)
        np.testing.assert_allclose(ys, [lo, hi], atol=1e-4)
        # the clipped point is the record's a2_new, on the segment
        nx, ny = explorer.pt_new.get_data()
        assert ny[0] == r.a2_new and nx[0] == pytest.approx(k - s * r.a2_new)
        assert r.L - 1e-12 <= ny[0] <= r.H + 1e-12
        ox, oy = explorer.pt_old.get_data()
        assert (ox[0], oy[0]) == (r.a1_old, r.a2_old)
        # the chosen points are highlighted in the data panel
        np.testing.assert_array_equal(explorer.chosen.get_offsets(), X[[r.i1, r.i2]])


def _naive_states(recs, n):
    a = np.zeros(n)
    out = [(a.copy(), recs[0].b_old)]
    for r in recs:
        a[r.i1], a[r.i2] = r.a1_new, r.a2_new
        out.append((a.copy(), r.b_new))
    return out


def test_marked_sets_are_kkt_violators_and_svs(explorer, smo_trace, toy):
    X, y = toy
    ypm = np.where(y == smo_trace.estimator.classes_[1], 1.0, -1.0)
    K = rbf_kernel(X, gamma=GAMMA)
    states = _naive_states(smo_trace.records, len(X))
    T = len(smo_trace)
    n_marked = 0
    for t in sorted({0, 1, 5, T // 3, T // 2, T - 2, T - 1}):
        a, b = states[t + 1]
        f = K @ (a * ypm) + b
        r = ypm * f - 1
        viol = np.flatnonzero(((r < -1e-3) & (a < C)) | ((r > 1e-3) & (a > 0)))
        explorer.update(t)
        np.testing.assert_array_equal(explorer.viol.get_offsets(), X[viol].reshape(-1, 2))
        np.testing.assert_array_equal(explorer.sv.get_offsets(), X[np.flatnonzero(a > 0)])
        np.testing.assert_array_equal(
            smo.kkt_violators(K, ypm, a, b, C, 1e-3), viol)
        n_marked += len(viol)
    assert n_marked > 0  # early steps do have violators
    # converged: no violators after the last step, and the replay is the model
    explorer.update(T - 1)
    assert len(explorer.viol.get_offsets()) == 0
    np.testing.assert_allclose(states[-1][0], smo_trace.estimator.alpha_, atol=1e-12)


def test_boundary_is_the_zero_level_of_the_replayed_model(explorer, smo_trace, toy):
    X, y = toy
    ypm = np.where(y == smo_trace.estimator.classes_[1], 1.0, -1.0)
    t = len(smo_trace) // 2
    a, b = _naive_states(smo_trace.records, len(X))[t + 1]
    explorer.update(t)
    pts = np.vstack(explorer.boundary.get_segments())
    f = rbf_kernel(pts, X, gamma=GAMMA) @ (a * ypm) + b
    # contour points are interpolated on the grid: |f| is small there
    assert np.abs(f).max() < 0.1
    mpts = np.vstack(explorer.margins.get_segments())
    fm = rbf_kernel(mpts, X, gamma=GAMMA) @ (a * ypm) + b
    assert np.abs(np.abs(fm) - 1).max() < 0.1


def test_objective_curve_peaks_at_the_new_a2(explorer, smo_trace):
    K = explorer.K
    for t, r in enumerate(smo_trace.records[:40]):
        a2, dW = smo.segment_curve(r, K[r.i1, r.i1], K[r.i1, r.i2], K[r.i2, r.i2],
                                   n=4001, lo=r.L, hi=r.H)
        # the step moved to the best feasible point along the segment
        assert dW.max() <= smo.segment_curve(r, K[r.i1, r.i1], K[r.i1, r.i2], K[r.i2, r.i2],
                                             n=3, lo=r.a2_new, hi=r.a2_new)[1][0] + 1e-9
        assert smo.segment_curve(r, K[r.i1, r.i1], K[r.i1, r.i2], K[r.i2, r.i2], n=3,
                                 lo=r.a2_old, hi=r.a2_old)[1][0] == pytest.approx(0, abs=1e-15)


def test_objective_path_matches_dual_objective(smo_trace, toy):
    X, y = toy
    ypm = np.where(y == smo_trace.estimator.classes_[1], 1.0, -1.0)
    K = rbf_kernel(X, gamma=GAMMA)
    W = smo.objective_path(smo_trace.records, K, ypm)
    states = _naive_states(smo_trace.records, len(X))
    for t in (0, 3, len(W) // 2, len(W) - 1):
        a = states[t][0]
        ref = a.sum() - 0.5 * (a * ypm) @ K @ (a * ypm)
        assert W[t] == pytest.approx(ref, abs=1e-10)
    assert np.all(np.diff(W) > 0)  # every SMO step increases W


def test_player_redraw_changes_artists_and_image(explorer):
    p = explorer.player()
    before_seg = [np.array(v) for v in explorer.line_seg.get_data()]
    before_img = p.image.value
    before_cap = p.caption.value
    p.slider.value = 7
    after_seg = [np.array(v) for v in explorer.line_seg.get_data()]
    assert explorer.frame == 7
    assert not all(np.array_equal(u, v) for u, v in zip(before_seg, after_seg))
    assert p.image.value != before_img and p.caption.value != before_cap
    assert "step 8/" in p.caption.value
    # the figure is not re-plotted: same number of artists per axes
    n_art = [len(ax.get_children()) for ax in explorer.fig.axes]
    p.drive(range(0, explorer.T, 17))
    assert [len(ax.get_children()) for ax in explorer.fig.axes] == n_art
    assert p.timing()["n"] >= 3


def test_eta_nonpositive_steps_with_sigmoid_kernel(toy):
    X, y = toy
    est = SMOClassifier(C=C, kernel="sigmoid", gamma=0.5, coef0=0.0, random_state=0,
                        cache_dtype="float64", progress=False)
    tr = record_trace(est, X, y)
    ypm = np.where(y == est.classes_[1], 1.0, -1.0)
    neg = [t for t, r in enumerate(tr) if r.eta <= 0]
    assert neg, "expected eta <= 0 steps with this sigmoid kernel"
    ex = smo.SMOStepExplorer.from_estimator(est, X, y, tr.records, grid=30)
    K = sigmoid_kernel(X, gamma=0.5, coef0=0.0)
    for t in neg[:5]:
        r = tr[t]
        assert r.eta == pytest.approx(K[r.i1, r.i1] + K[r.i2, r.i2] - 2 * K[r.i1, r.i2])
        ex.update(t)
        # no unconstrained optimum drawn; the new pair is an end of the segment
        assert len(ex.pt_unc.get_data()[0]) == 0
        assert r.a2_new in (r.L, r.H)
        assert "eta &le; 0" in ex.caption(t)
        # the chosen end is the better one (objective computed here)
        s = r.y1 * r.y2

        def W_at(a2n):
            a = ex.alphas[t].copy()
            a[r.i1] = r.a1_old + s * (r.a2_old - a2n)
            a[r.i2] = a2n
            return a.sum() - 0.5 * (a * ypm) @ K @ (a * ypm)

        assert W_at(r.a2_new) >= max(W_at(r.L), W_at(r.H)) - 1e-9


def test_random_pair_smo_reaches_libsvm_objective(toy):
    X, y = toy
    ypm = np.where(y == 1, 1.0, -1.0)
    K = rbf_kernel(X, gamma=GAMMA)
    recs, alpha, b, tries = smo.random_pair_smo(K, ypm, C, tol=1e-3, random_state=3)
    assert recs and tries >= len(recs)
    assert all(r.heuristic == "random" for r in recs)
    W = alpha.sum() - 0.5 * (alpha * ypm) @ K @ (alpha * ypm)
    svc = SVC(C=C, kernel="rbf", gamma=GAMMA, tol=1e-6).fit(X, y)
    a_ref = np.zeros(len(X))
    a_ref[svc.support_] = np.abs(svc.dual_coef_[0])
    W_ref = a_ref.sum() - 0.5 * (a_ref * ypm) @ K @ (a_ref * ypm)
    assert W == pytest.approx(W_ref, rel=1e-3)
    assert abs(ypm @ alpha) < 1e-10 and alpha.min() >= 0 and alpha.max() <= C
    f = K @ (alpha * ypm) + b
    r = ypm * f - 1
    assert not np.any(((r < -1e-3) & (alpha < C)) | ((r > 1e-3) & (alpha > 0)))


def test_key_steps_and_static_animation(explorer):
    steps = smo.pick_key_steps(explorer.records, 6)
    assert steps[0] == 0 and steps[-1] == explorer.T - 1 and len(steps) <= 6
    assert steps == sorted(set(steps))
    html = explorer.animation(steps[:3], interval=200)
    assert html.data.count("data:image/jpeg;base64") == 3


# ---------------------------------------------------------------------------
# svmlab.viz.decomposition (Platt's Figure 2)
# ---------------------------------------------------------------------------
from svmlab import ChunkingClassifier, DecompositionClassifier  # noqa: E402
from svmlab.viz import decomposition as vdec  # noqa: E402


@pytest.fixture(scope="module")
def family(toy):
    X, y = toy
    ests = {"chunking": ChunkingClassifier(C=C, gamma=GAMMA, working_set_size=6),
            "decomposition": DecompositionClassifier(C=C, gamma=GAMMA, working_set_size=6),
            "SMO": SMOClassifier(C=C, gamma=GAMMA, random_state=0, progress=False)}
    return {k: record_trace(e, X, y) for k, e in ests.items()}


def test_family_membership_and_replay(family, toy):
    X, y = toy
    n = len(X)
    for name, tr in family.items():
        M = vdec.membership(tr.records, n)
        assert M.shape == (len(tr), n)
        for t, r in enumerate(tr.records):
            expect = ({r.i1, r.i2} if name == "SMO" else set(np.asarray(r.working_set).tolist()))
            assert set(np.flatnonzero(M[t])) == expect
        alphas, bs = vdec.replay(tr.records, n)
        np.testing.assert_allclose(alphas[-1], tr.estimator.alpha_, atol=1e-12)
        # only the working set changes in a step
        for t in range(1, len(tr) + 1):
            changed = np.flatnonzero(alphas[t] != alphas[t - 1])
            assert set(changed) <= set(np.flatnonzero(M[t - 1]))
    # a fresh working set has at most working_set_size = 6 samples; when the
    # selection returns (to within CYCLE_SLACK exchanged samples) the set used
    # two steps before, the step takes the union of that selection and the
    # previous set instead (decisions 26d12, 29z01)
    from svmlab.decomposition._working_set import CYCLE_SLACK

    sets = [np.asarray(w) for w in vdec.working_sets(family["decomposition"].records)]
    merged = 0
    for t, w in enumerate(sets):
        if len(w) <= 6:
            continue
        merged += 1
        assert t >= 2 and len(w) <= 12
        assert set(sets[t - 1].tolist()) <= set(w.tolist())
        new = set(w.tolist()) - set(sets[t - 1].tolist())
        assert len(new - set(sets[t - 2].tolist())) <= CYCLE_SLACK
    assert merged < len(sets)
    assert all(len(w) == 2 for w in vdec.working_sets(family["SMO"].records))


def test_raster_and_sample_order(family, toy):
    import matplotlib.pyplot as plt

    X, y = toy
    a = family["SMO"].estimator.alpha_
    order = vdec.sample_order(a, C, y)
    assert sorted(order) == list(range(len(X)))
    groups = np.where(a[order] <= 0, 0, np.where(a[order] >= C, 2, 1))
    assert np.all(np.diff(groups) >= 0)
    fig, ax = plt.subplots()
    im = vdec.plot_working_set_raster(ax, family["decomposition"].records, len(X), order=order)
    M = vdec.membership(family["decomposition"].records, len(X))[:, order]
    np.testing.assert_array_equal(np.asarray(im.get_array()).astype(bool), M.T)
    plt.close(fig)


def test_family_explorer_marks_working_sets(family, toy):
    X, y = toy
    ex = vdec.FamilyExplorer(X, y, {k: (t.records, t.estimator) for k, t in family.items()},
                             gamma=GAMMA, n_frames=5, grid=25)
    p = ex.player()
    assert p.drive() == 5
    k = 2
    ex.update(k)
    for name, tr in family.items():
        t = ex.step_at(name, k)
        assert t == round(k / 4 * len(tr))
        ws = vdec.working_sets(tr.records)[t - 1]
        np.testing.assert_array_equal(ex.panels[name]["ws"].get_offsets(), X[ws])
        alphas, _ = vdec.replay(tr.records, len(X))
        np.testing.assert_array_equal(ex.panels[name]["sv"].get_offsets(), X[alphas[t] > 0])
    before = p.image.value
    assert p.slider.value == 0  # drive() went back to the frame shown before
    p.slider.value = 4
    assert p.image.value != before and "progress 100 %" in p.caption.value


def test_figure_text_is_readable_and_says_clipped_or_interior(explorer):
    """Legends at least 9 pt, Greek letters as mathtext, and the legend entry
    of the new pair matches the step on screen (the record's own flag is
    checked against the geometry: a2_new strictly inside (L, H) is interior)."""
    ax = explorer.ax_box
    assert ax.get_xlabel() == r"$\alpha_1$" and ax.get_ylabel() == r"$\alpha_2$"
    assert "$W" in explorer.ax_obj.get_ylabel()
    for a in explorer.fig.axes:
        leg = a.get_legend()
        if leg is not None:
            assert all(t.get_fontsize() >= 9 for t in leg.get_texts())
    recs = explorer.records
    inside = [t for t, r in enumerate(recs) if r.L + 1e-9 < r.a2_new < r.H - 1e-9]
    at_end = [t for t, r in enumerate(recs)
              if min(abs(r.a2_new - r.L), abs(r.a2_new - r.H)) < 1e-12]
    assert inside and at_end, "the toy trace should have both kinds of step"
    explorer.update(inside[0])
    assert "interior" in explorer.legend_new.get_text()
    explorer.update(at_end[0])
    assert "clipped" in explorer.legend_new.get_text()
    assert r"$\eta" in explorer.suptitle.get_text()
