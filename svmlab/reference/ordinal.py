"""Joachims' cutting-plane Algorithm 2 (ordinal regression / ROC area),
readable: "Training Linear SVMs in Linear Time", KDD 2006.

The twin of :class:`svmlab.CuttingPlaneOrdinalRegressor` on a dense data
matrix.  With P = {(i, j): y_i > y_j} and m = |P|::

    OP4:  min 1/2 w'w + (C/m) sum_{(i,j) in P} xi_ij   s.t.  w'x_i >= w'x_j + 1 - xi_ij
    OP5:  min 1/2 w'w + C xi   s.t.  for all c in {0,1}^m:
              (1/m) w' sum_P c_ij (x_i - x_j) >= (1/m) sum_P c_ij - xi

Algorithm 2 is Algorithm 1 (:mod:`svmlab.reference.cutting_plane`) with a
different most violated constraint: ``c_ij = 1`` iff ``w'x_i - w'x_j < 1``.
It is never stored as m pair bits.  Because
``sum_P c_ij (x_i - x_j) = sum_i (c+_i - c-_i) x_i`` it is enough to know,
for each example i, the counts

    c+_i = #{j : y_j < y_i, s_i - s_j < 1}   (violated pairs with i above)
    c-_i = #{j : y_j > y_i, s_j - s_i < 1}   (violated pairs with i below)

with ``s = Xw``.  :func:`sweep_counts` finds them with one sort and two
sweeps with a counter per rank: O(n log n + R n), no pair enumerated.  With
two ranks (-1/+1 or 0/1) this is the ROC-area SVM: m = n+ n-, ``c+_i``
counts, for a positive i, the negatives that score less than 1 below it,
and the average pair hinge loss ``xi'`` bounds ``1 - ROC area`` from above
(each pair's hinge is >= 1 when the pair is misordered or tied).

The loop is Algorithm 1's (its line numbers are used in the comments): line
4 solves OP5 over the working set W (the same reduced QP,
:func:`~svmlab.reference.cutting_plane.solve_reduced_qp`); lines 5-7 (the
per-example test) become Algorithm 2's sort by ``w'x_i`` and sweep for c+
and c-; line 8 adds c to W; line 9 stops when ``xi' <= xi + epsilon``.
No intercept: pair constraints do not change when every score is shifted.
Differences from svmlab are those of Algorithm 1's twin (the QP solver,
NumPy scores): a count can differ only if some ``s_i - s_j`` is within
rounding of 1, which (as margins at 1 in Algorithm 1) happens exactly when
two active cuts differ in one pair; the tests check that it does not.
Sweep ties: equal scores in different ranks make a violated pair (margin
0 < 1), a difference of exactly 1 does not, as in the fast sweep.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from svmlab.cutting_plane.estimators import OrdinalCuttingPlaneRecord
from svmlab.reference.cutting_plane import _check_params, _dense, solve_reduced_qp

__all__ = ["sweep_counts", "most_violated", "iter_fit", "fit", "explain", "OrdinalReferenceFit"]


def _rank_index(ranks, n=None):
    """Ranks as 0..R-1 (the order of their values) and R."""
    ranks = np.asarray(ranks)
    if ranks.ndim != 1 or (n is not None and ranks.shape[0] != n):
        raise ValueError(f"ranks must be 1-D with one entry per example, got {ranks.shape}.")
    whole = ranks.dtype.kind == "f" and np.all(np.isfinite(ranks)) and np.all(ranks % 1 == 0)
    if ranks.dtype.kind not in "iub" and not whole:
        raise ValueError("ranks must be finite integers (larger = higher rank).")
    values, idx = np.unique(ranks, return_inverse=True)
    return idx.ravel().astype(np.int64), len(values)


def sweep_counts(scores, ranks):
    """The counts ``(c_plus, c_minus)`` of the most violated OP5 constraint,
    by Algorithm 2's sorted sweep (O(n log n + R n), no pair enumerated).

    Parameters
    ----------
    scores : (n,) floats, ``s_i = w'x_i``.
    ranks : (n,) integers, larger = higher rank (any values; gaps allowed).

    Returns two int64 arrays (n,)::

        c_plus[i]  = #{j : ranks[j] < ranks[i] and s_i - s_j < 1}
        c_minus[i] = #{j : ranks[j] > ranks[i] and s_j - s_i < 1}

    A pair at margin exactly 1 is not violated (as ``c_i`` of Algorithm 1);
    equal scores in different ranks are violated pairs.  ``c_plus.sum() ==
    c_minus.sum()`` is the number of violated pairs.
    """
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim != 1 or not np.all(np.isfinite(s)):
        raise ValueError("scores must be a 1-D array of finite numbers.")
    rank, R = _rank_index(ranks, s.shape[0])
    n = s.shape[0]
    order = np.argsort(s, kind="stable")                # ascending w'x  # [sort]
    size = np.bincount(rank, minlength=R)               # n_r = examples of rank r  # [sort]
    n_lower = np.cumsum(size) - size                    # examples of rank < r  # [sort]
    c_plus = np.zeros(n, dtype=np.int64)                # [plus-init]
    c_minus = np.zeros(n, dtype=np.int64)               # [minus-init]
    # c+_i = (# lower-ranked) - (# lower-ranked j with s_j <= s_i - 1)
    passed = np.zeros(R, dtype=np.int64)                # rank r and s_j <= s_i - 1  # [plus-init]
    p = 0                                               # next example not yet passed  # [plus-init]
    for i in order:                                     # i in ascending score  # [plus-loop]
        while p < n and s[order[p]] <= s[i] - 1.0:      # j is 1 or more below i  # [plus-advance]
            passed[rank[order[p]]] += 1                 # [plus-pass]
            p += 1                                      # [plus-pass]
        c_plus[i] = n_lower[rank[i]] - passed[:rank[i]].sum()  # [plus-count]
    # c-_i = # higher-ranked j with s_j < s_i + 1
    passed[:] = 0                                       # rank r and s_j < s_i + 1  # [minus-init]
    p = 0                                               # [minus-init]
    for i in order:                                     # [minus-loop]
        while p < n and s[order[p]] < s[i] + 1.0:       # j less than 1 above i  # [minus-advance]
            passed[rank[order[p]]] += 1                 # [minus-pass]
            p += 1                                      # [minus-pass]
        c_minus[i] = passed[rank[i] + 1:].sum()         # [minus-count]
    return c_plus, c_minus


def most_violated(X, ranks, w):
    """``(c_plus, c_minus)`` of the most violated OP5 constraint at ``w``:
    :func:`sweep_counts` of the scores ``X @ w``."""
    X = _dense(X)
    return sweep_counts(X @ np.asarray(w, dtype=np.float64), ranks)


@dataclass(frozen=True)
class OrdinalReferenceFit:
    """What :func:`fit` returns: ``coef`` (d,), ``records`` (one per
    iteration), ``converged``, ``n_pairs`` (m)."""

    coef: np.ndarray
    records: list
    converged: bool
    n_pairs: int


def iter_fit(X, y, C=1.0, epsilon=1e-3, max_iter=1000):
    """Algorithm 2, one :class:`~svmlab.cutting_plane.estimators.OrdinalCuttingPlaneRecord`
    per iteration that adds a constraint; the generator returns
    ``(w, converged)``.  ``y``: integer ranks, at least two distinct."""
    rank, R = _rank_index(y)
    X = _dense(X, rank.shape[0])
    _check_params(C, epsilon, max_iter)
    if R < 2:
        raise ValueError("ordinal regression needs at least two distinct ranks.")
    size = np.bincount(rank, minlength=R)
    m = int(np.sum(size * (np.cumsum(size) - size)))   # pairs with y_i > y_j
    W_g, W_d = [], []                                   # Alg. 1 line 2: W <- {}  # [init]
    w, xi, dual = np.zeros(X.shape[1]), 0.0, 0.0        # [init]
    alpha = np.zeros(0)                                 # [init]
    iteration = 0
    while max_iter < 0 or iteration < max_iter:         # Alg. 1 line 3: repeat
        s = X @ w                                       # [scores]
        c_plus, c_minus = sweep_counts(s, rank)         # Alg. 2: sort and count  # [sweep]
        g = (c_plus - c_minus) @ X / m                  # (1/m) sum c_ij (x_i - x_j)  # [cut]
        off = c_plus.sum() / m                          # (1/m) sum c_ij  # [cut]
        xi_new = off - w @ g                            # average pair hinge loss  # [cut]
        primal = 0.5 * w @ w + C * xi_new
        if xi_new <= xi + epsilon:                      # Alg. 1 line 9  # [test]
            return w, True                              # [stop]
        W_g.append(g)                                   # Alg. 1 line 8: W <- W u {c}  # [add]
        W_d.append(off)                                 # [add]
        alpha, w_next, xi_next = solve_reduced_qp(  # Alg. 1 line 4, OP5 over W  # [solve]
            np.array(W_g), np.array(W_d), C, np.append(alpha, 0.0))  # warm start  # [solve]
        iteration += 1
        yield OrdinalCuttingPlaneRecord(
            iteration=iteration, w=w.copy(), w_norm=float(np.sqrt(w @ w)), xi=float(xi),
            xi_new=float(xi_new), c_plus=c_plus, c_minus=c_minus,
            constraint_size=int(c_plus.sum()), n_pairs=m,
            constraint_norm=float(np.linalg.norm(g)), constraint_offset=float(off),
            working_set_size=len(W_g), alpha=alpha, primal=float(primal),
            dual=float(dual), gap=float(primal - dual))
        w, xi = w_next, xi_next                         # [solve]
        dual = float(alpha @ np.array(W_d) - 0.5 * w @ w)  # [solve]
    return w, False


def fit(X, y, C=1.0, epsilon=1e-3, max_iter=1000):
    """Run :func:`iter_fit` to the end; returns an :class:`OrdinalReferenceFit`."""
    records = []
    run = iter_fit(X, y, C, epsilon, max_iter)
    while True:
        try:
            records.append(next(run))
        except StopIteration as end:
            w, converged = end.value
            break
    rank, R = _rank_index(y)
    size = np.bincount(rank, minlength=R)
    return OrdinalReferenceFit(w.copy(), records, converged,
                               int(np.sum(size * (np.cumsum(size) - size))))


def explain(record):
    """``[(function, tags)]``: the lines of :func:`iter_fit` and of
    :func:`sweep_counts` that produced ``record``.  The bodies of the
    pointer loops (``plus-pass``/``minus-pass``) are marked when the record
    proves that they ran: the c- pointer always passes (each example passes
    itself), the c+ pointer surely passed some example when an ordered pair
    has margin >= 1 (fewer violated pairs than m).  It may also pass on
    pairs within one rank, which the record cannot show; then it is left
    unmarked."""
    loop = {"scores", "sweep", "cut", "test", "add", "solve"}
    if record.iteration == 1:
        loop.add("init")
    sweep = {"sort", "plus-init", "plus-loop", "plus-count", "minus-init", "minus-loop",
             "minus-count", "plus-advance", "minus-advance", "minus-pass"}
    if record.constraint_size < record.n_pairs:
        sweep.add("plus-pass")
    return [(iter_fit, loop), (sweep_counts, sweep)]
