"""The ``gallery`` suite: scikit-learn's example gallery with svmlab swapped in.

Issue 31 asks that every script of scikit-learn's example gallery that uses
``sklearn.svm`` finish, with svmlab's drop-in classes in place of
scikit-learn's, in no more than scikit-learn's time, and print nothing
scikit-learn's classes would not print.  This suite measures exactly that.

The gallery is not part of scikit-learn's wheel.  Point the suite at the
``examples/`` folder of scikit-learn's source distribution with
:envvar:`SVMLAB_GALLERY` (or ``python -m svmlab.bench --suite gallery
--examples DIR``); the suite stops with a clear error when it is not set or
holds no such scripts.

For each script that imports ``sklearn.svm`` (``sklearn.svm`` or ``from
sklearn import svm`` in its text), the suite runs it in a fresh Python
process, twice per round and alternated (stock, svmlab, stock, svmlab, ...),
because the machines this runs on are shared and a slow minute must fall
on both variants alike:

* **stock**: the script as shipped;
* **svmlab**: the same, after the runner (:data:`RUNNER`) replaces
  ``SVC``, ``NuSVC``, ``SVR``, ``NuSVR``, ``OneClassSVM``, ``LinearSVC``,
  ``LinearSVR`` and ``l1_min_c`` in the ``sklearn.svm`` module by svmlab's.
  Scripts import the names from that module (``from sklearn.svm import
  SVC`` or ``svm.SVC``) after the runner has run, so they get svmlab's.

Both variants run with matplotlib's ``Agg`` backend, ``plt.show`` a no-op,
in a scratch working directory, under a wall-clock cap (``cap_factor`` x
the stock run + ``cap_extra_s``, at most ``max_cap_s``): a run past it is
killed with its whole process group and recorded as ``killed``, so a hang
is a result, not a stalled benchmark.

Each run records its exit status, wall time, CPU time (user + system of the
process and its waited-for children, from ``getrusage(RUSAGE_CHILDREN)``:
less sensitive than wall time to the other processes on a busy machine),
the number of ``ConvergenceWarning`` lines on stderr, and, for the svmlab
variant, its *noise*: stderr lines the stock run did not print that are not
part of a warning, and any progress bar (tqdm's ``|###| n/N`` pattern) on
either stream.  The runner also times every ``fit`` of the swapped classes
(top-level calls in the script's own process; fits inside joblib workers
are not seen) so a slow script names the fits that make it slow, and the
garbage collector's CPU: during the run, and at exit (the CPU after the last
``atexit`` handler, CPython's finalisation, which runs full collections over
every object still alive).  A fresh svmlab process leaves about 25 % more
objects alive (numba's, mostly), and every full collection pays for them:
the part of the svmlab variant's extra CPU that is in no fit and no import
(docs/decisions/35i01-fresh-process-imports-and-exit.md).

A script whose stock run fails for want of something this machine lacks
(network access to download a data set, an optional package such as
pandas) is ``unavailable (reason)``, not a failure of svmlab; data sets in
scikit-learn's cache (``~/scikit_learn_data`` or :envvar:`SCIKIT_LEARN_DATA`)
are used when they are there.

Times are the minimum over the rounds of each variant (the first svmlab run
of a script may also load or compile numba code; the minimum is the cost of
a warm installation).
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ._harness import Result, load_average, suite

#: environment variable naming the gallery's ``examples/`` folder
ENV_VAR = "SVMLAB_GALLERY"
#: names of ``sklearn.svm`` replaced by svmlab's in the swapped variant
SWAPPED = ("SVC", "NuSVC", "SVR", "NuSVR", "OneClassSVM", "LinearSVC", "LinearSVR", "l1_min_c")
#: the text that marks a script as a user of sklearn.svm
USES_SVM = re.compile(r"sklearn\.svm|from sklearn import svm")

#: The child process: ``python -c RUNNER script variant fitlog``.  It sets
#: matplotlib to Agg, makes ``plt.show`` a no-op, swaps the classes (variant
#: ``svmlab``: the names leave ``sklearn.svm`` and its module ``__getattr__``
#: takes each from svmlab on first use, so a script pays for the svmlab
#: modules it uses, as with ``from svmlab import ...``), wraps the ``fit``
#: of the classes in use to time each top-level call, then runs the script
#: as ``__main__``.  The fit log is
#: written at exit (also on an exception or ``sys.exit``).
RUNNER = r'''
import atexit, functools, gc, json, os, runpy, sys, time
script, variant, fitlog = sys.argv[1], sys.argv[2], sys.argv[3]
# the garbage collector's CPU (all collections, and the full ones counted) and
# the CPU at the last atexit handler (registered first, so it runs last): the
# parent takes the exit's CPU, CPython's finalisation, as its total less this
_gc = [0.0, 0, 0.0]
def _gc_cb(phase, info):
    if phase == "start":
        _gc[2] = time.process_time()
    else:
        _gc[0] += time.process_time() - _gc[2]
        _gc[1] += info["generation"] == 2
gc.callbacks.append(_gc_cb)
def _exit_mark():
    if fitlog:
        with open(fitlog + ".exit", "w") as fh:
            json.dump({"cpu_s": time.process_time(), "gc_cpu_s": _gc[0], "gc_full": _gc[1]}, fh)
atexit.register(_exit_mark)
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
plt.show = lambda *a, **k: None
import sklearn.svm as _sksvm
NAMES = %(names)r
_fits, _depth = [], [0]
def _wrap(cls):
    orig = cls.fit
    @functools.wraps(orig)
    def fit(self, X, *args, **kwargs):
        if _depth[0]:
            return orig(self, X, *args, **kwargs)
        _depth[0] += 1
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            return orig(self, X, *args, **kwargs)
        finally:
            _depth[0] -= 1
            p = {}
            for k in ("kernel", "C", "nu", "gamma", "degree", "probability", "tol",
                      "max_iter", "loss", "dual", "penalty"):
                if k in getattr(self, "__dict__", {}):
                    v = self.__dict__[k]
                    p[k] = v if isinstance(v, (int, float, str, bool, type(None))) else repr(v)
            shape = getattr(X, "shape", None)
            _fits.append({"cls": type(self).__name__, "shape": list(shape) if shape else None,
                          "params": p, "wall_s": time.perf_counter() - t0,
                          "cpu_s": time.process_time() - c0})
    cls.fit = fit
if variant == "svmlab":
    # lazily, as a user's "from svmlab import SVC" would: a name is taken
    # from svmlab (and svmlab's modules behind it imported) on first use
    _prev_getattr = getattr(_sksvm, "__getattr__", None)
    for _n in NAMES:
        if _n in vars(_sksvm):
            delattr(_sksvm, _n)
    def _lazy(name):
        if name in NAMES:
            t0, c0 = time.perf_counter(), time.process_time()
            import svmlab
            value = getattr(svmlab, name)
            if isinstance(value, type):
                _wrap(value)
            setattr(_sksvm, name, value)
            _fits.append({"cls": "(import svmlab)", "shape": None, "params": {"name": name},
                          "wall_s": time.perf_counter() - t0,
                          "cpu_s": time.process_time() - c0})
            return value
        if _prev_getattr is not None:
            return _prev_getattr(name)
        raise AttributeError(f"module 'sklearn.svm' has no attribute {name!r}")
    _sksvm.__getattr__ = _lazy
else:
    for _n in NAMES:
        _c = getattr(_sksvm, _n)
        if isinstance(_c, type):
            _wrap(_c)
def _dump():
    if fitlog:
        with open(fitlog, "w") as fh:
            json.dump(_fits, fh)
atexit.register(_dump)
sys.argv = [script]
sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
runpy.run_path(script, run_name="__main__")
''' % {"names": SWAPPED}

#: stderr text of a stock run that means "this machine lacks something",
#: with the reason shown in the table
_UNAVAILABLE = (
    (re.compile(r"No module named '([^']+)'"), "module {0} missing"),
    (re.compile(r"(URLError|HTTPError|urlopen error|Temporary failure in name resolution"
                r"|Name or service not known|Network is unreachable|ConnectionError"
                r"|Max retries exceeded|getaddrinfo failed)"), "needs network ({0})"),
    (re.compile(r"(fetch_\w+)\b.*(?:Error|error)"), "data set download ({0})"),
    (re.compile(r"(FileNotFoundError|OSError): .*(scikit_learn_data|Data not found)"),
     "data set not cached ({0})"),
)
_PROGRESS_BAR = re.compile(r"\d+%\|.*\|\s*\d+/\d+|\d+/\d+ \[\d+:\d+")
_WARNING_LINE = re.compile(r"^\S.*:\d+: \w*Warning: ")
_CONVERGENCE = re.compile(r"^\S.*:\d+: ConvergenceWarning: ", re.MULTILINE)


@dataclass
class Run:
    """One run of one script in one variant."""

    variant: str
    status: str  # "ok", "failed (rc N)", "killed (cap N s)"
    rc: int | None
    wall_s: float
    cpu_s: float
    cap_s: float
    convergence_warnings: int
    stderr: str = field(repr=False, default="")
    stdout_tail: str = field(repr=False, default="")
    fits: list = field(repr=False, default_factory=list)
    #: CPU after the script's last atexit handler: CPython's finalisation,
    #: whose full garbage collections scan every object still alive
    #: (docs/decisions/35i01-fresh-process-imports-and-exit.md); None when the
    #: child did not reach it
    exit_cpu_s: float | None = None
    #: CPU of the garbage collector's collections before that, and how many
    #: were full (generation 2) collections
    gc_cpu_s: float | None = None
    gc_full: int | None = None


def examples_dir(path=None) -> Path:
    """The gallery folder: ``path``, else :envvar:`SVMLAB_GALLERY`; a clear
    error when neither names a folder holding scripts that use sklearn.svm."""
    raw = path if path is not None else os.environ.get(ENV_VAR)
    if not raw:
        raise FileNotFoundError(
            f"the gallery suite needs scikit-learn's examples/ folder: set {ENV_VAR}=DIR "
            "(or pass --examples DIR); it ships in scikit-learn's source distribution, e.g. "
            "pip download --no-deps --no-binary :all: scikit-learn==<version>, then "
            "extract <sdist>/examples")
    root = Path(raw).expanduser()
    if not root.is_dir():
        raise FileNotFoundError(f"{ENV_VAR}={raw!r} is not a folder")
    if not find_scripts(root):
        raise FileNotFoundError(f"{raw!r} holds no example script that uses sklearn.svm "
                                "(expected scikit-learn's examples/ folder)")
    return root


def find_scripts(root, only=None) -> list[Path]:
    """Every ``*.py`` under ``root`` whose text uses ``sklearn.svm``, sorted;
    ``only``: keep those whose relative path contains one of these strings."""
    root = Path(root)
    out = []
    for p in sorted(root.rglob("*.py")):
        try:
            text = p.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if not USES_SVM.search(text):
            continue
        rel = str(p.relative_to(root))
        if only and not any(s in rel for s in only):
            continue
        out.append(p)
    return out


def _children_cpu():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def run_script(script, variant, cap_s, python=None, env=None) -> Run:
    """Run ``script`` once in a fresh process (``variant`` ``"stock"`` or
    ``"svmlab"``), killed with its process group after ``cap_s`` seconds."""
    if variant not in ("stock", "svmlab"):
        raise ValueError(f"variant must be 'stock' or 'svmlab', got {variant!r}")
    script = Path(script).resolve()
    work = Path(tempfile.mkdtemp(prefix="svmlab-gallery-"))
    fitlog = work / "fits.json"
    child_env = dict(os.environ if env is None else env)
    child_env["MPLBACKEND"] = "Agg"
    cmd = [python or sys.executable, "-c", RUNNER, str(script), variant, str(fitlog)]
    cpu0, t0 = _children_cpu(), time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=work, env=child_env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            start_new_session=True, text=True, errors="replace")
    killed = False
    try:
        out, err = proc.communicate(timeout=cap_s)
    except subprocess.TimeoutExpired:
        killed = True
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = proc.communicate()
    wall = time.perf_counter() - t0
    cpu = _children_cpu() - cpu0
    if not killed:
        try:  # joblib/loky workers left behind by the script
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    exit_cpu = gc_cpu = gc_full = None
    mark = Path(str(fitlog) + ".exit")
    if mark.exists():
        try:
            m = json.loads(mark.read_text())
            exit_cpu, gc_cpu, gc_full = cpu - m["cpu_s"], m["gc_cpu_s"], m["gc_full"]
        except (ValueError, KeyError, TypeError):
            pass
    fits = []
    if fitlog.exists():
        try:
            fits = json.loads(fitlog.read_text())
        except ValueError:
            fits = []
    shutil.rmtree(work, ignore_errors=True)
    rc = None if killed else proc.returncode
    status = (f"killed (cap {cap_s:.0f} s)" if killed else "ok" if rc == 0
              else f"failed (rc {rc})")
    return Run(variant=variant, status=status, rc=rc, wall_s=wall, cpu_s=cpu, cap_s=cap_s,
               convergence_warnings=len(_CONVERGENCE.findall(err)), stderr=err,
               stdout_tail=out[-2000:], fits=fits, exit_cpu_s=exit_cpu, gc_cpu_s=gc_cpu,
               gc_full=gc_full)


def unavailable_reason(stderr):
    """Why a failed stock run could not run here (None: a real failure)."""
    tail = stderr[-4000:]
    for rx, fmt in _UNAVAILABLE:
        m = rx.search(tail)
        if m:
            return fmt.format(m.group(1))
    return None


def noise(stock: Run, swapped: Run) -> list[str]:
    """Lines the svmlab run printed that the stock run did not: stderr lines
    absent from the stock stderr, minus warnings (a warning line and the one
    indented source line under it), plus any progress bar on either stream."""
    seen = set(stock.stderr.splitlines())
    extra, skip_indented = [], False
    for piece in swapped.stderr.replace("\r", "\n").splitlines():
        if _WARNING_LINE.match(piece):
            skip_indented = True
            continue
        if skip_indented and piece.startswith(" ") and not _PROGRESS_BAR.search(piece):
            skip_indented = False  # the warning's source line, one line
            continue
        skip_indented = False
        if piece.strip() and (piece not in seen or _PROGRESS_BAR.search(piece)):
            extra.append(piece)
    extra += [line for line in swapped.stdout_tail.replace("\r", "\n").splitlines()
              if _PROGRESS_BAR.search(line)]
    return extra


def fit_summary(fits, top=5):
    """The fits that take the time: groups of (class, shape, params) by total
    wall time, largest first, as dicts with count and total/max seconds."""
    groups = {}
    for f in fits:
        if f["cls"].startswith("("):
            continue
        key = (f["cls"], tuple(f["shape"] or ()), json.dumps(f["params"], sort_keys=True))
        g = groups.setdefault(key, {"cls": f["cls"], "shape": f["shape"], "params": f["params"],
                                    "n": 0, "wall_s": 0.0, "max_s": 0.0})
        g["n"] += 1
        g["wall_s"] += f["wall_s"]
        g["max_s"] = max(g["max_s"], f["wall_s"])
    return sorted(groups.values(), key=lambda g: -g["wall_s"])[:top]


def _fit_total(fits):
    return sum(f["wall_s"] for f in fits if not f["cls"].startswith("("))


def compare_script(script, rounds=2, cap_factor=10.0, cap_extra_s=60.0, max_cap_s=900.0,
                   python=None, log=print):
    """Run ``script`` alternated, stock then svmlab, ``rounds`` times each;
    returns a dict (see :func:`gallery`'s table for the fields)."""
    runs = {"stock": [], "svmlab": []}
    row = {"script": str(script), "status": None, "reason": None}
    for r in range(rounds):
        stock = run_script(script, "stock", max_cap_s, python=python)
        runs["stock"].append(stock)
        if stock.rc != 0:
            reason = unavailable_reason(stock.stderr)
            row["status"] = (f"unavailable ({reason})" if reason
                             else f"stock {stock.status}")
            row["stderr_tail"] = stock.stderr[-600:]
            break
        cap = min(max_cap_s, cap_factor * min(s.wall_s for s in runs["stock"]) + cap_extra_s)
        swapped = run_script(script, "svmlab", cap, python=python)
        runs["svmlab"].append(swapped)
        log(f"{script}: round {r + 1}: stock {stock.wall_s:.2f} s (cpu {stock.cpu_s:.2f}), "
            f"svmlab {swapped.wall_s:.2f} s (cpu {swapped.cpu_s:.2f}) {swapped.status}")
        if swapped.rc != 0:
            break
    row["runs"] = {v: [{k: x for k, x in asdict(run).items()
                        if k not in ("stderr", "stdout_tail", "fits")} for run in rs]
                   for v, rs in runs.items()}
    if row["status"] is not None:
        return row
    st, sv = runs["stock"], runs["svmlab"]
    bad = next((x for x in sv if x.rc != 0), None)
    row["stock_wall_s"] = min(x.wall_s for x in st)
    row["stock_cpu_s"] = min(x.cpu_s for x in st)
    ok = [x for x in sv if x.rc == 0] or sv
    row["svmlab_wall_s"] = min(x.wall_s for x in ok)
    row["svmlab_cpu_s"] = min(x.cpu_s for x in ok)
    row["ratio_wall"] = row["svmlab_wall_s"] / max(row["stock_wall_s"], 1e-9)
    row["ratio_cpu"] = row["svmlab_cpu_s"] / max(row["stock_cpu_s"], 1e-9)
    row["convergence_warnings"] = {"stock": max(x.convergence_warnings for x in st),
                                   "svmlab": max(x.convergence_warnings for x in sv)}
    row["noise"] = sorted({line for x in sv for line in noise(st[0], x)})[:20]
    row["svmlab_convergence_warnings"] = sorted(
        {m.group(0).split(": ", 1)[1] + line for x in sv
         for m, line in ((m, x.stderr[m.end():].split("\n", 1)[0])
                         for m in _CONVERGENCE.finditer(x.stderr))})[:10]
    if bad is not None:
        row["status"] = f"svmlab {bad.status}"
        row["stderr_tail"] = bad.stderr[-1500:]
    else:
        row["status"] = "ok" if not row["noise"] else "ok, noisy"
    best_sv = min(ok, key=lambda x: x.wall_s)
    best_st = min(st, key=lambda x: x.wall_s)
    # the garbage collector's share, from each variant's run of least CPU
    row["gc"] = {v: {"run_cpu_s": b.gc_cpu_s, "full": b.gc_full, "exit_cpu_s": b.exit_cpu_s}
                 for v, b in (("stock", min(st, key=lambda x: x.cpu_s)),
                              ("svmlab", min(ok, key=lambda x: x.cpu_s)))}
    row["fits"] = {"stock": fit_summary(best_st.fits), "svmlab": fit_summary(best_sv.fits),
                   "n_fits": {"stock": len(best_st.fits), "svmlab": len(best_sv.fits)},
                   "fit_wall_s": {"stock": _fit_total(best_st.fits),
                                  "svmlab": _fit_total(best_sv.fits)},
                   "import_svmlab_s": sum(f["wall_s"] for f in best_sv.fits
                                          if f["cls"] == "(import svmlab)")}
    return row


def markdown_table(rows, root=None):
    """The table of benchmarks/README.md: script, stock and svmlab times
    (wall, with CPU in brackets), CPU and wall ratios, fits' share, status."""
    lines = ["| script | stock s (cpu) | svmlab s (cpu) | ratio cpu | ratio wall "
             "| fits s stock / svmlab | import svmlab s | GC in run + exit s stock / svmlab "
             "| ConvergenceWarnings stock / svmlab | status |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        name = r["script"]
        if root is not None:
            try:
                name = str(Path(name).relative_to(root))
            except ValueError:
                pass
        if "ratio_wall" not in r:
            lines.append(f"| {name} | - | - | - | - | - | - | - | - | {r['status']} |")
            continue
        fw = r["fits"]["fit_wall_s"]
        cw = r["convergence_warnings"]
        flag = lambda x: f"**{x:.2f}**" if x > 1.0 else f"{x:.2f}"  # noqa: E731
        lines.append(
            f"| {name} | {r['stock_wall_s']:.2f} ({r['stock_cpu_s']:.2f}) "
            f"| {r['svmlab_wall_s']:.2f} ({r['svmlab_cpu_s']:.2f}) | {flag(r['ratio_cpu'])} "
            f"| {flag(r['ratio_wall'])} | {fw['stock']:.2f} / {fw['svmlab']:.2f} "
            f"| {r['fits'].get('import_svmlab_s', 0.0):.2f} | {_gc_cell(r.get('gc'))} "
            f"| {cw['stock']} / {cw['svmlab']} | {r['status']} |")
    return "\n".join(lines)


def _gc_cell(gc):
    """"0.15 + 0.37 / 0.24 + 0.53": the collector's CPU during the run and
    the exit's CPU (CPython's finalisation, mostly full collections), stock
    then svmlab; "-" where a run did not report them."""
    def one(g):
        if not g or g.get("run_cpu_s") is None or g.get("exit_cpu_s") is None:
            return "-"
        return f"{g['run_cpu_s']:.2f} + {g['exit_cpu_s']:.2f}"
    gc = gc or {}
    return f"{one(gc.get('stock'))} / {one(gc.get('svmlab'))}"


def byte_compile_svmlab(log=print):
    """Write the ``.pyc`` files of the svmlab package being measured, as
    ``pip install`` does for a wheel; True when every file compiled.

    Why: scikit-learn is installed with its bytecode, while a checkout
    run with :envvar:`PYTHONDONTWRITEBYTECODE` set (this project's shared
    machines) has none, and then every fresh svmlab process compiled its
    sources again: 0.1-0.3 s of CPU per script that no installed user pays
    (docs/decisions/31f01-first-fit-in-a-fresh-process.md).  A folder that
    cannot be written (an installed package) keeps what it has."""
    import compileall

    import svmlab

    folder = os.path.dirname(os.path.abspath(svmlab.__file__))
    try:
        ok = bool(compileall.compile_dir(folder, quiet=2))
    except OSError:
        ok = False
    log(f"byte-compiled {folder}" if ok else f"could not byte-compile all of {folder}")
    return ok


def run_gallery(root, only=None, rounds=2, max_cap_s=900.0, log=print, on_row=None):
    """Compare every gallery script under ``root`` (after
    :func:`byte_compile_svmlab`); returns the rows."""
    byte_compile_svmlab(log=log)
    rows = []
    for script in find_scripts(root, only):
        row = compare_script(script, rounds=rounds, max_cap_s=max_cap_s, log=log)
        la = load_average()
        row["load"] = None if la is None else [f"{v:.2f}" for v in la]
        rows.append(row)
        if on_row is not None:
            on_row(row)
    return rows


def _options():
    only = [s for s in os.environ.get("SVMLAB_GALLERY_ONLY", "").split(",") if s.strip()]
    rounds = int(os.environ.get("SVMLAB_GALLERY_ROUNDS", "2"))
    max_cap = float(os.environ.get("SVMLAB_GALLERY_MAX_CAP", "900"))
    return only or None, rounds, max_cap


@suite("gallery", "scikit-learn's example gallery (scripts using sklearn.svm), stock vs svmlab "
       "swapped in: exit status, wall and CPU time, noise, ConvergenceWarnings "
       f"(${ENV_VAR}=examples dir; $SVMLAB_GALLERY_ONLY, _ROUNDS, _MAX_CAP)")
def gallery(ctx):
    root = examples_dir()
    only, rounds, max_cap = _options()
    if ctx.smoke and only is None:
        only = ["svm/plot_separating_hyperplane.py"]
        rounds = 1
    out = ctx.out_dir / "gallery.jsonl"

    def on_row(row):
        with open(out, "a") as fh:
            fh.write(json.dumps(row, default=str) + "\n")
        if "ratio_wall" in row:
            for v, peer in (("stock", True), ("svmlab", False)):
                ctx.emit(Result(case=str(Path(row["script"]).relative_to(root)),
                                solver=("scikit-learn (as shipped)" if peer
                                        else "svmlab swapped in"),
                                time_s=row[f"{v}_wall_s"], peer=peer,
                                extra={"cpu_s": row[f"{v}_cpu_s"], "status": row["status"],
                                       "ratio_cpu": row["ratio_cpu"]}))
        else:
            ctx.log(f"{row['script']}: {row['status']}")
        if row["status"].startswith(("svmlab killed", "svmlab failed")):
            ctx.fail(f"{row['script']}: {row['status']}\n{row.get('stderr_tail', '')}")

    rows = run_gallery(root, only=only, rounds=rounds, max_cap_s=max_cap, log=ctx.log,
                       on_row=on_row)
    table = markdown_table(rows, root)
    (ctx.out_dir / "gallery.md").write_text(table + "\n")
    ctx.log("\n" + table)


def main(argv=None):
    """``python -m svmlab.bench.gallery [--examples DIR] [--only S,..] [--rounds N]
    [--out FILE.jsonl]``: the suite without the harness (rows appended as JSON
    lines); ``--table FILE.jsonl``: the table of rows saved by earlier runs."""
    import argparse

    p = argparse.ArgumentParser(prog="python -m svmlab.bench.gallery")
    p.add_argument("--examples", default=None, help=f"examples/ folder (default ${ENV_VAR})")
    p.add_argument("--only", default="", help="comma-separated substrings of script paths")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--max-cap", type=float, default=900.0)
    p.add_argument("--out", default="gallery.jsonl")
    p.add_argument("--table", default=None, metavar="FILE.jsonl",
                   help="only print the table of saved rows (a later row of a script "
                        "replaces an earlier one)")
    a = p.parse_args(argv)
    if a.table:
        rows = {}
        for line in Path(a.table).read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                rows[row["script"]] = row
        root = Path(a.examples) if a.examples else None
        print(markdown_table(sorted(rows.values(), key=lambda r: r["script"]), root))
        return 0
    root = examples_dir(a.examples)
    only = [s for s in a.only.split(",") if s.strip()] or None

    def on_row(row):
        with open(a.out, "a") as fh:
            fh.write(json.dumps(row, default=str) + "\n")

    rows = run_gallery(root, only=only, rounds=a.rounds, max_cap_s=a.max_cap,
                       log=lambda m: print(m, flush=True), on_row=on_row)
    print(markdown_table(rows, root))
    return 0


if __name__ == "__main__":
    sys.exit(main())
