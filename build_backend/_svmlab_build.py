"""svmlab's build backend: setuptools', plus the machine code that makes a
fresh install fit at compiled speed (svmlab._shipped;
docs/decisions/27a01-shipped-machine-code.md, 28a01-editable-install-builds-machine-code.md).

* A **wheel** build compiles the shipped machine code into the wheel
  (``setup.py``'s ``build_py`` step).
* An **editable install** (``pip install -e``, PEP 660 ``build_editable``)
  builds the same store into the checkout, ``svmlab/_machine_code`` (git
  ignores it), after setuptools has built the editable wheel: the README's
  install commands then give compiled first fits.  The build runs
  ``python -m svmlab._shipped_build build --keep`` on the checkout, in
  worker processes across the available cores; a store that already
  matches the sources is kept.  It never fails the install: on any error it
  warns, and kernels compile on first use as without it.

Both builds run svmlab, so they need its runtime dependencies in the build
environment; PEP 517 lets the backend ask for them per kind of build.  An
sdist compiles nothing and needs only setuptools.  ``SVMLAB_SHIP_MACHINE_CODE=0``
skips the machine code (and those dependencies) in both.

What the user sees: pip shows its spinner while the backend runs (it moves
with every line the build prints); ``pip install -v`` shows the lines
themselves (parts done of the total, which are running, seconds so far).
"""

import os
import platform
import subprocess
import sys
import time
import tomllib

from setuptools import build_meta as _orig
from setuptools.build_meta import *  # noqa: F401,F403  (the PEP 517 hooks)

__all__ = _orig.__all__

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _runtime_deps():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return list(tomllib.load(f)["project"]["dependencies"])


def _ship():
    return os.environ.get("SVMLAB_SHIP_MACHINE_CODE", "1") != "0"


def get_requires_for_build_wheel(config_settings=None):
    reqs = list(_orig.get_requires_for_build_wheel(config_settings))
    if _ship():
        reqs += _runtime_deps()
    return reqs


def get_requires_for_build_editable(config_settings=None):
    reqs = list(_orig.get_requires_for_build_editable(config_settings))
    if _ship():
        reqs += _runtime_deps()
    return reqs


def _say(msg):
    print(f"svmlab: {msg}", file=sys.stderr, flush=True)


def build_in_tree():
    """Build (or keep) the checkout's ``svmlab/_machine_code``; returns
    True when it holds a complete build afterwards.  Never raises."""
    try:
        if not _ship():
            _say("no machine code built (SVMLAB_SHIP_MACHINE_CODE=0): kernels compile on "
                 "first use")
            return False
        if platform.machine().lower() not in ("x86_64", "amd64"):
            _say(f"no machine code built (the portable target is x86-64, this is "
                 f"{platform.machine()}): kernels compile on first use")
            return False
        # pip's isolated build environment is on PYTHONPATH: keep it, after the checkout
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [ROOT] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])))
        env.pop("NUMBA_DISABLE_JIT", None)
        probe = subprocess.run([sys.executable, "-c", "import numba, scipy, sklearn"],
                               capture_output=True, text=True, env=env)
        if probe.returncode != 0:
            last = (probe.stderr.strip().splitlines() or [""])[-1]
            _say("no machine code built (svmlab's dependencies are not importable in the "
                 f"build environment: {last}): kernels compile on first use")
            return False
        _say("compiling svmlab's solvers for this checkout (svmlab/_machine_code), in "
             "parallel processes; pip install -v shows the progress")
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "svmlab._shipped_build", "build",
                               os.path.join(ROOT, "svmlab", "_machine_code"), "--keep"],
                              env=env, cwd=ROOT)
        if proc.returncode != 0:
            _say(f"the machine-code build did not finish (exit {proc.returncode}, "
                 f"{time.perf_counter() - t0:.0f} s): what it compiled loads, the rest "
                 "compiles on first use")
            return False
        return True
    except Exception as exc:  # the install goes on without the store
        _say(f"the machine-code build failed ({type(exc).__name__}: {exc}): kernels "
             "compile on first use")
        return False


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    name = _orig.build_editable(wheel_directory, config_settings, metadata_directory)
    build_in_tree()
    return name
