"""The "Try it yourself" sections of notebooks 04, 05 and 06, run as a reader runs them.

Each section is a markdown cell (what to try, what to see) and one code cell
that builds a live explorer (:mod:`svmlab.viz.live`).  The tests here

* execute *exactly* the code cell stored in the notebook (found by its cell
  id), so a change to the notebook is what gets tested;
* drive the explorer through every frame, as a reader drags the slider, and
  check that each frame's source panel shows the reference module the
  markdown names, with lines marked;
* check the claims the markdown makes against references computed here:
  LIBSVM (scikit-learn's ``SVC``) for the final multipliers and dual
  objective, pair-by-pair enumeration for the ordinal counts.

Executing the cells instead of the whole notebooks keeps this cheap (the
rest of each notebook is checked by nbval); the cells build everything they
need from their own imports, which the first test also checks.
"""

import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.svm import SVC

pytest.importorskip("ipywidgets")

NB_DIR = Path(__file__).resolve().parents[1] / "notebooks"

#: notebook -> (markdown cell id, code cell id, reference module the panel shows)
SECTIONS = {
    "04_ordinal_regression": ("nb04-try-text", "nb04-try-live", "ordinal"),
    "05_irwls": ("nb05-try-text", "nb05-try-live", "irwls"),
    "06_decomposition": ("nb06-try-text", "nb06-try-live", "decomposition"),
}

#: how a marked (highlighted) line looks in svmlab.reference._source.source_html
MARKED = "background:#ffe58a"


def _find(name, cell_id):
    nb = json.loads((NB_DIR / f"{name}.ipynb").read_text(encoding="utf-8"))
    cells = [c for c in nb["cells"] if c.get("id") == cell_id]
    assert len(cells) == 1, f"{name}: expected one cell with id {cell_id!r}, found {len(cells)}"
    return cells[0]


def _cell(name, cell_id):
    src = _find(name, cell_id)["source"]
    return "".join(src) if isinstance(src, list) else src


def _tags(name, cell_id):
    return _find(name, cell_id).get("metadata", {}).get("tags", [])


def _run_cell(name):
    """Execute the notebook's live cell in a fresh namespace; return its ``live``."""
    _, code_id, _ = SECTIONS[name]
    src = _cell(name, code_id)
    ns = {}
    exec(compile(src, f"{name}.ipynb:{code_id}", "exec"), ns)  # noqa: S102 - our own notebook
    return ns["live"]


@pytest.fixture(scope="module")
def lives():
    """One explorer per notebook, built once for the module (the tests below
    change controls; each test sets the controls it relies on)."""
    return {}


def _live(lives, name):
    if name not in lives:
        lives[name] = _run_cell(name)
    return lives[name]


def _lib_alpha(X, y, C, gamma):
    """LIBSVM's multipliers alpha (n,) and its dual objective W(alpha), computed here."""
    svc = SVC(C=C, kernel="rbf", gamma=gamma, tol=1e-10).fit(X, y)
    alpha = np.zeros(len(y))
    alpha[svc.support_] = np.abs(svc.dual_coef_[0])
    ay = alpha * y
    return alpha, alpha.sum() - 0.5 * ay @ rbf_kernel(X, gamma=gamma) @ ay


def _dual(alpha, X, y, gamma):
    ay = alpha * y
    return alpha.sum() - 0.5 * ay @ rbf_kernel(X, gamma=gamma) @ ay


