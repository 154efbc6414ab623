"""Cached machine code loads without numba's registry refresh, and works.

svmlab._jit loads a kernel's cached machine code through
svmlab._shipped.load_cached, which skips the typing/target registry set-up
that numba's own ``load_overload`` starts with (0.3 s of a small first fit,
docs/decisions/31f01-first-fit-in-a-fresh-process.md).  These tests run in
fresh processes (the set-up happens once per process): a first process
compiles kernels into a new cache folder; a second loads them, checks that
numba's ``BaseContext.refresh`` never ran, that the loaded code computes
what the Python bodies compute (arrays allocated by numba's runtime, hashing,
math functions, an exception raised inside compiled code), and that a
signature missing from the cache still compiles correctly in that process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

KERNELS = textwrap.dedent('''
    import numpy as np
    from svmlab._jit import njit

    @njit(cache=True)
    def alloc(x):
        out = np.empty(x.shape[0] * 2)       # NRT allocation
        for i in range(x.shape[0]):
            out[2 * i] = np.exp(x[i])        # a math function
            out[2 * i + 1] = np.sqrt(abs(x[i]) + 1.0)
        return out

    @njit(cache=True)
    def hashes(x):
        d = {}                                # a typed dict: hashing
        for i in range(x.shape[0]):
            d[hash((i, 3))] = x[i]
        s = 0.0
        for k in d:
            s += d[k]
        return s, hash((x.shape[0], 7))

    @njit(cache=True)
    def strhash(n):
        return hash("ab" * n)                # a str's hash: the hash secret's symbols

    @njit(cache=True)
    def checked(x):
        if x[0] < 0:
            raise ValueError("negative first value")
        return x.sum()

    @njit  # never cached: compiled in every process, linking alloc's library
    def caller(x):
        return alloc(x)[::2].sum() + 1.0
''')

DRIVER = textwrap.dedent('''
    import json, sys
    import numpy as np
    from numba.core import base
    calls = []
    orig = base.BaseContext.refresh
    def refresh(self):
        calls.append(1)
        return orig(self)
    base.BaseContext.refresh = refresh
    import llvmlite.binding as ll
    parses = []
    orig_parse = ll.parse_bitcode
    def parse_bitcode(*a, **kw):
        parses.append(1)
        return orig_parse(*a, **kw)
    ll.parse_bitcode = parse_bitcode
    import kernels_31f01 as k
    x = np.linspace(-1.0, 2.0, 7)
    out = {}
    # numba's on-disk cache of a dispatcher is made on its first use
    out["caches_pending_before"] = ["_svmlab_cache_pending" in vars(f)
                                    for f in (k.alloc, k.hashes)]
    out["alloc"] = k.alloc(x).tolist()
    out["caches_pending_after_alloc"] = ["_svmlab_cache_pending" in vars(f)
                                         for f in (k.alloc, k.hashes)]
    # numba modules the load of alloc imported, and the environments it
    # rebuilt without importing their module (globals: only __name__)
    out["arrayobj_after_alloc"] = "numba.np.arrayobj" in sys.modules
    out["hashing_after_alloc"] = "numba.cpython.hashing" in sys.modules
    cres = next(iter(k.alloc.overloads.values()))
    out["placeholder_envs"] = sorted(e.globals["__name__"] for e in (cres.referenced_envs or ())
                                     if list(e.globals) == ["__name__"])
    s, h = k.hashes(x)
    out["hashing_after_hashes"] = "numba.cpython.hashing" in sys.modules
    out["strhash"] = [k.strhash(3), hash("ababab")]
    out["hashing_after_strhash"] = "numba.cpython.hashing" in sys.modules
    out["hashes"] = [s, h]
    try:
        k.checked(x)
        out["raised"] = None
    except ValueError as e:
        out["raised"] = str(e)
    out["checked"] = k.checked(x[::-1].copy())
    out["refresh_after_loads"] = len(calls)
    out["parses_after_loads"] = len(parses)
    out["n_overloads"] = [len(k.alloc.overloads), len(k.hashes.overloads)]
    from numba.core.runtime.nrt import rtsys
    out["nrt_module_after_loads"] = bool(rtsys._init)   # numba's NRT module compiled?
    # a compilation here that links a library loaded from the cache
    out["caller"] = k.caller(x)
    out["parses_after_link"] = len(parses)
    out["nrt_module_after_link"] = bool(rtsys._init)
    if sys.argv[1] == "load":
        # a signature that is not cached (int64, and large: compiled here)
        xi = np.arange(6000, dtype=np.int64)
        # (numba's exp is libm's, NumPy's its own: equal to a few ulps)
        out["int_alloc_ok"] = bool(np.allclose(
            k.alloc(xi), k.alloc.py_func(xi), rtol=1e-14, atol=0))
        out["refresh_after_compile"] = len(calls)
    print("RESULT" + json.dumps(out))
''')


def _run(tmp_path, phase, mode):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), ROOT]),
               NUMBA_CACHE_DIR=str(tmp_path / "cache"), SVMLAB_JIT=mode,
               SVMLAB_PROGRESS="0", SVMLAB_SHIPPED="0")
    p = subprocess.run([sys.executable, str(tmp_path / "driver.py"), phase], env=env,
                       capture_output=True, text=True, timeout=600, cwd=str(tmp_path))
    assert p.returncode == 0, p.stderr[-3000:]
    line = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULT")][-1]
    return json.loads(line[len("RESULT"):])


def test_cached_code_loads_without_refresh_and_computes_the_same(tmp_path):
    (tmp_path / "kernels_31f01.py").write_text(KERNELS)
    (tmp_path / "driver.py").write_text(DRIVER)
    built = _run(tmp_path, "build", "eager")      # compiles into the new cache
    assert built["refresh_after_loads"] >= 1      # numba's compile refreshed
    loaded = _run(tmp_path, "load", "auto")       # a fresh process: loads it

    # nothing was compiled before the uncached signature: all came from the
    # cache, through svmlab's loader, which never refreshed the context
    assert loaded["refresh_after_loads"] == 0
    assert loaded["n_overloads"] == [1, 1]

    # the Python bodies give the reference values
    import numpy as np

    x = np.linspace(-1.0, 2.0, 7)
    ref = np.empty(14)
    ref[0::2] = np.exp(x)
    ref[1::2] = np.sqrt(np.abs(x) + 1.0)
    np.testing.assert_allclose(loaded["alloc"], ref, rtol=1e-15)
    assert loaded["alloc"] == built["alloc"]
    assert loaded["hashes"][0] == float(np.sum(x))   # distinct keys: every value summed
    assert loaded["hashes"] == built["hashes"]       # same hash secret as the compile
    assert loaded["raised"] == "negative first value"
    assert loaded["checked"] == built["checked"]

    # a signature missing from the cache compiles here, correctly, and that
    # compile does the registry set-up numba's compiler needs
    assert loaded["int_alloc_ok"] is True
    assert loaded["refresh_after_compile"] >= 1


def test_cached_code_parses_its_linking_bitcode_only_when_linked(tmp_path):
    """Loading cached machine code skips the parse of the LLVM bitcode kept
    beside it (docs/decisions/33g01-fresh-process-fixed-costs.md); a later
    compilation that calls a loaded kernel parses it then and links it, and
    computes what the Python bodies compute."""
    import numpy as np

    (tmp_path / "kernels_31f01.py").write_text(KERNELS)
    (tmp_path / "driver.py").write_text(DRIVER)
    _run(tmp_path, "build", "eager")
    loaded = _run(tmp_path, "load", "auto")
    assert loaded["refresh_after_loads"] == 0 and loaded["n_overloads"] == [1, 1]
    if sys.platform.startswith("linux"):  # ELF object code: the lazy path
        assert loaded["parses_after_loads"] == 0          # numba's own load parsed 3
    # linking alloc's loaded library into caller parsed its bitcode
    assert loaded["parses_after_link"] >= loaded["parses_after_loads"] + 1
    x = np.linspace(-1.0, 2.0, 7)
    assert loaded["caller"] == pytest.approx(float(np.exp(x).sum()) + 1.0, rel=1e-14)


def test_cached_code_loads_without_importing_numbas_implementation_modules(tmp_path):
    """Loading cached machine code rebuilds the environments of numba's own
    implementation modules (``numba.np.arrayobj``, ...) without importing
    them, registers the NRT's C functions without compiling numba's NRT
    module, and imports the hash secret's module only for a kernel whose
    object code needs its symbols
    (docs/decisions/34g01-first-fit-imports.md); the loaded code computes
    what it computed when compiled, and a later compilation linking it works."""
    import numpy as np

    (tmp_path / "kernels_31f01.py").write_text(KERNELS)
    (tmp_path / "driver.py").write_text(DRIVER)
    built = _run(tmp_path, "build", "eager")
    loaded = _run(tmp_path, "load", "auto")
    assert loaded["refresh_after_loads"] == 0 and loaded["n_overloads"] == [1, 1]
    assert loaded["alloc"] == built["alloc"] and loaded["hashes"] == built["hashes"]
    assert loaded["raised"] == "negative first value"
    # a str's hash reads the hash secret: linked, and the value is Python's
    assert loaded["strhash"][0] == loaded["strhash"][1]
    assert loaded["hashing_after_strhash"] is True
    if sys.platform.startswith("linux"):  # ELF object code: the lazy path
        assert "numba.np.arrayobj" in loaded["placeholder_envs"]
        assert loaded["arrayobj_after_alloc"] is False
        assert loaded["hashing_after_alloc"] is False
        assert loaded["hashing_after_hashes"] is False  # int keys: no secret needed
        # NRT arrays made and freed by loaded code, without numba's NRT module
        assert loaded["nrt_module_after_loads"] is False
    assert loaded["nrt_module_after_link"] is True     # the compilation built it
    x = np.linspace(-1.0, 2.0, 7)
    assert loaded["caller"] == pytest.approx(float(np.exp(x).sum()) + 1.0, rel=1e-14)
    # each dispatcher's cache object was made when it was first called
    assert loaded["caches_pending_before"] == [True, True]
    assert loaded["caches_pending_after_alloc"] == [False, True]
