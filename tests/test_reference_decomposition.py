"""The readable references of IRWLS-SVC, chunking and Osuna decomposition
(``svmlab.reference.irwls``, ``.chunking``, ``.decomposition``) take the
same steps as the fast estimators.

Configuration where both must agree: no shrinking, the default 200 MB
cache (every row of these small sets fits) with float64 values
(``cache_dtype="float64"``), the same ``random_state`` for
IRWLS's random selection, and the reference given the kernel matrix built
from the fast kernel's own rows on data whose dot products are exact, so
that both see the same kernel values to the last bit.

Replay (the main check): before every step of the fast run, the reference
is put in the fast solver's exact state (global beta/alpha, G, b, sets,
random generator, the open sub-problem with its Table-1 history) and takes
one step with its own code; the two records must agree: identical working
sets, sets S1/S2/S3, rule counts, modes, methods and inner iteration
counts, and iterates within ``1e-10 * max(1, C)`` for Table 1 steps (the
same direct solves on the same numbers) or, where a ridge-regularised
Cholesky solve is involved (IRWLS's line-search mode, the QP engine), within
``max(1e-8 * max(1, C), 100 eps cond(K_11 + ridge) * size)``: the fast code
updates its factor by rotations, the reference factorises afresh, and two
backward-stable solves agree to about ``cond * eps`` relative (duplicate
points make ``K_11`` singular, cond up to 1e12).  A step may differ only
if the reference flagged it as decided within that rounding
(``ChunkingState.tie`` / the ``ties`` notes), and such steps must stay rare.

Free runs: from scratch, the reference reproduces the fast IRWLS run bit
for bit until the first line-search iteration (before it both sides run
the same arithmetic), and every reference run reaches LIBSVM's optimum
(dual objective computed here from alpha, within 1e-3 relative).
"""


import copy
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs, make_moons
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC

from svmlab import ChunkingClassifier, DecompositionClassifier, IRWLSClassifier
from svmlab.datasets import gauss_m
from svmlab.decomposition.estimators import DecompositionRecord
from svmlab.kernels import Kernel, kernel_row, kernel_value
from svmlab.reference import chunking as ref_chunking
from svmlab.reference import decomposition as ref_decomposition
from svmlab.reference import irwls as ref_irwls
from svmlab.reference import subproblem as ref_subproblem
from svmlab.reference import _rounding
from svmlab.reference._source import source_text, tags_of

#: the references compute in float64; the fast solvers are compared with
#: float64 cached kernel values (the float32 default rounds the rows they
#: read, so the two would see different kernel values)
REF_DTYPE = "float64"


def _dataset(name):
    """Small 2-D sets, coordinates rounded to multiples of 1/1024: then every
    kernel value comes out bit for bit the same from the fast kernel's
    entry path (``kernel_value``, used for blocks of uncached rows) and its
    row path (``kernel_row``), so the reference sees exactly the numbers
    the fast solver sees."""
    X, y = _raw_dataset(name)  # 10 fractional bits: every dot product is exact
    return np.round(X * 1024) / 1024, y


def _raw_dataset(name):
    if name == "moons":
        X, y = make_moons(90, noise=0.25, random_state=0)
    elif name == "blobs":
        X, y = make_blobs(80, centers=2, cluster_std=2.0, random_state=3)
    elif name == "duplicates":  # every point twice, some with both labels
        X0, y0 = make_moons(40, noise=0.3, random_state=1)
        X = np.vstack([X0, X0])
        y = np.concatenate([y0, np.where(np.arange(40) % 5 == 0, 1 - y0, y0)])
    elif name == "gauss-m":
        X, y = gauss_m(100, random_state=2)
        return X, y.astype(float)
    else:
        raise KeyError(name)
    return X, 2.0 * y - 1.0


def _fast_gram(X, gamma):
    """K from the fast kernel's rows, the values the fast solver reads."""
    kern = Kernel(X, "rbf", gamma=gamma)
    K = np.empty((X.shape[0], X.shape[0]))
    for i in range(X.shape[0]):
        kernel_row(kern.data, i, K[i])
    return K


def _dual(K, y, alpha):
    ay = alpha * y
    return float(alpha.sum() - 0.5 * ay @ K @ ay)


def _libsvm_dual(K, y, C):
    svc = SVC(C=C, kernel="precomputed", tol=1e-8).fit(K, y)
    alpha = np.zeros(len(y))
    alpha[svc.support_] = np.abs(svc.dual_coef_[0])
    return _dual(K, y, alpha)


def _ridge(K):
    return 1e-12 * max(1.0, np.abs(np.diag(K)).max())


