"""The SMO room: Platt's sequential minimal optimization (1998) and
LIBSVM's second-order working-set selection (WSS2) on the generalised dual.

=====================  ====================================================
:mod:`._estimator`     :class:`SMOClassifier`, its records (:class:`SMOStep`)
                       and the stepped run (:class:`SMORun`)
:mod:`._dual`          :class:`DualRun`: LIBSVM's generalised dual
                       (C-SVC, SVR, one-class, the nu forms) by WSS2, with
                       step records (:class:`DualStep`)
:mod:`._platt`         Platt's compiled loop (heuristics, parked phases,
                       folded linear weights, binary error cache)
:mod:`._dual_core`     the compiled WSS2 loop of the generalised dual
:mod:`._core`          what both loops share: state slots, shrinking,
                       ``Gbar`` and the gradient reconstruction
:mod:`._fetch`         kernel blocks for the rare large kernel sums
:mod:`._pairstep`      the analytic two-multiplier step on the box and the
                       line, and the threshold (also used by the
                       decomposition room's ``"smo"`` engine)
:mod:`._records`       the step records and their buffer layouts
:mod:`._simd`          the vectorised scan for the extremes of E
=====================  ====================================================

The readable twin of every step is :mod:`svmlab.reference.smo` (Platt),
:mod:`svmlab.reference.wss2` and :mod:`svmlab.reference.dual`.
"""

from ._dual import DualRun  # noqa: F401
from ._estimator import SMOClassifier, SMORun, SMOStep  # noqa: F401
from ._records import DualStep  # noqa: F401

__all__ = ["SMOClassifier", "SMOStep", "SMORun", "DualRun", "DualStep"]
