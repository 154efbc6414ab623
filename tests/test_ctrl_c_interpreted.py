"""Ctrl-C within a second where kernels run as Python (issue 33, item 21).

A fast-path chunk is sized for compiled code (SMO's first chunk is about
2**20 / n steps); run as Python (``SVMLAB_JIT=interpret``, or the small-call
tier) one such chunk lasted tens of seconds, and a Ctrl-C waited for it (127 s
on 3,000 rows in the issue).  Outside eager mode ``SolverRun.run`` now takes one
probe step first and sizes the chunk from its cost.  These tests drive that
logic with a fake clock (no wall-clock assertion) and check that chunking does
not change the iterates.
"""
import time

import numpy as np
import pytest
from sklearn.datasets import make_classification

from svmlab import SMOClassifier, _stepping


def _fit_recording(monkeypatch, mode, clock_step=None):
    X, y = make_classification(300, 5, random_state=0)
    est = SMOClassifier(selection="wss2", random_state=0)
    run = est.start(X, y)
    wants = []
    cls = type(run)
    orig = cls._advance

    def advance(self, want):
        wants.append(int(want))
        return orig(self, want)

    monkeypatch.setattr(cls, "_advance", advance)
    monkeypatch.setattr(_stepping, "_jit_mode", lambda: mode)
    if clock_step is not None:
        now = [0.0]

        def fake_clock():
            now[0] += clock_step
            return now[0]

        monkeypatch.setattr(time, "perf_counter", fake_clock)
    run.run()
    monkeypatch.undo()
    return run, wants


def test_eager_mode_starts_with_the_compiled_first_chunk(monkeypatch):
    run, wants = _fit_recording(monkeypatch, "eager")
    assert wants[0] == min(20000, int(run.first_chunk)) or wants[0] == run.n_iter


@pytest.mark.parametrize("mode", ["auto", "interpret"])
def test_a_probe_step_sizes_the_first_chunk_outside_eager_mode(monkeypatch, mode):
    # every clock reading 0.1 s after the last: the probe step "costs" at
    # least 0.1 s, so the next chunk is at most CHUNK_SECONDS / 0.1 steps
    run, wants = _fit_recording(monkeypatch, mode, clock_step=0.1)
    assert wants[0] == 1
    assert len(wants) > 1 and wants[1] <= max(1, int(_stepping.CHUNK_SECONDS / 0.1))
    assert run.converged


def test_chunk_sizes_do_not_change_the_iterates(monkeypatch):
    eager, _ = _fit_recording(monkeypatch, "eager")
    probed, wants = _fit_recording(monkeypatch, "interpret", clock_step=0.1)
    assert len(wants) > 3
    assert eager.n_iter == probed.n_iter
    np.testing.assert_array_equal(eager.alpha, probed.alpha)
