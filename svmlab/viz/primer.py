"""Figures for the primer notebook (``notebooks/00_primer.ipynb``) and the
tour: the three KKT cases, the effect of C and gamma, and labelled 2-D
decision-region panels.

The SVM dual (Platt 1998, TR eq. 11)::

    max_alpha  W(alpha) = sum_i alpha_i - 1/2 sum_ij y_i y_j K(x_i, x_j) alpha_i alpha_j
    s.t.       0 <= alpha_i <= C,   sum_i y_i alpha_i = 0

with the model ``f(x) = sum_j alpha_j y_j K(x_j, x) + b``.  Its optimality
(KKT) conditions (TR eq. 12) tie each multiplier to the margin
``y_i f(x_i)`` of its point:

* ``alpha_i = 0``      =>  ``y_i f(x_i) >= 1``  (outside the margin, not a support vector);
* ``0 < alpha_i < C``  =>  ``y_i f(x_i) =  1``  (exactly on the margin: a free support vector);
* ``alpha_i = C``      =>  ``y_i f(x_i) <= 1``  (inside the margin or misclassified: a bound SV).

A point that breaks its case by more than ``tol`` is a *KKT violator*: the
purple crosses of ``01_smo_geometry``, computed the same way here
(:func:`svmlab.viz.smo.kkt_violators`, the test of Platt's examineExample).

Decisions where nobody said: a multiplier counts as "at 0" or "at C" only
when it is exactly there (SMO snaps values within ``1e-12 C`` onto a bound),
so the cases are read from ``alpha`` with exact comparisons; the margin axis
of :func:`plot_kkt_cases` is clipped to a readable window and points beyond it
are drawn at its edge.
"""

from __future__ import annotations

import numpy as np

from ._common import CLASS_COLORS, CLASS_MARKERS, VIOLATOR, plot_decision_regions

__all__ = [
    "KKT_CASES",
    "kkt_cases",
    "plot_kkt_cases",
    "label_decision_axes",
    "fit_C_gamma_grid",
    "plot_C_gamma_grid",
]

#: legend size of every primer figure (the course's minimum, 9 pt)
LEGEND_FONTSIZE = 9

#: the three cases, in the order of :func:`kkt_cases`' codes 0, 1, 2
KKT_CASES = (r"$\alpha_i=0$: $y_if(x_i)\geq1$",
             r"$0<\alpha_i<C$: $y_if(x_i)=1$",
             r"$\alpha_i=C$: $y_if(x_i)\leq1$")


def kkt_cases(alpha, yf, C, tol=1e-3):
    """Case of each point and whether it violates it.

    Parameters
    ----------
    alpha : multipliers, each in ``[0, C]``.
    yf : margins ``y_i f(x_i)``.
    C : the box bound.
    tol : how far ``y_i f(x_i)`` may miss its condition (Platt's ``tol``).

    Returns
    -------
    case : int array, 0 for ``alpha_i = 0``, 1 for ``0 < alpha_i < C``,
        2 for ``alpha_i = C``.
    violates : bool array, True where the point breaks its case by more
        than ``tol`` -- exactly :func:`svmlab.viz.smo.kkt_violators`' test
        (``alpha_i < C`` and ``y_i f_i < 1 - tol``, or ``alpha_i > 0`` and
        ``y_i f_i > 1 + tol``).
    """
    alpha = np.asarray(alpha, dtype=float)
    yf = np.asarray(yf, dtype=float)
    if alpha.shape != yf.shape:
        raise ValueError(f"alpha and yf must have the same shape, got {alpha.shape} and {yf.shape}")
    if not C > 0:
        raise ValueError(f"C must be positive, got {C}")
    if np.any(alpha < 0) or np.any(alpha > C):
        raise ValueError("every alpha_i must lie in [0, C]")
    case = np.where(alpha <= 0, 0, np.where(alpha >= C, 2, 1))
    r = yf - 1.0
    violates = ((r < -tol) & (alpha < C)) | ((r > tol) & (alpha > 0))
    return case, violates


def plot_kkt_cases(ax, alpha, yf, C, tol=1e-3, title=None, ylim=(-1.5, 3.0)):
    """Scatter of ``y_i f(x_i)`` (vertical) against the three KKT cases
    (horizontal), with the region each case allows shaded green.  Inside the
    middle case a point's horizontal position is ``alpha_i / C``; in the
    other two the points are spread by index (a fixed pattern, no random
    jitter).  Violators are drawn as purple crosses, as in
    ``01_smo_geometry``.

    Returns ``{"case": case, "violates": violates, "artists": {...}}``.
    """
    case, viol = kkt_cases(alpha, yf, C, tol)
    alpha = np.asarray(alpha, float)
    yf = np.asarray(yf, float)
    lo, hi = ylim
    # allowed regions of y f per case (TR eq. 12), shaded
    allowed = [(1.0, hi), (1.0 - 0.02, 1.0 + 0.02), (lo, 1.0)]
    for k, (a, b) in enumerate(allowed):
        ax.axhspan(a, b, xmin=(k + 0.05) / 3, xmax=(k + 0.95) / 3, color="#2ca02c", alpha=0.18,
                   lw=0, label="allowed by the KKT conditions" if k == 0 else None)
    ax.axhline(1.0, color="k", lw=0.8, ls=":")
    # x position: the case, spread by alpha/C inside the middle case, by index elsewhere
    n = len(alpha)
    spread = (np.arange(n) % 17) / 17.0 - 0.5
    x = case + 0.7 * np.where(case == 1, alpha / C - 0.5, 0.6 * spread)
    yv = np.clip(yf, lo, hi)
    arts = {}
    arts["ok"] = ax.scatter(x[~viol], yv[~viol], s=14, c="0.35", lw=0, label="point in its case")
    arts["viol"] = ax.scatter(x[viol], yv[viol], s=40, c=VIOLATOR, marker="x", lw=1.4,
                              label=f"KKT violator (by more than tol={tol:g})")
    ax.set_xticks([0, 1, 2])
    ax.set_xticklabels([r"$\alpha_i=0$", r"$0<\alpha_i<C$", r"$\alpha_i=C$"])
    ax.set_xlim(-0.5, 2.5)
    ax.set_ylim(lo, hi)
    ax.set_ylabel(r"margin $y_i f(x_i)$")
    ax.legend(fontsize=LEGEND_FONTSIZE, loc="upper right")
    if title:
        ax.set_title(title)
    return {"case": case, "violates": viol, "artists": arts}


