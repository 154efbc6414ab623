"""Joachims' cutting-plane Algorithm 1, readable: "Training Linear SVMs in
Linear Time", KDD 2006 (SVMperf).

The twin of :class:`svmlab.CuttingPlaneClassifier` on a dense data matrix
(scipy sparse input is densified).  Same problem, same conventions::

    OP1:  min 1/2 w'w + (C/n) sum_i xi_i   s.t.  y_i w'x_i >= 1 - xi_i
    OP2:  min 1/2 w'w + C xi   s.t.  for all c in {0,1}^n:
              (1/n) w' sum_i c_i y_i x_i >= (1/n) sum_i c_i - xi

``C`` is the paper's C, multiplying the *average* hinge loss
(``C = n * C_liblinear``).  With ``fit_intercept=True`` the bias is the
weight of a constant extra feature 1, regularised like the others.
Example weights ``v`` (``sample_weight``; svmlab's ``class_weight[y_i] *
sample_weight_i``) multiply the terms of the sums: ``(C/n) sum_i v_i xi_i``
and ``c_i v_i`` in OP2's constraint; rows of weight 0 are removed first.

Algorithm 1, with the paper's line numbers::

    2: W <- {}
    3: repeat
    4:   (w, xi) <- argmin OP2 over the constraints in W      (= OP3)
    5:   for i = 1..n
    6:     c_i <- 1 if y_i w'x_i < 1, else 0
    8:   W <- W u {c}
    9: until (1/n) sum c_i - (1/n) sum c_i y_i w'x_i <= xi + epsilon

Where the two implementations differ, and why they still take the same
steps: the reduced QP of line 4 is solved here by a textbook active-set
method whose face problems are linear systems solved exactly
(:func:`solve_reduced_qp`); svmlab solves it by the same method on a kept
Cholesky factor, warm-started (:mod:`svmlab.cutting_plane._qp`).  ``w`` of
OP3 is unique (``1/2 w'w`` is strictly convex), so both reach the same
``w`` up to rounding; the multipliers ``alpha`` need not be
unique when constraints are linearly dependent, so they may differ.  Like
svmlab, this module tests line 9 *before* adding c (a record is one
iteration that added a constraint; the last c, which passes the test, is
not added: the returned ``w`` is the same as the paper's).

Ties.  The margins are computed with NumPy instead of numba loops and from
a ``w`` that agrees to ~1e-12, so the two codes can decide ``c_i``
differently only when ``y_i w'x_i`` is within rounding of 1.  That is not
rare late in a run: when two active cuts of W differ in a single example
i, OP3's optimum makes them equal, which puts ``y_i w'x_i = 1`` exactly
(in exact arithmetic).  Both choices of ``c_i`` are then most violated
constraints (the term ``1 - y_i w'x_i`` is 0) and the runs fork, each
still correct.  The tests compare steps on data where every margin stays
1e-8 away from 1 (they check it), and show one fork on a9a.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from svmlab.cutting_plane.estimators import CuttingPlaneRecord

__all__ = ["most_violated", "solve_reduced_qp", "line_objective", "exact_line_search_sorted",
           "iter_fit", "fit", "explain", "ReferenceFit"]


# --------------------------------------------------------------------------
# lines 5-7: the most violated constraint
# --------------------------------------------------------------------------
def most_violated(X, y, w, b=0.0):
    """The most violated constraint of OP2 at ``(w, b)`` (Algorithm 1, lines 5-7).

    Parameters
    ----------
    X : (n, d) array, dense.
    y : (n,) labels in {-1, +1}.
    w : (d,) weights;  b : bias (0 without intercept).

    Returns the boolean vector ``c`` with ``c_i = (y_i (w'x_i + b) < 1)``:
    the examples inside the margin or misclassified.  Over all c in
    {0,1}^n it maximises ``(1/n) sum_i c_i (1 - y_i (w'x_i + b))``, the
    right-hand side minus the left-hand side of OP2's constraint, because
    each term is picked exactly when it is positive.  A margin of exactly
    1 gives ``c_i = 0`` (the term is 0 either way; svmlab decides the same).
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    if X.ndim != 2 or y.shape != (X.shape[0],) or w.shape != (X.shape[1],):
        raise ValueError(f"most_violated needs X (n, d), y (n,), w (d,); got "
                         f"{X.shape}, {y.shape}, {w.shape}.")
    if not np.all(np.isin(y, (-1.0, 1.0))):
        raise ValueError("most_violated needs labels y in {-1, +1}.")
    margins = y * (X @ w + b)                   # y_i w'x_i (line 6)  # [margin]
    return margins < 1.0                        # c_i = 1 iff y_i w'x_i < 1  # [violated]


# --------------------------------------------------------------------------
# line 4: the reduced QP over the working set
# --------------------------------------------------------------------------
def solve_reduced_qp(G, d, C, alpha0=None, tol=1e-13):
    """Solve OP3, OP2 restricted to the working set, through its dual.

    The working set holds K constraints ``g_k'w >= d_k - xi`` (rows of
    ``G`` (K, D), offsets ``d`` (K,)).  The dual is::

        max_alpha  sum_k alpha_k d_k - 1/2 |sum_k alpha_k g_k|^2
        s.t.       alpha_k >= 0,  sum_k alpha_k <= C,       w = sum_k alpha_k g_k.

    A slack multiplier ``a_0 = C - sum alpha`` (with ``g_0 = 0, d_0 = 0``)
    turns the sum into an equality: minimise ``f(a) = 1/2 a'Ha - d'a`` over
    ``{a >= 0, sum a = C}``.  Solved by the textbook primal active-set
    method from a feasible start (``alpha0``, else ``a_0 = C``), keeping
    the lifted vectors ``(g_k, 1)`` of the free set F (``a_k > 0``)
    linearly independent:

    * independent: minimise f on the face ``{sum a_F = C}`` by its KKT
      equations ``H_FF a_F + lambda = d_F`` (a regular linear system) and
      step towards that point;
    * dependent (a constraint has just entered): there is a direction p with
      ``sum_F p_k (g_k, 1) = 0``; moving along it keeps w and sum a fixed and
      changes f linearly, and it is oriented so that the entering a_j grows
      (then f does not increase);
    * if some ``a_k`` would turn negative on the way, stop at 0 there and
      drop k from F;
    * at the face's minimum the gradient ``H a - d`` is ``lambda = -xi``
      on F; the k outside F with the smallest gradient enters F if it is
      below lambda (its constraint is violated by more than xi), else a is
      optimal.

    Returns ``(alpha, w, xi)``: multipliers (K,), ``w`` (D,) and
    ``xi = max(0, max_k d_k - g_k'w)``.  ``tol`` is relative to
    ``max(1, |d|, C |H|)``; the lifted vectors of F count as dependent when
    the smallest eigenvalue of their Gram matrix is below 1e-12 of the
    largest (singular values 1e-6 apart: the face system stays well posed).
    """
    G = np.asarray(G, dtype=np.float64)
    K = G.shape[0]
    g = np.vstack([np.zeros((1, G.shape[1])), G])      # g_0 = 0: the slack
    d = np.append(0.0, np.asarray(d, dtype=np.float64))
    H = g @ g.T                                         # H_kl = g_k'g_l
    lifted = np.hstack([g, np.ones((K + 1, 1))])        # (g_k, 1)
    a = np.zeros(K + 1)
    if alpha0 is None:
        a[0] = C                                        # start: alpha = 0, w = 0
    else:
        a[1:] = np.maximum(alpha0, 0.0)
        a[0] = max(C - a[1:].sum(), 0.0)                # (the face solve restores sum = C)
    scale = max(1.0, float(np.abs(d).max()), float(np.abs(H).max()) * C)
    free, entering = a > 0, None
    for _ in range(50 * (K + 1)):
        F = np.flatnonzero(free)
        m = F.size
        ev, V = np.linalg.eigh(lifted[F] @ lifted[F].T)  # Gram matrix of (g_k, 1), k in F
        if ev[0] <= 1e-12 * ev[-1]:                     # dependent: along the null space  # [null]
            p, t = V[:, 0], np.inf                      # sum_F p_k (g_k, 1) = 0  # [null]
            if entering is not None:                    # orient: the entering a_j grows  # [null]
                p = p if p[F == entering][0] > 0 else -p  # [null]
            elif (H[F] @ a - d[F]) @ p > 0:             # else: f must not increase  # [null]
                p = -p                                  # [null]
        else:                                           # independent: face minimum  # [face]
            M = np.zeros((m + 1, m + 1))                # H_FF a_F + lambda 1 = d_F  # [face]
            M[:m, :m] = H[np.ix_(F, F)]                 # [face]
            M[:m, m] = M[m, :m] = 1.0                   # sum_F a_k = C  # [face]
            sol = np.linalg.solve(M, np.append(d[F], C))  # [face]
            p, t = sol[:m] - a[F], 1.0                  # towards the face's minimum  # [face]
        entering = None
        shrinking = p < 0
        if np.any(shrinking):                           # ratio test: the first a_k to hit 0
            ratios = a[F][shrinking] / -p[shrinking]
            if ratios.min() < t:                        # blocked by a bound  # [blocked]
                a[F] += ratios.min() * p                # [blocked]
                a[F[shrinking][np.argmin(ratios)]] = 0.0  # [blocked]
                free = a > 0                            # k leaves F  # [blocked]
                continue
        a[F] += t * p                                   # at the face's minimum  # [face]
        grad = H @ a - d                                # = lambda = -xi on F
        lam = float(np.mean(grad[F]))
        outside = np.flatnonzero(~free)
        if outside.size and grad[outside].min() < lam - tol * scale:  # [enter]
            entering = outside[np.argmin(grad[outside])]  # most violated enters F  # [enter]
            free[entering] = True                       # [enter]
            continue
        alpha = a[1:].copy()                            # optimal: KKT conditions hold  # [kkt-hold]
        w = alpha @ G                                   # [kkt-hold]
        if a[0] > 1e-12 * C:                            # a_0 > 0: sum alpha < C  # [sum-slack]
            return alpha, w, 0.0                        # so xi = 0  # [sum-slack]
        return alpha, w, max(0.0, float((d[1:] - G @ w).max()))  # sum = C  # [sum-binds]
    raise RuntimeError(f"solve_reduced_qp: no optimum after {50 * (K + 1)} active-set steps "
                       f"(K={K}); the working set may be badly conditioned.")


# --------------------------------------------------------------------------
# the algorithm
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class ReferenceFit:
    """What :func:`fit` returns: ``coef`` (d,), ``intercept`` (float, 0
    without intercept), ``records`` (one per iteration), ``converged``
    (line 9's test held before ``max_iter`` iterations)."""

    coef: np.ndarray
    intercept: float
    records: list
    converged: bool


def _labels(y):
    """Labels as -1/+1 with the larger class +1 (as ``classes_[1]`` in svmlab)."""
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D, got shape {y.shape}.")
    classes = np.unique(y)
    if len(classes) != 2:
        raise ValueError(f"Algorithm 1 needs exactly two classes, got {len(classes)}.")
    return np.where(y == classes[1], 1.0, -1.0)


def _dense(X, n_expected=None):
    X = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features), got shape {X.shape}.")
    if n_expected is not None and X.shape[0] != n_expected:
        raise ValueError(f"X has {X.shape[0]} samples but y has {n_expected}.")
    if not np.all(np.isfinite(X)):
        raise ValueError("X contains NaN or infinity.")
    return X


def _check_params(C, epsilon, max_iter):
    if not C > 0 or not epsilon > 0:
        raise ValueError(f"C and epsilon must be > 0, got C={C}, epsilon={epsilon}.")
    if int(max_iter) < -1:
        raise ValueError(f"max_iter must be >= -1 (-1: no limit), got {max_iter}.")


def iter_fit(X, y, C=1.0, epsilon=1e-3, fit_intercept=True, max_iter=1000,
             sample_weight=None):
    """Algorithm 1, one :class:`~svmlab.cutting_plane.estimators.CuttingPlaneRecord` per
    iteration that adds a constraint (the fields as svmlab documents them).
    The generator's return value (``StopIteration.value``) is
    ``(w_full, converged)``, ``w_full`` including the bias weight last when
    ``fit_intercept``.  Labels: ``y`` with two classes, the larger one +1.
    ``sample_weight`` (n,) >= 0: the weights v (rows of weight 0 are removed
    and records' ``constraint`` masks cover the remaining rows)."""
    y = _labels(y)
    X = _dense(X, y.shape[0])
    _check_params(C, epsilon, max_iter)
    v = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, float)
    if v.shape != y.shape or not np.all(v >= 0):
        raise ValueError("sample_weight must hold one non-negative weight per example.")
    X, y, v = X[v > 0], y[v > 0], v[v > 0]       # weight 0: the example is removed
    n = X.shape[0]
    if fit_intercept:                            # bias = weight of a constant feature 1
        X = np.hstack([X, np.ones((n, 1))])
    D = X.shape[1]
    W_g, W_d = [], []                            # line 2: W <- {}  # [init]
    w, xi, dual = np.zeros(D), 0.0, 0.0          # OP3 over no constraint: w = 0, xi = 0  # [init]
    alpha = np.zeros(0)                          # its multipliers  # [init]
    iteration = 0
    while max_iter < 0 or iteration < max_iter:  # line 3: repeat
        c = most_violated(X, y, w)               # lines 5-7  # [find-c]
        g = (c * v * y) @ X / n                  # (1/n) sum c_i v_i y_i x_i  # [cut]
        off = (c * v).mean()                     # (1/n) sum c_i v_i  # [cut]
        xi_new = off - w @ g                     # xi' = the average weighted hinge loss  # [cut]
        primal = 0.5 * w @ w + C * xi_new        # OP2 objective at w (upper bound)
        if xi_new <= xi + epsilon:               # line 9  # [test]
            return w, True                       # [stop]
        W_g.append(g)                            # line 8: W <- W u {c}  # [add]
        W_d.append(off)                          # [add]
        alpha, w_next, xi_next = solve_reduced_qp(  # line 4  # [solve]
            np.array(W_g), np.array(W_d), C, np.append(alpha, 0.0))  # warm start  # [solve]
        iteration += 1
        yield CuttingPlaneRecord(
            iteration=iteration, w=w[: D - 1].copy() if fit_intercept else w.copy(),
            b=float(w[-1]) if fit_intercept else 0.0, w_norm=float(np.sqrt(w @ w)),
            xi=float(xi), xi_new=float(xi_new), constraint=c.copy(),
            constraint_size=int(c.sum()), constraint_norm=float(np.linalg.norm(g)),
            constraint_offset=float(off), working_set_size=len(W_g), alpha=alpha,
            primal=float(primal), dual=float(dual), gap=float(primal - dual))
        w, xi = w_next, xi_next                  # [solve]
        dual = float(alpha @ np.array(W_d) - 0.5 * w @ w)  # OP3 value (lower bound)  # [solve]
    return w, False


def fit(X, y, C=1.0, epsilon=1e-3, fit_intercept=True, max_iter=1000, sample_weight=None):
    """Run :func:`iter_fit` to the end; returns a :class:`ReferenceFit`."""
    records = []
    run = iter_fit(X, y, C, epsilon, fit_intercept, max_iter, sample_weight)
    while True:
        try:
            records.append(next(run))
        except StopIteration as end:
            w, converged = end.value
            break
    if fit_intercept:
        return ReferenceFit(w[:-1].copy(), float(w[-1]), records, converged)
    return ReferenceFit(w.copy(), 0.0, records, converged)


def explain(record):
    """``[(function, tags)]``: the lines of :func:`iter_fit`,
    :func:`most_violated` and :func:`solve_reduced_qp` that produced
    ``record`` (one iteration that added a constraint).  For the QP only
    what the record shows is marked: the face solve with the final step to
    the face's minimum, and whether the sum of alpha reached C (``C`` is read
    off the record as ``(primal - |w|^2 / 2) / xi'``); the active-set
    changes on the way (``null``, ``blocked``, ``enter``) are not recorded."""
    loop = {"find-c", "cut", "test", "add", "solve"}
    if record.iteration == 1:
        loop.add("init")
    qp = {"face", "kkt-hold"}
    qp.add("sum-binds" if _sum_binds(record) else "sum-slack")
    return [(iter_fit, loop), (most_violated, {"margin", "violated"}), (solve_reduced_qp, qp)]


def _sum_binds(record):
    """Whether sum alpha reached C (up to the 1e-12 of solve_reduced_qp)."""
    if record.xi_new <= 0:
        return False
    C = (record.primal - 0.5 * record.w_norm ** 2) / record.xi_new
    return float(np.sum(record.alpha)) >= C * (1.0 - 1e-12)


# --------------------------------------------------------------------------
# OCAS's exact line search, readable (svmlab.cutting_plane._ocas)
# --------------------------------------------------------------------------
def line_objective(k, ww, wd, dd, mb, dm, Cn, v=None):
    """``F(w_b + k delta)`` from the quantities the line search uses:
    ``1/2 (ww + 2 k wd + k^2 dd) + Cn sum_i max(0, 1 - mb_i - k dm_i)`` with
    ``ww = |w_b|^2``, ``wd = w_b.delta``, ``dd = |delta|^2``, ``mb`` the
    margins of w_b, ``dm`` those of delta, ``Cn = C / n``; with example
    weights ``v`` the hinge terms are ``v_i max(...)``."""
    k = np.asarray(k, dtype=np.float64)[..., None]
    terms = np.maximum(0.0, 1.0 - mb - k * dm)
    hinge = (terms if v is None else terms * v).sum(axis=-1)
    k = k[..., 0]
    return 0.5 * (ww + 2.0 * k * wd + k * k * dd) + Cn * hinge


def exact_line_search_sorted(wd, dd, mb, dm, Cn):
    """``argmin_{k >= 0} phi(k)``, ``phi(k) = 1/2 |w_b + k delta|^2 + Cn sum_i
    max(0, a_i - k b_i)`` with ``a_i = 1 - mb_i``, ``b_i = dm_i``.

    phi is convex and piecewise quadratic; its derivative
    ``phi'(k) = dd k + wd - Cn sum_{i active at k} b_i`` is nondecreasing and
    jumps up by ``Cn |b_i|`` at each breakpoint ``k_i = a_i / b_i``.  Walk
    the positive breakpoints in sorted order (O(n log n)) until phi' changes
    sign: inside a piece the root of the linear derivative is the minimiser;
    at a kink where it jumps over 0 the kink is.  Returns ``k``.
    """
    n = mb.shape[0]
    # slope of phi at 0+ : rows active just right of 0 are a_i > 0, or
    # a_i == 0 with b_i < 0 (hinge starts growing)
    s = wd
    nb = 0
    for i in range(n):
        a = 1.0 - mb[i]
        b = dm[i]
        if a > 0.0 or (a == 0.0 and b < 0.0):
            s -= Cn * b
        if b != 0.0 and a / b > 0.0:
            nb += 1
    if s >= 0.0:
        return 0.0  # phi nondecreasing from 0: w_b stays
    kk = np.empty(nb)
    jump = np.empty(nb)
    q = 0
    for i in range(n):
        a = 1.0 - mb[i]
        b = dm[i]
        if b != 0.0 and a / b > 0.0:
            kk[q] = a / b
            jump[q] = Cn * abs(b)
            q += 1
    order = np.argsort(kk, kind="stable")
    for t in range(nb):
        kt = kk[order[t]]
        # phi'(k) = dd k + s on [previous kink, kt)
        if dd > 0.0:
            root = -s / dd
            if root < kt:
                return root
        s += jump[order[t]]
        if dd * kt + s >= 0.0:
            return kt  # the derivative jumps over 0 at this kink
    if dd > 0.0:
        return -s / dd
    return 0.0  # (dd == 0 with a negative slope cannot happen: delta = 0 gives s = 0)
