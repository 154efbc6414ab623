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

Names are imported on first touch (:func:`__getattr__`): the SVM family
imports :mod:`._pairstep` from this room for every fit (through
:mod:`svmlab.decomposition._blocked`), and its SVR and one-class fits need
:class:`DualRun` alone, not the estimator and Platt's loop
(docs/decisions/33g01-fresh-process-fixed-costs.md).
"""

from .._lazy import lazy_names as _lazy_names

_LAZY = {
    "DualRun": "._dual",
    "SMOClassifier": "._estimator",
    "SMORun": "._estimator",
    "SMOStep": "._estimator",
    "DualStep": "._records",
}

__all__ = ["SMOClassifier", "SMOStep", "SMORun", "DualRun", "DualStep"]


__getattr__, __dir__ = _lazy_names(__name__, _LAZY, globals())