def _solve_tol(K, idx, C, size):
    """Tolerance of a step whose ridge-regularised solves use ``K[idx, idx]``."""
    base = 1e-8 * max(1.0, C)
    if len(idx) == 0:
        return base
    A = K[np.ix_(idx, idx)] + _ridge(K) * np.eye(len(idx))
    return max(base, 100 * np.finfo(float).eps * np.linalg.cond(A) * max(1.0, C, size))


def _same_irwls_step(p, q, tol):
    """One IRWLS record against the reference's; AssertionError if they differ."""
    assert np.array_equal(p.working_set, q.working_set), "working set differs"
    assert (p.chunk, p.mode, p.method, p.moved, p.chunk_done) == (
        q.chunk, q.mode, q.method, q.moved, q.chunk_done), "step differs"
    assert np.array_equal(p.sets, q.sets), "sets differ"
    np.testing.assert_array_equal(np.isinf(p.weights), np.isinf(q.weights))
    assert np.abs(p.beta - q.beta).max() <= tol, "beta differs"
    assert abs(p.b - q.b) <= tol, "b differs"


def _same_outer_step(p, q, tol):
    """One chunking/decomposition record against the reference's."""
    assert np.array_equal(p.working_set, q.working_set), "working set differs"
    assert p.engine_iterations == q.engine_iterations, "inner iterations differ"
    assert np.abs(p.alpha_B - q.alpha_B).max() <= tol, "alpha_B differs"
    assert abs(p.b - q.b) <= tol, "b differs"
    assert abs(p.dual_objective - q.dual_objective) <= tol * len(p.alpha_B), "W differs"


def _ref_subproblem(sub):
    """A reference :class:`Subproblem` in the exact state of the fast
    ``ActiveSetSubproblem`` (reads its private history: Table 1's seen set
    configurations, bad-iteration count, best objective, feasible point)."""
    sp = ref_subproblem.Subproblem.__new__(ref_subproblem.Subproblem)
    sp.K, sp.y, sp.r, sp.C, sp.tol, sp.s0, sp.m = sub.K, sub.y, sub.r, sub.C, sub.tol, sub.s0, sub.m
    sp.beta, sp.Kb, sp.sets, sp.b = sub.beta.copy(), sub.Kb.copy(), sub.sets.copy(), sub.b
    sp.release = "all" if sub.rule == "irwls" else "worst"
    sp.release_cap = sub.release_cap
    sp.mode, sp.ridge, sp.max_iter = sub.mode, _ridge(sub.K), sub.max_iter
    sp.n_iter, sp.done, sp.moved, sp.method = sub.n_iter, sub.done, sub.moved, sub.method
    sp.seen, sp.bad, sp.degenerate = set(sub._seen), sub._bad, sub._degenerate
    sp.best_W, sp.ties = sub._best_W, 0
    sp.f_beta, sp.f_Kb, sp.f_b = sub.feasible_beta.copy(), sub.feasible_Kb.copy(), sub.feasible_b
    return sp


def _ref_state(run, K):
    """A reference :class:`ChunkingState` in the exact state of the fast run."""
    st = ref_irwls.ChunkingState(K, run.y, run.C, run.tol, run.m, run.strategy,
                                 copy.deepcopy(run.rng))
    st.beta, st.G, st.b, st.sets = run.beta.copy(), run.G.copy(), run.b, run.sets.copy()
    st.chunk, st.stalls, st.n_iter = run.chunk, run._stalls, run.n_iter
    st.Sw = None if run.Sw is None else run.Sw.copy()
    st.sp = None if run.sub is None else _ref_subproblem(run.sub)
    return st


def _replay_irwls(X, y, K, C, ws, seed, selection="random"):
    """Replay a fast IRWLS fit step by step; returns ``(steps, excused, modes)``."""
    run = IRWLSClassifier(cache_dtype=REF_DTYPE, C=C, gamma=1.0, working_set_size=ws, random_state=seed,
                          selection=selection).start(X, y)
    steps, excused, modes = 0, 0, set()
    while True:
        st = _ref_state(run, K)
        sub = run.sub
        line = sub is not None and not sub.done and sub.mode == "line"
        S1 = sub.sets == 1 if line else None
        _rounding.reset()
        q = ref_irwls.step(st)
        p = run.step()
        if p is None:
            assert q is None, f"the fast run stopped before step {steps + 1}, the reference not"
            return steps, excused, modes
        assert q is not None, f"the reference stopped at step {p.iteration}"
        steps += 1
        modes.add(p.mode)
        if line:
            tol = _solve_tol(sub.K, np.flatnonzero(S1), C, max(abs(p.b), np.abs(p.beta).max()))
        else:
            tol = 1e-10 * max(1.0, C)
        try:
            _same_irwls_step(p, q, tol)
        except AssertionError as err:
            assert st.tie, f"step {p.iteration} differs ({err}) and is not a flagged tie"
            excused += 1


