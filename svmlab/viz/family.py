"""The rest of the SVM family, drawn: the epsilon-SVR tube and one SVR pair
step, the one-class boundary and what nu bounds, Platt's sigmoid and its
reliability diagram (notebook ``08_svm_family``).

Everything here is drawn from the estimators of :mod:`svmlab.svm` (``SVR``,
``OneClassSVM``, ``SVC``) and, for the steps, from the step records of
``SVR`` (its ``callback``), which are those of the generalised dual
(:class:`svmlab.smo.DualStep` of the compiled loop that ``SVR`` runs, or
:class:`~svmlab.reference.dual.DualStep` of its readable twin: ``i1, i2, y1, y2, C1, C2, p1, p2,
a1_old, a2_old, a1_new, a2_new, L, H, eta, E1, E2, b_old, b_new,
a2_unclipped, clipped, delta_objective``).  Only these fields are read, so
any source of the same records (:func:`dual_trace` on the readable
reference, a compiled run) is drawn by the same code; the source panel shows
the readable reference, :mod:`svmlab.reference.dual`.

The generalised dual (LIBSVM's form, :mod:`svmlab.reference.dual`)::

    min_a  1/2 a'Q a + p'a   s.t.  y'a = Delta,  0 <= a_t <= U_t,
    Q_ts = y_t y_s K(x_idx(t), x_idx(s))

epsilon-SVR has ``2n`` variables over ``n`` points: ``a_k`` (t = k, sign
``y_t = +1``, ``p_t = epsilon - z_k``) and ``a*_k`` (t = n + k, sign
``y_t = -1``, ``p_t = epsilon + z_k``), both bounded by ``C_k``; the model is
``f(x) = sum_k beta_k K(x_k, x) + b`` with ``beta_k = a_k - a*_k``.  A pair
step moves ``(a_t1, a_t2)`` on the line that keeps ``y1 a1 + y2 a2`` fixed,
inside the box ``[0, C1] x [0, C2]``: the segment ``a2 in [L, H]``.

Entry points
------------
Data: :func:`regression_points`, :func:`one_class_points`,
:func:`calibration_points`.

SVR: :func:`svr_trace` (the records of one fit of ``SVR``, and the model
after every step), :func:`dual_trace` (the same from the readable solver),
:func:`segment_change` (the objective along a step's line),
:func:`variable_name`, :func:`tube_categories`, :class:`SVRStepExplorer`
(box, line, objective and tube, one step per frame), :class:`TubeFigure`
(the fitted tube and beta against the residual).

One-class: :class:`OneClassFigure` (boundary, points, and the measured
fractions next to nu), :func:`nu_fractions` and :func:`plot_nu_fractions`
(the fractions over a sweep of nu).

Platt: :func:`cv_decision_values`, :func:`platt_fit`, :func:`reliability`,
:class:`PlattFigure` (the sigmoid on the cross-validated values, and the
reliability diagram on fresh data).

Live (controls that refit; click to add points): :func:`live_svr_tube`,
:func:`live_svr_steps` (a :class:`svmlab.viz.live.LiveExplorer` with the
source panel of :mod:`svmlab.reference.dual` and its reveal lock),
:func:`live_one_class`, :func:`live_platt`.  All four are the one
live widget, :class:`svmlab.viz.live.LiveExplorer`; the three pictures
without steps are one-frame explorers in it
(:class:`svmlab.viz._protocol.PictureExplorer`: no player row, the status
line with the numbers, one image rendered at twice the figure's dpi and
shown at its natural size, clicks through ``ipyevents``).

Decisions where the task left a choice:

* **What counts as outside.**  The one-class numbers count a point as
  *outside* when ``f(x_i) < -tol`` (the solver's stopping tolerance): the
  free support vectors lie on the boundary ``f = 0`` only up to ``tol``, so
  about half of them have ``f`` a hair below zero, and counting those would
  break the bound for a reason that has nothing to do with nu.  With this
  count the displayed inequality ``outside / n <= nu <= SVs / n`` follows
  from the stopping rule and the intercept (a point whose ``f`` is below
  ``-tol`` has its multiplier at the bound), so a failure on screen would be
  a bug, and the widget says so in red.  The SVR picture uses the same
  rule: a point is *outside* the tube when ``|z - f| > epsilon + tol``.
* **Folds.**  Platt's sigmoid is fitted to 5-fold cross-validated decision
  values (``StratifiedKFold`` shuffled by the seed, so every fold has both
  classes on the small sets of the notebook); LIBSVM draws unstratified
  folds, so ``SVC(probability=True)`` gives a close but not equal sigmoid.
  The fit itself is :func:`svmlab.svm._probability.sigmoid_fit`, the
  numerically safe Newton method that ``SVC(probability=True)`` runs.
* **Reliability on fresh data.**  The reliability diagram bins the
  predicted probabilities of points drawn anew from the same distribution
  (not the training points), in ten equal-width bins; it shows next to the
  Platt sigmoid the one fitted to the *training* decision values, which is
  what cross-validation avoids.
* **The steps shown are SVR's own.**  :func:`svr_trace` records them
  through ``SVR.fit(callback=...)`` and rebuilds the problem that ``SVR``
  solves (:func:`svmlab.reference.dual.epsilon_svr`) to know the start,
  the signs and the bounds; the tests check that the records are the steps
  :func:`svmlab.reference.dual.solve` takes on that problem (equal up to
  rounding, :func:`same_steps`), so the source panel's lines are the
  readable form of the steps that ran.
"""

from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np

from ._protocol import USER, Control, Explorer, Fit, data_controls, kernel_controls
from ._common import (HIGHLIGHT, NEUTRAL, SET_COLORS, contour_segments,
                      new_figure)

__all__ = [
    "REGRESSION_SETS", "ONE_CLASS_SETS", "CALIBRATION_SETS",
    "regression_points", "one_class_points", "calibration_points",
    "DualTrace", "dual_trace", "replay_dual", "dual_coefs", "same_steps", "svr_trace",
    "segment_change", "variable_name", "tube_categories", "SVRStepExplorer", "TubeFigure",
    "svr_counts", "one_class_counts", "nu_fractions", "plot_nu_fractions", "OneClassFigure",
    "cv_decision_values", "platt_fit", "reliability", "PlattFigure", "platt_summary",
    "live_svr_tube", "live_svr_steps", "live_one_class", "live_platt",
]

REGRESSION_SETS = ("sinc", "line", "step")
ONE_CLASS_SETS = ("blob", "two blobs", "ring")
CALIBRATION_SETS = ("overlap", "moons", "xor")
#: the default noise of each calibration set (see :func:`calibration_points`)
CALIBRATION_NOISE = {"overlap": 1.5, "moons": 0.3, "xor": 0.5}

#: colours of the three kinds of points of a fitted SVR / one-class model
INSIDE, EDGE, BOUND = "#8c8c8c", SET_COLORS["free"], SET_COLORS["bound"]
#: the tube / the positive class of the calibration sets
TUBE = "#1f77b4"


# --------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------
def regression_points(kind="sinc", n=24, noise=0.1, seed=0):
    """``(X, z)``: ``n`` points ``x`` uniform on [-3, 3], sorted (so the
    point index grows from left to right), ``X = x[:, None]``, and targets
    ``z = g(x) + noise * N(0, 1)``: ``"sinc"`` ``g = sin(pi x) / (pi x)``,
    ``"line"`` ``g = 0.3 x``, ``"step"`` ``g = -0.5`` left of 0, ``+0.5``
    right of it."""
    if kind not in REGRESSION_SETS:
        raise ValueError(f"unknown regression set {kind!r}; choose one of {REGRESSION_SETS}")
    n = int(n)
    if n < 2:
        raise ValueError(f"need at least 2 points, got n={n}")
    if not noise >= 0:
        raise ValueError(f"noise must be >= 0, got {noise!r}")
    rng = np.random.default_rng(int(seed))
    x = np.sort(rng.uniform(-3.0, 3.0, n))
    g = np.sinc(x) if kind == "sinc" else 0.3 * x if kind == "line" else np.where(x < 0, -.5, .5)
    return x[:, None], g + float(noise) * rng.normal(size=n)


def one_class_points(kind="blob", n=100, outliers=0.1, seed=0):
    """``X`` (n, 2): ``round(outliers * n)`` points uniform on the square
    [-3.5, 3.5]^2 and the rest from ``"blob"`` (one Gaussian), ``"two
    blobs"`` or ``"ring"`` (radius 1.6)."""
    if kind not in ONE_CLASS_SETS:
        raise ValueError(f"unknown one-class set {kind!r}; choose one of {ONE_CLASS_SETS}")
    n = int(n)
    if n < 4:
        raise ValueError(f"need at least 4 points, got n={n}")
    if not 0 <= outliers <= 1:
        raise ValueError(f"outliers is a fraction in [0, 1], got {outliers!r}")
    rng = np.random.default_rng(int(seed))
    k = int(round(float(outliers) * n))
    m = n - k
    if kind == "blob":
        Xin = 0.7 * rng.normal(size=(m, 2))
    elif kind == "two blobs":
        c = np.where((np.arange(m) % 2 == 0)[:, None], [-1.3, -0.7], [1.3, 0.7])
        Xin = c + 0.45 * rng.normal(size=(m, 2))
    else:
        t = rng.uniform(0, 2 * np.pi, m)
        r = 1.6 + 0.15 * rng.normal(size=m)
        Xin = np.column_stack([r * np.cos(t), r * np.sin(t)])
    return np.vstack([Xin, rng.uniform(-3.5, 3.5, size=(k, 2))])


def calibration_points(kind="overlap", n=120, noise=None, seed=0):
    """``(X, y)`` with y in {-1, +1} from :func:`svmlab.datasets.toy_2d`:
    ``"overlap"`` two Gaussian blobs (``noise`` their spread, default 1.5:
    they overlap), ``"moons"`` (default noise 0.3), ``"xor"`` (0.5)."""
    from ..datasets import toy_2d

    if kind not in CALIBRATION_SETS:
        raise ValueError(f"unknown calibration set {kind!r}; choose one of {CALIBRATION_SETS}")
    default = CALIBRATION_NOISE[kind]
    name = "blobs" if kind == "overlap" else kind
    return toy_2d(name, int(n), random_state=int(seed),
                  noise=default if noise is None else float(noise))


