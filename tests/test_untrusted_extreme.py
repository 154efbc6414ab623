"""Extreme data (issue 24, item 4): refused before any work, in every
estimator; and the end-of-fit guard: no fit reports ``converged_`` with
non-finite multipliers, intercepts or decision values.

Unfixed, ``rng.randn(40, 3) * 1e300`` (or ``1e154``) with ``gamma="scale"``
gave ``gamma_ = 0``, ``converged_ = True`` and a NaN ``decision_function``
in the kernel estimators (the cutting plane a zero model), where
scikit-learn's SVC raises.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.svm import SVC

import svmlab._base as base_mod
import svmlab._validation as validation
from svmlab import (ChunkingClassifier, CuttingPlaneClassifier, CuttingPlaneOrdinalRegressor,
                    DecompositionClassifier, IRWLSClassifier, SMOClassifier)
from svmlab._stepping import SolverRun, SteppedFitMixin, non_finite_fit

KERNEL_ESTIMATORS = {
    "smo": lambda **k: SMOClassifier(progress=False, **k),
    "irwls": lambda **k: IRWLSClassifier(progress=False, **k),
    "chunking": lambda **k: ChunkingClassifier(progress=False, **k),
    "decomposition-qp": lambda **k: DecompositionClassifier(progress=False, **k),
    "decomposition-smo": lambda **k: DecompositionClassifier(progress=False, engine="smo",
                                                             working_set_size=4, **k),
}
ALL = {**KERNEL_ESTIMATORS,
       "cutting-plane": lambda **k: CuttingPlaneClassifier(progress=False),
       "ordinal": lambda **k: CuttingPlaneOrdinalRegressor(progress=False)}


def _data(scale, k=2, sparse=False, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(40, 3) * scale
    y = np.arange(40) % k
    return (sp.csr_matrix(X) if sparse else X), y


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("scale", [1e300, 1e154])
@pytest.mark.parametrize("name", sorted(ALL))
def test_overflowing_data_are_refused_before_any_work(name, scale, sparse):
    X, y = _data(scale, sparse=sparse)
    est = ALL[name](gamma="scale") if name in KERNEL_ESTIMATORS else ALL[name]()
    calls = []
    with pytest.raises(ValueError, match="too large for float64.*Scale the features"):
        est.fit(X, y, callback=calls.append)
    assert calls == [] and not hasattr(est, "converged_")
    with pytest.raises(ValueError, match="Scale the features"):
        est.start(X, y)
    # scikit-learn's SVC refuses the same data too (after its fit)
    with pytest.raises(ValueError):
        SVC(gamma="scale").fit(X, y)


@pytest.mark.parametrize("name", sorted(KERNEL_ESTIMATORS))
def test_multiclass_overflowing_data_are_refused(name):
    X, y = _data(1e300, k=3)
    with pytest.raises(ValueError, match="Scale the features"):
        KERNEL_ESTIMATORS[name]().fit(X, y)


@pytest.mark.parametrize("name", sorted(KERNEL_ESTIMATORS))
def test_gamma_scale_overflow_on_tiny_data_is_refused(name):
    # var ~ 1e-320 (subnormal): 1 / (n_features var) is infinity
    X, y = _data(1e-160)
    assert not np.isfinite(1.0 / (X.shape[1] * X.var()))
    with pytest.raises(ValueError, match="gamma_ = inf.*Scale the features"):
        KERNEL_ESTIMATORS[name](gamma="scale").fit(X, y)


def test_polynomial_kernel_overflow_is_refused_and_large_data_still_fit():
    X, y = _data(10.0)
    with pytest.raises(ValueError, match=r"poly kernel values overflow.*degree=400"):
        SMOClassifier(kernel="poly", degree=400, gamma=1.0, progress=False).fit(X, y)
    # large but representable data are not refused: 1e150 (squares ~1e300)
    X, y = _data(1e150)
    est = SMOClassifier(gamma="scale", progress=False).fit(X, y)
    ref = SVC(gamma="scale").fit(X, y)
    assert est.converged_ and np.isfinite(est.decision_function(X)).all()
    np.testing.assert_array_equal(est.predict(X), ref.predict(X))
    cp = CuttingPlaneClassifier(progress=False).fit(X, y)
    assert np.isfinite(cp.decision_function(X)).all()


def test_check_scale_bound_is_the_documented_one():
    edge = np.sqrt(validation.MAX_SUM_OF_SQUARES / 2)
    validation.check_scale(np.array([[edge, edge]]) * (1 - 1e-15))
    with pytest.raises(ValueError, match="Scale the features"):
        validation.check_scale(np.array([[edge, edge]]) * 1.000001)


# ------------------------------------------------------- the end-of-fit guard

@pytest.mark.parametrize("name", sorted(KERNEL_ESTIMATORS))
def test_a_non_finite_fit_never_reports_convergence(name, monkeypatch):
    # switch the up-front refusal off: the guard at the end of the fit
    # (SolverRun.finish) must then catch the NaN model
    monkeypatch.setattr(validation, "check_scale", lambda X: None)
    monkeypatch.setattr(base_mod, "check_kernel_scale", lambda *a: None)
    X, y = _data(1e300)
    est = KERNEL_ESTIMATORS[name](gamma="scale", max_iter=50)
    with pytest.raises(ValueError, match="non-finite numbers.*scale the features"):
        est.fit(X, y)
    assert est.converged_ is False and est.stop_reason_ == "non_finite"
    finite = all(np.isfinite(np.asarray(getattr(est, a))).all()
                 for a in ("alpha_", "dual_coef_", "intercept_"))
    assert not finite or not np.isfinite(est.decision_function(X[:5])).all()


class _Stub(SteppedFitMixin):
    """A one-step solver whose result is given: the shared machinery alone."""

    def __init__(self, coef, intercept):
        self.coef, self.intercept = coef, intercept

    def start(self, X, y):
        est = self

        class Run(SolverRun):
            def _step(self):
                self.converged = True
                return None

            def result(self):
                return {}

        return Run(est, max_iter=5)

    def _store_run(self, run):
        self.coef_ = np.asarray(self.coef, dtype=float)
        self.intercept_ = np.asarray(self.intercept, dtype=float)
        self.converged_ = bool(run.converged)
        self.stop_reason_ = run.stop_reason


@pytest.mark.parametrize("coef,intercept,bad", [
    ([[1.0, np.nan]], [0.0], "coef_"),
    ([[1.0, 2.0]], [np.inf], "intercept_"),
    ([[1e200, 1e200]], [0.0], "coef_ \\(its squared norm"),
])
def test_guard_of_the_shared_machinery(coef, intercept, bad):
    est = _Stub(coef, intercept)
    with pytest.raises(ValueError, match=f"non-finite numbers \\({bad}"):
        est.fit(np.zeros((2, 2)), np.array([0, 1]))
    assert est.converged_ is False and est.stop_reason_ == "non_finite"
    good = _Stub([[1.0, 2.0]], [0.5]).fit(np.zeros((2, 2)), np.array([0, 1]))
    assert good.converged_ and good.stop_reason_ == "converged" and non_finite_fit(good) is None


def test_guard_after_iter_fit_too(monkeypatch):
    monkeypatch.setattr(validation, "check_scale", lambda X: None)
    monkeypatch.setattr(base_mod, "check_kernel_scale", lambda *a: None)
    X, y = _data(1e300)
    est = SMOClassifier(gamma="scale", max_iter=20, progress=False)
    with pytest.raises(ValueError, match="non-finite"):
        for _ in est.iter_fit(X, y):
            pass
    assert est.converged_ is False


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("name", ["SVC", "NuSVC", "SVR", "NuSVR", "OneClassSVM"])
def test_svm_family_refuses_overflowing_data_before_any_work(name, sparse):
    """The drop-in classes refuse the same data before their first step (SVC
    itself only notices after its fit, from non-finite dual coefficients)."""
    import svmlab

    X, y = _data(1e300, sparse=sparse)
    est = getattr(svmlab, name)()
    calls = []
    with pytest.raises(ValueError, match="too large for float64.*Scale the features"):
        if name == "OneClassSVM":
            est.fit(X, callback=calls.append)
        else:
            est.fit(X, y.astype(float) if "SVR" in name else y, callback=calls.append)
    assert calls == [] and not hasattr(est, "support_")


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("name", ["SVC", "NuSVC", "SVR", "NuSVR", "OneClassSVM"])
@pytest.mark.parametrize("kernel,params,words", [
    ("poly", {"degree": 400, "gamma": 1.0}, r"poly kernel values overflow.*degree=400"),
    ("sigmoid", {"gamma": 1e306}, r"sigmoid kernel values overflow"),
])
def test_svm_family_refuses_an_overflowing_kernel_before_any_work(name, sparse, kernel, params,
                                                                  words):
    """Finite data whose kernel values overflow float64 (a poly kernel of
    degree 400, a sigmoid of gamma 1e306): every formulation refuses them
    before its first step, as SVC did (SVR, NuSVR and OneClassSVM ran such a
    fit); a representable kernel on the same data is not refused."""
    import svmlab

    X, y = _data(10.0, sparse=sparse)
    dense = X.toarray() if sparse else X
    sq = float(np.max(np.einsum("ij,ij->i", dense, dense)))
    with np.errstate(over="ignore"):  # the premise: the bound itself is not finite
        if kernel == "poly":
            assert not np.isfinite(np.float64(params["gamma"] * sq) ** 400)
        else:
            assert not np.isfinite(np.float64(params["gamma"]) * sq)
    target = y.astype(float) if "SVR" in name else y

    def fit(est, callback=None):
        if name == "OneClassSVM":
            return est.fit(X, callback=callback)
        return est.fit(X, target, callback=callback)

    est = getattr(svmlab, name)(kernel=kernel, **params)
    calls = []
    with pytest.raises(ValueError, match=words):
        fit(est, calls.append)
    assert calls == [] and not hasattr(est, "support_")
    # the same data with a kernel that stays finite are fitted
    ok = fit(getattr(svmlab, name)(kernel=kernel, degree=2, gamma=0.01))
    coef = ok.dual_coef_.toarray() if sp.issparse(ok.dual_coef_) else ok.dual_coef_
    assert np.isfinite(ok.predict(X)).all() and np.isfinite(coef).all()
