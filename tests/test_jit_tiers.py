"""The two tiers of one code (svmlab._jit): interpreted calls give the compiled
results bit for bit, twins equal their kernels, and the background process
turns a cold start into a compiled one without a compilation in the caller.

Why this matters: in a fresh environment a small fit runs interpreted while
the compiled code is being built; a user must get the same model from the
first fit as from every later one.

"Compiled" in the in-process tests is the compiled code this process gets:
numba's cache, a compilation, or, after an editable install, the checkout's
shipped x86-64-v3 code (svmlab._shipped), the code users of that install
run; the subprocess test switches the shipped code off (SVMLAB_SHIPPED=0).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import svmlab
from svmlab import _jit


@pytest.fixture
def mode():
    """Set the tier policy for one test and restore it."""
    old = _jit.get_mode()
    yield _jit.set_mode
    _jit.set_mode(old)


def _data(kind, n=120, classes=2, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, 6)
    if classes == 2:
        y = np.where(X[:, 0] + X[:, 1] ** 2 - 1 + 0.3 * rng.randn(n) > 0, 1, -1)
    else:
        y = np.digitize(X[:, 0] + 0.3 * rng.randn(n), [-0.5, 0.5])
    if kind == "csr":
        X = sp.csr_matrix(np.where(np.abs(X) > 0.5, X, 0.0))
    elif kind == "binary":
        X = sp.csr_matrix((X > 0.2).astype(np.float64))
    return X, y


def _fitted(est):
    out = {}
    for name in ("alpha_", "coef_", "intercept_", "n_iter_", "dual_coef_", "support_", "w_"):
        v = getattr(est, name, None)
        if v is not None:
            try:
                out[name] = np.asarray(v)
            except ValueError:  # per-class arrays of different lengths
                out[name] = np.concatenate([np.ravel(u) for u in v])
    return out


ESTIMATORS = [
    ("smo-platt", lambda: svmlab.SMOClassifier(random_state=0, progress=False)),
    ("smo-wss2", lambda: svmlab.SMOClassifier(selection="wss2", progress=False)),
    ("smo-linear", lambda: svmlab.SMOClassifier(kernel="linear", C=0.5, random_state=0,
                                                progress=False)),
    ("irwls", lambda: svmlab.IRWLSClassifier(random_state=0, progress=False)),
    ("chunking", lambda: svmlab.ChunkingClassifier(progress=False)),
    ("decomposition-qp", lambda: svmlab.DecompositionClassifier(engine="qp", progress=False)),
    ("decomposition-smo", lambda: svmlab.DecompositionClassifier(engine="smo", progress=False)),
    ("cutting-plane", lambda: svmlab.CuttingPlaneClassifier(C=30.0, progress=False)),
]


@pytest.mark.parametrize("kind", ["dense", "csr", "binary"])
@pytest.mark.parametrize("name,make", ESTIMATORS, ids=[e[0] for e in ESTIMATORS])
def test_interpreted_fit_equals_compiled_fit(mode, name, make, kind):
    """Every estimator, on dense, CSR and bit-packed binary input: the fit run
    interpreted and the fit run compiled are the same, bit for bit."""
    X, y = _data(kind)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mode("interpret")
        a = make().fit(X, y)
        mode("eager")
        b = make().fit(X, y)
    fa, fb = _fitted(a), _fitted(b)
    assert fa.keys() == fb.keys() and fa
    for k in fa:
        np.testing.assert_array_equal(fa[k], fb[k], err_msg=f"{name} {kind}: {k}")
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))


def test_interpreted_multiclass_and_ordinal_equal_compiled(mode):
    X, y = _data("dense", n=90, classes=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = {}
        for m in ("interpret", "eager"):
            mode(m)
            res[m] = (svmlab.SMOClassifier(selection="wss2", progress=False).fit(X, y),
                      svmlab.CuttingPlaneOrdinalRegressor(C=10.0, progress=False).fit(X, y))
    (a1, a2), (b1, b2) = res["interpret"], res["eager"]
    np.testing.assert_array_equal(a1.dual_coef_, b1.dual_coef_)
    np.testing.assert_array_equal(a1.intercept_, b1.intercept_)
    np.testing.assert_array_equal(a2.coef_, b2.coef_)


def test_interpreted_steps_equal_compiled_steps(mode):
    """The stepped path (what the explorers draw) records the same steps."""
    X, y = _data("dense", n=60)

    def records(m):
        mode(m)
        run = svmlab.SMOClassifier(random_state=0, progress=False).start(X, y)
        out = []
        while not run.finished and len(out) < 200:
            out.append(run.step())
        return out

    ra, rb = records("interpret"), records("eager")
    assert len(ra) == len(rb) > 10
    assert ra == rb


# ----------------------------------------------------------------------------
# Twins

def test_rbf_exp_row64_twin_equals_kernel(mode):
    from svmlab.kernels import _rows

    rng = np.random.RandomState(3)
    twin = _jit.interpreted(_rows.rbf_exp_row64)
    assert twin is _rows._rbf_exp_row64_twin
    for p in (1, 7, 64, 513):
        o = rng.randn(p) * rng.choice([1e-3, 1.0, 30.0, 400.0])
        sq = np.abs(rng.randn(p)) * 50
        o[: p // 3] = sq[: p // 3] / 2 - rng.rand(p // 3) * 1e-12  # d2 near 0 and negative
        for gamma in (1e-4, 0.5, 3.0, 1e3):
            sa = float(abs(rng.randn()) * 40)
            a, b = o.copy(), o.copy()
            ka, kb = np.zeros(p + 3, np.int64), np.zeros(p + 3, np.int64)
            _rows.rbf_exp_row64(a, sa, sq, gamma, ka)
            twin(b, sa, sq, gamma, kb)
            np.testing.assert_array_equal(a, b)


def test_popcount_and_extremes_twins_equal_kernels():
    from svmlab.kernels import _bits
    from svmlab.smo import _simd

    pc = _jit.interpreted(_bits.popcount)
    rng = np.random.RandomState(4)
    vals = [0, 1, 2**63 - 1, 2**64 - 1, 2**32 + 5] + list(rng.randint(0, 2**62, 50))
    compiled = _jit.njit(cache=False)(lambda x: _bits.popcount(x))
    for v in vals:
        assert pc(np.uint64(v)) == compiled(np.uint64(v)) == bin(int(v)).count("1")
    ex = _jit.interpreted(_simd.extremes)
    for m in (0, 1, 5, 8, 17, 64):
        FL = rng.randn(m + 3)
        BL = np.where(rng.rand(m + 3) < 0.3, np.inf, 0.0)
        FL[: m // 4] = 0.5  # ties
        assert ex(FL, BL, m) == _simd.extremes(FL, BL, m)


def test_faithful_dot_equals_numbas_dot():
    """np.dot in an interpreted kernel is numba's BLAS call (svmlab._twins.dot):
    every shape and layout case of numba's implementation, including the
    (1, k) and (k, 1) operands that numba hands to ddot/gemv."""
    from svmlab._twins import dot, gemm_nt

    @_jit.njit(cache=False)
    def nb(a, b):
        return np.dot(a, b)

    @_jit.njit(cache=False)
    def nb_nt(a, b, out):
        np.dot(a, b.T, out)

    rng = np.random.RandomState(5)
    for _ in range(60):
        m, k, n = rng.randint(1, 90, size=3)
        if rng.rand() < 0.3:
            m = 1
        if rng.rand() < 0.3:
            n = 1
        A, B = rng.randn(m, k), rng.randn(k, n)
        x, y = rng.randn(k), rng.randn(m)
        for a, b in [(A, x), (np.asfortranarray(A), x), (y, A), (y, np.asfortranarray(A)),
                     (A, B), (np.asfortranarray(A), B), (A, np.asfortranarray(B)), (x, x)]:
            np.testing.assert_array_equal(dot(a, b), nb(a, b))
        Bt = rng.randn(n, k)
        o1, o2 = np.empty((m, n)), np.empty((m, n))
        nb_nt(A, Bt, o1)
        gemm_nt(A, Bt, o2)
        np.testing.assert_array_equal(o1, o2)


# ----------------------------------------------------------------------------
# Policy

def test_is_small_rules():
    assert _jit.is_small((np.zeros((100, 100)), 3, (np.zeros(5), np.zeros((0, 0), np.float32))))
    assert not _jit.is_small((np.zeros(10, np.float32),))
    assert not _jit.is_small((np.zeros((_jit.SMALL_ROWS + 1, 2)),))
    assert not _jit.is_small(((np.zeros((3, _jit.SMALL_ROWS + 1)),),))  # wide rows
    # issue 29: a fit is judged by its examples, not by the kernel-row cache
    # it preallocates (40 MB by default: 1500 x 1500 values for 1500 rows)
    assert _jit.is_small((np.zeros((1500, 10)), np.zeros((1500, 1500)), np.zeros(1500)))
    with pytest.raises(ValueError, match="mode must be one of"):
        _jit.set_mode("fast")


def test_kernels_that_cannot_run_interpreted_say_so():
    @_jit.njit(cache=False, fastmath=True)
    def dot(a):
        s = 0.0
        for v in a:
            s += v
        return s

    assert not _jit.can_interpret(dot)
    with pytest.raises(TypeError, match="no interpreted tier"):
        _jit.interpreted(dot)


_COLD_SCRIPT = textwrap.dedent("""
    import json, sys, numpy as np
    from numba.core import event
    from svmlab import _jit
    import tierkernels as tk

    compiled_here = []
    class L(event.Listener):
        def on_start(self, e): compiled_here.append(e.data["dispatcher"].py_func.__name__)
        def on_end(self, e): pass
    event.register("numba:compile", L())
    x = np.arange(50.0)
    first = tk.outer_sum(x, 3)              # cold: interpreted, sent to the worker
    overloads_after_first = len(tk.outer_sum.overloads)
    _jit.wait_background(timeout=300)
    second = tk.outer_sum(x, 3)             # loaded from numba's cache
    print(json.dumps(dict(first=first, second=second, compiled_here=compiled_here,
                          overloads_after_first=overloads_after_first,
                          overloads_after_second=len(tk.outer_sum.overloads),
                          hits=sum(tk.outer_sum.stats.cache_hits.values()))))
