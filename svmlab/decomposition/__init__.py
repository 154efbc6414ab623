"""The decomposition room: solvers that repeatedly pick a working set and
solve the dual over it with an engine.

=====================  ====================================================
:mod:`.estimators`     :class:`ChunkingClassifier` (Vapnik's chunking) and
                       :class:`DecompositionClassifier` (Osuna/SVMlight)
``.irwls``             :class:`IRWLSClassifier` (Perez-Cruz et al. 2000)
:mod:`._engines`       the sub-problem engines (``"qp"``, ``"irwls"``,
                       ``"smo"``): the registry and the sub-problem
:mod:`._active_set`    Table 1 and the active-set method, one iteration at
                       a time; :mod:`._line_search` their compiled
                       line-search mode; :mod:`._release` which violators
                       it frees; :mod:`._bordered` the system (3) by LAPACK
:mod:`._smo_engine`    Platt's pair step on a sub-problem
:mod:`._kblock`        working-set blocks and G updates through the cache
:mod:`._blocked`       the ThunderSVM-style blocked decomposition
:mod:`._working_set`   working-set selection rules
=====================  ====================================================

The Cholesky factor updates are the shared :mod:`svmlab._linalg`.  The
readable twins are :mod:`svmlab.reference.chunking`,
:mod:`svmlab.reference.decomposition` and :mod:`svmlab.reference.irwls`.

Names are imported on first touch (:func:`__getattr__`): the SVM family
imports :mod:`._blocked` from this room for every fit, and should not pay
for the chunking, decomposition and IRWLS estimators it does not use
(docs/decisions/31f01-first-fit-in-a-fresh-process.md).
"""

from .._lazy import lazy_names as _lazy_names

_LAZY = {
    "ChunkingClassifier": ".estimators",
    "DecompositionClassifier": ".estimators",
    "DecompositionRecord": ".estimators",
    "IRWLSClassifier": ".irwls",
    "IRWLSRecord": ".irwls",
    "IRWLSRun": ".irwls",
}

__all__ = ["ChunkingClassifier", "DecompositionClassifier", "DecompositionRecord",
           "IRWLSClassifier", "IRWLSRecord", "IRWLSRun"]


__getattr__, __dir__ = _lazy_names(__name__, _LAZY, globals())
