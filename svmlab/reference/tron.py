"""Trust-region Newton (TRON) for the primal of the L2-loss linear SVMs, readable.

The problems (LIBLINEAR's ``L2R_L2LOSS_SVC`` and ``L2R_L2LOSS_SVR``, which
``LinearSVC(loss="squared_hinge", dual=False)`` and
``LinearSVR(loss="squared_epsilon_insensitive", dual=False)`` solve), with
``x_i`` augmented by the bias feature ``B`` (its weight is the last entry of
``w`` and is regularised like the others) and one bound ``C_i`` per example::

    SVC:  min_w  f(w) = 1/2 w'w + sum_i C_i max(0, 1 - y_i w'x_i)^2
    SVR:  min_w  f(w) = 1/2 w'w + sum_i C_i max(0, |w'x_i - y_i| - eps)^2

``f`` is differentiable, and its generalised Hessian is
``H = I + 2 X_I' diag(C_I) X_I`` over the rows ``I`` where the loss is not zero
(the "active" rows).  H is never formed: the conjugate gradient needs only
``H v``.

The method: Lin, Weng and Keerthi, "Trust Region Newton Method for Large-Scale
Logistic Regression", JMLR 9 (2008): Algorithm 1 (the trust-region Newton
iteration) with Algorithm 2 (conjugate gradient on ``H s = -g``, stopped at the
trust-region boundary, Steihaug's truncation), with LIBLINEAR's constants
(``tron.cpp``).  Each *trial*:

1. ``trust_region_cg``: the step ``s`` with ``|s| <= delta`` (CG stops when
   ``|r| <= 0.1 |g|``);
2. ``reductions``: the actual reduction ``f(w) - f(w + s)`` against the one the
   quadratic model predicts, ``-(g's + 1/2 s'Hs)``;
3. ``update_radius``: the new ``delta`` by the rules of equation (9), with
   LIBLINEAR's interpolated ``alpha``;
4. ``accept``: ``w <- w + s`` when the ratio exceeds ``eta0``; then the
   stopping test ``|g(w)| <= eps |g(w_0)|``, with LIBLINEAR's ``eps = tol *
   max(min(#pos, #neg), 1) / l`` for SVC and ``tol`` for SVR.

``max_iter`` bounds the accepted (Newton) iterations; a trial whose predicted
and actual reductions are both zero (or below ``1e-12 |f|``) ends the run.

Same steps as the compiled solver.  :class:`svmlab.linear._tron.TronRun`
(which ``LinearSVC(solver="tron")`` runs) keeps the same state under the same
names (``w``, ``g``, ``f``, ``active``, ``delta``, ``gnorm0``, ``gnorm``,
``newton_iter``, ``trials``, ``cg_total``) and returns the same
:class:`~svmlab.linear._tron.TronRecord` per trial; ``tests/test_linear_twins.py``
proves the two equal trial by trial, bit for bit.  For that, the row sums
here run left to right over the non-zeros of each row, then the bias, as
the compiled ``fun_grad`` and ``hess_vec`` do (a zero entry adds nothing,
so a dense row and its CSR form give the same sums); the vector algebra of
the trust region uses the same NumPy calls (``@``, ``np.linalg.norm``).

    run = Tron(X, y, C=1.0, kind="svc", B=1.0, tol=1e-4)
    rec = run.step()              # one trial, None at the end
    res = tron(X, y, C=1.0)       # res.w, res.b, res.records
"""

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from svmlab.linear._tron import TronRecord

__all__ = ["Tron", "TronResult", "tron", "rows_of"]

# LIBLINEAR's tron.cpp: acceptance and radius-update thresholds, radius factors
ETA0, ETA1, ETA2 = 1e-4, 0.25, 0.75
SIGMA1, SIGMA2, SIGMA3 = 0.25, 0.5, 4.0


def rows_of(X):
    """Each row of ``X`` (dense or sparse) as ``(columns, values)`` of its
    non-zeros, columns increasing."""
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        return [(X.indices[X.indptr[i]:X.indptr[i + 1]], X.data[X.indptr[i]:X.indptr[i + 1]])
                for i in range(X.shape[0])]
    X = np.asarray(X, dtype=np.float64)
    return [(np.flatnonzero(x), x[x != 0]) for x in X]


