"""The compiled generalised dual (svmlab.smo.DualRun, LIBSVM's Solver and
Solver_NU by WSS 2).

* Same steps as the readable twin (svmlab.reference.dual) on C-SVC,
  epsilon-SVR, one-class, nu-SVC and nu-SVR problems: the same pairs, every
  record field and alpha after every step within 1e-10, the same rho and r
  (no shrinking, every row cached, the twin run on the kernel matrix the
  compiled loop reads).
* The optimum of LIBSVM (scikit-learn's SVC, SVR, OneClassSVM, NuSVC,
  NuSVR): objectives and decision values computed here.
* Stepped == fast, shrinking on or off, float64 or float32 rows, mapped
  (SVR) or not, nu or not; a feasible start (warm start) computes G and
  Gbar from it; a hard margin (U = inf); honest stops (max_iter, stalls);
  bad input refused before any work.
"""

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.svm import SVC, SVR, NuSVC, NuSVR, OneClassSVM

from svmlab.kernels import Kernel
from svmlab.reference import dual as ref
from svmlab.smo import DualRun, DualStep
from svmlab.smo._core import IS_SHRINK_COUNTER

FORMS = ("c_svc", "epsilon_svr", "one_class", "nu_svc", "nu_svr")


def _data(n=60, seed=0):
    X, y = make_classification(n, 4, n_informative=3, n_redundant=0, flip_y=0.1,
                               random_state=seed)
    z = X @ np.array([0.5, -1.0, 0.3, 0.0]) + 0.2 * np.random.default_rng(seed).normal(size=n)
    return X, np.where(y == 1, 1.0, -1.0), z


def _problem(form, K, y, z, weight=None):
    if form == "c_svc":
        return ref.c_svc(K, y, 2.0, weight)
    if form == "epsilon_svr":
        return ref.epsilon_svr(K, z, 1.5, 0.2, weight)
    if form == "one_class":
        return ref.one_class(K, 0.3, weight)
    if form == "nu_svc":
        return ref.nu_svc(K, y, 0.4, weight)
    return ref.nu_svr(K, z, 1.5, 0.3, weight)


def _run(kernel, prob, **kw):
    opts = dict(tol=1e-4, shrinking=False, cache_size=50.0, cache_dtype="float64")
    opts.update(kw)
    return DualRun(kernel, prob.y, prob.p, prob.U, idx=prob.idx, nu=prob.nu, alpha0=prob.a0,
                   **opts)


def _records(run):
    out = []
    while True:
        r = run.step()
        if r is None:
            return out
        out.append(r)


TWIN_FIELDS = ("i1", "i2", "sign_class", "clipped", "iteration")
TWIN_CLOSE = ("y1", "y2", "C1", "C2", "p1", "p2", "a1_old", "a2_old", "a1_new", "a2_new", "L",
              "H", "eta", "K11", "K12", "K22", "E1", "E2", "b_old", "b_new", "a2_unclipped",
              "delta_objective", "m", "M", "gap")


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("weighted", [False, True])
def test_same_steps_as_the_readable_twin(form, weighted):
    X, y, z = _data(70, seed=1)
    kernel = Kernel(X, "rbf", gamma=0.5)
    n = len(y)
    K = np.vstack([kernel.row(i) for i in range(n)])  # the rows the loop reads
    weight = np.where(np.arange(n) % 3 == 0, 1.5, 1.0) if weighted else None
    prob = _problem(form, K, y, z, weight)
    twin = ref.solve(prob, tol=1e-4, kdiag=kernel.diag())
    run = _run(kernel, prob)
    mine = _records(run)
    assert len(twin.records) > 20
    assert [(r.i1, r.i2) for r in mine] == [(r.i1, r.i2) for r in twin.records]
    alpha = np.array(prob.a0, dtype=float)
    alpha_twin = alpha.copy()
    for a, b in zip(mine, twin.records):
        for f in TWIN_FIELDS:
            assert getattr(a, f) == getattr(b, f), f
        for f in TWIN_CLOSE:
            u, v = getattr(a, f), getattr(b, f)
            assert abs(u - v) <= 1e-10 * max(1.0, abs(v)) or (np.isnan(u) and np.isnan(v)), f
        alpha[a.i1], alpha[a.i2] = a.a1_new, a.a2_new
        alpha_twin[b.i1], alpha_twin[b.i2] = b.a1_new, b.a2_new
        assert np.max(np.abs(alpha - alpha_twin)) <= 1e-10
    assert run.converged == twin.converged and run.stop_reason == twin.stop_reason
    res = run.result()
    np.testing.assert_allclose(res["alpha"], twin.alpha, rtol=0, atol=1e-10)
    np.testing.assert_allclose(res["G"], twin.G, rtol=0, atol=1e-9)
    assert res["rho"] == pytest.approx(twin.rho, abs=1e-9)
    if prob.nu:
        assert res["r"] == pytest.approx(twin.r, abs=1e-9)
    else:
        assert np.isnan(res["r"])
    assert res["objective"] == pytest.approx(ref.objective(prob, res["alpha"]), abs=1e-9)
    assert res["intercept"] == -res["rho"]


