"""Vapnik's chunking, readable: the twin of :class:`svmlab.ChunkingClassifier`
(default engine ``"qp"``) on a dense kernel matrix ``K`` (y in {-1, +1}).

Each step (Platt's TR, section 1.2, "chunking") solves the dual over every
non-zero multiplier plus the M worst KKT violators among the zero ones
(:func:`chunk_select`), then updates ``G = K (alpha y)``.  The outer step,
the sub-problem solver (the active-set QP) and the stopping rule
(maximal violation ``<= tol``) are those of
:mod:`svmlab.reference.decomposition`; its docstring says why iterates are
compared to ``1e-8 * max(1, C)`` and working sets exactly.

KKT violation of sample i, with ``e = v - b`` and b by LIBSVM's rule
(mean of v over free samples): ``max(y e, 0)`` at alpha = 0, ``max(-y e, 0)``
at C, ``|e|`` when free.  Ties among violators: a stable sort by decreasing
violation, so the smaller index wins.  The maximal violating pair is always
added (it guarantees progress, as in svmlab).
"""

from __future__ import annotations

import numpy as np

from svmlab.reference.decomposition import outer_step, run_outer
from svmlab.reference._rounding import near
from svmlab.reference.subproblem import intercept_from_v, line_search_iteration, max_violating_pair

__all__ = ["fit", "explain", "chunk_select", "kkt_violations"]


def kkt_violations(v, y, alpha, C, b):
    """Per-sample KKT violation for intercept b (0 when satisfied)."""
    ye = y * (v - b)  # = 1 - y_i f(x_i)
    viol = np.abs(ye)  # free: |e_i|
    viol[alpha <= 0] = np.maximum(ye[alpha <= 0], 0.0)  # alpha = 0: y f >= 1
    viol[alpha >= C] = np.maximum(-ye[alpha >= C], 0.0)  # alpha = C: y f <= 1
    return viol


def chunk_select(v, y, alpha, C, M, ties=None):
    """``(B, gap)``: every alpha_i > 0, the M worst violators, the maximal
    pair.  ``ties``: a list noted when a choice is within rounding of a tie."""
    i, j, gap = max_violating_pair(v, y, alpha, C, ties)
    b = intercept_from_v(v, y, alpha, C)
    viol = kkt_violations(v, y, alpha, C, b)
    candidates = np.flatnonzero((alpha <= 0) & (viol > 0))
    ranked = np.sort(viol[candidates])[::-1][:M + 1]
    if ties is not None and (near(y[alpha <= 0] * (v[alpha <= 0] - b), 0.0)
                             or (len(ranked) > M and near(ranked[M], ranked[M - 1]))):
        ties.append("a violator within rounding of the cut")
    worst = candidates[np.argsort(-viol[candidates], kind="stable")[:M]]  # [chunk-worst]
    B = set(np.flatnonzero(alpha > 0).tolist()) | set(worst.tolist())  # [chunk-svs]
    if i >= 0:
        B |= {i, j}  # [chunk-pair]
    return np.array(sorted(B), dtype=np.int64), gap


def fit(K, y, C=1.0, tol=1e-3, working_set_size=None, max_iter=-1):
    """Chunking with M = ``working_set_size`` (None: min(10, n)).  Returns
    a :class:`~svmlab.reference._rounding.ReferenceFit`, one
    :class:`svmlab.decomposition.estimators.DecompositionRecord` per chunk."""
    n = len(y)
    M = min(10, n) if working_set_size is None else int(working_set_size)
    if not 2 <= M <= n:
        raise ValueError(f"working_set_size must be in [2, n_samples={n}], got {M}")
    return run_outer(K, y, C, tol, lambda v, y_, a, C_, t: chunk_select(v, y_, a, C_, M, t),
                     max_iter)


def explain(record):
    """``[(function, tags)]`` for one chunk: selection, outer step, QP."""
    qp = {"ls-solve"} | ({"release-worst"} if record.engine_iterations > 1 else set())
    return [(chunk_select, {"chunk-worst", "chunk-svs", "chunk-pair"}),
            (outer_step, {"select", "solve", "snap", "update-G"}),
            (line_search_iteration, qp)]
