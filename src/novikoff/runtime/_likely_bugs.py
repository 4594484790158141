"""The likely bug behind an audited trace's rule findings: a table of usual mistakes, each an
alternative rule tested on the trace itself.

A candidate is reported only when the trace follows it where it breaks the declared rule: on at
least nine updates in ten (and more than the declared rule does) for a wrong step, or on the
visits left when the trace is read one visit later for weights logged before the update.  Each
entry names the bug as a programmer would look for it in the code.
"""

from __future__ import annotations

import numpy as np

__all__ = ["likely_bugs", "constant_trace"]


def _previous(V):
    """V[t-1] at each visit t (V[0] at visit 0: no previous visit)."""
    return np.concatenate([V[:1], V[:-1]])


# name -> (the step the buggy implementation adds, given (eta, y, x, bias); what it is)
_WRONG_STEPS = {
    "wrong_sign": (lambda eta, y, X, bias: -(eta * y)[:, None] * X,
                   "the steps are -eta*y*x: the update's sign is flipped (w -= y*x where the "
                   "rule adds it)"),
    "previous_example": (lambda eta, y, X, bias: (eta * y)[:, None] * _previous(X),
                         "off by one: the steps add the previous visit's example, "
                         "y[t]*x[t-1], not y[t]*x[t] (an example index off by one)"),
    "previous_label": (lambda eta, y, X, bias: (eta * _previous(y))[:, None] * X,
                       "off by one: the steps use the previous visit's label, y[t-1]*x[t], "
                       "not y[t]*x[t] (a label index off by one)"),
    "bias_unchanged": (lambda eta, y, X, bias: (eta * y)[:, None] * np.hstack(
                           [X[:, :-1], np.zeros((X.shape[0], 1))]) if bias else None,
                       "the bias (the last column of w) never changes at an update, where the "
                       "rule adds eta*y to it: the implementation does not update its "
                       "intercept (or keeps it apart from the weights it logs)"),
}

# name -> (1/rate at update k (0-based) and visit t (0-based), as the message writes it)
_SCHEDULES = {
    "eta/(1+k)": lambda k, t: 1.0 + k,
    "eta/sqrt(1+k)": lambda k, t: np.sqrt(1.0 + k),
    "eta/(1+t)": lambda k, t: 1.0 + t,
    "eta/sqrt(1+t)": lambda k, t: np.sqrt(1.0 + t),
}


def likely_bugs(Wb, W, Xv, yv, changed, eta: float, tolerance, bias: bool, nrule: int,
                flagged) -> list:
    """The patterns (dicts with pattern, suggest, explains, message) of the usual bugs the rule
    findings fit.  tolerance(W, ref, step): how far a correct W may be from ref (= w + step);
    flagged(Wb, W, Xv, yv): the number of rule findings of a trace."""
    up = np.flatnonzero(changed)
    out = []
    if not up.size:
        return _never_updates(W, nrule)
    step = (eta * yv)[:, None] * Xv
    ref = Wb + step
    declared = int((np.abs(W - ref) <= tolerance(W, ref, step)).all(axis=1)[up].sum())
    best = None
    for name, (alt_step, what) in _WRONG_STEPS.items():
        alt = alt_step(eta, yv, Xv, bias)
        if alt is None:
            continue
        ref_a = Wb + alt
        fits = int((np.abs(W - ref_a) <= tolerance(W, ref_a, alt)).all(axis=1)[up].sum())
        if fits > declared and 10 * fits >= 9 * up.size and (best is None or fits > best[0]):
            best = (fits, name, what)
    if best is not None:
        fits, name, what = best
        out.append({"pattern": name, "suggest": None, "explains": min(nrule, fits - declared),
                    "message": f"{what} ({fits} of the {up.size} update(s) follow it)"})
        return out
    schedule = _schedule(Wb, W, Xv, yv, up, eta, tolerance)
    if schedule is not None:
        out.append(schedule)
        return out
    lag = _logged_before_update(Wb, W, Xv, yv, nrule, flagged)
    return [lag] if lag is not None else out


def _never_updates(W, nrule: int) -> list:
    zero = not W.any()
    why = (" (from w = 0, y<w,x> = 0 at every visit: a strict test y<w,x> < 0 never fires)"
           if zero else "")
    return [{"pattern": "never_updates", "suggest": None, "explains": nrule,
             "message": f"w never changes, where the rule updates: the learner never applies "
                        f"its update, or its mistake test never fires{why}"}]


