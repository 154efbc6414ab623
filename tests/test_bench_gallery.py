"""The gallery suite's runner, on tiny fake example scripts in tmp_path.

What must hold for the suite's table to mean anything: the svmlab variant
really runs svmlab's classes (and the stock one scikit-learn's), a hang is
killed at the cap with the processes it started, a failure for want of a
module is "unavailable", and a progress bar only the svmlab run prints is
reported as noise while warnings are not.
"""

import json
import os
import sys
import time

import pytest

from svmlab.bench import gallery

SWAP_SCRIPT = """
import json, sys
import numpy as np
import sklearn.svm
from sklearn import svm
from sklearn.svm import SVC
X = np.array([[0.0, 0.0], [0.2, 0.1], [1.0, 1.0], [1.1, 0.9]])
y = np.array([0, 0, 1, 1])
model = SVC(kernel="linear", C=10.0).fit(X, y)
names = {n: getattr(sklearn.svm, n).__module__ for n in %(names)r}
print("RESULT " + json.dumps({"names": names, "svm.SVC": svm.SVC.__module__,
                              "model": type(model).__module__,
                              "pred": model.predict(X).tolist()}))
"""


def _result(run):
    line = next(x for x in run.stdout_tail.splitlines() if x.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


def _write(tmp_path, rel, text):
    p = tmp_path / "examples" / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


def test_swap_runs_svmlab_classes_and_stock_runs_sklearn(tmp_path):
    script = _write(tmp_path, "svm/plot_fake.py", SWAP_SCRIPT % {"names": gallery.SWAPPED})
    stock = gallery.run_script(script, "stock", cap_s=300)
    swapped = gallery.run_script(script, "svmlab", cap_s=300)
    assert stock.status == "ok", stock.stderr
    assert swapped.status == "ok", swapped.stderr
    rs, rw = _result(stock), _result(swapped)
    assert all(m.startswith("sklearn.") for m in rs["names"].values()), rs
    assert rs["model"].startswith("sklearn.")
    assert all(m.startswith("svmlab.") for m in rw["names"].values()), rw
    assert rw["svm.SVC"].startswith("svmlab.") and rw["model"].startswith("svmlab.")
    assert rw["pred"] == rs["pred"] == [0, 0, 1, 1]
    # the fit log saw the one top-level fit, of the class each variant used
    assert [f["cls"] for f in stock.fits] == ["SVC"]
    fits = [f for f in swapped.fits if not f["cls"].startswith("(")]
    assert [f["cls"] for f in fits] == ["SVC"] and fits[0]["shape"] == [4, 2]
    assert fits[0]["params"]["C"] == 10.0
    assert stock.cpu_s > 0 and swapped.cpu_s > 0
    # the collector's CPU and the exit's: measured in both variants, parts of the total
    for run in (stock, swapped):
        assert run.exit_cpu_s is not None and 0 <= run.exit_cpu_s < run.cpu_s
        assert run.gc_cpu_s is not None and 0 <= run.gc_cpu_s < run.cpu_s
        assert isinstance(run.gc_full, int) and run.gc_full >= 0


def test_a_hang_is_killed_at_the_cap_with_its_children(tmp_path):
    pidfile = tmp_path / "child.pid"
    script = _write(tmp_path, "svm/plot_hang.py", f"""
import subprocess, sys, time
from sklearn.svm import SVC
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
open({str(pidfile)!r}, "w").write(str(child.pid))
time.sleep(600)
""")
    run = gallery.run_script(script, "svmlab", cap_s=20)
    # killed by the cap: no exit status, and over before the script's own
    # 600 s sleep could have ended
    assert run.status.startswith("killed") and run.rc is None
    assert run.wall_s < 600
    pid = int(pidfile.read_text())
    for _ in range(50):  # the grandchild is gone with its process group
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        try:  # reap it if it became ours (it does not: it was the script's)
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
        time.sleep(0.1)
    else:
        pytest.fail("the script's child survived the cap")


def test_compare_reports_noise_warnings_and_unavailable(tmp_path):
    noisy = _write(tmp_path, "svm/plot_noisy.py", """
import sys, warnings
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC
warnings.warn("not converged", ConvergenceWarning)
if SVC.__module__.startswith("svmlab"):
    sys.stderr.write(" 50%|#####     | 5/10 [00:01<00:01,  5.00it/s]\\n")
""")
    _write(tmp_path, "svm/plot_needs_pkg.py",
           "import sklearn.svm\nimport svmlab_gallery_no_such_module\n")
    _write(tmp_path, "other/plot_no_svm.py", "print('no svm here')\n")
    root = gallery.examples_dir(str(tmp_path / "examples"))
    assert [p.name for p in gallery.find_scripts(root)] == ["plot_needs_pkg.py", "plot_noisy.py"]
    row = gallery.compare_script(noisy, rounds=1, log=lambda m: None)
    assert row["status"] == "ok, noisy", row
    assert any("5/10" in line for line in row["noise"])
    assert not any("not converged" in line or "warnings.warn" in line for line in row["noise"])
    assert row["convergence_warnings"] == {"stock": 1, "svmlab": 1}
    assert row["ratio_wall"] > 0 and row["ratio_cpu"] > 0
    assert set(row["gc"]) == {"stock", "svmlab"}
    assert all(g["exit_cpu_s"] is not None for g in row["gc"].values())
    table = gallery.markdown_table([row], root)
    assert "GC in run + exit" in table.splitlines()[0]
    assert " + " in table.splitlines()[2]
    row = gallery.compare_script(root / "svm/plot_needs_pkg.py", rounds=1, log=lambda m: None)
    assert row["status"] == "unavailable (module svmlab_gallery_no_such_module missing)"
    table = gallery.markdown_table([row], root)
    assert "svm/plot_needs_pkg.py" in table and "unavailable" in table


def test_examples_dir_errors_are_clear(tmp_path, monkeypatch):
    monkeypatch.delenv(gallery.ENV_VAR, raising=False)
    with pytest.raises(FileNotFoundError, match=gallery.ENV_VAR):
        gallery.examples_dir()
    with pytest.raises(FileNotFoundError, match="not a folder"):
        gallery.examples_dir(str(tmp_path / "missing"))
    (tmp_path / "plot_x.py").write_text("import numpy\n")
    with pytest.raises(FileNotFoundError, match="no example script"):
        gallery.examples_dir(str(tmp_path))


def test_gallery_suite_is_registered():
    from svmlab.bench import __main__ as runner

    assert runner.SUITE_MODULES["gallery"] == "svmlab.bench.gallery"
    assert runner.load_suite("gallery").func is gallery.gallery
    assert sys.modules["svmlab.bench.gallery"] is gallery