# --------------------------------------------------------------------------
# the dual, step by step
# --------------------------------------------------------------------------
class DualTrace(NamedTuple):
    """One fit of the generalised dual: the ``problem``
    (:class:`~svmlab.reference.dual.DualProblem`), its step ``records``
    (:class:`~svmlab.reference.dual.DualStep`), the variables after every
    step ``alphas`` (T+1, l) (row 0: the start), the running threshold
    ``bs`` (T+1,), the coefficients over the base points ``coefs`` (T+1, n)
    (``sum`` of ``y_t a_t`` over the variables of each point: SVR's ``beta =
    a - a*``), whether ``max_steps`` cut the fit (``capped``), and what ran:
    ``result`` (:class:`~svmlab.reference.dual.DualResult`, from
    :func:`dual_trace`) or ``estimator`` (the fitted estimator, from
    :func:`svr_trace`)."""

    problem: object
    records: list
    alphas: np.ndarray
    bs: np.ndarray
    coefs: np.ndarray
    capped: bool
    result: object = None
    estimator: object = None


def replay_dual(records, a0):
    """``(alphas, bs)``: the variables after every step, rebuilt from the
    records from the start ``a0`` (row 0), and the running threshold ``b``
    (``bs[0]``: the first record's ``b_old``)."""
    a = np.array(a0, dtype=np.float64)
    T = len(records)
    alphas = np.empty((T + 1, len(a)))
    alphas[0] = a
    bs = np.empty(T + 1)
    bs[0] = records[0].b_old if T else 0.0
    for t, r in enumerate(records, start=1):
        a[r.i1] = r.a1_new
        a[r.i2] = r.a2_new
        alphas[t] = a
        bs[t] = r.b_new
    return alphas, bs


def dual_coefs(prob, alphas):
    """The coefficients over the base points, ``(..., n)``: for each point
    the sum of ``y_t a_t`` over its variables (SVR: ``a_k - a*_k``)."""
    idx = np.asarray(prob.idx)
    M = np.zeros((len(idx), prob.K.shape[0]))
    M[np.arange(len(idx)), idx] = np.asarray(prob.y, dtype=np.float64)
    return np.asarray(alphas, dtype=np.float64) @ M


def dual_trace(prob, *, tol=1e-3, max_steps=None):
    """Run :func:`svmlab.reference.dual.solve` on ``prob`` with records
    (at most ``max_steps`` steps) and return a :class:`DualTrace`."""
    from ..reference import dual as ref_dual

    res = ref_dual.solve(prob, tol=tol, max_iter=-1 if max_steps is None else int(max_steps))
    alphas, bs = replay_dual(res.records, prob.a0)
    return DualTrace(prob, list(res.records), alphas, bs, dual_coefs(prob, alphas),
                     res.stop_reason == "max_iter", result=res)


#: the record fields both solvers fill, compared exactly by :func:`same_steps`
STEP_EXACT = ("iteration", "i1", "i2", "clipped", "sign_class")
#: the record fields compared up to rounding by :func:`same_steps`
STEP_CLOSE = ("y1", "y2", "C1", "C2", "p1", "p2", "a1_old", "a2_old", "a1_new", "a2_new",
              "L", "H", "eta", "K11", "K12", "K22", "E1", "E2", "b_old", "b_new",
              "a2_unclipped", "delta_objective", "m", "M", "gap")


def same_steps(records, other, *, rtol=1e-10):
    """Whether two lists of generalised-dual records are the same steps:
    as many, the same pairs, and every field of the readable twin's record
    equal (the integers and flags exactly, the numbers within ``rtol``
    relative to ``max(1, |value|)``, NaN matching NaN).  The compiled loop
    (``svmlab.smo.DualRun``, which ``SVR`` runs) and the readable
    :mod:`svmlab.reference.dual` take the same steps but add some sums in a
    different order, so their numbers agree to rounding, not bit for bit."""
    if len(records) != len(other):
        return False
    for a, b in zip(records, other):
        if any(getattr(a, f) != getattr(b, f) for f in STEP_EXACT):
            return False
        for f in STEP_CLOSE:
            u, v = float(getattr(a, f)), float(getattr(b, f))
            if np.isnan(u) and np.isnan(v):
                continue
            if not abs(u - v) <= rtol * max(1.0, abs(v)):
                return False
    return True


def svr_trace(X, z, *, C=1.0, epsilon=0.1, kernel="rbf", gamma=1.0, degree=3, coef0=0.0,
              tol=1e-3, max_steps=None):
    """The steps of :class:`svmlab.svm.SVR` on ``(X, z)`` (``gamma`` a
    number), recorded through its ``callback`` (at most ``max_steps``: the
    callback then stops the fit, which leaves a feasible model): a
    :class:`DualTrace` whose problem is the epsilon-SVR dual that ``SVR``
    solves (:func:`svmlab.reference.dual.epsilon_svr`, kernel matrix from
    the rows of :class:`svmlab.kernels.Kernel`), ``2n`` variables (``a`` then ``a*``),
    and whose ``estimator`` is the fitted ``SVR``.  Its records are those
    of the compiled generalised dual that ``SVR`` runs
    (:class:`svmlab.smo.DualStep`, the readable twin's fields and more), the
    steps :func:`svmlab.reference.dual.solve` takes on the same problem
    (:func:`same_steps`; tests/test_viz_family.py checks it)."""
    from ..kernels import Kernel
    from ..reference import dual as ref_dual
    from ..svm import SVR

    X = np.asarray(X, dtype=np.float64)
    z = np.asarray(z, dtype=np.float64)
    if X.ndim != 2 or len(X) != len(z):
        raise ValueError("X must be (n, d) with one target per row")
    est = SVR(C=float(C), epsilon=float(epsilon), kernel=kernel, gamma=float(gamma),
              degree=degree, coef0=coef0, tol=tol)
    records = []

    def keep(step):
        records.append(getattr(step, "record", step))   # the solver's record
        if max_steps is not None and len(records) >= max_steps:
            return False
        return None

    est.fit(X, z, callback=keep)
    # the kernel values SVR's solver reads: its rows (Kernel.matrix() may
    # round the last bit differently, and a tie in the choice of i is then
    # broken differently), rounded to float32 as the drop-in's are
    # (LIBSVM's Qfloat, docs/decisions/36a01)
    kern = Kernel(X, kernel, float(gamma), degree, coef0, binary=False, qfloat=True)
    K = np.vstack([kern.row(t) for t in range(len(X))])
    prob = ref_dual.epsilon_svr(K, z, float(C), float(epsilon))
    alphas, bs = replay_dual(records, prob.a0)
    capped = max_steps is not None and len(records) >= max_steps and not est.converged_
    return DualTrace(prob, records, alphas, bs, dual_coefs(prob, alphas), capped, estimator=est)


def segment_change(rec, a2):
    """The change of the dual objective ``f = 1/2 a'Qa + p'a`` when the
    pair of record ``rec`` moves along its line to the new ``a2`` (``a1``
    follows: ``a1 - a1_old = -y1 y2 (a2 - a2_old)``).  From the record's
    errors: the gradient of the pair is ``G_k = y_k (E_k - b_old)``, the
    curvature ``Q`` of the pair ``[[K11, s K12], [s K12, K22]]``, ``s = y1
    y2``.  At ``a2_new`` it is ``-rec.delta_objective``; for ``eta > 0`` its
    minimiser is ``a2_unclipped``."""
    s = rec.y1 * rec.y2
    d2 = np.asarray(a2, dtype=np.float64) - rec.a2_old
    d1 = -s * d2
    g1, g2 = rec.y1 * (rec.E1 - rec.b_old), rec.y2 * (rec.E2 - rec.b_old)
    return g1 * d1 + g2 * d2 + 0.5 * (d1 * d1 * rec.K11 + d2 * d2 * rec.K22
                                      + 2.0 * s * d1 * d2 * rec.K12)


def variable_name(t, n, style="math"):
    """The name of variable ``t`` of an SVR dual over ``n`` points:
    ``a_k`` for ``t = k < n``, ``a*_k`` for ``t = n + k``.  ``style``:
    ``"math"`` (mathtext), ``"unicode"`` (subscript digits: cheap to draw),
    ``"html"`` or ``"text"``."""
    t, n = int(t), int(n)
    if not 0 <= t < 2 * n:
        raise ValueError(f"variable {t} outside 0..{2 * n - 1}")
    k, star = (t, False) if t < n else (t - n, True)
    if style == "math":
        return rf"$\alpha^*_{{{k}}}$" if star else rf"$\alpha_{{{k}}}$"
    if style == "unicode":
        return "\u03b1" + ("*" if star else "") + str(k).translate(_SUBSCRIPTS)
    if style == "html":
        return f"&alpha;{'*' if star else ''}<sub>{k}</sub>"
    return f"alpha{'*' if star else ''}_{k}"


_SUBSCRIPTS = str.maketrans("0123456789", "".join(chr(0x2080 + d) for d in range(10)))


def tube_categories(beta, C):
    """Per point: 0 when ``beta_k = 0`` (not a support vector: inside the
    tube or on its edge), 1 when ``0 < |beta_k| < C_k`` (a free support
    vector: on the edge), 2 when ``|beta_k| = C_k`` (at the bound: on the
    edge or outside).  The solvers put a multiplier that ends within
    ``1e-12 C`` of a bound onto it, so the tests are exact."""
    b = np.abs(np.asarray(beta, dtype=np.float64))
    C = np.broadcast_to(np.asarray(C, dtype=np.float64), b.shape)
    return np.where(b == 0, 0, np.where(b >= C, 2, 1))


def svr_counts(X, z, model, tol=None):
    """What the tube picture shows, counted: ``{"n", "inside", "edge",
    "outside", "sv", "free", "bound", "outside_not_bound", "inside_sv"}``.
    ``outside``: ``|z - f| > epsilon + tol``; ``inside``: ``|z - f| <
    epsilon - tol``; the rest is on the edge.  The KKT conditions say every
    point outside has ``|beta| = C`` and every point inside ``beta = 0``:
    ``outside_not_bound`` and ``inside_sv`` count the exceptions (0 at the
    optimum)."""
    X = np.asarray(X, dtype=np.float64)
    z = np.asarray(z, dtype=np.float64)
    tol = float(model.tol if tol is None else tol)
    eps = float(model.epsilon)
    r = np.abs(z - model.predict(X))
    beta = np.zeros(len(z))
    beta[model.support_] = np.asarray(model.dual_coef_).ravel()
    cat = tube_categories(beta, float(model.C))
    out, ins = r > eps + tol, r < eps - tol
    return {"n": len(z), "inside": int(ins.sum()), "edge": int((~out & ~ins).sum()),
            "outside": int(out.sum()), "sv": int((cat > 0).sum()), "free": int((cat == 1).sum()),
            "bound": int((cat == 2).sum()), "outside_not_bound": int((out & (cat != 2)).sum()),
            "inside_sv": int((ins & (cat != 0)).sum())}