def _replay_outer(scheme, X, y, K, C, q):
    """Replay a fast chunking/decomposition fit step by step."""
    if scheme == "chunking":
        run = ChunkingClassifier(cache_dtype=REF_DTYPE, C=C, gamma=1.0, working_set_size=q).start(X, y)

        def select(v, y_, a, C_, notes):
            return ref_chunking.chunk_select(v, y_, a, C_, q, notes)
    else:
        run = DecompositionClassifier(cache_dtype=REF_DTYPE, C=C, gamma=1.0, working_set_size=q,
                                      shrinking=False).start(X, y)

        def select(v, y_, a, C_, notes):
            return ref_decomposition.steepest_feasible(v, y_, a, C_, q, notes)
    steps = excused = 0
    while True:
        state = {"alpha": run.alpha.copy(), "G": run.G.copy(), "b": run.b}
        _rounding.reset()
        fields = ref_decomposition.outer_step(K, y, C, run.tol, state, select)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            p = run.step()
        if p is None:
            if fields is not None:  # the fast QP gave up (no progress): only at a tie
                assert state["ties"] or state["inner_ties"], (
                    f"the fast run stopped before step {steps + 1}, the reference not")
                excused += 1
            return steps, excused
        assert fields is not None, f"the reference stopped at step {p.iteration}"
        steps += 1
        r = DecompositionRecord(iteration=p.iteration, **fields)
        tol = _solve_tol(K, p.working_set, C, 0.0)
        try:
            _same_outer_step(p, r, tol)
        except AssertionError as err:
            assert state["ties"] or state["inner_ties"], (
                f"step {p.iteration} differs ({err}) and is not a flagged tie")
            excused += 1


IRWLS_CASES = [("moons", 1.0, 20, 0), ("moons", 10.0, 30, 1), ("blobs", 1.0, 16, 2),
               ("blobs", 1.0, 40, 0), ("duplicates", 1.0, 20, 3), ("gauss-m", 0.5, 25, 4),
               ("gauss-m", 10.0, 50, 5)]
OUTER_CASES = [("moons", 1.0), ("moons", 100.0), ("blobs", 10.0), ("duplicates", 1.0),
               ("gauss-m", 0.5)]


@pytest.mark.parametrize("name,C,ws,seed", IRWLS_CASES)
def test_irwls_replay_same_steps(name, C, ws, seed):
    X, y = _dataset(name)
    steps, excused, modes = _replay_irwls(X, y, _fast_gram(X, 1.0), C, ws, seed)
    assert steps > 20 and "table1" in modes
    assert excused <= max(1, 0.05 * steps), (excused, steps)


@pytest.mark.parametrize("name", ["moons", "blobs", "duplicates", "gauss-m"])
def test_kernel_entry_and_row_paths_agree_bitwise(name):
    """The premise of the comparisons: on these grids the fast kernel's entry
    path (blocks of uncached rows) and row path give the same bits."""
    X, _ = _dataset(name)
    kern = Kernel(X, "rbf", gamma=1.0)
    K = _fast_gram(X, 1.0)
    n = X.shape[0]
    entries = np.array([[kernel_value(kern.data, i, j) for j in range(n)] for i in range(n)])
    np.testing.assert_array_equal(entries, K)


@pytest.mark.parametrize("selection", ["largest", "smallest", "mixed"])
def test_irwls_replay_other_selections(selection):
    """Section 3's other strategies take the same steps too."""
    X, y = _dataset("gauss-m")
    steps, excused, _ = _replay_irwls(X, y, _fast_gram(X, 1.0), 1.0, 25, 0, selection)
    assert steps > 20 and excused <= max(1, 0.05 * steps), (excused, steps)


def test_irwls_cases_cover_both_modes():
    """The cases above exercise Table 1 and, in most of them, the
    line-search mode too (so both kinds of step are replayed)."""
    both = 0
    for name, C, ws, seed in IRWLS_CASES:
        X, y = _dataset(name)
        modes = set()
        IRWLSClassifier(cache_dtype=REF_DTYPE, C=C, gamma=1.0, working_set_size=ws, random_state=seed).fit(
            X, y, callback=lambda rec: modes.add(rec.mode))
        assert "table1" in modes
        both += modes == {"table1", "line"}
    assert both * 2 > len(IRWLS_CASES)


