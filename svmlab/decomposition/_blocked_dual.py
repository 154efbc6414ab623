"""Blocked decomposition for LIBSVM's generalised dual (epsilon-SVR, one-class).

Problem (LIBSVM's ``Solver``; l variables over n data rows)::

    min_a  f(a) = 1/2 a'Qa + p'a   s.t.  y'a = Delta,  0 <= a_t <= U_t,
    Q_ts = y_t y_s K(x_r(t), x_r(s))

where ``r`` maps each variable to its data row and ``Delta = y'a0`` is fixed
by the feasible start.  epsilon-SVR has l = 2n (``y = [+1.., -1..]``,
``p = [eps - z, eps + z]``, ``r_t = t mod n``); one-class has l = n
(``y = +1``, ``p = 0``, ``U = 1``, LIBSVM's start: the first ``floor(nu n)``
at 1, the next one fractional, so that ``sum a = nu n``).  The table of the
whole family is in :mod:`svmlab.smo._dual`.

The loop is :mod:`svmlab.decomposition._blocked`'s (ThunderSVM's outer
step, read that module's docstring) on this problem; what changes:

* **State per data row.**  The loop keeps ``u = sum_s a_s y_s K[r_s, :]``
  (n,), not a per-variable gradient: ``f0_t = u[r_t]`` and
  ``v_t = -y_t grad_t = -y_t p_t - u[r_t]`` (for C-SVC, ``p = -1`` and this
  is ``y - G``).  One stored kernel row ``K[r, :]`` then serves both
  variables of an SVR example, and the row store (:class:`RowStore`) holds
  rows of data rows.
* **Gradient update.**  The changed variables' ``y_s delta a_s`` are summed
  per data row (:func:`fold_rows`; the two variables of an SVR example that
  both moved share one row), then ``u += sum_r c_r K[r, :]``
  (:func:`svmlab.decomposition._blocked.add_changed_rows`).
* **Working set, sub-problem, pair step** are the C-SVC ones unchanged:
  in terms of ``v`` the first-order lists I_up/I_low, WSS 2's gain and
  Platt's step on the box are the same formulas for every p (only
  ``grad = -y v`` is used), so :func:`select_working_set` and
  :func:`block_smo` run on the variables, with ``K[B, B] = K[r_B, r_B]``
  (a working set holding both variables of one example has two equal rows;
  WSS 2 gives such a pair LIBSVM's ``tau`` curvature).
* **rho** is LIBSVM's ``calculate_rho``: the mean of ``-v_t`` over the free
  variables, else the midpoint of the KKT interval
  (:func:`svmlab._kkt.intercept`, ``rho = -b``).

nu-SVR (LIBSVM's ``Solver_NU``: the sum of each class's variables is fixed
too) runs with ``nu=True``: per-class violation, half the new working set
from each class, pairs within a class (:func:`block_smo_nu`), LIBSVM's
``(r1 - r2) / 2`` for rho.  nu-SVC (which also divides by ``r``) is not
covered.

The row store is :class:`svmlab.decomposition._blocked.RowStore` with its
buffer on ordinary pages (:func:`plain_pages`).  The working-set size
defaults to :func:`default_working_set`.  Measurements against LIBSVM:
``benchmarks/run_blocked_dual.py`` and docs/decisions/31b01.
"""

from __future__ import annotations

import numpy as np

from .._jit import njit
from .._stepping import SolverRun
from .._kkt import in_low, in_up, intercept, kkt_violation
from .._wss2 import gain, takes_j
from ..kernels.cache import plain_pages
from ._blocked import (INNER_FRACTION, INNER_STEPS_PER_EXAMPLE, RowStore, add_changed_rows,
                       block_smo, select_working_set)
from ..smo._pairstep import pair_step_box

__all__ = ["solve_blocked_dual", "dual_v", "fold_rows", "svr_problem", "one_class_problem",
           "nu_svr_problem", "block_smo_nu", "plain_pages",
           "default_working_set", "LOWDIM_DUAL_FEATURES", "LOWDIM_DUAL_WS", "DUAL_WS"]

#: dense data with at most this many features counts as low-dimensional here
LOWDIM_DUAL_FEATURES = 32
#: the working-set size (variables) on such data
LOWDIM_DUAL_WS = 384
#: and on wider or sparse data
DUAL_WS = 1024


