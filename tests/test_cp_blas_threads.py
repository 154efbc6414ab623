"""Issue 30's OCAS slowdown (decision 27b01): a multi-threaded OpenBLAS call
on the fit path leaves worker threads spinning for tens of milliseconds,
which take a core from the fit on a busy machine.  The input check
(``check_scale``) must not make one, and the cutting-plane runs keep BLAS on
one thread while they work."""

import time

import numpy as np
import pytest
from threadpoolctl import threadpool_info

from svmlab._validation import check_scale
from svmlab.cutting_plane import CuttingPlaneClassifier


def _blas_threads():
    return max(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas")


def _other_threads_cpu(fn, repeats=20):
    """CPU seconds the process's other threads (OpenBLAS's workers, busy or
    spinning) use while the main thread calls ``fn`` ``repeats`` times with a
    short sleep after each (when a spinning worker would hold a core)."""
    p, t = time.process_time(), time.thread_time()
    for _ in range(repeats):
        fn()
        time.sleep(0.02)
    return (time.process_time() - p) - (time.thread_time() - t)


def test_check_scale_leaves_no_blas_thread_spinning():
    data = np.random.default_rng(0).random(2_000_000)
    # the control: a plain BLAS dot of the same length runs on the workers too
    control = _other_threads_cpu(lambda: np.dot(data, data))
    if _blas_threads() < 2 or control < 0.02:
        pytest.skip(f"BLAS runs this dot on one thread here (BLAS threads {_blas_threads()}, "
                    f"other threads' CPU {control:.3f} s): nothing to compare with")
    ours = _other_threads_cpu(lambda: check_scale(data))
    assert ours < 0.3 * control, (ours, control)
    with pytest.raises(ValueError, match="too large"):
        check_scale(np.array([1e200, 1.0]))


class _Watch:
    """The oracle, recording the BLAS thread count whenever the run calls it."""

    def __init__(self, oracle, seen):
        self._oracle, self._seen = oracle, seen

    def __call__(self, *a, **k):
        self._seen.append(_blas_threads())
        return self._oracle(*a, **k)

    def __getattr__(self, name):
        attr = getattr(self._oracle, name)
        if callable(attr):
            def wrapped(*a, **k):
                self._seen.append(_blas_threads())
                return attr(*a, **k)
            return wrapped
        return attr


@pytest.mark.parametrize("method", ["ocas", "joachims"])
def test_cutting_plane_runs_on_one_blas_thread(method):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((200, 30))
    y = np.where(X[:, 0] + 0.3 * rng.standard_normal(200) > 0, 1, -1)
    seen = []
    est = CuttingPlaneClassifier(C=20.0, epsilon=1e-6, method=method, progress=False)
    run = est.start(X, y)
    run.oracle = _Watch(run.oracle, seen)
    est._fit_run(run, X, y, None)
    assert seen and set(seen) == {1}
    # and the model is as good as LIBLINEAR's (the limit changes no result)
    from sklearn.svm import LinearSVC

    from reference import linear_primal

    ll = LinearSVC(C=0.1, loss="hinge", tol=1e-10, max_iter=10**6).fit(X, y)
    y_pm = np.where(y > 0, 1.0, -1.0)

    def primal(m):   # the bias is LIBLINEAR's feature of value 1: penalised
        b = float(m.intercept_[0])
        return linear_primal(X, y_pm, m.coef_[0], b, 0.1) + 0.5 * b * b

    assert primal(est) == pytest.approx(primal(ll), rel=1e-4)
