"""numba's private API that svmlab._jit rests on is still there and behaves.

svmlab._jit (the interpreted tier, the background compiler, the guard on
cache writes) uses numba internals that numba may change in any release;
pyproject.toml pins the range this test passed on.  When a new numba changes
one of them, this test fails and names each internal that changed, with
what svmlab uses it for, instead of letting fits fail in some other way.
"""

from __future__ import annotations

import inspect
import warnings

import numba
import numpy as np

from svmlab import _jit


def _check(problems, what, use, fn):
    try:
        ok = fn()
    except Exception as exc:  # noqa: BLE001 - every failure is reported by name
        problems.append(f"{what} (used for {use}): {type(exc).__name__}: {exc}")
        return
    if ok is False:
        problems.append(f"{what} (used for {use}): changed")


def test_numba_internals_used_by_svmlab_jit_are_unchanged(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    problems = []

    # -- the dispatcher class and its miss path
    from numba.core.registry import CPUDispatcher

    def plain():
        @numba.njit(cache=False)
        def f(x):
            return x + 1
        return f

    _check(problems, "numba.core.registry.CPUDispatcher is the class numba.njit returns",
           "TieredDispatcher subclasses it", lambda: type(plain()) is CPUDispatcher)
    _check(problems, "CPUDispatcher._compile_for_args(self, *args, **kws)",
           "TieredDispatcher overrides it: numba's C dispatcher calls it on a miss",
           lambda: list(inspect.signature(CPUDispatcher._compile_for_args).parameters)
           == ["self", "args", "kws"])

    def miss_path_calls_override():
        f = plain()
        calls = []

        class Sub(CPUDispatcher):
            def _compile_for_args(self, *args, **kws):
                calls.append(args)
                return CPUDispatcher._compile_for_args(self, *args, **kws)

        f.__class__ = Sub  # reassigning a dispatcher's class (svmlab._jit.njit)
        return f(1) == 2 and f(2) == 3 and len(calls) == 1 and f(1.5) == 2.5 and len(calls) == 2

    _check(problems, "a miss calls the overridden _compile_for_args after __class__ reassignment",
           "choosing compiled or interpreted code on a miss", miss_path_calls_override)

    def miss_may_return_python_function():
        @_jit.njit(cache=False)
        def g(x):
            return x * 2.0

        old = _jit.set_mode("interpret")
        try:
            return g(np.arange(3.0)).tolist() == [0.0, 2.0, 4.0] and len(g.overloads) == 0
        finally:
            _jit.set_mode(old)

    _check(problems, "the C dispatcher calls what _compile_for_args returns",
           "running the interpreted tier on a miss", miss_may_return_python_function)

    # -- loading from numba's cache by hand (svmlab._jit._load_cached)
    def load_overload_by_hand():
        from numba.core.compiler_lock import global_compiler_lock

        src = tmp_path / "cachedmod.py"
        src.write_text("import numba\n@numba.njit(cache=True)\ndef h(x):\n    return x * 3\n")
        import importlib.util
        import sys

        spec = importlib.util.spec_from_file_location("cachedmod", src)
        m1 = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(m1)
        assert m1.h(2) == 6  # compiled and saved
        m2 = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(m2)  # a fresh dispatcher over the same cache
        d = m2.h
        sig = (d.typeof_pyval(2),)
        with global_compiler_lock:
            cres = d._cache.load_overload(sig, d.targetctx)
            assert cres is not None, "load_overload found nothing"
            assert isinstance(cres.objectmode, bool)
            d._cache_hits[sig] += 1
            d.targetctx.insert_user_function(cres.entry_point, cres.fndesc, [cres.library])
            d.add_overload(cres)
        sys.modules.pop("cachedmod", None)
        return d.overloads.get(sig) is not None and d(5) == 15 and len(d.overloads) == 1

    _check(problems, "Dispatcher._cache.load_overload(sig, targetctx), _cache_hits, "
           "targetctx.insert_user_function, add_overload, overloads, typeof_pyval, "
           "numba.core.compiler_lock.global_compiler_lock",
           "loading the background compiler's code into a dispatcher", load_overload_by_hand)

    # -- cache writes and folders (svmlab._jit._guard_cache_writes, njit's fallback)
    import numba.core.caching as caching

    _check(problems, "numba.core.caching.Cache.save_overload(self, sig, data)",
           "turning a failing cache write into a warning",
           lambda: list(inspect.signature(caching.Cache.save_overload).parameters)
           == ["self", "sig", "data"])
    _check(problems, "the type name 'NullCache' of a dispatcher without cache",
           "telling dispatchers without a cache apart",
           lambda: type(plain()._cache).__name__ == "NullCache")

    def no_locator_message():
        def refuse(self):
            raise OSError(30, "Read-only file system")
        monkeypatch.setattr(caching._CacheLocator, "ensure_cache_path", refuse)
        try:
            def k(x):
                return x
            k.__module__ = __name__
            try:
                numba.njit(cache=True)(k)
            except RuntimeError as exc:
                return "no locator available" in str(exc)
            return False
        finally:
            monkeypatch.undo()
            monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))

    _check(problems, "numba.njit(cache=True) raises RuntimeError('... no locator available "
           "...') when no cache folder is writable",
           "building kernels without an on-disk cache then", no_locator_message)

    # -- compile events (the display and the compile-mass measurements)
    def compile_events():
        from numba.core import event

        seen = []

        class L(event.Listener):
            def on_start(self, e):
                seen.append(("start", e.data["dispatcher"]))

            def on_end(self, e):
                seen.append(("end", e.data["dispatcher"]))

        f = plain()
        with event.install_listener("numba:compile", L()):
            f(1)
        return [k for k, _ in seen] == ["start", "end"] and seen[0][1] is f

    _check(problems, "numba.core.event: Listener, install_listener/register, the "
           "'numba:compile' event with data['dispatcher']",
           "counting compiled kernels (k of n) and the compile mass", compile_events)

    # -- bytecode names (svmlab._jit._unfaithful_ops, on this Python)
    def opcodes():
        def body(a, b):
            s = np.sum(a) + a.sum()
            c = a @ b
            d = np.dot(a, b)
            return np.linalg.norm(c) + s + d

        return _jit._unfaithful_ops(body.__code__) == {"sum", "@", "linalg", "norm"}

    _check(problems, "opcode names LOAD_GLOBAL, LOAD_ATTR/LOAD_METHOD and BINARY_OP '@'",
           "finding kernels whose NumPy result differs from numba's", opcodes)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert not problems, (
            f"numba {numba.__version__} changed internals svmlab._jit uses; adapt "
            "svmlab/_jit.py and the numba pin in pyproject.toml:\n  " + "\n  ".join(problems))