def default_working_set(l, n_features, sparse=False):
    """The working-set size (in variables, at most ``l``) for a dual of l
    variables over data with ``n_features`` features: ``LOWDIM_DUAL_WS``
    (384) for dense data with at most ``LOWDIM_DUAL_FEATURES`` (32)
    features, else ``DUAL_WS`` (1024).

    Reason: with few features a kernel entry is cheap and the outer step's
    q-squared costs (gathering ``K[B, B]``, the sub-problem's pair steps)
    decide, so a smaller set is faster (the C-SVC rule of
    :func:`svmlab.decomposition._blocked.lowdim_working_set_size` for the
    same reason); on MNIST-like data the rows decide and 1024 is as fast as
    anything measured.  Measurements: docs/decisions/31b01."""
    q = LOWDIM_DUAL_WS if (not sparse and int(n_features) <= LOWDIM_DUAL_FEATURES) else DUAL_WS
    return int(max(2, min(q, int(l))))


@njit(cache=True)
def dual_v(yp, u, rows, v):
    """``v_t = yp_t - u[r_t]`` (``-y_t`` times LIBSVM's gradient) for every
    variable, in place.

    Parameters
    ----------
    yp : float64 array (l,)
        ``-y_t p_t``.
    u : float64 array (n,)
        ``sum_s a_s y_s K[r_s, :]`` (per data row).
    rows : int64 array (l,)
        The data row of each variable.
    v : float64 array (l,)
        Written in place.
    """
    for t in range(rows.shape[0]):
        v[t] = yp[t] - u[rows[t]]


@njit(cache=True)
def fold_rows(rB, d, mark, uniq, coef):
    """Sum ``d`` per data row: for every k with ``d[k] != 0``, ``coef`` of
    the row ``rB[k]`` gets ``d[k]``.  ``mark`` (n,) int64, all -1 on entry
    and on return, maps a row to its place in ``uniq``.  Returns how many
    distinct rows were written to ``uniq[:m]``, ``coef[:m]`` (in order of
    first appearance).

    Parameters
    ----------
    rB : int64 array (q,)
        Data rows of the working set's variables.
    d : float64 array (q,)
        ``y_t (a_t_new - a_t_old)``.
    mark : int64 array (n,)
        Scratch, -1 everywhere (restored).
    uniq : int64 array (>= q,)
        Out: the distinct rows.
    coef : float64 array (>= q,)
        Out: their summed coefficients.
    """
    m = 0
    for k in range(rB.shape[0]):
        if d[k] == 0.0:
            continue
        r = rB[k]
        s = mark[r]
        if s < 0:
            mark[r] = m
            uniq[m] = r
            coef[m] = d[k]
            m += 1
        else:
            coef[s] += d[k]
    for k in range(m):
        mark[uniq[k]] = -1
    return m


def svr_problem(z, C, epsilon):
    """LIBSVM's epsilon-SVR dual over n targets ``z``: ``(y, p, U, rows,
    alpha0)`` with l = 2n variables (``a`` then ``a*``), start 0."""
    z = np.asarray(z, dtype=np.float64).ravel()
    n = z.shape[0]
    y = np.concatenate([np.ones(n), -np.ones(n)])
    p = np.concatenate([epsilon - z, epsilon + z])
    U = np.broadcast_to(np.asarray(C, dtype=np.float64), (n,))
    U = np.concatenate([U, U])
    rows = np.concatenate([np.arange(n), np.arange(n)]).astype(np.int64)
    return y, p, U, rows, np.zeros(2 * n)