# --------------------------------------------------------------------------
# every notebook: the cell runs, every frame redraws, the panel shows the named reference
# --------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(SECTIONS))
def test_every_frame_redraws_with_the_named_reference_lines(name, lives):
    text_id, code_id, module = SECTIONS[name]
    text, src = _cell(name, text_id), _cell(name, code_id)
    # the markdown tells the student which file to open, and the cell is a widget cell
    assert f"`svmlab/reference/{module}.py`" in text
    # test scaffolding in a cell tag, which students do not see
    assert "nbval-ignore-output" in _tags(name, code_id) and "NBVAL" not in src
    assert "print(" not in src
    live = _live(lives, name)
    assert live.source is not None, "the source panel is off"
    images, marked_frames = set(), 0
    for k in range(live.n_frames):          # what FramePlayer.drive does, frame by frame
        live.player.goto(k)
        html = live.source.value
        assert "no reference lines" not in html, f"frame {k}: {html[:200]}"
        # titles name the defining module: IRWLS and decomposition steps may
        # run only the shared line-search iteration of reference/subproblem.py
        shown = f"{module}." in html or (module != "ordinal" and "subproblem." in html)
        assert shown, f"frame {k}: the panel does not show {module} (or subproblem)"
        marked_frames += MARKED in html
        images.add(live.player.image.value)
    assert marked_frames == live.n_frames, "some frames mark no line of the reference"
    assert live.n_frames > 1 and len(images) > 1, "the picture does not change with the slider"


# --------------------------------------------------------------------------
# 04: iteration 1 violates every pair; later iterations fewer; two ranks = ROC pairs
# --------------------------------------------------------------------------
def _brute_counts(scores, y):
    """c+_i, c-_i by enumerating every pair (y_i > y_j, violated iff s_i - s_j < 1)."""
    n = len(y)
    cp, cm = np.zeros(n, int), np.zeros(n, int)
    for i in range(n):
        for j in range(n):
            if y[i] > y[j] and scores[i] - scores[j] < 1.0:
                cp[i] += 1
                cm[j] += 1
    return cp, cm


def test_ordinal_claims(lives):
    from svmlab.reference.ordinal import sweep_counts

    live = _live(lives, "04_ordinal_regression")
    c = live.controls
    c["n_ranks"].value, c["iteration"].value = 3, 2
    X, y = live.points
    m = sum(int(np.sum(y > v)) for v in y)        # pairs with y_i > y_j, enumerated
    violated = {}
    for it in range(1, 6):
        c["iteration"].value = it
        tr = live.explorer.trace
        scores = X @ np.asarray(live.explorer.cp_record.w, float).ravel()
        cp, cm = _brute_counts(scores, y)
        # the end of the sweep shows the exact pair counts, and so does the reference
        np.testing.assert_array_equal(tr.c_plus[-1], cp)
        np.testing.assert_array_equal(tr.c_minus[-1], cm)
        rp, rm = sweep_counts(scores, y)
        np.testing.assert_array_equal(rp, cp)
        np.testing.assert_array_equal(rm, cm)
        violated[it] = int(cp.sum())
        if it == 1:   # "w = 0, every pair violated: c+_i = number of lower-ranked examples"
            np.testing.assert_array_equal(scores, 0.0)
            np.testing.assert_array_equal(cp, [int(np.sum(y < v)) for v in y])
            assert violated[1] == m
    assert min(violated[it] for it in range(2, 6)) < m / 2, violated
    # two ranks: the pairs are (positive, negative)
    c["n_ranks"].value = 2
    X2, y2 = live.points
    assert len(np.unique(y2)) == 2
    n_hi = int(np.sum(y2 == y2.max()))
    c["iteration"].value = 1
    assert int(live.explorer.trace.c_plus[-1].sum()) == n_hi * (len(y2) - n_hi)
    # the navigation buttons land on the kind of event they name
    kinds = live.explorer.trace.kind
    for kind in ("u", "d"):
        live.player.goto(0)
        k = live.jump(f"next {kind}")
        first = next(j for j in range(1, live.n_frames) if kinds[j] == kind)
        assert k == first
    # the panel's marks depend on the iteration, not on the event (same for every frame)
    c["iteration"].value = 2
    panels = set()
    for k in range(live.n_frames):
        live.player.goto(k)
        panels.add(live.source.value)
    assert len(panels) == 1
    c["iteration"].value = 1
    live.player.goto(0)
    assert live.source.value not in panels   # iteration 1 also runs the initialisation


