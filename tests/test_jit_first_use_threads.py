"""First use from threads (issue 33 item 19): after ``import svmlab``, many
threads touching lazy public names at once all get them.

Why this matters: a lazy name's first touch imports its module, and
scikit-learn's, in the thread that touches it.  Two threads running
scikit-learn's circular import steps together failed with ``ImportError:
partially initialized module`` or ``_DeadlockError`` in 19 of 20 fresh
processes.  The race exists only in a process that has imported nothing yet,
so each try is a fresh subprocess.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import svmlab

_SCRIPT = textwrap.dedent("""
    import json, sys, threading
    import svmlab

    paths = sys.argv[1].split(",")
    errors, got = [], {}
    barrier = threading.Barrier(8)

    def resolve(path):
        obj = svmlab
        for part in path.split("."):
            obj = getattr(obj, part)
        return obj

    def touch(i):
        try:
            barrier.wait()
            for k in range(len(paths)):
                p = paths[(i + k) % len(paths)]
                got.setdefault(p, set()).add(id(resolve(p)))
            from svmlab import SVC, OneClassSVM  # the `from` form goes through the same path
            assert SVC.__name__ == "SVC" and OneClassSVM.__name__ == "OneClassSVM"
        except BaseException as exc:
            errors.append(f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=touch, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(json.dumps(dict(errors=errors, distinct={p: len(v) for p, v in got.items()})))
""")

_NAMES = ["SVC", "SMOClassifier", "IRWLSClassifier", "CuttingPlaneClassifier", "OneClassSVM",
          "Kernel", "warm_up", "datasets", "svm", "smo", "decomposition", "kernels",
          "reference.smo", "reference.irwls", "viz.plot_decision_regions", "viz.live"]


def test_eight_threads_touch_lazy_names_in_fresh_processes(tmp_path):
    script = tmp_path / "threads.py"
    script.write_text(_SCRIPT)
    root = os.path.dirname(os.path.dirname(os.path.abspath(svmlab.__file__)))
    env = dict(os.environ, PYTHONPATH=root, MPLBACKEND="Agg")
    for attempt in range(5):
        out = subprocess.run([sys.executable, str(script), ",".join(_NAMES)], env=env,
                             cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr[-3000:]
        r = json.loads(out.stdout.strip().splitlines()[-1])
        assert r["errors"] == [], f"fresh process {attempt}: {r['errors'][:3]}"
        # every thread got the same object for each name
        assert r["distinct"] == {p: 1 for p in _NAMES}
