"""Live step explorers: change a parameter or click a point, and the solver runs again.

The step explorers of :mod:`svmlab.viz` replay one fit recorded in advance.
Here each of them gets controls that *refit*: the solver runs again on the
new problem, the trace is recorded again and the picture is rebuilt, in the
same widgets (the ``Image``, slider and Play button of one
:class:`~svmlab.viz.FramePlayer`, see :meth:`FramePlayer.replace`).

* :func:`live_smo`: :class:`~svmlab.viz.smo.SMOStepExplorer`; C, kernel, gamma,
  selection rule (platt / wss2), dataset, n, seed.
* :func:`live_cutting_plane`: :class:`~svmlab.viz.cutting_plane.CuttingPlaneExplorer`;
  C (Joachims' C), epsilon, dataset, n, seed (linear: no kernel, no gamma).
* :func:`live_ordinal`: :class:`~svmlab.viz.ordinal.SweepExplorer`; C, number of
  ranks, n, noise, seed, and the cutting-plane iteration whose ``w`` is swept.
* :func:`live_irwls`: :class:`~svmlab.viz.irwls.IRWLSExplorer`; C, kernel, gamma,
  selection (random / largest / smallest), working-set size, dataset, n, seed.
* :func:`live_family`: :class:`~svmlab.viz.decomposition.FamilyExplorer`; C,
  kernel, gamma, working-set size, sub-problem engine, dataset, n, seed.

Every one returns a :class:`LiveExplorer`:

``.widget``    the whole thing (displaying the explorer displays it);
``.controls``  ``{name: ipywidget}``; setting ``.value`` refits, as in the browser;
``.player``    the :class:`~svmlab.viz.FramePlayer` (one for the explorer's
               lifetime: refits swap the figure inside it);
``.explorer``  the current step explorer (``SMOStepExplorer``, ...); a refit resets it
               in place (same object, same figure: its ``reset`` method) unless the
               function was called with ``reuse_figure=False``;
``.trace``     the records of the current fit (``.record(k)``: the one frame k shows);
``.points``    the current ``(X, y)``, y in {-1, +1};
``.refit()``   run the solver again with the current controls and points;
``.add_point(x, y, label)``, ``.remove_nearest(x, y)``  edit the points and refit
               (what a click on the picture does; not for the ordinal sweep,
               whose picture does not show the points in the plane);
``.click(px, py)``  a click at pixel ``(px, py)`` of the image, as ipyevents reports it;
``.jump(name)`` / ``.nav``  navigation buttons (see each function); ``.note`` their answers;
``.source``    the "which lines ran" HTML panel (``None`` when off); lines an
               exercise asks the student to write are hidden until it passes
               (:func:`svmlab.exercises.revealed`); ``.reveal()`` /
               ``.reveal_button`` show them;
``.refit_ms``  per refit: milliseconds in the fit, the explorer build and the first frame;
``.fit``       the current :class:`~svmlab.viz._protocol.Fit` (``.model``, ``.numbers``:
               its estimator and what a picture measured); ``.kept_background``:
               whether the last refit kept the player's blitting background;
``.png()``     a full render at the designed dpi (a static picture).

Clicks (LIBSVM's ``svm-toy``): choose ``+1``, ``-1`` or ``remove`` with the
``click`` selector and click on a data panel.  The click arrives through
``ipyevents`` (a small, maintained widget library; no hand-written
JavaScript) as the pixel position in the rendered image's own pixels
(``dataX, dataY``: ipyevents rescales from the displayed size to the image's
natural size), and :meth:`FramePlayer.pixel_to_data` maps it through the
axes' transform.

Speed: a refit of a toy problem should feel instant, and building a new
figure costs a layout pass (``tight_layout`` measures every text), a cold
text cache and new tick objects, several times the cost of the fit
(docs/decisions/23c05-live-explorers-reuse-their-figure.md).  So every
explorer here is built once and each refit draws the new trace into the same
figure (``SMOStepExplorer.reset``,
``CuttingPlaneExplorer.reset``, ``SweepExplorer.reset``,
``IRWLSExplorer.reset``, ``FamilyExplorer.reset``; the figures have a fixed
layout, and the axes are emptied without losing their ticks).  The tests
check that the reused figure draws the same pixels as a new explorer.
``reuse_figure=False`` builds a new explorer per refit (for comparison).

Decisions where the task left a choice (documented for students and for the
notebook authors):

* Points are held with labels -1/+1 (a caller's two labels are mapped, the
  larger to +1).  Choosing a dataset draws new points and forgets clicked
  ones; so do ``n`` and the seed unless the dataset reads "your data" (the
  caller's points, or points edited by clicks), which they then keep
  (the seed still seeds the solver); changing a solver parameter keeps them.
* The seed seeds both the data and the solver (``random_state``).
* The ``n`` slider shows how many points the picture holds: the caller's
  points and clicked ones included (then it follows the points); choosing a
  generated dataset again restores the slider's own setting.
* The explorer opens at its first step, when it is shown and after every
  refit (``start="first"``, the default); ``start="last"`` opens at the last
  step (the model the solver reached: the primer uses it, whose text is
  about that model) and ``start=k`` at step k.  The slider's readout and the
  caption count the same way (from 1); **first** and **last** buttons sit
  beside the Play button.  A "next ..." button searches forward from the
  step on screen; when nothing follows, it goes round to the first such step
  from the start and says so in the note line, which the next successful
  jump, slider move or refit clears.
* A fit is recorded for at most ``max_steps`` steps (the trace of a large C
  can be long); the caption says so when the cap was hit.
* The source panel: ``source="auto"`` (default) uses
  ``svmlab.reference.<module>.explain`` when that module can be imported
  (the SMO explorer picks ``smo`` or ``wss2`` by the selection rule), else no
  panel; ``source=None`` turns it off; a callable ``source(record) -> html
  or None`` replaces it.  If ``explain`` fails for a record the panel says
  so instead of breaking the widget.
"""

from __future__ import annotations

import inspect
import time
from importlib import import_module

import numpy as np

from ._common import FramePlayer, record_trace
from ._protocol import KERNELS, USER, Control, Fit, data_controls, kernel_controls

__all__ = [
    "LiveExplorer",
    "live_smo",
    "live_cutting_plane",
    "live_ordinal",
    "live_irwls",
    "live_family",
    "toy_points",
    "ordinal_points",
    "reference_source",
    "DATASETS",
]

#: the explorers fit with float64 cached kernel values (``cache_dtype``): the
#: readable references in :mod:`svmlab.reference` compute in float64, so the
#: source panel and the exercises show exactly the steps that ran (the float32
#: default is for speed on large data; on these toy sets it changes nothing a
#: student can see except that the reference would drift from the trace)
EXACT = "float64"

