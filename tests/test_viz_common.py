"""Tests of the shared viz helpers: traces, the frame player, decision grids."""

import io
from dataclasses import dataclass

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel

from svmlab import viz
from svmlab._stepping import SolverRun, SteppedFitMixin
from svmlab.viz import _common


# a tiny stepped "solver" following the contract: counts to n_steps
@dataclass(frozen=True, slots=True)
class _Rec:
    iteration: int
    value: float


class _CountRun(SolverRun):
    def __init__(self, est, n_steps):
        super().__init__(est, max_iter=-1)
        self.k = 0
        self.n_steps = n_steps

    def _step(self):
        if self.k >= self.n_steps:
            self.converged = True
            return None
        self.k += 1
        return _Rec(iteration=self.k, value=0.5 * self.k)

    def result(self):
        return {"k": self.k}


class _Counter(SteppedFitMixin):
    def __init__(self, n_steps=7):
        self.n_steps = n_steps

    def start(self, X, y):
        return _CountRun(self, self.n_steps)

    def _store_run(self, run):
        self.k_ = run.k
        self.n_iter_ = run.n_iter


def test_record_trace_keeps_every_record_in_order():
    tr = viz.record_trace(_Counter(7), None, None)
    assert len(tr) == 7
    assert [r.iteration for r in tr] == list(range(1, 8))
    np.testing.assert_array_equal(tr.field("value"), 0.5 * np.arange(1, 8))
    assert tr.fields == ("iteration", "value")
    assert tr.estimator.k_ == 7


def test_record_trace_max_steps_stops_the_fit():
    tr = viz.record_trace(_Counter(50), None, None, max_steps=4)
    assert len(tr) == 4
    assert tr.estimator.k_ == 4 and tr.estimator.n_iter_ == 4


def _line_player(n=6):
    fig = viz.new_figure(figsize=(3, 2), dpi=50)
    ax = fig.add_subplot()
    (line,) = ax.plot([0, 1], [0, 0])
    ax.set_ylim(-1, n)
    title = ax.set_title("")

    def update(k):
        line.set_data([0, 1], [k, k])
        title.set_text(f"frame {k}")
        return f"<b>k = {k}</b>"

    return viz.FramePlayer(fig, n, update), line, title, ax


def test_player_slider_redraws_by_updating_artists():
    p, line, title, ax = _line_player(6)
    n_lines = len(ax.lines)
    first = p.image.value
    assert p.caption.value == "<b>k = 0</b>" and title.get_text() == "frame 0"
    p.slider.value = 3
    # the same artist objects were updated, nothing was added
    assert len(ax.lines) == n_lines and ax.lines[0] is line
    assert list(line.get_ydata()) == [3, 3]
    assert title.get_text() == "frame 3"
    assert p.caption.value == "<b>k = 3</b>"
    assert p.image.value != first and p.image.value[:2] == b"\xff\xd8"  # JPEG
    assert p.play.max == len(p.slider.options) - 1 == 5
    # the readout counts from 1, as the captions of the explorers count steps
    assert p.slider.label == "4" and p.labels == ["1", "2", "3", "4", "5", "6"]


def test_player_first_last_buttons_and_labels():
    p, line, title, ax = _line_player(6)
    p.last_button.click()
    assert p.value == p.frame == 5 and p.slider.label == "6"
    p.first_button.click()
    assert p.value == p.frame == 0
    p.replace(p.fig, 3, p._update, labels=["1", "2", "stop"], start=2)
    assert p.slider.label == "stop" and p.value == 2 and p.play.value == 2
    p.replace(p.fig, 2, p._update, labels=lambda k: f"{50 * k} %")
    assert p.labels == ["0 %", "50 %"] and p.value == 0
    with pytest.raises(ValueError, match="labels"):
        p.replace(p.fig, 3, p._update, labels=["a"])


def test_player_drive_visits_every_frame_and_propagates_errors():
    p, line, title, ax = _line_player(5)
    seen = []
    orig = p._update

    def spy(k):
        seen.append(k)
        return orig(k)

    p._update = spy
    p.slider.value = 2
    seen.clear()
    assert p.drive() == 5
    # every frame, then back to the frame shown before driving
    assert seen == [0, 1, 2, 3, 4, 2]
    assert p.slider.value == 2 and p.frame == 2 and p.caption.value == "<b>k = 2</b>"
    t = p.timing()
    assert t["n"] >= 6 and t["total_ms"] >= t["update_ms"] >= 0

    def broken(k):
        raise RuntimeError("broken callback")

    p._update = broken
    with pytest.raises(RuntimeError, match="broken callback"):
        p.drive()


