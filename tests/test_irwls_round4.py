"""IRWLS, issue 15 round 4: the pieces added for the small dense cases,
each against a naive twin or an independent optimum computed here.

* Table 1 hands a working set over to the line-search mode after freeing
  more violators than there were free samples (back to the point before);
  the paper's Table 1 (``handover=False``) solves (3) with all of them
  free.  Either way the sub-problem ends at the optimum of the QP (LIBSVM
  on the precomputed kernel).
* ``chol_times`` (``K_11 v`` from the kept factor) against the dense product.
* ``flush_pending`` (the deferred ``K beta`` update, from rows of ``K'``)
  against the sum written out here.
* ``kernel_block_into``: a square block with no cached row (the upper
  triangle by panels, mirrored) against single kernel rows, exactly
  symmetric; ``n_direct`` = the entries it computed.
* ``chol_delete`` (four rows at a time) bit for bit the column-oriented
  deletion on factors larger than the four-row blocks.
* the default working set: every sample up to 800 of them, else 400; a
  fit with n <= 800 (one working set, G updated from the block) reaches
  LIBSVM's optimum.
"""

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_moons
from sklearn.svm import SVC

from svmlab._linalg import chol_delete, chol_factor, chol_times
from svmlab.decomposition._active_set import TABLE1_HANDOVER_MIN, ActiveSetSubproblem, S1, S2
from svmlab.decomposition._kblock import PANEL, kernel_block_into
from svmlab.decomposition._line_search import flush_pending, pending_into
from svmlab.decomposition.irwls import DEFAULT_WORKING_SET, IRWLSClassifier, default_working_set
from svmlab.kernels import Kernel, kernel_row
from svmlab.kernels.cache import KernelCache, get_row

from svmlab.reference import irwls as ref_irwls

from reference import dual_objective, gram, kkt_violation, libsvm_dual, to_pm
from test_irwls_speed import _chol_delete_columns
from test_reference_decomposition import _fast_gram, _replay_irwls


def _problem(n=120, seed=0, gamma=0.5):
    X, y = make_classification(n, 5, n_informative=3, random_state=seed, flip_y=0.1)
    return X, 2.0 * y - 1.0, gram(X, "rbf", gamma)


def _qp_optimum(K, y, C):
    """The dual optimum of the sub-problem with r = y, s0 = 0 (LIBSVM on the
    precomputed kernel, tight tolerance)."""
    svc = SVC(C=C, kernel="precomputed", tol=1e-8).fit(K, y)
    a = np.zeros(len(y))
    a[svc.support_] = np.abs(svc.dual_coef_[0])
    return dual_objective(K, y, a)


# ------------------------------------------------------------ Table 1 hand-over
@pytest.mark.parametrize("C", [1.0, 100.0])
def test_table1_hands_over_after_freeing_more_violators_than_free_samples(C):
    X, y, K = _problem()
    n = len(y)
    sub = ActiveSetSubproblem(K, y, np.zeros(n), y.copy(), C, 1e-3)
    assert not np.any(sub.sets == S1)
    sub.iterate()  # the paper's Table 1: S1 empty, rule c frees every sample
    assert sub.mode == "table1" and sub.method == "bounds"
    assert sub.moved == (0, 0, n, 0) and np.all(sub.sets == S1)
    sub.iterate()  # n freed > 0 free before: back to beta = 0, line search
    assert sub.mode == "line" and sub.moved == (0, 0, 0, 0)
    assert np.all(sub.beta == 0.0) and np.all(sub.sets == S2)
    sub.solve()
    a = sub.alpha
    W_ref = _qp_optimum(K, y, C)
    assert abs(dual_objective(K, y, a) - W_ref) <= 1e-3 * abs(W_ref)
    assert abs(sub.beta.sum()) <= 1e-9 * (1 + C * n)
    assert kkt_violation(K, y, a, sub.b, C) <= 1e-3 * 1.0001


def test_paper_table1_without_hand_over_solves_with_every_sample_free():
    X, y, K = _problem()
    n = len(y)
    sub = ActiveSetSubproblem(K, y, np.zeros(n), y.copy(), 1.0, 1e-3, handover=False)
    sub.iterate()
    sub.iterate()  # (3) on all n samples, then rules a/b clip
    assert sub.mode == "table1" and sub.method == "cholesky" and sum(sub.moved[:2]) > 0
    sub.solve()
    W_ref = _qp_optimum(K, y, 1.0)
    assert abs(dual_objective(K, y, sub.alpha) - W_ref) <= 1e-3 * abs(W_ref)


