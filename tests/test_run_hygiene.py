"""Run-loop hygiene of issue 14: the BLAS thread limit as an attribute of
SolverRun, the int32 limit of to_csr32, the scikit-learn keyword used
directly, and random_pair_smo's new home (svmlab.reference.random_pairs)."""

import ast
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from threadpoolctl import threadpool_info, threadpool_limits

import svmlab._validation as validation
import svmlab.kernels._csr as csr_home  # where the int32 limit is read
from svmlab import DecompositionClassifier, IRWLSClassifier
from svmlab._stepping import SolverRun, blas_thread_limit
from svmlab.decomposition.estimators import DecompositionRun
from svmlab.decomposition.irwls import IRWLSRun

from reference import gram

SVMLAB = Path(__file__).resolve().parents[1] / "svmlab"


def _blas_threads_now():
    """Threads of every loaded BLAS, as threadpoolctl reports them."""
    return [d["num_threads"] for d in threadpool_info() if d["user_api"] == "blas"]


class _ProbeRun(SolverRun):
    """A three-step run that notes the BLAS threads inside each step."""

    def __init__(self, blas_threads):
        super().__init__(estimator=None, max_iter=-1)
        self.blas_threads = blas_threads
        self.seen = []

    def _step(self):
        if len(self.seen) == 3:
            self.converged = True
            return None
        self.seen.append(_blas_threads_now())
        return len(self.seen)

    def result(self):
        return {}


@pytest.fixture
def two_blas_threads():
    """BLAS at two threads around the test, so that a limit to one shows."""
    if not _blas_threads_now():
        pytest.skip("no BLAS visible to threadpoolctl")
    with threadpool_limits(2, user_api="blas"):
        if 2 not in _blas_threads_now():
            pytest.skip("this BLAS cannot run two threads")
        yield


def test_blas_threads_attribute_applies_in_step_and_run(two_blas_threads):
    outside = _blas_threads_now()
    assert 2 in outside
    stepped = _ProbeRun(1)
    while stepped.step() is not None:
        pass
    assert stepped.seen == [[1] * len(outside)] * 3
    fast = _ProbeRun(1)
    fast.run(chunk=2)
    assert fast.converged and fast.seen == [[1] * len(outside)] * 3
    free = _ProbeRun(None)
    free.run()
    assert free.seen == [outside] * 3
    # the limit ends with the step
    assert _blas_threads_now() == outside


def test_irwls_and_decomposition_runs_ask_for_one_blas_thread():
    assert SolverRun.blas_threads is None
    assert IRWLSRun.blas_threads == 1
    assert DecompositionRun.blas_threads == 1


@pytest.mark.parametrize("run_cls,est", [(IRWLSRun, IRWLSClassifier),
                                         (DecompositionRun, DecompositionClassifier)])
