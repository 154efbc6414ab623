"""The readable references (svmlab.reference.smo, .wss2) take THE SAME STEPS
as the compiled solver, and reach LIBSVM's optimum.

The fast path is ``SMOClassifier(shrinking=False)`` with a cache that holds
every row, fitted with a callback collecting its records.  The reference runs
on the kernel matrix the compiled solver sees (its rows and its diagonal,
``Kernel.row``/``Kernel.diag``; for Platt's folded linear kernel the scalar
``Kernel.value`` and the data ``X``).  Same steps means: the same (i1, i2)
sequence, the same heuristic and branch data, alpha (replayed from the
records) and b within 1e-10 after every step, the same final alpha_ and
intercept_.  Objectives and KKT are computed here from alpha with the naive
``tests/reference.py`` (sklearn's kernels), never taken from a solver.
"""

import dataclasses
import inspect
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs, make_classification, make_moons

import reference as R
from svmlab import SMOClassifier
from svmlab.smo import _core as core
from svmlab.smo import _platt as platt
from svmlab.kernels.cache import n_slots_for
from svmlab.kernels import Kernel
from svmlab.reference import _source
from svmlab.reference import smo as ref_smo
from svmlab.reference import wss2 as ref_wss2

CACHE_MB = 40.0


def _data(name):
    if name == "moons":
        return make_moons(80, noise=0.25, random_state=1)
    if name == "blobs":
        return make_blobs(70, centers=2, cluster_std=3.0, random_state=3)
    if name == "dups":  # duplicate points: exactly tied errors
        X0, y0 = make_moons(50, noise=0.3, random_state=4)
        return np.vstack([X0, X0[:20]]), np.concatenate([y0, y0[:20]])
    if name == "dups-flipped":  # some duplicates with the other label: steps with eta = 0
        X0, y0 = make_moons(40, noise=0.3, random_state=4)
        y1 = y0.copy()
        y1[:3] = 1 - y1[:3]
        return np.vstack([X0, X0]), np.concatenate([y0, y1])
    if name == "sigmoid-data":  # scaled for a non-PSD sigmoid kernel (eta < 0)
        X, y = make_classification(120, 4, random_state=7)
        return X / np.abs(X).max(), y
    raise KeyError(name)


# (data, kernel, kernel parameters, C)
CONFIGS = [
    ("moons", "rbf", dict(gamma=1.0), 1.0),
    ("moons", "rbf", dict(gamma=2.0), 100.0),  # large C
    ("blobs", "rbf", dict(gamma=0.1), 0.05),  # small C: most multipliers at C
    ("dups", "rbf", dict(gamma=1.0), 5.0),
    ("dups-flipped", "rbf", dict(gamma=1.0), 5.0),
    ("sigmoid-data", "sigmoid", dict(gamma=2.0, coef0=-1.0), 1.0),
    ("moons", "poly", dict(gamma=1.0, coef0=1.0, degree=3), 10.0),
    ("blobs", "linear", {}, 0.5),
    ("dups", "linear", {}, 1.0),
]
IDS = [f"{c[0]}-{c[1]}-C{c[3]}" for c in CONFIGS]


def _kernel(X, kernel, kw):
    return Kernel(X, kernel, kw.get("gamma", 1.0), kw.get("degree", 3), kw.get("coef0", 0.0))


def _solver_matrix(X, kernel, kw, folded):
    """(K, kdiag) as the compiled solver sees them: cached rows (Kernel.row),
    or, for Platt's folded linear kernel, the scalar products Kernel.value."""
    k = _kernel(X, kernel, kw)
    n = X.shape[0]
    if folded:
        K = np.array([[k.value(i, j) for j in range(n)] for i in range(n)])
    else:
        K = np.vstack([k.row(i) for i in range(n)])
    return K, k.diag()


def _fast(X, y, kernel, kw, C, selection, seed, tol=1e-3, eps=1e-3, sample_weight=None,
          class_weight=None):
    assert n_slots_for(X.shape[0], CACHE_MB) >= X.shape[0]  # every row fits
    est = SMOClassifier(C=C, kernel=kernel, selection=selection, shrinking=False,
                        cache_dtype="float64", cache_size=CACHE_MB, random_state=seed, tol=tol, eps=eps,
                        progress=False, class_weight=class_weight, **kw)
    records = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Platt's eps=1e-3 may stall: same on both sides
        est.fit(X, y, sample_weight=sample_weight, callback=records.append)
    yp = np.where(y == est.classes_[1], 1.0, -1.0)
    return est, records, yp