def test_no_hand_over_with_few_free_samples():
    X, y, K = _problem(TABLE1_HANDOVER_MIN)
    sub = ActiveSetSubproblem(K, y, np.zeros(len(y)), y.copy(), 1.0, 1e-3)
    sub.iterate()
    sub.iterate()  # all 100 free: (3) is small, Table 1 goes on
    assert sub.mode == "table1" and sub.method == "cholesky"


def _moons(n, seed):
    """Coordinates rounded to 1/1024 (exact dot products: the reference and
    the fast code see the same kernel values, as tests/test_reference_decomposition.py)."""
    X, y = make_moons(n, noise=0.3, random_state=seed)
    return np.round(X * 1024) / 1024, 2.0 * y - 1.0


def test_hand_over_in_a_fit_and_the_reference_replays_it():
    X, y = _moons(300, 4)
    recs = list(IRWLSClassifier(C=1.0, gamma=1.0, working_set_size=150, random_state=0,
                                cache_dtype="float64").iter_fit(X, y))
    first, second = recs[0], recs[1]
    # the first working set: Table 1 frees its 150 violators, then hands over
    assert first.mode == "table1" and sum(first.moved[2:]) == 150
    assert second.mode == "line" and second.chunk == 1 and second.moved == (0, 0, 0, 0)
    assert np.all(second.beta == 0.0)
    # the reference takes the same steps (replayed from the fast state)
    steps, excused, modes = _replay_irwls(X, y, _fast_gram(X, 1.0), 1.0, 150, 0, "mixed")
    assert steps == len(recs) and modes == {"table1", "line"}
    assert excused <= max(1, 0.05 * steps), (excused, steps)
    # and from scratch, bit for bit up to the hand-over
    K = _fast_gram(X, 1.0)
    ref = ref_irwls.fit(K, y, 1.0, working_set_size=150, random_state=0)
    np.testing.assert_array_equal(ref.records[0].beta, first.beta)
    assert (ref.records[1].mode, ref.records[1].moved) == ("line", (0, 0, 0, 0))


# ------------------------------------------------------------ chol_times, flush
def test_chol_times_is_K11_times_v():
    rng = np.random.default_rng(0)
    m = 50
    A = rng.standard_normal((m, m + 3))
    K = A @ A.T
    order = rng.permutation(m)[:37].astype(np.int64)
    n = len(order)
    for rr in (1e-12, 1e-2):
        L = np.zeros((m, m))
        assert chol_factor(K, order, n, rr, L)
        v = rng.standard_normal(n)
        out, tmp = np.empty(m), np.empty(m)
        chol_times(L, n, rr, v, out, tmp)
        want = K[np.ix_(order, order)] @ v
        atol = 1e-12 * np.abs(K).max() * np.abs(v).sum()
        np.testing.assert_allclose(out[:n], want, rtol=0, atol=atol)


def test_flush_pending_adds_the_deferred_part_outside_S1():
    rng = np.random.default_rng(1)
    m = 30
    K = rng.standard_normal((m, m))  # not symmetric: rows of KT = K.T
    KT = np.ascontiguousarray(K.T)
    sets = rng.choice(np.array([1, 2, 3], np.int8), m)
    pidx = rng.permutation(m)[:9].astype(np.int64)
    pend = np.zeros(m)
    pend[pidx] = rng.standard_normal(9)
    inp = np.zeros(m, np.bool_)
    inp[pidx] = True
    Kb0 = rng.standard_normal(m)
    Kb = Kb0.copy()
    p1, i1 = pend.copy(), inp.copy()
    pending_into(KT, Kb, sets, p1, pidx, 9)
    np.testing.assert_array_equal(p1, pend)  # the pending state is kept
    np.testing.assert_array_equal(i1, inp)
    want = Kb0 + np.where(sets != 1, K[:, pidx] @ pend[pidx], 0.0)
    np.testing.assert_allclose(Kb, want, rtol=1e-13, atol=1e-13)
    Kb = Kb0.copy()
    p2, i2 = pend.copy(), inp.copy()
    assert flush_pending(KT, Kb, sets, p2, pidx, 9, i2) == 0
    np.testing.assert_allclose(Kb, want, rtol=1e-13, atol=1e-13)
    assert not p2.any() and not i2.any()


