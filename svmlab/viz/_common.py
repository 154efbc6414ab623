"""Shared plotting and widget helpers for the svmlab notebooks.

Every interactive figure in svmlab follows one pattern:

1. **Record a trace once.**  :func:`record_trace` fits an estimator with a
   ``callback`` (the step-record contract of :mod:`svmlab._stepping`) and
   keeps every record; nothing is re-run when the reader moves a slider.
2. **Build the figure once.**  Create every artist up front on a figure made
   by :func:`new_figure` (an Agg figure that pyplot does not manage, so the
   inline backend does not also print it as a static picture).
3. **Update artists per frame.**  Write ``update(k) -> str | None`` that
   changes artists in place (``Line2D.set_data``, ``PathCollection.set_offsets``,
   ``LineCollection.set_segments``, ``AxesImage.set_data``, ``Text.set_text``,
   axis limits ...) for frame ``k`` and returns an optional HTML/text caption.
   It never calls ``ax.plot``/``ax.clear()`` again.
4. **Wrap it.**  :class:`FramePlayer` gives the ``Play`` button + slider
   (linked in the browser with ``jslink``), an ``Image`` widget holding the
   rendered frame (high-quality JPEG by default, rendered at twice the
   figure's dpi and shown at the figure's natural CSS size, so it is sharp on
   high-density screens) and an ``HTML`` caption; :meth:`FramePlayer.drive` steps
   through every frame (the nbval cell after each widget calls it so a broken
   callback fails the notebook) and then shows the frame shown before again,
   :meth:`FramePlayer.timing` reports the redraw cost, and
   :meth:`FramePlayer.replace` swaps in a new figure (the live explorers of
   :mod:`svmlab.viz.live` refit and keep the same widgets).
   :func:`static_animation` turns the same ``update`` into a
   ``FuncAnimation(...).to_jshtml()`` for readers without a live kernel
   (at the figure's designed dpi, to keep stored notebooks small).

This works with ``%matplotlib inline`` (the notebooks' backend): a frame is
an Agg render into an image shown by an ``ipywidgets.Image``, so no ipympl or
JavaScript build is needed (clicks on the image, in :mod:`svmlab.viz.live`,
come through the ``ipyevents`` widget library).

Also here: colours/markers shared by all figures (:data:`CLASS_COLORS`,
:func:`class_colors`, ...), :func:`notebook_size` (``SVMLAB_NOTEBOOK_SIZE``:
``"small"`` under pytest/nbval, ``"full"`` otherwise) and
:class:`DecisionGrid` (decision values of a dual model on a 2-D grid, and
its level lines as segments for a ``LineCollection``).
"""

from __future__ import annotations

import io
import os
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "CLASS_COLORS",
    "CLASS_MARKERS",
    "HIGHLIGHT",
    "VIOLATOR",
    "NEUTRAL",
    "SET_COLORS",
    "class_colors",
    "notebook_size",
    "pick_size",
    "Trace",
    "record_trace",
    "new_figure",
    "fig_to_png",
    "canvas_to_png",
    "canvas_to_bytes",
    "FramePlayer",
    "static_animation",
    "DecisionGrid",
    "contour_segments",
    "plot_decision_regions",
    "drawn_texts",
    "text_problems",
    "MIN_TEXT_PT",
    "course_style",
    "COURSE_RC",
    "MAX_FIGURE_PX",
    "warm_fits",
]

# --------------------------------------------------------------------------
# colours and markers (use these so all notebooks look alike)
# --------------------------------------------------------------------------
#: colour of each class label in {-1, +1} (matplotlib's tab10 blue/orange)
CLASS_COLORS = {-1: "#1f77b4", 1: "#ff7f0e"}
#: marker of each class label (readable in greyscale too)
CLASS_MARKERS = {-1: "o", 1: "s"}
#: the points a step works on (the chosen pair, the new constraint, ...)
HIGHLIGHT = "#d62728"
#: points that violate the optimality (KKT) conditions
VIOLATOR = "#9467bd"
#: anything neutral (grid, bounds, old state)
NEUTRAL = "#7f7f7f"
#: colours of solver-specific sets, e.g. IRWLS S1/S2/S3, free/at-0/at-C
SET_COLORS = {
    "free": "#2ca02c",   # 0 < alpha < C  (IRWLS S1)
    "zero": "#bbbbbb",   # alpha = 0      (IRWLS S2)
    "bound": "#d62728",  # alpha = C      (IRWLS S3)
    "working": "#17becf",  # in the current working set
}


def class_colors(y):
    """Array of colours (strings) for labels ``y`` in {-1, +1} (any label
    ``> 0`` is treated as +1)."""
    y = np.asarray(y)
    return np.where(y > 0, CLASS_COLORS[1], CLASS_COLORS[-1])


# --------------------------------------------------------------------------
# notebook size switch
# --------------------------------------------------------------------------
def notebook_size():
    """``"small"`` when ``SVMLAB_NOTEBOOK_SIZE=small`` (pytest/nbval and CI set
    it in the root ``conftest.py``), else ``"full"`` (a reader in JupyterLab)."""
    v = os.environ.get("SVMLAB_NOTEBOOK_SIZE", "full").strip().lower()
    return "small" if v == "small" else "full"


def pick_size(small, full):
    """``small`` under CI/nbval, ``full`` for a reader (see :func:`notebook_size`)."""
    return small if notebook_size() == "small" else full


# --------------------------------------------------------------------------
# traces
# --------------------------------------------------------------------------
@dataclass
class Trace:
    """The records of one fit, in order, and the fitted estimator.

    ``trace[k]`` is the (k+1)-th record; ``trace.field("eta")`` is a numpy
    array of that field over all records; ``fit_seconds`` is the wall time
    of the recorded fit (callbacks included, so it is not a benchmark).
    """

    records: list
    estimator: object
    fit_seconds: float = 0.0
    X: object = field(default=None, repr=False)
    y: object = field(default=None, repr=False)

    def __len__(self):
        return len(self.records)

    def __getitem__(self, k):
        return self.records[k]

    def __iter__(self):
        return iter(self.records)

    def field(self, name):
        """Values of one record field over the trace, as a numpy array."""
        return np.array([getattr(r, name) for r in self.records])

    @property
    def fields(self):
        """Names of the record fields (from the first record)."""
        if not self.records:
            return ()
        r = self.records[0]
        names = getattr(type(r), "__dataclass_fields__", None)
        return tuple(names) if names is not None else tuple(vars(r))


