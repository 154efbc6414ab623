"""IRWLS-SVC, readable: Perez-Cruz, Alarcon-Diana, Navia-Vazquez &
Artes-Rodriguez, "Fast Training of Support Vector Classifiers", NIPS 2000.

The twin of :class:`svmlab.IRWLSClassifier` on a dense kernel matrix ``K``
(labels ``y`` in {-1, +1}).  Variables ``beta_i = y_i alpha_i``; the dual

    max  sum_i y_i beta_i - 1/2 beta' K beta,  sum_i beta_i = 0,  0 <= y_i beta_i <= C.

* Table 1 (:func:`table1_iteration`): solve the linear system (3) for the
  unbounded samples S1 with S2 (beta = 0, weight a_i = 0 of eq. 8) and S3
  (y beta = C) fixed, clip by rules a/b, release violators by rules c/d.
* When a Table 1 iteration has freed more violators than there were free
  samples (always on the first working set, which starts with S1 empty)
  and S1 then holds more than 100 samples, svmlab does not solve (3) with
  all of them free: the next iteration goes back to the point before the
  release and line-search iterations go on from there (the "hand-over",
  svmlab's decision).
* Table 1 has no convergence guarantee.  As svmlab does, after a repeated
  set configuration, more than 3 bad iterations in a row (ending
  infeasible or clipping), a singular (3) or a step that lowers the dual,
  the sub-problem goes back to its last feasible point and continues with
  line-search iterations
  (:func:`svmlab.reference.subproblem.line_search_iteration`, releasing
  after a full step at most ``release_cap`` violators, the worst of each
  sign of e (all of them with a cap of 0), and only the worst one while
  steps are degenerate -- one of each sign when S1 is empty).
* Section 2.1 chunking (:func:`step`, :func:`fit`): IRWLS runs on a working
  set Sw; the other samples enter through ``G_in = K_{w,in} beta_in`` and
  ``Gb_in = sum beta_in``; the sub-problem is solved to ``0.9 tol``.
  Section 3 selection: :func:`select_working_set`.  Stop when (9)-(11)
  hold on every sample, or after three chunks in a row that changed nothing.
  The default working set is every sample up to 800 of them (no chunking:
  G is then updated with the block itself, ``G += K delta``), else 400.

Tie breaking (as :func:`svmlab.decomposition._working_set.irwls_select`): the selection
draws ``rng.permutation(n)`` first, then for each stopping condition (9),
(10), (11) and each class (-1 then +1) one ``rng.choice`` among the
untaken violators; every later sort is stable over the permuted order, so
ties in ``|e_i|`` go to the earlier position in the random permutation.
The maximal violating pair takes the smallest index among equal ``v``.
``random_state`` seeds ``np.random.RandomState`` as the estimator does, so
the same seed draws the same numbers in the same order.

Where the two may differ: only after a line-search iteration (see
:mod:`svmlab.reference.subproblem`); before it both run the same arithmetic
and agree bit for bit.
"""

from __future__ import annotations

import numpy as np

from svmlab.decomposition._active_set import DOWNHILL_RTOL
from svmlab.decomposition.irwls import IRWLSRecord
from svmlab.reference import _rounding
from svmlab.reference._rounding import ReferenceFit, near, tie_threshold
from svmlab.reference.subproblem import (S1, S2, S3, Subproblem, intercept_from_v,
                                         line_search_iteration, max_violating_pair, solve_system3)

__all__ = ["fit", "step", "explain", "ChunkingState", "select_working_set", "table1_iteration"]


