"""The shrunk dual loop's copies of the active variables (decision 34f01).

While shrunk, ``svmlab.smo._dual_core.dual_run`` reads ``y``, ``v``, ``U``,
the kernel diagonal, ``alpha`` and ``G`` of the active variables from
position-by-position copies, and holds the active variables' ``G`` only in
its copy until it writes it back (before a shrink or an unshrink, and when
the call returns).  The readable twin has no shrinking, so this is checked
here with frequent shrinking, in the five forms and in a general map:

* a run advanced in chunks of uneven sizes must be, at every chunk's end,
  bit for bit the run advanced one step per call (each call builds the
  copies and writes ``G`` back): a copy left stale across a shrink, or
  ``G`` not written back on return, changes the state;
* at every chunk's end ``G`` of the active variables is the decision value
  computed here from the kernel matrix and ``alpha``;
* the run ends at the twin's objective (no shrinking there).

The copies are taken only from ``DualState.copy_min`` active variables on
(the size gate, decision 35d01); below it the loops read the full arrays
through the active list.  Each check runs with the copies always taken,
never taken, and with a gate the active set crosses during the run; and
the three must give the same iterates bit for bit (the same sums in the
same order).
"""

import numpy as np
import pytest

from svmlab.kernels import Kernel
from svmlab.reference import dual as ref
from svmlab.smo._core import ACTIVE, IS_ITER, IS_N_ACTIVE, IS_SHRINK_COUNTER
from svmlab.smo._dual import DualState

from test_dual import FORMS, _data, _problem

CASES = [(f, False) for f in FORMS] + [("epsilon_svr", True), ("nu_svr", True)]
#: the copies' size gate: always taken, never, or from 50 active variables
#: on (each case's shrunk active set is on both sides of 50 during its run)
GATES = ["always", "never", "crossed"]
CROSSED = 50


def _state(kernel, prob, idx, gate):
    d = DualState(kernel, prob.y, prob.p, prob.U, idx=idx, nu=prob.nu, alpha0=prob.a0,
                  tol=1e-4, shrinking=True, cache_size=50.0, cache_dtype="float64")
    d.shrink_every = 15  # shrink often (LIBSVM: min(l, 1000))
    d.ist[IS_SHRINK_COUNTER] = 15
    d.copy_min = {"always": 0, "never": 10**9, "crossed": CROSSED}[gate]
    return d


def _setup(form, general_map):
    X, y, z = _data(80, seed=3)
    base = Kernel(X, "rbf", gamma=0.5)
    n = len(y)
    K = np.vstack([base.row(i) for i in range(n)])
    prob = _problem(form, K, y, z)
    kernel, idx = base, prob.idx
    if general_map:
        # the points stacked twice plus one unused point, idx = 0..2n-1: a
        # map that is not the SVR layout (rows read through idx[t])
        kernel = Kernel(np.vstack([X, X, X[:1] + 1.0]), "rbf", gamma=0.5)
        idx = np.arange(2 * n)
    return base, K, prob, kernel, idx


def _snapshot(d):
    return d.alpha.copy(), d.G.copy(), d.Gbar.copy(), d.ist.copy(), d.active.copy()


@pytest.mark.parametrize("gate", GATES)
@pytest.mark.parametrize("form,general_map", CASES)
def test_chunked_shrunk_runs_equal_single_steps_and_the_exact_gradient(form, general_map, gate):
    base, K, prob, kernel, idx = _setup(form, general_map)
    one = _state(kernel, prob, idx, gate)
    chunked = _state(kernel, prob, idx, gate)
    Kv = K[np.ix_(prob.idx, prob.idx)]
    sizes = [1, 13, 2, 97, 7, 31]
    shrunk_ends = 0
    k = 0
    while not chunked.done:
        kmax = sizes[k % len(sizes)]
        k += 1
        took = chunked.advance(kmax, False)
        for _ in range(took):
            assert one.advance(1, False) == 1
        if chunked.done and not one.done:
            # the chunk's last call stopped without a step: so does one call
            assert one.advance(1, False) == 0
        for a, b in zip(_snapshot(chunked), _snapshot(one)):
            np.testing.assert_array_equal(a, b)
        act = chunked.active == ACTIVE
        if chunked.ist[IS_N_ACTIVE] < len(act):
            shrunk_ends += 1
        f0 = Kv @ (chunked.alpha * prob.y)
        np.testing.assert_allclose(chunked.G[act], f0[act], rtol=0, atol=1e-9)
    assert chunked.done == 1
    assert chunked.ist[IS_ITER] > 100
    assert shrunk_ends >= 3  # chunks ended while shrunk
    twin = ref.solve(prob, tol=1e-4, kdiag=base.diag())
    f_twin = ref.objective(prob, twin.alpha)
    f_run = ref.objective(prob, chunked.alpha)
    assert abs(f_run - f_twin) <= 1e-6 * max(1.0, abs(f_twin))


@pytest.mark.parametrize("form,general_map", CASES)
def test_both_sides_of_the_size_gate_take_the_same_steps(form, general_map):
    """Copies or full arrays, and a gate crossed during the run: the same
    state bit for bit after every chunk (and the runs shrink: the gate has
    something to decide)."""
    _, _, prob, kernel, idx = _setup(form, general_map)
    runs = [_state(kernel, prob, idx, g) for g in GATES]
    below = above = 0
    while not runs[0].done:
        took = [r.advance(7, False) for r in runs]
        assert took[1:] == took[:-1]
        na = runs[0].ist[IS_N_ACTIVE]
        below += int(na < CROSSED)
        above += int(CROSSED <= na < len(prob.y))
        for r in runs[1:]:
            assert r.done == runs[0].done
            for a, b in zip(_snapshot(r), _snapshot(runs[0])):
                np.testing.assert_array_equal(a, b)
    assert runs[0].done == 1
    assert below >= 1 and above >= 1  # the gate was crossed
