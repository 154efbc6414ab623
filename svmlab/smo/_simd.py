"""First positions of the extremes of an array, eight lanes at a time.

Platt's second-choice heuristic needs, at every SMO step, the non-bound
example with the largest and the one with the smallest error.  The scan is
the hottest loop of a parked phase, and numba cannot vectorise it: LLVM
only vectorises a floating-point max/min reduction under fast-math flags on
the ``select`` instruction, which numba does not emit.  So
:func:`extremes` is written with an LLVM intrinsic over ``<4 x double>``
vectors (compare, select the value and its position per lane; two vectors
per iteration, eight lanes), which then merges the lanes with vector
compares and shuffles, without branches.  The scalar scan does the last
``m % 8`` positions.  The result is exactly that of the scalar scan, ties
included (the first position wins); ``tests/test_simd.py`` checks it
against a naive loop, with and without the JIT.

With ``NUMBA_DISABLE_JIT=1`` the same function is a plain Python loop.
"""

from __future__ import annotations

import numpy as np

from .._jit import at_numba_import, jit_disabled, njit

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


if jit_disabled():  # pragma: no cover - exercised by the no-JIT subprocess tests
    extremes = _extremes_py

else:
    _W = 8  # positions per iteration: two <4 x double> vectors, eight lanes

    @at_numba_import
    def _numba_side():
        # the intrinsic is made when numba is imported (the hand-over of
        # svmlab._jit); the interpreted tier uses _extremes_py
        global _lanes
        from llvmlite import ir
        from numba import types
        from numba.core import cgutils
        from numba.extending import intrinsic

        _F8 = types.Array(types.float64, 1, "C")

        @intrinsic
        def _lanes(typingctx, FL, BL, m):
            """Over the positions ``q < m - m % 8``: the largest ``FL - BL`` and
            its first position, the smallest ``FL + BL`` and its first position
            (-1 where none beats -inf, respectively +inf).  Eight lanes (two
            vectors per iteration, so that the compare-select chains overlap),
            merged with vector compares and shuffles: no branches."""
            if FL != _F8 or BL != _F8 or not isinstance(m, types.Integer):
                return None
            sig = types.Tuple((types.float64, types.int64, types.float64, types.int64))(FL, BL, m)

            def codegen(context, builder, signature, args):
                dbl = ir.DoubleType()
                i32 = ir.IntType(32)
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

                def pick(x0, a0, x1, a1, op):
                    # (x1, a1) if strictly better, or tied at a smaller position
                    # (unsigned: position -1, none, is never smaller)
                    take = builder.or_(builder.fcmp_ordered(op, x1, x0),
                                       builder.and_(builder.fcmp_ordered("==", x1, x0),
                                                    builder.icmp_unsigned("<", a1, a0)))
                    return builder.select(take, x1, x0), builder.select(take, a1, a0)

                def reduce(vals, poss, op):
                    x, a = pick(builder.load(vals[0]), builder.load(poss[0]),
                                builder.load(vals[1]), builder.load(poss[1]), op)
                    for mask in ([2, 3, 0, 1], [1, 0, 3, 2]):
                        mk = ir.Constant(ir.VectorType(i32, 4), mask)
                        x, a = pick(x, a, builder.shuffle_vector(x, x, mk),
                                    builder.shuffle_vector(a, a, mk), op)
                    zero = ir.Constant(i32, 0)
                    return builder.extract_element(x, zero), builder.extract_element(a, zero)

                x, a = reduce(vx, ax, ">")
                n_, c = reduce(vn, an, "<")
                return context.make_tuple(builder, signature.return_type, (x, a, n_, c))

            return sig, codegen

    @njit(cache=True, inline="always", twin=_extremes_py)
    def extremes(FL, BL, m):
        """First position of the largest ``FL - BL`` and first position of
        the smallest ``FL + BL`` over ``[0, m)``; -1 where no value beats
        -inf (respectively +inf), as in the scalar scan."""
        x, a, n, c = _lanes(FL, BL, m)
        return _scan(FL, BL, m - m % _W, m, x, a, n, c)
