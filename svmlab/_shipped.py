"""Machine code shipped inside the package: a fresh install fits at compiled
speed at once.

The problem
-----------
numba compiles svmlab's kernels on first use and keeps the machine code in
its on-disk cache (``cache=True``).  An installed wheel starts with that
cache empty, so every new environment (a Colab session, a new venv, a CI
run) pays minutes of compilation in its first fits.  numba's cache cannot
simply be copied into the wheel, for two reasons:

* its location is derived from the absolute path of the source file
  (:envvar:`NUMBA_CACHE_DIR` plus a hash of the directory), which an install
  changes;
* every entry's index key contains the exact CPU of the machine that
  compiled it (``codegen.magic_tuple()``: triple, host CPU name, host
  feature string), so code built on one x86-64 machine is never found on
  another.

The contract
------------
A wheel built by ``setup.py`` contains ``svmlab/_machine_code/``: numba
cache entries of every kernel that :func:`svmlab.warm_up` and the sizes
users start with (:data:`BUILD_FITS`) compile, built for the portable target
:data:`PORTABLE_CPU` with exactly :data:`PORTABLE_FEATURES`, plus
``manifest.json``.  On import of a kernel module, each svmlab dispatcher's
cache (:func:`attach`) first looks an overload up in that folder, under the
*portable* key (the manifest's target instead of the host's), then falls back
to numba's own cache in the user-writable folder (host-tuned code, compiled
and saved as before).  The shipped folder is read only when all of this holds
(:func:`status`):

* the manifest's numba version, Python tag and target triple are this
  process's;
* the host CPU has every feature of :data:`PORTABLE_FEATURES` (else the code
  could stop on an illegal instruction);
* the SHA-256 of the package's ``.py`` files that the build imported (the
  manifest lists them) equals the manifest's (:func:`source_hash`): the
  shipped code is the code of these sources, and an edited checkout never
  loads stale kernels.  This is stricter than numba's own per-file stamp on
  purpose: numba's key ignores the sources of the kernels a kernel calls
  (their code is inlined or linked into its machine code).

Otherwise nothing changes: the dispatchers keep numba's cache.

``SVMLAB_SHIPPED=0`` turns the shipped folder off: set before ``import
svmlab``, no dispatcher is attached; set later (``monkeypatch.setenv`` in a
test), every load from then on skips the shipped folder, so a kernel that is
not yet in memory compiles (or comes from numba's cache) as without a
store.  Tests that exercise compilation set it, since an editable install
builds the store in the checkout (docs/decisions/28a01-editable-install-builds-machine-code.md).

Building (:func:`svmlab._shipped_build.build`, run by ``setup.py``'s
``build_py`` step for a wheel and by the build backend's ``build_editable``
for ``pip install -e``, in worker processes with
``NUMBA_CPU_NAME``/``NUMBA_CPU_FEATURES`` set to the portable target and
``SVMLAB_SHIP_BUILD`` naming each one's staging folder): every compilation
in such a process is saved to its staging folder under its portable key.

Why ``x86-64-v3`` (AVX2, FMA, BMI2: Intel Haswell 2013+, AMD Excavator/Zen
2015+, every current cloud and Colab machine) and not plain ``x86-64``: the
kernels' row loops are vectorised, and the 4-lane double vectors of
:mod:`svmlab.smo._simd` need AVX for one instruction per vector.  The
measurement against host-tuned code is in
``docs/decisions/27a01-shipped-machine-code.md``.

Private numba API
-----------------
numba's cache classes are not public.  Every use of them is in this module
and listed in :data:`INTERNALS`; :func:`check_internals` says which one is
missing or changed (``tests/test_shipped_cache.py`` calls it), and
``pyproject.toml`` pins the numba range this was tested with.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import pickle
import struct
import sys

__all__ = ["status", "attach", "load_cached", "source_hash", "check_internals", "PORTABLE_CPU",
           "PORTABLE_FEATURES", "MACHINE_CODE_DIR"]

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
#: the folder a wheel ships (absent in a source checkout unless built there)
MACHINE_CODE_DIR = os.path.join(PACKAGE_DIR, "_machine_code")
MANIFEST = "manifest.json"
#: the portable target of the shipped code (LLVM's name for x86-64 level 3)
PORTABLE_CPU = "x86-64-v3"
#: exactly the features x86-64-v3 defines (psABI); the host must have all
PORTABLE_FEATURES = ("+64bit,+avx,+avx2,+bmi,+bmi2,+cmov,+crc32,+cx16,+cx8,+f16c,+fma,+fxsr,"
                     "+lzcnt,+mmx,+movbe,+popcnt,+sahf,+sse,+sse2,+sse3,+sse4.1,+sse4.2,"
                     "+ssse3,+xsave")
#: where a build writes (set by setup.py in the building process only)
BUILD_ENV = "SVMLAB_SHIP_BUILD"

#: numba internals this module relies on: (class path, methods) ...
INTERNALS = (
    ("numba.core.caching.FunctionCache", ("_index_key", "_load_overload", "_save_overload")),
    ("numba.core.caching.IndexDataCacheFile", ("load", "save", "_load_index", "_save_index",
                                               "_data_name", "_data_path")),
    ("numba.core.caching.CompileResultCacheImpl", ("filename_base", "rebuild", "reduce",
                                                   "check_cachable")),
    ("numba.core.codegen.CPUCodegen", ("magic_tuple",)),
    # load_cached: numba's load_overload without the typing/target refresh
    ("numba.core.caching.FunctionCache", ("load_overload", "_guard_against_spurious_io_errors")),
    ("numba.core.runtime.nrt.rtsys", ("initialize", "_init")),
    ("numba.core.runtime._nrt_python", ("c_helpers", "memsys_enable_stats")),
    ("numba.cpython.hashing._Py_HashSecret_t", ()),
    # load_cached: a cached library's linking bitcode parsed when first needed
    ("numba.core.codegen.JITCodeLibrary", ("_unserialize", "_get_module_for_linking",
                                           "enable_object_caching", "_set_compiled_object",
                                           "_finalize_final_module")),
    ("numba.core.codegen.JITCPUCodegen", ("unserialize_library", "create_library",
                                          "_library_class")),
    # load_cached: environments of numba's own modules rebuilt without importing them
    ("numba.core.caching.IndexDataCacheFile", ("_load_data", "_data_path")),
    ("numba.core.environment", ("_rebuild_env", "lookup_environment", "Environment")),
    ("numba.core.environment.Environment", ("_memo", "can_cache")),
)
#: ... and instance attributes: of a cached dispatcher's FunctionCache
CACHE_ATTRS = ("_impl", "_py_func", "_enabled", "_cache_file")
#: ... and of its IndexDataCacheFile
FILE_ATTRS = ("_cache_path",)


def check_internals():
    """The numba internals this module uses (:data:`INTERNALS`,
    :data:`CACHE_ATTRS`, :data:`FILE_ATTRS`, a dispatcher's ``_cache``) that
    are missing or changed, as a list of messages (empty when all are
    there), including a check that a cache index key still has numba's shape
    ``(signature, codegen.magic_tuple(), hashes)``."""
    import importlib

    problems = []
    for path, attrs in INTERNALS:
        mod, name = path.rsplit(".", 1)
        try:
            obj = getattr(importlib.import_module(mod), name)
        except (ImportError, AttributeError):
            problems.append(f"{path} is gone")
            continue
        problems += [f"{path}.{a} is gone" for a in attrs if not hasattr(obj, a)]
    if problems:
        return problems
    import numba
    from numba import types
    from numba.core import caching

    @numba.njit(cache=True)
    def probe(x):  # pragma: no cover - compiled
        return x + 1

    cache = getattr(probe, "_cache", None)
    if type(cache) is not caching.FunctionCache:
        return [f"a cached dispatcher's _cache is {type(cache).__name__}, "
                "not numba.core.caching.FunctionCache"]
    problems += [f"numba.core.caching.FunctionCache instance attribute {a} is gone"
                 for a in CACHE_ATTRS if not hasattr(cache, a)]
    problems += [f"numba.core.caching.IndexDataCacheFile instance attribute {a} is gone"
                 for a in FILE_ATTRS if not hasattr(getattr(cache, "_cache_file", None), a)]
    if problems:
        return problems
    # load_cached links cached code against the symbols these register
    import llvmlite.binding as ll

    codegen = probe.targetctx.codegen()
    if not isinstance(getattr(getattr(codegen, "_engine", None), "_defined_symbols", None), set):
        return ["numba's JIT codegen has no _engine._defined_symbols set"]
    probe(1)  # compiled here, and saved to numba's cache
    del probe.overloads[(types.int64,)]
    cres = load_cached(probe._cache, (types.int64,), probe.targetctx)
    for symbol in ("NRT_MemInfo_alloc_safe_aligned", "_numba_hashsecret_siphash_k0"):
        if not ll.address_of_symbol(symbol):
            problems.append(f"LLVM symbol {symbol} is not registered after "
                            "rtsys.initialize and importing numba.cpython.hashing")
    if cres is None:
        problems.append("the probe compiled into numba's cache did not load back")
    elif type(cres.library) is _LazyLinkLibrary:
        # the names read from the object code are the linking bitcode's
        # definitions, and the engine knows them
        lib = cres.library
        mod = lib._get_module_for_linking()
        defined = {g.name for gs in (mod.functions, mod.global_variables) for g in gs
                   if not g.is_declaration}
        if lib._svmlab_symbols != defined:
            problems.append("the object code's defined symbols differ from its linking "
                            f"bitcode's: {sorted(lib._svmlab_symbols ^ defined)[:5]}")
        if not defined <= codegen._engine._defined_symbols:
            problems.append("a loaded library's symbols are not in _engine._defined_symbols")
    elif sys.platform.startswith("linux"):
        problems.append("a cached library loaded on Linux did not take the lazy-bitcode path "
                        f"({type(cres.library).__name__})")
    if type(cache._cache_file) is not _EnvDeferringFile:
        problems.append("load_cached did not read the probe's entry through _EnvDeferringFile")
    # the pickled environments call _rebuild_env(modname, consts, env_name)
    env = _environment.Environment({"__name__": "numba.np.arrayobj"})
    env.env_name = "svmlab_probe_env"
    red = env.__reduce__()
    if red[0] is not _environment._rebuild_env or len(red[1]) != 3 \
            or red[1][0] != "numba.np.arrayobj":
        problems.append("numba.core.environment.Environment no longer pickles as "
                        "_rebuild_env(modname, consts, env_name)")
    key = cache._index_key((types.int64,), codegen)
    if not (isinstance(key, tuple) and len(key) == 3 and key[1] == codegen.magic_tuple()):
        problems.append("numba.core.caching.Cache._index_key no longer returns "
                        "(signature, codegen.magic_tuple(), hashes)")
    return problems


# --------------------------------------------------------------------------
# What is shipped, and whether it may be used here

def source_hash(root=PACKAGE_DIR, files=None):
    """SHA-256 (hex) of the ``.py`` files ``files`` (paths relative to
    ``root``, ``/``-separated; default: every one under ``root``), over their
    names and bytes in sorted order; a missing file counts as empty."""
    if files is None:
        files = []
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if d not in ("__pycache__", "_machine_code")]
            files += [os.path.relpath(os.path.join(dirpath, f), root).replace(os.sep, "/")
                      for f in filenames if f.endswith(".py")]
    h = hashlib.sha256()
    for rel in sorted(files):
        try:
            with open(os.path.join(root, *rel.split("/")), "rb") as fh:
                data = fh.read()
        except OSError:
            data = b""
        h.update(f"{rel}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()


def _loaded_sources():
    """The package's source files imported in this process (relative paths):
    every module a shipped kernel's code can depend on."""
    files = set()
    for name, mod in list(sys.modules.items()):
        f = getattr(mod, "__file__", None)
        if (name == "svmlab" or name.startswith("svmlab.")) and f and f.endswith(".py"):
            rel = os.path.relpath(os.path.abspath(f), PACKAGE_DIR)
            if not rel.startswith(".."):
                files.add(rel.replace(os.sep, "/"))
    return sorted(files)


def _python_tag():
    return f"py{sys.version_info[0]}{sys.version_info[1]}{getattr(sys, 'abiflags', '')}"


def portable_magic(triple=None):
    """The ``magic_tuple`` of code compiled for the portable target."""
    if triple is None:
        from numba.core.registry import cpu_target

        triple = cpu_target.target_context.codegen().magic_tuple()[0]
    return (triple, PORTABLE_CPU, PORTABLE_FEATURES)


def host_has_features(features=PORTABLE_FEATURES):
    """Whether this CPU has every ``+feature`` of ``features``."""
    import llvmlite.binding as ll

    try:
        host = ll.get_host_cpu_features()
    except RuntimeError:
        return False
    return all(host.get(f[1:], False) for f in features.split(",") if f.startswith("+"))


@functools.lru_cache(maxsize=None)
def status(folder=None):
    """``(usable, reason, manifest)`` for the shipped folder ``folder``
    (default :data:`MACHINE_CODE_DIR`): whether this process loads from it,
    and why not."""
    folder = folder or MACHINE_CODE_DIR
    if os.environ.get("SVMLAB_SHIPPED", "1") == "0":
        return False, "SVMLAB_SHIPPED=0", None
    path = os.path.join(folder, MANIFEST)
    try:
        with open(path, encoding="utf-8") as f:
            man = json.load(f)
    except FileNotFoundError:
        return False, f"no shipped machine code ({path} absent: a source checkout or sdist)", None
    except (OSError, ValueError) as e:
        return False, f"unreadable {path}: {e}", None
    import numba

    if man.get("numba") != numba.__version__:
        return False, f"built with numba {man.get('numba')}, this is {numba.__version__}", man
    if man.get("python") != _python_tag():
        return False, f"built for {man.get('python')}, this is {_python_tag()}", man
    magic = tuple(man.get("magic") or ())
    if magic != portable_magic():
        return False, f"built for target {magic[:2]}, portable here is {portable_magic()[:2]}", man
    if not host_has_features(magic[2]):
        return False, f"this CPU lacks a feature of {magic[1]}", man
    if man.get("source_hash") != source_hash(PACKAGE_DIR, man.get("sources") or None):
        return False, "the package's sources differ from those the code was built from", man
    return True, (f"{man.get('entries', '?')} overloads for {magic[1]}"
                  + ("" if man.get("complete", True) else
                     f" (partial build: {', '.join(man.get('stages') or ['nothing'])})")), man


def _build_folder():
    return os.environ.get(BUILD_ENV) or None


# --------------------------------------------------------------------------
# The cache

from numba.core import caching as _caching  # noqa: E402  (private API, see INTERNALS)


class _Magic:
    """A stand-in codegen for :meth:`Cache._index_key`: only its magic tuple
    is read."""

    def __init__(self, magic):
        self._magic = magic

    def magic_tuple(self):
        return self._magic


class ShippedCache(_caching.FunctionCache):
    """numba's ``FunctionCache`` with the shipped folder in front: loads look
    there first under the portable key, then in numba's cache (host code);
    saves go to numba's cache, or, in a build, to the shipped folder."""

    def _shipped_file(self):
        f = self.__dict__.get("_svmlab_shipped_file")
        if f is None:
            folder, stamp = self._svmlab_store
            # one folder per module: the module's name does not depend on
            # where the package is installed (numba's folders do)
            sub = self._py_func.__module__
            f = _EnvDeferringFile(cache_path=os.path.join(folder, sub),
                                  filename_base=self._impl.filename_base,
                                  source_stamp=stamp)
            self._svmlab_shipped_file = f
        return f

    def _load_overload(self, sig, target_context):
        if not self._enabled:
            return None
        if os.environ.get("SVMLAB_SHIPPED", "1") == "0" and not _build_folder():
            # switched off after this dispatcher was attached: numba's cache only
            return super()._load_overload(sig, target_context)
        key = self._index_key(sig, _Magic(self._svmlab_magic))
        data = self._shipped_file().load(key)
        if data is not None:
            return self._impl.rebuild(target_context, data)
        if _build_folder():
            return None  # a build compiles what is not shipped yet
        return super()._load_overload(sig, target_context)

    def _save_overload(self, sig, data):
        if not _build_folder():
            return super()._save_overload(sig, data)
        if not self._enabled or not self._impl.check_cachable(data):
            return None
        magic = data.codegen.magic_tuple()
        if magic != self._svmlab_magic:
            raise RuntimeError(f"svmlab shipped build: compiled for {magic[:2]}, expected "
                               f"{self._svmlab_magic[:2]}: set NUMBA_CPU_NAME={PORTABLE_CPU} "
                               f"and NUMBA_CPU_FEATURES={PORTABLE_FEATURES}")
        f = self._shipped_file()
        os.makedirs(f._cache_path, exist_ok=True)
        key = self._index_key(sig, _Magic(magic))
        f.save(key, self._impl.reduce(data))
        _saved[0] += 1
        return None


_saved = [0]


@functools.lru_cache(maxsize=None)
def _store():
    """(folder, stamp, magic) of the store this process reads (and, in a
    build, writes), or None when there is none."""
    build = _build_folder()
    if build:
        return build, _build_stamp(), portable_magic()
    ok, _, man = status()
    if not ok:
        return None
    return MACHINE_CODE_DIR, man["stamp"], tuple(man["magic"])


@functools.lru_cache(maxsize=None)
def _build_stamp():
    """The stamp of every index a build writes (numba's is the source file's
    hash; here the folder is used whole or not at all, by the manifest's
    hash of the sources, so one random stamp per build suffices)."""
    import uuid

    # the workers of one parallel build share the parent's stamp (merge)
    return os.environ.get("SVMLAB_SHIP_STAMP") or uuid.uuid4().hex


def attach(disp, store=None):
    """Give the dispatcher ``disp`` (``cache=True``) the shipped folder in
    front of its numba cache, when there is a usable one (or in a build);
    otherwise leave it as it is.  Returns ``disp``.  ``store`` (tests):
    ``(folder, stamp, magic)`` instead of the package's own."""
    cache = getattr(disp, "_cache", None)
    if type(cache) is not _caching.FunctionCache:
        return disp
    store = store or _store()
    if store is None:
        return disp
    cache.__class__ = ShippedCache
    cache._svmlab_store = store[:2]
    cache._svmlab_magic = store[2]
    return disp


# --------------------------------------------------------------------------
# Loading cached machine code without numba's one-time registry set-up

def load_cached(cache, sig, target_context):
    """The compile result of ``sig`` from the dispatcher cache ``cache``
    (numba's or :class:`ShippedCache`), or None: what numba's
    ``FunctionCache.load_overload`` does, without its first step.

    The problem: numba's ``load_overload`` starts with
    ``target_context.refresh()``, which on its first call in a process
    imports and installs every typing and lowering registry numba has (NumPy,
    linear algebra, random, typed containers, jitclass, ...): about 0.3 s of
    CPU, most of a small first fit, and only needed to *compile*.  Machine
    code read back from the cache needs only what its object code links
    against: the symbols numba registers with LLVM.  Those are the C helpers
    and math functions (registered when the target context is created), the
    NRT's C functions (:func:`_register_nrt_symbols`, the part of
    :meth:`rtsys.initialize` that cached code needs; numba's own unserialize
    path gets the whole of it), and the hash secret that
    :mod:`numba.cpython.hashing` registers on import (a kernel hashing a
    string links against it).
    Parallel kernels carry their own re-initialisation (``reload_init``),
    which numba's rebuild runs.  A compilation later in the process (a
    signature not in the cache) refreshes the context itself
    (``numba.core.compiler.compile_extra``), so nothing is skipped for it.

    The libraries rebuilt by this load skip the parse of their linking
    bitcode too (:func:`_unserialize_lazily`): parsed when a compilation
    links them, not before; :mod:`numba.cpython.hashing` is imported only
    when a library's object code needs a symbol that is not registered yet
    (the hash secret).  The environments of numba's own modules referenced by
    the cached code are rebuilt without importing those modules
    (:func:`_rebuild_env_deferred`)."""
    codegen = target_context.codegen()
    lazy = (type(codegen).unserialize_library is _JITCPUCodegen.unserialize_library
            and "unserialize_library" not in vars(codegen))
    if lazy:
        _register_nrt_symbols()
    else:  # numba's own unserialize: no symbol table read here to decide
        from numba.core.runtime.nrt import rtsys

        rtsys.initialize(target_context)
        import numba.cpython.hashing  # noqa: F401  (registers _numba_hashsecret_* symbols)
    f = getattr(cache, "_cache_file", None)
    if type(f) is _caching.IndexDataCacheFile:
        f.__class__ = _EnvDeferringFile  # its data read by _load_data_deferring_envs
    if lazy:  # the libraries this load rebuilds parse their bitcode when linked
        codegen.unserialize_library = functools.partial(_unserialize_lazily, codegen)
    try:
        with cache._guard_against_spurious_io_errors():
            return cache._load_overload(sig, target_context)
    finally:
        if lazy:
            del codegen.unserialize_library


# --------------------------------------------------------------------------
# Environments of numba's own modules, rebuilt without importing them

from numba.core import environment as _environment  # noqa: E402  (private API, see INTERNALS)


def _rebuild_env_deferred(modname, consts, env_name):
    """numba's ``environment._rebuild_env`` (what a cached entry's pickled
    environments call when unpickled), except that the environment of a
    numba module not imported yet gets a globals dict holding only its
    ``__name__`` instead of importing the module for its ``__dict__``.

    The problem: a cached kernel's entry carries the environment of every
    function compiled into it, NumPy and linear-algebra implementations from
    numba's own modules included (``numba.np.arrayobj``, ``numba.np.linalg``,
    ``numba.cpython.unicode``, ...), and numba's rebuild imports each
    module to take its globals: ``numba.np.arrayobj`` alone imports
    ``numba.cpython.charseq`` and ``unicode``, 0.02-0.03 s of a first fit
    (docs/decisions/34g01-first-fit-imports.md).  An environment's globals are
    read only by object-mode code (numba's ``PyLower``); nopython code reads
    its ``consts``, which are kept.  numba's own implementations are always
    nopython, so the placeholder is never read; it keeps ``__name__``, so the
    environment still pickles the same way (``can_cache``, ``__reduce__``)
    when a later compilation links the library and saves it.  Modules
    already imported, and every module outside numba, take numba's path."""
    env = _environment.lookup_environment(env_name)
    if env is not None:
        return env
    if not (isinstance(modname, str) and modname.startswith("numba.")
            and modname not in sys.modules):
        return _environment._rebuild_env(modname, consts, env_name)
    env = _environment.Environment({"__name__": modname})
    env.consts[:] = consts
    env.env_name = env_name
    _environment.Environment._memo[env_name] = env
    return env


class _EnvUnpickler(pickle.Unpickler):
    """pickle's unpickler with :func:`_rebuild_env_deferred` for numba's
    ``_rebuild_env``."""

    def find_class(self, module, name):
        if module == "numba.core.environment" and name == "_rebuild_env":
            return _rebuild_env_deferred
        return super().find_class(module, name)


class _EnvDeferringFile(_caching.IndexDataCacheFile):
    """numba's cache file whose entries are unpickled with
    :class:`_EnvUnpickler` (numba's ``_load_data`` with another unpickler;
    index, saving and naming unchanged)."""

    def _load_data(self, name):
        with open(self._data_path(name), "rb") as fh:
            data = fh.read()
        return _EnvUnpickler(io.BytesIO(data)).load()


# --------------------------------------------------------------------------
# A cached library without the parse of its linking bitcode

from numba.core import codegen as _codegen  # noqa: E402  (private API, see INTERNALS)

_JITCPUCodegen = _codegen.JITCPUCodegen


class _LazyLinkLibrary(_codegen.JITCodeLibrary):
    """numba's JIT code library rebuilt from cached object code whose LLVM
    bitcode (kept for linking it into later compilations) is parsed when a
    compilation first links it, not when it is loaded."""

    def _get_module_for_linking(self):
        bitcode = self.__dict__.pop("_svmlab_bitcode", None)
        if bitcode is not None:
            import llvmlite.binding as ll

            self._shared_module = ll.parse_bitcode(bitcode)
        return super()._get_module_for_linking()


def _unserialize_lazily(codegen, state):
    """What numba's ``CPUCodeLibrary._unserialize`` does for a library cached
    as object code, less the parse of its linking bitcode.

    The problem: loading a cached kernel parsed the LLVM bitcode stored
    beside its object code (``ll.parse_bitcode``) and walked every function
    and global of it for their names (``JitEngine._load_defined_symbols``):
    30-60 % of a load, 0.03-0.08 s of a small first fit
    (docs/decisions/33g01-fresh-process-fixed-costs.md).  The machine code
    needs neither: the bitcode is only read when a later compilation in this
    process links the library (numba's ``_get_module_for_linking``), and the
    names are those the object code defines, read here from its ELF symbol
    table (:func:`_elf_defined_symbols`; :func:`check_internals` checks that
    the two agree).  Anything else (not object code, not ELF, another
    library class) takes numba's own path."""
    name, kind, data = state
    if kind == "object" and codegen._library_class is _codegen.JITCodeLibrary:
        object_code, bitcode = data
        table = _elf_symbols(object_code)
        if table is not None:
            symbols, undefined = table
            _register_missing(codegen, undefined)
            lib = codegen.create_library(name)
            lib.__class__ = _LazyLinkLibrary
            lib._svmlab_bitcode = bitcode
            lib._svmlab_symbols = symbols
            lib.enable_object_caching()
            lib._set_compiled_object(object_code)
            lib._finalize_final_module()
            codegen._engine._defined_symbols |= symbols
            return lib
    # numba's own path: what load_cached does for it (the NRT module compiled)
    from numba.core.registry import cpu_target
    from numba.core.runtime.nrt import rtsys

    rtsys.initialize(cpu_target.target_context)
    import numba.cpython.hashing  # noqa: F401  (registers _numba_hashsecret_* symbols)

    return _JITCPUCodegen.unserialize_library(codegen, state)


_nrt_symbols_registered = []


def _register_nrt_symbols():
    """Register the NRT's C functions with LLVM (``NRT_MemInfo_alloc``,
    ``NRT_Allocate``, ...): what numba's ``rtsys.initialize`` does before it
    compiles its own small NRT module, without that compilation.

    Why not ``rtsys.initialize``: its LLVM compile of the NRT module
    (atomic reference counts, ``NRT_MemInfo_data_fast``) was 0.024 s of a
    0.065 s first fit (docs/decisions/34g01-first-fit-imports.md), and code
    loaded from the cache does not use that module: numba links it into
    every library it compiles, so each cached object carries its own copy
    and refers only to the C functions registered here.  ``rtsys`` stays
    uninitialised, so the first compilation in the process (numba's
    ``load_additional_registries``) runs the whole of it, module included."""
    from numba.core.runtime.nrt import rtsys

    if rtsys._init or _nrt_symbols_registered:
        return
    import llvmlite.binding as ll
    from numba.core import config
    from numba.core.runtime import _nrt_python as _nrt

    if config.NRT_STATS:  # pragma: no cover - a debugging switch
        _nrt.memsys_enable_stats()
    for py_name, address in _nrt.c_helpers.items():
        ll.add_symbol(py_name if py_name.startswith("_") else "NRT_" + py_name, address)
    _nrt_symbols_registered.append(True)


def _register_missing(codegen, undefined):
    """Import :mod:`numba.cpython.hashing` (whose import registers the hash
    secret's symbols with LLVM) when object code refers to a symbol that
    neither the engine nor the process provides yet: the one import of
    numba's registry set-up that cached code may link against
    (docs/decisions/31f01-first-fit-in-a-fresh-process.md); a kernel that
    hashes nothing does not pay it.  Should a symbol still be missing (a
    numba that registers more symbols on import), numba's whole registry
    set-up runs, as its own load would have done: linking against a missing
    symbol would crash the process."""
    import llvmlite.binding as ll

    known = codegen._engine._defined_symbols

    def missing():
        return [u for u in undefined if u not in known and not ll.address_of_symbol(u)]

    if not missing():
        return
    import numba.cpython.hashing  # noqa: F401

    if missing():  # pragma: no cover - not with the pinned numba
        from numba.core.registry import cpu_target

        cpu_target.target_context.refresh()


_ELF64_SECTION = struct.Struct("<IIQQQQIIQQ")
_ELF64_SYMBOL = struct.Struct("<IBBHQQ")


def _elf_defined_symbols(obj):
    """The names of the symbols a little-endian 64-bit ELF object ``obj``
    (bytes) defines (every binding; not section or file symbols), or None
    when ``obj`` is not such an object."""
    table = _elf_symbols(obj)
    return None if table is None else table[0]


def _elf_symbols(obj):
    """``(defined, undefined)``: the names of the symbols a little-endian
    64-bit ELF object ``obj`` (bytes) defines (every binding; not section or
    file symbols) and those it refers to without defining them, or None
    when ``obj`` is not such an object."""
    if len(obj) < 64 or obj[:4] != b"\x7fELF" or obj[4] != 2 or obj[5] != 1:
        return None
    shoff = int.from_bytes(obj[0x28:0x30], "little")
    shentsize, shnum = struct.unpack_from("<HH", obj, 0x3A)
    if shentsize != _ELF64_SECTION.size or shnum == 0 \
            or shoff + shnum * shentsize > len(obj):
        return None
    sections = [_ELF64_SECTION.unpack_from(obj, shoff + i * shentsize) for i in range(shnum)]
    names, undefined = set(), set()
    for _, sh_type, _, _, off, size, link, _, _, entsize in sections:
        if sh_type != 2:  # SHT_SYMTAB
            continue
        if entsize != _ELF64_SYMBOL.size or link >= shnum:
            return None
        strtab = sections[link][4]
        for st_name, st_info, _, st_shndx, _, _ in _ELF64_SYMBOL.iter_unpack(
                obj[off:off + size]):
            # SHN_UNDEF: a reference, not a definition; STT_SECTION, STT_FILE
            if st_name == 0 or (st_info & 0xF) in (3, 4):
                continue
            start = strtab + st_name
            name = obj[start:obj.index(b"\0", start)].decode("utf-8", "replace")
            (undefined if st_shndx == 0 else names).add(name)
    return names, undefined
