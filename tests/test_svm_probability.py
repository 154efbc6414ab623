"""probability=True: Platt's sigmoid on cross-validated decision values
(Lin, Lin and Weng's safe Newton fit) and Wu, Lin and Weng's pairwise
coupling, against independent computations and against SVC.

* The sigmoid fitter is fed decision values chosen here and compared with
  an independent minimiser (scipy's L-BFGS on the same regularised
  cross-entropy, written out here), also where the naive formulas overflow.
* The folds: with the same integer random_state, svmlab's folds are SVC's
  (LIBSVM's Mersenne Twister reproduced), so at a tight tol the sub-models'
  decision values, hence the sigmoids, agree with SVC's to about 1e-7; at
  the default tol (1e-3) the decision values differ by the solvers' stopping
  points, and A, B by up to about 2e-3 (measured: 1.7e-3 on iris).  Another
  seed moves A by 0.1 or more, so the comparison sees the folds.
* Coupling: against the exact minimiser of method 2 (its KKT linear system
  solved here); LIBSVM's iteration stops within ``0.005 / k`` of it.
"""

import warnings

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn import datasets
from sklearn import svm as sk
from sklearn.datasets import make_blobs, make_classification
from sklearn.exceptions import NotFittedError

from svmlab.svm import SVC, NuSVC
from svmlab.svm import _probability as P

# scikit-learn 1.9 deprecates its probability=True and probA_/probB_ (FutureWarning)
pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning")


def _platt_loss(ab, f, t):
    z = ab[0] * f + ab[1]
    # t z + log(1 + exp(-z)), written stably with logaddexp
    return float(np.sum(t * z + np.logaddexp(0.0, -z)))


def _independent_fit(f, labels):
    pos = labels > 0
    n1, n0 = pos.sum(), (~pos).sum()
    t = np.where(pos, (n1 + 1.0) / (n1 + 2.0), 1.0 / (n0 + 2.0))
    res = minimize(_platt_loss, x0=[0.0, 0.0], args=(f, t), method="L-BFGS-B",
                   options=dict(ftol=1e-15, gtol=1e-12, maxiter=10000))
    return res.x, res.fun, t


@pytest.mark.parametrize("scale", [1.0, 30.0, 1e3])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sigmoid_fit_reaches_the_minimum(seed, scale):
    rng = np.random.RandomState(seed)
    labels = np.where(rng.rand(200) < 0.4, 1.0, -1.0)
    f = scale * (labels * rng.uniform(0.0, 1.5, 200) + rng.normal(0, 0.6, 200))
    A, B, it = P.sigmoid_fit(f, labels)
    (A0, B0), best, t = _independent_fit(f, labels)
    assert np.isfinite(A) and np.isfinite(B) and it < 100
    # the same minimum (the loss is strictly convex in (A, B))
    assert _platt_loss([A, B], f, t) <= best + 1e-7 * abs(best)
    assert abs(A - A0) <= 1e-4 * max(1.0, abs(A0)) and abs(B - B0) <= 1e-4 * max(1.0, abs(B0))
    assert A < 0  # larger decision values, more likely positive


def test_sigmoid_predict_is_safe_and_clipped_by_coupling():
    f = np.array([-1e6, -50.0, 0.0, 50.0, 1e6])
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        p = P.sigmoid_predict(f, -2.0, 0.5)
    np.testing.assert_allclose(p, 1.0 / (1.0 + np.exp(np.clip(-2.0 * f + 0.5, -700, 700))),
                               atol=1e-300)
    R = P.pairwise_matrix(p[:, None], 2, [(0, 1)])
    assert R[:, 0, 1].min() >= P.MIN_PROB and R[:, 0, 1].max() <= 1 - P.MIN_PROB


def _exact_coupling(r):
    """Method 2's minimiser: min p'Qp s.t. sum p = 1, by its KKT system."""
    k = r.shape[0]
    Q = np.zeros((k, k))
    for t in range(k):
        for s in range(k):
            Q[t, s] = sum(r[j, t] ** 2 for j in range(k) if j != t) if s == t \
                else -r[s, t] * r[t, s]
    M = np.block([[Q, np.ones((k, 1))], [np.ones((1, k)), np.zeros((1, 1))]])
    return np.linalg.solve(M, np.r_[np.zeros(k), 1.0])[:k]