# ------------------------------------------------------------ K_BB blocks
@pytest.mark.parametrize("m", [5, PANEL, PANEL + 1, 2 * PANEL + 7])
def test_square_block_by_upper_triangle_equals_rows(m):
    rng = np.random.default_rng(m)
    X = rng.standard_normal((300, 6))
    kern = Kernel(X, "rbf", gamma=0.2)
    cache = KernelCache(kern, 200.0, dtype="float64")
    rows = np.sort(rng.choice(300, m, replace=False)).astype(np.int64)
    out, tmp = np.empty((m, m)), np.empty((m, m))
    n_direct = kernel_block_into(kern.data, cache.data, rows, rows, out, tmp)
    R = np.empty((m, 300))
    for a, i in enumerate(rows):
        kernel_row(kern.data, i, R[a])
    np.testing.assert_allclose(out, R[:, rows], rtol=0, atol=1e-14)
    assert np.array_equal(out, out.T)
    panels = [(a0, min(m, a0 + PANEL)) for a0 in range(0, m, PANEL)]
    assert n_direct == sum((a1 - a0) * (m - a0) for a0, a1 in panels)
    # with a cached row: the rows path (cached rows read, the others computed)
    get_row(kern.data, cache.data, int(rows[1]))
    n_direct = kernel_block_into(kern.data, cache.data, rows, rows, out, tmp)
    assert n_direct == (m - 1) * m
    np.testing.assert_allclose(out, R[:, rows], rtol=0, atol=1e-14)


# ------------------------------------------------------------ chol_delete
@pytest.mark.parametrize("seed", [0, 1])
def test_four_row_delete_is_bitwise_the_column_version_on_larger_factors(seed):
    rng = np.random.default_rng(seed)
    m = 70
    A = rng.standard_normal((m, m + 2))
    K = A @ A.T + 0.05 * np.eye(m)
    L = np.zeros((m, m))
    assert chol_factor(K, np.arange(m, dtype=np.int64), m, 0.0, L)
    n = m
    while n > 1:
        p = int(rng.integers(min(n, 6))) if n % 3 else int(rng.integers(n))
        fast, slow = L.copy(), L.copy()
        chol_delete(fast, n, p)
        _chol_delete_columns(slow, n, p)
        np.testing.assert_array_equal(fast, slow)
        L = fast
        n -= 1


# ------------------------------------------------------------ default working set
def test_default_working_set_is_every_sample_up_to_twice_the_default():
    assert default_working_set(2 * DEFAULT_WORKING_SET) == 2 * DEFAULT_WORKING_SET
    assert default_working_set(2 * DEFAULT_WORKING_SET + 1) == DEFAULT_WORKING_SET
    assert default_working_set(7) == 7
    X, y = make_classification(801, 4, random_state=0)
    assert IRWLSClassifier().start(X, y).m == DEFAULT_WORKING_SET
    assert IRWLSClassifier().start(X[:800], y[:800]).m == 800


def test_whole_set_fit_reaches_libsvm():
    X, y = make_classification(500, 6, n_informative=4, random_state=3, flip_y=0.1)
    m = IRWLSClassifier(C=10.0, gamma=0.2, random_state=0).fit(X, y)
    assert m.n_chunks_ >= 1
    _, _, W_ref = libsvm_dual(X, y, 10.0, "rbf", 0.2)
    K = gram(X, "rbf", 0.2)
    yp = to_pm(y, m.classes_)
    assert abs(dual_objective(K, yp, m.alpha_) - W_ref) <= 1e-3 * abs(W_ref)
    assert kkt_violation(K, yp, m.alpha_, m.intercept_[0], 10.0) <= 1e-3 * 1.0001


# ------------------------------------------------------------ release pick
def _pick_by_sort(vval, vpos, npos, kmax, nF):
    """The release rule written with a stable sort (the naive twin)."""
    nv = len(vval)
    if kmax <= 0 or nv <= kmax and not (kmax == 1 and nF == 0):
        return np.arange(nv)
    order = np.argsort(vval, kind="stable")
    if kmax == 1 and nF > 0:
        return order[:1]
    nneg = nv - npos
    if kmax == 1:
        kp, kn = int(npos > 0), int(nneg > 0)
    else:
        kp = min(npos, max(kmax // 2, kmax - nneg))
        kn = min(nneg, kmax - kp)
    grow = [k for k in order if vpos[k]][:kp]
    shrink = [k for k in order if not vpos[k]][:kn]
    return np.sort(np.array(grow + shrink, dtype=np.int64))


@pytest.mark.parametrize("seed", range(6))
def test_release_pick_equals_the_stable_sort(seed):
    from svmlab.decomposition._release import release_pick

    rng = np.random.default_rng(seed)
    for nv in (0, 1, 2, 3, 9, 40, 200):
        # few distinct values: many ties
        vval = -rng.integers(1, 6, nv).astype(float) * (0.5 if seed % 2 else rng.random(nv))
        vpos = rng.random(nv) < (0.2 + 0.1 * seed)
        npos = int(vpos.sum())
        for kmax in (0, 1, 2, 3, 4, 10, 16, 33):
            for nF in (0, 5):
                got = release_pick(vval, vpos, npos, kmax, nF)
                np.testing.assert_array_equal(got, _pick_by_sort(vval, vpos, npos, kmax, nF))
