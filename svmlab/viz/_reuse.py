"""Empty an axes for a redraw, keeping its tick objects.

The step explorers' ``reset`` methods (what the live explorers of
:mod:`svmlab.viz.live` call after every refit) draw a new trace into the
axes of the figure they already have.  ``Axes.cla()`` would empty an axes,
but it also throws away the axis' ``Tick`` objects, and building them again
on the next draw (each tick is two lines and two texts, with their fonts
looked up) is the largest part of a redraw of these small figures.
:func:`clear_for_redraw` removes what the explorers draw and puts back the
state a new axes starts from, but keeps the ticks; the tests check that the
pixels equal those of an explorer built afresh.
"""

from __future__ import annotations

import matplotlib as mpl


def clear_for_redraw(ax):
    """Remove every plotted artist of ``ax`` (lines, collections, patches,
    texts, images, bar containers, the legend) and reset what a new axes starts with:
    linear scales with their default locators and formatters, autoscaling
    on, empty data limits, the colour cycle, empty titles and axis labels
    at the default font sizes.  The ``Tick`` objects stay (they are updated
    from the locators at the next draw)."""
    for container in list(ax.containers):  # bars, errorbars (their legend entries)
        container.remove()
    for group in (ax.lines, ax.collections, ax.patches, ax.texts, ax.images, ax.artists,
                  ax.tables):
        for artist in list(group):
            artist.remove()
    legend = ax.get_legend()
    if legend is not None:
        legend.remove()
    # linear scale: sets AutoLocator / ScalarFormatter (and the minor ones),
    # also where a fixed tick list or a log scale was set before
    ax.set_xscale("linear")
    ax.set_yscale("linear")
    ax.set_xlim(0.0, 1.0)  # a new axes' view (also undoes an inverted axis)
    ax.set_ylim(0.0, 1.0)
    ax.set_autoscale_on(True)
    ax.relim()  # no artists left: empty data limits
    ax.set_prop_cycle(None)
    for loc in ("left", "center", "right"):
        ax.set_title("", loc=loc)
    ax.set_xlabel("", fontsize=mpl.rcParams["axes.labelsize"])
    ax.set_ylabel("", fontsize=mpl.rcParams["axes.labelsize"])
