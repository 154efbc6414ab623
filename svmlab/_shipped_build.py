"""Building the machine code that a wheel ships (:mod:`svmlab._shipped`).

``python -m svmlab._shipped_build build [FOLDER] [--reuse SRC]`` compiles, in a
fresh process whose numba target is the portable one, every kernel that
:func:`svmlab.warm_up` and the sizes users start with (:data:`BUILD_FITS`)
compile, into ``svmlab/_machine_code/`` with its manifest; ``status`` says
whether this installation loads shipped code.  ``setup.py``'s ``build_py``
step runs it for a wheel.

Why a module of its own: building runs svmlab's solvers, so it sits above
them, while :mod:`svmlab._shipped` is read by :mod:`svmlab._jit` below every
solver (the package's layout keeps the shared machinery free of imports of
the solver rooms).
"""

from __future__ import annotations

import json
import os
import sys
import time

from ._shipped import (BUILD_ENV, MACHINE_CODE_DIR, MANIFEST, PACKAGE_DIR, PORTABLE_CPU,
                       PORTABLE_FEATURES, _build_stamp, _loaded_sources, _python_tag,
                       portable_magic, source_hash, status)
#: the fits a build runs after :func:`svmlab.warm_up` (all families): the
#: estimators and sizes users start with, so that their first fit meets no
#: kernel the warm-up left out; (label, estimator expression, data expression)
BUILD_FITS = (
    ("digits SVC", "svmlab.SVC()", "_digits()"),
    ("3000x20 SVC", "svmlab.SVC()", "_clf(3000, 20)"),
    ("3000x20 SMOClassifier", "svmlab.SMOClassifier(progress=False)", "_clf(3000, 20)"),
    ("3000x20 SMOClassifier wss2",
     "svmlab.SMOClassifier(selection='wss2', progress=False)", "_clf(3000, 20)"),
    ("2000x10 SVR", "svmlab.SVR()", "_reg(2000, 10)"),
    ("2000x10 NuSVR", "svmlab.NuSVR()", "_reg(2000, 10)"),
    ("3000x20 NuSVC", "svmlab.NuSVC()", "_clf(3000, 20)"),
    ("3000x20 OneClassSVM", "svmlab.OneClassSVM()", "_clf(3000, 20)[:1] + (None,)"),
    ("a9a rows, small cache: SVC", "svmlab.SVC(cache_size=1)", "_a9a(3000)"),
    ("a9a rows, small cache: SMOClassifier",
     "svmlab.SMOClassifier(progress=False, cache_size=1)", "_a9a(3000)"),
)


def _digits():
    from sklearn.datasets import load_digits

    return load_digits(return_X_y=True)


def _clf(n, d):
    from sklearn.datasets import make_classification

    return make_classification(n, d, random_state=0)


def _reg(n, d):
    from sklearn.datasets import make_regression

    return make_regression(n, d, noise=10.0, random_state=0)


def _a9a(n):
    """The first ``n`` rows of a9a (0/1 CSR, as svmlab.datasets loads it);
    with a 1 MB cache they take the paths the full a9a takes (float32 rows,
    a cache of fewer rows than examples)."""
    from svmlab import datasets

    X, y = datasets.load("a9a", "train")
    return X[:n], y[:n]