def _svc_alpha(model, n):
    a = np.zeros(n)
    a[model.support_] = np.abs(np.asarray(model.dual_coef_).ravel())
    return a


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("shrinking", [True, False])
def test_libsvm_optimum(form, shrinking):
    """The decision function of the compiled solution equals LIBSVM's on
    the training set, and the objective is LIBSVM's (computed here)."""
    X, y, z = _data(150, seed=2)
    gamma = 0.4
    kernel = Kernel(X, "rbf", gamma=gamma)
    K = rbf_kernel(X, gamma=gamma)
    prob = _problem(form, K, y, z)
    run = _run(kernel, prob, tol=1e-5, shrinking=shrinking)
    run.run()
    assert run.converged
    res = run.result()
    coef, intercept = ref.model(prob, ref.DualResult(res["alpha"], res["G"], res["rho"],
                                                     res["r"], 0.0, 0, True, "converged", []))
    f = K @ coef + intercept
    if form == "c_svc":
        peer = SVC(C=2.0, gamma=gamma, tol=1e-5).fit(X, y)
    elif form == "epsilon_svr":
        peer = SVR(C=1.5, epsilon=0.2, gamma=gamma, tol=1e-5).fit(X, z)
    elif form == "one_class":
        peer = OneClassSVM(nu=0.3, gamma=gamma, tol=1e-5).fit(X)
    elif form == "nu_svc":
        peer = NuSVC(nu=0.4, gamma=gamma, tol=1e-5).fit(X, y)
    else:
        peer = NuSVR(C=1.5, nu=0.3, gamma=gamma, tol=1e-5).fit(X, z)
    scale = max(1.0, np.abs(f).max())
    np.testing.assert_allclose(f, peer.decision_function(X) if form in ("c_svc", "nu_svc",
                                                                       "one_class")
                               else peer.predict(X), atol=2e-3 * scale)
    # LIBSVM's objective, from its coefficients mapped back onto the variables
    n = len(y)
    beta = np.zeros(n)
    beta[peer.support_] = np.asarray(peer.dual_coef_).ravel()
    if form in ("epsilon_svr", "nu_svr"):
        a_peer = np.r_[np.maximum(beta, 0), np.maximum(-beta, 0)]
    elif form == "one_class":
        a_peer = beta
    elif form == "c_svc":
        a_peer = np.abs(beta)
    else:  # nu-SVC: LIBSVM's coefficients are y a / r
        a_peer = np.abs(beta) * res["r"]
    mine, theirs = ref.objective(prob, res["alpha"]), ref.objective(prob, a_peer)
    assert mine <= theirs + 1e-4 * max(1.0, abs(theirs))
    assert mine == pytest.approx(theirs, rel=1e-3, abs=1e-4)


def _fast_and_stepped(make):
    fast = make()
    fast.run()
    stepped = make()
    recs = _records(stepped)
    assert len(recs) == fast.n_iter == stepped.n_iter
    np.testing.assert_array_equal(fast.alpha, stepped.alpha)
    assert fast.result()["rho"] == stepped.result()["rho"]
    return fast, recs


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_stepped_equals_fast_with_shrinking(form, dtype):
    X, y, z = _data(400, seed=3)
    kernel = Kernel(X, "rbf", gamma=0.3)
    prob = _problem(form, np.zeros((len(y), len(y))), y, z)
    def make():
        run = _run(kernel, prob, shrinking=True, tol=1e-3, cache_size=0.3, cache_dtype=dtype)
        run.state.shrink_every = 50  # shrinking checks every 50 steps (LIBSVM: min(l, 1000))
        run.state.ist[IS_SHRINK_COUNTER] = 50
        return run

    fast, recs = _fast_and_stepped(make)
    assert fast.converged
    assert min(r.n_active for r in recs) < len(prob.y)  # shrinking happened
    assert all(isinstance(r, DualStep) for r in recs)