# --------------------------------------------------------------------------
# shared drawing helpers
# --------------------------------------------------------------------------
class _TubePanel:
    """The data of a 1-D regression in ``ax``: the function ``f``, the tube
    ``f +- epsilon`` (shaded), and the points by kind (inside, on the edge
    as a free support vector, at the bound)."""

    def __init__(self, ax, legend_kw=None):
        from matplotlib.patches import Polygon

        self.ax = ax
        self.fill = ax.add_patch(Polygon(np.zeros((3, 2)), closed=True, fc=TUBE, ec="none",
                                         alpha=0.14, zorder=0, label=r"tube $f\pm\varepsilon$"))
        (self.f,) = ax.plot([], [], color=TUBE, lw=1.8, zorder=2, label="$f(x)$")
        (self.up,) = ax.plot([], [], color=TUBE, lw=0.9, ls="--", zorder=1)
        (self.lo,) = ax.plot([], [], color=TUBE, lw=0.9, ls="--", zorder=1)
        empty = np.empty((0, 2))
        self.pts = [
            ax.scatter(empty[:, 0], empty[:, 1], s=22, c=INSIDE, marker="o", zorder=3,
                       label=r"$\beta_k=0$"),
            ax.scatter(empty[:, 0], empty[:, 1], s=36, c=EDGE, marker="D", zorder=4,
                       edgecolors="white", linewidths=0.4,
                       label=r"$0<|\beta_k|<C$ (on the edge)"),
            ax.scatter(empty[:, 0], empty[:, 1], s=40, c=BOUND, marker="s", zorder=4,
                       edgecolors="white", linewidths=0.4, label=r"$|\beta_k|=C$"),
        ]
        ax.tick_params(labelsize=9.5)
        if legend_kw is not None:
            ax.legend(handles=[self.f, self.fill, *self.pts], fontsize=9.5, frameon=False,
                      **legend_kw)

    @property
    def artists(self):
        return [self.fill, self.up, self.lo, self.f, *self.pts]

    def set_data(self, xs, fx, eps, x, z, cat):
        """Draw ``f`` on the grid ``xs`` (values ``fx``), the tube of
        half-width ``eps`` and the points ``(x, z)`` of kinds ``cat``."""
        self.f.set_data(xs, fx)
        self.up.set_data(xs, fx + eps)
        self.lo.set_data(xs, fx - eps)
        self.fill.set_xy(np.column_stack([np.r_[xs, xs[::-1]],
                                          np.r_[fx + eps, (fx - eps)[::-1]]]))
        for k, sc in enumerate(self.pts):
            m = cat == k
            sc.set_offsets(np.column_stack([x[m], z[m]]).reshape(-1, 2))


def _limits(v, pad=0.12):
    lo, hi = float(np.min(v)), float(np.max(v))
    span = hi - lo if hi > lo else 1.0
    return lo - pad * span, hi + pad * span


def _rounded_limits(v, pad=0.08, grid=0.25):
    """:func:`_limits` rounded outwards to multiples of ``grid``: a small
    change of the data keeps the axes (and so the blitting background)."""
    lo, hi = _limits(v, pad)
    return float(np.floor(lo / grid) * grid), float(np.ceil(hi / grid) * grid)


_NICE = np.array([1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 7.5, 10.0])


def _nice_ceil(v):
    """The smallest of 1, 1.5, 2, 3, 4, 5, 7.5 times a power of ten that is
    at least ``v`` (> 0)."""
    e = np.floor(np.log10(v))
    m = v / 10.0 ** e
    return float(_NICE[np.searchsorted(_NICE, m - 1e-12)] * 10.0 ** e)


def _static_key(*axes):
    """What the blitting background of ``axes`` depends on: their limits."""
    return tuple((tuple(ax.get_xlim()), tuple(ax.get_ylim())) for ax in axes)


def _set_animated(artists):
    for a in artists:
        a.set_animated(True)
    return list(artists)


