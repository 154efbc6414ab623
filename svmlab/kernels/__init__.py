"""The kernel room: kernel functions, kernel rows, the bit-packed path for
binary inputs and the LRU row cache, apart from every solver (as LIBSVM
keeps ``Kernel`` and ``Cache`` apart from ``Solver`` in ``svm.cpp``).

=====================  ====================================================
:mod:`._rows`          kernel values and rows (dense, CSR, bit-packed),
                       :class:`Kernel`, :class:`KernelData`
:mod:`.cache`          :class:`KernelCache`: LRU rows bounded in megabytes
:mod:`._bits`          packing binary inputs into 64-bit words
=====================  ====================================================

Every solver reads kernel values through this room; none computes them.
"""

from ._rows import (  # noqa: F401
    KERNELS,
    Kernel,
    KernelData,
    kernel_row,
    kernel_row_against,
    kernel_row_subset,
    kernel_value,
    resolve_gamma,
    row_dot,
)
from .cache import KernelCache  # noqa: F401

__all__ = [
    "KERNELS",
    "KernelData",
    "Kernel",
    "KernelCache",
    "kernel_row",
    "kernel_row_against",
    "kernel_row_subset",
    "kernel_value",
    "resolve_gamma",
    "row_dot",
]
