"""The one place svmlab's compiled kernels are declared.

Every compiled function of svmlab is declared with :func:`njit` from this
module instead of ``numba.njit``, so that how compiled code is produced and
when it is used is decided in one place.
"""

from __future__ import annotations

from numba import njit as _numba_njit

__all__ = ["njit"]


def njit(*args, **kwargs):
    """``numba.njit`` with svmlab's policy (same arguments)."""
    return _numba_njit(*args, **kwargs)