#: the 2-D sets the live explorers offer (``svmlab.datasets.toy_2d`` kinds and Gauss-M)
DATASETS = ("moons", "blobs", "xor", "duplicates", "gauss-m")
_USER = USER  # kept for callers of the old name


# --------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------
def toy_points(dataset, n, seed):
    """``(X, y)`` of a 2-D teaching set: ``"moons"``, ``"blobs"``, ``"xor"``,
    ``"duplicates"`` (:func:`svmlab.datasets.toy_2d`) or ``"gauss-m"``
    (:func:`svmlab.datasets.gauss_m`); y in {-1, +1}."""
    from ..datasets import gauss_m, toy_2d

    if dataset == "gauss-m":
        return gauss_m(int(n), random_state=int(seed))
    if dataset not in DATASETS:
        raise ValueError(f"unknown dataset {dataset!r}; choose one of {DATASETS}")
    return toy_2d(dataset, int(n), random_state=int(seed))


def ordinal_points(n, n_ranks, noise, seed):
    """2-D points with ``n_ranks`` ordered ranks 1..R: the rank of a point
    is its position along the direction (1, 0.6) plus Gaussian noise of
    standard deviation ``noise``, cut at equally spaced quantiles (so every
    rank is present).  Returns ``(X, ranks)``, ranks int."""
    n, R = int(n), int(n_ranks)
    if R < 2 or n < 2 * R:
        raise ValueError(f"need at least 2 ranks and 2 points per rank (n={n}, ranks={R})")
    rng = np.random.default_rng(int(seed))
    X = rng.normal(size=(n, 2))
    s = X @ np.array([1.0, 0.6]) + float(noise) * rng.normal(size=n)
    cuts = np.quantile(s, np.linspace(0, 1, R + 1)[1:-1])
    return X, np.digitize(s, cuts) + 1


def _pm(y):
    """Labels as -1/+1 (the larger of two labels is +1)."""
    y = np.asarray(y)
    classes = np.unique(y)
    if len(classes) != 2:
        raise ValueError(f"a live explorer needs exactly two classes, got {len(classes)}")
    return np.where(y == classes[1], 1.0, -1.0)


# --------------------------------------------------------------------------
# "which lines ran"
# --------------------------------------------------------------------------
def reference_source(module, **kwargs):
    """A ``source(record) -> html`` callable from
    ``svmlab.reference.<module>.explain`` (with ``kwargs`` passed on when
    ``explain`` accepts them), rendered by :func:`source_panel_html` with the
    reveal locks of :mod:`svmlab.exercises` applied; ``None`` when that
    module or its ``explain`` does not exist (yet).  After each call,
    ``source.hidden`` holds the ids of the exercises whose lines it hid."""
    try:
        mod = import_module(f"svmlab.reference.{module}")
        explain = mod.explain
    except (ImportError, AttributeError):
        return None
    params = inspect.signature(explain).parameters
    kw = {k: v for k, v in kwargs.items() if k in params}

    def source(record):
        parts = explain(record, **kw)
        html, hidden = [], []
        for func, tags in parts:
            # the title names the module that defines the function (IRWLS and
            # the decomposition share svmlab/reference/subproblem.py)
            title = f"{func.__module__.rsplit('.', 1)[-1]}.{func.__qualname__}"
            h, ids = source_panel_html(func, tags, title=title)
            html.append(h)
            hidden += [i for i in ids if i not in hidden]
        source.hidden = tuple(hidden)
        return "".join(html)

    source.module = module
    source.hidden = ()
    return source


def source_panel_html(func, marks=(), title=None):
    """``(html, hidden_ids)``: the source of the reference function ``func``
    as an HTML block with the lines tagged ``marks`` highlighted (the lines
    that ran) and the lines of still-locked exercises replaced by one grey
    bar per run of lines that names the exercise
    (:func:`svmlab.exercises.hidden_lines`); ``hidden_ids`` are those
    exercises.  Lines never wrap (a long line scrolls sideways instead of
    breaking inside a name)."""
    import html as _html

    from ..exercises._registry import hidden_lines, source_lines

    marks = set(marks)
    lines = source_lines(func)
    unknown = marks - set().union(*(tags for _, tags in lines))
    if unknown:
        raise ValueError(f"{func.__qualname__} has no line tagged {sorted(unknown)}")
    hidden = hidden_lines(func)
    rows, ids = [], []
    k = 0
    while k < len(lines):
        if k in hidden:
            eid = hidden[k]
            j = k
            ran = False
            while j < len(lines) and hidden.get(j) == eid:
                ran = ran or bool(lines[j][1] & marks)
                j += 1
            indent = len(lines[k][0]) - len(lines[k][0].lstrip())
            n = j - k
            bg = "#f3e3a0" if ran else "#e4e4e4"
            rows.append(f'<span style="display:block;background:{bg};color:#555;'
                        f'font-style:italic">{" " * indent}[{n} line{"s" * (n > 1)} hidden: '
                        f'exercise {eid}{", ran at this step" if ran else ""}]</span>')
            if eid not in ids:
                ids.append(eid)
            k = j
            continue
        line, tags = lines[k]
        text = _html.escape(line) or " "
        if tags & marks:
            rows.append(f'<span style="background:#ffe58a;display:block">{text}</span>')
        else:
            rows.append(f'<span style="display:block;color:#333">{text}</span>')
        k += 1
    head = (f"<div style='font-weight:bold;margin:2px 0;font-size:13px'>{_html.escape(title)}"
            f"</div>" if title else "")
    return (f"{head}<pre style='font-size:12px;line-height:1.3;margin:0 0 6px 0;"
            f"white-space:pre;overflow-x:auto;border:1px solid #ddd;padding:4px'>"
            + "".join(rows) + "</pre>"), tuple(ids)

# --------------------------------------------------------------------------
# the widget
# --------------------------------------------------------------------------
def nav_label(key, unit="step"):
    """The button label of a navigation key: ``"-1"`` -> ``"1 step back"``,
    ``"+10"`` -> ``"10 steps forward"`` (``unit`` is the slider's name);
    other keys (``"next clipped"``) are their own label.  Distinct from the
    click-mode buttons ``+1``/``-1``, which change a clicked point's class."""
    import re

    m = re.fullmatch(r"([+-])(\d+)", key)
    if not m:
        return key
    n = int(m.group(2))
    return f"{n} {unit}{'' if n == 1 else 's'} {'back' if m.group(1) == '-' else 'forward'}"