def label_decision_axes(ax, xlabel=r"$x_1$", ylabel=r"$x_2$", legend=True, sv=True,
                        loc="lower right"):
    """Axis labels and a legend (classes, support vectors, f = 0, f = +-1)
    for a panel drawn by :func:`svmlab.viz.plot_decision_regions`, whose
    artists carry no labels.  ``loc="outside"`` puts the legend to the right
    of the axes, where it hides no point.  Returns the legend (or None)."""
    from matplotlib.lines import Line2D

    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if not legend:
        return None
    handles = [Line2D([], [], ls="", marker=CLASS_MARKERS[-1], color=CLASS_COLORS[-1],
                      label="class $-1$"),
               Line2D([], [], ls="", marker=CLASS_MARKERS[1], color=CLASS_COLORS[1],
                      label="class $+1$")]
    if sv:
        handles.append(Line2D([], [], ls="", marker="o", mfc="none", mec="k", ms=8,
                              label="support vector"))
    handles += [Line2D([], [], color="k", lw=1.6, label="$f=0$"),
                Line2D([], [], color="k", lw=1, ls="--", label=r"$f=\pm1$")]
    if loc == "outside":
        return ax.legend(handles=handles, fontsize=LEGEND_FONTSIZE, loc="upper left",
                         bbox_to_anchor=(1.02, 1.0), frameon=False)
    return ax.legend(handles=handles, fontsize=LEGEND_FONTSIZE, loc=loc, framealpha=0.8)


def fit_C_gamma_grid(X, y, Cs, gammas, random_state=0):
    """Fit :class:`svmlab.SMOClassifier` (RBF kernel) for every ``(C, gamma)``;
    returns ``{(C, gamma): fitted model}``."""
    from ..smo._estimator import SMOClassifier

    if len(Cs) == 0 or len(gammas) == 0:
        raise ValueError("Cs and gammas must each hold at least one value")
    return {(C, g): SMOClassifier(C=C, kernel="rbf", gamma=g, random_state=random_state,
                                  progress=False).fit(X, y)
            for C in Cs for g in gammas}


def plot_C_gamma_grid(X, y, Cs, gammas, models=None, figsize=None):
    """Grid of decision regions: one row per C, one column per gamma, each
    panel titled with its number of support vectors and training accuracy,
    one legend below the grid.  ``models`` (from :func:`fit_C_gamma_grid`) is
    fitted here when not given.  Returns ``(fig, axes, models)``."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    models = fit_C_gamma_grid(X, y, Cs, gammas) if models is None else models
    figsize = figsize or (min(8.5, 2.6 * len(gammas) + 0.7), 2.45 * len(Cs) + 0.7)
    fig, axes = plt.subplots(len(Cs), len(gammas), figsize=figsize, squeeze=False)
    for i, C in enumerate(Cs):
        for j, g in enumerate(gammas):
            m = models[(C, g)]
            ax = axes[i, j]
            plot_decision_regions(ax, m, X, y,
                                  title=(rf"$C={C:g}$, $\gamma={g:g}$" + "\n"
                                         f"{len(m.support_)} SVs, train acc. "
                                         f"{m.score(X, y):.2f}"))
            ax.title.set_fontsize(9.5)
            if j == 0:
                ax.set_ylabel(f"$C={C:g}$")
            if i == len(Cs) - 1:
                ax.set_xlabel(rf"$\gamma={g:g}$")
    handles = [Line2D([], [], ls="", marker=CLASS_MARKERS[-1], color=CLASS_COLORS[-1],
                      label="class $-1$"),
               Line2D([], [], ls="", marker=CLASS_MARKERS[1], color=CLASS_COLORS[1],
                      label="class $+1$"),
               Line2D([], [], ls="", marker="o", mfc="none", mec="k", ms=8,
                      label="support vector"),
               Line2D([], [], color="k", lw=1.6, label="$f=0$"),
               Line2D([], [], color="k", lw=1, ls="--", label=r"$f=\pm1$")]
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), frameon=False,
               fontsize=LEGEND_FONTSIZE, handletextpad=0.3, columnspacing=1.0)
    return fig, axes, models
