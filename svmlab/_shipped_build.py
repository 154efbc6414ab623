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
    # a multiclass fit whose rows are float32 (the full kernel matrix does
    # not fit the cache: MNIST-sized data at the default cache) takes the
    # one-vs-one driver's float32 signature (docs/decisions/33n01)
    ("3000x10 3-class SVC, float32 rows", "svmlab.SVC(cache_size=20)", "_clf3(3000, 10)"),
    # a NuSVC of three or more classes runs its pairs through the compiled
    # nu driver (svmlab.smo._nuovo.nu_pairs, docs/decisions/34n01)
    ("digits NuSVC", "svmlab.NuSVC()", "_digits()"),
    ("3000x20 OneClassSVM", "svmlab.OneClassSVM()", "_clf(3000, 20)[:1] + (None,)"),
    ("a9a rows, small cache: SVC", "svmlab.SVC(cache_size=1)", "_a9a(3000)"),
    ("a9a rows, small cache: SMOClassifier",
     "svmlab.SMOClassifier(progress=False, cache_size=1)", "_a9a(3000)"),
    # 00_tour's IRWLS run (8000 a9a rows, float32 rows): its G update
    # (decomposition._kblock.add_rows) takes a signature warm_up does not
    ("a9a 8000 rows: IRWLSClassifier (00_tour)",
     "svmlab.IRWLSClassifier(C=1.0, gamma=0.05, random_state=0, progress=False)",
     "_a9a(8000)"),
)


def _digits():
    from sklearn.datasets import load_digits

    return load_digits(return_X_y=True)


def _clf(n, d):
    from sklearn.datasets import make_classification

    return make_classification(n, d, random_state=0)


def _clf3(n, d):
    from sklearn.datasets import make_classification

    return make_classification(n, d, n_informative=6, n_classes=3, random_state=0)


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


def units(fits=True, families=()):
    """The build's parts, in the order they are handed out: every
    :func:`svmlab.warm_up` family (default: all; the largest compile masses,
    started first so that the parallel build ends together), then each fit of
    :data:`BUILD_FITS`.  A part is ``"warm:<family>"`` or ``"fit:<label>"``."""
    from svmlab import _warm

    out = [f"warm:{f}" for f in (list(families) or list(_warm.FAMILIES))]
    if fits:
        out += [f"fit:{label}" for label, _, _ in BUILD_FITS]
    return out


def run_unit(unit):
    """Run one part of the build (see :func:`units`) in this process."""
    import warnings

    import svmlab
    from svmlab import _warm

    kind, name = unit.split(":", 1)
    if kind == "warm":
        _warm.warm_up(name)
        return
    (est, data), = [(e, d) for label, e, d in BUILD_FITS if label == name]
    env = {"svmlab": svmlab, "_digits": _digits, "_clf": _clf, "_clf3": _clf3, "_reg": _reg,
           "_a9a": _a9a}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        X, y = eval(data, env)
        m = eval(est, env)
        m.fit(X, y)
        m.predict(X[:5])


def _check_build_process(folder):
    if os.path.abspath(os.environ.get(BUILD_ENV, "")) != os.path.abspath(folder):
        raise RuntimeError(f"run the build in a process started with {BUILD_ENV}={folder} "
                           "(python -m svmlab._shipped_build build)")
    from numba.core.registry import cpu_target

    if cpu_target.target_context.codegen().magic_tuple() != portable_magic():
        raise RuntimeError("the process does not compile for the portable target: set "
                           f"NUMBA_CPU_NAME={PORTABLE_CPU} NUMBA_CPU_FEATURES={PORTABLE_FEATURES}")


#: the prefix of the lines a build worker answers on its stdout
_REPLY = "SVMLAB-SHIP "


def _worker(folder):
    """A build worker (``python -m svmlab._shipped_build worker FOLDER``, in
    :func:`build_env`): reads part names (:func:`units`) one a line on stdin,
    compiles each into its own staging ``folder`` and answers
    ``SVMLAB-SHIP done|failed <part> <CPU-seconds> [error]``; at the end of
    its input it answers the package's source files it imported."""
    import traceback

    _check_build_process(folder)
    os.makedirs(folder, exist_ok=True)
    from numba.core import event

    class _Tick(event.Listener):  # one line per compiled kernel: the parent's count moves
        def on_start(self, e):
            pass

        def on_end(self, e):
            print(_REPLY + "compiled", flush=True)

    event.register("numba:compile", _Tick())
    for line in sys.stdin:
        unit = line.strip()
        if not unit:
            continue
        t0 = time.process_time()
        try:
            run_unit(unit)
            msg = f"done {json.dumps(unit)} {time.process_time() - t0:.1f}"
        except Exception as exc:  # reported to the parent, which goes on without it
            traceback.print_exc()
            msg = f"failed {json.dumps(unit)} {time.process_time() - t0:.1f} " + json.dumps(
                f"{type(exc).__name__}: {exc}")
        print(_REPLY + msg, flush=True)
    print(_REPLY + "sources " + json.dumps(_loaded_sources()), flush=True)
    return 0


