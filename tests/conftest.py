import os

import numpy as np
import pytest

# Tests compile in their own process (numba's behaviour), so that no test's
# outcome depends on when a background compilation finishes; the tiers of
# svmlab._jit are tested on their own in test_jit_tiers.py.
os.environ.setdefault("SVMLAB_JIT", "eager")


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: a test that takes more than ~10 s")


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def shared_data_dir():
    """The directory of real benchmark files (SVMLAB_DATA), or None."""
    d = os.environ.get("SVMLAB_DATA")
    return d if d and os.path.isdir(d) else None


def require_shared_data():
    """Skip when the shared benchmark files are absent -- except in CI, where
    they must be present (a skipped test there would be counted as done)."""
    if shared_data_dir() is None:
        if os.environ.get("CI"):
            pytest.fail("SVMLAB_DATA does not point at the shared datasets in CI")
        pytest.skip("set SVMLAB_DATA to the directory of benchmark files to run this test")


# tests draw off-screen (the notebooks keep their inline backend)
import matplotlib  # noqa: E402

matplotlib.use("Agg")
