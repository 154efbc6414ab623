"""Instructor's solution for the exercise of ``03_cutting_plane.ipynb``.

Not imported by svmlab; see README.md in this folder.
"""

import numpy as np


def most_violated(X, y, w):
    """The most violated constraint of OP2 at w (Joachims 2006, Algorithm 1).

    Returns ``(c, g, d)``: ``c_i = 1`` when ``y_i w.x_i < 1``,
    ``g = (1/n) sum_i c_i y_i x_i`` and ``d = (1/n) sum_i c_i``.
    """
    n = X.shape[0]
    margins = y * (X @ w)          # y_i w.x_i, one O(s) dot product per example
    c = margins < 1.0              # strictly inside the margin (or misclassified)
    g = (c * y) @ X / n            # sum over the violated examples only
    d = c.sum() / n
    return c, g, d


def working_set_slack(G, d, w):
    """Slack of OP3 at w: the largest violation over the working set, or 0."""
    if len(d) == 0:
        return 0.0                 # an empty working set constrains nothing
    return max(0.0, float(np.max(d - G @ w)))


def one_plane_qp(g, d, C):
    """argmin 1/2 |w|^2 + C max(0, d - w'g): OP3 with one plane.

    Only w'g enters the slack, so w = t g (a part orthogonal to g only adds to
    |w|^2).  Along g the objective is 1/2 t^2 |g|^2 + C max(0, d - t |g|^2):
    its slope is (t - C) |g|^2 while the plane is violated and t |g|^2 after,
    so t grows until the plane holds (t = d / |g|^2) or the price C is
    reached (t = C), whichever comes first."""
    g = np.asarray(g, dtype=float)
    gg = float(g @ g)
    if d <= 0 or gg == 0.0:
        return np.zeros_like(g)
    return min(C, d / gg) * g