def table1_iteration(sp):
    """One iteration of Table 1 (all violators at once)."""
    y, C = sp.y, sp.C
    F = np.flatnonzero(sp.sets == S1)
    if sp.handover and len(F) > 100 and 2 * (sp.moved[2] + sp.moved[3]) > len(F):
        # svmlab's hand-over: the last iteration freed more violators than
        # there were free samples (and S1 is large); back to the point
        # before, line-search iterations from there
        sp.to_line_search()  # [t1-handover]
        sp.moved = (0, 0, 0, 0)
        return
    na = nb = nc = nd = 0
    feasible = False
    if len(F) == 0:
        sp.b = intercept_from_v(sp.r - sp.Kb, y, np.clip(y * sp.beta, 0, C), C)  # [t1-empty]
        sp.method = "bounds"  # [t1-empty]
    else:
        # (3): e_i = 0 on S1 (infinite weight), a_i = 0 on S2, beta fixed on S3
        d, b, sp.method = solve_system3(sp.K[np.ix_(F, F)], sp.r[F] - sp.Kb[F],  # [t1-solve]
                                        sp.s0 - sp.beta.sum())  # [t1-solve]
        if d is None:
            sp.to_line_search()  # [t1-singular]
            sp.moved = (0, 0, 0, 0)  # [t1-singular]
            return
        old = sp.beta[F].copy()
        new = old + d  # [t1-solve]
        low, high = y[F] * new < 0, y[F] * new > C
        sp.ties += near(y[F] * new, 0.0, C) or near(y[F] * new, C, C)  # (tie bookkeeping)
        new[low] = 0.0  # [rule-a]
        sp.sets[F[low]] = S2  # [rule-a]
        new[high] = C * y[F][high]  # [rule-b]
        sp.sets[F[high]] = S3  # [rule-b]
        na, nb = int(low.sum()), int(high.sum())
        sp.beta[F] = new
        sp.b = b
        sp.Kb += sp.K[:, F] @ (new - old)  # [t1-solve]
    if na == 0 and nb == 0:
        ye = y * sp.errors()  # y_i e_i: conditions (9) and (10)
        sp.ties += near(ye, sp.tol) or near(ye, -sp.tol)  # (tie bookkeeping)
        c_mask = (sp.sets == S2) & (ye > sp.tol)  # [rule-c]
        d_mask = (sp.sets == S3) & (ye < -sp.tol)  # [rule-d]
        nc, nd = int(c_mask.sum()), int(d_mask.sum())
        sp.sets[c_mask | d_mask] = S1  # [rule-c, rule-d]
        feasible = sp.feasible()
        if feasible:
            W = sp.objective()
            # (tie bookkeeping) with S1 already optimal, d is rounding noise
            # and W ~ best_W: rounding decides the test below
            # Downhill means lower than best_W by more than DOWNHILL_RTOL
            # (relative): a lower W by a few ulps is rounding, not a worse step
            W_min = sp.best_W - DOWNHILL_RTOL * (1.0 + abs(sp.best_W))
            sp.ties += len(F) > 0 and 0 < tie_threshold() and abs(W - W_min) <= (
                tie_threshold() * (1.0 + abs(sp.best_W)))
            if W < W_min:
                sp.to_line_search()  # [t1-downhill]
                sp.moved = (na, nb, 0, 0)  # [t1-downhill]
                return
            sp.best_W = W
            sp.save_feasible()
            if nc == 0 and nd == 0:
                sp.done = True  # [done]
    sp.moved = (na, nb, nc, nd)
    if not sp.done:
        sp.bad = 0 if (na == nb == 0 and feasible) else sp.bad + 1
        key = sp.sets.tobytes()
        if key in sp.seen or sp.bad > 3:
            sp.to_line_search()  # [t1-repeat]
        else:
            sp.seen.add(key)


