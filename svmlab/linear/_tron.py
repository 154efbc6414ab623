"""Trust-region Newton (TRON) for the primal of the L2-loss linear SVMs.

Lin, Weng and Keerthi, "Trust Region Newton Method for Large-Scale Logistic
Regression", JMLR 9 (2008), Algorithm 1 (the trust-region Newton iteration)
with Algorithm 2 (conjugate gradient for the trust-region sub-problem,
Steihaug's truncation at the boundary), on the problems of section 7 (L2-loss
SVM, applied there to LIBLINEAR's ``L2R_L2LOSS_SVC``) and of Ho and Lin (JMLR
2012, section 3, ``L2R_L2LOSS_SVR``).  With ``x_i`` augmented by the bias
feature ``B`` and ``C_i = C * weight_i``::

    SVC:  min_w f(w) = 1/2 w'w + sum_i C_i max(0, 1 - y_i w'x_i)^2
    SVR:  min_w f(w) = 1/2 w'w + sum_i C_i max(0, |w'x_i - y_i| - eps)^2

f is once differentiable with a generalised Hessian ``H = I + 2 X_I' C_I X_I``
over the active rows ``I`` (``y_i w'x_i < 1``, resp. ``|w'x_i - y_i| > eps``);
the Hessian is never formed: CG needs ``H v``, one sparse dot and one sparse
axpy per active row.

The iteration (Algorithm 1, with LIBLINEAR's ``tron.cpp`` constants
``eta0, eta1, eta2 = 1e-4, 0.25, 0.75`` and ``sigma1, sigma2, sigma3 = 0.25,
0.5, 4``): the CG step ``s`` within the radius ``Delta`` (CG stops when
``|r| <= 0.1 |g|``), the ratio of actual to predicted reduction, the step
accepted when it exceeds ``eta0``, ``Delta`` updated by the rules of
equation (9) with LIBLINEAR's interpolated ``alpha``.  Stop when ``|g(w)| <=
eps |g(w_0)|`` with LIBLINEAR's ``eps = tol * max(min(#pos, #neg), 1) / l``
for SVC and ``tol`` for SVR; ``max_iter`` bounds the accepted iterations.

One step of the run (:class:`TronRun`) is one trial of Algorithm 1 (accepted
or not): a record gives ``f``, ``|g|``, the radius and the CG iterations.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from svmlab._jit import njit

from ._runs import LimitedRun, sparse_kernel_data

__all__ = ["TronRecord", "TronRun", "fun_grad", "hess_vec"]

ETA0, ETA1, ETA2 = 1e-4, 0.25, 0.75
SIGMA1, SIGMA2, SIGMA3 = 0.25, 0.5, 4.0


@njit(cache=True)
def fun_grad(sparse, Xd, data, indices, indptr, B, y, C, kind, p, w, g, active):
    """``f(w)``; ``g`` gets the gradient and ``active`` the rows of ``I``
    (their count is returned second); ``kind`` 0: SVC, 1: SVR."""
    n = y.shape[0]
    dlast = w.shape[0] - 1
    f = 0.0
    for j in range(w.shape[0]):
        g[j] = w[j]
        f += w[j] * w[j]
    f *= 0.5
    m = 0
    for i in range(n):
        z = 0.0
        if sparse:
            for q in range(indptr[i], indptr[i + 1]):
                z += data[q] * w[indices[q]]
        else:
            for j in range(Xd.shape[1]):
                z += Xd[i, j] * w[j]
        z += B * w[dlast]
        if kind == 0:
            t = 1.0 - y[i] * z
            if t <= 0.0:
                continue
            f += C[i] * t * t
            c = -2.0 * C[i] * y[i] * t
        else:
            r = z - y[i]
            if r > p:
                t = r - p
            elif r < -p:
                t = r + p
            else:
                continue
            f += C[i] * t * t
            c = 2.0 * C[i] * t
        active[m] = i
        m += 1
        if sparse:
            for q in range(indptr[i], indptr[i + 1]):
                g[indices[q]] += c * data[q]
        else:
            for j in range(Xd.shape[1]):
                g[j] += c * Xd[i, j]
        g[dlast] += c * B
    return f, m


@njit(cache=True)
def hess_vec(sparse, Xd, data, indices, indptr, B, C, active, m, v, out):
    """``out = v + 2 sum_{i in I} C_i x_i (x_i'v)`` (the generalised Hessian
    times ``v``)."""
    dlast = v.shape[0] - 1
    for j in range(v.shape[0]):
        out[j] = v[j]
    for k in range(m):
        i = active[k]
        z = 0.0
        if sparse:
            for q in range(indptr[i], indptr[i + 1]):
                z += data[q] * v[indices[q]]
        else:
            for j in range(Xd.shape[1]):
                z += Xd[i, j] * v[j]
        z += B * v[dlast]
        c = 2.0 * C[i] * z
        if sparse:
            for q in range(indptr[i], indptr[i + 1]):
                out[indices[q]] += c * data[q]
        else:
            for j in range(Xd.shape[1]):
                out[j] += c * Xd[i, j]
        out[dlast] += c * B


@dataclass(frozen=True)
class TronRecord:
    """One trial of Algorithm 1: ``iteration`` (1-based trials), ``newton_iter``
    (accepted iterations so far), ``f`` and ``gnorm`` at the current point after
    the trial, ``delta`` the new radius, ``cg_iter`` the CG iterations of the
    trial, ``accepted`` whether the step was taken, ``ratio`` actual over
    predicted reduction."""

    iteration: int
    newton_iter: int
    f: float
    gnorm: float
    delta: float
    cg_iter: int
    accepted: bool
    ratio: float


class TronRun(LimitedRun):
    """TRON on one L2-loss problem (module docstring).  ``kind`` "svc" (y in
    {-1, +1}) or "svr"; ``C`` the per-example bounds (positive)."""

    solver_name = "tron"
    limit_unit = "Newton iterations"
    step_name = "trust-region trial"
    first_chunk = 8

    def __init__(self, estimator, X, y, C, B, tol, max_iter, *, kind="svc", epsilon=0.0,
                 rows=None, progress=False):
        self.n_samples = int(y.shape[0])
        super().__init__(estimator, max_iter=-1, progress=progress)
        self.data = sparse_kernel_data(X)
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        self.C = np.ascontiguousarray(C, dtype=np.float64)
        self.B = float(B)
        self.kind = 0 if kind == "svc" else 1
        self.p = float(epsilon)
        self.iter_limit = int(max_iter)
        n = self.n_samples
        if self.kind == 0:
            pos = int(np.count_nonzero(self.y > 0))
            self.eps = float(tol) * max(min(pos, n - pos), 1) / n
        else:
            self.eps = float(tol)
        d1 = X.shape[1] + 1
        self.w = np.zeros(d1)
        self.g = np.zeros(d1)
        self.active = np.zeros(n, dtype=np.int64)
        self.f, self.m = self._fg(self.w, self.g, self.active)
        self.gnorm0 = float(np.linalg.norm(self.g))
        self.gnorm = self.gnorm0
        self.delta = self.gnorm0
        self.newton_iter = 0
        self.trials = 0
        self.cg_total = 0
        self.reached_max = self.iter_limit <= 0
        if self.gnorm <= self.eps * self.gnorm0:
            self.converged = True

    def _fg(self, w, g, active):
        f, m = fun_grad(*self.data, self.B, self.y, self.C, self.kind, self.p, w, g, active)
        return float(f), int(m)

    def _Hv(self, v, out):
        hess_vec(*self.data, self.B, self.C, self.active, self.m, v, out)

    def _hit_limit(self):
        return bool(self.reached_max)

    def _iterations(self):
        return self.newton_iter

    def _criterion(self):
        return f"|grad| <= {self.eps:.3g} |grad0|"

    def _trcg(self):
        """Algorithm 2: CG on ``H s = -g`` within ``|s| <= delta``; returns
        ``(s, r, cg_iter)`` with ``r = -g - H s``."""
        g = self.g
        s = np.zeros_like(g)
        r = -g
        d = r.copy()
        Hd = np.empty_like(g)
        rTr = float(r @ r)
        cgtol = 0.1 * float(np.linalg.norm(g))
        it = 0
        dsq = self.delta * self.delta
        while np.sqrt(rTr) > cgtol:
            it += 1
            self._Hv(d, Hd)
            alpha = rTr / float(d @ Hd)
            s += alpha * d
            if float(s @ s) > dsq:
                s -= alpha * d
                std = float(s @ d)
                sts = float(s @ s)
                dtd = float(d @ d)
                rad = np.sqrt(std * std + dtd * (dsq - sts))
                alpha = (dsq - sts) / (std + rad) if std >= 0 else (rad - std) / dtd
                s += alpha * d
                r -= alpha * Hd
                break
            r -= alpha * Hd
            rnew = float(r @ r)
            d *= rnew / rTr
            d += r
            rTr = rnew
        return s, r, it

    def _step(self):
        if self.converged or self.reached_max:
            return None
        s, r, cg_it = self._trcg()
        w_new = self.w + s
        gs = float(self.g @ s)
        prered = -0.5 * (gs - float(s @ r))
        g_new = np.empty_like(self.g)
        act_new = np.empty_like(self.active)
        f_new, m_new = self._fg(w_new, g_new, act_new)
        actred = self.f - f_new
        snorm = float(np.linalg.norm(s))
        if self.newton_iter == 0 and self.trials == 0:
            self.delta = min(self.delta, snorm)
        if f_new - self.f - gs <= 0:
            alpha = SIGMA3
        else:
            alpha = max(SIGMA1, -0.5 * (gs / (f_new - self.f - gs)))
        if actred < ETA0 * prered:
            self.delta = min(max(alpha, SIGMA1) * snorm, SIGMA2 * self.delta)
        elif actred < ETA1 * prered:
            self.delta = max(SIGMA1 * self.delta, min(alpha * snorm, SIGMA2 * self.delta))
        elif actred < ETA2 * prered:
            self.delta = max(SIGMA1 * self.delta, min(alpha * snorm, SIGMA3 * self.delta))
        else:
            self.delta = max(self.delta, min(alpha * snorm, SIGMA3 * self.delta))
        self.trials += 1
        self.cg_total += cg_it
        accepted = actred > ETA0 * prered
        if accepted:
            self.newton_iter += 1
            self.w, self.f, self.g, self.active, self.m = w_new, f_new, g_new, act_new, m_new
            self.gnorm = float(np.linalg.norm(self.g))
            if self.gnorm <= self.eps * self.gnorm0:
                self.converged = True
            elif self.newton_iter >= self.iter_limit:
                self.reached_max = True
        if not (self.converged or self.reached_max):
            if abs(actred) <= 0 and prered <= 0:
                self._mark_stalled("the predicted and actual reductions are both zero")
            elif abs(actred) <= 1e-12 * abs(self.f) and abs(prered) <= 1e-12 * abs(self.f):
                # LIBLINEAR stops here too: f cannot decrease in floating point
                self.converged = True
        return TronRecord(iteration=self.n_iter + 1, newton_iter=self.newton_iter, f=self.f,
                          gnorm=self.gnorm, delta=float(self.delta), cg_iter=int(cg_it),
                          accepted=bool(accepted),
                          ratio=float(actred / prered) if prered != 0 else float("nan"))

    def result(self):
        return {"w": self.w[:-1].copy(), "b": float(self.w[-1] * self.B),
                "n_iter": int(self.newton_iter), "f": self.f}
