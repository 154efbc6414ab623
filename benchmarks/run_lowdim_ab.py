"""Before/after of issue 31 item 5 (docs/decisions/30w01): svmlab.SVC with
defaults against scikit-learn's SVC on the low-dimensional mid-size sets,
in alternated fresh processes, one source tree per side.

    python benchmarks/run_lowdim_ab.py BEFORE_TREE AFTER_TREE [ROUNDS]

Each tree is a checkout of svmlab (e.g. ``git archive e86b1af | tar -x -C
/tmp/base``); each child runs with ``PYTHONPATH=<tree>``,
``NUMBA_CACHE_DIR=<tree>/.numba_cache`` and ``SVMLAB_JIT=eager``.  The
data come from this checkout's generators (loaded by path, so the tree
before need not have them): waveform 5000 (3 classes; class 1 vs rest)
and twonorm 7400 scaled to [-1, 1], SVC defaults (C=1, gamma='scale'),
tol 1e-3, cache 200 MB; and ijcnn1's first 20000 rows (C=1, gamma=1, as
the ``dense`` suite), which the rule also reaches.  In each child:
LIBSVM's fastest of 3 fits by process CPU time, then svmlab's (one warm-up
fit of the full set, then the fastest of 3); both dual objectives computed
the same way (``svmlab.bench.family.svc_objective``).  Prints one line per
child and, at the end, a markdown table of the medians over the rounds.
"""

import os
import re
import statistics as st
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SETS = ("waveform3", "waveform", "twonorm", "ijcnn1")
NAMES = {"waveform3": "waveform 5000, 3 classes", "waveform": "waveform 5000, class 1 vs rest",
         "twonorm": "twonorm 7400", "ijcnn1": "ijcnn1 20000 (C=1, g=1, unscaled)"}


def child(name):
    import importlib.util
    import time
    import warnings

    import numpy as np
    from sklearn.preprocessing import MinMaxScaler
    from sklearn.svm import SVC as SkSVC

    from svmlab.bench.family import svc_objective
    from svmlab.svm import SVC

    warnings.simplefilter("ignore")
    p = dict(tol=1e-3, cache_size=200)
    if name == "ijcnn1":
        from svmlab import datasets as D

        X, y = D.load("ijcnn1", "train")
        X = X.toarray() if hasattr(X, "toarray") else np.asarray(X)
        X, y = np.ascontiguousarray(X[:20000]), np.asarray(y, dtype=np.float64)[:20000]
        p.update(C=1.0, gamma=1.0)
        g = 1.0
    else:
        spec = importlib.util.spec_from_file_location(
            "svmlab.datasets._synthetic_ab", os.path.join(HERE, "..", "svmlab", "datasets",
                                                          "_synthetic.py"))
        syn = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(syn)
        X, y = (syn.twonorm(7400) if name == "twonorm"
                else syn.waveform(5000, binary=(name == "waveform")))
        X = np.ascontiguousarray(MinMaxScaler((-1, 1)).fit_transform(X))
        g = 1.0 / (X.shape[1] * X.var())
    classes = np.unique(y)
    y_idx = np.searchsorted(classes, y)

    def run(make):
        c, w = time.process_time(), time.perf_counter()
        m = make().fit(X, y)
        return m, time.process_time() - c, time.perf_counter() - w

    ref, rc, rw = min((run(lambda: SkSVC(**p)) for _ in range(3)), key=lambda t: t[1])
    Wr = svc_objective(ref, X, y_idx, len(classes), g)
    run(lambda: SVC(**p))  # compile / warm
    m, c, w = min((run(lambda: SVC(**p)) for _ in range(3)), key=lambda t: t[1])
    W = svc_objective(m, X, y_idx, len(classes), g)
    load = open("/proc/loadavg").read().split()[0]
    print(f"RESULT {name} lib_cpu={rc:.4f} lib_wall={rw:.4f} lib_iter={int(np.sum(ref.n_iter_))} "
          f"cpu={c:.4f} wall={w:.4f} iter={int(np.sum(m.n_iter_))} solver={m.solver_} "
          f"rel={(W - Wr) / abs(Wr):.2e} load={load}", flush=True)


def main(before, after, rounds=3):
    out = {}
    for r in range(rounds):
        for name in SETS:
            for side, tree in (("before", before), ("after", after)):
                env = dict(os.environ, PYTHONPATH=tree, SVMLAB_JIT="eager",
                           NUMBA_CACHE_DIR=os.path.join(tree, ".numba_cache"))
                res = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", name],
                                     cwd=tree, env=env, capture_output=True, text=True,
                                     timeout=900)
                line = [x for x in res.stdout.splitlines() if x.startswith("RESULT")]
                print(f"round {r + 1} {side}: {line[0] if line else res.stderr[-500:]}",
                      flush=True)
                if line:
                    kv = dict(x.split("=") for x in line[0].split()[2:])
                    out.setdefault((name, side), []).append(kv)
    print("\n| case | code | LIBSVM CPU s | svmlab CPU s | CPU ratio (range) | wall ratio (range) "
          "| solver_ | steps (LIBSVM / svmlab) | objective rel. diff | load (1 min) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for (name, side), runs in out.items():
        f = [float(k["cpu"]) / float(k["lib_cpu"]) for k in runs]
        wr = [float(k["wall"]) / float(k["lib_wall"]) for k in runs]
        ld = [float(k["load"]) for k in runs]
        print(f"| {NAMES[name]} | {side} | {st.median(float(k['lib_cpu']) for k in runs):.3f} | "
              f"{st.median(float(k['cpu']) for k in runs):.3f} | **{st.median(f):.2f}** "
              f"({min(f):.2f}-{max(f):.2f}) | {st.median(wr):.2f} ({min(wr):.2f}-{max(wr):.2f}) | "
              f"{'/'.join(sorted({k['solver'] for k in runs}))} | {runs[0]['lib_iter']} / "
              f"{'/'.join(sorted({k['iter'] for k in runs}))} | "
              f"{'/'.join(sorted({k['rel'] for k in runs}))} | {min(ld):.1f}-{max(ld):.1f} |")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(sys.argv[2])
    else:
        main(os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]),
             int(sys.argv[3]) if len(sys.argv) > 3 else 3)