#: what a click on the picture does, by the explorer's ``click`` kind
_CLICK_MODES = {"labelled": ("click adds", [("+1", 1), ("-1", -1), ("remove", 0)]),
                "points": ("click", [("add", 1), ("remove", 0)]),
                "regression": ("click", [("add", 1), ("remove", 0)])}


class LiveExplorer:
    """The one live widget: controls + status + player + optional source
    panel around any explorer of the protocol
    (:mod:`svmlab.viz._protocol`), refitting on every change.  Made by
    :func:`live_smo` and its siblings (and by the one-frame pictures of
    :mod:`svmlab.viz.family`); see the module docstring for the public
    attributes.

    Parameters
    ----------
    name : str, shown in the status line.
    specs : list of :class:`~svmlab.viz._protocol.Control`, in display order;
        the ``"data"`` role ones draw new points when changed.
    make_points : ``make_points(values) -> (X, y)`` from the control values.
    fit : ``fit(values, X, y) -> Fit``: run the solver.
    make_explorer : ``make_explorer(fit) -> explorer`` (a new one; later
        fits go to its ``reset(fit)`` unless ``reuse_figure=False``).
    nav : ``{label: predicate(explorer, k) -> bool}`` for "next ..." buttons;
        a label ``"-N"`` or ``"+N"`` with predicate ``None`` moves by N frames.
    click : what a click on the picture does: ``"labelled"`` (adds a point
        of the chosen class), ``"points"`` (adds a 2-D point), ``"regression"``
        (adds ``(x, z)``) or None (no clicks).
    data_axes : ``data_axes(explorer) -> list of Axes`` a click may land in.
    source : ``"auto"``, ``None`` or a callable (see the module docstring);
        ``auto_source(values) -> callable | None`` resolves ``"auto"``.
    X, y : the caller's points (then the dataset control offers "your data").
    labels : ``"pm"`` (two classes mapped to -1/+1), ``"raw"`` (kept as given).
    start : ``"first"``, ``"last"`` or a frame number (counted from 1).
    """

    def __init__(self, name, specs, make_points, fit, make_explorer, *, nav=None, click=None,
                 data_axes=None, source=None, auto_source=None, X=None, y=None,
                 labels="pm", start="first", interval=400, description="step",
                 reuse_figure=True):
        import ipywidgets as w

        from ._protocol import build_controls, group_box

        if not (start in ("first", "last") or (isinstance(start, (int, np.integer))
                                               and not isinstance(start, bool) and start >= 1)):
            raise ValueError("start must be 'first', 'last' or a frame number >= 1")
        if click not in (None, *_CLICK_MODES):
            raise ValueError(f"unknown click mode {click!r}")
        self.name = name
        self.specs = list(specs)
        self.controls, controls_box = build_controls(self.specs)
        self._data_controls = tuple(s.name for s in self.specs if s.role == "data")
        self._make_points = make_points
        self._fit = fit
        self._make_explorer = make_explorer
        self._reuse = reuse_figure
        self._click = click
        self._data_axes = data_axes
        self._source_arg = source
        self._auto_source = auto_source
        self._start = start
        self._description = description
        self._quiet = False
        self._source_fn = None
        self.refit_ms = []
        self.explorer = None
        self.fit = None
        #: whether the last refit kept the player's blitting background
        #: (nothing outside the explorer's animated artists changed)
        self.kept_background = False
        self.n_frames = 0
        if X is not None:
            if y is None and labels != "none":
                raise ValueError("give y together with X")
            self._X = np.array(X, dtype=np.float64)
            self._y = (None if y is None else _pm(y) if labels == "pm"
                       else np.array(y, dtype=np.float64) if labels == "float" else np.asarray(y))
            if self._X.ndim != 2 or (self._y is not None and len(self._X) != len(self._y)):
                raise ValueError("X must be (n, features) with one label per row")
        else:
            self._X, self._y = make_points(self.values())

        # widgets -------------------------------------------------------------
        self.status = w.HTML(layout=w.Layout(min_height="1.5em"))
        # answers of the buttons ("no eta <= 0 step in this fit", ...): cleared
        # by the next successful jump, slider move or refit
        self.note = w.HTML(layout=w.Layout(min_height="1.2em"))
        self.click_mode = None
        if click is not None:
            desc, opts = _CLICK_MODES[click]
            self.click_mode = w.ToggleButtons(options=opts, value=1, description=desc,
                                              style={"button_width": "72px"})
        self.nav = {}
        for label in (nav or {}):
            self.nav[label] = w.Button(description=nav_label(label, description),
                                       layout=w.Layout(width="auto"))
            self.nav[label].on_click(lambda _b, lab=label: self.jump(lab))
        self._nav_pred = dict(nav or {})
        self.source = w.HTML(layout=w.Layout(flex="1 1 26em", min_width="22em",
                                             max_height="36em", overflow="auto")) \
            if source is not None else None
        # the reveal button of the locked reference lines (hidden when none is locked)
        self.reveal_button = w.Button(description="reveal the hidden lines",
                                      icon="eye", layout=w.Layout(width="auto",
                                                                  display="none"),
                                      tooltip="show the reference lines an exercise asks you "
                                              "to write (they open by themselves once you pass "
                                              "the exercise)")
        self.reveal_button.on_click(lambda _b: self.reveal())
        self._hidden_ids = ()

        self.player = None
        self._fit_and_show()  # builds self.player on the first call
        for key, c in self.controls.items():
            c.observe(lambda change, key=key: self._on_control(key), names="value")
        self.player.slider.observe(self._on_slider, names="index")
        self._sync_n()
        from ..exercises._registry import on_lock_change

        on_lock_change(self._on_locks)

        # controls that do different things stay apart, each group in a box
        # with its name: solver, kernel, data, what a click does, the jumps
        groups = []
        if self.click_mode is not None:
            groups.append(group_box("picture", [self.click_mode]))
        if self.nav:
            groups.append(group_box("jump", list(self.nav.values())))
        rows = [controls_box]
        if groups:
            rows.append(w.HBox(groups, layout=w.Layout(flex_flow="row wrap")))
        p = self.player
        if self.n_frames == 1 and not self.nav:  # a picture: no frames to move through
            p.controls.layout.display = "none"
            p.caption.layout.display = "none"
        # natural size: never squeezed or stretched by the source panel beside it
        p.image.layout.flex = "0 0 auto"
        p.image.layout.align_self = "flex-start"
        side = ([w.VBox([self.reveal_button, self.source],
                        layout=w.Layout(flex="1 1 26em", min_width="22em"))]
                if self.source is not None else [])
        # the source panel goes below the picture when both do not fit side by side
        # (a 1280 px JupyterLab with its file browser open leaves 848 px)
        self.widget = w.VBox(rows + [self.status, p.controls, self.note, p.caption,
                                     w.HBox([p.image] + side,
                                            layout=w.Layout(flex_flow="row wrap",
                                                            align_items="flex-start"))])
        self._events = None
        if click is not None:
            try:
                from ipyevents import Event
            except ImportError:  # pragma: no cover - a core dependency
                self.status.value = "clicks need the ipyevents package"
            else:
                self._events = Event(source=p.image, watched_events=["click"],
                                     xy_coordinate_system="data",
                                     prevent_default_action=True)
                self._events.on_dom_event(self._on_click_event)

    # -- values, points -----------------------------------------------------
    def values(self):
        """The controls' current values, ``{name: value}``."""
        return {k: c.value for k, c in self.controls.items()}

    def set_quietly(self, name, value):
        """Set a control without refitting (a factory's own adjustments)."""
        self._quiet = True
        try:
            self.controls[name].value = value
        finally:
            self._quiet = False

    @property
    def points(self):
        """The current points ``(X, y)`` (copies; ``y`` None for one-class)."""
        return self._X.copy(), None if self._y is None else self._y.copy()

    @property
    def trace(self):
        """The records of the current fit (every recorded step, in order)."""
        return self.fit.records

    @property
    def model(self):
        """The fitted estimator (or model) of the fit on screen."""
        return self.fit.estimator

    @property
    def numbers(self):
        """What the fit on screen measured (a picture's counts, ...)."""
        return self.fit.numbers

    @property
    def image(self):
        return self.player.image

    @property
    def fig(self):
        return self.player.fig

    @property
    def figure(self):
        """The explorer's figure object (a picture's ``TubeFigure`` ...)."""
        return getattr(self.explorer, "figure", self.explorer)

    def _own(self):
        ds = self.controls.get("dataset")
        return ds is not None and ds.value == USER

    def _on_control(self, key):
        if self._quiet:
            return
        own = self._own()
        if key == "dataset" and own:
            return  # "your data" selected again: the points stay as they are
        try:
            if key == "dataset" and getattr(self, "_n_setting", None) is not None:
                # back to a generated set: n is the slider's own setting again
                self.set_quietly("n", self._n_setting)
                self._n_setting = None
            if key in self._data_controls and not own:
                self._X, self._y = self._make_points(self.values())
            self._fit_and_show()
            self._sync_n()
        except Exception as e:  # noqa: BLE001 - shown to the reader, widget stays usable
            self.status.value = f"<span style='color:#b00'>{type(e).__name__}: {e}</span>"
            raise

    # -- refitting ------------------------------------------------------------
    def refit(self):
        """Run the solver again on the current points with the current
        control values, reset the explorer and show its start frame.
        Returns the number of frames."""
        self._fit_and_show()
        return self.n_frames

    def _fit_and_show(self):
        t0 = time.perf_counter()
        values = self.values()
        if "gamma" in self.controls and "kernel" in values:
            self.controls["gamma"].disabled = values["kernel"] == "linear"
        fit = self._fit(values, self._X, self._y)
        ex = self.explorer
        if ex is None or not self._reuse:
            ex, same = self._make_explorer(fit), False
        else:  # same figure, new fit: no figure to build, no layout pass
            same = ex.reset(fit)
        t1 = time.perf_counter()
        self.explorer, self.fit, self.n_frames = ex, fit, int(ex.n_frames)
        if self._source_arg == "auto":
            self._source_fn = self._auto_source(values) if self._auto_source else None
        else:
            self._source_fn = self._source_arg
        start = self.start_frame()
        update = self._wrap_update(ex)
        animated = getattr(ex, "animated", None)
        refit = getattr(ex, "refit_artists", None)
        labels = ex.frame_labels()
        if self.player is None:
            self.player = FramePlayer(ex.fig, self.n_frames, update, animated=animated,
                                      start=start, description=self._description,
                                      labels=labels, refit_artists=refit)
            self.player.after_show = self._after_show
            self._after_show(self.player.frame)
        else:
            self.note.value = ""
            # True: every static pixel stays; a list of axes: only theirs changed
            keep = (same if isinstance(same, (list, tuple)) else bool(same)) \
                if ex.fig is self.player.fig else False
            self.kept_background = keep
            self._jumping = True  # the slider moves because of the refit: keep the note
            try:
                self.player.replace(ex.fig, self.n_frames, update, animated=animated,
                                    start=start, keep_background=keep, labels=labels,
                                    refit_artists=refit)
            finally:
                self._jumping = False
        t2 = time.perf_counter()
        fit_s = fit.fit_seconds
        self.refit_ms.append({"fit_ms": 1e3 * fit_s, "build_ms": 1e3 * (t1 - t0 - fit_s),
                              "show_ms": 1e3 * (t2 - t1), "total_ms": 1e3 * (t2 - t0)})
        self.status.value = self._status(fit, 1e3 * (t2 - t0))

    def _status(self, fit, ms):
        from ._protocol import PictureExplorer

        if isinstance(self.explorer, PictureExplorer):
            return f"<b>{self.name}</b>: {fit.summary}"
        y = self._y
        cls = (f", {int(np.sum(y > 0))} (+1) / {int(np.sum(y <= 0))} (-1)"
               if self._click == "labelled" else "")
        cut = (f" <b>(stopped after max_steps = {fit.capped_at} records: the trace is cut)</b>"
               if fit.capped_at else "")
        sv = f", {fit.n_support} support vectors" if fit.n_support is not None else ""
        return (f"{self.name}: {len(self._X)} points{cls}, {len(fit.records)} "
                f"records{sv}{cut}{fit.summary}, refit in {ms:.0f} ms")

    def start_frame(self):
        """The frame (0-based) shown when the explorer opens and after a
        refit (see ``start``)."""
        if self._start == "first":
            return 0
        if self._start == "last":
            return self.n_frames - 1
        return int(min(self._start, self.n_frames)) - 1

    def _wrap_update(self, explorer):
        # the SMO explorer leaves its long titles to the HTML caption when live
        base = getattr(explorer, "_update_live", None) or explorer.draw

        def update(k):
            return base(k)

        return update

    def _after_show(self, k):
        # the source panel follows the picture (FramePlayer.after_show)
        if self.source is not None:
            self._show_source(k)

    def _show_source(self, k):
        self.source.value = self._source_html(k)
        ids = tuple(getattr(self._source_fn, "hidden", ())) if self._source_fn else ()
        self._hidden_ids = ids
        btn = self.reveal_button
        btn.layout.display = "" if ids else "none"
        btn.description = (f"reveal the hidden lines (exercise{'s' * (len(ids) > 1)} "
                           f"{', '.join(ids)})") if ids else "reveal the hidden lines"

    def _source_html(self, k):
        if self._source_fn is None:
            return ""
        try:
            html = self._source_fn(self.explorer.record(k))
        except Exception as e:  # noqa: BLE001 - a reference that cannot explain a step
            self._source_fn.hidden = ()
            return f"<i>no reference lines for this step ({type(e).__name__}: {e})</i>"
        return "" if html is None else str(html)

    # -- reveal locks ---------------------------------------------------------
    def reveal(self):
        """Show the reference lines hidden in the source panel now (the
        reveal button): unlocks their exercises
        (:func:`svmlab.exercises.reveal`)."""
        from ..exercises._registry import reveal

        if self._hidden_ids:
            reveal(*self._hidden_ids)

    def _on_locks(self):
        # an exercise passed or was revealed: redraw the panel for the frame shown
        if self.source is not None and self.player is not None and \
                self.player.frame is not None:
            self._show_source(self.player.frame)

    # -- the n control follows the points ------------------------------------
    def _sync_n(self):
        """Make the ``n`` slider show the number of points the picture shows
        (the caller's points or clicked ones may be more or fewer than the
        slider's setting), without drawing new points."""
        n = self.controls.get("n")
        if n is None or len(self._X) == n.value:
            return
        if getattr(self, "_n_setting", None) is None:
            self._n_setting = n.value  # restored when a generated set is chosen again
        self._quiet = True
        try:
            if len(self._X) > n.max:
                n.max = len(self._X)
            if len(self._X) < n.min:
                n.min = len(self._X)
            n.value = len(self._X)
        finally:
            self._quiet = False

    def _on_slider(self, change):
        if not getattr(self, "_jumping", False):
            self.note.value = ""

    def timing(self):
        """Median milliseconds of the refits so far: ``{"fit_ms", "build_ms",
        "show_ms", "total_ms", "n"}`` (a refit = fit + explorer + first frame)."""
        out = {k: float(np.median([r[k] for r in self.refit_ms]))
               for k in ("fit_ms", "build_ms", "show_ms", "total_ms")}
        out["n"] = len(self.refit_ms)
        return out

    def png(self):
        """PNG bytes of a full render at the figure's designed dpi (a
        static picture for a notebook without a live kernel)."""
        from ._common import _unanimated, fig_to_png

        with _unanimated(list(getattr(self.explorer, "animated", None) or [])):
            return fig_to_png(self.fig)

    # -- editing the points ---------------------------------------------------
    def _check_clickable(self):
        if self._click is None:
            raise TypeError(f"the {self.name} explorer takes no points: its picture does not "
                            "show them in the plane; change its data with the controls")

    def add_point(self, x, y, label=None):
        """Add a point and refit: ``(x, y)`` of class ``label`` (+1 or -1)
        for a classifier, ``(x1, x2)`` for one-class, ``(x, z)`` for a
        regression."""
        self._check_clickable()
        if self._click == "labelled" and label not in (1, -1, 1.0, -1.0):
            raise ValueError(f"label must be +1 or -1, got {label!r}")
        if not (np.isfinite(x) and np.isfinite(y)):
            raise ValueError("the point must be finite")
        if self._click == "regression":
            self._X = np.vstack([self._X, [[float(x)]]])
            self._y = np.append(self._y, float(y))
        else:
            self._X = np.vstack([self._X, [[float(x), float(y)]]])
            if self._click == "labelled":
                self._y = np.append(self._y, float(label))
        self._after_edit()

    def remove_nearest(self, x, y):
        """Remove the point nearest to ``(x, y)`` (Euclidean, in the
        picture's coordinates) and refit; returns its index.  Refuses to
        remove the last two points of a class (the solver needs two
        classes), or to go below four points."""
        self._check_clickable()
        P = (np.column_stack([self._X[:, 0], self._y]) if self._click == "regression"
             else self._X)
        i = int(np.argmin(np.hypot(P[:, 0] - float(x), P[:, 1] - float(y))))
        if self._click == "labelled":
            if np.sum(self._y == self._y[i]) <= 2:
                raise ValueError("keep at least two points of each class")
        elif len(self._X) <= 4:
            raise ValueError("keep at least four points")
        self._X = np.delete(self._X, i, axis=0)
        if self._y is not None:
            self._y = np.delete(self._y, i)
        self._after_edit()
        return i

    def _after_edit(self):
        ds = self.controls.get("dataset")
        if ds is not None and ds.value != USER:
            # the points are now the reader's own: say so in the dropdown
            # (without drawing new points: _on_control ignores "your data")
            self._quiet = True
            try:
                if USER not in ds.options:
                    ds.options = [USER, *ds.options]
                ds.value = USER
            finally:
                self._quiet = False
        self._fit_and_show()
        self._sync_n()

    def click(self, px, py, mode=None):
        """A click at pixel ``(px, py)`` of the rendered image (origin top
        left, the image's own pixels).  ``mode`` +1/-1 adds a point (of that
        class), 0 removes the nearest (default: the click selector).
        Returns the data coordinates, or ``None`` when the click missed the
        data panels."""
        self._check_clickable()
        mode = self.click_mode.value if mode is None else mode
        for ax in self._data_axes(self.explorer):
            x, y = self.player.pixel_to_data(ax, px, py)
            (x0, x1), (y0, y1) = sorted(ax.get_xlim()), sorted(ax.get_ylim())
            if x0 <= x <= x1 and y0 <= y <= y1:
                if mode == 0:
                    self.remove_nearest(x, y)
                else:
                    self.add_point(x, y, mode if self._click == "labelled" else None)
                return x, y
        return None

    def pixel_to_data(self, px, py):
        """Data coordinates in the (first) data panel of image pixel ``(px, py)``."""
        return self.player.pixel_to_data(self._data_axes(self.explorer)[0], px, py)

    def _on_click_event(self, event):
        px, py = event.get("dataX"), event.get("dataY")
        if px is None or py is None:  # older ipyevents: rescale the element offset
            w_ = event.get("boundingRectWidth") or self.player.css_width
            h_ = event.get("boundingRectHeight") or self.player.css_height
            px = event["relativeX"] * self.fig_pixels[0] / w_
            py = event["relativeY"] * self.fig_pixels[1] / h_
        try:
            self.click(px, py)
        except ValueError as e:
            self.note.value = f"<span style='color:#b00'>{e}</span>"

    @property
    def fig_pixels(self):
        """(width, height) of the rendered image in its own pixels."""
        bb = self.player.fig.bbox
        return int(round(bb.width)), int(round(bb.height))

    @property
    def css_width(self):
        return self.player.css_width

    # -- navigation -----------------------------------------------------------
    def jump(self, name):
        """Press the navigation button ``name``: ``"-N"``/``"+N"`` move by N
        frames; the others go to the next frame after the one on screen
        where their predicate holds, and when there is none after it, round
        to the first such frame from the start (the note line says so).
        Returns the new frame, or ``None`` when the fit has no such frame
        (the note line says so)."""
        if name not in self._nav_pred:
            raise KeyError(f"no navigation {name!r}; have {list(self._nav_pred)}")
        k = self.player.value
        pred = self._nav_pred[name]
        what = name.replace("next ", "")
        note = ""
        ex = self.explorer
        if pred is None:
            target = int(np.clip(k + int(name), 0, self.n_frames - 1))
        else:
            target = next((j for j in range(k + 1, self.n_frames) if pred(ex, j)), None)
            if target is None:
                target = next((j for j in range(0, k + 1) if pred(ex, j)), None)
                label = self.player.labels
                # "step 17", "iteration 4", "40 %": the words of the slider
                noun = "" if self._description == "progress" else self._description
                at = (lambda j: f"{noun} {label[j]}".strip())
                if target is None:
                    self.note.value = (f"<span style='color:#b00'>this fit has no {what}"
                                       f"{' ' + noun if noun else ''}</span>")
                    return None
                note = (f"no {what}{' ' + noun if noun else ''} after {at(k)}: back to the "
                        f"first one, {at(target)}")
        self._jumping = True
        try:
            self.player.goto(target)
        finally:
            self._jumping = False
        self.note.value = note
        return target

    def record(self, k=None):
        """The record shown at frame ``k`` (default: the frame on screen)."""
        return self.explorer.record(self.player.value if k is None else int(k))

    def _repr_mimebundle_(self, **kwargs):
        from ._common import picture_bundle

        return picture_bundle(self.widget, self.player.image, f"{self.name} explorer")

    def _ipython_display_(self):  # pragma: no cover - notebook only
        from ._common import show_bundle

        show_bundle(self._repr_mimebundle_())


