"""The fast path's adaptive chunk rule, written once
(:func:`svmlab._stepping.next_chunk_size`), and two shortcuts of the small
runs that must give what the long way gives (docs/decisions/29s01).

* The rule: a chunk that lasted more than twice ``CHUNK_SECONDS`` halves,
  one far under it grows by ``chunk_growth`` (when that is above 2), one
  under half of it doubles, never above the cap; the probe step cuts the
  size to what its measured cost allows and never grows it.  Both drivers
  of chunks (``SolverRun.run`` and the parallel pairs' workers) call it:
  a spy that counts the calls fails the test if either copies the rule
  again.
* ``DualState.gradient_f0`` returns ``G`` itself when nothing is shrunk;
  checked against the compiled reconstruction, bit for bit.
"""

import numpy as np
import pytest
from sklearn.datasets import load_digits

from svmlab import _stepping
from svmlab._stepping import next_chunk_size


def test_rule_values(monkeypatch):
    monkeypatch.setattr(_stepping, "CHUNK_SECONDS", 0.25)
    # too long: halve (at least 1)
    assert next_chunk_size(100, 100, 0.6, 20000, 8) == 50
    assert next_chunk_size(1, 1, 0.6, 20000, 8) == 1
    # far under the target: grow by `growth`, capped
    assert next_chunk_size(100, 100, 0.001, 20000, 8) == 800
    assert next_chunk_size(4000, 4000, 0.001, 20000, 8) == 20000
    # growth 2 (Platt's mode and most solvers): only doubling
    assert next_chunk_size(100, 100, 0.001, 20000, 2) == 200
    # under half the target: double, capped
    assert next_chunk_size(100, 100, 0.1, 20000, 8) == 200
    assert next_chunk_size(100, 100, 0.1, 150, 8) == 150
    # about the target: unchanged
    assert next_chunk_size(100, 100, 0.3, 20000, 8) == 100
    # the probe: a step of 0.1 s and a size of 64 -> 0.25 / 0.1 = 2 steps
    assert next_chunk_size(64, 1, 0.1, 20000, 8, probe=True) == 2
    # a cheap probe keeps the size (never grows)
    assert next_chunk_size(64, 1, 1e-6, 20000, 8, probe=True) == 64
    assert next_chunk_size(64, 0, 0.0, 20000, 8, probe=True) == 64


def test_rule_reads_chunk_seconds(monkeypatch):
    monkeypatch.setattr(_stepping, "CHUNK_SECONDS", 0.0)
    # with a zero target nothing is ever "short": every chunk halves
    assert next_chunk_size(100, 100, 1e-9, 20000, 8) == 50


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    idx = np.random.RandomState(0).permutation(len(y))[:300]
    return X[idx] / 16.0, y[idx]


def _spy(monkeypatch):
    calls = []
    real = _stepping.next_chunk_size

    def spy(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(_stepping, "next_chunk_size", spy)
    return calls


def test_both_drivers_use_the_rule(monkeypatch, digits):
    from svmlab.svm import SVC

    X, y = digits
    calls = _spy(monkeypatch)
    SVC(n_jobs=1).fit(X, (y == 3).astype(int))  # one binary run: SolverRun.run
    assert calls, "SolverRun.run did not call _stepping.next_chunk_size"
    m1 = SVC(n_jobs=1).fit(X, y)
    calls.clear()
    # the pairs' own runs in threads (ParallelParts), not the compiled
    # driver in threads (decision 32p01), which takes no chunks
    from svmlab import _multiclass
    monkeypatch.setattr(_multiclass.MulticlassRun, "_parallel_driver_ok", lambda self: False)
    m2 = SVC(n_jobs=2).fit(X, y)
    # the parallel pairs' workers drive every pair in chunks of their own
    # (at least one per pair, 45 pairs); the outer run's one _advance call
    # adds one
    assert len(calls) >= 45, "the pairs' workers did not call _stepping.next_chunk_size"
    np.testing.assert_array_equal(m1.dual_coef_, m2.dual_coef_)
    np.testing.assert_array_equal(m1.intercept_, m2.intercept_)


@pytest.mark.parametrize("shrinking", [True, False])
def test_gradient_without_shrunk_variables_is_g(shrinking):
    from svmlab.kernels import Kernel
    from svmlab.smo import _core as core
    from svmlab.smo._dual import DualRun
    from svmlab.smo._dual_core import dual_gradient

    rng = np.random.default_rng(3)
    X = rng.normal(size=(120, 4))
    z = X[:, 0] - 0.5 * X[:, 1] ** 2 + 0.1 * rng.normal(size=120)
    n = len(z)
    eps = 0.1
    # epsilon-SVR in LIBSVM's form (a mapped problem)
    run = DualRun(Kernel(X, "rbf", 0.5), np.r_[np.ones(n), -np.ones(n)],
                  np.r_[eps - z, eps + z], 2.0, idx=np.r_[np.arange(n), np.arange(n)],
                  tol=1e-4, shrinking=shrinking)
    run.run()
    s = run.state
    assert run.converged
    assert np.all(s.active == core.ACTIVE)
    rows, pb, it = s._state(False)[:3]
    ref = dual_gradient(rows, pb, it, *s.switches[1:])
    got = s.gradient_f0()
    np.testing.assert_array_equal(got, ref)
    assert got is not s.G  # a copy: the caller may not change the state
