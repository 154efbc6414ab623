"""Test helpers for the one-vs-one pairs' parallel workers
(:func:`svmlab._multiclass.run_pair_workers`, docs/decisions/35n01 and
36n01, and :func:`svmlab._stepping.run_worker_threads`).

The compiled drivers' worker 0 (SVC's ``ovo_pairs``, NuSVC's
``nu_pairs``) is the thread that called ``fit`` (here pytest's main
thread), the others helper threads named
``svmlab-pair-<w>``; batches are handed out as the workers ask, so on a busy
machine one worker may run every pair before another is scheduled (a helper
not yet begun is then cancelled).  Tests that check that every worker ran
pairs make that deterministic with :func:`every_worker_runs`, without
changing which pairs exist or what any pair computes: in a driver phase
each worker's first compiled call waits until every worker has made its
first (each then holds a batch of its own); in a phase of the pairs' own
runs (``run_worker_threads``, one queue of pairs) worker 0 starts once the
others have begun (a late second thread found the queue empty).
"""

from __future__ import annotations

import threading

from svmlab import _multiclass, _stepping
from svmlab.smo import _nuovo, _ovo

#: the driver phase under way (``every_worker_runs``' wrappers): its
#: barrier and the threads that passed it
_PHASE = [None]

#: how long a worker waits for the others (a bound against a hang, never
#: reached on a working pool; a miss shows as an error of the fit)
WAIT_S = 60.0


def in_parallel_phase():
    """Whether a ``run_pair_workers`` phase wrapped by
    :func:`every_worker_runs` is under way."""
    return _PHASE[0] is not None


def worker_name():
    """``"caller"`` for the thread that called ``fit`` (the main thread),
    else the worker's label (``svmlab-pair-<w>``,
    :func:`svmlab._multiclass.worker_label`)."""
    if threading.get_ident() == threading.main_thread().ident:
        return "caller"
    return _multiclass.worker_label()


def every_worker_runs(monkeypatch):
    """Make every worker of each parallel phase run pairs (module
    docstring).  Call it after any other patch of ``_ovo.ovo_pairs`` or
    ``_nuovo.nu_pairs`` whose first calls must pass the barrier too."""
    pair_workers = _multiclass.run_pair_workers
    worker_threads = _stepping.run_worker_threads

    def driver_phase(work, n_workers, *args):
        _PHASE[0] = (threading.Barrier(n_workers), set())
        try:
            return pair_workers(work, n_workers, *args)
        finally:
            _PHASE[0] = None

    def first_call_waits(driver):
        def wrapped(*args):
            phase = _PHASE[0]
            if phase is not None and threading.get_ident() not in phase[1]:
                phase[1].add(threading.get_ident())
                phase[0].wait(WAIT_S)
            return driver(*args)

        return wrapped

    def runs_phase(work, n_workers, *args):
        started = [threading.Event() for _ in range(n_workers)]

        def gated(w):
            if w == 0:
                for ev in started[1:]:
                    ev.wait(WAIT_S)
            else:
                started[w].set()
            return work(w)

        return worker_threads(gated, n_workers, *args)

    monkeypatch.setattr(_multiclass, "run_pair_workers", driver_phase)
    monkeypatch.setattr(_ovo, "ovo_pairs", first_call_waits(_ovo.ovo_pairs))
    monkeypatch.setattr(_nuovo, "nu_pairs", first_call_waits(_nuovo.nu_pairs))
    monkeypatch.setattr(_stepping, "run_worker_threads", runs_phase)
