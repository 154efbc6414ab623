"""The step-record contract that every svmlab solver follows.

A fit is an explicit state object, a :class:`SolverRun`, advanced by steps
(optax-style ``init``/``update``; here ``start`` builds the state and
``step`` updates it).  Every estimator offers three ways to drive it, all on
the same state and the same code:

``fit(X, y, callback=None)``
    Without a callback, the fast path (:meth:`SolverRun.run`) runs to the
    end in large compiled chunks and builds no records.  With a callback,
    the solver calls ``callback(record)`` once per step, in order; a callback
    that returns ``False`` stops training cleanly and the estimator holds a
    valid, feasible model of the state reached so far.

``iter_fit(X, y)``
    A generator of records, one per step.  When it is exhausted (or closed
    early, e.g. by ``break``), the estimator is fitted from the state reached.

``start(X, y)``
    Returns the :class:`SolverRun` itself.  ``run.step()`` advances one step
    and returns its record (``None`` once converged or out of iterations);
    ``run.finish()`` stores the fitted attributes on the estimator and returns
    it.  This is what a widget uses to step forward without re-running from
    the start.

A record is a small frozen dataclass; each solver documents its own fields.
All records have ``iteration`` (1-based step count).

``max_iter`` counts steps (SMO: successful joint steps; cutting plane:
cutting-plane iterations; ...).  ``-1`` means no limit.  Hitting it stops
cleanly with a :class:`~sklearn.exceptions.ConvergenceWarning` that says what
to do.  Long fits show a tqdm progress bar (after 2 s; ``progress=False``
turns it off, and so does the environment variable ``SVMLAB_PROGRESS=0``).
"""

from __future__ import annotations

import os
import time
import warnings
from abc import ABC, abstractmethod

from sklearn.exceptions import ConvergenceWarning

__all__ = ["SolverRun", "SteppedFitMixin"]


def _progress_off():
    """``SVMLAB_PROGRESS=0`` turns every progress bar off, whatever the
    estimators' ``progress`` parameter says (the test configuration sets it, so
    that notebooks checked by nbval never print a timing-dependent bar)."""
    return os.environ.get("SVMLAB_PROGRESS", "").strip().lower() in ("0", "false", "no", "off")


class SolverRun(ABC):
    """Explicit solver state plus the step that updates it.

    Subclasses implement :meth:`_step` (one step, returns a record, or
    ``None`` if the optimality conditions already hold) and may override
    :meth:`_advance` (many steps, no records: the fast path).  The base class
    keeps the bookkeeping: ``n_iter``, ``converged``, ``stopped``,
    ``max_iter`` and progress display.
    """

    #: name of the unit ``max_iter`` counts, used in messages
    step_name = "step"
    #: name of the estimator parameter that sets the stopping tolerance
    tol_name = "tol"

    def __init__(self, estimator, max_iter=-1, progress=False):
        self.estimator = estimator
        self.max_iter = int(max_iter)
        self.progress = bool(progress)
        self.n_iter = 0
        self.converged = False
        self.stopped = False
        self.elapsed = 0.0

    # -- to implement -------------------------------------------------------
    @abstractmethod
    def _step(self):
        """Advance one step; return its record, or None when converged (and
        set ``self.converged``)."""

    def _advance(self, max_steps):
        """Advance up to ``max_steps`` steps without building records; return
        the number of steps taken.  Must stop early (and set ``converged``)
        when optimal.  The default loops over :meth:`_step`; solvers with a
        compiled fast path override it with the same update."""
        k = 0
        while k < max_steps:
            if self._step() is None:
                break
            k += 1
        return k

    @abstractmethod
    def result(self):
        """Fitted attributes of the current state, as a dict."""

    # -- driven by the estimator ----------------------------------------------
    @property
    def budget(self):
        """Steps still allowed by ``max_iter`` (a large number for no limit)."""
        if self.max_iter < 0:
            return 1 << 62
        return max(self.max_iter - self.n_iter, 0)

    @property
    def finished(self):
        return self.converged or self.stopped or self.budget == 0

    def step(self):
        """One step, with its record; None when finished."""
        if self.finished:
            return None
        t0 = time.perf_counter()
        rec = self._step()
        self.elapsed += time.perf_counter() - t0
        if rec is not None:
            self.n_iter += 1
        return rec

    def __iter__(self):
        while True:
            rec = self.step()
            if rec is None:
                return
            yield rec

    def stop(self):
        """Stop here (the callback asked to); the state stays feasible."""
        self.stopped = True

    def run(self, chunk=1000):
        """Fast path: advance to the end in chunks, with a progress bar."""
        from tqdm import tqdm

        total = self.max_iter if self.max_iter >= 0 else None
        with tqdm(
            total=total,
            unit=self.step_name,
            desc=type(self.estimator).__name__,
            delay=2.0,
            disable=not self.progress or _progress_off(),
            leave=False,
        ) as bar:
            while not self.finished:
                t0 = time.perf_counter()
                k = self._advance(min(chunk, self.budget))
                self.elapsed += time.perf_counter() - t0
                self.n_iter += k
                bar.update(k)
                if k == 0 and not self.converged:
                    # nothing moved and not optimal: treat as converged to
                    # the achievable precision rather than spin forever
                    self.converged = True
        return self

    def finish(self):
        """Store the fitted attributes on the estimator and return it."""
        if not self.converged and not self.stopped:
            warnings.warn(
                f"{type(self.estimator).__name__} stopped after max_iter="
                f"{self.max_iter} {self.step_name}s before the optimality "
                f"conditions held within {self.tol_name}. The model is feasible "
                "but not optimal: increase max_iter (or -1 for no limit), or "
                f"loosen {self.tol_name}.",
                ConvergenceWarning,
                stacklevel=3,
            )
        self.estimator._store_run(self)
        return self.estimator


class SteppedFitMixin:
    """``fit`` / ``iter_fit`` / ``start`` on top of a :class:`SolverRun`.

    Subclasses implement ``start(X, y) -> SolverRun`` (validating everything
    before any work) and ``_store_run(run)``.
    """

    def fit(self, X, y, callback=None):
        """Train.  ``callback(record)`` is called after every step; returning
        ``False`` from it stops training with the model reached so far."""
        run = self.start(X, y)
        if callback is None:
            run.run()
        else:
            for rec in run:
                if callback(rec) is False:
                    run.stop()
                    break
        run.finish()
        return self

    def iter_fit(self, X, y):
        """Generator of step records; the estimator is fitted when the
        generator is exhausted or closed."""
        run = self.start(X, y)
        try:
            yield from run
        finally:
            if not run.converged and run.budget > 0:
                run.stop()
            run.finish()