@dataclass
class TronResult:
    w: np.ndarray
    b: float
    f: float
    newton_iter: int
    converged: bool
    records: list = field(default_factory=list)


class Tron:
    """Algorithm 1 + 2 as an object advanced by :meth:`step` (one trial).

    ``X`` dense or sparse (n, d); ``y`` in {-1, +1} (``kind="svc"``) or real
    (``"svr"``); ``C`` a number or one positive bound per example; ``epsilon``
    the SVR tube; ``B`` the bias feature (0: no bias); ``tol`` as in
    LIBLINEAR; ``max_iter`` the most Newton iterations."""

    def __init__(self, X, y, C=1.0, kind="svc", epsilon=0.0, B=1.0, tol=1e-4, max_iter=1000):
        self.rows = rows_of(X)
        n, d = X.shape
        self.y = np.asarray(y, dtype=np.float64)
        self.C = np.broadcast_to(np.asarray(C, dtype=np.float64), (n,)).copy()
        self.kind = kind
        self.p = float(epsilon)
        self.B = float(B)
        if kind == "svc":
            pos = int(np.count_nonzero(self.y > 0))
            self.eps = float(tol) * max(min(pos, n - pos), 1) / n
        else:
            self.eps = float(tol)
        self.max_iter = int(max_iter)
        # w_0 = 0, its function value, gradient and active rows
        self.w = np.zeros(d + 1)                 # the last entry is the bias weight
        self.f, self.g, self.active = self.fun_grad(self.w)
        self.gnorm0 = float(np.linalg.norm(self.g))
        self.gnorm = self.gnorm0
        self.delta = self.gnorm0                 # the first radius: |g(w_0)|
        self.newton_iter = 0
        self.trials = 0
        self.cg_total = 0
        self.converged = self.gnorm <= self.eps * self.gnorm0
        self.stalled = False
        self.reached_max = self.max_iter <= 0

    # -- the function, its gradient, the Hessian times a vector -----------------
    def _row_dot(self, i, v):
        """``v'[x_i, B]``: the non-zeros left to right, then the bias."""
        cols, vals = self.rows[i]
        z = 0.0
        for j, x in zip(cols, vals):
            z += x * v[j]
        return z + self.B * v[-1]

    def _add_row(self, out, i, c):
        """``out += c [x_i, B]``."""
        cols, vals = self.rows[i]
        for j, x in zip(cols, vals):
            out[j] += c * x
        out[-1] += c * self.B

    def fun_grad(self, w):
        """``f(w)``, ``g = grad f(w)`` and the active rows ``I``."""
        g = w.copy()                             # the regulariser's gradient
        f = 0.0
        for wj in w:
            f += wj * wj
        f *= 0.5
        active = []
        for i in range(len(self.rows)):
            z = self._row_dot(i, w)
            if self.kind == "svc":
                t = 1.0 - self.y[i] * z          # the margin's shortfall
                if t <= 0.0:
                    continue
                f += self.C[i] * t * t
                c = -2.0 * self.C[i] * self.y[i] * t      # d/dz of C_i t^2
            else:
                r = z - self.y[i]                # the residual, outside the tube?
                if r > self.p:
                    t = r - self.p
                elif r < -self.p:
                    t = r + self.p
                else:
                    continue
                f += self.C[i] * t * t
                c = 2.0 * self.C[i] * t
            active.append(i)
            self._add_row(g, i, c)
        return float(f), g, active

    def hess_vec(self, v):
        """``H v = v + 2 sum_{i in I} C_i x_i (x_i'v)``."""
        out = v.copy()
        for i in self.active:
            self._add_row(out, i, 2.0 * self.C[i] * self._row_dot(i, v))
        return out

    # -- one trial of Algorithm 1 -------------------------------------------------
    def trust_region_cg(self):
        """Algorithm 2: CG on ``H s = -g`` inside ``|s| <= delta``; returns
        ``s``, the residual ``r = -g - H s`` and the CG iterations."""
        g = self.g
        s = np.zeros_like(g)
        r = -g
        d = r.copy()                             # the search direction
        rTr = float(r @ r)
        cgtol = 0.1 * float(np.linalg.norm(g))
        dsq = self.delta * self.delta
        it = 0
        while np.sqrt(rTr) > cgtol:
            it += 1
            Hd = self.hess_vec(d)
            alpha = rTr / float(d @ Hd)
            s += alpha * d
            if float(s @ s) > dsq:
                # outside the region: go back, and stop on the boundary |s| = delta
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
            d *= rnew / rTr                      # beta = r_new'r_new / r'r
            d += r
            rTr = rnew
        return s, r, it

    def update_radius(self, f_new, gs, actred, prered, snorm):
        """Equation (9), with LIBLINEAR's interpolated step factor ``alpha``."""
        if self.newton_iter == 0 and self.trials == 0:
            self.delta = min(self.delta, snorm)  # the first step sets the scale
        if f_new - self.f - gs <= 0:
            alpha = SIGMA3
        else:
            alpha = max(SIGMA1, -0.5 * (gs / (f_new - self.f - gs)))
        if actred < ETA0 * prered:               # a bad step: shrink
            self.delta = min(max(alpha, SIGMA1) * snorm, SIGMA2 * self.delta)
        elif actred < ETA1 * prered:
            self.delta = max(SIGMA1 * self.delta, min(alpha * snorm, SIGMA2 * self.delta))
        elif actred < ETA2 * prered:
            self.delta = max(SIGMA1 * self.delta, min(alpha * snorm, SIGMA3 * self.delta))
        else:                                    # a very good step: may grow
            self.delta = max(self.delta, min(alpha * snorm, SIGMA3 * self.delta))

    @property
    def done(self):
        return self.converged or self.reached_max or self.stalled

    def step(self):
        """One trial; its record, or None once finished."""
        if self.done:
            return None
        # 1. the trust-region step
        s, r, cg_it = self.trust_region_cg()
        # 2. actual and predicted reductions
        w_new = self.w + s
        gs = float(self.g @ s)
        prered = -0.5 * (gs - float(s @ r))      # -(g's + s'Hs/2), as H s = -g - r
        f_new, g_new, active_new = self.fun_grad(w_new)
        actred = self.f - f_new
        snorm = float(np.linalg.norm(s))
        # 3. the new radius
        self.update_radius(f_new, gs, actred, prered, snorm)
        self.trials += 1
        self.cg_total += cg_it
        # 4. accept, and the stopping tests
        accepted = actred > ETA0 * prered
        if accepted:
            self.newton_iter += 1
            self.w, self.f, self.g, self.active = w_new, f_new, g_new, active_new
            self.gnorm = float(np.linalg.norm(self.g))
            if self.gnorm <= self.eps * self.gnorm0:
                self.converged = True
            elif self.newton_iter >= self.max_iter:
                self.reached_max = True
        if not (self.converged or self.reached_max):
            if abs(actred) <= 0 and prered <= 0:
                self.stalled = True
            elif abs(actred) <= 1e-12 * abs(self.f) and abs(prered) <= 1e-12 * abs(self.f):
                self.converged = True            # f cannot decrease in floating point
        return TronRecord(iteration=self.trials, newton_iter=self.newton_iter, f=self.f,
                          gnorm=self.gnorm, delta=float(self.delta), cg_iter=int(cg_it),
                          accepted=bool(accepted),
                          ratio=float(actred / prered) if prered != 0 else float("nan"))


def tron(X, y, C=1.0, kind="svc", epsilon=0.0, B=1.0, tol=1e-4, max_iter=1000,
         keep_records=True):
    """Run :class:`Tron` to the end; ``w`` without the bias weight, ``b = B
    w_bias``."""
    run = Tron(X, y, C=C, kind=kind, epsilon=epsilon, B=B, tol=tol, max_iter=max_iter)
    records = []
    while (rec := run.step()) is not None:
        if keep_records:
            records.append(rec)
    return TronResult(w=run.w[:-1].copy(), b=float(run.w[-1] * run.B), f=run.f,
                      newton_iter=run.newton_iter, converged=run.converged, records=records)
