"""The benchmark harness: registry, ratios, output files, the runner, and the smoke run."""

from __future__ import annotations

import csv
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from svmlab.bench import Context, Result, suite, timed
from svmlab.bench import __main__ as runner
from svmlab.bench import _harness as H

from conftest import require_shared_data
from reference import dual_objective as ref_dual, gram, linear_primal as ref_primal


@pytest.fixture
def fake_suite(tmp_path, monkeypatch):
    """A suite module written to disk and imported by the runner like the real ones."""
    pkg = tmp_path / "fakebench"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "mysuite.py").write_text(
        "import matplotlib.pyplot as plt\n"
        "from svmlab.bench import suite, Result\n"
        "@suite('mysuite', 'a fake suite for the tests')\n"
        "def mysuite(ctx):\n"
        "    ctx.log('size=' + ctx.size)\n"
        "    ctx.emit(Result(case='c1', solver='peer', time_s=2.0, objective=10.0,\n"
        "                    objective_kind='dual', peer=True))\n"
        "    ctx.emit(Result(case='c1', solver='ours', time_s=0.5, objective=9.99,\n"
        "                    objective_kind='dual', n_iter=7, extra={'k': [1, 2]}))\n"
        "    fig, ax = plt.subplots(); ax.plot([1, 2]); ctx.plot('curve', fig)\n"
        "    for _ in ctx.tqdm(range(3)): pass\n")
    (pkg / "broken.py").write_text(
        "from svmlab.bench import suite, Result\n"
        "@suite('broken', 'raises')\n"
        "def broken(ctx):\n"
        "    ctx.emit(Result(case='c', solver='x', time_s=1.0))\n"
        "    raise RuntimeError('boom')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(runner.SUITE_MODULES, "mysuite", "fakebench.mysuite")
    monkeypatch.setitem(runner.SUITE_MODULES, "broken", "fakebench.broken")
    monkeypatch.setitem(runner.SUITE_MODULES, "ghost", "fakebench.ghost")
    yield
    for k in ("mysuite", "broken"):
        H.SUITES.pop(k, None)
    for m in ("fakebench", "fakebench.mysuite", "fakebench.broken"):
        sys.modules.pop(m, None)


class _FakeClock:
    """``time.perf_counter`` for the harness, advanced by the work itself, so
    that the timing helpers are tested without depending on the machine."""

    def __init__(self):
        self.now = 0.0

    def perf_counter(self):
        return self.now

    def sleep(self, secs):
        self.now += secs


@pytest.fixture
def clock(monkeypatch):
    c = _FakeClock()
    monkeypatch.setattr(H, "time", c)
    return c


def test_timed_and_registry(clock):
    v, secs = timed(lambda a, b: (clock.sleep(0.05), a + b)[1], 2, b=3)
    assert v == 5 and secs == pytest.approx(0.05)

    @suite("unit-test-suite", "desc")
    def f(ctx):
        pass

    try:
        assert H.SUITES["unit-test-suite"].func is f
        assert H.SUITES["unit-test-suite"].description == "desc"
    finally:
        H.SUITES.pop("unit-test-suite")


def test_timed_best_takes_the_fastest_run_within_a_budget(clock):
    """timed_best: the minimum of the runs, at most ``repeats`` of them, and
    no new run once ``budget`` seconds are spent."""
    delays = iter([0.03, 0.01, 0.02, 0.05, 0.04, 0.04])
    calls = []

    def work(tag):
        d = next(delays)
        calls.append(d)
        clock.sleep(d)
        return tag, len(calls)

    value, best = H.timed_best(work, "x", repeats=5, budget=10.0)
    assert calls == [0.03, 0.01, 0.02, 0.05, 0.04]  # five runs, the budget never reached
    assert value == ("x", 5)  # the last run's value
    assert best == pytest.approx(0.01)  # the fastest, not the first or the mean
    calls.clear()
    delays = iter([0.05, 0.01, 0.01])
    value, best = H.timed_best(work, "y", repeats=5, budget=0.04)
    assert calls == [0.05] and value == ("y", 1) and best == pytest.approx(0.05)  # one run


def test_ratios_against_the_peer_of_each_case():
    rs = [Result("a", "ours", time_s=3.0, objective=99.0, objective_kind="dual", suite="s"),
          Result("a", "lib", time_s=1.5, objective=100.0, objective_kind="dual", peer=True,
                 suite="s"),
          Result("b", "ours", time_s=1.0, suite="s"),
          Result("a", "primal-only", time_s=0.75, objective=5.0, objective_kind="primal",
                 suite="s")]
    H.fill_ratios(rs)
    assert rs[0].ratio == pytest.approx(2.0) and rs[1].ratio == pytest.approx(1.0)
    assert rs[0].objective_rel_diff == pytest.approx(-0.01)
    assert rs[2].ratio is None  # no peer in case b
    assert rs[3].ratio == pytest.approx(0.5) and rs[3].objective_rel_diff is None
    table = H.format_table(rs)
    assert "[s] a" in table and "2.000" in table and "lib (peer)" in table


def test_context_rejects_bad_size_and_non_results(tmp_path):
    with pytest.raises(ValueError, match="smoke"):
        Context("x", size="huge", out_dir=tmp_path)
    ctx = Context("x", size="smoke", out_dir=tmp_path, progress=False)
    assert ctx.progress is False and ctx.smoke
    with pytest.raises(TypeError):
        ctx.emit({"case": "a"})


def test_runner_writes_tables_json_csv_and_plots(fake_suite, tmp_path, capsys):
    out = tmp_path / "out"
    rc = runner.main(["--suite", "mysuite", "--size", "smoke", "--out", str(out),
                      "--no-progress"])
    assert rc == 0
    text = capsys.readouterr().out
    assert "[mysuite] c1" in text and "0.250" in text  # 0.5 s / 2.0 s
    (jpath,) = out.glob("results-mysuite-*.json")
    data = json.loads(jpath.read_text())
    m = data["machine"]
    assert m["cpu_count"] == os.cpu_count() and m["platform"] and m["date_utc"]
    assert m["versions"]["numpy"] == np.__version__ and "scikit-learn" in m["versions"]
    ours = next(r for r in data["results"] if r["solver"] == "ours")
    assert ours["ratio"] == pytest.approx(0.25) and ours["size"] == "smoke"
    assert ours["objective_rel_diff"] == pytest.approx(-0.001)
    assert ours["extra"] == {"k": [1, 2]} and ours["suite"] == "mysuite"
    assert data["suites"][0]["log"] == ["size=smoke"]
    (cpath,) = out.glob("results-mysuite-*.csv")
    rows = list(csv.DictReader(cpath.open()))
    assert len(rows) == 2 and {r["solver"] for r in rows} == {"peer", "ours"}
    assert rows[0]["cpu_count"] == str(os.cpu_count()) and rows[0]["v_numpy"] == np.__version__
    assert (out / "plots" / "mysuite-curve.png").stat().st_size > 1000


def test_runner_failures_exit_nonzero_but_keep_other_results(fake_suite, tmp_path, capsys):
    out = tmp_path / "out"
    rc = runner.main(["--suite", "broken,mysuite,ghost", "--out", str(out), "--no-progress"])
    assert rc == 1
    err = capsys.readouterr().err
    assert "boom" in err
    assert "suite 'ghost' is not available" in err and "fakebench.ghost" in err
    data = json.loads(next(out.glob("*.json")).read_text())
    assert {r["suite"] for r in data["results"]} == {"broken", "mysuite"}
    assert runner.main(["--suite", "nosuch", "--out", str(out), "--no-progress"]) == 1
    assert "unknown suite 'nosuch'" in capsys.readouterr().err


def test_smoke_expands_to_every_paper_suite():
    assert runner.expand(["smoke"]) == ["smoke", "platt", "irwls", "joachims", "peers"]
    assert runner.expand(["all", "peers"]) == ["platt", "irwls", "joachims", "peers"]


def test_objective_helpers_match_naive_references():
    from sklearn.svm import SVC, LinearSVC

    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 4))
    y = np.where(X[:, 0] + 0.5 * rng.standard_normal(60) > 0, 1.0, -1.0)
    svc = SVC(C=2.0, kernel="rbf", gamma=0.3, tol=1e-8).fit(X, y)
    alpha = H.svc_alpha(svc, 60)
    assert np.all(alpha >= 0) and np.all(alpha <= 2.0 + 1e-9)
    assert abs(alpha @ y) < 1e-8
    K = gram(X, "rbf", gamma=0.3)
    assert H.kernel_dual_objective(X, y, alpha, "rbf", 0.3) == pytest.approx(
        ref_dual(K, y, alpha), rel=1e-10)
    lin = LinearSVC(C=0.5, loss="hinge", dual=True, tol=1e-6, max_iter=100000).fit(X, y)
    w, b = lin.coef_.ravel(), lin.intercept_[0]
    assert H.linear_primal(X, y, w, b, 0.5) == pytest.approx(ref_primal(X, y, w, b, 0.5))
    assert H.linear_primal(X, y, w, b, 0.5, regularize_bias=True) == pytest.approx(
        ref_primal(X, y, w, b, 0.5) + b * b / 2)


