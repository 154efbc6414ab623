"""Working-set selection for the decomposition family (shared).

All rules read the same quantities: ``v_i = y_i - (K beta)_i`` (so that the
error of sample i is ``e_i = v_i - b`` and LIBSVM's gradient is
``-y_i v_i``), the multipliers ``alpha`` and ``C``: a number, or the (n,)
per-sample bounds ``C_i = C * weight_i`` of a weighted problem (every rule
is written with numpy comparisons, which take either).

* :func:`max_violating_pair` -- the pair (i in I_up with the largest v,
  j in I_low with the smallest v) and the gap ``m - M``; the decomposition
  family stops when the gap is <= tol.  ``q = 2`` with this rule and the
  analytic pair step is SMO (LIBSVM's WSS1 / Keerthi et al.).
* :func:`steepest_feasible` -- SVMlight's rule (Joachims 1999, sec. 3): the
  q/2 largest-v samples of I_up and the q/2 smallest-v samples of I_low,
  i.e. the q components of the steepest feasible descent direction with
  entries in {-1, 0, +1}; :func:`break_cycle` merges two working sets
  that alternate (up to one sample, for inexact engines).
* :func:`chunk_select` -- Vapnik's chunking (Platt TR sec. 1.2): every
  non-zero multiplier plus the M worst KKT violators.
* :func:`irwls_select` -- Perez-Cruz et al. (2000) section 3.
"""

from __future__ import annotations

import numpy as np

from .._kkt import intercept_from_v, up_low, violating_pair, violating_pair_np

__all__ = ["max_violating_pair", "steepest_feasible", "break_cycle", "CYCLE_SLACK", "chunk_select",
           "irwls_select", "kkt_violations", "SELECTIONS"]

SELECTIONS = ("random", "largest", "smallest", "mixed")


def max_violating_pair(v, y, alpha, C, active=None):
    """``(i, j, gap)``; ``gap <= 0`` (or i/j = -1) means optimal.  The rule
    (first index on ties) is :func:`svmlab._kkt.violating_pair_np`'s."""
    m, i, M, j = violating_pair_np(v, y, alpha, C, active)
    if i < 0 or j < 0:
        return -1, -1, 0.0
    return i, j, float(m - M)


def _smallest(vals, k):
    """``np.argsort(vals, kind="stable")[:k]`` in O(n + c log c): a partition
    finds the k-th value, then only the c <= k + ties candidates are sorted
    (same indices, same order, ties by index)."""
    if k <= 0:
        return np.zeros(0, np.int64)
    if k >= len(vals):
        return np.argsort(vals, kind="stable")[:k]
    kth = np.partition(vals, k - 1)[k - 1]
    cand = np.flatnonzero(vals <= kth)
    return cand[np.argsort(vals[cand], kind="stable")][:k]


