"""The one protocol of the live explorers: controls written as data, a fit as
one record, and what an explorer must offer to be hosted.

Three pieces, each written once:

* :class:`Control`: one control, described (kind, label, role, range, log
  scale, default).  :func:`build_controls` turns a list of them into
  ipywidgets and lays them out in one box per role ("solver", "kernel",
  "data"), so controls that do different things never sit in one row
  under the same kind of label.  :func:`kernel_controls` and
  :func:`data_controls` are the specs several explorers share.
* :class:`Fit`: what one run of the solver hands to the explorer and to the
  status line (points, trace, estimator, the settings the picture needs,
  seconds, support vectors, whether ``max_steps`` cut the trace, extra
  status text, numbers).  A factory's ``fit(values, X, y)`` returns one.
* :class:`Explorer`: the explorer side.  ``Cls.from_fit(fit)`` builds one,
  ``reset(fit)`` shows another fit in the same figure (one signature for
  every explorer; True when the blitting background stays valid),
  ``n_frames``, ``draw(k)`` (changes artists in place, returns the
  caption), ``record(k)`` (the record frame ``k`` shows, for the source
  panel), ``frame_labels()`` (the slider's readout) and ``animated`` (the
  artists ``draw`` changes).  :class:`PictureExplorer` is the one-frame
  case (a figure redrawn by every fit: the epsilon tube, one-class, Platt).

:class:`svmlab.viz.live.LiveExplorer` hosts any of them: adding an explorer
is one module with a ``fit`` function, an :class:`Explorer` and a list of
:class:`Control`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Control", "build_controls", "kernel_controls", "data_controls", "Fit", "Explorer",
           "PictureExplorer", "ROLES", "USER", "KERNELS"]

#: the roles, in display order, with the title of their box
ROLES = {"solver": "solver", "kernel": "kernel", "data": "data"}
#: the dataset entry of the reader's own (or clicked) points
USER = "your data"
KERNELS = ("rbf", "linear", "poly", "sigmoid")
_KINDS = ("log", "float", "int", "choice", "seed")


@dataclass(frozen=True)
class Control:
    """One control, as data.

    ``name`` is the key in ``live.controls`` (and in the values a fit
    gets); ``label`` what the reader sees (distinct within an explorer);
    ``kind``: ``"log"`` (a slider on a log10 scale over ``[lo, hi]``),
    ``"float"``, ``"int"`` (linear sliders with ``step``), ``"choice"``
    (a dropdown over ``options``: values or ``(label, value)`` pairs),
    ``"seed"`` (an integer box); ``role``: the box it goes in (``ROLES``).
    Sliders update on release (``continuous_update=False``): a refit per
    release, not per pixel dragged."""

    name: str
    kind: str
    default: Any
    role: str = "solver"
    label: str | None = None
    lo: float | None = None
    hi: float | None = None
    step: float | None = None
    options: tuple = ()
    fmt: str | None = None

    def __post_init__(self):
        if self.kind not in _KINDS:
            raise ValueError(f"unknown control kind {self.kind!r}; choose one of {_KINDS}")
        if self.role not in ROLES:
            raise ValueError(f"unknown role {self.role!r}; choose one of {tuple(ROLES)}")
        if self.kind in ("log", "float", "int") and (self.lo is None or self.hi is None):
            raise ValueError(f"control {self.name!r}: a slider needs lo and hi")
        if self.kind == "log" and not 0 < self.lo < self.hi:
            raise ValueError(f"control {self.name!r}: a log slider needs 0 < lo < hi")

    def widget(self):
        """The ipywidget for this control (the one place widgets are made)."""
        import ipywidgets as w

        label = self.label or self.name
        if self.kind == "log":
            return w.FloatLogSlider(value=self.default, base=10, min=np.log10(self.lo),
                                    max=np.log10(self.hi), step=self.step or 0.1,
                                    description=label, continuous_update=False,
                                    readout_format=self.fmt or ".3g")
        if self.kind == "float":
            return w.FloatSlider(value=self.default, min=self.lo, max=self.hi,
                                 step=self.step or 0.01, description=label,
                                 continuous_update=False, readout_format=self.fmt or ".2f")
        if self.kind == "int":
            return w.IntSlider(value=int(self.default), min=int(self.lo), max=int(self.hi),
                               step=int(self.step or 1), description=label,
                               continuous_update=False)
        if self.kind == "choice":
            return w.Dropdown(options=list(self.options), value=self.default, description=label)
        return w.IntText(value=int(self.default), description=label,
                         layout=w.Layout(width="12em"))


def build_controls(specs):
    """``(widgets, box)`` from a list of :class:`Control`: ``widgets`` is
    ``{name: widget}`` in the order given; ``box`` holds one titled group per
    role, in the order of :data:`ROLES`.  Names and labels must be unique."""
    import ipywidgets as w

    specs = list(specs)
    names = [s.name for s in specs]
    labels = [s.label or s.name for s in specs]
    for what, seq in (("name", names), ("label", labels)):
        dup = sorted({v for v in seq if seq.count(v) > 1})
        if dup:
            raise ValueError(f"controls with the same {what}: {dup}")
    widgets = {s.name: s.widget() for s in specs}
    groups = []
    for role, title in ROLES.items():
        members = [widgets[s.name] for s in specs if s.role == role]
        if members:
            groups.append(group_box(title, members))
    return widgets, w.HBox(groups, layout=w.Layout(flex_flow="row wrap"))


def group_box(title, members):
    """A bordered box with a bold title, holding ``members`` (wrapping)."""
    import ipywidgets as w

    return w.HBox([w.HTML(f"<b>{title}</b>")] + list(members),
                  layout=w.Layout(border="1px solid #d0d0d0", padding="2px 6px",
                                  margin="2px 10px 2px 0", align_items="center",
                                  flex_flow="row wrap"))


def kernel_controls(kernel, gamma, lo=1e-2, hi=1e2):
    """The kernel and its gamma (log scale)."""
    return [Control("kernel", "choice", kernel, role="kernel", options=KERNELS),
            Control("gamma", "log", gamma, role="kernel", lo=lo, hi=hi)]


def data_controls(sets, dataset, n, seed, *, user=False, n_range=(10, 200), n_step=2,
                  extra=()):
    """Which points: the dataset (with ``"your data"`` first when the caller
    gave points), n, the ``extra`` data controls (noise ...), the seed."""
    opts = ((USER,) if user else ()) + tuple(sets)
    return [Control("dataset", "choice", USER if user else dataset, role="data", options=opts),
            Control("n", "int", int(n), role="data", lo=n_range[0], hi=n_range[1],
                    step=n_step),
            *extra,
            Control("seed", "seed", int(seed), role="data")]


@dataclass
class Fit:
    """One run of the solver, as an explorer and the status line use it.

    ``X, y``: the points fitted; ``trace``: what the explorer draws (a
    trace object, or a dict of them); ``records``: the solver's records in
    order (``live.trace``); ``estimator``: the fitted estimator (or model);
    ``params``: settings the picture needs beyond the estimator (kernel,
    gamma, epsilon ...); ``fit_seconds``; ``n_support`` (support vectors of
    the final model, or None); ``capped_at``: ``max_steps`` when it cut the
    trace, else None; ``summary``: extra status text; ``numbers``: what a
    one-frame picture measured (counts, fractions ...)."""

    X: Any = None
    y: Any = None
    trace: Any = None
    records: Any = ()
    estimator: Any = None
    params: dict = field(default_factory=dict)
    fit_seconds: float = 0.0
    n_support: int | None = None
    capped_at: int | None = None
    summary: str = ""
    numbers: dict = field(default_factory=dict)

    def capped(self, max_steps):
        """Set ``capped_at`` when the trace holds ``max_steps`` records."""
        self.capped_at = max_steps if len(self.records) >= max_steps else None
        return self


class Explorer:
    """Base of the step explorers (see the module docstring).  Subclasses
    give ``from_fit``, ``reset``, ``n_frames``, ``update(k)`` and
    ``record(k)``; ``draw`` and ``frame_labels`` have defaults."""

    fig = None
    animated = ()

    @classmethod
    def from_fit(cls, fit):  # pragma: no cover - every subclass has one
        raise NotImplementedError

    def reset(self, fit):  # pragma: no cover - every subclass has one
        """Show ``fit`` in the same figure.  Returns True when every pixel
        outside :attr:`animated` stays as it was (the player keeps its
        background), a list of axes when only the static parts of those
        changed (the player draws just them into its background), False
        when the whole figure must be rendered again."""
        raise NotImplementedError

    def draw(self, k):
        """Draw frame ``k`` in place; returns the caption."""
        return self.update(k)

    def frame_labels(self):
        return [str(k + 1) for k in range(self.n_frames)]

    def record(self, k):
        return None


class PictureExplorer(Explorer):
    """One frame: a figure object (``fig``, ``animated``, ``static_key()``,
    ``draw(...)``, ``data_ax``) that every fit redraws.  ``draw_fit(figure,
    fit)`` draws it and fills ``fit.numbers`` and ``fit.summary``."""

    n_frames = 1

    def __init__(self, figure, draw_fit, fit=None):
        self.figure = figure
        self.fig = figure.fig
        self.animated = list(getattr(figure, "animated", None) or [])
        self._draw_fit = draw_fit
        if fit is not None:
            self.reset(fit)

    def reset(self, fit):
        key = getattr(self.figure, "static_key", lambda: None)()
        self._draw_fit(self.figure, fit)
        return getattr(self.figure, "static_key", lambda: None)() == key

    def update(self, k):
        return None

    def frame_labels(self):
        return ["1"]
