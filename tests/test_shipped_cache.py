"""Shipped machine code (svmlab._shipped): code compiled for the portable
target into a shipped folder loads in another process, from another copy of
the source at another path, with an empty numba cache and the host's own CPU
key, with zero compilations; what the folder lacks compiles into numba's
cache as before; the numba internals it uses are still there."""

import json
import os
import subprocess
import sys
import textwrap

import numba
import pytest

from svmlab import _shipped, _shipped_build

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MODULE = textwrap.dedent('''
    import numba
    import numpy as np

    @numba.njit(cache=True)
    def helper(x, i):
        return x[i] * x[i]

    @numba.njit(cache=True)
    def kernel(x):
        s = 0.0
        for i in range(x.shape[0]):
            s += helper(x, i)
        return s
''')

SCRIPT = textwrap.dedent('''
    import json, os, sys
    import numpy as np
    from numba.core import event
    from svmlab import _shipped
    sys.path.insert(0, sys.argv[1])
    import shipmod
    compiled = []
    class Count(event.Listener):
        def on_start(self, e):
            compiled.append(e.data["dispatcher"].py_func.__name__)
        def on_end(self, e):
            pass
    event.register("numba:compile", Count())
    # the stamp of the shipped index: the hash of the sources (as for svmlab)
    store = (sys.argv[2], _shipped.source_hash(sys.argv[1]), tuple(_shipped.portable_magic()))
    for f in (shipmod.kernel, shipmod.helper):
        _shipped.attach(f, store=store)
    x = np.arange(5.0)
    out = {"kernel": shipmod.kernel(x), "cache_class": type(shipmod.kernel._cache).__name__}
    out["compiled_float"] = list(compiled)
    if sys.argv[3] == "int":  # a signature the shipped folder lacks
        out["kernel_int"] = int(shipmod.kernel(np.arange(5)))
    out["compiled"] = compiled
    out["magic"] = list(shipmod.kernel.targetctx.codegen().magic_tuple()[:2])
    print(json.dumps(out))
''')


def _run(tmp_path, src_dir, shipped, cache, env_extra, what="float"):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=ROOT, SVMLAB_SHIPPED="1")
    for k in ("NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES", _shipped.BUILD_ENV):
        env.pop(k, None)
    env.update(env_extra)
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(src_dir), str(shipped), what],
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _files(folder):
    return sorted(os.path.relpath(os.path.join(d, f), folder)
                  for d, _, fs in os.walk(folder) for f in fs)


def test_numba_internals_unchanged():
    problems = _shipped.check_internals()
    assert not problems, (
        "svmlab._shipped relies on numba internals that changed in numba "
        f"{numba.__version__}: {problems}; adapt svmlab/_shipped.py and the numba pin in "
        "pyproject.toml")


def test_pinned_numba_range_covers_this_numba():
    import tomllib

    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        deps = tomllib.load(f)["project"]["dependencies"]
    (pin,) = [d for d in deps if d.startswith("numba")]
    from packaging.specifiers import SpecifierSet

    spec = SpecifierSet(pin[len("numba"):])
    assert "<" in str(spec), f"numba is not pinned to a tested range: {pin}"
    assert numba.__version__ in spec, f"numba {numba.__version__} is outside the pin {pin}"


