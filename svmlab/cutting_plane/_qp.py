"""The small dense QP of the cutting-plane method (Joachims 2006, OP3's dual).

Problem (the dual of OP2 restricted to the working set W = {c_1..c_K})::

    max_alpha  D(alpha) = sum_k alpha_k d_k - 1/2 sum_kl alpha_k alpha_l H_kl
    s.t.       alpha_k >= 0,   sum_k alpha_k <= C

with ``d_k = (1/n) sum_i c_ki`` (the constraint offsets), ``g_k`` the
constraint vectors and ``H_kl = g_k . g_l``.  Then ``w = sum_k alpha_k g_k``.

The inequality ``sum alpha <= C`` is turned into an equality by a slack
multiplier ``alpha_0`` with ``d_0 = 0`` and ``H_0. = 0`` (a zero constraint
vector): the problem becomes ``min f(a) = 1/2 a'Ha - d'a`` over the scaled
simplex ``{a >= 0, sum a = C}``.  That is an SVM-dual-shaped problem with one
equality constraint and no upper bounds, warm-started from the previous
iteration's multipliers (the new cut's multiplier starts at 0) and solved
to a tight KKT tolerance.

KKT conditions (what ``tol`` bounds): with ``grad = Ha - d`` there is a
``lambda`` such that ``grad_k = lambda`` where ``a_k > 0`` and
``grad_k >= lambda`` where ``a_k = 0``; the violation measured is
``max_{a_k > 0} grad_k - min_k grad_k``, always on a gradient recomputed
from scratch, so that rounding in incremental updates cannot fake
optimality.  Gradients are sums of C-sized terms, so a violation below
:func:`qp_rounding_floor` cannot be certified: the tolerance is raised to it.

Two engines, each compiled on its own, so that a fit compiles the second
only when it needs it:

* the main engine (:func:`active_set_chol`): the primal active-set method
  on an updated Cholesky factor of the free set's lifted Gram matrix
  (:mod:`svmlab._linalg`).  From the previous optimum the new one is a few
  pivots away, each O(m^2) for m free cuts;
* the fallback (:func:`solve_smo`), when the main engine's point misses the
  tolerance: SMO with second-order working-pair selection (Fan, Chen & Lin
  2005), interleaved with guarded subspace-Newton steps on the free set
  (accepted only when they decrease the objective), and, when SMO's linear
  rate crawls (ill-conditioned working sets at large C) or the loop ends
  above tolerance, the textbook active-set method with exact face solves
  (:func:`active_set_qp`), kept when its recomputed violation is smaller.
  The caller warns when the violation still exceeds the tolerance.

:func:`add_cut_and_solve` is one iteration's work (add the cut, solve,
``w``, ``xi`` and the dual value) for every cutting-plane run.
"""

from __future__ import annotations

import numpy as np

from .._jit import njit
from .._linalg import chol_append, chol_delete, chol_solve, chol_solve2, dot

__all__ = ["solve_simplex_qp", "solve_op3_dual", "solve_active_set", "solve_smo",
           "active_set_qp", "active_set_chol", "add_cut_and_solve", "qp_rounding_floor"]

#: SMO pair steps after which the exact active-set method takes over (SMO's
#: linear rate stalls on ill-conditioned working sets at large C)
SMO_BUDGET = 100_000
#: a variable whose lifted vector has a squared distance to the span of the
#: free set's below this fraction of its squared norm counts as dependent
DEPENDENT_REL = 1e-12


def qp_rounding_floor(H, C):
    """The smallest KKT violation the solvers can certify:
    ``64 eps C max_k H_kk`` (gradients are sums of C-sized terms)."""
    hmax = max(0.0, float(np.max(np.diag(H)))) if H.shape[0] else 0.0
    return 64.0 * 2.220446049250313e-16 * float(C) * hmax


@njit(cache=True)
def _violation(a, grad):
    K = a.shape[0]
    gmin = np.inf
    gmax = -np.inf
    for k in range(K):
        if grad[k] < gmin:
            gmin = grad[k]
        if a[k] > 0.0 and grad[k] > gmax:
            gmax = grad[k]
    return gmax - gmin


