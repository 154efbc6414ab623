"""Notebook 09's pieces: the dual coordinate descent trace and explorer
(svmlab.viz.linear) and the clipped-step exercise (svmlab.exercises.linear),
checked against the compiled solver, scikit-learn's LIBLINEAR and the dual
objective computed here."""

import sys
from pathlib import Path

import numpy as np
import pytest

from svmlab import LinearSVC
from svmlab.exercises import EXERCISES, check_dcd_update
from svmlab.viz import linear as vlin
from svmlab.viz.live import toy_points

SOLUTIONS = Path(__file__).resolve().parents[1] / "instructor" / "solutions"


def _dual(X, y, alpha):
    """``1/2 a'Qa - e'a`` with ``Q_ij = y_i y_j (x_i.x_j + 1)``, computed naively."""
    Z = np.hstack([X, np.ones((len(X), 1))]) * y[:, None]
    Q = Z @ Z.T
    return 0.5 * alpha @ Q @ alpha - alpha.sum()


@pytest.fixture(scope="module")
def trace():
    X, y = toy_points("blobs", 20, 0)
    return vlin.dcd_trace(X, y, C=1.0, tol=1e-3, random_state=0)


def test_trace_is_the_compiled_run_and_a_coordinate_descent(trace):
    X, y = trace.X, trace.y
    est = LinearSVC(C=1.0, loss="hinge", solver="dcd", tol=1e-3, random_state=0).fit(X, y)
    last = trace.records[-1]
    assert np.allclose(est.coef_[0], last.coef, rtol=0, atol=1e-12)
    assert abs(est.intercept_[0] - last.intercept) <= 1e-12
    Z = np.hstack([X, np.ones((len(X), 1))])
    duals = [_dual(X, y, a) for a in trace.alpha]
    for k, rec in enumerate(trace.records):
        a = trace.alpha[k + 1]
        assert np.all(a >= 0) and np.all(a <= trace.C)        # in the box
        wb = (a * y) @ Z                                        # w = sum a_i y_i (x_i, 1)
        assert np.allclose(wb[:-1], rec.coef, atol=1e-12) and abs(wb[-1] - rec.intercept) <= 1e-12
        changed = np.flatnonzero(trace.alpha[k + 1] != trace.alpha[k])
        assert set(changed) <= {rec.i}                          # one coordinate per step
        assert duals[k + 1] <= duals[k] + 1e-12                 # exact line minimisation
    # the optimum is LIBLINEAR's
    from sklearn.svm import LinearSVC as LL

    ll = LL(C=1.0, loss="hinge", tol=1e-10, max_iter=10**6).fit(X, y)
    assert trace.optimum == pytest.approx(vlin.primal(X, y, ll.coef_[0], ll.intercept_[0], 1.0),
                                          rel=1e-7)
    # the cutting plane solved the same problem: its last model is optimal
    assert trace.cp_primal[-1] == pytest.approx(trace.optimum, rel=1e-4)


def test_clipped_steps_end_on_a_bound(trace):
    steps = vlin.clipped_steps(trace)
    assert steps
    for s in steps:
        rec = trace.records[s - 1]
        assert rec.alpha_new in (0.0, trace.C)
        raw = rec.alpha_old - rec.G / trace.Qii[rec.i]
        assert raw < 0 or raw > trace.C


def test_explorer_frames_and_live_controls(trace):
    ex = vlin.DCDExplorer(trace)
    k = vlin.clipped_steps(trace)[0] - 1
    cap = ex.update(k)
    assert f"step {k + 1} " in cap and "clipped to" in cap
    x, yv = ex.l_w.get_data()
    w, b = trace.records[k].coef, trace.records[k].intercept
    assert np.allclose(w[0] * np.asarray(x) + w[1] * np.asarray(yv) + b, 0.0, atol=1e-9)
    assert ex.bars[trace.records[k].i].get_height() == trace.records[k].alpha_new
    live = vlin.live_dcd(trace.X, trace.y, C=1.0)
    assert live.n_frames == len(trace.records)
    live.jump("next clipped step")
    assert "clipped to" in live.player.caption.value
    live.controls["C"].value = 0.1
    assert live.explorer.trace.C == 0.1
    assert np.all(live.explorer.trace.alpha <= 0.1)
    with pytest.raises(ValueError):
        vlin.dcd_trace(trace.X, np.ones(len(trace.y)), C=1.0)


def test_exercise_checker_passes_the_solution_and_fails_slips():
    sys.path.insert(0, str(SOLUTIONS))
    try:
        from solutions_09_linear import dcd_update
    finally:
        sys.path.remove(str(SOLUTIONS))
    r = check_dcd_update(dcd_update)
    assert r.passed and r.n_passed == r.n_total > 100
    unclipped = check_dcd_update(lambda a, G, Q, U: a - G / Q)
    assert not unclipped.passed and "clip" in unclipped.message
    wrong_way = check_dcd_update(lambda a, G, Q, U: min(max(a + G / Q, 0.0), U))
    assert not wrong_way.passed and "wrong way" in wrong_way.message

    def todo(alpha_i, G, Q_ii, U):
        raise NotImplementedError

    assert check_dcd_update(todo).status == "not implemented"
    assert EXERCISES["09.dcd_update"].notebook == "09_linear_svm"
