"""What svmlab.viz.family draws, checked against independent computations.

* the step explorer of epsilon-SVR: every frame draws the step of its record
  (the box [0, C1] x [0, C2], the line y1 a1 + y2 a2 = const, the ends L and
  H on it, the new pair) and the model after the step, recomputed here from
  the records with scikit-learn's kernel; the objective along the line is
  the dual's (its value at a2_new is the record's decrease, its minimiser
  the unclipped a2); the trace reaches LIBSVM's optimum;
* the tube picture and its counts agree with the KKT conditions computed
  here from LIBSVM's (scikit-learn's) SVR;
* the one-class picture prints the fractions that a count over
  scikit-learn's OneClassSVM gives, and the bound nu holds over a sweep, on
  the slider as a student moves it; a model that broke the bound would be
  shown in red (the check can fail);
* Platt: the cross-validated values are those of a hand-written fold loop,
  the sigmoid minimises the cross-entropy to Platt's targets (scipy's
  minimiser, independently), the reliability bins are counted by hand;
* the live pictures refit on every control, take clicks where the picture
  shows them, keep a blitting background that equals a fresh figure's
  pixels, and every figure passes the course's readability check;
* the live SVR step explorer opens where it is told, navigates, counts no
  classes, and its source panel hides the lines of exercise 08.svr_pair_bounds
  until it passes or is revealed;
* the "Try it yourself" texts of notebook 08 do what they say (their cells
  are executed as stored in the notebook).
"""

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from svmlab.viz._protocol import Fit
from sklearn.metrics.pairwise import rbf_kernel

pytest.importorskip("ipywidgets")

from svmlab.reference import dual as ref_dual  # noqa: E402
from svmlab.svm import SVR, OneClassSVM  # noqa: E402
from svmlab.viz import family as vf  # noqa: E402
from svmlab.viz._common import text_problems  # noqa: E402

NB = Path(__file__).resolve().parents[1] / "notebooks" / "08_svm_family.ipynb"


@pytest.fixture(scope="module")
def svr_data():
    X, z = vf.regression_points("sinc", n=20, noise=0.1, seed=1)
    tr = vf.svr_trace(X, z, C=1.0, epsilon=0.1, gamma=1.0)
    return X, z, tr


# --------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------
def test_data_sets_are_reproducible_and_refuse_bad_input():
    X, z = vf.regression_points("sinc", 15, 0.1, 3)
    X2, z2 = vf.regression_points("sinc", 15, 0.1, 3)
    assert X.shape == (15, 1) and np.array_equal(X, X2) and np.array_equal(z, z2)
    assert np.all(np.diff(X[:, 0]) >= 0)                     # sorted: index grows to the right
    Xs, zs = vf.regression_points("step", 40, 0.0, 0)
    assert np.array_equal(zs, np.where(Xs[:, 0] < 0, -0.5, 0.5))
    O = vf.one_class_points("ring", 50, 0.2, 0)
    assert O.shape == (50, 2)
    r = np.hypot(*O[:40].T)
    assert 1.0 < np.median(r) < 2.2
    Xc, yc = vf.calibration_points("overlap", 30, None, 0)
    assert set(np.unique(yc)) == {-1.0, 1.0} and Xc.shape == (30, 2)
    for call, msg in [(lambda: vf.regression_points("spiral", 10), "unknown regression"),
                      (lambda: vf.regression_points("sinc", 1), "at least 2"),
                      (lambda: vf.one_class_points("blob", 10, 1.5), "fraction"),
                      (lambda: vf.calibration_points("rings", 10), "unknown calibration")]:
        with pytest.raises(ValueError, match=msg):
            call()