@njit(cache=True)
def _violation_of(H, d, a):
    """:func:`_violation` at ``a`` with the gradient ``H a - d`` recomputed
    (rows of H, contiguous; a loop rather than BLAS, which would compile
    numba's whole matrix-vector product for this one use)."""
    K = a.shape[0]
    gmin = np.inf
    gmax = -np.inf
    for k in range(K):
        hk = H[k]
        g = 0.0
        for j in range(K):
            g += hk[j] * a[j]
        g -= d[k]
        if g < gmin:
            gmin = g
        if a[k] > 0.0 and g > gmax:
            gmax = g
    return gmax - gmin


@njit(cache=True)
def _rescale_to_sum(a, C):
    """Restore ``sum a = C`` exactly after the steps' roundings, by scaling
    (nothing to scale when every entry is 0)."""
    s = 0.0
    for k in range(a.shape[0]):
        s += a[k]
    if s > 0.0:
        for k in range(a.shape[0]):
            a[k] *= C / s


@njit(cache=True, inline="always")
def _entering(grad, in_face, F, m, tol):
    """The pricing step of both active-set methods: the variable outside
    the face ``F[:m]`` whose gradient is lowest, if it lies more than
    ``tol`` below the face's multiplier of ``sum a = C`` (the mean gradient
    over the face, equal on it at the face minimum); -1 when none does
    (the KKT conditions hold within ``tol``)."""
    lam = 0.0
    for r in range(m):
        lam += grad[F[r]]
    lam /= m
    best = lam - tol
    entering = np.int64(-1)  # (a literal -1 would compile the callers' callees for it)
    for k in range(grad.shape[0]):
        if not in_face[k] and grad[k] < best:
            best = grad[k]
            entering = k
    return entering


# --------------------------------------------------------------------------
# the main engine: primal active set on an updated Cholesky factor
# --------------------------------------------------------------------------
@njit(cache=True, inline="always")
def _null_step(H, d, a, Lc, F, m, k, grad, z, col):
    """Variable ``k`` (outside the free set F, lifted vector dependent on
    F's) and the free set: move along the null direction ``e_k - sum_r z_r
    e_{F_r}`` with ``L_FF z = col`` (the lifted Gram column of k), on which
    ``w`` and ``sum a`` stay fixed and the objective is linear, oriented
    downhill (slope ``grad_k - grad_F . z``), as far as the first variable
    reaching 0 (ratio test).  Returns the position in F of the variable that
    left, ``m`` when k itself went to 0, or -1 when no variable blocks."""
    chol_solve(Lc, m, col, z)
    slope = grad[k]
    for r in range(m):
        slope -= z[r] * grad[F[r]]
    sgn = 1.0 if slope <= 0.0 else -1.0
    t = np.inf
    rmin = np.int64(-1)  # (a literal -1 would compile chol_delete once more for it)
    if sgn < 0.0:  # a_k decreases
        t = a[k]
        rmin = m
    for r in range(m):
        pr = -sgn * z[r]
        if pr < 0.0:
            lim = a[F[r]] / -pr
            if lim < t:
                t = lim
                rmin = r
    if rmin < 0:
        return -1
    a[k] += sgn * t
    for r in range(m):
        v = a[F[r]] - sgn * t * z[r]
        a[F[r]] = v if v > 0.0 else 0.0
    if rmin == m:
        a[k] = 0.0
    else:
        a[F[rmin]] = 0.0
    return rmin


@njit(cache=True, inline="always")
def _face_minimiser(Lc, m, F, d, C, x, z, col):
    """Minimiser of ``1/2 a'La - d'a`` on ``sum a = C`` over the free set
    (``L = Lc Lc'`` the lifted Gram ``H_FF + 1``, equal to the objective's
    ``H_FF`` on that hyperplane up to the constant ``C^2/2``): ``x = L^{-1}
    (d_F - lambda 1)`` with ``lambda`` from ``sum x = C``.  ``z``, ``col``:
    work arrays."""
    for r in range(m):
        col[r] = d[F[r]]
    chol_solve2(Lc, m, col, x, z)
    sx = 0.0
    sz = 0.0
    for r in range(m):
        sx += x[r]
        sz += z[r]
    lam = (sx - C) / sz
    for r in range(m):
        x[r] -= lam * z[r]


