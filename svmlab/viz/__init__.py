"""Plots and step-through widgets for the svmlab notebooks.

The notebooks stay thin: every figure and widget is built here, from the
step records the solvers emit (:mod:`svmlab._stepping`), and unit-tested.

Submodules (imported lazily, so ``import svmlab.viz`` does not import
matplotlib or ipywidgets):

``svmlab.viz.smo``            SMO step geometry (box, segment, 1-D objective), heuristics
``svmlab.viz.decomposition``  chunking / decomposition / SMO working sets (Platt's Fig. 2)
``svmlab.viz.cutting_plane``  cutting planes, bounds, constraint subsets
``svmlab.viz.ordinal``        ordinal regression sweep, ROC area
``svmlab.viz.irwls``          IRWLS weights, S1/S2/S3 sets, chunks
``svmlab.viz.scale``          scaling plots and tables for the full benchmarks
``svmlab.viz.family``         the SVM family: the epsilon-SVR tube and pair step, the one-class
                              boundary and nu, Platt's sigmoid and the reliability diagram,
                              each live (notebook 08)
``svmlab.viz.live``           the explorers above with controls that refit (C, gamma, kernel,
                              dataset, seed, selection rule ...), click-to-add points,
                              navigation buttons and the "which lines ran" panel

The live explorers share one protocol (:mod:`svmlab.viz._protocol`): controls
written as :class:`~svmlab.viz._protocol.Control` specs, a fit as one
:class:`~svmlab.viz._protocol.Fit`, explorers with ``from_fit``,
``reset(fit)``, ``draw(k)``, ``record(k)``, hosted by the one widget
:class:`svmlab.viz.live.LiveExplorer`.

Shared helpers (traces, the Play+slider player, colours) live in
:mod:`svmlab.viz._common` and are re-exported here: :func:`record_trace`,
:class:`Trace`, :class:`FramePlayer`, :func:`static_animation`,
:func:`new_figure`, :func:`notebook_size`, :func:`pick_size`,
:class:`DecisionGrid`.
"""


_SUBMODULES = {"smo", "decomposition", "cutting_plane", "ordinal", "irwls", "scale", "live",
               "family"}
_COMMON = {
    "record_trace",
    "Trace",
    "FramePlayer",
    "static_animation",
    "new_figure",
    "fig_to_png",
    "notebook_size",
    "pick_size",
    "DecisionGrid",
    "contour_segments",
    "plot_decision_regions",
    "class_colors",
    "CLASS_COLORS",
    "CLASS_MARKERS",
    "HIGHLIGHT",
    "VIOLATOR",
    "NEUTRAL",
    "SET_COLORS",
    "drawn_texts",
    "text_problems",
    "MIN_TEXT_PT",
    "course_style",
    "COURSE_RC",
    "MAX_FIGURE_PX",
    "warm_fits",
}

__all__ = sorted(_SUBMODULES | _COMMON)


def __getattr__(name):
    from svmlab import _load  # one import lock for every lazy name (svmlab._load)

    if name in _SUBMODULES:
        return _load(f"svmlab.viz.{name}")
    if name in _COMMON:
        return _load("svmlab.viz._common", name)
    raise AttributeError(f"module 'svmlab.viz' has no attribute {name!r}")


def __dir__():
    return __all__