# --------------------------------------------------------------------------
# the SVR dual, step by step
# --------------------------------------------------------------------------
def test_svr_steps_are_the_reference_dual_steps_and_replay_to_the_fit(svr_data):
    """svr_trace records SVR's own steps; they are the steps of the readable
    solver on the same problem, record for record, and replaying them gives
    SVR's multipliers and dual coefficients."""
    X, z, tr = svr_data
    n = len(z)
    ref = vf.dual_trace(tr.problem)
    assert len(ref.records) == len(tr.records) > 10
    # the compiled loop SVR runs and the readable twin: the same pairs, the
    # numbers equal up to rounding (some sums are added in another order)
    assert [(a.i1, a.i2) for a in ref.records] == [(b.i1, b.i2) for b in tr.records]
    assert vf.same_steps(ref.records, tr.records)
    assert not vf.same_steps(ref.records, tr.records[:-1])
    moved = list(tr.records)
    moved[3] = dataclasses.replace(moved[3], a2_new=moved[3].a2_new + 1e-6)
    assert not vf.same_steps(ref.records, moved)
    est = tr.estimator
    assert np.array_equal(tr.alphas[-1], est.alpha_)
    beta = np.zeros(n)
    beta[est.support_] = est.dual_coef_[0]
    assert np.array_equal(tr.coefs[-1], beta)
    coef, intercept = ref_dual.model(ref.problem, ref.result)
    np.testing.assert_allclose(tr.coefs[-1], coef, rtol=0, atol=1e-10)
    assert intercept == pytest.approx(est.intercept_[0], abs=1e-10)
    # max_steps stops the fit through the callback, with a feasible model
    short = vf.svr_trace(X, z, C=1.0, epsilon=0.1, gamma=1.0, max_steps=5)
    assert len(short.records) == 5 and short.capped and not short.estimator.converged_
    assert short.records == tr.records[:5]


def test_trace_reaches_libsvms_optimum(svr_data):
    from sklearn.svm import SVR as LibSVR

    X, z, tr = svr_data
    n = len(z)
    assert np.array_equal(tr.coefs[:, :], tr.alphas[:, :n] - tr.alphas[:, n:])
    # the objective computed here, at the end of the trace and at LIBSVM's solution
    lib = LibSVR(C=1.0, epsilon=0.1, gamma=1.0, tol=1e-10).fit(X, z)
    a = np.zeros(2 * n)
    d = np.zeros(n)
    d[lib.support_] = lib.dual_coef_[0]
    a[:n], a[n:] = np.maximum(d, 0), np.maximum(-d, 0)
    K = rbf_kernel(X, gamma=1.0)

    def f(alpha):
        beta = alpha[:n] - alpha[n:]
        return 0.5 * beta @ K @ beta + 0.1 * alpha.sum() - z @ beta

    assert f(tr.alphas[-1]) <= f(a) + 1e-3 * abs(f(a))
    # every state on the way is feasible: in the box, sum(beta) = 0
    assert np.all(tr.alphas >= 0) and np.all(tr.alphas <= 1.0)
    assert np.allclose(tr.coefs.sum(axis=1), 0, atol=1e-12)


def test_segment_change_is_the_dual_objective_along_the_line(svr_data):
    X, z, tr = svr_data
    n = len(z)
    # the kernel values the solver read: the drop-in SVR's rows are rounded
    # to float32 (LIBSVM's Qfloat, docs/decisions/36a01), within one float32
    # rounding of scikit-learn's float64 kernel
    K = np.asarray(tr.problem.K)
    assert np.allclose(K, rbf_kernel(X, gamma=1.0), rtol=2 ** -23, atol=0)
    assert np.array_equal(K, K.astype(np.float32))
    p = np.asarray(tr.problem.p)

    def f(alpha):
        beta = alpha[:n] - alpha[n:]
        return 0.5 * beta @ K @ beta + p @ alpha

    for t, r in enumerate(tr.records):
        before = tr.alphas[t]
        for v in (r.L, r.H, 0.5 * (r.L + r.H)):
            moved = before.copy()
            moved[r.i2] = v
            moved[r.i1] = r.a1_old - r.y1 * r.y2 * (v - r.a2_old)
            assert vf.segment_change(r, v) == pytest.approx(f(moved) - f(before), abs=1e-9)
        assert vf.segment_change(r, r.a2_new) == pytest.approx(-r.delta_objective, abs=1e-12)
        if r.eta > 0 and np.isfinite(r.a2_unclipped):
            h = 1e-6
            assert vf.segment_change(r, r.a2_unclipped - h) > vf.segment_change(r, r.a2_unclipped)
            assert vf.segment_change(r, r.a2_unclipped + h) > vf.segment_change(r, r.a2_unclipped)


def test_variable_names_and_categories():
    assert vf.variable_name(3, 10) == r"$\alpha_{3}$"
    assert vf.variable_name(13, 10) == r"$\alpha^*_{3}$"
    assert vf.variable_name(12, 10, "unicode") == "\u03b1*\u2082"
    assert vf.variable_name(12, 10, "html") == "&alpha;*<sub>2</sub>"
    with pytest.raises(ValueError):
        vf.variable_name(20, 10)
    assert vf.tube_categories([0.0, 0.3, -1.0, 1.0, -0.2], 1.0).tolist() == [0, 1, 2, 2, 1]
    assert vf.tube_categories([0.5, 0.5], [0.5, 2.0]).tolist() == [2, 1]


