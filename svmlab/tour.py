"""A short terminal tour: SMO on the embedded Adult (a9a) data.

Run ``python -m svmlab.tour`` (or the ``svmlab-tour`` console script).  It
trains :class:`svmlab.SMOClassifier` with Platt's AdultGauss setting (C=1,
sigma^2=10, i.e. gamma=0.05) on a random subset of the a9a training set and
with Platt's AdultLin setting (linear kernel, C=0.05) on the full training
set, prints iterations, time, support vectors and test accuracy for each,
and saves a plot of the test-set decision values.

Before it times anything it compiles the SMO solver (:func:`svmlab.warm_up`):
once per installation, with a line on the terminal that moves while numba
compiles (how many kernels are compiled, and about how long is left,
estimated from measured compile times), and at once afterwards, when the
compiled code comes from numba's cache; it prints how long that took.  So
the times it prints are training times, never compile times.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np


def _train(clf, X, y, Xt, yt):
    t0 = time.perf_counter()
    clf.fit(X, y)
    secs = time.perf_counter() - t0
    acc = float(np.mean(clf.predict(Xt) == yt))
    return secs, acc


def main(argv=None):
    from . import SMOClassifier, datasets

    p = argparse.ArgumentParser(prog="svmlab-tour", description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=8000,
                   help="training rows for the Gaussian-kernel run (default 8000; 32561 = all)")
    p.add_argument("--out", default="tour-output", help="directory for the plot")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)

    X, y = datasets.load("a9a", "train")
    Xt, yt = datasets.load("a9a", "test")
    rng = np.random.default_rng(args.seed)
    n = min(args.n, X.shape[0])
    sub = np.sort(rng.choice(X.shape[0], n, replace=False))

    print(f"Adult (a9a): {X.shape[0]} training rows, {Xt.shape[0]} test rows, "
          f"{X.shape[1]} binary features (sparse CSR)\n")
    runs = [
        (f"AdultGauss  rbf C=1 gamma=0.05, {n} rows",
         SMOClassifier(C=1.0, kernel="rbf", gamma=0.05, random_state=args.seed,
                      progress=False),
         X[sub], y[sub]),
        (f"AdultLin    linear C=0.05, {X.shape[0]} rows",
         SMOClassifier(C=0.05, kernel="linear", random_state=args.seed, progress=False), X, y),
    ]
    # numba compiles the solver on first use and keeps it in its cache: do it
    # before anything is timed, so the times below are training times only
    from . import warm_up
    from .viz._common import warm_fits

    print("warming up: compiling svmlab's SMO solver if this installation has not yet "
          "(once; instant afterwards) ...", flush=True)
    t0 = time.perf_counter()
    warm_up("smo")
    for name, clf, Xa, ya in runs:   # the very versions the timed fits run (float32 cache ...)
        warm_fits([clf], Xa, ya)
    print(f"ready after {time.perf_counter() - t0:.1f} s: the times below are training "
          f"times\n", flush=True)
    print(f"{'run':44s} {'iterations':>10s} {'time [s]':>9s} {'SVs':>6s} {'test acc':>9s}")
    fitted = []
    for name, clf, Xa, ya in runs:
        secs, acc = _train(clf, Xa, ya, Xt, yt)
        fitted.append((name, clf))
        print(f"{name:44s} {clf.n_iter_:10d} {secs:9.2f} {len(clf.support_):6d} {acc:9.4f}")

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    for ax, (name, clf) in zip(axes, fitted):
        f = clf.decision_function(Xt)
        for label, colour in zip(clf.classes_, ("tab:blue", "tab:orange")):
            ax.hist(f[yt == label], bins=60, alpha=0.6, color=colour, label=f"class {label:+g}")
        for v in (-1, 0, 1):
            ax.axvline(v, color="k", lw=0.8, ls="-" if v == 0 else ":")
        ax.set_title(name.split(",")[0], fontsize=10)
        ax.set_xlabel("decision value f(x) on the a9a test set")
        ax.legend(fontsize=8)
    axes[0].set_ylabel("test points")
    fig.tight_layout()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "smo_a9a_decision_values.png"
    fig.savefig(path, dpi=110)
    print(f"\nplot saved to {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