@njit(cache=True, inline="always")
def _start_factor(H, a, Lc, F, inF, col):
    """The factor of the lifted Gram matrix of the free set ``{a_k > 0}``
    (in index order) into ``Lc``, ``F``, ``inF``; returns its size, or -1
    when the free set is dependent."""
    m = np.int64(0)  # (a literal 0 would compile chol_append once more for it)
    for k in range(a.shape[0]):
        if a[k] > 0.0:
            for r in range(m):
                col[r] = H[F[r], k] + 1.0
            if not chol_append(Lc, m, col, H[k, k] + 1.0, DEPENDENT_REL):
                return -1
            F[m] = k
            inF[k] = True
            m += 1
    return m


@njit(cache=True, inline="always")
def _leave(Lc, F, inF, m, r):
    """Free variable ``F[r]`` leaves the free set (factor and list); returns
    the new size."""
    inF[F[r]] = False
    chol_delete(Lc, m, r)
    for q in range(r, m - 1):
        F[q] = F[q + 1]
    return m - 1


@njit(cache=True, inline="always")
def _ratio_step(a, x, F, m):
    """Move the free variables towards the face minimiser ``x`` as far as
    the first of them reaching 0 (ratio test); returns its position in F
    (set to exactly 0), or -1 when the whole step was taken."""
    t = 1.0
    rmin = np.int64(-1)  # (a literal -1 would compile chol_delete once more for it)
    for r in range(m):
        ar = a[F[r]]
        p = x[r] - ar
        if p < 0.0 and ar < -p * t:
            t = ar / -p
            rmin = r
    for r in range(m):
        k = F[r]
        v = a[k] + t * (x[r] - a[k])
        a[k] = v if v > 0.0 else 0.0
    if rmin >= 0:
        a[F[rmin]] = 0.0
    return rmin


@njit(cache=True, inline="always")
def active_set_chol(H, d, C, a, tol, max_steps):
    """min 1/2 a'Ha - d'a  s.t. a >= 0, sum a = C, in place on a feasible
    ``a`` (warm start): the primal active-set method of :func:`active_set_qp`
    on an updated factorisation.

    The free set F = {k : a_k > 0} keeps the lower Cholesky factor of its
    lifted Gram matrix ``H_FF + 1`` (the Gram matrix of the vectors
    ``(g_k, 1)``, nonsingular while they are independent).  Each step solves
    the face's KKT system with two triangular solves (O(m^2), m = |F|),
    then either a ratio test stops the step at the first free variable to
    reach 0, which leaves F (O(m^2)), or, at the face minimum, the variable
    outside F of smallest gradient enters when its gradient is below the
    free set's by more than ``tol`` (O(m^2)).  An entering variable whose
    lifted vector depends on F's first takes null steps (:func:`_null_step`:
    w fixed, the objective linear and decreasing) that drive free variables
    out until it is independent.

    ``tol``: the entering threshold on gradients (units of xi).
    ``max_steps``: limit on pivots (entering, leaving and null steps).
    Returns ``(steps, status)``: status 1 when no variable outside F has a
    gradient below the free set's minus ``tol`` at a face minimum (the KKT
    conditions to ``tol``, up to the rounding of the face solves; the caller
    recomputes the violation), 0 when ``max_steps`` ran out, -1 when the
    starting free set is dependent or a null step found no blocking
    variable (``a`` stays feasible in every case; sum a = C is restored by
    rescaling).
    """
    K = a.shape[0]
    F = np.empty(K, dtype=np.int64)
    inF = np.zeros(K, dtype=np.bool_)
    Lc = np.empty((K + 1, K + 1))
    col = np.empty(K)
    x = np.empty(K)
    z = np.empty(K)
    grad = np.empty(K)
    m = _start_factor(H, a, Lc, F, inF, col)
    status = 0 if m >= 0 else -1
    steps = 0
    while status == 0 and steps < max_steps:
        steps += 1
        _face_minimiser(Lc, m, F, d, C, x, z, col)
        rmin = _ratio_step(a, x, F, m)
        if rmin >= 0:
            m = _leave(Lc, F, inF, m, rmin)
            continue
        # at the face minimum: price the variables outside F
        for k in range(K):
            s = -d[k]
            for r in range(m):
                s += H[k, F[r]] * a[F[r]]
            grad[k] = s
        ent = _entering(grad, inF, F, m, tol)
        if ent < 0:
            status = 1
            break
        # enter; while dependent on F, null steps push free variables out
        while True:
            for r in range(m):
                col[r] = H[F[r], ent] + 1.0
            if chol_append(Lc, m, col, H[ent, ent] + 1.0, DEPENDENT_REL):
                F[m] = ent
                inF[ent] = True
                m += 1
                break
            steps += 1
            rl = _null_step(H, d, a, Lc, F, m, ent, grad, z, col)
            if rl < 0:
                status = -1
                break
            if rl == m:
                break  # the entering variable went back to 0
            m = _leave(Lc, F, inF, m, rl)
    _rescale_to_sum(a, C)
    return steps, status


