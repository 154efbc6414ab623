"""Fingerprints of the generalised dual's iterates: for SVC, NuSVC, SVR,
NuSVR and OneClassSVM (svmlab.svm), shrinking on and off, three seeds, one
line per fit with the steps and SHA-1 digests of the dual coefficients' and
intercepts' bytes.  A change meant to keep the iterates is checked by
running this in the trees before and after (alternated fresh processes are
not needed: no timing) and diffing the outputs (decision 31s01).

Usage: ``python benchmarks/dual_fingerprint.py > out.txt``
"""
import hashlib
import warnings

import numpy as np
from sklearn.datasets import make_classification, make_regression

from svmlab.svm import SVC, SVR, NuSVC, NuSVR, OneClassSVM

warnings.simplefilter("ignore")


def digest(a):
    return hashlib.sha1(np.ascontiguousarray(a, dtype=np.float64).tobytes()).hexdigest()[:16]


for seed in range(3):
    X, y = make_classification(300, 4, n_informative=3, n_redundant=0, flip_y=0.2,
                               random_state=seed)
    X3, y3 = make_classification(240, 6, n_informative=4, n_classes=3, random_state=seed)
    Xr, z = make_regression(300, 5, noise=10.0, random_state=seed)
    z = (z - z.mean()) / z.std()
    cases = [("SVC", SVC(C=100.0), X, y), ("SVC3", SVC(C=10.0), X3, y3),
             ("NuSVC", NuSVC(nu=0.3), X, y), ("SVR", SVR(C=10.0, gamma=0.1, epsilon=0.1), Xr, z),
             ("NuSVR", NuSVR(C=10.0, gamma=0.1, nu=0.3), Xr, z),
             ("OneClass", OneClassSVM(nu=0.2, gamma=0.5), X, None)]
    for name, est, A, t in cases:
        for shrinking in (True, False):
            est.set_params(shrinking=shrinking)
            est.fit(A) if t is None else est.fit(A, t)
            print(f"{name} seed={seed} shrinking={shrinking} steps={np.ravel(est.n_iter_).tolist()}"
                  f" coef={digest(est.dual_coef_)} b={digest(est.intercept_)}", flush=True)