def default_jobs():
    """How many build workers: the cores this process may run on (at most
    8: each worker holds its own numba compiler, about half a GB)."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    return max(1, min(8, n))


def build(folder=None, jobs=None, fits=True, families=(), progress=print, every=10.0):
    """Compile svmlab's kernels for the portable target into ``folder``
    (default :data:`MACHINE_CODE_DIR`, which must not hold an older build:
    :func:`main` empties it): the parts of :func:`units`, handed out one at a
    time to ``jobs`` worker processes (default :func:`default_jobs`), each
    with its own staging folder and numba cache, so that no two processes
    ever write one index file; the staging folders are then merged
    (:func:`merge`) and the manifest written.  A part that fails, or a worker
    that dies, leaves a partial build (``complete`` false; what was compiled
    loads).  ``progress(line)`` is called every ``every`` seconds and when a
    part ends.  Returns the manifest (with CPU-seconds per part)."""
    import selectors
    import shutil
    import subprocess
    import tempfile

    import numba

    folder = os.path.abspath(folder or MACHINE_CODE_DIR)
    todo = units(fits, families)
    jobs = max(1, min(jobs or default_jobs(), len(todo)))
    stamp = _build_stamp()
    t_start = time.perf_counter()
    c0 = _children_cpu()
    tmp = tempfile.mkdtemp(prefix="svmlab-ship-")
    workers, sources, cpu, done, failed, kernels = [], set(), {}, [], {}, [0]
    sel = selectors.DefaultSelector()
    try:
        for i in range(jobs):
            stage, cache = os.path.join(tmp, f"stage{i}"), os.path.join(tmp, f"cache{i}")
            env = build_env(stage, cache)
            env["SVMLAB_SHIP_STAMP"] = stamp
            env["PYTHONPATH"] = os.path.dirname(PACKAGE_DIR) + (
                os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
            p = subprocess.Popen([sys.executable, "-m", "svmlab._shipped_build", "worker", stage],
                                 env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 cwd=os.path.dirname(PACKAGE_DIR))
            w = {"proc": p, "stage": stage, "unit": None, "t": None, "buf": b""}
            workers.append(w)
            sel.register(p.stdout, selectors.EVENT_READ, w)

        def hand_out(w):
            if todo:
                w["unit"], w["t"] = todo.pop(0), time.perf_counter()
                w["proc"].stdin.write((w["unit"] + "\n").encode())
                w["proc"].stdin.flush()
            else:
                w["unit"] = None
                w["proc"].stdin.close()

        def say(event=""):
            running = [w["unit"] for w in workers if w["unit"]]
            n = len(done) + len(failed)
            progress(f"svmlab: compiling machine code for x86-64-v3 ({jobs} processes): "
                     f"{n} of {n + len(running) + len(todo)} parts done"
                     + (f", {len(failed)} failed" if failed else "")
                     + (f", running {', '.join(running)}" if running else "")
                     + f"; {kernels[0]} kernels compiled, "
                     f"{time.perf_counter() - t_start:.0f} s so far" + event)

        for w in workers:
            hand_out(w)
        say()
        last = time.perf_counter()
        open_ = len(workers)
        def handle(w, line):
            nonlocal last
            if not line.startswith(_REPLY):
                return
            what, _, rest = line[len(_REPLY):].partition(" ")
            if what == "compiled":
                kernels[0] += 1
                return
            if what == "sources":
                sources.update(json.loads(rest))
                return
            unit, end = json.JSONDecoder().raw_decode(rest)
            secs = float(rest[end:].split()[0])
            cpu[unit] = round(secs, 1)
            if what == "done":
                done.append(unit)
            else:
                failed[unit] = json.loads(rest[end:].strip().split(" ", 1)[1])
            w["unit"] = None  # ended: not counted as running
            say(f" ({unit}: {what}, {secs:.0f} CPU-s)")
            last = time.perf_counter()
            hand_out(w)

        while open_:
            for key, _ in sel.select(timeout=max(0.1, every - (time.perf_counter() - last))):
                w = key.data
                # raw reads, split here: a buffered readline would leave
                # lines in Python's buffer, where select does not see them
                data = os.read(w["proc"].stdout.fileno(), 65536)
                if not data:  # the worker ended
                    sel.unregister(w["proc"].stdout)
                    open_ -= 1
                    if w["unit"]:
                        failed[w["unit"]] = f"worker exited with {w['proc'].wait()}"
                        w["unit"] = None
                    continue
                w["buf"] += data
                *lines, w["buf"] = w["buf"].split(b"\n")
                for line in lines:
                    handle(w, line.decode("utf-8", "replace"))
            if time.perf_counter() - last >= every:
                say()
                last = time.perf_counter()
        for w in workers:
            w["proc"].wait()
        os.makedirs(folder, exist_ok=True)
        merge([w["stage"] for w in workers], folder, stamp)
    finally:
        for w in workers:
            if w["proc"].poll() is None:
                w["proc"].kill()
                w["proc"].wait()
        shutil.rmtree(tmp, ignore_errors=True)
    srcs = sorted(sources)
    man = {"numba": numba.__version__, "python": _python_tag(), "magic": list(portable_magic()),
           "stamp": stamp, "sources": srcs, "source_hash": source_hash(PACKAGE_DIR, srcs),
           "entries": _count(folder), "stages": [u for u in units(fits, families) if u in done],
           "failed": failed, "complete": not failed and bool(srcs), "jobs": jobs,
           "kernels_compiled": kernels[0], "wall_s": round(time.perf_counter() - t_start, 1),
           "cpu_s": round(_children_cpu() - c0, 1), "compile_cpu_s": cpu}
    tmpm = os.path.join(folder, MANIFEST + ".tmp")
    with open(tmpm, "w", encoding="utf-8") as f:
        json.dump(man, f, indent=1)
    os.replace(tmpm, os.path.join(folder, MANIFEST))
    return man


def _children_cpu():
    import resource

    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def merge(stages, folder, stamp):
    """Merge the staging folders of a parallel build into ``folder``: per
    module and per function, every overload of every stage's index (all
    written under the build's one ``stamp``), each under a data file name of
    its own; an overload two workers both compiled is taken once.  Runs
    after every worker has ended: nothing else writes the indexes."""
    import shutil

    from numba.core.caching import IndexDataCacheFile

    for stage in stages:
        if not os.path.isdir(stage):
            continue
        for sub in sorted(os.listdir(stage)):
            src_dir, dst_dir = os.path.join(stage, sub), os.path.join(folder, sub)
            if not os.path.isdir(src_dir):
                continue
            os.makedirs(dst_dir, exist_ok=True)
            for name in sorted(os.listdir(src_dir)):
                if not name.endswith(".nbi"):
                    continue
                base = name[:-len(".nbi")]
                src = IndexDataCacheFile(cache_path=src_dir, filename_base=base,
                                         source_stamp=stamp)
                dst = IndexDataCacheFile(cache_path=dst_dir, filename_base=base,
                                         source_stamp=stamp)
                have = dst._load_index()
                used = set(have.values())
                added = False
                for key, data_name in src._load_index().items():
                    if key in have:
                        continue
                    i = 1
                    while dst._data_name(i) in used:
                        i += 1
                    new = dst._data_name(i)
                    shutil.copyfile(src._data_path(data_name), dst._data_path(new))
                    have[key] = new
                    used.add(new)
                    added = True
                if added:
                    dst._save_index(have)


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
    """``python -m svmlab._shipped_build build [FOLDER] [--reuse SRC] [--jobs N]
    [--keep]``: build the shipped folder (default: this package's
    ``_machine_code``) in ``N`` worker processes with the portable target
    (:func:`build`), or copy ``SRC`` when its manifest shows it was built from
    these sources for this numba and Python; ``--keep``: leave ``FOLDER`` as
    it is when it already holds a complete build of these sources.
    ``python -m svmlab._shipped_build status``: say whether this installation
    loads shipped code."""
    import shutil

    argv = list(sys.argv[1:] if argv is None else argv)
    cmd = argv[0] if argv else "status"
    if cmd == "status":
        ok, reason, _ = status()
        print(("loads" if ok else "does not load") + f" shipped machine code: {reason}")
        return 0
    if cmd == "seal" and len(argv) > 1:
        print(json.dumps({k: v for k, v in seal(argv[1]).items() if k != "sources"}))
        return 0
    if cmd == "worker" and len(argv) > 1:
        return _worker(argv[1])
    if cmd != "build":
        print(__doc__.split("\n\n")[0])
        return 2
    opts = {}
    for flag in ("--reuse", "--jobs"):
        if flag in argv:
            i = argv.index(flag)
            opts[flag] = argv[i + 1]
            del argv[i:i + 2]
    keep = "--keep" in argv
    argv = [a for a in argv if a != "--keep"]
    folder = os.path.abspath(argv[1] if len(argv) > 1 else MACHINE_CODE_DIR)
    if keep:
        ok, why, man = status(folder)
        if ok and man.get("complete"):
            print(f"svmlab: kept {folder}: {why}", file=sys.stderr)
            return 0
    reuse = opts.get("--reuse")
    if reuse and os.path.abspath(reuse) != folder:
        ok, why, man = status(os.path.abspath(reuse))
        if ok and man.get("complete"):  # built from these very sources, numba and Python
            shutil.rmtree(folder, ignore_errors=True)
            shutil.copytree(reuse, folder)
            print(f"svmlab: reused {reuse}: {why}", file=sys.stderr)
            return 0
        print(f"svmlab: not reusing {reuse}: {why}", file=sys.stderr)
    shutil.rmtree(folder, ignore_errors=True)  # no entry of an older build survives
    man = build(folder, jobs=int(opts["--jobs"]) if "--jobs" in opts else None,
                progress=lambda line: print(line, file=sys.stderr, flush=True))
    print(f"svmlab: built {folder}: {man['entries']} overloads in {man['wall_s']:.0f} s "
          f"({man['cpu_s']:.0f} CPU-s, {man['jobs']} processes)"
          + (f"; failed: {man['failed']}" if man["failed"] else ""), file=sys.stderr)
    return 0 if man["complete"] else 1


if __name__ == "__main__":
    sys.exit(main())