def test_every_frame_draws_its_record(svr_data):
    X, z, tr = svr_data
    n = len(z)
    ex = vf.SVRStepExplorer(X, z, tr, epsilon=0.1, gamma=1.0)
    K = rbf_kernel(X, gamma=1.0)
    for t, r in enumerate(tr.records):
        cap = ex.update(t)
        assert f"step {t + 1}/{len(tr.records)}" in cap and f"L = {r.L:.4f}" in cap
        # the box of the two variables and the segment on their line
        assert ex.box_rect.get_width() == r.C1 and ex.box_rect.get_height() == r.C2
        (x0, x1), (y0, y1) = ex.line_seg.get_data()
        assert [y0, y1] == [r.L, r.H]
        k = r.y1 * r.a1_old + r.y2 * r.a2_old
        for a1, a2 in ((x0, y0), (x1, y1)):
            assert r.y1 * a1 + r.y2 * a2 == pytest.approx(k, abs=1e-12)
            assert -1e-12 <= a1 <= r.C1 + 1e-12 and -1e-12 <= a2 <= r.C2 + 1e-12
        nx, ny = ex.pt_new.get_data()
        assert (nx[0], ny[0]) == pytest.approx((r.a1_new, r.a2_new), abs=1e-12)
        ox, oy = ex.pt_old.get_data()
        assert (ox[0], oy[0]) == (r.a1_old, r.a2_old)
        # the title names the variables: alpha for t < n, alpha* for t >= n
        for i, v in ((r.i1, "a\u2081"), (r.i2, "a\u2082")):
            name = vf.variable_name(i, n, "unicode")
            assert f"{v} = {name}" in ex.box_title.get_text()
            assert ("*" in name) == (i >= n)
        assert ("+" in ex.box_title.get_text().splitlines()[1]) == (r.y1 == r.y2)
        # the model after the step, recomputed with scikit-learn's kernel
        alpha = tr.alphas[t + 1]
        beta = alpha[:n] - alpha[n:]
        xs, fx = ex.tube.f.get_data()
        assert np.allclose(fx, rbf_kernel(xs[:, None], X, gamma=1.0) @ beta + r.b_new, atol=1e-10)
        _, up = ex.tube.up.get_data()
        assert np.allclose(up - fx, 0.1)
        # the pair's points ringed, the SVs by kind
        ring = ex.chosen.get_offsets()
        assert np.allclose(ring, [[X[r.i1 % n, 0], z[r.i1 % n]], [X[r.i2 % n, 0], z[r.i2 % n]]])
        drawn = [len(sc.get_offsets()) for sc in ex.tube.pts]
        cat = vf.tube_categories(beta, 1.0)
        assert drawn == [int(np.sum(cat == c)) for c in (0, 1, 2)]
        assert f"{int(np.sum(beta != 0))} SVs" in ex.data_title.get_text()
    del K


def test_the_step_figure_is_readable_at_every_kind_of_frame(svr_data):
    X, z, tr = svr_data
    ex = vf.SVRStepExplorer(X, z, tr, epsilon=0.1, gamma=1.0)
    kinds = {}
    for t, r in enumerate(tr.records):
        kinds.setdefault((int(r.y1), int(r.y2), bool(r.clipped)), t)
    assert len({k[:2] for k in kinds}) == 4              # the four sign combinations occur
    for t in list(kinds.values()) + [len(tr.records) - 1]:
        ex.update(t)
        assert text_problems(ex.fig) == [], t


