"""Linear SVMs: scikit-learn's :class:`~sklearn.svm.LinearSVC`,
:class:`~sklearn.svm.LinearSVR` and :func:`~sklearn.svm.l1_min_c` on
svmlab's solvers (LIBLINEAR's problems).

Solvers, one module each (each opens with its problem and algorithm):

* :mod:`svmlab.linear._dcd` -- dual coordinate descent with shrinking
  (Hsieh et al. 2008; Ho & Lin 2012 for SVR), steppable one coordinate at
  a time (:class:`DCDRun`, :class:`DCDRecord`); readable twin
  :mod:`svmlab.reference.dcd`;
* :mod:`svmlab.linear._tron` -- trust-region Newton for the primal with the
  squared losses (Lin, Weng & Keerthi 2008);
* :mod:`svmlab.linear._cdn` -- coordinate descent Newton for the L1 penalty;
* :mod:`svmlab.linear._cs` -- Crammer-Singer's sequential dual method.
"""

from ._bounds import l1_min_c
from ._classes import LinearSVC, LinearSVR
from ._runs import DCDRecord, DCDRun, LinearOvRRecord

__all__ = ["LinearSVC", "LinearSVR", "l1_min_c", "DCDRun", "DCDRecord", "LinearOvRRecord"]