def test_player_renders_at_twice_the_dpi_and_shows_natural_size():
    from PIL import Image

    p, line, title, ax = _line_player(4)  # 3 x 2 inches at 50 dpi
    im = Image.open(io.BytesIO(p.image.value))
    assert im.size == (300, 200)  # 2 x (150, 100) physical pixels
    assert (p.css_width, p.css_height) == (150, 100)
    assert p.image.layout.width == "150px"
    # a second player on the same figure does not double the dpi again
    p2 = viz.FramePlayer(p.fig, 4, p._update, scale=2)
    assert Image.open(io.BytesIO(p2.image.value)).size == (300, 200)
    with pytest.raises(ValueError, match="scale"):
        viz.FramePlayer(viz.new_figure(), 2, lambda k: None, scale=0)


def test_player_pixel_to_data_inverts_the_axes_transform():
    p, line, title, ax = _line_player(4)
    ax.set_xlim(0, 1)
    line.set_visible(False)
    (dot,) = ax.plot([0.0], [0.0], "s", color="#ff0000", ms=4)
    for x, y in [(0.25, 1.0), (0.8, 3.5)]:
        # find the red dot in the rendered pixels (independent of transforms)
        dot.set_data([x], [y])
        p.fig.canvas.draw()
        rgba = np.asarray(p.fig.canvas.buffer_rgba())
        red = (rgba[..., 0] > 200) & (rgba[..., 1] < 60) & (rgba[..., 2] < 60)
        rows, cols = np.nonzero(red)
        assert len(rows) > 4
        # pixel centres: column c covers [c, c + 1)
        gx, gy = p.pixel_to_data(ax, cols.mean() + 0.5, rows.mean() + 0.5)
        dx, dy = np.diff(ax.get_xlim())[0], np.diff(ax.get_ylim())[0]
        # within one rendered pixel of the true data point
        assert abs(gx - x) < 1.5 * dx / ax.bbox.width
        assert abs(gy - y) < 1.5 * dy / ax.bbox.height


def test_player_replace_keeps_the_widgets():
    p, line, title, ax = _line_player(6)
    image, slider = p.image, p.slider
    p.slider.value = 5
    fig = viz.new_figure(figsize=(2, 2), dpi=40)
    ax2 = fig.add_subplot()
    seen = []

    def update(k):
        seen.append(k)
        return f"new {k}"

    p.replace(fig, 3, update)
    assert p.image is image and p.slider is slider
    assert len(p.slider.options) - 1 == p.play.max == 2 and p.slider.value == 0
    assert seen == [0] and p.caption.value == "new 0" and p.image.layout.width == "80px"
    p.slider.value = 2
    assert seen == [0, 2]
    with pytest.raises(IndexError):
        p.goto(3)


def test_static_animation_is_jshtml():
    p, line, title, ax = _line_player(3)
    html = viz.static_animation(p.fig, p._update, range(3))
    assert "<img" in html.data or "animation" in html.data.lower()
    assert html.data.count("data:image/jpeg;base64") == 3


def test_notebook_size_switch(monkeypatch):
    monkeypatch.setenv("SVMLAB_NOTEBOOK_SIZE", "small")
    assert viz.notebook_size() == "small" and viz.pick_size(1, 2) == 1
    monkeypatch.delenv("SVMLAB_NOTEBOOK_SIZE")
    assert viz.notebook_size() == "full" and viz.pick_size(1, 2) == 2


def test_decision_grid_matches_reference_kernel():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 2))
    coef = rng.normal(size=12)
    g = viz.DecisionGrid(X, kernel="rbf", gamma=0.7, n=15)
    Z = g.values(coef, 0.25)
    ref = coef @ rbf_kernel(X, g.points, gamma=0.7) + 0.25
    np.testing.assert_allclose(Z.ravel(), ref, rtol=1e-12, atol=1e-12)
    assert Z.shape == (15, 15)