# --------------------------------------------------------------------------
# the solve: main engine first, the fallback only when needed
# --------------------------------------------------------------------------
@njit(cache=True)
def solve_active_set(H, d, C, a, tol):
    """The main engine from the feasible ``a`` (in place), with ``tol``
    already raised to the rounding floor.  Returns ``(pivots, violation)``,
    the violation on a recomputed gradient."""
    K = a.shape[0]
    steps, _status = active_set_chol(H, d, C, a, tol, 50 * (K + 1))
    return steps, _violation_of(H, d, a)


def solve_simplex_qp(H, d, C, a, tol, max_iter, use_newton=True, max_free=1 << 30,
                     use_active_set=True):
    """min 1/2 a'Ha - d'a  s.t. a >= 0, sum a = C  (in place on ``a``).

    ``a`` must be feasible on entry (warm start); ``H``, ``d``, ``a``
    C-contiguous float64.  With ``use_active_set`` (the default) the main
    engine (:func:`solve_active_set`) runs first and its point is kept when
    its violation is within ``tol``; otherwise (or with
    ``use_active_set=False``) the fallback :func:`solve_smo` continues from
    its point (feasible, with an objective no larger), at most ``max_iter``
    steps in all.  ``max_free`` bounds the free-set size for which a Newton
    step is tried (``rank(H) + 1``).  Returns ``(steps, kkt_violation)``
    (pivots of the main engine plus the fallback's steps), the violation
    measured on a freshly recomputed gradient.
    """
    tol = max(float(tol), qp_rounding_floor(H, C))
    steps = 0
    if use_active_set and a.shape[0] > 0:
        steps, viol = solve_active_set(H, d, float(C), a, tol)
        if viol <= tol:
            return steps, viol
    return solve_smo(H, d, float(C), a, tol, int(max_iter), bool(use_newton), int(max_free),
                     int(steps))


@njit(cache=True, inline="always")
def _add_cut(G, H, d, a, K, g, off):
    """Store the new cut as cut K + 1 of the buffers (``G[K] = g``, its row
    and column of the Gram matrix ``H``, its offset, multiplier 0).  The
    inner products are reassociated (:func:`svmlab._linalg.dot`, SIMD)."""
    D = g.shape[0]
    for j in range(D):
        G[K, j] = g[j]
    for k in range(K + 1):
        s = dot(G[k], g, D)
        H[K + 1, k + 1] = s
        H[k + 1, K + 1] = s
    d[K + 1] = off
    a[K + 1] = 0.0


@njit(cache=True, inline="always")
def reduced_solution(G, d, a, K, w):
    """``w = sum_k alpha_k g_k`` over the K cuts (into ``w``) and ``(xi,
    dual)``: ``xi = max(0, max_k d_k - g_k.w)`` and ``dual = sum_k alpha_k
    d_k - 1/2 |w|^2`` (a lower bound on the optimum for any feasible
    alpha)."""
    D = w.shape[0]
    for j in range(D):
        w[j] = 0.0
    for k in range(K):
        ak = a[k + 1]
        if ak != 0.0:
            for j in range(D):
                w[j] += ak * G[k, j]
    ww = dot(w, w, D)
    xi = 0.0
    dual = 0.0
    for k in range(K):
        s = d[k + 1] - dot(G[k], w, D)
        if s > xi:
            xi = s
        dual += a[k + 1] * d[k + 1]
    return xi, dual - 0.5 * ww