# --------------------------------------------------------------------------
# the 2-D teaching sets, shared by the classifiers' explorers
# --------------------------------------------------------------------------
def toy_controls(dataset, n, seed, user):
    """The data controls of the 2-D classification explorers."""
    return data_controls(DATASETS, dataset, n, seed, user=user)


def _points_from(values):
    return toy_points(values["dataset"], values["n"], values["seed"])


def _check_2d(X):
    if X.shape[1] != 2:
        raise ValueError("the live explorers draw 2-D points; X must have 2 columns")


def _on_data_ax(ex):
    return [ex.ax_data]


def _live2d(name, specs, fit, make_explorer, nav, X, y, source, auto_source, start,
            description="step", reuse_figure=True):
    """A classifier's explorer on 2-D points: clicks add labelled points."""
    def fit2d(v, X_, y_):
        _check_2d(X_)
        return fit(v, X_, y_)

    return LiveExplorer(name, specs, _points_from, fit2d, make_explorer, nav=nav,
                        click="labelled", data_axes=_on_data_ax, source=source,
                        auto_source=auto_source, X=X, y=y, start=start,
                        description=description, reuse_figure=reuse_figure)


def _timed(fn, *args, **kwargs):
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t0


# --------------------------------------------------------------------------
# SMO
# --------------------------------------------------------------------------
def live_smo(X=None, y=None, *, C=1.0, kernel="rbf", gamma=1.0, selection="platt",
             dataset="moons", n=40, seed=0, max_steps=3000, source="auto", start="first",
             grid=60, reuse_figure=True):
    """Live :class:`~svmlab.viz.smo.SMOStepExplorer`: C, kernel, gamma
    (greyed out for the linear kernel), selection rule (``platt``/``wss2``),
    dataset, n and seed; clicks add/remove points.

    Navigation: ``"-10"``, ``"+10"``, ``"next clipped"`` (a step whose new
    alpha_2 is an end of [L, H]), ``"next eta <= 0"``, ``"next heuristic
    change"`` (the rule that chose the pair differs from the step before).

    A refit reuses the figure (:meth:`SMOStepExplorer.reset`) and the
    player's blitting background, which stays valid because nothing outside
    the animated artists changes its pixels: about half the time of a
    refit that builds and draws a new figure (``reuse_figure=False``).

    Example: ``live = live_smo(C=10); live.controls["C"].value = 0.1``.
    """
    from .. import SMOClassifier
    from .smo import SMOStepExplorer

    specs = [Control("C", "log", C, lo=1e-2, hi=1e3), *kernel_controls(kernel, gamma),
             Control("selection", "choice", selection, options=("platt", "wss2")),
             *toy_controls(dataset, n, seed, X is not None)]

    def fit(v, X, y):
        est = SMOClassifier(C=v["C"], kernel=v["kernel"], gamma=v["gamma"],
                            selection=v["selection"], random_state=int(v["seed"]),
                            cache_dtype=EXACT, progress=False)
        tr = record_trace(est, X, y, max_steps=max_steps)
        if not tr.records:
            raise ValueError("the solver took no step (alpha = 0 is already optimal)")
        # support vectors of the model the fit ended with (the last frame)
        return Fit(X, y, tr, tr.records, est, {"grid": grid}, tr.fit_seconds,
                   n_support=int(np.sum(est.alpha_ > 0))).capped(max_steps)

    def recs(ex):
        return ex.records

    nav = {"-10": None, "+10": None,
           "next clipped": lambda ex, k: bool(recs(ex)[k].clipped),
           "next eta <= 0": lambda ex, k: recs(ex)[k].eta <= 0,
           "next heuristic change":
               lambda ex, k: k > 0 and recs(ex)[k].heuristic != recs(ex)[k - 1].heuristic}

    def auto(v):
        return reference_source("smo" if v["selection"] == "platt" else "wss2", C=v["C"])

    return _live2d("SMO", specs, fit, SMOStepExplorer.from_fit, nav, X, y, source, auto, start,
                   reuse_figure=reuse_figure)


