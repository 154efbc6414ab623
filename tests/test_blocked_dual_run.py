"""The blocked generalised dual behind the stepping protocol
(:class:`svmlab.decomposition._blocked_dual.BlockedDualRun`): a run with no
estimator solves SVR, NuSVR and one-class problems to LIBSVM's dual
objective (computed here from the returned multipliers), reports rho and
nu-SVR's r as LIBSVM's ``calculate_rho`` does, honours ``max_iter`` with a
ConvergenceWarning, and the model it gives matches scikit-learn's."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_regression
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.svm import SVR as SkSVR
from sklearn.svm import NuSVR as SkNuSVR
from sklearn.svm import OneClassSVM as SkOCSVM

from svmlab.decomposition._blocked_dual import BlockedDualRun
from svmlab.kernels import Kernel
from svmlab.reference import dual as ref_dual

GAMMA = 0.1


@pytest.fixture(scope="module")
def data():
    X, z = make_regression(300, 6, noise=5.0, random_state=2)
    X = (X - X.mean(0)) / X.std(0)
    return X, (z - z.mean()) / z.std()


def _objective(prob, alpha, K):
    ya = prob.y * alpha
    Kl = K[np.ix_(prob.idx, prob.idx)]
    return 0.5 * ya @ Kl @ ya + prob.p @ alpha


def _run(prob, X, **kw):
    run = BlockedDualRun(Kernel(X, "rbf", gamma=GAMMA), prob, tol=1e-6, cache_size=20.0,
                         q=64, **kw)
    run.run()
    return run, run.result()


def _sk_alpha(model, prob, n):
    """scikit-learn's multipliers in the problem's variables."""
    c = np.zeros(n)
    c[model.support_] = model.dual_coef_.ravel()
    if len(prob.y) == 2 * n:  # SVR: a - a* = coef
        return np.concatenate([np.maximum(c, 0), np.maximum(-c, 0)])
    return c


@pytest.mark.parametrize("kind", ["epsilon_svr", "nu_svr", "one_class"])
def test_matches_libsvm(data, kind):
    X, z = data
    n = len(z)
    K = rbf_kernel(X, gamma=GAMMA)
    if kind == "epsilon_svr":
        prob = ref_dual.epsilon_svr(None, z, 3.0, 0.1)
        sk = SkSVR(C=3.0, gamma=GAMMA, epsilon=0.1, tol=1e-6).fit(X, z)
    elif kind == "nu_svr":
        prob = ref_dual.nu_svr(None, z, 3.0, 0.4)
        sk = SkNuSVR(C=3.0, gamma=GAMMA, nu=0.4, tol=1e-6).fit(X, z)
    else:
        prob = ref_dual.one_class(None, 0.2, weight=np.ones(n))
        sk = SkOCSVM(gamma=GAMMA, nu=0.2, tol=1e-6).fit(X)
    run, res = _run(prob, X)
    assert res["converged"] and res["stop_reason"] == "converged"
    a = res["alpha"]
    assert np.all(a >= 0) and np.all(a <= prob.U + 1e-12)
    np.testing.assert_allclose(prob.y @ a, prob.y @ prob.a0, atol=1e-9)
    ours = _objective(prob, a, K)
    # its own objective is from G, accumulated from float32 rows
    np.testing.assert_allclose(res["objective"], ours, rtol=1e-6)
    theirs = _objective(prob, _sk_alpha(sk, prob, n), K)
    assert abs(ours - theirs) <= 1e-6 * abs(theirs)
    coef, intercept = ref_dual.model(prob, ref_dual.DualResult(
        a, res["G"], res["rho"], res["r"], res["objective"], 0, True, "converged", []), n=n)
    f = K @ coef + intercept
    f_sk = sk.decision_function(X) if kind == "one_class" else sk.predict(X)
    np.testing.assert_allclose(f, f_sk, atol=1e-3)
    if kind == "nu_svr":
        assert np.isfinite(res["r"])
    else:
        assert np.isnan(res["r"])


def test_max_iter_stops_with_a_warning(data):
    X, z = data
    prob = ref_dual.epsilon_svr(None, z, 3.0, 0.1)
    run = BlockedDualRun(Kernel(X, "rbf", gamma=GAMMA), prob, tol=1e-6, cache_size=20.0,
                         q=8, max_iter=3)
    run.run()
    assert run.n_iter == 3 and not run.converged and run.stop_reason == "max_iter"
    msg = run.warning_message()
    # a run with no estimator names itself, never "NoneType"
    assert msg.startswith("BlockedDualRun") and "NoneType" not in msg
    with pytest.warns(ConvergenceWarning, match="max_iter=3 outer steps"):
        warnings.warn(msg, ConvergenceWarning)
    # a feasible state all the same
    a = run.result()["alpha"]
    assert np.all(a >= 0) and np.all(a <= prob.U + 1e-12)