@njit(cache=True)
def _cut_and_main_engine(G, H, d, a, K, g, off, C, tol, w):
    """:func:`_add_cut`, then the main engine on the K + 2 variables (a
    contiguous copy of their Gram block) and, when it meets the tolerance
    (raised to the rounding floor), :func:`reduced_solution`.  Returns
    ``(steps, violation, tol, xi, dual, solved)``."""
    _add_cut(G, H, d, a, K, g, off)
    k1 = K + 2
    Hk = np.empty((k1, k1))
    hmax = 0.0
    for k in range(k1):
        for j in range(k1):
            Hk[k, j] = H[k, j]
        if Hk[k, k] > hmax:
            hmax = Hk[k, k]
    tol = max(tol, 64.0 * 2.220446049250313e-16 * C * hmax)
    ak = a[:k1]
    dk = d[:k1]
    steps, _status = active_set_chol(Hk, dk, C, ak, tol, 50 * (k1 + 1))
    viol = _violation_of(Hk, dk, ak)
    if viol > tol:
        return steps, viol, tol, 0.0, 0.0, False
    xi, dual = reduced_solution(G, d, a, K + 1, w)
    return steps, viol, tol, xi, dual, True


def add_cut_and_solve(G, H, d, a, K, g, off, C, tol, max_free, w, use_newton=True,
                      use_active_set=True):
    """One iteration's reduced-QP work: add the new cut, re-solve, and
    ``w``, ``xi`` and the dual value (one compiled call when the main engine
    suffices, as it nearly always does).

    The working set lives in capacity-sized buffers: ``G`` (rows = cut
    vectors g_1..g_K), ``H`` (the slack-augmented Gram matrix, ``H[0, :] =
    0``, ``H[k, l] = g_k . g_l``), ``d`` (``[0, d_1..]``) and ``a``
    (``[slack, alpha_1..]``), with K cuts in use.

    Parameters
    ----------
    G, H, d, a : the buffers (capacity >= K + 1 cuts), updated in place:
        the new cut becomes cut K + 1 (``G[K] = g``, its Gram row, ``d``,
        multiplier 0) and ``a[:K + 2]`` the re-solved multipliers.
    K : cuts before this one.
    g, off : the new cut's vector (length D) and offset.
    C : the bound on sum alpha.
    tol, max_free, use_newton, use_active_set : as :func:`solve_simplex_qp`.
    w : (D,) output, ``w = sum_k alpha_k g_k``.

    Returns ``(steps, kkt_violation, xi, dual)``.
    """
    C = float(C)
    if use_active_set:
        steps, viol, tol_eff, xi, dual, solved = _cut_and_main_engine(
            G, H, d, a, K, g, float(off), C, float(tol), w)
        if solved:
            return steps, viol, xi, dual
    else:
        _add_cut(G, H, d, a, K, g, float(off))
        steps = 0
        tol_eff = max(float(tol), qp_rounding_floor(H[:K + 2, :K + 2], C))
    k1 = K + 2
    steps, viol = solve_smo(np.ascontiguousarray(H[:k1, :k1]), d[:k1], C, a[:k1], tol_eff,
                            10_000_000, bool(use_newton), int(max_free), int(steps))
    xi, dual = reduced_solution(G, d, a, K + 1, w)
    return steps, viol, xi, dual


# --------------------------------------------------------------------------
# the fallback: SMO with subspace-Newton steps, then exact face solves
# --------------------------------------------------------------------------
@njit(cache=True)
def solve_smo(H, d, C, a, tol, max_iter, use_newton, max_free, it):
    """The fallback engine from the feasible ``a`` (in place), ``it`` steps
    already taken, ``tol`` already raised to the rounding floor: bursts of
    SMO pair steps (:func:`_smo_phase`, which fix the active set and always
    make progress) alternating with guarded subspace-Newton steps on the
    free set (:func:`_newton_phase`, fast final convergence when H is
    ill-conditioned), handing over to the exact active-set method
    (:func:`_try_active_set`) after :data:`SMO_BUDGET` steps or when the
    loop ends above tolerance.  Returns ``(steps, kkt_violation)``."""
    K = a.shape[0]
    grad = H @ a - d
    viol = _violation(a, grad)
    burst = 2 * K + 10
    switch = max(SMO_BUDGET, 100 * K)
    tried_active_set = False
    for _round in range(100000):
        if viol <= tol or it >= max_iter:
            break
        if it >= switch and not tried_active_set:
            viol = _try_active_set(H, d, C, a, tol, viol)
            grad = H @ a - d
            tried_active_set = True
            if viol <= tol:
                break
        steps, v = _smo_phase(H, d, C, a, grad, tol, min(burst, max_iter - it))
        it += steps
        grad = H @ a - d
        viol = _violation(a, grad)
        if viol <= tol:
            break
        if use_newton and _newton_phase(H, d, C, a, grad, max_free):
            grad = H @ a - d
            viol = _violation(a, grad)
        elif steps == 0:
            break
    if viol > tol and not tried_active_set:
        viol = _try_active_set(H, d, C, a, tol, viol)
    return it, viol