def test_portable_code_loads_elsewhere_without_compiling(tmp_path):
    build_src, user_src = tmp_path / "build_src", tmp_path / "site" / "pkg"
    shipped = tmp_path / "shipped"
    for d in (build_src, user_src):
        d.mkdir(parents=True)
    (build_src / "shipmod.py").write_text(MODULE)
    # the build: portable target, an own numba cache, saves go to the shipped folder
    build_cache = tmp_path / "build_cache"
    built = _run(tmp_path, build_src, shipped, build_cache, {
        _shipped.BUILD_ENV: str(shipped), "NUMBA_CPU_NAME": _shipped.PORTABLE_CPU,
        "NUMBA_CPU_FEATURES": _shipped.PORTABLE_FEATURES})
    assert built["magic"] == [built["magic"][0], _shipped.PORTABLE_CPU]
    assert set(built["compiled_float"]) == {"kernel", "helper"}
    files = _files(shipped)
    assert any(f.endswith(".nbi") for f in files) and any(f.endswith(".nbc") for f in files)
    assert not _files(build_cache) or not any(f.endswith(".nbc") for f in _files(build_cache))
    # the user: the same source at another path, written later (another
    # mtime), an empty numba cache, the host's CPU
    (user_src / "shipmod.py").write_text(MODULE)
    user_cache = tmp_path / "user_cache"
    got = _run(tmp_path, user_src, shipped, user_cache, {}, what="int")
    assert got["cache_class"] == "ShippedCache"
    assert got["kernel"] == 30.0
    assert got["compiled_float"] == [], f"compiled although shipped: {got['compiled_float']}"
    # a signature the folder lacks compiles (host target) into the user's cache
    assert got["kernel_int"] == 30 and "kernel" in got["compiled"]
    assert any(f.endswith(".nbc") for f in _files(user_cache))
    assert files == _files(shipped), "the user process wrote into the shipped folder"


def test_other_source_is_not_loaded(tmp_path):
    """A changed callee compiles both functions instead of loading the
    shipped code: numba's own key of ``kernel`` (its bytecode) is unchanged,
    and its shipped code inlines the old ``helper``; the shipped index's
    stamp, the hash of all the sources, is what refuses it."""
    build_src, user_src, shipped = tmp_path / "b", tmp_path / "u", tmp_path / "shipped"
    build_src.mkdir()
    user_src.mkdir()
    (build_src / "shipmod.py").write_text(MODULE)
    _run(tmp_path, build_src, shipped, tmp_path / "bc", {
        _shipped.BUILD_ENV: str(shipped), "NUMBA_CPU_NAME": _shipped.PORTABLE_CPU,
        "NUMBA_CPU_FEATURES": _shipped.PORTABLE_FEATURES})
    (user_src / "shipmod.py").write_text(MODULE.replace("x[i] * x[i]", "x[i] + x[i]"))
    got = _run(tmp_path, user_src, shipped, tmp_path / "uc", {})
    assert got["kernel"] == 20.0
    assert sorted(got["compiled_float"]) == ["helper", "kernel"]


def _manifest(folder, **over):
    import numba as nb

    man = {"numba": nb.__version__, "python": _shipped._python_tag(),
           "magic": list(_shipped.portable_magic()), "sources": ["_jit.py", "_shipped.py"],
           "source_hash": _shipped.source_hash(files=["_jit.py", "_shipped.py"]),
           "stamp": "s", "entries": 0}
    man.update(over)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, _shipped.MANIFEST), "w") as f:
        json.dump(man, f)


@pytest.mark.parametrize("over, reason", [
    ({}, None),
    ({"numba": "0.0.1"}, "built with numba 0.0.1"),
    ({"python": "py27"}, "built for py27"),
    ({"source_hash": "0" * 64}, "sources differ"),
    ({"magic": ["x86_64-unknown-linux-gnu", "skylake-avx512", "+avx512f"]}, "built for target"),
])
def test_status_refuses_a_foreign_folder(tmp_path, over, reason):
    if not _shipped.host_has_features():
        pytest.skip("this CPU lacks x86-64-v3: nothing shipped can load here")
    folder = str(tmp_path / f"mc{len(over)}{sorted(over)}")
    _manifest(folder, **over)
    _shipped.status.cache_clear()
    ok, why, _ = _shipped.status(folder)
    _shipped.status.cache_clear()
    if reason is None:
        assert ok, why
    else:
        assert not ok and reason in why, why


def test_absent_folder_leaves_numba_cache(tmp_path):
    _shipped.status.cache_clear()
    ok, why, _ = _shipped.status(str(tmp_path / "nothing"))
    assert not ok and "absent" in why


