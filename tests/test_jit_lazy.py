"""numba on first compiled need (svmlab._jit's LazyKernel and hand-over,
docs/decisions/36g01-lazy-numba.md).

Each case runs in a fresh process (whether numba is imported is a property
of the process), in the default mode ``SVMLAB_JIT=auto`` that the test
configuration overrides.  The contract checked: a process whose svmlab work
stays under the budget never imports numba and gets the models the compiled
tier gives, bit for bit; the hand-over puts numba's dispatchers in place of
the lazy objects (module globals, closures) so that compiled code and calls
from Python see what they saw before; the environments that decide numba's
behaviour (``NUMBA_DISABLE_JIT``, ``SVMLAB_LAZY_NUMBA=0``, mode ``eager``)
import numba at once as before.
"""

import json
import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

FITS = """
import hashlib, json, sys
import numpy as np
import svmlab
from sklearn.datasets import load_iris
rng = np.random.default_rng(0)
X = rng.normal(size=(40, 2)); y = (X[:, 0] + 0.3 * X[:, 1] > 0).astype(int)
iris = load_iris()
def h(*arrays):
    return hashlib.sha1(b"".join(np.ascontiguousarray(a).tobytes() for a in arrays)).hexdigest()
out = {}
m = svmlab.SVC(kernel="linear").fit(X, y)
out["svc"] = h(m.dual_coef_, m.intercept_, m.support_, m.decision_function(X))
m = svmlab.SVC(C=10, gamma=0.5).fit(iris.data, iris.target)
out["iris"] = h(m.dual_coef_, m.intercept_, m.support_, m.decision_function(iris.data))
m = svmlab.SVC(C=1e3, gamma=0.1, n_jobs=2).fit(iris.data, iris.target)  # pairs in threads
out["iris_threads"] = h(m.dual_coef_, m.intercept_, m.support_)
m = svmlab.SVR(C=10).fit(X, X[:, 0] ** 2)
out["svr"] = h(m.dual_coef_, m.intercept_, m.predict(X))
m = svmlab.OneClassSVM(nu=0.1).fit(X)
out["ocsvm"] = h(m.dual_coef_, m.intercept_, m.decision_function(X))
from svmlab import _jit
out["numba"] = "numba" in sys.modules
out["handed_over"] = _jit.handed_over()
"""


def _run(code, **env):
    e = dict(os.environ)
    e.pop("NUMBA_DISABLE_JIT", None)
    e["SVMLAB_JIT"] = "auto"
    e["PYTHONPATH"] = ROOT + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
    e.update({k: str(v) for k, v in env.items()})
    code = "import json\n" + textwrap.dedent(code) + "\nprint('RESULT ' + json.dumps(out))\n"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e,
                       cwd=ROOT, timeout=1800)
    assert p.returncode == 0, p.stderr[-3000:]
    line = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")][-1]
    return json.loads(line[len("RESULT "):])


def test_small_fits_without_numba_equal_compiled():
    # every fit interpreted (a budget none of them reaches)
    lazy = _run(FITS, SVMLAB_LAZY_BUDGET=30)
    assert lazy.pop("numba") is False and lazy.pop("handed_over") is False
    # the same fits compiled (numba imported at once), and handed over at
    # the first call (a zero budget)
    compiled = _run(FITS, SVMLAB_LAZY_NUMBA=0)
    assert compiled.pop("numba") is True and compiled.pop("handed_over") is True
    handed = _run(FITS, SVMLAB_LAZY_BUDGET=0)
    assert handed.pop("numba") is True and handed.pop("handed_over") is True
    assert lazy == compiled == handed


def test_default_budget_tiny_fit_without_numba():
    out = _run("""
import sys
import numpy as np
import svmlab
X = np.random.default_rng(0).normal(size=(40, 2)); y = (X[:, 0] > 0).astype(int)
m = svmlab.SVC(kernel="linear").fit(X, y)
m.decision_function(X)
out = {"numba": "numba" in sys.modules}
""")
    assert out == {"numba": False}


def test_interpret_mode_stays_without_numba():
    out = _run(FITS, SVMLAB_JIT="interpret")
    assert out["numba"] is False
    ref = _run(FITS, SVMLAB_LAZY_NUMBA=0)
    assert {k: out[k] for k in ("svc", "iris", "iris_threads", "svr", "ocsvm")} == \
        {k: ref[k] for k in ("svc", "iris", "iris_threads", "svr", "ocsvm")}


def test_budget_hands_over_mid_run():
    # a budget smaller than the first fit: the hand-over happens between two
    # calls of one fit, which goes on compiled from the same state
    out = _run(FITS + """
out["spent"] = _jit.interpreted_seconds()
""", SVMLAB_LAZY_BUDGET=0.002)
    ref = _run(FITS, SVMLAB_LAZY_NUMBA=0)
    assert out["numba"] is True and out["handed_over"] is True
    assert 0.002 <= out["spent"]
    assert {k: out[k] for k in ("svc", "iris", "iris_threads", "svr", "ocsvm")} == \
        {k: ref[k] for k in ("svc", "iris", "iris_threads", "svr", "ocsvm")}


