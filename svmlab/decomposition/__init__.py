"""The decomposition room: solvers that repeatedly pick a working set and
solve the dual over it with an engine.

=====================  ====================================================
:mod:`.estimators`     :class:`ChunkingClassifier` (Vapnik's chunking) and
                       :class:`DecompositionClassifier` (Osuna/SVMlight)
:mod:`.irwls`          :class:`IRWLSClassifier` (Perez-Cruz et al. 2000)
:mod:`._engines`       the sub-problem engines (``"qp"``, ``"irwls"``,
                       ``"smo"``) and their Cholesky updates
:mod:`._working_set`   working-set selection rules
=====================  ====================================================

The readable twins are :mod:`svmlab.reference.chunking`,
:mod:`svmlab.reference.decomposition` and :mod:`svmlab.reference.irwls`.
"""

from .estimators import (  # noqa: F401
    ChunkingClassifier,
    DecompositionClassifier,
    DecompositionRecord,
)
from .irwls import IRWLSClassifier, IRWLSRecord, IRWLSRun  # noqa: F401

__all__ = ["ChunkingClassifier", "DecompositionClassifier", "DecompositionRecord",
           "IRWLSClassifier", "IRWLSRecord", "IRWLSRun"]