def test_svmlab_kernels_get_the_shipped_cache_in_a_build(tmp_path):
    """svmlab's own dispatchers are attached when their module is imported
    (the hook in svmlab._jit.njit), and a build process compiles for the
    portable target into the shipped folder."""
    shipped = tmp_path / "mc"
    env = _shipped_build.build_env(str(shipped), str(tmp_path / "cache"))
    env["PYTHONPATH"] = ROOT
    code = ("import numpy as np; from svmlab.smo import _simd; "
            "print(type(_simd._scan._cache).__name__); "
            "print(_simd.extremes(np.arange(20.0), np.zeros(20), 20))")
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.splitlines()[0] == "ShippedCache"
    assert any(f.endswith(".nbc") and f.startswith("svmlab.smo._simd") for f in _files(shipped)), \
        _files(shipped)


def test_seal_makes_a_stopped_build_loadable(tmp_path):
    """A build stopped before its first manifest is sealed: the manifest
    takes the stamp its index files carry, and hashes every source file."""
    src, shipped = tmp_path / "src", tmp_path / "shipped"
    src.mkdir()
    (src / "shipmod.py").write_text(MODULE)
    _run(tmp_path, src, shipped, tmp_path / "bc", {
        _shipped.BUILD_ENV: str(shipped), "NUMBA_CPU_NAME": _shipped.PORTABLE_CPU,
        "NUMBA_CPU_FEATURES": _shipped.PORTABLE_FEATURES})
    man = _shipped_build.seal(str(shipped))
    assert man["stamp"] == _shipped.source_hash(str(src)) and not man["complete"]
    assert man["entries"] == 2
    _shipped.status.cache_clear()
    try:
        if _shipped.host_has_features():
            ok, why, _ = _shipped.status(str(shipped))
            assert ok and "partial build" in why, why
    finally:
        _shipped.status.cache_clear()


_BUILD_ENV = {_shipped.BUILD_ENV: None, "NUMBA_CPU_NAME": _shipped.PORTABLE_CPU,
              "NUMBA_CPU_FEATURES": _shipped.PORTABLE_FEATURES}


def test_parallel_stages_merge_into_one_store(tmp_path):
    """A parallel build (svmlab._shipped_build.build) compiles in several
    processes, each into its own staging folder (no two write one index
    file), then merges them: every overload of every stage loads from the
    merged store without a compilation, an overload two stages both hold
    is kept once, and the stages' numbering of data files does not clash."""
    src, stages = tmp_path / "src", [tmp_path / "s0", tmp_path / "s1"]
    src.mkdir()
    (src / "shipmod.py").write_text(MODULE)
    # stage 0 compiles the float overloads, stage 1 the float and int ones
    for stage, what in zip(stages, ("float", "int")):
        _run(tmp_path, src, stage, tmp_path / f"c{stage.name}",
             dict(_BUILD_ENV, **{_shipped.BUILD_ENV: str(stage)}), what=what)
    merged = tmp_path / "merged"
    _shipped_build.merge([str(s) for s in stages], str(merged), _shipped.source_hash(str(src)))
    nbc = [f for f in _files(merged) if f.endswith(".nbc")]
    # kernel and helper for float64 and int64 arrays, each once (the stages
    # hold 2 + 4 overloads, the float64 ones twice)
    assert len(nbc) == 4, nbc
    assert sum(f.endswith(".nbc") for s in stages for f in _files(s)) == 6
    got = _run(tmp_path, src, merged, tmp_path / "user", {}, what="int")
    assert got["kernel"] == 30.0 and got["kernel_int"] == 30
    assert got["compiled"] == [], f"compiled although merged: {got['compiled']}"


def test_switching_the_store_off(tmp_path):
    """SVMLAB_SHIPPED=0 (the tests that exercise compilation set it) makes an
    attached dispatcher compile instead of loading the store."""
    src, shipped = tmp_path / "src", tmp_path / "shipped"
    src.mkdir()
    (src / "shipmod.py").write_text(MODULE)
    _run(tmp_path, src, shipped, tmp_path / "bc", dict(_BUILD_ENV, **{_shipped.BUILD_ENV:
                                                                      str(shipped)}))
    got = _run(tmp_path, src, shipped, tmp_path / "uc", {"SVMLAB_SHIPPED": "0"})
    assert got["kernel"] == 30.0
    assert sorted(got["compiled_float"]) == ["helper", "kernel"]