@njit(cache=True)
def _smo_phase(H, d, C, a, grad, tol, max_steps):
    """Up to ``max_steps`` SMO pair steps (second-order pair selection).
    Returns ``(steps, violation_estimate)``; ``grad`` is updated in place.
    H is symmetric, so the gradient update reads rows ``H[i]``, ``H[j]``
    (contiguous) rather than columns, and the diagonal is copied once."""
    K = a.shape[0]
    it = 0
    viol = np.inf
    diag = np.empty(K)
    for k in range(K):
        diag[k] = H[k, k]
    while it < max_steps:
        # i: steepest descent direction to increase (min gradient)
        i = -1
        gmin = np.inf
        for k in range(K):
            if grad[k] < gmin:
                gmin = grad[k]
                i = k
        # j: a variable that can decrease, second-order choice
        j = -1
        best = -1.0
        gmax = -np.inf
        for k in range(K):
            if a[k] > 0.0:
                if grad[k] > gmax:
                    gmax = grad[k]
                diff = grad[k] - gmin
                if diff > 0.0:
                    eta = diag[i] + diag[k] - 2.0 * H[i, k]
                    if eta <= 1e-300:
                        eta = 1e-300
                    gain = diff * diff / eta
                    if gain > best:
                        best = gain
                        j = k
        viol = gmax - gmin
        if j < 0 or viol <= tol:
            break
        eta = diag[i] + diag[j] - 2.0 * H[i, j]
        diff = grad[j] - grad[i]
        if eta > 1e-300:
            t = diff / eta
            if t > a[j]:
                t = a[j]
        else:
            t = a[j]
        if t <= 0.0:
            break
        a[i] += t
        a[j] -= t
        Hi = H[i]
        Hj = H[j]
        for k in range(K):
            grad[k] += t * (Hi[k] - Hj[k])
        it += 1
    return it, viol


@njit(cache=True, inline="always")
def _face_lstsq(H, d, C, F, m):
    """The face minimiser of :func:`_newton_phase`: the KKT system
    ``H_FF a_F - lambda 1 = d_F, sum a_F = C`` by least squares; an empty
    array when the free constraints are dependent (no unique minimiser) or
    the system is inconsistent (the quadratic is unbounded on the face)."""
    M = np.zeros((m + 1, m + 1))
    rhs = np.zeros(m + 1)
    for r in range(m):
        for c in range(m):
            M[r, c] = H[F[r], F[c]]
        M[r, m] = -1.0
        M[m, r] = 1.0
        rhs[r] = d[F[r]]
    rhs[m] = C
    sol, _r, rank, _sv = np.linalg.lstsq(M, rhs, -1.0)
    if rank < m + 1:
        return np.empty(0)
    res = M @ sol - rhs
    scale = 1.0
    for r in range(m + 1):
        scale = max(scale, abs(rhs[r]))
    if np.sqrt(np.sum(res * res)) > 1e-9 * scale:
        return np.empty(0)
    return sol