@njit(cache=True)
def block_smo_nu(K, y, alpha, C, v, eps, max_steps):
    """:func:`svmlab.decomposition._blocked.block_smo` for LIBSVM's
    ``Solver_NU`` (two equalities): both variables of a pair come from one
    class.  Each step takes, per class c, ``i_c = argmax v`` over I_up of c;
    the partner j is WSS 2's best (smallest :func:`svmlab._wss2.gain`, last
    index on ties) over both classes' candidates ``t`` in I_low with
    ``v_t < m_{class(t)}``, scored against its class's ``i``; the pair step
    is Platt's (:func:`svmlab.smo._pairstep.pair_step_box`), or
    :func:`_snap_values` where Platt's step refuses a move within rounding
    of a bound.  Stops when both classes' violations are ``<= eps``, after
    ``max_steps`` pair steps, or when no pair moves.  ``K`` is symmetric
    (rows are read for columns).  As in ``block_smo`` the I_up / I_low flags
    are kept per variable and the choice of the pairs reads masked copies
    of ``v`` (:func:`_fill_nu`, no branch per variable).  Parameters and returns as
    ``block_smo``'s (steps, violation at the start, stuck)."""
    q = y.shape[0]
    if max_steps <= 0:
        return 0, -1.0, False
    D = np.empty(q)
    up = np.empty(q, np.bool_)
    low = np.empty(q, np.bool_)
    pos = np.empty(q, np.bool_)
    for t in range(q):
        D[t] = K[t, t]
        up[t] = in_up(y[t], alpha[t], C[t])
        low[t] = in_low(y[t], alpha[t], C[t])
        pos[t] = y[t] > 0
    vup = np.empty(q)
    vun = np.empty(q)
    vlp = np.empty(q)
    vln = np.empty(q)
    gap0 = -1.0
    steps = 0
    stuck = False
    while steps < max_steps:
        # per class: i = argmax v over I_up (first index on ties), min over I_low
        _fill_nu(v, up, low, pos, vup, vun, vlp, vln)
        ip = np.argmax(vup)
        mp = vup[ip]
        if mp == -np.inf:
            ip = -1
        jn = np.argmax(vun)
        mn = vun[jn]
        if mn == -np.inf:
            jn = -1
        Mp = vlp.min()
        Mn = vln.min()
        gp = mp - Mp if (ip >= 0 and Mp < np.inf) else 0.0
        gn = mn - Mn if (jn >= 0 and Mn < np.inf) else 0.0
        gap = max(gp, gn)
        if gap0 < 0.0:
            gap0 = gap
        if gap <= eps:
            break
        best = np.inf
        j = -1
        rp = K[ip] if ip >= 0 else K[0]
        rn = K[jn] if jn >= 0 else K[0]
        for t in range(q):
            if not low[t]:
                continue
            if pos[t]:
                if ip < 0 or v[t] >= mp:
                    continue
                g = gain(mp, v[t], D[ip], D[t], np.float64(rp[t]))
            else:
                if jn < 0 or v[t] >= mn:
                    continue
                g = gain(mn, v[t], D[jn], D[t], np.float64(rn[t]))
            if takes_j(g, best):
                best = g
                j = t
        if j < 0:
            stuck = True
            break
        i = ip if y[j] > 0 else jn
        moved, aj, ai, _, _, _, _ = pair_step_box(
            y[j], y[i], alpha[j], alpha[i], -v[j], -v[i], 0.0,
            D[j], np.float64(K[j, i]), D[i], C[j], C[i], 1e-12,
        )
        if not moved:
            moved, ai, aj = _snap_values(y, alpha, C, i, j)
        if not moved:
            stuck = True
            break
        dj = y[j] * (aj - alpha[j])
        di = y[i] * (ai - alpha[i])
        alpha[j] = aj
        alpha[i] = ai
        up[i] = in_up(y[i], ai, C[i])
        low[i] = in_low(y[i], ai, C[i])
        up[j] = in_up(y[j], aj, C[j])
        low[j] = in_low(y[j], aj, C[j])
        _move_nu(K[j], K[i], dj, di, v)
        steps += 1
    return steps, gap0, stuck


@njit(cache=True, inline="always")
def _fill_nu(v, up, low, pos, vup, vun, vlp, vln):
    """Per class, ``v`` where the variable is in I_up (``vup``, ``vun``; else
    ``-inf``) and in I_low (``vlp``, ``vln``; else ``+inf``), from the kept
    flags: selects only (the loop vectorises), as ``block_smo``'s
    :func:`svmlab.decomposition._blocked._move_fill`."""
    for k in range(v.shape[0]):
        vk = v[k]
        a = vk if up[k] else -np.inf
        b = vk if low[k] else np.inf
        vup[k] = a if pos[k] else -np.inf
        vun[k] = -np.inf if pos[k] else a
        vlp[k] = b if pos[k] else np.inf
        vln[k] = np.inf if pos[k] else b


@njit(cache=True, inline="always")
def _move_nu(rj, ri, dj, di, v):
    """``v -= rj dj + ri di`` (the pair step's update, as
    :func:`svmlab.decomposition._smo_engine.pair_update` computes it, rows
    of the symmetric block read for its columns)."""
    for k in range(v.shape[0]):
        v[k] = v[k] - (rj[k] * dj + ri[k] * di)


