"""One-vs-rest multiclass for :class:`~svmlab.cutting_plane.CuttingPlaneClassifier`.

With k > 2 classes the classifier trains k binary problems, class c
(``+1``) against all the others (``-1``), as LIBLINEAR and
:class:`sklearn.svm.LinearSVC` do.  Each problem is the binary OP1 of the
module :mod:`svmlab.cutting_plane.estimators`, solved by the same method
(Algorithm 1 or OCAS) with the same ``C``, ``epsilon`` and ``max_iter``
(``max_iter`` counts the iterations of *each* binary problem, as LinearSVC's
does).  ``decision_function`` returns the k values ``w_c'x + b_c`` and
``predict`` the class of the largest.

Weights, decided here to match LIBLINEAR's one-vs-rest (so that a fit
compares with LinearSVC's): in the problem of class c the examples of c
have the weight ``class_weight[c] * sample_weight_i`` and the others
``sample_weight_i`` alone (LIBLINEAR's ``weighted_C[c]`` for the positive
side and ``C`` for the rest).  ``"balanced"`` is scikit-learn's
``n / (k count(label))``.  In each problem ``n`` counts its rows of positive
weight (``C = n * C_liblinear`` as in the binary case).

The run (:class:`OneVsRestRun`) is a :class:`svmlab._stepping.SequentialRun`
over the k binary runs, one after the other: ``iter_fit`` yields
:class:`OneVsRestRecord` (which class, and the binary record), the fast path
advances the current binary run in chunks, and the fit ends when the last
class is done.  A class whose problem ends early (``max_iter``, a stall)
does not stop the others; the fit is ``converged_`` only when every class
converged, and the warning names the classes that did not.  Ctrl-C or a
callback that returns False stops the whole fit; the classes not reached
keep ``w = 0`` (decision value 0).

Dask inputs are binary only (a ValueError says so before any work).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._stepping import SequentialRun

__all__ = ["OneVsRestRecord", "OneVsRestRun", "ovr_weights"]


@dataclass(frozen=True)
class OneVsRestRecord:
    """One iteration of a one-vs-rest fit.

    ``iteration``: 1-based over the whole fit; ``class_index`` and ``label``:
    the class whose binary problem (``label`` against the rest) took the
    iteration; ``record``: that problem's own record
    (:class:`~svmlab.cutting_plane.estimators.CuttingPlaneRecord` or
    :class:`~svmlab.cutting_plane._ocas.OcasRecord`, with its own
    ``iteration`` counted within the class)."""

    iteration: int
    class_index: int
    label: Any
    record: Any


def ovr_weights(y_idx, n_classes, c, sample_weight, class_weight_vec):
    """The example weights of class c's problem (LIBLINEAR's meaning, see the
    module docstring): ``class_weight[c] * s_i`` for the rows of class c and
    ``s_i`` for the others; None when all are 1 (the unweighted passes)."""
    pos = y_idx == c
    cw_c = float(class_weight_vec[c])
    if sample_weight is None and cw_c == 1.0:
        return None
    v = np.where(pos, cw_c, 1.0)
    if sample_weight is not None:
        v = v * sample_weight
    return np.ascontiguousarray(v, dtype=np.float64)


class OneVsRestRun(SequentialRun):
    """The k binary runs of a one-vs-rest fit, one after the other
    (:class:`svmlab._stepping.SequentialRun`, whose parts are the classes).

    Parameters
    ----------
    estimator : CuttingPlaneClassifier
    make_run : callable
        ``make_run(c)`` returns the (not yet started) binary run of class c
        against the rest.  Called when class c's turn comes, so that only
        one binary problem's data copies are alive at a time.
    classes : ndarray (k,)
    n_samples : int
    progress : bool
    """

    step_name = "iteration"
    tol_name = "epsilon"

    def __init__(self, estimator, make_run, classes, n_samples, progress):
        super().__init__(estimator, len(classes), n_samples, progress)
        self.classes = classes
        self.k = len(classes)
        self._make_run = make_run
        self.B = None

    def _open_part(self, c):
        run = self._make_run(c)
        self.B = run.oracle.B
        return run

    def _part_record(self, c, rec):
        return OneVsRestRecord(iteration=self.n_iter + 1, class_index=c,
                               label=self.classes[c], record=rec)

    def class_results(self):
        """Per class the binary result dict of the state reached (None for a
        class not started yet: ``w = 0``, no working set)."""
        return [self.part_result(c) for c in range(self.k)]

    def result(self):
        return {"classes": self.class_results()}

    def warning_message(self):
        reason = self.stop_reason
        if reason not in ("stalled", "iteration_cap", "max_iter"):
            # converged, a callback's stop, or Ctrl-C (SolverRun's message)
            return super().warning_message()
        # one sentence per distinct ending, naming its classes
        groups = {}
        for c, msg in enumerate(self.part_messages):
            if msg:
                groups.setdefault(msg, []).append(str(self.classes[c]))
        if not groups:
            return None
        return " ".join(f"One-vs-rest, class{'es' if len(labels) > 1 else ''} "
                        f"{', '.join(labels)} against the rest: {msg}"
                        for msg, labels in groups.items())