""")

_KERNELS = textwrap.dedent("""
    from svmlab._jit import njit

    @njit(cache=True)
    def _pair(a, b):
        return a * b + 1.0

    @njit(cache=True)
    def outer_sum(x, k):
        s = 0.0
        for i in range(x.shape[0]):
            for j in range(k):
                s += _pair(x[i], j)
        return s
""")


def test_cold_start_runs_interpreted_then_loads_what_the_worker_compiled(tmp_path):
    """In a fresh process with an empty numba cache (mode auto): the first
    call runs interpreted and compiles nothing in the caller; the background
    process compiles into the cache; the next call loads it; same result."""
    import json

    (tmp_path / "tierkernels.py").write_text(_KERNELS)
    (tmp_path / "cold.py").write_text(_COLD_SCRIPT)
    # SVMLAB_SHIPPED=0: the checkout's machine code (svmlab._shipped) is not
    # what this checks; the tiers are
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), SVMLAB_JIT="auto",
               SVMLAB_SHIPPED="0",
               PYTHONPATH=os.pathsep.join([str(tmp_path), os.path.dirname(os.path.dirname(
                   svmlab.__file__))]))
    out = subprocess.run([sys.executable, str(tmp_path / "cold.py")], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert r["first"] == r["second"] == sum(x * j + 1.0 for x in range(50) for j in range(3))
    assert r["compiled_here"] == []  # nothing compiled in the caller
    assert r["overloads_after_first"] == 0 and r["overloads_after_second"] == 1
    assert r["hits"] == 1
