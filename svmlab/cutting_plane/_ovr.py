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

The run (:class:`OneVsRestRun`) is a :class:`svmlab._stepping.SolverRun`
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

from .._stepping import SolverRun

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


class OneVsRestRun(SolverRun):
    """The k binary runs of a one-vs-rest fit, one after the other.

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
        self.n_samples = int(n_samples)
        super().__init__(estimator, max_iter=-1, progress=progress)
        self.classes = classes
        self.k = len(classes)
        self._make_run = make_run
        self.current = 0
        self._run = None
        #: per class: its result dict, stop reason, iterations, warning text
        self.results = [None] * self.k
        self.reasons = ["not started"] * self.k
        self.iterations = np.zeros(self.k, dtype=np.int64)
        self.warnings = [None] * self.k
        self.B = None
        self.done = False

    # -- the class whose problem runs now --------------------------------------
    def _sub(self):
        if self._run is None:
            self._run = self._make_run(self.current)
            self.B = self._run.oracle.B
            self.dim = self._run.D
        return self._run

    def _close_current(self):
        r = self._run
        c = self.current
        self.results[c] = r.result()
        self.reasons[c] = r.stop_reason
        self.iterations[c] = r.n_iter
        self.warnings[c] = r.warning_message()
        self._run = None  # its data copies can go
        self.current += 1
        if self.current >= self.k:
            self.done = True
            self.converged = all(s == "converged" for s in self.reasons)

    @property
    def finished(self):
        return self.done or self.stopped or self.interrupted

    def _mark_stalled(self, reason=""):
        # the k binary runs report their own stalls (reasons); the whole run
        # only ends by finishing its classes, a callback or Ctrl-C
        if not self.done:
            super()._mark_stalled(reason)

    @property
    def stop_reason(self):
        if self.interrupted:
            return "interrupted"
        if self.stopped:
            return "callback"
        if not self.done:
            return "running"
        for reason in ("stalled", "max_iter", "iteration_cap"):
            if reason in self.reasons:
                return reason
        return "converged"

    # -- steps -------------------------------------------------------------------
    def _step(self):
        while self.current < self.k:
            r = self._sub()
            rec = r.step()
            if rec is not None:
                c = self.current
                return OneVsRestRecord(iteration=self.n_iter + 1, class_index=c,
                                       label=self.classes[c], record=rec)
            self._close_current()
        return None

    def _advance(self, max_steps):
        taken = 0
        while taken < max_steps and self.current < self.k:
            r = self._sub()
            if r.finished:
                self._close_current()
                continue
            want = min(max_steps - taken, r.budget)
            n0 = r.n_iter
            k = r._advance(want)
            r.n_iter = n0 + k
            if k == 0 and not (r.converged or r.stopped or r.stalled):
                r._mark_stalled()
            taken += k
            if r.finished:
                self._close_current()
        return taken

    # -- results -----------------------------------------------------------------
    def class_results(self):
        """Per class the binary result dict of the state reached (a class not
        started yet: ``w = 0``, no working set)."""
        out = []
        for c in range(self.k):
            if self.results[c] is not None:
                out.append(self.results[c])
            elif c == self.current and self._run is not None:
                out.append(self._run.result())
            else:
                out.append(None)
        return out

    def result(self):
        return {"classes": self.class_results()}

    def warning_message(self):
        if self.interrupted:
            return super().warning_message()
        if self.stopped or not self.done:
            return None
        # one sentence per distinct ending, naming its classes
        groups = {}
        for c, msg in enumerate(self.warnings):
            if msg:
                groups.setdefault(msg, []).append(str(self.classes[c]))
        if not groups:
            return None
        return " ".join(f"One-vs-rest, class{'es' if len(labels) > 1 else ''} "
                        f"{', '.join(labels)} against the rest: {msg}"
                        for msg, labels in groups.items())