def test_reset_keeps_the_background_only_when_the_pixels_stay(svr_data):
    from svmlab.viz import FramePlayer

    X, z, tr = svr_data
    ex = vf.SVRStepExplorer(X, z, tr, epsilon=0.1, gamma=1.0)
    tr2 = vf.svr_trace(X, z, C=5.0, epsilon=0.05, gamma=2.0)
    assert ex.reset(Fit(X, z, tr2, params=dict(epsilon=0.05, gamma=2.0)))           # same points: same axes
    p = FramePlayer(ex.fig, ex.T, ex.update, animated=ex.animated)
    fresh = vf.SVRStepExplorer(X, z, tr2, epsilon=0.05, gamma=2.0)
    q = FramePlayer(fresh.fig, fresh.T, fresh.update, animated=fresh.animated)
    for k in (0, ex.T // 2, ex.T - 1):
        p.goto(k)
        q.goto(k)
        a, b = (np.asarray(f.canvas.buffer_rgba()) for f in (p.fig, q.fig))
        assert np.array_equal(a, b), f"frame {k}"
    X3, z3 = vf.regression_points("line", 20, 0.4, 2)
    assert not ex.reset(Fit(X3, z3, vf.svr_trace(X3, z3),
                             params=dict(epsilon=0.1, gamma=1.0)))


def test_the_explorer_refuses_what_it_cannot_draw(svr_data):
    X, z, tr = svr_data
    with pytest.raises(ValueError, match="1-D"):
        vf.SVRStepExplorer(np.c_[X, X], z, tr, epsilon=0.1)
    K = rbf_kernel(X)
    other = vf.dual_trace(ref_dual.c_svc(K, np.where(z > 0, 1.0, -1.0), 1.0))
    with pytest.raises(ValueError, match="epsilon-SVR"):
        vf.SVRStepExplorer(X, z, other, epsilon=0.1)


# --------------------------------------------------------------------------
# the tube
# --------------------------------------------------------------------------
def test_tube_counts_follow_the_kkt_conditions_of_libsvm():
    from sklearn.svm import SVR as LibSVR

    X, z = vf.regression_points("sinc", 30, 0.1, 0)
    for eps in (0.01, 0.1, 0.3):
        m = SVR(C=1.0, epsilon=eps, gamma=1.0, tol=1e-6).fit(X, z)
        lib = LibSVR(C=1.0, epsilon=eps, gamma=1.0, tol=1e-8).fit(X, z)
        c = vf.svr_counts(X, z, m)
        r = np.abs(z - lib.predict(X))
        assert c["outside"] == int(np.sum(r > eps + 1e-6))
        assert c["inside"] == int(np.sum(r < eps - 1e-6))
        assert c["sv"] == len(lib.support_)
        assert c["bound"] == int(np.sum(np.abs(lib.dual_coef_) >= 1.0 - 1e-9))
        assert c["outside_not_bound"] == c["inside_sv"] == 0
        assert c["inside"] + c["edge"] + c["outside"] == 30


def test_the_tube_figure_draws_the_model_and_its_kkt_picture():
    X, z = vf.regression_points("sinc", 25, 0.15, 4)
    m = SVR(C=2.0, epsilon=0.05, gamma=1.0).fit(X, z)
    fig = vf.TubeFigure()
    c = fig.draw(X, z, m)
    xs, fx = fig.tube.f.get_data()
    assert np.allclose(fx, m.predict(xs[:, None]))
    beta = np.zeros(25)
    beta[m.support_] = m.dual_coef_[0]
    res = z - m.predict(X)
    pts = np.vstack([sc.get_offsets() for sc in fig.kkt_pts])
    assert sorted(map(tuple, np.round(pts, 12))) == sorted(
        zip(np.round(res, 12), np.round(beta / 2.0, 12)))
    assert f"{c['sv']} SVs of 25" in fig.title.get_text()
    # every point drawn outside the tube is a red square (|beta| = C)
    red = fig.tube.pts[2].get_offsets()
    assert len(red) == c["bound"] >= c["outside"]
    assert text_problems(fig.fig) == []


# --------------------------------------------------------------------------
# one-class and nu
# --------------------------------------------------------------------------
def test_one_class_counts_against_libsvm_and_the_bound_over_nu():
    from sklearn.svm import OneClassSVM as LibOC

    X = vf.one_class_points("two blobs", 80, 0.1, 3)
    nus = np.round(np.linspace(0.05, 0.95, 10), 2)
    out, sv = vf.nu_fractions(X, nus, gamma=0.5)
    assert np.all(out <= nus + 1e-12) and np.all(nus <= sv + 1e-12)
    for nu in nus[::3]:
        m = OneClassSVM(nu=nu, gamma=0.5, tol=1e-6).fit(X)
        lib = LibOC(nu=nu, gamma=0.5, tol=1e-9).fit(X)
        c = vf.one_class_counts(m, X)
        assert c["sv"] == len(lib.support_)
        f = lib.decision_function(X)
        assert c["outside"] == int(np.sum(f < -1e-6))
        assert c["holds"]


class _BrokenModel:
    """A "model" whose numbers break the bound: the display must say so."""

    nu, tol, kernel = 0.1, 1e-3, "rbf"

    def __init__(self, n):
        self.support_ = np.arange(3)
        self.dual_coef_ = np.ones((1, 3))
        self.n = n

    def decision_function(self, X):
        f = np.ones(len(X))
        f[: len(X) // 2] = -1.0       # half the points outside, with nu = 0.1
        return f


def test_the_one_class_figure_prints_the_fractions_and_can_fail():
    X = vf.one_class_points("blob", 60, 0.1, 0)
    m = OneClassSVM(nu=0.3, gamma=0.5).fit(X)
    fig = vf.OneClassFigure()
    c = fig.draw(X, m)
    widths = [b.get_width() for b in fig.bars]
    assert widths == [c["frac_outside"], 0.3, c["frac_sv"]]
    assert fig.bar_txt[0].get_text().startswith(f"{c['frac_outside']:.3f} ({c['outside']} of 60)")
    assert "holds" in fig.verdict.get_text() and fig.verdict.get_color() == "#188038"
    assert len(fig.pts_out.get_offsets()) == c["outside"]
    assert len(fig.sv_free.get_offsets()) + len(fig.sv_bound.get_offsets()) == c["sv"]
    assert len(fig.boundary.get_segments()) >= 1
    assert text_problems(fig.fig) == []
    bad = vf.one_class_counts(_BrokenModel(60), X)
    assert not bad["holds"]
    fig.draw(X, _BrokenModel(60))
    assert "FAILS" in fig.verdict.get_text() and fig.verdict.get_color() == "#c5221f"


# --------------------------------------------------------------------------
# Platt
# --------------------------------------------------------------------------
def test_cv_values_sigmoid_and_reliability_against_hand_computations():
    from scipy.optimize import minimize
    from sklearn.model_selection import StratifiedKFold

    from svmlab.svm import SVC

    X, y = vf.calibration_points("overlap", 60, None, 2)
    f = vf.cv_decision_values(lambda: SVC(C=1.0, gamma=0.5), X, y, random_state=3)
    g = np.empty(60)
    for tr_, te in StratifiedKFold(5, shuffle=True, random_state=3).split(X, y):
        g[te] = SVC(C=1.0, gamma=0.5).fit(X[tr_], y[tr_]).decision_function(X[te])
    assert np.array_equal(f, g)
    A, B = vf.platt_fit(f, y)
    npos, nneg = np.sum(y > 0), np.sum(y < 0)
    t = np.where(y > 0, (npos + 1) / (npos + 2), 1 / (nneg + 2))

    def xent(ab):
        p = 1 / (1 + np.exp(ab[0] * f + ab[1]))
        return -np.sum(t * np.log(p) + (1 - t) * np.log1p(-p))

    best = minimize(xent, [0.0, 0.0], method="Nelder-Mead",
                    options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 4000})
    assert (A, B) == pytest.approx(tuple(best.x), abs=1e-4)
    assert xent([A, B]) <= best.fun + 1e-9
    p = np.random.default_rng(0).uniform(size=500)
    yy = np.where(np.random.default_rng(1).uniform(size=500) < p, 1, -1)
    mp, fr, cnt, ece = vf.reliability(p, yy)
    for b in range(10):
        m = (p >= b / 10) & (p < (b + 1) / 10)
        assert cnt[b] == m.sum() and mp[b] == pytest.approx(p[m].mean())
        assert fr[b] == pytest.approx(np.mean(yy[m] > 0))
    assert ece == pytest.approx(np.sum(cnt / 500 * np.abs(fr - mp)))


def test_the_platt_figure_draws_both_sigmoids_and_the_diagram():
    X, y = vf.calibration_points("moons", 60, None, 0)
    Xt, yt = vf.calibration_points("moons", 400, None, 5)
    s = vf.platt_summary(X, y, Xt, yt, C=1.0, gamma=0.5, seed=0)
    fig = vf.PlattFigure()
    fig.draw(s)
    fs, ps = fig.sig.get_data()
    assert np.allclose(ps, 1 / (1 + np.exp(s["A"] * fs + s["B"])))
    _, pt = fig.sig_train.get_data()
    assert np.allclose(pt, 1 / (1 + np.exp(s["A_train"] * fs + s["B_train"])))
    _, ty = fig.targets.get_data()
    npos = int(np.sum(y > 0))
    assert ty[0] == (npos + 1) / (npos + 2)
    mp, fr, cnt, _ = vf.reliability(1 / (1 + np.exp(s["A"] * s["f_test"] + s["B"])), yt)
    x, yv = fig.rel_cv.get_data()
    assert np.allclose(x, mp[cnt > 0]) and np.allclose(yv, fr[cnt > 0])
    assert sum(b.get_height() for b in fig.hist) == pytest.approx(1.0)
    assert text_problems(fig.fig) == []


# --------------------------------------------------------------------------
# the live pictures
# --------------------------------------------------------------------------
def _same_pixels_as_fresh(live, make):
    fresh = make()
    a = np.asarray(live.fig.canvas.buffer_rgba()).copy()
    b = np.asarray(fresh.fig.canvas.buffer_rgba())
    return a.shape == b.shape and np.array_equal(a, b)


def test_live_tube_refits_clicks_and_keeps_a_valid_background():
    X, z = vf.regression_points("sinc", 24, 0.1, 0)
    live = vf.live_svr_tube(X, z, C=1.0, epsilon=0.1, gamma=1.0)
    img = live.image.value
    live.controls["epsilon"].value = 0.3
    assert live.model.epsilon == pytest.approx(0.3) and live.image.value != img
    assert "outside" in live.status.value and "every point outside has" in live.status.value
    # the background kept across the refit draws what a new picture draws
    assert _same_pixels_as_fresh(live, lambda: vf.live_svr_tube(X, z, C=1.0, epsilon=0.3,
                                                                 gamma=1.0))
    # a click at the pixel of a data position adds the point (x, z) there
    ax = live.figure.ax
    h = live.fig.bbox.height
    px, py = ax.transData.transform((0.5, 1.3))
    got = live.click(px, h - py)
    assert got == pytest.approx((0.5, 1.3))
    Xn, zn = live.points
    assert len(zn) == 25 and (Xn[-1, 0], zn[-1]) == pytest.approx((0.5, 1.3))
    assert live.controls["dataset"].value == "your data"
    assert live.remove_nearest(0.5, 1.3) == 24 and len(live.points[1]) == 24
    assert live.click(1, 1) is None                         # off the data panel
    assert text_problems(live.fig) == []


def test_live_one_class_prints_the_fractions_as_nu_moves():
    X = vf.one_class_points("blob", 80, 0.1, 1)
    live = vf.live_one_class(X, nu=0.2, gamma=0.5)
    seen = []
    for nu in (0.05, 0.2, 0.35, 0.5, 0.8, 0.99):
        live.controls["nu"].value = nu
        c = live.numbers
        f = live.model.decision_function(X)
        out = int(np.sum(f < -live.model.tol))
        sv = len(live.model.support_)
        assert (c["outside"], c["sv"]) == (out, sv)
        assert f"outside {out}/80 = {out / 80:.3f}" in live.status.value
        assert f"support vectors {sv}/80 = {sv / 80:.3f}" in live.status.value
        assert f"nu = {nu:.3f}" in live.status.value and "holds" in live.status.value
        assert out <= nu * 80 <= sv
        seen.append(live.image.value)
    assert len(set(seen)) == len(seen)
    assert _same_pixels_as_fresh(live, lambda: vf.live_one_class(X, nu=0.99, gamma=0.5))
    live.add_point(5.0, 5.0)
    assert len(live.points[0]) == 81


def test_live_platt_refits_and_draws():
    live = vf.live_platt(C=1.0, gamma=0.5, n=60)
    a = live.numbers["A"]
    live.controls["C"].value = 50.0
    assert live.numbers["A"] != a and "log-loss" in live.status.value
    assert live.numbers["model"].C == pytest.approx(50.0, rel=1e-9)
    with pytest.raises(TypeError, match="takes no points"):
        live.add_point(0, 0, 1)
    assert text_problems(live.fig) == []


def test_live_pictures_time_their_refits():
    live = vf.live_one_class(n=40)
    live.controls["gamma"].value = 1.0
    t = live.timing()
    assert t["n"] == 2 and t["total_ms"] >= t["fit_ms"] > 0


# --------------------------------------------------------------------------
# the live step explorer
# --------------------------------------------------------------------------
@pytest.fixture
def locks(monkeypatch):
    from svmlab.exercises import _registry as reg

    monkeypatch.delenv(reg.LOCKS_ENV, raising=False)
    reg.reset_locks()
    yield reg
    reg.reset_locks()


def test_live_steps_open_where_told_and_navigate(locks):
    live = vf.live_svr_steps(n=20, seed=1, start=5)
    assert live.player.value == 4 and "step 5/" in live.player.caption.value
    assert "(+1)" not in live.status.value and "20 points" in live.status.value
    k = live.jump("next y1 = y2")
    r = live.record(k)
    assert k > 4 and r.y1 == r.y2
    assert all(live.record(j).y1 != live.record(j).y2 for j in range(5, k))
    k2 = live.jump("next y1 != y2")
    assert live.record(k2).y1 != live.record(k2).y2
    live.player.goto(0)
    kc = live.jump("next clipped")
    assert kc is None or live.record(kc).clipped
    # a refit opens at the same step again, on the new trace
    live.controls["epsilon"].value = 0.05
    assert live.player.value == 4 and live.explorer.epsilon == pytest.approx(0.05)
    for j in range(live.n_frames):          # every frame redraws
        live.player.goto(j)


_SEGMENT = ["L, H = max(0.0, a2 - a1), min(C2, C1 + a2 - a1)",
            "L, H = max(0.0, a2 + a1 - C1), min(C2, a2 + a1)"]


def test_the_source_panel_hides_the_segment_until_passed_or_revealed(locks):
    import html

    import importlib.util

    live = vf.live_svr_steps(n=16, seed=0)
    for j in range(live.n_frames):
        live.player.goto(j)
        text = html.unescape(live.source.value)
        assert "dual.Dual.take_step" in text and "dual.Dual.select" in text
        assert not any(s in text for s in _SEGMENT), j
        assert "hidden: exercise 08.svr_pair_bounds" in text
    assert "08.svr_pair_bounds" in live.reveal_button.description
    path = NB.parents[1] / "instructor" / "solutions" / "solutions_08_family.py"
    spec = importlib.util.spec_from_file_location("sol08", path)
    sol = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sol)
    from svmlab.exercises import check_svr_pair_bounds

    assert check_svr_pair_bounds(sol.svr_pair_bounds).passed
    text = html.unescape(live.source.value)           # redrawn on the pass
    assert all(s in text for s in _SEGMENT) and "hidden: exercise 08" not in text
    # the step and the threshold are notebook 01's exercises: hidden for those
    assert "b1 = b - E1 - d1 * k11 - d2 * k12" not in text
    assert "hidden: exercise 01.threshold" in text
    locks.reset_locks()
    live2 = vf.live_svr_steps(n=16, seed=0)
    assert not any(s in html.unescape(live2.source.value) for s in _SEGMENT)
    live2.reveal()
    assert all(s in html.unescape(live2.source.value) for s in _SEGMENT)