# --------------------------------------------------------------------------
# the SVR step explorer
# --------------------------------------------------------------------------
class SVRStepExplorer(Explorer):
    """One epsilon-SVR pair step per frame, in LIBSVM's (p, y, bounds) form.

    * top left: the box ``[0, C1] x [0, C2]`` of the two variables of the
      step (named in the panel's title: which of the ``2n`` variables, its
      point, its sign), the line ``y1 a1 + y2 a2 = const`` (``a1 + a2`` fixed
      for equal signs, ``a1 - a2`` for opposite signs), the feasible segment
      ``[L, H]`` (green), the pair before (grey), the minimiser along the line
      (hollow; pinned to the edge of the view when it lies outside) and the
      new pair (red star: clipped or interior, says the legend);
    * bottom left: the change of the dual objective along the line against
      the new ``a2`` (:func:`segment_change`), solid inside ``[L, H]``,
      rescaled per step;
    * right: the data ``(x, z)``, the model after the step ``f = sum_k beta_k
      K(x_k, .) + b`` (the running threshold ``b`` of the solver) and its tube
      ``f +- epsilon``, the points by ``beta_k`` (0, free, at the bound), and
      the step's two points ringed in red with their variables' names.

    ``trace``: a :class:`DualTrace` of an epsilon-SVR problem
    (:func:`svr_trace`); ``X`` (n, 1), ``z`` (n,); ``epsilon``; the kernel of
    the trace.  :meth:`update` draws frame ``t`` (step ``t + 1``) and returns
    the caption; :meth:`player` wraps it in a
    :class:`~svmlab.viz.FramePlayer` (blitted).
    """


    # -- the explorer protocol (svmlab.viz._protocol) ----------------------
    @classmethod
    def from_fit(cls, fit):
        """A new explorer for ``fit`` (``fit.params``: epsilon, kernel, gamma)."""
        return cls(fit.X, fit.y, fit.trace, **fit.params)

    def reset(self, fit):
        """Show ``fit`` in the same figure (see :meth:`_reset`)."""
        return self._reset(fit.X, fit.y, fit.trace, **fit.params)

    def record(self, k):
        return self.records[int(k)]

    @property
    def n_frames(self):
        return self.T

    def __init__(self, X, z, trace, *, epsilon, kernel="rbf", gamma=1.0, degree=3, coef0=0.0,
                 figsize=(8.5, 4.9), dpi=96, grid=160):
        from matplotlib.legend import Legend
        from matplotlib.patches import Rectangle

        self._grid_n = int(grid)
        self.fig = fig = new_figure(figsize=figsize, dpi=dpi)
        gs = fig.add_gridspec(2, 2, width_ratios=[1.12, 1.0], height_ratios=[2.3, 1.0],
                              left=0.065, right=0.985, bottom=0.205, top=0.875, wspace=0.14,
                              hspace=0.36)
        self.ax_box = fig.add_subplot(gs[0, 0])
        self.ax_obj = fig.add_subplot(gs[1, 0])
        self.ax_data = fig.add_subplot(gs[:, 1])
        dyn = []

        # ---- the box and the line
        ax = self.ax_box
        self.box_rect = ax.add_patch(Rectangle((0, 0), 1, 1, fill=False, lw=1.5, ec="k"))
        ax.set_aspect("equal")
        ax.set_anchor("W")
        ax.tick_params(labelsize=9.5)
        ax.set_xlabel("$a_1$", labelpad=0, fontsize=10)
        ax.set_ylabel("$a_2$", labelpad=0, fontsize=10)
        (self.line_full,) = ax.plot([], [], ls=":", lw=1, color=NEUTRAL, label="the line")
        (self.line_seg,) = ax.plot([], [], lw=3, color="#2ca02c", solid_capstyle="butt",
                                   label="segment [L, H]")
        (self.pt_ends,) = ax.plot([], [], ls="none", marker="o", ms=4, color="#2ca02c")
        self.txt_L = ax.text(0, 0, " L", fontsize=10, color="#2ca02c", ha="left", va="top")
        self.txt_H = ax.text(0, 0, " H", fontsize=10, color="#2ca02c", ha="left", va="bottom")
        (self.pt_old,) = ax.plot([], [], ls="none", marker="o", ms=7, color=NEUTRAL,
                                 label="before")
        (self.pt_unc,) = ax.plot([], [], ls="none", marker="o", ms=10, mfc="none", mew=1.8,
                                 color="k", label="minimiser")
        (self.pt_new,) = ax.plot([], [], ls="none", marker="*", ms=14, color=HIGHLIGHT)
        ax.legend(handles=[self.line_full, self.line_seg, self.pt_old, self.pt_unc],
                  fontsize=9.5, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False,
                  handlelength=1.4, borderaxespad=0.2, labelspacing=0.35)
        self.step_legend = Legend(ax, [self.pt_new], [_NEW[True]], fontsize=9.5,
                                  loc="lower left", bbox_to_anchor=(1.0, 0.0), frameon=False,
                                  handlelength=1.4, borderaxespad=0.2)
        ax.add_artist(self.step_legend)
        self.legend_new = self.step_legend.get_texts()[0]
        self.box_title = ax.set_title("", fontsize=10, loc="left", y=1.0)
        dyn += [self.box_rect, self.line_full, self.line_seg, self.pt_ends, self.txt_L,
                self.txt_H, self.pt_old, self.pt_unc, self.pt_new, self.step_legend,
                self.box_title]

        # ---- the objective along the line, rescaled to [0, 1]^2 per step
        ax = self.ax_obj
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(-0.12, 1.12)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_ylabel(r"$f-f_{\mathrm{old}}$", fontsize=10, labelpad=2)
        ax.set_xlabel(r"new $a_2$ along the line (rescaled)", fontsize=10, labelpad=2)
        (self.obj_out,) = ax.plot([], [], lw=1.0, color=NEUTRAL, ls=":")
        (self.obj_in,) = ax.plot([], [], lw=2.0, color="#2ca02c")
        (self.obj_LH,) = ax.plot([], [], lw=0.8, color="#2ca02c", ls="--")
        self.obj_txt_L = ax.text(0, 1.0, "L", fontsize=10, color="#2ca02c", ha="center",
                                 va="bottom")
        self.obj_txt_H = ax.text(0, 1.0, "H", fontsize=10, color="#2ca02c", ha="center",
                                 va="bottom")
        (self.obj_old,) = ax.plot([], [], ls="none", marker="o", ms=6, color=NEUTRAL)
        (self.obj_unc,) = ax.plot([], [], ls="none", marker="o", ms=9, mfc="none", mew=1.6,
                                  color="k")
        (self.obj_new,) = ax.plot([], [], ls="none", marker="*", ms=12, color=HIGHLIGHT)
        dyn += [self.obj_out, self.obj_in, self.obj_LH, self.obj_txt_L, self.obj_txt_H,
                self.obj_old, self.obj_unc, self.obj_new]

        # ---- the data, the model after the step, its tube
        ax = self.ax_data
        self.tube = _TubePanel(ax, legend_kw=dict(loc="upper center",
                                                  bbox_to_anchor=(0.45, -0.105), ncol=2,
                                                  columnspacing=0.8, handletextpad=0.3,
                                                  borderaxespad=0.2, labelspacing=0.3))
        empty = np.empty((0, 2))
        self.chosen = ax.scatter(empty[:, 0], empty[:, 1], s=190, facecolors="none",
                                 edgecolors=HIGHLIGHT, linewidths=2.0, zorder=6)
        self.txt_i = [ax.text(0, 0, "", fontsize=10.5, color=HIGHLIGHT, zorder=7,
                              fontweight="bold") for _ in range(2)]
        self.data_title = ax.set_title("", fontsize=10, y=1.0)
        ax.set_xlabel("$x$", fontsize=10, labelpad=1)
        ax.set_ylabel("$z$", fontsize=10, labelpad=1)
        dyn += [*self.tube.artists, self.chosen, *self.txt_i, self.data_title]
        self.animated = dyn
        self.frame = None
        self._set_trace(X, z, trace, epsilon, kernel, gamma, degree, coef0)

    # ------------------------------------------------------------ the trace
    def _set_trace(self, X, z, trace, epsilon, kernel, gamma, degree, coef0):
        from ..kernels import Kernel

        X = np.asarray(X, dtype=np.float64)
        z = np.asarray(z, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != 1 or len(X) != len(z):
            raise ValueError("the SVR step explorer draws 1-D regressions: X (n, 1), z (n,)")
        if len(trace.records) == 0:
            raise ValueError("no step records: the trace is empty")
        if len(trace.problem.y) != 2 * len(z) or trace.problem.kind != "epsilon_svr":
            raise ValueError("the trace must be of the epsilon-SVR problem of these points")
        self.X, self.z, self.trace = X, z, trace
        self.records = trace.records
        self.T = len(self.records)
        self.n = len(z)
        self.epsilon = float(epsilon)
        self.U = np.asarray(trace.problem.U, dtype=np.float64)
        self.C_view = float(np.max(self.U))
        x = X[:, 0]
        lo, hi = _limits(x, 0.04)
        self.xs = np.linspace(lo, hi, self._grid_n)
        self.Kg = Kernel(X, kernel, float(gamma), degree, coef0).matrix(Z=self.xs[:, None])
        # the view holds the data (rounded out, so that it stays when C or
        # epsilon change); a tube that leaves it is cut at the edge
        ax = self.ax_box
        self.view = (-0.3 * self.C_view, 1.3 * self.C_view)
        ax.set_xlim(*self.view)
        ax.set_ylim(*self.view)
        # ticks 0 and C, wherever C is: the box looks the same for every C
        ax.set_xticks([0, self.C_view], ["0", "C"])
        ax.set_yticks([0, self.C_view], ["0", "C"])
        self.ax_data.set_xlim(lo, hi)
        self.ax_data.set_ylim(*_rounded_limits(z, 0.3))
        self.frame = None

    def static_key(self):
        """What the blitting background depends on: the data panel's limits."""
        return _static_key(self.ax_data)

    def _reset(self, X, z, trace, *, epsilon, kernel="rbf", gamma=1.0, degree=3, coef0=0.0):
        """Show another trace in the same figure (the live explorer's refit).
        Returns True when everything outside :attr:`animated` draws the same
        pixels as before (the data panel kept its limits: a change of C,
        epsilon, the kernel or gamma on the same points), so a player may
        keep its blitting background."""
        before = self.static_key()
        self._set_trace(X, z, trace, epsilon, kernel, gamma, degree, coef0)
        return self.static_key() == before

    # ------------------------------------------------------------ per frame
    def describe(self, t):
        """Facts of step ``t`` (0-based) in words: ``{"v1", "v2"}`` the
        variables (text names), ``"points"`` their points, ``"signs"``,
        ``"line"`` (``"a1 + a2"`` or ``"a1 - a2"``), ``"same_point"``."""
        r = self.records[t]
        return {"v1": variable_name(r.i1, self.n, "text"),
                "v2": variable_name(r.i2, self.n, "text"),
                "points": (r.i1 % self.n, r.i2 % self.n), "signs": (int(r.y1), int(r.y2)),
                "line": "a1 + a2" if r.y1 == r.y2 else "a1 - a2",
                "same_point": r.i1 % self.n == r.i2 % self.n}

    def caption(self, t):
        r = self.records[t]
        n = self.n

        def var(i, y, p, C):
            k = i % n
            which = "&epsilon; &minus; z" if y > 0 else "&epsilon; + z"
            return (f"{variable_name(i, n, 'html')} (t = {i}, y = {int(y):+d}, p = {which}"
                    f"<sub>{k}</sub> = {p:+.3f}, C = {C:g})")

        s = ("a<sub>1</sub> + a<sub>2</sub>" if r.y1 == r.y2 else
             "a<sub>1</sub> &minus; a<sub>2</sub>")
        where = ("clipped at L" if r.clipped and r.a2_new == r.L else
                 "clipped at H" if r.clipped and r.a2_new == r.H else
                 "clipped" if r.clipped else "interior")
        eta = f"eta = {r.eta:.4f}" + (" (eta &le; 0: the better end)" if r.eta <= 0 else "")
        return (f"step {t + 1}/{self.T} &middot; a<sub>1</sub> = {var(r.i1, r.y1, r.p1, r.C1)}, "
                f"a<sub>2</sub> = {var(r.i2, r.y2, r.p2, r.C2)} &middot; {s} fixed &middot; "
                f"L = {r.L:.4f}, H = {r.H:.4f} &middot; {eta} &middot; a<sub>2</sub>: "
                f"{r.a2_old:.4f} &rarr; {r.a2_new:.4f} ({where}) &middot; the objective falls "
                f"by {r.delta_objective:.4g}")

    def update(self, t):
        """Draw step ``t`` (0-based) by changing the existing artists;
        returns the caption (HTML)."""
        from .smo import segment_geometry

        t = int(t)
        r = self.records[t]
        n = self.n
        g = segment_geometry(r)
        lo, hi = self.view
        # the box [0, C1] x [0, C2], the line across the view, the segment
        self.box_rect.set_width(r.C1)
        self.box_rect.set_height(r.C2)
        a2s = np.array([lo - self.C_view, hi + self.C_view])
        self.line_full.set_data(g.a1_of(a2s), a2s)
        ends = ([g.end_L[0], g.end_H[0]], [g.end_L[1], g.end_H[1]])
        self.line_seg.set_data(*ends)
        self.pt_ends.set_data(*ends)
        self.txt_L.set_position(g.end_L)
        self.txt_H.set_position(g.end_H)
        self.pt_old.set_data([g.old[0]], [g.old[1]])
        self.pt_new.set_data([g.new[0]], [g.new[1]])
        self.legend_new.set_text(_NEW[bool(r.clipped)])
        unc = None if g.unclipped is None else _clamp_on_line(g, g.unclipped[1], lo, hi)
        self.pt_unc.set_data(*(([unc[0]], [unc[1]]) if unc is not None else ([], [])))
        # plain text with unicode sub- and superscripts: a title drawn every
        # frame costs a mathtext parse and layout otherwise
        v1, v2 = variable_name(r.i1, n, "unicode"), variable_name(r.i2, n, "unicode")
        rel = "+" if r.y1 == r.y2 else "\u2212"
        self.box_title.set_text(
            f"a\u2081 = {v1} (y\u2081 = {int(r.y1):+d}), "
            f"a\u2082 = {v2} (y\u2082 = {int(r.y2):+d})\n"
            f"a\u2081 {rel} a\u2082 = {g.k:.3g} on the line")

        # the objective along the line, rescaled
        pts = [r.L, r.H, r.a2_old] + ([r.a2_unclipped] if np.isfinite(r.a2_unclipped) else [])
        span = max(max(pts) - min(pts), 1e-12)
        a2 = np.linspace(min(pts) - 0.08 * span, max(pts) + 0.08 * span, 121)
        df = segment_change(r, a2)
        x0, x1 = a2[0], a2[-1]
        ymin, ymax = float(df.min()), float(df.max())
        yspan = max(ymax - ymin, 1e-15)

        def u(v):
            return (np.asarray(v, float) - x0) / (x1 - x0)

        def w(v):
            return (np.asarray(v, float) - ymin) / yspan

        inside = (a2 >= r.L) & (a2 <= r.H)
        self.obj_out.set_data(u(a2), w(df))
        self.obj_in.set_data(u(a2[inside]), w(df[inside]))
        uL, uH = float(u(r.L)), float(u(r.H))
        self.obj_LH.set_data([uL, uL, np.nan, uH, uH], [-0.1, 1.0, np.nan, -0.1, 1.0])
        self.obj_txt_L.set_x(uL)
        self.obj_txt_H.set_x(uH)
        self.obj_old.set_data([u(r.a2_old)], [w(0.0)])
        self.obj_new.set_data([u(r.a2_new)], [w(segment_change(r, r.a2_new))])
        if np.isfinite(r.a2_unclipped):
            self.obj_unc.set_data([u(r.a2_unclipped)], [w(segment_change(r, r.a2_unclipped))])
        else:
            self.obj_unc.set_data([], [])

        # the data and the model after the step
        beta = self.trace.coefs[t + 1]
        fx = beta @ self.Kg + self.trace.bs[t + 1]
        cat = tube_categories(beta, self.U[:n])
        self.tube.set_data(self.xs, fx, self.epsilon, self.X[:, 0], self.z, cat)
        k1, k2 = r.i1 % n, r.i2 % n
        self.chosen.set_offsets(np.column_stack([self.X[[k1, k2], 0], self.z[[k1, k2]]]))
        # names on opposite sides of the pair, inwards near the edges of the
        # panel, and the higher point's above it, the lower one's below: the
        # two never overlap
        left = self.X[k1, 0] <= self.X[k2, 0]
        upper = self.z[k1] >= self.z[k2]
        x0, x1 = self.ax_data.get_xlim()
        for txt, k, v, first in zip(self.txt_i, (k1, k2), (v1, v2), (True, False)):
            pos = (self.X[k, 0] - x0) / (x1 - x0)
            on_left = False if pos < 0.25 else True if pos > 0.75 else (left if first else not left)
            txt.set_position((self.X[k, 0], self.z[k]))
            txt.set_horizontalalignment("right" if on_left else "left")
            txt.set_verticalalignment("bottom" if upper == first else "top")
            txt.set_text(f"{v}  " if on_left else f"  {v}")
        self.data_title.set_text(
            f"after step {t + 1}: {int((cat > 0).sum())} SVs, b = {self.trace.bs[t + 1]:+.3f}")
        self.frame = t
        return self.caption(t)

    def player(self, interval=500, start=0):
        """A :class:`~svmlab.viz.FramePlayer` over every step (blitted)."""
        from ._common import FramePlayer

        return FramePlayer(self.fig, self.T, self.update, interval=interval,
                           description="step", start=start, animated=self.animated)

    def snapshot(self, t):
        """Draw step ``t`` and return PNG bytes of the whole figure."""
        from ._common import _unanimated, fig_to_png

        self.update(t)
        with _unanimated(self.animated):
            return fig_to_png(self.fig)


#: legend of the new pair, by whether the step was clipped
_NEW = {True: "new pair: clipped", False: "new pair: interior"}


def _clamp_on_line(geom, a2, lo, hi):
    """Move a point along the line ``a1 = k - s a2`` until both coordinates
    lie in ``[lo, hi]`` (an optimum far outside is drawn at the view's edge);
    None when the line misses the view."""
    b1, b2 = sorted(((geom.k - hi) / geom.s, (geom.k - lo) / geom.s))
    a2_lo, a2_hi = max(lo, b1), min(hi, b2)
    if a2_lo > a2_hi:
        return None
    v = float(np.clip(a2, a2_lo, a2_hi))
    return float(geom.a1_of(v)), v


# --------------------------------------------------------------------------
# the fitted tube
# --------------------------------------------------------------------------
class TubeFigure:
    """A fitted epsilon-SVR on 1-D data (:meth:`draw`):

    * left: the points, ``f`` and the tube ``f +- epsilon``; the points by
      ``beta_k`` (grey: 0; green diamonds: free support vectors, on the edge;
      red squares: at the bound ``|beta_k| = C``);
    * right: ``beta_k`` against the residual ``z_k - f(x_k)``, with the
      tube's edges ``+-epsilon`` and the bounds ``+-C``: every point inside
      has ``beta_k = 0``, every point outside ``beta_k = +-C`` (the sign of
      its residual), the free ones sit on an edge.  This is the KKT picture
      of SVR.

    ``animated``: the artists a refit changes; ``static_key()`` what the
    rest depends on (the axis limits: they follow the data, and the
    residual axis snaps to round values)."""

    def __init__(self, figsize=(8.5, 3.6), dpi=96, grid=200):
        self._grid_n = int(grid)
        self.fig = fig = new_figure(figsize=figsize, dpi=dpi)
        gs = fig.add_gridspec(1, 2, width_ratios=[1.45, 1.0], left=0.075, right=0.985,
                              bottom=0.3, top=0.9, wspace=0.24)
        self.ax = self.data_ax = fig.add_subplot(gs[0, 0])
        self.ax_kkt = fig.add_subplot(gs[0, 1])
        self.tube = _TubePanel(self.ax, legend_kw=dict(
            loc="upper center", bbox_to_anchor=(0.78, -0.13), ncol=3, columnspacing=1.0,
            handletextpad=0.3, borderaxespad=0.2, labelspacing=0.3))
        self.ax.set_xlabel("$x$", fontsize=10, labelpad=1)
        self.ax.set_ylabel("$z$", fontsize=10, labelpad=1)
        self.title = self.ax.set_title("", fontsize=10)
        ax = self.ax_kkt
        ax.tick_params(labelsize=9.5)
        self.kkt_pts = [ax.scatter(np.empty(0), np.empty(0), s=22, c=c, marker=m, zorder=3)
                        for c, m in ((INSIDE, "o"), (EDGE, "D"), (BOUND, "s"))]
        (self.kkt_eps,) = ax.plot([], [], color=TUBE, lw=0.9, ls="--")
        ax.axhline(1.0, color=BOUND, lw=0.8, ls=":")
        ax.axhline(-1.0, color=BOUND, lw=0.8, ls=":")
        ax.set_ylim(-1.3, 1.3)
        ax.set_yticks([-1, 0, 1], ["$-C$", "0", "$C$"])
        ax.set_xlabel(r"residual $z_k-f(x_k)$", fontsize=10, labelpad=1)
        ax.set_ylabel(r"$\beta_k=\alpha_k-\alpha^*_k$", fontsize=10, labelpad=0)
        ax.set_title(r"KKT: edges $\pm\varepsilon$ (dashed)", fontsize=10)
        self.animated = _set_animated([*self.tube.artists, *self.kkt_pts, self.kkt_eps,
                                       self.title])

    def static_key(self):
        return _static_key(self.ax, self.ax_kkt)

    def draw(self, X, z, model):
        """Draw the fitted ``model`` (an :class:`svmlab.svm.SVR`, or anything
        with ``predict``, ``support_``, ``dual_coef_``, ``C``, ``epsilon``) on
        ``(X, z)``; returns :func:`svr_counts`."""
        X = np.asarray(X, dtype=np.float64)
        z = np.asarray(z, dtype=np.float64)
        x = X[:, 0]
        lo, hi = _limits(x, 0.04)
        xs = np.linspace(lo, hi, self._grid_n)
        fx = model.predict(xs[:, None])
        eps, C = float(model.epsilon), float(model.C)
        beta = np.zeros(len(z))
        beta[model.support_] = np.asarray(model.dual_coef_).ravel()
        cat = tube_categories(beta, C)
        self.tube.set_data(xs, fx, eps, x, z, cat)
        self.ax.set_xlim(lo, hi)
        self.ax.set_ylim(*_rounded_limits(z, 0.3))
        res = z - model.predict(X)
        for k, sc in enumerate(self.kkt_pts):
            m = cat == k
            sc.set_offsets(np.column_stack([res[m], beta[m] / C]).reshape(-1, 2))
        rl = _nice_ceil(1.1 * max(float(np.max(np.abs(res))), 1.5 * eps, 1e-3))
        self.kkt_eps.set_data([-eps, -eps, np.nan, eps, eps], [-2, 2, np.nan, -2, 2])
        self.ax_kkt.set_xlim(-rl, rl)
        counts = svr_counts(X, z, model)
        gam = getattr(model, "_gamma", None)
        self.title.set_text(
            f"C = {C:g}, \u03b5 = {eps:g}, kernel {model.kernel}"
            + (f", \u03b3 = {gam:.3g}" if gam is not None and model.kernel != "linear" else "")
            + f": {counts['sv']} SVs of {counts['n']}")
        return counts


# --------------------------------------------------------------------------
# one-class SVM and nu
# --------------------------------------------------------------------------
def one_class_counts(model, X, tol=None):
    """The numbers the one-class picture prints: ``{"n", "nu", "outside",
    "boundary", "sv", "bound", "frac_outside", "frac_sv", "holds"}``.

    ``outside``: ``f(x_i) < -tol`` (beyond the boundary by more than the
    solver's tolerance: the free support vectors lie on ``f = 0`` only up to
    ``tol``); ``boundary``: ``|f(x_i)| <= tol``; ``sv``: ``alpha_i > 0``;
    ``bound``: ``alpha_i`` at its upper bound.  ``holds``: Schoelkopf et
    al.'s bounds ``outside / n <= nu <= sv / n``."""
    X = np.asarray(X, dtype=np.float64)
    tol = float(model.tol if tol is None else tol)
    f = model.decision_function(X)
    n = len(X)
    nu = float(model.nu)
    a = np.zeros(n)
    a[model.support_] = np.asarray(model.dual_coef_).ravel()
    out = int(np.sum(f < -tol))
    sv = int(np.sum(a > 0))
    return {"n": n, "nu": nu, "outside": out, "boundary": int(np.sum(np.abs(f) <= tol)),
            "sv": sv, "bound": int(np.sum(a >= 1.0)), "frac_outside": out / n,
            "frac_sv": sv / n,
            # compared in counts (nu n may be a whole number in floating point)
            "holds": bool(out <= nu * n + 1e-9 and nu * n <= sv + 1e-9)}


def nu_fractions(X, nus, *, kernel="rbf", gamma=0.5, tol=1e-3):
    """Fit :class:`svmlab.svm.OneClassSVM` for every ``nu`` in ``nus``;
    returns ``(frac_outside, frac_sv)`` arrays (:func:`one_class_counts`)."""
    from ..svm import OneClassSVM

    out, sv = [], []
    for nu in nus:
        m = OneClassSVM(nu=float(nu), kernel=kernel, gamma=gamma, tol=tol).fit(X)
        c = one_class_counts(m, X)
        out.append(c["frac_outside"])
        sv.append(c["frac_sv"])
    return np.asarray(out), np.asarray(sv)


def plot_nu_fractions(ax, nus, frac_outside, frac_sv, nu=None):
    """The fractions of :func:`nu_fractions` against nu, with the diagonal:
    the outside fraction stays below it, the support-vector fraction above.
    ``nu``: mark one value."""
    nus = np.asarray(nus, dtype=np.float64)
    ax.plot([0, 1], [0, 1], color="k", lw=0.9, ls="--", label=r"$\nu$")
    ax.plot(nus, frac_sv, color="#1f77b4", marker="o", ms=3.5, lw=1.5,
            label=r"support vectors ($\alpha_i>0$)")
    ax.plot(nus, frac_outside, color=BOUND, marker="s", ms=3.5, lw=1.5,
            label=r"outside ($f(x_i)<-\mathrm{tol}$)")
    if nu is not None:
        ax.axvline(nu, color=NEUTRAL, lw=0.8)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel(r"$\nu$", fontsize=10)
    ax.set_ylabel("fraction of the points", fontsize=10)
    ax.tick_params(labelsize=9.5)
    ax.legend(fontsize=9.5, frameon=False, loc="upper left")
    return ax


class OneClassFigure:
    """A fitted one-class SVM on 2-D points (:meth:`draw`):

    * left: ``f`` shaded (blue inside, red outside), the boundary ``f = 0``,
      the points (grey inside; red crosses outside by more than ``tol``),
      support vectors ringed (green: free, on the boundary; red: at the bound
      ``alpha_i = 1``);
    * right: the check of nu on a line from 0 to 1: the fraction outside,
      nu and the fraction of support vectors, which must come in that
      order, and the verdict.

    ``animated`` / ``static_key()`` as :class:`TubeFigure` (the limits
    follow the points only, so moving nu or gamma redraws only these)."""

    def __init__(self, figsize=(8.5, 4.1), dpi=96, grid=110):
        from matplotlib.collections import LineCollection
        from matplotlib.colors import ListedColormap
        from matplotlib.lines import Line2D
        import matplotlib

        self._grid_n = int(grid)
        self.fig = fig = new_figure(figsize=figsize, dpi=dpi)
        gs = fig.add_gridspec(1, 2, width_ratios=[1.0, 0.72], left=0.015, right=0.97,
                              bottom=0.035, top=0.92, wspace=0.1)
        right = gs[0, 1].subgridspec(2, 1, height_ratios=[1.55, 1.0], hspace=0.42)
        self.ax = self.data_ax = fig.add_subplot(gs[0, 0])
        self.ax_nu = fig.add_subplot(right[0])
        ax_leg = fig.add_subplot(right[1])
        ax_leg.axis("off")
        ax = self.ax
        base = matplotlib.colormaps["RdBu"](np.linspace(0, 1, 256))
        light = ListedColormap(0.45 * base + 0.55 * np.array([1.0, 1.0, 1.0, 1.0]))
        self.bg = ax.imshow(np.zeros((2, 2)), origin="lower", extent=(0, 1, 0, 1), cmap=light,
                            vmin=-1, vmax=1, aspect="auto", interpolation="nearest", zorder=0)
        self.boundary = LineCollection([], colors="k", linewidths=1.8, zorder=1)
        ax.add_collection(self.boundary)
        e = np.empty((0, 2))
        self.pts_in = ax.scatter(e[:, 0], e[:, 1], s=16, c="#555555", zorder=3,
                                 label="inside")
        self.pts_out = ax.scatter(e[:, 0], e[:, 1], s=40, c=BOUND, marker="x", linewidths=1.6,
                                  zorder=4, label=r"outside: $f<-\mathrm{tol}$")
        self.sv_free = ax.scatter(e[:, 0], e[:, 1], s=80, facecolors="none", edgecolors=EDGE,
                                  linewidths=1.4, zorder=5, label=r"SV, $0<\alpha_i<1$")
        self.sv_bound = ax.scatter(e[:, 0], e[:, 1], s=80, facecolors="none", edgecolors=BOUND,
                                   linewidths=1.4, zorder=5, label=r"SV, $\alpha_i=1$")
        # beside the picture, not over the shading (which changes every refit:
        # a legend on it would have to be drawn again every time)
        self.legend = ax_leg.legend(handles=[Line2D([], [], color="k", lw=1.8, label="$f=0$"),
                                             self.pts_in, self.pts_out, self.sv_free,
                                             self.sv_bound],
                                    fontsize=9.5, loc="center left", frameon=False, ncol=2,
                                    borderaxespad=0.0, handletextpad=0.3, labelspacing=0.4,
                                    columnspacing=1.0)
        ax.set_xticks([])
        ax.set_yticks([])
        self.title = ax.set_title("", fontsize=10)

        ax = self.ax_nu
        ax.set_xlim(0, 1)
        ax.set_ylim(-0.5, 3.5)
        ax.set_yticks([])
        ax.set_xticks([0, 0.25, 0.5, 0.75, 1], ["0", "0.25", "0.5", "0.75", "1"])
        ax.tick_params(labelsize=9.5)
        for side in ("left", "right", "top"):
            ax.spines[side].set_visible(False)
        ax.set_xlabel("fraction of the points", fontsize=10, labelpad=2)
        ys = (2.55, 1.5, 0.45)
        self.bars = ax.barh(ys, [0, 0, 0], height=0.42, color=[BOUND, "#333333", "#1f77b4"])
        self.bar_txt = [ax.text(0, y, "", fontsize=10, va="center", ha="left") for y in ys]
        for y, lab in zip(ys, ("outside / n", r"$\nu$", "support vectors / n")):
            ax.text(0.0, y + 0.36, lab, fontsize=10, va="center", ha="left")
        (self.nu_line,) = ax.plot([0, 0], [-0.5, 3.1], color="#333333", lw=0.9, ls="--",
                                  zorder=0)
        self.verdict = ax.set_title("", fontsize=10.5)
        self.animated = _set_animated([self.bg, self.boundary, self.pts_in, self.pts_out,
                                       self.sv_free, self.sv_bound, self.title, *self.bars,
                                       *self.bar_txt, self.nu_line, self.verdict])

    def static_key(self):
        return _static_key(self.ax, self.ax_nu)

    def draw(self, X, model):
        """Draw the fitted ``model`` (:class:`svmlab.svm.OneClassSVM`) on
        ``X`` (n, 2); returns :func:`one_class_counts`."""
        X = np.asarray(X, dtype=np.float64)
        lo, hi = X.min(0), X.max(0)
        span = np.where(hi > lo, hi - lo, 1.0)
        lo, hi = lo - 0.12 * span, hi + 0.12 * span
        xs, ys = np.linspace(lo[0], hi[0], self._grid_n), np.linspace(lo[1], hi[1], self._grid_n)
        gx, gy = np.meshgrid(xs, ys)
        Z = model.decision_function(np.column_stack([gx.ravel(), gy.ravel()])).reshape(gx.shape)
        # blue inside (f > 0), red outside, each side scaled on its own
        top, bottom = max(float(Z.max()), 1e-12), max(float(-Z.min()), 1e-12)
        self.bg.set_data(np.where(Z > 0, Z / top, Z / bottom))
        self.bg.set_extent((lo[0], hi[0], lo[1], hi[1]))
        self.boundary.set_segments(contour_segments(xs, ys, Z, 0.0))
        self.ax.set_xlim(lo[0], hi[0])
        self.ax.set_ylim(lo[1], hi[1])
        c = one_class_counts(model, X)
        f = model.decision_function(X)
        a = np.zeros(len(X))
        a[model.support_] = np.asarray(model.dual_coef_).ravel()
        out = f < -float(model.tol)
        self.pts_in.set_offsets(X[~out].reshape(-1, 2))
        self.pts_out.set_offsets(X[out].reshape(-1, 2))
        self.sv_free.set_offsets(X[(a > 0) & (a < 1)].reshape(-1, 2))
        self.sv_bound.set_offsets(X[a >= 1].reshape(-1, 2))
        gam = getattr(model, "_gamma", None)
        self.title.set_text(
            f"one-class SVM, \u03bd = {c['nu']:.2f}, kernel {model.kernel}"
            + (f", \u03b3 = {gam:.3g}" if gam is not None and model.kernel != "linear" else ""))
        vals = (c["frac_outside"], c["nu"], c["frac_sv"])
        for bar, txt, v, cnt in zip(self.bars, self.bar_txt, vals,
                                    (c["outside"], None, c["sv"])):
            bar.set_width(v)
            txt.set_x(min(v, 0.55) + 0.02)
            txt.set_text(f"{v:.3f}" + (f" ({cnt} of {c['n']})" if cnt is not None else ""))
        self.nu_line.set_xdata([c["nu"], c["nu"]])
        self.verdict.set_text("outside / n \u2264 \u03bd \u2264 SVs / n: "
                              + ("holds" if c["holds"] else "FAILS"))
        self.verdict.set_color("#188038" if c["holds"] else "#c5221f")
        return c


# --------------------------------------------------------------------------
# Platt's sigmoid and the reliability diagram
# --------------------------------------------------------------------------
def cv_decision_values(make_estimator, X, y, *, n_folds=5, random_state=0):
    """Cross-validated decision values: for each of ``n_folds`` folds
    (``StratifiedKFold``, shuffled by ``random_state``) an estimator from
    ``make_estimator()`` is fitted on the other folds and gives the decision
    values of this fold's points.  Returns ``f`` (n,), positive for the
    larger label."""
    from sklearn.model_selection import StratifiedKFold

    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    f = np.empty(len(y))
    folds = StratifiedKFold(n_splits=int(n_folds), shuffle=True,
                            random_state=int(random_state))
    for train, test in folds.split(X, y):
        f[test] = make_estimator().fit(X[train], y[train]).decision_function(X[test])
    return f


def platt_fit(f, y):
    """Platt's sigmoid ``P(y = +1 | f) = 1 / (1 + exp(A f + B))`` fitted to
    decision values ``f`` with labels ``y`` (> 0 positive) by
    :func:`svmlab.svm._probability.sigmoid_fit` (Platt's regularised targets
    ``(N+ + 1) / (N+ + 2)`` and ``1 / (N- + 2)``, Lin, Lin and Weng's Newton
    method); returns ``(A, B)``."""
    from ..svm._probability import sigmoid_fit

    A, B, _ = sigmoid_fit(np.asarray(f, dtype=np.float64), np.asarray(y) > 0)
    return float(A), float(B)


def _sigmoid(f, A, B):
    from ..svm._probability import sigmoid_predict

    return sigmoid_predict(np.asarray(f, dtype=np.float64), A, B)


def reliability(p, y, n_bins=10):
    """The reliability diagram of probabilities ``p`` of the positive class
    against labels ``y`` (> 0 positive): ten equal-width bins of ``p``;
    returns ``(mean_p, frac_pos, count)`` per bin (nan where a bin is empty)
    and the expected calibration error ``sum_b count_b / n |frac_b -
    mean_b|``."""
    p = np.asarray(p, dtype=np.float64)
    pos = np.asarray(y) > 0
    b = np.minimum((p * n_bins).astype(int), n_bins - 1)
    count = np.bincount(b, minlength=n_bins).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_p = np.bincount(b, weights=p, minlength=n_bins) / count
        frac = np.bincount(b, weights=pos.astype(float), minlength=n_bins) / count
    ok = count > 0
    ece = float(np.sum(count[ok] / len(p) * np.abs(frac[ok] - mean_p[ok])))
    return mean_p, frac, count, ece


def platt_summary(X, y, X_test, y_test, *, C=1.0, kernel="rbf", gamma=1.0, seed=0,
                  n_folds=5):
    """Everything the Platt picture shows, computed: the model
    (:class:`svmlab.svm.SVC`) on ``(X, y)``, its cross-validated decision
    values ``f_cv`` and training decision values ``f_train``, the sigmoid
    fitted to each (``A, B`` and ``A_train, B_train``), Platt's targets,
    and on the fresh points ``(X_test, y_test)``: both sigmoids'
    probabilities, their reliability diagrams, log-loss, Brier score and
    expected calibration error.  A dict."""
    from ..svm import SVC

    def make():
        return SVC(C=float(C), kernel=kernel, gamma=gamma)

    y = np.asarray(y)
    y_test = np.asarray(y_test)
    f_cv = cv_decision_values(make, X, y, n_folds=n_folds, random_state=seed)
    model = make().fit(X, y)
    f_train = model.decision_function(X)
    A, B = platt_fit(f_cv, y)
    At, Bt = platt_fit(f_train, y)
    f_test = model.decision_function(X_test)
    npos, nneg = int(np.sum(y > 0)), int(np.sum(y <= 0))
    out = {"model": model, "f_cv": f_cv, "f_train": f_train, "y": y, "A": A, "B": B,
           "A_train": At, "B_train": Bt, "n_pos": npos, "n_neg": nneg,
           "t_pos": (npos + 1) / (npos + 2), "t_neg": 1 / (nneg + 2), "f_test": f_test,
           "y_test": y_test}
    pos = y_test > 0
    for key, (a, b) in (("cv", (A, B)), ("train", (At, Bt))):
        p = _sigmoid(f_test, a, b)
        pc = np.clip(p, 1e-15, 1 - 1e-15)
        out[f"p_{key}"] = p
        out[f"rel_{key}"] = reliability(p, y_test)
        out[f"logloss_{key}"] = float(-np.mean(np.where(pos, np.log(pc), np.log1p(-pc))))
        out[f"brier_{key}"] = float(np.mean((p - pos) ** 2))
        out[f"ece_{key}"] = out[f"rel_{key}"][3]
    return out


class PlattFigure:
    """Platt scaling in two panels (:meth:`draw` with a
    :func:`platt_summary`):

    * left: the cross-validated decision values (points at height 1 for
      positives, 0 for negatives, jittered), the sigmoid fitted to them
      (solid) and Platt's targets ``t+``, ``t-`` (short dashes at the ends),
      and the sigmoid fitted to the training decision values (dotted) for
      contrast;
    * right: the reliability diagram on fresh points: the fraction of
      positives in each bin of predicted probability against the mean
      predicted probability, for both sigmoids, with the diagonal of perfect
      calibration and the bins' sizes as a grey histogram.

    ``animated`` / ``static_key()`` as :class:`TubeFigure` (the decision
    axis snaps to whole numbers)."""

    def __init__(self, figsize=(8.5, 3.9), dpi=96):
        self.fig = fig = new_figure(figsize=figsize, dpi=dpi)
        gs = fig.add_gridspec(1, 2, left=0.075, right=0.985, bottom=0.3, top=0.9, wspace=0.25)
        self.ax = self.data_ax = fig.add_subplot(gs[0, 0])
        self.ax_rel = fig.add_subplot(gs[0, 1])
        ax = self.ax
        ax.tick_params(labelsize=9.5)
        e = np.empty(0)
        self.pts = [ax.scatter(e, e, s=12, c=c, marker=m, alpha=0.7, linewidths=0, zorder=3)
                    for c, m in (("#1f77b4", "o"), ("#ff7f0e", "s"))]
        (self.sig,) = ax.plot([], [], color="k", lw=1.8, zorder=4,
                              label="sigmoid on CV values")
        (self.sig_train,) = ax.plot([], [], color="#9467bd", lw=1.5, ls=":", zorder=4,
                                    label="on training values")
        (self.targets,) = ax.plot([], [], color="#2ca02c", lw=2.0, ls="--", zorder=5,
                                  label=r"targets $t_+$, $t_-$")
        ax.set_ylim(-0.12, 1.12)
        ax.set_xlabel("decision value $f$ (cross-validated)", fontsize=10, labelpad=1)
        ax.set_ylabel("$P(y=+1\\mid f)$", fontsize=10, labelpad=1)
        ax.legend(handles=[self.sig, self.sig_train, self.targets], fontsize=9.5,
                  frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.17), ncol=2,
                  columnspacing=0.8, handletextpad=0.3)
        self.title = ax.set_title("", fontsize=10)

        ax = self.ax_rel
        ax.tick_params(labelsize=9.5)
        self.hist = ax.bar(np.arange(10) / 10 + 0.05, np.zeros(10), width=0.09,
                           color="#dddddd", zorder=0)
        ax.plot([0, 1], [0, 1], color="k", lw=0.8, ls="--", zorder=1)
        (self.rel_cv,) = ax.plot([], [], color="k", marker="o", ms=4.5, lw=1.6, zorder=3,
                                 label="Platt (CV values)")
        (self.rel_train,) = ax.plot([], [], color="#9467bd", marker="s", ms=4, lw=1.3, ls=":",
                                    zorder=3, label="sigmoid on training values")
        ax.set_xlim(0, 1)
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlabel("mean predicted $P(y=+1)$ in the bin", fontsize=10, labelpad=1)
        ax.set_ylabel("fraction of positives", fontsize=10, labelpad=1)
        ax.legend(handles=[self.rel_cv, self.rel_train], fontsize=9.5, frameon=False,
                  loc="upper center", bbox_to_anchor=(0.45, -0.17), ncol=1,
                  handletextpad=0.3, labelspacing=0.3)
        self.rel_title = ax.set_title("", fontsize=10)
        self.animated = _set_animated([*self.hist, *self.pts, self.sig, self.sig_train,
                                       self.targets, self.title, self.rel_cv, self.rel_train,
                                       self.rel_title])

    def static_key(self):
        return _static_key(self.ax, self.ax_rel)

    def draw(self, s):
        """Draw a :func:`platt_summary` ``s``."""
        f, y = s["f_cv"], s["y"]
        rng = np.random.default_rng(0)
        jit = 0.035 * rng.uniform(-1, 1, len(f))
        for sc, m, h in zip(self.pts, (y <= 0, y > 0), (0.0, 1.0)):
            sc.set_offsets(np.column_stack([f[m], h + jit[m]]).reshape(-1, 2))
        lo, hi = _rounded_limits(f, 0.04, grid=1.0)
        fs = np.linspace(lo, hi, 200)
        self.sig.set_data(fs, _sigmoid(fs, s["A"], s["B"]))
        self.sig_train.set_data(fs, _sigmoid(fs, s["A_train"], s["B_train"]))
        w = 0.1 * (hi - lo)
        self.targets.set_data([hi - w, hi, np.nan, lo, lo + w],
                              [s["t_pos"], s["t_pos"], np.nan, s["t_neg"], s["t_neg"]])
        self.ax.set_xlim(lo, hi)
        self.title.set_text(f"A = {s['A']:.3f}, B = {s['B']:.3f} "
                            f"({s['n_pos']} positives, {s['n_neg']} negatives)")
        mp, fr, cnt, _ = s["rel_cv"]
        ok = cnt > 0
        self.rel_cv.set_data(mp[ok], fr[ok])
        mpt, frt, cntt, _ = s["rel_train"]
        okt = cntt > 0
        self.rel_train.set_data(mpt[okt], frt[okt])
        tot = max(cnt.sum(), 1.0)
        for bar, c in zip(self.hist, cnt):
            bar.set_height(c / tot)
        self.rel_title.set_text(f"{len(s['y_test'])} fresh points: ECE {s['ece_cv']:.3f} "
                                f"vs {s['ece_train']:.3f}")
        return s


