"""Instructor's solutions for the exercises of ``01_smo_geometry.ipynb``.

Not imported by svmlab; see README.md in this folder.  Signs as in svmlab:
``f(x) = sum_j a_j y_j K(x_j, x) + b``, ``E_i = f(x_i) - y_i`` and
``eta = K11 + K22 - 2 K12`` (Platt's TR uses ``u = w.x - b`` and the
opposite sign of eta).
"""


def segment_ends(y1, y2, a1, a2, C):
    """The ends (L, H) of the feasible segment of a2 (derived from the box and
    the line; TR eqs. 13, 14)."""
    # the line keeps y1 a1 + y2 a2 fixed: a1 = a1_old + s (a2_old - a2), s = y1 y2
    if y1 != y2:            # a1 - a2 = k: a2 in [-k, C - k], and a2 in [0, C]
        return max(0.0, a2 - a1), min(C, C + a2 - a1)
    # a1 + a2 = k: a2 in [k - C, k], and a2 in [0, C]
    return max(0.0, a2 + a1 - C), min(C, a2 + a1)


def take_step(y1, y2, a1, a2, E1, E2, K11, K12, K22, C):
    """One analytic SMO step on the pair (a1, a2); returns (a1_new, a2_new)."""
    s = y1 * y2
    # ends of the feasible segment for a2 (TR eqs. 13, 14)
    if y1 != y2:
        L, H = max(0.0, a2 - a1), min(C, C + a2 - a1)
    else:
        L, H = max(0.0, a2 + a1 - C), min(C, a2 + a1)
    if L >= H:
        return a1, a2                       # the segment is a single point
    eta = K11 + K22 - 2.0 * K12             # curvature along the line
    if eta > 0:
        a2_new = a2 + y2 * (E1 - E2) / eta  # TR eq. 16
        a2_new = min(max(a2_new, L), H)     # TR eq. 17: clip to [L, H]
    else:
        # TR eq. 19: no interior maximum; compare the objective at both ends.
        # Gain of the dual when a2 moves by d: y2 (E1 - E2) d - eta d^2 / 2.
        def gain(x):
            d = x - a2
            return y2 * (E1 - E2) * d - 0.5 * eta * d * d

        gL, gH = gain(L), gain(H)
        if gL > gH + 1e-12:
            a2_new = L
        elif gH > gL + 1e-12:
            a2_new = H
        else:
            a2_new = a2                     # equally good: no progress
    a1_new = a1 + s * (a2 - a2_new)         # TR eq. 18
    return a1_new, a2_new


def threshold(y1, y2, a1, a2, a1_new, a2_new, E1, E2, b, K11, K12, K22, C):
    """The new intercept b after a joint step (TR eqs. 20, 21, svmlab's sign)."""
    d1 = y1 * (a1_new - a1)
    d2 = y2 * (a2_new - a2)
    b1 = b - E1 - d1 * K11 - d2 * K12       # makes the new E1 zero
    b2 = b - E2 - d1 * K12 - d2 * K22       # makes the new E2 zero
    if 0 < a1_new < C:
        return b1
    if 0 < a2_new < C:
        return b2
    return 0.5 * (b1 + b2)                  # both at bounds: any b in between is fine
