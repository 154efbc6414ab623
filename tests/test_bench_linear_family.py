"""The ``linear-family`` benchmark suite (svmlab.bench.linear_family): its
text-like data recipe, its objective, and a smoke run whose table and
objectives are checked here against fresh LIBLINEAR fits (no timing is
asserted)."""

from __future__ import annotations

import os

import numpy as np
import pytest
import scipy.sparse as sp

from svmlab.bench import Context
from svmlab.bench import __main__ as runner
from svmlab.bench import linear_family as LF

from conftest import require_shared_data
from reference import linear_primal as ref_primal


def test_registered_with_the_runner():
    assert runner.load_suite("linear-family").name == "linear-family"


def test_text_like_follows_its_recipe():
    X, y = LF.make_text_like(3000, 4000, mean_length=50, seed=3)
    assert sp.isspmatrix_csr(X) and X.shape == (3000, 4000)
    assert X.indices.dtype == np.int32 and X.has_canonical_format
    assert np.all(X.data > 0)
    # tf-idf rows scaled to unit norm
    assert np.allclose(np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel()), 1.0)
    # a document has about mean_length tokens: about as many distinct terms
    # as a Poisson(50) sample over a Zipf vocabulary gives, far fewer than 50
    per_row = np.diff(X.indptr)
    assert 10 < per_row.mean() < 50
    # Zipf: the document frequency of a term falls with its frequency rank
    # (log-log slope near -1.1 over the head of the vocabulary)
    df = np.sort(np.bincount(X.indices, minlength=4000))[::-1]
    r = np.arange(1, 51)
    slope = np.polyfit(np.log(r[5:]), np.log(df[5:50]), 1)[0]
    assert -1.6 < slope < -0.3
    assert set(np.unique(y)) == {-1.0, 1.0} and 0.4 < (y > 0).mean() < 0.6
    X2, y2 = LF.make_text_like(3000, 4000, mean_length=50, seed=3)
    assert (X2 != X).nnz == 0 and np.array_equal(y, y2)
    X3, _ = LF.make_text_like(3000, 4000, mean_length=50, seed=4)
    assert (X3 != X).nnz > 0


@pytest.mark.parametrize("bad", [dict(n_samples=1), dict(mean_length=0.5),
                                 dict(zipf_exponent=0.0), dict(label_noise=0.5)])
def test_text_like_refuses_bad_parameters(bad):
    kw = dict(n_samples=100, n_features=100) | bad
    with pytest.raises(ValueError):
        LF.make_text_like(**kw)


def test_primal_objective_against_naive_sums():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 5))
    y = np.where(rng.random(40) < 0.5, -1.0, 1.0)
    w, b, C = rng.standard_normal(5), 0.7, 0.3
    assert LF.primal_objective(X, y, w, 0.0, C, loss="hinge", penalty="l2") == \
        pytest.approx(ref_primal(X, y, w, 0.0, C), rel=1e-12)
    m = y * (X @ w + b)
    sq = sum(max(0.0, 1.0 - mi) ** 2 for mi in m)
    # LIBLINEAR's bias: a feature of value s whose weight b / s is penalised
    s = 2.0
    assert LF.primal_objective(X, y, w, b, C, loss="squared_hinge", penalty="l2",
                               intercept_scaling=s) == \
        pytest.approx(0.5 * (w @ w + (b / s) ** 2) + C * sq, rel=1e-12)
    assert LF.primal_objective(X, y, w, b, C, loss="squared_hinge", penalty="l1") == \
        pytest.approx(np.abs(w).sum() + abs(b) + C * sq, rel=1e-12)


def test_search_walks_down_until_the_target():
    gaps = {1e-1: 5e-2, 3e-2: 5e-3, 1e-2: 8e-4, 3e-3: 5e-5}
    calls = []

    def fit(tol):
        calls.append(tol)
        return (tol, 0.0, 7)

    found = LF.search(fit, LF.TOL_LADDER, 0, 1e-3, lambda out: gaps[out[0]], 1e9)
    assert found[:4] == (2, 1e-2, 8e-4, 7) and calls == [1e-1, 3e-2, 1e-2]
    found = LF.search(fit, LF.TOL_LADDER, found[0], 1e-4, lambda out: gaps[out[0]], 1e9)
    assert found[:3] == (3, 3e-3, 5e-5)


def test_smoke_run_table_and_objectives(tmp_path):
    """The suite at size smoke: every case has each available row on both
    sides or says why not, every emitted objective is within its target of
    an optimum recomputed here (a fresh LIBLINEAR fit at tol 1e-11), and the
    Markdown table lists every (case, row, target)."""
    require_shared_data()
    ctx = Context("linear-family", size="smoke", out_dir=tmp_path, progress=False,
                  plots=False, stream=open(os.devnull, "w"))
    LF.linear_family(ctx)
    assert not ctx.failures
    rows = LF.rows_available()
    assert {"Algorithm 1", "OCAS"} <= set(rows)
    table = [line for entry in ctx.logs for line in entry.splitlines() if line.startswith("| ")]
    assert table[0].startswith("| case | row | target | LIBLINEAR")
    body = table[1:]
    assert len(body) == len(LF.SMOKE_CASES) * len(rows) * len(LF.TARGETS)
    by_case = {}
    for r in ctx.results:
        by_case.setdefault(r.case, []).append(r)
    assert len(by_case) >= len(LF.SMOKE_CASES) * 2 * len(LF.TARGETS)  # the CP rows at least
    from sklearn.svm import LinearSVC

    optimum = {}
    for name, split, C, label in LF.SMOKE_CASES:
        X, y = LF.load_case(name, split, label, smoke=True)
        for row in rows:
            problem = LF.ROWS[row][3]
            key = (name, tuple(sorted(problem.items())))
            if key not in optimum:
                m = LinearSVC(C=C, loss=problem["loss"], penalty=problem["penalty"],
                              fit_intercept=problem["intercept"],
                              dual=problem["loss"] == "hinge", tol=1e-11,
                              max_iter=10**7).fit(X, y)
                b = float(m.intercept_[0]) if problem["intercept"] else 0.0
                optimum[key] = LF.primal_objective(X, y, m.coef_[0], b, C,
                                                   loss=problem["loss"],
                                                   penalty=problem["penalty"])
            p_star = optimum[key]
            for case, rs in by_case.items():
                if not case.startswith(name + " ") or f"| {row} |" not in case:
                    continue
                assert [r.peer for r in rs].count(True) <= 1
                for r in rs:
                    target = r.extra["target"]
                    gap = (r.objective - p_star) / p_star
                    assert -1e-7 <= gap <= target * (1 + 1e-6) + 1e-9, (case, r.solver, gap)
                    assert r.time_s > 0 and r.extra["tolerance"] > 0
    # both sides of the cutting-plane rows reach both targets on these sets
    for case, rs in by_case.items():
        if "| OCAS |" in case or "| Algorithm 1 |" in case:
            assert sorted(r.peer for r in rs) == [False, True], case
