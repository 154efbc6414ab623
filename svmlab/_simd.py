"""First positions of the extremes of an array, four lanes at a time.

Platt's second-choice heuristic needs, at every SMO step, the non-bound
example with the largest and the one with the smallest error.  The scan is
the hottest loop of a parked phase, and numba cannot vectorise it: LLVM
only vectorises a floating-point max/min reduction under fast-math flags on
the ``select`` instruction, which numba does not emit.  So
:func:`extremes` is written with an LLVM intrinsic over ``<4 x double>``
vectors (compare, select the value and its position per lane), then merges
the lanes in numba code.  (Two vectors per iteration: eight lanes.)  The result is exactly that of the scalar scan,
ties included (the first position wins); ``tests/test_simd.py`` checks it
against a naive loop, with and without the JIT.

With ``NUMBA_DISABLE_JIT=1`` the same function is a plain Python loop.
"""

from __future__ import annotations

import numpy as np
from numba import config, njit

__all__ = ["extremes"]


@njit(cache=True, inline="always")
def _scan(FL, BL, lo, m, x, a, n, c):
    """The scalar scan over ``[lo, m)``, from the running maximum ``x`` (at
    a) and minimum ``n`` (at c): the reference semantics, the whole of the
    NUMBA_DISABLE_JIT path, and the tail of the vectorised one."""
    for q in range(lo, m):
        u = FL[q] - BL[q]
        if u > x:
            x = u
            a = q
        v = FL[q] + BL[q]
        if v < n:
            n = v
            c = q
    return a, c


def _extremes_py(FL, BL, m):
    return _scan(FL, BL, 0, m, -np.inf, -1, np.inf, -1)


if config.DISABLE_JIT:  # pragma: no cover - exercised by the no-JIT subprocess tests
    extremes = _extremes_py

else:
    from llvmlite import ir
    from numba import types
    from numba.core import cgutils
    from numba.extending import intrinsic

    _F8 = types.Array(types.float64, 1, "C")

    _W = 8  # positions per iteration: two <4 x double> vectors, eight lanes

    @intrinsic
    def _lanes(typingctx, FL, BL, m):
        """Per lane k (positions q = k mod 8, q < m - m % 8): the largest
        ``FL - BL`` and its first position, the smallest ``FL + BL`` and its
        first position.  Returns four 8-tuples: maxima, their positions,
        minima, their positions.  Two independent vectors per iteration, so that the
        compare-select chains overlap."""
        if FL != _F8 or BL != _F8 or not isinstance(m, types.Integer):
            return None
        fv = types.UniTuple(types.float64, 8)
        iv = types.UniTuple(types.int64, 8)
        ret = types.Tuple((fv, iv, fv, iv))
        sig = ret(FL, BL, m)

        def codegen(context, builder, signature, args):
            dbl = ir.DoubleType()
            i64 = ir.IntType(64)
            v4d = ir.VectorType(dbl, 4)
            v4i = ir.VectorType(i64, 4)
            fl = context.make_array(signature.args[0])(context, builder, args[0])
            bl = context.make_array(signature.args[1])(context, builder, args[1])
            m_ = context.cast(builder, args[2], signature.args[2], types.int64)
            pf = builder.bitcast(fl.data, v4d.as_pointer())
            pb = builder.bitcast(bl.data, v4d.as_pointer())
            nit = builder.sdiv(m_, ir.Constant(i64, _W))

            def acc(value):
                return cgutils.alloca_once_value(builder, value)

            lo = ir.Constant(v4d, [float("-inf")] * 4)
            hi = ir.Constant(v4d, [float("inf")] * 4)
            none = ir.Constant(v4i, [-1] * 4)
            # two accumulator sets: s = 0 for vector 2r, s = 1 for 2r + 1
            vx = [acc(lo), acc(lo)]
            vn = [acc(hi), acc(hi)]
            ax = [acc(none), acc(none)]
            an = [acc(none), acc(none)]
            qv = [acc(ir.Constant(v4i, [0, 1, 2, 3])), acc(ir.Constant(v4i, [4, 5, 6, 7]))]
            step = ir.Constant(v4i, [_W] * 4)
            with cgutils.for_range(builder, nit) as loop:
                r2 = builder.mul(loop.index, ir.Constant(i64, 2))
                for s_ in range(2):
                    r = builder.add(r2, ir.Constant(i64, s_))
                    f = builder.load(builder.gep(pf, [r]), align=8)
                    b = builder.load(builder.gep(pb, [r]), align=8)
                    q = builder.load(qv[s_])
                    u = builder.fsub(f, b)
                    v = builder.fadd(f, b)
                    cx = builder.load(vx[s_])
                    gx = builder.fcmp_ordered(">", u, cx)
                    builder.store(builder.select(gx, u, cx), vx[s_])
                    builder.store(builder.select(gx, q, builder.load(ax[s_])), ax[s_])
                    cn = builder.load(vn[s_])
                    gn = builder.fcmp_ordered("<", v, cn)
                    builder.store(builder.select(gn, v, cn), vn[s_])
                    builder.store(builder.select(gn, q, builder.load(an[s_])), an[s_])
                    builder.store(builder.add(q, step), qv[s_])
            parts = []
            for pair, typ in zip((vx, ax, vn, an), signature.return_type.types):
                vals = []
                for vec in pair:
                    val = builder.load(vec)
                    vals.extend(builder.extract_element(val, ir.Constant(ir.IntType(32), k))
                                for k in range(4))
                parts.append(context.make_tuple(builder, typ, vals))
            return context.make_tuple(builder, signature.return_type, parts)

        return sig, codegen

    @njit(cache=True, inline="always")
    def _better(x, a, z, b, larger):
        """Pick between (value x at a) and (z at b): the larger (or smaller)
        value, the first position on a tie (a position -1 means none)."""
        if b < 0:
            return x, a
        if a < 0:
            return z, b
        if (z > x) if larger else (z < x):
            return z, b
        if z == x and b < a:
            return z, b
        return x, a

    @njit(cache=True, inline="always")
    def extremes(FL, BL, m):
        """First position of the largest ``FL - BL`` and first position of
        the smallest ``FL + BL`` over ``[0, m)``; -1 where no value beats
        -inf (respectively +inf), as in the scalar scan."""
        tx, ta, tn, tc = _lanes(FL, BL, m)
        x, a = tx[0], ta[0]
        n, c = tn[0], tc[0]
        for k in range(1, _W):
            x, a = _better(x, a, tx[k], ta[k], True)
            n, c = _better(n, c, tn[k], tc[k], False)
        return _scan(FL, BL, m - m % _W, m, x, a, n, c)
