"""Honest waiting (issue 29 item 3): while svmlab compiles, the display moves
(what compiles, k of about n kernels, the time left from the measured compile
mass), it counts what numba really compiles, it learns the mass of this
machine, and SVMLAB_PROGRESS=0 silences it."""

from __future__ import annotations

import io
import json
import os
import time

import numpy as np

from svmlab import _jit


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_the_line_moves_and_says_k_of_n_and_time_left(monkeypatch):
    monkeypatch.setenv("SVMLAB_PROGRESS", "1")
    out = _Terminal()
    monkeypatch.setattr("sys.stderr", out)
    state = {"k": 0, "t0": time.perf_counter()}

    def text():
        state["k"] += 1
        return _jit._describe_counts("compiling the SMO solver", state["k"], 40,
                                     time.perf_counter() - state["t0"], 30.0)

    with _jit._Progress(text, delay=0.05, final=lambda: "compiling the SMO solver"):
        time.sleep(1.4)
    frames = out.getvalue().split("\r")[1:]
    assert len(frames) >= 3, frames  # rewritten, not one frozen line
    assert len({f.strip() for f in frames[:-1]}) == len(frames) - 1  # every frame differs
    assert "1 of about 40 kernels compiled" in frames[0] and "s left" in frames[0]
    assert frames[-1].startswith("svmlab: compiling the SMO solver: done (")


def test_estimates_come_from_the_table_then_from_the_measured_rate():
    line = _jit._describe_counts("compiling x", 0, 100, 0.0, 50.0)
    assert "0 of about 100 kernels compiled" in line and "about 50 s left" in line
    line = _jit._describe_counts("compiling x", 20, 100, 10.0, 50.0)  # 0.5 s a kernel here
    assert "about 40 s left" in line
    line = _jit._describe_counts("compiling x", 3, None, 4.0, None)
    assert "3 kernels compiled" in line and "left" not in line


def test_progress_0_is_silent(monkeypatch):
    monkeypatch.setenv("SVMLAB_PROGRESS", "0")
    out = _Terminal()
    monkeypatch.setattr("sys.stderr", out)
    with _jit._Progress(lambda: "compiling", delay=0.0):
        time.sleep(0.3)
    assert out.getvalue() == ""


def test_compilations_are_counted_and_the_mass_is_learned(tmp_path, monkeypatch):
    """A real compilation under announce: k counts numba's compile events, and
    the cache folder remembers n and the seconds for the next estimate."""
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("SVMLAB_PROGRESS", "0")

    @_jit.njit(cache=False)
    def inner(a):
        return a + 1.0

    @_jit.njit(cache=False)
    def outer(x):
        s = 0.0
        for v in x:
            s += inner(v)
        return s

    old = _jit.set_mode("eager")
    try:
        with _jit.announce("test kernels", key="warm:test") as ann:
            assert outer(np.arange(3.0)) == 6.0
    finally:
        _jit.set_mode(old)
    assert ann.compiled and ann.counter.k == 2  # outer and inner
    with open(os.path.join(_jit.queue_dir(), "mass.json")) as f:
        row = json.load(f)["warm:test"]
    assert row["n"] == 2 and row["s"] > 0 and row["cpu"] > 0
    assert _jit._mass_table()["warm:test"] == row
    # the shipped table covers every warm-up family
    for family in ("smo", "decomposition", "cutting_plane"):
        assert _jit._mass_table()[f"warm:{family}"]["n"] > 0