# --------------------------------------------------------------------------
# cutting plane (linear, Joachims' Algorithm 1)
# --------------------------------------------------------------------------
def live_cutting_plane(X=None, y=None, *, C=100.0, epsilon=1e-2, dataset="blobs", n=40, seed=0,
                       max_steps=200, source="auto", start="first", reuse_figure=True):
    """Live :class:`~svmlab.viz.cutting_plane.CuttingPlaneExplorer`: C (the
    paper's C, ``= n * C_liblinear``), epsilon, dataset, n, seed; clicks on
    the data panel add/remove points.  Linear: no kernel or gamma.

    Navigation: ``"-1"``, ``"+1"`` (labelled "1 iteration back/forward") and
    ``"next bigger cut"``: an iteration whose new constraint ``c`` holds more
    points than the one before (the working set itself grows by one
    constraint every iteration of Algorithm 1, so "working set changed"
    would stop everywhere).

    A refit redraws into the same figure (:meth:`CuttingPlaneExplorer.reset`:
    no new figure, no layout pass, warm text caches); ``reuse_figure=False``
    builds a new explorer per refit, as before.

    Example: ``live = live_cutting_plane(); live.controls["epsilon"].value = 1e-3``.
    """
    from .. import CuttingPlaneClassifier
    from .cutting_plane import CuttingPlaneExplorer, cutting_plane_trace

    specs = [Control("C", "log", C, lo=1e-1, hi=1e4),
             Control("epsilon", "log", epsilon, lo=1e-4, hi=1e-1),
             *toy_controls(dataset, n, seed, X is not None)]

    def fit(v, X, y):
        est = CuttingPlaneClassifier(C=v["C"], epsilon=v["epsilon"], progress=False)
        tr = cutting_plane_trace(est, X, y, max_steps=max_steps)
        return Fit(X, y, tr, tr.records, est, fit_seconds=tr.fit_seconds).capped(max_steps)

    def bigger_cut(ex, k):
        m = ex.trace.masks
        return 0 < k < len(m) and m[k].sum() > m[k - 1].sum()

    nav = {"-1": None, "+1": None, "next bigger cut": bigger_cut}
    return _live2d("cutting plane", specs, fit, CuttingPlaneExplorer.from_fit, nav, X, y, source,
                   lambda v: reference_source("cutting_plane"), start, "iteration",
                   reuse_figure)