# --------------------------------------------------------------------------
# notebook 08: its live cells, and what its texts tell the student to try
# --------------------------------------------------------------------------
def _nb_cells():
    return json.loads(NB.read_text(encoding="utf-8"))["cells"]


def _cell(cid):
    c = [c for c in _nb_cells() if c.get("id") == cid]
    assert len(c) == 1, cid
    src = c[0]["source"]
    return c[0], "".join(src) if isinstance(src, list) else src


def _run(*ids):
    """Execute the notebook's cells ``ids`` (as stored) in one namespace."""
    ns = {}
    for cid in ids:
        _, src = _cell(cid)
        src = "\n".join(ln for ln in src.splitlines() if not ln.lstrip().startswith("%"))
        exec(compile(src, f"08:{cid}", "exec"), ns)  # noqa: S102 - our own notebook
    return ns


def test_live_cells_are_widgets_with_tags_and_name_their_reference():
    for cid in ("nb08-tube-live", "nb08-step-live", "nb08-oc-live", "nb08-platt-live"):
        cell, src = _cell(cid)
        assert "nbval-ignore-output" in cell["metadata"].get("tags", [])
        assert "NBVAL" not in src and "print(" not in src
        assert all("application/vnd.jupyter.widget-view+json" in o.get("data", {})
                   for o in cell["outputs"]) and cell["outputs"]
    _, text = _cell("nb08-step-try")
    assert "`svmlab/reference/dual.py`" in text
    assert (NB.parents[1] / "svmlab" / "reference" / "dual.py").is_file()


