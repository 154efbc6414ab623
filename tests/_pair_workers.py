"""Test helpers for the one-vs-one compiled drivers' workers
(:func:`svmlab._multiclass.run_pair_workers`, docs/decisions/35n01).

The drivers' worker 0 is the thread that called ``fit`` (here pytest's main
thread), the others helper threads named ``svmlab-pair-<w>``; batches are
handed out as the workers ask, so on a busy machine the caller may run every
pair before a helper wakes (the helper's task is then cancelled).  Tests
that check that every worker ran pairs make that deterministic with
:func:`every_worker_runs`: worker 0 starts only once every helper has
started its own work (each then takes a batch of its own run of pairs),
without changing which pairs exist or what any pair computes.
"""

from __future__ import annotations

import threading

from svmlab import _multiclass

#: parallel phases under way (``every_worker_runs``' wrapper)
_ACTIVE = [0]

#: how long worker 0 waits for the helpers (a bound against a hang, never
#: reached on a working pool; a miss shows as a failed assertion)
WAIT_S = 60.0


def in_parallel_phase():
    """Whether a ``run_pair_workers`` phase wrapped by
    :func:`every_worker_runs` is under way."""
    return _ACTIVE[0] > 0


def worker_name():
    """``"caller"`` for the thread that called ``fit`` (the main thread),
    else the thread's name (``svmlab-pair-<w>``)."""
    t = threading.current_thread()
    return "caller" if t is threading.main_thread() else t.name


def every_worker_runs(monkeypatch):
    """Make worker 0 of every ``run_pair_workers`` phase wait until the
    other workers have begun (see the module docstring)."""
    original = _multiclass.run_pair_workers

    def barrier(work, n_workers, *args):
        started = [threading.Event() for _ in range(n_workers)]

        def gated(w):
            if w == 0:
                for ev in started[1:]:
                    ev.wait(WAIT_S)
            else:
                started[w].set()
            return work(w)

        _ACTIVE[0] += 1
        try:
            return original(gated, n_workers, *args)
        finally:
            _ACTIVE[0] -= 1

    monkeypatch.setattr(_multiclass, "run_pair_workers", barrier)