@njit(cache=True)
def _snap_values(y, alpha, C, i, j):
    """The pair (i, j) of one class whose step Platt's step refused because
    one end is within rounding (``1e-12 C``) of the bound it moves to: that
    end onto its bound, the other end by the same amount (the class sum is
    kept), as LIBSVM's clipped update does.  Returns ``(moved, ai, aj)``
    (not moved: the room is larger than rounding; a real stall)."""
    if y[i] > 0:
        room = min(C[i] - alpha[i], alpha[j])
        s = room
    else:
        room = min(alpha[i], C[j] - alpha[j])
        s = -room
    if not (room > 0.0) or room > 1e-12 * max(C[i], C[j]):
        return False, alpha[i], alpha[j]
    ai = alpha[i] + s
    aj = alpha[j] - s
    # the limiting end lands exactly on its bound
    if y[i] > 0:
        if C[i] - alpha[i] <= alpha[j]:
            ai = C[i]
        else:
            aj = 0.0
    else:
        if alpha[i] <= C[j] - alpha[j]:
            ai = 0.0
        else:
            aj = C[j]
    return True, ai, aj


def nu_svr_problem(z, C, nu):
    """LIBSVM's nu-SVR dual over n targets ``z``: ``(y, p, U, rows, alpha0)``
    with l = 2n variables, ``p = [-z, z]``, ``U = C`` and LIBSVM's start
    (``solve_nu_svr``: ``a_i = a*_i``, filled up to C in order until each
    half sums to ``C nu n / 2``); solve with ``nu=True``."""
    z = np.asarray(z, dtype=np.float64).ravel()
    n = z.shape[0]
    C = float(C)
    y = np.concatenate([np.ones(n), -np.ones(n)])
    p = np.concatenate([-z, z])
    U = np.full(2 * n, C)
    rows = np.concatenate([np.arange(n), np.arange(n)]).astype(np.int64)
    total = C * nu * n / 2.0
    a = np.zeros(n)
    left = total
    for i in range(n):
        a[i] = min(left, C)
        left -= a[i]
        if left <= 0.0:
            break
    return y, p, U, rows, np.concatenate([a, a])


def one_class_problem(n, nu):
    """LIBSVM's one-class dual over n rows (its scaling: ``0 <= a <= 1``,
    ``sum a = nu n``) with LIBSVM's feasible start: ``(y, p, U, rows,
    alpha0)``."""
    n = int(n)
    a0 = np.zeros(n)
    k = int(nu * n)
    a0[:k] = 1.0
    if k < n:
        a0[k] = nu * n - k
    return np.ones(n), np.zeros(n), np.ones(n), np.arange(n, dtype=np.int64), a0


def _check(kernel, y, p, U, rows, alpha0, tol, q):
    n = kernel.n_samples
    y = np.ascontiguousarray(y, dtype=np.float64).ravel()
    l = y.shape[0]
    if l < 2:
        raise ValueError("the dual needs at least two variables")
    p = np.ascontiguousarray(np.broadcast_to(np.asarray(p, dtype=np.float64), (l,)))
    U = np.ascontiguousarray(np.broadcast_to(np.asarray(U, dtype=np.float64), (l,)))
    rows = np.ascontiguousarray(np.asarray(rows, dtype=np.int64).ravel())
    a0 = np.array(np.asarray(alpha0, dtype=np.float64).ravel(), dtype=np.float64)
    if not np.all((y == 1.0) | (y == -1.0)):
        raise ValueError("y must hold +1 and -1 only")
    if not np.all(np.isfinite(p)):
        raise ValueError("p must be finite")
    if not np.all(np.isfinite(U)) or np.any(U <= 0):
        raise ValueError("upper bounds U must be finite and > 0")
    if rows.shape != (l,) or rows.min() < 0 or rows.max() >= n:
        raise ValueError(f"rows must hold {l} data-row indices in [0, {n})")
    if a0.shape != (l,):
        raise ValueError(f"alpha0 has shape {a0.shape}, expected ({l},)")
    if not np.all(np.isfinite(a0)) or np.any(a0 < 0) or np.any(a0 > U):
        raise ValueError("alpha0 must be feasible: finite, 0 <= alpha0 <= U")
    if not (tol > 0 and np.isfinite(tol)):
        raise ValueError(f"tol must be a positive number, got {tol!r}")
    if q is not None and int(q) < 2:
        raise ValueError(f"q must be at least 2, got {q!r}")
    return y, p, U, rows, a0


