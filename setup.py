"""Build steps beyond pyproject.toml: a wheel ships svmlab's compiled
kernels (:mod:`svmlab._shipped`, docs/decisions/27a01-shipped-machine-code.md).

After ``build_py`` has copied the package into the build folder, a separate
process imports svmlab from there and runs :func:`svmlab._shipped_build.build`:
``svmlab.warm_up()`` of every family and the fits users start with, compiled
for the portable x86-64-v3 target into ``svmlab/_machine_code``.  The wheel
is then specific to this Python version and platform (its tag says so).

Skipped, giving today's pure wheel (kernels compile on first use), off
x86-64, when the build environment lacks svmlab's dependencies, or with
``SVMLAB_SHIP_MACHINE_CODE=0``.  An editable install builds the same code
into the checkout instead, from the build backend's ``build_editable``
(``build_backend/_svmlab_build.py``), not here.
"""

import os
import platform
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70.1
    from wheel.bdist_wheel import bdist_wheel


def _ship_reason():
    """None when this build compiles the shipped machine code, else why not."""
    if os.environ.get("SVMLAB_SHIP_MACHINE_CODE", "1") == "0":
        return "SVMLAB_SHIP_MACHINE_CODE=0"
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return f"the portable target is x86-64 and this is {platform.machine()}"
    probe = subprocess.run([sys.executable, "-c", "import numba, scipy, sklearn"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        return "svmlab's dependencies are not importable in the build environment"
    return None


class BuildPyShipped(build_py):
    """``build_py``, then the shipped machine code (not for editable installs)."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        why = _ship_reason()
        if why is not None:
            print(f"svmlab: no shipped machine code in this build ({why})", file=sys.stderr)
            return
        lib = os.path.abspath(self.build_lib)
        # pip's isolated build environment is on PYTHONPATH: keep it, after the build folder
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [lib] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])))
        env.pop("NUMBA_DISABLE_JIT", None)
        print("svmlab: compiling the shipped machine code (svmlab.warm_up() and the first "
              "fits users make, for x86-64-v3, in parallel processes)", file=sys.stderr)
        cmd = [sys.executable, "-m", "svmlab._shipped_build", "build",
               os.path.join(lib, "svmlab", "_machine_code")]
        # one built in the source tree (python -m svmlab._shipped_build build) is
        # copied when its manifest matches these sources, numba and Python
        in_tree = os.path.join(os.path.dirname(os.path.abspath(__file__)), "svmlab",
                               "_machine_code")
        if os.path.isdir(in_tree):
            cmd += ["--reuse", in_tree]
        subprocess.run(cmd, env=env, cwd=lib, check=True)
        self.distribution._svmlab_shipped = True


class BdistWheelShipped(bdist_wheel):
    """A wheel with shipped machine code is tagged for this Python and
    platform (the code is numba cache entries for this Python's bytecode)."""

    def finalize_options(self):
        super().finalize_options()
        if _ship_reason() is None:
            self.root_is_pure = False

    def get_tag(self):
        if self.root_is_pure:
            return super().get_tag()
        _, _, plat = super().get_tag()
        tag = f"cp{sys.version_info[0]}{sys.version_info[1]}"
        return tag, tag, plat


setup(cmdclass={"build_py": BuildPyShipped, "bdist_wheel": BdistWheelShipped})