def test_warm_start_from_a_feasible_point():
    """G and Gbar come from the start: from the optimum nothing moves, and
    from another feasible point the run reaches the same objective."""
    X, y, z = _data(120, seed=4)
    kernel = Kernel(X, "rbf", gamma=0.5)
    prob = _problem("epsilon_svr", np.zeros((len(y), len(y))), y, z)
    cold = _run(kernel, prob, tol=1e-6)
    cold.run()
    res = cold.result()
    warm = DualRun(kernel, prob.y, prob.p, prob.U, idx=prob.idx, alpha0=res["alpha"], tol=1e-6,
                   shrinking=False)
    assert _records(warm) == [] and warm.converged
    np.testing.assert_allclose(warm.result()["G"], res["G"], atol=1e-12)
    np.testing.assert_allclose(warm.result()["Gbar"], cold.result()["Gbar"], atol=1e-12)
    # another feasible start: the same y'a (0), some variables at the bound
    rng = np.random.default_rng(0)
    a0 = np.zeros(len(prob.y))
    n = len(y)
    pick = rng.choice(n, 20, replace=False)
    a0[pick] = prob.U[pick]  # a at its bound ...
    a0[n + pick] = prob.U[pick]  # ... and a* too: y'a stays 0
    warm2 = DualRun(kernel, prob.y, prob.p, prob.U, idx=prob.idx, alpha0=a0, tol=1e-6)
    K = rbf_kernel(X, gamma=0.5)[np.ix_(prob.idx, prob.idx)]
    G0 = prob.y * (K @ (prob.y * a0)) + prob.p
    np.testing.assert_allclose(warm2.result()["G"], G0, atol=1e-10)
    Gbar0 = prob.y * (K[:, a0 >= prob.U] @ (prob.y * prob.U)[a0 >= prob.U])
    np.testing.assert_allclose(warm2.result()["Gbar"], Gbar0, atol=1e-10)
    warm2.run()
    assert warm2.converged
    assert warm2.result()["objective"] == pytest.approx(res["objective"], abs=1e-6)


def test_hard_margin():
    """U = inf: separable data reach the hard-margin solution (every margin
    at least 1 - tol, the support vectors on it); data that cannot be
    separated never report convergence and keep finite multipliers: the
    dual is unbounded, so with LIBSVM's tie rule for i the multipliers grow
    at every step until max_iter (with the first index the loop used to
    reach a pair that could not move: a stall; docs/decisions/33a01)."""
    rng = np.random.default_rng(5)
    X = np.r_[rng.normal(size=(30, 2)) + 3.0, rng.normal(size=(30, 2)) - 3.0]
    y = np.r_[np.ones(30), -np.ones(30)]
    kernel = Kernel(X, "linear")
    run = DualRun(kernel, y, -1.0, np.inf, tol=1e-6)
    run.run()
    assert run.converged
    res = run.result()
    f = X @ (X.T @ (res["alpha"] * y)) + res["intercept"]
    assert np.all(y * f >= 1 - 1e-5)
    sv = res["alpha"] > 1e-8
    np.testing.assert_allclose(y[sv] * f[sv], 1.0, atol=1e-5)
    big = SVC(kernel="linear", C=1e8, tol=1e-8).fit(X, y)
    np.testing.assert_allclose(f, big.decision_function(X), atol=1e-4)
    # the same point in both classes: no separating hyperplane
    Xb = np.r_[X, X[:1]]
    yb = np.r_[y, -y[:1]]
    bad = DualRun(Kernel(Xb, "linear"), yb, -1.0, np.inf, tol=1e-6, max_iter=100000)
    with pytest.warns(ConvergenceWarning, match="stalled|max_iter"):
        bad.run()
        bad.finish()
    assert not bad.converged and bad.stop_reason in ("stalled", "max_iter")
    assert np.all(np.isfinite(bad.alpha))