def record_trace(estimator, X, y, max_steps=None, blas_threads=None):
    """Fit ``estimator`` on ``(X, y)`` with a callback that keeps every step
    record; return a :class:`Trace`.

    ``max_steps`` stops the fit after that many records (the callback returns
    False, which leaves a valid, feasible model on the estimator).
    ``blas_threads``: the BLAS thread limit the solver's run sets around
    every step (:func:`svmlab._stepping.blas_thread_limit`; 1 for IRWLS),
    set once around the whole fit instead, so that no step pays for setting
    it (a recorded fit runs step by step: a tenth of an IRWLS refit of the
    live explorer); None sets nothing.
    """
    from .._stepping import blas_thread_limit

    records = []

    def cb(rec):
        records.append(rec)
        if max_steps is not None and len(records) >= max_steps:
            return False
        return None

    t0 = time.perf_counter()
    with blas_thread_limit(blas_threads):
        estimator.fit(X, y, callback=cb)
    secs = time.perf_counter() - t0
    return Trace(records=records, estimator=estimator, fit_seconds=secs, X=X, y=y)


# --------------------------------------------------------------------------
# figures
# --------------------------------------------------------------------------
def new_figure(figsize=(9.0, 4.5), dpi=80, **kwargs):
    """A matplotlib Figure on an Agg canvas that pyplot does not manage.

    Use it for widget figures: the inline backend does not print it at the
    end of the cell, and it is rendered only by :func:`fig_to_png`.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, dpi=dpi, **kwargs)
    FigureCanvasAgg(fig)
    return fig


def _design_dpi(fig):
    """The dpi ``fig`` was built with (a :class:`FramePlayer` renders it at
    ``scale`` times that; static exports keep the designed size)."""
    return getattr(fig, "_svmlab_css_dpi", None) or fig.dpi


def fig_to_png(fig, dpi=None):
    """Render ``fig`` to PNG bytes (Agg, full redraw), by default at the dpi
    the figure was built with (also after a player doubled it)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi if dpi is not None else _design_dpi(fig))
    return buf.getvalue()


def canvas_to_png(canvas, compress_level=1):
    """PNG bytes of what the Agg ``canvas`` holds now (no redraw; fast zlib
    level, since the bytes only travel to the browser)."""
    return canvas_to_bytes(canvas, "png", compress_level=compress_level)


#: JPEG quality of the live players' frames.  The frames are drawn at twice
#: the displayed size, where quality 85 shows no artefact at the displayed
#: size, and its bytes are about 0.73 of quality 94's: less to send to the
#: browser at every key press and less stored in a notebook's widget state
#: (docs/decisions/29v01-explorer-latency-and-notebook-size.md).
LIVE_JPEG_QUALITY = 85


def canvas_to_bytes(canvas, fmt="jpeg", quality=LIVE_JPEG_QUALITY, compress_level=1):
    """Encode what the Agg ``canvas`` holds now (no redraw) as ``"jpeg"``
    (about 5x faster to encode than PNG; the live players use it; full
    chroma resolution, 4:4:4, so thin coloured lines keep their colour) or
    ``"png"``."""
    from PIL import Image

    w, h = canvas.get_width_height(physical=True)
    buf = io.BytesIO()
    if fmt == "png":
        im = Image.frombuffer("RGBA", (w, h), canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
        im.convert("RGB").save(buf, format="png", compress_level=compress_level)
    else:
        # the JPEG encoder reads RGBX directly: the same bytes as converting
        # to RGB first (alpha dropped either way), without that copy
        im = Image.frombuffer("RGBX", (w, h), canvas.buffer_rgba(), "raw", "RGBX", 0, 1)
        im.save(buf, format="jpeg", quality=quality, subsampling=0)
    return buf.getvalue()


@contextmanager
def _unanimated(artists):
    """Temporarily draw ``artists`` in normal (non-blit) renders."""
    flags = [a.get_animated() for a in artists]
    for a in artists:
        a.set_animated(False)
    try:
        yield
    finally:
        for a, f in zip(artists, flags):
            a.set_animated(f)


def picture_bundle(widget, image, what="explorer") -> dict:
    """The display data of an explorer: the widget's view, and beside it, in
    the same output, the picture it shows now (``image``, an ipywidgets
    ``Image``) at its displayed size (:func:`fallback_picture`: a small
    JPEG) and a ``text/plain`` line.

    A stored notebook opened before anything runs (or untrusted, or in a
    front-end without the widget manager) cannot show the widget view; it
    shows the picture instead of the widget's text repr
    (``VBox(children=(...``).  A live front-end renders the view, as before."""
    import base64

    data = dict(widget._repr_mimebundle_() or {})
    value = bytes(image.value or b"") if image is not None else b""
    if value:
        fmt = (image.format or "png").lower()
        mime = "image/jpeg" if fmt in ("jpg", "jpeg") else f"image/{fmt}"
        value, mime = fallback_picture(value, mime, _css_width(image))
        data[mime] = base64.b64encode(value).decode("ascii")
        data["text/plain"] = (f"<svmlab {what}: the picture above is the frame it showed; "
                              f"run the notebook to use its controls>")
    return data


#: JPEG quality of the picture a stored notebook shows before it runs
FALLBACK_JPEG_QUALITY = 75


def _css_width(image):
    """The width in CSS pixels an ``Image`` widget is displayed at (its
    layout width ``"NNNpx"``), or None."""
    import re

    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)px\s*", str(getattr(image.layout, "width", "") or ""))
    return int(round(float(m.group(1)))) if m else None


