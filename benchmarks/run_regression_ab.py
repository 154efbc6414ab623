"""svmlab SVR / NuSVR against scikit-learn's (LIBSVM) on the family suite's regression
problems (diabetes; Friedman #1, 3000 rows), fits interleaved in one process,
the fastest process CPU time of each; prints steps, us per step and the ratio.

Usage: ``python benchmarks/run_regression_ab.py [d|f|df] [reps]`` (``d``
diabetes, ``f`` Friedman #1); run before/after trees in alternated fresh
processes (decision 31r01).
"""
import sys, time, warnings, numpy as np, os
warnings.simplefilter("ignore")
from sklearn.datasets import load_diabetes, make_friedman1
from sklearn.svm import SVR as SkSVR, NuSVR as SkNuSVR
from svmlab.svm import SVR, NuSVR
which = sys.argv[1] if len(sys.argv) > 1 else "d"
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 7
Xd, zd = load_diabetes(return_X_y=True)
Xd = (Xd - Xd.mean(0)) / Xd.std(0); zd = (zd - zd.mean()) / zd.std()
Xf, zf = make_friedman1(3000, noise=1.0, random_state=0); zf = (zf - zf.mean()) / zf.std()
cases = []
if "d" in which:
    cases += [("SVR diab", SVR, SkSVR, dict(C=10., gamma=.1, epsilon=.1), Xd, zd),
              ("NuSVR diab", NuSVR, SkNuSVR, dict(C=10., gamma=.1, nu=.3), Xd, zd)]
if "f" in which:
    cases += [("SVR fried", SVR, SkSVR, dict(C=10., gamma=.5, epsilon=.1), Xf, zf),
              ("NuSVR fried", NuSVR, SkNuSVR, dict(C=10., gamma=.5, nu=.3), Xf, zf)]
for name, A, B, p, X, z in cases:
    p = dict(p, tol=1e-3, cache_size=200)
    A(**p).fit(X[:300], z[:300])
    ta, tb = [], []
    for r in range(reps):
        for cls, ts in ((B, tb), (A, ta)):
            c = time.process_time(); m = cls(**p).fit(X, z); ts.append(time.process_time() - c)
            if cls is A: ma = m
            else: mb = m
    na, nb = int(np.sum(ma.n_iter_)), int(np.sum(mb.n_iter_))
    print(f"{name}: ours {min(ta)*1e3:.1f} ms ({na} st, {min(ta)/na*1e6:.2f} us/st) libsvm {min(tb)*1e3:.1f} ms ({nb} st, {min(tb)/nb*1e6:.2f} us/st) ratio {min(ta)/min(tb):.3f} b={ma.intercept_[0]:.9g}/{mb.intercept_[0]:.9g} load {open('/proc/loadavg').read().split()[0]}", flush=True)
