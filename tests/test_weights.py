"""Sample and class weights for the kernel solvers (issue 17, "Weights").

LIBSVM's weighted C-SVC: example i gets its own upper bound
``C_i = C * class_weight[y_i] * sample_weight_i``, so the dual is::

    max_alpha  sum_i alpha_i - 1/2 sum_ij y_i y_j K_ij alpha_i alpha_j
    s.t.       0 <= alpha_i <= C_i,   sum_i y_i alpha_i = 0.

Every solver (SMO with both selections, shrinking on and off, parked phases;
IRWLS; chunking; decomposition with every engine) is checked against
scikit-learn's SVC (LIBSVM) fitted with the same ``class_weight`` and
``sample_weight``.  The dual objective, the feasibility and the KKT
conditions are computed here, from ``alpha_`` and the per-example bounds
built here, with scikit-learn's kernels (``tests/reference.py``); nothing a
solver reports about itself is trusted.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification, make_moons
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC
from sklearn.utils.class_weight import compute_class_weight

import reference as R
from svmlab import (ChunkingClassifier, DecompositionClassifier, IRWLSClassifier,
                    SMOClassifier)
from svmlab.reference import smo as ref_smo
from svmlab.reference import wss2 as ref_wss2

# (name, factory): every kernel solver and engine, both SMO selections with
# shrinking on and off; "platt-parked" has a cache far smaller than the rows,
# so Platt's loop runs parked phases (see svmlab.smo._core)
SOLVERS = [
    ("platt", lambda: SMOClassifier(selection="platt", eps=1e-6, random_state=0)),
    ("platt-noshrink", lambda: SMOClassifier(selection="platt", shrinking=False, eps=1e-6,
                                                  random_state=0)),
    ("platt-parked", lambda: SMOClassifier(selection="platt", cache_size=0.02, eps=1e-6,
                                                random_state=0)),
    ("wss2", lambda: SMOClassifier(selection="wss2")),
    ("wss2-noshrink", lambda: SMOClassifier(selection="wss2", shrinking=False)),
    ("irwls", lambda: IRWLSClassifier(working_set_size=40, random_state=0)),
    ("chunking", lambda: ChunkingClassifier(working_set_size=20)),
    ("decomposition-qp", lambda: DecompositionClassifier(engine="qp", working_set_size=10)),
    ("decomposition-irwls", lambda: DecompositionClassifier(engine="irwls",
                                                            working_set_size=10)),
    ("decomposition-smo", lambda: DecompositionClassifier(engine="smo", working_set_size=10)),
]
SOLVER_IDS = [s[0] for s in SOLVERS]


def _data(name):
    """(X, y, kernel parameters, C, class_weight, sample_weight)."""
    rng = np.random.RandomState(5)
    if name == "classif-rbf":  # dense, rbf, both weights, some zero weights
        X, y = make_classification(160, 5, n_informative=3, flip_y=0.1, random_state=0)
        sw = rng.uniform(0.2, 3.0, len(y))
        sw[rng.choice(len(y), 12, replace=False)] = 0.0
        return X, y, dict(kernel="rbf", gamma=0.2), 2.0, {0: 0.5, 1: 3.0}, sw
    if name == "moons-poly":  # poly kernel, "balanced" on unbalanced classes
        X, y = make_moons(150, noise=0.3, random_state=2)
        keep = np.flatnonzero((y == 1) | (rng.uniform(size=len(y)) < 0.5))
        X, y = X[keep], y[keep]
        sw = rng.choice([0.5, 1.0, 4.0], len(y))
        return X, y, dict(kernel="poly", gamma=1.0, coef0=1.0, degree=3), 1.0, "balanced", sw
    if name == "sparse-linear":  # CSR 0/1 features (bit-packed), linear kernel
        Xd = (rng.uniform(size=(140, 80)) < 0.2).astype(float)
        y = np.where(Xd[:, :8].sum(1) + rng.normal(0, 0.7, 140) > 1.6, 1, -1)
        sw = rng.uniform(0.0, 2.0, len(y))
        return sp.csr_matrix(Xd), y, dict(kernel="linear"), 0.5, {-1: 2.0, 1: 1.0}, sw
    raise KeyError(name)


DATA = ["classif-rbf", "moons-poly", "sparse-linear"]


def _bounds(y, classes, C, class_weight, sw):
    """C_i = C * class_weight[y_i] * sample_weight_i, computed here."""
    cw = compute_class_weight(class_weight, classes=classes, y=y)
    w = np.where(y == classes[1], cw[1], cw[0])
    return C * w * (np.ones(len(y)) if sw is None else np.asarray(sw, float))


def _gram(X, kw):
    Xd = X.toarray() if sp.issparse(X) else X
    return R.gram(Xd, kw["kernel"], kw.get("gamma", 1.0), kw.get("degree", 3),
                  kw.get("coef0", 0.0))


def _svc_alpha(X, y, kw, C, class_weight, sw, tol=1e-8):
    """LIBSVM's multipliers for every row of X (0 for the zero-weight rows,
    which LIBSVM drops: its support_ indexes the remaining rows)."""
    Xd = X.toarray() if sp.issparse(X) else X
    svc = SVC(C=C, tol=tol, class_weight=class_weight, **kw).fit(Xd, y, sample_weight=sw)
    kept = np.flatnonzero(np.asarray(sw) > 0) if sw is not None else np.arange(len(y))
    alpha = np.zeros(len(y))
    alpha[kept[svc.support_]] = np.abs(svc.dual_coef_[0])
    return alpha, svc


def _kkt_violation(K, yp, alpha, b, Cv):
    """Largest violation of the KKT conditions with per-example bounds:
    alpha_i = 0 needs y_i f_i >= 1, alpha_i = C_i needs y_i f_i <= 1, and a
    free alpha_i needs y_i f_i = 1 (f from alpha and b, computed here)."""
    r = yp * (K @ (alpha * yp) + b) - 1.0
    at0 = alpha <= 0.0
    atC = alpha >= Cv
    free = ~at0 & ~atC
    v = np.zeros(len(r))
    v[at0] = np.maximum(-r[at0], 0.0)
    v[atC] = np.maximum(r[atC], 0.0)
    v[free] = np.abs(r[free])
    return float(v.max())


def _fit(est, X, y, kw, C, class_weight, sw, **fit_kw):
    est.set_params(C=C, class_weight=class_weight, progress=False, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # each run must converge
        return est.fit(X, y, sample_weight=sw, **fit_kw)


# ------------------------------------------------------- LIBSVM's optimum
@pytest.mark.parametrize("data", DATA)
@pytest.mark.parametrize("solver", SOLVERS, ids=SOLVER_IDS)
def test_weighted_fit_reaches_libsvm_optimum(solver, data):
    X, y, kw, C, cw, sw = _data(data)
    classes = np.unique(y)
    yp = np.where(y == classes[1], 1.0, -1.0)
    Cv = _bounds(y, classes, C, cw, sw)
    K = _gram(X, kw)
    a_ref, svc = _svc_alpha(X, y, kw, C, cw, sw)
    W_ref = R.dual_objective(K, yp, a_ref)
    # LIBSVM's own solution is feasible for these bounds (the test's C_i are right)
    assert np.all(a_ref <= Cv * (1 + 1e-9)) and abs(a_ref @ yp) <= 1e-8 * Cv.max()

    est = _fit(solver[1](), X, y, kw, C, cw, sw)
    a = est.alpha_
    assert est.converged_
    assert a.shape == (len(y),)
    assert np.all(a >= 0.0) and np.all(a <= Cv)  # the per-example box, exactly
    assert abs(a @ yp) <= 1e-9 * max(1.0, Cv.sum())
    assert np.all(a[Cv == 0] == 0.0)  # removed rows
    W = R.dual_objective(K, yp, a)
    assert abs(W - W_ref) <= 1e-3 * max(1.0, abs(W_ref)), (W, W_ref)
    # some bounds differ and are active: the weights really matter here
    assert len(np.unique(Cv[Cv > 0])) > 1 and np.any((a > 0) & (a >= Cv))
    kept = Cv > 0
    viol = _kkt_violation(K[np.ix_(kept, kept)], yp[kept], a[kept], est.intercept_[0], Cv[kept])
    assert viol <= 2.5 * est.tol, viol
    np.testing.assert_array_equal(est.class_weight_, compute_class_weight(cw, classes=classes,
                                                                          y=y))
    # the fitted attributes index the rows of X (support_ too)
    np.testing.assert_array_equal(est.support_, np.flatnonzero(a > 0))
    np.testing.assert_allclose(est.dual_coef_[0], (a * yp)[est.support_])
    Xd = X.toarray() if sp.issparse(X) else X
    np.testing.assert_allclose(est.decision_function(X), svc.decision_function(Xd), atol=0.05)


def test_unweighted_optimum_differs():
    """The weighted optimum above is not the unweighted one (the test can fail)."""
    X, y, kw, C, cw, sw = _data("classif-rbf")
    yp = np.where(y == 1, 1.0, -1.0)
    K = _gram(X, kw)
    a_ref, _ = _svc_alpha(X, y, kw, C, cw, sw)
    plain = _fit(SMOClassifier(), X, y, kw, C, None, None)
    assert abs(R.dual_objective(K, yp, plain.alpha_) - R.dual_objective(K, yp, a_ref)) > 0.1


# ---------------------------------------------- what weights must not change
@pytest.mark.parametrize("solver", SOLVERS, ids=SOLVER_IDS)
def test_weights_of_ones_are_no_weights(solver):
    X, y, kw, C, _, _ = _data("classif-rbf")
    plain = _fit(solver[1](), X, y, kw, C, None, None)
    ones = _fit(solver[1](), X, y, kw, C, None, np.ones(len(y)))
    dict_ones = _fit(solver[1](), X, y, kw, C, {0: 1.0, 1: 1.0}, None)
    for other in (ones, dict_ones):
        np.testing.assert_array_equal(other.alpha_, plain.alpha_)
        assert other.intercept_[0] == plain.intercept_[0]
        assert other.n_iter_ == plain.n_iter_


@pytest.mark.parametrize("solver", [SOLVERS[0], SOLVERS[2], SOLVERS[3], SOLVERS[7]],
                         ids=[SOLVERS[k][0] for k in (0, 2, 3, 7)])
def test_uniform_weight_is_a_larger_C(solver):
    # C * 2 == (2 C) * 1 exactly in floating point: the same iterates
    X, y, kw, C, _, _ = _data("classif-rbf")
    w2 = _fit(solver[1](), X, y, kw, C, None, np.full(len(y), 2.0))
    c2 = _fit(solver[1](), X, y, kw, 2 * C, None, None)
    np.testing.assert_array_equal(w2.alpha_, c2.alpha_)
    assert w2.intercept_[0] == c2.intercept_[0]


@pytest.mark.parametrize("solver", SOLVERS, ids=SOLVER_IDS)
def test_zero_weights_remove_the_rows(solver):
    X, y, kw, C, cw, sw = _data("classif-rbf")
    kept = np.flatnonzero(sw > 0)
    full = _fit(solver[1](), X, y, kw, C, cw, sw)
    sub = _fit(solver[1](), X[kept], y[kept], kw, C, cw, sw[kept])
    # identical solver runs on the remaining rows ("balanced" aside, see below)
    np.testing.assert_array_equal(full.alpha_[kept], sub.alpha_)
    assert np.all(full.alpha_[sw == 0] == 0.0)
    assert full.intercept_[0] == sub.intercept_[0] and full.n_iter_ == sub.n_iter_
    np.testing.assert_array_equal(full.support_, kept[sub.support_])
    np.testing.assert_array_equal(full.decision_function(X), sub.decision_function(X))


def test_zero_weight_rows_are_absent_from_the_records():
    X, y, kw, C, cw, sw = _data("classif-rbf")
    est = SMOClassifier(C=C, class_weight=cw, progress=False, random_state=0, **kw)
    run = est.start(X, y, sample_weight=sw)
    np.testing.assert_array_equal(run.kept, np.flatnonzero(sw > 0))
    assert run.n_samples == int(np.sum(sw > 0))
    records = list(est.iter_fit(X, y, sample_weight=sw))
    assert max(max(r.i1, r.i2) for r in records) < run.n_samples


def test_balanced_equals_compute_class_weight():
    X, y, kw, C, _, sw = _data("moons-poly")
    assert np.sum(y == 0) < np.sum(y == 1) / 1.5  # unbalanced
    expected = compute_class_weight("balanced", classes=np.unique(y), y=y)
    assert not np.allclose(expected, 1.0)
    bal = _fit(SMOClassifier(random_state=0), X, y, kw, C, "balanced", sw)
    np.testing.assert_array_equal(bal.class_weight_, expected)
    explicit = _fit(SMOClassifier(random_state=0), X, y, kw, C,
                    {0: expected[0], 1: expected[1]}, sw)
    np.testing.assert_array_equal(bal.alpha_, explicit.alpha_)
    plain = _fit(SMOClassifier(), X, y, kw, C, None, None)
    np.testing.assert_array_equal(plain.class_weight_, [1.0, 1.0])


# ----------------------------------------------------------- bad weights
@pytest.mark.parametrize("cls", [SMOClassifier, IRWLSClassifier, ChunkingClassifier,
                                 DecompositionClassifier])
def test_bad_weights_are_refused_before_any_work(cls, monkeypatch):
    X, y, kw, C, _, _ = _data("classif-rbf")
    est = cls(C=C, progress=False, **kw)
    monkeypatch.setattr(est, "_make_run", lambda *a: pytest.fail("the solver started"))
    sw = np.ones(len(y))
    sw[7] = -0.5
    with pytest.raises(ValueError, match="non-negative.*sample_weight\\[7\\] = -0.5"):
        est.fit(X, y, sample_weight=sw)
    with pytest.raises(ValueError, match="shape"):
        est.fit(X, y, sample_weight=np.ones(len(y) - 1))
    bad = np.ones(len(y))
    bad[0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        est.fit(X, y, sample_weight=bad)
    with pytest.raises(ValueError, match="zero weight to every example"):
        est.fit(X, y, sample_weight=np.where(y == 1, 1.0, 0.0))
    with pytest.raises(ValueError, match="not in the training classes"):
        est.set_params(class_weight={5: 1.0}).fit(X, y)
    with pytest.raises(ValueError, match="non-negative"):
        est.set_params(class_weight={0: -1.0, 1: 1.0}).fit(X, y)
    assert not hasattr(est, "alpha_")


# ------------------------------------------------ records and the SMO box
@pytest.mark.parametrize("selection", ["platt", "wss2"])
def test_records_show_each_pairs_bounds(selection):
    X, y, kw, C, cw, sw = _data("classif-rbf")
    kept = np.flatnonzero(sw > 0)
    Cv = _bounds(y, np.unique(y), C, cw, sw)[kept]
    est = SMOClassifier(C=C, class_weight=cw, selection=selection, cache_size=0.02,
                        progress=False, random_state=0, **kw)
    records = []
    est.fit(X, y, sample_weight=sw, callback=records.append)
    fast = SMOClassifier(C=C, class_weight=cw, selection=selection, cache_size=0.02,
                         progress=False, random_state=0, **kw).fit(X, y, sample_weight=sw)
    np.testing.assert_array_equal(est.alpha_, fast.alpha_)  # stepped = fast path
    assert len(records) == est.n_iter_ > 20
    for r in records:
        assert (r.C1, r.C2) == (Cv[r.i1], Cv[r.i2])
        assert 0.0 <= r.L <= r.H <= r.C2
        assert 0.0 <= r.a1_new <= r.C1 and 0.0 <= r.a2_new <= r.C2
        # the segment is the box's cut with the constraint line (TR eqs. 13-14)
        s = r.y1 * r.y2
        k = r.a1_old + s * r.a2_old
        for a2 in (r.L, r.H):
            assert -1e-12 <= k - s * a2 <= r.C1 + 1e-12
    assert any(r.C1 != r.C2 for r in records)
    assert any(r.a2_new == r.C2 != C for r in records)  # a clip at a weighted bound


def test_smo_box_draws_each_pairs_bounds():
    pytest.importorskip("matplotlib")
    from svmlab.viz.smo import SMOStepExplorer

    X, y = make_moons(40, noise=0.25, random_state=1)
    sw = np.where(np.arange(40) % 3 == 0, 3.0, 0.5)
    est = SMOClassifier(C=1.0, gamma=1.0, progress=False, random_state=0)
    records = []
    est.fit(X, y, sample_weight=sw, callback=records.append)
    ex = SMOStepExplorer.from_estimator(est, X, y, records, C=1.0 * sw)
    t = next(k for k, r in enumerate(records) if r.C1 != r.C2)
    ex.update(t)
    assert (ex.box_rect.get_width(), ex.box_rect.get_height()) == (records[t].C1,
                                                                    records[t].C2)
    assert ex.view[1] >= 1.3 * 3.0  # the view holds the largest box
    ex.update(0)
    assert (ex.box_rect.get_width(), ex.box_rect.get_height()) == (records[0].C1,
                                                                    records[0].C2)


# --------------------------------------------------- readable references
def test_references_reach_libsvm_optimum_with_weights():
    X, y, kw, C, cw, sw = _data("classif-rbf")
    sw = np.maximum(sw, 0.3)  # the references keep every row: C_i > 0
    yp = np.where(y == 1, 1.0, -1.0)
    Cv = _bounds(y, np.unique(y), C, cw, sw)
    K = _gram(X, kw)
    a_ref, _ = _svc_alpha(X, y, kw, C, cw, sw)
    W_ref = R.dual_objective(K, yp, a_ref)
    for res in (ref_smo.smo(K, yp, Cv, eps=1e-6), ref_wss2.wss2(K, yp, Cv)):
        assert np.all(res.alpha >= 0) and np.all(res.alpha <= Cv)
        assert abs(R.dual_objective(K, yp, res.alpha) - W_ref) <= 1e-3 * abs(W_ref)
        assert _kkt_violation(K, yp, res.alpha, res.b, Cv) <= 2.5e-3
    with pytest.raises(ValueError, match="per-example bounds"):
        ref_smo.smo(K, yp, Cv[:-1])
    with pytest.raises(ValueError, match="C > 0"):
        ref_wss2.wss2(K, yp, np.where(np.arange(len(y)) == 3, 0.0, Cv))