def solve_blocked_dual(kernel, y, p, U, rows, alpha0, *, tol=1e-3, q=None, cache_size=200.0,
                       max_outer=100000, cache_dtype="float32", nu=False, huge_pages=False,
                       return_r=False):
    """The generalised dual (module docstring) by the blocked decomposition.

    Parameters
    ----------
    kernel : svmlab.kernels.Kernel
        The kernel on the n data rows.
    y, p, U : arrays (l,)
        Signs (+1/-1), linear term, finite upper bounds ``U_t > 0``.
    rows : int array (l,)
        The data row of each variable.
    alpha0 : array (l,)
        A feasible start (fixes ``Delta = y'alpha0``); it is not modified.
    tol : float
        Stop when the maximal violation ``m - M`` is ``<= tol`` (LIBSVM's eps).
    q : int or None
        Working-set size (variables; at most l); half of it is kept from one
        outer step to the next.  None: :func:`default_working_set`.  With
        ``nu`` at least 4, and when fewer than 4 places are new the set is
        chosen afresh (each class needs two variables to move).
    cache_size : float
        MB of full kernel rows in the row store (at least q rows).
    max_outer : int
        Most outer steps.
    cache_dtype : {"float32", "float64"}
        Type of the stored rows (float32: single-precision GEMM, twice the
        rows; the gradient is accumulated in float64 either way).
    nu : bool
        LIBSVM's ``Solver_NU`` (nu-SVR): the sum of each class's variables
        is fixed too, so the violation, the working set (half from each
        class) and rho (``(r1 - r2) / 2``) are per class, and the
        sub-problem is solved by :func:`block_smo_nu` (pairs within a class).
    huge_pages : bool
        Keep NumPy's huge-page advice for the row store (default: ordinary
        pages, :func:`plain_pages`; the switch exists for the measurement).
    return_r : bool
        Also return nu-SVR's ``r = (r1 + r2) / 2`` (NaN without ``nu``),
        which NuSVR's ``epsilon_`` is, computed with rho from the same
        per-class intercepts.

    Returns
    -------
    (alpha, G, rho, n_outer, converged), then ``r`` with ``return_r``
        ``G = Qa + p`` (l,), LIBSVM's gradient; ``rho`` LIBSVM's (decision
        ``sum_t a_t y_t K(x_r(t), x) - rho``); ``converged`` False after
        ``max_outer`` steps, a stall (a working set that could not move
        while ``m - M > tol``) or non-finite values.  The caller warns.
    """
    y, p, U, rows, alpha = _check(kernel, y, p, U, rows, alpha0, tol, q)
    n = kernel.n_samples
    l = y.shape[0]
    if q is None:
        d = kernel.data
        q = default_working_set(l, getattr(kernel, "n_features", DUAL_WS), bool(d.sparse))
    if nu:
        q = max(int(q), 4)  # two of each class: a pair in each
    q = int(min(q, l))
    # q = 2 keeps nothing: one kept and one new variable need not form a
    # violating pair (a stall); from q = 3 the new part holds the best pair
    half = max(q // 2, 1) if 3 <= q < l else 0
    yp = -y * p
    store = RowStore(kernel, n, float(cache_size), min(q, n), cache_dtype)
    if huge_pages:
        # NumPy's own allocation, with its huge-page advice (the store makes
        # its buffer on ordinary pages, svmlab.kernels.cache.plain_pages)
        store.buf = np.empty(store.buf.shape, store.dtype)
    u = np.zeros(n)
    mark = np.full(n, -1, np.int64)
    uniq = np.empty(max(q, 1), np.int64)
    coef = np.empty(max(q, 1))
    # the start's rows: u = sum_s a0_s y_s K[r_s, :], in chunks the store holds
    c0 = np.bincount(rows, weights=alpha * y, minlength=n)
    nz0 = np.flatnonzero(c0)
    chunk = max(1, min(store.cap, 1024))
    for a in range(0, len(nz0), chunk):
        rr = nz0[a:a + chunk]
        slots, _ = store.fetch(rr, 0)
        add_changed_rows(store.buf, slots, np.ascontiguousarray(c0[rr]), u)
    v = np.empty(l)
    keep = np.zeros(0, np.int64)
    # K[B, B] in the store's type: float32 rows give float32 values, which
    # the sub-problem reads as float64 (the same values, half the bytes)
    Kbb = np.empty((q, q), store.dtype)
    excl = np.zeros(l, bool)
    pos = y > 0
    neg = ~pos
    converged = False
    step = 0
    m_prev = 0
    while step < max_outer:
        dual_v(yp, u, rows, v)
        gap = _violation(v, y, alpha, U, nu, pos)
        if gap <= tol:
            converged = True
            break
        excl[keep] = True
        if nu:
            if q - len(keep) < 4:
                # too few new places for two of each class (a pair in each):
                # a fresh working set
                excl[keep] = False
                keep = keep[:0]
            k_new = q - len(keep)
            new_p = select_working_set(v, y, alpha, U, k_new // 2, excl | neg)
            new_n = select_working_set(v, y, alpha, U, k_new - len(new_p), excl | pos)
            new = np.concatenate([new_p, new_n])
        else:
            new = select_working_set(v, y, alpha, U, q - len(keep), excl)
        excl[keep] = False
        B = np.concatenate([keep, new])
        m = len(B)
        if m < 2:
            break
        step += 1
        rB = rows[B]
        h = len(keep)
        if h:
            # K[keep, keep] is the previous block's last h rows and columns
            Kbb[:h, :h] = Kbb[m_prev - h:m_prev, m_prev - h:m_prev].copy()
        K = Kbb[:m, :m]
        store.block_BB_kept(rB, h, step, K)
        m_prev = m
        aB = alpha[B]
        a_new = aB.copy()
        vB = v[B]
        yB = y[B]
        eps_in = max(tol, INNER_FRACTION * gap)
        if nu:
            block_smo_nu(K, yB, a_new, U[B], vB, eps_in, INNER_STEPS_PER_EXAMPLE * m)
        else:
            block_smo(K, yB, a_new, U[B], vB, eps_in, INNER_STEPS_PER_EXAMPLE * m)
        d = yB * (a_new - aB)
        k = fold_rows(rB, d, mark, uniq, coef)
        if not np.any(d != 0.0):
            break  # stall: the working set could not move
        if k:
            slots, _ = store.fetch(uniq[:k].copy(), step)
            add_changed_rows(store.buf, slots, np.ascontiguousarray(coef[:k]), u)
        alpha[B] = a_new
        keep = B[m - half:] if half else np.zeros(0, np.int64)
    dual_v(yp, u, rows, v)
    if not converged:
        converged = _violation(v, y, alpha, U, nu, pos) <= tol
    if not (np.all(np.isfinite(v)) and np.all(np.isfinite(alpha))):
        # non-finite kernel values (an overflowing poly kernel): never
        # reported as converged
        converged = False
    if nu:
        # Solver_NU's calculate_rho: r1 from the positives' G = -v, r2 from
        # the negatives' G = v, rho = (r1 - r2) / 2
        r1 = -_part_intercept(v, y, alpha, U, pos)
        r2 = _part_intercept(v, y, alpha, U, neg)
        rho = 0.5 * (r1 - r2)
        r = 0.5 * (r1 + r2)
    else:
        rho = -float(intercept(v, y, alpha, U))
        r = float("nan")
    G = -y * v
    if return_r:
        return alpha, G, rho, step, bool(converged), r
    return alpha, G, rho, step, bool(converged)


def _part_intercept(v, y, alpha, U, mask):
    """:func:`svmlab._kkt.intercept` over the variables of ``mask`` (0 if none)."""
    if not mask.any():
        return 0.0
    return float(intercept(np.ascontiguousarray(v[mask]), np.ascontiguousarray(y[mask]),
                           np.ascontiguousarray(alpha[mask]), np.ascontiguousarray(U[mask])))


def _violation(v, y, alpha, U, nu, pos):
    """The maximal violation ``m - M``; for ``nu`` the larger of the two
    classes' (LIBSVM's ``Solver_NU`` stopping rule)."""
    if not nu:
        return float(kkt_violation(v, y, alpha, U))
    gap = 0.0
    for mask in (pos, ~pos):
        if mask.any():
            gap = max(gap, float(kkt_violation(
                np.ascontiguousarray(v[mask]), np.ascontiguousarray(y[mask]),
                np.ascontiguousarray(alpha[mask]), np.ascontiguousarray(U[mask]))))
    return gap



#: fewest variables' data rows (n) from which ``solver="auto"`` takes this
#: solver for epsilon-SVR, nu-SVR and one-class on dense data (31b01: it
#: took 0.22-0.43 of LIBSVM's time from 5000 rows; at 1000-3000 rows the
#: compiled SMO on rows is as fast or faster)
AUTO_MIN_ROWS = 5000


class BlockedDualRun(SolverRun):
    """:func:`solve_blocked_dual` behind the stepping protocol of
    :class:`svmlab._stepping.SolverRun`, as the SVM family's parts take it
    (the ``"blocked"`` solver of SVR, NuSVR and OneClassSVM).

    The problem is the generalised dual of ``prob`` (a
    :class:`svmlab.reference.dual.DualProblem`: its ``idx``, ``y``, ``p``,
    ``U``, ``a0`` and ``nu``; ``K`` is not read) over the data rows of
    ``kernel``.  A step is one outer step (working set, rows, sub-problem,
    gradient); ``max_iter`` counts them (-1: the safeguard cap).

    Contract of the fast path: one call of :meth:`_advance` solves to the
    end (convergence, a stall, or the remaining ``max_iter`` budget), and
    may take more steps than the chunk it was asked for.  Reason: the
    solver's per-data-row gradient ``u`` lives inside one call, and a
    resumed call would recompute it from every support vector's row (a
    second call costs about what the rows of the first did); the chunks of
    :meth:`run` exist for progress bars and Ctrl-C, and a blocked fit of a
    few thousand rows takes about a second.  There is no one-step record
    (:meth:`_step` takes one outer step with no record: the explorers use
    the compiled SMO's steps).
    """

    step_name = "outer step"
    first_chunk = 1 << 30
    #: one BLAS thread, as LIBSVM computes: its GEMM blocks (a few hundred
    #: rows) gained nothing from OpenBLAS's second thread on this project's
    #: 2-core machines, whose spin-waits beside another busy process cost
    #: 2.5 times the CPU of a fit (make_regression 5000 x 20: 0.75 against
    #: 0.30 s; decision 31b01, as 28s01 found for the kernel rows)
    blas_threads = 1

    def __init__(self, kernel, prob, *, tol=1e-3, cache_size=200.0, max_iter=-1,
                 cache_dtype="float32", q=None, progress=False, estimator=None):
        super().__init__(estimator, max_iter=max_iter, progress=progress,
                         name="BlockedDualRun" if estimator is None else None)
        self.kernel = kernel
        self.prob = prob
        self.tol = float(tol)
        self.cache_size = float(cache_size)
        self.cache_dtype = cache_dtype
        self.q = q
        self.n_samples = int(kernel.n_samples)
        self.alpha = np.array(prob.a0, dtype=np.float64)
        self.G = None
        self.rho = 0.0
        self.r = float("nan")

    def _solve(self, max_outer):
        pb = self.prob
        alpha, G, rho, n_outer, conv, r = solve_blocked_dual(
            self.kernel, np.asarray(pb.y, np.float64), np.asarray(pb.p, np.float64),
            np.asarray(pb.U, np.float64), np.asarray(pb.idx, np.int64), self.alpha,
            tol=self.tol, q=self.q, cache_size=self.cache_size, max_outer=int(max_outer),
            cache_dtype=self.cache_dtype, nu=bool(pb.nu), return_r=True)
        self.alpha, self.G, self.rho, self.r = alpha, G, float(rho), float(r)
        if conv:
            self.converged = True
        elif n_outer < max_outer:
            self._mark_stalled(
                "a working set could not move, or the values stopped being finite "
                "(the kernel values overflow: scale the data)")
        return int(n_outer)

    def _advance(self, max_steps):
        if self.converged or self.stalled:
            return 0
        return self._solve(max(int(self.budget), 1))

    def _step(self):
        if self.converged or self.stalled:
            return None
        return None if self._solve(1) == 0 else {"outer_steps": 1}

    def result(self):
        pb = self.prob
        if self.G is None:  # no step taken: the start's gradient
            self._solve(0)
        G = self.G
        p = np.asarray(pb.p, np.float64)
        return {
            "alpha": self.alpha.copy(),
            "G": G.copy(),
            "rho": self.rho,
            "r": self.r,
            "intercept": -self.rho,
            "objective": float(0.5 * np.dot(self.alpha, G + p)),
            "n_iter": int(self.n_iter),
            "converged": bool(self.converged),
            "stop_reason": self.stop_reason,
        }
