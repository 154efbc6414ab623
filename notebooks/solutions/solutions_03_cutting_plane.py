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
