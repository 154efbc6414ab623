"""Reused memory for the large arrays of runs that follow one another.

Problem: a one-vs-one fit opens k(k-1)/2 pair runs one after the other (in
each worker thread), and each pair allocates its kernel-row cache afresh
(several MB).  In the main thread glibc keeps the freed memory of the
``brk`` heap for the next pair; in a worker thread the allocation lands in
a thread arena's heap, which glibc unmaps as soon as it is empty again, so
every pair maps a new 64 MB heap, faults its pages in (NumPy advises huge
pages for 4 MB and more: the kernel zeroes and may compact 2 MB at a time)
and unmaps it at the end (a TLB shootdown of the other thread's core).
That is the system time of ``n_jobs=2`` (docs/decisions/32j01).

Contract: :meth:`BufferPool.empty` gives an uninitialised array like
``np.empty``; its memory goes back to the pool when *that array object* is
garbage (a ``weakref.finalize`` on it) and serves a later request of at
most its size.  So the array must be the one its user keeps (a
:class:`~svmlab.kernels.cache.CacheData`'s ``rows``): views of it do not
keep the memory from being handed out again (NumPy points a view's
``base`` at the buffer, not at the array).  The pool keeps at most
``keep_bytes`` of free memory (the smallest buffers are dropped first) and
nothing once the pool itself is garbage; arrays below ``min_bytes`` are
plain ``np.empty`` (glibc's own free lists serve those well).
"""

from __future__ import annotations

import threading
import weakref

import numpy as np

__all__ = ["BufferPool"]


class BufferPool:
    """Free byte buffers for reuse (see the module docstring).

    Parameters
    ----------
    keep_bytes : int
        The most free memory kept for later requests.
    min_bytes : int, default :attr:`MIN_BYTES` (1 MB)
        Smaller arrays are not pooled.

    Attributes ``made`` and ``reused`` count the pooled requests served by
    a fresh buffer and by a kept one.
    """

    #: the default ``min_bytes``
    MIN_BYTES = 1 << 20

    def __init__(self, keep_bytes, min_bytes=None):
        self.keep_bytes = int(keep_bytes)
        self.min_bytes = int(self.MIN_BYTES if min_bytes is None else min_bytes)
        self._free = []
        self._lock = threading.Lock()
        self.made = 0
        self.reused = 0

    def empty(self, shape, dtype, reserve=0):
        """An uninitialised C-contiguous array of ``shape`` and ``dtype``
        whose memory comes from (and returns to) the pool.  A fresh buffer
        gets at least ``reserve`` bytes, so that a later, larger request can
        reuse it (the caller's bound on what it will ask)."""
        dt = np.dtype(dtype)
        shape = tuple(int(s) for s in shape)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
        if nbytes < self.min_bytes:
            return np.empty(shape, dt)
        buf = None
        with self._lock:
            fit = [b for b in self._free if b.nbytes >= nbytes]
            if fit:
                buf = min(fit, key=lambda b: b.nbytes)
                self._free = [b for b in self._free if b is not buf]
                self.reused += 1
            else:
                self.made += 1
        if buf is None:
            buf = np.empty(max(nbytes, int(reserve)), np.uint8)
        arr = buf[:nbytes].view(dt).reshape(shape)
        f = weakref.finalize(arr, BufferPool._give, weakref.ref(self), buf)
        f.atexit = False
        return arr

    @staticmethod
    def _give(pool_ref, buf):
        pool = pool_ref()
        if pool is None:  # the pool is gone: the buffer with it
            return
        with pool._lock:
            free = sorted(pool._free + [buf], key=lambda b: b.nbytes, reverse=True)
            kept, total = [], 0
            for b in free:  # the largest first: they serve any request
                if total + b.nbytes <= pool.keep_bytes:
                    kept.append(b)
                    total += b.nbytes
            pool._free = kept

    @property
    def free_bytes(self):
        """Bytes held for later requests (not in use)."""
        with self._lock:
            return int(sum(b.nbytes for b in self._free))

    def clear(self):
        """Drop every free buffer."""
        with self._lock:
            self._free = []
