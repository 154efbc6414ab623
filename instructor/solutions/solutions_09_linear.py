"""Instructor's solutions for the exercises of ``09_linear_svm.ipynb``.

Not imported by svmlab; see README.md in this folder.
"""


def dcd_update(alpha_i, G, Q_ii, U):
    """The new alpha_i: the coordinate's parabola minimised over [0, U]."""
    # the unconstrained minimiser of f + G d + Q_ii d^2 / 2 is d = -G / Q_ii;
    # a parabola's minimum over an interval is its minimiser clipped to it
    return min(max(alpha_i - G / Q_ii, 0.0), U)