def fallback_picture(value, mime, css_width=None):
    """``(bytes, mime)`` of the picture a stored notebook shows in place of
    an explorer before anything runs: the image ``value`` at the size it is
    displayed at (``css_width`` CSS pixels wide; a player renders at twice
    that, for sharp high-density screens), as a JPEG of quality
    :data:`FALLBACK_JPEG_QUALITY`.  A notebook stores the picture twice (in
    the widget state, which a live front-end shows, and here), so this copy
    is kept small: about a fifth of the widget's bytes.  Unchanged when
    ``css_width`` is None or not smaller than the image."""
    from PIL import Image

    im = Image.open(io.BytesIO(value))
    if css_width is None or not 0 < css_width < im.size[0]:
        return value, mime
    im = im.convert("RGB")
    factor = im.size[0] / css_width
    if abs(factor - round(factor)) < 1e-6:
        im = im.reduce(int(round(factor)))  # box filter: exact halving of a 2x frame
    else:
        im = im.resize((css_width, max(1, int(round(im.size[1] / factor)))), Image.LANCZOS)
    buf = io.BytesIO()
    im.save(buf, format="jpeg", quality=FALLBACK_JPEG_QUALITY)
    return buf.getvalue(), "image/jpeg"


def show_bundle(bundle):  # pragma: no cover - notebook only
    """Display a :func:`picture_bundle` as one output."""
    from IPython.display import display

    display(bundle, raw=True)


