"""The explorers and the static figures are readable in a 1280 px browser.

At 1280 px, JupyterLab with its file browser open leaves 848 CSS px for a
cell's output (measured in headless Chromium, tests/test_browser.py).  Every
explorer figure is shown at its natural size (``FramePlayer`` sets the
image's CSS width), so here, for every explorer of the notebooks, with the
notebooks' settings, at several frames:

* the picture is at most 840 CSS px wide (never scaled down by the browser);
* every text it draws is at least 9 CSS points (``text_problems``: font size
  times the figure's design dpi over 96), no two texts overlap and none
  sticks out of the figure;
* the slider's readout is the number the caption shows.

The checker itself is tested on figures made to fail it.
"""

import re

import numpy as np
import pytest

from svmlab import datasets
from svmlab.viz import live as vlive
from svmlab.viz import new_figure, text_problems

MAX_CSS_WIDTH = 840


def test_text_problems_finds_small_overlapping_and_clipped_text():
    fig = new_figure(figsize=(4, 3), dpi=96)
    ax = fig.add_subplot()
    ax.set_xticks([])
    ax.set_yticks([])
    assert text_problems(fig) == []
    ax.text(0.5, 0.5, "tiny", fontsize=7, transform=ax.transAxes)
    ax.text(0.1, 0.9, "first words", fontsize=10, transform=ax.transAxes)
    ax.text(0.12, 0.9, "second words", fontsize=10, transform=ax.transAxes)
    ax.text(1.05, 0.5, "far outside the figure", fontsize=10, transform=ax.transAxes)
    probs = text_problems(fig)
    assert any("too small" in p and "tiny" in p for p in probs)
    assert any("overlap" in p and "first words" in p for p in probs)
    assert any("outside" in p and "far outside" in p for p in probs)
    # a figure designed at 72 dpi shows 9 pt text at 6.75 CSS points
    fig72 = new_figure(figsize=(4, 3), dpi=72)
    fig72.text(0.1, 0.5, "nine points", fontsize=9)
    assert any("too small (6.8 pt)" in p for p in text_problems(fig72))


# the explorers as the notebooks open them
LIVE = {
    "00_primer live_smo": lambda: vlive.live_smo(*datasets.toy_2d("moons", n=40, random_state=0),
                                                 C=10.0, gamma=1.0, source=None, start="last"),
    "01 live_smo": lambda: vlive.live_smo(*datasets.toy_2d("moons", n=40, random_state=0),
                                          C=10.0, gamma=1.0),
    "03 live_cutting_plane": lambda: vlive.live_cutting_plane(
        *datasets.toy_2d("blobs", n=50, random_state=3, noise=1.1), C=20.0, epsilon=1e-3),
    "04 live_ordinal": lambda: vlive.live_ordinal(C=10.0, n_ranks=3, n=12),
    "05 live_irwls": lambda: vlive.live_irwls(C=1.0, gamma=0.5, dataset="gauss-m", n=60,
                                              working_set_size=20, selection="random"),
    "06 live_family": lambda: vlive.live_family(C=10.0, gamma=1.0, working_set_size=10,
                                                dataset="moons", n=60, seed=1),
}


@pytest.mark.parametrize("name", list(LIVE))
def test_live_explorer_is_readable_and_counts_like_its_caption(name):
    L = LIVE[name]()
    p = L.player
    assert p.css_width <= MAX_CSS_WIDTH, p.css_width
    frames = sorted({0, 1, L.n_frames // 2, L.n_frames - 1} & set(range(L.n_frames)))
    for k in frames:
        p.goto(k)
        # the live player hides some figure texts (the caption carries them):
        # check what it shows, and the full figure as the static export draws it
        assert text_problems(p.fig) == [], (name, k)
        label = p.labels[k]
        cap = re.sub("<[^>]+>", "", p.caption.value)
        if label.endswith("%"):
            assert cap.startswith(f"progress {label}"), (label, cap)
        elif label == "stop":
            assert cap.startswith("stopping check"), cap
        else:
            assert re.search(rf"\b{label}/\d+", cap), (label, cap)
    ex = L.explorer
    full = getattr(ex, "update", None)
    if full is not None and hasattr(ex, "_update_live"):
        ex.update(frames[-1])  # suptitle and data title shown (static exports)
        assert text_problems(p.fig) == [], name


def test_cutting_plane_n_control_shows_the_number_of_points():
    X, y = datasets.toy_2d("blobs", n=50, random_state=3, noise=1.1)
    L = vlive.live_cutting_plane(X, y, C=20.0, epsilon=1e-3)
    assert L.controls["n"].value == 50 and "50 points" in L.status.value
    L.add_point(0.0, 0.0, 1)
    assert L.controls["n"].value == 51
    L.controls["dataset"].value = "blobs"   # the slider draws new points again
    L.controls["n"].value = 30
    assert len(L.points[0]) == 30 and L.controls["n"].value == 30


def test_ordinal_C_changes_the_picture():
    """The live ordinal explorer sweeps the trained w by default, which
    depends on C: a change of C changes the sweep it shows (at iteration 2,
    the w after one plane, C above d / |g|^2 changes nothing, and the status
    line says which w is swept)."""
    L = vlive.live_ordinal(C=10.0, n_ranks=3, n=12)
    before = (L.player.image.value, L.explorer.trace.value.copy())
    assert "sweeping the w of iteration" in L.status.value and "(the trained w)" in L.status.value
    L.controls["C"].value = 0.2
    after = (L.player.image.value, L.explorer.trace.value.copy())
    assert not np.allclose(before[1], after[1]) and before[0] != after[0]
    # iteration 2 for two large C: the same w (Exercise 1 of notebook 03)
    L.controls["C"].value = 10.0
    L.controls["iteration"].value = 2
    w_a = L.explorer.cp_record.w.copy()
    L.controls["C"].value = 100.0
    np.testing.assert_allclose(L.explorer.cp_record.w, w_a, rtol=1e-12)
    assert "sweeping the w of iteration 2 of" in L.status.value


@pytest.mark.parametrize("name, values", [
    ("03 live_cutting_plane", [0.2, 2.0, 200.0, 5000.0]),
    ("05 live_irwls", [0.02, 0.3, 30.0, 500.0]),
    ("04 live_ordinal", [0.2, 500.0]),
])
def test_labels_stay_clear_after_refits(name, values):
    """The axis labels' positions are fixed from the tick labels of each
    trace (viz.freeze_label_positions): refits with very different C (other
    tick labels, other ranges) still leave no overlap and nothing outside."""
    L = LIVE[name]()
    for v in values:
        L.controls["C"].value = v
        for k in sorted({0, L.n_frames - 1}):
            L.player.goto(k)
            assert text_problems(L.player.fig) == [], (name, v, k)