def select_working_set(e, y, sets, m, rng, tol, v, alpha, C, strategy="random", ties=None):
    """Section 3 selection, in svmlab's order (see the module docstring).
    ``ties``: a list that gets a note for each decision within rounding."""
    n = len(e)
    m = min(m, n)
    ye = y * e
    ties = [] if ties is None else ties
    if near(ye, tol) or near(ye, -tol) or near(np.abs(e), tol):
        ties.append("a stopping condition (9)-(11) within rounding of tol")
    conds = [(sets == S2) & (ye > tol), (sets == S3) & (ye < -tol),  # (9), (10)
             (sets == S1) & (np.abs(e) > tol)]  # (11)
    cand = conds[0] | conds[1] | conds[2]
    perm = rng.permutation(n)  # random order used to break ties below
    chosen, taken = [], np.zeros(n, bool)

    def take(indices, keys=None, limit=m):
        last_key = None
        for p, k in enumerate(indices):
            if len(chosen) == limit:
                if last_key is not None and not taken[k] and near(keys[p], last_key):
                    ties.append("the last sample taken and the first left out tie")
                return
            if not taken[k]:
                taken[k] = True
                chosen.append(int(k))
                last_key = keys[p] if keys is not None else None

    i, j, gap = max_violating_pair(v, y, alpha, C, ties)
    if gap > tol:
        take([i, j])  # [sel-pair]
    if strategy in ("random", "mixed"):
        for c in conds:  # one random violator per condition and class
            for cls in (-1.0, 1.0):
                pool = np.flatnonzero(c & (y == cls) & ~taken)
                if len(pool):
                    take([rng.choice(pool)])  # [sel-random]
    free = len(chosen)
    room = max(m - free - min(int(cand.sum()), m - free), (m - free) // 2)
    take(perm[(sets[perm] == S1) & ~cand[perm]][:room])  # [sel-keep-S1]
    pool = perm[cand[perm] & ~taken[perm]]
    # as many violators whose beta must go up (e > 0) as down (e < 0):
    # sum beta is fixed, so one side alone could hardly move
    room = m - len(chosen)
    pos, neg = pool[e[pool] > 0], pool[e[pool] < 0]
    k_pos = min(len(pos), max(room // 2, room - len(neg)))
    for part, limit in ((pos, len(chosen) + k_pos), (neg, m)):
        if strategy == "mixed":  # half of this side's share: largest |e|
            key = -np.abs(e[part])
            order = np.argsort(key, kind="stable")
            take(part[order], key[order], len(chosen) + (limit - len(chosen)) // 2)
            part = part[~taken[part]]  # [sel-mixed]
        key = -np.abs(e[part]) if strategy == "largest" else np.abs(e[part])
        order = np.argsort(key, kind="stable")
        take(part[order], key[order], limit)  # [sel-violators]
    rest = perm[~taken[perm]]
    order = np.argsort(np.abs(e[rest]), kind="stable")
    take(rest[order], np.abs(e[rest])[order])  # [sel-fill]
    return np.array(sorted(chosen), dtype=np.int64)


class ChunkingState:
    """The state of section 2.1's chunking between IRWLS iterations: global
    ``beta``, ``G = K beta``, ``b``, ``sets``, the random generator, and the
    open working set ``Sw`` with its :class:`Subproblem` ``sp``."""

    def __init__(self, K, y, C, tol, m, selection, rng):
        n = len(y)
        self.K, self.y, self.C, self.tol, self.m = K, y, C, tol, m
        self.selection, self.rng = selection, rng
        self.beta, self.G, self.b = np.zeros(n), np.zeros(n), 0.0
        self.sets = np.full(n, S2, np.int8)
        self.sp, self.Sw, self.chunk, self.stalls = None, None, 0, 0
        self.n_iter = 0
        self.tie = False  # did the last step take a decision within rounding?


def step(st):
    """One IRWLS iteration (closing and opening a chunk first when the
    current one is solved); its :class:`~svmlab.decomposition.irwls.IRWLSRecord`, or None
    when the stopping conditions (9)-(11) hold or three chunks in a row
    changed nothing."""
    K, y, C, tol = st.K, st.y, st.C, st.tol
    st.tie = False
    if st.sp is None or st.sp.done:
        if st.sp is not None:  # close the chunk: write Sw back, update G
            sp, Sw = st.sp, st.Sw
            delta = sp.beta - st.beta[Sw]
            if len(Sw) == len(y):  # every sample in Sw (0..n-1): its block is K
                st.G += sp.K @ delta  # [close-chunk]
            else:
                for k in np.flatnonzero(delta):  # G += delta_k K[:, k], one row at a time
                    st.G += delta[k] * K[:, Sw[k]]  # [close-chunk]
            st.stalls = 0 if np.any(delta != 0) else st.stalls + 1
            st.beta[Sw], st.b, st.sets[Sw] = sp.beta, sp.b, sp.sets  # [close-chunk]
            st.sp = None
            e = y - st.G - st.b  # stopping conditions (9)-(11) on every sample
            if not (np.any((st.sets == S2) & (y * e > tol)) or np.any(
                    (st.sets == S3) & (y * e < -tol)) or np.any((st.sets == S1) & (abs(e) > tol))):
                return None  # [converged]
            if st.stalls >= 3:
                return None  # [stalled]
        notes = []
        Sw = select_working_set(y - st.G - st.b, y, st.sets, st.m, st.rng, tol,  # [open-chunk]
                                y - st.G, np.clip(y * st.beta, 0, C), C, st.selection, notes)
        Kww = K[np.ix_(Sw, Sw)]
        G_in = st.G[Sw] - Kww @ st.beta[Sw]  # contribution of the samples outside Sw
        Gb_in = st.beta.sum() - st.beta[Sw].sum()
        # tol * 0.9, as svmlab: rounding between the chunk's and the global
        # errors cannot leave a violator that the chunk ignores
        st.sp = Subproblem(Kww, y[Sw], st.beta[Sw], y[Sw] - G_in, C, 0.9 * tol, -Gb_in)
        st.Sw, st.chunk, st.tie = Sw, st.chunk + 1, bool(notes)
    sp = st.sp
    n_ties = sp.ties
    sp.iterate(table1_iteration if sp.mode == "table1" else line_search_iteration)
    st.tie = st.tie or sp.ties > n_ties
    st.n_iter += 1
    return IRWLSRecord(
        iteration=st.n_iter, chunk=st.chunk, working_set=st.Sw.copy(), beta=sp.beta.copy(),
        weights=sp.weights(), ye=sp.y * sp.errors(), b=float(sp.b), sets=sp.sets.copy(),
        moved=sp.moved, mode=sp.mode, method=sp.method, chunk_done=sp.done)


def fit(K, y, C=1.0, tol=1e-3, working_set_size=None, selection="mixed",
        random_state=None, max_iter=-1):
    """Run IRWLS-SVC; returns a :class:`ReferenceFit` (one
    :class:`svmlab.decomposition.irwls.IRWLSRecord` per IRWLS iteration).

    ``random_state`` is used as by the estimator (an int seeds
    ``np.random.RandomState``), so equal seeds give equal working sets.
    ``selection``: as the estimator's (default ``"mixed"``, svmlab's;
    ``"random"`` is the paper's section 3 rule)."""
    K, y = np.asarray(K, float), np.asarray(y, float)
    n = len(y)
    if K.shape != (n, n) or not np.all(np.isin(y, (-1.0, 1.0))):
        raise ValueError("K must be (n, n) and y in {-1, +1} of length n")
    if not C > 0 or not tol > 0:
        raise ValueError(f"C and tol must be > 0, got C={C}, tol={tol}")
    _rounding.reset()
    rng = random_state if isinstance(random_state, np.random.RandomState) else \
        np.random.RandomState(random_state)
    # as svmlab: every sample up to 800 of them (one working set), else 400
    m = (n if n <= 800 else 400) if working_set_size is None else int(working_set_size)
    st = ChunkingState(K, y, C, tol, m, selection, rng)
    records, ties = [], []
    while max_iter < 0 or len(records) < max_iter:
        rec = step(st)
        if rec is None:
            break
        records.append(rec)
        if st.tie:
            ties.append(rec.iteration)
    beta, b = st.beta.copy(), st.b
    if st.sp is not None:  # the chunk still open: its last feasible point
        sp = st.sp
        beta[st.Sw], b = (sp.beta, sp.b) if sp.done else (sp.f_beta, sp.f_b)
    return ReferenceFit(records, np.clip(y * beta, 0.0, C), float(b), ties)


def explain(record):
    """``[(function, tags)]``: the lines of :func:`table1_iteration` or
    :func:`line_search_iteration` that ``record`` ran, read off the record.
    An iteration that left Table 1 (``mode == "line"`` with method
    ``lstsq``) is shown as Table 1's singular branch; the other exits from
    Table 1 (downhill, repeated sets), the worst-violator release of
    degenerate line-search steps (one of each sign with S1 empty,
    ``release-pair``) and the cap on released violators
    (``release-cap``) cannot be read off a record: they show as an
    ordinary line-search iteration, and so does the hand-over
    (``t1-handover``)."""
    na, nb, nc, nd = record.moved
    table1 = record.mode == "table1" or record.method == "lstsq"
    p = "t1" if table1 else "ls"
    tags = {f"{p}-empty"} if record.method == "bounds" else {f"{p}-solve"}
    if table1 and record.method == "lstsq":
        tags = {"t1-solve", "t1-singular"}
    if not table1 and (na or nb):
        tags.add("ls-bound")
    tags |= {t for t, k in (("rule-a", na), ("rule-b", nb)) if k}
    tags |= {t for t, k in (("rule-c", nc), ("rule-d", nd)) if k}
    if record.chunk_done:
        tags.add("done")
    return [(table1_iteration if table1 else line_search_iteration, tags)]
