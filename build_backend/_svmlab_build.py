"""svmlab's build backend: setuptools', plus what compiling the shipped
machine code needs (svmlab._shipped, docs/decisions/27a01-shipped-machine-code.md).

A wheel build runs :func:`svmlab.warm_up` in the build environment
(``setup.py``'s ``build_py`` step), so it needs svmlab's own dependencies
there; an editable install or an sdist does not compile anything and needs
only setuptools.  PEP 517 lets the backend say so per kind of build.
"""

import os
import tomllib

from setuptools import build_meta as _orig
from setuptools.build_meta import *  # noqa: F401,F403  (the PEP 517 hooks)

__all__ = _orig.__all__


def _runtime_deps():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(here, "pyproject.toml"), "rb") as f:
        return list(tomllib.load(f)["project"]["dependencies"])


def get_requires_for_build_wheel(config_settings=None):
    reqs = list(_orig.get_requires_for_build_wheel(config_settings))
    if os.environ.get("SVMLAB_SHIP_MACHINE_CODE", "1") != "0":
        reqs += _runtime_deps()
    return reqs