def _assert_branch_present(name, records):
    """The eta <= 0 branch is really among the compared steps."""
    if name == "dups-flipped":
        assert any(r.eta == 0.0 for r in records)  # a duplicate pair, opposite labels
    if name == "sigmoid-data":
        assert any(r.eta < 0.0 for r in records)


def _replay(records, n):
    """alpha after every step, rebuilt from the records."""
    alpha = np.zeros(n)
    out = []
    for r in records:
        alpha[r.i1], alpha[r.i2] = r.a1_new, r.a2_new
        out.append(alpha.copy())
    return out


EXACT = ("i1", "i2", "heuristic", "clipped", "examine_all", "n_nonbound", "n_active",
         "iteration", "y1", "y2")
CLOSE = ("a1_old", "a2_old", "a1_new", "a2_new", "L", "H", "eta", "E1", "E2", "b_old",
         "b_new", "a2_unclipped", "K11", "K12", "K22", "delta_objective", "C1", "C2")


def compare_steps(fast, ref, n, atol=1e-10):
    """None if the two record sequences take the same steps, else a message
    naming the first difference: the (i1, i2) sequence, the discrete fields,
    the float fields and alpha after every step within ``atol``."""
    for k, (af, ar, f, r) in enumerate(zip(_replay(fast, n), _replay(ref, n), fast, ref)):
        if (f.i1, f.i2) != (r.i1, r.i2):
            return f"step {k}: pair {(f.i1, f.i2)} against {(r.i1, r.i2)}"
        for name in EXACT:
            if getattr(f, name) != getattr(r, name):
                return f"step {k}: {name} {getattr(f, name)!r} against {getattr(r, name)!r}"
        for name in CLOSE:
            u, v = getattr(f, name), getattr(r, name)
            if not (abs(u - v) <= atol or (np.isnan(u) and np.isnan(v))):
                return f"step {k}: {name} {u!r} against {v!r}"
        if np.max(np.abs(af - ar)) > atol:
            return f"step {k}: alpha differs by {np.max(np.abs(af - ar))}"
    if len(fast) != len(ref):
        return f"{len(fast)} steps against {len(ref)}"
    return None


def _gbar_reads(records, C):
    """Row reads the compiled solver makes to track the multipliers at C
    (one per multiplier reaching or leaving C), which the reference does not.
    With weights each multiplier's own bound (the record's C1, C2) counts."""
    reads = []
    for r in records:
        c1 = r.C1 if np.isfinite(r.C1) else C
        c2 = r.C2 if np.isfinite(r.C2) else C
        reads.append(((r.a1_old >= c1) != (r.a1_new >= c1))
                     + ((r.a2_old >= c2) != (r.a2_new >= c2)))
    return np.cumsum(reads)


def _check_cache_fields(fast, ref, C, extra_reads_per_step):
    assert [r.cache_misses for r in fast] == [r.cache_misses for r in ref]
    assert [r.kernel_evaluations for r in fast] == [r.kernel_evaluations for r in ref]
    # hits: the compiled solver's extra reads for alpha = C, minus the
    # reference's extra read of row i2 per step (Platt) -- as documented
    steps = np.arange(1, len(ref) + 1)
    expected = (np.array([r.cache_hits for r in ref]) + _gbar_reads(ref, C)
                - extra_reads_per_step * steps)
    np.testing.assert_array_equal([r.cache_hits for r in fast], expected)


# ---------------------------------------------------------------- generator
def test_park_miller_equals_compiled_generator():
    for seed in (1, 12345, 2**31 - 2, ref_smo.park_miller_seed(0)):
        ist = np.zeros(core.IS_SIZE, dtype=np.int64)
        ist[core.IS_RNG] = seed
        mine = ref_smo.ParkMiller(seed)
        assert [mine.next() for _ in range(2000)] == [int(platt.rng_next(ist)) for _ in range(2000)]
    # independent value: the 10000th draw from state 1 with a = 48271 (the
    # check value of C++11's std::minstd_rand)
    g = ref_smo.ParkMiller(1)
    for _ in range(9999):
        g.next()
    assert g.next() == 399268537
    with pytest.raises(ValueError, match="Park-Miller"):
        ref_smo.ParkMiller(0)


@pytest.mark.parametrize("seed", [0, 7, 2024])
def test_seed_is_the_estimators(seed):
    X, y = _data("moons")
    run = SMOClassifier(random_state=seed, cache_dtype="float64", progress=False).start(X, y)
    assert run.ist[core.IS_RNG] == ref_smo.park_miller_seed(seed)


