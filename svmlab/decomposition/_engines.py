"""Sub-problem engines shared by IRWLS, chunking and decomposition.

Every member of the decomposition family (Osuna, Freund & Girosi 1997;
Joachims' SVMlight 1999; Vapnik's chunking; Platt's SMO; Perez-Cruz et al.'s
IRWLS-SVC with its chunking scheme) alternates two things: choose a working
set ``B`` (:mod:`svmlab.decomposition._working_set`), then solve the dual
restricted to ``B`` with everything else fixed.  The engines do the second.

The sub-problem, written with ``beta_i = y_i alpha_i`` (Perez-Cruz et al.'s
variables) over the ``m`` working-set samples::

    max_beta   r' beta - 1/2 beta' K_BB beta
    s.t.       sum_i beta_i = s0,     0 <= y_i beta_i <= C

with ``r_B = y_B - G_in`` where ``G_in = K_BN beta_N`` is the contribution of
the fixed samples (the paper's ``G_in``) and ``s0 = -sum_N beta_N`` (minus the
paper's ``Gb_in``).  For ``B`` = everything, ``r = y`` and ``s0 = 0``: the full
dual of :mod:`svmlab._base`.  The multiplier of the equality constraint is
the intercept ``b``; ``e_i = r_i - (K_BB beta)_i - b`` is the error of
sample i, ``y_i e_i = 1 - y_i f(x_i)``.

Engines (``engine=`` of :class:`~svmlab.DecompositionClassifier`), by role:

=========================================  ===================================
:mod:`~svmlab.decomposition._active_set`   ``"irwls"`` (Table 1 of Perez-Cruz
                                           et al., with its line-search
                                           safeguard) and ``"qp"`` (the
                                           primal active-set method, Nocedal
                                           & Wright Algorithm 16.3: one
                                           constraint released at a time;
                                           monotone, dependable for large C)
:mod:`~svmlab.decomposition._line_search`  their compiled line-search mode
:mod:`~svmlab.decomposition._release`      which violators it frees
:mod:`~svmlab.decomposition._bordered`     the system (3) in Python (LAPACK)
:mod:`svmlab._linalg`                      the kept Cholesky factor
:mod:`~svmlab.decomposition._smo_engine`   ``"smo"``: Platt's pair step with
                                           the maximal-violating pair
:mod:`~svmlab.decomposition._kblock`       the block ``K_BB`` and the G
                                           update through the row cache
=========================================  ===================================

The sub-problem solvers run with single-threaded BLAS (``blas_threads = 1``
on their :class:`svmlab._stepping.SolverRun`): threads cost more than they
save on blocks of a few hundred rows.
"""

from __future__ import annotations

import numpy as np

# the shared rules the engines read (re-exported: tests check that the
# engines use svmlab._kkt's, not copies)
from .._kkt import intercept_from_v, up_low  # noqa: F401
from ._active_set import ActiveSetSubproblem, as_bounds
from ._line_search import _bounds_b  # noqa: F401
from ._smo_engine import smo_engine

__all__ = ["ENGINES", "ActiveSetSubproblem", "as_bounds", "solve_subproblem"]

ENGINES = ("qp", "irwls", "smo")


def solve_subproblem(engine, K, y, alpha, r, C, tol, max_iter=None):
    """Solve a sub-problem with the named engine.

    ``C`` is a scalar or the per-sample upper bounds (m,).  Returns
    ``(alpha_new, b, n_inner)``; ``alpha`` is not modified."""
    if engine == "smo":
        a = np.array(alpha, dtype=np.float64)
        cap = max_iter if max_iter is not None else 100 * len(a) + 1000
        it, b = smo_engine(np.ascontiguousarray(K), np.asarray(y, np.float64), a,
                           np.asarray(r, np.float64), as_bounds(C, len(a)), float(tol), cap)
        return a, float(b), int(it)
    if engine not in ("qp", "irwls"):
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    sub = ActiveSetSubproblem(K, y, y * alpha, r, C, tol, rule=engine, max_iter=max_iter)
    sub.solve()
    return sub.alpha, float(sub.b), sub.n_iter