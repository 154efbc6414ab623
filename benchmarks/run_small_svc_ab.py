"""Small SVC fits, svmlab against scikit-learn's SVC (LIBSVM), defaults.

Usage: ``PYTHONPATH=<checkout> python benchmarks/run_small_svc_ab.py LABEL``.
Process CPU time per fit, median of 5 blocks (150 fits; digits 10), svmlab
and scikit-learn alternated in this one process, after warm-up fits; prints
one line per case and the load.  For a before/after comparison run it
alternately from two checkouts (decision record 31e01).
"""

import sys
import time

import numpy as np
from sklearn import datasets
from sklearn import svm as sksvm
from sklearn.preprocessing import StandardScaler

from svmlab import SVC


def main(label):
    pt = time.process_time
    iris, wine = datasets.load_iris(), datasets.load_wine()
    dia, dig = datasets.load_diabetes(), datasets.load_digits()
    cases = {"iris": (iris.data, iris.target), "wine": (wine.data, wine.target),
             "wine_std": (StandardScaler().fit_transform(wine.data), wine.target),
             "diabetes300_bin": (dia.data[:300], (dia.target[:300] > 140).astype(int)),
             "digits": (dig.data, dig.target)}
    for name, (X, y) in cases.items():
        reps = 10 if name == "digits" else 150
        for _ in range(3):
            SVC().fit(X, y)
            sksvm.SVC().fit(X, y)
        ours, peer = [], []
        for _ in range(5):
            t = pt()
            for _ in range(reps):
                SVC().fit(X, y)
            ours.append((pt() - t) / reps * 1e3)
            t = pt()
            for _ in range(reps):
                sksvm.SVC().fit(X, y)
            peer.append((pt() - t) / reps * 1e3)
        o, p = np.median(ours), np.median(peer)
        print(f"{label} {name}: svmlab {o:.3f} ms, LIBSVM {p:.3f} ms, ratio {o / p:.2f}")
    with open("/proc/loadavg") as f:
        print(label, "load", f.read().split()[:3])


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "run")