class FramePlayer:
    """Play button + slider over ``n_frames`` frames of a prepared figure.

    Parameters
    ----------
    fig : matplotlib Figure, built once (see :func:`new_figure`).
    n_frames : int, number of frames; the slider's value runs over
        ``0..n_frames-1`` (a ``SelectionSlider``: its value is the frame index,
        its readout the frame's label, see ``labels``).
    update : callable ``update(k) -> str | None``; changes the artists of
        ``fig`` in place for frame ``k`` and returns an optional caption
        (HTML allowed) shown above the image.
    interval : int, milliseconds between frames when Play runs.
    description : str, slider label.
    start : int, the frame shown first.
    labels : the slider's readout per frame (list of strings or a callable
        ``k -> str``); default ``1, 2, ..., n_frames``, so the number under
        the slider is the step number the caption shows (an explorer whose
        frames are not steps passes its own: ``"stop"``, ``"40 %"`` ...).
    image_format : ``"jpeg"`` (default; fast to encode, quality 94 with full
        chroma) or ``"png"``.
    animated : optional list of the artists ``update`` changes, in drawing
        order.  Then a frame is *blitted*: everything else (axes, ticks,
        legends, static data) is rendered once into a background, and each
        frame restores it and draws only these artists (matplotlib's
        ``copy_from_bbox``/``draw_artist``), which is several times cheaper
        than a full render.  ``update`` must then not change anything
        outside this list (axis limits, ticks, legends).  Without it every
        frame is a full render.
    scale : float, default 2.  Frames are rendered at ``scale`` times the
        figure's dpi and the ``Image`` widget is given the figure's CSS width
        (``figwidth * dpi`` pixels at the dpi the figure was built with), so
        the browser shows them at their natural size and sharp on
        high-density screens.  The player changes ``fig.dpi`` to
        ``scale * dpi`` once (text, markers and lines scale with it, so the
        picture looks the same, only finer); ``scale=1`` keeps the old
        behaviour.

    Attributes
    ----------
    play, slider, image, caption, first_button, last_button : the
        ipywidgets; ``widget`` is the box holding them (displaying the player
        displays it), ``controls`` the row of buttons and slider.
    css_width, css_height : the size (CSS pixels) the image is displayed at;
        the rendered image has ``scale`` times as many pixels each way.
    update_ms, render_ms : lists of the time spent in ``update`` (artist
        changes) and in rendering + image encoding, per redraw.
    """

    def __init__(self, fig, n_frames, update, interval=400, description="step", start=0,
                 animated=None, image_format="jpeg", scale=2.0, labels=None, refit_artists=None):
        import ipywidgets as w

        if image_format not in ("jpeg", "png"):
            raise ValueError("image_format must be 'jpeg' or 'png'")
        if not scale > 0:
            raise ValueError(f"scale must be positive, got {scale!r}")
        self.image_format = image_format
        self.scale = float(scale)
        self.update_ms = []
        self.render_ms = []
        self.caption_text = ""
        self.frame = None
        self._quiet = False  # True while replace() changes the slider's range
        #: ``after_show(k)``, called after frame ``k`` is on the image (the
        #: live explorers' source panel: its HTML travels after the picture)
        self.after_show = None
        self.play = w.Play(value=0, min=0, max=1, step=1, interval=int(interval),
                           description="Play", repeat=False)
        # a selection slider: its value is the frame index, its readout the
        # frame's label (the number the caption shows)
        self.slider = w.SelectionSlider(options=[("1", 0), ("2", 1)], value=0,
                                        description=description, continuous_update=True,
                                        layout=w.Layout(width="55%"))
        # linked in the browser: Play moves the slider without a kernel round trip
        self._link = w.jslink((self.play, "value"), (self.slider, "index"))
        self.first_button = w.Button(description="first", icon="step-backward",
                                     tooltip="go to the first frame",
                                     layout=w.Layout(width="auto"))
        self.last_button = w.Button(description="last", icon="step-forward",
                                    tooltip="go to the last frame", layout=w.Layout(width="auto"))
        self.first_button.on_click(lambda _b: self.goto(0))
        self.last_button.on_click(lambda _b: self.goto(self.n_frames - 1))
        self.caption = w.HTML(layout=w.Layout(min_height="2.5em"))
        self.image = w.Image(format=image_format)
        self._background = None
        self._static_background = None
        #: static pixels of keyed axes cells (:meth:`_refresh_axes`), and
        #: how many times a cell was restored from them instead of drawn
        self._cells, self._cells_fig = {}, None
        self.cells_restored = 0
        self.refit_artists = []
        self.controls = w.HBox([self.first_button, self.play, self.slider, self.last_button])
        self.widget = w.VBox([self.controls, self.caption, self.image])
        self.slider.observe(self._on_value, names="index")
        self.replace(fig, n_frames, update, animated=animated, start=start, labels=labels,
                     refit_artists=refit_artists)

    def replace(self, fig, n_frames, update, animated=None, start=0, keep_background=False,
                labels=None, refit_artists=None):
        """Show another figure in the same widgets (same ``Image``, slider and
        Play button, so anything bound to them, e.g. a click handler, stays):
        the slider's range becomes ``0..n_frames-1`` and frame ``start`` is
        drawn.  The live explorers call it after every refit.

        ``labels``: the slider's readout per frame (a list of ``n_frames``
        strings, or ``labels(k) -> str``); default the frame number counted
        from 1, as the explorers' captions count steps.

        ``keep_background=True`` (only with the same ``fig``) keeps the
        blitting background: the caller promises that nothing outside
        ``animated`` changed its pixels, and the full render is skipped.
        A list of axes instead says that only the static parts of those axes
        changed: the next frame draws just them into the cached background
        (:meth:`_refresh_axes`; a full render when they cannot be isolated).

        ``refit_artists``: artists that change with the figure's content (a
        refit) but not from frame to frame (the lines of a whole trace); they
        may also be listed in ``animated``.  They are drawn once over the
        static background into a second cached background, under the
        frame's animated artists, so a refit that keeps the static
        background draws them and the frame's artists only, and a frame
        draws only the frame's artists."""
        partial = isinstance(keep_background, (list, tuple))
        keep = bool(keep_background) and fig is getattr(self, "fig", None) \
            and self._static_background is not None
        self._stale_axes = list(keep_background) if keep and partial else None
        if n_frames < 1:
            raise ValueError("FramePlayer needs at least one frame")
        if getattr(fig, "_svmlab_css_dpi", None) is None:
            fig._svmlab_css_dpi = fig.dpi  # the dpi the figure was designed for
            fig.set_dpi(fig.dpi * self.scale)
        self.fig = fig
        css_dpi = fig._svmlab_css_dpi
        self.css_width = int(round(fig.get_figwidth() * css_dpi))
        self.css_height = int(round(fig.get_figheight() * css_dpi))
        self.image.layout.width = f"{self.css_width}px"
        self.image.layout.height = "auto"
        self.n_frames = int(n_frames)
        self._update = update
        self.refit_artists = list(refit_artists) if refit_artists else []
        refit = {id(a) for a in self.refit_artists}
        self.animated = [a for a in (animated or []) if id(a) not in refit]
        for a in self.animated + self.refit_artists:
            a.set_animated(True)
        # the refit layer is drawn again in any case; the static layer stays
        # when the caller keeps it
        self._background = None
        if not keep:
            self._static_background = None
        if fig is not self._cells_fig:
            self._cells, self._cells_fig = {}, fig
        if labels is None:
            labels = [str(k + 1) for k in range(self.n_frames)]
        elif callable(labels):
            labels = [str(labels(k)) for k in range(self.n_frames)]
        labels = [str(v) for v in labels]
        if len(labels) != self.n_frames:
            raise ValueError(f"{len(labels)} labels for {self.n_frames} frames")
        self.labels = labels
        start = int(min(max(start, 0), self.n_frames - 1))
        # the new picture goes to the browser before the slider's new range
        # (a new range re-renders the slider there, which would delay it)
        self.show(start)
        self._quiet = True
        try:
            if [lab for lab, _ in self.slider.options] != labels:
                self.slider.options = list(zip(labels, range(self.n_frames)))
            self.slider.index = start
            if start > self.play.max:  # keep min <= value <= max at every assignment
                self.play.max = self.n_frames - 1
                self.play.value = start
            else:
                self.play.value = start
                self.play.max = self.n_frames - 1
        finally:
            self._quiet = False

    # -- drawing ----------------------------------------------------------
    def render(self):
        """Image bytes of the figure in its current state (blitted when
        ``animated`` was given)."""
        canvas = self.fig.canvas
        if not self.animated and not self.refit_artists:
            canvas.draw()
            return canvas_to_bytes(canvas, self.image_format)
        if self._static_background is not None and getattr(self, "_stale_axes", None):
            if not self._refresh_axes(self._stale_axes):
                self._static_background = None
            self._stale_axes = None
        if self._static_background is None:
            canvas.draw()  # everything but the animated and refit artists
            self._static_background = canvas.copy_from_bbox(self.fig.bbox)
            self._background = None
            self._remember_cells()
        if self._background is None:
            if self.refit_artists:
                canvas.restore_region(self._static_background)
                for a in self.refit_artists:
                    if a.get_visible():
                        self.fig.draw_artist(a)
                self._background = canvas.copy_from_bbox(self.fig.bbox)
            else:
                self._background = self._static_background
        canvas.restore_region(self._background)
        for a in self.animated:
            if a.get_visible():
                self.fig.draw_artist(a)
        return canvas_to_bytes(canvas, self.image_format)

    def _refresh_axes(self, axes):
        """Draw the static parts of ``axes`` again into the cached
        background, leaving the rest of it as it is: each axes' cell (the
        figure cut at the middle of the gaps between the axes of a grid) is
        painted with the figure's background and the axes drawn into it, as
        a full render draws it.  The explorers' layouts keep every axes'
        ticks, labels, title and legend inside its cell (the tests compare
        the pixels with a full render).  Returns False, drawing nothing, for
        a figure that is not such a grid (overlapping axes) or that has
        figure-level artists (titles, legends, texts)."""
        fig = self.fig
        canvas = fig.canvas
        cells = _isolated_cells(fig)
        if cells is None or set(axes) - set(fig.axes):
            return False
        canvas.restore_region(self._static_background)
        patch = fig.patch
        for ax in axes:
            key = self._cell_key(ax, cells[ax])
            cached = self._cells.get(key) if key is not None else None
            if cached is not None:  # these static pixels were drawn before
                canvas.restore_region(cached)
                self.cells_restored += 1
                continue
            patch.set_clip_box(cells[ax])
            try:
                fig.draw_artist(patch)
            finally:
                patch.set_clip_box(None)
            fig.draw_artist(ax)  # skips the animated artists, as a full render does
            self._remember_cell(key, cells[ax])
        self._static_background = canvas.copy_from_bbox(fig.bbox)
        self._background = None
        return True

    #: how many axes cells :meth:`_refresh_axes` keeps (a few MB of pixels)
    CELL_CACHE_SIZE = 24

    @staticmethod
    def _cell_key(ax, cell):
        """The key under which the static pixels of ``ax`` are kept: the
        explorer's ``ax._svmlab_static_key`` (a value its static parts are a
        function of, e.g. its snapped ranges) with the axes and its cell, or
        None when the explorer gives none (never cached)."""
        k = getattr(ax, "_svmlab_static_key", None)
        if k is None:
            return None
        return (id(ax), k, tuple(np.round(cell.extents, 3)))

    def _remember_cell(self, key, cell):
        if key is None:
            return
        cells = self._cells
        if key not in cells and len(cells) >= self.CELL_CACHE_SIZE:
            cells.pop(next(iter(cells)))  # the oldest
        cells[key] = self.fig.canvas.copy_from_bbox(cell)

    def _remember_cells(self):
        """After a full render: keep each keyed axes' cell (see
        :meth:`_refresh_axes`), so that a refit coming back to these ranges
        restores them instead of drawing them."""
        fig = self.fig
        if not any(getattr(ax, "_svmlab_static_key", None) is not None for ax in fig.axes):
            return
        cells = _isolated_cells(fig)
        if cells is None:
            return
        for ax, cell in cells.items():
            self._remember_cell(self._cell_key(ax, cell), cell)

    def invalidate(self):
        """Forget the blitting background (call it after changing anything
        that is not in ``animated``, e.g. the data points); the next frame
        renders it again."""
        self._background = None
        self._static_background = None
        self._cells = {}

    def show(self, k):
        """Draw frame ``k`` (update the artists, render, push to the image)."""
        k = int(k)
        t0 = time.perf_counter()
        text = self._update(k)
        t1 = time.perf_counter()
        png = self.render()
        t2 = time.perf_counter()
        self.update_ms.append(1e3 * (t1 - t0))
        self.render_ms.append(1e3 * (t2 - t1))
        self.caption_text = "" if text is None else str(text)
        # the picture first: each change is one message to the browser, in
        # this order, and the reader waits for the picture
        self.image.value = png
        self.caption.value = self.caption_text
        self.frame = k
        if self.after_show is not None:
            self.after_show(k)

    def _on_value(self, change):
        if not self._quiet:
            self.show(change["new"])

    # -- driving ------------------------------------------------------------
    @property
    def value(self):
        """The frame on the slider (0-based; the readout shows its label)."""
        return self.slider.index

    def drive(self, frames=None):
        """Move the slider through ``frames`` (default: every frame) as a
        reader would; exceptions in ``update`` propagate.  Afterwards the
        slider goes back to the frame shown before (so a widget displayed in
        an earlier cell still opens at its intended frame).  Returns the
        number of frames drawn."""
        frames = range(self.n_frames) if frames is None else frames
        before = self.slider.index
        n = 0
        for k in frames:
            self.goto(k)
            n += 1
        self.goto(before)
        return n

    def goto(self, k):
        """Show frame ``k`` through the slider (redrawn even if it is the
        frame already shown)."""
        k = int(k)
        if not 0 <= k < self.n_frames:
            raise IndexError(f"frame {k} outside 0..{self.n_frames - 1}")
        if self.slider.index == k:
            self.show(k)  # an unchanged value fires no observer
        else:
            self.slider.index = k

    def timing(self):
        """Median milliseconds per redraw: ``{"update_ms", "render_ms",
        "total_ms", "n"}`` over the redraws so far."""
        u = np.asarray(self.update_ms)
        r = np.asarray(self.render_ms)
        return {
            "update_ms": float(np.median(u)),
            "render_ms": float(np.median(r)),
            "total_ms": float(np.median(u + r)),
            "n": int(len(u)),
        }

    def pixel_to_data(self, ax, px, py):
        """Data coordinates in ``ax`` of the pixel ``(px, py)`` of the
        rendered image (origin top left, image pixels: what ipyevents
        reports as ``dataX, dataY``).  The image has the figure's physical
        pixel size, so this is the inverse of the axes' data transform after
        flipping y (matplotlib's display origin is bottom left)."""
        h = self.fig.bbox.height
        return tuple(ax.transData.inverted().transform((float(px), h - float(py))))

    def animation(self, frames=None, interval=600):
        """The same frames as a static ``to_jshtml`` animation (see
        :func:`static_animation`); the player's frame is restored after."""
        frames = range(self.n_frames) if frames is None else frames
        html = static_animation(self.fig, self._update, frames, interval=interval,
                                animated=self.refit_artists + self.animated)
        if self.frame is not None:
            self._update(self.frame)
        return html

    def _repr_mimebundle_(self, **kwargs):
        return picture_bundle(self.widget, self.image, "explorer")

    def _ipython_display_(self):  # pragma: no cover - notebook only
        show_bundle(self._repr_mimebundle_())