def _backend():
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "_svmlab_build_under_test", os.path.join(ROOT, "build_backend", "_svmlab_build.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_editable_install_asks_for_the_build_dependencies(monkeypatch):
    backend = _backend()
    # setuptools' own answer runs setup.py, which needs wheel/setuptools>=70.1
    # (present in pip's isolated build environment, maybe not here)
    monkeypatch.setattr(backend._orig, "get_requires_for_build_editable", lambda c=None: [])
    monkeypatch.delenv("SVMLAB_SHIP_MACHINE_CODE", raising=False)
    reqs = backend.get_requires_for_build_editable()
    assert any(r.startswith("numba") for r in reqs) and any(r.startswith("scipy") for r in reqs)
    monkeypatch.setenv("SVMLAB_SHIP_MACHINE_CODE", "0")
    assert not any(r.startswith("numba") for r in backend.get_requires_for_build_editable())


def test_a_failed_in_tree_build_never_fails_the_install(monkeypatch, capsys):
    """build_editable's machine-code step warns and returns whatever goes
    wrong: a build that exits non-zero, or one that cannot even start."""
    import subprocess as sp

    backend = _backend()
    monkeypatch.delenv("SVMLAB_SHIP_MACHINE_CODE", raising=False)
    monkeypatch.setattr(backend.platform, "machine", lambda: "x86_64")
    real = sp.run

    def fails(cmd, *a, **k):
        if "svmlab._shipped_build" in cmd:
            return sp.CompletedProcess(cmd, 3)
        return real(cmd, *a, **k)

    monkeypatch.setattr(backend.subprocess, "run", fails)
    assert backend.build_in_tree() is False
    assert "did not finish (exit 3" in capsys.readouterr().err

    def breaks(cmd, *a, **k):
        raise OSError("no such interpreter")

    monkeypatch.setattr(backend.subprocess, "run", breaks)
    assert backend.build_in_tree() is False
    assert "failed (OSError: no such interpreter)" in capsys.readouterr().err
    monkeypatch.setenv("SVMLAB_SHIP_MACHINE_CODE", "0")
    assert backend.build_in_tree() is False
    assert "SVMLAB_SHIP_MACHINE_CODE=0" in capsys.readouterr().err


def test_the_in_tree_store_is_never_committed():
    """The editable install writes svmlab/_machine_code into the checkout;
    git must ignore it (machine code for one numba and Python, megabytes)."""
    if not os.path.exists(os.path.join(ROOT, ".git")):
        pytest.skip("not a git checkout")
    proc = subprocess.run(["git", "-C", ROOT, "check-ignore", "-q",
                           "svmlab/_machine_code/manifest.json"], capture_output=True)
    assert proc.returncode == 0, "svmlab/_machine_code is not git-ignored"
    tracked = subprocess.run(["git", "-C", ROOT, "ls-files", "svmlab/_machine_code"],
                             capture_output=True, text=True).stdout.split()
    assert tracked == []


def test_build_compiles_a_family_in_a_worker_and_loads_it(tmp_path):
    """svmlab._shipped_build.build end to end on one family (the cheapest):
    a worker process compiles for the portable target into its staging
    folder, the parent merges it and writes a manifest that this checkout's
    sources satisfy, and the progress lines count parts and kernels."""
    lines = []
    folder = tmp_path / "mc"
    man = _shipped_build.build(str(folder), jobs=2, fits=False, families=("cutting_plane",),
                               progress=lines.append, every=5.0)
    assert man["complete"] and man["stages"] == ["warm:cutting_plane"] and man["jobs"] == 1
    assert man["entries"] > 0 and man["kernels_compiled"] >= man["entries"] / 2
    assert "cutting_plane/_passes.py" in man["sources"]
    assert "1 of 1 parts done" in lines[-1] and "kernels compiled" in lines[-1]
    _shipped.status.cache_clear()
    try:
        if _shipped.host_has_features():
            ok, why, _ = _shipped.status(str(folder))
            assert ok, why
    finally:
        _shipped.status.cache_clear()