@pytest.mark.parametrize("k", [2, 3, 5])
def test_coupling_against_the_exact_minimiser(k):
    rng = np.random.RandomState(k)
    m = 40
    R = np.zeros((m, k, k))
    for a in range(k):
        for b in range(a + 1, k):
            v = rng.uniform(0.02, 0.98, m)
            R[:, a, b], R[:, b, a] = v, 1 - v
    p = P.couple(R)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)
    exact = np.array([_exact_coupling(R[i]) for i in range(m)])
    assert np.abs(p - exact).max() <= 0.005  # LIBSVM's stopping rule is eps = 0.005 / k
    if k == 2:  # two classes: the pairwise estimate itself
        np.testing.assert_allclose(p[:, 0], R[:, 0, 1], atol=5e-3)


def test_permutation_is_a_shuffle_and_depends_on_the_seed():
    a, b = P.libsvm_permutation(7, 50), P.libsvm_permutation(8, 50)
    assert sorted(a) == list(range(50)) and not np.array_equal(a, b)
    np.testing.assert_array_equal(a, P.libsvm_permutation(7, 50))
    assert P.fold_bounds(12) == [(0, 2), (2, 4), (4, 7), (7, 9), (9, 12)]


def _fit_both(cls_ours, cls_theirs, X, y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return cls_ours(probability=True, **kw).fit(X, y), \
            cls_theirs(probability=True, **kw).fit(X, y)


CASES = [("binary", make_classification(120, 5, flip_y=0.1, random_state=0)),
         ("iris", (datasets.load_iris().data, datasets.load_iris().target))]


@pytest.mark.parametrize("seed", [0, 7])
@pytest.mark.parametrize("name,data", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("ours,theirs", [(SVC, sk.SVC), (NuSVC, sk.NuSVC)],
                         ids=["SVC", "NuSVC"])
def test_same_folds_same_sigmoids_as_svc(ours, theirs, name, data, seed):
    X, y = data
    a, b = _fit_both(ours, theirs, X, y, random_state=seed, tol=1e-8)
    np.testing.assert_allclose(a.probA_, b.probA_, atol=1e-5, rtol=1e-5)
    np.testing.assert_allclose(a.probB_, b.probB_, atol=1e-5, rtol=1e-5)
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), atol=1e-5)
    # another seed, other folds: the comparison would see a wrong split
    c = ours(probability=True, random_state=seed + 1, tol=1e-8).fit(X, y)
    assert np.abs(c.probA_ - b.probA_).max() > 1e-3


@pytest.mark.parametrize("name,data", CASES, ids=[c[0] for c in CASES])
def test_end_to_end_at_default_tol(name, data):
    X, y = data
    a, b = _fit_both(SVC, sk.SVC, X, y, random_state=0)
    np.testing.assert_allclose(a.probA_, b.probA_, atol=5e-3, rtol=5e-3)
    np.testing.assert_allclose(a.probB_, b.probB_, atol=5e-3)
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), atol=5e-3)


def test_predict_proba_contract():
    X, y = make_blobs(90, centers=3, cluster_std=2.0, random_state=0)
    est = SVC(probability=True, random_state=0).fit(X, y)
    p = est.predict_proba(X)
    assert p.shape == (90, 3)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(np.exp(est.predict_log_proba(X)), p, rtol=1e-12)
    # SVC's documented caveat: argmax may differ from predict near the boundary
    assert np.mean(np.argmax(p, axis=1) == np.searchsorted(est.classes_,
                                                           est.predict(X))) > 0.9
    assert est.probA_.shape == est.probB_.shape == (3,)
    plain = SVC().fit(X, y)
    assert not hasattr(plain, "predict_proba")
    plain.probability = True
    with pytest.raises(NotFittedError, match="fitted with probability=False"):
        plain.predict_proba(X)
