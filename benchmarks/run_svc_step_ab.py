"""svmlab SVC (the generalised dual, WSS 2) against scikit-learn's (LIBSVM) on
make_classification(n, 4 features, n_informative=3, n_redundant=0, flip_y=0.2,
random_state=0), C=100: few features, so the kernel rows are cheap and the
per-step time is the loop itself.  Fits interleaved in one process, the
fastest process CPU time of each; prints steps, us per step and the ratio.

Usage: ``python benchmarks/run_svc_step_ab.py [n,n,...] [reps] [shrinking 1|0]``;
run before/after trees in alternated fresh processes (decision 31s01).
"""
import sys, time, warnings, numpy as np
warnings.simplefilter("ignore")
from sklearn.datasets import make_classification
from sklearn.svm import SVC as SkSVC
from svmlab.svm import SVC
ns = [int(a) for a in sys.argv[1].split(",")] if len(sys.argv) > 1 else [400, 800, 1600]
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 5
shr = (sys.argv[3] if len(sys.argv) > 3 else "1") == "1"
for n in ns:
    X, y = make_classification(n, 4, n_informative=3, n_redundant=0, flip_y=0.2, random_state=0)
    p = dict(C=100., shrinking=shr)
    SVC(**p).fit(X[:100], y[:100])
    ta, tb = [], []
    for r in range(reps):
        for cls, ts in ((SkSVC, tb), (SVC, ta)):
            c = time.process_time(); m = cls(**p).fit(X, y); ts.append(time.process_time() - c)
            if cls is SVC: ma = m
            else: mb = m
    na, nb = int(np.sum(ma.n_iter_)), int(np.sum(mb.n_iter_))
    print(f"SVC n={n} shr={shr}: ours {min(ta)*1e3:.1f} ms ({na} st, {min(ta)/na*1e6:.2f} us/st) libsvm {min(tb)*1e3:.1f} ms ({nb} st, {min(tb)/nb*1e6:.2f} us/st) ratio {min(ta)/min(tb):.3f} load {open('/proc/loadavg').read().split()[0]}", flush=True)