def test_the_exercises_end_the_notebook_unsolved():
    from svmlab.exercises.family import CELLS

    cells = _nb_cells()[-len(CELLS):]
    assert [c["cell_type"] for c in cells] == [k for k, _ in CELLS]
    for c, (_, src) in zip(cells, CELLS):
        s = c["source"]
        assert ("".join(s) if isinstance(s, list) else s) == src
        if c["cell_type"] == "code":
            assert "not implemented" in json.dumps(c["outputs"]).lower()


def test_tube_try_it_yourself_does_what_the_text_says():
    ns = _run("nb08-imports", "nb08-tube-fit", "nb08-tube-live")
    live = ns["live_tube"]
    n = len(live.points[1])
    live.controls["epsilon"].value = 0.5                 # a wide tube: few SVs, none outside
    wide = live.numbers
    assert wide["outside"] == 0 and wide["sv"] == wide["edge"] <= n // 4
    live.controls["epsilon"].value = 0.01                # a thin one: more outside, all at C
    thin = live.numbers
    assert thin["outside"] > wide["outside"] and thin["bound"] >= thin["outside"]
    assert thin["outside_not_bound"] == 0 and thin["sv"] > wide["sv"]
    live.controls["epsilon"].value = 0.1
    live.controls["C"].value = 0.01                      # cheap points outside, f flat
    small = live.numbers
    xs, fx = live.figure.tube.f.get_data()
    assert np.ptp(fx) < 0.2 and small["outside"] >= n // 2 and small["outside_not_bound"] == 0
    live.controls["C"].value = 1.0
    before = live.model.predict(np.array([[0.5]]))[0]
    live.add_point(0.5, 2.5)                             # far above the curve
    m = live.model
    beta = np.zeros(n + 1)
    beta[m.support_] = m.dual_coef_[0]
    assert beta[-1] == pytest.approx(m.C) and live.numbers["outside"] >= 1
    assert abs(2.5 - m.predict(np.array([[0.5]]))[0]) > m.epsilon
    assert m.predict(np.array([[0.5]]))[0] > before         # f pulled towards the point


