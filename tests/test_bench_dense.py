"""The ``dense`` benchmark suite at size smoke: every case, every solver, and
every emitted dual objective checked here against LIBSVM's optimum recomputed
at a tight tolerance with a kernel matrix built by scikit-learn."""

from __future__ import annotations

import os

import numpy as np
import pytest

from svmlab.bench import Context
from svmlab.bench import __main__ as runner

from conftest import require_shared_data
from reference import dual_objective, gram, libsvm_dual


def test_dense_suite_is_registered():
    assert runner.SUITE_MODULES["dense"] == "svmlab.bench.dense"
    assert runner.load_suite("dense").name == "dense"


def test_dense_suite_smoke_objectives_checked_here(tmp_path):
    require_shared_data()  # MNIST, Fashion-MNIST, ijcnn1, banana, ...
    from svmlab.bench.dense import OBJ_TOL, _cases, dense

    ctx = Context("dense", size="smoke", out_dir=tmp_path, progress=False, plots=False,
                  stream=open(os.devnull, "w"))
    dense(ctx)
    assert not ctx.failures, ctx.failures
    cases = _cases(smoke=True)
    assert len(cases) == 8
    by_case = {}
    for r in ctx.results:
        by_case.setdefault(r.case, []).append(r)
    assert set(by_case) == {c[0] for c in cases}
    for name, X, y, C, gamma, solvers in cases:
        rs = by_case[name]
        assert rs[0].peer and rs[0].solver.startswith("LIBSVM")
        assert len(rs) == 1 + len(solvers)
        assert any("blocked decomposition" in r.solver for r in rs)
        # the optimum, recomputed here (LIBSVM at tol 1e-6, sklearn's kernel)
        Xd = X.toarray() if hasattr(X, "toarray") else X
        _, _, W_star = libsvm_dual(Xd, y, C, "rbf", gamma, tol=1e-6)
        for r in rs:
            assert r.objective_kind == "dual"
            assert abs(r.objective - W_star) <= OBJ_TOL * abs(W_star), (name, r.solver)
            if not r.peer:
                assert r.extra["objective_ok"] and r.extra["converged"], (name, r.solver)
    # the blocked decomposition's own solution, checked once more from alpha
    name, X, y, C, gamma, _ = cases[0]
    from svmlab import DecompositionClassifier

    m = DecompositionClassifier(C=C, gamma=gamma, engine="smo", progress=False).fit(X, y)
    yp = np.where(y == np.unique(y)[-1], 1.0, -1.0)
    _, _, W_star = libsvm_dual(X, y, C, "rbf", gamma, tol=1e-6)
    assert dual_objective(gram(X, "rbf", gamma), yp, m.alpha_) == pytest.approx(W_star,
                                                                                rel=1e-3)


def test_peak_memory_measurement_runs():
    """The full size's memory case, on 1000 rows: a fresh process reports
    a converged fit and its peaks (the tracemalloc peak covers at least the
    float32 copy of X the fit makes)."""
    require_shared_data()
    from svmlab.bench.dense import peak_memory

    mem = peak_memory(n=1000, timeout=300)
    assert mem["converged"] and mem["n"] == 1000 and mem["kernel_rows"] > 0
    assert mem["tracemalloc_peak_MB"] >= 1000 * 784 * 4 / 2**20
    assert mem["peak_rss_MB"] >= mem["rss_after_load_MB"] > 0
