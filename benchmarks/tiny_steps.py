"""Per-step cost of tiny problems that take millions of steps.

Two fits where nearly all the time is the dual loop's per-step cost on a
small, mostly shrunk active set (issue 31):

* scikit-learn's ``examples/svm/plot_svm_regression.py`` poly SVR (40 rows,
  C=100, about 10 million steps in svmlab, 15 million in LIBSVM);
* the ``C=1e10, gamma=1e-4`` cell of ``examples/svm/plot_rbf_parameters.py``
  (the first of its 5 splits of standardised iris, 120 rows, 3 classes;
  svmlab takes about 1.7 million steps, LIBSVM far fewer: 33a01).

Prints process CPU seconds and nanoseconds per step for svmlab and for
scikit-learn's LIBSVM, fits alternated, median of ``--rounds``.  Run from a
checkout: ``python benchmarks/tiny_steps.py``.
"""

import argparse
import statistics
import time
import warnings

import numpy as np
from sklearn.datasets import load_iris
from sklearn.model_selection import StratifiedShuffleSplit
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC as SkSVC
from sklearn.svm import SVR as SkSVR

from svmlab.svm import SVC, SVR


def _cases():
    rng = np.random.RandomState(0)
    X = np.sort(5 * rng.rand(40, 1), axis=0)
    z = np.sin(X).ravel()
    z[::5] += 3 * (0.5 - rng.rand(8))
    p = dict(kernel="poly", C=100.0, gamma="auto", degree=3, epsilon=0.1, coef0=1.0,
             tol=1e-3, cache_size=200)
    yield "poly SVR plot_svm_regression[40]", SVR(**p, max_iter=100_000_000), \
        SkSVR(**p, max_iter=-1), X, z
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    tr, _ = next(StratifiedShuffleSplit(n_splits=5, test_size=0.2, random_state=42).split(X, y))
    p = dict(C=1e10, gamma=1e-4, tol=1e-3, cache_size=200)
    yield "SVC iris[120] C=1e10 gamma=1e-4", SVC(**p), SkSVC(**p), X[tr], y[tr]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    print("| case | svmlab steps | svmlab CPU s | svmlab ns/step | LIBSVM steps | LIBSVM CPU s "
          "| LIBSVM ns/step | per-step ratio | time ratio |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, ours, peer, X, y in _cases():
        ours.fit(X, y)  # loads (or compiles) the machine code, untimed
        t_o, t_p = [], []
        for _ in range(args.rounds):
            for est, out in ((ours, t_o), (peer, t_p)):
                t = time.process_time()
                est.fit(X, y)
                out.append(time.process_time() - t)
        so = int(np.sum(ours.n_iter_))
        sp = int(np.sum(peer.n_iter_))
        mo, mp = statistics.median(t_o), statistics.median(t_p)
        print(f"| {name} | {so} | {mo:.3f} | {mo / so * 1e9:.0f} | {sp} | {mp:.3f} "
              f"| {mp / sp * 1e9:.0f} | {(mo / so) / (mp / sp):.2f} | {mo / mp:.2f} |", flush=True)


if __name__ == "__main__":
    main()
