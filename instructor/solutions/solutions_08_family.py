"""Instructor's solutions for the exercises of ``08_svm_family.ipynb``.

Not imported by svmlab; see README.md in this folder.
"""

import numpy as np


def svr_pair_bounds(t1, t2, alpha, C):
    """The ends (L, H) of the segment of alpha[t2] in an SVR pair step on
    (t1, t2), derived from the box and the line."""
    n = len(C)
    # variable t < n is alpha_t (sign +1), t >= n is alpha*_{t-n} (sign -1);
    # both variables of point k are bounded by C[k]
    sign1, sign2 = (1 if t1 < n else -1), (1 if t2 < n else -1)
    box1, box2 = C[t1 % n], C[t2 % n]
    first, second = alpha[t1], alpha[t2]
    if sign1 == sign2:
        # first + second stays: first_new = total - second_new must lie in [0, box1]
        total = first + second
        return max(0.0, total - box1), min(box2, total)
    # first - second stays: first_new = second_new + gap must lie in [0, box1]
    gap = first - second
    return max(0.0, -gap), min(box2, box1 - gap)


def platt_targets(labels):
    """Platt's regularised targets (Laplace's rule of succession per class)."""
    positive = np.asarray(labels) > 0
    n_plus = np.count_nonzero(positive)
    n_minus = positive.size - n_plus
    # a positive: P(next is positive) after n_plus positives in n_plus draws;
    # a negative: 1 - P(next is negative) after n_minus negatives in n_minus draws
    return np.where(positive, (n_plus + 1) / (n_plus + 2), 1 / (n_minus + 2))
