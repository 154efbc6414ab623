"""``python -m svmlab.bench`` / ``svmlab-bench``: run benchmark suites.

Examples::

    python -m svmlab.bench --list
    python -m svmlab.bench --suite smoke --out /tmp/bench      # < 3 min, CI
    python -m svmlab.bench --suite platt --size full
    python -m svmlab.bench --suite peers,irwls --out results/
    python -m svmlab.bench --suite linear --size full   # equal-objective comparison
    python -m svmlab.bench --suite linear-family        # LinearSVC vs LIBLINEAR, equal objective
    python -m svmlab.bench --suite dense --size full    # dense real-valued data
    python -m svmlab.bench --suite cold-start           # first fits, empty numba cache
    python -m svmlab.bench --suite gallery --examples DIR   # sklearn's gallery, svmlab swapped in

Every suite trains the peers (LIBSVM = sklearn SVC, LIBLINEAR = sklearn
LinearSVC) in the same run; the tables print time ratios against them and
objectives computed the same way for all solvers.  Results go to
``<out>/results-<suites>-<stamp>.json`` and ``.csv`` (with machine info and
package versions) and plots to ``<out>/plots/``.

The suites time compiled code: unless :envvar:`SVMLAB_JIT` is set, the
harness runs in ``eager`` mode (every kernel compiled, or loaded from
numba's cache, before it runs); at full size it first calls
:func:`svmlab.warm_up` (every solver family, with the float32 rows, small
caches and sparse and binary inputs large problems pick by themselves), and
each suite fits once before it times.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import sys
import time
from importlib import import_module
from pathlib import Path

from ._harness import SUITES, Context, fill_ratios, format_table, machine_info, run_suite

#: suite name -> module that registers it (imported lazily)
SUITE_MODULES = {
    "smoke": "svmlab.bench.smoke",
    "platt": "svmlab.bench.platt",
    "irwls": "svmlab.bench.irwls",
    "joachims": "svmlab.bench.joachims",
    "peers": "svmlab.bench.peers",
    "linear": "svmlab.bench.linear",
    "dense": "svmlab.bench.dense",
    "multiclass": "svmlab.bench.multiclass",
    "n-jobs": "svmlab.bench.multiclass",
    "family": "svmlab.bench.family",
    "cold-start": "svmlab.bench.cold_start",
    "linear-family": "svmlab.bench.linear_family",
    "gallery": "svmlab.bench.gallery",
}
#: the paper suites, in the order ``smoke`` and ``all`` run them
PAPER_SUITES = ("platt", "irwls", "joachims", "peers")


class SuiteUnavailable(RuntimeError):
    pass


def load_suite(name):
    """Import the module of suite ``name`` and return its SuiteInfo."""
    if name not in SUITE_MODULES:
        raise SuiteUnavailable(f"unknown suite {name!r}; known: {', '.join(SUITE_MODULES)}")
    mod = SUITE_MODULES[name]
    try:
        import_module(mod)
    except ModuleNotFoundError as exc:
        if exc.name == mod:
            raise SuiteUnavailable(
                f"suite {name!r} is not available: its module {mod} does not exist "
                f"(svmlab/bench/{mod.rsplit('.', 1)[1]}.py is missing)") from exc
        raise SuiteUnavailable(
            f"suite {name!r} could not be imported: {mod} needs {exc.name!r}, which is "
            f"missing ({exc})") from exc
    except Exception as exc:
        raise SuiteUnavailable(f"suite {name!r}: importing {mod} failed: "
                               f"{type(exc).__name__}: {exc}") from exc
    if name not in SUITES:
        raise SuiteUnavailable(f"module {mod} did not register a suite named {name!r} "
                               f"(use @suite({name!r}, ...))")
    return SUITES[name]


def expand(names):
    """'smoke' -> smoke checks + every paper suite; 'all' -> every paper suite."""
    out = []
    for n in names:
        if n == "smoke":
            out += ["smoke", *PAPER_SUITES]
        elif n == "all":
            out += list(PAPER_SUITES)
        else:
            out.append(n)
    seen = set()
    return [n for n in out if not (n in seen or seen.add(n))]


def write_results(out_dir: Path, tag, machine, suites_run, results, failures):
    fill_ratios(results)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    base = out_dir / f"results-{tag}-{stamp}"
    rows = [r.to_row() for r in results]

    def clean(v):
        if isinstance(v, float) and not math.isfinite(v):
            return None
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items()}
        if hasattr(v, "item") and not isinstance(v, (list, tuple)):
            try:
                return clean(v.item())
            except Exception:
                return str(v)
        return v

    payload = {"machine": machine, "suites": suites_run, "failures": failures,
               "results": [clean(r) for r in rows]}
    jpath = base.with_suffix(".json")
    jpath.write_text(json.dumps(payload, indent=1, default=str))
    cpath = base.with_suffix(".csv")
    mcols = {"date_utc": machine["date_utc"], "cpu_count": machine["cpu_count"],
             "platform": machine["platform"], "python": machine["python"],
             **{f"v_{k}": v for k, v in machine["versions"].items()}}
    fields = ["suite", "size", "case", "solver", "peer", "time_s", "ratio", "n_iter", "objective",
              "objective_kind", "objective_rel_diff", "n_sv", "accuracy", "extra", *mcols]
    with open(cpath, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        for r in rows:
            r = {k: clean(v) for k, v in r.items()}
            r["extra"] = json.dumps(r["extra"], default=str, sort_keys=True)
            w.writerow({**{k: r.get(k) for k in fields if k in r}, **mcols})
    return jpath, cpath


def build_parser():
    p = argparse.ArgumentParser(
        prog="svmlab-bench", description="svmlab benchmark harness (ratios against "
        "LIBSVM/LIBLINEAR measured in the same run).")
    p.add_argument("--suite", "-s", action="append", default=None,
                   help="suite(s) to run, comma separated or repeated: smoke, all, "
                        + ", ".join(PAPER_SUITES) + " (default: smoke)")
    p.add_argument("--size", choices=["smoke", "full"], default=None,
                   help="problem size (default: full; 'smoke' is forced by --suite smoke)")
    p.add_argument("--out", "-o", default="bench-results", help="output directory")
    p.add_argument("--no-progress", action="store_true", help="no tqdm bars")
    p.add_argument("--no-plots", action="store_true", help="do not save figures")
    p.add_argument("--list", action="store_true", help="list the suites and exit")
    p.add_argument("--install", choices=["editable", "editable-venv", "wheel"], default=None,
                   help="cold-start suite: measure this checkout (editable, default), "
                        "pip install -e of a fresh clone into a new venv (editable-venv) or "
                        "its wheel installed into a new venv (wheel)")
    p.add_argument("--examples", default=None,
                   help="gallery suite: scikit-learn's examples/ folder (sets $SVMLAB_GALLERY)")
    return p


def main(argv=None):
    args = build_parser().parse_args(argv)
    os.environ.setdefault("MPLBACKEND", "Agg")
    if args.install:
        os.environ["SVMLAB_BENCH_INSTALL"] = args.install
    if args.examples:
        os.environ["SVMLAB_GALLERY"] = args.examples
    if "SVMLAB_JIT" not in os.environ:
        # the suites time compiled code: a small fit in the default mode
        # could run interpreted while a background process compiles
        # (svmlab._jit); the cold-start suite sets the mode of each of its
        # own processes
        from .. import _jit
        _jit.set_mode("eager")
    if args.list:
        for name in SUITE_MODULES:
            try:
                info = load_suite(name)
                print(f"{name:10s} {info.description.splitlines()[0] if info.description else ''}")
            except SuiteUnavailable as exc:
                print(f"{name:10s} (unavailable: {exc})")
        return 0
    requested = []
    for s in args.suite or ["smoke"]:
        requested += [x.strip() for x in s.split(",") if x.strip()]
    smoke_run = "smoke" in requested
    names = expand(requested)
    size = "smoke" if smoke_run else (args.size or "full")
    if smoke_run and args.size == "full":
        print("note: --suite smoke runs everything at size 'smoke'", file=sys.stderr)
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)

    from tqdm.auto import tqdm

    machine = machine_info()
    print(f"svmlab bench: suites {', '.join(names)} at size {size!r}; "
          f"{machine['cpu_count']} CPUs, {machine['platform']}, "
          f"svmlab {machine['versions']['svmlab']}, sklearn {machine['versions']['scikit-learn']}")
    results, failures, suites_run = [], [], []
    if size != "smoke" and any(n != "cold-start" for n in names):
        # every solver family with every option a large problem picks by
        # itself (float32 rows, small caches, CSR and binary input): a suite's
        # own warm-up fit is small and would leave those to the first timed
        # fit.  Quick when numba's cache has them; smoke runs skip it (they
        # record no speed).
        from .._warm import warm_up
        spent = warm_up()
        print("compiled or loaded every solver before timing: "
              + ", ".join(f"{f} {t:.1f} s" for f, t in spent.items()))
    bar = tqdm(names, desc="suites", disable=args.no_progress, leave=False)
    for name in bar:
        bar.set_postfix_str(name)
        try:
            info = load_suite(name)
        except SuiteUnavailable as exc:
            failures.append({"suite": name, "error": str(exc)})
            tqdm.write(f"[{name}] UNAVAILABLE: {exc}")
            continue
        ctx = Context(name, size=size, out_dir=out_dir, progress=not args.no_progress,
                      plots=not args.no_plots)
        tqdm.write(f"== suite {name} ({size}): {info.description.splitlines()[0] if info.description else ''}")
        secs = run_suite(info, ctx)
        results += ctx.results
        failures += [{"suite": name, "error": f} for f in ctx.failures]
        suites_run.append({"suite": name, "size": size, "seconds": round(secs, 3),
                           "n_results": len(ctx.results), "log": ctx.logs, "plots": ctx.plots,
                           "failed": bool(ctx.failures)})
        tqdm.write(f"== suite {name}: {len(ctx.results)} results in {secs:.1f} s"
                   + (f", {len(ctx.failures)} FAILURE(S)" if ctx.failures else ""))
    bar.close()

    print()
    print(format_table(results))
    tag = "+".join(requested)[:60].replace("/", "_")
    jpath, cpath = write_results(out_dir, tag, machine, suites_run, results, failures)
    print(f"results: {jpath}\n         {cpath}")
    if failures:
        print(f"\n{len(failures)} failure(s):", file=sys.stderr)
        for f in failures:
            print(f"  [{f['suite']}] {f['error'].splitlines()[0]}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