def _isolated_cells(fig):
    """:func:`_grid_cells` of a figure whose axes can be drawn one by one
    (:meth:`FramePlayer._refresh_axes`): None when it has figure-level
    artists (titles, legends, texts, lines, patches, images), which a cell
    would cut."""
    if fig.texts or fig.legends or fig.lines or fig.patches or fig.images or fig.artists \
            or getattr(fig, "_suptitle", None) is not None:
        return None
    return _grid_cells(fig)


def _grid_cells(fig):
    """``{axes: Bbox}`` in display pixels: the figure cut between
    neighbouring axes (a grid of subplots), or None when two axes overlap
    (insets, twins: no such cut).

    One above the other, the cut is at the middle of the gap (the upper
    axes' x tick labels and x label above it, the lower one's title below).
    Side by side, the gap holds the right axes' y tick labels and y label
    (when the left axes has its y ticks on the left, matplotlib's default),
    which may reach past the middle (IRWLS: four-digit weights); so the cut
    is 2 points right of the left axes' frame (its spine and its
    antialiasing), else at the middle.  Likewise above an axes with no
    title (and its x axis at the bottom) the gap holds only the upper
    axes' x tick labels and label: the cut is 2 points above its frame."""
    from matplotlib.transforms import Bbox

    boxes = {ax: ax.bbox.extents for ax in fig.axes}
    W, H = fig.bbox.width, fig.bbox.height
    pad = 2.0 * fig.dpi / 72.0

    def cut(left_ax, u1, x0):
        if left_ax.yaxis.get_ticks_position() == "left" and \
                left_ax.yaxis.get_label_position() == "left":
            return u1 + pad if x0 - u1 > 2 * pad else (u1 + x0) / 2
        return (u1 + x0) / 2

    def vcut(lower_ax, v1, y0):
        # the gap above an axes without a title (and x ticks below) holds
        # only the upper axes' x tick labels and x label
        titled = any(t.get_text() for t in (lower_ax.title, lower_ax._left_title,
                                            lower_ax._right_title))
        if not titled and lower_ax.xaxis.get_ticks_position() == "bottom" \
                and lower_ax.xaxis.get_label_position() == "bottom" and y0 - v1 > 2 * pad:
            return v1 + pad
        return (v1 + y0) / 2

    cells = {}
    for ax, (x0, y0, x1, y1) in boxes.items():
        left, right, bottom, top = 0.0, W, 0.0, H
        for other, (u0, v0, u1, v1) in boxes.items():
            if other is ax:
                continue
            rows = v0 < y1 and y0 < v1      # side by side
            cols = u0 < x1 and x0 < u1      # one above the other
            if rows and cols:
                return None
            if rows and u1 <= x0:
                left = max(left, cut(other, u1, x0))
            if rows and u0 >= x1:
                right = min(right, cut(ax, x1, u0))
            if cols and v1 <= y0:
                bottom = max(bottom, vcut(other, v1, y0))
            if cols and v0 >= y1:
                top = min(top, vcut(ax, y1, v0))
        cells[ax] = Bbox.from_extents(left, bottom, right, top)
    return cells


