"""The SMO room: Platt's sequential minimal optimization (1998) and
LIBSVM's second-order working-set selection (WSS2).

=====================  ====================================================
:mod:`._estimator`     :class:`SMOClassifier`, its records (:class:`SMOStep`)
                       and the stepped run (:class:`SMORun`)
:mod:`._core`          the compiled state machine: Platt's loops, WSS2,
                       shrinking, parked phases, error cache, linear folding
:mod:`._pairstep`      the analytic two-multiplier step on the box and the
                       line, and the threshold (also used by the
                       decomposition room's ``"smo"`` engine)
:mod:`._simd`          the vectorised scan for the extremes of E
=====================  ====================================================

The readable twin of every step is :mod:`svmlab.reference.smo` (Platt) and
:mod:`svmlab.reference.wss2`.
"""

from ._estimator import SMOClassifier, SMORun, SMOStep  # noqa: F401

__all__ = ["SMOClassifier", "SMOStep", "SMORun"]
