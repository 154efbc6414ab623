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
``.refit_ms``  per refit: milliseconds in the fit, the explorer build and the first frame.

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
_USER = "your data"
KERNELS = ("rbf", "linear", "poly", "sigmoid")


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


def _GROUP_LAYOUT():
    import ipywidgets as w

    return w.Layout(border="1px solid #d0d0d0", padding="2px 6px", margin="2px 10px 2px 0",
                    align_items="center")


class LiveExplorer:
    """Controls + step explorer + player + optional source panel, refitting
    on every change.  Made by :func:`live_smo` and its siblings, which pass
    the pieces below; see the module docstring for the public attributes.

    Parameters
    ----------
    name : str, shown in the status line.
    controls : dict name -> ipywidget (built by the caller, in display order).
    data_controls : names of the controls that draw new points.
    make_points : ``make_points(values) -> (X, y)`` from the control values.
    build : ``build(values, X, y) -> (explorer, n_frames, record_of, records,
        fit_seconds)``: fit, wrap the records in a step explorer (or reset the
        previous one: then it may set ``explorer.same_background = True``),
        and say which record frame ``k`` shows (``record_of(k) -> record``).
    nav : ``{label: predicate(live, k) -> bool}`` for "next ..." buttons
        (``live`` is this LiveExplorer, ``k`` a frame); a label ``"-N"`` or
        ``"+N"`` with predicate ``None`` moves by N frames.
    data_axes : ``data_axes(explorer) -> list of Axes`` a click may land in
        (empty: clicks off).
    source : ``"auto"``, ``None`` or a callable (see the module docstring);
        ``auto_source(values) -> callable | None`` resolves ``"auto"``.
    X, y : the caller's points (then the dataset control offers "your data").
    start : ``"first"``, ``"last"`` or a frame number (counted from 1, as the
        slider and caption count): the frame shown when the explorer opens
        and after every refit (a number beyond the last frame shows the last).
    """

    def __init__(self, name, controls, data_controls, make_points, build, *, nav=None,
                 data_axes=None, source="auto", auto_source=None, X=None, y=None,
                 start="first", interval=400, description="step"):
        import ipywidgets as w

        if not (start in ("first", "last") or (isinstance(start, (int, np.integer))
                                               and not isinstance(start, bool) and start >= 1)):
            raise ValueError("start must be 'first', 'last' or a frame number >= 1")
        self.name = name
        self.controls = dict(controls)
        self._data_controls = tuple(data_controls)
        self._make_points = make_points
        self._build = build
        self._data_axes = data_axes
        self._source_arg = source
        self._auto_source = auto_source
        self._start = start
        self._description = description
        self._quiet = False
        self._source_fn = None
        self.refit_ms = []
        self.explorer = None
        self.n_frames = 0
        self._record_of = None
        if X is not None:
            if y is None:
                raise ValueError("give y together with X")
            self._X = np.array(X, dtype=np.float64)
            self._y = _pm(y) if name != "ordinal" else np.asarray(y)
            if self._X.ndim != 2 or len(self._X) != len(self._y):
                raise ValueError("X must be (n, features) with one label per row")
        else:
            self._X, self._y = make_points(self.values())

        # widgets -------------------------------------------------------------
        self.status = w.HTML(layout=w.Layout(min_height="1.5em"))
        # answers of the buttons ("no eta <= 0 step in this fit", ...): cleared
        # by the next successful jump, slider move or refit
        self.note = w.HTML(layout=w.Layout(min_height="1.2em"))
        self.click_mode = None
        clickable = data_axes is not None
        if clickable:
            self.click_mode = w.ToggleButtons(options=[("+1", 1), ("-1", -1), ("remove", 0)],
                                              value=1, description="click adds",
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

        rows = []
        ctl = list(self.controls.values())
        for i in range(0, len(ctl), 4):
            rows.append(w.HBox(ctl[i:i + 4]))
        # controls that do different things stay apart, each group in a box
        # with its name: what a click on the picture does, and the jumps
        groups = []
        if clickable:
            groups.append(w.HBox([self.click_mode], layout=_GROUP_LAYOUT()))
        if self.nav:
            groups.append(w.HBox([w.HTML("<b>jump</b>")] + list(self.nav.values()),
                                 layout=_GROUP_LAYOUT()))
        if groups:
            rows.append(w.HBox(groups, layout=w.Layout(flex_flow="row wrap")))
        p = self.player
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
        if clickable:
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

    @property
    def points(self):
        """The current points ``(X, y)`` (copies)."""
        return self._X.copy(), self._y.copy()

    @property
    def trace(self):
        """The records of the current fit (every recorded step, in order)."""
        return self._records

    def _on_control(self, key):
        if self._quiet:
            return
        ds = self.controls.get("dataset")
        own = ds is not None and ds.value == _USER
        if key == "dataset" and own:
            return  # "your data" selected again: the points stay as they are
        try:
            if key == "dataset" and getattr(self, "_n_setting", None) is not None:
                # back to a generated set: n is the slider's own setting again
                self._quiet = True
                try:
                    self.controls["n"].value = self._n_setting
                finally:
                    self._quiet = False
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
        control values, rebuild the explorer and show its start frame.
        Returns the number of frames."""
        self._fit_and_show()
        return self.n_frames

    def _fit_and_show(self):
        t0 = time.perf_counter()
        values = self.values()
        explorer, n_frames, record_of, records, fit_s = self._build(values, self._X, self._y)
        t1 = time.perf_counter()
        self.explorer, self.n_frames, self._record_of = explorer, int(n_frames), record_of
        self._records = records
        if self._source_arg == "auto":
            self._source_fn = self._auto_source(values) if self._auto_source else None
        else:
            self._source_fn = self._source_arg
        start = self.start_frame()
        update = self._wrap_update(explorer)
        animated = getattr(explorer, "animated", None)
        labels = explorer.frame_labels() if hasattr(explorer, "frame_labels") else None
        if self.player is not None:
            self.note.value = ""
        if self.player is None:
            self.player = FramePlayer(explorer.fig, self.n_frames, update, animated=animated,
                                      start=start, description=self._description,
                                      labels=labels)
        else:
            keep = explorer.fig is self.player.fig and getattr(explorer, "same_background",
                                                                 False)
            self._jumping = True  # the slider moves because of the refit: keep the note
            try:
                self.player.replace(explorer.fig, self.n_frames, update, animated=animated,
                                    start=start, keep_background=keep, labels=labels)
            finally:
                self._jumping = False
        t2 = time.perf_counter()
        self.refit_ms.append({"fit_ms": 1e3 * fit_s, "build_ms": 1e3 * (t1 - t0 - fit_s),
                              "show_ms": 1e3 * (t2 - t1), "total_ms": 1e3 * (t2 - t0)})
        cls = f", {int(np.sum(self._y > 0))} (+1) / {int(np.sum(self._y <= 0))} (-1)" \
            if self.name != "ordinal" else ""
        cap = getattr(explorer, "capped_at", None)
        cut = (f" <b>(stopped after max_steps = {cap} records: the trace is cut)</b>"
               if cap else "")
        nsv = getattr(explorer, "n_support_", None)
        sv = f", {nsv} support vectors" if nsv is not None else ""
        extra = getattr(explorer, "status_extra", "")
        self.status.value = (f"{self.name}: {len(self._X)} points{cls}, {len(records)} "
                             f"records{sv}{cut}{extra}, refit in {1e3 * (t2 - t0):.0f} ms")

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
        base = getattr(explorer, "_update_live", None) or explorer.update

        def update(k):
            text = base(k)
            if self.source is not None:
                self._show_source(k)
            return text

        return update

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
            html = self._source_fn(self._record_of(k))
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

    # -- editing the points ---------------------------------------------------
    def _check_clickable(self):
        if self._data_axes is None:
            raise TypeError(f"the {self.name} explorer does not show the points in the plane; "
                            "change its data with the controls")

    def add_point(self, x, y, label):
        """Add the point ``(x, y)`` with class ``label`` (+1 or -1) and refit."""
        self._check_clickable()
        if label not in (1, -1, 1.0, -1.0):
            raise ValueError(f"label must be +1 or -1, got {label!r}")
        if not (np.isfinite(x) and np.isfinite(y)):
            raise ValueError("the point must be finite")
        self._X = np.vstack([self._X, [[float(x), float(y)]]])
        self._y = np.append(self._y, float(label))
        self._after_edit()

    def remove_nearest(self, x, y):
        """Remove the point nearest to ``(x, y)`` (Euclidean, data
        coordinates) and refit; returns its index.  Refuses to remove the
        last two points of a class (the solver needs two classes)."""
        self._check_clickable()
        d = np.hypot(self._X[:, 0] - float(x), self._X[:, 1] - float(y))
        i = int(np.argmin(d))
        if np.sum(self._y == self._y[i]) <= 2:
            raise ValueError("keep at least two points of each class")
        self._X = np.delete(self._X, i, axis=0)
        self._y = np.delete(self._y, i)
        self._after_edit()
        return i

    def _after_edit(self):
        ds = self.controls.get("dataset")
        if ds is not None and ds.value != _USER:
            # the points are now the reader's own: say so in the dropdown
            # (without drawing new points: _on_control ignores "your data")
            self._quiet = True
            try:
                if _USER not in ds.options:
                    ds.options = [_USER, *ds.options]
                ds.value = _USER
            finally:
                self._quiet = False
        self._fit_and_show()
        self._sync_n()

    def click(self, px, py, mode=None):
        """A click at pixel ``(px, py)`` of the rendered image (origin top
        left, the image's own pixels).  ``mode`` +1/-1 adds a point of that
        class, 0 removes the nearest (default: the click selector).  Returns
        the data coordinates, or ``None`` when the click missed the data
        panels."""
        self._check_clickable()
        mode = self.click_mode.value if mode is None else mode
        for ax in self._data_axes(self.explorer):
            x, y = self.player.pixel_to_data(ax, px, py)
            (x0, x1), (y0, y1) = sorted(ax.get_xlim()), sorted(ax.get_ylim())
            if x0 <= x <= x1 and y0 <= y <= y1:
                if mode == 0:
                    self.remove_nearest(x, y)
                else:
                    self.add_point(x, y, mode)
                return x, y
        return None

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
        if pred is None:
            target = int(np.clip(k + int(name), 0, self.n_frames - 1))
        else:
            target = next((j for j in range(k + 1, self.n_frames) if pred(self, j)), None)
            if target is None:
                target = next((j for j in range(0, k + 1) if pred(self, j)), None)
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
        return self._record_of(self.player.value if k is None else int(k))

    def _repr_mimebundle_(self, **kwargs):
        from ._common import picture_bundle

        return picture_bundle(self.widget, self.player.image, f"{self.name} explorer")

    def _ipython_display_(self):  # pragma: no cover - notebook only
        from ._common import show_bundle

        show_bundle(self._repr_mimebundle_())


# --------------------------------------------------------------------------
# controls
# --------------------------------------------------------------------------
def _log_slider(desc, value, lo, hi):
    import ipywidgets as w

    return w.FloatLogSlider(value=value, base=10, min=np.log10(lo), max=np.log10(hi), step=0.1,
                            description=desc, continuous_update=False, readout_format=".3g")


def _data_controls(dataset, n, seed, user, n_range=(10, 200)):
    import ipywidgets as w

    opts = ([_USER] if user else []) + list(DATASETS)
    return {
        "dataset": w.Dropdown(options=opts, value=_USER if user else dataset,
                              description="dataset"),
        "n": w.IntSlider(value=n, min=n_range[0], max=n_range[1], step=2, description="n",
                         continuous_update=False),
        "seed": w.IntText(value=seed, description="seed", layout=w.Layout(width="12em")),
    }


def _kernel_controls(kernel, gamma):
    import ipywidgets as w

    return {"kernel": w.Dropdown(options=KERNELS, value=kernel, description="kernel"),
            "gamma": _log_slider("gamma", gamma, 1e-2, 1e2)}


def _points_from(values):
    return toy_points(values["dataset"], values["n"], values["seed"])


def _check_2d(X):
    if X.shape[1] != 2:
        raise ValueError("the live explorers draw 2-D points; X must have 2 columns")


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
    import ipywidgets as w

    from .. import SMOClassifier
    from .smo import SMOStepExplorer

    user = X is not None
    controls = {"C": _log_slider("C", C, 1e-2, 1e3), **_kernel_controls(kernel, gamma),
                "selection": w.Dropdown(options=("platt", "wss2"), value=selection,
                                        description="selection"),
                **_data_controls(dataset, n, seed, user)}

    def build(v, X, y):
        _check_2d(X)
        controls["gamma"].disabled = v["kernel"] == "linear"
        est = SMOClassifier(C=v["C"], kernel=v["kernel"], gamma=v["gamma"],
                            selection=v["selection"], random_state=int(v["seed"]),
                            cache_dtype=EXACT, progress=False)
        tr = record_trace(est, X, y, max_steps=max_steps)
        if not tr.records:
            raise ValueError("the solver took no step (alpha = 0 is already optimal)")
        ex = state.get("explorer")
        if ex is None or not reuse_figure:
            ex = SMOStepExplorer.from_estimator(est, X, y, tr.records, grid=grid)
            ex.same_background = False
        else:  # same figure, new trace: no figure to build, no background to draw
            ex.same_background = ex.reset(X, y, tr.records, C=est.C, kernel=est.kernel,
                                          gamma=est.gamma_, degree=est.degree,
                                          coef0=est.coef0, classes=est.classes_)
        state["explorer"] = ex
        # support vectors of the model the fit ended with (the last frame)
        ex.n_support_ = int(np.sum(est.alpha_ > 0))
        ex.capped_at = max_steps if len(tr.records) >= max_steps else None
        return ex, ex.T, (lambda k: ex.records[k]), tr.records, tr.fit_seconds

    state = {}

    def recs(live):
        return live.explorer.records

    nav = {"-10": None, "+10": None,
           "next clipped": lambda live, k: bool(recs(live)[k].clipped),
           "next eta <= 0": lambda live, k: recs(live)[k].eta <= 0,
           "next heuristic change":
               lambda live, k: k > 0 and recs(live)[k].heuristic != recs(live)[k - 1].heuristic}

    def auto(v):
        return reference_source("smo" if v["selection"] == "platt" else "wss2", C=v["C"])

    return LiveExplorer("SMO", controls, ("dataset", "n", "seed"), _points_from, build,
                        nav=nav, data_axes=lambda ex: [ex.ax_data], source=source,
                        auto_source=auto, X=X, y=y, start=start)


# --------------------------------------------------------------------------
# cutting plane (linear, Joachims' Algorithm 1)
# --------------------------------------------------------------------------
def live_cutting_plane(X=None, y=None, *, C=100.0, epsilon=1e-2, dataset="blobs", n=40, seed=0,
                       max_steps=200, source="auto", start="first", reuse_figure=True):
    """Live :class:`~svmlab.viz.cutting_plane.CuttingPlaneExplorer`: C (the
    paper's C, ``= n * C_liblinear``), epsilon, dataset, n, seed; clicks on
    the data panel add/remove points.  Linear: no kernel or gamma.

    Navigation: ``"-1"``, ``"+1"`` and ``"next bigger cut"``: an iteration
    whose new constraint ``c`` holds more points than the one before (the
    working set itself grows by one constraint every iteration of
    Algorithm 1, so "working set changed" would stop everywhere).

    A refit redraws into the same figure (:meth:`CuttingPlaneExplorer.reset`:
    no new figure, no layout pass, warm text caches); ``reuse_figure=False``
    builds a new explorer per refit, as before.

    Example: ``live = live_cutting_plane(); live.controls["epsilon"].value = 1e-3``.
    """
    from .. import CuttingPlaneClassifier
    from .cutting_plane import CuttingPlaneExplorer, cutting_plane_trace

    user = X is not None
    controls = {"C": _log_slider("C", C, 1e-1, 1e4),
                "epsilon": _log_slider("epsilon", epsilon, 1e-4, 1e-1),
                **_data_controls(dataset, n, seed, user)}

    def build(v, X, y):
        _check_2d(X)
        est = CuttingPlaneClassifier(C=v["C"], epsilon=v["epsilon"], progress=False)
        tr = cutting_plane_trace(est, X, y, max_steps=max_steps)
        ex = state.get("explorer")
        if ex is None or not reuse_figure:
            ex = CuttingPlaneExplorer(tr)
            ex.same_background = False
        else:  # same figure, axes cleared and drawn again (no layout pass)
            ex.same_background = ex.reset(tr)
        state["explorer"] = ex
        ex.capped_at = max_steps if len(tr.records) >= max_steps else None
        # the explorer may show one more frame than there are records (the
        # final check of Algorithm 1, which adds no constraint): it shows
        # the last record's lines
        return ex, ex.n_frames, (lambda k: tr.records[min(k, len(tr.records) - 1)]), \
            tr.records, tr.fit_seconds

    state = {}

    def bigger_cut(live, k):
        m = live.explorer.trace.masks
        return 0 < k < len(m) and m[k].sum() > m[k - 1].sum()

    nav = {"-1": None, "+1": None, "next bigger cut": bigger_cut}

    return LiveExplorer("cutting plane", controls, ("dataset", "n", "seed"), _points_from, build,
                        nav=nav, data_axes=lambda ex: [ex.ax_data], source=source,
                        auto_source=lambda v: reference_source("cutting_plane"), X=X, y=y,
                        start=start, description="iteration")


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
    import ipywidgets as w

    from .. import CuttingPlaneOrdinalRegressor
    from .ordinal import SweepExplorer, sweep_trace

    its = [("last", 0)] + [(str(k), k) for k in range(1, 41)]
    if iteration != "last" and not 1 <= int(iteration) <= 40:
        raise ValueError(f"iteration must be 'last' or 1..40, got {iteration!r}")
    controls = {"C": _log_slider("C", C, 1e-1, 1e3),
                "iteration": w.Dropdown(options=its, value=0 if iteration == "last" else
                                        int(iteration), description="iteration",
                                        layout=w.Layout(width="14em")),
                "n_ranks": w.IntSlider(value=n_ranks, min=2, max=5, description="ranks",
                                       continuous_update=False),
                "n": w.IntSlider(value=n, min=6, max=30, description="n",
                                 continuous_update=False),
                "noise": _log_slider("noise", noise, 1e-2, 1e1),
                "seed": w.IntText(value=seed, description="seed", layout=w.Layout(width="12em"))}

    def make_points(v):
        return ordinal_points(v["n"], v["n_ranks"], v["noise"], v["seed"])

    def build(v, X, y):
        est = CuttingPlaneOrdinalRegressor(C=v["C"], progress=False)
        tr = record_trace(est, X, y)
        if not tr.records:
            raise ValueError("the ordinal fit took no iteration")
        K = len(tr.records)
        it = K if v["iteration"] == 0 else int(np.clip(v["iteration"], 1, K))
        rec = tr.records[it - 1]
        scores = np.asarray(X, float) @ np.asarray(rec.w, float).ravel()
        sw = sweep_trace(scores, y)
        ex = state.get("explorer")
        if ex is None or not reuse_figure:
            ex = SweepExplorer(sw)
            ex.same_background = False
        else:  # same figure, axes cleared and drawn again (no layout pass)
            ex.same_background = ex.reset(sw)
        state["explorer"] = ex
        ex.cp_record = rec  # the iteration whose w is swept (for the source panel)
        wv = np.asarray(rec.w, float).ravel()
        ex.status_extra = (f"; sweeping the w of iteration {it} of {K}"
                           f"{' (the trained w)' if it == K else ''}: w = ("
                           + ", ".join(f"{x:.3f}" for x in wv) + ")")
        return ex, ex.n_frames, (lambda k: rec), tr.records, tr.fit_seconds

    state = {}

    def kind(live, k):
        return live.explorer.trace.kind[k]

    nav = {"-10": None, "+10": None,
           "next u": lambda live, k: kind(live, k) == "u",
           "next d": lambda live, k: kind(live, k) == "d"}

    return LiveExplorer("ordinal", controls, ("n_ranks", "n", "noise", "seed"), make_points,
                        build, nav=nav, data_axes=None, source=source,
                        auto_source=lambda v: reference_source("ordinal"), X=X, y=y,
                        start=start, description="event")


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
    import ipywidgets as w

    from .. import IRWLSClassifier
    from ..decomposition._working_set import SELECTIONS
    from .irwls import IRWLSExplorer, irwls_trace

    user = X is not None
    controls = {"C": _log_slider("C", C, 1e-2, 1e3), **_kernel_controls(kernel, gamma),
                "selection": w.Dropdown(options=SELECTIONS, value=selection,
                                        description="selection"),
                "working_set_size": w.IntSlider(value=working_set_size, min=4, max=200,
                                                description="|B|", continuous_update=False),
                **_data_controls(dataset, n, seed, user)}

    def build(v, X, y):
        _check_2d(X)
        controls["gamma"].disabled = v["kernel"] == "linear"
        est = IRWLSClassifier(C=v["C"], kernel=v["kernel"], gamma=v["gamma"],
                              selection=v["selection"],
                              working_set_size=min(int(v["working_set_size"]), len(X)),
                              random_state=int(v["seed"]), cache_dtype=EXACT,
                              progress=False)
        tr = irwls_trace(est, X, y, max_steps=max_steps)
        if not tr.records:
            raise ValueError("IRWLS took no iteration")
        ex = state.get("explorer")
        if ex is None or not reuse_figure:
            ex = IRWLSExplorer(tr, X, kernel=v["kernel"], gamma=v["gamma"])
            ex.same_background = False
        else:  # same figure, axes cleared and drawn again (no layout pass)
            ex.same_background = ex.reset(tr, X, kernel=v["kernel"], gamma=v["gamma"])
        state["explorer"] = ex
        ex.n_support_ = int(np.sum(est.alpha_ > 0))
        ex.capped_at = max_steps if len(tr.records) >= max_steps else None
        return ex, ex.n_frames, (lambda k: tr.records[int(ex.frames[k])]), tr.records, \
            tr.fit_seconds

    state = {}

    def rec(live, k):
        return live.explorer.trace.records[int(live.explorer.frames[k])]

    def ws_changed(live, k):
        if k == 0:
            return False
        a, b = rec(live, k).working_set, rec(live, k - 1).working_set
        return len(a) != len(b) or not np.array_equal(np.sort(a), np.sort(b))

    nav = {"-10": None, "+10": None, "next working-set change": ws_changed,
           "next chunk solved": lambda live, k: bool(rec(live, k).chunk_done),
           "next rule move": lambda live, k: sum(rec(live, k).moved) > 0}

    return LiveExplorer("IRWLS", controls, ("dataset", "n", "seed"), _points_from, build,
                        nav=nav, data_axes=lambda ex: [ex.ax_data], source=source,
                        auto_source=lambda v: reference_source("irwls"), X=X, y=y,
                        start=start, description="iteration")


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
    import ipywidgets as w

    from .. import ChunkingClassifier, DecompositionClassifier, SMOClassifier
    from .decomposition import FamilyExplorer

    user = X is not None
    controls = {"C": _log_slider("C", C, 1e-2, 1e3), **_kernel_controls(kernel, gamma),
                "working_set_size": w.IntSlider(value=working_set_size, min=2, max=40,
                                                description="|B|", continuous_update=False),
                "engine": w.Dropdown(options=("qp", "irwls", "smo"), value=engine,
                                     description="engine"),
                **_data_controls(dataset, n, seed, user)}

    def build(v, X, y):
        _check_2d(X)
        controls["gamma"].disabled = v["kernel"] == "linear"
        kw = dict(C=v["C"], kernel=v["kernel"], gamma=v["gamma"], cache_dtype=EXACT,
                  progress=False)
        q = int(v["working_set_size"])
        ests = {"chunking": ChunkingClassifier(working_set_size=q, engine=v["engine"], **kw),
                # SVMlight's selection for every engine: the engine control
                # changes only the sub-problem solver (see 06, section 4)
                "decomposition": DecompositionClassifier(working_set_size=q, selection="steepest",
                                                         engine=v["engine"], **kw),
                "SMO": SMOClassifier(random_state=int(v["seed"]), **kw)}
        t0 = time.perf_counter()
        traces = {k: record_trace(e, X, y, max_steps=max_steps) for k, e in ests.items()}
        fit_s = time.perf_counter() - t0
        for k, tr in traces.items():
            if not tr.records:
                raise ValueError(f"{k} took no step")
        fits = {k: (t.records, t.estimator) for k, t in traces.items()}
        ex = state.get("explorer")
        if ex is None or not reuse_figure:
            ex = FamilyExplorer(X, y, fits, kernel=v["kernel"], gamma=v["gamma"],
                                n_frames=n_frames)
            ex.same_background = False
        else:  # same figure, panels cleared and drawn again
            ex.same_background = ex.reset(X, y, fits, kernel=v["kernel"], gamma=v["gamma"],
                                          n_frames=n_frames)
        state["explorer"] = ex
        ex.capped_at = None
        if any(len(t.records) >= max_steps for t in traces.values()):
            ex.capped_at = max_steps

        def record_of(k):
            t = ex.step_at("decomposition", k)
            return ex.records["decomposition"][max(t, 1) - 1]

        return ex, ex.n_frames, record_of, traces["decomposition"].records, fit_s

    state = {}

    def ws_at(live, k):
        ex = live.explorer
        t = ex.step_at("decomposition", k)
        return ex.ws["decomposition"][t - 1] if t >= 1 else np.empty(0, int)

    def ws_changed(live, k):
        a, b = ws_at(live, k), ws_at(live, k - 1)
        return k > 0 and (len(a) != len(b) or not np.array_equal(a, b))

    nav = {"-5": None, "+5": None, "next decomposition working-set change": ws_changed}

    def axes(ex):
        return [p["title"].axes for p in ex.panels.values()]

    return LiveExplorer("chunking / decomposition / SMO", controls, ("dataset", "n", "seed"),
                        _points_from, build, nav=nav, data_axes=axes, source=source,
                        auto_source=lambda v: reference_source("decomposition"), X=X, y=y,
                        start=start, description="progress")