def test_contour_segments_of_a_plane():
    xs = np.linspace(-1, 1, 21)
    ys = np.linspace(-2, 2, 11)
    Z = np.add.outer(np.zeros_like(ys), xs) - 0.3  # f = x - 0.3
    segs = _common.contour_segments(xs, ys, Z, 0.0)
    pts = np.vstack(segs)
    np.testing.assert_allclose(pts[:, 0], 0.3, atol=1e-12)
    assert pts[:, 1].min() == pytest.approx(-2) and pts[:, 1].max() == pytest.approx(2)


def test_class_colors():
    c = viz.class_colors(np.array([-1, 1, 1.0, -1.0]))
    assert list(c) == [viz.CLASS_COLORS[-1], viz.CLASS_COLORS[1], viz.CLASS_COLORS[1],
                       viz.CLASS_COLORS[-1]]


def test_lazy_submodules():
    import svmlab

    assert svmlab.viz.FramePlayer is _common.FramePlayer
    assert svmlab.viz.live.live_smo is not None and "live" in dir(svmlab.viz)
    with pytest.raises(AttributeError):
        svmlab.viz.nope


def test_plot_decision_regions_draws_boundary_of_the_model():
    import matplotlib.pyplot as plt
    from sklearn.svm import SVC

    rng = np.random.default_rng(1)
    X = np.vstack([rng.normal(-1, 0.5, (20, 2)), rng.normal(1, 0.5, (20, 2))])
    y = np.r_[np.zeros(20), np.ones(20)]
    clf = SVC(kernel="linear", C=1.0).fit(X, y)
    fig, ax = plt.subplots()
    viz.plot_decision_regions(ax, clf, X, y, title="t")
    # the solid contour is f = 0: its vertices have decision values ~ 0
    cs = [c for c in ax.collections if hasattr(c, "levels") and 0.0 in list(c.levels)]
    assert cs
    paths = cs[-1].get_paths()
    lev = list(cs[-1].levels).index(0.0)
    verts = paths[lev].vertices
    assert len(verts) > 2
    np.testing.assert_allclose(clf.decision_function(verts), 0, atol=1e-6)
    # support vectors ringed
    rings = [c for c in ax.collections if c.get_offsets().shape[0] == len(clf.support_)]
    assert any(np.array_equal(r.get_offsets(), X[clf.support_]) for r in rings)
    plt.close(fig)


def test_static_exports_keep_the_designed_size_after_a_player_doubled_the_dpi():
    import base64
    import re

    from PIL import Image

    p, line, title, ax = _line_player(3)  # 3 x 2 inches at 50 dpi, player at 100 dpi
    assert p.fig.dpi == 100
    png = _common.fig_to_png(p.fig)
    assert Image.open(io.BytesIO(png)).size == (150, 100)
    html = viz.static_animation(p.fig, p._update, range(2)).data
    # the first frame, as the page's JavaScript string holds it (escaped newlines)
    frame = re.search(r'data:image/jpeg;base64,([^"]+)"', html).group(1)
    frame = re.sub(r"\\n|\s", "", frame)
    im = Image.open(io.BytesIO(base64.b64decode(frame)))
    assert im.size == (150, 100)


def test_warm_fits_makes_the_choices_of_the_full_fit():
    """The clones that warm_fits fits on a few rows choose the kernel cache's
    type as the full fits do (float32 when the float64 matrix does not fit
    in cache_size), so the compiled code they load is the one the timed fit
    runs; LIBSVM (no compilation) is left alone."""
    from sklearn.svm import SVC

    from svmlab import IRWLSClassifier, SMOClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(2400, 4))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=2400) > 0, 1, -1)
    ests = [SMOClassifier(C=1.0, cache_size=40, progress=False),       # 2400^2 * 8 B > 40 MB
            SMOClassifier(C=1.0, cache_size=100, progress=False),      # the matrix fits
            IRWLSClassifier(C=1.0, cache_size=1.0, progress=False), SVC()]
    clones = viz.warm_fits(ests, X, y, n=200)
    assert len(clones) == 3 and viz.warm_fits.seconds >= 0
    for est, c in zip(ests, clones):
        full = est.fit(X, y)
        assert c.cache_dtype_ == full.cache_dtype_, (est, c.cache_dtype_)
        assert len(c.classes_) == 2
    assert {c.cache_dtype_ for c in clones[:2]} == {"float32", "float64"}
