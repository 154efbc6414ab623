"""The SVR forms' layout of the compiled dual loop (decision 31r01).

``dual_run`` walks the kernel rows in order when ``idx = [0..n-1, 0..n-1]``
and ``y = [+1]*n + [-1]*n`` (``_svr_half``), one class at a time for the nu
forms, and scores WSS 2's partners only for the candidates while shrunk.
The readable twin has no shrinking, so these paths are checked here against
the loop's two other layouts on the same problem, with shrinking on:

* identity: the 2n variables over a kernel of the points stacked twice
  (``idx`` the identity; rows indexed by variable; its gradient
  reconstruction sums in another order, so it is compared to rounding);
* general map: the same kernel plus one extra point, ``idx = 0..2n-1``
  (a map that is not the SVR layout, read through ``idx[t]``).

The general map must take the same pairs with the same multipliers, step
for step and bit for bit, and all three end at the twin's objective
(computed here from the kernel matrix).
"""

import numpy as np
import pytest
from sklearn.datasets import make_regression
from sklearn.metrics.pairwise import rbf_kernel

from svmlab.kernels import Kernel
from svmlab.reference import dual as ref
from svmlab.smo import DualRun
from svmlab.smo._core import IS_SHRINK_COUNTER


def _steps(kernel, prob, idx):
    run = DualRun(kernel, prob.y, prob.p, prob.U, idx=idx, nu=prob.nu, alpha0=prob.a0,
                  tol=1e-3, shrinking=True, cache_size=50.0, cache_dtype="float64")
    run.state.shrink_every = 40  # shrink often (LIBSVM: min(l, 1000))
    run.state.ist[IS_SHRINK_COUNTER] = 40
    recs = []
    while True:
        r = run.step()
        if r is None:
            break
        recs.append((r.i1, r.i2, r.a1_new, r.a2_new, r.n_active))
    return run, recs


@pytest.mark.parametrize("form", ["epsilon_svr", "nu_svr"])
def test_svr_layout_steps_equal_identity_and_general_map(form):
    X, z = make_regression(160, 5, noise=10.0, random_state=4)
    X = (X - X.mean(0)) / X.std(0)
    z = (z - z.mean()) / z.std()
    n = len(z)
    gamma = 0.4
    K = rbf_kernel(X, gamma=gamma)
    prob = (ref.epsilon_svr(K, z, 0.5, 0.1) if form == "epsilon_svr"
            else ref.nu_svr(K, z, 3.0, 0.3))
    assert np.array_equal(prob.idx, np.r_[np.arange(n), np.arange(n)])

    run_a, a = _steps(Kernel(X, "rbf", gamma=gamma), prob, prob.idx)
    X2 = np.vstack([X, X])
    run_b, b = _steps(Kernel(X2, "rbf", gamma=gamma), prob, None)
    X3 = np.vstack([X2, X[:1] + 1.0])
    run_c, c = _steps(Kernel(X3, "rbf", gamma=gamma), prob, np.arange(2 * n))

    assert run_a.converged and run_b.converged and run_c.converged
    assert len(a) > 100
    assert min(r[4] for r in a) < 2 * n  # shrinking happened
    # the general map reconstructs the gradient as the SVR layout does: the
    # same arithmetic, so the same numbers bit for bit
    assert a == c
    # the identity layout reconstructs it row-wise (another summation order,
    # so a near tie may go the other way late in the run): the same pairs
    # and multipliers equal to rounding over the first 600 steps (shrunk
    # from step 40 on)
    k = 600
    assert [r[:2] + r[4:] for r in a[:k]] == [r[:2] + r[4:] for r in b[:k]]
    np.testing.assert_allclose([r[2:4] for r in a[:k]], [r[2:4] for r in b[:k]], rtol=0,
                               atol=1e-9)
    # the objective (computed here, float64) against LIBSVM's dual optimum
    # reached by the twin without shrinking
    twin = ref.solve(prob, tol=1e-3, kdiag=np.ones(n))
    Q = np.outer(prob.y, prob.y) * K[np.ix_(prob.idx, prob.idx)]

    def f(al):
        return 0.5 * al @ Q @ al + prob.p @ al

    for run in (run_a, run_b, run_c):
        assert f(run.result()["alpha"]) == pytest.approx(f(twin.alpha), rel=1e-4)
