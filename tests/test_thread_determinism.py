"""Issue 24, item 6: a fit takes the same steps in any thread.

Every decomposition-family estimator and both cutting-plane methods (and
the ordinal regressor), on dense, CSR and binary input, fitted in the main
thread and in a ``ThreadPoolExecutor`` worker: the multipliers (or w) and
the step counts must be identical, bit for bit.

The cause found: OpenBLAS (0.3.30) ignores ``openblas_set_num_threads``
called outside the main thread, so the one-BLAS-thread limit of the IRWLS
and decomposition solvers (``SolverRun.blas_threads = 1``) silently did not
hold in a worker, and their LAPACK factorisations and BLAS products of
blocks of a few hundred rows ran on two threads, in another summation
order (IRWLS on a9a[:3000] took 2072 instead of 2083 iterations).
``svmlab._stepping`` now sets the limit with OpenBLAS's thread-local
setter there.  The problems are large enough (working sets of 400) for
OpenBLAS to split its work between threads when it is not limited.
"""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification

import svmlab


def _data(kind):
    X, y = make_classification(900, 20, n_informative=10, flip_y=0.1, random_state=0)
    if kind == "csr":
        X = sp.csr_matrix(np.where(np.abs(X) > 0.7, X, 0.0))
    elif kind == "binary":
        X = sp.csr_matrix((X > 0.3).astype(np.float64))
    return X, y


ESTIMATORS = {
    "irwls": lambda: svmlab.IRWLSClassifier(C=10.0, gamma=0.05, working_set_size=400,
                                            random_state=0),
    "decomposition-qp": lambda: svmlab.DecompositionClassifier(C=10.0, gamma=0.05,
                                                               working_set_size=40),
    "decomposition-irwls": lambda: svmlab.DecompositionClassifier(
        C=10.0, gamma=0.05, engine="irwls", working_set_size=400),
    "decomposition-smo-blocked": lambda: svmlab.DecompositionClassifier(
        C=10.0, gamma=0.05, engine="smo", working_set_size=400),
    "decomposition-smo-pairs": lambda: svmlab.DecompositionClassifier(
        C=10.0, gamma=0.05, engine="smo", working_set_size=2),
    "chunking": lambda: svmlab.ChunkingClassifier(C=10.0, gamma=0.05, working_set_size=200),
    "cutting-plane": lambda: svmlab.CuttingPlaneClassifier(C=100.0, epsilon=1e-4),
    "ocas": lambda: svmlab.CuttingPlaneClassifier(C=100.0, epsilon=1e-4, method="ocas"),
    "ordinal": lambda: svmlab.CuttingPlaneOrdinalRegressor(C=100.0, epsilon=1e-4),
}


def _fit(make, X, y):
    m = make().set_params(progress=False).fit(X, y)
    coef = m.alpha_ if hasattr(m, "alpha_") else m.coef_
    return int(np.sum(m.n_iter_)), np.asarray(coef).copy(), np.asarray(
        getattr(m, "intercept_", 0.0)).copy()


@pytest.mark.parametrize("kind", ["dense", "csr", "binary"])
@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_same_result_in_a_worker_thread(name, kind):
    X, y = _data(kind)
    make = ESTIMATORS[name]
    main = _fit(make, X, y)
    with ThreadPoolExecutor(1) as ex:
        worker = ex.submit(_fit, make, X, y).result()
    assert worker[0] == main[0], f"{name} on {kind}: {worker[0]} steps in a worker, {main[0]} in main"
    np.testing.assert_array_equal(worker[1], main[1])
    np.testing.assert_array_equal(worker[2], main[2])


def test_the_blas_limit_holds_in_a_worker_thread():
    """The mechanism itself: inside ``blas_thread_limit(1)`` a worker thread
    sees one OpenBLAS thread, and the count it had comes back on exit.
    (The main thread first enters and leaves a limit, as a fit there does:
    after that OpenBLAS ignored the process-wide setter called from a
    worker.)"""
    from svmlab._stepping import _blas_libraries, blas_thread_limit

    libs = [lc for lc in _blas_libraries() if lc.internal_api == "openblas"]
    if not libs or max(lc.get_num_threads() for lc in libs) < 2:
        pytest.skip("needs OpenBLAS with two or more threads")
    with blas_thread_limit(1):
        pass

    def probe():
        before = [lc.get_num_threads() for lc in libs]
        with blas_thread_limit(1):
            inside = [lc.get_num_threads() for lc in libs]
        return before, inside, [lc.get_num_threads() for lc in libs]

    with ThreadPoolExecutor(1) as ex:
        before, inside, after = ex.submit(probe).result()
    assert inside == [1] * len(libs)
    assert after == before