# --------------------------------------------------------------------------
# 05: C moves points out of S3; the three selections end at the same sets; a click
# --------------------------------------------------------------------------
def _sets_from_alpha(alpha, C, tol):
    """1 = S1 (0 < alpha < C), 2 = S2 (alpha = 0), 3 = S3 (alpha = C)."""
    return np.where(alpha <= tol, 2, np.where(alpha >= C - tol, 3, 1))


def _irwls_sets(live):
    return np.asarray(live.explorer.trace.sets[-1])


def test_irwls_claims(lives):
    live = _live(lives, "05_irwls")
    c = live.controls
    gamma = c["gamma"].value
    c["selection"].value = "random"
    X, y = live.points
    n = len(y)
    s3 = {}
    for C in (0.1, 1.0, 100.0):
        c["C"].value = C
        sets = _irwls_sets(live)
        a_lib, _ = _lib_alpha(X, y, C, gamma)
        ref = _sets_from_alpha(a_lib, C, 1e-6 * C)
        # the colours drawn are LIBSVM's sets (a point within rounding of a bound may differ)
        assert np.mean(sets == ref) >= 0.95, (C, sets, ref)
        s3[C] = int(np.sum(sets == 3))
    assert s3[0.1] == n                       # "at C = 0.1 every point ends in S3"
    assert s3[0.1] > s3[1.0] > s3[100.0]      # "as C grows, red points turn green or grey"
    assert 0.2 * n <= s3[100.0] <= 0.45 * n   # "at C = 100 only about a third are still red"

    # the three selections end with the same sets and the same boundary
    c["C"].value = 1.0
    ends = {}
    for sel in ("random", "largest", "smallest"):
        c["selection"].value = sel
        tr = live.explorer.trace
        ends[sel] = (_irwls_sets(live), tr.y * tr.beta[-1])
    a_lib, w_lib = _lib_alpha(X, y, 1.0, gamma)
    for sel, (sets, alpha) in ends.items():
        np.testing.assert_array_equal(sets, ends["random"][0], err_msg=sel)
        assert abs(_dual(alpha, X, y, gamma) - w_lib) <= 1e-3 * abs(w_lib), sel

    # navigation: "next chunk solved" lands on an iteration that finished a working set
    live.player.goto(0)
    k = live.jump("next chunk solved")
    assert k is not None and live.record(k).chunk_done

    # a +1 point deep among the -1 points ends in S3 (and LIBSVM agrees)
    c["selection"].value = "random"
    centre = X[y < 0].mean(axis=0)
    live.add_point(centre[0], centre[1], 1)
    X2, y2 = live.points
    assert _irwls_sets(live)[-1] == 3
    a_lib, _ = _lib_alpha(X2, y2, 1.0, gamma)
    assert a_lib[-1] >= 1.0 - 1e-6


# --------------------------------------------------------------------------
# 06: |B| moves between the family members; engines agree; a click in the margin
# --------------------------------------------------------------------------
def _final_alphas(live):
    ex = live.explorer
    return {k: ex.states[k][0][-1] for k in ex.names}


