"""Platt's passes over the non-bound examples run on a *parked* active set
(svmlab.smo._platt._park/_unpark): the bound examples get no gradient updates
until the next full pass, the non-bound ones are served from rows against a
contiguous copy of their data.  Checked here against brute force at every
pass boundary: the gradient the solver keeps must be the true one for every
example it uses, and the rows against a subset must be the kernel's values."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_moons

import reference as R
from svmlab import SMOClassifier
from svmlab.smo import _core as core
from svmlab.kernels.cache import cache_from_buffer, get_row_against
from svmlab.kernels import Kernel, kernel_row_against


def _binary_data(n=260, d=90, seed=0):
    rng = np.random.default_rng(seed)
    X = (rng.random((n, d)) < 0.12).astype(float)
    w = rng.normal(size=d)
    y = (X @ w + 0.3 * rng.normal(size=n) > np.median(X @ w)).astype(int)
    return X, y


@pytest.mark.parametrize("kind", ["dense", "csr", "binary"])
@pytest.mark.parametrize("kernel", ["rbf", "linear", "poly"])
def test_rows_against_a_subset(kind, kernel):
    if kind == "binary":
        X, _ = _binary_data(60, 130)
    else:
        X, _ = make_moons(60, noise=0.3, random_state=0)
        X = np.hstack([X, X[:, :1] * 0.5])
    Xin = sp.csr_matrix(X) if kind == "csr" else X
    k = Kernel(Xin, kernel, gamma=0.4, coef0=0.5, degree=2)
    assert k.binary == (kind == "binary")
    K = R.gram(X, kernel, 0.4, 2, 0.5)
    idx = np.array([3, 4, 9, 17, 40, 59])
    kd2 = k.subset_data(idx)
    out = np.empty(len(idx))
    for i in (0, 4, 33):
        kernel_row_against(k.data, i, kd2, out)
        np.testing.assert_allclose(out, K[i, idx], rtol=1e-12, atol=1e-12)
    # the same through a cache laid over borrowed memory
    buf = np.empty(3 * len(idx))
    cd = cache_from_buffer(buf.reshape(3, len(idx)), X.shape[0])
    for i in (5, 6, 7, 5, 8):
        np.testing.assert_allclose(get_row_against(k.data, kd2, cd, i), K[i, idx],
                                   rtol=1e-12, atol=1e-12)
    assert (int(cd.meta[3]), int(cd.meta[4])) == (1, 4)  # hits, misses


def _check_state(run, K, yp, X):
    """The solver's G against brute force for every example it may read
    (and, for the linear kernel outside a parked phase, the folded w)."""
    f = K @ (run.alpha * yp)
    if run.linear and not run.ist[core.IS_COMPACT]:
        np.testing.assert_allclose(run.w, X.T @ (run.alpha * yp), atol=1e-9)
    act = run.act[:run.ist[core.IS_N_ACTIVE]]
    if run.ist[core.IS_COMPACT]:
        # a parked phase: the active examples are in the layout, whose
        # positions number the rows of the compact cache
        assert np.all(run.active[act] == core.ACTIVE)
        layout = np.flatnonzero(run.pos >= 0)
        np.testing.assert_array_equal(np.sort(run.pos[layout]),
                                      np.arange(run.ist[core.IS_LAYOUT]))
        assert np.all(run.pos[act] >= 0)
        np.testing.assert_array_equal(run.kdL.sqnorm[run.pos[layout]],
                                      run.kd.sqnorm[layout])
        parked = np.flatnonzero(run.active == core.PARKED)
        assert len(parked) > 0
        a = run.alpha[parked]
        assert np.all((a <= 0) | (a >= run.C))  # only bound examples are parked
        # the layout's decision values, in layout order: FL = G - y
        m = run.ist[core.IS_LAYOUT]
        lay = run.lay[:m]
        np.testing.assert_array_equal(run.pos[lay], np.arange(m))
        np.testing.assert_allclose(run.FL[:m] + yp[lay], f[lay], atol=1e-9)
        a = run.alpha[lay]
        np.testing.assert_array_equal(run.BL[:m], np.where((a > 0) & (a < run.C), 0.0, np.inf))
        # the full passes' feature copy of the non-bound rows waits, all zero
        assert not run.nbf.any()
    elif not run.linear:
        np.testing.assert_allclose(run.G[act], f[act], atol=1e-9)
    elif run.EF.shape[0]:
        # binary inputs, linear kernel: the full passes' error cache of the
        # non-bound examples (E - b, in the order of the non-bound list)
        nb = run.ist[core.IS_NB]
        t = run.nbi[:nb]
        a = run.alpha[t]
        assert np.all((a > 0) & (a < run.C))
        assert nb == np.count_nonzero((run.alpha > 0) & (run.alpha < run.C))
        np.testing.assert_allclose(run.EF[:nb], f[t] - yp[t], atol=1e-9)
        Xd = np.asarray(X.todense() if hasattr(X, "todense") else X)
        np.testing.assert_array_equal(run.nbf[:Xd.shape[1], :nb].T, Xd[t])
        assert not run.nbf[:, nb:].any() and not run.nbf[Xd.shape[1]:].any()
        # (and its scan for the extremes of E reads BL as an all-zero mask)
        assert not run.BL.any()


@pytest.mark.parametrize("kernel", ["rbf", "linear"])
@pytest.mark.parametrize("data", ["moons", "binary"])
def test_gradient_exact_through_parked_phases(kernel, data):
    if data == "moons":
        X, y = make_moons(240, noise=0.35, random_state=5)
        gamma, C = 2.0, 20.0
    else:
        X, y = _binary_data()
        gamma, C = 0.05, 5.0
    # a cache too small for every row: parked phases pay off
    m = SMOClassifier(C=C, kernel=kernel, gamma=gamma, random_state=1, progress=False,
                      cache_size=0.05, cache_dtype="float64")  # checked against float64 K
    run = m.start(X, y)
    K = R.gram(X, kernel, gamma)
    yp = R.to_pm(y, m.classes_)
    phases = reparks = full_checks = 0
    was_compact = False
    na = 0
    while not run.finished:
        run.n_iter += run._call(7, False)
        compact = bool(run.ist[core.IS_COMPACT])
        phases += compact and not was_compact
        reparks += compact and was_compact and run.ist[core.IS_N_ACTIVE] < na
        was_compact = compact
        na = run.ist[core.IS_N_ACTIVE]
        _check_state(run, K, yp, X)
        full_checks += not compact and run.ist[core.IS_NB] > 0
    # the test went through parked phases and back (and, on moons, parked
    # more examples within a phase, rebasing their gradients)
    assert phases >= 2
    assert reparks >= 1 or data != "moons"
    assert full_checks >= 1
    # the binary linear case keeps Platt's error cache in full passes
    assert (run.EF.shape[0] > 0) == (data == "binary" and kernel == "linear")
    run.finish()
    # and the result is LIBSVM's optimum
    _, _, W_ref = R.libsvm_dual(X, y, C, kernel, gamma, 3, 0.0, tol=1e-6)
    assert R.dual_objective(K, yp, m.alpha_) == pytest.approx(W_ref, rel=1e-3)


@pytest.mark.parametrize("shrinking, cache_size", [(False, 0.05), (True, 40)])
def test_no_parking(shrinking, cache_size):
    """Not without shrinking, and not when every row fits in the cache."""
    X, y = make_moons(200, noise=0.35, random_state=5)
    m = SMOClassifier(C=20.0, gamma=2.0, shrinking=shrinking, cache_size=cache_size,
                      random_state=1, progress=False)
    run = m.start(X, y)
    while not run.finished:
        run.n_iter += run._call(5, False)
        assert run.ist[core.IS_COMPACT] == 0
        assert not np.any(run.active == core.PARKED)


def test_binary_linear_without_error_cache(monkeypatch):
    """Over the error cache's memory budget, the full passes take E from w:
    same optimum, no feature copy."""
    import svmlab.smo._estimator as smo_mod

    X, y = _binary_data()
    C = 5.0
    K = R.gram(X, "linear", 0.0)
    yp = None
    objectives = []
    for budget in (smo_mod.ERROR_CACHE_BYTES, 0):
        monkeypatch.setattr(smo_mod, "ERROR_CACHE_BYTES", budget)
        m = SMOClassifier(C=C, kernel="linear", random_state=1, progress=False, cache_size=0.05)
        run = m.start(X, y)
        assert (run.EF.shape[0] > 0) == (budget > 0)
        assert run.nbf.size == (64 * run.kd.brows.shape[1] * X.shape[0] if budget else 0)
        run.run()
        run.finish()
        yp = R.to_pm(y, m.classes_)
        objectives.append(R.dual_objective(K, yp, m.alpha_))
    _, _, W_ref = R.libsvm_dual(X, y, C, "linear", 0.0, 3, 0.0, tol=1e-6)
    assert objectives[0] == pytest.approx(W_ref, rel=1e-3)
    assert objectives[1] == pytest.approx(W_ref, rel=1e-3)


@pytest.mark.parametrize("C", [0.01, 0.001])
@pytest.mark.parametrize("selection", ["platt", "wss2"])
def test_every_example_at_a_bound_parks_nothing(C, selection):
    """Issue 25's six points: with a small C every multiplier ends at a
    bound, so a parked phase would have an empty layout (it raised
    ZeroDivisionError).  Nothing is parked then, and the fit reaches
    LIBSVM's optimum (dual objective computed here)."""
    from sklearn.svm import SVC

    X = np.array([[-2, 0], [-1, -1], [0, -2], [0, 2], [1, 1], [2, 0]], dtype=float)
    y = np.array([1, 1, 1, 2, 2, 2])
    m = SMOClassifier(kernel="linear", C=C, selection=selection, progress=False).fit(X, y)
    assert m.converged_
    yp = np.where(y == 2, 1.0, -1.0)
    K = X @ X.T
    svc = SVC(kernel="linear", C=C).fit(X, y)
    a_ref = np.zeros(6)
    a_ref[svc.support_] = np.abs(svc.dual_coef_[0])

    def W(a):
        return a.sum() - 0.5 * (a * yp) @ K @ (a * yp)

    assert W(m.alpha_) == pytest.approx(W(a_ref), rel=1e-9)
    assert np.all((m.alpha_ == 0) | (m.alpha_ == C))  # every multiplier at a bound
    np.testing.assert_array_equal(m.predict(X), svc.predict(X))
