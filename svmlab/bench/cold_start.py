"""The ``cold-start`` suite: what a new user meets, in a fresh process with an
empty numba cache.

Every estimator, with its default parameters, fits a small problem (300 x
5: dense, CSR, and binary CSR) in a new Python process whose
:envvar:`NUMBA_CACHE_DIR` is an empty directory, as in a new install, a
Binder or Colab session or a CI run.  Columns:

``import``
    ``import svmlab`` and the estimator's module.
``first fit``
    the first ``fit`` (default tier policy, ``SVMLAB_JIT=auto``: small
    calls run interpreted while a background process compiles, see
    :mod:`svmlab._jit`).
``second fit``
    the same fit again at once (still interpreted if the compilation is
    not done).
``compiled after`` (full size only)
    seconds from the first fit's start until the background process has
    compiled what the fit needs; then ``warm fit``, the fit with compiled
    code (the number every later session gets).
``compiled here``
    how many kernels the two fits compiled in the user's own process (numba
    compilation events there; 0 when the tiers work: every kernel the fit
    met ran interpreted or came from the cache).
``eager first fit`` (full size only)
    the first fit with ``SVMLAB_JIT=eager``: numba's own behaviour, compile
    before running; what every first fit cost before the tiers.

The sizes users start with (:data:`SIZED`: scikit-learn's digits with
``SVC()``, ``make_classification(3000, 20)`` with ``SVC()`` and
``SMOClassifier()``, ``SVR()`` on ``make_regression(2000, 10)``,
``OneClassSVM()`` on 3000 x 20, ``SVC()`` on a9a in full) are measured the
same way, one fresh process each: ``first fit``, ``second fit`` (a new
estimator, same data, same process: the warm fit), and ``compiled here``.
At full size the suite also reports :func:`svmlab.warm_up` per family in a
fresh process with an empty cache, as CPU-seconds (``time.process_time``
of this process plus its children).

``--install editable-venv`` (:envvar:`SVMLAB_BENCH_INSTALL` =
``editable-venv``) measures what the README's editable install gives a new
user: the suite clones this checkout's committed ``HEAD`` into a temporary
directory, creates a new venv there and runs ``pip install --no-deps -e``
on the clone (pip's isolated build; the build backend compiles the machine
code into the clone, docs/decisions/28a01-editable-install-builds-machine-code.md),
reports the install's wall and CPU seconds, makes the running
interpreter's site-packages importable by a ``.pth`` file, and runs every
case with that venv's Python from an empty directory.  The sized table
then also has ``python -m svmlab.tour``: once in a fresh process with an
empty numba cache (first) and once more with the cache it left (warm).

:envvar:`SVMLAB_BENCH_COLD_PARTS` (``toy``, ``sized``, ``warm_up``, comma
separated; default all) runs only those parts: the 300 x 5 table, the
sized cases (with the tour at full size), ``warm_up()`` per family.

``--install wheel`` (``python -m svmlab.bench --suite cold-start --install
wheel``, or :envvar:`SVMLAB_BENCH_INSTALL` = ``wheel``) measures what a user
of the wheel meets: the suite builds the wheel (``pip wheel``, which
compiles the shipped machine code, :mod:`svmlab._shipped`, or copies the
checkout's ``svmlab/_machine_code`` when it was built from the same
sources), creates a new venv in a temporary directory,
installs the wheel there with ``--no-deps`` and makes the running
interpreter's site-packages importable by a ``.pth`` file (the
dependencies without a download; svmlab itself is the wheel's), and runs
every case with that venv's Python from an empty directory.  The default,
``editable``, runs this checkout.

Run from an installed svmlab (a wheel in a venv, the way Colab installs:
``pip install svmlab-*.whl``, then ``python -m svmlab.bench --suite
cold-start`` from any directory), there is no checkout: the default then
becomes ``installed``, which runs every case with the running interpreter,
without ``PYTHONPATH``, from an empty directory, and labels the rows so;
``editable-venv`` and ``wheel``, which build from a checkout, stop with an
error saying so.

At ``--size smoke`` (CI) only the first columns are measured, on the dense
input and one more kind per estimator, and the background process is
stopped at once: the suite shows that a cold first fit runs, not how long a
compilation takes.  The peer is scikit-learn's ``SVC`` (LIBSVM, nothing to
compile) fitting the same problem in a fresh process.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time

from ._harness import Result, suite

#: (label, estimator expression, kinds) -- default parameters, as a user writes them
ESTIMATORS = [
    ("SMOClassifier()", "svmlab.SMOClassifier()"),
    ("SMOClassifier(selection='wss2')", "svmlab.SMOClassifier(selection='wss2')"),
    ("IRWLSClassifier()", "svmlab.IRWLSClassifier()"),
    ("ChunkingClassifier()", "svmlab.ChunkingClassifier()"),
    ("DecompositionClassifier()", "svmlab.DecompositionClassifier()"),
    ("CuttingPlaneClassifier()", "svmlab.CuttingPlaneClassifier()"),
    ("CuttingPlaneClassifier(method='ocas')", "svmlab.CuttingPlaneClassifier(method='ocas')"),
    ("CuttingPlaneOrdinalRegressor()", "svmlab.CuttingPlaneOrdinalRegressor()"),
    ("SVC()", "svmlab.SVC()"),
    ("NuSVC()", "svmlab.NuSVC()"),
    ("SVR()", "svmlab.SVR()"),
    ("NuSVR()", "svmlab.NuSVR()"),
    ("OneClassSVM()", "svmlab.OneClassSVM()"),
]
PEER = ("SVC() (LIBSVM)", "sklearn.svm.SVC()")

#: counts the compilations in the measured process (``compiled``)
_COUNT = textwrap.dedent("""
    from numba.core import event
    compiled = []
    class _Count(event.Listener):
        def on_start(self, e):
            compiled.append(e.data["dispatcher"].py_func.__qualname__)
        def on_end(self, e):
            pass
    event.register("numba:compile", _Count())
