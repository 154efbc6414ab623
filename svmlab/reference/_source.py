"""Show the source of a reference function with the lines that ran marked.

The readable references tag the lines of each branch with a trailing comment
``# [tag]`` (for example ``# [clip-H]`` on the line that clips ``a2`` at
``H``).  A reference's ``explain(record)`` names the functions and the tags
of the branches that a recorded step took; :func:`source_text` and
:func:`source_html` then print that function with those lines marked, so a
student sees which lines of the algorithm produced the step on screen.
"""

from __future__ import annotations

import html
import inspect
import re
import textwrap

__all__ = ["tagged_lines", "source_text", "source_html", "tags_of"]

_TAG = re.compile(r"#\s*\[([A-Za-z0-9_.:\-]+(?:\s*,\s*[A-Za-z0-9_.:\-]+)*)\]\s*$")


def tagged_lines(func):
    """``[(line, tags)]`` for the source of ``func``: each line of its
    dedented source with the set of tags of its trailing ``# [tag, ...]``
    comment (empty when it has none)."""
    src = textwrap.dedent(inspect.getsource(func))
    out = []
    for line in src.rstrip("\n").split("\n"):
        m = _TAG.search(line)
        tags = frozenset(t.strip() for t in m.group(1).split(",")) if m else frozenset()
        out.append((line, tags))
    return out


def tags_of(func):
    """Every tag used in ``func``'s source (tests check that ``explain``
    names only tags that exist)."""
    found = set()
    for _, tags in tagged_lines(func):
        found |= tags
    return found


def _check(func, marks):
    unknown = set(marks) - tags_of(func)
    if unknown:
        raise ValueError(f"{func.__qualname__} has no line tagged {sorted(unknown)}")


def source_text(func, marks=()):
    """The source of ``func`` as text, with ``>>`` before each line whose
    tag is in ``marks`` (and two spaces before the others)."""
    marks = set(marks)
    _check(func, marks)
    return "\n".join((">> " if tags & marks else "   ") + line
                     for line, tags in tagged_lines(func))


def source_html(func, marks=(), title=None, max_height="28em"):
    """The source of ``func`` as an HTML ``<pre>`` block, the lines tagged
    with one of ``marks`` highlighted, for an ``ipywidgets.HTML`` next to a
    step explorer."""
    marks = set(marks)
    _check(func, marks)
    rows = []
    for line, tags in tagged_lines(func):
        text = html.escape(line) or " "
        if tags & marks:
            rows.append(f'<span style="background:#ffe58a;display:block">{text}</span>')
        else:
            rows.append(f'<span style="display:block;color:#444">{text}</span>')
    head = f"<div style='font-weight:bold;margin:2px 0'>{html.escape(title)}</div>" if title else ""
    return (f"{head}<pre style='font-size:11px;line-height:1.25;margin:0;max-height:{max_height};"
            f"overflow:auto;border:1px solid #ddd;padding:4px'>" + "".join(rows) + "</pre>")
