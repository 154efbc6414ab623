"""Small fits, svmlab against scikit-learn fitted in turn in one process.

``python benchmarks/small_alternated.py`` (numba cache warm): after a warm-up
fit of each, scikit-learn's and svmlab's estimator are fitted alternately
``n`` times per case and the medians of process CPU and wall time per fit are
printed as a Markdown table with their ratios (svmlab / scikit-learn).  At a
millisecond a fit the suite's fastest-of-5 is noise; these medians are the
steadier number for the small rows of the family suite.
"""
import time, numpy as np, warnings, sys
from sklearn import svm as sk
from sklearn.datasets import load_iris, load_wine, load_digits, load_breast_cancer, load_diabetes
import svmlab
cases = []
X, y = load_iris(return_X_y=True); cases.append(("SVC iris", sk.SVC(), svmlab.SVC(), X, y, 300))
X, y = load_wine(return_X_y=True); cases.append(("SVC wine", sk.SVC(), svmlab.SVC(), X, y, 300))
X, y = load_breast_cancer(return_X_y=True); cases.append(("SVC breast_cancer", sk.SVC(), svmlab.SVC(), X, y, 100))
X, y = load_digits(return_X_y=True); cases.append(("SVC digits", sk.SVC(), svmlab.SVC(), X, y, 20))
X, z = load_diabetes(return_X_y=True)
cases.append(("SVR diabetes C=10 g=0.1", sk.SVR(C=10, gamma=0.1, epsilon=0.1), svmlab.SVR(C=10, gamma=0.1, epsilon=0.1), X, z/ z.std(), 60))
cases.append(("NuSVR diabetes C=10 g=0.1 nu=0.3", sk.NuSVR(C=10, gamma=0.1, nu=0.3), svmlab.NuSVR(C=10, gamma=0.1, nu=0.3), X, z / z.std(), 60))
def t(m, X, y):
    c = time.process_time(); w = time.perf_counter(); m.fit(X, y); return time.process_time() - c, time.perf_counter() - w
print("| case | fits | LIBSVM CPU ms | svmlab CPU ms | ratio CPU | ratio wall |")
print("|---|---|---|---|---|---|")
for name, a, b, X, y, n in cases:
    a.fit(X, y); b.fit(X, y)
    A = []; B = []
    for i in range(n):
        A.append(t(a, X, y)); B.append(t(b, X, y))
    A = np.array(A); B = np.array(B)
    ma, mb = np.median(A, 0), np.median(B, 0)
    print(f"| {name} | {n} | {ma[0]*1e3:.2f} | {mb[0]*1e3:.2f} | {mb[0]/ma[0]:.2f} | {mb[1]/ma[1]:.2f} |", flush=True)