def test_family_claims(lives):
    live = _live(lives, "06_decomposition")
    c = live.controls
    gamma, C = c["gamma"].value, c["C"].value
    X, y = live.points
    # the section starts on section 1's points: toy_2d("moons", n=60, random_state=1)
    from svmlab import datasets

    X1, y1 = datasets.toy_2d("moons", n=60, random_state=1)
    np.testing.assert_array_equal(X, X1)
    np.testing.assert_array_equal(y, np.where(y1 == np.max(y1), 1.0, -1.0))
    _, w_lib = _lib_alpha(X, y, C, gamma)

    steps = {}
    for q in (2, 10, 40):
        c["working_set_size"].value = q
        steps[q] = {k: len(v) for k, v in live.explorer.records.items()}
        assert max(len(w) for w in live.explorer.ws["decomposition"]) <= q
        for k, a in _final_alphas(live).items():   # every member reaches LIBSVM's optimum
            assert abs(_dual(a, X, y, gamma) - w_lib) <= 1e-3 * abs(w_lib), (q, k)
    # |B| = 2: about a hundred steps, the order of SMO's; |B| = 40: a couple of QPs
    assert 50 <= steps[2]["decomposition"] <= 300
    assert steps[2]["SMO"] / 3 <= steps[2]["decomposition"] <= 3 * steps[2]["SMO"]
    assert steps[2]["decomposition"] > 5 * steps[10]["decomposition"]
    assert steps[40]["decomposition"] <= 3 and steps[40]["chunking"] <= 3

    # the engines: same first working sets, step counts within a few, same optimum
    c["working_set_size"].value = 10
    runs = {}
    for engine in ("qp", "irwls", "smo"):
        c["engine"].value = engine
        runs[engine] = ([tuple(w) for w in live.explorer.ws["decomposition"]],
                        _final_alphas(live)["decomposition"])
    for engine, (ws, alpha) in runs.items():
        assert ws[:2] == runs["qp"][0][:2], engine
        assert abs(len(ws) - len(runs["qp"][0])) <= 3, engine
        assert abs(_dual(alpha, X, y, gamma) - w_lib) <= 1e-3 * abs(w_lib), engine
    c["engine"].value = "qp"

    # a point clicked between the dashed lines becomes a support vector in all three panels
    svc = SVC(C=C, kernel="rbf", gamma=gamma, tol=1e-10).fit(X, y)
    g = np.linspace(X.min(0), X.max(0), 40)
    grid = np.array([[a, b] for a in g[:, 0] for b in g[:, 1]])
    f = svc.decision_function(grid)
    p = grid[np.argmin(np.abs(f))]            # on the boundary: inside the margin
    live.add_point(p[0], p[1], 1)
    X2, y2 = live.points
    for k, a in _final_alphas(live).items():
        assert a[-1] > 1e-8, f"{k}: the new point is not a support vector"
    a_lib, _ = _lib_alpha(X2, y2, C, gamma)
    assert a_lib[-1] > 1e-8



# --------------------------------------------------------------------------
# the exercises end notebooks 04 and 05, with exactly the text the tests execute
# --------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["04_ordinal_regression", "05_irwls"])
def test_exercises_end_the_notebook_after_the_live_section(name):
    from svmlab.exercises.starters import CELLS

    nb = json.loads((NB_DIR / f"{name}.ipynb").read_text(encoding="utf-8"))
    cells = [(c["cell_type"], "".join(c["source"])) for c in nb["cells"]]
    tail = cells[-len(CELLS[name]):]
    for k, ((kind, src), (want_kind, want)) in enumerate(zip(tail, CELLS[name])):
        assert kind == want_kind, (name, k)
        if kind == "code":
            assert src == want, f"{name}: exercise code cell {k} differs from CELLS"
        else:   # only the section number of the first heading may be renumbered
            assert src.split("\n", 1)[-1] == want.split("\n", 1)[-1], (name, k)
    # the "Try it yourself" section comes right before, and its number precedes the exercises'
    ids = [c.get("id") for c in nb["cells"]]
    _, code_id, _ = SECTIONS[name]
    assert ids.index(code_id) == len(ids) - len(CELLS[name]) - 1
    heading = tail[0][1].split("\n", 1)[0]
    try_heading = cells[ids.index(SECTIONS[name][0])][1].split("\n", 1)[0]
    number = int(heading.split("·")[0].strip("# "))
    assert int(try_heading.split("·")[0].strip("# ")) == number - 1, (try_heading, heading)
    # executed unsolved, each check cell says "not implemented yet" and stores no error
    for c in nb["cells"][-len(CELLS[name]):]:
        if c["cell_type"] == "code":
            text = "".join("".join(o.get("data", {}).get("text/plain", "")) for o in c["outputs"])
            assert "not implemented yet" in text
            assert all(o["output_type"] != "error" for o in c["outputs"])