""")

_SCRIPT = textwrap.dedent("""
    import json, sys, time
    t0 = time.perf_counter()
    import numpy as np, scipy.sparse as sp
    import svmlab, sklearn.svm
    from svmlab import _jit
""") + _COUNT + textwrap.dedent("""
    expr, kind, wait = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
    est = eval(expr)
    t1 = time.perf_counter()
    rng = np.random.RandomState(0)
    X = rng.randn(300, 5)
    y = np.where(X[:, 0] + 0.3 * rng.randn(300) > 0, 1, -1)
    if "Ordinal" in expr:
        y = np.digitize(X[:, 0] + 0.3 * rng.randn(300), [-0.5, 0.5])
    elif "SVR" in expr:
        y = X[:, 0] + 0.3 * rng.randn(300)
    elif "OneClass" in expr:
        y = None
    if kind == "csr":
        X = sp.csr_matrix(np.where(np.abs(X) > 0.5, X, 0.0))
    elif kind == "binary":
        X = sp.csr_matrix((X > 0.3).astype(np.float64))
    t2 = time.perf_counter(); est.fit(X, y); t3 = time.perf_counter()
    eval(expr).fit(X, y); t4 = time.perf_counter()
    out = dict(import_s=t1 - t0, first_s=t3 - t2, second_s=t4 - t3,
               compiled_in_first_fits=len(compiled))
    w = _jit._the_worker
    if wait:
        _jit.wait_background()
        out["compiled_after_s"] = time.perf_counter() - t2
        t5 = time.perf_counter(); eval(expr).fit(X, y)
        out["warm_s"] = time.perf_counter() - t5
    elif w is not None and w.proc is not None:
        w.proc.kill()
    print(json.dumps(out))
""")


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

#: the sizes users start with: (case, estimator label, expression, data name)
SIZED = [
    ("digits 1797x64", "SVC()", "svmlab.SVC()", "digits"),
    ("3000x20", "SVC()", "svmlab.SVC()", "clf"),
    ("3000x20", "SMOClassifier()", "svmlab.SMOClassifier()", "clf"),
    ("2000x10 regression", "SVR()", "svmlab.SVR()", "reg"),
    ("3000x20", "OneClassSVM()", "svmlab.OneClassSVM()", "one"),
    ("a9a 32561x123", "SVC()", "svmlab.SVC()", "a9a"),
]

_SIZED_SCRIPT = textwrap.dedent("""
    import json, sys, time
    t0 = time.perf_counter()
    import numpy as np
    import svmlab
    from svmlab import _shipped
