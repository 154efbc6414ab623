"""Issue 31 item 3 (large sets): the blocked decomposition of the
generalised dual (:func:`svmlab.decomposition._blocked_dual.solve_blocked_dual`)
against scikit-learn's SVR / OneClassSVM (LIBSVM) on the same problem, same
tol, same cache size, in one process.

Prints one line per case: process CPU seconds and wall seconds of each side
(the fastest of ``--repeat`` runs of each, ours then LIBSVM's in turn),
the ratios ours / LIBSVM, both dual objectives (computed here in float64
from each side's multipliers, kernel blocks by scikit-learn's ``rbf_kernel``)
and their relative difference, and ``/proc/loadavg`` before and after.
BLAS is held to one thread on our side (LIBSVM is single-threaded).

Unlike the other ``run_*.py`` files this is not a wrapper around the
``svmlab.bench`` harness: the solver is a function, not yet an estimator's
path, so there is no estimator for a suite to fit.  Once it is wired in,
these cases belong in the ``family`` suite (docs/decisions/31b01).

Usage::

    PYTHONPATH=$PWD python benchmarks/run_blocked_dual.py [--q 1024] [--cases svr_friedman,...]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from sklearn.metrics.pairwise import rbf_kernel
from threadpoolctl import threadpool_limits

from svmlab.bench._harness import load_images
from svmlab.decomposition._blocked_dual import (nu_svr_problem, one_class_problem,
                                                solve_blocked_dual, svr_problem)
from svmlab.kernels import Kernel

TOL = 1e-3
CACHE_MB = 200.0
#: extra keywords of solve_blocked_dual
OPTS = {}


def _quad(X, beta, gamma, chunk=1000):
    """``beta' K beta`` in float64 over the rows with ``beta != 0``."""
    nz = np.flatnonzero(beta)
    Xs, bs = X[nz], beta[nz]
    s = 0.0
    for a in range(0, len(nz), chunk):
        s += bs[a:a + chunk] @ (rbf_kernel(Xs[a:a + chunk], Xs, gamma=gamma) @ bs)
    return float(s)


#: system CPU seconds of the last _clock call (page zeroing of fresh buffers)
LAST_SYS = [0.0]


def _clock(fn):
    c0, w0, s0 = time.process_time(), time.perf_counter(), os.times().system
    out = fn()
    LAST_SYS[0] = os.times().system - s0
    return out, time.process_time() - c0, time.perf_counter() - w0


def _load():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def svr_case(name, X, z, C, gamma, eps, q, nu=None):
    """epsilon-SVR with ``eps``, or nu-SVR with ``nu`` (then eps is 0 in the
    objective)."""
    from sklearn.svm import SVR, NuSVR

    n = len(z)
    if nu is None:
        y, p, U, rows, a0 = svr_problem(z, C, eps)
        peer = SVR(C=C, epsilon=eps, gamma=gamma, tol=TOL, cache_size=CACHE_MB)
    else:
        y, p, U, rows, a0 = nu_svr_problem(z, C, nu)
        peer = NuSVR(C=C, nu=nu, gamma=gamma, tol=TOL, cache_size=CACHE_MB)
        eps = 0.0
    kern = Kernel(X, "rbf", gamma)
    with threadpool_limits(1):
        (alpha, G, rho, n_outer, conv), c_us, w_us = _clock(lambda: solve_blocked_dual(
            kern, y, p, U, rows, a0, tol=TOL, q=q, cache_size=CACHE_MB, nu=nu is not None,
            **OPTS))
    s_us = LAST_SYS[0]
    sk, c_sk, w_sk = _clock(lambda: peer.fit(X, z))
    beta = alpha[:n] - alpha[n:]
    f_us = 0.5 * _quad(X, beta, gamma) + p @ alpha
    bs = np.zeros(n)
    bs[sk.support_] = sk.dual_coef_.ravel()
    f_sk = 0.5 * _quad(X, bs, gamma) + eps * np.abs(bs).sum() - z @ bs
    return dict(case=name, s_us=s_us, s_sk=LAST_SYS[0], c_us=c_us, w_us=w_us, c_sk=c_sk,
                w_sk=w_sk, f_us=f_us, f_sk=f_sk,
                rho_us=rho, rho_sk=-float(sk.intercept_[0]), n_outer=n_outer, conv=conv,
                n_sv=int(np.count_nonzero(beta)), n_sv_sk=len(sk.support_))


