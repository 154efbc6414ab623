"""The SVM family as a drop-in for :mod:`sklearn.svm`: :class:`SVC`,
:class:`NuSVC`, :class:`SVR`, :class:`NuSVR` and :class:`OneClassSVM`, on
svmlab's solvers (a solver chosen for you, ``solver_``), with probability
estimates, precomputed and callable kernels, warm starts and
:func:`regularization_path`.

=====================  ====================================================
:mod:`._classes`       the five estimators and what differs from sklearn
:mod:`._base`          validation, weights, fitted layout, prediction
:mod:`._solve`         the solver layer: a fit's frozen problem, the
                       backend objects that run it, the solvers, "auto"
:mod:`._kernel`        named, precomputed and callable kernels
:mod:`._probability`   Platt's sigmoid, pairwise coupling, LIBSVM's folds
:mod:`._path`          warm-started paths over C
:mod:`._run`           the fit as a stepped run: problems as parts, records
=====================  ====================================================

The readable twin of the solver is :mod:`svmlab.reference.dual`.
"""

from ._classes import SVC, SVR, NuSVC, NuSVR, OneClassSVM  # noqa: F401
from ._path import regularization_path  # noqa: F401

__all__ = ["SVC", "NuSVC", "SVR", "NuSVR", "OneClassSVM", "regularization_path"]
