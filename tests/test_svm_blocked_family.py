"""SVR, NuSVR and OneClassSVM on the blocked decomposition of the
generalised dual (``solver="blocked"``, and ``"auto"`` from 5000 dense rows;
decision 31b01): the same optimum as LIBSVM's (dual objectives computed
here from the fitted attributes), the same predictions, NuSVR's
``epsilon_``, and the rule that picks it."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_regression
from sklearn.metrics.pairwise import rbf_kernel
from sklearn import svm as sksvm

import svmlab

GAMMA = 0.05


@pytest.fixture(scope="module")
def data():
    X, z = make_regression(700, 8, noise=5.0, random_state=4)
    X = (X - X.mean(0)) / X.std(0)
    return X, (z - z.mean()) / z.std()


def _coef(m, n):
    c = np.zeros(n)
    c[m.support_] = m.dual_coef_.ravel()
    return c


def _svr_objective(m, X, z, eps, gamma):
    """LIBSVM's minimised epsilon-SVR dual at the model's ``beta = a - a*``
    (at an optimum a and a* are not both positive)."""
    b = _coef(m, len(z))
    K = rbf_kernel(X, gamma=gamma)
    return 0.5 * b @ K @ b + eps * np.abs(b).sum() - z @ b


def _oc_objective(m, X, gamma):
    a = _coef(m, X.shape[0])
    return 0.5 * a @ rbf_kernel(X, gamma=gamma) @ a


@pytest.mark.parametrize("name", ["SVR", "NuSVR", "OneClassSVM"])
def test_blocked_reaches_libsvms_optimum(data, name):
    X, z = data
    if name == "SVR":
        kw = dict(C=3.0, epsilon=0.1, gamma=GAMMA, tol=1e-5)
    elif name == "NuSVR":
        kw = dict(C=3.0, nu=0.4, gamma=GAMMA, tol=1e-5)
    else:
        kw = dict(nu=0.2, gamma=GAMMA, tol=1e-5)
    ours = getattr(svmlab, name)(solver="blocked", **kw)
    theirs = getattr(sksvm, name)(**kw)
    args = (X, z) if name != "OneClassSVM" else (X,)
    ours.fit(*args)
    theirs.fit(*args)
    assert ours.solver_ == "blocked" and ours.converged_
    if name == "SVR":
        fo, ft = (_svr_objective(m, X, z, 0.1, GAMMA) for m in (ours, theirs))
    elif name == "OneClassSVM":
        fo, ft = (_oc_objective(m, X, GAMMA) for m in (ours, theirs))
    else:  # NuSVR: the epsilon each found, then the epsilon-SVR objective at it
        eo = float(ours.epsilon_) if hasattr(ours, "epsilon_") else None
        ref = svmlab.NuSVR(solver="wss2", **kw).fit(X, z)
        np.testing.assert_allclose(eo, ref.epsilon_, rtol=1e-3)
        fo = _svr_objective(ours, X, z, eo, GAMMA)
        ft = _svr_objective(theirs, X, z, eo, GAMMA)
    assert abs(fo - ft) <= 1e-5 * abs(ft)
    if name == "OneClassSVM":
        np.testing.assert_allclose(ours.decision_function(X), theirs.decision_function(X),
                                   atol=1e-3)
    else:
        np.testing.assert_allclose(ours.predict(X), theirs.predict(X), atol=1e-3)


def test_auto_takes_blocked_from_5000_dense_rows():
    X, z = make_regression(5000, 20, noise=10.0, random_state=0)
    z = (z - z.mean()) / z.std()
    m = svmlab.SVR().fit(X, z)
    assert m.solver_ == "blocked" and m.converged_
    assert svmlab.SVR().fit(X[:4999], z[:4999]).solver_ == "wss2"
    assert svmlab.SVR().fit(sp.csr_matrix(X[:600]), z[:600]).solver_ == "wss2"
    # a warm start keeps the rows solver (it starts from the last solution)
    w = svmlab.SVR(warm_start=True).fit(X, z)
    assert w.solver_ == "blocked"
    assert w.set_params(C=2.0).fit(X, z).solver_ == "wss2"


def test_blocked_is_refused_where_it_does_not_apply(data):
    X, z = data
    y = (z > 0).astype(int)
    with pytest.raises(ValueError, match="solver='blocked'"):
        svmlab.NuSVC(solver="blocked").fit(X, y)
    with pytest.raises(ValueError, match="finite C"):
        svmlab.SVR(solver="blocked", C=np.inf).fit(X, z)
