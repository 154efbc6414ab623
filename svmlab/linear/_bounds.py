"""``l1_min_c``: the smallest C for which an L1-penalised linear model is not
all zeros (scikit-learn's :func:`sklearn.svm.l1_min_c`, same signature and
results).

For ``min_w |w|_1 + C sum_i loss(y_i w'[x_i, B])`` the zero vector is optimal
exactly when the loss gradient at ``w = 0`` lies in the L1 ball's dual unit
box: ``C |sum_i y_i x_ij loss'(0)| <= 1`` for every feature j (the bias
column ``B`` included when ``fit_intercept``).  With ``y`` coded +-1 per
class (one-vs-rest, ``LabelBinarizer(neg_label=-1)``), ``loss'(0) = -2`` for
the squared hinge and ``-1/2`` for the logistic loss, so the bound is
``0.5 / den`` or ``2 / den`` with ``den = max_{c, j} |sum_i Y_ci x_ij|``.
"""

from numbers import Real

import numpy as np
from sklearn.preprocessing import LabelBinarizer
from sklearn.utils._param_validation import Interval, StrOptions, validate_params
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.validation import check_array, check_consistent_length

__all__ = ["l1_min_c"]


@validate_params(
    {
        "X": ["array-like", "sparse matrix"],
        "y": ["array-like"],
        "loss": [StrOptions({"squared_hinge", "log"})],
        "fit_intercept": ["boolean"],
        "intercept_scaling": [Interval(Real, 0, None, closed="neither")],
    },
    prefer_skip_nested_validation=True,
)
def l1_min_c(X, y, *, loss="squared_hinge", fit_intercept=True, intercept_scaling=1.0):
    """The lowest C such that ``C > l1_min_c`` gives a non-empty model
    (``LinearSVC(penalty="l1", loss="squared_hinge")`` or L1 logistic
    regression); valid without ``class_weight``.  See the module docstring
    for the derivation.  Raises ValueError when every C gives zeros."""
    X = check_array(X, accept_sparse="csc")
    check_consistent_length(X, y)
    Y = LabelBinarizer(neg_label=-1).fit_transform(y).T
    den = float(np.max(np.abs(safe_sparse_dot(Y, X))))
    if fit_intercept:
        den = max(den, float(np.max(np.abs(Y.sum(axis=1) * float(intercept_scaling)))))
    if den == 0.0:
        raise ValueError("Ill-posed l1_min_c calculation: l1 will always select zero "
                         "coefficients for this data")
    return 0.5 / den if loss == "squared_hinge" else 2.0 / den
