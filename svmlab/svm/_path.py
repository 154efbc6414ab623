"""A regularisation path by warm starts: the same model fitted for a
sequence of ``C`` (or ``nu``) values, each fit starting from the last one's
solution.

Problem.  Model selection fits an SVM for many values of C on the same
data.  Neighbouring values have nearby solutions, but LIBSVM (and so
scikit-learn's SVC) starts every fit from ``alpha = 0``.  Starting from the
previous solution, scaled to the new bounds and projected onto the
constraints (:func:`svmlab.svm._base.project_start`), leaves only the
change to be made; along an increasing sequence of C most multipliers keep
their state (zero, free or at the bound).

Contract.  :func:`regularization_path` fits a clone of the estimator with
``warm_start=True`` at each value in the order given and returns the
fitted copies; every fit reaches the same optimum as a cold fit (the
stopping rule is the same), only the number of steps changes.  The order
matters for the savings, not for the results: increasing C is the usual
choice (the first fit, at the smallest C, is the cheapest).
"""

from __future__ import annotations

import copy

from sklearn.base import clone

__all__ = ["regularization_path"]


def regularization_path(estimator, X, y=None, values=(), *, param=None, sample_weight=None):
    """Fit ``estimator`` at each of ``values`` of ``param`` with warm starts.

    Parameters
    ----------
    estimator : SVC, NuSVC, SVR, NuSVR or OneClassSVM (unfitted; cloned)
    X, y, sample_weight : as for ``fit`` (y is ignored by OneClassSVM)
    values : sequence of float
        The parameter values, fitted in this order.
    param : str or None
        The parameter to vary; None means ``"C"`` for the estimators that have
        it (SVC, SVR, NuSVR) and ``"nu"`` otherwise (NuSVC, OneClassSVM).

    Returns
    -------
    list of fitted estimators, one per value (independent copies; each has
    ``n_iter_`` for its own fit).
    """
    est = clone(estimator)
    names = est.get_params()
    if param is None:
        param = "C" if "C" in names else "nu"
    if param not in names:
        raise ValueError(f"{type(est).__name__} has no parameter {param!r}")
    if len(values) == 0:
        raise ValueError("values must hold at least one parameter value")
    est.set_params(warm_start=True)
    fits = []
    for v in values:
        est.set_params(**{param: v})
        if y is None:
            est.fit(X, sample_weight=sample_weight)
        else:
            est.fit(X, y, sample_weight=sample_weight)
        fits.append(copy.deepcopy(est))
    return fits