# ------------------------------------------------------------ same steps
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("config", CONFIGS, ids=IDS)
def test_platt_same_steps_as_compiled(config, seed):
    name, kernel, kw, C = config
    X, y = _data(name)
    est, fast, yp = _fast(X, y, kernel, kw, C, "platt", seed)
    folded = kernel == "linear"
    K, kdiag = _solver_matrix(X, kernel, kw, folded)
    res = ref_smo.smo(K, yp, C, tol=1e-3, eps=1e-3, random_state=seed, kdiag=kdiag,
                      X=X if folded else None)
    assert len(fast) > 20
    _assert_branch_present(name, fast)
    assert compare_steps(fast, res.records, len(y)) is None, compare_steps(fast, res.records,
                                                                           len(y))
    np.testing.assert_allclose(res.alpha, est.alpha_, rtol=0, atol=1e-10)
    assert abs(res.b - est.intercept_[0]) <= 1e-10
    np.testing.assert_allclose(_replay(res.records, len(y))[-1], res.alpha, rtol=0, atol=0)
    assert res.converged == est.converged_  # both end honestly: stalled is not converged
    if folded:  # Platt's linear SMO reads no kernel rows, on both sides
        assert all(r.cache_misses == r.cache_hits == 0 for r in fast + res.records)
    else:
        _check_cache_fields(fast, res.records, C, extra_reads_per_step=1)


@pytest.mark.parametrize("config", CONFIGS, ids=IDS)
def test_wss2_same_steps_as_compiled(config):
    name, kernel, kw, C = config
    X, y = _data(name)
    est, fast, yp = _fast(X, y, kernel, kw, C, "wss2", 0)
    K, kdiag = _solver_matrix(X, kernel, kw, folded=False)  # wss2 keeps f0 from rows
    res = ref_wss2.wss2(K, yp, C, tol=1e-3, kdiag=kdiag)
    assert res.converged and est.converged_ and len(fast) > 10
    _assert_branch_present(name, fast)
    assert all(r.heuristic == "wss2" for r in res.records)
    assert compare_steps(fast, res.records, len(y)) is None, compare_steps(fast, res.records,
                                                                           len(y))
    np.testing.assert_allclose(res.alpha, est.alpha_, rtol=0, atol=1e-10)
    assert abs(res.b - est.intercept_[0]) <= 1e-10  # LIBSVM's intercept on both sides
    _check_cache_fields(fast, res.records, C, extra_reads_per_step=0)


# weighted: per-example bounds C_i = C * class_weight[y_i] * sample_weight_i
# (LIBSVM's meaning), computed here and handed to the references as C
WEIGHTED = [CONFIGS[0], CONFIGS[2], CONFIGS[4], CONFIGS[6], CONFIGS[7]]
WEIGHTED_IDS = [IDS[k] for k in (0, 2, 4, 6, 7)]


def _weights(y, C):
    rng = np.random.RandomState(len(y))
    sw = rng.choice([0.25, 1.0, 3.0], len(y))
    cw = {0: 2.0, 1: 0.5}
    return sw, cw, C * np.where(y == 1, cw[1], cw[0]) * sw


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("config", WEIGHTED, ids=WEIGHTED_IDS)
def test_platt_same_steps_as_compiled_weighted(config, seed):
    name, kernel, kw, C = config
    X, y = _data(name)
    sw, cw, Cv = _weights(y, C)
    est, fast, yp = _fast(X, y, kernel, kw, C, "platt", seed, sample_weight=sw,
                          class_weight=cw)
    folded = kernel == "linear"
    K, kdiag = _solver_matrix(X, kernel, kw, folded)
    res = ref_smo.smo(K, yp, Cv, tol=1e-3, eps=1e-3, random_state=seed, kdiag=kdiag,
                      X=X if folded else None)
    assert len(fast) > 20
    assert any(r.C1 != r.C2 for r in fast)  # pairs with different boxes
    assert all((r.C1, r.C2) == (Cv[r.i1], Cv[r.i2]) for r in res.records)
    assert compare_steps(fast, res.records, len(y)) is None, compare_steps(fast, res.records,
                                                                           len(y))
    np.testing.assert_allclose(res.alpha, est.alpha_, rtol=0, atol=1e-10)
    assert abs(res.b - est.intercept_[0]) <= 1e-10
    assert res.converged == est.converged_
    if not folded:
        _check_cache_fields(fast, res.records, C, extra_reads_per_step=1)


