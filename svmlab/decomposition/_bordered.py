"""The system (3) of Perez-Cruz et al. (2000) in Python, with LAPACK: the
bordered system of an active-set step on S1::

    [ K_11  1 ] [ d ]   [ rhs ]
    [ 1'    0 ] [ b ] = [  c  ]

solved by Cholesky of ``K_11`` (plus a ridge in the line-search mode) and
a Schur complement for ``b``; when Cholesky fails, LU of the bordered
matrix and, if that is singular too, least squares.  Table 1 of the
paper runs here (:class:`svmlab.decomposition._active_set.ActiveSetSubproblem`);
the compiled line-search mode (:mod:`svmlab.decomposition._line_search`)
comes here only when its kept factor is unusable.

The Cholesky calls are LAPACK's ``dpotrf``/``dpotrs`` called directly
(:func:`cho_factor`), the same calls as the readable reference's
``scipy.linalg.cho_factor`` (so bit for bit the same), without scipy's
per-call checks.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg as sla

__all__ = ["cho_factor", "cho_solve", "solve_ls"]

_potrf = sla.lapack.dpotrf
_potrs = sla.lapack.dpotrs


def cho_factor(A):
    """``scipy.linalg.cho_factor(A, lower=True, check_finite=False)`` without
    its Python checks: the same LAPACK ``dpotrf`` call on the same array
    (so the same bits as the readable reference's ``cho_factor``).  Raises
    LinAlgError when ``A`` is not positive definite, as cho_factor does."""
    cf, info = _potrf(A, lower=1, clean=0, overwrite_a=0)
    if info != 0:
        raise np.linalg.LinAlgError(f"dpotrf info={info}")
    return cf


def cho_solve(cf, b):
    """``scipy.linalg.cho_solve((cf, True), b, check_finite=False)``: the same
    LAPACK ``dpotrs`` call."""
    x, info = _potrs(cf, b, lower=1, overwrite_b=0)
    if info != 0:
        raise ValueError(f"dpotrs info={info}")
    return x


def solve_ls(K11, rhs, c, ridge=0.0, allow_lstsq=True, allow_lu=True):
    """Solve ``K11 d + b 1 = rhs``, ``1' d = c``.  Returns ``(d, b, method)``.

    With ``ridge > 0`` (the monotone line-search mode) ``K11 + ridge I`` is
    factorised by Cholesky, the ridge growing x100 until it is positive
    definite: the direction is then always a descent direction.
    ``allow_lu=False`` (Table 1): when Cholesky fails, ``(None, 0.0,
    "lstsq")`` at once, without the LU of the bordered matrix."""
    m = K11.shape[0]
    ones = np.ones(m)
    if ridge:
        scale = max(1.0, float(np.abs(np.diag(K11)).max()) if m else 1.0)
        rr = ridge
        while rr < 1e-2 * scale:
            try:
                cf = cho_factor(K11 + rr * np.eye(m))
                u = cho_solve(cf, rhs)
                w = cho_solve(cf, ones)
                if np.all(np.isfinite(u)) and np.all(np.isfinite(w)) and w.sum() > 0:
                    b = (u.sum() - c) / w.sum()
                    return u - b * w, float(b), "cholesky" if rr == ridge else "cholesky+ridge"
            except np.linalg.LinAlgError:
                pass
            rr *= 100.0
        ridge = rr
    A = K11 + ridge * np.eye(m) if ridge else K11
    try:
        cf = cho_factor(A)
        u = cho_solve(cf, rhs)
        w = cho_solve(cf, ones)
        den = w.sum()
        if den > 0 and np.isfinite(den) and np.all(np.isfinite(u)):
            b = (u.sum() - c) / den
            return u - b * w, float(b), "cholesky"
    except np.linalg.LinAlgError:
        pass
    if not allow_lu and not allow_lstsq:
        return None, 0.0, "lstsq"
    M = np.zeros((m + 1, m + 1))
    M[:m, :m] = A
    M[:m, m] = 1.0
    M[m, :m] = 1.0
    full_rhs = np.append(rhs, c)
    with warnings.catch_warnings():
        warnings.simplefilter("error", sla.LinAlgWarning)
        try:
            lu = sla.lu_factor(M, check_finite=False)
            sol = sla.lu_solve(lu, full_rhs, check_finite=False)
            if np.all(np.isfinite(sol)) and np.abs(np.diag(lu[0])).min() > 1e-12 * max(
                1.0, np.abs(np.diag(lu[0])).max()
            ):
                return sol[:m], float(sol[m]), "lu"
        except (sla.LinAlgWarning, ValueError, np.linalg.LinAlgError):
            pass
    if not allow_lstsq:
        return None, 0.0, "lstsq"
    sol = np.linalg.lstsq(M, full_rhs, rcond=None)[0]
    return sol[:m], float(sol[m]), "lstsq"