# --------------------------------------------------------------------------
# ordinal regression: the sorted sweep (Joachims' Algorithm 2)
# --------------------------------------------------------------------------
def live_ordinal(X=None, y=None, *, C=10.0, n_ranks=3, n=12, noise=0.4, seed=0,
                 iteration="last", source="auto", start="first", reuse_figure=True):
    """Live :class:`~svmlab.viz.ordinal.SweepExplorer`: an ordinal
    regression (``CuttingPlaneOrdinalRegressor(C)``) is fitted on 2-D points
    with ``n_ranks`` ranks (:func:`ordinal_points`: n, noise, seed), and the
    sorted sweep of Algorithm 2 is animated for the scores ``s = X w`` of
    cutting-plane iteration ``iteration`` (``"last"``, the default: the
    trained ``w``; a number is clamped to the iterations the fit took;
    iteration 1 has ``w = 0``, all scores tie; iteration 2 the solution of
    OP5 with one plane, which is the same for every C above ``d / |g|^2``).
    The status line says which ``w`` is swept.  ``X, y`` give your own
    points and integer ranks.  The picture shows sweep values, not the
    plane, so there are no clicks.

    Navigation: ``"-10"``, ``"+10"``, ``"next u"`` / ``"next d"`` (the next
    event of that kind: a ``s_i - 1/2`` value that sets ``c+_i``, or a
    ``s_i + 1/2`` value that sets ``c-_i``).  Starts at the first event.

    A refit redraws into the same figure (:meth:`SweepExplorer.reset`);
    ``reuse_figure=False`` builds a new explorer per refit, as before.

    Example: ``live = live_ordinal(); live.controls["n_ranks"].value = 4``.
    """
    from .. import CuttingPlaneOrdinalRegressor
    from .ordinal import SweepExplorer, sweep_trace

    its = (("last", 0),) + tuple((str(k), k) for k in range(1, 41))
    if iteration != "last" and not 1 <= int(iteration) <= 40:
        raise ValueError(f"iteration must be 'last' or 1..40, got {iteration!r}")
    specs = [Control("C", "log", C, lo=1e-1, hi=1e3),
             Control("iteration", "choice", 0 if iteration == "last" else int(iteration),
                     options=its),
             Control("n_ranks", "int", n_ranks, role="data", label="ranks", lo=2, hi=5),
             Control("n", "int", n, role="data", lo=6, hi=30),
             Control("noise", "log", noise, role="data", lo=1e-2, hi=1e1),
             Control("seed", "seed", seed, role="data")]

    def make_points(v):
        return ordinal_points(v["n"], v["n_ranks"], v["noise"], v["seed"])

    def fit(v, X, y):
        est = CuttingPlaneOrdinalRegressor(C=v["C"], progress=False)
        tr = record_trace(est, X, y)
        if not tr.records:
            raise ValueError("the ordinal fit took no iteration")
        K = len(tr.records)
        it = K if v["iteration"] == 0 else int(np.clip(v["iteration"], 1, K))
        rec = tr.records[it - 1]
        wv = np.asarray(rec.w, float).ravel()
        sw = sweep_trace(np.asarray(X, float) @ wv, y)
        summary = (f"; sweeping the w of iteration {it} of {K}"
                   f"{' (the trained w)' if it == K else ''}: w = ("
                   + ", ".join(f"{x:.3f}" for x in wv) + ")")
        # the iteration whose w is swept is what the source panel explains
        return Fit(X, y, sw, tr.records, est, {"cp_record": rec}, tr.fit_seconds,
                   summary=summary)

    nav = {"-10": None, "+10": None,
           "next u": lambda ex, k: ex.trace.kind[k] == "u",
           "next d": lambda ex, k: ex.trace.kind[k] == "d"}

    return LiveExplorer("ordinal", specs, make_points, fit, SweepExplorer.from_fit, nav=nav,
                        source=source, auto_source=lambda v: reference_source("ordinal"),
                        X=X, y=y, labels="raw", start=start, description="event",
                        reuse_figure=reuse_figure)