@pytest.mark.parametrize("config", WEIGHTED, ids=WEIGHTED_IDS)
def test_wss2_same_steps_as_compiled_weighted(config):
    name, kernel, kw, C = config
    X, y = _data(name)
    sw, cw, Cv = _weights(y, C)
    est, fast, yp = _fast(X, y, kernel, kw, C, "wss2", 0, sample_weight=sw, class_weight=cw)
    K, kdiag = _solver_matrix(X, kernel, kw, folded=False)
    res = ref_wss2.wss2(K, yp, Cv, tol=1e-3, kdiag=kdiag)
    assert res.converged and est.converged_ and len(fast) > 10
    assert any(r.C1 != r.C2 for r in fast)
    assert compare_steps(fast, res.records, len(y)) is None, compare_steps(fast, res.records,
                                                                           len(y))
    np.testing.assert_allclose(res.alpha, est.alpha_, rtol=0, atol=1e-10)
    assert abs(res.b - est.intercept_[0]) <= 1e-10
    _check_cache_fields(fast, res.records, C, extra_reads_per_step=0)
    # and without the weights the steps differ (the comparison sees the bounds)
    plain = ref_wss2.wss2(K, yp, C, tol=1e-3, kdiag=kdiag)
    assert compare_steps(fast, plain.records, len(y)) is not None


def test_branches_are_exercised():
    """The same-steps configurations cover every branch of the step."""
    seen = set()
    for name, kernel, kw, C in CONFIGS:
        X, y = _data(name)
        folded = kernel == "linear"
        K, kdiag = _solver_matrix(X, kernel, kw, folded)
        yp = np.where(y == np.unique(y)[1], 1.0, -1.0)
        res = ref_smo.smo(K, yp, C, kdiag=kdiag, X=X if folded else None)
        for r in res.records:
            for _, tags in ref_smo.explain(r, C):
                seen |= tags
    assert {"clip-L", "clip-H", "interior", "eta-nonpositive", "end-L", "end-H", "b1", "b2",
            "b-average", "heuristic-maxdiff", "heuristic-nonbound", "heuristic-full",
            "examine-all", "examine-nonbound", "L-H-same", "L-H-differ", "update-f0",
            "update-w"} <= seen


# ------------------------------------------------- the comparison can fail
def test_comparison_detects_modified_sequences():
    X, y = _data("moons")
    est, fast, yp = _fast(X, y, "rbf", dict(gamma=1.0), 1.0, "platt", 0)
    n = len(y)
    assert compare_steps(fast, list(fast), n) is None
    k = len(fast) // 2
    swapped = fast[:k] + [fast[k + 1], fast[k]] + fast[k + 2:]
    assert "pair" in compare_steps(fast, swapped, n)
    assert "steps against" in compare_steps(fast, fast[:-1], n)
    # a broken clip: a2 moved 1e-9 past its clipped value
    clipped = next(i for i, r in enumerate(fast) if r.clipped and r.eta > 0)
    bad = dataclasses.replace(fast[clipped], a2_new=fast[clipped].a2_new + 1e-9)
    assert compare_steps(fast, fast[:clipped] + [bad] + fast[clipped + 1:], n) is not None
    other = dataclasses.replace(fast[3], heuristic="full-scan" if fast[3].heuristic
                                != "full-scan" else "max|E1-E2|")
    assert "heuristic" in compare_steps(fast, fast[:3] + [other] + fast[4:], n)


def test_a_wrong_reference_does_not_match(monkeypatch):
    """Change one documented decision of the reference: it no longer matches."""
    X, y = _data("moons")
    est, fast, yp = _fast(X, y, "rbf", dict(gamma=1.0), 1.0, "platt", 0)
    K, kdiag = _solver_matrix(X, "rbf", dict(gamma=1.0), folded=False)
    assert compare_steps(fast, ref_smo.smo(K, yp, 1.0, kdiag=kdiag).records, len(y)) is None

    class SortedList(ref_smo.PlattSMO):  # the non-bound list kept sorted
        def update_nonbound_list(self, i, inside):
            super().update_nonbound_list(i, inside)
            self.nonbound.sort()

    records = list(iter(SortedList(K, yp, 1.0, kdiag=kdiag).step, None))
    assert compare_steps(fast, records, len(y)) is not None
    # Park and Miller's original multiplier 16807 instead of 48271
    def next_16807(self):
        self.state = self.state * 16807 % (2**31 - 1)
        return self.state

    monkeypatch.setattr(ref_smo.ParkMiller, "next", next_16807)
    assert compare_steps(fast, ref_smo.smo(K, yp, 1.0, kdiag=kdiag).records, len(y)) is not None


# ------------------------------------------------------ LIBSVM's optimum
@pytest.mark.parametrize("config", [CONFIGS[0], CONFIGS[2], CONFIGS[3], CONFIGS[7]],
                         ids=[IDS[0], IDS[2], IDS[3], IDS[7]])
