"""The ``cold-start`` suite: what a new user meets, in a fresh process with an
empty numba cache.

Every estimator, with its default parameters, fits a small problem (300 x
5: dense, CSR, and binary CSR) in a new Python process whose
:envvar:`NUMBA_CACHE_DIR` is an empty directory, as in a new install, a
Binder or Colab session or a CI run.  Columns:

``import``
    ``import svmlab`` and the estimator's module.
``first fit``
    the first ``fit`` (default tier policy, ``SVMLAB_JIT=auto``: small
    calls run interpreted while a background process compiles, see
    :mod:`svmlab._jit`).
``second fit``
    the same fit again at once (still interpreted if the compilation is
    not done).
``compiled after`` (full size only)
    seconds from the first fit's start until the background process has
    compiled what the fit needs; then ``warm fit``, the fit with compiled
    code (the number every later session gets).
``compiled here``
    how many kernels the two fits compiled in the user's own process (numba
    compilation events there; 0 when the tiers work: every kernel the fit
    met ran interpreted or came from the cache).
``eager first fit`` (full size only)
    the first fit with ``SVMLAB_JIT=eager``: numba's own behaviour, compile
    before running; what every first fit cost before the tiers.

At ``--size smoke`` (CI) only the first columns are measured, on the dense
input and one more kind per estimator, and the background process is
stopped at once: the suite shows that a cold first fit runs, not how long a
compilation takes.  The peer is scikit-learn's ``SVC`` (LIBSVM, nothing to
compile) fitting the same problem in a fresh process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap

from ._harness import Result, suite

#: (label, estimator expression, kinds) -- default parameters, as a user writes them
ESTIMATORS = [
    ("SMOClassifier()", "svmlab.SMOClassifier()"),
    ("SMOClassifier(selection='wss2')", "svmlab.SMOClassifier(selection='wss2')"),
    ("IRWLSClassifier()", "svmlab.IRWLSClassifier()"),
    ("ChunkingClassifier()", "svmlab.ChunkingClassifier()"),
    ("DecompositionClassifier()", "svmlab.DecompositionClassifier()"),
    ("CuttingPlaneClassifier()", "svmlab.CuttingPlaneClassifier()"),
    ("CuttingPlaneClassifier(method='ocas')", "svmlab.CuttingPlaneClassifier(method='ocas')"),
    ("CuttingPlaneOrdinalRegressor()", "svmlab.CuttingPlaneOrdinalRegressor()"),
    ("SVC()", "svmlab.SVC()"),
    ("NuSVC()", "svmlab.NuSVC()"),
    ("SVR()", "svmlab.SVR()"),
    ("NuSVR()", "svmlab.NuSVR()"),
    ("OneClassSVM()", "svmlab.OneClassSVM()"),
]
PEER = ("SVC() (LIBSVM)", "sklearn.svm.SVC()")

_SCRIPT = textwrap.dedent("""
    import json, sys, time
    t0 = time.perf_counter()
    import numpy as np, scipy.sparse as sp
    import svmlab, sklearn.svm
    from svmlab import _jit
    from numba.core import event
    compiled = []
    class _Count(event.Listener):
        def on_start(self, e):
            compiled.append(e.data["dispatcher"].py_func.__qualname__)
        def on_end(self, e):
            pass
    event.register("numba:compile", _Count())
    expr, kind, wait = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
    est = eval(expr)
    t1 = time.perf_counter()
    rng = np.random.RandomState(0)
    X = rng.randn(300, 5)
    y = np.where(X[:, 0] + 0.3 * rng.randn(300) > 0, 1, -1)
    if "Ordinal" in expr:
        y = np.digitize(X[:, 0] + 0.3 * rng.randn(300), [-0.5, 0.5])
    elif "SVR" in expr:
        y = X[:, 0] + 0.3 * rng.randn(300)
    elif "OneClass" in expr:
        y = None
    if kind == "csr":
        X = sp.csr_matrix(np.where(np.abs(X) > 0.5, X, 0.0))
    elif kind == "binary":
        X = sp.csr_matrix((X > 0.3).astype(np.float64))
    t2 = time.perf_counter(); est.fit(X, y); t3 = time.perf_counter()
    eval(expr).fit(X, y); t4 = time.perf_counter()
    out = dict(import_s=t1 - t0, first_s=t3 - t2, second_s=t4 - t3,
               compiled_in_first_fits=len(compiled))
    w = _jit._the_worker
    if wait:
        _jit.wait_background()
        out["compiled_after_s"] = time.perf_counter() - t2
        t5 = time.perf_counter(); eval(expr).fit(X, y)
        out["warm_s"] = time.perf_counter() - t5
    elif w is not None and w.proc is not None:
        w.proc.kill()
    print(json.dumps(out))
""")


def measure(expr, kind="dense", mode="auto", wait=False, timeout=1800):
    """Run the cold-start script in a fresh process with an empty numba cache;
    returns its measurements (a dict of seconds), or raises RuntimeError."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with tempfile.TemporaryDirectory(prefix="svmlab-cold-") as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, SVMLAB_JIT=mode, SVMLAB_PROGRESS="0",
                   PYTHONPATH=root + (os.pathsep + os.environ["PYTHONPATH"]
                                      if os.environ.get("PYTHONPATH") else ""))
        proc = subprocess.run([sys.executable, "-c", _SCRIPT, expr, kind, "1" if wait else "0"],
                              env=env, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"{expr} on {kind}: exit {proc.returncode}: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


@suite("cold-start", "first fit of every default estimator in a fresh process with an empty "
       "numba cache (import, first, second, compiled-after, warm and eager first fit)")
def cold_start(ctx):
    full = ctx.size == "full"
    rows = []
    peer = measure(PEER[1])
    ctx.emit(Result(case="300x5 dense", solver=PEER[0], time_s=peer["first_s"], peer=True,
                    extra={"import_s": peer["import_s"]}))
    kinds = ("dense", "csr", "binary")
    for label, expr in ESTIMATORS:
        for i, kind in enumerate(kinds):
            if not full and i > 1:
                continue
            if not full and i == 1:
                kind = "binary" if "Cutting" in label else "csr"
            m = measure(expr, kind, wait=full and kind == "dense")
            if full and kind == "dense":
                m["eager_first_s"] = measure(expr, kind, mode="eager")["first_s"]
            rows.append((label, kind, m))
            ctx.emit(Result(case=f"300x5 {kind}", solver=label, time_s=m["first_s"],
                            extra={k: round(v, 4) for k, v in m.items()}))
            ctx.log(f"{label} {kind}: " + ", ".join(f"{k} {v:.3f}" for k, v in m.items()))
    cols = ["import_s", "first_s", "second_s", "compiled_in_first_fits", "compiled_after_s",
            "warm_s", "eager_first_s"]
    head = ("estimator", "input", "import", "first fit", "second fit", "compiled here",
            "compiled after", "warm fit", "eager first fit")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines.append(f"| {PEER[0]} | dense | {peer['import_s']:.2f} | {peer['first_s']:.3f} | "
                 f"{peer['second_s']:.3f} | | | | |")
    for label, kind, m in rows:
        cells = [("" if c not in m else f"{m[c]}" if c == "compiled_in_first_fits"
                  else f"{m[c]:.3f}") for c in cols]
        lines.append(f"| {label} | {kind} | " + " | ".join(cells) + " |")
    table = "\n".join(lines)
    ctx.log("cold start (seconds):\n" + table)
    print(table)