@pytest.mark.parametrize("name,C", OUTER_CASES)
@pytest.mark.parametrize("scheme", ["decomposition", "chunking"])
def test_outer_replay_same_steps(scheme, name, C):
    X, y = _dataset(name)
    steps, excused = _replay_outer(scheme, X, y, _fast_gram(X, 1.0), C, 8)
    assert steps >= 5
    assert excused <= max(1, 0.05 * steps), (excused, steps)


@pytest.mark.parametrize("name,C,ws,seed", IRWLS_CASES)
def test_irwls_free_run_bitwise_until_line_search(name, C, ws, seed):
    """From scratch, without any syncing: identical records (beta to the
    last bit) up to the first line-search iteration, and both at LIBSVM's
    optimum at the end."""
    X, y = _dataset(name)
    K = _fast_gram(X, 1.0)
    fast = []
    est = IRWLSClassifier(cache_dtype=REF_DTYPE, C=C, gamma=1.0, working_set_size=ws, random_state=seed).fit(
        X, y, callback=fast.append)
    ref = ref_irwls.fit(K, y, C, working_set_size=ws, random_state=seed)
    first_line = next((k for k, r in enumerate(fast) if r.mode == "line"), len(fast))
    assert first_line >= 1
    if first_line == len(fast):  # Table 1 all along: the whole run, bit for bit
        assert len(ref.records) == len(fast)
        np.testing.assert_array_equal(ref.alpha, est.alpha_)
    for p, q in zip(fast[:first_line], ref.records[:first_line]):
        _same_irwls_step(p, q, 0.0)
    assert max(r.chunk for r in ref.records) > 1  # the chunking really ran
    W_ref = _libsvm_dual(K, y, C)
    for alpha in (ref.alpha, est.alpha_):
        assert abs(_dual(K, y, alpha) - W_ref) <= 1e-3 * max(1.0, abs(W_ref))
        assert abs(alpha @ y) <= 1e-8 * max(1.0, C) and alpha.min() >= 0 and alpha.max() <= C


@pytest.mark.parametrize("name,C", OUTER_CASES)
@pytest.mark.parametrize("module", [ref_decomposition, ref_chunking])
def test_outer_reference_reaches_libsvm(module, name, C):
    X, y = _dataset(name)
    K = _fast_gram(X, 1.0)
    ref = module.fit(K, y, C, working_set_size=8)
    W_ref = _libsvm_dual(K, y, C)
    assert abs(_dual(K, y, ref.alpha) - W_ref) <= 1e-3 * max(1.0, abs(W_ref))
    assert abs(ref.alpha @ y) <= 1e-8 * max(1.0, C)
    assert ref.alpha.min() >= 0 and ref.alpha.max() <= C
    # the reference's own stopping test, recomputed here: maximal violation <= tol
    v = y - K @ (ref.alpha * y)
    up, low = ref_subproblem.up_low(y, ref.alpha, C)
    assert v[up].max() - v[low].min() <= 1e-3 + 1e-9


def test_irwls_random_selection_draws_like_the_estimator():
    """Same seed, same draws: the first working set equals the fast one,
    another seed gives another one."""
    X, y = _dataset("gauss-m")
    K = _fast_gram(X, 1.0)
    first = {}
    for seed in (0, 1):
        fast = next(iter(IRWLSClassifier(cache_dtype=REF_DTYPE, C=1.0, gamma=1.0, working_set_size=20,
                                         random_state=seed).iter_fit(X, y)))
        ref = ref_irwls.fit(K, y, 1.0, working_set_size=20, random_state=seed, max_iter=1)
        assert np.array_equal(fast.working_set, ref.records[0].working_set)
        first[seed] = fast.working_set
    assert not np.array_equal(first[0], first[1])