@njit(cache=True)
def _newton_phase(H, d, C, a, grad, max_free):
    """Subspace Newton step on the free set F = {a_k > 0}: move towards the
    minimiser of the quadratic on ``{a_F : sum a_F = C}`` (KKT system solved
    by least squares) as far as feasibility allows: when that minimiser is
    infeasible the step stops where the first free variable reaches 0 (the
    ratio test of an active-set method), which then leaves F.  Accepted only
    when it strictly decreases the objective; returns whether it was."""
    K = a.shape[0]
    m = 0
    for k in range(K):
        if a[k] > 0.0:
            m += 1
    if m < 2 or m > max_free:
        return False  # (more than rank(H) + 1 free: the face system is singular)
    F = np.empty(m, dtype=np.int64)
    q = 0
    for k in range(K):
        if a[k] > 0.0:
            F[q] = k
            q += 1
    sol = _face_lstsq(H, d, C, F, m)
    if sol.shape[0] == 0:
        return False
    p = np.empty(m)
    t = 1.0
    for r in range(m):
        p[r] = sol[r] - a[F[r]]
        if p[r] < 0.0:
            lim = a[F[r]] / -p[r]
            if lim < t:
                t = lim
    # t < 1: the face minimiser is infeasible; the step stops where the
    # first free variable reaches 0 (the objective decreases all along the
    # segment towards the face minimiser, a convex quadratic minimised at
    # t = 1), as in an active-set method; that variable leaves the free set
    lin = 0.0
    quad = 0.0
    for r in range(m):
        lin += grad[F[r]] * p[r]
        hp = 0.0
        for c in range(m):
            hp += H[F[r], F[c]] * p[c]
        quad += p[r] * hp
    dec = t * lin + 0.5 * t * t * quad
    if not dec < 0.0:
        return False
    for r in range(m):
        k = F[r]
        v = a[k] + t * p[r]
        if v <= 1e-14 * C or (p[r] < 0.0 and a[k] / -p[r] <= t):
            v = 0.0
        a[k] = v
    # restore sum a = C exactly on the free variables
    _rescale_to_sum(a, C)
    return True


@njit(cache=True)
def _try_active_set(H, d, C, a, tol, viol):
    """Run :func:`active_set_qp` from a copy of ``a``; keep its result only
    when its (recomputed) KKT violation is smaller.  Returns the violation
    of the ``a`` kept."""
    b = a.copy()
    K = a.shape[0]
    active_set_qp(H, d, C, b, 0.5 * tol, 50 * (K + 1))
    s = 0.0
    for k in range(K):
        s += b[k]
    if s > 0.0:
        for k in range(K):
            b[k] *= C / s  # restore sum a = C exactly
    v = _violation(b, H @ b - d)
    if v < viol:
        a[:] = b
        return v
    return viol


@njit(cache=True, inline="always")
def _null_direction(H, d, a, F, m, V, entering, p):
    """:func:`active_set_qp` with a dependent free set: ``p`` = the null
    direction of the lifted vectors (eigenvector ``V[:, 0]``), oriented so
    that the entering variable grows, or, with none, downhill."""
    for r in range(m):
        p[r] = V[r, 0]
    flip = False
    if entering >= 0:
        for r in range(m):
            if F[r] == entering and p[r] < 0.0:
                flip = True
    else:
        slope = 0.0
        for r in range(m):
            gr = -d[F[r]]
            for c in range(a.shape[0]):
                gr += H[F[r], c] * a[c]
            slope += gr * p[r]
        flip = slope > 0.0
    if flip:
        for r in range(m):
            p[r] = -p[r]


@njit(cache=True, inline="always")
def _to_face_minimiser(H, d, C, a, F, m, p):
    """:func:`active_set_qp` with an independent free set: ``p`` = the step
    to the face minimiser, from the KKT system ``H_FF a_F + lambda 1 = d_F,
    sum a_F = C`` (exact linear solve)."""
    M = np.zeros((m + 1, m + 1))
    rhs = np.empty(m + 1)
    for r in range(m):
        for c in range(m):
            M[r, c] = H[F[r], F[c]]
        M[r, m] = 1.0
        M[m, r] = 1.0
        rhs[r] = d[F[r]]
    rhs[m] = C
    sol = np.linalg.solve(M, rhs)
    for r in range(m):
        p[r] = sol[r] - a[F[r]]