def static_animation(fig, update, frames, interval=600, animated=(), frame_format="jpeg"):
    """``FuncAnimation(fig, update, frames).to_jshtml()`` as an IPython HTML
    object (a self-contained player for readers without a live kernel).

    ``update`` is the same ``update(k)`` a :class:`FramePlayer` uses; artists
    marked animated for blitting are drawn normally here.  Frames are
    embedded as base64 ``frame_format`` images (JPEG of quality
    :data:`ANIMATION_JPEG_QUALITY` keeps a stored notebook small; ``"png"``
    for crisp line art).  Keep ``frames`` short.
    """
    import tempfile
    from pathlib import Path

    import matplotlib
    from IPython.display import HTML
    from matplotlib.animation import FuncAnimation, HTMLWriter

    frames = list(frames)

    def func(k):
        update(k)
        return []

    # frames at the dpi the figure was designed for (a live player may have
    # doubled fig.dpi): keeps stored notebooks small
    with _unanimated(list(animated)), matplotlib.rc_context(
            {"animation.frame_format": frame_format, "savefig.dpi": _design_dpi(fig)}):
        anim = FuncAnimation(fig, func, frames=frames, interval=interval, blit=False,
                             repeat=False)
        # what FuncAnimation.to_jshtml does, with the JPEG quality passed on
        # (to_jshtml takes no savefig arguments)
        kw = ({"pil_kwargs": {"quality": ANIMATION_JPEG_QUALITY}}
              if frame_format in ("jpeg", "jpg") else {})
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp, "animation.html")
            anim.save(str(path), writer=HTMLWriter(fps=1000.0 / interval, embed_frames=True,
                                                   default_mode="once"), savefig_kwargs=kw)
            html = path.read_text()
    return HTML(html)


#: JPEG quality of the frames of :func:`static_animation` (matplotlib's
#: default is 75; the frames are at the designed dpi and a stored notebook
#: holds one per frame)
ANIMATION_JPEG_QUALITY = 50


# --------------------------------------------------------------------------
# decision values of a dual model on a 2-D grid
# --------------------------------------------------------------------------
def contour_segments(xs, ys, Z, level):
    """Level-``level`` lines of ``Z`` (shape ``(len(ys), len(xs))``) as a list
    of ``(m, 2)`` arrays, ready for ``LineCollection.set_segments``."""
    import contourpy

    gen = contourpy.contour_generator(xs, ys, Z, line_type=contourpy.LineType.Separate)
    return [np.asarray(s) for s in gen.lines(level) if len(s) > 1]


class DecisionGrid:
    """Decision values ``f = sum_i c_i K(x_i, .) + b`` of a dual model over a
    regular 2-D grid covering ``X`` (2 features).

    The kernel block between the training points and the grid is computed
    once (``n x n_grid``, small for the teaching data sets), so each frame
    costs one matrix-vector product: ``values(alpha * y, b)``.
    """

    def __init__(self, X, kernel="rbf", gamma="scale", degree=3, coef0=0.0, n=80, pad=0.15):
        from ..kernels._rows import Kernel

        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != 2:
            raise ValueError("DecisionGrid needs 2-D points (n, 2)")
        lo, hi = X.min(0), X.max(0)
        span = np.where(hi > lo, hi - lo, 1.0)
        lo, hi = lo - pad * span, hi + pad * span
        self.xs = np.linspace(lo[0], hi[0], n)
        self.ys = np.linspace(lo[1], hi[1], n)
        gx, gy = np.meshgrid(self.xs, self.ys)
        self.points = np.column_stack([gx.ravel(), gy.ravel()])
        self.kernel = Kernel(X, kernel, gamma, degree, coef0)
        self.Kg = self.kernel.matrix(Z=self.points)  # (n_train, n_grid)
        self.shape = gx.shape
        self.extent = (lo[0], hi[0], lo[1], hi[1])

    def values(self, coef, b):
        """Grid of decision values for dual coefficients ``coef = alpha * y``."""
        return (np.asarray(coef, dtype=np.float64) @ self.Kg + b).reshape(self.shape)

    def lines(self, Z, level):
        """Segments of the level set ``f = level`` (see :func:`contour_segments`)."""
        return contour_segments(self.xs, self.ys, Z, level)


