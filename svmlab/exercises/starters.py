"""The exercise cells to append at the end of the course notebooks.

``CELLS[notebook]`` is the ordered list of ``(cell_type, source)`` pairs for
that notebook: a markdown cell with the exercise text, then a code cell with
the starter function (its body is ``raise NotImplementedError``) and the
call to the checker.  Run unsolved, every code cell shows the checker's
"not implemented yet" message and raises nothing, so the notebooks pass
nbval with the starter code in place.

The cells are kept here (and not only in the notebooks) so that the tests can
execute them; :func:`handoff_markdown` prints them for the engineer who
inserts them, and ``python -m svmlab.exercises.starters DIR`` writes one
``<notebook>.md`` per notebook into DIR.
"""

from __future__ import annotations

import sys
from pathlib import Path

__all__ = ["CELLS", "handoff_markdown", "write_handoff"]

_SOLUTIONS_NOTE = (
    "*Each check cell runs your function on hand-picked edge cases, random cases and cases "
    "replayed from the solver's own recorded steps, and names the first case where your answer "
    "differs, with a hint. Until you write the function it says \"not implemented yet\". "
    "The instructor's solutions are in `notebooks/solutions/` (not handed out with the "
    "notebooks).*")

CELLS = {
    # ------------------------------------------------------------------ 01
    "01_smo_geometry": [
        ("markdown", r"""## 6 · Exercises: write the SMO step yourself

Everything above came from two short functions. Write them, in svmlab's signs: $f(x)=\sum_j\alpha_jy_jK(x_j,x)+b$,
$E_i=f(x_i)-y_i$ and $\eta=K_{11}+K_{22}-2K_{12}$ (Platt's TR writes $u=w\cdot x-b$ and the opposite sign of $\eta$).

""" + _SOLUTIONS_NOTE + r"""

### Exercise 1 · The clipped analytic step (TR eqs. 13-19)

`take_step(y1, y2, a1, a2, E1, E2, K11, K12, K22, C)` returns `(a1_new, a2_new)`:

1. the ends of the segment: for $y_1\ne y_2$, $L=\max(0,\alpha_2-\alpha_1)$, $H=\min(C,C+\alpha_2-\alpha_1)$;
   for $y_1=y_2$, $L=\max(0,\alpha_2+\alpha_1-C)$, $H=\min(C,\alpha_2+\alpha_1)$. If $L=H$ nothing can move: return `(a1, a2)`;
2. if $\eta>0$: $\alpha_2^{new}=\alpha_2+y_2(E_1-E_2)/\eta$, clipped to $[L,H]$;
3. if $\eta\le0$: the objective along the segment has no interior maximum. Its gain when $\alpha_2$ moves by $d$ is
   $y_2(E_1-E_2)\,d-\tfrac12\eta d^2$; move to the end ($L$ or $H$) with the larger gain, or stay if both are equal;
4. $\alpha_1^{new}=\alpha_1+s(\alpha_2-\alpha_2^{new})$ with $s=y_1y_2$ (this keeps $y_1\alpha_1+y_2\alpha_2$ constant)."""),
        ("code", r'''from svmlab.exercises import check_take_step


def take_step(y1, y2, a1, a2, E1, E2, K11, K12, K22, C):
    """One analytic SMO step on the pair (a1, a2). Returns (a1_new, a2_new)."""
    # 1. L and H (TR eqs. 13, 14); return (a1, a2) if L == H
    # 2. eta = K11 + K22 - 2 K12; if eta > 0: unconstrained a2_new, clipped to [L, H]
    # 3. else: compare the gain y2 (E1 - E2) d - eta d^2 / 2 at both ends
    # 4. a1_new from s = y1 y2
    raise NotImplementedError


check_take_step(take_step)'''),
        ("markdown", r"""### Exercise 2 · The threshold update (TR eqs. 20, 21)

After the step, $b$ is chosen so that the KKT conditions hold for the two changed examples. With
$d_1=y_1(\alpha_1^{new}-\alpha_1)$ and $d_2=y_2(\alpha_2^{new}-\alpha_2)$:

$$b_1=b-E_1-d_1K_{11}-d_2K_{12},\qquad b_2=b-E_2-d_1K_{12}-d_2K_{22}.$$

$b_1$ makes the new $E_1$ zero, $b_2$ the new $E_2$. Return $b_1$ if $0<\alpha_1^{new}<C$, else $b_2$ if
$0<\alpha_2^{new}<C$, else (both at a bound, every $b$ between them is consistent) $(b_1+b_2)/2$."""),
        ("code", r'''from svmlab.exercises import check_threshold


def threshold(y1, y2, a1, a2, a1_new, a2_new, E1, E2, b, K11, K12, K22, C):
    """The new intercept b after the joint step (a1, a2) -> (a1_new, a2_new)."""
    # b1 = ..., b2 = ...; pick b1, b2 or their average
    raise NotImplementedError


check_threshold(threshold)'''),
    ],
    # ------------------------------------------------------------------ 03
    "03_cutting_plane": [
        ("markdown", r"""## 5 · Exercises: the two halves of Algorithm 1

""" + _SOLUTIONS_NOTE + r"""

### Exercise 1 · The most violated constraint

At the current $w$, Algorithm 1 picks $c_i=1$ exactly for the examples with $y_i\,w^\top x_i<1$ (strictly: an
example on the margin is not violated) and builds the constraint $w^\top g\ge d-\xi$ of OP2 with

$$g=\tfrac1n\sum_i c_iy_ix_i,\qquad d=\tfrac1n\sum_i c_i.$$

`most_violated(X, y, w)` gets a dense `X` (n, p), labels `y` in $\{-1,+1\}$ and `w` (p,), and returns
`(c, g, d)`: `c` an (n,) array of 0/1 or booleans, `g` of shape (p,), `d` a number. (The bias is a constant
feature: the checker also calls your function with a column of ones appended to `X`.) One pass over the data,
O(sn): this is why the method is linear in n."""),
        ("code", r'''import numpy as np
from svmlab.exercises import check_most_violated


def most_violated(X, y, w):
    """The most violated constraint (c, g, d) of OP2 at w."""
    # margins y_i w.x_i; c_i = 1 when the margin is below 1; g and d
    raise NotImplementedError


check_most_violated(most_violated)'''),
        ("markdown", r"""### Exercise 2 · The slack of the working set, and the stopping rule

The working set $W$ holds $K$ constraints, the rows $g_k$ of `G` (K, p) and the offsets $d_k$ of `d` (K,).
At the solution $w$ of OP3 its slack is

$$\xi=\max\bigl(0,\;\max_k\,(d_k-w^\top g_k)\bigr)\qquad(\xi=0\text{ for an empty working set}).$$

Algorithm 1 adds the new constraint only when its slack $\xi'=d-w^\top g$ exceeds $\xi$ by more than
$\varepsilon$, and stops otherwise. Write `working_set_slack(G, d, w)`, returning $\xi$ as a number."""),
        ("code", r'''import numpy as np
from svmlab.exercises import check_working_set_slack


def working_set_slack(G, d, w):
    """xi = max(0, max_k d_k - w.g_k), 0 for an empty working set."""
    raise NotImplementedError


check_working_set_slack(working_set_slack)'''),
    ],
    # ------------------------------------------------------------------ 04
    "04_ordinal_regression": [
        ("markdown", r"""## 4 · Exercises: counting pairs without listing them

""" + _SOLUTIONS_NOTE + r"""

### Exercise 1 · How many preference pairs?

`count_pairs(y)` returns $m=|\{(i,j):y_i>y_j\}|$ for integer ranks `y` (any integers, in any order). Do not list
the pairs: with $N_r$ examples of rank $r$, $m=\sum_r N_r\cdot\#\{\text{examples of lower rank}\}$."""),
        ("code", r'''import numpy as np
from svmlab.exercises import check_count_pairs


def count_pairs(y):
    """Number of pairs (i, j) with y_i > y_j."""
    raise NotImplementedError


check_count_pairs(count_pairs)'''),
        ("markdown", r"""### Exercise 2 · The sorted sweep of Algorithm 2

`ordinal_sweep(scores, y)` returns `(c_plus, c_minus)`, two integer arrays of shape (n,):
$c^+_i=\#\{j:y_j<y_i,\;s_i-s_j<1\}$ and $c^-_j=\#\{i:y_i>y_j,\;s_i-s_j<1\}$ (a difference of exactly 1 is **not**
a violation). Do it in $O(n\log n+Rn)$ as in section 2 above: with $u_i=s_i-\tfrac12$ and $d_j=s_j+\tfrac12$, a pair is
violated iff $u_i<d_j$. Sort the $2n$ values from the largest down (at equal values $u$ before $d$) and keep, per
rank $r$, the number $a[r]$ of $d$ values and $b[r]$ of $u$ values passed so far. At $u_i$ (rank $r$),
$c^+_i=\sum_{r'<r}a[r']$; at $d_j$ (rank $r$), $c^-_j=\sum_{r'>r}(N_{r'}-b[r'])$.

The checker compares with all-pairs counting, then times your function at n = 1200 and n = 4800: a pair-by-pair
count, O(n²), fails that part."""),
        ("code", r'''import numpy as np
from svmlab.exercises import check_sweep


def ordinal_sweep(scores, y):
    """(c_plus, c_minus) of the most violated OP5 constraint, by one sorted sweep."""
    # ranks -> 0..R-1 (np.unique(..., return_inverse=True)), N_r per rank
    # the 2n events, sorted (np.lexsort), then one pass with the counters a and b
    raise NotImplementedError


check_sweep(ordinal_sweep)'''),
        ("markdown", r"""### Exercise 3 · The constraint from the counts

Each violated pair $(i,j)$ adds $x_i-x_j$, so the OP5 constraint needs only the counts:

$$g=\tfrac1m\sum_i\,(c^+_i-c^-_i)\,x_i,\qquad d=\tfrac1m\sum_i c^+_i .$$

`ordinal_constraint(X, c_plus, c_minus, m)` returns `(g, d)` with `g` of shape (p,)."""),
        ("code", r'''import numpy as np
from svmlab.exercises import check_ordinal_constraint


def ordinal_constraint(X, c_plus, c_minus, m):
    """(g, d) of the OP5 constraint from the condensed counts."""
    raise NotImplementedError


check_ordinal_constraint(ordinal_constraint)'''),
    ],
    # ------------------------------------------------------------------ 05
    "05_irwls": [
        ("markdown", r"""## 5 · Exercises: the weights and the reordering of Table 1

""" + _SOLUTIONS_NOTE + r"""

### Exercise 1 · The weights of eq. (8)

`irwls_weights(ye, C)` takes an array of $e_iy_i=1-y_if(x_i)$ and returns the weights $a_i$, same shape:
$a_i=0$ if $e_iy_i<0$ (S2), $a_i=C/(e_iy_i)$ if $e_iy_i>0$ (S3), and $a_i=\infty$ (`np.inf`) if $e_iy_i=0$ (S1)."""),
        ("code", r'''import numpy as np
from svmlab.exercises import check_irwls_weights


def irwls_weights(ye, C):
    """The IRWLS weights a_i of eq. (8) for the values e_i y_i."""
    raise NotImplementedError


check_irwls_weights(irwls_weights)'''),
        ("markdown", r"""### Exercise 2 · Reordering S1, S2, S3 (Table 1, rules a-d)

`reorder_sets(sets, y_beta, ye, C, tol)` gets the sets before the reordering (`sets`, 1 = S1, 2 = S2, 3 = S3),
$y_i\beta_i$ after solving (3) (on S1 they may leave $[0,C]$) and the new $e_iy_i$. Return the new sets (a new array):

* a) a sample of S1 with $y_i\beta_i<0$ moves to S2; b) a sample of S1 with $y_i\beta_i>C$ moves to S3;
* only if a) and b) moved nobody: c) a sample of S2 with $e_iy_i>$ `tol` moves to S1, and d) a sample of S3 with
  $e_iy_i<-$`tol` moves to S1.

All comparisons are strict. (Why wait with c and d? The samples that a and b take out of S1 change the solution
of (3), and with it every error.)"""),
        ("code", r'''import numpy as np
from svmlab.exercises import check_reorder


def reorder_sets(sets, y_beta, ye, C, tol):
    """Rules a-d of Table 1. Returns the new sets (1 = S1, 2 = S2, 3 = S3)."""
    raise NotImplementedError


check_reorder(reorder_sets)'''),
    ],
}