def test_step_explorer_opens_at_the_step_the_text_names():
    ns = _run("nb08-imports", "nb08-step-trace", "nb08-step-live")
    live, first = ns["live_steps"], ns["first_stars"]
    r = live.record()
    assert live.player.value == first.iteration - 1
    assert r.y1 == r.y2 == -1 and r.iteration == first.iteration
    assert all(not (q.y1 == q.y2 == -1) for q in live.trace[:first.iteration - 1])
    assert f"step {first.iteration}/" in live.player.caption.value


def test_one_class_try_it_yourself_does_what_the_text_says():
    ns = _run("nb08-imports", "nb08-oc-sweep", "nb08-oc-live")
    live = ns["live_oc"]
    for nu in np.arange(0.05, 1.0, 0.15):                 # the bound, as nu moves
        live.controls["nu"].value = float(np.round(nu, 2))
        assert live.numbers["holds"] and "holds" in live.status.value
    live.controls["nu"].value = 0.2
    live.add_point(6.0, 6.0)                              # far from the blob
    m = live.model
    f = m.decision_function(np.array([[6.0, 6.0]]))[0]
    a = np.zeros(len(live.points[0]))
    a[m.support_] = m.dual_coef_[0]
    assert f < -m.tol and a[-1] == 1.0 and m.offset_[0] > 1.0
    live.controls["dataset"].value = "ring"               # a hole in the region
    assert live.model.decision_function(np.array([[0.0, 0.0]]))[0] < 0