def build(folder=None, fits=True, families=()):
    """Compile svmlab's kernels for the portable target into ``folder``
    (default :data:`MACHINE_CODE_DIR`): the fits of :data:`BUILD_FITS`, then
    :func:`svmlab.warm_up` of each family (default: all), writing the
    manifest after each stage (a build stopped early leaves a folder that
    loads what it holds; ``complete`` says whether it finished).  Must run in
    a fresh process whose environment has :data:`BUILD_ENV` = ``folder``,
    ``NUMBA_CPU_NAME`` = :data:`PORTABLE_CPU`, ``NUMBA_CPU_FEATURES`` =
    :data:`PORTABLE_FEATURES` and ``SVMLAB_JIT=eager`` (:func:`main` sets
    them).  Returns the manifest (with CPU-seconds per family)."""
    import warnings

    import numba

    folder = os.path.abspath(folder or MACHINE_CODE_DIR)
    if os.path.abspath(os.environ.get(BUILD_ENV, "")) != folder:
        raise RuntimeError(f"run build() in a process started with {BUILD_ENV}={folder} "
                           "(python -m svmlab._shipped_build build)")
    magic = portable_magic()
    from numba.core.registry import cpu_target

    if cpu_target.target_context.codegen().magic_tuple() != magic:
        raise RuntimeError("the process does not compile for the portable target: set "
                           f"NUMBA_CPU_NAME={PORTABLE_CPU} NUMBA_CPU_FEATURES={PORTABLE_FEATURES}")
    import svmlab
    from svmlab import _warm

    cpu = {}
    done = []

    def manifest(complete):
        # written after every stage: a build stopped early leaves a usable
        # folder of the stages it finished
        sources = _loaded_sources()
        man = {"numba": numba.__version__, "python": _python_tag(), "magic": list(magic),
               "stamp": _build_stamp(), "sources": sources,
               "source_hash": source_hash(PACKAGE_DIR, sources), "entries": _count(folder),
               "stages": list(done), "complete": complete, "compile_cpu_s": dict(cpu)}
        tmp = os.path.join(folder, MANIFEST + ".tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(man, f, indent=1)
        os.replace(tmp, os.path.join(folder, MANIFEST))
        return man

    if fits:  # first what users start with, then every family
        t0 = time.process_time()
        env = {"svmlab": svmlab, "_digits": _digits, "_clf": _clf, "_reg": _reg, "_a9a": _a9a}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for label, est, data in BUILD_FITS:
                X, y = eval(data, env)
                m = eval(est, env)
                m.fit(X, y)
                m.predict(X[:5])
        cpu["user-sized fits"] = round(time.process_time() - t0, 1)
        done.append("user-sized fits")
        manifest(False)
    for fam in list(families) or list(_warm.FAMILIES):
        t0 = time.process_time()
        _warm.warm_up(fam)
        cpu[fam] = round(time.process_time() - t0, 1)
        done.append(f"warm_up({fam!r})")
        manifest(False)
    return manifest(True)


def _count(folder):
    n = 0
    for _, _, files in os.walk(folder):
        n += sum(f.endswith(".nbc") for f in files)
    return n


def seal(folder):
    """Write the manifest of a build that was stopped before its first stage
    ended (its index files carry the build's stamp), as a partial build over
    every ``.py`` file of the package: it then loads what it holds, under
    the strictest source check.  Returns the manifest."""
    import pickle

    import numba

    folder = os.path.abspath(folder)
    stamps = set()
    for d, _, files in os.walk(folder):
        for f in files:
            if f.endswith(".nbi"):
                with open(os.path.join(d, f), "rb") as fh:
                    pickle.load(fh)  # numba's version
                    stamps.add(pickle.loads(fh.read())[0])  # (stamp, overloads)
    if len(stamps) != 1:
        raise RuntimeError(f"{folder}: {len(stamps)} build stamps in its index files, not one")
    man = {"numba": numba.__version__, "python": _python_tag(), "magic": list(portable_magic()),
           "stamp": stamps.pop(), "sources": None, "source_hash": source_hash(PACKAGE_DIR),
           "entries": _count(folder), "stages": ["stopped early, sealed"], "complete": False,
           "compile_cpu_s": {}}
    with open(os.path.join(folder, MANIFEST), "w", encoding="utf-8") as f:
        json.dump(man, f, indent=1)
    return man


def build_env(folder, cache_dir):
    """The environment of a building process (see :func:`build`)."""
    env = dict(os.environ)
    env.update({BUILD_ENV: os.path.abspath(folder), "NUMBA_CPU_NAME": PORTABLE_CPU,
                "NUMBA_CPU_FEATURES": PORTABLE_FEATURES, "SVMLAB_JIT": "eager",
                "SVMLAB_PROGRESS": "0", "NUMBA_CACHE_DIR": cache_dir, "SVMLAB_SHIPPED": "1"})
    return env


def main(argv=None):
    """``python -m svmlab._shipped_build build [FOLDER] [--reuse SRC]``: build the
    shipped folder (default: this package's ``_machine_code``) in a child
    process with the portable target, or copy ``SRC`` when its manifest
    shows it was built from these sources for this numba and Python;
    ``python -m svmlab._shipped_build status``: say whether this installation
    loads shipped code."""
    import subprocess
    import tempfile

    argv = list(sys.argv[1:] if argv is None else argv)
    cmd = argv[0] if argv else "status"
    if cmd == "status":
        ok, reason, _ = status()
        print(("loads" if ok else "does not load") + f" shipped machine code: {reason}")
        return 0
    if cmd == "seal" and len(argv) > 1:
        print(json.dumps({k: v for k, v in seal(argv[1]).items() if k != "sources"}))
        return 0
    if cmd != "build":
        print(__doc__.split("\n\n")[0])
        return 2
    reuse = None
    if "--reuse" in argv:
        i = argv.index("--reuse")
        reuse = argv[i + 1]
        del argv[i:i + 2]
    folder = os.path.abspath(argv[1] if len(argv) > 1 else MACHINE_CODE_DIR)
    import shutil

    if reuse and os.path.abspath(reuse) != folder:
        ok, why, _ = status(os.path.abspath(reuse))
        if ok:  # built from these very sources, for this numba and Python
            shutil.rmtree(folder, ignore_errors=True)
            shutil.copytree(reuse, folder)
            print(f"reused {reuse}: {why}", file=sys.stderr)
            return 0
        print(f"not reusing {reuse}: {why}", file=sys.stderr)
    shutil.rmtree(folder, ignore_errors=True)  # no entry of an older build survives
    os.makedirs(folder)
    with tempfile.TemporaryDirectory(prefix="svmlab-ship-") as cache:
        env = build_env(folder, cache)
        code = ("import json, svmlab._shipped as s; "
                f"print(json.dumps(s.build({folder!r})))")
        t0 = time.time()
        proc = subprocess.run([sys.executable, "-c", code], env=env,
                              cwd=os.path.dirname(PACKAGE_DIR))
        if proc.returncode != 0:
            return proc.returncode
    print(f"built {folder} in {time.time() - t0:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