def handoff_markdown(notebook: str) -> str:
    """The cells of ``notebook`` as a hand-off document: each cell in a fenced
    block, in the order in which they are appended."""
    cells = CELLS[notebook]
    out = [f"# Exercise cells for `notebooks/{notebook}.ipynb`", "",
           f"Append these {len(cells)} cells, in this order, at the END of the notebook (after "
           "its last cell). Generated from `svmlab/exercises/starters.py` (`CELLS[{0!r}]`); the "
           "tests execute exactly this text. Executed unsolved, each code cell displays one line, "
           "the checker's \"not implemented yet\" message (as text/plain and text/html), and "
           "raises nothing.".format(notebook), ""]
    for k, (kind, src) in enumerate(cells, 1):
        lang = "python" if kind == "code" else "markdown"
        out += [f"## Cell {k}: {kind}", "", f"````{lang}", src, "````", ""]
    return "\n".join(out)


def write_handoff(directory) -> list:
    """Write ``<notebook>.md`` for every notebook into ``directory``; returns
    the paths."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    paths = []
    for nb in CELLS:
        p = d / f"{nb}.md"
        p.write_text(handoff_markdown(nb), encoding="utf-8")
        paths.append(p)
    return paths


if __name__ == "__main__":  # pragma: no cover - a helper for the hand-off
    for p in write_handoff(sys.argv[1] if len(sys.argv) > 1 else "."):
        print(p)
