"""The record of one successful joint SMO step, declared once.

:class:`SMOStep` (a frozen dataclass) is what callbacks, ``iter_fit`` and
``SMORun.step()`` hand out.  The compiled solver (:func:`svmlab.smo._core.smo_run`)
writes a step's values into a float64 buffer, one slot per field; the slot
layout is *generated* here from SMOStep's fields, so a field is declared once:

* ``RUN_FIELDS``: the fields the Python run fills in itself (cache counters);
* ``RECORD_FIELDS``: every other field of SMOStep, in declaration order: the
  buffer's slots;
* ``SLOT``: a namedtuple (class :class:`RecordSlots`, generated from
  ``RECORD_FIELDS``) holding each field's slot number, so the compiled writer
  reads ``rec[SLOT.a1_old] = a1`` (numba freezes a global namedtuple of ints
  into constants: no cost per step);
* :func:`decode_record` turns a buffer back into an :class:`SMOStep`,
  converting each slot by the field's declared type.

Design decision (code generation vs derived constants): the compiled writer
(``svmlab.smo._core._record``) is written by hand, one line per field saying
where its value comes from, with the generated ``SLOT`` numbers; it is not
generated as source text, because numba's on-disk cache (``cache=True``)
needs a real source file per function, and generating Python source at
import would defeat it.  ``tests/test_smo_core_shape.py`` fails when the
writer and the field list disagree (a field without a line, a line without
a field, a value in the wrong slot).

Numba's cache tracks only the source file of a cached function, not the
files of what it calls or reads.  So a change of SMOStep's fields here
would leave a cached ``smo_run`` writing the old layout.  To make that loud
rather than silent, the buffer has one extra slot (``R_LAYOUT``) into which
the writer puts ``LAYOUT_ID`` (a checksum of ``RECORD_FIELDS``, frozen into
the compiled code); :func:`decode_record` refuses a buffer whose checksum
differs, saying to clear the numba cache.
"""

from __future__ import annotations

import zlib
from collections import namedtuple
from dataclasses import dataclass, fields

import numpy as np

__all__ = ["SMOStep", "RUN_FIELDS", "RECORD_FIELDS", "RecordSlots", "SLOT", "R_SIZE",
           "R_LAYOUT", "R_BUFFER", "LAYOUT_ID", "HEURISTICS", "decode_record"]


@dataclass(frozen=True, slots=True)
class SMOStep:
    """One successful joint SMO step (record passed to callbacks).

    ``i1, i2`` the pair (``i2`` is the example chosen first, as in Platt's
    ``examineExample``; in wss2 mode ``i1`` is LIBSVM's ``i`` and ``i2`` its
    ``j``); ``a*_old``/``a*_new`` the multipliers before/after; ``[L, H]`` the
    feasible segment for ``a2``; ``eta = K11 + K22 - 2 K12``; ``E1, E2`` the
    errors ``f(x) - y`` before the step; ``b_old, b_new`` the threshold
    (``intercept_``) before/after; ``heuristic`` which rule chose the pair
    (``"max|E1-E2|"``, ``"nonbound-scan"``, ``"full-scan"`` or ``"wss2"``);
    ``clipped`` whether ``a2_new`` is an end of the segment rather than the
    unconstrained maximiser ``a2_unclipped`` (NaN when ``eta <= 0``);
    ``delta_objective`` the increase of the dual objective W;
    ``examine_all`` whether Platt's outer loop was in a full pass;
    ``n_active`` examples not shrunk, ``n_nonbound`` examples with
    ``0 < alpha < C``; ``cache_hits``/``cache_misses`` kernel-row cache counts
    so far (full rows and rows over a parked phase's non-bound examples) and
    ``kernel_evaluations`` the kernel values computed for those rows (misses
    times the row length; full rows computed while shrunk cover only the
    active examples, so this is an upper bound for them).  Platt's linear
    SMO folds ``w`` and computes rows only during parked phases.
    ``C1, C2`` are the pair's own upper bounds ``C_i = C * weight_i`` (equal
    to ``C`` without weights): the step stays in the box ``[0, C1] x [0, C2]``
    and ``[L, H]`` is cut from it (NaN in a record built by hand without them).
    """

    iteration: int
    i1: int
    i2: int
    a1_old: float
    a2_old: float
    a1_new: float
    a2_new: float
    L: float
    H: float
    eta: float
    E1: float
    E2: float
    b_old: float
    b_new: float
    heuristic: str
    clipped: bool
    a2_unclipped: float
    y1: float
    y2: float
    examine_all: bool
    K11: float
    K12: float
    K22: float
    delta_objective: float
    n_active: int
    n_nonbound: int
    cache_hits: int
    cache_misses: int
    kernel_evaluations: int
    C1: float = np.nan
    C2: float = np.nan


#: which rule chose the pair: the compiled code stores the index
#: (``H_*`` in :mod:`svmlab.smo._core`), the record its name
HEURISTICS = ("max|E1-E2|", "nonbound-scan", "full-scan", "wss2")

#: fields the Python run fills in (its cache counters), not the compiled code
RUN_FIELDS = ("cache_hits", "cache_misses", "kernel_evaluations")
_TYPES = {f.name: f.type for f in fields(SMOStep)}
#: the record buffer's slots: SMOStep's other fields, in declaration order
RECORD_FIELDS = tuple(f.name for f in fields(SMOStep) if f.name not in RUN_FIELDS)
RecordSlots = namedtuple("RecordSlots", RECORD_FIELDS, module=__name__)
RecordSlots.__doc__ = "Slot number of each recorded SMOStep field (generated)."
#: ``SLOT.<field>`` is the field's slot in the record buffer
SLOT = RecordSlots(*range(len(RECORD_FIELDS)))
R_SIZE = len(RECORD_FIELDS)
#: the extra slot holding the layout checksum, and the buffer's length
R_LAYOUT = R_SIZE
R_BUFFER = R_SIZE + 1
#: checksum of the layout (a float64-exact integer), written by the compiled writer
LAYOUT_ID = float(zlib.crc32(",".join(RECORD_FIELDS).encode()) % (1 << 31))


def decode_record(rec, platt, **run_fields):
    """The :class:`SMOStep` in the buffer ``rec`` written by the compiled solver.

    Each slot is converted by its field's declared type (``int``, ``float``,
    ``bool``; ``heuristic`` is the name of the stored index).  ``platt``:
    whether the run uses Platt's selection (``examine_all`` is False in wss2
    mode).  ``run_fields`` gives the :data:`RUN_FIELDS`.  Raises RuntimeError
    when the buffer's layout checksum is not this module's (a stale numba
    cache compiled for other fields)."""
    if rec.shape[0] != R_BUFFER or rec[R_LAYOUT] != LAYOUT_ID:
        raise RuntimeError(
            "the SMO record buffer was written for another SMOStep layout (a stale numba "
            "cache compiled before SMOStep's fields changed): clear NUMBA_CACHE_DIR or "
            "the __pycache__ folders of svmlab/smo and import again")
    values = {}
    for k, name in enumerate(RECORD_FIELDS):
        v = rec[k]
        kind = _TYPES[name]
        if name == "heuristic":
            values[name] = HEURISTICS[int(v)]
        elif kind in (int, "int"):
            values[name] = int(v)
        elif kind in (bool, "bool"):
            values[name] = bool(v)
        else:
            values[name] = float(v)
    values["examine_all"] = values["examine_all"] and bool(platt)
    return SMOStep(**values, **run_fields)