def test_platt_try_it_yourself_does_what_the_text_says():
    ns = _run("nb08-imports", "nb08-platt-fit", "nb08-platt-overfit-code", "nb08-platt-live")
    s2 = ns["s2"]
    assert abs(s2["A_train"]) > abs(s2["A"]) and s2["logloss_train"] > s2["logloss_cv"]
    live = ns["live_platt"]
    s0 = live.numbers
    assert np.array_equal(s0["f_cv"], ns["s"]["f_cv"])     # the points of the cell above
    live.controls["C"].value = 100.0
    live.controls["gamma"].value = 5.0
    s = live.numbers
    assert abs(s["A_train"]) > abs(s["A"]) and s["logloss_train"] > s["logloss_cv"]
    assert f"{s['logloss_train']:.3f}" in live.status.value
    live.controls["C"].value = 1.0
    live.controls["gamma"].value = 0.5
    live.controls["dataset"].value = "overlap"
    assert live.controls["noise"].value == vf.CALIBRATION_NOISE["overlap"]
    slopes, middle = [], []
    for noise in (0.6, 1.2, 2.0):                         # more overlap: flatter, fuller middle
        live.controls["noise"].value = noise
        slopes.append(abs(live.numbers["A"]))
        middle.append(np.sum(live.numbers["rel_cv"][2][2:8]))
    assert slopes[0] > slopes[1] > slopes[2] and middle[0] < middle[1] < middle[2]
