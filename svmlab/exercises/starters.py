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
    "Exercises marked **derive** ask for a rule this notebook does not give you: their checkers "
    "test what a right answer must satisfy, not a formula. A check fails if your function calls "
    "svmlab itself (svmlab holds the answers). The explorers above hide the lines of svmlab's "
    "readable reference that answer an exercise until you pass it (or press their reveal "
    "button).*")

CELLS = {
    # ------------------------------------------------------------------ 01
    "01_smo_geometry": [
        ("markdown", r"""## 7 · Exercises: write the SMO step yourself

Everything above came from a few short functions. Write them, in svmlab's signs: $f(x)=\sum_j\alpha_jy_jK(x_j,x)+b$,
$E_i=f(x_i)-y_i$ and $\eta=K_{11}+K_{22}-2K_{12}$ (Platt's TR writes $u=w\cdot x-b$ and the opposite sign of $\eta$).

""" + _SOLUTIONS_NOTE + r"""

### Exercise 1 (derive) · The ends of the segment

The pair $(\alpha_1,\alpha_2)$ moves on a line, and only the part of the line inside the box $[0,C]^2$ is feasible.
Write `segment_ends(y1, y2, a1, a2, C)`, returning `(L, H)`: the smallest and the largest new $\alpha_2$ for which the
pair stays in the box.

Derive them yourself. Which quantity does the equality constraint $\sum_iy_i\alpha_i=0$ keep fixed when only
$\alpha_1$ and $\alpha_2$ move, and so how does the new $\alpha_1$ follow from the new $\alpha_2$? Write both
conditions $0\le\alpha_1^{new}\le C$ and $0\le\alpha_2^{new}\le C$ as bounds on $\alpha_2^{new}$, once for $y_1=y_2$
and once for $y_1\ne y_2$. The checker never compares with a formula: it checks that the pair before the step lies
on your segment, that both of its ends lie in the box, and that just beyond either end the pair leaves the box."""),
        ("code", '''from svmlab.exercises import check_segment_ends


def segment_ends(y1, y2, a1, a2, C):
    """The ends (L, H) of the feasible segment of a2: the pair stays in [0, C]^2."""
    raise NotImplementedError


check_segment_ends(segment_ends)'''),
        ("markdown", r"""### Exercise 2 · The clipped analytic step (TR eqs. 13-19)

`take_step(y1, y2, a1, a2, E1, E2, K11, K12, K22, C)` returns `(a1_new, a2_new)`, the pair after one step: the new
$\alpha_2$ maximises $W$ on your segment $[L,H]$ (call your `segment_ends`), and $\alpha_1$ follows as in Exercise 1.

* If $L=H$ nothing can move: return `(a1, a2)`.
* If $\eta>0$, $W$ along the line is a parabola whose maximum the introduction of this notebook gives; the best
  point of the segment is that maximum, clipped to $[L,H]$.
* If $\eta\le0$ there is no interior maximum. Moving $\alpha_2$ by $d$ changes $W$ by $y_2(E_1-E_2)\,d-\tfrac12\eta
  d^2$: move to the end ($L$ or $H$) with the larger gain, or stay where you are if both are equally good (the
  checker's ends never differ by less than $10^{-6}$ unless they are equal)."""),
        ("code", '''from svmlab.exercises import check_take_step


def take_step(y1, y2, a1, a2, E1, E2, K11, K12, K22, C):
    """One analytic SMO step on the pair (a1, a2). Returns (a1_new, a2_new)."""
    raise NotImplementedError


check_take_step(take_step)'''),
        ("markdown", r"""### Exercise 3 · The threshold update (TR eqs. 20, 21)

After the step, $f$ changes by $d_1K(x_1,\cdot)+d_2K(x_2,\cdot)+(b^{new}-b)$ with $d_1=y_1(\alpha_1^{new}-\alpha_1)$
and $d_2=y_2(\alpha_2^{new}-\alpha_2)$. Let $b_1$ be the $b^{new}$ that makes the new $E_1$ zero and $b_2$ the one
that makes the new $E_2$ zero (derive both from $E_i=f(x_i)-y_i$). Return $b_1$ if $0<\alpha_1^{new}<C$, else $b_2$
if $0<\alpha_2^{new}<C$, else (both at a bound, every $b$ between them is consistent) $(b_1+b_2)/2$."""),
        ("code", '''from svmlab.exercises import check_threshold


def threshold(y1, y2, a1, a2, a1_new, a2_new, E1, E2, b, K11, K12, K22, C):
    """The new intercept b after the joint step (a1, a2) -> (a1_new, a2_new)."""
    raise NotImplementedError


check_threshold(threshold)'''),
    ],
    # ------------------------------------------------------------------ 03
    "03_cutting_plane": [
        ("markdown", r"""## 7 · Exercises: the two halves of Algorithm 1

""" + _SOLUTIONS_NOTE + r"""

### Exercise 1 (derive) · The solution of OP3 with one plane

After its first iteration Algorithm 1 holds one plane $(g,d)$, and OP3 is

$$\min_w\;\tfrac12\|w\|^2+C\max\bigl(0,\;d-w^\top g\bigr).$$

Write `one_plane_qp(g, d, C)`, returning its minimiser $w$ (an array of the shape of $g$). Derive it: which
directions of $w$ change the second term at all? Along the remaining direction the objective is a function of one
number: where is its minimum? (Mind $d\le0$ and $g=0$.) The checker evaluates the objective at your $w$ and compares
it with the smallest value it can reach; its recorded cases are the first plane of Algorithm 1 on two toy sets,
whose next iterate is exactly this minimiser. When does the answer not depend on $C$?"""),
        ("code", '''import numpy as np
from svmlab.exercises import check_one_plane_qp


def one_plane_qp(g, d, C):
    """argmin_w 1/2 |w|^2 + C max(0, d - w.g)."""
    raise NotImplementedError


check_one_plane_qp(one_plane_qp)'''),
        ("markdown", r"""### Exercise 2 · The most violated constraint

At the current $w$, Algorithm 1 picks $c_i=1$ exactly for the examples with $y_i\,w^\top x_i<1$ (strictly: an
example on the margin is not violated) and builds the plane $(g,d)$ of the introduction from $c$.

`most_violated(X, y, w)` gets a dense `X` (n, p), labels `y` in $\{-1,+1\}$ and `w` (p,), and returns
`(c, g, d)`: `c` an (n,) array of 0/1 or booleans, `g` of shape (p,), `d` a number. (The bias is a constant
feature: the checker also calls your function with a column of ones appended to `X`.) One pass over the data,
O(sn): this is why the method is linear in n."""),
        ("code", '''import numpy as np
from svmlab.exercises import check_most_violated


def most_violated(X, y, w):
    """The most violated constraint (c, g, d) of OP2 at w."""
    raise NotImplementedError


check_most_violated(most_violated)'''),
        ("markdown", r"""### Exercise 3 · The slack of the working set, and the stopping rule

The working set $W$ holds $K$ constraints, the rows $g_k$ of `G` (K, p) and the offsets $d_k$ of `d` (K,).
At the solution $w$ of OP3 its slack $\xi$ is the smallest $\xi\ge0$ that satisfies every plane of $W$
($\xi=0$ for an empty working set). Algorithm 1 adds the new constraint only when its slack $\xi'=d-w^\top g$
exceeds $\xi$ by more than $\varepsilon$, and stops otherwise. Write `working_set_slack(G, d, w)`, returning $\xi$
as a number."""),
        ("code", '''import numpy as np
from svmlab.exercises import check_working_set_slack


def working_set_slack(G, d, w):
    """The slack xi >= 0 of OP3's working set at w (0 for an empty working set)."""
    raise NotImplementedError


check_working_set_slack(working_set_slack)'''),
    ],
    # ------------------------------------------------------------------ 04
    "04_ordinal_regression": [
        ("markdown", r"""## 5 · Exercises: counting pairs without listing them

""" + _SOLUTIONS_NOTE + r"""

### Exercise 1 (derive) · The number of preference pairs

`count_pairs(y)` returns $m=|\{(i,j):y_i>y_j\}|$ for integer ranks `y` (any integers, in any order), without listing
or comparing the pairs: find how $m$ follows from the number of examples of each rank. After every case agrees,
the checker times your function at n = 2000 and n = 8000: a count that looks at every pair grows like $n^2$ and
fails that part."""),
        ("code", '''import numpy as np
from svmlab.exercises import check_count_pairs


def count_pairs(y):
    """Number of pairs (i, j) with y_i > y_j, without listing them."""
    raise NotImplementedError


check_count_pairs(count_pairs)'''),
        ("markdown", r"""### Exercise 2 (derive) · The sorted sweep of Algorithm 2

`ordinal_sweep(scores, y)` returns `(c_plus, c_minus)`, two integer arrays of shape (n,):
$c^+_i=\#\{j:y_j<y_i,\;s_i-s_j<1\}$ and $c^-_j=\#\{i:y_i>y_j,\;s_i-s_j<1\}$ (a difference of exactly 1 is **not**
a violation). With $u_i=s_i-\tfrac12$ and $d_j=s_j+\tfrac12$, a pair is violated iff $u_i<d_j$: work out how one
pass over the $2n$ sorted values, with a counter per rank, gives every count (section 2 animates such a sweep).
The checker compares with all-pairs counting, then times your function at n = 1200 and n = 4800: a pair-by-pair
count, O(n²), fails that part.

<details><summary>A hint, if you are stuck</summary>

Sort the $2n$ values from the largest down (at equal values $u$ before $d$) and keep, per rank $r$, the number
$a[r]$ of $d$ values and $b[r]$ of $u$ values passed so far. What do $a$ and $b$ tell you when the sweep reaches
$u_i$, and when it reaches $d_j$?
</details>"""),
        ("code", '''import numpy as np
from svmlab.exercises import check_sweep


def ordinal_sweep(scores, y):
    """(c_plus, c_minus) of the most violated OP5 constraint, by one sorted sweep."""
    raise NotImplementedError


check_sweep(ordinal_sweep)'''),
        ("markdown", r"""### Exercise 3 · The constraint from the counts

Each violated pair $(i,j)$ adds $x_i-x_j$ to the OP5 constraint, so the constraint needs only the counts:

$$g=\tfrac1m\sum_i\,(c^+_i-c^-_i)\,x_i,\qquad d=\tfrac1m\sum_i c^+_i .$$

`ordinal_constraint(X, c_plus, c_minus, m)` returns `(g, d)` with `g` of shape (p,)."""),
        ("code", '''import numpy as np
from svmlab.exercises import check_ordinal_constraint


def ordinal_constraint(X, c_plus, c_minus, m):
    """(g, d) of the OP5 constraint from the condensed counts."""
    raise NotImplementedError


check_ordinal_constraint(ordinal_constraint)'''),
    ],
    # ------------------------------------------------------------------ 05
    "05_irwls": [
        ("markdown", r"""## 6 · Exercises: the weights and the reordering of Table 1

""" + _SOLUTIONS_NOTE + r"""

### Exercise 1 · The weights of eq. (8)

`irwls_weights(ye, C)` takes an array of $e_iy_i=1-y_if(x_i)$ and returns the weights $a_i$ of eq. (8), same shape,
with $a_i=\infty$ (`np.inf`) where $e_iy_i=0$ (S1)."""),
        ("code", '''import numpy as np
from svmlab.exercises import check_irwls_weights


def irwls_weights(ye, C):
    """The IRWLS weights a_i of eq. (8) for the values e_i y_i."""
    raise NotImplementedError


check_irwls_weights(irwls_weights)'''),
        ("markdown", r"""### Exercise 2 (derive) · The reordering of S1, S2, S3 (Table 1)

After (3) is solved on S1, some samples sit in a set their values contradict. Each set promises something: S1 that
$0\le y_i\beta_i\le C$ (and $e_i=0$), S2 that $\beta_i=0$ is optimal, S3 that $y_i\beta_i=C$ is optimal. The primer's
KKT table (`00_primer`, section 2) says when $\alpha_i=0$ and when $\alpha_i=C$ are optimal, in terms of $y_if(x_i)$;
write it in terms of $e_iy_i=1-y_if(x_i)$.

`reorder_sets(sets, y_beta, ye, C, tol)` gets the sets before the reordering (`sets`, 1 = S1, 2 = S2, 3 = S3),
$y_i\beta_i$ after solving (3) (on S1 they may leave $[0,C]$) and the new $e_iy_i$. Return the new sets (a new
array): derive the four rules that move a sample out of a set whose promise it breaks, and to which set. Two
conventions of Table 1: the samples of S2 and S3 move only in an iteration where no sample left S1 (the samples
taken out of S1 change the solution of (3), and with it every error); an error breaks a promise only beyond `tol`
(strictly), a $y_i\beta_i$ as soon as it leaves $[0,C]$."""),
        ("code", '''import numpy as np
from svmlab.exercises import check_reorder


def reorder_sets(sets, y_beta, ye, C, tol):
    """Table 1's reordering. Returns the new sets (1 = S1, 2 = S2, 3 = S3)."""
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