# --------------------------------------------------------------------------
# the live pictures: one-frame explorers in the one live widget
# --------------------------------------------------------------------------
def _live_picture(name, figure, specs, make_points, fit, draw_fit, *, click, X=None, y=None,
                  labels="float"):
    """A :class:`~svmlab.viz.live.LiveExplorer` over ``figure`` (a
    ``TubeFigure``, ``OneClassFigure`` or ``PlattFigure``): every fit draws
    it again (:class:`~svmlab.viz._protocol.PictureExplorer`).  Besides the
    explorer's attributes it has ``.numbers`` (what ``draw_fit`` measured),
    ``.model``, ``.figure``, ``.image`` and :meth:`png`."""
    from ._protocol import PictureExplorer
    from .live import LiveExplorer

    return LiveExplorer(name, specs, make_points, fit,
                        lambda f: PictureExplorer(figure, draw_fit, f), click=click,
                        data_axes=lambda ex: [ex.figure.data_ax], X=X, y=y, labels=labels)


def _model_fit(make_model, X, y=None):
    """Fit ``make_model()`` on ``(X, y)`` and wrap it as a :class:`Fit`."""
    t0 = time.perf_counter()
    m = make_model().fit(X) if y is None else make_model().fit(X, y)
    return Fit(X, y, estimator=m, fit_seconds=time.perf_counter() - t0)


