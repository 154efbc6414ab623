"""Instructor's solutions for the exercises of ``05_irwls.ipynb``.

Not imported by svmlab; see README.md in this folder.
"""

import numpy as np


def irwls_weights(ye, C):
    """The IRWLS weights of eq. (8) for the values e_i y_i."""
    ye = np.asarray(ye, dtype=float)
    a = np.zeros_like(ye)                 # e y < 0: outside the margin, S2
    pos = ye > 0
    a[pos] = C / ye[pos]                  # e y > 0: inside / wrong side, S3
    a[ye == 0] = np.inf                   # on the margin: S1 (e_i = 0 enforced)
    return a


def reorder_sets(sets, y_beta, ye, C, tol):
    """Rules a-d of Table 1 (1 = S1, 2 = S2, 3 = S3)."""
    sets = np.asarray(sets)
    new = sets.copy()
    rule_a = (sets == 1) & (y_beta < 0)   # a: below the box -> S2 (beta = 0)
    rule_b = (sets == 1) & (y_beta > C)   # b: above the box -> S3 (y beta = C)
    new[rule_a] = 2
    new[rule_b] = 3
    if not rule_a.any() and not rule_b.any():
        new[(sets == 2) & (ye > tol)] = 1   # c: S2 sample now inside the margin
        new[(sets == 3) & (ye < -tol)] = 1  # d: S3 sample now outside the margin
    return new