def one_class_case(name, X, nu, gamma, q):
    from sklearn.svm import OneClassSVM

    n = len(X)
    y, p, U, rows, a0 = one_class_problem(n, nu)
    kern = Kernel(X, "rbf", gamma)
    with threadpool_limits(1):
        (alpha, G, rho, n_outer, conv), c_us, w_us = _clock(lambda: solve_blocked_dual(
            kern, y, p, U, rows, a0, tol=TOL, q=q, cache_size=CACHE_MB, **OPTS))
    s_us = LAST_SYS[0]
    sk, c_sk, w_sk = _clock(lambda: OneClassSVM(nu=nu, gamma=gamma, tol=TOL,
                                                cache_size=CACHE_MB).fit(X))
    a_sk = np.zeros(n)
    a_sk[sk.support_] = sk.dual_coef_.ravel()
    return dict(case=name, s_us=s_us, s_sk=LAST_SYS[0], c_us=c_us, w_us=w_us, c_sk=c_sk, w_sk=w_sk,
                f_us=0.5 * _quad(X, alpha, gamma), f_sk=0.5 * _quad(X, a_sk, gamma),
                rho_us=rho, rho_sk=-float(sk.intercept_[0]), n_outer=n_outer, conv=conv,
                n_sv=int(np.count_nonzero(alpha)), n_sv_sk=len(sk.support_))


def cases(q):
    from sklearn.datasets import make_friedman1, make_regression

    def friedman():
        X, z = make_friedman1(10000, noise=1.0, random_state=0)
        z = (z - z.mean()) / z.std()
        return svr_case("SVR Friedman#1 10000x10 C=10 g=0.5 eps=0.1", X, z, 10.0, 0.5, 0.1, q)

    def nu_friedman():
        X, z = make_friedman1(10000, noise=1.0, random_state=0)
        z = (z - z.mean()) / z.std()
        return svr_case("NuSVR Friedman#1 10000x10 C=10 g=0.5 nu=0.3", X, z, 10.0, 0.5, 0.0, q,
                        nu=0.3)

    def regression():
        X, z = make_regression(5000, 20, random_state=0)
        gamma = 1.0 / (X.shape[1] * X.var())
        return svr_case("SVR make_regression 5000x20 defaults", X, z, 1.0, gamma, 0.1, q)

    def mnist():
        X, _ = load_images("mnist", "test", 5000)
        return one_class_case("OneClass MNIST-test 5000 g=0.02 nu=0.1", X, 0.1, 0.02, q)

    def gauss():
        X = np.random.default_rng(0).normal(size=(8000, 20))
        gamma = 1.0 / (X.shape[1] * X.var())
        return one_class_case("OneClass gaussian 8000x20 defaults", X, 0.5, gamma, q)

    return {"svr_friedman": friedman, "nusvr_friedman": nu_friedman,
            "svr_regression": regression, "oc_mnist": mnist,
            "oc_gauss": gauss}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--q", type=int, default=0, help="working-set size (0: default_working_set)")
    ap.add_argument("--cases",
                    default="svr_friedman,nusvr_friedman,svr_regression,oc_mnist,oc_gauss")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--huge-pages", action="store_true",
                    help="keep NumPy's huge-page advice for our row store")
    args = ap.parse_args()
    if args.huge_pages:
        OPTS["huge_pages"] = True
    # compile (or load) the numba kernels outside the timings, and pay the
    # process's first large BLAS call and first fresh store pages (up to a
    # second of system time on this machine) on both sides before timing
    Xw = np.random.default_rng(1).normal(size=(64, 3))
    one_class_case("warm-up", Xw, 0.2, 0.5, 16)
    svr_case("warm-up", Xw, Xw[:, 0], 1.0, 0.5, 0.1, 16)
    svr_case("warm-up", Xw, Xw[:, 0], 1.0, 0.5, 0.1, 16, nu=0.5)
    Xw = np.random.default_rng(2).normal(size=(3000, 20))
    one_class_case("warm-up", Xw, 0.5, 0.05, None)
    q = args.q or None
    todo = cases(q)
    print(f"q={q or 'default_working_set'} {OPTS} tol={TOL} cache={CACHE_MB} MB "
          "(float32 rows ours, LIBSVM's Qfloat)")
    print("case | CPU ours s | CPU LIBSVM s | CPU ratio | wall ours s | wall LIBSVM s | "
          "wall ratio | sys ours/LIBSVM s | obj rel diff | rho ours/LIBSVM | outer | "
          "nSV ours/LIBSVM | conv | load")
    for key in args.cases.split(","):
        l0 = _load()
        # each side's fastest of ``repeat`` runs (the machine is shared)
        r = todo[key]()
        for _ in range(args.repeat - 1):
            r2 = todo[key]()
            for side in ("c_us", "w_us", "c_sk", "w_sk", "s_us", "s_sk"):
                r[side] = min(r[side], r2[side])
        rel = (r["f_us"] - r["f_sk"]) / abs(r["f_sk"])
        print(f"{r['case']} | {r['c_us']:.2f} | {r['c_sk']:.2f} | {r['c_us'] / r['c_sk']:.2f} | "
              f"{r['w_us']:.2f} | {r['w_sk']:.2f} | {r['w_us'] / r['w_sk']:.2f} | "
              f"{r['s_us']:.2f}/{r['s_sk']:.2f} | {rel:+.1e} | "
              f"{r['rho_us']:.5f}/{r['rho_sk']:.5f} | {r['n_outer']} | "
              f"{r['n_sv']}/{r['n_sv_sk']} | {r['conv']} | {l0}->{_load()}", flush=True)


if __name__ == "__main__":
    main()