def _fraction(name, value, lo, hi, role="solver"):
    return Control(name, "float", value, role=role, lo=lo, hi=hi)


def _regression_controls(C, C_max, epsilon, kernel, gamma, dataset, n, n_range, noise, seed,
                         user):
    """The controls of the two epsilon-SVR explorers."""
    return [Control("C", "log", C, lo=1e-2, hi=C_max),
            Control("epsilon", "log", epsilon, lo=1e-3, hi=1.0),
            *kernel_controls(kernel, gamma),
            *data_controls(REGRESSION_SETS, dataset, n, seed, user=user, n_range=n_range,
                           extra=[_fraction("noise", noise, 0.0, 0.5, role="data")])]


def _regression_points(v):
    return regression_points(v["dataset"], v["n"], v["noise"], v["seed"])


def live_svr_tube(X=None, z=None, *, C=1.0, epsilon=0.1, kernel="rbf", gamma=1.0,
                  dataset="sinc", n=30, noise=0.1, seed=0, tol=1e-3):
    """Live epsilon-SVR (:class:`svmlab.svm.SVR`) on 1-D data, drawn by
    :class:`TubeFigure`: C, epsilon, kernel, gamma, dataset, n, noise, seed;
    a click on the left panel adds the point ``(x, z)`` there (``remove``:
    the nearest point goes).  The status line counts the points inside, on
    the edge of and outside the tube, and the support vectors (free and at
    the bound), and checks the KKT picture: every point outside has
    ``|beta| = C``, every point inside ``beta = 0``.

    Example: ``live = live_svr_tube(); live.controls["epsilon"].value = 0.3``."""
    from ..svm import SVR

    user = X is not None
    if user and (np.asarray(X).ndim != 2 or np.asarray(X).shape[1] != 1):
        raise ValueError("live_svr_tube draws 1-D regressions: X must have one column")
    specs = _regression_controls(C, 1e3, epsilon, kernel, gamma, dataset, n, (6, 200), noise,
                                 seed, user)

    def fit(v, X, z):
        return _model_fit(lambda: SVR(C=v["C"], epsilon=v["epsilon"], kernel=v["kernel"],
                                      gamma=v["gamma"], tol=tol), X, z)

    def draw_fit(figure, f):
        c = figure.draw(f.X, f.y, f.estimator)
        m = f.estimator
        ok = c["outside_not_bound"] == 0 and c["inside_sv"] == 0
        check = ("<span style='color:#188038'>every point outside has |&beta;| = C, every "
                 "point inside &beta; = 0</span>" if ok else
                 f"<span style='color:#c5221f'>{c['outside_not_bound']} point(s) outside with "
                 f"|&beta;| &lt; C, {c['inside_sv']} inside with &beta; &ne; 0</span>")
        f.summary = (f"C = {m.C:.3g}, &epsilon; = {m.epsilon:.3g}: "
                     f"{c['n']} points: {c['inside']} inside the tube, {c['edge']} on its edge, "
                     f"{c['outside']} outside (|z &minus; f| &gt; &epsilon; + tol); "
                     f"{c['sv']} support vectors ({c['free']} free, {c['bound']} at "
                     f"|&beta;| = C) &middot; {check}")
        f.numbers = {**c, "model": m}

    return _live_picture("epsilon-SVR", TubeFigure(), specs, _regression_points, fit, draw_fit,
                         click="regression", X=X, y=z)