@njit(cache=True)
def active_set_qp(H, d, C, a, tol, max_steps):
    """The textbook primal active-set method on ``min 1/2 a'Ha - d'a``,
    ``a >= 0``, ``sum a = C`` (in place on a feasible ``a``), compiled; the
    same method as :func:`svmlab.reference.cutting_plane.solve_reduced_qp`,
    written on H alone (the lifted vectors ``(g_k, 1)`` of the free set F
    have the Gram matrix ``H_FF + 1``):

    * F independent: step towards the face minimiser, from the KKT system
      ``H_FF a_F + lambda 1 = d_F, sum a_F = C`` (exact linear solve);
    * F dependent: move along a null direction (w and sum a unchanged, the
      objective linear), oriented so the entering variable grows;
    * ratio test: the first ``a_k`` to reach 0 leaves F;
    * at the face minimum the most violated variable outside F enters, if
      its gradient is below ``lambda - tol``.

    Each face solve is exact, so it converges to rounding in a finite number
    of steps where SMO's linear rate crawls (ill-conditioned H at large C).
    Returns True when the KKT conditions hold to ``tol``, False when
    ``max_steps`` active-set steps did not suffice (``a`` stays feasible).
    """
    K = a.shape[0]
    free = a > 0.0
    entering = -1
    for _step in range(max_steps):
        m = 0
        for k in range(K):
            if free[k]:
                m += 1
        F = np.empty(m, dtype=np.int64)
        q = 0
        for k in range(K):
            if free[k]:
                F[q] = k
                q += 1
        L = np.empty((m, m))
        for r in range(m):
            for c in range(m):
                L[r, c] = H[F[r], F[c]] + 1.0
        ev, V = np.linalg.eigh(L)
        p = np.empty(m)
        t = np.inf
        if ev[0] <= 1e-12 * ev[m - 1]:
            _null_direction(H, d, a, F, m, V, entering, p)
        else:
            _to_face_minimiser(H, d, C, a, F, m, p)
            t = 1.0
        entering = -1
        # ratio test
        tmin = np.inf
        rmin = -1
        for r in range(m):
            if p[r] < 0.0:
                lim = a[F[r]] / -p[r]
                if lim < tmin:
                    tmin = lim
                    rmin = r
        if rmin >= 0 and tmin < t:
            for r in range(m):
                a[F[r]] += tmin * p[r]
                if a[F[r]] < 0.0:
                    a[F[r]] = 0.0
            a[F[rmin]] = 0.0
            for k in range(K):
                free[k] = a[k] > 0.0
            continue
        if t == np.inf:
            return False  # unbounded null direction: cannot happen for a bounded face
        for r in range(m):
            a[F[r]] += t * p[r]
            if a[F[r]] < 0.0:
                a[F[r]] = 0.0
        grad = H @ a - d
        entering = _entering(grad, free, F, m, tol)
        if entering < 0:
            return True
        free[entering] = True
    return False


def solve_op3_dual(G_gram, d, C, alpha0=None, tol=1e-12, max_iter=10_000_000,
                   use_newton=True, use_active_set=True):
    """Solve OP3's dual over a working set.

    Parameters
    ----------
    G_gram : (K, K) Gram matrix ``g_k . g_l`` of the constraint vectors.
    d : (K,) constraint offsets.
    C : the paper's C (bound on ``sum alpha``).
    alpha0 : optional warm start (K,), feasible (``>= 0``, ``sum <= C``).
    use_newton : interleave subspace-Newton steps in the SMO engine.
    use_active_set : start with the active-set method on an updated
        Cholesky factor (:func:`active_set_chol`); False with
        ``use_newton=False``: pure SMO (then the compiled active-set method
        of the fallback only).

    Returns ``(alpha, info)`` with ``info = {"n_steps", "kkt_violation"}``.
    """
    G_gram = np.asarray(G_gram, dtype=np.float64)
    d = np.asarray(d, dtype=np.float64)
    K = d.shape[0]
    H = np.zeros((K + 1, K + 1))
    H[1:, 1:] = G_gram
    dd = np.zeros(K + 1)
    dd[1:] = d
    a = np.zeros(K + 1)
    if alpha0 is None:
        a[0] = C
    else:
        a0 = np.maximum(np.asarray(alpha0, dtype=np.float64), 0.0)
        s = a0.sum()
        if s > C:
            a0 *= C / s
            s = C
        a[1:] = a0
        a[0] = C - s
    # the tolerance is on gradients (units of xi); scale-free in C
    steps, viol = solve_simplex_qp(H, dd, float(C), a, float(tol), int(max_iter),
                                   bool(use_newton), 1 << 30, bool(use_active_set))
    return a[1:].copy(), {"n_steps": int(steps), "kkt_violation": float(viol)}
