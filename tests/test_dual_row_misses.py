"""The dual loop's kernel-row misses (svmlab.smo._dual_core.dual_run does
its own LRU bookkeeping on a miss, ``slot_of_row``, and computes the row into
the slot it got: decision record 33s01).

With a cache of two rows every step evicts, so every row the loop reads
went through that miss path.  Without shrinking every row is a full row
computed by ``kernel_row``, so the loop must take exactly the steps of the
readable twin (svmlab.reference.dual) on the kernel matrix of the same rows:
a wrong slot, a stale ``slot_of`` entry of an evicted row or a row computed
into the wrong place reads another example's kernel values and changes the
pairs.  The five forms cover the identity and the mapped (SVR) rows, the
nu selection's two fetches and the ``Gbar`` updates at a bound change.
"""

import numpy as np
import pytest

from svmlab.kernels import Kernel
from svmlab.kernels.cache import n_slots_for
from svmlab.reference import dual as ref
from svmlab.smo import DualRun

from test_dual import FORMS, _data, _problem, _records

#: a cache size (MB) that holds only two rows of the 70-example set
TINY_MB = 1e-6


def test_the_tiny_cache_holds_two_rows():
    assert n_slots_for(70, TINY_MB) == 2


@pytest.mark.parametrize("form", FORMS)
def test_two_row_cache_takes_the_twins_steps(form):
    X, y, z = _data(70, seed=5)
    kernel = Kernel(X, "rbf", gamma=0.5)
    n = len(y)
    K = np.vstack([kernel.row(i) for i in range(n)])
    prob = _problem(form, K, y, z)
    twin = ref.solve(prob, tol=1e-4, kdiag=kernel.diag())
    run = DualRun(kernel, prob.y, prob.p, prob.U, idx=prob.idx, nu=prob.nu, alpha0=prob.a0,
                  tol=1e-4, shrinking=False, cache_size=TINY_MB, cache_dtype="float64")
    assert run.cache.n_slots == 2
    mine = _records(run)
    assert len(twin.records) > 20
    assert [(r.i1, r.i2) for r in mine] == [(r.i1, r.i2) for r in twin.records]
    assert run.converged == twin.converged
    res = run.result()
    np.testing.assert_allclose(res["alpha"], twin.alpha, rtol=0, atol=1e-10)
    np.testing.assert_allclose(res["G"], twin.G, rtol=0, atol=1e-9)
    # the rows were recomputed: far more misses than examples
    assert run.cache_misses > n
    # and the fast path (no records) takes the same steps
    fast = DualRun(kernel, prob.y, prob.p, prob.U, idx=prob.idx, nu=prob.nu, alpha0=prob.a0,
                   tol=1e-4, shrinking=False, cache_size=TINY_MB, cache_dtype="float64")
    fast.run()
    assert fast.n_iter == len(mine)
    np.testing.assert_array_equal(fast.alpha, res["alpha"])