@pytest.mark.slow
def test_smoke_suite_runs_and_exits_zero(tmp_path):
    """``python -m svmlab.bench --suite smoke`` in a subprocess: exit 0, with
    results from every paper suite and peers measured in the same run.  (How
    long it takes is the benchmark's business, not a test's: a busy machine
    must not fail CI.)"""
    require_shared_data()  # the paper suites use w8a, ijcnn1, banana, MNIST, ...
    out = tmp_path / "bench"
    env = dict(os.environ, MPLBACKEND="Agg")
    proc = subprocess.run([sys.executable, "-m", "svmlab.bench", "--suite", "smoke", "--out",
                           str(out), "--no-progress"], capture_output=True, text=True, env=env,
                          timeout=3600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    (jpath,) = out.glob("results-smoke-*.json")
    data = json.loads(jpath.read_text())
    assert not data["failures"]
    suites = {s["suite"] for s in data["suites"]}
    assert suites == {"smoke", "platt", "irwls", "joachims", "peers"}
    by_suite = {}
    for r in data["results"]:
        by_suite.setdefault(r["suite"], []).append(r)
    for s in ("platt", "irwls", "joachims", "peers"):
        assert by_suite.get(s), f"suite {s} emitted no results"
        assert any(r["peer"] for r in by_suite[s]), f"suite {s} measured no peer"
        assert all(r["size"] == "smoke" for r in by_suite[s])
    solvers = {r["solver"] for r in by_suite["peers"]}
    for name in ("SMOClassifier", "IRWLSClassifier", "ChunkingClassifier",
                 "DecompositionClassifier", "CuttingPlaneClassifier"):
        assert any(name in s for s in solvers), name
    # peers at equal quality: every svmlab objective within 1% of its peer's
    for r in by_suite["peers"]:
        if not r["peer"] and r["objective_rel_diff"] is not None:
            assert abs(r["objective_rel_diff"]) < 1e-2, r
    assert "ratio" in proc.stdout


# --------------------------------------------------------------------------
# the equal-objective suite "linear" (issue 16)
# --------------------------------------------------------------------------
def test_time_to_target_picks_the_fastest_point_within_the_target():
    from svmlab.bench.linear import markdown_table, time_to_target

    pts = [(1e-2, 0.10, 5e-3, 10), (1e-3, 0.30, 4e-4, 30), (3e-4, 0.25, 8e-5, 35),
           (1e-4, 0.90, 1e-5, 80)]
    assert time_to_target(pts, 1e-3) == (3e-4, 0.25, 8e-5, 35)  # faster than 1e-3's 0.30
    assert time_to_target(pts, 1e-4)[0] == 3e-4
    assert time_to_target(pts, 1e-6) is None
    row = {"case": "c", ("LIBLINEAR", 1e-3): (0.1, 1e-2), ("Algorithm 1", 1e-3): (0.3, 1e-3),
           ("OCAS", 1e-3): (0.05, 1e-3), ("LIBLINEAR", 1e-4): (0.2, 1e-3),
           ("Algorithm 1", 1e-4): None, ("OCAS", 1e-4): (0.4, 1e-4),
           "iters": {"Algorithm 1": 90, "OCAS": 20}}
    table = markdown_table([row]).splitlines()
    assert table[2] == "| c | 0.001 | 0.100 | 0.300 | 3.00 | 0.050 | 0.50 | 90 / 20 |"
    assert table[3] == "| c | 0.0001 | 0.200 | - | - | 0.400 | 2.00 | 90 / 20 |"


def test_linear_suite_smoke_measures_gaps_itself(tmp_path):
    """The suite at size smoke (a9a and w8a subsets): every emitted point is
    within its target of the reference optimum, recomputed here from a fresh
    LIBLINEAR fit, and the ratios are printed."""
    require_shared_data()  # w8a
    from svmlab.bench.linear import SMOKE_CASES, linear, load_case

    ctx = Context("linear", size="smoke", out_dir=tmp_path, progress=False, plots=False,
                  stream=open(os.devnull, "w"))
    linear(ctx)
    assert not ctx.failures
    assert any("equal objective 0.001" in line for line in ctx.logs)
    assert any(line.startswith("| case | target |") for line in ctx.logs)
    assert {r.case.split(" |")[0].split()[0] for r in ctx.results} == {c[0] for c in SMOKE_CASES}
    from sklearn.svm import LinearSVC

    for name, split, C_lib, label in SMOKE_CASES:
        X, y = H.subsample(*load_case(name, split, label), 3000, seed=0)
        y_pm = H.to_pm(y)
        ll = LinearSVC(loss="hinge", fit_intercept=False, C=C_lib, tol=1e-10,
                       max_iter=1_000_000).fit(X, y)
        p_star = ref_primal(X, y_pm, ll.coef_[0], 0.0, C_lib)
        for r in ctx.results:
            if r.case.startswith(name):
                target = r.extra["target"]
                assert (r.objective - p_star) / p_star <= target * (1 + 1e-6) + 1e-9


def test_cold_start_suite_smoke_runs_every_estimator_cold(tmp_path):
    """``--suite cold-start --size smoke`` (issue 26): every default estimator
    fits in a fresh process with an empty numba cache, dense and one more
    input kind, with the peer measured in the same run.  What it checks is
    what the run produced, not how long it took: the SMO room's and the SVM
    family's first fits compile nothing in the user's process (every kernel
    they meet runs interpreted or comes from the cache)."""
    from svmlab.bench.cold_start import ESTIMATORS, PEER

    out = tmp_path / "bench"
    # the tiers are what this checks: an editable install's machine code in
    # the checkout (svmlab._shipped) would load instead, so it is switched off
    env = dict(os.environ, MPLBACKEND="Agg", SVMLAB_SHIPPED="0")
    proc = subprocess.run([sys.executable, "-m", "svmlab.bench", "--suite", "cold-start",
                           "--size", "smoke", "--out", str(out), "--no-progress", "--no-plots"],
                          capture_output=True, text=True, env=env, timeout=3600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    (jpath,) = out.glob("results-cold-start-*.json")
    data = json.loads(jpath.read_text())
    assert not data["failures"]
    rows = [r for r in data["results"] if r["suite"] == "cold-start"]
    assert [r["solver"] for r in rows if r["peer"]] == [PEER[0]]
    for label, _ in ESTIMATORS:
        mine = [r for r in rows if r["solver"] == label]
        assert len(mine) == 2, label
        assert {r["case"] for r in mine} >= {"300x5 dense"}, label
        for r in mine:
            assert math.isfinite(r["time_s"]) and r["time_s"] > 0
            assert r["extra"]["import_s"] > 0 and r["extra"]["second_s"] > 0
            if label.startswith(("SMOClassifier", "SVC", "NuSVC", "SVR", "NuSVR", "OneClass")):
                assert r["extra"]["compiled_in_first_fits"] == 0, (label, r)


def test_cold_start_sized_case_runs_in_a_fresh_process():
    """The sized cases' script (issue 29) fits twice in a fresh process with
    an empty numba cache and reports what was compiled there and whether
    shipped machine code was loaded; run on a tiny problem here."""
    from svmlab.bench.cold_start import SIZED, measure_sized

    assert {d for *_, d in SIZED} == {"digits", "clf", "reg", "one", "a9a"}
    m = measure_sized("svmlab.SVC()", "tiny", timeout=1800)
    assert m["first_s"] > 0 and m["second_s"] > 0
    assert isinstance(m["compiled_in_first_fits"], int) and m["compiled_in_first_fits"] >= 0
    assert m["svmlab_file"].startswith(os.path.dirname(os.path.dirname(__file__)))
    assert isinstance(m["shipped"], str) and m["shipped"]


def test_cold_start_install_kind_is_checked():
    from svmlab.bench.cold_start import Install

    with pytest.raises(ValueError, match="editable.*wheel"):
        Install("sdist")