# --------------------------------------------------------------------------
# IRWLS
# --------------------------------------------------------------------------
def live_irwls(X=None, y=None, *, C=1.0, kernel="rbf", gamma=1.0, selection="random",
               working_set_size=20, dataset="gauss-m", n=60, seed=0, max_steps=400,
               source="auto", start="first", reuse_figure=True):
    """Live :class:`~svmlab.viz.irwls.IRWLSExplorer`: C, kernel, gamma,
    selection strategy of section 3 (``random``/``largest``/``smallest``),
    working-set size, dataset, n, seed; clicks on the data panel.

    Navigation: ``"-10"``, ``"+10"``, ``"next working-set change"`` (the
    iteration works on another set of samples than the one before: a new
    chunk), ``"next chunk solved"`` (``chunk_done``), ``"next rule move"``
    (rules a-d moved a sample between S1/S2/S3).

    A refit redraws into the same figure (:meth:`IRWLSExplorer.reset`);
    ``reuse_figure=False`` builds a new explorer per refit, as before.

    Example: ``live = live_irwls(); live.controls["selection"].value = "largest"``.
    """
    from .. import IRWLSClassifier
    from ..decomposition._working_set import SELECTIONS
    from .irwls import IRWLSExplorer, irwls_trace

    specs = [Control("C", "log", C, lo=1e-2, hi=1e3), *kernel_controls(kernel, gamma),
             Control("selection", "choice", selection, options=SELECTIONS),
             Control("working_set_size", "int", working_set_size, label="|B|", lo=4, hi=200),
             *toy_controls(dataset, n, seed, X is not None)]

    def fit(v, X, y):
        est = IRWLSClassifier(C=v["C"], kernel=v["kernel"], gamma=v["gamma"],
                              selection=v["selection"],
                              working_set_size=min(int(v["working_set_size"]), len(X)),
                              random_state=int(v["seed"]), cache_dtype=EXACT,
                              progress=False)
        tr = irwls_trace(est, X, y, max_steps=max_steps)
        if not tr.records:
            raise ValueError("IRWLS took no iteration")
        return Fit(X, y, tr, tr.records, est, {"kernel": v["kernel"], "gamma": v["gamma"]},
                   tr.fit_seconds, n_support=int(np.sum(est.alpha_ > 0))).capped(max_steps)

    def ws_changed(ex, k):
        if k == 0:
            return False
        a, b = ex.record(k).working_set, ex.record(k - 1).working_set
        return len(a) != len(b) or not np.array_equal(np.sort(a), np.sort(b))

    nav = {"-10": None, "+10": None, "next working-set change": ws_changed,
           "next chunk solved": lambda ex, k: bool(ex.record(k).chunk_done),
           "next rule move": lambda ex, k: sum(ex.record(k).moved) > 0}

    return _live2d("IRWLS", specs, fit, IRWLSExplorer.from_fit, nav, X, y, source,
                   lambda v: reference_source("irwls"), start, "iteration", reuse_figure)


