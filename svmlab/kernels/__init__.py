"""The kernel room: kernel functions, kernel rows, the bit-packed path for
binary inputs and the LRU row cache, apart from every solver (as LIBSVM
keeps ``Kernel`` and ``Cache`` apart from ``Solver`` in ``svm.cpp``).

=====================  ====================================================
:mod:`._rows`          kernel values and rows (dense, CSR, bit-packed),
                       :class:`Kernel`, :class:`KernelData`
:mod:`._blocks`        kernel blocks ``K[B, :]``, ``K[B, C]``: many rows at
                       once (one GEMM for dense input); the whole matrix
                       (:func:`full_matrix`)
:mod:`.cache`          :class:`KernelCache`: LRU rows bounded in megabytes,
                       or every row at once (``full=True``)
:mod:`._bits`          packing binary inputs into 64-bit words
=====================  ====================================================

Every solver reads kernel values through this room; none computes them.
"""

from ._rows import (  # noqa: F401
    ALL_KERNELS,
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
from ._blocks import (  # noqa: F401
    full_matrix,
    kernel_block,
    kernel_block_cols,
    kernel_block_cols_gemm,
    kernel_block_gemm,
    transform_block,
)
from .cache import KernelCache  # noqa: F401

__all__ = [
    "ALL_KERNELS",
    "KERNELS",
    "KernelData",
    "Kernel",
    "KernelCache",
    "full_matrix",
    "kernel_block",
    "kernel_block_cols",
    "kernel_block_cols_gemm",
    "kernel_block_gemm",
    "kernel_row",
    "kernel_row_against",
    "kernel_row_subset",
    "kernel_value",
    "resolve_gamma",
    "row_dot",
    "transform_block",
]
