"""The records of one successful joint SMO step, declared once.

:class:`SMOStep` (a frozen dataclass) is what :class:`svmlab.SMOClassifier`'s
callbacks, ``iter_fit`` and ``SMORun.step()`` hand out; :class:`DualStep`
is the record of a step of the generalised dual
(:class:`svmlab.smo.DualRun`).  The compiled loops
(:func:`svmlab.smo._platt.platt_run`, :func:`svmlab.smo._dual_core.dual_run`)
write a step's values into a float64 buffer, one slot per field; the slot
layout is *generated* here from the dataclass's fields, so a field is
declared once (shown for SMOStep; DualStep's are the ``DUAL_*`` names):

* ``RUN_FIELDS``: the fields the Python run fills in itself (cache counters);
* ``RECORD_FIELDS``: every other field of SMOStep, in declaration order: the
  buffer's slots;
* ``SLOT``: a namedtuple (class :class:`RecordSlots`, generated from
  ``RECORD_FIELDS``) holding each field's slot number, so the compiled writer
  reads ``rec[SLOT.a1_old] = a1`` (numba freezes a global namedtuple of ints
  into constants: no cost per step);
* :func:`decode_record` turns a buffer back into an :class:`SMOStep`,
  converting each slot by the field's declared type.

Design decision (code generation vs derived constants): a compiled writer
(``svmlab.smo._platt._record``, ``svmlab.smo._dual_core._dual_record``) is
written by hand, one line per field saying where its value comes from, with the generated ``SLOT`` numbers; it is not
generated as source text, because numba's on-disk cache (``cache=True``)
needs a real source file per function, and generating Python source at
import would defeat it.  ``tests/test_smo_core_shape.py`` fails when a
writer and its field list disagree (a field without a line, a line without
a field, a value in the wrong slot).

Numba's cache tracks only the source file of a cached function, not the
files of what it calls or reads.  So a change of a record's fields here
would leave a cached loop writing the old layout.  To make that loud
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

__all__ = ["SMOStep", "DualStep", "RUN_FIELDS", "RECORD_FIELDS", "RecordSlots", "SLOT",
           "R_SIZE", "R_LAYOUT", "R_BUFFER", "LAYOUT_ID", "HEURISTICS", "decode_record",
           "DUAL_FIELDS", "DUAL_SLOT", "DUAL_SIZE", "DUAL_LAYOUT", "DUAL_BUFFER", "DUAL_ID",
           "decode_dual", "smo_step_of"]


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


@dataclass(frozen=True, slots=True)
class DualStep:
    """One successful pair step of the generalised dual (LIBSVM's form)::

        min_a  f(a) = 1/2 a'Qa + p'a   s.t.  y'a = Delta,  0 <= a_t <= U_t,
        Q_ts = y_t y_s K(x_idx(t), x_idx(s))

    taken by :class:`svmlab.smo.DualRun`.  Named as :class:`SMOStep` where
    the meaning is the same (the SMO geometry explorers draw it: the box
    ``[0, C1] x [0, C2]``, the segment ``[L, H]``), and as the readable
    twin's record (``svmlab.reference.dual.DualStep``), whose fields are
    the first 30 here:

    ``iteration`` (1-based); ``i1, i2`` the pair (variable indices in
    ``0..l-1``; the kernel row of t is example ``idx[t]``): ``i1`` WSS 2's
    ``i``, the maximiser of ``v = -y grad`` over I_up (for nu problems
    within the class of ``i2``), ``i2`` its second-order partner ``j``
    (:mod:`svmlab._wss2`); ``y1, y2`` their signs; ``C1, C2`` their upper
    bounds ``U`` (inf: a hard margin); ``p1, p2`` their linear terms;
    ``a1_old, a2_old`` / ``a1_new, a2_new`` the variables before/after;
    ``L, H`` the segment of ``a2``; ``eta = K11 + K22 - 2 K12`` the
    curvature along the line and ``K11, K12, K22`` the kernel values;
    ``E1, E2`` the errors ``y_t grad_t + b = f0_t + b + y_t p_t`` before the
    step (C-SVC: Platt's ``f(x_t) - y_t``), ``b_old, b_new`` the running
    threshold (the fitted intercept is LIBSVM's rule, not this value);
    ``a2_unclipped`` the minimiser of f along the line (NaN when ``eta <=
    0``), ``clipped`` whether ``a2_new`` is an end of the segment instead;
    ``delta_objective`` the decrease of ``f`` (>= 0: SMOStep's increase of
    ``W = -f``); ``m`` and ``M`` the maximum over I_up and the minimum over
    I_low of ``v`` before the step (nu problems: those of the pair's class),
    ``gap`` the stopping rule's value (``m - M``; nu problems: the larger of
    the two classes'); ``sign_class`` 0 for the standard solver, the pair's
    sign for the nu forms.  Then: ``gain`` WSS 2's score of ``i2``
    (``-(m - v_j)^2 / a_ij``, smaller is better); ``n_active`` variables not
    shrunk; ``n_free`` variables with ``0 < a_t < U_t`` after the step;
    ``cache_hits``/``cache_misses``/``kernel_evaluations`` the kernel-row
    cache counts so far.
    """

    iteration: int
    i1: int
    i2: int
    y1: float
    y2: float
    C1: float
    C2: float
    p1: float
    p2: float
    a1_old: float
    a2_old: float
    a1_new: float
    a2_new: float
    L: float
    H: float
    eta: float
    K11: float
    K12: float
    K22: float
    E1: float
    E2: float
    b_old: float
    b_new: float
    a2_unclipped: float
    clipped: bool
    delta_objective: float
    m: float
    M: float
    gap: float
    sign_class: int
    gain: float
    n_active: int
    n_free: int
    cache_hits: int
    cache_misses: int
    kernel_evaluations: int


#: which rule chose the pair: the compiled code stores the index
#: (``H_*`` in :mod:`svmlab.smo._core`), the record its name
HEURISTICS = ("max|E1-E2|", "nonbound-scan", "full-scan", "wss2")

#: fields the Python run fills in (its cache counters), not the compiled code
RUN_FIELDS = ("cache_hits", "cache_misses", "kernel_evaluations")


def _layout(cls, name):
    """``(fields, slots, size, layout slot, buffer length, checksum)`` of the
    record buffer of dataclass ``cls``: its fields but :data:`RUN_FIELDS`, in
    declaration order, one slot each, then the checksum slot."""
    names = tuple(f.name for f in fields(cls) if f.name not in RUN_FIELDS)
    slots_cls = namedtuple(name, names, module=__name__)
    slots_cls.__doc__ = f"Slot number of each recorded {cls.__name__} field (generated)."
    size = len(names)
    checksum = float(zlib.crc32(",".join(names).encode()) % (1 << 31))
    return names, slots_cls, slots_cls(*range(size)), size, size, size + 1, checksum


_TYPES = {f.name: f.type for f in fields(SMOStep)}
#: the record buffer's slots: SMOStep's other fields, in declaration order
#: (``SLOT.<field>`` is the field's slot; then the checksum slot ``R_LAYOUT``
#: holding ``LAYOUT_ID``, a float64-exact integer frozen into the writer)
RECORD_FIELDS, RecordSlots, SLOT, R_SIZE, R_LAYOUT, R_BUFFER, LAYOUT_ID = _layout(
    SMOStep, "RecordSlots")
_DUAL_TYPES = {f.name: f.type for f in fields(DualStep)}
#: the same for :class:`DualStep`
DUAL_FIELDS, DualSlots, DUAL_SLOT, DUAL_SIZE, DUAL_LAYOUT, DUAL_BUFFER, DUAL_ID = _layout(
    DualStep, "DualSlots")

_STALE = ("the SMO record buffer was written for another {} layout (a stale numba cache "
          "compiled before its fields changed): clear NUMBA_CACHE_DIR or the __pycache__ "
          "folders of svmlab/smo and import again")


def _convert(kind, v):
    if kind in (int, "int"):
        return int(v)
    if kind in (bool, "bool"):
        return bool(v)
    return float(v)


def decode_dual(rec, **run_fields):
    """The :class:`DualStep` in the buffer ``rec`` written by the compiled
    dual loop (each slot converted by its field's type; ``run_fields`` the
    :data:`RUN_FIELDS`).  RuntimeError for a stale layout, as
    :func:`decode_record`."""
    if rec.shape[0] != DUAL_BUFFER or rec[DUAL_LAYOUT] != DUAL_ID:
        raise RuntimeError(_STALE.format("DualStep"))
    values = {name: _convert(_DUAL_TYPES[name], rec[k]) for k, name in enumerate(DUAL_FIELDS)}
    return DualStep(**values, **run_fields)


def smo_step_of(d):
    """The :class:`SMOStep` of a C-SVC step taken by the dual loop
    (``SMOClassifier(selection="wss2")``): the same fields, ``heuristic``
    ``"wss2"`` and ``examine_all`` False."""
    return SMOStep(iteration=d.iteration, i1=d.i1, i2=d.i2, a1_old=d.a1_old, a2_old=d.a2_old,
                   a1_new=d.a1_new, a2_new=d.a2_new, L=d.L, H=d.H, eta=d.eta, E1=d.E1,
                   E2=d.E2, b_old=d.b_old, b_new=d.b_new, heuristic="wss2",
                   clipped=d.clipped, a2_unclipped=d.a2_unclipped, y1=d.y1, y2=d.y2,
                   examine_all=False, K11=d.K11, K12=d.K12, K22=d.K22,
                   delta_objective=d.delta_objective, n_active=d.n_active,
                   n_nonbound=d.n_free, cache_hits=d.cache_hits,
                   cache_misses=d.cache_misses, kernel_evaluations=d.kernel_evaluations,
                   C1=d.C1, C2=d.C2)


def decode_record(rec, platt, **run_fields):
    """The :class:`SMOStep` in the buffer ``rec`` written by the compiled solver.

    Each slot is converted by its field's declared type (``int``, ``float``,
    ``bool``; ``heuristic`` is the name of the stored index).  ``platt``:
    whether the run uses Platt's selection (``examine_all`` is False in wss2
    mode).  ``run_fields`` gives the :data:`RUN_FIELDS`.  Raises RuntimeError
    when the buffer's layout checksum is not this module's (a stale numba
    cache compiled for other fields)."""
    if rec.shape[0] != R_BUFFER or rec[R_LAYOUT] != LAYOUT_ID:
        raise RuntimeError(_STALE.format("SMOStep"))
    values = {}
    for k, name in enumerate(RECORD_FIELDS):
        v = rec[k]
        if name == "heuristic":
            values[name] = HEURISTICS[int(v)]
        else:
            values[name] = _convert(_TYPES[name], v)
    values["examine_all"] = values["examine_all"] and bool(platt)
    return SMOStep(**values, **run_fields)
