"""The background process of :mod:`svmlab._jit`: compiles svmlab's kernels
into numba's on-disk cache, one request at a time.

Requests arrive on stdin as length-prefixed pickles ``(kind, id, payload)``:

``("compile", id, (module, qualname, pickled_signature))``
    compile that kernel for those argument types (numba's ``compile``: it
    loads from the cache when the code is there, else compiles and saves);
``("warm", id, family)``
    run :func:`svmlab._warm.warm` for a family (representative fits).

Each request is answered on stdout by one line, ``done ID`` or ``fail ID
message``.  At the end of stdin (the requesting process exited or closed
it) the requests already received are finished, then the process exits.
Run as ``python -m svmlab._jit_worker`` with ``SVMLAB_JIT_WORKER=1``.
"""

from __future__ import annotations

import importlib
import os
import pickle
import struct
import sys


def _read(stream):
    head = stream.read(8)
    if len(head) < 8:
        return None
    (n,) = struct.unpack("<Q", head)
    return pickle.loads(stream.read(n))


def _compile(module, qualname, sig_bytes):
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    obj.compile(pickle.loads(sig_bytes))


def main():
    os.environ["SVMLAB_JIT_WORKER"] = "1"
    out = sys.stdout
    stdin = sys.stdin.buffer
    while True:
        msg = _read(stdin)
        if msg is None:
            break
        kind, rid, payload = msg
        try:
            if kind == "compile":
                _compile(*payload)
            elif kind == "warm":
                from svmlab._warm import warm
                warm(payload)
            else:
                raise ValueError(f"unknown request {kind!r}")
            out.write(f"done {rid}\n")
        except BaseException as exc:  # report, and go on with the next request
            text = f"{type(exc).__name__}: {exc}".replace("\n", " ")[:500]
            out.write(f"fail {rid} {text}\n")
        out.flush()


if __name__ == "__main__":
    main()
