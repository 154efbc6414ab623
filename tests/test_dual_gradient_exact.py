"""The compiled generalised dual keeps an exact gradient through shrunk and
unshrunk steps (decision 31s01: the gradient update's loops are written
separately for the unshrunk and the shrunk active set, so both are checked).

Every few steps of a run with shrinking checked often, ``f0_t = sum_s a_s y_s
K(x_idx(s), x_idx(t))`` of every variable (the active ones as the loop keeps
them, the shrunk ones reconstructed) is compared with the same sum computed
here from the kernel matrix and the multipliers; at the end the maximal
violation computed here is within the tolerance, and the objective computed
here is the run's.
"""

import numpy as np
import pytest

from svmlab.kernels import Kernel
from svmlab.reference import dual as ref
from svmlab.smo import DualRun
from svmlab.smo._core import ACTIVE, IS_SHRINK_COUNTER

from test_dual import FORMS, _data, _problem


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("shrinking", [True, False])
@pytest.mark.parametrize("seed", [0, 2])
def test_gradient_exact_through_shrinking(form, shrinking, seed):
    X, y, z = _data(150, seed=seed)
    kernel = Kernel(X, "rbf", gamma=0.4)
    n = len(y)
    K = np.vstack([kernel.row(i) for i in range(n)])  # the rows the loop reads
    prob = _problem(form, K, y, z)
    run = DualRun(kernel, prob.y, prob.p, prob.U, idx=prob.idx, nu=prob.nu, alpha0=prob.a0,
                  tol=1e-5, shrinking=shrinking, cache_size=50.0, cache_dtype="float64")
    st = run.state
    st.shrink_every = 15
    st.ist[IS_SHRINK_COUNTER] = 15
    Kx = K[np.ix_(prob.idx, prob.idx)]
    ys = np.asarray(prob.y, float)
    min_active = len(ys)
    chunks = 0
    while not st.done and chunks < 2000:
        st.advance(7, False)
        chunks += 1
        min_active = min(min_active, int(np.sum(st.active == ACTIVE)))
        f0 = Kx @ (st.alpha * ys)
        np.testing.assert_allclose(st.gradient_f0(), f0, rtol=0,
                                   atol=1e-9 * max(1.0, np.max(np.abs(f0))))
    assert st.done == 1
    if shrinking:
        assert min_active < len(ys)  # the shrunk loops ran
    a = st.alpha
    U = np.asarray(prob.U, float)
    grad = ys * (Kx @ (a * ys)) + np.asarray(prob.p, float)
    v = -ys * grad
    up = np.where(ys > 0, a < U, a > 0)
    low = np.where(ys > 0, a > 0, a < U)
    classes = [ys > 0, ys < 0] if prob.nu else [np.ones(len(ys), bool)]
    for c in classes:
        if (up & c).any() and (low & c).any():
            assert np.max(v[up & c]) - np.min(v[low & c]) <= 1e-5 + 1e-12
    obj = 0.5 * a @ (ys * (Kx @ (a * ys))) + np.asarray(prob.p, float) @ a
    assert run.result()["objective"] == pytest.approx(obj, rel=1e-9, abs=1e-9)
    assert obj == pytest.approx(ref.objective(prob, a), rel=1e-9, abs=1e-9)