def plot_decision_regions(ax, clf, X, y, title=None, n=120, pad=0.15, levels=(-1.0, 0.0, 1.0)):
    """Static plot of a fitted 2-D classifier: shaded ``decision_function``,
    the boundary ``f = 0`` and margins ``f = +-1``, the points by class, and
    support vectors (``support_``, when the estimator has them) ringed."""
    X = np.asarray(X, dtype=float)
    lo, hi = X.min(0), X.max(0)
    span = np.where(hi > lo, hi - lo, 1.0)
    lo, hi = lo - pad * span, hi + pad * span
    xs, ys = np.linspace(lo[0], hi[0], n), np.linspace(lo[1], hi[1], n)
    gx, gy = np.meshgrid(xs, ys)
    Z = clf.decision_function(np.column_stack([gx.ravel(), gy.ravel()])).reshape(gx.shape)
    ax.contourf(xs, ys, np.clip(Z, -2.5, 2.5), levels=20, cmap="RdBu_r", alpha=0.35)
    ax.contour(xs, ys, Z, levels=list(levels), colors="k",
               linestyles=["--" if v else "-" for v in levels], linewidths=[1, 1.6, 1])
    ypm = np.where(np.asarray(y) == clf.classes_[1], 1, -1)
    for lab in (-1, 1):
        m = ypm == lab
        ax.scatter(X[m, 0], X[m, 1], s=14, c=CLASS_COLORS[lab], marker=CLASS_MARKERS[lab],
                   linewidths=0)
    sup = getattr(clf, "support_", None)
    if sup is not None and len(sup):
        ax.scatter(X[sup, 0], X[sup, 1], s=45, facecolors="none", edgecolors="k",
                   linewidths=0.8)
    ax.set_xticks([])
    ax.set_yticks([])
    if title:
        ax.set_title(title, fontsize=9)
    return ax


# --------------------------------------------------------------------------
# readability checks (used by the tests of every figure and explorer)
# --------------------------------------------------------------------------
#: the smallest text a figure of the course may show, in CSS points as a
#: browser displays the figure at its natural size (96 CSS px per inch)
MIN_TEXT_PT = 9.0


#: matplotlib settings of the course's static figures (see :func:`course_style`)
COURSE_RC = {
    "figure.dpi": 96,             # 1 point of text = 1 CSS point in the browser
    "figure.figsize": (7.5, 4.0),  # 720 CSS px: fits the 848 px of a 1280 px JupyterLab
    "font.size": 10,
    "axes.titlesize": 10.5,
    "axes.labelsize": 10,
    "xtick.labelsize": 9.5,
    "ytick.labelsize": 9.5,
    "legend.fontsize": 9.5,
    "figure.titlesize": 11,
}

#: the widest figure (CSS px at its natural size) a notebook shows: JupyterLab
#: in a 1280 px browser, file browser open, leaves 848 px for a cell's output
MAX_FIGURE_PX = 840


def course_style():
    """Set matplotlib's defaults for the course notebooks (:data:`COURSE_RC`):
    figures at 96 dpi, so that a point of text is a CSS point in the
    browser, and no default text below 9.5 points.  The notebooks call it in
    their first cell; the explorers set their own sizes and need no call."""
    import matplotlib as mpl

    mpl.rcParams.update(COURSE_RC)