def test_reference_reaches_libsvm_objective(config):
    name, kernel, kw, C = config
    X, y = _data(name)
    gamma, degree, coef0 = kw.get("gamma", 1.0), kw.get("degree", 3), kw.get("coef0", 0.0)
    K = R.gram(X, kernel, gamma, degree, coef0)  # sklearn's kernel, not svmlab's
    yp = R.to_pm(y)
    _, b_ref, W_ref = R.libsvm_dual(X, y, C, kernel, gamma, degree, coef0, tol=1e-6)
    for res in (ref_smo.smo(K, yp, C, tol=1e-3, eps=1e-6, random_state=0),
                ref_wss2.wss2(K, yp, C, tol=1e-4)):
        a = res.alpha
        assert np.all(a >= 0) and np.all(a <= C) and abs(a @ yp) <= 1e-9 * max(1.0, C)
        W = R.dual_objective(K, yp, a)
        assert abs(W - W_ref) <= 1e-3 * max(1.0, abs(W_ref)), (W, W_ref)
        assert R.kkt_violation(K, yp, a, res.b, C) <= 3e-3


# ------------------------------------------------------------- explain
@pytest.mark.parametrize("module", [ref_smo, ref_wss2])
def test_explain_names_existing_tags(module):
    X, y = _data("dups-flipped")
    K, kdiag = _solver_matrix(X, "rbf", dict(gamma=1.0), folded=False)
    yp = np.where(y == 1, 1.0, -1.0)
    C = 5.0
    res = ref_smo.smo(K, yp, C, kdiag=kdiag) if module is ref_smo else \
        ref_wss2.wss2(K, yp, C, kdiag=kdiag)
    shown, known = set(), {}
    for r in res.records:
        explained = module.explain(r, C)
        for f, _ in explained:
            if f not in known:
                known[f] = _source.tags_of(f)
        assert explained and all(tags <= known[f] for f, tags in explained)
        for f, tags in explained:
            if (f, frozenset(tags)) not in shown:
                shown.add((f, frozenset(tags)))
                html = _source.source_html(f, tags)
                assert html.count("background:#ffe58a") >= len(tags)  # a line per tag at least
        # eqs. 20-21 read off the record: the same rule as with C given,
        # unless b1 and b2 coincide (then any rule gives b_new)
        d1, d2 = r.y1 * (r.a1_new - r.a1_old), r.y2 * (r.a2_new - r.a2_old)
        b1 = r.b_old - r.E1 - d1 * r.K11 - d2 * r.K12
        b2 = r.b_old - r.E2 - d1 * r.K12 - d2 * r.K22
        if b1 != b2:
            assert module.explain(r) == explained
    other = ref_wss2 if module is ref_smo else ref_smo
    with pytest.raises(ValueError, match="not a"):
        other.explain(res.records[0], C)


# ---------------------------------------------------------- API and input
def test_max_iter_callback_and_stepping():
    X, y = _data("moons")
    K = R.gram(X, "rbf", 1.0)
    yp = R.to_pm(y)
    full = ref_smo.smo(K, yp, 1.0)
    assert ref_smo.smo(K, yp, 1.0, max_iter=5).n_iter == 5
    seen = []
    res = ref_smo.smo(K, yp, 1.0, callback=lambda r: seen.append(r) or len(seen) < 3)
    assert len(seen) == 3 and res.n_iter == 3 and not res.converged
    run = ref_smo.PlattSMO(K, yp, 1.0)
    stepped = list(iter(run.step, None))
    assert [(r.i1, r.i2) for r in stepped] == [(r.i1, r.i2) for r in full.records]
    assert run.step() is None and run.converged
    np.testing.assert_array_equal(run.alpha, full.alpha)


def test_folded_w_needs_the_linear_kernel():
    X, y = _data("moons")
    with pytest.raises(ValueError, match="linear kernel only"):
        ref_smo.smo(R.gram(X, "rbf", 1.0), R.to_pm(y), 1.0, X=X)


@pytest.mark.parametrize("args, match", [
    ((np.eye(3), [1, -1], 1.0), "n x n"),
    ((np.eye(2), [1, 2], 1.0), "-1 or \\+1"),
    ((np.full((2, 2), np.nan), [1, -1], 1.0), "NaN"),
    ((np.eye(2), [1, -1], 0.0), "C > 0"),
    ((np.eye(2), [1, -1], -1.0), "C > 0"),
])
def test_bad_input(args, match):
    for make in (ref_smo.smo, ref_wss2.wss2):
        with pytest.raises(ValueError, match=match):
            make(*args)


def test_modules_are_short():
    for module in (ref_smo, ref_wss2):
        assert len(inspect.getsource(module).splitlines()) <= 300
