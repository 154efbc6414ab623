"""The fit of a family estimator as a stepped run (:mod:`svmlab._stepping`).

Problem.  A fit of :mod:`svmlab.svm` solves one problem (SVR, NuSVR,
OneClassSVM, a binary classifier) or one per pair of classes.  svmlab's
contract for every estimator holds here too: ``fit`` runs the fast path (in
chunks, with a progress bar after 2 s when ``verbose`` is set, Ctrl-C completing the chunk in flight
and returning the feasible model reached), ``fit(..., callback=f)`` calls
``f`` after every step, ``iter_fit`` yields the records, ``start`` returns
the run whose ``step()`` advances one step; ``max_iter`` bounds each
problem, and a stop before the optimality conditions hold is never
reported as convergence.

Contract.  :class:`FamilyRun` is a :class:`svmlab._stepping.SequentialRun`
over the problems: each is a part, made when its turn comes.  The parts are
the compiled generalised dual's runs (:class:`svmlab.smo.DualRun`, records
:class:`svmlab.smo.DualStep`), the compiled SMO on a pair's whole kernel
matrix (``solver="full"``), or the compiled C-SVC estimator's own run
(:class:`svmlab.smo.SMORun`, its one-vs-one
:class:`svmlab._multiclass.MulticlassRun`, or the IRWLS and decomposition
runs) as the one part of a fit, with its own records.

A step's record is a :class:`FamilyStep`: the problem's index and, for
classifiers, its pair of labels, around the solver's record (whose indices
are positions among the problem's variables: ``run.problem_rows(p)`` maps
them to rows of X; for SVR the variable ``t`` and ``t + n`` are row ``t``'s
``a`` and ``a*``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._multiclass import ParallelParts, pair_workers
from .. import _stepping
from .._stepping import SequentialRun, blas_thread_limit

__all__ = ["FamilyStep", "FamilyRun"]


@dataclass(frozen=True)
class FamilyStep:
    """One step of a family fit.

    ``iteration``: 1-based over the whole fit; ``problem_index``: the pair
    index p for classifiers (LIBSVM's order; the column of the "ovo"
    decision function), 0 for the single problem of SVR, NuSVR and
    OneClassSVM; ``pair``: the class labels ``(a, b)`` of a classifier's pair
    (a is +1), None otherwise; ``record``: the solver's own record.  Other
    attributes are read from ``record`` (``step.i1``, ``step.a2_new``, ...)."""

    iteration: int
    problem_index: int
    pair: Any
    record: Any

    def __getattr__(self, name):
        if name == "record" or name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.record, name)


class FamilyRun(ParallelParts, SequentialRun):
    """The problems of one family fit (module docstring).  ``opener(i)``
    returns part i's run; ``pairs`` the label pairs of a classifier (None
    for one problem); ``rows[i]`` the rows of X of problem i (its base
    points); ``threads`` the cores (``n_jobs``): the fast path runs up to
    that many problems at once (:class:`svmlab._multiclass.ParallelParts`),
    each with :func:`svmlab._multiclass.pair_workers`'s BLAS threads, on
    every path (so any ``n_jobs`` gives the same model).  ``traits(0)``,
    when given and not None, is part 0's ``(step_name, steps_per_task,
    first_chunk, chunk_growth)`` without opening it (else part 0 is opened
    here to read them): a NuSVC fit whose pairs go through the compiled
    driver never runs the opened pair, whose run cost 0.7 ms of a digits
    fit's serial part (decision 36n01)."""

    def __init__(self, estimator, n_parts, n_samples, opener, pairs, rows, labels=None,
                 threads=1, traits=None):
        # silent unless asked (scikit-learn's classes print nothing by
        # default): the progress bar is opt-in through ``verbose``
        super().__init__(estimator, n_parts, n_samples,
                         progress=bool(getattr(estimator, "verbose", False)))
        self.workers, self.part_threads = pair_workers(threads, n_parts)
        self.part_blas = self.part_threads
        self._opener = opener
        self.pairs = pairs
        self.labels = labels
        self._rows = rows
        t = traits(0) if traits is not None else None
        if t is None:
            cur = self._current()
            t = (cur.step_name, cur.steps_per_task, cur.first_chunk, cur.chunk_growth)
        self.step_name, self.steps_per_task, self.first_chunk, self.chunk_growth = t

    def problem_rows(self, i):
        """The rows of X that are problem i's base points."""
        return self._rows[i]

    def _open_part(self, i):
        if self.n_parts == 1:
            return self._opener(i)
        # several problems (one-vs-one pairs): each with the same BLAS
        # threads on every path, its kernel blocks included
        with blas_thread_limit(self.part_threads):
            run = self._opener(i)
        run.n_jobs = self.part_threads
        run.blas_threads = self.part_threads
        return run

    def _part_record(self, i, rec):
        from .._multiclass import PairStep

        p = i
        if isinstance(rec, PairStep):  # the compiled one-vs-one run: unwrap
            p, rec = rec.pair_index, rec.record
        pair = None
        if self.pairs is not None and p < len(self.pairs):
            a, b = self.pairs[p]
            pair = (self.labels[a], self.labels[b])
        return FamilyStep(iteration=self.n_iter + 1, problem_index=int(p), pair=pair,
                          record=rec)

    def _advance(self, max_steps):
        # NuSVC's one-vs-one pairs: several per compiled call, on the fast
        # path only (svmlab.smo._nuovo; None: the per-pair runs)
        if self.parallel_ok and not self.done and self.n_parts > 1:
            from ..reference.dual import DualProblem
            from ..smo._nuovo import nu_pairs_fast

            fast = nu_pairs_fast(self)
            if fast is not None:
                taken = fast.advance(self, DualProblem)
                if taken is not None:
                    return taken
        return super()._advance(max_steps)

    def run(self, chunk=None, tasks=None):
        if chunk is None:
            chunk = 20000 if self.steps_per_task > 1 else 1000
        self.parallel_ok = tasks is None
        if self.n_parts == 1 and not self.done:
            # the compiled one-vs-one run as the one part: its pairs go
            # parallel on this fast path only
            self._current().parallel_ok = tasks is None
        return super().run(chunk=chunk, tasks=tasks)

    def result(self):
        return {"parts": [self.part_result(i) for i in range(self.n_parts)],
                "n_iter": self.part_steps(), "reasons": list(self.part_reasons)}

    def warning_message(self):
        """scikit-learn's message for a stop at ``max_iter`` (its tests match
        it) followed by svmlab's explanation; svmlab's for the others."""
        est = self.estimator
        name = type(est).__name__
        reason = self.stop_reason
        if reason in ("max_iter", "iteration_cap"):
            bad = [i for i, r in enumerate(self.part_reasons) if r == reason]
            where = "" if self.n_parts == 1 else \
                f" ({len(bad)} of {self.n_parts} problems stopped there)"
            cap = ("" if reason == "max_iter" else
                   "; max_iter=-1 still stops at the safeguard cap "
                   f"max({_stepping.MAX_ITER_CAP_MIN:_}, "
                   f"{_stepping.MAX_ITER_CAP_PER_SAMPLE} * n_samples) steps per problem, "
                   "and a fit this long usually means a hard problem (with C=inf: data "
                   "the kernel cannot separate)")
            return (f"Solver terminated early (max_iter={est.max_iter}).  Consider "
                    "pre-processing your data with StandardScaler or MinMaxScaler. "
                    f"({name} stopped after {self.n_iter} {self.step_name}s{where}, before "
                    f"the optimality conditions held within tol={est.tol:g}{cap}; the model "
                    "is feasible but not optimal: increase max_iter, or loosen tol.)")
        if reason == "stalled":
            bad = [i for i, r in enumerate(self.part_reasons) if r == "stalled"]
            msg = next((self.part_messages[i] for i in bad if self.part_messages[i]), None) \
                or "no pair step could move"
            return (f"{name} stalled before the optimality conditions held within "
                    f"tol={est.tol:g}: {msg}. fit_status_ is 1; the model is feasible but not "
                    "optimal. Try: scale the features (StandardScaler); loosen tol; remove "
                    "duplicate points with different labels; use a positive semi-definite "
                    "kernel.")
        return super().warning_message()
