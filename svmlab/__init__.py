"""svmlab: a teaching laboratory for SVM training that is also a fast solver library.

Solvers (all scikit-learn estimators with step-by-step hooks, see
:mod:`svmlab._stepping` for the record/callback contract):

* :class:`SMOClassifier` -- Platt's sequential minimal optimization (1998).
* :class:`IRWLSClassifier` -- Perez-Cruz et al.'s IRWLS-SVC (2000).
* :class:`ChunkingClassifier`, :class:`DecompositionClassifier` -- the
  chunking and Osuna/SVMlight decomposition baselines.
* :class:`CuttingPlaneClassifier`, :class:`CuttingPlaneOrdinalRegressor` --
  Joachims' cutting-plane linear SVM (SVMperf, 2006).
* :class:`SVC`, :class:`NuSVC`, :class:`SVR`, :class:`NuSVR`,
  :class:`OneClassSVM` -- scikit-learn's SVM family on svmlab's solvers
  (:mod:`svmlab.svm`).

Names are imported lazily, so ``import svmlab`` stays cheap.
"""

from importlib import import_module

__version__ = "0.1.0"

_LAZY = {
    "SMOClassifier": "svmlab.smo",
    "IRWLSClassifier": "svmlab.decomposition",
    "ChunkingClassifier": "svmlab.decomposition",
    "DecompositionClassifier": "svmlab.decomposition",
    "CuttingPlaneClassifier": "svmlab.cutting_plane",
    "CuttingPlaneOrdinalRegressor": "svmlab.cutting_plane",
    "SVC": "svmlab.svm",
    "NuSVC": "svmlab.svm",
    "SVR": "svmlab.svm",
    "NuSVR": "svmlab.svm",
    "OneClassSVM": "svmlab.svm",
    "LinearSVC": "svmlab.linear",
    "LinearSVR": "svmlab.linear",
    "l1_min_c": "svmlab.linear",
    "Kernel": "svmlab.kernels",
    "KernelCache": "svmlab.kernels",
    "warm_up": "svmlab._warm",
}
_SUBMODULES = {"datasets", "viz", "bench", "objectives", "kernels", "smo", "decomposition",
               "cutting_plane", "reference", "exercises", "io", "svm"}

__all__ = sorted(_LAZY) + sorted(_SUBMODULES)


def __getattr__(name):
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    if name in _SUBMODULES:
        return import_module(f"svmlab.{name}")
    raise AttributeError(f"module 'svmlab' has no attribute {name!r}")


def __dir__():
    return __all__
