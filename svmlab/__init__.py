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

Names are imported lazily, so ``import svmlab`` stays cheap.  The first
touch of a lazy name imports its module under one lock (:func:`_load`), so
many threads may touch names at once (scikit-learn's own import has
circular steps that fail when two threads run them together).
"""

import threading
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


#: held while a lazy name's module is imported (reentrant: an import may touch
#: other lazy names on the same thread)
_IMPORT_LOCK = threading.RLock()


def _load(module, name=None):
    """``import_module(module)`` (then its attribute ``name``) under
    :data:`_IMPORT_LOCK`.

    Why a lock: the first touch of a lazy name runs the import of its module
    and of scikit-learn in the caller's thread; when several threads do that
    at once, Python's per-module import locks let them interleave, and the
    circular steps inside scikit-learn's own import then fail with
    ``ImportError: partially initialized module`` or ``_DeadlockError``.
    One lock makes the first imports run one after another; the values are
    then kept in the package's namespace, so later touches skip the lock."""
    with _IMPORT_LOCK:
        mod = import_module(module)
        return mod if name is None else getattr(mod, name)


def __getattr__(name):
    if name in _LAZY:
        value = _load(_LAZY[name], name)
    elif name in _SUBMODULES:
        value = _load(f"svmlab.{name}")
    else:
        raise AttributeError(f"module 'svmlab' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return __all__