""") + _COUNT + textwrap.dedent("""
    expr, data = sys.argv[1], sys.argv[2]
    from sklearn import datasets as skd
    if data == "digits":
        X, y = skd.load_digits(return_X_y=True)
    elif data in ("clf", "one"):
        X, y = skd.make_classification(3000, 20, random_state=0)
        if data == "one":
            y = None
    elif data == "reg":
        X, y = skd.make_regression(2000, 10, noise=10.0, random_state=0)
    elif data == "a9a":
        X, y = svmlab.datasets.load("a9a", "train")
    elif data == "tiny":
        X, y = skd.make_classification(200, 5, random_state=0)
    t1 = time.perf_counter()
    est = eval(expr); est.fit(X, y); t2 = time.perf_counter()
    n_first = len(compiled)
    eval(expr).fit(X, y); t3 = time.perf_counter()
    w = svmlab._jit._the_worker
    if w is not None and w.proc is not None:
        w.proc.kill()
    import os
    print(json.dumps(dict(import_s=t1 - t0, first_s=t2 - t1, second_s=t3 - t2,
                          compiled_in_first_fits=n_first, load=os.getloadavg()[0],
                          compiled_in_second_fit=len(compiled) - n_first,
                          shipped=_shipped.status()[1], svmlab_file=svmlab.__file__)))
""")

_WARM_SCRIPT = textwrap.dedent("""
    import json, resource, sys, time
    import svmlab
    out = {}
    for fam in sys.argv[1:]:
        c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0, w0 = time.process_time(), time.perf_counter()
        svmlab.warm_up(fam)
        c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        child = (c1.ru_utime + c1.ru_stime) - (c0.ru_utime + c0.ru_stime)
        out[fam] = dict(cpu_s=time.process_time() - t0 + child,
                        wall_s=time.perf_counter() - w0)
    print(json.dumps(out))
""")


_TOUR_SCRIPT = textwrap.dedent("""
    import json, os, sys, time, contextlib, io
    t0 = time.perf_counter()
""") + _COUNT + textwrap.dedent("""
    from svmlab import tour
    with contextlib.redirect_stdout(io.StringIO()):
        tour.main(["--out", sys.argv[1]])
    print(json.dumps(dict(wall_s=time.perf_counter() - t0, compiled=len(compiled),
                          load=os.getloadavg()[0])))