def steepest_feasible(v, y, alpha, C, q, active=None):
    """SVMlight's working set: ``(B, gap)`` with ``|B| <= q``."""
    up, low = up_low(y, alpha, C)
    if active is not None:
        up &= active
        low &= active
    if not up.any() or not low.any():
        return np.zeros(0, np.int64), 0.0
    vu = np.where(up, v, -np.inf)
    vl = np.where(low, v, np.inf)
    gap = float(vu.max() - vl.min())
    order_up = _smallest(-vu, min(q, int(up.sum())))
    order_low = _smallest(vl, min(q, int(low.sum())))
    vmin, vmax = vl.min(), vu.max()
    # only components that point along a violating direction
    ups = [int(k) for k in order_up if vu[k] > vmin]
    lows = [int(k) for k in order_low if vl[k] < vmax]
    chosen: list[int] = []
    seen: set[int] = set()

    def take(src, limit):
        for k in src:
            if len(chosen) >= limit:
                return
            if k not in seen:
                seen.add(k)
                chosen.append(k)

    take(ups, max(q // 2, 1))
    take(lows, q)
    take(ups, q)
    return np.array(sorted(chosen), dtype=np.int64), gap


#: samples by which a working set may differ from the one used two steps
#: before and still count as a return to it (:func:`break_cycle`)
CYCLE_SLACK = 1


def break_cycle(B, recent, slack=CYCLE_SLACK):
    """The working set to use when the selection returned ``B`` (sorted)
    and the last two working sets used were ``recent`` (oldest first).

    Fresh working sets can zig-zag: the selection alternates between two
    sets, each sub-problem moves its multipliers a little along a valley
    that only both sets together can follow, and the maximal violation
    does not fall (SVMlight's documented failure mode, which it avoids by
    keeping part of the previous working set).  When ``B`` returns to the
    set used two steps before but not to the previous one, the step takes
    the union of ``B`` and the previous set instead (sorted; with fresh
    sets of q samples at most 2q + slack: a union holds the set before it,
    so a union with it adds at most ``slack`` samples, and no fresh set
    comes within ``slack`` of it); otherwise ``B`` itself.

    "Returns" has a tolerance: the two sets differ by at most ``slack``
    samples each way (``slack=0`` is the equality test of 26d12, decision
    for decision).  Why not equality: an inexact engine (``"irwls"``
    stops at tol / 2) leaves the multipliers a little off, a near-tie at
    the selection's cut-off flips, and the alternation runs through A, B,
    A', B' with A' = A but for one sample, which equality never sees (the
    300-sample linear problem at C = 1e8 then ran to any max_iter;
    docs/decisions/26d12-decomposition-zig-zag.md,
    docs/decisions/29z01-near-return-cycle-test.md)."""
    if len(recent) == 2 and _within(B, recent[0], slack) and not _within(B, recent[1], slack):
        return np.union1d(B, recent[1])
    return B


def _within(A, B, slack):
    """At most ``slack`` samples of either sorted set missing from the other."""
    common = np.intersect1d(A, B, assume_unique=True).size
    return len(A) - common <= slack and len(B) - common <= slack


def kkt_violations(v, y, alpha, C, b):
    """Per-sample KKT violation with intercept b (0 if satisfied):
    (9) alpha = 0: ``max(y e, 0)``; (10) alpha = C: ``max(-y e, 0)``;
    (11) free: ``|e|``, with ``e = v - b``."""
    ye = y * (v - b)
    at0 = alpha <= 0
    atC = alpha >= C
    viol = np.abs(ye)
    viol[at0] = np.maximum(ye[at0], 0.0)
    viol[atC] = np.maximum(-ye[atC], 0.0)
    return viol


def chunk_select(v, y, alpha, C, M, tol):
    """Chunking: ``(B, gap)``: all SVs plus the M worst violators."""
    i, j, gap = max_violating_pair(v, y, alpha, C)
    b = intercept_from_v(v, y, alpha, C)
    viol = kkt_violations(v, y, alpha, C, b)
    sv = alpha > 0
    cand = np.flatnonzero(~sv & (viol > 0))
    worst = cand[np.argsort(-viol[cand], kind="stable")[:M]]
    B = set(np.flatnonzero(sv).tolist()) | set(worst.tolist())
    if i >= 0:
        B |= {i, j}
    return np.array(sorted(B), dtype=np.int64), gap


def irwls_select(e, y, sets, m, strategy, rng, tol, v=None, alpha=None, C=None):
    """The sample selection of Perez-Cruz et al. (2000), section 3.

    ``e`` are the current errors (with the current b) of all samples,
    ``sets`` their membership (1 = S1, 2 = S2, 3 = S3).  Returns the new
    working set (sorted indices, size ``min(m, n)``).

    * The candidate set: the samples violating a stopping condition,
      (9) S2 with ``y e > tol``, (10) S3 with ``y e < -tol``,
      (11) S1 with ``|e| > tol``.
    * The current S1 (unbounded SVs) stays in the working set (up to half
      of it when there are more candidates than room).
    * ``"random"`` (the paper's): one violator per class for each stopping
      condition, chosen at random; the working set is then completed with the
      candidates of lowest ``|e_i|`` (those most likely to end as SVs).
      ``"largest"``: completed with the largest ``|e_i|`` (most violating,
      SVMlight-like), no random picks.  ``"smallest"``: lowest ``|e_i|``
      only, no random picks.  ``"mixed"`` (our addition, the estimator's
      default; see :class:`svmlab.IRWLSClassifier`): the random picks,
      then half of each sign's share (below) by largest ``|e_i|`` and the
      rest by lowest.
    * Our addition, shared with the rest of the family: the maximal
      violating pair is always included, which guarantees progress.
    * Our addition: the completion is balanced by the sign of
      ``e_i``, the direction in which ``beta_i`` must move (up for
      ``e_i > 0``).  ``sum beta`` is fixed inside the working set, so
      violators that all move one way can hardly move at all (SVMlight's
      reason for taking q/2 from each side).  Up to half of the room goes
      to each sign, in the strategy's order of ``|e_i|``; a side with too
      few candidates leaves its share to the other
      (docs/decisions/26d04-irwls-working-sets.md).
    * Room left over is filled with non-candidates of lowest ``|e_i|``.
    """
    n = len(e)
    m = min(m, n)
    ae = np.abs(e)
    ye = y * e
    in_s1 = sets == 1
    conds = [(sets == 2) & (ye > tol), (sets == 3) & (ye < -tol), in_s1 & (ae > tol)]
    cand = conds[0] | conds[1] | conds[2]
    # random tie-breaking, then stable sorts
    perm = rng.permutation(n)
    chosen: list[int] = []
    taken = np.zeros(n, bool)

    def take(idx):
        """Append the untaken entries of ``idx`` (distinct indices), in
        order, until the working set is full."""
        idx = np.asarray(idx, dtype=np.int64)
        idx = idx[~taken[idx]][:m - len(chosen)]
        taken[idx] = True
        chosen.extend(idx.tolist())

    if v is not None:
        # the maximal violating pair, compiled (svmlab._kkt.violating_pair:
        # the first index on ties, as max_violating_pair's argmax/argmin)
        Cv = np.full(n, float(C)) if np.ndim(C) == 0 else np.ascontiguousarray(C, np.float64)
        _, i, _, j = violating_pair(np.ascontiguousarray(v, np.float64),
                                    np.ascontiguousarray(y, np.float64),
                                    np.ascontiguousarray(alpha, np.float64), Cv)
        if i >= 0 and j >= 0 and v[i] - v[j] > tol:
            take([i, j])
    if strategy in ("random", "mixed"):
        classes = (y == -1.0, y == 1.0)
        for c in conds:
            for in_cls in classes:
                # the six pools are disjoint, so only earlier picks of the
                # maximal violating pair can be taken already
                pool = np.flatnonzero(c & in_cls)
                if len(pool):
                    pool = pool[~taken[pool]]
                if len(pool):
                    take([rng.choice(pool)])
    n_cand = int(cand.sum())
    s1 = perm[(in_s1 & ~cand)[perm]]
    room_s1 = m - len(chosen) - min(n_cand, m - len(chosen))
    room_s1 = max(room_s1, (m - len(chosen)) // 2)
    take(s1[:room_s1])
    # the rest are untaken and distinct: only the first ``room`` of each
    # stable sort are needed (_smallest: the same indices in the same order
    # as the full stable argsort, without sorting all n)
    cidx = perm[(cand & ~taken)[perm]]
    # balanced by the sign of e (the direction beta_i moves: sum beta is
    # fixed, so the up-movers need down-movers to pair with)
    room = m - len(chosen)
    pos, neg = cidx[e[cidx] > 0], cidx[e[cidx] < 0]
    kp = min(len(pos), max(room // 2, room - len(neg)))
    for part, k in ((pos, kp), (neg, room - kp)):
        if strategy == "mixed":
            # half of the share to the largest |e| (SVMlight-like), the rest
            # to the lowest (the paper's)
            kl = k // 2
            take(part[_smallest(-ae[part], kl)])
            part = part[~taken[part]]
            k -= kl
        key = -ae[part] if strategy == "largest" else ae[part]
        take(part[_smallest(key, k)])
    if len(chosen) < m:
        rest = perm[(~taken)[perm]]
        take(rest[_smallest(ae[rest], m - len(chosen))])
    return np.sort(np.array(chosen, dtype=np.int64))
