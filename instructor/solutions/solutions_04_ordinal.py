"""Instructor's solution for the exercise of ``04_ordinal_regression.ipynb``.

Not imported by svmlab; see README.md in this folder.
"""

import numpy as np


def ordinal_sweep(scores, y):
    """Condensed most violated constraint of OP5 (Joachims 2006, Algorithm 2).

    Pair (i, j) with y_i > y_j is violated when s_i - s_j < 1, i.e. when
    u_i = s_i - 1/2 < d_j = s_j + 1/2.  Sort the 2n values u and d, walk them
    from the largest down, and keep per rank r
      a[r] = number of d values of rank r already passed,
      b[r] = number of u values of rank r already passed.
    At u_i (rank r): the d_j already passed are > u_i, so
      c_plus[i] = sum_{r' < r} a[r'].
    At d_j (rank r): the u_i not yet passed are those with u_i < d_j (at
    equal values u is processed first, and a tie is no violation), so
      c_minus[j] = sum_{r' > r} (N[r'] - b[r']).
    O(n log n) for the sort plus O(R) per event.
    """
    s = np.asarray(scores, dtype=float)
    y = np.asarray(y)
    n = len(s)
    ranks, r = np.unique(y, return_inverse=True)   # rank index 0..R-1
    R = len(ranks)
    N = np.bincount(r, minlength=R)                 # examples per rank
    values = np.concatenate([s - 0.5, s + 0.5])
    is_d = np.concatenate([np.zeros(n, bool), np.ones(n, bool)])
    # largest value first; at equal values the u event (is_d False) first
    order = np.lexsort((is_d, -values))
    a = np.zeros(R, dtype=np.int64)
    b = np.zeros(R, dtype=np.int64)
    c_plus = np.zeros(n, dtype=np.int64)
    c_minus = np.zeros(n, dtype=np.int64)
    for e in order:
        i = e % n
        k = r[i]
        if not is_d[e]:
            c_plus[i] = a[:k].sum()
            b[k] += 1
        else:
            c_minus[i] = (N[k + 1:] - b[k + 1:]).sum()
            a[k] += 1
    return c_plus, c_minus


def count_pairs(y):
    """m = number of pairs (i, j) with y_i > y_j, from the rank counts."""
    _, counts = np.unique(np.asarray(y), return_counts=True)   # N_r, ranks ascending
    below = np.cumsum(counts) - counts                           # examples of lower rank
    return int(np.sum(counts * below))


def ordinal_constraint(X, c_plus, c_minus, m):
    """The OP5 constraint (g, d) from the condensed counts."""
    coef = (np.asarray(c_plus) - np.asarray(c_minus)) / m   # x_i in + pairs, minus in - pairs
    g = coef @ X
    d = np.sum(c_plus) / m
    return g, d
