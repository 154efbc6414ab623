"""Compile svmlab's solvers into numba's cache at image build, then check it.

``python binder/warm_up.py``: runs ``svmlab.warm_up()`` (every solver
family, in the foreground), or, with an svmlab that has none, the first
fits below; then starts a *fresh* process that makes the first fit of each
estimator and reports, from numba's own counters, whether every compiled
function came from the cache.  A miss is reported as a warning, not an
error: the image still works, its first fits are only slower.

``python binder/warm_up.py --check`` runs only the check (exit status 1
when a function had to be compiled).  It runs with ``SVMLAB_JIT=eager``, so
a function missing from the cache is compiled (and counted) rather than run
interpreted by svmlab's tiered start.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import warnings


def _data():
    os.environ.setdefault("SVMLAB_OFFLINE", "1")   # the embedded a9a, no download
    os.environ.setdefault("SVMLAB_PROGRESS", "0")
    import numpy as np

    from svmlab import datasets

    rng = np.random.default_rng(0)
    Xd = rng.normal(size=(60, 2))
    yd = np.where(Xd[:, 0] + 0.5 * Xd[:, 1] + 0.3 * rng.normal(size=60) > 0, 1, -1)
    Xs, ys = datasets.load("a9a")
    return (Xd, yd), (Xs[:400], ys[:400])


def first_fits():
    """The first fit of each estimator, on a small dense set and on a9a rows
    (binary CSR, the path the notebooks' a9a sections take)."""
    import numpy as np

    from svmlab import (ChunkingClassifier, CuttingPlaneClassifier, CuttingPlaneOrdinalRegressor,
                        DecompositionClassifier, IRWLSClassifier, SMOClassifier)

    (Xd, yd), (Xs, ys) = _data()
    ranks = np.digitize(Xd[:, 0], [-0.5, 0.5]) + 1
    fits = []
    for X, y in ((Xd, yd), (Xs, ys)):
        fits += [
            ("SMOClassifier platt rbf", lambda X=X, y=y: SMOClassifier(gamma=0.5).fit(X, y)),
            ("SMOClassifier platt linear",
             lambda X=X, y=y: SMOClassifier(kernel="linear").fit(X, y)),
            ("SMOClassifier wss2", lambda X=X, y=y: SMOClassifier(selection="wss2").fit(X, y)),
            ("IRWLSClassifier", lambda X=X, y=y: IRWLSClassifier().fit(X, y)),
            ("ChunkingClassifier", lambda X=X, y=y: ChunkingClassifier().fit(X, y)),
            ("DecompositionClassifier qp", lambda X=X, y=y: DecompositionClassifier().fit(X, y)),
            ("DecompositionClassifier smo",
             lambda X=X, y=y: DecompositionClassifier(engine="smo").fit(X, y)),
            ("CuttingPlaneClassifier", lambda X=X, y=y: CuttingPlaneClassifier(C=10.0).fit(X, y)),
            ("CuttingPlaneClassifier ocas",
             lambda X=X, y=y: CuttingPlaneClassifier(C=10.0, method="ocas").fit(X, y)),
        ]
    fits.append(("CuttingPlaneOrdinalRegressor",
                 lambda: CuttingPlaneOrdinalRegressor(C=10.0).fit(Xd, ranks)))
    fits.append(("SMOClassifier iter_fit (explorers)",
                 lambda: list(SMOClassifier(gamma=0.5).iter_fit(Xd, yd))))
    fits.append(("CuttingPlaneClassifier iter_fit (explorers)",
                 lambda: list(CuttingPlaneClassifier(C=10.0).iter_fit(Xd, yd))))
    return fits


def _dispatchers():
    """Every compiled function svmlab has loaded (numba dispatchers found in
    its modules), by name."""
    out = {}
    for name, mod in list(sys.modules.items()):
        if not (name == "svmlab" or name.startswith("svmlab.")) or mod is None:
            continue
        for attr, obj in list(vars(mod).items()):
            stats = getattr(obj, "stats", None)
            if stats is not None and hasattr(stats, "cache_hits"):
                out[f"{name}.{attr}"] = obj
    return out


def check() -> int:
    """In this (fresh) process: the first fit of each estimator, then numba's
    cache counters.  Returns the number of functions that were compiled."""
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for label, fit in first_fits():
            t = time.perf_counter()
            fit()
            print(f"  first fit  {label:44s} {time.perf_counter() - t:6.2f} s", flush=True)
    hits = misses = 0
    missed = []
    for name, d in sorted(_dispatchers().items()):
        h = sum(d.stats.cache_hits.values())
        m = sum(d.stats.cache_misses.values())
        hits += h
        misses += m
        if m:
            missed.append(name)
    print(f"numba cache: {hits} compiled functions loaded from the cache, {misses} compiled "
          f"now ({time.perf_counter() - t0:.1f} s in all)")
    if missed:
        print("compiled now (not in the cache): " + ", ".join(missed[:20]))
    return misses


def main(argv):
    if "--check" in argv:
        # numba's own behaviour: a call loads machine code from the cache or
        # compiles it here (counted as a miss), never runs interpreted (which
        # svmlab's default tier would do for a small call, hiding a miss)
        os.environ["SVMLAB_JIT"] = "eager"
        return 1 if check() else 0
    import svmlab

    t0 = time.perf_counter()
    if hasattr(svmlab, "warm_up"):
        print("svmlab.warm_up(): compiling every solver family ...", flush=True)
        svmlab.warm_up()
    else:
        print("this svmlab has no warm_up(); compiling through the first fits ...", flush=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for label, fit in first_fits():
                fit()
    print(f"compiled in {time.perf_counter() - t0:.0f} s; checking from a fresh process",
          flush=True)
    r = subprocess.run([sys.executable, __file__, "--check"])
    if r.returncode:
        print("warning: some compiled functions were not in the cache; the first fits of a "
              "session will compile them", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
