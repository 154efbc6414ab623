"""svmlab.smo._simd.extremes (the vectorised scan behind Platt's max |E1 - E2| in
parked phases) against a naive loop written here: same positions, ties to
the first one, inf entries (examples at a bound) never chosen, any length."""

import os
import subprocess
import sys

import numpy as np
import pytest
from numba import njit

from svmlab.smo._simd import extremes


def naive(F, B, m):
    best_hi, best_lo, a, c = -np.inf, np.inf, -1, -1
    for q in range(m):
        if F[q] - B[q] > best_hi:
            best_hi, a = F[q] - B[q], q
        if F[q] + B[q] < best_lo:
            best_lo, c = F[q] + B[q], q
    return a, c


@njit
def _call(F, B, m):
    return extremes(F, B, m)


def _cases(seed, count):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        n = int(rng.integers(0, 45))
        m = int(rng.integers(0, n + 1))
        # few distinct values: many ties
        F = np.round(rng.normal(size=n) * 10.0 ** rng.integers(-3, 4), int(rng.integers(0, 3)))
        B = np.where(rng.random(n) < rng.random(), np.inf, 0.0)
        yield F, B, m


def test_extremes_against_naive():
    for F, B, m in _cases(0, 4000):
        assert _call(F, B, m) == naive(F, B, m), (F, B, m)


@pytest.mark.parametrize("m", [0, 1, 7, 8, 9, 16, 17, 1000])
def test_extremes_edges(m):
    F = np.zeros(1000)
    B = np.full(1000, np.inf)
    assert _call(F, B, m) == (-1, -1)  # every entry at a bound: none
    B[:] = 0.0
    assert _call(F, B, m) == ((0, 0) if m else (-1, -1))  # all tied: the first
    if m > 3:
        F[m - 1] = 5.0
        F[m - 2] = -5.0
        F[2] = 5.0  # tie with the last: the first wins
        assert _call(F, B, m) == (2, m - 2)


def test_extremes_without_jit():
    """The NUMBA_DISABLE_JIT fallback gives the same answers."""
    code = (
        "import numpy as np, sys\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "from test_simd import _cases, naive\n"
        "from svmlab.smo._simd import extremes\n"
        "for F, B, m in _cases(1, 300):\n"
        "    assert extremes(F, B, m) == naive(F, B, m)\n"
    )
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    subprocess.run([sys.executable, "-c", code, os.path.dirname(__file__)], env=env,
                   check=True, timeout=300)
