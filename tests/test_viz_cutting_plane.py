"""svmlab.viz.cutting_plane: what is drawn equals quantities computed here."""

import numpy as np
import pytest

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
    *_, ex = explorer
    p = ex.player()
    assert p.drive() == ex.n_frames
    assert ex.k == ex.n_frames - 1


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
