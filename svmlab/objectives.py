"""Objectives and optimality measures, computed the same way for every solver.

The benchmark harness and the notebooks use these to compare solvers at
equal quality.  (The test-suite keeps its own naive reference versions in
``tests/reference.py`` so that no test trusts the code it checks.)

All work is blocked over the support vectors, so nothing n x n is formed.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .kernels._rows import Kernel

__all__ = ["dual_objective", "decision_values", "kkt_violation", "linear_primal_objective"]


def _sv_block_products(kernel: Kernel, alpha, y, block=2048):
    """g_i = sum_j alpha_j y_j K(x_j, x_i) for all i, blocked over SVs."""
    sv = np.flatnonzero(alpha > 0)
    g = np.zeros(kernel.n_samples)
    ay = alpha * y
    for s in range(0, len(sv), block):
        rows = sv[s:s + block]
        g += ay[rows] @ kernel.matrix(rows=rows)
    return g


def decision_values(kernel: Kernel, alpha, y, b):
    """Training-set decision values ``f(x_i)`` of a dual solution."""
    return _sv_block_products(kernel, np.asarray(alpha, float), np.asarray(y, float)) + b


def dual_objective(kernel: Kernel, alpha, y):
    """``W(alpha) = sum alpha - 1/2 sum_ij alpha_i alpha_j y_i y_j K_ij``."""
    alpha = np.asarray(alpha, float)
    y = np.asarray(y, float)
    g = _sv_block_products(kernel, alpha, y)
    return float(alpha.sum() - 0.5 * np.dot(alpha * y, g))


def kkt_violation(kernel: Kernel, alpha, y, b, C):
    """Largest violation of the KKT conditions (Platt's TR eq. 12).

    ``alpha_i = 0 => y_i f_i >= 1``, ``0 < alpha_i < C => y_i f_i = 1``,
    ``alpha_i = C => y_i f_i <= 1``.  Returns ``max_i`` of the amount by which
    ``y_i f_i`` misses its condition (0 for an exact optimum).
    """
    alpha = np.asarray(alpha, float)
    y = np.asarray(y, float)
    yf = y * decision_values(kernel, alpha, y, b)
    r = yf - 1.0
    viol = np.zeros_like(r)
    at0 = alpha <= 0
    atC = alpha >= C
    free = ~(at0 | atC)
    viol[at0] = np.maximum(-r[at0], 0)
    viol[atC] = np.maximum(r[atC], 0)
    viol[free] = np.abs(r[free])
    return float(viol.max()) if len(viol) else 0.0


def linear_primal_objective(X, y, w, b, C):
    """``1/2 ||w||^2 + C sum_i max(0, 1 - y_i (w.x_i + b))`` (LIBSVM's C)."""
    m = X @ np.asarray(w, float).ravel()
    m = np.asarray(m).ravel() + b
    return float(0.5 * np.dot(w, w) + C * np.maximum(0, 1 - np.asarray(y) * m).sum())