def drawn_texts(fig):
    """``[(text artist, bbox in display pixels)]`` of every non-empty text
    that a full render of ``fig`` draws (tick labels, titles, legends,
    annotations, mathtext), animated artists included."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    renderer = canvas.get_renderer()
    seen = []
    orig = renderer.draw_text

    def spy(gc, x, y, s, prop, angle, ismath=False, mtext=None):
        if mtext is not None and str(s).strip():
            seen.append(mtext)
        return orig(gc, x, y, s, prop, angle, ismath=ismath, mtext=mtext)

    animated = [a for a in fig.findobj() if a.get_animated()]
    renderer.draw_text = spy
    try:
        with _unanimated(animated):
            fig.draw(renderer)
    finally:
        del renderer.draw_text
    out, ids = [], set()
    for t in seen:
        if id(t) in ids:
            continue
        ids.add(id(t))
        out.append((t, t.get_window_extent(renderer)))
    return out


def text_problems(fig, min_pt=MIN_TEXT_PT, overlap_px=1.5):
    """Readability problems of ``fig`` at its natural size, as a list of
    strings (empty: none): a text smaller than ``min_pt`` CSS points (its
    font size times the figure's design dpi over 96), two texts whose boxes
    overlap by more than ``overlap_px`` CSS pixels each way, or a text that
    sticks out of the figure."""
    dpi = fig.dpi
    css = _design_dpi(fig)
    px = dpi / 96.0  # display pixels per CSS pixel (a player renders at scale x dpi)
    texts = drawn_texts(fig)
    W, H = fig.bbox.width, fig.bbox.height
    out = []
    for t, bb in texts:
        size = t.get_fontsize() * css / 96.0
        if size < min_pt - 1e-9:
            out.append(f"too small ({size:.1f} pt): {t.get_text()!r}")
        if bb.x0 < -overlap_px * px or bb.y0 < -overlap_px * px or \
                bb.x1 > W + overlap_px * px or bb.y1 > H + overlap_px * px:
            out.append(f"outside the figure: {t.get_text()!r}")
    for i in range(len(texts)):
        ti, bi = texts[i]
        for j in range(i + 1, len(texts)):
            tj, bj = texts[j]
            dx = min(bi.x1, bj.x1) - max(bi.x0, bj.x0)
            dy = min(bi.y1, bj.y1) - max(bi.y0, bj.y0)
            if dx > overlap_px * px and dy > overlap_px * px:
                out.append(f"overlap: {ti.get_text()!r} and {tj.get_text()!r}")
    return out


# --------------------------------------------------------------------------
# warming up the exact fits a notebook times
# --------------------------------------------------------------------------
def warm_fits(estimators, X, y, n=300, random_state=0):
    """Fit a clone of each estimator on ``n`` rows of ``(X, y)``, so that the
    compiled code the full fits will run is compiled (and loaded) before
    anything is timed.  Returns the fitted clones (``warm_fits.seconds``
    holds the time it took).

    :func:`svmlab.warm_up` compiles each solver family on small problems; a
    timed fit on many rows can still need another compiled version: its
    kernel cache holds float32 values when the float64 kernel matrix does not
    fit in ``cache_size`` (``cache_dtype="auto"``), and it may park examples
    when the cache holds fewer rows than there are examples.  The clone keeps
    every parameter and scales ``cache_size`` by ``(n / n_rows)^2``, so it
    makes the same choices as the full fit on the same kind of input (dense,
    CSR or binary).  Estimators without ``fit`` parameters of svmlab (LIBSVM
    through scikit-learn) are skipped: they need no compilation."""
    X_n = X.shape[0]
    rng = np.random.default_rng(random_state)
    y = np.asarray(y)
    # both classes in the subset: the first n rows of a shuffled order, plus
    # one row of every class that is missing
    order = rng.permutation(X_n)
    idx = order[: min(n, X_n)]
    for c in np.unique(y):
        if not np.any(y[idx] == c):
            idx = np.append(idx, order[np.flatnonzero(y[order] == c)[0]])
    idx = np.sort(idx)
    Xs, ys = X[idx], y[idx]
    from .. import _jit

    t0 = time.perf_counter()
    # compile here and now (svmlab._jit's eager mode, as svmlab.warm_up does):
    # the small clones would otherwise run interpreted while a background
    # process compiles, and the timed fit could meet the compilation
    old = _jit.set_mode("eager")
    try:
        clones = _warm_clones(estimators, Xs, ys, len(idx), X_n)
    finally:
        _jit.set_mode(old)
    warm_fits.seconds = time.perf_counter() - t0
    return clones


def _warm_clones(estimators, Xs, ys, n, X_n):
    from sklearn.base import clone

    clones = []
    for est in estimators:
        if not type(est).__module__.startswith("svmlab"):
            continue
        e = clone(est)
        params = e.get_params()
        if "cache_size" in params:
            e.set_params(cache_size=float(params["cache_size"]) * (n / X_n) ** 2)
        if "progress" in params:
            e.set_params(progress=False)
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            e.fit(Xs, ys)
        clones.append(e)
    return clones


#: mantissas of :func:`stepped_count_end`
_COUNT_STEPS = (1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0)


def stepped_count_end(n, smallest=4):
    """Where an axis that shows ``n`` iterations ends: ``n`` rounded up to
    4, 5, 6, 8, 10, 15, 20, 25, 30, 40, 50, ... .  The live explorers' panels
    of a trace end there and not at ``n`` itself, so that a refit whose
    count changes a little keeps the axes (ticks, tick labels) and only
    the animated lines are drawn again."""
    n = max(int(n), int(smallest))
    mag = 10.0 ** np.floor(np.log10(n))
    return int(next(round(m * mag) for m in _COUNT_STEPS if m * mag >= n - 1e-9))


def freeze_label_positions(fig, pad_pt=3.0, axes=None):
    """Fix every axis label of ``fig`` at a distance from its axes that the
    fonts and the tick-label strings give: below one line of x tick labels
    (a superscript's height more on a log axis), left of as many characters
    as the longest y tick label has (its string, measured without drawing).

    By default matplotlib places an axis label on every draw from the
    rendered bounding boxes of all its tick labels
    (``Axis._update_label_position``), the largest single cost of redrawing
    the explorers' small figures, paid at every refit and, for an axis an
    explorer animates, at every frame.  The explorers call this once their
    axes hold a trace (when built and after a reset), so a reset figure
    draws the same pixels as a new one; ``tests/test_viz_readability.py``
    checks that no label overlaps a tick label or leaves the figure, frame
    after frame and refit after refit.  ``axes``: only these (the axes a
    reset drew again; the others' labels stay where they were placed)."""
    import re

    import matplotlib as mpl

    for ax in (fig.axes if axes is None else axes):
        box = ax.get_position()  # figure fraction
        w_pt = box.width * fig.get_figwidth() * 72.0
        h_pt = box.height * fig.get_figheight() * 72.0
        for axis, horiz in ((ax.xaxis, True), (ax.yaxis, False)):
            if not axis.label.get_text():
                # nothing to place: without this, every draw would still
                # measure all tick labels of the axes' row or column to
                # place the empty label (a tenth of a refit's render)
                axis._autolabelpos = False
                continue
            axis._autolabelpos = True  # measure again after a reset
            k = "xtick" if horiz else "ytick"
            lo, hi = sorted(axis.get_view_interval())
            labels = [t for t, x in zip(axis.get_majorticklabels(), axis.get_majorticklocs())
                      if t.get_text() and lo - 1e-9 * (hi - lo) <= x <= hi + 1e-9 * (hi - lo)]
            size = (mpl.rcParams[f"{k}.major.size"] + mpl.rcParams[f"{k}.major.pad"]
                    if labels else 0.0)
            fs = labels[0].get_fontsize() if labels else 0.0
            if horiz:
                text = (1.55 if axis.get_scale() == "log" else 1.15) * fs
                axis.set_label_coords(0.5, -(size + text + pad_pt) / h_pt)
                axis.label.set_verticalalignment("top")
            else:
                chars = max([len(re.sub(r"\\mathdefault|[{}$^_\\]", "", t.get_text()))
                             for t in labels] + [0])
                text = chars * 0.62 * fs
                axis.set_label_coords(-(size + text + pad_pt) / w_pt, 0.5)
                axis.label.set_verticalalignment("bottom")