def test_max_iter_and_honest_stops():
    X, y, z = _data(200, seed=6)
    kernel = Kernel(X, "rbf", gamma=0.5)
    prob = _problem("nu_svr", np.zeros((len(y), len(y))), y, z)
    run = _run(kernel, prob, max_iter=7)
    with pytest.warns(ConvergenceWarning, match="^DualRun stopped after max_iter=7"):
        run.run()
        run.finish()
    assert "NoneType" not in run.warning_message()
    assert run.n_iter == 7 and run.stop_reason == "max_iter" and not run.converged
    # the multipliers stay feasible: y'a and (nu) e'a of the start
    a = run.alpha
    assert abs(prob.y @ a - prob.y @ prob.a0) < 1e-10
    assert abs(a.sum() - prob.a0.sum()) < 1e-10
    assert np.all(a >= 0) and np.all(a <= prob.U)


@pytest.mark.parametrize("kw,match", [
    (dict(y=np.array([1.0, 2.0, -1.0])), "y must hold"),
    (dict(p=np.array([0.0, np.nan, 0.0])), "p must be finite"),
    (dict(upper=np.array([1.0, 0.0, 1.0])), "upper bounds"),
    (dict(alpha0=np.array([0.0, 2.0, 0.0])), "feasible"),
    (dict(idx=np.array([0, 1, 7])), "idx must hold"),
])
def test_bad_input(kw, match):
    kernel = Kernel(np.eye(3), "rbf", gamma=1.0)
    args = dict(y=np.array([1.0, -1.0, 1.0]), p=np.full(3, -1.0), upper=np.ones(3))
    args.update({k: v for k, v in kw.items() if k in args})
    extra = {k: v for k, v in kw.items() if k not in args}
    with pytest.raises(ValueError, match=match):
        DualRun(kernel, args["y"], args["p"], args["upper"], **extra)


def test_precomputed_and_full_kernel():
    """A precomputed Gram matrix and the full-kernel path solve the same
    epsilon-SVR as SVR(kernel="precomputed")."""
    X, y, z = _data(90, seed=7)
    K = rbf_kernel(X, gamma=0.7)
    prob = ref.epsilon_svr(K, z, 1.0, 0.1)
    peer = SVR(kernel="precomputed", C=1.0, epsilon=0.1, tol=1e-6).fit(K, z)
    for kernel, full in ((Kernel(K, "precomputed"), False), (Kernel(X, "rbf", gamma=0.7), True)):
        run = _run(kernel, prob, tol=1e-6, shrinking=True, full_kernel=full)
        run.run()
        assert run.converged
        if full:
            assert run.cache_misses == len(z)
        res = run.result()
        coef = res["alpha"][:90] - res["alpha"][90:]
        np.testing.assert_allclose(K @ coef + res["intercept"], peer.predict(K), atol=1e-4)


def test_jit_equals_no_jit(tmp_path):
    """The interpreted loop (NUMBA_DISABLE_JIT) takes the same steps bit for bit."""
    code = (
        "import numpy as np, sys\n"
        "from sklearn.datasets import make_classification\n"
        "from svmlab.kernels import Kernel\n"
        "from svmlab.reference import dual as ref\n"
        "from svmlab.smo import DualRun\n"
        "X, y = make_classification(90, 4, random_state=8)\n"
        "z = X[:, 0] - X[:, 1]\n"
        "out = []\n"
        "for prob in (ref.epsilon_svr(np.eye(90), z, 1.0, 0.1), ref.nu_svc(np.eye(90), 2.0 * y - 1, 0.3)):\n"
        "    run = DualRun(Kernel(X, 'rbf', gamma=0.3), prob.y, prob.p, prob.U, idx=prob.idx,\n"
        "                  nu=prob.nu, alpha0=prob.a0, tol=1e-4, cache_size=0.05)\n"
        "    run.run()\n"
        "    out.append(run.alpha)\n"
        "np.save(sys.argv[1], np.concatenate(out))\n")
    res = []
    for flag in ("0", "1"):
        path = tmp_path / f"a{flag}.npy"
        env = dict(os.environ, NUMBA_DISABLE_JIT=flag)
        subprocess.run([sys.executable, "-c", code, str(path)], check=True, env=env,
                       cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        res.append(np.load(path))
    np.testing.assert_array_equal(res[0], res[1])