def _schedule(Wb, W, Xv, yv, up, eta: float, tolerance):
    """Steps parallel to y*x whose rate changes over the updates: a learning-rate schedule."""
    V = yv[up, None] * Xv[up]
    S = W[up] - Wb[up]
    r = np.einsum("ij,ij->i", S, V) / np.maximum(np.einsum("ij,ij->i", V, V), 1e-300)
    alt = r[:, None] * V
    # beyond a correct step's rounding, the audit's own: S = W - Wb and r*y*x each round by
    # 2^-53 per operation, r by d+2 of them
    d = V.shape[1]
    own = (d + 4) * 2.0 ** -52 * (np.abs(W[up]) + np.abs(Wb[up]) + np.abs(alt))
    fits = (np.abs(S - alt) <= tolerance(W[up], Wb[up] + alt, alt) + own).all(axis=1)
    if up.size < 3 or 10 * int(fits.sum()) < 9 * up.size or not (r > 0).all():
        return None
    spread = float(r.max() / r.min() - 1)
    if spread < 1e-6:
        return None  # one rate: the learning-rate pattern says which
    k = np.arange(up.size, dtype=float)
    named = ""
    for shown, inverse in _SCHEDULES.items():
        c = r * inverse(k, up.astype(float))
        if c.max() / c.min() - 1 < 1e-6:
            named = f" ({shown} with eta = {float(np.median(c)):.6g})"
            break
    return {"pattern": "step_schedule", "suggest": None, "explains": int(fits.sum()),
            "message": f"the steps are r*y*x with a rate r that changes over the updates (from "
                       f"{float(r[0]):.6g} at the first to {float(r[-1]):.6g} at the last)"
                       f"{named}: a learning-rate schedule? the audit's rule, and the lemmas, "
                       f"have one constant eta (--eta)"}


def _logged_before_update(Wb, W, Xv, yv, nrule: int, flagged):
    """Row t holds the weights before visit t's update: read one visit later, the rule holds."""
    if W.shape[0] < 3:
        return None
    left = flagged(W[:-1], W[1:], Xv[:-1], yv[:-1])
    if not (left < nrule and left <= nrule // 10):
        return None
    rest = ("the rule holds on every visit" if not left else
            f"{left} of the {nrule} visit(s) remain flagged")
    return {"pattern": "logged_before_update", "suggest": None, "explains": nrule - left,
            "message": f"the trace lags one visit: row t holds the weights before visit t's "
                       f"update (read one visit later, {rest}): the weights are logged before "
                       f"the update, not after it"}


_REPLAYED = 200_000  # visits a constant trace is replayed over (a Python loop)


def constant_trace(W, start, Xv, yv, eta: float, nrule: int) -> dict:
    """Every row of w is the same non-zero vector: one buffer appended at every visit (the
    rows are the final weights of a run of the rule), or a learner that never updates from a
    start other than the declared one.  A replay of the rule from the declared start tells
    (up to _REPLAYED visits: beyond, both are named)."""
    if W.shape[0] > _REPLAYED:
        return {"pattern": "aliased_buffer", "suggest": None, "explains": nrule,
                "message": f"every row of w is the same vector: one weight buffer appended at "
                           f"every visit, not a copy of the weights after it (append "
                           f"w.copy()), or a learner that never updates from a start other "
                           f"than the declared one; the {nrule} rule finding(s) below follow "
                           f"from that"}
    w = start.copy()
    for x, yy in zip(Xv, yv):
        if yy * (w @ x) <= 0:
            w = w + eta * yy * x
    scale = np.abs(w) + np.abs(W[-1])
    aliased = bool((np.abs(w - W[-1]) <= 1e-6 * np.maximum(scale, 1e-300)).all())
    if aliased:
        return {"pattern": "aliased_buffer", "suggest": None, "explains": nrule,
                "message": f"every row of w is the same vector, the weights a run of the rule "
                           f"ends with: the implementation appended one weight buffer at every "
                           f"visit, not a copy of the weights after it (append w.copy()); the "
                           f"{nrule} rule finding(s) below follow from that"}
    return {"pattern": "never_updates", "suggest": None, "explains": nrule,
            "message": f"every row of w is the same vector, and not the weights a run of the "
                       f"rule ends with: the learner starts from it and never updates (its "
                       f"update is never applied, or its mistake test never fires), or it "
                       f"starts from weights other than the declared start (--w0)"}