# --------------------------------------------------------------------------
# chunking / decomposition / SMO (Platt's Figure 2)
# --------------------------------------------------------------------------
def live_family(X=None, y=None, *, C=1.0, kernel="rbf", gamma=1.0, working_set_size=6,
                engine="qp", dataset="blobs", n=40, seed=0, n_frames=41, max_steps=2000,
                source="auto", start="first", reuse_figure=True):
    """Live :class:`~svmlab.viz.decomposition.FamilyExplorer`: chunking,
    Osuna decomposition (``working_set_size``, sub-problem ``engine``) and
    SMO on the same points; C, kernel, gamma, dataset, n, seed; clicks on
    any of the three panels.  The slider is *progress* (0-100 % of each
    method's steps).

    Navigation: ``"-5"``, ``"+5"`` frames, ``"next decomposition working-set
    change"`` (the decomposition step shown works on another set than at
    the frame before).  The source panel explains the decomposition step
    on screen (``svmlab.reference.decomposition``).

    A refit redraws into the same figure (:meth:`FamilyExplorer.reset`);
    ``reuse_figure=False`` builds a new explorer per refit, as before.

    Example: ``live = live_family(); live.controls["working_set_size"].value = 10``.
    """
    from .. import ChunkingClassifier, DecompositionClassifier, SMOClassifier
    from .decomposition import FamilyExplorer

    specs = [Control("C", "log", C, lo=1e-2, hi=1e3), *kernel_controls(kernel, gamma),
             Control("working_set_size", "int", working_set_size, label="|B|", lo=2, hi=40),
             Control("engine", "choice", engine, options=("qp", "irwls", "smo")),
             *toy_controls(dataset, n, seed, X is not None)]

    def fit(v, X, y):
        kw = dict(C=v["C"], kernel=v["kernel"], gamma=v["gamma"], cache_dtype=EXACT,
                  progress=False)
        q = int(v["working_set_size"])
        ests = {"chunking": ChunkingClassifier(working_set_size=q, engine=v["engine"], **kw),
                # SVMlight's selection for every engine: the engine control
                # changes only the sub-problem solver (see 06, section 4)
                "decomposition": DecompositionClassifier(working_set_size=q, selection="steepest",
                                                         engine=v["engine"], **kw),
                "SMO": SMOClassifier(random_state=int(v["seed"]), **kw)}
        # chunking and decomposition run with one BLAS thread
        # (DecompositionRun.blas_threads), SMO with n_jobs = 1 too: set once
        # per fit, so that no step sets it (SMO's hundreds of steps paid
        # about a tenth of its recorded fit for it)
        traces, fit_s = _timed(lambda: {k: record_trace(e, X, y, max_steps=max_steps,
                                                        blas_threads=1)
                                        for k, e in ests.items()})
        for k, tr in traces.items():
            if not tr.records:
                raise ValueError(f"{k} took no step")
        fits = {k: (t.records, t.estimator) for k, t in traces.items()}
        capped = any(len(t.records) >= max_steps for t in traces.values())
        return Fit(X, y, fits, traces["decomposition"].records, ests["decomposition"],
                   {"kernel": v["kernel"], "gamma": v["gamma"], "n_frames": n_frames}, fit_s,
                   capped_at=max_steps if capped else None)

    def ws_at(ex, k):
        t = ex.step_at("decomposition", k)
        return ex.ws["decomposition"][t - 1] if t >= 1 else np.empty(0, int)

    def ws_changed(ex, k):
        a, b = ws_at(ex, k), ws_at(ex, k - 1)
        return k > 0 and (len(a) != len(b) or not np.array_equal(a, b))

    nav = {"-5": None, "+5": None, "next decomposition working-set change": ws_changed}

    def axes(ex):
        return [p["title"].axes for p in ex.panels.values()]

    return LiveExplorer("chunking / decomposition / SMO", specs, _points_from,
                        lambda v, X, y: (_check_2d(X), fit(v, X, y))[1],
                        FamilyExplorer.from_fit, nav=nav, click="labelled", data_axes=axes,
                        source=source, auto_source=lambda v: reference_source("decomposition"),
                        X=X, y=y, start=start, description="progress",
                        reuse_figure=reuse_figure)