""")


def is_checkout(root=None):
    """Whether svmlab runs from a source checkout (``ROOT`` has svmlab's
    ``pyproject.toml``), not from an installed package in site-packages."""
    root = root or ROOT
    return (os.path.isfile(os.path.join(root, "pyproject.toml"))
            and os.path.isdir(os.path.join(root, "svmlab")))


class Install:
    """Where the measured processes take svmlab from: this checkout
    (``editable``), a fresh clone installed with ``pip install -e`` into a
    new venv (``editable-venv``), a wheel installed into a new venv
    (``wheel``), or the running interpreter's installed svmlab
    (``installed``; what ``editable`` means when there is no checkout)."""

    KINDS = ("editable", "editable-venv", "wheel", "installed")

    def __init__(self, kind="editable", root=None):
        if kind not in self.KINDS:
            raise ValueError(f"install must be 'editable', 'editable-venv', 'wheel' or "
                             f"'installed', got {kind!r}")
        if not is_checkout(root):
            if kind in ("editable-venv", "wheel"):
                raise ValueError(f"install {kind!r} builds svmlab from a source checkout, and "
                                 f"this svmlab is installed ({ROOT}): run the suite from a "
                                 f"checkout, or without --install to measure this installation")
            kind = "installed"
        self.kind = kind
        self.python = sys.executable
        self.tmp = None
        self.build_s = None
        self.build_cpu_s = None
        self.wheel = None

    def __enter__(self):
        if self.kind == "wheel":
            self.tmp = tempfile.mkdtemp(prefix="svmlab-wheel-")
            self.python, self.wheel, self.build_s = install_wheel(self.tmp)
        elif self.kind == "editable-venv":
            self.tmp = tempfile.mkdtemp(prefix="svmlab-editable-")
            self.python, self.build_s, self.build_cpu_s = install_editable(self.tmp)
        return self

    def __exit__(self, *exc):
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)
        return False

    def run(self, args, env_extra, timeout, cache=None):
        """Run ``python args`` in a fresh process with an empty numba cache
        (or the folder ``cache``)."""
        with tempfile.TemporaryDirectory(prefix="svmlab-cold-") as tmp:
            cache = cache or tmp
            env = dict(os.environ, NUMBA_CACHE_DIR=cache, SVMLAB_PROGRESS="0", **env_extra)
            if self.kind == "editable":
                env["PYTHONPATH"] = ROOT + (os.pathsep + os.environ["PYTHONPATH"]
                                            if os.environ.get("PYTHONPATH") else "")
                cwd = None
            else:  # a venv's svmlab, or the running interpreter's installed one
                env.pop("PYTHONPATH", None)
                cwd = tmp  # an empty directory: no source tree on sys.path
            return subprocess.run([self.python, *args], env=env, cwd=cwd,
                                  capture_output=True, text=True, timeout=timeout)


def install_wheel(tmp, python=None):
    """Build svmlab's wheel (with the shipped machine code) into ``tmp/dist``,
    create the venv ``tmp/venv`` (no system site-packages) and install the
    wheel there; the dependencies come from ``python``'s site-packages
    (default: the running interpreter's) through a ``.pth`` file.  Returns
    (the venv's python, the wheel's path, seconds spent building)."""
    import glob

    python = python or sys.executable
    dist = os.path.join(tmp, "dist")
    t0 = time.perf_counter()
    # pip's isolated build, as a user's: the build backend asks for
    # svmlab's dependencies (build_backend/_svmlab_build.py)
    subprocess.run([python, "-m", "pip", "wheel", "--no-deps", "-q", "-w", dist, ROOT],
                   check=True)
    build_s = time.perf_counter() - t0
    (wheel,) = glob.glob(os.path.join(dist, "svmlab-*.whl"))
    venv = os.path.join(tmp, "venv")
    subprocess.run([python, "-m", "venv", venv], check=True)
    vpy = os.path.join(venv, "bin", "python")
    subprocess.run([vpy, "-m", "pip", "install", "-q", "--no-deps", wheel], check=True)
    _deps_pth(vpy, python)
    return vpy, wheel, build_s


def _deps_pth(vpy, python):
    import sysconfig

    site = subprocess.run([vpy, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    deps = sysconfig.get_paths()["purelib"] if python == sys.executable else subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True).stdout.strip()
    with open(os.path.join(site, "zz_svmlab_bench_deps.pth"), "w") as f:
        f.write(deps + "\n")  # appended after the venv's own site-packages


def install_editable(tmp, python=None):
    """Clone this checkout's ``HEAD`` into ``tmp/src`` (uncommitted changes
    are not in it), create the venv ``tmp/venv`` and ``pip install --no-deps
    -e`` the clone there (pip's isolated build, as the README's install:
    the backend compiles the machine code into the clone); the dependencies
    come from ``python``'s site-packages through a ``.pth`` file.  Returns
    (the venv's python, wall seconds and CPU-seconds of the install)."""
    import resource

    python = python or sys.executable
    src = os.path.join(tmp, "src")
    subprocess.run(["git", "clone", "--quiet", ROOT, src], check=True)
    venv = os.path.join(tmp, "venv")
    subprocess.run([python, "-m", "venv", venv], check=True)
    vpy = os.path.join(venv, "bin", "python")
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NUMBA_CACHE_DIR")}
    subprocess.run([vpy, "-m", "pip", "install", "-q", "--no-deps", "-e", src], check=True,
                   env=env)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
    _deps_pth(vpy, python)
    return vpy, wall, cpu


_INSTALL = Install()


def measure(expr, kind="dense", mode="auto", wait=False, timeout=1800, install=None):
    """Run the cold-start script in a fresh process with an empty numba cache;
    returns its measurements (a dict of seconds), or raises RuntimeError."""
    install = install or _INSTALL
    proc = install.run(["-c", _SCRIPT, expr, kind, "1" if wait else "0"],
                       {"SVMLAB_JIT": mode}, timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"{expr} on {kind}: exit {proc.returncode}: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def measure_sized(expr, data, timeout=3600, install=None):
    """First and second fit of ``expr`` on the named data (:data:`SIZED`, or
    ``"tiny"``) in a fresh process with an empty numba cache."""
    install = install or _INSTALL
    proc = install.run(["-c", _SIZED_SCRIPT, expr, data], {"SVMLAB_JIT": "auto"}, timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"{expr} on {data}: exit {proc.returncode}: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def measure_tour(timeout=3600, install=None):
    """``python -m svmlab.tour`` (its plot into a temporary folder) in a fresh
    process with an empty numba cache, then once more in another process
    with the cache the first left: {first: {...}, warm: {...}}, each with
    the wall seconds, the compile events and the load."""
    install = install or _INSTALL
    out = {}
    with tempfile.TemporaryDirectory(prefix="svmlab-tour-") as tmp:
        cache = os.path.join(tmp, "cache")
        os.makedirs(cache)
        for which in ("first", "warm"):
            proc = install.run(["-c", _TOUR_SCRIPT, os.path.join(tmp, "plot")],
                               {"SVMLAB_JIT": "auto"}, timeout, cache=cache)
            if proc.returncode != 0:
                raise RuntimeError(f"tour: exit {proc.returncode}: {proc.stderr[-2000:]}")
            out[which] = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


def measure_warm_up(families=(), timeout=7200, install=None):
    """``svmlab.warm_up(family)`` for each family in turn, in one fresh
    process with an empty numba cache: {family: {cpu_s, wall_s}}."""
    install = install or _INSTALL
    if not families:
        from svmlab._warm import FAMILIES

        families = tuple(FAMILIES)
    proc = install.run(["-c", _WARM_SCRIPT, *families], {}, timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"warm_up: exit {proc.returncode}: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


@suite("cold-start", "first fit of every default estimator in a fresh process with an empty "
       "numba cache (import, first, second, compiled-after, warm and eager first fit)")
def cold_start(ctx):
    kind = os.environ.get("SVMLAB_BENCH_INSTALL", "editable") or "editable"
    with Install(kind) as install:
        global _INSTALL
        old, _INSTALL = _INSTALL, install
        try:
            if install.wheel is not None:
                ctx.log(f"wheel {os.path.basename(install.wheel)} built in "
                        f"{install.build_s:.0f} s, installed into a new venv")
            elif install.build_s is not None:
                ctx.log(f"pip install --no-deps -e of a fresh clone into a new venv: "
                        f"{install.build_s:.0f} s wall, {install.build_cpu_s:.0f} CPU-s")
                ctx.emit(Result(case="pip install -e (fresh clone, new venv, no deps)",
                                solver="install", time_s=install.build_s,
                                extra={"install": kind, "cpu_s": install.build_cpu_s}))
            if install.kind == "installed":
                ctx.log(f"no checkout: measuring the installed svmlab ({ROOT}) with "
                        f"{install.python}")
            _cold_start(ctx, install.kind)
        finally:
            _INSTALL = old


#: the suite's parts, in the order they run (:envvar:`SVMLAB_BENCH_COLD_PARTS`)
PARTS = ("toy", "sized", "warm_up")


def parts():
    """The parts to run: :envvar:`SVMLAB_BENCH_COLD_PARTS`, a comma-separated
    subset of :data:`PARTS` (default: all).  On a loaded machine the toy
    table at full size (each estimator's background compilation awaited,
    and an eager first fit) takes the longest; the sized cases and
    ``warm_up()`` are what issue 29 asks about."""
    raw = os.environ.get("SVMLAB_BENCH_COLD_PARTS", "").strip()
    if not raw:
        return PARTS
    want = tuple(p.strip() for p in raw.split(",") if p.strip())
    bad = [p for p in want if p not in PARTS]
    if bad or not want:
        raise ValueError(f"SVMLAB_BENCH_COLD_PARTS must name some of {', '.join(PARTS)}, "
                         f"got {raw!r}")
    return tuple(p for p in PARTS if p in want)


def _cold_start(ctx, install):
    which = parts()
    full = ctx.size == "full"
    if "toy" in which:
        _toy(ctx, install, full)
    if "sized" in which:
        _sized(ctx, install, full)
    if full and "warm_up" in which:
        _warm_up(ctx, install)


def _toy(ctx, install, full):
    rows = []
    peer = measure(PEER[1])
    ctx.emit(Result(case="300x5 dense", solver=PEER[0], time_s=peer["first_s"], peer=True,
                    extra={"import_s": peer["import_s"]}))
    kinds = ("dense", "csr", "binary")
    for label, expr in ESTIMATORS:
        for i, kind in enumerate(kinds):
            if not full and i > 1:
                continue
            if not full and i == 1:
                kind = "binary" if "Cutting" in label else "csr"
            m = measure(expr, kind, wait=full and kind == "dense")
            if full and kind == "dense":
                m["eager_first_s"] = measure(expr, kind, mode="eager")["first_s"]
            rows.append((label, kind, m))
            ctx.emit(Result(case=f"300x5 {kind}", solver=label, time_s=m["first_s"],
                            extra={"install": install, **{k: round(v, 4) for k, v in m.items()}}))
            ctx.log(f"{label} {kind}: " + ", ".join(f"{k} {v:.3f}" for k, v in m.items()))
    cols = ["import_s", "first_s", "second_s", "compiled_in_first_fits", "compiled_after_s",
            "warm_s", "eager_first_s"]
    head = ("estimator", "input", "import", "first fit", "second fit", "compiled here",
            "compiled after", "warm fit", "eager first fit")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines.append(f"| {PEER[0]} | dense | {peer['import_s']:.2f} | {peer['first_s']:.3f} | "
                 f"{peer['second_s']:.3f} | | | | |")
    for label, kind, m in rows:
        cells = [("" if c not in m else f"{m[c]}" if c == "compiled_in_first_fits"
                  else f"{m[c]:.3f}") for c in cols]
        lines.append(f"| {label} | {kind} | " + " | ".join(cells) + " |")
    table = "\n".join(lines)
    ctx.log("cold start (seconds):\n" + table)
    print(table)


def _sized(ctx, install, full):
    """The sizes users start with (smoke: only where shipped code loads, as
    the compilation would take minutes)."""
    from svmlab import _shipped

    shipped = install != "editable" or _shipped.status()[0]
    if not full and not shipped:
        ctx.log("sized cases skipped at smoke size: no shipped machine code here "
                f"({_shipped.status()[1]})")
        return
    head = ("case", "estimator", "install", "first fit", "warm fit", "first - warm",
            "compiled in first fit", "load", "shipped code")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    imported = set()
    for case, label, expr, data in SIZED:
        if data == "a9a" and not full:
            continue
        m = measure_sized(expr, data)
        imported.add(m["svmlab_file"])
        ctx.emit(Result(case=case, solver=f"{label} first fit", time_s=m["first_s"],
                        extra={"install": install, **m}))
        ctx.emit(Result(case=case, solver=f"{label} warm fit", time_s=m["second_s"],
                        extra={"install": install}))
        lines.append(f"| {case} | {label} | {install} | {m['first_s']:.2f} | "
                     f"{m['second_s']:.2f} | {m['first_s'] - m['second_s']:.2f} | "
                     f"{m['compiled_in_first_fits']} | {m['load']:.1f} | {m['shipped']} |")
    if full:
        t = measure_tour()
        f, w = t["first"], t["warm"]
        for which, v in t.items():
            ctx.emit(Result(case="python -m svmlab.tour", solver=f"tour, {which} run",
                            time_s=v["wall_s"], extra={"install": install, **v}))
        lines.append(f"| python -m svmlab.tour (whole run) | SMOClassifier | {install} | "
                     f"{f['wall_s']:.2f} | {w['wall_s']:.2f} | {f['wall_s'] - w['wall_s']:.2f} "
                     f"| {f['compiled']} | {f['load']:.1f} | |")
    table = "\n".join(lines)
    ctx.log("the sized cases imported svmlab from " + ", ".join(sorted(imported)))
    ctx.log("first fits at the sizes users start with (seconds):\n" + table)
    print(table)


def _warm_up(ctx, install):
    m = measure_warm_up()
    for fam, v in m.items():
        ctx.emit(Result(case="warm_up() in a fresh process", solver=f"warm_up({fam!r})",
                        time_s=v["wall_s"], extra={"install": install, **v}))
    ctx.log("warm_up() per family (CPU-seconds, this process and its children): "
            + ", ".join(f"{f} {v['cpu_s']:.1f}" for f, v in m.items()))