def live_one_class(X=None, *, nu=0.2, kernel="rbf", gamma=0.5, dataset="blob", n=100,
                   outliers=0.1, seed=0, tol=1e-3):
    """Live one-class SVM (:class:`svmlab.svm.OneClassSVM`) on 2-D points,
    drawn by :class:`OneClassFigure`: nu, kernel, gamma, dataset, n, the
    fraction of uniform outliers, seed; a click adds a point (``remove``:
    the nearest goes).  The status line prints the measured fractions next
    to nu, ``outside / n <= nu <= support vectors / n``, and says whether
    they hold (:func:`one_class_counts`).

    Example: ``live = live_one_class(); live.controls["nu"].value = 0.5``."""
    from ..svm import OneClassSVM

    user = X is not None
    if user and (np.asarray(X).ndim != 2 or np.asarray(X).shape[1] != 2):
        raise ValueError("live_one_class draws 2-D points: X must have two columns")
    specs = [_fraction("nu", nu, 0.01, 0.99), *kernel_controls(kernel, gamma),
             *data_controls(ONE_CLASS_SETS, dataset, n, seed, user=user, n_range=(10, 300),
                            extra=[_fraction("outliers", outliers, 0.0, 0.5, role="data")])]

    def make_points(v):
        return one_class_points(v["dataset"], v["n"], v["outliers"], v["seed"]), None

    def fit(v, X, _y):
        return _model_fit(lambda: OneClassSVM(nu=v["nu"], kernel=v["kernel"], gamma=v["gamma"],
                                              tol=tol), X)

    def draw_fit(figure, f):
        c = figure.draw(f.X, f.estimator)
        sign = "&le;" if c["holds"] else "&#8816;"
        verdict = ("<span style='color:#188038'>holds</span>" if c["holds"] else
                   "<span style='color:#c5221f'>does NOT hold</span>")
        f.summary = (f"{c['n']} points, nu = {c['nu']:.2f}: outside {c['outside']}/{c['n']} = "
                     f"{c['frac_outside']:.3f} {sign} nu = {c['nu']:.3f} {sign} support vectors "
                     f"{c['sv']}/{c['n']} = {c['frac_sv']:.3f}: {verdict} &middot; "
                     f"{c['bound']} at &alpha; = 1, {c['boundary']} on the boundary "
                     f"(|f| &le; tol)")
        f.numbers = {**c, "model": f.estimator}

    return _live_picture("one-class SVM", OneClassFigure(), specs, make_points, fit, draw_fit,
                         click="points", X=X, labels="none")


