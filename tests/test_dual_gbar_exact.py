"""The compiled generalised dual keeps LIBSVM's ``G_bar`` exact through bound
changes, shrunk and unshrunk (decision 32s01: the mapped problems' ``G_bar``
update is written out in the loop's body, one pass for ``i`` then ``j``).

Every few steps of a run with shrinking checked often, the run's ``Gbar``
(:meth:`svmlab.smo.DualRun.result`: the applied sum plus the changes noted
while shrunk) is compared with ``y_t sum_{a_s = U_s} U_s y_s K(x_idx(s),
x_idx(t))`` computed here from the kernel matrix and the multipliers.  The
SVR forms run in their own layout and in a general map (the points stacked
twice plus one extra point, variables on the first 2n), which take
different loops.
"""

import numpy as np
import pytest

from svmlab.kernels import Kernel
from svmlab.smo import DualRun
from svmlab.smo._core import ACTIVE, IS_SHRINK_COUNTER

from test_dual import FORMS, _data, _problem


@pytest.mark.parametrize("form", FORMS + ("epsilon_svr_general", "nu_svr_general"))
@pytest.mark.parametrize("seed", [0, 1])
def test_gbar_exact_through_bound_changes(form, seed):
    X, y, z = _data(120, seed=seed)
    general = form.endswith("_general")
    base = form.replace("_general", "")
    n = len(y)
    K1 = np.vstack([Kernel(X, "rbf", gamma=0.4).row(i) for i in range(n)])
    prob = _problem(base, K1, y, z)
    yv = np.asarray(prob.y, float)
    p = np.asarray(prob.p, float)
    U = np.asarray(prob.U, float)
    a0 = None if prob.a0 is None else np.asarray(prob.a0, float)
    if general:
        # the points stacked twice plus one extra point (2n + 1 examples),
        # the 2n variables on examples 0..2n-1: a map that is neither the
        # identity nor the SVR layout
        Xg = np.vstack([X, X, X[:1] + 0.5])
        kernel = Kernel(Xg, "rbf", gamma=0.4)
        idx = np.arange(2 * n)
    else:
        kernel = Kernel(X, "rbf", gamma=0.4)
        idx = prob.idx
    K = np.vstack([kernel.row(i) for i in range(kernel.n_samples)])
    ix = np.arange(len(yv)) if idx is None else np.asarray(idx)
    Kx = K[np.ix_(ix, ix)]
    run = DualRun(kernel, yv, p, U, idx=idx, nu=prob.nu, alpha0=a0, tol=1e-5,
                  shrinking=True, cache_size=50.0, cache_dtype="float64")
    st = run.state
    st.shrink_every = 15
    st.ist[IS_SHRINK_COUNTER] = 15
    min_active = len(yv)
    at_bound_seen = 0
    chunks = 0
    while not st.done and chunks < 3000:
        st.advance(5, False)
        chunks += 1
        min_active = min(min_active, int(np.sum(st.active == ACTIVE)))
        bound = st.alpha >= U
        at_bound_seen = max(at_bound_seen, int(bound.sum()))
        want = yv * (Kx[:, bound] @ (U * yv)[bound])
        np.testing.assert_allclose(run.result()["Gbar"], want, rtol=0,
                                   atol=1e-9 * max(1.0, np.max(np.abs(want))))
    assert st.done == 1
    assert min_active < len(yv)  # the shrunk path (changes noted) ran
    assert at_bound_seen > 0  # and some variable reached its bound