def test_replay_detects_a_modified_reference(monkeypatch):
    """The replay fails when the reference is changed: a selection that
    breaks ties the other way (its random order reversed), line-search
    iterations in place of Table 1, a decomposition taking one sample less."""
    X, y = _dataset("moons")
    K = _fast_gram(X, 1.0)
    real_select = ref_irwls.select_working_set

    class Reversed:
        def __init__(self, rng):
            self.rng = rng

        def permutation(self, n):
            return self.rng.permutation(n)[::-1]

        def choice(self, pool):
            return self.rng.choice(pool)

    with monkeypatch.context() as mp:
        mp.setattr(ref_irwls, "select_working_set",
                   lambda e, y_, sets, m, rng, *a: real_select(e, y_, sets, m, Reversed(rng), *a))
        with pytest.raises(AssertionError, match="working set differs"):
            _replay_irwls(X, y, K, 1.0, 20, 0)
    with monkeypatch.context() as mp:  # line-search iterations where Table 1 should run
        mp.setattr(ref_irwls, "table1_iteration", ref_subproblem.line_search_iteration)
        with pytest.raises(AssertionError, match="differs"):
            _replay_irwls(X, y, K, 10.0, 30, 1)
    real_sf = ref_decomposition.steepest_feasible
    with monkeypatch.context() as mp:
        mp.setattr(ref_decomposition, "steepest_feasible",
                   lambda v, y_, a, C_, q, t=None: real_sf(v, y_, a, C_, q - 1, t))
        with pytest.raises(AssertionError, match="working set differs"):
            _replay_outer("decomposition", X, y, K, 1.0, 8)
    # and a record changed by 1e-9 is caught by the comparison itself
    fast = next(iter(IRWLSClassifier(cache_dtype=REF_DTYPE, C=1.0, gamma=1.0, working_set_size=20,
                                     random_state=0).iter_fit(X, y)))
    ref = ref_irwls.fit(K, y, 1.0, working_set_size=20, random_state=0, max_iter=2).records
    _same_irwls_step(fast, ref[0], 1e-10)
    fields = {f: getattr(ref[0], f) for f in ref[0].__dataclass_fields__}
    with pytest.raises(AssertionError, match="beta differs"):
        _same_irwls_step(fast, type(ref[0])(**{**fields, "beta": ref[0].beta + 1e-9}), 1e-10)


@pytest.mark.parametrize("module", [ref_irwls, ref_chunking, ref_decomposition])
def test_explain_names_existing_tags(module):
    X, y = _dataset("moons")
    K = _fast_gram(X, 1.0)
    fit = (module.fit(K, y, 10.0, working_set_size=20, random_state=0)
           if module is ref_irwls else module.fit(K, y, 10.0, working_set_size=8))
    seen = set()
    for rec in fit.records:
        for func, tags in module.explain(rec):
            assert tags and tags <= tags_of(func), (func.__name__, tags - tags_of(func))
            assert ">>" in source_text(func, tags)
            seen |= {(func.__name__, t) for t in tags}
    if module is ref_irwls:  # the rules of Table 1 all show up on this run
        for tag in ("t1-solve", "rule-a", "rule-b", "rule-c", "done"):
            assert any(t == tag for _, t in seen), tag


def test_bad_input():
    K = np.eye(4)
    y = np.array([1.0, -1.0, 1.0, -1.0])
    with pytest.raises(ValueError, match="y in"):
        ref_irwls.fit(K, np.array([0.0, 1.0, 0.0, 1.0]))
    with pytest.raises(ValueError, match="C and tol"):
        ref_decomposition.fit(K, y, C=0.0)
    with pytest.raises(ValueError, match="working_set_size"):
        ref_chunking.fit(K, y, working_set_size=9)
    with pytest.raises(ValueError, match=r"\(n, n\)"):
        ref_decomposition.fit(np.eye(3), y)


@pytest.mark.parametrize("gap", [1e-15, 1e-6])
def test_table1_downhill_rule_matches_the_reference(gap):
    """The reference's Table 1 (svmlab.reference.irwls.table1_iteration)
    takes the same decision as the fast sub-problem when the best value is
    above the point's W by rounding (1e-15, relative: Table 1 goes on) or by
    a real drop (1e-6: line-search mode), from the same state."""
    from svmlab.decomposition._active_set import ActiveSetSubproblem
    x = np.array([0.0, 1.0, 2.5, 4.0])
    y = np.array([1.0, -1.0, 1.0, -1.0])
    K = np.exp(-0.5 * (x[:, None] - x[None, :]) ** 2)
    M = np.ones((3, 3))
    M[:2, :2], M[2, 2] = K[:2, :2], 0.0
    beta = np.zeros(4)
    beta[:2] = np.linalg.solve(M, np.append(y[:2], 0.0))[:2]
    sub = ActiveSetSubproblem(K, y, beta, y.copy(), C=100.0, tol=1e-3, mode="table1")
    W0 = float(y @ beta - 0.5 * beta @ K @ beta)
    sub._best_W = W0 + gap * abs(W0)
    sp = _ref_subproblem(sub)
    sub.iterate()
    ref_irwls.table1_iteration(sp)
    assert sub.mode == sp.mode == ("table1" if gap < 1e-12 else "line")
    assert sub.moved == sp.moved
    np.testing.assert_array_equal(sub.sets, sp.sets)
    np.testing.assert_allclose(sub.beta, sp.beta, rtol=0, atol=1e-12)