@pytest.mark.parametrize("path", ["stepped", "fast"])
def test_solver_steps_run_single_threaded(monkeypatch, two_blas_threads, run_cls, est, path):
    """Inside an IRWLS or decomposition step the BLAS reports one thread,
    on the stepped path (callback) and on the fast path alike."""
    seen = []
    orig = run_cls._step_impl

    def probe(self, make_record):
        seen.append(_blas_threads_now())
        return orig(self, make_record)

    monkeypatch.setattr(run_cls, "_step_impl", probe)
    X = np.random.default_rng(0).normal(size=(40, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    clf = est(kernel="linear", max_iter=-1)
    if path == "stepped":
        clf.fit(X, y, callback=lambda r: True)
    else:
        clf.fit(X, y)
    assert seen and all(s == [1] * len(s) for s in seen)


def test_blas_thread_limit_rejects_bad_values():
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="blas_threads"):
            blas_thread_limit(bad)


def test_no_single_threaded_blas_wrapper_left():
    """The limit lives in SolverRun only: no solver wraps _step/_advance."""
    for path in SVMLAB.rglob("*.py"):
        assert "single_threaded_blas" not in path.read_text(encoding="utf-8"), path


def test_finite_kw_shim_removed():
    tree = ast.parse((SVMLAB / "_validation.py").read_text(encoding="utf-8"))
    names = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    assert "_finite_kw" not in names
    # the current keyword works and refuses NaN
    with pytest.raises(ValueError, match="NaN"):
        validation.check_data(np.array([[np.nan, 1.0]]))


# --------------------------------------------------------------------------
# to_csr32 and the int32 limit
# --------------------------------------------------------------------------
def test_to_csr32_refuses_more_stored_values_than_int32(monkeypatch):
    X = sp.random(20, 10, density=0.5, format="csr", random_state=0)
    nnz = X.nnz
    monkeypatch.setattr(csr_home, "MAX_CSR32_NNZ", nnz - 1)
    with pytest.raises(ValueError, match=f"{nnz:,} stored values"):
        validation.to_csr32(X)
    # a COO input with duplicates counts its stored values (before summing)
    coo = sp.coo_matrix((np.ones(nnz), (np.zeros(nnz, int), np.zeros(nnz, int))),
                        shape=(2, 2))
    with pytest.raises(ValueError, match="2\\*\\*31 - 1"):
        validation.to_csr32(coo)
    # dense input: the non-zeros of the converted matrix
    with pytest.raises(ValueError, match=f"{nnz:,} stored values"):
        validation.to_csr32(X.toarray())
    # at the limit it is accepted, and the result is canonical int32 CSR
    monkeypatch.setattr(csr_home, "MAX_CSR32_NNZ", nnz)
    Y = validation.to_csr32(X)
    assert Y.indices.dtype == np.int32 and Y.indptr.dtype == np.int32
    np.testing.assert_array_equal(Y.toarray(), X.toarray())


def test_estimators_report_the_int32_limit(monkeypatch):
    """The refusal reaches the user through fit, before any solver work."""
    X = sp.random(30, 4, density=0.6, format="csr", random_state=1)
    y = np.arange(30) % 2
    monkeypatch.setattr(csr_home, "MAX_CSR32_NNZ", 5)
    with pytest.raises(ValueError, match="stored values"):
        IRWLSClassifier().fit(X, y)


# --------------------------------------------------------------------------
# random_pair_smo: now a readable reference, re-exported by the viz module
# --------------------------------------------------------------------------
def test_random_pair_smo_moved_and_reexported():
    import svmlab.reference as reference
    from svmlab.reference import random_pairs
    from svmlab.viz import smo as vsmo

    assert "random_pairs" in reference.__all__
    assert reference.random_pairs is random_pairs
    assert vsmo.random_pair_smo is random_pairs.random_pair_smo
    assert vsmo.PairRecord is random_pairs.PairRecord
    assert random_pairs.__doc__ and "random" in random_pairs.__doc__


def test_random_pair_smo_steps_are_feasible_and_replayable():
    """Every record is a feasible step, its errors are those of the state
    rebuilt here from the previous records, and the run ends KKT-optimal."""
    from svmlab.reference.random_pairs import random_pair_smo

    rng = np.random.default_rng(4)
    X = rng.normal(size=(30, 2))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=30) > 0, 1.0, -1.0)
    K = gram(X, "rbf", gamma=0.5)
    C = 1.0
    recs, alpha, b, tries = random_pair_smo(K, y, C, tol=1e-3, random_state=1)
    assert recs and tries >= len(recs)
    a = np.zeros(30)
    bb = 0.0
    for r in recs:
        E = K @ (a * y) + bb - y
        assert r.E1 == pytest.approx(E[r.i1], abs=1e-9)
        assert r.E2 == pytest.approx(E[r.i2], abs=1e-9)
        assert r.a1_old == a[r.i1] and r.a2_old == a[r.i2] and r.b_old == bb
        a[r.i1], a[r.i2], bb = r.a1_new, r.a2_new, r.b_new
        assert 0 <= a.min() and a.max() <= C
        assert abs(a @ y) < 1e-9
    np.testing.assert_array_equal(a, alpha)
    assert bb == b
    r = y * (K @ (alpha * y) + b - y)
    assert not np.any(((r < -1e-3) & (alpha < C)) | ((r > 1e-3) & (alpha > 0)))
    with pytest.raises(ValueError, match="shape"):
        random_pair_smo(K[:5], y, C)