def test_handover_swaps_every_lazy_object():
    out = _run("""
import pickle, sys
import numpy as np
import svmlab
from svmlab import _jit
svmlab.SVC
import svmlab.kernels._rows as rows, svmlab.kernels._bits as bits
import svmlab.smo._simd as simd, svmlab.cutting_plane._ocas as ocas
kept = rows.kernel_row if hasattr(rows, "kernel_row") else None
lazy_before = sum(type(v) is _jit.LazyKernel for n, m in list(sys.modules.items())
                  if n.startswith("svmlab") for v in vars(m).values())
out = {"numba_before": "numba" in sys.modules, "lazy_before": lazy_before,
       "pickled_same": pickle.loads(pickle.dumps(bits.popcount)) is bits.popcount,
       "prange_before": ocas.prange is range}
lk = bits.popcount
sig = lk.signatures  # a dispatcher's attribute: hands over
out["numba_after"] = "numba" in sys.modules
out["lazy_after"] = sum(type(v) is _jit.LazyKernel for n, m in list(sys.modules.items())
                        if n.startswith("svmlab") for v in vars(m).values())
out["real"] = type(bits.popcount).__name__
import svmlab._wss2 as wss2  # a table of kernels (named tuples in a dict)
out["table"] = type(wss2.RULES["wss2"].score).__name__
out["forwards"] = lk(7) == bits.popcount(7) == 3 and lk._svmlab_real is bits.popcount
import numba
out["prange"] = ocas.prange is numba.prange
# compiled code meets the kernels through globals: the intrinsic, the
# overloads and an inlined kernel, compiled here (cache=False)
x = np.arange(64, dtype=np.float64)
fl, bl = np.sin(x), np.cos(x) ** 2
out["extremes"] = list(map(int, simd.extremes(fl, bl, 64))) == \
    list(map(int, simd._extremes_py(fl, bl, 64)))
out["is_float64"] = bool(numba.njit(lambda a: rows.is_float64(a))(x))
# a lazy object kept outside svmlab's modules is typed as its dispatcher
out["kept_typed"] = numba.njit(lambda v: lk(v))(np.uint64(255)) == 8
""")
    assert out["numba_before"] is False and out["lazy_before"] > 50
    assert out["pickled_same"] and out["prange_before"]
    assert out["numba_after"] is True and out["lazy_after"] == 0
    assert out["real"] == "TieredDispatcher" and out["forwards"]
    assert out["table"] == "TieredDispatcher"
    assert out["prange"] and out["extremes"] and out["is_float64"] and out["kept_typed"]


def test_environments_that_import_numba_at_once():
    code = """
import sys
import svmlab
svmlab.SVC
from svmlab import _jit
import svmlab.kernels._bits as bits
out = {"numba": "numba" in sys.modules, "lazy": type(bits.popcount) is _jit.LazyKernel,
       "kind": type(bits.popcount).__name__}
"""
    assert _run(code) == {"numba": False, "lazy": True, "kind": "LazyKernel"}
    assert _run(code, SVMLAB_LAZY_NUMBA=0) == {"numba": True, "lazy": False,
                                               "kind": "TieredDispatcher"}
    assert _run(code, SVMLAB_JIT="eager") == {"numba": True, "lazy": False,
                                              "kind": "TieredDispatcher"}
    # numba's own switch: njit returns the plain function, as before
    assert _run(code, NUMBA_DISABLE_JIT=1) == {"numba": True, "lazy": False,
                                               "kind": "function"}


def test_argument_description_gives_numba_types():
    """The background compiler's request before the hand-over describes the
    arguments without numba; the arguments it rebuilds have the numba types
    of the call's (what numba compiles for)."""
    import numpy as np
    from numba import typeof

    from svmlab import _jit
    from svmlab.kernels._rows import Kernel

    X = np.arange(24.0).reshape(6, 4)
    ro = np.arange(5, dtype=np.int32)
    ro.setflags(write=False)
    kd = Kernel(X, kernel="rbf", gamma=0.5).data  # a named tuple of arrays and scalars
    cases = [X, X.T, X[:, ::2], X[::2], np.zeros(()), ro, np.arange(10)[::3],
             np.zeros((3, 2), np.float32, order="F"), 3, 2.5, True, None, 1j,
             np.float32(1), np.int8(3), (X, 3, (ro, None)), np.zeros((0, 0)), kd]
    desc = _jit.describe_args(tuple(cases))
    assert desc is not None
    rebuilt = _jit.skeleton_args(desc)
    assert [typeof(a) for a in rebuilt] == [typeof(a) for a in cases]
    assert _jit.describe_args((object(),)) is None
    assert _jit.describe_args((np.zeros(2, dtype=[("a", "f8")]),)) is None