def live_platt(X=None, y=None, *, C=1.0, kernel="rbf", gamma=0.5, dataset="moons", n=100,
               noise=None, seed=0, n_test=2000):
    """Live Platt scaling, drawn by :class:`PlattFigure`: C, kernel,
    gamma, dataset, n, noise, seed.  Each change fits
    :class:`svmlab.svm.SVC` five times on the folds and once on all points,
    fits the sigmoid to the cross-validated decision values, and measures
    the reliability on ``n_test`` fresh points of the same set (its own
    seed); the status line prints ``A``, ``B``, the targets, and the log-loss,
    Brier score and calibration error of both sigmoids.  Choosing another
    dataset sets the noise to that set's default (:data:`CALIBRATION_NOISE`).
    No clicks: the
    picture shows decision values, not the plane.  ``X, y``: your own
    training points (the fresh points still come from ``dataset``).

    Example: ``live = live_platt(); live.controls["C"].value = 100``."""
    user = X is not None
    default_noise = CALIBRATION_NOISE.get(dataset, 1.0) if noise is None else float(noise)
    specs = [Control("C", "log", C, lo=1e-2, hi=1e3), *kernel_controls(kernel, gamma),
             *data_controls(CALIBRATION_SETS, dataset, n, seed, user=user, n_range=(20, 400),
                            extra=[Control("noise", "float", default_noise, role="data",
                                           lo=0.05, hi=2.0, step=0.05)])]
    fresh = {}
    holder = {"dataset": USER if user else dataset}

    def make_points(v):
        ds = v["dataset"]
        if ds != holder["dataset"] and ds != USER:
            # another set: its own default noise (the moons' 0.3 would make
            # the overlapping blobs separable)
            holder["dataset"] = ds
            if "live" in holder:
                holder["live"].set_quietly("noise", CALIBRATION_NOISE[ds])
            v = {**v, "noise": CALIBRATION_NOISE[ds]}
        return calibration_points(ds, v["n"], v["noise"], v["seed"])

    def fit(v, X, y):
        ds = v["dataset"] if v["dataset"] != USER else dataset
        key = (ds, v["noise"], v["seed"])
        if key not in fresh:
            fresh.clear()
            fresh[key] = calibration_points(ds, n_test, v["noise"], 10_000 + int(v["seed"]))
        Xt, yt = fresh[key]
        t0 = time.perf_counter()
        s = platt_summary(X, y, Xt, yt, C=v["C"], kernel=v["kernel"], gamma=v["gamma"],
                          seed=int(v["seed"]))
        return Fit(X, y, estimator=s["model"], numbers=s, params={"n_test": len(yt)},
                   fit_seconds=time.perf_counter() - t0)

    def draw_fit(figure, f):
        s = f.numbers
        figure.draw(s)
        f.summary = (f"{len(f.y)} points ({s['n_pos']} +1, {s['n_neg']} &minus;1): "
                     f"A = {s['A']:.3f}, B = {s['B']:.3f} (training-value sigmoid: "
                     f"A = {s['A_train']:.3f}) &middot; on {f.params['n_test']} fresh points: "
                     f"log-loss {s['logloss_cv']:.3f} (training-value sigmoid "
                     f"{s['logloss_train']:.3f}), Brier {s['brier_cv']:.3f} "
                     f"({s['brier_train']:.3f}), ECE {s['ece_cv']:.3f} ({s['ece_train']:.3f})")

    live = _live_picture("Platt scaling", PlattFigure(), specs, make_points, fit, draw_fit,
                         click=None, X=X,
                         y=None if y is None else np.where(np.asarray(y) > 0, 1.0, -1.0))
    holder["live"] = live
    return live


# --------------------------------------------------------------------------
# the live SVR step explorer (navigation, source panel, locks)
# --------------------------------------------------------------------------
def live_svr_steps(*, C=1.0, epsilon=0.1, kernel="rbf", gamma=1.0, dataset="sinc", n=24,
                   noise=0.1, seed=0, tol=1e-3, max_steps=2000, source="auto",
                   start="first"):
    """Live :class:`SVRStepExplorer`: every change of C, epsilon, kernel,
    gamma, dataset, n, noise or seed solves the epsilon-SVR dual again with
    :mod:`svmlab.reference.dual` (step records) and shows its steps.

    Navigation: ``"-10"``, ``"+10"``, ``"next clipped"``, ``"next y1 = y2"``
    (a pair of equal signs: two ``alpha`` or two ``alpha*``), ``"next y1 !=
    y2"``.  The source
    panel shows :class:`svmlab.reference.dual.Dual`'s selection and step with
    the lines of the step on screen marked; the lines of the segment ``[L,
    H]`` stay hidden until exercise ``08.svr_pair_bounds`` passes (or
    "reveal").  ``start``: ``"first"``, ``"last"`` or a step number
    (counted from 1).

    Example: ``live = live_svr_steps(start=5); live.jump("next y1 = y2")``."""
    from .live import LiveExplorer, reference_source

    specs = _regression_controls(C, 1e2, epsilon, kernel, gamma, dataset, n, (6, 80), noise,
                                 seed, False)

    def fit(v, X, z):
        t0 = time.perf_counter()
        tr = svr_trace(X, z, C=v["C"], epsilon=v["epsilon"], kernel=v["kernel"],
                       gamma=v["gamma"], tol=tol, max_steps=max_steps)
        fit_s = time.perf_counter() - t0
        if not tr.records:
            raise ValueError("the solver took no step (a = 0 is already optimal: every "
                             "point lies inside the tube of f = 0; make epsilon smaller)")
        return Fit(X, z, tr, tr.records, None,
                   dict(epsilon=v["epsilon"], kernel=v["kernel"], gamma=v["gamma"]), fit_s,
                   n_support=int(np.sum(tr.coefs[-1] != 0)),
                   capped_at=max_steps if tr.capped else None)

    nav = {"-10": None, "+10": None,
           "next clipped": lambda ex, k: bool(ex.record(k).clipped),
           "next y1 = y2": lambda ex, k: ex.record(k).y1 == ex.record(k).y2,
           "next y1 != y2": lambda ex, k: ex.record(k).y1 != ex.record(k).y2}
    # a regression: the status line counts targets, not classes (click=None)
    return LiveExplorer("epsilon-SVR", specs, _regression_points, fit, SVRStepExplorer.from_fit,
                        nav=nav, source=source, auto_source=lambda v: reference_source("dual"),
                        start=start, labels="float")
