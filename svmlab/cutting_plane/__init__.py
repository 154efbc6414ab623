"""The cutting-plane room: Joachims' 1-slack linear SVMs (SVMperf, 2006) and
OCAS (Franc and Sonnenburg, 2008).

=====================  ====================================================
:mod:`.estimators`     :class:`CuttingPlaneClassifier` (Algorithm 1, or
                       ``method="ocas"``), :class:`CuttingPlaneOrdinalRegressor`
                       (Algorithm 2) and their records
:mod:`._oracle`        the leaf: the oracle protocol, rank checks, the
                       dense/CSR dispatch; both oracles below import it
:mod:`._passes`        compiled passes over the data (most violated
                       constraint, the sorted ordinal sweep)
:mod:`._qp`            the reduced QP over the cuts (simplex dual)
:mod:`._ocas`          OCAS's line search and cut
:mod:`._ovr`           one-vs-rest over k > 2 classes (the run of k binary runs)
:mod:`._dask`          the same oracles over Dask arrays
=====================  ====================================================

The readable twins are :mod:`svmlab.reference.cutting_plane` and
:mod:`svmlab.reference.ordinal`.
"""

from .estimators import (  # noqa: F401
    CuttingPlaneClassifier,
    CuttingPlaneOrdinalRegressor,
    CuttingPlaneRecord,
    OcasRecord,
    OneVsRestRecord,
    OrdinalCuttingPlaneRecord,
    ordered_pair_fraction,
    warm_up,
)

__all__ = ["CuttingPlaneClassifier", "CuttingPlaneOrdinalRegressor", "CuttingPlaneRecord",
           "OcasRecord", "OneVsRestRecord", "OrdinalCuttingPlaneRecord", "ordered_pair_fraction", "warm_up"]
